//! The entry point of the hunting-power benchmark (`benches/hunting.rs`): the same search
//! `podsim hunt` runs, over several plain bases at once, stopped at the first finding of
//! one of the invariants a catalog entry names, and the shrink of that finding. Not a
//! stable API: it exists for the benchmark.

use super::found::{finding_doc, Context};
use super::search::{scheduler_for, Found, Search, Strategy, Tuning, GENERATION};
use super::shrink::{self, Limits};
use std::path::{Path, PathBuf};

/// A hunt to run: the bases (their runs interleaved one by one, in this order), the `--set`
/// overrides (`PATH`, `VALUE`) applied to every base, the strategy (its scheduler is set
/// as `podsim hunt` sets it) and the guided search's design choices, the hunt's seed, the
/// budget in runs over all bases together, the invariants that count as a detection, and
/// the worker threads.
#[doc(hidden)]
pub struct BenchHunt<'a> {
    pub bases: &'a [PathBuf],
    pub sets: &'a [(String, String)],
    pub strategy: Strategy,
    pub tuning: Tuning,
    pub seed: u64,
    pub budget_runs: u64,
    pub invariants: &'a [String],
    pub jobs: usize,
}

/// The first finding of one of the wanted invariants.
#[doc(hidden)]
pub struct Detection {
    /// Runs spent over all bases, their runs interleaved one by one (base 0's first run,
    /// base 1's first run, ..., base 0's second run, ...), up to and including the run that
    /// showed it.
    pub runs: u64,
    /// Index into [`BenchHunt::bases`] of the base it was found from.
    pub base: usize,
    /// Runs spent on that base alone, up to and including the run that showed it.
    pub base_runs: u64,
    pub invariant: String,
    found: Found,
    base_path: PathBuf,
    profile: String,
    sets: Vec<String>,
    strategy: Strategy,
    seed: u64,
    scheduler: Option<String>,
}

/// What shrinking one finding cost (`benches/hunt_rate.rs`).
#[doc(hidden)]
pub struct ShrinkCost {
    /// Runs the shrink spent (the first run of the finding included).
    pub runs: u64,
    /// (pods, timeline actions) of the finding's scenario before and after.
    pub before: (u64, u64),
    pub after: (u64, u64),
}

/// What a benchmark hunt did: the runs it spent, and its detection if any.
#[doc(hidden)]
pub struct BenchOutcome {
    pub runs: u64,
    pub detection: Option<Detection>,
}

/// Runs the hunt: one [`Search`] per base, each independent of the others (as `podsim
/// hunt` on that base alone), their runs counted as if interleaved one by one, so that
/// no base waits for another's generation and an entry only one base reaches costs the
/// same for every strategy. The searches step a generation each in turn; after a round,
/// every run up to that point is known on every base, so the detection with the lowest
/// interleaved index is final. The budget is split evenly over the bases. Deterministic
/// for its inputs, on any number of threads. `Err`: a base does not load, or a run
/// panicked.
#[doc(hidden)]
pub fn bench_hunt(h: &BenchHunt<'_>) -> Result<BenchOutcome, String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(h.jobs)
        .build()
        .map_err(|e| e.to_string())?;
    let scheduler = scheduler_for(h.strategy).map(str::to_string);
    let mut sets = h.sets.to_vec();
    if let Some(s) = &scheduler {
        sets.push(("spec.scheduler".to_string(), s.clone()));
    }
    let mut searches = Vec::new();
    let mut profiles = Vec::new();
    for path in h.bases {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
        let sc = crate::load_str(&name, &text, &sets)
            .map_err(|e| e.to_string())?
            .scenario;
        let tree = super::doc::Doc::from_text(&name, &text, &sets)
            .map_err(|e| e.to_string())?
            .tree;
        profiles.push(sc.kubelet.profile.clone());
        searches.push(Search::tuned(tree, &sc, h.strategy, h.seed, h.tuning));
    }
    let nb = searches.len().max(1) as u64;
    // Base i's share of the budget: the interleaved order gives the remainder to the
    // first bases.
    let share = |i: usize| h.budget_runs / nb + u64::from((i as u64) < h.budget_runs % nb);
    // The interleaved index (1-based) of base i's k-th run.
    let index = |i: usize, k: u64| (k - 1) * nb + i as u64 + 1;
    loop {
        let mut best: Option<(u64, usize, usize)> = None;
        let mut ran = false;
        for (i, s) in searches.iter_mut().enumerate() {
            let n = GENERATION.min(share(i) - s.runs);
            if n == 0 {
                continue;
            }
            ran = true;
            let (runs_before, found_before) = (s.runs, s.findings.len());
            s.step(n, &pool);
            if !s.panics.is_empty() {
                return Err(format!(
                    "a run panicked hunting from {}",
                    h.bases[i].display()
                ));
            }
            let first = (found_before..s.findings.len())
                .filter(|&k| h.invariants.contains(&s.findings[k].invariant))
                .min_by_key(|&k| s.findings[k].first_run);
            if let Some(k) = first {
                debug_assert!(s.findings[k].first_run > runs_before);
                let at = index(i, s.findings[k].first_run);
                if best.is_none_or(|(b, _, _)| at < b) {
                    best = Some((at, i, k));
                }
            }
        }
        if let Some((runs, i, k)) = best {
            let found = searches[i].findings.swap_remove(k);
            let detection = Detection {
                runs,
                base: i,
                base_runs: found.first_run,
                invariant: found.invariant.clone(),
                found,
                base_path: h.bases[i].clone(),
                profile: profiles[i].clone(),
                sets: h.sets.iter().map(|(p, v)| format!("{p}={v}")).collect(),
                strategy: h.strategy,
                seed: h.seed,
                scheduler,
            };
            return Ok(BenchOutcome {
                runs,
                detection: Some(detection),
            });
        }
        if !ran {
            break;
        }
    }
    Ok(BenchOutcome {
        runs: searches.iter().map(|s| s.runs).sum(),
        detection: None,
    })
}

