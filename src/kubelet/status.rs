//! The status manager and pod phase computation.
//!
//! Ports `pkg/kubelet/status/status_manager.go` (v1.31: `SetPodStatus`, `TerminatePod`,
//! `updateStatusInternal`, `syncBatch`, `syncPod`, `needsUpdate`, `needsReconcile`,
//! `canBeDeleted`, `mergePodStatus`) and, from `pkg/kubelet/kubelet_pods.go` (v1.31),
//! `getPhase`, `generateAPIPodStatus` and `convertToAPIContainerStatuses`.
//!
//! Also `SetContainerReadiness` and `SetContainerStartup` (probe results reaching the cache).
//!
//! Conditions are generated and merged in [`super::conditions`]; `ready` mirrors the Ready
//! condition. Where it deliberately differs: the
//! status thread handles one pod at a time (as upstream), with each API round trip
//! taking the scenario's `statusWriteDelay`. A static pod's status goes to its mirror pod.

pub(crate) use super::api_statuses::should_container_be_restarted;
use super::profile::Sw;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::uid_map::{UidMap, UidSet};
use crate::model::NoteKind;
use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, ApiPodStatus, PodPhase, PodSpec, PodUid,
    RestartPolicy, RtPodStatus, Transition,
};
use crate::sim::{Dur, SimTime};
use std::collections::VecDeque;
use std::sync::Arc;

#[derive(Clone, Debug)]
pub(crate) struct Versioned {
    /// Shared with the API object once written unchanged (copy on write).
    pub(crate) status: Arc<ApiPodStatus>,
    pub(crate) version: u64,
    pub(crate) pod_is_finished: bool,
    /// The pod's spec, for the namespace and name the status is fetched by.
    pub(crate) spec: Arc<PodSpec>,
}

/// The status manager's state.
#[derive(Clone, Debug, Default)]
pub(crate) struct StatusManager {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub(crate) b: crate::kubelet::profile::Behaviours,
    pub(crate) statuses: super::record_map::RecordMap<Versioned>,
    /// Indexed by UID (array look-ups), walked in UID order, as the trees before were.
    pub(crate) api_versions: UidMap<u64>,
    pub(super) queue: VecDeque<PodUid>,
    pub(super) queued: UidSet,
    pub(super) in_flight: Option<PodUid>,
    pub(super) signalled: bool,
    pub(crate) period: Dur,
    /// The UIDs `needsUpdate` could select, kept in step with every change so that the
    /// change-triggered batch costs only what changed (upstream scans every cached status;
    /// the result is the same, and debug builds check it against that full scan):
    /// `stale_unqueued` holds cached versions newer than the API's that are not queued;
    /// `finished_fresh` holds finished pods whose API copy is current (they need a write
    /// only once the pod can be deleted).
    pub(super) stale_unqueued: UidSet,
    pub(super) finished_fresh: UidSet,
    /// The UIDs that may have become orphans in the maps above since housekeeping's last
    /// check (a pod left config, or a status or API version was stored for a UID not in
    /// config). While none is noted, `RemoveOrphanedStatuses` has nothing to remove, and
    /// otherwise only the noted UIDs are looked at (debug builds check the maps in full).
    pub(crate) orphans_possible: super::status_sync::OrphanCandidates,
    /// Container names a first container status shares (see `RecentNames`).
    pub(super) recent_names: super::api_statuses::RecentNames,
}

impl StatusManager {
    pub(crate) fn new(period: Dur) -> Self {
        StatusManager {
            period,
            ..Default::default()
        }
    }
}

