//! Pod workers: the per-UID state machine that owns each pod's lifecycle.
//!
//! Port of `pkg/kubelet/pod_workers.go`, following the v1.31 layout (the >= v1.27 design
//! with `PodWorkerSync` from `SyncKnownPods`, context cancellation of in-flight syncs and
//! the first-sight handling of pods whose API phase is already terminal, issue 105523).
//! The `podSyncStatus` record keeps upstream's timestamps and flags; the predicates are
//! derived from them exactly as upstream derives them. The record is
//! [`sync_status::PodSyncStatus`]; this file holds the workers' shared state; the loop
//! that drives them (`UpdatePod`, the worker goroutine, completion, `SyncKnownPods`) is
//! [`super::worker_loop`].
//!
//! The record changes only through methods that check the state machine's rules in every
//! build, a precondition before the change and a postcondition after it: a worker goes
//! syncing -> terminating -> terminated -> finished and never back; `startedAt`,
//! `terminatingAt` and `terminatedAt` are set once and never cleared while the record
//! lives; a finished worker is terminated; one sync runs at a time, and its end is
//! reported by that sync. The record map itself is changed only by [`PodWorkers`] methods
//! (the v1.21 design in `legacy.rs` included).
//!
//! Where it deliberately differs:
//! * Goroutines and channels become events: `UpdatePod` schedules a `WorkerWake` event (the
//!   non-blocking send on the signal channel), the per-UID loop runs one step per event, and
//!   each sync function is a multi-step operation (`sync.rs`).
//! * Context cancellation is recorded (`cancelled`) but changes nothing, as in v1.31: the
//!   only wait in `SyncPod` that honours the context is the volume mount wait, which is not
//!   modelled yet; the runtime part of `SyncPod` runs on a context without cancel; and
//!   `SyncTerminatingPod` ignores its context (upstream TODO 113606), so a shorter grace
//!   does not interrupt a kill in flight.
//! * `CompletedCh` is a numbered channel; closing it records the number and, if a
//!   `killPodNow` caller blocks on it, wakes that caller with an event.
//! * Go's random map iteration in `SyncKnownPods` becomes UID order.
//! * Static pods: the full-name start gate (`allowStaticPodStart`) keeps one started UID
//!   per full name and a FIFO of waiting UIDs, as upstream.

use super::profile::Sw;
use super::KEv;
use crate::kubelet::Ctx;
use crate::model::uid_map::UidMap;
use crate::model::KillPodNowStep;
use crate::model::{ApiPod, PodPhase, PodUid, RunningPod, Transition};
use crate::sim::{Dur, SimTime, Stream, TimerKey};
use std::collections::BTreeMap;
use std::sync::Arc;

mod sync_status;
mod work_queue;
pub(crate) use sync_status::PodSyncStatus;
pub(crate) use work_queue::WorkQueue;

/// `kubetypes.SyncPodType` (a word of the trace vocabulary).
pub(crate) use crate::model::UpdateType;

/// A `PodStatusFunc`: how a killer wants the final API status to look.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum StatusFn {
    /// Set phase, reason and message (what eviction does), and with `disruption_target` the
    /// condition DisruptionTarget=True with the same message.
    SetTerminal {
        phase: PodPhase,
        reason: String,
        message: String,
        disruption_target: bool,
    },
    /// Set phase Failed unless it is already Succeeded, plus reason and message (what the
    /// graceful node shutdown manager does since PRs 106899/106900/106901), and with
    /// `disruption_target` the condition DisruptionTarget=True.
    FailedUnlessSucceeded {
        reason: String,
        message: String,
        disruption_target: bool,
    },
    /// Set only reason and message: the phase stays as computed from the containers (the
    /// node shutdown manager of v1.22.0-v1.23.0, switch `shutdownSetsFailedPhase` off).
    ReasonOnly { reason: String, message: String },
}

/// `KillPodOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct KillPodOptions {
    /// `CompletedCh`, as a channel number.
    pub(crate) completed: Option<u64>,
    pub(crate) evict: bool,
    pub(crate) status_fn: Option<StatusFn>,
    /// `PodTerminationGracePeriodSecondsOverride`.
    pub(crate) grace_override: Option<i64>,
}

