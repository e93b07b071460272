//! One run: a scenario and a seed in, a [`RunOutput`] out. A run is a pure function of
//! (scenario, seed, podsim version): single-threaded, virtual time, every random choice
//! from a named stream.

use crate::kubelet::{Kubelet, UPSTREAM_RELEASE};
use crate::model::{NoteKind, ProcessEvent};
use crate::model::{PodPhase, PodUid, Transition};
use crate::model::{PowerOffCause, RemovedBy, WatchDelivery};
use crate::oracle::Oracle;
use crate::scenario::{Action, Scenario};
use crate::sim::trace::Record;
use crate::sim::{Sim, SimTime, StopReason};
use crate::world::apiserver::ApiServer;
use crate::world::node::{Logind, LogindEv, ShutdownRequest};
use crate::world::runtime::Runtime;
use crate::world::Trace;
use crate::world::{CriClient, Ctx, Epoch, Event, FileSource};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The trace label of a watch (or, `file`, file-source) event.
fn watch_label(kind: crate::world::apiserver::WatchKind, file: bool) -> WatchDelivery {
    use crate::world::apiserver::WatchKind::*;
    match (kind, file) {
        (Added, false) => WatchDelivery::Added,
        (Modified, false) => WatchDelivery::Modified,
        (Deleted, false) => WatchDelivery::Deleted,
        (Added, true) => WatchDelivery::FileAdded,
        (Modified, true) => WatchDelivery::FileModified,
        (Deleted, true) => WatchDelivery::FileRemoved,
    }
}

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub seed: u64,
    /// Keep readable trace records (for `--trace` and determinism diffs).
    pub keep_trace: bool,
    /// The replay line printed with every failure.
    pub replay: String,
    /// Run without the invariant oracle (no findings but `run-limit-reached`; the trace
    /// hash is the same). For measuring the oracle's cost.
    pub no_oracle: bool,
}

/// A finding: kubelet misbehaviour or a run limit, as data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub invariant: String,
    pub pod: String,
    pub at_ns: u64,
    pub message: String,
    pub replay: String,
}

/// Per container of a pod object, from ground truth.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerSummary {
    pub name: String,
    pub starts: u32,
    pub restarts: u32,
    pub last_exit_code: Option<i32>,
    pub running_at_end: bool,
    /// Containers SIGKILLed when their stop grace ran out.
    pub killed_at_grace_expiry: u32,
    /// When each instance of the container started running.
    pub started_at_ns: Vec<u64>,
    /// When each instance exited (in start order; absent while running).
    pub finished_at_ns: Vec<u64>,
    /// When the newest instance was sent SIGTERM, if it was.
    pub sigterm_at_ns: Option<u64>,
    /// An instance was still running when the node powered off.
    pub killed_by_power_off: bool,
    /// When each instance was sent SIGTERM (in start order; instances never signalled are
    /// left out).
    pub sigterms_at_ns: Vec<u64>,
    /// When each instance counted in `killed_at_grace_expiry` was SIGKILLed.
    pub grace_expiry_kills_at_ns: Vec<u64>,
}

/// One pod object (one UID).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSummary {
    pub name: String,
    pub uid: String,
    /// A static pod (its phases are those its mirror pods held in the API; `removedBy` says
    /// how its manifest went).
    pub is_static: bool,
    pub final_phase: String,
    pub last_phase: String,
    pub reason: Option<String>,
    pub created_at_ns: u64,
    pub deletion_requested_at_ns: Option<u64>,
    /// When the last container of the pod stopped after deletion was requested.
    pub containers_stopped_at_ns: Option<u64>,
    pub removed_from_api_at_ns: Option<u64>,
    pub removed_by: Option<String>,
    /// (time, phase) of every phase the API server held.
    pub phases: Vec<(u64, String)>,
    /// Teardown on the node (ground truth): volumes unmounted, pod cgroup removed, pod
    /// directory removed, and containers killed because the cgroup went while they ran.
    pub volumes_unmounted_at_ns: Option<u64>,
    pub pod_cgroup_removed_at_ns: Option<u64>,
    pub pod_dir_removed_at_ns: Option<u64>,
    pub killed_by_cgroup_removal: u32,
    /// (time, ready) of every value of the Ready condition the API server held.
    pub ready_transitions: Vec<(u64, bool)>,
    pub containers: Vec<ContainerSummary>,
}

