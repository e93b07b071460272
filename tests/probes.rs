//! Scenario tests of the prober on the `current` profile (`scenarios/probes/*.yaml`), run
//! through the binary on seeds 1-5: liveness restarts, readiness windows seen by the API,
//! startup gating, and probe lifetime during graceful termination (race catalogue entry 10).

use crate::lifecycle::{compact, ns, pod, run_json, S, SEEDS};
use crate::scratch::Scratch;
use assert_cmd::Command;
use serde_json::Value;

fn nums(v: &Value) -> Vec<u64> {
    v.as_array().unwrap().iter().map(ns).collect()
}

/// `readyTransitions` as (time, ready) pairs.
fn ready(p: &Value) -> Vec<(u64, bool)> {
    p["readyTransitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (ns(&x[0]), x[1].as_bool().unwrap()))
        .collect()
}

/// Run with `--json --trace`; returns the JSON result and the trace as (time, record).
fn run_traced(file: &str, seed: u64) -> (Value, Vec<(u64, String)>) {
    let stem = file.rsplit('/').next().unwrap();
    let path = Scratch::new("probes", &format!("{stem}-{seed}")).file("trace.jsonl");
    let out = Command::cargo_bin("podsim")
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
        "podsim run {file} --seed {seed} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let trace = text
        .lines()
        .map(|l| {
            let r: Value = serde_json::from_str(l).unwrap();
            (ns(&r["atNs"]), r["rec"].as_str().unwrap().to_string())
        })
        .collect();
    (v, trace)
}

/// Index of the first trace record satisfying `f`.
fn find(trace: &[(u64, String)], f: impl Fn(&str) -> bool) -> Option<usize> {
    trace.iter().position(|(_, r)| f(r))
}

#[test]
fn liveness_failure_restarts_the_container_with_the_probe_grace() {
    for seed in SEEDS {
        let (v, trace) = run_traced("scenarios/probes/liveness-restart.yaml", seed);
        assert_eq!(
            compact(&v),
            [
                "stubborn Running/Running | app: starts=2 exit=137 killed=1 running",
                "web Running/Running | app: starts=2 exit=0 killed=0 running",
            ],
            "seed {seed}"
        );
        for (name, drain) in [("web", S), ("stubborn", 5 * S)] {
            let p = pod(&v, name);
            assert_eq!(p["phases"].as_array().unwrap().len(), 2, "{name}: {p}");
            let c = &p["containers"][0];
            assert_eq!(c["restarts"], 1);
            let starts = nums(&c["startedAtNs"]);
            let died = ns(&c["finishedAtNs"][0]);
            // Failing from 60s after the start; the first failing probe comes within one
            // period (10s), the third two periods later: the kill is decided in
            // [start+80s, start+90s). The result reaches the sync loop at once and the pod
            // worker syncs as soon as the PLEG cache is newer than its last sync (one 1s
            // relist at most); then the container takes `drain` to stop.
            let decided = died - drain;
            assert!(
                decided >= starts[0] + 80 * S && decided < starts[0] + 91 * S,
                "{name} seed {seed}: kill at {decided}, started {}",
                starts[0]
            );
            // The restart follows in the same SyncPod (create + start), without back-off.
            assert!(
                starts[1] > died && starts[1] < died + S,
                "{name} seed {seed}"
            );
            // SIGTERM to exit: `web` drains 1s; `stubborn` ignores SIGTERM and is SIGKILLed
            // after its probe's terminationGracePeriodSeconds (5s), not the pod's 30s.
            let uid = p["uid"].as_str().unwrap();
            let term = find(&trace, |r| {
                r.starts_with(&format!("rt {uid} ")) && r.ends_with("SIGTERM")
            })
            .map(|i| trace[i].0)
            .expect("SIGTERM");
            assert_eq!(died - term, drain, "{name} seed {seed}");
        }
    }
}

#[test]
fn readiness_failure_window_is_seen_by_the_api_and_restarts_nothing() {
    for seed in SEEDS {
        let v = run_json("scenarios/probes/readiness-window.yaml", seed, &[]);
        assert_eq!(
            compact(&v),
            ["web Running/Running | app: starts=1 exit=null killed=0 running"],
            "seed {seed}"
        );
        let p = pod(&v, "web");
        let s0 = ns(&p["containers"][0]["startedAtNs"][0]);
        let r = ready(p);
        assert_eq!(
            r.iter().map(|x| x.1).collect::<Vec<_>>(),
            [false, true, false, true],
            "seed {seed}: {r:?}"
        );
        // Ready soon after the start: the SyncPod after the PLEG saw the container triggers
        // the readiness probe at once (then a status write of at most 50ms).
        assert!(r[1].0 >= s0 && r[1].0 < s0 + 2 * S, "seed {seed}: {r:?}");
        // Probes every 2s with failureThreshold 1: not Ready within 2s (+ the write) of 30s,
        // Ready again within 2s of 60s.
        assert!(
            r[2].0 >= s0 + 30 * S && r[2].0 < s0 + 32 * S + S / 10,
            "seed {seed}: {r:?}"
        );
        assert!(
            r[3].0 >= s0 + 60 * S && r[3].0 < s0 + 62 * S + S / 10,
            "seed {seed}: {r:?}"
        );
    }
}

#[test]
fn startup_probe_gates_liveness_and_restarts_past_its_threshold() {
    for seed in SEEDS {
        let (v, trace) = run_traced("scenarios/probes/startup-gates-liveness.yaml", seed);
        // `slow`: no restart although liveness would fail during the first 20s.
        let slow = pod(&v, "slow");
        let c = &slow["containers"][0];
        assert_eq!(c["starts"], 1, "seed {seed}");
        let s0 = ns(&c["startedAtNs"][0]);
        let uid = slow["uid"].as_str().unwrap();
        let started = find(&trace, |r| {
            r.starts_with(&format!("prober {uid} ")) && r.ends_with("startup result success")
        })
        .expect("startup succeeded");
        let t_started = trace[started].0;
        assert!(
            t_started >= s0 + 20 * S && t_started < s0 + 27 * S,
            "seed {seed}: started at {t_started}"
        );
        let liveness = format!("probe {uid} app liveness");
        let first_liveness = find(&trace, |r| r.starts_with(&liveness)).expect("liveness ran");
        assert!(
            first_liveness > started,
            "seed {seed}: liveness before startup"
        );
        assert!(
            trace
                .iter()
                .all(|(_, r)| !r.starts_with(&format!("{liveness} failure"))),
            "seed {seed}"
        );
        // Ready only once started (no readiness probe: ready when started and running).
        let r = ready(slow);
        assert_eq!(r.len(), 2, "seed {seed}: {r:?}");
        assert!(r[1].1 && r[1].0 >= t_started, "seed {seed}: {r:?}");

        // `never`: each container is killed after three startup failures 5s apart and
        // restarted; the pod stays Running and never becomes Ready.
        let never = pod(&v, "never");
        assert_eq!(never["finalPhase"], "Running");
        assert_eq!(ready(never), [(0, false)], "seed {seed}");
        let starts = nums(&never["containers"][0]["startedAtNs"]);
        assert!(starts.len() >= 3, "seed {seed}: {starts:?}");
        // The first start waits up to one period for the worker's first probe; each next
        // container is probed at the next tick: three failures take 15s plus the restart.
        assert!(
            starts[1] - starts[0] >= 10 * S && starts[1] - starts[0] < 17 * S,
            "seed {seed}: {starts:?}"
        );
        for w in starts[1..].windows(2) {
            assert!(
                w[1] - w[0] >= 15 * S - S / 10 && w[1] - w[0] < 15 * S + S / 10,
                "seed {seed}: {starts:?}"
            );
        }
    }
}

#[test]
fn graceful_delete_stops_liveness_but_readiness_runs_until_the_kill() {
    for seed in SEEDS {
        let (v, trace) = run_traced("scenarios/probes/delete-stops-liveness.yaml", seed);
        assert_eq!(
            compact(&v),
            ["web Deleted/Succeeded | app: starts=1 exit=0 killed=0"],
            "seed {seed}"
        );
        let p = pod(&v, "web");
        let uid = p["uid"].as_str().unwrap();
        let begin = find(&trace, |r| {
            r == format!("sync {uid} SyncTerminatingPod begin grace=30")
        })
        .expect("termination");
        // Liveness (failing from 31s after the start) never runs once termination began.
        let liveness = format!("probe {uid} app liveness");
        assert!(
            trace[begin..]
                .iter()
                .all(|(_, r)| !r.starts_with(&liveness)),
            "seed {seed}: liveness probe during termination"
        );
        let stopped = find(&trace, |r| {
            r == format!("prober {uid} app liveness worker stopped")
        })
        .unwrap();
        assert_eq!(trace[stopped].0, trace[begin].0, "seed {seed}");
        // Readiness keeps running during termination, until the containers are stopped.
        let readiness = format!("probe {uid} app readiness");
        let removed = find(&trace, |r| {
            r == format!("prober {uid} app readiness worker stopped")
        })
        .unwrap();
        assert!(
            trace[begin..removed]
                .iter()
                .any(|(_, r)| *r == format!("{readiness} failure")),
            "seed {seed}"
        );
        assert!(
            trace[removed..]
                .iter()
                .all(|(_, r)| !r.starts_with("probe ")),
            "seed {seed}: probe after RemovePod"
        );
        // So the API sees the pod go not Ready while it drains, before its container stops.
        let r = ready(p);
        let deleted = ns(&p["deletionRequestedAtNs"]);
        let stopped_at = ns(&p["containersStoppedAtNs"]);
        assert_eq!(r.len(), 3, "seed {seed}: {r:?}");
        assert!(
            !r[2].1 && r[2].0 > deleted && r[2].0 < stopped_at,
            "seed {seed}: {r:?}"
        );
    }
}

/// A pod whose only probe is on a native sidecar (an init container with
/// `restartPolicy: Always`): `AddPod` (`prober_manager.go`, v1.31) starts a worker for
/// it as for a regular container's probe, so a pod is probe-less only when neither its
/// regular nor its init containers have a probe.
#[test]
fn a_probe_on_a_sidecar_alone_gets_its_worker() {
    const SIDECAR_PROBED: &str = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: sidecar-probed}
spec:
  horizon: 1m
  pods:
    - template:
        metadata: {name: web}
        spec:
          initContainers:
            - name: mesh
              image: example/mesh:1
              restartPolicy: Always
              readinessProbe: {exec: {command: [cat, /tmp/ready]}, periodSeconds: 5}
          containers: [{name: app, image: example/web:1}]
";
    let file = Scratch::new("probes", "sidecar-probed").file("scenario.yaml");
    std::fs::write(&*file, SIDECAR_PROBED).unwrap();
    let (_, trace) = run_traced(file.to_str().unwrap(), 1);
    assert!(
        find(&trace, |r| r
            == "prober uid-0001 mesh readiness worker started")
        .is_some(),
        "no readiness worker for the sidecar"
    );
    let probes = trace
        .iter()
        .filter(|(_, r)| r.starts_with("probe uid-0001 mesh readiness "))
        .count();
    assert!(
        probes >= 5,
        "{probes} readiness probes of the sidecar in a minute"
    );
}

