//! Findings of the long hunt on `current` (`podsim hunt` on `scenarios/hunt/`) that were
//! podsim's own bugs, kept as regression tests.

use assert_cmd::Command;
use serde_json::Value;

/// A pod with a native sidecar, deleted at 5 s, on a runtime whose `StopContainer` always
/// fails.
const SIDECAR_STOP_FAILS: &str = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: sidecar-stop-fails}
spec:
  horizon: 1m
  runtime:
    faults: [{call: stopContainer, probability: 1}]
  pods:
    - template:
        metadata: {name: web}
        spec:
          terminationGracePeriodSeconds: 30
          initContainers: [{name: mesh, image: example/mesh:1, restartPolicy: Always}]
          containers: [{name: app, image: example/web:1}]
  timeline:
    - {at: 5s, deletePod: {pod: web}}
";

/// Found by the hunt from `scenarios/hunt/static-node.yaml`
/// (`sidecars-stop-after-main-containers`): when the app container's `StopContainer`
/// failed, podsim released the sidecar's turn at once and stopped the sidecar while the app
/// still ran. v1.31 `killContainer` (`pkg/kubelet/kuberuntime/kuberuntime_container.go`)
/// returns the error before it marks the container terminated for the ordering, so the
/// sidecar waits out its grace (30 s) before its own stop.
#[test]
fn a_failed_stop_of_the_app_keeps_the_sidecar_waiting_for_its_turn() {
    let trace = std::env::temp_dir().join(format!(
        "podsim-hunt-findings-{}-sidecar.jsonl",
        std::process::id()
    ));
    let o = Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", "-", "--seed", "1", "--trace"])
        .arg(&trace)
        .write_stdin(SIDECAR_STOP_FAILS)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    // Container c1 is the sidecar (started first), c2 the app.
    let stops: Vec<(u64, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|v| {
            let rec = v["rec"].as_str()?.to_string();
            (rec.contains("StopContainer#") && rec.contains(" begin"))
                .then(|| (v["atNs"].as_u64().unwrap(), rec))
        })
        .collect();
    let first = |id: &str| {
        stops
            .iter()
            .find(|(_, r)| r.contains(&format!("StopContainer#{id} begin")))
            .map(|(t, _)| *t)
            .unwrap_or_else(|| panic!("no stop of c{id}: {stops:?}"))
    };
    let (app, sidecar) = (first("2"), first("1"));
    assert!(app < 6_000_000_000, "app stop at {app} ns");
    assert!(
        sidecar >= app + 30_000_000_000,
        "the sidecar's stop came {} ms after the app's failed stop, not after its 30 s turn: {stops:?}",
        (sidecar - app) / 1_000_000
    );
    assert!(
        text.contains("sidecar stopped before the containers it waits for"),
        "no note that the sidecar's turn timed out"
    );
}

/// Run a scenario given as text on `seed` and return its `--json` result and its trace
/// records (`rec` of each JSON Lines record, with the time in ns).
fn run_json(name: &str, yaml: &str, seed: u64) -> (Value, Vec<(u64, String)>) {
    let trace = std::env::temp_dir().join(format!(
        "podsim-hunt-findings-{}-{name}.jsonl",
        std::process::id()
    ));
    let o = Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", "-", "--json", "--seed", &seed.to_string(), "--trace"])
        .arg(&trace)
        .write_stdin(yaml)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    let recs = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|v| {
            (
                v["atNs"].as_u64().unwrap(),
                v["rec"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (serde_json::from_slice(&o.stdout).unwrap(), recs)
}

/// How many times container `name` of pod `uid` started running in the trace.
fn starts(recs: &[(u64, String)], uid: &str, name: &str) -> usize {
    let (head, tail) = (format!("rt {uid} "), format!(" {name} running"));
    recs.iter()
        .filter(|(_, r)| r.starts_with(&head) && r.ends_with(&tail))
        .count()
}

fn invariants(v: &Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["invariant"].as_str().unwrap().to_string())
        .collect()
}

/// `delete-only-after-reclamation` (static-node, ten replays): the kubelet crashed while a
/// `MountVolumes` was in flight, the mount landed behind the next incarnation's volume
/// reconstruction, and that incarnation deleted the object with the volumes mounted. The
/// mount runs in the kubelet process, so it dies with it: now nothing is mounted and the
/// finding is gone.
#[test]
fn a_mount_in_flight_when_the_kubelet_dies_never_lands() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: mount-across-crash}
spec:
  runtime:
    latencies:
      mountVolumes: {uniform: {min: 1s, max: 3s}}
      podStatus: {uniform: {min: 0s, max: 1s}}
  pods:
    - template:
        metadata: {name: proxy}
        spec:
          containers: [{name: proxy}]
    - createAt: 20ms
      template:
        metadata: {name: scheduler}
        spec:
          containers: [{name: scheduler}]
    - template:
        metadata: {name: web}
        spec:
          containers: [{name: app}]
    - template:
        metadata: {name: worker}
        spec:
          containers: [{name: main}]
    - template:
        metadata: {name: batch}
        spec:
          containers: [{name: side}]
  timeline:
    - {at: 3s, memoryPressure: {available: 50Mi}}
    - {at: 3s, kubeletRestart: {}}
    - {at: 4s, deletePod: {pod: web}}
";
    let (v, recs) = run_json("mount", yaml, 2376523244);
    assert!(
        !invariants(&v).contains(&"delete-only-after-reclamation".to_string()),
        "{v}"
    );
    let began = recs
        .iter()
        .find(|(_, r)| r == "cri uid-0004 MountVolumes#0 begin")
        .map(|(t, _)| *t)
        .expect("a mount began");
    assert!(began < 3_000_000_000, "the mount began at {began} ns");
    assert!(
        !recs
            .iter()
            .any(|(_, r)| r == "host uid-0004 volumes mounted"),
        "the dead kubelet's mount landed: {recs:?}"
    );
    assert!(recs
        .iter()
        .any(|(_, r)| r == "api uid-0004 removed by kubelet"));
}

