//! Pod config and the pod manager: the kubelet's copy of the pods the API server assigned
//! to this node, fed by the watch, and the `Handle*` functions the sync loop calls.
//!
//! Follows `pkg/kubelet/config/config.go` (how API watch changes become ADD, UPDATE,
//! DELETE, REMOVE and RECONCILE operations), `pkg/kubelet/pod/pod_manager.go`, and the
//! `HandlePodAdditions` / `HandlePodUpdates` / `HandlePodRemoves` / `HandlePodReconcile` /
//! `deletePod` functions of `pkg/kubelet/kubelet.go` (v1.31). Admission is in
//! `admission.rs` (with the graceful node shutdown manager's admit handler from
//! `nodeshutdown.rs`). The static-pod file source is modelled (changes arrive at once, as
//! with inotify); the HTTP source is not.

use super::admission::ActiveUse;
use super::eviction_signals::has_local_storage_limits;
use super::pod_workers::UpdatePodOptions;
use super::profile::Sw;
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::uid_map::UidMap;
use crate::model::{ApiPod, PodUid, Transition};
use crate::model::{ConfigOpKind, UpdateType};
use crate::world::apiserver::{WatchEvent, WatchKind};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The pod manager.
#[derive(Clone, Debug, Default)]
pub(crate) struct PodManager {
    pub(crate) pods: UidMap<Arc<ApiPod>>,
    /// All config sources (the API watch and the static-pod file source) have reported
    /// at least once.
    pub(crate) sources_ready: bool,
    api_seen: bool,
    file_seen: bool,
    /// Mirror pods by full name.
    pub(crate) mirrors: BTreeMap<String, Arc<ApiPod>>,
    /// Pods admission's active-pod scan visits: every pod an update reached
    /// (`UpdatePod`), so all but pods rejected at admission and never updated since
    /// (inactive: terminal in the status manager, no pod worker). UIDs gone from `pods`
    /// are dropped at the next scan. Keeps the scan proportional to the admitted pods,
    /// not to every pod the node ever rejected (`admission::active_use_for_admission`).
    /// Indexed by UID ([`UidMap`]): every update asks for its pod's place, most find it.
    pub(crate) candidates: UidMap<()>,
    /// The UIDs in `pods` whose spec sets `activeDeadlineSeconds`: the only pods the
    /// active-deadline handler can ask to sync, so `getPodsToSync` asks it about these
    /// alone instead of every pod at every sync-loop tick (kept by `put` and `remove`).
    with_deadline: BTreeSet<PodUid>,
    /// How many pods in `pods` set a local storage limit (an ephemeral-storage limit or an
    /// `emptyDir` size limit): while none does, the eviction manager's local storage pass
    /// has nothing to check and skips its walk of the specs (kept by `put` and `remove`).
    storage_limited: usize,
    /// UIDs added to or removed from `pods` (read by housekeeping's `SyncKnownPods`).
    pub(crate) changed: super::record_map::ChangeLog,
    /// UIDs whose pod was added, replaced or removed, and every UID at a mirror pod's
    /// change (read by the status manager's periodic reconcile check).
    pub(crate) touched: super::record_map::ChangeLog,
}

impl PodManager {
    /// Add or replace a pod (`pods.insert`, keeping `with_deadline` in step).
    pub(crate) fn put(&mut self, pod: Arc<ApiPod>) {
        if pod.spec.active_deadline.0.is_some() {
            self.with_deadline.insert(pod.uid);
        } else {
            self.with_deadline.remove(&pod.uid);
        }
        let uid = pod.uid;
        self.storage_limited += usize::from(has_local_storage_limits(&pod.spec));
        match self.pods.insert(uid, pod) {
            None => self.changed.note(uid, self.pods.len()),
            Some(old) => self.storage_limited -= usize::from(has_local_storage_limits(&old.spec)),
        }
        self.touched.note(uid, self.pods.len());
    }

    /// Remove a pod (`pods.remove`, keeping `with_deadline` in step).
    pub(crate) fn remove(&mut self, uid: PodUid) {
        self.with_deadline.remove(&uid);
        if let Some(old) = self.pods.remove(&uid) {
            self.storage_limited -= usize::from(has_local_storage_limits(&old.spec));
            self.changed.note(uid, self.pods.len());
            self.touched.note(uid, self.pods.len());
        }
    }

