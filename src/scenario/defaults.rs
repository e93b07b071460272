//! Every default a scenario or sweep file gets when a field is absent, in one place (the
//! README's reference section lists the same values).
//!
//! | field | default |
//! |---|---|
//! | `spec.horizon` | `10m` |
//! | `spec.seed` | `1` |
//! | `spec.scheduler` | `random` (or `fifo`, `pct:D`, `pct:D:K`) |
//! | `spec.limits.maxEvents` | `200000000` |
//! | `spec.limits.maxEventsPerInstant` | `5000000` |
//! | `spec.kubelet.profile` | `current` |
//! | `spec.kubelet.behaviours` | `{}` |
//! | `spec.kubelet.config.syncFrequency` | `1m` |
//! | `spec.kubelet.config.shutdownGracePeriod` | `0s` |
//! | `spec.kubelet.config.shutdownGracePeriodCriticalPods` | `0s` |
//! | `spec.kubelet.config.shutdownGracePeriodByPodPriority` | `[]` |
//! | `spec.kubelet.config.evictionHard` | `{memory.available: 100Mi}` |
//! | `spec.kubelet.config.evictionSoft` / `evictionSoftGracePeriod` | `{}` |
//! | `spec.kubelet.config.evictionMaxPodGracePeriod` | `0` |
//! | `spec.kubelet.config.evictionPressureTransitionPeriod` | `5m` |
//! | `spec.kubelet.config.evictionMinimumReclaim` | `{}` |
//! | `spec.kubelet.timing.plegRelistPeriod` | `1s` |
//! | `spec.kubelet.timing.plegRelistPhase` | `0s` |
//! | `spec.kubelet.timing.housekeepingPhase` | `0s` |
//! | `spec.kubelet.timing.housekeepingPeriod` | `2s` |
//! | `spec.kubelet.timing.statusSyncPeriod` | `10s` |
//! | `spec.kubelet.timing.evictionMonitoringPeriod` | `10s` |
//! | `spec.kubelet.timing.syncLoopTick` | `1s` |
//! | `spec.kubelet.containerGC` | `{minAge: 0s, maxPerPodContainer: 1, maxContainers: -1, period: 1m}` (absent: on `current` only) |
//! | `spec.kubelet.imageGC` | `{highThresholdPercent: 85, lowThresholdPercent: 80, minimumGCAge: 2m, period: 5m}` (absent: periodic runs on `current` only) |
//! | `spec.node.capacity` | `{cpu: "8", memory: 16Gi, pods: "110"}` |
//! | `spec.node.nodefs` | `{capacity: 100Gi, inodes: 6553600}` |
//! | `spec.node.imagefs` | absent: images and writable layers on nodefs |
//! | `spec.node.maxPids` | `4194304` |
//! | `spec.runtime.images[].size` | `500Mi` for an image not listed |
//! | timeline `diskPressure.filesystem` | `nodefs` |
//! | `spec.runtime.latencies` | runPodSandbox `{fixed: 100ms}`, pullImage `{fixed: 1s}`, createContainer `{fixed: 20ms}`, startContainer `{fixed: 20ms}`, stopContainer `{fixed: 10ms}`, stopPodSandbox `{fixed: 50ms}`, podStatus `{fixed: 5ms}`, removeContainer `{fixed: 10ms}`, removePodSandbox `{fixed: 10ms}`, mountVolumes `{fixed: 20ms}`, unmountVolumes `{fixed: 20ms}`, removePodCgroup `{fixed: 5ms}`, removePodDir `{fixed: 5ms}` |
//! | `spec.runtime.faults` | `[]`; in an entry, `error` defaults to `Unknown` |
//! | `spec.api.watchDelay` / `statusWriteDelay` | `{fixed: 10ms}` each |
//! | `spec.pods[].replicas` | absent: one pod, no name suffix |
//! | `spec.pods[].static` | `false` |
//! | `spec.pods[].createAt` | `0s` |
//! | `spec.pods[].template.metadata.namespace` | `default` |
//! | `spec.pods[].template.spec.terminationGracePeriodSeconds` | `30` |
//! | `spec.pods[].template.spec.restartPolicy` | `Always` |
//! | `spec.pods[].template.spec.priority` | `0` |
//! | `spec.pods[].template.spec.containers[].image` | `""` |
//! | probes | `initialDelaySeconds: 0, periodSeconds: 10, timeoutSeconds: 1, successThreshold: 1, failureThreshold: 3` |
//! | `spec.pods[].behaviour.<c>` | `runFor: forever, exitCode: 0`, SIGTERM: exit at once with 143, `preStopDuration: 0s`, `postStartDuration: 0s`, `postStartExitCode: 0`, `memoryUsage: 0`, probes succeed, `imagePullFailureRatio: 0`, `diskUsage: 0`, `inodes: 0`, `pids: 0` |
//! | `spec.pods[].behaviour.volumes.<v>.usage` | `0`; in a growing figure, `initial: 0` |
//! | `spec.pods[].behaviour.<c>.runFor` of a classic init container | `1s` (it completes with `exitCode`, 0 by default) |
//! | `onSigterm: {exitAfter, exitCode}` | `exitAfter: 0s`, `exitCode: 0` |
//! | timeline `deletePod.gracePeriodSeconds` | the pod's `terminationGracePeriodSeconds` |
//! | timeline `containerExit.exitCode` | `0` |
//! | timeline `kubeletRestart.downtime` | `0s` |
//! | `spec.expect` | absent: no expectation |
//! | sweep `spec.seeds` | `100` |
//! | sweep `spec.profiles` | `[]`: the scenario's own profile |

