//! The validation context ([`Cx`]: where problems and notes go), field-table checked
//! objects ([`Obj`]) and the readers of typed values (strings, integers, durations,
//! quantities, probabilities, one-of choices, DNS names). Each reader records a problem and
//! returns `None` when the value is wrong, so the walk always continues.

use crate::scenario::duration;
use crate::scenario::error::{LoadError, Note, Problem};
use crate::scenario::fields::{self, Object, Treatment};
use crate::scenario::names::Names;
use crate::scenario::not_built_yet::{not_built_yet, Capability};
use crate::scenario::quantity::Quantity;
use crate::scenario::schema::{Key, Kind, Loc, Node};
use crate::sim::Dur;

// ---------------------------------------------------------------------------------------
// Collecting problems

/// The validation context: where problems and notes go, and the names to check against.
pub(super) struct Cx<'a> {
    file: String,
    /// Label of each `--set` override (`--set PATH`), by index.
    pub(super) sets: Vec<String>,
    pub(super) problems: Vec<Problem>,
    notes: Vec<Note>,
    /// Profile, switch and finding names.
    pub(super) names: &'a Names,
    /// The scenario's profile when its `probeTerminationGracePeriod` is off (a probe's own
    /// grace has no effect there).
    pub(super) probe_grace_off: Option<String>,
    /// The feature gates that are off for the scenario (profile and `featureGates`), by
    /// name, each with why: a feature one of them allows is an error.
    pub(super) gates_off: std::collections::BTreeMap<&'static str, String>,
    /// The profile `gates_off` is for.
    pub(super) gates_profile: String,
}

impl<'a> Cx<'a> {
    pub(super) fn new(file: &str, names: &'a Names) -> Cx<'a> {
        Cx {
            file: file.to_owned(),
            sets: Vec::new(),
            problems: Vec::new(),
            notes: Vec::new(),
            names,
            probe_grace_off: None,
            gates_off: std::collections::BTreeMap::new(),
            gates_profile: String::new(),
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

    pub(super) fn err(&mut self, loc: Loc, path: &str, message: impl Into<String>) {
        let (file, line, col) = self.place(loc);
        self.problems.push(Problem {
            file,
            line,
            col,
            path: path.to_owned(),
            message: message.into(),
        });
    }

    pub(super) fn note(&mut self, loc: Loc, path: &str, message: impl Into<String>) {
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
    pub(super) fn uses(&mut self, cap: Capability, loc: Loc, path: &str) {
        if let Some(m) = not_built_yet(cap) {
            self.err(loc, path, m);
        }
    }

    /// `Ok(value)` if no problem was found. Problems from the file come first in position
    /// order, then those from `--set` values.
    pub(super) fn finish<T>(mut self, value: T) -> Result<(T, Vec<Note>), LoadError> {
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

pub(super) fn join(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

pub(super) fn idx(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

/// Levenshtein distance, for "did you mean" hints.
pub(super) fn distance(a: &str, b: &str) -> usize {
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

/// The option closest to `name` (case aside), if it is close enough to be a typo of it.
pub(crate) fn closest<'a>(name: &str, options: &[&'a str]) -> Option<&'a str> {
    let best = options
        .iter()
        .map(|o| (distance(&name.to_lowercase(), &o.to_lowercase()), *o))
        .min();
    match best {
        Some((d, o)) if d <= 2.max(name.len() / 4) => Some(o),
        _ => None,
    }
}

/// Lists at most this long are shown beside a "did you mean" hint.
const SHORT_LIST: usize = 12;

/// The hint after an unknown name: `; did you mean `x`?`, followed by the valid values when
/// there are few; the valid values alone when none is close.
pub(crate) fn suggest(name: &str, options: &[&str]) -> String {
    suggest_or_point(name, options, None)
}

/// [`suggest`], for a long list a command prints (`podsim invariants`): after a "did you
/// mean" hint, the command instead of the list.
pub(crate) fn suggest_or_point(name: &str, options: &[&str], lister: Option<&str>) -> String {
    let list = format!("expected one of: {}", options.join(", "));
    match (closest(name, options), lister) {
        (Some(o), _) if options.len() <= SHORT_LIST => format!("; did you mean `{o}`? ({list})"),
        (Some(o), Some(cmd)) => format!(
            "; did you mean `{o}`? (`{cmd}` lists all {})",
            options.len()
        ),
        (Some(o), None) => format!("; did you mean `{o}`?"),
        (None, _) => format!("; {list}"),
    }
}

/// How an object treats keys that are not in its field table.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Unknown {
    /// podsim's own objects: an error.
    Error,
    /// Parts of a Pod manifest outside the field table: a note.
    Note,
    /// A Pod-manifest object of the field table: what its row says.
    Manifest(Object),
}

/// A mapping checked against its field table.
pub(super) struct Obj<'n> {
    pub(super) loc: Loc,
    pub(super) path: String,
    pub(super) entries: &'n [(Key, Node)],
}

impl<'n> Obj<'n> {
    /// The value of `key`, `None` if absent or null.
    pub(super) fn get(&self, key: &str) -> Option<&'n Node> {
        self.entries
            .iter()
            .find(|(k, _)| k.name == key)
            .map(|(_, v)| v)
            .filter(|v| v.kind != Kind::Null)
    }
    pub(super) fn at(&self, key: &str) -> String {
        join(&self.path, key)
    }
    /// The value of a required field; a problem if it is missing.
    pub(super) fn req(&self, cx: &mut Cx, key: &str) -> Option<&'n Node> {
        let v = self.get(key);
        if v.is_some() {
            return v;
        }
        // A `--set` that made it null is named, not a file position it does not come from.
        let set_null = self
            .entries
            .iter()
            .find(|(k, n)| k.name == key && matches!(n.loc, Loc::Set(_)));
        match set_null {
            Some((_, n)) => cx.err(
                n.loc,
                &self.at(key),
                format!("`{key}` is required, and this override makes it null"),
            ),
            None => cx.err(
                self.loc,
                &self.at(key),
                format!("missing required field `{key}`"),
            ),
        }
        v
    }
}

/// Checks that `node` is a mapping (null counts as empty) whose keys are in `fields`.
pub(super) fn obj<'n>(
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
                Unknown::Note => cx.note(
                    k.loc,
                    &p,
                    format!(
                        "not a field podsim knows here; ignored{}",
                        nearest(&k.name, fields)
                    ),
                ),
                Unknown::Manifest(o) => manifest_field(cx, k, &p, o),
            }
        }
    }
    Some(Obj {
        loc: node.loc,
        path: path.to_owned(),
        entries,
    })
}

