//! What watches a run's trace: the invariant oracle and, when an output asks for them, a
//! tap that keeps the typed transitions until the event loop hands them out. Neither
//! touches the hash.
//!
//! While the event loop runs ([`Watch::begin_deferring`] .. [`Watch::end_deferring`]), the
//! oracle does not look at each transition as it is emitted: the transitions are held, in
//! trace order, and the oracle takes them [`BATCH`] at a time. Nothing reads the oracle
//! while the loop runs (its findings are read once the run has ended), so it reaches the
//! same findings, at the same times and in the same order; what changes is that the model's
//! code and the oracle's no longer alternate at every transition, pushing each other out of
//! the instruction cache. A transition the emitter gives up ([`Ctx::emit`], almost all of
//! them) is moved into the batch; one shown by reference is copied.
//!
//! [`Ctx::emit`]: crate::kubelet::Ctx::emit

use crate::model::Transition;
use crate::oracle::Oracle;
use crate::sim::trace::Observer;
use crate::sim::SimTime;

/// How many held transitions the oracle takes at a time (57 KiB of them). On the bench
/// node-hour, batches of 64 left a third of the instruction-cache misses the oracle added
/// when it ran inline, batches of 1,024 a sixth; the instructions hardly depend on it.
pub(crate) const BATCH: usize = 1024;

/// What watches the trace: the invariant oracle and, when an output asks for them, a tap
/// that keeps the typed transitions until the event loop hands them out. Dereferences to
/// the oracle (which must then have seen every transition: see [`Watch::end_deferring`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Watch {
    pub(crate) oracle: Oracle,
    pub(crate) tap: Option<Vec<(SimTime, Transition)>>,
    /// Transitions the oracle has not seen yet, in trace order (only while deferring).
    pending: Vec<(SimTime, Transition)>,
    /// Whether transitions are held for the oracle instead of shown to it at once.
    defer: bool,
}

impl Observer<Transition> for Watch {
    /// Without a tap and outside the event loop, the oracle's call is the last thing done:
    /// a tail call, so this keeps no frame of its own.
    #[inline]
    fn observe(&mut self, at: SimTime, rec: &Transition) {
        if self.defer {
            return self.hold_copy(at, rec);
        }
        if self.tap.is_some() {
            return self.observe_tapped(at, rec);
        }
        self.oracle.observe(at, rec);
    }

    /// While deferring, the transition joins the batch without a copy. (Inlined into the
    /// trace's `emit_owned`: one call from the emitter to here.)
    #[inline(always)]
    fn observe_owned(&mut self, at: SimTime, rec: Transition) {
        if self.defer {
            self.pending.push((at, rec));
            if self.pending.len() >= BATCH {
                self.flush();
            }
            return;
        }
        self.observe(at, &rec);
    }
}

impl Watch {
    /// A watch for `oracle`, with a tap when `tap`.
    pub(crate) fn new(oracle: Oracle, tap: bool) -> Self {
        Watch {
            oracle,
            tap: tap.then(Vec::new),
            pending: Vec::new(),
            defer: false,
        }
    }

    /// From now on, hold the transitions for the oracle and show them to it a batch at a
    /// time. Only when there is something to show them to (the oracle is on) and no tap
    /// (a tapped run keeps its transitions in step with the oracle, as before).
    pub(crate) fn begin_deferring(&mut self) {
        self.defer = self.oracle.is_on() && self.tap.is_none();
        if self.defer {
            self.pending.reserve_exact(BATCH);
        }
    }

    /// Show the oracle every held transition and stop holding them: after this the oracle
    /// has seen the whole trace so far, and may be read.
    pub(crate) fn end_deferring(&mut self) {
        self.flush();
        self.defer = false;
        self.pending = Vec::new();
    }

    /// Whether the oracle has seen every transition emitted so far.
    pub(crate) fn caught_up(&self) -> bool {
        self.pending.is_empty()
    }

    /// The oracle takes the held transitions, in order. (Read in place, then dropped
    /// together: not moved out one by one.)
    #[inline(never)]
    fn flush(&mut self) {
        for (at, rec) in &self.pending {
            self.oracle.observe(*at, rec);
        }
        self.pending.clear();
    }

    /// A transition shown by reference while deferring (one the world's runtime or API
    /// server keeps, or a fact shown outside the trace): held as a copy.
    #[inline(never)]
    fn hold_copy(&mut self, at: SimTime, rec: &Transition) {
        self.observe_owned(at, rec.clone());
    }

    /// [`Watch::observe`] with a tap: the oracle sees the transition, then the tap keeps it.
    #[cold]
    #[inline(never)]
    fn observe_tapped(&mut self, at: SimTime, rec: &Transition) {
        self.oracle.observe(at, rec);
        if let Some(t) = self.tap.as_mut() {
            t.push((at, rec.clone()));
        }
    }
}

impl std::ops::Deref for Watch {
    type Target = Oracle;
    fn deref(&self) -> &Oracle {
        debug_assert!(
            self.caught_up(),
            "the oracle read with transitions held back"
        );
        &self.oracle
    }
}

impl std::ops::DerefMut for Watch {
    fn deref_mut(&mut self) -> &mut Oracle {
        debug_assert!(
            self.caught_up(),
            "the oracle read with transitions held back"
        );
        &mut self.oracle
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PodUid, SyncKind};

    fn sync_begin(uid: u32, kind: SyncKind) -> Transition {
        Transition::SyncBegin {
            uid: PodUid(uid),
            kind,
            grace: None,
        }
    }

    /// Feeds the same transitions, owned and borrowed alternately, to a watch that defers
    /// and to one that does not; returns both.
    fn both(n: usize) -> (Watch, Watch) {
        let mut now = Watch::new(Oracle::new(), false);
        let mut later = Watch::new(Oracle::new(), false);
        later.begin_deferring();
        assert!(later.defer);
        for i in 0..n {
            let at = SimTime(i as u64 * 1_000);
            // A terminated pod's sync out of order: the oracle reports it.
            let t = sync_begin(1 + (i % 3) as u32, SyncKind::SyncTerminatedPod);
            now.observe(at, &t);
            if i % 2 == 0 {
                later.observe_owned(at, t);
            } else {
                later.observe(at, &t);
            }
        }
        (now, later)
    }

    #[test]
    fn deferred_transitions_reach_the_oracle_in_order_and_in_batches() {
        let (now, mut later) = both(BATCH + 5);
        // The first batch has been shown, the rest is held.
        assert_eq!(later.pending.len(), 5);
        assert!(!later.caught_up());
        later.end_deferring();
        assert!(later.caught_up());
        assert!(!later.defer);
        assert!(!now.findings().is_empty());
        assert_eq!(now.findings(), later.findings());
        // Outside the loop, a transition reaches the oracle at once.
        let t = sync_begin(9, SyncKind::SyncTerminatedPod);
        later.observe_owned(SimTime(1 << 40), t);
        assert!(later.caught_up());
    }

    #[test]
    fn no_deferring_without_an_oracle_or_with_a_tap() {
        let mut off = Watch::new(Oracle::default(), false);
        off.begin_deferring();
        assert!(!off.defer);
        off.observe_owned(SimTime(1), sync_begin(1, SyncKind::SyncPod));
        assert!(off.caught_up());
        let mut tapped = Watch::new(Oracle::new(), true);
        tapped.begin_deferring();
        assert!(!tapped.defer);
        tapped.observe_owned(SimTime(1), sync_begin(1, SyncKind::SyncPod));
        assert!(tapped.caught_up());
        assert_eq!(tapped.tap.as_ref().map(Vec::len), Some(1));
    }
}
