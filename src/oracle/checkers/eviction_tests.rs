//! Unit tests of the eviction checker.

use crate::oracle::testkit::*;

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
