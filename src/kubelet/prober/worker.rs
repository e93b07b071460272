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
///
/// It has a tag byte of its own (`repr(u8)`), whose spare values are few: an empty slot of
/// the workers' vector (`Option<Worker>`) is then told by a spare value of the kept
/// transition's tag, on the worker's first line, rather than of this view's, on its second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
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
/// 64 bytes so that no line is shared with the next worker's slot). The first line holds
/// all that a steady probe (the container the worker knows, running, probed, its result
/// the one already published) reads and writes: two answers worked out from the colder
/// fields whenever one of those changes ([`Worker::refresh`]) — from when the tick probes,
/// and which result would change nothing — the next tick's period, what the probe needs
/// and the head of the kept `Probe` transition (its tag, pod UID, kind and verdict, which a
/// probe writes and hashes). The rest of the record, which the step-by-step path, a new
/// container, a changed result or the exit read, comes after. A steady probe so reads one
/// line of the record (see the layout checks below the struct).
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct Worker {
    // ---- First line: a steady probe. ----
    /// From when a tick probes `steady_id` at once ([`Worker::probes_now`]): the container's
    /// start plus the initial delay, while the cached status shows the container the worker
    /// knows running, past the startup gate, and the worker is neither on hold, quiet for a
    /// pod deleted before it started, seeing the pod's termination requested, nor told to
    /// stop; [`SimTime::MAX`] otherwise (kept by [`Worker::refresh`]).
    steady_from: SimTime,
    /// The word the trace hashes for `key.container` when it is 1 to 7 bytes long
    /// (`short_str_word`; 0 otherwise): a probe's transition hashes it instead of reading
    /// the name's text, whose cache line a tick seconds after the last has lost.
    pub(crate) name_word: u64,
    /// This worker instance (events of an exited worker are ignored).
    pub(crate) gen: u32,
    /// The container a steady tick probes (meaningful while `steady_from` is not `MAX`).
    steady_id: ContainerId,
    /// `periodSeconds`.
    period_secs: u32,
    /// The result a probe may give without changing anything (`record` would find the run
    /// already at its threshold and the result already published, and put no worker on
    /// hold), when the kept transition already holds its verdict (so that a steady tick
    /// writes nothing); `None`: any result goes through [`Worker::probe_record`] and
    /// [`Worker::record`]'s counting. Kept by [`Worker::refresh`].
    settled: Option<ProbeResult>,
    /// `key.kind`, next to the fields a probe reads with it (the key never changes).
    pub(crate) kind: ProbeType,
    pub(crate) handler: ProbeHandler,
    /// A value waits in the stop channel (written through [`Worker::set_stop_pending`]).
    pub(crate) stop_pending: bool,
    /// This worker's `Probe` transition, built once from `key` (which never changes): a
    /// probe only writes its verdict into it and traces it ([`Worker::probe_record`]), so
    /// no transition is built, and no count of the container name taken and given back,
    /// per probe. Only `probe_record` writes it. Its head ends the first line; the rest of
    /// it (the bytes other kinds of transition use) starts the second.
    rec: Transition,
    // ---- Colder: the step-by-step path, a new container, a changed result, the exit. ----
    /// The status manager's cached status of the container (see [`StatusView`]); written
    /// through [`Worker::set_view`].
    view: StatusView,
    container_id: Option<ContainerId>,
    /// `initialDelaySeconds`, as a duration: a container that ran for less is not probed
    /// yet (comparing nanoseconds with it is comparing whole seconds with the field).
    pub(crate) initial_delay: Dur,
    /// The source key of this worker's events (`probe_worker_source` of `key`), which they
    /// carry in place of the key.
    pub(crate) source: u64,
    pub(crate) success_threshold: u32,
    pub(crate) failure_threshold: u32,
    /// How many probes in a row gave `last_result` (a settled result leaves it as it is:
    /// the count only grows while the result repeats, and is only compared with the
    /// threshold it has already reached).
    result_run: u32,
    /// What this worker's results manager holds for `container_id` (only this worker
    /// writes it): a `Set` of the same value is skipped, as the manager would drop it.
    published: Option<ProbeResult>,
    last_result: ProbeResult,
    /// Waiting for a new container after a liveness or startup failure.
    on_hold: bool,
    /// The pod given to `AddPod` already had a deletion timestamp (that snapshot is never
    /// updated, so neither is this; it is all the worker read from it).
    pub(crate) deleting: bool,
    /// Whether the pod workers see the pod's termination as requested
    /// (`IsPodTerminationRequested`), as of the last refresh from their records' second
    /// change log (see [`Kubelet::probe_refresh_terminating`]); only read, and so only kept in
    /// step, while the reach point it serves is unmarked. Written through
    /// [`Worker::set_terminating`].
    terminating: bool,
    /// Still in the start-up sleep (the stop and trigger channels are only read after it).
    pub(crate) sleeping: bool,
    /// A value waits in the manual trigger channel.
    pub(crate) trigger_pending: bool,
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

// The layout the comment on `Worker` describes: the first line ends with the head of
// `rec` (a unit test checks that the fields of its `Probe` form lie in the first line).
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Worker, stop_pending) < offset_of!(Worker, rec));
    assert!(offset_of!(Worker, rec) == 32);
    assert!(offset_of!(Worker, view) >= 64);
    // Three lines in all (debug builds add the pod after them).
    assert!(offset_of!(Worker, keep_after_exit) < 192);
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
        let mut w = Worker {
            steady_from: SimTime::MAX,
            name_word: crate::sim::trace::short_str_word(&key.container),
            gen: u32::try_from(gen).expect("fewer than 2^32 probe workers"),
            steady_id: ContainerId(0),
            period_secs: spec.period_seconds,
            settled: None,
            kind: key.kind,
            handler: spec.handler,
            stop_pending: false,
            rec: Transition::Probe {
                uid: key.uid,
                container: key.container.clone(),
                kind: key.kind,
                result: ProbeVerdict::Success,
            },
            view,
            container_id: None,
            initial_delay: Dur::secs(u64::from(spec.initial_delay_seconds)),
            source: crate::run::sources::probe_worker_source(&key),
            success_threshold: spec.success_threshold,
            failure_threshold: spec.failure_threshold,
            result_run: 0,
            published: None,
            // Go's zero value of `results.Result` is Success.
            last_result: ProbeResult::Success,
            on_hold: false,
            deleting: pod.deletion_timestamp.is_some(),
            terminating: false,
            sleeping: true,
            trigger_pending: false,
            initial: match key.kind {
                ProbeType::Liveness => ProbeResult::Success,
                ProbeType::Readiness => ProbeResult::Failure,
                ProbeType::Startup => ProbeResult::Unknown,
            },
            keep_after_exit: sidecar || pod.spec.restart_policy != RestartPolicy::Never,
            key,
            #[cfg(debug_assertions)]
            pod: pod.clone(),
        };
        w.refresh();
        w
    }
}

