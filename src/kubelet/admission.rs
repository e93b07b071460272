//! Pod admission: what `HandlePodAdditions` checks before a new pod reaches the pod
//! workers, and the active-pod filter that admission and eviction share.
//!
//! Follows upstream v1.31: `pkg/kubelet/kubelet.go` (`canAdmitPod`, `rejectPod`, the
//! admission step of `HandlePodAdditions`), `pkg/kubelet/kubelet_pods.go`
//! (`filterOutInactivePods`, `isAdmittedPodTerminal`), `pkg/kubelet/lifecycle/predicate.go`
//! (`predicateAdmitHandler.Admit`, `generalFilter`, the `OutOf<resource>` reasons) and the
//! scheduler's `noderesources.fitsRequest` it calls, `pkg/kubelet/eviction/eviction_manager.go`
//! (`Admit`, the eviction manager's admit handler), `pkg/apis/core/v1/helper/qos` (`GetPodQOS`)
//! and `pkg/kubelet/cm/node_container_manager_linux.go` (`hardEvictionReservation`: the
//! node's allocatable memory is its capacity minus the hard `memory.available` threshold).
//!
//! Where it deliberately differs: the only admit handlers are the eviction manager's and the
//! resource-fit part of the predicate handler (no sysctl, OS, node-name, port, taint,
//! device-plugin or topology checks); kube-reserved and system-reserved are zero; pod
//! overhead and in-place resize are not modelled.

use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::{ApiPod, ApiPodStatus, PodPhase, PodSpec, RejectReason, Resources, Transition};
use crate::scenario::{KubeletConfig, NodeSpec, Threshold};
use std::sync::Arc;

/// `scheduling.SystemCriticalPriority`: pods at or above it are critical.
pub(crate) const SYSTEM_CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// What the node offers to pods (`node.Status.Allocatable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Allocatable {
    pub(crate) cpu_milli: u64,
    pub(crate) memory_bytes: u64,
    pub(crate) pods: u64,
}

impl Allocatable {
    /// Capacity minus the reservation for the hard `memory.available` threshold.
    pub(crate) fn new(config: &KubeletConfig, n: &NodeSpec) -> Self {
        let reserved = config
            .eviction_hard
            .get("memory.available")
            .map_or(0, |t| threshold_quantity(*t, n.memory_bytes));
        Allocatable {
            cpu_milli: n.cpu_milli,
            memory_bytes: n.memory_bytes.saturating_sub(reserved),
            pods: n.pods,
        }
    }
}

/// `evictionapi.GetThresholdQuantity`: a quantity, or a percentage of `capacity` (upstream
/// keeps the percentage as a float32).
pub(crate) fn threshold_quantity(t: Threshold, capacity: u64) -> u64 {
    match t {
        Threshold::Bytes(b) => b,
        Threshold::PercentPpm(ppm) => {
            let pct = ((ppm as f64 / 1e4) as f32) / 100.0;
            (capacity as f64 * pct as f64) as u64
        }
    }
}

/// The pod's effective requests (`resourcehelper.PodRequests`, v1.31): the sum over its
/// containers and sidecars, raised to what any single init container needs on top of the
/// sidecars declared before it.
pub(crate) fn pod_requests(spec: &PodSpec) -> Resources {
    // Quantities as big as a user writes them: a sum saturates, never wraps.
    fn add(a: Resources, b: Resources) -> Resources {
        Resources {
            cpu_milli: a.cpu_milli.saturating_add(b.cpu_milli),
            memory_bytes: a.memory_bytes.saturating_add(b.memory_bytes),
        }
    }
    fn max(a: Resources, b: Resources) -> Resources {
        Resources {
            cpu_milli: a.cpu_milli.max(b.cpu_milli),
            memory_bytes: a.memory_bytes.max(b.memory_bytes),
        }
    }
    let mut r = Resources::default();
    for c in &spec.containers {
        r = add(r, c.requests);
    }
    let (mut sidecars, mut init) = (Resources::default(), Resources::default());
    for c in &spec.init_containers {
        let need = if c.is_sidecar() {
            r = add(r, c.requests);
            sidecars = add(sidecars, c.requests);
            sidecars
        } else {
            add(c.requests, sidecars)
        };
        init = max(init, need);
    }
    max(r, init)
}

