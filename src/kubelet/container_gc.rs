//! The container garbage collector: every `ContainerGCPeriod` (1 min) the kubelet removes
//! dead containers (`StartGarbageCollection` in `pkg/kubelet/kubelet.go`, v1.31, with the
//! policy of `pkg/kubelet/container/container_gc.go`; the rules are `evictContainers` of
//! `pkg/kubelet/kuberuntime/kuberuntime_gc.go`, v1.31):
//!
//! 1. Evictable: containers not running and created at least `minAge` ago, grouped by
//!    (pod UID, container name), newest first. Init containers are grouped like any other.
//! 2. Once all config sources are ready, every group of a pod whose content may be removed
//!    (evicted, or deleted and terminated: `ShouldPodContentBeRemoved`) goes entirely.
//! 3. `maxPerPodContainer` >= 0: each group keeps its newest that many.
//! 4. `maxContainers` >= 0: with more dead containers than that, each group keeps
//!    `max(maxContainers / groups, 1)`, then the oldest of all go until `maxContainers`
//!    are left.
//!
//! Each removal is a CRI `RemoveContainer`; the PLEG sees the container go at its next
//! relist. Simplified: the container list is the PLEG cache (refreshed every relist)
//! instead of a CRI `ListContainers` call; only exited (and unknown) containers are
//! collected, not created ones that never ran (upstream collects those too, with the
//! race that brings against a sync about to start them); the immediate first run at start
//! is left out (the first run is one period after the kubelet starts); sandboxes and log
//! directories are not collected (`evictSandboxes`, `evictPodLogsDirectories`); rule 2
//! waits until the pod worker says no container of the pod can run any more (upstream
//! applies it as soon as an evicted pod's termination is requested, which can race a
//! SyncPod in flight that then starts a `Never` container again, as if it never ran).

use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::{ContainerId, PodUid, RtState};
use crate::scenario::types::ContainerGc;
use crate::sim::SimTime;
use crate::world::cri::{Caller, CriReq};
use std::collections::BTreeMap;

/// (pod, container name) -> dead instances (creation time, id), newest first.
type Units = BTreeMap<(PodUid, String), Vec<(SimTime, ContainerId)>>;

impl Kubelet {
    /// One run of the container garbage collector; schedules the next.
    pub(super) fn container_gc(&mut self, ctx: &mut Ctx) {
        let Some(policy) = self.container_gc else {
            return;
        };
        let _ = ctx.after(policy.period, KEv::ContainerGc);
        let now = ctx.now();
        let mut units = Units::new();
        for uid in self.pleg.cached_uids() {
            let Ok(status) = self.pleg.cache_get(uid) else {
                continue;
            };
            for c in &status.containers {
                let dead = matches!(c.state, RtState::Exited | RtState::Unknown);
                if dead && c.created_at + policy.min_age <= now {
                    units
                        .entry((uid, c.name.clone()))
                        .or_default()
                        .push((c.created_at, c.id));
                }
            }
        }
        let mut remove = Vec::new();
        if self.config.sources_ready {
            units.retain(|(uid, _), unit| {
                // Simplified: only once no container of the pod can run any more.
                let all = self.pw.should_pod_content_be_removed(*uid)
                    && !self.pw.could_have_running_containers(*uid);
                if all {
                    remove.extend(unit.iter().map(|c| (*uid, c.1)));
                }
                !all
            });
        }
        remove.extend(evict(&mut units, &policy));
        for (uid, id) in remove {
            ctx.cri(Caller::Deletor, CriReq::RemoveContainer { uid, id });
        }
    }
}

/// Rules 3 and 4 on the groups left: the containers to remove, oldest last per group.
fn evict(units: &mut Units, policy: &ContainerGc) -> Vec<(PodUid, ContainerId)> {
    for unit in units.values_mut() {
        unit.sort_unstable_by(|a, b| b.cmp(a));
    }
    let mut remove = Vec::new();
    let mut keep_newest = |units: &mut Units, n: usize| {
        for ((uid, _), unit) in units.iter_mut() {
            if unit.len() > n {
                remove.extend(unit.drain(n..).map(|c| (*uid, c.1)));
            }
        }
    };
    if policy.max_per_pod_container >= 0 {
        keep_newest(units, policy.max_per_pod_container as usize);
    }
    if policy.max_containers >= 0 && !units.is_empty() {
        let max = policy.max_containers as usize;
        if units.values().map(Vec::len).sum::<usize>() > max {
            keep_newest(units, (max / units.len()).max(1));
        }
        let mut all: Vec<(SimTime, ContainerId, PodUid)> = units
            .iter()
            .flat_map(|((uid, _), u)| u.iter().map(|c| (c.0, c.1, *uid)))
            .collect();
        if all.len() > max {
            all.sort_unstable_by(|a, b| b.cmp(a));
            remove.extend(all.drain(max..).map(|c| (c.2, c.1)));
        }
    }
    remove
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Dur;

    fn policy(per: i64, max: i64) -> ContainerGc {
        ContainerGc {
            min_age: Dur::ZERO,
            max_per_pod_container: per,
            max_containers: max,
            period: Dur::secs(60),
        }
    }

    /// Pod 1 container "a" died 4 times, pod 2 container "b" twice.
    fn units() -> Units {
        let mut u = Units::new();
        let at = |s: u64| SimTime::ZERO + Dur::secs(s);
        u.insert(
            (PodUid(1), "a".into()),
            (1..=4).map(|i| (at(i), ContainerId(i as u32))).collect(),
        );
        u.insert(
            (PodUid(2), "b".into()),
            (5..=6).map(|i| (at(i), ContainerId(i as u32))).collect(),
        );
        u
    }

    fn ids(r: &[(PodUid, ContainerId)]) -> Vec<u32> {
        let mut v: Vec<u32> = r.iter().map(|c| c.1 .0).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn defaults_keep_the_newest_dead_instance_per_container() {
        let r = evict(&mut units(), &policy(1, -1));
        assert_eq!(ids(&r), [1, 2, 3, 5]);
    }

    #[test]
    fn negative_limits_keep_everything() {
        assert!(evict(&mut units(), &policy(-1, -1)).is_empty());
    }

    #[test]
    fn max_containers_spreads_then_removes_the_oldest_overall() {
        // 6 dead, at most 3: each group keeps 3 / 2 = 1 (ids 4 and 6), under the cap.
        assert_eq!(ids(&evict(&mut units(), &policy(-1, 3))), [1, 2, 3, 5]);
        // At most 1: each group keeps max(1 / 2, 1) = 1, then the oldest of the rest goes.
        assert_eq!(ids(&evict(&mut units(), &policy(-1, 1))), [1, 2, 3, 4, 5]);
    }
}
