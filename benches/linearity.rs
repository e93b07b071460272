//! Linearity benchmarks. Run with `cargo bench --bench linearity`; CI only compiles them.
//!
//! A run's cost must follow the live state, not the history: these cases put the same
//! workload side by side at two sizes in one process and print the cost per unit of each and
//! their ratio (1.0 = linear; the figures of one run, medians of `PODSIM_BENCH_REPS`, default
//! 3, alternating the order of the two sizes so drift in the machine's load hits both alike).
//!
//! 1. **Simulated time, crash loops**: ten pods whose only container exits with code 1
//!    after 30 s (restartPolicy Always, so crash-loop back-off and container GC run all
//!    along) over 10 and 80 simulated hours: ms of wall time per simulated hour.
//! 2. **Simulated time, the probes node**: `benches/node-110-probes.yaml` over 1 and 10
//!    simulated hours (`PODSIM_LONG_HOURS`, default 10; 200 is the long run): ms per
//!    simulated hour.
//! 3. **Rejected against admitted pods**: `benches/pods-100k.yaml` with 10,000 replicas
//!    (`PODSIM_REJECT_PODS`) on the default 110-pod capacity (all but 110 rejected
//!    `OutOfpods`) and on the file's 200,000-pod capacity (all admitted): µs per pod.
//!
//! Wall-clock time is read here and only here (the clippy determinism bans are lifted for
//! this file).
#![allow(clippy::disallowed_types, clippy::disallowed_methods)]

use podsim::run::{run, RunOptions};
use podsim::scenario::Scenario;
use podsim::{load, load_str};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
mod common;
use common::{env, median};

const CRASHLOOP: &str = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: crashloop-10}
spec:
  horizon: 10h
  pods:
    - replicas: 10
      template:
        metadata: {name: crashy}
        spec:
          containers: [{name: app, image: example/crashy:1}]
      behaviour:
        app: {runFor: 30s, exitCode: 1}
";

fn set(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Seconds of one run with the oracle on, and its event count.
fn once(sc: &Arc<Scenario>) -> (f64, u64) {
    let t = Instant::now();
    let out = run(
        sc.clone(),
        &RunOptions {
            seed: 1,
            keep_trace: false,
            replay: String::new(),
            no_oracle: false,
            history: podsim::run::FindingHistory::Rerun,
        },
    );
    (t.elapsed().as_secs_f64(), out.events)
}

/// Median seconds of `small` and `large`, alternating which goes first.
fn pair(small: &Arc<Scenario>, large: &Arc<Scenario>, reps: usize) -> ((f64, u64), (f64, u64)) {
    let (mut s, mut l, mut es, mut el) = (vec![], vec![], 0, 0);
    for rep in 0..reps {
        for first in [rep % 2 == 0, rep % 2 != 0] {
            if first {
                let (t, e) = once(small);
                s.push(t);
                es = e;
            } else {
                let (t, e) = once(large);
                l.push(t);
                el = e;
            }
        }
    }
    ((median(s), es), (median(l), el))
}

fn main() {
    let reps = env("PODSIM_BENCH_REPS", 3) as usize;
    let long_hours = env("PODSIM_LONG_HOURS", 10);
    let reject_pods = env("PODSIM_REJECT_PODS", 10_000);
    let text = |name: &str, sets: &[(&str, String)]| {
        Arc::new(
            load_str(name, CRASHLOOP, &set(sets))
                .unwrap_or_else(|e| panic!("{name}: {e:?}"))
                .scenario,
        )
    };
    let file = |path: &str, sets: &[(&str, String)]| {
        Arc::new(
            load(Path::new(path), &set(sets))
                .unwrap_or_else(|e| panic!("{path}: {e:?}"))
                .scenario,
        )
    };
    let hours = |h: u64| ("spec.horizon", format!("{h}h"));

    let ((s, es), (l, el)) = pair(
        &text("crashloop-10h", &[hours(10)]),
        &text("crashloop-80h", &[hours(80)]),
        reps,
    );
    println!(
        "crash loops, 10 pods: 10 h {:.0} ms ({es} events) = {:.1} ms per simulated hour; 80 h {:.0} ms ({el} events) = {:.1} ms per simulated hour; ratio {:.2}",
        s * 1e3,
        s * 1e3 / 10.0,
        l * 1e3,
        l * 1e3 / 80.0,
        (l / 80.0) / (s / 10.0)
    );

    let probes = "benches/node-110-probes.yaml";
    let ((s, es), (l, el)) = pair(
        &file(probes, &[hours(1)]),
        &file(probes, &[hours(long_hours)]),
        reps,
    );
    let lh = long_hours as f64;
    println!(
        "node-110-probes: 1 h {:.0} ms ({es} events); {long_hours} h {:.0} ms ({el} events) = {:.1} ms per simulated hour; ratio {:.2}",
        s * 1e3,
        l * 1e3,
        l * 1e3 / lh,
        (l / lh) / s
    );

    let big = "benches/pods-100k.yaml";
    let n = ("spec.pods[0].replicas", reject_pods.to_string());
    let rejected = file(big, &[n.clone(), ("spec.node.capacity.pods", "110".into())]);
    let admitted = file(big, &[n]);
    let ((r, er), (a, ea)) = pair(&rejected, &admitted, reps);
    let per = |t: f64| t * 1e6 / reject_pods as f64;
    println!(
        "{reject_pods} pods: rejected (110-pod capacity) {:.2} s ({er} events) = {:.0} us per pod; admitted {:.2} s ({ea} events) = {:.0} us per pod; rejected / admitted {:.2}",
        r,
        per(r),
        a,
        per(a),
        r / a
    );
}
