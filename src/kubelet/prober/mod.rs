//! The prober: probe workers per (pod, container, probe kind), their results managers, and
//! how results reach the sync loop and the pod status.
//!
//! Follows upstream v1.31: `pkg/kubelet/prober/prober_manager.go` (this file: `AddPod`,
//! `StopLivenessAndStartup`, `RemovePod`, `CleanupPods`, `UpdatePodStatus`),
//! `pkg/kubelet/prober/prober.go` (this file: `probe` with `runProbeWithRetries`),
//! [`worker`] (`worker.go`), [`results_manager`] (`results/results_manager.go`), and the
//! three probe cases of `syncLoopIteration` in `pkg/kubelet/kubelet.go` (`handleProbeSync`).
//!
//! Behaviour switch `stopProbesAtTermination` (race catalog 10, PR 110191, on from v1.25 and
//! in the 1.22.x-1.24.x backports): off, the probe workers follow config as before: added
//! by `HandlePodAdditions`, all removed when a deletion is handled (the pod-worker design of
//! v1.22-v1.24, issue 110309) and by `HandlePodRemoves`, and housekeeping's `CleanupPods`;
//! `SyncPod` and `SyncTerminatingPod` do not touch them.
//!
//! Where it deliberately differs:
//! * Each worker goroutine is a small state machine driven by `KEv::ProbeWorker` events
//!   (first run after the start-up sleep, ticks, manual triggers, stop); the 1-slot stop and
//!   trigger channels are flags.
//! * The probe itself is a call into the runtime ([`crate::world::Ctx::exec_probe`]) answered
//!   at once from the container's `behaviour.probes`, so `timeoutSeconds` never cuts a probe
//!   short; handler details (command, path, port) are not modelled.
//! * Go's random map order in `CleanupPods` becomes key order (UID, container, kind); stops
//!   are asynchronous either way.
//! * Only regular containers are probed: init containers (and so restartable sidecars) are
//!   not modelled yet.

pub(crate) mod results_manager;
mod tick;
pub(crate) mod worker;

pub(crate) use results_manager::{ProbeResult, ResultsManager};
pub(crate) use worker::{ProbeWake, StatusView, Worker};

use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::change_log::{ChangeLog, Changes};
use crate::model::uid_map::UidMap;
use crate::model::ProbeVerdict;
use crate::model::ProbeWorkerStep;
use crate::model::{
    ApiContainerStatus, ApiPod, ApiPodStatus, ContainerId, ContainerSpec, Containers, PodUid,
    ProbeHandler, ProbeType, Transition,
};
use crate::sim::{Dur, SimTime, Stream};
use std::sync::Arc;

/// `maxProbeRetries`: a probe that errors is retried this many times in a row.
pub(crate) const MAX_PROBE_RETRIES: u32 = 3;

/// `probeKey`: one worker per pod, container and probe kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ProbeKey {
    pub(crate) uid: PodUid,
    /// Shared with the worker's events and its `Probe` transitions (a count, no copy).
    pub(crate) container: Arc<str>,
    pub(crate) kind: ProbeType,
}

/// One pod's probe workers: (container, kind, slot), sorted by (container, kind).
type PodProbes = Vec<(Arc<str>, ProbeType, u32)>;

/// One pod's entry in the prober's index: its workers.
#[derive(Clone, Debug, Default)]
struct PodEntry {
    workers: PodProbes,
}

