//! The pod worker: nothing starts after termination was acknowledged (and between the
//! request and the acknowledgement only inside the SyncPod in flight), a sync acts on a
//! fresh enough status, a pod being synced has its objects registered, and a worker is not
//! forgotten while its pod runs.

use super::{crashed, record_removed, topic, Checker, PerPod};
use crate::model::{
    CriFailed, CriFailure, CriOp, PodUid, ProbeCached, ProbeType, RestartPolicy, SyncKind,
    Transition, WorkerStep,
};
use crate::oracle::facts::{Facts, Instance, PodFacts};
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, V122, V125};
use crate::sim::SimTime;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::NoStartAfterTermination,
        Invariant {
            name: "no-start-after-termination",
            id: "S1",
            kind: Kind::Safety,
            meaning: "no RunPodSandbox, CreateContainer or StartContainer begins for a UID after its termination was acknowledged (SyncTerminatingPod began; in the v1.21 design: dispatchWork treated the pod as terminated, called TerminatePod and skipped its worker)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go (PR 102344); race catalog 1",
            profiles: V122,
        },
    ),
    (
        Inv::NoRestartAfterTermination,
        Invariant {
            name: "no-restart-after-termination",
            id: "S10",
            kind: Kind::Safety,
            meaning: "a liveness or startup failure never leads to a StartContainer of the pod after its termination was acknowledged",
            bound: "",
            source: "pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions, prober/worker.go (PR 98571); race catalog 10",
            profiles: V122,
        },
    ),
    (
        Inv::CacheFreshness,
        Invariant {
            name: "cache-freshness",
            id: "C15",
            kind: Kind::Safety,
            meaning: "a SyncPod acts on a pod status newer than the end of the pod's previous SyncPod: it never creates a sandbox while one that was ready before that end still is, and never runs a restartPolicy=Never container again that already ran before that end and that the runtime still held when it started (one container GC removed is gone from every status)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go (GetNewerThan the last sync), pkg/kubelet/pleg/generic.go updateCache (PRs 7749, 138024); race catalog 29",
            profiles: ALL,
        },
    ),
    (
        Inv::ReferencedObjectsRegistered,
        Invariant {
            name: "referenced-objects-registered",
            id: "C14",
            kind: Kind::Safety,
            meaning: "while a pod is being synced (its worker started it and its termination is not acknowledged), the configmaps and secrets it references are registered: no volume SetUp of the pod fails with \"not registered\"",
            bound: "",
            source: "pkg/kubelet/kubelet.go SyncPod/SyncTerminatedPod RegisterPod/UnregisterPod, pkg/kubelet/util/manager/cache_based_manager.go (PRs 107821, 107831); race catalog 23",
            profiles: V125,
        },
    ),
    (
        Inv::WorkerKeptUntilTerminated,
        Invariant {
            name: "worker-kept-until-terminated",
            id: "C7",
            kind: Kind::Safety,
            meaning: "a pod worker is not forgotten (its record removed, or in the v1.21 design its goroutine told to exit by ForgetWorker) while a container of the pod runs or a sync of it is in flight",
            bound: "",
            source: "pkg/kubelet/pod_workers.go SyncKnownPods, removeTerminatedWorker (PR 102344; v1.21 ForgetNonExistingPodWorkers); race catalog 13",
            profiles: V122,
        },
    ),
    (
        Inv::StartsOnlyInInflightSync,
        Invariant {
            name: "starts-only-in-inflight-sync",
            id: "S1'",
            kind: Kind::Safety,
            meaning: "a RunPodSandbox, CreateContainer or StartContainer between a pod's TermRequested and TermAcked happens only inside the SyncPod the worker took up before termination was requested (open then, or waiting in GetNewerThan for a newer pod status and beginning right after; v1.31 runs the runtime part of SyncPod on a context without cancel) (the run metric startsWhileTerminationRequested counts them)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go UpdatePod (cancels the in-flight SyncPod; the next sync is SyncTerminatingPod), PR 102344; race catalog 1",
            profiles: V122,
        },
    ),
];

