//! Housekeeping: `HandlePodCleanups`, run every 2 s from the sync loop once all config
//! sources are ready.
//!
//! Follows `pkg/kubelet/kubelet_pods.go` `HandlePodCleanups` (v1.31): `SyncKnownPods`,
//! probe and status cleanup, restart of desired pods the workers forgot, the kill of
//! terminal deleted pods never seen by workers (PR 118497), and the kill of orphaned
//! runtime pods with grace 1. Pod directories, cgroups, mirror pods and user namespaces
//! are not modelled yet.
//!
//! Upstream walks every pod every pass; this port asks first, cheaply, whether any step
//! has anything to do (`cleanup_scan`, free of side effects: the desired pods the
//! workers' report does not know, which the report keeps listed, and the UIDs the status
//! manager noted as possible orphans since the last pass); a step with nothing to do is
//! skipped, one with work runs its full loop as upstream writes it. The reports and
//! listings live in buffers kept between passes.

use super::known_report::KnownReport;
use super::pod_workers::{KillPodOptions, KnownPods, PodWorkerSync, UpdatePodOptions, WorkType};
use super::profile::Sw;
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::change_log::Changes;
use crate::model::uid_map::UidMap;
use crate::model::{ApiPod, NoteKind, UpdateType};
use crate::model::{PodUid, Transition};
use std::sync::Arc;

/// Buffers every housekeeping pass reuses (no allocation per pass in the steady state).
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    /// `SyncKnownPods`' report, kept up to date between passes.
    known: KnownReport,
    /// The runtime's running pods no worker is syncing or terminating, in UID order.
    orphans: Vec<PodUid>,
    /// The runtime listing's change-log epoch `orphans` was brought up to date at.
    running_synced: Option<u64>,
    /// Scratch: UIDs whose orphan standing may have changed.
    changed: (Vec<PodUid>, Vec<PodUid>),
}

/// `possiblyRunning`: the worker is syncing or terminating the pod.
fn possibly_running(w: Option<&PodWorkerSync>) -> bool {
    matches!(w, Some(w) if matches!(w.state, WorkType::Sync | WorkType::Terminating))
}

/// Which steps of the pass have something to do (see `cleanup_scan`).
#[derive(Debug, Default, PartialEq, Eq)]
struct Scan {
    /// The status manager holds a UID no longer in config.
    statuses_orphaned: bool,
    /// A desired, active pod unknown to the workers (to restart).
    restart: bool,
    /// A terminal deleted pod that no worker knows and nothing runs (to kill).
    terminal: bool,
}

