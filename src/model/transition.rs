//! Transitions: what every component reports as it happens. They go into the trace (and
//! its hash) and, later, to the oracle. Display is the compact human-readable record.

use super::{ContainerId, PodPhase, PodUid, SandboxId};
use std::fmt;

/// One observable transition of the world or the kubelet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Transition {
    // ---- API server (ground truth) ----
    ApiCreated {
        uid: PodUid,
        name: String,
    },
    ApiDeleteRequested {
        uid: PodUid,
        grace: i64,
    },
    ApiForceDeleted {
        uid: PodUid,
    },
    ApiStatus {
        uid: PodUid,
        phase: PodPhase,
        reason: Option<String>,
    },
    ApiRemoved {
        uid: PodUid,
        by: &'static str,
    },
    WatchDelivered {
        uid: PodUid,
        kind: &'static str,
    },
    // ---- runtime (ground truth) ----
    CriBegin {
        uid: PodUid,
        call: &'static str,
        target: u32,
    },
    CriEnd {
        uid: PodUid,
        call: &'static str,
        target: u32,
        error: Option<&'static str>,
    },
    SandboxReady {
        uid: PodUid,
        id: SandboxId,
    },
    SandboxStopped {
        uid: PodUid,
        id: SandboxId,
    },
    ContainerRunning {
        uid: PodUid,
        id: ContainerId,
        name: String,
    },
    Signal {
        uid: PodUid,
        id: ContainerId,
        signal: &'static str,
    },
    ContainerExited {
        uid: PodUid,
        id: ContainerId,
        code: i32,
        reason: &'static str,
    },
    /// A host operation took effect (volumes mounted/unmounted, cgroup or pod dir removed).
    Host {
        uid: PodUid,
        what: &'static str,
    },
    // ---- kubelet ----
    ConfigOp {
        uid: PodUid,
        op: &'static str,
    },
    UpdatePod {
        uid: PodUid,
        ty: &'static str,
        runtime_only: bool,
    },
    Worker {
        uid: PodUid,
        what: &'static str,
    },
    SyncBegin {
        uid: PodUid,
        kind: &'static str,
        grace: Option<i64>,
    },
    SyncEnd {
        uid: PodUid,
        kind: &'static str,
        error: Option<String>,
    },
    LocalStatus {
        uid: PodUid,
        phase: PodPhase,
    },
    Relist {
        changed: u32,
    },
    Housekeeping,
    Note {
        uid: PodUid,
        what: &'static str,
    },
    /// The kubelet process of incarnation `epoch` crashed or started.
    KubeletProcess {
        what: &'static str,
        epoch: u32,
    },
}

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Transition::*;
        match self {
            ApiCreated { uid, name } => write!(f, "api {uid} created {name}"),
            ApiDeleteRequested { uid, grace } => write!(f, "api {uid} delete grace={grace}s"),
            ApiForceDeleted { uid } => write!(f, "api {uid} force-deleted"),
            ApiStatus { uid, phase, reason } => match reason {
                Some(r) => write!(f, "api {uid} status {phase} ({r})"),
                None => write!(f, "api {uid} status {phase}"),
            },
            ApiRemoved { uid, by } => write!(f, "api {uid} removed by {by}"),
            WatchDelivered { uid, kind } => write!(f, "watch {uid} {kind}"),
            CriBegin { uid, call, target } => write!(f, "cri {uid} {call}#{target} begin"),
            CriEnd {
                uid,
                call,
                target,
                error,
            } => match error {
                Some(e) => write!(f, "cri {uid} {call}#{target} error {e}"),
                None => write!(f, "cri {uid} {call}#{target} ok"),
            },
            SandboxReady { uid, id } => write!(f, "rt {uid} sandbox {id} ready"),
            SandboxStopped { uid, id } => write!(f, "rt {uid} sandbox {id} stopped"),
            ContainerRunning { uid, id, name } => write!(f, "rt {uid} {id} {name} running"),
            Signal { uid, id, signal } => write!(f, "rt {uid} {id} {signal}"),
            ContainerExited {
                uid,
                id,
                code,
                reason,
            } => write!(f, "rt {uid} {id} exited code={code} {reason}"),
            Host { uid, what } => write!(f, "host {uid} {what}"),
            ConfigOp { uid, op } => write!(f, "config {uid} {op}"),
            UpdatePod {
                uid,
                ty,
                runtime_only,
            } => {
                if *runtime_only {
                    write!(f, "pw {uid} UpdatePod {ty} (runtime pod)")
                } else {
                    write!(f, "pw {uid} UpdatePod {ty}")
                }
            }
            Worker { uid, what } => write!(f, "pw {uid} {what}"),
            SyncBegin { uid, kind, grace } => match grace {
                Some(g) => write!(f, "sync {uid} {kind} begin grace={g}"),
                None => write!(f, "sync {uid} {kind} begin"),
            },
            SyncEnd { uid, kind, error } => match error {
                Some(e) => write!(f, "sync {uid} {kind} error: {e}"),
                None => write!(f, "sync {uid} {kind} ok"),
            },
            LocalStatus { uid, phase } => write!(f, "status {uid} local {phase}"),
            Relist { changed } => write!(f, "pleg relist changed={changed}"),
            Housekeeping => write!(f, "housekeeping"),
            KubeletProcess { what, epoch } => write!(f, "kubelet#{epoch} {what}"),
            Note { uid, what } => write!(f, "note {uid} {what}"),
        }
    }
}
