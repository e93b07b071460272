//! A candidate scenario held as a loose document tree (`serde_json::Value`), the small
//! helpers the mutations edit it with, and the one function that runs a tree.

use super::coverage::Observer;
use crate::run::{RunOptions, RunOutput};
use crate::scenario::Scenario;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The tree of a scenario file's text (YAML; JSON is YAML too).
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    serde_saphyr::from_str::<Value>(text).map_err(|e| e.to_string())
}

/// One finished run of a candidate.
pub(crate) struct Ran {
    pub(crate) sc: Arc<Scenario>,
    pub(crate) out: RunOutput,
    pub(crate) obs: Observer,
}

/// Runs candidate `tree` on `seed`, with the hunt's `--set` overrides applied when it is
/// loaded (as `podsim run --set` would). `None`: the candidate does not validate (a
/// mutation made it invalid), and is discarded.
///
/// The one place a tree becomes a run: to be replaced by the scenario document type of
/// `podsim shrink` when the two are merged.
pub(crate) fn run_tree(
    tree: &Value,
    sets: &[(String, String)],
    seed: u64,
    replay: String,
) -> Option<Ran> {
    let text = serde_json::to_string(tree).ok()?;
    let loaded = crate::load_str("hunt-candidate.yaml", &text, sets).ok()?;
    let sc = Arc::new(loaded.scenario);
    let opts = RunOptions {
        seed,
        keep_trace: false,
        replay,
        no_oracle: false,
    };
    let mut obs = Observer::default();
    let out = crate::run::run_typed(sc.clone(), &opts, &mut |b| obs.see(b));
    Some(Ran { sc, out, obs })
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
    let o = obj_at(v, parent);
    let slot = o.entry(last.to_string()).or_insert(Value::Null);
    if !slot.is_array() {
        *slot = Value::Array(Vec::new());
    }
    slot.as_array_mut().expect("made a list above")
}

/// The list at `path` under `v`, if there is one.
pub(crate) fn list<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Vec<Value>> {
    let mut cur = v;
    for key in path {
        cur = cur.get(key)?;
    }
    cur.as_array()
}

/// A duration field's value in whole milliseconds (a Go duration string, or the number 0).
pub(crate) fn dur_ms(v: &Value) -> Option<u64> {
    match v {
        Value::String(s) => crate::scenario::duration::parse_go_duration(s)
            .ok()
            .and_then(|ns| u64::try_from(ns / 1_000_000).ok()),
        Value::Number(n) if n.as_u64() == Some(0) => Some(0),
        _ => None,
    }
}

/// `v` milliseconds as a duration value.
pub(crate) fn ms(v: u64) -> Value {
    Value::String(format!("{v}ms"))
}

/// The value of YAML flow text the generator wrote (`{fixed: 10ms}`).
pub(crate) fn flow(text: &str) -> Value {
    parse(text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_create_what_is_missing_and_read_durations() {
        let mut v = parse("spec: {horizon: 1m}\n").expect("yaml");
        obj_at(&mut v, &["spec", "api"]).insert("watchDelay".into(), flow("{fixed: 5ms}"));
        list_at(&mut v, &["spec", "timeline"]).push(flow("{at: 1s, nodeShutdown: {}}"));
        assert_eq!(
            serde_json::to_string(&v).expect("json"),
            r#"{"spec":{"api":{"watchDelay":{"fixed":"5ms"}},"horizon":"1m","timeline":[{"at":"1s","nodeShutdown":{}}]}}"#
        );
        assert_eq!(dur_ms(&Value::String("1m30s".into())), Some(90_000));
        assert_eq!(dur_ms(&serde_json::json!(0)), Some(0));
        assert_eq!(dur_ms(&Value::String("x".into())), None);
        assert_eq!(list(&v, &["spec", "timeline"]).map(Vec::len), Some(1));
    }
}
