//! Scenario tests of the `kubeletRestart` action on `scenarios/restart/*.yaml`: the kubelet
//! process dies, loses every in-memory structure, and a new one rebuilds from the runtime,
//! the API server and the disk. Each runs through the `podsim` binary with `--json` on
//! seeds 1-5.

use crate::lifecycle::{compact, ns, pod, run_json, S, SEEDS};
use assert_cmd::Command;
use serde_json::Value;

fn nums(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(ns).collect()
}

/// The phases the API server held, in order.
fn phases(p: &Value) -> Vec<String> {
    p["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x[1].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn restart_keeps_running_pods_running_without_restarts() {
    for seed in SEEDS {
        let v = run_json("scenarios/restart/keep-running.yaml", seed, &[]);
        assert_eq!(ns(&v["metrics"]["kubeletRestarts"]), 1, "seed {seed}");
        assert_eq!(
            compact(&v),
            [
                "drainer Running/Running | app: starts=1 exit=null killed=0 running",
                "once Running/Running | c: starts=1 exit=null killed=0 running",
                "retry Running/Running | c: starts=1 exit=null killed=0 running",
                "web Running/Running | app: starts=1 exit=null killed=0 running, sidecar: starts=1 exit=null killed=0 running",
            ],
            "seed {seed}"
        );
        for p in v["pods"].as_array().unwrap() {
            // The API phase never left Running, and nothing was signalled.
            assert_eq!(phases(p), ["Pending", "Running"], "seed {seed}: {p}");
            for c in p["containers"].as_array().unwrap() {
                assert!(c["sigtermAtNs"].is_null(), "seed {seed}: {c}");
                assert!(
                    nums(&c["startedAtNs"]).iter().all(|t| *t < 30 * S),
                    "seed {seed}: {c}"
                );
            }
            // The volumes stay mounted: the new kubelet reconstructed them from disk.
            assert!(p["volumesUnmountedAtNs"].is_null(), "seed {seed}: {p}");
        }
    }
}

#[test]
fn pod_deleted_during_downtime_is_terminated_after_restart() {
    for seed in SEEDS {
        let v = run_json("scenarios/restart/delete-during-downtime.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            [
                "bystander Running/Running | app: starts=1 exit=null killed=0 running",
                "forced Deleted/Running | app: starts=1 exit=143 killed=0",
                "graceful Deleted/Succeeded | app: starts=1 exit=0 killed=0",
            ],
            "seed {seed}"
        );
        // `graceful`: the new kubelet (up at 30s) sends SIGTERM, writes the terminal
        // phase, tears down (including the reconstructed volumes), then deletes the object.
        let g = pod(&v, "graceful");
        let term = ns(&g["containers"][0]["sigtermAtNs"]);
        assert!((30 * S..31 * S).contains(&term), "seed {seed}: {g}");
        let stopped = ns(&g["containersStoppedAtNs"]);
        let unmounted = ns(&g["volumesUnmountedAtNs"]);
        let removed = ns(&g["removedFromApiAtNs"]);
        assert!(
            stopped < unmounted && unmounted < removed,
            "seed {seed}: {g}"
        );
        assert_eq!(g["removedBy"], "kubelet");
        assert!(removed < 40 * S, "seed {seed}: {g}");
        // `forced` left the API at once; its containers ran on until housekeeping of the
        // new kubelet (sources ready after ~30s) killed the orphaned runtime pod.
        let f = pod(&v, "forced");
        assert_eq!(ns(&f["removedFromApiAtNs"]), 25 * S);
        let fterm = ns(&f["containers"][0]["sigtermAtNs"]);
        assert!((30 * S..33 * S).contains(&fterm), "seed {seed}: {f}");
        assert!(ns(&f["containersStoppedAtNs"]) < 33 * S, "seed {seed}: {f}");
        // Nothing touched the bystander.
        assert!(pod(&v, "bystander")["containers"][0]["sigtermAtNs"].is_null());
    }
}

#[test]
fn terminal_pod_is_not_restarted_and_pod_created_during_downtime_starts() {
    for seed in SEEDS {
        let v = run_json("scenarios/restart/terminal-and-new.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            [
                "done Succeeded/Succeeded | c: starts=1 exit=0 killed=0",
                "job Succeeded/Succeeded | c: starts=1 exit=0 killed=0",
                "late Running/Running | app: starts=1 exit=null killed=0 running",
            ],
            "seed {seed}"
        );
        for name in ["job", "done"] {
            let p = pod(&v, name);
            // First sight of a terminal pod (issue 105523): recorded as terminated, never
            // synced as a running pod, its phase written once and never again.
            assert_eq!(
                phases(p),
                ["Pending", "Running", "Succeeded"],
                "seed {seed}: {p}"
            );
            let succeeded_at = ns(&p["phases"][2][0]);
            assert!(succeeded_at < 20 * S, "seed {seed}: {p}");
        }
        // `late` was created while the kubelet was down (25s) and starts after the
        // restart (30s).
        let l = pod(&v, "late");
        let started = ns(&l["containers"][0]["startedAtNs"][0]);
        assert!((30 * S..33 * S).contains(&started), "seed {seed}: {l}");
    }
}

