//! The pod worker's sync functions as multi-step operations: `SyncPod`,
//! `SyncTerminatingPod`, `SyncTerminatingRuntimePod` and `SyncTerminatedPod`, together with
//! the parts of the runtime manager they drive (`computePodActions`, runtime `SyncPod`,
//! `KillPod`/`killContainersWithSyncResult`, `killContainer`, `doBackOff`,
//! `startContainer`).
//!
//! Follows `pkg/kubelet/kubelet.go` (v1.31), `pkg/kubelet/kuberuntime/kuberuntime_manager.go`
//! and `kuberuntime_container.go` (v1.31). Each CRI call is a request and a reply event, so
//! other components run while a sync waits on the runtime.
//!
//! Where it deliberately follows upstream's effective rather than intended behaviour:
//! a start skipped for crash-loop back-off makes `SyncPod` return an error (upstream issue
//! 123602: the filter meant to hide back-off errors never matches), so the worker retries
//! after 10-15 s. Running containers whose liveness or startup result is `Failure` are
//! killed one at a time in container order (upstream walks a Go map) and restarted unless
//! the policy is `Never`. Init containers and sidecars: `init_containers.rs` (the actions),
//! `kill_order.rs` (sidecar termination order); a start step's `idx` counts the init
//! containers first, then the app containers. PostStart hooks: `hooks.rs`. Not modelled
//! yet: ephemeral containers, spec-hash changes, volumes (mount/unmount are
//! instantaneous).

use super::init_containers::{compute_init_container_actions, has_any_regular_container_created};
use super::pod_workers::{StatusFn, SyncError, Work, WorkType};
use super::prober::{ProbeManager, ProbeResult};
use super::profile::Sw;
use super::status::should_container_be_restarted;
use super::status_memo::{Found, MemoHit};
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::{
    ApiPod, ApiPodStatus, ContainerId, PodPhase, PodUid, ProbeType, RestartPolicy, RtPodStatus,
    RtState, RunningPod, SandboxId, Transition,
};
use crate::model::{NoteKind, PullPolicy};
use crate::sim::SimTime;
use crate::world::cri::CriReq;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

/// `minimumGracePeriodInSeconds`.
pub(crate) const MIN_CONTAINER_GRACE: i64 = 2;
/// Which sync operation (a word of the trace vocabulary).
pub(crate) use crate::model::SyncKind;

/// One runtime step of a plan.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// Kill every listed container in parallel, then stop the sandboxes in order. Boxed:
    /// a plan's other steps are a few bytes, and every slot of the plan's deque is as
    /// large as its largest step.
    KillPod(Box<KillPlan>),
    CreateSandbox {
        attempt: u32,
    },
    StartContainer {
        idx: usize,
    },
    /// `SyncTerminatingPod` steps 5-8: a direct `GetPodStatus`, then the terminal status.
    VerifyStopped,
    /// `WaitForAttachAndMount` (with the pod data dirs and cgroup).
    MountVolumes,
    /// `SyncTerminatedPod`: the volume manager unmounts the pod's volumes.
    UnmountVolumes,
    /// `SyncTerminatedPod`: destroy the pod cgroup.
    RemovePodCgroup,
    /// `SyncTerminatedPod`: unregister secrets and configmaps, `TerminatePod`, done.
    FinishTerminated,
}

// Every in-flight operation's plan holds slots of this size.
const _: () = assert!(std::mem::size_of::<Step>() <= 16);

/// The payload of [`Step::KillPod`].
#[derive(Clone, Debug)]
pub(super) struct KillPlan {
    pub(super) containers: Vec<(ContainerId, String)>,
    pub(super) sandboxes: Vec<SandboxId>,
    pub(super) grace_override: Option<i64>,
    /// The probe whose failure the kill is for (`reasonLivenessProbe` and so on).
    pub(super) reason: Option<ProbeType>,
}

