//! The active-deadline handler (`pkg/kubelet/active_deadline.go`, v1.31): a pod whose
//! `spec.activeDeadlineSeconds` has passed since its status `startTime` is synced at the
//! next sync-loop tick (the handler as a sync-loop handler, consulted by `getPodsToSync` in
//! `kubelet.go`), and the status the kubelet generates for it is Failed with reason
//! `DeadlineExceeded` (the handler as a sync handler, consulted by `generateAPIPodStatus` in
//! `kubelet_pods.go`). `SyncPod` then returns terminal and the pod worker terminates the pod
//! with its grace period, as for any pod that reached a terminal phase.

use super::Kubelet;
use crate::model::{ApiPod, PodUid};
use crate::sim::SimTime;

/// The reason the handler gives (and the status carries).
pub(crate) const REASON: &str = "DeadlineExceeded";
/// The message the handler gives.
pub(crate) const MESSAGE: &str = "Pod was active on the node longer than the specified deadline";

impl Kubelet {
    /// `pastActiveDeadline`: the pod has a deadline, a start time (from the status manager's
    /// copy of its status, else the pod's own), and at least the deadline has elapsed since.
    pub(crate) fn past_active_deadline(&self, pod: &ApiPod, now: SimTime) -> bool {
        let Some(secs) = pod.spec.active_deadline.0 else {
            return false;
        };
        let status = self
            .status
            .statuses
            .get(&pod.uid)
            .map_or(&pod.status, |v| &v.status);
        let Some(start) = status.start_time else {
            return false;
        };
        let allowed = (secs as u64).saturating_mul(1_000_000_000);
        now.since(start).as_nanos() >= allowed
    }

    /// The sync-loop handler's share of `getPodsToSync`: pods in config, not already due
    /// from the work queue, whose deadline has passed (in UID order).
    pub(crate) fn deadline_pods_to_sync(&self, now: SimTime, due: &[PodUid]) -> Vec<PodUid> {
        self.config
            .pods
            .iter()
            .filter(|(uid, pod)| !due.contains(uid) && self.past_active_deadline(pod, now))
            .map(|(uid, _)| *uid)
            .collect()
    }
}
