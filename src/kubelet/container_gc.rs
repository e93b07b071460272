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
//! relist.
//!
//! Then the sandboxes (`evictSandboxes` of the same file, v1.31), which needs no ready
//! config sources: a sandbox is active while it is ready or a container created in it is
//! still listed. Per pod, if its content may be removed (`ShouldPodContentBeRemoved`), every
//! inactive sandbox goes; otherwise the newest sandbox is kept whatever its state and the
//! inactive older ones go (`removeOldestNSandboxes`). Each removal is a CRI
//! `RemovePodSandbox`. Simplified: the container list is the PLEG cache (refreshed every relist)
//! instead of a CRI `ListContainers` call (for sandboxes too: a sandbox whose containers
//! this run removes is collected by the next run, after a relist saw them go, where
//! upstream's synchronous removals let the same run take it); only exited (and unknown) containers are
//! collected, not created ones that never ran (upstream collects those too, with the
//! race that brings against a sync about to start them); the immediate first run at start
//! is left out (the first run is one period after the kubelet starts); upstream's
//! `removeSandbox` stops a sandbox before removing it, which the model leaves out as every
//! inactive sandbox it removes is already stopped; log directories are not collected
//! (`evictPodLogsDirectories`); rule 2
//! waits until the pod worker says no container of the pod can run any more (upstream
//! applies it as soon as an evicted pod's termination is requested, which can race a
//! SyncPod in flight that then starts a `Never` container again, as if it never ran).

use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::{ContainerId, PodUid, RtState, SandboxId};
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
        self.collect_containers(ctx, &policy, false, Caller::Deletor);
        self.sandbox_gc(ctx);
    }

    /// `DeleteAllUnusedContainers` (v1.31 `pkg/kubelet/container/container_gc.go`), the
    /// eviction manager's reclaim function: the collector's container rules with
    /// `evictNonDeletedPods`, so every dead container of a pod whose runtime may be removed
    /// (terminated, deleted or not) goes too. The policy is the scenario's `containerGC`, or
    /// the defaults where the periodic collector does not run. Sandboxes are left to the
    /// periodic collector (they hold no disk here). Returns how many removals it issued.
    pub(super) fn delete_all_unused_containers(&mut self, ctx: &mut Ctx, caller: Caller) -> u32 {
        let policy = self
            .container_gc
            .unwrap_or_else(crate::scenario::defaults::container_gc);
        self.collect_containers(ctx, &policy, true, caller)
    }

    /// `evictContainers`: issues the removals (replies to `caller`); returns their number.
    fn collect_containers(
        &mut self,
        ctx: &mut Ctx,
        policy: &ContainerGc,
        evict_non_deleted: bool,
        caller: Caller,
    ) -> u32 {
        let now = ctx.now();
        let mut units = Units::new();
        for (&uid, status) in self.pleg.cached_statuses() {
            let Ok(status) = status else {
                continue;
            };
            for c in &status.containers {
                let dead = matches!(c.state, RtState::Exited | RtState::Unknown);
                if dead && c.created_at + policy.min_age <= now {
                    units
                        .entry((uid, String::from(&*c.name)))
                        .or_default()
                        .push((c.created_at, c.id));
                }
            }
        }
        let mut remove = Vec::new();
        if self.config.sources_ready {
            units.retain(|(uid, _), unit| {
                let removable = self.pw.should_pod_content_be_removed(*uid)
                    || (evict_non_deleted && self.pw.should_pod_runtime_be_removed(*uid));
                // Simplified: only once no container of the pod can run any more.
                let all = removable && !self.pw.could_have_running_containers(*uid);
                if all {
                    remove.extend(unit.iter().map(|c| (*uid, c.1)));
                }
                !all
            });
        }
        remove.extend(evict(&mut units, policy));
        let n = remove.len() as u32;
        for (uid, id) in remove {
            if self.init_container_beside_app(uid, id) {
                ctx.reach(Reach::InitContainerRemovedBesideApp);
            }
            ctx.cri(caller, CriReq::RemoveContainer { uid, id });
        }
        n
    }

    /// Whether dead container `id` of `uid` is a classic init container while a regular
    /// container of the pod runs (the window of race catalog 31).
    fn init_container_beside_app(&self, uid: PodUid, id: ContainerId) -> bool {
        let (Some(pod), Ok(status)) = (self.config.pods.get(&uid), self.pleg.cache_get(uid)) else {
            return false;
        };
        let Some(c) = status.containers.iter().find(|c| c.id == id) else {
            return false;
        };
        let spec = &pod.spec;
        spec.init_containers
            .iter()
            .any(|i| *i.name == *c.name && !i.is_sidecar())
            && status.containers.iter().any(|r| {
                r.state == RtState::Running && spec.containers.iter().any(|s| *s.name == *r.name)
            })
    }

    /// `evictSandboxes` (v1.31): the inactive sandboxes of each pod in the PLEG cache.
    fn sandbox_gc(&mut self, ctx: &mut Ctx) {
        // One buffer for every pod's sandboxes; the cache is read in place.
        let mut sandboxes: Vec<GcSandbox> = Vec::new();
        for (&uid, status) in self.pleg.cached_statuses() {
            let Ok(status) = status else {
                continue;
            };
            sandboxes.clear();
            sandboxes.extend(status.sandboxes.iter().map(|s| GcSandbox {
                created: s.created_at,
                id: s.id,
                active: s.ready || status.containers.iter().any(|c| c.sandbox == s.id),
            }));
            let all = self.pw.should_pod_content_be_removed(uid);
            for id in evict_sandboxes(&mut sandboxes, all) {
                ctx.cri(Caller::Deletor, CriReq::RemovePodSandbox { uid, id });
            }
        }
    }
}

