//! The simulated container runtime behind a CRI-shaped interface: sandboxes, image pulls,
//! container create/start/stop, pod status and relist, each with its latency distribution
//! and injectable faults. Container processes behave as the scenario's `behaviour` says.
//!
//! Follows the CRI `RuntimeService`/`ImageService` contract (cri-api v1, `api.proto`; the
//! protocol's types are in [`super::cri`]). Deliberate simplifications: a call's effect
//! happens when the call completes (after its latency), except `StopContainer`, which
//! signals the process when the request arrives and returns when the process has exited;
//! exited removed containers disappear from `GetPodStatus` but are kept for the run
//! summary; a faulty call fails without effect.
//!
//! * `calls`: what each call does when it completes.
//! * `process`: container processes (exits, signals, power-off, probes).
//! * `status`: the pod statuses it reports (`GetPodStatus`).

mod calls;
mod dense;
mod disk;
pub(crate) use disk::DiskConfig;
mod process;
mod status;

pub(crate) use process::RtEvent;

use super::cri::{CriClient, CriReq, CriResult};
use super::dist::sample;
use super::stats::{PodStats, StatsSummary};
use super::{Event, Tracer};
use crate::model::change_log::{ChangeLog, Changes};
use crate::model::uid_map::{UidMap, UidSet};
use crate::model::{
    Behaviour, ContainerId, CriCall, CriError, CriFailed, CriOp, Dist, PodUid, RtPodStatus,
    RtState, RunningPod, SandboxId, Transition,
};
use crate::scenario::Fault;
use crate::sim::{Dur, Sim, SimTime, Stream};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A container: what a probe reads (state, start and behaviour) first, in one cache line
/// of a line-aligned record: a probe comes seconds after the last, when the record has
/// left the data cache, and the compiler's order spread those fields over two lines.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
struct Container {
    started_at: Option<SimTime>,
    created_at: SimTime,
    /// Shared by every instance of the same declared container (see `register_workload`).
    behaviour: Arc<Behaviour>,
    state: RtState,
    /// Removed from the runtime (kept here only for the run summary).
    removed: bool,
    uid: PodUid,
    sandbox: SandboxId,
    /// Interned ([`Runtime::intern`]): the instances of a declared container share it.
    name: Arc<str>,
    /// The image it was created from (interned).
    image: Arc<str>,
    attempt: u32,
    exit_code: i32,
    reason: &'static str,
    finished_at: Option<SimTime>,
    /// Bumped whenever scheduled process events become stale.
    gen: u32,
    sigterm_at: Option<SimTime>,
    /// Calls waiting on this container (boxed: most containers never have one).
    calls: Option<Box<InFlight>>,
    /// Still running when the node powered off.
    powered_off: bool,
}

impl Container {
    /// The calls waiting on this container (created on first use).
    fn calls_mut(&mut self) -> &mut InFlight {
        self.calls.get_or_insert_with(Box::default)
    }
}

/// What waits on one container: `StopContainer` callers and hooks in flight.
#[derive(Clone, Debug, Default)]
struct InFlight {
    /// Callers of `StopContainer` waiting for the exit.
    stop_waiters: Vec<(CriClient, CriReq)>,
    /// PreStop and PostStart hooks in flight against this container (an exec or HTTP call
    /// into it):
    /// when each is due to end, and the call. The exit answers them early.
    hooks: Vec<(SimTime, CriClient, CriReq)>,
    /// Hooks the exit answered (when each was due, and which): their own completion is
    /// dropped.
    hooks_answered: Vec<(SimTime, CriOp)>,
}

#[derive(Clone, Debug)]
struct Sandbox {
    ready: bool,
    attempt: u32,
    created_at: SimTime,
    /// Removed from the runtime (`RemovePodSandbox`): gone from `GetPodStatus`.
    removed: bool,
}

#[derive(Clone, Debug, Default)]
struct RtPod {
    /// Shared with the pod statuses the runtime reports.
    name: Arc<str>,
    /// Interned ([`Runtime::intern`]).
    namespace: Arc<str>,
    sandboxes: Vec<SandboxId>,
    /// Every container the pod ever had, oldest first (the run summary's history).
    containers: Vec<ContainerId>,
    /// The containers not removed yet, oldest first: what every query of the live
    /// runtime walks, so its cost follows the pod's present, not its history.
    live: Vec<ContainerId>,
}

