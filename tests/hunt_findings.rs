//! Findings of the long hunt on `current` (`podsim hunt` on `scenarios/hunt/`) that were
//! podsim's own bugs, kept as regression tests.

use assert_cmd::Command;
use serde_json::Value;

/// A pod with a native sidecar, deleted at 5 s, on a runtime whose `StopContainer` always
/// fails.
const SIDECAR_STOP_FAILS: &str = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: sidecar-stop-fails}
spec:
  horizon: 1m
  runtime:
    faults: [{call: stopContainer, probability: 1}]
  pods:
    - template:
        metadata: {name: web}
        spec:
          terminationGracePeriodSeconds: 30
          initContainers: [{name: mesh, image: example/mesh:1, restartPolicy: Always}]
          containers: [{name: app, image: example/web:1}]
  timeline:
    - {at: 5s, deletePod: {pod: web}}
";

/// Found by the hunt from `scenarios/hunt/static-node.yaml`
/// (`sidecars-stop-after-main-containers`): when the app container's `StopContainer`
/// failed, podsim released the sidecar's turn at once and stopped the sidecar while the app
/// still ran. v1.31 `killContainer` (`pkg/kubelet/kuberuntime/kuberuntime_container.go`)
/// returns the error before it marks the container terminated for the ordering, so the
/// sidecar waits out its grace (30 s) before its own stop.
#[test]
fn a_failed_stop_of_the_app_keeps_the_sidecar_waiting_for_its_turn() {
    let trace = std::env::temp_dir().join(format!(
        "podsim-hunt-findings-{}-sidecar.jsonl",
        std::process::id()
    ));
    let o = Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", "-", "--seed", "1", "--trace"])
        .arg(&trace)
        .write_stdin(SIDECAR_STOP_FAILS)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    // Container c1 is the sidecar (started first), c2 the app.
    let stops: Vec<(u64, String)> = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter_map(|v| {
            let rec = v["rec"].as_str()?.to_string();
            (rec.contains("StopContainer#") && rec.contains(" begin"))
                .then(|| (v["atNs"].as_u64().unwrap(), rec))
        })
        .collect();
    let first = |id: &str| {
        stops
            .iter()
            .find(|(_, r)| r.contains(&format!("StopContainer#{id} begin")))
            .map(|(t, _)| *t)
            .unwrap_or_else(|| panic!("no stop of c{id}: {stops:?}"))
    };
    let (app, sidecar) = (first("2"), first("1"));
    assert!(app < 6_000_000_000, "app stop at {app} ns");
    assert!(
        sidecar >= app + 30_000_000_000,
        "the sidecar's stop came {} ms after the app's failed stop, not after its 30 s turn: {stops:?}",
        (sidecar - app) / 1_000_000
    );
    assert!(
        text.contains("sidecar stopped before the containers it waits for"),
        "no note that the sidecar's turn timed out"
    );
}
