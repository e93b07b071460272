use super::*;
use crate::model::{CriError, CriFailed, ProbeType, RestartPolicy};
use crate::oracle::testkit::spec;

const U: PodUid = PodUid(7);

/// One transition of every kind a pod's ring keeps, with edge values.
fn samples() -> Vec<Transition> {
    use Transition as T;
    let c: Arc<str> = Arc::from("side-car");
    let mut v = vec![
        T::ApiCreated {
            uid: U,
            name: "web-1".into(),
            spec: spec("web-1", RestartPolicy::Always),
            static_pod: false,
            mirror_of: None,
        },
        T::ApiCreated {
            uid: U,
            name: "other-name".into(),
            spec: spec("web-1", RestartPolicy::Always),
            static_pod: true,
            mirror_of: Some(PodUid(3)),
        },
        T::ApiForceDeleted { uid: U },
        T::ApiConditionSet {
            uid: U,
            condition: Box::new(PodCondition::new(
                PodConditionType::parse("example.com/lb-ready"),
                ConditionStatus::False,
            )),
        },
        T::ApiConditionSet {
            uid: U,
            condition: Box::new(PodCondition::new(
                PodConditionType::Ready,
                ConditionStatus::True,
            )),
        },
        T::ApiStatus {
            uid: U,
            phase: PodPhase::Failed,
            reason: Some("Evicted".into()),
        },
        T::ApiStatus {
            uid: U,
            phase: PodPhase::Running,
            reason: None,
        },
        T::CriEnd {
            uid: U,
            call: CriOp::StartContainer,
            target: u32::MAX,
            error: Some(CriFailure::Failed(CriFailed::SandboxNotReady)),
        },
        T::CriEnd {
            uid: U,
            call: CriOp::StopContainer,
            target: 3,
            error: Some(CriFailure::Code(CriError::Unavailable)),
        },
        T::CriEnd {
            uid: U,
            call: CriOp::RemoveContainer,
            target: 0,
            error: None,
        },
        T::SandboxReady {
            uid: U,
            id: SandboxId(4),
        },
        T::SandboxStopped {
            uid: U,
            id: SandboxId(4),
        },
        T::ContainerRunning {
            uid: U,
            id: ContainerId(9),
            name: "app".into(),
        },
        T::Signal {
            uid: U,
            id: ContainerId(9),
            signal: ProcessSignal::Sigterm,
        },
        T::ContainerExited {
            uid: U,
            id: ContainerId(9),
            code: -137,
            reason: "OOMKilled",
        },
        T::ContainerExited {
            uid: U,
            id: ContainerId(10),
            code: 0,
            reason: "Completed",
        },
        T::SyncEnd {
            uid: U,
            kind: SyncKind::ALL[0],
            error: Some("failed to \"StartContainer\" for \"app\"".into()),
        },
        T::SyncEnd {
            uid: U,
            kind: SyncKind::ALL[1],
            error: None,
        },
        T::LocalStatus {
            uid: U,
            phase: PodPhase::Succeeded,
        },
        T::LocalStatusDropped {
            uid: U,
            now_of: PodUid(7),
        },
        T::ProbeWorker {
            uid: U,
            container: c.clone(),
            kind: ProbeType::Readiness,
            what: ProbeWorkerStep::ALL[0],
        },
        T::Probe {
            uid: U,
            container: c,
            kind: ProbeType::Liveness,
            result: ProbeVerdict::ALL[1],
        },
        T::ProbeResult {
            uid: U,
            id: ContainerId(9),
            kind: ProbeType::Startup,
            result: ProbeCached::ALL[0],
        },
        T::ApiStatusPatched {
            uid: PodUid(8),
            of: U,
            status: Arc::new(ApiPodStatus {
                phase: PodPhase::Pending,
                ready: true,
                reason: Some("not displayed".into()),
                ..Default::default()
            }),
        },
    ];
    v.extend(varied());
    v
}

