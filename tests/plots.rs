//! Plots: `podsim run --timeline FILE` and `podsim plot DIR` (on the hand-made sweep result
//! in `tests/fixtures/sweep-result/`). Checks that the files appear, carry their text, are
//! byte-identical across runs (SVG), and that PNGs are valid PNGs.

use crate::scratch::Scratch;
use assert_cmd::Command;
use std::path::Path;

fn podsim() -> Command {
    Command::cargo_bin("podsim").unwrap()
}

/// A fresh, empty directory for one test.
fn temp_dir(name: &str) -> Scratch {
    Scratch::new("plots", name)
}

/// The contents of every `<text>` element of an SVG written by plotters.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let open = rest.find('>').unwrap();
        let close = rest.find("</text>").unwrap();
        out.push(rest[open + 1..close].trim().to_string());
        rest = &rest[close..];
    }
    out
}

/// PNG signature and IHDR size.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.len() > 1000, "PNG too small: {} bytes", bytes.len());
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG signature");
    assert_eq!(&bytes[12..16], b"IHDR");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    (w, h)
}

fn timeline(file: &str, out: &Path) {
    let o = podsim()
        .args(["run", file, "--timeline"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "podsim run {file} --timeline failed:\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn timeline_svg_has_pods_and_phases_and_is_deterministic() {
    let dir = temp_dir("timeline-svg");
    let (a, b) = (dir.join("a.svg"), dir.join("b.svg"));
    timeline("scenarios/lifecycle/graceful-delete.yaml", &a);
    timeline("scenarios/lifecycle/graceful-delete.yaml", &b);
    let sa = std::fs::read(&a).unwrap();
    assert_eq!(
        sa,
        std::fs::read(&b).unwrap(),
        "timeline SVG differs between runs"
    );
    let svg = String::from_utf8(sa).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80.min(svg.len())]);
    let texts = svg_texts(&svg);
    for want in [
        "polite",
        "stubborn",
        "drainer",
        "uid-0001",
        "app",
        // Band labels (the legend's entries are longer strings, except for these four).
        "Pending",
        "Running",
        "Succeeded",
        "Failed",
        "Deleted",
        "simulated time",
    ] {
        assert!(
            texts.iter().any(|t| t == want),
            "no text {want:?} in the timeline; texts: {texts:?}"
        );
    }
    // Phase labels appear in the bands, not only in the legend.
    assert!(texts.iter().filter(|t| *t == "Running").count() >= 4);
    assert!(texts.iter().any(|t| t == "Deleted (removed from the API)"));
    // Only the two SVGs: no temporary file left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
}

#[test]
fn timeline_png_is_a_png() {
    let dir = temp_dir("timeline-png");
    let p = dir.join("t.png");
    timeline("scenarios/lifecycle/graceful-delete.yaml", &p);
    let (w, h) = png_size(&std::fs::read(&p).unwrap());
    assert_eq!(w, 1280);
    assert!((150..2000).contains(&h), "height {h}");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
}

#[test]
fn timeline_shows_findings_and_probe_failures() {
    let dir = temp_dir("timeline-marks");
    let p = dir.join("t.svg");
    // A run limit gives a finding; its invariant name labels a vertical line.
    let o = podsim()
        .args([
            "run",
            "scenarios/quickstart.yaml",
            "--set",
            "spec.limits.maxEvents=300",
            "--timeline",
        ])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let texts = svg_texts(&std::fs::read_to_string(&p).unwrap());
    assert!(texts.iter().any(|t| t == "run-limit-reached"), "{texts:?}");
    // Liveness failures are drawn as markers (circles in the probe-failure colour).
    let q = dir.join("probes.svg");
    timeline("scenarios/probes/liveness-restart.yaml", &q);
    let svg = std::fs::read_to_string(&q).unwrap();
    let marks = svg.matches("<circle").count();
    assert!(
        marks >= 4,
        "expected probe-failure markers, found {marks} circles"
    );
}