/// The probe manager's state.
///
/// Upstream's `workers` map (`map[probeKey]*worker`) is split in two here: the workers
/// live in slots (a worker's events carry its slot and generation, so a tick finds its
/// worker without a search and a stale tick of an exited worker is told apart by the
/// generation), and a per-pod index in (container, kind) order answers the lookups by key.
#[derive(Clone, Debug)]
pub(crate) struct ProbeManager {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub(crate) b: crate::kubelet::profile::Behaviours,
    /// Workers by slot; `free` lists the empty slots.
    slots: Vec<Option<Worker>>,
    free: Vec<u32>,
    /// The slot of each worker, by pod, sorted by (container, kind): together the keys
    /// in `ProbeKey` order. A vector sorted by UID rather than a B-tree: housekeeping walks
    /// it every pass (a slice walk costs a few instructions a pod, a B-tree walk ~40),
    /// lookups are a binary search, and pods are added and removed far less often.
    index: Vec<(PodUid, PodEntry)>,
    /// The last answer of [`ProbeManager::index_pos`] (UID, then its `Ok`/`Err` position):
    /// a pod's sync asks for the same pod several times in a row (the status memo's test,
    /// `AddPod`, `UpdatePodStatus`), and nothing moves the index between those questions.
    /// Forgotten whenever an entry is inserted into or removed from `index`; debug builds
    /// check every answer it gives against the search.
    last_pos: std::cell::Cell<Option<(PodUid, Result<u32, u32>)>>,
    /// By pod with workers: the regular containers' list (a shared, copy-on-write
    /// `Containers`) of the last `AddPod` whose first probe is a regular container's, while
    /// no worker of the pod has exited since: `AddPod` of a pod with that same list finds
    /// that probe's worker and returns at once, after one array look-up (no search of the
    /// index). The map holds the list, so the same address is the same list with the same
    /// probes.
    added: UidMap<Containers>,
    pub(crate) liveness: ResultsManager,
    pub(crate) readiness: ResultsManager,
    pub(crate) startup: ResultsManager,
    /// When the manager was created (the kubelet's start): workers created within one probe
    /// period of it sleep a random part of the period before their first probe.
    pub(crate) start: SimTime,
    rng: Stream,
    next_gen: u64,
    /// Probes run, for the run summary.
    pub(crate) probes_run: u64,
    /// The reach point `ProbeWhileTerminating` was marked (a bit that stays set).
    pub(crate) reached_probe_while_terminating: bool,
    /// Scratch list of the slots `CleanupPods` stops (kept to reuse its allocation).
    stop_scratch: Vec<u32>,
    /// The epoch of the pod workers' second change log the workers' `terminating` copies
    /// were last brought up to date at (0: never; a take hands out epochs from 1).
    terminating_synced: u64,
    /// Scratch list of the UIDs that log names (kept to reuse its allocation).
    terminating_changed: Vec<PodUid>,
    /// Whether housekeeping's `CleanupPods` may have a worker to stop that it was not
    /// already told to stop: a worker was added, or a refresh from the pod workers' second
    /// change log found a pod with workers whose worker is neither syncing nor terminating
    /// it. While false the pass is skipped (debug builds check it would send nothing).
    cleanup_due: bool,
}

impl ProbeManager {
    pub(crate) fn new(seed: u64) -> Self {
        ProbeManager {
            b: Default::default(),
            slots: Vec::new(),
            free: Vec::new(),
            index: Vec::new(),
            last_pos: std::cell::Cell::new(None),
            added: UidMap::new(),
            liveness: ResultsManager::default(),
            readiness: ResultsManager::default(),
            startup: ResultsManager::default(),
            start: SimTime::ZERO,
            rng: Stream::new(seed, "kubelet/prober"),
            next_gen: 1,
            probes_run: 0,
            reached_probe_while_terminating: false,
            stop_scratch: Vec::new(),
            terminating_synced: 0,
            terminating_changed: Vec::new(),
            cleanup_due: true,
        }
    }

    pub(crate) fn results(&self, kind: ProbeType) -> &ResultsManager {
        match kind {
            ProbeType::Liveness => &self.liveness,
            ProbeType::Readiness => &self.readiness,
            ProbeType::Startup => &self.startup,
        }
    }

    pub(crate) fn results_mut(&mut self, kind: ProbeType) -> &mut ResultsManager {
        match kind {
            ProbeType::Liveness => &mut self.liveness,
            ProbeType::Readiness => &mut self.readiness,
            ProbeType::Startup => &mut self.startup,
        }
    }

    /// The slot of the worker for (pod, container, kind), if it has one.
    pub(crate) fn slot_of(&self, uid: PodUid, container: &str, kind: ProbeType) -> Option<u32> {
        let pod = self.index_pos(uid).ok().map(|i| &self.index[i].1.workers)?;
        pod.iter()
            .find(|(c, k, _)| *k == kind && **c == *container)
            .map(|&(_, _, slot)| slot)
    }

    fn has_worker(&self, uid: PodUid, container: &str, kind: ProbeType) -> bool {
        self.slot_of(uid, container, kind).is_some()
    }