#[derive(Clone, Debug)]
pub(super) enum KillStage {
    PreStop {
        started: SimTime,
        grace: i64,
        /// Before PR 115835 (`graceOverrideBeforePreStop` off): the override that replaces
        /// the grace left after the hook.
        then: Option<i64>,
    },
    /// A sidecar waiting for its turn (`kill_order.rs`) with this much grace left.
    WaitTurn {
        started: SimTime,
        grace: i64,
    },
    Stopping,
}

#[derive(Clone, Debug)]
pub(super) struct KillState {
    pub(super) pending: BTreeMap<ContainerId, KillStage>,
    pub(super) sandboxes: VecDeque<SandboxId>,
    pub(super) errors: Vec<String>,
    /// What each container waits for before its stop (sidecar termination ordering).
    pub(super) order: BTreeMap<ContainerId, Vec<ContainerId>>,
    /// Containers whose `StopContainer` failed: never marked terminated for the ordering.
    pub(super) unstopped: Vec<ContainerId>,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum StartStage {
    Pull,
    Create,
    Start,
    /// The container runs and its postStart hook is in flight (`hooks.rs`).
    PostStart,
}

/// An in-flight sync operation of one pod worker.
#[derive(Clone, Debug)]
pub(crate) struct Op {
    pub(crate) id: u64,
    pub(crate) kind: SyncKind,
    pub(crate) work: Work,
    pub(super) pod: Arc<ApiPod>,
    pub(super) status: Arc<RtPodStatus>,
    pub(super) plan: VecDeque<Step>,
    /// Boxed: most parked operations are not kills (a start waits far longer).
    pub(super) kill: Option<Box<KillState>>,
    pub(super) start: Option<(usize, StartStage)>,
    pub(super) sandbox: Option<SandboxId>,
    pub(super) errors: Vec<String>,
    /// How many of `errors` are crash-loop back-off errors (`do_back_off`): their class is
    /// known where they are made (see [`SyncError`]), so an operation that failed with
    /// those alone is not classified by its message.
    pub(super) back_off_errors: usize,
    /// Errors that end the operation at once (kill failures, sandbox failures).
    pub(super) fatal: Option<String>,
    pub(super) grace: Option<i64>,
    /// A kill run by the v1.21 pod killer, not by the pod worker (`legacy.rs`).
    pub(super) killer: bool,
}

impl Op {
    /// Whether the operation is waiting for an image pull.
    pub(super) fn is_pulling(&self) -> bool {
        matches!(self.start, Some((_, StartStage::Pull)))
    }

    /// A new operation with an empty plan.
    pub(super) fn new(
        id: u64,
        kind: SyncKind,
        work: Work,
        pod: Arc<ApiPod>,
        status: Arc<RtPodStatus>,
        grace: Option<i64>,
    ) -> Self {
        Op {
            id,
            kind,
            work,
            pod,
            status,
            plan: VecDeque::new(),
            kill: None,
            start: None,
            sandbox: None,
            errors: Vec::new(),
            back_off_errors: 0,
            fatal: None,
            grace,
            killer: false,
        }
    }
}

/// The actions `computePodActions` decides.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PodActions {
    pub(crate) kill_pod: bool,
    pub(crate) create_sandbox: bool,
    pub(crate) attempt: u32,
    pub(crate) sandbox: Option<SandboxId>,
    pub(crate) containers_to_start: Vec<usize>,
    /// Init containers (and sidecars) to start, by index in `spec.init_containers`.
    pub(crate) init_containers_to_start: Vec<usize>,
    /// Running containers to kill first: (id, name, the probe that failed).
    pub(crate) containers_to_kill: Vec<(ContainerId, String, ProbeType)>,
}

/// The image-pull back-off key of a pod's image: `uid_image` (the `Display` form of the
/// UID), built in one sized buffer.
pub(super) fn image_backoff_key(uid: PodUid, image: &str) -> String {
    let mut key = String::with_capacity(image.len() + 16);
    uid.push_to(&mut key);
    key.push('_');
    key.push_str(image);
    key
}