/// The node's host state of one pod: volumes, pod cgroup, pod directory, and when each
/// went away (ground truth).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct HostState {
    pub(crate) volumes_mounted: bool,
    pub(crate) cgroup: bool,
    pub(crate) pod_dir: bool,
    pub(crate) mounted_at: Option<SimTime>,
    pub(crate) unmounted_at: Option<SimTime>,
    pub(crate) cgroup_removed_at: Option<SimTime>,
    pub(crate) pod_dir_removed_at: Option<SimTime>,
    /// Containers that were still running when the pod cgroup was destroyed.
    pub(crate) killed_by_cgroup_removal: u32,
}

/// What one container instance did, for the run summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ContainerFacts {
    pub(crate) name: Arc<str>,
    pub(crate) started: bool,
    pub(crate) running: bool,
    pub(crate) exit_code: Option<i32>,
    pub(crate) killed: bool,
    pub(crate) started_at: Option<SimTime>,
    pub(crate) finished_at: Option<SimTime>,
    pub(crate) sigterm_at: Option<SimTime>,
    /// Still running when the node powered off (killed with the node).
    pub(crate) powered_off: bool,
    /// Removed from the runtime (`RemoveContainer`: container GC or deletor).
    pub(crate) removed: bool,
}

/// How many emptied request boxes the runtime keeps for reuse (about the calls in flight
/// at once on a busy node).
const SPARE_BOXES: usize = 64;

/// How many interned names the runtime checks before its set of them (about the
/// distinct container names, images and namespaces of a node's pods).
const RECENT_NAMES: usize = 8;

/// How many pod statuses the PLEG dropped from its cache the runtime keeps to fill anew
/// (a relist inspects a few pods at a time).
const SPARE_STATUSES: usize = 16;

/// Ground truth of the node's containers.
#[derive(Clone, Debug)]
pub(crate) struct Runtime {
    /// Each call's latency, indexed by the call (`CriCall as usize`): every issued call
    /// draws one, so an index rather than a search of the scenario's map.
    latencies: [Option<Dist>; CriCall::ALL.len()],
    faults: Vec<Fault>,
    lat_rng: Stream,
    fault_rng: Stream,
    /// Draws of `failureRatio` probe outcomes.
    probe_rng: Stream,
    sandboxes: dense::Dense<SandboxId, Sandbox>,
    containers: dense::Dense<ContainerId, Container>,
    /// What a probe's exec reads of each container, by ID (see [`process::ExecView`]).
    exec_views: process::ExecViews,
    /// The containers not removed yet (node-wide passes walk these, not the history).
    live: BTreeSet<ContainerId>,
    /// The containers of `live` whose behaviour uses memory, disk, inodes or processes:
    /// the only ones the node's stats sum (the others add zero), kept with `live`.
    live_using: BTreeSet<ContainerId>,
    /// The pods `GetPods(all=false)` lists (a running container or a ready sandbox), kept
    /// in step by every change of a container's state or a sandbox's readiness
    /// (`refresh_running`), so a listing walks these instead of every pod ever run.
    /// Array-indexed by UID: a start or a sandbox's change asks about its pod's
    /// membership, an index rather than a tree search; walks go in UID order.
    running: UidSet,
    /// The pods that joined or left `running` since housekeeping last asked.
    running_log: ChangeLog,
    /// By UID in an array-indexed map (a CRI call looks its pod up by UID: an index, not
    /// a tree search; walks still go in UID order). Boxed: a slot holds a pointer.
    pods: UidMap<Box<RtPod>>,
    images: BTreeSet<String>,
    /// One shared copy of each container name, image and namespace the records hold
    /// (only looked up, never iterated).
    names: BTreeSet<Arc<str>>,
    /// The last few copies `intern` handed out (at most [`RECENT_NAMES`], replaced in
    /// turn): a create interns its container's name and image, mostly ones interned just
    /// before, and a length check and one comparison here spare the set's search.
    recent_names: Vec<Arc<str>>,
    /// Where the next new copy goes in `recent_names` once it is full.
    recent_next: usize,
    workloads: UidMap<Arc<Workload>>,
    /// One shared copy of each declaration's behaviours, keyed by the address of the
    /// declaration's map (held here, so the address is not reused): the replicas of a
    /// declaration and their container instances share one `Behaviour` per container.
    /// Only looked up, never iterated.
    shared_workloads: BTreeMap<usize, (Arc<Declared>, Arc<Workload>)>,
    /// Host state per pod (volumes, cgroup, pod dir).
    /// Kept and boxed as `pods` are.
    pub(crate) host: UidMap<Box<HostState>>,
    /// The pods of `host` with a pod directory and no volumes mounted, kept in step with
    /// the three host operations that change either (orphan cleanup lists only these).
    unmounted_dirs: BTreeSet<PodUid>,
    /// Pods whose state changed since the last relist (what a generic relist would find
    /// by diffing; keeping the set avoids re-reading unchanged pods), in the order noted,
    /// possibly more than once (`note_changed`); a relist sorts it and drops the repeats
    /// (`take_changed`). A list rather than a set: a note is a push, and the buffer is
    /// kept from one relist to the next (no tree nodes allocated and freed every relist).
    changed: Vec<PodUid>,
    /// A `list_first` relist's listing: the pods to inspect, and the sandboxes and
    /// containers each had when it was listed.
    listed: Option<Listed>,
    next_container: u32,
    next_sandbox: u32,
    /// Containers killed by SIGKILL at the end of their grace period.
    pub(crate) sigkills: u64,
    /// Stop replies released by a host operation; the world delivers them after it.
    pub(crate) deferred: Vec<(CriClient, CriReq, CriResult)>,
    /// The boxes of completed calls' requests (a pending call's event carries its request
    /// boxed), reused by the next calls instead of allocated: at most [`SPARE_BOXES`].
    /// (The boxes, not the requests, are what is kept.)
    #[allow(clippy::vec_box)]
    spare: Vec<Box<CriReq>>,
    /// Pod statuses no one holds any more (the PLEG's cache replaced them: see
    /// [`Runtime::recycle_status`]), refilled by the next relist's inspections instead of
    /// allocated: at most [`SPARE_STATUSES`].
    spare_statuses: Vec<Arc<RtPodStatus>>,
    /// The node's memory capacity (for the stats summary).
    pub(crate) node_memory_bytes: u64,
    /// `memory.available` set by a `memoryPressure` action (see `world::stats`).
    pub(crate) memory_available_override: Option<u64>,
    /// Filesystems, processes and their pins (`world::stats`).
    pub(crate) disk: DiskConfig,
    /// Every image removal that took effect: (time, image, size), for the run summary.
    pub(crate) removed_images: Vec<(SimTime, String, u64)>,
}

