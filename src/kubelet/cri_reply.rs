//! A pod worker's sync operation waiting on the runtime: the CRI replies it gets, the
//! PreStop hook's timeout, where an operation is parked between calls, and how it ends
//! (the reply half of `sync.rs`; the same upstream files: `kuberuntime_container.go`
//! `killContainer`/`killContainersWithSyncResult`, `kuberuntime_manager.go` `SyncPod`
//! steps 4-6 and `KillPod`, v1.31).
//!
//! Debug builds enter every CRI call a worker makes in `Kubelet::worker_calls` and check
//! every reply against it: a reply matches a call of the same operation, step tag and
//! request, and an operation ends with no call awaiting a reply but abandoned hooks. Every
//! build checks that a reply reaches an operation that is still in flight (only a PreStop
//! hook the operation stopped waiting for may answer later, and is then ignored, as
//! upstream abandons the hook's goroutine). The ledger decides nothing: release builds
//! keep none (a B-tree insert, a copy of the request and a removal per call).

use super::pod_workers::SyncError;
pub(super) use super::sync::MIN_CONTAINER_GRACE as MIN_GRACE;
use super::sync::{KillStage, Op, StartStage};
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::NoteKind;
use crate::model::{ContainerId, PodUid, RtState, SyncKind, Transition};
use crate::world::cri::{CriReq, CriResult};
use crate::world::Caller;
use std::sync::Arc;