/// `cache-freshness` (static-node): with `containerGC.maxContainers: 2` the collector
/// removed `batch`'s exited `job` container while `side` still ran, and the next SyncPod
/// started `job` again (restartPolicy Never). v1.31 does the same: `ShouldContainerBeRestarted`
/// starts a container with no status at all (upstream issue 51142). The oracle no longer
/// calls that a stale cache; the second run is still there.
#[test]
fn a_never_container_removed_by_gc_runs_again_without_a_cache_finding() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: never-container-gc}
spec:
  horizon: 94s
  kubelet:
    containerGC: {maxContainers: 2}
  pods:
    - static: true
      template:
        metadata: {name: proxy}
        spec:
          containers: [{name: proxy}]
    - template:
        metadata: {name: scheduler}
        spec:
          containers: [{name: scheduler}]
    - template:
        metadata: {name: web}
        spec:
          containers: [{name: app}]
          initContainers: [{name: setup}]
    - template:
        metadata: {name: batch}
        spec:
          containers:
            - {name: job}
            - {name: side}
          restartPolicy: Never
      behaviour:
        job: {runFor: 15s}
  timeline:
    - {at: 30s, removeStaticPod: {pod: proxy}}
    - {at: 32s, restoreStaticPod: {pod: proxy}}
    - {at: 3s, removeStaticPod: {pod: proxy}}
    - {at: 3s, restoreStaticPod: {pod: proxy}}
";
    let (v, recs) = run_json("gc", yaml, 663873472);
    assert!(
        !invariants(&v).contains(&"cache-freshness".to_string()),
        "{v}"
    );
    let job_starts = starts(&recs, "uid-0003", "job");
    assert_eq!(job_starts, 2, "job should run twice (upstream 51142)");
}

/// `desired-static-pod-runs` (static-node): `proxy`'s manifest removed and restored while
/// the kubelet was down; the restarted kubelet never saw it gone and adopted the running
/// container. The oracle wanted a new start; a container still running counts now.
#[test]
fn a_static_pod_removed_and_restored_during_downtime_keeps_running() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: static-remove-restore-down}
spec:
  pods:
    - static: true
      template:
        metadata: {name: proxy}
        spec:
          containers: [{name: proxy}]
  timeline:
    - {at: 7s, kubeletRestart: {downtime: 17s}}
    - {at: 7s, removeStaticPod: {pod: proxy}}
    - {at: 9s, restoreStaticPod: {pod: proxy}}
";
    let (v, recs) = run_json("static", yaml, 1235299693);
    assert!(invariants(&v).is_empty(), "{v}");
    assert!(!recs.iter().any(|(_, r)| r.contains("SIGTERM")), "{recs:?}");
}