impl Detection {
    /// Shrinks the finding as `podsim hunt` does (at most `max_runs` runs, the seed kept);
    /// returns the shrunk scenario's (pods, timeline actions), or `None` when the shrink
    /// could not finish (the hunt would write the candidate as it ran).
    pub fn shrink(&self, max_runs: u64) -> Option<(u64, u64)> {
        self.shrunk(max_runs)
            .ok()
            .map(|s| (s.after.pods, s.after.actions))
    }

    /// Shrinks the finding as [`Detection::shrink`] does and returns what it cost: the runs
    /// the shrink spent, and the shrunk (pods, timeline actions). `Err`: the shrink could
    /// not finish (why).
    pub fn shrink_cost(&self, max_runs: u64) -> Result<ShrinkCost, String> {
        let s = self.shrunk(max_runs).map_err(|e| e.to_string())?;
        Ok(ShrinkCost {
            runs: s.runs,
            before: (s.before.pods, s.before.actions),
            after: (s.after.pods, s.after.actions),
        })
    }

    fn shrunk(&self, max_runs: u64) -> Result<shrink::Shrunk, shrink::ShrinkError> {
        let cx = Context {
            base: &self.base_path,
            profile: &self.profile,
            sets: &self.sets,
            strategy: self.strategy,
            seed: self.seed,
            out: Path::new("."),
            scheduler: self.scheduler.clone(),
            shrink_runs: max_runs,
        };
        let name = format!("{}-1", self.invariant);
        let doc = finding_doc(&self.found, &cx, &name);
        let limits = Limits { max_runs, seeds: 0 };
        shrink::shrink(&doc, self.found.cand.seed, &self.invariant, &limits)
    }

    /// The pod the finding was on.
    pub fn pod(&self) -> &str {
        &self.found.pod
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunt(jobs: usize, invariants: &[String], budget_runs: u64) -> BenchOutcome {
        let bases = [
            PathBuf::from("scenarios/hunt/mixed-node.yaml"),
            PathBuf::from("scenarios/hunt/static-node.yaml"),
        ];
        let sets = [(
            "spec.kubelet.behaviours.podWorkerOwnsLifecycle".to_string(),
            "false".to_string(),
        )];
        bench_hunt(&BenchHunt {
            bases: &bases,
            sets: &sets,
            strategy: Strategy::Random,
            tuning: Tuning::default(),
            seed: 1,
            budget_runs,
            invariants,
            jobs,
        })
        .expect("bases load, no panic")
    }

    /// The old pod-worker design's race is found from the plain bases, the same way on
    /// any number of threads, and shrinks to a small replay.
    #[test]
    fn the_pod_worker_race_is_found_deterministically_and_shrinks() {
        let want = vec!["no-start-after-termination".to_string()];
        let one = hunt(1, &want, 64);
        let two = hunt(2, &want, 64);
        let d1 = one.detection.expect("found within 64 runs");
        let d2 = two.detection.expect("found within 64 runs");
        assert_eq!(
            (d1.runs, d1.base, d1.pod().to_string()),
            (d2.runs, d2.base, d2.pod().to_string())
        );
        assert_eq!(d1.invariant, "no-start-after-termination");
        assert_eq!(one.runs, d1.runs);
        let (pods, actions) = d1.shrink(400).expect("the shrink finishes");
        assert!(pods <= 3 && actions <= 6, "{pods} pods, {actions} actions");
        let cost = d1.shrink_cost(400).expect("the shrink finishes");
        assert_eq!(cost.after, (pods, actions));
        assert!(cost.runs >= 1 && cost.runs <= 400, "{} runs", cost.runs);
        assert!(
            cost.before.0 >= pods,
            "{:?} -> {:?}",
            cost.before,
            cost.after
        );
    }

    /// Without a detection the whole budget is spent, split over the bases.
    #[test]
    fn no_detection_spends_the_budget() {
        let none = hunt(2, &["no-such-invariant".to_string()], 40);
        assert!(none.detection.is_none());
        assert_eq!(none.runs, 40);
    }
}