    /// The workers of pod `uid` as (container, kind, slot), sorted by (container, kind).
    pub(crate) fn pod_workers(&self, uid: PodUid) -> &[(Arc<str>, ProbeType, u32)] {
        match self.index_pos(uid) {
            Ok(i) => &self.index[i].1.workers,
            Err(_) => &[],
        }
    }

    /// The status manager's cache entry of `uid` was written or dropped: refresh the view
    /// of each of the pod's workers.
    fn status_changed(&mut self, uid: PodUid, status: Option<&ApiPodStatus>) {
        let Ok(i) = self.index_pos(uid) else {
            return;
        };
        // The pod's workers are sorted by container: a container's view is found once.
        let mut last: Option<(&Arc<str>, StatusView)> = None;
        for (container, _, slot) in &self.index[i].1.workers {
            let view = match last {
                Some((c, view)) if Arc::ptr_eq(c, container) || **c == **container => view,
                _ => StatusView::of(status, container),
            };
            last = Some((container, view));
            let w = self.slots[*slot as usize].as_mut().expect("worker present");
            w.set_view(view);
        }
    }

    /// Whether the workers' `terminating` copies may be stale: `log` (the pod workers'
    /// second change log) noted a record since they were last brought up to date.
    #[inline]
    pub(crate) fn terminating_stale(&self, log: &ChangeLog) -> bool {
        !log.is_clean_at(self.terminating_synced)
    }

    /// Bring the workers' `terminating` copies up to date: take `log` and set the copies of
    /// the pods it names (of every pod when it cannot name them) from `standing` (whether
    /// the pod workers see the pod's termination as requested, and whether their worker
    /// may still run it: syncing or terminating, housekeeping's `possiblyRunning`). A pod
    /// with workers that may no longer run makes `CleanupPods` due.
    #[inline(never)]
    pub(crate) fn refresh_terminating(
        &mut self,
        log: &mut ChangeLog,
        standing: impl Fn(PodUid) -> (bool, bool),
    ) {
        let mut changed = std::mem::take(&mut self.terminating_changed);
        let synced = (self.terminating_synced != 0).then_some(self.terminating_synced);
        let all = log.take(synced, &mut changed) == Changes::All;
        self.terminating_synced = log.epoch();
        let mut set = |i: usize| {
            let (uid, pod) = &self.index[i];
            let (t, running) = standing(*uid);
            self.cleanup_due |= !running;
            for &(_, _, slot) in &pod.workers {
                let w = self.slots[slot as usize].as_mut().expect("worker present");
                w.set_terminating(t);
            }
        };
        if all {
            for i in 0..self.index.len() {
                set(i);
            }
        } else {
            // Both are sorted by UID: one merge walk.
            let mut at = 0;
            for uid in &changed {
                at += self.index[at..].partition_point(|(u, _)| u < uid);
                if self.index.get(at).is_some_and(|(u, _)| u == uid) {
                    set(at);
                }
            }
        }
        self.terminating_changed = changed;
    }

    /// The worker in `slot`, if it is still instance `gen`.
    #[inline]
    pub(crate) fn worker_mut(&mut self, slot: u32, gen: u64) -> Option<&mut Worker> {
        self.slots
            .get_mut(slot as usize)
            .and_then(Option::as_mut)
            .filter(|w| u64::from(w.gen) == gen)
    }

    /// The worker in `slot` (which must hold one).
    #[inline]
    pub(crate) fn worker(&self, slot: u32) -> &Worker {
        self.slots[slot as usize].as_ref().expect("worker present")
    }

    /// [`ProbeManager::worker`], mutably.
    #[inline]
    pub(crate) fn worker_at(&mut self, slot: u32) -> &mut Worker {
        self.slots[slot as usize].as_mut().expect("worker present")
    }

