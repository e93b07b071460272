//! The older profiles as their releases shipped (issue #12's "must show" for `v1.22`, and
//! the v1.23 / v1.25 counterparts where the outcome changes there): the bundled scenarios
//! under `scenarios/releases/` (on `current`, like every bundled file), seeds 1-5, asserted
//! from `--json` with `--set spec.kubelet.profile=RELEASE` and on `current` (today's
//! outcome). `conformance.rs` checks one observable of each on every release.

use crate::lifecycle::{ns, pod, S, SEEDS};
use assert_cmd::Command;
use serde_json::Value;

/// Slack for the CRI and watch latencies around an exact grace.
const SLACK: u64 = S / 5;

/// `podsim run FILE --seed N --json --set spec.kubelet.profile=PROFILE`, parsed. Findings
/// (exit code 1) are expected here: they are asserted from the output.
fn run(file: &str, seed: u64, profile: &str) -> Value {
    let out = Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", file, "--seed", &seed.to_string(), "--json", "--set"])
        .arg(format!("spec.kubelet.profile={profile}"))
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "podsim run {file} --seed {seed} on {profile} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["profile"], profile);
    let release = if profile == "current" {
        "v1.31"
    } else {
        profile
    };
    assert_eq!(v["release"], release);
    v
}

/// (invariant, pod) of every finding, sorted.
fn findings(v: &Value) -> Vec<(String, String)> {
    let mut f: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (s("invariant"), s("pod"))
        })
        .collect();
    f.sort();
    f
}

fn times(c: &Value, key: &str) -> Vec<u64> {
    c[key].as_array().unwrap().iter().map(ns).collect()
}

fn near(got: u64, want: u64, what: &str) {
    assert!(
        got >= want && got <= want + SLACK,
        "{what}: at {got}, want {want} (+{SLACK})"
    );
}

const DELETED: &str = "scenarios/releases/deleted-always-running.yaml";

#[test]
fn deleted_always_pod_leaves_the_api_running_before_v127() {
    for (seed, release) in SEEDS
        .into_iter()
        .zip(["v1.22", "v1.23", "v1.25", "v1.22", "v1.23"])
    {
        let v = run(DELETED, seed, release);
        assert_eq!(v["behaviours"]["podDeletedOnlyWhenTerminal"], false);
        let p = pod(&v, "web");
        assert_eq!(p["finalPhase"], "Deleted", "seed {seed}");
        assert_eq!(p["removedBy"], "kubelet", "seed {seed}");
        assert_eq!(p["lastPhase"], "Running", "seed {seed}");
        let phases = p["phases"].as_array().unwrap();
        assert!(phases
            .iter()
            .all(|x| x[1] != "Failed" && x[1] != "Succeeded"));
        let want = vec![("delete-only-after-reclamation".into(), "web".into())];
        assert_eq!(findings(&v), want, "seed {seed}");

        let v = run(
            DELETED,
            seed,
            if seed % 2 == 0 { "v1.27" } else { "current" },
        );
        let p = pod(&v, "web");
        assert_eq!(p["finalPhase"], "Deleted", "seed {seed}");
        assert_eq!(p["lastPhase"], "Succeeded", "seed {seed}");
        assert_eq!(findings(&v), vec![], "seed {seed}");
    }
}

const SHUTDOWN: &str = "scenarios/releases/shutdown-v122.yaml";
/// The shutdown starts at 10s; 30s in all, 10s of them for critical pods.
const SHUTDOWN_AT: u64 = 10 * S;

#[test]
fn v122_shutdown_kills_keep_phase_running_and_critical_pods_wait() {
    for seed in SEEDS {
        let v = run(SHUTDOWN, seed, "v1.22");
        assert_eq!(v["behaviours"]["shutdownKillsByPriorityGroups"], false);
        let mut want = Vec::new();
        for name in ["agent", "web", "worker"] {
            let p = pod(&v, name);
            assert_eq!(p["lastPhase"], "Running", "{name} seed {seed}");
            assert_eq!(p["reason"], "Terminated", "{name} seed {seed}");
            want.push(("shutdown-pods-failed".to_owned(), name.to_owned()));
        }
        assert_eq!(findings(&v), want, "seed {seed}");
        // Non-critical pods at once; the worker's own 5s grace is shorter than the 20s.
        let web = &pod(&v, "web")["containers"][0];
        near(times(web, "sigtermsAtNs")[0], SHUTDOWN_AT, "web SIGTERM");
        let worker = &pod(&v, "worker")["containers"][0];
        let term = times(worker, "sigtermsAtNs")[0];
        near(term, SHUTDOWN_AT, "worker SIGTERM");
        near(
            times(worker, "finishedAtNs")[0],
            term + 5 * S,
            "worker SIGKILL",
        );
        // The critical pod sleeps the whole non-critical period though the others are done.
        let agent = &pod(&v, "agent")["containers"][0];
        near(
            times(agent, "sigtermsAtNs")[0],
            SHUTDOWN_AT + 20 * S,
            "agent SIGTERM",
        );

        let v = run(SHUTDOWN, seed, "current");
        assert_eq!(findings(&v), vec![], "seed {seed}");
        assert_eq!(pod(&v, "web")["lastPhase"], "Succeeded", "seed {seed}");
        let worker = pod(&v, "worker");
        assert_eq!(worker["lastPhase"], "Failed", "seed {seed}");
        assert_eq!(worker["reason"], "Terminated", "seed {seed}");
        // v1.31's groups: the critical group starts once the first group's kills returned.
        let agent = &pod(&v, "agent")["containers"][0];
        let t = times(agent, "sigtermsAtNs")[0];
        assert!(
            t < SHUTDOWN_AT + 20 * S,
            "seed {seed}: agent SIGTERM at {t}"
        );
    }
}

