//! The generic PLEG and the pod status cache.
//!
//! Port of `pkg/kubelet/pleg/generic.go` (relist logic of v1.25, unchanged in substance
//! through v1.31 apart from Evented-PLEG coordination, which is not modelled) and
//! `pkg/kubelet/container/cache.go` (`Get`, `GetNewerThan`, `Set`, `UpdateTime`).
//!
//! Where it deliberately differs: one relist is a single CRI round trip (list plus the
//! inspections of pods that changed) whose latency is one `podStatus` draw; the runtime
//! tells the relist which pods changed instead of the PLEG diffing every pod (the result
//! is the same, it only saves work); the PLEG event channel never overflows.
//!
//! Timestamps: v1.31's `updateCache` reads the clock before `GetPodStatus` lists the pod's
//! sandboxes and containers; the model stamps every entry with the relist's start and
//! observes the runtime when the round trip completes, so an entry never claims a freshness
//! it lacks. `plegTimestampBeforeList: false` recreates master between PRs 137471 and
//! 138024 (issue 137724): the list is taken when the relist is issued and entries are
//! stamped when it completes.

use super::profile::Sw;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::uid_map::UidMap;
use crate::model::{ContainerId, CriError, PodUid, RtPodStatus, RtState, Transition};
use crate::sim::{Dur, SimTime};
use crate::world::cri::{Caller, CriReq, CriResult};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// A PLEG event type (upstream's names, `pleg.PodLifeCycleEventType`).
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum PlegEventType {
    ContainerStarted,
    ContainerDied,
    ContainerRemoved,
    ContainerChanged,
}

#[derive(Clone, Debug)]
struct CacheEntry {
    /// The inspected status, or the error of a failed inspection (upstream stores both
    /// with the entry's timestamp; a reader gets the error).
    status: Result<Arc<RtPodStatus>, CriError>,
    modified: SimTime,
}

/// The PLEG with its pod cache.
#[derive(Clone, Debug)]
pub(crate) struct Pleg {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub(crate) b: crate::kubelet::profile::Behaviours,
    pub(crate) relist_period: Dur,
    /// The previous relist's view of each pod's containers (sorted by container ID).
    old: UidMap<Vec<(ContainerId, RtState)>>,
    reinspect: BTreeSet<PodUid>,
    relist_started: Option<SimTime>,
    cache: UidMap<CacheEntry>,
    /// The cache's global timestamp (`None` until the first relist completes).
    global: Option<SimTime>,
    /// Workers blocked in `GetNewerThan`: uid -> the time they need a status newer than.
    waiters: BTreeMap<PodUid, Option<SimTime>>,
    pub(crate) relists: u64,
    empty: Arc<RtPodStatus>,
    /// Scratch: a relist's new view of one pod's containers.
    scratch: Vec<(ContainerId, RtState)>,
}

impl Pleg {
    pub(crate) fn new(relist_period: Dur) -> Self {
        Pleg {
            b: Default::default(),
            relist_period,
            old: UidMap::new(),
            reinspect: BTreeSet::new(),
            relist_started: None,
            cache: UidMap::new(),
            global: None,
            waiters: BTreeMap::new(),
            relists: 0,
            empty: Arc::new(RtPodStatus::default()),
            scratch: Vec::new(),
        }
    }

    /// `cache.Get`: the cached status (an empty one on a miss), or the error of the last
    /// failed inspection.
    pub(crate) fn cache_get(&self, uid: PodUid) -> Result<Arc<RtPodStatus>, CriError> {
        match self.cache.get(&uid) {
            Some(e) => e.status.clone(),
            None => Ok(self.empty.clone()),
        }
    }

    /// Whether `GetNewerThan(uid, min)` would return now.
    pub(crate) fn cache_is_newer(&self, uid: PodUid, min: Option<SimTime>) -> bool {
        let after = |t: SimTime| min.is_none_or(|m| t > m);
        self.cache.get(&uid).is_some_and(|e| after(e.modified)) || self.global.is_some_and(after)
    }

    /// `GetNewerThan(uid, min)` when it would return now: the status `cache_get` gives, on
    /// one search of the cache; `None` when the worker must wait for a newer one.
    pub(crate) fn cache_get_if_newer(
        &self,
        uid: PodUid,
        min: Option<SimTime>,
    ) -> Option<Result<Arc<RtPodStatus>, CriError>> {
        let after = |t: SimTime| min.is_none_or(|m| t > m);
        let entry = self.cache.get(&uid);
        if !(entry.is_some_and(|e| after(e.modified)) || self.global.is_some_and(after)) {
            return None;
        }
        Some(match entry {
            Some(e) => e.status.clone(),
            None => Ok(self.empty.clone()),
        })
    }

