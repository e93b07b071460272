//! Spellings of an override value (a sweep parameter's value): one YAML text that `--set`
//! reads back ([`flow_yaml`], [`normalize_value`]), and one short label for people
//! ([`value_label`]): `fixed 100ms`, `uniform 10ms..1s`, `exponential mean 1s`,
//! `lognormal median 1s p99 20s`, and plain values as YAML prints them (`3`, `true`,
//! `10s`). A value from a sweep file and the same value given to `--set` get the same
//! spellings, whatever their layout or quoting.

use super::overrides::DIST_KINDS;
use super::schema::{self, Kind, Node};

/// Characters after which (or among which) a plain scalar would not read back as itself in
/// a flow collection.
const FLOW_SPECIAL: &[char] = &[
    ',', '[', ']', '{', '}', '#', ':', '"', '\'', '\n', '\r', '\t', '&', '*', '!', '|', '>', '%',
    '@', '`', '?',
];

/// A string as a YAML scalar: plain when it reads back as the same string, else JSON-quoted
/// (JSON strings are YAML).
fn scalar_str(s: &str) -> String {
    let plain = !s.is_empty()
        && s.trim() == s
        && !s.starts_with('-')
        && !s.contains(FLOW_SPECIAL)
        && !s.chars().any(char::is_control)
        && schema::parse(s).ok().map(|n| n.kind) == Some(Kind::Str(s.to_owned()));
    if plain {
        s.to_owned()
    } else {
        serde_json::Value::String(s.to_owned()).to_string()
    }
}

fn float(f: f64) -> String {
    if f.is_nan() {
        ".nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { ".inf" } else { "-.inf" }.into()
    } else {
        // `{:?}` keeps a decimal point or exponent, so `1.0` stays a float.
        format!("{f:?}")
    }
}

/// The node as one line of flow YAML: `{lognormal: {median: 1s, p99: 20s}}`, `[1, x]`,
/// `10s`; keys in document order. It reads back as the same tree.
pub fn flow_yaml(n: &Node) -> String {
    match &n.kind {
        Kind::Null => "null".into(),
        Kind::Bool(b) => b.to_string(),
        Kind::Int(i) => i.to_string(),
        Kind::Float(f) => float(*f),
        Kind::Str(s) => scalar_str(s),
        Kind::Seq(items) => {
            let items: Vec<String> = items.iter().map(flow_yaml).collect();
            format!("[{}]", items.join(", "))
        }
        Kind::Map(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar_str(&k.name), flow_yaml(v)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
    }
}

/// An override value's text in one spelling ([`flow_yaml`] of its tree); text that does not
/// parse is kept as it is (loading it reports the problem).
pub fn normalize_value(text: &str) -> String {
    match schema::parse(text) {
        Ok(n) => flow_yaml(&n),
        Err(_) => text.to_owned(),
    }
}

/// A distribution's label, if `n` is a well-formed distribution.
fn dist_label(n: &Node) -> Option<String> {
    let Kind::Map(entries) = &n.kind else {
        return None;
    };
    let [(k, v)] = entries.as_slice() else {
        return None;
    };
    if !DIST_KINDS.contains(&k.name.as_str()) {
        return None;
    }
    let scalar = |n: &Node| match &n.kind {
        Kind::Map(_) | Kind::Seq(_) | Kind::Null => None,
        _ => Some(flow_yaml(n)),
    };
    // The parameters of a kind, in this order and no others.
    let params = |names: &[&str]| -> Option<Vec<String>> {
        let Kind::Map(e) = &v.kind else { return None };
        if e.len() != names.len() {
            return None;
        }
        names.iter().map(|f| v.get(f).and_then(scalar)).collect()
    };
    Some(match k.name.as_str() {
        "fixed" => format!("fixed {}", scalar(v)?),
        "uniform" => {
            let p = params(&["min", "max"])?;
            format!("uniform {}..{}", p[0], p[1])
        }
        "exponential" => format!("exponential mean {}", params(&["mean"])?[0]),
        _ => {
            let p = params(&["median", "p99"])?;
            format!("lognormal median {} p99 {}", p[0], p[1])
        }
    })
}

/// The label of an override value's text, for people: a distribution as
/// `fixed 100ms`, `uniform 10ms..1s`, `exponential mean 1s` or
/// `lognormal median 1s p99 20s`; a scalar as YAML prints it; anything else as
/// [`flow_yaml`]. Text that does not parse is its own label.
pub fn value_label(text: &str) -> String {
    let Ok(n) = schema::parse(text) else {
        return text.to_owned();
    };
    if let Some(l) = dist_label(&n) {
        return l;
    }
    match &n.kind {
        // A string is itself, quotes or not.
        Kind::Str(s) => s.clone(),
        _ => flow_yaml(&n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        for (text, want) in [
            ("{fixed: 100ms}", "fixed 100ms"),
            (r#"{"fixed":"100ms"}"#, "fixed 100ms"),
            ("{uniform: {min: 10ms, max: 1s}}", "uniform 10ms..1s"),
            (
                r#"{"uniform":{"max":"1s","min":"10ms"}}"#,
                "uniform 10ms..1s",
            ),
            ("{exponential: {mean: 1s}}", "exponential mean 1s"),
            (
                "{lognormal: {median: 1s, p99: 20s}}",
                "lognormal median 1s p99 20s",
            ),
            ("3", "3"),
            ("true", "true"),
            ("10s", "10s"),
            ("'10s'", "10s"),
            ("null", "null"),
            ("0.5", "0.5"),
            (
                "{fixed: 1s, uniform: {min: 1s, max: 2s}}",
                "{fixed: 1s, uniform: {min: 1s, max: 2s}}",
            ),
            ("{a: [1, x]}", "{a: [1, x]}"),
            ("[1,", "[1,"),
        ] {
            assert_eq!(value_label(text), want, "{text}");
        }
    }

    #[test]
    fn flow_yaml_reads_back() {
        for text in [
            r#"{"lognormal":{"median":"1s","p99":"20s"}}"#,
            "{a: 'x, y', b: '3', c: ': x', d: '', e: [1, 2.0, true, null], f: '-x', g: '#'}",
            r#"{"k: 1": "a\nb", "u": "\u001b"}"#,
            "'true'",
        ] {
            let n = schema::parse(text).unwrap();
            let y = flow_yaml(&n);
            let back = schema::parse(&y).unwrap_or_else(|e| panic!("{y}: {e:?}"));
            let (mut a, mut b) = (String::new(), String::new());
            n.canonical_json(&mut a);
            back.canonical_json(&mut b);
            assert_eq!(a, b, "{text} -> {y}");
        }
        assert_eq!(
            normalize_value(r#"{"lognormal":{"median":"1s","p99":"20s"}}"#),
            "{lognormal: {median: 1s, p99: 20s}}"
        );
        assert_eq!(normalize_value("{fixed:   10ms}"), "{fixed: 10ms}");
        assert_eq!(normalize_value("'3'"), "\"3\"");
    }
}
