//! Conformance of the pod-worker port with upstream `pkg/kubelet/pod_workers_test.go`.
//!
//! Each test drives the real port (`Kubelet::update_pod`, `sync_known_pods`, the sync
//! functions against the simulated runtime) the way upstream's test drives `podWorkers`
//! with its recording fake syncer, and asserts upstream's expectations: which sync
//! functions ran, in which order, with which grace, and the final `podSyncStatus` flags and
//! query results. Upstream checks exact fake-clock timestamps; here only their presence and
//! order are checked. Housekeeping is switched off, as upstream's pod-worker tests have none.
//!
//! | Test | Upstream test (case) |
//! |---|---|
//! | `test_update_pod_new_pod_is_recorded_and_started` | `TestUpdatePod` "a new pod is recorded and started" |
//! | `test_update_pod_duplicate_create_of_terminating_uid_sets_restart_requested` | `TestUpdatePod` "...unless it is a duplicate of an existing terminating pod UID" |
//! | `test_update_pod_running_pod_field_ignored_when_pod_given` | `TestUpdatePod` "...and running pod is ignored" |
//! | `test_update_pod_deletion_timestamp_terminates_with_deletion_grace` | `TestUpdatePod` "a running pod is terminated when an update contains a deletionTimestamp" |
//! | `test_update_pod_eviction_terminates_with_spec_grace` | `TestUpdatePod` "a running pod is terminated when an eviction is requested" |
//! | `test_update_pod_terminal_pod_with_cached_status_goes_straight_to_terminated` | `TestUpdatePod` "a pod that is terminal and has never started advances to finished if the runtime has a cached terminal state" |
//! | `test_update_pod_terminal_pod_with_running_containers_is_terminated` | `TestUpdatePod` "a pod that is terminal and has never started must be terminated if the runtime does not have a cached terminal state" |
//! | `test_update_pod_orphaned_runtime_pod_is_terminated_and_removed` | `TestUpdatePod` "an orphaned running pod we have not seen is marked terminating and advances to finished and then is removed" |
//! | `test_update_pod_orphaned_runtime_pod_non_kill_update_is_ignored` | `TestUpdatePod` "an orphaned running pod with a non-kill update type does nothing" |
//! | `test_update_pod_parallel_newest_update_wins` | `TestUpdatePodParallel` |
//! | `test_update_pod_for_runtime_pod` | `TestUpdatePodForRuntimePod` |
//! | `test_update_pod_for_terminated_runtime_pod` | `TestUpdatePodForTerminatedRuntimePod` |
//! | `test_update_pod_does_not_forget_sync_pod_kill` | `TestUpdatePodDoesNotForgetSyncPodKill` |
//! | `test_terminal_phase_transition` | `TestTerminalPhaseTransition` |
//! | `test_sync_known_pods` | `TestSyncKnownPods` |
//! | `test_remove_terminated_worker` | `Test_removeTerminatedWorker` (the non-static cases) |
//! | `test_kill_pod_now_func` | `TestKillPodNowFunc` |
//! | `test_kill_pod_now_wait_ends_on_close_or_timeout` | `killPodNow`'s wait (no upstream test case) |
//! | `test_calculate_effective_grace_period` | `Test_calculateEffectiveGracePeriod` |
//! | `test_runtime_kill_of_known_pod_marks_deleted` | `UpdatePod`'s `isRuntimePod` handling (no upstream test case) |
//! | `test_runtime_kill_of_known_terminated_pod_is_ignored` | `UpdatePod`'s `isRuntimePod` handling (no upstream test case) |
//! | `test_grace_shortening_does_not_interrupt_in_flight_termination` | `UpdatePod`'s cancellation vs `SyncTerminatingPod`'s background context (no upstream test case) |
//!
//! Not mirrored: `TestStaticPodExclusion` and `Test_allowPodStart` (static pods are not
//! modelled yet), `TestCompleteWork_*` (v1.35 back-off errors; the port follows v1.31) and
//! `TestFakePodWorkers` (tests upstream's fake).
//!
//! Included from `tests/main.rs` as `mod conformance;`.

