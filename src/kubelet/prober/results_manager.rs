//! Probe results managers: per probe kind, the last published result of each container and
//! the queue of changes the sync loop reads.
//!
//! Follows `pkg/kubelet/prober/results/results_manager.go` (v1.31): `Set` stores a result
//! and queues an update only when the stored value changes (or is new); `Remove` forgets a
//! container without an update. Where it deliberately differs: the 20-slot update channel is
//! an unbounded FIFO queue (the sync loop drains it one update per event, in order, so a
//! probe worker never blocks on a full channel).

use crate::model::{ContainerId, PodUid};
use std::collections::{BTreeMap, VecDeque};

/// `results.Result` (a word of the trace vocabulary).
pub(crate) use crate::model::ProbeCached as ProbeResult;

/// `results.Update`: a changed result on its way to the sync loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Update {
    pub(crate) id: ContainerId,
    pub(crate) result: ProbeResult,
    pub(crate) uid: PodUid,
}

/// One results manager (there is one per probe kind).
#[derive(Clone, Debug, Default)]
pub(crate) struct ResultsManager {
    cache: BTreeMap<ContainerId, ProbeResult>,
    /// Updates not yet taken by the sync loop, oldest first.
    pub(crate) updates: VecDeque<Update>,
}

impl ResultsManager {
    /// `Get`.
    pub(crate) fn get(&self, id: ContainerId) -> Option<ProbeResult> {
        self.cache.get(&id).copied()
    }

    /// `Set`: returns whether an update was queued (the value is new or changed).
    pub(crate) fn set(&mut self, id: ContainerId, result: ProbeResult, uid: PodUid) -> bool {
        if self.cache.insert(id, result) == Some(result) {
            return false;
        }
        self.updates.push_back(Update { id, result, uid });
        true
    }

    /// `Remove`.
    pub(crate) fn remove(&mut self, id: ContainerId) {
        self.cache.remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_queues_an_update_only_on_change() {
        let mut m = ResultsManager::default();
        let (id, uid) = (ContainerId(1), PodUid(1));
        assert!(m.set(id, ProbeResult::Failure, uid));
        assert!(!m.set(id, ProbeResult::Failure, uid));
        assert!(m.set(id, ProbeResult::Success, uid));
        assert_eq!(m.get(id), Some(ProbeResult::Success));
        m.remove(id);
        assert_eq!(m.get(id), None);
        // A removed container's next result is new again.
        assert!(m.set(id, ProbeResult::Success, uid));
        let got: Vec<ProbeResult> = m.updates.iter().map(|u| u.result).collect();
        assert_eq!(
            got,
            [
                ProbeResult::Failure,
                ProbeResult::Success,
                ProbeResult::Success
            ]
        );
    }
}
