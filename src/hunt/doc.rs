//! A scenario as a plain document tree (a `serde_json::Value`), for code that edits
//! scenarios rather than runs them: `hunt` mutates them, `shrink` cuts them down, and both
//! write the result back as an ordinary scenario file ([`Doc::to_yaml`]). [`Doc::run`] is
//! the one place an edited document becomes a run (with the coverage `hunt` reads).
//!
//! A document is loaded through the normal loader first (so a bad file or `--set` is the
//! usual error, with file, field path and line:column), then parsed into the tree with the
//! `--set` overrides applied by the same code the loader uses. A tree is checked and run
//! by handing its text to [`crate::load_str`] and [`crate::run::run`]: an edited document
//! that does not validate is simply not a scenario.
//!
//! Below [`Doc`]: small helpers to address, create, remove and list parts of the tree by
//! path, and to read and write Go duration text.

use super::coverage::Observer;
use crate::run::{RunOptions, RunOutput};
use crate::scenario::schema::{self, Kind, Loc, Node};
use crate::scenario::Scenario;
use crate::scenario::{overrides, LoadError, Loaded, Problem};
use serde_json::{Map, Number, Value};
use std::path::Path;
use std::sync::Arc;

/// A scenario document: its tree and the name it is known by in messages.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Doc {
    /// The document (after `--set` overrides).
    pub(crate) tree: Value,
    /// The file it came from, as given (`Scenario::source` and messages).
    pub(crate) source: String,
}

impl Doc {
    /// Loads and validates the scenario file at `path` with the `--set` overrides `sets`
    /// (`(PATH, VALUE)`, as [`crate::load`] takes them) applied.
    pub(crate) fn load(path: &Path, sets: &[(String, String)]) -> Result<Doc, LoadError> {
        // The loader's errors (reading, syntax, schema, overrides) come first.
        crate::load(path, sets)?;
        let name = crate::scenario::file::display_name(path);
        let bytes =
            crate::scenario::file::read_capped_bytes(path, crate::scenario::file::MAX_INPUT_BYTES)
                .map_err(|e| problem(&name, "", format!("cannot read file: {e}")))?;
        let text =
            crate::scenario::encoding::decode(&bytes).map_err(|b| problem(&name, "", b.message))?;
        Doc::from_text(&name, &text, sets)
    }

    /// [`Doc::load`] from text; `source` names it in messages.
    pub(crate) fn from_text(
        source: &str,
        text: &str,
        sets: &[(String, String)],
    ) -> Result<Doc, LoadError> {
        crate::load_str(source, text, sets)?;
        let mut root = schema::parse(text)
            .map_err(|e| problem(source, "", format!("invalid YAML: {}", e.message)))?;
        for (i, (path, value)) in sets.iter().enumerate() {
            let loc = Loc::Set(i as u32);
            overrides::parse_path(path)
                .and_then(|segs| {
                    let v = overrides::parse_value(value, loc)?;
                    overrides::apply(&mut root, &segs, v, loc)
                })
                .map_err(|m| problem(source, path, m))?;
        }
        let tree = node_to_value(&root).map_err(|(path, m)| problem(source, &path, m))?;
        Ok(Doc {
            tree,
            source: source.to_owned(),
        })
    }

    /// A document from a tree (not checked: see [`Doc::validate`]).
    pub(crate) fn new(source: &str, tree: Value) -> Doc {
        Doc {
            tree,
            source: source.to_owned(),
        }
    }

    /// The document as readable block-style YAML.
    pub(crate) fn to_yaml(&self) -> String {
        super::yaml::to_yaml(&self.tree)
    }

    /// The document validated into a scenario (JSON text is YAML: the loader reads it).
    pub(crate) fn validate(&self) -> Result<Loaded, LoadError> {
        crate::load_str(&self.source, &self.tree.to_string(), &[])
    }

    /// One run of the document on `seed`; `replay` is the line its findings carry. `Err`:
    /// the document does not validate (for `hunt`, a mutation made it invalid).
    pub(crate) fn run(&self, seed: u64, replay: &str) -> Result<Ran, LoadError> {
        let sc = Arc::new(self.validate()?.scenario);
        let opts = RunOptions {
            seed,
            keep_trace: false,
            replay: replay.to_owned(),
            no_oracle: false,
            history: crate::run::FindingHistory::Rerun,
        };
        let mut obs = Observer::default();
        let out = crate::run::run_typed(sc.clone(), &opts, &mut |b| obs.see(b));
        Ok(Ran { sc, out, obs })
    }
}

/// One finished run of a document: the validated scenario, the run's output, and the
/// coverage read from its typed transitions.
pub(crate) struct Ran {
    pub(crate) sc: Arc<Scenario>,
    pub(crate) out: RunOutput,
    pub(crate) obs: Observer,
}

fn problem(file: &str, path: &str, message: String) -> LoadError {
    LoadError::single(Problem {
        file: file.to_owned(),
        line: 0,
        col: 0,
        path: path.to_owned(),
        message,
    })
}

