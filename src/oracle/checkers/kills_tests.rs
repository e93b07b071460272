//! Unit tests of the kills checker.

use crate::oracle::testkit::*;

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
