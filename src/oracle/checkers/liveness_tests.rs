//! Unit tests of the liveness checker.

use crate::oracle::testkit::*;

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
    // Re-added while its container, never asked to stop, still runs (removed and restored
    // while the kubelet was down): fine; the same after a termination request is not.
    let mut r = Feed::new();
    r.tr(stat(P))
        .running(P, 1)
        .wait(1_000)
        .tr(stat(P))
        .wait(61_000);
    assert!(!r.finish().contains(&Inv::DesiredStaticPodRuns.name()));
    let mut r = Feed::new();
    r.tr(stat(P))
        .running(P, 1)
        .wait(1_000)
        .worker(P, "termination requested");
    r.tr(stat(P)).wait(61_000);
    assert!(r.finish().contains(&Inv::DesiredStaticPodRuns.name()));
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
    // The kill began in time, and the container (SIGTERM ignored, a 120 s grace) died
    // only when the grace ran out: correct behaviour, no finding.
    let mut long = Feed::new();
    long.running_pod(P, RestartPolicy::Always)
        .tr(fail.clone())
        .wait(5_000)
        .stop(P, 120)
        .wait(120_000)
        .exited(P, 1, 137)
        .wait(10_000);
    assert!(!long.finish().contains(&Inv::LivenessFailureKills.name()));
    assert_eq!(long.o.liveness_checked(Inv::LivenessFailureKills), 1);
    // A PreStop hook that began in time counts as the kill's start, and its hook may run
    // past the bound.
    let mut hook = Feed::new();
    hook.running_pod(P, RestartPolicy::Always)
        .tr(fail.clone())
        .wait(5_000)
        .tr(Transition::CriBegin {
            uid: P,
            call: CriOp::ExecPreStop,
            target: 1,
            timeout_s: None,
        })
        .wait(100_000);
    assert!(!hook.finish().contains(&Inv::LivenessFailureKills.name()));
    // The kill began late: a finding, whatever came after.
    let mut late = Feed::new();
    late.running_pod(P, RestartPolicy::Always)
        .tr(fail.clone())
        .wait(90_000)
        .stop(P, 30);
    assert!(late.has(Inv::LivenessFailureKills));
    // A terminating pod: its kill is deleted-pod-stops' business.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .tr(fail)
        .wait(100_000);
    assert!(!k.finish().contains(&Inv::LivenessFailureKills.name()));
}
