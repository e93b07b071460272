//! Outputs people open rather than read: `run --perfetto` (a trace-event file for the
//! Perfetto UI or `chrome://tracing`) and `podsim report` (one self-contained HTML page).
//! Both are checked for structure here, without a browser.

use crate::scratch::{Scratch, ScratchFile};
use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn podsim() -> Command {
    Command::cargo_bin("podsim").unwrap()
}

fn temp_dir(name: &str) -> Scratch {
    Scratch::new("ux", name)
}

/// Runs `scenario` with `--perfetto` into `dir` and returns the file's bytes.
fn perfetto_bytes(scenario: &str, dir: &Path, extra: &[&str]) -> Vec<u8> {
    let out = dir.join("trace.json");
    let mut cmd = podsim();
    cmd.args(["run", scenario, "--perfetto"])
        .arg(&out)
        .args(extra);
    let a = cmd.assert();
    let code = a.get_output().status.code();
    assert!(matches!(code, Some(0) | Some(1)), "exit {code:?}");
    std::fs::read(&out).unwrap()
}

/// The trace-event file, checked against the format's rules; returns its events.
fn check_format(bytes: &[u8]) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(bytes).expect("the file is one JSON document");
    assert_eq!(doc["displayTimeUnit"], "ms");
    let events = doc["traceEvents"].as_array().expect("traceEvents").clone();
    assert!(!events.is_empty());
    let mut procs = BTreeSet::new();
    let mut threads = BTreeSet::new();
    // Open B events per (pid, tid), and every X slice per (pid, tid).
    let mut open: BTreeMap<(u64, u64), Vec<String>> = BTreeMap::new();
    let mut slices: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for e in &events {
        let ph = e["ph"].as_str().expect("every event has ph");
        let pid = e["pid"].as_u64().expect("every event has a numeric pid");
        let tid = e["tid"].as_u64();
        assert!(e["name"].is_string(), "{e}");
        match ph {
            "M" => {
                let name = e["args"]["name"].as_str();
                match e["name"].as_str().unwrap() {
                    "process_name" => {
                        assert!(name.is_some_and(|n| !n.is_empty()), "{e}");
                        procs.insert(pid);
                    }
                    "thread_name" => {
                        assert!(name.is_some_and(|n| !n.is_empty()), "{e}");
                        threads.insert((pid, tid.expect("a thread name has a tid")));
                    }
                    "process_sort_index" | "thread_sort_index" => {
                        assert!(e["args"]["sort_index"].is_u64(), "{e}");
                    }
                    other => panic!("unknown metadata {other}"),
                }
            }
            "X" => {
                let ts = e["ts"].as_f64().expect("X has ts");
                let dur = e["dur"].as_f64().expect("X has dur");
                assert!(ts >= 0.0 && dur >= 0.0, "{e}");
                slices
                    .entry((pid, tid.unwrap()))
                    .or_default()
                    .push((ts, ts + dur));
            }
            "B" => open
                .entry((pid, tid.unwrap()))
                .or_default()
                .push(e["name"].to_string()),
            "E" => {
                let o = open.get_mut(&(pid, tid.unwrap())).and_then(Vec::pop);
                assert!(o.is_some(), "an E without its B: {e}");
            }
            "i" | "I" => {
                assert!(e["ts"].as_f64().is_some_and(|t| t >= 0.0), "{e}");
                assert!(["t", "p", "g"].contains(&e["s"].as_str().unwrap()), "{e}");
            }
            "C" => assert!(e["args"].is_object(), "{e}"),
            other => panic!("unexpected phase {other}: {e}"),
        }
    }
    assert!(open.values().all(Vec::is_empty), "B without E: {open:?}");
    // Every pid and (pid, tid) used is named.
    for e in events.iter().filter(|e| e["ph"] != "M") {
        let pid = e["pid"].as_u64().unwrap();
        assert!(procs.contains(&pid), "unnamed process {pid}: {e}");
        if let Some(tid) = e["tid"].as_u64() {
            assert!(threads.contains(&(pid, tid)), "unnamed thread: {e}");
        }
    }
    // On every thread, complete slices nest: none begins inside another and ends after it.
    for (track, mut s) in slices {
        s.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        let mut stack: Vec<f64> = Vec::new();
        for (b, e) in s {
            // (Times are decimals of a microsecond: allow for the float sum ts + dur.)
            while stack.last().is_some_and(|&end| end <= b + 1e-4) {
                stack.pop();
            }
            if let Some(&end) = stack.last() {
                assert!(
                    e <= end + 1e-4,
                    "overlapping slices on {track:?}: ends {end} and {e}"
                );
            }
            stack.push(e);
        }
    }
    events
}

