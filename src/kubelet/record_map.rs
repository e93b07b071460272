//! A map that notes which keys were changed since the last time its log was read
//! ([`RecordMap`], the pod workers' records); the pod manager's pod set keeps a bare
//! [`ChangeLog`].
//!
//! Housekeeping (`HandlePodCleanups`, `pkg/kubelet/kubelet_pods.go` v1.31) asks
//! `SyncKnownPods` (`pkg/kubelet/pod_workers.go`) for a report of every record every 2 s;
//! the report is kept between passes and only the entries of the UIDs these logs name are
//! recomputed (see `known_report`).

pub(crate) use crate::model::change_log::{ChangeLog, Changes};
use crate::model::PodUid;
use std::collections::BTreeMap;
use std::ops::Deref;

/// A UID-keyed map whose every mutable access notes the key in a [`ChangeLog`]. Reads go
/// through `Deref` to the map; writes only through `get_mut`, `insert` and `remove`.
///
/// A second log ([`RecordMap::watch`]) notes the same keys for a second reader (the
/// prober's per-worker copy of whether its pod's termination was requested). A log never
/// taken stays in its "everything" state, where noting costs one test.
#[derive(Clone, Debug)]
pub(crate) struct RecordMap<V> {
    map: BTreeMap<PodUid, V>,
    log: ChangeLog,
    watch: ChangeLog,
}

impl<V> Default for RecordMap<V> {
    fn default() -> Self {
        RecordMap {
            map: BTreeMap::new(),
            log: ChangeLog::default(),
            watch: ChangeLog::default(),
        }
    }
}

impl<V> Deref for RecordMap<V> {
    type Target = BTreeMap<PodUid, V>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<V> RecordMap<V> {
    /// A mutable entry (noted as changed whether or not the caller changes it).
    #[inline]
    pub(crate) fn get_mut(&mut self, uid: &PodUid) -> Option<&mut V> {
        let len = self.map.len();
        let v = self.map.get_mut(uid)?;
        self.log.note(*uid, len);
        self.watch.note(*uid, len);
        Some(v)
    }

    pub(crate) fn insert(&mut self, uid: PodUid, v: V) -> Option<V> {
        self.log.note(uid, self.map.len());
        self.watch.note(uid, self.map.len());
        self.map.insert(uid, v)
    }

    pub(crate) fn remove(&mut self, uid: &PodUid) -> Option<V> {
        let v = self.map.remove(uid)?;
        self.log.note(*uid, self.map.len());
        self.watch.note(*uid, self.map.len());
        Some(v)
    }

    /// Keep the entries `f` accepts (in UID order), noting the ones dropped.
    pub(crate) fn retain(&mut self, mut f: impl FnMut(&PodUid, &mut V) -> bool) {
        let (len, log, watch) = (self.map.len(), &mut self.log, &mut self.watch);
        self.map.retain(|uid, v| {
            let keep = f(uid, v);
            if !keep {
                log.note(*uid, len);
                watch.note(*uid, len);
            }
            keep
        });
    }

    /// The map and its change log (the map read-only).
    pub(crate) fn split(&mut self) -> (&BTreeMap<PodUid, V>, &mut ChangeLog) {
        (&self.map, &mut self.log)
    }

    /// The map and its second change log (the map read-only).
    pub(crate) fn split_watch(&mut self) -> (&BTreeMap<PodUid, V>, &mut ChangeLog) {
        (&self.map, &mut self.watch)
    }

    /// The second change log, read-only (to ask whether it is clean).
    #[inline]
    pub(crate) fn watch(&self) -> &ChangeLog {
        &self.watch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_names_what_changed_and_overflows_to_all() {
        let mut m: RecordMap<u32> = RecordMap::default();
        let mut out = Vec::new();
        // Never read: everything.
        assert_eq!(m.split().1.take(None, &mut out), Changes::All);
        let e = m.split().1.epoch();
        m.insert(PodUid(5), 1);
        m.insert(PodUid(3), 1);
        let _ = m.get_mut(&PodUid(5));
        assert!(m.get_mut(&PodUid(9)).is_none(), "absent: no entry, no note");
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert_eq!(out, vec![PodUid(3), PodUid(5)]);
        // A reader of an older epoch is out of step.
        let stale = e;
        m.remove(&PodUid(3));
        assert_eq!(m.split().1.take(Some(stale), &mut out), Changes::All);
        // Repeats in a row are noted once.
        let e = m.split().1.epoch();
        for _ in 0..100 {
            let _ = m.get_mut(&PodUid(5));
        }
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert_eq!(out, vec![PodUid(5)]);
        // Overflow: past 64 UIDs the log gives up on naming them.
        let e = m.split().1.epoch();
        for i in 0..70 {
            m.insert(PodUid(100 + i), 0);
        }
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::All);
        let e = m.split().1.epoch();
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert!(out.is_empty());
    }

    #[test]
    fn the_second_log_notes_the_same_keys_for_its_own_reader() {
        let mut m: RecordMap<u32> = RecordMap::default();
        let mut out = Vec::new();
        m.insert(PodUid(1), 0);
        // The first log is read; the second, never read, still names everything.
        assert_eq!(m.split().1.take(None, &mut out), Changes::All);
        assert_eq!(m.split_watch().1.take(None, &mut out), Changes::All);
        let w = m.watch().epoch();
        assert!(m.watch().is_clean(Some(w)));
        let _ = m.get_mut(&PodUid(1));
        m.insert(PodUid(2), 0);
        m.remove(&PodUid(2));
        m.insert(PodUid(3), 0);
        m.retain(|uid, _| *uid != PodUid(3));
        assert!(!m.watch().is_clean(Some(w)));
        assert_eq!(m.split_watch().1.take(Some(w), &mut out), Changes::Some);
        assert_eq!(out, vec![PodUid(1), PodUid(2), PodUid(3)]);
        // Taking one log leaves the other's notes alone.
        let e = m.split().1.epoch();
        let _ = m.get_mut(&PodUid(1));
        let w = m.watch().epoch();
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert!(!m.watch().is_clean(Some(w)));
    }
}
