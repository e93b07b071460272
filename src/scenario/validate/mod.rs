//! Loose tree -> typed [`Scenario`] / [`SweepFile`], collecting every problem.
//!
//! Each podsim object is checked against its field table (unknown keys are errors, with a
//! "did you mean" hint); Pod-manifest objects (everything under `template`) accept unknown
//! keys with a note. Values are parsed by small helpers that record a problem and return
//! `None`, so the walk always continues and every problem of the file is reported.

mod behaviour;
mod conditions;
mod dist;
mod gates;
mod hooks;
mod kubelet;
mod pods;
mod primitives;
mod priority;
mod sweep;
mod timeline;

use super::defaults;
use super::error::{LoadError, Note, Problem};
use super::names::Names;
use super::overrides;
use super::schema::{self, Kind, Loc, Node};
use super::types::Scenario;
use crate::sim::Strategy;
use kubelet::{api, kubelet, node_spec, runtime};
use pods::pods;
pub(crate) use primitives::closest;
use primitives::{expected, int, name, obj, pos_dur, present, string, Cx, Obj, Unknown};
use std::path::{Path, PathBuf};
use sweep::sweep;
use timeline::{expect, timeline};

/// The API version of every podsim file.
pub const API_VERSION: &str = "podsim/v1alpha1";

/// A validated scenario and the notes found while loading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loaded {
    pub scenario: Scenario,
    pub notes: Vec<Note>,
}

/// A validated `kind: Sweep` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepFile {
    /// `metadata.name`.
    pub name: String,
    pub description: String,
    /// The sweep file as given.
    pub source: String,
    /// Stable hash of the sweep file's content (hex, 16 digits).
    pub hash: String,
    /// `spec.scenario` resolved against the sweep file's directory.
    pub scenario_path: PathBuf,
    /// The scenario, loaded and validated without overrides.
    pub scenario: Scenario,
    /// `spec.seeds`: replicates per point (default 100).
    pub seeds: u64,
    /// `spec.profiles`: empty means the scenario's own profile.
    pub profiles: Vec<String>,
    /// `spec.parameters`: the grid; every combination of values is a point.
    pub parameters: Vec<SweepParameter>,
    /// Notes from the sweep file and its scenario.
    pub notes: Vec<Note>,
}

/// `spec.parameters[i]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepParameter {
    /// An override path (`--set` syntax).
    pub path: String,
    /// Each value as YAML text, ready to be used as a `--set PATH=VALUE` value (and shown
    /// in tables): scalars as written, collections as flow JSON.
    pub values: Vec<String>,
}

/// Loads and validates a scenario file, applying `--set` overrides `(PATH, VALUE)` first;
/// names are checked against `names`.
pub(crate) fn load(
    path: &Path,
    overrides: &[(String, String)],
    names: &Names,
) -> Result<Loaded, LoadError> {
    let name = super::file::display_name(path);
    let text = read(path, &name)?;
    load_str(&name, &text, overrides, names)
}

/// [`load`] from text; `source_name` is used in messages and `Scenario::source`.
pub(crate) fn load_str(
    source_name: &str,
    text: &str,
    overrides: &[(String, String)],
    names: &Names,
) -> Result<Loaded, LoadError> {
    let root = parse_root(source_name, text)?;
    let mut cx = Cx::new(source_name, names);
    let root = apply_overrides(&mut cx, root, overrides);
    let scenario = scenario(&mut cx, &root, source_name);
    cx.finish(scenario)
        .map(|(scenario, notes)| Loaded { scenario, notes })
}

/// Loads and validates a `kind: Sweep` file and the scenario it names. From standard input
/// (`-`), a relative `spec.scenario` is resolved against the current directory.
pub(crate) fn load_sweep(path: &Path, names: &Names) -> Result<SweepFile, LoadError> {
    let name = super::file::display_name(path);
    let text = read(path, &name)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    load_sweep_str(&name, &text, dir, names)
}

/// [`load_sweep`] from text; `spec.scenario` is resolved against `base_dir`.
pub(crate) fn load_sweep_str(
    source_name: &str,
    text: &str,
    base_dir: &Path,
    names: &Names,
) -> Result<SweepFile, LoadError> {
    let root = parse_root(source_name, text)?;
    let mut cx = Cx::new(source_name, names);
    let sweep = sweep(&mut cx, &root, source_name, base_dir);
    if sweep.is_none() && cx.problems.is_empty() {
        cx.err(Loc::START, "", "invalid sweep file");
    }
    let (sweep, notes) = cx.finish(sweep)?;
    let Some(mut sweep) = sweep else {
        return Err(LoadError::single(Problem {
            file: source_name.to_owned(),
            line: 1,
            col: 1,
            path: String::new(),
            message: "invalid sweep file".to_owned(),
        }));
    };
    let mut all = notes;
    all.append(&mut sweep.notes);
    sweep.notes = all;
    Ok(sweep)
}