/// `podSandboxChanged`: (changed, attempt, sandbox id).
pub(super) fn pod_sandbox_changed(status: &RtPodStatus) -> (bool, u32, Option<SandboxId>) {
    let Some(newest) = status.sandboxes.first() else {
        return (true, 0, None);
    };
    let ready = status.sandboxes.iter().filter(|s| s.ready).count();
    if ready > 1 || !newest.ready {
        return (true, newest.attempt + 1, Some(newest.id));
    }
    (false, newest.attempt, Some(newest.id))
}

/// `computePodActions` for regular containers, without probe results.
#[cfg(test)]
pub(crate) fn compute_pod_actions(pod: &ApiPod, status: &RtPodStatus) -> PodActions {
    compute_pod_actions_with_probes(pod, status, None, true, Vec::new())
}

/// `computePodActions`, reading liveness and startup results: the sandbox, then the init
/// containers and sidecars (`init_containers.rs`), then the regular containers once the pod
/// is initialized. `init_rerun_guard`: switch `initContainersNotRerunAfterAppStart`.
/// `to_start`: an empty buffer for `containers_to_start` (a kept one: no allocation).
pub(crate) fn compute_pod_actions_with_probes(
    pod: &ApiPod,
    status: &RtPodStatus,
    probes: Option<&ProbeManager>,
    init_rerun_guard: bool,
    to_start: Vec<usize>,
) -> PodActions {
    debug_assert!(to_start.is_empty(), "a kept start list is empty");
    let (changed, attempt, sandbox) = pod_sandbox_changed(status);
    let mut a = PodActions {
        kill_pod: changed,
        create_sandbox: changed,
        attempt,
        sandbox,
        containers_to_start: to_start,
        ..Default::default()
    };
    if changed {
        return actions_for_new_sandbox(pod, status, a);
    }
    // Without init containers the walk finds nothing to start or kill and the pod counts
    // as initialized: only a pod that declares some takes it (out of line).
    if !pod.spec.init_containers.is_empty()
        && !init_container_actions_into(&mut a, pod, status, probes, init_rerun_guard)
    {
        return a;
    }
    let mut keep = 0;
    for (i, c) in pod.spec.containers.iter().enumerate() {
        let s = match status.find(&c.name) {
            Some(s) if s.state == RtState::Running => s,
            _ => {
                if should_container_be_restarted(&c.name, pod, status) {
                    a.containers_to_start.push(i);
                }
                continue;
            }
        };
        let failed = |kind: ProbeType| {
            probes.and_then(|p| p.results(kind).get(s.id)) == Some(ProbeResult::Failure)
        };
        let reason = if failed(ProbeType::Liveness) {
            ProbeType::Liveness
        } else if failed(ProbeType::Startup) {
            ProbeType::Startup
        } else {
            keep += 1;
            continue;
        };
        if pod.spec.restart_policy != RestartPolicy::Never {
            a.containers_to_start.push(i);
        }
        a.containers_to_kill.push((s.id, c.name.clone(), reason));
    }
    if keep == 0 && a.containers_to_start.is_empty() {
        a.kill_pod = true;
        // Sidecars alone do not keep a pod alive.
        a.init_containers_to_start.clear();
    }
    a
}

/// `computeInitContainerActions` for a pod with init containers, into the actions: false
/// when the walk decides alone (the pod is to be killed, or is not initialized yet).
/// Out of line, so the sync of a pod without init containers stays a short run of code.
#[inline(never)]
fn init_container_actions_into(
    a: &mut PodActions,
    pod: &ApiPod,
    status: &RtPodStatus,
    probes: Option<&ProbeManager>,
    init_rerun_guard: bool,
) -> bool {
    let init = compute_init_container_actions(pod, status, probes, init_rerun_guard);
    a.init_containers_to_start = init.to_start;
    a.containers_to_kill = init.to_kill;
    if init.kill_pod || !init.initialized {
        a.kill_pod = init.kill_pod;
        return false;
    }
    true
}

