//! Pod workers: the per-UID state machine that owns each pod's lifecycle.
//!
//! Port of `pkg/kubelet/pod_workers.go`, following the v1.31 layout (the >= v1.27 design
//! with `PodWorkerSync` from `SyncKnownPods`, context cancellation of in-flight syncs and
//! the first-sight handling of pods whose API phase is already terminal, issue 105523).
//! The `podSyncStatus` record keeps upstream's timestamps and flags; the predicates are
//! derived from them exactly as upstream derives them.
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
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::{ApiPod, PodPhase, PodUid, RunningPod, Transition};
use crate::model::{KillPodNowStep, NoteKind, WorkerStep};
use crate::sim::{Dur, SimTime, Stream, TimerKey};
use std::collections::BTreeMap;
use std::sync::Arc;

/// `kubetypes.SyncPodType` (a word of the trace vocabulary).
pub use crate::model::UpdateType;

/// A `PodStatusFunc`: how a killer wants the final API status to look.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum StatusFn {
    /// Set phase, reason and message (what eviction and node shutdown do).
    SetTerminal {
        phase: PodPhase,
        reason: String,
        message: String,
    },
    /// Set phase Failed unless it is already Succeeded, plus reason and message (what the
    /// graceful node shutdown manager does since PRs 106899/106900/106901).
    FailedUnlessSucceeded { reason: String, message: String },
    /// Set only reason and message: the phase stays as computed from the containers (the
    /// node shutdown manager of v1.22.0-v1.23.0, switch `shutdownSetsFailedPhase` off).
    ReasonOnly { reason: String, message: String },
}

/// `KillPodOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct KillPodOptions {
    /// `CompletedCh`, as a channel number.
    pub completed: Option<u64>,
    pub evict: bool,
    pub status_fn: Option<StatusFn>,
    /// `PodTerminationGracePeriodSecondsOverride`.
    pub grace_override: Option<i64>,
}

/// `UpdatePodOptions`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdatePodOptions {
    pub update_type: UpdateType,
    pub pod: Option<Arc<ApiPod>>,
    pub mirror: Option<Arc<ApiPod>>,
    pub running_pod: Option<Arc<RunningPod>>,
    pub kill: Option<Box<KillPodOptions>>,
}

impl UpdatePodOptions {
    pub fn new(update_type: UpdateType, pod: Arc<ApiPod>) -> Self {
        UpdatePodOptions {
            update_type,
            pod: Some(pod),
            mirror: None,
            running_pod: None,
            kill: None,
        }
    }
    pub fn is_runtime_only(&self) -> bool {
        self.pod.is_none() && self.running_pod.is_some()
    }
}

/// `PodWorkerState` (called `PodWorkType` since 1.23).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WorkType {
    Sync,
    Terminating,
    Terminated,
}

impl WorkType {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkType::Sync => "sync",
            WorkType::Terminating => "terminating",
            WorkType::Terminated => "terminated",
        }
    }
}

/// One unit of work taken from the pending slot.
#[derive(Clone, Debug)]
pub struct Work {
    pub work_type: WorkType,
    pub options: UpdatePodOptions,
}

/// `PodWorkerSync`, what `SyncKnownPods` reports per known UID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodWorkerSync {
    pub state: WorkType,
    pub orphan: bool,
    pub has_config: bool,
    pub is_static: bool,
}

/// What `SyncKnownPods` reports: one entry per UID the workers know, in UID order (a
/// sorted vector: built once per housekeeping tick and only looked up).
#[derive(Clone, Debug, Default)]
pub struct KnownPods(pub Vec<(PodUid, PodWorkerSync)>);

impl KnownPods {
    pub fn get(&self, uid: &PodUid) -> Option<&PodWorkerSync> {
        self.0
            .binary_search_by(|(u, _)| u.cmp(uid))
            .ok()
            .map(|i| &self.0[i].1)
    }
    pub fn contains_key(&self, uid: &PodUid) -> bool {
        self.get(uid).is_some()
    }
    pub fn iter(&self) -> impl Iterator<Item = (&PodUid, &PodWorkerSync)> {
        self.0.iter().map(|(u, w)| (u, w))
    }
    pub fn keys(&self) -> impl Iterator<Item = &PodUid> {
        self.0.iter().map(|(u, _)| u)
    }
    pub fn values(&self) -> impl Iterator<Item = &PodWorkerSync> {
        self.0.iter().map(|(_, w)| w)
    }
}

