//! The event queue: a radix heap of (time, sequence, slot) keys, with cancellable timers and
//! a ready batch from which the scheduler picks among events due at the same instant.
//!
//! Time never goes back (an event is never scheduled before the instant last popped), so
//! the queue is a monotone priority queue and a radix heap fits it (Ahuja, Mehlhorn, Orlin,
//! Tarjan: "Faster Algorithms for the Shortest Path Problem", J. ACM 37(2), 1990), with
//! four-bit digits: a key's bucket is the four-bit level of the first bit in which its time
//! differs from `last` (the instant of the ready batch) and its digit there; the ready batch
//! holds the keys due exactly at `last`. A push is a bit scan and a `Vec` push; when the
//! ready batch runs dry, the lowest non-empty bucket is split at its earliest time, its
//! keys moving to lower levels. The binary heap it replaced cost about 200 instructions a
//! pop at 1,000 pending events.
//!
//! The ready batch keeps the order the binary heap gave it: the keys due at `last` in
//! sequence order, later pushes for the same instant appended, and the scheduler's pick
//! taken out with `swap_remove_back`: every scheduler sees the same batches, in the same
//! order, as before (`queue_ref`, the old queue, is the reference in the tests).

use super::scheduler::{Ready, Scheduler};
use super::time::SimTime;

/// Handle of a scheduled event; pass it to [`EventQueue::cancel`]. It names the event's
/// slot and sequence number: once the event has fired (or been cancelled) and its slot
/// holds another event, cancelling it again is a no-op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[must_use = "keep the timer key if the event may need cancelling"]
pub struct TimerKey {
    seq: u64,
    slot: u32,
}

/// A scheduled event's place in the queue: 16 bytes to move however large the event is;
/// the event waits in `slots[slot]`.
///
/// The sequence number and the slot share one word, the sequence number above
/// [`SLOT_BITS`] bits of slot: sequence numbers are unique, so the word orders keys as
/// their sequence numbers do. A run of this simulator stays far inside both bounds (the
/// million-pod run files about 12 M events in all, so fewer are ever pending at once);
/// the queue checks the first where it makes a new slot and the second where a key's
/// sequence number is read (see [`EventQueue::check_bounds`]), and stops with a message
/// rather than mix two keys up. The split saves a third of the bytes the radix buckets move.
#[derive(Clone, Copy, Debug)]
struct Key {
    at: SimTime,
    /// `seq << SLOT_BITS | slot`.
    tag: u64,
}

/// Bits of a [`Key`]'s word holding the slot: up to 16.7 M events pending at once, and
/// sequence numbers below 2^40 (1.1 trillion events scheduled in a run).
const SLOT_BITS: u32 = 24;

/// The first sequence number a [`Key`] cannot hold.
const SEQ_LIMIT: u64 = 1 << (64 - SLOT_BITS);

impl Key {
    #[inline]
    fn new(at: SimTime, seq: u64, slot: u32) -> Key {
        debug_assert!(
            seq < SEQ_LIMIT && (slot as u64) < 1 << SLOT_BITS,
            "a key holds sequence numbers below 2^{} and slots below 2^{SLOT_BITS}",
            64 - SLOT_BITS
        );
        let k = Key {
            at,
            tag: seq << SLOT_BITS | slot as u64,
        };
        debug_assert_eq!((k.seq(), k.slot()), (seq, slot), "a key packs losslessly");
        k
    }
    /// The key's sequence number.
    #[inline]
    fn seq(self) -> u64 {
        self.tag >> SLOT_BITS
    }
    /// The slot holding the key's event.
    #[inline]
    fn slot(self) -> u32 {
        (self.tag & ((1 << SLOT_BITS) - 1)) as u32
    }
}

/// An event slot: the sequence number of the key that owns it, and its event (`None` once
/// cancelled; the slot is freed when its key leaves the queue).
///
/// Aligned to a cache line: an event is read when it fires, usually long after it was
/// filed (a probe tick ten seconds later), when its slot has left the data cache; the
/// simulator's events with their sequence number fit one line, and an aligned slot never
/// straddles two (unaligned, the 56-byte slots of the kubelet's events did seven times in
/// eight).
#[derive(Clone, Debug)]
#[repr(align(64))]
struct Slot<E> {
    seq: u64,
    event: Option<E>,
}

/// The sequence number of a slot whose event is kept in hand (see [`EventQueue::keep_held`]): no
/// key has it, as sequence numbers count up from 0.
const HELD: u64 = u64::MAX;

/// Radix buckets: sixteen levels of four bits, sixteen digits each (see [`bucket_of`]).
const BUCKETS: usize = 256;

