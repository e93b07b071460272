//! `TestUpdatePod` and the other `TestUpdatePod*` tests.

use super::*;

/// Mirrors upstream `TestUpdatePod`, case "a new pod is recorded and started".
#[test]
fn test_update_pod_new_pod_is_recorded_and_started() {
    let mut w = world();
    let pod = p(1001).build();
    update(&mut w, opts(UpdateType::Create, pod.clone()));
    let s = st(&w, uid(1001));
    assert_eq!(s.fullname, "running-pod_ns");
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            ..NONE
        }
    );
    assert_timestamps_ordered(s);
    let active = s.active_update.as_ref().expect("activeUpdate");
    assert_eq!(active.pod.as_ref(), Some(&pod));
    assert!(active.running_pod.is_none() && active.kill.is_none());
    assert!(s.pending_update.is_none());
    assert_eq!(syncs(&w, uid(1001)), v(&["SyncPod"]));
    assert!(!w.kubelet.pw.is_pod_known_terminated(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "a new pod is recorded and started unless it is a
/// duplicate of an existing terminating pod UID".
#[test]
fn test_update_pod_duplicate_create_of_terminating_uid_sets_restart_requested() {
    let mut w = world();
    let original = p(1001).build();
    update(&mut w, opts(UpdateType::Create, original.clone()));
    // The worker is held: the kill and the duplicate create arrive before it runs.
    send(&mut w, opts(UpdateType::Kill, original.clone()));
    let relabelled = p(1001).version(2).build();
    send(&mut w, opts(UpdateType::Create, relabelled));
    drain(&mut w);

    let s = st(&w, uid(1001));
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            terminating: true,
            terminated: true,
            grace: 30,
            started_terminating: true,
            finished: true,
            restart_requested: true,
            ..NONE
        }
    );
    assert_timestamps_ordered(s);
    // The create that arrived during termination was not applied.
    assert_eq!(active_pod(s), &original);
    assert_eq!(active_kill(s), Some((Some(30), false)));
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&[
            "SyncPod",
            "SyncTerminatingPod grace=30",
            "SyncTerminatedPod"
        ])
    );
    assert!(w.kubelet.pw.is_pod_known_terminated(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "a new pod is recorded and started and running pod
/// is ignored".
#[test]
fn test_update_pod_running_pod_field_ignored_when_pod_given() {
    let mut w = world();
    let pod = p(1001).build();
    let mut o = opts(UpdateType::Create, pod.clone());
    o.running_pod = Some(running_pod(1001, "orphaned-pod"));
    update(&mut w, o);
    let s = st(&w, uid(1001));
    assert_eq!(s.fullname, "running-pod_ns");
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            ..NONE
        }
    );
    let active = s.active_update.as_ref().expect("activeUpdate");
    assert_eq!(active.pod.as_ref(), Some(&pod));
    assert!(active.running_pod.is_none(), "RunningPod must be dropped");
    assert_eq!(syncs(&w, uid(1001)), v(&["SyncPod"]));
    assert!(!w.kubelet.pw.is_pod_known_terminated(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "a running pod is terminated when an update
/// contains a deletionTimestamp".
#[test]
fn test_update_pod_deletion_timestamp_terminates_with_deletion_grace() {
    let mut w = world();
    update(&mut w, opts(UpdateType::Create, p(1001).build()));
    let deleted = p(1001).deleted(15).version(2).build();
    update(&mut w, opts(UpdateType::Update, deleted.clone()));

    let s = st(&w, uid(1001));
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            terminating: true,
            terminated: true,
            grace: 15,
            started_terminating: true,
            deleted: true,
            finished: true,
            ..NONE
        }
    );
    assert_timestamps_ordered(s);
    assert_eq!(active_pod(s), &deleted);
    assert_eq!(active_kill(s), Some((Some(15), false)));
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&[
            "SyncPod",
            "SyncTerminatingPod grace=15",
            "SyncTerminatedPod"
        ])
    );
    assert!(w.kubelet.pw.is_pod_known_terminated(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "a running pod is terminated when an eviction is
/// requested".
#[test]
fn test_update_pod_eviction_terminates_with_spec_grace() {
    let mut w = world();
    let pod = p(1001).build();
    update(&mut w, opts(UpdateType::Create, pod.clone()));
    update(
        &mut w,
        kill_opts(
            pod.clone(),
            KillPodOptions {
                evict: true,
                ..Default::default()
            },
        ),
    );

    let s = st(&w, uid(1001));
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            terminating: true,
            terminated: true,
            grace: 30,
            started_terminating: true,
            evicted: true,
            finished: true,
            ..NONE
        }
    );
    assert_timestamps_ordered(s);
    assert_eq!(active_pod(s), &pod);
    assert_eq!(active_kill(s), Some((Some(30), true)));
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&[
            "SyncPod",
            "SyncTerminatingPod grace=30",
            "SyncTerminatedPod"
        ])
    );
    assert!(w.kubelet.pw.is_pod_known_terminated(uid(1001)));
    assert!(w.kubelet.pw.should_pod_content_be_removed(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "a pod that is terminal and has never started
/// advances to finished if the runtime has a cached terminal state". The PLEG cache has no
/// entry for the pod, which (as in upstream's real `cache.Get`) reads as an empty status
/// without error: nothing runs, so the pod is recorded as already terminated.
#[test]
fn test_update_pod_terminal_pod_with_cached_status_goes_straight_to_terminated() {
    let mut w = world();
    let pod = p(1001).name("done-pod").phase(PodPhase::Succeeded).build();
    send(&mut w, opts(UpdateType::Create, pod.clone()));

    // Before the worker runs.
    let s = st(&w, uid(1001));
    assert_eq!(s.fullname, "done-pod_ns");
    assert_eq!(
        flags(s),
        Flags {
            terminating: true,
            terminated: true,
            started_terminating: true,
            working: true,
            ..NONE
        }
    );
    assert_eq!(s.terminating_at, Some(s.synced_at));
    assert_eq!(s.terminated_at, Some(s.synced_at));
    let pending = s.pending_update.as_ref().expect("pendingUpdate");
    assert_eq!(pending.update_type, UpdateType::Create);
    assert_eq!(pending.pod.as_ref(), Some(&pod));
    assert!(pending.kill.is_none());

    drain(&mut w);
    let s = st(&w, uid(1001));
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            terminating: true,
            terminated: true,
            started_terminating: true,
            finished: true,
            ..NONE
        }
    );
    assert_eq!(active_pod(s), &pod);
    assert_eq!(active_kill(s), None);
    assert_eq!(syncs(&w, uid(1001)), v(&["SyncTerminatedPod"]));
    assert!(w.kubelet.pw.is_pod_known_terminated(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "a pod that is terminal and has never started must
/// be terminated if the runtime does not have a cached terminal state". Upstream's fake cache
/// answers NotFound; here the cache holds a running container (a kubelet restart: the workers
/// forgot the pod, the runtime still runs it, the API already says Succeeded).
#[test]
fn test_update_pod_terminal_pod_with_running_containers_is_terminated() {
    let mut w = world();
    update(
        &mut w,
        opts(UpdateType::Create, p(1001).name("done-pod").build()),
    );
    assert!(w
        .kubelet
        .pleg
        .cache_get(uid(1001))
        .is_ok_and(|c| c.has_running_container()));
    // The workers forget the pod; the runtime and the PLEG cache do not.
    w.kubelet.pw.records.remove(&uid(1001));
    let done = p(1001)
        .name("done-pod")
        .phase(PodPhase::Succeeded)
        .version(2)
        .build();
    send(&mut w, opts(UpdateType::Create, done.clone()));

    // Before the worker runs: terminating, not terminated.
    let s = st(&w, uid(1001));
    assert_eq!(
        flags(s),
        Flags {
            terminating: true,
            grace: 30,
            working: true,
            ..NONE
        }
    );
    assert_eq!(s.terminating_at, Some(s.synced_at));

    drain(&mut w);
    let s = st(&w, uid(1001));
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            terminating: true,
            terminated: true,
            grace: 30,
            started_terminating: true,
            finished: true,
            ..NONE
        }
    );
    assert_timestamps_ordered(s);
    assert_eq!(active_pod(s), &done);
    assert_eq!(active_kill(s), Some((Some(30), false)));
    let got = syncs(&w, uid(1001));
    assert_eq!(
        got[1..],
        v(&["SyncTerminatingPod grace=30", "SyncTerminatedPod"])[..],
        "{got:?}"
    );
    assert!(w.kubelet.pw.is_pod_known_terminated(uid(1001)));
    assert!(!w.runtime.running_pods().iter().any(|r| r.uid == uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "an orphaned running pod we have not seen is marked
/// terminating and advances to finished and then is removed".
#[test]
fn test_update_pod_orphaned_runtime_pod_is_terminated_and_removed() {
    let mut w = world();
    let rp = running_pod(1001, "orphaned-pod");
    send(&mut w, runtime_opts(UpdateType::Kill, rp.clone()));

    // Before the worker runs.
    let s = st(&w, uid(1001));
    assert_eq!(s.fullname, "orphaned-pod_ns");
    assert_eq!(
        flags(s),
        Flags {
            terminating: true,
            grace: 1,
            deleted: true,
            observed_runtime: true,
            working: true,
            ..NONE
        }
    );
    assert_eq!(s.terminating_at, Some(s.synced_at));
    let pending = s.pending_update.as_ref().expect("pendingUpdate");
    assert_eq!(pending.update_type, UpdateType::Kill);
    assert!(pending.pod.is_none());
    assert_eq!(pending.running_pod.as_ref(), Some(&rp));
    assert_eq!(
        pending.kill.as_ref().and_then(|k| k.grace_override),
        Some(1)
    );

    drain(&mut w);
    assert!(
        !w.kubelet.pw.records.contains_key(&uid(1001)),
        "a runtime-only pod is forgotten once terminated"
    );
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&["SyncTerminatingRuntimePod grace=1"])
    );
    assert!(!w.kubelet.pw.is_pod_known_terminated(uid(1001)));
}

/// Mirrors upstream `TestUpdatePod`, case "an orphaned running pod with a non-kill update
/// type does nothing".
#[test]
fn test_update_pod_orphaned_runtime_pod_non_kill_update_is_ignored() {
    let mut w = world();
    update(
        &mut w,
        runtime_opts(UpdateType::Create, running_pod(1001, "orphaned-pod")),
    );
    assert!(!w.kubelet.pw.records.contains_key(&uid(1001)));
    assert!(syncs(&w, uid(1001)).is_empty());
}

// ---------------------------------------------------------------------------------------
// Other TestUpdatePod* tests
// ---------------------------------------------------------------------------------------

/// Mirrors upstream `TestUpdatePodParallel`: UID j receives creates "0".."j" (here
/// resource versions 0..=j); intermediate updates may be coalesced, the newest never is.
#[test]
fn test_update_pod_parallel_newest_update_wins() {
    const N: u32 = 20;
    let mut w = world();
    for i in 0..N {
        w.kubelet_do(|k, ctx| {
            for j in i..N {
                let pod = p(1000 + j).version(u64::from(i)).build();
                k.update_pod(ctx, opts(UpdateType::Create, pod));
            }
        });
        // Let the workers interleave with the senders: some updates land while a sync is in
        // flight, others coalesce in the pending slot.
        let until = w.sim.now() + Dur::millis(u64::from(i % 4) * 7);
        w.run_until(until);
    }
    drain(&mut w);
    for j in 0..N {
        let u = uid(1000 + j);
        let n = syncs(&w, u).len();
        assert!(
            (1..=j as usize + 1).contains(&n),
            "pod {j} synced {n} times: {:?}",
            syncs(&w, u)
        );
        assert!(syncs(&w, u).iter().all(|s| s == "SyncPod"));
        let s = st(&w, u);
        assert!(s.pending_update.is_none() && !s.working);
        assert_eq!(
            active_pod(s).resource_version,
            u64::from(j),
            "the last sync of pod {j} must carry its newest update"
        );
    }
}

/// Mirrors upstream `TestUpdatePodForRuntimePod`.
#[test]
fn test_update_pod_for_runtime_pod() {
    let mut w = world();
    let rp = running_pod(1001, "1");
    // A runtime pod with a non-kill update type is ignored.
    update(&mut w, runtime_opts(UpdateType::Create, rp.clone()));
    assert!(syncs(&w, uid(1001)).is_empty());
    assert!(w.kubelet.pw.records.is_empty());
    // A kill of it runs SyncTerminatingRuntimePod only.
    update(&mut w, runtime_opts(UpdateType::Kill, rp));
    assert_eq!(
        syncs(&w, uid(1001)),
        v(&["SyncTerminatingRuntimePod grace=1"])
    );
}

/// Mirrors upstream `TestUpdatePodForTerminatedRuntimePod`.
#[test]
fn test_update_pod_for_terminated_runtime_pod() {
    let mut w = world();
    w.run_until(SimTime(Dur::secs(5).0));
    let now = w.sim.now();
    let mut s = PodSyncStatus::new("1_test".into(), now);
    s.started_terminating = true;
    s.terminating_at = Some(SimTime(now.0 - Dur::secs(2).0));
    s.terminated_at = Some(SimTime(now.0 - Dur::secs(1).0));
    s.grace_period = 1;
    w.kubelet.pw.records.insert(uid(1001), Box::new(s));

    update(
        &mut w,
        runtime_opts(UpdateType::Kill, running_pod(1001, "1")),
    );
    assert!(syncs(&w, uid(1001)).is_empty());
    let s = st(&w, uid(1001));
    assert!(s.pending_update.is_none() && !s.working && !s.finished);
}

/// Mirrors upstream `TestUpdatePodDoesNotForgetSyncPodKill`: back-to-back Create, Kill,
/// Update per pod; the kill is never lost and the trailing update never syncs the pod.
#[test]
fn test_update_pod_does_not_forget_sync_pod_kill() {
    const N: u32 = 20;
    let mut w = world();
    for i in 0..N {
        let pod = p(1000 + i).name("pod").build();
        send(&mut w, opts(UpdateType::Create, pod.clone()));
        if i % 2 == 1 {
            // Let the worker pick up the create before the kill arrives (upstream's
            // goroutines may or may not do so).
            let until = w.sim.now() + Dur::millis(1);
            w.run_until(until);
        }
        send(&mut w, opts(UpdateType::Kill, pod.clone()));
        send(&mut w, opts(UpdateType::Update, pod));
    }
    drain(&mut w);
    let short = v(&["SyncTerminatingPod grace=30", "SyncTerminatedPod"]);
    let long = v(&[
        "SyncPod",
        "SyncTerminatingPod grace=30",
        "SyncTerminatedPod",
    ]);
    let mut seen = (0, 0);
    for i in 0..N {
        let got = syncs(&w, uid(1000 + i));
        if got == short {
            seen.0 += 1;
        } else if got == long {
            seen.1 += 1;
        } else {
            panic!("unexpected history for pod {i}: {got:?}");
        }
        assert!(st(&w, uid(1000 + i)).finished);
    }
    assert!(seen.0 > 0 && seen.1 > 0, "both histories occur: {seen:?}");
}

/// Mirrors upstream `TestTerminalPhaseTransition`: a `SyncPod` that reports the pod terminal
/// drives it through terminating to terminated without any kill update. Here the syncer is
/// the real one: a RestartPolicy Never container exits 0, so the pod phase is Succeeded.
#[test]
fn test_terminal_phase_transition() {
    let yaml = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata:
  name: conformance-terminal
spec:
  horizon: 2h
  pods:
    - createAt: 1h
      template:
        metadata: {name: later}
        spec:
          containers:
            - {name: app, image: img:1}
    - template:
        metadata: {name: job}
        spec:
          restartPolicy: Never
          containers:
            - {name: app, image: img:1}
      behaviour:
        app: {runFor: 2s, exitCode: 0}
";
    let loaded = crate::load_str("conformance.yaml", yaml, &[]).expect("valid");
    let mut w = World::new(Arc::new(loaded.scenario), 1, true);
    w.kubelet.housekeeping_enabled = false;
    // The pod is created at 0 s and synced; its container runs for 2 s.
    w.run_until(SimTime(Dur::millis(1500).0));
    let u = w.api.uid_by_name("default", "job").expect("job created");
    {
        let s = st(&w, u);
        assert!(s.is_started() && !s.is_termination_requested() && !s.is_terminated());
    }
    drain(&mut w);
    let s = st(&w, u);
    assert!(s.is_termination_requested() && s.is_terminated());
    // The requeued activeUpdate carries no kill options, so the grace stays unset unless a
    // periodic sync update arrived while the pod was terminating (UpdatePod then computes
    // the effective grace, the spec's 30 s). Upstream's test sends no such update.
    assert!(s.grace_period == 0 || s.grace_period == 30, "{s:?}");
    assert_eq!(
        flags(s),
        Flags {
            started: true,
            terminating: true,
            terminated: true,
            grace: s.grace_period,
            started_terminating: true,
            finished: true,
            ..NONE
        }
    );
    assert_timestamps_ordered(s);
    let got = syncs(&w, u);
    let n = got.len();
    assert!(n >= 3, "{got:?}");
    assert_eq!(got[n - 1], "SyncTerminatedPod", "{got:?}");
    assert!(got[n - 2].starts_with("SyncTerminatingPod"), "{got:?}");
    assert!(got[..n - 2].iter().all(|s| s == "SyncPod"), "{got:?}");
    let kills = w
        .trace
        .records()
        .iter()
        .filter(|r| r.text == format!("pw {u} UpdatePod kill"))
        .count();
    assert_eq!(kills, 0, "no kill update was needed");
}