/// `hasPodInitialized` (`pkg/kubelet/status/status_manager.go`, v1.31), on the pod's status
/// as the API has it: a pod without init containers, one of whose regular containers ever
/// left Waiting, or whose last init container completed with exit code 0.
fn has_pod_initialized(pod: &ApiPod) -> bool {
    let Some(last) = pod.spec.init_containers.last() else {
        return true;
    };
    let st = &pod.status;
    if st
        .containers
        .iter()
        .any(|c| c.last_state.is_some() || !matches!(c.state, ApiContainerState::Waiting { .. }))
    {
        return true;
    }
    if st.init_containers.0.is_empty() {
        return false;
    }
    let Some(c) = st.init_containers.0.iter().find(|c| *c.name == *last.name) else {
        return false;
    };
    let exit0 =
        |s: &ApiContainerState| matches!(s, ApiContainerState::Terminated { exit_code: 0, .. });
    match &c.last_state {
        Some(l @ ApiContainerState::Terminated { .. }) => exit0(l),
        _ => exit0(&c.state),
    }
}

/// `initializedContainers` (same file): how many init container statuses, from the first,
/// up to the last one that left Waiting or has a terminated last state (at least one).
fn initialized_containers(statuses: &[ApiContainerStatus]) -> usize {
    statuses
        .iter()
        .rposition(|c| {
            !matches!(c.state, ApiContainerState::Waiting { .. })
                || matches!(c.last_state, Some(ApiContainerState::Terminated { .. }))
        })
        .map_or(statuses.len().min(1), |i| i + 1)
}

/// `getPhase` (`pkg/kubelet/kubelet_pods.go`, v1.31, `SidecarContainers` on): classic init
/// containers not done keep the pod `Pending` (one that failed under `Never` makes it
/// `Failed`); sidecars count as running containers (a stopped sidecar counts for nothing),
/// and one not yet started keeps the pod `Pending` until a regular container has started.
pub(crate) fn get_phase(
    pod: &ApiPod,
    statuses: &[ApiContainerStatus],
    init_statuses: &[ApiContainerStatus],
    pod_is_terminal: bool,
) -> PodPhase {
    let (mut pending_init, mut failed_init) = (0, 0);
    let (mut running, mut waiting, mut stopped, mut succeeded, mut unknown) = (0, 0, 0, 0, 0);
    let last_failed = |s: &ApiContainerStatus| matches!(s.last_state, Some(ApiContainerState::Terminated { exit_code, .. }) if exit_code != 0);
    let restarted =
        |s: &ApiContainerStatus| matches!(s.last_state, Some(ApiContainerState::Terminated { .. }));
    for c in &pod.spec.init_containers {
        let s = init_statuses.iter().find(|s| *s.name == *c.name);
        match (c.is_sidecar(), s.map(|s| &s.state)) {
            (false, None) => pending_init += 1,
            (false, Some(ApiContainerState::Running { .. })) => pending_init += 1,
            (false, Some(ApiContainerState::Terminated { exit_code, .. })) => {
                failed_init += usize::from(*exit_code != 0)
            }
            (false, Some(ApiContainerState::Waiting { .. })) => match s {
                Some(s) if restarted(s) => failed_init += usize::from(last_failed(s)),
                _ => pending_init += 1,
            },
            (true, None) => {
                pending_init += 1;
                unknown += 1;
            }
            (true, Some(ApiContainerState::Running { .. })) => {
                pending_init += usize::from(!s.is_some_and(|s| s.started));
                running += 1;
            }
            (true, Some(ApiContainerState::Terminated { .. })) => {}
            (true, Some(ApiContainerState::Waiting { .. })) => {
                if !s.is_some_and(restarted) {
                    pending_init += 1;
                    waiting += 1;
                }
            }
        }
    }
    let mut regular_started = false;
    for c in &pod.spec.containers {
        match statuses.iter().find(|s| *s.name == *c.name) {
            None => unknown += 1,
            Some(s) => match &s.state {
                ApiContainerState::Running { .. } => {
                    running += 1;
                    regular_started = true;
                }
                ApiContainerState::Terminated { exit_code, .. } => {
                    stopped += 1;
                    regular_started = true;
                    if *exit_code == 0 {
                        succeeded += 1;
                    }
                }
                ApiContainerState::Waiting { .. } => {
                    if matches!(s.last_state, Some(ApiContainerState::Terminated { .. })) {
                        stopped += 1;
                    } else {
                        waiting += 1;
                    }
                }
            },
        }
    }
    if failed_init > 0 && pod.spec.restart_policy == RestartPolicy::Never {
        return PodPhase::Failed;
    }
    if (pending_init > 0 && !regular_started) || waiting > 0 {
        return PodPhase::Pending;
    }
    if running > 0 && unknown == 0 {
        return PodPhase::Running;
    }
    if running == 0 && stopped > 0 && unknown == 0 {
        if pod_is_terminal && !pod.static_pod {
            return if stopped == succeeded {
                PodPhase::Succeeded
            } else {
                PodPhase::Failed
            };
        }
        return match pod.spec.restart_policy {
            RestartPolicy::Always => PodPhase::Running,
            _ if stopped == succeeded => PodPhase::Succeeded,
            RestartPolicy::Never => PodPhase::Failed,
            RestartPolicy::OnFailure => PodPhase::Running,
        };
    }
    PodPhase::Pending
}

