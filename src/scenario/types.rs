//! The validated, typed scenario: what a run consumes. Produced by `validate` from the raw
//! YAML schema; every default is applied here and documented in the README.

use crate::model::{Behaviour, CriCall, CriError, Dist, PodSpec};
use crate::sim::{Dur, Limits, SimTime, Strategy};
use std::collections::BTreeMap;

/// A scenario ready to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.description` (may be empty).
    pub description: String,
    /// The file it came from, as given on the command line (for error and replay lines).
    pub source: String,
    /// Stable hash of the scenario after `--set` overrides (hex, 16 digits).
    pub hash: String,
    /// `spec.horizon` (default 10m).
    pub horizon: Dur,
    /// `spec.seed` (default 1).
    pub seed: u64,
    /// `spec.scheduler` (default random): order of events due at the same instant.
    pub scheduler: Strategy,
    /// `spec.limits` (README addition): event budgets; `horizon` above wins for time.
    pub max_events: u64,
    pub max_events_per_instant: u64,
    pub kubelet: KubeletSpec,
    pub node: NodeSpec,
    pub runtime: RuntimeSpec,
    pub api: ApiSpec,
    /// Pods after `replicas` expansion, in file order (`web-0`, `web-1`, ...).
    pub pods: Vec<PodDecl>,
    /// Timeline actions sorted by `at` (stable: file order among equal times).
    pub timeline: Vec<TimedAction>,
    pub expect: Option<Expect>,
}

impl Scenario {
    pub fn limits(&self) -> Limits {
        Limits {
            horizon: SimTime(self.horizon.0),
            max_events: self.max_events,
            max_events_per_instant: self.max_events_per_instant,
        }
    }
}

/// `spec.kubelet`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeletSpec {
    /// `profile` (default `current`).
    pub profile: String,
    /// `behaviours`: switch name -> value, overriding the profile.
    pub behaviours: BTreeMap<String, bool>,
    /// `featureGates`: gate name (as the profile's release calls it) -> value, overriding
    /// the release's defaults.
    pub feature_gates: BTreeMap<String, bool>,
    pub config: KubeletConfig,
    pub timing: Timing,
    /// `containerGC`: the container garbage collector's policy; `None` when the scenario
    /// does not set it (the `current` profile then runs the upstream defaults).
    pub container_gc: Option<ContainerGc>,
    /// `imageGC`: the image garbage collector's policy; `None` when the scenario does not
    /// set it (the `current` profile then runs the upstream defaults periodically).
    pub image_gc: Option<ImageGc>,
}

/// `spec.kubelet.imageGC`: upstream's `ImageGCPolicy` (`imageGCHighThresholdPercent`,
/// `imageGCLowThresholdPercent`, `imageMinimumGCAge`) and the period of
/// `StartGarbageCollection`'s image loop (`ImageGCPeriod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ImageGc {
    /// default 85
    pub high_threshold_percent: u32,
    /// default 80
    pub low_threshold_percent: u32,
    /// default 2m
    pub minimum_gc_age: Dur,
    /// default 5m
    pub period: Dur,
}

/// `spec.kubelet.containerGC`: upstream's `GCPolicy` (flags `--minimum-container-ttl-duration`,
/// `--maximum-dead-containers-per-container`, `--maximum-dead-containers`) and the period of
/// `StartGarbageCollection` (`ContainerGCPeriod`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerGc {
    /// default 0s
    pub min_age: Dur,
    /// default 1 (negative: no limit)
    pub max_per_pod_container: i64,
    /// default -1 (negative: no limit)
    pub max_containers: i64,
    /// default 1m
    pub period: Dur,
}

/// `spec.kubelet.config`: KubeletConfiguration fields with upstream defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KubeletConfig {
    /// default 1m
    pub sync_frequency: Dur,
    /// default 0s
    pub shutdown_grace_period: Dur,
    /// default 0s
    pub shutdown_grace_period_critical_pods: Dur,
    /// (priority, shutdownGracePeriodSeconds), default empty
    pub shutdown_grace_period_by_pod_priority: Vec<(i32, i64)>,
    /// signal name -> threshold, e.g. "memory.available" -> Quantity or percentage.
    /// default {memory.available: 100Mi}
    pub eviction_hard: BTreeMap<String, Threshold>,
    /// default {}
    pub eviction_soft: BTreeMap<String, Threshold>,
    /// default {}
    pub eviction_soft_grace_period: BTreeMap<String, Dur>,
    /// default 0
    pub eviction_max_pod_grace_period: i64,
    /// default 5m
    pub eviction_pressure_transition_period: Dur,
    /// `evictionMinimumReclaim`: signal -> how far past its threshold a met threshold must
    /// recover before it counts as resolved. default {}
    pub eviction_minimum_reclaim: BTreeMap<String, Threshold>,
}

/// An eviction threshold value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    Bytes(u64),
    /// Percentage in parts per million of capacity.
    PercentPpm(u32),
}

