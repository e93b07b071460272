//! Hunting power: how fast `podsim hunt` finds the catalog's races from plain bases that
//! script no race window. Run with `cargo bench --bench hunting`; CI only compiles it.
//!
//! For every race-catalog entry (`scenarios/races/*.yaml`) whose `spec.expect.old` names
//! old-behaviour switches and whose current behaviour is clean (`spec.expect.findings`
//! empty: the entries that are open upstream bugs show their finding without any switch,
//! so they measure nothing here), and for each strategy `random`, `pct` and `guided`: the
//! hunt runs on each of the three bases of `scenarios/hunt/` (independently, their runs
//! counted as if interleaved one by one: see `bench_hunt`) with the entry's switches as
//! `--set spec.kubelet.behaviours.X=false` on the `current` profile, 2 worker threads,
//! until a run reports one of the entry's `old.findings` invariants or
//! `PODSIM_HUNT_BENCH_RUNS` runs (default 20000, over the three bases) are spent; this for
//! each hunt seed of `PODSIM_HUNT_BENCH_SEEDS` (default `1,2,3`). An entry's runs to
//! detection is the median over its seeds (a seed that does not find it counts as the
//! budget); a strategy's figure is the median of that over the entries. The first seed's
//! detection is shrunk as `podsim hunt` shrinks it (`PODSIM_HUNT_BENCH_SHRINK` runs,
//! default 400; 0 skips the shrinks).
//!
//! Experiment knobs: `PODSIM_HUNT_BENCH_ONLY=guided,random` (strategies),
//! `PODSIM_HUNT_BENCH_ENTRIES=a,b` (entries whose name contains one of these),
//! `PODSIM_HUNT_BENCH_TUNING=stack=3,fresh=1,...` (the guided search's design choices,
//! see `podsim::hunt::Tuning::parse`; default: what `podsim hunt` uses).
//!
//! The table (Markdown) and the summary go to stdout, progress to stderr. Wall-clock time
//! is read here only (the clippy determinism bans are lifted for this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::hunt::bench::{bench_hunt, BenchHunt};
use podsim::hunt::{Strategy, Tuning};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

const BASES: [&str; 3] = ["mixed-node", "static-node", "pressure-node"];
const STRATEGIES: [(Strategy, &str); 3] = [
    (Strategy::Random, "random"),
    (Strategy::Pct, "pct"),
    (Strategy::Guided, "guided"),
];

/// A catalog entry with an old-behaviour switch.
struct Entry {
    name: String,
    sets: Vec<(String, String)>,
    switches: String,
    invariants: Vec<String>,
}

/// One hunt (entry, strategy, seed).
struct Hunt {
    /// Interleaved runs to the first detection.
    runs: Option<u64>,
    /// Runs spent on the base it was found from alone.
    base_runs: Option<u64>,
    secs: f64,
    base: Option<usize>,
}

/// One (entry, strategy) measurement: a hunt per seed, and the first seed's shrink.
struct Cell {
    hunts: Vec<Hunt>,
    shrunk: Option<(u64, u64)>,
}

