//! The API and the status manager: terminal phases only once nothing runs, and absorbing
//! (in the API and in the status manager's cache); Ready never with a terminal phase; the
//! final container statuses truthful; every status written is the object's own; the final
//! DELETE only after reclamation; no writes for runtime-only pods; a restarted kubelet
//! readmits the pods that ran.

use super::{crashed, topic, Checker, PerPod};
use crate::model::{
    ApiContainerState, ApiPodStatus, ContainerId, PodPhase, PodUid, RemovedBy, Transition,
};
use crate::oracle::facts::Facts;
use crate::oracle::findings::{t, Findings};
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, V121_V125, V122, V123, V125, V127};
use crate::sim::{Dur, SimTime};
use std::sync::Arc;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::NoTerminalPhaseWhileRunning,
        Invariant {
            name: "no-terminal-phase-while-running",
            id: "S4",
            kind: Kind::Safety,
            meaning: "the API gets Succeeded/Failed for a pod only when no container of it runs and its worker reached Terminated (admission rejections excepted)",
            bound: "",
            source: "pkg/kubelet/status/status_manager.go, kubelet_pods.go (PR 108366, issue 106884; by design violated in v1.21, race catalog 3)",
            profiles: V125,
        },
    ),
    (
        Inv::TerminalPhaseAbsorbing,
        Invariant {
            name: "terminal-phase-absorbing",
            id: "S5",
            kind: Kind::Safety,
            meaning: "once the API holds Succeeded or Failed for a pod object, no status write changes it to Pending, Running or Unknown, or Succeeded to Failed",
            bound: "",
            source: "pkg/kubelet/status/status_manager.go, kubelet_pods.go generateAPIPodStatus (PR 105462, issue 105358); race catalog 2",
            profiles: V123,
        },
    ),
    (
        Inv::LocalTerminalPhaseAbsorbing,
        Invariant {
            name: "local-terminal-phase-absorbing",
            id: "S5'",
            kind: Kind::Safety,
            meaning: "once the status manager's cache holds a terminal phase for a UID, it never goes back to Pending or Running while the pod is in config (once REMOVEd, housekeeping may drop the cached status; a status the sync dropped because the object of the name is another UID's, LocalStatusDropped, starts afresh)",
            bound: "",
            source: "pkg/kubelet/status/status_manager.go updateStatusInternal, syncPod (deleted and recreated: deletePodStatus)",
            profiles: V123,
        },
    ),
    (
        Inv::DeleteOnlyAfterReclamation,
        Invariant {
            name: "delete-only-after-reclamation",
            id: "S6",
            kind: Kind::Safety,
            meaning: "the kubelet deletes a pod object only after SyncTerminatedPod succeeded, its volumes are unmounted, its cgroup is removed, the API holds a terminal phase and a deletion timestamp",
            bound: "",
            source: "pkg/kubelet/status/status_manager.go canBeDeleted, kubelet.go SyncTerminatedPod (PR 108366, PR 113145)",
            profiles: V127,
        },
    ),
    (
        Inv::RuntimePodsNoApiWrites,
        Invariant {
            name: "runtime-pods-no-api-writes",
            id: "S14",
            kind: Kind::Safety,
            meaning: "the kubelet writes no status and deletes no object for a UID it knows only as a runtime pod",
            bound: "",
            source: "pkg/kubelet/pod_workers.go (runtime-only pods), status/status_manager.go",
            profiles: V122,
        },
    ),
    (
        Inv::NoReadyWithTerminalPhase,
        Invariant {
            name: "no-ready-with-terminal-phase",
            id: "C3",
            kind: Kind::Safety,
            meaning: "the API never shows a pod Ready while its phase is Succeeded or Failed",
            bound: "",
            source: "pkg/kubelet/status/generate.go GeneratePodReadyCondition",
            profiles: ALL,
        },
    ),
    (
        Inv::FailedNeverBecomesSucceeded,
        Invariant {
            name: "failed-never-becomes-succeeded",
            id: "C1",
            kind: Kind::Safety,
            meaning: "a pod object whose API phase was Failed never becomes Succeeded",
            bound: "",
            source: "pkg/kubelet/kubelet_pods.go, status/status_manager.go (PR 88440, issue 58711); race catalog 4",
            profiles: ALL,
        },
    ),
    (
        Inv::FinalContainerStatusFidelity,
        Invariant {
            name: "final-container-status-fidelity",
            id: "C12",
            kind: Kind::Safety,
            meaning: "in a terminal pod's final API status, a terminated container status naming a container ID carries that container's real exit code, and none says ContainerStatusUnknown when the real exit was observable (it exited 5 s or more before the write, is not in the last termination state, was not removed, and no failed start or kubelet restart came since)",
            bound: "",
            source: "pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses, status_manager.go TerminatePod (PR 88440, issue 58711); race catalog 4",
            profiles: V122,
        },
    ),
    (
        Inv::RestartReadmitsRunningPods,
        Invariant {
            name: "restart-readmits-running-pods",
            id: "C16",
            kind: Kind::Safety,
            meaning: "a restarted kubelet does not reject for resources (OutOf<resource>) a pod whose containers were running when it went down, unless a pod was created since (with unchanged capacity the pods admitted before the restart still fit; terminal pods must not count)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go UpdatePod first sight of a terminal pod, kubelet_pods.go filterOutInactivePods (PR 105527, issue 105523); race catalog 16",
            profiles: V121_V125,
        },
    ),
    (
        Inv::ApiWritesCarryUid,
        Invariant {
            name: "api-writes-carry-uid",
            id: "C14",
            kind: Kind::Safety,
            meaning: "every status the kubelet writes to a pod object is that object's own (by UID): no container ID in it is one of another UID's containers (for a mirror pod: its static pod's), so a status computed for another UID of the same name never lands; the final DELETE is checked per UID by delete-only-after-reclamation",
            bound: "",
            source: "pkg/kubelet/status/status_manager.go syncPod (UID check before the PATCH; DELETE with a UID precondition), pkg/util/pod/pod.go PatchPodStatus; race catalog checklist 14",
            profiles: ALL,
        },
    ),
];

