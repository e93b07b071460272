//! Status data shared by the runtime, the kubelet and the API server: the runtime's view of
//! a pod (`kubecontainer.PodStatus`) and the API's `v1.PodStatus` subset.

use super::{ContainerId, PodPhase, PodUid, SandboxId};
use crate::sim::SimTime;
use std::sync::Arc;

/// `kubecontainer.State`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RtState {
    Created,
    Running,
    Exited,
    Unknown,
}

/// `kubecontainer.Status` of one runtime container.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RtContainer {
    pub id: ContainerId,
    pub name: Arc<str>,
    pub state: RtState,
    pub exit_code: i32,
    pub reason: &'static str,
    pub created_at: SimTime,
    pub started_at: Option<SimTime>,
    pub finished_at: Option<SimTime>,
    /// The attempt number from the container's labels (restart count).
    pub restart_count: u32,
    /// The sandbox the container was created in (`PodSandboxId`).
    pub sandbox: SandboxId,
}

/// `runtimeapi.PodSandboxStatus` subset.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RtSandbox {
    pub id: SandboxId,
    pub ready: bool,
    pub attempt: u32,
    pub created_at: SimTime,
}

/// `kubecontainer.PodStatus`: what `GetPodStatus` returns. Sandboxes and containers are
/// ordered newest first, as the runtime manager sorts them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RtPodStatus {
    pub uid: Option<PodUid>,
    pub name: Arc<str>,
    pub namespace: Arc<str>,
    pub sandboxes: Vec<RtSandbox>,
    pub containers: Vec<RtContainer>,
}

impl RtPodStatus {
    /// The newest container with this name.
    pub fn find(&self, name: &str) -> Option<&RtContainer> {
        self.containers.iter().find(|c| *c.name == *name)
    }
    pub fn running(&self) -> impl Iterator<Item = &RtContainer> {
        self.containers
            .iter()
            .filter(|c| c.state == RtState::Running)
    }
    pub fn has_running_container(&self) -> bool {
        self.running().next().is_some()
    }
    pub fn has_ready_sandbox(&self) -> bool {
        self.sandboxes.iter().any(|s| s.ready)
    }
}

/// A pod as listed by the runtime (`kubecontainer.Pod`): enough to kill it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunningPod {
    pub uid: PodUid,
    pub name: String,
    pub namespace: String,
    /// Running containers: (id, name).
    pub containers: Vec<(ContainerId, String)>,
    pub sandboxes: Vec<SandboxId>,
}

/// `v1.ContainerState`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ApiContainerState {
    Waiting {
        reason: &'static str,
    },
    Running {
        started_at: SimTime,
    },
    Terminated {
        exit_code: i32,
        reason: &'static str,
        started_at: Option<SimTime>,
        finished_at: Option<SimTime>,
    },
}

impl ApiContainerState {
    pub fn is_terminated(&self) -> bool {
        matches!(self, ApiContainerState::Terminated { .. })
    }
    pub fn is_running(&self) -> bool {
        matches!(self, ApiContainerState::Running { .. })
    }
}

/// `v1.ContainerStatus` subset.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ApiContainerStatus {
    /// The container's name, shared by every status generated for it (a status is
    /// generated on each sync and mostly thrown away unchanged: sharing the name spares
    /// an allocation and a free each time). Compares, hashes and prints as the text.
    pub name: Arc<str>,
    pub state: ApiContainerState,
    pub last_state: Option<ApiContainerState>,
    pub restart_count: u32,
    pub ready: bool,
    /// `started`: running and past its startup probe (or without one).
    pub started: bool,
    pub container_id: Option<ContainerId>,
}

/// `v1.PodStatus` subset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ApiPodStatus {
    pub phase: PodPhase,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub ready: bool,
    pub start_time: Option<SimTime>,
    pub containers: Vec<ApiContainerStatus>,
    /// `status.conditions`. `ready` is the Ready condition's status, kept beside it.
    pub conditions: super::Conditions,
    /// `initContainerStatuses`, in spec order.
    pub init_containers: InitStatuses,
}

/// `initContainerStatuses`. Hashes nothing when empty, so pods without init containers
/// keep the trace hashes they had before init containers were modelled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InitStatuses(pub Vec<ApiContainerStatus>);

impl std::hash::Hash for InitStatuses {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if !self.0.is_empty() {
            self.0.hash(state);
        }
    }
}

impl ApiPodStatus {
    /// The status of the container (init or app) with this name.
    pub fn find_container(&self, name: &str) -> Option<&ApiContainerStatus> {
        self.containers
            .iter()
            .chain(&self.init_containers.0)
            .find(|c| *c.name == *name)
    }

    /// Every container status, app containers first, then init containers.
    pub fn all_statuses_mut(&mut self) -> impl Iterator<Item = &mut ApiContainerStatus> {
        self.containers
            .iter_mut()
            .chain(self.init_containers.0.iter_mut())
    }
}

/// A Pod object as the API server stores it and as the kubelet receives it over the watch.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ApiPod {
    pub uid: PodUid,
    pub spec: Arc<super::PodSpec>,
    /// Index of the scenario pod declaration this object came from.
    pub decl: usize,
    pub created_at: SimTime,
    pub deletion_timestamp: Option<SimTime>,
    pub deletion_grace_period_seconds: Option<i64>,
    /// Shared copy-on-write with the kubelet's status manager cache, the object's watch
    /// copies and the status-patched transition: a status written unchanged is one
    /// allocation, not one per holder.
    pub status: Arc<ApiPodStatus>,
    pub resource_version: u64,
    /// A static pod: its config source is the node's manifest directory, not the API.
    pub static_pod: bool,
    /// A mirror pod (an API object that reflects the static pod with this UID).
    pub mirror_of: Option<PodUid>,
}

impl ApiPod {
    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

impl ApiPod {
    /// A freshly created object for `spec` (no deletion, empty status).
    pub fn new(uid: PodUid, spec: super::PodSpec) -> Self {
        Self::with_spec(uid, Arc::new(spec))
    }

    /// [`ApiPod::new`] sharing an existing spec.
    pub fn with_spec(uid: PodUid, spec: Arc<super::PodSpec>) -> Self {
        ApiPod {
            uid,
            spec,
            decl: 0,
            created_at: SimTime::ZERO,
            deletion_timestamp: None,
            deletion_grace_period_seconds: None,
            status: Arc::default(),
            resource_version: 1,
            static_pod: false,
            mirror_of: None,
        }
    }

    /// `name_namespace`.
    pub fn full_name(&self) -> String {
        self.spec.full_name()
    }
}
