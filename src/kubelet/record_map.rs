//! A map that notes which keys were changed since the last time its log was read
//! ([`RecordMap`], the pod workers' records); the pod manager's pod set keeps a bare
//! [`ChangeLog`].
//!
//! Housekeeping (`HandlePodCleanups`, `pkg/kubelet/kubelet_pods.go` v1.31) asks
//! `SyncKnownPods` (`pkg/kubelet/pod_workers.go`) for a report of every record every 2 s;
//! the report is kept between passes and only the entries of the UIDs these logs name are
//! recomputed (see `known_report`).

pub(crate) use crate::model::change_log::{ChangeLog, Changes};
use crate::model::uid_map::UidMap;
use crate::model::PodUid;
#[cfg(debug_assertions)]
use std::collections::BTreeMap;
use std::ops::Deref;

/// A UID-keyed map ([`UidMap`]: array look-ups) whose mutable accesses note the key in a
/// [`ChangeLog`] (all but [`RecordMap::get_mut_unlogged`], whose callers note what they
/// change). Reads go through `Deref` to the map; writes only through `get_mut`,
/// `get_mut_unlogged`, `get_mut_watched`, `insert` and `remove`.
///
/// A second log ([`RecordMap::watch`]) serves a second reader that reads only a small
/// part of each value (the prober reads whether a pod's termination was requested and
/// whether it is terminated: [`Watched`]). It notes the keys inserted and removed, and
/// those handed out by [`RecordMap::get_mut_watched`], which the callers that may change
/// that part use; a plain `get_mut` leaves it alone. Debug builds keep each value's part
/// as of the last take and assert, whenever the second log is read, that it names every
/// key whose part changed since. A log never taken stays in its "everything" state, where
/// noting costs one test.
#[derive(Clone, Debug)]
pub(crate) struct RecordMap<V> {
    map: UidMap<V>,
    log: ChangeLog,
    watch: ChangeLog,
    /// Debug builds: each value's [`Watched::watched`] part at the second log's last take.
    #[cfg(debug_assertions)]
    seen: BTreeMap<PodUid, u8>,
}

/// The part of a value the second log's reader reads: a change of it must be noted there.
/// Only debug builds call it (to check the log).
pub(crate) trait Watched {
    #[cfg_attr(not(debug_assertions), allow(dead_code))]
    fn watched(&self) -> u8;
}

impl<V> Default for RecordMap<V> {
    fn default() -> Self {
        RecordMap {
            map: UidMap::new(),
            log: ChangeLog::default(),
            watch: ChangeLog::default(),
            #[cfg(debug_assertions)]
            seen: BTreeMap::new(),
        }
    }
}

