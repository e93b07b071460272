//! `--set PATH=VALUE` overrides, applied to the loose YAML tree before validation.
//!
//! PATH is a dotted field path with optional list indices: `spec.pods[0].template.spec.
//! terminationGracePeriodSeconds`. A key containing dots is written in double quotes:
//! `spec.kubelet.config.evictionHard."memory.available"`. VALUE is a YAML scalar or flow
//! value (`10s`, `3`, `true`, `{fixed: 1s}`); `null` resets a field to its default. An
//! empty VALUE is an error (reported by validation, naming the override): it is too easily
//! a slip.
//!
//! Setting one kind of a distribution (`spec.runtime.latencies.stopContainer.fixed=1s`)
//! replaces the distribution: the mapping's other kind keys (`uniform`, `exponential`,
//! `lognormal` and their parameters) are dropped, as the user means, instead of leaving a
//! distribution with two kinds for validation to refuse.

use super::schema::{self, Key, Kind, Loc, Node};

/// One step of an override path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// Parses an override path.
pub fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let bad = |why: &str| format!("bad path `{path}`: {why}");
    let mut segs = Vec::new();
    let mut rest = path;
    let mut need_key = true;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(|| bad("`[` without `]`"))?;
            let idx = r[..end]
                .parse::<usize>()
                .map_err(|_| bad("a list index must be a non-negative integer"))?;
            if need_key && segs.is_empty() {
                return Err(bad("it must start with a field name"));
            }
            segs.push(Seg::Index(idx));
            rest = &r[end + 1..];
            need_key = false;
            continue;
        }
        if !need_key {
            rest = rest
                .strip_prefix('.')
                .ok_or_else(|| bad("expected `.` or `[` after a field name or index"))?;
        }
        if let Some(r) = rest.strip_prefix('"') {
            let end = r.find('"').ok_or_else(|| bad("unterminated quote"))?;
            segs.push(Seg::Key(r[..end].to_owned()));
            rest = &r[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            if end == 0 {
                return Err(bad("empty field name"));
            }
            segs.push(Seg::Key(rest[..end].to_owned()));
            rest = &rest[end..];
        }
        need_key = false;
    }
    if segs.is_empty() {
        return Err(bad("empty path"));
    }
    Ok(segs)
}

/// Parses an override VALUE as a YAML scalar or flow value, located at `loc`.
pub fn parse_value(value: &str, loc: Loc) -> Result<Node, String> {
    let mut node =
        schema::parse(value).map_err(|e| format!("bad value `{value}`: {}", e.message))?;
    node.relocate(loc);
    Ok(node)
}

/// The keys of a distribution mapping: exactly one of them names its kind.
pub const DIST_KINDS: [&str; 4] = ["fixed", "uniform", "exponential", "lognormal"];

fn describe(path_so_far: &str, n: &Node) -> String {
    format!("`{path_so_far}` is {}", n.kind.describe())
}

