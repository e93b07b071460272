//! What a hunt hands back: one scenario file per distinct finding,
//! `DIR/findings/<invariant>-<n>.yaml`, and the `--json` summary.

use super::search::{Found, Search, Strategy};
use super::tree::obj_at;
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

/// Writes every finding's file under `DIR/findings/` (atomically), and returns the JSON
/// entries. The files are JSON, which is YAML.
pub(crate) fn write_findings(s: &Search, cx: &Context<'_>) -> Result<Vec<FindingJson>, String> {
    let dir = cx.out.join("findings");
    if !s.findings.is_empty() {
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let mut n_by: BTreeMap<&str, u64> = BTreeMap::new();
    let mut out = Vec::new();
    for f in &s.findings {
        let n = n_by.entry(&f.invariant).or_insert(0);
        *n += 1;
        let file = format!("{}-{n}.yaml", f.invariant);
        let path: PathBuf = dir.join(&file);
        let tree = finding_tree(f, cx, &format!("{}-{n}", f.invariant));
        let mut text = serde_json::to_string_pretty(&tree).map_err(|e| e.to_string())?;
        text.push('\n');
        crate::outfile::write_bytes(&path, text.as_bytes())
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        out.push(FindingJson {
            invariant: f.invariant.clone(),
            pod: f.pod.clone(),
            first_run: f.first_run,
            replay_file: format!("findings/{file}"),
            replay: crate::replay::replay_line(&path, f.cand.seed, cx.sets, &None),
            shrunk: Shrunk {
                pods: f.sc.pods.len(),
                actions: f.sc.timeline.len(),
                events: f.events,
            },
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