/// `shutdown-pods-failed` (pressure-node): `batch` (Never) evicted, the kubelet restarted,
/// the runtime still holding the created-never-started container of the first incarnation;
/// the shutdown's SyncTerminatingPod computed `job` as waiting, and the status manager
/// rejected the write (a terminated container of a Never pod may not become waiting), so it
/// held no status. The API phase stayed Failed; the oracle read the empty cache as Pending.
#[test]
fn a_rejected_status_write_during_shutdown_is_judged_by_the_api_phase() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: shutdown-after-rejected-write}
spec:
  kubelet:
    config:
      shutdownGracePeriodByPodPriority:
        - {priority: 0, shutdownGracePeriodSeconds: 10}
        - {priority: 100000, shutdownGracePeriodSeconds: 20}
  runtime:
    faults: [{call: podStatus, probability: 0.293}]
    latencies:
      pullImage: {uniform: {min: 200ms, max: 2s}}
      runPodSandbox: {uniform: {min: 200ms, max: 300ms}}
      stopContainer: {fixed: 1s}
  api:
    watchDelay: {uniform: {min: 0s, max: 200ms}}
  pods:
    - template:
        metadata: {name: hog}
        spec:
          containers: [{name: app}]
    - replicas: 2
      template:
        metadata: {name: web}
        spec:
          containers: [{name: app, resources: {requests: {memory: 1Gi}}}]
    - template:
        metadata: {name: batch}
        spec:
          containers: [{name: job, resources: {requests: {cpu: \"2\"}}}]
          restartPolicy: Never
  timeline:
    - {at: 952ms, kubeletRestart: {downtime: 4s}}
    - {at: 21s, kubeletRestart: {}}
    - {at: 41s, nodeShutdown: {}}
    - {at: 1s, memoryPressure: {available: 50Mi}}
";
    let (v, recs) = run_json("shutdown", yaml, 539014622);
    assert!(
        !invariants(&v).contains(&"shutdown-pods-failed".to_string()),
        "{v}"
    );
    assert!(recs.iter().any(|(t, r)| *t >= 41_000_000_000
        && r == "note uid-0001 status update rejected: terminated container would restart"));
    let last_api = recs
        .iter()
        .rfind(|(_, r)| r.starts_with("api uid-0001 patched phase="))
        .map(|(_, r)| r.clone());
    assert_eq!(
        last_api.as_deref(),
        Some("api uid-0001 patched phase=Failed ready=false")
    );
}

/// `deleted-pod-stops` (static-node): a static pod's manifest removed and restored at the
/// same instant. The restored manifest's API record came before the kubelet's REMOVE, so
/// the oracle counted the removal after the new life had begun and took the restarted
/// container for one that outlived its deletion. The restarted pod must run on, with no
/// finding.
#[test]
fn a_static_pod_removed_and_restored_at_once_runs_on_without_a_finding() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: static-remove-restore-at-once}
spec:
  runtime:
    latencies: {mountVolumes: {fixed: 2s}}
  pods:
    - static: true
      template:
        metadata: {name: proxy}
        spec:
          containers: [{name: proxy}]
  timeline:
    - {at: 48988ms, removeStaticPod: {pod: proxy}}
    - {at: 48988ms, restoreStaticPod: {pod: proxy}}
";
    let (v, recs) = run_json("static-at-once", yaml, 142407937);
    assert!(invariants(&v).is_empty(), "{v}");
    // The kubelet did stop the first life and start the second.
    assert!(recs.iter().any(|(_, r)| r.contains("SIGTERM")), "no stop");
    let starts = recs.iter().filter(|(_, r)| r.contains(" running")).count();
    assert!(starts >= 2, "{starts} starts");
}

/// `shutdown-pods-failed` (pressure-node): `hog`, rejected by a restarted kubelet and being
/// killed from housekeeping as an orphaned runtime pod, gets the node shutdown manager's
/// kill queued on that runtime pod's worker record. When the orphan's termination
/// completes, v1.31 `completeTerminatingRuntimePod` deletes the record and the queued kill
/// (status function included) with it; `hog` is then force-deleted and recreated, and the
/// old UID's termination computes its phase without the shutdown's Failed. The check
/// wanted Failed there.
#[test]
fn a_shutdown_kill_dropped_with_an_orphan_record_is_not_judged_as_applied() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: shutdown-kill-dropped-with-orphan-record}
spec:
  horizon: 73s
  kubelet:
    config:
      shutdownGracePeriodByPodPriority:
        - {priority: 0, shutdownGracePeriodSeconds: 10}
        - {priority: 100000, shutdownGracePeriodSeconds: 20}
  runtime:
    latencies: {podStatus: {fixed: 46ms}}
  api:
    watchDelay: {uniform: {min: 0s, max: 200ms}}
  pods:
    - template:
        metadata: {name: hog}
        spec:
          containers: [{name: app}]
      behaviour:
        app: {onSigterm: ignore}
    - replicas: 2
      template:
        metadata: {name: web}
        spec:
          containers: [{name: app}]
    - template:
        metadata: {name: batch}
        spec:
          containers: [{name: job}]
  timeline:
    - {at: 55s, kubeletRestart: {downtime: 3600ms}}
    - {at: 21s, kubeletRestart: {downtime: 18s}}
    - {at: 24s, memoryPressure: {available: 90Mi}}
    - {at: 70400ms, recreatePod: {pod: hog}}
    - {at: 65s, nodeShutdown: {}}
