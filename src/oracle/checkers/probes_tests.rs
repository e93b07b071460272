//! Unit tests of the probes checker.

use crate::oracle::testkit::*;

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
fn stops_told_bits() {
    use super::Stops;
    let mut s = Stops::default();
    for k in [
        ProbeType::Liveness,
        ProbeType::Readiness,
        ProbeType::Startup,
    ] {
        assert!(!s.stopped(k));
    }
    s.told |= Stops::STATUS_SET;
    assert!(s.stopped(ProbeType::Liveness) && s.stopped(ProbeType::Startup));
    assert!(!s.stopped(ProbeType::Readiness));
    s.told = Stops::LVS_STOPPED;
    assert!(s.stopped(ProbeType::Startup) && !s.stopped(ProbeType::Readiness));
    s.told = Stops::REMOVED;
    for k in [
        ProbeType::Liveness,
        ProbeType::Readiness,
        ProbeType::Startup,
    ] {
        assert!(s.stopped(k));
    }
}
