//! Unit tests of the static pods checker.

use crate::oracle::testkit::*;

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
    // Ground truth across a restart (issues 112814, 116880): the old UID is a runtime-only pod
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
