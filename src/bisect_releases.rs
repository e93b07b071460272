//! `podsim bisect --releases`: the first release where a scenario's outcome changes.
//!
//! The scenario runs under every release profile (oldest first) on the same seeds (common
//! random numbers), keeping its own `behaviours` and `featureGates`. Per release: the runs
//! with a finding, the rate with a 95% Wilson interval, the runs reporting each invariant,
//! and per pod the distribution of its outcome (final phase, the last phase of a pod gone
//! from the API, and the reason). Two neighbouring releases *differ* when one invariant's
//! rate, or one pod's share of one outcome, differs by a two-sided Fisher exact test at
//! p < 0.01; for each such pair the switches and feature gates whose values differ between
//! the two releases are listed as the candidate causes. A release whose gates refuse a
//! feature the scenario uses is skipped (named with the gate) and the comparison bridges it.

use crate::bisect::fisher_two_sided;
use crate::kubelet::gates;
use crate::kubelet::profile::SWITCHES;
use crate::kubelet::release::RELEASES as PROFILES;
use crate::results::wilson;
use crate::run::{run, RunOptions};
use crate::scenario::Scenario;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The significance level of every comparison.
const ALPHA: f64 = 0.01;

/// `--seeds N` checked against the run cap ([`crate::bisect::MAX_RUNS`]).
pub fn check_seeds(seeds: u64) -> Result<(), String> {
    let v = PROFILES.len() as u64;
    match v.checked_mul(seeds) {
        Some(n) if n <= crate::bisect::MAX_RUNS => Ok(()),
        _ => Err(format!(
            "--seeds {seeds}: bisect --releases would make more than the {} runs it may make ({v} releases x {seeds} seeds)",
            crate::bisect::MAX_RUNS
        )),
    }
}

/// A result as pretty JSON (with a final newline) or as its `table`.
pub(crate) fn render<T: Serialize>(
    b: &T,
    json: bool,
    table: fn(&T) -> String,
) -> Result<String, String> {
    if json {
        serde_json::to_string_pretty(b)
            .map(|s| s + "\n")
            .map_err(|e| e.to_string())
    } else {
        Ok(table(b))
    }
}

/// One release's runs.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseRuns {
    pub release: String,
    /// Why the release cannot run the scenario (a feature gate), if it cannot.
    pub skipped: Option<String>,
    pub runs: u64,
    /// Runs with any finding.
    pub failing: u64,
    pub rate: f64,
    pub ci95: [f64; 2],
    /// Runs reporting each invariant.
    pub findings: BTreeMap<String, u64>,
    /// Per pod (name; a second object of one name gets `#2`): outcome -> runs.
    pub outcomes: BTreeMap<String, BTreeMap<String, u64>>,
    pub first_failing_replay: Option<String>,
}

/// One difference between two neighbouring releases that both ran.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub from: String,
    pub to: String,
    /// What changed: `invariant NAME: a/n -> b/n (p ...)` or `pod P: OUTCOME a/n -> b/n`.
    pub evidence: Vec<String>,
    /// Switches whose values differ: name -> [from, to].
    pub switches: BTreeMap<String, [bool; 2]>,
    /// Feature gates whose values differ (`null`: the release has no such gate yet; a
    /// removed gate counts as on), by the gate's newest name.
    pub gates: BTreeMap<String, [Option<bool>; 2]>,
}

/// The whole result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReleaseBisect {
    pub scenario: String,
    pub seeds: u64,
    pub releases: Vec<ReleaseRuns>,
    /// Every pair of neighbouring releases (skipped ones bridged) whose outcome differs.
    pub changes: Vec<Change>,
    /// The release of the first change (`changes[0].to`), if any.
    pub first_change: Option<String>,
}

#[derive(Default)]
struct Tally {
    failing: u64,
    findings: BTreeMap<String, u64>,
    outcomes: BTreeMap<String, BTreeMap<String, u64>>,
    first_failing: Option<u64>,
}

impl Tally {
    fn merge(mut a: Tally, b: Tally) -> Tally {
        a.failing += b.failing;
        for (k, n) in b.findings {
            *a.findings.entry(k).or_insert(0) += n;
        }
        for (pod, m) in b.outcomes {
            let e = a.outcomes.entry(pod).or_default();
            for (o, n) in m {
                *e.entry(o).or_insert(0) += n;
            }
        }
        a.first_failing = match (a.first_failing, b.first_failing) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        a
    }
}

/// A pod's outcome in one run: `Failed, reason Shutdown`, `Deleted (last Running)`.
fn outcome(p: &crate::run::PodSummary) -> String {
    let mut s = if p.final_phase == "Deleted" {
        format!("Deleted (last {})", p.last_phase)
    } else {
        p.final_phase.to_owned()
    };
    if let Some(r) = &p.reason {
        s.push_str(&format!(", reason {r}"));
    }
    s
}

