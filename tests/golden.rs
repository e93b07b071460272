//! Refactoring guard: every bundled scenario (`scenarios/**`, `benches/*.yaml`), seeds 1–5,
//! on every profile, keeps the trace hash and the `podsim run --json` output recorded in
//! `tests/golden/runs.txt`. A change that alters a run on purpose (a bug fix) re-records
//! the list with `PODSIM_GOLDEN_RECORD=1 cargo test --test main golden` and says in its
//! commit which lines changed and why.
//!
//! `benches/pods-100k.yaml` (100,000 pods: minutes a run in the test profile, longer on the
//! v1.21 design) is left out; it is the memory benchmark, and its `current` runs are
//! compared by hand with the release binary when the model changes.

use podsim::load;
use podsim::run::{run, RunOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// Every release but v1.31, which `current` stands for (same switches, same trace).
const PROFILES: [&str; 7] = [
    "v1.21", "v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "current",
];
const SEEDS: std::ops::RangeInclusive<u64> = 1..=5;
const LIST: &str = "tests/golden/runs.txt";
const HEAVY: &str = "benches/pods-100k.yaml";

/// FNV-1a, 64 bits: the recorded fingerprint of a `--json` output.
fn fnv(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Every bundled scenario file but the 100,000-pod one.
fn bundled() -> Vec<String> {
    let mut files = crate::files::scenarios("scenarios");
    files.extend(crate::files::scenarios("benches"));
    files
        .into_iter()
        .map(|p| p.display().to_string())
        .filter(|p| p != HEAVY)
        .collect()
}

/// One line of the list: `FILE PROFILE SEED TRACE_HASH JSON_FNV` (or `error ERROR_FNV`).
fn line(file: &str, profile: &str, seed: u64) -> String {
    let sets = vec![("spec.kubelet.profile".to_string(), profile.to_string())];
    let head = format!("{file} {profile} {seed}");
    let sc = match load(Path::new(file), &sets) {
        Ok(l) => Arc::new(l.scenario),
        Err(e) => return format!("{head} error {:016x}", fnv(e.to_string().as_bytes())),
    };
    let replay = format!("podsim run {file} --seed {seed} --profile {profile}");
    let out = run(
        sc,
        &RunOptions {
            seed,
            replay,
            ..Default::default()
        },
    );
    let json = serde_json::to_string_pretty(&out).unwrap();
    format!("{head} {} {:016x}", out.trace_hash, fnv(json.as_bytes()))
}

fn key(l: &str) -> String {
    l.split(' ').take(3).collect::<Vec<_>>().join(" ")
}

#[test]
fn bundled_scenarios_keep_their_trace_hashes_and_json() {
    let record = std::env::var("PODSIM_GOLDEN_RECORD").is_ok_and(|v| v == "1");
    let verbose = record || std::env::var("PODSIM_GOLDEN_VERBOSE").is_ok_and(|v| v == "1");
    let recorded: BTreeMap<String, String> = std::fs::read_to_string(LIST)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| (key(l), l.to_string()))
        .collect();
    let mut jobs = Vec::new();
    for f in bundled() {
        for p in PROFILES {
            for s in SEEDS {
                jobs.push((f.clone(), p, s));
            }
        }
    }
    // Two threads: the machine CI runs on has two cores.
    let chunks: Vec<Vec<(String, &str, u64)>> = (0..2)
        .map(|i| jobs.iter().skip(i).step_by(2).cloned().collect())
        .collect();
    let mut now: BTreeMap<String, String> = BTreeMap::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|c| {
                s.spawn(move || {
                    c.iter()
                        .map(|(f, p, seed)| {
                            let k = format!("{f} {p} {seed}");
                            let l = line(f, p, *seed);
                            if verbose {
                                eprintln!("{l}");
                            }
                            (k, l)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            now.extend(h.join().unwrap());
        }
    });
    if record {
        let mut text = String::from(
            "# FILE PROFILE SEED TRACE_HASH JSON_FNV: see tests/golden.rs; re-record with\n\
             # PODSIM_GOLDEN_RECORD=1 cargo test --test main golden\n",
        );
        for l in now.values() {
            text.push_str(l);
            text.push('\n');
        }
        std::fs::create_dir_all("tests/golden").unwrap();
        std::fs::write(LIST, text).unwrap();
        return;
    }
    let mut diffs = Vec::new();
    for (k, l) in &now {
        match recorded.get(k) {
            Some(r) if r == l => {}
            Some(r) => diffs.push(format!("changed:  {r}\n      now: {l}")),
            None => diffs.push(format!("not recorded: {l}")),
        }
    }
    for k in recorded.keys() {
        if !now.contains_key(k) {
            diffs.push(format!("recorded but no longer run: {k}"));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} of {} runs differ from {LIST}:\n{}",
        diffs.len(),
        now.len(),
        diffs.join("\n")
    );
}
