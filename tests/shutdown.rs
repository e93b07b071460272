//! Scenario tests of the graceful node shutdown manager (`scenarios/shutdown/*.yaml`), run
//! through the `podsim` binary with `--json` on seeds 1-5: priority groups in ascending
//! order, the Failed/Terminated status, the group deadline that leaves a kill in flight
//! (kubernetes issue 108040), power-off at the release of the inhibitor lock or at the
//! inhibit delay, and admission rejecting pods once the shutdown started.

use crate::lifecycle::{compact, ns, pod, run_json, S, SEEDS};
use serde_json::Value;

/// The first container of a pod.
fn c0<'a>(v: &'a Value, name: &str) -> &'a Value {
    &pod(v, name)["containers"][0]
}

/// Run with `--trace` and return (JSON, the trace records as text).
fn run_traced(file: &str, seed: u64) -> (Value, Vec<String>) {
    let path = std::env::temp_dir().join(format!(
        "podsim-shutdown-{}-{seed}-{}.jsonl",
        std::process::id(),
        file.replace('/', "_")
    ));
    let v = run_json(file, seed, &["--trace", path.to_str().unwrap()]);
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let recs = text
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            r["rec"].as_str().unwrap().to_string()
        })
        .collect();
    (v, recs)
}

#[test]
fn shutdown_kills_low_priority_group_first_and_marks_pods_failed() {
    for seed in SEEDS {
        let (v, trace) = run_traced("scenarios/shutdown/priority-groups.yaml", seed);
        assert_eq!(
            compact(&v),
            [
                "agent Running/Running | agent: starts=1 exit=137 killed=1",
                "db Failed/Failed | db: starts=1 exit=143 killed=0",
                "job Succeeded/Succeeded | task: starts=1 exit=0 killed=0",
                "web-0 Failed/Failed | app: starts=1 exit=143 killed=0",
                "web-1 Failed/Failed | app: starts=1 exit=143 killed=0",
                "worker Succeeded/Succeeded | app: starts=1 exit=0 killed=0",
            ],
            "seed {seed}"
        );
        let m = &v["metrics"];
        let shutdown = ns(&m["nodeShutdownAtNs"]);
        assert_eq!(shutdown, 20 * S);
        let low = ["web-0", "web-1", "worker"];
        let high = ["db", "agent"];
        let term = |n: &str| ns(&c0(&v, n)["sigtermAtNs"]);
        let exit = |n: &str| ns(&c0(&v, n)["finishedAtNs"][0]);
        let last_low_term = low.iter().map(|n| term(n)).max().unwrap();
        let last_low_exit = low.iter().map(|n| exit(n)).max().unwrap();
        let first_high_term = high.iter().map(|n| term(n)).min().unwrap();
        // Every low-group SIGTERM precedes every high-group SIGTERM, and the high group
        // starts only once every low-group kill completed (well before the 10s deadline).
        assert!(
            shutdown <= last_low_term && last_low_term < first_high_term,
            "seed {seed}"
        );
        assert!(last_low_exit <= first_high_term, "seed {seed}");
        assert!(first_high_term < shutdown + 10 * S, "seed {seed}");
        // Grace: the group's period (20s), or the pod's own when shorter (agent: 5s).
        assert_eq!(exit("agent") - term("agent"), 5 * S, "seed {seed}");
        assert!(trace
            .iter()
            .any(|r| r.contains("SyncTerminatingPod begin grace=20")));
        // Killed pods whose containers failed get Failed/Terminated; the worker exited 0,
        // so the status computed after the kill is Succeeded (v1.31's getPhase for a
        // terminal pod), and the reason goes with the phase change.
        for n in ["web-0", "web-1", "db"] {
            assert_eq!(pod(&v, n)["reason"], "Terminated", "{n} seed {seed}");
        }
        assert_eq!(pod(&v, "worker")["reason"], Value::Null);
        // The agent's kill completes last; the lock is released at once and the node
        // powers off before its Failed status is written.
        assert_eq!(m["powerOffCause"], "inhibitor lock released");
        assert_eq!(ns(&m["powerOffAtNs"]), exit("agent") + 55_000_000);
        assert_eq!(m["statusesLostAtPowerOff"], 1, "seed {seed}");
        assert_eq!(m["containersAliveAtPowerOff"], 0);
        // The finished job was not active: not killed.
        assert_eq!(c0(&v, "job")["sigtermAtNs"], Value::Null);
        assert!(trace.iter().any(|r| r == "node NotReady"));
        assert!(trace
            .iter()
            .any(|r| r == "gns processing shutdown: 5 active pods in 2 groups"));
        assert!(!trace.iter().any(|r| r.contains("deadline passed")));
        assert!(v["pods"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["containers"][0]["killedByPowerOff"] == false));
    }
}