    /// Add worker `w` (its key has none yet); returns its slot.
    fn insert(&mut self, w: Worker) -> u32 {
        // Its pod may be one housekeeping stops the workers of.
        self.cleanup_due = true;
        let key = w.key.clone();
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(w);
                i
            }
            None => {
                self.slots.push(Some(w));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 probe workers")
            }
        };
        let i = match self.index_pos(key.uid) {
            Ok(i) => i,
            Err(i) => {
                self.index.insert(i, (key.uid, PodEntry::default()));
                self.last_pos.set(None);
                i
            }
        };
        let pod = &mut self.index[i].1.workers;
        let at = pod.partition_point(|(c, k, _)| (&**c, *k) < (&*key.container, key.kind));
        pod.insert(at, (key.container.clone(), key.kind, slot));
        slot
    }

    /// Remove the worker in `slot` (which must hold one).
    pub(crate) fn remove(&mut self, slot: u32) -> Worker {
        let w = self.slots[slot as usize].take().expect("worker present");
        self.free.push(slot);
        if let Ok(i) = self.index_pos(w.key.uid) {
            let pod = &mut self.index[i].1;
            pod.workers.retain(|&(_, _, s)| s != slot);
            // The worker of the first probe may be the one gone.
            self.added.remove(&w.key.uid);
            if pod.workers.is_empty() {
                self.index.remove(i);
                self.last_pos.set(None);
            }
        }
        w
    }

    /// Where `uid` is (`Ok`) or would be inserted (`Err`) in the UID-sorted index.
    /// The answer for the UID asked last is kept (see `last_pos`).
    #[inline]
    fn index_pos(&self, uid: PodUid) -> Result<usize, usize> {
        if let Some((u, pos)) = self.last_pos.get() {
            if u == uid {
                let pos = pos.map(|i| i as usize).map_err(|i| i as usize);
                debug_assert_eq!(
                    pos,
                    self.index_search(uid),
                    "pod {uid}: the prober's kept index position is stale"
                );
                return pos;
            }
        }
        let pos = self.index_search(uid);
        let small = |i: usize| u32::try_from(i).expect("fewer than 2^32 pods with probes");
        self.last_pos
            .set(Some((uid, pos.map(small).map_err(small))));
        pos
    }

    /// [`ProbeManager::index_pos`] by a binary search of the index.
    fn index_search(&self, uid: PodUid) -> Result<usize, usize> {
        self.index.binary_search_by(|(u, _)| u.cmp(&uid))
    }
}

impl Kubelet {
    /// `AddPod`: start a worker for every probe that has none. Upstream's quirk is kept: the
    /// first probe found with a worker already running ends the whole call.
    ///
    /// A resync (every `SyncPod` calls it) of a pod whose first probe's worker runs returns
    /// after one look-up of `ProbeManager::added`; debug builds walk the probes and assert
    /// the first has a worker.
    pub(crate) fn probe_add_pod(&mut self, ctx: &mut Ctx, pod: &Arc<ApiPod>) {
        let kinds = [
            ProbeType::Startup,
            ProbeType::Readiness,
            ProbeType::Liveness,
        ];
        let probed = |c: &ContainerSpec| kinds.iter().any(|&k| c.probe(k).is_some());
        // A pod without any probe (a crash-looping or a batch pod resyncs often): the walk
        // would find nothing to start, so neither the index nor the walk is visited.
        let spec = &pod.spec;
        if !spec
            .containers
            .iter()
            .chain(&spec.init_containers)
            .any(probed)
        {
            debug_assert!(
                self.probe_first_has_worker(pod).is_none(),
                "pod {}: AddPod skipped as probe-less, but it has a probe",
                pod.uid
            );
            return;
        }
        let same = |c: &Containers| std::ptr::eq::<Vec<_>>(&**c, &*pod.spec.containers);
        if self.prober.added.get(&pod.uid).is_some_and(same) {
            debug_assert!(
                self.probe_first_has_worker(pod) == Some(true),
                "pod {}: AddPod skipped, but its first probe has no worker",
                pod.uid
            );
            return;
        }
        self.probe_add_pod_walk(ctx, pod);
        // The first probe has a worker now (it had one, or the walk started one).
        if pod.spec.containers.iter().any(probed) && self.prober.index_pos(pod.uid).is_ok() {
            self.prober
                .added
                .insert(pod.uid, pod.spec.containers.clone());
        }
    }

    /// Whether the first probe `AddPod` walks to has a worker (`None`: the pod has none).
    fn probe_first_has_worker(&self, pod: &ApiPod) -> Option<bool> {
        let kinds = [
            ProbeType::Startup,
            ProbeType::Readiness,
            ProbeType::Liveness,
        ];
        let containers = pod.spec.containers.iter().chain(&pod.spec.init_containers);
        containers
            .flat_map(|c| kinds.iter().map(move |&k| (c, k)))
            .find(|(c, k)| c.probe(*k).is_some())
            .map(|(c, k)| self.prober.has_worker(pod.uid, &c.name, k))
    }

