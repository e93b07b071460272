//! Mirror pods and garbage collection on `current`: a static pod's status never lands on a
//! mirror pod the pod manager translates to another UID (`scenarios/static/
//! static-pod-update.yaml`), a user's delete of a mirror pod leaves the static pod running
//! and the kubelet creates a new mirror pod (`scenarios/static/mirror-pod-delete.yaml`);
//! the container garbage collector keeps at most `maxPerPodContainer` dead instances and
//! never removes a running container (`scenarios/lifecycle/container-gc.yaml`); the sandbox
//! collector removes a deleted pod's stopped sandbox once its containers are gone and never
//! a live pod's newest or ready one (`scenarios/lifecycle/sandbox-gc.yaml`).
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
        .args([
            "run",
            file,
            "--seed",
            &seed.to_string(),
            "--json",
            "--trace",
        ])
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
        assert!(
            !records(&recs, "(mirror of uid-0003)").is_empty(),
            "seed {seed}"
        );
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
        assert!(
            c["sigtermsAtNs"].as_array().unwrap().is_empty(),
            "seed {seed}"
        );
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

const GC: &str = "scenarios/lifecycle/container-gc.yaml";

/// The `RemoveContainer` calls of the run, as (time, pod UID text).
fn removals(recs: &[Value]) -> Vec<(u64, String)> {
    records(recs, "RemoveContainer")
        .into_iter()
        .filter(|(_, t)| t.ends_with("begin"))
        .map(|(at, t)| (at, t.split_whitespace().nth(1).unwrap().to_owned()))
        .collect()
}

/// Upstream defaults: a crash-looping container keeps at most one dead instance, the
/// completed job keeps its one, the server is never touched.
#[test]
fn container_gc_keeps_at_most_max_per_pod_container_dead_instances() {
    for seed in SEEDS {
        let (v, _) = run_traced(GC, seed);
        assert_eq!(v["findings"], serde_json::json!([]), "seed {seed}");
        let crasher = &pod(&v, "crasher")["containers"][0];
        assert!(crasher["starts"].as_u64().unwrap() >= 4, "seed {seed}");
        assert!(crasher["deadAtEnd"].as_u64().unwrap() <= 1, "seed {seed}");
        let job = &pod(&v, "job")["containers"][0];
        assert_eq!(job["deadAtEnd"], 1, "seed {seed}");
        assert_eq!(pod(&v, "job")["finalPhase"], "Succeeded");
        let server = &pod(&v, "server")["containers"][0];
        assert_eq!(server["runningAtEnd"], true, "seed {seed}");
        assert_eq!(server["starts"], 1, "seed {seed}");
        assert_eq!(server["deadAtEnd"], 0, "seed {seed}");
    }
}

/// `maxPerPodContainer: 0`: each run (every minute) removes every dead container; only
/// what died since the last run is left at the end, and a running container is never
/// removed (the server runs on, started once).
#[test]
fn container_gc_with_no_dead_instances_kept_removes_them_at_each_period() {
    for seed in SEEDS {
        let path = std::env::temp_dir().join(format!(
            "podsim-mirror-gc-zero-{seed}-{}.jsonl",
            std::process::id()
        ));
        let out = assert_cmd::Command::cargo_bin("podsim")
            .unwrap()
            .args(["run", GC, "--seed", &seed.to_string(), "--json", "--trace"])
            .arg(&path)
            .args(["--set", "spec.kubelet.containerGC.maxPerPodContainer=0"])
            .output()
            .unwrap();
        assert!(out.status.success(), "seed {seed}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let trace = std::fs::read_to_string(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let recs: Vec<Value> = trace
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let job = pod(&v, "job");
        assert_eq!(job["finalPhase"], "Succeeded", "seed {seed}");
        assert_eq!(job["containers"][0]["deadAtEnd"], 0, "seed {seed}");
        let job_uid = job["uid"].as_str().unwrap();
        // The job's container (dead since ~6 s) goes at the first run, at 60 s.
        let job_removed: Vec<u64> = removals(&recs)
            .into_iter()
            .filter(|(_, u)| u == job_uid)
            .map(|(t, _)| t)
            .collect();
        assert_eq!(job_removed, [60 * S], "seed {seed}");
        // The crasher: removals at every period, and nothing dead older than the last run.
        let crasher = pod(&v, "crasher");
        let c_uid = crasher["uid"].as_str().unwrap();
        for k in 1..=4u64 {
            assert!(
                removals(&recs)
                    .iter()
                    .any(|(t, u)| u == c_uid && *t == k * 60 * S),
                "seed {seed}: no removal at {k} min"
            );
        }
        let c = &crasher["containers"][0];
        let dead_after_last_run = c["finishedAtNs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t.as_u64().unwrap() > 240 * S)
            .count() as u64;
        assert!(
            c["deadAtEnd"].as_u64().unwrap() <= dead_after_last_run.max(1),
            "seed {seed}: {c}"
        );
        let server = &pod(&v, "server")["containers"][0];
        assert_eq!(server["runningAtEnd"], true, "seed {seed}");
        assert_eq!(server["starts"], 1, "seed {seed}");
        assert_eq!(v["findings"], serde_json::json!([]), "seed {seed}");
    }
}

const SANDBOX_GC: &str = "scenarios/lifecycle/sandbox-gc.yaml";

/// The sandbox collector: the pod deleted at 5 s loses its dead container at the first
/// run (60 s) and its stopped sandbox at the next (120 s), the first run after a relist saw
/// the container go; the removal succeeds and is not repeated. The completed job (not
/// deleted) keeps its newest sandbox; the server's ready sandbox is never removed.
#[test]
fn sandbox_gc_removes_a_deleted_pods_sandbox_once_its_containers_are_gone() {
    for seed in SEEDS {
        let (v, recs) = run_traced(SANDBOX_GC, seed);
        assert_eq!(v["findings"], serde_json::json!([]), "seed {seed}");
        let uid = |name: &str| pod(&v, name)["uid"].as_str().unwrap().to_owned();
        let gone = uid("gone");
        let sandbox_calls = |u: &str| -> Vec<(u64, String)> {
            records(&recs, "RemovePodSandbox")
                .into_iter()
                .filter(|(_, t)| t.split_whitespace().nth(1) == Some(u))
                .map(|(at, t)| (at, t.rsplit(' ').next().unwrap().to_owned()))
                .collect()
        };
        let gone_removed: Vec<u64> = removals(&recs)
            .into_iter()
            .filter(|(_, u)| *u == gone)
            .map(|(t, _)| t)
            .collect();
        assert_eq!(gone_removed, [60 * S], "seed {seed}");
        let want = vec![
            (120 * S, "begin".to_owned()),
            (120 * S + 10_000_000, "ok".into()),
        ];
        assert_eq!(sandbox_calls(&gone), want, "seed {seed}");
        for name in ["job", "server"] {
            assert_eq!(sandbox_calls(&uid(name)), [], "seed {seed} {name}");
        }
        assert_eq!(pod(&v, "job")["finalPhase"], "Succeeded", "seed {seed}");
        let server = &pod(&v, "server")["containers"][0];
        assert_eq!(server["runningAtEnd"], true, "seed {seed}");
        assert_eq!(server["starts"], 1, "seed {seed}");
    }
}