/// Sets `segs` in `root` to `value`, creating missing mappings on the way. `loc` is used for
/// keys it creates.
pub fn apply(root: &mut Node, segs: &[Seg], value: Node, loc: Loc) -> Result<(), String> {
    let mut cur = root;
    let mut so_far = String::new();
    for (i, seg) in segs.iter().enumerate() {
        let last = i + 1 == segs.len();
        match seg {
            Seg::Key(k) => {
                if cur.kind == Kind::Null {
                    cur.kind = Kind::Map(Vec::new());
                }
                let desc = describe(&so_far, cur);
                let Kind::Map(entries) = &mut cur.kind else {
                    return Err(format!("cannot set field `{k}`: {desc}, not a mapping"));
                };
                let pos = match entries.iter().position(|(key, _)| key.name == *k) {
                    Some(p) => p,
                    None => {
                        let key = Key {
                            name: k.clone(),
                            loc,
                        };
                        entries.push((key, Node::new(loc, Kind::Null)));
                        entries.len() - 1
                    }
                };
                if !so_far.is_empty() {
                    so_far.push('.');
                }
                so_far.push_str(k);
                if last {
                    entries[pos].1 = value;
                    if DIST_KINDS.contains(&k.as_str()) {
                        // A distribution has one kind: the new one replaces the others.
                        entries.retain(|(key, _)| {
                            key.name == *k || !DIST_KINDS.contains(&key.name.as_str())
                        });
                    }
                    return Ok(());
                }
                cur = &mut entries[pos].1;
            }
            Seg::Index(idx) => {
                let desc = describe(&so_far, cur);
                let Kind::Seq(items) = &mut cur.kind else {
                    return Err(format!("cannot index [{idx}]: {desc}, not a list"));
                };
                let len = items.len();
                let Some(item) = items.get_mut(*idx) else {
                    return Err(format!(
                        "index [{idx}] is out of range: `{so_far}` has {len} item{}",
                        if len == 1 { "" } else { "s" }
                    ));
                };
                so_far.push_str(&format!("[{idx}]"));
                if last {
                    *item = value;
                    return Ok(());
                }
                cur = item;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths() {
        assert_eq!(
            parse_path("spec.pods[0].template.spec.terminationGracePeriodSeconds").unwrap(),
            vec![
                Seg::Key("spec".into()),
                Seg::Key("pods".into()),
                Seg::Index(0),
                Seg::Key("template".into()),
                Seg::Key("spec".into()),
                Seg::Key("terminationGracePeriodSeconds".into()),
            ]
        );
        assert_eq!(
            parse_path("a.\"memory.available\"").unwrap(),
            vec![Seg::Key("a".into()), Seg::Key("memory.available".into())]
        );
        assert_eq!(
            parse_path("a[1][2]").unwrap(),
            vec![Seg::Key("a".into()), Seg::Index(1), Seg::Index(2)]
        );
        for bad in [
            "", ".a", "a.", "a..b", "[0]", "a[x]", "a[0", "a[0]b", "a.\"b",
        ] {
            assert!(parse_path(bad).is_err(), "{bad} accepted");
        }
    }

    fn set(text: &str, path: &str, value: &str) -> Result<String, String> {
        let mut root = schema::parse(text).unwrap();
        let v = parse_value(value, Loc::Set(0))?;
        apply(&mut root, &parse_path(path)?, v, Loc::Set(0))?;
        let mut out = String::new();
        root.canonical_json(&mut out);
        Ok(out)
    }

    #[test]
    fn applies() {
        assert_eq!(set("a: {b: 1}", "a.b", "2").unwrap(), r#"{"a":{"b":2}}"#);
        assert_eq!(
            set("a: {b: 1}", "a.c.d", "{fixed: 1s}").unwrap(),
            r#"{"a":{"b":1,"c":{"d":{"fixed":"1s"}}}}"#
        );
        assert_eq!(set("a: [1, 2]", "a[1]", "x").unwrap(), r#"{"a":[1,"x"]}"#);
        assert_eq!(
            set("a: [{b: 1}]", "a[0].b", "true").unwrap(),
            r#"{"a":[{"b":true}]}"#
        );
        assert_eq!(set("", "a", "").unwrap(), r#"{"a":null}"#);
        assert!(set("a: [1]", "a[1]", "2")
            .unwrap_err()
            .contains("out of range"));
        assert!(set("a: 1", "a[0]", "2").unwrap_err().contains("not a list"));
        assert!(set("a: 1", "a.b", "2")
            .unwrap_err()
            .contains("not a mapping"));
        assert!(set("a: 1", "a", "[1,").unwrap_err().contains("bad value"));
    }

    #[test]
    fn a_distribution_kind_replaces_the_distribution() {
        let d = "l: {s: {uniform: {min: 1ms, max: 2ms}}, t: {fixed: 1s}}";
        assert_eq!(
            set(d, "l.s.fixed", "10ms").unwrap(),
            r#"{"l":{"s":{"fixed":"10ms"},"t":{"fixed":"1s"}}}"#
        );
        assert_eq!(
            set(d, "l.t.lognormal", "{median: 1s, p99: 2s}").unwrap(),
            r#"{"l":{"s":{"uniform":{"max":"2ms","min":"1ms"}},"t":{"lognormal":{"median":"1s","p99":"2s"}}}}"#
        );
        // A parameter of the kind already there keeps the kind.
        assert_eq!(
            set(d, "l.s.uniform.max", "5ms").unwrap(),
            r#"{"l":{"s":{"uniform":{"max":"5ms","min":"1ms"}},"t":{"fixed":"1s"}}}"#
        );
    }
}
