//! The eviction manager: watches the node's memory, keeps the MemoryPressure condition and
//! evicts one pod per round when a threshold is met.
//!
//! Follows upstream v1.31 `pkg/kubelet/eviction/eviction_manager.go` (`Start`'s loop,
//! `synchronize`, `waitForPodsCleanup`, `evictPod`, `Admit`) and `helpers.go`
//! (`thresholdsMet`, `thresholdsFirstObservedAt`, `nodeConditionsLastObservedAt`,
//! `nodeConditionsObservedSince`, `thresholdsMetGracePeriod`, `thresholdsUpdatedStats`,
//! `rankMemoryPressure` = orderedBy(exceedMemoryRequests, priority, memory),
//! `evictionMessage`), with the kill through `killPodNow` (`pod_workers.rs`).
//!
//! The goroutine becomes a small state machine on kubelet events: sleeping until the next
//! round (`evictionMonitoringPeriod`), blocked in `killPodNow` (until its channel closes or
//! `max(10 s, 1.5 x grace)` passes), or polling `PodIsFinished` every 1 s for up to 30 s,
//! after which the next round starts at once, as upstream's loop does.
//!
//! Behaviour switch `evictionWaitsForReclaim` (race catalog 21, PRs 43590 and 50350, on in
//! every profile): off, the manager does not wait for the evicted pod's cleanup; it sleeps
//! a monitoring period after `killPodNow` returned and decides again (the <= v1.6 loop,
//! `wait.Until(synchronize, monitoringInterval)`), and its active pods leave out pods whose
//! local phase is terminal (<= v1.6 `filterOutTerminatedPods`), so an evicted pod still
//! holding memory then makes it evict another.
//!
//! Where it deliberately differs:
//! * The signals with observations are memory, the filesystems and PIDs
//!   (`eviction_signals.rs`); thresholds on other signals are accepted but never met, as
//!   upstream treats a signal without observation. Node-level reclaim before a disk
//!   eviction is in `eviction_reclaim.rs`. `allocatableMemory.available` and kernel memcg
//!   notifications are not modelled.
//! * Go iterates the thresholds' first-observed map in random order and sorts with an
//!   unstable sort; here thresholds keep configuration order (hard before soft, each by
//!   signal name) and the ranking is a stable sort of the active pods in UID order.
//! * MemoryPressure is the manager's internal state (what `Admit` and the node status read);
//!   its changes are trace transitions. The `DisruptionTarget` pod condition and the
//!   `Evicted` event are not modelled (pod conditions are not modelled).

use super::admission::{is_best_effort, is_critical_pod, pod_requests, threshold_quantity};
use super::eviction_signals as signals;
use super::pod_workers::StatusFn;
use super::profile::Sw;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::{ApiPod, PodPhase, PodUid, Transition};
use crate::model::{EvictionSignal, EvictionStep, NodeConditionType, RejectReason};
use crate::scenario::{KubeletSpec, Threshold};
use crate::sim::{Dur, SimTime, TimerKey};
use crate::world::stats::{PodStats, StatsSummary};
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

/// `podCleanupTimeout`.
pub(crate) const POD_CLEANUP_TIMEOUT: Dur = Dur::secs(30);
/// `podCleanupPollFreq`.
pub(crate) const POD_CLEANUP_POLL_FREQ: Dur = Dur::secs(1);
/// The eviction reason and the admission rejection reason under pressure.
pub(crate) const REASON: &str = "Evicted";
/// The only signal with observations.
pub(crate) const MEMORY_AVAILABLE: &str = "memory.available";

/// `evictionapi.Threshold`: a signal below a value, for a grace period (0 = hard).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EvictionThreshold {
    pub(crate) signal: String,
    pub(crate) value: Threshold,
    pub(crate) grace_period: Dur,
    /// `MinReclaim` (`evictionMinimumReclaim[signal]`).
    pub(crate) min_reclaim: Option<Threshold>,
}

impl EvictionThreshold {
    /// `isHardEvictionThreshold`.
    pub(crate) fn is_hard(&self) -> bool {
        self.grace_period == Dur::ZERO
    }
}

