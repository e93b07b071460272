//! The v1.21 pod-lifecycle design, from before the pod-worker state machine (PR 102344):
//! what `podWorkerOwnsLifecycle: false` runs.
//!
//! Follows upstream Kubernetes **v1.21**: `pkg/kubelet/kubelet.go` (`dispatchWork`,
//! `podAndContainersAreTerminal`, the kill paths of `syncPod`, `HandlePodRemoves` and
//! `deletePod`), `pkg/kubelet/pod_workers.go` (`UpdatePod` with its one undelivered slot,
//! `managePodLoop`, `wrapUp`, `checkForUpdates`, `ForgetWorker`,
//! `ForgetNonExistingPodWorkers`), `pkg/kubelet/kubelet_pods.go` (`HandlePodCleanups`, the
//! pod killer `podKillerWithChannel`, `cleanupOrphanedPodDirs`, `cleanupOrphanedPodCgroups`,
//! `PodResourcesAreReclaimed`, `podIsTerminated`), `pkg/kubelet/status/status_manager.go`
//! (`TerminatePod`, `canBeDeleted` without a terminal-phase deferral) and
//! `pkg/kubelet/container/runtime_cache.go` (the runtime cache).
//!
//! The v1.31 code elsewhere stays as it is; the dispatch points (`UpdatePod`, the worker's
//! wake-up and completion, the config handlers, housekeeping, the status manager's
//! deletion rule and the container deletor) call in here when the switch is off. Two
//! sub-switches only matter here: `killPodMarksPendingAtOnce` (PR 98956) and
//! `housekeepingSkipsPodsBeingKilled` (PRs 98424, 101524).
//!
//! The entry points the v1.31 pod-worker path calls on every update, sync and sync end are
//! out of line and marked cold: a v1.31 run never enters them, and they would otherwise be
//! inlined into that path's code and spread it over more cache lines.
//!
//! Where it deliberately differs from v1.21:
//! * Each update still runs as one `SyncPod` operation of the v1.31 port (`sync.rs`), with
//!   the v1.21 kill paths in front: a Kill update writes its status function's status and
//!   kills with the override; a pod with a deletion timestamp or a Failed phase is killed
//!   from its ordinary sync with no override. Soft admission (`canRunPod`) is not modelled.
//!   A Succeeded pod ends its sync without the runtime's sandbox clean-up.
//! * After `ForgetWorker`, v1.21 starts a second goroutine for the UID on the next update
//!   while the first may still be inside `syncPod`; here the new worker's first update
//!   waits until the old sync ends (one operation per UID).
//! * The pod killer kills a pod without an API object with the 2 s minimum grace (v1.21
//!   restores the grace period from container labels, which the model does not keep).
//! * The volume manager's clean-up of pods that are gone or terminated
//!   (`findAndRemoveDeletedPods`: no container of the pod running in a fresh runtime
//!   listing) runs with housekeeping, every 2 s like the populator's rate limit.
//! * The kubelet's pod-worker transitions are emitted for the oracle where v1.21 has an
//!   equivalent: `dispatchWork`'s shortcut is recorded as a worker transition
//!   ([`TREATED_AS_TERMINATED`]) because from then on the kubelet treats the pod as finished
//!   (its worker is skipped and the status manager may delete it).

use super::pod_workers::{close_channel, UpdatePodOptions, Work, WorkType};
use super::sync::{apply_status_fn, synthetic_pod, KillPlan, Op, Step};
use super::sync_rare::plan_kill_running;
use super::{KEv, Kubelet};
use crate::kubelet::profile::Sw;
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, ApiPodStatus, PodUid, RtPodStatus, RunningPod,
    Transition,
};
use crate::model::{NoteKind, SyncKind, SyncStepKind, UpdateType, WorkerStep};
use crate::sim::{Dur, SimTime, Stream};
use crate::world::cri::{Caller, CriReq};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// `runtimeCacheRefreshPeriod` (housekeeping period + housekeeping warning duration).
pub(crate) const RUNTIME_CACHE_PERIOD: Dur = Dur::secs(3);
/// `ContainerGCPeriod`.
pub(crate) const CONTAINER_GC_PERIOD: Dur = Dur::secs(60);
/// The pod killer's goroutine receives a request this long (at most) after it was sent.
pub(crate) const KILLER_DEQUEUE_MAX: Dur = Dur::millis(50);