/// Run-level metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub pods: u32,
    pub container_starts: u32,
    pub restarts: u32,
    pub kills_at_grace_expiry: u64,
    pub containers_running_at_end: u32,
    pub pleg_relists: u64,
    /// Probes the prober ran (liveness, readiness and startup together).
    pub probes_run: u64,
    /// `kubeletRestart` actions that took effect (crashes of a running kubelet).
    pub kubelet_restarts: u32,
    /// Deletion requested -> all containers stopped, per deleted pod (ns).
    pub time_to_terminated_ns: Vec<u64>,
    /// Deletion requested -> object removed from the API, per deleted pod (ns).
    pub time_to_removed_ns: Vec<u64>,
    /// When the node was asked to shut down (timeline `nodeShutdown`).
    pub node_shutdown_at_ns: Option<u64>,
    /// When the node powered off, and why (`inhibitor lock released`,
    /// `inhibit delay expired`, `no inhibitor lock`).
    pub power_off_at_ns: Option<u64>,
    pub power_off_cause: Option<String>,
    /// Containers still running when the node powered off.
    pub containers_alive_at_power_off: u32,
    /// Pods whose status-manager phase had not reached the API when the node powered off.
    pub statuses_lost_at_power_off: u32,
    /// Every eviction by the kubelet's eviction manager, in order.
    pub evictions: Vec<EvictionSummary>,
    /// Every change of a node condition the eviction manager made: (timeNs, condition,
    /// status).
    pub node_conditions: Vec<(u64, String, bool)>,
    /// RunPodSandbox/CreateContainer/StartContainer calls that began between a pod's
    /// termination request and its acknowledgement (the oracle's count for S1'; 0 without
    /// the oracle).
    pub starts_while_termination_requested: u64,
}

/// One eviction by the eviction manager.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionSummary {
    pub pod: String,
    pub uid: String,
    pub at_ns: u64,
    pub signal: String,
    /// The grace period override handed to `killPodNow`.
    pub grace_period_seconds: i64,
    /// When `killPodNow` returned, and whether it timed out.
    pub kill_returned_at_ns: Option<u64>,
    pub kill_timed_out: bool,
    /// When the manager saw the pod cleaned up (`PodIsFinished`), if it did.
    pub cleaned_up_at_ns: Option<u64>,
    pub cleanup_timed_out: bool,
}

/// Everything a run produces.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutput {
    pub podsim: String,
    pub scenario: String,
    pub scenario_hash: String,
    pub seed: u64,
    pub profile: String,
    pub upstream_release: String,
    pub behaviours: BTreeMap<String, bool>,
    pub trace_hash: String,
    pub events: u64,
    pub simulated_ns: u64,
    pub stop_reason: String,
    pub findings: Vec<Finding>,
    /// Reach points this run got into (`crate::model::reach`), in table order.
    pub reached: Vec<String>,
    pub pods: Vec<PodSummary>,
    pub metrics: Metrics,
    pub replay: String,
    #[serde(skip)]
    pub trace: Vec<Record>,
}

/// The whole simulated world of one run: plain data, `Clone`.
#[derive(Clone, Debug)]
pub struct World {
    pub sim: Sim<Event>,
    pub trace: Trace,
    pub runtime: Runtime,
    pub api: ApiServer,
    pub kubelet: Kubelet,
    /// systemd-logind and the node's power state.
    pub node: Logind,
    /// Filled in at power-off.
    pub power_off: PowerOffFacts,
    pub scenario: Arc<Scenario>,
    /// The node's static-pod manifests.
    pub files: FileSource,
    pub process: KubeletProcess,
}

/// What the node left behind when it powered off.
#[derive(Clone, Debug, Default)]
pub struct PowerOffFacts {
    pub containers_alive: u32,
    pub statuses_lost: u32,
}

/// The kubelet process as the world sees it: which incarnation runs, and whether it runs.
/// Events addressed to another incarnation, or arriving while the kubelet is down, are
/// dropped (see [`World::kubelet_crash`]).
#[derive(Clone, Debug, Default)]
pub struct KubeletProcess {
    pub epoch: Epoch,
    pub up: bool,
    /// The run seed (each incarnation's own streams derive from it).
    pub seed: u64,
    /// Crashes so far.
    pub crashes: u32,
    /// PLEG relists of dead incarnations (for the metrics).
    pub dead_relists: u64,
}

impl KubeletProcess {
    /// Whether something addressed to incarnation `epoch` reaches a running kubelet.
    pub fn live(&self, epoch: Epoch) -> bool {
        self.up && epoch == self.epoch
    }
}

