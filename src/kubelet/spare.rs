//! The boxes the pod workers' sync operations live in, kept between operations so that an
//! operation allocates nothing the last one allocated.
//!
//! A sync operation lives in one box from its start (`run_work`, or the v1.21 pod killer)
//! to its end (`end_op_as`): every step, reply handler and park passes the box, not the
//! operation (a pointer, not a copy of the whole state). An operation waiting on the
//! runtime is parked, box and all, in its pod worker's record (the record's `parked`, next
//! to its operation id; `cri_reply.rs`), once per CRI step: the record is an array look-up
//! away, so a park or a reply searches no map.
//!
//! An ended operation's box is retired here: emptied to an idle operation (no pod, status,
//! work or kill state is held past the end), its plan and error buffers kept (cleared) for
//! the next operation, unless they grew over [`SPARE_PLAN_SLOTS`] or
//! [`SPARE_ERROR_SLOTS`]. The next operation takes the box and fills it in place.

use super::pod_workers::{UpdatePodOptions, Work, WorkType};
use super::sync::{Op, SyncKind};
use super::Kubelet;
use crate::model::{ApiPod, PodSpec, PodUid, RestartPolicy, RtPodStatus, UpdateType};
use std::collections::VecDeque;
use std::sync::Arc;

/// The largest plan buffer kept for reuse (slots): a longer plan is rare.
const SPARE_PLAN_SLOTS: usize = 8;

/// The largest error list kept for reuse (entries): an operation rarely has more than one
/// error.
const SPARE_ERROR_SLOTS: usize = 4;

/// How many retired boxes are kept: an operation that parks keeps its box, so a few are in
/// use at once only while several pods wait on the runtime.
const SPARE_OPS: usize = 4;

/// Retired operation boxes, and the stand-ins an idle operation holds in place of a pod
/// and a status (shared: no allocation per retirement).
#[derive(Clone, Debug)]
pub(crate) struct SpareOps {
    /// The boxes themselves are what is kept: an operation moves between this list, the
    /// sync steps and a record's `parked` by pointer.
    #[allow(clippy::vec_box)]
    boxes: Vec<Box<Op>>,
    pod: Arc<ApiPod>,
    status: Arc<RtPodStatus>,
}

impl SpareOps {
    pub(crate) fn new() -> Self {
        let spec = PodSpec::new("", "", RestartPolicy::Always, Vec::new());
        SpareOps {
            boxes: Vec::new(),
            pod: Arc::new(ApiPod::new(PodUid(0), spec)),
            status: Arc::new(RtPodStatus::default()),
        }
    }

    /// The work an idle operation holds: no pod, no kill options.
    fn idle_work() -> Work {
        Work {
            work_type: WorkType::Sync,
            options: UpdatePodOptions {
                update_type: UpdateType::Sync,
                pod: None,
                mirror: None,
                running_pod: None,
                kill: None,
            },
        }
    }

    /// Whether `op` is idle: it holds the stand-ins and nothing of an ended operation.
    fn is_idle(&self, op: &Op) -> bool {
        // Every field listed (no `..`): a new field of `Op` must be reset by `retire` and
        // checked here.
        let Op {
            id: _,
            kind: _,
            work,
            pod,
            status,
            plan,
            kill,
            start,
            sandbox,
            errors,
            back_off_errors,
            fatal,
            grace,
            killer,
        } = op;
        Arc::ptr_eq(pod, &self.pod)
            && Arc::ptr_eq(status, &self.status)
            && work.options.pod.is_none()
            && work.options.mirror.is_none()
            && work.options.running_pod.is_none()
            && work.options.kill.is_none()
            && plan.is_empty()
            && plan.capacity() <= SPARE_PLAN_SLOTS
            && kill.is_none()
            && start.is_none()
            && sandbox.is_none()
            && errors.is_empty()
            && errors.capacity() <= SPARE_ERROR_SLOTS
            && *back_off_errors == 0
            && fatal.is_none()
            && grace.is_none()
            && !killer
    }
}