/// The loose YAML tree as a JSON value; the error is (field path, message) for a number
/// JSON cannot hold (an integer beyond 64 bits, a float that is not finite).
pub(crate) fn node_to_value(n: &Node) -> Result<Value, (String, String)> {
    to_value(n, "")
}

fn to_value(n: &Node, path: &str) -> Result<Value, (String, String)> {
    let bad = |what: &str| Err((path.to_owned(), format!("{what} cannot be written back")));
    Ok(match &n.kind {
        Kind::Null => Value::Null,
        Kind::Bool(b) => Value::Bool(*b),
        Kind::Int(i) => match (i64::try_from(*i), u64::try_from(*i)) {
            (Ok(v), _) => Value::Number(v.into()),
            (_, Ok(v)) => Value::Number(v.into()),
            _ => return bad("an integer beyond 64 bits"),
        },
        Kind::Float(f) => match Number::from_f64(*f) {
            Some(num) => Value::Number(num),
            None => return bad("a number that is not finite"),
        },
        Kind::Str(s) => Value::String(s.clone()),
        Kind::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                out.push(to_value(item, &format!("{path}[{i}]"))?);
            }
            Value::Array(out)
        }
        Kind::Map(entries) => {
            let mut out = Map::new();
            for (k, v) in entries {
                let p = if path.is_empty() {
                    k.name.clone()
                } else {
                    format!("{path}.{}", k.name)
                };
                out.insert(k.name.clone(), to_value(v, &p)?);
            }
            Value::Object(out)
        }
    })
}

/// A millisecond and a second in nanoseconds.
pub(crate) const MS: u64 = 1_000_000;
pub(crate) const SECOND: u64 = 1_000 * MS;

// ---------------------------------------------------------------------------------------
// Tree helpers (for the code that edits documents)

/// One step of a path in the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Idx(usize),
}

pub(crate) fn keys(path: &[&str]) -> Vec<Seg> {
    path.iter().map(|k| Seg::Key((*k).to_owned())).collect()
}

pub(crate) fn at_mut<'v>(v: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    path.iter().try_fold(v, |cur, seg| match seg {
        Seg::Key(k) => cur.get_mut(k.as_str()),
        Seg::Idx(i) => cur.get_mut(*i),
    })
}

pub(crate) fn at<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |cur, seg| match seg {
        Seg::Key(k) => cur.get(k.as_str()),
        Seg::Idx(i) => cur.get(*i),
    })
}

/// Removes the key at the end of `path`; whether there was one.
pub(crate) fn remove_at(v: &mut Value, path: &[Seg]) -> bool {
    let Some((Seg::Key(last), parent)) = path.split_last() else {
        return false;
    };
    at_mut(v, parent)
        .and_then(Value::as_object_mut)
        .is_some_and(|m| m.remove(last).is_some())
}

pub(crate) fn remove(v: &mut Value, path: &[&str]) -> bool {
    remove_at(v, &keys(path))
}

pub(crate) fn list_len(v: &Value, path: &[Seg]) -> usize {
    at(v, path).and_then(Value::as_array).map_or(0, Vec::len)
}

/// Removes the items `idx` (sorted) of the list at `path`.
pub(crate) fn remove_items(v: &mut Value, path: &[Seg], idx: &[usize]) {
    if let Some(a) = at_mut(v, path).and_then(Value::as_array_mut) {
        let mut i = 0;
        a.retain(|_| {
            let keep = !idx.contains(&i);
            i += 1;
            keep
        });
    }
}

/// The pod (and container) a timeline entry's action names.
pub(crate) fn action_target(item: &Value) -> Option<(&str, Option<&str>)> {
    let m = item.as_object()?;
    m.iter().filter(|(k, _)| *k != "at").find_map(|(_, body)| {
        let pod = body.get("pod")?.as_str()?;
        Some((pod, body.get("container").and_then(Value::as_str)))
    })
}

/// Removes the timeline entries whose action `hits` (pod, container).
pub(crate) fn drop_actions(v: &mut Value, hits: impl Fn(&str, Option<&str>) -> bool) {
    if let Some(a) = v
        .get_mut("spec")
        .and_then(|s| s.get_mut("timeline"))
        .and_then(Value::as_array_mut)
    {
        a.retain(|item| !action_target(item).is_some_and(|(p, c)| hits(p, c)));
    }
}

