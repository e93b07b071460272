//! Dense storage for the runtime's records: container and sandbox IDs are handed out
//! sequentially from 1, so a vector indexed by ID holds them without a search tree's
//! per-entry overhead and half-filled nodes (the runtime keeps every container a run ever
//! created, for the run summary).

use crate::model::{ContainerId, SandboxId};
use std::marker::PhantomData;

/// An ID that names a slot of a [`Dense`] map.
pub(super) trait DenseId: Copy {
    fn slot(self) -> usize;
}

impl DenseId for ContainerId {
    fn slot(self) -> usize {
        self.0 as usize
    }
}

impl DenseId for SandboxId {
    fn slot(self) -> usize {
        self.0 as usize
    }
}

/// A map from sequential IDs to records, with the `BTreeMap` calls the runtime uses.
#[derive(Clone, Debug)]
pub(super) struct Dense<K, V> {
    slots: Vec<Option<V>>,
    _id: PhantomData<K>,
}

impl<K: DenseId, V> Default for Dense<K, V> {
    fn default() -> Self {
        Dense {
            slots: Vec::new(),
            _id: PhantomData,
        }
    }
}

impl<K: DenseId, V> Dense<K, V> {
    pub(super) fn get(&self, id: &K) -> Option<&V> {
        self.slots.get(id.slot()).and_then(Option::as_ref)
    }

    pub(super) fn get_mut(&mut self, id: &K) -> Option<&mut V> {
        self.slots.get_mut(id.slot()).and_then(Option::as_mut)
    }

    /// Room for IDs up to `n` without growing (doubling's slack is up to a record per ID).
    pub(super) fn reserve_ids(&mut self, n: usize) {
        self.slots
            .reserve_exact((n + 1).saturating_sub(self.slots.len()));
    }

    pub(super) fn insert(&mut self, id: K, v: V) {
        let i = id.slot();
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some(v);
    }

    pub(super) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.slots.iter_mut().filter_map(Option::as_mut)
    }
}

impl<K: DenseId, V> std::ops::Index<&K> for Dense<K, V> {
    type Output = V;
    fn index(&self, id: &K) -> &V {
        self.get(id).expect("no record with this ID")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_ids_and_absent_ids_are_none() {
        let mut d: Dense<ContainerId, &str> = Dense::default();
        d.insert(ContainerId(3), "c");
        d.insert(ContainerId(1), "a");
        assert_eq!(d.get(&ContainerId(1)), Some(&"a"));
        assert_eq!(d.get(&ContainerId(2)), None);
        assert_eq!(d.get(&ContainerId(9)), None);
        *d.get_mut(&ContainerId(3)).unwrap() = "z";
        assert_eq!(d[&ContainerId(3)], "z");
        assert_eq!(d.values_mut().count(), 2);
    }
}