    /// `AddPod`'s walk over the pod's probes (out of line: the resync's skip above stays a
    /// small function).
    #[inline(never)]
    fn probe_add_pod_walk(&mut self, ctx: &mut Ctx, pod: &Arc<ApiPod>) {
        let now = ctx.now();
        // Sidecars are probed as regular containers are (classic init containers have no
        // probes): `AddPod` walks them after the regular ones (`prober_manager.go`, v1.31).
        for c in pod.spec.containers.iter().chain(&pod.spec.init_containers) {
            for kind in [
                ProbeType::Startup,
                ProbeType::Readiness,
                ProbeType::Liveness,
            ] {
                let Some(spec) = c.probe(kind) else {
                    continue;
                };
                if self.prober.has_worker(pod.uid, &c.name, kind) {
                    return;
                }
                let key = ProbeKey {
                    uid: pod.uid,
                    container: Arc::from(c.name.as_str()),
                    kind,
                };
                let gen = self.prober.next_gen;
                self.prober.next_gen += 1;
                // run(): a worker started within one period of the kubelet's start sleeps a
                // random part of the period first.
                let period = Dur::secs(u64::from(spec.period_seconds));
                let sleep = if period > now.since(self.prober.start) {
                    Dur(self.prober.rng.below(period.0))
                } else {
                    Dur::ZERO
                };
                let cached = self.status.statuses.get(&pod.uid).map(|v| &*v.status);
                let view = StatusView::of(cached, &c.name);
                let mut w = Worker::new(gen, key.clone(), pod, spec, view);
                w.set_terminating(self.pw.is_pod_termination_requested(pod.uid));
                let source = w.source;
                let slot = self.prober.insert(w);
                self.status_memo_probes_changed(pod.uid);
                ctx.emit(Transition::ProbeWorker {
                    uid: pod.uid,
                    container: key.container.clone(),
                    kind,
                    what: ProbeWorkerStep::Started,
                });
                let _ = ctx.after(
                    sleep,
                    KEv::ProbeWorker {
                        slot,
                        gen,
                        wake: ProbeWake::FirstRun,
                        source,
                    },
                );
            }
        }
    }

    fn probe_stop_kinds(
        &mut self,
        ctx: &mut Ctx,
        pod: &ApiPod,
        kinds: &[ProbeType],
        sidecars: bool,
    ) {
        let init: &[_] = if sidecars {
            &pod.spec.init_containers
        } else {
            &[]
        };
        for c in pod.spec.containers.iter().chain(init) {
            for kind in kinds {
                if let Some(slot) = self.prober.slot_of(pod.uid, &c.name, *kind) {
                    self.probe_worker_send(ctx, slot, ProbeWake::Stop);
                }
            }
        }
    }

    /// `StopLivenessAndStartup` (start of `SyncTerminatingPod`).
    pub(crate) fn probe_stop_liveness_and_startup(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        // v1.31 stops only the regular containers' workers here: a sidecar's liveness and
        // startup workers run on until `RemovePod` (fixed upstream in PR 141766).
        self.probe_stop_kinds(ctx, pod, &[ProbeType::Liveness, ProbeType::Startup], false);
    }

    /// `RemovePod` (after the kill in `SyncTerminatingPod`).
    pub(crate) fn probe_remove_pod(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        self.probe_stop_kinds(
            ctx,
            pod,
            &[
                ProbeType::Readiness,
                ProbeType::Liveness,
                ProbeType::Startup,
            ],
            true,
        );
    }

    /// Housekeeping's `CleanupPods`: stop the workers of every pod whose worker is neither
    /// syncing nor terminating it (`desired`: whether it is, from `SyncKnownPods`' report,
    /// which stands for the pod workers' records).
    ///
    /// Stops are sends on a one-slot channel: a second stop of a worker told once is
    /// dropped, so a pass changes something only for a worker added since the last full
    /// pass, or a pod whose worker record changed to not running; the pod workers' second
    /// change log names those records (see [`ProbeManager::refresh_terminating`]). Other
    /// passes are skipped; debug builds walk them in full and assert every worker they would
    /// stop was told already.
    #[inline(never)]
    pub(crate) fn probe_cleanup_pods(
        &mut self,
        ctx: &mut Ctx,
        desired: impl FnMut(PodUid) -> bool,
    ) {
        if self.prober.terminating_stale(self.pw.records.watch()) {
            self.probe_refresh_terminating();
        }
        if !self.prober.cleanup_due {
            #[cfg(debug_assertions)]
            self.probe_check_cleanup_skip(desired);
            #[cfg(not(debug_assertions))]
            let _ = desired;
            return;
        }
        self.prober.cleanup_due = false;
        self.probe_cleanup_pods_all(ctx, desired);
    }

