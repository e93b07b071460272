//! Unit tests of the oracle as a whole (the checkers' own tests sit beside them).

use super::testkit::*;
use super::RING;

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
fn every_invariant_is_checked_and_off_by_default_checks_nothing() {
    assert_eq!(
        Oracle::new().out.active.count_ones() as usize,
        INVARIANTS.len()
    );
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