/// `UpdatePodOptions`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UpdatePodOptions {
    pub(crate) update_type: UpdateType,
    pub(crate) pod: Option<Arc<ApiPod>>,
    pub(crate) mirror: Option<Arc<ApiPod>>,
    pub(crate) running_pod: Option<Arc<RunningPod>>,
    pub(crate) kill: Option<Box<KillPodOptions>>,
}

impl UpdatePodOptions {
    pub(crate) fn new(update_type: UpdateType, pod: Arc<ApiPod>) -> Self {
        UpdatePodOptions {
            update_type,
            pod: Some(pod),
            mirror: None,
            running_pod: None,
            kill: None,
        }
    }
    pub(crate) fn is_runtime_only(&self) -> bool {
        self.pod.is_none() && self.running_pod.is_some()
    }
}

/// `PodWorkerState` (called `PodWorkType` since 1.23).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum WorkType {
    Sync,
    Terminating,
    Terminated,
}

/// One unit of work taken from the pending slot.
#[derive(Clone, Debug)]
pub(crate) struct Work {
    pub(crate) work_type: WorkType,
    pub(crate) options: UpdatePodOptions,
}

/// `PodWorkerSync`, what `SyncKnownPods` reports per known UID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PodWorkerSync {
    pub(crate) state: WorkType,
    pub(crate) orphan: bool,
    pub(crate) has_config: bool,
    pub(crate) is_static: bool,
}

/// What `SyncKnownPods` reports: one entry per UID the workers know, walked in UID order.
/// Held in a UID-indexed map: housekeeping asks it about one UID at a time (every running
/// pod, every changed record), and each question is an array look-up, not a search.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct KnownPods(pub UidMap<PodWorkerSync>);

impl KnownPods {
    #[inline]
    pub(crate) fn get(&self, uid: &PodUid) -> Option<&PodWorkerSync> {
        self.0.get(uid)
    }
    #[inline]
    pub(crate) fn contains_key(&self, uid: &PodUid) -> bool {
        self.0.contains_key(uid)
    }
    /// How many UIDs the report names.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    #[cfg(test)]
    pub(crate) fn values(&self) -> impl Iterator<Item = &PodWorkerSync> {
        self.0.values()
    }
}

/// The pod workers' shared state (upstream's `podWorkers` struct).
#[derive(Clone, Debug)]
pub(crate) struct PodWorkers {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub(crate) b: crate::kubelet::profile::Behaviours,
    /// Boxed: a search tree's nodes are about half full, so records held inline would
    /// leave almost a record's worth of empty slot per pod.
    pub(crate) records: super::record_map::RecordMap<Box<PodSyncStatus>>,
    /// False until the first `SyncKnownPods`.
    pub(crate) pods_synced: bool,
    /// The kubelet's work queue: when each UID is due for a resync.
    pub(crate) work_queue: WorkQueue,
    /// `CompletedCh` numbers closed so far, in order.
    pub(crate) closed_channels: Vec<u64>,
    /// `killPodNow` callers blocked on a channel: channel -> (pod, their timeout timer).
    pub(crate) kill_waiters: BTreeMap<u64, (PodUid, TimerKey)>,
    next_channel: u64,
    pub(crate) resync_interval: Dur,
    pub(crate) back_off_period: Dur,
    /// `startedStaticPodsByFullname`: the one started UID per static-pod full name.
    pub(crate) started_static_by_fullname: BTreeMap<String, PodUid>,
    /// `waitingToStartStaticPodsByFullname`: UIDs waiting for the full name, in order.
    pub(crate) waiting_static_by_fullname: BTreeMap<String, Vec<PodUid>>,
    /// The next operation id (see [`PodSyncStatus::begin_sync`]).
    pub(crate) next_op: u64,
    rng: Stream,
}

/// `backOffOnTransientErrorPeriod`.
pub(crate) const BACKOFF_ON_TRANSIENT_ERROR: Dur = Dur::secs(1);
/// The jitter factor of resyncs and back-offs.
const JITTER: f64 = 0.5;
/// The message SyncPod returns while the pod network is not ready.
pub(crate) const NETWORK_NOT_READY: &str = "network is not ready";

