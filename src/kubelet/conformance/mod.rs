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
//! Included from `tests/main.rs` as `mod conformance;`; the tests are in its submodules,
//! by upstream test.

mod kill;
mod known_pods;
mod update_pod;

use crate::kubelet::pod_workers::{
    KillPodOptions, PodSyncStatus, PodWorkers, StatusFn, UpdatePodOptions, UpdateType,
};
use crate::model::{ApiPod, ContainerSpec, PodPhase, PodSpec, PodUid, RestartPolicy, RunningPod};
use crate::run::World;
use crate::sim::{Dur, SimTime};
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
    let loaded = match crate::load_str("conformance.yaml", yaml, &[]) {
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
        std::sync::Arc::make_mut(&mut pod.status).phase = self.phase;
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