/// `mergePodStatus`: hold back a terminal phase while containers could still run.
pub(crate) fn merge_pod_status(
    old: &ApiPodStatus,
    new: &ApiPodStatus,
    could_have_running: bool,
) -> ApiPodStatus {
    let mut out = new.clone();
    out.conditions = super::conditions::merge(old, new, could_have_running);
    if !old.phase.is_terminal() && new.phase.is_terminal() && could_have_running {
        out.phase = old.phase;
        out.reason.clone_from(&old.reason);
        out.message.clone_from(&old.message);
    }
    if out.phase.is_terminal() {
        super::conditions::force_not_ready_when_terminal(&mut out);
        out.ready = false;
        for c in out.all_statuses_mut() {
            c.ready = false;
        }
    }
    out
}

impl Kubelet {
    /// `generateAPIPodStatus(pod, podStatus, podIsTerminal)`, including the prober's
    /// `UpdatePodStatus` (which may trigger readiness probes at once).
    pub(crate) fn generate_api_pod_status(
        &mut self,
        ctx: &mut Ctx,
        pod: &ApiPod,
        rt: &RtPodStatus,
        pod_is_terminal: bool,
    ) -> ApiPodStatus {
        let now = ctx.now();
        let (status, trigger) = self.generate_api_pod_status_inner(pod, rt, pod_is_terminal, now);
        for key in trigger {
            self.probe_worker_trigger(ctx, &key);
        }
        status
    }