/// What the environment asks for.
struct Config {
    budget: u64,
    seeds: Vec<u64>,
    strategies: Vec<(Strategy, &'static str)>,
    entries: Vec<String>,
    shrink_runs: u64,
    tuning: Tuning,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|s| !s.trim().is_empty())
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

impl Config {
    fn from_env() -> Config {
        let budget = env("PODSIM_HUNT_BENCH_RUNS")
            .and_then(|s| s.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or(20000);
        let seeds = list(&env("PODSIM_HUNT_BENCH_SEEDS").unwrap_or("1,2,3".into()))
            .iter()
            .map(|x| x.parse().expect("PODSIM_HUNT_BENCH_SEEDS: numbers"))
            .collect::<Vec<u64>>();
        assert!(!seeds.is_empty(), "PODSIM_HUNT_BENCH_SEEDS: no seed");
        let strategies = match env("PODSIM_HUNT_BENCH_ONLY") {
            None => STRATEGIES.to_vec(),
            Some(only) => {
                let want = list(&only);
                STRATEGIES
                    .iter()
                    .copied()
                    .filter(|(_, n)| want.iter().any(|w| w == n))
                    .collect()
            }
        };
        assert!(
            !strategies.is_empty(),
            "PODSIM_HUNT_BENCH_ONLY: no strategy"
        );
        let tuning = match env("PODSIM_HUNT_BENCH_TUNING") {
            None => Tuning::default(),
            Some(t) => Tuning::parse(&t).expect("PODSIM_HUNT_BENCH_TUNING"),
        };
        Config {
            budget,
            seeds,
            strategies,
            entries: env("PODSIM_HUNT_BENCH_ENTRIES").map_or(Vec::new(), |e| list(&e)),
            shrink_runs: env("PODSIM_HUNT_BENCH_SHRINK")
                .and_then(|s| s.parse().ok())
                .unwrap_or(400),
            tuning,
        }
    }
}

fn entries(dir: &Path) -> Vec<Entry> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("scenarios/races")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read entry");
        let v: Value = serde_saphyr::from_str(&text).expect("entry YAML");
        let expect = &v["spec"]["expect"];
        let Some(old) = expect["old"]["behaviours"].as_object() else {
            continue;
        };
        let clean_now = expect["findings"].as_array().is_none_or(|a| a.is_empty());
        if !clean_now {
            eprintln!(
                "skipped {}: shows its finding on current (open upstream)",
                f.display()
            );
            continue;
        }
        let sets = old
            .iter()
            .map(|(k, x)| (format!("spec.kubelet.behaviours.{k}"), x.to_string()))
            .collect();
        let switches = old
            .iter()
            .map(|(k, x)| format!("{k}={x}"))
            .collect::<Vec<_>>()
            .join(", ");
        let invariants = expect["old"]["findings"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push(Entry {
            name,
            sets,
            switches,
            invariants,
        });
    }
    out
}

fn measure(e: &Entry, bases: &[PathBuf], strategy: Strategy, cfg: &Config) -> Cell {
    let mut hunts = Vec::new();
    let mut shrunk = None;
    for (n, &seed) in cfg.seeds.iter().enumerate() {
        let start = Instant::now();
        let outcome = bench_hunt(&BenchHunt {
            bases,
            sets: &e.sets,
            strategy,
            tuning: cfg.tuning,
            seed,
            budget_runs: cfg.budget,
            invariants: &e.invariants,
            jobs: 2,
        })
        .unwrap_or_else(|err| panic!("{}: {err}", e.name));
        let secs = start.elapsed().as_secs_f64();
        let d = outcome.detection;
        if n == 0 && cfg.shrink_runs > 0 {
            shrunk = d.as_ref().and_then(|d| d.shrink(cfg.shrink_runs));
        }
        hunts.push(Hunt {
            runs: d.as_ref().map(|d| d.runs),
            base_runs: d.as_ref().map(|d| d.base_runs),
            secs,
            base: d.as_ref().map(|d| d.base),
        });
    }
    Cell { hunts, shrunk }
}

/// The median of `v` (the mean of the two middle values for an even count).
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    let n = v.len();
    if n == 0 {
        0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]).div_ceil(2)
    }
}

impl Cell {
    /// The entry's runs to detection: the median over the seeds, a seed that did not find
    /// it counting as the budget.
    fn runs(&self, budget: u64) -> u64 {
        median(
            self.hunts
                .iter()
                .map(|h| h.runs.unwrap_or(budget))
                .collect(),
        )
    }

    /// The same, counting only the runs on the base each detection came from.
    fn base_runs(&self, budget: u64) -> u64 {
        median(
            self.hunts
                .iter()
                .map(|h| h.base_runs.unwrap_or(budget))
                .collect(),
        )
    }

    fn found(&self) -> usize {
        self.hunts.iter().filter(|h| h.runs.is_some()).count()
    }

