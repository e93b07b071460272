//! `SyncKnownPods`' report (`pkg/kubelet/pod_workers.go` v1.31), kept between housekeeping
//! passes and brought up to date from the change logs of the pod workers' records and of
//! the pod manager's pod set ([`super::record_map`]): a pass costs what changed since the
//! last one, not the number of records. What upstream builds fresh each pass (a map of
//! every known UID to its `PodWorkerSync`) is the same set of entries; debug builds check
//! every update against a fresh build.

use super::pod_workers::{KnownPods, PodSyncStatus, PodWorkerSync};
use super::record_map::{ChangeLog, Changes, RecordMap};
use crate::model::uid_map::UidMap;
use crate::model::{ApiPod, PodUid};
use std::sync::Arc;

/// The report, with what `SyncKnownPods` acts on.
#[derive(Clone, Debug, Default)]
pub(crate) struct KnownReport {
    /// One entry per record (indexed by UID, walked in UID order).
    pub(crate) pods: KnownPods,
    /// The records `SyncKnownPods` acts on (a restart request, or no longer desired), in
    /// UID order.
    act: Vec<PodUid>,
    /// How many entries of `pods` are orphans (records of UIDs not desired).
    orphans: usize,
    /// The desired UIDs with no record (no entry in `pods`), in UID order: few, and what
    /// housekeeping's restart and kill tests look at.
    unknown: Vec<PodUid>,
    /// The epochs of the records' log and of the pod manager's log it was built at.
    synced: Option<(u64, u64)>,
    /// Scratch: the UIDs the two logs name.
    changed: (Vec<PodUid>, Vec<PodUid>),
    /// The UIDs whose entries may have changed since [`KnownReport::take_touched`] was
    /// last called (in the order updated), or `None`: every entry may have.
    touched: Option<Vec<PodUid>>,
}

/// A record's entry in the report, and whether `SyncKnownPods` acts on it.
fn entry(st: &PodSyncStatus, orphan: bool) -> (PodWorkerSync, bool) {
    let cfg = st
        .active_update
        .as_ref()
        .and_then(|u| u.pod.as_ref())
        .or_else(|| st.pending_update.as_ref().and_then(|u| u.pod.as_ref()));
    let w = PodWorkerSync {
        state: st.work_type(),
        orphan,
        has_config: cfg.is_some(),
        is_static: cfg.is_some_and(|p| p.static_pod),
    };
    (w, st.restart_requested || orphan)
}

