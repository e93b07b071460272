//! What a user sees of sweeps and plots (issue 13, part B), through the binary: the
//! README's `--set ...fixed=` sweep works, parameter values have one canonical spelling
//! everywhere, rate plots draw numeric axes as lines and categorical ones as error bars,
//! every profile is in every plot with its own colour, 2-D sweeps get heatmaps, metrics get
//! box plots and a printed table, a resumed sweep counts its resumed runs, PNG write
//! errors are sentences, `plot --out`, and the timeline's restarts, Ready strip and labels.

use crate::scratch::Scratch;
use assert_cmd::Command;
use std::path::Path;

fn podsim() -> Command {
    let mut c = Command::cargo_bin("podsim").unwrap();
    c.env_remove("PODSIM_PROGRESS_INTERVAL_MS")
        .env_remove("PODSIM_SWEEP_CHUNK");
    c
}

fn tmp(name: &str) -> Scratch {
    Scratch::new("ux-plots", name)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).to_string()
}

/// The texts of an SVG's `<text>` elements.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// The opening tags of `element` in an SVG.
fn tags<'a>(svg: &'a str, element: &str) -> Vec<&'a str> {
    let open = format!("<{element} ");
    svg.match_indices(&open)
        .map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()])
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let k = format!(" {name}=\"");
    let i = tag.find(&k)? + k.len();
    Some(&tag[i..i + tag[i..].find('"')?])
}

/// The colours `podsim` gives `v1.27` and `current` in every plot.
const V127: &str = "#009E73";
const CURRENT: &str = "#0072B2";

/// A sweep of quickstart runs into `out`; panics unless it exits 0.
fn sweep(out: &Path, args: &[&str]) -> std::process::Output {
    let o = podsim()
        .args(["sweep", "scenarios/quickstart.yaml", "--fail-on", "none"])
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    o
}

#[test]
fn the_readme_sweep_over_one_distribution_kind_runs() {
    let d = tmp("readme-sweep");
    let o = sweep(
        &d.join("out"),
        &[
            "--seeds",
            "2",
            "--set",
            "spec.runtime.latencies.stopContainer.fixed=10ms,1s",
        ],
    );
    let out = text(&o.stdout);
    assert!(
        out.contains("point 1: spec.runtime.latencies.stopContainer.fixed=1s"),
        "{out}"
    );
    // And the `run --help` pattern: setting `fixed` replaces the scenario's `uniform`.
    let run = |set: &[&str]| {
        let o = podsim()
            .args(["run", "scenarios/quickstart.yaml", "--json"])
            .args(set)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["traceHash"].as_str().unwrap().to_string()
    };
    let fixed = run(&["--set", "spec.runtime.latencies.stopContainer.fixed=2s"]);
    let as_map = run(&["--set", "spec.runtime.latencies.stopContainer={fixed: 2s}"]);
    assert_eq!(fixed, as_map, "`.fixed=2s` and `={{fixed: 2s}}` differ");
    assert_ne!(fixed, run(&[]));
}

