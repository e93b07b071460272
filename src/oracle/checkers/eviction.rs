//! Eviction: one pod per round, never a critical pod, the evicted pod's final status says
//! so, and the manager evaluates again once the kill returned.

use super::{crashed, topic, Checker, PerPod};
use crate::model::{EvictionStep, KillPodNowStep, PodPhase, PodUid, Transition};
use crate::oracle::facts::{Facts, PodFacts};
use crate::oracle::findings::{t, Findings};
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL};
use crate::sim::{Dur, SimTime};

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::EvictionRules,
        Invariant {
            name: "eviction-rules",
            id: "S15",
            kind: Kind::Safety,
            meaning: "at most one pod is evicted per eviction round (the next only after the previous was cleaned up, its containers, volumes and cgroup were reclaimed, or the wait timed out); no critical (static, mirror or priority >= 2000000000) pod is evicted; an evicted pod's final API status is Failed/Evicted (v1.31: Succeeded if every container exited 0, as the phase is recomputed after the kill; not checked when the pod was already terminating or another killPodNow's status function replaced the eviction's, or after a kubelet restart)",
            bound: "",
            source: "pkg/kubelet/eviction/eviction_manager.go synchronize, evictPod, waitForPodsCleanup (PRs 43590, 50350); pkg/kubelet/types IsCriticalPod; race catalog 21",
            profiles: ALL,
        },
    ),
    (
        Inv::EvictionReevaluates,
        Invariant {
            name: "eviction-reevaluates",
            id: "L9",
            kind: Kind::Liveness,
            meaning: "after an eviction's killPodNow returned, the eviction manager ends its wait for the pod's cleanup and evaluates the thresholds again",
            bound: "30 s (waitForPodsCleanup timeout) + 10 s (monitoring interval) + 1 s after the kill returned; skipped when the kubelet crashed or the node powered off since; with switch evictionWaitsForReclaim off (<= v1.6, no cleanup wait) the next evaluation is not in the trace unless it evicts, so a finding there may be spurious",
            source: "pkg/kubelet/eviction/eviction_manager.go synchronize, waitForPodsCleanup (PRs 43590, 50350)",
            profiles: ALL,
        },
    ),
];

/// waitForPodsCleanup's timeout + the monitoring interval + slack.
const EVICTION_REEVAL_BOUND: Dur = Dur::secs(41);

#[derive(Clone, Debug, Default)]
pub(crate) struct Eviction {
    /// Per pod: the eviction's status function reaches SyncTerminatingPod (the pod was not
    /// already terminating when it was evicted, and no other killPodNow replaced the
    /// function).
    status_applies: PerPod<bool>,
    /// The pod the eviction manager evicted and still waits for.
    in_flight: Option<PodUid>,
    /// An eviction's killPodNow returned and the cleanup wait has not ended: since when (L9).
    wait_since: Option<(PodUid, SimTime)>,
}

impl Checker for Eviction {
    const TOPICS: u32 =
        topic::EVICT | topic::EVICTION | topic::KILL_POD_NOW | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::Evict { uid, .. } => {
                self.wait_ended(at, facts, out);
                self.evict(at, *uid, facts, out);
            }
            Transition::Eviction { uid, what } => match *what {
                EvictionStep::KillCompleted | EvictionStep::KillTimedOut => {
                    self.wait_since = Some((*uid, at));
                }
                EvictionStep::PodCleanedUp | EvictionStep::CleanupTimedOut => {
                    self.wait_ended(at, facts, out);
                    if self.in_flight == Some(*uid) {
                        self.in_flight = None;
                    }
                }
                _ => {}
            },
            Transition::KillPodNow {
                uid,
                what: KillPodNowStep::Requested,
                evict: false,
                ..
            } if !facts.pod(*uid).worker.terminated => {
                // The last status function registered before a SyncTerminatingPod (each
                // retry acknowledges again) wins: the shutdown manager's replaces the
                // eviction's.
                *self.status_applies.at(*uid) = false;
            }
            _ if crashed(tr) => {
                self.in_flight = None;
                self.wait_since = None;
            }
            _ => {}
        }
    }

    fn finish_node(&mut self, end: SimTime, facts: &Facts, out: &mut Findings) {
        if facts.node.kubelet_down || facts.node.power_off_at.is_some() {
            return;
        }
        if let Some((u, since)) = self.wait_since {
            if since + EVICTION_REEVAL_BOUND <= end {
                out.checked(Inv::EvictionReevaluates);
                out.report(
                    facts,
                    Inv::EvictionReevaluates,
                    Some(u),
                    end,
                    format_args!("the eviction's kill returned at {}, yet the manager has not evaluated again by {}", t(since), t(end)),
                );
            }
        }
    }

    fn finish_pod(&mut self, end: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        self.final_status(end, uid, facts, out);
    }
}

