//! `podsim diff`: where two runs part. Either one scenario and seed run on two sides (two
//! profiles, two schedulers, or `--set` overrides on the right side only), or two trace
//! files written by `podsim run --trace`. The transition streams are aligned record by
//! record; the first record that differs (in time or text) is the divergence, shown with
//! the common records before it. For scenario runs the per-pod outcomes (phase, reason,
//! restarts, deletion and removal times, findings) that differ follow, and each side's
//! findings.
//!
//! Exit codes as `diff`'s: 0 when the runs are identical, 1 when they differ, 2 on bad
//! input.

use crate::run::{Finding, PodSummary, RunOptions, RunOutput};
use crate::sim::trace::{first_difference as first_divergence, Record};
use crate::sim::Dur;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// `podsim diff`.
#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// One scenario file (run on both sides), or two trace files (`run --trace` output).
    #[arg(required = true, num_args = 1..=2, value_name = "SCENARIO | LEFT.trace RIGHT.trace")]
    pub inputs: Vec<PathBuf>,
    /// Seed of both runs (default: the scenario's `spec.seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Profile: once for both sides, twice for the left and the right side.
    #[arg(long = "profile", value_name = "P")]
    pub profiles: Vec<String>,
    /// Override a scenario field on the right side only (repeatable): the left side runs
    /// the scenario without it.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Override a scenario field on both sides (repeatable).
    #[arg(long = "set-both", value_name = "PATH=VALUE")]
    pub set_both: Vec<String>,
    /// Scheduler (random|fifo|pct:D): once for both sides, twice for the left and the
    /// right side.
    #[arg(long = "scheduler", value_name = "S")]
    pub schedulers: Vec<String>,
    /// Common transitions shown before the divergence.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub context: usize,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

/// One transition of a trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub index: u64,
    pub at_ns: u64,
    pub text: String,
}

impl Step {
    fn of(r: &Record) -> Step {
        Step {
            index: r.index,
            at_ns: r.at.0,
            text: r.text.clone(),
        }
    }
}

/// The first transition where the runs part.
#[derive(Clone, Debug, Serialize)]
pub struct Divergence {
    /// Index of the first differing transition (= the number of common ones).
    pub index: u64,
    /// Its time (ns): the earlier of the two sides' (a side that ended: the other's).
    pub at: u64,
    /// Each side's transition there (`null`: that side's trace ended).
    pub left: Option<Step>,
    pub right: Option<Step>,
    /// Up to `--context` common transitions before it, oldest first.
    pub before: Vec<Step>,
}

/// A pod object's outcome on one side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    pub uid: String,
    pub final_phase: String,
    /// The last phase the API server held (`finalPhase` is `Deleted` once the object is
    /// gone).
    pub last_phase: String,
    pub reason: Option<String>,
    /// Restarts of all its containers (init containers and sidecars included).
    pub restarts: u32,
    pub deletion_requested_at_ns: Option<u64>,
    pub removed_from_api_at_ns: Option<u64>,
    /// The invariants of the findings about the pod (by name), in order.
    pub findings: Vec<String>,
}

impl Outcome {
    /// The outcome without its UID (UIDs follow creation order, which may differ).
    fn compared(&self) -> Outcome {
        Outcome {
            uid: String::new(),
            ..self.clone()
        }
    }
}

/// A pod that ends differently (the n-th object of a name on one side is matched with the
/// n-th of that name on the other); `null` on a side that has no such object.
#[derive(Clone, Debug, Serialize)]
pub struct PodDiff {
    pub name: String,
    pub left: Option<Outcome>,
    pub right: Option<Outcome>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct SideFindings {
    pub left: Vec<Finding>,
    pub right: Vec<Finding>,
}

/// What ran on one side.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SideInfo {
    /// The replay line (scenario runs) or the trace file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub transitions: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_hash: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sides {
    pub left: SideInfo,
    pub right: SideInfo,
}

