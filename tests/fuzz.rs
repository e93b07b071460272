//! Structured fuzzing (proptest): scenario trees built field by field from podsim's own
//! vocabulary, with valid values mixed with hostile ones (huge, negative, non-finite, empty,
//! control and bidi characters, wrong types, unknown and missing fields, `--set`
//! overrides), fed to the loader and, when they load, run whole; and random command lines
//! through the binary.
//!
//! Properties: the loader never panics and every problem it reports has a message, a
//! location (a file line:column, or the `--set` it came from) and no raw control
//! character; a scenario that loads runs without a panic, stops for a known reason (a run
//! limit is reported as the `run-limit-reached` finding with its replay line) and runs
//! the same way twice; the binary exits 0, 1 or 2 (never a panic or a signal) whatever
//! its arguments.
//!
//! Knobs: `PODSIM_FUZZ_CASES` (cases per property, default 64 here; the long campaign
//! sets it in the tens of thousands) and proptest's own `PROPTEST_*` variables.

use crate::scratch::Scratch;
use podsim::load_str;
use podsim::run::{run, RunOptions};
use proptest::prelude::*;
use std::fmt::Write as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

fn cases() -> u32 {
    std::env::var("PODSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

/// A YAML tree.
#[derive(Clone, Debug)]
enum Y {
    Map(Vec<(String, Y)>),
    List(Vec<Y>),
    S(String),
}

fn plain_ok(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/-+".contains(c))
        && !s.starts_with(['-', '.'])
}

fn scalar(w: &mut String, s: &str) {
    if plain_ok(s) {
        w.push_str(s);
    } else {
        // A JSON string is a YAML double-quoted scalar.
        w.push_str(&serde_json::to_string(s).expect("a string serializes"));
    }
}

/// Block style, with flow style for small leaves now and then (`flow`).
fn render(w: &mut String, y: &Y, indent: usize, flow: bool) {
    match y {
        Y::S(s) => scalar(w, s),
        Y::Map(kv) if kv.is_empty() => w.push_str("{}"),
        Y::List(xs) if xs.is_empty() => w.push_str("[]"),
        Y::Map(kv) if flow => {
            w.push('{');
            for (i, (k, v)) in kv.iter().enumerate() {
                if i > 0 {
                    w.push_str(", ");
                }
                scalar(w, k);
                w.push_str(": ");
                render(w, v, indent, true);
            }
            w.push('}');
        }
        Y::List(xs) if flow => {
            w.push('[');
            for (i, v) in xs.iter().enumerate() {
                if i > 0 {
                    w.push_str(", ");
                }
                render(w, v, indent, true);
            }
            w.push(']');
        }
        Y::Map(kv) => {
            for (k, v) in kv {
                let _ = write!(w, "\n{}", " ".repeat(indent));
                scalar(w, k);
                w.push(':');
                let small = matches!(v, Y::Map(m) if m.len() <= 2 && m.iter().all(|(_, x)| matches!(x, Y::S(_))));
                let block = !small
                    && (matches!(v, Y::Map(m) if !m.is_empty())
                        || matches!(v, Y::List(l) if !l.is_empty()));
                if !block {
                    w.push(' ');
                }
                render(w, v, indent + 2, small);
            }
        }
        Y::List(xs) => {
            for v in xs {
                let _ = write!(w, "\n{}- ", " ".repeat(indent));
                match v {
                    Y::Map(_) | Y::List(_) => render(w, v, indent + 2, true),
                    Y::S(s) => scalar(w, s),
                }
            }
        }
    }
}

fn s(x: &str) -> Y {
    Y::S(x.to_string())
}

fn map(kv: Vec<(&str, Y)>) -> Y {
    Y::Map(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// Hostile scalars: podsim must refuse each with a located message, never panic.
const HOSTILE: &[&str] = &[
    "",
    "-1",
    "-1s",
    "0",
    "1e308",
    "-1e308",
    "1e999",
    ".nan",
    ".inf",
    "-.inf",
    "18446744073709551615",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999h",
    "1.5.3s",
    "1ns",
    "0.000000001s",
    "2562047h",
    "\u{1b}[31mred",
    "\u{202e}evil",
    "\u{7}bell",
    "a\u{0}b",
    "null",
    "~",
    "true",
    "[]",
    "{}",
    "1Ei",
    "-100Mi",
    "99999999999Ti",
    "é",
    "ghost",
];

fn hostile() -> impl Strategy<Value = Y> {
    prop_oneof![
        proptest::sample::select(HOSTILE).prop_map(s),
        Just(Y::List(vec![s("1s")])),
        Just(map(vec![("fixed", s("1s"))])),
        "[a-z]{1,8}".prop_map(Y::S),
    ]
}

/// A value from `good` most of the time, else a hostile one.
fn val(good: &'static [&'static str]) -> BoxedStrategy<Y> {
    prop_oneof![
        60 => proptest::sample::select(good).prop_map(s),
        1 => hostile(),
    ]
    .boxed()
}

const DURS: &[&str] = &["0s", "10ms", "1s", "5s", "30s", "90s", "5m", "20m"];
const SECS: &[&str] = &["0", "1", "2", "5", "30", "120", "600"];
const DISTS: &[&str] = &["fixed", "uniform", "exponential", "lognormal"];

fn dist() -> BoxedStrategy<Y> {
    (proptest::sample::select(DISTS), val(DURS), val(DURS))
        .prop_map(|(k, a, b)| match k {
            "fixed" => map(vec![("fixed", a)]),
            "uniform" => map(vec![("uniform", map(vec![("min", a), ("max", b)]))]),
            "exponential" => map(vec![("exponential", map(vec![("mean", a)]))]),
            _ => map(vec![("lognormal", map(vec![("median", a), ("p99", b)]))]),
        })
        .boxed()
}

fn probe() -> BoxedStrategy<Y> {
    (
        val(SECS),
        val(&["1", "2", "5", "10"]),
        val(&["1", "3"]),
        Just(false),
    )
        .prop_map(|(d, p, f, grace)| {
            let mut kv = vec![
                ("exec", map(vec![("command", Y::List(vec![s("check")]))])),
                ("initialDelaySeconds", d),
                ("periodSeconds", p),
                ("failureThreshold", f),
            ];
            if grace {
                kv.push(("terminationGracePeriodSeconds", s("40")));
            }
            map(kv)
        })
        .boxed()
}

fn container(i: usize) -> BoxedStrategy<Y> {
    (
        proptest::option::of(probe()),
        proptest::option::of(probe()),
        any::<bool>(),
        proptest::option::of(val(&["100Mi", "1Gi"])),
    )
        .prop_map(move |(lv, rd, hook, extra)| {
            let mut kv = vec![
                ("name", s(&format!("c{i}"))),
                ("image", s(&format!("img/c{i}:1"))),
            ];
            if let Some(mut p) = lv {
                if i == 0 {
                    if let Y::Map(kv) = &mut p {
                        kv.push(("terminationGracePeriodSeconds".into(), s("40")));
                    }
                }
                kv.push(("livenessProbe", p));
            }
            if let Some(p) = rd {
                kv.push(("readinessProbe", p));
            }
            if hook {
                kv.push((
                    "lifecycle",
                    map(vec![(
                        "preStop",
                        map(vec![(
                            "exec",
                            map(vec![("command", Y::List(vec![s("drain")]))]),
                        )]),
                    )]),
                ));
            }
            if let Some(x) = extra {
                kv.push(("resources", map(vec![("limits", map(vec![("memory", x)]))])));
            }
            map(kv)
        })
        .boxed()
}

fn behaviour() -> BoxedStrategy<Y> {
    (
        val(&["forever", "1s", "30s", "5m"]),
        val(&["0", "1", "137"]),
        prop_oneof![
            Just(s("ignore")),
            val(DURS).prop_map(|d| map(vec![("exitAfter", d)]))
        ],
        val(DURS),
        val(&["50Mi", "1Gi"]),
        val(&["1s", "30s", "2m"]),
    )
        .prop_map(|(run_for, code, term, pre, mem, fail)| {
            map(vec![
                ("runFor", run_for),
                ("exitCode", code),
                ("onSigterm", term),
                ("preStopDuration", pre),
                ("memoryUsage", mem),
                (
                    "probes",
                    map(vec![("liveness", map(vec![("failFrom", fail)]))]),
                ),
            ])
        })
        .boxed()
}

fn pod(p: usize) -> BoxedStrategy<Y> {
    (
        val(&["1", "2", "3"]),
        val(&["0s", "1s", "10s"]),
        val(SECS),
        val(&["Always", "OnFailure", "Never"]),
        prop::collection::vec(0usize..1, 1..3),
        any::<bool>(),
    )
        .prop_flat_map(move |(reps, at, grace, policy, cs, b)| {
            let n = cs.len();
            let containers: Vec<BoxedStrategy<Y>> = (0..n).map(container).collect();
            (containers, proptest::option::of(behaviour())).prop_map(move |(cs, beh)| {
                let mut kv = vec![
                    ("replicas", reps.clone()),
                    ("createAt", at.clone()),
                    (
                        "template",
                        map(vec![
                            ("metadata", map(vec![("name", s(&format!("p{p}")))])),
                            (
                                "spec",
                                map(vec![
                                    ("terminationGracePeriodSeconds", grace.clone()),
                                    ("restartPolicy", policy.clone()),
                                    ("containers", Y::List(cs)),
                                ]),
                            ),
                        ]),
                    ),
                ];
                if let (Some(beh), true) = (beh, b) {
                    kv.push(("behaviour", map(vec![("c0", beh)])));
                }
                map(kv)
            })
        })
        .boxed()
}

const ACTIONS: &[&str] = &[
    "deletePod",
    "forceDeletePod",
    "containerExit",
    "kubeletRestart",
    "memoryPressure",
    "nodeShutdown",
    "recreatePod",
];

fn action() -> BoxedStrategy<Y> {
    (
        val(DURS),
        proptest::sample::select(ACTIONS),
        val(&["p0", "p0-0", "p1-1", "p1"]),
        val(SECS),
    )
        .prop_map(|(at, kind, pod, g)| {
            let body = match kind {
                "deletePod" => map(vec![("pod", pod), ("gracePeriodSeconds", g)]),
                "containerExit" => map(vec![("pod", pod), ("container", s("c0"))]),
                "kubeletRestart" => map(vec![("downtime", s("5s"))]),
                "memoryPressure" => map(vec![("available", s("50Mi"))]),
                "nodeShutdown" => map(vec![]),
                _ => map(vec![("pod", pod)]),
            };
            map(vec![("at", at), (kind, body)])
        })
        .boxed()
}

/// A whole scenario tree, sometimes with a field dropped or an unknown one added.
fn scenario() -> BoxedStrategy<Y> {
    (
        val(&["1m", "5m", "30m"]),
        prop::collection::vec(0usize..1, 1..3),
        prop::collection::vec(action(), 0..5),
        dist(),
        val(&[
            "v1.21", "v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31", "current",
        ]),
        val(&["30s", "60s"]),
        0usize..12,
        proptest::option::of(("[a-zA-Z]{1,10}", hostile())),
    )
        .prop_flat_map(|(horizon, ps, tl, lat, profile, sgp, drop, unknown)| {
            let pods: Vec<BoxedStrategy<Y>> = (0..ps.len()).map(pod).collect();
            pods.prop_map(move |pods| {
                let mut spec = vec![
                    ("horizon", horizon.clone()),
                    (
                        "kubelet",
                        map(vec![
                            ("profile", profile.clone()),
                            ("config", map(vec![("shutdownGracePeriod", sgp.clone())])),
                        ]),
                    ),
                    (
                        "runtime",
                        map(vec![(
                            "latencies",
                            map(vec![("stopContainer", lat.clone())]),
                        )]),
                    ),
                    ("pods", Y::List(pods)),
                    ("timeline", Y::List(tl.clone())),
                    ("limits", map(vec![("maxEvents", s("2000000"))])),
                ];
                if drop < spec.len() && drop != 3 {
                    spec.remove(drop);
                }
                let mut top = vec![
                    ("apiVersion", s("podsim/v1alpha1")),
                    ("kind", s("Scenario")),
                    ("metadata", map(vec![("name", s("fuzz"))])),
                ];
                let mut spec_map = map(spec);
                if let (Some((k, v)), Y::Map(kv)) = (&unknown, &mut spec_map) {
                    kv.push((k.clone(), v.clone()));
                }
                top.push(("spec", spec_map));
                map(top)
            })
        })
        .boxed()
}

fn yaml_of(y: &Y) -> String {
    let mut w = String::new();
    render(&mut w, y, 0, false);
    w.trim_start().to_string() + "\n"
}

/// `--set` overrides, valid and hostile.
fn sets() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(
        (
            proptest::sample::select(
                &[
                    "spec.horizon",
                    "spec.seed",
                    "spec.pods[0].replicas",
                    "spec.pods[0].template.spec.terminationGracePeriodSeconds",
                    "spec.kubelet.profile",
                    "spec",
                    "spec.pods[7].createAt",
                    "spec.runtime.latencies.stopContainer.fixed",
                    "metadata.name",
                ][..],
            ),
            proptest::sample::select(HOSTILE),
        )
            .prop_map(|(p, v)| (p.to_string(), v.to_string())),
        0..2,
    )
}

/// Every problem is located and says something, with no raw control character.
fn check_problems(e: &podsim::scenario::LoadError) -> Result<(), TestCaseError> {
    prop_assert!(!e.problems.is_empty(), "an error without problems");
    for p in &e.problems {
        prop_assert!(!p.message.is_empty(), "a problem without a message: {p:?}");
        let located =
            (p.file == "fuzz.yaml" && p.line > 0 && p.col > 0) || p.file.starts_with("--set");
        prop_assert!(located, "a problem without a location: {p:?}");
    }
    // What the user reads (the printed problems) escapes every control character.
    let shown = e.to_string();
    let raw = shown
        .chars()
        .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c));
    prop_assert!(!raw, "a raw control character echoed: {shown:?}");
    Ok(())
}

