//! Unit tests of the oracle: for each safety invariant a hand-written transition sequence
//! that violates it (the finding is reported) and one that does not; the liveness
//! properties on short hand-written runs.

use super::*;
use crate::model::NoteKind;
use crate::model::ShutdownStep;
use crate::model::{ApiContainerStatus, ContainerSpec, Word};
use crate::model::{
    CriOp, EvictionSignal, EvictionStep, PowerOffCause, ProbeCached, ProbeType, ProbeVerdict,
    ProbeWorkerStep, ProcessEvent, RemovedBy, SyncKind, UpdateType,
};

const P: PodUid = PodUid(1);
const Q: PodUid = PodUid(2);

fn spec(name: &str, policy: RestartPolicy) -> Arc<PodSpec> {
    let mut s = PodSpec::new(
        name,
        "default",
        policy,
        vec![ContainerSpec::named("app", "img:1")],
    );
    s.termination_grace_period_seconds = Some(30);
    Arc::new(s)
}

/// The word whose trace text is `text` (a typo fails the test).
fn w<T: Word>(text: &str) -> T {
    T::from_text(text).unwrap_or_else(|| panic!("no word renders as {text:?}"))
}

/// The node-shutdown steps the tests feed, by their trace text.
fn gns(text: &str) -> ShutdownStep {
    match text {
        "PrepareForShutdown(true)" => ShutdownStep::PrepareForShutdown {
            shutting_down: true,
        },
        "PrepareForShutdown(false)" => ShutdownStep::PrepareForShutdown {
            shutting_down: false,
        },
        "shutdown processed: inhibitor lock 1 released, node will shut down" => {
            ShutdownStep::Processed { lock: 1 }
        }
        _ => panic!("no shutdown step {text:?} in these tests"),
    }
}

/// Feeds transitions to an oracle at increasing times.
struct Feed {
    o: Oracle,
    now: SimTime,
}

impl Feed {
    fn new() -> Self {
        Feed {
            o: Oracle::new(),
            now: SimTime::ZERO,
        }
    }
    /// Move the clock forward by `ms` milliseconds.
    fn wait(&mut self, ms: u64) -> &mut Self {
        self.now = self.now + Dur::millis(ms);
        self
    }
    fn tr(&mut self, t: Transition) -> &mut Self {
        self.o.transition(self.now, &t);
        self
    }
    fn names(&self) -> Vec<&'static str> {
        self.o.findings().iter().map(|f| f.invariant).collect()
    }
    fn finish(&mut self) -> Vec<&'static str> {
        let end = self.now;
        self.o.finish(end);
        self.names()
    }
    fn has(&self, inv: Inv) -> bool {
        self.names().contains(&inv.name())
    }

    fn created(&mut self, uid: PodUid, policy: RestartPolicy) -> &mut Self {
        let name = format!("pod{}", uid.0);
        self.tr(Transition::ApiCreated {
            uid,
            name: name.clone(),
            spec: spec(&name, policy),
            static_pod: false,
            mirror_of: None,
        })
    }
    fn cfg(&mut self, uid: PodUid, op: &'static str) -> &mut Self {
        self.tr(Transition::ConfigOp { uid, op: w(op) })
    }
    fn worker(&mut self, uid: PodUid, what: &'static str) -> &mut Self {
        self.tr(Transition::Worker { uid, what: w(what) })
    }
    fn begin(&mut self, uid: PodUid, kind: &'static str, grace: Option<i64>) -> &mut Self {
        self.tr(Transition::SyncBegin {
            uid,
            kind: w(kind),
            grace,
        })
    }
    fn end(&mut self, uid: PodUid, kind: &'static str, ok: bool) -> &mut Self {
        self.tr(Transition::SyncEnd {
            uid,
            kind: w(kind),
            error: (!ok).then(|| "boom".to_string()),
        })
    }
    fn cri(&mut self, uid: PodUid, call: &'static str) -> &mut Self {
        self.tr(Transition::CriBegin {
            uid,
            call: w(call),
            target: 0,
            timeout_s: None,
        })
    }
    fn stop(&mut self, uid: PodUid, timeout: i64) -> &mut Self {
        self.tr(Transition::CriBegin {
            uid,
            call: CriOp::StopContainer,
            target: 1,
            timeout_s: Some(timeout),
        })
    }
    fn running(&mut self, uid: PodUid, id: u32) -> &mut Self {
        self.tr(Transition::ContainerRunning {
            uid,
            id: ContainerId(id),
            name: "app".into(),
        })
    }
    fn exited(&mut self, uid: PodUid, id: u32, code: i32) -> &mut Self {
        self.tr(Transition::ContainerExited {
            uid,
            id: ContainerId(id),
            code,
            reason: "Completed",
        })
    }
    fn host(&mut self, uid: PodUid, what: &'static str) -> &mut Self {
        self.tr(Transition::Host { uid, what: w(what) })
    }
    fn step(&mut self, uid: PodUid, step: &'static str) -> &mut Self {
        self.tr(Transition::SyncStep { uid, step: w(step) })
    }
    fn local(&mut self, uid: PodUid, phase: PodPhase) -> &mut Self {
        self.tr(Transition::LocalStatus { uid, phase })
    }
    fn patched(&mut self, uid: PodUid, phase: PodPhase, ready: bool) -> &mut Self {
        self.patched_with(uid, phase, ready, Vec::new())
    }
    fn patched_with(
        &mut self,
        uid: PodUid,
        phase: PodPhase,
        ready: bool,
        containers: Vec<ApiContainerStatus>,
    ) -> &mut Self {
        let status = ApiPodStatus {
            phase,
            ready,
            containers,
            ..Default::default()
        };
        self.tr(Transition::ApiStatusPatched {
            uid,
            of: uid,
            status: Arc::new(status),
        })
    }
    fn probe(&mut self, uid: PodUid, kind: &'static str) -> &mut Self {
        self.tr(Transition::Probe {
            uid,
            container: "app".into(),
            kind: w(kind),
            result: ProbeVerdict::Success,
        })
    }
    fn kill(&mut self, uid: PodUid, ch: u64, what: &'static str, evict: bool) -> &mut Self {
        self.tr(Transition::KillPodNow {
            uid,
            ch,
            what: w(what),
            evict,
        })
    }

    /// A pod created, admitted and running with container c1.
    fn running_pod(&mut self, uid: PodUid, policy: RestartPolicy) -> &mut Self {
        self.created(uid, policy)
            .wait(10)
            .cfg(uid, "ADD")
            .worker(uid, "record")
            .worker(uid, "started")
            .begin(uid, "SyncPod", None)
            .local(uid, PodPhase::Pending)
            .cri(uid, "MountVolumes")
            .wait(20)
            .host(uid, "volumes mounted")
            .cri(uid, "RunPodSandbox")
            .wait(100)
            .cri(uid, "CreateContainer")
            .cri(uid, "StartContainer")
            .wait(20)
            .running(uid, 1)
            .end(uid, "SyncPod", true)
            .wait(1000)
            .begin(uid, "SyncPod", None)
            .local(uid, PodPhase::Running)
            .end(uid, "SyncPod", true)
            .wait(20)
            .patched(uid, PodPhase::Running, true)
    }

    /// The pod is deleted with grace 30 and terminated the upstream way, up to the end of
    /// `SyncTerminatingPod`.
    fn terminate(&mut self, uid: PodUid) -> &mut Self {
        self.tr(Transition::ApiDeleteRequested { uid, grace: 30 })
            .wait(10)
            .cfg(uid, "DELETE")
            .worker(uid, "termination requested")
            .begin(uid, "SyncTerminatingPod", Some(30))
            .worker(uid, "termination acknowledged")
            .step(uid, "status set")
            .step(uid, "probes stopped: liveness, startup")
            .stop(uid, 30)
            .wait(3000)
            .exited(uid, 1, 0)
            .step(uid, "probes removed")
            .local(uid, PodPhase::Succeeded)
            .end(uid, "SyncTerminatingPod", true)
            .worker(uid, "terminated")
    }

    /// From `terminate` on: the terminal status, SyncTerminatedPod and the kubelet's delete.
    fn clean_up(&mut self, uid: PodUid) -> &mut Self {
        self.wait(20)
            .patched(uid, PodPhase::Succeeded, false)
            .wait(1000)
            .begin(uid, "SyncTerminatedPod", None)
            .cri(uid, "UnmountVolumes")
            .wait(20)
            .host(uid, "volumes unmounted")
            .cri(uid, "RemovePodCgroup")
            .wait(5)
            .host(uid, "pod cgroup removed")
            .end(uid, "SyncTerminatedPod", true)
            .worker(uid, "finished")
            .wait(40)
            .tr(Transition::ApiRemoved {
                uid,
                by: RemovedBy::Kubelet,
            })
    }
}

