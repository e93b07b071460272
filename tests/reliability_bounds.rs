//! Every quantity a user controls is bounded, and nothing hangs: run counts, `--jobs`,
//! total pods, input file sizes, streamed traces under the event budget, the size of a
//! timeline picture, and plots of absurd numbers. Each limit is tested with an input just
//! past it (never by allocating up to it), through the binary: exit code, a message naming
//! the flag or file and the cap, and no panic.

use crate::scratch::Scratch;
use assert_cmd::Command;
use std::path::Path;
use std::time::Duration;

fn podsim() -> Command {
    let mut c = Command::cargo_bin("podsim").unwrap();
    c.env_remove("PODSIM_SWEEP_CHUNK");
    c
}

/// A fresh directory for one test.
fn tmp(name: &str) -> Scratch {
    Scratch::new("bounds", name)
}

/// Runs `c`, expects exit code 2 and no panic; returns stderr.
fn bad_input(c: &mut Command) -> String {
    let out = c.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "stderr:\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn sweeps_over_the_run_cap_are_refused_before_any_work() {
    let d = tmp("run-cap");
    for seeds in ["18446744073709551615", "9007199254740993", "10000001"] {
        let out = d.join(seeds);
        let err = bad_input(
            podsim()
                .args(["sweep", "scenarios/quickstart.yaml", "--seeds", seeds])
                .arg("--out")
                .arg(&out),
        );
        assert!(err.contains(&format!("--seeds {seeds}")), "{err}");
        assert!(err.contains("10000000 runs"), "{err}");
        assert!(!out.exists(), "no result directory before the check");
    }
    // Exactly at the cap would be accepted: the refusal is the cap, not the number's size.
    // (Not run: 10^7 runs.) Two profiles x 5,000,001 seeds is just over it.
    let err = bad_input(podsim().args([
        "sweep",
        "scenarios/quickstart.yaml",
        "--seeds",
        "5000001",
        "--profile",
        "current",
        "--profile",
        "v1.22",
    ]));
    assert!(err.contains("10000002 runs"), "{err}");
}

#[test]
fn a_huge_grid_is_refused_before_it_is_built() {
    // 100 x 1000 points with a million seeds: 10^11 runs; the grid alone is over the cap.
    let a: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    let b: Vec<String> = (0..1000).map(|i| format!("{i}ms")).collect();
    let err = bad_input(
        podsim()
            .args(["sweep", "scenarios/quickstart.yaml", "--seeds", "1000000"])
            .arg("--set")
            .arg(format!(
                "spec.pods[0].template.spec.terminationGracePeriodSeconds={}",
                a.join(",")
            ))
            .arg("--set")
            .arg(format!(
                "spec.runtime.latencies.stopContainer.fixed={}",
                b.join(",")
            )),
    );
    assert!(err.contains("100 x 1000 points"), "{err}");
    assert!(err.contains("10000 points x profiles"), "{err}");
}

#[test]
fn bisect_over_the_run_cap_is_refused() {
    let err = bad_input(podsim().args([
        "bisect",
        "scenarios/quickstart.yaml",
        "--seeds",
        "4294967296",
    ]));
    assert!(err.contains("--seeds 4294967296"), "{err}");
    assert!(err.contains("10000000 runs"), "{err}");
}

#[test]
fn jobs_over_the_cap_are_refused() {
    let err = bad_input(podsim().args([
        "sweep",
        "scenarios/quickstart.yaml",
        "--seeds",
        "1",
        "--jobs",
        "100000",
    ]));
    assert!(err.contains("--jobs 100000"), "{err}");
    assert!(err.contains("256"), "{err}");
    let err = bad_input(podsim().args([
        "bisect",
        "scenarios/quickstart.yaml",
        "--seeds",
        "1",
        "--jobs",
        "257",
    ]));
    assert!(err.contains("--jobs 257") && err.contains("256"), "{err}");
}

