//! One probe worker: the periodic probing of one container for one probe kind.
//!
//! Follows `pkg/kubelet/prober/worker.go` (v1.31): `run` (a random start-up sleep only
//! within one period of the kubelet's start, then a probe per ticker period or manual
//! trigger until stopped) and `doProbe` step by step: status from the status manager's
//! cache, exit on a terminal local phase, reset on a new container ID, hold after a
//! liveness/startup failure until the next container, failure for a non-running container,
//! the deletion-timestamp shortcut of the pod snapshot, initial delay, startup gating, and
//! the success/failure thresholds. Where it deliberately differs: the goroutine is a state
//! machine ([`ProbeWake`] events); a probe takes no time. When a stop and a tick are due at
//! the same instant, the run's scheduler picks which one the worker's `select` sees first,
//! as Go's `select` would pick at random.

use super::{run_probe, ProbeKey, ProbeResult};
use crate::kubelet::pod_workers::PodWorkers;
use crate::kubelet::Ctx;
use crate::kubelet::{KEv, Kubelet};
use crate::model::ProbeWorkerStep;
use crate::model::{
    ApiContainerState, ApiPod, ApiPodStatus, ContainerId, Probe, ProbeHandler, ProbeType,
    ProbeVerdict, RestartPolicy, Transition,
};
use crate::sim::{Dur, SimTime};
use std::sync::Arc;

/// What woke a worker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ProbeWake {
    /// The start-up sleep is over: the first probe, then the ticker starts.
    FirstRun,
    /// The ticker fired.
    Tick,
    /// The manual trigger channel (a readiness probe asked for by `UpdatePodStatus`).
    Trigger,
    /// The stop channel.
    Stop,
}

/// What `doProbe` reads from the status manager's cached status (`GetPodStatus`) for this
/// worker's container, kept in step by [`Kubelet::probe_status_changed`] whenever the cache
/// entry of the pod is written or dropped, so a probe reads it without a search by pod UID
/// and container name (debug builds check it against that search at every probe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatusView {
    /// No cached status for the pod.
    NoStatus,
    /// The cached phase is terminal (the worker exits).
    Terminal,
    /// No status for the container, or the container has no ID yet.
    NoContainer,
    /// The container's status: its ID, since when it runs (if it does), whether it
    /// terminated, and its `started` flag.
    Container {
        id: ContainerId,
        running_since: Option<SimTime>,
        terminated: bool,
        started: bool,
    },
}

impl StatusView {
    /// The view of `container` in a cached pod status (`None`: no cached status).
    pub(crate) fn of(status: Option<&ApiPodStatus>, container: &str) -> Self {
        let Some(status) = status else {
            return StatusView::NoStatus;
        };
        if status.phase.is_terminal() {
            return StatusView::Terminal;
        }
        let Some(c) = status.find_container(container) else {
            return StatusView::NoContainer;
        };
        let Some(id) = c.container_id else {
            return StatusView::NoContainer;
        };
        StatusView::Container {
            id,
            running_since: match c.state {
                ApiContainerState::Running { started_at } => Some(started_at),
                ApiContainerState::Waiting { .. } | ApiContainerState::Terminated { .. } => None,
            },
            terminated: c.state.is_terminated(),
            started: c.started,
        }
    }
}