/// `podSyncStatus`: everything the pod worker keeps about one UID.
#[derive(Clone, Debug)]
pub struct PodSyncStatus {
    pub fullname: String,
    pub working: bool,
    pub pending_update: Option<UpdatePodOptions>,
    pub active_update: Option<UpdatePodOptions>,
    pub synced_at: SimTime,
    pub started_at: Option<SimTime>,
    pub terminating_at: Option<SimTime>,
    pub terminated_at: Option<SimTime>,
    /// 0 = unset; only ever decreases once set.
    pub grace_period: i64,
    pub notify_post_terminating: Vec<u64>,
    pub status_post_terminating: Vec<StatusFn>,
    pub started_terminating: bool,
    pub deleted: bool,
    pub evicted: bool,
    pub finished: bool,
    pub restart_requested: bool,
    pub observed_runtime: bool,
    // ---- the goroutine, as simulator state ----
    /// The signal channel exists (a worker "goroutine" runs for this UID).
    pub has_worker: bool,
    /// A wake-up is scheduled (the 1-buffered signal channel is full).
    pub signalled: bool,
    /// The context of the current sync was cancelled.
    pub cancelled: bool,
    /// End time of the previous sync (`lastSyncTime`); `None` is Go's zero time.
    pub last_sync_time: Option<SimTime>,
    /// The in-flight operation, if the worker is inside a sync.
    pub op: Option<u64>,
}

impl PodSyncStatus {
    pub fn new(fullname: String, now: SimTime) -> Self {
        PodSyncStatus {
            fullname,
            working: false,
            pending_update: None,
            active_update: None,
            synced_at: now,
            started_at: None,
            terminating_at: None,
            terminated_at: None,
            grace_period: 0,
            notify_post_terminating: Vec::new(),
            status_post_terminating: Vec::new(),
            started_terminating: false,
            deleted: false,
            evicted: false,
            finished: false,
            restart_requested: false,
            observed_runtime: false,
            has_worker: false,
            signalled: false,
            cancelled: false,
            last_sync_time: None,
            op: None,
        }
    }
    pub fn is_termination_requested(&self) -> bool {
        self.terminating_at.is_some()
    }
    pub fn is_termination_started(&self) -> bool {
        self.started_terminating
    }
    pub fn is_terminated(&self) -> bool {
        self.terminated_at.is_some()
    }
    pub fn is_finished(&self) -> bool {
        self.finished
    }
    pub fn is_started(&self) -> bool {
        self.started_at.is_some()
    }
    pub fn is_evicted(&self) -> bool {
        self.evicted
    }
    pub fn is_deleted(&self) -> bool {
        self.deleted
    }
    pub fn work_type(&self) -> WorkType {
        if self.is_terminated() {
            WorkType::Terminated
        } else if self.is_termination_requested() {
            WorkType::Terminating
        } else {
            WorkType::Sync
        }
    }
    /// `mergeLastUpdate`: fold an accepted update into `activeUpdate`.
    fn merge_last_update(&mut self, other: &UpdatePodOptions) {
        let Some(active) = &mut self.active_update else {
            // The active update never records an update type (upstream leaves it zero,
            // `SyncPodSync`), so a requeued update is a sync.
            let mut first = other.clone();
            first.update_type = UpdateType::Sync;
            first.kill = other.kill.as_ref().map(|k| {
                Box::new(KillPodOptions {
                    completed: None,
                    evict: k.evict,
                    status_fn: None,
                    grace_override: k.grace_override,
                })
            });
            self.active_update = Some(first);
            return;
        };
        // A runtime-only update does not replace a real pod already known.
        if !(other.is_runtime_only() && active.pod.is_some()) {
            active.pod.clone_from(&other.pod);
        }
        active.running_pod.clone_from(&other.running_pod);
        if other.mirror.is_some() {
            active.mirror.clone_from(&other.mirror);
        }
        if let Some(k) = &other.kill {
            active.kill = Some(Box::new(KillPodOptions {
                completed: None,
                evict: k.evict,
                status_fn: None,
                grace_override: k.grace_override,
            }));
        }
    }
}

/// The pod workers' shared state (upstream's `podWorkers` struct).
#[derive(Clone, Debug)]
pub struct PodWorkers {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub b: crate::kubelet::profile::Behaviours,
    pub records: BTreeMap<PodUid, PodSyncStatus>,
    /// False until the first `SyncKnownPods`.
    pub pods_synced: bool,
    /// The kubelet's work queue: when each UID is due for a resync.
    pub work_queue: WorkQueue,
    /// `CompletedCh` numbers closed so far, in order.
    pub closed_channels: Vec<u64>,
    /// `killPodNow` callers blocked on a channel: channel -> (pod, their timeout timer).
    pub kill_waiters: BTreeMap<u64, (PodUid, TimerKey)>,
    next_channel: u64,
    pub resync_interval: Dur,
    pub back_off_period: Dur,
    /// `startedStaticPodsByFullname`: the one started UID per static-pod full name.
    pub started_static_by_fullname: BTreeMap<String, PodUid>,
    /// `waitingToStartStaticPodsByFullname`: UIDs waiting for the full name, in order.
    pub waiting_static_by_fullname: BTreeMap<String, Vec<PodUid>>,
    next_op: u64,
    rng: Stream,
}

