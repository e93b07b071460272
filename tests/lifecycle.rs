//! Scenario tests of upstream lifecycle behaviour on the `current` profile. Each runs a file
//! under `scenarios/lifecycle/` through the `podsim` binary with `--json` and checks the
//! outcome: a compact per-pod summary that must be the same for every seed, plus timing
//! properties the upstream kubelet guarantees.

use assert_cmd::Command;
use serde_json::Value;

pub const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];
pub const S: u64 = 1_000_000_000;

/// `podsim run FILE --seed N --json`, parsed.
pub fn run_json(file: &str, seed: u64, extra: &[&str]) -> Value {
    let out = Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", file, "--seed", &seed.to_string(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "podsim run {file} --seed {seed} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One line per pod, sorted by name (pods created at the same instant get their UIDs in
/// scheduler order): name, final and last phase, and per container its start count, last
/// exit code, SIGKILLs at grace expiry and whether it still runs.
pub fn compact(v: &Value) -> Vec<String> {
    v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let cs: Vec<String> = p["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    format!(
                        "{}: starts={} exit={} killed={}{}",
                        c["name"].as_str().unwrap(),
                        c["starts"],
                        c["lastExitCode"],
                        c["killedAtGraceExpiry"],
                        if c["runningAtEnd"].as_bool().unwrap() {
                            " running"
                        } else {
                            ""
                        }
                    )
                })
                .collect();
            format!(
                "{} {}/{} | {}",
                p["name"].as_str().unwrap(),
                p["finalPhase"].as_str().unwrap(),
                p["lastPhase"].as_str().unwrap(),
                cs.join(", ")
            )
        })
        .collect::<std::collections::BTreeSet<String>>()
        .into_iter()
        .collect()
}

pub fn pod<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no pod {name}"))
}

pub fn ns(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

/// When the API server first held a terminal phase for the pod.
fn terminal_at(p: &Value) -> Option<u64> {
    p["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x[1] == "Succeeded" || x[1] == "Failed")
        .map(|x| ns(&x[0]))
}

#[test]
fn graceful_delete_sigterm_sigkill_and_removal_order() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/graceful-delete.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            [
                "drainer Deleted/Succeeded | app: starts=1 exit=0 killed=0",
                "polite Deleted/Succeeded | app: starts=1 exit=0 killed=0",
                "stubborn Deleted/Failed | app: starts=1 exit=137 killed=1",
            ],
            "seed {seed}"
        );
        for name in ["polite", "stubborn", "drainer"] {
            let p = pod(&v, name);
            let stopped = ns(&p["containersStoppedAtNs"]);
            let removed = ns(&p["removedFromApiAtNs"]);
            let terminal = terminal_at(p).expect("terminal phase written");
            // The API object goes only after the containers stopped and the terminal phase
            // was written (status manager canBeDeleted, v1.27+).
            assert!(
                stopped <= terminal && terminal <= removed,
                "{name} seed {seed}: {p}"
            );
            assert_eq!(p["removedBy"], "kubelet");
            // Teardown in upstream's order, each step observable: volumes unmounted after the
            // containers stopped, then the pod cgroup, then (TerminatePod) the API object;
            // the pod directory goes at a later housekeeping, once the pod left the config.
            let unmounted = ns(&p["volumesUnmountedAtNs"]);
            let cgroup = ns(&p["podCgroupRemovedAtNs"]);
            let dir = ns(&p["podDirRemovedAtNs"]);
            assert!(
                stopped < unmounted && unmounted < cgroup && cgroup < removed && removed < dir,
                "{name} seed {seed}: {p}"
            );
            assert_eq!(p["killedByCgroupRemoval"], 0);
        }
        let c = |name: &str| pod(&v, name)["containers"][0].clone();
        // SIGTERM within a watch delay + one sync of the deletion (10s).
        let polite_term = ns(&c("polite")["sigtermAtNs"]);
        assert!((10 * S..11 * S).contains(&polite_term), "seed {seed}");
        // The stubborn container is SIGKILLed when its 5s grace runs out.
        let st = c("stubborn");
        let kill = ns(&st["finishedAtNs"][0]) - ns(&st["sigtermAtNs"]);
        assert_eq!(kill, 5 * S, "seed {seed}: SIGKILL exactly at grace expiry");
        // The drainer's preStop hook (3s) runs before SIGTERM, within its grace.
        let d = c("drainer");
        let term = ns(&d["sigtermAtNs"]);
        assert!(
            (13 * S..14 * S).contains(&term),
            "seed {seed}: SIGTERM at {term}"
        );
        assert_eq!(
            ns(&d["finishedAtNs"][0]) - term,
            S,
            "seed {seed}: exits 1s after SIGTERM"
        );
    }
}

