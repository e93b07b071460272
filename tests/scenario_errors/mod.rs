//! Scenario loading: every problem reported at once, each with the right field path and
//! line:column; notes for unknown Pod-manifest fields; overrides; hostile and mutated input.
//!
//! Included from `tests/main.rs` as `mod scenario_errors;`.

// These tests bound how long hostile or mutated input may take, which needs the wall clock
// (never used by the simulator itself).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::load_str;
use podsim::scenario::{LoadError, Loaded, Problem};

/// A small valid scenario. Line numbers matter: tests (here and in `reliability_errors`)
/// refer to them.
pub(crate) const BASE: &str = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata:
  name: t
spec:
  horizon: 5m
  pods:
    - replicas: 2
      template:
        metadata: {name: web}
        spec:
          containers:
            - name: app
              image: app:1
  timeline:
    - {at: 1s, deletePod: {pod: web-0}}
";

fn err(text: &str) -> LoadError {
    match load_str("t.yaml", text, &[]) {
        Ok(l) => panic!("expected problems, got a scenario: {:?}", l.scenario.name),
        Err(e) => e,
    }
}

fn ok(text: &str) -> Loaded {
    match load_str("t.yaml", text, &[]) {
        Ok(l) => l,
        Err(e) => panic!("expected a valid scenario, got:\n{e}"),
    }
}

/// The problem at `path`, or a panic listing them all.
fn at<'a>(e: &'a LoadError, path: &str) -> &'a Problem {
    e.problems
        .iter()
        .find(|p| p.path == path)
        .unwrap_or_else(|| panic!("no problem at `{path}` in:\n{e}"))
}

fn pos(p: &Problem) -> (usize, usize) {
    (p.line, p.col)
}

#[test]
fn base_is_valid() {
    let l = ok(BASE);
    assert_eq!(l.scenario.pods.len(), 2);
    assert_eq!(l.scenario.pods[1].spec.name, "web-1");
    assert!(l.notes.is_empty());
}

#[test]
fn yaml_syntax_error_has_position() {
    let text = BASE.replace("metadata: {name: web}", "metadata: {name: web");
    let e = err(&text);
    assert_eq!(e.problems.len(), 1, "{e}");
    let p = &e.problems[0];
    assert!(p.message.starts_with("invalid YAML"), "{e}");
    assert!((10..=12).contains(&p.line), "{e}");
    assert!(p.col > 0, "{e}");
    assert!(e
        .to_string()
        .starts_with(&format!("error: t.yaml:{}:{}: ", p.line, p.col)));
}

#[test]
fn wrong_types_are_reported_at_the_value() {
    let text = BASE.replace("horizon: 5m", "horizon: [5m]").replace(
        "image: app:1",
        "image: app:1\n              resources: {requests: {cpu: true}}",
    );
    let e = err(&text);
    let p = at(&e, "spec.horizon");
    assert_eq!(pos(p), (6, 12));
    assert!(p.message.contains("expected a duration"), "{}", p.message);
    assert!(p.message.contains("found a list"), "{}", p.message);
    let p = at(
        &e,
        "spec.pods[0].template.spec.containers[0].resources.requests.cpu",
    );
    assert_eq!(pos(p), (15, 43));
    assert_eq!(e.problems.len(), 2, "{e}");
}

#[test]
fn unknown_podsim_field_is_an_error_with_a_hint() {
    let e = err(&BASE.replace("horizon: 5m", "horizn: 5m"));
    let p = at(&e, "spec.horizn");
    assert_eq!(pos(p), (6, 3));
    assert!(
        p.message.contains("did you mean `horizon`"),
        "{}",
        p.message
    );
}

#[test]
fn negative_duration_names_the_field() {
    let e = err(&BASE.replace("- replicas: 2", "- replicas: 2\n      createAt: -1s"));
    let p = at(&e, "spec.pods[0].createAt");
    assert_eq!(pos(p), (9, 17));
    assert!(p.message.contains("must not be negative"), "{}", p.message);
}

#[test]
fn missing_pod_name() {
    let e = err(&BASE.replace("metadata: {name: web}", "metadata: {namespace: prod}"));
    let p = at(&e, "spec.pods[0].template.metadata.name");
    assert_eq!(pos(p), (10, 19));
    assert!(
        p.message.contains("missing required field `name`"),
        "{}",
        p.message
    );
}

#[test]
fn timeline_action_naming_a_missing_pod() {
    let e = err(&BASE.replace("pod: web-0", "pod: web"));
    let p = at(&e, "spec.timeline[0].deletePod.pod");
    assert_eq!(pos(p), (16, 33));
    assert!(p.message.contains("no pod named `web`"), "{}", p.message);
    assert!(p.message.contains("web-0, web-1"), "{}", p.message);
}