    /// Debug builds: a skipped `CleanupPods` would have stopped no worker not told already.
    #[cfg(debug_assertions)]
    fn probe_check_cleanup_skip(&self, mut desired: impl FnMut(PodUid) -> bool) {
        for (uid, pod) in &self.prober.index {
            if !desired(*uid) {
                for &(_, _, slot) in &pod.workers {
                    let w = self.prober.worker(slot);
                    assert!(
                        w.stop_pending,
                        "probe worker {:?}: a skipped CleanupPods would have stopped it",
                        w.key
                    );
                }
            }
        }
    }

    /// `CleanupPods` in full: stop the workers of every pod not in `desired` (the legacy
    /// housekeeping passes the pods in config).
    /// `desired` is asked in ascending UID order (the per-pod index's key order), once per
    /// pod, so it may walk a sorted listing instead of searching it.
    #[inline(never)]
    pub(crate) fn probe_cleanup_pods_all(
        &mut self,
        ctx: &mut Ctx,
        mut desired: impl FnMut(PodUid) -> bool,
    ) {
        let mut stop = std::mem::take(&mut self.prober.stop_scratch);
        for (uid, pod) in &self.prober.index {
            if !desired(*uid) {
                stop.extend(pod.workers.iter().map(|&(_, _, slot)| slot));
            }
        }
        for &slot in &stop {
            self.probe_worker_send(ctx, slot, ProbeWake::Stop);
        }
        stop.clear();
        self.prober.stop_scratch = stop;
    }

    /// The status manager wrote or dropped its cached status of `uid` (call after every
    /// change of `status.statuses` for one pod): the pod's probe workers see it.
    pub(crate) fn probe_status_changed(&mut self, uid: PodUid) {
        if self.prober.pod_workers(uid).is_empty() {
            return;
        }
        let cached = self.status.statuses.get(&uid).map(|v| &*v.status);
        self.prober.status_changed(uid, cached);
    }

    /// Like [`Kubelet::probe_status_changed`] for every pod with probe workers (after the
    /// status manager dropped several statuses at once).
    pub(crate) fn probe_status_changed_all(&mut self) {
        for i in 0..self.prober.index.len() {
            let uid = self.prober.index[i].0;
            let cached = self.status.statuses.get(&uid).map(|v| &*v.status);
            self.prober.status_changed(uid, cached);
        }
    }

    /// `UpdatePodStatus`: set `started` and `ready` of each container status from the cached
    /// results. Returns the readiness workers to trigger at once (a started container whose
    /// readiness probe has not succeeded yet).
    pub(crate) fn probe_update_pod_status(
        &self,
        uid: PodUid,
        statuses: &mut [ApiContainerStatus],
    ) -> Vec<ProbeKey> {
        let mut trigger = Vec::new();
        if statuses.is_empty() {
            return trigger;
        }
        // One search for the pod's workers; each container then scans the pod's few.
        let workers = self.prober.pod_workers(uid);
        let slot_of = |name: &str, kind: ProbeType| {
            let found = workers
                .iter()
                .find(|(c, k, _)| *k == kind && **c == *name)
                .map(|&(_, _, slot)| slot);
            debug_assert_eq!(found, self.prober.slot_of(uid, name, kind));
            found
        };
        for c in statuses.iter_mut() {
            let running = c.state.is_running();
            let result = |kind: ProbeType| {
                c.container_id
                    .and_then(|id| self.prober.results(kind).get(id))
            };
            let started = if !running {
                false
            } else if let Some(r) = result(ProbeType::Startup) {
                r == ProbeResult::Success
            } else {
                slot_of(&c.name, ProbeType::Startup).is_none()
            };
            c.started = started;
            if !started {
                continue;
            }
            c.ready = if !running {
                false
            } else if result(ProbeType::Readiness) == Some(ProbeResult::Success) {
                true
            } else {
                let slot = slot_of(&c.name, ProbeType::Readiness);
                if let Some(slot) = slot {
                    trigger.push(self.prober.worker(slot).key.clone());
                }
                slot.is_none()
            };
        }
        trigger
    }