impl KnownReport {
    /// The records `SyncKnownPods` acts on, with whether each is an orphan.
    pub(crate) fn act(&self) -> impl Iterator<Item = (PodUid, bool)> + '_ {
        self.act.iter().map(|u| {
            let w = self.pods.get(u).expect("an acted-on UID has an entry");
            (*u, w.orphan)
        })
    }

    /// The UIDs whose entries may have changed since the last call (sorted, without
    /// repeats, into `out`), or false if every entry may have.
    pub(crate) fn take_touched(&mut self, out: &mut Vec<PodUid>) -> bool {
        out.clear();
        match self.touched.as_mut() {
            Some(t) => {
                std::mem::swap(out, t);
                out.sort_unstable();
                out.dedup();
                true
            }
            None => {
                self.touched = Some(Vec::new());
                false
            }
        }
    }

    /// How many entries are desired pods (not orphans).
    pub(crate) fn known_desired(&self) -> usize {
        self.pods.len() - self.orphans
    }

    /// The desired pods no record stands for (the workers do not know them), in UID order.
    pub(crate) fn unknown(&self) -> &[PodUid] {
        &self.unknown
    }

    /// Bring the report up to date with `records` and `desired` (the pod manager's pods,
    /// whose changes `desired_log` notes).
    pub(crate) fn refresh(
        &mut self,
        records: &mut RecordMap<Box<PodSyncStatus>>,
        desired: &UidMap<Arc<ApiPod>>,
        desired_log: &mut ChangeLog,
    ) {
        let (map, log) = records.split();
        let (r_at, d_at) = (self.synced.map(|s| s.0), self.synced.map(|s| s.1));
        if log.is_clean(r_at) && desired_log.is_clean(d_at) {
            // Nothing noted in either log since the last take: the report stands as it is
            // (debug builds rebuild it and compare).
            #[cfg(debug_assertions)]
            self.assert_in_step(map, desired);
            return;
        }
        let a = log.take(r_at, &mut self.changed.0);
        let b = desired_log.take(d_at, &mut self.changed.1);
        self.synced = Some((log.epoch(), desired_log.epoch()));
        let n = self.changed.0.len() + self.changed.1.len();
        // An update costs a few searches; a rebuild one step of a walk per record.
        if a == Changes::All || b == Changes::All || n * 3 > map.len() {
            self.rebuild(map, desired);
            self.touched = None;
        } else {
            if let Some(t) = &mut self.touched {
                t.extend_from_slice(&self.changed.0);
                t.extend_from_slice(&self.changed.1);
            }
            let (x, y) = std::mem::take(&mut self.changed);
            let mut ys = y.iter().peekable();
            for uid in &x {
                while let Some(d) = ys.next_if(|d| *d < uid) {
                    self.update(*d, map, desired, true);
                }
                // A UID the pod manager's log does not name kept its standing in config.
                let named = ys.next_if(|d| *d == uid).is_some();
                self.update(*uid, map, desired, named);
            }
            for d in ys {
                self.update(*d, map, desired, true);
            }
            self.changed = (x, y);
        }
        #[cfg(debug_assertions)]
        self.assert_in_step(map, desired);
    }

    /// Debug builds: the kept report equals one built afresh.
    #[cfg(debug_assertions)]
    fn assert_in_step(&self, records: &UidMap<Box<PodSyncStatus>>, desired: &UidMap<Arc<ApiPod>>) {
        let mut full = KnownReport::default();
        full.rebuild(records, desired);
        assert_eq!(
            (&self.pods, &self.act, self.orphans, &self.unknown),
            (&full.pods, &full.act, full.orphans, &full.unknown),
            "SyncKnownPods' kept report out of step with the records"
        );
    }

    /// The report built afresh: one walk of the records beside the desired pods.
    fn rebuild(&mut self, records: &UidMap<Box<PodSyncStatus>>, desired: &UidMap<Arc<ApiPod>>) {
        self.pods.0 = UidMap::new();
        self.act.clear();
        self.unknown.clear();
        self.orphans = 0;
        let mut want = desired.keys().peekable();
        for (&uid, st) in records {
            while let Some(d) = want.next_if(|d| **d < uid) {
                self.unknown.push(*d);
            }
            let orphan = want.next_if_eq(&&uid).is_none();
            let (w, act) = entry(st, orphan);
            self.orphans += usize::from(orphan);
            if act {
                self.act.push(uid);
            }
            self.pods.0.insert(uid, w);
        }
        self.unknown.extend(want.copied());
    }

    /// Recompute the entry of one UID; `named`: the pod manager's log names it (else its
    /// membership of the desired pods did not change, and an entry keeps its orphan flag).
    fn update(
        &mut self,
        uid: PodUid,
        records: &UidMap<Box<PodSyncStatus>>,
        desired: &UidMap<Arc<ApiPod>>,
        named: bool,
    ) {
        // The entry's orphan flag before the update (`None`: no entry).
        let was = self.pods.get(&uid).map(|w| w.orphan);
        if let Some(orphan) = was {
            self.orphans -= usize::from(orphan);
        }
        let acted = self.act.binary_search(&uid);
        let Some(st) = records.get(&uid) else {
            let unknown = self.unknown.binary_search(&uid);
            if was.is_some() {
                self.pods.0.remove(&uid);
            }
            if let Ok(i) = acted {
                self.act.remove(i);
            }
            // No record: unknown to the workers if desired.
            match (unknown, desired.contains_key(&uid)) {
                (Err(i), true) => self.unknown.insert(i, uid),
                (Ok(i), false) => {
                    self.unknown.remove(i);
                }
                _ => {}
            }
            return;
        };
        // A UID with an entry had a record, so it is not among the unknown pods: the list
        // is searched only when the record is new (debug builds check).
        debug_assert!(was.is_none() || self.unknown.binary_search(&uid).is_err());
        if was.is_none() {
            if let Ok(i) = self.unknown.binary_search(&uid) {
                self.unknown.remove(i);
            }
        }
        let orphan = match was {
            Some(orphan) if !named => orphan,
            _ => !desired.contains_key(&uid),
        };
        let (w, act) = entry(st, orphan);
        self.orphans += usize::from(orphan);
        self.pods.0.insert(uid, w);
        match (acted, act) {
            (Err(i), true) => self.act.insert(i, uid),
            (Ok(i), false) => {
                self.act.remove(i);
            }
            _ => {}
        }
    }
}