fn one_run(sc: &Arc<Scenario>, seed: u64) -> Tally {
    let out = run(
        sc.clone(),
        &RunOptions {
            seed,
            keep_trace: false,
            replay: String::new(),
            no_oracle: false,
            // Only which invariants a run broke is read: no history.
            history: crate::run::FindingHistory::Omitted,
        },
    );
    let mut findings: BTreeMap<String, u64> = BTreeMap::new();
    for f in &out.findings {
        findings.insert(f.invariant.clone(), 1);
    }
    let mut outcomes: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    for p in &out.pods {
        let n = seen.entry(p.name.as_str()).or_insert(0);
        *n += 1;
        let key = if *n == 1 {
            p.name.clone()
        } else {
            format!("{}#{n}", p.name)
        };
        outcomes.entry(key).or_default().insert(outcome(p), 1);
    }
    let failing = !findings.is_empty();
    Tally {
        failing: u64::from(failing),
        findings,
        outcomes,
        first_failing: failing.then_some(seed),
    }
}

/// Runs `sc` (loaded from `path` with the `--set` flags `base_sets`) under every release
/// profile on seeds 1..=`seeds`.
pub fn bisect_releases(
    path: &Path,
    base_sets: &[String],
    sc: &Scenario,
    seeds: u64,
    pool: &rayon::ThreadPool,
) -> ReleaseBisect {
    let specs: Vec<(String, Result<Arc<Scenario>, String>)> = PROFILES
        .iter()
        .map(|p| {
            let s = match gates::refusal(sc, p) {
                Some(why) => Err(why),
                None => {
                    let mut s = sc.clone();
                    s.kubelet.profile = (*p).to_owned();
                    Ok(Arc::new(s))
                }
            };
            ((*p).to_owned(), s)
        })
        .collect();
    let tallies: Vec<Option<Tally>> = pool.install(|| {
        specs
            .par_iter()
            .map(|(_, s)| {
                let s = s.as_ref().ok()?;
                Some(
                    (1..=seeds)
                        .into_par_iter()
                        .map(|seed| one_run(s, seed))
                        .reduce(Tally::default, Tally::merge),
                )
            })
            .collect()
    });
    let mut releases = Vec::new();
    for ((p, s), t) in specs.iter().zip(tallies) {
        let t = t.unwrap_or_default();
        let mut sets = base_sets.to_vec();
        sets.push(format!("spec.kubelet.profile={p}"));
        let (lo, hi) = wilson(t.failing, seeds);
        let ran = s.is_ok();
        releases.push(ReleaseRuns {
            release: p.clone(),
            skipped: s.as_ref().err().cloned(),
            runs: if ran { seeds } else { 0 },
            failing: t.failing,
            rate: if ran {
                t.failing as f64 / seeds as f64
            } else {
                0.0
            },
            ci95: if ran { [lo, hi] } else { [0.0, 0.0] },
            findings: t.findings,
            outcomes: t.outcomes,
            first_failing_replay: t
                .first_failing
                .map(|seed| crate::replay::replay_line(path, seed, &sets, &None)),
        });
    }
    let ran: Vec<&ReleaseRuns> = releases.iter().filter(|r| r.skipped.is_none()).collect();
    let changes: Vec<Change> = ran
        .windows(2)
        .filter_map(|w| compare(sc, w[0], w[1], seeds))
        .collect();
    ReleaseBisect {
        scenario: sc.name.clone(),
        seeds,
        first_change: changes.first().map(|c| c.to.clone()),
        releases,
        changes,
    }
}