impl Worker {
    /// `periodSeconds`, as a duration.
    #[inline(always)]
    pub(crate) fn period(&self) -> Dur {
        Dur::secs(u64::from(self.period_secs))
    }

    /// The worker's copy of `IsPodTerminationRequested`.
    #[cfg(test)]
    pub(crate) fn terminating(&self) -> bool {
        self.terminating
    }

    /// The status manager's cached status of the container changed.
    pub(crate) fn set_view(&mut self, view: StatusView) {
        self.view = view;
        self.refresh();
    }

    /// The pod workers' answer to `IsPodTerminationRequested` for the pod.
    pub(crate) fn set_terminating(&mut self, terminating: bool) {
        self.terminating = terminating;
        self.refresh();
    }

    /// A value now waits in the stop channel: a tick no longer takes the steady path.
    fn set_stop_pending(&mut self) {
        self.stop_pending = true;
        self.refresh();
    }

    /// Work out the first line's two answers (`steady_from` with `steady_id`, and
    /// `settled`) from the fields they stand for; called by every write of one of those.
    fn refresh(&mut self) {
        (self.steady_id, self.steady_from) = self.steady();
        self.settled = self.settles();
    }

    /// When a tick probes which container with nothing to do first: the cached status
    /// shows the container this worker already knows, running, through the startup gate,
    /// and the worker is neither on hold, quiet for a pod deleted before it started,
    /// seeing the pod's termination requested (that tick marks a reach point: the
    /// step-by-step path takes it), nor told to stop (the step-by-step path probes, then
    /// exits); from the container's start plus the initial delay.
    /// `MAX`: `doProbe`'s step-by-step path decides (and may publish before it probes, or
    /// not probe).
    fn steady(&self) -> (ContainerId, SimTime) {
        let kind = self.kind;
        // The pod was already being deleted when the worker started: it stays quiet.
        let quiet = self.deleting && kind != ProbeType::Readiness;
        match self.view {
            StatusView::Container {
                id,
                running_since: Some(since),
                started,
                ..
            } if self.container_id == Some(id)
                && !self.on_hold
                && !self.stop_pending
                && !self.terminating
                && !quiet
                && started != (kind == ProbeType::Startup) =>
            {
                // A container that ran for at least the initial delay: with no delay, at
                // any time; otherwise from its start plus the delay (never, past the end
                // of time).
                let from = if self.initial_delay == Dur::ZERO {
                    SimTime::ZERO
                } else {
                    since
                        .0
                        .checked_add(self.initial_delay.0)
                        .map_or(SimTime::MAX, SimTime)
                };
                (id, from)
            }
            _ => (ContainerId(0), SimTime::MAX),
        }
    }

