//! Loose tree -> typed [`Scenario`] / [`SweepFile`], collecting every problem.
//!
//! Each podsim object is checked against its field table (unknown keys are errors, with a
//! "did you mean" hint); Pod-manifest objects (everything under `template`) accept unknown
//! keys with a note. Values are parsed by small helpers that record a problem and return
//! `None`, so the walk always continues and every problem of the file is reported.

use super::defaults;
use super::error::{LoadError, Note, Problem};
use super::not_built_yet::{not_built_yet, Capability};
use super::overrides;
use super::quantity::Quantity;
use super::schema::{self, Key, Kind, Loc, Node};
use super::types::*;
use crate::kubelet::profile;
use crate::model::{
    Behaviour, ContainerSpec, CriCall, CriError, Dist, ObjectRefs, OnSigterm, PodSpec, Probe,
    ProbeHandler, ProbeOutcome, Resources, RestartPolicy, RunFor,
};
use crate::sim::{Dur, Strategy};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// Loads and validates a scenario file, applying `--set` overrides `(PATH, VALUE)` first.
pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Loaded, LoadError> {
    let name = path.display().to_string();
    let text = read(path, &name)?;
    load_str(&name, &text, overrides)
}

/// [`load`] from text; `source_name` is used in messages and `Scenario::source`.
pub fn load_str(
    source_name: &str,
    text: &str,
    overrides: &[(String, String)],
) -> Result<Loaded, LoadError> {
    let root = parse_root(source_name, text)?;
    let mut cx = Cx::new(source_name);
    let root = apply_overrides(&mut cx, root, overrides);
    let scenario = scenario(&mut cx, &root, source_name);
    cx.finish(scenario)
        .map(|(scenario, notes)| Loaded { scenario, notes })
}

/// Loads and validates a `kind: Sweep` file and the scenario it names.
pub fn load_sweep(path: &Path) -> Result<SweepFile, LoadError> {
    let name = path.display().to_string();
    let text = read(path, &name)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    load_sweep_str(&name, &text, dir)
}

/// [`load_sweep`] from text; `spec.scenario` is resolved against `base_dir`.
pub fn load_sweep_str(
    source_name: &str,
    text: &str,
    base_dir: &Path,
) -> Result<SweepFile, LoadError> {
    let root = parse_root(source_name, text)?;
    let mut cx = Cx::new(source_name);
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
pub fn check_file(path: &Path) -> Result<Vec<Note>, LoadError> {
    let name = path.display().to_string();
    let text = read(path, &name)?;
    let root = parse_root(&name, &text)?;
    match root.get("kind").map(|n| &n.kind) {
        Some(Kind::Str(k)) if k == "Sweep" => load_sweep(path).map(|s| s.notes),
        Some(Kind::Str(k)) if k == "Scenario" => load_str(&name, &text, &[]).map(|l| l.notes),
        _ => {
            let mut cx = Cx::new(&name);
            // Reports the problem with `kind` (and everything else at the top level).
            kind_check(&mut cx, &root, &["Scenario", "Sweep"]);
            cx.finish(()).map(|((), notes)| notes)
        }
    }
}

fn read(path: &Path, name: &str) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|e| {
        LoadError::single(Problem {
            file: name.to_owned(),
            line: 0,
            col: 0,
            path: String::new(),
            message: format!("cannot read file: {e}"),
        })
    })
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
        cx.sets.push(format!("--set {path}"));
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
// Collecting problems

/// The validation context: where problems and notes go.
struct Cx {
    file: String,
    /// Label of each `--set` override (`--set PATH`), by index.
    sets: Vec<String>,
    problems: Vec<Problem>,
    notes: Vec<Note>,
}

impl Cx {
    fn new(file: &str) -> Cx {
        Cx {
            file: file.to_owned(),
            sets: Vec::new(),
            problems: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn place(&self, loc: Loc) -> (String, usize, usize) {
        match loc {
            Loc::File { line, col } => (self.file.clone(), line as usize, col as usize),
            Loc::Set(i) => (
                self.sets
                    .get(i as usize)
                    .cloned()
                    .unwrap_or_else(|| "--set".to_owned()),
                0,
                0,
            ),
        }
    }

    fn err(&mut self, loc: Loc, path: &str, message: impl Into<String>) {
        let (file, line, col) = self.place(loc);
        self.problems.push(Problem {
            file,
            line,
            col,
            path: path.to_owned(),
            message: message.into(),
        });
    }

    fn note(&mut self, loc: Loc, path: &str, message: impl Into<String>) {
        let (file, line, col) = self.place(loc);
        self.notes.push(Note {
            file,
            line,
            col,
            path: path.to_owned(),
            message: message.into(),
        });
    }

    /// Records a use of `cap`; an error if it is not built yet.
    fn uses(&mut self, cap: Capability, loc: Loc, path: &str) {
        if let Some(m) = not_built_yet(cap) {
            self.err(loc, path, m);
        }
    }

    /// `Ok(value)` if no problem was found. Problems from the file come first in position
    /// order, then those from `--set` values.
    fn finish<T>(mut self, value: T) -> Result<(T, Vec<Note>), LoadError> {
        let key = |file: &str, line: usize, col: usize| (file.starts_with("--set"), line, col);
        self.notes.sort_by_key(|n| key(&n.file, n.line, n.col));
        if self.problems.is_empty() {
            return Ok((value, self.notes));
        }
        self.problems.sort_by_key(|p| key(&p.file, p.line, p.col));
        self.problems.dedup();
        Err(LoadError {
            problems: self.problems,
            notes: self.notes,
        })
    }
}

fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

fn idx(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// Levenshtein distance, for "did you mean" hints.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn suggest(name: &str, options: &[&str]) -> String {
    let best = options
        .iter()
        .map(|o| (distance(&name.to_lowercase(), &o.to_lowercase()), *o))
        .min();
    match best {
        Some((d, o)) if d <= 2.max(name.len() / 4) => format!("; did you mean `{o}`?"),
        _ => format!("; expected one of: {}", options.join(", ")),
    }
}

/// How an object treats keys that are not in its field table.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unknown {
    /// podsim's own objects: an error.
    Error,
    /// Pod-manifest objects: a note.
    Note,
}

/// A mapping checked against its field table.
struct Obj<'n> {
    loc: Loc,
    path: String,
    entries: &'n [(Key, Node)],
}

impl<'n> Obj<'n> {
    /// The value of `key`, `None` if absent or null.
    fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
            .filter(|v| v.kind != Kind::Null)
    }
    fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }
    /// The value of a required field; a problem if it is missing.
    fn req(&self, cx: &mut Cx, key: &str) -> Option<&'n Node> {
        let v = self.get(key);
        if v.is_none() {
            cx.err(
                self.loc,
                &self.at(key),
                format!("missing required field `{key}`"),
            );
        }
        v
    }
}

/// Checks that `node` is a mapping (null counts as empty) whose keys are in `fields`.
fn obj<'n>(
    cx: &mut Cx,
    node: &'n Node,
    path: &str,
    fields: &[&str],
    unknown: Unknown,
) -> Option<Obj<'n>> {
    let entries: &[(Key, Node)] = match &node.kind {
        Kind::Map(e) => e,
        Kind::Null => &[],
        k => {
            cx.err(
                node.loc,
                path,
                format!("expected a mapping, found {}", k.describe()),
            );
            return None;
        }
    };
    for (k, _) in entries {
        if !fields.contains(&k.name.as_str()) {
            let p = join(path, &k.name);
            match unknown {
                Unknown::Error => cx.err(
                    k.loc,
                    &p,
                    format!("unknown field `{}`{}", k.name, suggest(&k.name, fields)),
                ),
                Unknown::Note => cx.note(k.loc, &p, "field not modelled by podsim, ignored"),
            }
        }
    }
    Some(Obj {
        loc: node.loc,
        path: path.to_owned(),
        entries,
    })
}

fn present(n: Option<&Node>) -> Option<&Node> {
    n.filter(|n| n.kind != Kind::Null)
}

fn expected(cx: &mut Cx, n: &Node, path: &str, what: &str) {
    cx.err(
        n.loc,
        path,
        format!("expected {what}, found {}", n.kind.describe()),
    );
}