#[test]
fn crash_loop_back_off_is_lost_with_the_kubelet() {
    for seed in SEEDS {
        let v = run_json("scenarios/restart/crash-loop.yaml", seed, &[]);
        let starts = nums(&pod(&v, "crashy")["containers"][0]["startedAtNs"]);
        // Right after the restart (62s) the new kubelet, with an empty back-off table,
        // starts the crashed container again.
        assert!(
            starts.iter().any(|t| (62 * S..63 * S).contains(t)),
            "seed {seed}: {starts:?}"
        );
        // Without the restart, the back-off (40s after the start at ~47-49s) holds it.
        let v = run_json(
            "scenarios/restart/crash-loop.yaml",
            seed,
            &["--set", "spec.timeline=[]"],
        );
        let starts = nums(&pod(&v, "crashy")["containers"][0]["startedAtNs"]);
        assert!(
            !starts.iter().any(|t| (55 * S..85 * S).contains(t)),
            "seed {seed}: {starts:?}"
        );
    }
}

#[test]
fn restart_runs_are_deterministic() {
    for file in [
        "scenarios/restart/keep-running.yaml",
        "scenarios/restart/delete-during-downtime.yaml",
        "scenarios/restart/terminal-and-new.yaml",
        "scenarios/restart/crash-loop.yaml",
    ] {
        for seed in SEEDS {
            let a = run_json(file, seed, &[]);
            let b = run_json(file, seed, &[]);
            assert_eq!(a["traceHash"], b["traceHash"], "{file} seed {seed}");
            assert_eq!(a["events"], b["events"], "{file} seed {seed}");
        }
        // And on another thread, comparing every record.
        Command::cargo_bin("podsim")
            .unwrap()
            .args(["run", file, "--check-determinism"])
            .assert()
            .success();
    }
}

/// A node under memory pressure with a probed pod, whose kubelet restarts at 40s after it
/// has probed, set `MemoryPressure` and evicted.
const TALLIES: &str = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata:
  name: restart-keeps-tallies
spec:
  horizon: 70s
  node:
    capacity: {cpu: \"8\", memory: 2Gi, pods: \"110\"}
  pods:
    - template:
        metadata: {name: web}
        spec:
          priority: 2000000000
          containers:
            - name: app
              image: example/app:1
              readinessProbe: {httpGet: {path: /ready, port: 8080}, periodSeconds: 2}
      behaviour: {app: {memoryUsage: 100Mi}}
    - template:
        metadata: {name: hog}
        spec: {containers: [{name: app, image: example/app:1}]}
      behaviour: {app: {memoryUsage: 500Mi}}
  timeline:
    - {at: 20s, memoryPressure: {available: 50Mi}}
    - {at: 40s, kubeletRestart: {downtime: 5s}}
";

/// The run's probe, eviction and node-condition metrics cover every kubelet incarnation,
/// not only the one running at the end: they match what the trace recorded.
#[test]
fn metrics_count_every_kubelet_incarnation() {
    use podsim::run::{run, RunOptions};
    let sc = podsim::load_str("tallies.yaml", TALLIES, &[])
        .unwrap_or_else(|e| panic!("invalid test scenario:\n{e}"))
        .scenario;
    let sc = std::sync::Arc::new(sc);
    for seed in SEEDS {
        let out = run(
            sc.clone(),
            &RunOptions {
                seed,
                keep_trace: true,
                ..Default::default()
            },
        );
        let m = &out.metrics;
        assert_eq!(m.kubelet_restarts, 1, "seed {seed}");
        let recorded = |prefix: &str, before: u64| {
            out.trace
                .iter()
                .filter(|r| r.at.0 < before && r.text.starts_with(prefix))
                .count() as u64
        };
        // The kubelet that died at 40s probed, set MemoryPressure and evicted `hog`.
        assert!(recorded("probe ", 40 * S) > 0, "seed {seed}");
        assert!(
            recorded("eviction MemoryPressure=true", 40 * S) > 0,
            "seed {seed}"
        );
        let evict = |r: &&podsim::sim::trace::Record| {
            r.text.starts_with("eviction ") && r.text.contains(" evict grace=")
        };
        assert!(
            out.trace.iter().filter(evict).any(|r| r.at.0 < 40 * S),
            "seed {seed}"
        );
        assert_eq!(m.probes_run, recorded("probe ", u64::MAX), "seed {seed}");
        assert_eq!(
            m.evictions.len(),
            out.trace.iter().filter(evict).count(),
            "seed {seed}"
        );
        let conditions: Vec<(u64, String, bool)> = out
            .trace
            .iter()
            .filter_map(|r| {
                let (c, s) = r.text.strip_prefix("eviction ")?.split_once('=')?;
                let s = s.parse::<bool>().ok()?;
                Some((r.at.0, c.to_string(), s))
            })
            .collect();
        assert_eq!(m.node_conditions, conditions, "seed {seed}");
        assert!(m.evictions.iter().any(|e| e.pod == "hog"), "seed {seed}");
    }
}
