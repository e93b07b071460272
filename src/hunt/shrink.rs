//! `podsim shrink`: cut a scenario down to a small one that still shows a finding.
//!
//! Greedy delta debugging on the document tree ([`Doc`]): each pass proposes smaller or
//! simpler candidates (drop pods with the timeline actions that name them, fewer replicas,
//! drop timeline actions, containers, CRI faults and probes, remove optional fields and
//! sections, fixed values for latency and delay distributions, round times to 1 s then
//! 100 ms, a horizon just past the finding), and keeps a candidate when it validates
//! through the normal loader and its run still reports the invariant. The passes repeat
//! until none changes the document (or the run budget is spent). The seed stays fixed
//! unless other seeds are allowed ([`Limits::seeds`]). Everything is sequential and
//! deterministic: the same input gives the same file.

use super::doc::{
    at, at_mut, drop_actions, dur_of, fmt_dur, keys, list_len, remove, remove_at, remove_items,
    Doc, Seg, MS, SECOND,
};
use crate::run::{Finding, RunOptions, RunOutput};
use crate::scenario::overrides::DIST_KINDS;
use crate::scenario::{LoadError, Loaded};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

/// How much a shrink may spend.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Runs at most (candidates that fail validation are not runs).
    pub(crate) max_runs: u64,
    /// `0`: keep the seed. `N`: a candidate also counts when seeds 1..=N show the finding
    /// (the seed in hand is tried first); the result names the seed it was found on.
    pub(crate) seeds: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_runs: 5_000,
            seeds: 0,
        }
    }
}

/// The size of a scenario and its run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Size {
    /// Pods after `replicas` expansion.
    pub(crate) pods: u64,
    /// Timeline actions.
    pub(crate) actions: u64,
    /// Events of the run.
    pub(crate) events: u64,
}

impl Size {
    fn of(loaded: &Loaded, out: &RunOutput) -> Size {
        Size {
            pods: loaded.scenario.pods.len() as u64,
            actions: loaded.scenario.timeline.len() as u64,
            events: out.events,
        }
    }
}

/// A shrunk scenario.
#[derive(Clone, Debug)]
pub(crate) struct Shrunk {
    /// The standalone document: description, `spec.seed` and `spec.expect` written.
    pub(crate) doc: Doc,
    /// The seed it shows the finding on.
    pub(crate) seed: u64,
    /// The first finding of the invariant in the shrunk run.
    pub(crate) finding: Finding,
    /// Every invariant the shrunk run reports (what `spec.expect.findings` lists).
    pub(crate) findings: Vec<String>,
    pub(crate) before: Size,
    pub(crate) after: Size,
    /// Runs spent.
    pub(crate) runs: u64,
}

/// Why a shrink could not start or finish.
#[derive(Clone, Debug)]
pub(crate) enum ShrinkError {
    /// The document does not validate.
    Load(LoadError),
    /// The run on the seed does not report the invariant.
    NotFound {
        invariant: String,
        seed: u64,
        /// What that run reports instead.
        found: Vec<String>,
    },
    /// The written document no longer shows the finding (a bug in the shrinker).
    Lost(String),
}

impl fmt::Display for ShrinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShrinkError::Load(e) => write!(f, "{}", e.to_string().trim_end()),
            ShrinkError::NotFound {
                invariant,
                seed,
                found,
            } => {
                write!(
                    f,
                    "seed {seed} does not show `{invariant}`: nothing to shrink ("
                )?;
                if found.is_empty() {
                    write!(f, "that run reports no findings)")
                } else {
                    write!(f, "that run reports: {})", found.join(", "))
                }
            }
            ShrinkError::Lost(m) => write!(f, "the shrunk scenario lost the finding: {m}"),
        }
    }
}