use podsim::kubelet::pod_workers::{
    KillPodOptions, PodSyncStatus, PodWorkers, StatusFn, UpdatePodOptions, UpdateType,
};
use podsim::model::{ApiPod, ContainerSpec, PodPhase, PodSpec, PodUid, RestartPolicy, RunningPod};
use podsim::run::World;
use podsim::sim::{Dur, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A world whose only scenario pod appears long after every test is over.
const EMPTY: &str = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata:
  name: conformance
spec:
  horizon: 2h
  pods:
    - createAt: 1h
      template:
        metadata: {name: later}
        spec:
          containers:
            - {name: app, image: img:1}
";

fn world_from(yaml: &str) -> World {
    let loaded = match podsim::load_str("conformance.yaml", yaml, &[]) {
        Ok(l) => l,
        Err(e) => panic!("invalid test scenario:\n{e}"),
    };
    let mut w = World::new(Arc::new(loaded.scenario), 1, true);
    w.kubelet.housekeeping_enabled = false;
    // Let the PLEG complete its first relist and the API source report ready.
    w.run_until(SimTime(Dur::secs(2).0));
    w
}

fn world() -> World {
    world_from(EMPTY)
}

/// How a test pod looks.
#[derive(Clone)]
struct P {
    uid: u32,
    name: &'static str,
    namespace: &'static str,
    restart: RestartPolicy,
    deletion_grace: Option<i64>,
    phase: PodPhase,
    version: u64,
}

fn p(uid: u32) -> P {
    P {
        uid,
        name: "running-pod",
        namespace: "ns",
        restart: RestartPolicy::Always,
        deletion_grace: None,
        phase: PodPhase::Pending,
        version: 1,
    }
}

impl P {
    fn name(mut self, n: &'static str) -> Self {
        self.name = n;
        self
    }
    fn deleted(mut self, grace: i64) -> Self {
        self.deletion_grace = Some(grace);
        self
    }
    fn phase(mut self, phase: PodPhase) -> Self {
        self.phase = phase;
        self
    }
    fn version(mut self, v: u64) -> Self {
        self.version = v;
        self
    }
    fn build(self) -> Arc<ApiPod> {
        let c = vec![ContainerSpec::named("app", "img:1")];
        let spec = PodSpec::new(self.name, self.namespace, self.restart, c);
        let mut pod = ApiPod::new(PodUid(self.uid), spec);
        pod.deletion_timestamp = self.deletion_grace.map(|_| SimTime(Dur::secs(1).0));
        pod.deletion_grace_period_seconds = self.deletion_grace;
        pod.status.phase = self.phase;
        pod.resource_version = self.version;
        Arc::new(pod)
    }
}

fn uid(n: u32) -> PodUid {
    PodUid(n)
}

fn running_pod(n: u32, name: &str) -> Arc<RunningPod> {
    Arc::new(RunningPod {
        uid: PodUid(n),
        name: name.into(),
        namespace: "ns".into(),
        containers: vec![],
        sandboxes: vec![],
    })
}

fn opts(ty: UpdateType, pod: Arc<ApiPod>) -> UpdatePodOptions {
    UpdatePodOptions::new(ty, pod)
}

fn runtime_opts(ty: UpdateType, rp: Arc<RunningPod>) -> UpdatePodOptions {
    UpdatePodOptions {
        update_type: ty,
        pod: None,
        mirror: None,
        running_pod: Some(rp),
        kill: None,
    }
}

fn kill_opts(pod: Arc<ApiPod>, kill: KillPodOptions) -> UpdatePodOptions {
    UpdatePodOptions {
        kill: Some(Box::new(kill)),
        ..opts(UpdateType::Kill, pod)
    }
}

/// Hand one update to the pod workers without letting any worker run.
fn send(w: &mut World, o: UpdatePodOptions) {
    w.kubelet_do(|k, ctx| k.update_pod(ctx, o));
}

/// Let simulated time pass until every worker is idle (30 s is far more than any of these
/// pods needs: a termination is a SIGTERM, an immediate exit and a PLEG wait of ~1 s).
fn drain(w: &mut World) {
    let until = w.sim.now() + Dur::secs(30);
    assert!(w.run_until(until).is_none(), "the run hit a limit");
}

/// `UpdatePod` followed by a drain, like upstream's `UpdatePod` + `drainAllWorkers`.
fn update(w: &mut World, o: UpdatePodOptions) {
    send(w, o);
    drain(w);
}

/// The sync functions that began for `u`, in order, e.g. `SyncTerminatingPod grace=30`.
fn syncs(w: &World, u: PodUid) -> Vec<String> {
    let prefix = format!("sync {u} ");
    w.trace
        .records()
        .iter()
        .filter_map(|r| r.text.strip_prefix(&prefix))
        .filter_map(|rest| {
            let (kind, tail) = rest.split_once(" begin")?;
            Some(format!("{kind}{tail}"))
        })
        .collect()
}

fn st(w: &World, u: PodUid) -> &PodSyncStatus {
    w.kubelet
        .pw
        .records
        .get(&u)
        .unwrap_or_else(|| panic!("no pod sync status for {u}"))
}

/// The flags upstream's `expectPodSyncStatus` compares, as one comparable value.
#[derive(Debug, PartialEq, Eq)]
struct Flags {
    started: bool,
    terminating: bool,
    terminated: bool,
    grace: i64,
    started_terminating: bool,
    deleted: bool,
    evicted: bool,
    finished: bool,
    restart_requested: bool,
    observed_runtime: bool,
    working: bool,
}

fn flags(s: &PodSyncStatus) -> Flags {
    Flags {
        started: s.started_at.is_some(),
        terminating: s.terminating_at.is_some(),
        terminated: s.terminated_at.is_some(),
        grace: s.grace_period,
        started_terminating: s.started_terminating,
        deleted: s.deleted,
        evicted: s.evicted,
        finished: s.finished,
        restart_requested: s.restart_requested,
        observed_runtime: s.observed_runtime,
        working: s.working,
    }
}

/// All flags off except the ones a test sets.
const NONE: Flags = Flags {
    started: false,
    terminating: false,
    terminated: false,
    grace: 0,
    started_terminating: false,
    deleted: false,
    evicted: false,
    finished: false,
    restart_requested: false,
    observed_runtime: false,
    working: false,
};

/// Timestamps are in causal order: synced <= terminating <= terminated, started set.
fn assert_timestamps_ordered(s: &PodSyncStatus) {
    if let Some(t) = s.terminating_at {
        assert!(s.synced_at <= t, "terminating before first sight: {s:?}");
        if let Some(d) = s.terminated_at {
            assert!(t <= d, "terminated before terminating: {s:?}");
        }
    }
    if let Some(started) = s.started_at {
        assert!(s.synced_at <= started, "started before first sight: {s:?}");
    }
}

fn v(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

fn active_pod(s: &PodSyncStatus) -> &Arc<ApiPod> {
    s.active_update
        .as_ref()
        .and_then(|a| a.pod.as_ref())
        .expect("activeUpdate has a pod")
}

fn active_kill(s: &PodSyncStatus) -> Option<(Option<i64>, bool)> {
    s.active_update
        .as_ref()
        .and_then(|a| a.kill.as_ref())
        .map(|k| (k.grace_override, k.evict))
}

// ---------------------------------------------------------------------------------------
// TestUpdatePod
// ---------------------------------------------------------------------------------------

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
    w.kubelet.pw.records.insert(uid(1001), s);

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
    let loaded = podsim::load_str("conformance.yaml", yaml, &[]).expect("valid");
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

// ---------------------------------------------------------------------------------------
// SyncKnownPods and removeTerminatedWorker
// ---------------------------------------------------------------------------------------

fn desired(uids: &[u32]) -> BTreeMap<PodUid, Arc<ApiPod>> {
    uids.iter()
        .map(|&u| (uid(u), p(u).name("name").build()))
        .collect()
}

fn channels(w: &World) -> Vec<PodUid> {
    w.kubelet
        .pw
        .records
        .iter()
        .filter(|(_, s)| s.has_worker)
        .map(|(u, _)| *u)
        .collect()
}

/// Mirrors upstream `TestSyncKnownPods` (UID "i" is `PodUid(1000 + i)`, the unknown "abc" is
/// `PodUid(4242)`).
#[test]
fn test_sync_known_pods() {
    const N: u32 = 20;
    let abc = uid(4242);
    let mut w = world();
    for i in 0..N {
        send(
            &mut w,
            opts(UpdateType::Update, p(1000 + i).name("name").build()),
        );
    }
    drain(&mut w);
    assert_eq!(channels(&w).len(), N as usize);

    for i in 0..N {
        if i == 2 || i == 14 {
            continue;
        }
        let mut pod = p(1000 + i).name("name");
        if i % 2 == 0 {
            pod = pod.deleted(30);
        }
        send(&mut w, opts(UpdateType::Kill, pod.build()));
    }
    drain(&mut w);

    let pw = &w.kubelet.pw;
    assert!(pw.should_pod_containers_be_terminating(uid(1000)));
    assert!(pw.should_pod_containers_be_terminating(uid(1001)));
    assert!(!pw.should_pod_containers_be_terminating(uid(1002)));
    assert!(pw.is_pod_termination_requested(uid(1000)));
    assert!(!pw.is_pod_termination_requested(uid(1002)));
    assert!(!pw.could_have_running_containers(uid(1000)));
    assert!(!pw.could_have_running_containers(uid(1001)));
    assert!(pw.could_have_running_containers(uid(1002)));
    assert!(pw.should_pod_content_be_removed(uid(1000)));
    assert!(!pw.should_pod_content_be_removed(uid(1001)));
    assert!(!pw.should_pod_content_be_removed(uid(1002)));
    // An unknown UID before the first SyncKnownPods.
    assert!(!pw.should_pod_containers_be_terminating(abc));
    assert!(pw.could_have_running_containers(abc));
    assert!(!pw.should_pod_content_be_removed(abc));

    let want = desired(&[2 + 1000, 14 + 1000]);
    let known = w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &want));
    assert_eq!(channels(&w), vec![uid(1002), uid(1014)]);
    assert_eq!(known.keys().copied().collect::<Vec<_>>(), channels(&w));
    assert!(known.values().all(|s| !s.orphan && s.has_config));
    let pw = &w.kubelet.pw;
    assert!(!pw.is_pod_termination_requested(uid(1002)));
    // An unknown UID after the first SyncKnownPods.
    assert!(pw.should_pod_containers_be_terminating(abc));
    assert!(!pw.could_have_running_containers(abc));
    assert!(pw.should_pod_content_be_removed(abc));

    // Workers that are not terminated stay until they are: orphaned while running, they are
    // terminated with their spec grace and kept until the next sync.
    let none = BTreeMap::new();
    w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &none));
    drain(&mut w);
    assert!(channels(&w).is_empty());
    assert_eq!(
        w.kubelet.pw.records.keys().copied().collect::<Vec<_>>(),
        vec![uid(1002), uid(1014)]
    );
    for u in [uid(1002), uid(1014)] {
        let s = st(&w, u);
        assert_eq!(
            flags(s),
            Flags {
                started: true,
                terminating: true,
                terminated: true,
                grace: 30,
                started_terminating: true,
                deleted: true,
                finished: true,
                ..NONE
            }
        );
        assert_eq!(
            syncs(&w, u),
            v(&["SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"])
        );
    }

    // Kills of finished pods are no-ops; the next sync forgets them.
    for u in [1002, 1014] {
        send(&mut w, opts(UpdateType::Kill, p(u).name("name").build()));
    }
    drain(&mut w);
    w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &none));
    assert!(channels(&w).is_empty());
    assert!(w.kubelet.pw.records.is_empty());
}

