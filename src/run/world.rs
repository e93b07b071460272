//! The whole simulated world of one run and its event loop. This is where the parts meet:
//! the kubelet's timers become the world's events ([`Event`]), the trace gets its observer,
//! the invariant oracle ([`Trace`]), and every event goes to the part it is for.

use super::process::{KubeletProcess, PowerOffFacts};
use super::timeline::DeclIndex;
use crate::kubelet::{Ctx, KEv, Kubelet};
use crate::model::{NoteKind, WatchDelivery};
use crate::model::{PodUid, Transition};
use crate::oracle::Oracle;
use crate::scenario::Scenario;
use crate::sim::{Sim, SimTime, StopReason};
use crate::world::apiserver::{ApiServer, WatchEvent, WatchKind};
use crate::world::cri::{CriClient, CriReq, CriResult};
use crate::world::node::Logind;
use crate::world::runtime::Runtime;
use crate::world::{Epoch, FileSource};
use std::sync::Arc;

/// Every event of a run: the world's, with the kubelet's timers and wake-ups.
pub(crate) type Event = crate::world::Event<KEv>;

/// The run's trace: every transition is hashed, optionally kept, and shown to the
/// invariant oracle (which never changes the hash).
pub(crate) type Trace = crate::sim::Trace<Watch>;

/// Takes a run's kept trace records, a batch at a time, in order.
pub(crate) type RecordSink<'a> = dyn FnMut(&[crate::sim::trace::Record]) + 'a;

/// Takes a run's transitions as typed values (what the oracle sees), a batch at a time, in
/// order: for outputs that need more than a record's text (`run --perfetto`).
pub(crate) type TransitionSink<'a> = dyn FnMut(&[(SimTime, Transition)]) + 'a;

/// What watches the trace: the invariant oracle and, when an output asks for them, a tap
/// that keeps the typed transitions until the event loop hands them out. Neither touches the
/// hash. Dereferences to the oracle.
#[derive(Clone, Debug, Default)]
pub(crate) struct Watch {
    pub(crate) oracle: Oracle,
    pub(crate) tap: Option<Vec<(SimTime, Transition)>>,
}

impl crate::sim::trace::Observer<Transition> for Watch {
    /// Without a tap (every run but `run --perfetto`), the oracle's call is the last thing
    /// done: a tail call, so this keeps no frame of its own.
    #[inline]
    fn observe(&mut self, at: SimTime, rec: &Transition) {
        if self.tap.is_some() {
            return self.observe_tapped(at, rec);
        }
        crate::sim::trace::Observer::observe(&mut self.oracle, at, rec);
    }
}

impl Watch {
    /// [`Watch::observe`] with a tap: the oracle sees the transition, then the tap keeps it.
    #[cold]
    #[inline(never)]
    fn observe_tapped(&mut self, at: SimTime, rec: &Transition) {
        crate::sim::trace::Observer::observe(&mut self.oracle, at, rec);
        if let Some(t) = self.tap.as_mut() {
            t.push((at, rec.clone()));
        }
    }
}

impl std::ops::Deref for Watch {
    type Target = Oracle;
    fn deref(&self) -> &Oracle {
        &self.oracle
    }
}

impl std::ops::DerefMut for Watch {
    fn deref_mut(&mut self) -> &mut Oracle {
        &mut self.oracle
    }
}

/// The trace label of a watch (or, `file`, file-source) event.
fn watch_label(kind: WatchKind, file: bool) -> WatchDelivery {
    use WatchKind::*;
    match (kind, file) {
        (Added, false) => WatchDelivery::Added,
        (Modified, false) => WatchDelivery::Modified,
        (Deleted, false) => WatchDelivery::Deleted,
        (Added, true) => WatchDelivery::FileAdded,
        (Modified, true) => WatchDelivery::FileModified,
        (Deleted, true) => WatchDelivery::FileRemoved,
    }
}

/// The whole simulated world of one run: plain data, `Clone`.
#[derive(Clone, Debug)]
pub(crate) struct World {
    pub(crate) sim: Sim<Event>,
    pub(crate) trace: Trace,
    pub(crate) runtime: Runtime,
    pub(crate) api: ApiServer,
    pub(crate) kubelet: Kubelet,
    /// systemd-logind and the node's power state.
    pub(crate) node: Logind,
    /// Filled in at power-off.
    pub(crate) power_off: PowerOffFacts,
    pub(crate) scenario: Arc<Scenario>,
    /// The node's static-pod manifests.
    pub(crate) files: FileSource,
    pub(crate) process: KubeletProcess,
    /// The declared pods by name, for the timeline's actions.
    pub(super) decls: DeclIndex,
}

