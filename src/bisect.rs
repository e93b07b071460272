//! `podsim bisect`: which behaviour change causes or cures a scenario's findings.
//!
//! The scenario runs on the same seeds (common random numbers) under its own profile (the
//! base), under every other profile, and with every built switch flipped alone from the
//! base. For each variant the table gives the runs with a finding, the rate with a 95%
//! Wilson interval, the invariants reported and the first failing seed's replay line.
//!
//! The *outcome* is a run reporting one of the scenario's target invariants: those its
//! `spec.expect` names (`findings` and `old.findings`), or any invariant when it names none.
//! A variant *changes the outcome* when its outcome rate differs from the base's by a
//! two-sided Fisher exact test at p < 0.01 (a strict level, since ~25 variants are
//! compared); the switches that do are named at the end. Invariants outside the target
//! whose rate changes as much are listed per variant as side effects.

use crate::kubelet::profile::{release_of, SWITCHES};
use crate::kubelet::release::RELEASES;
use crate::results::wilson;
use crate::run::{run, RunOptions};
use crate::scenario::Scenario;
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// One variant: a profile, or the base with one switch flipped.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// `profile v1.22` or `switch name=false`.
    pub label: String,
    pub profile: String,
    /// The `--set` flags that reproduce the variant on top of the scenario.
    pub sets: Vec<String>,
    pub runs: u64,
    /// Runs with an outcome finding (a target invariant, or any when there is no target).
    pub failing: u64,
    pub rate: f64,
    pub ci95: [f64; 2],
    /// Runs reporting each invariant.
    pub findings: BTreeMap<String, u64>,
    pub first_failing_replay: Option<String>,
    /// Fisher exact two-sided p-value against the base (1 for the base itself).
    pub p_value: f64,
    pub changes_outcome: bool,
    /// Invariants this variant reported that its profile does not keep but the base's
    /// profile does (`podsim invariants` lists each invariant's profiles): the historical
    /// behaviour of that release, expected on it.
    pub not_kept: Vec<String>,
    /// A profile variant that changes the outcome only through `not_kept` invariants: with
    /// them left out of both sides the rates do not differ (p >= 0.01).
    pub expected_on_profile: bool,
    /// Invariants outside the target whose rate differs from the base's (p < 0.01).
    pub side_effects: Vec<String>,
}

/// The whole result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Bisect {
    pub scenario: String,
    pub seeds: u64,
    pub base_profile: String,
    /// The target invariants (empty: any finding is the outcome).
    pub target: Vec<String>,
    pub variants: Vec<Variant>,
    /// Switches whose flip changes the outcome.
    pub culprits: Vec<String>,
    /// Variants not run: their profile's feature gates refuse a feature the scenario uses
    /// (`[label, why]`).
    pub skipped: Vec<[String; 2]>,
}

/// The most runs one bisection may make (variants x seeds): as for a sweep
/// ([`crate::results::MAX_RUNS`]); the Fisher test also keeps a table of 2 x seeds numbers.
pub const MAX_RUNS: u64 = crate::results::MAX_RUNS;

/// How many variants a bisection compares (the base, every other profile, every built
/// switch flipped), for the run cap checked before any run.
pub fn variant_count() -> u64 {
    (RELEASES.len() + SWITCHES.iter().filter(|s| s.built).count()) as u64
}

/// `--seeds N` checked against [`MAX_RUNS`].
pub fn check_seeds(seeds: u64) -> Result<(), String> {
    let v = variant_count();
    match v.checked_mul(seeds) {
        Some(n) if n <= MAX_RUNS => Ok(()),
        n => Err(format!(
            "--seeds {seeds}: bisect would make {} runs ({v} variants x {seeds} seeds), more than the {MAX_RUNS} runs it may make",
            n.map_or("more than 2^64".to_string(), |n| n.to_string())
        )),
    }
}

/// The runs of one variant, counted.
#[derive(Default)]
struct Tally {
    failing: u64,
    /// Per release (index in `RELEASES`): runs failing when the invariants that profile
    /// does not keep but the base's profile does are left out.
    failing_without: [u64; RELEASES.len()],
    /// Runs reporting each invariant.
    findings: BTreeMap<String, u64>,
    /// The lowest failing seed.
    first_failing: Option<u64>,
}