/// Shrinks `doc` while its run on `seed` (or, with `limits.seeds`, on another seed)
/// reports `invariant`.
pub(crate) fn shrink(
    doc: &Doc,
    seed: u64,
    invariant: &str,
    limits: &Limits,
) -> Result<Shrunk, ShrinkError> {
    let loaded = doc.validate().map_err(ShrinkError::Load)?;
    let out = run_one(&loaded, seed);
    if !shows(&out, invariant) {
        return Err(ShrinkError::NotFound {
            invariant: invariant.to_owned(),
            seed,
            found: invariants(&out),
        });
    }
    let before = Size::of(&loaded, &out);
    let mut s = Search {
        source: doc.source.clone(),
        invariant,
        limits,
        runs: 1,
        tried: BTreeSet::new(),
        cur: doc.tree.clone(),
        loaded,
        seed,
        out,
    };
    // What the original expected and said no longer applies; both are written anew.
    s.edit(|t| remove(t, &["spec", "expect"]));
    loop {
        let mut changed = horizon(&mut s);
        changed |= pods(&mut s);
        changed |= replicas(&mut s);
        changed |= drop_items(&mut s, &["spec", "timeline"], &|_, _, _| {});
        changed |= containers(&mut s);
        changed |= drop_items(&mut s, &["spec", "runtime", "faults"], &|_, _, _| {});
        changed |= probes(&mut s);
        changed |= sections(&mut s);
        changed |= distributions(&mut s);
        changed |= round_times(&mut s);
        if !changed || s.exhausted() {
            break;
        }
    }
    finish(s, doc, before)
}

/// Writes the description, seed and expectation, and checks the result once more.
fn finish(s: Search, original: &Doc, before: Size) -> Result<Shrunk, ShrinkError> {
    let first = s
        .out
        .findings
        .iter()
        .find(|f| f.invariant == s.invariant)
        .cloned()
        .ok_or_else(|| ShrinkError::Lost("no finding in the last accepted run".into()))?;
    let found = invariants(&s.out);
    let after = Size::of(&s.loaded, &s.out);
    let mut tree = s.cur.clone();
    let sc = &s.loaded.scenario;
    let mut switches = String::new();
    for (k, v) in &sc.kubelet.behaviours {
        switches.push_str(&format!(", {k}: {v}"));
    }
    let on_pod = if first.pod.is_empty() {
        String::new()
    } else {
        format!(" on pod {}", first.pod)
    };
    let description = format!(
        "Found by podsim shrink: {}{on_pod} at {} (seed {}), shrunk from {} on profile {}{}. \
         Shrink: pods {} -> {}, timeline actions {} -> {}, events {} -> {}, in {} runs.\n",
        first.invariant,
        crate::sim::Dur(first.at_ns),
        s.seed,
        original.source,
        sc.kubelet.profile,
        switches,
        before.pods,
        after.pods,
        before.actions,
        after.actions,
        before.events,
        after.events,
        s.runs,
    );
    tree["metadata"]["description"] = Value::String(description);
    tree["spec"]["seed"] = json!(s.seed);
    tree["spec"]["expect"] = json!({ "findings": found });
    let doc = Doc::new(&original.source, tree);
    let loaded = doc
        .validate()
        .map_err(|e| ShrinkError::Lost(e.to_string()))?;
    let check = run_one(&loaded, s.seed);
    if invariants(&check) != found || check.trace_hash != s.out.trace_hash {
        return Err(ShrinkError::Lost(format!(
            "the written scenario reports {:?}",
            invariants(&check)
        )));
    }
    Ok(Shrunk {
        doc,
        seed: s.seed,
        finding: first,
        findings: found,
        before,
        after,
        runs: s.runs,
    })
}

fn run_one(loaded: &Loaded, seed: u64) -> RunOutput {
    let opts = RunOptions {
        seed,
        keep_trace: false,
        replay: String::new(),
        no_oracle: false,
        // Only which invariants a run broke is read: no history.
        history: crate::run::FindingHistory::Omitted,
    };
    crate::run::run(Arc::new(loaded.scenario.clone()), &opts)
}

fn shows(out: &RunOutput, invariant: &str) -> bool {
    out.findings.iter().any(|f| f.invariant == invariant)
}

/// The invariants a run reports, sorted, once each.
fn invariants(out: &RunOutput) -> Vec<String> {
    let set: BTreeSet<&str> = out.findings.iter().map(|f| f.invariant.as_str()).collect();
    set.into_iter().map(str::to_owned).collect()
}

/// The shrink in progress: the smallest document so far, validated, and its run.
struct Search<'a> {
    source: String,
    invariant: &'a str,
    limits: &'a Limits,
    runs: u64,
    /// Hashes of the candidates already tried (passes repeat until nothing changes).
    tried: BTreeSet<u64>,
    cur: Value,
    loaded: Loaded,
    seed: u64,
    out: RunOutput,
}