/// `signalObservation` of `memory.available`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Observation {
    pub(crate) available: u64,
    pub(crate) capacity: u64,
    pub(crate) time: SimTime,
}

/// One eviction, for the run summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct EvictionRecord {
    pub(crate) uid: PodUid,
    pub(crate) pod: String,
    pub(crate) at: SimTime,
    pub(crate) signal: String,
    /// The grace period override handed to `killPodNow`.
    pub(crate) grace: i64,
    /// When `killPodNow` returned, and whether it timed out.
    pub(crate) kill_returned_at: Option<SimTime>,
    pub(crate) kill_timed_out: bool,
    /// When `waitForPodsCleanup` saw the pod finished (`None`: not yet, or timed out).
    pub(crate) cleaned_up_at: Option<SimTime>,
    pub(crate) cleanup_timed_out: bool,
    /// The status message (`evictionMessage` or a local storage message).
    pub(crate) message: String,
}

/// Where the manager's goroutine is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Wait {
    /// Sleeping until the next `KEv::EvictionSync`.
    Sleeping,
    /// Blocked in `killPodNow` on channel `ch` (the adapter owns the timeout).
    Killing { uid: PodUid, ch: u64 },
    /// In `reclaimNodeLevelResources` for threshold `ti`, `pending` removals unanswered:
    /// of dead containers first, then (`images`) of unused images.
    Reclaiming {
        ti: usize,
        pending: u32,
        images: bool,
    },
    /// In `waitForPodsCleanup` (round `gen`), with its ticker and timeout timers.
    Cleanup {
        uid: PodUid,
        gen: u64,
        poll: TimerKey,
        timeout: TimerKey,
    },
}

/// The eviction manager's state (`managerImpl`).
#[derive(Clone, Debug)]
pub(crate) struct EvictionManager {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub(crate) b: crate::kubelet::profile::Behaviours,
    pub(crate) thresholds: Vec<EvictionThreshold>,
    pub(crate) max_pod_grace_period: i64,
    pub(crate) pressure_transition_period: Dur,
    pub(crate) monitoring_period: Dur,
    /// `nodeConditions`: MemoryPressure, DiskPressure, PIDPressure (in [`CONDITIONS`] order).
    pub(crate) pressure: [bool; 3],
    /// `nodeConditionsLastObservedAt`, same order.
    pressure_last_observed_at: [Option<SimTime>; 3],
    /// `thresholdsFirstObservedAt`, by index into `thresholds`.
    thresholds_first_observed_at: BTreeMap<usize, SimTime>,
    /// `thresholdsMet`: met, grace periods included, not yet resolved.
    pub(crate) thresholds_met: Vec<usize>,
    /// `lastObservations[memory.available]`.
    last_observation: Option<Observation>,
    pub(super) wait: Wait,
    next_gen: u64,
    /// Every eviction, in order.
    pub(crate) history: Vec<EvictionRecord>,
    /// Every change of a node condition: (time, condition, status).
    pub(crate) condition_changes: Vec<(SimTime, &'static str, bool)>,
    /// Every node-level reclaim, in order.
    pub(crate) reclaims: Vec<super::eviction_reclaim::ReclaimRecord>,
}

impl EvictionManager {
    pub(crate) fn new(spec: &KubeletSpec) -> Self {
        let c = &spec.config;
        // ParseThresholdConfig: hard thresholds, then soft ones with their grace periods.
        let mut thresholds: Vec<EvictionThreshold> = c
            .eviction_hard
            .iter()
            .map(|(s, v)| EvictionThreshold {
                signal: s.clone(),
                value: *v,
                grace_period: Dur::ZERO,
                min_reclaim: c.eviction_minimum_reclaim.get(s).copied(),
            })
            .collect();
        for (s, v) in &c.eviction_soft {
            thresholds.push(EvictionThreshold {
                signal: s.clone(),
                value: *v,
                grace_period: c
                    .eviction_soft_grace_period
                    .get(s)
                    .copied()
                    .unwrap_or(Dur::ZERO),
                min_reclaim: c.eviction_minimum_reclaim.get(s).copied(),
            });
        }
        EvictionManager {
            b: Default::default(),
            thresholds,
            max_pod_grace_period: c.eviction_max_pod_grace_period,
            pressure_transition_period: c.eviction_pressure_transition_period,
            monitoring_period: spec.timing.eviction_monitoring_period,
            pressure: [false; 3],
            pressure_last_observed_at: [None; 3],
            thresholds_first_observed_at: BTreeMap::new(),
            thresholds_met: Vec::new(),
            last_observation: None,
            wait: Wait::Sleeping,
            next_gen: 1,
            history: Vec::new(),
            condition_changes: Vec::new(),
            reclaims: Vec::new(),
        }
    }

