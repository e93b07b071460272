//! Release-specific rules of the kubelet between v1.22 and v1.26 that the v1.31 port
//! replaced, each behind the switch that stands for the replacing change.
//!
//! * The status manager's deletion rule (`podDeletedOnlyWhenTerminal` off): follows
//!   `canBeDeleted` in `pkg/kubelet/status/status_manager.go` and `PodResourcesAreReclaimed`
//!   with `countRunningContainerStatus` in `pkg/kubelet/kubelet_pods.go` of v1.22. There a
//!   pod object with a deletion timestamp is deleted once its resources are reclaimed,
//!   whatever its phase: PR 115331 (v1.27) added the wait for a terminal API phase and for
//!   the end of the pod's termination.

use super::profile::Sw;
use super::Kubelet;
use crate::model::{ApiPod, ApiPodStatus, PodUid};
use std::collections::BTreeSet;

impl Kubelet {
    /// Whether the status manager's deletion rule reads node state (volumes, cgroups, the
    /// pod worker) besides the cached status: v1.21's and v1.22's rules do.
    pub(super) fn deletion_reads_node(&self) -> bool {
        self.legacy() || !self.b.on(Sw::PodDeletedOnlyWhenTerminal)
    }

    /// `canBeDeleted` of v1.22: a deletion timestamp, not a mirror pod, and
    /// `PodResourcesAreReclaimed`: the pod worker says no container can still run, no
    /// container (init or app) is running in the status, no volume is mounted and the pod
    /// cgroup is gone. The phase plays no part.
    pub(super) fn v122_can_be_deleted(
        &self,
        pod: &ApiPod,
        status: &ApiPodStatus,
        cgroups: &BTreeSet<PodUid>,
    ) -> bool {
        let uid = pod.uid;
        pod.deletion_timestamp.is_some()
            && pod.mirror_of.is_none()
            && !self.pw.could_have_running_containers(uid)
            && status
                .containers
                .iter()
                .chain(&status.init_containers.0)
                .all(|c| !c.state.is_running())
            && !self.mounted.contains(&uid)
            && !cgroups.contains(&uid)
    }
}
