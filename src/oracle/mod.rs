//! The invariant oracle (design.md decision 9): read-only and separate from the model. It
//! is the trace's [`Observer`]: it sees every [`Transition`] as it is emitted, after it is
//! hashed, keeps its own history (per pod, a ring of the last [`RING`] transitions, or
//! [`RING_LARGE`] in a large run, for diagnostics) and its own derived state, and never
//! reads the world. Removing it (or switching it off) changes no trace hash.
//!
//! Safety properties are checked as transitions happen; liveness properties (bounded
//! progress) at the end of the run ([`Oracle::finish`]), each with its bound, and skipped
//! (never failed) when the run leaves too little time after the trigger, the node powered
//! off, or the kubelet is down. Each property is reported at most once per pod. The table
//! of properties is [`invariants::INVARIANTS`] (`podsim invariants`).
//!
//! Not from upstream code: the properties come from `shared/reference/kubelet-model.md`
//! section 11 and the consolidated checklist of `shared/reference/race-catalog.md`.

pub mod invariants;

use crate::model::{
    ApiContainerState, ApiPodStatus, ContainerId, PodPhase, PodSpec, PodUid, RestartPolicy,
    SandboxId, Transition,
};
use crate::model::{
    ConfigOpKind, CriOp, EvictionStep, HostOp, KillPodNowStep, NoteKind, ProbeCached, ProbeType,
    ProbeVerdict, ProbeWorkerStep, ProcessEvent, RemovedBy, ShutdownStep, SyncKind, SyncStepKind,
    WorkerStep,
};
use crate::sim::{Dur, Observer, SimTime};
use invariants::{Inv, INVARIANTS};
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;

pub use invariants::{Invariant, Kind};

/// Transitions kept per pod for a finding's diagnosis.
pub const RING: usize = 20;
/// The ring of a large run ([`Oracle::for_pods`] with more than [`LARGE_RUN_PODS`] pods):
/// a finding there prints the pod's last 8 transitions, and the oracle keeps about 900
/// bytes less per pod.
pub const RING_LARGE: usize = 8;
pub const LARGE_RUN_PODS: usize = 1000;

/// Liveness: time allowed on top of the grace period (sync ticker, PLEG relist, status
/// writes, CRI latencies, one post-kill verification retry).
const SLACK: Dur = Dur::secs(60);
/// Liveness: extra time per failed sync or CRI call of the pod (one pod-worker back-off of
/// 10-15 s, and the retry).
const PER_ERROR: Dur = Dur::secs(20);
/// Final container status: the kubelet has seen an exit this long before it wrote a
/// terminal status (PLEG relist period plus latencies, generously).
const OBSERVABLE_AFTER: Dur = Dur::secs(5);
/// Node shutdown, killPodNow: slack on a step's deadline (event ordering, latencies).
const STEP_SLACK: Dur = Dur::secs(1);
/// The node is reported NotReady this soon after a graceful shutdown starts.
const NOT_READY_BOUND: Dur = Dur::secs(10);
/// waitForPodsCleanup's timeout + the monitoring interval + slack.
const EVICTION_REEVAL_BOUND: Dur = Dur::secs(41);
/// The priority from which a pod is critical (`scheduling.SystemCriticalPriority`).
const CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// A finding of the oracle (the run adds the replay line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OracleFinding {
    pub invariant: &'static str,
    /// The pod's name (empty for node-level findings).
    pub pod: String,
    pub at: SimTime,
    /// What went wrong, then the pod's last transitions.
    pub message: String,
}

/// One container instance (ground truth).
#[derive(Clone, Debug)]
struct Instance {
    id: ContainerId,
    name: String,
    /// (exit code, when).
    exit: Option<(i32, SimTime)>,
    /// When the kubelet asked the runtime to remove it.
    removed_at: Option<SimTime>,
    /// When it started running.
    running_at: SimTime,
}

/// What one kubelet worker record went through (reset when the record goes, and when the
/// kubelet process dies).
#[derive(Clone, Debug, Default)]
struct Worker {
    started: bool,
    term_acked: bool,
    terminating_began: bool,
    terminated_began: bool,
    last_terminating_ok: bool,
    terminated_sync_ok: bool,
    first_sight_terminal: bool,
    terminated: bool,
    finished: bool,
    open_sync: Option<SyncKind>,
    last_grace: Option<i64>,
    liveness_failed: bool,
    /// A kill of the pod is in flight: termination requested and not yet terminated, or
    /// (v1.21 design) a pod-killer kill requested and not yet done.
    kill_in_flight: bool,
    status_set: bool,
    lvs_stopped: bool,
    /// SyncTerminatingPod set the pod's status (where v1.31 stops liveness and startup
    /// probes; the same instant as `lvs_stopped` there).
    terminating_status_set: bool,
    probes_removed: bool,
    /// Probes per (container, kind) after that kind's workers were told to stop.
    probes_after_stop: BTreeMap<(String, ProbeType), u32>,
    /// When the record's last SyncPod ended.
    last_sync_pod_end: Option<SimTime>,
    /// Termination was requested (TermRequested).
    term_requested: bool,
    /// The open SyncPod is one the worker took up before termination was requested (S1').
    inflight_sync_pod: bool,
    /// A sync ended since termination was requested.
    sync_ended_since_request: bool,
    /// A liveness/startup Failure of a running container of a pod not terminating: from
    /// when the kill is due, and which container (L11).
    lv_fail: Option<(SimTime, ContainerId)>,
    /// The Failure came while a SyncPod was open: the bound starts when it ends.
    lv_wait_sync: bool,
    /// Housekeepings seen since the worker finished with its pod out of config (L5).
    hk_since_undesired: u8,
}

/// What the current kubelet incarnation knows of a UID (reset when the process dies).
#[derive(Clone, Debug, Default)]
struct Incarnation {
    config_known: bool,
    added_after_shutdown: bool,
    rejected: bool,
    local_terminal: bool,
    /// REMOVEd from config: the status manager may drop the pod's status at any time.
    out_of_config: bool,
    /// When it first saw the pod deleted (after the API delete).
    saw_delete_at: Option<SimTime>,
    /// When it first saw the UID as a runtime-only pod (and had no config for it).
    runtime_only_at: Option<SimTime>,
    /// The termination in progress (requested, not yet finished).
    term_requested_at: Option<SimTime>,
    /// A SyncPod was open when the deletion was seen: when it ended.
    inflight_sync_end: Option<SimTime>,
    inflight_sync_open: bool,
    /// The node shutdown manager asked to kill the pod.
    shutdown_killed: bool,
    /// The latest SyncTerminatingPod began after that request (its status function
    /// applies there).
    shutdown_fn_applies: bool,
    /// The phase of the status manager's cache (the last `LocalStatus`).
    local_phase: Option<PodPhase>,
    /// When the worker reached Terminated (L2).
    terminated_at: Option<SimTime>,
}

/// Everything the oracle keeps about one UID.
#[derive(Clone, Debug, Default)]
struct Pod {
    name: String,
    spec: Option<Arc<PodSpec>>,
    static_pod: bool,
    mirror_of: Option<PodUid>,
    history: VecDeque<(SimTime, Transition)>,
    /// Findings reported for this pod (bit per invariant).
    reported: u64,
    // ---- ground truth: runtime and node ----
    running: Vec<ContainerId>,
    /// Ready sandboxes and when each became ready.
    ready_sandboxes: Vec<(SandboxId, SimTime)>,
    instances: Vec<Instance>,
    last_exit_at: Option<SimTime>,
    mounted: bool,
    cgroup: bool,
    cgroup_removal_in_flight: bool,
    // ---- ground truth: API ----
    deleted_at: Option<SimTime>,
    graceful_delete: bool,
    /// Deleted with grace 0 (a force delete, or a delete of a terminal pod).
    zero_grace_delete: bool,
    max_grace: i64,
    removed_at: Option<SimTime>,
    api_phase: PodPhase,
    api_status: Option<Arc<ApiPodStatus>>,
    api_status_at: SimTime,
    evicted_at: Option<SimTime>,
    /// The eviction's status function reaches SyncTerminatingPod (the pod was not already
    /// terminating when it was evicted, and no other killPodNow replaced the function).
    evict_status_applies: bool,
    /// A static pod's manifest is on the node: since when (it last (re)appeared).
    desired_since: Option<SimTime>,
    /// When a container of the pod last started running.
    last_started_at: Option<SimTime>,
    // ---- the kubelet ----
    /// The smallest grace override of an eviction of the pod by the running kubelet.
    min_override: Option<i64>,
    /// An eviction override that arrived while the worker, with termination already
    /// requested and no sync open, may have taken up its terminating work (and its grace)
    /// already and be waiting for a newer pod status (GetNewerThan): v1.31 runs that
    /// SyncTerminatingPod with the grace it took (the override only cancels a context
    /// SyncTerminatingPod does not use, TODO 113606), so the override binds only the syncs
    /// after it. (A worker idle in its error back-off has not taken its work up yet; the
    /// check is lenient there.)
    late_override: Option<i64>,
    errors: Vec<SimTime>,
    /// A container of it ran when the kubelet last crashed.
    running_at_crash: bool,
    /// Failed StartContainer calls (each leaves a created container that never ran).
    start_errors: Vec<SimTime>,
    worker: Worker,
    inc: Incarnation,
}

impl Pod {
    fn is_critical(&self) -> bool {
        self.static_pod
            || self.mirror_of.is_some()
            || self
                .spec
                .as_ref()
                .is_some_and(|s| s.priority >= CRITICAL_PRIORITY)
    }
    fn spec_grace(&self) -> i64 {
        self.spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30)
    }
    fn errors_since(&self, t: SimTime) -> u64 {
        self.errors.iter().filter(|e| **e >= t).count() as u64
    }
    fn instance(&self, id: ContainerId) -> Option<&Instance> {
        self.instances.iter().find(|i| i.id == id)
    }
}