#[test]
fn delete_while_image_pulling_finishes_sync_then_terminates() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/delete-while-pulling.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            ["web Deleted/Succeeded | app: starts=1 exit=0 killed=0"],
            "seed {seed}"
        );
        let p = pod(&v, "web");
        let c = &p["containers"][0];
        // The in-flight SyncPod is not cancelled: the container starts after the 5s pull...
        let started = ns(&c["startedAtNs"][0]);
        assert!(started >= 5 * S, "seed {seed}: started at {started}");
        // ... and only then is it stopped, by SyncTerminatingPod.
        let term = ns(&c["sigtermAtNs"]);
        assert!(term >= started && term < started + 2 * S, "seed {seed}");
        assert!(ns(&p["removedFromApiAtNs"]) >= ns(&p["containersStoppedAtNs"]));
    }
}

#[test]
fn restart_policies_give_phases_and_crash_loop_back_off() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/restart-policies.yaml", seed, &[]);
        let lines = compact(&v);
        assert_eq!(
            lines[1],
            "never-fail Failed/Failed | c: starts=1 exit=1 killed=0"
        );
        assert_eq!(
            lines[2],
            "never-ok Succeeded/Succeeded | c: starts=1 exit=0 killed=0"
        );
        assert_eq!(
            lines[4],
            "onfailure-ok Succeeded/Succeeded | c: starts=1 exit=0 killed=0"
        );
        for name in ["onfailure-fail", "always"] {
            let p = pod(&v, name);
            assert_eq!(p["finalPhase"], "Running", "{name}");
            let c = &p["containers"][0];
            let starts: Vec<u64> = c["startedAtNs"]
                .as_array()
                .unwrap()
                .iter()
                .map(ns)
                .collect();
            let ends: Vec<u64> = c["finishedAtNs"]
                .as_array()
                .unwrap()
                .iter()
                .map(ns)
                .collect();
            // Delay between each exit and the next start.
            let gaps: Vec<u64> = starts
                .iter()
                .skip(1)
                .zip(&ends)
                .map(|(s, e)| s - e)
                .collect();
            assert!(gaps.len() >= 7, "{name} seed {seed}: {gaps:?}");
            // First restart is immediate (next PLEG relist + sync).
            assert!(gaps[0] < 2 * S, "{name} seed {seed}: {gaps:?}");
            // Then the back-off doubles from 10s and is capped at 300s; the pod worker
            // re-checks every 10-15s, so a restart lands at most ~16s after expiry.
            for (k, g) in gaps.iter().enumerate().skip(1) {
                let backoff = ((10 * S) << (k - 1)).min(300 * S);
                assert!(
                    *g >= backoff && *g <= backoff + 16 * S,
                    "{name} seed {seed}: gap {k} = {g} for back-off {backoff}: {gaps:?}"
                );
            }
            assert!(
                gaps.iter().any(|g| *g >= 300 * S),
                "{name}: cap reached: {gaps:?}"
            );
        }
    }
}

#[test]
fn force_delete_removes_object_at_once_and_kubelet_still_stops_containers() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/force-delete.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            ["stubborn Deleted/Running | app: starts=1 exit=137 killed=1"],
            "seed {seed}"
        );
        let p = pod(&v, "stubborn");
        assert_eq!(ns(&p["removedFromApiAtNs"]), 10 * S);
        assert_eq!(p["removedBy"], "force delete");
        // The kubelet saw deletion grace 0, which v1.31's calculateEffectiveGracePeriod
        // reads as unset: the spec's 30 s (issues 115819, 120449).
        let c = &p["containers"][0];
        let term = ns(&c["sigtermAtNs"]);
        assert!((10 * S..11 * S).contains(&term), "seed {seed}");
        assert_eq!(ns(&c["finishedAtNs"][0]) - term, 30 * S, "seed {seed}");
    }
}

#[test]
fn runtime_fault_during_stop_is_retried_and_pod_not_lost() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/stop-fault.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            ["web Deleted/Succeeded | app: starts=1 exit=0 killed=0"],
            "seed {seed}"
        );
        let p = pod(&v, "web");
        let term = ns(&p["containers"][0]["sigtermAtNs"]);
        // The first SyncTerminatingPod (at ~10s) fails; the retry comes after the pod
        // worker's 10-15s back-off, once the fault window (until 20s) has closed.
        assert!(
            (20 * S..26 * S).contains(&term),
            "seed {seed}: SIGTERM at {term}"
        );
        assert!(ns(&p["removedFromApiAtNs"]) > term);
    }
}

#[test]
fn quickstart_runs_clean() {
    let v = run_json("scenarios/quickstart.yaml", 1, &[]);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    assert_eq!(v["pods"].as_array().unwrap().len(), 4);
    assert_eq!(v["upstreamRelease"], "v1.31");
}

