//! The kubelet's work queue (`pkg/kubelet/util/queue`), kept apart from the pod worker
//! record it serves.

use crate::model::uid_map::UidMap;
use crate::model::PodUid;
use crate::sim::SimTime;

/// The kubelet's `workQueue` (`pkg/kubelet/util/queue`): one due time per UID; `GetWork`
/// takes every UID that is due. `due` holds each UID's one entry; `by_time` is a min-heap
/// of (due time, UID) with lazy deletion: a replaced or removed entry stays in the heap
/// until its time passes and is then skipped (it no longer matches `due`), so an
/// `Enqueue` costs one map insert and one heap push instead of two search-tree updates.
/// `GetWork` pops in (time, UID) order, the order a sorted set of the live entries gives.
/// A heap entry is the pair packed into one integer ([`entry`]): time in the high bits,
/// UID in the low 32, so that the heap's many comparisons are one wide integer comparison
/// each instead of a pair's field-by-field one, in the same order.
///
/// A UID `GetWork` takes keeps its slot in `due`, marked [`TAKEN`]: its worker syncs it and
/// queues it again when the sync ends, and writing the time into a slot that exists costs
/// less than removing the key and inserting it again. Only [`WorkQueue::remove`] drops a
/// slot (the UID's record is forgotten).
#[derive(Clone, Debug, Default)]
pub(crate) struct WorkQueue {
    due: UidMap<SimTime>,
    by_time: std::collections::BinaryHeap<std::cmp::Reverse<u128>>,
}

/// A heap entry: (time, UID) packed so that integer order is the pair's order.
fn entry(at: SimTime, uid: PodUid) -> u128 {
    (u128::from(at.0) << 32) | u128::from(uid.0)
}

/// The (time, UID) of a heap entry.
fn unpack(e: u128) -> (SimTime, PodUid) {
    // Both casts keep exactly the bits `entry` put there.
    (SimTime((e >> 32) as u64), PodUid(e as u32))
}

/// The mark of a slot whose UID `GetWork` took (no due time; no heap entry has it).
const TAKEN: SimTime = SimTime(u64::MAX);

impl WorkQueue {
    /// `Enqueue(uid, delay)`: replaces any earlier entry for the UID.
    pub(crate) fn enqueue(&mut self, uid: PodUid, at: SimTime) {
        debug_assert!(at != TAKEN, "a due time is never the taken mark");
        let old = match self.due.get_mut(&uid) {
            Some(slot) => Some(std::mem::replace(slot, at)),
            None => self.due.insert(uid, at),
        };
        if old != Some(at) {
            self.by_time.push(std::cmp::Reverse(entry(at, uid)));
        }
    }
    pub(crate) fn remove(&mut self, uid: PodUid) {
        self.due.remove(&uid);
    }
    /// Drop `uid`'s slot if it is only marked taken (no due time: the same as no slot).
    pub(crate) fn drop_taken(&mut self, uid: PodUid) {
        if self.due.get(&uid) == Some(&TAKEN) {
            self.due.remove(&uid);
        }
    }
    /// `GetWork`: every UID due at or before `now`, removed from the queue, in due order,
    /// written to `out` (cleared first; a buffer the caller keeps).
    pub(crate) fn get_work_into(&mut self, now: SimTime, out: &mut Vec<PodUid>) {
        #[cfg(debug_assertions)]
        let expected = {
            let mut v: Vec<(SimTime, PodUid)> = self
                .due
                .iter()
                .filter(|(_, t)| **t <= now && **t != TAKEN)
                .map(|(u, t)| (*t, *u))
                .collect();
            v.sort();
            v.into_iter().map(|(_, u)| u).collect::<Vec<_>>()
        };
        out.clear();
        while let Some(&std::cmp::Reverse(e)) = self.by_time.peek() {
            let (t, uid) = unpack(e);
            if t > now {
                break;
            }
            self.by_time.pop();
            // A stale entry (replaced, removed, or already taken) is skipped; a live one is
            // marked taken on the same look-up of `due`.
            if let Some(slot) = self.due.get_mut(&uid) {
                if *slot == t {
                    *slot = TAKEN;
                    out.push(uid);
                }
            }
        }
        #[cfg(debug_assertions)]
        assert_eq!(
            *out, expected,
            "work queue rule broken: GetWork returns exactly the due UIDs in due order"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_work_into_clears_the_buffer_and_gives_due_uids_in_due_order() {
        let mut q = WorkQueue::default();
        q.enqueue(PodUid(3), SimTime(30));
        q.enqueue(PodUid(1), SimTime(10));
        q.enqueue(PodUid(2), SimTime(10));
        q.enqueue(PodUid(4), SimTime(50));
        // A replaced entry is due at its new time only; a removed one never.
        q.enqueue(PodUid(1), SimTime(20));
        q.enqueue(PodUid(5), SimTime(5));
        q.remove(PodUid(5));
        let mut out = vec![PodUid(99)];
        q.get_work_into(SimTime(30), &mut out);
        assert_eq!(out, [PodUid(2), PodUid(1), PodUid(3)]);
        q.get_work_into(SimTime(40), &mut out);
        assert!(out.is_empty());
        q.get_work_into(SimTime(50), &mut out);
        assert_eq!(out, [PodUid(4)]);
    }

    #[test]
    fn packed_entries_order_as_the_pairs_do() {
        let times = [
            0,
            1,
            2,
            u64::from(u32::MAX),
            1 << 40,
            u64::MAX - 1,
            u64::MAX,
        ];
        let uids = [0, 1, 7, u32::MAX - 1, u32::MAX];
        let pairs: Vec<(SimTime, PodUid)> = times
            .iter()
            .flat_map(|&t| uids.iter().map(move |&u| (SimTime(t), PodUid(u))))
            .collect();
        for &a in &pairs {
            assert_eq!(unpack(entry(a.0, a.1)), a);
            for &b in &pairs {
                assert_eq!(
                    entry(a.0, a.1).cmp(&entry(b.0, b.1)),
                    a.cmp(&b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn a_taken_uid_keeps_its_slot_and_is_due_again_only_when_queued_again() {
        let mut q = WorkQueue::default();
        q.enqueue(PodUid(1), SimTime(10));
        q.enqueue(PodUid(2), SimTime(10));
        let mut out = Vec::new();
        q.get_work_into(SimTime(10), &mut out);
        assert_eq!(out, [PodUid(1), PodUid(2)]);
        assert_eq!(q.due.get(&PodUid(1)), Some(&TAKEN));
        // A taken slot is never due, even at the end of time.
        q.get_work_into(SimTime(u64::MAX), &mut out);
        assert!(out.is_empty());
        // Queued again at the time it was taken at: due again (the slot's old time is
        // gone, so the heap gets the entry again).
        q.enqueue(PodUid(1), SimTime(10));
        q.enqueue(PodUid(2), SimTime(40));
        q.remove(PodUid(2));
        q.get_work_into(SimTime(50), &mut out);
        assert_eq!(out, [PodUid(1)]);
        assert_eq!(q.due.len(), 1);
        // Dropping a taken slot leaves a live one alone.
        q.enqueue(PodUid(3), SimTime(60));
        q.drop_taken(PodUid(1));
        q.drop_taken(PodUid(3));
        assert_eq!(q.due.len(), 1);
        q.get_work_into(SimTime(60), &mut out);
        assert_eq!(out, [PodUid(3)]);
    }
}