    /// `thresholdsMet` over `which` (indices into `thresholds`): the thresholds whose
    /// signal is below their quantity (plus the minimum reclaim when enforced) now.
    pub(super) fn thresholds_met(
        &self,
        which: &[usize],
        obs: &[(&'static str, Observation)],
        enforce_min_reclaim: bool,
    ) -> Vec<usize> {
        which
            .iter()
            .copied()
            .filter(|&i| signals::threshold_met(&self.thresholds[i], obs, enforce_min_reclaim))
            .collect()
    }

    /// `nodeConditions`: the conditions reported now, in [`CONDITIONS`] order.
    pub(crate) fn conditions(&self) -> Vec<NodeConditionType> {
        CONDITIONS
            .iter()
            .zip(self.pressure)
            .filter(|(_, on)| *on)
            .map(|(c, _)| *c)
            .collect()
    }
}

/// The node conditions the manager reports, in the order it reports them.
pub(crate) const CONDITIONS: [NodeConditionType; 3] = [
    NodeConditionType::MemoryPressure,
    NodeConditionType::DiskPressure,
    NodeConditionType::PIDPressure,
];

pub(crate) use crate::model::quantity;

fn stats_of(summary: &StatsSummary, uid: PodUid) -> Option<&PodStats> {
    summary.pods.iter().find(|p| p.uid == uid)
}

/// `cmpBool`: true first.
fn cmp_bool(a: bool, b: bool) -> Ordering {
    b.cmp(&a)
}

/// `rankMemoryPressure`: pods exceeding their memory request first (pods without stats
/// before everything), then lower priority first, then larger usage above request first.
pub(crate) fn rank_memory_pressure(pods: &mut [Arc<ApiPod>], summary: &StatsSummary) {
    let usage = |p: &ApiPod| stats_of(summary, p.uid).map(|s| s.working_set_bytes);
    let request = |p: &ApiPod| pod_requests(&p.spec).memory_bytes;
    pods.sort_by(|p1, p2| {
        let (u1, u2) = (usage(p1), usage(p2));
        let exceed = match (u1, u2) {
            (Some(a), Some(b)) => cmp_bool(a > request(p1), b > request(p2)),
            _ => cmp_bool(u1.is_none(), u2.is_none()),
        };
        let priority = p1.spec.priority.cmp(&p2.spec.priority);
        let memory = match (u1, u2) {
            (Some(a), Some(b)) => {
                let d1 = a as i128 - request(p1) as i128;
                let d2 = b as i128 - request(p2) as i128;
                d2.cmp(&d1)
            }
            _ => cmp_bool(u1.is_none(), u2.is_none()),
        };
        exceed.then(priority).then(memory)
    });
}

/// `evictionMessage` for memory.
fn eviction_message(
    pod: &ApiPod,
    summary: &StatsSummary,
    threshold: &EvictionThreshold,
    obs: &Observation,
) -> String {
    let mut m = format!(
        "The node was low on resource: memory. Threshold quantity: {}, available: {}. ",
        quantity(threshold_quantity(threshold.value, obs.capacity)),
        quantity(obs.available)
    );
    let Some(stats) = stats_of(summary, pod.uid) else {
        return m;
    };
    for (name, usage) in &stats.containers {
        if let Some(c) = pod.spec.container_named(name) {
            let req = c.requests.memory_bytes;
            if *usage > req {
                m += &format!(
                    "Container {name} was using {}, request is {}, has larger consumption of memory. ",
                    quantity(*usage),
                    quantity(req)
                );
            }
        }
    }
    m
}

impl Kubelet {
    /// The eviction manager's admit handler (`Admit`): no condition, or a critical pod,
    /// admits; under memory pressure alone only BestEffort pods are rejected (tolerations
    /// are not modelled, so none tolerates the memory-pressure taint); under any other
    /// condition (DiskPressure, PIDPressure) every pod is.
    pub(super) fn eviction_admit(&self, pod: &ApiPod) -> Option<(RejectReason, String)> {
        let conditions = self.eviction.conditions();
        if conditions.is_empty() || is_critical_pod(pod) {
            return None;
        }
        let memory_only = conditions == [NodeConditionType::MemoryPressure];
        if memory_only && !is_best_effort(&pod.spec) {
            return None;
        }
        let names: Vec<&str> = conditions.iter().map(|c| c.as_str()).collect();
        Some((
            RejectReason::Evicted,
            format!("The node had condition: [{}]. ", names.join(" ")),
        ))
    }

    /// One pass of upstream's loop: `synchronize`, then sleep unless a pod was evicted (the
    /// wait for the kill and the cleanup starts instead).
    pub(super) fn eviction_round(&mut self, ctx: &mut Ctx) {
        if !self.eviction_synchronize(ctx) {
            self.eviction.wait = Wait::Sleeping;
            let _ = ctx.after(self.eviction.monitoring_period, KEv::EvictionSync);
        }
    }

    /// `synchronize`: returns whether the round goes on (a pod was evicted, or a node-level
    /// reclaim is under way and decides when its removals are answered).
    fn eviction_synchronize(&mut self, ctx: &mut Ctx) -> bool {
        let now = ctx.now();
        // Local storage isolation (on by default) goes on without thresholds; it needs the
        // per-pod summary only if some active pod has a limit to check.
        if self.eviction.thresholds.is_empty() {
            return self.local_storage_eviction(ctx);
        }
        // The node figures first; the active pods and the per-pod summary (both O(pods))
        // are built only when a threshold or a local storage limit asks for them.
        let node = ctx.stats_node();
        let obs = signals::observations(&node);
        let ev = &mut self.eviction;
        let all: Vec<usize> = (0..ev.thresholds.len()).collect();
        let mut met = ev.thresholds_met(&all, &obs, false);
        // Thresholds met last round stay met until their minimum reclaim is satisfied.
        let prev = ev.thresholds_met.clone();
        for i in ev.thresholds_met(&prev, &obs, true) {
            if !met.contains(&i) {
                met.push(i);
            }
        }
        met.sort_unstable();
        let first_observed: BTreeMap<usize, SimTime> = met
            .iter()
            .map(|i| {
                let at = ev.thresholds_first_observed_at.get(i).copied();
                (*i, at.unwrap_or(now))
            })
            .collect();
        // Node conditions: observed now if a threshold of theirs is met, and reported for
        // the pressure transition period after the last observation.
        for (k, cond) in CONDITIONS.iter().enumerate() {
            let observed = met
                .iter()
                .any(|i| signals::node_condition(&ev.thresholds[*i].signal) == Some(*cond));
            if observed {
                ev.pressure_last_observed_at[k] = Some(now);
            }
            let pressure = ev.pressure_last_observed_at[k]
                .is_some_and(|at| now.since(at) < ev.pressure_transition_period);
            if pressure != ev.pressure[k] {
                ev.condition_changes.push((now, cond.as_str(), pressure));
                ctx.emit(Transition::NodeCondition {
                    condition: *cond,
                    status: pressure,
                });
            }
            ev.pressure[k] = pressure;
        }
        let met_grace: Vec<usize> = first_observed
            .iter()
            .filter(|(i, at)| now.since(**at) >= ev.thresholds[**i].grace_period)
            .map(|(i, _)| *i)
            .collect();
        ev.thresholds_first_observed_at = first_observed;
        ev.thresholds_met = met_grace.clone();
        // thresholdsUpdatedStats: act only on stats newer than the last round's.
        let fresh = ev.last_observation.is_none_or(|l| node.time > l.time);
        ev.last_observation = signals::observed(&obs, MEMORY_AVAILABLE).copied();
        let mut updated: Vec<usize> = if fresh { met_grace } else { Vec::new() };
        if self.local_storage_eviction(ctx) {
            return true;
        }
        // byEvictionPriority: memory first, the others in configuration order.
        updated.sort_by_key(|i| self.eviction.thresholds[*i].signal != MEMORY_AVAILABLE);
        // getReclaimableThreshold: the first one; its node-level reclaim first
        // (`eviction_reclaim.rs`), the ranking if there is none.
        let Some(&ti) = updated.first() else {
            return false;
        };
        if self.eviction_reclaim(ctx, ti, node.disk.separate_imagefs) {
            return true;
        }
        self.evict_ranked(ctx, ti, &node, &obs)
    }

    /// Ranks the active pods for threshold `ti` and evicts the first that can be.
    pub(super) fn evict_ranked(
        &mut self,
        ctx: &mut Ctx,
        ti: usize,
        node: &StatsSummary,
        obs: &[(&'static str, Observation)],
    ) -> bool {
        let mut active = self.active_pods();
        if !self.eviction.b.on(Sw::EvictionWaitsForReclaim) {
            // <= v1.6 `filterOutTerminatedPods`: a pod whose status manager phase is terminal
            // (an evicted pod, from its kill on) is no longer active, though its containers
            // may still run and hold memory.
            active.retain(|p| {
                !self
                    .status
                    .statuses
                    .get(&p.uid)
                    .is_some_and(|v| v.status.phase.is_terminal())
            });
        }
        if active.is_empty() {
            return false;
        }
        let summary = ctx.stats_summary();
        debug_assert_eq!(
            (summary.time, summary.node_available_bytes, summary.disk),
            (node.time, node.node_available_bytes, node.disk)
        );
        let threshold = self.eviction.thresholds[ti].clone();
        let Some(o) = signals::observed(obs, &threshold.signal).copied() else {
            return false;
        };
        let mut ranked = active;
        match threshold.signal.as_str() {
            MEMORY_AVAILABLE => rank_memory_pressure(&mut ranked, &summary),
            signals::PID_AVAILABLE => signals::rank_pid_pressure(&mut ranked, &summary),
            s => signals::rank_disk_pressure(&mut ranked, &summary, s),
        }
        // At most one pod per round.
        for pod in &ranked {
            // A hard threshold asks for an immediate kill: grace 1 on v1.31
            // (`immediateEvictionGracePeriodSeconds` in
            // `pkg/kubelet/eviction/eviction_manager.go`, PR 124063), 0 before it.
            let grace = if threshold.is_hard() {
                self.immediate_grace()
            } else {
                self.eviction.max_pod_grace_period
            };
            let message = if threshold.signal == MEMORY_AVAILABLE {
                eviction_message(pod, &summary, &threshold, &o)
            } else {
                signals::disk_pid_message(pod, &summary, &threshold, &o)
            };
            let word = signals::signal_word(&threshold.signal);
            if self.evict_pod(ctx, pod, grace, message, word) {
                return true;
            }
        }
        false
    }

    /// `immediateEvictionGracePeriodSeconds`.
    fn immediate_grace(&self) -> i64 {
        i64::from(self.b.on(Sw::HardEvictionGraceOne))
    }

    /// `localStorageEviction`: the first active pod (in UID order) over an emptyDir
    /// `sizeLimit` or an ephemeral-storage limit is evicted at once. Upstream evicts every
    /// such pod in the round, one blocking kill after the other; here the round ends with
    /// the first and the next round (right after its cleanup) finds the next.
    fn local_storage_eviction(&mut self, ctx: &mut Ctx) -> bool {
        // Without any limit in config the O(pods) filter of the active pods and the per-pod
        // summary are skipped (the decision is the same); the pod manager counts the pods
        // with a limit as they come and go, so this costs no walk of the specs.
        if !self.config.any_storage_limited() {
            return false;
        }
        let active = self.active_pods();
        let summary = ctx.stats_summary();
        for pod in &active {
            let Some(stats) = summary.pods.iter().find(|s| s.uid == pod.uid) else {
                continue;
            };
            let Some((word, message)) = signals::local_storage_violation(&pod.spec, stats) else {
                continue;
            };
            let grace = self.immediate_grace();
            if self.evict_pod(ctx, pod, grace, message, word) {
                return true;
            }
        }
        false
    }

    /// `evictPod`: never a critical pod; otherwise `killPodNow` with the `Evicted` status
    /// function, and the manager blocks until it returns. True even if the kill times out.
    fn evict_pod(
        &mut self,
        ctx: &mut Ctx,
        pod: &Arc<ApiPod>,
        grace: i64,
        message: String,
        signal: EvictionSignal,
    ) -> bool {
        let uid = pod.uid;
        if is_critical_pod(pod) {
            ctx.emit(Transition::Eviction {
                uid,
                what: EvictionStep::CannotEvictCritical,
            });
            return false;
        }
        ctx.emit(Transition::Evict { uid, signal, grace });
        ctx.reach(crate::model::reach::Reach::EvictionKill);
        // With PodDisruptionConditions (v1.26+) the status also gets DisruptionTarget
        // (`evictPod` in v1.31 `pkg/kubelet/eviction/eviction_manager.go`).
        let status_fn = StatusFn::SetTerminal {
            phase: PodPhase::Failed,
            reason: REASON.to_string(),
            message: message.clone(),
            disruption_target: self.b.on(Sw::DisruptionTargetCondition),
        };
        ctx.reach(crate::model::reach::Reach::EvictionKill);
        // killPodNow sets the caller's timeout itself (KEv::KillPodNowReturned).
        let ch = self.kill_pod_now(ctx, pod.clone(), true, Some(grace), Some(status_fn));
        self.eviction.history.push(EvictionRecord {
            uid,
            pod: pod.spec.name.clone(),
            at: ctx.now(),
            signal: signal.as_str().to_string(),
            grace,
            kill_returned_at: None,
            kill_timed_out: false,
            cleaned_up_at: None,
            cleanup_timed_out: false,
            message,
        });
        self.eviction.wait = Wait::Killing { uid, ch };
        true
    }

    /// `killPodNow` returned for channel `ch` (closed, or timed out): the manager goes on to
    /// `waitForPodsCleanup`. Returns whether the eviction manager was the one waiting.
    pub(super) fn eviction_kill_returned(
        &mut self,
        ctx: &mut Ctx,
        ch: u64,
        timed_out: bool,
    ) -> bool {
        let Wait::Killing { uid, ch: c } = self.eviction.wait else {
            return false;
        };
        if c != ch {
            return false;
        }
        ctx.emit(Transition::Eviction {
            uid,
            what: if timed_out {
                EvictionStep::KillTimedOut
            } else {
                EvictionStep::KillCompleted
            },
        });
        if let Some(r) = self.eviction.history.last_mut() {
            r.kill_returned_at = Some(ctx.now());
            r.kill_timed_out = timed_out;
        }
        if !self.eviction.b.on(Sw::EvictionWaitsForReclaim) {
            // Before PRs 43590/50350 (<= v1.6): no wait for the pod's resources to be
            // reclaimed; the next round comes a monitoring period later, on whatever the
            // stats then say.
            self.eviction.wait = Wait::Sleeping;
            let _ = ctx.after(self.eviction.monitoring_period, KEv::EvictionSync);
            return true;
        }
        let gen = self.eviction.next_gen;
        self.eviction.next_gen += 1;
        let poll = ctx.after(POD_CLEANUP_POLL_FREQ, KEv::EvictionCleanupPoll(gen));
        let timeout = ctx.after(POD_CLEANUP_TIMEOUT, KEv::EvictionCleanupTimeout(gen));
        self.eviction.wait = Wait::Cleanup {
            uid,
            gen,
            poll,
            timeout,
        };
        true
    }

    /// `waitForPodsCleanup`'s ticker: `PodIsFinished` (the pod worker's
    /// `ShouldPodBeFinished`) ends the wait and the next round starts at once.
    pub(super) fn eviction_cleanup_poll(&mut self, ctx: &mut Ctx, g: u64) {
        let Wait::Cleanup {
            uid, gen, timeout, ..
        } = self.eviction.wait
        else {
            return;
        };
        if gen != g {
            return;
        }
        if !self.pw.should_pod_be_finished(uid) {
            let poll = ctx.after(POD_CLEANUP_POLL_FREQ, KEv::EvictionCleanupPoll(gen));
            self.eviction.wait = Wait::Cleanup {
                uid,
                gen,
                poll,
                timeout,
            };
            return;
        }
        ctx.cancel(timeout);
        ctx.emit(Transition::Eviction {
            uid,
            what: EvictionStep::PodCleanedUp,
        });
        if let Some(r) = self.eviction.history.last_mut() {
            r.cleaned_up_at = Some(ctx.now());
        }
        self.eviction_round(ctx);
    }

    /// `waitForPodsCleanup`'s timeout: give up waiting; the next round starts at once.
    pub(super) fn eviction_cleanup_timeout(&mut self, ctx: &mut Ctx, g: u64) {
        let Wait::Cleanup { uid, gen, poll, .. } = self.eviction.wait else {
            return;
        };
        if gen != g {
            return;
        }
        ctx.cancel(poll);
        ctx.emit(Transition::Eviction {
            uid,
            what: EvictionStep::CleanupTimedOut,
        });
        if let Some(r) = self.eviction.history.last_mut() {
            r.cleanup_timed_out = true;
        }
        self.eviction_round(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodSpec, Resources, RestartPolicy};

    fn pod(uid: u32, priority: i32, request: u64) -> Arc<ApiPod> {
        let mut c = ContainerSpec::named("c", "img");
        c.requests = Resources {
            cpu_milli: 0,
            memory_bytes: request,
        };
        let mut spec = PodSpec::new(
            &format!("p{uid}"),
            "default",
            RestartPolicy::Always,
            vec![c],
        );
        spec.priority = priority;
        Arc::new(ApiPod::new(PodUid(uid), spec))
    }

    fn summary(usage: &[(u32, u64)]) -> StatsSummary {
        StatsSummary {
            time: SimTime::ZERO,
            node_available_bytes: 0,
            node_working_set_bytes: 0,
            pods: usage
                .iter()
                .map(|(u, b)| PodStats {
                    uid: PodUid(*u),
                    working_set_bytes: *b,
                    containers: vec![("c".into(), *b)],
                    container_fs: Vec::new(),
                    volumes: Vec::new(),
                    processes: 0,
                })
                .collect(),
            disk: Default::default(),
        }
    }

    #[test]
    fn rank_memory_pressure_orders_like_upstream() {
        // 1: within request; 2: above request, priority 0, +100; 3: above, priority 0,
        // +500; 4: above, priority 10, +900; 5: no stats.
        let mut pods = vec![
            pod(1, 0, 1000),
            pod(2, 0, 100),
            pod(3, 0, 0),
            pod(4, 10, 100),
            pod(5, 100, 0),
        ];
        let s = summary(&[(1, 900), (2, 200), (3, 500), (4, 1000)]);
        rank_memory_pressure(&mut pods, &s);
        let order: Vec<u32> = pods.iter().map(|p| p.uid.0).collect();
        assert_eq!(order, [5, 3, 2, 4, 1]);
    }

    #[test]
    fn quantities_print_like_kubernetes() {
        assert_eq!(quantity(0), "0");
        assert_eq!(quantity(100 << 20), "100Mi");
        assert_eq!(quantity(1536), "1536");
        assert_eq!(quantity(3 << 30), "3Gi");
        assert_eq!(quantity(1000), "1k");
        assert_eq!(quantity(512), "512");
    }

    #[test]
    fn hard_and_soft_thresholds_from_config() {
        let t = EvictionThreshold {
            signal: MEMORY_AVAILABLE.into(),
            value: Threshold::Bytes(100),
            grace_period: Dur::ZERO,
            min_reclaim: None,
        };
        assert!(t.is_hard());
        let t = EvictionThreshold {
            grace_period: Dur::secs(1),
            ..t
        };
        assert!(!t.is_hard());
    }
}
