//! Unit tests of the radix-heap event queue, kept beside it.

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

/// A periodic event filed again from the queue's hand (`pop_held`, `keep_held`,
/// `refile`) comes out exactly where a fresh push of it would, under the random
/// scheduler too (same-instant ties go by sequence number, which `refile` hands out as
/// a push would): a twin queue that pops, pushes and cancels the plain way gives the
/// same events in the same order. A key of the held event's previous filing cancels
/// nothing while it is in hand.
#[test]
fn an_event_filed_again_from_the_hand_pops_as_a_fresh_push_would() {
    use crate::sim::Stream;
    for seed in 0..4 {
        let mut rng = Stream::new(seed, "refile-test");
        let (mut plain, mut held) = (EventQueue::new(), EventQueue::new());
        let (mut sp, mut sh) = (RandomOrder::new(seed), RandomOrder::new(seed));
        // (id, period): period 0 is a one-shot event.
        let mut keys: Vec<(TimerKey, TimerKey)> = Vec::new();
        let (mut id, mut refiled) = (0u64, 0);
        for period in [0, 10, 1_000, 1 << 20] {
            let _ = plain.push(SimTime(0), (id, period));
            let _ = held.push(SimTime(0), (id, period));
            id += 1;
        }
        for _ in 0..20_000 {
            let Some(at) = plain.peek_time() else { break };
            assert_eq!(held.peek_time(), Some(at));
            let (_, e) = plain.pop(&mut sp).unwrap();
            let slot = held.pop_held(&mut sh, None);
            assert_eq!(*held.held(slot), e, "at {at}");
            held.keep_held(slot);
            // A kept key is cancelled in both queues: a live one drops its event in
            // both; one of the event just popped (its earlier filing) drops nothing,
            // in the plain queue because the event left, in the other because a slot
            // in hand answers to no key.
            if !keys.is_empty() && rng.below(4) == 0 {
                let i = rng.below(keys.len() as u64) as usize;
                let (kp, kh) = keys.swap_remove(i);
                plain.cancel(kp);
                held.cancel(kh);
            }
            assert!(held.held(slot) == &e, "the event in hand was cancelled");
            // New events, some periodic, at this instant, near it and far ahead.
            for _ in 0..rng.below(3) {
                let d = [0, 1 + rng.below(16), rng.below(1 << 30)][rng.below(3) as usize];
                let period = [0, 1 + rng.below(1 << 20)][rng.below(2) as usize];
                let ev = (id, period);
                id += 1;
                let kp = plain.push(SimTime(at.0 + d), ev);
                let kh = held.push(SimTime(at.0 + d), ev);
                keys.push((kp, kh));
            }
            if e.1 > 0 && rng.below(8) != 0 {
                let next = SimTime(at.0 + [0, e.1][rng.below(2) as usize]);
                let kp = plain.push(next, e);
                let kh = held.refile(slot, next);
                keys.push((kp, kh));
                refiled += 1;
            } else {
                assert_eq!(held.take_held(slot), e);
            }
            assert_eq!(plain.len(), held.len());
        }
        assert!(
            refiled > 1_000,
            "seed {seed}: only {refiled} events filed again"
        );
        let rest = |q: &mut EventQueue<(u64, u64)>, s: &mut RandomOrder| {
            std::iter::from_fn(|| q.pop(s))
                .take(1_000)
                .collect::<Vec<_>>()
        };
        assert_eq!(rest(&mut plain, &mut sp), rest(&mut held, &mut sh));
    }
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

/// Drives the radix queue and the old binary-heap queue (`queue_ref`) with the same
/// pushes, cancels, peeks and pops, each with its own copy of scheduler `mk(seed)`, and
/// checks every pop returns the same (time, event).
fn same_as_reference<S: Scheduler>(seed: u64, mk: impl Fn(u64) -> S, by_source: bool) {
    use crate::sim::queue_ref;
    use crate::sim::Stream;
    type SourceOf = fn(&(u64, u64)) -> u64;
    let source: Option<SourceOf> = if by_source { Some(|e| e.0) } else { None };
    let mut rng = Stream::new(seed, "queue-ref-test");
    let (mut q, mut r) = (EventQueue::new(), queue_ref::EventQueue::new());
    let (mut sq, mut sr) = (mk(seed), mk(seed));
    let mut keys: Vec<(TimerKey, queue_ref::TimerKey)> = Vec::new();
    let (mut now, mut id, mut pops, mut batches) = (0u64, 0u64, 0, 0);
    for _ in 0..6_000 {
        for _ in 0..rng.below(4) {
            let at = now
                + match rng.below(6) {
                    0 | 1 => 0,
                    2 => rng.below(4),
                    3 => rng.below(1 << 12),
                    4 => rng.below(1 << 30),
                    _ => rng.below(1 << 50),
                };
            let ev = (rng.below(5), id);
            id += 1;
            keys.push((q.push(SimTime(at), ev), r.push(SimTime(at), ev)));
        }
        if !keys.is_empty() && rng.below(5) == 0 {
            // Any key: pending, fired or already cancelled.
            let (a, b) = keys[rng.below(keys.len() as u64) as usize];
            q.cancel(a);
            r.cancel(b);
        }
        if rng.below(8) == 0 {
            // Peek, then schedule at the current instant (before the peeked one).
            assert_eq!(q.peek_time(), r.peek_time());
            let ev = (rng.below(5), id);
            id += 1;
            keys.push((q.push(SimTime(now), ev), r.push(SimTime(now), ev)));
        }
        let got = q.pop_with(&mut sq, source);
        let want = r.pop_with(&mut sr, source);
        assert_eq!(got, want, "seed {seed}, pop {pops}");
        if let Some((t, _)) = got {
            batches += usize::from(t.0 == now);
            now = t.0;
            pops += 1;
        }
    }
    while let Some(want) = r.pop_with(&mut sr, source) {
        assert_eq!(q.pop_with(&mut sq, source), Some(want));
    }
    assert_eq!(q.pop_with(&mut sq, source), None);
    assert!(
        pops > 3_000 && batches > 500,
        "{pops} pops, {batches} same-instant"
    );
}

#[test]
fn picks_exactly_what_the_binary_heap_queue_picked() {
    use crate::sim::scheduler::Pct;
    for seed in 1..4 {
        same_as_reference(seed, |_| Fifo, false);
        same_as_reference(seed, RandomOrder::new, false);
        same_as_reference(seed, |s| Pct::new(s, 3, 200), true);
        same_as_reference(seed, |s| Pct::new(s, 2, 50), false);
    }
}

#[test]
fn a_fired_events_key_cancels_nothing_after_its_slot_is_reused() {
    let mut q = EventQueue::new();
    let mut s = Fifo;
    let k = q.push(SimTime(1), "a");
    assert_eq!(q.pop(&mut s), Some((SimTime(1), "a")));
    let _ = q.push(SimTime(2), "b"); // reuses the slot of "a"
    q.cancel(k);
    q.cancel(k);
    assert_eq!(q.pop(&mut s), Some((SimTime(2), "b")));
    assert!(q.is_empty());
}

#[test]
fn cancelling_the_whole_ready_batch_moves_on_to_the_next_instant() {
    let mut q = EventQueue::new();
    let mut s = RandomOrder::new(3);
    let a = q.push(SimTime(5), 1);
    let b = q.push(SimTime(5), 2);
    let _ = q.push(SimTime(9), 3);
    assert_eq!(q.peek_time(), Some(SimTime(5)));
    q.cancel(a);
    q.cancel(b);
    assert_eq!(q.len(), 3);
    assert_eq!(q.pop(&mut s), Some((SimTime(9), 3)));
    assert_eq!((q.len(), q.pop(&mut s)), (0, None));
}

/// A key's word gives back its sequence number and slot at both ends of their ranges,
/// and orders keys as their sequence numbers do.
#[test]
fn a_key_packs_its_sequence_number_and_slot_into_one_word() {
    let top = (1u32 << SLOT_BITS) - 1;
    let keys = [
        (0, 0),
        (0, top),
        (1, 0),
        (12_345, 678),
        (SEQ_LIMIT - 1, top),
    ];
    for (seq, slot) in keys {
        let k = Key::new(SimTime(seq ^ 7), seq, slot);
        assert_eq!((k.at, k.seq(), k.slot()), (SimTime(seq ^ 7), seq, slot));
    }
    // Sequence numbers are unique: from the second key on they are.
    for w in keys[1..].windows(2) {
        let (a, b) = (
            Key::new(SimTime(0), w[0].0, w[0].1),
            Key::new(SimTime(0), w[1].0, w[1].1),
        );
        assert_eq!(a.tag.cmp(&b.tag), a.seq().cmp(&b.seq()));
    }
    assert_eq!(std::mem::size_of::<Key>(), 16);
}

/// Past 2^40 sequence numbers the queue stops where a key's sequence number would
/// order a ready batch, rather than order it wrongly.
#[test]
#[should_panic(expected = "sequence numbers below 2^40")]
fn too_many_sequence_numbers_stop_the_run() {
    let mut q = EventQueue::new();
    q.next_seq = SEQ_LIMIT;
    let _ = q.push(SimTime(5), 1);
    let _ = q.push(SimTime(5), 2);
    let _ = q.peek_time();
}

/// The debug cross-check catches a split that filed a key in the wrong bucket.
#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "radix queue")]
fn the_debug_check_catches_a_misfiled_key() {
    let mut q = EventQueue::new();
    let _ = q.push(SimTime(8), 1);
    let _ = q.push(SimTime(12), 2);
    // Corrupt: move the key due at 12 into the bucket of a much later time.
    let k = q.buckets[12].pop().expect("level 0, digit 12");
    q.buckets[200].push(k);
    q.occupied[3] |= 1 << (200 - 192);
    let mut s = Fifo;
    let _ = q.pop(&mut s); // splits bucket 8, then checks them all
    let _ = q.pop(&mut s);
}
