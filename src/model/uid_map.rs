//! [`UidMap`]: a map keyed by [`PodUid`] whose look-ups index an array instead of
//! searching a tree, and whose walks still visit the keys in ascending order.
//!
//! UIDs are handed out in ascending order, so the live ones cluster: a run that churns
//! pods for hours keeps a few long-lived pods with low UIDs and the newest ones with high
//! UIDs. The map cuts the UID space into pages of 64 slots. A page exists only while one
//! of its slots is taken (so memory follows the live entries, plus one pointer per 64
//! UIDs below the highest), each page keeps a bit mask of its taken slots, and the
//! numbers of the pages that exist are kept sorted: a walk visits only those pages and,
//! in each, only the taken slots (cost proportional to the live entries, however many
//! UIDs died in between).
//!
//! A map keeps a page it emptied as a spare and takes it back for the next page it
//! needs: a set that empties and fills again over and over (the status manager's
//! candidate sets) then allocates and clears no page each time.

use crate::model::PodUid;
use std::fmt;

const SHIFT: u32 = 6;
const SLOTS: usize = 1 << SHIFT;
const MASK: u32 = (SLOTS as u32) - 1;

#[derive(Clone)]
struct Page<V> {
    /// Bit `i` set: slot `i` holds an entry.
    used: u64,
    slots: [Option<(PodUid, V)>; SLOTS],
}

impl<V> Page<V> {
    fn empty() -> Box<Self> {
        Box::new(Page {
            used: 0,
            slots: std::array::from_fn(|_| None),
        })
    }
}

/// A `PodUid`-keyed map with array look-ups and ascending-UID walks (see the module doc).
/// Its methods mirror those of `BTreeMap` that the kubelet uses.
#[derive(Clone)]
pub(crate) struct UidMap<V> {
    /// Page `p` holds UIDs `p * 64 .. p * 64 + 64`; `None` while all its slots are free.
    pages: Vec<Option<Box<Page<V>>>>,
    /// The numbers of the pages that exist, ascending.
    live: Vec<u32>,
    len: usize,
    /// An emptied page (every slot free, the mask clear), kept for the next insert that
    /// needs a page.
    spare: Option<Box<Page<V>>>,
}

impl<V> Default for UidMap<V> {
    fn default() -> Self {
        UidMap {
            pages: Vec::new(),
            live: Vec::new(),
            len: 0,
            spare: None,
        }
    }
}

impl<V: fmt::Debug> fmt::Debug for UidMap<V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<V: PartialEq> PartialEq for UidMap<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

#[inline]
fn split(uid: PodUid) -> (usize, usize) {
    ((uid.0 >> SHIFT) as usize, (uid.0 & MASK) as usize)
}