/// What the pod worker needs of a failed sync's error: only whether it was the transient
/// network error (a short back-off) or any other (the full back-off). The message itself
/// goes to the `SyncEnd` transition.
///
/// `completeWork` reads the class from the message text ([`SyncError::of`]). Where the
/// sync makes an error whose text cannot hold [`NETWORK_NOT_READY`], the class is known
/// there and passed along as data: a crash-loop back-off error (fixed words and a
/// container name, a DNS label without spaces) is always [`SyncError::Other`]. Debug
/// builds read the text anyway and compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyncError {
    NetworkNotReady,
    Other,
}

impl SyncError {
    /// The class of an error message.
    pub(crate) fn of(msg: &str) -> Self {
        if msg.contains(NETWORK_NOT_READY) {
            SyncError::NetworkNotReady
        } else {
            SyncError::Other
        }
    }
}

impl PodWorkers {
    pub(crate) fn new(seed: u64, resync_interval: Dur, back_off_period: Dur) -> Self {
        PodWorkers {
            b: Default::default(),
            records: Default::default(),
            pods_synced: false,
            work_queue: WorkQueue::default(),
            closed_channels: Vec::new(),
            kill_waiters: BTreeMap::new(),
            next_channel: 1,
            resync_interval,
            back_off_period,
            started_static_by_fullname: BTreeMap::new(),
            waiting_static_by_fullname: BTreeMap::new(),
            next_op: 1,
            rng: Stream::new(seed, "kubelet/podworkers"),
        }
    }

    /// `wait.Jitter(d, 0.5)`: uniform in [d, 1.5 d).
    pub(crate) fn jitter(&mut self, d: Dur) -> Dur {
        jitter_with(&mut self.rng, d)
    }

    /// `completeWork`'s wait before the next sync of a worker whose sync moved no phase
    /// (before jitter): the resync interval after a success, a second after the network's
    /// transient error, the back-off period after any other error.
    pub(crate) fn requeue_period(&self, err: Option<SyncError>) -> Dur {
        match err {
            None => self.resync_interval,
            Some(SyncError::NetworkNotReady) => BACKOFF_ON_TRANSIENT_ERROR,
            Some(SyncError::Other) => self.back_off_period,
        }
    }

    /// A fresh `CompletedCh` number.
    pub(crate) fn new_channel(&mut self) -> u64 {
        let ch = self.next_channel;
        self.next_channel += 1;
        ch
    }

    pub(crate) fn new_op(&mut self) -> u64 {
        let id = self.next_op;
        self.next_op += 1;
        id
    }

    /// `allowStaticPodStart`: the UID may start iff no other UID holds the full name and
    /// it is the first live UID in the waiting queue (entries whose termination was
    /// requested, or that are gone, are skipped and pruned).
    pub(crate) fn allow_static_pod_start(&mut self, fullname: &str, uid: PodUid) -> bool {
        if let Some(started) = self.started_static_by_fullname.get(fullname) {
            return *started == uid;
        }
        let waiting = self
            .waiting_static_by_fullname
            .remove(fullname)
            .unwrap_or_default();
        let mut rest: &[PodUid] = &waiting;
        for (i, w) in waiting.iter().enumerate() {
            // Before PR 107900 only UIDs without a record were skipped: one whose
            // termination was requested before it started stayed at the head.
            let skip_terminating = self.b.on(Sw::UnstartedPodsDoNotBlockStart);
            let live = self.records.get(w).is_some_and(|s| {
                !skip_terminating || (!s.is_termination_requested() && !s.is_terminated())
            });
            if !live {
                continue;
            }
            if *w != uid {
                self.waiting_static_by_fullname
                    .insert(fullname.to_string(), waiting[i..].to_vec());
                return false;
            }
            rest = &waiting[i + 1..];
            break;
        }
        if !rest.is_empty() {
            self.waiting_static_by_fullname
                .insert(fullname.to_string(), rest.to_vec());
        }
        self.started_static_by_fullname
            .insert(fullname.to_string(), uid);
        true
    }

    // ---- the record map: every insertion and removal goes through these ----

    /// Add the record of a UID seen for the first time.
    pub(crate) fn insert_record(&mut self, uid: PodUid, st: PodSyncStatus) {
        st.assert_invariants();
        let old = self.records.insert(uid, Box::new(st));
        assert!(
            old.is_none(),
            "pod worker rule broken: a UID has one record ({uid})"
        );
    }

