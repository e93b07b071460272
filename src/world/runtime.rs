//! The simulated container runtime behind a CRI-shaped interface: sandboxes, image pulls,
//! container create/start/stop, pod status and relist, each with its latency distribution
//! and injectable faults. Container processes behave as the scenario's `behaviour` says.
//!
//! Follows the CRI `RuntimeService`/`ImageService` contract (cri-api v1, as described in
//! kubelet-model.md section 9). Deliberate simplifications: a call's effect happens when
//! the call completes (after its latency), except `StopContainer`, which signals the
//! process when the request arrives and returns when the process has exited; exited
//! removed containers disappear from `GetPodStatus` but are kept for the run summary; a faulty call fails without effect.

use super::dist::sample;
use super::stats::{PodStats, StatsSummary};
use super::{CriClient, Event};
use crate::model::{
    Behaviour, ContainerId, CriCall, CriError, Dist, OnSigterm, PodUid, ProbeHandler, ProbeOutcome,
    ProbeType, RtContainer, RtPodStatus, RtSandbox, RtState, RunFor, RunningPod, SandboxId,
    Transition,
};
use crate::model::{CriFailed, CriFailure, CriOp};
use crate::model::{HostOp, ProcessSignal};
use crate::scenario::Fault;
use crate::sim::{Dur, Sim, SimTime, Stream};
use crate::world::Trace;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A CRI request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CriReq {
    RunPodSandbox {
        uid: PodUid,
        name: String,
        namespace: String,
        attempt: u32,
    },
    /// `PullImage` (after the image manager's presence check).
    PullImage {
        uid: PodUid,
        image: String,
        always: bool,
    },
    CreateContainer {
        uid: PodUid,
        sandbox: SandboxId,
        name: String,
        attempt: u32,
    },
    StartContainer {
        uid: PodUid,
        id: ContainerId,
    },
    /// Stop with a SIGTERM-to-SIGKILL timeout in seconds.
    StopContainer {
        uid: PodUid,
        id: ContainerId,
        timeout_s: i64,
    },
    /// Run the container's preStop hook (ExecSync) and wait for it.
    ExecPreStop {
        uid: PodUid,
        id: ContainerId,
    },
    StopPodSandbox {
        uid: PodUid,
        id: SandboxId,
    },
    /// Remove a container (force-removing it if it still runs).
    RemoveContainer {
        uid: PodUid,
        id: ContainerId,
    },
    /// Host: create the pod's data dirs and cgroup and mount its volumes.
    MountVolumes {
        uid: PodUid,
    },
    /// Host: unmount the pod's volumes.
    UnmountVolumes {
        uid: PodUid,
    },
    /// Host: destroy the pod cgroup (killing any process still in it).
    RemovePodCgroup {
        uid: PodUid,
    },
    /// Host: remove the pod directory (refused while volumes are mounted).
    RemovePodDir {
        uid: PodUid,
    },
    /// `GetPodStatus` for one pod.
    PodStatus {
        uid: PodUid,
    },
    /// PLEG relist: list everything, then inspect pods that changed plus `reinspect`
    /// (every pod the runtime knows when `all`: a PLEG without a previous view, such as a
    /// restarted kubelet's, sees every container as new).
    Relist {
        reinspect: Vec<PodUid>,
        all: bool,
        /// The list is taken when the call is issued and the inspections run when it
        /// completes (`plegTimestampBeforeList: false`): what changed in between is missing
        /// from the inspected statuses and waits for the next relist.
        list_first: bool,
    },
}