#[test]
fn a_clean_lifecycle_has_no_finding() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .probe(P, "liveness")
        .probe(P, "readiness")
        .terminate(P)
        .clean_up(P)
        .wait(600_000);
    assert_eq!(f.finish(), Vec::<&str>::new());
}

#[test]
fn a_finding_carries_pod_time_and_last_transitions() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .cri(P, "StartContainer");
    let x = &f.o.findings()[0];
    assert_eq!(x.invariant, "no-start-after-termination");
    assert_eq!(x.pod, "pod1");
    assert_eq!(x.at, f.now);
    assert!(x.message.contains("last transitions of pod1 (uid-0001)"));
    assert!(x.message.contains("cri uid-0001 StartContainer#0 begin"));
    assert!(x.message.lines().count() <= RING + 2);
}

#[test]
fn s1_no_start_after_termination() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).terminate(P);
    assert!(!f.has(Inv::NoStartAfterTermination));
    f.cri(P, "CreateContainer");
    assert!(f.has(Inv::NoStartAfterTermination));
    // A start before the acknowledgement (inside an in-flight SyncPod) is allowed.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None)
        .worker(P, "termination requested")
        .cri(P, "StartContainer")
        .end(P, "SyncPod", true);
    assert!(!g.has(Inv::NoStartAfterTermination));
    // After a kubelet restart the new incarnation may start the pod again.
    g.begin(P, "SyncTerminatingPod", Some(30))
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            epoch: 0,
        })
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Started,
            epoch: 1,
        })
        .cri(P, "RunPodSandbox");
    assert!(!g.has(Inv::NoStartAfterTermination));
}

#[test]
fn s2_single_sync_per_uid() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None)
        .end(P, "SyncPod", true)
        .begin(Q, "SyncPod", None);
    assert!(!f.has(Inv::SingleSyncPerUid));
    f.begin(P, "SyncPod", None)
        .begin(P, "SyncTerminatingPod", Some(3));
    assert!(f.has(Inv::SingleSyncPerUid));
}

#[test]
fn s3_sync_order() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).terminate(P);
    assert!(!f.has(Inv::SyncOrder));
    f.begin(P, "SyncPod", None);
    assert!(f.has(Inv::SyncOrder));
    // SyncTerminatedPod after a failed SyncTerminatingPod.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(30))
        .end(P, "SyncTerminatingPod", false)
        .begin(P, "SyncTerminatedPod", None);
    assert!(g.has(Inv::SyncOrder));
    // First sight of a terminal pod: SyncTerminatedPod directly is fine.
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Never)
        .cfg(P, "ADD")
        .worker(P, "first sight of a terminal pod: recorded as terminated")
        .worker(P, "record")
        .begin(P, "SyncTerminatedPod", None)
        .end(P, "SyncTerminatedPod", true);
    assert!(!h.has(Inv::SyncOrder));
}

#[test]
fn s4_no_terminal_phase_while_running() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .patched(P, PodPhase::Failed, false);
    assert!(f.has(Inv::NoTerminalPhaseWhileRunning));
    // Containers stopped but the worker has not reached Terminated yet.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .exited(P, 1, 0)
        .patched(P, PodPhase::Succeeded, false);
    assert!(g.has(Inv::NoTerminalPhaseWhileRunning));
    // An admission rejection has no worker.
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .tr(Transition::PodRejected {
            uid: P,
            reason: "OutOfpods".into(),
        })
        .patched(P, PodPhase::Failed, false);
    assert!(!h.has(Inv::NoTerminalPhaseWhileRunning));
}

#[test]
fn s5_terminal_phase_absorbing_and_failed_never_succeeded() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P);
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Succeeded, false)
        .patched(P, PodPhase::Succeeded, false);
    assert!(g.names().is_empty());
    g.patched(P, PodPhase::Running, false);
    assert!(g.has(Inv::TerminalPhaseAbsorbing));
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Failed, false)
        .patched(P, PodPhase::Succeeded, false);
    assert!(h.has(Inv::FailedNeverBecomesSucceeded));
    assert!(!h.has(Inv::TerminalPhaseAbsorbing));
}

#[test]
fn s5p_local_terminal_phase_absorbing() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .local(P, PodPhase::Failed)
        .local(P, PodPhase::Succeeded);
    assert!(!f.has(Inv::LocalTerminalPhaseAbsorbing));
    f.local(P, PodPhase::Running);
    assert!(f.has(Inv::LocalTerminalPhaseAbsorbing));
}