/// `computePodActions` when the sandbox changed (a new pod, or its sandbox died): the
/// containers to start in a new sandbox, or a kill alone. Out of line: rare.
#[cold]
#[inline(never)]
fn actions_for_new_sandbox(pod: &ApiPod, status: &RtPodStatus, mut a: PodActions) -> PodActions {
    let attempt = a.attempt;
    let restart_on_failure = pod.spec.restart_policy != RestartPolicy::Never;
    if !restart_on_failure && attempt != 0 && !status.containers.is_empty() {
        a.create_sandbox = false;
        return a;
    }
    for (i, c) in pod.spec.containers.iter().enumerate() {
        let succeeded = status
            .find(&c.name)
            .is_some_and(|s| s.state == RtState::Exited && s.exit_code == 0);
        if pod.spec.restart_policy == RestartPolicy::OnFailure && succeeded {
            continue;
        }
        a.containers_to_start.push(i);
    }
    if a.containers_to_start.is_empty()
        && (pod.spec.init_containers.is_empty() || has_any_regular_container_created(pod, status))
    {
        a.create_sandbox = false;
        return a;
    }
    // A new sandbox starts over from the first init container.
    if !pod.spec.init_containers.is_empty() {
        a.containers_to_start.clear();
        a.init_containers_to_start = vec![0];
    }
    a
}

/// `ConvertPodStatusToRunningPod`: running containers and every sandbox.
pub(super) fn running_pod_from(
    status: &RtPodStatus,
) -> (Vec<(ContainerId, String)>, Vec<SandboxId>) {
    (
        status
            .running()
            .map(|c| (c.id, String::from(&*c.name)))
            .collect(),
        status.sandboxes.iter().map(|s| s.id).collect(),
    )
}

pub(super) fn apply_status_fn(status: &mut ApiPodStatus, f: &StatusFn) {
    match f {
        StatusFn::SetTerminal {
            phase,
            reason,
            message,
            disruption_target,
        } => {
            status.phase = *phase;
            status.reason = Some(reason.clone());
            status.message = Some(message.clone());
            if *disruption_target {
                let c = super::conditions::disruption_target(message);
                status.conditions.replace_or_append(c);
            }
        }
        StatusFn::FailedUnlessSucceeded {
            reason,
            message,
            disruption_target,
        } => {
            if status.phase != PodPhase::Succeeded {
                status.phase = PodPhase::Failed;
            }
            status.reason = Some(reason.clone());
            status.message = Some(message.clone());
            if *disruption_target {
                let c = super::conditions::disruption_target(message);
                status.conditions.replace_or_append(c);
            }
        }
        StatusFn::ReasonOnly { reason, message } => {
            status.reason = Some(reason.clone());
            status.message = Some(message.clone());
        }
    }
}

/// The largest error text kept for reuse (bytes): a crash-loop message is some sixty
/// bytes and a container name.
const SPARE_MESSAGE_BYTES: usize = 160;

impl Kubelet {
    /// Keep an ended operation's error text (emptied) for the next crash-loop error,
    /// unless the kept one is as large or this one is over [`SPARE_MESSAGE_BYTES`].
    pub(super) fn recycle_message(&mut self, mut msg: String) {
        let cap = msg.capacity();
        if cap > self.spare_message.capacity() && cap <= SPARE_MESSAGE_BYTES {
            msg.clear();
            self.spare_message = msg;
        }
    }