    pub(super) fn generate_api_pod_status_inner(
        &self,
        pod: &ApiPod,
        rt: &RtPodStatus,
        pod_is_terminal: bool,
        now: SimTime,
    ) -> (ApiPodStatus, Vec<crate::kubelet::prober::ProbeKey>) {
        let old = self
            .status
            .statuses
            .get(&pod.uid)
            .map(|v| &v.status)
            .unwrap_or(&pod.status);
        // convertToAPIContainerStatuses, for the regular and the init containers (both
        // waiting as PodInitializing, not ContainerCreating, in a pod with init containers).
        let default_reason = if pod.spec.init_containers.is_empty() {
            "ContainerCreating"
        } else {
            "PodInitializing"
        };
        let mut statuses = self.convert_statuses(
            pod,
            rt,
            &old.containers,
            &pod.spec.containers,
            default_reason,
        );
        let mut init_statuses = self.convert_statuses(
            pod,
            rt,
            &old.init_containers.0,
            &pod.spec.init_containers,
            default_reason,
        );
        let mut trigger = self.probe_update_pod_status(pod.uid, &mut statuses);
        trigger.extend(self.probe_update_pod_status(pod.uid, &mut init_statuses));
        // The prober manager's UpdatePodStatus (v1.31 `prober_manager.go`): a classic init
        // container that exited 0 is ready (what the Initialized condition counts).
        for (s, c) in init_statuses.iter_mut().zip(&pod.spec.init_containers) {
            if !c.is_sidecar()
                && matches!(s.state, ApiContainerState::Terminated { exit_code: 0, .. })
            {
                s.ready = true;
            }
        }
        // Before PR 115331 (v1.27) getPhase had no podIsTerminal: a stopped RestartPolicy
        // Always pod was Running even at the end of its termination (see
        // `Sw::PodDeletedOnlyWhenTerminal`, the same PR, false on the profiles before v1.27).
        let pod_is_terminal = pod_is_terminal && self.status.b.on(Sw::PodDeletedOnlyWhenTerminal);
        let mut phase = get_phase(pod, &statuses, &init_statuses, pod_is_terminal);
        if !phase.is_terminal() {
            // The three-way merge of PR 105462: a terminal phase the status manager holds
            // wins over the recomputed one. Without it (v1.22.0) only the API's copy does.
            if old.phase.is_terminal() && self.status.b.on(Sw::TerminalPhaseKept) {
                phase = old.phase;
            } else if pod.status.phase.is_terminal() {
                phase = pod.status.phase;
            }
        }
        let (mut reason, mut message) = (None, None);
        if phase == old.phase {
            reason = old.reason.clone().or_else(|| pod.status.reason.clone());
            message = old.message.clone().or_else(|| pod.status.message.clone());
        }
        // The active-deadline handler's ShouldEvict (`active_deadline.go`, v1.31) overrides
        // phase, reason and message; the API server's terminal phase still wins below.
        if self.past_active_deadline(pod, now) {
            phase = PodPhase::Failed;
            reason = Some(super::active_deadline::REASON.to_owned());
            message = Some(super::active_deadline::MESSAGE.to_owned());
        }
        if pod.status.phase.is_terminal() && phase != pod.status.phase {
            phase = pod.status.phase;
        }
        let conditions = super::conditions::generate(
            pod,
            old,
            rt,
            &statuses,
            &init_statuses,
            phase,
            self.status.b.on(Sw::ReadyToStartContainersCondition),
        );
        let ready = conditions.is_true(&crate::model::PodConditionType::Ready);
        let start_time = old.start_time.or(Some(pod.created_at.max(pod.created_at)));
        let status = ApiPodStatus {
            phase,
            reason,
            message,
            ready,
            start_time,
            containers: statuses,
            init_containers: crate::model::InitStatuses(init_statuses),
            conditions,
        };
        (status, trigger)
    }

    /// `SetContainerReadiness`: a readiness result changed; update the cached container
    /// status and the pod's Ready condition.
    pub(crate) fn set_container_readiness(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        id: crate::model::ContainerId,
        ready: bool,
    ) {
        self.set_container_flag(ctx, uid, id, |c| &mut c.ready, ready, true);
    }

    /// `SetContainerStartup`: a startup result changed.
    pub(crate) fn set_container_startup(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        id: crate::model::ContainerId,
        started: bool,
    ) {
        self.set_container_flag(ctx, uid, id, |c| &mut c.started, started, false);
    }

    /// Set one flag of a cached container status (found by container ID) and write the
    /// status if it changed; with `readiness`, the pod's Ready and ContainersReady conditions
    /// are regenerated (`SetContainerReadiness`; `SetContainerStartup` leaves them).
    fn set_container_flag(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        id: crate::model::ContainerId,
        flag: fn(&mut ApiContainerStatus) -> &mut bool,
        value: bool,
        readiness: bool,
    ) {
        let Some(pod) = self.config.pods.get(&uid).cloned() else {
            return;
        };
        let Some(v) = self.status.statuses.get(&uid) else {
            return;
        };
        let mut status = ApiPodStatus::clone(&v.status);
        let Some(c) = status
            .all_statuses_mut()
            .find(|c| c.container_id == Some(id))
        else {
            return;
        };
        if *flag(c) == value {
            return;
        }
        *flag(c) = value;
        if readiness {
            super::conditions::refresh_readiness(&pod.spec, &mut status);
        }
        let _ = self.update_status_internal(ctx, &pod, status, false, false);
    }