/// A probe worker (`worker`).
///
/// A tick of a worker comes seconds after its last one, when its state has left the
/// first-level data cache, so the record is laid out by cache line (`repr(C)`, aligned to
/// 64 bytes so that no line is shared with the next worker's slot): the first line holds
/// what decides whether a tick probes and when the next one is due, the second what a
/// probe records and traces (its result counts, flags and `Probe` transition); the key and
/// what only a new container or the exit reads come after. A steady probe so reads two
/// lines of the record where the compiler's order and an unaligned slot gave it three or
/// four (see the layout checks below the struct).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Worker {
    // ---- First line: whether this tick probes, and the next tick. ----
    /// This worker instance (events of an exited worker are ignored).
    pub(crate) gen: u64,
    /// The status manager's cached status of the container (see [`StatusView`]).
    pub(crate) view: StatusView,
    pub(crate) container_id: Option<ContainerId>,
    /// `initialDelaySeconds`, as a duration: a container that ran for less is not probed
    /// yet (comparing nanoseconds with it is comparing whole seconds with the field).
    pub(crate) initial_delay: Dur,
    /// `periodSeconds`, as a duration.
    pub(crate) period: Dur,
    /// The source key of this worker's events (`probe_worker_source` of `key`), which they
    /// carry in place of the key.
    pub(crate) source: u64,
    // ---- Second line: the probe's result and its trace. ----
    /// The word the trace hashes for `key.container` when it is 1 to 7 bytes long
    /// (`short_str_word`; 0 otherwise): a probe's transition hashes it instead of reading
    /// the name's text, whose cache line a tick seconds after the last has lost.
    pub(crate) name_word: u64,
    pub(crate) success_threshold: u32,
    pub(crate) failure_threshold: u32,
    /// How many probes in a row gave `last_result`.
    pub(crate) result_run: u32,
    /// `key.kind`, next to the fields a probe reads with it (the key never changes).
    pub(crate) kind: ProbeType,
    pub(crate) handler: ProbeHandler,
    /// What this worker's results manager holds for `container_id` (only this worker
    /// writes it): a `Set` of the same value is skipped, as the manager would drop it.
    pub(crate) published: Option<ProbeResult>,
    pub(crate) last_result: ProbeResult,
    /// Waiting for a new container after a liveness or startup failure.
    pub(crate) on_hold: bool,
    /// The pod given to `AddPod` already had a deletion timestamp (that snapshot is never
    /// updated, so neither is this; it is all the worker read from it).
    pub(crate) deleting: bool,
    /// Whether the pod workers see the pod's termination as requested
    /// (`IsPodTerminationRequested`), as of the last refresh from their records' second
    /// change log (see [`Kubelet::probe_refresh_terminating`]); only read, and so only kept in
    /// step, while the reach point it serves is unmarked.
    pub(crate) terminating: bool,
    /// Still in the start-up sleep (the stop and trigger channels are only read after it).
    pub(crate) sleeping: bool,
    /// A value waits in the stop channel.
    pub(crate) stop_pending: bool,
    /// A value waits in the manual trigger channel.
    pub(crate) trigger_pending: bool,
    /// This worker's `Probe` transition, built once from `key` (which never changes): a
    /// probe only writes its verdict into it and traces it ([`Worker::probe_record`]), so
    /// no transition is built, and no count of the container name taken and given back,
    /// per probe. Only `probe_record` writes it.
    rec: Transition,
    // ---- Cold: read by a new container, a publish or the exit. ----
    /// Which probe of which container this worker runs (`probeKey`).
    pub(crate) key: ProbeKey,
    /// The result published for a new container before it is probed.
    pub(crate) initial: ProbeResult,
    /// Whether the worker goes on after its container terminated: a sidecar is restarted
    /// whatever the pod's policy, other containers unless the policy is `Never` (from the
    /// pod given to `AddPod`, which never changes).
    pub(crate) keep_after_exit: bool,
    /// Debug builds: the pod as given to `AddPod`, to check `deleting` against.
    #[cfg(debug_assertions)]
    pub(crate) pod: Arc<ApiPod>,
}

// The layout the comment on `Worker` describes: the first line ends with `source`, and
// the second holds the counts, flags and the head of `rec` (its tag, pod UID, kind and
// verdict are what a probe writes and hashes).
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(Worker, source) + size_of::<u64>() <= 64);
    assert!(offset_of!(Worker, name_word) == 64);
    assert!(offset_of!(Worker, rec) <= 96);
};