impl World {
    pub fn new(sc: Arc<Scenario>, seed: u64, keep_trace: bool) -> Self {
        Self::with_oracle(sc, seed, keep_trace, true)
    }

    /// A world whose trace is watched by the invariant oracle of the scenario's profile
    /// (`oracle`), or by none.
    pub fn with_oracle(sc: Arc<Scenario>, seed: u64, keep_trace: bool, oracle: bool) -> Self {
        let mut sim = Sim::new(seed, sc.scheduler, sc.limits());
        let observer = if oracle {
            Oracle::for_pods(sc.pods.len())
        } else {
            Oracle::default()
        };
        let mut trace = Trace::with_observer(keep_trace, observer);
        let mut runtime = Runtime::new(
            seed,
            sc.runtime.latencies.clone(),
            sc.runtime.faults.clone(),
        );
        runtime.node_memory_bytes = sc.node.memory_bytes;
        let mut api = ApiServer::new(seed, sc.api.watch_delay, sc.api.status_write_delay);
        let mut kubelet = Kubelet::new(&sc, seed);
        // logind's InhibitDelayMaxSec: the kubelet's total shutdown period (section 7.2).
        let node = Logind::new(crate::kubelet::nodeshutdown::period_requested(
            &kubelet.shutdown.groups,
        ));
        for (i, p) in sc.pods.iter().enumerate() {
            let _ = sim.at(SimTime(p.create_at.0), Event::CreatePod(i));
        }
        for (i, a) in sc.timeline.iter().enumerate() {
            let _ = sim.at(SimTime(a.at.0), Event::Timeline(i));
        }
        api.connect_watch(&mut sim, 0);
        let mut files = FileSource::default();
        files.connect(&mut sim, 0);
        {
            let mut ctx = Ctx::new(&mut sim, &mut trace, &mut runtime, &mut api, 0);
            kubelet.start(&mut ctx);
        }
        World {
            sim,
            trace,
            runtime,
            api,
            kubelet,
            node,
            power_off: PowerOffFacts::default(),
            scenario: sc,
            files,
            process: KubeletProcess {
                epoch: 0,
                up: true,
                seed,
                crashes: 0,
                dead_relists: 0,
            },
        }
    }

    fn uid_of(&self, pod: &str) -> Option<PodUid> {
        let decl = self.scenario.pods.iter().find(|p| p.spec.name == pod)?;
        if decl.static_pod {
            return self.files.get(pod).map(|p| p.uid);
        }
        self.api.uid_by_name(&decl.spec.namespace, pod)
    }

    /// A static pod's manifest (re)appears with a fresh UID.
    fn add_static(&mut self, decl: usize) -> PodUid {
        let d = &self.scenario.pods[decl];
        let uid = self.api.allocate_uid();
        let now = self.sim.now();
        self.api.record_static(uid, &d.spec.name, decl, now);
        self.runtime.register_workload(uid, d.behaviour.clone());
        let mut pod = crate::model::ApiPod::with_spec(uid, d.spec.clone());
        pod.decl = decl;
        pod.created_at = now;
        pod.static_pod = true;
        self.trace.emit(
            now,
            &Transition::ApiCreated {
                uid,
                name: format!("{} (static manifest)", d.spec.name),
                spec: pod.spec.clone(),
                static_pod: true,
                mirror_of: None,
            },
        );
        self.files.add(&mut self.sim, Arc::new(pod));
        uid
    }

