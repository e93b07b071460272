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
//! 4. **Full model with probes**: `benches/node-110-probes.yaml`, the same node with a
//!    liveness and a readiness probe every 10 s on each web pod's app container (the
//!    issue's target workload: probes every 10 s, steady churn), with and without oracle.
//! 5. **The oracle with its histories kept** (`FindingHistory::Kept`): each scenario also
//!    runs with every pod's last transitions kept as the run goes, as a run that makes
//!    findings does when it goes again to quote them (the default, `FindingHistory::Rerun`,
//!    keeps none in a run without findings, such as these).
//!
//! Each benchmark runs `PODSIM_BENCH_REPS` times (default 7) and reports the median, so
//! both rates and their ratio come from the same process. The ratios are also given paired
//! by rep (each rep's run with the oracle against the same rep's run without it, each rep's
//! model rate against the bare queue timed just before it), with their median and range:
//! a machine that slows down for a while then moves both sides of a pair. Wall-clock time is read here and
//! only here (the clippy determinism bans are lifted for this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::load;
use podsim::run::{run, FindingHistory, RunOptions};
use podsim::sim::{Dur, Limits, Sim, SimTime, Strategy, Stream, Trace};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
mod common;
use common::median;

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

/// Medians over the reps of one scenario.
#[derive(Default)]
struct Full {
    rate: Vec<f64>,
    wall: Vec<f64>,
    plain_wall: Vec<f64>,
    kept_wall: Vec<f64>,
    /// Per rep: the oracle's overhead in percent of the same rep's run without it.
    paired_oracle: Vec<f64>,
    /// Per rep: the same with the histories kept.
    paired_kept: Vec<f64>,
    /// Per rep: the model's event rate in percent of the same rep's bare queue.
    paired_bare: Vec<f64>,
    events: u64,
}

impl Full {
    /// One rep: with and without the oracle, and with the histories kept, in an order
    /// that turns from rep to rep.
    fn rep(&mut self, sc: &Arc<podsim::scenario::Scenario>, seed: u64, rep: usize, bare: f64) {
        #[derive(Clone, Copy, PartialEq)]
        enum Kind {
            With,
            Without,
            Kept,
        }
        let one = |kind: Kind| {
            let t = Instant::now();
            let out = run(
                sc.clone(),
                &RunOptions {
                    seed,
                    keep_trace: false,
                    replay: String::new(),
                    no_oracle: kind == Kind::Without,
                    history: if kind == Kind::Kept {
                        FindingHistory::Kept
                    } else {
                        FindingHistory::Rerun
                    },
                },
            );
            (out, t.elapsed().as_secs_f64())
        };
        let mut order = [Kind::With, Kind::Without, Kind::Kept];
        order.rotate_left(rep % 3);
        let (mut with, mut without, mut kept) = (0.0, 0.0, 0.0);
        for kind in order {
            let (out, s) = one(kind);
            if kind == Kind::Without {
                self.plain_wall.push(s);
                without = s;
            } else if kind == Kind::Kept {
                assert!(out.findings.is_empty(), "oracle findings in the bench");
                self.kept_wall.push(s);
                kept = s;
            } else {
                assert!(out.findings.is_empty(), "oracle findings in the bench");
                self.events = out.events;
                self.rate.push(out.events as f64 / s);
                self.wall.push(s);
                with = s;
                self.paired_bare.push(100.0 * out.events as f64 / s / bare);
            }
        }
        self.paired_oracle.push(100.0 * (with - without) / without);
        self.paired_kept.push(100.0 * (kept - without) / without);
    }

    fn report(self, name: &str, bare: f64) {
        let rate = median(self.rate);
        let wall = median(self.wall);
        let plain = median(self.plain_wall);
        let kept = median(self.kept_wall);
        println!(
            "{name}: {:>10.0} events/s, {} events, {:.1} ms wall per simulated hour ({:.0}x real time); ratio to bare {:.1} %",
            rate,
            self.events,
            wall * 1e3,
            3600.0 / wall,
            100.0 * rate / bare
        );
        println!(
            "{name} without oracle: {:.1} ms wall; oracle overhead {:.1} %",
            plain * 1e3,
            100.0 * (wall - plain) / plain,
        );
        let spread = |v: &[f64]| {
            let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (lo, hi)
        };
        let (olo, ohi) = spread(&self.paired_oracle);
        let (blo, bhi) = spread(&self.paired_bare);
        println!(
            "{name} paired by rep: oracle overhead {:.1} % (range {olo:.1} to {ohi:.1}); ratio to the rep's bare queue {:.1} % (range {blo:.1} to {bhi:.1})",
            median(self.paired_oracle.clone()),
            median(self.paired_bare.clone()),
        );
        println!(
            "{name} with the histories kept: {:.1} ms wall; oracle overhead {:.1} % (paired {:.1} %)",
            kept * 1e3,
            100.0 * (kept - plain) / plain,
            median(self.paired_kept.clone()),
        );
    }
}

fn main() {
    let reps: usize = std::env::var("PODSIM_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let scenario = |file: &str| {
        Arc::new(
            load(Path::new(file), &[])
                .unwrap_or_else(|e| panic!("{file}: {e:?}"))
                .scenario,
        )
    };
    let plain_sc = scenario("benches/node-110.yaml");
    let probes_sc = scenario("benches/node-110-probes.yaml");
    let mut bare = Vec::new();
    let mut plain = Full::default();
    let mut probes = Full::default();
    for rep in 0..reps {
        let (n, s) = bare_queue(2_000_000);
        let rate = n as f64 / s;
        bare.push(rate);
        let seed = 1 + rep as u64;
        plain.rep(&plain_sc, seed, rep, rate);
        probes.rep(&probes_sc, seed, rep, rate);
    }
    let bare = median(bare);
    println!(
        "bare event queue: {:>10.0} events/s (median of {reps})",
        bare
    );
    plain.report("node-110 (no probes)", bare);
    probes.report("node-110-probes (probes every 10 s, churn)", bare);
}
