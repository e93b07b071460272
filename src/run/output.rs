//! What a run produces: the output of `podsim run --json` (field names and order are
//! the JSON's; keep them stable). Fields that only ever hold a fixed word (a phase, a
//! condition status, a reason) are static strings: the per-pod summaries are built at
//! the end of every run, and copying each word into a string of its own cost thousands
//! of allocations there.

use crate::sim::trace::Record;
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A finding: kubelet misbehaviour or a run limit, as data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub invariant: String,
    pub pod: String,
    pub at_ns: u64,
    pub message: String,
    pub replay: String,
}

/// Per container of a pod object, from ground truth.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerSummary {
    pub name: String,
    pub starts: u32,
    pub restarts: u32,
    pub last_exit_code: Option<i32>,
    /// The reason of the newest termination as the kubelet last wrote it to the API
    /// (`Completed`, `Error`, `OOMKilled`, `ContainerStatusUnknown`, ...).
    pub last_reason: Option<&'static str>,
    pub running_at_end: bool,
    /// Containers SIGKILLed when their stop grace ran out.
    pub killed_at_grace_expiry: u32,
    /// When each instance of the container started running.
    pub started_at_ns: Vec<u64>,
    /// When each instance exited (in start order; absent while running).
    pub finished_at_ns: Vec<u64>,
    /// When the newest instance was sent SIGTERM, if it was.
    pub sigterm_at_ns: Option<u64>,
    /// An instance was still running when the node powered off.
    pub killed_by_power_off: bool,
    /// When each instance was sent SIGTERM (in start order; instances never signalled are
    /// left out).
    pub sigterms_at_ns: Vec<u64>,
    /// When each instance counted in `killed_at_grace_expiry` was SIGKILLed.
    pub grace_expiry_kills_at_ns: Vec<u64>,
    /// Instances that are not running and still in the runtime at the end (not removed
    /// by the container garbage collector or the container deletor).
    pub dead_at_end: u32,
    /// The container's own `restartPolicy` (`Always`: a native sidecar); absent when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<&'static str>,
}

impl ContainerSummary {
    /// The label of the container in text and pictures: `init:NAME` for a classic init
    /// container, `sidecar:NAME` for a native sidecar, `NAME` for an app container.
    pub fn label(&self, init: bool) -> String {
        match (init, self.restart_policy.is_some()) {
            (false, _) => self.name.clone(),
            (true, false) => format!("init:{}", self.name),
            (true, true) => format!("sidecar:{}", self.name),
        }
    }
}

impl PodSummary {
    /// Every container with its label: init containers and sidecars first, in spec order,
    /// then the app containers.
    pub fn labelled_containers(&self) -> impl Iterator<Item = (String, &ContainerSummary)> {
        let init = self.init_containers.iter().map(|c| (c.label(true), c));
        init.chain(self.containers.iter().map(|c| (c.label(false), c)))
    }
}

/// One pod object (one UID).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSummary {
    pub name: String,
    pub uid: String,
    /// A static pod (its phases are those its mirror pods held in the API; `removedBy` says
    /// how its manifest went).
    pub is_static: bool,
    pub final_phase: &'static str,
    pub last_phase: &'static str,
    pub reason: Option<String>,
    pub created_at_ns: u64,
    pub deletion_requested_at_ns: Option<u64>,
    /// When the last container of the pod stopped after deletion was requested.
    pub containers_stopped_at_ns: Option<u64>,
    pub removed_from_api_at_ns: Option<u64>,
    pub removed_by: Option<&'static str>,
    /// (time, phase) of every phase the API server held.
    pub phases: Vec<(u64, &'static str)>,
    /// Teardown on the node (ground truth): volumes unmounted, pod cgroup removed, pod
    /// directory removed, and containers killed because the cgroup went while they ran.
    pub volumes_unmounted_at_ns: Option<u64>,
    pub pod_cgroup_removed_at_ns: Option<u64>,
    pub pod_dir_removed_at_ns: Option<u64>,
    pub killed_by_cgroup_removal: u32,
    /// (time, ready) of every value of the Ready condition the API server held.
    pub ready_transitions: Vec<(u64, bool)>,
    pub containers: Vec<ContainerSummary>,
    /// The init containers and sidecars, in spec order, shaped as `containers`.
    pub init_containers: Vec<ContainerSummary>,
    /// The pod's conditions as last written to the API object (for a pod removed from the
    /// API, as it last held them), in the object's order.
    pub conditions: Vec<ConditionSummary>,
}

/// One condition of a pod object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionSummary {
    /// Borrowed for the types the kubelet knows; a readiness gate's own type is copied.
    #[serde(rename = "type")]
    pub kind: Cow<'static, str>,
    pub status: &'static str,
    pub reason: Option<&'static str>,
}

