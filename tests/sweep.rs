//! `podsim sweep` and `podsim merge`: seed derivation, result files independent of the
//! thread count, resume, shards merged byte for byte, Wilson intervals, JUnit, exit codes,
//! progress on stderr only. Sweeps here are tens of runs of the quickstart scenario.

use crate::scratch::Scratch;
use assert_cmd::Command;
use podsim::results::{self, Axis, Manifest, Point};
use podsim::sweep::{replay, run_seed};
use std::collections::BTreeMap;
use std::path::Path;

fn podsim() -> Command {
    let mut c = Command::cargo_bin("podsim").unwrap();
    c.env_remove("PODSIM_PROGRESS_INTERVAL_MS")
        .env_remove("PODSIM_SWEEP_CHUNK");
    c
}

/// A fresh directory for one test.
fn tmp(name: &str) -> Scratch {
    Scratch::new("sweep", name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// 2 points x 8 seeds = 16 runs of the quickstart scenario; point 0 reaches the event
/// limit (a `run-limit-reached` finding) in every run, point 1 is clean.
const LIMIT_AXIS: &str = "spec.limits.maxEvents=500,100000";

fn sweep(out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut c = podsim();
    c.args(["sweep", "scenarios/quickstart.yaml", "--seeds", "8"])
        .args(["--set", LIMIT_AXIS])
        .arg("--out")
        .arg(out)
        .args(extra);
    c.assert()
}

/// A clean sweep: 2 stop latencies x 12 seeds.
fn clean_sweep(out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
    let mut c = podsim();
    c.args(["sweep", "scenarios/quickstart.yaml", "--seeds", "12"])
        .args([
            "--set",
            "spec.runtime.latencies.stopContainer={fixed: 10ms},{uniform: {min: 100ms, max: 3s}}",
        ])
        .arg("--out")
        .arg(out)
        .args(extra);
    c.assert()
}

fn rows(dir: &Path) -> Vec<serde_json::Value> {
    read(&dir.join("runs.jsonl"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn seed_derivation_is_stable() {
    // Golden values: changing them changes every published sweep's seeds.
    assert_eq!(run_seed(1, 0, 0), 6_293_807_484_751_265);
    assert_eq!(run_seed(1, 0, 1), 7_377_721_632_831_921);
    assert_eq!(run_seed(1, 0, 2), 439_448_119_331_749);
    assert_ne!(run_seed(1, 1, 0), run_seed(1, 0, 0));
    assert_ne!(run_seed(2, 0, 0), run_seed(1, 0, 0));
    // Every profile of a point runs on the same seeds (common random numbers).
    let m = Manifest {
        podsim: "x".into(),
        format: results::FORMAT,
        name: "t".into(),
        sweep_file: None,
        sweep_hash: None,
        scenario_file: "s.yaml".into(),
        scenario: "s".into(),
        scenario_hash: "0".into(),
        base_seed: 1,
        seeds: 3,
        seed_derivation: results::SEED_DERIVATION.into(),
        profiles: vec!["a".into(), "b".into()],
        profile_override: true,
        parameters: vec![Axis {
            path: "spec.x".into(),
            values: vec!["1".into(), "2".into()],
        }],
        points: (0..2)
            .map(|i| Point {
                index: i,
                parameters: BTreeMap::from([("spec.x".to_string(), (i + 1).to_string())]),
            })
            .collect(),
        run_order: results::RUN_ORDER.into(),
        runs: 12,
        shard: None,
        expected_findings: Vec::new(),
        scheduler: None,
    };
    assert_eq!(m.decode(0), (0, 0, 0));
    assert_eq!(m.decode(1), (0, 0, 1));
    assert_eq!(m.decode(2), (0, 1, 0));
    assert_eq!(m.decode(7), (1, 0, 1));
    let seed = run_seed(1, 0, 0);
    assert_eq!(
        replay(&m, 0),
        format!("podsim run s.yaml --seed {seed} --profile a --set spec.x=1")
    );
    assert_eq!(
        replay(&m, 1),
        format!("podsim run s.yaml --seed {seed} --profile b --set spec.x=1")
    );
}

#[test]
fn wilson_interval_known_values() {
    let close = |(a, b): (f64, f64), (c, d): (f64, f64)| {
        assert!(
            (a - c).abs() < 5e-5 && (b - d).abs() < 5e-5,
            "{a},{b} vs {c},{d}"
        );
    };
    close(results::wilson(0, 10), (0.0, 0.2775));
    close(results::wilson(5, 10), (0.2366, 0.7634));
    close(results::wilson(81, 263), (0.2553, 0.3662)); // Newcombe (1998)
    close(results::wilson(0, 100), (0.0, 0.0370));
    close(results::wilson(100, 100), (0.9630, 1.0));
}

#[test]
fn runs_and_summary_do_not_depend_on_jobs() {
    let d = tmp("jobs");
    clean_sweep(&d.join("j1"), &["--jobs", "1"]).success();
    // Two threads, and chunks of 5 runs written one after another.
    let mut c = podsim();
    c.env("PODSIM_SWEEP_CHUNK", "5")
        .args(["sweep", "scenarios/quickstart.yaml", "--seeds", "12"])
        .args([
            "--set",
            "spec.runtime.latencies.stopContainer={fixed: 10ms},{uniform: {min: 100ms, max: 3s}}",
        ])
        .arg("--out")
        .arg(d.join("j2"))
        .args(["--jobs", "2"])
        .assert()
        .success();
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        assert_eq!(
            read(&d.join("j1").join(f)),
            read(&d.join("j2").join(f)),
            "{f}"
        );
    }
    let r = rows(&d.join("j1"));
    assert_eq!(r.len(), 24);
    for (i, row) in r.iter().enumerate() {
        assert_eq!(row["index"], i as u64);
    }
}

#[test]
fn replay_line_reproduces_the_run() {
    let d = tmp("replay");
    clean_sweep(&d, &[]).success();
    let r = &rows(&d)[15];
    let line = r["replay"].as_str().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("podsim");
    let cmd = format!(
        "{} --json",
        line.replacen("podsim", &bin.display().to_string(), 1)
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &cmd])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["traceHash"], r["traceHash"], "{line}");
    assert_eq!(v["seed"], r["seed"]);
}

#[test]
fn resume_after_truncation_gives_identical_files() {
    let d = tmp("resume");
    let full = d.join("full");
    clean_sweep(&full, &[]).success();
    let part = d.join("part");
    std::fs::create_dir_all(&part).unwrap();
    std::fs::copy(full.join("manifest.json"), part.join("manifest.json")).unwrap();
    // Keep 9 complete lines and half of the 10th, as an interruption mid-write would.
    let text = read(&full.join("runs.jsonl"));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut cut: String = lines[..9].concat();
    cut.push_str(&lines[9][..lines[9].len() / 2]);
    std::fs::write(part.join("runs.jsonl"), cut).unwrap();
    clean_sweep(&part, &[])
        .success()
        .stderr(predicates::str::contains(
            "resuming: 9 of 24 runs already in",
        ))
        .stderr(predicates::str::contains("dropped a truncated last line"));
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        assert_eq!(read(&full.join(f)), read(&part.join(f)), "{f}");
    }
    // Each run exactly once, in index order.
    let idx: Vec<u64> = rows(&part)
        .iter()
        .map(|r| r["index"].as_u64().unwrap())
        .collect();
    assert_eq!(idx, (0..24).collect::<Vec<_>>());
    // A complete directory: nothing runs again, same files.
    clean_sweep(&part, &[])
        .success()
        .stderr(predicates::str::contains("resuming: 24 of 24"));
    assert_eq!(
        read(&full.join("runs.jsonl")),
        read(&part.join("runs.jsonl"))
    );
    // Other arguments: a different sweep, refused.
    podsim()
        .args([
            "sweep",
            "scenarios/quickstart.yaml",
            "--seeds",
            "5",
            "--out",
        ])
        .arg(&part)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("different sweep"))
        .stderr(predicates::str::contains("seeds"));
}