/// `podsim diff --json`.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// `null` when the transition streams are identical.
    pub divergence: Option<Divergence>,
    pub pods: Vec<PodDiff>,
    pub findings: SideFindings,
    pub identical: bool,
    pub sides: Sides,
}

/// One side, ready to compare.
struct Side {
    info: SideInfo,
    records: Vec<Record>,
    out: Option<RunOutput>,
}

fn divergence(a: &[Record], b: &[Record], context: usize) -> Option<Divergence> {
    let i = first_divergence(a, b)?;
    let (l, r) = (a.get(i).map(Step::of), b.get(i).map(Step::of));
    let at = match (&l, &r) {
        (Some(x), Some(y)) => x.at_ns.min(y.at_ns),
        (Some(x), None) | (None, Some(x)) => x.at_ns,
        (None, None) => 0,
    };
    Some(Divergence {
        index: i as u64,
        at,
        left: l,
        right: r,
        before: a[i.saturating_sub(context)..i]
            .iter()
            .map(Step::of)
            .collect(),
    })
}

fn outcome(p: &PodSummary, findings: &[Finding]) -> Outcome {
    let restarts = p
        .containers
        .iter()
        .chain(&p.init_containers)
        .map(|c| c.restarts)
        .sum();
    Outcome {
        uid: p.uid.clone(),
        final_phase: p.final_phase.to_owned(),
        last_phase: p.last_phase.to_owned(),
        reason: p.reason.clone(),
        restarts,
        deletion_requested_at_ns: p.deletion_requested_at_ns,
        removed_from_api_at_ns: p.removed_from_api_at_ns,
        findings: findings
            .iter()
            .filter(|f| f.pod == p.name)
            .map(|f| f.invariant.clone())
            .collect(),
    }
}

/// Pods that end differently, in the left side's order, then those only the right has.
fn pod_diffs(left: &RunOutput, right: &RunOutput) -> Vec<PodDiff> {
    // (name, occurrence) of each object.
    let keyed = |o: &RunOutput| -> Vec<((String, usize), Outcome)> {
        let mut seen: Vec<&str> = Vec::new();
        o.pods
            .iter()
            .map(|p| {
                let n = seen.iter().filter(|s| **s == p.name).count();
                seen.push(&p.name);
                ((p.name.clone(), n), outcome(p, &o.findings))
            })
            .collect()
    };
    let (l, r) = (keyed(left), keyed(right));
    let mut out = Vec::new();
    for (k, lo) in &l {
        let ro = r.iter().find(|(rk, _)| rk == k).map(|(_, o)| o);
        if ro.map(Outcome::compared) != Some(lo.compared()) {
            out.push(PodDiff {
                name: k.0.clone(),
                left: Some(lo.clone()),
                right: ro.cloned(),
            });
        }
    }
    for (k, ro) in &r {
        if !l.iter().any(|(lk, _)| lk == k) {
            out.push(PodDiff {
                name: k.0.clone(),
                left: None,
                right: Some(ro.clone()),
            });
        }
    }
    out
}

fn compare(left: Side, right: Side, context: usize) -> Diff {
    let divergence = divergence(&left.records, &right.records, context);
    let (pods, findings) = match (&left.out, &right.out) {
        (Some(l), Some(r)) => (
            pod_diffs(l, r),
            SideFindings {
                left: l.findings.clone(),
                right: r.findings.clone(),
            },
        ),
        _ => (Vec::new(), SideFindings::default()),
    };
    let same_findings = findings.left.len() == findings.right.len()
        && findings
            .left
            .iter()
            .zip(&findings.right)
            .all(|(a, b)| (&a.invariant, &a.pod, a.at_ns) == (&b.invariant, &b.pod, b.at_ns));
    Diff {
        identical: divergence.is_none() && pods.is_empty() && same_findings,
        divergence,
        pods,
        findings,
        sides: Sides {
            left: left.info,
            right: right.info,
        },
    }
}

