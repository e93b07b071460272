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

/// A probe of pod `uid`'s container shared as `name`, succeeding.
fn probe_of(uid: PodUid, name: &Arc<str>) -> Transition {
    Transition::Probe {
        uid,
        container: name.clone(),
        kind: ProbeType::Liveness,
        result: ProbeVerdict::Success,
    }
}

#[test]
fn probes_of_a_running_container_take_the_quiet_path() {
    // The first probe interns the name and fills S9's cache; the next ones are quiet.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).probe(P, "liveness");
    let app = f.app.clone();
    let name =
        f.o.facts
            .syms
            .hinted(&app)
            .expect("interned by the first probe");
    assert_eq!(
        f.o.checkers.quiet_probe(P, &app, ProbeType::Liveness),
        Some(name)
    );
    // Another allocation of the same text is not recognised by its address.
    assert_eq!(
        f.o.checkers
            .quiet_probe(P, &Arc::from("app"), ProbeType::Liveness),
        None
    );
    f.probe(P, "readiness").probe(P, "liveness");
    assert_eq!(f.o.facts.rings.of(P).count(), RING);
    assert!(f.o.findings().is_empty());
    // Once the container exited, the next probe takes the full path (and is a finding:
    // a success with no instance running).
    f.exited(P, 1, 0);
    assert_eq!(f.o.checkers.quiet_probe(P, &app, ProbeType::Liveness), None);
    f.probe(P, "liveness");
    assert!(f.has(Inv::ProbesOnlyRunningContainers));
}

/// Each probe kind's worker holds its own copy of the container's name: S9's cache keeps
/// the address of each kind's copy, so the liveness and readiness probes of one container
/// are both quiet, and a copy is recognised only for its own kind.
#[test]
fn each_probe_kind_is_recognised_by_its_own_copy_of_the_name() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always);
    let live: Arc<str> = Arc::from("app");
    let ready: Arc<str> = Arc::from("app");
    let probe = |container: &Arc<str>, kind| Transition::Probe {
        uid: P,
        container: container.clone(),
        kind,
        result: ProbeVerdict::Success,
    };
    f.tr(probe(&live, ProbeType::Liveness))
        .tr(probe(&ready, ProbeType::Readiness));
    let name = f.o.facts.syms.find("app").expect("interned");
    let quiet = |f: &Feed, c: &Arc<str>, kind| f.o.checkers.quiet_probe(P, c, kind);
    assert_eq!(quiet(&f, &live, ProbeType::Liveness), Some(name));
    assert_eq!(quiet(&f, &ready, ProbeType::Readiness), Some(name));
    assert_eq!(quiet(&f, &live, ProbeType::Readiness), None);
    assert_eq!(quiet(&f, &ready, ProbeType::Startup), None);
    f.tr(probe(&live, ProbeType::Liveness))
        .tr(probe(&ready, ProbeType::Readiness));
    assert!(f.o.findings().is_empty());
}

/// The quiet-probe path's debug check: with S9's cache left stale by a container's exit
/// (the cache's update skipped through a test hook), the next probe of that container
/// would be taken as quiet; the check recomputes from the facts and panics.
#[cfg(debug_assertions)]
#[test]
#[should_panic(expected = "no instance of it runs")]
fn a_stale_quiet_probe_cache_is_caught_in_debug_builds() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).probe(P, "liveness");
    f.o.checkers.probes_mut().skip_exit_update = true;
    f.exited(P, 1, 0).probe(P, "liveness");
}

/// S9 of a container that never ran, probed after another container of the pod that
/// runs: the cache of the running one must not let the other's probe through unchecked
/// (round 5's break experiment: `Probes::quiet` ignoring the running container).
#[test]
fn a_probe_of_a_container_that_never_ran_is_checked_after_one_that_runs() {
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always).probe(P, "liveness");
    assert!(!f.has(Inv::ProbesOnlyRunningContainers));
    // The side container's worker started (its name interned and hinted), never its
    // container.
    let side: Arc<str> = Arc::from("side");
    f.tr(Transition::ProbeWorker {
        uid: P,
        container: side.clone(),
        kind: ProbeType::Liveness,
        what: ProbeWorkerStep::Started,
    });
    assert!(f.o.facts.syms.hinted(&side).is_some());
    f.tr(probe_of(P, &side));
    assert!(f.has(Inv::ProbesOnlyRunningContainers));
    let x = &f.o.findings()[0];
    assert!(
        x.message.contains("container side, which has never run"),
        "{}",
        x.message
    );
}

