//! Init containers and native sidecars on `current` (v1.31 with the `SidecarContainers`
//! gate on): `scenarios/lifecycle/init-containers.yaml` and
//! `scenarios/lifecycle/sidecar-job.yaml` over seeds 1-5, asserted from `--json`.

use crate::lifecycle::{ns, pod, run_json, S, SEEDS};
use serde_json::Value;

const INIT: &str = "scenarios/lifecycle/init-containers.yaml";
const SIDECAR: &str = "scenarios/lifecycle/sidecar-job.yaml";

fn times(c: &Value, key: &str) -> Vec<u64> {
    c[key].as_array().unwrap().iter().map(ns).collect()
}

/// The container `name` of pod `p`, among its init containers and its app containers.
fn container<'a>(p: &'a Value, name: &str) -> &'a Value {
    p["initContainers"]
        .as_array()
        .unwrap()
        .iter()
        .chain(p["containers"].as_array().unwrap())
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

fn phases(p: &Value) -> Vec<String> {
    p["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|ph| ph[1].as_str().unwrap().to_string())
        .collect()
}

/// When the pod's API phase first became `phase`.
fn phase_at(p: &Value, phase: &str) -> Option<u64> {
    p["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|ph| ph[1] == phase)
        .map(|ph| ns(&ph[0]))
}

#[test]
fn init_containers_run_in_order_each_to_completion_before_the_app() {
    for seed in SEEDS {
        let v = run_json(INIT, seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        let p = pod(&v, "ordered");
        let (migrate, warm, app) = (
            container(p, "migrate"),
            container(p, "warm"),
            container(p, "app"),
        );
        // One start each, although the kubelet restarted at 60s: the completed init
        // containers are not run again while the app runs in the same sandbox.
        assert_eq!(v["metrics"]["kubeletRestarts"], 1, "seed {seed}");
        for c in [migrate, warm, app] {
            assert_eq!(c["starts"], 1, "seed {seed}: {c}");
        }
        assert_eq!(migrate["lastExitCode"], 0);
        assert_eq!(warm["lastExitCode"], 0);
        let migrate_done = times(migrate, "finishedAtNs")[0];
        let warm_start = times(warm, "startedAtNs")[0];
        let warm_done = times(warm, "finishedAtNs")[0];
        let app_start = times(app, "startedAtNs")[0];
        assert!(
            migrate_done <= warm_start,
            "seed {seed}: warm before migrate ended"
        );
        assert!(warm_done <= app_start, "seed {seed}: app before warm ended");
        assert_eq!(warm_done - times(warm, "startedAtNs")[0], 2 * S);
        // Pending while the init containers run, Running once the app runs.
        assert_eq!(phases(p), ["Pending", "Running"], "seed {seed}");
        assert!(phase_at(p, "Running").unwrap() >= app_start, "seed {seed}");
        assert_eq!(p["finalPhase"], "Running");
    }
}

#[test]
fn failing_init_container_restarts_under_on_failure_and_fails_the_pod_under_never() {
    for seed in SEEDS {
        let v = run_json(INIT, seed, &[]);
        // OnFailure: restarted with crash-loop back-off; the app never starts.
        let p = pod(&v, "init-fails-onfailure");
        let check = container(p, "check");
        let starts = times(check, "startedAtNs");
        assert!(starts.len() >= 4, "seed {seed}: {starts:?}");
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        // Back-off grows: the third gap is at least 10 s longer than the second.
        assert!(gaps[2] >= gaps[1] + 10 * S, "seed {seed}: {gaps:?}");
        assert_eq!(container(p, "app")["starts"], 0, "seed {seed}");
        assert_eq!(phases(p), ["Pending"], "seed {seed}");
        // Never: the pod fails after the one run; the app never starts.
        let p = pod(&v, "init-fails-never");
        assert_eq!(container(p, "check")["starts"], 1, "seed {seed}");
        assert_eq!(container(p, "check")["lastExitCode"], 1, "seed {seed}");
        assert_eq!(container(p, "app")["starts"], 0, "seed {seed}");
        assert_eq!(phases(p), ["Pending", "Failed"], "seed {seed}");
    }
}

#[test]
fn job_with_sidecar_succeeds_after_the_sidecar_is_stopped() {
    for seed in SEEDS {
        let v = run_json(SIDECAR, seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        let p = pod(&v, "job");
        let (proxy, main) = (container(p, "proxy"), container(p, "main"));
        assert_eq!(proxy["restartPolicy"], "Always");
        assert!(main.get("restartPolicy").is_none());
        // The sidecar started before the main container, which did not wait for it to end.
        let proxy_start = times(proxy, "startedAtNs")[0];
        let main_start = times(main, "startedAtNs")[0];
        assert!(proxy_start < main_start, "seed {seed}");
        let main_done = times(main, "finishedAtNs")[0];
        assert_eq!(main_done - main_start, 5 * S, "seed {seed}");
        // SIGTERM to the sidecar only after the main container exited; the pod is
        // Succeeded only after the sidecar stopped.
        let proxy_term = ns(&proxy["sigtermAtNs"]);
        assert!(proxy_term >= main_done, "seed {seed}");
        let proxy_done = times(proxy, "finishedAtNs")[0];
        assert_eq!(proxy["starts"], 1, "seed {seed}");
        assert_eq!(
            phases(p),
            ["Pending", "Running", "Succeeded"],
            "seed {seed}"
        );
        assert!(
            phase_at(p, "Succeeded").unwrap() >= proxy_done,
            "seed {seed}"
        );
    }
}

#[test]
fn crashing_sidecar_is_restarted_with_back_off_under_restart_policy_never() {
    for seed in SEEDS {
        let v = run_json(SIDECAR, seed, &[]);
        let p = pod(&v, "crashing-sidecar");
        let agent = container(p, "agent");
        let starts = times(agent, "startedAtNs");
        assert!(starts.len() >= 4, "seed {seed}: {starts:?}");
        let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps[2] >= gaps[1] + 10 * S, "seed {seed}: {gaps:?}");
        assert_eq!(agent["lastExitCode"], 1);
        // The app is not restarted, keeps running, and the pod stays Running.
        let main = container(p, "main");
        assert_eq!(main["starts"], 1, "seed {seed}");
        assert_eq!(main["runningAtEnd"], true, "seed {seed}");
        assert_eq!(phases(p), ["Pending", "Running"], "seed {seed}");
    }
}

#[test]
fn sidecars_stop_after_the_app_in_reverse_order() {
    for seed in SEEDS {
        let v = run_json(SIDECAR, seed, &[]);
        let p = pod(&v, "two-sidecars");
        let (logs, mesh, app) = (
            container(p, "logs"),
            container(p, "mesh"),
            container(p, "app"),
        );
        let deleted = ns(&p["deletionRequestedAtNs"]);
        let app_term = ns(&app["sigtermAtNs"]);
        let app_done = times(app, "finishedAtNs")[0];
        let mesh_term = ns(&mesh["sigtermAtNs"]);
        let mesh_done = times(mesh, "finishedAtNs")[0];
        let logs_term = ns(&logs["sigtermAtNs"]);
        assert!(app_term >= deleted, "seed {seed}");
        assert!(app_term < mesh_term, "seed {seed}");
        assert!(
            mesh_term >= app_done,
            "seed {seed}: mesh before the app exited"
        );
        assert!(
            logs_term >= mesh_done,
            "seed {seed}: logs before mesh exited"
        );
        assert_eq!(app_done - app_term, 4 * S, "seed {seed}");
        // Without the ordering (v1.28), every container gets SIGTERM at once, and the
        // oracle says so.
        let old = run_json(
            SIDECAR,
            seed,
            &[
                "--set",
                "spec.kubelet.behaviours.sidecarsStopAfterMainContainers=false",
                "--set",
                "spec.expect.findings=[sidecars-stop-after-main-containers]",
            ],
        );
        let found: Vec<&str> = old["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["invariant"].as_str().unwrap())
            .collect();
        assert_eq!(
            found,
            ["sidecars-stop-after-main-containers"],
            "seed {seed}"
        );
        let p = pod(&old, "two-sidecars");
        let first_term = |n: &str| ns(&container(p, n)["sigtermAtNs"]);
        assert!(first_term("mesh") < times(container(p, "app"), "finishedAtNs")[0]);
        assert!(first_term("logs") < times(container(p, "app"), "finishedAtNs")[0]);
    }
}
