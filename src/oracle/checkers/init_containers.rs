//! Init containers and native sidecars: a classic init container runs at most once in a
//! sandbox once a regular container ran there; in a pod's termination, a sidecar gets
//! SIGTERM only after every regular container of the pod and every sidecar declared after
//! it has exited.

use super::{topic, Checker, PerPod};
use crate::model::{ContainerId, NoteKind, PodUid, ProcessSignal, Transition};
use crate::oracle::facts::Facts;
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, V129};
use crate::sim::SimTime;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
    Inv::SidecarsStopAfterMainContainers,
    Invariant {
        name: "sidecars-stop-after-main-containers",
        id: "S19",
        kind: Kind::Safety,
        meaning: "once a pod's termination began, a native sidecar (init container with restartPolicy Always) gets SIGTERM only after every regular container of the pod and every sidecar declared after it exited, unless its wait for them outlasted its grace period",
        bound: "",
        source: "pkg/kubelet/kuberuntime/kuberuntime_termination_order.go, killContainer (KEP 753, PR 120620, v1.29); race catalog 30",
        profiles: V129,
    },
    ),
    (
        Inv::InitContainersNotRerun,
        Invariant {
            name: "init-containers-not-rerun",
            id: "S20",
            kind: Kind::Safety,
            meaning: "no classic init container (no restartPolicy Always) starts in a sandbox where a regular container of the pod already ran: once the app containers started, the pod stays initialized until it gets a new sandbox",
            bound: "",
            source: "pkg/kubelet/kuberuntime/kuberuntime_container.go, computeInitContainerActions (PR 96572, issues 62362, 90271); race catalog 31",
            profiles: crate::oracle::invariants::ALL,
        },
    ),
];

#[derive(Clone, Debug, Default)]
pub(crate) struct InitContainers {
    /// Pods where a sidecar's wait for its turn ran out of grace (the order is then not
    /// owed).
    timed_out: PerPod<bool>,
}

impl Checker for InitContainers {
    const TOPICS: u32 = topic::SIGNAL | topic::NOTE | topic::CONTAINER_RUNNING;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::Note {
                uid,
                what: NoteKind::SidecarTurnTimedOut,
            } => *self.timed_out.at(*uid) = true,
            Transition::ContainerRunning { uid, id, name } => {
                if let Some(why) = init_rerun(*uid, *id, name, facts) {
                    out.report(
                        facts,
                        Inv::InitContainersNotRerun,
                        Some(*uid),
                        at,
                        format_args!("{}", why),
                    );
                }
            }
            Transition::Signal {
                uid,
                id,
                signal: ProcessSignal::Sigterm,
            } => {
                if self.timed_out.get(*uid).copied().unwrap_or(false) {
                    return;
                }
                if let Some(why) = out_of_turn(*uid, *id, facts) {
                    out.report(
                        facts,
                        Inv::SidecarsStopAfterMainContainers,
                        Some(*uid),
                        at,
                        format_args!("{}", why),
                    );
                }
            }
            _ => {}
        }
    }
}

/// Why container `id` (`name`) of `uid`, just seen running, is a classic init container
/// run again in a sandbox where a regular container of the pod already ran, if it is.
fn init_rerun(uid: PodUid, id: ContainerId, name: &str, facts: &Facts) -> Option<String> {
    let p = facts.pod(uid);
    let spec = p.spec.as_ref()?;
    if !spec
        .init_containers
        .iter()
        .any(|c| c.name == name && !c.is_sidecar())
    {
        return None;
    }
    let (_, sandbox_at) = p.ready_sandboxes.last()?;
    p.instances
        .iter()
        .filter(|i| i.id != id && i.running_at >= *sandbox_at)
        .find(|i| spec.containers.iter().any(|c| c.name == facts.text(i.name)))
        .map(|i| {
            format!(
                "init container {name} started again while regular container {} had run in \
                 the same sandbox since {}",
                facts.text(i.name),
                i.running_at
            )
        })
}

/// Why a SIGTERM to container `id` of `uid` comes out of turn, if it does.
fn out_of_turn(uid: PodUid, id: ContainerId, facts: &Facts) -> Option<String> {
    let p = facts.pod(uid);
    let spec = p.spec.as_ref()?;
    if !p.worker.terminating_began || !spec.has_sidecars() {
        return None;
    }
    let name = facts.text(p.instances.iter().find(|i| i.id == id)?.name);
    let k = spec
        .init_containers
        .iter()
        .position(|c| c.name == name && c.is_sidecar())?;
    let later = &spec.init_containers[k + 1..];
    p.running
        .iter()
        .filter(|r| **r != id)
        .filter_map(|r| p.instances.iter().find(|i| i.id == *r))
        .find_map(|i| {
            let other = facts.text(i.name);
            if spec.containers.iter().any(|c| c.name == other) {
                Some(format!(
                    "sidecar {name} got SIGTERM while regular container {other} still ran",
                ))
            } else if later.iter().any(|c| c.name == other && c.is_sidecar()) {
                Some(format!(
                    "sidecar {name} got SIGTERM while sidecar {other}, declared after it, still ran",
                ))
            } else {
                None
            }
        })
}

#[cfg(test)]
#[path = "init_containers_tests.rs"]
mod tests;
