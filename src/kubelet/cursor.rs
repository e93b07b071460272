//! A forward-only lookup into a `BTreeMap` for keys asked in ascending order: walking
//! several UID-keyed maps side by side costs amortised O(1) per key instead of a tree
//! search each (the status manager's reconcile and admission's active-pod scan visit
//! every pod).

use std::collections::btree_map::Iter;
use std::collections::BTreeMap;
use std::iter::Peekable;

pub(crate) struct Cursor<'a, K, V> {
    it: Peekable<Iter<'a, K, V>>,
}

impl<'a, K: Ord, V> Cursor<'a, K, V> {
    pub(crate) fn new(map: &'a BTreeMap<K, V>) -> Self {
        Cursor {
            it: map.iter().peekable(),
        }
    }

    /// The value for `key`, as `map.get(key)` gives it, provided the keys asked of one
    /// cursor ascend strictly.
    pub(crate) fn seek(&mut self, key: &K) -> Option<&'a V> {
        while self.it.next_if(|(k, _)| *k < key).is_some() {}
        self.it.next_if(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::Cursor;
    use std::collections::BTreeMap;

    #[test]
    fn cursor_finds_what_get_finds_for_ascending_keys() {
        let map: BTreeMap<u32, char> = [(2, 'b'), (3, 'c'), (7, 'g'), (9, 'i')].into();
        let mut c = Cursor::new(&map);
        for k in [1, 2, 3, 5, 7, 8, 9, 10] {
            assert_eq!(c.seek(&k), map.get(&k), "key {k}");
        }
        let empty: BTreeMap<u32, char> = BTreeMap::new();
        assert_eq!(Cursor::new(&empty).seek(&1), None);
    }
}