#[test]
fn unknown_pod_field_is_a_note_not_an_error() {
    let text = BASE.replace(
        "image: app:1",
        "image: app:1\n              ports: [{containerPort: 80}]\n              livenesProbe: {}",
    );
    let l = ok(&text);
    let notes: Vec<String> = l.notes.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        notes,
        [
            "note: t.yaml:15:15: spec.pods[0].template.spec.containers[0].ports: no effect: no network is simulated, so ports are neither opened nor checked",
            "note: t.yaml:16:15: spec.pods[0].template.spec.containers[0].livenesProbe: not a field of a v1.31 Container; ignored; did you mean `livenessProbe`?",
        ]
    );
}

#[test]
fn init_containers_are_built_and_follow_api_validation() {
    // Init containers are modelled (they were the last not-built capability): accepted.
    let text = BASE.replace(
        "        spec:\n          containers:",
        "        spec:\n          initContainers: [{name: init, image: i:1}]\n          containers:",
    );
    let l = ok(&text);
    assert_eq!(l.scenario.pods[0].spec.init_containers.len(), 1);
    // A classic init container takes no probes (API validation), named with its position.
    let text = BASE.replace(
        "        spec:\n          containers:",
        "        spec:\n          initContainers: [{name: init, image: i:1, readinessProbe: {exec: {}}}]\n          containers:",
    );
    let e = err(&text);
    let p = at(
        &e,
        "spec.pods[0].template.spec.initContainers[0].readinessProbe",
    );
    assert_eq!(pos(p).0, 12);
    assert!(p.message.contains("restartPolicy: Always"), "{}", p.message);
}

#[test]
fn probes_follow_api_validation() {
    // Probes are built: a plain one is accepted.
    ok(&BASE.replace(
        "image: app:1",
        "image: app:1\n              livenessProbe: {exec: {command: [x]}}",
    ));
    // successThreshold must be 1 for liveness and startup probes; readiness probes take no
    // terminationGracePeriodSeconds.
    let e = err(&BASE.replace(
        "image: app:1",
        "image: app:1\n              livenessProbe: {exec: {}, successThreshold: 2}\n              readinessProbe: {exec: {}, successThreshold: 2, terminationGracePeriodSeconds: 5}",
    ));
    let p = at(
        &e,
        "spec.pods[0].template.spec.containers[0].livenessProbe.successThreshold",
    );
    assert!(p.message.contains("must be 1"), "{}", p.message);
    let p = at(
        &e,
        "spec.pods[0].template.spec.containers[0].readinessProbe.terminationGracePeriodSeconds",
    );
    assert!(p.message.contains("must not be set"), "{}", p.message);
    assert_eq!(e.problems.len(), 2, "{e}");
}

#[test]
fn all_problems_are_reported_together() {
    let text = "\
apiVersion: podsim/v1
kind: Scenario
metadata:
  name: Bad_Name
spec:
  horizn: 5m
  seed: -3
  runtime:
    latencies:
      pullImage: {uniform: {min: 2s, max: 1s}}
    faults:
      - {call: stopContainr, probability: 1.5}
  pods:
    - template:
        metadata: {name: web, namespace: Prod}
        spec:
          restartPolicy: Sometimes
          containers:
            - name: app
              livenessProbe: {exec: {}, periodSeconds: 0}
            - name: app
      behaviour:
        sidecar: {runFor: 10}
  timeline:
    - {at: -1s, containerExit: {pod: nope, container: app}}
    - {at: 1s}
";
    let e = err(text);
    let expect = [
        ("apiVersion", 1, 13),
        ("metadata.name", 4, 9),
        ("spec.horizn", 6, 3),
        ("spec.seed", 7, 9),
        ("spec.runtime.latencies.pullImage.uniform.max", 10, 43),
        ("spec.runtime.faults[0].call", 12, 16),
        ("spec.runtime.faults[0].probability", 12, 43),
        ("spec.pods[0].template.metadata.namespace", 15, 42),
        ("spec.pods[0].template.spec.restartPolicy", 17, 26),
        (
            "spec.pods[0].template.spec.containers[0].livenessProbe.periodSeconds",
            20,
            56,
        ),
        ("spec.pods[0].template.spec.containers[1].name", 21, 21),
        ("spec.pods[0].behaviour.sidecar", 23, 9),
        ("spec.pods[0].behaviour.sidecar.runFor", 23, 27),
        ("spec.timeline[0].at", 25, 12),
        ("spec.timeline[0].containerExit.pod", 25, 38),
        ("spec.timeline[1]", 26, 7),
    ];
    for (path, line, col) in expect {
        let p = at(&e, path);
        assert_eq!(pos(p), (line, col), "{path}: {e}");
    }
    assert_eq!(e.problems.len(), expect.len(), "{e}");
    // One line per problem plus the count line, in file order.
    let out = e.to_string();
    assert_eq!(out.lines().count(), expect.len() + 1);
    assert!(out.ends_with(&format!("{} problems found", expect.len())));
    let lines: Vec<usize> = e.problems.iter().map(|p| p.line).collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{out}");
}

