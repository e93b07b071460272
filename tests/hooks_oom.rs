//! Lifecycle hooks (postStart of every handler kind, a tcpSocket preStop, deletion while a
//! postStart hook runs), OOM kills and `lastReason`: scenario tests on seeds 1-5 through
//! the `podsim` binary with `--json` (and the trace where the JSON has no such key), and
//! `podsim check` on manifests whose hook fields get notes.
//!
//! Included from `tests/main.rs` as `mod hooks_oom;`.

use crate::lifecycle::{ns, pod, run_json, run_json_trace, S, SEEDS};
use serde_json::Value;

const HOOKS: &str = "scenarios/lifecycle/poststart-hook.yaml";

/// The first time the pod's phase in the API was `phase`.
fn phase_at(p: &Value, phase: &str) -> u64 {
    p["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e[1] == phase)
        .map(|e| ns(&e[0]))
        .unwrap_or_else(|| panic!("{} never {phase}: {}", p["name"], p["phases"]))
}

fn starts(c: &Value) -> Vec<u64> {
    c["startedAtNs"]
        .as_array()
        .unwrap()
        .iter()
        .map(ns)
        .collect()
}

#[test]
fn poststart_hook_holds_the_next_start_and_the_running_status() {
    for seed in SEEDS {
        let v = run_json(HOOKS, seed, &[]);
        let slow = pod(&v, "slow");
        let app = starts(&slow["containers"][0])[0];
        let helper = starts(&slow["containers"][1])[0];
        // The 4 s exec hook: the next container's start (its pull, create and start) waits.
        assert!(helper >= app + 4 * S, "seed {seed}: {app} {helper}");
        assert!(helper < app + 6 * S, "seed {seed}: {app} {helper}");
        // The API shows the pod Running (and Ready) only after the hook returned.
        assert!(phase_at(slow, "Running") >= app + 4 * S, "seed {seed}");
        let napper = pod(&v, "napper");
        let app = starts(&napper["containers"][0])[0];
        assert!(phase_at(napper, "Running") >= app + 2 * S, "seed {seed}");
        for name in ["slow", "napper"] {
            let p = pod(&v, name);
            assert_eq!(p["finalPhase"], "Running", "seed {seed}");
            assert_eq!(p["containers"][0]["restarts"], 0, "seed {seed}");
            assert_eq!(p["containers"][0]["runningAtEnd"], true, "seed {seed}");
            assert_eq!(p["containers"][0]["lastReason"], Value::Null, "seed {seed}");
        }
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
    }
}

#[test]
fn failing_poststart_hook_kills_and_restarts_the_container() {
    for seed in SEEDS {
        let (v, recs) = run_json_trace(HOOKS, seed);
        for (name, hook) in [("failing", S), ("tcp", 0)] {
            let p = pod(&v, name);
            let uid = p["uid"].as_str().unwrap();
            let c = &p["containers"][0];
            let st = starts(c);
            let terms: Vec<u64> = c["sigtermsAtNs"]
                .as_array()
                .unwrap()
                .iter()
                .map(ns)
                .collect();
            // Restarted with back-off: 10 s, 20 s, 40 s ... between the later starts.
            assert!(st.len() >= 4, "seed {seed} {name}: {st:?}");
            assert!(st[3] - st[2] >= 20 * S, "seed {seed} {name}: {st:?}");
            // Every instance is killed (SIGTERM) right after its hook failed.
            for (s, t) in st.iter().zip(&terms) {
                assert!(
                    (*s + hook..*s + hook + S / 5).contains(t),
                    "seed {seed} {name}: start {s} SIGTERM {t}"
                );
            }
            assert!(terms.len() + 1 >= st.len(), "seed {seed} {name}");
            assert_eq!(c["lastReason"], "Error", "seed {seed} {name}");
            assert_eq!(c["lastExitCode"], 143, "seed {seed} {name}");
            // Never Ready: the pod's Ready condition stays false.
            let ready = p["readyTransitions"].as_array().unwrap();
            assert!(ready.iter().all(|r| r[1] == false), "seed {seed} {name}");
            let failed = format!("note {uid} FailedPostStartHook");
            let n = recs.iter().filter(|(_, r)| r.starts_with(&failed)).count();
            // One per instance (the newest may still be in its hook at the horizon).
            assert!(n <= st.len() && n + 1 >= st.len(), "seed {seed} {name}");
            let backoff = format!("sync {uid} SyncPod error: PostStartHookError");
            assert!(
                recs.iter().any(|(_, r)| r.starts_with(&backoff)),
                "seed {seed}"
            );
        }
    }
}

#[test]
fn tcp_socket_prestop_fails_at_once_and_does_not_delay_sigterm() {
    for seed in SEEDS {
        let (v, recs) = run_json_trace(HOOKS, seed);
        let p = pod(&v, "stopper");
        let uid = p["uid"].as_str().unwrap();
        let c = &p["containers"][0];
        let delay = ns(&c["sigtermAtNs"]) - ns(&p["deletionRequestedAtNs"]);
        assert!(delay < S / 2, "seed {seed}: {delay}");
        let note = format!("note {uid} FailedPreStopHook");
        assert!(
            recs.iter().any(|(_, r)| r.starts_with(&note)),
            "seed {seed}"
        );
        let exec = format!("cri {uid} ExecPreStop");
        assert!(
            !recs.iter().any(|(_, r)| r.starts_with(&exec)),
            "seed {seed}"
        );
        assert_eq!(c["lastReason"], "Completed", "seed {seed}");
        assert_eq!(p["finalPhase"], "Deleted", "seed {seed}");
    }
}

#[test]
fn deletion_waits_for_a_running_poststart_hook() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/poststart-delete.yaml", seed, &[]);
        let p = pod(&v, "web");
        let c = &p["containers"][0];
        let start = starts(c)[0];
        let term = ns(&c["sigtermAtNs"]);
        // The 20 s hook, then the 2 s preStop hook, then SIGTERM.
        assert!(term >= start + 22 * S, "seed {seed}: {start} {term}");
        assert!(term < start + 24 * S, "seed {seed}: {start} {term}");
        assert!(
            ns(&p["deletionRequestedAtNs"]) < start + 5 * S,
            "seed {seed}"
        );
        assert!(phase_at(p, "Running") >= start + 20 * S, "seed {seed}");
        assert_eq!(p["finalPhase"], "Deleted", "seed {seed}");
        assert_eq!(c["killedAtGraceExpiry"], 0, "seed {seed}");
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
    }
}