    /// Run one unit of work taken from the pending slot (the dispatch in `podWorkerLoop`).
    /// `found`: what the caller looked up already (see [`Found`]).
    pub(super) fn run_work(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        work: Work,
        found: Option<Found>,
    ) {
        let (cached, tested) = match found {
            Some(f) => (Some(f.cached), f.memo),
            None => (None, None),
        };
        let runtime_only = work.options.is_runtime_only();
        let kind = match work.work_type {
            WorkType::Sync => SyncKind::SyncPod,
            WorkType::Terminating if runtime_only => SyncKind::SyncTerminatingRuntimePod,
            WorkType::Terminating => SyncKind::SyncTerminatingPod,
            WorkType::Terminated => SyncKind::SyncTerminatedPod,
        };
        let grace = work.options.kill.as_ref().and_then(|k| k.grace_override);
        let pod = match (&work.options.pod, &work.options.running_pod) {
            (Some(p), _) => p.clone(),
            (None, Some(rp)) => Arc::new(synthetic_pod(rp)),
            (None, None) => unreachable!("work without pod"),
        };
        let status = if runtime_only {
            Arc::new(RtPodStatus::default())
        } else {
            #[cfg(debug_assertions)]
            if let Some(c) = &cached {
                self.pleg.assert_current(uid, c);
            }
            match cached.unwrap_or_else(|| self.pleg.cache_get(uid)) {
                Ok(s) => s,
                Err(e) => {
                    self.sync_status_failed(ctx, uid, op_id, work, e);
                    return;
                }
            }
        };
        ctx.emit(Transition::SyncBegin {
            uid,
            kind,
            grace: match kind {
                SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => grace,
                _ => None,
            },
        });
        let op = self.spare_ops.op(op_id, kind, work, pod, status, grace);
        if kind == SyncKind::SyncPod {
            self.plan_sync_pod(ctx, uid, op, tested);
        } else {
            self.plan_termination(ctx, uid, op);
        }
    }

    /// `SyncPod`: write the generated status, then plan the runtime's `SyncPod` (or end
    /// the sync at once for a terminal phase).
    fn plan_sync_pod(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        tested: Option<MemoHit>,
    ) {
        if self.legacy() && self.legacy_sync_pod_kill(ctx, &mut op) {
            self.advance(ctx, uid, op);
            return;
        }
        // generateAPIPodStatus and SetPodStatus (skipped when nothing they read changed
        // since they last wrote nothing: `status_memo.rs`).
        let phase = self.sync_pod_status(ctx, &op.pod, &op.status, tested);
        if phase.is_terminal() {
            self.end_terminal_sync(ctx, uid, op, phase);
            return;
        }
        // Static pod: create or repair its mirror pod.
        if op.pod.static_pod {
            self.sync_mirror_pod(ctx, uid, &op.pod);
        }
        // Before PR 110191 (switch off) probes follow config (HandlePodAdditions).
        if self.b.on(Sw::StopProbesAtTermination) {
            self.probe_add_pod(ctx, &op.pod);
        }
        let mut actions = compute_pod_actions_with_probes(
            &op.pod,
            &op.status,
            Some(&self.prober),
            self.b.on(Sw::InitContainersNotRerunAfterAppStart),
            std::mem::take(&mut self.spare_to_start),
        );
        op.sandbox = actions.sandbox;
        self.objects_on_sync_pod(ctx, &op.pod);
        // The plan's length is known here: its buffer grows at most once.
        let kills = match actions.kill_pod {
            true => 1,
            false => actions.containers_to_kill.len(),
        };
        let mounted = self.mounted.contains(&uid);
        op.plan.reserve(
            usize::from(!mounted)
                + kills
                + usize::from(actions.create_sandbox)
                + actions.init_containers_to_start.len()
                + actions.containers_to_start.len(),
        );
        if !mounted {
            op.plan.push_back(Step::MountVolumes);
        }
        if actions.kill_pod || !actions.containers_to_kill.is_empty() {
            self.plan_kills(
                ctx,
                uid,
                &mut op,
                actions.kill_pod,
                actions.containers_to_kill,
            );
        }
        if actions.create_sandbox {
            op.plan.push_back(Step::CreateSandbox {
                attempt: actions.attempt,
            });
        }
        // Init containers first; `idx` counts init containers, then app containers.
        for idx in actions.init_containers_to_start {
            op.plan.push_back(Step::StartContainer { idx });
        }
        let n_init = op.pod.spec.init_containers.len();
        for idx in actions.containers_to_start.drain(..) {
            op.plan
                .push_back(Step::StartContainer { idx: n_init + idx });
        }
        // The emptied list is the next sync's buffer.
        self.spare_to_start = actions.containers_to_start;
        self.advance(ctx, uid, op);
    }