    /// A results manager's `Set`: store, and queue an update for the sync loop on change.
    /// Returns whether an update was queued.
    pub(crate) fn probe_set_result(
        &mut self,
        ctx: &mut Ctx,
        kind: ProbeType,
        uid: PodUid,
        id: ContainerId,
        result: ProbeResult,
    ) -> bool {
        let m = self.prober.results_mut(kind);
        let was_empty = m.updates.is_empty();
        if !m.set(id, result, uid) {
            return false;
        }
        self.status_memo_probes_changed(uid);
        ctx.emit(Transition::ProbeResult {
            uid,
            id,
            kind,
            result,
        });
        if was_empty {
            let _ = ctx.after(Dur::ZERO, KEv::ProbeUpdates(kind));
        }
        true
    }

    /// The sync loop takes one update from a results manager's channel (the three probe
    /// cases of `syncLoopIteration`, then `handleProbeSync`).
    pub(crate) fn on_probe_updates(&mut self, ctx: &mut Ctx, kind: ProbeType) {
        let m = self.prober.results_mut(kind);
        let Some(u) = m.updates.pop_front() else {
            return;
        };
        if !m.updates.is_empty() {
            let _ = ctx.after(Dur::ZERO, KEv::ProbeUpdates(kind));
        }
        match kind {
            ProbeType::Liveness => {
                if u.result != ProbeResult::Failure {
                    return;
                }
            }
            ProbeType::Readiness => {
                self.set_container_readiness(ctx, u.uid, u.id, u.result == ProbeResult::Success)
            }
            ProbeType::Startup => {
                self.set_container_startup(ctx, u.uid, u.id, u.result == ProbeResult::Success)
            }
        }
        // handleProbeSync: only pods the pod manager knows.
        self.handle_pod_syncs(ctx, &[u.uid]);
    }
}

/// `prober.probe` with `runProbeWithRetries`: run the probe of worker `w` on container
/// `id`, retrying errors, and trace it; an error after the last retry is returned (the
/// worker throws the result away). The transition traced is the worker's own record with
/// this probe's verdict ([`Worker::probe_record`]): nothing is built or counted per probe,
/// and the hash takes the worker's kept word of the container name in place of its text.
#[inline(always)]
pub(crate) fn run_probe(
    ctx: &mut Ctx,
    w: &mut Worker,
    id: ContainerId,
) -> Result<ProbeResult, &'static str> {
    let name_word = w.name_word;
    let out = probe_exec(ctx, w, id);
    let verdict = match out {
        Ok(true) => ProbeVerdict::Success,
        Ok(false) => ProbeVerdict::Failure,
        Err(_) => ProbeVerdict::Error,
    };
    ctx.emit_hinted(w.probe_record(verdict), name_word);
    out.map(|ok| {
        if ok {
            ProbeResult::Success
        } else {
            ProbeResult::Failure
        }
    })
}

/// The probe of `run_probe` with its retries, without its transition.
#[inline(always)]
pub(crate) fn probe_exec(ctx: &mut Ctx, w: &Worker, id: ContainerId) -> Result<bool, &'static str> {
    let (kind, handler) = (w.kind, w.handler);
    let out = ctx.exec_probe(id, kind, handler);
    if out.is_err() {
        return retry_probe(ctx, id, kind, handler);
    }
    out
}