/// `spec.kubelet.timing`: internal periods that are not KubeletConfiguration fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timing {
    /// default 1s
    pub pleg_relist_period: Dur,
    /// default 2s
    pub housekeeping_period: Dur,
    /// default 10s
    pub status_sync_period: Dur,
    /// default 10s
    pub eviction_monitoring_period: Dur,
    /// default 1s (kubelet sync ticker; README addition)
    pub sync_loop_tick: Dur,
    /// default 0s: when the first PLEG relist runs after the kubelet starts (README
    /// addition; a sweep axis for the relist's phase against other events)
    pub pleg_relist_phase: Dur,
    /// default 0s: added to the first housekeeping tick (README addition)
    pub housekeeping_phase: Dur,
}

/// `spec.node`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// default 8 cpu, 16Gi, 110 pods
    pub cpu_milli: u64,
    pub memory_bytes: u64,
    pub pods: u64,
    /// `nodefs: {capacity, inodes}`: the kubelet's root filesystem; default 100Gi and
    /// 6553600 inodes.
    pub nodefs: FsSpec,
    /// `imagefs`: a separate filesystem for images and writable layers; `None` (default):
    /// they live on nodefs.
    pub imagefs: Option<FsSpec>,
    /// `maxPids`: the node's process limit (`pid_max`); default 4194304.
    pub max_pids: u64,
}

/// A filesystem's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FsSpec {
    pub capacity_bytes: u64,
    pub inodes: u64,
}

/// `spec.runtime`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeSpec {
    /// Latency of each CRI call; defaults documented in the README.
    pub latencies: BTreeMap<CriCall, Dist>,
    pub faults: Vec<Fault>,
    /// `images: [{image, size}]`: image sizes on disk; others take the default (500Mi).
    pub image_sizes: BTreeMap<String, u64>,
}

/// `spec.runtime.faults[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub call: CriCall,
    /// Probability in parts per million.
    pub probability_ppm: u32,
    pub error: CriError,
    /// `from` (README addition, default 0s): the fault is active from this simulated time.
    pub from: Dur,
    /// `until` (README addition, default never): the fault is inactive from this time on.
    pub until: Option<Dur>,
}

/// `spec.api`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiSpec {
    /// default {fixed: 10ms}
    pub watch_delay: Dist,
    /// default {fixed: 10ms}
    pub status_write_delay: Dist,
}

/// One pod after replica expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodDecl {
    /// Index in `spec.pods` (for error messages).
    pub decl_index: usize,
    pub static_pod: bool,
    pub create_at: Dur,
    /// The template with the expanded name (`web-0`).
    pub spec: std::sync::Arc<PodSpec>,
    /// Container name -> behaviour; every container of the spec has an entry (defaults
    /// filled in). Shared by the replicas of one `spec.pods` entry.
    pub behaviour: std::sync::Arc<BTreeMap<String, Behaviour>>,
}

/// `spec.timeline[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimedAction {
    pub at: Dur,
    pub action: Action,
}

/// An outside action. Pod references are expanded pod names that exist in `spec.pods`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Graceful deletion; `None` uses the pod's terminationGracePeriodSeconds.
    DeletePod {
        pod: String,
        grace_period_seconds: Option<i64>,
    },
    /// Deletion with grace 0 and force: the object is gone at once.
    ForceDeletePod {
        pod: String,
    },
    NodeShutdown,
    /// Node memory.available drops to this many bytes.
    MemoryPressure {
        available_bytes: u64,
    },
    /// A filesystem's available bytes and/or free inodes are these from now on.
    DiskPressure {
        imagefs: bool,
        available: Option<u64>,
        inodes_free: Option<u64>,
    },
    /// The node's pid.available is this from now on.
    PidPressure {
        available: u64,
    },
    KubeletRestart {
        downtime: Dur,
    },
    /// The container's process exits on its own with this code.
    ContainerExit {
        pod: String,
        container: String,
        exit_code: i32,
    },
    UpdateStaticPod {
        pod: String,
    },
    RemoveStaticPod {
        pod: String,
    },
    /// The manifest removed last puts back unchanged: its UID is a hash of its content, so
    /// the same UID comes back (a no-op if the manifest is present).
    RestoreStaticPod {
        pod: String,
    },
    RecreatePod {
        pod: String,
    },
    /// Another controller sets a condition of the pod object (for a static pod, of its
    /// mirror pod), e.g. the one a readiness gate waits for.
    SetPodCondition {
        pod: String,
        condition: crate::model::PodCondition,
    },
}

/// `spec.expect`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    /// Invariant names that must be reported; empty means none may be.
    pub findings: Vec<String>,
    /// Reach points (`crate::model::reach`) the scenario exists to get into: each must be
    /// reached by at least one of the seeds a test or sweep runs.
    pub reach: Vec<String>,
    /// `old`: the behaviour before the fix the scenario replays, and what it shows.
    pub old: Option<ExpectOld>,
}

/// `spec.expect.old`: switch values that restore an old behaviour, and the invariants that
/// behaviour must break on at least one of the first 200 seeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectOld {
    pub behaviours: BTreeMap<String, bool>,
    pub findings: Vec<String>,
}