/// The bucket of a key due at `at` when the ready batch is at `last` (`at > last`): the
/// four-bit level of the first bit in which they differ, and the key's digit at that level.
/// Buckets in index order hold ever later keys; a split of one moves its keys at least
/// one level down, so a key moves at most 16 times, and it takes four-bit steps where
/// a bucket per bit would take one-bit steps (three moves a key were measured that way,
/// against about one and a half).
#[inline]
fn bucket_of(at: SimTime, last: SimTime) -> usize {
    let x = at.0 ^ last.0;
    debug_assert!(x != 0 && at > last);
    let level = (63 - x.leading_zeros()) / 4;
    let digit = (at.0 >> (4 * level)) & 15;
    (level as usize * 16 + digit as usize) & (BUCKETS - 1)
}

/// The ready batch: a `Vec` read from `head` (cheaper than a `VecDeque` for a batch that is
/// mostly one key), with `VecDeque`'s `pop_front` and `swap_remove_back` semantics.
#[derive(Clone, Debug, Default)]
struct Batch {
    keys: Vec<Key>,
    head: usize,
}

impl Batch {
    #[inline]
    fn len(&self) -> usize {
        self.keys.len() - self.head
    }
    #[inline]
    fn is_empty(&self) -> bool {
        self.keys.len() == self.head
    }
    #[inline]
    fn push_back(&mut self, k: Key) {
        self.keys.push(k);
    }
    fn live(&self) -> &[Key] {
        &self.keys[self.head..]
    }
    /// Takes out key `i` (from the front): the first, or any other with the last key
    /// moving into its place.
    #[inline]
    fn take(&mut self, i: usize) -> Key {
        let k = if i == 0 {
            let k = self.keys[self.head];
            self.head += 1;
            k
        } else {
            self.keys.swap_remove(self.head + i)
        };
        if self.head == self.keys.len() {
            self.keys.clear();
            self.head = 0;
        } else if self.head >= 1024 && self.head * 2 >= self.keys.len() {
            // A long instant: drop the consumed front now and then.
            self.keys.drain(..self.head);
            self.head = 0;
        }
        k
    }
    /// Every key, in order, leaving the batch empty.
    fn drain_all(&mut self) -> Vec<Key> {
        let keys = self.keys.split_off(self.head);
        self.keys.clear();
        self.head = 0;
        keys
    }
    fn retain(&mut self, f: impl FnMut(&Key) -> bool) {
        self.keys.drain(..self.head);
        self.head = 0;
        self.keys.retain(f);
    }
}

/// A bucket emptied by a split keeps its buffer for reuse up to this many keys; a larger one
/// (a burst, such as 100,000 pods created at once) is freed, so no bucket sits on a burst's
/// memory for the rest of the run.
const KEEP_CAPACITY: usize = 4096;

/// A deterministic event queue.
#[derive(Clone, Debug)]
pub struct EventQueue<E> {
    /// The instant of the ready batch; no key lies before it.
    last: SimTime,
    /// The keys due at `last`, in the order the scheduler sees them.
    ready: Batch,
    /// `buckets[b]`: the keys of bucket `b` (see [`bucket_of`]).
    buckets: Box<[Vec<Key>; BUCKETS]>,
    /// Bit `b % 64` of word `b / 64` set: `buckets[b]` is not empty.
    occupied: [u64; BUCKETS / 64],
    slots: Vec<Slot<E>>,
    free: Vec<u32>,
    next_seq: u64,
    /// Keys in the queue, cancelled ones included until they surface.
    len: usize,
    /// Cancelled keys still in the queue.
    cancelled: usize,
    /// Splits made (debug builds sample their cross-check by it).
    splits: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            last: SimTime::ZERO,
            ready: Batch::default(),
            buckets: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: [0; BUCKETS / 64],
            slots: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            len: 0,
            cancelled: 0,
            splits: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at `at`.
    ///
    /// The usual push (a later instant, a free slot, room in the key's bucket) is written
    /// with nothing to call, so it needs few registers saved; a push at the ready batch's
    /// instant, into a new slot or a full bucket takes [`EventQueue::push_any`], out of
    /// line. Both file the key in the same place with the same sequence number.
    pub fn push(&mut self, at: SimTime, event: E) -> TimerKey {
        if at > self.last {
            if let Some(&slot) = self.free.last() {
                let b = bucket_of(at, self.last);
                let keys = &mut self.buckets[b];
                // The key goes in first, right after the test of its room, so the `Vec`
                // push is seen to need no growth (and so no call).
                if keys.len() < keys.capacity() && (slot as usize) < self.slots.len() {
                    let seq = self.next_seq;
                    keys.push(Key::new(at, seq, slot));
                    self.occupied[b >> 6] |= 1 << (b & 63);
                    self.next_seq += 1;
                    self.free.pop();
                    let s = &mut self.slots[slot as usize];
                    debug_assert!(s.event.is_none(), "a free slot holds no event");
                    s.seq = seq;
                    // A free slot's event was taken: nothing to drop (see `push_any`).
                    std::mem::forget(s.event.replace(event));
                    self.len += 1;
                    return TimerKey { seq, slot };
                }
            }
        }
        self.push_any(at, event)
    }