    /// Issue the next step of a plan, or finish the operation.
    pub(super) fn advance(&mut self, ctx: &mut Ctx, uid: PodUid, mut op: Box<Op>) {
        loop {
            if let Some(e) = op.fatal.take() {
                self.end_op(ctx, uid, op, Err(e));
                return;
            }
            let Some(step) = op.plan.pop_front() else {
                // A failure made of crash-loop back-off errors alone is of the ordinary
                // class; any other error's class is read from the message.
                let known = op.errors.len() == op.back_off_errors;
                // A single error is the message itself (no joined copy).
                let result = match op.errors.len() {
                    0 => Ok(false),
                    1 => Err(op.errors.pop().expect("one error")),
                    _ => Err(op.errors.join("; ")),
                };
                let class = match &result {
                    Ok(_) => None,
                    Err(_) if known => Some(SyncError::Other),
                    Err(e) => Some(SyncError::of(e)),
                };
                self.end_op_as(ctx, uid, op, result, class);
                return;
            };
            let Step::StartContainer { idx } = step else {
                // Every other step is rare: issued out of line.
                match self.issue_step(ctx, uid, op, step) {
                    Some(back) => {
                        op = back;
                        continue;
                    }
                    None => return,
                }
            };
            if let Some(e) = self.do_back_off(ctx, &op, idx) {
                op.errors.push(e);
                op.back_off_errors += 1;
                continue;
            }
            // No entry at all: not in back-off (and no key to build).
            if !self.image_backoff.is_empty() && self.in_image_backoff(ctx, uid, &mut op, idx) {
                continue;
            }
            let c = op.pod.spec.container_at(idx);
            op.start = Some((idx, StartStage::Pull));
            let pull = CriReq::PullImage {
                uid,
                image: Arc::from(c.image.as_str()),
                always: c.image_pull_policy() == PullPolicy::Always,
            };
            self.worker_cri(ctx, uid, op.id, idx as u32, pull);
            self.park_op(uid, op);
            return;
        }
    }

    /// `doBackOff`: is the container in crash-loop back-off? Returns the error if so.
    fn do_back_off(&mut self, ctx: &mut Ctx, op: &Op, idx: usize) -> Option<String> {
        let uid = op.pod.uid;
        let c = op.pod.spec.container_at(idx);
        let exited = op
            .status
            .containers
            .iter()
            .find(|s| *s.name == *c.name && s.state == RtState::Exited)?;
        let ts = exited.finished_at.unwrap_or(exited.created_at);
        // Upstream's key `name_namespace_uid_container` is (UID, container name) here
        // (`ContainerBackoff`): no key is built.
        let backoff = self
            .crash_backoff
            .back_off_since(uid, &c.name, ts, ctx.now());
        if backoff.is_none() {
            self.crash_backoff.next(uid, &c.name, ts, ctx.now());
        }
        if let Some(backoff) = backoff {
            self.reason_cache.set(uid, &c.name, "CrashLoopBackOff");
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::CrashLoopBackOff,
            });
            let mut msg = std::mem::take(&mut self.spare_message);
            super::backoff::crash_loop_message_into(&mut msg, backoff, &c.name);
            return Some(msg);
        }
        None
    }
}

