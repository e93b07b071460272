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
        // Only pods with a deadline can be past it: the pod manager keeps them apart.
        self.config
            .with_deadline()
            .filter(|(uid, pod)| self.past_active_deadline(pod, now) && !due.contains(uid))
            .map(|(uid, _)| *uid)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{ActiveDeadline, ApiPod, ContainerSpec, PodSpec, PodUid, RestartPolicy};
    use crate::run::World;
    use crate::sim::{Dur, SimTime};
    use std::sync::Arc;

    const YAML: &str = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  pods:\n    - template: {metadata: {name: web}, spec: {containers: [{name: app}]}}\n";

    fn pod(deadline: Option<i64>, start: Option<SimTime>) -> ApiPod {
        let c = vec![ContainerSpec::named("app", "img")];
        let mut spec = PodSpec::new("p", "default", RestartPolicy::Always, c);
        spec.active_deadline = ActiveDeadline(deadline);
        let mut pod = ApiPod::new(PodUid(99), spec);
        std::sync::Arc::make_mut(&mut pod.status).start_time = start;
        pod
    }

    #[test]
    fn past_active_deadline_from_the_start_time() {
        let loaded = crate::load_str("t.yaml", YAML, &[]).unwrap();
        let w = World::new(Arc::new(loaded.scenario), 1, true);
        let k = &w.kubelet;
        let start = SimTime(Dur::secs(10).0);
        let at = |s: u64| SimTime(Dur::secs(s).0);
        let p = pod(Some(30), Some(start));
        assert!(!k.past_active_deadline(&p, SimTime(at(40).0 - 1)));
        assert!(k.past_active_deadline(&p, at(40)), "at the deadline");
        assert!(k.past_active_deadline(&p, at(100)));
        // No deadline, or no start time yet: never.
        assert!(!k.past_active_deadline(&pod(None, Some(start)), at(1000)));
        assert!(!k.past_active_deadline(&pod(Some(1), None), at(1000)));
        // The largest deadline the API accepts does not overflow.
        assert!(!k.past_active_deadline(&pod(Some(i64::MAX), Some(start)), SimTime::MAX));
    }
}
