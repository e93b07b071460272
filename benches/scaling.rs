//! Thread scaling of sweeps. Run with `cargo bench --bench scaling`; CI only compiles it.
//!
//! Measures, in the same process and alternating, the speedup of 2 threads over 1 for
//! 1. **a sweep of node-110 seeds**: `PODSIM_SCALING_SEEDS` (default 16) one-hour runs of
//!    `benches/node-110.yaml` with the oracle on, spread over a rayon pool exactly as
//!    `podsim sweep` spreads its runs (each run owns its whole world; the scenario is a
//!    shared read-only `Arc`; nothing else is shared), and
//! 2. **a trivially parallel arithmetic loop**: the same number of independent integer
//!    hashing tasks, no memory traffic, as the ceiling this machine allows.
//!
//! On a machine whose two vCPUs are hyperthreads of one core, both speedups sit near 1.1x;
//! the sweep's figure next to the loop's is what shows whether anything shared slows it.
//! `PODSIM_BENCH_REPS` (default 5) reps; medians are reported. Wall-clock time is read here
//! and only here (the clippy determinism bans are lifted for this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::load;
use podsim::run::{run, RunOptions};
use rayon::prelude::*;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
mod common;
use common::median;

/// One arithmetic task: a long chain of multiply-xorshift steps.
fn spin(seed: u64) -> u64 {
    let mut h = seed;
    for i in 0..40_000_000u64 {
        h = (h ^ i).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
    }
    h
}

fn timed<F: FnOnce() -> u64 + Send>(threads: usize, f: F) -> f64 {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let t = Instant::now();
    let r = pool.install(f);
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(r);
    s
}

fn main() {
    let reps: usize = std::env::var("PODSIM_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let seeds: u64 = std::env::var("PODSIM_SCALING_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(16);
    let sc = Arc::new(
        load(Path::new("benches/node-110.yaml"), &[])
            .expect("benches/node-110.yaml")
            .scenario,
    );
    let sweep = || {
        (1..=seeds)
            .into_par_iter()
            .map(|seed| {
                let out = run(
                    sc.clone(),
                    &RunOptions {
                        seed,
                        keep_trace: false,
                        replay: String::new(),
                        no_oracle: false,
                        history: podsim::run::FindingHistory::Rerun,
                    },
                );
                out.events
            })
            .sum::<u64>()
    };
    let arith = || {
        (0..seeds)
            .into_par_iter()
            .map(spin)
            .fold(|| 0, |a, b| a ^ b)
            .reduce(|| 0, |a, b| a ^ b)
    };
    let (mut s1, mut s2, mut a1, mut a2) = (vec![], vec![], vec![], vec![]);
    for rep in 0..reps {
        // Alternate the order so drift in the machine's load hits both sides alike.
        let order: [usize; 2] = if rep % 2 == 0 { [1, 2] } else { [2, 1] };
        for t in order {
            let s = timed(t, sweep);
            let a = timed(t, arith);
            if t == 1 {
                s1.push(s);
                a1.push(a);
            } else {
                s2.push(s);
                a2.push(a);
            }
        }
    }
    let (s1, s2, a1, a2) = (median(s1), median(s2), median(a1), median(a2));
    println!("sweep of {seeds} node-110 seeds: 1 thread {:.2} s, 2 threads {:.2} s, speedup {:.2}x ({:.1} runs/s on 2 threads)", s1, s2, s1 / s2, seeds as f64 / s2);
    println!(
        "arithmetic loop ({seeds} tasks):  1 thread {:.2} s, 2 threads {:.2} s, speedup {:.2}x",
        a1,
        a2,
        a1 / a2
    );
    println!(
        "sweep speedup / loop speedup: {:.2} (median of {reps} reps)",
        (s1 / s2) / (a1 / a2)
    );
}
