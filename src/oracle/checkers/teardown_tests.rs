//! Unit tests of the teardown checker.

use crate::oracle::testkit::*;

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