impl Kubelet {
    /// `HandlePodCleanups`.
    pub(super) fn handle_pod_cleanups(&mut self, ctx: &mut Ctx) {
        ctx.emit(Transition::Housekeeping);
        // Borrow the pod manager's map for the duration (nothing below changes it).
        let all_pods = std::mem::take(&mut self.config.pods);
        let mut report = std::mem::take(&mut self.hk.known);
        self.sync_known_pods_into(ctx, &all_pods, &mut report);
        let known_desired = report.known_desired();
        let working = &report.pods;
        // Stop probing pods that are not running (each asked of the report by look-up).
        self.probe_cleanup_pods(ctx, |uid| possibly_running(working.get(&uid)));
        // Force-refresh the runtime cache: a fresh list of the running pods. Only the pods
        // the workers are not running matter below (the orphans to kill, and the "nothing
        // runs" tests, asked only of UIDs the workers do not know), so only those are kept,
        // and the list is kept between passes: redone for the pods that joined or left the
        // runtime's listing or whose report entry changed (all of it if any side lost track).
        let mut orphans = std::mem::take(&mut self.hk.orphans);
        self.list_orphans(ctx, &mut report, &mut orphans);
        let (working, unknown) = (&report.pods, report.unknown());
        let is_running = |uid: &PodUid| {
            debug_assert!(!possibly_running(working.get(uid)));
            orphans.binary_search(uid).is_ok()
        };
        let push_terminal = self.b.on(Sw::DeletionUsesLocalPhase);
        let known = (working, unknown, known_desired);
        let scan = self.cleanup_scan(&all_pods, known, push_terminal, is_running);
        // RemoveOrphanedStatuses.
        if scan.statuses_orphaned {
            self.status_remove_orphans(&all_pods);
        }
        self.status.orphans_possible.clear();
        // filterOutInactivePods + restart of desired pods unknown to the workers.
        if scan.restart {
            self.restart_unknown(ctx, &all_pods, working);
        }
        // Terminal pods with a deletion timestamp that no worker knows and nothing runs
        // (`filterTerminalPodsToDelete`, PR 118497; before it, a pod rejected at admission
        // after a restart never reached a worker, so nothing finished it). A restart above
        // changes the workers' records: the scan's answer is then not used.
        if push_terminal && (scan.terminal || scan.restart) {
            self.kill_terminal_unknown(ctx, &all_pods, working, is_running);
        }
        // Orphaned mirror pods: delete them, unless their static pod is still terminating.
        let orphaned_mirrors: Vec<(String, crate::model::PodUid)> = self
            .config
            .mirrors
            .iter()
            .filter(|(full, _)| {
                !all_pods
                    .values()
                    .any(|p| p.static_pod && &p.full_name() == *full)
            })
            .map(|(full, m)| (full.clone(), m.uid))
            .collect();
        for (full, uid) in orphaned_mirrors {
            if !self
                .pw
                .is_pod_for_mirror_pod_terminating_by_full_name(&full)
            {
                ctx.api_delete_mirror(uid);
            }
        }
        // cleanupOrphanedPodDirs: pod directories of pods neither in config nor possibly
        // running, whose volumes are gone (directories with volumes mounted are kept, so
        // only the others are listed).
        for uid in ctx.list_unmounted_pod_dirs() {
            if all_pods.contains_key(&uid)
                || possibly_running(working.get(&uid))
                || is_running(&uid)
            {
                continue;
            }
            ctx.cri(
                crate::world::cri::Caller::Deletor,
                crate::world::cri::CriReq::RemovePodDir { uid },
            );
        }
        // Orphaned runtime pods: kill with grace 1.
        if !orphans.is_empty() {
            self.kill_orphans(ctx, &orphans);
        }
        self.crash_backoff.gc(ctx.now());
        self.hk.known = report;
        self.hk.orphans = orphans;
        self.config.pods = all_pods;
    }

    /// Bring `orphans` (the running pods no worker is syncing or terminating, in UID order)
    /// up to date with the runtime's listing and the report.
    fn list_orphans(&mut self, ctx: &mut Ctx, report: &mut KnownReport, orphans: &mut Vec<PodUid>) {
        let (mut rt, mut rep) = std::mem::take(&mut self.hk.changed);
        let (c, epoch) = ctx.running_pod_changes(self.hk.running_synced, &mut rt);
        self.hk.running_synced = Some(epoch);
        let known = report.take_touched(&mut rep);
        let working = &report.pods;
        // A visit costs a look-up of the report and one of the listing; the listing one
        // step of a walk per running pod (about one per record).
        if c == Changes::All || !known || (rt.len() + rep.len()) * 3 > working.len() {
            ctx.list_running_pod_uids_where(|uid| !possibly_running(working.get(&uid)), orphans);
        } else {
            let mut reps = rep.iter().peekable();
            let mut visit = |uid: PodUid| {
                // Most visits are of pods a worker syncs: the report answers them without
                // asking the runtime (both tests are pure, so their order is free).
                let orphan = !possibly_running(working.get(&uid)) && ctx.pod_listed_running(uid);
                match (orphans.binary_search(&uid), orphan) {
                    (Err(i), true) => orphans.insert(i, uid),
                    (Ok(i), false) => {
                        orphans.remove(i);
                    }
                    _ => {}
                }
            };
            for uid in &rt {
                while let Some(u) = reps.next_if(|u| *u < uid) {
                    visit(*u);
                }
                reps.next_if(|u| *u == uid);
                visit(*uid);
            }
            reps.for_each(|u| visit(*u));
        }
        #[cfg(debug_assertions)]
        {
            let mut full = Vec::new();
            ctx.list_running_pod_uids_where(|uid| !possibly_running(working.get(&uid)), &mut full);
            assert_eq!(*orphans, full, "housekeeping's orphan list out of step");
        }
        self.hk.changed = (rt, rep);
    }