impl Kubelet {
    /// A worker's CRI call (`Caller::Worker`), entered in the ledger of calls awaiting a
    /// reply.
    pub(super) fn worker_cri(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op: u64,
        tag: u32,
        req: CriReq,
    ) {
        // Usually the step's only call: kept in the ledger entry itself (debug builds).
        #[cfg(debug_assertions)]
        match self.worker_calls.entry((uid, op, tag)) {
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(StepCalls::One(req.clone()));
            }
            std::collections::btree_map::Entry::Occupied(mut e) => e.get_mut().push(req.clone()),
        }
        ctx.cri(Caller::Worker { uid, op, tag }, req);
    }

    /// Strike the call a reply answers off the ledger. Precondition of every reply: it
    /// answers a call this worker operation made (same operation, step tag and request)
    /// and that had no reply yet. A check only: debug builds.
    #[cfg(debug_assertions)]
    fn strike_worker_call(&mut self, uid: PodUid, op_id: u64, tag: u32, req: &CriReq) {
        // One search of the ledger: the entry is edited, or removed when emptied, in place.
        let entry = match self.worker_calls.entry((uid, op_id, tag)) {
            std::collections::btree_map::Entry::Occupied(e) => Some(e),
            std::collections::btree_map::Entry::Vacant(_) => None,
        };
        let found = entry.and_then(|mut e| {
            let emptied = e.get_mut().remove(req)?;
            Some((e, emptied))
        });
        assert!(
            found.is_some(),
            "CRI reply rule broken: a reply to pod {uid} op {op_id} tag {tag} ({req:?}) \
             answers no call of that operation and step awaiting a reply"
        );
        if let Some((e, true)) = found {
            e.remove();
        }
    }

    /// The calls of operation `op_id` still awaiting a reply.
    #[cfg(debug_assertions)]
    fn outstanding_calls(&self, uid: PodUid, op_id: u64) -> impl Iterator<Item = &CriReq> {
        self.worker_calls
            .range((uid, op_id, 0)..=(uid, op_id, u32::MAX))
            .flat_map(|(_, v)| v.iter())
    }

    pub(super) fn kill_next_sandbox(&mut self, ctx: &mut Ctx, uid: PodUid, mut op: Box<Op>) {
        let ks = op.kill.as_mut().expect("kill in progress");
        if let Some(sb) = ks.sandboxes.pop_front() {
            self.worker_cri(
                ctx,
                uid,
                op.id,
                sb.0,
                CriReq::StopPodSandbox { uid, id: sb },
            );
            self.park_op(uid, op);
            return;
        }
        let ks = op.kill.take().expect("kill in progress");
        if !ks.errors.is_empty() {
            let e = format!(
                "failed to \"KillPodSandbox\" or \"KillContainer\": {}",
                ks.errors.join("; ")
            );
            match op.kind {
                SyncKind::SyncPod => op.fatal = Some(e),
                SyncKind::SyncTerminatingPod
                | SyncKind::SyncTerminatingRuntimePod
                | SyncKind::SyncTerminatedPod => op.fatal = Some(format!("FailedToKillPod: {e}")),
            }
        }
        self.advance(ctx, uid, op);
    }

    /// A CRI reply for a worker's operation.
    pub(super) fn worker_on_cri(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        tag: u32,
        req: CriReq,
        result: CriResult,
    ) {
        #[cfg(debug_assertions)]
        self.strike_worker_call(uid, op_id, tag, &req);
        let Some(op) = self.take_op(uid, op_id) else {
            assert!(
                matches!(
                    req,
                    CriReq::ExecPreStop { .. } | CriReq::ExecPostStart { .. }
                ),
                "CRI reply rule broken: a reply reaches its operation while it is in flight \
                 (only a PreStop hook the operation stopped waiting for, or a cancelled \
                 postStart hook, answers later): pod {uid} op {op_id} tag {tag} {req:?}"
            );
            return;
        };
        match req {
            CriReq::ExecPreStop { id, .. } => self.prestop_done(ctx, uid, op, id),
            CriReq::StopContainer { .. } | CriReq::StopPodSandbox { .. } => {
                self.on_kill_reply(ctx, uid, op, req, result)
            }
            CriReq::RunPodSandbox { .. }
            | CriReq::PullImage { .. }
            | CriReq::CreateContainer { .. }
            | CriReq::StartContainer { .. } => self.on_start_reply(ctx, uid, op, tag, req, result),
            CriReq::ExecPostStart { id, .. } => self.post_start_done(ctx, uid, op, id, result),
            CriReq::PodStatus { .. } => self.on_verify_stopped_reply(ctx, uid, op, result),
            CriReq::MountVolumes { .. }
            | CriReq::UnmountVolumes { .. }
            | CriReq::RemovePodCgroup { .. }
            | CriReq::Relist { .. }
            | CriReq::RemoveContainer { .. }
            | CriReq::RemovePodSandbox { .. }
            | CriReq::RemovePodDir { .. }
            | CriReq::RemoveImage { .. } => self.on_host_reply(ctx, uid, op, req, result),
        }
    }

    /// `StopContainer` or `StopPodSandbox` answered (`KillPod`).
    fn on_kill_reply(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        req: CriReq,
        result: CriResult,
    ) {
        assert!(
            op.kill.is_some(),
            "CRI reply rule broken: a stop reply reaches an operation that is killing (pod {uid})"
        );
        let ks = op.kill.as_mut().expect("checked");
        match req {
            CriReq::StopContainer { id, .. } => {
                if ks.pending.remove(&id).is_none() {
                    self.park_op(uid, op);
                    return;
                }
                if let Some(e) = result.error() {
                    ks.errors.push(format!("StopContainer {id}: {e}"));
                    ks.unstopped.push(id);
                    ctx.reach(crate::model::reach::Reach::CriErrorWhileTerminating);
                }
                self.release_turns(ctx, uid, &mut op);
                let ks = op.kill.as_mut().expect("checked");
                if ks.pending.is_empty() {
                    self.kill_next_sandbox(ctx, uid, op);
                } else {
                    self.park_op(uid, op);
                }
            }
            CriReq::StopPodSandbox { id, .. } => {
                if let Some(e) = result.error() {
                    ctx.reach(crate::model::reach::Reach::CriErrorWhileTerminating);
                    ks.errors.push(format!("StopPodSandbox {id}: {e}"));
                }
                self.kill_next_sandbox(ctx, uid, op);
            }
            _ => unreachable!("only stop replies come here"),
        }
    }

    /// A reply of the sandbox creation or of a container start (pull, create, start).
    fn on_start_reply(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        tag: u32,
        req: CriReq,
        result: CriResult,
    ) {
        let stage = op.start.map(|(_, s)| s);
        let expected = match &req {
            CriReq::RunPodSandbox { .. } => stage.is_none(),
            CriReq::PullImage { .. } => matches!(stage, Some(StartStage::Pull)),
            CriReq::CreateContainer { .. } => matches!(stage, Some(StartStage::Create)),
            _ => matches!(stage, Some(StartStage::Start)),
        };
        assert!(
            expected,
            "CRI reply rule broken: a start reply matches the stage of the container start \
             in progress (pod {uid}, stage {stage:?}, {req:?})"
        );
        match req {
            CriReq::RunPodSandbox { .. } => match result {
                CriResult::SandboxCreated(id) => {
                    op.sandbox = Some(id);
                    self.advance(ctx, uid, op);
                }
                other => {
                    let terminating = self.pw.is_pod_termination_requested(uid);
                    if !terminating {
                        op.fatal = Some(format!(
                            "CreatePodSandboxError: {}",
                            other.error().unwrap_or("unknown")
                        ));
                    } else {
                        op.plan.clear();
                    }
                    self.advance(ctx, uid, op);
                }
            },
            CriReq::PullImage { image, .. } => {
                let (idx, _) = op.start.expect("start in progress");
                let name = &op.pod.spec.container_at(idx).name;
                if let Some(e) = result.error() {
                    // The back-off key is needed only when the pull failed.
                    let key = super::sync::image_backoff_key(uid, &image);
                    self.image_backoff.next(&key, ctx.now(), ctx.now());
                    self.reason_cache.set(uid, name, "ErrImagePull");
                    op.errors.push(format!("ErrImagePull: {e}"));
                    op.start = None;
                    self.advance(ctx, uid, op);
                    return;
                }
                let sandbox = op.sandbox.expect("sandbox exists");
                let attempt = op.status.find(name).map_or(0, |c| c.restart_count + 1);
                let create = CriReq::CreateContainer {
                    uid,
                    sandbox,
                    name: Arc::from(name.as_str()),
                    attempt,
                    image,
                };
                op.start = Some((idx, StartStage::Create));
                self.worker_cri(ctx, uid, op.id, tag, create);
                self.park_op(uid, op);
            }
            CriReq::CreateContainer { name, .. } => match result {
                CriResult::ContainerCreated(id) => {
                    let (idx, _) = op.start.expect("start in progress");
                    op.start = Some((idx, StartStage::Start));
                    self.worker_cri(ctx, uid, op.id, tag, CriReq::StartContainer { uid, id });
                    self.park_op(uid, op);
                }
                other => {
                    self.reason_cache.set(uid, &name, "CreateContainerError");
                    op.errors.push(format!(
                        "CreateContainerError: {}",
                        other.error().unwrap_or("unknown")
                    ));
                    op.start = None;
                    self.advance(ctx, uid, op);
                }
            },
            CriReq::StartContainer { id, .. } => {
                let (idx, _) = op.start.take().expect("start in progress");
                let name = &op.pod.spec.container_at(idx).name;
                if let Some(e) = result.error() {
                    self.reason_cache.set(uid, name, "RunContainerError");
                    op.errors.push(format!("RunContainerError: {e}"));
                } else if op.pod.spec.container_at(idx).post_start.0.is_some() {
                    self.run_post_start(ctx, uid, op, (idx, id, tag));
                    return;
                } else {
                    self.reason_cache.remove(uid, name);
                }
                self.advance(ctx, uid, op);
            }
            _ => unreachable!("only start replies come here"),
        }
    }

    /// `SyncTerminatingPod`: the direct `GetPodStatus` that verifies nothing runs any more.
    fn on_verify_stopped_reply(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        result: CriResult,
    ) {
        op.plan.pop_front();
        match result {
            CriResult::PodStatus(stopped) => {
                if stopped
                    .containers
                    .iter()
                    .any(|c| c.state == RtState::Running)
                {
                    op.fatal =
                        Some("detected running containers after a successful KillPod".into());
                } else {
                    let api = self.generate_api_pod_status(ctx, &op.pod, &stopped, true);
                    let pod = op.pod.clone();
                    self.set_pod_status(ctx, &pod, api);
                }
            }
            other => {
                op.fatal = Some(format!(
                    "GetPodStatus: {}",
                    other.error().unwrap_or("unknown")
                ));
            }
        }
        self.advance(ctx, uid, op);
    }

    /// A host call answered: volume mount or unmount, pod cgroup removal.
    fn on_host_reply(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        req: CriReq,
        result: CriResult,
    ) {
        match req {
            CriReq::MountVolumes { .. } => {
                match result.error() {
                    None => {
                        let pod = op.pod.clone();
                        match self.mount_set_up(ctx, &pod) {
                            Ok(()) => {
                                self.mounted.insert(uid);
                            }
                            Err(e) => op.fatal = Some(e),
                        }
                    }
                    Some(e) => op.fatal = Some(format!("FailedMountVolume: {e}")),
                }
                self.advance(ctx, uid, op);
            }
            CriReq::UnmountVolumes { .. } => {
                match result.error() {
                    None => {
                        self.mounted.remove(&uid);
                    }
                    Some(e) => op.fatal = Some(format!("UnmountVolumes: {e}")),
                }
                self.advance(ctx, uid, op);
            }
            CriReq::RemovePodCgroup { .. } => {
                if let Some(e) = result.error() {
                    op.fatal = Some(format!("failed to delete cgroup paths: {e}"));
                }
                self.advance(ctx, uid, op);
            }
            _ => self.park_op(uid, op),
        }
    }

    /// The PreStop hook returned, or its grace ran out.
    fn prestop_done(&mut self, ctx: &mut Ctx, uid: PodUid, mut op: Box<Op>, id: ContainerId) {
        let Some(ks) = op.kill.as_mut() else {
            self.park_op(uid, op);
            return;
        };
        let Some(KillStage::PreStop {
            started,
            grace,
            then,
        }) = ks.pending.get(&id).cloned()
        else {
            self.park_op(uid, op);
            return;
        };
        let elapsed = ctx.now().since(started).whole_secs() as i64;
        // Before PR 115835 an override replaces the grace left, with no minimum.
        let (g, min) = then.map_or((grace - elapsed, MIN_GRACE), |o| (o, 0));
        self.stop_or_wait(ctx, uid, &mut op, id, g, min);
        self.park_op(uid, op);
    }

    /// A PreStop hook ran out of grace: it is abandoned and the stop goes on.
    pub(super) fn prestop_timeout(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        id: ContainerId,
    ) {
        let Some(op) = self.take_op(uid, op_id) else {
            return;
        };
        let in_hook = op
            .kill
            .as_ref()
            .is_some_and(|k| matches!(k.pending.get(&id), Some(KillStage::PreStop { .. })));
        if !in_hook {
            self.park_op(uid, op);
            return;
        }
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::PreStopTimedOut,
        });
        self.prestop_done(ctx, uid, op, id);
    }

    /// Park an operation waiting for a reply (the pod worker's, in its record; or the
    /// v1.21 pod killer's).
    pub(super) fn park_op(&mut self, uid: PodUid, op: Box<Op>) {
        let id = op.id;
        let killer = op.killer;
        let other = if killer {
            self.legacy.killer_ops.insert(uid, op).map(|o| o.id)
        } else {
            // A worker's operation runs while its record holds its id (`begin_sync` to
            // `end_sync`), and a record is dropped only when none does: the record exists.
            // The record is taken unlogged: its change logs' readers do not read `parked`.
            let Some(st) = self.pw.records.get_mut_unlogged(&uid) else {
                panic!(
                    "sync operation rule broken: a worker's operation is parked while its \
                     pod has a record (pod {uid}, op {id})"
                );
            };
            debug_assert_eq!(
                st.op,
                Some(id),
                "sync operation rule broken: the operation parked for pod {uid} is the one \
                 its worker runs"
            );
            // Parked in its box (`spare.rs`): no copy of the operation.
            st.parked.replace(op).map(|o| o.id)
        };
        assert!(
            other.is_none_or(|o| o == id),
            "sync operation rule broken: a pod worker (or pod-killer goroutine) has one \
             operation in flight (pod {uid}, op {id}, killer {killer})"
        );
    }

    /// The parked operation `op_id` of `uid`, if it is still in flight.
    pub(super) fn take_op(&mut self, uid: PodUid, op_id: u64) -> Option<Box<Op>> {
        // One array look-up: the worker's record, where its operation is parked.
        if let Some(st) = self.pw.records.get_mut_unlogged(&uid) {
            if st.parked.as_ref().is_some_and(|p| p.id == op_id) {
                debug_assert_eq!(
                    st.op,
                    Some(op_id),
                    "sync operation rule broken: the operation parked for pod {uid} is the \
                     one its worker runs"
                );
                return st.parked.take();
            }
        }
        if self
            .legacy
            .killer_ops
            .get(&uid)
            .is_some_and(|o| o.id == op_id)
        {
            return self.legacy.killer_ops.remove(&uid);
        }
        None
    }

    /// An operation ended: report it to the pod worker (a failure's class read from its
    /// message, as `completeWork` does).
    pub(super) fn end_op(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op: Box<Op>,
        result: Result<bool, String>,
    ) {
        let class = result.as_ref().err().map(|e| SyncError::of(e));
        self.end_op_as(ctx, uid, op, result, class);
    }

    /// [`Kubelet::end_op`] of a failure whose class the caller knows (`None`: success).
    pub(super) fn end_op_as(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op: Box<Op>,
        result: Result<bool, String>,
        class: Option<SyncError>,
    ) {
        debug_assert_eq!(
            class,
            result.as_ref().err().map(|e| SyncError::of(e)),
            "sync error rule broken: a failure's known class is the class of its message \
             (pod {uid})"
        );
        // A check only (a range query of the ledger at every end): debug builds.
        #[cfg(debug_assertions)]
        {
            let left = self
                .outstanding_calls(uid, op.id)
                .find(|r| !matches!(r, CriReq::ExecPreStop { .. } | CriReq::ExecPostStart { .. }));
            assert!(
                left.is_none(),
                "sync operation rule broken: an operation ends with no CRI call awaiting a \
                 reply but abandoned PreStop or cancelled postStart hooks (pod {uid}, op {}, \
                 {left:?})",
                op.id
            );
        }
        if op.killer {
            self.legacy_killer_done(ctx, uid, result);
            self.spare_ops.retire(op);
            return;
        }
        // The worker needs only the error's class; the message moves into the transition.
        let (result, error) = match (result, class) {
            (Ok(b), _) => (Ok(b), None),
            (Err(e), Some(class)) => (Err(class), Some(e)),
            (Err(e), None) => (Err(SyncError::of(&e)), Some(e)),
        };
        let end = Transition::SyncEnd {
            uid,
            kind: op.kind,
            error,
        };
        // Emitted by reference (no hint: hashed as `emit` does) to take the text back.
        ctx.emit_hinted(&end, 0);
        if let Transition::SyncEnd { error: Some(e), .. } = end {
            self.recycle_message(e);
        }
        let _ = op.grace;
        self.finish_work(ctx, uid, op.id, &op.work, result);
        self.spare_ops.retire(op);
    }
}

