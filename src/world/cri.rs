//! The CRI protocol between the kubelet and the container runtime: the requests
//! (`RuntimeService` and `ImageService` calls, plus the host operations the kubelet's volume
//! and cgroup managers perform), their results, and who is waiting for a reply. The
//! kubelet issues requests through [`super::Ctx::cri`]; the fake runtime
//! ([`super::runtime::Runtime`]) answers them.

use super::Epoch;
use crate::model::{ContainerId, CriCall, CriError, PodUid, RtPodStatus, SandboxId};
use crate::model::{CriFailed, CriFailure, CriOp};
use std::sync::Arc;

/// Who is waiting for a CRI reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Caller {
    /// A pod worker's in-flight sync operation `op`, sub-step `tag`.
    Worker { uid: PodUid, op: u64, tag: u32 },
    /// The PLEG's relist.
    Pleg,
    /// The container deletor (removal of dead containers).
    Deletor,
    /// The image garbage collector's periodic run (`RemoveImage`).
    ImageGc,
    /// The eviction manager's node-level reclaim (dead containers and unused images).
    Reclaim,
}

/// The client of a CRI call: the kubelet incarnation that made it, and who in it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct CriClient {
    pub(crate) epoch: Epoch,
    pub(crate) caller: Caller,
}

/// A CRI request. Its texts are shared (`Arc<str>`): a request is copied into the
/// worker's ledger of calls and into the completion, and a copy costs no allocation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CriReq {
    RunPodSandbox {
        uid: PodUid,
        name: Arc<str>,
        namespace: Arc<str>,
        attempt: u32,
    },
    /// `PullImage` (after the image manager's presence check).
    PullImage {
        uid: PodUid,
        image: Arc<str>,
        always: bool,
    },
    CreateContainer {
        uid: PodUid,
        sandbox: SandboxId,
        name: Arc<str>,
        attempt: u32,
        /// The container's image (what keeps the image in use).
        image: Arc<str>,
    },
    StartContainer {
        uid: PodUid,
        id: ContainerId,
    },
    /// Stop with a SIGTERM-to-SIGKILL timeout in seconds.
    StopContainer {
        uid: PodUid,
        id: ContainerId,
        timeout_s: i64,
    },
    /// Run the container's preStop hook (ExecSync) and wait for it.
    ExecPreStop {
        uid: PodUid,
        id: ContainerId,
    },
    StopPodSandbox {
        uid: PodUid,
        id: SandboxId,
    },
    /// Run the container's postStart hook (ExecSync, an HTTP GET, or the kubelet's own
    /// sleep) and wait for it.
    ExecPostStart {
        uid: PodUid,
        id: ContainerId,
    },
    /// Remove a container (force-removing it if it still runs).
    RemoveContainer {
        uid: PodUid,
        id: ContainerId,
    },
    /// Remove a stopped sandbox that has no containers left (refused otherwise).
    RemovePodSandbox {
        uid: PodUid,
        id: SandboxId,
    },
    /// `RemoveImage`: remove an image from the node (no pod of its own).
    RemoveImage {
        image: Arc<str>,
    },
    /// Host: create the pod's data dirs and cgroup and mount its volumes.
    MountVolumes {
        uid: PodUid,
    },
    /// Host: unmount the pod's volumes.
    UnmountVolumes {
        uid: PodUid,
    },
    /// Host: destroy the pod cgroup (killing any process still in it).
    RemovePodCgroup {
        uid: PodUid,
    },
    /// Host: remove the pod directory (refused while volumes are mounted).
    RemovePodDir {
        uid: PodUid,
    },
    /// `GetPodStatus` for one pod.
    PodStatus {
        uid: PodUid,
    },
    /// PLEG relist: list everything, then inspect pods that changed plus `reinspect`
    /// (every pod the runtime knows when `all`: a PLEG without a previous view, such as a
    /// restarted kubelet's, sees every container as new).
    Relist {
        reinspect: Vec<PodUid>,
        all: bool,
        /// The list is taken when the call is issued and the inspections run when it
        /// completes (`plegTimestampBeforeList: false`): what changed in between is missing
        /// from the inspected statuses and waits for the next relist.
        list_first: bool,
    },
}

