//! The loose, spanned YAML tree every podsim file is first parsed into.
//!
//! serde's derive stops at the first error, but `podsim check` must report every problem of a
//! file at once. So parsing is two passes: serde-saphyr builds this generic tree (each node
//! carrying its line:column through [`serde_saphyr::Spanned`]), then `validate` walks it field
//! by field against podsim's schema, collecting every problem. The schema itself (which keys
//! each podsim object allows, which are Pod-manifest fields) lives in `validate`'s field
//! tables; unknown podsim keys are errors, unknown Pod-manifest keys are notes.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{Budget, Options, Spanned};
use std::fmt;

/// Where a node came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// 1-based line and column in the file.
    File { line: u32, col: u32 },
    /// The value of the `i`-th `--set` override.
    Set(u32),
}

impl Loc {
    /// Start of the file: for problems about the document as a whole.
    pub const START: Loc = Loc::File { line: 1, col: 1 };
}

/// A YAML node with its location.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub loc: Loc,
    pub kind: Kind,
}

/// A mapping key: always a string (non-string scalar keys are converted to their text).
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    pub name: String,
    pub loc: Loc,
}

/// The shape of a YAML node.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    Seq(Vec<Node>),
    /// Entries in document order (duplicate keys are rejected by the parser).
    Map(Vec<(Key, Node)>),
}

impl Kind {
    /// What the user wrote, in words, for "expected X, found Y" messages.
    pub fn describe(&self) -> &'static str {
        match self {
            Kind::Null => "nothing (null)",
            Kind::Bool(_) => "a boolean",
            Kind::Int(_) => "an integer",
            Kind::Float(_) => "a number",
            Kind::Str(_) => "a string",
            Kind::Seq(_) => "a list",
            Kind::Map(_) => "a mapping",
        }
    }
}

impl Node {
    /// A node with the given location and kind.
    pub fn new(loc: Loc, kind: Kind) -> Node {
        Node { loc, kind }
    }

    /// The value under `key` if this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.kind {
            Kind::Map(entries) => entries.iter().find(|(k, _)| k.name == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The scalar as text (`None` for collections and null).
    pub fn scalar_text(&self) -> Option<String> {
        match &self.kind {
            Kind::Bool(b) => Some(b.to_string()),
            Kind::Int(i) => Some(i.to_string()),
            Kind::Float(f) => Some(f.to_string()),
            Kind::Str(s) => Some(s.clone()),
            _ => None,
        }
    }

    /// Replaces every location in the subtree (used for `--set` values).
    pub fn relocate(&mut self, loc: Loc) {
        self.loc = loc;
        match &mut self.kind {
            Kind::Seq(items) => items.iter_mut().for_each(|n| n.relocate(loc)),
            Kind::Map(entries) => entries.iter_mut().for_each(|(k, v)| {
                k.loc = loc;
                v.relocate(loc);
            }),
            _ => {}
        }
    }

    /// Canonical JSON text: keys sorted, no whitespace. Comments, key order, quoting style
    /// and layout of the YAML do not change it; it is what the scenario hash is taken of.
    pub fn canonical_json(&self, out: &mut String) {
        match &self.kind {
            Kind::Null => out.push_str("null"),
            Kind::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Kind::Int(i) => out.push_str(&i.to_string()),
            // `{:?}` keeps a decimal point or exponent, so 1.0 and 1 stay distinct.
            Kind::Float(f) => out.push_str(&format!("{f:?}")),
            Kind::Str(s) => push_json_str(out, s),
            Kind::Seq(items) => {
                out.push('[');
                for (i, n) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    n.canonical_json(out);
                }
                out.push(']');
            }
            Kind::Map(entries) => {
                let mut sorted: Vec<&(Key, Node)> = entries.iter().collect();
                sorted.sort_by(|a, b| a.0.name.cmp(&b.0.name));
                out.push('{');
                for (i, (k, v)) in sorted.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_json_str(out, &k.name);
                    out.push(':');
                    v.canonical_json(out);
                }
                out.push('}');
            }
        }
    }
}

