//! killPodNow (eviction, node shutdown): its channel closes only once the worker reached
//! Terminated, and the call returns in bounded time.

use super::{crashed, topic, Checker, STEP_SLACK};
use crate::model::{KillPodNowStep, PodUid, Transition};
use crate::oracle::facts::Facts;
use crate::oracle::findings::{t, Findings};
use crate::oracle::invariants::{Inv, Invariant, Kind, V122};
use crate::sim::{Dur, SimTime};

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::KillCompletionTruthful,
        Invariant {
            name: "kill-completion-truthful",
            id: "S13",
            kind: Kind::Safety,
            meaning: "a killPodNow CompletedCh is closed only once the pod's worker reached Terminated",
            bound: "",
            source: "pkg/kubelet/pod_workers.go KillPodOptions.CompletedCh, completeTerminating",
            profiles: V122,
        },
    ),
    (
        Inv::KillPodNowReturns,
        Invariant {
            name: "kill-pod-now-returns",
            id: "L8",
            kind: Kind::Liveness,
            meaning: "a killPodNow call (eviction, node shutdown) stops blocking: its channel closes or it times out",
            bound: "max(10 s, 1.5 x G) + 1 s after the request, G = the largest grace the kill could use (the spec's, the override the request carried, even when longer than the spec's, the longest shutdown group period); checked on return and at the end; pending calls are dropped when the kubelet crashes",
            source: "pkg/kubelet/pod_workers.go killPodNow",
            profiles: V122,
        },
    ),
];

#[derive(Clone, Debug, Default)]
pub(crate) struct Kills {
    /// Pending killPodNow calls: (channel, pod, requested at, the eviction's grace
    /// override) (L8).
    waits: Vec<(u64, PodUid, SimTime, i64)>,
    /// The grace override of the eviction announced last (`Evict` comes just before its
    /// `killPodNow` request).
    evict_grace: Option<(PodUid, i64)>,
}

impl Checker for Kills {
    const TOPICS: u32 = topic::EVICT | topic::KILL_POD_NOW | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::Evict { uid, grace, .. } => self.evict_grace = Some((*uid, *grace)),
            Transition::KillPodNow {
                uid,
                ch,
                what,
                evict,
                ..
            } => match *what {
                KillPodNowStep::Requested => {
                    // killPodNow's timeout follows the override it was given, which may be
                    // longer than the pod's own grace (a soft eviction's
                    // evictionMaxPodGracePeriod).
                    let grace = match self.evict_grace.take() {
                        Some((u, g)) if *evict && u == *uid => g,
                        _ => 0,
                    };
                    self.waits.push((*ch, *uid, at, grace))
                }
                KillPodNowStep::Closed => {
                    if !facts.pod(*uid).worker.terminated {
                        out.report(
                            facts,
                            Inv::KillCompletionTruthful,
                            Some(*uid),
                            at,
                            format_args!("killPodNow channel {ch} was closed before the pod's worker reached Terminated"),
                        );
                    }
                }
                KillPodNowStep::Returned | KillPodNowStep::TimedOut => {
                    if let Some(k) = self.waits.iter().position(|k| k.0 == *ch) {
                        let (_, u, since, g) = self.waits.remove(k);
                        out.checked(Inv::KillPodNowReturns);
                        let bound = bound(u, g, facts);
                        if at > since + bound {
                            out.report(
                                facts,
                                Inv::KillPodNowReturns,
                                Some(u),
                                at,
                                format_args!("killPodNow (channel {ch}) returned {} after the request (bound {}s)", t(SimTime(at.0 - since.0)), bound.whole_secs()),
                            );
                        }
                    }
                }
            },
            _ if crashed(tr) => {
                self.waits.clear();
                self.evict_grace = None;
            }
            _ => {}
        }
    }

    fn finish_node(&mut self, end: SimTime, facts: &Facts, out: &mut Findings) {
        if facts.node.kubelet_down || facts.node.power_off_at.is_some() {
            return;
        }
        for &(ch, u, since, g) in &self.waits {
            let bound = bound(u, g, facts);
            if since + bound <= end {
                out.checked(Inv::KillPodNowReturns);
                out.report(
                    facts,
                    Inv::KillPodNowReturns,
                    Some(u),
                    end,
                    format_args!("killPodNow (channel {ch}) requested at {} has not returned by {} (bound {}s)", t(since), t(end), bound.whole_secs()),
                );
            }
        }
    }
}

/// `max(10 s, 1.5 x G)` + 1 s for a killPodNow of `uid` whose request carried grace
/// override `requested` (L8).
fn bound(uid: PodUid, requested: i64, facts: &Facts) -> Dur {
    let g = facts.get(uid).map_or(requested, |p| {
        p.spec_grace()
            .max(requested)
            .max(p.min_override().unwrap_or(0))
            .max(facts.node.max_group_period_s)
    });
    let g = g.max(0) as u64;
    Dur::secs((g + g / 2).max(10)) + STEP_SLACK
}

#[cfg(test)]
#[path = "kills_tests.rs"]
mod tests;