    /// [`EventQueue::push`] in every case.
    #[inline(never)]
    fn push_any(&mut self, at: SimTime, event: E) -> TimerKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                debug_assert!(s.event.is_none(), "a free slot holds no event");
                s.seq = seq;
                // A free slot's event was taken: there is nothing to drop, so the new one
                // is written without looking at the old.
                std::mem::forget(s.event.replace(event));
                i
            }
            None => {
                self.slots.push(Slot {
                    seq,
                    event: Some(event),
                });
                // A key holds the slot in `SLOT_BITS` bits.
                assert!(
                    self.slots.len() <= 1 << SLOT_BITS,
                    "the event queue holds fewer than 2^{SLOT_BITS} pending events"
                );
                (self.slots.len() - 1) as u32
            }
        };
        self.len += 1;
        if at < self.last {
            self.rebase(at);
        }
        self.insert(Key::new(at, seq, slot));
        TimerKey { seq, slot }
    }

    /// File `k` (not before `last`) into the ready batch or its bucket.
    #[inline]
    fn insert(&mut self, k: Key) {
        if k.at == self.last {
            self.ready.push_back(k);
        } else {
            let b = bucket_of(k.at, self.last);
            self.buckets[b].push(k);
            self.occupied[b >> 6] |= 1 << (b & 63);
        }
    }

    /// A push before `last`: only after [`EventQueue::peek_time`] moved `last` ahead to the
    /// next instant without a pop (the run loop always pops what it peeked; a test may
    /// schedule at the current instant after peeking). Every key is filed again from `at`.
    #[cold]
    fn rebase(&mut self, at: SimTime) {
        let mut keys = self.ready.drain_all();
        for b in self.buckets.iter_mut() {
            keys.append(b);
        }
        self.occupied = [0; BUCKETS / 64];
        self.last = at;
        for k in keys {
            self.insert(k);
        }
    }

    /// Stops the run if a sequence number handed out does not fit a [`Key`]. Pushes skip
    /// the test: a key's slot survives a sequence number too large (it is cut off at the
    /// top), and only two readers look at a key's sequence number, the sort of a split's
    /// ready batch and a scheduler shown the sources, which test first.
    #[inline]
    fn check_bounds(&self) {
        assert!(
            self.next_seq <= SEQ_LIMIT,
            "the event queue files sequence numbers below 2^{} only",
            64 - SLOT_BITS
        );
    }

    /// Cancel a scheduled event. Cancelling an event that already fired is a no-op.
    pub fn cancel(&mut self, key: TimerKey) {
        if let Some(s) = self.slots.get_mut(key.slot as usize) {
            if s.seq == key.seq && s.event.take().is_some() {
                self.cancelled += 1;
            }
        }
    }

    /// Number of events still scheduled (cancelled ones included until they surface).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Time of the next event, if any.
    #[inline]
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if self.cancelled == 0 && !self.ready.is_empty() {
            return Some(self.last);
        }
        self.refill()
    }

    /// Drop cancelled keys from the ready batch and, while it is empty, split the lowest
    /// bucket at its earliest live time.
    fn refill(&mut self) -> Option<SimTime> {
        if self.cancelled != 0 {
            let (slots, free) = (&self.slots, &mut self.free);
            let before = self.ready.len();
            self.ready.retain(|k| {
                let live = slots[k.slot() as usize].event.is_some();
                if !live {
                    free.push(k.slot());
                }
                live
            });
            let dropped = before - self.ready.len();
            self.cancelled -= dropped;
            self.len -= dropped;
            if !self.ready.is_empty() {
                return Some(self.last);
            }
        }
        // The ready batch is empty (`peek_time` calls here with no cancelled key only
        // then): split until one split files a key, which fills it.
        debug_assert!(self.ready.is_empty());
        loop {
            let w = self.occupied.iter().position(|&w| w != 0)?;
            let b = (w * 64 + self.occupied[w].trailing_zeros() as usize) & (BUCKETS - 1);
            self.occupied[w] &= !(1 << (b & 63));
            if self.cancelled != 0 {
                let (slots, free) = (&self.slots, &mut self.free);
                let keys = &mut self.buckets[b];
                let before = keys.len();
                keys.retain(|k| {
                    let live = slots[k.slot() as usize].event.is_some();
                    if !live {
                        free.push(k.slot());
                    }
                    live
                });
                let dropped = before - keys.len();
                self.cancelled -= dropped;
                self.len -= dropped;
            }
            if self.split(b) {
                debug_assert!(!self.ready.is_empty());
                return Some(self.last);
            }
        }
    }

    /// Moves `last` to the earliest time in bucket `b` (the lowest non-empty one) and files
    /// the bucket's keys again: those due then into the ready batch (in sequence order),
    /// every other one into a lower bucket. Returns whether the bucket held a key (then
    /// the ready batch holds at least that one).
    #[inline]
    fn split(&mut self, b: usize) -> bool {
        let n = self.buckets[b].len();
        if n <= 1 {
            if n == 1 {
                // A lone key: it is the ready batch.
                let k = self.buckets[b][0];
                self.buckets[b].clear();
                self.last = k.at;
                self.ready.push_back(k);
            }
            if self.buckets[b].capacity() > KEEP_CAPACITY {
                self.buckets[b] = Vec::new();
            }
        } else {
            // The bucket is taken out while its keys are filed again (none of them goes back
            // into it), so the loop reads a plain slice, and its buffer is put back after.
            let mut keys = std::mem::take(&mut self.buckets[b]);
            let min = keys.iter().map(|k| k.at).min();
            self.last = min.expect("a non-empty bucket");
            // Every key of bucket `b` now lies in a lower level.
            for &k in &keys {
                self.insert(k);
            }
            keys.clear();
            if keys.capacity() <= KEEP_CAPACITY {
                // The slot holds the empty `Vec` `take` left: nothing to free.
                let left = std::mem::replace(&mut self.buckets[b], keys);
                debug_assert_eq!(left.capacity(), 0);
                std::mem::forget(left);
            }
            if self.ready.len() > 1 {
                self.check_bounds();
                self.ready.keys.sort_unstable_by_key(|k| k.tag);
            }
        }
        if n > 0 {
            self.splits += 1;
            #[cfg(debug_assertions)]
            self.check_split();
        }
        n > 0
    }

    /// Debug builds: after a split, the ready batch is what a scan of every key finds, the
    /// live keys due at the earliest time, in sequence order, and every key sits in the
    /// bucket of its first bit differing from `last`. Every split while the queue is small,
    /// then one split in 256 (a full scan a pop would make large runs quadratic).
    #[cfg(debug_assertions)]
    fn check_split(&self) {
        if self.len > 4096 && self.splits % 256 != 0 {
            return;
        }
        let live = |k: &&Key| self.slots[k.slot() as usize].event.is_some();
        let all = || {
            self.ready
                .live()
                .iter()
                .chain(self.buckets.iter().flatten())
        };
        let earliest = all().filter(live).map(|k| k.at).min();
        assert_eq!(
            earliest,
            Some(self.last),
            "radix queue: wrong earliest time"
        );
        let mut due: Vec<u64> = all()
            .filter(live)
            .filter(|k| k.at == self.last)
            .map(|k| k.seq())
            .collect();
        due.sort_unstable();
        let ready: Vec<u64> = self.ready.live().iter().map(|k| k.seq()).collect();
        assert_eq!(ready, due, "radix queue: wrong ready batch");
        for (b, keys) in self.buckets.iter().enumerate() {
            assert_eq!(
                (self.occupied[b >> 6] >> (b & 63)) & 1 == 1,
                !keys.is_empty(),
                "radix queue: occupancy bit {b}"
            );
            for k in keys {
                assert!(
                    k.at > self.last && bucket_of(k.at, self.last) == b,
                    "radix queue: key due at {} in the wrong bucket {b}",
                    k.at
                );
            }
        }
    }

    /// Remove and return the next event. Among events due at the same instant the
    /// scheduler chooses; events scheduled for that instant while it is being processed
    /// join the same choice.
    pub fn pop(&mut self, sched: &mut dyn Scheduler) -> Option<(SimTime, E)> {
        self.pop_with(sched, None)
    }

    /// [`EventQueue::pop`], telling a scheduler that asks for them the source of each
    /// ready event (`source`; without it, each event is its own source).
    pub fn pop_with<S: Scheduler + ?Sized>(
        &mut self,
        sched: &mut S,
        source: Option<fn(&E) -> u64>,
    ) -> Option<(SimTime, E)> {
        let at = self.peek_time()?;
        Some((at, self.pop_ready(sched, source)))
    }

    /// The scheduler's pick among the ready batch, right after [`EventQueue::peek_time`]
    /// said there is one (it has dropped the batch's cancelled keys). A lone event is not
    /// shown to the scheduler.
    pub(crate) fn pop_ready<S: Scheduler + ?Sized>(
        &mut self,
        sched: &mut S,
        source: Option<fn(&E) -> u64>,
    ) -> E {
        let slot = self.pop_held(sched, source);
        self.take_held(slot)
    }

    /// [`EventQueue::pop_ready`], leaving the picked event in its slot, "in hand": returns
    /// the slot. Before the next pop the caller either takes the event out
    /// ([`EventQueue::take_held`]) or files it again for a later time
    /// ([`EventQueue::refile`]): a periodic timer is then re-armed without moving its event
    /// out and back in. While in hand the slot is neither free nor named by a key (one
    /// kept in hand for a while is marked by [`EventQueue::keep_held`]).
    #[inline]
    pub(crate) fn pop_held<S: Scheduler + ?Sized>(
        &mut self,
        sched: &mut S,
        source: Option<fn(&E) -> u64>,
    ) -> u32 {
        let n = self.ready.len();
        let i = if n == 1 {
            0
        } else if sched.by_source() {
            self.check_bounds();
            let slots = &self.slots;
            let ready: Vec<Ready> = self
                .ready
                .live()
                .iter()
                .map(|k| Ready {
                    source: source.map_or(k.seq(), |f| {
                        f(slots[k.slot() as usize].event.as_ref().expect("live"))
                    }),
                    seq: k.seq(),
                })
                .collect();
            sched.choose_ready(&ready)
        } else {
            sched.choose(n)
        };
        assert!(i < n, "the scheduler picked {i} of {n} ready events");
        let k = self.ready.take(i);
        debug_assert_eq!(self.slots[k.slot() as usize].seq, k.seq());
        self.len -= 1;
        k.slot()
    }

    /// The event in hand in `slot` (see [`EventQueue::pop_held`]).
    #[inline]
    pub(crate) fn held(&self, slot: u32) -> &E {
        self.slots[slot as usize]
            .event
            .as_ref()
            .expect("a live event in the ready batch")
    }

    /// The event in hand in `slot` stays there while it is handled, to be filed again
    /// ([`EventQueue::refile`]) or taken out after ([`EventQueue::take_held`]): its key's
    /// sequence number is forgotten, so the key cannot cancel it meanwhile.
    #[inline]
    pub(crate) fn keep_held(&mut self, slot: u32) {
        self.slots[slot as usize].seq = HELD;
    }

    /// Takes the event in hand in `slot` out of the queue; the slot is free again.
    #[inline]
    pub(crate) fn take_held(&mut self, slot: u32) -> E {
        let e = self.slots[slot as usize]
            .event
            .take()
            .expect("a live event in the ready batch");
        self.free.push(slot);
        e
    }

    /// Files the event in hand in `slot` again, due at `at`: the same key, sequence number
    /// and place a [`EventQueue::push`] of it at this point would give (the slot aside,
    /// which orders nothing).
    ///
    /// As in [`EventQueue::push`], the usual case (a later instant, room in the key's
    /// bucket) calls nothing; the others take [`EventQueue::refile_any`], out of line.
    pub(crate) fn refile(&mut self, slot: u32, at: SimTime) -> TimerKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.len += 1;
        let s = &mut self.slots[slot as usize];
        debug_assert_eq!(s.seq, HELD, "slot {slot} holds no event in hand");
        debug_assert!(s.event.is_some(), "an event in hand");
        s.seq = seq;
        if at > self.last {
            let b = bucket_of(at, self.last);
            let keys = &mut self.buckets[b];
            if keys.len() < keys.capacity() {
                keys.push(Key::new(at, seq, slot));
                self.occupied[b >> 6] |= 1 << (b & 63);
                return TimerKey { seq, slot };
            }
        }
        self.refile_any(at, seq, slot);
        TimerKey { seq, slot }
    }

    /// [`EventQueue::refile`]'s filing of its key in every case.
    #[inline(never)]
    fn refile_any(&mut self, at: SimTime, seq: u64, slot: u32) {
        if at < self.last {
            self.rebase(at);
        }
        self.insert(Key::new(at, seq, slot));
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
