use super::*;
use crate::sim::trace::StableHasher;

/// The derived `Hash` and [`TraceHash`] of `t` leave the hasher in the same state.
fn same(t: &Transition) {
    let mut derived = StableHasher::default();
    t.hash(&mut derived);
    let mut fast = StableHasher::default();
    t.trace_hash(&mut fast);
    assert_eq!(derived.finish(), fast.finish(), "{t:?}");
    // Without a hint (0), the hinted path hashes the same too.
    let mut hinted = StableHasher::default();
    t.trace_hash_hinted(&mut hinted, 0);
    assert_eq!(derived.finish(), hinted.finish(), "{t:?} hinted");
}

const UIDS: [PodUid; 3] = [PodUid(0), PodUid(7), PodUid(u32::MAX)];

#[test]
fn probes_hash_as_derived() {
    let kinds = [
        ProbeType::Liveness,
        ProbeType::Readiness,
        ProbeType::Startup,
    ];
    for uid in UIDS {
        for container in [
            "",
            "a",
            "app",
            "sidecar",
            "side-car",
            "a-container-named-at-length",
        ] {
            for kind in kinds {
                for &result in ProbeVerdict::ALL {
                    let t = Transition::Probe {
                        uid,
                        container: Arc::from(container),
                        kind,
                        result,
                    };
                    same(&t);
                    // With the name's word kept, as a probe worker keeps it.
                    let mut derived = StableHasher::default();
                    t.hash(&mut derived);
                    let mut hinted = StableHasher::default();
                    let word = crate::sim::trace::short_str_word(container);
                    t.trace_hash_hinted(&mut hinted, word);
                    assert_eq!(derived.finish(), hinted.finish(), "{t:?} word {word:#x}");
                    // By value: a name's word gives the same state; no word, no answer.
                    let quick = t.trace_hash_quick(StableHasher::default(), word);
                    match quick {
                        Some(q) => assert_eq!(derived.finish(), q.finish(), "{t:?} by value"),
                        None => assert_eq!(word, 0, "{t:?}: a kept word hashes by value"),
                    }
                }
            }
        }
    }
}

#[test]
fn only_a_probe_with_a_word_hashes_by_value() {
    let t = Transition::Note {
        uid: PodUid(1),
        what: NoteKind::ALL[0],
    };
    assert!(t.trace_hash_quick(StableHasher::default(), 1).is_none());
}

#[test]
fn syncs_hash_as_derived() {
    let errors = [
        None,
        Some(String::new()),
        Some("x".to_string()),
        Some("failed to \"StartContainer\" for \"app\" with CrashLoopBackOff".to_string()),
    ];
    for uid in UIDS {
        for &kind in SyncKind::ALL {
            for grace in [None, Some(0), Some(30), Some(-1), Some(i64::MAX)] {
                same(&Transition::SyncBegin { uid, kind, grace });
            }
            for error in &errors {
                same(&Transition::SyncEnd {
                    uid,
                    kind,
                    error: error.clone(),
                });
            }
        }
    }
}

#[test]
fn updates_watches_and_notes_hash_as_derived() {
    for uid in UIDS {
        for &ty in UpdateType::ALL {
            for runtime_only in [false, true] {
                same(&Transition::UpdatePod {
                    uid,
                    ty,
                    runtime_only,
                });
            }
        }
        for &kind in WatchDelivery::ALL {
            same(&Transition::WatchDelivered { uid, kind });
        }
        for &what in NoteKind::ALL {
            same(&Transition::Note { uid, what });
        }
    }
}

#[test]
fn cri_calls_relists_and_housekeeping_hash_as_derived() {
    let errors = std::iter::once(None)
        .chain(CriFailed::ALL.iter().map(|&f| Some(CriFailure::Failed(f))))
        .chain([
            Some(CriFailure::Code(crate::model::CriError::Unavailable)),
            Some(CriFailure::Code(crate::model::CriError::DeadlineExceeded)),
        ]);
    let errors: Vec<_> = errors.collect();
    for uid in UIDS {
        for &call in CriOp::ALL {
            for target in [0, 3, u32::MAX] {
                for timeout_s in [None, Some(0), Some(30), Some(-1)] {
                    same(&Transition::CriBegin {
                        uid,
                        call,
                        target,
                        timeout_s,
                    });
                }
                for &error in &errors {
                    same(&Transition::CriEnd {
                        uid,
                        call,
                        target,
                        error,
                    });
                }
            }
        }
    }
    for changed in [0, 1, 7, u32::MAX] {
        same(&Transition::Relist { changed });
    }
    same(&Transition::Housekeeping);
}

#[test]
fn other_kinds_hash_as_derived() {
    // The path for every other kind is the derived `Hash` itself; a few of them, and the
    // neighbours of the positions the fast arms name.
    for t in [
        Transition::Housekeeping,
        Transition::Relist { changed: 3 },
        Transition::ApiForceDeleted { uid: PodUid(2) },
        Transition::Worker {
            uid: PodUid(2),
            what: WorkerStep::ALL[0],
        },
        Transition::LocalStatus {
            uid: PodUid(2),
            phase: PodPhase::Running,
        },
        Transition::ProbeWorker {
            uid: PodUid(4),
            container: Arc::from("app"),
            kind: ProbeType::Readiness,
            what: ProbeWorkerStep::ALL[0],
        },
    ] {
        same(&t);
    }
}

#[test]
fn a_transition_is_48_bytes() {
    assert_eq!(std::mem::size_of::<Transition>(), 48);
}