/// Edge values, and every word of the pod's vocabulary.
fn varied() -> Vec<Transition> {
    use Transition as T;
    let mut v = Vec::new();
    for g in [i64::MIN, -1, 0, 30, i64::MAX] {
        v.push(T::ApiDeleteRequested { uid: U, grace: g });
        v.push(T::Evict {
            uid: U,
            signal: EvictionSignal::ALL[0],
            grace: g,
        });
        v.push(T::SyncBegin {
            uid: U,
            kind: SyncKind::ALL[1],
            grace: Some(g),
        });
        v.push(T::CriBegin {
            uid: U,
            call: CriOp::StopContainer,
            target: 12,
            timeout_s: Some(g),
        });
    }
    v.push(T::SyncBegin {
        uid: U,
        kind: SyncKind::ALL[0],
        grace: None,
    });
    v.push(T::CriBegin {
        uid: U,
        call: CriOp::RunPodSandbox,
        target: 1,
        timeout_s: None,
    });
    for ch in [0, 1, u64::MAX] {
        for what in KillPodNowStep::ALL {
            for evict in [false, true] {
                v.push(T::KillPodNow {
                    uid: U,
                    ch,
                    what: *what,
                    evict,
                });
            }
        }
    }
    v.extend(
        RemovedBy::ALL
            .iter()
            .map(|&by| T::ApiRemoved { uid: U, by }),
    );
    v.extend(
        WatchDelivery::ALL
            .iter()
            .map(|&kind| T::WatchDelivered { uid: U, kind }),
    );
    v.extend(HostOp::ALL.iter().map(|&what| T::Host { uid: U, what }));
    v.extend(
        RejectReason::ALL
            .iter()
            .map(|&reason| T::PodRejected { uid: U, reason }),
    );
    v.extend(
        EvictionStep::ALL
            .iter()
            .map(|&what| T::Eviction { uid: U, what }),
    );
    v.extend(
        ConfigOpKind::ALL
            .iter()
            .map(|&op| T::ConfigOp { uid: U, op }),
    );
    v.extend(
        WorkerStep::ALL
            .iter()
            .map(|&what| T::Worker { uid: U, what }),
    );
    v.extend(NoteKind::ALL.iter().map(|&what| T::Note { uid: U, what }));
    v.extend(
        SyncStepKind::ALL
            .iter()
            .map(|&step| T::SyncStep { uid: U, step }),
    );
    for &ty in UpdateType::ALL {
        for runtime_only in [false, true] {
            v.push(T::UpdatePod {
                uid: U,
                ty,
                runtime_only,
            });
        }
    }
    v
}

#[test]
fn a_record_renders_as_its_transition() {
    let mut syms = Syms::default();
    for tr in samples() {
        let rec = Rec::of(&tr, &mut syms).unwrap_or_else(|| panic!("no record of {tr:?}"));
        assert_eq!(rec.render(U, "web-1", &syms), tr.to_string(), "{tr:?}");
    }
    // Strings are kept once however often they occur.
    let before = syms.texts.len();
    for tr in samples() {
        Rec::of(&tr, &mut syms);
    }
    assert_eq!(syms.texts.len(), before);
}

#[test]
fn node_transitions_have_no_record() {
    let mut syms = Syms::default();
    assert_eq!(Rec::of(&Transition::Housekeeping, &mut syms), None);
    assert_eq!(
        Rec::of(&Transition::StaticManifestRemoved { uid: U }, &mut syms),
        None
    );
}

#[test]
fn a_ring_keeps_the_last_records_oldest_first() {
    let mut r = Rings::new(3, 0);
    let rec = |i: u32| Rec::SandboxReady(SandboxId(i));
    assert_eq!(r.of(U).count(), 0);
    r.push(U, SimTime(1), rec(1));
    r.push(U, SimTime(2), rec(2));
    assert_eq!(
        r.of(U).collect::<Vec<_>>(),
        vec![(SimTime(1), rec(1)), (SimTime(2), rec(2))]
    );
    for i in 3..=7 {
        r.push(U, SimTime(u64::from(i)), rec(i));
    }
    r.push(PodUid(2), SimTime(9), rec(99));
    assert_eq!(
        r.of(U).collect::<Vec<_>>(),
        vec![
            (SimTime(5), rec(5)),
            (SimTime(6), rec(6)),
            (SimTime(7), rec(7))
        ]
    );
    assert_eq!(
        r.of(PodUid(2)).collect::<Vec<_>>(),
        vec![(SimTime(9), rec(99))]
    );
    assert_eq!(r.of(PodUid(1)).count(), 0);
    assert_eq!(r.of(PodUid(100)).count(), 0);
}

/// Rings without slots keep no record but know, as rings with slots do, which pods have
/// their place: a push makes it, and the pushes that only try say whether it is there.
#[test]
fn unkept_rings_keep_no_record_and_know_their_pods() {
    let rec = Rec::SandboxReady(SandboxId(1));
    for mut r in [Rings::new(3, 2), Rings::unkept(2)] {
        assert!(!r.try_push(U, SimTime(1), rec));
        assert!(!r.try_push_probe(U, SimTime(1), rec));
        r.push(U, SimTime(2), rec);
        assert!(r.try_push(U, SimTime(3), rec));
        assert!(r.try_push_probe(PodUid(2), SimTime(4), rec));
        assert!(!r.try_push(PodUid(8), SimTime(5), rec));
        let kept = r.of(U).count() + r.of(PodUid(2)).count();
        assert_eq!(kept, if r.kept() { 3 } else { 0 });
    }
    let mut node = NodeRing::<3>::unkept();
    node.push(SimTime(1), &Transition::Housekeeping);
    node.push_rec(SimTime(2), NodeRec::Relist(1));
    assert_eq!(node.iter().count(), 0);
}

#[test]
fn per_pod_records_stay_small() {
    use crate::oracle::facts::{ColdFacts, PodFacts};
    // 328: a pod's first ready sandbox and first container instance are held in place
    // (`Few`), 40 bytes more than three empty `Vec`s but two or three heap blocks fewer.
    assert!(std::mem::size_of::<PodFacts>() <= 328);
    assert!(std::mem::size_of::<ColdFacts>() <= 152);
}