/// Final container status: the kubelet has seen an exit this long before it wrote a
/// terminal status (PLEG relist period plus latencies, generously).
const OBSERVABLE_AFTER: Dur = Dur::secs(5);

/// The pod of each container that ran, by container ID: the runtime numbers containers
/// from 1 upwards, so a vector indexed by ID (`uid + 1` of the owner, 0: unknown) holds
/// them densely, and a lookup is an index instead of a tree search.
#[derive(Clone, Debug, Default)]
struct Owners(Vec<u32>);

impl Owners {
    fn insert(&mut self, id: ContainerId, uid: PodUid) {
        let i = id.0 as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, 0);
        }
        self.0[i] = uid.0 + 1;
    }

    fn get(&self, id: ContainerId) -> Option<PodUid> {
        match self.0.get(id.0 as usize) {
            Some(&o) if o != 0 => Some(PodUid(o - 1)),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct ApiChecker {
    /// The pod each container that ran belongs to (C14).
    container_owner: Owners,
    /// A pod object (not a mirror pod) was created since the kubelet last crashed (C16).
    created_since_crash: bool,
    /// Per pod: a container of it ran when the kubelet last crashed (C16).
    running_at_crash: PerPod<bool>,
}

impl Checker for ApiChecker {
    const TOPICS: u32 = topic::API_CREATED
        | topic::API_REMOVED
        | topic::API_STATUS_PATCHED
        | topic::CONTAINER_RUNNING
        | topic::LOCAL_STATUS
        | topic::POD_REJECTED
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::ApiCreated {
                mirror_of: None, ..
            } => self.created_since_crash = true,
            Transition::ContainerRunning { uid, id, .. } => {
                self.container_owner.insert(*id, *uid);
            }
            Transition::ApiRemoved { uid, by } => {
                if *by == RemovedBy::Kubelet {
                    kubelet_deleted(at, *uid, facts, out);
                }
                check_final_status(at, *uid, facts, out);
            }
            Transition::ApiStatusPatched { uid, of, status } => {
                self.status_patched(at, *uid, *of, status, facts, out)
            }
            Transition::PodRejected { uid, reason } => {
                let uid = *uid;
                let was_running = self.running_at_crash.get(uid).copied().unwrap_or(false);
                if reason.is_out_of_resource()
                    && was_running
                    && !facts.node.crashes_at.is_empty()
                    && !self.created_since_crash
                {
                    out.report(
                        facts,
                        Inv::RestartReadmitsRunningPods,
                        Some(uid),
                        at,
                        format_args!("the restarted kubelet rejected the pod ({reason}), whose containers ran when it went down; no pod was created since"),
                    );
                }
            }
            Transition::LocalStatus { uid, phase } => {
                let inc = &facts.pod(*uid).inc;
                if !phase.is_terminal()
                    && inc.local_terminal
                    && !inc.out_of_config
                    && matches!(phase, PodPhase::Pending | PodPhase::Running)
                {
                    out.report(
                        facts,
                        Inv::LocalTerminalPhaseAbsorbing,
                        Some(*uid),
                        at,
                        format_args!(
                            "the status manager's cache went from a terminal phase back to {phase}"
                        ),
                    );
                }
            }
            _ if crashed(tr) => {
                self.created_since_crash = false;
                for (i, p) in facts.pods.iter().enumerate() {
                    *self.running_at_crash.at(PodUid(i as u32)) = !p.running.is_empty();
                }
            }
            _ => {}
        }
    }

    fn finish_pod(&mut self, end: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        if facts.pod(uid).removed_at().is_none() {
            check_final_status(end, uid, facts, out);
        }
    }
}