    /// Debug builds: `cached` is the entry the cache holds for `uid` now (the same shared
    /// status, or the same error).
    #[cfg(debug_assertions)]
    pub(crate) fn assert_current(&self, uid: PodUid, cached: &Result<Arc<RtPodStatus>, CriError>) {
        let same = match (cached, self.cache_get(uid)) {
            (Ok(a), Ok(b)) => Arc::ptr_eq(a, &b),
            (Err(a), Err(b)) => *a == b,
            _ => false,
        };
        assert!(
            same,
            "PLEG cache rule broken: a sync reads the entry its GetNewerThan found (pod {uid})"
        );
    }

    /// The cache's entries in UID order: each pod's status, or its inspection's error.
    pub(crate) fn cached_statuses(
        &self,
    ) -> impl Iterator<Item = (&PodUid, &Result<Arc<RtPodStatus>, CriError>)> {
        self.cache.iter().map(|(uid, e)| (uid, &e.status))
    }

    /// The UIDs the cache holds an entry for.
    pub(crate) fn cached_uids(&self) -> Vec<PodUid> {
        self.cache.keys().copied().collect()
    }

    pub(crate) fn add_waiter(&mut self, uid: PodUid, min: Option<SimTime>) {
        self.waiters.insert(uid, min);
    }
}

#[cfg(test)]
fn container_states(s: &RtPodStatus) -> Vec<(ContainerId, RtState)> {
    let mut v = Vec::new();
    container_states_into(s, &mut v);
    v
}

/// The pod's containers and their states, sorted by ID, into `v` (emptied first).
fn container_states_into(s: &RtPodStatus, v: &mut Vec<(ContainerId, RtState)>) {
    v.clear();
    v.extend(s.containers.iter().map(|c| (c.id, c.state)));
    // By ID; of two entries with one ID the later counts (as a map's insert would do).
    v.sort_by_key(|e| e.0);
    v.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            *kept = *later;
        }
        same
    });
}

/// Every container ID of either view, ascending, with its state in each: one merge walk
/// over the two sorted views (no set of IDs to build).
fn each_container_change(
    old: &[(ContainerId, RtState)],
    new: &[(ContainerId, RtState)],
    mut f: impl FnMut(ContainerId, Option<RtState>, Option<RtState>),
) {
    let (mut i, mut j) = (0, 0);
    loop {
        match (old.get(i), new.get(j)) {
            (None, None) => return,
            (Some(&(a, sa)), Some(&(b, sb))) if a == b => {
                f(a, Some(sa), Some(sb));
                i += 1;
                j += 1;
            }
            (Some(&(a, sa)), n) if n.is_none_or(|&(b, _)| a < b) => {
                f(a, Some(sa), None);
                i += 1;
            }
            (_, Some(&(b, sb))) => {
                f(b, None, Some(sb));
                j += 1;
            }
            (Some(_), None) => unreachable!("taken by the arm above"),
        }
    }
}

/// `generateEvents` for one container.
fn events_for(old: Option<RtState>, new: Option<RtState>) -> &'static [PlegEventType] {
    use PlegEventType::*;
    if old == new {
        return &[];
    }
    match new {
        Some(RtState::Running) => &[ContainerStarted],
        Some(RtState::Exited) => &[ContainerDied],
        Some(RtState::Unknown) | Some(RtState::Created) => &[ContainerChanged],
        None => match old {
            Some(RtState::Exited) => &[ContainerRemoved],
            _ => &[ContainerDied, ContainerRemoved],
        },
    }
}

impl Kubelet {
    /// The relist timer fired: list the runtime.
    pub(super) fn pleg_relist(&mut self, ctx: &mut Ctx) {
        if self.pleg.relist_started.is_some() {
            return;
        }
        self.pleg.relist_started = Some(ctx.now());
        let reinspect: Vec<PodUid> = self.pleg.reinspect.iter().copied().collect();
        // The first relist has no previous view to diff against: every pod is inspected.
        let all = self.pleg.relists == 0;
        // PR 138024 takes the timestamp before the sandboxes are listed (the model's
        // `true`: the list and the inspections happen when the call completes, stamped with
        // its start). `false`: the list is taken now and each pod's timestamp when its
        // inspection begins, so a change in between is missing from a status whose
        // timestamp is newer than it.
        let list_first = !self.pleg.b.on(Sw::PlegTimestampBeforeList);
        ctx.cri(
            Caller::Pleg,
            CriReq::Relist {
                reinspect,
                all,
                list_first,
            },
        );
    }