#[derive(Clone, Debug, Default)]
pub(crate) struct WorkerChecker {
    /// Per worker record: a liveness or startup probe result turned Failure (S10).
    liveness_failed: PerPod<bool>,
}

impl Checker for WorkerChecker {
    const TOPICS: u32 = topic::CONTAINER_RUNNING
        | topic::CRI_BEGIN
        | topic::CRI_END
        | topic::NOTE
        | topic::PROBE_RESULT
        | topic::WORKER
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::CriBegin { uid, call, .. } => self.cri_begin(at, *uid, *call, facts, out),
            Transition::ContainerRunning { uid, name, .. } => {
                stale_instance_check(at, *uid, name, facts, out)
            }
            Transition::CriEnd {
                uid,
                call: CriOp::CreateContainer,
                target,
                error: Some(CriFailure::Failed(CriFailed::NameReserved)),
            } => refused_create_check(at, *uid, *target, facts, out),
            Transition::Note { uid, what } => {
                let w = &facts.pod(*uid).worker;
                if what.is_failed_mount() && w.started && !w.term_acked {
                    out.report(
                        facts,
                        Inv::ReferencedObjectsRegistered,
                        Some(*uid),
                        at,
                        format_args!("a volume SetUp of a pod being synced failed: {what}"),
                    );
                }
            }
            Transition::Worker {
                uid,
                what: WorkerStep::V121Forgotten,
            } => {
                // v1.21: the goroutine ends after the sync it is in; its record stays.
                forgotten_check(at, *uid, facts, out);
            }
            Transition::ProbeResult {
                uid, kind, result, ..
            } => {
                if matches!(*kind, ProbeType::Liveness | ProbeType::Startup)
                    && *result == ProbeCached::Failure
                {
                    *self.liveness_failed.at(*uid) = true;
                }
            }
            _ if crashed(tr) => self.liveness_failed.reset_all(),
            _ => {
                if let Some(uid) = record_removed(tr) {
                    forgotten_check(at, uid, facts, out);
                    self.liveness_failed.reset(uid);
                }
            }
        }
    }
}

impl WorkerChecker {
    fn cri_begin(
        &mut self,
        at: SimTime,
        uid: PodUid,
        call: CriOp,
        facts: &Facts,
        out: &mut Findings,
    ) {
        let p = facts.pod(uid);
        let w = &p.worker;
        if call == CriOp::RunPodSandbox && w.open_sync == Some(SyncKind::SyncPod) {
            let end = w.last_sync_pod_end;
            let old = p
                .ready_sandboxes
                .iter()
                .find(|s| end.is_some_and(|e| s.1 <= e))
                .map(|s| s.0);
            if let Some(sb) = old {
                out.report(
                    facts,
                    Inv::CacheFreshness,
                    Some(uid),
                    at,
                    format_args!("RunPodSandbox began while sandbox {sb}, ready before the previous SyncPod ended, still is: the sync used a status older than that sync"),
                );
            }
        }
        if !matches!(
            call,
            CriOp::RunPodSandbox | CriOp::CreateContainer | CriOp::StartContainer
        ) {
            return;
        }
        let acked = w.term_acked;
        let in_window = w.term_requested && !acked;
        let inflight = w.inflight_sync_pod && w.open_sync == Some(SyncKind::SyncPod);
        if in_window {
            out.starts_while_term_requested += 1;
            if !inflight {
                out.report(
                    facts,
                    Inv::StartsOnlyInInflightSync,
                    Some(uid),
                    at,
                    format_args!("{call} began after termination was requested, outside a SyncPod that was in flight at the request"),
                );
            }
        }
        let liveness_failed = self.liveness_failed.get(uid).copied().unwrap_or(false);
        let restart = acked && liveness_failed && call == CriOp::StartContainer;
        if acked {
            out.report(
                facts,
                Inv::NoStartAfterTermination,
                Some(uid),
                at,
                format_args!("{call} began after the pod's termination was acknowledged"),
            );
        }
        if restart {
            out.report(
                facts,
                Inv::NoRestartAfterTermination,
                Some(uid),
                at,
                format_args!("a container was started again after a liveness/startup failure, with the pod's termination acknowledged"),
            );
        }
    }
}

