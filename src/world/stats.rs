//! Resource statistics as the kubelet's stats provider reports them (the summary API that
//! cAdvisor / the CRI stats provider serve, `k8s.io/kubelet/pkg/apis/stats/v1alpha1`),
//! reduced to memory, which is all the eviction manager reads.
//!
//! The model (podsim's choice; the interface leaves it open): a container's working set is
//! its `behaviour.memoryUsage` while it runs and nothing once it exited; a pod has stats
//! while it has a ready sandbox or a running container (its cgroup exists); the node's
//! working set is the sum over running containers and `memory.available` is the node's
//! memory capacity minus that. A `memoryPressure: {available: Q}` timeline action overrides
//! the node figure: from then on `memory.available` is Q (and the node working set is
//! capacity minus Q) until another `memoryPressure` action, whatever the pods use. Pod and
//! container figures stay the containers' own, so ranking still works. Stats are fresh at
//! every call (the eviction manager asks with `updateStats`).
//!
//! Disk, inodes and processes (podsim's model, after what cAdvisor and the CRI stats
//! provider report): a container's writable layer and logs use its `behaviour.diskUsage`
//! and `inodes` (growing from its start while it runs, frozen when it exits, gone when it
//! is removed); an emptyDir uses its `behaviour.volumes.<name>.usage` while the pod's
//! volumes are mounted (growing from the mount); a pulled image uses its size
//! (`spec.runtime.images`, default 500Mi) until it is removed. With a separate imagefs the
//! images and writable layers are on it and nodefs holds the emptyDirs; otherwise all is on
//! nodefs and the imagefs figures are nodefs's. A running container runs `behaviour.pids`
//! processes; `pid.available` is `spec.node.maxPids` minus their sum. `diskPressure` and
//! `pidPressure` actions pin the node figures as `memoryPressure` does.

use crate::model::PodUid;
use crate::sim::SimTime;

/// `statsapi.Summary`, memory only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StatsSummary {
    /// When the figures were taken (`MemoryStats.Time`).
    pub(crate) time: SimTime,
    /// `Node.Memory.AvailableBytes`.
    pub(crate) node_available_bytes: u64,
    /// `Node.Memory.WorkingSetBytes`.
    pub(crate) node_working_set_bytes: u64,
    /// `Pods`, in UID order.
    pub(crate) pods: Vec<PodStats>,
    /// `Node.Fs`, `Node.Runtime.ImageFs` and `Node.Rlimit`.
    pub(crate) disk: NodeDisk,
}

/// A filesystem's figures (`statsapi.FsStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FsStats {
    pub(crate) capacity_bytes: u64,
    pub(crate) available_bytes: u64,
    pub(crate) inodes: u64,
    pub(crate) inodes_free: u64,
}

/// The node's filesystems and process limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NodeDisk {
    pub(crate) nodefs: FsStats,
    pub(crate) imagefs: FsStats,
    /// Whether imagefs is a filesystem of its own.
    pub(crate) separate_imagefs: bool,
    /// `Rlimit.MaxPID` and `MaxPID - NumOfRunningProcesses`.
    pub(crate) max_pids: u64,
    pub(crate) pids_available: u64,
}

/// A running container's local storage (`ContainerStats.Rootfs`/`Logs`, summed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ContainerFs {
    pub(crate) name: String,
    pub(crate) used_bytes: u64,
    pub(crate) inodes_used: u64,
}

/// `statsapi.PodStats`, memory only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PodStats {
    pub(crate) uid: PodUid,
    /// `Memory.WorkingSetBytes` of the pod (sum of its running containers).
    pub(crate) working_set_bytes: u64,
    /// `Containers[]`: (name, working set) of each running container.
    pub(crate) containers: Vec<(String, u64)>,
    /// `Containers[]`' rootfs and logs, of each running container.
    pub(crate) container_fs: Vec<ContainerFs>,
    /// `VolumeStats`: (name, used bytes) of each emptyDir volume, in spec order.
    pub(crate) volumes: Vec<(String, u64)>,
    /// `ProcessStats.ProcessCount`.
    pub(crate) processes: u64,
}