impl Tally {
    fn of(
        seed: u64,
        findings: &[String],
        failing: bool,
        failing_without: [bool; RELEASES.len()],
    ) -> Tally {
        Tally {
            failing: u64::from(failing),
            failing_without: failing_without.map(u64::from),
            findings: findings.iter().map(|f| (f.clone(), 1)).collect(),
            first_failing: failing.then_some(seed),
        }
    }

    fn merge(mut a: Tally, b: Tally) -> Tally {
        a.failing += b.failing;
        for (x, y) in a.failing_without.iter_mut().zip(b.failing_without) {
            *x += y;
        }
        for (k, n) in b.findings {
            *a.findings.entry(k).or_insert(0) += n;
        }
        a.first_failing = match (a.first_failing, b.first_failing) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        a
    }
}

struct Spec {
    label: String,
    profile: String,
    sets: Vec<String>,
    sc: Arc<Scenario>,
}

/// Whether `profile` keeps `invariant` (a finding the run reports itself, such as
/// run-limit-reached, is kept everywhere).
fn keeps(profile: &str, invariant: &str) -> bool {
    crate::oracle::invariants::INVARIANTS
        .iter()
        .find(|i| i.name == invariant)
        .is_none_or(|i| i.profiles.contains(&release_of(profile)))
}

/// The invariants `profile` does not keep but `base` does, among `findings`.
fn not_kept<'a>(
    base: &str,
    profile: &str,
    findings: impl Iterator<Item = &'a String>,
) -> Vec<String> {
    findings
        .filter(|f| keeps(base, f) && !keeps(profile, f))
        .cloned()
        .collect()
}

/// The variants: the base, every other profile whose feature gates allow what the
/// scenario uses (the others come back as `[label, why]`), every built switch flipped from
/// the base.
fn specs(sc: &Scenario) -> (Vec<Spec>, Vec<[String; 2]>) {
    let mut skipped = Vec::new();
    let base_profile = sc.kubelet.profile.clone();
    let base_b = crate::kubelet::gates::resolve(
        &base_profile,
        &sc.kubelet.feature_gates,
        &sc.kubelet.behaviours,
    );
    let mut specs = vec![Spec {
        label: format!("base (profile {base_profile})"),
        profile: base_profile.clone(),
        sets: Vec::new(),
        sc: Arc::new(sc.clone()),
    }];
    // Every other release, by its release name (`current` and the newest release are one
    // point: the base).
    for p in RELEASES.iter().filter(|p| **p != release_of(&base_profile)) {
        if let Some(why) = crate::kubelet::gates::refusal(sc, p) {
            skipped.push([format!("profile {p}"), why]);
            continue;
        }
        let mut s = sc.clone();
        s.kubelet.profile = (*p).to_owned();
        specs.push(Spec {
            label: format!("profile {p}"),
            profile: (*p).to_owned(),
            sets: vec![format!("spec.kubelet.profile={p}")],
            sc: Arc::new(s),
        });
    }
    for sw in SWITCHES.iter().filter(|s| s.built) {
        let v = !base_b.on(sw.sw);
        let mut s = sc.clone();
        s.kubelet.behaviours.insert(sw.name.to_owned(), v);
        specs.push(Spec {
            label: format!("switch {}={v}", sw.name),
            profile: base_profile.clone(),
            sets: vec![format!("spec.kubelet.behaviours.{}={v}", sw.name)],
            sc: Arc::new(s),
        });
    }
    (specs, skipped)
}