/// A key of a Pod-manifest object that validation does not read: the field table decides.
fn manifest_field(cx: &mut Cx, k: &Key, p: &str, o: Object) {
    match fields::field(o, &k.name).map(|f| f.treatment) {
        Some(Treatment::NoEffect(why)) => cx.note(k.loc, p, why),
        Some(Treatment::NotBuilt(need)) => cx.err(k.loc, p, format!("not built yet: {need}")),
        // Validation reads every modelled field; reaching this is a bug in podsim.
        Some(Treatment::Modelled(_)) => panic!("{p}: a modelled field that validation skipped"),
        None => {
            let near = nearest(&k.name, &fields::names(o));
            let m = format!("not a field of a v1.31 {}; ignored{near}", o.title());
            cx.note(k.loc, p, m)
        }
    }
}

/// "; did you mean `x`?" when a name is close to one of `options`, else nothing.
fn nearest(name: &str, options: &[&str]) -> String {
    closest(name, options).map_or(String::new(), |o| format!("; did you mean `{o}`?"))
}

pub(super) fn present(n: Option<&Node>) -> Option<&Node> {
    n.filter(|n| n.kind != Kind::Null)
}

pub(super) fn expected(cx: &mut Cx, n: &Node, path: &str, what: &str) {
    cx.err(
        n.loc,
        path,
        format!("expected {what}, found {}", n.kind.describe()),
    );
}

pub(super) fn string(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<String> {
    let n = present(n)?;
    match &n.kind {
        Kind::Str(s) => Some(s.clone()),
        _ => {
            expected(cx, n, path, "a string");
            None
        }
    }
}

pub(super) fn boolean(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<bool> {
    let n = present(n)?;
    match n.kind {
        Kind::Bool(b) => Some(b),
        _ => {
            expected(cx, n, path, "`true` or `false`");
            None
        }
    }
}

pub(super) fn int(cx: &mut Cx, n: Option<&Node>, path: &str, min: i128, max: i128) -> Option<i128> {
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

pub(super) fn dur(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Dur> {
    let n = present(n)?;
    let (text, parsed) = match &n.kind {
        Kind::Str(s) => (s.clone(), duration::parse_go_duration(s)),
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

pub(super) fn pos_dur(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Dur> {
    let d = dur(cx, n, path)?;
    if d == Dur::ZERO {
        if let Some(n) = n {
            cx.err(n.loc, path, "must be greater than 0");
        }
        return None;
    }
    Some(d)
}

pub(super) fn quantity(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Quantity> {
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
pub(super) fn amount(
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

pub(super) fn bytes(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<u64> {
    amount(cx, n, path, Quantity::value)
}

pub(super) fn milli(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<u64> {
    amount(cx, n, path, Quantity::milli)
}

/// A probability in [0, 1], as parts per million.
pub(super) fn probability(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<u32> {
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

pub(super) fn list<'n>(cx: &mut Cx, n: Option<&'n Node>, path: &str) -> &'n [Node] {
    let Some(n) = present(n) else { return &[] };
    match &n.kind {
        Kind::Seq(items) => items,
        _ => {
            expected(cx, n, path, "a list");
            &[]
        }
    }
}

/// A profile name (or another name of one): the profile; a problem naming the valid
/// values otherwise.
pub(super) fn profile(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<&'static str> {
    let n = present(n)?;
    let Kind::Str(s) = &n.kind else {
        let all = cx.names.profiles.join(", ");
        expected(cx, n, path, &format!("a profile name ({all})"));
        return None;
    };
    let p = cx.names.profile(s);
    if p.is_none() {
        let m = cx.names.profile_problem(s);
        cx.err(n.loc, path, m);
    }
    p
}

/// One of `options`; a problem naming them otherwise.
pub(super) fn one_of(cx: &mut Cx, n: Option<&Node>, path: &str, options: &[&str]) -> Option<usize> {
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
pub(super) fn exactly_one<'n>(
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

/// `[a-z0-9]([-a-z0-9.]*[a-z0-9])?`, at most `max` characters (DNS subdomain when dots are
/// allowed, DNS label otherwise).
pub(super) fn is_dns_name(s: &str, dots: bool, max: usize) -> bool {
    let ok_inner =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || (dots && c == '.');
    let ok_end = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= max
        && s.chars().all(ok_inner)
        && s.chars().next().is_some_and(ok_end)
        && s.chars().last().is_some_and(ok_end)
}

pub(super) fn name(
    cx: &mut Cx,
    n: Option<&Node>,
    path: &str,
    dots: bool,
    max: usize,
) -> Option<String> {
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