    /// Handle one event.
    pub fn step(&mut self, ev: Event) {
        if self.node.powered_off() && ev.on_node() {
            return; // the node is off: no kubelet, no runtime, no requests in flight
        }
        if let Event::Logind(l) = ev {
            self.logind(l);
            return;
        }
        if let Event::CreatePod(i) = ev {
            if self.scenario.pods[i].static_pod {
                self.add_static(i);
                return;
            }
        }
        let World {
            sim,
            trace,
            runtime,
            api,
            kubelet,
            scenario,
            process,
            ..
        } = self;
        let epoch = process.epoch;
        let up = process.up;
        let live = move |e: Epoch| up && e == epoch;
        // CRI replies reach the kubelet only if the incarnation that asked still runs.
        let deliver =
            |kubelet: &mut Kubelet,
             ctx: &mut Ctx,
             replies: Vec<(CriClient, crate::world::runtime::CriReq, _)>| {
                for (client, req, result) in replies {
                    if live(client.epoch) {
                        kubelet.on_cri_reply(ctx, client.caller, req, result);
                    }
                }
            };
        match ev {
            Event::CreatePod(i) => {
                let decl = &scenario.pods[i];
                let uid = api.create(sim, trace, decl.spec.clone(), i);
                runtime.register_workload(uid, decl.behaviour.clone());
            }
            Event::Timeline(i) => {
                let action = scenario.timeline[i].action.clone();
                self.timeline(action);
            }
            Event::Runtime(rt) => {
                let replies = runtime.on_event(sim, trace, rt);
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                deliver(kubelet, &mut ctx, replies);
            }
            Event::CriComplete { caller, req, fault } => {
                if !live(caller.epoch)
                    && matches!(req, crate::world::runtime::CriReq::Relist { .. })
                {
                    // A dead PLEG's relist: a read nobody will look at. (Completing it would
                    // consume the runtime's change set the next PLEG relies on.)
                    return;
                }
                let result = runtime.complete(sim, trace, caller, req.clone(), fault);
                let mut replies = Vec::new();
                if let Some(result) = result {
                    replies.push((caller, req, result));
                }
                replies.append(&mut runtime.deferred);
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                deliver(kubelet, &mut ctx, replies);
            }
            Event::CriReply {
                caller,
                req,
                result,
            } => {
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                deliver(kubelet, &mut ctx, vec![(caller, req, result)]);
            }
            Event::Watch(e, _) | Event::WatchSynced(e) if !live(e) => {}
            Event::Watch(_, w) => {
                trace.emit(
                    sim.now(),
                    &Transition::WatchDelivered {
                        uid: w.pod.uid,
                        kind: watch_label(w.kind, false),
                    },
                );
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                kubelet.on_watch_event(&mut ctx, w);
            }
            Event::WatchSynced(_) => kubelet.on_watch_synced(),
            Event::ApiStatusSync { uid, epoch: e } | Event::ApiDelete { uid, epoch: e }
                if !live(e) =>
            {
                // The request would reach the API server after its kubelet died: the
                // connection is gone, the request never arrives.
                trace.emit(
                    sim.now(),
                    &Transition::Note {
                        uid,
                        what: NoteKind::DeadKubeletRequestDropped,
                    },
                );
            }
            Event::ApiStatusSync { uid, .. } => {
                // GET by namespace/name, as the status manager does.
                let current = kubelet
                    .status
                    .statuses
                    .get(&uid)
                    .and_then(|v| api.uid_by_name(&v.namespace, &v.name))
                    .and_then(|u| api.get(u))
                    .cloned();
                let patch = {
                    let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                    kubelet.status_on_get(&mut ctx, uid, current.as_ref())
                };
                if let Some(status) = patch {
                    // The object found by name: the pod itself, or a static pod's mirror.
                    let target = current.as_ref().map_or(uid, |p| p.uid);
                    let after = api.patch_status(sim, trace, target, status).cloned();
                    let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                    kubelet.status_on_api_patched(&mut ctx, uid, after.as_ref());
                }
            }
            Event::ApiDelete { uid, .. } => {
                api.kubelet_delete(sim, trace, uid);
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                kubelet.status_on_api_deleted(&mut ctx, uid);
            }
            Event::Kubelet(e, _) if !live(e) => {}
            Event::Kubelet(_, k) => {
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                kubelet.handle(&mut ctx, k);
            }
            Event::File(e, _) | Event::FileSynced(e) if !live(e) => {}
            Event::File(_, w) => {
                trace.emit(
                    sim.now(),
                    &Transition::WatchDelivered {
                        uid: w.pod.uid,
                        kind: watch_label(w.kind, true),
                    },
                );
                let mut ctx = Ctx::new(sim, trace, runtime, api, epoch);
                kubelet.on_file_event(&mut ctx, w);
            }
            Event::FileSynced(_) => kubelet.on_file_synced(),
            Event::ApiCreateMirror { epoch: e, .. } | Event::ApiDeleteMirror { epoch: e, .. }
                if !live(e) => {}
            Event::ApiCreateMirror { pod, .. } => {
                api.create_mirror(sim, trace, &pod);
            }
            Event::ApiDeleteMirror { uid, .. } => api.delete_mirror(sim, trace, uid),
            Event::Logind(_) => unreachable!("handled above"),
            Event::KubeletStart(e) => self.kubelet_start(e),
        }
    }