impl Search<'_> {
    fn exhausted(&self) -> bool {
        self.runs >= self.limits.max_runs
    }

    /// The seed in hand first, then the other allowed ones.
    fn seeds(&self) -> Vec<u64> {
        let mut v = vec![self.seed];
        v.extend((1..=self.limits.seeds).filter(|&s| s != self.seed));
        v
    }

    /// Keeps `cand` if it validates and a run on an allowed seed shows the invariant.
    fn accept(&mut self, cand: Value) -> bool {
        if self.exhausted() || cand == self.cur {
            return false;
        }
        let key = crate::sim::rng::stable_hash(cand.to_string().as_bytes());
        if !self.tried.insert(key) {
            return false;
        }
        let Ok(loaded) = Doc::new(&self.source, cand.clone()).validate() else {
            return false;
        };
        for seed in self.seeds() {
            if self.exhausted() {
                return false;
            }
            self.runs += 1;
            let out = run_one(&loaded, seed);
            if shows(&out, self.invariant) {
                self.cur = cand;
                self.loaded = loaded;
                self.seed = seed;
                self.out = out;
                return true;
            }
        }
        false
    }

    /// Applies `f` to a copy of the document and tries it (when `f` changed something).
    fn edit(&mut self, f: impl FnOnce(&mut Value) -> bool) -> bool {
        let mut c = self.cur.clone();
        f(&mut c) && self.accept(c)
    }

    /// The expanded pod names of `spec.pods[decl]` in the current document.
    fn pod_names(&self, decl: usize) -> BTreeSet<String> {
        self.loaded
            .scenario
            .pods
            .iter()
            .filter(|p| p.decl_index == decl)
            .map(|p| p.spec.name.clone())
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// Passes: each returns whether it changed the document.

/// Removes items of the list at `list` greedily: chunks of half the list, then of a
/// quarter, ... down to single items. `linked` removes what names the items (it sees the
/// search before the removal and edits the candidate).
fn drop_items(
    s: &mut Search,
    list: &[&str],
    linked: &dyn Fn(&Search, &[usize], &mut Value),
) -> bool {
    let path = keys(list);
    let mut changed = false;
    let mut chunk = list_len(&s.cur, &path).div_ceil(2).max(1);
    loop {
        let mut start = 0;
        while start < list_len(&s.cur, &path) && !s.exhausted() {
            let end = (start + chunk).min(list_len(&s.cur, &path));
            let idx: Vec<usize> = (start..end).collect();
            let mut c = s.cur.clone();
            linked(s, &idx, &mut c);
            remove_items(&mut c, &path, &idx);
            if s.accept(c) {
                changed = true;
            } else {
                start = end;
            }
        }
        if chunk == 1 || s.exhausted() {
            return changed;
        }
        chunk = chunk.div_ceil(2);
    }
}

/// Drops pod declarations with the timeline actions that name their pods.
fn pods(s: &mut Search) -> bool {
    drop_items(s, &["spec", "pods"], &|s, idx, c| {
        let names: BTreeSet<String> = idx.iter().flat_map(|&i| s.pod_names(i)).collect();
        drop_actions(c, |p, _| names.contains(p));
    })
}

/// Fewer replicas: one, half, one less; actions naming the pods that go are dropped.
fn replicas(s: &mut Search) -> bool {
    let mut changed = false;
    for decl in 0..list_len(&s.cur, &keys(&["spec", "pods"])) {
        let path = |k: &str| {
            [
                keys(&["spec", "pods"]),
                vec![Seg::Idx(decl), Seg::Key(k.into())],
            ]
            .concat()
        };
        let Some(r) = at(&s.cur, &path("replicas")).and_then(Value::as_u64) else {
            continue;
        };
        let Some(base) = at(&s.cur, &path("template"))
            .and_then(|t| t.get("metadata")?.get("name")?.as_str())
            .map(str::to_owned)
        else {
            continue;
        };
        for want in [1, r / 2, r.saturating_sub(1)] {
            let r = at(&s.cur, &path("replicas"))
                .and_then(Value::as_u64)
                .unwrap_or(0);
            if want == 0 || want >= r {
                continue;
            }
            let gone: BTreeSet<String> = (want..r).map(|k| format!("{base}-{k}")).collect();
            let p = path("replicas");
            changed |= s.edit(|c| {
                drop_actions(c, |pod, _| gone.contains(pod));
                at_mut(c, &p).map(|v| *v = json!(want)).is_some()
            });
        }
    }
    changed
}

/// Drops containers (a pod keeps one) and init containers, with their behaviour and the
/// `containerExit` actions that name them.
fn containers(s: &mut Search) -> bool {
    let mut changed = false;
    for decl in 0..list_len(&s.cur, &keys(&["spec", "pods"])) {
        for list in ["initContainers", "containers"] {
            let lp = [
                keys(&["spec", "pods"]),
                vec![Seg::Idx(decl)],
                keys(&["template", "spec", list]),
            ]
            .concat();
            let mut j = 0;
            while j < list_len(&s.cur, &lp) && !s.exhausted() {
                if list == "containers" && list_len(&s.cur, &lp) == 1 {
                    break;
                }
                let mut item = lp.clone();
                item.push(Seg::Idx(j));
                item.push(Seg::Key("name".into()));
                let name = at(&s.cur, &item).and_then(Value::as_str).map(str::to_owned);
                let names = s.pod_names(decl);
                let behaviour = [
                    keys(&["spec", "pods"]),
                    vec![Seg::Idx(decl), Seg::Key("behaviour".into())],
                    name.iter().map(|n| Seg::Key(n.clone())).collect(),
                ]
                .concat();
                let accepted = s.edit(|c| {
                    remove_items(c, &lp, &[j]);
                    if let Some(n) = &name {
                        remove_at(c, &behaviour);
                        drop_actions(c, |p, cn| names.contains(p) && cn == Some(n.as_str()));
                    }
                    true
                });
                if accepted {
                    changed = true;
                } else {
                    j += 1;
                }
            }
        }
    }
    changed
}

/// Drops probes, with the behaviour that answers them.
fn probes(s: &mut Search) -> bool {
    let mut changed = false;
    for decl in 0..list_len(&s.cur, &keys(&["spec", "pods"])) {
        let pod = [keys(&["spec", "pods"]), vec![Seg::Idx(decl)]].concat();
        for list in ["initContainers", "containers"] {
            let lp = [pod.clone(), keys(&["template", "spec", list])].concat();
            for j in 0..list_len(&s.cur, &lp) {
                let mut cp = lp.clone();
                cp.push(Seg::Idx(j));
                let Some(name) = at(&s.cur, &cp)
                    .and_then(|c| c.get("name")?.as_str())
                    .map(str::to_owned)
                else {
                    continue;
                };
                for (field, kind) in [
                    ("startupProbe", "startup"),
                    ("livenessProbe", "liveness"),
                    ("readinessProbe", "readiness"),
                ] {
                    let fp = [cp.clone(), vec![Seg::Key(field.into())]].concat();
                    let bp = [pod.clone(), keys(&["behaviour", &name, "probes"])].concat();
                    changed |= s.edit(|c| {
                        if !remove_at(c, &fp) {
                            return false;
                        }
                        let mut k = bp.clone();
                        k.push(Seg::Key(kind.into()));
                        remove_at(c, &k);
                        if at(c, &bp)
                            .and_then(Value::as_object)
                            .is_some_and(|m| m.is_empty())
                        {
                            remove_at(c, &bp);
                        }
                        true
                    });
                }
            }
        }
    }
    changed
}

/// Every path in the tree, parents before children (list items are entered, not
/// removed: the list passes do that).
fn key_paths(v: &Value, path: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                path.push(Seg::Key(k.clone()));
                out.push(path.clone());
                key_paths(child, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                path.push(Seg::Idx(i));
                key_paths(child, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Fields a shrink keeps: the document's frame, names, times and the profile (the
/// description says which it is).
fn kept(path: &[Seg]) -> bool {
    let key = |i: usize| match path.get(i) {
        Some(Seg::Key(k)) => k.as_str(),
        _ => "",
    };
    let last = match path.last() {
        Some(Seg::Key(k)) => k.as_str(),
        _ => "",
    };
    path.len() == 1
        || key(0) == "metadata"
        || matches!(last, "name" | "at" | "pod" | "container")
        || (key(1) == "kubelet" && last == "profile")
}

/// Removes optional fields and sections (their defaults apply), larger ones first.
fn sections(s: &mut Search) -> bool {
    let mut paths = Vec::new();
    key_paths(&s.cur, &mut Vec::new(), &mut paths);
    let mut changed = false;
    for p in paths.iter().filter(|p| !kept(p)) {
        if s.exhausted() {
            break;
        }
        changed |= s.edit(|c| remove_at(c, p));
    }
    changed
}

/// The median of a distribution mapping (`{uniform: {min, max}}` ...), in ns.
fn median(d: &Value) -> Option<u64> {
    let m = d.as_object()?;
    if let Some(u) = m.get("uniform") {
        let (a, b) = (dur_of(u.get("min"))?, dur_of(u.get("max"))?);
        return Some(a / 2 + b / 2);
    }
    if let Some(e) = m.get("exponential") {
        // The median of an exponential distribution is its mean times ln 2.
        return Some((dur_of(e.get("mean"))? as u128 * 693_147 / 1_000_000) as u64);
    }
    dur_of(m.get("lognormal")?.get("median"))
}

/// Replaces random distributions by fixed values: their median, else 0.
fn distributions(s: &mut Search) -> bool {
    let mut paths = Vec::new();
    key_paths(&s.cur, &mut Vec::new(), &mut paths);
    let mut changed = false;
    for p in paths {
        let Some(d) = at(&s.cur, &p) else { continue };
        let random = d.as_object().is_some_and(|m| {
            m.len() == 1
                && m.keys()
                    .all(|k| DIST_KINDS.contains(&k.as_str()) && k != "fixed")
        });
        if !random {
            continue;
        }
        let med = median(d);
        for fixed in med.into_iter().chain([0]) {
            let v = json!({ "fixed": fmt_dur(fixed) });
            if s.edit(|c| at_mut(c, &p).map(|x| *x = v).is_some()) {
                changed = true;
                break;
            }
        }
    }
    changed
}

/// Rounds durations to whole seconds, else to 100 ms.
fn round_times(s: &mut Search) -> bool {
    let mut paths = Vec::new();
    key_paths(&s.cur, &mut Vec::new(), &mut paths);
    let mut changed = false;
    for p in paths {
        if p == keys(&["spec", "horizon"])
            || matches!(p.first(), Some(Seg::Key(k)) if k == "metadata")
        {
            continue;
        }
        let Some(ns) = dur_of(at(&s.cur, &p)) else {
            continue;
        };
        for unit in [SECOND, 100 * MS] {
            let r = (ns + unit / 2) / unit * unit;
            if ns % unit == 0 {
                break;
            }
            let v = Value::String(fmt_dur(r));
            if s.edit(|c| at_mut(c, &p).map(|x| *x = v).is_some()) {
                changed = true;
                break;
            }
        }
    }
    changed
}

/// Ends the run a second after the (next whole second after the) finding.
fn horizon(s: &mut Search) -> bool {
    let Some(f) = s.out.findings.iter().find(|f| f.invariant == s.invariant) else {
        return false;
    };
    let end = f.at_ns.div_ceil(SECOND) * SECOND + SECOND;
    if end >= s.loaded.scenario.horizon.0 {
        return false;
    }
    let v = Value::String(fmt_dur(end));
    s.edit(|c| {
        c["spec"]["horizon"] = v;
        true
    })
}

// ---------------------------------------------------------------------------------------
// The command

/// `podsim shrink`, as the command line gives it.
pub(crate) struct Request<'a> {
    pub(crate) scenario: &'a std::path::Path,
    pub(crate) seed: u64,
    /// `--set` overrides with `--profile` last, as the loader takes them.
    pub(crate) overrides: &'a [(String, String)],
    pub(crate) invariant: &'a str,
    pub(crate) out: &'a std::path::Path,
    pub(crate) json: bool,
    pub(crate) limits: Limits,
}

/// `podsim shrink --json`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ShrinkJson<'a> {
    invariant: &'a str,
    pod: &'a str,
    at_ns: u64,
    seed: u64,
    findings: &'a [String],
    runs: u64,
    original: Size,
    shrunk: Size,
    replay_file: String,
    replay: String,
}

/// Runs `podsim shrink`: 0 when the shrunk file is written, 2 for bad input (including a
/// seed that does not show the invariant).
pub(crate) fn command(r: &Request) -> std::process::ExitCode {
    use std::process::ExitCode;
    let fail = |m: &dyn fmt::Display| {
        eprintln!("error: {m}");
        ExitCode::from(2)
    };
    let to_stdout =
        match crate::outfile::claim_stdout(&[("--out", Some(r.out))], &[("--json", r.json)]) {
            Ok(t) => t,
            Err(e) => return fail(&e),
        };
    let names = crate::names();
    if !names.is_finding(r.invariant) {
        let hint = crate::scenario::closest(r.invariant, &names.invariants)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        return fail(&format!(
            "--invariant: unknown invariant `{}`{hint}; `podsim invariants` lists them",
            r.invariant
        ));
    }
    let doc = match Doc::load(r.scenario, r.overrides) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{}", e.to_string().trim_end());
            return ExitCode::from(2);
        }
    };
    let s = match shrink(&doc, r.seed, r.invariant, &r.limits) {
        Ok(s) => s,
        Err(e) => return fail(&format!("{}: {e}", doc.source)),
    };
    if let Err(e) = crate::outfile::write_bytes(r.out, s.doc.to_yaml().as_bytes()) {
        let name = crate::outfile::display_name(r.out);
        return fail(&format!("cannot write {name}: {e}"));
    }
    let replay = crate::replay::replay_line(r.out, s.seed, &[], &None);
    if r.json {
        let j = ShrinkJson {
            invariant: &s.finding.invariant,
            pod: &s.finding.pod,
            at_ns: s.finding.at_ns,
            seed: s.seed,
            findings: &s.findings,
            runs: s.runs,
            original: s.before,
            shrunk: s.after,
            replay_file: crate::outfile::display_name(r.out),
            replay,
        };
        let text = serde_json::to_string_pretty(&j).unwrap_or_default();
        crate::outfile::stdout_write(format_args!("{text}\n"));
        return ExitCode::SUCCESS;
    }
    let text = summary(&s, &replay);
    if to_stdout {
        eprint!("{text}");
    } else {
        crate::outfile::stdout_write(format_args!("{text}"));
    }
    ExitCode::SUCCESS
}