/// The kubelet's `workQueue` (`pkg/kubelet/util/queue`): one due time per UID; `GetWork`
/// takes every UID that is due. Indexed by due time so a tick costs only the due items.
#[derive(Clone, Debug, Default)]
pub struct WorkQueue {
    due: BTreeMap<PodUid, SimTime>,
    by_time: std::collections::BTreeSet<(SimTime, PodUid)>,
}

impl WorkQueue {
    /// `Enqueue(uid, delay)`: replaces any earlier entry for the UID.
    pub fn enqueue(&mut self, uid: PodUid, at: SimTime) {
        if let Some(old) = self.due.insert(uid, at) {
            self.by_time.remove(&(old, uid));
        }
        self.by_time.insert((at, uid));
    }
    pub fn remove(&mut self, uid: PodUid) {
        if let Some(old) = self.due.remove(&uid) {
            self.by_time.remove(&(old, uid));
        }
    }
    /// `GetWork`: every UID due at or before `now`, removed from the queue, in due order.
    pub fn get_work(&mut self, now: SimTime) -> Vec<PodUid> {
        let mut out = Vec::new();
        while let Some(&(t, uid)) = self.by_time.first() {
            if t > now {
                break;
            }
            self.by_time.pop_first();
            self.due.remove(&uid);
            out.push(uid);
        }
        out
    }
    pub fn get(&self, uid: PodUid) -> Option<SimTime> {
        self.due.get(&uid).copied()
    }
    pub fn len(&self) -> usize {
        self.due.len()
    }
    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }
}

/// `backOffOnTransientErrorPeriod`.
pub const BACKOFF_ON_TRANSIENT_ERROR: Dur = Dur::secs(1);
/// The jitter factor of resyncs and back-offs.
const JITTER: f64 = 0.5;
/// The message SyncPod returns while the pod network is not ready.
pub const NETWORK_NOT_READY: &str = "network is not ready";

impl PodWorkers {
    pub fn new(seed: u64, resync_interval: Dur, back_off_period: Dur) -> Self {
        PodWorkers {
            b: Default::default(),
            records: BTreeMap::new(),
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
    pub fn jitter(&mut self, d: Dur) -> Dur {
        let extra = (d.0 as f64 * JITTER) as u64;
        if extra == 0 {
            return d;
        }
        Dur(d.0 + self.rng.below(extra))
    }

    /// A fresh `CompletedCh` number.
    pub fn new_channel(&mut self) -> u64 {
        let ch = self.next_channel;
        self.next_channel += 1;
        ch
    }

    pub fn new_op(&mut self) -> u64 {
        let id = self.next_op;
        self.next_op += 1;
        id
    }

    /// `allowStaticPodStart`: the UID may start iff no other UID holds the full name and
    /// it is the first live UID in the waiting queue (entries whose termination was
    /// requested, or that are gone, are skipped and pruned).
    pub fn allow_static_pod_start(&mut self, fullname: &str, uid: PodUid) -> bool {
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

    /// Release the full name a static pod held, if it held it.
    pub fn release_static(&mut self, uid: PodUid) {
        let Some(full) = self.records.get(&uid).map(|s| s.fullname.clone()) else {
            return;
        };
        if self.started_static_by_fullname.get(&full) == Some(&uid) {
            self.started_static_by_fullname.remove(&full);
        }
    }

    /// `IsPodForMirrorPodTerminatingByFullName`.
    pub fn is_pod_for_mirror_pod_terminating_by_full_name(&self, fullname: &str) -> bool {
        let Some(uid) = self.started_static_by_fullname.get(fullname) else {
            return false;
        };
        self.records
            .get(uid)
            .is_some_and(|s| s.is_termination_requested() && !s.is_terminated())
    }

    // ---- query methods (section 1.6 of kubelet-model.md) ----

    pub fn is_pod_known_terminated(&self, uid: PodUid) -> bool {
        self.records.get(&uid).is_some_and(|s| s.is_terminated())
    }

    pub fn could_have_running_containers(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => !s.is_terminated(),
            None => !self.pods_synced,
        }
    }

    pub fn should_pod_be_finished(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_finished(),
            None => self.pods_synced,
        }
    }

    pub fn is_pod_termination_requested(&self, uid: PodUid) -> bool {
        self.records
            .get(&uid)
            .is_some_and(|s| s.is_termination_requested())
    }

    pub fn should_pod_containers_be_terminating(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_termination_started(),
            None => self.pods_synced,
        }
    }