impl SpareOps {
    /// A new operation with an empty plan, in a retired box if there is one. Inlined into
    /// its callers (two): a call would copy the work and save registers each operation.
    #[inline(always)]
    pub(crate) fn op(
        &mut self,
        id: u64,
        kind: SyncKind,
        work: Work,
        pod: Arc<ApiPod>,
        status: Arc<RtPodStatus>,
        grace: Option<i64>,
    ) -> Box<Op> {
        let Some(mut op) = self.boxes.pop() else {
            return Box::new(Op::new(id, kind, work, pod, status, grace));
        };
        debug_assert!(
            self.is_idle(&op),
            "a retired operation box holds an idle operation"
        );
        op.id = id;
        op.kind = kind;
        // An idle operation's work owns nothing (checked above): overwritten, not dropped.
        std::mem::forget(std::mem::replace(&mut op.work, work));
        op.pod = pod;
        op.status = status;
        op.grace = grace;
        op
    }

    /// An ended operation's box: emptied to an idle operation and kept for the next one,
    /// unless [`SPARE_OPS`] are kept already. Inlined into its callers (two), as
    /// [`SpareOps::op`] is.
    #[inline(always)]
    pub(crate) fn retire(&mut self, mut op: Box<Op>) {
        if self.boxes.len() >= SPARE_OPS {
            return;
        }
        op.work = SpareOps::idle_work();
        op.pod = self.pod.clone();
        op.status = self.status.clone();
        op.plan.clear();
        if op.plan.capacity() > SPARE_PLAN_SLOTS {
            op.plan = VecDeque::new();
        }
        op.errors.clear();
        if op.errors.capacity() > SPARE_ERROR_SLOTS {
            op.errors = Vec::new();
        }
        op.kill = None;
        op.start = None;
        op.sandbox = None;
        op.back_off_errors = 0;
        op.fatal = None;
        op.grace = None;
        op.killer = false;
        self.boxes.push(op);
    }
}

impl Kubelet {
    /// The operation of `uid`'s pod worker, if it is parked waiting on the runtime.
    pub(super) fn parked_op(&self, uid: PodUid) -> Option<&Op> {
        self.pw.records.get(&uid)?.parked.as_deref()
    }

    /// Every parked pod-worker operation, in ascending UID order.
    pub(super) fn parked_ops(&self) -> impl Iterator<Item = &Op> {
        self.pw.records.values().filter_map(|r| r.parked.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubelet::sync::Step;
    use crate::model::ContainerSpec;

    fn work_of(pod: &Arc<ApiPod>) -> Work {
        Work {
            work_type: WorkType::Sync,
            options: UpdatePodOptions::new(UpdateType::Sync, pod.clone()),
        }
    }

    #[test]
    fn a_retired_box_is_emptied_and_reused() {
        let c = vec![ContainerSpec::named("app", "img:1")];
        let pod = Arc::new(ApiPod::new(
            PodUid(1),
            PodSpec::new("p", "default", RestartPolicy::Always, c),
        ));
        let status = Arc::new(RtPodStatus::default());
        let mut spare = SpareOps::new();
        let mut op = spare.op(
            7,
            SyncKind::SyncPod,
            work_of(&pod),
            pod.clone(),
            status,
            None,
        );
        op.plan.push_back(Step::MountVolumes);
        op.errors.push("boom".into());
        op.fatal = Some("fatal".into());
        let at = &*op as *const Op;
        spare.retire(op);
        assert_eq!(Arc::strong_count(&pod), 1, "an idle operation holds no pod");
        let op = spare.op(
            8,
            SyncKind::SyncPod,
            work_of(&pod),
            pod.clone(),
            Arc::new(RtPodStatus::default()),
            Some(3),
        );
        assert!(
            std::ptr::eq(at, &*op),
            "the same box holds the next operation"
        );
        assert_eq!((op.id, op.grace), (8, Some(3)));
        assert!(
            op.plan.is_empty() && op.plan.capacity() > 0,
            "the plan buffer is kept"
        );
        assert!(op.errors.is_empty() && op.fatal.is_none());
    }
}