    /// logind handles a D-Bus call or its delay timer.
    fn logind(&mut self, ev: LogindEv) {
        let now = self.sim.now();
        match ev {
            LogindEv::Inhibit { lock, delay } => {
                self.node.inhibit(now, &mut self.trace, lock, delay);
            }
            LogindEv::Release { lock } => {
                if self.node.release(now, &mut self.trace, lock) {
                    self.power_off_node(PowerOffCause::InhibitorLockReleased);
                }
            }
            LogindEv::DelayExpired => {
                self.node.delay_timer = None;
                self.power_off_node(PowerOffCause::InhibitDelayExpired);
            }
        }
    }

    /// Timeline `nodeShutdown`: logind is asked to shut the node down.
    fn node_shutdown(&mut self) {
        let now = self.sim.now();
        match self.node.request_shutdown(now, &mut self.trace) {
            ShutdownRequest::Ignored => {}
            ShutdownRequest::PowerOffNow => self.power_off_node(PowerOffCause::NoInhibitorLock),
            ShutdownRequest::Delay(max) => {
                let key = self.sim.after(max, Event::Logind(LogindEv::DelayExpired));
                self.node.delay_timer = Some(key);
                let _ = self.sim.after(
                    crate::sim::Dur::ZERO,
                    Event::Kubelet(
                        self.process.epoch,
                        crate::kubelet::KEv::PrepareForShutdown(true),
                    ),
                );
            }
        }
    }

    /// The node powers off: every container dies, the kubelet stops, and every node
    /// event still queued is dropped from now on (`Event::on_node`).
    fn power_off_node(&mut self, cause: PowerOffCause) {
        let now = self.sim.now();
        if let Some(key) = self.node.delay_timer.take() {
            self.sim.cancel(key);
        }
        // Status-manager phases that never reached the API server.
        let lost = self
            .kubelet
            .status
            .statuses
            .iter()
            .filter(|(uid, v)| {
                self.api
                    .get(**uid)
                    .is_some_and(|p| p.status.phase != v.status.phase)
            })
            .count() as u32;
        let alive = self.runtime.power_off(&mut self.sim, &mut self.trace);
        self.trace.emit(now, &Transition::PowerOff { cause, alive });
        self.node.mark_powered_off(now, cause);
        self.power_off = PowerOffFacts {
            containers_alive: alive,
            statuses_lost: lost,
        };
    }

