//! Scenario tests of the eviction manager's signals beyond memory (issue #16): local
//! storage eviction (ephemeral-storage limits, emptyDir `sizeLimit`), DiskPressure on
//! nodefs with upstream's disk ranking and admission, PIDPressure with upstream's PID
//! ranking; node-level reclaim (dead containers, unused images) before a disk eviction
//! and periodic image garbage collection; on seeds 1-5 through the `podsim` binary with
//! `--json`.
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
        // Each eviction follows, in the same round, a reclaim that found nothing to remove
        // (every image in use, no dead container) and left the pressure.
        for e in evictions(&v) {
            let r = reclaim_done_at(&v, e["atNs"].as_u64().unwrap());
            assert_eq!(r["relieved"], false, "seed {seed}");
            assert_eq!(r["imagesRemoved"], 0, "seed {seed}");
        }
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

fn reclaims(v: &Value) -> &Vec<Value> {
    v["metrics"]["nodeReclaims"].as_array().unwrap()
}

/// The reclaim that measured again at `at`.
fn reclaim_done_at(v: &Value, at: u64) -> &Value {
    reclaims(v)
        .iter()
        .find(|r| r["doneAtNs"] == at)
        .unwrap_or_else(|| panic!("no reclaim done at {at}"))
}

fn images_removed(v: &Value) -> Vec<&str> {
    v["metrics"]["imagesRemoved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["image"].as_str().unwrap())
        .collect()
}

#[test]
fn disk_pressure_relieved_by_reclaim_evicts_no_pod() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/reclaim-relieves.yaml", seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        assert!(evictions(&v).is_empty(), "seed {seed}");
        let r = reclaims(&v);
        assert_eq!(r.len(), 1, "seed {seed}");
        assert_eq!(r[0]["signal"], "nodefs.available", "seed {seed}");
        // The job's dead container, then its image (no longer in use once it went).
        assert_eq!(r[0]["containersRemoved"], 1, "seed {seed}");
        assert_eq!(r[0]["imagesRemoved"], 1, "seed {seed}");
        assert_eq!(r[0]["relieved"], true, "seed {seed}");
        assert_eq!(images_removed(&v), ["example/batch:1"], "seed {seed}");
        let removed_at = v["metrics"]["imagesRemoved"][0]["atNs"].as_u64().unwrap();
        assert!(
            removed_at <= r[0]["doneAtNs"].as_u64().unwrap(),
            "seed {seed}"
        );
        // DiskPressure was set by the round that reclaimed.
        let conds = v["metrics"]["nodeConditions"].as_array().unwrap();
        assert_eq!(conds[0][1], "DiskPressure", "seed {seed}");
        assert_eq!(conds[0][0], r[0]["atNs"], "seed {seed}");
        assert_eq!(pod(&v, "writer")["finalPhase"], "Running", "seed {seed}");
        assert_eq!(pod(&v, "job")["finalPhase"], "Succeeded", "seed {seed}");
        // The 8Gi went: nodefs is above its 2Gi threshold at the end.
        let avail = v["metrics"]["diskAtEnd"]["nodefsAvailableBytes"]
            .as_u64()
            .unwrap();
        assert!(avail > 2 << 30, "seed {seed}: {avail}");
    }
}

#[test]
fn disk_pressure_not_relieved_by_reclaim_evicts_in_upstream_order() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/reclaim-not-enough.yaml", seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        assert_eq!(order(&v), ["hog", "small"], "seed {seed}");
        for e in evictions(&v) {
            assert_eq!(e["signal"], "nodefs.available", "seed {seed}");
            let r = reclaim_done_at(&v, e["atNs"].as_u64().unwrap());
            assert_eq!(r["relieved"], false, "seed {seed}");
        }
        // The first reclaim removed the job's container and image, not enough.
        let first = &reclaims(&v)[0];
        assert_eq!(first["containersRemoved"], 1, "seed {seed}");
        assert_eq!(first["imagesRemoved"], 1, "seed {seed}");
        assert_eq!(
            eviction(&v, "hog")["atNs"],
            first["doneAtNs"],
            "seed {seed}"
        );
        assert_eq!(images_removed(&v), ["example/batch:1"], "seed {seed}");
        assert_eq!(pod(&v, "high")["finalPhase"], "Running", "seed {seed}");
    }
}

#[test]
fn periodic_image_gc_frees_down_to_the_low_threshold() {
    for seed in SEEDS {
        let v = run_json("scenarios/eviction/image-gc.yaml", seed, &[]);
        assert_eq!(v["findings"].as_array().unwrap().len(), 0, "seed {seed}");
        assert!(evictions(&v).is_empty(), "seed {seed}");
        let runs = v["metrics"]["imageGcRuns"].as_array().unwrap();
        assert_eq!(runs.len(), 1, "seed {seed}");
        assert_eq!(runs[0]["usagePercent"], 85, "seed {seed}");
        // 80% of 10Gi may be used: 8Gi; 8.5Gi are.
        assert_eq!(runs[0]["toFreeBytes"], 512u64 << 20, "seed {seed}");
        // Least recently used first; web's image is in use, job-c's detected too recently.
        assert_eq!(runs[0]["images"][0], "example/job-a:1", "seed {seed}");
        assert_eq!(images_removed(&v), ["example/job-a:1"], "seed {seed}");
        let d = &v["metrics"]["diskAtEnd"];
        let cap = d["imagefsCapacityBytes"].as_u64().unwrap();
        let avail = d["imagefsAvailableBytes"].as_u64().unwrap();
        assert!(avail * 100 >= cap * 20, "seed {seed}: {avail} of {cap}");
        assert_eq!(pod(&v, "web")["finalPhase"], "Running", "seed {seed}");
    }
}
