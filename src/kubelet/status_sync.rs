//! The status manager's sync loop: which pods need a write, the batch and the one-pod
//! round trip to the API server, and the deletion of finished pods.
//!
//! Ports `pkg/kubelet/status/status_manager.go` (v1.31: `syncBatch`, `syncPod`,
//! `needsUpdate`, `needsReconcile`, `canBeDeleted`, `RemoveOrphanedStatuses`); the cache
//! writes are in [`super::status`].

use super::profile::Sw;
use super::record_map::Changes;
use super::status::{merge_pod_status, Versioned};
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::uid_map::{UidMap, UidSet};
use crate::model::{ApiPod, ApiPodStatus, PodUid, Transition};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The statuses `needsReconcile` selects, kept between periodic batches.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReconcileIndex {
    /// UIDs whose cached status differs from the pod manager's copy (its mirror's, for a
    /// static pod) by the kubelet's comparison: few, the pods written since their copy
    /// last came back from the API.
    unequal: UidSet,
    /// The epochs of the statuses' log and the pod manager's log it was brought up to date at.
    synced: Option<(u64, u64)>,
    /// Scratch: the UIDs the two logs name.
    changed: (Vec<PodUid>, Vec<PodUid>),
}

/// `mergePodStatus` of the API's `old` status and the cached `new` one, as the status to
/// PATCH: the cached status itself, shared, when the merge leaves it as it is (the usual
/// case). A phase that is not terminal is neither held back nor forces readiness off, so
/// the merge then changes only the conditions: the status is the same exactly when the
/// merged conditions are, and nothing is cloned to find out. Debug builds merge in full
/// and compare.
fn merged_for_patch(
    old: &ApiPodStatus,
    new: &Arc<ApiPodStatus>,
    could_have_running: bool,
) -> Arc<ApiPodStatus> {
    let out = if new.phase.is_terminal() {
        None
    } else {
        let conditions = super::conditions::merge(old, new, could_have_running);
        Some(if conditions == new.conditions {
            Arc::clone(new)
        } else {
            Arc::new(ApiPodStatus {
                conditions,
                ..(**new).clone()
            })
        })
    };
    let out = out.unwrap_or_else(|| {
        let merged = merge_pod_status(old, new, could_have_running);
        if merged == **new {
            Arc::clone(new)
        } else {
            Arc::new(merged)
        }
    });
    debug_assert_eq!(
        *out,
        merge_pod_status(old, new, could_have_running),
        "the status to patch differs from mergePodStatus' answer"
    );
    out
}

impl Kubelet {
    /// Keep `uid`'s membership of the candidate sets in step with its cached status.
    pub(super) fn status_recheck(&mut self, uid: PodUid) {
        let sm = &mut self.status;
        let (stale, finished) = match sm.statuses.get(&uid) {
            Some(v) => (
                sm.api_versions.get(&uid).is_none_or(|a| *a < v.version),
                v.pod_is_finished,
            ),
            None => (false, false),
        };
        if stale && !sm.queued.contains(&uid) {
            sm.stale_unqueued.insert(uid);
        } else {
            sm.stale_unqueued.remove(&uid);
        }
        if !stale && finished {
            sm.finished_fresh.insert(uid);
        } else {
            sm.finished_fresh.remove(&uid);
        }
    }

    /// Append `uid` to the write queue unless it is queued already.
    pub(super) fn status_enqueue(&mut self, uid: PodUid) {
        if self.status.queued.insert(uid) {
            self.status.queue.push_back(uid);
            self.status.stale_unqueued.remove(&uid);
        }
    }

    /// `needsUpdate`.
    pub(super) fn status_needs_update(
        &self,
        uid: PodUid,
        v: &Versioned,
        cgroups: &BTreeSet<PodUid>,
    ) -> bool {
        let api_version = self.status.api_versions.get(&uid).copied();
        let pod = self.config.pods.get(&uid).map(|p| &**p);
        self.status_needs_update_for(v, api_version, pod, cgroups)
    }

    /// `needsUpdate` with the API version the manager last wrote (`api_version`) and the
    /// pod manager's copy of the pod (`pod`) already looked up.
    fn status_needs_update_for(
        &self,
        v: &Versioned,
        api_version: Option<u64>,
        pod: Option<&ApiPod>,
        cgroups: &BTreeSet<PodUid>,
    ) -> bool {
        match api_version {
            None => return true,
            Some(latest) if latest < v.version => return true,
            _ => {}
        }
        match pod {
            Some(pod) => self.status_can_be_deleted(pod, v, cgroups),
            None => false,
        }
    }