fn push_json_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::Value::String(s.to_owned()).to_string());
}

/// serde-saphyr options for podsim files: the default hostile-input protections (depth,
/// alias expansion, anchor ratio) stay on, but the node and event budgets are raised so that
/// a scenario with 20,000 pods parses (the crate's default budgets reject it).
pub fn yaml_options() -> Options {
    let mut budget = Budget::default();
    budget.max_nodes = 10_000_000;
    budget.max_events = 40_000_000;
    let mut options = Options::default();
    options.budget = Some(budget);
    options.with_snippet = false;
    // YAML 1.2 booleans only: `y`, `no`, `on` stay strings (a key `y:` must not become `true`).
    options.strict_booleans = true;
    // A tag podsim does not understand (`!duration 1m`) is an error at its position, not
    // silently dropped; YAML's own core tags (`!!str`, `!!int`, ...) are still accepted.
    options.reject_unsupported_tags = true;
    options
}

/// A YAML syntax (or budget) error: message and 1-based position (0 when unknown).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

/// Parses one YAML document into a spanned tree. An empty document is `Kind::Null`.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    match serde_saphyr::from_str_with_options::<Option<Node>>(text, yaml_options()) {
        Ok(Some(node)) => Ok(node),
        Ok(None) => Ok(Node::new(Loc::START, Kind::Null)),
        Err(e) => {
            let (line, col) = e
                .location()
                .map(|l| (l.line() as u32, l.column() as u32))
                .unwrap_or((0, 0));
            let message = clean_message(&e.to_string());
            let (line, col) = tag_position(text, line, col, &message).unwrap_or((line, col));
            Err(SyntaxError { line, col, message })
        }
    }
}

/// serde-saphyr reports an unsupported tag at the node it is on; point at the tag itself
/// (its last occurrence before that node), when it is spelt as the message quotes it.
fn tag_position(text: &str, line: u32, col: u32, message: &str) -> Option<(u32, u32)> {
    let tag = message
        .strip_prefix("unsupported tag `")?
        .split('`')
        .next()?;
    // Byte offset of (line, col): the start of the line plus `col - 1` characters.
    let line_start: usize = text
        .split_inclusive('\n')
        .take((line as usize).checked_sub(1)?)
        .map(str::len)
        .sum();
    let rest = text.get(line_start..)?;
    let in_line = rest
        .char_indices()
        .nth((col as usize).saturating_sub(1))
        .map_or(rest.len(), |(i, _)| i);
    let at = text[..line_start + in_line].rfind(tag)?;
    let before = &text[..at];
    let tag_line = before.matches('\n').count() + 1;
    let tag_col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some((u32::try_from(tag_line).ok()?, u32::try_from(tag_col).ok()?))
}

/// serde-saphyr appends " at line L, column C" to its messages; the position is reported
/// separately, so strip it.
fn clean_message(msg: &str) -> String {
    let first = msg.lines().next().unwrap_or("").trim();
    let cut = first.rfind(" at line ").map_or(first, |i| &first[..i]);
    let cut = cut.trim_start_matches("error: ").trim();
    // Drop advice addressed to programmers using serde-saphyr.
    let cut = [", set DuplicateKeyPolicy", "; use from_str_multiple"]
        .iter()
        .fold(cut, |c, advice| c.find(advice).map_or(c, |i| &c[..i]));
    if cut.starts_with("unsupported tag `") {
        return format!(
            "{cut}: podsim files use no YAML tags; remove it and write the plain value"
        );
    }
    if cut.starts_with("multiple YAML documents") {
        return "multiple YAML documents: a podsim file holds exactly one".to_owned();
    }
    if cut.is_empty() {
        "invalid YAML".to_owned()
    } else {
        cut.to_owned()
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        let s = Spanned::<KindDe>::deserialize(d)?;
        let (line, col) = (s.referenced.line() as u32, s.referenced.column() as u32);
        Ok(Node {
            loc: Loc::File { line, col },
            kind: s.value.0,
        })
    }
}

/// Deserialises a node's kind with `deserialize_any`.
struct KindDe(Kind);