/// The pid of the process named `name`.
fn pid_named(events: &[Value], name: &str) -> u64 {
    events
        .iter()
        .find(|e| e["name"] == "process_name" && e["args"]["name"] == name)
        .unwrap_or_else(|| panic!("no process {name}"))["pid"]
        .as_u64()
        .unwrap()
}

fn thread_name(events: &[Value], pid: u64, tid: u64) -> String {
    events
        .iter()
        .find(|e| e["name"] == "thread_name" && e["pid"] == pid && e["tid"] == tid)
        .map(|e| e["args"]["name"].as_str().unwrap().to_string())
        .unwrap()
}

/// (thread name, event name) of every event of `ph` in process `pid`.
fn named(events: &[Value], pid: u64, ph: &str) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|e| e["pid"] == pid && e["ph"] == ph)
        .map(|e| {
            let t = thread_name(events, pid, e["tid"].as_u64().unwrap());
            (t, e["name"].as_str().unwrap().to_string())
        })
        .collect()
}

#[test]
fn perfetto_trace_has_pods_phases_cri_calls_and_signals() {
    let dir = temp_dir("perfetto-quickstart");
    let bytes = perfetto_bytes("scenarios/quickstart.yaml", &dir, &[]);
    let events = check_format(&bytes);
    let web = pid_named(&events, "pod web (uid-0001)");
    let slices = named(&events, web, "X");
    let has = |t: &str, n: &str| slices.iter().any(|(a, b)| a == t && b == n);
    for phase in ["Pending", "Running", "Succeeded"] {
        assert!(has("phase", phase), "no {phase} slice: {slices:?}");
    }
    for sync in ["SyncPod", "SyncTerminatingPod", "SyncTerminatedPod"] {
        assert!(has("pod worker", sync), "no {sync} slice: {slices:?}");
    }
    for call in ["RunPodSandbox", "CreateContainer", "StopPodSandbox"] {
        assert!(has("runtime", call), "no {call} slice: {slices:?}");
    }
    for call in ["StartContainer", "StopContainer"] {
        assert!(has("app CRI", call), "no {call} slice: {slices:?}");
    }
    assert!(has("ready", "Ready"), "{slices:?}");
    assert!(
        slices
            .iter()
            .any(|(t, n)| t == "app" && n.starts_with("running")),
        "{slices:?}"
    );
    // The stubborn pod ignores SIGTERM and is SIGKILLed at grace expiry.
    let stubborn = pid_named(&events, "pod stubborn (uid-0003)");
    let instants = named(&events, stubborn, "i");
    for sig in ["SIGTERM", "SIGKILL"] {
        assert!(
            instants.iter().any(|(t, n)| t == "worker" && n == sig),
            "no {sig}: {instants:?}"
        );
    }
    assert!(instants
        .iter()
        .any(|(t, n)| t == "worker" && n.starts_with("exited code=137")));
    // A node process, and the run it came from.
    pid_named(&events, "node");
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(doc["otherData"]["scenario"], "quickstart");
    assert_eq!(doc["otherData"]["seed"], 1);
    // The same run gives the same bytes.
    assert_eq!(
        perfetto_bytes("scenarios/quickstart.yaml", &dir, &[]),
        bytes
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perfetto_findings_are_on_their_own_track() {
    let dir = temp_dir("perfetto-findings");
    let bytes = perfetto_bytes("scenarios/shutdown/slow-stop.yaml", &dir, &[]);
    let events = check_format(&bytes);
    let findings = pid_named(&events, "oracle findings");
    let on_track = named(&events, findings, "i");
    assert!(
        on_track
            .iter()
            .any(|(t, n)| t == "findings" && n == "shutdown-kills-done-at-group-deadline"),
        "{on_track:?}"
    );
    let f = events
        .iter()
        .find(|e| e["pid"] == findings && e["ph"] == "i")
        .unwrap();
    assert!(f["args"]["replay"]
        .as_str()
        .unwrap()
        .starts_with("podsim run scenarios/shutdown/slow-stop.yaml"));
    // The node's graceful shutdown: the groups and the power-off.
    let node = named(&events, pid_named(&events, "node"), "i");
    assert!(node
        .iter()
        .any(|(t, n)| t == "shutdown" && n == "power-off"));
    let node = named(&events, pid_named(&events, "node"), "X");
    assert!(node
        .iter()
        .any(|(t, n)| t == "shutdown" && n.starts_with("group priority")));
    // The critical pod's StopContainer was still in flight at the power-off: its slice
    // ends there, on its container's CRI thread.
    let critical = pid_named(&events, "pod critical (uid-0002)");
    let stop = events
        .iter()
        .find(|e| e["pid"] == critical && e["name"] == "StopContainer")
        .expect("a StopContainer slice");
    assert_eq!(stop["args"]["ended"], "node powered off");
    let tid = stop["tid"].as_u64().unwrap();
    assert_eq!(thread_name(&events, critical, tid), "agent CRI");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perfetto_trace_of_a_kubelet_restart_is_well_formed() {
    // Syncs cut short by the crash are closed at it, and the file still nests.
    let dir = temp_dir("perfetto-restart");
    for f in std::fs::read_dir("scenarios/restart").unwrap() {
        let f = f.unwrap().path();
        let bytes = perfetto_bytes(f.to_str().unwrap(), &dir, &[]);
        let events = check_format(&bytes);
        let kubelet = named(&events, pid_named(&events, "node"), "X");
        assert!(
            kubelet.iter().filter(|(t, _)| t == "kubelet").count() >= 2,
            "{}: {kubelet:?}",
            f.display()
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn perfetto_into_a_directory_is_refused_before_the_run() {
    let dir = temp_dir("perfetto-dir");
    podsim()
        .args(["run", "scenarios/quickstart.yaml", "--perfetto"])
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "cannot write perfetto trace {}",
            dir.display()
        )))
        .stdout(predicate::str::is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small sweep with findings (2 points x 2 profiles) into a temporary directory, with
/// `--report`.
fn small_sweep(name: &str) -> ScratchFile {
    let out = temp_dir(name).file("result");
    podsim()
        .args([
            "sweep",
            "scenarios/shutdown/slow-stop.yaml",
            "--seeds",
            "2",
            "--profile",
            "current",
            "--profile",
            "v1.27",
            "--set",
            "spec.pods[0].behaviour.app.preStopDuration=5s,9s",
            "--report",
            "--out",
        ])
        .arg(&out)
        .assert()
        // slow-stop's findings are the ones its `expect` lists: `--fail-on any` passes.
        .code(0)
        .stderr(predicate::str::contains(format!(
            "report: {}",
            out.join("report.html").display()
        )));
    out
}

/// The page's structure: one document, nothing fetched, every image inline.
fn check_self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
    assert_eq!(html.matches("<html").count(), 1);
    assert_eq!(html.matches("</html>").count(), 1);
    assert!(html.trim_end().ends_with("</html>"));
    assert!(html.contains("<meta name=\"viewport\""));
    for bad in [
        "src=\"http",
        "href=\"http",
        "<script",
        "<link",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(bad), "the page has {bad}");
    }
    for img in html.split("<img ").skip(1) {
        assert!(
            img.starts_with("src=\"data:image/svg+xml;base64,")
                || img.starts_with("src=\"data:image/png;base64,"),
            "an image that is not inline: {}",
            &img[..img.len().min(80)]
        );
    }
    assert!(!html.contains("<svg"), "SVG goes in as a data: image");
}

/// `s` as the page escapes text.
fn escaped(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn sweep_report_is_one_self_contained_page() {
    let out = small_sweep("report");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    check_self_contained(&html);
    // One rate row per point x profile.
    assert_eq!(html.matches("<tr class=\"cell\">").count(), 4);
    // The plots podsim drew are in the page.
    let plots = std::fs::read_dir(out.join("plots")).unwrap().count();
    assert!(plots > 0);
    assert!(html.matches("<img ").count() > 0);
    // Every cell's first failing run, with its replay line escaped.
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for c in summary["cells"].as_array().unwrap() {
        let replay = c["anyFinding"]["firstFailing"]["replay"].as_str().unwrap();
        assert!(replay.contains('\''), "{replay}");
        assert!(html.contains(&escaped(replay)), "{replay}");
    }
    assert!(html.contains("95&nbsp;%"));
    assert!(html.contains("shutdown-kills-done-at-group-deadline"));
    assert!(html.contains("containersAliveAtPowerOff"));
    // `podsim report DIR` writes the same page again (a pure function of the files).
    podsim()
        .args(["report"])
        .arg(&out)
        .args(["--out"])
        .arg(out.join("again.html"))
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(out.join("again.html")).unwrap(),
        html
    );
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
}

#[test]
fn report_escapes_what_it_reads() {
    let out = small_sweep("report-escape");
    let m = out.join("manifest.json");
    let text = std::fs::read_to_string(&m).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["scenario"] = Value::from("<b>bold</b> & <script>x</script>");
    v["name"] = Value::from("a<b>b");
    std::fs::write(&m, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    podsim().arg("report").arg(&out).assert().success();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    check_self_contained(&html);
    assert!(html.contains("&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;x&lt;/script&gt;"));
    assert!(html.contains("<title>podsim sweep a&lt;b&gt;b</title>"));
    assert!(!html.contains("<b>bold"));
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
}

#[test]
fn report_errors_name_the_file() {
    let dir = temp_dir("report-errors");
    // Not a result directory.
    podsim()
        .arg("report")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            dir.join("manifest.json").display().to_string(),
        ));
    assert!(!dir.join("report.html").exists());
    // A summary that is not JSON: the file and the line and column.
    let out = small_sweep("report-bad-summary");
    std::fs::write(out.join("summary.json"), "{\n  \"cells\": [\n    {,\n").unwrap();
    podsim()
        .arg("report")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{}: not JSON",
            out.join("summary.json").display()
        )))
        .stderr(predicate::str::contains("line 3 column"));
    // A summary without a field the page needs: its path.
    std::fs::write(out.join("summary.json"), "{\"cells\": [{\"point\": 0}]}").unwrap();
    podsim()
        .arg("report")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cells[0].profile: missing"));
    // An output path that cannot be written.
    let bundled = copy_bundled("report-errors-bundled");
    podsim()
        .arg("report")
        .arg(&bundled)
        .arg("--out")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "cannot write {}",
            dir.display()
        )));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(out.parent().unwrap());
    let _ = std::fs::remove_dir_all(&bundled);
}