impl Eviction {
    /// The eviction manager's wait after an eviction's kill ended at `at` (L9).
    fn wait_ended(&mut self, at: SimTime, facts: &Facts, out: &mut Findings) {
        let Some((uid, since)) = self.wait_since.take() else {
            return;
        };
        if at > since + EVICTION_REEVAL_BOUND {
            out.report(
                facts,
                Inv::EvictionReevaluates,
                Some(uid),
                at,
                format_args!(
                    "the eviction manager evaluated again {} after the eviction's kill returned (bound {}s)",
                    t(SimTime(at.0 - since.0)),
                    EVICTION_REEVAL_BOUND.whole_secs()
                ),
            );
        }
        out.checked(Inv::EvictionReevaluates);
    }

    fn evict(&mut self, at: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        let p = facts.pod(uid);
        *self.status_applies.at(uid) = !p.worker.terminating_began;
        if p.is_critical() {
            out.report(
                facts,
                Inv::EvictionRules,
                Some(uid),
                at,
                format_args!(
                    "a critical pod (static, mirror or priority >= 2000000000) was evicted"
                ),
            );
        }
        // The previous evicted pod's resources were reclaimed (nothing runs, volumes
        // unmounted, cgroup gone): the manager may go on (the manager's own "cleaned up" or
        // time-out transitions also end the wait).
        let reclaimed = |p: &PodFacts| p.running.is_empty() && !p.mounted && !p.cgroup;
        let pending = self
            .in_flight
            .filter(|u| *u != uid && !facts.get(*u).is_some_and(reclaimed));
        if let Some(prev) = pending {
            out.report(
                facts,
                Inv::EvictionRules,
                Some(uid),
                at,
                format_args!("evicted while {prev}, evicted before, still held containers, volumes or its cgroup and its cleanup wait had not ended (more than one pod per round)"),
            );
        }
        self.in_flight = Some(uid);
    }

    /// An evicted pod's final API status is Failed/Evicted (or Succeeded, see the row).
    fn final_status(&self, end: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        let p = facts.pod(uid);
        let Some(ev) = p.evicted_at() else {
            return;
        };
        if !self.status_applies.get(uid).copied().unwrap_or(false) {
            return; // a SyncTerminatingPod already running never applies the status function
        }
        if facts.node.crashes_at.iter().any(|c| *c >= ev) {
            return; // the new kubelet knows nothing of the eviction
        }
        let Some(status) = p.api_status.as_ref() else {
            return;
        };
        if !status.phase.is_terminal() || p.api_status_at < ev {
            return;
        }
        // v1.31 recomputes the phase once the containers stopped: every container (its
        // newest instance) exited 0 gives Succeeded, whatever the status function said.
        let all_zero = p.spec.as_ref().is_some_and(|s| {
            s.containers.iter().all(|c| {
                p.instances
                    .iter()
                    .rev()
                    .find(|i| facts.text(i.name) == c.name)
                    .and_then(|i| i.exit)
                    .is_some_and(|(code, _)| code == 0)
            })
        });
        let evicted =
            status.phase == PodPhase::Failed && status.reason.as_deref() == Some("Evicted");
        if !(evicted || status.phase == PodPhase::Succeeded && all_zero) {
            out.report(
                facts,
                Inv::EvictionRules,
                Some(uid),
                end,
                format_args!(
                    "the pod was evicted at {}, yet its final API status is {} ({})",
                    t(ev),
                    status.phase,
                    status.reason.as_deref().unwrap_or("no reason")
                ),
            );
        }
    }
}

#[cfg(test)]
#[path = "eviction_tests.rs"]
mod tests;