/// A probed container of a `restartPolicy: Never` pod exits while its sibling runs on: its
/// worker reads the exit and quits (`worker.go`: the container will not be restarted), and
/// the next `SyncPod`'s `AddPod` (`prober_manager.go`, v1.31) finds that probe without a
/// worker and starts one again, which quits in turn, at every sync. The pod's spec is the
/// same all along, so this guards a prober that remembers an `AddPod` it may skip: the
/// memory must go when a worker of the pod quits.
#[test]
fn a_worker_that_quit_is_started_again_by_the_next_sync() {
    const EXITED_PROBED: &str = "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {name: exited-probed}
spec:
  horizon: 1m
  pods:
    - template:
        metadata: {name: web}
        spec:
          restartPolicy: Never
          containers:
            - name: job
              image: example/job:1
              livenessProbe: {exec: {command: [cat, /tmp/ok]}, periodSeconds: 5}
            - {name: app, image: example/web:1}
      behaviour:
        job: {runFor: 20s, exitCode: 0}
";
    let file = Scratch::new("probes", "exited-probed").file("exited-probed.yaml");
    std::fs::write(&*file, EXITED_PROBED).unwrap();
    for seed in [1, 2] {
        let (_, trace) = run_traced(file.to_str().unwrap(), seed);
        let started = "prober uid-0001 job liveness worker started";
        let stopped = find(&trace, |r| {
            r == "prober uid-0001 job liveness worker stopped"
        })
        .unwrap_or_else(|| panic!("seed {seed}: the worker never quit"));
        let again = trace[stopped..]
            .iter()
            .filter(|(_, r)| r == started)
            .count();
        assert!(
            again >= 2,
            "seed {seed}: the worker was started {again} times after it first quit"
        );
    }
}
