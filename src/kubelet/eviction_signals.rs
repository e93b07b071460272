//! The eviction manager's signals beyond memory: observations of the node's filesystems and
//! processes, which node condition and resource each signal stands for, the rankings for
//! disk, inode and PID pressure, their eviction messages, and local storage eviction.
//!
//! Follows upstream v1.31 `pkg/kubelet/eviction/helpers.go` (`makeSignalObservations`,
//! `signalToNodeCondition`, `signalToResource`, `byEvictionPriority`,
//! `buildSignalToRankFunc`, `rankDiskPressureFunc` = orderedBy(exceedDiskRequests,
//! priority, disk), `rankPIDPressure` = orderedBy(priority, process), `podDiskUsage`,
//! `evictionMessage`) and `eviction_manager.go` (`localStorageEviction`,
//! `emptyDirLimitEviction`, `podEphemeralStorageLimitEviction`,
//! `containerEphemeralStorageLimitEviction` and their messages).
//!
//! Where it deliberately differs: a container's `diskUsage` is its writable layer and logs
//! together, so with a separate imagefs the whole of it counts on imagefs (upstream puts
//! the logs on nodefs); the `containerfs.*` and `allocatableMemory.available` signals have
//! no observations (their thresholds are never met, as upstream treats a signal it cannot
//! observe).

use super::admission::threshold_quantity;
use super::eviction::{quantity, EvictionThreshold, Observation};
use crate::model::{ApiPod, EvictionSignal, NodeConditionType, PodSpec};
use crate::world::stats::{PodStats, StatsSummary};
use std::cmp::Ordering;
use std::sync::Arc;

pub(crate) const NODEFS_AVAILABLE: &str = "nodefs.available";
pub(crate) const NODEFS_INODES_FREE: &str = "nodefs.inodesFree";
pub(crate) const IMAGEFS_AVAILABLE: &str = "imagefs.available";
pub(crate) const IMAGEFS_INODES_FREE: &str = "imagefs.inodesFree";
pub(crate) const PID_AVAILABLE: &str = "pid.available";

/// `makeSignalObservations`: (signal, observation) of every signal podsim observes.
pub(crate) fn observations(s: &StatsSummary) -> Vec<(&'static str, Observation)> {
    let o = |available: u64, capacity: u64| Observation {
        available,
        capacity,
        time: s.time,
    };
    let d = &s.disk;
    vec![
        (
            super::eviction::MEMORY_AVAILABLE,
            o(
                s.node_available_bytes,
                s.node_available_bytes
                    .saturating_add(s.node_working_set_bytes),
            ),
        ),
        (
            NODEFS_AVAILABLE,
            o(d.nodefs.available_bytes, d.nodefs.capacity_bytes),
        ),
        (NODEFS_INODES_FREE, o(d.nodefs.inodes_free, d.nodefs.inodes)),
        (
            IMAGEFS_AVAILABLE,
            o(d.imagefs.available_bytes, d.imagefs.capacity_bytes),
        ),
        (
            IMAGEFS_INODES_FREE,
            o(d.imagefs.inodes_free, d.imagefs.inodes),
        ),
        (PID_AVAILABLE, o(d.pids_available, d.max_pids)),
    ]
}

/// The observation of `signal`, if it has one.
pub(crate) fn observed<'a>(
    obs: &'a [(&'static str, Observation)],
    signal: &str,
) -> Option<&'a Observation> {
    obs.iter().find(|(s, _)| *s == signal).map(|(_, o)| o)
}