    /// The record of `uid`, created (for `fullname`, at `now`) if missing; true if created.
    pub(crate) fn ensure_record(&mut self, uid: PodUid, fullname: String, now: SimTime) -> bool {
        if self.records.contains_key(&uid) {
            return false;
        }
        self.insert_record(uid, PodSyncStatus::new(fullname, now));
        true
    }

    /// Forget a UID's record.
    pub(crate) fn remove_record(&mut self, uid: PodUid) {
        let st = self.records.remove(&uid);
        assert!(
            st.is_some_and(|s| s.op.is_none()),
            "pod worker rule broken: a record is dropped only while it exists and no sync of \
             it runs ({uid})"
        );
        // A slot the work queue keeps only as taken goes with the record.
        self.work_queue.drop_taken(uid);
    }

    // ---- the sync operations of a worker ----

    /// A worker begins a sync: a fresh operation id, recorded as the one in flight.
    /// Returns it with the end time of the previous sync.
    pub(crate) fn begin_sync(&mut self, uid: PodUid) -> (u64, Option<SimTime>) {
        let st = self.records.get_mut(&uid);
        assert!(
            st.is_some(),
            "pod worker rule broken: a worker with a record runs one sync at a time ({uid})"
        );
        st.expect("checked").begin_sync(uid, &mut self.next_op)
    }

    /// A worker's sync ended at `now`; false if its record is gone.
    pub(crate) fn end_sync(&mut self, uid: PodUid, op: u64, now: SimTime) -> bool {
        self.end_sync_record(uid, op, now).is_some()
    }

    /// [`PodWorkers::end_sync`], returning the record (one lookup for the caller's next
    /// steps too).
    pub(crate) fn end_sync_record(
        &mut self,
        uid: PodUid,
        op: u64,
        now: SimTime,
    ) -> Option<&mut PodSyncStatus> {
        // The callers go on to end a termination (`completeTerminating` and friends).
        let st = self.records.get_mut_watched(&uid)?;
        st.end_sync(uid, op, now);
        Some(st)
    }

    /// [`PodWorkers::end_sync`] then `completeWork` for a sync that moved no phase (it
    /// failed, its class `err`, or a `SyncPod` left the pod running), on one lookup of the
    /// record: the next resync or back-off is queued, and the worker goes on working if an
    /// update is pending. `None` when the record is gone (nothing queued); otherwise
    /// whether the worker must be woken (its signal was not pending yet).
    pub(crate) fn end_sync_and_complete(
        &mut self,
        uid: PodUid,
        op: u64,
        now: SimTime,
        err: Option<SyncError>,
    ) -> Option<bool> {
        let period = self.requeue_period(err);
        // Unlogged: a sync's end changes nothing the known-pods report reads.
        let st = self.records.get_mut_unlogged(&uid)?;
        st.end_sync(uid, op, now);
        let delay = jitter_with(&mut self.rng, period);
        self.work_queue.enqueue(uid, now + delay);
        Some(st.take_pending_signal())
    }

    // ---- what the v1.21 design (`legacy.rs`) does to the records ----

    /// v1.21 `UpdatePod` hand-over: the worker is marked running and, if idle, takes the
    /// update into its channel slot. `Ok(wake)` when delivered (`wake`: the worker must be
    /// woken), or the update back when the worker is busy.
    pub(crate) fn legacy_offer(
        &mut self,
        uid: PodUid,
        options: UpdatePodOptions,
    ) -> Result<bool, UpdatePodOptions> {
        let st = self.records.get_mut(&uid).expect("record ensured");
        st.has_worker = true;
        if st.working {
            return Err(options);
        }
        st.working = true;
        st.pending_update = Some(options);
        let wake = !st.signalled && st.op.is_none();
        if wake {
            st.signalled = true;
        }
        Ok(wake)
    }

    /// v1.21 `managePodLoop` receives its channel item: `None` if the record is gone, a
    /// sync runs, or the slot is empty.
    pub(crate) fn legacy_take_update(&mut self, uid: PodUid) -> Option<UpdatePodOptions> {
        let st = self.records.get_mut(&uid)?;
        st.signalled = false;
        if st.op.is_some() {
            return None;
        }
        st.pending_update.take()
    }