    /// `canBeDeleted`: the v1.31 rule, v1.21's when the pod worker does not own the
    /// lifecycle, v1.22's without `podDeletedOnlyWhenTerminal` (no terminal phase needed).
    pub(super) fn status_can_be_deleted(
        &self,
        pod: &ApiPod,
        v: &Versioned,
        cgroups: &BTreeSet<PodUid>,
    ) -> bool {
        if self.legacy() {
            self.legacy_can_be_deleted(pod, &v.status, cgroups)
        } else if !self.b.on(Sw::PodDeletedOnlyWhenTerminal) {
            self.v122_can_be_deleted(pod, &v.status, cgroups)
        } else {
            can_be_deleted(pod, v.pod_is_finished)
        }
    }

    /// The pod cgroups on the node, which v1.21's and v1.22's deletion rules read.
    pub(super) fn status_cgroups(&self, ctx: &Ctx) -> BTreeSet<PodUid> {
        if self.deletion_reads_node() {
            ctx.list_pod_cgroups().into_iter().collect()
        } else {
            BTreeSet::new()
        }
    }

    /// `syncBatch(all)`: queue every pod that needs a write.
    pub(super) fn status_sync_batch(&mut self, ctx: &mut Ctx, all: bool) {
        if !all {
            self.status.signalled = false;
        }
        let mut todo = Vec::new();
        let cgroups = self.status_cgroups(ctx);
        // v1.21's and v1.22's deletion rules depend on more than the cached status
        // (runtime cache, volumes, cgroups): they scan every status, as `all` does.
        if self.deletion_reads_node() {
            // The API versions and the pod manager's map are indexed by UID.
            for (uid, v) in self.status.statuses.iter() {
                let api_version = self.status.api_versions.get(uid).copied();
                let pod = self.config.pods.get(uid);
                if self.status_needs_update_for(v, api_version, pod.map(|p| &**p), &cgroups)
                    || (all && self.status_reconcile_wanted(*uid))
                {
                    todo.push(*uid);
                }
            }
        } else if all {
            todo = self.status_all_candidates(&cgroups);
        } else {
            // Queued UIDs are skipped: queueing them again changes nothing.
            todo.extend(self.status.stale_unqueued.iter().copied());
            for uid in &self.status.finished_fresh {
                if !self.status.queued.contains(uid) {
                    let v = &self.status.statuses[uid];
                    if self.status_needs_update(*uid, v, &cgroups) {
                        todo.push(*uid);
                    }
                }
            }
            todo.sort_unstable();
            #[cfg(debug_assertions)]
            {
                let full: Vec<PodUid> = self
                    .status
                    .statuses
                    .iter()
                    .filter(|(u, v)| {
                        !self.status.queued.contains(u)
                            && self.status_needs_update(**u, v, &cgroups)
                    })
                    .map(|(u, _)| *u)
                    .collect();
                assert_eq!(todo, full, "status manager candidate sets out of step");
            }
        }
        for uid in todo {
            if all {
                // needsReconcile forgets the API version so the write happens.
                if self.status.api_versions.get(&uid)
                    == self.status.statuses.get(&uid).map(|v| &v.version)
                {
                    if let Some(p) = self.config.pods.get(&uid) {
                        if !self.status_can_be_deleted(p, &self.status.statuses[&uid], &cgroups) {
                            self.status.api_versions.remove(&uid);
                            self.status_recheck(uid);
                        }
                    }
                }
            }
            self.status_enqueue(uid);
        }
        self.status_next(ctx);
    }

    /// `needsReconcile`: the pod manager's copy of the pod (its mirror pod's, for a static
    /// pod) differs from the cached status by the kubelet's comparison.
    fn status_reconcile_wanted(&self, uid: PodUid) -> bool {
        let Some(v) = self.status.statuses.get(&uid) else {
            return false;
        };
        match self.config.pods.get(&uid) {
            Some(p) if p.static_pod => (self.config.mirror_for(p))
                .is_some_and(|m| !super::conditions::equal_by_kubelet(&m.status, &v.status)),
            Some(p) => !super::conditions::equal_by_kubelet(&p.status, &v.status),
            None => false,
        }
    }