#[test]
fn s6_delete_only_after_reclamation() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Succeeded, false)
        .tr(Transition::ApiRemoved {
            uid: P,
            by: RemovedBy::Kubelet,
        });
    assert!(f.has(Inv::DeleteOnlyAfterReclamation));
    let m = &f.o.findings()[0].message;
    assert!(m.contains("SyncTerminatedPod has not succeeded") && m.contains("volumes"));
    // Removal by a force delete is not the kubelet's.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiForceDeleted { uid: P })
        .tr(Transition::ApiRemoved {
            uid: P,
            by: RemovedBy::ForceDelete,
        });
    assert!(!g.has(Inv::DeleteOnlyAfterReclamation));
}

#[test]
fn s7_grace_never_increases() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(30))
        .end(P, "SyncTerminatingPod", false)
        .begin(P, "SyncTerminatingPod", Some(10))
        .end(P, "SyncTerminatingPod", false)
        .stop(P, 2);
    assert!(!f.has(Inv::GraceNeverIncreases));
    f.begin(P, "SyncTerminatingPod", Some(20));
    assert!(f.has(Inv::GraceNeverIncreases));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always).stop(P, 1);
    assert!(g.has(Inv::GraceNeverIncreases));
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(0));
    assert!(h.has(Inv::GraceNeverIncreases));
    // The v1.31 quirk after a delete with grace 0: 1 s, then a shutdown's 19 s.
    let mut q = Feed::new();
    q.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiForceDeleted { uid: P })
        .begin(P, "SyncTerminatingPod", Some(1))
        .end(P, "SyncTerminatingPod", false)
        .begin(P, "SyncTerminatingPod", Some(19));
    assert!(!q.has(Inv::GraceNeverIncreases));
}

#[test]
fn s8_no_probe_after_termination() {
    // One liveness probe past the select is allowed; readiness runs until RemovePod.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(30))
        .step(P, "status set")
        .step(P, "probes stopped: liveness, startup")
        .probe(P, "liveness")
        .probe(P, "readiness")
        .probe(P, "readiness");
    assert!(!f.has(Inv::NoProbeAfterTermination));
    f.probe(P, "liveness");
    assert!(f.has(Inv::NoProbeAfterTermination));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .probe(P, "readiness");
    assert!(!g.has(Inv::NoProbeAfterTermination));
    g.probe(P, "readiness");
    assert!(g.has(Inv::NoProbeAfterTermination));
}

#[test]
fn s8_liveness_probes_through_a_kill_are_seen_without_the_stop_step() {
    // Before PR 110191 no StopLivenessAndStartup: liveness keeps probing after the status
    // was set in SyncTerminatingPod.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(30))
        .step(P, "status set")
        .probe(P, "liveness");
    assert!(!f.has(Inv::NoProbeAfterTermination));
    f.wait(5000).probe(P, "liveness");
    assert!(f.has(Inv::NoProbeAfterTermination));
}

#[test]
fn c10_readiness_during_termination() {
    let stopped = |uid| Transition::ProbeWorker {
        uid,
        container: "app".into(),
        kind: ProbeType::Readiness,
        what: ProbeWorkerStep::Stopped,
    };
    // v1.22 regression: every probe removed when the deletion is handled.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 30 })
        .wait(10)
        .cfg(P, "DELETE")
        .worker(P, "termination requested")
        .tr(stopped(P));
    assert!(f.has(Inv::ReadinessDuringTermination));
    // After the kill (RemovePod), or once the container exited: fine.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .tr(stopped(P));
    assert!(!g.has(Inv::ReadinessDuringTermination));
    // A terminal local phase (eviction) stops it early: issue 124648, not checked.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .local(P, PodPhase::Failed)
        .tr(stopped(P));
    assert!(!h.has(Inv::ReadinessDuringTermination));
    // Not terminating: not this invariant's business.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always).tr(stopped(P));
    assert!(!k.has(Inv::ReadinessDuringTermination));
}

#[test]
fn s10_no_restart_after_termination() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ProbeResult {
            uid: P,
            id: ContainerId(1),
            kind: ProbeType::Liveness,
            result: ProbeCached::Failure,
        })
        .cri(P, "StartContainer");
    assert!(!f.has(Inv::NoRestartAfterTermination));
    f.terminate(P).cri(P, "StartContainer");
    assert!(f.has(Inv::NoRestartAfterTermination));
}

#[test]
fn s11_finished_is_final() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P);
    f.worker(P, "forgotten")
        .worker(P, "record")
        .worker(P, "started")
        .begin(P, "SyncPod", None);
    assert!(!f.has(Inv::FinishedIsFinal));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P)
        .begin(P, "SyncTerminatedPod", None);
    assert!(g.has(Inv::FinishedIsFinal));
}

#[test]
fn s12_static_fullname_exclusivity() {
    let stat = |uid| Transition::ApiCreated {
        uid,
        name: "web (static manifest)".into(),
        spec: spec("web", RestartPolicy::Always),
        static_pod: true,
        mirror_of: None,
    };
    let mut f = Feed::new();
    f.tr(stat(P))
        .tr(stat(Q))
        .worker(P, "started")
        .worker(P, "finished")
        .worker(Q, "started");
    assert!(!f.has(Inv::StaticFullnameExclusivity));
    let mut g = Feed::new();
    g.tr(stat(P))
        .tr(stat(Q))
        .worker(P, "started")
        .worker(Q, "started");
    assert!(g.has(Inv::StaticFullnameExclusivity));
    // Ground truth across a restart (race catalog 27): the old UID is a runtime-only pod
    // of the new kubelet, whose gate knows nothing of it.
    let mut h = Feed::new();
    h.tr(stat(P)).worker(P, "started").running(P, 1);
    h.tr(Transition::KubeletProcess {
        what: ProcessEvent::Crashed,
        epoch: 0,
    });
    h.tr(stat(Q)).worker(Q, "started");
    assert!(!h.has(Inv::StaticFullnameExclusivity));
    h.running(Q, 2);
    assert!(h.has(Inv::StaticFullnameExclusivity));
    // The old container exited first: no finding.
    let mut k = Feed::new();
    k.tr(stat(P))
        .running(P, 1)
        .exited(P, 1, 0)
        .tr(stat(Q))
        .running(Q, 2);
    assert!(!k.has(Inv::StaticFullnameExclusivity));
}