/// Validates a scenario or sweep file (dispatching on `kind`), as `podsim check` does.
/// Returns the notes of a valid file.
pub(crate) fn check_file(path: &Path, names: &Names) -> Result<Vec<Note>, LoadError> {
    let name = super::file::display_name(path);
    let text = read(path, &name)?;
    let root = parse_root(&name, &text)?;
    match root.get("kind").map(|n| &n.kind) {
        Some(Kind::Str(k)) if k == "Sweep" => load_sweep(path, names).map(|s| s.notes),
        Some(Kind::Str(k)) if k == "Scenario" => {
            load_str(&name, &text, &[], names).map(|l| l.notes)
        }
        _ => {
            let mut cx = Cx::new(&name, names);
            // Reports the problem with `kind` (and everything else at the top level).
            kind_check(&mut cx, &root, &["Scenario", "Sweep"]);
            cx.finish(()).map(|((), notes)| notes)
        }
    }
}

fn read(path: &Path, name: &str) -> Result<String, LoadError> {
    read_text(path).map_err(|(line, col, message)| {
        LoadError::single(Problem {
            file: name.to_owned(),
            line,
            col,
            path: String::new(),
            message,
        })
    })
}

/// A file's text: `(line, col, message)` when it cannot be read or is larger than the
/// input cap (line 0), or is not UTF-8 (at its first bad byte).
fn read_text(path: &Path) -> Result<String, (usize, usize, String)> {
    use crate::scenario::file::{read_capped_bytes, MAX_INPUT_BYTES};
    let bytes = read_capped_bytes(path, MAX_INPUT_BYTES)
        .map_err(|e| (0, 0, format!("cannot read file: {e}")))?;
    super::encoding::decode(&bytes).map_err(|b| (b.line, b.col, b.message))
}

fn parse_root(source_name: &str, text: &str) -> Result<Node, LoadError> {
    schema::parse(text).map_err(|e| {
        LoadError::single(Problem {
            file: source_name.to_owned(),
            line: e.line as usize,
            col: e.col as usize,
            path: String::new(),
            message: format!("invalid YAML: {}", e.message),
        })
    })
}

fn hash_of(root: &Node) -> String {
    let mut json = String::new();
    root.canonical_json(&mut json);
    format!("{:016x}", crate::sim::rng::stable_hash(json.as_bytes()))
}

fn apply_overrides(cx: &mut Cx, mut root: Node, overrides: &[(String, String)]) -> Node {
    for (i, (path, value)) in overrides.iter().enumerate() {
        let loc = Loc::Set(i as u32);
        cx.sets.push(format!("--set {path}={value}"));
        if value.trim().is_empty() {
            let m = "the value is empty: give one, or write `null` for the field's default";
            cx.err(loc, path, m);
            continue;
        }
        let result = overrides::parse_path(path).and_then(|segs| {
            let v = overrides::parse_value(value, loc)?;
            overrides::apply(&mut root, &segs, v, loc)
        });
        if let Err(m) = result {
            cx.err(loc, path, m);
        }
    }
    root
}

// ---------------------------------------------------------------------------------------
// Scenario: the top level

/// Checks `apiVersion` and `kind`; returns the top-level object.
fn kind_check<'n>(cx: &mut Cx, root: &'n Node, kinds: &[&str]) -> Option<Obj<'n>> {
    if !matches!(root.kind, Kind::Map(_) | Kind::Null) {
        let m = format!(
            "the document must be a mapping (with apiVersion, kind, metadata and spec), found {}",
            root.kind.describe()
        );
        cx.err(root.loc, "(document)", m);
        return None;
    }
    let top = obj(
        cx,
        root,
        "",
        &["apiVersion", "kind", "metadata", "spec"],
        Unknown::Error,
    )?;
    if let Some(v) = top.req(cx, "apiVersion") {
        if let Some(s) = string(cx, Some(v), "apiVersion") {
            if s != API_VERSION {
                cx.err(
                    v.loc,
                    "apiVersion",
                    format!("must be `{API_VERSION}`, found `{s}`"),
                );
            }
        }
    }
    if let Some(v) = top.req(cx, "kind") {
        if let Some(s) = string(cx, Some(v), "kind") {
            if !kinds.contains(&s.as_str()) {
                let want = kinds
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(" or ");
                cx.err(v.loc, "kind", format!("must be {want}, found `{s}`"));
            }
        }
    }
    Some(top)
}