#[test]
fn shards_merge_into_the_unsharded_result() {
    let d = tmp("shards");
    sweep(&d.join("all"), &["--fail-on", "none"]).success();
    let mut shard_dirs = Vec::new();
    for i in 0..3 {
        let s = d.join(format!("s{i}"));
        sweep(&s, &["--shard", &format!("{i}/3"), "--fail-on", "none"]).success();
        let m: serde_json::Value = serde_json::from_str(&read(&s.join("manifest.json"))).unwrap();
        assert_eq!(m["shard"], serde_json::json!({"index": i, "count": 3}));
        for r in rows(&s) {
            assert_eq!(r["index"].as_u64().unwrap() % 3, i);
        }
        shard_dirs.push(s);
    }
    // Any order of the shard directories.
    podsim()
        .args(["merge"])
        .arg(&shard_dirs[2])
        .arg(&shard_dirs[0])
        .arg(&shard_dirs[1])
        .arg("--out")
        .arg(d.join("merged"))
        .args(["--fail-on", "none"])
        .assert()
        .success();
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        assert_eq!(
            read(&d.join("all").join(f)),
            read(&d.join("merged").join(f)),
            "{f}"
        );
    }
    // A missing shard, or one given twice, is refused.
    podsim()
        .args(["merge"])
        .arg(&shard_dirs[0])
        .arg(&shard_dirs[1])
        .arg("--out")
        .arg(d.join("m2"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("missing shard(s): 2/3"));
    podsim()
        .args(["merge"])
        .arg(&shard_dirs[0])
        .arg(&shard_dirs[0])
        .arg(&shard_dirs[1])
        .arg("--out")
        .arg(d.join("m3"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("given twice"));
}

#[test]
fn summary_counts_findings_with_first_failing_seed() {
    let d = tmp("summary");
    sweep(&d, &["--fail-on", "none"])
        .success()
        .stdout(predicates::str::contains("run-limit-reached"))
        .stdout(predicates::str::contains("first failing runs:"));
    let s: serde_json::Value = serde_json::from_str(&read(&d.join("summary.json"))).unwrap();
    let cells = s["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let f = &cells[0]["findings"]["run-limit-reached"];
    assert_eq!(f["runs"], 8);
    assert_eq!(f["rate"], 1.0);
    assert_eq!(f["firstFailing"]["replicate"], 0);
    assert_eq!(f["firstFailing"]["seed"], run_seed(1, 0, 0));
    assert!(f["firstFailing"]["replay"]
        .as_str()
        .unwrap()
        .ends_with("--set spec.limits.maxEvents=500"));
    assert_eq!(cells[1]["anyFinding"]["runs"], 0);
    assert_eq!(cells[1]["findings"], serde_json::json!({}));
    let m = &cells[1]["metrics"]["timeToTerminatedNs/web"];
    assert_eq!(m["n"], 8);
    assert!(m["p50"].as_u64().unwrap() <= m["p99"].as_u64().unwrap());
}

#[test]
fn fail_on_sets_the_exit_code() {
    let d = tmp("failon");
    let out = d.join("limit");
    sweep(&out, &[]).code(1);
    sweep(&out, &["--fail-on", "any"]).code(1);
    sweep(&out, &["--fail-on", "run-limit-reached"]).code(1);
    sweep(&out, &["--fail-on", "no-start-after-termination"]).code(0);
    sweep(&out, &["--fail-on", "none"]).code(0);
    clean_sweep(&d.join("clean"), &[]).code(0);
    // Bad input or usage: 2.
    sweep(&d.join("x"), &["--shard", "3/3"]).code(2);
    podsim()
        .args(["sweep", "scenarios/quickstart.yaml", "--seeds", "2"])
        .args(["--set", "spec.horizon=5m,banana"])
        .arg("--out")
        .arg(d.join("y"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("sweep point 1"));
}

#[test]
fn junit_reports_carry_the_replay_line() {
    let d = tmp("junit");
    let xml_path = d.join("sweep.xml");
    sweep(&d.join("out"), &["--junit", xml_path.to_str().unwrap()]).code(1);
    let xml = read(&xml_path);
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit XML");
    assert_eq!(report.tests, 2);
    assert_eq!(report.failures, 1);
    assert!(xml.contains(&format!(
        "replay: podsim run scenarios/quickstart.yaml --seed {} --set spec.limits.maxEvents=500",
        run_seed(1, 0, 0)
    )));
    // `run --junit`: a run with a finding, and a clean one.
    let run_xml = d.join("run.xml");
    podsim()
        .args(["run", "scenarios/quickstart.yaml", "--seed", "3"])
        .args(["--set", "spec.limits.maxEvents=500", "--junit"])
        .arg(&run_xml)
        .assert()
        .code(1);
    let xml = read(&run_xml);
    let report = quick_junit::Report::deserialize_from_str(&xml).expect("valid JUnit XML");
    assert_eq!((report.tests, report.failures), (1, 1));
    assert!(xml.contains(
        "replay: podsim run scenarios/quickstart.yaml --seed 3 --set spec.limits.maxEvents=500"
    ));
    podsim()
        .args(["run", "scenarios/quickstart.yaml", "--junit"])
        .arg(&run_xml)
        .assert()
        .success();
    let report = quick_junit::Report::deserialize_from_str(&read(&run_xml)).unwrap();
    assert_eq!((report.tests, report.failures), (1, 0));
}

#[test]
fn progress_goes_to_stderr_only() {
    let d = tmp("progress");
    let a = podsim()
        .env("PODSIM_PROGRESS_INTERVAL_MS", "0")
        .args(["sweep", "scenarios/quickstart.yaml", "--seeds", "12"])
        .args(["--set", "spec.api.statusWriteDelay.fixed=10ms,2s"])
        .arg("--out")
        .arg(&d)
        .assert()
        .success();
    let out = String::from_utf8(a.get_output().stdout.clone()).unwrap();
    let err = String::from_utf8(a.get_output().stderr.clone()).unwrap();
    assert!(out.starts_with("sweep quickstart: 2 points x 1 profile x 12 seeds = 24 runs"));
    assert!(!out.contains("runs/s"), "{out}");
    // A plain line after every run (interval 0), then the final one.
    assert!(err.matches("runs/s").count() >= 24, "{err}");
    assert!(err.contains("24/24 runs (100%)"), "{err}");
}

#[test]
fn bundled_sweep_files_run() {
    let d = tmp("bundled");
    // Sweeps measure rates, old profiles' findings included: every sweep must complete; on
    // `current` with no behaviour switched, a finding is allowed only for an invariant no
    // release holds (an open upstream bug, such as shutdown-kills-done-at-group-deadline).
    let holds_on_current = |name: &str| {
        name == "run-limit-reached"
            || podsim::oracle::invariants::by_name(name)
                .is_some_and(|i| i.profiles.contains(&podsim::NEWEST))
    };
    for f in std::fs::read_dir("scenarios/sweeps").unwrap() {
        let f = f.unwrap().path();
        let out = d.join(f.file_stem().unwrap());
        podsim()
            .arg("sweep")
            .arg(&f)
            .args(["--seeds", "3", "--fail-on", "none", "--out"])
            .arg(&out)
            .assert()
            .success();
        let m: serde_json::Value = serde_json::from_str(&read(&out.join("manifest.json"))).unwrap();
        let rows = rows(&out);
        assert_eq!(
            rows.len() as u64,
            m["points"].as_array().unwrap().len() as u64
                * m["profiles"].as_array().unwrap().len() as u64
                * 3
        );
        for r in &rows {
            let switched = r["parameters"]
                .as_object()
                .unwrap()
                .keys()
                .any(|k| k.contains("behaviours"));
            if r["profile"] != "current" || switched {
                continue;
            }
            for inv in r["findings"].as_object().unwrap().keys() {
                assert!(
                    !holds_on_current(inv),
                    "{}: {inv} on current: {}",
                    f.display(),
                    r["replay"]
                );
            }
        }
    }
}

#[test]
fn kubernetes_manifests_parse() {
    for f in [
        "deploy/sweep-indexed-job.yaml",
        "deploy/sweep-merge-job.yaml",
    ] {
        let docs: Vec<serde_json::Value> = serde_saphyr::from_str_multiple(&read(Path::new(f)))
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(docs.iter().any(|d| d["kind"] == "Job"), "{f}");
    }
    let job = read(Path::new("deploy/sweep-indexed-job.yaml"));
    assert!(job.contains("completionMode: Indexed"));
    assert!(job.contains("--shard \"${JOB_COMPLETION_INDEX}/4\""));
}