    /// `SetPodStatus`.
    pub(crate) fn set_pod_status(&mut self, ctx: &mut Ctx, pod: &ApiPod, status: ApiPodStatus) {
        let _ = self.set_pod_status_unchanged(ctx, pod, status);
    }

    /// `SetPodStatus`, returning whether the status equalled the cached one (nothing
    /// written, nothing emitted).
    pub(super) fn set_pod_status_unchanged(
        &mut self,
        ctx: &mut Ctx,
        pod: &ApiPod,
        status: ApiPodStatus,
    ) -> bool {
        let force = pod.deletion_timestamp.is_some();
        self.update_status_internal(ctx, pod, status, force, false)
    }

    /// `TerminatePod`: the final status, with `podIsFinished`.
    pub(crate) fn terminate_pod_status(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        let mut status = self
            .status
            .statuses
            .get(&pod.uid)
            .map_or_else(|| &pod.status, |v| &v.status)
            .as_ref()
            .clone();
        if status.containers.iter().any(|c| !c.state.is_terminated()) {
            ctx.reach(crate::model::reach::Reach::TerminatePodWithUnterminatedContainer);
        }
        if !self.status.b.on(Sw::UnknownExitCodeIs137) {
            // Before PR 88440 (v1.17): every container status, terminated ones included,
            // became a default Terminated state (exit code 0, no reason); the container
            // ID and last state stay.
            for c in &mut status.containers {
                c.state = ApiContainerState::Terminated {
                    exit_code: 0,
                    reason: "",
                    started_at: None,
                    finished_at: None,
                };
            }
        }
        // v1.31: once the pod has initialized, a regular container without a terminated
        // state is reported failed (137, ContainerStatusUnknown); so is each init container
        // up to the last one that ever left Waiting (the ones after it never started and
        // stay Waiting).
        let unknown = |c: &mut ApiContainerStatus| {
            if !c.state.is_terminated() {
                c.state = ApiContainerState::Terminated {
                    exit_code: 137,
                    reason: "ContainerStatusUnknown",
                    started_at: None,
                    finished_at: None,
                };
            }
        };
        if has_pod_initialized(pod) {
            status.containers.iter_mut().for_each(unknown);
        }
        let n = initialized_containers(&status.init_containers.0);
        status
            .init_containers
            .0
            .iter_mut()
            .take(n)
            .for_each(unknown);
        // Static pods are not given a terminal phase here (upstream TODO 116484); before
        // PR 115331 (v1.27) no pod was (`podDeletedOnlyWhenTerminal`).
        let force_phase = self.status.b.on(Sw::PodDeletedOnlyWhenTerminal);
        if !status.phase.is_terminal() && !pod.static_pod && force_phase {
            status.phase = PodPhase::Failed;
        }
        let _ = self.update_status_internal(ctx, pod, status, true, true);
    }