/// One priority group of a graceful node shutdown.
#[derive(Clone, Debug)]
struct Group {
    priority: i32,
    period_s: i64,
    start: SimTime,
    /// killPodNow channels requested for this group, and whether each returned.
    kills: Vec<(u64, bool)>,
    /// Kills of this group whose channel has not closed yet.
    open: Vec<(u64, PodUid)>,
}

/// Node-level state.
#[derive(Clone, Debug, Default)]
struct Node {
    kubelet_down: bool,
    kubelet_started_at: SimTime,
    crashes_at: Vec<SimTime>,
    /// A pod object (not a mirror pod) was created since the kubelet last crashed.
    created_since_crash: bool,
    power_off_at: Option<SimTime>,
    shutdown_started: Option<SimTime>,
    group: Option<Group>,
    /// The pod the eviction manager evicted and still waits for.
    eviction_in_flight: Option<PodUid>,
    /// Static full name -> UIDs started and not finished.
    static_started: BTreeMap<String, Vec<PodUid>>,
    reported: u64,
    recent: VecDeque<(SimTime, Transition)>,
    /// Pending killPodNow calls: (channel, pod, requested at) (L8).
    kill_waits: Vec<(u64, PodUid, SimTime)>,
    /// The longest shutdown group period seen (a shutdown kill's grace is at most that).
    max_group_period_s: i64,
    /// An eviction's killPodNow returned and the cleanup wait has not ended: since when (L9).
    eviction_wait_since: Option<(PodUid, SimTime)>,
    /// A graceful shutdown is under way: by when the next group or the lock release is due
    /// (L10).
    shutdown_due: Option<SimTime>,
    /// The shutdown started and the node was not yet reported NotReady: since when (C13).
    not_ready_due_since: Option<SimTime>,
    /// Finished workers whose pod left the config (L5 candidates).
    undesired_finished: Vec<PodUid>,
    /// The pod each container that ran belongs to (C14).
    container_owner: BTreeMap<ContainerId, PodUid>,
}

/// The oracle of one run.
#[derive(Clone, Debug, Default)]
pub struct Oracle {
    on: bool,
    /// Bit per invariant active on the run's profile.
    active: u64,
    /// Transitions kept per pod ([`RING`], or [`RING_LARGE`] in a large run).
    ring: usize,
    pods: Vec<Pod>,
    node: Node,
    findings: Vec<OracleFinding>,
    /// Per invariant: liveness checks that had enough time (see `liveness_checked`).
    checked: Vec<u64>,
    /// Container starts that began between TermRequested and TermAcked (S1').
    starts_while_term_requested: u64,
}

fn t(at: SimTime) -> String {
    format!(
        "{}.{:03}s",
        at.0 / 1_000_000_000,
        (at.0 % 1_000_000_000) / 1_000_000
    )
}

impl Observer<Transition> for Oracle {
    #[inline]
    fn observe(&mut self, at: SimTime, rec: &Transition) {
        if self.on {
            self.transition(at, rec);
        }
    }
}

impl Oracle {
    /// An oracle checking every invariant. (`Oracle::default()` is switched off and looks
    /// at nothing.) Every invariant is checked on every profile: on an old profile, a
    /// finding of an invariant that release did not keep is the historical race replayed;
    /// [`super::invariants::Invariant::profiles`] says where a finding means a port bug.
    pub fn new() -> Self {
        Oracle {
            on: true,
            active: (1u64 << INVARIANTS.len()) - 1,
            checked: vec![0; INVARIANTS.len()],
            ring: RING,
            ..Default::default()
        }
    }