impl CriReq {
    pub fn call(&self) -> CriCall {
        match self {
            CriReq::RunPodSandbox { .. } => CriCall::RunPodSandbox,
            CriReq::PullImage { .. } => CriCall::PullImage,
            CriReq::CreateContainer { .. } => CriCall::CreateContainer,
            CriReq::StartContainer { .. } => CriCall::StartContainer,
            CriReq::StopContainer { .. } | CriReq::ExecPreStop { .. } => CriCall::StopContainer,
            CriReq::StopPodSandbox { .. } => CriCall::StopPodSandbox,
            CriReq::RemoveContainer { .. } => CriCall::RemoveContainer,
            CriReq::MountVolumes { .. } => CriCall::MountVolumes,
            CriReq::UnmountVolumes { .. } => CriCall::UnmountVolumes,
            CriReq::RemovePodCgroup { .. } => CriCall::RemovePodCgroup,
            CriReq::RemovePodDir { .. } => CriCall::RemovePodDir,
            CriReq::PodStatus { .. } | CriReq::Relist { .. } => CriCall::PodStatus,
        }
    }
    fn name(&self) -> CriOp {
        match self {
            CriReq::RunPodSandbox { .. } => CriOp::RunPodSandbox,
            CriReq::PullImage { .. } => CriOp::PullImage,
            CriReq::CreateContainer { .. } => CriOp::CreateContainer,
            CriReq::StartContainer { .. } => CriOp::StartContainer,
            CriReq::StopContainer { .. } => CriOp::StopContainer,
            CriReq::ExecPreStop { .. } => CriOp::ExecPreStop,
            CriReq::StopPodSandbox { .. } => CriOp::StopPodSandbox,
            CriReq::RemoveContainer { .. } => CriOp::RemoveContainer,
            CriReq::MountVolumes { .. } => CriOp::MountVolumes,
            CriReq::UnmountVolumes { .. } => CriOp::UnmountVolumes,
            CriReq::RemovePodCgroup { .. } => CriOp::RemovePodCgroup,
            CriReq::RemovePodDir { .. } => CriOp::RemovePodDir,
            CriReq::PodStatus { .. } => CriOp::PodStatus,
            CriReq::Relist { .. } => CriOp::Relist,
        }
    }
    fn uid_target(&self) -> (PodUid, u32) {
        match self {
            CriReq::RunPodSandbox { uid, attempt, .. } => (*uid, *attempt),
            CriReq::PullImage { uid, .. } => (*uid, 0),
            CriReq::CreateContainer { uid, attempt, .. } => (*uid, *attempt),
            CriReq::StartContainer { uid, id } => (*uid, id.0),
            CriReq::StopContainer { uid, id, .. } => (*uid, id.0),
            CriReq::ExecPreStop { uid, id } => (*uid, id.0),
            CriReq::StopPodSandbox { uid, id } => (*uid, id.0),
            CriReq::RemoveContainer { uid, id } => (*uid, id.0),
            CriReq::MountVolumes { uid }
            | CriReq::UnmountVolumes { uid }
            | CriReq::RemovePodCgroup { uid }
            | CriReq::RemovePodDir { uid } => (*uid, 0),
            CriReq::PodStatus { uid } => (*uid, 0),
            CriReq::Relist { .. } => (PodUid(0), 0),
        }
    }
    fn traced(&self) -> bool {
        !matches!(self, CriReq::Relist { .. } | CriReq::PodStatus { .. })
    }
}

/// The result of a CRI call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CriResult {
    Ok,
    Err(CriError),
    /// The call failed for a reason of the runtime's state (not an injected fault).
    Failed(CriFailed),
    SandboxCreated(SandboxId),
    ContainerCreated(ContainerId),
    PodStatus(Arc<RtPodStatus>),
    /// Per inspected pod: its status, or the error of its inspection.
    Relist(Vec<(PodUid, Result<Arc<RtPodStatus>, CriError>)>),
}

impl CriResult {
    pub fn error(&self) -> Option<&'static str> {
        self.failure().map(CriFailure::as_str)
    }
    /// How the call failed, if it did.
    pub fn failure(&self) -> Option<CriFailure> {
        match self {
            CriResult::Err(e) => Some(CriFailure::Code(*e)),
            CriResult::Failed(m) => Some(CriFailure::Failed(*m)),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
struct Container {
    uid: PodUid,
    sandbox: SandboxId,
    name: String,
    attempt: u32,
    state: RtState,
    exit_code: i32,
    reason: &'static str,
    created_at: SimTime,
    started_at: Option<SimTime>,
    finished_at: Option<SimTime>,
    behaviour: Behaviour,
    /// Bumped whenever scheduled process events become stale.
    gen: u32,
    sigterm_at: Option<SimTime>,
    /// Removed from the runtime (kept here only for the run summary).
    removed: bool,
    /// Callers of `StopContainer` waiting for the exit.
    stop_waiters: Vec<(CriClient, CriReq)>,
    /// Still running when the node powered off.
    powered_off: bool,
}

#[derive(Clone, Debug)]
struct Sandbox {
    uid: PodUid,
    ready: bool,
    attempt: u32,
    created_at: SimTime,
}

#[derive(Clone, Debug, Default)]
struct RtPod {
    name: String,
    namespace: String,
    sandboxes: Vec<SandboxId>,
    containers: Vec<ContainerId>,
}

/// The node's host state of one pod: volumes, pod cgroup, pod directory, and when each
/// went away (ground truth).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostState {
    pub volumes_mounted: bool,
    pub cgroup: bool,
    pub pod_dir: bool,
    pub mounted_at: Option<SimTime>,
    pub unmounted_at: Option<SimTime>,
    pub cgroup_removed_at: Option<SimTime>,
    pub pod_dir_removed_at: Option<SimTime>,
    /// Containers that were still running when the pod cgroup was destroyed.
    pub killed_by_cgroup_removal: u32,
}

/// What one container instance did, for the run summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerFacts {
    pub name: String,
    pub started: bool,
    pub running: bool,
    pub exit_code: Option<i32>,
    pub killed: bool,
    pub started_at: Option<SimTime>,
    pub finished_at: Option<SimTime>,
    pub sigterm_at: Option<SimTime>,
    /// Still running when the node powered off (killed with the node).
    pub powered_off: bool,
}

