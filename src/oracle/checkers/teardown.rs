//! Teardown: no volume unmount, pod cgroup or directory removal under a running container
//! or while a kill of the pod is in flight.

use super::{topic, Checker};
use crate::model::{CriOp, HostOp, PodUid, Transition};
use crate::oracle::facts::Facts;
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, V127};
use crate::sim::SimTime;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::NoTeardownUnderRunningContainer,
        Invariant {
            name: "no-teardown-under-running-container",
            id: "C5",
            kind: Kind::Safety,
            meaning: "no volume unmount, pod cgroup removal or pod directory removal begins or takes effect while a container of the pod runs, or begins while a kill of the pod is in flight (termination requested and not yet terminated; in the v1.21 design, a pod-killer kill not yet done)",
            bound: "",
            source: "pkg/kubelet/kubelet.go SyncTerminatedPod, kubelet_pods.go cleanupOrphanedPodDirs (PRs 98424, 101524; issues 98142, 113979); race catalog 12, 24",
            profiles: V127,
        },
    ),
];

#[derive(Clone, Debug, Default)]
pub(crate) struct Teardown;

impl Checker for Teardown {
    const TOPICS: u32 = topic::CRI_BEGIN | topic::HOST;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::CriBegin { uid, call, .. }
                if matches!(
                    call,
                    CriOp::UnmountVolumes | CriOp::RemovePodCgroup | CriOp::RemovePodDir
                ) =>
            {
                let uid = *uid;
                running_check(at, uid, facts, out, format_args!("{call} began"));
                if facts.pod(uid).worker.kill_in_flight {
                    out.report(
                        facts,
                        Inv::NoTeardownUnderRunningContainer,
                        Some(uid),
                        at,
                        format_args!("{call} began while a kill of the pod was in flight"),
                    );
                }
            }
            Transition::Host {
                uid,
                what: HostOp::VolumesUnmounted,
            } => running_check(at, *uid, facts, out, format_args!("volumes were unmounted")),
            Transition::Host {
                uid,
                what: HostOp::PodDirRemoved,
            } => running_check(
                at,
                *uid,
                facts,
                out,
                format_args!("the pod directory was removed"),
            ),
            _ => {}
        }
    }
}

/// `what` is formatted only for a finding (no text built per transition).
fn running_check(
    at: SimTime,
    uid: PodUid,
    facts: &Facts,
    out: &mut Findings,
    what: std::fmt::Arguments<'_>,
) {
    if let Some(c) = facts.pod(uid).running.first().copied() {
        out.report(
            facts,
            Inv::NoTeardownUnderRunningContainer,
            Some(uid),
            at,
            format_args!("{what} while container {c} of the pod was running"),
        );
    }
}

#[cfg(test)]
#[path = "teardown_tests.rs"]
mod tests;
