//! Static pods, mirror pods and same-name pods (`scenarios/static/`): the full-name start
//! gate, mirror-pod lifecycle, and UID-carrying writes when a pod is re-created.

use crate::lifecycle::{ns, run_json, S, SEEDS};
use serde_json::Value;

fn pods<'a>(v: &'a Value, name: &str) -> Vec<&'a Value> {
    v["pods"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == name)
        .collect()
}

#[test]
fn static_pod_update_does_not_start_new_uid_before_old_stopped() {
    for seed in SEEDS {
        let v = run_json("scenarios/static/static-pod-update.yaml", seed, &[]);
        let etcd = pods(&v, "etcd");
        assert_eq!(etcd.len(), 2, "one entry per UID: {v}");
        let (old, new) = (etcd[0], etcd[1]);
        assert!(old["isStatic"].as_bool().unwrap() && new["isStatic"].as_bool().unwrap());
        assert_eq!(old["removedBy"], "manifest updated");
        let old_stopped = ns(&old["containersStoppedAtNs"]);
        // The old container drains 20s after its SIGTERM at ~10s.
        assert!(
            (30 * S..31 * S).contains(&old_stopped),
            "seed {seed}: {old}"
        );
        let new_started = ns(&new["containers"][0]["startedAtNs"][0]);
        // The full-name gate: the new UID starts only after the old one stopped (it
        // retries every 10-15 s while the old UID holds the name).
        assert!(
            new_started > old_stopped,
            "seed {seed}: new {new_started} old {old_stopped}"
        );
        assert!(
            new_started < old_stopped + 20 * S,
            "seed {seed}: {new_started}"
        );
        assert_eq!(
            new["finalPhase"], "Running",
            "seed {seed}: the mirror pod shows it"
        );
        assert_eq!(new["containers"][0]["runningAtEnd"], true);
    }
}

#[test]
fn removed_static_pod_stops_and_its_mirror_pod_goes() {
    for seed in SEEDS {
        let out = assert_cmd::Command::cargo_bin("podsim")
            .unwrap()
            .args([
                "run",
                "scenarios/static/static-pod-remove.yaml",
                "--seed",
                &seed.to_string(),
                "--json",
                "--trace",
            ])
            .arg(
                std::env::temp_dir()
                    .join(format!("podsim-static-{seed}-{}.jsonl", std::process::id())),
            )
            .output()
            .unwrap();
        assert!(out.status.success());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let p = pods(&v, "proxy")[0];
        assert_eq!(p["finalPhase"], "Deleted");
        assert_eq!(p["removedBy"], "manifest removed");
        let stopped = ns(&p["containersStoppedAtNs"]);
        assert!((13 * S..14 * S).contains(&stopped), "seed {seed}: {p}");
        assert_eq!(p["containers"][0]["lastExitCode"], 0);
        // The mirror pod was created while the pod ran and deleted after it terminated.
        let path =
            std::env::temp_dir().join(format!("podsim-static-{seed}-{}.jsonl", std::process::id()));
        let trace = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let created = trace.lines().any(|l| l.contains("(mirror of uid-0001)"));
        let removed: Vec<u64> = trace
            .lines()
            .filter(|l| l.contains("removed by kubelet (mirror pod)"))
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["atNs"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert!(created, "seed {seed}: no mirror pod created");
        assert_eq!(
            removed.len(),
            1,
            "seed {seed}: mirror pod deletions {removed:?}"
        );
        assert!(removed[0] > stopped, "seed {seed}");
    }
}

#[test]
fn recreated_pod_overlaps_and_writes_carry_their_uid() {
    for seed in SEEDS {
        let v = run_json("scenarios/static/recreate-pod.yaml", seed, &[]);
        let web = pods(&v, "web-0");
        assert_eq!(web.len(), 2, "{v}");
        let (old, new) = (web[0], web[1]);
        assert_ne!(old["uid"], new["uid"]);
        assert_eq!(ns(&old["removedFromApiAtNs"]), 10 * S + S / 2);
        // The old container's kill (grace 30) is not interrupted by the grace-0 removal:
        // it drains its full 15 s.
        let old_stopped = ns(&old["containersStoppedAtNs"]);
        assert!(
            (25 * S..26 * S).contains(&old_stopped),
            "seed {seed}: {old}"
        );
        // Same-name regular pods may overlap on the node.
        let new_started = ns(&new["containers"][0]["startedAtNs"][0]);
        assert!(new_started < old_stopped, "seed {seed}");
        // The new object never got the old UID's status: it is Running and only ever
        // held Pending and Running.
        assert_eq!(new["finalPhase"], "Running");
        for ph in new["phases"].as_array().unwrap() {
            assert!(
                ph[1] == "Pending" || ph[1] == "Running",
                "seed {seed}: {new}"
            );
        }
    }
}

/// Race catalog entry 27 (open upstream): with the proposed fix
/// (`fullNameGateCountsRuntimePods`, on in no profile) the new static UID waits until the
/// old UID's runtime-only containers are gone, so the duplicate that `current` reproduces on
/// every seed is not there.
#[test]
fn full_name_gate_counting_runtime_pods_prevents_the_duplicate_after_restart() {
    let mut b = std::collections::BTreeMap::new();
    b.insert("fullNameGateCountsRuntimePods".to_string(), true);
    let s = crate::races::side(
        "scenarios/races/static-pod-sources-not-ready.yaml",
        &b,
        &[],
        Some(&[]),
        50,
    );
    assert!(
        s.unexpected.is_empty(),
        "findings with the fix (seed, findings): {:?}",
        s.unexpected
    );
    assert_eq!(
        s.reached.get("static-pod-waits-for-full-name").copied(),
        Some(50),
        "the new UID must have waited on every seed: {:?}",
        s.reached
    );
}