    /// One walk of the desired pods beside the status manager's maps and the workers'
    /// report: which of the pass's steps would act. Reads only; debug builds check the
    /// answer against the steps' own tests, pod by pod.
    #[inline(never)]
    fn cleanup_scan(
        &self,
        all_pods: &UidMap<Arc<ApiPod>>,
        (working, unknown_uids, known_desired): (&KnownPods, &[PodUid], usize),
        push_terminal: bool,
        is_running: impl Fn(&PodUid) -> bool,
    ) -> Scan {
        let sm = &self.status;
        let mut scan = Scan::default();
        // The restart and kill tests hold only for desired pods the workers do not know.
        // The report marks the records not desired (orphans), so its other entries are
        // desired pods: as many as the desired pods means every one is known.
        debug_assert_eq!(
            known_desired,
            working.0.values().filter(|w| !w.orphan).count()
        );
        // Desired pods the workers do not know: the report keeps their list.
        debug_assert_eq!(unknown_uids.len(), all_pods.len() - known_desired);
        #[cfg(debug_assertions)]
        {
            let full: Vec<PodUid> = all_pods
                .keys()
                .filter(|u| !working.contains_key(u))
                .copied()
                .collect();
            assert_eq!(unknown_uids, full, "the report's unknown pods out of step");
        }
        // Only the unknown pods matter: the report's list of them, each looked up (no
        // walk of the desired pods).
        for uid in unknown_uids {
            if let Some(pod) = all_pods.get(uid) {
                scan.restart |= self.restart_wanted(uid, pod);
                scan.terminal |=
                    push_terminal && self.kill_terminal_wanted(uid, pod, working, &is_running);
            }
        }
        // An orphan in the status manager's maps is a UID noted since the last pass (every
        // orphan was removed then): one the pod manager no longer holds and a map does.
        let gone = |u: &PodUid| !all_pods.contains_key(u);
        let held = |u: &PodUid| {
            sm.statuses.contains_key(u)
                || sm.api_versions.contains_key(u)
                || sm.stale_unqueued.contains(u)
                || sm.finished_fresh.contains(u)
        };
        scan.statuses_orphaned = match sm.orphans_possible.uids() {
            Some(noted) => noted.iter().any(|u| gone(u) && held(u)),
            None => (sm.statuses.keys())
                .chain(sm.api_versions.keys())
                .chain(&sm.stale_unqueued)
                .chain(&sm.finished_fresh)
                .any(gone),
        };
        #[cfg(debug_assertions)]
        {
            let full = Scan {
                statuses_orphaned: sm
                    .statuses
                    .keys()
                    .chain(sm.api_versions.keys())
                    .chain(&sm.stale_unqueued)
                    .chain(&sm.finished_fresh)
                    .any(gone),
                restart: all_pods
                    .iter()
                    .any(|(u, p)| self.restart_wanted(u, p) && !working.contains_key(u)),
                terminal: push_terminal
                    && all_pods
                        .iter()
                        .any(|(u, p)| self.kill_terminal_wanted(u, p, working, &is_running)),
            };
            assert_eq!(scan, full, "housekeeping scan out of step with its steps");
        }
        scan
    }

    /// The restart test of `filterOutInactivePods` (without the workers' knowledge): the
    /// pod is not terminated, and not terminal unless its termination was requested.
    fn restart_wanted(&self, uid: &PodUid, pod: &ApiPod) -> bool {
        let rec = self.pw.records.get(uid);
        if rec.is_some_and(|s| s.is_terminated()) {
            return false;
        }
        !self.phase_terminal(uid, pod) || rec.is_some_and(|s| s.is_termination_requested())
    }