    /// Whether some pod in config sets a local storage limit (debug builds check the kept
    /// count against a scan of every spec).
    pub(crate) fn any_storage_limited(&self) -> bool {
        debug_assert_eq!(
            self.storage_limited,
            (self.pods.values())
                .filter(|p| has_local_storage_limits(&p.spec))
                .count(),
            "pod manager's count of pods with local storage limits out of step"
        );
        self.storage_limited > 0
    }

    /// The pods with an active deadline, in UID order.
    pub(crate) fn with_deadline(&self) -> impl Iterator<Item = (&PodUid, &Arc<ApiPod>)> {
        #[cfg(debug_assertions)]
        {
            let full: Vec<PodUid> = (self.pods.iter())
                .filter(|(_, p)| p.spec.active_deadline.0.is_some())
                .map(|(u, _)| *u)
                .collect();
            let kept: Vec<PodUid> = self.with_deadline.iter().copied().collect();
            assert_eq!(kept, full, "pod manager's deadline index out of step");
        }
        (self.with_deadline.iter()).map(|u| (u, self.pods.get(u).expect("indexed pod in config")))
    }
    /// The mirror pod of a static pod, if the API holds one with its full name.
    pub(crate) fn mirror_for(&self, pod: &ApiPod) -> Option<Arc<ApiPod>> {
        if !pod.static_pod {
            return None;
        }
        self.mirrors.get(&pod.full_name()).cloned()
    }

    /// The static pod in config with this full name, if any.
    pub(crate) fn static_by_full_name(&self, full_name: &str) -> Option<Arc<ApiPod>> {
        self.pods
            .values()
            .find(|p| p.static_pod && p.full_name() == full_name)
            .cloned()
    }
}

impl Kubelet {
    /// A watch event reaches the config source: classify it like the API source's merge.
    pub(super) fn on_watch(&mut self, ctx: &mut Ctx, ev: WatchEvent) {
        let uid = ev.pod.uid;
        if ev.pod.mirror_of.is_some() {
            self.handle_mirror_pod(ctx, ev);
            return;
        }
        match ev.kind {
            WatchKind::Added => {
                ctx.emit(Transition::ConfigOp {
                    uid,
                    op: ConfigOpKind::Add,
                });
                self.handle_pod_additions(ctx, ev.pod);
            }
            WatchKind::Modified => {
                let Some(old) = self.config.pods.get(&uid) else {
                    // A change of an object we never saw added is an addition.
                    ctx.emit(Transition::ConfigOp {
                        uid,
                        op: ConfigOpKind::Add,
                    });
                    self.handle_pod_additions(ctx, ev.pod);
                    return;
                };
                let differ = old.spec != ev.pod.spec
                    || old.deletion_timestamp != ev.pod.deletion_timestamp
                    || old.deletion_grace_period_seconds != ev.pod.deletion_grace_period_seconds;
                if differ {
                    let op = if ev.pod.deletion_timestamp.is_some() {
                        ConfigOpKind::Delete
                    } else {
                        ConfigOpKind::Update
                    };
                    ctx.emit(Transition::ConfigOp { uid, op });
                    self.handle_pod_updates(ctx, ev.pod);
                } else if old.status != ev.pod.status {
                    self.handle_pod_reconcile(ctx, ev.pod);
                }
            }
            WatchKind::Deleted => {
                // REMOVE carries the last locally known copy of the pod.
                let Some(local) = self.config.pods.get(&uid).cloned() else {
                    return;
                };
                ctx.emit(Transition::ConfigOp {
                    uid,
                    op: ConfigOpKind::Remove,
                });
                self.handle_pod_removes(ctx, local);
            }
        }
    }

    /// The API source delivered its initial list.
    pub(super) fn on_source_ready(&mut self) {
        self.config.api_seen = true;
        self.config.sources_ready = self.config.api_seen && self.config.file_seen;
    }

    /// The file source delivered its initial listing.
    pub(crate) fn on_file_synced(&mut self) {
        self.config.file_seen = true;
        self.config.sources_ready = self.config.api_seen && self.config.file_seen;
    }