/// Run-level metrics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    pub pods: u32,
    pub container_starts: u32,
    pub restarts: u32,
    pub kills_at_grace_expiry: u64,
    pub containers_running_at_end: u32,
    pub pleg_relists: u64,
    /// Probes the prober ran (liveness, readiness and startup together).
    pub probes_run: u64,
    /// `kubeletRestart` actions that took effect (crashes of a running kubelet).
    pub kubelet_restarts: u32,
    /// Deletion requested -> all containers stopped, per deleted pod (ns).
    pub time_to_terminated_ns: Vec<u64>,
    /// Deletion requested -> object removed from the API, per deleted pod (ns).
    pub time_to_removed_ns: Vec<u64>,
    /// When the node was asked to shut down (timeline `nodeShutdown`).
    pub node_shutdown_at_ns: Option<u64>,
    /// When the node powered off, and why (`inhibitor lock released`,
    /// `inhibit delay expired`, `no inhibitor lock`).
    pub power_off_at_ns: Option<u64>,
    pub power_off_cause: Option<String>,
    /// Containers still running when the node powered off.
    pub containers_alive_at_power_off: u32,
    /// Pods whose status-manager phase had not reached the API when the node powered off.
    pub statuses_lost_at_power_off: u32,
    /// Every eviction by the kubelet's eviction manager, in order.
    pub evictions: Vec<EvictionSummary>,
    /// Every change of a node condition the eviction manager made: (timeNs, condition,
    /// status).
    pub node_conditions: Vec<(u64, String, bool)>,
    /// RunPodSandbox/CreateContainer/StartContainer calls that began between a pod's
    /// termination request and its acknowledgement (the oracle's count for S1'; 0 without
    /// the oracle).
    pub starts_while_termination_requested: u64,
    /// Every node-level reclaim of the eviction manager before a disk eviction, in order.
    pub node_reclaims: Vec<NodeReclaimSummary>,
    /// Every periodic image garbage collection that found imagefs at or above its high
    /// threshold, in order.
    pub image_gc_runs: Vec<ImageGcRunSummary>,
    /// Every image the runtime removed (`RemoveImage` took effect), in order.
    pub images_removed: Vec<ImageRemovedSummary>,
    /// The node's filesystems when the run ended.
    pub disk_at_end: DiskSummary,
}

/// One node-level reclaim (`reclaimNodeLevelResources`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReclaimSummary {
    pub at_ns: u64,
    pub signal: String,
    /// Removals issued: dead containers, unused images.
    pub containers_removed: u32,
    pub images_removed: u32,
    /// When the manager measured again, and whether no threshold was met then (absent
    /// while the removals were still unanswered at the end).
    pub done_at_ns: Option<u64>,
    pub relieved: Option<bool>,
}

/// One periodic image garbage collection with something to free.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageGcRunSummary {
    pub at_ns: u64,
    /// imagefs usage in percent when it ran.
    pub usage_percent: u32,
    /// Bytes to free to reach the low threshold.
    pub to_free_bytes: u64,
    /// The images whose removal it issued, in order.
    pub images: Vec<String>,
}

/// One image removal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageRemovedSummary {
    pub at_ns: u64,
    pub image: String,
    pub size_bytes: u64,
}

/// The node's filesystems (on a node without a separate imagefs, imagefs is nodefs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiskSummary {
    pub nodefs_capacity_bytes: u64,
    pub nodefs_available_bytes: u64,
    pub imagefs_capacity_bytes: u64,
    pub imagefs_available_bytes: u64,
}

/// One eviction by the eviction manager.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionSummary {
    pub pod: String,
    pub uid: String,
    pub at_ns: u64,
    pub signal: String,
    /// The grace period override handed to `killPodNow`.
    pub grace_period_seconds: i64,
    /// When `killPodNow` returned, and whether it timed out.
    pub kill_returned_at_ns: Option<u64>,
    pub kill_timed_out: bool,
    /// When the manager saw the pod cleaned up (`PodIsFinished`), if it did.
    pub cleaned_up_at_ns: Option<u64>,
    pub cleanup_timed_out: bool,
    /// The eviction's status message, as upstream words it.
    pub message: String,
}

/// Everything a run produces.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunOutput {
    pub podsim: String,
    pub scenario: String,
    pub scenario_hash: String,
    pub seed: u64,
    /// The profile as the scenario or `--profile` named it (`current` stays `current`).
    pub profile: String,
    /// The release the profile is (`current` is the newest, `v1.31`).
    pub release: String,
    pub upstream_release: String,
    pub behaviours: BTreeMap<String, bool>,
    /// Every feature gate the profile's release has, resolved (release default, then
    /// `spec.kubelet.featureGates`), by the release's name for it.
    pub feature_gates: BTreeMap<String, bool>,
    pub trace_hash: String,
    pub events: u64,
    pub simulated_ns: u64,
    pub stop_reason: String,
    pub findings: Vec<Finding>,
    /// Reach points this run got into (`crate::model::reach`), in table order.
    pub reached: Vec<String>,
    pub pods: Vec<PodSummary>,
    pub metrics: Metrics,
    pub replay: String,
    #[serde(skip)]
    pub trace: Vec<Record>,
    /// The scheduler of same-instant events (`fifo`, `pct:D`), absent for the default
    /// (`random`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
}