/// `metadata`: (name, description).
fn metadata(cx: &mut Cx, top: &Obj) -> (String, String) {
    let Some(m) = top.req(cx, "metadata") else {
        return Default::default();
    };
    let Some(o) = obj(cx, m, "metadata", &["name", "description"], Unknown::Error) else {
        return Default::default();
    };
    let n = o.req(cx, "name");
    let name = name(cx, n, "metadata.name", true, 253).unwrap_or_default();
    let description = string(cx, o.get("description"), "metadata.description").unwrap_or_default();
    (name, description)
}

const SPEC_FIELDS: [&str; 12] = [
    "horizon",
    "seed",
    "scheduler",
    "limits",
    "kubelet",
    "node",
    "runtime",
    "api",
    "priorityClasses",
    "pods",
    "timeline",
    "expect",
];

/// `spec.scheduler`: `random`, `fifo`, `pct:D` or `pct:D:K`.
fn scheduler(cx: &mut Cx, n: Option<&Node>) -> Option<Strategy> {
    let n = present(n)?;
    let Kind::Str(s) = &n.kind else {
        expected(cx, n, "spec.scheduler", "one of random, fifo, pct:D");
        return None;
    };
    Strategy::parse(s)
        .map_err(|e| cx.err(n.loc, "spec.scheduler", e))
        .ok()
}

fn scenario(cx: &mut Cx, root: &Node, source: &str) -> Scenario {
    let hash = hash_of(root);
    let top = kind_check(cx, root, &["Scenario"]);
    let (name, description) = top.as_ref().map(|t| metadata(cx, t)).unwrap_or_default();
    let spec_node = top.as_ref().and_then(|t| t.req(cx, "spec"));
    let empty = Node::new(Loc::START, Kind::Null);
    let spec = obj(
        cx,
        spec_node.unwrap_or(&empty),
        "spec",
        &SPEC_FIELDS,
        Unknown::Error,
    );
    let spec_ok = spec_node.is_some() && spec.is_some();
    let spec = spec.unwrap_or(Obj {
        loc: Loc::START,
        path: "spec".into(),
        entries: &[],
    });

    let horizon_node = spec.get("horizon");
    let valid_horizon = match (horizon_node, pos_dur(cx, horizon_node, "spec.horizon")) {
        (None, _) => Some(timeline::Horizon {
            at: defaults::HORIZON,
            shown: format!("the default spec.horizon, {}", defaults::HORIZON),
        }),
        (Some(n), Some(at)) => Some(timeline::Horizon {
            at,
            shown: format!("spec.horizon: {}", n.scalar_text().unwrap_or_default()),
        }),
        (Some(_), None) => None,
    };
    let horizon = valid_horizon.as_ref().map_or(defaults::HORIZON, |h| h.at);
    let seed = int(cx, spec.get("seed"), "spec.seed", 0, u64::MAX.into())
        .map_or(defaults::SEED, |s| s as u64);
    let scheduler = scheduler(cx, spec.get("scheduler")).unwrap_or(defaults::SCHEDULER);
    let (mut max_events, mut max_events_per_instant) =
        (defaults::MAX_EVENTS, defaults::MAX_EVENTS_PER_INSTANT);
    if let Some(l) = spec.get("limits") {
        if let Some(o) = obj(
            cx,
            l,
            "spec.limits",
            &["maxEvents", "maxEventsPerInstant"],
            Unknown::Error,
        ) {
            let max = u64::MAX.into();
            if let Some(v) = int(cx, o.get("maxEvents"), "spec.limits.maxEvents", 1, max) {
                max_events = v as u64;
            }
            if let Some(v) = int(
                cx,
                o.get("maxEventsPerInstant"),
                "spec.limits.maxEventsPerInstant",
                1,
                max,
            ) {
                max_events_per_instant = v as u64;
            }
        }
    }
    let kubelet = kubelet(cx, spec.get("kubelet"));
    let gate = "probeTerminationGracePeriod";
    let switches = cx.names.effective_switches(
        &kubelet.profile,
        &kubelet.feature_gates,
        &kubelet.behaviours,
    );
    if !cx.names.switch_value(gate, &kubelet.profile, &switches) {
        cx.probe_grace_off = Some(kubelet.profile.clone());
    }
    let node = node_spec(cx, spec.get("node"));
    let runtime = runtime(cx, spec.get("runtime"));
    let api = api(cx, spec.get("api"));
    // Without a (valid) `spec` at all, its missing `pods` is not worth a second problem.
    let pods_node = if spec_ok {
        spec.req(cx, "pods")
    } else {
        spec.get("pods")
    };
    let classes = priority::priority_classes(cx, spec.get("priorityClasses"));
    let (mut pods, pods_complete, unknown_replicas) =
        pods(cx, pods_node, valid_horizon.as_ref(), &classes);
    // Kept for the whole run: without the slack of a doubled vector.
    pods.shrink_to_fit();
    if pods_node.is_some_and(|n| n.kind == Kind::Seq(Vec::new())) {
        if let Some(n) = pods_node {
            cx.err(n.loc, "spec.pods", "a scenario needs at least one pod");
        }
    }
    let known = timeline::KnownPods::new(&pods, pods_complete, &unknown_replicas);
    let timeline = timeline(cx, spec.get("timeline"), &known, valid_horizon.as_ref());
    let expect = spec.get("expect").and_then(|n| expect(cx, n));

    Scenario {
        name,
        description,
        source: source.to_owned(),
        hash,
        horizon,
        seed,
        scheduler,
        max_events,
        max_events_per_instant,
        kubelet,
        node,
        runtime,
        api,
        pods,
        timeline,
        expect,
    }
}