";
    let (v, recs) = run_json("shutdown-orphan", yaml, 3151560261);
    assert!(
        !invariants(&v).contains(&"shutdown-pods-failed".to_string()),
        "{v}"
    );
    // The window is there: the orphan record of hog's old UID was removed after the
    // shutdown began.
    assert!(
        recs.iter()
            .any(|(at, r)| *at > 65_000_000_000
                && r.contains("runtime pod terminated: record removed")),
        "no orphan record removed after the shutdown began"
    );
}

/// `cache-freshness` (mixed-node): the kubelet restarted while its `CreateContainer` for
/// the Never container `job` was in flight; the next kubelet created and started `job`
/// (attempt 0) itself, then the dead kubelet's create landed as a second, never started
/// attempt-0 container, newer than the running one, and the next SyncPod started `job`
/// again (a Created newest status is restarted whatever the policy: v1.31
/// `ShouldContainerBeRestarted` in `pkg/kubelet/container/helpers.go`). A CRI runtime
/// holds a container's name (pod, container, attempt) until the container is removed, so
/// the second create fails and `job` runs once.
#[test]
fn a_dead_kubelets_create_cannot_make_a_second_container_of_one_attempt() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: create-in-flight-across-restart}
spec:
  horizon: 5s
  runtime:
    faults: [{call: pullImage, probability: 0.214}]
    latencies:
      createContainer: {exponential: {mean: 100ms}}
      pullImage: {exponential: {mean: 1s}}
  pods:
    - replicas: 2
      createAt: 19ms
      template:
        metadata: {name: web}
        spec:
          containers: [{name: app}]
    - template:
        metadata: {name: batch}
        spec:
          containers: [{name: job}]
          restartPolicy: Never
    - template:
        metadata: {name: crashy}
        spec:
          containers: [{name: app}]
  timeline:
    - {at: 1s, kubeletRestart: {}}
";
    let (v, recs) = run_json("create-across-restart", yaml, 3131357285);
    assert!(invariants(&v).is_empty(), "{v}");
    assert_eq!(starts(&recs, "uid-0001", "job"), 1, "{recs:?}");
}

/// `local-terminal-phase-absorbing` (mixed-node, six replays; pressure-node, one): `web-0`
/// created under memory pressure and recreated (`recreatePod`: a force delete and a new
/// object of the same name) before the kubelet saw it. The kubelet rejects the first UID
/// (Failed in the status manager's cache); the status manager's sync finds the name now
/// belongs to the new UID and drops the old UID's status, as v1.31 `syncPod` in
/// `pkg/kubelet/status/status_manager.go` does ("deleted and then recreated"); the
/// SyncTerminatingPod that follows computes Pending afresh. The drop is now a trace record
/// (`LocalStatusDropped`) and the oracle takes the fresh phase after it.
#[test]
fn a_status_dropped_for_a_recreated_pod_starts_afresh() {
    let yaml = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: recreated-before-seen}
spec:
  api:
    watchDelay: {fixed: 100ms}
  pods:
    - replicas: 1
      createAt: 96961ms
      template:
        metadata: {name: web}
        spec:
          containers: [{name: app}]
  timeline:
    - {at: 3s, memoryPressure: {available: 50Mi}}
    - {at: 97s, recreatePod: {pod: web-0}}
";
    let (v, recs) = run_json("recreated", yaml, 757649321);
    assert!(
        !invariants(&v).contains(&"local-terminal-phase-absorbing".to_string()),
        "{v}"
    );
    let at = |rec: &str| {
        recs.iter()
            .position(|(_, r)| r == rec)
            .unwrap_or_else(|| panic!("no record {rec:?}: {recs:?}"))
    };
    let failed = at("status uid-0001 local Failed");
    let dropped = at("status uid-0001 local dropped: the object is uid-0002's");
    let pending = at("status uid-0001 local Pending");
    assert!(failed < dropped && dropped < pending, "{recs:?}");
}
