//! The search: generations of candidates drawn from the corpus state, run in parallel,
//! merged in candidate order (so a hunt is a pure function of its seed and a budget in
//! runs, on any number of threads), with the corpus, the coverage and the deduplicated
//! findings it keeps.

use super::coverage::Pair;
use super::doc::{Doc, Ran};
use super::mutate::{mutate, seed_inputs, splice, Vocab};
use crate::scenario::Scenario;
use crate::sim::Stream;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Candidates per generation: fixed, not the thread count, so that the corpus evolves the
/// same way on any number of threads.
pub(crate) const GENERATION: u64 = 16;
/// Distinct findings kept per invariant (the rest are counted, not written).
const MAX_PER_INVARIANT: usize = 10;

/// `--strategy`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Fresh seeds plus random mutations of the base scenario.
    Random,
    /// As `random`, each run under the PCT scheduler.
    Pct,
    /// Keep a corpus of inputs that reached new coverage and mutate those first.
    Guided,
}

impl Strategy {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Strategy::Random => "random",
            Strategy::Pct => "pct",
            Strategy::Guided => "guided",
        }
    }
}

/// The scheduler a strategy runs its candidates under (`None`: the scenario's own):
/// `pct` runs each candidate under the PCT scheduler with 3 priority change points
/// (`--scheduler` on `hunt` overrides it).
pub(crate) fn scheduler_for(strategy: Strategy) -> Option<&'static str> {
    match strategy {
        Strategy::Random | Strategy::Guided => None,
        Strategy::Pct => Some("pct:3"),
    }
}

/// The guided search's design choices, one field each, so the hunting benchmark can
/// compare them (`PODSIM_HUNT_BENCH_TUNING`); `podsim hunt` always uses the default.
/// `random` and `pct` read none of them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// Kinds of change stacked per seed input (1: one change per input, see
    /// [`seed_inputs`]).
    pub seed_stack: usize,
    /// Seed inputs run on fresh seeds (else on the base's own seed).
    pub seed_fresh: bool,
    /// Havoc: a corpus candidate gets 1, 2, 4 or 8 stacked mutations (else 1 to 3).
    pub havoc: bool,
    /// Per mille of corpus candidates spliced with a second corpus input first.
    pub splice_permille: u32,
    /// Per mille of candidates drawn from the base with a fresh seed instead of the corpus.
    pub base_permille: u32,
}

impl Default for Tuning {
    fn default() -> Tuning {
        // Four kinds per seed input on fresh seeds: every kind tried within the first
        // five or six runs of a base (18 kinds), where one per input on the base's own
        // seed took 18; chosen over 3 and 5 on held-out hunt seeds (see the README's
        // "Hunting power").
        Tuning {
            seed_stack: 4,
            seed_fresh: true,
            havoc: false,
            splice_permille: 0,
            base_permille: 100,
        }
    }
}

impl Tuning {
    /// Parses `key=value` pairs separated by commas (`stack=3,fresh=1,havoc=1,splice=100,
    /// base=100`) over the default.
    pub fn parse(text: &str) -> Result<Tuning, String> {
        let mut t = Tuning::default();
        for kv in text.split(',').map(str::trim).filter(|x| !x.is_empty()) {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| format!("{kv:?}: expected key=value"))?;
            let n: u64 = v.parse().map_err(|_| format!("{kv:?}: not a number"))?;
            match k {
                "stack" => t.seed_stack = n.max(1) as usize,
                "fresh" => t.seed_fresh = n != 0,
                "havoc" => t.havoc = n != 0,
                "splice" => t.splice_permille = n.min(1000) as u32,
                "base" => t.base_permille = n.min(1000) as u32,
                _ => return Err(format!("{kv:?}: unknown key {k}")),
            }
        }
        Ok(t)
    }
}

/// One input: a scenario tree, the seed it runs on, and the mutations that made it.
#[derive(Clone, Debug)]
pub(crate) struct Candidate {
    pub(crate) tree: Value,
    pub(crate) seed: u64,
    pub(crate) history: Vec<String>,
}

/// The name candidates are known by in messages (they are never shown: one that does not
/// validate is discarded).
const CANDIDATE: &str = "hunt-candidate.yaml";

/// The scale of a feature's rarity (divided by the runs that reached it).
const RARITY_SCALE: u64 = 1 << 20;

/// What the guided search counts as coverage: a (worker state, transition kind) pair or a
/// reach point.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Feature {
    Pair(Pair),
    Reach(String),
}

/// A corpus entry: an input that reached new coverage, what its run reached, and how many
/// candidates were already drawn from it.
struct Entry {
    cand: Candidate,
    features: Vec<Feature>,
    picked: u64,
}