    /// What `syncBatch(all)` selects (v1.27+ deletion rule, which reads only the cached
    /// status and the pod): every status `needsUpdate` or `needsReconcile` selects, from the
    /// candidate sets instead of a scan of every status. The reconcile candidates are kept
    /// between batches, redone for the UIDs whose cached status or pod (or any mirror pod)
    /// changed. Statuses already queued that need an update only are left out: queueing
    /// them again changes nothing (the scan's write of them is a no-op).
    fn status_all_candidates(&mut self, cgroups: &BTreeSet<PodUid>) -> Vec<PodUid> {
        let mut ix = std::mem::take(&mut self.reconcile);
        let (s_at, p_at) = (ix.synced.map(|s| s.0), ix.synced.map(|s| s.1));
        let log = self.status.statuses.split().1;
        let a = log.take(s_at, &mut ix.changed.0);
        let s_epoch = log.epoch();
        let b = self.config.touched.take(p_at, &mut ix.changed.1);
        ix.synced = Some((s_epoch, self.config.touched.epoch()));
        if a == Changes::All || b == Changes::All {
            ix.unequal.retain(|_| false);
            for uid in self.status.statuses.keys() {
                if self.status_reconcile_wanted(*uid) {
                    ix.unequal.insert(*uid);
                }
            }
        } else {
            for uid in ix.changed.0.iter().chain(&ix.changed.1) {
                if self.status_reconcile_wanted(*uid) {
                    ix.unequal.insert(*uid);
                } else {
                    ix.unequal.remove(uid);
                }
            }
        }
        let mut todo: Vec<PodUid> = self.status.stale_unqueued.iter().copied().collect();
        for uid in &self.status.finished_fresh {
            if !self.status.queued.contains(uid) {
                let v = &self.status.statuses[uid];
                if self.status_needs_update(*uid, v, cgroups) {
                    todo.push(*uid);
                }
            }
        }
        todo.extend(ix.unequal.iter().copied());
        todo.sort_unstable();
        todo.dedup();
        #[cfg(debug_assertions)]
        {
            let full_unequal: BTreeSet<PodUid> = (self.status.statuses.keys())
                .filter(|u| self.status_reconcile_wanted(**u))
                .copied()
                .collect();
            assert!(
                ix.unequal.iter().eq(full_unequal.iter()),
                "reconcile candidates out of step: {:?} against {full_unequal:?}",
                ix.unequal
            );
            // The scan upstream makes, and what it selects beyond the candidates: only
            // queued statuses that need an update.
            let full: Vec<PodUid> = (self.status.statuses.iter())
                .filter(|(u, v)| {
                    self.status_needs_update(**u, v, cgroups) || self.status_reconcile_wanted(**u)
                })
                .map(|(u, _)| *u)
                .collect();
            assert!(
                todo.iter().all(|u| full.contains(u)),
                "a candidate the scan skips"
            );
            for u in full.iter().filter(|u| !todo.contains(u)) {
                let v = &self.status.statuses[u];
                assert!(
                    self.status.queued.contains(u) && self.status_needs_update(*u, v, cgroups),
                    "the scan selects {u} and the candidates do not"
                );
            }
        }
        self.reconcile = ix;
        todo
    }

    pub(super) fn status_next(&mut self, ctx: &mut Ctx) {
        if self.status.in_flight.is_some() {
            return;
        }
        if let Some(uid) = self.status.queue.pop_front() {
            self.status.queued.remove(&uid);
            self.status_recheck(uid);
            self.status.in_flight = Some(uid);
            ctx.api_status_sync(uid);
        }
    }

    /// `syncPod` step 1-3: the GET answered. Returns the status to PATCH, if any.
    pub(crate) fn status_on_api_get(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        api: Option<&ApiPod>,
    ) -> Option<Arc<ApiPodStatus>> {
        let Some(api) = api else {
            self.status_done(ctx);
            return None;
        };
        // A static pod's status goes to its mirror pod; the object found by name must
        // translate to this UID (the pod manager's `TranslatePodUID`).
        // Simplified: a mirror pod made for another UID is skipped too (upstream writes the
        // current static pod's status to it until SyncPod replaces it).
        let made_for_other = api.mirror_of.is_some_and(|of| of != uid);
        let translated = self.translate_pod_uid(api);
        if translated != uid || made_for_other {
            // Deleted and recreated: drop our status (`deletePodStatus`), and say so: the
            // next status written for `uid` starts from the pod's API copy, not from the
            // phase the cache held.
            if self.status.statuses.remove(&uid).is_some() {
                self.probe_status_changed(uid);
                let now_of = if translated != uid {
                    translated
                } else {
                    api.mirror_of.unwrap_or(translated)
                };
                ctx.emit(Transition::LocalStatusDropped { uid, now_of });
            }
            self.status_recheck(uid);
            self.status_done(ctx);
            return None;
        }
        let Some(v) = self.status.statuses.get(&uid) else {
            self.status_done(ctx);
            return None;
        };
        // Before PR 108366 the terminal phase was written as soon as it was computed; v1.21
        // has no terminal-phase deferral at all.
        let could = !self.legacy()
            && self.pw.could_have_running_containers(uid)
            && self.status.b.on(Sw::TerminalPhaseAfterTermination);
        Some(merged_for_patch(&api.status, &v.status, could))
    }

