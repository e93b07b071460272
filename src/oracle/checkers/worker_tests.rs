//! Unit tests of the worker checker.

use crate::oracle::testkit::*;

#[test]
fn s1_no_start_after_termination() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).terminate(P);
    assert!(!f.has(Inv::NoStartAfterTermination));
    f.cri(P, "CreateContainer");
    assert!(f.has(Inv::NoStartAfterTermination));
    // A start before the acknowledgement (inside an in-flight SyncPod) is allowed.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None)
        .worker(P, "termination requested")
        .cri(P, "StartContainer")
        .end(P, "SyncPod", true);
    assert!(!g.has(Inv::NoStartAfterTermination));
    // After a kubelet restart the new incarnation may start the pod again.
    g.begin(P, "SyncTerminatingPod", Some(30))
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            epoch: 0,
        })
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Started,
            epoch: 1,
        })
        .cri(P, "RunPodSandbox");
    assert!(!g.has(Inv::NoStartAfterTermination));
}

#[test]
fn s10_no_restart_after_termination() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ProbeResult {
            uid: P,
            id: ContainerId(1),
            kind: ProbeType::Liveness,
            result: ProbeCached::Failure,
        })
        .cri(P, "StartContainer");
    assert!(!f.has(Inv::NoRestartAfterTermination));
    f.terminate(P).cri(P, "StartContainer");
    assert!(f.has(Inv::NoRestartAfterTermination));
}

#[test]
fn cache_freshness_flags_a_sync_acting_on_a_status_older_than_the_previous_sync() {
    use crate::model::SandboxId;
    let sandbox = |f: &mut Feed, uid| {
        f.tr(Transition::SandboxReady {
            uid,
            id: SandboxId(1),
        });
    };
    // A Never container that ran before the previous SyncPod ended runs again.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Never).begin(P, "SyncPod", None);
    f.wait(10).running(P, 1).wait(10).end(P, "SyncPod", true);
    f.wait(500).begin(P, "SyncPod", None).wait(10).running(P, 2);
    assert!(f.has(Inv::CacheFreshness));
    // The same, but container GC removed the exited instance before the sync: no status,
    // fresh or stale, shows it any more (upstream restarts it too, issue 51142).
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Never).begin(P, "SyncPod", None);
    f.wait(10).running(P, 1).wait(10).end(P, "SyncPod", true);
    f.wait(100).exited(P, 1, 0).wait(100);
    f.tr(Transition::CriEnd {
        uid: P,
        call: CriOp::RemoveContainer,
        target: 1,
        error: None,
    });
    f.wait(500).begin(P, "SyncPod", None).wait(10).running(P, 2);
    assert!(!f.has(Inv::CacheFreshness));
    // An Always container restarted after it exited is fine.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None);
    f.wait(10).running(P, 1).wait(10).end(P, "SyncPod", true);
    f.wait(100).exited(P, 1, 1);
    f.wait(500).begin(P, "SyncPod", None).wait(10).running(P, 2);
    assert!(!f.has(Inv::CacheFreshness));
    // A second sandbox while the first, ready before the last sync ended, still is.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None);
    sandbox(&mut f, P);
    f.wait(10).end(P, "SyncPod", true);
    f.wait(500)
        .begin(P, "SyncPod", None)
        .cri(P, "RunPodSandbox");
    assert!(f.has(Inv::CacheFreshness));
    // The first sync's own sandbox, and a new one after the old was stopped, are fine.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .begin(P, "SyncPod", None);
    f.cri(P, "RunPodSandbox");
    sandbox(&mut f, P);
    f.wait(10).end(P, "SyncPod", true);
    f.tr(Transition::SandboxStopped {
        uid: P,
        id: SandboxId(1),
    });
    f.wait(500)
        .begin(P, "SyncPod", None)
        .cri(P, "RunPodSandbox");
    assert!(!f.has(Inv::CacheFreshness));
}