#[test]
fn sync_errors_keep_their_texts_in_the_history() {
    // Two pods failing their syncs with texts that change and come back, interleaved: the
    // per-pod hint of the last error must give each its own text.
    let mut f = Feed::new();
    f.running_pod(P, RestartPolicy::Always)
        .running_pod(Q, RestartPolicy::Always);
    let texts = [
        "back-off 10s",
        "back-off 20s",
        "back-off 20s",
        "other",
        "back-off 10s",
    ];
    for (i, e) in texts.iter().enumerate() {
        for (uid, e) in [(P, e.to_string()), (Q, format!("{} of q", texts[4 - i]))] {
            f.wait(10).tr(Transition::SyncEnd {
                uid,
                kind: SyncKind::SyncPod,
                error: Some(e),
            });
        }
    }
    for (uid, name, want) in [
        (P, "pod1", texts.map(|e| e.to_string())),
        (Q, "pod2", texts.map(|e| format!("{e} of q"))),
    ] {
        let o = &f.o.facts;
        let lines: Vec<String> = o
            .rings
            .of(uid)
            .map(|(_, r)| r.render(uid, name, &o.syms))
            .collect();
        let last: Vec<&String> = lines.iter().rev().take(texts.len()).collect();
        let want: Vec<String> = if uid == P {
            want.iter().rev().cloned().collect()
        } else {
            want.to_vec()
        };
        for (line, e) in last.iter().zip(&want) {
            assert!(
                line.ends_with(&format!("SyncPod error: {e}")),
                "{line} / {e}"
            );
        }
    }
}

#[test]
fn a_node_finding_quotes_the_nodes_last_transitions_oldest_first() {
    // More relists and housekeepings than the node's ring holds, then a shutdown whose
    // group starts late: the node-level finding lists the last `RING` of them as the trace
    // prints them.
    let mut f = Feed::new();
    let node = node_finding(&mut f);
    let x =
        f.o.findings()
            .iter()
            .find(|x| x.pod.is_empty())
            .expect("a node-level finding");
    let quoted = x
        .message
        .split_once("\n    last node transitions:")
        .expect("the node's history")
        .1;
    let want: String = node[node.len() - RING..]
        .iter()
        .map(|(at, tr)| format!("\n      {}  {tr}", super::findings::t(*at)))
        .collect();
    assert_eq!(quoted, want);
}

/// An oracle that keeps no history makes the same findings, pod and node ones, each
/// message without the transitions.
#[test]
fn an_oracle_without_history_makes_the_same_findings() {
    let feeds = |f: &mut Feed| {
        f.running_pod(P, RestartPolicy::Always)
            .terminate(P)
            .cri(P, "StartContainer");
        node_finding(f);
    };
    let mut kept = Feed::new();
    feeds(&mut kept);
    let mut bare = Feed::new();
    bare.o = Oracle::for_pods(4, false);
    assert!(kept.o.keeps_history() && !bare.o.keeps_history());
    feeds(&mut bare);
    let (k, b) = (kept.o.findings(), bare.o.findings());
    assert!(k.len() >= 2 && k.iter().any(|x| x.pod.is_empty()), "{k:?}");
    assert_eq!(k.len(), b.len());
    for (k, b) in k.iter().zip(b) {
        assert_eq!((k.invariant, &k.pod, k.at), (b.invariant, &b.pod, b.at));
        assert!(k.message.len() > b.message.len() && k.message.starts_with(&b.message));
        assert!(!b.message.contains("\n    last "), "{}", b.message);
    }
}

/// Feeds more relists and housekeepings than the node's ring holds, then a shutdown whose
/// group starts late, to the end: a node-level finding. The node's transitions fed, with
/// their times.
fn node_finding(f: &mut Feed) -> Vec<(SimTime, String)> {
    let mut node = Vec::new();
    for i in 0..RING as u32 + 7 {
        let tr = if i % 4 == 3 {
            Transition::Housekeeping
        } else {
            Transition::Relist { changed: i }
        };
        node.push((f.now, tr.to_string()));
        f.wait(100).tr(tr);
        node.last_mut().expect("pushed").0 = f.now;
    }
    let shutdown = Transition::Shutdown {
        what: gns("PrepareForShutdown(true)"),
    };
    node.push((f.now, shutdown.to_string()));
    f.tr(shutdown);
    let power_off = Transition::PowerOff {
        cause: PowerOffCause::InhibitDelayExpired,
        alive: 1,
    };
    f.wait(15_000);
    node.push((f.now, power_off.to_string()));
    f.tr(power_off);
    f.finish();
    node
}