    /// `updateStatusInternal`. Returns true when it returned because the status equals
    /// the cached one (by kubelet) and nothing was written or emitted.
    pub(super) fn update_status_internal(
        &mut self,
        ctx: &mut Ctx,
        pod: &ApiPod,
        mut status: ApiPodStatus,
        force: bool,
        finished: bool,
    ) -> bool {
        let uid = pod.uid;
        let old = self.status.statuses.get(&uid);
        // Precondition: what the cache holds before the write, for the rules checked after.
        let before = old.map(|v| (v.version, v.status.phase, v.pod_is_finished));
        assert!(
            before.is_none_or(|(version, _, _)| version >= 1),
            "status manager rule broken: a cached status has a version (from 1)"
        );
        let old_status = old.map(|v| &v.status).unwrap_or(&pod.status);
        // Terminated containers may not become non-terminated, unless the policy restarts them.
        for o in &old_status.containers {
            if let ApiContainerState::Terminated { exit_code, .. } = o.state {
                if let Some(n) = status.containers.iter().find(|n| n.name == o.name) {
                    if !n.state.is_terminated() {
                        let allowed = match pod.spec.restart_policy {
                            RestartPolicy::Always => true,
                            RestartPolicy::OnFailure => exit_code != 0,
                            RestartPolicy::Never => false,
                        };
                        if !allowed {
                            ctx.emit(Transition::Note {
                                uid,
                                what: NoteKind::StatusRejectedWouldRestart,
                            });
                            return false;
                        }
                    }
                }
            }
        }
        if status.start_time.is_none() || old_status.start_time.is_some() {
            status.start_time = old_status.start_time.or(status.start_time);
        }
        let pod_is_finished = finished || old.is_some_and(|v| v.pod_is_finished);
        if let Some(v) = old {
            if !force
                && super::conditions::equal_by_kubelet(&v.status, &status)
                && v.pod_is_finished == pod_is_finished
            {
                return true;
            }
        }
        let phase_changed = old.is_none_or(|v| v.status.phase != status.phase);
        let version = old.map_or(1, |v| v.version + 1);
        // One allocation per distinct status: an unchanged status (a forced write) keeps
        // the cached one, and a status equal to the API object's shares the object's.
        let status = match old {
            Some(v) if *v.status == status => Arc::clone(&v.status),
            _ if *pod.status == status => Arc::clone(&pod.status),
            _ => Arc::new(status),
        };
        if phase_changed {
            ctx.emit(Transition::LocalStatus {
                uid,
                phase: status.phase,
            });
        }
        if !self.config.pods.contains_key(&uid) {
            self.status.orphans_possible.note(uid);
        }
        self.status.statuses.insert(
            uid,
            Versioned {
                status,
                version,
                pod_is_finished,
                spec: Arc::clone(&pod.spec),
            },
        );
        self.probe_status_changed(uid);
        self.assert_status_write(uid, before);
        self.status_recheck(uid);
        if !self.status.signalled {
            self.status.signalled = true;
            let _ = ctx.after(Dur::ZERO, KEv::StatusSignal);
        }
        false
    }