    /// v1.21 `wrapUp` and `checkForUpdates` after a sync: the undelivered update (if any)
    /// moves into the slot, else the worker goes idle; a forgotten worker's record goes
    /// once nothing is left. Returns whether the worker must be woken.
    pub(crate) fn legacy_complete_sync(
        &mut self,
        uid: PodUid,
        op: u64,
        now: SimTime,
        undelivered: &mut BTreeMap<PodUid, UpdatePodOptions>,
    ) -> bool {
        if !self.end_sync(uid, op, now) {
            return false;
        }
        let st = self.records.get_mut(&uid).expect("present");
        if st.pending_update.is_none() && st.has_worker {
            match undelivered.remove(&uid) {
                Some(u) => st.pending_update = Some(u),
                None => st.working = false,
            }
        }
        if st.pending_update.is_some() {
            let wake = !st.signalled;
            st.signalled = true;
            return wake;
        }
        if !st.has_worker {
            // The goroutine of a forgotten worker ends.
            self.remove_record(uid);
        }
        false
    }

    /// v1.21 `ForgetWorker`: the worker's goroutine ends (after the sync it is in, and
    /// an item already in its channel). `None` if there was no running worker, else
    /// whether the record was dropped at once (the worker was idle).
    pub(crate) fn legacy_forget(&mut self, uid: PodUid) -> Option<bool> {
        let st = self.records.get_mut(&uid)?;
        if !st.has_worker {
            return None;
        }
        st.has_worker = false;
        st.working = false;
        let idle = st.op.is_none() && st.pending_update.is_none();
        if idle {
            self.remove_record(uid);
        }
        Some(idle)
    }

    /// Release the full name a static pod held, if it held it.
    pub(crate) fn release_static(&mut self, uid: PodUid) {
        let Some(full) = self.records.get(&uid).map(|s| s.fullname.clone()) else {
            return;
        };
        if self.started_static_by_fullname.get(&full) == Some(&uid) {
            self.started_static_by_fullname.remove(&full);
        }
    }

    /// `IsPodForMirrorPodTerminatingByFullName`.
    pub(crate) fn is_pod_for_mirror_pod_terminating_by_full_name(&self, fullname: &str) -> bool {
        let Some(uid) = self.started_static_by_fullname.get(fullname) else {
            return false;
        };
        self.records
            .get(uid)
            .is_some_and(|s| s.is_termination_requested() && !s.is_terminated())
    }

    // ---- query methods (the `podWorkers` predicates the rest of the kubelet asks) ----

    pub(crate) fn is_pod_known_terminated(&self, uid: PodUid) -> bool {
        self.records.get(&uid).is_some_and(|s| s.is_terminated())
    }