/// Runs the bisection of `sc` (loaded from `path` with the `--set` flags `base_sets`) over
/// seeds 1..=`seeds`.
pub fn bisect(
    path: &Path,
    base_sets: &[String],
    sc: &Scenario,
    seeds: u64,
    pool: &rayon::ThreadPool,
) -> Bisect {
    let base_profile = sc.kubelet.profile.clone();
    let mut target: Vec<String> = sc
        .expect
        .iter()
        .flat_map(|e| {
            e.findings
                .iter()
                .chain(e.old.iter().flat_map(|o| o.findings.iter()))
                .cloned()
        })
        .collect();
    target.sort();
    target.dedup();
    let hit = |f: &[String]| {
        if target.is_empty() {
            !f.is_empty()
        } else {
            f.iter().any(|x| target.contains(x))
        }
    };
    let (specs, skipped) = specs(sc);
    // Per variant, the runs fold into bounded counts (the seeds stream; nothing is kept
    // per run); the fold is order-independent, so the result never depends on threads.
    let tallies: Vec<Tally> = pool.install(|| {
        specs
            .par_iter()
            .map(|spec| {
                (1..=seeds)
                    .into_par_iter()
                    .map(|seed| {
                        let out = run(
                            spec.sc.clone(),
                            &RunOptions {
                                seed,
                                keep_trace: false,
                                replay: String::new(),
                                no_oracle: false,
                                // Only which invariants a run broke is read: no history.
                                history: crate::run::FindingHistory::Omitted,
                            },
                        );
                        let mut f: Vec<String> =
                            out.findings.into_iter().map(|f| f.invariant).collect();
                        f.sort();
                        f.dedup();
                        let without = RELEASES.map(|p| {
                            let left_out = not_kept(&base_profile, p, f.iter());
                            let rest: Vec<String> = f
                                .iter()
                                .filter(|x| !left_out.contains(x))
                                .cloned()
                                .collect();
                            hit(&rest)
                        });
                        Tally::of(seed, &f, hit(&f), without)
                    })
                    .reduce(Tally::default, Tally::merge)
            })
            .collect()
    });
    let base_without = tallies[0].failing_without;
    let mut variants = Vec::new();
    for (spec, t) in specs.iter().zip(tallies) {
        // A profile variant's rate with the invariants it does not keep left out, and the
        // base's counted the same way.
        let without = RELEASES
            .iter()
            .position(|p| *p == spec.profile && spec.label.starts_with("profile "))
            .map(|i| (base_without[i], t.failing_without[i]));
        let (failing, findings) = (t.failing, t.findings);
        let not_kept = not_kept(&base_profile, &spec.profile, findings.keys());
        let mut sets = base_sets.to_vec();
        sets.extend(spec.sets.iter().cloned());
        let first = t
            .first_failing
            .map(|seed| crate::replay::replay_line(path, seed, &sets, &None));
        let (lo, hi) = wilson(failing, seeds);
        variants.push(Variant {
            label: spec.label.clone(),
            profile: spec.profile.clone(),
            sets: spec.sets.clone(),
            runs: seeds,
            failing,
            rate: failing as f64 / seeds.max(1) as f64,
            ci95: [lo, hi],
            findings,
            first_failing_replay: first,
            p_value: 1.0,
            changes_outcome: false,
            not_kept,
            expected_on_profile: without
                .is_some_and(|(b, v)| fisher_two_sided(b, seeds, v, seeds) >= 0.01),
            side_effects: Vec::new(),
        });
    }
    let base_k = variants[0].failing;
    let base_findings = variants[0].findings.clone();
    for v in variants.iter_mut().skip(1) {
        v.p_value = fisher_two_sided(base_k, seeds, v.failing, seeds);
        v.changes_outcome = v.p_value < 0.01;
        v.expected_on_profile &= v.changes_outcome;
        let mut names: Vec<&String> = base_findings.keys().chain(v.findings.keys()).collect();
        names.sort();
        names.dedup();
        v.side_effects = names
            .into_iter()
            .filter(|n| !target.contains(n) && !target.is_empty())
            .filter(|n| {
                let a = base_findings.get(*n).copied().unwrap_or(0);
                let b = v.findings.get(*n).copied().unwrap_or(0);
                fisher_two_sided(a, seeds, b, seeds) < 0.01
            })
            .cloned()
            .collect();
    }
    let culprits = variants
        .iter()
        .filter(|v| v.changes_outcome && v.label.starts_with("switch "))
        .map(|v| {
            v.label
                .trim_start_matches("switch ")
                .split('=')
                .next()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    Bisect {
        scenario: sc.name.clone(),
        seeds,
        base_profile,
        target,
        variants,
        culprits,
        skipped,
    }
}

/// The printed table.
pub fn table(b: &Bisect) -> String {
    let mut s = format!(
        "bisect {}: {} per variant ({}), base profile {}\noutcome: a run reporting {}\n\n",
        b.scenario,
        crate::report::plural(b.seeds, "seed"),
        if b.seeds == 1 {
            "seed 1".to_owned()
        } else {
            format!("seeds 1-{}", b.seeds)
        },
        b.base_profile,
        if b.target.is_empty() {
            "any finding".to_owned()
        } else {
            b.target.join(" or ")
        }
    );
    let w = b.variants.iter().map(|v| v.label.len()).max().unwrap_or(0);
    s.push_str(&format!(
        "{:w$}  {:>9}  {:>7}  {:>17}  {:>8}  invariants\n",
        "variant", "failing", "rate", "95% interval", "p"
    ));
    for v in &b.variants {
        let inv: Vec<String> = v.findings.iter().map(|(k, n)| format!("{k} {n}")).collect();
        s.push_str(&format!(
            "{:w$}  {:>4}/{:<4}  {:>6.1}%  [{:>5.1}%, {:>5.1}%]  {:>8}  {}{}\n",
            v.label,
            v.failing,
            v.runs,
            100.0 * v.rate,
            100.0 * v.ci95[0],
            100.0 * v.ci95[1],
            if v.label.starts_with("base") {
                "-".to_owned()
            } else {
                format!("{:.2e}", v.p_value)
            },
            inv.join(", "),
            if v.expected_on_profile {
                format!(
                    "  <- changes the outcome, expected on this profile: {} does not keep {}",
                    v.profile,
                    v.not_kept.join(", ")
                )
            } else if v.changes_outcome {
                "  <- changes the outcome".to_owned()
            } else if !v.side_effects.is_empty() {
                format!("  (also changes: {})", v.side_effects.join(", "))
            } else {
                String::new()
            }
        ));
    }
    for [label, why] in &b.skipped {
        s.push_str(&format!("{label:w$}  skipped: {why}\n"));
    }
    s.push('\n');
    if b.variants.iter().any(|v| v.expected_on_profile) {
        s.push_str(
            "expected on this profile: the outcome differs only through invariants that profile \
             does not keep (`podsim invariants` lists each invariant's profiles): the release's \
             known behaviour, not a new difference\n",
        );
    }
    if b.culprits.is_empty() {
        s.push_str("no single switch changes the outcome (Fisher exact test, p < 0.01)\n");
    } else {
        s.push_str(&format!(
            "switches that change the outcome (Fisher exact test, p < 0.01): {}\n",
            b.culprits.join(", ")
        ));
    }
    for v in b
        .variants
        .iter()
        .filter(|v| v.changes_outcome || v.label.starts_with("base"))
    {
        if let Some(r) = &v.first_failing_replay {
            s.push_str(&format!("  first failing run, {}: {r}\n", v.label));
        }
    }
    s
}

/// Two-sided Fisher exact test for k1/n1 against k2/n2: the probability, under equal
/// rates, of a table at most as likely as the one observed.
pub(crate) fn fisher_two_sided(k1: u64, n1: u64, k2: u64, n2: u64) -> f64 {
    let k = k1 + k2;
    let n = n1 + n2;
    // lf[i] = ln(i!)
    let lf: Vec<f64> = (0..=n)
        .scan(0.0, |acc, i| {
            if i > 1 {
                *acc += (i as f64).ln();
            }
            Some(*acc)
        })
        .collect();
    let lp = |a: u64| -> f64 {
        // a successes in group 1: hypergeometric
        lf[k as usize] + lf[(n - k) as usize] + lf[n1 as usize] + lf[n2 as usize]
            - lf[n as usize]
            - lf[a as usize]
            - lf[(k - a) as usize]
            - lf[(n1 - a) as usize]
            - lf[(n2 - (k - a)) as usize]
    };
    let lo = k.saturating_sub(n2);
    let hi = k.min(n1);
    let obs = lp(k1);
    let mut p = 0.0;
    for a in lo..=hi {
        let l = lp(a);
        if l <= obs + 1e-9 {
            p += l.exp();
        }
    }
    p.min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fisher_known_values() {
        // Same proportions: p = 1.
        assert!((fisher_two_sided(5, 100, 5, 100) - 1.0).abs() < 1e-9);
        // 0/200 vs 20/200: clearly different.
        assert!(fisher_two_sided(0, 200, 20, 200) < 1e-5);
        // 0/200 vs 4/200: p = 0.1234 (two-sided), not significant at 0.01.
        let p = fisher_two_sided(0, 200, 4, 200);
        assert!((p - 0.1234).abs() < 1e-3, "{p}");
        // The classic tea-tasting table 3/4 vs 1/4: p = 0.4857.
        let p = fisher_two_sided(3, 4, 1, 4);
        assert!((p - 0.4857).abs() < 1e-3, "{p}");
    }
}