    /// Whether the pod's phase is terminal in the API object or in the status manager's
    /// cache (the test `filterOutInactivePods` and the shutdown manager's active-pod list
    /// share).
    pub(super) fn phase_terminal(&self, uid: &PodUid, pod: &ApiPod) -> bool {
        pod.status.phase.is_terminal()
            || self
                .status
                .statuses
                .get(uid)
                .is_some_and(|v| v.status.phase.is_terminal())
    }

    /// Restart the desired, active pods the workers do not know.
    fn restart_unknown(
        &mut self,
        ctx: &mut Ctx,
        all_pods: &UidMap<Arc<ApiPod>>,
        working: &KnownPods,
    ) {
        for (uid, pod) in all_pods {
            if self.restart_wanted(uid, pod) && !working.contains_key(uid) {
                ctx.emit(Transition::Note {
                    uid: *uid,
                    what: NoteKind::HousekeepingRestartsUnknown,
                });
                self.update_pod(ctx, UpdatePodOptions::new(UpdateType::Create, pod.clone()));
            }
        }
    }

    /// The test of `filterTerminalPodsToDelete` (PR 118497).
    fn kill_terminal_wanted(
        &self,
        uid: &PodUid,
        pod: &ApiPod,
        working: &KnownPods,
        is_running: impl Fn(&PodUid) -> bool,
    ) -> bool {
        // (Cheap fields first; every test is free of side effects.)
        pod.deletion_timestamp.is_some()
            && pod.status.phase.is_terminal()
            && !working.contains_key(uid)
            && !self.pw.records.contains_key(uid)
            && !is_running(uid)
    }

    /// Kill the terminal deleted pods no worker knows and nothing runs.
    fn kill_terminal_unknown(
        &mut self,
        ctx: &mut Ctx,
        all_pods: &UidMap<Arc<ApiPod>>,
        working: &KnownPods,
        is_running: impl Fn(&PodUid) -> bool,
    ) {
        for (uid, pod) in all_pods {
            if self.kill_terminal_wanted(uid, pod, working, &is_running) {
                self.update_pod(ctx, UpdatePodOptions::new(UpdateType::Kill, pod.clone()));
            }
        }
    }

    /// Kill the runtime pods no worker is syncing or terminating, with grace 1.
    fn kill_orphans(&mut self, ctx: &mut Ctx, orphans: &[PodUid]) {
        for rp in ctx.list_running_pods_of(orphans) {
            let uid = rp.uid;
            ctx.reach(crate::model::reach::Reach::RuntimeOnlyPodKilled);
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::HousekeepingKillsOrphan,
            });
            self.update_pod(
                ctx,
                UpdatePodOptions {
                    update_type: UpdateType::Kill,
                    pod: None,
                    mirror: None,
                    running_pod: Some(Arc::new(rp)),
                    kill: Some(Box::new(KillPodOptions {
                        grace_override: Some(1),
                        ..Default::default()
                    })),
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report answers look-ups by UID; only syncing and terminating pods count as
    /// possibly running.
    #[test]
    fn possibly_running_reads_the_report() {
        let states = [
            (2, WorkType::Sync),
            (5, WorkType::Terminating),
            (7, WorkType::Terminated),
            (9, WorkType::Sync),
        ];
        let mut known = KnownPods::default();
        for (u, state) in states {
            let w = PodWorkerSync {
                state,
                orphan: false,
                has_config: true,
                is_static: false,
            };
            known.0.insert(PodUid(u), w);
        }
        let running: Vec<u32> = (0..12)
            .filter(|u| possibly_running(known.get(&PodUid(*u))))
            .collect();
        assert_eq!(running, vec![2, 5, 9]);
        assert_eq!(known.len(), 4);
    }
}