    fn timeline(&mut self, action: Action) {
        match action {
            Action::DeletePod {
                pod,
                grace_period_seconds,
            } => {
                if let Some(uid) = self.uid_of(&pod) {
                    if !self.process.up {
                        self.trace
                            .reach(crate::model::reach::Reach::DeleteDuringKubeletDowntime as u32);
                    }
                    self.api
                        .delete(&mut self.sim, &mut self.trace, uid, grace_period_seconds);
                }
            }
            Action::ForceDeletePod { pod } => {
                if let Some(uid) = self.uid_of(&pod) {
                    if !self.process.up {
                        self.trace
                            .reach(crate::model::reach::Reach::DeleteDuringKubeletDowntime as u32);
                    }
                    if self.runtime.has_running(uid) {
                        self.trace
                            .reach(crate::model::reach::Reach::ForceDeleteWhileRunning as u32);
                    }
                    self.api.force_delete(&mut self.sim, &mut self.trace, uid);
                }
            }
            Action::ContainerExit {
                pod,
                container,
                exit_code,
            } => {
                if let Some(uid) = self.uid_of(&pod) {
                    let replies = self.runtime.container_exit(
                        &mut self.sim,
                        &mut self.trace,
                        uid,
                        &container,
                        exit_code,
                    );
                    let mut ctx = Ctx::new(
                        &mut self.sim,
                        &mut self.trace,
                        &mut self.runtime,
                        &mut self.api,
                        self.process.epoch,
                    );
                    for (client, req, result) in replies {
                        if self.process.live(client.epoch) {
                            self.kubelet
                                .on_cri_reply(&mut ctx, client.caller, req, result);
                        }
                    }
                }
            }
            Action::UpdateStaticPod { pod } => {
                // The manifest is edited: the old pod is removed and a new UID appears
                // with the same full name (the file source's REMOVE, then ADD).
                let now = self.sim.now();
                if let Some(old) = self.files.remove(&mut self.sim, &pod) {
                    self.trace.observer_mut().static_manifest_removed(old.uid);
                    self.api
                        .record_static_removed(old.uid, now, RemovedBy::ManifestUpdated);
                    self.add_static(old.decl);
                }
            }
            Action::RemoveStaticPod { pod } => {
                let now = self.sim.now();
                if let Some(old) = self.files.remove(&mut self.sim, &pod) {
                    self.trace.observer_mut().static_manifest_removed(old.uid);
                    self.api
                        .record_static_removed(old.uid, now, RemovedBy::ManifestRemoved);
                }
            }
            Action::RestoreStaticPod { pod } => {
                let now = self.sim.now();
                if let Some(p) = self.files.restore(&mut self.sim, &pod) {
                    self.api.record_static_restored(p.uid);
                    self.trace.emit(
                        now,
                        &Transition::ApiCreated {
                            uid: p.uid,
                            name: format!("{} (static manifest restored)", p.spec.name),
                            spec: p.spec.clone(),
                            static_pod: true,
                            mirror_of: None,
                        },
                    );
                }
            }
            Action::RecreatePod { pod } => {
                // As a StatefulSet controller does: the old object goes (grace 0, if it is
                // still there) and a new one with the same name and a new UID is created.
                if let Some(uid) = self.uid_of(&pod) {
                    let decl = self.api.get(uid).map(|p| p.decl);
                    self.api.force_delete(&mut self.sim, &mut self.trace, uid);
                    if let Some(i) = decl {
                        let d = &self.scenario.pods[i];
                        let new =
                            self.api
                                .create(&mut self.sim, &mut self.trace, d.spec.clone(), i);
                        self.runtime.register_workload(new, d.behaviour.clone());
                    }
                }
            }
            Action::NodeShutdown => self.node_shutdown(),
            Action::MemoryPressure { available_bytes } => {
                // The node's memory.available is this value from now on (world::stats).
                self.runtime.memory_available_override = Some(available_bytes);
                self.trace.emit(
                    self.sim.now(),
                    &Transition::NodeMemoryAvailable {
                        bytes: available_bytes,
                    },
                );
            }
            Action::KubeletRestart { downtime } => {
                self.kubelet_crash();
                let _ = self
                    .sim
                    .after(downtime, Event::KubeletStart(self.process.epoch));
            }
        }
    }

    /// The kubelet process dies (`kubeletRestart`, first half). Every in-memory structure
    /// goes with it: the `Kubelet` is replaced by a fresh, not yet started one. Whatever is
    /// still addressed to the dead incarnation is dropped when it arrives: its timers, the
    /// replies to its CRI calls (the calls themselves complete in the runtime), its watch
    /// deliveries, and its status PATCH / DELETE requests that had not reached the API
    /// server yet (their connection died with the process; a request that arrived before
    /// the crash took effect). The runtime, the API server and the node's disk keep their
    /// state. A restart while the kubelet is already down supersedes the pending start.
    pub fn kubelet_crash(&mut self) {
        let old = self.process.epoch;
        if self.process.up {
            self.trace.emit(
                self.sim.now(),
                &Transition::KubeletProcess {
                    what: ProcessEvent::Crashed,
                    epoch: old,
                },
            );
            self.process.crashes += 1;
            self.process.dead_relists += self.kubelet.pleg.relists;
            self.api.disconnect_watch();
            self.files.disconnect();
            let now = self.sim.now();
            if self.node.release_all(now, &mut self.trace) {
                self.power_off_node(PowerOffCause::InhibitorLockReleased);
            }
        }
        self.process.up = false;
        self.process.epoch = old + 1;
        let seed = crate::kubelet::restart::incarnation_seed(self.process.seed, self.process.epoch);
        self.kubelet = Kubelet::new(&self.scenario, seed);
    }

    /// The next kubelet process starts after the downtime (`kubeletRestart`, second half),
    /// rebuilding in upstream's order: volume reconstruction from disk, then the PLEG (whose
    /// first relist sees every container as new), status manager and sync loop, and the API
    /// watch, whose initial list reaches the pod workers as ADDs before the source is ready.
    fn kubelet_start(&mut self, epoch: Epoch) {
        if epoch != self.process.epoch || self.process.up {
            return; // superseded by a later restart
        }
        self.process.up = true;
        self.trace.emit(
            self.sim.now(),
            &Transition::KubeletProcess {
                what: ProcessEvent::Started,
                epoch,
            },
        );
        self.api.connect_watch(&mut self.sim, epoch);
        self.files.connect(&mut self.sim, epoch);
        let mut ctx = Ctx::new(
            &mut self.sim,
            &mut self.trace,
            &mut self.runtime,
            &mut self.api,
            epoch,
        );
        self.kubelet.reconstruct_volumes(&mut ctx);
        self.kubelet.start(&mut ctx);
    }