    /// The result [`Worker::record`] would take without changing anything but the run's
    /// count: the run of `last_result` has reached its threshold, that result is the one
    /// published, and it puts no worker on hold; and the result whose verdict the kept
    /// transition holds (a probe's verdict is written before its result is recorded, so a
    /// result this leaves out for that reason alone is still recorded as settled then).
    fn settles(&self) -> Option<ProbeResult> {
        let r = self.last_result;
        let verdict = match r {
            ProbeResult::Success => ProbeVerdict::Success,
            ProbeResult::Failure => ProbeVerdict::Failure,
            ProbeResult::Unknown => return None,
        };
        (self.run_reached(r)
            && !self.holds_on(r)
            && self.published == Some(r)
            && self.rec_verdict() == Some(verdict))
        .then_some(r)
    }

    /// The verdict the kept `Probe` transition holds.
    fn rec_verdict(&self) -> Option<ProbeVerdict> {
        match self.rec {
            Transition::Probe { result, .. } => Some(result),
            _ => None,
        }
    }

    /// Whether the run of `result` so far (`result_run`) reaches its threshold (an
    /// `Unknown` has none).
    fn run_reached(&self, result: ProbeResult) -> bool {
        match result {
            ProbeResult::Failure => self.result_run >= self.failure_threshold,
            ProbeResult::Success => self.result_run >= self.success_threshold,
            ProbeResult::Unknown => true,
        }
    }

    /// Whether `result`, at its threshold, puts the worker on hold until the next
    /// container (a liveness or startup failure: the container will be restarted).
    fn holds_on(&self, result: ProbeResult) -> bool {
        self.kind != ProbeType::Readiness && result == ProbeResult::Failure
    }

    /// Debug builds: the first line's answers are the ones the fields give, and the kind's
    /// copy is the key's.
    #[cfg(debug_assertions)]
    fn check_first_line(&self) {
        assert_eq!(
            self.kind, self.key.kind,
            "probe worker {:?}: its copy of the key's kind is wrong",
            self.key
        );
        assert_eq!(
            (self.steady_id, self.steady_from, self.settled),
            {
                let (id, from) = self.steady();
                (id, from, self.settles())
            },
            "probe worker {:?}: its first line's answers are stale",
            self.key
        );
        assert_eq!(
            self.deleting,
            self.pod.deletion_timestamp.is_some(),
            "probe worker {:?}: its copy of the pod's deletion timestamp is wrong",
            self.key
        );
    }

    /// The container `doProbe` would probe now, if the probe runs this time with nothing
    /// to do first (see [`Worker::steady`]; debug builds check the answer against the
    /// fields it stands for). `None`: `doProbe`'s step-by-step path decides.
    #[inline]
    pub(crate) fn probes_now(&self, now: SimTime) -> Option<ContainerId> {
        #[cfg(debug_assertions)]
        self.check_first_line();
        (now >= self.steady_from && self.steady_from != SimTime::MAX).then_some(self.steady_id)
    }