/// Ground truth of the node's containers.
#[derive(Clone, Debug)]
pub struct Runtime {
    latencies: BTreeMap<CriCall, Dist>,
    faults: Vec<Fault>,
    lat_rng: Stream,
    fault_rng: Stream,
    /// Draws of `failureRatio` probe outcomes.
    probe_rng: Stream,
    sandboxes: BTreeMap<SandboxId, Sandbox>,
    containers: BTreeMap<ContainerId, Container>,
    pods: BTreeMap<PodUid, RtPod>,
    images: BTreeSet<String>,
    workloads: BTreeMap<PodUid, Arc<BTreeMap<String, Behaviour>>>,
    /// Host state per pod (volumes, cgroup, pod dir).
    pub host: BTreeMap<PodUid, HostState>,
    /// Pods whose state changed since the last relist (what a generic relist would find
    /// by diffing; keeping the set avoids re-reading unchanged pods).
    changed: BTreeSet<PodUid>,
    /// A `list_first` relist's listing: the pods to inspect, and the sandboxes and
    /// containers each had when it was listed.
    listed: Option<Listed>,
    next_container: u32,
    next_sandbox: u32,
    /// Containers killed by SIGKILL at the end of their grace period.
    pub sigkills: u64,
    /// Stop replies released by a host operation; the world delivers them after it.
    pub deferred: Vec<(CriClient, CriReq, CriResult)>,
    /// The node's memory capacity (for the stats summary).
    pub node_memory_bytes: u64,
    /// `memory.available` set by a `memoryPressure` action (see `world::stats`).
    pub memory_available_override: Option<u64>,
}

/// What a `list_first` relist listed (see [`CriReq::Relist`]).
#[derive(Clone, Debug, Default)]
pub struct Listed {
    pods: BTreeSet<PodUid>,
    members: BTreeMap<PodUid, (BTreeSet<SandboxId>, BTreeSet<ContainerId>)>,
}

/// Events the runtime schedules for itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RtEvent {
    /// The process exits on its own (run time over, or SIGTERM handled).
    ProcExit {
        id: ContainerId,
        gen: u32,
        code: i32,
        reason: &'static str,
    },
    /// The stop timeout expired: SIGKILL.
    Sigkill { id: ContainerId, gen: u32 },
}

impl Runtime {
    pub fn new(seed: u64, latencies: BTreeMap<CriCall, Dist>, faults: Vec<Fault>) -> Self {
        Runtime {
            latencies,
            faults,
            lat_rng: Stream::new(seed, "runtime/latency"),
            fault_rng: Stream::new(seed, "runtime/faults"),
            probe_rng: Stream::new(seed, "runtime/probes"),
            sandboxes: BTreeMap::new(),
            containers: BTreeMap::new(),
            pods: BTreeMap::new(),
            images: BTreeSet::new(),
            workloads: BTreeMap::new(),
            host: BTreeMap::new(),
            changed: BTreeSet::new(),
            listed: None,
            next_container: 1,
            next_sandbox: 1,
            sigkills: 0,
            deferred: Vec::new(),
            node_memory_bytes: 0,
            memory_available_override: None,
        }
    }

    /// Tell the runtime what the containers of a pod do (the workload, not the kubelet).
    pub fn register_workload(&mut self, uid: PodUid, b: Arc<BTreeMap<String, Behaviour>>) {
        self.workloads.insert(uid, b);
    }

    fn latency(&mut self, call: CriCall) -> Dur {
        match self.latencies.get(&call) {
            Some(d) => sample(d, &mut self.lat_rng),
            None => Dur::ZERO,
        }
    }

    fn fault(&mut self, call: CriCall, now: SimTime) -> Option<CriError> {
        let mut hit = None;
        for i in 0..self.faults.len() {
            let f = &self.faults[i];
            let active = now.0 >= f.from.0 && f.until.is_none_or(|u| now.0 < u.0);
            if f.call == call && active {
                let ppm = self.faults[i].probability_ppm;
                if self.fault_rng.chance_ppm(ppm) && hit.is_none() {
                    hit = Some(self.faults[i].error);
                }
            }
        }
        hit
    }

    /// Issue a CRI call; its completion arrives as `Event::CriComplete`.
    pub fn issue(
        &mut self,
        sim: &mut Sim<Event>,
        trace: &mut Trace,
        caller: CriClient,
        req: CriReq,
    ) {
        let (uid, target) = req.uid_target();
        if req.traced() {
            trace.emit(
                sim.now(),
                &Transition::CriBegin {
                    uid,
                    call: req.name(),
                    target,
                    timeout_s: match &req {
                        CriReq::StopContainer { timeout_s, .. } => Some(*timeout_s),
                        _ => None,
                    },
                },
            );
        }
        if let CriReq::Relist {
            reinspect,
            all,
            list_first: true,
        } = &req
        {
            let mut pods: BTreeSet<PodUid> = std::mem::take(&mut self.changed);
            pods.extend(reinspect.iter().copied());
            if *all {
                pods.extend(self.pods.keys().copied());
            }
            let members = pods
                .iter()
                .filter_map(|u| self.pods.get(u).map(|p| (*u, p)))
                .map(|(u, p)| {
                    let sandboxes = p.sandboxes.iter().copied().collect();
                    let containers = p.containers.iter().copied().collect();
                    (u, (sandboxes, containers))
                })
                .collect();
            self.listed = Some(Listed { pods, members });
        }
        let (delay, fault) = match &req {
            CriReq::ExecPreStop { id, .. } => {
                let d = self
                    .containers
                    .get(id)
                    .map(|c| c.behaviour.pre_stop_duration)
                    .unwrap_or(Dur::ZERO);
                (d, None)
            }
            CriReq::Relist { .. } => (self.latency(CriCall::PodStatus), None),
            // The image manager's presence check: a present image needs no pull.
            CriReq::PullImage {
                image,
                always: false,
                ..
            } if self.images.contains(image) => (Dur::ZERO, None),
            other => {
                let call = other.call();
                (self.latency(call), self.fault(call, sim.now()))
            }
        };
        let _ = sim.after(delay, Event::CriComplete { caller, req, fault });
    }