impl<V> UidMap<V> {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub(crate) fn get(&self, uid: &PodUid) -> Option<&V> {
        let (p, s) = split(*uid);
        match self.pages.get(p) {
            Some(Some(page)) => page.slots[s].as_ref().map(|(_, v)| v),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn get_mut(&mut self, uid: &PodUid) -> Option<&mut V> {
        let (p, s) = split(*uid);
        match self.pages.get_mut(p) {
            Some(Some(page)) => page.slots[s].as_mut().map(|(_, v)| v),
            _ => None,
        }
    }

    #[inline]
    pub(crate) fn contains_key(&self, uid: &PodUid) -> bool {
        self.get(uid).is_some()
    }

    /// Inline when the page exists (an index and a write); a page to make is out of line.
    #[inline]
    pub(crate) fn insert(&mut self, uid: PodUid, v: V) -> Option<V> {
        let (p, s) = split(uid);
        match self.pages.get_mut(p) {
            Some(Some(page)) => {
                let old = page.slots[s].replace((uid, v)).map(|(_, v)| v);
                if old.is_none() {
                    page.used |= 1 << s;
                    self.len += 1;
                }
                old
            }
            _ => {
                self.insert_in_new_page(uid, v);
                None
            }
        }
    }

    /// [`UidMap::insert`] for a UID whose page does not exist: make it (the spare if any).
    #[inline(never)]
    fn insert_in_new_page(&mut self, uid: PodUid, v: V) {
        let (p, s) = split(uid);
        if self.pages.len() <= p {
            self.pages.resize_with(p + 1, || None);
        }
        debug_assert!(self.pages[p].is_none(), "no page {p} yet");
        let at = self.live.partition_point(|&q| (q as usize) < p);
        self.live.insert(at, p as u32);
        let page = self.pages[p].insert(self.spare.take().unwrap_or_else(Page::empty));
        page.slots[s] = Some((uid, v));
        page.used = 1 << s;
        self.len += 1;
    }

    /// The entry of `uid`, inserted as `f()` if absent (`entry(uid).or_insert_with(f)`).
    pub(crate) fn get_or_insert_with(&mut self, uid: PodUid, f: impl FnOnce() -> V) -> &mut V {
        let (p, s) = split(uid);
        if !matches!(self.pages.get(p), Some(Some(page)) if page.used & (1 << s) != 0) {
            self.insert(uid, f());
        }
        let page = self.pages[p].as_mut().expect("the entry's page exists");
        &mut page.slots[s].as_mut().expect("the entry exists").1
    }

    /// Inline but for freeing an emptied page.
    #[inline]
    pub(crate) fn remove(&mut self, uid: &PodUid) -> Option<V> {
        let (p, s) = split(*uid);
        let page = self.pages.get_mut(p)?.as_mut()?;
        let (_, v) = page.slots[s].take()?;
        page.used &= !(1 << s);
        self.len -= 1;
        if page.used == 0 {
            self.drop_page(p);
        }
        Some(v)
    }

    /// Debug builds: the page list, the masks and the count agree with the slots. A
    /// walk of the live pages; `absent` also walks the whole page table to check that
    /// every page not listed is absent (costs one step per 64 UIDs below the highest).
    #[cfg(debug_assertions)]
    fn check(&self, absent: bool) {
        assert!(
            self.live.windows(2).all(|w| w[0] < w[1]),
            "live pages ascend"
        );
        assert_eq!(
            self.pages.len(),
            self.live.last().map_or(0, |&q| q as usize + 1),
            "no absent pages at the end"
        );
        if let Some(page) = &self.spare {
            assert_eq!(page.used, 0, "the spare page is empty");
            assert!(
                page.slots.iter().all(Option::is_none),
                "the spare page's slots"
            );
        }
        let mut n = 0;
        for &p in &self.live {
            let page = self.pages[p as usize]
                .as_ref()
                .expect("a listed page exists");
            assert!(page.used != 0, "page {p} is listed: not empty");
            for (s, slot) in page.slots.iter().enumerate() {
                let taken = page.used & (1 << s) != 0;
                assert_eq!(slot.is_some(), taken, "page {p} slot {s}: mask");
                if let Some((uid, _)) = slot {
                    assert_eq!(split(*uid), (p as usize, s), "an entry sits in its slot");
                }
            }
            n += page.used.count_ones() as usize;
        }
        assert_eq!(n, self.len, "the count of entries");
        if absent {
            let existing = self.pages.iter().filter(|p| p.is_some()).count();
            assert_eq!(existing, self.live.len(), "every existing page is listed");
        }
    }

    /// Free empty page `p` (and the trailing run of absent pages); the page becomes the
    /// spare if there is none.
    #[inline(never)]
    fn drop_page(&mut self, p: usize) {
        let page = self.pages[p].take();
        debug_assert!(page.as_ref().is_some_and(|pg| pg.used == 0));
        if self.spare.is_none() {
            self.spare = page;
        }
        let at = self.live.partition_point(|&q| (q as usize) < p);
        debug_assert_eq!(self.live.get(at), Some(&(p as u32)));
        self.live.remove(at);
        let keep = self.live.last().map_or(0, |&q| q as usize + 1);
        self.pages.truncate(keep);
    }

    /// Keep the entries `f` accepts, visited in ascending UID order.
    pub(crate) fn retain(&mut self, mut f: impl FnMut(&PodUid, &mut V) -> bool) {
        let mut emptied = Vec::new();
        for &p in &self.live {
            let page = self.pages[p as usize].as_mut().expect("a live page exists");
            let mut bits = page.used;
            while bits != 0 {
                let s = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let (uid, v) = page.slots[s].as_mut().expect("a used slot is taken");
                if !f(uid, v) {
                    page.slots[s] = None;
                    page.used &= !(1 << s);
                    self.len -= 1;
                }
            }
            if page.used == 0 {
                emptied.push(p as usize);
            }
        }
        for p in emptied {
            self.drop_page(p);
        }
    }

    /// The entries in ascending UID order.
    pub(crate) fn iter(&self) -> Iter<'_, V> {
        // A walk costs as much as this check: debug builds check at every walk.
        #[cfg(debug_assertions)]
        self.check(false);
        Iter::new(self)
    }

    pub(crate) fn keys(&self) -> Keys<'_, V> {
        self.iter().map(|(k, _)| k)
    }

    pub(crate) fn values(&self) -> Values<'_, V> {
        self.iter().map(|(_, v)| v)
    }
}

/// [`UidMap::keys`]' iterator.
pub(crate) type Keys<'a, V> = std::iter::Map<Iter<'a, V>, fn((&'a PodUid, &'a V)) -> &'a PodUid>;
/// [`UidMap::values`]' iterator.
pub(crate) type Values<'a, V> = std::iter::Map<Iter<'a, V>, fn((&'a PodUid, &'a V)) -> &'a V>;