/// A copy of the bundled `results/shutdown-vs-slow-stop` in a temporary directory (the
/// report takes the directory's lock, a file in it: tests write only under the temp dir).
fn copy_bundled(name: &str) -> Scratch {
    let dir = temp_dir(name);
    let from = Path::new("results/shutdown-vs-slow-stop");
    std::fs::create_dir_all(dir.join("plots")).unwrap();
    for f in ["manifest.json", "summary.json"] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
    for e in std::fs::read_dir(from.join("plots")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, dir.join("plots").join(p.file_name().unwrap())).unwrap();
    }
    dir
}

#[test]
fn report_of_a_bundled_result() {
    let dir = copy_bundled("report-bundled");
    let page = dir.join("report.html");
    podsim().arg("report").arg(&dir).assert().success();
    let html = std::fs::read_to_string(&page).unwrap();
    check_self_contained(&html);
    // 6 points x 1 profile; every plot of the directory (one per SVG).
    assert_eq!(html.matches("<tr class=\"cell\">").count(), 6);
    let svgs = std::fs::read_dir("results/shutdown-vs-slow-stop/plots")
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().unwrap() == "svg")
        .count();
    assert_eq!(html.matches("<img src=\"data:image/svg+xml").count(), svgs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--perfetto -` writes the trace alone on standard output (the summary goes to
/// standard error), and shares standard output with no other file.
#[test]
fn perfetto_dash_writes_standard_output_alone() {
    let out = podsim()
        .args(["run", "scenarios/quickstart.yaml", "--perfetto", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is one JSON document");
    assert!(!v["traceEvents"].as_array().unwrap().is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("replay: podsim run scenarios/quickstart.yaml --seed 1"));
    podsim()
        .args([
            "run",
            "scenarios/quickstart.yaml",
            "--perfetto",
            "-",
            "--trace",
            "-",
        ])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--perfetto -").and(predicate::str::contains("--trace -")),
        );
}

/// Directories cannot be standard output: `plot --out -` and `merge --out -` are usage
/// errors that create nothing named `-`.
#[test]
fn directories_are_not_standard_output() {
    let dir = temp_dir("dash-dirs");
    let res = copy_bundled("dash-dirs-result");
    for args in [
        vec![
            "plot".to_string(),
            res.display().to_string(),
            "--out".into(),
            "-".into(),
        ],
        vec![
            "merge".into(),
            res.display().to_string(),
            "--out".into(),
            "-".into(),
        ],
    ] {
        podsim()
            .current_dir(&dir)
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--out -"));
        assert!(!dir.join("-").exists(), "{args:?} created `-`");
    }
}