#[test]
fn c8_grace_within_overrides() {
    let evict = |uid| Transition::Evict {
        uid,
        signal: EvictionSignal::MemoryAvailable,
        grace: 0,
    };
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(evict(P))
        .begin(P, "SyncTerminatingPod", Some(30));
    assert!(f.has(Inv::GraceWithinOverrides));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(evict(P))
        .begin(P, "SyncTerminatingPod", Some(1));
    assert!(!g.has(Inv::GraceWithinOverrides));
    // Termination already requested and no sync open: the worker may have taken up its
    // terminating work (grace 30) and be waiting for a newer status when the override comes;
    // that sync keeps its grace, a later one must honour the override.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .tr(evict(P))
        .begin(P, "SyncTerminatingPod", Some(30));
    assert!(!h.has(Inv::GraceWithinOverrides));
    h.end(P, "SyncTerminatingPod", false)
        .begin(P, "SyncTerminatingPod", Some(30));
    assert!(h.has(Inv::GraceWithinOverrides));
}

#[test]
fn c7_desired_static_pod_runs() {
    let stat = |uid| Transition::ApiCreated {
        uid,
        name: "web (static manifest)".into(),
        spec: spec("web", RestartPolicy::Always),
        static_pod: true,
        mirror_of: None,
    };
    // Never started: reported once the bound passed.
    let mut f = Feed::new();
    f.tr(stat(P)).wait(61_000);
    assert!(f.finish().contains(&Inv::DesiredStaticPodRuns.name()));
    // Started: fine.
    let mut g = Feed::new();
    g.tr(stat(P)).wait(1_000).running(P, 1).wait(61_000);
    assert!(!g.finish().contains(&Inv::DesiredStaticPodRuns.name()));
    // Re-added (same UID) after it ran: a start before the re-add does not count; a
    // removed manifest is not checked.
    let mut h = Feed::new();
    h.tr(stat(P))
        .running(P, 1)
        .wait(1_000)
        .exited(P, 1, 0)
        .tr(stat(P))
        .wait(61_000);
    assert!(h.finish().contains(&Inv::DesiredStaticPodRuns.name()));
    let mut k = Feed::new();
    k.tr(stat(P)).wait(1_000);
    k.o.static_manifest_removed(P);
    k.wait(61_000);
    assert!(!k.finish().contains(&Inv::DesiredStaticPodRuns.name()));
    // Another UID with the full name still runs: not due.
    let mut m = Feed::new();
    m.tr(stat(P)).running(P, 1).tr(stat(Q)).wait(61_000);
    assert!(!m.finish().contains(&Inv::DesiredStaticPodRuns.name()));
}

#[test]
fn s13_kill_completion_truthful() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .kill(P, 7, "requested", true)
        .kill(P, 7, "closed", false);
    assert!(f.has(Inv::KillCompletionTruthful));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .kill(P, 7, "requested", true)
        .terminate(P)
        .kill(P, 7, "closed", false)
        .kill(P, 7, "returned", false);
    assert!(!g.has(Inv::KillCompletionTruthful));
}

#[test]
fn s14_runtime_pods_no_api_writes() {
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .tr(Transition::UpdatePod {
            uid: P,
            ty: UpdateType::Kill,
            runtime_only: true,
        })
        .patched(P, PodPhase::Failed, false);
    assert!(f.has(Inv::RuntimePodsNoApiWrites));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .patched(P, PodPhase::Running, false);
    assert!(!g.has(Inv::RuntimePodsNoApiWrites));
}

#[test]
fn s15_eviction_rules() {
    let evict = |uid| Transition::Evict {
        uid,
        signal: EvictionSignal::MemoryAvailable,
        grace: 0,
    };
    let cleaned = |uid| Transition::Eviction {
        uid,
        what: EvictionStep::PodCleanedUp,
    };
    // One at a time, each after the previous was cleaned up.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .running_pod(Q, RestartPolicy::Always)
        .tr(evict(P))
        .tr(cleaned(P))
        .tr(evict(Q));
    assert!(!f.has(Inv::EvictionRules));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .running_pod(Q, RestartPolicy::Always)
        .tr(evict(P))
        .tr(evict(Q));
    assert!(g.has(Inv::EvictionRules));
    // A critical pod.
    let mut crit = (*spec("sys", RestartPolicy::Always)).clone();
    crit.priority = 2_000_000_000;
    let mut h = Feed::new();
    h.tr(Transition::ApiCreated {
        uid: P,
        name: "sys".into(),
        spec: Arc::new(crit),
        static_pod: false,
        mirror_of: None,
    })
    .tr(evict(P));
    assert!(h.has(Inv::EvictionRules));
    // The evicted pod's final status must be Failed/Evicted.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .tr(evict(P))
        .begin(P, "SyncTerminatingPod", Some(1))
        .exited(P, 1, 143)
        .end(P, "SyncTerminatingPod", true)
        .worker(P, "terminated")
        .patched(P, PodPhase::Succeeded, false);
    k.finish();
    assert!(k.has(Inv::EvictionRules));
    // v1.31 recomputes Succeeded when every container exited 0 after the kill.
    let mut z = Feed::new();
    z.running_pod(P, RestartPolicy::Always)
        .tr(evict(P))
        .terminate(P)
        .patched(P, PodPhase::Succeeded, false);
    z.finish();
    assert!(!z.has(Inv::EvictionRules));
    let mut ok = Feed::new();
    ok.running_pod(P, RestartPolicy::Always)
        .tr(evict(P))
        .terminate(P);
    let status = ApiPodStatus {
        phase: PodPhase::Failed,
        reason: Some("Evicted".into()),
        ..Default::default()
    };
    ok.tr(Transition::ApiStatusPatched {
        uid: P,
        of: P,
        status: Arc::new(status),
    });
    ok.finish();
    assert!(!ok.has(Inv::EvictionRules));
}

#[test]
fn s16_shutdown_group_order() {
    let group = |priority, period_s| Transition::ShutdownGroup {
        priority,
        period_s,
        pods: 1,
    };
    let shutdown = || Transition::Shutdown {
        what: gns("PrepareForShutdown(true)"),
    };
    // The next group after every kill returned, or after the period.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .running_pod(Q, RestartPolicy::Always)
        .tr(shutdown())
        .tr(group(0, 10))
        .kill(P, 1, "requested", false)
        .wait(2000)
        .kill(P, 1, "returned", false)
        .tr(group(100, 10))
        .kill(Q, 2, "requested", false)
        .wait(10_000)
        .tr(group(200, 5));
    assert!(!f.has(Inv::ShutdownGroupOrder));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(shutdown())
        .tr(group(0, 10))
        .kill(P, 1, "requested", false)
        .wait(2000)
        .tr(group(100, 10));
    assert!(g.has(Inv::ShutdownGroupOrder));
    // A pod added after the shutdown started must not run.
    let mut h = Feed::new();
    h.tr(shutdown()).running_pod(P, RestartPolicy::Always);
    assert!(h.has(Inv::ShutdownGroupOrder));
}