/// [`UidMap::iter`]'s iterator (from both ends).
pub(crate) struct Iter<'a, V> {
    pages: &'a [Option<Box<Page<V>>>],
    /// The live pages neither end has reached.
    live: std::slice::Iter<'a, u32>,
    /// The page the front end is in, and its slots it has not visited yet.
    front: Option<&'a Page<V>>,
    front_bits: u64,
    /// The same for the back end.
    back: Option<&'a Page<V>>,
    back_bits: u64,
    /// Entries neither end has yielded.
    left: usize,
}

impl<'a, V> Iter<'a, V> {
    fn new(map: &'a UidMap<V>) -> Self {
        Iter {
            pages: &map.pages,
            live: map.live.iter(),
            front: None,
            front_bits: 0,
            back: None,
            back_bits: 0,
            left: map.len,
        }
    }

    #[inline]
    fn page(&self, p: u32) -> Option<&'a Page<V>> {
        self.pages[p as usize].as_deref()
    }

    #[inline]
    fn yielded(&mut self, page: Option<&'a Page<V>>, s: usize) -> Option<(&'a PodUid, &'a V)> {
        self.left -= 1;
        page?.slots[s].as_ref().map(|(k, v)| (k, v))
    }
}

impl<'a, V> Iterator for Iter<'a, V> {
    type Item = (&'a PodUid, &'a V);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.front_bits != 0 {
                let s = self.front_bits.trailing_zeros() as usize;
                self.front_bits &= self.front_bits - 1;
                return self.yielded(self.front, s);
            }
            match self.live.next() {
                Some(&p) => {
                    self.front = self.page(p);
                    self.front_bits = self.front.map_or(0, |pg| pg.used);
                }
                None => {
                    // Only the back end's page is left.
                    if self.back_bits == 0 {
                        return None;
                    }
                    let s = self.back_bits.trailing_zeros() as usize;
                    self.back_bits &= self.back_bits - 1;
                    return self.yielded(self.back, s);
                }
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<V> DoubleEndedIterator for Iter<'_, V> {
    fn next_back(&mut self) -> Option<Self::Item> {
        loop {
            if self.back_bits != 0 {
                let s = 63 - self.back_bits.leading_zeros() as usize;
                self.back_bits &= !(1 << s);
                return self.yielded(self.back, s);
            }
            match self.live.next_back() {
                Some(&p) => {
                    self.back = self.page(p);
                    self.back_bits = self.back.map_or(0, |pg| pg.used);
                }
                None => {
                    // Only the front end's page is left.
                    if self.front_bits == 0 {
                        return None;
                    }
                    let s = 63 - self.front_bits.leading_zeros() as usize;
                    self.front_bits &= !(1 << s);
                    return self.yielded(self.front, s);
                }
            }
        }
    }
}

impl<'a, V> IntoIterator for &'a UidMap<V> {
    type Item = (&'a PodUid, &'a V);
    type IntoIter = Iter<'a, V>;
    fn into_iter(self) -> Iter<'a, V> {
        self.iter()
    }
}

impl<V> std::ops::Index<&PodUid> for UidMap<V> {
    type Output = V;
    fn index(&self, uid: &PodUid) -> &V {
        self.get(uid).expect("no entry for this UID")
    }
}

impl<V> FromIterator<(PodUid, V)> for UidMap<V> {
    fn from_iter<I: IntoIterator<Item = (PodUid, V)>>(it: I) -> Self {
        let mut m = UidMap::new();
        for (k, v) in it {
            m.insert(k, v);
        }
        m
    }
}

/// A set of [`PodUid`]s on a [`UidMap`]: membership tests index an array, and walks
/// visit the members in ascending order, as a `BTreeSet`'s do. Its methods mirror those of
/// `BTreeSet` that the kubelet uses.
#[derive(Clone, Default, PartialEq)]
pub(crate) struct UidSet(UidMap<()>);

impl fmt::Debug for UidSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl UidSet {
    #[inline]
    pub(crate) fn contains(&self, uid: &PodUid) -> bool {
        self.0.contains_key(uid)
    }

    /// Whether `uid` was not a member yet.
    #[inline]
    pub(crate) fn insert(&mut self, uid: PodUid) -> bool {
        self.0.insert(uid, ()).is_none()
    }

    /// Whether `uid` was a member.
    #[inline]
    pub(crate) fn remove(&mut self, uid: &PodUid) -> bool {
        self.0.remove(uid).is_some()
    }

    /// Keep the members `f` accepts, visited in ascending order.
    pub(crate) fn retain(&mut self, mut f: impl FnMut(&PodUid) -> bool) {
        self.0.retain(|u, _| f(u));
    }

    /// The members in ascending order.
    pub(crate) fn iter(&self) -> Keys<'_, ()> {
        self.0.keys()
    }

    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