/// `GetPodQOS(pod) == BestEffort`: no container asks for or limits CPU or memory.
pub(crate) fn is_best_effort(spec: &PodSpec) -> bool {
    spec.containers
        .iter()
        .chain(&spec.init_containers)
        .all(|c| c.requests == Resources::default() && c.limits == Resources::default())
}

/// `kubelettypes.IsCriticalPod`: static, mirror, or priority at least system-critical.
pub(crate) fn is_critical_pod(pod: &ApiPod) -> bool {
    pod.static_pod || pod.mirror_of.is_some() || pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY
}

/// What the resource fit reads of the active pods other than the one admitted: how many
/// there are, and (when the pod asks for CPU or memory) the sum of their requests. For a
/// pod asking for neither, `pods` may be a bound instead (see
/// [`Kubelet::active_use_for_admission`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ActiveUse {
    pub(crate) pods: u64,
    pub(crate) used: Resources,
}

impl ActiveUse {
    /// Count one active pod, adding its requests if `sum` (a saturating sum: its value does
    /// not depend on the order the pods come in).
    fn add(&mut self, spec: &PodSpec, sum: bool) {
        self.pods += 1;
        if sum {
            let r = pod_requests(spec);
            self.used.cpu_milli = self.used.cpu_milli.saturating_add(r.cpu_milli);
            self.used.memory_bytes = self.used.memory_bytes.saturating_add(r.memory_bytes);
        }
    }

    /// The use of a list of active pods.
    pub(crate) fn of<'a>(pods: impl IntoIterator<Item = &'a Arc<ApiPod>>, sum: bool) -> Self {
        let mut u = ActiveUse::default();
        for p in pods {
            u.add(&p.spec, sum);
        }
        u
    }
}

/// The predicate handler's resource fit (`fitsRequest`): the first insufficient resource
/// in upstream's order (pods, cpu, memory) as (reason, message). `others` must hold the
/// requests' sum if the pod asks for CPU or memory.
fn resource_fit(
    alloc: &Allocatable,
    pod: &ApiPod,
    others: &ActiveUse,
) -> Option<(RejectReason, String)> {
    let insufficient = |reason: RejectReason, requested: u64, used: u64, capacity: u64| {
        // The resource's name is what follows `OutOf` in upstream's reason.
        let name = &reason.as_str()["OutOf".len()..];
        Some((
            reason,
            format!(
                "Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"
            ),
        ))
    };
    if others.pods + 1 > alloc.pods {
        return insufficient(RejectReason::OutOfPods, 1, others.pods, alloc.pods);
    }
    let want = pod_requests(&pod.spec);
    if want == Resources::default() {
        return None;
    }
    let used = others.used;
    if want.cpu_milli > 0 && want.cpu_milli > alloc.cpu_milli.saturating_sub(used.cpu_milli) {
        return insufficient(
            RejectReason::OutOfCpu,
            want.cpu_milli,
            used.cpu_milli,
            alloc.cpu_milli,
        );
    }
    if want.memory_bytes > 0
        && want.memory_bytes > alloc.memory_bytes.saturating_sub(used.memory_bytes)
    {
        return insufficient(
            RejectReason::OutOfMemory,
            want.memory_bytes,
            used.memory_bytes,
            alloc.memory_bytes,
        );
    }
    None
}

impl Kubelet {
    /// `isAdmittedPodTerminal`: the API or the status manager holds a terminal phase (the
    /// latter covers pods rejected at admission).
    pub(crate) fn is_admitted_pod_terminal(&self, pod: &ApiPod) -> bool {
        pod.status.phase.is_terminal()
            || self
                .status
                .statuses
                .get(&pod.uid)
                .is_some_and(|v| v.status.phase.is_terminal())
    }

