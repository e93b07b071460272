//! A YAML writer for scenario documents: block style for the document's sections, flow
//! style (`{at: 1s, deletePod: {pod: web-0}}`) for short mappings and lists, as the bundled
//! scenarios are written; strings quoted only where YAML would read them as something
//! else; a long description as a folded (`>`) block.
//!
//! Keys come in a fixed order (the tree does not keep the order they were written in):
//! `apiVersion, kind, metadata, spec`; inside `spec`: `horizon, node, kubelet, runtime,
//! api, pods, timeline, expect`, then the rest alphabetically; elsewhere a short list of
//! keys that read best first (`name`, `image`, `at`, `pod` ...), then the rest
//! alphabetically.

use crate::scenario::schema::{self, Kind};
use serde_json::{Map, Value};

/// Lines are kept within this many columns where the content allows.
const WIDTH: usize = 92;

const TOP_ORDER: [&str; 4] = ["apiVersion", "kind", "metadata", "spec"];
const SPEC_ORDER: [&str; 8] = [
    "horizon", "node", "kubelet", "runtime", "api", "pods", "timeline", "expect",
];
/// Keys that come first wherever they appear, in this order.
const FIRST: [&str; 22] = [
    "name",
    "namespace",
    "image",
    "description",
    "replicas",
    "static",
    "createAt",
    "template",
    "behaviour",
    "metadata",
    "spec",
    "at",
    "pod",
    "container",
    "call",
    "profile",
    "behaviours",
    "min",
    "max",
    "median",
    "p99",
    "findings",
];

/// Where a node sits, for the key order and the block-or-flow choice.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// The document itself.
    Root,
    /// `metadata` or `spec` at the top.
    Section,
    /// A direct child of `spec` (`kubelet`, `pods` ...).
    SpecChild,
    /// An entry of `spec.pods`.
    PodDecl,
    /// `template`, its `spec`, or `behaviour` inside a pod declaration.
    PodPart,
    Other,
}

/// The document as YAML text (ending with a newline).
pub(super) fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    match v {
        Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0, Place::Root),
        other => {
            out.push_str(&flow(other));
            out.push('\n');
        }
    }
    out
}

fn ordered(m: &Map<String, Value>, place: Place) -> Vec<(&String, &Value)> {
    let list: &[&str] = match place {
        Place::Root => &TOP_ORDER,
        Place::Section => &SPEC_ORDER,
        _ => &FIRST,
    };
    let mut v: Vec<(&String, &Value)> = m.iter().collect();
    // Keys not in `list` follow the general order (`metadata` is a section too).
    v.sort_by_key(|(k, _)| {
        let rank = list
            .iter()
            .position(|f| f == k)
            .or_else(|| FIRST.iter().position(|f| f == k).map(|p| p + list.len()))
            .unwrap_or(usize::MAX);
        (rank, k.as_str())
    });
    v
}

/// The place of `key`'s value inside a mapping at `place`.
fn child_place(place: Place, key: &str) -> Place {
    match (place, key) {
        (Place::Root, "metadata" | "spec") => Place::Section,
        (Place::Section, _) => Place::SpecChild,
        (Place::PodDecl, "template" | "behaviour") | (Place::PodPart, "spec") => Place::PodPart,
        _ => Place::Other,
    }
}

/// Whether a collection at `place` is always written in block style (when not empty).
fn forced_block(place: Place) -> bool {
    !matches!(place, Place::Other)
}

fn is_collection(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// Whether a collection may be written in flow style at all: a mapping, a list of scalars,
/// or a list of one item (a list of several mappings reads better one per line).
fn flow_shape(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.len() <= 1 || a.iter().all(|x| !is_collection(x)),
        _ => true,
    }
}

fn write_map(out: &mut String, m: &Map<String, Value>, indent: usize, place: Place) {
    let pad = " ".repeat(indent);
    for (k, v) in ordered(m, place) {
        let key = scalar_text(k, false);
        out.push_str(&pad);
        out.push_str(&key);
        out.push(':');
        let cp = child_place(place, k);
        let used = indent + key.len() + 2;
        match v {
            Value::String(s) if used + s.len() > WIDTH || s.contains('\n') => {
                if let Some(block) = folded(s, indent + 2) {
                    out.push_str(&block);
                    continue;
                }
                out.push(' ');
                out.push_str(&scalar_text(s, false));
                out.push('\n');
            }
            v if !is_collection(v) => {
                out.push(' ');
                out.push_str(&flow(v));
                out.push('\n');
            }
            v => {
                let f = flow(v);
                if !forced_block(cp) && flow_shape(v) && used + f.len() <= WIDTH {
                    out.push(' ');
                    out.push_str(&f);
                    out.push('\n');
                } else {
                    out.push('\n');
                    write_block(out, v, indent + 2, cp);
                }
            }
        }
    }
}