/// Go duration text for `ns`, in the largest unit that is exact.
pub(crate) fn fmt_dur(ns: u64) -> String {
    const MINUTE: u64 = 60 * SECOND;
    match ns {
        0 => "0s".to_owned(),
        n if n % MINUTE == 0 => format!("{}m", n / MINUTE),
        n if n % SECOND == 0 => format!("{}s", n / SECOND),
        n if n % MS == 0 => format!("{}ms", n / MS),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// A duration field's value in nanoseconds (Go duration text, or the number 0).
pub(crate) fn dur_of(v: Option<&Value>) -> Option<u64> {
    match v? {
        Value::String(s) => crate::scenario::duration::parse_go_duration(s)
            .ok()
            .and_then(|n| u64::try_from(n).ok()),
        Value::Number(n) if n.as_u64() == Some(0) => Some(0),
        _ => None,
    }
}

/// The tree of a scenario file's text as written (YAML; JSON is YAML too), without
/// validating it.
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

/// The object at `path` under `v`, created (as empty objects) where missing or not an
/// object.
pub(crate) fn obj_at<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Map<String, Value> {
    let mut cur = v;
    for key in path {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        cur = cur
            .as_object_mut()
            .expect("made an object above")
            .entry(key.to_string())
            .or_insert(Value::Null);
    }
    if !cur.is_object() {
        *cur = Value::Object(Map::new());
    }
    cur.as_object_mut().expect("made an object above")
}

/// The list at `path` under `v` (created empty where missing or not a list).
pub(crate) fn list_at<'a>(v: &'a mut Value, path: &[&str]) -> &'a mut Vec<Value> {
    let (last, parent) = path.split_last().expect("a non-empty path");
    let slot = obj_at(v, parent)
        .entry(last.to_string())
        .or_insert(Value::Null);
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    slot.as_array_mut().expect("made a list above")
}

/// The list at `path` under `v`, if there is one.
pub(crate) fn list<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Vec<Value>> {
    at(v, &keys(path)).and_then(Value::as_array)
}

/// `v` milliseconds as a duration value.
pub(crate) fn ms(v: u64) -> Value {
    Value::String(format!("{v}ms"))
}

/// The value of YAML flow text (`{fixed: 10ms}`).
pub(crate) fn flow(text: &str) -> Value {
    serde_saphyr::from_str::<Value>(text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bundled scenario, loaded into a tree, written as YAML and loaded again, is the
    /// same validated scenario (same content hash, same fields) as the file itself.
    #[test]
    fn every_bundled_scenario_round_trips_through_the_writer() {
        let mut checked = 0;
        for f in &crate::run::tests::scenario_files() {
            let direct = crate::load(f, &[]).unwrap().scenario;
            let doc = Doc::load(f, &[]).unwrap();
            let yaml = doc.to_yaml();
            let again = crate::load_str(&doc.source, &yaml, &[])
                .unwrap_or_else(|e| panic!("{}: {e}\n{yaml}", f.display()));
            assert_eq!(again.scenario, direct, "{}:\n{yaml}", f.display());
            assert_eq!(doc.validate().unwrap().scenario, direct, "{}", f.display());
            checked += 1;
        }
        assert!(checked >= 40, "only {checked} scenarios found");
    }

    #[test]
    fn overrides_are_applied_to_the_tree() {
        let f = Path::new("scenarios/races/pod-worker-owns-lifecycle.yaml");
        let sets = [
            ("spec.kubelet.profile".to_owned(), "v1.21".to_owned()),
            ("spec.pods[0].replicas".to_owned(), "6".to_owned()),
        ];
        let doc = Doc::load(f, &sets).unwrap();
        assert_eq!(doc.tree["spec"]["kubelet"]["profile"], "v1.21");
        assert_eq!(doc.tree["spec"]["pods"][0]["replicas"], 6);
        let direct = crate::load(f, &sets).unwrap().scenario;
        assert_eq!(doc.validate().unwrap().scenario, direct);
        let a = doc.run(1, "r").unwrap().out;
        let b = crate::run::run(
            Arc::new(direct),
            &RunOptions {
                seed: 1,
                keep_trace: false,
                replay: "r".into(),
                no_oracle: false,
                history: crate::run::FindingHistory::Rerun,
            },
        );
        assert_eq!(a.trace_hash, b.trace_hash);
    }

    #[test]
    fn helpers_create_what_is_missing_and_read_durations() {
        let mut v = parse("spec: {horizon: 1m}\n").expect("yaml");
        obj_at(&mut v, &["spec", "api"]).insert("watchDelay".into(), flow("{fixed: 5ms}"));
        list_at(&mut v, &["spec", "timeline"]).push(flow("{at: 1s, nodeShutdown: {}}"));
        assert_eq!(
            serde_json::to_string(&v).expect("json"),
            r#"{"spec":{"api":{"watchDelay":{"fixed":"5ms"}},"horizon":"1m","timeline":[{"at":"1s","nodeShutdown":{}}]}}"#
        );
        assert_eq!(
            dur_of(Some(&Value::String("1m30s".into()))),
            Some(90 * SECOND)
        );
        assert_eq!(dur_of(Some(&serde_json::json!(0))), Some(0));
        assert_eq!(dur_of(Some(&Value::String("x".into()))), None);
        assert_eq!(list(&v, &["spec", "timeline"]).map(Vec::len), Some(1));
    }

    #[test]
    fn a_bad_override_is_the_loader_error() {
        let f = Path::new("scenarios/quickstart.yaml");
        let e = Doc::load(f, &[("spec.horizon".into(), "soon".into())]).unwrap_err();
        assert!(e.to_string().contains("spec.horizon"), "{e}");
    }
}
