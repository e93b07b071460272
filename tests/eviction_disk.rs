//! Scenario tests of the eviction manager's signals beyond memory (issue #16): local
//! storage eviction (ephemeral-storage limits, emptyDir `sizeLimit`), DiskPressure on
//! nodefs with upstream's disk ranking and admission, PIDPressure with upstream's PID
//! ranking; on seeds 1-5 through the `podsim` binary with `--json`.
//!
//! Included from `tests/main.rs` as `mod eviction_disk;`.

use crate::lifecycle::{pod, run_json, S, SEEDS};
use serde_json::Value;

fn evictions(v: &Value) -> &Vec<Value> {
    v["metrics"]["evictions"].as_array().unwrap()
}

fn order(v: &Value) -> Vec<&str> {
    evictions(v)
        .iter()
        .map(|e| e["pod"].as_str().unwrap())
        .collect()
}

fn eviction<'a>(v: &'a Value, name: &str) -> &'a Value {
    evictions(v)
        .iter()
        .find(|e| e["pod"] == name)
        .unwrap_or_else(|| panic!("{name} not evicted"))
}

#[test]
fn ephemeral_storage_limit_and_empty_dir_size_limit_evict_the_pod_over_it() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/ephemeral-storage-limit.yaml", seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        // Both cross their limits within a round of each other: which goes first depends
        // on the seed's start times; each is evicted once.
        let mut o = order(&v);
        o.sort_unstable();
        assert_eq!(o, ["cache", "writer"], "seed {seed}");
        let w = eviction(&v, "writer");
        assert_eq!(w["signal"], "ephemeralpodfs.limit", "seed {seed}");
        assert_eq!(
            w["message"],
            "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. "
        );
        // 100Mi every 10s from its start: over 1Gi after 110s, evicted at the next round.
        let at = w["atNs"].as_u64().unwrap();
        assert!((110 * S..=135 * S).contains(&at), "seed {seed}: {at}");
        assert_eq!(w["gracePeriodSeconds"], 1, "seed {seed}");
        let c = eviction(&v, "cache");
        assert_eq!(c["signal"], "emptydirfs.limit", "seed {seed}");
        assert_eq!(
            c["message"],
            "Usage of EmptyDir volume \"scratch\" exceeds the limit \"500Mi\". "
        );
        for name in ["writer", "cache"] {
            assert_eq!(pod(&v, name)["finalPhase"], "Failed", "{name} seed {seed}");
            assert_eq!(pod(&v, name)["reason"], "Evicted", "{name} seed {seed}");
        }
        assert_eq!(pod(&v, "steady")["finalPhase"], "Running", "seed {seed}");
        // Local storage eviction sets no node condition.
        assert!(v["metrics"]["nodeConditions"]
            .as_array()
            .unwrap()
            .is_empty());
    }
}

#[test]
fn disk_pressure_evicts_in_upstream_rank_order_and_rejects_new_pods() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/disk-pressure.yaml", seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        // rankDiskPressureFunc: above request first, then priority, then use above request.
        assert_eq!(order(&v), ["hog", "small"], "seed {seed}");
        for e in evictions(&v) {
            assert_eq!(e["signal"], "nodefs.available", "seed {seed}");
            let m = e["message"].as_str().unwrap();
            assert!(
                m.starts_with(
                    "The node was low on resource: ephemeral-storage. Threshold quantity: "
                ),
                "seed {seed}: {m}"
            );
            assert!(
                m.contains("has larger consumption of ephemeral-storage. "),
                "{m}"
            );
        }
        for name in ["high", "within"] {
            assert_eq!(pod(&v, name)["finalPhase"], "Running", "{name} seed {seed}");
        }
        let conds = v["metrics"]["nodeConditions"].as_array().unwrap();
        assert_eq!(conds[0][1], "DiskPressure", "seed {seed}");
        assert_eq!(conds[0][2], true, "seed {seed}");
        // DiskPressure holds for the transition period (1m) after the last observation.
        let off = conds.iter().find(|c| c[2] == false).unwrap();
        assert!(off[0].as_u64().unwrap() >= conds[0][0].as_u64().unwrap() + 60 * S);
        // Admission under DiskPressure rejects a Burstable pod too.
        let late = pod(&v, "late");
        assert_eq!(late["finalPhase"], "Failed", "seed {seed}");
        assert_eq!(late["reason"], "Evicted", "seed {seed}");
        let starts = late["containers"][0]["startedAtNs"].as_array().unwrap();
        assert!(starts.is_empty(), "seed {seed}");
    }
}

#[test]
fn pid_pressure_evicts_lowest_priority_then_most_processes_never_critical() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/pid-pressure.yaml", seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        assert_eq!(order(&v), ["forker", "quiet", "high"], "seed {seed}");
        for e in evictions(&v) {
            assert_eq!(e["signal"], "pid.available", "seed {seed}");
            assert_eq!(
                e["message"],
                "The node was low on resource: pids. Threshold quantity: 1k, available: 500. "
            );
        }
        assert_eq!(pod(&v, "critical")["finalPhase"], "Running", "seed {seed}");
        let conds = v["metrics"]["nodeConditions"].as_array().unwrap();
        assert_eq!(conds[0][1], "PIDPressure", "seed {seed}");
    }
}