    /// A call completes: apply its effect. `None` means the reply comes later (a stop
    /// waits for the process to exit).
    pub fn complete(
        &mut self,
        sim: &mut Sim<Event>,
        trace: &mut Trace,
        caller: CriClient,
        req: CriReq,
        fault: Option<CriError>,
    ) -> Option<CriResult> {
        let now = sim.now();
        let result = if let Some(e) = fault {
            CriResult::Err(e)
        } else {
            match &req {
                CriReq::RunPodSandbox {
                    uid,
                    name,
                    namespace,
                    attempt,
                } => {
                    let id = SandboxId(self.next_sandbox);
                    self.next_sandbox += 1;
                    self.sandboxes.insert(
                        id,
                        Sandbox {
                            uid: *uid,
                            ready: true,
                            attempt: *attempt,
                            created_at: now,
                        },
                    );
                    let pod = self.pods.entry(*uid).or_default();
                    pod.name.clone_from(name);
                    pod.namespace.clone_from(namespace);
                    pod.sandboxes.push(id);
                    self.changed.insert(*uid);
                    trace.emit(now, &Transition::SandboxReady { uid: *uid, id });
                    CriResult::SandboxCreated(id)
                }
                CriReq::PullImage { uid, image, always } => {
                    let ppm = self.image_failure_ppm(*uid, image);
                    if !*always && self.images.contains(image) {
                        CriResult::Ok
                    } else if self.fault_rng.chance_ppm(ppm) {
                        CriResult::Failed(CriFailed::ErrImagePull)
                    } else {
                        self.images.insert(image.clone());
                        CriResult::Ok
                    }
                }
                CriReq::CreateContainer {
                    uid,
                    sandbox,
                    name,
                    attempt,
                } => match self.sandboxes.get(sandbox) {
                    Some(sb) if sb.ready => {
                        let id = ContainerId(self.next_container);
                        self.next_container += 1;
                        let behaviour = self
                            .workloads
                            .get(uid)
                            .and_then(|w| w.get(name))
                            .cloned()
                            .unwrap_or_default();
                        self.containers.insert(
                            id,
                            Container {
                                uid: *uid,
                                sandbox: *sandbox,
                                name: name.clone(),
                                attempt: *attempt,
                                state: RtState::Created,
                                exit_code: 0,
                                reason: "",
                                created_at: now,
                                started_at: None,
                                finished_at: None,
                                behaviour,
                                gen: 0,
                                sigterm_at: None,
                                removed: false,
                                stop_waiters: Vec::new(),
                                powered_off: false,
                            },
                        );
                        self.pods.entry(*uid).or_default().containers.push(id);
                        self.changed.insert(*uid);
                        CriResult::ContainerCreated(id)
                    }
                    _ => CriResult::Failed(CriFailed::SandboxNotReady),
                },
                CriReq::StartContainer { uid, id } => {
                    let ok = matches!(self.containers.get(id), Some(c) if c.state == RtState::Created
                        && self.sandboxes.get(&c.sandbox).is_some_and(|s| s.ready));
                    if ok {
                        let c = self.containers.get_mut(id).expect("checked");
                        c.state = RtState::Running;
                        c.started_at = Some(now);
                        let name = c.name.clone();
                        if let RunFor::For(d) = c.behaviour.run_for {
                            let (gen, code) = (c.gen, c.behaviour.exit_code);
                            let reason = if code == 0 { "Completed" } else { "Error" };
                            let _ = sim.after(
                                d,
                                Event::Runtime(RtEvent::ProcExit {
                                    id: *id,
                                    gen,
                                    code,
                                    reason,
                                }),
                            );
                        }
                        self.changed.insert(*uid);
                        trace.emit(
                            now,
                            &Transition::ContainerRunning {
                                uid: *uid,
                                id: *id,
                                name,
                            },
                        );
                        CriResult::Ok
                    } else {
                        CriResult::Failed(CriFailed::ContainerNotCreated)
                    }
                }
                CriReq::StopContainer { uid, id, timeout_s } => {
                    let Some(c) = self.containers.get_mut(id) else {
                        // NotFound counts as success for the kubelet.
                        return Some(self.finish(sim, trace, &req, CriResult::Ok));
                    };
                    if c.state != RtState::Running {
                        if c.state == RtState::Created {
                            c.state = RtState::Exited;
                            c.finished_at = Some(now);
                            self.changed.insert(*uid);
                        }
                        return Some(self.finish(sim, trace, &req, CriResult::Ok));
                    }
                    c.stop_waiters.push((caller, req.clone()));
                    if c.sigterm_at.is_none() {
                        c.sigterm_at = Some(now);
                        trace.emit(
                            now,
                            &Transition::Signal {
                                uid: *uid,
                                id: *id,
                                signal: ProcessSignal::Sigterm,
                            },
                        );
                        c.gen += 1;
                        let gen = c.gen;
                        let timeout = Dur::secs((*timeout_s).max(0) as u64);
                        match c.behaviour.on_sigterm {
                            OnSigterm::ExitAfter { after, exit_code } if after < timeout => {
                                let reason = if exit_code == 0 { "Completed" } else { "Error" };
                                let _ = sim.after(
                                    after,
                                    Event::Runtime(RtEvent::ProcExit {
                                        id: *id,
                                        gen,
                                        code: exit_code,
                                        reason,
                                    }),
                                );
                            }
                            _ => {
                                let _ = sim.after(
                                    timeout,
                                    Event::Runtime(RtEvent::Sigkill { id: *id, gen }),
                                );
                            }
                        }
                    }
                    return None;
                }
                CriReq::ExecPreStop { .. } => CriResult::Ok,
                CriReq::StopPodSandbox { uid, id } => {
                    let victims = self.running_containers(*uid, Some(*id));
                    for cid in victims {
                        self.exit(sim, trace, cid, 137, "Error");
                    }
                    if let Some(sb) = self.sandboxes.get_mut(id) {
                        if sb.ready {
                            sb.ready = false;
                            self.changed.insert(*uid);
                            trace.emit(now, &Transition::SandboxStopped { uid: *uid, id: *id });
                        }
                    }
                    CriResult::Ok
                }
                CriReq::RemoveContainer { uid, id } => {
                    let running = self
                        .containers
                        .get(id)
                        .is_some_and(|c| c.state == RtState::Running && !c.removed);
                    if running {
                        // Replies to stop callers are not expected here: the kubelet only
                        // removes exited containers.
                        let _ = self.exit(sim, trace, *id, 137, "Error");
                    }
                    if let Some(c) = self.containers.get_mut(id) {
                        if !c.removed {
                            c.removed = true;
                            self.changed.insert(*uid);
                        }
                    }
                    CriResult::Ok
                }
                CriReq::MountVolumes { uid } => {
                    let h = self.host.entry(*uid).or_default();
                    if !h.volumes_mounted {
                        h.volumes_mounted = true;
                        h.cgroup = true;
                        h.pod_dir = true;
                        h.mounted_at = Some(now);
                        trace.emit(
                            now,
                            &Transition::Host {
                                uid: *uid,
                                what: HostOp::VolumesMounted,
                            },
                        );
                    }
                    CriResult::Ok
                }
                CriReq::UnmountVolumes { uid } => {
                    if let Some(h) = self.host.get_mut(uid) {
                        if h.volumes_mounted {
                            h.volumes_mounted = false;
                            h.unmounted_at = Some(now);
                            trace.emit(
                                now,
                                &Transition::Host {
                                    uid: *uid,
                                    what: HostOp::VolumesUnmounted,
                                },
                            );
                        }
                    }
                    CriResult::Ok
                }
                CriReq::RemovePodCgroup { uid } => {
                    // Destroying the cgroup kills whatever still runs in it.
                    let victims = self.running_containers(*uid, None);
                    let n = victims.len() as u32;
                    for cid in victims {
                        let replies = self.exit(sim, trace, cid, 137, "Error");
                        self.deferred.extend(replies);
                    }
                    if let Some(h) = self.host.get_mut(uid) {
                        h.killed_by_cgroup_removal += n;
                        if h.cgroup {
                            h.cgroup = false;
                            h.cgroup_removed_at = Some(now);
                            trace.emit(
                                now,
                                &Transition::Host {
                                    uid: *uid,
                                    what: HostOp::PodCgroupRemoved,
                                },
                            );
                        }
                    }
                    CriResult::Ok
                }
                CriReq::RemovePodDir { uid } => match self.host.get_mut(uid) {
                    Some(h) if h.volumes_mounted => {
                        CriResult::Failed(CriFailed::VolumesStillMounted)
                    }
                    Some(h) => {
                        if h.pod_dir {
                            h.pod_dir = false;
                            h.pod_dir_removed_at = Some(now);
                            trace.emit(
                                now,
                                &Transition::Host {
                                    uid: *uid,
                                    what: HostOp::PodDirRemoved,
                                },
                            );
                        }
                        CriResult::Ok
                    }
                    None => CriResult::Ok,
                },
                CriReq::PodStatus { uid } => CriResult::PodStatus(Arc::new(self.pod_status(*uid))),
                CriReq::Relist {
                    list_first: true, ..
                } => {
                    let listed = self.listed.take().unwrap_or_default();
                    let mut out = Vec::with_capacity(listed.pods.len());
                    for uid in listed.pods {
                        match self.fault(CriCall::PodStatus, now) {
                            Some(e) => out.push((uid, Err(e))),
                            None => {
                                let mut st = self.pod_status(uid);
                                let (sb, cs) =
                                    listed.members.get(&uid).cloned().unwrap_or_default();
                                st.sandboxes.retain(|s| sb.contains(&s.id));
                                st.containers.retain(|c| cs.contains(&c.id));
                                out.push((uid, Ok(Arc::new(st))));
                            }
                        }
                    }
                    CriResult::Relist(out)
                }
                CriReq::Relist { reinspect, all, .. } => {
                    let mut set: BTreeSet<PodUid> = std::mem::take(&mut self.changed);
                    set.extend(reinspect.iter().copied());
                    if *all {
                        set.extend(self.pods.keys().copied());
                    }
                    let mut out = Vec::with_capacity(set.len());
                    for uid in set {
                        match self.fault(CriCall::PodStatus, now) {
                            Some(e) => out.push((uid, Err(e))),
                            None => out.push((uid, Ok(Arc::new(self.pod_status(uid))))),
                        }
                    }
                    CriResult::Relist(out)
                }
            }
        };
        Some(self.finish(sim, trace, &req, result))
    }

