//! Throughput benchmarks. Run with `cargo bench --bench throughput`; CI only compiles them
//! (`cargo clippy --all-targets`), it never times them.
//!
//! 1. **Bare event queue**: the simulation core alone. A closed population of 1,000 timers,
//!    each rescheduling itself after a random delay drawn from a named stream, through the
//!    same `Sim` (queue, scheduler, limits) a real run uses.
//! 2. **Full model**: `benches/node-110.yaml`, a 110-pod node over one simulated hour (90
//!    two-container web pods, 10 crash-looping pods, 150 short-lived pods created and
//!    deleted over the hour), with the trace hash on and records off, as in a sweep.
//! 3. **Full model without the oracle** (`RunOptions::no_oracle`): the same runs with the
//!    invariant oracle switched off, and the oracle's overhead in percent of that time.
//!
//! Each benchmark runs `PODSIM_BENCH_REPS` times (default 7) and reports the median, so
//! both rates and their ratio come from the same process. Wall-clock time is read here and
//! only here (the clippy determinism bans are lifted for this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::run::{run, RunOptions};
use podsim::scenario::load;
use podsim::sim::{Dur, Limits, Sim, SimTime, Strategy, Stream, Trace};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Events per second of the bare core; returns (events, seconds).
fn bare_queue(events: u64) -> (u64, f64) {
    let mut sim: Sim<u32> = Sim::new(
        1,
        Strategy::Random,
        Limits {
            horizon: SimTime::MAX,
            max_events: events,
            max_events_per_instant: u64::MAX,
        },
    );
    let mut rng = Stream::new(1, "bench");
    let mut trace: Trace = Trace::new(false);
    for i in 0..1000u32 {
        let _ = sim.after(Dur(rng.between(1, 10_000_000)), i);
    }
    let t = Instant::now();
    while let Ok(ev) = sim.next_event() {
        trace.emit(sim.now(), &ev);
        let _ = sim.after(Dur(rng.between(1, 10_000_000)), ev);
    }
    let secs = t.elapsed().as_secs_f64();
    std::hint::black_box(trace.hash());
    (sim.events(), secs)
}

fn main() {
    let reps: usize = std::env::var("PODSIM_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let sc = Arc::new(
        load(Path::new("benches/node-110.yaml"), &[])
            .expect("benches/node-110.yaml")
            .scenario,
    );
    let mut bare = Vec::new();
    let mut full = Vec::new();
    let mut full_wall = Vec::new();
    let mut plain_wall = Vec::new();
    let mut full_events = 0;
    for rep in 0..reps {
        let (n, s) = bare_queue(2_000_000);
        bare.push(n as f64 / s);
        let seed = 1 + rep as u64;
        // With and without the oracle, alternating which goes first.
        let one = |no_oracle: bool| {
            let t = Instant::now();
            let out = run(
                sc.clone(),
                &RunOptions {
                    seed,
                    keep_trace: false,
                    replay: String::new(),
                    no_oracle,
                },
            );
            (out, t.elapsed().as_secs_f64())
        };
        let order = if rep % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for no_oracle in order {
            let (out, s) = one(no_oracle);
            if no_oracle {
                plain_wall.push(s);
            } else {
                assert!(out.findings.is_empty(), "oracle findings in the bench");
                full_events = out.events;
                full.push(out.events as f64 / s);
                full_wall.push(s);
            }
        }
    }
    let bare = median(bare);
    let full_rate = median(full);
    let wall = median(full_wall);
    println!(
        "bare event queue:   {:>12.0} events/s (median of {reps})",
        bare
    );
    println!(
        "full model node-110: {:>12.0} events/s, {} events, {:.1} ms wall for 1 simulated hour ({:.0}x real time)",
        full_rate,
        full_events,
        wall * 1e3,
        3600.0 / wall
    );
    println!("ratio full/bare:    {:>12.1} %", 100.0 * full_rate / bare);
    let plain = median(plain_wall);
    println!(
        "full model without oracle: {:.1} ms wall; oracle overhead {:.1} % (median {:.1} ms with it)",
        plain * 1e3,
        100.0 * (wall - plain) / plain,
        wall * 1e3
    );
}