    pub(crate) fn could_have_running_containers(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => !s.is_terminated(),
            None => !self.pods_synced,
        }
    }

    pub(crate) fn should_pod_be_finished(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_finished(),
            None => self.pods_synced,
        }
    }

    pub(crate) fn is_pod_termination_requested(&self, uid: PodUid) -> bool {
        self.records
            .get(&uid)
            .is_some_and(|s| s.is_termination_requested())
    }

    pub(crate) fn should_pod_containers_be_terminating(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_termination_started(),
            None => self.pods_synced,
        }
    }

    pub(crate) fn should_pod_runtime_be_removed(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_terminated(),
            None => self.pods_synced,
        }
    }

    pub(crate) fn should_pod_content_be_removed(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => {
                // Switch `evictedPodContainersRemoved` off (before PR 45896, v1.7): only a
                // deleted pod's content goes.
                let evicted = s.is_evicted() && self.b.on(Sw::EvictedPodContainersRemoved);
                evicted || (s.is_deleted() && s.is_terminated())
            }
            None => self.pods_synced,
        }
    }

    /// `calculateEffectiveGracePeriod`: returns (grace, shortened).
    #[cfg(test)]
    pub(crate) fn effective_grace(
        prev: i64,
        pod: Option<&ApiPod>,
        kill: Option<&KillPodOptions>,
    ) -> (i64, bool) {
        Self::effective_grace_as(prev, pod, kill, true)
    }

    /// [`Self::effective_grace`]; `honour_zero: false` is the v1.22 to v1.31 calculation
    /// (switch `graceOverrideZeroHonoured`, issue 115819; `calculateEffectiveGracePeriod`
    /// in `pkg/kubelet/pod_workers.go` of v1.31 has no `overridden` flag, a later master
    /// adds one): a grace that came out 0 (an explicit override or deletion grace of 0)
    /// falls back to the spec's terminationGracePeriodSeconds. So on v1.31 a force delete
    /// (grace 0: the API object goes at once) is killed with the spec's grace: the update
    /// that carries deletionGracePeriodSeconds 0 reads it as unset, and the REMOVE that
    /// follows (`deletePod` in `pkg/kubelet/kubelet.go`) carries no override (issues
    /// 115819, 120449; PR 124063 fixed only evictions).
    pub(crate) fn effective_grace_as(
        prev: i64,
        pod: Option<&ApiPod>,
        kill: Option<&KillPodOptions>,
        honour_zero: bool,
    ) -> (i64, bool) {
        let mut g = prev;
        let mut overridden = false;
        if let Some(d) = pod.and_then(|p| p.deletion_grace_period_seconds) {
            if g == 0 || d < g {
                g = d;
                overridden = true;
            }
        }
        if let Some(o) = kill.and_then(|k| k.grace_override) {
            if g == 0 || o < g {
                g = o;
                overridden = true;
            }
        }
        if (!overridden || !honour_zero) && g == 0 {
            if let Some(t) = pod.and_then(|p| p.spec.termination_grace_period_seconds) {
                g = t;
            }
        }
        if g < 1 {
            g = 1;
        }
        (g, prev != 0 && prev != g)
    }
}

/// Close `CompletedCh` `ch`; a `killPodNow` caller blocked on it returns (an event).
/// `wait.Jitter(d, 0.5)` drawing from `rng`: uniform in [d, 1.5 d).
fn jitter_with(rng: &mut Stream, d: Dur) -> Dur {
    let extra = jitter_extra(d.0);
    if extra == 0 {
        return d;
    }
    Dur(d.0 + rng.below(extra))
}

/// `d * JITTER` rounded down, as the float product gives it. Below 2^53 every duration is
/// exact as a float and halving it is exact, so the product is `d / 2`: integer halving
/// there (the float conversions cost more than the rest of the jitter).
fn jitter_extra(d: u64) -> u64 {
    const EXACT: u64 = 1 << f64::MANTISSA_DIGITS;
    const _: () = assert!(JITTER == 0.5, "the integer path halves");
    let extra = if d < EXACT {
        d / 2
    } else {
        jitter_extra_float(d)
    };
    debug_assert_eq!(
        extra,
        jitter_extra_float(d),
        "jitter rule broken for {d} ns"
    );
    extra
}

/// [`jitter_extra`] through the float product.
#[cold]
#[inline(never)]
fn jitter_extra_float(d: u64) -> u64 {
    (d as f64 * JITTER) as u64
}

