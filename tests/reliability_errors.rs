//! Bad input through the binary: every problem is an exit code 2 with the file (or the
//! `--set`), field path and line:column, a message saying what is wrong and what is right,
//! no panic, nothing silently dropped or hidden.
//!
//! Included from `tests/main.rs` as `mod reliability_errors;`.

use assert_cmd::Command;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn podsim() -> Command {
    let mut c = Command::cargo_bin("podsim").unwrap();
    c.env_remove("PODSIM_PROGRESS_INTERVAL_MS")
        .env_remove("PODSIM_SWEEP_CHUNK");
    c
}

/// A fresh directory for one test.
fn tmp(name: &str) -> Scratch {
    Scratch::new("relerr", name)
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Runs podsim with `args`; asserts exit code 2 and no panic; returns stderr.
fn fails<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = podsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// `stderr` holds `want`.
fn has(stderr: &str, want: &str) {
    assert!(stderr.contains(want), "missing `{want}` in:\n{stderr}");
}

use crate::scenario_errors::BASE;
use crate::scratch::Scratch;

fn base(dir: &Path) -> PathBuf {
    write(dir, "base.yaml", BASE)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn the_base_scenario_is_valid() {
    let d = tmp("base");
    podsim().arg("check").arg(base(&d)).assert().success();
}

#[test]
fn invalid_utf8_is_reported_at_the_first_bad_byte() {
    let d = tmp("utf8");
    let mut bytes = BASE.replace("name: t", "name: té").into_bytes();
    // Line 4 is `  name: té`; the bad byte follows `é` (column 11 in characters).
    let at = BASE.find("name: t").unwrap() + "name: té".len();
    bytes.insert(at, 0xFF);
    let f = write(&d, "bad.yaml", &bytes);
    for cmd in ["check", "run"] {
        let e = fails([OsStr::new(cmd), f.as_os_str()]);
        has(
            &e,
            &format!("error: {}:4:11: invalid UTF-8 (byte 0xFF)", s(&f)),
        );
        has(&e, "podsim reads UTF-8");
    }
}

#[test]
fn utf16_is_named_with_and_without_a_byte_order_mark() {
    let d = tmp("utf16");
    let le: Vec<u8> = BASE.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let be: Vec<u8> = BASE.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let mut bom = vec![0xFF, 0xFE];
    bom.extend(&le);
    let cases = [
        ("le.yaml", le, "1:2", "UTF-16 (little-endian)"),
        ("be.yaml", be, "1:1", "UTF-16 (big-endian)"),
        (
            "bom.yaml",
            bom,
            "1:1",
            "UTF-16 (little-endian, with a byte-order mark)",
        ),
    ];
    for (name, bytes, pos, kind) in cases {
        let f = write(&d, name, bytes);
        let e = fails([OsStr::new("check"), f.as_os_str()]);
        has(&e, &format!("error: {}:{pos}: the file is {kind}", s(&f)));
        has(&e, "podsim reads UTF-8");
    }
    // The scenario a sweep file names, too.
    let le: Vec<u8> = BASE.encode_utf16().flat_map(u16::to_le_bytes).collect();
    write(&d, "scenario16.yaml", le);
    let sw = write(
        &d,
        "sweep.yaml",
        "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {name: s}\nspec:\n  scenario: scenario16.yaml\n",
    );
    let e = fails([OsStr::new("check"), sw.as_os_str()]);
    has(
        &e,
        &format!("{}:1:2: the file is UTF-16", s(&d.join("scenario16.yaml"))),
    );
    has(&e, &format!("{}:5:13: spec.scenario", s(&sw)));
}

#[test]
fn a_document_that_is_not_a_mapping_says_so() {
    let d = tmp("document");
    let list = write(
        &d,
        "list.yaml",
        "# a comment\n\n- apiVersion: x\n- kind: y\n",
    );
    let scalar = write(&d, "scalar.yaml", "hello\n");
    for (f, pos, found) in [(&list, "3:1", "a list"), (&scalar, "1:1", "a string")] {
        for cmd in ["check", "run", "sweep"] {
            let e = fails([OsStr::new(cmd), f.as_os_str()]);
            has(
                &e,
                &format!(
                    "error: {}:{pos}: (document): the document must be a mapping (with \
                     apiVersion, kind, metadata and spec), found {found}",
                    s(f)
                ),
            );
        }
    }
}

#[test]
fn override_errors_name_the_override_not_a_file_position() {
    let d = tmp("set");
    let f = base(&d);
    let cases = [
        (
            "spec=null",
            "error: --set spec=null: spec: `spec` is required, and this override makes it null",
        ),
        (
            "spec.pods[0].template=null",
            "error: --set spec.pods[0].template=null: spec.pods[0].template: `template` is \
             required",
        ),
        (
            "metadata.name=null",
            "error: --set metadata.name=null: metadata.name: `name` is required",
        ),
        (
            "spec.seed=abc",
            "error: --set spec.seed=abc: spec.seed: expected an integer",
        ),
        ("spec..x=1", "error: --set spec..x=1: spec..x: bad path"),
        (
            "spec.pods[5].replicas=1",
            "error: --set spec.pods[5].replicas=1: spec.pods[5].replicas: index [5] is out of range",
        ),
        ("spec.horizon=[", "error: --set spec.horizon=[: spec.horizon: bad value"),
        (
            "spec.pods=[]",
            "error: --set spec.pods=[]: spec.pods: a scenario needs at least one pod",
        ),
    ];
    for (set, want) in cases {
        let e = fails([
            OsStr::new("run"),
            f.as_os_str(),
            "--set".as_ref(),
            set.as_ref(),
        ]);
        has(&e, want);
        assert!(!e.contains("base.yaml:1:1"), "{set}: {e}");
    }
}

#[test]
fn an_empty_override_value_is_an_error() {
    let d = tmp("empty");
    let f = base(&d);
    let want = "error: --set spec.horizon=: spec.horizon: the value is empty: give one, or write \
                `null` for the field's default";
    let e = fails([
        OsStr::new("run"),
        f.as_os_str(),
        "--set".as_ref(),
        "spec.horizon=".as_ref(),
    ]);
    has(&e, want);
    let e = fails([
        OsStr::new("bisect"),
        f.as_os_str(),
        "--set".as_ref(),
        "spec.horizon= ".as_ref(),
    ]);
    has(
        &e,
        "error: --set spec.horizon= : spec.horizon: the value is empty",
    );
    // `null` is how the default is asked for.
    podsim().arg("check").arg(&f).assert().success();
    podsim()
        .arg("run")
        .arg(&f)
        .args(["--set", "spec.horizon=null"])
        .assert()
        .success();
}

#[test]
fn a_bad_replicas_hides_no_other_problem() {
    let d = tmp("replicas");
    let text = BASE.replace("replicas: 2", "replicas: -1").replace(
        "    - {at: 1s, deletePod: {pod: web-0}}\n",
        "    - {at: 1s, deletePod: {pod: nope}}\n    - {at: 2s, deletePod: {pod: nada}}\n",
    );
    let f = write(&d, "rep.yaml", text);
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    let p = s(&f);
    has(
        &e,
        &format!("error: {p}:8:17: spec.pods[0].replicas: must be at least 1, found -1"),
    );
    has(
        &e,
        &format!("error: {p}:16:33: spec.timeline[0].deletePod.pod: no pod named `nope`"),
    );
    has(
        &e,
        &format!("error: {p}:17:33: spec.timeline[1].deletePod.pod: no pod named `nada`"),
    );
    has(&e, "3 problems found");
    // A pod of the bad declaration may exist: no false alarm for it.
    let text = BASE
        .replace("replicas: 2", "replicas: \"3\"")
        .replace("web-0", "web-2");
    let f = write(&d, "rep2.yaml", text);
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    has(
        &e,
        "spec.pods[0].replicas: expected an integer, found a string",
    );
    has(&e, "1 problem found");
}

#[test]
fn a_long_problem_list_is_capped() {
    let d = tmp("cap");
    let extra: String = (0..25).map(|i| format!("  bogus{i}: 1\n")).collect();
    let f = write(&d, "many.yaml", format!("{BASE}{extra}"));
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    assert_eq!(e.matches("error: ").count(), 20, "{e}");
    has(&e, &format!("{}:17:3: spec.bogus0: unknown field", s(&f)));
    has(&e, "... and 5 more (not shown)\n25 problems found");
}

#[test]
fn control_characters_are_escaped_in_messages() {
    let d = tmp("controls");
    let text = BASE
        .replace("name: t", "name: \"a\\e[31mb\\u202Ec\\a\"")
        .replace("  horizon: 5m", "  horizon: 5m\n  \"x\\u0085y\\u2066\": 1");
    let f = write(&d, "ctl.yaml", text);
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    has(
        &e,
        "metadata.name: `a\\u{1b}[31mb\\u{202e}c\\u{7}` is not a valid name",
    );
    has(
        &e,
        "spec.x\\u{85}y\\u{2066}: unknown field `x\\u{85}y\\u{2066}`",
    );
    for raw in ['\u{1b}', '\u{7}', '\u{202e}', '\u{85}', '\u{2066}'] {
        assert!(!e.contains(raw), "raw {raw:?} in:\n{e}");
    }
    let f = base(&d);
    let e = fails([
        OsStr::new("run"),
        f.as_os_str(),
        "--set".as_ref(),
        "spec.x\u{1b}]0;t\u{7}=1".as_ref(),
    ]);
    has(
        &e,
        "error: --set spec.x\\u{1b}]0;t\\u{7}=1: spec.x\\u{1b}]0;t\\u{7}: unknown field",
    );
    assert!(!e.contains('\u{1b}'), "{e}");
    let out = d.join("out");
    let e = fails([
        OsStr::new("sweep"),
        f.as_os_str(),
        "--set".as_ref(),
        "spec.horizon=1m,\u{202e}2m".as_ref(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    has(&e, "sweep point 1 (spec.horizon=\\u{202e}2m)");
    assert!(!e.contains('\u{202e}'), "{e}");
}

#[test]
fn a_duration_hint_is_only_given_when_it_parses() {
    let d = tmp("duration");
    let f = write(&d, "d.yaml", BASE.replace("horizon: 5m", "horizon: 1.5.3s"));
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    has(
        &e,
        &format!(
            "error: {}:6:12: spec.horizon: `1.5.3s` is not a duration (expected e.g. `500ms`, \
             `10s`, `1m30s`, `1h`)",
            s(&f)
        ),
    );
    assert!(!e.contains("1.5.3ss"), "{e}");
    let f = write(
        &d,
        "d2.yaml",
        BASE.replace("horizon: 5m", "horizon: \"90\""),
    );
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    has(&e, "spec.horizon: `90` is missing a unit (e.g. `90s`)");
}

#[test]
fn an_unknown_yaml_tag_is_an_error_at_the_tag() {
    let d = tmp("tag");
    let f = write(
        &d,
        "t.yaml",
        BASE.replace("horizon: 5m", "horizon: !duration 1m"),
    );
    let e = fails([OsStr::new("check"), f.as_os_str()]);
    has(
        &e,
        &format!(
            "error: {}:6:12: invalid YAML: unsupported tag `!duration`: podsim files use no YAML \
             tags; remove it and write the plain value",
            s(&f)
        ),
    );
    let e = fails([
        OsStr::new("run"),
        base(&d).as_os_str(),
        "--set".as_ref(),
        "spec.horizon=!d 1m".as_ref(),
    ]);
    has(
        &e,
        "error: --set spec.horizon=!d 1m: spec.horizon: bad value `!d 1m`: unsupported tag `!d`",
    );
    // YAML's own tags keep their meaning.
    let f = write(
        &d,
        "ok.yaml",
        BASE.replace("horizon: 5m", "horizon: !!str 5m"),
    );
    podsim().arg("check").arg(&f).assert().success();
}

#[test]
fn an_empty_sweep_axis_value_is_an_error() {
    let d = tmp("axis");
    let f = base(&d);
    let out = d.join("out");
    let cases = [
        ("spec.horizon=1m,", 2, 2),
        ("spec.horizon=,1m", 1, 2),
        ("spec.horizon=1m,,2m", 2, 3),
        ("spec.horizon=", 1, 1),
    ];
    for (set, k, n) in cases {
        let e = fails([
            OsStr::new("sweep"),
            f.as_os_str(),
            "--seeds".as_ref(),
            "1".as_ref(),
            "--set".as_ref(),
            set.as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ]);
        has(
            &e,
            &format!("error: --set {set}: value {k} of {n} is empty (a comma too many?)"),
        );
        assert!(!out.exists(), "a result directory was written for {set}");
    }
}

#[test]
fn fail_on_values_are_checked_before_the_sweep() {
    let d = tmp("failon");
    let f = base(&d);
    let out = d.join("out");
    let run = |fail_on: &[&str]| {
        let mut args: Vec<&OsStr> = vec![
            "sweep".as_ref(),
            f.as_os_str(),
            "--seeds".as_ref(),
            "1".as_ref(),
            "--out".as_ref(),
            out.as_os_str(),
        ];
        for v in fail_on {
            args.push("--fail-on".as_ref());
            args.push(v.as_ref());
        }
        fails(args)
    };
    let e = run(&["any,none"]);
    has(
        &e,
        "error: --fail-on any,none: `any` cannot be combined with other values",
    );
    let e = run(&["no-start-after-termination", "none"]);
    has(&e, "`none` cannot be combined with other values");
    let e = run(&["no-start-after-terminaton"]);
    has(
        &e,
        "error: --fail-on no-start-after-terminaton: unknown invariant (did you mean \
         `no-start-after-termination`?); valid values: any, none, or one or more of: ",
    );
    has(&e, "run-limit-reached");
    let e = run(&["x,"]);
    has(&e, "error: --fail-on x,: a value is empty");
    assert!(!out.exists(), "the sweep ran");
    // Merge checks them too, before reading the shards.
    let e = fails([
        OsStr::new("merge"),
        d.join("nope").as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
        "--fail-on".as_ref(),
        "bogus".as_ref(),
    ]);
    has(&e, "error: --fail-on bogus: unknown invariant");
    // Good values still work, comma lists included.
    podsim()
        .arg("sweep")
        .arg(&f)
        .args(["--seeds", "1", "--fail-on"])
        .arg("no-start-after-termination,run-limit-reached")
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
}

/// Runs podsim with `args`; asserts success and no panic; returns stderr.
fn passes<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let out = podsim().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "stderr:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Past the horizon is a note, not an error: the bundled benchmarks `benches/node-110.yaml`
/// and `benches/node-110-probes.yaml` have timelines running past theirs.
#[test]
fn creation_and_actions_past_the_horizon_are_noted() {
    let d = tmp("horizon");
    let text = BASE
        .replace("horizon: 5m", "horizon: 1m")
        .replace(
            "    - replicas: 2\n",
            "    - replicas: 2\n      createAt: 2m\n",
        )
        .replace("{at: 1s,", "{at: 3m,");
    let f = write(&d, "late.yaml", text);
    let p = s(&f);
    for cmd in ["check", "run"] {
        let e = passes([OsStr::new(cmd), f.as_os_str()]);
        has(
            &e,
            &format!(
                "note: {p}:9:17: spec.pods[0].createAt: `2m` is past the horizon (spec.horizon: \
                 1m): the pod's creation never happens in a run"
            ),
        );
        has(
            &e,
            &format!(
                "note: {p}:17:12: spec.timeline[0].at: `3m` is past the horizon (spec.horizon: \
                 1m): the action never happens in a run"
            ),
        );
    }
    // Without `spec.horizon`, the default one counts.
    let text = BASE
        .replace("  horizon: 5m\n", "")
        .replace("{at: 1s,", "{at: 11m,");
    let f = write(&d, "default.yaml", text);
    let e = passes([OsStr::new("check"), f.as_os_str()]);
    has(
        &e,
        &format!(
            "note: {}:15:12: spec.timeline[0].at: `11m` is past the horizon (the default \
             spec.horizon, 600s)",
            s(&f)
        ),
    );
    // At the horizon itself is still inside the run.
    let f = write(&d, "edge.yaml", BASE.replace("{at: 1s,", "{at: 5m,"));
    let e = passes([OsStr::new("check"), f.as_os_str()]);
    assert!(!e.contains("past the horizon"), "{e}");
}

#[test]
fn long_axis_paths_give_valid_plot_file_names() {
    let d = tmp("longaxis");
    let f = base(&d);
    let out = d.join("out");
    // A Pod-manifest field podsim does not model is accepted (with a note): a valid axis.
    let path = format!("spec.pods[0].template.spec.{}", "a".repeat(300));
    let assert = podsim()
        .arg("sweep")
        .arg(&f)
        .args(["--seeds", "1", "--set"])
        .arg(format!("{path}=1,2"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert!(!stderr.contains("no plots"), "{stderr}");
    // Two rate plots; no metric plot (the unmodelled field changes no metric).
    has(&stderr, "plots: 2 files");
    let names: Vec<String> = std::fs::read_dir(out.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let rate: Vec<&String> = names.iter().filter(|n| n.starts_with("rate--")).collect();
    assert_eq!(rate.len(), 2, "{names:?}");
    for n in names {
        assert!(n.len() <= 160, "{n}");
    }
}