#[test]
fn timeline_rejects_other_extensions() {
    let dir = temp_dir("timeline-ext");
    let o = podsim()
        .args(["run", "scenarios/quickstart.yaml", "--timeline"])
        .arg(dir.join("t.pdf"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(".svg or .png"));
}

/// Copy the fixture sweep result into a fresh directory.
fn fixture_copy(name: &str) -> Scratch {
    let dir = temp_dir(name);
    for f in ["manifest.json", "runs.jsonl", "summary.json"] {
        std::fs::copy(
            Path::new("tests/fixtures/sweep-result").join(f),
            dir.join(f),
        )
        .unwrap();
    }
    dir
}

const EXPECTED: [&str; 8] = [
    "rate--spec-pods-0-template-spec-terminationGracePeriodSeconds--removed-while-running",
    "rate--spec-pods-0-template-spec-terminationGracePeriodSeconds--sigkill-before-grace",
    "rate--spec-runtime-latencies-stopContainer-fixed--removed-while-running",
    "rate--spec-runtime-latencies-stopContainer-fixed--sigkill-before-grace",
    "heatmap--spec-pods-0-template-spec-terminationGracePeriodSeconds--spec-runtime-latencies-stopContainer-fixed--removed-while-running",
    "heatmap--spec-pods-0-template-spec-terminationGracePeriodSeconds--spec-runtime-latencies-stopContainer-fixed--sigkill-before-grace",
    "metric--timeToTerminatedNs",
    "metric--timeToRemovedNs",
];

#[test]
fn plot_writes_the_expected_files_deterministically() {
    let (a, b) = (fixture_copy("sweep-a"), fixture_copy("sweep-b"));
    for d in [&a, &b] {
        let o = podsim().arg("plot").arg(d).output().unwrap();
        assert!(
            o.status.success(),
            "podsim plot failed:\n{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stderr.is_empty(),
            "unexpected notes: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let mut names: Vec<String> = std::fs::read_dir(a.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    let mut want: Vec<String> = EXPECTED
        .iter()
        .flat_map(|s| [format!("{s}.png"), format!("{s}.svg")])
        .collect();
    want.sort();
    assert_eq!(names, want);
    for s in EXPECTED {
        let svg = format!("plots/{s}.svg");
        let x = std::fs::read(a.join(&svg)).unwrap();
        assert_eq!(x, std::fs::read(b.join(&svg)).unwrap(), "{svg} differs");
        let texts = svg_texts(&String::from_utf8(x).unwrap());
        for p in ["profile current", "profile v1.27"] {
            assert!(texts.iter().any(|t| t == p), "{svg}: no {p:?}: {texts:?}");
        }
        let (w, h) = png_size(&std::fs::read(a.join(format!("plots/{s}.png"))).unwrap());
        if s.starts_with("rate--") {
            assert_eq!((w, h), (960, 600));
        } else {
            assert!(w >= 640 && h >= 200, "{s}: {w}x{h}");
        }
    }
    let rate = std::fs::read_to_string(a.join(format!("plots/{}.svg", EXPECTED[3]))).unwrap();
    let texts = svg_texts(&rate);
    assert!(texts
        .iter()
        .any(|t| t == "finding rate: sigkill-before-grace"));
    assert!(texts
        .iter()
        .any(|t| t == "spec.runtime.latencies.stopContainer.fixed"));
    // Durations on a numeric axis, in seconds.
    assert!(texts.iter().any(|t| t == "2s"), "{texts:?}");
}

#[test]
fn plot_skips_what_is_missing_with_a_note() {
    let dir = temp_dir("sweep-partial");
    std::fs::write(
        dir.join("summary.json"),
        r#"{"points": [
            {"parameters": {"spec.scheduler": "fifo"}, "profile": "current", "runs": 10,
             "findings": {"any": {"runs": 1, "rate": 0.1, "ci95": [0.018, 0.404]}}},
            {"parameters": {"spec.scheduler": "random"}, "profile": "current", "runs": 10,
             "findings": {"any": {"runs": 3}},
             "metrics": {"timeToTerminatedNs": {"max": 5}}}
        ]}"#,
    )
    .unwrap();
    let o = podsim().arg("plot").arg(&dir).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("metrics.timeToTerminatedNs"), "{err}");
    let mut names: Vec<String> = std::fs::read_dir(dir.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "rate--spec-scheduler--any.png",
            "rate--spec-scheduler--any.svg"
        ]
    );
    // Categorical values label the axis.
    let texts = svg_texts(
        &std::fs::read_to_string(dir.join("plots/rate--spec-scheduler--any.svg")).unwrap(),
    );
    assert!(texts.iter().any(|t| t == "fifo") && texts.iter().any(|t| t == "random"));

    // No summary at all: an error, exit 2.
    let empty = temp_dir("sweep-empty");
    let o = podsim().arg("plot").arg(&empty).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("summary.json"));
}
