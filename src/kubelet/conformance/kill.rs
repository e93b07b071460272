//! `killPodNow`, `calculateEffectiveGracePeriod`, and `UpdatePod`'s handling of runtime-only
//! kills of known pods.

use super::*;

/// Mirrors upstream `TestKillPodNowFunc`: `killPodNow` with grace override 0 and a status
/// function; the kill completes (its channel is closed) and the pod runs exactly
/// [SyncTerminatingPod, SyncTerminatedPod], with the effective grace of 1. Upstream's test
/// pod has no terminationGracePeriodSeconds: v1.31 reads the override of 0 as unset, and
/// with nothing to fall back to the grace is floored to 1.
#[test]
fn test_kill_pod_now_func() {
    let mut w = world();
    let mut pod = (*p(1001).name("test").build()).clone();
    let mut spec = (*pod.spec).clone();
    spec.termination_grace_period_seconds = None;
    pod.spec = Arc::new(spec);
    let pod = Arc::new(pod);
    send(
        &mut w,
        kill_opts(
            pod,
            KillPodOptions {
                completed: Some(7),
                evict: false,
                status_fn: Some(StatusFn::SetTerminal {
                    phase: PodPhase::Failed,
                    reason: "reason".into(),
                    message: "message".into(),
                    disruption_target: false,
                }),
                grace_override: Some(0),
            },
        ),
    );
    assert!(w.kubelet.pw.closed_channels.is_empty(), "closed too early");
    drain(&mut w);
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&["SyncTerminatingPod grace=1", "SyncTerminatedPod"])
    );
    assert_eq!(w.kubelet.pw.closed_channels, vec![7]);
    let s = st(&w, uid(1001));
    assert!(s.finished && s.grace_period == 1);
    let cached = &w.kubelet.status.statuses[&uid(1001)].status;
    assert_eq!(cached.phase, PodPhase::Failed);
    assert_eq!(cached.reason.as_deref(), Some("reason"));
    assert_eq!(cached.message.as_deref(), Some("message"));
}

/// `killPodNow`'s caller stops waiting when the channel closes (the timeout timer is
/// cancelled), or, for a pod the workers already finished (the channel is never closed),
/// after `max(10 s, 1.5 g)` with an `ExceededGracePeriod` event.
#[test]
fn test_kill_pod_now_wait_ends_on_close_or_timeout() {
    let mut w = world();
    let pod = p(1001).name("test").build();
    let status_fn = Some(StatusFn::FailedUnlessSucceeded {
        reason: "Terminated".into(),
        message: "m".into(),
        disruption_target: false,
    });
    let ch = w.kubelet_do(|k, ctx| k.kill_pod_now(ctx, pod.clone(), false, Some(4), status_fn));
    assert!(w.kubelet.pw.kill_waiters.contains_key(&ch));
    drain(&mut w);
    assert_eq!(w.kubelet.pw.closed_channels, vec![ch]);
    assert!(w.kubelet.pw.kill_waiters.is_empty(), "waiter released");
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&["SyncTerminatingPod grace=4", "SyncTerminatedPod"])
    );
    let cached = &w.kubelet.status.statuses[&uid(1001)].status;
    assert_eq!(cached.phase, PodPhase::Failed);
    assert_eq!(cached.reason.as_deref(), Some("Terminated"));
    // The worker is finished: UpdatePod ignores the kill, the channel stays open, and the
    // caller times out after max(10 s, 1.5 x 4 s) = 10 s.
    let start = w.sim.now();
    let ch2 = w.kubelet_do(|k, ctx| k.kill_pod_now(ctx, pod.clone(), false, Some(4), None));
    w.run_until(start + Dur(Dur::secs(10).0 - 1));
    assert!(
        w.kubelet.pw.kill_waiters.contains_key(&ch2),
        "still waiting"
    );
    drain(&mut w);
    assert!(w.kubelet.pw.kill_waiters.is_empty());
    assert!(!w.kubelet.pw.closed_channels.contains(&ch2));
    let timed_out: Vec<_> = w
        .trace
        .records()
        .iter()
        .filter(|r| r.text.contains("ExceededGracePeriod"))
        .map(|r| r.at)
        .collect();
    assert_eq!(timed_out, [start + Dur::secs(10)]);
}