#[test]
fn overrides_apply_and_errors_name_the_set() {
    let sets = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let l = load_str(
        "t.yaml",
        BASE,
        &sets(&[
            (
                "spec.pods[0].template.spec.terminationGracePeriodSeconds",
                "5",
            ),
            ("spec.runtime.latencies.stopContainer", "{fixed: 1s}"),
            ("spec.kubelet.config.syncFrequency", "10s"),
        ]),
    )
    .unwrap();
    assert_eq!(
        l.scenario.pods[0].spec.termination_grace_period_seconds,
        Some(5)
    );
    assert_ne!(l.scenario.hash, ok(BASE).scenario.hash);

    let e = load_str(
        "t.yaml",
        BASE,
        &sets(&[
            ("spec.pods[3].replicas", "1"),
            ("spec.horizon", "-5s"),
            ("spec.seed", "["),
        ]),
    )
    .unwrap_err();
    let out = e.to_string();
    assert!(
        out.contains(
            "error: --set spec.pods[3].replicas=1: spec.pods[3].replicas: index [3] is out of range"
        ),
        "{out}"
    );
    assert!(
        out.contains("error: --set spec.horizon=-5s: spec.horizon: duration must not be negative"),
        "{out}"
    );
    assert!(
        out.contains("error: --set spec.seed=[: spec.seed: bad value"),
        "{out}"
    );
    assert_eq!(e.problems.len(), 3, "{out}");
}

#[test]
fn hash_ignores_comments_and_layout() {
    let a = ok(BASE).scenario.hash;
    let b = ok(&format!(
        "# a comment\n{}",
        BASE.replace("horizon: 5m", "horizon: \"5m\"   # five")
    ))
    .scenario
    .hash;
    assert_eq!(a, b);
    assert_eq!(a.len(), 16);
    assert_ne!(a, ok(&BASE.replace("5m", "6m")).scenario.hash);
}

#[test]
fn hostile_input_is_rejected() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 0..20 {
        laughs.push_str(&format!(
            "b{i}: &b{i} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n",
            p = if i == 0 {
                "a".to_string()
            } else {
                format!("b{}", i - 1)
            }
        ));
    }
    let nested_maps = "a:\n".to_string()
        + &(1..5000)
            .map(|i| format!("{}a:\n", " ".repeat(i)))
            .collect::<String>();
    for text in [deep, laughs, nested_maps] {
        // How fast is a benchmark's question (the YAML budget keeps it bounded); here
        // only that it is refused without a panic or a hang.
        let r = load_str("t.yaml", &text, &[]);
        assert!(r.is_err());
    }
}

#[test]
fn twenty_thousand_pods_parse() {
    let mut text = BASE.replace("  timeline:\n    - {at: 1s, deletePod: {pod: web-0}}\n", "");
    for i in 0..20_000 {
        text.push_str(&format!(
            "    - template:\n        metadata: {{name: p{i}, labels: {{app: x}}}}\n        spec:\n          containers:\n            - {{name: app, image: \"app:1\", ports: [{{containerPort: 80}}]}}\n      behaviour:\n        app: {{runFor: 10s, memoryUsage: 10Mi}}\n"
        ));
    }
    let l = load_str("big.yaml", &text, &[]).unwrap_or_else(|e| panic!("{}", e.problems[0]));
    assert_eq!(l.scenario.pods.len(), 20_002);
    assert_eq!(l.notes.len(), 40_000);
}

mod fuzz {
    use super::BASE;
    use proptest::prelude::*;
    const TOKENS: &[&str] = &[
        "{",
        "}",
        "[",
        "]",
        ":",
        ": ",
        "- ",
        ",",
        "&a ",
        "*a",
        "!!str ",
        "!!int ",
        "\"",
        "'",
        "#",
        "\n",
        "  ",
        "\t",
        "~",
        "null",
        "-1s",
        "1e999",
        "<<: *a",
        "? ",
        "|",
        ">-",
        "---\n",
        "...\n",
        "%YAML 1.2\n",
        "\u{feff}",
        "é",
        "0x1F",
        "99999999999999999999999",
        ".nan",
        "true",
        "5m",
        "100Mi",
        "{fixed: 1s}",
        "replicas: 0",
        "pod: ghost",
        "nodeShutdown: {}",
        "static: true",
        "spec",
        "metadata",
        "name",
        "\\",
        "\0",
        "&b [*b]",
        "*zz",
    ];

