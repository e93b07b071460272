//! Unit tests of the shutdown checker.

use crate::oracle::testkit::*;

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
    // After a kubelet restart, with the status write rejected (the status manager holds
    // nothing for the pod), the phase that counts is the API's.
    let rejected = |api: PodPhase| {
        let mut f = Feed::new();
        f.running_pod(P, RestartPolicy::Never)
            .patched(P, api, false)
            .tr(Transition::KubeletProcess {
                what: ProcessEvent::Crashed,
                epoch: 0,
            })
            .tr(Transition::KubeletProcess {
                what: ProcessEvent::Started,
                epoch: 1,
            })
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
            .step(P, "status set");
        f.has(Inv::ShutdownPodsFailed)
    };
    assert!(!rejected(PodPhase::Failed));
    assert!(rejected(PodPhase::Running));
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
