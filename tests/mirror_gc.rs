//! Mirror pods and garbage collection on `current`: a static pod's status never lands on a
//! mirror pod the pod manager translates to another UID (`scenarios/static/
//! static-pod-update.yaml`), a user's delete of a mirror pod leaves the static pod running
//! and the kubelet creates a new mirror pod (`scenarios/static/mirror-pod-delete.yaml`).
//! Seeds 1-5 through the `podsim` binary, asserted from `--json` and `--trace`.

use crate::lifecycle::{pod, S, SEEDS};
use serde_json::Value;

/// `podsim run FILE --seed N --json --trace T`: the summary and the trace records.
fn run_traced(file: &str, seed: u64) -> (Value, Vec<Value>) {
    let path = std::env::temp_dir().join(format!(
        "podsim-mirror-gc-{}-{seed}-{}.jsonl",
        file.replace('/', "_"),
        std::process::id()
    ));
    let out = assert_cmd::Command::cargo_bin("podsim")
        .unwrap()
        .args(["run", file, "--seed", &seed.to_string(), "--json", "--trace"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{file} seed {seed}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let trace = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let recs = trace
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (v, recs)
}

/// (time, text) of every trace record whose text contains `needle`.
fn records<'a>(recs: &'a [Value], needle: &str) -> Vec<(u64, &'a str)> {
    recs.iter()
        .filter_map(|r| {
            let t = r["rec"].as_str()?;
            t.contains(needle).then(|| (r["atNs"].as_u64().unwrap(), t))
        })
        .collect()
}

/// After the manifest update at 10 s the pod manager holds the new UID under the full
/// name, so the old mirror pod translates to it: the old UID's terminating status (not
/// ready from ~30 s) is skipped, and the old mirror pod is never patched again before the
/// kubelet replaces it.
#[test]
fn old_static_uid_status_never_lands_after_a_manifest_update() {
    for seed in SEEDS {
        let (v, recs) = run_traced("scenarios/static/static-pod-update.yaml", seed);
        assert_eq!(v["findings"], serde_json::json!([]), "seed {seed}");
        let mirrors = records(&recs, "(mirror of uid-0001)");
        assert_eq!(mirrors.len(), 1, "seed {seed}: {mirrors:?}");
        let old_mirror = mirrors[0].1.split_whitespace().nth(1).unwrap().to_owned();
        let late: Vec<_> = records(&recs, &format!("api {old_mirror} patched"))
            .into_iter()
            .filter(|(t, _)| *t >= 10 * S)
            .collect();
        assert!(late.is_empty(), "seed {seed}: {late:?}");
        // The new UID's own mirror pod shows it running.
        assert!(!records(&recs, "(mirror of uid-0003)").is_empty(), "seed {seed}");
    }
}

/// A graceful delete (10 s) and a force delete (30 s) of the mirror pod: each time the
/// API object goes, the kubelet creates a new one (new UID) within a sync, and the static
/// pod's container runs on untouched.
#[test]
fn deleted_mirror_pod_is_recreated_and_static_pod_keeps_running() {
    for seed in SEEDS {
        let (v, recs) = run_traced("scenarios/static/mirror-pod-delete.yaml", seed);
        assert_eq!(v["findings"], serde_json::json!([]), "seed {seed}");
        let p = pod(&v, "proxy");
        assert_eq!(p["isStatic"], true);
        assert_eq!(p["finalPhase"], "Running", "seed {seed}: {p}");
        let c = &p["containers"][0];
        assert_eq!(c["starts"], 1, "seed {seed}");
        assert_eq!(c["restarts"], 0, "seed {seed}");
        assert_eq!(c["runningAtEnd"], true, "seed {seed}");
        assert!(c["sigtermsAtNs"].as_array().unwrap().is_empty(), "seed {seed}");
        // The user's deletes reach the API server.
        assert_eq!(records(&recs, "delete grace=30s").len(), 1, "seed {seed}");
        assert_eq!(records(&recs, "force-deleted").len(), 1, "seed {seed}");
        // Three mirror pods in all, each a new object; the last one is there at the end.
        let created = records(&recs, "(mirror of uid-0001)");
        assert_eq!(created.len(), 3, "seed {seed}: {created:?}");
        for (deleted_at, made) in [(10 * S, created[1].0), (30 * S, created[2].0)] {
            assert!(
                made > deleted_at && made < deleted_at + 10 * S,
                "seed {seed}: mirror pod deleted at {deleted_at}, recreated at {made}"
            );
        }
        let last = created[2].1.split_whitespace().nth(1).unwrap();
        assert!(
            records(&recs, &format!("api {last} removed")).is_empty(),
            "seed {seed}"
        );
        // The static pod's status reaches the new mirror pod.
        assert!(
            !records(&recs, &format!("api {last} patched phase=Running")).is_empty(),
            "seed {seed}"
        );
    }
}