/// One request on the pod killer's channel (`kubecontainer.PodPair`).
#[derive(Clone, Debug)]
pub(crate) struct KillRequest {
    pub(crate) api: Option<Arc<ApiPod>>,
    pub(crate) running: RunningPod,
}

/// The v1.21 state that has no v1.31 counterpart.
#[derive(Clone, Debug)]
pub(crate) struct LegacyState {
    /// `lastUndeliveredWorkUpdate` per UID (the channel item is the record's
    /// `pending_update`).
    pub(crate) undelivered: BTreeMap<PodUid, UpdatePodOptions>,
    /// The pod killer's channel: requests sent and not yet received.
    pub(crate) killer_queue: VecDeque<KillRequest>,
    /// `podTerminationMap`: UIDs pending termination by the pod killer.
    pub(crate) pending: BTreeSet<PodUid>,
    /// The pod killer's kills in flight (one goroutine each).
    pub(crate) killer_ops: BTreeMap<PodUid, Box<Op>>,
    /// The runtime cache: when it was last filled, and the running pods it then listed.
    pub(crate) runtime_cache: Option<(SimTime, Vec<RunningPod>)>,
    rng: Stream,
}

impl LegacyState {
    pub(crate) fn new(seed: u64) -> Self {
        LegacyState {
            undelivered: BTreeMap::new(),
            killer_queue: VecDeque::new(),
            pending: BTreeSet::new(),
            killer_ops: BTreeMap::new(),
            runtime_cache: None,
            rng: Stream::new(seed, "kubelet/legacy/podkiller"),
        }
    }
}

/// `notRunning`: no container status is Running (Waiting counts as not running).
pub(crate) fn not_running(statuses: &[ApiContainerStatus]) -> bool {
    statuses.iter().all(|c| !c.state.is_running())
}

impl Kubelet {
    /// Whether this run uses the v1.21 design.
    pub(super) fn legacy(&self) -> bool {
        !self.b.on(Sw::PodWorkerOwnsLifecycle)
    }

    /// The status manager's cached status, else the API's.
    fn legacy_cached_status<'a>(&'a self, pod: &'a ApiPod) -> &'a ApiPodStatus {
        self.status
            .statuses
            .get(&pod.uid)
            .map(|v| &v.status)
            .unwrap_or(&pod.status)
    }

    /// `podAndContainersAreTerminal`: (containers terminal, pod worker terminal).
    pub(super) fn pod_and_containers_are_terminal(&self, pod: &ApiPod) -> (bool, bool) {
        let st = self.legacy_cached_status(pod);
        let containers = not_running(&st.containers);
        let worker = st.phase.is_terminal() || (pod.deletion_timestamp.is_some() && containers);
        (containers, worker)
    }

    /// `podIsTerminated` (v1.21): the same rule as the pod worker's half of
    /// `podAndContainersAreTerminal`.
    pub(super) fn legacy_pod_is_terminated(&self, pod: &ApiPod) -> bool {
        self.pod_and_containers_are_terminal(pod).1
    }

    /// `dispatchWork`: in v1.31 a plain `UpdatePod`; in v1.21 guarded by
    /// `podAndContainersAreTerminal`.
    pub(super) fn dispatch_work(&mut self, ctx: &mut Ctx, opts: UpdatePodOptions) {
        if !self.legacy() {
            self.update_pod(ctx, opts);
            return;
        }
        let Some(pod) = opts.pod.clone() else {
            return;
        };
        let (containers_terminal, worker_terminal) = self.pod_and_containers_are_terminal(&pod);
        if pod.deletion_timestamp.is_some() && containers_terminal {
            if self
                .pw
                .records
                .get(&pod.uid)
                .is_some_and(|s| s.op.is_some())
            {
                // The worker is inside a sync (perhaps creating containers) and is skipped.
                ctx.reach(Reach::KillOfUnstartedPod);
            }
            ctx.emit(Transition::Worker {
                uid: pod.uid,
                what: WorkerStep::V121TreatedAsTerminated,
            });
            self.legacy_terminate_pod(ctx, &pod);
            return;
        }
        if worker_terminal {
            return; // no further change is possible: the update is dropped
        }
        self.update_pod(ctx, opts);
    }

    /// `TerminatePod` (v1.21): every container status not terminated becomes terminated
    /// (unknown, 137); the phase is kept.
    pub(super) fn legacy_terminate_pod(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        let mut status = self.legacy_cached_status(pod).clone();
        for c in &mut status.containers {
            if c.state.is_terminated() {
                continue;
            }
            c.state = ApiContainerState::Terminated {
                exit_code: 137,
                reason: "ContainerStatusUnknown",
                started_at: None,
                finished_at: None,
            };
        }
        let _ = self.update_status_internal(ctx, pod, status, true, true);
    }