/// Whether the open SyncPod of a restartPolicy=Never pod (`never`) missed an instance of
/// `instances` that `kept` and that ran before the previous SyncPod ended: one the status
/// it waited for (newer than that end) had to show.
fn missed_by_open_sync(
    p: &PodFacts,
    never: bool,
    instances: &[Instance],
    kept: impl Fn(&Instance) -> bool,
) -> bool {
    match (p.worker.open_sync, p.worker.last_sync_pod_end) {
        (Some(SyncKind::SyncPod), Some(end)) if never => {
            instances.iter().any(|i| i.running_at <= end && kept(i))
        }
        _ => false,
    }
}

/// A restartPolicy=Never container runs again, started by a SyncPod that did not see the
/// instance that ran before the previous SyncPod ended.
fn stale_instance_check(at: SimTime, uid: PodUid, name: &str, facts: &Facts, out: &mut Findings) {
    let p = facts.pod(uid);
    // A sidecar restarts whatever the pod's policy.
    let never = p.spec.as_ref().is_some_and(|s| {
        s.restart_policy == RestartPolicy::Never
            && !s
                .init_containers
                .iter()
                .any(|c| c.name == name && c.is_sidecar())
    });
    // The instance that just started is the last one. An instance the runtime already
    // removed (container GC keeps no exited instance of a running pod once `maxContainers`
    // is reached) is missing from any fresh status too: v1.31 `ShouldContainerBeRestarted`
    // (`pkg/kubelet/container/helpers.go`) then starts the container again, stale cache or
    // not (upstream issue 51142).
    let before = &p.instances[..p.instances.len() - 1];
    if missed_by_open_sync(p, never, before, |i| {
        facts.text(i.name) == name && i.removed_at.is_none_or(|r| r > at)
    }) {
        out.report(
            facts,
            Inv::CacheFreshness,
            Some(uid),
            at,
            format_args!("restartPolicy=Never container {name} runs a second time: the SyncPod that started it did not see the instance that ran before the previous SyncPod ended"),
        );
    }
}

/// A `CreateContainer` of a restartPolicy=Never pod refused because a container not yet
/// removed holds its name (pod, container, attempt): the kubelet picked the attempt from a
/// status without that container. If an instance that ran before the previous SyncPod
/// ended is still there, the open SyncPod's status was older than that sync (the runtime's
/// refusal is how a stale cache shows with containerd or CRI-O, where it would otherwise
/// run the container twice). A holder created by a dead kubelet's create never ran, so it
/// is not counted.
fn refused_create_check(at: SimTime, uid: PodUid, attempt: u32, facts: &Facts, out: &mut Findings) {
    let p = facts.pod(uid);
    let never = p
        .spec
        .as_ref()
        .is_some_and(|s| s.restart_policy == RestartPolicy::Never);
    if missed_by_open_sync(p, never, &p.instances, |i| i.removed_at.is_none()) {
        out.report(
            facts,
            Inv::CacheFreshness,
            Some(uid),
            at,
            format_args!("CreateContainer (attempt {attempt}) of a restartPolicy=Never pod was refused: a container that ran before the previous SyncPod ended holds its name, and the SyncPod's status did not show it"),
        );
    }
}

/// A worker is forgotten: nothing of the pod may still run or be synced.
fn forgotten_check(at: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
    let running = facts.pod(uid).running.first();
    let what = match (running, facts.before.worker.open_sync) {
        (Some(c), _) => {
            format!("the pod worker was forgotten while container {c} of the pod was running")
        }
        (None, Some(s)) => format!("the pod worker was forgotten while {s} was in flight"),
        (None, None) => return,
    };
    out.report(
        facts,
        Inv::WorkerKeptUntilTerminated,
        Some(uid),
        at,
        format_args!("{}", what),
    );
}

#[cfg(test)]
#[path = "worker_tests.rs"]
mod tests;
