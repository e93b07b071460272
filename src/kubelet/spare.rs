//! Buffers the pod workers' sync path keeps between operations so that a step allocates
//! nothing it allocated the last time: the box a parked operation sits in and the list of an
//! operation's errors.
//!
//! An operation waiting on the runtime is parked in its pod worker's record (the
//! record's `parked`, next to its operation id; `cri_reply.rs`), once per CRI step: the
//! record is an array look-up away, so a park or a reply searches no map. Its box is kept
//! when the reply takes the operation out and reused by the next park, so a step costs no
//! allocation and no free. The error list follows
//! the plan buffer's pattern (`take_plan`, `recycle_plan` in `sync.rs`): taken empty by a
//! new operation, handed back emptied when it ends.

use super::sync::Op;
use super::Kubelet;
use crate::model::PodUid;
use std::ops::Deref;

/// A parked operation, in a box that outlives it: [`ParkedOp::take`] hands the operation
/// out and keeps the box empty for the next park. Reads go through `Deref`.
#[derive(Clone, Debug)]
pub(crate) struct ParkedOp(Box<Option<Op>>);

impl Deref for ParkedOp {
    type Target = Op;
    #[inline]
    fn deref(&self) -> &Op {
        self.0
            .as_ref()
            .as_ref()
            .expect("a parked box holds its operation")
    }
}

impl ParkedOp {
    /// Park `op` in `spare` if there is one (an emptied box), else in a new box.
    pub(crate) fn new(op: Op, spare: Option<Box<Option<Op>>>) -> Self {
        match spare {
            Some(mut b) => {
                debug_assert!(b.is_none(), "a kept parked-operation box is empty");
                *b = Some(op);
                ParkedOp(b)
            }
            None => ParkedOp(Box::new(Some(op))),
        }
    }

    /// The operation, and its box emptied for the next park.
    pub(crate) fn take(self) -> (Op, Box<Option<Op>>) {
        let mut b = self.0;
        let op = b.take().expect("a parked box holds its operation");
        (op, b)
    }
}

/// The largest error list kept for reuse (entries): an operation rarely has more than one
/// error, and a kept list may end up held by an operation waiting on the runtime.
const SPARE_ERROR_SLOTS: usize = 4;

impl Kubelet {
    /// The operation of `uid`'s pod worker, if it is parked waiting on the runtime.
    pub(super) fn parked_op(&self, uid: PodUid) -> Option<&Op> {
        self.pw.records.get(&uid)?.parked.as_deref()
    }

    /// Every parked pod-worker operation, in ascending UID order.
    pub(super) fn parked_ops(&self) -> impl Iterator<Item = &Op> {
        self.pw.records.values().filter_map(|r| r.parked.as_deref())
    }

    /// An empty error list for a new operation, on the buffer the last ended one left.
    pub(super) fn take_errors(&mut self) -> Vec<String> {
        let errors = std::mem::take(&mut self.spare_errors);
        debug_assert!(errors.is_empty(), "a kept error list is empty");
        errors
    }

    /// Keep an ended operation's error list (emptied) for the next operation, unless the
    /// kept one is as large or this one is over [`SPARE_ERROR_SLOTS`].
    pub(super) fn recycle_errors(&mut self, mut errors: Vec<String>) {
        let cap = errors.capacity();
        if cap > self.spare_errors.capacity() && cap <= SPARE_ERROR_SLOTS {
            errors.clear();
            self.spare_errors = errors;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubelet::pod_workers::{UpdatePodOptions, UpdateType, Work, WorkType};
    use crate::model::SyncKind;
    use crate::model::{ApiPod, ContainerSpec, PodSpec, PodUid, RestartPolicy, RtPodStatus};
    use std::sync::Arc;

    fn op(id: u64) -> Op {
        let c = vec![ContainerSpec::named("app", "img:1")];
        let pod = Arc::new(ApiPod::new(
            PodUid(1),
            PodSpec::new("p", "default", RestartPolicy::Always, c),
        ));
        let work = Work {
            work_type: WorkType::Sync,
            options: UpdatePodOptions::new(UpdateType::Sync, pod.clone()),
        };
        Op::new(
            id,
            SyncKind::SyncPod,
            work,
            pod,
            Arc::new(RtPodStatus::default()),
            None,
        )
    }

    #[test]
    fn a_parked_box_is_handed_back_empty_and_reused() {
        let parked = ParkedOp::new(op(7), None);
        assert_eq!(parked.id, 7, "reads reach the operation");
        let (taken, b) = parked.take();
        assert_eq!(taken.id, 7);
        assert!(b.is_none());
        let at = &*b as *const Option<Op>;
        let parked = ParkedOp::new(op(8), Some(b));
        assert_eq!(parked.id, 8);
        let (taken, b) = parked.take();
        assert_eq!(taken.id, 8);
        assert!(
            std::ptr::eq(at, &*b),
            "the same box holds the next operation"
        );
    }
}