    /// Act as the kubelet from outside the event loop (tests drive the pod workers this way).
    pub fn kubelet_do<R>(&mut self, f: impl FnOnce(&mut Kubelet, &mut Ctx) -> R) -> R {
        let mut ctx = Ctx::new(
            &mut self.sim,
            &mut self.trace,
            &mut self.runtime,
            &mut self.api,
            self.process.epoch,
        );
        f(&mut self.kubelet, &mut ctx)
    }

    /// Process events up to and including simulated time `until`.
    pub fn run_until(&mut self, until: SimTime) -> Option<StopReason> {
        loop {
            match self.sim.queue.peek_time() {
                Some(t) if t <= until => {}
                _ => return None,
            }
            match self.sim.next_event() {
                Ok(ev) => self.step(ev),
                Err(reason) => return Some(reason),
            }
        }
    }

    /// Run to the end: queue empty, horizon, or a limit.
    pub fn run_to_end(&mut self) -> StopReason {
        loop {
            match self.sim.next_event() {
                Ok(ev) => self.step(ev),
                Err(reason) => return reason,
            }
        }
    }
}

/// Run `sc` with `opts`.
pub fn run(sc: Arc<Scenario>, opts: &RunOptions) -> RunOutput {
    let mut world = World::with_oracle(sc.clone(), opts.seed, opts.keep_trace, !opts.no_oracle);
    let stop = world.run_to_end();
    let end = world.sim.now();
    world.trace.observer_mut().finish(end);
    world.trace.observer_mut().release_pod_state();
    summarize(&world, stop, opts)
}

