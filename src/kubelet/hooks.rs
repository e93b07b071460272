//! Lifecycle hooks around a container's start and stop: the postStart hook run right after
//! `StartContainer` (and the kill when it fails), and the preStop handler that cannot run.
//!
//! Follows v1.31 `pkg/kubelet/kuberuntime/kuberuntime_container.go` (`startContainer` step
//! 4, `killContainer`/`executePreStopHook`) and `pkg/kubelet/lifecycle/handlers.go` (the
//! handler runner): the postStart hook runs synchronously inside the pod worker's
//! `SyncPod`, so the next container's start, the next sync (and with it the status write
//! that would show the container Running) and a deletion's kill all wait until it
//! returns. The runtime part of `SyncPod` runs on a context that is never cancelled, so a
//! deletion cannot cut a long postStart hook short (upstream issue 116032, still open in
//! v1.31; race catalog 32). Switch `postStartCancelledByDeletion` (on in no profile) models
//! the fix the issue asks for: the pod worker's cancel reaches the hook, SyncPod returns at
//! once and `SyncTerminatingPod` stops the container within its grace. A failing hook records `FailedPostStartHook`, kills the container through the
//! ordinary `killContainer` path (the pod's grace and its preStop hook, no override), and
//! fails the start with `PostStartHookError`; the sync goes on with the next container and
//! the container restarts under the restart policy with back-off. The handler runner has
//! no case for `tcpSocket`: such a hook fails at once (podsim still traces it as an
//! `ExecPostStart` call, which the runtime fails at once, so the trace and the timeline
//! show the attempt).

use super::profile::Sw;
use super::sync::{KillPlan, Op, StartStage, Step};
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::SyncKind;
use crate::model::{ContainerId, ContainerSpec, HookHandler, NoteKind, PodUid, Transition};
use crate::sim::Dur;
use crate::world::cri::{CriReq, CriResult};

/// The start error upstream's `ErrPostStartHook` gives the container's waiting reason.
const POST_START_HOOK_ERROR: &str = "PostStartHookError";

/// A preStop hook that fails at once (`tcpSocket`): records `FailedPreStopHook` and says
/// so; the stop then goes on with the whole grace.
pub(super) fn pre_stop_fails_at_once(
    ctx: &mut Ctx,
    uid: PodUid,
    spec: Option<&ContainerSpec>,
) -> bool {
    let fails = spec.is_some_and(|c| c.pre_stop.0 == Some(HookHandler::TcpSocket));
    if fails {
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::FailedPreStopHook,
        });
    }
    fails
}

impl Kubelet {
    /// `StartContainer` returned for container `idx` (runtime id `id`), which has a
    /// postStart hook: run it, and keep the sync waiting on it.
    pub(super) fn run_post_start(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        (idx, id, tag): (usize, ContainerId, u32),
    ) {
        op.start = Some((idx, StartStage::PostStart));
        self.worker_cri(ctx, uid, op.id, tag, CriReq::ExecPostStart { uid, id });
        let op_id = op.id;
        self.park_op(uid, op);
        // With the fix for issue 116032, a context cancelled before the hook began ends
        // the wait at once.
        if self.b.on(Sw::PostStartCancelledByDeletion)
            && self.pw.records.get(&uid).is_some_and(|s| s.cancelled)
        {
            let _ = ctx.after(Dur::ZERO, KEv::PostStartCancelled { uid, op: op_id });
        }
    }

    /// Switch `postStartCancelledByDeletion`: the pod worker cancelled the context of the
    /// sync in flight; if it waits on a postStart hook, that wait ends (at once, as an
    /// event of its own, so the update that cancelled it finishes first).
    pub(super) fn cancel_post_start(&mut self, ctx: &mut Ctx, uid: PodUid) {
        let Some(op) = self.parked_op(uid) else {
            return;
        };
        if op.kind != SyncKind::SyncPod || !matches!(op.start, Some((_, StartStage::PostStart))) {
            return;
        }
        ctx.reach(Reach::DeleteDuringPostStart);
        if self.b.on(Sw::PostStartCancelledByDeletion) {
            let _ = ctx.after(Dur::ZERO, KEv::PostStartCancelled { uid, op: op.id });
        }
    }

    /// The cancelled SyncPod `op_id` of `uid` stops waiting on its postStart hook, if it
    /// still does: the hook's exec is abandoned (its reply is dropped when it comes, and
    /// the process dies with its container), and SyncPod returns with the context's error
    /// so the pod worker goes on to `SyncTerminatingPod`.
    pub(super) fn post_start_cancelled(&mut self, ctx: &mut Ctx, uid: PodUid, op_id: u64) {
        let waiting = self.parked_op(uid).is_some_and(|op| {
            op.id == op_id && matches!(op.start, Some((_, StartStage::PostStart)))
        });
        if !waiting {
            return;
        }
        let op = self.take_op(uid, op_id).expect("parked");
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::PostStartCancelled,
        });
        self.end_op(ctx, uid, op, Err("context canceled".to_owned()));
    }

    /// The postStart hook of container `id` returned.
    pub(super) fn post_start_done(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        id: ContainerId,
        result: CriResult,
    ) {
        let start = op.start.take();
        let Some((idx, StartStage::PostStart)) = start else {
            panic!(
                "CRI reply rule broken: a postStart reply reaches the start waiting on its \
                 hook (pod {uid}, {start:?})"
            );
        };
        if result.error().is_some() {
            self.post_start_failed(ctx, uid, op, idx, id);
            return;
        }
        self.reason_cache
            .remove(uid, &op.pod.spec.container_at(idx).name);
        self.advance(ctx, uid, op);
    }

    /// The postStart hook failed: `FailedPostStartHook`, the start fails with
    /// `PostStartHookError`, and the container is killed before the sync goes on.
    fn post_start_failed(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        idx: usize,
        id: ContainerId,
    ) {
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::FailedPostStartHook,
        });
        let name = op.pod.spec.container_at(idx).name.clone();
        self.reason_cache.set(uid, &name, POST_START_HOOK_ERROR);
        op.errors.push(format!(
            "{POST_START_HOOK_ERROR}: PostStartHook failed for container {name}"
        ));
        op.plan.push_front(Step::KillPod(Box::new(KillPlan {
            containers: vec![(id, name)],
            sandboxes: Vec::new(),
            grace_override: None,
            reason: None,
        })));
        self.advance(ctx, uid, op);
    }
}