/// Reads a trace file (`run --trace` JSON Lines: `i`, `atNs`, `rec`, `hash`).
fn read_trace(path: &Path) -> Result<Side, String> {
    let name = crate::outfile::display_name(path);
    let text = if crate::scenario::file::is_stdio(path) {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    }
    .map_err(|e| format!("cannot read trace {name}: {e}"))?;
    let mut records = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("{name}:{}: not a trace record ({what})", n + 1);
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(&e.to_string()))?;
        let at = v["atNs"].as_u64().ok_or_else(|| bad("no atNs"))?;
        let rec = v["rec"].as_str().ok_or_else(|| bad("no rec"))?;
        let hash = v["hash"]
            .as_str()
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .unwrap_or(0);
        records.push(Record {
            index: v["i"].as_u64().unwrap_or(records.len() as u64),
            at: crate::sim::SimTime(at),
            text: rec.to_string(),
            hash,
        });
    }
    Ok(Side {
        info: SideInfo {
            replay: None,
            file: Some(name),
            transitions: records.len() as u64,
            trace_hash: records.last().map(|r| format!("{:016x}", r.hash)),
        },
        records,
        out: None,
    })
}

/// The settings of one side of a scenario diff.
struct Setup {
    sets: Vec<String>,
    profile: Option<String>,
    scheduler: Option<String>,
}

/// One value for both sides, or two for the left and the right.
fn per_side(flag: &str, given: &[String]) -> Result<(Option<String>, Option<String>), String> {
    match given {
        [] => Ok((None, None)),
        [x] => Ok((Some(x.clone()), Some(x.clone()))),
        [x, y] => Ok((Some(x.clone()), Some(y.clone()))),
        _ => Err(format!(
            "{flag} is given {} times: give it once (both sides) or twice (left, right)",
            given.len()
        )),
    }
}

fn setups(a: &DiffArgs) -> Result<(Setup, Setup), String> {
    let canon =
        |p: Option<String>, f: fn(&str) -> Result<String, String>| p.map(|p| f(&p)).transpose();
    let profile = |p: &str| crate::sweep::profile_flag(p).map(str::to_owned);
    let (pl, pr) = per_side("--profile", &a.profiles)?;
    let (sl, sr) = per_side("--scheduler", &a.schedulers)?;
    let mut right_sets = a.set_both.clone();
    right_sets.extend(a.set.iter().cloned());
    Ok((
        Setup {
            sets: a.set_both.clone(),
            profile: canon(pl, profile)?,
            scheduler: canon(sl, crate::sweep::scheduler_flag)?,
        },
        Setup {
            sets: right_sets,
            profile: canon(pr, profile)?,
            scheduler: canon(sr, crate::sweep::scheduler_flag)?,
        },
    ))
}

fn overrides(s: &Setup) -> Result<Vec<(String, String)>, String> {
    let mut o = Vec::new();
    for x in &s.sets {
        match x.split_once('=') {
            Some((p, v)) if !p.trim().is_empty() => o.push((p.trim().to_string(), v.to_string())),
            _ => return Err(format!("--set {x:?}: expected PATH=VALUE")),
        }
    }
    if let Some(p) = &s.profile {
        o.push(("spec.kubelet.profile".to_string(), p.clone()));
    }
    if let Some(x) = &s.scheduler {
        o.push(("spec.scheduler".to_string(), x.clone()));
    }
    Ok(o)
}