pub(super) fn close_channel(
    closed: &mut Vec<u64>,
    waiters: &mut BTreeMap<u64, (PodUid, TimerKey)>,
    ctx: &mut Ctx,
    uid: PodUid,
    ch: u64,
) {
    closed.push(ch);
    ctx.emit(Transition::KillPodNow {
        uid,
        ch,
        what: KillPodNowStep::Closed,
        evict: false,
    });
    if let Some((_, timer)) = waiters.remove(&ch) {
        ctx.cancel(timer);
        let _ = ctx.after(
            Dur::ZERO,
            KEv::KillPodNowReturned {
                uid,
                ch,
                timed_out: false,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PodSpec, RestartPolicy};

    #[test]
    fn sync_error_class_is_the_network_message_anywhere_in_the_error() {
        assert_eq!(
            SyncError::of("network is not ready: cni config uninitialized"),
            SyncError::NetworkNotReady
        );
        assert_eq!(
            SyncError::of("error: network is not ready"),
            SyncError::NetworkNotReady
        );
        assert_eq!(SyncError::of("ErrImagePull: boom"), SyncError::Other);
        assert_eq!(SyncError::of(""), SyncError::Other);
    }

    #[test]
    fn jitter_extra_is_the_float_product_on_both_sides_of_2_pow_53() {
        let edge = 1u64 << 53;
        for d in [0, 1, 3, 999_999_999, edge - 1, edge, edge + 1, u64::MAX] {
            assert_eq!(jitter_extra(d), jitter_extra_float(d), "{d}");
        }
    }

    #[test]
    fn begin_sync_takes_the_next_op_and_returns_the_last_sync_time() {
        let mut st = PodSyncStatus::new("a_ns".into(), SimTime(0));
        st.last_sync_time = Some(SimTime(5));
        let mut next = 7;
        assert_eq!(st.begin_sync(PodUid(1), &mut next), (7, Some(SimTime(5))));
        assert_eq!((st.op, next), (Some(7), 8));
    }

    #[test]
    fn end_sync_and_complete_is_end_sync_then_complete_work() {
        // The same two records and queues, one through the single-lookup path and one
        // through `end_sync` followed by completeWork's steps one by one.
        for (err, pending, signalled) in [
            (None, false, false),
            (None, true, false),
            (Some(SyncError::Other), true, true),
            (Some(SyncError::NetworkNotReady), false, false),
        ] {
            let mut fast = PodWorkers::new(3, Dur::secs(10), Dur::secs(20));
            let uid = PodUid(4);
            fast.insert_record(uid, PodSyncStatus::new("p_default".into(), SimTime(0)));
            let st = fast.records.get_mut(&uid).expect("inserted");
            st.working = true;
            st.signalled = signalled;
            if pending {
                st.pending_update = Some(UpdatePodOptions::new(
                    UpdateType::Sync,
                    Arc::new(pod(None, None)),
                ));
            }
            let (op, _) = fast.begin_sync(uid);
            let mut slow = fast.clone();
            let now = SimTime(1_000);
            let wake = fast.end_sync_and_complete(uid, op, now, err);

            assert!(slow.end_sync(uid, op, now));
            let delay = slow.jitter(slow.requeue_period(err));
            slow.work_queue.enqueue(uid, now + delay);
            let st = slow.records.get_mut(&uid).expect("kept");
            let expected = pending && !st.signalled;
            if pending {
                st.signalled = true;
            } else {
                st.working = false;
            }
            assert_eq!(wake, Some(expected));
            let (a, b) = (&fast.records[&uid], &slow.records[&uid]);
            assert_eq!(
                (a.op, a.last_sync_time, a.working, a.signalled),
                (b.op, b.last_sync_time, b.working, b.signalled)
            );
            let (mut due_a, mut due_b) = (Vec::new(), Vec::new());
            fast.work_queue.get_work_into(SimTime(u64::MAX), &mut due_a);
            slow.work_queue.get_work_into(SimTime(u64::MAX), &mut due_b);
            assert_eq!(due_a, due_b);
            // The next draw of both random streams is the same one.
            assert_eq!(fast.jitter(Dur::secs(100)), slow.jitter(Dur::secs(100)));
        }
        // A record already gone: nothing is queued.
        let mut pw = PodWorkers::new(3, Dur::secs(10), Dur::secs(20));
        assert_eq!(
            pw.end_sync_and_complete(PodUid(9), 1, SimTime(5), None),
            None
        );
        let mut due = Vec::new();
        pw.work_queue.get_work_into(SimTime(u64::MAX), &mut due);
        assert!(due.is_empty());
    }

    fn pod(tgps: Option<i64>, deletion: Option<i64>) -> ApiPod {
        let mut spec = PodSpec::new("p", "default", RestartPolicy::Always, vec![]);
        spec.termination_grace_period_seconds = tgps;
        let mut pod = ApiPod::new(PodUid(1), spec);
        pod.deletion_timestamp = deletion.map(|_| SimTime::ZERO);
        pod.deletion_grace_period_seconds = deletion;
        pod
    }

    fn kill(o: i64) -> KillPodOptions {
        KillPodOptions {
            grace_override: Some(o),
            ..Default::default()
        }
    }

    #[test]
    fn effective_grace_only_decreases_and_never_below_one() {
        assert_eq!(
            PodWorkers::effective_grace(0, Some(&pod(Some(30), None)), None),
            (30, false)
        );
        assert_eq!(
            PodWorkers::effective_grace(0, Some(&pod(Some(30), Some(10))), None),
            (10, false)
        );
        assert_eq!(
            PodWorkers::effective_grace(10, Some(&pod(Some(30), Some(20))), None),
            (10, false)
        );
        assert_eq!(
            PodWorkers::effective_grace(10, Some(&pod(Some(30), Some(5))), None),
            (5, true)
        );
        // An explicit 0 becomes the floor of 1 (the overridden flag keeps TGPS out).
        assert_eq!(
            PodWorkers::effective_grace(0, Some(&pod(Some(30), None)), Some(&kill(0))),
            (1, false)
        );
        assert_eq!(
            PodWorkers::effective_grace(30, Some(&pod(Some(30), None)), Some(&kill(0))),
            (1, true)
        );
        assert_eq!(PodWorkers::effective_grace(0, None, None), (1, false));
        // v1.22 to v1.31 (graceOverrideZeroHonoured false): an explicit 0 falls back to the spec.
        assert_eq!(
            PodWorkers::effective_grace_as(0, Some(&pod(Some(30), None)), Some(&kill(0)), false),
            (30, false)
        );
        assert_eq!(
            PodWorkers::effective_grace_as(0, Some(&pod(Some(30), None)), Some(&kill(5)), false),
            (5, false)
        );
    }

    /// v1.22.5-v1.23 (unstartedPodsDoNotBlockStart false): a UID whose termination was
    /// requested before it started still heads the queue and blocks the next one.
    #[test]
    fn terminating_unstarted_uid_blocks_the_queue_before_pr_107900() {
        let full = "etcd_kube-system";
        for (fixed, v3_starts) in [(true, true), (false, false)] {
            let mut pw = PodWorkers::new(1, Dur::secs(60), Dur::secs(10));
            pw.b.set(Sw::UnstartedPodsDoNotBlockStart, fixed);
            for u in [2, 3] {
                pw.records.insert(
                    PodUid(u),
                    Box::new(PodSyncStatus::new(full.into(), SimTime::ZERO)),
                );
            }
            pw.records
                .get_mut_watched(&PodUid(2))
                .unwrap()
                .terminating_at = Some(SimTime(1));
            pw.waiting_static_by_fullname
                .insert(full.into(), vec![PodUid(2), PodUid(3)]);
            assert_eq!(pw.allow_static_pod_start(full, PodUid(3)), v3_starts);
        }
    }

    /// Mirrors upstream `Test_allowPodStart` (the static-pod cases).
    #[test]
    fn test_allow_pod_start_static_full_name_gate() {
        let mut pw = PodWorkers::new(1, Dur::secs(60), Dur::secs(10));
        let full = "etcd_kube-system";
        let rec = |pw: &mut PodWorkers, u: u32| {
            pw.records.insert(
                PodUid(u),
                Box::new(PodSyncStatus::new(full.into(), SimTime::ZERO)),
            );
        };
        for u in [1, 2, 3] {
            rec(&mut pw, u);
        }
        pw.waiting_static_by_fullname
            .insert(full.into(), vec![PodUid(1), PodUid(2), PodUid(3)]);
        // Not at the head of the queue: cannot start.
        assert!(!pw.allow_static_pod_start(full, PodUid(2)));
        // The head starts and holds the name; nobody else may start.
        assert!(pw.allow_static_pod_start(full, PodUid(1)));
        assert!(
            pw.allow_static_pod_start(full, PodUid(1)),
            "the started UID may go on"
        );
        assert!(!pw.allow_static_pod_start(full, PodUid(2)));
        // Releasing the name lets the next live UID start; a terminating one is skipped.
        pw.release_static(PodUid(1));
        pw.records
            .get_mut_watched(&PodUid(2))
            .unwrap()
            .terminating_at = Some(SimTime(1));
        assert!(pw.allow_static_pod_start(full, PodUid(3)));
        assert_eq!(pw.started_static_by_fullname.get(full), Some(&PodUid(3)));
        assert!(!pw.waiting_static_by_fullname.contains_key(full));
        // A UID with no record (gone) never blocks the queue.
        pw.release_static(PodUid(3));
        pw.waiting_static_by_fullname
            .insert(full.into(), vec![PodUid(9), PodUid(1)]);
        assert!(pw.allow_static_pod_start(full, PodUid(1)));
    }
}
