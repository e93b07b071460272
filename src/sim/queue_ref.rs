//! The event queue as it was before the radix heap (podsim 3e74bb1): a binary min-heap of
//! (time, sequence) keys, a `BTreeSet` of cancelled sequence numbers and a ready batch.
//! Test-only: the reference the radix-heap queue is compared against, pop for pop.

use crate::sim::scheduler::{Ready, Scheduler};
use crate::sim::time::SimTime;
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