#[test]
fn c9_shutdown_kills_done_at_group_deadline() {
    let group = |priority, period_s| Transition::ShutdownGroup {
        priority,
        period_s,
        pods: 1,
    };
    let shutdown = |what: &str| Transition::Shutdown { what: gns(what) };
    let released =
        || shutdown("shutdown processed: inhibitor lock 1 released, node will shut down");
    // Each kill completed (channel closed) before the next group and the release.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .running_pod(Q, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(group(0, 10))
        .kill(P, 1, "requested", false)
        .wait(2000)
        .worker(P, "terminated")
        .kill(P, 1, "closed", false)
        .kill(P, 1, "returned", false)
        .tr(group(100, 10))
        .kill(Q, 2, "requested", false)
        .wait(10_000)
        .worker(Q, "terminated")
        .kill(Q, 2, "closed", false)
        .tr(released());
    assert!(!f.has(Inv::ShutdownKillsDoneAtGroupDeadline));
    // The deadline passed with P's kill in flight: the next group starts (issue 108040).
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(group(0, 10))
        .kill(P, 1, "requested", false)
        .wait(10_000)
        .tr(group(100, 10));
    assert!(g.has(Inv::ShutdownKillsDoneAtGroupDeadline));
    assert!(!g.has(Inv::ShutdownGroupOrder));
    // The lock is released with the last group's kill in flight (issues 109531, 110755).
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(group(0, 10))
        .kill(P, 1, "requested", false)
        .wait(10_000)
        .tr(released());
    assert!(h.has(Inv::ShutdownKillsDoneAtGroupDeadline));
}

#[test]
fn c8_shutdown_pods_failed() {
    let run = |phase: PodPhase| {
        let mut f = Feed::new();
        f.running_pod(P, RestartPolicy::Always)
            .tr(Transition::Shutdown {
                what: gns("PrepareForShutdown(true)"),
            })
            .tr(Transition::ShutdownGroup {
                priority: 0,
                period_s: 10,
                pods: 1,
            })
            .kill(P, 1, "requested", false)
            .begin(P, "SyncTerminatingPod", Some(10))
            .local(P, phase)
            .step(P, "status set");
        f.has(Inv::ShutdownPodsFailed)
    };
    assert!(!run(PodPhase::Failed));
    assert!(!run(PodPhase::Succeeded));
    // v1.22.0: only reason and message set, the phase recomputed (Running).
    assert!(run(PodPhase::Running));
    // A termination that began before the shutdown's kill is not checked.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(30))
        .tr(Transition::ShutdownGroup {
            priority: 0,
            period_s: 10,
            pods: 1,
        })
        .kill(P, 1, "requested", false)
        .step(P, "status set");
    assert!(!g.has(Inv::ShutdownPodsFailed));
}

#[test]
fn s17_no_sync_of_known_terminated() {
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Never)
        .cfg(P, "ADD")
        .worker(P, "first sight of a terminal pod: recorded as terminated")
        .worker(P, "record");
    assert!(!f.has(Inv::NoSyncOfKnownTerminated));
    f.begin(P, "SyncPod", None);
    assert!(f.has(Inv::NoSyncOfKnownTerminated));
}

#[test]
fn s18_status_before_stop() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncTerminatingPod", Some(30))
        .stop(P, 30);
    assert!(f.has(Inv::StatusBeforeStop));
    // A liveness kill inside SyncPod sets no pod status first.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None)
        .stop(P, 30);
    assert!(!g.has(Inv::StatusBeforeStop));
}

#[test]
fn no_teardown_under_running_container() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .cri(P, "UnmountVolumes");
    assert!(f.has(Inv::NoTeardownUnderRunningContainer));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .host(P, "pod dir removed");
    assert!(g.has(Inv::NoTeardownUnderRunningContainer));
}

#[test]
fn no_ready_with_terminal_phase() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Succeeded, true);
    assert!(f.has(Inv::NoReadyWithTerminalPhase));
}

#[test]
fn final_container_status_fidelity() {
    let terminated = |id: Option<u32>, exit_code, reason| ApiContainerStatus {
        name: "app".into(),
        state: ApiContainerState::Terminated {
            exit_code,
            reason,
            started_at: None,
            finished_at: None,
        },
        last_state: None,
        restart_count: 0,
        ready: false,
        started: false,
        container_id: id.map(ContainerId),
    };
    // The real exit code 0 reported as 137.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched_with(
            P,
            PodPhase::Failed,
            false,
            vec![terminated(Some(1), 137, "Error")],
        );
    f.finish();
    assert!(f.has(Inv::FinalContainerStatusFidelity));
    // ContainerStatusUnknown long after the kubelet could have seen the exit.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .wait(10_000)
        .patched_with(
            P,
            PodPhase::Failed,
            false,
            vec![terminated(None, 137, "ContainerStatusUnknown")],
        );
    g.finish();
    assert!(g.has(Inv::FinalContainerStatusFidelity));
    // The truth.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched_with(
            P,
            PodPhase::Succeeded,
            false,
            vec![terminated(Some(1), 0, "Completed")],
        );
    h.finish();
    assert!(!h.has(Inv::FinalContainerStatusFidelity));
    // Exit code 0 without a container ID for a container that never exited 0 (the
    // default TerminatePod state before PR 88440): reported.
    let mut k = Feed::new();
    k.created(P, RestartPolicy::Never)
        .wait(10)
        .cfg(P, "ADD")
        .wait(1000)
        .patched_with(P, PodPhase::Failed, false, vec![terminated(None, 0, "")]);
    k.finish();
    assert!(k.has(Inv::FinalContainerStatusFidelity));
    // ... but not when an instance of it did exit 0.
    let mut m = Feed::new();
    m.running_pod(P, RestartPolicy::Never)
        .exited(P, 1, 0)
        .terminate(P)
        .patched_with(P, PodPhase::Succeeded, false, vec![terminated(None, 0, "")]);
    m.finish();
    assert!(!m.has(Inv::FinalContainerStatusFidelity));
}

