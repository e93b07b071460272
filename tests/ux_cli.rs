//! What a user sees on the command line: `-` for standard input and output, whether a
//! scenario's `expect` held, profile names, did-you-mean on every name, the order of
//! same-instant timeline actions, plurals, `invariants --json`, bisect's wording.

use assert_cmd::Command;
use std::path::PathBuf;

const QUICKSTART: &str = "scenarios/quickstart.yaml";
const SLOW_STOP: &str = "scenarios/shutdown/slow-stop.yaml";

fn podsim() -> Command {
    Command::cargo_bin("podsim").unwrap()
}

/// A fresh directory under the system's temporary directory.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("podsim-ux-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(args: &[&str], stdin: Option<&str>) -> Out {
    let mut c = podsim();
    c.args(args);
    if let Some(s) = stdin {
        c.write_stdin(s);
    }
    let o = c.output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}):\n{s}"))
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap()
}

// ---------------------------------------------------------------------------------------
// 1. `-` is standard input and standard output

#[test]
fn run_dash_reads_the_scenario_from_standard_input() {
    let file = run(&["run", QUICKSTART, "--json"], None);
    let piped = run(&["run", "-", "--json"], Some(&read(QUICKSTART)));
    assert_eq!((file.code, piped.code), (0, 0), "{}", piped.stderr);
    let (a, b) = (json(&file.stdout), json(&piped.stdout));
    assert_eq!(a["traceHash"], b["traceHash"]);
    assert_eq!(a["scenarioHash"], b["scenarioHash"]);
    // The replay line says where the scenario came from, as a shell comment.
    let replay = b["replay"].as_str().unwrap();
    assert_eq!(
        replay,
        "podsim run - --seed 1  # the scenario read from standard input"
    );
    // Notes about the file call it <stdin>.
    assert!(piped.stderr.contains("note: <stdin>:"), "{}", piped.stderr);
}

#[test]
fn check_dash_names_stdin_with_line_and_column() {
    let bad = read(QUICKSTART).replace("  horizon: 3m", "  horizn: 3m");
    let o = run(&["check", "-"], Some(&bad));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains(
            "error: <stdin>:10:3: spec.horizn: unknown field `horizn`; did you mean `horizon`?"
        ),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("panicked"));
    let o = run(&["check", "-"], Some(&read(QUICKSTART)));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout, "ok: <stdin>\n");
    // Standard input goes through the same size cap as a file.
    let huge = "#".repeat(17 << 20);
    let o = run(&["check", "-"], Some(&huge));
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("error: <stdin>: cannot read file"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("larger than 16 MiB"), "{}", o.stderr);
}

#[test]
fn trace_dash_writes_json_lines_on_stdout_and_the_summary_on_stderr() {
    let o = run(&["run", QUICKSTART, "--trace", "-"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let lines: Vec<serde_json::Value> = o.stdout.lines().map(json).collect();
    assert!(lines.len() > 100);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["i"], i as u64);
    }
    let last = lines.last().unwrap()["hash"].as_str().unwrap().to_owned();
    assert!(
        o.stderr.contains(&format!("trace hash {last}")),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("replay: podsim run"), "{}", o.stderr);
    let j = run(&["run", QUICKSTART, "--json"], None);
    assert_eq!(json(&j.stdout)["traceHash"], last.as_str());
    // No file named `-` appears.
    assert!(!std::path::Path::new("-").exists());
}

#[test]
fn junit_and_timeline_dash_write_on_stdout() {
    let o = run(&["run", QUICKSTART, "--junit", "-"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("<?xml"), "{}", o.stdout);
    assert!(o.stdout.trim_end().ends_with("</testsuites>"));
    assert!(o.stderr.contains("findings: none"));
    let o = run(&["run", QUICKSTART, "--timeline", "-"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("<svg"), "{}", &o.stdout[..100]);
    let png = podsim()
        .args([
            "run",
            QUICKSTART,
            "--timeline",
            "-",
            "--timeline-format",
            "png",
        ])
        .output()
        .unwrap();
    assert_eq!(png.status.code(), Some(0));
    assert!(png.stdout.starts_with(b"\x89PNG\r\n\x1a\n"));
    let o = run(
        &[
            "run",
            QUICKSTART,
            "--timeline",
            "t.svg",
            "--timeline-format",
            "png",
        ],
        None,
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("--timeline-format png does not match"),
        "{}",
        o.stderr
    );
}

#[test]
fn two_users_of_stdout_are_a_usage_error_naming_both_flags() {
    for (args, want) in [
        (
            vec!["--trace", "-", "--json"],
            "error: --trace - and --json would both write to standard output",
        ),
        (
            vec!["--junit", "-", "--timeline", "-"],
            "error: --junit - and --timeline - would both write to standard output",
        ),
    ] {
        let mut all = vec!["run", QUICKSTART];
        all.extend(args);
        let o = run(&all, None);
        assert_eq!(o.code, 2, "{all:?}");
        assert!(o.stderr.contains(want), "{}", o.stderr);
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn sweep_reads_stdin_and_writes_junit_on_stdout() {
    let d = tmp("sweep-stdin");
    let out = d.join("r");
    let o = run(
        &[
            "sweep",
            "-",
            "--seeds",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--junit",
            "-",
        ],
        Some(&read(QUICKSTART)),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.starts_with("<?xml"), "{}", o.stdout);
    // The table went to standard error.
    assert!(o.stderr.contains("sweep quickstart"), "{}", o.stderr);
    let m = json(&std::fs::read_to_string(out.join("manifest.json")).unwrap());
    assert_eq!(m["scenarioFile"], "-");
    // A sweep file on standard input: its relative scenario is found from here.
    let sweep = format!(
        "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {{name: s}}\nspec:\n  scenario: {QUICKSTART}\n  seeds: 2\n"
    );
    let out2 = d.join("r2");
    let o = run(
        &["sweep", "-", "--out", out2.to_str().unwrap()],
        Some(&sweep),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("sweep s: 1 point"), "{}", o.stdout);
    let o = run(&["sweep", QUICKSTART, "--out", "-"], None);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--out -"), "{}", o.stderr);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bisect_reads_stdin() {
    let o = run(
        &["bisect", "-", "--seeds", "2", "--json"],
        Some(&read(QUICKSTART)),
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(json(&o.stdout)["scenario"], "quickstart");
}