    /// [`Oracle::new`] for a run of `pods` pods: a shorter per-pod ring when it is large.
    pub fn for_pods(pods: usize) -> Self {
        Oracle {
            ring: if pods > LARGE_RUN_PODS {
                RING_LARGE
            } else {
                RING
            },
            // UIDs count from 1: one slot per declared pod, without doubling's slack
            // (pods created later, such as mirror pods, grow it as before).
            pods: Vec::with_capacity(pods + 1),
            ..Self::new()
        }
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    /// The findings so far, in the order they were made.
    pub fn findings(&self) -> &[OracleFinding] {
        &self.findings
    }

    fn pod(&mut self, uid: PodUid) -> &mut Pod {
        let i = uid.0 as usize;
        if self.pods.len() <= i {
            self.pods.resize_with(i + 1, Pod::default);
        }
        &mut self.pods[i]
    }

    fn get(&self, uid: PodUid) -> Option<&Pod> {
        self.pods.get(uid.0 as usize)
    }

    /// Report `inv` for `uid` (once per pod and invariant).
    fn report(&mut self, inv: Inv, uid: Option<PodUid>, at: SimTime, what: String) {
        let bit = 1u64 << (inv as usize);
        if self.active & bit == 0 {
            return;
        }
        let mut msg = what;
        let pod_name = match uid {
            Some(u) => {
                let p = self.pod(u);
                if p.reported & bit != 0 {
                    return;
                }
                p.reported |= bit;
                let _ = write!(
                    msg,
                    "\n    last transitions of {} ({u}):",
                    if p.name.is_empty() { "?" } else { &p.name }
                );
                for (at, tr) in &p.history {
                    let _ = write!(msg, "\n      {}  {tr}", t(*at));
                }
                p.name.clone()
            }
            None => {
                if self.node.reported & bit != 0 {
                    return;
                }
                self.node.reported |= bit;
                msg.push_str("\n    last node transitions:");
                for (at, tr) in &self.node.recent {
                    let _ = write!(msg, "\n      {}  {tr}", t(*at));
                }
                String::new()
            }
        };
        self.findings.push(OracleFinding {
            invariant: inv.name(),
            pod: pod_name,
            at,
            message: msg,
        });
    }

    /// The pod a transition is about, if any.
    fn uid_of(tr: &Transition) -> Option<PodUid> {
        use Transition::*;
        match tr {
            ApiCreated { uid, .. }
            | ApiDeleteRequested { uid, .. }
            | ApiForceDeleted { uid }
            | ApiStatus { uid, .. }
            | ApiRemoved { uid, .. }
            | WatchDelivered { uid, .. }
            | CriBegin { uid, .. }
            | CriEnd { uid, .. }
            | SandboxReady { uid, .. }
            | SandboxStopped { uid, .. }
            | ContainerRunning { uid, .. }
            | Signal { uid, .. }
            | ContainerExited { uid, .. }
            | Host { uid, .. }
            | PodRejected { uid, .. }
            | Evict { uid, .. }
            | Eviction { uid, .. }
            | ConfigOp { uid, .. }
            | UpdatePod { uid, .. }
            | Worker { uid, .. }
            | SyncBegin { uid, .. }
            | SyncEnd { uid, .. }
            | LocalStatus { uid, .. }
            | ProbeWorker { uid, .. }
            | Probe { uid, .. }
            | ProbeResult { uid, .. }
            | Note { uid, .. }
            | KillPodNow { uid, .. }
            | SyncStep { uid, .. }
            | StaticManifestRemoved { uid } => Some(*uid),
            ApiStatusPatched { of, .. } => Some(*of),
            Logind { .. }
            | PowerOff { .. }
            | NodeMemoryAvailable { .. }
            | NodeCondition { .. }
            | Relist { .. }
            | Housekeeping
            | Shutdown { .. }
            | NodeReady { .. }
            | KubeletProcess { .. }
            | ShutdownGroup { .. } => None,
        }
    }

    /// Observe one transition.
    pub fn transition(&mut self, at: SimTime, tr: &Transition) {
        let shown_only = matches!(tr, Transition::StaticManifestRemoved { .. });
        match Self::uid_of(tr) {
            // Shown to the oracle, never traced: no history a finding quotes holds it.
            _ if shown_only => {}
            Some(uid) => {
                let ring = self.ring;
                let h = &mut self.pod(uid).history;
                if h.len() == ring {
                    h.pop_front();
                } else if h.capacity() == 0 {
                    // Exactly one ring's worth: growth by doubling would leave slots unused.
                    h.reserve_exact(ring);
                }
                h.push_back((at, tr.clone()));
            }
            None => {
                let h = &mut self.node.recent;
                if h.len() == RING {
                    h.pop_front();
                }
                h.push_back((at, tr.clone()));
            }
        }
        use Transition::*;
        match tr {
            ApiCreated {
                uid,
                spec,
                static_pod,
                mirror_of,
                ..
            } => {
                let p = self.pod(*uid);
                if *static_pod && p.spec.is_some() {
                    // The same manifest put back (its UID is a hash of its content): a
                    // new life of the UID; its earlier removal no longer counts.
                    p.deleted_at = None;
                    p.removed_at = None;
                    p.graceful_delete = false;
                    p.zero_grace_delete = false;
                    p.inc.saw_delete_at = None;
                    p.inc.inflight_sync_end = None;
                    p.inc.inflight_sync_open = false;
                }
                if *static_pod {
                    p.desired_since = Some(at);
                }
                p.name.clone_from(&spec.name);
                p.spec = Some(spec.clone());
                p.static_pod = *static_pod;
                p.mirror_of = *mirror_of;
                p.max_grace = p.spec_grace();
                if mirror_of.is_none() {
                    self.node.created_since_crash = true;
                }
            }
            ApiDeleteRequested { uid, grace } => {
                let p = self.pod(*uid);
                p.deleted_at.get_or_insert(at);
                p.graceful_delete |= *grace > 0;
                p.zero_grace_delete |= *grace == 0;
                p.max_grace = p.max_grace.max(*grace);
            }
            ApiForceDeleted { uid } => {
                let p = self.pod(*uid);
                p.deleted_at.get_or_insert(at);
                p.zero_grace_delete = true;
            }
            ApiRemoved { uid, by } => {
                let uid = *uid;
                self.pod(uid).removed_at = Some(at);
                if *by == RemovedBy::Kubelet {
                    self.kubelet_deleted(at, uid);
                }
                self.check_final_status(at, uid);
            }
            ApiStatus { .. } | WatchDelivered { .. } => {}
            ApiStatusPatched { uid, of, status } => self.status_patched(at, *uid, *of, status),
            CriBegin {
                uid,
                call,
                timeout_s,
                ..
            } => self.cri_begin(at, *uid, *call, *timeout_s),
            CriEnd {
                uid,
                call,
                target,
                error,
            } => {
                let p = self.pod(*uid);
                if error.is_some() {
                    p.errors.push(at);
                    if *call == CriOp::StartContainer {
                        p.start_errors.push(at);
                    }
                }
                if *call == CriOp::RemovePodCgroup {
                    p.cgroup_removal_in_flight = false;
                }
                if *call == CriOp::RemoveContainer && error.is_none() {
                    let id = ContainerId(*target);
                    if let Some(i) = p.instances.iter_mut().find(|i| i.id == id) {
                        i.removed_at.get_or_insert(at);
                    }
                }
            }
            SandboxReady { uid, id } => self.pod(*uid).ready_sandboxes.push((*id, at)),
            SandboxStopped { uid, id } => self.pod(*uid).ready_sandboxes.retain(|s| s.0 != *id),
            Signal { .. } => {}
            ContainerRunning { uid, id, name } => {
                let uid = *uid;
                self.static_container_started(at, uid);
                let p = self.pod(uid);
                p.last_started_at = Some(at);
                let never = p
                    .spec
                    .as_ref()
                    .is_some_and(|s| s.restart_policy == RestartPolicy::Never);
                let stale = match (p.worker.open_sync, p.worker.last_sync_pod_end) {
                    (Some(SyncKind::SyncPod), Some(end)) if never => p
                        .instances
                        .iter()
                        .any(|i| i.name == *name && i.running_at <= end),
                    _ => false,
                };
                p.running.push(*id);
                self.node.container_owner.insert(*id, uid);
                let p = self.pod(uid);
                p.instances.push(Instance {
                    id: *id,
                    name: name.clone(),
                    exit: None,
                    removed_at: None,
                    running_at: at,
                });
                if stale {
                    self.report(
                        Inv::CacheFreshness,
                        Some(uid),
                        at,
                        format!("restartPolicy=Never container {name} runs a second time: the SyncPod that started it did not see the instance that ran before the previous SyncPod ended"),
                    );
                }
            }
            ContainerExited { uid, id, code, .. } => {
                let p = self.pod(*uid);
                p.running.retain(|c| c != id);
                if let Some(i) = p.instances.iter_mut().find(|i| i.id == *id) {
                    i.exit = Some((*code, at));
                }
                p.last_exit_at = Some(at);
                if let Some((s, _)) = p.worker.lv_fail.filter(|f| f.1 == *id) {
                    let wait = p.worker.lv_wait_sync;
                    p.worker.lv_fail = None;
                    p.worker.lv_wait_sync = false;
                    let deadline = s + SLACK + Dur(PER_ERROR.0 * p.errors_since(s));
                    self.checked[Inv::LivenessFailureKills as usize] += 1;
                    if !wait && at > deadline {
                        self.report(
                            Inv::LivenessFailureKills,
                            Some(*uid),
                            at,
                            format!("container {id} got a liveness/startup Failure at {}, and was killed only at {} (bound {}s + {}s per error)", t(s), t(at), SLACK.whole_secs(), PER_ERROR.whole_secs()),
                        );
                    }
                }
            }
            Host { uid, what } => {
                let uid = *uid;
                match *what {
                    HostOp::VolumesMounted => {
                        let p = self.pod(uid);
                        p.mounted = true;
                        p.cgroup = true;
                    }
                    HostOp::VolumesUnmounted => {
                        self.pod(uid).mounted = false;
                        self.teardown_check(at, uid, "volumes were unmounted");
                    }
                    HostOp::PodCgroupRemoved => self.pod(uid).cgroup = false,
                    HostOp::PodDirRemoved => {
                        self.teardown_check(at, uid, "the pod directory was removed")
                    }
                }
            }
            Logind { .. } | NodeMemoryAvailable { .. } | NodeCondition { .. } => {}
            PowerOff { .. } => {
                self.node.power_off_at.get_or_insert(at);
                if self.node.shutdown_due.take().is_some() {
                    self.checked[Inv::NodeShutdownCompletes as usize] += 1;
                }
                self.not_ready_check(at);
                self.node.not_ready_due_since = None;
            }
            PodRejected { uid, reason } => {
                let uid = *uid;
                let p = self.pod(uid);
                p.inc.rejected = true;
                let was_running = p.running_at_crash;
                if reason.starts_with("OutOf")
                    && was_running
                    && !self.node.crashes_at.is_empty()
                    && !self.node.created_since_crash
                {
                    self.report(
                        Inv::RestartReadmitsRunningPods,
                        Some(uid),
                        at,
                        format!("the restarted kubelet rejected the pod ({reason}), whose containers ran when it went down; no pod was created since"),
                    );
                }
            }
            Evict { uid, grace, .. } => {
                if let Some((u, since)) = self.node.eviction_wait_since.take() {
                    self.eviction_wait_check(at, u, since);
                    self.checked[Inv::EvictionReevaluates as usize] += 1;
                }
                let p = self.pod(*uid);
                let w = &p.worker;
                if w.term_requested && w.open_sync.is_none() {
                    p.late_override = Some(p.late_override.map_or(*grace, |o| o.min(*grace)));
                } else {
                    p.min_override = Some(p.min_override.map_or(*grace, |o| o.min(*grace)));
                }
                self.evict(at, *uid);
            }
            Eviction { uid, what } => {
                match *what {
                    EvictionStep::KillCompleted | EvictionStep::KillTimedOut => {
                        self.node.eviction_wait_since = Some((*uid, at));
                    }
                    EvictionStep::PodCleanedUp | EvictionStep::CleanupTimedOut => {
                        if let Some((u, since)) = self.node.eviction_wait_since.take() {
                            self.eviction_wait_check(at, u, since);
                            self.checked[Inv::EvictionReevaluates as usize] += 1;
                        }
                    }
                    _ => {}
                }
                if matches!(
                    *what,
                    EvictionStep::PodCleanedUp | EvictionStep::CleanupTimedOut
                ) && self.node.eviction_in_flight == Some(*uid)
                {
                    self.node.eviction_in_flight = None;
                }
            }
            ConfigOp { uid, op } => {
                let shutdown = self.node.shutdown_started.is_some();
                let p = self.pod(*uid);
                if matches!(op, ConfigOpKind::Add | ConfigOpKind::AddFile)
                    && !p.inc.config_known
                    && shutdown
                {
                    p.inc.added_after_shutdown = true;
                }
                p.inc.config_known = true;
                // Out of config, the status manager may forget the pod's status at any time
                // (housekeeping's RemoveOrphanedStatuses, or the DELETE answered), and a
                // later SetPodStatus starts again from the API's copy.
                p.inc.out_of_config = matches!(op, ConfigOpKind::Remove | ConfigOpKind::RemoveFile);
                if p.inc.out_of_config && p.worker.finished {
                    self.node.undesired_finished.push(*uid);
                }
                let p = self.pod(*uid);
                let deleted = p.deleted_at.is_some() || *op == ConfigOpKind::RemoveFile;
                if deleted && p.inc.saw_delete_at.is_none() {
                    p.inc.saw_delete_at = Some(at);
                    p.inc.inflight_sync_open = p.worker.open_sync == Some(SyncKind::SyncPod);
                    if *op == ConfigOpKind::RemoveFile {
                        p.deleted_at.get_or_insert(at);
                    }
                }
            }
            UpdatePod {
                uid, runtime_only, ..
            } => {
                let p = self.pod(*uid);
                if *runtime_only && !p.inc.config_known {
                    p.inc.runtime_only_at.get_or_insert(at);
                }
            }
            Worker { uid, what } => self.worker(at, *uid, *what),
            SyncBegin { uid, kind, grace } => self.sync_begin(at, *uid, *kind, *grace),
            SyncEnd { uid, kind, error } => {
                let p = self.pod(*uid);
                if error.is_some() {
                    p.errors.push(at);
                }
                if p.worker.open_sync == Some(*kind) {
                    p.worker.open_sync = None;
                }
                if p.worker.term_requested {
                    p.worker.sync_ended_since_request = true;
                }
                if *kind == SyncKind::SyncPod {
                    p.worker.last_sync_pod_end = Some(at);
                    p.worker.inflight_sync_pod = false;
                    if p.worker.lv_wait_sync {
                        p.worker.lv_wait_sync = false;
                        if let Some(f) = p.worker.lv_fail.as_mut() {
                            f.0 = at;
                        }
                    }
                }
                match *kind {
                    SyncKind::SyncPod if p.inc.inflight_sync_open => {
                        p.inc.inflight_sync_open = false;
                        p.inc.inflight_sync_end = Some(at);
                    }
                    SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => {
                        p.worker.last_terminating_ok = error.is_none();
                    }
                    SyncKind::SyncTerminatedPod if error.is_none() => {
                        p.worker.terminated_sync_ok = true;
                    }
                    _ => {}
                }
            }
            LocalStatus { uid, phase } => {
                let uid = *uid;
                let p = self.pod(uid);
                p.inc.local_phase = Some(*phase);
                if phase.is_terminal() {
                    p.inc.local_terminal = true;
                } else if p.inc.local_terminal
                    && !p.inc.out_of_config
                    && matches!(phase, PodPhase::Pending | PodPhase::Running)
                {
                    self.report(
                        Inv::LocalTerminalPhaseAbsorbing,
                        Some(uid),
                        at,
                        format!(
                            "the status manager's cache went from a terminal phase back to {phase}"
                        ),
                    );
                }
            }
            ProbeWorker {
                uid,
                container,
                kind: ProbeType::Readiness,
                what: ProbeWorkerStep::Stopped,
            } => self.readiness_stopped(at, *uid, container),
            Housekeeping => self.housekeeping(at),
            NodeReady { ready } => {
                if !ready && self.node.not_ready_due_since.take().is_some() {
                    self.checked[Inv::NotReadyAfterShutdownStart as usize] += 1;
                }
            }
            Relist { .. } | ProbeWorker { .. } => {}
            Probe {
                uid,
                container,
                kind,
                result,
            } => {
                self.probe_target_check(at, *uid, container, *kind, *result);
                self.probe(at, *uid, container, *kind)
            }
            ProbeResult {
                uid,
                kind,
                result,
                id,
            } => {
                if matches!(*kind, ProbeType::Liveness | ProbeType::Startup)
                    && *result == ProbeCached::Failure
                {
                    let p = self.pod(*uid);
                    p.worker.liveness_failed = true;
                    let terminating = p.worker.term_requested || p.inc.saw_delete_at.is_some();
                    if !terminating && p.running.contains(id) && p.worker.lv_fail.is_none() {
                        p.worker.lv_fail = Some((at, *id));
                        p.worker.lv_wait_sync = p.worker.open_sync == Some(SyncKind::SyncPod);
                    }
                }
            }
            Shutdown { what } => match *what {
                ShutdownStep::PrepareForShutdown {
                    shutting_down: true,
                } => {
                    if self.node.shutdown_started.is_none() {
                        self.node.shutdown_due = Some(at);
                        self.node.not_ready_due_since = Some(at);
                    }
                    self.node.shutdown_started.get_or_insert(at);
                }
                ShutdownStep::PrepareForShutdown {
                    shutting_down: false,
                } => {
                    self.node.shutdown_started = None;
                    self.node.shutdown_due = None;
                    self.node.not_ready_due_since = None;
                }
                ShutdownStep::Processed { .. } => {
                    if let Some(due) = self.node.shutdown_due.take() {
                        self.shutdown_due_check(at, due, "the inhibitor lock was released");
                        self.checked[Inv::NodeShutdownCompletes as usize] += 1;
                    }
                    if let Some(g) = self.node.group.take() {
                        self.kills_left_open(at, &g, "the inhibitor lock was released");
                    }
                }
                _ => {}
            },
            StaticManifestRemoved { uid } => self.static_manifest_removed(*uid),
            ShutdownGroup {
                priority, period_s, ..
            } => {
                if let Some(due) = self.node.shutdown_due {
                    self.shutdown_due_check(at, due, &format!("group priority {priority} started"));
                    self.node.shutdown_due = Some(at + Dur::secs((*period_s).max(0) as u64));
                }
                self.node.max_group_period_s = self.node.max_group_period_s.max(*period_s);
                self.shutdown_group(at, *priority, *period_s)
            }
            Note { uid, what } => {
                let p = self.pod(*uid);
                if what.is_failed_sync() {
                    p.errors.push(at);
                }
                if *what == NoteKind::V121KillRequested {
                    p.worker.kill_in_flight = true;
                } else if matches!(what, NoteKind::V121KillDone | NoteKind::V121KillFailed) {
                    p.worker.kill_in_flight = false;
                }
                if what.is_failed_mount() {
                    let p = self.pod(*uid);
                    p.errors.push(at);
                    if p.worker.started && !p.worker.term_acked {
                        self.report(
                            Inv::ReferencedObjectsRegistered,
                            Some(*uid),
                            at,
                            format!("a volume SetUp of a pod being synced failed: {what}"),
                        );
                    }
                }
            }
            KubeletProcess { what, .. } => match *what {
                ProcessEvent::Crashed => self.kubelet_crashed(at),
                ProcessEvent::Started => {
                    self.node.kubelet_down = false;
                    self.node.kubelet_started_at = at;
                }
            },
            KillPodNow {
                uid,
                ch,
                what,
                evict,
            } => self.kill_pod_now(at, *uid, *ch, *what, *evict),
            SyncStep { uid, step } => {
                let w = &mut self.pod(*uid).worker;
                match *step {
                    SyncStepKind::StatusSet => {
                        w.status_set = true;
                        w.terminating_status_set = true;
                        self.shutdown_status_check(at, *uid);
                    }
                    SyncStepKind::ProbesStopped => w.lvs_stopped = true,
                    SyncStepKind::ProbesRemoved => w.probes_removed = true,
                    _ => {}
                }
            }
        }
    }

    fn kubelet_crashed(&mut self, at: SimTime) {
        self.node.kubelet_down = true;
        self.node.crashes_at.push(at);
        self.node.shutdown_started = None;
        self.node.group = None;
        self.node.eviction_in_flight = None;
        self.node.static_started.clear();
        self.node.created_since_crash = false;
        self.node.kill_waits.clear();
        self.node.eviction_wait_since = None;
        self.node.shutdown_due = None;
        self.node.not_ready_due_since = None;
        self.node.undesired_finished.clear();
        for p in &mut self.pods {
            p.running_at_crash = !p.running.is_empty();
            p.worker = Worker::default();
            p.inc = Incarnation::default();
            p.min_override = None;
            p.late_override = None;
        }
    }

    fn cri_begin(&mut self, at: SimTime, uid: PodUid, call: CriOp, timeout_s: Option<i64>) {
        let p = self.pod(uid);
        if call == CriOp::RunPodSandbox && p.worker.open_sync == Some(SyncKind::SyncPod) {
            let end = p.worker.last_sync_pod_end;
            let old = p
                .ready_sandboxes
                .iter()
                .find(|s| end.is_some_and(|e| s.1 <= e))
                .map(|s| s.0);
            if let Some(sb) = old {
                self.report(
                    Inv::CacheFreshness,
                    Some(uid),
                    at,
                    format!("RunPodSandbox began while sandbox {sb}, ready before the previous SyncPod ended, still is: the sync used a status older than that sync"),
                );
            }
        }
        let p = self.pod(uid);
        match call {
            CriOp::RunPodSandbox | CriOp::CreateContainer | CriOp::StartContainer => {
                let acked = p.worker.term_acked;
                let in_window = p.worker.term_requested && !acked;
                let inflight =
                    p.worker.inflight_sync_pod && p.worker.open_sync == Some(SyncKind::SyncPod);
                if in_window {
                    self.starts_while_term_requested += 1;
                    if !inflight {
                        self.report(
                            Inv::StartsOnlyInInflightSync,
                            Some(uid),
                            at,
                            format!("{call} began after termination was requested, outside a SyncPod that was in flight at the request"),
                        );
                    }
                }
                let p = self.pod(uid);
                let restart = acked && p.worker.liveness_failed && call == CriOp::StartContainer;
                let after_shutdown = p.inc.added_after_shutdown;
                if acked {
                    self.report(
                        Inv::NoStartAfterTermination,
                        Some(uid),
                        at,
                        format!("{call} began after the pod's termination was acknowledged"),
                    );
                }
                if restart {
                    self.report(
                        Inv::NoRestartAfterTermination,
                        Some(uid),
                        at,
                        "a container was started again after a liveness/startup failure, with the pod's termination acknowledged".into(),
                    );
                }
                if after_shutdown {
                    self.report(
                        Inv::ShutdownGroupOrder,
                        Some(uid),
                        at,
                        format!("{call} began for a pod the kubelet first saw after the node shutdown started (it must be rejected)"),
                    );
                }
            }
            CriOp::StopContainer | CriOp::ExecPreStop => {
                let before_status = p.worker.open_sync == Some(SyncKind::SyncTerminatingPod)
                    && !p.worker.status_set;
                if let Some(t) = timeout_s.filter(|t| *t < 2) {
                    self.report(
                        Inv::GraceNeverIncreases,
                        Some(uid),
                        at,
                        format!("StopContainer with a timeout of {t}s (the minimum is 2 s)"),
                    );
                }
                if before_status {
                    self.report(
                        Inv::StatusBeforeStop,
                        Some(uid),
                        at,
                        format!(
                            "{call} began in SyncTerminatingPod before the local status was set"
                        ),
                    );
                }
            }
            CriOp::UnmountVolumes | CriOp::RemovePodCgroup | CriOp::RemovePodDir => {
                if call == CriOp::RemovePodCgroup {
                    p.cgroup_removal_in_flight = true;
                }
                let killing = p.worker.kill_in_flight;
                self.teardown_check(at, uid, &format!("{call} began"));
                if killing {
                    self.report(
                        Inv::NoTeardownUnderRunningContainer,
                        Some(uid),
                        at,
                        format!("{call} began while a kill of the pod was in flight"),
                    );
                }
            }
            _ => {}
        }
    }

    fn teardown_check(&mut self, at: SimTime, uid: PodUid, what: &str) {
        let p = self.pod(uid);
        if let Some(c) = p.running.first().copied() {
            self.report(
                Inv::NoTeardownUnderRunningContainer,
                Some(uid),
                at,
                format!("{what} while container {c} of the pod was running"),
            );
        }
    }

    fn worker(&mut self, at: SimTime, uid: PodUid, what: WorkerStep) {
        let p = self.pod(uid);
        let w = &mut p.worker;
        match what {
            WorkerStep::Record => {}
            WorkerStep::FirstSightTerminal => {
                w.kill_in_flight = false;
                w.term_acked = true;
                w.terminated = true;
                w.first_sight_terminal = true;
            }
            WorkerStep::TerminationRequested | WorkerStep::OrphanTerminationRequested => {
                if !w.term_requested {
                    w.term_requested = true;
                    w.inflight_sync_pod = w.open_sync == Some(SyncKind::SyncPod);
                }
                w.kill_in_flight = true;
                p.inc.term_requested_at.get_or_insert(at);
            }
            WorkerStep::TerminalTerminating => {
                w.term_requested = true;
                w.kill_in_flight = true;
                w.term_acked = true;
                p.inc.term_requested_at.get_or_insert(at);
            }
            WorkerStep::TerminationAcknowledged => w.term_acked = true,
            // v1.21: dispatchWork decided the pod is finished and skips its worker.
            WorkerStep::V121TreatedAsTerminated => w.term_acked = true,
            WorkerStep::Terminated => {
                w.terminated = true;
                w.kill_in_flight = false;
                p.inc.terminated_at.get_or_insert(at);
            }
            WorkerStep::Started => {
                w.started = true;
                let full = p.static_pod.then(|| {
                    p.spec
                        .as_ref()
                        .map(|s| format!("{}_{}", s.name, s.namespace))
                        .unwrap_or_default()
                });
                if let Some(full) = full {
                    let others = self.node.static_started.entry(full.clone()).or_default();
                    let other = others.first().copied();
                    others.push(uid);
                    if let Some(o) = other {
                        self.report(
                            Inv::StaticFullnameExclusivity,
                            Some(uid),
                            at,
                            format!("static pod {full} started while {o}, of the same full name, was started and not finished"),
                        );
                    }
                }
            }
            WorkerStep::Finished | WorkerStep::FinishedNeverStarted => {
                w.kill_in_flight = false;
                w.terminated = true;
                w.finished = true;
                let undesired = p.inc.out_of_config;
                let done = p.inc.term_requested_at.take().is_some();
                if undesired {
                    self.node.undesired_finished.push(uid);
                }
                self.termination_done(done);
                self.release_static(uid);
            }
            WorkerStep::V121Forgotten => {
                // v1.21: the goroutine ends after the sync it is in; its record stays.
                self.forgotten_check(at, uid);
            }
            WorkerStep::RuntimePodRecordRemoved
            | WorkerStep::Forgotten
            | WorkerStep::OrphanNeverStarted => {
                self.forgotten_check(at, uid);
                let p = self.pod(uid);
                let undesired_finished = p.worker.finished && p.inc.out_of_config;
                p.worker = Worker::default();
                // The record held the grace history: a new record starts without it.
                p.min_override = None;
                p.late_override = None;
                if undesired_finished {
                    self.checked[Inv::FinishedPodForgotten as usize] += 1;
                }
                let p = self.pod(uid);
                let done = p.inc.term_requested_at.take().is_some();
                self.termination_done(done);
                self.release_static(uid);
            }
            _ => {}
        }
    }

    /// A worker is forgotten: nothing of the pod may still run or be synced.
    fn forgotten_check(&mut self, at: SimTime, uid: PodUid) {
        let p = self.pod(uid);
        let what = match (p.running.first(), p.worker.open_sync) {
            (Some(c), _) => {
                format!("the pod worker was forgotten while container {c} of the pod was running")
            }
            (None, Some(s)) => format!("the pod worker was forgotten while {s} was in flight"),
            (None, None) => return,
        };
        self.report(Inv::WorkerKeptUntilTerminated, Some(uid), at, what);
    }

    /// A termination finished: termination-finishes was met (counted as checked).
    fn termination_done(&mut self, done: bool) {
        if done && self.on {
            self.checked[Inv::TerminationFinishes as usize] += 1;
        }
    }

    /// A static pod's manifest went away (`Transition::StaticManifestRemoved`, shown to
    /// the oracle outside the trace, so trace hashes do not change).
    fn static_manifest_removed(&mut self, uid: PodUid) {
        if self.on {
            self.pod(uid).desired_since = None;
        }
    }

    /// The static full name of a pod, if it is a static pod.
    fn static_full_name(p: &Pod) -> Option<String> {
        if !p.static_pod {
            return None;
        }
        p.spec
            .as_ref()
            .map(|s| format!("{}_{}", s.name, s.namespace))
    }

    /// Ground truth for static-fullname-exclusivity: a container of a static pod starts
    /// while a container of another UID with the same full name runs (whether or not the
    /// kubelet knows that UID: after a restart it may be a runtime-only pod).
    fn static_container_started(&mut self, at: SimTime, uid: PodUid) {
        let Some(full) = self.get(uid).and_then(Self::static_full_name) else {
            return;
        };
        let other = self.pods.iter().enumerate().find_map(|(i, q)| {
            (i != uid.0 as usize
                && !q.running.is_empty()
                && Self::static_full_name(q).as_deref() == Some(full.as_str()))
            .then_some(PodUid(i as u32))
        });
        if let Some(o) = other {
            self.report(
                Inv::StaticFullnameExclusivity,
                Some(uid),
                at,
                format!("a container of static pod {full} started while a container of {o}, of the same full name, was running"),
            );
        }
    }

    fn release_static(&mut self, uid: PodUid) {
        for v in self.node.static_started.values_mut() {
            v.retain(|u| *u != uid);
        }
    }

    fn sync_begin(&mut self, at: SimTime, uid: PodUid, kind: SyncKind, grace: Option<i64>) {
        let p = self.pod(uid);
        let zero_grace_delete = p.zero_grace_delete;
        let min_override = p.min_override;
        let w = &p.worker;
        let mut found: Vec<(Inv, String)> = Vec::new();
        if let Some(open) = w.open_sync {
            found.push((
                Inv::SingleSyncPerUid,
                format!("{kind} began while {open} was still open"),
            ));
        }
        if w.finished {
            found.push((
                Inv::FinishedIsFinal,
                format!("{kind} began after the worker finished"),
            ));
        }
        match kind {
            SyncKind::SyncPod => {
                if w.terminating_began {
                    found.push((
                        Inv::SyncOrder,
                        "SyncPod began after SyncTerminatingPod had begun".into(),
                    ));
                }
                if w.terminated {
                    found.push((
                        Inv::NoSyncOfKnownTerminated,
                        "SyncPod began for a pod whose worker reached Terminated".into(),
                    ));
                }
            }
            SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => {
                if w.terminated_began {
                    found.push((
                        Inv::SyncOrder,
                        format!("{kind} began after SyncTerminatedPod had begun"),
                    ));
                }
                if let Some(g) = grace {
                    if g < 1 {
                        found.push((
                            Inv::GraceNeverIncreases,
                            format!("{kind} with a grace period of {g}s (the minimum is 1 s)"),
                        ));
                    }
                    // v1.31's calculateEffectiveGracePeriod reads a deletionGracePeriodSeconds
                    // of 0 as unset, so after a delete with grace 0 (worker grace 1) a later
                    // kill override (eviction, node shutdown) raises the grace: upstream
                    // behaviour, not checked.
                    if let Some(o) = min_override.filter(|o| g > (*o).max(1)) {
                        found.push((
                            Inv::GraceWithinOverrides,
                            format!(
                                "{kind} with grace {g}s after an eviction with grace override {o}s"
                            ),
                        ));
                    }
                    if let Some(prev) = w.last_grace.filter(|prev| g > *prev && !zero_grace_delete)
                    {
                        found.push((
                            Inv::GraceNeverIncreases,
                            format!("{kind} with grace {g}s after an earlier {prev}s"),
                        ));
                    }
                }
            }
            SyncKind::SyncTerminatedPod
                if !(w.first_sight_terminal || w.terminating_began && w.last_terminating_ok) =>
            {
                found.push((
                    Inv::SyncOrder,
                    "SyncTerminatedPod began without a successful SyncTerminatingPod before it"
                        .into(),
                ));
            }
            _ => {}
        }
        let w = &mut p.worker;
        w.open_sync = Some(kind);
        if kind == SyncKind::SyncPod {
            // After TermRequested the worker picks up only terminating work, so a SyncPod
            // that begins then is the one it picked up before the request and that waited
            // for a newer pod status (GetNewerThan); any later one is not in flight.
            w.inflight_sync_pod = w.term_requested && !w.sync_ended_since_request;
        }
        match kind {
            SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => {
                p.inc.shutdown_fn_applies = p.inc.shutdown_killed;
                // An override this sync could not take binds every later one.
                if let Some(l) = p.late_override.take() {
                    p.min_override = Some(p.min_override.map_or(l, |o| o.min(l)));
                }
                w.terminating_began = true;
                w.term_acked = true;
                w.status_set = false;
                if let Some(g) = grace {
                    w.last_grace = Some(g);
                }
            }
            SyncKind::SyncTerminatedPod => w.terminated_began = true,
            _ => {}
        }
        for (inv, what) in found {
            self.report(inv, Some(uid), at, what);
        }
    }

    fn probe(&mut self, at: SimTime, uid: PodUid, container: &str, kind: ProbeType) {
        let w = &mut self.pod(uid).worker;
        let lvs = w.lvs_stopped || w.terminating_status_set;
        let stopped = w.probes_removed || (lvs && kind != ProbeType::Readiness);
        if !stopped {
            return;
        }
        let n = w
            .probes_after_stop
            .entry((container.to_string(), kind))
            .or_insert(0);
        *n += 1;
        let n = *n;
        if n > 1 {
            let when = if kind == ProbeType::Readiness {
                "RemovePod"
            } else {
                "StopLivenessAndStartup"
            };
            self.report(
                Inv::NoProbeAfterTermination,
                Some(uid),
                at,
                format!("{kind} probe of container {container} ran {n} times after {when}"),
            );
        }
    }

    /// A housekeeping began: a finished worker whose pod left the config before the
    /// previous housekeeping must be gone by now (L5).
    fn housekeeping(&mut self, at: SimTime) {
        let mut cands = std::mem::take(&mut self.node.undesired_finished);
        cands.sort_unstable();
        cands.dedup();
        let mut late = Vec::new();
        cands.retain(|u| {
            let Some(p) = self.pods.get_mut(u.0 as usize) else {
                return false;
            };
            if !(p.worker.finished && p.inc.out_of_config) {
                p.worker.hk_since_undesired = 0;
                return false;
            }
            p.worker.hk_since_undesired = p.worker.hk_since_undesired.saturating_add(1);
            if p.worker.hk_since_undesired >= 2 {
                late.push(*u);
            }
            true
        });
        self.node.undesired_finished = cands;
        for u in late {
            self.report(
                Inv::FinishedPodForgotten,
                Some(u),
                at,
                "the pod's worker finished and the pod left the config, yet a housekeeping passed without forgetting it".into(),
            );
        }
    }

    /// The node was not reported NotReady within 10 s of the shutdown's start (C13).
    fn not_ready_check(&mut self, at: SimTime) {
        if let Some(since) = self.node.not_ready_due_since {
            if at >= since + NOT_READY_BOUND {
                self.node.not_ready_due_since = None;
                self.checked[Inv::NotReadyAfterShutdownStart as usize] += 1;
                self.report(
                    Inv::NotReadyAfterShutdownStart,
                    None,
                    at,
                    format!(
                        "the graceful node shutdown started at {}, yet the node was not reported NotReady within {}s",
                        t(since),
                        NOT_READY_BOUND.whole_secs()
                    ),
                );
            }
        }
    }

    /// The next shutdown step (`what`) came at `at`; it was due by `due` (L10).
    fn shutdown_due_check(&mut self, at: SimTime, due: SimTime, what: &str) {
        if at > due + STEP_SLACK {
            self.report(
                Inv::NodeShutdownCompletes,
                None,
                at,
                format!(
                    "{what} at {}, later than the previous step's deadline {} (+{}s)",
                    t(at),
                    t(due),
                    STEP_SLACK.whole_secs()
                ),
            );
        }
    }

    /// The eviction manager's wait after the kill of `uid` (returned at `since`) ended at
    /// `at` (L9).
    fn eviction_wait_check(&mut self, at: SimTime, uid: PodUid, since: SimTime) {
        if at > since + EVICTION_REEVAL_BOUND {
            self.report(
                Inv::EvictionReevaluates,
                Some(uid),
                at,
                format!(
                    "the eviction manager evaluated again {} after the eviction's kill returned (bound {}s)",
                    t(SimTime(at.0 - since.0)),
                    EVICTION_REEVAL_BOUND.whole_secs()
                ),
            );
        }
    }

    /// `max(10 s, 1.5 x G)` + 1 s for a killPodNow of `uid` (L8).
    fn kill_pod_now_bound(&self, uid: PodUid) -> Dur {
        let g = self.get(uid).map_or(0, |p| {
            p.spec_grace()
                .max(p.min_override.unwrap_or(0))
                .max(self.node.max_group_period_s)
        });
        let g = g.max(0) as u64;
        Dur::secs((g + g / 2).max(10)) + STEP_SLACK
    }

    /// S9: a probe of `container` runs only when an instance of it has run, and does not
    /// succeed while none runs (ground truth).
    fn probe_target_check(
        &mut self,
        at: SimTime,
        uid: PodUid,
        container: &str,
        kind: ProbeType,
        result: ProbeVerdict,
    ) {
        let p = self.pod(uid);
        let ever = p.instances.iter().any(|i| i.name == container);
        let runs = p
            .instances
            .iter()
            .any(|i| i.name == container && p.running.contains(&i.id));
        let what = if !ever {
            format!("a {kind} probe ran against container {container}, which has never run")
        } else if !runs && result == ProbeVerdict::Success {
            format!(
                "a {kind} probe of container {container} succeeded while no instance of it runs"
            )
        } else {
            return;
        };
        self.report(Inv::ProbesOnlyRunningContainers, Some(uid), at, what);
    }

    /// Container starts that began between a pod's TermRequested and TermAcked (S1').
    pub fn starts_while_termination_requested(&self) -> u64 {
        self.starts_while_term_requested
    }

    /// SyncTerminatingPod set the status of a pod the shutdown manager kills: Failed,
    /// unless it had Succeeded.
    fn shutdown_status_check(&mut self, at: SimTime, uid: PodUid) {
        let p = self.pod(uid);
        let phase = p.inc.local_phase.unwrap_or_default();
        if !p.inc.shutdown_fn_applies || phase.is_terminal() {
            return;
        }
        self.report(
            Inv::ShutdownPodsFailed,
            Some(uid),
            at,
            format!("SyncTerminatingPod of a pod killed by the node shutdown manager set phase {phase} (want Failed unless Succeeded)"),
        );
    }

    /// A readiness worker exited: while the pod terminates, not before its kill completed
    /// if its container still runs (unless the kubelet's phase is already terminal).
    fn readiness_stopped(&mut self, at: SimTime, uid: PodUid, container: &str) {
        let p = self.pod(uid);
        let terminating = p.inc.saw_delete_at.is_some() || p.inc.term_requested_at.is_some();
        let runs = p
            .instances
            .iter()
            .any(|i| i.name == container && i.exit.is_none() && p.running.contains(&i.id));
        if !terminating || !runs || p.worker.probes_removed || p.inc.local_terminal {
            return;
        }
        self.report(
            Inv::ReadinessDuringTermination,
            Some(uid),
            at,
            format!("the readiness worker of container {container} stopped while the pod was terminating and the container still ran (its readiness is no longer reported)"),
        );
    }

    fn evict(&mut self, at: SimTime, uid: PodUid) {
        let p = self.pod(uid);
        p.evicted_at = Some(at);
        p.evict_status_applies = !p.worker.terminating_began;
        let critical = p.is_critical();
        if critical {
            self.report(
                Inv::EvictionRules,
                Some(uid),
                at,
                "a critical pod (static, mirror or priority >= 2000000000) was evicted".into(),
            );
        }
        // The previous evicted pod's resources were reclaimed (nothing runs, volumes
        // unmounted, cgroup gone): the manager may go on (the manager's own "cleaned up" or
        // time-out transitions also end the wait).
        let reclaimed = |p: &Pod| p.running.is_empty() && !p.mounted && !p.cgroup;
        let pending = self
            .node
            .eviction_in_flight
            .filter(|u| *u != uid && !self.get(*u).is_some_and(reclaimed));
        if let Some(prev) = pending {
            self.report(
                Inv::EvictionRules,
                Some(uid),
                at,
                format!("evicted while {prev}, evicted before, still held containers, volumes or its cgroup and its cleanup wait had not ended (more than one pod per round)"),
            );
        }
        self.node.eviction_in_flight = Some(uid);
    }

    /// Kills of group `g` still in flight when `when`.
    fn kills_left_open(&mut self, at: SimTime, g: &Group, when: &str) {
        for (ch, uid) in &g.open {
            self.report(
                Inv::ShutdownKillsDoneAtGroupDeadline,
                Some(*uid),
                at,
                format!(
                    "the node-shutdown kill (channel {ch}) of group priority {} was still in flight when {when}, {} after the group started (period {}s)",
                    g.priority,
                    t(SimTime(at.0 - g.start.0)),
                    g.period_s
                ),
            );
        }
    }

    fn shutdown_group(&mut self, at: SimTime, priority: i32, period_s: i64) {
        if let Some(g) = self.node.group.take() {
            self.kills_left_open(at, &g, &format!("group priority {priority} started"));
            let elapsed = at >= g.start + Dur::secs(g.period_s.max(0) as u64);
            let open = g.kills.iter().filter(|(_, done)| !done).count();
            if priority <= g.priority {
                self.report(
                    Inv::ShutdownGroupOrder,
                    None,
                    at,
                    format!(
                        "group priority {priority} started after group priority {}",
                        g.priority
                    ),
                );
            }
            if !elapsed && open > 0 {
                self.report(
                    Inv::ShutdownGroupOrder,
                    None,
                    at,
                    format!(
                        "group priority {priority} started {} after group priority {} (period {}s) with {open} of its kills not returned",
                        t(SimTime(at.0 - g.start.0)),
                        g.priority,
                        g.period_s
                    ),
                );
            }
        }
        self.node.group = Some(Group {
            priority,
            period_s,
            start: at,
            kills: Vec::new(),
            open: Vec::new(),
        });
    }

    fn kill_pod_now(
        &mut self,
        at: SimTime,
        uid: PodUid,
        ch: u64,
        what: KillPodNowStep,
        evict: bool,
    ) {
        match what {
            KillPodNowStep::Requested => {
                self.node.kill_waits.push((ch, uid, at));
                let in_group = self.node.group.is_some();
                let p = self.pod(uid);
                if !evict && !p.worker.terminated {
                    // The last status function registered before a SyncTerminatingPod
                    // (each retry acknowledges again) wins: the shutdown manager's replaces
                    // the eviction's.
                    p.evict_status_applies = false;
                }
                if !evict && in_group {
                    p.inc.shutdown_killed = true;
                }
                if !evict {
                    if let Some(g) = self.node.group.as_mut() {
                        g.kills.push((ch, false));
                        g.open.push((ch, uid));
                    }
                }
            }
            KillPodNowStep::Closed => {
                if let Some(g) = self.node.group.as_mut() {
                    g.open.retain(|(c, _)| *c != ch);
                }
                let w = &self.pod(uid).worker;
                if !w.terminated {
                    self.report(
                        Inv::KillCompletionTruthful,
                        Some(uid),
                        at,
                        format!("killPodNow channel {ch} was closed before the pod's worker reached Terminated"),
                    );
                }
            }
            KillPodNowStep::Returned | KillPodNowStep::TimedOut => {
                if let Some(k) = self.node.kill_waits.iter().position(|k| k.0 == ch) {
                    let (_, u, since) = self.node.kill_waits.remove(k);
                    self.checked[Inv::KillPodNowReturns as usize] += 1;
                    let bound = self.kill_pod_now_bound(u);
                    if at > since + bound {
                        self.report(
                            Inv::KillPodNowReturns,
                            Some(u),
                            at,
                            format!("killPodNow (channel {ch}) returned {} after the request (bound {}s)", t(SimTime(at.0 - since.0)), bound.whole_secs()),
                        );
                    }
                }
                if let Some(g) = self.node.group.as_mut() {
                    for k in &mut g.kills {
                        if k.0 == ch {
                            k.1 = true;
                        }
                    }
                }
            }
        }
    }

    fn status_patched(&mut self, at: SimTime, obj: PodUid, of: PodUid, status: &Arc<ApiPodStatus>) {
        let phase = status.phase;
        let old = self.pod(obj).api_phase;
        let p = self.pod(of);
        let runtime_only = !p.inc.config_known;
        let running = p.running.first().copied();
        let terminated = p.worker.terminated;
        let rejected = p.inc.rejected;
        if runtime_only {
            self.report(
                Inv::RuntimePodsNoApiWrites,
                Some(of),
                at,
                "the kubelet wrote the status of a pod it knows only as a runtime pod".into(),
            );
        }
        let foreign = status.containers.iter().find_map(|c| {
            let id = c.container_id?;
            let owner = *self.node.container_owner.get(&id)?;
            (owner != of).then_some((id, owner))
        });
        if let Some((id, owner)) = foreign {
            self.report(
                Inv::ApiWritesCarryUid,
                Some(of),
                at,
                format!("the status written to {obj} (for {of}) names container {id}, a container of {owner}"),
            );
        }
        if phase.is_terminal() && !old.is_terminal() && !rejected {
            if let Some(c) = running {
                self.report(
                    Inv::NoTerminalPhaseWhileRunning,
                    Some(of),
                    at,
                    format!("the API got phase {phase} while container {c} of the pod was running"),
                );
            } else if !terminated {
                self.report(
                    Inv::NoTerminalPhaseWhileRunning,
                    Some(of),
                    at,
                    format!("the API got phase {phase} before the pod's worker reached Terminated"),
                );
            }
        }
        if old.is_terminal() && phase != old {
            if old == PodPhase::Failed && phase == PodPhase::Succeeded {
                self.report(
                    Inv::FailedNeverBecomesSucceeded,
                    Some(of),
                    at,
                    "the API phase went from Failed to Succeeded".into(),
                );
            } else {
                self.report(
                    Inv::TerminalPhaseAbsorbing,
                    Some(of),
                    at,
                    format!("the API phase went from {old} to {phase}"),
                );
            }
        }
        if phase.is_terminal() && status.ready {
            self.report(
                Inv::NoReadyWithTerminalPhase,
                Some(of),
                at,
                format!("the API shows the pod Ready with phase {phase}"),
            );
        }
        let o = self.pod(obj);
        o.api_phase = phase;
        o.api_status = Some(status.clone());
        o.api_status_at = at;
    }

    /// The kubelet's final DELETE of `uid` took effect.
    fn kubelet_deleted(&mut self, at: SimTime, uid: PodUid) {
        let p = self.pod(uid);
        let mut missing = Vec::new();
        if !p.worker.terminated_sync_ok {
            missing.push("SyncTerminatedPod has not succeeded");
        }
        if p.mounted {
            missing.push("volumes are still mounted");
        }
        if p.cgroup {
            missing.push("the pod cgroup still exists");
        }
        if !p.api_phase.is_terminal() {
            missing.push("the API phase is not terminal");
        }
        if p.deleted_at.is_none() {
            missing.push("the pod has no deletion timestamp");
        }
        let runtime_only = !p.inc.config_known;
        if !missing.is_empty() {
            self.report(
                Inv::DeleteOnlyAfterReclamation,
                Some(uid),
                at,
                format!(
                    "the kubelet deleted the pod object, yet {}",
                    missing.join(", ")
                ),
            );
        }
        if runtime_only {
            self.report(
                Inv::RuntimePodsNoApiWrites,
                Some(uid),
                at,
                "the kubelet deleted the object of a pod it knows only as a runtime pod".into(),
            );
        }
    }

    /// Final container status fidelity, on the object's last status (`at`: the object was
    /// removed, or the run ended).
    fn check_final_status(&mut self, at: SimTime, obj: PodUid) {
        let Some(o) = self.get(obj) else {
            return;
        };
        let Some(status) = o.api_status.clone() else {
            return;
        };
        if !status.phase.is_terminal() {
            return;
        }
        let written = o.api_status_at;
        let of = o.mirror_of.unwrap_or(obj);
        let Some(p) = self.get(of) else {
            return;
        };
        // A kubelet restart between an exit and the write may lose what it saw.
        let restarted = |since: SimTime| self.node.crashes_at.iter().any(|c| *c >= since);
        let mut bad = Vec::new();
        for c in &status.containers {
            let ApiContainerState::Terminated {
                exit_code, reason, ..
            } = c.state
            else {
                continue;
            };
            let unknown = reason == "ContainerStatusUnknown";
            if exit_code == 0
                && !unknown
                && c.container_id.is_none()
                && !p
                    .instances
                    .iter()
                    .any(|i| i.name == c.name && matches!(i.exit, Some((0, _))))
            {
                // Success reported for a container none of whose instances exited 0 (the
                // default state TerminatePod gave unobserved containers before PR 88440).
                bad.push(format!(
                    "container {} never exited 0, the API says it terminated with exit code 0",
                    c.name
                ));
                continue;
            }
            if let Some(inst) = c
                .container_id
                .and_then(|id| p.instance(id))
                .filter(|_| !unknown)
            {
                if let Some((code, _)) = inst.exit.filter(|(code, _)| *code != exit_code) {
                    bad.push(format!(
                        "container {} ({}) exited with {code}, the API says {exit_code}",
                        c.name, inst.id
                    ));
                }
                continue;
            }
            if unknown {
                // TerminatePod's 137/ContainerStatusUnknown for a container that was not
                // terminated (waiting, e.g. in back-off, or never seen): fine when the real
                // exit of its newest instance is in the last termination state, or could
                // not have been seen: it exited just before the write, was removed, a
                // kubelet restart came since, or a failed StartContainer since left created
                // containers that push it out of the two newest the status is built from.
                let newest = p.instances.iter().rev().find(|i| i.name == c.name);
                let in_last_state = |code: i32| {
                    matches!(
                        c.last_state,
                        Some(ApiContainerState::Terminated { exit_code, .. }) if exit_code == code
                    )
                };
                if let Some(i) = newest {
                    if let Some((code, when)) = i.exit {
                        if !in_last_state(code)
                            && !p.start_errors.iter().any(|e| *e >= when)
                            && when + OBSERVABLE_AFTER <= written
                            && i.removed_at.is_none_or(|r| r > written)
                            && !restarted(when)
                        {
                            let last = match &c.last_state {
                                Some(ApiContainerState::Terminated { exit_code, .. }) => {
                                    format!("exit code {exit_code}")
                                }
                                Some(ApiContainerState::Running { .. }) => "running".into(),
                                Some(ApiContainerState::Waiting { reason }) => {
                                    format!("waiting ({reason})")
                                }
                                None => "none".into(),
                            };
                            bad.push(format!(
                                "container {} ({}) exited with {code} at {}, the API says ContainerStatusUnknown (last state: {last})",
                                c.name,
                                i.id,
                                t(when)
                            ));
                        }
                    }
                }
            }
        }
        if !bad.is_empty() {
            self.report(
                Inv::FinalContainerStatusFidelity,
                Some(of),
                at,
                format!(
                    "the final {} status written at {}: {}",
                    status.phase,
                    t(written),
                    bad.join("; ")
                ),
            );
        }
    }

    /// Drop what the oracle kept per pod and for the node (histories included), keeping
    /// the findings and the counters: after [`Oracle::finish`] nothing else reads them, and
    /// freeing them first keeps a large run's peak memory down while its summary is built.
    pub fn release_pod_state(&mut self) {
        self.pods = Vec::new();
        self.node = Node::default();
    }

    /// End of the run at `end`: the end-of-run safety checks and every liveness property.
    pub fn finish(&mut self, end: SimTime) {
        if !self.on {
            return;
        }
        self.node_liveness(end);
        let n = self.pods.len();
        for i in 0..n {
            let uid = PodUid(i as u32);
            if self.pods[i].spec.is_none() {
                continue;
            }
            if self.pods[i].removed_at.is_none() {
                self.check_final_status(end, uid);
            }
            self.final_eviction_status(end, uid);
            self.liveness(end, uid);
        }
    }

    /// Node-level liveness at the end: L8, L9, L10, C13.
    fn node_liveness(&mut self, end: SimTime) {
        if self.node.kubelet_down {
            return;
        }
        self.not_ready_check(end);
        if self.node.power_off_at.is_some() {
            return;
        }
        if let Some(due) = self.node.shutdown_due {
            if due + STEP_SLACK <= end {
                self.checked[Inv::NodeShutdownCompletes as usize] += 1;
                self.report(
                    Inv::NodeShutdownCompletes,
                    None,
                    end,
                    format!("the graceful node shutdown's next step was due by {} and has not come by {}", t(due), t(end)),
                );
            }
        }
        if let Some((u, since)) = self.node.eviction_wait_since {
            if since + EVICTION_REEVAL_BOUND <= end {
                self.checked[Inv::EvictionReevaluates as usize] += 1;
                self.report(
                    Inv::EvictionReevaluates,
                    Some(u),
                    end,
                    format!("the eviction's kill returned at {}, yet the manager has not evaluated again by {}", t(since), t(end)),
                );
            }
        }
        for (ch, u, since) in self.node.kill_waits.clone() {
            let bound = self.kill_pod_now_bound(u);
            if since + bound <= end {
                self.checked[Inv::KillPodNowReturns as usize] += 1;
                self.report(
                    Inv::KillPodNowReturns,
                    Some(u),
                    end,
                    format!("killPodNow (channel {ch}) requested at {} has not returned by {} (bound {}s)", t(since), t(end), bound.whole_secs()),
                );
            }
        }
    }

    fn final_eviction_status(&mut self, end: SimTime, uid: PodUid) {
        let p = &self.pods[uid.0 as usize];
        let Some(ev) = p.evicted_at else {
            return;
        };
        if !p.evict_status_applies {
            return; // a SyncTerminatingPod already running never applies the status function
        }
        if self.node.crashes_at.iter().any(|c| *c >= ev) {
            return; // the new kubelet knows nothing of the eviction
        }
        let Some(status) = p.api_status.clone() else {
            return;
        };
        if !status.phase.is_terminal() || p.api_status_at < ev {
            return;
        }
        // v1.31 recomputes the phase once the containers stopped: every container (its
        // newest instance) exited 0 gives Succeeded, whatever the status function said.
        let all_zero = p.spec.as_ref().is_some_and(|s| {
            s.containers.iter().all(|c| {
                p.instances
                    .iter()
                    .rev()
                    .find(|i| i.name == c.name)
                    .and_then(|i| i.exit)
                    .is_some_and(|(code, _)| code == 0)
            })
        });
        let evicted =
            status.phase == PodPhase::Failed && status.reason.as_deref() == Some("Evicted");
        if !(evicted || status.phase == PodPhase::Succeeded && all_zero) {
            self.report(
                Inv::EvictionRules,
                Some(uid),
                end,
                format!(
                    "the pod was evicted at {}, yet its final API status is {} ({})",
                    t(ev),
                    status.phase,
                    status.reason.as_deref().unwrap_or("no reason")
                ),
            );
        }
    }

    /// The liveness properties of one pod at the end of the run.
    fn liveness(&mut self, end: SimTime, uid: PodUid) {
        if self.node.power_off_at.is_some() || self.node.kubelet_down {
            return;
        }
        let up_since = self.node.kubelet_started_at;
        let p = &self.pods[uid.0 as usize];
        if p.mirror_of.is_some() {
            return;
        }
        let grace = Dur::secs(
            p.max_grace
                .max(p.spec_grace())
                .max(p.worker.last_grace.unwrap_or(0))
                .max(0) as u64,
        );
        // Whether `bound` after `start` (and after the kubelet last started) fits before the end.
        let due = |start: SimTime, bound: Dur| -> Option<SimTime> {
            let start = start.max(up_since);
            let deadline = start + bound + Dur(PER_ERROR.0 * p.errors_since(start));
            (deadline <= end).then_some(start)
        };
        let mut found: Vec<(Inv, String)> = Vec::new();
        let mut checked: Vec<Inv> = Vec::new();
        let running = p.running.first().copied();
        // L1 / L3: the kubelet saw the deletion.
        if let Some(seen) = p.inc.saw_delete_at {
            let start = match (p.inc.inflight_sync_open, p.inc.inflight_sync_end) {
                (true, _) => None, // the SyncPod in flight never ended: unbounded
                (false, Some(e)) => Some(e.max(seen)),
                (false, None) => Some(seen),
            };
            if let Some(s) = start.and_then(|s| due(s, grace + SLACK)) {
                checked.push(Inv::DeletedPodStops);
                if let Some(c) = running {
                    found.push((
                        Inv::DeletedPodStops,
                        format!(
                            "the kubelet saw the deletion at {}, yet container {c} still runs at {} (bound from {}: grace {}s + {}s + {}s per error)",
                            t(seen),
                            t(end),
                            t(s),
                            grace.whole_secs(),
                            SLACK.whole_secs(),
                            PER_ERROR.whole_secs()
                        ),
                    ));
                }
                if p.graceful_delete && !p.static_pod {
                    checked.push(Inv::DeletedPodRemovedFromApi);
                }
                if p.graceful_delete && p.removed_at.is_none() && !p.static_pod {
                    found.push((
                        Inv::DeletedPodRemovedFromApi,
                        format!(
                            "deleted gracefully, seen by the kubelet at {}, yet the object is still in the API at {} (phase {})",
                            t(seen),
                            t(end),
                            p.api_phase
                        ),
                    ));
                }
            }
        }
        // L4: a termination in progress finishes.
        if let Some(req) = p.inc.term_requested_at {
            if let Some(s) = due(req, grace + SLACK) {
                checked.push(Inv::TerminationFinishes);
                let w = &p.worker;
                found.push((
                    Inv::TerminationFinishes,
                    format!(
                        "termination requested at {} (counted from {}) has not finished at {} (worker: acknowledged {}, terminated {}, open sync {:?})",
                        t(req),
                        t(s),
                        t(end),
                        w.term_acked,
                        w.terminated,
                        w.open_sync
                    ),
                ));
            }
        }
        // L6: a pod the kubelet knows only as a runtime pod is killed with grace 1
        // (SyncTerminatingRuntimePod), so every container gets the 2 s minimum.
        let runtime_grace = Dur::secs(2);
        if let Some(seen) = p.inc.runtime_only_at {
            if !p.inc.config_known && due(seen, runtime_grace + SLACK).is_some() {
                checked.push(Inv::OrphanedRuntimePodsDie);
            }
        }
        if let (Some(seen), Some(c)) = (p.inc.runtime_only_at, running) {
            if !p.inc.config_known && due(seen, runtime_grace + SLACK).is_some() {
                found.push((
                    Inv::OrphanedRuntimePodsDie,
                    format!(
                        "first seen as a runtime pod at {}, yet container {c} still runs at {}",
                        t(seen),
                        t(end)
                    ),
                ));
            }
        }
        // L2: terminal in the API after the containers stopped.
        if let Some(tt) = p.inc.terminated_at {
            let eligible = p.inc.config_known
                && !p.static_pod
                && !p.inc.rejected
                && p.removed_at.is_none()
                && !p.inc.out_of_config;
            if let Some(s) = eligible.then(|| due(tt, SLACK)).flatten() {
                checked.push(Inv::TerminalInApiAfterStop);
                if !p.api_phase.is_terminal() {
                    found.push((
                        Inv::TerminalInApiAfterStop,
                        format!(
                            "the pod's worker reached Terminated at {}, yet the API phase is {} at {} (bound from {}: {}s + {}s per error)",
                            t(tt),
                            p.api_phase,
                            t(end),
                            t(s),
                            SLACK.whole_secs(),
                            PER_ERROR.whole_secs()
                        ),
                    ));
                }
            }
        }
        // L11: a liveness/startup failure of a running container kills it.
        if let (Some((s, id)), false) = (p.worker.lv_fail, p.worker.lv_wait_sync) {
            let terminating = p.worker.term_requested || p.inc.saw_delete_at.is_some();
            if !terminating {
                if let Some(from) = due(s, SLACK) {
                    checked.push(Inv::LivenessFailureKills);
                    if p.running.contains(&id) {
                        found.push((
                            Inv::LivenessFailureKills,
                            format!(
                                "container {id} got a liveness/startup Failure at {}, yet still runs at {} (bound from {}: {}s + {}s per error)",
                                t(s),
                                t(end),
                                t(from),
                                SLACK.whole_secs(),
                                PER_ERROR.whole_secs()
                            ),
                        ));
                    }
                }
            }
        }
        // C7: a static pod whose manifest is on the node runs.
        if let Some(since) = p.desired_since {
            let full = Self::static_full_name(p);
            let mut others_running = false;
            let mut others_exit: Option<SimTime> = None;
            for (i, q) in self.pods.iter().enumerate() {
                if i == uid.0 as usize || Self::static_full_name(q) != full {
                    continue;
                }
                others_running |= !q.running.is_empty();
                others_exit = others_exit.max(q.last_exit_at);
            }
            let eligible = !others_running
                && self.node.shutdown_started.is_none()
                && !p.inc.rejected
                && p.mirror_of.is_none();
            let start = others_exit.map_or(since, |e| e.max(since));
            if let Some(s) = eligible.then(|| due(start, SLACK)).flatten() {
                checked.push(Inv::DesiredStaticPodRuns);
                if p.last_started_at.is_none_or(|t| t < since) {
                    found.push((
                        Inv::DesiredStaticPodRuns,
                        format!(
                            "the manifest has been on the node since {}, yet no container of the pod started by {} (bound from {}: {}s + {}s per error)",
                            t(since),
                            t(end),
                            t(s),
                            SLACK.whole_secs(),
                            PER_ERROR.whole_secs()
                        ),
                    ));
                }
            }
        }
        // L7: natural completion.
        if let Some(last) = p.last_exit_at {
            if let Some(spec) = p.spec.as_ref() {
                let all_ran_and_exited = running.is_none()
                    && spec.containers.iter().all(|c| {
                        p.instances
                            .iter()
                            .any(|i| i.name == c.name && i.exit.is_some())
                    });
                let final_exits_zero = spec.containers.iter().all(|c| {
                    p.instances
                        .iter()
                        .rev()
                        .find(|i| i.name == c.name)
                        .and_then(|i| i.exit)
                        .is_some_and(|(code, _)| code == 0)
                });
                let completes = match spec.restart_policy {
                    RestartPolicy::Never => true,
                    RestartPolicy::OnFailure => final_exits_zero,
                    RestartPolicy::Always => false,
                };
                let eligible = completes
                    && all_ran_and_exited
                    && spec.init_containers.is_empty()
                    && !p.static_pod
                    && p.deleted_at.is_none()
                    && p.evicted_at.is_none()
                    && p.inc.config_known
                    && !p.inc.rejected;
                if eligible && due(last, SLACK).is_some() {
                    checked.push(Inv::NaturalCompletion);
                    if !p.api_phase.is_terminal() {
                        found.push((
                            Inv::NaturalCompletion,
                            format!(
                                "every container exited (the last at {}) and restartPolicy {} restarts none, yet the API phase is {} at {}",
                                t(last),
                                spec.restart_policy.as_str(),
                                p.api_phase,
                                t(end)
                            ),
                        ));
                    } else if !p.worker.finished {
                        found.push((
                            Inv::NaturalCompletion,
                            format!(
                                "every container exited (the last at {}) and the pod is {}, yet its worker has not finished at {}",
                                t(last),
                                p.api_phase,
                                t(end)
                            ),
                        ));
                    }
                }
            }
        }
        for inv in checked {
            self.checked[inv as usize] += 1;
        }
        for (inv, what) in found {
            self.report(inv, Some(uid), end, what);
        }
    }

    /// How many pods each liveness property was checked for (had enough time) at the end.
    pub fn liveness_checked(&self, inv: Inv) -> u64 {
        self.checked.get(inv as usize).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests;