#[test]
fn a_sweep_whose_every_point_is_invalid_fails_before_any_run() {
    let d = tmp("all-bad");
    let out = d.join("out");
    let o = podsim()
        .args(["sweep", "scenarios/quickstart.yaml", "--seeds", "2"])
        .args([
            "--set",
            "spec.runtime.latencies.stopContainer.fixed=soon,later",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("sweep point 0") && err.contains("sweep point 1"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "a result directory was created");
}

#[test]
fn the_readme_override_example_changes_the_summary() {
    let run = |set: &[&str]| {
        let o = podsim()
            .args(["run", "scenarios/lifecycle/graceful-delete.yaml"])
            .args(set)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let out = text(&o.stdout);
        let i = out.find("pod stubborn").unwrap();
        out[i..].lines().take(3).collect::<Vec<_>>().join("\n")
    };
    let set = [
        "--set",
        "spec.pods[1].template.spec.terminationGracePeriodSeconds=2",
    ];
    let (before, after) = (run(&[]), run(&set));
    assert!(before.contains("(+5.0"), "{before}");
    assert!(after.contains("(+2.0"), "{after}");
    let readme = read(Path::new("README.md"));
    assert!(readme.contains("spec.pods[1].template.spec.terminationGracePeriodSeconds=2"));
}

#[test]
fn parameter_values_have_one_canonical_spelling_everywhere() {
    let d = tmp("labels");
    let out = d.join("out");
    let junit = d.join("junit.xml");
    let o = sweep(
        &out,
        &[
            "--seeds",
            "2",
            "--set",
            "spec.runtime.latencies.stopContainer={fixed:   10ms},{\"lognormal\": {\"median\": \"1s\", \"p99\": \"20s\"}}",
            "--junit",
            junit.to_str().unwrap(),
        ],
    );
    let stdout = text(&o.stdout);
    for want in [
        "point 0: spec.runtime.latencies.stopContainer=fixed 10ms",
        "point 1: spec.runtime.latencies.stopContainer=lognormal median 1s p99 20s",
    ] {
        assert!(stdout.contains(want), "no {want:?} in:\n{stdout}");
    }
    let row: serde_json::Value =
        serde_json::from_str(read(&out.join("runs.jsonl")).lines().next().unwrap()).unwrap();
    let path = "spec.runtime.latencies.stopContainer";
    assert_eq!(row["parameters"][path], "{fixed: 10ms}");
    assert_eq!(row["labels"][path], "fixed 10ms");
    // Replay lines carry the raw value in its one YAML spelling.
    let replay = row["replay"].as_str().unwrap();
    assert!(
        replay.ends_with("--set 'spec.runtime.latencies.stopContainer={fixed: 10ms}'"),
        "{replay}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&read(&out.join("summary.json"))).unwrap();
    assert_eq!(
        summary["cells"][1]["labels"][path],
        "lognormal median 1s p99 20s"
    );
    assert_eq!(
        summary["parameters"][0]["labels"],
        serde_json::json!(["fixed 10ms", "lognormal median 1s p99 20s"])
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&read(&out.join("manifest.json"))).unwrap();
    assert_eq!(manifest["format"], 3);
    let xml = read(&junit);
    assert!(xml.contains("stopContainer=fixed 10ms"), "{xml}");
    assert!(!xml.contains("{fixed"), "{xml}");
    // A sweep file's value is stored in the same spelling as the `--set` one.
    let sf = d.join("s.yaml");
    std::fs::write(
        &sf,
        format!(
            "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {{name: s}}\nspec:\n  scenario: {}\n  seeds: 1\n  parameters:\n    - path: {path}\n      values: [{{\"fixed\": \"10ms\"}}]\n",
            std::fs::canonicalize("scenarios/quickstart.yaml").unwrap().display()
        ),
    )
    .unwrap();
    let o = podsim()
        .arg("sweep")
        .arg(&sf)
        .args(["--fail-on", "none", "--out"])
        .arg(d.join("file"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let m: serde_json::Value = serde_json::from_str(&read(&d.join("file/manifest.json"))).unwrap();
    assert_eq!(m["parameters"][0]["values"][0], "{fixed: 10ms}");
}

/// A two-profile sweep over a categorical axis (distributions) and a numeric one.
fn two_axis_sweep(out: &Path) -> std::process::Output {
    sweep(
        out,
        &[
            "--seeds",
            "3",
            "--profile",
            "v1.27",
            "--profile",
            "current",
            "--set",
            "spec.runtime.latencies.stopContainer={fixed: 10ms},{uniform: {min: 100ms, max: 3s}}",
            "--set",
            "spec.limits.maxEvents=500,100000",
        ],
    )
}

#[test]
fn rate_plots_draw_categories_as_error_bars_and_numbers_as_lines() {
    let d = tmp("rates");
    let out = d.join("out");
    two_axis_sweep(&out);
    let plots = out.join("plots");
    let cat = read(&plots.join("rate--spec-runtime-latencies-stopContainer--any.svg"));
    // No line in a profile's colour joins one category to the next.
    let coloured = |svg: &str, el: &str| -> usize {
        tags(svg, el)
            .iter()
            .filter(|t| [V127, CURRENT].contains(&attr(t, "stroke").unwrap_or("")))
            .count()
    };
    assert_eq!(coloured(&cat, "polyline"), 0, "a line between categories");
    // An error bar (a 2-px-wide rectangle) per category and profile.
    let bars = tags(&cat, "rect")
        .into_iter()
        .filter(|t| {
            attr(t, "width") == Some("2")
                && [V127, CURRENT].contains(&attr(t, "fill").unwrap_or(""))
        })
        .count();
    assert_eq!(bars, 2 * 2, "error bars:\n{cat}");
    let texts = svg_texts(&cat);
    for want in [
        "fixed 10ms",
        "uniform 100ms..3s",
        "profile v1.27",
        "profile current",
    ] {
        assert!(texts.iter().any(|t| t == want), "no {want:?}: {texts:?}");
    }
    assert!(
        !texts.iter().any(|t| t.contains('{')),
        "raw JSON: {texts:?}"
    );
    // The numeric axis: a line per profile and an interval band.
    let num = read(&plots.join("rate--spec-limits-maxEvents--any.svg"));
    assert!(coloured(&num, "polyline") >= 2, "{num}");
    assert!(!tags(&num, "polygon").is_empty(), "no band: {num}");
}

#[test]
fn every_profile_is_in_every_plot_with_one_colour() {
    // v1.21 reports the invariant, current never does: current is still drawn (at 0 %).
    let d = tmp("zero");
    std::fs::write(
        d.join("summary.json"),
        r#"{"cells": [
            {"point": 0, "profile": "current", "parameters": {"p": "1s"}, "runs": 10,
             "anyFinding": {"runs": 0}, "findings": {}},
            {"point": 0, "profile": "v1.21", "parameters": {"p": "1s"}, "runs": 10,
             "anyFinding": {"runs": 10}, "findings": {"x": {"runs": 10}}},
            {"point": 1, "profile": "current", "parameters": {"p": "2s"}, "runs": 10,
             "anyFinding": {"runs": 0}, "findings": {}},
            {"point": 1, "profile": "v1.21", "parameters": {"p": "2s"}, "runs": 10,
             "anyFinding": {"runs": 5}, "findings": {"x": {"runs": 5}}}
        ]}"#,
    )
    .unwrap();
    let o = podsim().arg("plot").arg(&d).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let svg = read(&d.join("plots/rate--p--x.svg"));
    assert!(
        svg_texts(&svg).iter().any(|t| t == "profile current"),
        "{svg}"
    );
    // current's line is drawn, in current's colour (also when it is the only profile).
    assert!(
        tags(&svg, "polyline")
            .iter()
            .any(|t| attr(t, "stroke") == Some(CURRENT)),
        "{svg}"
    );
    let swatch = |svg: &str, colour: &str| {
        tags(svg, "rect")
            .iter()
            .any(|t| attr(t, "fill") == Some(colour) && attr(t, "width") == Some("20"))
    };
    let any = read(&d.join("plots/rate--p--any.svg"));
    assert!(swatch(&svg, CURRENT) && swatch(&any, CURRENT));
    assert!(swatch(&svg, "#D55E00"), "v1.21's colour");
    // The legend is above the plotting area: its swatches are higher than the 100 % tick.
    let tick_y = tags(&svg, "text")
        .iter()
        .zip(svg_texts(&svg))
        .find(|(_, t)| t == "100%")
        .and_then(|(tag, _)| attr(tag, "y").map(|y| y.parse::<i32>().unwrap()))
        .expect("a 100% tick");
    for t in tags(&svg, "rect")
        .iter()
        .filter(|t| attr(t, "width") == Some("20"))
    {
        let y: i32 = attr(t, "y").unwrap().parse().unwrap();
        assert!(y + 10 < tick_y - 4, "legend at {y}, 100% tick at {tick_y}");
    }
}

#[test]
fn a_two_parameter_sweep_gets_heatmaps_and_metrics_get_box_plots() {
    let d = tmp("heatmap");
    let out = d.join("out");
    let o = two_axis_sweep(&out);
    let plots = out.join("plots");
    let heat = plots.join(
        "heatmap--spec-runtime-latencies-stopContainer--spec-limits-maxEvents--run-limit-reached.svg",
    );
    let svg = read(&heat);
    let texts = svg_texts(&svg);
    // maxEvents 500 stops every run: 100 % in those cells, 0 % in the others, per profile.
    assert_eq!(
        texts.iter().filter(|t| *t == "100%").count(),
        2 * 2,
        "{texts:?}"
    );
    assert_eq!(
        texts.iter().filter(|t| *t == "0%").count(),
        2 * 2,
        "{texts:?}"
    );
    assert!(plots
        .join(heat.file_name().unwrap())
        .with_extension("png")
        .exists());
    // Box plots per point instead of one pooled histogram.
    assert!(!plots.join("time-to-terminated.svg").exists());
    let boxes = read(&plots.join("metric--timeToTerminatedNs-web.svg"));
    let texts = svg_texts(&boxes);
    for want in [
        "fixed 10ms",
        "uniform 100ms..3s",
        "profile v1.27",
        "profile current",
    ] {
        assert!(texts.iter().any(|t| t == want), "no {want:?}: {texts:?}");
    }
    // The printed metrics table and the JUnit report carry the metrics.
    let stdout = text(&o.stdout);
    assert!(stdout.contains("metrics per run"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("0 ") && l.contains("timeToTerminatedNs/web")),
        "{stdout}"
    );
}

#[test]
fn the_junit_report_keeps_the_metrics() {
    let d = tmp("junit-metrics");
    let junit = d.join("j.xml");
    sweep(
        &d.join("out"),
        &["--seeds", "2", "--junit", junit.to_str().unwrap()],
    );
    let xml = read(&junit);
    assert!(xml.contains("metric timeToTerminatedNs/web: n 2"), "{xml}");
}

#[test]
fn a_resumed_sweep_counts_the_resumed_runs_and_their_findings() {
    let d = tmp("resume");
    let out = d.join("out");
    // Point 0 (maxEvents 500) reports run-limit-reached in each of its 4 runs.
    let args = ["--seeds", "4", "--set", "spec.limits.maxEvents=500,100000"];
    sweep(&out, &args);
    let runs = out.join("runs.jsonl");
    let first: Vec<String> = read(&runs)
        .lines()
        .take(4)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&runs, first.concat()).unwrap();
    let o = podsim()
        .args(["sweep", "scenarios/quickstart.yaml", "--fail-on", "none"])
        .args(args)
        .arg("--out")
        .arg(&out)
        .env("PODSIM_PROGRESS_INTERVAL_MS", "0")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let last = err
        .lines()
        .rev()
        .find(|l| l.starts_with("sweep quickstart: 8/8 runs"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(last.contains("4 resumed"), "{last}");
    assert!(last.contains("findings: run-limit-reached 4"), "{last}");
}

#[test]
fn a_png_that_cannot_be_written_is_a_sentence() {
    let d = tmp("png");
    let path = d.join("missing").join("t.png");
    let o = podsim()
        .args(["run", "scenarios/quickstart.yaml", "--timeline"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!("cannot write {}", path.display()))
            && err.contains("No such file or directory"),
        "{err}"
    );
    assert!(
        !err.contains("ImageError") && !err.contains("Os {"),
        "{err}"
    );
}

#[test]
fn plot_out_writes_where_asked() {
    let d = tmp("plot-out");
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        std::fs::copy(Path::new("tests/fixtures/sweep-result").join(f), d.join(f)).unwrap();
    }
    let elsewhere = d.join("elsewhere");
    let o = podsim()
        .arg("plot")
        .arg(&d)
        .arg("--out")
        .arg(&elsewhere)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(elsewhere
        .join("rate--spec-runtime-latencies-stopContainer-fixed--sigkill-before-grace.svg")
        .exists());
    assert!(!d.join("plots").exists());
}

/// The timeline SVG of `scenario` (seed 1).
fn timeline(scenario: &str, d: &Path) -> String {
    let p = d.join("t.svg");
    let o = podsim()
        .args(["run", scenario, "--timeline"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(o.status.code() == Some(0) || o.status.code() == Some(1));
    read(&p)
}

#[test]
fn the_timeline_draws_a_bar_per_start_a_visible_ready_strip_and_clear_labels() {
    let d = tmp("timeline");
    let svg = timeline("scenarios/quickstart.yaml", &d);
    let o = podsim()
        .args(["run", "scenarios/quickstart.yaml", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let starts = v["metrics"]["containerStarts"].as_u64().unwrap() as usize;
    let rects = tags(&svg, "rect");
    let fill = |c: &str| rects.iter().filter(|t| attr(t, "fill") == Some(c)).count();
    // Every start is a bar; restarts alternate shades (the legend has one of the first).
    assert_eq!(fill("#465A78") + fill("#738CB4") - 1, starts, "{svg}");
    assert!(fill("#738CB4") >= 1);
    let ready: Vec<i32> = rects
        .iter()
        .filter(|t| attr(t, "fill") == Some("#14783C"))
        .map(|t| attr(t, "height").unwrap().parse().unwrap())
        .collect();
    assert!(
        !ready.is_empty() && ready.iter().all(|h| *h >= 4),
        "{ready:?}"
    );
    // Power-off and finding labels sit above the rows, clear of every container bar.
    let svg = timeline("scenarios/shutdown/slow-stop.yaml", &d);
    let bars_top = tags(&svg, "rect")
        .iter()
        .filter(|t| attr(t, "fill") == Some("#465A78"))
        .map(|t| attr(t, "y").unwrap().parse::<i32>().unwrap())
        .min()
        .unwrap();
    let labels: Vec<i32> = tags(&svg, "text")
        .iter()
        .zip(svg_texts(&svg))
        .filter(|(_, t)| t == "node power-off" || t.starts_with("shutdown-kills-done"))
        .map(|(tag, _)| attr(tag, "y").unwrap().parse().unwrap())
        .collect();
    assert_eq!(labels.len(), 3, "{svg}");
    assert!(
        labels.iter().all(|y| *y + 12 < bars_top),
        "{labels:?} vs {bars_top}"
    );
}