impl Worker {
    pub(crate) fn new(
        gen: u64,
        key: ProbeKey,
        pod: &Arc<ApiPod>,
        spec: &Probe,
        view: StatusView,
    ) -> Self {
        let sidecar = pod
            .spec
            .init_containers
            .iter()
            .any(|c| c.name == *key.container && c.is_sidecar());
        Worker {
            gen,
            view,
            container_id: None,
            period: Dur::secs(u64::from(spec.period_seconds)),
            initial_delay: Dur::secs(u64::from(spec.initial_delay_seconds)),
            success_threshold: spec.success_threshold,
            failure_threshold: spec.failure_threshold,
            result_run: 0,
            kind: key.kind,
            handler: spec.handler,
            published: None,
            // Go's zero value of `results.Result` is Success.
            last_result: ProbeResult::Success,
            on_hold: false,
            deleting: pod.deletion_timestamp.is_some(),
            terminating: false,
            sleeping: true,
            stop_pending: false,
            trigger_pending: false,
            name_word: crate::sim::trace::short_str_word(&key.container),
            initial: match key.kind {
                ProbeType::Liveness => ProbeResult::Success,
                ProbeType::Readiness => ProbeResult::Failure,
                ProbeType::Startup => ProbeResult::Unknown,
            },
            keep_after_exit: sidecar || pod.spec.restart_policy != RestartPolicy::Never,
            source: crate::run::sources::probe_worker_source(&key),
            rec: Transition::Probe {
                uid: key.uid,
                container: key.container.clone(),
                kind: key.kind,
                result: ProbeVerdict::Success,
            },
            key,
            #[cfg(debug_assertions)]
            pod: pod.clone(),
        }
    }
}

impl Worker {
    /// The container `doProbe` would probe now, if the probe runs this time with nothing
    /// to do first: the cached status shows the container this worker already knows,
    /// running, past its initial delay and through the startup gate, and the worker is
    /// neither on hold nor quiet for a pod deleted before it started. `None`: `doProbe`'s
    /// step-by-step path decides (and may publish before it probes, or not probe).
    #[inline]
    pub(crate) fn probes_now(&self, now: SimTime) -> Option<ContainerId> {
        debug_assert_eq!(
            self.kind, self.key.kind,
            "probe worker {:?}: its copy of the key's kind is wrong",
            self.key
        );
        let kind = self.kind;
        match self.view {
            StatusView::Container {
                id,
                running_since: Some(since),
                started,
                ..
            } if self.container_id == Some(id)
                && !self.on_hold
                && !(self.deleting && kind != ProbeType::Readiness)
                && now.since(since) >= self.initial_delay
                && started != (kind == ProbeType::Startup) =>
            {
                #[cfg(debug_assertions)]
                debug_assert_eq!(
                    self.deleting,
                    self.pod.deletion_timestamp.is_some(),
                    "probe worker {:?}: its copy of the pod's deletion timestamp is wrong",
                    self.key
                );
                Some(id)
            }
            _ => None,
        }
    }

    /// This worker's `Probe` transition with `verdict`, to trace (debug builds check it
    /// against one built afresh from the key).
    #[inline(always)]
    pub(crate) fn probe_record(&mut self, verdict: ProbeVerdict) -> &Transition {
        if let Transition::Probe { result, .. } = &mut self.rec {
            *result = verdict;
        }
        debug_assert_eq!(
            self.rec,
            Transition::Probe {
                uid: self.key.uid,
                container: self.key.container.clone(),
                kind: self.key.kind,
                result: verdict,
            },
            "probe worker {:?}: its kept transition is not the one it would build",
            self.key
        );
        &self.rec
    }

    /// Count a probe's `result` against the thresholds. `None`: the run is still below
    /// its threshold; otherwise whether the result differs from the one published (and so
    /// must be published). A liveness or startup failure puts the worker on hold until
    /// the next container.
    #[inline(always)]
    pub(crate) fn record(&mut self, result: ProbeResult) -> Option<bool> {
        if self.last_result == result {
            self.result_run += 1;
        } else {
            self.last_result = result;
            self.result_run = 1;
        }
        let below = match result {
            ProbeResult::Failure => self.result_run < self.failure_threshold,
            ProbeResult::Success => self.result_run < self.success_threshold,
            ProbeResult::Unknown => false,
        };
        if below {
            return None;
        }
        if self.kind != ProbeType::Readiness && result == ProbeResult::Failure {
            // The container will be restarted: wait for the next one.
            self.on_hold = true;
            self.result_run = 0;
        }
        Some(self.published != Some(result))
    }
}

