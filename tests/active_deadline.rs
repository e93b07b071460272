//! `spec.activeDeadlineSeconds` on `current` (the active-deadline handler of v1.31,
//! `pkg/kubelet/active_deadline.go`): `scenarios/lifecycle/active-deadline.yaml` over seeds
//! 1-5, asserted from `--json`.

use crate::lifecycle::{ns, pod, run_json, S, SEEDS};
use serde_json::Value;

const FILE: &str = "scenarios/lifecycle/active-deadline.yaml";
/// The sync-loop ticker's period: a pod past its deadline is synced at the next tick.
const TICK: u64 = S;

fn times(c: &Value, key: &str) -> Vec<u64> {
    c[key].as_array().unwrap().iter().map(ns).collect()
}

/// A pod past its deadline: Failed with reason DeadlineExceeded soon after the deadline,
/// no container started after it, every container stopped within the tick and the grace.
fn assert_killed_at_deadline(v: &Value, name: &str, deadline_s: u64, grace_s: u64) {
    let p = pod(v, name);
    let seed = &v["seed"];
    assert_eq!(p["finalPhase"], "Failed", "{name} seed {seed}");
    assert_eq!(p["reason"], "DeadlineExceeded", "{name} seed {seed}");
    // The status manager's startTime: podsim takes the pod's creation time.
    let deadline = ns(&p["createdAtNs"]) + deadline_s * S;
    let phases = p["phases"].as_array().unwrap();
    let failed_at = phases
        .iter()
        .find(|ph| ph[1] == "Failed")
        .map(|ph| ns(&ph[0]))
        .unwrap();
    // The kubelet's decision comes at the first tick at or after the deadline; the API
    // write follows within the status manager's latency.
    assert!(
        failed_at >= deadline && failed_at <= deadline + TICK + 3 * S,
        "{name} seed {seed}: Failed at {failed_at}, deadline {deadline}"
    );
    for c in p["containers"].as_array().unwrap() {
        assert!(!c["runningAtEnd"].as_bool().unwrap(), "{name} seed {seed}");
        let starts = times(c, "startedAtNs");
        assert!(
            starts.iter().all(|&t| t < deadline),
            "{name} seed {seed}: a start after the deadline {deadline}: {starts:?}"
        );
        let finished = times(c, "finishedAtNs");
        let last = *finished.last().unwrap();
        assert!(
            last <= deadline + TICK + grace_s * S + S,
            "{name} seed {seed}: stopped at {last}, deadline {deadline}"
        );
        for t in times(c, "sigtermsAtNs") {
            assert!(
                t >= deadline && t <= deadline + TICK + S,
                "{name} seed {seed}: SIGTERM at {t}"
            );
        }
    }
}

#[test]
fn pods_past_their_deadline_end_failed_deadline_exceeded() {
    for seed in SEEDS {
        let v = run_json(FILE, seed, &[]);
        assert_eq!(v["profile"], "current");
        assert_eq!(v["findings"], serde_json::json!([]), "seed {seed}");
        // Crash-looping under restartPolicy Always: not restarted past the deadline.
        assert_killed_at_deadline(&v, "crashloop", 30, 30);
        // Long-running: SIGTERM after the deadline, exits 2 s later (grace 10 s).
        assert_killed_at_deadline(&v, "server", 30, 10);
        let server = &pod(&v, "server")["containers"][0];
        assert_eq!(times(server, "sigtermsAtNs").len(), 1, "seed {seed}");
        assert_eq!(server["killedAtGraceExpiry"], 0, "seed {seed}");
        // Completed before its deadline: not affected.
        let job = pod(&v, "job");
        assert_eq!(job["finalPhase"], "Succeeded", "seed {seed}");
        assert_eq!(job["reason"], Value::Null, "seed {seed}");
        assert_eq!(job["containers"][0]["starts"], 1, "seed {seed}");
        assert_eq!(job["containers"][0]["lastExitCode"], 0, "seed {seed}");
    }
}

#[test]
fn without_the_deadline_the_pods_keep_running() {
    // The same file with the deadlines pushed past the horizon: nothing is killed.
    let sets = [
        "--set",
        "spec.pods[0].template.spec.activeDeadlineSeconds=100000",
        "--set",
        "spec.pods[1].template.spec.activeDeadlineSeconds=100000",
    ];
    let v = run_json(FILE, 1, &sets);
    assert_eq!(pod(&v, "crashloop")["finalPhase"], "Running");
    assert!(ns(&pod(&v, "crashloop")["containers"][0]["starts"]) > 3);
    assert_eq!(pod(&v, "server")["finalPhase"], "Running");
    assert!(pod(&v, "server")["containers"][0]["runningAtEnd"]
        .as_bool()
        .unwrap());
}