    /// `UpdatePod` (v1.21): start a worker if none exists; hand the update over if the
    /// worker is idle, else keep it as the undelivered update (a pending Kill is never
    /// overwritten).
    #[cold]
    #[inline(never)]
    pub(super) fn legacy_update_pod(&mut self, ctx: &mut Ctx, options: UpdatePodOptions) {
        let Some(pod) = options.pod.clone() else {
            return; // v1.21 UpdatePod always carries an API pod
        };
        let uid = pod.uid;
        let now = ctx.now();
        ctx.emit(Transition::UpdatePod {
            uid,
            ty: options.update_type,
            runtime_only: false,
        });
        if self.pw.ensure_record(uid, pod.spec.full_name(), now) {
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::Record,
            });
        }
        let options = match self.pw.legacy_offer(uid, options) {
            Ok(wake) => {
                if wake {
                    let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
                }
                return;
            }
            Err(busy) => busy,
        };
        let pending_kill = self
            .legacy
            .undelivered
            .get(&uid)
            .is_some_and(|u| u.update_type == UpdateType::Kill);
        if !pending_kill {
            self.legacy.undelivered.insert(uid, options);
        }
    }

    /// The worker goroutine receives its channel item (`managePodLoop`): wait for a pod
    /// cache entry newer than the last sync, then `syncPod`.
    #[cold]
    #[inline(never)]
    pub(super) fn legacy_worker_wake(&mut self, ctx: &mut Ctx, uid: PodUid) {
        let Some(options) = self.pw.legacy_take_update(uid) else {
            return;
        };
        let (op, min) = self.pw.begin_sync(uid);
        let work = Work {
            work_type: WorkType::Sync,
            options,
        };
        if let Some(cached) = self.pleg.cache_get_if_newer(uid, min) {
            let found = super::status_memo::Found { cached, memo: None };
            self.run_work(ctx, uid, op, work, Some(found));
        } else {
            self.pleg.add_waiter(uid, min);
            self.waiting_work.insert(uid, (op, work));
        }
    }

    /// The front of v1.21 `syncPod`: the kill paths. Returns whether it planned the sync
    /// (a kill); otherwise the ordinary `SyncPod` runs.
    #[cold]
    #[inline(never)]
    pub(super) fn legacy_sync_pod_kill(&mut self, ctx: &mut Ctx, op: &mut Op) -> bool {
        let uid = op.pod.uid;
        let pod = op.pod.clone();
        if op.work.options.update_type == UpdateType::Kill {
            let kill = op.work.options.kill.clone().unwrap_or_default();
            let Some(f) = kill.status_fn else {
                op.fatal = Some("kill pod options are required if update type is kill".into());
                return true;
            };
            let mut api = self.generate_api_pod_status(ctx, &pod, &op.status, false);
            apply_status_fn(&mut api, &f);
            self.set_pod_status(ctx, &pod, api);
            ctx.emit(Transition::SyncStep {
                uid,
                step: SyncStepKind::V121KillUpdate,
            });
            plan_kill_running(op, kill.grace_override);
            return true;
        }
        if pod.deletion_timestamp.is_some() {
            let api = self.generate_api_pod_status(ctx, &pod, &op.status, false);
            self.set_pod_status(ctx, &pod, api);
            ctx.emit(Transition::SyncStep {
                uid,
                step: SyncStepKind::V121DeletionKill,
            });
            plan_kill_running(op, None);
            return true;
        }
        false
    }

    /// The end of one `managePodLoop` iteration: `OnCompleteFunc`, then `wrapUp`
    /// (re-enqueue) and `checkForUpdates`.
    #[cold]
    #[inline(never)]
    pub(super) fn legacy_finish_work(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        work: &Work,
        result: Result<bool, super::pod_workers::SyncError>,
    ) {
        let now = ctx.now();
        if let Some(ch) = work.options.kill.as_ref().and_then(|k| k.completed) {
            close_channel(
                &mut self.pw.closed_channels,
                &mut self.pw.kill_waiters,
                ctx,
                uid,
                ch,
            );
        }
        let delay = match result {
            Ok(_) => self.pw.jitter(self.pw.resync_interval),
            Err(super::pod_workers::SyncError::NetworkNotReady) => self
                .pw
                .jitter(super::pod_workers::BACKOFF_ON_TRANSIENT_ERROR),
            Err(super::pod_workers::SyncError::Other) => self.pw.jitter(self.pw.back_off_period),
        };
        self.pw.work_queue.enqueue(uid, now + delay);
        if self
            .pw
            .legacy_complete_sync(uid, op_id, now, &mut self.legacy.undelivered)
        {
            let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
        }
    }

    /// `ForgetWorker`: close the worker's channel (its goroutine ends after the sync it is
    /// in, and after an item already in the channel) and drop the undelivered update.
    pub(super) fn legacy_forget_worker(&mut self, ctx: &mut Ctx, uid: PodUid) {
        self.legacy.undelivered.remove(&uid);
        if self.pw.legacy_forget(uid).is_some() {
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::V121Forgotten,
            });
        }
    }

    /// `HandlePodRemoves` and `deletePod` (v1.21): forget the worker, then hand the pod
    /// (if the runtime cache lists it) to the pod killer.
    pub(super) fn legacy_handle_pod_removes(&mut self, ctx: &mut Ctx, pod: Arc<ApiPod>) {
        if !self.config.sources_ready {
            return;
        }
        let uid = pod.uid;
        self.legacy_forget_worker(ctx, uid);
        // The runtime cache is made at least as fresh as the last container start seen.
        let last_started = self
            .pleg
            .cache_get(uid)
            .ok()
            .and_then(|s| s.containers.iter().filter_map(|c| c.started_at).max());
        if let Some(t) = last_started {
            if self
                .legacy
                .runtime_cache
                .as_ref()
                .is_some_and(|(at, _)| *at < t)
            {
                self.legacy.runtime_cache = None;
            }
        }
        let running = self.legacy_runtime_pods(ctx);
        match running.into_iter().find(|p| p.uid == uid) {
            Some(rp) => self.pod_killer_kill(ctx, Some(pod.clone()), rp),
            None => ctx.emit(Transition::Note {
                uid,
                what: NoteKind::V121NotInRuntimeCache,
            }),
        }
        self.probe_remove_pod(ctx, &pod);
    }

    /// `runtimeCache.GetPods`: the listing, refreshed when older than its period.
    fn legacy_runtime_pods(&mut self, ctx: &mut Ctx) -> Vec<RunningPod> {
        let now = ctx.now();
        let fresh = self
            .legacy
            .runtime_cache
            .as_ref()
            .is_some_and(|(t, _)| now.since(*t) <= RUNTIME_CACHE_PERIOD);
        if !fresh {
            self.legacy.runtime_cache = Some((now, ctx.list_running_pods()));
        }
        self.legacy
            .runtime_cache
            .as_ref()
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }

    /// The pod killer's `KillPod`: send the pair on its channel. With
    /// `killPodMarksPendingAtOnce` (PR 98956) the pod is marked pending termination (and a
    /// second request for it dropped) before the send; before it, only when the killer's
    /// goroutine receives the request.
    pub(super) fn pod_killer_kill(
        &mut self,
        ctx: &mut Ctx,
        api: Option<Arc<ApiPod>>,
        running: RunningPod,
    ) {
        ctx.emit(Transition::Note {
            uid: running.uid,
            what: NoteKind::V121KillRequested,
        });
        if self.b.on(Sw::KillPodMarksPendingAtOnce) && !self.legacy.pending.insert(running.uid) {
            return;
        }
        self.legacy
            .killer_queue
            .push_back(KillRequest { api, running });
        let d = Dur(self.legacy.rng.below(KILLER_DEQUEUE_MAX.0 + 1));
        let _ = ctx.after(d, KEv::PodKillerReceive);
    }

    /// The pod killer's goroutine receives one request and kills the pod in a new
    /// goroutine (unless a kill of that UID is pending).
    pub(super) fn pod_killer_receive(&mut self, ctx: &mut Ctx) {
        let Some(req) = self.legacy.killer_queue.pop_front() else {
            return;
        };
        let uid = req.running.uid;
        if !self.b.on(Sw::KillPodMarksPendingAtOnce) && !self.legacy.pending.insert(uid) {
            return;
        }
        let pod = match req.api {
            Some(p) => p,
            None => match self.config.pods.get(&uid) {
                // The spec as the container labels keep it (no deletion grace period).
                Some(p) => {
                    let mut p = (**p).clone();
                    p.deletion_timestamp = None;
                    p.deletion_grace_period_seconds = None;
                    Arc::new(p)
                }
                None => Arc::new(synthetic_pod(&req.running)),
            },
        };
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::V121PodKillerKilling,
        });
        let running = Arc::new(req.running);
        let work = Work {
            work_type: WorkType::Sync,
            options: UpdatePodOptions {
                update_type: UpdateType::Kill,
                pod: Some(pod.clone()),
                mirror: None,
                running_pod: Some(running.clone()),
                kill: None,
            },
        };
        let id = self.pw.new_op();
        let mut op = self.spare_ops.op(
            id,
            SyncKind::SyncPod,
            work,
            pod,
            Arc::new(RtPodStatus::default()),
            None,
        );
        op.killer = true;
        op.plan.push_back(Step::KillPod(Box::new(KillPlan {
            containers: running.containers.clone(),
            sandboxes: running.sandboxes.clone(),
            grace_override: None,
            reason: None,
        })));
        self.advance(ctx, uid, op);
    }

    /// A pod killer goroutine is done (`markPodTerminated`).
    #[cold]
    #[inline(never)]
    pub(super) fn legacy_killer_done(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        result: Result<bool, String>,
    ) {
        self.legacy.pending.remove(&uid);
        ctx.emit(Transition::Note {
            uid,
            what: if result.is_ok() {
                NoteKind::V121KillDone
            } else {
                NoteKind::V121KillFailed
            },
        });
    }

    /// `IsPodPendingTerminationByUID`, as orphan clean-up asks it: only with
    /// `housekeepingSkipsPodsBeingKilled` (PRs 98424, 101524).
    fn legacy_skip_pending(&self, uid: PodUid) -> bool {
        self.b.on(Sw::HousekeepingSkipsPodsBeingKilled) && self.legacy.pending.contains(&uid)
    }

    /// `HandlePodCleanups` (v1.21).
    pub(super) fn legacy_handle_pod_cleanups(&mut self, ctx: &mut Ctx) {
        ctx.emit(Transition::Housekeeping);
        let cgroup_pods = ctx.list_pod_cgroups();
        let all_pods = std::mem::take(&mut self.config.pods);
        // Active (desired) pods: in config and not terminated by the status manager's view.
        let desired: BTreeSet<PodUid> = all_pods
            .values()
            .filter(|p| !self.legacy_pod_is_terminated(p))
            .map(|p| p.uid)
            .collect();
        // ForgetNonExistingPodWorkers.
        let workers: Vec<PodUid> = self
            .pw
            .records
            .iter()
            .filter(|(_, s)| s.has_worker)
            .map(|(u, _)| *u)
            .collect();
        for uid in workers {
            if !desired.contains(&uid) {
                self.legacy_forget_worker(ctx, uid);
            }
        }
        self.probe_cleanup_pods_all(ctx, |u| desired.contains(&u));
        // Kill every running pod that is not desired.
        let running = self.legacy_runtime_pods(ctx);
        let running_uids: BTreeSet<PodUid> = running.iter().map(|p| p.uid).collect();
        // The volume manager lists the runtime's pods itself (`GetPods(false)`).
        let with_containers: BTreeSet<PodUid> = ctx
            .list_running_pods()
            .into_iter()
            .filter(|p| !p.containers.is_empty())
            .map(|p| p.uid)
            .collect();
        for rp in running {
            if desired.contains(&rp.uid) || self.legacy.pending.contains(&rp.uid) {
                continue;
            }
            ctx.reach(Reach::RuntimeOnlyPodKilled);
            ctx.emit(Transition::Note {
                uid: rp.uid,
                what: NoteKind::V121HousekeepingPodKiller,
            });
            self.pod_killer_kill(ctx, None, rp);
        }
        self.status_remove_orphans(&all_pods);
        // The volume manager: unmount the volumes of pods gone or terminated with no
        // container running.
        let unmount: Vec<PodUid> = self
            .mounted
            .iter()
            .copied()
            .filter(|uid| {
                let gone_or_terminated = all_pods
                    .get(uid)
                    .is_none_or(|p| self.legacy_pod_is_terminated(p));
                gone_or_terminated
                    && !with_containers.contains(uid)
                    && !self.legacy_skip_pending(*uid)
            })
            .collect();
        for uid in unmount {
            ctx.cri(Caller::Deletor, CriReq::UnmountVolumes { uid });
        }
        // cleanupOrphanedPodDirs.
        for (uid, mounted) in ctx.list_pod_dirs() {
            if all_pods.contains_key(&uid)
                || running_uids.contains(&uid)
                || self.legacy_skip_pending(uid)
                || mounted
            {
                continue;
            }
            ctx.cri(Caller::Deletor, CriReq::RemovePodDir { uid });
        }
        // cleanupOrphanedPodCgroups: cgroups of pods not active, once their volumes are gone.
        let mounted_dirs: BTreeSet<PodUid> = ctx
            .list_pod_dirs()
            .into_iter()
            .filter(|(_, m)| *m)
            .map(|(u, _)| u)
            .collect();
        for uid in cgroup_pods {
            if desired.contains(&uid)
                || self.legacy_skip_pending(uid)
                || mounted_dirs.contains(&uid)
            {
                continue;
            }
            ctx.cri(Caller::Deletor, CriReq::RemovePodCgroup { uid });
        }
        self.crash_backoff.gc(ctx.now());
        self.config.pods = all_pods;
    }

    /// The container garbage collector (`kuberuntime_gc.go`, with all sources ready): every
    /// dead container of a pod that is gone from config or terminated is removed. (The
    /// v1.31 port does not model container GC; the v1.21 design needs it, because only it
    /// removes containers that died before their pod was deleted, and v1.21 deletes a pod
    /// object only once no container of it is left.)
    pub(super) fn legacy_container_gc(&mut self, ctx: &mut Ctx) {
        let _ = ctx.after(CONTAINER_GC_PERIOD, KEv::LegacyContainerGc);
        if !self.config.sources_ready {
            return;
        }
        for uid in self.pleg.cached_uids() {
            let evictable = self
                .config
                .pods
                .get(&uid)
                .is_none_or(|p| self.legacy_pod_is_terminated(p));
            if !evictable {
                continue;
            }
            let Ok(status) = self.pleg.cache_get(uid) else {
                continue;
            };
            for c in &status.containers {
                if c.state == crate::model::RtState::Exited {
                    ctx.cri(Caller::Deletor, CriReq::RemoveContainer { uid, id: c.id });
                }
            }
        }
    }

    /// A reply to a call of the container deletor or the v1.21 orphan clean-up.
    pub(super) fn deletor_reply(&mut self, req: &CriReq, ok: bool) {
        if let (CriReq::UnmountVolumes { uid }, true) = (req, ok) {
            self.mounted.remove(uid);
        }
    }

    /// `canBeDeleted` (v1.21): a deletion timestamp, not a mirror pod, and
    /// `PodResourcesAreReclaimed`.
    pub(super) fn legacy_can_be_deleted(
        &self,
        pod: &ApiPod,
        status: &ApiPodStatus,
        cgroups: &BTreeSet<PodUid>,
    ) -> bool {
        pod.deletion_timestamp.is_some()
            && pod.mirror_of.is_none()
            && self.pod_resources_are_reclaimed(pod.uid, status, cgroups)
    }

    /// `PodResourcesAreReclaimed`: no running container in the status, no container left
    /// in the pod cache, no volumes, no pod cgroup.
    fn pod_resources_are_reclaimed(
        &self,
        uid: PodUid,
        status: &ApiPodStatus,
        cgroups: &BTreeSet<PodUid>,
    ) -> bool {
        if !not_running(&status.containers) {
            return false;
        }
        match self.pleg.cache_get(uid) {
            Ok(s) if s.containers.is_empty() => {}
            _ => return false,
        }
        !self.mounted.contains(&uid) && !cgroups.contains(&uid)
    }

    /// The container deletor's `removeAll` (v1.21 `cleanUpContainersInPod`): the pod is
    /// evicted, or deleted with no container running in its generated status.
    pub(super) fn legacy_remove_all_dead(&mut self, ctx: &mut Ctx, uid: PodUid) -> bool {
        let Some(pod) = self.config.pods.get(&uid).cloned() else {
            return false;
        };
        let evicted = pod.status.phase == crate::model::PodPhase::Failed
            && pod.status.reason.as_deref() == Some(super::eviction::REASON);
        // Switch `evictedPodContainersRemoved` off (before PR 45896): only deletion counts.
        if evicted && self.b.on(super::profile::Sw::EvictedPodContainersRemoved) {
            return true;
        }
        if pod.deletion_timestamp.is_none() {
            return false;
        }
        let Ok(rt) = self.pleg.cache_get(uid) else {
            return false;
        };
        let (api, _) = self.generate_api_pod_status_inner(&pod, &rt, false, ctx.now());
        not_running(&api.containers)
    }
}