/// What each container of a pod does, one shared `Behaviour` per declared container.
type Workload = BTreeMap<String, Arc<Behaviour>>;

/// A declaration's behaviours as the scenario holds them.
type Declared = BTreeMap<String, Behaviour>;

/// What a `list_first` relist listed (see [`CriReq::Relist`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Listed {
    pods: BTreeSet<PodUid>,
    members: BTreeMap<PodUid, (BTreeSet<SandboxId>, BTreeSet<ContainerId>)>,
}

impl Runtime {
    pub(crate) fn new(seed: u64, latencies: BTreeMap<CriCall, Dist>, faults: Vec<Fault>) -> Self {
        let mut by_call: [Option<Dist>; CriCall::ALL.len()] = std::array::from_fn(|_| None);
        for (call, d) in latencies {
            by_call[call as usize] = Some(d);
        }
        Runtime {
            latencies: by_call,
            faults,
            lat_rng: Stream::new(seed, "runtime/latency"),
            fault_rng: Stream::new(seed, "runtime/faults"),
            probe_rng: Stream::new(seed, "runtime/probes"),
            sandboxes: dense::Dense::default(),
            containers: dense::Dense::default(),
            exec_views: process::ExecViews::default(),
            live: BTreeSet::new(),
            live_using: BTreeSet::new(),
            running: UidSet::default(),
            running_log: ChangeLog::default(),
            pods: UidMap::new(),
            images: BTreeSet::new(),
            names: BTreeSet::new(),
            recent_names: Vec::new(),
            recent_next: 0,
            workloads: UidMap::new(),
            shared_workloads: BTreeMap::new(),
            host: UidMap::new(),
            unmounted_dirs: BTreeSet::new(),
            changed: Vec::new(),
            listed: None,
            next_container: 1,
            next_sandbox: 1,
            sigkills: 0,
            deferred: Vec::new(),
            spare: Vec::new(),
            spare_statuses: Vec::new(),
            node_memory_bytes: 0,
            memory_available_override: None,
            disk: DiskConfig::default(),
            removed_images: Vec::new(),
        }
    }