/// Race catalog 32 (issue 116032): a hung postStart hook holds the kill past the grace on
/// `current`; the fix switch `postStartCancelledByDeletion` stops the container within it.
#[test]
fn a_hung_poststart_hook_holds_the_kill_unless_the_deletion_cancels_it() {
    const FILE: &str = "scenarios/races/poststart-holds-deletion.yaml";
    let fix = [
        "--set",
        "spec.kubelet.behaviours.postStartCancelledByDeletion=true",
        "--set",
        "spec.expect.findings=[]",
    ];
    for seed in SEEDS {
        let names = |v: &Value| -> Vec<String> {
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["invariant"].as_str().unwrap().to_owned())
                .collect()
        };
        let v = run_json(FILE, seed, &[]);
        let p = pod(&v, "web");
        let c = &p["containers"][0];
        let deleted = ns(&p["deletionRequestedAtNs"]);
        let start = starts(c)[0];
        // The 2 min hook returns, then the 1 s preStop hook, then SIGTERM.
        assert!(
            ns(&c["sigtermAtNs"]) >= start + 121 * S,
            "seed {seed}: {start} {}",
            c["sigtermAtNs"]
        );
        assert_eq!(names(&v), ["deletion-not-held-by-poststart"], "seed {seed}");
        let v = run_json(FILE, seed, &fix);
        let p = pod(&v, "web");
        let c = &p["containers"][0];
        // Cancelled: preStop (1 s) and SIGTERM within a few seconds of the deletion, the
        // container gone well within its 10 s grace, the pod removed from the API.
        let term = ns(&c["sigtermAtNs"]);
        assert!(term < deleted + 4 * S, "seed {seed}: {deleted} {term}");
        assert!(
            ns(&p["containersStoppedAtNs"]) < deleted + 10 * S,
            "seed {seed}: {}",
            p["containersStoppedAtNs"]
        );
        assert_eq!(p["finalPhase"], "Deleted", "seed {seed}");
        assert!(names(&v).is_empty(), "seed {seed}: {:?}", names(&v));
    }
}