#[test]
fn shutdown_group_deadline_leaves_kill_in_flight_and_power_off_kills_the_rest() {
    for seed in SEEDS {
        let (v, trace) = run_traced("scenarios/shutdown/slow-stop.yaml", seed);
        assert_eq!(
            compact(&v),
            [
                "app Failed/Failed | app: starts=1 exit=137 killed=1",
                "critical Running/Running | agent: starts=1 exit=137 killed=0",
            ],
            "seed {seed}"
        );
        let app = c0(&v, "app");
        let crit = c0(&v, "critical");
        // The app's preStop hook takes 9s of its 10s grace; SIGKILL 2s after SIGTERM.
        let app_term = ns(&app["sigtermAtNs"]);
        let app_exit = ns(&app["finishedAtNs"][0]);
        assert!((19 * S..19 * S + S / 10).contains(&app_term), "seed {seed}");
        assert_eq!(app_exit - app_term, 2 * S);
        // The critical group starts at the first group's deadline (10s after the
        // shutdown), while the app's kill is still in flight.
        let crit_term = ns(&crit["sigtermAtNs"]);
        assert!(
            (20 * S..20 * S + S / 10).contains(&crit_term),
            "seed {seed}"
        );
        assert!(crit_term < app_exit, "seed {seed}: groups overlap");
        assert!(trace
            .iter()
            .any(|r| r == "gns group priority 0 deadline passed with 1 kills in flight"));
        // The critical container still runs at power-off: 30s after the shutdown, by the
        // lock release at its group deadline or by logind's inhibit delay (same instant).
        let m = &v["metrics"];
        assert_eq!(ns(&m["powerOffAtNs"]), 40 * S);
        assert!(
            m["powerOffCause"] == "inhibitor lock released"
                || m["powerOffCause"] == "inhibit delay expired",
            "{}",
            m["powerOffCause"]
        );
        assert_eq!(m["containersAliveAtPowerOff"], 1);
        assert_eq!(crit["killedByPowerOff"], true);
        assert_eq!(ns(&crit["finishedAtNs"][0]), 40 * S);
        assert_eq!(app["killedByPowerOff"], false);
        assert_eq!(pod(&v, "app")["reason"], "Terminated");
        assert_eq!(m["statusesLostAtPowerOff"], 1);
        assert!(trace.iter().any(|r| r
            == "node power-off (inhibitor lock released): 1 containers still running"
            || r == "node power-off (inhibit delay expired): 1 containers still running"));
        // Nothing of the node happens after power-off.
        let off = trace
            .iter()
            .position(|r| r.starts_with("node power-off"))
            .unwrap();
        assert_eq!(off, trace.len() - 1, "seed {seed}: {:?}", &trace[off..]);
    }
}

#[test]
fn pod_created_after_shutdown_started_is_rejected() {
    for seed in SEEDS {
        let v = run_json("scenarios/shutdown/reject-after-shutdown.yaml", seed, &[]);
        let late = pod(&v, "late");
        assert_eq!(late["finalPhase"], "Failed", "seed {seed}");
        assert_eq!(late["reason"], "NodeShutdown");
        assert_eq!(late["containers"][0]["starts"], 0);
        let web = c0(&v, "web");
        assert!(ns(&web["sigtermAtNs"]) >= 10 * S);
        let m = &v["metrics"];
        assert_eq!(m["powerOffCause"], "inhibitor lock released");
        assert!(ns(&m["powerOffAtNs"]) < 16 * S);
    }
}

#[test]
fn shutdown_without_grace_period_powers_off_at_once() {
    for seed in SEEDS {
        let v = run_json(
            "scenarios/shutdown/reject-after-shutdown.yaml",
            seed,
            &["--set", "spec.kubelet.config.shutdownGracePeriod=0s"],
        );
        let m = &v["metrics"];
        assert_eq!(m["powerOffCause"], "no inhibitor lock");
        assert_eq!(ns(&m["powerOffAtNs"]), 10 * S);
        assert_eq!(m["containersAliveAtPowerOff"], 1);
        let web = c0(&v, "web");
        assert_eq!(web["sigtermAtNs"], Value::Null);
        assert_eq!(web["killedByPowerOff"], true);
        // Created after power-off: the API has it, no kubelet ever sees it.
        let late = pod(&v, "late");
        assert_eq!(late["finalPhase"], "Pending");
        assert_eq!(late["reason"], Value::Null);
    }
}