impl ApiChecker {
    /// A status write to object `obj` (of pod `of`: itself, or a mirror pod's static pod).
    fn status_patched(
        &self,
        at: SimTime,
        obj: PodUid,
        of: PodUid,
        status: &Arc<ApiPodStatus>,
        facts: &Facts,
        out: &mut Findings,
    ) {
        let phase = status.phase;
        let old = facts.before.api_phase;
        let p = facts.pod(of);
        if !p.inc.config_known {
            out.report(
                facts,
                Inv::RuntimePodsNoApiWrites,
                Some(of),
                at,
                format_args!(
                    "the kubelet wrote the status of a pod it knows only as a runtime pod"
                ),
            );
        }
        let foreign = status.containers.iter().find_map(|c| {
            let id = c.container_id?;
            let owner = self.container_owner.get(id)?;
            (owner != of).then_some((id, owner))
        });
        if let Some((id, owner)) = foreign {
            out.report(
                facts,
                Inv::ApiWritesCarryUid,
                Some(of),
                at,
                format_args!("the status written to {obj} (for {of}) names container {id}, a container of {owner}"),
            );
        }
        if phase.is_terminal() && !old.is_terminal() && !p.inc.rejected {
            if let Some(c) = p.running.first() {
                out.report(
                    facts,
                    Inv::NoTerminalPhaseWhileRunning,
                    Some(of),
                    at,
                    format_args!(
                        "the API got phase {phase} while container {c} of the pod was running"
                    ),
                );
            } else if !p.worker.terminated {
                out.report(
                    facts,
                    Inv::NoTerminalPhaseWhileRunning,
                    Some(of),
                    at,
                    format_args!(
                        "the API got phase {phase} before the pod's worker reached Terminated"
                    ),
                );
            }
        }
        if old.is_terminal() && phase != old {
            if old == PodPhase::Failed && phase == PodPhase::Succeeded {
                out.report(
                    facts,
                    Inv::FailedNeverBecomesSucceeded,
                    Some(of),
                    at,
                    format_args!("the API phase went from Failed to Succeeded"),
                );
            } else {
                out.report(
                    facts,
                    Inv::TerminalPhaseAbsorbing,
                    Some(of),
                    at,
                    format_args!("the API phase went from {old} to {phase}"),
                );
            }
        }
        if phase.is_terminal() && status.ready {
            out.report(
                facts,
                Inv::NoReadyWithTerminalPhase,
                Some(of),
                at,
                format_args!("the API shows the pod Ready with phase {phase}"),
            );
        }
    }
}

/// The kubelet's final DELETE of `uid` took effect.
fn kubelet_deleted(at: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
    let p = facts.pod(uid);
    let mut missing = Vec::new();
    if !p.worker.terminated_sync_ok {
        missing.push("SyncTerminatedPod has not succeeded");
    }
    if p.mounted {
        missing.push("volumes are still mounted");
    }
    if p.cgroup {
        missing.push("the pod cgroup still exists");
    }
    if !p.api_phase.is_terminal() {
        missing.push("the API phase is not terminal");
    }
    if p.deleted_at().is_none() {
        missing.push("the pod has no deletion timestamp");
    }
    if !missing.is_empty() {
        out.report(
            facts,
            Inv::DeleteOnlyAfterReclamation,
            Some(uid),
            at,
            format_args!(
                "the kubelet deleted the pod object, yet {}",
                missing.join(", ")
            ),
        );
    }
    if !p.inc.config_known {
        out.report(
            facts,
            Inv::RuntimePodsNoApiWrites,
            Some(uid),
            at,
            format_args!("the kubelet deleted the object of a pod it knows only as a runtime pod"),
        );
    }
}