impl Kubelet {
    /// Trigger the readiness worker `key` (`UpdatePodStatus`'s non-blocking send on the
    /// manual trigger channel), if it still runs.
    pub(crate) fn probe_worker_trigger(&mut self, ctx: &mut Ctx, key: &ProbeKey) {
        if let Some(slot) = self.prober.slot_of(key.uid, &key.container, key.kind) {
            self.probe_worker_send(ctx, slot, ProbeWake::Trigger);
        }
    }

    /// A non-blocking send on one of the buffered (capacity 1) channels of the worker in
    /// `slot`: `stop()` on the stop channel, or the manual trigger. A second send while one
    /// is pending is dropped; a sleeping worker sees it when it wakes.
    pub(crate) fn probe_worker_send(&mut self, ctx: &mut Ctx, slot: u32, wake: ProbeWake) {
        let w = self.prober.worker_at(slot);
        let pending = match wake {
            ProbeWake::Stop => &mut w.stop_pending,
            ProbeWake::Trigger => &mut w.trigger_pending,
            ProbeWake::FirstRun | ProbeWake::Tick => return, // timers, not channels
        };
        if *pending {
            return;
        }
        *pending = true;
        if !w.sleeping {
            let _ = ctx.after(
                Dur::ZERO,
                KEv::ProbeWorker {
                    slot,
                    gen: w.gen,
                    wake,
                    source: w.source,
                },
            );
        }
    }

    /// The worker's loop, one wake-up at a time. The worker is found by its slot; `gen`
    /// tells a wake-up of an exited worker (whose slot may hold another one) apart.
    ///
    /// A wake-up that probes the container the worker already knows (almost all of them)
    /// takes one pass over the worker: the `Probe` transition reads the worker's key, and
    /// the next tick, scheduled right after the probe, names the worker by slot and
    /// instance only. Nothing else is scheduled before that point on this path, so the
    /// queue sees its events in the order the step-by-step path ([`Kubelet::do_probe`])
    /// gives them. `source`: the event's source key (debug builds check it is the worker's).
    /// A tick's event is usually still in the queue's hand (the run loop holds probe ticks):
    /// the next tick files it again rather than pushing a copy ([`Ctx::after_again`]).
    #[inline(never)]
    pub(crate) fn probe_worker_wake(
        &mut self,
        ctx: &mut Ctx,
        slot: u32,
        gen: u64,
        wake: ProbeWake,
        source: u64,
    ) {
        let tick = match wake {
            ProbeWake::FirstRun | ProbeWake::Tick => true,
            ProbeWake::Trigger => false,
            ProbeWake::Stop => {
                if self.prober.worker_mut(slot, gen).is_some() {
                    self.probe_worker_exit(ctx, slot);
                }
                return;
            }
        };
        // The workers' copies of `IsPodTerminationRequested` are brought up to date before
        // the worker is read (a cheap test when nothing changed; only while the reach
        // point they serve is unmarked).
        let unmarked = !self.prober.reached_probe_while_terminating;
        if unmarked && self.prober.terminating_stale(self.pw.records.watch()) {
            self.probe_refresh_terminating();
        }
        let p = &mut self.prober;
        let w = match p.slots.get_mut(slot as usize) {
            Some(Some(w)) if w.gen == gen => w,
            _ => return,
        };
        debug_assert_eq!(
            source,
            crate::run::sources::probe_worker_source(&w.key),
            "probe worker {:?}: its events' source key is not its own",
            w.key
        );
        let source = w.source;
        match wake {
            ProbeWake::FirstRun => w.sleeping = false,
            ProbeWake::Trigger => w.trigger_pending = false,
            ProbeWake::Tick | ProbeWake::Stop => {}
        }
        #[cfg(debug_assertions)]
        {
            let cached = self.status.statuses.get(&w.key.uid).map(|v| &*v.status);
            debug_assert_eq!(
                w.view,
                StatusView::of(cached, &w.key.container),
                "probe worker {:?}: its view of the status manager's cache is stale",
                w.key
            );
        }
        let Some(id) = w.probes_now(ctx.now()) else {
            // Anything else (no status or container yet, a new container, a container not
            // running, a worker on hold, waiting or quitting): step by step.
            if tick {
                let tick = KEv::ProbeWorker {
                    slot,
                    gen,
                    wake: ProbeWake::Tick,
                    source,
                };
                let _ = ctx.after_again(w.period, tick);
            }
            let keep = self.do_probe(ctx, slot);
            self.probe_wake_end(ctx, slot, gen, wake, keep);
            return;
        };
        note_probe_while_terminating(
            ctx,
            &mut p.reached_probe_while_terminating,
            &self.pw,
            w,
            unmarked,
        );
        p.probes_run += 1;
        let out = run_probe(ctx, w, id);
        if tick {
            let tick = KEv::ProbeWorker {
                slot,
                gen,
                wake: ProbeWake::Tick,
                source,
            };
            let _ = ctx.after_again(w.period, tick);
        }
        // Publishing touches neither pending flag: both are read now, acted on after it.
        let stop = w.stop_pending;
        let trigger = wake == ProbeWake::FirstRun && w.trigger_pending;
        if let Ok(result) = out {
            match w.record(result) {
                Some(true) => self.probe_publish_changed(ctx, slot, result),
                #[cfg(debug_assertions)]
                Some(false) => self.probe_check_published(slot),
                _ => {}
            }
        }
        if stop {
            self.probe_worker_exit(ctx, slot);
        } else if trigger {
            self.probe_worker_send_trigger_now(ctx, slot, gen);
        }
    }