    /// `TranslatePodUID` (`pkg/kubelet/pod/pod_manager.go`, v1.31, and by full name in every
    /// release podsim models): a mirror pod stands for the static pod the pod manager holds
    /// under the same full name, not for the UID it was created for; after a manifest
    /// update the old mirror pod therefore belongs to the new UID, and the old UID's status
    /// is skipped (`syncPod` in `pkg/kubelet/status/status_manager.go`, v1.31). With no
    /// static pod of that name in config, the mirror keeps the UID it was made for (upstream
    /// keeps its last translation). Simplified: a mirror pod the pod manager has not seen
    /// yet translates as if it had (upstream it translates to itself, and the status is
    /// dropped until the next sync).
    pub(super) fn translate_pod_uid(&self, api: &ApiPod) -> PodUid {
        let Some(of) = api.mirror_of else {
            return api.uid;
        };
        // podByFullName holds the one added last; UIDs are allocated in creation order.
        let full = api.full_name();
        self.config
            .pods
            .values()
            .filter(|p| p.static_pod && p.full_name() == full)
            .map(|p| p.uid)
            .next_back()
            .unwrap_or(of)
    }

    /// `syncPod` step 4-5: the PATCH answered with the object after the patch. Returns
    /// whether the kubelet now deletes the object.
    pub(crate) fn status_on_api_patched(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        after: Option<&ApiPod>,
    ) -> bool {
        let Some(v) = self.status.statuses.get(&uid) else {
            self.status_done(ctx);
            return false;
        };
        let version = v.version;
        let cgroups = self.status_cgroups(ctx);
        if !self.config.pods.contains_key(&uid) {
            self.status.orphans_possible.note(uid);
        }
        self.status.api_versions.insert(uid, version);
        self.status_recheck(uid);
        if let Some(pod) = after {
            let v = &self.status.statuses[&uid];
            if self.status_can_be_deleted(pod, v, &cgroups) {
                ctx.api_delete(uid);
                return true;
            }
        }
        self.status_done(ctx);
        false
    }

    /// The DELETE answered: drop the cached status.
    pub(crate) fn status_on_api_deleted(&mut self, ctx: &mut Ctx, uid: PodUid) {
        self.status.statuses.remove(&uid);
        self.probe_status_changed(uid);
        self.status_recheck(uid);
        self.status_done(ctx);
    }

    pub(super) fn status_done(&mut self, ctx: &mut Ctx) {
        self.status.in_flight = None;
        self.status_next(ctx);
    }

    /// `RemoveOrphanedStatuses`: forget statuses of pods no longer in config.
    pub(super) fn status_remove_orphans(&mut self, keep: &UidMap<Arc<ApiPod>>) {
        // Every orphan was removed at the last call, so only a UID noted since can be one
        // (usually a pod or two that left config): those are removed one by one, and only
        // their probe workers' views change.
        let noted = self.status.orphans_possible.uids().map(|noted| {
            let mut gone: Vec<PodUid> = (noted.iter().copied())
                .filter(|u| !keep.contains_key(u))
                .collect();
            gone.sort_unstable();
            gone.dedup();
            gone
        });
        match noted {
            Some(gone) => {
                for uid in &gone {
                    if self.status.statuses.remove(uid).is_some() {
                        self.probe_status_changed(*uid);
                    }
                    self.status.api_versions.remove(uid);
                    self.status.stale_unqueued.remove(uid);
                    self.status.finished_fresh.remove(uid);
                }
            }
            None => self.status_remove_orphans_in_full(keep),
        }
        debug_assert!(
            (self.status.statuses.keys())
                .chain(self.status.api_versions.keys())
                .chain(&self.status.stale_unqueued)
                .chain(&self.status.finished_fresh)
                .all(|u| keep.contains_key(u)),
            "RemoveOrphanedStatuses left an orphan"
        );
    }