    fn text(&self, budget: u64) -> String {
        let per_seed = self
            .hunts
            .iter()
            .map(|h| match (h.runs, h.base, h.base_runs) {
                (Some(r), Some(b), Some(k)) => format!("{r} ({k} {})", short(b)),
                _ => "-".into(),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let secs: f64 = self.hunts.iter().map(|h| h.secs).sum();
        let shrunk = match (self.hunts.first().and_then(|h| h.runs), self.shrunk) {
            (Some(_), Some((p, a))) => format!(", {p}p/{a}a"),
            (Some(_), None) => ", unshrunk".into(),
            _ => String::new(),
        };
        if self.found() == 0 {
            format!("not found ({secs:.0} s)")
        } else {
            format!(
                "**{}** [{per_seed}], {secs:.1} s{shrunk}",
                self.runs(budget)
            )
        }
    }
}

fn short(base: usize) -> &'static str {
    ["mixed", "static", "pressure"][base]
}

fn main() {
    let cfg = Config::from_env();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bases: Vec<PathBuf> = BASES
        .iter()
        .map(|b| root.join(format!("scenarios/hunt/{b}.yaml")))
        .collect();
    let entries: Vec<Entry> = entries(&root.join("scenarios/races"))
        .into_iter()
        .filter(|e| {
            cfg.entries.is_empty() || cfg.entries.iter().any(|w| e.name.contains(w.as_str()))
        })
        .collect();
    let all = Instant::now();
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for e in &entries {
        let mut row = Vec::new();
        for &(s, name) in &cfg.strategies {
            let c = measure(e, &bases, s, &cfg);
            eprintln!("{} {name}: {}", e.name, c.text(cfg.budget));
            row.push(c);
        }
        rows.push(row);
    }
    println!(
        "Hunting power: {} entries, budget {} runs per entry, strategy and seed, hunt seeds {:?}, 2 jobs, guided tuning {:?}, {:.0} s in all\n",
        entries.len(),
        cfg.budget,
        cfg.seeds,
        cfg.tuning,
        all.elapsed().as_secs_f64()
    );
    let names: Vec<&str> = cfg.strategies.iter().map(|(_, n)| *n).collect();
    println!("| entry | switch | {} |", names.join(" | "));
    println!("|---|---|{}", "---|".repeat(names.len()));
    for (e, row) in entries.iter().zip(&rows) {
        let cells: Vec<String> = row.iter().map(|c| c.text(cfg.budget)).collect();
        println!("| {} | {} | {} |", e.name, e.switches, cells.join(" | "));
    }
    summary(&entries, &rows, &cfg);
}

fn summary(entries: &[Entry], rows: &[Vec<Cell>], cfg: &Config) {
    println!();
    let budget = cfg.budget;
    let mut medians = Vec::new();
    for (i, (_, name)) in cfg.strategies.iter().enumerate() {
        let cells: Vec<&Cell> = rows.iter().map(|r| &r[i]).collect();
        let found = cells.iter().filter(|c| c.runs(budget) < budget).count();
        let any = cells.iter().filter(|c| c.found() > 0).count();
        let hunts: usize = cells.iter().map(|c| c.found()).sum();
        let m = median(cells.iter().map(|c| c.runs(budget)).collect());
        let on_base = median(cells.iter().map(|c| c.base_runs(budget)).collect());
        medians.push((*name, m, on_base));
        let secs: f64 = cells.iter().flat_map(|c| &c.hunts).map(|h| h.secs).sum();
        println!(
            "- {name}: found {found} of {} entries on most seeds ({any} on some seed; {hunts} of {} hunts); median runs to detection {m} (on the detecting base alone: {on_base}); {secs:.0} s in all",
            entries.len(),
            entries.len() * cfg.seeds.len(),
        );
    }
    let get = |n: &str| medians.iter().find(|(x, _, _)| *x == n);
    if let (Some(r), Some(g)) = (get("random"), get("guided")) {
        println!(
            "- median runs random/guided: {:.2}; on the detecting base alone: {:.2}",
            r.1 as f64 / g.1.max(1) as f64,
            r.2 as f64 / g.2.max(1) as f64
        );
    }
    if cfg.shrink_runs > 0 {
        let shrunk: Vec<(u64, u64)> = rows
            .iter()
            .flatten()
            .filter(|c| c.hunts.first().is_some_and(|h| h.runs.is_some()))
            .map(|c| c.shrunk.unwrap_or((u64::MAX, u64::MAX)))
            .collect();
        let small = shrunk.iter().filter(|&&(p, a)| p <= 3 && a <= 6).count();
        println!(
            "- shrunk replays (first seed's detections) with <= 3 pods and <= 6 actions: {small} of {} ({:.0} %; a shrink that could not finish counts as large)",
            shrunk.len(),
            100.0 * small as f64 / shrunk.len().max(1) as f64
        );
    }
}
