//! A cache of the status step of `SyncPod` (`pkg/kubelet/kubelet.go`, v1.31: the
//! `generateAPIPodStatus` of `pkg/kubelet/kubelet_pods.go`, then the status manager's
//! `SetPodStatus`).
//!
//! Upstream regenerates the whole API status on every sync; in the steady state the result
//! equals the status manager's cached status and `SetPodStatus` writes nothing. The
//! generated status is a pure function of the pod object, the runtime's pod status (the
//! PLEG cache entry), the status manager's cached status, the reason cache's entries for
//! the pod, the probe results and probe workers of its containers, the active deadline
//! (with the clock) and the run's behaviour switches. When a sync found its generated
//! status unchanged, the pod's worker record keeps the three shared, immutable objects it
//! was computed from (by reference) and a copy of the pod's reason-cache entries. The next
//! sync given the very same three objects and reason-cache entries, for a pod without
//! active deadline or deletion, and whose probe-derived `started` and
//! `ready` flags equal the cached status's, would generate the same status again and write
//! nothing: it is skipped, and only the generation's side effect (triggering the readiness
//! probes of started containers without a success) runs. Debug builds regenerate and check.

use super::prober::{ProbeKey, ProbeResult};
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, ApiPodStatus, PodPhase, PodUid, ProbeType,
    RtPodStatus,
};
use std::sync::Arc;

/// The objects a `SyncPod` status generation that changed nothing was computed from.
#[derive(Clone, Debug)]
pub(crate) struct StatusMemo {
    pod: Arc<ApiPod>,
    rt: Arc<RtPodStatus>,
    cached: Arc<ApiPodStatus>,
    /// The reason cache's entries for the pod (container name, reason), in key order;
    /// empty (no allocation) for most pods.
    reasons: Vec<(String, &'static str)>,
}

impl Kubelet {
    /// `SyncPod`'s `generateAPIPodStatus(pod, podStatus, false)` and `SetPodStatus`;
    /// returns the generated phase.
    pub(super) fn sync_pod_status(
        &mut self,
        ctx: &mut Ctx,
        pod: &Arc<ApiPod>,
        rt: &Arc<RtPodStatus>,
    ) -> PodPhase {
        if let Some((phase, trigger)) = self.status_memo_hit(pod, rt) {
            #[cfg(debug_assertions)]
            self.check_status_memo(pod, rt, ctx.now(), &trigger);
            for key in trigger {
                self.probe_worker_trigger(ctx, &key);
            }
            return phase;
        }
        let api = self.generate_api_pod_status(ctx, pod, rt, false);
        let phase = api.phase;
        let unchanged = self.set_pod_status_unchanged(ctx, pod, api);
        let memo = if unchanged && self.status_memoizable(pod) {
            self.status.statuses.get(&pod.uid).map(|v| StatusMemo {
                pod: Arc::clone(pod),
                rt: Arc::clone(rt),
                cached: Arc::clone(&v.status),
                reasons: self
                    .cached_reasons(pod.uid)
                    .map(|(n, r)| (n.to_owned(), r))
                    .collect(),
            })
        } else {
            None
        };
        if let Some(st) = self.pw.records.get_mut(&pod.uid) {
            st.status_memo = memo;
        }
        phase
    }

    /// Whether a generation for `pod` depends only on what the memo compares: not the
    /// v1.21 design, no deletion (a forced write), no active deadline (the clock).
    fn status_memoizable(&self, pod: &ApiPod) -> bool {
        !self.legacy() && pod.deletion_timestamp.is_none() && pod.spec.active_deadline.0.is_none()
    }

    /// The reason cache's entries for `uid` (one range of the map, keyed by UID then name).
    fn cached_reasons(&self, uid: PodUid) -> impl Iterator<Item = (&str, &'static str)> {
        self.reason_cache.entries(uid)
    }