fn string(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<String> {
    let n = present(n)?;
    match &n.kind {
        Kind::Str(s) => Some(s.clone()),
        _ => {
            expected(cx, n, path, "a string");
            None
        }
    }
}

fn boolean(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<bool> {
    let n = present(n)?;
    match n.kind {
        Kind::Bool(b) => Some(b),
        _ => {
            expected(cx, n, path, "`true` or `false`");
            None
        }
    }
}

fn int(cx: &mut Cx, n: Option<&Node>, path: &str, min: i128, max: i128) -> Option<i128> {
    let n = present(n)?;
    let Kind::Int(i) = n.kind else {
        expected(cx, n, path, "an integer");
        return None;
    };
    if i < min {
        cx.err(n.loc, path, format!("must be at least {min}, found {i}"));
        None
    } else if i > max {
        cx.err(n.loc, path, format!("must be at most {max}, found {i}"));
        None
    } else {
        Some(i)
    }
}

fn dur(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Dur> {
    let n = present(n)?;
    let (text, parsed) = match &n.kind {
        Kind::Str(s) => (s.clone(), super::duration::parse_go_duration(s)),
        Kind::Int(i) if *i <= 0 => (i.to_string(), Ok(*i)),
        Kind::Int(i) => (
            i.to_string(),
            Err(format!("`{i}` is missing a unit (e.g. `{i}s`)")),
        ),
        _ => {
            expected(cx, n, path, "a duration such as `10s`");
            return None;
        }
    };
    match parsed {
        Ok(ns) if ns < 0 => {
            cx.err(
                n.loc,
                path,
                format!("duration must not be negative, found `{text}`"),
            );
            None
        }
        Ok(ns) => u64::try_from(ns).ok().map(Dur),
        Err(m) => {
            cx.err(n.loc, path, m);
            None
        }
    }
}

fn pos_dur(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Dur> {
    let d = dur(cx, n, path)?;
    if d == Dur::ZERO {
        if let Some(n) = n {
            cx.err(n.loc, path, "must be greater than 0");
        }
        return None;
    }
    Some(d)
}

fn quantity(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Quantity> {
    let n = present(n)?;
    let text = match &n.kind {
        Kind::Str(s) => s.clone(),
        Kind::Int(i) => i.to_string(),
        Kind::Float(f) => f.to_string(),
        _ => {
            expected(cx, n, path, "a quantity such as `100Mi` or `2`");
            return None;
        }
    };
    match Quantity::parse(&text) {
        Ok(q) => Some(q),
        Err(m) => {
            cx.err(n.loc, path, m);
            None
        }
    }
}

/// A quantity converted with `conv` (value or milli); a problem if it overflows.
fn amount(
    cx: &mut Cx,
    n: Option<&Node>,
    path: &str,
    conv: fn(Quantity) -> Option<u64>,
) -> Option<u64> {
    let q = quantity(cx, n, path)?;
    let v = conv(q);
    if v.is_none() {
        if let Some(n) = n {
            cx.err(n.loc, path, "quantity is too large");
        }
    }
    v
}

fn bytes(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<u64> {
    amount(cx, n, path, Quantity::value)
}

fn milli(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<u64> {
    amount(cx, n, path, Quantity::milli)
}

/// A probability in [0, 1], as parts per million.
fn probability(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<u32> {
    let n = present(n)?;
    let p = match n.kind {
        Kind::Int(i) => i as f64,
        Kind::Float(f) => f,
        _ => {
            expected(cx, n, path, "a probability between 0 and 1");
            return None;
        }
    };
    if !(0.0..=1.0).contains(&p) {
        cx.err(n.loc, path, format!("must be between 0 and 1, found {p}"));
        return None;
    }
    Some((p * 1e6).round() as u32)
}

fn list<'n>(cx: &mut Cx, n: Option<&'n Node>, path: &str) -> &'n [Node] {
    let Some(n) = present(n) else { return &[] };
    match &n.kind {
        Kind::Seq(items) => items,
        _ => {
            expected(cx, n, path, "a list");
            &[]
        }
    }
}

/// One of `options`; a problem naming them otherwise.
fn one_of(cx: &mut Cx, n: Option<&Node>, path: &str, options: &[&str]) -> Option<usize> {
    let n = present(n)?;
    let Kind::Str(s) = &n.kind else {
        expected(cx, n, path, &format!("one of {}", options.join(", ")));
        return None;
    };
    let i = options.iter().position(|o| o == s);
    if i.is_none() {
        cx.err(
            n.loc,
            path,
            format!("unknown value `{s}`{}", suggest(s, options)),
        );
    }
    i
}

/// A mapping that must hold exactly one of `kinds` (it may have other fields). Returns the
/// chosen kind's key and value. `strict`: the object's field table when unknown keys were
/// already reported as errors; then a missing kind is not reported again (it was most
/// likely misspelt).
fn exactly_one<'n>(
    cx: &mut Cx,
    o: &Obj<'n>,
    kinds: &[&str],
    what: &str,
    strict: Option<&[&str]>,
) -> Option<(&'n Key, &'n Node)> {
    let mut found: Option<(&Key, &Node)> = None;
    for (k, v) in o.entries {
        if !kinds.contains(&k.name.as_str()) {
            continue;
        }
        match found {
            None => found = Some((k, v)),
            Some((first, _)) => cx.err(
                k.loc,
                &o.at(&k.name),
                format!(
                    "{what} takes exactly one of {}; this one already has `{}`",
                    kinds.join(", "),
                    first.name
                ),
            ),
        }
    }
    let misspelt = strict.is_some_and(|fields| {
        o.entries
            .iter()
            .any(|(k, _)| !fields.contains(&k.name.as_str()))
    });
    if found.is_none() && !misspelt {
        cx.err(
            o.loc,
            &o.path,
            format!("{what} needs exactly one of {}", kinds.join(", ")),
        );
    }
    found
}

const DIST_KINDS: [&str; 4] = ["fixed", "uniform", "exponential", "lognormal"];

fn dist(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Dist> {
    let n = present(n)?;
    let o = match &n.kind {
        Kind::Map(_) => obj(cx, n, path, &DIST_KINDS, Unknown::Error)?,
        _ => {
            expected(
                cx,
                n,
                path,
                "a distribution (`{fixed: D}`, `{uniform: {min: D, max: D}}`, `{exponential: {mean: D}}` or `{lognormal: {median: D, p99: D}}`)",
            );
            return None;
        }
    };
    let (k, v) = exactly_one(cx, &o, &DIST_KINDS, "a distribution", Some(&DIST_KINDS))?;
    let p = o.at(&k.name);
    let sub = |cx: &mut Cx, fields: &[&str]| -> Option<Vec<Option<Dur>>> {
        let so = obj(cx, v, &p, fields, Unknown::Error)?;
        Some(
            fields
                .iter()
                .map(|f| {
                    let n = so.req(cx, f);
                    dur(cx, n, &so.at(f))
                })
                .collect(),
        )
    };
    match k.name.as_str() {
        "fixed" => {
            if v.kind == Kind::Null {
                cx.err(v.loc, &p, "missing duration");
            }
            dur(cx, Some(v), &p).map(Dist::Fixed)
        }
        "uniform" => {
            let d = sub(cx, &["min", "max"])?;
            let (min, max) = (d[0]?, d[1]?);
            if min > max {
                let at = v.get("max").map_or(v.loc, |n| n.loc);
                cx.err(
                    at,
                    &join(&p, "max"),
                    format!("max ({max}) must not be less than min ({min})"),
                );
                return None;
            }
            Some(Dist::Uniform { min, max })
        }
        "exponential" => {
            let d = sub(cx, &["mean"])?;
            Some(Dist::Exponential { mean: d[0]? })
        }
        _ => {
            let d = sub(cx, &["median", "p99"])?;
            let (median, p99) = (d[0]?, d[1]?);
            if median == Dur::ZERO {
                let at = v.get("median").map_or(v.loc, |n| n.loc);
                cx.err(at, &join(&p, "median"), "must be greater than 0");
                return None;
            }
            if p99 < median {
                let at = v.get("p99").map_or(v.loc, |n| n.loc);
                cx.err(
                    at,
                    &join(&p, "p99"),
                    format!("p99 ({p99}) must not be less than median ({median})"),
                );
                return None;
            }
            Some(Dist::LogNormal { median, p99 })
        }
    }
}

/// `[a-z0-9]([-a-z0-9.]*[a-z0-9])?`, at most `max` characters (DNS subdomain when dots are
/// allowed, DNS label otherwise).
fn is_dns_name(s: &str, dots: bool, max: usize) -> bool {
    let ok_inner =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (dots && c == '.');
    let ok_end = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= max
        && s.chars().all(ok_inner)
        && s.chars().next().is_some_and(ok_end)
        && s.chars().last().is_some_and(ok_end)
}

fn name(cx: &mut Cx, n: Option<&Node>, path: &str, dots: bool, max: usize) -> Option<String> {
    let s = string(cx, n, path)?;
    if !is_dns_name(&s, dots, max) {
        let pattern = if dots {
            "[a-z0-9]([-a-z0-9.]*[a-z0-9])?"
        } else {
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
        };
        if let Some(n) = n {
            cx.err(
                n.loc,
                path,
                format!("`{s}` is not a valid name: use lowercase letters, digits and `-` ({pattern}, at most {max} characters)"),
            );
        }
        return None;
    }
    Some(s)
}

// ---------------------------------------------------------------------------------------
// Scenario

/// Checks `apiVersion` and `kind`; returns the top-level object.
fn kind_check<'n>(cx: &mut Cx, root: &'n Node, kinds: &[&str]) -> Option<Obj<'n>> {
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

const SPEC_FIELDS: [&str; 11] = [
    "horizon",
    "seed",
    "scheduler",
    "limits",
    "kubelet",
    "node",
    "runtime",
    "api",
    "pods",
    "timeline",
    "expect",
];

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

    let horizon = pos_dur(cx, spec.get("horizon"), "spec.horizon").unwrap_or(defaults::HORIZON);
    let seed = int(cx, spec.get("seed"), "spec.seed", 0, u64::MAX.into())
        .map_or(defaults::SEED, |s| s as u64);
    let scheduler = match one_of(
        cx,
        spec.get("scheduler"),
        "spec.scheduler",
        &["random", "fifo"],
    ) {
        Some(1) => Strategy::Fifo,
        Some(_) => Strategy::Random,
        None => defaults::SCHEDULER,
    };
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
    let node = node_spec(cx, spec.get("node"));
    let runtime = runtime(cx, spec.get("runtime"));
    let api = api(cx, spec.get("api"));
    // Without a (valid) `spec` at all, its missing `pods` is not worth a second problem.
    let pods_node = if spec_ok {
        spec.req(cx, "pods")
    } else {
        spec.get("pods")
    };
    let (pods, pods_complete) = pods(cx, pods_node);
    if pods_node.is_some_and(|n| n.kind == Kind::Seq(Vec::new())) {
        if let Some(n) = pods_node {
            cx.err(n.loc, "spec.pods", "a scenario needs at least one pod");
        }
    }
    let timeline = timeline(cx, spec.get("timeline"), &pods, pods_complete);
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

const EVICTION_SIGNALS: [&str; 9] = [
    "memory.available",
    "allocatableMemory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "containerfs.available",
    "containerfs.inodesFree",
    "pid.available",
];

/// Entries of a `signal -> value` map (evictionHard and friends), with checked signal names.
fn signal_map<'n>(cx: &mut Cx, n: Option<&'n Node>, path: &str) -> Vec<(String, &'n Node, String)> {
    let Some(n) = present(n) else {
        return Vec::new();
    };
    let Some(o) = obj(cx, n, path, &EVICTION_SIGNALS, Unknown::Error) else {
        return Vec::new();
    };
    o.entries
        .iter()
        .filter(|(k, _)| EVICTION_SIGNALS.contains(&k.name.as_str()))
        .map(|(k, v)| (k.name.clone(), v, o.at(&k.name)))
        .collect()
}

fn threshold(cx: &mut Cx, n: &Node, path: &str) -> Option<Threshold> {
    if let Kind::Str(s) = &n.kind {
        if let Some(pct) = s.strip_suffix('%') {
            return match pct.trim().parse::<f64>() {
                Ok(p) if (0.0..=100.0).contains(&p) => {
                    Some(Threshold::PercentPpm((p * 1e4).round() as u32))
                }
                _ => {
                    cx.err(
                        n.loc,
                        path,
                        format!("`{s}` is not a percentage between 0% and 100%"),
                    );
                    None
                }
            };
        }
    }
    bytes(cx, Some(n), path).map(Threshold::Bytes)
}

/// `behaviours`: switch name -> bool, names checked against the switch table.
fn switch_map(cx: &mut Cx, b: &Node, bp: &str, out: &mut BTreeMap<String, bool>) {
    match &b.kind {
        Kind::Map(entries) => {
            for (key, v) in entries {
                let kp = join(bp, &key.name);
                let Some(val) = boolean(cx, Some(v), &kp) else {
                    continue;
                };
                match profile::by_name(&key.name) {
                        None => {
                            let names: Vec<&str> =
                                profile::SWITCHES.iter().map(|s| s.name).collect();
                            let hint = suggest(&key.name, &names);
                            cx.err(
                                key.loc,
                                &kp,
                                format!("unknown behaviour switch `{}`{hint}", key.name),
                            );
                        }
                        Some(s) if !s.built && !val => cx.err(
                            v.loc,
                            &kp,
                            format!(
                                "`{}: false` is not built yet: podsim does not model the behaviour before {} (every profile runs it as `true`)",
                                s.name, s.refs
                            ),
                        ),
                        Some(_) => {
                            out.insert(key.name.clone(), val);
                        }
                    }
            }
        }
        _ => expected(cx, b, bp, "a mapping of switch names to `true`/`false`"),
    }
}

fn kubelet(cx: &mut Cx, n: Option<&Node>) -> KubeletSpec {
    let mut k = KubeletSpec {
        profile: defaults::PROFILE.to_owned(),
        behaviours: BTreeMap::new(),
        config: defaults::kubelet_config(),
        timing: defaults::timing(),
    };
    let Some(n) = present(n) else { return k };
    let p = "spec.kubelet";
    let Some(o) = obj(
        cx,
        n,
        p,
        &["profile", "behaviours", "config", "timing"],
        Unknown::Error,
    ) else {
        return k;
    };
    if let Some(i) = one_of(cx, o.get("profile"), &o.at("profile"), &defaults::PROFILES) {
        k.profile = defaults::PROFILES[i].to_owned();
    }
    if let Some(b) = o.get("behaviours") {
        let bp = o.at("behaviours");
        switch_map(cx, b, &bp, &mut k.behaviours);
    }
    if let Some(c) = o.get("config") {
        kubelet_config(cx, c, &o.at("config"), &mut k.config);
    }
    if let Some(t) = o.get("timing") {
        let tp = o.at("timing");
        let fields = [
            "plegRelistPeriod",
            "housekeepingPeriod",
            "statusSyncPeriod",
            "evictionMonitoringPeriod",
            "syncLoopTick",
        ];
        let all = [&fields[..], &["plegRelistPhase", "housekeepingPhase"]].concat();
        if let Some(to) = obj(cx, t, &tp, &all, Unknown::Error) {
            let tm = &mut k.timing;
            let slots = [
                &mut tm.pleg_relist_period,
                &mut tm.housekeeping_period,
                &mut tm.status_sync_period,
                &mut tm.eviction_monitoring_period,
                &mut tm.sync_loop_tick,
            ];
            for (f, slot) in fields.iter().zip(slots) {
                if let Some(d) = pos_dur(cx, to.get(f), &to.at(f)) {
                    *slot = d;
                }
            }
            for (f, slot) in [
                ("plegRelistPhase", &mut tm.pleg_relist_phase),
                ("housekeepingPhase", &mut tm.housekeeping_phase),
            ] {
                if let Some(d) = dur(cx, to.get(f), &to.at(f)) {
                    *slot = d;
                }
            }
        }
    }
    k
}

fn kubelet_config(cx: &mut Cx, n: &Node, p: &str, c: &mut KubeletConfig) {
    let fields = [
        "syncFrequency",
        "shutdownGracePeriod",
        "shutdownGracePeriodCriticalPods",
        "shutdownGracePeriodByPodPriority",
        "evictionHard",
        "evictionSoft",
        "evictionSoftGracePeriod",
        "evictionMaxPodGracePeriod",
        "evictionPressureTransitionPeriod",
    ];
    let Some(o) = obj(cx, n, p, &fields, Unknown::Error) else {
        return;
    };
    if let Some(d) = pos_dur(cx, o.get("syncFrequency"), &o.at("syncFrequency")) {
        c.sync_frequency = d;
    }
    for (f, cap) in [
        ("shutdownGracePeriod", Capability::ShutdownGracePeriod),
        (
            "shutdownGracePeriodCriticalPods",
            Capability::ShutdownGracePeriodCriticalPods,
        ),
    ] {
        if let Some(d) = dur(cx, o.get(f), &o.at(f)) {
            if f == "shutdownGracePeriod" {
                c.shutdown_grace_period = d;
            } else {
                c.shutdown_grace_period_critical_pods = d;
            }
            if d > Dur::ZERO {
                if let Some(v) = o.get(f) {
                    cx.uses(cap, v.loc, &o.at(f));
                }
            }
        }
    }
    if c.shutdown_grace_period_critical_pods > c.shutdown_grace_period {
        if let Some(v) = o.get("shutdownGracePeriodCriticalPods") {
            cx.err(
                v.loc,
                &o.at("shutdownGracePeriodCriticalPods"),
                "must not be greater than `shutdownGracePeriod`",
            );
        }
    }
    let bp = o.at("shutdownGracePeriodByPodPriority");
    let items = list(cx, o.get("shutdownGracePeriodByPodPriority"), &bp);
    for (i, item) in items.iter().enumerate() {
        let ip = idx(&bp, i);
        let fields = ["priority", "shutdownGracePeriodSeconds"];
        if let Some(io) = obj(cx, item, &ip, &fields, Unknown::Error) {
            let pr = io.req(cx, "priority");
            let pr = int(cx, pr, &io.at("priority"), i32::MIN.into(), i32::MAX.into());
            let g = io.req(cx, "shutdownGracePeriodSeconds");
            let g = int(
                cx,
                g,
                &io.at("shutdownGracePeriodSeconds"),
                0,
                i64::MAX.into(),
            );
            if let (Some(pr), Some(g)) = (pr, g) {
                c.shutdown_grace_period_by_pod_priority
                    .push((pr as i32, g as i64));
            }
        }
    }
    if let Some(first) = items.first() {
        cx.uses(Capability::ShutdownGracePeriodByPodPriority, first.loc, &bp);
        // KubeletConfiguration validation: the list replaces the two durations.
        if c.shutdown_grace_period > Dur::ZERO || c.shutdown_grace_period_critical_pods > Dur::ZERO
        {
            cx.err(
                first.loc,
                &bp,
                "cannot be set together with `shutdownGracePeriod` or `shutdownGracePeriodCriticalPods`",
            );
        }
    }
    if o.get("evictionHard").is_some() {
        c.eviction_hard.clear();
    }
    for (sig, v, sp) in signal_map(cx, o.get("evictionHard"), &o.at("evictionHard")) {
        if let Some(t) = threshold(cx, v, &sp) {
            c.eviction_hard.insert(sig, t);
        }
    }
    let soft = signal_map(cx, o.get("evictionSoft"), &o.at("evictionSoft"));
    for (sig, v, sp) in &soft {
        if let Some(t) = threshold(cx, v, sp) {
            c.eviction_soft.insert(sig.clone(), t);
        }
    }
    if let (Some(n), false) = (o.get("evictionSoft"), soft.is_empty()) {
        cx.uses(Capability::EvictionSoft, n.loc, &o.at("evictionSoft"));
    }
    let grace = signal_map(
        cx,
        o.get("evictionSoftGracePeriod"),
        &o.at("evictionSoftGracePeriod"),
    );
    for (sig, v, sp) in &grace {
        if let Some(d) = dur(cx, Some(v), sp) {
            c.eviction_soft_grace_period.insert(sig.clone(), d);
        }
    }
    // ParseThresholdConfig: every soft threshold needs its grace period.
    for (sig, v, sp) in &soft {
        if !grace.iter().any(|(g, _, _)| g == sig) {
            cx.err(
                v.loc,
                sp,
                format!("a soft eviction threshold needs a grace period: set `evictionSoftGracePeriod` for `{sig}`"),
            );
        }
    }
    if let (Some(n), false) = (o.get("evictionSoftGracePeriod"), grace.is_empty()) {
        cx.uses(
            Capability::EvictionSoftGracePeriod,
            n.loc,
            &o.at("evictionSoftGracePeriod"),
        );
    }
    let f = "evictionMaxPodGracePeriod";
    if let Some(v) = int(cx, o.get(f), &o.at(f), i64::MIN.into(), i64::MAX.into()) {
        c.eviction_max_pod_grace_period = v as i64;
        if v != 0 {
            if let Some(n) = o.get(f) {
                cx.uses(Capability::EvictionMaxPodGracePeriod, n.loc, &o.at(f));
            }
        }
    }
    let f = "evictionPressureTransitionPeriod";
    if let Some(d) = dur(cx, o.get(f), &o.at(f)) {
        c.eviction_pressure_transition_period = d;
    }
}

fn node_spec(cx: &mut Cx, n: Option<&Node>) -> NodeSpec {
    let mut s = NodeSpec {
        cpu_milli: defaults::NODE_CPU_MILLI,
        memory_bytes: defaults::NODE_MEMORY_BYTES,
        pods: defaults::NODE_PODS,
    };
    let Some(n) = present(n) else { return s };
    let Some(o) = obj(cx, n, "spec.node", &["capacity"], Unknown::Error) else {
        return s;
    };
    let Some(c) = o.get("capacity") else { return s };
    let p = o.at("capacity");
    let Some(co) = obj(cx, c, &p, &["cpu", "memory", "pods"], Unknown::Error) else {
        return s;
    };
    if let Some(v) = milli(cx, co.get("cpu"), &co.at("cpu")) {
        s.cpu_milli = v;
    }
    if let Some(v) = bytes(cx, co.get("memory"), &co.at("memory")) {
        s.memory_bytes = v;
    }
    if let Some(v) = bytes(cx, co.get("pods"), &co.at("pods")) {
        s.pods = v;
    }
    s
}

const CRI_ERRORS: [(&str, CriError); 5] = [
    ("DeadlineExceeded", CriError::DeadlineExceeded),
    ("Unavailable", CriError::Unavailable),
    ("Unknown", CriError::Unknown),
    ("Internal", CriError::Internal),
    ("ResourceExhausted", CriError::ResourceExhausted),
];

fn runtime(cx: &mut Cx, n: Option<&Node>) -> RuntimeSpec {
    let mut r = RuntimeSpec {
        latencies: CriCall::ALL
            .iter()
            .map(|c| (*c, defaults::latency(*c)))
            .collect(),
        faults: Vec::new(),
    };
    let Some(n) = present(n) else { return r };
    let Some(o) = obj(
        cx,
        n,
        "spec.runtime",
        &["latencies", "faults"],
        Unknown::Error,
    ) else {
        return r;
    };
    let calls: Vec<&str> = CriCall::ALL.iter().map(|c| c.as_str()).collect();
    if let Some(l) = o.get("latencies") {
        if let Some(lo) = obj(cx, l, &o.at("latencies"), &calls, Unknown::Error) {
            for call in CriCall::ALL {
                if let Some(d) = dist(cx, lo.get(call.as_str()), &lo.at(call.as_str())) {
                    r.latencies.insert(call, d);
                }
            }
        }
    }
    let fp = o.at("faults");
    for (i, item) in list(cx, o.get("faults"), &fp).iter().enumerate() {
        let ip = idx(&fp, i);
        let Some(io) = obj(
            cx,
            item,
            &ip,
            &["call", "probability", "error", "from", "until"],
            Unknown::Error,
        ) else {
            continue;
        };
        let call = io.req(cx, "call");
        let call = one_of(cx, call, &io.at("call"), &calls).map(|i| CriCall::ALL[i]);
        let prob = io.req(cx, "probability");
        let prob = probability(cx, prob, &io.at("probability"));
        let names: Vec<&str> = CRI_ERRORS.iter().map(|e| e.0).collect();
        let error = match io.get("error") {
            None => Some(CriError::Unknown),
            e => one_of(cx, e, &io.at("error"), &names).map(|i| CRI_ERRORS[i].1),
        };
        let from = match io.get("from") {
            None => Some(Dur::ZERO),
            f => dur(cx, f, &io.at("from")),
        };
        let until = match io.get("until") {
            None => Some(None),
            u => dur(cx, u, &io.at("until")).map(Some),
        };
        if let (Some(Some(u)), Some(f)) = (until, from) {
            if u < f {
                let loc = io.get("until").map_or(io.loc, |n| n.loc);
                cx.err(loc, &io.at("until"), "`until` must not be before `from`");
            }
        }
        if let (Some(call), Some(probability_ppm), Some(error), Some(from), Some(until)) =
            (call, prob, error, from, until)
        {
            r.faults.push(Fault {
                call,
                probability_ppm,
                error,
                from,
                until,
            });
        }
    }
    r
}

fn api(cx: &mut Cx, n: Option<&Node>) -> ApiSpec {
    let mut a = ApiSpec {
        watch_delay: defaults::WATCH_DELAY,
        status_write_delay: defaults::STATUS_WRITE_DELAY,
    };
    let Some(n) = present(n) else { return a };
    let Some(o) = obj(
        cx,
        n,
        "spec.api",
        &["watchDelay", "statusWriteDelay"],
        Unknown::Error,
    ) else {
        return a;
    };
    if let Some(d) = dist(cx, o.get("watchDelay"), &o.at("watchDelay")) {
        a.watch_delay = d;
    }
    if let Some(d) = dist(cx, o.get("statusWriteDelay"), &o.at("statusWriteDelay")) {
        a.status_write_delay = d;
    }
    a
}

// ---------------------------------------------------------------------------------------
// Pods

/// The expanded pods, and whether every declaration was valid (if not, references to pods
/// cannot be checked without false alarms).
fn pods(cx: &mut Cx, n: Option<&Node>) -> (Vec<PodDecl>, bool) {
    let mut out = Vec::new();
    let mut complete = true;
    // Expanded name -> index of the declaration that made it.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, item) in list(cx, n, "spec.pods").iter().enumerate() {
        let p = idx("spec.pods", i);
        let fields = ["replicas", "static", "createAt", "template", "behaviour"];
        let Some(o) = obj(cx, item, &p, &fields, Unknown::Error) else {
            complete = false;
            continue;
        };
        let replicas =
            int(cx, o.get("replicas"), &o.at("replicas"), 1, 1_000_000).map(|r| r as usize);
        let static_pod = boolean(cx, o.get("static"), &o.at("static")).unwrap_or(false);
        if static_pod {
            if let Some(s) = o.get("static") {
                cx.uses(Capability::StaticPods, s.loc, &o.at("static"));
            }
        }
        let create_at = dur(cx, o.get("createAt"), &o.at("createAt")).unwrap_or(Dur::ZERO);
        let template = o
            .req(cx, "template")
            .and_then(|t| pod_template(cx, t, &o.at("template")));
        let bp = o.at("behaviour");
        let Some((spec, name_loc, containers_ok)) = template else {
            complete = false;
            behaviours(cx, o.get("behaviour"), &bp, None);
            continue;
        };
        let containers: Vec<&str> = spec
            .init_containers
            .iter()
            .chain(&spec.containers)
            .map(|c| c.name.as_str())
            .collect();
        complete &= containers_ok;
        let known = containers_ok.then_some(containers.as_slice());
        let mut behaviour = behaviours(cx, o.get("behaviour"), &bp, known);
        for c in &containers {
            behaviour.entry((*c).to_owned()).or_default();
        }
        // One copy shared by every replica.
        let behaviour = Arc::new(behaviour);
        let name_path = format!("{p}.template.metadata.name");
        let names: Vec<String> = match (o.get("replicas"), replicas) {
            (None, _) => vec![spec.name.clone()],
            (Some(_), Some(r)) => (0..r).map(|k| format!("{}-{k}", spec.name)).collect(),
            (Some(_), None) => {
                complete = false;
                continue;
            }
        };
        for pod_name in names {
            if let Some(first) = seen.get(&pod_name) {
                cx.err(
                    name_loc,
                    &name_path,
                    format!("pod name `{pod_name}` is already used by spec.pods[{first}]"),
                );
                break;
            }
            if pod_name.len() > 253 {
                cx.err(
                    name_loc,
                    &name_path,
                    format!("pod name `{pod_name}` is longer than 253 characters"),
                );
                break;
            }
            seen.insert(pod_name.clone(), i);
            let mut spec = spec.clone();
            spec.name = pod_name;
            out.push(PodDecl {
                decl_index: i,
                static_pod,
                create_at,
                spec: std::sync::Arc::new(spec),
                behaviour: behaviour.clone(),
            });
        }
    }
    (out, complete)
}

/// A Pod manifest. Returns the spec, the location of `metadata.name`, and whether every
/// container was valid.
fn pod_template(cx: &mut Cx, n: &Node, p: &str) -> Option<(PodSpec, Loc, bool)> {
    let o = obj(cx, n, p, &["metadata", "spec"], Unknown::Note)?;
    let mut ok = true;
    let (mut pod_name, mut namespace, mut name_loc) = (None, defaults::NAMESPACE.to_owned(), o.loc);
    match o.req(cx, "metadata") {
        Some(m) => {
            if let Some(mo) = obj(
                cx,
                m,
                &o.at("metadata"),
                &["name", "namespace"],
                Unknown::Note,
            ) {
                let nn = mo.req(cx, "name");
                name_loc = nn.map_or(mo.loc, |n| n.loc);
                pod_name = name(cx, nn, &mo.at("name"), true, 253);
                if let Some(ns) = name(cx, mo.get("namespace"), &mo.at("namespace"), false, 63) {
                    namespace = ns;
                }
            }
        }
        None => ok = false,
    }
    let sp = o.at("spec");
    let spec_fields = [
        "terminationGracePeriodSeconds",
        "restartPolicy",
        "priority",
        "priorityClassName",
        "hostNetwork",
        "initContainers",
        "containers",
        "volumes",
    ];
    let s = o
        .req(cx, "spec")
        .and_then(|s| obj(cx, s, &sp, &spec_fields, Unknown::Note));
    let s = s?;
    let tgps = int(
        cx,
        s.get("terminationGracePeriodSeconds"),
        &s.at("terminationGracePeriodSeconds"),
        0,
        i64::MAX.into(),
    )
    .map_or(defaults::TERMINATION_GRACE_PERIOD_SECONDS, |v| v as i64);
    let policies = ["Always", "OnFailure", "Never"];
    let restart_policy = match one_of(
        cx,
        s.get("restartPolicy"),
        &s.at("restartPolicy"),
        &policies,
    ) {
        Some(1) => RestartPolicy::OnFailure,
        Some(2) => RestartPolicy::Never,
        _ => RestartPolicy::Always,
    };
    let priority = int(
        cx,
        s.get("priority"),
        &s.at("priority"),
        i32::MIN.into(),
        i32::MAX.into(),
    )
    .map_or(0, |v| v as i32);
    let priority_class_name = string(cx, s.get("priorityClassName"), &s.at("priorityClassName"));
    let host_network = boolean(cx, s.get("hostNetwork"), &s.at("hostNetwork")).unwrap_or(false);
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut containers_ok = true;
    let mut containers_of = |cx: &mut Cx, key: &str| -> Vec<ContainerSpec> {
        let lp = s.at(key);
        let mut out = Vec::new();
        for (i, node) in list(cx, s.get(key), &lp).iter().enumerate() {
            let Some(c) = container(cx, node, &idx(&lp, i)) else {
                containers_ok = false;
                continue;
            };
            if !names.insert(c.name.clone()) {
                let at = node.get("name").map_or(node.loc, |n| n.loc);
                let msg = format!("duplicate container name `{}`", c.name);
                cx.err(at, &format!("{}.name", idx(&lp, i)), msg);
            }
            out.push(c);
        }
        out
    };
    let init_containers = containers_of(cx, "initContainers");
    let containers = containers_of(cx, "containers");
    if let Some(ic) = s.get("initContainers") {
        if matches!(&ic.kind, Kind::Seq(v) if !v.is_empty()) {
            cx.uses(Capability::InitContainers, ic.loc, &s.at("initContainers"));
        }
    }
    let cnode = s.req(cx, "containers");
    if let Some(cn) = cnode {
        if matches!(&cn.kind, Kind::Seq(v) if v.is_empty()) {
            cx.err(
                cn.loc,
                &s.at("containers"),
                "a pod needs at least one container",
            );
        }
    }
    let objects = volume_objects(cx, &s);
    let name = pod_name?;
    if !ok {
        return None;
    }
    Some((
        PodSpec {
            name,
            namespace,
            termination_grace_period_seconds: Some(tgps),
            restart_policy,
            priority,
            priority_class_name,
            host_network,
            init_containers,
            containers,
            objects,
        },
        name_loc,
        containers_ok,
    ))
}

/// `spec.volumes`: the configmaps and secrets referenced by `configMap` and `secret`
/// volumes (other volume sources are accepted and not modelled).
fn volume_objects(cx: &mut Cx, s: &Obj) -> ObjectRefs {
    let lp = s.at("volumes");
    let mut out = Vec::new();
    for (i, node) in list(cx, s.get("volumes"), &lp).iter().enumerate() {
        let vp = idx(&lp, i);
        let fields = ["name", "configMap", "secret"];
        let Some(v) = obj(cx, node, &vp, &fields, Unknown::Note) else {
            continue;
        };
        let vn = v.req(cx, "name");
        let _ = name(cx, vn, &v.at("name"), false, 63);
        if let Some(c) = v.get("configMap") {
            let cp = v.at("configMap");
            let cf = ["name", "items", "optional", "defaultMode"];
            if let Some(co) = obj(cx, c, &cp, &cf, Unknown::Note) {
                let cn = co.req(cx, "name");
                if let Some(n) = name(cx, cn, &co.at("name"), true, 253) {
                    out.push(format!("configmap/{n}"));
                }
            }
        }
        if let Some(c) = v.get("secret") {
            let cp = v.at("secret");
            let cf = ["secretName", "items", "optional", "defaultMode"];
            if let Some(co) = obj(cx, c, &cp, &cf, Unknown::Note) {
                let sn = co.req(cx, "secretName");
                if let Some(n) = name(cx, sn, &co.at("secretName"), true, 253) {
                    out.push(format!("secret/{n}"));
                }
            }
        }
    }
    ObjectRefs(out)
}

fn container(cx: &mut Cx, n: &Node, p: &str) -> Option<ContainerSpec> {
    let fields = [
        "name",
        "image",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "resources",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Note)?;
    let nn = o.req(cx, "name");
    let name = name(cx, nn, &o.at("name"), false, 63);
    let image = string(cx, o.get("image"), &o.at("image")).unwrap_or_default();
    let probe_of = |cx: &mut Cx, key: &str, cap: Capability| {
        let v = o.get(key)?;
        cx.uses(cap, v.loc, &o.at(key));
        probe(cx, v, &o.at(key), cap == Capability::ReadinessProbe)
    };
    let liveness_probe = probe_of(cx, "livenessProbe", Capability::LivenessProbe);
    let readiness_probe = probe_of(cx, "readinessProbe", Capability::ReadinessProbe);
    let startup_probe = probe_of(cx, "startupProbe", Capability::StartupProbe);
    let mut has_pre_stop = false;
    if let Some(l) = o.get("lifecycle") {
        let lp = o.at("lifecycle");
        if let Some(lo) = obj(cx, l, &lp, &["preStop"], Unknown::Note) {
            if let Some(ps) = lo.get("preStop") {
                let pp = lo.at("preStop");
                let handlers = ["exec", "httpGet", "tcpSocket", "sleep"];
                if let Some(po) = obj(cx, ps, &pp, &handlers, Unknown::Note) {
                    has_pre_stop =
                        exactly_one(cx, &po, &handlers, "a preStop hook", None).is_some();
                }
            }
        }
    }
    let (mut requests, mut limits) = (Resources::default(), Resources::default());
    if let Some(r) = o.get("resources") {
        let rp = o.at("resources");
        if let Some(ro) = obj(cx, r, &rp, &["requests", "limits"], Unknown::Note) {
            for (key, slot) in [("requests", &mut requests), ("limits", &mut limits)] {
                let Some(v) = ro.get(key) else { continue };
                let Some(vo) = obj(cx, v, &ro.at(key), &["cpu", "memory"], Unknown::Note) else {
                    continue;
                };
                slot.cpu_milli = milli(cx, vo.get("cpu"), &vo.at("cpu")).unwrap_or(0);
                slot.memory_bytes = bytes(cx, vo.get("memory"), &vo.at("memory")).unwrap_or(0);
            }
            // API defaulting: a limit without a request sets the request.
            let asked = |res: &str| {
                ro.get("requests")
                    .and_then(|v| match &v.kind {
                        Kind::Map(m) => Some(m.iter().any(|(k, _)| k.name == res)),
                        _ => None,
                    })
                    .unwrap_or(false)
            };
            if !asked("cpu") {
                requests.cpu_milli = limits.cpu_milli;
            }
            if !asked("memory") {
                requests.memory_bytes = limits.memory_bytes;
            }
        }
    }
    Some(ContainerSpec {
        name: name?,
        image,
        liveness_probe,
        readiness_probe,
        startup_probe,
        has_pre_stop,
        requests,
        limits,
    })
}

fn probe(cx: &mut Cx, n: &Node, p: &str, readiness: bool) -> Option<Probe> {
    let handlers = ["exec", "httpGet", "tcpSocket", "grpc"];
    let fields = [
        "exec",
        "httpGet",
        "tcpSocket",
        "grpc",
        "initialDelaySeconds",
        "periodSeconds",
        "timeoutSeconds",
        "successThreshold",
        "failureThreshold",
        "terminationGracePeriodSeconds",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Note)?;
    let handler = exactly_one(cx, &o, &handlers, "a probe", None).map(|(k, v)| {
        if !matches!(v.kind, Kind::Map(_) | Kind::Null) {
            expected(cx, v, &o.at(&k.name), "a mapping");
        }
        match k.name.as_str() {
            "exec" => ProbeHandler::Exec,
            "httpGet" => ProbeHandler::HttpGet,
            "tcpSocket" => ProbeHandler::TcpSocket,
            _ => ProbeHandler::Grpc,
        }
    });
    let d = Probe::default();
    let u = |cx: &mut Cx, key: &str, min: i128, default: u32| {
        int(cx, o.get(key), &o.at(key), min, u32::MAX.into()).map_or(default, |v| v as u32)
    };
    let initial_delay_seconds = u(cx, "initialDelaySeconds", 0, d.initial_delay_seconds);
    let period_seconds = u(cx, "periodSeconds", 1, d.period_seconds);
    let timeout_seconds = u(cx, "timeoutSeconds", 1, d.timeout_seconds);
    let success_threshold = u(cx, "successThreshold", 1, d.success_threshold);
    let failure_threshold = u(cx, "failureThreshold", 1, d.failure_threshold);
    let k = "terminationGracePeriodSeconds";
    let tgps = int(cx, o.get(k), &o.at(k), 1, i64::MAX.into()).map(|v| v as i64);
    // API validation of probes.
    if let Some(v) = o.get("successThreshold") {
        if !readiness && success_threshold != 1 {
            let m = "must be 1 for liveness and startup probes";
            cx.err(v.loc, &o.at("successThreshold"), m);
        }
    }
    if let (Some(v), true) = (o.get(k), readiness) {
        cx.err(v.loc, &o.at(k), "must not be set for readiness probes");
    }
    Some(Probe {
        handler: handler?,
        initial_delay_seconds,
        period_seconds,
        timeout_seconds,
        success_threshold,
        failure_threshold,
        termination_grace_period_seconds: tgps,
    })
}

// ---------------------------------------------------------------------------------------
// Behaviour

/// `behaviour`: container name -> behaviour, for the entries given. Keys are checked against
/// `containers` when it is known (`None` when the template itself has problems).
fn behaviours(
    cx: &mut Cx,
    n: Option<&Node>,
    p: &str,
    containers: Option<&[&str]>,
) -> BTreeMap<String, Behaviour> {
    let mut out = BTreeMap::new();
    let Some(n) = present(n) else { return out };
    let Kind::Map(entries) = &n.kind else {
        expected(cx, n, p, "a mapping of container names to behaviours");
        return out;
    };
    for (k, v) in entries {
        let bp = join(p, &k.name);
        let b = behaviour(cx, v, &bp);
        if let Some(all) = containers.filter(|all| !all.contains(&k.name.as_str())) {
            let msg = format!(
                "no container named `{}` in this pod's template (containers: {})",
                k.name,
                all.join(", ")
            );
            cx.err(k.loc, &bp, msg);
        } else if let Some(b) = b {
            out.insert(k.name.clone(), b);
        }
    }
    out
}

fn behaviour(cx: &mut Cx, n: &Node, p: &str) -> Option<Behaviour> {
    let fields = [
        "runFor",
        "exitCode",
        "onSigterm",
        "preStopDuration",
        "memoryUsage",
        "probes",
        "imagePullFailureRatio",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Error)?;
    let mut b = Behaviour::default();
    if let Some(r) = o.get("runFor") {
        match &r.kind {
            Kind::Str(x) if x == "forever" => b.run_for = RunFor::Forever,
            Kind::Str(x) if super::duration::parse_go_duration(x).is_err() => {
                let msg = format!("expected `forever` or a duration such as `30s`, found `{x}`");
                cx.err(r.loc, &o.at("runFor"), msg);
            }
            _ => {
                if let Some(d) = dur(cx, Some(r), &o.at("runFor")) {
                    b.run_for = RunFor::For(d);
                }
            }
        }
    }
    b.exit_code = int(cx, o.get("exitCode"), &o.at("exitCode"), 0, 255).map_or(0, |v| v as i32);
    if let Some(s) = o.get("onSigterm") {
        let sp = o.at("onSigterm");
        match &s.kind {
            Kind::Str(x) if x == "ignore" => b.on_sigterm = OnSigterm::Ignore,
            Kind::Map(_) => {
                if let Some(so) = obj(cx, s, &sp, &["exitAfter", "exitCode"], Unknown::Error) {
                    let after =
                        dur(cx, so.get("exitAfter"), &so.at("exitAfter")).unwrap_or(Dur::ZERO);
                    let exit_code = int(cx, so.get("exitCode"), &so.at("exitCode"), 0, 255)
                        .map_or(0, |v| v as i32);
                    b.on_sigterm = OnSigterm::ExitAfter { after, exit_code };
                }
            }
            _ => expected(cx, s, &sp, "`ignore` or `{exitAfter: D, exitCode: N}`"),
        }
    }
    if let Some(d) = dur(cx, o.get("preStopDuration"), &o.at("preStopDuration")) {
        b.pre_stop_duration = d;
    }
    if let Some(m) = bytes(cx, o.get("memoryUsage"), &o.at("memoryUsage")) {
        b.memory_usage_bytes = m;
    }
    if let Some(r) = probability(
        cx,
        o.get("imagePullFailureRatio"),
        &o.at("imagePullFailureRatio"),
    ) {
        b.image_pull_failure_ppm = r;
    }
    if let Some(pr) = o.get("probes") {
        let pp = o.at("probes");
        let kinds = ["liveness", "readiness", "startup"];
        if let Some(po) = obj(cx, pr, &pp, &kinds, Unknown::Error) {
            for (k, slot) in kinds
                .iter()
                .zip([&mut b.liveness, &mut b.readiness, &mut b.startup])
            {
                if let Some(v) = po.get(k) {
                    if let Some(outcome) = probe_outcome(cx, v, &po.at(k)) {
                        *slot = outcome;
                    }
                }
            }
        }
    }
    Some(b)
}

fn probe_outcome(cx: &mut Cx, n: &Node, p: &str) -> Option<ProbeOutcome> {
    let kinds = ["succeed", "failFrom", "failBetween", "failureRatio"];
    let o = obj(cx, n, p, &kinds, Unknown::Error)?;
    let (k, v) = exactly_one(cx, &o, &kinds, "a probe outcome", Some(&kinds))?;
    let kp = o.at(&k.name);
    if v.kind == Kind::Null {
        cx.err(v.loc, &kp, "missing value");
        return None;
    }
    match k.name.as_str() {
        "succeed" => boolean(cx, Some(v), &kp).map(ProbeOutcome::Always),
        "failFrom" => dur(cx, Some(v), &kp).map(ProbeOutcome::FailFrom),
        "failureRatio" => probability(cx, Some(v), &kp).map(ProbeOutcome::FailureRatio),
        _ => {
            let items = list(cx, Some(v), &kp);
            if items.len() != 2 {
                if matches!(v.kind, Kind::Seq(_)) {
                    cx.err(
                        v.loc,
                        &kp,
                        format!(
                            "expected two durations `[from, to]`, found {} items",
                            items.len()
                        ),
                    );
                }
                return None;
            }
            let from = dur(cx, Some(&items[0]), &idx(&kp, 0));
            let to = dur(cx, Some(&items[1]), &idx(&kp, 1));
            let (from, to) = (from?, to?);
            if to < from {
                cx.err(
                    items[1].loc,
                    &idx(&kp, 1),
                    format!("end ({to}) must not be before start ({from})"),
                );
                return None;
            }
            Some(ProbeOutcome::FailBetween(from, to))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Timeline and expect

const ACTIONS: [&str; 10] = [
    "deletePod",
    "forceDeletePod",
    "nodeShutdown",
    "memoryPressure",
    "kubeletRestart",
    "containerExit",
    "updateStaticPod",
    "removeStaticPod",
    "restoreStaticPod",
    "recreatePod",
];

/// The pods timeline actions can name.
struct Pods<'a> {
    by_name: BTreeMap<&'a str, &'a PodDecl>,
    /// Every pod declaration was valid: a name not found is really missing.
    complete: bool,
}

fn timeline(cx: &mut Cx, n: Option<&Node>, pods: &[PodDecl], complete: bool) -> Vec<TimedAction> {
    let by_name = Pods {
        by_name: pods.iter().map(|p| (p.spec.name.as_str(), p)).collect(),
        complete,
    };
    let mut out = Vec::new();
    let mut fields = vec!["at"];
    fields.extend(ACTIONS);
    for (i, item) in list(cx, n, "spec.timeline").iter().enumerate() {
        let p = idx("spec.timeline", i);
        let Some(o) = obj(cx, item, &p, &fields, Unknown::Error) else {
            continue;
        };
        let at = o.req(cx, "at");
        let at = dur(cx, at, &o.at("at"));
        let Some((k, v)) = exactly_one(cx, &o, &ACTIONS, "a timeline entry", Some(&fields)) else {
            continue;
        };
        let ap = o.at(&k.name);
        if let Some(action) = action(cx, &k.name, v, &ap, &by_name) {
            if let Some(at) = at {
                out.push(TimedAction { at, action });
            }
        }
    }
    out.sort_by_key(|a| a.at);
    out
}

/// A `pod:` reference that must name an (expanded) pod; returns the name.
fn pod_ref(cx: &mut Cx, o: &Obj, pods: &Pods) -> Option<String> {
    let n = o.req(cx, "pod");
    let name = string(cx, n, &o.at("pod"))?;
    if !pods.by_name.contains_key(name.as_str()) {
        if !pods.complete {
            return None; // the pod declarations have problems of their own
        }
        let known: Vec<&str> = pods.by_name.keys().copied().take(10).collect();
        let more = if pods.by_name.len() > 10 { ", ..." } else { "" };
        let loc = n.map_or(o.loc, |n| n.loc);
        cx.err(
            loc,
            &o.at("pod"),
            format!(
                "no pod named `{name}` in spec.pods (pods: {}{more})",
                known.join(", ")
            ),
        );
        return None;
    }
    Some(name)
}

fn action(cx: &mut Cx, kind: &str, v: &Node, p: &str, pods: &Pods) -> Option<Action> {
    let fields: &[&str] = match kind {
        "deletePod" => &["pod", "gracePeriodSeconds"],
        "memoryPressure" => &["available"],
        "kubeletRestart" => &["downtime"],
        "containerExit" => &["pod", "container", "exitCode"],
        "nodeShutdown" => &[],
        _ => &["pod"],
    };
    let o = obj(cx, v, p, fields, Unknown::Error)?;
    let cap = match kind {
        "nodeShutdown" => Some(Capability::NodeShutdownAction),
        "memoryPressure" => Some(Capability::MemoryPressureAction),
        "kubeletRestart" => Some(Capability::KubeletRestartAction),
        "updateStaticPod" => Some(Capability::UpdateStaticPodAction),
        "removeStaticPod" | "restoreStaticPod" => Some(Capability::RemoveStaticPodAction),
        "recreatePod" => Some(Capability::RecreatePodAction),
        _ => None,
    };
    if let Some(cap) = cap {
        cx.uses(cap, v.loc, p);
    }
    match kind {
        "deletePod" => {
            let pod = pod_ref(cx, &o, pods);
            let g = int(
                cx,
                o.get("gracePeriodSeconds"),
                &o.at("gracePeriodSeconds"),
                0,
                i64::MAX.into(),
            );
            let bad_grace = o.get("gracePeriodSeconds").is_some() && g.is_none();
            if bad_grace {
                return None;
            }
            Some(Action::DeletePod {
                pod: pod?,
                grace_period_seconds: g.map(|g| g as i64),
            })
        }
        "forceDeletePod" => pod_ref(cx, &o, pods).map(|pod| Action::ForceDeletePod { pod }),
        "nodeShutdown" => Some(Action::NodeShutdown),
        "memoryPressure" => {
            let a = o.req(cx, "available");
            bytes(cx, a, &o.at("available"))
                .map(|available_bytes| Action::MemoryPressure { available_bytes })
        }
        "kubeletRestart" => {
            let downtime = dur(cx, o.get("downtime"), &o.at("downtime"));
            if o.get("downtime").is_some() && downtime.is_none() {
                return None;
            }
            Some(Action::KubeletRestart {
                downtime: downtime.unwrap_or(Dur::ZERO),
            })
        }
        "containerExit" => {
            let pod = pod_ref(cx, &o, pods);
            let cn = o.req(cx, "container");
            let container = string(cx, cn, &o.at("container"));
            let code = int(cx, o.get("exitCode"), &o.at("exitCode"), 0, 255);
            let bad_code = o.get("exitCode").is_some() && code.is_none();
            let (pod, container) = (pod?, container?);
            let decl = pods.by_name.get(pod.as_str())?;
            let known: Vec<&str> = decl
                .spec
                .init_containers
                .iter()
                .chain(&decl.spec.containers)
                .map(|c| c.name.as_str())
                .collect();
            if !known.contains(&container.as_str()) {
                let loc = cn.map_or(o.loc, |n| n.loc);
                cx.err(
                    loc,
                    &o.at("container"),
                    format!(
                        "pod `{pod}` has no container named `{container}` (containers: {})",
                        known.join(", ")
                    ),
                );
                return None;
            }
            if bad_code {
                return None;
            }
            Some(Action::ContainerExit {
                pod,
                container,
                exit_code: code.map_or(0, |c| c as i32),
            })
        }
        "updateStaticPod" | "removeStaticPod" | "restoreStaticPod" => {
            let pod = pod_ref(cx, &o, pods)?;
            if pods
                .by_name
                .get(pod.as_str())
                .is_some_and(|d| !d.static_pod)
            {
                let loc = o.get("pod").map_or(o.loc, |n| n.loc);
                cx.err(
                    loc,
                    &o.at("pod"),
                    format!("`{kind}` needs a static pod, and `{pod}` is not `static: true`"),
                );
                return None;
            }
            Some(match kind {
                "updateStaticPod" => Action::UpdateStaticPod { pod },
                "removeStaticPod" => Action::RemoveStaticPod { pod },
                _ => Action::RestoreStaticPod { pod },
            })
        }
        _ => pod_ref(cx, &o, pods).map(|pod| Action::RecreatePod { pod }),
    }
}

fn expect(cx: &mut Cx, n: &Node) -> Option<Expect> {
    let o = obj(
        cx,
        n,
        "spec.expect",
        &["findings", "reach", "old"],
        Unknown::Error,
    )?;
    let findings = invariant_names(cx, o.get("findings"), &o.at("findings"));
    let rp = o.at("reach");
    let mut reach = Vec::new();
    for (i, r) in list(cx, o.get("reach"), &rp).iter().enumerate() {
        let ip = idx(&rp, i);
        if let Some(s) = string(cx, Some(r), &ip) {
            if crate::model::reach::by_name(&s).is_some() {
                reach.push(s);
            } else {
                let names: Vec<&str> = crate::model::reach::REACH.iter().map(|p| p.name).collect();
                let hint = suggest(&s, &names);
                cx.err(r.loc, &ip, format!("unknown reach point `{s}`{hint}"));
            }
        } else if r.kind == Kind::Null {
            expected(cx, r, &ip, "a reach point name");
        }
    }
    let old = o.get("old").and_then(|v| {
        let op = o.at("old");
        let oo = obj(cx, v, &op, &["behaviours", "findings"], Unknown::Error)?;
        let mut behaviours = BTreeMap::new();
        if let Some(b) = oo.get("behaviours") {
            let bp = oo.at("behaviours");
            switch_map(cx, b, &bp, &mut behaviours);
        }
        let findings = invariant_names(cx, oo.get("findings"), &oo.at("findings"));
        Some(ExpectOld {
            behaviours,
            findings,
        })
    });
    Some(Expect {
        findings,
        reach,
        old,
    })
}

/// A list of invariant names (checked against the oracle's table).
fn invariant_names(cx: &mut Cx, n: Option<&Node>, fp: &str) -> Vec<String> {
    let mut findings = Vec::new();
    for (i, f) in list(cx, n, fp).iter().enumerate() {
        let ip = idx(fp, i);
        match string(cx, Some(f), &ip) {
            Some(s) if s.is_empty() => cx.err(f.loc, &ip, "an invariant name must not be empty"),
            Some(s)
                if crate::oracle::invariants::by_name(&s).is_none() && s != "run-limit-reached" =>
            {
                let names: Vec<&str> = crate::oracle::invariants::INVARIANTS
                    .iter()
                    .map(|i| i.name)
                    .collect();
                let hint = suggest(&s, &names);
                cx.err(f.loc, &ip, format!("unknown invariant `{s}`{hint}"));
            }
            Some(s) => findings.push(s),
            None if f.kind == Kind::Null => cx.err(f.loc, &ip, "expected an invariant name"),
            None => {}
        }
    }
    findings
}

// ---------------------------------------------------------------------------------------
// Sweep

/// Renders a parameter value as YAML text usable as a `--set` value.
fn value_text(n: &Node) -> String {
    if let Kind::Str(s) = &n.kind {
        // Plain if it reads back as the same string, else JSON-quoted (valid YAML).
        let reparsed = schema::parse(s).ok().map(|r| r.kind);
        if reparsed == Some(Kind::Str(s.clone())) && !s.contains(['\n', '#']) {
            return s.clone();
        }
    }
    let mut out = String::new();
    n.canonical_json(&mut out);
    out
}

fn sweep(cx: &mut Cx, root: &Node, source: &str, base_dir: &Path) -> Option<SweepFile> {
    let hash = hash_of(root);
    let top = kind_check(cx, root, &["Sweep"])?;
    let (name, description) = metadata(cx, &top);
    let spec_node = top.req(cx, "spec")?;
    let fields = ["scenario", "seeds", "profiles", "parameters"];
    let spec = obj(cx, spec_node, "spec", &fields, Unknown::Error)?;
    let seeds = int(cx, spec.get("seeds"), "spec.seeds", 1, u64::MAX.into())
        .map_or(defaults::SWEEP_SEEDS, |s| s as u64);
    let mut profiles = Vec::new();
    for (i, p) in list(cx, spec.get("profiles"), "spec.profiles")
        .iter()
        .enumerate()
    {
        let pp = idx("spec.profiles", i);
        if let Some(k) = one_of(cx, Some(p), &pp, &defaults::PROFILES) {
            let prof = defaults::PROFILES[k].to_owned();
            if profiles.contains(&prof) {
                cx.err(p.loc, &pp, format!("profile `{prof}` is listed twice"));
            } else {
                profiles.push(prof);
            }
        } else if p.kind == Kind::Null {
            expected(cx, p, &pp, "a profile name");
        }
    }
    // Parameters: (path, values, value nodes).
    // (index in spec.parameters, parameter, parsed path, value nodes)
    type Param<'n> = (usize, SweepParameter, Vec<overrides::Seg>, &'n [Node]);
    let mut params: Vec<Param> = Vec::new();
    let mut seen_paths = BTreeSet::new();
    for (i, item) in list(cx, spec.get("parameters"), "spec.parameters")
        .iter()
        .enumerate()
    {
        let ip = idx("spec.parameters", i);
        let Some(o) = obj(cx, item, &ip, &["path", "values"], Unknown::Error) else {
            continue;
        };
        let pn = o.req(cx, "path");
        let path = string(cx, pn, &o.at("path"));
        let vn = o.req(cx, "values");
        let values = list(cx, vn, &o.at("values"));
        if let Some(vn) = vn {
            if values.is_empty() && matches!(vn.kind, Kind::Seq(_)) {
                cx.err(vn.loc, &o.at("values"), "needs at least one value");
            }
        }
        let (Some(path), Some(pn)) = (path, pn) else {
            continue;
        };
        let segs = match overrides::parse_path(&path) {
            Ok(s) => s,
            Err(m) => {
                cx.err(pn.loc, &o.at("path"), m);
                continue;
            }
        };
        if !seen_paths.insert(path.clone()) {
            cx.err(pn.loc, &o.at("path"), format!("`{path}` is swept twice"));
            continue;
        }
        let texts = values.iter().map(value_text).collect();
        params.push((
            i,
            SweepParameter {
                path,
                values: texts,
            },
            segs,
            values,
        ));
    }
    // The scenario: must exist, validate, and validate with every parameter value.
    let sn = spec.req(cx, "scenario")?;
    let rel = string(cx, Some(sn), "spec.scenario")?;
    let scenario_path = base_dir.join(&rel);
    let spath = scenario_path.display().to_string();
    let text = match std::fs::read_to_string(&scenario_path) {
        Ok(t) => t,
        Err(e) => {
            cx.err(
                sn.loc,
                "spec.scenario",
                format!("cannot read `{spath}`: {e}"),
            );
            return None;
        }
    };
    let sroot = match parse_root(&spath, &text) {
        Ok(r) => r,
        Err(e) => {
            cx.problems.extend(e.problems);
            cx.err(
                sn.loc,
                "spec.scenario",
                "the scenario file is invalid (see above)",
            );
            return None;
        }
    };
    let mut scx = Cx::new(&spath);
    let base = scenario(&mut scx, &sroot, &spath);
    let notes = match scx.finish(base) {
        Ok((s, notes)) => Some((s, notes)),
        Err(e) => {
            let n = e.problems.len();
            cx.problems.extend(e.problems);
            cx.err(
                sn.loc,
                "spec.scenario",
                format!(
                    "the scenario has {n} problem{} (listed with its file name)",
                    if n == 1 { "" } else { "s" }
                ),
            );
            None
        }
    };
    let (base, base_notes) = notes?;
    for (pi, param, segs, nodes) in &params {
        for (k, vnode) in nodes.iter().enumerate() {
            let mut tree = sroot.clone();
            let mut v = vnode.clone();
            v.relocate(Loc::Set(0));
            let vp = format!("spec.parameters[{pi}].values[{k}]");
            if let Err(m) = overrides::apply(&mut tree, segs, v, Loc::Set(0)) {
                cx.err(vnode.loc, &vp, m);
                break;
            }
            let mut pcx = Cx::new(&spath);
            pcx.sets.push(format!("--set {}", param.path));
            scenario(&mut pcx, &tree, &spath);
            if let Some(first) = pcx.problems.first() {
                cx.err(
                    vnode.loc,
                    &vp,
                    format!(
                        "with this value the scenario is invalid: {}: {}",
                        first.path, first.message
                    ),
                );
            }
        }
    }
    Some(SweepFile {
        name,
        description,
        source: source.to_owned(),
        hash,
        scenario_path,
        scenario: base,
        seeds,
        profiles,
        parameters: params.into_iter().map(|p| p.1).collect(),
        notes: base_notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ProbeOutcome;

    const MIN: &str = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: m}\nspec:\n  pods:\n    - template: {metadata: {name: web}, spec: {containers: [{name: app}]}}\n";

    fn with(extra: &str) -> Result<Loaded, LoadError> {
        load_str("m.yaml", &format!("{MIN}{extra}"), &[])
    }

    fn problems(extra: &str) -> Vec<String> {
        match with(extra) {
            Ok(_) => Vec::new(),
            Err(e) => e
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.path, p.message))
                .collect(),
        }
    }

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
        assert_eq!(pod.spec.namespace, "default");
        assert_eq!(pod.spec.termination_grace_period_seconds, Some(30));
        assert_eq!(pod.spec.restart_policy, RestartPolicy::Always);
        assert_eq!(pod.behaviour["app"], Behaviour::default());
        assert!(s.timeline.is_empty());
        assert_eq!(s.expect, None);
        assert_eq!(s.hash.len(), 16);
    }

    #[test]
    fn distributions() {
        let lat = |d: &str| format!("  runtime: {{latencies: {{podStatus: {d}}}}}\n");
        let get = |d: &str| with(&lat(d)).unwrap().scenario.runtime.latencies[&CriCall::PodStatus];
        assert_eq!(get("{fixed: 0}"), Dist::Fixed(Dur::ZERO));
        assert_eq!(
            get("{uniform: {min: 1ms, max: 1ms}}"),
            Dist::Uniform {
                min: Dur::millis(1),
                max: Dur::millis(1)
            }
        );
        assert_eq!(
            get("{exponential: {mean: 1s}}"),
            Dist::Exponential { mean: Dur::secs(1) }
        );
        assert_eq!(
            get("{lognormal: {median: 1s, p99: 1m}}"),
            Dist::LogNormal {
                median: Dur::secs(1),
                p99: Dur::secs(60)
            }
        );
        let p = "spec.runtime.latencies.podStatus";
        assert_eq!(
            problems(&lat("{fixed: 1s, exponential: {mean: 1s}}")),
            [format!("{p}.exponential: a distribution takes exactly one of fixed, uniform, exponential, lognormal; this one already has `fixed`")]
        );
        assert_eq!(problems(&lat("{}")).len(), 1);
        assert_eq!(problems(&lat("5ms")).len(), 1);
        assert_eq!(
            problems(&lat("{normal: 1s}")),
            [format!("{p}.normal: unknown field `normal`; expected one of: fixed, uniform, exponential, lognormal")]
        );
        assert_eq!(
            problems(&lat("{uniform: {min: 2s}}")),
            [format!("{p}.uniform.max: missing required field `max`")]
        );
        assert_eq!(
            problems(&lat("{lognormal: {median: 2s, p99: 1s}}")),
            [
                format!("{p}.lognormal.p99: p99 (2s) must not be less than median (2s)")
                    .replace("p99 (2s)", "p99 (1s)")
            ]
        );
    }

    #[test]
    fn behaviour_and_probabilities() {
        let s = with("      replicas: 2\n      behaviour:\n        app:\n          runFor: 30s\n          exitCode: 3\n          onSigterm: ignore\n          memoryUsage: 1Gi\n          imagePullFailureRatio: 0.25\n          probes: {liveness: {failBetween: [1m, 2m]}, readiness: {failureRatio: 1}, startup: {succeed: false}}\n  runtime:\n    faults: [{call: pullImage, probability: 0.000001}]\n")
            .unwrap()
            .scenario;
        assert_eq!(s.pods.len(), 2);
        assert_eq!(s.pods[1].spec.name, "web-1");
        let b = &s.pods[1].behaviour["app"];
        assert_eq!(b.run_for, RunFor::For(Dur::secs(30)));
        assert_eq!(b.exit_code, 3);
        assert_eq!(b.on_sigterm, OnSigterm::Ignore);
        assert_eq!(b.memory_usage_bytes, 1 << 30);
        assert_eq!(b.image_pull_failure_ppm, 250_000);
        assert_eq!(
            b.liveness,
            ProbeOutcome::FailBetween(Dur::secs(60), Dur::secs(120))
        );
        assert_eq!(b.readiness, ProbeOutcome::FailureRatio(1_000_000));
        assert_eq!(b.startup, ProbeOutcome::Always(false));
        assert_eq!(s.runtime.faults[0].probability_ppm, 1);
        assert_eq!(s.runtime.faults[0].error, CriError::Unknown);
        let s = with("      behaviour: {app: {onSigterm: {exitAfter: 2s}}}\n")
            .unwrap()
            .scenario;
        assert_eq!(
            s.pods[0].behaviour["app"].on_sigterm,
            OnSigterm::ExitAfter {
                after: Dur::secs(2),
                exit_code: 0
            }
        );
    }

    #[test]
    fn replica_names_must_be_unique() {
        let e = problems("      replicas: 2\n    - template: {metadata: {name: web-1}, spec: {containers: [{name: app}]}}\n");
        assert_eq!(
            e,
            ["spec.pods[1].template.metadata.name: pod name `web-1` is already used by spec.pods[0]"]
        );
        assert_eq!(
            problems("      replicas: 0\n"),
            ["spec.pods[0].replicas: must be at least 1, found 0"]
        );
    }

    #[test]
    fn timeline_is_sorted_stably() {
        let s = with("  timeline:\n    - {at: 2s, forceDeletePod: {pod: web}}\n    - {at: 1s, deletePod: {pod: web, gracePeriodSeconds: 0}}\n    - {at: 2s, containerExit: {pod: web, container: app, exitCode: 1}}\n")
            .unwrap()
            .scenario;
        let kinds: Vec<(u64, &str)> = s
            .timeline
            .iter()
            .map(|t| {
                let k = match &t.action {
                    Action::DeletePod { .. } => "delete",
                    Action::ForceDeletePod { .. } => "force",
                    Action::ContainerExit { .. } => "exit",
                    _ => "other",
                };
                (t.at.whole_secs(), k)
            })
            .collect();
        assert_eq!(kinds, [(1, "delete"), (2, "force"), (2, "exit")]);
        assert_eq!(
            problems("  timeline: [{at: 1s, containerExit: {pod: web, container: side}}]\n"),
            ["spec.timeline[0].containerExit.container: pod `web` has no container named `side` (containers: app)"]
        );
        assert_eq!(
            problems("  timeline: [{at: 1s, deletePod: {pod: web, gracePeriodSeconds: -1}}]\n"),
            ["spec.timeline[0].deletePod.gracePeriodSeconds: must be at least 0, found -1"]
        );
    }

    #[test]
    fn behaviour_switches_are_checked_and_unknown_profiles_rejected() {
        let e = problems("  kubelet:\n    profile: v1.22\n    behaviours: {stopProbesAtTermnation: true, podWorkerOwnsLifecycle: 1}\n");
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(
            e[0].contains("unknown behaviour switch `stopProbesAtTermnation`; did you mean `stopProbesAtTermination`?"),
            "{e:#?}"
        );
        assert!(e[1].contains("expected `true` or `false`"), "{e:#?}");
        if let Some(s) = crate::kubelet::profile::SWITCHES.iter().find(|s| !s.built) {
            let e = problems(&format!(
                "  kubelet:\n    behaviours: {{{}: false}}\n",
                s.name
            ));
            assert!(e[0].contains("is not built yet"), "{e:#?}");
        }
        let e = problems(
            "  kubelet:\n    profile: v1.23\n    config: {evictionSoft: {memory.avail: 1Mi}}\n",
        );
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e[0].contains("unknown value `v1.23`"), "{e:#?}");
        assert!(e[1].contains("unknown field `memory.avail`"), "{e:#?}");
    }

    #[test]
    fn shutdown_grace_periods() {
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriod: 10s, shutdownGracePeriodCriticalPods: 20s}\n"),
            ["spec.kubelet.config.shutdownGracePeriodCriticalPods: must not be greater than `shutdownGracePeriod`"]
        );
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriod: 30s, shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: 2}]}\n"),
            ["spec.kubelet.config.shutdownGracePeriodByPodPriority: cannot be set together with `shutdownGracePeriod` or `shutdownGracePeriodCriticalPods`"]
        );
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: 2}]}\n  timeline: [{at: 1s, nodeShutdown: {}}]\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn soft_thresholds_need_a_grace_period() {
        let e = problems("  kubelet:\n    config: {evictionSoft: {memory.available: 1Gi}}\n");
        assert_eq!(
            e,
            ["spec.kubelet.config.evictionSoft.memory.available: a soft eviction threshold needs a grace period: set `evictionSoftGracePeriod` for `memory.available`"]
        );
    }

    #[test]
    fn kinds_and_names() {
        let e = load_str("x.yaml", "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {name: \"\"}\nspec: {pods: [{template: {metadata: {name: a}, spec: {containers: [{name: c}]}}}]}\n", &[]).unwrap_err();
        assert_eq!(e.problems.len(), 2, "{e}");
        assert_eq!(e.problems[0].path, "kind");
        assert_eq!(e.problems[1].path, "metadata.name");
        let e = load_str("x.yaml", "", &[]).unwrap_err();
        assert_eq!(e.problems.len(), 4, "{e}"); // apiVersion, kind, metadata, spec
        let e = load_str("x.yaml", "[1, 2]", &[]).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
    }

    #[test]
    fn sweep_file() {
        let dir = std::env::temp_dir().join(format!("podsim-sweep-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s.yaml"), MIN).unwrap();
        let sweep = |spec: &str| {
            load_sweep_str(
                "sw.yaml",
                &format!("apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {{name: sw}}\nspec:\n{spec}"),
                &dir,
            )
        };
        let s = sweep("  scenario: s.yaml\n  seeds: 10\n  profiles: [current]\n  parameters:\n    - path: spec.runtime.latencies.stopContainer.fixed\n      values: [100ms, 1s]\n    - path: spec.api.watchDelay\n      values: [{fixed: 1s}]\n").unwrap();
        assert_eq!(s.seeds, 10);
        assert_eq!(s.scenario.name, "m");
        assert_eq!(s.parameters[0].values, ["100ms", "1s"]);
        assert_eq!(s.parameters[1].values, [r#"{"fixed":"1s"}"#]);
        let e = sweep("  scenario: s.yaml\n  seeds: 0\n  profiles: [v1.99]\n  parameters:\n    - path: spec.horizon\n      values: [10s, -1s]\n").unwrap_err();
        let paths: Vec<&str> = e.problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.seeds",
                "spec.profiles[0]",
                "spec.parameters[0].values[1]"
            ],
            "{e}"
        );
        let e = sweep("  scenario: nope.yaml\n").unwrap_err();
        assert_eq!(e.problems[0].path, "spec.scenario");
        std::fs::write(dir.join("bad.yaml"), MIN.replace("name: m", "name: M")).unwrap();
        let e = sweep("  scenario: bad.yaml\n").unwrap_err();
        assert_eq!(e.problems.len(), 2, "{e}");
        // check_file dispatches on `kind`.
        assert_eq!(check_file(&dir.join("s.yaml")), Ok(Vec::new()));
        let sw = "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {name: sw}\nspec: {scenario: s.yaml}\n";
        std::fs::write(dir.join("sw.yaml"), sw).unwrap();
        assert_eq!(check_file(&dir.join("sw.yaml")), Ok(Vec::new()));
        std::fs::write(dir.join("k.yaml"), sw.replace("Sweep", "Sweeps")).unwrap();
        let e = check_file(&dir.join("k.yaml")).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
        assert_eq!(
            (e.problems[0].path.as_str(), e.problems[0].line),
            ("kind", 2)
        );
        assert!(check_file(&dir.join("missing.yaml")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