impl World {
    #[cfg(test)]
    pub(crate) fn new(sc: Arc<Scenario>, seed: u64, keep_trace: bool) -> Self {
        Self::with_oracle(sc, seed, keep_trace, true, true, false)
    }

    /// A world whose trace is watched by the invariant oracle of the scenario's profile
    /// (`oracle`), keeping the pods' histories for its findings (`history`), or by none;
    /// with `tap`, its typed transitions are kept for [`World::run_to_end_with`] to hand
    /// out.
    pub(crate) fn with_oracle(
        sc: Arc<Scenario>,
        seed: u64,
        keep_trace: bool,
        oracle: bool,
        history: bool,
        tap: bool,
    ) -> Self {
        let mut sim = Sim::new(seed, sc.scheduler, sc.limits());
        sim.set_sources(super::sources::source_key);
        let observer = if oracle {
            Oracle::for_pods(sc.pods.len(), history)
        } else {
            Oracle::default()
        };
        let mut trace = Trace::with_observer(
            keep_trace,
            Watch {
                oracle: observer,
                tap: tap.then(Vec::new),
            },
        );
        let mut runtime = Runtime::new(
            seed,
            sc.runtime.latencies.clone(),
            sc.runtime.faults.clone(),
        );
        // One sandbox and one instance of each declared container per pod: a large run's
        // records fit without a doubled vector's slack.
        let containers = sc
            .pods
            .iter()
            .map(|p| p.spec.all_containers().count())
            .sum();
        runtime.reserve(sc.pods.len(), containers);
        runtime.node_memory_bytes = sc.node.memory_bytes;
        runtime.disk.nodefs = sc.node.nodefs;
        runtime.disk.imagefs = sc.node.imagefs;
        runtime.disk.max_pids = sc.node.max_pids;
        runtime.disk.image_sizes = sc.runtime.image_sizes.clone();
        let mut api = ApiServer::new(seed, sc.api.watch_delay, sc.api.status_write_delay);
        let mut kubelet = Kubelet::new(&sc.kubelet, &sc.node, seed);
        // logind's InhibitDelayMaxSec: what the kubelet's shutdown manager asks for.
        let node = Logind::new(kubelet.shutdown_delay_requested());
        for (i, p) in sc.pods.iter().enumerate() {
            let _ = sim.at(SimTime(p.create_at.0), Event::CreatePod(i));
        }
        // Actions at the same instant happen in the order the file lists them (the
        // timeline is sorted stably by time): only the first of each instant is queued
        // here; each queues the next when it has been handled (see `step`), so the
        // scheduler interleaves them with everything else due then, but never reorders them.
        for (i, a) in sc.timeline.iter().enumerate() {
            if i == 0 || sc.timeline[i - 1].at != a.at {
                let _ = sim.at(SimTime(a.at.0), Event::Timeline(i));
            }
        }
        api.connect_watch(&mut sim, 0);
        let mut files = FileSource::default();
        files.connect(&mut sim, 0);
        {
            let mut ctx = Ctx::new(&mut sim, &mut trace, &mut runtime, &mut api, 0);
            kubelet.start(&mut ctx);
        }
        World {
            decls: DeclIndex::new(&sc.pods, !sc.timeline.is_empty()),
            sim,
            trace,
            runtime,
            api,
            kubelet,
            node,
            power_off: PowerOffFacts::default(),
            scenario: sc,
            files,
            process: KubeletProcess::new(seed),
        }
    }

    /// The kubelet, and its handle on the rest of the world.
    pub(super) fn kubelet_ctx(&mut self) -> (&mut Kubelet, Ctx<'_>) {
        let ctx = Ctx::new(
            &mut self.sim,
            &mut self.trace,
            &mut self.runtime,
            &mut self.api,
            self.process.epoch,
        );
        (&mut self.kubelet, ctx)
    }

    /// The pod object a timeline action names: the API's, or a static pod's manifest.
    pub(super) fn uid_of(&self, pod: &str) -> Option<PodUid> {
        let decl = self.decls.find(&self.scenario.pods, pod)?;
        if decl.static_pod {
            return self.files.get(pod).map(|p| p.uid);
        }
        self.api.uid_by_name(&decl.spec.namespace, pod)
    }

