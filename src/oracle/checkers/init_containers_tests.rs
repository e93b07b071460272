//! Unit tests of the init-container re-run and sidecar termination-order checker.

use crate::model::{ContainerRestart, ContainerSpec, ProcessSignal, SandboxId};
use crate::oracle::testkit::*;

/// A pod with sidecars `s0`, `s1` and regular container `app`, its three containers running
/// (ids 1 app, 2 s0, 3 s1) and its termination begun.
fn terminating() -> Feed {
    let mut s = (*spec("pod1", RestartPolicy::Always)).clone();
    for n in ["s0", "s1"] {
        let mut c = ContainerSpec::named(n, "img:1");
        c.restart_policy = ContainerRestart(Some(RestartPolicy::Always));
        s.init_containers.push(c);
    }
    let mut f = created(s);
    for (id, n) in [(1, "app"), (2, "s0"), (3, "s1")] {
        f.tr(Transition::ContainerRunning {
            uid: P,
            id: ContainerId(id),
            name: n.into(),
        });
    }
    f.worker(P, "termination requested")
        .begin(P, "SyncTerminatingPod", Some(30));
    f
}

/// A feed where pod `P` with spec `s` was created and added to the config.
fn created(s: crate::model::PodSpec) -> Feed {
    let mut f = Feed::new();
    f.tr(Transition::ApiCreated {
        uid: P,
        name: "pod1".into(),
        spec: Arc::new(s),
        static_pod: false,
        mirror_of: None,
    })
    .cfg(P, "ADD");
    f
}

/// Sandbox 1 of pod `P` became ready.
fn sandbox_ready(f: &mut Feed) {
    f.tr(Transition::SandboxReady {
        uid: P,
        id: SandboxId(1),
    });
}

fn sigterm(f: &mut Feed, id: u32) -> &mut Feed {
    f.tr(Transition::Signal {
        uid: P,
        id: ContainerId(id),
        signal: ProcessSignal::Sigterm,
    })
}

#[test]
fn sidecar_stopped_before_the_app_is_a_finding() {
    let mut f = terminating();
    sigterm(&mut f, 1);
    sigterm(&mut f, 3);
    assert!(f.has(Inv::SidecarsStopAfterMainContainers));
}

#[test]
fn sidecars_in_reverse_order_after_the_app_are_fine() {
    let mut f = terminating();
    sigterm(&mut f, 1);
    f.exited(P, 1, 0);
    sigterm(&mut f, 3);
    f.exited(P, 3, 0);
    sigterm(&mut f, 2);
    assert!(!f.has(Inv::SidecarsStopAfterMainContainers));
}

#[test]
fn earlier_sidecar_before_a_later_one_is_a_finding_unless_its_wait_timed_out() {
    let mut f = terminating();
    sigterm(&mut f, 1);
    f.exited(P, 1, 0);
    sigterm(&mut f, 2);
    assert!(f.has(Inv::SidecarsStopAfterMainContainers));
    let mut g = terminating();
    g.tr(Transition::Note {
        uid: P,
        what: NoteKind::SidecarTurnTimedOut,
    });
    sigterm(&mut g, 2);
    assert!(!g.has(Inv::SidecarsStopAfterMainContainers));
}

/// A pod with classic init container `setup` and regular container `app`, whose sandbox 1
/// became ready, `setup` ran (id 1) and exited 0, then `app` ran (id 2).
fn initialized() -> Feed {
    let mut s = (*spec("pod1", RestartPolicy::Always)).clone();
    s.init_containers
        .push(ContainerSpec::named("setup", "img:1"));
    let mut f = created(s);
    sandbox_ready(&mut f);
    running(&mut f, 1, "setup");
    f.exited(P, 1, 0);
    running(&mut f, 2, "app");
    f
}

fn running(f: &mut Feed, id: u32, name: &str) {
    f.tr(Transition::ContainerRunning {
        uid: P,
        id: ContainerId(id),
        name: name.into(),
    });
}

#[test]
fn init_container_run_again_beside_the_app_is_a_finding() {
    let mut f = initialized();
    assert!(!f.has(Inv::InitContainersNotRerun));
    running(&mut f, 3, "setup");
    assert!(f.has(Inv::InitContainersNotRerun));
}

#[test]
fn init_container_run_again_in_a_new_sandbox_is_fine() {
    let mut f = initialized();
    f.exited(P, 2, 0);
    f.wait(1000);
    f.tr(Transition::SandboxStopped {
        uid: P,
        id: SandboxId(1),
    });
    f.tr(Transition::SandboxReady {
        uid: P,
        id: SandboxId(2),
    });
    running(&mut f, 3, "setup");
    assert!(!f.has(Inv::InitContainersNotRerun));
}

#[test]
fn a_sidecar_restarted_beside_the_app_is_fine() {
    let mut s = (*spec("pod1", RestartPolicy::Never)).clone();
    let mut c = ContainerSpec::named("mesh", "img:1");
    c.restart_policy = ContainerRestart(Some(RestartPolicy::Always));
    s.init_containers.push(c);
    let mut f = created(s);
    sandbox_ready(&mut f);
    running(&mut f, 1, "mesh");
    running(&mut f, 2, "app");
    f.exited(P, 1, 1);
    running(&mut f, 3, "mesh");
    assert!(!f.has(Inv::InitContainersNotRerun));
}
