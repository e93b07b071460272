//! Lifecycle hooks: a deletion is not held up by a postStart hook. Upstream issue 116032
//! (open): the runtime part of `SyncPod` runs on a context nobody cancels, so a pod deleted
//! while a container's postStart hook runs is killed only after the hook returns, however
//! long past its grace period that is.

use super::{topic, Checker, PerPod, PER_ERROR};
use crate::model::{CriOp, PodUid, Transition};
use crate::oracle::facts::Facts;
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind};
use crate::sim::{Dur, SimTime};

/// Time allowed on top of the grace period (watch delivery, the worker taking up the
/// termination, the stop's latencies, the runtime's SIGKILL).
const HOOK_SLACK: Dur = Dur::secs(10);

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[(
    Inv::DeletionNotHeldByPostStart,
    Invariant {
        name: "deletion-not-held-by-poststart",
        id: "L13",
        kind: Kind::Liveness,
        meaning: "a pod whose deletion the kubelet observed while a postStart hook of it ran (or before one began) has every container exited within its grace period: the hook does not hold the kill back",
        bound: "max(G, 2 s) + 10 s after the kubelet observed the deletion, + 20 s per failed sync or CRI call of the pod since; G = the largest grace the pod could get (spec, deletes); checked when a container exits and at the end",
        source: "pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer, lifecycle/handlers.go (issue 116032, open upstream); race catalog 32",
        profiles: &[],
    },
)];

#[derive(Clone, Debug, Default)]
struct PodHooks {
    /// postStart hooks in flight (by container id), with when each began.
    open: Vec<(u32, SimTime)>,
    /// When the kubelet observed the deletion while a hook ran or before one began.
    held_since: Option<SimTime>,
    reported: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Hooks {
    pods: PerPod<PodHooks>,
}

impl Checker for Hooks {
    const TOPICS: u32 = topic::CRI_BEGIN
        | topic::CRI_END
        | topic::CONFIG_OP
        | topic::CONTAINER_EXITED
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::CriBegin {
                uid,
                call: CriOp::ExecPostStart,
                target,
                ..
            } => {
                let seen = facts.pod(*uid).inc.saw_delete_at;
                let h = self.pods.at(*uid);
                h.open.push((*target, at));
                if seen.is_some() && h.held_since.is_none() {
                    h.held_since = seen;
                }
            }
            Transition::CriEnd {
                uid,
                call: CriOp::ExecPostStart,
                target,
                ..
            } => self.pods.at(*uid).open.retain(|o| o.0 != *target),
            Transition::ConfigOp { uid, .. } => {
                let seen = facts.pod(*uid).inc.saw_delete_at;
                let h = self.pods.at(*uid);
                if seen == Some(at) && !h.open.is_empty() && h.held_since.is_none() {
                    h.held_since = seen;
                }
            }
            Transition::ContainerExited { uid, id, .. } => {
                self.check(*uid, at, facts, out, || {
                    format!("container {id} exited at {at}")
                });
            }
            tr if super::crashed(tr) => self.pods.reset_all(),
            _ => {}
        }
    }
}

impl Hooks {
    /// Reports `uid` when its deletion was held by a hook and `at` is past the bound
    /// (`what`: what happened then, written only for a finding).
    fn check(
        &mut self,
        uid: PodUid,
        at: SimTime,
        facts: &Facts,
        out: &mut Findings,
        what: impl FnOnce() -> String,
    ) {
        let Some(h) = self.pods.get(uid) else {
            return;
        };
        let Some(seen) = h.held_since else {
            return;
        };
        if h.reported {
            return;
        }
        let p = facts.pod(uid);
        let grace = Dur::secs(p.max_grace().max(p.spec_grace()).max(2) as u64);
        let deadline = seen + grace + HOOK_SLACK + Dur(PER_ERROR.0 * p.errors_since(seen));
        out.checked(Inv::DeletionNotHeldByPostStart);
        if at > deadline {
            self.pods.at(uid).reported = true;
            let what = what();
            out.report(
                facts,
                Inv::DeletionNotHeldByPostStart,
                Some(uid),
                at,
                format_args!(
                    "the kubelet saw the deletion at {seen} while a postStart hook ran; {what}, past the bound {deadline} (grace {}s + {}s + {}s per error)",
                    grace.whole_secs(),
                    HOOK_SLACK.whole_secs(),
                    PER_ERROR.whole_secs()
                ),
            );
        }
    }

    /// At the end of the run: a pod held by a hook whose containers still run.
    pub(crate) fn finish_pod(
        &mut self,
        end: SimTime,
        uid: PodUid,
        facts: &Facts,
        out: &mut Findings,
    ) {
        if let Some(c) = facts.pod(uid).running.first() {
            self.check(uid, end, facts, out, || {
                format!("container {c} still runs at the end ({end})")
            });
        }
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