#[cfg(test)]
mod test_util {
    //! Shared by the unit tests of every part of validation.
    use super::{load_str, LoadError, Loaded};

    pub(in crate::scenario::validate) const MIN: &str = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: m}\nspec:\n  pods:\n    - template: {metadata: {name: web}, spec: {containers: [{name: app}]}}\n";

    pub(in crate::scenario::validate) fn with(extra: &str) -> Result<Loaded, LoadError> {
        load_str("m.yaml", &format!("{MIN}{extra}"), &[], &crate::names())
    }

    pub(in crate::scenario::validate) fn problems(extra: &str) -> Vec<String> {
        problem_lines(with(extra))
    }

    /// The problems of a load as `PATH: MESSAGE` lines (none when it loaded).
    pub(in crate::scenario::validate) fn problem_lines(
        r: Result<Loaded, LoadError>,
    ) -> Vec<String> {
        match r {
            Ok(_) => Vec::new(),
            Err(e) => e
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.path, p.message))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::with;
    use super::*;
    use crate::model::{Behaviour, CriCall, Dist, RestartPolicy};
    use crate::sim::Dur;

    #[test]
    fn minimal_scenario_gets_every_default() {
        let s = with("").unwrap().scenario;
        assert_eq!(s.horizon, defaults::HORIZON);
        assert_eq!(s.seed, 1);
        assert_eq!(s.scheduler, Strategy::Random);
        assert_eq!(
            (s.max_events, s.max_events_per_instant),
            (200_000_000, 5_000_000)
        );
        assert_eq!(s.kubelet.profile, "current");
        assert_eq!(s.kubelet.config, defaults::kubelet_config());
        assert_eq!(s.kubelet.timing, defaults::timing());
        assert_eq!(s.node.cpu_milli, 8000);
        assert_eq!(s.node.memory_bytes, 16 << 30);
        assert_eq!(s.node.pods, 110);
        assert_eq!(s.runtime.latencies.len(), CriCall::ALL.len());
        assert_eq!(
            s.runtime.latencies[&CriCall::PullImage],
            Dist::Fixed(Dur::secs(1))
        );
        assert_eq!(s.api.watch_delay, Dist::Fixed(Dur::millis(10)));
        assert_eq!(s.pods.len(), 1);
        let pod = &s.pods[0];
        assert_eq!(pod.spec.name, "web"); // no suffix without replicas
        assert_eq!(&*pod.spec.namespace, "default");
        assert_eq!(pod.spec.termination_grace_period_seconds, Some(30));
        assert_eq!(pod.spec.restart_policy, RestartPolicy::Always);
        assert_eq!(pod.behaviour["app"], Behaviour::default());
        assert!(s.timeline.is_empty());
        assert_eq!(s.expect, None);
        assert_eq!(s.hash.len(), 16);
    }

    #[test]
    fn kinds_and_names() {
        let e = load_str("x.yaml", "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {name: \"\"}\nspec: {pods: [{template: {metadata: {name: a}, spec: {containers: [{name: c}]}}}]}\n", &[], &crate::names()).unwrap_err();
        assert_eq!(e.problems.len(), 2, "{e}");
        assert_eq!(e.problems[0].path, "kind");
        assert_eq!(e.problems[1].path, "metadata.name");
        let e = load_str("x.yaml", "", &[], &crate::names()).unwrap_err();
        assert_eq!(e.problems.len(), 4, "{e}"); // apiVersion, kind, metadata, spec
        let e = load_str("x.yaml", "[1, 2]", &[], &crate::names()).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
    }
}