impl CriReq {
    pub(crate) fn call(&self) -> CriCall {
        match self {
            CriReq::RunPodSandbox { .. } => CriCall::RunPodSandbox,
            CriReq::PullImage { .. } => CriCall::PullImage,
            CriReq::CreateContainer { .. } => CriCall::CreateContainer,
            CriReq::StartContainer { .. } | CriReq::ExecPostStart { .. } => CriCall::StartContainer,
            CriReq::StopContainer { .. } | CriReq::ExecPreStop { .. } => CriCall::StopContainer,
            CriReq::StopPodSandbox { .. } => CriCall::StopPodSandbox,
            CriReq::RemoveContainer { .. } => CriCall::RemoveContainer,
            CriReq::RemovePodSandbox { .. } => CriCall::RemovePodSandbox,
            CriReq::MountVolumes { .. } => CriCall::MountVolumes,
            CriReq::UnmountVolumes { .. } => CriCall::UnmountVolumes,
            CriReq::RemovePodCgroup { .. } => CriCall::RemovePodCgroup,
            CriReq::RemovePodDir { .. } => CriCall::RemovePodDir,
            CriReq::RemoveImage { .. } => CriCall::RemoveImage,
            CriReq::PodStatus { .. } | CriReq::Relist { .. } => CriCall::PodStatus,
        }
    }
    /// The call's name in the trace.
    pub(crate) fn name(&self) -> CriOp {
        match self {
            CriReq::RunPodSandbox { .. } => CriOp::RunPodSandbox,
            CriReq::PullImage { .. } => CriOp::PullImage,
            CriReq::CreateContainer { .. } => CriOp::CreateContainer,
            CriReq::StartContainer { .. } => CriOp::StartContainer,
            CriReq::StopContainer { .. } => CriOp::StopContainer,
            CriReq::ExecPreStop { .. } => CriOp::ExecPreStop,
            CriReq::ExecPostStart { .. } => CriOp::ExecPostStart,
            CriReq::StopPodSandbox { .. } => CriOp::StopPodSandbox,
            CriReq::RemoveContainer { .. } => CriOp::RemoveContainer,
            CriReq::RemovePodSandbox { .. } => CriOp::RemovePodSandbox,
            CriReq::RemoveImage { .. } => CriOp::RemoveImage,
            CriReq::MountVolumes { .. } => CriOp::MountVolumes,
            CriReq::UnmountVolumes { .. } => CriOp::UnmountVolumes,
            CriReq::RemovePodCgroup { .. } => CriOp::RemovePodCgroup,
            CriReq::RemovePodDir { .. } => CriOp::RemovePodDir,
            CriReq::PodStatus { .. } => CriOp::PodStatus,
            CriReq::Relist { .. } => CriOp::Relist,
        }
    }
    /// The pod a call is about and the trace's target number (an attempt or an id).
    pub(crate) fn uid_target(&self) -> (PodUid, u32) {
        match self {
            CriReq::RunPodSandbox { uid, attempt, .. } => (*uid, *attempt),
            CriReq::PullImage { uid, .. } => (*uid, 0),
            CriReq::CreateContainer { uid, attempt, .. } => (*uid, *attempt),
            CriReq::StartContainer { uid, id } => (*uid, id.0),
            CriReq::StopContainer { uid, id, .. } => (*uid, id.0),
            CriReq::ExecPreStop { uid, id } | CriReq::ExecPostStart { uid, id } => (*uid, id.0),
            CriReq::StopPodSandbox { uid, id } => (*uid, id.0),
            CriReq::RemoveContainer { uid, id } => (*uid, id.0),
            CriReq::RemovePodSandbox { uid, id } => (*uid, id.0),
            CriReq::MountVolumes { uid }
            | CriReq::UnmountVolumes { uid }
            | CriReq::RemovePodCgroup { uid }
            | CriReq::RemovePodDir { uid } => (*uid, 0),
            CriReq::PodStatus { uid } => (*uid, 0),
            CriReq::Relist { .. } | CriReq::RemoveImage { .. } => (PodUid(0), 0),
        }
    }
    /// Whether the call shows in the trace (reads do not).
    pub(crate) fn traced(&self) -> bool {
        !matches!(self, CriReq::Relist { .. } | CriReq::PodStatus { .. })
    }
}

/// The result of a CRI call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum CriResult {
    Ok,
    Err(CriError),
    /// The call failed for a reason of the runtime's state (not an injected fault).
    Failed(CriFailed),
    SandboxCreated(SandboxId),
    ContainerCreated(ContainerId),
    PodStatus(Arc<RtPodStatus>),
    /// Per inspected pod: its status, or the error of its inspection.
    Relist(Vec<(PodUid, Result<Arc<RtPodStatus>, CriError>)>),
}

impl CriResult {
    pub(crate) fn error(&self) -> Option<&'static str> {
        self.failure().map(CriFailure::as_str)
    }
    /// How the call failed, if it did.
    pub(crate) fn failure(&self) -> Option<CriFailure> {
        match self {
            CriResult::Err(e) => Some(CriFailure::Code(*e)),
            CriResult::Failed(m) => Some(CriFailure::Failed(*m)),
            _ => None,
        }
    }
}