#[test]
fn v123_shutdown_groups_but_keeps_phase_running() {
    for seed in SEEDS {
        let v = run(SHUTDOWN, seed, "v1.23");
        assert_eq!(v["behaviours"]["shutdownKillsByPriorityGroups"], true);
        assert_eq!(v["behaviours"]["shutdownSetsFailedPhase"], false);
        for name in ["agent", "web", "worker"] {
            let p = pod(&v, name);
            assert_eq!(p["lastPhase"], "Running", "{name} seed {seed}");
            assert_eq!(p["reason"], "Terminated", "{name} seed {seed}");
        }
        let f = findings(&v);
        assert!(f.iter().all(|(i, _)| i == "shutdown-pods-failed"), "{f:?}");
        // migrateConfig's two groups: the critical group once the first group returned.
        let agent = &pod(&v, "agent")["containers"][0];
        let t = times(agent, "sigtermsAtNs")[0];
        assert!(
            t < SHUTDOWN_AT + 20 * S,
            "seed {seed}: agent SIGTERM at {t}"
        );
        // v1.25: the phase fix of v1.24 (PRs 106899-106901) is in.
        let v = run(SHUTDOWN, seed, "v1.25");
        assert_eq!(findings(&v), vec![], "seed {seed}");
        assert_eq!(pod(&v, "worker")["lastPhase"], "Failed", "seed {seed}");
    }
}

#[test]
fn priority_groups_are_an_error_before_v124() {
    for profile in ["v1.21", "v1.22", "v1.23"] {
        let out = Command::cargo_bin("podsim")
            .unwrap()
            .args(["run", "scenarios/shutdown/priority-groups.yaml", "--set"])
            .arg(format!("spec.kubelet.profile={profile}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{profile}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("scenarios/shutdown/priority-groups.yaml:")
                && err.contains("spec.kubelet.config.shutdownGracePeriodByPodPriority")
                && err.contains(&format!("not available on profile {profile}")),
            "{err}"
        );
    }
    let out = Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", "scenarios/shutdown/priority-groups.yaml"])
        .args(["--set", "spec.kubelet.profile=v1.25"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

const PRESTOP: &str = "scenarios/releases/prestop-twice-grace.yaml";

#[test]
fn prestop_then_override_takes_twice_the_grace_before_v128() {
    for seed in SEEDS {
        for (profile, stop_grace) in [
            ("v1.22", 10),
            ("v1.23", 10),
            ("v1.25", 10),
            ("v1.27", 10),
            ("v1.29", 2),
            ("current", 2),
        ] {
            let v = run(PRESTOP, seed, profile);
            let p = pod(&v, "slow");
            let c = &p["containers"][0];
            // The 60s hook is cut after the 10s grace.
            let deleted = ns(&p["deletionRequestedAtNs"]);
            let term = times(c, "sigtermsAtNs")[0];
            near(term, deleted + 10 * S, "SIGTERM after the hook is cut");
            let killed = times(c, "finishedAtNs")[0];
            near(killed, term + stop_grace * S, profile);
            assert_eq!(c["killedAtGraceExpiry"], 1, "{profile} seed {seed}");
            assert_eq!(p["finalPhase"], "Deleted", "{profile} seed {seed}");
        }
    }
}

const PROBE: &str = "scenarios/releases/probe-grace-ignored.yaml";

#[test]
fn probe_grace_ignored_before_v125() {
    for seed in SEEDS {
        for (profile, grace) in [("v1.22", 30), ("v1.23", 30), ("v1.25", 5), ("current", 5)] {
            let v = run(PROBE, seed, profile);
            assert_eq!(findings(&v), vec![], "{profile} seed {seed}");
            let c = &pod(&v, "stubborn")["containers"][0];
            let term = times(c, "sigtermsAtNs")[0];
            near(times(c, "finishedAtNs")[0], term + grace * S, profile);
            assert!(times(c, "startedAtNs").len() >= 2, "{profile} seed {seed}");
        }
    }
    let note = |profile: &str| {
        let out = Command::cargo_bin("podsim")
            .unwrap()
            .args(["run", PROBE, "--set"])
            .arg(format!("spec.kubelet.profile={profile}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let n = note("v1.22");
    assert!(
        n.contains("livenessProbe.terminationGracePeriodSeconds: has no effect on profile v1.22"),
        "{n}"
    );
    assert!(note("v1.23").contains("has no effect on profile v1.23"));
    assert!(!note("v1.25").contains("has no effect"));
    assert!(!note("current").contains("has no effect"));
}