    /// [`Kubelet::status_remove_orphans`] by a walk of every map.
    fn status_remove_orphans_in_full(&mut self, keep: &UidMap<Arc<ApiPod>>) {
        // `keep` is indexed by UID: a look-up per entry.
        let kept = |uid: &PodUid| keep.contains_key(uid);
        let before = self.status.statuses.len();
        self.status.statuses.retain(|uid, _| kept(uid));
        if self.status.statuses.len() != before {
            self.probe_status_changed_all();
        }
        self.status.stale_unqueued.retain(kept);
        self.status.finished_fresh.retain(kept);
        self.status.api_versions.retain(|uid, _| kept(uid));
    }
}

/// The UIDs that may be orphans in the status manager's maps (see
/// `StatusManager::orphans_possible`), noted in any order, with repeats; past
/// [`OrphanCandidates::MAX`] notes, "any UID may be" (a full check), so the list stays
/// small even where nothing clears it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OrphanCandidates {
    uids: Vec<PodUid>,
    all: bool,
}

impl OrphanCandidates {
    const MAX: usize = 64;

    /// `uid` may have become an orphan.
    pub(crate) fn note(&mut self, uid: PodUid) {
        if self.all || self.uids.last() == Some(&uid) {
            return;
        }
        if self.uids.len() >= Self::MAX {
            self.all = true;
            self.uids = Vec::new();
            return;
        }
        self.uids.push(uid);
    }

    /// The noted UIDs, or `None` if any UID may be an orphan.
    pub(crate) fn uids(&self) -> Option<&[PodUid]> {
        (!self.all).then_some(&self.uids[..])
    }

    pub(crate) fn clear(&mut self) {
        self.uids.clear();
        self.all = false;
    }
}

/// `canBeDeleted` (v1.27+): never a mirror pod.
pub(crate) fn can_be_deleted(pod: &ApiPod, pod_is_finished: bool) -> bool {
    pod.deletion_timestamp.is_some()
        && pod.mirror_of.is_none()
        && pod.status.phase.is_terminal()
        && pod_is_finished
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ConditionStatus, Conditions, PodCondition, PodConditionType, PodPhase};

    fn status(phase: PodPhase, kinds: &[PodConditionType]) -> ApiPodStatus {
        let conditions = kinds
            .iter()
            .map(|k| PodCondition::new(k.clone(), ConditionStatus::True))
            .collect();
        ApiPodStatus {
            phase,
            ready: true,
            conditions: Conditions::from_vec(conditions),
            ..Default::default()
        }
    }

    /// The cached status is shared when the merge keeps it, and a merged one is the full
    /// merge's answer otherwise: a running pod, a pod whose API copy holds a condition the
    /// kubelet does not own, a terminal phase held back, a terminal phase written.
    #[test]
    fn the_status_to_patch_is_mergepodstatus_answer() {
        use PodConditionType::{Other, Ready};
        let gate = Other("example.com/gate".into());
        let cases = [
            (
                PodPhase::Running,
                vec![Ready],
                PodPhase::Running,
                vec![Ready],
                true,
            ),
            (
                PodPhase::Running,
                vec![Ready, gate.clone()],
                PodPhase::Running,
                vec![Ready],
                true,
            ),
            (
                PodPhase::Running,
                vec![Ready],
                PodPhase::Failed,
                vec![Ready],
                true,
            ),
            (
                PodPhase::Running,
                vec![Ready],
                PodPhase::Failed,
                vec![Ready],
                false,
            ),
            (PodPhase::Failed, vec![], PodPhase::Failed, vec![], false),
        ];
        for (i, (op, oc, np, nc, could)) in cases.into_iter().enumerate() {
            let (old, new) = (status(op, &oc), Arc::new(status(np, &nc)));
            let got = merged_for_patch(&old, &new, could);
            let full = merge_pod_status(&old, &new, could);
            assert_eq!(*got, full, "case {i}");
            assert_eq!(Arc::ptr_eq(&got, &new), full == *new, "case {i}");
        }
    }

    /// Notes are kept (a repeat of the last one once) up to the bound, then stand for
    /// every UID until cleared.
    #[test]
    fn orphan_candidates_fall_back_to_every_uid() {
        let mut c = OrphanCandidates::default();
        assert_eq!(c.uids(), Some(&[][..]));
        c.note(PodUid(3));
        c.note(PodUid(3));
        c.note(PodUid(1));
        assert_eq!(c.uids(), Some(&[PodUid(3), PodUid(1)][..]));
        for u in 0..OrphanCandidates::MAX as u32 {
            c.note(PodUid(10 + u));
        }
        assert_eq!(c.uids(), None);
        c.clear();
        assert_eq!(c.uids(), Some(&[][..]));
    }
}