impl<'a> IntoIterator for &'a UidSet {
    type Item = &'a PodUid;
    type IntoIter = Keys<'a, ()>;
    fn into_iter(self) -> Keys<'a, ()> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A small deterministic generator (no dependency on the run's streams).
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn behaves_as_a_btree_map_under_churn() {
        let mut m: UidMap<u64> = UidMap::new();
        let mut b: BTreeMap<PodUid, u64> = BTreeMap::new();
        let mut x = 0x9e37_79b9_7f4a_7c15;
        let mut newest = 0u32;
        for step in 0..20_000u64 {
            let r = next(&mut x);
            match r % 5 {
                0 | 1 => {
                    newest += 1 + (r >> 8) as u32 % 3;
                    let u = PodUid(newest);
                    assert_eq!(m.insert(u, step), b.insert(u, step));
                }
                2 => {
                    let u = PodUid((r >> 8) as u32 % (newest + 1));
                    assert_eq!(m.insert(u, step), b.insert(u, step));
                }
                3 => {
                    // Remove mostly among the newer half: old pods live long.
                    let u = PodUid(newest / 2 + (r >> 8) as u32 % (newest / 2 + 1));
                    assert_eq!(m.remove(&u), b.remove(&u));
                }
                _ => {
                    let u = PodUid((r >> 8) as u32 % (newest + 2));
                    assert_eq!(m.get(&u), b.get(&u));
                    if r % 3 == 0 {
                        *m.get_or_insert_with(u, || 7) += 1;
                        *b.entry(u).or_insert_with(|| 7) += 1;
                    }
                    if let Some(v) = m.get_mut(&u) {
                        *v += 1;
                        *b.get_mut(&u).unwrap() += 1;
                    }
                    assert_eq!(m.contains_key(&u), b.contains_key(&u));
                    let back: Vec<_> = m.iter().rev().take(5).collect();
                    assert_eq!(back, b.iter().rev().take(5).collect::<Vec<_>>());
                    // Both ends meet in the middle without loss or repeat.
                    let (mut it, mut bt) = (m.iter(), b.iter());
                    for i in 0.. {
                        let (x, y) = if i % 3 == 0 {
                            (it.next_back(), bt.next_back())
                        } else {
                            (it.next(), bt.next())
                        };
                        assert_eq!(x, y);
                        if x.is_none() {
                            break;
                        }
                    }
                }
            }
            assert_eq!(m.len(), b.len());
            #[cfg(debug_assertions)]
            m.check(true);
            if step % 1000 == 0 {
                assert!(m.iter().eq(b.iter()));
                m.retain(|u, v| (u.0 + *v as u32) % 7 != 0);
                b.retain(|u, v| (u.0 + *v as u32) % 7 != 0);
                assert!(m.iter().eq(b.iter()));
                assert_eq!(m.iter().size_hint(), (b.len(), Some(b.len())));
            }
        }
        assert!(m.keys().eq(b.keys()));
        assert!(m.values().eq(b.values()));
    }

    #[test]
    fn pages_follow_the_live_entries() {
        let mut m: UidMap<u8> = UidMap::new();
        m.insert(PodUid(3), 0);
        for u in 64..100_000 {
            m.insert(PodUid(u), 1);
            m.remove(&PodUid(u));
        }
        assert_eq!(m.live, vec![0]);
        assert_eq!(m.pages.len(), 1, "trailing empty pages are freed");
        m.insert(PodUid(1 << 20), 2);
        assert_eq!(m.live, vec![0, (1 << 20) >> SHIFT]);
        assert_eq!(
            m.iter().collect::<Vec<_>>(),
            vec![(&PodUid(3), &0), (&PodUid(1 << 20), &2)]
        );
        m.remove(&PodUid(1 << 20));
        assert_eq!(m.pages.len(), 1);
        m.retain(|_, _| false);
        assert!(m.is_empty() && m.live.is_empty() && m.pages.is_empty());
    }

    #[test]
    fn a_set_behaves_as_a_btree_set() {
        let mut s = UidSet::default();
        let mut b = std::collections::BTreeSet::new();
        let mut x = 0x2545_f491_4f6c_dd1d;
        for _ in 0..5_000 {
            let r = next(&mut x);
            let u = PodUid((r >> 8) as u32 % 300);
            match r % 3 {
                0 => assert_eq!(s.insert(u), b.insert(u)),
                1 => assert_eq!(s.remove(&u), b.remove(&u)),
                _ => assert_eq!(s.contains(&u), b.contains(&u)),
            }
            assert_eq!(s.len(), b.len());
        }
        assert!(s.iter().eq(b.iter()));
        s.retain(|u| u.0 % 3 != 0);
        b.retain(|u| u.0 % 3 != 0);
        assert!((&s).into_iter().eq(&b));
        assert_eq!(format!("{s:?}"), format!("{b:?}"));
    }
}