#[test]
fn endless_or_huge_input_files_are_refused() {
    if Path::new("/dev/zero").exists() {
        for cmd in ["run", "check", "sweep"] {
            let err = bad_input(podsim().args([cmd, "/dev/zero"]));
            assert!(err.contains("/dev/zero"), "{cmd}: {err}");
            assert!(err.contains("16 MiB"), "{cmd}: {err}");
        }
    }
    // A regular file one byte over the cap (a YAML comment, then a valid scenario would
    // never be read).
    let d = tmp("big-file");
    let f = d.join("big.yaml");
    let mut text = String::from("#");
    text.push_str(&" ".repeat((16 << 20) - 1));
    text.push('\n');
    assert_eq!(text.len(), (16 << 20) + 1);
    std::fs::write(&f, &text).unwrap();
    let err = bad_input(podsim().arg("check").arg(&f));
    assert!(err.contains("big.yaml") && err.contains("16 MiB"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn total_pods_over_the_cap_name_the_entry_that_crosses_it() {
    let d = tmp("replicas");
    let f = d.join("many.yaml");
    // Ten pods, then a million more: the second entry crosses the cap (only ten pods are
    // ever expanded).
    let yaml = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: many}\nspec:\n  pods:\n    - replicas: 10\n      template:\n        metadata: {name: a}\n        spec: {containers: [{name: app, image: x}]}\n    - replicas: 1000000\n      template:\n        metadata: {name: b}\n        spec: {containers: [{name: app, image: x}]}\n";
    std::fs::write(&f, yaml).unwrap();
    for cmd in ["check", "run"] {
        let err = bad_input(podsim().arg(cmd).arg(&f));
        assert!(
            err.contains("many.yaml:10:") && err.contains("spec.pods[1].replicas"),
            "{cmd}: {err}"
        );
        assert!(err.contains("1000010 pods"), "{err}");
        assert!(err.contains("1000000"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// A 1 ns relist period makes events without end; the event budget stops the run.
fn runaway(max_events: u32) -> Vec<String> {
    vec![
        "--set".into(),
        "spec.kubelet.timing.plegRelistPeriod=1ns".into(),
        "--set".into(),
        format!("spec.limits.maxEvents={max_events}"),
    ]
}

#[test]
fn a_runaway_run_streams_its_trace_and_stops_at_the_event_budget() {
    let d = tmp("runaway");
    let (short, long) = (d.join("short.jsonl"), d.join("long.jsonl"));
    let out = podsim()
        .args(["run", "scenarios/quickstart.yaml", "--check-determinism"])
        .args(runaway(20_000))
        .arg("--trace")
        .arg(&short)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stdout.contains("[run-limit-reached]") && stdout.contains("max-events limit"),
        "{stdout}"
    );
    assert!(
        stdout.contains("replay: podsim run scenarios/quickstart.yaml --seed 1"),
        "{stdout}"
    );
    // Complete up to the stop: numbered from 0 without a gap, and the same records a
    // longer run starts with.
    let short_lines = lines(&short);
    assert!(short_lines.len() > 1000);
    for (i, l) in short_lines.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["i"], i as u64, "{l}");
    }
    assert!(stderr.contains("determinism check passed: two runs (two threads) gave trace hash"));
    assert!(
        stderr.contains(&format!("over {} records", short_lines.len())),
        "{stderr}"
    );
    podsim()
        .args(["run", "scenarios/quickstart.yaml"])
        .args(runaway(40_000))
        .arg("--trace")
        .arg(&long)
        .assert()
        .code(1);
    let long_lines = lines(&long);
    assert!(long_lines.len() > short_lines.len());
    assert_eq!(long_lines[..short_lines.len()], short_lines[..]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(p: &Path) -> (u32, u32) {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[1..4], b"PNG");
    let be = |i: usize| u32::from_be_bytes(b[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn a_timeline_of_thousands_of_pods_is_capped() {
    let d = tmp("timeline");
    let f = d.join("pods.yaml");
    let yaml = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: pods}\nspec:\n  horizon: 5s\n  node:\n    capacity: {cpu: \"8\", memory: 16Gi, pods: \"5000\"}\n  pods:\n    - replicas: 3000\n      template:\n        metadata: {name: web}\n        spec: {containers: [{name: app, image: x}]}\n";
    std::fs::write(&f, yaml).unwrap();
    let (png, svg) = (d.join("t.png"), d.join("t.svg"));
    for pic in [&png, &svg] {
        let out = podsim()
            .arg("run")
            .arg(&f)
            .arg("--timeline")
            .arg(pic)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // 3,000 rows of 30 px would be 90,000 px high; the picture stops at 16,000 px of rows.
    let (w, h) = png_size(&png);
    assert_eq!(w, 1280);
    assert!(h <= 16_500, "{h}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("... and "), "the left-out pods are counted");
    assert!(text.contains(" more pods"));
    let _ = std::fs::remove_dir_all(&d);
}

/// The hang detector waits between polls of the child: the test harness's wall clock,
/// never a simulation's.
#[allow(clippy::disallowed_methods)]
fn pause() {
    std::thread::sleep(Duration::from_millis(50));
}

/// Runs `podsim` with `args` and waits at most a minute: a hang detector (the plots take
/// well under a second), not a timing assertion. Returns (exit code, stderr).
fn within_a_minute(args: &[&std::ffi::OsStr]) -> (Option<i32>, String) {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("podsim"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // 1,200 waits of 50 ms: a minute (counted, not read from a clock).
    for _ in 0..1200 {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            return (status.code(), err);
        }
        pause();
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("podsim {args:?} did not return within a minute");
}

#[test]
fn plots_of_huge_numbers_return() {
    let d = tmp("plot-huge");
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        std::fs::copy(Path::new("tests/fixtures/sweep-result").join(f), d.join(f)).unwrap();
    }
    // Every parameter value +-1e308: the x range (and its padding) overflows f64.
    let p = d.join("summary.json");
    let mut summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    for (i, pt) in summary["points"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        for (_, v) in pt["parameters"].as_object_mut().unwrap().iter_mut() {
            *v = serde_json::json!(if i % 2 == 0 { 1e308 } else { -1e308 });
        }
    }
    std::fs::write(&p, serde_json::to_string(&summary).unwrap()).unwrap();
    let (code, err) = within_a_minute(&["plot".as_ref(), d.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(d.join("plots").read_dir().unwrap().count() > 0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_sweep_over_huge_values_of_an_unknown_field_plots_and_returns() {
    let d = tmp("sweep-huge");
    let out = d.join("out");
    let (code, err) = within_a_minute(&[
        "sweep".as_ref(),
        "scenarios/quickstart.yaml".as_ref(),
        "--seeds".as_ref(),
        "2".as_ref(),
        "--set".as_ref(),
        "spec.pods[0].template.spec.foo=1e308,-1e308".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(out.join("summary.json").exists());
    let _ = std::fs::remove_dir_all(&d);
}
