//! Unit tests of the api checker.

use crate::oracle::testkit::*;

#[test]
fn s4_no_terminal_phase_while_running() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .patched(P, PodPhase::Failed, false);
    assert!(f.has(Inv::NoTerminalPhaseWhileRunning));
    // Containers stopped but the worker has not reached Terminated yet.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .exited(P, 1, 0)
        .patched(P, PodPhase::Succeeded, false);
    assert!(g.has(Inv::NoTerminalPhaseWhileRunning));
    // An admission rejection has no worker.
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always)
        .cfg(P, "ADD")
        .tr(Transition::PodRejected {
            uid: P,
            reason: w("OutOfpods"),
        })
        .patched(P, PodPhase::Failed, false);
    assert!(!h.has(Inv::NoTerminalPhaseWhileRunning));
}

#[test]
fn s5_terminal_phase_absorbing_and_failed_never_succeeded() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .clean_up(P);
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Succeeded, false)
        .patched(P, PodPhase::Succeeded, false);
    assert!(g.names().is_empty());
    g.patched(P, PodPhase::Running, false);
    assert!(g.has(Inv::TerminalPhaseAbsorbing));
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Failed, false)
        .patched(P, PodPhase::Succeeded, false);
    assert!(h.has(Inv::FailedNeverBecomesSucceeded));
    assert!(!h.has(Inv::TerminalPhaseAbsorbing));
}

#[test]
fn s5p_local_terminal_phase_absorbing() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .local(P, PodPhase::Failed)
        .local(P, PodPhase::Succeeded);
    assert!(!f.has(Inv::LocalTerminalPhaseAbsorbing));
    f.local(P, PodPhase::Running);
    assert!(f.has(Inv::LocalTerminalPhaseAbsorbing));
    // The sync dropped the cached status (the name is another UID's now): a fresh phase
    // after the drop is no regression ...
    let dropped = Transition::LocalStatusDropped { uid: P, now_of: Q };
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .local(P, PodPhase::Failed)
        .tr(dropped.clone())
        .local(P, PodPhase::Pending);
    assert!(!g.has(Inv::LocalTerminalPhaseAbsorbing));
    // ... but a terminal phase cached again is absorbing again.
    g.local(P, PodPhase::Failed).local(P, PodPhase::Running);
    assert!(g.has(Inv::LocalTerminalPhaseAbsorbing));
    // A drop of another UID's status does not excuse this one's regression.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .local(P, PodPhase::Failed)
        .tr(Transition::LocalStatusDropped { uid: Q, now_of: P })
        .local(P, PodPhase::Pending);
    assert!(h.has(Inv::LocalTerminalPhaseAbsorbing));
}

#[test]
fn s6_delete_only_after_reclamation() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Succeeded, false)
        .tr(Transition::ApiRemoved {
            uid: P,
            by: RemovedBy::Kubelet,
        });
    assert!(f.has(Inv::DeleteOnlyAfterReclamation));
    let m = &f.o.findings()[0].message;
    assert!(m.contains("SyncTerminatedPod has not succeeded") && m.contains("volumes"));
    // Removal by a force delete is not the kubelet's.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .tr(Transition::ApiForceDeleted { uid: P })
        .tr(Transition::ApiRemoved {
            uid: P,
            by: RemovedBy::ForceDelete,
        });
    assert!(!g.has(Inv::DeleteOnlyAfterReclamation));
}

#[test]
fn s14_runtime_pods_no_api_writes() {
    let mut f = Feed::new();
    f.created(P, RestartPolicy::Always)
        .tr(Transition::UpdatePod {
            uid: P,
            ty: UpdateType::Kill,
            runtime_only: true,
        })
        .patched(P, PodPhase::Failed, false);
    assert!(f.has(Inv::RuntimePodsNoApiWrites));
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .patched(P, PodPhase::Running, false);
    assert!(!g.has(Inv::RuntimePodsNoApiWrites));
}

#[test]
fn no_ready_with_terminal_phase() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched(P, PodPhase::Succeeded, true);
    assert!(f.has(Inv::NoReadyWithTerminalPhase));
}

