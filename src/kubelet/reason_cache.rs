//! `ReasonCache` (`pkg/kubelet/reason_cache.go`, v1.31; written by `SyncPod`'s results in
//! `kubelet.go`, read by `convertToAPIContainerStatuses` in `kubelet_pods.go`): the reason
//! of the last failed start of each container, by pod UID and container name. Upstream
//! bounds it as an LRU of 1,000 entries; here it is not bounded, which differs only on a
//! node with more than 1,000 containers failing to start at once.
//!
//! Kept per pod: a [`UidMap`] indexed by UID (an array look-up: the status memo asks for
//! a pod's entries at every sync), each pod's entries a short list sorted by container
//! name. A lookup compares a name or two in the pod's list, and no owned key is built to
//! look up (a crash loop sets the same entry at every sync in back-off). The entries of
//! one pod come out in name order, as they did from a tree keyed by (UID, name).

use crate::model::uid_map::UidMap;
use crate::model::PodUid;

#[derive(Clone, Debug, Default)]
pub(crate) struct ReasonCache {
    /// Per pod with at least one entry: (container name, reason), sorted by name.
    pods: UidMap<Vec<(String, &'static str)>>,
}

impl ReasonCache {
    /// The entry of (`uid`, `name`).
    pub(crate) fn get(&self, uid: PodUid, name: &str) -> Option<&'static str> {
        let list = self.pods.get(&uid)?;
        list.iter().find(|(n, _)| n == name).map(|(_, r)| *r)
    }

    /// `Update` for one container: the entry of (`uid`, `name`) becomes `reason` (an
    /// entry already there is overwritten in place: no owned name is built). A crash loop
    /// sets the entry it set at its last retry.
    pub(crate) fn set(&mut self, uid: PodUid, name: &str, reason: &'static str) {
        let Some(list) = self.pods.get_mut(&uid) else {
            self.pods.insert(uid, vec![(name.to_owned(), reason)]);
            return;
        };
        match list.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            Ok(i) => list[i].1 = reason,
            Err(i) => list.insert(i, (name.to_owned(), reason)),
        }
        debug_assert_eq!(
            self.get(uid, name),
            Some(reason),
            "reason cache: set {uid} {name}"
        );
    }

    /// `Remove` for one container; a pod left without entries leaves the map.
    pub(crate) fn remove(&mut self, uid: PodUid, name: &str) {
        let Some(list) = self.pods.get_mut(&uid) else {
            return;
        };
        if let Ok(i) = list.binary_search_by(|(n, _)| n.as_str().cmp(name)) {
            list.remove(i);
        }
        if list.is_empty() {
            self.pods.remove(&uid);
        }
    }

    /// The entries of `uid` as (container name, reason), in name order.
    pub(crate) fn entries(&self, uid: PodUid) -> impl Iterator<Item = (&str, &'static str)> {
        self.pods
            .get(&uid)
            .into_iter()
            .flatten()
            .map(|(n, r)| (n.as_str(), *r))
    }

    /// Whether no pod has an entry.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn entries_by_pod_in_name_order_overwritten_and_removed() {
        let mut c = ReasonCache::default();
        let (a, b) = (PodUid(1), PodUid(2));
        c.set(a, "web", "CrashLoopBackOff");
        c.set(a, "app", "ErrImagePull");
        c.set(b, "app", "RunContainerError");
        c.set(a, "web", "RunContainerError");
        assert_eq!(c.get(a, "web"), Some("RunContainerError"));
        assert_eq!(c.get(a, "db"), None);
        assert_eq!(c.get(PodUid(3), "app"), None);
        let names: Vec<_> = c.entries(a).collect();
        assert_eq!(
            names,
            [("app", "ErrImagePull"), ("web", "RunContainerError")]
        );
        c.remove(a, "db");
        c.remove(a, "app");
        c.remove(PodUid(3), "app");
        assert_eq!(c.entries(a).count(), 1);
        c.remove(a, "web");
        assert_eq!(c.entries(a).count(), 0);
        c.remove(b, "app");
        assert!(c.is_empty(), "a pod without entries leaves the map");
    }

    #[test]
    fn the_same_answers_as_a_tree_keyed_by_uid_and_name() {
        // A fixed walk of sets and removes over three pods and four names.
        let names = ["a", "b", "bb", "c"];
        let reasons = ["R1", "R2", "R3"];
        let mut c = ReasonCache::default();
        let mut reference: BTreeMap<(PodUid, String), &'static str> = BTreeMap::new();
        let mut x: u64 = 12345;
        for _ in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let uid = PodUid((x >> 33) as u32 % 3);
            let name = names[(x >> 40) as usize % names.len()];
            if (x >> 50) % 3 == 0 {
                c.remove(uid, name);
                reference.remove(&(uid, name.to_owned()));
            } else {
                let r = reasons[(x >> 20) as usize % reasons.len()];
                c.set(uid, name, r);
                reference.insert((uid, name.to_owned()), r);
            }
            for u in 0..3 {
                let got: Vec<_> = c.entries(PodUid(u)).collect();
                let want: Vec<_> = reference
                    .iter()
                    .filter(|((p, _), _)| p.0 == u)
                    .map(|((_, n), r)| (n.as_str(), *r))
                    .collect();
                assert_eq!(got, want);
            }
        }
    }
}