impl<'de> Deserialize<'de> for KindDe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KindDe, D::Error> {
        d.deserialize_any(KindVisitor).map(KindDe)
    }
}

struct KindVisitor;

impl<'de> Visitor<'de> for KindVisitor {
    type Value = Kind;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Kind, E> {
        Ok(Kind::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Kind, E> {
        Ok(Kind::Int(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Kind, E> {
        Ok(Kind::Int(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Kind, E> {
        Ok(Kind::Int(v))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Kind, E> {
        Ok(i128::try_from(v).map_or(Kind::Str(v.to_string()), Kind::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Kind, E> {
        Ok(Kind::Float(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Kind, E> {
        Ok(Kind::Str(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Kind, E> {
        Ok(Kind::Str(v))
    }
    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Kind, E> {
        Ok(Kind::Str(String::from_utf8_lossy(v).into_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Kind, E> {
        Ok(Kind::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        d.deserialize_any(KindVisitor)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
        d.deserialize_any(KindVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Kind, A::Error> {
        let mut items = Vec::new();
        while let Some(n) = seq.next_element::<Node>()? {
            items.push(n);
        }
        Ok(Kind::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Kind, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<Node>()? {
            let name = match k.scalar_text() {
                Some(s) => s,
                None if k.kind == Kind::Null => "null".to_owned(),
                None => {
                    return Err(de::Error::custom(
                        "mapping keys must be scalars (strings), not lists or mappings",
                    ))
                }
            };
            let v = map.next_value::<Node>()?;
            entries.push((Key { name, loc: k.loc }, v));
        }
        Ok(Kind::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_with_locations() {
        let n = parse("a: 1\nb:\n  - x\n  - {c: 1.5, d: ~, e: true}\n").unwrap();
        let Kind::Map(entries) = &n.kind else {
            panic!("not a map: {n:?}")
        };
        assert_eq!(entries[0].0.name, "a");
        assert_eq!(entries[0].0.loc, Loc::File { line: 1, col: 1 });
        assert_eq!(entries[0].1.loc, Loc::File { line: 1, col: 4 });
        assert_eq!(entries[0].1.kind, Kind::Int(1));
        let b = n.get("b").unwrap();
        let Kind::Seq(items) = &b.kind else { panic!() };
        assert_eq!(items[0].loc, Loc::File { line: 3, col: 5 });
        assert_eq!(items[0].kind, Kind::Str("x".into()));
        assert_eq!(items[1].get("c").unwrap().kind, Kind::Float(1.5));
        assert_eq!(items[1].get("d").unwrap().kind, Kind::Null);
        assert_eq!(items[1].get("e").unwrap().kind, Kind::Bool(true));
        assert_eq!(
            items[1].get("e").unwrap().loc,
            Loc::File { line: 4, col: 23 }
        );
    }

    #[test]
    fn canonical_json_ignores_layout() {
        let a = parse("# c\nb: [1, x]\na: {y: 2, x: \"s\"}\n").unwrap();
        let b = parse("a:\n  x: s\n  y: 2\nb:\n- 1\n- 'x'\n").unwrap();
        let (mut ja, mut jb) = (String::new(), String::new());
        a.canonical_json(&mut ja);
        b.canonical_json(&mut jb);
        assert_eq!(ja, jb);
        assert_eq!(ja, r#"{"a":{"x":"s","y":2},"b":[1,"x"]}"#);
    }

    #[test]
    fn unknown_tags_are_errors_at_the_tag() {
        let e = parse("a: 1\nb:  !duration 1m\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 5), "{e:?}");
        assert!(
            e.message.starts_with("unsupported tag `!duration`"),
            "{e:?}"
        );
        let e = parse("a:\n  - !x {b: 1}\n").unwrap_err();
        assert_eq!((e.line, e.col), (2, 5), "{e:?}");
        assert_eq!(
            parse("a: !!str 1").unwrap().get("a").unwrap().kind,
            Kind::Str("1".into())
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        let e = parse("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(e.line >= 2, "{e:?}");
        let e = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.line, 2, "{e:?}");
    }
}