/// The pod object `SyncTerminatingRuntimePod` hands to the runtime: identity and container
/// names only (no grace period, no hooks).
#[cold]
#[inline(never)]
pub(super) fn synthetic_pod(rp: &RunningPod) -> ApiPod {
    use crate::model::{ContainerSpec, PodSpec};
    let containers = rp
        .containers
        .iter()
        .map(|(_, n)| ContainerSpec::named(n, ""))
        .collect();
    let mut spec = PodSpec::new(&rp.name, &rp.namespace, RestartPolicy::Always, containers);
    spec.termination_grace_period_seconds = None;
    let mut pod = ApiPod::new(rp.uid, spec);
    pod.decl = usize::MAX;
    pod.resource_version = 0;
    pod
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodSpec, RtContainer, RtSandbox};

    fn pod(policy: RestartPolicy) -> ApiPod {
        let c = vec![ContainerSpec::named("app", "img:1")];
        ApiPod::new(PodUid(1), PodSpec::new("p", "default", policy, c))
    }

    fn status(ready: bool, state: Option<(RtState, i32)>) -> RtPodStatus {
        RtPodStatus {
            uid: Some(PodUid(1)),
            sandboxes: vec![RtSandbox {
                id: SandboxId(1),
                ready,
                attempt: 0,
                created_at: SimTime::ZERO,
            }],
            containers: state
                .map(|(s, code)| RtContainer {
                    id: ContainerId(1),
                    name: "app".into(),
                    state: s,
                    exit_code: code,
                    reason: "",
                    created_at: SimTime::ZERO,
                    started_at: Some(SimTime::ZERO),
                    finished_at: None,
                    restart_count: 0,
                    sandbox: SandboxId(1),
                })
                .into_iter()
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn compute_pod_actions_new_pod_creates_sandbox_and_starts_all() {
        let a = compute_pod_actions(&pod(RestartPolicy::Always), &RtPodStatus::default());
        assert!(a.create_sandbox && a.kill_pod);
        assert_eq!(a.containers_to_start, vec![0]);
    }

    #[test]
    fn compute_pod_actions_restart_policies() {
        let exited1 = status(true, Some((RtState::Exited, 1)));
        let exited0 = status(true, Some((RtState::Exited, 0)));
        assert_eq!(
            compute_pod_actions(&pod(RestartPolicy::Always), &exited0).containers_to_start,
            vec![0]
        );
        assert_eq!(
            compute_pod_actions(&pod(RestartPolicy::OnFailure), &exited1).containers_to_start,
            vec![0]
        );
        let a = compute_pod_actions(&pod(RestartPolicy::OnFailure), &exited0);
        assert!(a.containers_to_start.is_empty() && a.kill_pod);
        let a = compute_pod_actions(&pod(RestartPolicy::Never), &exited1);
        assert!(a.containers_to_start.is_empty() && a.kill_pod);
        let running = status(true, Some((RtState::Running, 0)));
        assert_eq!(
            compute_pod_actions(&pod(RestartPolicy::Never), &running),
            PodActions {
                sandbox: Some(SandboxId(1)),
                ..Default::default()
            }
        );
        // Dead sandbox with RestartPolicy Never and containers that existed: kill only.
        let dead = status(false, Some((RtState::Exited, 0)));
        let a = compute_pod_actions(&pod(RestartPolicy::Never), &dead);
        assert!(a.kill_pod && !a.create_sandbox);
    }

    /// `computePodActions` with the prober's results `pm`, the pod's probes run, and a fresh
    /// start list.
    fn with_probes(policy: RestartPolicy, st: &RtPodStatus, pm: &ProbeManager) -> PodActions {
        compute_pod_actions_with_probes(&pod(policy), st, Some(pm), true, Vec::new())
    }

    #[test]
    fn compute_pod_actions_kills_on_liveness_or_startup_failure() {
        let running = status(true, Some((RtState::Running, 0)));
        let mut pm = ProbeManager::new(1);
        pm.readiness
            .set(ContainerId(1), ProbeResult::Failure, PodUid(1));
        // A readiness failure never kills.
        let a = with_probes(RestartPolicy::Always, &running, &pm);
        assert!(a.containers_to_kill.is_empty() && a.containers_to_start.is_empty());
        pm.startup
            .set(ContainerId(1), ProbeResult::Failure, PodUid(1));
        let a = with_probes(RestartPolicy::Always, &running, &pm);
        assert_eq!(
            a.containers_to_kill,
            vec![(ContainerId(1), "app".to_string(), ProbeType::Startup)]
        );
        assert_eq!(a.containers_to_start, vec![0]);
        assert!(!a.kill_pod);
        // Liveness wins over startup; RestartPolicy Never kills without restarting, and with
        // nothing kept and nothing to start the whole pod is killed (`KillPod`).
        pm.liveness
            .set(ContainerId(1), ProbeResult::Failure, PodUid(1));
        let a = with_probes(RestartPolicy::Never, &running, &pm);
        assert_eq!(a.containers_to_kill[0].2, ProbeType::Liveness);
        assert!(a.containers_to_start.is_empty());
        assert!(a.kill_pod);
    }
}
