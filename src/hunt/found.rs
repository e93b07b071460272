//! What a hunt hands back: one scenario file per distinct finding,
//! `DIR/findings/<invariant>-<n>.yaml`, and the `--json` summary.

use super::doc::obj_at;
use super::doc::Doc;
use super::search::{Found, Search, Strategy};
use super::shrink::{self, Limits};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How the hunt was asked for: what a finding's description and replay line name.
pub(crate) struct Context<'a> {
    pub(crate) base: &'a Path,
    pub(crate) profile: &'a str,
    /// The user's `--set` overrides as given (`PATH=VALUE`).
    pub(crate) sets: &'a [String],
    pub(crate) strategy: Strategy,
    pub(crate) seed: u64,
    pub(crate) out: &'a Path,
    /// The scheduler every candidate ran under, when the hunt chose one.
    pub(crate) scheduler: Option<String>,
    /// Runs each finding's shrink may spend (0: no shrinking).
    pub(crate) shrink_runs: u64,
}

/// `--json`.
#[derive(Serialize)]
pub(crate) struct HuntJson {
    pub(crate) runs: u64,
    pub(crate) seconds: f64,
    pub(crate) coverage: Coverage,
    pub(crate) findings: Vec<FindingJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Coverage {
    /// Distinct (pod worker state, transition kind) pairs seen.
    pub(crate) pairs: usize,
    /// Reach points reached, by name.
    pub(crate) reach: Vec<String>,
    /// Inputs kept because they reached new coverage.
    pub(crate) corpus: usize,
    /// Candidates a mutation made invalid (not run).
    pub(crate) discarded: u64,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FindingJson {
    pub(crate) invariant: String,
    pub(crate) pod: String,
    pub(crate) first_run: u64,
    pub(crate) replay_file: String,
    pub(crate) replay: String,
    pub(crate) shrunk: Shrunk,
    /// The kinds of the pod's last transitions before the finding (the dedup key with the
    /// invariant).
    pub(crate) signature: String,
}

#[derive(Serialize)]
pub(crate) struct Shrunk {
    pub(crate) pods: usize,
    pub(crate) actions: usize,
    pub(crate) events: u64,
}

/// The scenario tree of finding `f`, standalone: its seed, the profile, a description of
/// what was found and `expect.findings` naming what the run broke.
pub(crate) fn finding_tree(f: &Found, cx: &Context<'_>, name: &str) -> Value {
    let mut t = f.cand.tree.clone();
    let sets = if cx.sets.is_empty() {
        String::new()
    } else {
        format!(" and --set {}", cx.sets.join(" --set "))
    };
    let how = if f.cand.history.is_empty() {
        "the base scenario as it is".to_string()
    } else {
        f.cand.history.join("; ")
    };
    let description = format!(
        "Found by podsim hunt ({} strategy, hunt seed {}) from {} after {} runs: invariant {} broken on pod {} at {:.3}s: {} Profile {}{sets}, run seed {}. The kinds of the pod's last transitions before it: {}. Changes from the base: {how}.",
        cx.strategy.as_str(),
        cx.seed,
        cx.base.display(),
        f.first_run,
        f.invariant,
        if f.pod.is_empty() { "-" } else { &f.pod },
        f.at_ns as f64 / 1e9,
        f.message
            .lines()
            .next()
            .unwrap_or("")
            .trim_end_matches('.')
            .to_string()
            + ".",
        cx.profile,
        f.cand.seed,
        if f.signature.is_empty() { "-" } else { &f.signature },
    );
    let meta = obj_at(&mut t, &["metadata"]);
    meta.insert("name".into(), json!(name));
    meta.insert("description".into(), json!(description));
    let spec = obj_at(&mut t, &["spec"]);
    spec.insert("seed".into(), json!(f.cand.seed));
    if let Some(s) = &cx.scheduler {
        spec.insert("scheduler".into(), json!(s));
    }
    spec.insert("expect".into(), json!({"findings": f.run_invariants}));
    obj_at(&mut t, &["spec", "kubelet"]).insert("profile".into(), json!(cx.profile));
    t
}

/// Runs a shrink of one finding may spend (`hunt --shrink-runs`).
pub(crate) const SHRINK_RUNS: u64 = 400;

/// One finding's file: the shrunk scenario (or, when shrinking is off or fails, the
/// candidate as the hunt ran it) as YAML, and its size.
fn finding_file(f: &Found, cx: &Context<'_>, name: &str) -> (String, Shrunk) {
    let unshrunk = Shrunk {
        pods: f.sc.pods.len(),
        actions: f.sc.timeline.len(),
        events: f.events,
    };
    let hunt_doc = finding_doc(f, cx, name);
    if cx.shrink_runs == 0 {
        return (hunt_doc.to_yaml(), unshrunk);
    }
    let limits = Limits {
        max_runs: cx.shrink_runs,
        seeds: 0,
    };
    match shrink::shrink(&hunt_doc, f.cand.seed, &f.invariant, &limits) {
        Ok(mut done) => {
            // The hunt's story first, then the shrinker's.
            let said = done.doc.tree["metadata"]["description"]
                .as_str()
                .unwrap_or("")
                .trim_end()
                .to_owned();
            let hunt = hunt_doc.tree["metadata"]["description"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            done.doc.tree["metadata"]["description"] = json!(format!("{hunt} Then {said}\n"));
            done.doc.tree["metadata"]["name"] = json!(name);
            let size = Shrunk {
                pods: done.after.pods as usize,
                actions: done.after.actions as usize,
                events: done.after.events,
            };
            (done.doc.to_yaml(), size)
        }
        Err(_) => (hunt_doc.to_yaml(), unshrunk),
    }
}

/// Finding `f` as a standalone document (see [`finding_tree`]), unshrunk, with the user's
/// `--set` overrides written in so that it stands alone.
pub(crate) fn finding_doc(f: &Found, cx: &Context<'_>, name: &str) -> Doc {
    let tree = finding_tree(f, cx, name);
    let sets: Vec<(String, String)> = cx
        .sets
        .iter()
        .filter_map(|s| s.split_once('='))
        .map(|(p, v)| (p.trim().to_owned(), v.to_owned()))
        .collect();
    match Doc::from_text(name, &tree.to_string(), &sets) {
        Ok(d) => d,
        Err(_) => Doc::new(name, tree),
    }
}

/// Writes every finding's file under `DIR/findings/` (atomically), each shrunk first (in
/// parallel on `pool`; each shrink is deterministic, so the files are too), and returns
/// the JSON entries.
pub(crate) fn write_findings(
    s: &Search,
    cx: &Context<'_>,
    pool: &rayon::ThreadPool,
) -> Result<Vec<FindingJson>, String> {
    use rayon::prelude::*;
    let dir = cx.out.join("findings");
    if !s.findings.is_empty() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut n_by: BTreeMap<&str, u64> = BTreeMap::new();
    let names: Vec<String> = s
        .findings
        .iter()
        .map(|f| {
            let n = n_by.entry(&f.invariant).or_insert(0);
            *n += 1;
            format!("{}-{n}", f.invariant)
        })
        .collect();
    let files: Vec<(String, Shrunk)> = pool.install(|| {
        s.findings
            .par_iter()
            .zip(names.par_iter())
            .map(|(f, name)| finding_file(f, cx, name))
            .collect()
    });
    let mut out = Vec::new();
    for ((f, name), (text, size)) in s.findings.iter().zip(&names).zip(files) {
        let file = format!("{name}.yaml");
        let path: PathBuf = dir.join(&file);
        crate::outfile::write_bytes(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out.push(FindingJson {
            invariant: f.invariant.clone(),
            pod: f.pod.clone(),
            first_run: f.first_run,
            replay_file: format!("findings/{file}"),
            replay: crate::replay::replay_line(&path, f.cand.seed, &[], &None),
            shrunk: size,
            signature: f.signature.clone(),
        });
    }
    Ok(out)
}

/// Writes the candidates whose run panicked to `DIR/panics/panic-<n>.yaml`; returns their
/// replay lines.
pub(crate) fn write_panics(s: &Search, cx: &Context<'_>) -> Vec<String> {
    let dir = cx.out.join("panics");
    let mut lines = Vec::new();
    for (i, c) in s.panics.iter().enumerate() {
        let path = dir.join(format!("panic-{}.yaml", i + 1));
        let mut t = c.tree.clone();
        obj_at(&mut t, &["spec"]).insert("seed".into(), json!(c.seed));
        obj_at(&mut t, &["spec", "kubelet"]).insert("profile".into(), json!(cx.profile));
        let text = serde_json::to_string_pretty(&t).unwrap_or_default() + "\n";
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| crate::outfile::write_bytes(&path, text.as_bytes()));
        lines.push(match written {
            Ok(()) => crate::replay::replay_line(&path, c.seed, cx.sets, &None),
            Err(e) => format!("(cannot write {}: {e})", path.display()),
        });
    }
    lines
}