fn write_block(out: &mut String, v: &Value, indent: usize, place: Place) {
    match v {
        Value::Object(m) => write_map(out, m, indent, place),
        Value::Array(a) => write_seq(out, a, indent, place),
        other => {
            out.push_str(&" ".repeat(indent));
            out.push_str(&flow(other));
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], indent: usize, place: Place) {
    let pad = " ".repeat(indent);
    let item_place = match place {
        Place::SpecChild if items.iter().any(|i| i.get("template").is_some()) => Place::PodDecl,
        _ => Place::Other,
    };
    for item in items {
        out.push_str(&pad);
        out.push('-');
        let f = flow(item);
        if !is_collection(item)
            || (!forced_block(item_place) && flow_shape(item) && indent + 2 + f.len() <= WIDTH)
        {
            out.push(' ');
            out.push_str(&f);
            out.push('\n');
            continue;
        }
        match item {
            Value::Object(m) => {
                // The first key goes on the dash's line.
                let mut inner = String::new();
                write_map(&mut inner, m, indent + 2, item_place);
                out.push(' ');
                out.push_str(&inner[indent + 2..]);
            }
            other => {
                out.push('\n');
                write_block(out, other, indent + 2, Place::Other);
            }
        }
    }
}

/// A value in flow style.
fn flow(v: &Value) -> String {
    match v {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => scalar_text(s, true),
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(m) => {
            let items: Vec<String> = ordered(m, Place::Other)
                .into_iter()
                .map(|(k, v)| format!("{}: {}", scalar_text(k, true), flow(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

fn number(n: &serde_json::Number) -> String {
    match n.as_f64() {
        // `{:?}` keeps a decimal point or an exponent: 1.0 stays a float.
        Some(f) if n.is_f64() => format!("{f:?}"),
        _ => n.to_string(),
    }
}

/// A string as a YAML scalar: plain when YAML reads it back as the same string, else
/// double-quoted (JSON's escapes are YAML's).
fn scalar_text(s: &str, in_flow: bool) -> String {
    if plain_ok(s, in_flow) {
        s.to_owned()
    } else {
        Value::String(s.to_owned()).to_string()
    }
}

fn plain_ok(s: &str, in_flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let bad_char = |c: char| c.is_control() || (in_flow && ",[]{}".contains(c));
    if "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || first.is_whitespace()
        || s.ends_with(char::is_whitespace)
        || s.ends_with(':')
        || s.contains(": ")
        || s.contains(" #")
        || s.chars().any(bad_char)
    {
        return false;
    }
    // What remains is plain unless YAML resolves it to another type (`8`, `true`, `null`,
    // `1e3`, `.inf` ...): ask the parser podsim reads files with.
    matches!(schema::parse(s), Ok(n) if n.kind == Kind::Str(s.to_owned()))
}

/// `s` as a folded block scalar (` >` or ` >-` and the wrapped lines, each at `indent`),
/// when folding gives back exactly `s`: one paragraph of words separated by single spaces,
/// with at most one final newline.
fn folded(s: &str, indent: usize) -> Option<String> {
    let (body, chomp) = match s.strip_suffix('\n') {
        Some(b) => (b, ">"),
        None => (s, ">-"),
    };
    let plain_words = !body.is_empty()
        && !body.starts_with(' ')
        && !body.ends_with(' ')
        && !body.contains("  ")
        && !body.chars().any(|c| c.is_control() || c == '\u{feff}');
    if !plain_words {
        return None;
    }
    let pad = " ".repeat(indent);
    let mut out = format!(" {chomp}\n");
    let mut line = String::new();
    for word in body.split(' ') {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > WIDTH {
            out.push_str(&pad);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(&pad);
    out.push_str(&line);
    out.push('\n');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn back(text: &str) -> Value {
        let node = schema::parse(text).unwrap();
        super::super::doc::node_to_value(&node).unwrap()
    }

    #[test]
    fn scalars_are_quoted_only_when_yaml_needs_it() {
        for (s, plain) in [
            ("web-0", true),
            ("example/web:latest", true),
            ("300ms", true),
            ("8", false),
            ("1.5", false),
            ("true", false),
            ("null", false),
            ("~", false),
            ("", false),
            ("a: b", false),
            ("#x", false),
            ("-x", false),
            ("x #y", false),
            (" x", false),
            ("1e3", false),
            (".inf", false),
            ("no", true),
        ] {
            assert_eq!(plain_ok(s, false), plain, "{s:?}");
        }
        assert!(!plain_ok("a,b", true));
        assert!(plain_ok("a,b", false));
    }

    #[test]
    fn a_document_round_trips_and_reads_like_the_bundled_files() {
        let v = json!({
            "apiVersion": "podsim/v1alpha1",
            "kind": "Scenario",
            "metadata": {"name": "x", "description": "word ".repeat(40).trim_end().to_owned() + "\n"},
            "spec": {
                "timeline": [{"deletePod": {"pod": "web-0"}, "at": "300ms"}, {"at": "1s", "kubeletRestart": {}}],
                "horizon": "1m",
                "node": {"capacity": {"cpu": "8", "memory": "16Gi"}},
                "runtime": {"faults": [{"call": "stopContainer", "probability": 0.05, "error": "X"}]},
                "pods": [{"replicas": 2, "template": {"metadata": {"name": "web"}, "spec": {"containers": [{"name": "app", "image": "a/b:1"}]}}}],
                "expect": {"findings": []},
                "seed": 3,
                "weird": {"a,b": "c: d", "f": 1.0, "n": null, "m": "line1\nline2"}
            }
        });
        let y = to_yaml(&v);
        assert_eq!(back(&y), v, "{y}");
        assert!(y.starts_with("apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata:\n  name: x\n  description: >\n    word word"), "{y}");
        assert!(
            y.contains(
                "\nspec:\n  horizon: 1m\n  node:\n    capacity: {cpu: \"8\", memory: 16Gi}\n"
            ),
            "{y}"
        );
        assert!(y.contains("  timeline:\n    - {at: 300ms, deletePod: {pod: web-0}}\n    - {at: 1s, kubeletRestart: {}}\n"), "{y}");
        assert!(y.contains("  pods:\n    - replicas: 2\n      template:\n        metadata: {name: web}\n        spec:\n          containers: [{name: app, image: a/b:1}]\n"), "{y}");
        assert!(
            y.contains("faults: [{call: stopContainer, error: X, probability: 0.05}]"),
            "{y}"
        );
        assert!(y.contains("expect:\n    findings: []\n"), "{y}");
    }
}