    /// This worker's `Probe` transition with `verdict`, to trace (debug builds check it
    /// against one built afresh from the key). A new verdict may change which result is
    /// settled.
    #[inline(always)]
    pub(crate) fn probe_record(&mut self, verdict: ProbeVerdict) -> &Transition {
        if let Transition::Probe { result, .. } = &mut self.rec {
            if *result != verdict {
                *result = verdict;
                self.refresh();
            }
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

    /// The worker's `Probe` transition as [`Worker::probe_record`] last wrote it.
    #[inline(always)]
    pub(crate) fn rec(&self) -> &Transition {
        &self.rec
    }

    /// Debug builds, at a wake-up: the event's `source` key is the worker's own (the next
    /// tick carries it on), and the worker's view of the status manager's cache is fresh.
    #[cfg(debug_assertions)]
    pub(crate) fn check_wake(&self, source: u64, status: &crate::kubelet::status::StatusManager) {
        assert_eq!(
            source,
            crate::run::sources::probe_worker_source(&self.key),
            "probe worker {:?}: its events' source key is not its own",
            self.key
        );
        let cached = status.statuses.get(&self.key.uid).map(|v| &*v.status);
        assert_eq!(
            self.view,
            StatusView::of(cached, &self.key.container),
            "probe worker {:?}: its view of the status manager's cache is stale",
            self.key
        );
    }

    /// Count a probe's `result` against the thresholds. `None`: the run is still below
    /// its threshold; otherwise whether the result differs from the one published (and so
    /// must be published). A liveness or startup failure puts the worker on hold until
    /// the next container. A settled result changes nothing (its run's count is left
    /// as it is) and reads nothing past the first line.
    #[inline(always)]
    pub(crate) fn record(&mut self, result: ProbeResult) -> Option<bool> {
        if self.settled == Some(result) {
            #[cfg(debug_assertions)]
            self.check_first_line();
            return Some(false);
        }
        self.record_counted(result)
    }

    /// Whether [`Worker::record`] of `result` would change nothing (the result is settled).
    #[inline(always)]
    pub(crate) fn is_settled(&self, result: ProbeResult) -> bool {
        self.settled == Some(result)
    }

    /// [`Worker::record`] of a result that is not settled.
    #[inline(never)]
    fn record_counted(&mut self, result: ProbeResult) -> Option<bool> {
        if self.last_result == result {
            self.result_run += 1;
        } else {
            self.last_result = result;
            self.result_run = 1;
        }
        let out = if !self.run_reached(result) {
            None
        } else {
            if self.holds_on(result) {
                // The container will be restarted: wait for the next one.
                self.on_hold = true;
                self.result_run = 0;
            }
            Some(self.published != Some(result))
        };
        self.refresh();
        out
    }

    /// A new container `id` for the worker: it forgets the old container's result and
    /// hold. Returns the old container.
    fn take_container(&mut self, id: ContainerId) -> Option<ContainerId> {
        let old = self.container_id.replace(id);
        self.on_hold = false;
        self.published = None; // nothing was ever stored for a new container
        self.refresh();
        old
    }

    /// `result` is now what the results manager holds for the worker's container.
    fn set_published(&mut self, result: ProbeResult) {
        self.published = Some(result);
        self.refresh();
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
            ProbeWake::Stop => w.stop_pending,
            ProbeWake::Trigger => w.trigger_pending,
            ProbeWake::FirstRun | ProbeWake::Tick => return, // timers, not channels
        };
        if pending {
            return;
        }
        if wake == ProbeWake::Stop {
            w.set_stop_pending();
        } else {
            w.trigger_pending = true;
        }
        if !w.sleeping {
            let _ = ctx.after(
                Dur::ZERO,
                KEv::ProbeWorker {
                    slot,
                    gen: u64::from(w.gen),
                    wake,
                    source: w.source,
                },
            );
        }
    }

    /// [`Kubelet::probe_worker_wake`] of a wake-up its steady path does not take: the
    /// worker's loop, one wake-up at a time. The worker is found by its slot; `gen` tells a
    /// wake-up of an exited worker (whose slot may hold another one) apart.
    ///
    /// A wake-up that probes the container the worker already knows takes one pass over
    /// the worker: the `Probe` transition reads the worker's key, and the next tick,
    /// scheduled right after the probe, names the worker by slot and instance only.
    /// Nothing else is scheduled before that point on this path, so the queue sees its
    /// events in the order the step-by-step path ([`Kubelet::do_probe`]) gives them.
    /// `source`: the event's source key (debug builds check it is the worker's).
    #[inline(never)]
    pub(super) fn probe_worker_wake_slow(
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
            Some(Some(w)) if u64::from(w.gen) == gen => w,
            _ => return,
        };
        #[cfg(debug_assertions)]
        w.check_wake(source, &self.status);
        match wake {
            ProbeWake::FirstRun => w.sleeping = false,
            ProbeWake::Trigger => w.trigger_pending = false,
            ProbeWake::Tick | ProbeWake::Stop => {}
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
                let _ = ctx.after_again(w.period(), tick);
            }
            let keep = self.do_probe(ctx, slot);
            self.probe_wake_end(ctx, slot, gen, wake, keep);
            return;
        };
        // A steady worker does not see the pod's termination requested (one that does
        // takes the step-by-step path, which marks the reach point): nothing to mark here.
        #[cfg(debug_assertions)]
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
            let _ = ctx.after_again(w.period(), tick);
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
        let old = w.take_container(id);
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
    pub(super) fn probe_check_published(&self, slot: u32) {
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
    pub(super) fn probe_publish_changed(&mut self, ctx: &mut Ctx, slot: u32, result: ProbeResult) {
        let w = self.prober.worker_at(slot);
        w.set_published(result);
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
pub(super) fn note_probe_while_terminating(
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
#[path = "worker_tests.rs"]
mod tests;