    pub fn should_pod_runtime_be_removed(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_terminated(),
            None => self.pods_synced,
        }
    }

    pub fn should_pod_content_be_removed(&self, uid: PodUid) -> bool {
        match self.records.get(&uid) {
            Some(s) => s.is_evicted() || (s.is_deleted() && s.is_terminated()),
            None => self.pods_synced,
        }
    }

    /// `calculateEffectiveGracePeriod`: returns (grace, shortened).
    pub fn effective_grace(
        prev: i64,
        pod: Option<&ApiPod>,
        kill: Option<&KillPodOptions>,
    ) -> (i64, bool) {
        Self::effective_grace_as(prev, pod, kill, true)
    }

    /// [`Self::effective_grace`]; `honour_zero: false` is the v1.22-v1.26 calculation
    /// (switch `graceOverrideZeroHonoured`, issue 115819): with no `overridden` flag, a
    /// grace that came out 0 (an explicit override or deletion grace of 0) falls back to
    /// the spec's terminationGracePeriodSeconds.
    pub fn effective_grace_as(
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

fn full_name(o: &UpdatePodOptions) -> (PodUid, String) {
    if let Some(p) = &o.pod {
        return (p.uid, p.spec.full_name());
    }
    let rp = o
        .running_pod
        .as_ref()
        .expect("update without pod or running pod");
    (rp.uid, format!("{}_{}", rp.name, rp.namespace))
}

impl Kubelet {
    /// `UpdatePod`: hand an update to the pod's worker (section 1.3).
    pub fn update_pod(&mut self, ctx: &mut Ctx, mut options: UpdatePodOptions) {
        if self.legacy() {
            self.legacy_update_pod(ctx, options);
            return;
        }
        let now = ctx.now();
        // 1. Identify the pod.
        let is_runtime_pod = options.is_runtime_only();
        if options.pod.is_none() && options.running_pod.is_none() {
            return;
        }
        if is_runtime_pod && options.update_type != UpdateType::Kill {
            return; // runtime pods can only be killed
        }
        if options.pod.is_some() {
            options.running_pod = None;
        }
        let (uid, fullname) = full_name(&options);
        ctx.emit(Transition::UpdatePod {
            uid,
            ty: options.update_type,
            runtime_only: is_runtime_pod,
        });

        // 2. First sight.
        let first_time = !self.pw.records.contains_key(&uid);
        if first_time {
            let mut st = PodSyncStatus::new(fullname, now);
            if let Some(pod) = &options.pod {
                if pod.status.phase.is_terminal() && ctx.epoch() > 0 {
                    ctx.reach(Reach::TerminalPodSeenAfterRestart);
                }
                // Before PR 105527 (v1.22.0-2) a pod first seen terminal got a fresh record
                // like any other, and counted in admission until its worker terminated it.
                if pod.status.phase.is_terminal()
                    && self.pw.b.on(Sw::TerminalPodsTerminatedOnFirstSight)
                {
                    let idle = self
                        .pleg
                        .cache_get(uid)
                        .is_ok_and(|c| !c.has_running_container() && !c.has_ready_sandbox());
                    if idle {
                        st.terminating_at = Some(now);
                        st.terminated_at = Some(now);
                        st.started_terminating = true;
                        ctx.emit(Transition::Worker {
                            uid,
                            what: WorkerStep::FirstSightTerminal,
                        });
                    }
                }
            }
            self.pw.records.insert(uid, st);
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::Record,
            });
        }
        let st = self.pw.records.get_mut(&uid).expect("inserted");

        // 3. Runtime-only substitution: prefer a real pod we already know.
        let mut decision_pod: Option<Arc<ApiPod>> = options.pod.clone();
        if is_runtime_pod {
            st.observed_runtime = true;
            let known = st
                .pending_update
                .as_ref()
                .and_then(|u| u.pod.clone())
                .or_else(|| st.active_update.as_ref().and_then(|u| u.pod.clone()));
            if let Some(p) = known {
                options.pod = Some(p.clone());
                options.running_pod = None;
                decision_pod = Some(p);
            }
        }
        // Upstream keeps deciding on `isRuntimePod` (the update as it arrived) below, even
        // when a known pod replaced the running pod in the options.

        // 4. A create for a UID that is terminating: remember that a restart was asked for.
        if !first_time && st.is_termination_requested() && options.update_type == UpdateType::Create
        {
            ctx.reach(Reach::CreateForTerminatingUid);
        }
        // v1.22.0 (switch `podWorkerHandlesUidReuse` false, issue 104648) had no such step:
        // the create merges into a termination, and a finished UID ignores it for good.
        if !first_time
            && st.is_termination_requested()
            && options.update_type == UpdateType::Create
            && self.pw.b.on(Sw::PodWorkerHandlesUidReuse)
        {
            st.restart_requested = true;
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::RestartWhileTerminating,
            });
            return;
        }
        // 5. Finished pods ignore updates.
        if st.is_finished() {
            return;
        }
        // 6. Transition to terminating.
        let mut became_terminating = false;
        if !st.is_termination_requested() {
            // A runtime-only update, or a deletion timestamp: the pod was deleted.
            if is_runtime_pod
                || decision_pod
                    .as_ref()
                    .is_some_and(|p| p.deletion_timestamp.is_some())
            {
                st.deleted = true;
                st.terminating_at = Some(now);
                became_terminating = true;
            } else if decision_pod
                .as_ref()
                .is_some_and(|p| p.status.phase.is_terminal())
            {
                st.terminating_at = Some(now);
                became_terminating = true;
            } else if options.update_type == UpdateType::Kill {
                st.evicted = options.kill.as_ref().is_some_and(|k| k.evict);
                st.terminating_at = Some(now);
                became_terminating = true;
            }
            if became_terminating {
                if self.ops.get(&uid).is_some_and(|op| op.is_pulling()) {
                    ctx.reach(Reach::KillDuringImagePull);
                }
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::TerminationRequested,
                });
                if !st.is_started() && !is_runtime_pod && st.has_worker {
                    ctx.reach(Reach::KillOfUnstartedPod);
                }
            }
        }
        // 7. Kill options by state.
        let mut was_grace_shortened = false;
        if st.is_terminated() {
            if is_runtime_pod {
                return; // a stale housekeeping view must not restart termination
            }
            if let Some(ch) = options.kill.as_ref().and_then(|k| k.completed) {
                close_channel(
                    &mut self.pw.closed_channels,
                    &mut self.pw.kill_waiters,
                    ctx,
                    uid,
                    ch,
                );
            }
            options.kill = None;
        } else if st.is_termination_requested() {
            let kill = options.kill.get_or_insert_with(Box::default);
            if kill.grace_override == Some(0) {
                ctx.reach(Reach::KillWithZeroGraceOverride);
            }
            if let Some(ch) = kill.completed {
                st.notify_post_terminating.push(ch);
            }
            if let Some(f) = &kill.status_fn {
                st.status_post_terminating.push(f.clone());
            }
            let (g, shortened) = PodWorkers::effective_grace_as(
                st.grace_period,
                decision_pod.as_deref(),
                Some(kill),
                self.pw.b.on(Sw::GraceOverrideZeroHonoured),
            );
            if shortened {
                ctx.reach(Reach::GraceShortened);
            }
            st.grace_period = g;
            kill.grace_override = Some(g);
            was_grace_shortened = shortened;
        } else if let Some(k) = options.kill.take() {
            if let Some(ch) = k.completed {
                close_channel(
                    &mut self.pw.closed_channels,
                    &mut self.pw.kill_waiters,
                    ctx,
                    uid,
                    ch,
                );
            }
        }
        // 8. Start a worker if none runs; a static pod joins the queue for its full name.
        if !st.has_worker {
            st.has_worker = true;
            if options.pod.as_ref().is_some_and(|p| p.static_pod) {
                let full = st.fullname.clone();
                let held = self
                    .pw
                    .started_static_by_fullname
                    .get(&full)
                    .is_some_and(|u| *u != uid);
                // v1.22.0 (switch `staticPodFullNameGate` false) had no wait queue.
                if self.pw.b.on(Sw::StaticPodFullNameGate) {
                    let queue = self.pw.waiting_static_by_fullname.entry(full).or_default();
                    if held || !queue.is_empty() {
                        ctx.reach(Reach::SameNamePodsOverlap);
                    }
                    queue.push(uid);
                } else if held {
                    ctx.reach(Reach::SameNamePodsOverlap);
                }
            }
        }
        let st = self.pw.records.get_mut(&uid).expect("present");
        // 9. Coalesce into the single pending slot and signal.
        st.pending_update = Some(options);
        st.working = true;
        let need_signal = !st.signalled && st.op.is_none();
        if need_signal {
            st.signalled = true;
        }
        // 10. Cancel in-flight work.
        if (became_terminating || was_grace_shortened) && st.op.is_some() {
            st.cancelled = true;
        }
        if need_signal {
            let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
        }
    }

    /// `killPodNow` (section 1.8): ask the pod worker to kill `pod` and return the
    /// `CompletedCh` number the caller blocks on. The caller's wait ends with
    /// `KEv::KillPodNowReturned`: when the channel closes, or after `max(10 s, 1.5 g)`
    /// (event `ExceededGracePeriod`; the termination itself goes on).
    pub fn kill_pod_now(
        &mut self,
        ctx: &mut Ctx,
        pod: Arc<ApiPod>,
        evict: bool,
        grace_override: Option<i64>,
        status_fn: Option<StatusFn>,
    ) -> u64 {
        let g = grace_override
            .or(pod.spec.termination_grace_period_seconds)
            .unwrap_or(0);
        let timeout = (g + g / 2).max(10);
        let ch = self.pw.new_channel();
        let timer = ctx.after(
            Dur::secs(timeout as u64),
            KEv::KillPodNowReturned {
                uid: pod.uid,
                ch,
                timed_out: true,
            },
        );
        self.pw.kill_waiters.insert(ch, (pod.uid, timer));
        ctx.emit(Transition::KillPodNow {
            uid: pod.uid,
            ch,
            what: KillPodNowStep::Requested,
            evict,
        });
        self.update_pod(
            ctx,
            UpdatePodOptions {
                update_type: UpdateType::Kill,
                pod: Some(pod),
                mirror: None,
                running_pod: None,
                kill: Some(Box::new(KillPodOptions {
                    completed: Some(ch),
                    evict,
                    status_fn,
                    grace_override,
                })),
            },
        );
        ch
    }

    /// A `killPodNow` caller stops waiting: its channel closed, or its timeout fired.
    pub(super) fn kill_pod_now_returned(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        ch: u64,
        timed_out: bool,
    ) {
        if timed_out {
            let Some((uid, _)) = self.pw.kill_waiters.remove(&ch) else {
                return; // the channel closed first
            };
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::ExceededGracePeriod,
            });
            ctx.emit(Transition::KillPodNow {
                uid,
                ch,
                what: KillPodNowStep::TimedOut,
                evict: false,
            });
        } else {
            ctx.emit(Transition::KillPodNow {
                uid,
                ch,
                what: KillPodNowStep::Returned,
                evict: false,
            });
        }
        // The callers: the graceful node shutdown manager and the eviction manager.
        self.shutdown_kill_returned(ctx, ch);
        let _ = self.eviction_kill_returned(ctx, ch, timed_out);
    }

    /// The worker goroutine wakes on its signal channel (`startPodSync` and on).
    pub(super) fn worker_wake(&mut self, ctx: &mut Ctx, uid: PodUid) {
        let now = ctx.now();
        let Some(st) = self.pw.records.get_mut(&uid) else {
            return; // record gone: no work
        };
        st.signalled = false;
        if st.op.is_some() || !st.has_worker {
            return;
        }
        let Some(options) = st.pending_update.take() else {
            st.working = false;
            return;
        };
        let work_type = st.work_type();
        st.cancelled = false;
        let work = Work {
            work_type,
            options: options.clone(),
        };
        // Started pods, and runtime pods going straight to termination, proceed.
        if st.is_started() || (options.is_runtime_only() && work_type == WorkType::Terminating) {
            st.merge_last_update(&options);
        } else if options.pod.is_none() {
            st.merge_last_update(&options);
            self.cleanup_unstarted_pod(ctx, uid);
            return;
        } else {
            // allowPodStart: non-static pods may always start; a static pod whose
            // termination was requested never can; another only when it holds its full name.
            let is_static = options.pod.as_ref().is_some_and(|p| p.static_pod);
            let gate = self.pw.b.on(Sw::StaticPodFullNameGate);
            let unstarted_fix = self.pw.b.on(Sw::UnstartedPodsDoNotBlockStart);
            let mut beside_runtime = false;
            if is_static && !gate {
                // v1.22.0: no full-name gate; remember the UID last started under the name
                // (for the orphaned mirror-pod check).
                let full = st.fullname.clone();
                self.pw.started_static_by_fullname.insert(full, uid);
            } else if is_static {
                if st.is_termination_requested() && unstarted_fix {
                    st.merge_last_update(&options);
                    self.cleanup_unstarted_pod(ctx, uid);
                    return;
                }
                let full = st.fullname.clone();
                // Containers of another UID with this full name that the runtime runs (after
                // a restart: a runtime-only pod the gate does not know, issues 112814,
                // 116880). Counted only with switch `fullNameGateCountsRuntimePods`.
                let runtime_other = ctx.list_running_pods().iter().any(|rp| {
                    rp.uid != uid
                        && !rp.containers.is_empty()
                        && rp.name.len() + rp.namespace.len() + 1 == full.len()
                        && full.starts_with(rp.name.as_str())
                        && full.ends_with(rp.namespace.as_str())
                });
                let runtime_blocks =
                    runtime_other && self.pw.b.on(Sw::FullNameGateCountsRuntimePods);
                beside_runtime = runtime_other;
                if runtime_blocks || !self.pw.allow_static_pod_start(&full, uid) {
                    ctx.reach(Reach::StaticPodWaitsForFullName);
                    let st = self.pw.records.get_mut(&uid).expect("present");
                    if unstarted_fix {
                        st.pending_update = Some(options);
                    }
                    // else (v1.22.5 / v1.23.0, PR 104743 before PR 107900): the update is
                    // consumed; only a later UpdatePod (the work queue's resync of a pod
                    // still in config) asks again.
                    st.working = false;
                    let delay = self.pw.jitter(self.pw.back_off_period);
                    self.pw.work_queue.enqueue(uid, now + delay);
                    ctx.emit(Transition::Worker {
                        uid,
                        what: WorkerStep::StaticPodBlocked,
                    });
                    return;
                }
            }
            let st = self.pw.records.get_mut(&uid).expect("present");
            if beside_runtime {
                ctx.reach(Reach::StaticPodStartedBesideRuntimePod);
            }
            st.started_at = Some(now);
            st.merge_last_update(&options);
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::Started,
            });
        }
        let op = self.pw.new_op();
        let st = self.pw.records.get_mut(&uid).expect("present");
        st.op = Some(op);
        if work.options.is_runtime_only() {
            self.run_work(ctx, uid, op, work);
            return;
        }
        // podCache.GetNewerThan(uid, lastSyncTime): blocks until the PLEG has a newer status.
        let min = st.last_sync_time;
        if self.pleg.cache_is_newer(uid, min) {
            self.run_work(ctx, uid, op, work);
        } else {
            self.pleg.add_waiter(uid, min);
            self.waiting_work.insert(uid, (op, work));
        }
    }

    /// The PLEG released a worker blocked in `GetNewerThan`.
    pub(super) fn worker_cache_ready(&mut self, ctx: &mut Ctx, uid: PodUid) {
        if let Some((op, work)) = self.waiting_work.remove(&uid) {
            if self.pw.records.get(&uid).and_then(|s| s.op) == Some(op) {
                self.run_work(ctx, uid, op, work);
            }
        }
    }

    /// `cleanupUnstartedPod`: a pod that can never start.
    fn cleanup_unstarted_pod(&mut self, ctx: &mut Ctx, uid: PodUid) {
        let now = ctx.now();
        self.pw.release_static(uid);
        if let Some(st) = self.pw.records.get_mut(&uid) {
            st.has_worker = false;
            st.finished = true;
            st.working = false;
            st.terminated_at = Some(now);
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::FinishedNeverStarted,
            });
        }
    }

    /// `acknowledgeTerminating`: returns the last registered status function.
    pub(super) fn acknowledge_terminating(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
    ) -> Option<StatusFn> {
        let st = self.pw.records.get_mut(&uid)?;
        if !st.started_terminating && st.is_termination_requested() {
            st.started_terminating = true;
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::TerminationAcknowledged,
            });
        }
        st.status_post_terminating.last().cloned()
    }

    /// A sync operation ended: outcome handling and `completeWork` (section 1.5).
    pub(super) fn finish_work(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        work: &Work,
        result: Result<bool, String>,
    ) {
        if self.legacy() {
            self.legacy_finish_work(ctx, uid, work, result);
            return;
        }
        let now = ctx.now();
        let Some(st) = self.pw.records.get_mut(&uid) else {
            return;
        };
        st.op = None;
        st.last_sync_time = Some(now);
        let runtime_only = work.options.is_runtime_only();
        let mut phase_transition = false;
        // Before PR 108366 SyncPod returned only an error: the worker learned that the pod
        // was terminal only from a later update whose pod carried a terminal API phase.
        let result = match result {
            Ok(true)
                if work.work_type == WorkType::Sync
                    && !self.b.on(Sw::TerminalPhaseAfterTermination) =>
            {
                Ok(false)
            }
            r => r,
        };
        match (&result, work.work_type) {
            (Err(_), _) => {}
            (Ok(_), WorkType::Terminated) => {
                // completeTerminated
                st.has_worker = false;
                st.finished = true;
                st.working = false;
                self.pw.release_static(uid);
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::Finished,
                });
                return;
            }
            (Ok(_), WorkType::Terminating) if runtime_only => {
                // completeTerminatingRuntimePod
                st.terminated_at = Some(now);
                st.finished = true;
                self.pw.release_static(uid);
                self.pw.records.remove(&uid);
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::RuntimePodRecordRemoved,
                });
                return;
            }
            (Ok(_), WorkType::Terminating) => {
                // completeTerminating
                st.terminated_at = Some(now);
                let chans = std::mem::take(&mut st.notify_post_terminating);
                st.status_post_terminating.clear();
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::Terminated,
                });
                for ch in chans {
                    close_channel(
                        &mut self.pw.closed_channels,
                        &mut self.pw.kill_waiters,
                        ctx,
                        uid,
                        ch,
                    );
                }
                self.requeue_last_pod_update(uid);
                phase_transition = true;
            }
            (Ok(true), WorkType::Sync) => {
                // completeSync
                if st.terminating_at.is_none() {
                    st.terminating_at = Some(now);
                }
                st.started_terminating = true;
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::TerminalTerminating,
                });
                self.requeue_last_pod_update(uid);
                phase_transition = true;
            }
            (Ok(false), WorkType::Sync) => {}
        }
        self.complete_work(ctx, uid, phase_transition, result.err());
    }

    /// `requeueLastPodUpdate`.
    fn requeue_last_pod_update(&mut self, uid: PodUid) {
        let Some(st) = self.pw.records.get_mut(&uid) else {
            return;
        };
        if st.pending_update.is_some() {
            return;
        }
        if let Some(active) = st.active_update.clone() {
            st.pending_update = Some(active);
            st.working = true;
        }
    }

    /// `completeWork`: schedule the next resync and pick up pending work.
    fn complete_work(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        phase_transition: bool,
        err: Option<String>,
    ) {
        let now = ctx.now();
        let delay = if phase_transition {
            Dur::ZERO
        } else {
            match &err {
                None => self.pw.jitter(self.pw.resync_interval),
                Some(e) if e.contains(NETWORK_NOT_READY) => {
                    self.pw.jitter(BACKOFF_ON_TRANSIENT_ERROR)
                }
                Some(_) => self.pw.jitter(self.pw.back_off_period),
            }
        };
        self.pw.work_queue.enqueue(uid, now + delay);
        let Some(st) = self.pw.records.get_mut(&uid) else {
            return;
        };
        if st.pending_update.is_some() {
            if !st.signalled {
                st.signalled = true;
                let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
            }
        } else {
            st.working = false;
        }
    }

    /// `SyncKnownPods` (called by housekeeping): forget finished orphans, drive orphaned
    /// started pods into termination, and report every remaining UID.
    pub fn sync_known_pods(
        &mut self,
        ctx: &mut Ctx,
        desired: &BTreeMap<PodUid, Arc<ApiPod>>,
    ) -> KnownPods {
        let now = ctx.now();
        self.pw.pods_synced = true;
        // Records needing work (a restart request, or no longer desired), found by walking
        // both UID-ordered maps side by side; the others only report their state below.
        let mut act = Vec::new();
        {
            let mut want = desired.keys().peekable();
            for (uid, st) in &self.pw.records {
                while want.next_if(|d| *d < uid).is_some() {}
                let orphan = want.peek() != Some(&uid);
                if st.restart_requested || orphan {
                    act.push((*uid, orphan));
                }
            }
        }
        for (uid, orphan) in act {
            let st = self.pw.records.get_mut(&uid).expect("listed");
            {
                // removeTerminatedWorker
                if st.finished {
                    self.pw.release_static(uid);
                    self.pw.records.remove(&uid);
                    self.pw.work_queue.remove(uid);
                    ctx.emit(Transition::Worker {
                        uid,
                        what: WorkerStep::Forgotten,
                    });
                    continue;
                }
                // v1.22-v1.26 (switch `orphanedPodsDrivenToCompletion` false, PR 113145):
                // removeTerminatedWorker only; an orphan whose last sync failed waits for an
                // UpdatePod that never comes.
                if orphan && self.pw.b.on(Sw::OrphanedPodsDrivenToCompletion) {
                    st.deleted = true;
                    if !st.is_started() && !st.observed_runtime {
                        self.pw.release_static(uid);
                        self.pw.records.remove(&uid);
                        ctx.emit(Transition::Worker {
                            uid,
                            what: WorkerStep::OrphanNeverStarted,
                        });
                        continue;
                    }
                    if !st.is_termination_requested() {
                        st.terminating_at = Some(now);
                        let pod = st.active_update.as_ref().and_then(|u| u.pod.clone());
                        st.grace_period = match pod {
                            Some(p) => {
                                PodWorkers::effective_grace_as(
                                    st.grace_period,
                                    Some(&p),
                                    None,
                                    self.pw.b.on(Sw::GraceOverrideZeroHonoured),
                                )
                                .0
                            }
                            None => 1,
                        };
                        ctx.emit(Transition::Worker {
                            uid,
                            what: WorkerStep::OrphanTerminationRequested,
                        });
                    }
                    self.requeue_last_pod_update(uid);
                    let st = self.pw.records.get_mut(&uid).expect("present");
                    if st.pending_update.is_some()
                        && !st.signalled
                        && st.op.is_none()
                        && st.has_worker
                    {
                        st.signalled = true;
                        let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(self.pw.records.len());
        let mut want = desired.keys().peekable();
        for (&uid, st) in &self.pw.records {
            while want.next_if(|d| **d < uid).is_some() {}
            let orphan = want.peek() != Some(&&uid);
            let cfg = st
                .active_update
                .as_ref()
                .and_then(|u| u.pod.as_ref())
                .or_else(|| st.pending_update.as_ref().and_then(|u| u.pod.as_ref()));
            out.push((
                uid,
                PodWorkerSync {
                    state: st.work_type(),
                    orphan,
                    has_config: cfg.is_some(),
                    is_static: cfg.is_some_and(|p| p.static_pod),
                },
            ));
        }
        KnownPods(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PodSpec, RestartPolicy};

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
        // v1.22-v1.26 (graceOverrideZeroHonoured false): an explicit 0 falls back to the spec.
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
                pw.records
                    .insert(PodUid(u), PodSyncStatus::new(full.into(), SimTime::ZERO));
            }
            pw.records.get_mut(&PodUid(2)).unwrap().terminating_at = Some(SimTime(1));
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
            pw.records
                .insert(PodUid(u), PodSyncStatus::new(full.into(), SimTime::ZERO));
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
        pw.records.get_mut(&PodUid(2)).unwrap().terminating_at = Some(SimTime(1));
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
