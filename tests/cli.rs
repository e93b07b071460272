//! The command line as users see it: exit codes, replay lines, output files.

use crate::scratch::{Scratch, ScratchFile};
use assert_cmd::Command;
use predicates::prelude::*;

fn podsim() -> Command {
    Command::cargo_bin("podsim").unwrap()
}

fn temp_file(name: &str, text: &str) -> ScratchFile {
    let p = Scratch::new("cli", name).file(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn quickstart_prints_summary_and_replay_line() {
    podsim()
        .args(["run", "scenarios/quickstart.yaml"])
        .assert()
        .success()
        .stdout(predicate::str::contains("pod web"))
        .stdout(predicate::str::contains("findings: none"))
        .stdout(predicate::str::contains(
            "replay: podsim run scenarios/quickstart.yaml --seed 1",
        ));
}

#[test]
fn check_determinism_passes() {
    podsim()
        .args([
            "run",
            "scenarios/quickstart.yaml",
            "--seed",
            "9",
            "--check-determinism",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains("determinism check passed"));
}

#[test]
fn check_accepts_every_bundled_scenario() {
    let mut files: Vec<String> = vec![
        "scenarios/quickstart.yaml".into(),
        "scenarios/reference.yaml".into(),
    ];
    // Every scenario folder (scenarios/lifecycle, scenarios/shutdown, ...).
    for dir in std::fs::read_dir("scenarios").unwrap() {
        let dir = dir.unwrap().path();
        if dir.is_dir() {
            for e in std::fs::read_dir(&dir).unwrap() {
                files.push(e.unwrap().path().display().to_string());
            }
        }
    }
    files.sort();
    assert!(files.iter().any(|f| f.contains("shutdown/")), "{files:?}");
    podsim().arg("check").args(&files).assert().success();
}

#[test]
fn bad_input_exits_2_with_every_problem_located() {
    let f = temp_file(
        "bad.yaml",
        "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  horizon: -5s\n  seed: one\n  bogus: 1\n  pods:\n    - template:\n        metadata: {name: ok}\n        spec: {containers: [{name: a, image: i}]}\n  timeline:\n    - {at: 1s, deletePod: {pod: nope}}\n",
    );
    let name = f.display().to_string();
    let out = podsim().args(["run", &name]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    for (line, path) in [
        (5, "spec.horizon"),
        (6, "spec.seed"),
        (7, "spec.bogus"),
        (13, "spec.timeline[0].deletePod.pod"),
    ] {
        let want = format!("{name}:{line}:");
        assert!(
            err.lines().any(|l| l.contains(&want) && l.contains(path)),
            "missing {want} {path} in:\n{err}"
        );
    }
    assert!(!err.contains("panicked"));
}

#[test]
fn missing_file_and_bad_usage_exit_2() {
    podsim().args(["run", "no/such/file.yaml"]).assert().code(2);
    podsim().args(["frobnicate"]).assert().code(2);
    podsim()
        .args(["run", "scenarios/quickstart.yaml", "--set", "nonsense"])
        .assert()
        .code(2);
    podsim()
        .args(["run", "scenarios/quickstart.yaml", "--profile", "v1.99"])
        .assert()
        .code(2);
}

#[test]
fn set_override_changes_the_run_and_the_replay_line() {
    let base = podsim()
        .args(["run", "scenarios/lifecycle/force-delete.yaml", "--json"])
        .output()
        .unwrap();
    let set = "spec.pods[0].template.spec.terminationGracePeriodSeconds=3";
    let changed = podsim()
        .args([
            "run",
            "scenarios/lifecycle/force-delete.yaml",
            "--json",
            "--set",
            set,
        ])
        .output()
        .unwrap();
    let a: serde_json::Value = serde_json::from_slice(&base.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&changed.stdout).unwrap();
    assert_ne!(a["scenarioHash"], b["scenarioHash"]);
    assert!(b["replay"]
        .as_str()
        .unwrap()
        .contains(&format!("--set '{set}'")));
}

#[test]
fn trace_file_is_json_lines_ending_in_the_trace_hash() {
    let path = Scratch::new("cli", "trace").file("t.jsonl");
    let out = podsim()
        .args([
            "run",
            "scenarios/lifecycle/graceful-delete.yaml",
            "--json",
            "--trace",
        ])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["hash"], v["traceHash"]);
    assert!(text.lines().count() > 50);
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1);
}

#[test]
fn unmet_expect_exits_1_with_replay_line() {
    let text = std::fs::read_to_string("scenarios/lifecycle/force-delete.yaml")
        .unwrap()
        .replace("findings: []", "findings: [no-start-after-termination]");
    let f = temp_file("expect.yaml", &text);
    podsim()
        .args(["run"])
        .arg(&f)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("expect not met"))
        .stderr(predicate::str::contains("replay: podsim run"));
}

#[test]
fn a_run_limit_is_a_finding_with_exit_1() {
    podsim()
        .args([
            "run",
            "scenarios/quickstart.yaml",
            "--set",
            "spec.limits.maxEvents=100",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("[run-limit-reached]"))
        .stdout(predicate::str::contains(
            "replay: podsim run scenarios/quickstart.yaml --seed 1 --set spec.limits.maxEvents=100",
        ));
}

#[test]
fn missing_pod_name_is_located() {
    let f = temp_file(
        "noname.yaml",
        "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: noname}\nspec:\n  pods:\n    - template:\n        metadata: {namespace: x}\n        spec: {containers: [{name: a, image: i}]}\n",
    );
    let name = f.display().to_string();
    podsim()
        .args(["check", &name])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("{name}:7:")))
        .stderr(predicate::str::contains(
            "spec.pods[0].template.metadata.name",
        ));
}