/// One sandbox as the sandbox collector sees it (`sandboxGCInfo`).
#[derive(Clone, Copy, Debug)]
struct GcSandbox {
    created: SimTime,
    id: SandboxId,
    /// Ready, or a container created in it is still listed.
    active: bool,
}

/// `removeOldestNSandboxes` with `len` (`all`: the pod's content may go) or `len - 1`: the
/// inactive sandboxes among the oldest that many, oldest first.
fn evict_sandboxes(sandboxes: &mut [GcSandbox], all: bool) -> Vec<SandboxId> {
    let keep = usize::from(!all).min(sandboxes.len());
    // Newest first (ties by id, for a stable order).
    sandboxes.sort_unstable_by_key(|s| std::cmp::Reverse((s.created, s.id)));
    sandboxes[keep..]
        .iter()
        .rev()
        .filter(|s| !s.active)
        .map(|s| s.id)
        .collect()
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

    fn sandboxes(list: &[(u64, u32, bool)]) -> Vec<GcSandbox> {
        list.iter()
            .map(|&(s, id, active)| GcSandbox {
                created: SimTime::ZERO + Dur::secs(s),
                id: SandboxId(id),
                active,
            })
            .collect()
    }

    #[test]
    fn a_live_pod_keeps_its_newest_sandbox_even_if_stopped() {
        // Sandboxes 1 (oldest) to 3 (newest), all stopped and empty: 1 and 2 go.
        let mut s = sandboxes(&[(2, 2, false), (1, 1, false), (3, 3, false)]);
        let ids: Vec<u32> = evict_sandboxes(&mut s, false).iter().map(|s| s.0).collect();
        assert_eq!(ids, [1, 2]);
        // A single sandbox is always kept.
        assert!(evict_sandboxes(&mut sandboxes(&[(1, 1, false)]), false).is_empty());
        assert!(evict_sandboxes(&mut [], false).is_empty());
    }

    #[test]
    fn active_sandboxes_are_never_removed() {
        // Ready or still holding a container: kept even when the pod's content may go.
        let mut s = sandboxes(&[(1, 1, true), (2, 2, false), (3, 3, true)]);
        let ids: Vec<u32> = evict_sandboxes(&mut s.clone(), true)
            .iter()
            .map(|s| s.0)
            .collect();
        assert_eq!(ids, [2]);
        // The pod lives on: the newest (3) is kept anyway, 1 is active, 2 goes.
        let ids: Vec<u32> = evict_sandboxes(&mut s, false).iter().map(|s| s.0).collect();
        assert_eq!(ids, [2]);
    }

    #[test]
    fn a_removable_pod_loses_every_inactive_sandbox() {
        let mut s = sandboxes(&[(1, 1, false), (2, 2, false)]);
        let ids: Vec<u32> = evict_sandboxes(&mut s, true).iter().map(|s| s.0).collect();
        assert_eq!(ids, [1, 2]);
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
