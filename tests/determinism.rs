//! Same scenario and seed give the same trace hash: repeated, on other threads, with or
//! without kept records; different seeds of a scenario with random latencies differ.

use podsim::load;
use podsim::run::{run, RunOptions};
use podsim::scenario::Scenario;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

fn scenario(path: &str) -> Arc<Scenario> {
    Arc::new(load(Path::new(path), &[]).unwrap().scenario)
}

fn hash(sc: &Arc<Scenario>, seed: u64, keep: bool) -> String {
    run(
        sc.clone(),
        &RunOptions {
            seed,
            keep_trace: keep,
            replay: String::new(),
            ..Default::default()
        },
    )
    .trace_hash
}

const FILES: [&str; 6] = [
    "scenarios/quickstart.yaml",
    "scenarios/lifecycle/graceful-delete.yaml",
    "scenarios/lifecycle/delete-while-pulling.yaml",
    "scenarios/lifecycle/restart-policies.yaml",
    "scenarios/lifecycle/force-delete.yaml",
    "scenarios/lifecycle/stop-fault.yaml",
];

#[test]
fn same_seed_same_hash_repeated_and_with_records_kept() {
    for f in FILES {
        let sc = scenario(f);
        for seed in [1, 7, 1234] {
            let a = hash(&sc, seed, false);
            assert_eq!(a, hash(&sc, seed, false), "{f} seed {seed}");
            assert_eq!(
                a,
                hash(&sc, seed, true),
                "{f} seed {seed}: keeping records changed the hash"
            );
        }
    }
}

#[test]
fn same_seed_same_hash_on_other_threads() {
    for f in FILES {
        let sc = scenario(f);
        let here = hash(&sc, 42, false);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let sc = sc.clone();
                std::thread::spawn(move || hash(&sc, 42, false))
            })
            .collect();
        for h in handles {
            assert_eq!(h.join().unwrap(), here, "{f}");
        }
    }
}

#[test]
fn different_seeds_give_different_hashes() {
    let sc = scenario("scenarios/quickstart.yaml");
    let hashes: BTreeSet<String> = (1..=20).map(|s| hash(&sc, s, false)).collect();
    assert_eq!(
        hashes.len(),
        20,
        "quickstart has random latencies: every seed must differ"
    );
}

#[test]
fn trace_records_fold_into_the_reported_hash() {
    let sc = scenario("scenarios/quickstart.yaml");
    let out = run(
        sc,
        &RunOptions {
            seed: 3,
            keep_trace: true,
            replay: String::new(),
            ..Default::default()
        },
    );
    let last = out.trace.last().expect("records kept");
    assert_eq!(format!("{:016x}", last.hash), out.trace_hash);
    assert_eq!(out.trace.len() as u64, out.trace.last().unwrap().index + 1);
}