#[test]
fn strings_are_interned_once_each_in_order_of_first_sight() {
    let mut syms = Syms::default();
    let words: Vec<String> = (0..200).map(|i| format!("container-{i}")).collect();
    let ids: Vec<Sym> = words.iter().map(|w| syms.intern(w)).collect();
    for (i, (w, id)) in words.iter().zip(&ids).enumerate() {
        assert_eq!(*id, Sym(i as u32));
        assert_eq!(syms.intern(w), *id, "{w}");
        assert_eq!(syms.text(*id), w);
    }
    assert_eq!(syms.intern(""), Sym(200));
    assert_eq!(syms.texts.len(), 201);
}

#[test]
fn shared_strings_get_the_ids_intern_gives() {
    let mut syms = Syms::default();
    let app = syms.intern("app");
    // More shared copies than hint slots: every copy, seen twice, finds its text's id
    // (from its hint, or again through the table when another copy took its slot).
    let copies: Vec<Arc<str>> = (0..2 * HINTS)
        .map(|i| Arc::from(if i % 3 == 0 { "app" } else { "side-car" }))
        .collect();
    for _ in 0..2 {
        for (i, c) in copies.iter().enumerate() {
            let id = syms.intern_shared(c);
            assert_eq!(syms.text(id), &**c, "copy {i}");
            if i % 3 == 0 {
                assert_eq!(id, app);
            }
        }
    }
    assert_eq!(syms.texts.len(), 2);
    // A hint holds its string: a dropped copy's address is not given to another text
    // while the hint can still answer for it.
    let gone: Arc<str> = Arc::from("gone-1");
    let id = syms.intern_shared(&gone);
    drop(gone);
    let other: Arc<str> = Arc::from("gone-2");
    assert_ne!(syms.intern_shared(&other), id);
    let again = syms.intern_shared(&other);
    assert_eq!(syms.text(again), "gone-2");
    // The last text again, and the one before it.
    let a = syms.intern("an error: image pull failed");
    let b = syms.intern("another error");
    assert_eq!(syms.intern("another error"), b);
    assert_eq!(syms.intern("an error: image pull failed"), a);
    assert_ne!(a, b);
}

#[test]
fn an_oracle_switched_off_releases_its_state() {
    // A run with `--no-oracle` drops the (empty) per-pod state at the end too.
    let mut o = crate::oracle::Oracle::default();
    o.release_pod_state();
    let mut o = crate::oracle::Oracle::for_pods(5000, true);
    o.release_pod_state();
    assert_eq!(o.findings().len(), 0);
}

#[test]
fn two_shared_strings_of_one_hint_set_are_both_hinted() {
    let mut syms = Syms::default();
    // Shared copies until three pick the same set (all kept alive: distinct addresses).
    let mut copies: Vec<Arc<str>> = Vec::new();
    let same = loop {
        let c: Arc<str> = Arc::from(format!("c{}", copies.len()).as_str());
        copies.push(c);
        let last = copies.last().expect("just pushed");
        let set = hint_set(last);
        let mates: Vec<usize> = (0..copies.len())
            .filter(|i| hint_set(&copies[*i]) == set)
            .collect();
        if mates.len() == 3 {
            break mates;
        }
    };
    let (a, b, c) = (&copies[same[0]], &copies[same[1]], &copies[same[2]]);
    let ia = syms.intern_shared(a);
    let ib = syms.intern_shared(b);
    // Both stay found without a change to the table, in either order.
    for _ in 0..3 {
        assert_eq!(syms.hinted(a), Some(ia));
        assert_eq!(syms.hinted(b), Some(ib));
    }
    // A third takes the slot of the one interned least recently (`a`).
    let ic = syms.intern_shared(c);
    assert_eq!(syms.hinted(c), Some(ic));
    assert_eq!(syms.hinted(b), Some(ib));
    assert_eq!(syms.hinted(a), None);
    // Found again through the table, with its id.
    assert_eq!(syms.intern_shared(a), ia);
    assert_eq!(syms.text(ia), &**a);
}

#[test]
fn the_node_ring_keeps_the_last_records_oldest_first() {
    use Transition as T;
    // Against a queue that drops its front when full, at every length up to three laps.
    const N: usize = 5;
    let mut ring = NodeRing::<N>::default();
    let mut reference = std::collections::VecDeque::new();
    for i in 0..3 * N as u64 {
        let tr = match i % 3 {
            0 => T::Relist { changed: i as u32 },
            1 => T::Housekeeping,
            _ => T::KubeletProcess {
                what: crate::model::ProcessEvent::Started,
                epoch: i as u32,
            },
        };
        ring.push(SimTime(i), &tr);
        if reference.len() == N {
            reference.pop_front();
        }
        reference.push_back((SimTime(i), tr));
        let got: Vec<String> = ring.iter().map(|(at, r)| format!("{at:?} {r}")).collect();
        let want: Vec<String> = reference
            .iter()
            .map(|(at, tr)| format!("{at:?} {tr}"))
            .collect();
        assert_eq!(got, want, "after {} pushes", i + 1);
    }
}