    /// The phase and the probe triggers of a generation the memo shows unchanged, or
    /// `None` when it must run.
    fn status_memo_hit(
        &self,
        pod: &Arc<ApiPod>,
        rt: &Arc<RtPodStatus>,
    ) -> Option<(PodPhase, Vec<ProbeKey>)> {
        let memo = self.pw.records.get(&pod.uid)?.status_memo.as_ref()?;
        let v = self.status.statuses.get(&pod.uid)?;
        let same = Arc::ptr_eq(&memo.pod, pod)
            && Arc::ptr_eq(&memo.rt, rt)
            && Arc::ptr_eq(&memo.cached, &v.status);
        if !same
            || !self.status_memoizable(pod)
            || !self
                .cached_reasons(pod.uid)
                .eq(memo.reasons.iter().map(|(n, r)| (n.as_str(), *r)))
        {
            return None;
        }
        let s = &v.status;
        let mut trigger = Vec::new();
        for c in s.containers.iter() {
            if self.probe_flags(pod.uid, c, &mut trigger) != (c.started, c.ready) {
                return None;
            }
        }
        for (c, spec) in s.init_containers.0.iter().zip(&pod.spec.init_containers) {
            let (started, mut ready) = self.probe_flags(pod.uid, c, &mut trigger);
            if !spec.is_sidecar()
                && matches!(c.state, ApiContainerState::Terminated { exit_code: 0, .. })
            {
                ready = true;
            }
            if (started, ready) != (c.started, c.ready) {
                return None;
            }
        }
        Some((s.phase, trigger))
    }

    /// The `started` and `ready` flags the prober's `UpdatePodStatus` gives a container
    /// status (`prober_manager.go`, v1.31; the same rules as `probe_update_pod_status`,
    /// which debug builds check), pushing the readiness probe to trigger if any.
    fn probe_flags(
        &self,
        uid: PodUid,
        c: &ApiContainerStatus,
        trigger: &mut Vec<ProbeKey>,
    ) -> (bool, bool) {
        if !c.state.is_running() {
            return (false, false);
        }
        let result = |kind: ProbeType| {
            c.container_id
                .and_then(|id| self.prober.results(kind).get(id))
        };
        let started = match result(ProbeType::Startup) {
            Some(r) => r == ProbeResult::Success,
            None => self
                .prober
                .slot_of(uid, &c.name, ProbeType::Startup)
                .is_none(),
        };
        if !started {
            return (false, false);
        }
        if result(ProbeType::Readiness) == Some(ProbeResult::Success) {
            return (true, true);
        }
        let slot = self.prober.slot_of(uid, &c.name, ProbeType::Readiness);
        if let Some(slot) = slot {
            trigger.push(self.prober.worker(slot).key.clone());
        }
        (true, slot.is_none())
    }

    /// Debug builds: the skipped generation, run in full, gives a status `SetPodStatus`
    /// would find unchanged, and the same probe triggers.
    #[cfg(debug_assertions)]
    fn check_status_memo(
        &self,
        pod: &ApiPod,
        rt: &RtPodStatus,
        now: crate::sim::SimTime,
        trigger: &[ProbeKey],
    ) {
        let (mut g, t) = self.generate_api_pod_status_inner(pod, rt, false, now);
        let v = &self.status.statuses[&pod.uid];
        // updateStatusInternal's start-time rule, then its equality test.
        if g.start_time.is_none() || v.status.start_time.is_some() {
            g.start_time = v.status.start_time.or(g.start_time);
        }
        assert!(
            pod.deletion_timestamp.is_none()
                && g.containers == v.status.containers
                && super::conditions::equal_by_kubelet(&v.status, &g),
            "status memo rule broken: a skipped status generation for pod {} would have \
             changed the cached status",
            pod.uid
        );
        assert_eq!(
            t, trigger,
            "status memo rule broken: a skipped status generation for pod {} triggers other \
             readiness probes",
            pod.uid
        );
    }
}
