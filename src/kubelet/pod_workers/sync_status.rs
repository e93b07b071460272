//! The pod worker's per-UID record (`podSyncStatus` in `pkg/kubelet/pod_workers.go`) and
//! the state-machine rules its methods check, kept apart from the workers' shared state.

use super::{KillPodOptions, StatusFn, UpdatePodOptions, UpdateType, WorkType};
use crate::model::PodUid;
use crate::sim::SimTime;

/// `podSyncStatus`: everything the pod worker keeps about one UID.
#[derive(Clone, Debug)]
pub(crate) struct PodSyncStatus {
    pub(crate) fullname: String,
    pub(crate) working: bool,
    pub(crate) pending_update: Option<UpdatePodOptions>,
    pub(crate) active_update: Option<UpdatePodOptions>,
    /// `syncedAt` (first sight); only the conformance tests read it.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) synced_at: SimTime,
    pub(crate) started_at: Option<SimTime>,
    pub(crate) terminating_at: Option<SimTime>,
    pub(crate) terminated_at: Option<SimTime>,
    /// 0 = unset; only ever decreases once set.
    pub(crate) grace_period: i64,
    pub(crate) notify_post_terminating: Vec<u64>,
    pub(crate) status_post_terminating: Vec<StatusFn>,
    pub(crate) started_terminating: bool,
    pub(crate) deleted: bool,
    pub(crate) evicted: bool,
    pub(crate) finished: bool,
    pub(crate) restart_requested: bool,
    pub(crate) observed_runtime: bool,
    // ---- the goroutine, as simulator state ----
    /// The signal channel exists (a worker "goroutine" runs for this UID).
    pub(crate) has_worker: bool,
    /// A wake-up is scheduled (the 1-buffered signal channel is full).
    pub(crate) signalled: bool,
    /// The context of the current sync was cancelled.
    pub(crate) cancelled: bool,
    /// End time of the previous sync (`lastSyncTime`); `None` is Go's zero time.
    pub(crate) last_sync_time: Option<SimTime>,
    /// The in-flight operation, if the worker is inside a sync.
    pub(crate) op: Option<u64>,
    /// That operation itself while it waits on the runtime: parked here by each CRI call
    /// and taken back by the reply (`cri_reply.rs`), so neither searches a map of its own.
    /// `None` while the operation runs, and whenever `op` is `None`.
    pub(crate) parked: Option<Box<crate::kubelet::sync::Op>>,
    /// What the last `SyncPod` status generation found unchanged (a cache of a pure
    /// computation, `status_memo.rs`); dropped with the record.
    pub(crate) status_memo: Option<crate::kubelet::status_memo::StatusMemo>,
}

/// What the prober's copy of a record reads (`ProbeManager::refresh_terminating`): whether
/// termination was requested, and whether the worker is terminated. Only
/// `request_termination` and `mark_terminated` change it, on a record taken with
/// `RecordMap::get_mut_watched` (or a record not yet inserted).
impl crate::kubelet::record_map::Watched for Box<PodSyncStatus> {
    fn watched(&self) -> u8 {
        u8::from(self.is_termination_requested()) | u8::from(self.is_terminated()) << 1
    }
}