#[test]
fn l1_l3_l4_deleted_pod_stops_and_leaves() {
    // Deleted, the kill never happens: after grace + slack, all three fire.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 30 })
        .cfg(P, "DELETE")
        .worker(P, "termination requested")
        .wait(89_000);
    let mut early = f.o.clone();
    early.finish(f.now);
    assert!(early.findings().is_empty(), "not enough time: skipped");
    f.wait(2_000);
    let got = f.finish();
    assert!(got.contains(&"deleted-pod-stops"), "{got:?}");
    assert!(got.contains(&"deleted-pod-removed-from-api"));
    assert!(got.contains(&"termination-finishes"));
    // Each failed sync call gives 20 s more.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 30 })
        .cfg(P, "DELETE")
        .worker(P, "termination requested")
        .begin(P, "SyncTerminatingPod", Some(30))
        .end(P, "SyncTerminatingPod", false)
        .wait(100_000);
    assert!(g.finish().is_empty());
    // Skipped after a power-off.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 30 })
        .cfg(P, "DELETE")
        .tr(Transition::PowerOff {
            cause: PowerOffCause::NoInhibitorLock,
            alive: 1,
        })
        .wait(600_000);
    assert!(h.finish().is_empty());
}

#[test]
fn l6_orphaned_runtime_pods_die() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            epoch: 0,
        })
        .tr(Transition::ApiForceDeleted { uid: P })
        .tr(Transition::ApiRemoved {
            uid: P,
            by: RemovedBy::ForceDelete,
        })
        .wait(5000)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Started,
            epoch: 1,
        })
        .tr(Transition::UpdatePod {
            uid: P,
            ty: UpdateType::Kill,
            runtime_only: true,
        })
        .wait(200_000);
    assert_eq!(f.finish(), vec!["orphaned-runtime-pods-die"]);
}

#[test]
fn l7_natural_completion() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Never)
        .exited(P, 1, 0)
        .wait(61_000);
    assert_eq!(f.finish(), vec!["natural-completion"]);
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Never)
        .exited(P, 1, 0)
        .wait(1000)
        .begin(P, "SyncPod", None)
        .local(P, PodPhase::Succeeded)
        .end(P, "SyncPod", true)
        .worker(P, "pod is terminal: terminating")
        .begin(P, "SyncTerminatingPod", None)
        .step(P, "status set")
        .end(P, "SyncTerminatingPod", true)
        .worker(P, "terminated")
        .patched(P, PodPhase::Succeeded, false)
        .begin(P, "SyncTerminatedPod", None)
        .end(P, "SyncTerminatedPod", true)
        .worker(P, "finished")
        .wait(100_000);
    assert!(g.finish().is_empty());
    // Always restarts: never complete.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .exited(P, 1, 0)
        .wait(100_000);
    assert!(h.finish().is_empty());
}

#[test]
fn every_invariant_is_checked_and_off_by_default_checks_nothing() {
    assert_eq!(Oracle::new().active.count_ones() as usize, INVARIANTS.len());
    let mut off = Oracle::default();
    off.observe(
        SimTime::ZERO,
        &Transition::SyncBegin {
            uid: P,
            kind: SyncKind::SyncPod,
            grace: None,
        },
    );
    off.observe(
        SimTime::ZERO,
        &Transition::SyncBegin {
            uid: P,
            kind: SyncKind::SyncPod,
            grace: None,
        },
    );
    off.finish(SimTime(u64::MAX / 2));
    assert!(!off.is_on() && off.findings().is_empty());
}

#[test]
fn c16_restart_readmits_running_pods() {
    let crash_and_reject = |h: &mut Feed, uid: PodUid, reason: &str| {
        h.wait(1000)
            .tr(Transition::KubeletProcess {
                what: ProcessEvent::Crashed,
                epoch: 0,
            })
            .wait(5000)
            .tr(Transition::KubeletProcess {
                what: ProcessEvent::Started,
                epoch: 1,
            })
            .wait(10)
            .cfg(uid, "ADD")
            .tr(Transition::PodRejected {
                uid,
                reason: reason.into(),
            });
    };
    // A pod running across the restart rejected OutOfcpu: reported.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always);
    crash_and_reject(&mut h, P, "OutOfcpu");
    assert!(h.has(Inv::RestartReadmitsRunningPods));
    // Another reason (memory pressure) is not this invariant's business.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always);
    crash_and_reject(&mut h, P, "Evicted");
    assert!(!h.has(Inv::RestartReadmitsRunningPods));
    // A pod that did not run at the crash: not reported.
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always);
    crash_and_reject(&mut h, P, "OutOfcpu");
    assert!(!h.has(Inv::RestartReadmitsRunningPods));
    // A pod created while the kubelet was down may legitimately take the capacity.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .wait(1000)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            epoch: 0,
        })
        .created(Q, RestartPolicy::Always)
        .wait(5000)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Started,
            epoch: 1,
        })
        .cfg(P, "ADD")
        .tr(Transition::PodRejected {
            uid: P,
            reason: "OutOfcpu".into(),
        });
    assert!(!h.has(Inv::RestartReadmitsRunningPods));
}

#[test]
fn cache_freshness_flags_a_sync_acting_on_a_status_older_than_the_previous_sync() {
    use crate::model::SandboxId;
    let sandbox = |f: &mut Feed, uid| {
        f.tr(Transition::SandboxReady {
            uid,
            id: SandboxId(1),
        });
    };
    // A Never container that ran before the previous SyncPod ended runs again.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Never).begin(P, "SyncPod", None);
    f.wait(10).running(P, 1).wait(10).end(P, "SyncPod", true);
    f.wait(500).begin(P, "SyncPod", None).wait(10).running(P, 2);
    assert!(f.has(Inv::CacheFreshness));
    // An Always container restarted after it exited is fine.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None);
    f.wait(10).running(P, 1).wait(10).end(P, "SyncPod", true);
    f.wait(100).exited(P, 1, 1);
    f.wait(500).begin(P, "SyncPod", None).wait(10).running(P, 2);
    assert!(!f.has(Inv::CacheFreshness));
    // A second sandbox while the first, ready before the last sync ended, still is.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None);
    sandbox(&mut f, P);
    f.wait(10).end(P, "SyncPod", true);
    f.wait(500)
        .begin(P, "SyncPod", None)
        .cri(P, "RunPodSandbox");
    assert!(f.has(Inv::CacheFreshness));
    // The first sync's own sandbox, and a new one after the old was stopped, are fine.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None);
    f.cri(P, "RunPodSandbox");
    sandbox(&mut f, P);
    f.wait(10).end(P, "SyncPod", true);
    f.tr(Transition::SandboxStopped {
        uid: P,
        id: SandboxId(1),
    });
    f.wait(500)
        .begin(P, "SyncPod", None)
        .cri(P, "RunPodSandbox");
    assert!(!f.has(Inv::CacheFreshness));
}