use super::types::{KubeletConfig, Threshold, Timing};
use crate::model::{CriCall, Dist};
use crate::sim::{Dur, Strategy};
use std::collections::BTreeMap;

pub const HORIZON: Dur = Dur::secs(600);
pub const SEED: u64 = 1;
/// `runFor` of a classic init container whose behaviour does not say.
pub const INIT_CONTAINER_RUN_FOR: Dur = Dur::secs(1);
pub const SCHEDULER: Strategy = Strategy::Random;
pub const MAX_EVENTS: u64 = 200_000_000;
/// The most pods a scenario may declare in all (every `spec.pods` entry's `replicas`,
/// static pods included): a million pod objects is about a gigabyte of pod specs and
/// per-pod state; ten times the largest bundled benchmark.
pub const MAX_PODS: u64 = 1_000_000;
pub const MAX_EVENTS_PER_INSTANT: u64 = 5_000_000;
/// The default kubelet profile.
pub const PROFILE: &str = "current";
pub const NODE_CPU_MILLI: u64 = 8_000;
pub const NODE_MEMORY_BYTES: u64 = 16 << 30;
pub const NODE_PODS: u64 = 110;
/// Default nodefs size and inodes (ext4's one inode per 16KiB of 100Gi).
pub const NODEFS_BYTES: u64 = 100 << 30;
pub const NODEFS_INODES: u64 = 6_553_600;
/// Default `pid_max` of a 64-bit Linux node.
pub const MAX_PIDS: u64 = 4_194_304;
/// Default size of an image on disk.
pub const IMAGE_SIZE: u64 = 500 << 20;
pub const WATCH_DELAY: Dist = Dist::Fixed(Dur::millis(10));
pub const STATUS_WRITE_DELAY: Dist = Dist::Fixed(Dur::millis(10));
pub const NAMESPACE: &str = "default";
pub const TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;
/// Default `memory.available` hard eviction threshold (100Mi).
pub const EVICTION_HARD_MEMORY_AVAILABLE: u64 = 100 << 20;
/// Default replicates per sweep point.
pub const SWEEP_SEEDS: u64 = 100;

/// Default latency of a CRI call.
pub const fn latency(call: CriCall) -> Dist {
    Dist::Fixed(match call {
        CriCall::RunPodSandbox => Dur::millis(100),
        CriCall::PullImage => Dur::secs(1),
        CriCall::CreateContainer => Dur::millis(20),
        CriCall::StartContainer => Dur::millis(20),
        CriCall::StopContainer => Dur::millis(10),
        CriCall::StopPodSandbox => Dur::millis(50),
        CriCall::PodStatus => Dur::millis(5),
        CriCall::RemoveContainer => Dur::millis(10),
        CriCall::RemovePodSandbox => Dur::millis(10),
        CriCall::MountVolumes => Dur::millis(20),
        CriCall::UnmountVolumes => Dur::millis(20),
        CriCall::RemovePodCgroup => Dur::millis(5),
        CriCall::RemovePodDir => Dur::millis(5),
        CriCall::RemoveImage => Dur::millis(100),
    })
}

/// Upstream KubeletConfiguration defaults for the fields podsim reads.
pub fn kubelet_config() -> KubeletConfig {
    KubeletConfig {
        sync_frequency: Dur::secs(60),
        shutdown_grace_period: Dur::ZERO,
        shutdown_grace_period_critical_pods: Dur::ZERO,
        shutdown_grace_period_by_pod_priority: Vec::new(),
        eviction_hard: BTreeMap::from([(
            "memory.available".to_owned(),
            Threshold::Bytes(EVICTION_HARD_MEMORY_AVAILABLE),
        )]),
        eviction_soft: BTreeMap::new(),
        eviction_soft_grace_period: BTreeMap::new(),
        eviction_max_pod_grace_period: 0,
        eviction_pressure_transition_period: Dur::secs(300),
        eviction_minimum_reclaim: BTreeMap::new(),
    }
}

/// The container garbage collector's defaults (upstream v1.31 flags and `ContainerGCPeriod`).
pub fn container_gc() -> crate::scenario::types::ContainerGc {
    crate::scenario::types::ContainerGc {
        min_age: Dur::ZERO,
        max_per_pod_container: 1,
        max_containers: -1,
        period: Dur::secs(60),
    }
}

/// The image garbage collector's defaults (upstream v1.31 `KubeletConfiguration` defaults
/// and `ImageGCPeriod`).
pub fn image_gc() -> crate::scenario::types::ImageGc {
    crate::scenario::types::ImageGc {
        high_threshold_percent: 85,
        low_threshold_percent: 80,
        minimum_gc_age: Dur::secs(120),
        period: Dur::secs(300),
    }
}

/// Default internal kubelet periods.
pub fn timing() -> Timing {
    Timing {
        pleg_relist_period: Dur::secs(1),
        housekeeping_period: Dur::secs(2),
        status_sync_period: Dur::secs(10),
        eviction_monitoring_period: Dur::secs(10),
        sync_loop_tick: Dur::secs(1),
        pleg_relist_phase: Dur::ZERO,
        housekeeping_phase: Dur::ZERO,
    }
}