    /// Room for the records of a run expected to create `sandboxes` sandboxes and
    /// `containers` containers (more still fit; the storage grows as before).
    pub(crate) fn reserve(&mut self, sandboxes: usize, containers: usize) {
        self.sandboxes.reserve_ids(sandboxes);
        self.containers.reserve_ids(containers);
        self.exec_views.reserve(containers + 1);
    }

    /// Tell the runtime what the containers of a pod do (the workload, not the kubelet).
    pub(crate) fn register_workload(&mut self, uid: PodUid, b: Arc<BTreeMap<String, Behaviour>>) {
        let key = Arc::as_ptr(&b) as usize;
        let shared = self
            .shared_workloads
            .entry(key)
            .or_insert_with(|| {
                let w: Workload = b
                    .iter()
                    .map(|(k, v)| (k.clone(), Arc::new(v.clone())))
                    .collect();
                (b.clone(), Arc::new(w))
            })
            .1
            .clone();
        self.workloads.insert(uid, shared);
    }

    /// The shared copy of `s`.
    fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(a) = self.recent_names.iter().find(|a| ***a == *s) {
            // The set's own copy (debug builds).
            debug_assert!(self.names.get(s).is_some_and(|n| Arc::ptr_eq(n, a)));
            return a.clone();
        }
        let a = match self.names.get(s) {
            Some(a) => a.clone(),
            None => {
                let a: Arc<str> = Arc::from(s);
                self.names.insert(a.clone());
                a
            }
        };
        if self.recent_names.len() < RECENT_NAMES {
            self.recent_names.push(a.clone());
        } else {
            self.recent_names[self.recent_next] = a.clone();
            self.recent_next = (self.recent_next + 1) % RECENT_NAMES;
        }
        a
    }

    fn latency(&mut self, call: CriCall) -> Dur {
        match &self.latencies[call as usize] {
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
    pub(crate) fn issue<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        caller: CriClient,
        req: CriReq,
    ) {
        let (uid, target) = req.uid_target();
        if req.traced() {
            super::emit_plain(
                trace,
                sim.now(),
                Transition::CriBegin {
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
            let mut changed = self.take_changed(reinspect, *all);
            let pods: BTreeSet<PodUid> = changed.iter().copied().collect();
            self.recycle_changed(&mut changed);
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
                // A hook runs inside the container (exec) or against it (HTTP): into a
                // container that is not running it fails at once.
                match self.containers.get_mut(id) {
                    // The sleep action (v1.31 `runSleepHandler`) is a wait in the kubelet:
                    // it neither needs the container running nor ends when it exits.
                    Some(c) if c.behaviour.pre_stop_sleep => (c.behaviour.pre_stop_duration, None),
                    Some(c) if c.state == RtState::Running => {
                        let d = c.behaviour.pre_stop_duration;
                        c.calls_mut()
                            .hooks
                            .push((sim.now() + d, caller, req.clone()));
                        (d, None)
                    }
                    _ => (Dur::ZERO, None),
                }
            }
            CriReq::ExecPostStart { id, .. } => match self.containers.get_mut(id) {
                // As for preStop: the sleep action is the kubelet's own wait.
                Some(c) if c.behaviour.post_start_sleep => (c.behaviour.post_start_duration, None),
                Some(c) if c.state == RtState::Running => {
                    let d = c.behaviour.post_start_duration;
                    c.calls_mut()
                        .hooks
                        .push((sim.now() + d, caller, req.clone()));
                    (d, None)
                }
                _ => (Dur::ZERO, None),
            },
            CriReq::Relist { .. } => (self.latency(CriCall::PodStatus), None),
            // The image manager's presence check: a present image needs no pull.
            CriReq::PullImage {
                image,
                always: false,
                ..
            } if self.images.contains(&**image) => (Dur::ZERO, None),
            other => {
                let call = other.call();
                (self.latency(call), self.fault(call, sim.now()))
            }
        };
        let req = match self.spare.pop() {
            Some(mut b) => {
                // A spare box holds `unbox`'s placeholder, which owns nothing: no drop.
                let old = std::mem::replace(&mut *b, req);
                debug_assert!(matches!(old, CriReq::MountVolumes { uid: PodUid(0) }));
                std::mem::forget(old);
                b
            }
            None => Box::new(req),
        };
        let _ = sim.after(delay, Event::CriComplete { caller, req, fault });
    }

    /// A completing call's request out of its event's box; the box is kept for a later
    /// call.
    #[inline]
    pub(crate) fn unbox(&mut self, mut b: Box<CriReq>) -> CriReq {
        // A request that owns nothing stands in the box until it is reused.
        let placeholder = CriReq::MountVolumes { uid: PodUid(0) };
        let req = std::mem::replace(&mut *b, placeholder);
        if self.spare.len() < SPARE_BOXES {
            self.spare.push(b);
        }
        req
    }

    /// A call completes: apply its effect. `None` means the reply comes later (a stop
    /// waits for the process to exit).
    pub(crate) fn complete<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        caller: CriClient,
        req: &CriReq,
        fault: Option<CriError>,
    ) -> Option<CriResult> {
        let now = sim.now();
        let result = if let Some(e) = fault {
            CriResult::Err(e)
        } else {
            match req {
                CriReq::RunPodSandbox {
                    uid,
                    name,
                    namespace,
                    attempt,
                } => self.run_pod_sandbox(trace, now, *uid, name, namespace, *attempt),
                CriReq::PullImage { uid, image, always } => self.pull_image(*uid, image, *always),
                CriReq::CreateContainer {
                    uid,
                    sandbox,
                    name,
                    attempt,
                    image,
                } => self.create_container(now, *uid, *sandbox, (name, image), *attempt),
                CriReq::StartContainer { uid, id } => self.start_container(sim, trace, *uid, *id),
                CriReq::StopContainer { uid, id, timeout_s } => {
                    // Finished here if it returns at once; else its reply waits for the exit.
                    return self.stop_container(sim, trace, caller, req, (*uid, *id, *timeout_s));
                }
                CriReq::ExecPreStop { id, .. } | CriReq::ExecPostStart { id, .. } => {
                    let op = req.name();
                    if let Some(c) = self.containers.get_mut(id) {
                        let c = c.calls_mut();
                        let answered = c.hooks_answered.iter().position(|d| *d == (now, op));
                        if let Some(k) = answered {
                            // Answered when its container exited.
                            c.hooks_answered.remove(k);
                            return None;
                        }
                        let due = c.hooks.iter().position(|h| h.0 == now && h.2.name() == op);
                        if let Some(k) = due {
                            c.hooks.remove(k);
                        }
                    }
                    match (req, self.containers.get(id)) {
                        (CriReq::ExecPreStop { .. }, _) => CriResult::Ok,
                        (_, Some(c)) if c.behaviour.post_start_sleep => CriResult::Ok,
                        (_, Some(c))
                            if c.state == RtState::Running
                                && c.behaviour.post_start_exit_code == 0 =>
                        {
                            CriResult::Ok
                        }
                        _ => CriResult::Failed(CriFailed::PostStartHookFailed),
                    }
                }
                CriReq::StopPodSandbox { uid, id } => self.stop_pod_sandbox(sim, trace, *uid, *id),
                CriReq::RemoveContainer { uid, id } => self.remove_container(sim, trace, *uid, *id),
                CriReq::RemovePodSandbox { uid, id } => self.remove_pod_sandbox(*uid, *id),
                CriReq::MountVolumes { uid } => {
                    self.mount_volumes(trace, now, *uid);
                    CriResult::Ok
                }
                CriReq::UnmountVolumes { uid } => {
                    self.unmount_volumes(trace, now, *uid);
                    CriResult::Ok
                }
                CriReq::RemovePodCgroup { uid } => {
                    self.remove_pod_cgroup(sim, trace, *uid);
                    CriResult::Ok
                }
                CriReq::RemovePodDir { uid } => self.remove_pod_dir(trace, now, *uid),
                CriReq::RemoveImage { image } => self.remove_image(trace, now, image),
                CriReq::PodStatus { uid } => CriResult::PodStatus(Arc::new(self.pod_status(*uid))),
                CriReq::Relist {
                    list_first: true, ..
                } => self.relist_listed(now),
                CriReq::Relist { reinspect, all, .. } => self.relist(now, reinspect, *all),
            }
        };
        Some(self.finish(sim, trace, req, result))
    }

    fn finish<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        req: &CriReq,
        r: CriResult,
    ) -> CriResult {
        if req.traced() {
            let (uid, target) = req.uid_target();
            super::emit_plain(
                trace,
                sim.now(),
                Transition::CriEnd {
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

    /// The UIDs `GetPods(all=false)` would list.
    pub(crate) fn running_pod_uids(&self) -> Vec<PodUid> {
        let mut out = Vec::new();
        self.running_pod_uids_where(|_| true, &mut out);
        out
    }

    /// [`Runtime::running_pod_uids`] restricted to the UIDs `keep` accepts, into a
    /// caller's buffer (cleared first). `keep` is asked about every pod, in UID order,
    /// before the pod's containers are looked at.
    pub(crate) fn running_pod_uids_where(
        &self,
        mut keep: impl FnMut(PodUid) -> bool,
        out: &mut Vec<PodUid>,
    ) {
        out.clear();
        #[cfg(debug_assertions)]
        {
            let full: Vec<PodUid> = (self.pods.iter())
                .filter(|(_, p)| self.pod_running(p))
                .map(|(u, _)| *u)
                .collect();
            let kept: Vec<PodUid> = self.running.iter().copied().collect();
            assert_eq!(kept, full, "runtime's running-pod index out of step");
        }
        for uid in &self.running {
            if keep(*uid) {
                out.push(*uid);
            }
        }
    }

    /// Keep `uid`'s membership of `running` in step after a change of one of its
    /// containers' states or sandboxes' readiness.
    pub(super) fn refresh_running(&mut self, uid: PodUid) {
        let on = self.pods.get(&uid).is_some_and(|p| self.pod_running(p));
        self.set_running(uid, on);
    }

    /// Put `uid` in `running` or take it out, noting a change of membership.
    pub(super) fn set_running(&mut self, uid: PodUid, on: bool) {
        let changed = if on {
            self.running.insert(uid)
        } else {
            self.running.remove(&uid)
        };
        if changed {
            self.running_log.note(uid, self.running.len());
        }
    }

    /// Whether `GetPods(all=false)` lists the pod.
    pub(crate) fn pod_listed_running(&self, uid: PodUid) -> bool {
        self.running.contains(&uid)
    }

    /// The pods that joined or left the `GetPods(all=false)` listing since the last call
    /// (into `out`, sorted; see [`ChangeLog::take`] for `synced`), and the epoch to pass
    /// next time.
    pub(crate) fn take_running_changes(
        &mut self,
        synced: Option<u64>,
        out: &mut Vec<PodUid>,
    ) -> (Changes, u64) {
        let c = self.running_log.take(synced, out);
        (c, self.running_log.epoch())
    }

    /// Whether a container's behaviour adds to the node's stats (memory, disk, inodes or
    /// processes); the stats skip the others.
    fn uses_resources(c: &Container) -> bool {
        let b = &c.behaviour;
        b.memory_usage_bytes != 0
            || !b.disk_usage.is_zero()
            || !b.inodes.is_zero()
            || !b.pids.is_zero()
    }

    /// Whether `GetPods(all=false)` lists the pod: a running container or a ready sandbox.
    fn pod_running(&self, p: &RtPod) -> bool {
        // Newest first: a running container is usually the last one created.
        p.live.iter().rev().any(|id| {
            self.containers
                .get(id)
                .is_some_and(|c| c.state == RtState::Running)
        }) || p
            .sandboxes
            .iter()
            .any(|id| self.sandboxes.get(id).is_some_and(|s| s.ready))
    }

    /// `GetPods(all=false)`: pods with a running container or a ready sandbox.
    pub(crate) fn running_pods(&self) -> Vec<RunningPod> {
        self.running_pods_of(&self.running_pod_uids())
    }

    /// `GetPods(all=false)` restricted to `uids`.
    pub(crate) fn running_pods_of(&self, uids: &[PodUid]) -> Vec<RunningPod> {
        let mut out = Vec::new();
        for uid in uids {
            let Some(p) = self.pods.get(uid) else {
                continue;
            };
            let containers: Vec<(ContainerId, String)> = p
                .live
                .iter()
                .filter_map(|id| {
                    let c = self.containers.get(id)?;
                    (c.state == RtState::Running).then(|| (*id, String::from(&*c.name)))
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
                    name: String::from(&*p.name),
                    namespace: String::from(&*p.namespace),
                    containers,
                    sandboxes,
                });
            }
        }
        out
    }

    /// The node figures of [`Runtime::stats_summary`] alone (`pods` left empty): the same
    /// sums without building the per-pod list.
    pub(crate) fn stats_node(&self, now: SimTime) -> StatsSummary {
        // Containers that use no memory add zero: only `live_using` is summed (a sum of
        // non-negative figures saturates the same in any grouping, so per pod or not).
        let node_ws = (self.live_using.iter())
            .filter_map(|id| self.containers.get(id))
            .filter(|c| c.state == RtState::Running)
            .fold(0u64, |a, c| {
                a.saturating_add(c.behaviour.memory_usage_bytes)
            });
        #[cfg(debug_assertions)]
        {
            let mut full: u64 = 0;
            for p in self.pods.values() {
                let ws = (p.live.iter())
                    .filter_map(|id| self.containers.get(id))
                    .filter(|c| c.state == RtState::Running)
                    .fold(0u64, |a, c| {
                        a.saturating_add(c.behaviour.memory_usage_bytes)
                    });
                full = full.saturating_add(ws);
            }
            assert_eq!(node_ws, full, "node working set out of step with the pods'");
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
            disk: self.node_disk(now),
        }
    }

    /// The stats summary at `now` (model in `world::stats`).
    pub(crate) fn stats_summary(&self, now: SimTime) -> StatsSummary {
        let mut pods = Vec::new();
        let mut node_ws: u64 = 0;
        for (uid, p) in self.pods.iter() {
            let containers: Vec<(String, u64)> = p
                .live
                .iter()
                .filter_map(|id| self.containers.get(id))
                .filter(|c| c.state == RtState::Running)
                .map(|c| (String::from(&*c.name), c.behaviour.memory_usage_bytes))
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
            let (container_fs, processes) = self.pod_fs_at(*uid, now);
            pods.push(PodStats {
                uid: *uid,
                working_set_bytes: ws,
                containers,
                container_fs,
                volumes: self.volume_usage_at(*uid, now),
                processes,
            });
        }
        self.summary_with(now, node_ws, pods)
    }

    /// Ground truth for the summary: every container instance of a pod, oldest first, in
    /// `out` (emptied first; one buffer serves every pod).
    pub(crate) fn facts(&self, uid: PodUid, out: &mut Vec<ContainerFacts>) {
        out.clear();
        out.extend(self.pods.get(&uid).into_iter().flat_map(|p| {
            p.containers
                .iter()
                .filter_map(|id| self.containers.get(id))
                .map(|c| ContainerFacts {
                    name: Arc::clone(&c.name),
                    started: c.started_at.is_some(),
                    running: c.state == RtState::Running,
                    exit_code: (c.state == RtState::Exited && c.started_at.is_some())
                        .then_some(c.exit_code),
                    killed: c.exit_code == 137 && c.sigterm_at.is_some() && !c.powered_off,
                    started_at: c.started_at,
                    finished_at: c.finished_at,
                    sigterm_at: c.sigterm_at,
                    powered_off: c.powered_off,
                    removed: c.removed,
                })
        }));
    }

    /// Ground truth: does this pod have a running container?
    pub(crate) fn has_running(&self, uid: PodUid) -> bool {
        self.pods.get(&uid).is_some_and(|p| {
            p.live.iter().any(|id| {
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
            .map(|p| p.live.as_slice())
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
    pub(crate) fn pod_dirs(&self) -> Vec<(PodUid, bool)> {
        self.host
            .iter()
            .filter(|(_, h)| h.pod_dir)
            .map(|(uid, h)| (*uid, h.volumes_mounted))
            .collect()
    }

    /// The pod directories whose volumes are unmounted, in UID order (the pods-dir listing
    /// restricted to the entries orphan cleanup can act on).
    pub(crate) fn unmounted_pod_dirs(&self) -> Vec<PodUid> {
        let out: Vec<PodUid> = self.unmounted_dirs.iter().copied().collect();
        debug_assert_eq!(
            out,
            self.host
                .iter()
                .filter(|(_, h)| h.pod_dir && !h.volumes_mounted)
                .map(|(uid, _)| *uid)
                .collect::<Vec<_>>(),
            "unmounted pod directories out of step with the host state"
        );
        out
    }

    /// Pods whose cgroup exists on the node.
    pub(crate) fn pod_cgroups(&self) -> Vec<PodUid> {
        self.host
            .iter()
            .filter(|(_, h)| h.cgroup)
            .map(|(uid, _)| *uid)
            .collect()
    }
}
