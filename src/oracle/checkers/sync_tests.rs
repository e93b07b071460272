//! Unit tests of the sync checker.

use crate::oracle::testkit::*;

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