impl PodSyncStatus {
    pub(crate) fn new(fullname: String, now: SimTime) -> Self {
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
            parked: None,
            status_memo: None,
        }
    }
    /// A worker begins a sync on this record: a fresh operation id taken from `next_op`
    /// (the pod workers' counter), recorded as the one in flight. Returns it with the end
    /// time of the previous sync. The caller holds the record already (no lookup).
    pub(crate) fn begin_sync(&mut self, uid: PodUid, next_op: &mut u64) -> (u64, Option<SimTime>) {
        assert!(
            self.op.is_none(),
            "pod worker rule broken: a worker with a record runs one sync at a time ({uid})"
        );
        let op = *next_op;
        *next_op += 1;
        self.op = Some(op);
        (op, self.last_sync_time)
    }

    /// The sync `op` ended at `now`: no sync is in flight any more.
    pub(crate) fn end_sync(&mut self, uid: PodUid, op: u64, now: SimTime) {
        assert_eq!(
            self.op,
            Some(op),
            "pod worker rule broken: a sync's end is reported by the operation the worker \
             runs ({uid})"
        );
        debug_assert!(
            self.parked.is_none(),
            "sync operation rule broken: an operation that ends is parked no more ({uid})"
        );
        self.op = None;
        self.last_sync_time = Some(now);
    }
    /// The end of `completeWork` on the record: with an update pending the worker goes on
    /// (true when its wake-up must be scheduled: none was pending), else it stops working.
    pub(crate) fn take_pending_signal(&mut self) -> bool {
        if self.pending_update.is_some() {
            let wake = !self.signalled;
            self.signalled = true;
            wake
        } else {
            self.working = false;
            false
        }
    }
    pub(crate) fn is_termination_requested(&self) -> bool {
        self.terminating_at.is_some()
    }
    pub(crate) fn is_termination_started(&self) -> bool {
        self.started_terminating
    }
    pub(crate) fn is_terminated(&self) -> bool {
        self.terminated_at.is_some()
    }
    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }
    pub(crate) fn is_started(&self) -> bool {
        self.started_at.is_some()
    }
    pub(crate) fn is_evicted(&self) -> bool {
        self.evicted
    }
    pub(crate) fn is_deleted(&self) -> bool {
        self.deleted
    }
    pub(crate) fn work_type(&self) -> WorkType {
        if self.is_terminated() {
            WorkType::Terminated
        } else if self.is_termination_requested() {
            WorkType::Terminating
        } else {
            WorkType::Sync
        }
    }
    /// The record's standing rules, checked after every state change: `terminatedAt` is
    /// set only after `terminatingAt`, termination is acknowledged only once requested, and
    /// a finished worker is terminated and its goroutine has ended.
    ///
    /// The four rules are tested together, flag by flag with no branch per rule (every
    /// update and many state changes run the test); only a broken rule takes the slow
    /// path that names it.
    #[inline]
    pub(crate) fn assert_invariants(&self) {
        if !self.invariants_hold() {
            self.invariants_broken();
        }
    }

    /// Whether all four rules hold (`first_broken_rule` finds none).
    fn invariants_hold(&self) -> bool {
        let terminating = self.terminating_at.is_some();
        let terminated = self.terminated_at.is_some();
        (!terminated | terminating)
            & (!self.started_terminating | terminating)
            & (!self.finished | (terminated & !self.has_worker))
    }

    /// The first of the four rules the record breaks, in the order they are documented.
    fn first_broken_rule(&self) -> Option<&'static str> {
        if self.terminated_at.is_some() && self.terminating_at.is_none() {
            return Some("a terminated worker was terminating first");
        }
        if self.started_terminating && self.terminating_at.is_none() {
            return Some("termination is acknowledged only once requested");
        }
        if self.finished && self.terminated_at.is_none() {
            return Some("a finished worker has terminatedAt set");
        }
        if self.finished && self.has_worker {
            return Some("a finished worker's goroutine has ended");
        }
        None
    }

    #[cold]
    #[inline(never)]
    fn invariants_broken(&self) {
        let rule = self
            .first_broken_rule()
            .expect("called only when a rule is broken");
        panic!("pod worker rule broken: {rule} ({})", self.fullname);
    }

    /// Termination is requested (`terminatingAt` is set): syncing -> terminating, once.
    pub(crate) fn request_termination(&mut self, now: SimTime) {
        assert!(
            self.work_type() == WorkType::Sync && !self.finished,
            "pod worker rule broken: termination is requested once, of a syncing worker; a \
             worker never goes back from terminated to terminating ({})",
            self.fullname
        );
        self.terminating_at = Some(now);
        assert!(
            self.work_type() == WorkType::Terminating,
            "pod worker rule broken: a termination request makes a worker terminating ({})",
            self.fullname
        );
        self.assert_invariants();
    }

    /// The worker starts (`startedAt` is set, once): it may run its first sync.
    pub(crate) fn mark_started(&mut self, now: SimTime) {
        assert!(
            !self.is_started() && !self.finished,
            "pod worker rule broken: a worker starts once, and never after it finished ({})",
            self.fullname
        );
        self.started_at = Some(now);
        assert!(
            self.is_started(),
            "pod worker rule broken: startedAt is set"
        );
        self.assert_invariants();
    }

    /// The worker acknowledges its termination (`startedTerminating`): from now on its
    /// containers are being stopped.
    pub(crate) fn acknowledge_termination(&mut self) {
        assert!(
            self.is_termination_requested(),
            "pod worker rule broken: termination is acknowledged only once requested ({})",
            self.fullname
        );
        self.started_terminating = true;
        assert!(self.is_termination_started());
        self.assert_invariants();
    }

    /// Terminating -> terminated (`terminatedAt` is set, once).
    pub(crate) fn mark_terminated(&mut self, now: SimTime) {
        assert!(
            self.work_type() == WorkType::Terminating && !self.finished,
            "pod worker rule broken: only a terminating worker becomes terminated, once ({})",
            self.fullname
        );
        self.terminated_at = Some(now);
        assert!(
            self.work_type() == WorkType::Terminated,
            "pod worker rule broken: terminatedAt makes a worker terminated ({})",
            self.fullname
        );
        self.assert_invariants();
    }

    /// A pod first seen with a terminal API phase and nothing running (issue 105523): the
    /// fresh record is terminated at once.
    pub(crate) fn terminate_on_first_sight(&mut self, now: SimTime) {
        assert!(
            self.terminating_at.is_none() && !self.is_started() && !self.has_worker,
            "pod worker rule broken: only a fresh record is terminated on first sight ({})",
            self.fullname
        );
        self.request_termination(now);
        self.acknowledge_termination();
        self.mark_terminated(now);
    }

    /// A terminated worker is finished (`completeTerminated`): its goroutine ends.
    pub(crate) fn mark_finished(&mut self) {
        assert!(
            self.is_terminated(),
            "pod worker rule broken: only a terminated worker finishes ({})",
            self.fullname
        );
        self.has_worker = false;
        self.finished = true;
        self.working = false;
        assert!(self.is_finished());
        self.assert_invariants();
    }

    /// `cleanupUnstartedPod`: a worker whose pod can never start finishes without a sync.
    /// Upstream logs a likely programmer error when termination was not requested, or when
    /// `terminatedAt` is already set; here the first is a broken rule, and a `terminatedAt`
    /// already set (a pod terminated on first sight) is kept, never moved.
    pub(crate) fn finish_unstarted(&mut self, now: SimTime) {
        assert!(
            self.is_termination_requested() && !self.is_started(),
            "pod worker rule broken: only an unstarted worker whose termination was requested \
             is cleaned up unstarted ({})",
            self.fullname
        );
        if !self.is_terminated() {
            self.mark_terminated(now);
        }
        self.mark_finished();
    }

    /// Set the grace period of the termination: at least 1 s, and once set it only
    /// shortens when `only_shortens` (switch `graceOverrideZeroHonoured`). Without the
    /// switch (v1.22 to v1.31, issue 115819) an explicit override of 0 falls back to the
    /// spec's terminationGracePeriodSeconds, which can lengthen the grace.
    pub(crate) fn set_grace_period(&mut self, g: i64, only_shortens: bool) {
        assert!(
            g >= 1,
            "pod worker rule broken: a termination's grace period is at least 1 s ({g}, {})",
            self.fullname
        );
        assert!(
            !only_shortens || self.grace_period == 0 || g <= self.grace_period,
            "pod worker rule broken: with graceOverrideZeroHonoured a termination's grace \
             period only shortens once set ({} -> {g}, {})",
            self.grace_period,
            self.fullname
        );
        self.grace_period = g;
    }

    /// `mergeLastUpdate`: fold an accepted update into `activeUpdate`.
    pub(in crate::kubelet) fn merge_last_update(&mut self, other: &UpdatePodOptions) {
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
            assign_shared(&mut active.pod, &other.pod);
        }
        assign_shared(&mut active.running_pod, &other.running_pod);
        if other.mirror.is_some() {
            assign_shared(&mut active.mirror, &other.mirror);
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

/// `*slot = from.clone()` for a shared object, skipping the count's increment and
/// decrement when the slot already holds the same object (a resync's update carries the
/// pod object the last update did).
fn assign_shared<T>(slot: &mut Option<std::sync::Arc<T>>, from: &Option<std::sync::Arc<T>>) {
    let same = match (&*slot, from) {
        (Some(a), Some(b)) => std::sync::Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    };
    if !same {
        slot.clone_from(from);
    }
}

#[cfg(test)]
mod tests {
    use super::assign_shared;
    use super::PodSyncStatus;
    use crate::sim::SimTime;
    use std::sync::Arc;

    #[test]
    fn the_combined_rule_test_agrees_with_the_rules_one_by_one() {
        for bits in 0..32u32 {
            let mut st = PodSyncStatus::new("p_default".into(), SimTime(0));
            let on = |i: u32| bits & (1 << i) != 0;
            st.terminating_at = on(0).then_some(SimTime(1));
            st.terminated_at = on(1).then_some(SimTime(2));
            st.started_terminating = on(2);
            st.finished = on(3);
            st.has_worker = on(4);
            let hold = st.invariants_hold();
            assert_eq!(hold, st.first_broken_rule().is_none(), "bits {bits:05b}");
            let panicked =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| st.assert_invariants()))
                    .is_err();
            assert_eq!(panicked, !hold, "bits {bits:05b}");
        }
    }

    #[test]
    fn assign_shared_gives_the_source_object_and_counts_it_once() {
        let (a, b) = (Arc::new(1), Arc::new(1));
        let mut slot = None;
        assign_shared(&mut slot, &Some(Arc::clone(&a)));
        assert!(slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, &a)));
        // The same object again: one count for the slot, as before.
        assign_shared(&mut slot, &Some(Arc::clone(&a)));
        assert_eq!(Arc::strong_count(&a), 2);
        // An equal but other object replaces it (by identity, not by value).
        assign_shared(&mut slot, &Some(Arc::clone(&b)));
        assert!(slot.as_ref().is_some_and(|s| Arc::ptr_eq(s, &b)));
        assert_eq!(Arc::strong_count(&a), 1);
        assign_shared(&mut slot, &None);
        assert!(slot.is_none());
        assert_eq!(Arc::strong_count(&b), 1);
    }

    #[test]
    fn the_watched_part_moves_only_with_termination() {
        use super::{PodSyncStatus, SimTime};
        use crate::kubelet::record_map::Watched;
        let mut st = Box::new(PodSyncStatus::new("p_default".into(), SimTime(0)));
        let fresh = st.watched();
        st.mark_started(SimTime(1));
        st.working = true;
        st.signalled = true;
        assert_eq!(st.watched(), fresh, "syncing fields leave it alone");
        st.request_termination(SimTime(2));
        let requested = st.watched();
        assert_ne!(requested, fresh);
        st.acknowledge_termination();
        assert_eq!(st.watched(), requested);
        st.mark_terminated(SimTime(3));
        assert!(st.watched() != requested && st.watched() != fresh);
    }
}