#[test]
fn memory_over_the_limit_is_oom_killed_and_restarted() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/oom-kill.yaml", seed, &[]);
        let hungry = &pod(&v, "hungry")["containers"][0];
        assert_eq!(hungry["lastExitCode"], 137, "seed {seed}");
        assert_eq!(hungry["lastReason"], "OOMKilled", "seed {seed}");
        assert!(hungry["restarts"].as_u64().unwrap() >= 1, "seed {seed}");
        // Each instance lives 1 s; no SIGTERM, no SIGKILL at grace expiry.
        let ends = hungry["finishedAtNs"].as_array().unwrap();
        for (s, f) in starts(hungry).iter().zip(ends) {
            assert_eq!(ns(f) - s, S, "seed {seed}");
        }
        assert_eq!(hungry["sigtermAtNs"], Value::Null, "seed {seed}");
        assert_eq!(hungry["killedAtGraceExpiry"], 0, "seed {seed}");
        assert_eq!(pod(&v, "hungry")["finalPhase"], "Running", "seed {seed}");
        let fits = &pod(&v, "fits")["containers"][0];
        assert_eq!(fits["runningAtEnd"], true, "seed {seed}");
        assert_eq!(fits["restarts"], 0, "seed {seed}");
        assert_eq!(fits["lastReason"], Value::Null, "seed {seed}");
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
    }
}

#[test]
fn last_reason_is_completed_or_error_for_ordinary_exits() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/oom-kill.yaml", seed, &[]);
        for (name, code, reason, phase) in [
            ("done", 0, "Completed", "Succeeded"),
            ("broken", 2, "Error", "Failed"),
        ] {
            let p = pod(&v, name);
            let c = &p["containers"][0];
            assert_eq!(c["lastExitCode"], code, "seed {seed} {name}");
            assert_eq!(c["lastReason"], reason, "seed {seed} {name}");
            assert_eq!(p["finalPhase"], phase, "seed {seed} {name}");
        }
        // The key sits right after `lastExitCode`.
        let keys: Vec<&String> = pod(&v, "done")["containers"][0]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        let at = keys.iter().position(|k| *k == "lastExitCode").unwrap();
        assert_eq!(keys[at + 1], "lastReason");
    }
}

use crate::priority_hooks::{check, HEAD};

#[test]
fn poststart_fields_that_cannot_act_get_notes_and_bad_ones_errors() {
    let y = format!(
        "{HEAD}  pods:\n    - template:\n        metadata: {{name: a}}\n        spec:\n          containers:\n            - name: nap\n              lifecycle: {{postStart: {{sleep: {{seconds: 3}}}}}}\n            - name: tcp\n              lifecycle: {{postStart: {{tcpSocket: {{port: 80}}}}, preStop: {{tcpSocket: {{port: 80}}}}}}\n            - name: none\n      behaviour:\n        nap: {{postStartDuration: 9s}}\n        tcp: {{postStartExitCode: 0}}\n        none: {{postStartDuration: 1s, postStartExitCode: 2}}\n"
    );
    let (code, err) = check(&y);
    assert_eq!(code, Some(0), "{err}");
    let c = "spec.pods[0].template.spec.containers";
    let b = "spec.pods[0].behaviour";
    for want in [
        format!("{c}[1].lifecycle.postStart.tcpSocket: accepted, but v1.31's kubelet cannot run a tcpSocket hook"),
        format!("{c}[1].lifecycle.preStop.tcpSocket: no effect: v1.31's kubelet cannot run a tcpSocket hook"),
        format!("{b}.nap.postStartDuration: no effect: the container's postStart hook is the `sleep` action"),
        format!("{b}.tcp.postStartExitCode: no effect: a tcpSocket postStart hook fails at once"),
        format!("{b}.none.postStartDuration: no effect: the container has no postStart hook"),
        format!("{b}.none.postStartExitCode: no effect: the container has no postStart hook"),
    ] {
        assert!(err.contains(&want), "{want}\n{err}");
    }
    assert_eq!(err.matches("note: ").count(), 6, "{err}");
    let y = format!(
        "{HEAD}  pods:\n    - template:\n        metadata: {{name: a}}\n        spec:\n          terminationGracePeriodSeconds: 5\n          containers:\n            - name: app\n              lifecycle: {{postStart: {{sleep: {{seconds: 6}}, exec: {{command: [x]}}}}}}\n      behaviour: {{app: {{postStartExitCode: 300}}}}\n"
    );
    let (code, err) = check(&y);
    assert_eq!(code, Some(2), "{err}");
    for want in [
        "lifecycle.postStart.sleep.seconds: 6 is more than terminationGracePeriodSeconds (5)",
        "a postStart hook takes exactly one of exec, httpGet, tcpSocket, sleep",
        "spec.pods[0].behaviour.app.postStartExitCode",
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }
}