#[test]
fn referenced_objects_registered_flags_a_mount_failure_while_syncing() {
    let what = NoteKind::FailedMountNotRegistered;
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always).worker(P, "started");
    f.begin(P, "SyncPod", None)
        .tr(Transition::Note { uid: P, what });
    assert!(f.has(Inv::ReferencedObjectsRegistered));
    // After the termination was acknowledged the pod is no longer synced.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always).worker(P, "started");
    f.worker(P, "termination acknowledged");
    f.tr(Transition::Note { uid: P, what });
    assert!(!f.has(Inv::ReferencedObjectsRegistered));
}

#[test]
fn s1_no_start_after_v121_terminal_shortcut() {
    // v1.21: dispatchWork treated the deleted pod as terminated while its SyncPod was still
    // creating the container.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .worker(P, "record")
        .begin(P, "SyncPod", None)
        .cri(P, "RunPodSandbox")
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 1 })
        .cfg(P, "DELETE")
        .worker(
            P,
            "v1.21 dispatchWork: pod and containers terminal: TerminatePod, worker skipped",
        );
    assert!(!f.has(Inv::NoStartAfterTermination));
    f.cri(P, "CreateContainer");
    assert!(f.has(Inv::NoStartAfterTermination));
}

#[test]
fn c7_worker_kept_until_terminated() {
    // Forgotten once finished: fine.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P)
        .worker(P, "forgotten");
    assert!(!f.has(Inv::WorkerKeptUntilTerminated));
    // v1.21 ForgetWorker while the container still runs.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .worker(P, "v1.21 ForgetWorker: worker forgotten");
    assert!(g.has(Inv::WorkerKeptUntilTerminated));
    // ... or while a SyncPod is in flight (nothing running yet).
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .worker(P, "record")
        .begin(P, "SyncPod", None)
        .worker(P, "v1.21 ForgetWorker: worker forgotten");
    assert!(h.has(Inv::WorkerKeptUntilTerminated));
}

#[test]
fn c5_no_teardown_while_a_kill_is_in_flight() {
    // v1.21: the pod killer was asked to kill the pod and has not finished.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .tr(Transition::Note {
            uid: P,
            what: NoteKind::V121KillRequested,
        })
        .cri(P, "UnmountVolumes");
    assert!(f.has(Inv::NoTeardownUnderRunningContainer));
    // Once the kill is done, teardown may begin.
    let mut g = Feed::new();
    g.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .tr(Transition::Note {
            uid: P,
            what: NoteKind::V121KillRequested,
        })
        .tr(Transition::Note {
            uid: P,
            what: NoteKind::V121KillDone,
        })
        .cri(P, "UnmountVolumes");
    assert!(!g.has(Inv::NoTeardownUnderRunningContainer));
    // v1.31: termination requested and not terminated.
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .worker(P, "termination requested")
        .cri(P, "RemovePodDir");
    assert!(h.has(Inv::NoTeardownUnderRunningContainer));
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P);
    assert!(!k.has(Inv::NoTeardownUnderRunningContainer));
}

#[test]
fn s1_prime_starts_only_in_inflight_sync() {
    // A SyncPod open when termination was requested may still start containers; they are
    // counted.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .wait(1000)
        .begin(P, "SyncPod", None)
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 30 })
        .cfg(P, "DELETE")
        .worker(P, "termination requested")
        .cri(P, "CreateContainer")
        .cri(P, "StartContainer")
        .end(P, "SyncPod", true);
    assert!(!f.has(Inv::StartsOnlyInInflightSync));
    assert_eq!(f.o.starts_while_termination_requested(), 2);
    // The work the worker took up before the request, waiting for a newer pod status:
    // its SyncPod begins after the request.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .wait(500)
        .begin(P, "SyncPod", None)
        .cri(P, "StartContainer")
        .end(P, "SyncPod", true);
    assert!(!g.has(Inv::StartsOnlyInInflightSync));
    assert_eq!(g.o.starts_while_termination_requested(), 1);
    // A second SyncPod after the request (the first one ended) must not start anything.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .begin(P, "SyncPod", None)
        .end(P, "SyncPod", true)
        .begin(P, "SyncPod", None)
        .cri(P, "StartContainer");
    assert!(h.has(Inv::StartsOnlyInInflightSync));
    // No SyncPod open at all.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .cri(P, "RunPodSandbox");
    assert!(k.has(Inv::StartsOnlyInInflightSync));
    // After TermAcked it is S1's business, not S1''s.
    let mut m = Feed::new();
    m.running_pod(P, RestartPolicy::Always).terminate(P);
    let before = m.o.starts_while_termination_requested();
    m.cri(P, "StartContainer");
    assert!(!m.has(Inv::StartsOnlyInInflightSync));
    assert_eq!(m.o.starts_while_termination_requested(), before);
}

#[test]
fn s9_probes_only_running_containers() {
    let probe = |result| Transition::Probe {
        uid: P,
        container: "app".into(),
        kind: ProbeType::Liveness,
        result: w::<ProbeVerdict>(result),
    };
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(probe("success"))
        .exited(P, 1, 1)
        .tr(probe("failure"))
        .tr(probe("error"));
    assert!(!f.has(Inv::ProbesOnlyRunningContainers));
    // Success against an exited container.
    f.tr(probe("success"));
    assert!(f.has(Inv::ProbesOnlyRunningContainers));
    // A probe of a container that never ran.
    let mut g = Feed::new();
    g.created(P, RestartPolicy::Always).tr(probe("failure"));
    assert!(g.has(Inv::ProbesOnlyRunningContainers));
}

#[test]
fn l2_terminal_in_api_after_stop() {
    // Terminated, then the terminal phase reaches the API: fine.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .wait(1000)
        .patched(P, PodPhase::Succeeded, false)
        .wait(120_000);
    assert!(!f.finish().contains(&Inv::TerminalInApiAfterStop.name()));
    assert!(f.o.liveness_checked(Inv::TerminalInApiAfterStop) > 0);
    // The API still shows Running long after.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .wait(120_000);
    assert!(g.finish().contains(&Inv::TerminalInApiAfterStop.name()));
    // Too little time after Terminated: not checked.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .wait(5_000);
    assert!(!h.finish().contains(&Inv::TerminalInApiAfterStop.name()));
    assert_eq!(h.o.liveness_checked(Inv::TerminalInApiAfterStop), 0);
}