/// The difference between releases `a` and `b` (both ran `n` seeds), if any.
fn compare(sc: &Scenario, a: &ReleaseRuns, b: &ReleaseRuns, n: u64) -> Option<Change> {
    let mut evidence = Vec::new();
    let get = |m: &BTreeMap<String, u64>, k: &str| m.get(k).copied().unwrap_or(0);
    let mut names: Vec<&String> = a.findings.keys().chain(b.findings.keys()).collect();
    names.sort();
    names.dedup();
    for inv in names {
        let (x, y) = (get(&a.findings, inv), get(&b.findings, inv));
        let p = fisher_two_sided(x, n, y, n);
        if p < ALPHA {
            evidence.push(format!("invariant {inv}: {x}/{n} -> {y}/{n} (p {p:.1e})"));
        }
    }
    let empty = BTreeMap::new();
    let mut pods: Vec<&String> = a.outcomes.keys().chain(b.outcomes.keys()).collect();
    pods.sort();
    pods.dedup();
    for pod in pods {
        let (oa, ob) = (
            a.outcomes.get(pod).unwrap_or(&empty),
            b.outcomes.get(pod).unwrap_or(&empty),
        );
        let mut kinds: Vec<&String> = oa.keys().chain(ob.keys()).collect();
        kinds.sort();
        kinds.dedup();
        for o in kinds {
            let (x, y) = (get(oa, o), get(ob, o));
            let p = fisher_two_sided(x, n, y, n);
            if p < ALPHA {
                evidence.push(format!("pod {pod}: {o} {x}/{n} -> {y}/{n} (p {p:.1e})"));
            }
        }
    }
    if evidence.is_empty() {
        return None;
    }
    let k = &sc.kubelet;
    let (ba, bb) = (
        gates::resolve(&a.release, &k.feature_gates, &k.behaviours),
        gates::resolve(&b.release, &k.feature_gates, &k.behaviours),
    );
    let switches = SWITCHES
        .iter()
        .filter(|s| ba.on(s.sw) != bb.on(s.sw))
        .map(|s| (s.name.to_owned(), [ba.on(s.sw), bb.on(s.sw)]))
        .collect();
    let gates = gates::GATES
        .iter()
        .map(|g| {
            let v = |r: &str| g.state(r, &k.feature_gates);
            (g.name, [v(&a.release), v(&b.release)])
        })
        .filter(|(_, [x, y])| x != y)
        .map(|(n, v)| (n.to_owned(), v))
        .collect();
    Some(Change {
        from: a.release.clone(),
        to: b.release.clone(),
        evidence,
        switches,
        gates,
    })
}

/// The printed report.
pub fn table(b: &ReleaseBisect) -> String {
    let mut s = format!(
        "bisect --releases {}: {} per release (seeds 1-{}), releases oldest first\n\n",
        b.scenario,
        crate::report::plural(b.seeds, "seed"),
        b.seeds
    );
    let w = b
        .releases
        .iter()
        .map(|r| r.release.len())
        .max()
        .unwrap_or(0);
    s.push_str(&format!(
        "{:w$}  {:>9}  {:>7}  {:>17}  invariants\n",
        "release", "failing", "rate", "95% interval"
    ));
    for r in &b.releases {
        if let Some(why) = &r.skipped {
            s.push_str(&format!("{:w$}  skipped: {why}\n", r.release));
            continue;
        }
        let inv: Vec<String> = r.findings.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s.push_str(&format!(
            "{:w$}  {:>4}/{:<4}  {:>6.1}%  [{:>5.1}%, {:>5.1}%]  {}\n",
            r.release,
            r.failing,
            r.runs,
            100.0 * r.rate,
            100.0 * r.ci95[0],
            100.0 * r.ci95[1],
            if inv.is_empty() {
                "-".to_owned()
            } else {
                inv.join(", ")
            }
        ));
    }
    s.push_str("\noutcome per pod (runs):\n");
    for r in b.releases.iter().filter(|r| r.skipped.is_none()) {
        s.push_str(&format!("  {}:\n", r.release));
        for (pod, m) in &r.outcomes {
            let o: Vec<String> = m.iter().map(|(k, n)| format!("{k} {n}")).collect();
            s.push_str(&format!("    {pod}: {}\n", o.join("; ")));
        }
    }
    s.push('\n');
    match &b.first_change {
        None => s.push_str(
            "the outcome does not change between neighbouring releases (Fisher exact test, p < 0.01)\n",
        ),
        Some(r) => s.push_str(&format!("first release where the outcome changes: {r}\n")),
    }
    for c in &b.changes {
        s.push_str(&format!("\n{} -> {}:\n", c.from, c.to));
        for e in &c.evidence {
            s.push_str(&format!("  {e}\n"));
        }
        let sw: Vec<String> = c
            .switches
            .iter()
            .map(|(k, [x, y])| format!("{k} {x}->{y}"))
            .collect();
        let show = |v: &Option<bool>| v.map_or("absent".to_owned(), |b| b.to_string());
        let g: Vec<String> = c
            .gates
            .iter()
            .map(|(k, [x, y])| format!("{k} {}->{}", show(x), show(y)))
            .collect();
        s.push_str(&format!(
            "  candidate causes: switches {}; feature gates {}\n",
            if sw.is_empty() {
                "none".into()
            } else {
                sw.join(", ")
            },
            if g.is_empty() {
                "none".into()
            } else {
                g.join(", ")
            }
        ));
    }
    if b.releases.iter().any(|r| r.first_failing_replay.is_some()) {
        s.push_str("\nfirst failing run per release:\n");
    }
    for r in &b.releases {
        if let Some(rep) = &r.first_failing_replay {
            s.push_str(&format!("  {}: {rep}\n", r.release));
        }
    }
    s
}