impl<V> Deref for RecordMap<V> {
    type Target = UidMap<V>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl<V> RecordMap<V> {
    /// A mutable entry (noted as changed in the first log whether or not the caller
    /// changes it). The caller must not change the value's [`Watched`] part: that takes
    /// [`RecordMap::get_mut_watched`].
    #[inline]
    pub(crate) fn get_mut(&mut self, uid: &PodUid) -> Option<&mut V> {
        let len = self.map.len();
        let v = self.map.get_mut(uid)?;
        self.log.note(*uid, len);
        Some(v)
    }

    /// A mutable entry noted in neither log, for the hot paths of the pod workers (an
    /// update, a wake-up, a sync's end) that leave alone what the first log's reader
    /// reads: the known-pods report (`known_report`: a record's work type, restart
    /// request, and whether its active or pending update carries a pod and a static one).
    /// A caller that may change that part notes it with [`RecordMap::note`]. Debug builds
    /// check the reader's copy against a full rebuild at every read, so a change left
    /// unnoted shows there.
    #[inline]
    pub(crate) fn get_mut_unlogged(&mut self, uid: &PodUid) -> Option<&mut V> {
        self.map.get_mut(uid)
    }

    /// Note `uid` in the first log (after a [`RecordMap::get_mut_unlogged`] whose caller
    /// changed what that log's reader reads).
    #[inline]
    pub(crate) fn note(&mut self, uid: PodUid) {
        self.log.note(uid, self.map.len());
    }

    /// A mutable entry whose [`Watched`] part the caller may change: noted in both logs.
    pub(crate) fn get_mut_watched(&mut self, uid: &PodUid) -> Option<&mut V> {
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
    pub(crate) fn split(&mut self) -> (&UidMap<V>, &mut ChangeLog) {
        (&self.map, &mut self.log)
    }
}

impl<V: Watched> RecordMap<V> {
    /// The map and its second change log (the map read-only), for the reader to take the
    /// log.
    pub(crate) fn split_watch(&mut self) -> (&UidMap<V>, &mut ChangeLog) {
        #[cfg(debug_assertions)]
        {
            self.check_watch();
            self.seen = self.map.iter().map(|(u, v)| (*u, v.watched())).collect();
        }
        (&self.map, &mut self.watch)
    }

    /// The second change log, read-only (to ask whether it is clean).
    #[inline]
    pub(crate) fn watch(&self) -> &ChangeLog {
        #[cfg(debug_assertions)]
        self.check_watch();
        &self.watch
    }

    /// Debug builds: the second log names every key inserted, removed, or whose
    /// [`Watched`] part changed since its last take (compared with the parts kept then).
    #[cfg(debug_assertions)]
    fn check_watch(&self) {
        if self.watch.names_all() {
            return;
        }
        for (u, v) in &self.map {
            let same = self.seen.get(u) == Some(&v.watched());
            assert!(
                same || self.watch.names(*u),
                "the second change log misses a change of {u}'s watched part"
            );
        }
        for u in self.seen.keys() {
            assert!(
                self.map.contains_key(u) || self.watch.names(*u),
                "the second change log misses the removal of {u}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Watched for u32 {
        fn watched(&self) -> u8 {
            (*self & 1) as u8
        }
    }

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
    fn the_second_log_notes_inserts_removals_and_watched_accesses() {
        let mut m: RecordMap<u32> = RecordMap::default();
        let mut out = Vec::new();
        m.insert(PodUid(1), 0);
        m.insert(PodUid(4), 0);
        // The first log is read; the second, never read, still names everything.
        assert_eq!(m.split().1.take(None, &mut out), Changes::All);
        assert_eq!(m.split_watch().1.take(None, &mut out), Changes::All);
        let w = m.watch().epoch();
        assert!(m.watch().is_clean(Some(w)));
        // A plain mutable access that leaves the watched part alone: the second log
        // stays clean, the first notes it.
        let e = m.split().1.epoch();
        *m.get_mut(&PodUid(4)).unwrap() += 2;
        assert!(m.watch().is_clean(Some(w)));
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert_eq!(out, vec![PodUid(4)]);
        *m.get_mut_watched(&PodUid(1)).unwrap() += 1;
        m.insert(PodUid(2), 0);
        m.remove(&PodUid(2));
        m.insert(PodUid(3), 0);
        m.retain(|uid, _| *uid != PodUid(3));
        assert!(!m.watch().is_clean(Some(w)));
        assert_eq!(m.split_watch().1.take(Some(w), &mut out), Changes::Some);
        assert_eq!(out, vec![PodUid(1), PodUid(2), PodUid(3)]);
        // Taking one log leaves the other's notes alone.
        let e = m.split().1.epoch();
        let _ = m.get_mut_watched(&PodUid(1));
        let w = m.watch().epoch();
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert!(!m.watch().is_clean(Some(w)));
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "misses a change")]
    fn debug_builds_catch_a_watched_change_through_a_plain_access() {
        let mut m: RecordMap<u32> = RecordMap::default();
        let mut out = Vec::new();
        m.insert(PodUid(1), 0);
        let _ = m.split_watch().1.take(None, &mut out);
        *m.get_mut(&PodUid(1)).unwrap() = 1;
        let _ = m.watch();
    }
}
