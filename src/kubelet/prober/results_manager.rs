//! Probe results managers: per probe kind, the last published result of each container and
//! the queue of changes the sync loop reads.
//!
//! Follows `pkg/kubelet/prober/results/results_manager.go` (v1.31): `Set` stores a result
//! and queues an update only when the stored value changes (or is new); `Remove` forgets a
//! container without an update. Where it deliberately differs: the 20-slot update channel is
//! an unbounded FIFO queue (the sync loop drains it one update per event, in order, so a
//! probe worker never blocks on a full channel). The cache is a vector indexed by container
//! ID (the runtime hands IDs out sequentially from 1), not a map: a lookup per probe.

use crate::model::{ContainerId, PodUid};
use std::collections::VecDeque;

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
    /// The cached result of each container, by ID (`None`: no result).
    cache: Vec<Option<ProbeResult>>,
    /// Updates not yet taken by the sync loop, oldest first.
    pub(crate) updates: VecDeque<Update>,
}

impl ResultsManager {
    /// `Get`.
    pub(crate) fn get(&self, id: ContainerId) -> Option<ProbeResult> {
        self.cache.get(id.0 as usize).copied().flatten()
    }

    /// `Set`: returns whether an update was queued (the value is new or changed).
    pub(crate) fn set(&mut self, id: ContainerId, result: ProbeResult, uid: PodUid) -> bool {
        let i = id.0 as usize;
        if self.cache.len() <= i {
            self.cache.resize(i + 1, None);
        }
        if self.cache[i].replace(result) == Some(result) {
            return false;
        }
        self.updates.push_back(Update { id, result, uid });
        true
    }

    /// `Remove`.
    pub(crate) fn remove(&mut self, id: ContainerId) {
        if let Some(r) = self.cache.get_mut(id.0 as usize) {
            *r = None;
        }
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