/// A loaded scenario runs twice the same way, without a panic, and stops for a reason
/// podsim knows; a limit is a finding with its replay line.
fn check_runs(sc: podsim::scenario::Scenario, seed: u64) -> Result<(), TestCaseError> {
    let opts = RunOptions {
        seed,
        keep_trace: false,
        replay: format!("podsim run fuzz.yaml --seed {seed}"),
        ..Default::default()
    };
    let sc = Arc::new(sc);
    let (a, b) = catch_unwind(AssertUnwindSafe(|| {
        (run(sc.clone(), &opts), run(sc, &opts))
    }))
    .map_err(|_| TestCaseError::fail("the run panicked"))?;
    prop_assert_eq!(&a.trace_hash, &b.trace_hash, "not deterministic");
    match a.stop_reason.as_str() {
        "quiescent" | "horizon" => {}
        _ => prop_assert!(
            a.findings
                .iter()
                .any(|f| f.invariant == "run-limit-reached" && !f.replay.is_empty()),
            "stopped ({}) without a run-limit-reached finding",
            a.stop_reason
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    /// Structured scenarios with hostile values and overrides: the loader never panics and
    /// locates every problem; what loads runs soundly.
    #[test]
    fn fuzz_structured_scenarios(tree in scenario(), sets in sets(), seed in 1u64..1000) {
        let text = yaml_of(&tree);
        let r = catch_unwind(AssertUnwindSafe(|| load_str("fuzz.yaml", &text, &sets)))
            .map_err(|_| TestCaseError::fail(format!("the loader panicked on:\n{text}")))?;
        match r {
            Err(e) => check_problems(&e)?,
            Ok(l) => check_runs(l.scenario, seed)?,
        }
    }
}

/// Arguments for the command-line fuzzer.
const ARGS: &[&str] = &[
    "run",
    "check",
    "sweep",
    "bisect",
    "plot",
    "merge",
    "invariants",
    "scenarios/quickstart.yaml",
    "scenarios/probes/liveness-restart.yaml",
    "scenarios/sweeps/graceful-delete-vs-stop-latency.yaml",
    "--seed",
    "--seeds",
    "--profile",
    "--set",
    "--jobs",
    "--fail-on",
    "--json",
    "--shard",
    "0",
    "1",
    "3",
    "-1",
    "18446744073709551616",
    "4294967296",
    "v1.21",
    "v1.31",
    "current",
    "spec.horizon=1s",
    "spec.horizon=",
    "spec=null",
    "spec.pods[0].replicas=3,-1",
    "any,none",
    "readines-during-termination",
    "1/0",
    "2/2",
    "\u{1b}[2J",
    "",
    "-",
    "/dev/null",
    "--no-oracle",
    "--check-determinism",
];

const COMMANDS: &[&str] = &[
    "run",
    "check",
    "sweep",
    "bisect",
    "plot",
    "merge",
    "invariants",
];
const FILES: &[&str] = &[
    "scenarios/quickstart.yaml",
    "scenarios/probes/liveness-restart.yaml",
    "scenarios/sweeps/graceful-delete-vs-stop-latency.yaml",
    "/dev/null",
    "-",
    "no-such-file.yaml",
];

/// A flag and a value for it: mostly one the flag takes, else anything from [`ARGS`].
fn flag_value() -> impl Strategy<Value = (&'static str, &'static str)> {
    let own = proptest::sample::select(
        &[
            ("--seed", "7"),
            ("--seed", "18446744073709551615"),
            ("--seed", "-1"),
            ("--seeds", "3"),
            ("--seeds", "0"),
            ("--seeds", "18446744073709551615"),
            ("--seeds", "9007199254740993"),
            ("--profile", "v1.21"),
            ("--profile", "v1.31"),
            ("--profile", "current"),
            ("--profile", ""),
            ("--set", "spec.horizon=10s"),
            ("--set", "spec.horizon=1m,"),
            ("--set", "spec.horizon="),
            ("--set", "spec=null"),
            ("--set", "spec.pods[0].replicas=-1"),
            ("--set", "spec.pods[0].template.spec.foo=1e308,-1e308"),
            ("--set", "spec.kubelet.profile=v1.22,current"),
            ("--jobs", "1"),
            ("--jobs", "100000"),
            ("--jobs", "0"),
            ("--fail-on", "any"),
            ("--fail-on", "none"),
            ("--fail-on", "any,none"),
            ("--fail-on", "readines-during-termination"),
            ("--shard", "0/2"),
            ("--shard", "2/2"),
            ("--shard", "1/0"),
        ][..],
    );
    let any_value = (
        proptest::sample::select(
            &[
                "--seed",
                "--seeds",
                "--profile",
                "--set",
                "--jobs",
                "--fail-on",
                "--shard",
            ][..],
        ),
        proptest::sample::select(ARGS),
    );
    prop_oneof![3 => own, 1 => any_value]
}

/// A command line: mostly shaped like a real one (a command, a file, flags with values),
/// sometimes any words at all.
fn command_line() -> impl Strategy<Value = Vec<&'static str>> {
    let shaped = (
        proptest::sample::select(COMMANDS),
        proptest::sample::select(FILES),
        prop::collection::vec(flag_value(), 0..4),
        prop::collection::vec(
            proptest::sample::select(&["--json", "--no-oracle", "--check-determinism"][..]),
            0..2,
        ),
    )
        .prop_map(|(c, f, pairs, switches)| {
            let mut v = vec![c, f];
            for (k, x) in pairs {
                v.push(k);
                v.push(x);
            }
            v.extend(switches);
            v
        });
    prop_oneof![
        4 => shaped,
        1 => prop::collection::vec(proptest::sample::select(ARGS), 1..7),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases() / 4 + 1, ..ProptestConfig::default() })]

    /// Random command lines through the binary: exit 0, 1 or 2, never a panic or a
    /// signal. Output paths go to a fresh temp directory.
    #[test]
    fn fuzz_command_lines(args in command_line()) {
        let dir = Scratch::new("fuzz", "cli");
        let mut cmd = assert_cmd::Command::cargo_bin("podsim").expect("the binary");
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
        cmd.args(&args);
        // A sweep or merge writes its results into the temp directory, and a sweep stays
        // small unless the arguments say otherwise.
        if matches!(args[0], "sweep" | "merge") {
            cmd.arg("--out").arg(dir.join("out"));
        }
        if args[0] == "sweep" && !args.contains(&"--seeds") {
            cmd.args(["--seeds", "2"]);
        }
        let out = cmd.timeout(std::time::Duration::from_secs(120)).output().expect("runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        prop_assert!(!stderr.contains("panicked"), "panic on {args:?}:\n{stderr}");
        prop_assert!(
            matches!(out.status.code(), Some(0..=2)),
            "{args:?} ended with {:?}:\n{stderr}",
            out.status
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The structured generator reaches both sides: scenarios that load (and so are run) and
/// scenarios with problems (so the located-problem property is exercised).
#[test]
fn fuzz_generator_yields_valid_and_invalid_scenarios() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut ok, mut bad) = (0, 0);
    for _ in 0..300 {
        let tree = scenario().new_tree(&mut runner).expect("a tree").current();
        match load_str("fuzz.yaml", &yaml_of(&tree), &[]) {
            Ok(_) => ok += 1,
            Err(_) => bad += 1,
        }
    }
    eprintln!("structured generator: valid {ok}, invalid {bad} of 300");
    assert!(ok >= 20 && bad >= 20, "valid {ok}, invalid {bad} of 300");
}

/// Found by `fuzz_structured_scenarios` (chunk seed 1): two containers whose memory
/// limits (hence requests) are each near the top of a u64 made admission's sum of
/// requests overflow (a panic in a checked build, a wrapped sum in a release build).
/// Sums of quantities saturate now: the pod is rejected as OutOfmemory, nothing panics.
#[test]
fn fuzz_found_huge_requests_saturate() {
    let yaml = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata:\n  name: huge\nspec:\n  horizon: 1m\n  pods:\n    - template:\n        metadata: {name: p0}\n        spec:\n          containers:\n            - {name: c0, image: img/c0:1, resources: {limits: {memory: 18446744073709551615}}}\n            - {name: c1, image: img/c1:1, resources: {limits: {memory: 100Mi}}}\n";
    let path = std::env::temp_dir().join(format!("podsim-fuzz-huge-{}.yaml", std::process::id()));
    std::fs::write(&path, yaml).expect("temp file");
    let out = assert_cmd::Command::cargo_bin("podsim")
        .expect("the binary")
        .args(["run", path.to_str().expect("utf-8"), "--seed", "159"])
        .output()
        .expect("runs");
    let _ = std::fs::remove_file(&path);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("OutOfmemory"), "{stdout}");
}