#[test]
fn l5_finished_pod_forgotten() {
    let forgotten_after = |forget_at_first: bool| {
        let mut f = Feed::new();
        f.running_pod(P, RestartPolicy::Always)
            .terminate(P)
            .clean_up(P)
            .cfg(P, "REMOVE")
            .wait(2000)
            .tr(Transition::Housekeeping);
        if forget_at_first {
            f.worker(P, "forgotten");
        }
        f.wait(2000)
            .tr(Transition::Housekeeping)
            .worker(P, "forgotten");
        f
    };
    let f = forgotten_after(true);
    assert!(!f.has(Inv::FinishedPodForgotten));
    assert_eq!(f.o.liveness_checked(Inv::FinishedPodForgotten), 1);
    assert!(forgotten_after(false).has(Inv::FinishedPodForgotten));
    // Still in config (not REMOVEd): kept.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Never)
        .terminate(P)
        .clean_up(P)
        .tr(Transition::Housekeeping)
        .wait(2000)
        .tr(Transition::Housekeeping);
    assert!(!g.has(Inv::FinishedPodForgotten));
}

#[test]
fn l8_kill_pod_now_returns() {
    // Spec grace 30 s: the bound is 45 s (+1 s).
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .kill(P, 1, "requested", false)
        .wait(45_000)
        .kill(P, 1, "timed out", false)
        .wait(100_000);
    assert!(!f.finish().contains(&Inv::KillPodNowReturns.name()));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .kill(P, 1, "requested", false)
        .wait(50_000)
        .kill(P, 1, "returned", false);
    assert!(g.has(Inv::KillPodNowReturns));
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .kill(P, 1, "requested", false)
        .wait(60_000);
    assert!(h.finish().contains(&Inv::KillPodNowReturns.name()));
    // Pending calls die with the kubelet.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .kill(P, 1, "requested", false)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            epoch: 0,
        })
        .wait(1000)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Started,
            epoch: 1,
        })
        .wait(60_000);
    assert!(!k.finish().contains(&Inv::KillPodNowReturns.name()));
}

#[test]
fn l9_eviction_reevaluates() {
    let ev = |what| Transition::Eviction {
        uid: P,
        what: w(what),
    };
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(ev("kill completed"))
        .wait(30_000)
        .tr(ev("timed out waiting for the pod to be cleaned up"))
        .wait(100_000);
    assert!(!f.finish().contains(&Inv::EvictionReevaluates.name()));
    assert!(f.o.liveness_checked(Inv::EvictionReevaluates) > 0);
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(ev("kill completed"))
        .wait(45_000)
        .tr(ev("pod cleaned up"));
    assert!(g.has(Inv::EvictionReevaluates));
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .tr(ev("kill timed out (ExceededGracePeriod)"))
        .wait(45_000);
    assert!(h.finish().contains(&Inv::EvictionReevaluates.name()));
}

#[test]
fn l10_node_shutdown_completes_and_c13_not_ready() {
    let group = |priority, period_s| Transition::ShutdownGroup {
        priority,
        period_s,
        pods: 1,
    };
    let shutdown = |what: &str| Transition::Shutdown { what: gns(what) };
    let released =
        || shutdown("shutdown processed: inhibitor lock 1 released, node will shut down");
    // Groups within their periods, NotReady at once, lock released, power off.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(Transition::NodeReady { ready: false })
        .tr(group(0, 10))
        .wait(10_000)
        .tr(group(100, 20))
        .wait(20_000)
        .tr(released())
        .tr(Transition::PowerOff {
            cause: PowerOffCause::InhibitorLockReleased,
            alive: 0,
        })
        .wait(100_000);
    let names = f.finish();
    assert!(
        !names.contains(&Inv::NodeShutdownCompletes.name()),
        "{names:?}"
    );
    assert!(!names.contains(&Inv::NotReadyAfterShutdownStart.name()));
    // A group that started late, and no NotReady before the power-off.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(group(0, 10))
        .wait(15_000)
        .tr(group(100, 20))
        .tr(Transition::PowerOff {
            cause: PowerOffCause::InhibitDelayExpired,
            alive: 1,
        });
    let names = g.finish();
    assert!(names.contains(&Inv::NodeShutdownCompletes.name()));
    assert!(names.contains(&Inv::NotReadyAfterShutdownStart.name()));
    // The lock never released, the node still on at the end.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(Transition::NodeReady { ready: false })
        .tr(group(0, 10))
        .wait(30_000);
    assert!(h.finish().contains(&Inv::NodeShutdownCompletes.name()));
    // Cancelled shutdown: nothing is due.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .tr(shutdown("PrepareForShutdown(true)"))
        .tr(shutdown("PrepareForShutdown(false)"))
        .wait(60_000);
    assert_eq!(k.finish(), Vec::<&str>::new());
}

#[test]
fn l11_liveness_failure_kills() {
    let fail = Transition::ProbeResult {
        uid: P,
        id: ContainerId(1),
        kind: ProbeType::Liveness,
        result: ProbeCached::Failure,
    };
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(fail.clone())
        .wait(5_000)
        .stop(P, 30)
        .exited(P, 1, 137)
        .wait(100_000);
    assert!(!f.finish().contains(&Inv::LivenessFailureKills.name()));
    assert_eq!(f.o.liveness_checked(Inv::LivenessFailureKills), 1);
    // Never killed.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(fail.clone())
        .wait(100_000);
    assert!(g.finish().contains(&Inv::LivenessFailureKills.name()));
    // Killed too late.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .tr(fail.clone())
        .wait(90_000)
        .exited(P, 1, 137);
    assert!(h.has(Inv::LivenessFailureKills));
    // A terminating pod: its kill is deleted-pod-stops' business.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .tr(fail)
        .wait(100_000);
    assert!(!k.finish().contains(&Inv::LivenessFailureKills.name()));
}

#[test]
fn c14_api_writes_carry_uid() {
    let status = |id| ApiContainerStatus {
        name: "app".into(),
        state: ApiContainerState::Running {
            started_at: SimTime::ZERO,
        },
        last_state: None,
        restart_count: 0,
        ready: true,
        started: true,
        container_id: Some(ContainerId(id)),
    };
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).patched_with(
        P,
        PodPhase::Running,
        true,
        vec![status(1)],
    );
    assert!(!f.has(Inv::ApiWritesCarryUid));
    // Container 2 is Q's: a status computed for Q landed on P's object.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .created(Q, RestartPolicy::Always)
        .running(Q, 2)
        .patched_with(P, PodPhase::Running, true, vec![status(2)]);
    assert!(g.has(Inv::ApiWritesCarryUid));
}
