//! Hunting power: how fast `podsim hunt` finds the catalog's races from plain bases that
//! script no race window. Run with `cargo bench --bench hunting`; CI only compiles it.
//!
//! For every race-catalog entry (`scenarios/races/*.yaml`) whose `spec.expect.old` names
//! old-behaviour switches and whose current behaviour is clean (`spec.expect.findings`
//! empty: the entries that are open upstream bugs show their finding without any switch,
//! so they measure nothing here), and for each strategy `random`, `pct` and `guided`: the
//! hunt runs on the three bases of `scenarios/hunt/` at once (their generations take
//! turns) with the entry's switches as `--set spec.kubelet.behaviours.X=false` on the
//! `current` profile, hunt seed 1, 2 worker threads, until a run reports one of the
//! entry's `old.findings` invariants or `PODSIM_HUNT_BENCH_RUNS` runs (default 20000) are
//! spent. It records the runs and wall seconds to that first detection, the base it came
//! from, and the size of the finding once shrunk as `podsim hunt` shrinks it (400 runs).
//!
//! The table (Markdown) and the summary go to stdout, progress to stderr. Wall-clock time
//! is read here only (the clippy determinism bans are lifted for this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::hunt::bench::{bench_hunt, BenchHunt};
use podsim::hunt::Strategy;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

const BASES: [&str; 3] = ["mixed-node", "static-node", "pressure-node"];
const STRATEGIES: [(Strategy, &str); 3] = [
    (Strategy::Random, "random"),
    (Strategy::Pct, "pct"),
    (Strategy::Guided, "guided"),
];
const SHRINK_RUNS: u64 = 400;

/// A catalog entry with an old-behaviour switch.
struct Entry {
    name: String,
    sets: Vec<(String, String)>,
    switches: String,
    invariants: Vec<String>,
}

/// One (entry, strategy) measurement.
struct Cell {
    runs: Option<u64>,
    /// Runs spent on the base it was found from alone.
    base_runs: Option<u64>,
    secs: f64,
    base: Option<usize>,
    shrunk: Option<(u64, u64)>,
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

fn measure(e: &Entry, bases: &[PathBuf], strategy: Strategy, budget: u64) -> Cell {
    let start = Instant::now();
    let outcome = bench_hunt(&BenchHunt {
        bases,
        sets: &e.sets,
        strategy,
        seed: 1,
        budget_runs: budget,
        invariants: &e.invariants,
        jobs: 2,
    })
    .unwrap_or_else(|err| panic!("{}: {err}", e.name));
    let secs = start.elapsed().as_secs_f64();
    match outcome.detection {
        None => Cell {
            runs: None,
            base_runs: None,
            secs,
            base: None,
            shrunk: None,
        },
        Some(d) => Cell {
            runs: Some(d.runs),
            base_runs: Some(d.base_runs),
            secs,
            base: Some(d.base),
            shrunk: d.shrink(SHRINK_RUNS),
        },
    }
}

/// The median over all entries of runs-to-detection as `runs` reads it from a cell, an
/// entry not found counting as more than the budget; `None` when that median is itself
/// "not found".
fn median(cells: &[&Cell], runs: impl Fn(&Cell) -> Option<u64>) -> Option<u64> {
    let mut v: Vec<u64> = cells.iter().map(|c| runs(c).unwrap_or(u64::MAX)).collect();
    v.sort_unstable();
    let m = if v.len() % 2 == 1 {
        v[v.len() / 2]
    } else {
        let (a, b) = (v[v.len() / 2 - 1], v[v.len() / 2]);
        if b == u64::MAX {
            b
        } else {
            (a + b) / 2
        }
    };
    (m != u64::MAX).then_some(m)
}

fn cell_text(c: &Cell) -> String {
    match (c.runs, c.base) {
        (Some(r), Some(b)) => format!(
            "{r} runs ({} on it), {:.1} s, {}, {}",
            c.base_runs.unwrap_or(r),
            c.secs,
            BASES[b],
            match c.shrunk {
                Some((p, a)) => format!("{p}p/{a}a"),
                None => "unshrunk".into(),
            }
        ),
        _ => format!("not found ({:.0} s)", c.secs),
    }
}

fn main() {
    let budget: u64 = std::env::var("PODSIM_HUNT_BENCH_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(20000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bases: Vec<PathBuf> = BASES
        .iter()
        .map(|b| root.join(format!("scenarios/hunt/{b}.yaml")))
        .collect();
    let entries = entries(&root.join("scenarios/races"));
    let all = Instant::now();
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    for e in &entries {
        let mut row = Vec::new();
        for (s, name) in STRATEGIES {
            let c = measure(e, &bases, s, budget);
            eprintln!("{} {name}: {}", e.name, cell_text(&c));
            row.push(c);
        }
        rows.push(row);
    }
    println!(
        "Hunting power: {} entries, budget {budget} runs per entry and strategy, 2 jobs, hunt seed 1, {:.0} s in all\n",
        entries.len(),
        all.elapsed().as_secs_f64()
    );
    println!("| entry | switch | random | pct | guided |");
    println!("|---|---|---|---|---|");
    for (e, row) in entries.iter().zip(&rows) {
        println!(
            "| {} | {} | {} | {} | {} |",
            e.name,
            e.switches,
            cell_text(&row[0]),
            cell_text(&row[1]),
            cell_text(&row[2])
        );
    }
    summary(&entries, &rows, budget);
}

fn ratio(what: &str, random: Option<u64>, guided: Option<u64>, budget: u64) {
    match (random, guided) {
        (Some(r), Some(g)) => println!("- {what}: {:.2}", r as f64 / g.max(1) as f64),
        (None, Some(g)) => println!(
            "- {what}: > {:.2} (random's median is past the budget)",
            budget as f64 / g.max(1) as f64
        ),
        _ => println!("- {what}: n/a (guided's median is past the budget)"),
    }
}

fn summary(entries: &[Entry], rows: &[Vec<Cell>], budget: u64) {
    println!();
    let mut medians = Vec::new();
    for (i, (_, name)) in STRATEGIES.iter().enumerate() {
        let cells: Vec<&Cell> = rows.iter().map(|r| &r[i]).collect();
        let found = cells.iter().filter(|c| c.runs.is_some()).count();
        let m = median(&cells, |c| c.runs);
        let on_base = median(&cells, |c| c.base_runs);
        medians.push((m, on_base));
        let secs: f64 = cells.iter().map(|c| c.secs).sum();
        let shown = |m: Option<u64>| m.map_or(format!("> {budget} (not found)"), |m| m.to_string());
        println!(
            "- {name}: found {found} of {} entries; median runs to detection {} (on the base it came from: {}); {secs:.0} s in all",
            entries.len(),
            shown(m),
            shown(on_base),
        );
    }
    ratio(
        "median runs random/guided",
        medians[0].0,
        medians[2].0,
        budget,
    );
    ratio(
        "the same, counting the runs on the detecting base only",
        medians[0].1,
        medians[2].1,
        budget,
    );
    let shrunk: Vec<(u64, u64)> = rows
        .iter()
        .flatten()
        .filter(|c| c.runs.is_some())
        .map(|c| c.shrunk.unwrap_or((u64::MAX, u64::MAX)))
        .collect();
    let small = shrunk.iter().filter(|&&(p, a)| p <= 3 && a <= 6).count();
    println!(
        "- shrunk replays with <= 3 pods and <= 6 actions: {small} of {} ({:.0} %; a shrink that could not finish counts as large)",
        shrunk.len(),
        100.0 * small as f64 / shrunk.len().max(1) as f64
    );
}