/// `podsim run FILE --seed N --json --trace T`: the JSON and the trace records (at, text).
pub fn run_json_trace(file: &str, seed: u64) -> (Value, Vec<(u64, String)>) {
    let path = std::env::temp_dir().join(format!(
        "podsim-trace-{}-{seed}-{}.jsonl",
        file.replace('/', "_"),
        std::process::id()
    ));
    let p = path.display().to_string();
    let v = run_json(file, seed, &["--trace", &p]);
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let recs = text
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            (
                r["atNs"].as_u64().unwrap(),
                r["rec"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (v, recs)
}

#[test]
fn image_pull_failures_back_off_and_termination_during_pull() {
    for seed in SEEDS {
        let (v, recs) = run_json_trace("scenarios/lifecycle/image-pull-backoff.yaml", seed);
        let at = |pat: &str| -> Vec<u64> {
            recs.iter()
                .filter(|(_, r)| r.contains(pat))
                .map(|(t, _)| *t)
                .collect()
        };
        let begins = at("cri uid-0001 PullImage#0 begin");
        let fails = at("cri uid-0001 PullImage#0 error");
        assert!(fails.len() >= 3, "seed {seed}: {fails:?}");
        // Each real pull after a failure waits out the image back-off, which doubles.
        for (k, f) in fails.iter().enumerate() {
            let next = begins.iter().find(|b| *b > f).copied().unwrap();
            let backoff = (10 * S) << k;
            assert!(
                next - f >= backoff,
                "seed {seed}: pull {k}: {begins:?} {fails:?}"
            );
            assert!(
                next - f <= backoff + 16 * S,
                "seed {seed}: pull {k}: {begins:?} {fails:?}"
            );
        }
        assert!(
            !at("ImagePullBackOff").is_empty(),
            "seed {seed}: syncs in back-off skip the pull"
        );
        let flaky = pod(&v, "flaky-registry");
        let started = ns(&flaky["containers"][0]["startedAtNs"][0]);
        assert!(started > 60 * S, "seed {seed}");
        assert_eq!(flaky["finalPhase"], "Running");
        // Deleted during its pull: the pull and the start complete, then the kill.
        let slow = pod(&v, "slow-pull");
        let c = &slow["containers"][0];
        assert_eq!(c["starts"], 1);
        assert!(ns(&c["startedAtNs"][0]) > ns(&slow["deletionRequestedAtNs"]));
        assert!(ns(&c["sigtermAtNs"]) >= ns(&c["startedAtNs"][0]));
        assert_eq!(slow["finalPhase"], "Deleted");
    }
}

/// The README's reference example (`scenarios/reference.yaml`) uses every
/// timeline action; it must validate and run with every action modelled.
#[test]
fn reference_scenario_runs_with_every_action_modelled() {
    let v = run_json("scenarios/reference.yaml", 1, &[]);
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    // Graceful node shutdown with shutdownGracePeriod 0 takes no lock: the node powers off
    // when asked (at 30 s).
    assert_eq!(v["metrics"]["powerOffAtNs"], 30 * S);
    assert_eq!(v["metrics"]["powerOffCause"], "no inhibitor lock");
    let names: Vec<&str> = v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"web-0") && names.contains(&"web-1") && names.contains(&"etcd"));
}

/// A PreStop hook ends with its container: the exec'd hook process dies with the
/// container (an HTTP hook loses its server), so the kubelet's stop goes on at once
/// instead of waiting out the hook's duration; a hook into a container that is not
/// running ends at once. Upstream: `kuberuntime_container.go` `executePreStopHook` runs
/// the hook against the container and returns when the hook call returns.
#[test]
fn prestop_hook_ends_when_its_container_exits() {
    let yaml = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata:\n  name: hook-ends\nspec:\n  horizon: 2m\n  pods:\n    - template:\n        metadata: {name: web}\n        spec:\n          terminationGracePeriodSeconds: 60\n          restartPolicy: Never\n          containers:\n            - {name: app, image: app:1, lifecycle: {preStop: {exec: {command: [drain]}}}}\n      behaviour:\n        app: {runFor: 20s, preStopDuration: 40s}\n  timeline:\n    - {at: 10s, deletePod: {pod: web}}\n";
    let sc = std::sync::Arc::new(
        podsim::load_str("hook.yaml", yaml, &[])
            .expect("valid")
            .scenario,
    );
    for seed in 1..=3 {
        let out = podsim::run::run(
            sc.clone(),
            &podsim::run::RunOptions {
                seed,
                keep_trace: true,
                ..Default::default()
            },
        );
        let at = |needle: &str| {
            out.trace
                .iter()
                .find(|r| r.text.contains(needle))
                .map(|r| r.at.0)
                .unwrap_or_else(|| panic!("seed {seed}: no `{needle}` record"))
        };
        let exited = at("exited code=0");
        let hook_began = at("ExecPreStop#");
        let hook_ok = out
            .trace
            .iter()
            .filter(|r| r.text.contains("ExecPreStop#") && r.text.ends_with(" ok"))
            .map(|r| r.at.0)
            .next()
            .expect("the hook's reply");
        // The hook began around the delete (10 s), the container exited at about 20 s
        // (its runFor), and the hook's reply came with that exit, not at 10 s + 40 s.
        assert!(hook_began < exited, "seed {seed}");
        assert_eq!(
            hook_ok, exited,
            "seed {seed}: hook reply at {hook_ok}, exit at {exited}"
        );
        // One reply only: the hook's own end later is dropped.
        let replies = out
            .trace
            .iter()
            .filter(|r| r.text.contains("ExecPreStop#") && r.text.ends_with(" ok"))
            .count();
        assert_eq!(replies, 1, "seed {seed}");
        assert!(out.findings.is_empty(), "seed {seed}: {:?}", out.findings);
    }
}
