//! Hunt throughput: runs per second of the search `podsim hunt` runs, on each base of
//! `scenarios/hunt/`, with 1 and 2 worker threads, next to a trivially parallel arithmetic
//! loop (as `benches/scaling.rs` does for sweeps). Run with `cargo bench --bench hunt_rate`;
//! CI only compiles it.
//!
//! Each measurement is one hunt of `PODSIM_HUNT_RATE_RUNS` runs (default 400) from one base
//! (`random` strategy, hunt seed 1, no invariant counted as a detection, so the whole
//! budget is spent), medians of `PODSIM_BENCH_REPS` (default 3) reps alternating the
//! thread counts.
//!
//! Then the cost of shrinking one finding: on each base, a `guided` hunt on its own profile
//! (`current`; hunt seed 1, 1 thread) until the first finding of any invariant (at most
//! `PODSIM_SHRINK_HUNT_RUNS` runs, default 3000), and that finding shrunk as `podsim hunt`
//! shrinks it (the default 400-run budget, `PODSIM_SHRINK_RUNS`): the runs the shrink
//! spent and its wall time (median of the reps), against the hunt's own runs per second.
//! Wall-clock time is read here and only here (the clippy determinism bans are lifted for
//! this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::hunt::bench::{bench_hunt, BenchHunt};
use podsim::hunt::{Strategy, Tuning};
use podsim::oracle::invariants::INVARIANTS;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Instant;
mod common;
use common::{env, median};

const BASES: [&str; 3] = ["mixed-node", "static-node", "pressure-node"];

/// One arithmetic task: a long chain of multiply-xorshift steps.
fn spin(seed: u64) -> u64 {
    let mut h = seed;
    for i in 0..40_000_000u64 {
        h = (h ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
    }
    h
}

fn arith(threads: usize) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let t = Instant::now();
    let r = pool.install(|| {
        (0..8u64)
            .into_par_iter()
            .map(spin)
            .reduce(|| 0, |a, b| a ^ b)
    });
    std::hint::black_box(r);
    t.elapsed().as_secs_f64()
}

/// Seconds for `runs` hunt runs from `base` on `jobs` threads, and the runs spent.
fn hunt(base: &PathBuf, runs: u64, jobs: usize) -> (f64, u64) {
    let t = Instant::now();
    let out = bench_hunt(&BenchHunt {
        bases: std::slice::from_ref(base),
        sets: &[],
        strategy: Strategy::Random,
        tuning: Tuning::default(),
        seed: 1,
        budget_runs: runs,
        invariants: &[],
        jobs,
    })
    .unwrap_or_else(|e| panic!("{}: {e}", base.display()));
    (t.elapsed().as_secs_f64(), out.runs)
}

/// The first finding of a short guided hunt from `base`, shrunk `reps` times: prints the
/// hunt's runs and rate, the shrink's runs, its median seconds and the sizes.
fn shrink_cost(name: &str, base: &PathBuf, reps: usize) {
    let budget = env("PODSIM_SHRINK_HUNT_RUNS", 3000);
    let max_runs = env("PODSIM_SHRINK_RUNS", 400);
    let every: Vec<String> = INVARIANTS.iter().map(|i| i.name.to_string()).collect();
    let t = Instant::now();
    let out = bench_hunt(&BenchHunt {
        bases: std::slice::from_ref(base),
        sets: &[],
        strategy: Strategy::Guided,
        seed: 1,
        budget_runs: budget,
        invariants: &every,
        jobs: 1,
        tuning: Tuning::default(),
    })
    .unwrap_or_else(|e| panic!("{}: {e}", base.display()));
    let hunt_secs = t.elapsed().as_secs_f64();
    let Some(d) = out.detection else {
        println!("shrink {name}: no finding within {budget} hunt runs ({hunt_secs:.1} s)");
        return;
    };
    let mut secs = Vec::new();
    let mut cost = None;
    for _ in 0..reps {
        let t = Instant::now();
        let c = d.shrink_cost(max_runs);
        secs.push(t.elapsed().as_secs_f64());
        cost = Some(c);
    }
    let s = median(secs);
    match cost.expect("at least one rep") {
        Ok(c) => println!(
            "shrink {name}: first finding {} on {} after {} hunt runs ({:.0} runs/s); shrink {} runs in {s:.2} s ({:.0} runs/s, {:.1} ms per run); pods {} -> {}, actions {} -> {}",
            d.invariant,
            d.pod(),
            d.runs,
            d.runs as f64 / hunt_secs,
            c.runs,
            c.runs as f64 / s,
            1000.0 * s / c.runs as f64,
            c.before.0,
            c.after.0,
            c.before.1,
            c.after.1
        ),
        Err(e) => println!(
            "shrink {name}: first finding {} after {} hunt runs; the shrink could not finish ({s:.2} s): {e}",
            d.invariant, d.runs
        ),
    }
}

fn main() {
    let reps = env("PODSIM_BENCH_REPS", 3) as usize;
    let runs = env("PODSIM_HUNT_RATE_RUNS", 400);
    for name in BASES {
        let base = PathBuf::from(format!("scenarios/hunt/{name}.yaml"));
        let (mut one, mut two, mut spent) = (vec![], vec![], 0);
        for rep in 0..reps {
            let order: [usize; 2] = if rep % 2 == 0 { [1, 2] } else { [2, 1] };
            for jobs in order {
                let (s, n) = hunt(&base, runs, jobs);
                spent = n;
                if jobs == 1 {
                    one.push(s)
                } else {
                    two.push(s)
                }
            }
        }
        let (one, two) = (median(one), median(two));
        println!(
            "hunt {name}: {spent} runs; 1 thread {:.2} s ({:.0} runs/s), 2 threads {:.2} s ({:.0} runs/s), speedup {:.2}x",
            one,
            spent as f64 / one,
            two,
            spent as f64 / two,
            one / two
        );
    }
    let (mut a1, mut a2) = (vec![], vec![]);
    for _ in 0..reps {
        a1.push(arith(1));
        a2.push(arith(2));
    }
    let (a1, a2) = (median(a1), median(a2));
    println!(
        "arithmetic loop (8 tasks): 1 thread {a1:.2} s, 2 threads {a2:.2} s, speedup {:.2}x (median of {reps})",
        a1 / a2
    );
    for name in BASES {
        shrink_cost(
            name,
            &PathBuf::from(format!("scenarios/hunt/{name}.yaml")),
            reps,
        );
    }
}
