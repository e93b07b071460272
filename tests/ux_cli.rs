//! What a user sees on the command line: `-` for standard input and output, whether a
//! scenario's `expect` held, profile names, did-you-mean on every name, the order of
//! same-instant timeline actions, plurals, `invariants --json`, bisect's wording.

use crate::scratch::Scratch;
use assert_cmd::Command;

const QUICKSTART: &str = "scenarios/quickstart.yaml";
const SLOW_STOP: &str = "scenarios/shutdown/slow-stop.yaml";

fn podsim() -> Command {
    Command::cargo_bin("podsim").unwrap()
}

/// A fresh directory under the system's temporary directory.
fn tmp(name: &str) -> Scratch {
    Scratch::new("ux-cli", name)
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

// ---------------------------------------------------------------------------------------
// 2. Whether `expect` held is visible

#[test]
fn expect_held_is_said_in_the_summary_json_junit_and_exit_code() {
    let o = run(&["run", SLOW_STOP], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("findings: 2\n"), "{}", o.stdout);
    assert!(
        o.stdout.contains(
            "expect: held (2 findings, all expected: shutdown-kills-done-at-group-deadline)\n"
        ),
        "{}",
        o.stdout
    );
    let j = json(&run(&["run", SLOW_STOP, "--json"], None).stdout);
    assert_eq!(
        j["expect"],
        serde_json::json!({"held": true, "missing": [], "unexpected": []})
    );
    // No `expect` in the scenario: no key (the object is the run's output alone).
    let j = json(&run(&["run", QUICKSTART, "--json"], None).stdout);
    assert!(j.get("expect").is_none());
    assert!(!run(&["run", QUICKSTART], None).stdout.contains("expect:"));
    let junit = run(&["run", SLOW_STOP, "--junit", "-"], None).stdout;
    assert!(
        junit.contains(r#"<property name="expect" value="held"/>"#),
        "{junit}"
    );
    assert!(junit.contains("expect: held (2 findings"), "{junit}");
}

#[test]
fn expect_not_held_is_said_on_stdout_and_in_json_and_exits_1() {
    let set = "spec.expect.findings=[natural-completion]";
    let o = run(&["run", QUICKSTART, "--set", set], None);
    assert_eq!(o.code, 1);
    assert!(o.stdout.contains("findings: none\n"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("expect: NOT held: missing natural-completion\n"),
        "{}",
        o.stdout
    );
    let o = run(&["run", QUICKSTART, "--set", set, "--json"], None);
    assert_eq!(o.code, 1);
    assert_eq!(
        json(&o.stdout)["expect"],
        serde_json::json!({"held": false, "missing": ["natural-completion"], "unexpected": []})
    );
    // A finding the scenario does not expect.
    let set = "spec.expect.findings=[shutdown-pods-failed]";
    let o = run(&["run", SLOW_STOP, "--set", set, "--json"], None);
    assert_eq!(o.code, 1);
    let e = &json(&o.stdout)["expect"];
    assert_eq!(e["held"], false);
    assert_eq!(
        e["unexpected"],
        serde_json::json!(["shutdown-kills-done-at-group-deadline"])
    );
    let junit = run(&["run", SLOW_STOP, "--set", set, "--junit", "-"], None).stdout;
    assert!(
        junit.contains(r#"<property name="expect" value="not held"/>"#),
        "{junit}"
    );
}

#[test]
fn a_sweep_marks_expected_findings_and_fails_only_on_others_by_default() {
    let d = tmp("sweep-expected");
    let out = d.join("r");
    let o = run(
        &[
            "sweep",
            SLOW_STOP,
            "--seeds",
            "3",
            "--out",
            out.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .contains("shutdown-kills-done-at-group-deadline (expected)"),
        "{}",
        o.stdout
    );
    // Named in --fail-on, an expected finding fails the sweep.
    let o = run(
        &[
            "sweep",
            SLOW_STOP,
            "--seeds",
            "3",
            "--out",
            out.to_str().unwrap(),
            "--fail-on",
            "shutdown-kills-done-at-group-deadline",
            "--junit",
            "-",
        ],
        None,
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stdout.contains("failures=\"1\""), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("shutdown-kills-done-at-group-deadline (expected): 3 of 3 runs"),
        "{}",
        o.stdout
    );
    let _ = std::fs::remove_dir_all(&d);
}

// ---------------------------------------------------------------------------------------
// 3. `--profile v1.31`, and profile errors that name what the user typed

#[test]
fn v1_31_names_the_current_profile() {
    let a = run(&["run", QUICKSTART, "--profile", "v1.31", "--json"], None);
    let b = run(&["run", QUICKSTART, "--profile", "current", "--json"], None);
    assert_eq!((a.code, b.code), (0, 0), "{}", a.stderr);
    let (a, b) = (json(&a.stdout), json(&b.stdout));
    // The name the user gave is kept; both are the release v1.31.
    assert_eq!(a["profile"], "v1.31");
    assert_eq!(b["profile"], "current");
    assert_eq!(
        (&a["release"], &b["release"]),
        (&b["release"], &serde_json::json!("v1.31"))
    );
    assert_eq!(a["traceHash"], b["traceHash"]);
    let o = run(
        &["run", QUICKSTART, "--set", "spec.kubelet.profile=v1.31"],
        None,
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    let d = tmp("sweep-v131");
    let o = run(
        &[
            "sweep",
            QUICKSTART,
            "--seeds",
            "2",
            "--profile",
            "v1.31",
            "--profile",
            "current",
            "--out",
            d.join("r").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--profile v1.31 and --profile current name the same release, v1.31"),
        "{}",
        o.stderr
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn profile_errors_name_the_flag_and_list_the_valid_values() {
    let valid = "valid values: v1.21, v1.22, v1.23, v1.25, v1.27, v1.29, v1.31, current (another name for v1.31)";
    let o = run(&["run", QUICKSTART, "--profile", "v1.3"], None);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains(&format!(
            "error: --profile v1.3: unknown profile `v1.3` (did you mean `v1.23`?); {valid}"
        )),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("--set"), "{}", o.stderr);
    let d = tmp("sweep-profile");
    let o = run(
        &[
            "sweep",
            QUICKSTART,
            "--profile",
            "curent",
            "--out",
            d.join("r").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains(
            "error: --profile curent: unknown profile `curent` (did you mean `current`?)"
        ),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains(valid), "{}", o.stderr);
    assert!(!d.join("r").exists());
    let file =
        read(QUICKSTART).replace("  horizon: 3m", "  horizon: 3m\n  kubelet: {profile: v1.2}");
    let o = run(&["check", "-"], Some(&file));
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains(&format!(
            "error: <stdin>:11:22: spec.kubelet.profile: unknown profile `v1.2` (did you mean `v1.21`?); {valid}"
        )),
        "{}",
        o.stderr
    );
    let _ = std::fs::remove_dir_all(&d);
}

// ---------------------------------------------------------------------------------------
// 4. Every name is checked, with did-you-mean and the valid values

#[test]
fn invariant_switch_and_field_names_get_did_you_mean() {
    let file = read(QUICKSTART).replace(
        "  horizon: 3m",
        "  horizon: 3m\n  kubelet:\n    behaviours: {stopProbesAtTermnation: true}\n  expect:\n    findings: [readines-during-termination]\n  runtime2: {}",
    );
    let o = run(&["check", "-"], Some(&file));
    assert_eq!(o.code, 2);
    for want in [
        "error: <stdin>:12:18: spec.kubelet.behaviours.stopProbesAtTermnation: unknown behaviour switch `stopProbesAtTermnation`; did you mean `stopProbesAtTermination`? (`podsim bisect --list` lists all",
        "error: <stdin>:14:16: spec.expect.findings[0]: unknown invariant `readines-during-termination`; did you mean `readiness-during-termination`? (`podsim invariants` lists all",
        "error: <stdin>:15:3: spec.runtime2: unknown field `runtime2`; did you mean `runtime`? (expected one of: horizon, seed, scheduler, limits, kubelet, node, runtime, api, priorityClasses, pods, timeline, expect)",
    ] {
        assert!(o.stderr.contains(want), "{want}\n{}", o.stderr);
    }
    // A `--set` path into no podsim field (the thirteen latency keys are too many to list
    // beside the hint).
    let o = run(
        &[
            "run",
            QUICKSTART,
            "--set",
            "spec.runtime.latencies.stopContaner.fixed=1s",
        ],
        None,
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("unknown field `stopContaner`; did you mean `stopContainer`?"),
        "{}",
        o.stderr
    );
}

#[test]
fn fail_on_typos_are_refused() {
    let d = tmp("fail-on");
    let o = run(
        &[
            "sweep",
            QUICKSTART,
            "--fail-on",
            "readines-during-termination",
            "--out",
            d.join("r").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("error: --fail-on readines-during-termination: unknown invariant (did you mean `readiness-during-termination`?); valid values: any, none, or one or more of:"),
        "{}",
        o.stderr
    );
    assert!(!d.join("r").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn sweep_parameter_paths_are_checked_once_at_the_path() {
    let d = tmp("sweep-paths");
    let scenario = std::fs::canonicalize(QUICKSTART).unwrap();
    let sweep = format!(
        "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {{name: s}}\nspec:\n  scenario: {}\n  parameters:\n    - path: spec.runtime.latencies.stopContaner\n      values: [{{fixed: 1ms}}, {{fixed: 2ms}}]\n",
        scenario.display()
    );
    let o = run(&["check", "-"], Some(&sweep));
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("error: <stdin>:7:13: spec.parameters[0].path: spec.runtime.latencies.stopContaner: unknown field `stopContaner`; did you mean `stopContainer`?"),
        "{}",
        o.stderr
    );
    assert_eq!(
        o.stderr.matches("stopContaner`;").count(),
        1,
        "{}",
        o.stderr
    );
    let o = run(
        &[
            "sweep",
            QUICKSTART,
            "--seeds",
            "2",
            "--set",
            "spec.runtime.latencies.stopContaner.fixed=1s,2s,3s",
            "--out",
            d.join("r").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("error: --set spec.runtime.latencies.stopContaner.fixed: spec.runtime.latencies.stopContaner: unknown field `stopContaner`; did you mean `stopContainer`?"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stderr.matches("unknown field").count(), 1, "{}", o.stderr);
    let _ = std::fs::remove_dir_all(&d);
}

// ---------------------------------------------------------------------------------------
// 5. Timeline actions at the same instant happen in file order

#[test]
fn same_instant_timeline_actions_run_in_file_order_on_every_seed() {
    let scenario = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: same-instant-order}
spec:
  horizon: 40s
  pods:
    - template: {metadata: {name: a}, spec: {terminationGracePeriodSeconds: 11, containers: [{name: c}]}}
    - template: {metadata: {name: b}, spec: {terminationGracePeriodSeconds: 12, containers: [{name: c}]}}
    - template: {metadata: {name: c}, spec: {terminationGracePeriodSeconds: 13, containers: [{name: c}]}}
  timeline:
    - {at: 10s, deletePod: {pod: c}}
    - {at: 10s, deletePod: {pod: a}}
    - {at: 10s, recreatePod: {pod: a}}
    - {at: 10s, deletePod: {pod: b}}
";
    let want = [
        "delete grace=13s",
        "delete grace=11s",
        "force-deleted",
        "removed by force delete",
        "created a",
        "delete grace=12s",
    ];
    let mut interleaved = false;
    for seed in 1..=20u64 {
        let s = seed.to_string();
        let o = run(&["run", "-", "--seed", &s, "--trace", "-"], Some(scenario));
        assert_eq!(o.code, 0, "{}", o.stderr);
        let at10: Vec<serde_json::Value> = o
            .stdout
            .lines()
            .map(json)
            .filter(|r| r["atNs"] == 10_000_000_000u64)
            .collect();
        let api: Vec<String> = at10
            .iter()
            .filter_map(|r| r["rec"].as_str())
            .filter(|t| t.starts_with("api uid-"))
            .map(|t| t.splitn(3, ' ').nth(2).unwrap().to_owned())
            .collect();
        assert_eq!(api, want, "seed {seed}");
        // The kubelet's own events still interleave with them.
        let first = at10
            .iter()
            .position(|r| r["rec"].as_str().unwrap().ends_with("grace=13s"));
        let last = at10
            .iter()
            .position(|r| r["rec"].as_str().unwrap().ends_with("grace=12s"));
        if let (Some(f), Some(l)) = (first, last) {
            interleaved |= l - f + 1 > want.len();
        }
    }
    assert!(
        interleaved,
        "no other event ran between the actions on any seed"
    );
}

// ---------------------------------------------------------------------------------------
// 6. Plurals, `invariants --json`, bisect's wording

#[test]
fn counts_of_one_are_singular() {
    let o = run(&["run", QUICKSTART], None);
    assert!(
        o.stdout.contains(", 1 SIGKILL at grace expiry,"),
        "{}",
        o.stdout
    );
    let o = run(&["run", QUICKSTART, "--set", "spec.horizon=20s"], None);
    assert!(
        o.stdout.contains("app: 2 starts (1 restart)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("  app: 1 start, "), "{}", o.stdout);
    assert!(o.stdout.contains(", 1 restart, "), "{}", o.stdout);
    for bad in [
        " 1 restarts",
        " 1 starts",
        " 1 SIGKILLs",
        " 1 containers",
        " 1 pods",
    ] {
        assert!(!o.stdout.contains(bad), "{bad}\n{}", o.stdout);
    }
}

#[test]
fn invariants_json_lists_what_the_text_lists() {
    let o = run(&["invariants", "--json"], None);
    assert_eq!(o.code, 0);
    let all = json(&o.stdout);
    let all = all.as_array().unwrap();
    let text = run(&["invariants"], None).stdout;
    let blocks = text.matches("  source: ").count();
    assert_eq!(all.len(), blocks);
    for i in all {
        for k in [
            "name", "id", "kind", "profiles", "meaning", "bound", "source",
        ] {
            assert!(i.get(k).is_some(), "{k} missing in {i}");
        }
        let name = i["name"].as_str().unwrap();
        assert!(text.contains(&format!("{name}  [{}", i["id"].as_str().unwrap())));
    }
    let s1 = all.iter().find(|i| i["id"] == "S1").unwrap();
    assert_eq!(
        s1["profiles"],
        serde_json::json!(["v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31"])
    );
}

#[test]
fn bisect_says_when_a_profile_does_not_keep_the_invariant() {
    let o = run(&["bisect", QUICKSTART, "--seeds", "20"], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v121 = o
        .stdout
        .lines()
        .find(|l| l.starts_with("profile v1.21 "))
        .unwrap();
    assert!(
        v121.contains("<- changes the outcome, expected on this profile: v1.21 does not keep "),
        "{v121}"
    );
    assert!(o.stdout.contains("\nexpected on this profile: the outcome differs only through invariants that profile does not keep"), "{}", o.stdout);
    // v1.22 writes the terminal phase while containers run (before PR 108366, v1.24): it
    // does not keep no-terminal-phase-while-running either.
    let v122 = o
        .stdout
        .lines()
        .find(|l| l.starts_with("profile v1.22 "))
        .unwrap();
    assert!(
        v122.contains("expected on this profile: v1.22 does not keep "),
        "{v122}"
    );
    // A switch flipped on the base's release breaks what that release keeps: a plain change.
    let sw = o
        .stdout
        .lines()
        .find(|l| l.starts_with("switch terminalPhaseAfterTermination=false "))
        .unwrap();
    assert!(sw.ends_with("<- changes the outcome"), "{sw}");
    let j = json(&run(&["bisect", QUICKSTART, "--seeds", "20", "--json"], None).stdout);
    let v = j["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["label"] == "profile v1.21")
        .unwrap();
    assert_eq!(v["changesOutcome"], true);
    assert_eq!(v["expectedOnProfile"], true);
    assert!(v["notKept"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("natural-completion")));
}

/// A reader that went away (`podsim invariants | head`) is not a panic: the output stops
/// and the command ends with its own exit code. Any other write error on standard output
/// (a full disk) is an error, exit 2. The pipe's read end is closed before podsim
/// starts, so its first write fails.
#[test]
fn closed_or_full_standard_output_is_no_panic() {
    let bin = assert_cmd::cargo::cargo_bin("podsim");
    for args in [
        &["invariants"][..],
        &["invariants", "--json"],
        &["bisect", "--list"],
        &["run", QUICKSTART],
        &["check", QUICKSTART],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = std::process::Command::new(&bin)
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = std::process::Command::new(&bin)
        .arg("invariants")
        .stdout(full)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
}