    fn finish(
        &mut self,
        sim: &mut Sim<Event>,
        trace: &mut Trace,
        req: &CriReq,
        r: CriResult,
    ) -> CriResult {
        if req.traced() {
            let (uid, target) = req.uid_target();
            trace.emit(
                sim.now(),
                &Transition::CriEnd {
                    uid,
                    call: req.name(),
                    target,
                    error: r.failure(),
                },
            );
        }
        r
    }

    fn image_failure_ppm(&self, uid: PodUid, image: &str) -> u32 {
        let _ = image;
        self.workloads
            .get(&uid)
            .map(|w| {
                w.values()
                    .map(|b| b.image_pull_failure_ppm)
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
    }

    /// A probe against container `id` (an `ExecSync`, or an HTTP/TCP/gRPC request to the
    /// container), answered at once from the container's behaviour: `Ok(true)` success,
    /// `Ok(false)` failure, `Err` when the probe could not run. Times in the behaviour count
    /// from the container's start. Against a container that is not running, an exec probe
    /// errors (the runtime refuses the exec) and a network probe fails (connection refused).
    pub fn exec_probe(
        &mut self,
        now: SimTime,
        id: ContainerId,
        kind: ProbeType,
        handler: ProbeHandler,
    ) -> Result<bool, &'static str> {
        let running = self
            .containers
            .get(&id)
            .filter(|c| c.state == RtState::Running && !c.removed);
        let Some(c) = running else {
            return match handler {
                ProbeHandler::Exec => Err("container is not running"),
                ProbeHandler::HttpGet | ProbeHandler::TcpSocket | ProbeHandler::Grpc => Ok(false),
            };
        };
        let up = now.since(c.started_at.unwrap_or(c.created_at));
        Ok(match c.behaviour.probe_outcome(kind) {
            ProbeOutcome::Always(ok) => ok,
            ProbeOutcome::FailFrom(d) => up < d,
            ProbeOutcome::FailBetween(from, to) => !(from <= up && up < to),
            ProbeOutcome::FailureRatio(ppm) => !self.probe_rng.chance_ppm(ppm),
        })
    }

    /// Handle one of the runtime's own events. Returns stop calls that are now answered.
    pub fn on_event(
        &mut self,
        sim: &mut Sim<Event>,
        trace: &mut Trace,
        ev: RtEvent,
    ) -> Vec<(CriClient, CriReq, CriResult)> {
        match ev {
            RtEvent::ProcExit {
                id,
                gen,
                code,
                reason,
            } => {
                if self
                    .containers
                    .get(&id)
                    .is_some_and(|c| c.gen == gen && c.state == RtState::Running)
                {
                    return self.exit(sim, trace, id, code, reason);
                }
            }
            RtEvent::Sigkill { id, gen } => {
                if self
                    .containers
                    .get(&id)
                    .is_some_and(|c| c.gen == gen && c.state == RtState::Running)
                {
                    let uid = self.containers[&id].uid;
                    trace.emit(
                        sim.now(),
                        &Transition::Signal {
                            uid,
                            id,
                            signal: ProcessSignal::Sigkill,
                        },
                    );
                    self.sigkills += 1;
                    return self.exit(sim, trace, id, 137, "Error");
                }
            }
        }
        Vec::new()
    }

    /// The process of container `id` ends now with `code`.
    fn exit(
        &mut self,
        sim: &mut Sim<Event>,
        trace: &mut Trace,
        id: ContainerId,
        code: i32,
        reason: &'static str,
    ) -> Vec<(CriClient, CriReq, CriResult)> {
        let now = sim.now();
        let Some(c) = self.containers.get_mut(&id) else {
            return Vec::new();
        };
        c.state = RtState::Exited;
        c.exit_code = code;
        c.reason = reason;
        c.finished_at = Some(now);
        c.gen += 1;
        let uid = c.uid;
        let waiters = std::mem::take(&mut c.stop_waiters);
        self.changed.insert(uid);
        trace.emit(
            now,
            &Transition::ContainerExited {
                uid,
                id,
                code,
                reason,
            },
        );
        let mut out = Vec::new();
        for (caller, req) in waiters {
            let r = self.finish(sim, trace, &req, CriResult::Ok);
            out.push((caller, req, r));
        }
        out
    }

    /// The node powers off: every process dies with it (exit code 137, reason
    /// `PowerOff`), every sandbox is gone, and no CRI call is answered any more. Returns
    /// how many containers were still running.
    pub fn power_off(&mut self, sim: &mut Sim<Event>, trace: &mut Trace) -> u32 {
        let running: Vec<ContainerId> = self
            .containers
            .iter()
            .filter(|(_, c)| c.state == RtState::Running)
            .map(|(id, _)| *id)
            .collect();
        for id in &running {
            // Stop callers are never answered: the kubelet is gone too.
            if let Some(c) = self.containers.get_mut(id) {
                c.powered_off = true;
                c.stop_waiters.clear();
            }
            let _ = self.exit(sim, trace, *id, 137, "PowerOff");
        }
        for sb in self.sandboxes.values_mut() {
            sb.ready = false;
        }
        running.len() as u32
    }

    /// Timeline `containerExit`: the newest running container of that name exits.
    pub fn container_exit(
        &mut self,
        sim: &mut Sim<Event>,
        trace: &mut Trace,
        uid: PodUid,
        name: &str,
        code: i32,
    ) -> Vec<(CriClient, CriReq, CriResult)> {
        let id = self.pods.get(&uid).and_then(|p| {
            p.containers
                .iter()
                .rev()
                .find(|c| {
                    self.containers
                        .get(c)
                        .is_some_and(|c| c.name == name && c.state == RtState::Running)
                })
                .copied()
        });
        match id {
            Some(id) => {
                let reason = if code == 0 {
                    "Completed"
                } else if code == 137 {
                    "OOMKilled"
                } else {
                    "Error"
                };
                self.exit(sim, trace, id, code, reason)
            }
            None => Vec::new(),
        }
    }

    /// `GetPodStatus`: sandboxes and containers newest first.
    pub fn pod_status(&self, uid: PodUid) -> RtPodStatus {
        let Some(p) = self.pods.get(&uid) else {
            return RtPodStatus {
                uid: Some(uid),
                ..Default::default()
            };
        };
        RtPodStatus {
            uid: Some(uid),
            name: p.name.clone(),
            namespace: p.namespace.clone(),
            sandboxes: p
                .sandboxes
                .iter()
                .rev()
                .filter_map(|id| {
                    self.sandboxes.get(id).map(|s| RtSandbox {
                        id: *id,
                        ready: s.ready,
                        attempt: s.attempt,
                        created_at: s.created_at,
                    })
                })
                .collect(),
            containers: p
                .containers
                .iter()
                .rev()
                .filter_map(|id| {
                    self.containers
                        .get(id)
                        .filter(|c| !c.removed)
                        .map(|c| RtContainer {
                            id: *id,
                            name: c.name.clone(),
                            state: c.state,
                            exit_code: c.exit_code,
                            reason: c.reason,
                            created_at: c.created_at,
                            started_at: c.started_at,
                            finished_at: c.finished_at,
                            restart_count: c.attempt,
                        })
                })
                .collect(),
        }
    }

    /// The UIDs `GetPods(all=false)` would list.
    pub fn running_pod_uids(&self) -> Vec<PodUid> {
        self.pods
            .iter()
            .filter(|(_, p)| {
                // Newest first: a running container is usually the last one created.
                p.containers.iter().rev().any(|id| {
                    self.containers
                        .get(id)
                        .is_some_and(|c| c.state == RtState::Running)
                }) || p
                    .sandboxes
                    .iter()
                    .any(|id| self.sandboxes.get(id).is_some_and(|s| s.ready))
            })
            .map(|(uid, _)| *uid)
            .collect()
    }

    /// `GetPods(all=false)`: pods with a running container or a ready sandbox.
    pub fn running_pods(&self) -> Vec<RunningPod> {
        self.running_pods_of(&self.running_pod_uids())
    }

    /// `GetPods(all=false)` restricted to `uids`.
    pub fn running_pods_of(&self, uids: &[PodUid]) -> Vec<RunningPod> {
        let mut out = Vec::new();
        for uid in uids {
            let Some(p) = self.pods.get(uid) else {
                continue;
            };
            let containers: Vec<(ContainerId, String)> = p
                .containers
                .iter()
                .filter_map(|id| {
                    let c = self.containers.get(id)?;
                    (c.state == RtState::Running).then(|| (*id, c.name.clone()))
                })
                .collect();
            let sandboxes: Vec<SandboxId> = p
                .sandboxes
                .iter()
                .filter(|id| self.sandboxes.get(id).is_some_and(|s| s.ready))
                .copied()
                .collect();
            if !containers.is_empty() || !sandboxes.is_empty() {
                out.push(RunningPod {
                    uid: *uid,
                    name: p.name.clone(),
                    namespace: p.namespace.clone(),
                    containers,
                    sandboxes,
                });
            }
        }
        out
    }

    /// The stats summary at `now` (model in `world::stats`).
    /// The node figures of [`Runtime::stats_summary`] alone (`pods` left empty): the same
    /// sums without building the per-pod list.
    pub fn stats_node(&self, now: SimTime) -> StatsSummary {
        let mut node_ws: u64 = 0;
        for p in self.pods.values() {
            let ws = p
                .containers
                .iter()
                .filter_map(|id| self.containers.get(id))
                .filter(|c| c.state == RtState::Running)
                .fold(0u64, |a, c| {
                    a.saturating_add(c.behaviour.memory_usage_bytes)
                });
            node_ws = node_ws.saturating_add(ws);
        }
        self.summary_with(now, node_ws, Vec::new())
    }

    /// A summary from the node's working-set sum: `memory.available` is capacity minus it,
    /// unless a `memoryPressure` action pins the node figure.
    fn summary_with(&self, now: SimTime, node_ws: u64, pods: Vec<PodStats>) -> StatsSummary {
        let (available, ws) = match self.memory_available_override {
            Some(a) => (a, self.node_memory_bytes.saturating_sub(a)),
            None => (self.node_memory_bytes.saturating_sub(node_ws), node_ws),
        };
        StatsSummary {
            time: now,
            node_available_bytes: available,
            node_working_set_bytes: ws,
            pods,
        }
    }

    pub fn stats_summary(&self, now: SimTime) -> StatsSummary {
        let mut pods = Vec::new();
        let mut node_ws: u64 = 0;
        for (uid, p) in &self.pods {
            let containers: Vec<(String, u64)> = p
                .containers
                .iter()
                .filter_map(|id| self.containers.get(id))
                .filter(|c| c.state == RtState::Running)
                .map(|c| (c.name.clone(), c.behaviour.memory_usage_bytes))
                .collect();
            let has_cgroup = !containers.is_empty()
                || p.sandboxes
                    .iter()
                    .any(|id| self.sandboxes.get(id).is_some_and(|s| s.ready));
            if !has_cgroup {
                continue;
            }
            let ws = containers.iter().fold(0u64, |a, c| a.saturating_add(c.1));
            node_ws = node_ws.saturating_add(ws);
            pods.push(PodStats {
                uid: *uid,
                working_set_bytes: ws,
                containers,
            });
        }
        self.summary_with(now, node_ws, pods)
    }

    /// Ground truth for the summary: every container instance of a pod, oldest first.
    pub fn facts(&self, uid: PodUid) -> Vec<ContainerFacts> {
        self.pods
            .get(&uid)
            .map(|p| {
                p.containers
                    .iter()
                    .filter_map(|id| self.containers.get(id))
                    .map(|c| ContainerFacts {
                        name: c.name.clone(),
                        started: c.started_at.is_some(),
                        running: c.state == RtState::Running,
                        exit_code: (c.state == RtState::Exited && c.started_at.is_some())
                            .then_some(c.exit_code),
                        killed: c.exit_code == 137 && c.sigterm_at.is_some() && !c.powered_off,
                        started_at: c.started_at,
                        finished_at: c.finished_at,
                        sigterm_at: c.sigterm_at,
                        powered_off: c.powered_off,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Ground truth: does this pod have a running container?
    pub fn has_running(&self, uid: PodUid) -> bool {
        self.pods.get(&uid).is_some_and(|p| {
            p.containers.iter().any(|id| {
                self.containers
                    .get(id)
                    .is_some_and(|c| c.state == RtState::Running)
            })
        })
    }

    /// The running containers of a pod (of one of its sandboxes, if given), oldest first.
    fn running_containers(&self, uid: PodUid, sandbox: Option<SandboxId>) -> Vec<ContainerId> {
        self.pods
            .get(&uid)
            .map(|p| p.containers.as_slice())
            .unwrap_or_default()
            .iter()
            .filter(|c| {
                self.containers.get(c).is_some_and(|c| {
                    c.state == RtState::Running && sandbox.is_none_or(|s| c.sandbox == s)
                })
            })
            .copied()
            .collect()
    }

    /// Pod directories present on the node (what a listing of the pods dir shows) and
    /// whether their volumes are still mounted.
    pub fn pod_dirs(&self) -> Vec<(PodUid, bool)> {
        self.host
            .iter()
            .filter(|(_, h)| h.pod_dir)
            .map(|(uid, h)| (*uid, h.volumes_mounted))
            .collect()
    }

    /// Pods whose cgroup exists on the node.
    pub fn pod_cgroups(&self) -> Vec<PodUid> {
        self.host
            .iter()
            .filter(|(_, h)| h.cgroup)
            .map(|(uid, _)| *uid)
            .collect()
    }

    /// The sandbox a container belongs to (for tests).
    pub fn sandbox_of(&self, id: ContainerId) -> Option<SandboxId> {
        self.containers.get(&id).map(|c| c.sandbox)
    }

    pub fn container_uid(&self, id: ContainerId) -> Option<PodUid> {
        self.containers.get(&id).map(|c| c.uid)
    }

    pub fn sandbox_uid(&self, id: SandboxId) -> Option<PodUid> {
        self.sandboxes.get(&id).map(|s| s.uid)
    }
}