/// Mirrors upstream `Test_calculateEffectiveGracePeriod`.
#[test]
fn test_calculate_effective_grace_period() {
    // (desc, spec TGPS, pod DGPS, kill override, expected)
    type Case = (&'static str, Option<i64>, Option<i64>, Option<i64>, i64);
    let cases: [Case; 5] = [
        (
            "use termination grace period from the spec when no overrides",
            Some(30),
            None,
            None,
            30,
        ),
        (
            "use pod DeletionGracePeriodSeconds when set",
            Some(30),
            Some(5),
            None,
            5,
        ),
        (
            "use grace period override when set",
            Some(30),
            Some(5),
            Some(2),
            2,
        ),
        (
            "use 1 when pod DeletionGracePeriodSeconds is zero",
            Some(30),
            Some(0),
            None,
            1,
        ),
        (
            "use 1 when grace period override is zero",
            Some(30),
            Some(5),
            Some(0),
            1,
        ),
    ];
    for (desc, tgps, dgps, over, want) in cases {
        let base = p(1).build();
        let pod = ApiPod {
            spec: Arc::new(PodSpec {
                termination_grace_period_seconds: tgps,
                ..(*base.spec).clone()
            }),
            deletion_grace_period_seconds: dgps,
            ..(*base).clone()
        };
        let kill = KillPodOptions {
            grace_override: over,
            ..Default::default()
        };
        let (got, _) = PodWorkers::effective_grace(0, Some(&pod), Some(&kill));
        assert_eq!(got, want, "{desc}");
    }
}

// ---------------------------------------------------------------------------------------
// UpdatePod's handling of runtime-only kills of known pods (no upstream test case)
// ---------------------------------------------------------------------------------------

/// Upstream `UpdatePod` keeps `isRuntimePod` true after substituting the known pod for a
/// runtime-only kill, so the `case isRuntimePod:` branch marks the pod deleted (an orphan).
#[test]
fn test_runtime_kill_of_known_pod_marks_deleted() {
    let mut w = world();
    let pod = p(1001).build();
    update(&mut w, opts(UpdateType::Create, pod.clone()));
    let mut kill = runtime_opts(UpdateType::Kill, running_pod(1001, "running-pod"));
    kill.kill = Some(Box::new(KillPodOptions {
        grace_override: Some(1),
        ..Default::default()
    }));
    update(&mut w, kill);
    let s = st(&w, uid(1001));
    assert!(s.observed_runtime && s.is_terminated() && s.finished);
    assert!(
        s.deleted,
        "a runtime-only kill tears the pod down as deleted"
    );
    assert_eq!(active_pod(s), &pod);
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&["SyncPod", "SyncTerminatingPod grace=1", "SyncTerminatedPod"])
    );
    assert!(w.kubelet.pw.should_pod_content_be_removed(uid(1001)));
}

/// Upstream `UpdatePod` ignores a runtime-only kill of a terminated (not yet finished) pod
/// even when it knows the pod's spec (`case status.IsTerminated(): if isRuntimePod {return}`).
#[test]
fn test_runtime_kill_of_known_terminated_pod_is_ignored() {
    let mut w = world();
    let pod = p(1001).build();
    let mut s = PodSyncStatus::new("running-pod_ns".into(), w.sim.now());
    s.started_at = Some(w.sim.now());
    s.terminating_at = Some(w.sim.now());
    s.terminated_at = Some(w.sim.now());
    s.started_terminating = true;
    s.grace_period = 30;
    s.active_update = Some(opts(UpdateType::Sync, pod));
    w.kubelet.pw.records.insert(uid(1001), Box::new(s));
    send(
        &mut w,
        runtime_opts(UpdateType::Kill, running_pod(1001, "running-pod")),
    );
    let s = st(&w, uid(1001));
    assert!(
        s.pending_update.is_none(),
        "the runtime kill must be ignored"
    );
    assert!(!s.working);
}

/// Upstream `UpdatePod` cancels the context of the in-flight sync when an update shortens
/// the grace period, but in v1.31 `SyncTerminatingPod` ignores that context (it runs on a
/// background context, upstream TODO 113606) and the runtime's `StopContainer` keeps its
/// old timeout. So the shorter grace is recorded in the pod worker but does not interrupt
/// the kill in flight: the container is SIGKILLed when the first grace (30 s) runs out and
/// no second `SyncTerminatingPod` runs (upstream `pod_workers.go` `UpdatePod`, `kubelet.go`
/// `SyncTerminatingPod`).
#[test]
fn test_grace_shortening_does_not_interrupt_in_flight_termination() {
    let yaml = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata:
  name: conformance-shorten
spec:
  horizon: 2h
  pods:
    - template:
        metadata: {name: stubborn}
        spec:
          terminationGracePeriodSeconds: 30
          containers:
            - {name: app, image: img:1}
      behaviour:
        app: {onSigterm: ignore}
  timeline:
    - {at: 5s, deletePod: {pod: stubborn}}
    - {at: 8s, deletePod: {pod: stubborn, gracePeriodSeconds: 2}}
";
    let mut w = world_from(yaml);
    let u = w.api.uid_by_name("default", "stubborn").expect("created");
    w.run_until(SimTime(Dur::secs(60).0));
    let begins: Vec<(SimTime, String)> = w
        .trace
        .records()
        .iter()
        .filter_map(|r| {
            let rest = r.text.strip_prefix(&format!("sync {u} "))?;
            let (kind, tail) = rest.split_once(" begin")?;
            Some((r.at, format!("{kind}{tail}")))
        })
        .collect();
    let at = |what: &str| {
        begins
            .iter()
            .find(|(_, s)| s == what)
            .map(|(t, _)| *t)
            .unwrap_or_else(|| panic!("no {what} in {begins:?}"))
    };
    let long = at("SyncTerminatingPod grace=30");
    assert!(long < SimTime(Dur::secs(6).0), "{begins:?}");
    assert!(
        !begins
            .iter()
            .any(|(_, s)| s == "SyncTerminatingPod grace=2"),
        "the in-flight kill was interrupted: {begins:?}"
    );
    // The shorter grace is recorded (only-shrinking) for any later attempt.
    assert_eq!(w.kubelet.pw.records[&u].grace_period, 2);
    let done = at("SyncTerminatedPod");
    assert!(done > long + Dur::secs(30), "{begins:?}");
}
