//! Feature gates by release (issue 12): `spec.kubelet.featureGates` is validated against
//! the profile's release, a feature whose gate is off is an error naming the gate at its
//! use, a gate set against its default sets its switch, and `--json` carries the resolved
//! gates.

use podsim::load;
use podsim::run::{run, RunOptions};
use std::path::Path;
use std::sync::Arc;

fn problems(file: &str, sets: &[(&str, &str)]) -> String {
    let sets: Vec<(String, String)> = sets
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match load(Path::new(file), &sets) {
        Ok(_) => String::new(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn an_unknown_gate_is_an_error_with_a_hint() {
    let e = problems(
        "scenarios/quickstart.yaml",
        &[("spec.kubelet.featureGates.SidecarContainer", "true")],
    );
    assert!(e.contains("unknown feature gate `SidecarContainer`"), "{e}");
    assert!(e.contains("did you mean `SidecarContainers`?"), "{e}");
}

#[test]
fn a_gate_the_release_lacks_or_locks_is_an_error() {
    let e = problems(
        "scenarios/quickstart.yaml",
        &[
            ("spec.kubelet.profile", "v1.22"),
            ("spec.kubelet.featureGates.SidecarContainers", "true"),
        ],
    );
    assert!(e.contains("has no feature gate `SidecarContainers`"), "{e}");
    let e = problems(
        "scenarios/quickstart.yaml",
        &[("spec.kubelet.featureGates.PodDisruptionConditions", "false")],
    );
    assert!(e.contains("GA and locked to `true`"), "{e}");
    let e = problems(
        "scenarios/quickstart.yaml",
        &[("spec.kubelet.featureGates.PodHasNetworkCondition", "true")],
    );
    assert!(
        e.contains("this feature gate is called `PodReadyToStartContainersCondition`"),
        "{e}"
    );
}

/// The uses refused, each at its own line:column, naming the gate.
#[test]
fn a_feature_whose_gate_is_off_is_an_error_at_its_use() {
    let e = problems(
        "scenarios/lifecycle/sidecar-job.yaml",
        &[("spec.kubelet.featureGates.SidecarContainers", "false")],
    );
    assert!(
        e.contains("sidecar-job.yaml:23:68: spec.pods[0].template.spec.initContainers[0].restartPolicy: a sidecar"),
        "{e}"
    );
    assert!(
        e.contains("needs the feature gate SidecarContainers"),
        "{e}"
    );
    let e = problems(
        "scenarios/lifecycle/prestop-sleep.yaml",
        &[("spec.kubelet.profile", "v1.27")],
    );
    assert!(
        e.contains("prestop-sleep.yaml:23:37: spec.pods[0].template.spec.containers[0].lifecycle.preStop.sleep"),
        "{e}"
    );
    assert!(
        e.contains("needs the feature gate PodLifecycleSleepAction"),
        "{e}"
    );
    let e = problems(
        "scenarios/shutdown/priority-groups.yaml",
        &[(
            "spec.kubelet.featureGates.GracefulNodeShutdownBasedOnPodPriority",
            "false",
        )],
    );
    assert!(
        e.contains("it needs the feature gate GracefulNodeShutdownBasedOnPodPriority"),
        "{e}"
    );
    let e = problems(
        "scenarios/races/gns-phase-revert.yaml",
        &[("spec.kubelet.featureGates.GracefulNodeShutdown", "false")],
    );
    assert!(
        e.contains("`shutdownGracePeriod` above 0 is not available on profile current: it needs the feature gate GracefulNodeShutdown"),
        "{e}"
    );
}

/// A gate set against its release's default sets its switch (the run's `behaviours` and
/// `featureGates` say so); an explicit `behaviours` entry wins over the gate.
#[test]
fn a_gate_sets_its_switch_and_behaviours_win() {
    let one = |sets: &[(&str, &str)]| {
        let sets: Vec<(String, String)> = sets
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let sc = load(Path::new("scenarios/quickstart.yaml"), &sets)
            .unwrap()
            .scenario;
        run(Arc::new(sc), &RunOptions::default())
    };
    let g = "spec.kubelet.featureGates.ProbeTerminationGracePeriod";
    let out = one(&[("spec.kubelet.profile", "v1.22"), (g, "true")]);
    assert!(out.behaviours["probeTerminationGracePeriod"]);
    assert!(out.feature_gates["ProbeTerminationGracePeriod"]);
    let out = one(&[
        ("spec.kubelet.profile", "v1.22"),
        (g, "true"),
        (
            "spec.kubelet.behaviours.probeTerminationGracePeriod",
            "false",
        ),
    ]);
    assert!(!out.behaviours["probeTerminationGracePeriod"]);
    let out = one(&[]);
    assert!(out.feature_gates["SidecarContainers"]);
    assert!(!out
        .feature_gates
        .contains_key("ProbeTerminationGracePeriod"));
    let out = one(&[("spec.kubelet.profile", "v1.27")]);
    assert!(!out.feature_gates["PodHasNetworkCondition"]);
    assert!(!out.behaviours["readyToStartContainersCondition"]);
}

/// `podsim bisect` skips a profile whose gates refuse a feature the scenario uses, naming
/// the gate, instead of failing the whole command.
#[test]
fn bisect_skips_profiles_whose_gates_refuse_the_scenario() {
    let file = "scenarios/lifecycle/sidecar-job.yaml";
    let sc = load(Path::new(file), &[]).unwrap().scenario;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .unwrap();
    let b = podsim::bisect::bisect(Path::new(file), &[], &sc, 2, &pool);
    let skipped: Vec<&str> = b.skipped.iter().map(|[l, _]| l.as_str()).collect();
    assert!(skipped.contains(&"profile v1.22"), "{skipped:?}");
    assert!(!b.variants.iter().any(|v| v.label == "profile v1.22"));
    assert!(b
        .skipped
        .iter()
        .all(|[_, why]| why.contains("SidecarContainers")));
    assert!(podsim::bisect::table(&b).contains("skipped: "));
}
