//! The event queue: a min-heap ordered by (time, sequence number), with cancellable timers
//! and a ready batch from which the scheduler picks among events due at the same instant.

use super::scheduler::{Ready, Scheduler};
use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap, VecDeque};

/// Handle of a scheduled event; pass it to [`EventQueue::cancel`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[must_use = "keep the timer key if the event may need cancelling"]
pub struct TimerKey(pub u64);

/// A scheduled event in the ready batch.
#[derive(Clone, Debug)]
struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

/// The heap holds only (time, sequence, slot): 24 bytes to move per sift step however
/// large the event is; the event waits in `slots[slot]`.
#[derive(Clone, Copy, Debug)]
struct Key {
    at: SimTime,
    seq: u64,
    slot: u32,
}

impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Key {
    /// (time, sequence) as one number: one wide comparison instead of two.
    #[inline]
    fn order(&self) -> u128 {
        (u128::from(self.at.0) << 64) | u128::from(self.seq)
    }
}

impl Ord for Key {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) on top.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.order().cmp(&self.order())
    }
}

/// A deterministic event queue.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Key>,
    /// Events of the heap's keys, by slot; `free` lists the empty slots.
    slots: Vec<Option<E>>,
    free: Vec<u32>,
    /// Events due at `ready_at`, in sequence order; the scheduler picks one at a time.
    ready: VecDeque<Entry<E>>,
    ready_at: SimTime,
    next_seq: u64,
    cancelled: BTreeSet<u64>,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            ready: VecDeque::new(),
            ready_at: SimTime::ZERO,
            next_seq: 0,
            cancelled: BTreeSet::new(),
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at `at`.
    pub fn push(&mut self, at: SimTime, event: E) -> TimerKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(event);
                i
            }
            None => {
                self.slots.push(Some(event));
                u32::try_from(self.slots.len() - 1).expect("fewer than 2^32 pending events")
            }
        };
        self.heap.push(Key { at, seq, slot });
        TimerKey(seq)
    }

    /// Take the event of a popped key and free its slot.
    fn take(&mut self, k: Key) -> E {
        self.free.push(k.slot);
        self.slots[k.slot as usize].take().expect("occupied slot")
    }

    /// Cancel a scheduled event. Cancelling an event that already fired is a no-op.
    pub fn cancel(&mut self, key: TimerKey) {
        if key.0 < self.next_seq {
            self.cancelled.insert(key.0);
        }
    }

    /// Number of events still scheduled (cancelled ones included until they surface).
    pub fn len(&self) -> usize {
        self.heap.len() + self.ready.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.drop_cancelled_ready();
        if !self.ready.is_empty() {
            return Some(self.ready_at);
        }
        loop {
            let top = *self.heap.peek()?;
            if !self.cancelled.is_empty() && self.cancelled.remove(&top.seq) {
                self.heap.pop();
                drop(self.take(top));
                continue;
            }
            return Some(top.at);
        }
    }

    fn drop_cancelled_ready(&mut self) {
        if self.cancelled.is_empty() {
            return;
        }
        let cancelled = &mut self.cancelled;
        self.ready.retain(|e| !cancelled.remove(&e.seq));
    }

    /// Remove and return the next event. Among events due at the same instant the
    /// scheduler chooses; events scheduled for that instant while it is being processed
    /// join the same choice.
    pub fn pop(&mut self, sched: &mut dyn Scheduler) -> Option<(SimTime, E)> {
        self.pop_with(sched, None)
    }

    /// [`EventQueue::pop`], telling a scheduler that asks for them the source of each
    /// ready event (`source`; without it, each event is its own source).
    pub fn pop_with(
        &mut self,
        sched: &mut dyn Scheduler,
        source: Option<fn(&E) -> u64>,
    ) -> Option<(SimTime, E)> {
        let at = self.peek_time()?;
        if self.ready.is_empty() {
            // `peek_time` left the live earliest key on top. The common case is a lone event
            // at its instant: no batch, no choice (the scheduler is not asked about one).
            let top = self.heap.pop().expect("peeked");
            let event = self.take(top);
            self.ready_at = at;
            if self.heap.peek().is_none_or(|k| k.at != at) {
                return Some((at, event));
            }
            self.ready.push_back(Entry {
                at,
                seq: top.seq,
                event,
            });
        }
        // Gather every live event due at `at` into the ready batch.
        while let Some(&top) = self.heap.peek() {
            if top.at != at {
                break;
            }
            self.heap.pop();
            let event = self.take(top);
            if !self.cancelled.is_empty() && self.cancelled.remove(&top.seq) {
                continue;
            }
            self.ready.push_back(Entry {
                at: top.at,
                seq: top.seq,
                event,
            });
        }
        self.ready_at = at;
        let n = self.ready.len();
        debug_assert!(n > 0);
        let i = if n == 1 {
            0
        } else if sched.by_source() {
            let ready: Vec<Ready> = self
                .ready
                .iter()
                .map(|e| Ready {
                    source: source.map_or(e.seq, |f| f(&e.event)),
                    seq: e.seq,
                })
                .collect();
            sched.choose_ready(&ready)
        } else {
            sched.choose(n)
        };
        let e = if i == 0 {
            self.ready.pop_front()
        } else {
            self.ready.swap_remove_back(i)
        }
        .expect("index in range");
        Some((e.at, e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::scheduler::{Fifo, RandomOrder};

    #[test]
    fn pops_in_time_then_sequence_order_with_fifo() {
        let mut q = EventQueue::new();
        let _ = q.push(SimTime(5), "c");
        let _ = q.push(SimTime(1), "a");
        let _ = q.push(SimTime(5), "d");
        let _ = q.push(SimTime(2), "b");
        let mut s = Fifo;
        let got: Vec<_> = std::iter::from_fn(|| q.pop(&mut s))
            .map(|(_, e)| e)
            .collect();
        assert_eq!(got, vec!["a", "b", "c", "d"]);
    }

    #[test]
    fn matches_a_time_then_sequence_min_heap_on_random_schedules() {
        use crate::sim::Stream;
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut rng = Stream::new(7, "queue-test");
        let mut q = EventQueue::new();
        let mut model = BinaryHeap::new();
        let (mut s, mut now, mut id, mut popped) = (Fifo, 0u64, 0u64, 0);
        for _ in 0..20_000 {
            // Pushes at the current instant, near it and far ahead.
            for _ in 0..rng.below(3) {
                let at = now
                    + match rng.below(4) {
                        0 => 0,
                        1 => rng.below(16),
                        2 => rng.below(1 << 20),
                        _ => rng.below(1 << 40),
                    };
                let _ = q.push(SimTime(at), id);
                model.push(Reverse((at, id)));
                id += 1;
            }
            let got = q.pop(&mut s).map(|(t, e)| (t.0, e));
            assert_eq!(got, model.pop().map(|Reverse(k)| k));
            if let Some((t, _)) = got {
                now = t;
                popped += 1;
            }
        }
        assert!(popped > 10_000 && q.len() == model.len());
    }

    #[test]
    fn a_push_before_a_peeked_instant_still_comes_first() {
        let mut q = EventQueue::new();
        let _ = q.push(SimTime(1000), "late");
        assert_eq!(q.peek_time(), Some(SimTime(1000)));
        let _ = q.push(SimTime(10), "early");
        let _ = q.push(SimTime(10), "early2");
        let mut s = Fifo;
        let got: Vec<_> = std::iter::from_fn(|| q.pop(&mut s)).collect();
        assert_eq!(
            got,
            vec![
                (SimTime(10), "early"),
                (SimTime(10), "early2"),
                (SimTime(1000), "late")
            ]
        );
    }

    #[test]
    fn cancelled_events_never_fire() {
        let mut q = EventQueue::new();
        let k = q.push(SimTime(1), 1);
        let _ = q.push(SimTime(2), 2);
        q.cancel(k);
        let mut s = Fifo;
        assert_eq!(q.pop(&mut s), Some((SimTime(2), 2)));
        assert_eq!(q.pop(&mut s), None);
    }

    #[test]
    fn random_order_permutes_same_instant_but_keeps_time_order() {
        let mut seen_orders = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let mut q = EventQueue::new();
            for i in 0..4 {
                let _ = q.push(SimTime(1), i);
            }
            let _ = q.push(SimTime(0), 99);
            let _ = q.push(SimTime(2), 100);
            let mut s = RandomOrder::new(seed);
            let got: Vec<_> = std::iter::from_fn(|| q.pop(&mut s))
                .map(|(_, e)| e)
                .collect();
            assert_eq!(got[0], 99);
            assert_eq!(got[5], 100);
            seen_orders.insert(got);
        }
        assert!(seen_orders.len() > 1, "random scheduler never reordered");
    }

    #[test]
    fn pct_sees_sources_and_keeps_one_sources_events_in_order() {
        use crate::sim::scheduler::Pct;
        // Events (source, n): each source's events must come out in scheduling order.
        let mut orders = std::collections::BTreeSet::new();
        for seed in 0..20 {
            let mut q = EventQueue::new();
            for n in 0..3 {
                for src in 0..3u64 {
                    let _ = q.push(SimTime(1), (src, n));
                }
            }
            let mut s = Pct::new(seed, 2, 4);
            let got: Vec<_> = std::iter::from_fn(|| q.pop_with(&mut s, Some(|e| e.0)))
                .map(|(_, e)| e)
                .collect();
            for src in 0..3 {
                let mine: Vec<_> = got.iter().filter(|e| e.0 == src).map(|e| e.1).collect();
                assert_eq!(mine, vec![0, 1, 2]);
            }
            orders.insert(got);
        }
        assert!(orders.len() > 1);
    }
}