/// The calls of one step of a worker's operation that await a reply, in the order they
/// were made. Almost every step makes one call, which is kept inline (no list to
/// allocate); a second call turns the entry into a list.
#[derive(Clone, Debug)]
#[cfg_attr(not(debug_assertions), allow(dead_code))]
pub(crate) enum StepCalls {
    One(CriReq),
    Many(Vec<CriReq>),
}

#[cfg_attr(not(debug_assertions), allow(dead_code))]
impl StepCalls {
    /// Enter one more call.
    fn push(&mut self, req: CriReq) {
        match self {
            StepCalls::One(_) => {
                let StepCalls::One(first) = std::mem::replace(self, StepCalls::Many(Vec::new()))
                else {
                    unreachable!("matched above")
                };
                *self = StepCalls::Many(vec![first, req]);
            }
            StepCalls::Many(v) => v.push(req),
        }
    }

    /// Strike off the first call equal to `req`: `None` when there is none, else whether
    /// no call is left.
    fn remove(&mut self, req: &CriReq) -> Option<bool> {
        match self {
            StepCalls::One(r) => (r == req).then_some(true),
            StepCalls::Many(v) => {
                let i = v.iter().position(|r| r == req)?;
                v.remove(i);
                Some(v.is_empty())
            }
        }
    }