    /// A static-pod manifest appeared or went away (file source, SET semantics).
    pub(crate) fn on_file_event(&mut self, ctx: &mut Ctx, ev: WatchEvent) {
        let uid = ev.pod.uid;
        match ev.kind {
            WatchKind::Added | WatchKind::Modified => {
                ctx.emit(Transition::ConfigOp {
                    uid,
                    op: ConfigOpKind::AddFile,
                });
                self.handle_pod_additions(ctx, ev.pod);
            }
            WatchKind::Deleted => {
                let Some(local) = self.config.pods.get(&uid).cloned() else {
                    return;
                };
                ctx.emit(Transition::ConfigOp {
                    uid,
                    op: ConfigOpKind::RemoveFile,
                });
                self.handle_pod_removes(ctx, local);
            }
        }
    }

    /// `handleMirrorPod`: a mirror pod changed in the API; resync its static pod.
    fn handle_mirror_pod(&mut self, ctx: &mut Ctx, ev: WatchEvent) {
        let full = ev.pod.full_name();
        match ev.kind {
            WatchKind::Added | WatchKind::Modified => {
                self.config.mirrors.insert(full.clone(), ev.pod.clone());
                self.config.touched.note_all();
            }
            WatchKind::Deleted => {
                if self
                    .config
                    .mirrors
                    .get(&full)
                    .is_some_and(|m| m.uid == ev.pod.uid)
                {
                    self.config.mirrors.remove(&full);
                    self.config.touched.note_all();
                }
            }
        }
        if let Some(pod) = self.config.static_by_full_name(&full) {
            let opts = self.update_options(UpdateType::Update, pod);
            self.dispatch_work(ctx, opts);
        }
    }

    /// Options for an update of `pod`, with its mirror pod if it is static.
    pub(super) fn update_options(&self, ty: UpdateType, pod: Arc<ApiPod>) -> UpdatePodOptions {
        // The mirror is looked up first, so the options take `pod` itself (no second count
        // of its reference up and down).
        let mirror = self.config.mirror_for(&pod);
        let mut o = UpdatePodOptions::new(ty, pod);
        o.mirror = mirror;
        o
    }

    /// `HandlePodAdditions`: add to the pod manager; a pod not already terminating and not
    /// terminal must pass admission against the active pods it joins, or it is rejected
    /// (Failed locally, never given to the pod workers).
    fn handle_pod_additions(&mut self, ctx: &mut Ctx, pod: Arc<ApiPod>) {
        let needs_admission =
            !self.pw.is_pod_termination_requested(pod.uid) && !pod.status.phase.is_terminal();
        let active = if needs_admission && self.admission_needs_active(&pod) {
            self.active_use_for_admission(&pod)
        } else {
            ActiveUse::default()
        };
        self.config.put(pod.clone());
        self.objects_on_pod_manager_update(ctx, &pod);
        if needs_admission {
            if let Some((reason, message)) = self.admission_reason(&pod, &active) {
                self.reject_pod(ctx, &pod, reason, message);
                return;
            }
        }
        let opts = self.update_options(UpdateType::Create, pod.clone());
        self.dispatch_work(ctx, opts);
        // Before PR 110191 (v1.22-v1.24) the probe workers followed config: added here.
        if !self.b.on(Sw::StopProbesAtTermination) {
            self.probe_add_pod(ctx, &pod);
        }
    }

    /// `HandlePodUpdates` (also graceful deletion).
    fn handle_pod_updates(&mut self, ctx: &mut Ctx, pod: Arc<ApiPod>) {
        if pod.deletion_timestamp.is_some() {
            let started = self.pleg.cache_get(pod.uid).is_ok_and(|s| {
                pod.spec.containers.iter().all(|c| {
                    s.containers
                        .iter()
                        .any(|r| *r.name == *c.name && r.started_at.is_some())
                })
            });
            if !started {
                ctx.reach(crate::model::reach::Reach::DeleteBeforeContainersStarted);
            }
            let exited = self.pleg.cache_get(pod.uid).is_ok_and(|s| {
                s.containers
                    .iter()
                    .any(|r| r.state == crate::model::RtState::Exited)
                    && !s.has_running_container()
            });
            let syncing = self
                .parked_op(pod.uid)
                .is_some_and(|o| o.kind == super::sync::SyncKind::SyncPod);
            if exited && syncing {
                ctx.reach(crate::model::reach::Reach::DeleteWhileRestartingContainer);
            }
        }
        self.config.put(pod.clone());
        self.objects_on_pod_manager_update(ctx, &pod);
        let deleted = pod.deletion_timestamp.is_some();
        let opts = self.update_options(UpdateType::Update, pod.clone());
        self.dispatch_work(ctx, opts);
        // Before PR 110191, in the pod-worker design (v1.22-v1.24): handling the deletion
        // stopped every probe of the pod, so readiness was not reported during
        // termination (the v1.22 regression, issue 110309; v1.21 probed until REMOVE).
        if deleted
            && !self.b.on(Sw::StopProbesAtTermination)
            && self.b.on(Sw::PodWorkerOwnsLifecycle)
        {
            self.probe_remove_pod(ctx, &pod);
        }
    }