/// Final container status fidelity, on the object's last status (`at`: the object was
/// removed, or the run ended).
fn check_final_status(at: SimTime, obj: PodUid, facts: &Facts, out: &mut Findings) {
    let Some(o) = facts.get(obj) else {
        return;
    };
    let Some(status) = o.api_status.as_ref() else {
        return;
    };
    if !status.phase.is_terminal() {
        return;
    }
    let written = o.api_status_at;
    let of = o.mirror_of.unwrap_or(obj);
    let Some(p) = facts.get(of) else {
        return;
    };
    // A kubelet restart between an exit and the write may lose what it saw.
    let restarted = |since: SimTime| facts.node.crashes_at.iter().any(|c| *c >= since);
    let mut bad = Vec::new();
    for c in &status.containers {
        let ApiContainerState::Terminated {
            exit_code, reason, ..
        } = c.state
        else {
            continue;
        };
        let unknown = reason == "ContainerStatusUnknown";
        if exit_code == 0
            && !unknown
            && c.container_id.is_none()
            && !p
                .instances
                .iter()
                .any(|i| facts.text(i.name) == &*c.name && matches!(i.exit, Some((0, _))))
        {
            // Success reported for a container none of whose instances exited 0 (the
            // default state TerminatePod gave unobserved containers before PR 88440).
            bad.push(format!(
                "container {} never exited 0, the API says it terminated with exit code 0",
                c.name
            ));
            continue;
        }
        if let Some(inst) = c
            .container_id
            .and_then(|id| p.instance(id))
            .filter(|_| !unknown)
        {
            if let Some((code, _)) = inst.exit.filter(|(code, _)| *code != exit_code) {
                bad.push(format!(
                    "container {} ({}) exited with {code}, the API says {exit_code}",
                    c.name, inst.id
                ));
            }
            continue;
        }
        if unknown {
            // TerminatePod's 137/ContainerStatusUnknown for a container that was not
            // terminated (waiting, e.g. in back-off, or never seen): fine when the real
            // exit of its newest instance is in the last termination state, or could not
            // have been seen: it exited just before the write, was removed, a kubelet
            // restart came since, or a failed StartContainer since left created containers
            // that push it out of the two newest the status is built from.
            let newest = p
                .instances
                .iter()
                .rev()
                .find(|i| facts.text(i.name) == &*c.name);
            let in_last_state = |code: i32| {
                matches!(
                    c.last_state,
                    Some(ApiContainerState::Terminated { exit_code, .. }) if exit_code == code
                )
            };
            if let Some(i) = newest {
                if let Some((code, when)) = i.exit {
                    if !in_last_state(code)
                        && !p.start_errors().iter().any(|e| *e >= when)
                        && when + OBSERVABLE_AFTER <= written
                        && i.removed_at.is_none_or(|r| r > written)
                        && !restarted(when)
                    {
                        let last = match &c.last_state {
                            Some(ApiContainerState::Terminated { exit_code, .. }) => {
                                format!("exit code {exit_code}")
                            }
                            Some(ApiContainerState::Running { .. }) => "running".into(),
                            Some(ApiContainerState::Waiting { reason }) => {
                                format!("waiting ({reason})")
                            }
                            None => "none".into(),
                        };
                        bad.push(format!(
                            "container {} ({}) exited with {code} at {}, the API says ContainerStatusUnknown (last state: {last})",
                            c.name,
                            i.id,
                            t(when)
                        ));
                    }
                }
            }
        }
    }
    if !bad.is_empty() {
        out.report(
            facts,
            Inv::FinalContainerStatusFidelity,
            Some(of),
            at,
            format_args!(
                "the final {} status written at {}: {}",
                status.phase,
                t(written),
                bad.join("; ")
            ),
        );
    }
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;