    /// A static pod's manifest (re)appears with a fresh UID.
    pub(super) fn add_static(&mut self, decl: usize) -> PodUid {
        let d = &self.scenario.pods[decl];
        let uid = self.api.allocate_uid();
        let now = self.sim.now();
        self.api.record_static(uid, &d.spec.name, decl, now);
        self.runtime.register_workload(uid, d.behaviour.clone());
        self.runtime.register_volumes(uid, &d.spec);
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

    /// Scenario pod declaration `i` is created: in the API server, or, for a static pod,
    /// as a manifest on the node.
    fn create_pod(&mut self, i: usize) {
        let decl = &self.scenario.pods[i];
        if decl.static_pod {
            self.add_static(i);
            return;
        }
        let uid = self
            .api
            .create(&mut self.sim, &mut self.trace, decl.spec.clone(), i);
        self.runtime.register_workload(uid, decl.behaviour.clone());
        self.runtime.register_volumes(uid, &decl.spec);
    }

    /// Handle one event. Whatever is addressed to a kubelet incarnation that no longer
    /// runs is dropped (see [`World::kubelet_crash`]).
    ///
    /// A kubelet event for the running incarnation on a powered node (nine events in ten:
    /// probe ticks above all) goes straight to the kubelet; every other event takes
    /// [`World::step_other`], out of line, so the frequent path stays a few cache lines.
    #[inline]
    pub(crate) fn step(&mut self, ev: Event) {
        match ev {
            Event::Kubelet(e, k) if !self.node.powered_off() && self.process.live(e) => {
                let (kubelet, mut ctx) = self.kubelet_ctx();
                kubelet.handle(&mut ctx, k);
            }
            ev => self.step_other(ev),
        }
    }

    /// Handle the event the queue holds in `slot` (see `Sim::next_held`). A probe worker's
    /// tick for the running incarnation on a powered node (two events in three on a node
    /// with probes) is handled while its event stays in the queue's hand, so the worker
    /// re-arms its ticker by filing that event again (`Ctx::after_again`); whatever the
    /// worker does not re-arm leaves the queue after it. Every other event is taken out
    /// and goes to [`World::step`].
    #[inline]
    pub(crate) fn step_held(&mut self, slot: u32) {
        use crate::kubelet::prober::ProbeWake;
        let tick = match *self.sim.queue.held(slot) {
            Event::Kubelet(
                e,
                KEv::ProbeWorker {
                    slot,
                    gen,
                    wake: ProbeWake::Tick,
                    source,
                },
            ) if !self.node.powered_off() && self.process.live(e) => Some((slot, gen, source)),
            _ => None,
        };
        let Some((worker, gen, source)) = tick else {
            let ev = self.sim.queue.take_held(slot);
            return self.step(ev);
        };
        self.sim.hold(slot);
        let (kubelet, mut ctx) = self.kubelet_ctx();
        kubelet.probe_worker_wake(&mut ctx, worker, gen, ProbeWake::Tick, source);
        self.sim.release_held();
    }

    /// [`World::step`] of every other event: the full dispatch, with the power and
    /// incarnation checks (it would handle the frequent kubelet events in the same way).
    #[inline(never)]
    fn step_other(&mut self, ev: Event) {
        if self.node.powered_off() && ev.on_node() {
            return; // the node is off: no kubelet, no runtime, no requests in flight
        }
        let live = |w: &Self, e: Epoch| w.process.live(e);
        match ev {
            Event::CreatePod(i) => self.create_pod(i),
            Event::Timeline(i) => {
                let action = self.scenario.timeline[i].action.clone();
                self.timeline(action);
                let tl = &self.scenario.timeline;
                if tl.get(i + 1).is_some_and(|next| next.at == tl[i].at) {
                    let now = self.sim.now();
                    let _ = self.sim.at(now, Event::Timeline(i + 1));
                }
            }
            Event::Logind(l) => self.logind(l),
            Event::KubeletStart(e) => self.kubelet_start(e),
            Event::Runtime(rt) => {
                let replies = self.runtime.on_event(&mut self.sim, &mut self.trace, rt);
                self.deliver(replies);
            }
            Event::CriComplete { caller, req, fault } => {
                let req = self.runtime.unbox(req);
                self.cri_complete(caller, req, fault);
            }
            Event::ApiStatusSync { uid, epoch: e } | Event::ApiDelete { uid, epoch: e }
                if !live(self, e) =>
            {
                // The request would reach the API server after its kubelet died: the
                // connection is gone, the request never arrives.
                self.trace.emit(
                    self.sim.now(),
                    &Transition::Note {
                        uid,
                        what: NoteKind::DeadKubeletRequestDropped,
                    },
                );
            }
            Event::ApiStatusSync { uid, .. } => self.api_status_sync(uid),
            Event::ApiDelete { uid, .. } => {
                self.api.kubelet_delete(&mut self.sim, &mut self.trace, uid);
                let (kubelet, mut ctx) = self.kubelet_ctx();
                kubelet.status_on_api_deleted(&mut ctx, uid);
            }
            Event::ApiCreateMirror { epoch: e, .. } | Event::ApiDeleteMirror { epoch: e, .. }
                if !live(self, e) => {}
            Event::ApiCreateMirror { pod, .. } => {
                self.api.create_mirror(&mut self.sim, &mut self.trace, &pod);
            }
            Event::ApiDeleteMirror { uid, .. } => {
                self.api.delete_mirror(&mut self.sim, &mut self.trace, uid);
            }
            Event::Watch(e, _)
            | Event::WatchSynced(e)
            | Event::Kubelet(e, _)
            | Event::File(e, _)
            | Event::FileSynced(e)
                if !live(self, e) => {}
            Event::Watch(_, w) => self.watch(w, false),
            Event::File(_, w) => self.watch(w, true),
            Event::WatchSynced(_) => self.kubelet.on_watch_synced(),
            Event::FileSynced(_) => self.kubelet.on_file_synced(),
            Event::Kubelet(_, k) => {
                let (kubelet, mut ctx) = self.kubelet_ctx();
                kubelet.handle(&mut ctx, k);
            }
        }
    }

    /// CRI replies reach the kubelet only if the incarnation that asked still runs.
    pub(super) fn deliver(
        &mut self,
        replies: impl IntoIterator<Item = (CriClient, CriReq, CriResult)>,
    ) {
        let process = &self.process;
        let mut ctx = Ctx::new(
            &mut self.sim,
            &mut self.trace,
            &mut self.runtime,
            &mut self.api,
            process.epoch,
        );
        for (client, req, result) in replies {
            if process.live(client.epoch) {
                self.kubelet
                    .on_cri_reply(&mut ctx, client.caller, req, result);
            }
        }
    }

    /// A CRI call completes in the runtime; its reply, and any stop replies a host
    /// operation released, go to the kubelet.
    fn cri_complete(
        &mut self,
        caller: CriClient,
        req: CriReq,
        fault: Option<crate::model::CriError>,
    ) {
        if !self.process.live(caller.epoch) && matches!(req, CriReq::Relist { .. }) {
            // A dead PLEG's relist: a read nobody will look at. (Completing it would
            // consume the runtime's change set the next PLEG relies on.)
            return;
        }
        if !self.process.live(caller.epoch) && matches!(req, CriReq::MountVolumes { .. }) {
            // The volume manager mounts in the kubelet process (v1.31 `operation_executor`,
            // `pkg/volume/util/operationexecutor`; a tmpfs or bind mount is one syscall of
            // that process): a mount still in flight when the process died never lands. (A
            // mount landing behind the next incarnation's reconstruction let it delete the
            // pod object with the volumes mounted: hunt finding delete-only-after-reclamation.)
            return;
        }
        let result = self
            .runtime
            .complete(&mut self.sim, &mut self.trace, caller, &req, fault);
        if self.runtime.deferred.is_empty() {
            // The common case, one reply and nothing released: no list to build.
            if let Some(result) = result {
                self.deliver(Some((caller, req, result)));
            }
            return;
        }
        let mut replies = Vec::new();
        if let Some(result) = result {
            replies.push((caller, req, result));
        }
        replies.append(&mut self.runtime.deferred);
        self.deliver(replies);
    }

    /// A watch (or, `file`, file-source) event reaches the running kubelet.
    fn watch(&mut self, w: WatchEvent, file: bool) {
        crate::world::emit_plain(
            &mut self.trace,
            self.sim.now(),
            Transition::WatchDelivered {
                uid: w.pod.uid,
                kind: watch_label(w.kind, file),
            },
        );
        let (kubelet, mut ctx) = self.kubelet_ctx();
        if file {
            kubelet.on_file_event(&mut ctx, w);
        } else {
            kubelet.on_watch_event(&mut ctx, w);
        }
    }

    /// The status manager's GET + PATCH for `uid` reaches the API server.
    fn api_status_sync(&mut self, uid: PodUid) {
        // GET by namespace/name, as the status manager does.
        // The objects the kubelet reads are shared, not copied: the API server changes a
        // pod by copy on write, so a held object keeps what it held when taken.
        let current = self
            .kubelet
            .status_get_key(uid)
            .and_then(|(namespace, name)| self.api.get_by_name(uid, namespace, name))
            .cloned();
        let patch = {
            let (kubelet, mut ctx) = self.kubelet_ctx();
            kubelet.status_on_get(&mut ctx, uid, current.as_deref())
        };
        if let Some(status) = patch {
            // The object found by name: the pod itself, or a static pod's mirror.
            let target = current.as_ref().map_or(uid, |p| p.uid);
            // Let go of the object before the PATCH, which may then change it in place.
            drop(current);
            let after = (self.api)
                .patch_status(&mut self.sim, &mut self.trace, target, status)
                .cloned();
            let (kubelet, mut ctx) = self.kubelet_ctx();
            kubelet.status_on_api_patched(&mut ctx, uid, after.as_deref());
        }
    }

    /// Act as the kubelet from outside the event loop (tests drive the pod workers this way).
    #[cfg(test)]
    pub(crate) fn kubelet_do<R>(&mut self, f: impl FnOnce(&mut Kubelet, &mut Ctx) -> R) -> R {
        let (kubelet, mut ctx) = self.kubelet_ctx();
        f(kubelet, &mut ctx)
    }

    /// Process events up to and including simulated time `until`.
    #[cfg(test)]
    pub(crate) fn run_until(&mut self, until: SimTime) -> Option<StopReason> {
        loop {
            match self.sim.queue.peek_time() {
                Some(t) if t <= until => {}
                _ => return None,
            }
            match self.sim.next_held() {
                Ok(slot) => self.step_held(slot),
                Err(reason) => return Some(reason),
            }
        }
    }

    /// Run to the end: queue empty, horizon, or a limit.
    #[cfg(test)]
    pub(crate) fn run_to_end(&mut self) -> StopReason {
        self.run_to_end_with(None, None)
    }

    /// Runs to the end; with `sink`, kept trace records are handed to it in batches as the
    /// run makes them (and the last batch at the end), so none pile up in memory. Without
    /// one they stay in the trace, up to [`crate::sim::limits::MAX_KEPT_RECORDS`]. With
    /// `typed` (and a world built with a tap), the typed transitions are handed out in the
    /// same way.
    pub(crate) fn run_to_end_with(
        &mut self,
        mut sink: Option<&mut RecordSink<'_>>,
        mut typed: Option<&mut TransitionSink<'_>>,
    ) -> StopReason {
        const BATCH: usize = 4096;
        let cap = crate::sim::limits::MAX_KEPT_RECORDS;
        // A run that keeps no records and hands nothing out (`run --json`, a bench) has
        // nothing to look at between events: one test of a flag, not a look at the records
        // and the outputs after each. (One loop for both kinds of run: with two, the
        // queue's step, inlined here, was made a call: 1.7 M instructions more a node-hour.)
        let observed = sink.is_some() || typed.is_some() || self.trace.keeps_records();
        let stop = loop {
            match self.sim.next_held() {
                Ok(slot) => self.step_held(slot),
                Err(reason) => break reason,
            }
            if !observed {
                continue;
            }
            let kept = self.trace.records().len();
            match sink.as_deref_mut() {
                Some(f) if kept >= BATCH => f(&self.trace.take_records()),
                None if kept >= cap => break StopReason::MaxKeptRecords,
                _ => {}
            }
            if let Some(f) = typed.as_deref_mut() {
                self.hand_out_typed(f, BATCH);
            }
        };
        debug_assert!(observed || self.trace.records().is_empty());
        if let Some(f) = sink {
            f(&self.trace.take_records());
        }
        if let Some(f) = typed {
            self.hand_out_typed(f, 0);
            self.trace.observer_mut().tap = None;
        }
        stop
    }

    /// Hands the tapped transitions to `f` once there are at least `batch` of them.
    fn hand_out_typed(&mut self, f: &mut TransitionSink<'_>, batch: usize) {
        let tap = self.trace.observer_mut().tap.as_mut();
        if let Some(t) = tap.filter(|t| t.len() >= batch.max(1)) {
            let taken = std::mem::take(t);
            f(&taken);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Event;

    /// Every event is moved through the queue and kept in it while pending: the large CRI
    /// request is boxed so an event is 48 bytes (it was 104 with the request inline).
    #[test]
    fn events_stay_small() {
        assert!(
            std::mem::size_of::<Event>() <= 48,
            "{} bytes",
            std::mem::size_of::<Event>()
        );
    }
}