    /// Back in `select` after a probe (`keep`: whether the worker goes on): a waiting stop
    /// ends the worker (when a tick was due at the same instant, the scheduler let the tick
    /// go first); after the first run, a trigger that waited during the sleep is taken.
    fn probe_wake_end(&mut self, ctx: &mut Ctx, slot: u32, gen: u64, wake: ProbeWake, keep: bool) {
        let w = self.prober.worker_at(slot);
        if !keep || w.stop_pending {
            self.probe_worker_exit(ctx, slot);
            return;
        }
        if wake == ProbeWake::FirstRun && w.trigger_pending {
            self.probe_worker_send_trigger_now(ctx, slot, gen);
        }
    }

    /// Schedule the trigger that waited in the channel while the worker slept.
    #[cold]
    fn probe_worker_send_trigger_now(&mut self, ctx: &mut Ctx, slot: u32, gen: u64) {
        let w = self.prober.worker_at(slot);
        let _ = ctx.after(
            Dur::ZERO,
            KEv::ProbeWorker {
                slot,
                gen,
                wake: ProbeWake::Trigger,
                source: w.source,
            },
        );
    }

    /// The worker exits: its result is forgotten and it leaves the manager.
    fn probe_worker_exit(&mut self, ctx: &mut Ctx, slot: u32) {
        let w = self.prober.remove(slot);
        let key = w.key;
        if let Some(id) = w.container_id {
            self.prober.results_mut(key.kind).remove(id);
        }
        self.status_memo_probes_changed(key.uid);
        ctx.emit(Transition::ProbeWorker {
            uid: key.uid,
            container: key.container,
            kind: key.kind,
            what: ProbeWorkerStep::Stopped,
        });
    }