/// One `Test_removeTerminatedWorker` case, run through `SyncKnownPods`.
struct RemoveCase {
    desc: &'static str,
    orphan: bool,
    restart_requested: bool,
    finished: bool,
    started: bool,
    terminating: bool,
    terminated: bool,
    /// Resource version of the pending update's pod (upstream's pod name "2").
    pending: Option<u64>,
    /// Resource version of the active update's pod (upstream's pod name "1").
    active: Option<u64>,
    removed: bool,
    expect_pending: Option<u64>,
}

const CASE: RemoveCase = RemoveCase {
    desc: "",
    orphan: true,
    restart_requested: false,
    finished: false,
    started: false,
    terminating: false,
    terminated: false,
    pending: None,
    active: None,
    removed: false,
    expect_pending: None,
};

/// Mirrors upstream `Test_removeTerminatedWorker` (all cases without static-pod state; the
/// removal is reached through `SyncKnownPods`, which calls it for orphans and for UIDs with
/// a restart requested).
#[test]
fn test_remove_terminated_worker() {
    let cases = [
        RemoveCase {
            desc: "finished worker",
            orphan: false,
            restart_requested: true,
            finished: true,
            removed: true,
            ..CASE
        },
        RemoveCase {
            desc: "not yet started worker",
            orphan: false,
            restart_requested: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned not started worker",
            removed: true,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned started worker",
            started: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminating worker with no activeUpdate",
            started: true,
            terminating: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminating worker",
            started: true,
            terminating: true,
            active: Some(1),
            removed: false,
            expect_pending: Some(1),
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminating worker with pendingUpdate",
            started: true,
            terminating: true,
            active: Some(1),
            pending: Some(2),
            removed: false,
            expect_pending: Some(2),
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminated worker with no activeUpdate",
            started: true,
            terminating: true,
            terminated: true,
            removed: false,
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminated worker",
            started: true,
            terminating: true,
            terminated: true,
            active: Some(1),
            removed: false,
            expect_pending: Some(1),
            ..CASE
        },
        RemoveCase {
            desc: "orphaned terminated worker with pendingUpdate",
            started: true,
            terminating: true,
            terminated: true,
            active: Some(1),
            pending: Some(2),
            removed: false,
            expect_pending: Some(2),
            ..CASE
        },
    ];
    for c in cases {
        let mut w = world();
        let u = uid(1001);
        let t = |s: u64| SimTime(Dur::secs(s).0);
        let mut s = PodSyncStatus::new("fake-fullname".into(), t(1));
        s.restart_requested = c.restart_requested;
        s.finished = c.finished;
        s.started_at = c.started.then(|| t(1));
        s.terminating_at = c.terminating.then(|| t(2));
        s.terminated_at = c.terminated.then(|| t(3));
        let o = |rv: u64| opts(UpdateType::Sync, p(1001).version(rv).build());
        s.active_update = c.active.map(o);
        s.pending_update = c.pending.map(o);
        // The worker goroutine and its channel exist; a pending update has signalled it.
        s.has_worker = !c.finished;
        s.working = c.pending.is_some();
        s.signalled = c.pending.is_some();
        w.kubelet.pw.records.insert(u, s);

        let want = if c.orphan {
            BTreeMap::new()
        } else {
            desired(&[1001])
        };
        let known = w.kubelet_do(|k, ctx| k.sync_known_pods(ctx, &want));
        let desc = c.desc;
        let Some(s) = w.kubelet.pw.records.get(&u) else {
            assert!(c.removed, "{desc}: expected the worker to be kept");
            assert!(!known.contains_key(&u), "{desc}: removed but reported");
            continue;
        };
        assert!(!c.removed, "{desc}: expected the worker to be removed");
        assert!(known.contains_key(&u), "{desc}: kept but not reported");
        let pending = s
            .pending_update
            .as_ref()
            .map(|o| o.pod.as_ref().expect("pod").resource_version);
        assert_eq!(pending, c.expect_pending, "{desc}: pendingUpdate");
        if c.expect_pending.is_some() {
            assert!(s.working, "{desc}: should be working");
            assert!(s.signalled, "{desc}: one signal on the update channel");
        }
        if c.orphan {
            assert!(s.deleted, "{desc}: orphans are considered deleted");
            assert!(s.is_termination_requested(), "{desc}: orphan terminating");
        }
    }
}

// ---------------------------------------------------------------------------------------
// killPodNow and calculateEffectiveGracePeriod
// ---------------------------------------------------------------------------------------

/// Mirrors upstream `TestKillPodNowFunc`: `killPodNow` with grace override 0 and a status
/// function; the kill completes (its channel is closed) and the pod runs exactly
/// [SyncTerminatingPod, SyncTerminatedPod], with the effective grace of 1.
#[test]
fn test_kill_pod_now_func() {
    let mut w = world();
    let pod = p(1001).name("test").build();
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
    w.kubelet.pw.records.insert(uid(1001), s);
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
/// no second `SyncTerminatingPod` runs (kubelet-model.md sections 2.3 and 3.5).
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