/// The printed summary: what was kept, the sizes before and after, the replay line.
fn summary(s: &Shrunk, replay: &str) -> String {
    let f = &s.finding;
    let pod = if f.pod.is_empty() {
        String::new()
    } else {
        format!(" on pod {}", f.pod)
    };
    format!(
        "shrunk: {}{pod} at {} (seed {}), {} runs\n  pods {} -> {}, timeline actions {} -> {}, events {} -> {}\n  findings of the shrunk run: {}\nreplay: {replay}\n",
        f.invariant,
        crate::sim::Dur(f.at_ns),
        s.seed,
        s.runs,
        s.before.pods,
        s.after.pods,
        s.before.actions,
        s.after.actions,
        s.before.events,
        s.after.events,
        s.findings.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn durations_are_written_in_their_largest_exact_unit() {
        assert_eq!(fmt_dur(0), "0s");
        assert_eq!(fmt_dur(120 * SECOND), "2m");
        assert_eq!(fmt_dur(90 * SECOND), "90s");
        assert_eq!(fmt_dur(1_500 * MS), "1500ms");
        assert_eq!(fmt_dur(2_000), "2us");
        assert_eq!(fmt_dur(7), "7ns");
    }

    #[test]
    fn medians_of_the_distributions() {
        assert_eq!(
            median(&json!({"uniform": {"min": "1s", "max": "3s"}})),
            Some(2 * SECOND)
        );
        assert_eq!(
            median(&json!({"lognormal": {"median": "1s", "p99": "9s"}})),
            Some(SECOND)
        );
        assert_eq!(
            median(&json!({"exponential": {"mean": "1s"}})),
            Some(693_147_000)
        );
    }

    fn v121() -> Doc {
        let sets = [("spec.kubelet.profile".to_owned(), "v1.21".to_owned())];
        Doc::load(
            Path::new("scenarios/races/pod-worker-owns-lifecycle.yaml"),
            &sets,
        )
        .unwrap()
    }

    #[test]
    fn a_catalog_race_shrinks_to_one_pod_and_one_action_and_still_shows() {
        let doc = v121();
        let s = shrink(&doc, 1, "no-start-after-termination", &Limits::default()).unwrap();
        assert!(s.after.pods <= 1 && s.after.actions <= 1, "{:?}", s.after);
        assert!(s.after.events < s.before.events);
        let out = s.doc.run(s.seed, "").unwrap().out;
        assert!(shows(&out, "no-start-after-termination"));
        assert!(s
            .findings
            .contains(&"no-start-after-termination".to_owned()));
    }

    #[test]
    fn with_other_seeds_allowed_the_result_names_the_seed_that_shows_it() {
        let limits = Limits {
            max_runs: 400,
            seeds: 5,
        };
        let s = shrink(&v121(), 2, "no-start-after-termination", &limits).unwrap();
        assert!((1..=5).contains(&s.seed));
        assert!(s.runs <= 400);
        assert_eq!(s.doc.tree["spec"]["seed"], s.seed);
        let out = s.doc.run(s.seed, "").unwrap().out;
        assert!(shows(&out, "no-start-after-termination"));
    }

    #[test]
    fn a_finding_the_seed_does_not_show_is_an_error() {
        let e = shrink(&v121(), 1, "probes-stop-at-termination", &Limits::default()).unwrap_err();
        assert!(matches!(e, ShrinkError::NotFound { .. }), "{e}");
        assert!(e.to_string().contains("seed 1 does not show"), "{e}");
    }
}
