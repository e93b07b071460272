//! Change logs for the whole-node passes: a map that notes which keys were changed since
//! the last time its log was read ([`RecordMap`], the pod workers' records), and the bare
//! log ([`ChangeLog`], the pod manager's pod set).
//!
//! Housekeeping (`HandlePodCleanups`, `pkg/kubelet/kubelet_pods.go` v1.31) asks
//! `SyncKnownPods` (`pkg/kubelet/pod_workers.go`) for a report of every record every 2 s;
//! the report is kept between passes and only the entries of the UIDs these logs name are
//! recomputed (see `known_report`).
//!
//! A log holds a bounded number of UIDs: past that it remembers only that "everything may
//! have changed", and its reader rebuilds in full (which then costs what one pass over
//! every record always cost). A fresh log starts in that state, so a reader never trusts
//! a report built against another log.

use crate::model::PodUid;
use std::collections::BTreeMap;
use std::ops::Deref;

/// The UIDs changed since the log was last taken, or "all of them".
#[derive(Clone, Debug)]
pub(crate) struct ChangeLog {
    uids: Vec<PodUid>,
    /// Every UID may have changed (the log overflowed, or it was never read).
    all: bool,
    /// Bumped at every take: a reader's copy built from an older take is out of step.
    epoch: u64,
}

impl Default for ChangeLog {
    fn default() -> Self {
        ChangeLog {
            uids: Vec::new(),
            all: true,
            epoch: 0,
        }
    }
}

/// What [`ChangeLog::take`] hands its reader.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Changes {
    /// Every UID may have changed.
    All,
    /// Only these (sorted, without repeats) may have.
    Some,
}

impl ChangeLog {
    /// Note a change of `uid` in a collection of `len` entries. The log keeps at most a
    /// quarter of `len` (and at least 64) UIDs; past that a full pass is as cheap.
    #[inline]
    pub(crate) fn note(&mut self, uid: PodUid, len: usize) {
        if self.all {
            return;
        }
        if self.uids.len() >= (len / 4).max(64) {
            self.all = true;
            self.uids = Vec::new();
            return;
        }
        self.uids.push(uid);
    }

    /// The epoch the next [`ChangeLog::take`] will hand out.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Move the changed UIDs into `out` (cleared first, then sorted and without repeats)
    /// and start a fresh log. `synced` is the epoch the reader's copy was built at: a copy
    /// of another epoch (or of another log) gets `Changes::All`.
    pub(crate) fn take(&mut self, synced: Option<u64>, out: &mut Vec<PodUid>) -> Changes {
        out.clear();
        let all = self.all || synced != Some(self.epoch);
        self.all = false;
        self.epoch += 1;
        if all {
            self.uids.clear();
            return Changes::All;
        }
        std::mem::swap(out, &mut self.uids);
        out.sort_unstable();
        out.dedup();
        Changes::Some
    }
}

/// A UID-keyed map whose every mutable access notes the key in a [`ChangeLog`]. Reads go
/// through `Deref` to the map; writes only through `get_mut`, `insert` and `remove`.
#[derive(Clone, Debug)]
pub(crate) struct RecordMap<V> {
    map: BTreeMap<PodUid, V>,
    log: ChangeLog,
}

impl<V> Default for RecordMap<V> {
    fn default() -> Self {
        RecordMap {
            map: BTreeMap::new(),
            log: ChangeLog::default(),
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
        Some(v)
    }

    pub(crate) fn insert(&mut self, uid: PodUid, v: V) -> Option<V> {
        self.log.note(uid, self.map.len());
        self.map.insert(uid, v)
    }

    pub(crate) fn remove(&mut self, uid: &PodUid) -> Option<V> {
        let v = self.map.remove(uid)?;
        self.log.note(*uid, self.map.len());
        Some(v)
    }

    /// The map and its change log (the map read-only).
    pub(crate) fn split(&mut self) -> (&BTreeMap<PodUid, V>, &mut ChangeLog) {
        (&self.map, &mut self.log)
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
        // Overflow: past 64 notes the log gives up on naming them.
        let e = m.split().1.epoch();
        for _ in 0..70 {
            let _ = m.get_mut(&PodUid(5));
        }
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::All);
        let e = m.split().1.epoch();
        assert_eq!(m.split().1.take(Some(e), &mut out), Changes::Some);
        assert!(out.is_empty());
    }
}