#[test]
fn final_container_status_fidelity() {
    let terminated = |id: Option<u32>, exit_code, reason| ApiContainerStatus {
        name: "app".into(),
        state: ApiContainerState::Terminated {
            exit_code,
            reason,
            started_at: None,
            finished_at: None,
        },
        last_state: None,
        restart_count: 0,
        ready: false,
        started: false,
        container_id: id.map(ContainerId),
    };
    // The real exit code 0 reported as 137.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched_with(
            P,
            PodPhase::Failed,
            false,
            vec![terminated(Some(1), 137, "Error")],
        );
    f.finish();
    assert!(f.has(Inv::FinalContainerStatusFidelity));
    // ContainerStatusUnknown long after the kubelet could have seen the exit.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .wait(10_000)
        .patched_with(
            P,
            PodPhase::Failed,
            false,
            vec![terminated(None, 137, "ContainerStatusUnknown")],
        );
    g.finish();
    assert!(g.has(Inv::FinalContainerStatusFidelity));
    // The truth.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .terminate(P)
        .patched_with(
            P,
            PodPhase::Succeeded,
            false,
            vec![terminated(Some(1), 0, "Completed")],
        );
    h.finish();
    assert!(!h.has(Inv::FinalContainerStatusFidelity));
    // Exit code 0 without a container ID for a container that never exited 0 (the
    // default TerminatePod state before PR 88440): reported.
    let mut k = Feed::new();
    k.created(P, RestartPolicy::Never)
        .wait(10)
        .cfg(P, "ADD")
        .wait(1000)
        .patched_with(P, PodPhase::Failed, false, vec![terminated(None, 0, "")]);
    k.finish();
    assert!(k.has(Inv::FinalContainerStatusFidelity));
    // ... but not when an instance of it did exit 0.
    let mut m = Feed::new();
    m.running_pod(P, RestartPolicy::Never)
        .exited(P, 1, 0)
        .terminate(P)
        .patched_with(P, PodPhase::Succeeded, false, vec![terminated(None, 0, "")]);
    m.finish();
    assert!(!m.has(Inv::FinalContainerStatusFidelity));
}

#[test]
fn c16_restart_readmits_running_pods() {
    let crash_and_reject = |h: &mut Feed, uid: PodUid, reason: &str| {
        h.wait(1000)
            .tr(Transition::KubeletProcess {
                what: ProcessEvent::Crashed,
                epoch: 0,
            })
            .wait(5000)
            .tr(Transition::KubeletProcess {
                what: ProcessEvent::Started,
                epoch: 1,
            })
            .wait(10)
            .cfg(uid, "ADD")
            .tr(Transition::PodRejected {
                uid,
                reason: w(reason),
            });
    };
    // A pod running across the restart rejected OutOfcpu: reported.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always);
    crash_and_reject(&mut h, P, "OutOfcpu");
    assert!(h.has(Inv::RestartReadmitsRunningPods));
    // Another reason (memory pressure) is not this invariant's business.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always);
    crash_and_reject(&mut h, P, "Evicted");
    assert!(!h.has(Inv::RestartReadmitsRunningPods));
    // A pod that did not run at the crash: not reported.
    let mut h = Feed::new();
    h.created(P, RestartPolicy::Always);
    crash_and_reject(&mut h, P, "OutOfcpu");
    assert!(!h.has(Inv::RestartReadmitsRunningPods));
    // A pod created while the kubelet was down may legitimately take the capacity.
    let mut h = Feed::new();
    h.running_pod(P, RestartPolicy::Always)
        .wait(1000)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            epoch: 0,
        })
        .created(Q, RestartPolicy::Always)
        .wait(5000)
        .tr(Transition::KubeletProcess {
            what: ProcessEvent::Started,
            epoch: 1,
        })
        .cfg(P, "ADD")
        .tr(Transition::PodRejected {
            uid: P,
            reason: w("OutOfcpu"),
        });
    assert!(!h.has(Inv::RestartReadmitsRunningPods));
}

#[test]
fn c14_api_writes_carry_uid() {
    let status = |id| ApiContainerStatus {
        name: "app".into(),
        state: ApiContainerState::Running {
            started_at: SimTime::ZERO,
        },
        last_state: None,
        restart_count: 0,
        ready: true,
        started: true,
        container_id: Some(ContainerId(id)),
    };
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).patched_with(
        P,
        PodPhase::Running,
        true,
        vec![status(1)],
    );
    assert!(!f.has(Inv::ApiWritesCarryUid));
    // Container 2 is Q's: a status computed for Q landed on P's object.
    let mut g = Feed::new();
    g.running_pod(P, RestartPolicy::Always)
        .created(Q, RestartPolicy::Always)
        .running(Q, 2)
        .patched_with(P, PodPhase::Running, true, vec![status(2)]);
    assert!(g.has(Inv::ApiWritesCarryUid));
}

#[test]
fn owners_by_container_id() {
    use super::Owners;
    use crate::model::ContainerId;
    let mut o = Owners::default();
    assert_eq!(o.get(ContainerId(0)), None);
    assert_eq!(o.get(ContainerId(7)), None);
    o.insert(ContainerId(3), PodUid(0));
    o.insert(ContainerId(1), PodUid(5));
    assert_eq!(o.get(ContainerId(3)), Some(PodUid(0)));
    assert_eq!(o.get(ContainerId(1)), Some(PodUid(5)));
    assert_eq!(o.get(ContainerId(2)), None);
    assert_eq!(o.get(ContainerId(4)), None);
    // A later owner of the same ID replaces the earlier one, as a map's insert did.
    o.insert(ContainerId(3), PodUid(9));
    assert_eq!(o.get(ContainerId(3)), Some(PodUid(9)));
}
