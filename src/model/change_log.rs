//! A change log: which UIDs of a collection changed since its reader last looked, so a
//! whole-node pass (housekeeping every 2 s) can redo only their share of the work.
//!
//! A log holds a bounded number of UIDs: past that it remembers only that "everything may
//! have changed", and its reader redoes everything (which then costs what a pass over the
//! whole collection always cost). A fresh log starts in that state, and every take bumps
//! an epoch the reader keeps, so a reader never trusts a copy built against another log
//! or another take.

use crate::model::PodUid;

/// The UIDs changed since the log was last taken, or "all of them".
#[derive(Clone, Debug)]
pub(crate) struct ChangeLog {
    uids: Vec<PodUid>,
    /// Every UID may have changed (the log overflowed, or it was never read).
    all: bool,
    /// Bumped at every take: a reader's copy built from an older take is out of step.
    epoch: u64,
    /// `epoch` while the log is clean (nothing noted since the last take), [`DIRTY`]
    /// otherwise: a reader in step tells a clean log by one compare
    /// ([`ChangeLog::is_clean_at`]).
    clean: u64,
}

/// `ChangeLog::clean` of a log with something noted (no epoch reaches it).
const DIRTY: u64 = u64::MAX;

impl Default for ChangeLog {
    fn default() -> Self {
        ChangeLog {
            uids: Vec::new(),
            all: true,
            epoch: 0,
            clean: DIRTY,
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
    /// Note a change of `uid` in a collection of `len` entries. The log keeps at most half
    /// of `len` (and at least 64) UIDs; past that a full pass is as cheap.
    #[inline]
    pub(crate) fn note(&mut self, uid: PodUid, len: usize) {
        if self.all {
            return;
        }
        if self.uids.last() == Some(&uid) {
            return;
        }
        self.clean = DIRTY;
        if self.uids.len() >= (len / 2).max(64) {
            self.all = true;
            self.uids = Vec::new();
            return;
        }
        self.uids.push(uid);
    }

    /// Note that every UID may have changed.
    pub(crate) fn note_all(&mut self) {
        self.all = true;
        self.uids = Vec::new();
        self.clean = DIRTY;
    }

    /// Whether nothing was noted since the take that handed out epoch `synced` (a reader
    /// in step may then skip its refresh without taking).
    #[inline]
    pub(crate) fn is_clean(&self, synced: Option<u64>) -> bool {
        !self.all && self.uids.is_empty() && synced == Some(self.epoch)
    }

    /// [`ChangeLog::is_clean`] for a reader that keeps its epoch as a plain word, 0 for
    /// "never taken" (a take hands out epochs from 1): one compare with `clean`. Debug
    /// builds check the answer against the fields it stands for.
    #[inline(always)]
    pub(crate) fn is_clean_at(&self, synced: u64) -> bool {
        let clean = synced == self.clean;
        debug_assert_eq!(
            clean,
            self.is_clean((synced != 0).then_some(synced)),
            "the change log's clean stamp is stale"
        );
        clean
    }

    /// Debug builds: whether the log stands for every UID (overflowed, or never taken).
    #[cfg(debug_assertions)]
    pub(crate) fn names_all(&self) -> bool {
        self.all
    }

    /// Debug builds: whether the log names `uid` (or every UID).
    #[cfg(debug_assertions)]
    pub(crate) fn names(&self, uid: PodUid) -> bool {
        self.all || self.uids.contains(&uid)
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
        self.clean = self.epoch;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_log_is_one_in_step_with_nothing_noted() {
        let mut log = ChangeLog::default();
        let mut out = Vec::new();
        assert!(!log.is_clean(None), "never read: not clean");
        assert!(!log.is_clean(Some(0)), "a fresh log names everything");
        assert!(!log.is_clean_at(0), "never read: not clean");
        assert_eq!(log.take(None, &mut out), Changes::All);
        let e = log.epoch();
        assert!(log.is_clean(Some(e)));
        assert!(log.is_clean_at(e) && !log.is_clean_at(0) && !log.is_clean_at(e + 1));
        assert!(!log.is_clean(Some(e + 1)), "another epoch is out of step");
        assert!(!log.is_clean(None));
        log.note(PodUid(7), 10);
        assert!(!log.is_clean(Some(e)));
        assert!(!log.is_clean_at(e), "a noted UID makes it dirty");
        assert_eq!(log.take(Some(e), &mut out), Changes::Some);
        assert_eq!(out, vec![PodUid(7)]);
        let e = log.epoch();
        assert!(log.is_clean(Some(e)));
        log.note_all();
        assert!(!log.is_clean(Some(e)));
        assert!(!log.is_clean_at(e), "so does noting everything");
    }
}
