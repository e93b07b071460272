//! Priority classes, the preStop `sleep` action and the notes for Pod fields that have no
//! lifecycle effect here: scenario tests on seeds 1-5 through the `podsim` binary with
//! `--json`, and `podsim check` on manifests that use such fields.
//!
//! Included from `tests/main.rs` as `mod priority_hooks;`.

use crate::lifecycle::{ns, pod, run_json, S, SEEDS};
use assert_cmd::Command;

#[test]
fn system_node_critical_is_never_evicted_and_declared_classes_rank_evictions() {
    for seed in SEEDS {
        let v = run_json(
            "scenarios/lifecycle/priority-class-eviction.yaml",
            seed,
            &[],
        );
        let order: Vec<&str> = v["metrics"]["evictions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["pod"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["plain", "batch", "web"], "seed {seed}");
        assert_eq!(pod(&v, "agent")["finalPhase"], "Running", "seed {seed}");
        assert_eq!(pod(&v, "agent")["reason"], serde_json::Value::Null);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
    }
}

#[test]
fn declared_classes_pick_the_shutdown_groups() {
    for seed in SEEDS {
        let v = run_json(
            "scenarios/lifecycle/priority-class-shutdown.yaml",
            seed,
            &[],
        );
        let term = |name: &str| ns(&pod(&v, name)["containers"][0]["sigtermAtNs"]);
        // Group 0 at the shutdown, group 1000 after batch's kill returned, then the
        // critical group.
        assert!(term("batch") < 11 * S, "seed {seed}");
        assert!(term("batch") < term("web"), "seed {seed}");
        assert!(term("web") < term("agent"), "seed {seed}");
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
    }
}

#[test]
fn prestop_sleep_delays_sigterm_by_its_seconds() {
    for seed in SEEDS {
        let v = run_json("scenarios/lifecycle/prestop-sleep.yaml", seed, &[]);
        let delay = |name: &str| {
            let p = pod(&v, name);
            ns(&p["containers"][0]["sigtermAtNs"]) - ns(&p["deletionRequestedAtNs"])
        };
        // The deletion reaches the kubelet within a watch delay; the sleep takes 5s.
        assert!(delay("plain") < S, "seed {seed}");
        let extra = delay("sleeper") - delay("plain");
        assert!(
            (5 * S - S / 5..5 * S + S / 5).contains(&extra),
            "seed {seed}: {extra}"
        );
        assert!(delay("sleeper") >= 5 * S, "seed {seed}");
        for name in ["sleeper", "plain"] {
            assert_eq!(pod(&v, name)["finalPhase"], "Deleted", "seed {seed}");
        }
    }
}

/// `podsim check -` on `yaml`: the exit code and stderr.
pub(crate) fn check(yaml: &str) -> (Option<i32>, String) {
    let out = Command::cargo_bin("podsim")
        .unwrap()
        .args(["check", "-"])
        .write_stdin(yaml)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(crate) const HEAD: &str =
    "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n";

#[test]
fn unknown_class_and_disagreeing_priority_are_errors() {
    let y = format!(
        "{HEAD}  priorityClasses: [{{name: web-high, value: 1000}}]\n  pods:\n    - template:\n        metadata: {{name: a}}\n        spec:\n          priorityClassName: web-hgh\n          containers: [{{name: app}}]\n    - template:\n        metadata: {{name: b}}\n        spec:\n          priority: 2000000000\n          priorityClassName: system-node-critical\n          containers: [{{name: app}}]\n"
    );
    let (code, err) = check(&y);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            ":10:30: spec.pods[0].template.spec.priorityClassName: no priority class `web-hgh`"
        ) && err.contains("did you mean `web-high`?"),
        "{err}"
    );
    assert!(
        err.contains(
            ":15:21: spec.pods[1].template.spec.priority: 2000000000 differs from 2000001000"
        ),
        "{err}"
    );
    let y = format!(
        "{HEAD}  priorityClasses:\n    - {{name: system-mine, value: 1}}\n    - {{name: big, value: 1000000001}}\n    - {{name: ok, value: 1}}\n    - {{name: ok, value: 2}}\n  pods:\n    - template: {{metadata: {{name: a}}, spec: {{containers: [{{name: app}}]}}}}\n"
    );
    let (code, err) = check(&y);
    assert_eq!(code, Some(2), "{err}");
    for want in [
        "spec.priorityClasses[0].name: `system-mine`: names starting with `system-` are reserved",
        "spec.priorityClasses[1].value: must be at most 1000000000",
        "spec.priorityClasses[3].name: priority class `ok` is declared twice",
    ] {
        assert!(err.contains(want), "{want}\n{err}");
    }
}

#[test]
fn fields_without_lifecycle_effect_get_a_note_each() {
    let y = format!(
        "{HEAD}  pods:\n    - template:\n        metadata: {{name: a}}\n        spec:\n          hostNetwork: true\n          containers:\n            - name: app\n              livenessProbe: {{exec: {{command: [x]}}, timeoutSeconds: 3}}\n              lifecycle: {{preStop: {{sleep: {{seconds: 3}}}}}}\n          volumes:\n            - {{name: c, configMap: {{name: cfg, items: [], optional: true, defaultMode: 420}}}}\n            - {{name: s, secret: {{secretName: sec, items: [], optional: false, defaultMode: 256}}}}\n      behaviour: {{app: {{preStopDuration: 9s}}}}\n"
    );
    let (code, err) = check(&y);
    assert_eq!(code, Some(0), "{err}");
    let p = "spec.pods[0].template.spec";
    for want in [
        format!("{p}.hostNetwork: no effect: podsim simulates no pod network"),
        format!("{p}.containers[0].livenessProbe.timeoutSeconds: no effect: the runtime answers a probe at once"),
        format!("{p}.volumes[0].configMap.items: no effect"),
        format!("{p}.volumes[0].configMap.optional: no effect: the referenced objects always exist"),
        format!("{p}.volumes[0].configMap.defaultMode: no effect"),
        format!("{p}.volumes[1].secret.items: no effect"),
        format!("{p}.volumes[1].secret.optional: no effect"),
        format!("{p}.volumes[1].secret.defaultMode: no effect"),
        "spec.pods[0].behaviour.app.preStopDuration: no effect: the container's preStop hook is the `sleep` action, which lasts its 3 seconds".to_owned(),
    ] {
        assert!(err.contains(&want), "{want}\n{err}");
    }
    assert_eq!(err.matches("note: ").count(), 9, "{err}");
}

#[test]
fn prestop_sleep_longer_than_the_grace_is_an_error() {
    let y = format!(
        "{HEAD}  pods:\n    - template:\n        metadata: {{name: a}}\n        spec:\n          terminationGracePeriodSeconds: 5\n          containers:\n            - name: app\n              lifecycle: {{preStop: {{sleep: {{seconds: 6}}}}}}\n"
    );
    let (code, err) = check(&y);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "lifecycle.preStop.sleep.seconds: 6 is more than terminationGracePeriodSeconds (5)"
        ),
        "{err}"
    );
}
