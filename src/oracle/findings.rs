//! Where the checkers report: the findings of a run (each invariant at most once per pod,
//! and once for the node), with the pod's (or the node's) last transitions appended, and
//! the counters the run reads at the end.

use super::facts::Facts;
use super::invariants::Inv;
use super::OracleFinding;
use crate::model::PodUid;
use crate::sim::SimTime;
use std::fmt::Write as _;

/// A time as `<seconds>.<milliseconds>s`.
pub(crate) fn t(at: SimTime) -> String {
    format!(
        "{}.{:03}s",
        at.0 / 1_000_000_000,
        (at.0 % 1_000_000_000) / 1_000_000
    )
}

/// The findings and counters of one run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Findings {
    /// Bit per invariant active on the run's profile.
    pub(crate) active: u64,
    list: Vec<OracleFinding>,
    /// Per pod: findings reported (bit per invariant).
    pod_reported: Vec<u64>,
    node_reported: u64,
    /// Per invariant: liveness checks that had enough time.
    checked: Vec<u64>,
    /// Container starts that began between TermRequested and TermAcked (S1').
    pub(crate) starts_while_term_requested: u64,
}

impl Findings {
    /// Every invariant active.
    pub(crate) fn all_active() -> Self {
        Findings {
            active: (1u64 << Inv::ALL.len()) - 1,
            checked: vec![0; Inv::ALL.len()],
            ..Default::default()
        }
    }

    pub(crate) fn list(&self) -> &[OracleFinding] {
        &self.list
    }

    /// A liveness check of `inv` had enough time.
    pub(crate) fn checked(&mut self, inv: Inv) {
        self.checked[inv as usize] += 1;
    }

    #[cfg(test)]
    pub(crate) fn checked_count(&self, inv: Inv) -> u64 {
        self.checked.get(inv as usize).copied().unwrap_or(0)
    }

    /// Forget which pods were reported (with the facts they index).
    pub(crate) fn release_pods(&mut self) {
        self.pod_reported = Vec::new();
    }

    /// Report `inv` for `uid` (once per pod and invariant), or for the node.
    ///
    /// Out of line and cold, and `what` is still unformatted: a checker's call site only
    /// gathers the values the message names, in a block the compiler lays out after the
    /// check's hot path, and formats nothing when the finding was made before.
    #[cold]
    #[inline(never)]
    pub(crate) fn report(
        &mut self,
        facts: &Facts,
        inv: Inv,
        uid: Option<PodUid>,
        at: SimTime,
        what: std::fmt::Arguments<'_>,
    ) {
        let bit = 1u64 << (inv as usize);
        if self.active & bit == 0 {
            return;
        }
        let mut msg = std::fmt::format(what);
        let pod_name = match uid {
            Some(u) => {
                let i = u.0 as usize;
                if self.pod_reported.len() <= i {
                    self.pod_reported.resize(i + 1, 0);
                }
                if self.pod_reported[i] & bit != 0 {
                    return;
                }
                self.pod_reported[i] |= bit;
                let name = facts.get(u).map_or("", |p| p.name());
                // A run that keeps no history (its findings are quoted from the same run
                // with it kept, or not at all) lists no transitions.
                if facts.rings.kept() {
                    let _ = write!(
                        msg,
                        "\n    last transitions of {} ({u}):",
                        if name.is_empty() { "?" } else { name }
                    );
                }
                for (at, rec) in facts.rings.of(u) {
                    let _ = write!(
                        msg,
                        "\n      {}  {}",
                        t(at),
                        rec.render(u, name, &facts.syms)
                    );
                }
                name.to_string()
            }
            None => {
                if self.node_reported & bit != 0 {
                    return;
                }
                self.node_reported |= bit;
                if facts.rings.kept() {
                    msg.push_str("\n    last node transitions:");
                }
                for (at, rec) in facts.node.recent.iter() {
                    let _ = write!(msg, "\n      {}  {rec}", t(*at));
                }
                String::new()
            }
        };
        self.list.push(OracleFinding {
            invariant: inv.name(),
            pod: pod_name,
            at,
            message: msg,
        });
    }
}
