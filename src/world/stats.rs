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
}

/// `statsapi.PodStats`, memory only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PodStats {
    pub(crate) uid: PodUid,
    /// `Memory.WorkingSetBytes` of the pod (sum of its running containers).
    pub(crate) working_set_bytes: u64,
    /// `Containers[]`: (name, working set) of each running container.
    pub(crate) containers: Vec<(String, u64)>,
}