/// Loads one side's scenario; its notes join `notes` (each once, for both sides).
fn load(
    path: &Path,
    s: &Setup,
    notes: &mut Vec<String>,
) -> Result<Arc<crate::scenario::Scenario>, String> {
    let o = overrides(s)?;
    match crate::load(path, &o) {
        Ok(l) => {
            for n in l.notes.iter().map(|n| n.to_string()) {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            Ok(Arc::new(l.scenario))
        }
        Err(e) => Err(e.to_string().trim_end().to_string()),
    }
}

fn run_side(path: &Path, s: &Setup, sc: Arc<crate::scenario::Scenario>, seed: u64) -> Side {
    let replay =
        crate::replay::replay_line_with(path, seed, &s.sets, &s.profile, s.scheduler.as_deref());
    let opts = RunOptions {
        seed,
        keep_trace: false,
        replay: replay.clone(),
        no_oracle: false,
        history: crate::run::FindingHistory::Rerun,
    };
    let mut records = Vec::new();
    let out = crate::run::run_streaming(sc, &opts, &mut |batch| {
        records.extend_from_slice(batch);
    });
    Side {
        info: SideInfo {
            replay: Some(replay),
            file: None,
            transitions: records.len() as u64,
            trace_hash: Some(out.trace_hash.clone()),
        },
        records,
        out: Some(out),
    }
}

/// Builds both sides from the arguments: bad input is `Err` with the message to print.
fn sides(a: &DiffArgs) -> Result<(Side, Side), String> {
    if let [l, r] = a.inputs.as_slice() {
        let scenario_flags = a.seed.is_some()
            || !a.profiles.is_empty()
            || !a.set.is_empty()
            || !a.set_both.is_empty()
            || !a.schedulers.is_empty();
        if scenario_flags {
            return Err("two trace files are compared as they are: --seed, --profile, --set, --set-both and --scheduler apply to a scenario".into());
        }
        if crate::scenario::file::is_stdio(l) && crate::scenario::file::is_stdio(r) {
            return Err("at most one of the trace files can be standard input (-)".into());
        }
        return Ok((read_trace(l)?, read_trace(r)?));
    }
    let path = &a.inputs[0];
    let (ls, rs) = setups(a)?;
    let mut notes = Vec::new();
    let lsc = load(path, &ls, &mut notes)?;
    let rsc = load(path, &rs, &mut notes)?;
    for n in &notes {
        eprintln!("{n}");
    }
    let seed = a.seed.unwrap_or(lsc.seed);
    Ok((
        run_side(path, &ls, lsc, seed),
        run_side(path, &rs, rsc, seed),
    ))
}

/// Runs `podsim diff`.
pub fn command(a: DiffArgs) -> ExitCode {
    let (left, right) = match sides(&a) {
        Ok(s) => s,
        Err(e) => {
            if e.starts_with("error:") {
                eprintln!("{e}");
            } else {
                eprintln!("error: {e}");
            }
            return ExitCode::from(2);
        }
    };
    let d = compare(left, right, a.context);
    if a.json {
        match serde_json::to_string_pretty(&d) {
            Ok(s) => crate::outfile::stdout_write(format_args!("{s}\n")),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        crate::outfile::stdout_write(format_args!("{}", text(&d)));
    }
    if d.identical {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn time(ns: u64) -> String {
    Dur(ns).to_string()
}

fn side_name(s: &SideInfo) -> String {
    s.replay
        .clone()
        .or_else(|| s.file.clone())
        .unwrap_or_default()
}

/// The text report.
pub(crate) fn text(d: &Diff) -> String {
    let mut s = format!(
        "left:  {}\nright: {}\n",
        side_name(&d.sides.left),
        side_name(&d.sides.right)
    );
    match &d.divergence {
        None => s.push_str(&format!(
            "no divergence: the same {} transitions\n",
            d.sides.left.transitions
        )),
        Some(v) => s.push_str(&divergence_text(v)),
    }
    if d.sides.left.replay.is_none() {
        s.push_str("(trace files hold no pod outcomes or findings)\n");
        return s;
    }
    if !d.pods.is_empty() {
        s.push_str("pods that end differently:\n");
        for p in &d.pods {
            s.push_str(&format!("  {}\n", p.name));
            s.push_str(&format!("    left:  {}\n", outcome_text(p.left.as_ref())));
            s.push_str(&format!("    right: {}\n", outcome_text(p.right.as_ref())));
        }
    } else if d.divergence.is_some() {
        s.push_str("every pod ends the same way\n");
    }
    s.push_str("findings:\n");
    for (label, fs) in [("left", &d.findings.left), ("right", &d.findings.right)] {
        if fs.is_empty() {
            s.push_str(&format!("  {label}: none\n"));
            continue;
        }
        s.push_str(&format!("  {label}: {}\n", fs.len()));
        for f in fs {
            s.push_str(&format!(
                "    {:>14}  {} {}\n",
                time(f.at_ns),
                f.pod,
                f.invariant
            ));
        }
    }
    s
}

fn divergence_text(v: &Divergence) -> String {
    let mut s = format!(
        "first divergence at transition #{} ({}; {} in common):\n",
        v.index,
        time(v.at),
        v.index
    );
    for b in &v.before {
        s.push_str(&format!(
            "  #{:<6} {:>14}  {}\n",
            b.index,
            time(b.at_ns),
            b.text
        ));
    }
    let cell = |x: &Option<Step>| {
        x.as_ref().map_or("<end of trace>".to_string(), |x| {
            format!("{}  {}", time(x.at_ns), x.text)
        })
    };
    let (l, r) = (cell(&v.left), cell(&v.right));
    let w = l.chars().count().max("left".len());
    s.push_str(&format!("  {:7} {:w$} | right\n", "", "left"));
    s.push_str(&format!("  #{:<6} {l:w$} | {r}\n", v.index));
    s
}

fn outcome_text(o: Option<&Outcome>) -> String {
    let Some(o) = o else {
        return "(no such pod object)".to_string();
    };
    let mut s = o.final_phase.clone();
    if o.last_phase != o.final_phase {
        s.push_str(&format!(" (last phase {})", o.last_phase));
    }
    if let Some(r) = &o.reason {
        s.push_str(&format!(", reason {r}"));
    }
    s.push_str(&format!(
        ", {}",
        crate::report::plural(u64::from(o.restarts), "restart")
    ));
    if let Some(t) = o.deletion_requested_at_ns {
        s.push_str(&format!(", deletion requested at {}", time(t)));
    }
    if let Some(t) = o.removed_from_api_at_ns {
        s.push_str(&format!(", removed at {}", time(t)));
    }
    if o.findings.is_empty() {
        s.push_str(", no findings");
    } else {
        s.push_str(&format!(", findings: {}", o.findings.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::SimTime;

    fn recs(xs: &[(u64, &str)]) -> Vec<Record> {
        xs.iter()
            .enumerate()
            .map(|(i, (at, t))| Record {
                index: i as u64,
                at: SimTime(*at),
                text: t.to_string(),
                hash: 0,
            })
            .collect()
    }

    #[test]
    fn the_first_differing_record_is_the_divergence() {
        let a = recs(&[(0, "a"), (1, "b"), (2, "c")]);
        let b = recs(&[(0, "a"), (1, "b"), (2, "x")]);
        assert_eq!(first_divergence(&a, &a), None);
        assert_eq!(first_divergence(&a, &b), Some(2));
        // The same text at another time differs too.
        let c = recs(&[(0, "a"), (5, "b")]);
        assert_eq!(first_divergence(&a, &c), Some(1));
        // A trace that stops early diverges where it ends.
        assert_eq!(first_divergence(&a, &a[..2]), Some(2));
        let d = divergence(&a, &b, 1).unwrap();
        assert_eq!(d.before.len(), 1);
        assert_eq!(d.before[0].text, "b");
        assert_eq!(d.left.unwrap().text, "c");
        assert_eq!(d.right.unwrap().text, "x");
        assert_eq!(d.at, 2);
    }

    #[test]
    fn a_side_flag_is_given_once_or_twice() {
        assert_eq!(per_side("--profile", &[]).unwrap(), (None, None));
        let one = per_side("--profile", &["a".into()]).unwrap();
        assert_eq!(one, (Some("a".into()), Some("a".into())));
        let two = per_side("--profile", &["a".into(), "b".into()]).unwrap();
        assert_eq!(two, (Some("a".into()), Some("b".into())));
        let e = per_side("--profile", &["a".into(), "b".into(), "c".into()]).unwrap_err();
        assert!(e.contains("3 times"), "{e}");
    }
}
