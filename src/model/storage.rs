//! Local storage and process figures of pods: how much disk, how many inodes and processes
//! a container uses (`behaviour`), its `ephemeral-storage` request and limit, and a pod's
//! `emptyDir` volumes with their `sizeLimit`. Each type hashes nothing when unset, so pods
//! that do not use them keep the trace hashes they had before they were modelled.

use crate::sim::Dur;
use std::hash::{Hash, Hasher};

/// A usage figure that may grow: `base`, plus `grow_by` at the end of every `every` since
/// the consumer started (`{growBy: Q, every: D}`; a plain quantity is `base` alone).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub base: u64,
    pub grow_by: u64,
    pub every: Dur,
}

impl Usage {
    /// A constant figure.
    pub fn fixed(base: u64) -> Self {
        Usage {
            base,
            grow_by: 0,
            every: Dur::ZERO,
        }
    }

    /// The figure `elapsed` after the consumer started.
    pub fn at(&self, elapsed: Dur) -> u64 {
        if self.grow_by == 0 || self.every == Dur::ZERO {
            return self.base;
        }
        let steps = elapsed.0 / self.every.0;
        self.base.saturating_add(self.grow_by.saturating_mul(steps))
    }

    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }
}

impl Hash for Usage {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if !self.is_zero() {
            (self.base, self.grow_by, self.every.0).hash(state);
        }
    }
}

/// A container's `resources.requests/limits["ephemeral-storage"]` in bytes (0: unset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EphemeralStorage {
    pub request: u64,
    pub limit: u64,
}

impl Hash for EphemeralStorage {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if *self != EphemeralStorage::default() {
            (self.request, self.limit).hash(state);
        }
    }
}

/// One `emptyDir` volume of a pod: its name and `sizeLimit` in bytes, if set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EmptyDir {
    pub name: String,
    pub size_limit: Option<u64>,
    /// What the workload writes to it (`behaviour.volumes.<name>.usage`, not part of a Pod
    /// manifest): the runtime's stats read it, the kubelet never does.
    pub usage: Usage,
}

/// A pod's `emptyDir` volumes, in spec order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmptyDirs(pub Vec<EmptyDir>);

impl Hash for EmptyDirs {
    fn hash<H: Hasher>(&self, state: &mut H) {
        if !self.0.is_empty() {
            self.0.hash(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_grows_in_steps() {
        let u = Usage {
            base: 10,
            grow_by: 5,
            every: Dur::secs(10),
        };
        assert_eq!(u.at(Dur::ZERO), 10);
        assert_eq!(u.at(Dur::secs(9)), 10);
        assert_eq!(u.at(Dur::secs(10)), 15);
        assert_eq!(u.at(Dur::secs(35)), 25);
        assert_eq!(Usage::fixed(7).at(Dur::secs(100)), 7);
    }
}