    /// The calls, oldest first.
    fn iter(&self) -> std::slice::Iter<'_, CriReq> {
        match self {
            StepCalls::One(r) => std::slice::from_ref(r).iter(),
            StepCalls::Many(v) => v.iter(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stop(id: u32) -> CriReq {
        CriReq::StopContainer {
            uid: PodUid(1),
            id: ContainerId(id),
            timeout_s: 30,
        }
    }

    #[test]
    fn step_calls_keep_order_and_strike_the_first_equal_call() {
        let mut calls = StepCalls::One(stop(1));
        assert_eq!(calls.remove(&stop(2)), None);
        calls.push(stop(2));
        calls.push(stop(1));
        let ids: Vec<_> = calls.iter().map(CriReq::uid_target).collect();
        assert_eq!(ids, [(PodUid(1), 1), (PodUid(1), 2), (PodUid(1), 1)]);
        assert_eq!(calls.remove(&stop(1)), Some(false));
        let ids: Vec<_> = calls.iter().map(CriReq::uid_target).collect();
        assert_eq!(ids, [(PodUid(1), 2), (PodUid(1), 1)]);
        assert_eq!(calls.remove(&stop(3)), None);
        assert_eq!(calls.remove(&stop(2)), Some(false));
        assert_eq!(calls.remove(&stop(1)), Some(true));
    }

    #[test]
    fn a_single_call_is_inline_and_struck_whole() {
        let mut calls = StepCalls::One(stop(7));
        assert_eq!(calls.iter().count(), 1);
        assert_eq!(calls.remove(&stop(7)), Some(true));
    }
}
