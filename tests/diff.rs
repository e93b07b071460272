//! `podsim diff` and `--scheduler`: the first divergence between two profiles on a race
//! catalog entry, identical sides, trace files, and the PCT and FIFO schedulers through the
//! binary (determinism, replay lines, bad values).

use crate::scratch::{Scratch, ScratchFile};
use assert_cmd::Command;
use serde_json::Value;

const POD_WORKER: &str = "scenarios/races/pod-worker-owns-lifecycle.yaml";

fn podsim(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("podsim")
        .unwrap()
        .args(args)
        .output()
        .unwrap()
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn tmp(name: &str) -> ScratchFile {
    Scratch::new("diff", name).file(name)
}

#[test]
fn diff_names_the_first_divergence_of_the_pod_worker_entry() {
    for seed in ["1", "2", "3"] {
        let out = podsim(&[
            "diff",
            POD_WORKER,
            "--seed",
            seed,
            "--profile",
            "v1.21",
            "--profile",
            "current",
            "--json",
        ]);
        assert_eq!(out.status.code(), Some(1), "seed {seed}: the runs differ");
        let d = json(&out);
        let v = &d["divergence"];
        // v1.21 starts SyncPod straight from dispatchWork; since PR 102344 the pod worker
        // records the pod as started first.
        assert_eq!(v["left"]["text"], "sync uid-0001 SyncPod begin", "{v}");
        assert_eq!(v["right"]["text"], "pw uid-0001 started", "{v}");
        let at = v["at"].as_u64().unwrap();
        let first_finding = d["findings"]["left"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["atNs"].as_u64().unwrap())
            .min()
            .expect("v1.21 has findings here");
        assert!(
            at < first_finding,
            "divergence {at} after finding {first_finding}"
        );
        assert_eq!(d["findings"]["right"].as_array().unwrap().len(), 0);
        // The common prefix is shown (10 by default) and really is common.
        let index = v["index"].as_u64().unwrap();
        let before = v["before"].as_array().unwrap();
        assert_eq!(before.len() as u64, index.min(10));
        assert_eq!(before.last().unwrap()["index"].as_u64(), Some(index - 1));
        // Pods ending differently carry the findings of their side.
        let pods = d["pods"].as_array().unwrap();
        assert!(!pods.is_empty());
        assert!(pods
            .iter()
            .any(|p| !p["left"]["findings"].as_array().unwrap().is_empty()
                && p["right"]["findings"].as_array().unwrap().is_empty()));
    }
    let out = podsim(&[
        "diff",
        POD_WORKER,
        "--seed",
        "1",
        "--profile",
        "v1.21",
        "--profile",
        "current",
        "--context",
        "3",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("first divergence at transition #"), "{text}");
    assert!(text.contains("sync uid-0001 SyncPod begin | "), "{text}");
    assert!(text.contains("pw uid-0001 started"), "{text}");
    assert!(text.contains("--profile v1.21"), "{text}");
    assert!(text.contains("pods that end differently:"), "{text}");
    assert!(text.contains("right: none"), "{text}");
}

#[test]
fn identical_sides_exit_0_with_no_divergence() {
    let out = podsim(&["diff", POD_WORKER, "--seed", "2"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no divergence"), "{text}");
    let out = podsim(&[
        "diff",
        POD_WORKER,
        "--seed",
        "2",
        "--profile",
        "current",
        "--set-both",
        "spec.horizon=30s",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let d = json(&out);
    assert!(d["divergence"].is_null());
    assert_eq!(d["identical"], true);
    assert_eq!(d["pods"].as_array().unwrap().len(), 0);
}

#[test]
fn a_set_goes_to_the_right_side_only() {
    let out = podsim(&[
        "diff",
        POD_WORKER,
        "--seed",
        "1",
        "--set",
        "spec.kubelet.profile=v1.21",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let d = json(&out);
    assert_eq!(d["divergence"]["left"]["text"], "pw uid-0001 started");
    assert_eq!(
        d["divergence"]["right"]["text"],
        "sync uid-0001 SyncPod begin"
    );
    let right = d["sides"]["right"]["replay"].as_str().unwrap();
    assert!(
        right.contains("--set spec.kubelet.profile=v1.21"),
        "{right}"
    );
    assert!(!d["sides"]["left"]["replay"]
        .as_str()
        .unwrap()
        .contains("--set"));
}

#[test]
fn diff_of_two_trace_files() {
    let (a, b) = (tmp("v121.trace"), tmp("current.trace"));
    for (profile, file) in [("v1.21", &a), ("current", &b)] {
        let out = podsim(&[
            "run",
            POD_WORKER,
            "--seed",
            "1",
            "--profile",
            profile,
            "--trace",
            file.to_str().unwrap(),
        ]);
        assert!(out.status.code().unwrap() <= 1, "{out:?}");
    }
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let files = json(&podsim(&["diff", a, b, "--json"]));
    let runs = json(&podsim(&[
        "diff",
        POD_WORKER,
        "--seed",
        "1",
        "--profile",
        "v1.21",
        "--profile",
        "current",
        "--json",
    ]));
    assert_eq!(files["divergence"], runs["divergence"]);
    assert_eq!(files["pods"].as_array().unwrap().len(), 0);
    let out = podsim(&["diff", a, b]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("trace files hold no pod outcomes"));
    let same = podsim(&["diff", a, a]);
    assert_eq!(same.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&same.stdout).contains("no divergence"));
    // Scenario flags do not apply to trace files; a bad line is named.
    assert_eq!(
        podsim(&["diff", a, b, "--seed", "2"]).status.code(),
        Some(2)
    );
    let bad = tmp("bad.trace");
    std::fs::write(&bad, "{\"i\": 0}\n").unwrap();
    let out = podsim(&["diff", bad.to_str().unwrap(), a]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.trace:1: not a trace record"), "{err}");
}

#[test]
fn diff_rejects_bad_input_with_exit_2() {
    for args in [
        &[
            "diff",
            POD_WORKER,
            "--profile",
            "v1.21",
            "--profile",
            "v1.22",
            "--profile",
            "current",
        ][..],
        &["diff", POD_WORKER, "--profile", "v9"],
        &["diff", POD_WORKER, "--scheduler", "pct:0"],
        &["diff", POD_WORKER, "--set", "nonsense"],
        &["diff", "no-such-file.yaml"],
    ] {
        let out = podsim(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("error"),
            "{args:?}"
        );
    }
}

fn run_json(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = podsim(&all);
    assert!(out.status.code().unwrap() <= 1, "{args:?}: {out:?}");
    json(&out)
}

#[test]
fn pct_runs_are_deterministic_and_replay_from_their_line() {
    for seed in ["1", "4"] {
        let args = [POD_WORKER, "--seed", seed, "--scheduler", "pct:3"];
        let (a, b) = (run_json(&args), run_json(&args));
        assert_eq!(a["traceHash"], b["traceHash"]);
        assert_eq!(a["scheduler"], "pct:3");
        let replay = a["replay"].as_str().unwrap();
        assert!(replay.ends_with(" --scheduler pct:3"), "{replay}");
        let words: Vec<&str> = replay.split_whitespace().collect();
        assert_eq!(&words[..2], &["podsim", "run"]);
        let again = run_json(&words[2..]);
        assert_eq!(again["traceHash"], a["traceHash"], "{replay}");
    }
    // The default scheduler is neither echoed nor in the replay line.
    let r = run_json(&[POD_WORKER, "--seed", "1"]);
    assert!(r.get("scheduler").is_none());
    assert!(!r["replay"].as_str().unwrap().contains("--scheduler"));
}

#[test]
fn schedulers_change_the_order_of_same_instant_events() {
    // Four pods created at the same instant: their UIDs follow the scheduler's order.
    let hashes = |sched: &str| -> Vec<Value> {
        ["1", "2", "3"]
            .iter()
            .map(|s| {
                run_json(&[POD_WORKER, "--seed", s, "--scheduler", sched])["traceHash"].clone()
            })
            .collect()
    };
    let random = hashes("random");
    let fifo = hashes("fifo");
    let pct = hashes("pct:2");
    assert!(random.iter().zip(&fifo).any(|(r, f)| r != f));
    assert!(random.iter().zip(&pct).any(|(r, p)| r != p));
    // `--scheduler random` is the default: the same runs as without the flag.
    let plain = run_json(&[POD_WORKER, "--seed", "1"]);
    assert_eq!(plain["traceHash"], random[0]);
}

#[test]
fn bad_schedulers_are_errors_with_exit_2() {
    for bad in ["pct:0", "pct:x", "foo", "pct", "pct:2:0"] {
        for cmd in ["run", "sweep"] {
            let out = podsim(&[cmd, POD_WORKER, "--scheduler", bad]);
            assert_eq!(out.status.code(), Some(2), "{cmd} --scheduler {bad}");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&format!("--scheduler {bad}")), "{err}");
        }
    }
    // In a scenario file: the field, file, line and column are named.
    let text = std::fs::read_to_string(POD_WORKER)
        .unwrap()
        .replace("  horizon: 1m\n", "  horizon: 1m\n  scheduler: pct:x\n");
    let f = tmp("bad-scheduler.yaml");
    std::fs::write(&f, text).unwrap();
    let out = podsim(&["run", f.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad-scheduler.yaml:"), "{err}");
    assert!(err.contains("spec.scheduler"), "{err}");
    assert!(err.contains("not a whole number"), "{err}");
}

#[test]
fn a_sweep_with_a_scheduler_carries_it_in_its_replay_lines() {
    let out_dir = tmp("sweep");
    let out = podsim(&[
        "sweep",
        POD_WORKER,
        "--seeds",
        "2",
        "--profile",
        "v1.21",
        "--scheduler",
        "pct:2",
        "--jobs",
        "1",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.code().unwrap() <= 1, "{out:?}");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["scheduler"], "pct:2");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("--scheduler pct:2"), "{table}");
}
