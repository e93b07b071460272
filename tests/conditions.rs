//! Pod conditions as the v1.31 kubelet writes them (`pkg/kubelet/status/generate.go`,
//! `generateAPIPodStatus`, `mergePodStatus`), readiness gates, and `DisruptionTarget` on
//! eviction and node shutdown (`PodDisruptionConditions`), over seeds 1-5, asserted from
//! the `conditions` key of `--json`.

use crate::lifecycle::{ns, pod, run_json, S, SEEDS};
use serde_json::Value;

const GATE: &str = "scenarios/lifecycle/readiness-gate.yaml";

/// (type, status, reason) of every condition of the pod, in the object's order.
fn conditions(p: &Value) -> Vec<(String, String, Option<String>)> {
    p["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["type"].as_str().unwrap().to_owned(),
                c["status"].as_str().unwrap().to_owned(),
                c["reason"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn condition(p: &Value, kind: &str) -> Option<(String, Option<String>)> {
    conditions(p)
        .into_iter()
        .find(|c| c.0 == kind)
        .map(|c| (c.1, c.2))
}

fn types(p: &Value) -> Vec<String> {
    conditions(p).into_iter().map(|c| c.0).collect()
}

const KUBELETS_OWN: [&str; 5] = [
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
];

#[test]
fn a_running_pod_has_the_kubelets_conditions_true_in_upstream_order() {
    for seed in SEEDS {
        let v = run_json(GATE, seed, &[]);
        let p = pod(&v, "plain");
        assert_eq!(p["finalPhase"], "Running", "seed {seed}");
        let want: Vec<(String, String, Option<String>)> = KUBELETS_OWN
            .iter()
            .map(|t| (t.to_string(), "True".to_owned(), None))
            .collect();
        assert_eq!(conditions(p), want, "seed {seed}");
    }
}

#[test]
fn a_readiness_gate_holds_ready_until_its_condition_is_true() {
    for seed in SEEDS {
        // Before the gate's condition exists: containers ready, the pod not.
        let v = run_json(GATE, seed, &["--set", "spec.horizon=8s"]);
        let p = pod(&v, "web");
        assert_eq!(
            condition(p, "Ready"),
            Some(("False".into(), Some("ReadinessGatesNotReady".into()))),
            "seed {seed}"
        );
        assert_eq!(
            condition(p, "ContainersReady"),
            Some(("True".into(), None)),
            "seed {seed}"
        );
        assert_eq!(condition(p, "example.com/lb-ready"), None, "seed {seed}");
        assert_eq!(types(p), KUBELETS_OWN, "seed {seed}");
        // The whole run: Ready only between the gate's True (10s) and False (40s).
        let v = run_json(GATE, seed, &[]);
        let p = pod(&v, "web");
        let tr: Vec<(u64, bool)> = p["readyTransitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (ns(&t[0]), t[1].as_bool().unwrap()))
            .collect();
        assert_eq!(tr.len(), 3, "seed {seed}: {tr:?}");
        assert!(!tr[0].1 && tr[1].1 && !tr[2].1, "seed {seed}: {tr:?}");
        assert!(tr[1].0 > 10 * S && tr[1].0 < 12 * S, "seed {seed}: {tr:?}");
        assert!(tr[2].0 > 40 * S && tr[2].0 < 42 * S, "seed {seed}: {tr:?}");
        // At the end the gate is False again: not Ready, with the gate's reason; the
        // gate's condition (not the kubelet's) comes first and is kept as set.
        assert_eq!(
            condition(p, "Ready"),
            Some(("False".into(), Some("ReadinessGatesNotReady".into()))),
            "seed {seed}"
        );
        let mut want = vec!["example.com/lb-ready".to_owned()];
        want.extend(KUBELETS_OWN.iter().map(|s| s.to_string()));
        assert_eq!(types(p), want, "seed {seed}");
        assert_eq!(
            condition(p, "example.com/lb-ready"),
            Some(("False".into(), None)),
            "seed {seed}"
        );
        // The pod without a gate is not held back.
        assert!(pod(&v, "plain")["readyTransitions"][1][1] == true);
    }
}

fn disruption_target(p: &Value) -> Option<(String, Option<String>)> {
    condition(p, "DisruptionTarget")
}

fn kubelet_disruption() -> Option<(String, Option<String>)> {
    Some(("True".into(), Some("TerminationByKubelet".into())))
}

#[test]
fn an_evicted_pod_gets_disruption_target_on_current() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/memory-pressure.yaml", seed, &[]);
        let evicted: Vec<&str> = v["metrics"]["evictions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pod"].as_str().unwrap())
            .collect();
        assert!(!evicted.is_empty(), "seed {seed}");
        for name in &evicted {
            let p = pod(&v, name);
            assert_eq!(p["finalPhase"], "Failed", "{name} seed {seed}");
            assert_eq!(
                disruption_target(p),
                kubelet_disruption(),
                "{name} seed {seed}"
            );
            assert_eq!(
                condition(p, "Ready"),
                Some(("False".into(), Some("PodFailed".into()))),
                "{name} seed {seed}"
            );
        }
        // A pod rejected at admission under pressure (reason Evicted, never started) was
        // not disrupted: no condition.
        for p in v["pods"].as_array().unwrap() {
            let name = p["name"].as_str().unwrap();
            if !evicted.contains(&name) {
                assert_eq!(disruption_target(p), None, "{name} seed {seed}");
            }
        }
    }
}

#[test]
fn a_pod_killed_by_node_shutdown_gets_disruption_target_on_current() {
    for file in [
        "scenarios/shutdown/slow-stop.yaml",
        "scenarios/shutdown/priority-groups.yaml",
    ] {
        for seed in SEEDS {
            let v = run_json(file, seed, &[]);
            let mut killed = 0;
            for p in v["pods"].as_array().unwrap() {
                let name = p["name"].as_str().unwrap();
                if p["reason"] == "Terminated" {
                    killed += 1;
                    assert_eq!(p["finalPhase"], "Failed", "{file} {name} seed {seed}");
                    assert_eq!(
                        disruption_target(p),
                        kubelet_disruption(),
                        "{file} {name} seed {seed}"
                    );
                }
            }
            assert!(killed > 0, "{file} seed {seed}");
        }
    }
}

#[test]
fn releases_before_the_gates_write_neither_condition() {
    for file in [
        "scenarios/eviction/memory-pressure.yaml",
        "scenarios/shutdown/priority-groups.yaml",
    ] {
        for seed in SEEDS {
            for profile in ["v1.21", "v1.22"] {
                let set = format!("spec.kubelet.profile={profile}");
                // (Old releases break invariants here: their findings are not the point.)
                // Their shutdown manager has no priority groups: the switch brings them in.
                let groups = "spec.kubelet.behaviours.shutdownKillsByPriorityGroups=true";
                let v = run_json(file, seed, &["--set", &set, "--set", groups, "--no-oracle"]);
                for p in v["pods"].as_array().unwrap() {
                    let t = types(p);
                    assert!(
                        !t.iter()
                            .any(|t| t == "DisruptionTarget" || t == "PodReadyToStartContainers"),
                        "{file} {profile} seed {seed}: {t:?}"
                    );
                }
            }
            // v1.27 has PodDisruptionConditions (beta since v1.26), not yet the
            // PodReadyToStartContainers condition (beta in v1.29).
            let set = "spec.kubelet.profile=v1.27";
            let v = run_json(file, seed, &["--set", set, "--no-oracle"]);
            let pods = v["pods"].as_array().unwrap();
            assert!(pods.iter().any(|p| disruption_target(p).is_some()));
            assert!(pods
                .iter()
                .all(|p| condition(p, "PodReadyToStartContainers").is_none()));
        }
    }
}

#[test]
fn an_active_deadline_kill_is_not_a_disruption() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/active-deadline.yaml", seed, &[]);
        for p in v["pods"].as_array().unwrap() {
            assert_eq!(disruption_target(p), None, "seed {seed}");
            if p["reason"] == "DeadlineExceeded" {
                assert_eq!(
                    condition(p, "Ready"),
                    Some(("False".into(), Some("PodFailed".into())))
                );
            }
        }
        // A pod that completed: every condition but PodScheduled and Initialized False
        // or completed.
        let job = pod(&v, "job");
        assert_eq!(
            condition(job, "Initialized"),
            Some(("True".into(), Some("PodCompleted".into())))
        );
        assert_eq!(
            condition(job, "ContainersReady"),
            Some(("False".into(), Some("PodCompleted".into())))
        );
    }
}