#[test]
fn referenced_objects_registered_flags_a_mount_failure_while_syncing() {
    let what = NoteKind::FailedMountNotRegistered;
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always).worker(P, "started");
    f.begin(P, "SyncPod", None)
        .tr(Transition::Note { uid: P, what });
    assert!(f.has(Inv::ReferencedObjectsRegistered));
    // After the termination was acknowledged the pod is no longer synced.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always).worker(P, "started");
    f.worker(P, "termination acknowledged");
    f.tr(Transition::Note { uid: P, what });
    assert!(!f.has(Inv::ReferencedObjectsRegistered));
}

#[test]
fn s1_no_start_after_v121_terminal_shortcut() {
    // v1.21: dispatchWork treated the deleted pod as terminated while its SyncPod was still
    // creating the container.
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .worker(P, "record")
        .begin(P, "SyncPod", None)
        .cri(P, "RunPodSandbox")
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 1 })
        .cfg(P, "DELETE")
        .worker(
            P,
            "v1.21 dispatchWork: pod and containers terminal: TerminatePod, worker skipped",
        );
    assert!(!f.has(Inv::NoStartAfterTermination));
    f.cri(P, "CreateContainer");
    assert!(f.has(Inv::NoStartAfterTermination));
}

#[test]
fn c7_worker_kept_until_terminated() {
    // Forgotten once finished: fine.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P)
        .worker(P, "forgotten");
    assert!(!f.has(Inv::WorkerKeptUntilTerminated));
    // v1.21 ForgetWorker while the container still runs.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .worker(P, "v1.21 ForgetWorker: worker forgotten");
    assert!(g.has(Inv::WorkerKeptUntilTerminated));
    // ... or while a SyncPod is in flight (nothing running yet).
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .worker(P, "record")
        .begin(P, "SyncPod", None)
        .worker(P, "v1.21 ForgetWorker: worker forgotten");
    assert!(h.has(Inv::WorkerKeptUntilTerminated));
}

#[test]
fn s1_prime_starts_only_in_inflight_sync() {
    // A SyncPod open when termination was requested may still start containers; they are
    // counted.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .wait(1000)
        .begin(P, "SyncPod", None)
        .tr(Transition::ApiDeleteRequested { uid: P, grace: 30 })
        .cfg(P, "DELETE")
        .worker(P, "termination requested")
        .cri(P, "CreateContainer")
        .cri(P, "StartContainer")
        .end(P, "SyncPod", true);
    assert!(!f.has(Inv::StartsOnlyInInflightSync));
    assert_eq!(f.o.starts_while_termination_requested(), 2);
    // The work the worker took up before the request, waiting for a newer pod status:
    // its SyncPod begins after the request.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .wait(500)
        .begin(P, "SyncPod", None)
        .cri(P, "StartContainer")
        .end(P, "SyncPod", true);
    assert!(!g.has(Inv::StartsOnlyInInflightSync));
    assert_eq!(g.o.starts_while_termination_requested(), 1);
    // A second SyncPod after the request (the first one ended) must not start anything.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .begin(P, "SyncPod", None)
        .end(P, "SyncPod", true)
        .begin(P, "SyncPod", None)
        .cri(P, "StartContainer");
    assert!(h.has(Inv::StartsOnlyInInflightSync));
    // No SyncPod open at all.
    let mut k = Feed::new();
    k.running_pod(P, RestartPolicy::Always)
        .worker(P, "termination requested")
        .cri(P, "RunPodSandbox");
    assert!(k.has(Inv::StartsOnlyInInflightSync));
    // After TermAcked it is S1's business, not S1''s.
    let mut m = Feed::new();
    m.running_pod(P, RestartPolicy::Always).terminate(P);
    let before = m.o.starts_while_termination_requested();
    m.cri(P, "StartContainer");
    assert!(!m.has(Inv::StartsOnlyInInflightSync));
    assert_eq!(m.o.starts_while_termination_requested(), before);
}