    /// The rules of a status write (the postcondition of `updateStatusInternal`): the
    /// version grows by one, `podIsFinished` is never taken back, and, with the terminal
    /// phase kept (switch `terminalPhaseKept`, PR 105462), a terminal phase in the cache
    /// is never replaced by a non-terminal one. (Without the switch, v1.22.0, Failed can go
    /// back to Running: issue 105358.)
    fn assert_status_write(&self, uid: PodUid, before: Option<(u64, PodPhase, bool)>) {
        let v = &self.status.statuses[&uid];
        let Some((version, phase, finished)) = before else {
            assert_eq!(
                v.version, 1,
                "status manager rule broken: a first cached status has version 1 ({uid})"
            );
            return;
        };
        assert_eq!(
            v.version,
            version + 1,
            "status manager rule broken: a status version only grows, by one per write ({uid})"
        );
        assert!(
            !finished || v.pod_is_finished,
            "status manager rule broken: podIsFinished is never taken back ({uid})"
        );
        assert!(
            !(phase.is_terminal() && self.status.b.on(Sw::TerminalPhaseKept))
                || v.status.phase.is_terminal(),
            "status manager rule broken: with terminalPhaseKept a terminal phase in the cache \
             is never replaced by a non-terminal one ({uid}: {phase:?} -> {:?})",
            v.status.phase
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodSpec};
    use crate::sim::SimTime;

    fn pod(policy: RestartPolicy, n: usize) -> ApiPod {
        let c = (0..n)
            .map(|i| ContainerSpec::named(&format!("c{i}"), "img"))
            .collect();
        ApiPod::new(PodUid(1), PodSpec::new("p", "default", policy, c))
    }

    fn st(name: &str, state: ApiContainerState) -> ApiContainerStatus {
        ApiContainerStatus {
            name: name.into(),
            state,
            last_state: None,
            restart_count: 0,
            ready: false,
            started: false,
            container_id: None,
        }
    }

    fn term(code: i32) -> ApiContainerState {
        ApiContainerState::Terminated {
            exit_code: code,
            reason: "",
            started_at: None,
            finished_at: None,
        }
    }

    #[test]
    fn terminate_pod_marks_only_started_containers_unknown() {
        let wait = || ApiContainerState::Waiting {
            reason: "PodInitializing",
        };
        let running = ApiContainerState::Running {
            started_at: SimTime::ZERO,
        };
        // initializedContainers: up to the last init container that left Waiting.
        let l = |v: Vec<ApiContainerStatus>| initialized_containers(&v);
        assert_eq!(
            l(vec![
                st("a", term(0)),
                st("b", running.clone()),
                st("c", wait())
            ]),
            2
        );
        assert_eq!(l(vec![st("a", wait()), st("b", wait())]), 1);
        assert_eq!(l(vec![]), 0);
        // hasPodInitialized: no init containers, or a regular container left Waiting, or
        // the last init container completed with 0.
        let mut p = pod(RestartPolicy::Always, 1);
        assert!(has_pod_initialized(&p));
        let mut spec = (*p.spec).clone();
        spec.init_containers = vec![ContainerSpec::named("i0", "img:1")].into();
        p.spec = std::sync::Arc::new(spec);
        Arc::make_mut(&mut p.status).containers = vec![st("c0", wait())];
        Arc::make_mut(&mut p.status).init_containers.0 = vec![st("i0", running)];
        assert!(!has_pod_initialized(&p));
        Arc::make_mut(&mut p.status).init_containers.0 = vec![st("i0", term(0))];
        assert!(has_pod_initialized(&p));
    }

    #[test]
    fn get_phase_follows_upstream_order() {
        let running = ApiContainerState::Running {
            started_at: SimTime(1),
        };
        let p = pod(RestartPolicy::Always, 2);
        assert_eq!(
            get_phase(
                &p,
                &[st("c0", running.clone()), st("c1", running.clone())],
                &[],
                false
            ),
            PodPhase::Running
        );
        assert_eq!(
            get_phase(&p, &[st("c0", running.clone())], &[], false),
            PodPhase::Pending
        );
        assert_eq!(
            get_phase(&p, &[st("c0", term(0)), st("c1", term(1))], &[], false),
            PodPhase::Running
        );
        assert_eq!(
            get_phase(&p, &[st("c0", term(0)), st("c1", term(1))], &[], true),
            PodPhase::Failed
        );
        let p = pod(RestartPolicy::Never, 2);
        assert_eq!(
            get_phase(&p, &[st("c0", term(0)), st("c1", term(0))], &[], false),
            PodPhase::Succeeded
        );
        assert_eq!(
            get_phase(&p, &[st("c0", term(0)), st("c1", term(2))], &[], false),
            PodPhase::Failed
        );
        let p = pod(RestartPolicy::OnFailure, 1);
        assert_eq!(
            get_phase(&p, &[st("c0", term(2))], &[], false),
            PodPhase::Running
        );
        assert_eq!(
            get_phase(&p, &[st("c0", term(0))], &[], false),
            PodPhase::Succeeded
        );
        let waiting = ApiContainerState::Waiting {
            reason: "ContainerCreating",
        };
        assert_eq!(
            get_phase(&p, &[st("c0", waiting)], &[], false),
            PodPhase::Pending
        );
    }

    #[test]
    fn merge_holds_back_terminal_phase_while_containers_could_run() {
        let old = ApiPodStatus {
            phase: PodPhase::Running,
            ..Default::default()
        };
        let new = ApiPodStatus {
            phase: PodPhase::Failed,
            reason: Some("Evicted".into()),
            ..Default::default()
        };
        assert_eq!(merge_pod_status(&old, &new, true).phase, PodPhase::Running);
        let m = merge_pod_status(&old, &new, false);
        assert_eq!(
            (m.phase, m.reason.as_deref()),
            (PodPhase::Failed, Some("Evicted"))
        );
    }
}