    /// `filterOutInactivePods`: drop pods the workers know terminated, and terminal pods
    /// unless their termination is still in progress. Terminating pods stay active.
    pub(crate) fn filter_out_inactive_pods<'a>(
        &self,
        pods: impl IntoIterator<Item = &'a Arc<ApiPod>>,
    ) -> Vec<Arc<ApiPod>> {
        pods.into_iter()
            .filter(|p| !self.pw.is_pod_known_terminated(p.uid))
            .filter(|p| {
                !self.is_admitted_pod_terminal(p) || self.pw.is_pod_termination_requested(p.uid)
            })
            .cloned()
            .collect()
    }

    /// `filterOutInactivePods` over the pod manager's pods other than `pod`, as admission
    /// asks for them, reduced to what the resource fit reads of them (their number, and
    /// their requests' sum when `pod` asks for CPU or memory, the only case in which
    /// [`resource_fit`] reads it), visiting only `config.candidates` (the pods skipped
    /// are inactive). One walk visits them, newest UID first, looking each up in the pod
    /// manager's, the pod workers' and the status manager's maps (indexed by UID), and
    /// notes those gone from config, dropped after it; no list of the active pods is built.
    ///
    /// When `pod` asks for no CPU or memory, the fit reads only the count, and only to
    /// compare it with the node's pod capacity: the walk then stops as soon as the pods
    /// counted plus the candidates not yet visited leave room for `pod`, and `pods` holds
    /// that bound (at least the true count, below the capacity) instead of the count. The
    /// newest pods are seldom inactive, the pods deleted and terminated long ago waiting
    /// for their API object to go are, so the walk starts at the newest UID and meets the
    /// inactive ones early. Debug builds check the answer against the scan of every pod.
    pub(crate) fn active_use_for_admission(&mut self, pod: &ApiPod) -> ActiveUse {
        let (uid, sum) = (pod.uid, pod_requests(&pod.spec) != Resources::default());
        // Past this bound the count is not needed: the fit is certain (count only).
        let room = if sum { 0 } else { self.allocatable.pods };
        let (config, pw, status) = (&self.config, &self.pw, &self.status);
        let mut active = ActiveUse::default();
        // The pods counted plus the candidates not visited yet: the count once all are.
        let mut bound = config.candidates.len() as u64;
        let mut early = false;
        // The candidates gone from config, dropped after the walk (rarely any: a plain walk
        // costs less than `retain`'s).
        let mut gone = Vec::new();
        for u in config.candidates.keys().rev() {
            if bound < room {
                early = true;
                break;
            }
            let Some(p) = config.pods.get(u) else {
                gone.push(*u);
                bound -= 1;
                continue;
            };
            if *u == uid {
                bound -= 1;
                continue;
            }
            let record = pw.records.get(u);
            if record.is_some_and(|s| s.is_terminated()) {
                bound -= 1;
                continue; // isPodKnownTerminated
            }
            // isAdmittedPodTerminal, unless its termination is still in progress.
            let terminal = p.status.phase.is_terminal()
                || status
                    .statuses
                    .get(u)
                    .is_some_and(|v| v.status.phase.is_terminal());
            if !terminal || record.is_some_and(|s| s.is_termination_requested()) {
                active.add(&p.spec, sum);
            } else {
                bound -= 1;
            }
        }
        for u in &gone {
            self.config.candidates.remove(u);
        }
        let full = || {
            ActiveUse::of(
                &self.filter_out_inactive_pods(self.config.pods.values().filter(|p| p.uid != uid)),
                sum,
            )
        };
        if early {
            // Only the count is read, and the bound leaves room as the count does.
            debug_assert!(
                full().pods <= bound && bound < self.allocatable.pods && !sum,
                "admission's early bound hides a pod the fit needs"
            );
            return ActiveUse {
                pods: bound,
                used: Resources::default(),
            };
        }
        debug_assert_eq!(bound, active.pods, "admission's bound out of step");
        debug_assert_eq!(
            active,
            full(),
            "admission's candidate pods miss an active pod"
        );
        active
    }

    /// `GetActivePods`: the active pods of the pod manager, in UID order (upstream lists
    /// the pod manager's map in Go's random order).
    pub(crate) fn active_pods(&self) -> Vec<Arc<ApiPod>> {
        self.filter_out_inactive_pods(self.config.pods.values())
    }

    /// Whether admitting `pod` can depend on the active pods: false when even counting
    /// every other pod in config as active leaves room for one more pod and the pod asks
    /// for no CPU or memory (the resource fit then passes whatever the active set is, and
    /// the O(pods) active-pod scan can be skipped with the same decision).
    pub(crate) fn admission_needs_active(&self, pod: &ApiPod) -> bool {
        let others =
            self.config.pods.len() as u64 - u64::from(self.config.pods.contains_key(&pod.uid));
        others + 1 > self.allocatable.pods || pod_requests(&pod.spec) != Resources::default()
    }

    /// `canAdmitPod`: the admit handlers in upstream's registration order; the first that
    /// rejects gives (reason, message). Another handler is one more `.or_else` line (graceful
    /// node shutdown's "no admission after shutdown started", reason `NodeShutdown`, goes
    /// last, as its handler is registered after the predicate handler).
    pub(crate) fn admission_reason(
        &self,
        pod: &ApiPod,
        active: &ActiveUse,
    ) -> Option<(RejectReason, String)> {
        // Upstream's admit handlers in registration order: the eviction manager, the
        // predicate handler (resource fit), the graceful node shutdown manager.
        self.eviction_admit(pod)
            .or_else(|| resource_fit(&self.allocatable, pod, active))
            .or_else(|| {
                self.shutdown_admission_reason()
                    .map(|(r, m)| (r, m.to_string()))
            })
    }

    /// `rejectPod`: the pod gets phase Failed with the reason locally (the status manager
    /// writes it to the API); it never reaches the pod workers.
    pub(super) fn reject_pod(
        &mut self,
        ctx: &mut Ctx,
        pod: &ApiPod,
        reason: RejectReason,
        message: String,
    ) {
        ctx.emit(Transition::PodRejected {
            uid: pod.uid,
            reason,
        });
        if ctx.epoch() > 0 {
            ctx.reach(crate::model::reach::Reach::RejectedAfterRestart);
        }
        let status = ApiPodStatus {
            phase: PodPhase::Failed,
            reason: Some(reason.as_str().to_string()),
            message: Some(format!("Pod was rejected: {message}")),
            ..Default::default()
        };
        self.set_pod_status(ctx, pod, status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodUid, RestartPolicy};

    fn pod(uid: u32, cpu_milli: u64, memory_bytes: u64) -> Arc<ApiPod> {
        let mut c = ContainerSpec::named("c", "img");
        c.requests = Resources {
            cpu_milli,
            memory_bytes,
        };
        Arc::new(ApiPod::new(
            PodUid(uid),
            PodSpec::new("p", "default", RestartPolicy::Always, vec![c]),
        ))
    }

    #[test]
    fn resource_fit_reports_the_first_insufficient_resource_in_upstream_order() {
        let alloc = Allocatable {
            cpu_milli: 2000,
            memory_bytes: 1 << 30,
            pods: 2,
        };
        let two = [pod(1, 1000, 0), pod(2, 500, 0)];
        let (r, m) = resource_fit(&alloc, &pod(3, 0, 0), &ActiveUse::of(&two, true)).unwrap();
        assert_eq!(r.as_str(), "OutOfpods");
        assert_eq!(
            m,
            "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"
        );
        let one = [pod(1, 1500, 0)];
        assert_eq!(
            resource_fit(&alloc, &pod(3, 500, 0), &ActiveUse::of(&one, true)),
            None
        );
        assert_eq!(
            resource_fit(&alloc, &pod(3, 501, 0), &ActiveUse::of(&one, true))
                .unwrap()
                .0,
            RejectReason::OutOfCpu
        );
        assert_eq!(
            resource_fit(&alloc, &pod(3, 0, (1 << 30) + 1), &ActiveUse::default())
                .unwrap()
                .0,
            RejectReason::OutOfMemory
        );
        // A pod without requests only needs a pod slot.
        assert_eq!(
            resource_fit(&alloc, &pod(3, 0, 0), &ActiveUse::of(&one, true)),
            None
        );
    }

    #[test]
    fn active_use_counts_pods_and_sums_requests_only_when_asked() {
        let pods = [pod(1, 1000, 1 << 20), pod(2, 500, 0), pod(3, u64::MAX, 1)];
        let counted = ActiveUse::of(&pods, false);
        assert_eq!(counted.pods, 3);
        assert_eq!(counted.used, Resources::default());
        let summed = ActiveUse::of(&pods, true);
        assert_eq!(summed.pods, 3);
        // The sum saturates, whatever the order of the pods.
        assert_eq!(summed.used.cpu_milli, u64::MAX);
        assert_eq!(summed.used.memory_bytes, (1 << 20) + 1);
        let reversed: Vec<_> = pods.iter().rev().cloned().collect();
        assert_eq!(ActiveUse::of(&reversed, true), summed);
        assert_eq!(ActiveUse::of(&[], true), ActiveUse::default());
    }

    #[test]
    fn percentage_thresholds_use_capacity() {
        assert_eq!(threshold_quantity(Threshold::Bytes(5), 100), 5);
        assert_eq!(
            threshold_quantity(Threshold::PercentPpm(100_000), 1_000_000),
            100_000
        );
    }
}