    /// The relist's CRI round trip returned.
    pub(super) fn pleg_on_relist(&mut self, ctx: &mut Ctx, result: CriResult) {
        let Some(start) = self.pleg.relist_started.take() else {
            return;
        };
        self.pleg.relists += 1;
        // The timestamp the pods' cache entries carry (see `pleg_relist`).
        let stamp = if self.pleg.b.on(Sw::PlegTimestampBeforeList) {
            start
        } else {
            ctx.now()
        };
        let mut changed_pods = 0u32;
        let mut to_notify: Vec<(PodUid, bool, Vec<ContainerId>)> = Vec::new();
        if let CriResult::Relist(items) = result {
            for (uid, r) in items {
                if self
                    .pw
                    .records
                    .get(&uid)
                    .and_then(|r| r.last_sync_time)
                    .is_some_and(|end| end > start)
                {
                    ctx.reach(Reach::RelistSpansSyncEnd);
                }
                match r {
                    Err(e) => {
                        ctx.reach(Reach::PlegInspectionFailed);
                        // Inspection failed: the cache holds the error; the old record is
                        // kept so the same events come again at the next relist.
                        self.pleg.reinspect.insert(uid);
                        self.pleg.cache.insert(
                            uid,
                            CacheEntry {
                                status: Err(e),
                                modified: stamp,
                            },
                        );
                        changed_pods += 1;
                    }
                    Ok(status) => {
                        self.pleg.reinspect.remove(&uid);
                        // The new view is built in a buffer kept between relists and
                        // copied over the pod's old one in place (no list allocated, one
                        // look-up of the view map).
                        let mut new = std::mem::take(&mut self.pleg.scratch);
                        container_states_into(&status, &mut new);
                        let old = self.pleg.old.get_or_insert_with(uid, Vec::new);
                        let mut sync_worthy = false;
                        let mut died = Vec::new();
                        each_container_change(old, &new, |id, was, is| {
                            for e in events_for(was, is) {
                                if !matches!(
                                    e,
                                    PlegEventType::ContainerRemoved
                                        | PlegEventType::ContainerChanged
                                ) {
                                    sync_worthy = true;
                                }
                                if *e == PlegEventType::ContainerDied {
                                    died.push(id);
                                }
                            }
                        });
                        old.clear();
                        old.reserve_exact(new.len());
                        old.extend_from_slice(&new);
                        self.pleg.scratch = new;
                        let old = self.pleg.cache.insert(
                            uid,
                            CacheEntry {
                                status: Ok(status),
                                modified: stamp,
                            },
                        );
                        // The status replaced goes back to the runtime, to be refilled by
                        // a later inspection if no one else holds it.
                        if let Some(Ok(old)) = old.map(|e| e.status) {
                            self.drop_status_memo(uid);
                            ctx.recycle_status(old);
                        }
                        changed_pods += 1;
                        if sync_worthy || !died.is_empty() {
                            to_notify.push((uid, sync_worthy, died));
                        }
                    }
                }
            }
        }
        self.pleg.global = Some(start);
        ctx.emit(Transition::Relist {
            changed: changed_pods,
        });
        // Release workers blocked in GetNewerThan.
        let ready: Vec<PodUid> = self
            .pleg
            .waiters
            .iter()
            .filter(|(uid, min)| self.pleg.cache_is_newer(**uid, **min))
            .map(|(uid, _)| *uid)
            .collect();
        for uid in ready {
            self.pleg.waiters.remove(&uid);
            let _ = ctx.after(Dur::ZERO, KEv::WorkerCacheReady(uid));
        }
        for (uid, sync, died) in to_notify {
            let _ = ctx.after(Dur::ZERO, KEv::PlegEvent { uid, sync, died });
        }
        let period = self.pleg.relist_period;
        let _ = ctx.after(period, KEv::PlegRelist);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_follow_generic_pleg_table() {
        use PlegEventType::*;
        assert_eq!(
            events_for(None, Some(RtState::Running)),
            &[ContainerStarted]
        );
        assert_eq!(
            events_for(Some(RtState::Running), Some(RtState::Exited)),
            &[ContainerDied]
        );
        assert_eq!(events_for(Some(RtState::Exited), None), &[ContainerRemoved]);
        assert_eq!(
            events_for(Some(RtState::Running), None),
            &[ContainerDied, ContainerRemoved]
        );
        assert_eq!(
            events_for(None, Some(RtState::Created)),
            &[ContainerChanged]
        );
        assert!(events_for(Some(RtState::Running), Some(RtState::Running)).is_empty());
    }

    #[test]
    fn container_changes_walk_the_union_of_both_views_in_id_order() {
        use RtState::*;
        let id = ContainerId;
        let old = [(id(1), Running), (id(3), Exited), (id(4), Running)];
        let new = [(id(2), Created), (id(3), Running), (id(5), Running)];
        let mut seen = Vec::new();
        each_container_change(&old, &new, |c, a, b| seen.push((c, a, b)));
        // What the map-and-set form gave: the sorted union of IDs, each with both states.
        let (om, nm): (BTreeMap<_, _>, BTreeMap<_, _>) = (old.into(), new.into());
        let ids: BTreeSet<ContainerId> = om.keys().chain(nm.keys()).copied().collect();
        let want: Vec<_> = ids
            .into_iter()
            .map(|c| (c, om.get(&c).copied(), nm.get(&c).copied()))
            .collect();
        assert_eq!(seen, want);
        let mut n = 0;
        each_container_change(&[], &[], |_, _, _| n += 1);
        each_container_change(&old, &[], |_, a, b| {
            n += usize::from(a.is_some() && b.is_none())
        });
        assert_eq!(n, 3);
    }

    #[test]
    fn container_states_are_sorted_and_the_later_of_one_id_counts() {
        let c = |id, state| crate::model::RtContainer {
            id: ContainerId(id),
            name: "c".into(),
            state,
            exit_code: 0,
            reason: "",
            created_at: SimTime(0),
            started_at: None,
            finished_at: None,
            restart_count: 0,
            sandbox: crate::model::SandboxId(1),
        };
        let s = RtPodStatus {
            containers: vec![
                c(7, RtState::Running),
                c(2, RtState::Exited),
                c(7, RtState::Exited),
            ],
            ..Default::default()
        };
        assert_eq!(
            container_states(&s),
            [
                (ContainerId(2), RtState::Exited),
                (ContainerId(7), RtState::Exited)
            ]
        );
    }

    #[test]
    fn get_newer_than_uses_entry_or_global_timestamp() {
        let mut p = Pleg::new(Dur::secs(1));
        assert!(!p.cache_is_newer(PodUid(1), None));
        p.global = Some(SimTime(0));
        assert!(p.cache_is_newer(PodUid(1), None));
        assert!(!p.cache_is_newer(PodUid(1), Some(SimTime(0))));
        p.cache.insert(
            PodUid(1),
            CacheEntry {
                status: Ok(Arc::new(RtPodStatus::default())),
                modified: SimTime(5),
            },
        );
        assert!(p.cache_is_newer(PodUid(1), Some(SimTime(4))));
        assert!(!p.cache_is_newer(PodUid(1), Some(SimTime(5))));
    }

    #[test]
    fn cache_get_if_newer_is_the_newer_test_then_the_get() {
        let mut p = Pleg::new(Dur::secs(1));
        let same = |p: &Pleg, uid: PodUid, min: Option<SimTime>| {
            let got = p.cache_get_if_newer(uid, min);
            assert_eq!(got.is_some(), p.cache_is_newer(uid, min));
            if let Some(got) = got {
                match (got, p.cache_get(uid)) {
                    (Ok(a), Ok(b)) => assert!(Arc::ptr_eq(&a, &b)),
                    (Err(a), Err(b)) => assert_eq!(a, b),
                    _ => panic!("another answer than cache_get"),
                }
            }
        };
        let mins = [None, Some(SimTime(0)), Some(SimTime(4)), Some(SimTime(5))];
        for min in mins {
            same(&p, PodUid(1), min);
        }
        p.global = Some(SimTime(0));
        p.cache.insert(
            PodUid(1),
            CacheEntry {
                status: Ok(Arc::new(RtPodStatus::default())),
                modified: SimTime(5),
            },
        );
        p.cache.insert(
            PodUid(2),
            CacheEntry {
                status: Err(CriError::Unavailable),
                modified: SimTime(3),
            },
        );
        for uid in [PodUid(1), PodUid(2), PodUid(3)] {
            for min in mins {
                same(&p, uid, min);
            }
        }
    }
}