    /// `HandlePodReconcile`: a status-only change. A pod whose readiness gates now give
    /// another Ready condition than the API holds is synced (`NeedToReconcilePodReadiness`).
    /// Once the API shows the pod evicted, all its dead containers are removed (the
    /// container deletor with `removeAll`).
    fn handle_pod_reconcile(&mut self, ctx: &mut Ctx, pod: Arc<ApiPod>) {
        let evicted = pod.status.phase == crate::model::PodPhase::Failed
            && pod.status.reason.as_deref() == Some(super::eviction::REASON);
        let uid = pod.uid;
        let readiness = super::conditions::need_to_reconcile_pod_readiness(&pod);
        self.objects_on_pod_manager_update(ctx, &pod);
        self.config.put(pod);
        if readiness {
            self.handle_pod_syncs(ctx, &[uid]);
        }
        if evicted {
            if let Ok(status) = self.pleg.cache_get(uid) {
                for c in &status.containers {
                    if c.state == crate::model::RtState::Exited {
                        ctx.cri(
                            crate::world::cri::Caller::Deletor,
                            crate::world::cri::CriReq::RemoveContainer { uid, id: c.id },
                        );
                    }
                }
            }
        }
    }

    /// `HandlePodRemoves` and `deletePod`.
    fn handle_pod_removes(&mut self, ctx: &mut Ctx, pod: Arc<ApiPod>) {
        self.config.remove(pod.uid);
        self.status.orphans_possible.note(pod.uid);
        if !self.b.on(Sw::StopProbesAtTermination) {
            self.probe_remove_pod(ctx, &pod); // before PR 110191
        }
        if self.legacy() {
            self.legacy_handle_pod_removes(ctx, pod);
            return;
        }
        if !self.config.sources_ready {
            // Housekeeping will handle it once all sources are ready.
            return;
        }
        let opts = self.update_options(UpdateType::Kill, pod);
        self.update_pod(ctx, opts);
    }

    /// `HandlePodSyncs`.
    pub(super) fn handle_pod_syncs(&mut self, ctx: &mut Ctx, uids: &[PodUid]) {
        for uid in uids {
            if let Some(pod) = self.config.pods.get(uid).cloned() {
                let opts = self.update_options(UpdateType::Sync, pod);
                self.dispatch_work(ctx, opts);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, EmptyDir, PodSpec, RestartPolicy};

    fn pod(uid: u32, ephemeral_limit: u64) -> Arc<ApiPod> {
        let mut c = ContainerSpec::named("c", "img");
        c.ephemeral.limit = ephemeral_limit;
        Arc::new(ApiPod::new(
            PodUid(uid),
            PodSpec::new("p", "default", RestartPolicy::Always, vec![c]),
        ))
    }

    #[test]
    fn the_count_of_pods_with_storage_limits_follows_puts_and_removes() {
        let mut m = PodManager::default();
        assert!(!m.any_storage_limited());
        m.put(pod(1, 0));
        assert!(!m.any_storage_limited());
        m.put(pod(2, 100));
        assert!(m.any_storage_limited());
        // Replacing a limited pod by one without a limit, and back.
        m.put(pod(2, 0));
        assert!(!m.any_storage_limited());
        let mut with_dir = (*pod(1, 0)).clone();
        Arc::make_mut(&mut with_dir.spec)
            .empty_dirs
            .0
            .push(EmptyDir {
                name: "scratch".into(),
                size_limit: Some(1 << 20),
                usage: Default::default(),
            });
        m.put(Arc::new(with_dir));
        assert!(m.any_storage_limited());
        m.remove(PodUid(1));
        assert!(!m.any_storage_limited());
        // Removing a pod not in config changes nothing.
        m.remove(PodUid(7));
        assert_eq!(m.storage_limited, 0);
    }
}