    /// `doProbe`: probe once and record the result. Returns whether the worker goes on.
    ///
    /// One pass over the worker: its state is looked up once and read and written in
    /// place; only a new container and a changed result leave the pass (both rare).
    fn do_probe(&mut self, ctx: &mut Ctx, slot: u32) -> bool {
        #[cfg(debug_assertions)]
        {
            let w = self.prober.worker(slot);
            let cached = self.status.statuses.get(&w.key.uid).map(|v| &*v.status);
            debug_assert_eq!(
                w.view,
                StatusView::of(cached, &w.key.container),
                "probe worker {:?}: its view of the status manager's cache is stale",
                w.key
            );
        }
        let w = self.prober.worker(slot);
        let view = w.view;
        let StatusView::Container {
            id,
            running_since,
            terminated,
            started,
        } = view
        else {
            // No status or container yet: wait; a terminal phase: the worker exits.
            return view != StatusView::Terminal;
        };
        if w.container_id != Some(id) {
            self.probe_new_container(ctx, slot, id);
        }
        // The reach point's lookup is only needed while the point is unmarked; the
        // workers' copies are brought up to date first (a cheap test when nothing changed).
        let unmarked = !self.prober.reached_probe_while_terminating;
        if unmarked && self.prober.terminating_stale(self.pw.records.watch()) {
            self.probe_refresh_terminating();
        }
        let p = &mut self.prober;
        let w = p.slots[slot as usize].as_mut().expect("worker present");
        let kind = w.key.kind;
        if w.on_hold {
            return true;
        }
        let Some(started_at) = running_since else {
            let keep = !terminated || w.keep_after_exit;
            self.probe_publish(ctx, slot, ProbeResult::Failure);
            return keep;
        };
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            w.deleting,
            w.pod.deletion_timestamp.is_some(),
            "probe worker {:?}: its copy of the pod's deletion timestamp is wrong",
            w.key
        );
        if w.deleting && kind != ProbeType::Readiness {
            // The pod was already being deleted when the worker started: stay quiet.
            self.probe_publish(ctx, slot, ProbeResult::Success);
            return false;
        }
        if ctx.now().since(started_at) < w.initial_delay {
            return true;
        }
        // Liveness and readiness wait for the startup probe; the startup worker idles once
        // the container started (it stays for the next container).
        if started == (kind == ProbeType::Startup) {
            return true;
        }
        note_probe_while_terminating(
            ctx,
            &mut p.reached_probe_while_terminating,
            &self.pw,
            w,
            unmarked,
        );
        p.probes_run += 1;
        let Ok(result) = run_probe(ctx, w, id) else {
            return true;
        };
        match w.record(result) {
            Some(true) => self.probe_publish_changed(ctx, slot, result),
            #[cfg(debug_assertions)]
            Some(false) => self.probe_check_published(slot),
            _ => {}
        }
        true
    }

    /// The worker in `slot` sees container `id` for the first time: it forgets the old
    /// container's result and publishes its initial one.
    #[inline(never)]
    fn probe_new_container(&mut self, ctx: &mut Ctx, slot: u32, id: ContainerId) {
        let w = self.prober.worker_at(slot);
        let kind = w.key.kind;
        let old = w.container_id.replace(id);
        w.on_hold = false;
        w.published = None; // nothing was ever stored for a new container
        let initial = w.initial;
        if let Some(old) = old {
            self.prober.results_mut(kind).remove(old);
            self.status_memo_probes_changed(self.prober.worker(slot).key.uid);
        }
        self.probe_publish(ctx, slot, initial);
    }

    /// Bring the workers' copies of `IsPodTerminationRequested` up to date with the pod
    /// workers' records (debug builds check each copy against the records when it is read).
    #[inline(never)]
    pub(super) fn probe_refresh_terminating(&mut self) {
        let (records, log) = self.pw.records.split_watch();
        self.prober
            .refresh_terminating(log, |uid| match records.get(&uid) {
                Some(s) => (s.is_termination_requested(), !s.is_terminated()),
                None => (false, false),
            });
    }

    /// The worker's `resultsManager.Set` for its current container. The manager queues an
    /// update only when the stored value changes; the worker knows what it stored last, so
    /// a repeat is dropped here without touching the manager (debug builds check the
    /// worker's copy against the manager).
    #[inline]
    fn probe_publish(&mut self, ctx: &mut Ctx, slot: u32, result: ProbeResult) {
        #[cfg(debug_assertions)]
        self.probe_check_published(slot);
        if self.prober.worker(slot).published != Some(result) {
            self.probe_publish_changed(ctx, slot, result);
        }
    }

    /// Debug builds: the worker's copy of its published result is what the manager holds.
    #[cfg(debug_assertions)]
    fn probe_check_published(&self, slot: u32) {
        let w = self.prober.worker(slot);
        let id = w
            .container_id
            .expect("a worker publishes for its container");
        assert_eq!(
            w.published,
            self.prober.results(w.key.kind).get(id),
            "probe worker {:?}: its copy of the published result is stale",
            w.key
        );
    }

    /// [`Kubelet::probe_publish`] of a result the manager does not hold.
    #[inline(never)]
    fn probe_publish_changed(&mut self, ctx: &mut Ctx, slot: u32, result: ProbeResult) {
        let w = self.prober.worker_at(slot);
        w.published = Some(result);
        let (uid, kind) = (w.key.uid, w.key.kind);
        let id = w
            .container_id
            .expect("a worker publishes for its container");
        let queued = self.probe_set_result(ctx, kind, uid, id, result);
        debug_assert!(queued, "a changed result queues an update");
    }
}

