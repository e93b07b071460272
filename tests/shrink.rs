//! `podsim shrink`: a catalog race with noise added (two more pods, more timeline actions)
//! shrinks to a file that replays the finding under `podsim run`, is no larger than the
//! catalog scenario, and is the same file every time; a seed that does not show the
//! invariant is a usage error.

use crate::scratch::Scratch;
use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

const RACE: &str = "scenarios/races/pod-worker-owns-lifecycle.yaml";
const INVARIANT: &str = "no-start-after-termination";

fn podsim() -> Command {
    Command::cargo_bin("podsim").unwrap()
}

fn dir(name: &str) -> Scratch {
    Scratch::new("shrink", name)
}

/// The catalog scenario with two more pods (one with two containers) and two more
/// timeline actions that name them.
fn noisy_input(d: &Path) -> PathBuf {
    let text = std::fs::read_to_string(RACE).unwrap();
    let pods = "  pods:\n    - template:\n        metadata: {name: noise}\n        spec:\n          containers: [{name: app, image: example/noise:1}]\n    - template:\n        metadata: {name: pair}\n        spec:\n          containers: [{name: a, image: example/a:1}, {name: b, image: example/b:1}]\n";
    let actions = "  timeline:\n    - {at: 5s, deletePod: {pod: noise}}\n    - {at: 8s, containerExit: {pod: pair, container: a, exitCode: 1}}\n";
    let noisy = text
        .replacen("  pods:\n", pods, 1)
        .replacen("  timeline:\n", actions, 1);
    let p = d.join("noisy.yaml");
    std::fs::write(&p, noisy).unwrap();
    p
}

fn shrink(input: &Path, out: &Path) -> Value {
    let o = podsim()
        .args(["shrink", input.to_str().unwrap(), "--profile", "v1.21"])
        .args(["--seed", "1", "--invariant", INVARIANT, "--json", "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn run_json(file: &Path, seed: u64, extra: &[&str]) -> (Option<i32>, Value) {
    let o = podsim()
        .arg("run")
        .arg(file)
        .args(["--seed", &seed.to_string(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    (o.status.code(), serde_json::from_slice(&o.stdout).unwrap())
}

fn count(v: &Value, key: &str) -> usize {
    v[key].as_array().unwrap().len()
}

#[test]
fn a_noisy_race_shrinks_to_a_small_file_that_replays_it_the_same_every_time() {
    let d = dir("noisy");
    let input = noisy_input(&d);
    let (_, base) = run_json(&input, 1, &["--profile", "v1.21"]);
    let names: Vec<&str> = base["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["invariant"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&INVARIANT),
        "the noisy input must show it: {names:?}"
    );
    assert_eq!(count(&base, "pods"), 6);

    let out = d.join("shrunk.yaml");
    let j = shrink(&input, &out);
    assert_eq!(j["invariant"], INVARIANT);
    assert_eq!(j["original"]["pods"], 6);
    assert_eq!(j["original"]["actions"], 6);
    // No more than the catalog scenario itself has (4 pods, 4 deletions).
    assert!(j["shrunk"]["pods"].as_u64().unwrap() <= 4, "{j}");
    assert!(j["shrunk"]["actions"].as_u64().unwrap() <= 4, "{j}");
    assert!(j["shrunk"]["events"].as_u64().unwrap() < j["original"]["events"].as_u64().unwrap());

    // (a) It replays under `podsim run`: the finding is there and `expect` holds (exit 0),
    // with no `--profile`: the file carries it.
    let seed = j["seed"].as_u64().unwrap();
    let (code, run) = run_json(&out, seed, &[]);
    assert_eq!(code, Some(0), "{run}");
    assert_eq!(run["expect"]["held"], true);
    assert!(run["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["invariant"] == INVARIANT));
    assert_eq!(run["profile"], "v1.21");
    assert!(count(&run, "pods") <= 4);
    // The replay line names the written file and the seed.
    let replay = j["replay"].as_str().unwrap();
    assert!(
        replay.contains("shrunk.yaml") && replay.ends_with(&format!("--seed {seed}")),
        "{replay}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains(INVARIANT) && text.contains("noisy.yaml"),
        "{text}"
    );
    assert!(text.contains("podsim shrink"), "{text}");
    // `podsim check` accepts it.
    podsim().arg("check").arg(&out).assert().success();

    // (c) Deterministic: a second shrink writes the same bytes.
    let again = d.join("again.yaml");
    shrink(&input, &again);
    assert_eq!(text, std::fs::read_to_string(&again).unwrap());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_seed_without_the_finding_is_a_usage_error() {
    let d = dir("absent");
    let out = d.join("x.yaml");
    // On `current` the race is fixed: seed 1 shows nothing.
    let o = podsim()
        .args([
            "shrink",
            RACE,
            "--seed",
            "1",
            "--invariant",
            INVARIANT,
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("seed 1 does not show `{INVARIANT}`")),
        "{err}"
    );
    assert!(!out.exists());
    // An invariant podsim does not know.
    let o = podsim()
        .args([
            "shrink",
            RACE,
            "--seed",
            "1",
            "--invariant",
            "no-start-after-terminaton",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("did you mean `no-start-after-termination`"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