/// A distinct finding and the run that first showed it.
pub(crate) struct Found {
    pub(crate) invariant: String,
    pub(crate) pod: String,
    pub(crate) at_ns: u64,
    pub(crate) message: String,
    pub(crate) signature: String,
    /// 1-based index of the run.
    pub(crate) first_run: u64,
    pub(crate) cand: Candidate,
    pub(crate) sc: Arc<Scenario>,
    pub(crate) events: u64,
    /// Every invariant that run broke, sorted.
    pub(crate) run_invariants: Vec<String>,
}

/// The search state.
pub(crate) struct Search {
    base: Candidate,
    vocab: Vocab,
    strategy: Strategy,
    seed: u64,
    tuning: Tuning,
    corpus: Vec<Entry>,
    /// `guided`: the first inputs to try after the base, one per kind of change.
    seeds: Vec<Candidate>,
    /// How many runs reached each coverage pair and reach point (the rarity of a feature).
    hits: BTreeMap<Feature, u64>,
    pub(crate) pairs: BTreeSet<Pair>,
    pub(crate) reach: BTreeSet<String>,
    pub(crate) findings: Vec<Found>,
    seen: BTreeSet<(String, String)>,
    pub(crate) runs: u64,
    pub(crate) discarded: u64,
    /// Candidates whose run panicked (a podsim bug).
    pub(crate) panics: Vec<Candidate>,
    generation: u64,
}

impl Search {
    /// A search from `base`, the base scenario's tree with the hunt's `--set` overrides
    /// applied (see [`Doc::from_text`]), which validates into `base_sc`.
    pub(crate) fn new(base: Value, base_sc: &Scenario, strategy: Strategy, seed: u64) -> Search {
        Search::tuned(base, base_sc, strategy, seed, Tuning::default())
    }

    /// As [`Search::new`], with the guided search's design choices given.
    pub(crate) fn tuned(
        base: Value,
        base_sc: &Scenario,
        strategy: Strategy,
        seed: u64,
        tuning: Tuning,
    ) -> Search {
        Search {
            base: Candidate {
                tree: base,
                seed: base_sc.seed,
                history: Vec::new(),
            },
            vocab: Vocab::of(base_sc),
            strategy,
            seed,
            tuning,
            corpus: Vec::new(),
            seeds: Vec::new(),
            hits: BTreeMap::new(),
            pairs: BTreeSet::new(),
            reach: BTreeSet::new(),
            findings: Vec::new(),
            seen: BTreeSet::new(),
            runs: 0,
            discarded: 0,
            panics: Vec::new(),
            generation: 0,
        }
        .with_seeds()
    }

    /// `guided`: the inputs tried first after the base, on the base's own seed, so the
    /// early budget goes to every kind of change once (see [`seed_inputs`]) rather than
    /// to a random sample of them; the corpus then grows from those that reach new
    /// coverage.
    fn with_seeds(mut self) -> Search {
        if self.strategy == Strategy::Guided {
            let s = &mut Stream::new(self.seed, "hunt/seeds");
            let t = self.tuning;
            let mut seeds: Vec<Candidate> =
                seed_inputs(&self.base.tree, &self.vocab, s, t.seed_stack)
                    .into_iter()
                    .map(|(tree, what)| Candidate {
                        tree,
                        seed: if t.seed_fresh {
                            fresh_seed(s)
                        } else {
                            self.base.seed
                        },
                        history: vec![what],
                    })
                    .collect();
            seeds.reverse();
            self.seeds = seeds;
        }
        self
    }

    pub(crate) fn corpus_len(&self) -> usize {
        self.corpus.len()
    }

    /// Runs one generation of at most `n` candidates on `pool`, and merges the results.
    pub(crate) fn step(&mut self, n: u64, pool: &rayon::ThreadPool) {
        use rayon::prelude::*;
        let g = self.generation;
        self.generation += 1;
        let weights = self.energies();
        let mut picked = vec![0u64; weights.len()];
        let mut cands = Vec::new();
        for i in 0..n.min(GENERATION) {
            let c = if g == 0 && i == 0 {
                // The base scenario as it is comes first.
                self.base.clone()
            } else if let Some(c) = self.seeds.pop() {
                c
            } else {
                let s = &mut Stream::new(self.seed, &format!("hunt/{g}/{i}"));
                self.candidate(s, &weights, &mut picked)
            };
            cands.push(c);
        }
        for (e, k) in self.corpus.iter_mut().zip(picked) {
            e.picked += k;
        }
        let results: Vec<Result<Option<Ran>, ()>> = pool.install(|| {
            cands
                .par_iter()
                .map(|c| {
                    catch_unwind(AssertUnwindSafe(|| {
                        Doc::new(CANDIDATE, c.tree.clone()).run(c.seed, "").ok()
                    }))
                    .map_err(|_| ())
                })
                .collect()
        });
        for (c, r) in cands.into_iter().zip(results) {
            self.merge(c, r);
        }
    }

