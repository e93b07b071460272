//! The pods whose runtime state changed since the last relist: a list the calls append
//! to, sorted and stripped of repeats only when a relist reads it, instead of a search
//! tree that an insert walks (and the first insert after each relist allocates a node of).

use crate::model::PodUid;

/// Below this length the list grows without compacting first.
const COMPACT_FROM: usize = 64;

/// A list of UIDs with repeats allowed; [`Changed::take_sorted`] hands it out as a set.
#[derive(Clone, Debug, Default)]
pub(super) struct Changed(Vec<PodUid>);

impl Changed {
    /// Note a change of `uid`. A full list is compacted (sorted, repeats dropped) before it
    /// grows, so it holds at most about twice as many entries as distinct UIDs.
    #[inline]
    pub(super) fn insert(&mut self, uid: PodUid) {
        let v = &mut self.0;
        if v.last() == Some(&uid) {
            return;
        }
        if v.len() == v.capacity() && v.len() >= COMPACT_FROM {
            v.sort_unstable();
            v.dedup();
        }
        v.push(uid);
    }

    /// The noted UIDs, with `extra` added, sorted and without repeats (what the set held,
    /// in its order); the list is left empty.
    pub(super) fn take_sorted(&mut self, extra: impl IntoIterator<Item = PodUid>) -> Vec<PodUid> {
        let mut v = std::mem::take(&mut self.0);
        v.extend(extra);
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Give back a list [`Changed::take_sorted`] handed out, emptied, so the next notes
    /// reuse its allocation (unless it is large, or notes came in meanwhile).
    pub(super) fn recycle(&mut self, mut v: Vec<PodUid>) {
        if self.0.is_empty() && v.capacity() <= 1024 {
            v.clear();
            self.0 = v;
        }
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn taken_uids_are_the_set_of_the_notes() {
        let mut c = Changed::default();
        let mut set = BTreeSet::new();
        // A long walk with many repeats: the list compacts itself and stays bounded.
        let mut x = 7u32;
        for i in 0..5_000u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let uid = PodUid((x >> 16) % 40);
            c.insert(uid);
            set.insert(uid);
            assert!(c.len() <= 2 * 40 + COMPACT_FROM, "at {i}: {}", c.len());
            if i % 700 == 699 {
                let extra = [PodUid(3), PodUid(100)];
                set.extend(extra);
                let got = c.take_sorted(extra);
                let want: Vec<PodUid> = std::mem::take(&mut set).into_iter().collect();
                assert_eq!(got, want);
                c.recycle(got);
                assert_eq!(c.len(), 0);
            }
        }
        let want: Vec<PodUid> = set.into_iter().collect();
        assert_eq!(c.take_sorted([]), want);
    }

    #[test]
    fn a_list_given_back_is_reused_only_when_empty_and_small() {
        let mut c = Changed::default();
        c.recycle(Vec::with_capacity(16));
        assert_eq!(c.0.capacity(), 16);
        c.insert(PodUid(1));
        c.recycle(Vec::with_capacity(32));
        assert_eq!(c.take_sorted([]), vec![PodUid(1)]);
        c.recycle(Vec::with_capacity(4096));
        assert!(c.0.capacity() < 4096);
    }
}