fn summarize(w: &World, stop: StopReason, opts: &RunOptions) -> RunOutput {
    let sc = &w.scenario;
    let mut pods = Vec::new();
    let mut metrics = Metrics {
        kills_at_grace_expiry: w.runtime.sigkills,
        pleg_relists: w.process.dead_relists + w.kubelet.pleg.relists,
        kubelet_restarts: w.process.crashes,
        probes_run: w.kubelet.prober.probes_run,
        node_shutdown_at_ns: w.node.shutdown_requested_at.map(|t| t.0),
        power_off_at_ns: w.node.powered_off_at.map(|t| t.0),
        power_off_cause: w.node.power_off_cause.map(|c| c.as_str().to_string()),
        containers_alive_at_power_off: w.power_off.containers_alive,
        statuses_lost_at_power_off: w.power_off.statuses_lost,
        starts_while_termination_requested: w.trace.observer().starts_while_termination_requested(),
        ..Default::default()
    };
    for (uid, h) in &w.api.history {
        let decl = &sc.pods[h.decl];
        let facts = w.runtime.facts(*uid);
        let host = w.runtime.host.get(uid);
        let mut containers = Vec::new();
        for c in &decl.spec.containers {
            let inst: Vec<_> = facts.iter().filter(|f| f.name == c.name).collect();
            let starts = inst.iter().filter(|f| f.started).count() as u32;
            let s = ContainerSummary {
                name: c.name.clone(),
                starts,
                restarts: starts.saturating_sub(1),
                last_exit_code: inst.iter().rev().find_map(|f| f.exit_code),
                running_at_end: inst.iter().any(|f| f.running),
                killed_at_grace_expiry: inst.iter().filter(|f| f.killed).count() as u32,
                started_at_ns: inst
                    .iter()
                    .filter_map(|f| f.started_at.map(|t| t.0))
                    .collect(),
                finished_at_ns: inst
                    .iter()
                    .filter(|f| f.started)
                    .filter_map(|f| f.finished_at.map(|t| t.0))
                    .collect(),
                sigterm_at_ns: inst.last().and_then(|f| f.sigterm_at.map(|t| t.0)),
                killed_by_power_off: inst.iter().any(|f| f.powered_off),
                sigterms_at_ns: inst
                    .iter()
                    .filter_map(|f| f.sigterm_at.map(|t| t.0))
                    .collect(),
                grace_expiry_kills_at_ns: inst
                    .iter()
                    .filter(|f| f.killed)
                    .filter_map(|f| f.finished_at.map(|t| t.0))
                    .collect(),
            };
            metrics.container_starts += s.starts;
            metrics.restarts += s.restarts;
            if s.running_at_end {
                metrics.containers_running_at_end += 1;
            }
            containers.push(s);
        }
        let stopped_at = if facts.iter().any(|f| f.running) {
            None
        } else {
            h.deletion_requested_at.map(|d| {
                facts
                    .iter()
                    .filter_map(|f| f.finished_at)
                    .max()
                    .unwrap_or(d)
                    .max(d)
            })
        };
        if let (Some(d), Some(s)) = (h.deletion_requested_at, stopped_at) {
            metrics.time_to_terminated_ns.push(s.since(d).0);
        }
        if let (Some(d), Some(r)) = (h.deletion_requested_at, h.removed_at) {
            metrics.time_to_removed_ns.push(r.since(d).0);
        }
        let last_phase = h.phases.last().map_or(PodPhase::Pending, |p| p.1);
        pods.push(PodSummary {
            name: h.name.clone(),
            uid: uid.to_string(),
            is_static: h.is_static,
            final_phase: if h.removed_at.is_some() {
                "Deleted".into()
            } else {
                last_phase.as_str().into()
            },
            last_phase: last_phase.as_str().into(),
            reason: h.reason.clone(),
            created_at_ns: h.created_at.0,
            deletion_requested_at_ns: h.deletion_requested_at.map(|t| t.0),
            containers_stopped_at_ns: stopped_at.map(|t| t.0),
            removed_from_api_at_ns: h.removed_at.map(|t| t.0),
            removed_by: h.removed_by.map(|b| b.as_str().to_string()),
            phases: h
                .phases
                .iter()
                .map(|(t, p)| (t.0, p.as_str().to_string()))
                .collect(),
            volumes_unmounted_at_ns: host.and_then(|h| h.unmounted_at.map(|t| t.0)),
            pod_cgroup_removed_at_ns: host.and_then(|h| h.cgroup_removed_at.map(|t| t.0)),
            pod_dir_removed_at_ns: host.and_then(|h| h.pod_dir_removed_at.map(|t| t.0)),
            killed_by_cgroup_removal: host.map_or(0, |h| h.killed_by_cgroup_removal),
            ready_transitions: h.ready.iter().map(|(t, r)| (t.0, *r)).collect(),
            containers,
        });
    }
    metrics.pods = pods.len() as u32;
    let ev = &w.kubelet.eviction;
    metrics.evictions = ev
        .history
        .iter()
        .map(|r| EvictionSummary {
            pod: r.pod.clone(),
            uid: r.uid.to_string(),
            at_ns: r.at.0,
            signal: r.signal.clone(),
            grace_period_seconds: r.grace,
            kill_returned_at_ns: r.kill_returned_at.map(|t| t.0),
            kill_timed_out: r.kill_timed_out,
            cleaned_up_at_ns: r.cleaned_up_at.map(|t| t.0),
            cleanup_timed_out: r.cleanup_timed_out,
        })
        .collect();
    metrics.node_conditions = ev
        .condition_changes
        .iter()
        .map(|(t, c, s)| (t.0, c.to_string(), *s))
        .collect();
    let mut findings: Vec<Finding> = w
        .trace
        .observer()
        .findings()
        .iter()
        .map(|f| Finding {
            invariant: f.invariant.to_string(),
            pod: f.pod.clone(),
            at_ns: f.at.0,
            message: f.message.clone(),
            replay: opts.replay.clone(),
        })
        .collect();
    if stop.is_limit() {
        findings.push(Finding {
            invariant: "run-limit-reached".into(),
            pod: String::new(),
            at_ns: w.sim.now().0,
            message: format!(
                "the run stopped at the {} limit after {} events",
                stop.as_str(),
                w.sim.events()
            ),
            replay: opts.replay.clone(),
        });
    }
    RunOutput {
        podsim: env!("CARGO_PKG_VERSION").into(),
        scenario: sc.name.clone(),
        scenario_hash: sc.hash.clone(),
        seed: opts.seed,
        profile: sc.kubelet.profile.clone(),
        upstream_release: UPSTREAM_RELEASE.into(),
        behaviours: w.kubelet.b.to_map(),
        trace_hash: w.trace.hash_hex(),
        events: w.sim.events(),
        simulated_ns: w.sim.now().0,
        stop_reason: stop.as_str().into(),
        findings,
        reached: crate::model::reach::names(w.trace.reached()),
        pods,
        metrics,
        replay: opts.replay.clone(),
        trace: w.trace.records().to_vec(),
    }
}