/// `runProbeWithRetries` after a first try that errored: the tries left, until one does
/// not error (out of line: a probe of a running container does not error).
#[cold]
#[inline(never)]
fn retry_probe(
    ctx: &mut Ctx,
    id: ContainerId,
    kind: ProbeType,
    handler: ProbeHandler,
) -> Result<bool, &'static str> {
    let mut out = Err("not run");
    for _ in 1..MAX_PROBE_RETRIES {
        out = ctx.exec_probe(id, kind, handler);
        if out.is_ok() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PodSpec, Probe, RestartPolicy};

    /// A manager with one readiness and one liveness worker for each of `uids`.
    fn manager(uids: &[u32]) -> ProbeManager {
        let mut m = ProbeManager::new(1);
        for &u in uids {
            let spec = PodSpec::new(
                &format!("p{u}"),
                "default",
                RestartPolicy::Always,
                vec![ContainerSpec::named("app", "img")],
            );
            let pod = Arc::new(ApiPod::new(PodUid(u), spec));
            for kind in [ProbeType::Readiness, ProbeType::Liveness] {
                let key = ProbeKey {
                    uid: PodUid(u),
                    container: Arc::from("app"),
                    kind,
                };
                let gen = m.next_gen;
                m.next_gen += 1;
                let view = StatusView::NoStatus;
                m.insert(Worker::new(gen, key, &pod, &Probe::default(), view));
            }
        }
        m
    }

    fn copies(m: &ProbeManager) -> Vec<(u32, bool)> {
        m.slots
            .iter()
            .flatten()
            .map(|w| (w.key.uid.0, w.terminating()))
            .collect()
    }

    #[test]
    fn refresh_terminating_sets_the_named_pods_or_all() {
        let mut m = manager(&[1, 2, 3]);
        let mut log = ChangeLog::default();
        // Never taken: every pod is refreshed.
        assert!(m.terminating_stale(&log));
        m.refresh_terminating(&mut log, |uid| (uid == PodUid(2), true));
        let want = vec![
            (1, false),
            (1, false),
            (2, true),
            (2, true),
            (3, false),
            (3, false),
        ];
        assert_eq!(copies(&m), want);
        assert!(!m.terminating_stale(&log), "in step and nothing noted");
        // Only the named pods are looked at: a pod not named keeps its copy even if the
        // answer would now differ, and a named pod without workers is skipped.
        log.note(PodUid(3), 3);
        log.note(PodUid(4), 3);
        assert!(m.terminating_stale(&log));
        m.refresh_terminating(&mut log, |uid| (uid != PodUid(4), true));
        let want = vec![
            (1, false),
            (1, false),
            (2, true),
            (2, true),
            (3, true),
            (3, true),
        ];
        assert_eq!(copies(&m), want);
        // An overflowed log refreshes everyone.
        log.note_all();
        m.refresh_terminating(&mut log, |_| (false, true));
        assert!(copies(&m).iter().all(|&(_, t)| !t));
        // Another log (or another epoch of it) is out of step: everyone again.
        let mut other = ChangeLog::default();
        let mut out = Vec::new();
        let _ = other.take(None, &mut out);
        let _ = other.take(Some(other.epoch()), &mut out);
        assert!(m.terminating_stale(&other));
        m.refresh_terminating(&mut other, |uid| (uid == PodUid(1), true));
        let want = vec![
            (1, true),
            (1, true),
            (2, false),
            (2, false),
            (3, false),
            (3, false),
        ];
        assert_eq!(copies(&m), want);
    }

    #[test]
    fn cleanup_is_due_after_an_added_worker_or_a_pod_no_longer_running() {
        let mut m = manager(&[1, 2, 3]);
        assert!(m.cleanup_due, "workers were added");
        m.cleanup_due = false;
        let mut log = ChangeLog::default();
        // Every pod still runs: nothing to stop.
        m.refresh_terminating(&mut log, |_| (false, true));
        assert!(!m.cleanup_due);
        // A named pod that stopped running makes the pass due; one without workers not.
        log.note(PodUid(4), 3);
        m.refresh_terminating(&mut log, |uid| (false, uid != PodUid(4)));
        assert!(!m.cleanup_due, "pod 4 has no workers");
        log.note(PodUid(2), 3);
        m.refresh_terminating(&mut log, |uid| (false, uid != PodUid(2)));
        assert!(m.cleanup_due);
        // So does every pod refreshed at once, if any of them stopped running.
        m.cleanup_due = false;
        log.note_all();
        m.refresh_terminating(&mut log, |_| (false, true));
        assert!(!m.cleanup_due);
        log.note_all();
        m.refresh_terminating(&mut log, |uid| (false, uid != PodUid(3)));
        assert!(m.cleanup_due);
        // A new worker makes it due too.
        m.cleanup_due = false;
        let mut more = manager(&[5]);
        let w = more.slots[0].take().expect("a worker");
        m.insert(w);
        assert!(m.cleanup_due);
    }
}