/// `thresholdsMet`: is `t` met by `obs` (with its minimum reclaim added when enforced)?
pub(crate) fn threshold_met(
    t: &EvictionThreshold,
    obs: &[(&'static str, Observation)],
    enforce_min_reclaim: bool,
) -> bool {
    let Some(o) = observed(obs, &t.signal) else {
        return false;
    };
    let mut q = threshold_quantity(t.value, o.capacity);
    if enforce_min_reclaim {
        if let Some(m) = t.min_reclaim {
            q = q.saturating_add(threshold_quantity(m, o.capacity));
        }
    }
    q > o.available
}

/// `signalToNodeCondition`.
pub(crate) fn node_condition(signal: &str) -> Option<NodeConditionType> {
    match signal {
        "memory.available" | "allocatableMemory.available" => {
            Some(NodeConditionType::MemoryPressure)
        }
        PID_AVAILABLE => Some(NodeConditionType::PIDPressure),
        s if s.starts_with("nodefs.")
            || s.starts_with("imagefs.")
            || s.starts_with("containerfs.") =>
        {
            Some(NodeConditionType::DiskPressure)
        }
        _ => None,
    }
}

/// `signalToResource`: the resource the message names.
pub(crate) fn resource(signal: &str) -> &'static str {
    match signal {
        "memory.available" | "allocatableMemory.available" => "memory",
        PID_AVAILABLE => "pids",
        s if s.ends_with(".inodesFree") => "inodes",
        _ => "ephemeral-storage",
    }
}

/// The trace's word for a signal.
pub(crate) fn signal_word(signal: &str) -> EvictionSignal {
    use crate::model::Word;
    EvictionSignal::from_text(signal).unwrap_or(EvictionSignal::MemoryAvailable)
}

/// `cmpBool`: true first.
fn cmp_bool(a: bool, b: bool) -> Ordering {
    b.cmp(&a)
}

fn stats_of(summary: &StatsSummary, uid: crate::model::PodUid) -> Option<&PodStats> {
    summary.pods.iter().find(|p| p.uid == uid)
}

/// `podRequest` for ephemeral-storage: the containers' sum, or the largest init container's
/// request if larger.
pub(crate) fn ephemeral_request(spec: &PodSpec) -> u64 {
    pod_amount(spec, |c| c.ephemeral.request)
}

/// A pod-level amount as upstream's resource helpers take it: the regular containers'
/// sum, or the largest init container's if larger.
fn pod_amount(spec: &PodSpec, of: impl Fn(&crate::model::ContainerSpec) -> u64) -> u64 {
    let sum = spec
        .containers
        .iter()
        .fold(0u64, |a, c| a.saturating_add(of(c)));
    let init = spec.init_containers.iter().map(&of).max().unwrap_or(0);
    sum.max(init)
}

/// Which parts of a pod's local storage a disk signal measures (`fsStatsType`): the
/// containers' writable layers and logs, the emptyDir volumes.
#[derive(Clone, Copy, Debug)]
struct Measure {
    containers: bool,
    volumes: bool,
    inodes: bool,
}

/// `buildSignalToRankFunc` for the disk signals: with a separate imagefs, nodefs ranks by
/// the volumes and imagefs by the containers; otherwise both by everything.
fn measure(signal: &str, separate_imagefs: bool) -> Measure {
    let inodes = signal.ends_with(".inodesFree");
    let image = signal.starts_with("imagefs.");
    Measure {
        containers: !separate_imagefs || image,
        volumes: !separate_imagefs || !image,
        inodes,
    }
}

/// `podDiskUsage` for what `m` measures (volumes have no inode figures here).
fn disk_usage(s: &PodStats, m: Measure) -> u64 {
    let mut u = 0u64;
    if m.containers {
        for c in &s.container_fs {
            u = u.saturating_add(if m.inodes {
                c.inodes_used
            } else {
                c.used_bytes
            });
        }
    }
    if m.volumes && !m.inodes {
        for (_, b) in &s.volumes {
            u = u.saturating_add(*b);
        }
    }
    u
}

/// `rankDiskPressureFunc`: pods exceeding their ephemeral-storage request first (pods
/// without stats before everything; inodes have no request), then lower priority first,
/// then larger usage above request first.
pub(crate) fn rank_disk_pressure(pods: &mut [Arc<ApiPod>], summary: &StatsSummary, signal: &str) {
    let m = measure(signal, summary.disk.separate_imagefs);
    let usage = |p: &ApiPod| stats_of(summary, p.uid).map(|s| disk_usage(s, m));
    let request = |p: &ApiPod| {
        if m.inodes {
            0
        } else {
            ephemeral_request(&p.spec)
        }
    };
    pods.sort_by(|p1, p2| {
        let (u1, u2) = (usage(p1), usage(p2));
        let (exceed, disk) = match (u1, u2) {
            (Some(a), Some(b)) => {
                let d1 = a as i128 - request(p1) as i128;
                let d2 = b as i128 - request(p2) as i128;
                (cmp_bool(d1 > 0, d2 > 0), d2.cmp(&d1))
            }
            _ => {
                let c = cmp_bool(u1.is_none(), u2.is_none());
                (c, c)
            }
        };
        let priority = p1.spec.priority.cmp(&p2.spec.priority);
        exceed.then(priority).then(disk)
    });
}

/// `rankPIDPressure`: lower priority first, then more processes first (pods without stats
/// first).
pub(crate) fn rank_pid_pressure(pods: &mut [Arc<ApiPod>], summary: &StatsSummary) {
    let procs = |p: &ApiPod| stats_of(summary, p.uid).map(|s| s.processes);
    pods.sort_by(|p1, p2| {
        let priority = p1.spec.priority.cmp(&p2.spec.priority);
        let process = match (procs(p1), procs(p2)) {
            (Some(a), Some(b)) => b.cmp(&a),
            (a, b) => cmp_bool(a.is_none(), b.is_none()),
        };
        priority.then(process)
    });
}

/// `evictionMessage` for a signal other than memory: the resource, the threshold met and,
/// for ephemeral-storage, each container using more than it requested.
pub(crate) fn disk_pid_message(
    pod: &ApiPod,
    summary: &StatsSummary,
    threshold: &EvictionThreshold,
    obs: &Observation,
) -> String {
    let res = resource(&threshold.signal);
    let mut m = format!(
        "The node was low on resource: {res}. Threshold quantity: {}, available: {}. ",
        quantity(threshold_quantity(threshold.value, obs.capacity)),
        quantity(obs.available)
    );
    if res != "ephemeral-storage" {
        return m;
    }
    let Some(stats) = stats_of(summary, pod.uid) else {
        return m;
    };
    for c in &stats.container_fs {
        if let Some(spec) = pod.spec.containers.iter().find(|s| s.name == c.name) {
            let req = spec.ephemeral.request;
            if c.used_bytes > req {
                m += &format!(
                    "Container {} was using {}, request is {}, has larger consumption of {res}. ",
                    c.name,
                    quantity(c.used_bytes),
                    quantity(req)
                );
            }
        }
    }
    m
}

/// Whether local storage eviction has anything to check for this pod.
pub(crate) fn has_local_storage_limits(spec: &PodSpec) -> bool {
    spec.all_containers().any(|c| c.ephemeral.limit > 0)
        || spec.empty_dirs.0.iter().any(|d| d.size_limit.is_some())
}

/// `localStorageEviction` for one pod: the first of `emptyDirLimitEviction`,
/// `podEphemeralStorageLimitEviction` and `containerEphemeralStorageLimitEviction` that
/// finds the pod over a limit, with the signal it is counted under and upstream's message.
pub(crate) fn local_storage_violation(
    spec: &PodSpec,
    stats: &PodStats,
) -> Option<(EvictionSignal, String)> {
    for d in &spec.empty_dirs.0 {
        let used = stats
            .volumes
            .iter()
            .find(|(n, _)| *n == d.name)
            .map(|v| v.1);
        if let (Some(limit), Some(used)) = (d.size_limit, used) {
            if used > limit {
                let msg = format!(
                    "Usage of EmptyDir volume \"{}\" exceeds the limit \"{}\". ",
                    d.name,
                    quantity(limit)
                );
                return Some((EvictionSignal::EmptyDirFsLimit, msg));
            }
        }
    }
    // resourcehelper.PodLimits: the containers' limits summed, raised to an init
    // container's if larger; found if any container sets one.
    let limited = spec.all_containers().any(|c| c.ephemeral.limit > 0);
    if limited {
        let limit = pod_amount(spec, |c| c.ephemeral.limit);
        // podLocalEphemeralStorageUsage: containers' rootfs and logs plus local volumes.
        let used = stats
            .container_fs
            .iter()
            .map(|c| c.used_bytes)
            .chain(stats.volumes.iter().map(|v| v.1))
            .fold(0u64, u64::saturating_add);
        if used > limit {
            let msg = format!(
                "Pod ephemeral local storage usage exceeds the total limit of containers {}. ",
                quantity(limit)
            );
            return Some((EvictionSignal::EphemeralPodFsLimit, msg));
        }
    }
    for c in &stats.container_fs {
        let Some(spec) = spec.all_containers().find(|s| s.name == c.name) else {
            continue;
        };
        let limit = spec.ephemeral.limit;
        if limit > 0 && c.used_bytes > limit {
            let msg = format!(
                "Container {} exceeded its local ephemeral storage limit \"{}\". ",
                c.name,
                quantity(limit)
            );
            return Some((EvictionSignal::EphemeralContainerFsLimit, msg));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, EmptyDir, PodUid, RestartPolicy};
    use crate::world::stats::ContainerFs;

    fn pod(uid: u32, priority: i32, request: u64, limit: u64) -> Arc<ApiPod> {
        let mut spec = pod_spec(uid, request, limit);
        spec.priority = priority;
        Arc::new(ApiPod::new(PodUid(uid), spec))
    }

    fn pod_spec(uid: u32, request: u64, limit: u64) -> PodSpec {
        let mut c = ContainerSpec::named("c", "img");
        c.ephemeral.request = request;
        c.ephemeral.limit = limit;
        PodSpec::new(
            &format!("p{uid}"),
            "default",
            RestartPolicy::Always,
            vec![c],
        )
    }

    fn stats(uid: u32, disk: u64, procs: u64) -> PodStats {
        PodStats {
            uid: PodUid(uid),
            working_set_bytes: 0,
            containers: Vec::new(),
            container_fs: vec![ContainerFs {
                name: "c".into(),
                used_bytes: disk,
                inodes_used: disk / 10,
            }],
            volumes: Vec::new(),
            processes: procs,
        }
    }

    fn summary(pods: Vec<PodStats>) -> StatsSummary {
        StatsSummary {
            time: crate::sim::SimTime::ZERO,
            node_available_bytes: 0,
            node_working_set_bytes: 0,
            pods,
            disk: Default::default(),
        }
    }

    fn uids(pods: &[Arc<ApiPod>]) -> Vec<u32> {
        pods.iter().map(|p| p.uid.0).collect()
    }

    #[test]
    fn rank_disk_pressure_orders_like_upstream() {
        // 1: within its request; 2: above, priority 0, +100; 3: above, priority 0, +500;
        // 4: above, priority 10, +900; 5: no stats.
        let mut pods = vec![
            pod(1, 0, 1000, 0),
            pod(2, 0, 100, 0),
            pod(3, 0, 0, 0),
            pod(4, 10, 100, 0),
            pod(5, 100, 0, 0),
        ];
        let s = summary(vec![
            stats(1, 900, 0),
            stats(2, 200, 0),
            stats(3, 500, 0),
            stats(4, 1000, 0),
        ]);
        rank_disk_pressure(&mut pods, &s, NODEFS_AVAILABLE);
        assert_eq!(uids(&pods), [5, 3, 2, 4, 1]);
        // Inodes have no request: every pod with stats exceeds it; priority, then inodes.
        rank_disk_pressure(&mut pods, &s, NODEFS_INODES_FREE);
        assert_eq!(uids(&pods), [5, 1, 3, 2, 4]);
    }

    #[test]
    fn rank_pid_pressure_is_priority_then_processes() {
        let mut pods = vec![
            pod(1, 0, 0, 0),
            pod(2, 0, 0, 0),
            pod(3, -5, 0, 0),
            pod(4, 0, 0, 0),
        ];
        let s = summary(vec![stats(1, 0, 10), stats(2, 0, 500), stats(3, 0, 1)]);
        rank_pid_pressure(&mut pods, &s);
        assert_eq!(uids(&pods), [3, 4, 2, 1]);
    }

    #[test]
    fn local_storage_checks_empty_dir_then_pod_then_container() {
        let mut p = pod_spec(1, 0, 1000);
        p.empty_dirs.0.push(EmptyDir {
            name: "v".into(),
            size_limit: Some(100),
            usage: Default::default(),
        });
        let mut s = stats(1, 500, 0);
        s.volumes = vec![("v".into(), 100)];
        assert_eq!(local_storage_violation(&p, &s), None);
        s.volumes = vec![("v".into(), 101)];
        let (sig, msg) = local_storage_violation(&p, &s).unwrap();
        assert_eq!(sig, EvictionSignal::EmptyDirFsLimit);
        assert_eq!(
            msg,
            "Usage of EmptyDir volume \"v\" exceeds the limit \"100\". "
        );
        // The pod's total counts its emptyDirs: 950 + 60 > 1000.
        s.volumes = vec![("v".into(), 60)];
        s.container_fs[0].used_bytes = 950;
        let (sig, msg) = local_storage_violation(&p, &s).unwrap();
        assert_eq!(sig, EvictionSignal::EphemeralPodFsLimit);
        assert_eq!(
            msg,
            "Pod ephemeral local storage usage exceeds the total limit of containers 1k. "
        );
        // Two containers, one limited: the pod limit is that one's, the container check
        // never sees more than the pod check. A second limited container over its own.
        let mut q = pod_spec(2, 0, 100);
        let mut c2 = ContainerSpec::named("d", "img");
        c2.ephemeral.limit = 10_000;
        q.containers.push(c2);
        let mut s2 = stats(2, 150, 0);
        s2.container_fs.push(ContainerFs {
            name: "d".into(),
            used_bytes: 0,
            inodes_used: 0,
        });
        let (sig, msg) = local_storage_violation(&q, &s2).unwrap();
        assert_eq!(sig, EvictionSignal::EphemeralContainerFsLimit);
        assert_eq!(
            msg,
            "Container c exceeded its local ephemeral storage limit \"100\". "
        );
    }

    #[test]
    fn signals_map_to_conditions_and_resources() {
        assert_eq!(
            node_condition(NODEFS_AVAILABLE),
            Some(NodeConditionType::DiskPressure)
        );
        assert_eq!(
            node_condition(IMAGEFS_INODES_FREE),
            Some(NodeConditionType::DiskPressure)
        );
        assert_eq!(
            node_condition(PID_AVAILABLE),
            Some(NodeConditionType::PIDPressure)
        );
        assert_eq!(resource(NODEFS_INODES_FREE), "inodes");
        assert_eq!(resource(IMAGEFS_AVAILABLE), "ephemeral-storage");
        assert_eq!(resource(PID_AVAILABLE), "pids");
        assert_eq!(signal_word(PID_AVAILABLE), EvictionSignal::PidAvailable);
    }

    #[test]
    fn minimum_reclaim_is_added_when_enforced() {
        let t = EvictionThreshold {
            signal: NODEFS_AVAILABLE.into(),
            value: crate::scenario::Threshold::Bytes(100),
            grace_period: crate::sim::Dur::ZERO,
            min_reclaim: Some(crate::scenario::Threshold::Bytes(50)),
        };
        let obs = |a: u64| {
            vec![(
                NODEFS_AVAILABLE,
                Observation {
                    available: a,
                    capacity: 1000,
                    time: crate::sim::SimTime::ZERO,
                },
            )]
        };
        assert!(threshold_met(&t, &obs(99), false));
        assert!(!threshold_met(&t, &obs(120), false));
        assert!(threshold_met(&t, &obs(120), true));
        assert!(!threshold_met(&t, &obs(150), true));
    }
}