    #[derive(Clone, Debug)]
    enum Mutation {
        Delete(usize, usize),
        Duplicate(usize, usize),
        Replace(usize, char),
        SwapLines(usize, usize),
        Indent(usize, i8),
        Insert(usize, usize),
    }

    fn mutation() -> impl Strategy<Value = Mutation> {
        prop_oneof![
            (any::<usize>(), 1usize..20).prop_map(|(p, n)| Mutation::Delete(p, n)),
            (any::<usize>(), 1usize..40).prop_map(|(p, n)| Mutation::Duplicate(p, n)),
            (any::<usize>(), any::<char>()).prop_map(|(p, c)| Mutation::Replace(p, c)),
            (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
            (any::<usize>(), -4i8..4).prop_map(|(l, d)| Mutation::Indent(l, d)),
            (any::<usize>(), any::<usize>()).prop_map(|(p, t)| Mutation::Insert(p, t)),
        ]
    }

    fn apply(text: &str, m: &Mutation) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        let n = chars.len().max(1);
        match *m {
            Mutation::Delete(p, k) => {
                let p = p % n;
                let end = (p + k).min(chars.len());
                chars.drain(p.min(end)..end);
            }
            Mutation::Duplicate(p, k) => {
                let p = p % n;
                let end = (p + k).min(chars.len());
                let piece: Vec<char> = chars[p.min(end)..end].to_vec();
                chars.splice(end..end, piece);
            }
            Mutation::Replace(p, c) => {
                if !chars.is_empty() {
                    chars[p % n] = c;
                }
            }
            Mutation::Insert(p, t) => {
                let p = p % (chars.len() + 1);
                let tok = TOKENS[t % TOKENS.len()];
                chars.splice(p..p, tok.chars());
            }
            Mutation::SwapLines(a, b) => {
                let mut lines: Vec<&str> = text.lines().collect();
                if !lines.is_empty() {
                    let (a, b) = (a % lines.len(), b % lines.len());
                    lines.swap(a, b);
                }
                return lines.join("\n");
            }
            Mutation::Indent(l, d) => {
                let lines: Vec<String> = text
                    .lines()
                    .enumerate()
                    .map(|(i, line)| {
                        if i != l % text.lines().count().max(1) {
                            line.to_owned()
                        } else if d >= 0 {
                            format!("{}{line}", " ".repeat(d as usize))
                        } else {
                            line.chars().skip((-d) as usize).collect()
                        }
                    })
                    .collect();
                return lines.join("\n");
            }
        }
        chars.into_iter().collect()
    }

    fn cases() -> u32 {
        std::env::var("PODSIM_FUZZ_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(256)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        /// Mutated scenarios never panic and always come back, valid or with problems that
        /// all have a message.
        #[test]
        fn mutated_scenarios_never_panic(muts in proptest::collection::vec(mutation(), 1..8)) {
            let full = format!(
                "{BASE}  runtime:\n    latencies: {{pullImage: {{lognormal: {{median: 1s, p99: 20s}}}}}}\n    faults: [{{call: stopContainer, probability: 0.05, error: DeadlineExceeded}}]\n  expect: {{findings: []}}\n"
            );
            let mut text = full;
            for m in &muts {
                text = apply(&text, m);
            }
            let r = podsim::load_str("fuzz.yaml", &text, &[("spec.seed".into(), "7".into())]);
            if let Err(e) = r {
                prop_assert!(!e.problems.is_empty());
                for p in &e.problems {
                    prop_assert!(!p.message.is_empty());
                }
            }
        }
    }
}

#[test]
fn image_gc_thresholds_are_checked_with_their_position() {
    let text = BASE.replace(
        "  horizon: 5m\n",
        "  horizon: 5m\n  kubelet:\n    imageGC: {highThresholdPercent: 70, lowThresholdPercent: 75}\n",
    );
    let e = err(&text);
    let p = at(&e, "spec.kubelet.imageGC.lowThresholdPercent");
    assert_eq!(pos(p), (8, 62));
    assert!(
        p.message.contains("less than `highThresholdPercent`"),
        "{e}"
    );
    let text = BASE.replace(
        "  horizon: 5m\n",
        "  horizon: 5m\n  kubelet:\n    imageGC: {highThresholdPercent: 101, period: 0s}\n",
    );
    let e = err(&text);
    at(&e, "spec.kubelet.imageGC.highThresholdPercent");
    at(&e, "spec.kubelet.imageGC.period");
    let l = ok(&BASE.replace(
        "  horizon: 5m\n",
        "  horizon: 5m\n  kubelet:\n    imageGC: {minimumGCAge: 0s}\n",
    ));
    let g = l.scenario.kubelet.image_gc.unwrap();
    assert_eq!(
        (g.high_threshold_percent, g.low_threshold_percent),
        (85, 80)
    );
}