/// Container statuses in each state, with and without a last state and an ID.
fn container_statuses() -> Vec<crate::model::ApiContainerStatus> {
    use crate::model::{ApiContainerState as S, ApiContainerStatus, ContainerId};
    use crate::sim::SimTime;
    let states = [
        S::Waiting { reason: "" },
        S::Waiting {
            reason: "CrashLoopBackOff",
        },
        S::Running {
            started_at: SimTime(7),
        },
        S::Terminated {
            exit_code: -1,
            reason: "Error",
            started_at: None,
            finished_at: Some(SimTime(9)),
        },
        S::Terminated {
            exit_code: 0,
            reason: "Completed",
            started_at: Some(SimTime(3)),
            finished_at: None,
        },
    ];
    let mut out = Vec::new();
    for (i, state) in states.iter().enumerate() {
        for last_state in [None, Some(states[(i + 3) % states.len()].clone())] {
            for container_id in [None, Some(ContainerId(i as u32))] {
                out.push(ApiContainerStatus {
                    name: Arc::from(["app", "sidecar", "a-long-container-name"][i % 3]),
                    state: state.clone(),
                    last_state: last_state.clone(),
                    restart_count: i as u32,
                    ready: i % 2 == 0,
                    started: i % 3 == 0,
                    container_id,
                });
            }
        }
    }
    out
}

#[test]
fn statuses_hash_as_derived() {
    use crate::model::{
        ApiPodStatus, ConditionStatus, Conditions, InitStatuses, PodCondition, PodConditionType,
    };
    use crate::sim::SimTime;
    let cs = container_statuses();
    let conditions = [
        Conditions::default(),
        Conditions::from_vec(vec![
            PodCondition::new(PodConditionType::Ready, ConditionStatus::True),
            PodCondition::new(
                PodConditionType::Other(Arc::from("example.com/gate")),
                ConditionStatus::False,
            ),
        ]),
    ];
    let mut statuses = Vec::new();
    for (i, phase) in [PodPhase::Pending, PodPhase::Running, PodPhase::Failed]
        .into_iter()
        .enumerate()
    {
        for reason in [None, Some("Evicted".to_string())] {
            statuses.push(ApiPodStatus {
                phase,
                reason: reason.clone(),
                message: reason.as_ref().map(|r| format!("{r}: the node was low")),
                ready: i == 1,
                start_time: (i > 0).then_some(SimTime(i as u64)),
                containers: cs[i..i + 3 * i].to_vec(),
                conditions: conditions[i % 2].clone(),
                init_containers: InitStatuses(cs[cs.len() - i..].to_vec()),
            });
        }
    }
    statuses.push(ApiPodStatus::default());
    statuses.push(ApiPodStatus {
        containers: cs.clone(),
        init_containers: InitStatuses(cs.clone()),
        ..ApiPodStatus::default()
    });
    for uid in UIDS {
        for status in &statuses {
            same(&Transition::ApiStatusPatched {
                uid,
                of: PodUid(uid.0 ^ 1),
                status: Arc::new(status.clone()),
            });
            same(&Transition::ApiStatus {
                uid,
                phase: status.phase,
                reason: status.reason.clone(),
            });
        }
        for phase in [
            PodPhase::Pending,
            PodPhase::Running,
            PodPhase::Succeeded,
            PodPhase::Failed,
            PodPhase::Unknown,
        ] {
            same(&Transition::LocalStatus { uid, phase });
        }
    }
}

#[test]
fn workers_hosts_and_runtime_records_hash_as_derived() {
    use crate::model::{ContainerId, SandboxId};
    let kinds = [
        ProbeType::Liveness,
        ProbeType::Readiness,
        ProbeType::Startup,
    ];
    for uid in UIDS {
        for &what in WorkerStep::ALL {
            same(&Transition::Worker { uid, what });
        }
        for &what in HostOp::ALL {
            same(&Transition::Host { uid, what });
        }
        for &step in SyncStepKind::ALL {
            same(&Transition::SyncStep { uid, step });
        }
        for &op in ConfigOpKind::ALL {
            same(&Transition::ConfigOp { uid, op });
        }
        for &by in RemovedBy::ALL {
            same(&Transition::ApiRemoved { uid, by });
        }
        for grace in [0, 30, -1, i64::MAX] {
            same(&Transition::ApiDeleteRequested { uid, grace });
        }
        for n in [0, 5, u32::MAX] {
            same(&Transition::SandboxReady {
                uid,
                id: SandboxId(n),
            });
            same(&Transition::SandboxStopped {
                uid,
                id: SandboxId(n),
            });
            let id = ContainerId(n);
            for name in ["", "app", "sidecar", "a-long-container-name"] {
                same(&Transition::ContainerRunning {
                    uid,
                    id,
                    name: name.to_string(),
                });
            }
            for &signal in ProcessSignal::ALL {
                same(&Transition::Signal { uid, id, signal });
            }
            for code in [0, 1, 137, -1, i32::MIN] {
                for reason in ["", "Error", "Completed", "OOMKilled"] {
                    same(&Transition::ContainerExited {
                        uid,
                        id,
                        code,
                        reason,
                    });
                }
            }
            for kind in kinds {
                for &result in ProbeCached::ALL {
                    same(&Transition::ProbeResult {
                        uid,
                        id,
                        kind,
                        result,
                    });
                }
            }
        }
        for kind in kinds {
            for &what in ProbeWorkerStep::ALL {
                for container in ["", "app", "a-long-container-name"] {
                    same(&Transition::ProbeWorker {
                        uid,
                        container: Arc::from(container),
                        kind,
                        what,
                    });
                }
            }
        }
    }
}