    /// The energy of each corpus entry (`guided`), as coverage-guided fuzzers schedule
    /// their queue: the sum over the entry's features (coverage pairs and reach points) of
    /// their rarity (a fixed scale divided by how many runs reached the feature), divided
    /// by one more than the times the entry was already picked. Inputs that reach what
    /// few runs reach are mutated most, and no input keeps the search forever.
    fn energies(&self) -> Vec<u64> {
        if self.strategy != Strategy::Guided {
            return Vec::new();
        }
        self.corpus
            .iter()
            .map(|e| {
                let rarity: u64 = e
                    .features
                    .iter()
                    .map(|f| RARITY_SCALE / self.hits.get(f).copied().unwrap_or(1).max(1))
                    .sum();
                (rarity / (1 + e.picked)).max(1)
            })
            .collect()
    }

    /// A new candidate: from the base with a fresh seed (`random`, `pct`, and `guided`
    /// while its corpus is empty or one time in ten), else (`guided`) from a corpus entry
    /// drawn in proportion to its energy; then one to three mutations.
    fn candidate(&self, s: &mut Stream, weights: &[u64], picked: &mut [u64]) -> Candidate {
        let total: u64 = weights.iter().sum();
        let t = self.tuning;
        let from_corpus =
            self.strategy == Strategy::Guided && total > 0 && !s.chance_ppm(t.base_permille * 1000);
        let mut c = if from_corpus {
            let i = draw(s, weights, total);
            picked[i] += 1;
            let mut c = self.corpus[i].cand.clone();
            if s.chance_ppm(500_000) {
                c.seed = fresh_seed(s);
            }
            if t.splice_permille > 0
                && self.corpus.len() > 1
                && s.chance_ppm(t.splice_permille * 1000)
            {
                let j = draw(s, weights, total);
                if j != i {
                    if let Some(what) = splice(&mut c.tree, &self.corpus[j].cand.tree) {
                        c.history.push(what);
                    }
                }
            }
            c
        } else {
            let mut c = self.base.clone();
            c.seed = fresh_seed(s);
            if s.chance_ppm(250_000) {
                return c;
            }
            c
        };
        let n = if from_corpus && t.havoc {
            1 << s.below(4)
        } else {
            s.between(1, 3)
        };
        for _ in 0..n {
            let what = mutate(&mut c.tree, &self.vocab, s);
            c.history.push(what);
        }
        c
    }

    fn merge(&mut self, c: Candidate, r: Result<Option<Ran>, ()>) {
        self.runs += 1;
        let ran = match r {
            Err(()) => {
                self.panics.push(c);
                return;
            }
            Ok(None) => {
                self.discarded += 1;
                return;
            }
            Ok(Some(ran)) => ran,
        };
        let before = self.pairs.len() + self.reach.len();
        self.pairs.extend(ran.obs.pairs.iter().copied());
        self.reach.extend(ran.out.reached.iter().cloned());
        let features: Vec<Feature> = ran
            .obs
            .pairs
            .iter()
            .map(|p| Feature::Pair(*p))
            .chain(ran.out.reached.iter().map(|r| Feature::Reach(r.clone())))
            .collect();
        for f in &features {
            *self.hits.entry(f.clone()).or_insert(0) += 1;
        }
        if self.pairs.len() + self.reach.len() > before {
            self.corpus.push(Entry {
                cand: c.clone(),
                features,
                picked: 0,
            });
        }
        let run_invariants: Vec<String> = ran
            .out
            .findings
            .iter()
            .map(|f| f.invariant.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for f in &ran.out.findings {
            let signature = ran.obs.signature(&f.pod, f.at_ns);
            let key = (f.invariant.clone(), signature.clone());
            let kept = self
                .findings
                .iter()
                .filter(|x| x.invariant == f.invariant)
                .count();
            if kept >= MAX_PER_INVARIANT || !self.seen.insert(key) {
                continue;
            }
            self.findings.push(Found {
                invariant: f.invariant.clone(),
                pod: f.pod.clone(),
                at_ns: f.at_ns,
                message: f.message.clone(),
                signature,
                first_run: self.runs,
                cand: c.clone(),
                sc: ran.sc.clone(),
                events: ran.out.events,
                run_invariants: run_invariants.clone(),
            });
        }
    }
}

/// An index drawn in proportion to `weights` (which sum to `total` > 0).
fn draw(s: &mut Stream, weights: &[u64], total: u64) -> usize {
    let mut x = s.below(total);
    weights
        .iter()
        .position(|&w| {
            if x < w {
                true
            } else {
                x -= w;
                false
            }
        })
        .unwrap_or(weights.len() - 1)
}

fn fresh_seed(s: &mut Stream) -> u64 {
    s.between(1, u64::from(u32::MAX))
}