/// Marks the "probe while terminating" reach point when worker `w` probes for a pod whose
/// termination was requested. The mark is a bit that stays set, so the worker's copy of
/// `IsPodTerminationRequested` is read only while it is `unmarked`; debug builds check
/// that copy against the pod workers.
#[inline]
fn note_probe_while_terminating(
    ctx: &mut Ctx,
    reached: &mut bool,
    pw: &PodWorkers,
    w: &Worker,
    unmarked: bool,
) {
    if unmarked && w.terminating {
        debug_assert!(
            pw.is_pod_termination_requested(w.key.uid),
            "probe worker {:?}: its copy of IsPodTerminationRequested is stale",
            w.key
        );
        *reached = true;
        ctx.reach(crate::model::reach::Reach::ProbeWhileTerminating);
    } else {
        debug_assert!(
            !unmarked || !pw.is_pod_termination_requested(w.key.uid),
            "probe worker {:?}: its copy of IsPodTerminationRequested is stale",
            w.key
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ApiContainerStatus, PodPhase};

    fn status(phase: PodPhase, state: ApiContainerState, id: Option<u32>) -> ApiPodStatus {
        ApiPodStatus {
            phase,
            containers: vec![ApiContainerStatus {
                name: "app".into(),
                state,
                last_state: None,
                restart_count: 0,
                ready: false,
                started: true,
                container_id: id.map(ContainerId),
            }],
            ..ApiPodStatus::default()
        }
    }

    #[test]
    fn initial_delay_in_nanoseconds_is_the_whole_seconds_test() {
        // `doProbe` compares the whole seconds the container ran with the field; the worker
        // compares nanoseconds with the field as a duration: the same answer everywhere.
        for delay in [0u32, 1, 2, 7, 3600, u32::MAX] {
            let d = Dur::secs(u64::from(delay));
            for ran in [
                0,
                1,
                999_999_999,
                1_000_000_000,
                1_000_000_001,
                7_500_000_000,
            ]
            .into_iter()
            .chain([d.0.saturating_sub(1), d.0, d.0.saturating_add(1)])
            {
                let ran = Dur(ran);
                assert_eq!(
                    ran < d,
                    ran.whole_secs() < u64::from(delay),
                    "ran {ran:?}, delay {delay} s"
                );
            }
        }
    }

    #[test]
    fn status_view_reads_what_do_probe_needs() {
        let t = SimTime(5);
        let running = ApiContainerState::Running { started_at: t };
        let gone = ApiContainerState::Terminated {
            exit_code: 1,
            reason: "Error",
            started_at: Some(t),
            finished_at: Some(t),
        };
        assert_eq!(StatusView::of(None, "app"), StatusView::NoStatus);
        let s = status(PodPhase::Failed, running.clone(), Some(3));
        assert_eq!(StatusView::of(Some(&s), "app"), StatusView::Terminal);
        let s = status(PodPhase::Running, running.clone(), Some(3));
        assert_eq!(StatusView::of(Some(&s), "other"), StatusView::NoContainer);
        assert_eq!(
            StatusView::of(Some(&s), "app"),
            StatusView::Container {
                id: ContainerId(3),
                running_since: Some(t),
                terminated: false,
                started: true,
            }
        );
        let s = status(PodPhase::Running, running, None);
        assert_eq!(StatusView::of(Some(&s), "app"), StatusView::NoContainer);
        let s = status(PodPhase::Running, gone, Some(4));
        assert_eq!(
            StatusView::of(Some(&s), "app"),
            StatusView::Container {
                id: ContainerId(4),
                running_since: None,
                terminated: true,
                started: true,
            }
        );
    }
}
