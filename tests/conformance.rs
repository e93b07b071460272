//! The conformance table per release (issue #12): for each behaviour that differs between
//! the releases podsim models, the upstream evidence, a small scenario, the observable
//! outcome each release must give, and the test that asserts it.
//!
//! [`ROWS`] is the single source: [`markdown`] renders it into the README (between
//! `<!-- conformance begin -->` and `<!-- conformance end -->`), and
//! `every_row_holds_on_every_release` runs each row's scenario on every release profile and
//! compares the observable, read from the run's `--json` output, with the row. The README's
//! switch table is kept equal to `podsim::switches_markdown()` the same way.
//! `PODSIM_README_RECORD=1 cargo test --test main conformance` rewrites both README
//! sections from the code.

use crate::lifecycle::{ns, pod, S};
use podsim::load;
use podsim::run::{run, RunOptions};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// What a row reads from a run's `--json` output.
#[derive(Clone, Copy, Debug)]
pub enum Obs {
    /// `yes` when any seed of the row reports the invariant, `-` when none does.
    Finding(&'static str),
    /// The pod's last phase in the API (`lastPhase`), the same on every seed.
    LastPhase(&'static str),
    /// Whole seconds from the pod's first container's first SIGTERM to its stop.
    StopAfterSigterm(&'static str),
    /// Whole seconds from the instant (s) to the pod's first container's first SIGTERM.
    SigtermAfter(&'static str, u64),
    /// The status of the pod's condition as last written, `-` when it has none.
    Condition(&'static str, &'static str),
}

/// One behaviour that differs between releases.
pub struct Row {
    /// The switch(es) or release-specific code it stands for.
    pub behaviour: &'static str,
    /// Upstream file, function, release or PR.
    pub evidence: &'static str,
    pub scenario: &'static str,
    /// Seeds 1..=seeds are run (a `Finding` row counts any of them; the others read seed 1
    /// and require every seed to agree).
    pub seeds: u64,
    pub obs: Obs,
    /// The outcome on each release, in `podsim::RELEASES` order.
    pub expect: [&'static str; 7],
    /// Tests asserting it (this module's, and the release tests with more detail).
    pub tests: &'static str,
}

const ALL_ROWS: &str = "conformance::every_row_holds_on_every_release";

/// The table. Expected outcomes follow each release's upstream code (the switch table's
/// `since` research); a value another row explains is marked in the evidence.
pub const ROWS: &[Row] = &[
    Row {
        behaviour: "podWorkerOwnsLifecycle",
        evidence: "pkg/kubelet/pod_workers.go (PR 102344, v1.22.0); v1.21's dispatchWork and podKiller",
        scenario: "scenarios/races/pod-worker-owns-lifecycle.yaml",
        seeds: 4,
        obs: Obs::Finding("no-start-after-termination"),
        expect: ["yes", "-", "-", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "terminalPhaseKept",
        evidence: "pkg/kubelet/status/status_manager.go updateStatusInternal (PR 105462, v1.23.0)",
        scenario: "scenarios/races/evicted-pod-back-to-running.yaml",
        seeds: 4,
        obs: Obs::Finding("terminal-phase-absorbing"),
        expect: ["-", "yes", "-", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "terminalPhaseAfterTermination",
        evidence: "pkg/kubelet/status/status_manager.go mergePodStatus, pod_workers.go completeSync (PR 108366, v1.24.0)",
        scenario: "scenarios/races/terminal-phase-before-resources-released.yaml",
        seeds: 4,
        obs: Obs::Finding("no-terminal-phase-while-running"),
        expect: ["yes", "yes", "yes", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "staticPodFullNameGate",
        evidence: "pkg/kubelet/pod_workers.go allowStaticPodStart (PR 104743, v1.23.0)",
        scenario: "scenarios/races/static-pod-fullname-overlap.yaml",
        seeds: 4,
        obs: Obs::Finding("static-fullname-exclusivity"),
        expect: ["yes", "yes", "-", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "podWorkerHandlesUidReuse",
        evidence: "pkg/kubelet/pod_workers.go UpdatePod restartRequested (PR 104847, v1.23.0)",
        scenario: "scenarios/races/static-pod-uid-reuse-restart.yaml",
        seeds: 4,
        obs: Obs::Finding("desired-static-pod-runs"),
        expect: ["-", "yes", "-", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "unstartedPodsDoNotBlockStart",
        evidence: "pkg/kubelet/pod_workers.go cleanupUnstartedPod (PRs 107695, 107900, v1.24.0); v1.21 and v1.22 have no full-name gate",
        scenario: "scenarios/races/static-pod-rapid-update-blocked.yaml",
        seeds: 4,
        obs: Obs::Finding("desired-static-pod-runs"),
        expect: ["-", "-", "yes", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "shutdownSetsFailedPhase",
        evidence: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent status function (PRs 106899-106901, after v1.23.0; v1.24.0)",
        scenario: "scenarios/races/gns-phase-revert.yaml",
        seeds: 2,
        obs: Obs::Finding("shutdown-pods-failed"),
        expect: ["-", "yes", "yes", "-", "-", "-", "-"],
        tests: "conformance::every_row_holds_on_every_release, releases::v122_shutdown_kills_keep_phase_running_and_critical_pods_wait",
    },
    Row {
        behaviour: "stopProbesAtTermination",
        evidence: "pkg/kubelet/kubelet.go SyncTerminatingPod, prober/prober_manager.go (PR 110191, v1.25.0)",
        scenario: "scenarios/races/probes-after-termination.yaml",
        seeds: 4,
        obs: Obs::Finding("readiness-during-termination"),
        expect: ["-", "yes", "yes", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "orphanedPodsDrivenToCompletion",
        evidence: "pkg/kubelet/kubelet_pods.go HandlePodCleanups, pod_workers.go SyncKnownPods (PR 113145, v1.27.0)",
        scenario: "scenarios/races/orphaned-pod-stuck-after-cri-error.yaml",
        seeds: 4,
        obs: Obs::Finding("termination-finishes"),
        expect: ["-", "yes", "yes", "yes", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "terminalPodsTerminatedOnFirstSight",
        evidence: "pkg/kubelet/pod_workers.go UpdatePod first sight of a terminal pod (PR 105527, v1.23.0); on v1.23 the terminal phase is still written while containers run (terminalPhaseAfterTermination, v1.24), so the pod is not terminal-and-stopped at first sight",
        scenario: "scenarios/races/restart-terminal-pods-counted-in-admission.yaml",
        seeds: 4,
        obs: Obs::Finding("restart-readmits-running-pods"),
        expect: ["-", "yes", "yes", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "deletionUsesLocalPhase",
        evidence: "pkg/kubelet/kubelet_pods.go filterTerminalPodsToDelete (PR 118497, v1.28.0); the v1.27.0 regression of PR 115331",
        scenario: "scenarios/races/rejected-pod-deletion-after-restart.yaml",
        seeds: 2,
        obs: Obs::Finding("deleted-pod-removed-from-api"),
        expect: ["-", "-", "-", "-", "yes", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "graceOverrideZeroHonoured, hardEvictionGraceOne",
        evidence: "pkg/kubelet/pod_workers.go calculateEffectiveGracePeriod (v1.22 on: 0 is unset), eviction/eviction_manager.go evictPod (PR 124063, v1.31.0: 1 s)",
        scenario: "scenarios/races/eviction-grace-override-zero.yaml",
        seeds: 2,
        obs: Obs::Finding("grace-within-overrides"),
        expect: ["-", "yes", "yes", "yes", "yes", "yes", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "secretConfigMapRegisteredPerUid",
        evidence: "pkg/kubelet/kubelet.go SyncPod/SyncTerminatedPod RegisterPod/UnregisterPod (PRs 107821, 107831, v1.24.0)",
        scenario: "scenarios/races/configmap-unregistered-during-overlap.yaml",
        seeds: 4,
        obs: Obs::Finding("referenced-objects-registered"),
        expect: ["-", "yes", "yes", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "volumesKeptForTerminatingPodsAcrossRestart",
        evidence: "pkg/kubelet/volumemanager/populator/desired_state_of_world_populator.go findAndAddNewPods (PR 114326, v1.27.0; only patch releases of 1.24-1.26)",
        scenario: "scenarios/races/volume-unmounted-after-restart.yaml",
        seeds: 4,
        obs: Obs::Finding("no-teardown-under-running-container"),
        expect: ["-", "yes", "yes", "yes", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "sidecarsStopAfterMainContainers",
        evidence: "pkg/kubelet/kuberuntime/kuberuntime_termination_order.go (PR 120620, v1.29.0); the releases before v1.29 refuse native sidecars (feature gate SidecarContainers: alpha, off, in v1.28; absent before)",
        scenario: "scenarios/races/sidecar-stopped-before-app.yaml",
        seeds: 4,
        obs: Obs::Finding("sidecars-stop-after-main-containers"),
        expect: ["refused (SidecarContainers off)", "refused (SidecarContainers off)", "refused (SidecarContainers off)", "refused (SidecarContainers off)", "refused (SidecarContainers off)", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "podDeletedOnlyWhenTerminal",
        evidence: "pkg/kubelet/status/status_manager.go TerminatePod, canBeDeleted; kubelet_pods.go getPhase podIsTerminal (PR 115331, v1.27.0)",
        scenario: "scenarios/releases/deleted-always-running.yaml",
        seeds: 2,
        obs: Obs::LastPhase("web"),
        expect: ["Running", "Running", "Running", "Running", "Succeeded", "Succeeded", "Succeeded"],
        tests: "conformance::every_row_holds_on_every_release, releases::deleted_always_pod_leaves_the_api_running_before_v127",
    },
    Row {
        behaviour: "shutdownKillsByPriorityGroups",
        evidence: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent: v1.22's fixed sleep of the non-critical period for critical pods; v1.23's groupByPriority and migrateConfig (PR 102915)",
        scenario: "scenarios/releases/shutdown-v122.yaml",
        seeds: 2,
        obs: Obs::SigtermAfter("agent", 10),
        expect: ["20", "20", "5", "5", "5", "5", "5"],
        tests: "conformance::every_row_holds_on_every_release, releases::v122_shutdown_kills_keep_phase_running_and_critical_pods_wait",
    },
    Row {
        behaviour: "shutdownRemovesProbesBeforeKill",
        evidence: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent probeManager.RemovePod (PR 105215, v1.23.0; gone with PR 110191, v1.25.0)",
        scenario: "scenarios/releases/shutdown-readiness.yaml",
        seeds: 2,
        obs: Obs::Finding("readiness-during-termination"),
        expect: ["-", "-", "yes", "-", "-", "-", "-"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "disruptionTargetCondition",
        evidence: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go, eviction_manager.go (feature gate PodDisruptionConditions, on by default since v1.26)",
        scenario: "scenarios/releases/evicted-conditions.yaml",
        seeds: 2,
        obs: Obs::Condition("web", "DisruptionTarget"),
        expect: ["-", "-", "-", "-", "True", "True", "True"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "readyToStartContainersCondition",
        evidence: "pkg/kubelet/status/generate.go GeneratePodReadyToStartContainersCondition (feature gate PodReadyToStartContainersCondition, on by default since v1.29)",
        scenario: "scenarios/releases/evicted-conditions.yaml",
        seeds: 2,
        obs: Obs::Condition("web", "PodReadyToStartContainers"),
        expect: ["-", "-", "-", "-", "-", "False", "False"],
        tests: ALL_ROWS,
    },
    Row {
        behaviour: "graceOverrideBeforePreStop",
        evidence: "pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer (PR 115835, v1.28.0; issue 117373); v1.21's syncPod kills a deleted pod with no override, so the 2 s minimum follows the hook",
        scenario: "scenarios/releases/prestop-twice-grace.yaml",
        seeds: 2,
        obs: Obs::StopAfterSigterm("slow"),
        expect: ["2", "10", "10", "10", "10", "2", "2"],
        tests: "conformance::every_row_holds_on_every_release, releases::prestop_then_override_takes_twice_the_grace_before_v128",
    },
    Row {
        behaviour: "probeTerminationGracePeriod",
        evidence: "pkg/kubelet/kuberuntime/kuberuntime_container.go killContainer (feature gate ProbeTerminationGracePeriod, on by default since v1.25)",
        scenario: "scenarios/releases/probe-grace-ignored.yaml",
        seeds: 2,
        obs: Obs::StopAfterSigterm("stubborn"),
        expect: ["30", "30", "30", "5", "5", "5", "5"],
        tests: "conformance::every_row_holds_on_every_release, releases::probe_grace_ignored_before_v125",
    },
];

fn obs_text(o: Obs) -> String {
    match o {
        Obs::Finding(i) => format!("finding `{i}`"),
        Obs::LastPhase(p) => format!("`{p}` last phase"),
        Obs::StopAfterSigterm(p) => format!("`{p}` SIGTERM to stop (s)"),
        Obs::SigtermAfter(p, at) => format!("`{p}` SIGTERM after {at}s (s)"),
        Obs::Condition(p, c) => format!("`{p}` condition {c}"),
    }
}

/// The README's conformance table.
pub fn markdown() -> String {
    let mut s = format!(
        "| behaviour | upstream evidence | scenario | observable | {} | test |\n|---|---|---|---|{}---|\n",
        podsim::RELEASES.join(" | "),
        "---|".repeat(podsim::RELEASES.len())
    );
    for r in ROWS {
        let names: Vec<String> = r.behaviour.split(", ").map(|b| format!("`{b}`")).collect();
        let tests: Vec<String> = r.tests.split(", ").map(|t| format!("`{t}`")).collect();
        s.push_str(&format!(
            "| {} | {} | `{}` | {} | {} | {} |\n",
            names.join(", "),
            r.evidence,
            r.scenario.trim_start_matches("scenarios/"),
            obs_text(r.obs),
            r.expect.join(" | "),
            tests.join(", ")
        ));
    }
    s
}

/// The `--json` output of `scenario` on `profile`, seed `seed`; `Err(gate)` when the
/// release's feature gates refuse the scenario (any other load error fails the test).
fn json(scenario: &str, profile: &str, seed: u64) -> Result<Value, String> {
    let sets = vec![("spec.kubelet.profile".to_owned(), profile.to_owned())];
    let sc = match load(Path::new(scenario), &sets) {
        Ok(sc) => sc,
        Err(e) => {
            let e = e.to_string();
            let gate = e
                .split("feature gate ")
                .nth(1)
                .and_then(|t| t.split(|c: char| !c.is_ascii_alphanumeric()).next())
                .unwrap_or_else(|| panic!("{scenario} on {profile}: {e}"));
            return Err(gate.to_owned());
        }
    };
    let out = run(
        Arc::new(sc.scenario),
        &RunOptions {
            seed,
            replay: format!("podsim run {scenario} --seed {seed} --profile {profile}"),
            ..Default::default()
        },
    );
    Ok(serde_json::to_value(&out).unwrap())
}

fn secs(ns: u64) -> String {
    (ns / S).to_string()
}

/// The observable of one run (not `Finding`).
fn observe(v: &Value, o: Obs) -> String {
    let first = |p: &str, k: &str| -> Option<u64> {
        pod(v, p)["containers"][0][k]
            .as_array()
            .and_then(|a| a.first())
            .map(ns)
    };
    match o {
        Obs::Finding(_) => unreachable!(),
        Obs::LastPhase(p) => pod(v, p)["lastPhase"].as_str().unwrap().to_owned(),
        Obs::StopAfterSigterm(p) => {
            let term = first(p, "sigtermsAtNs").expect("a SIGTERM");
            let stop = pod(v, p)["containers"][0]["finishedAtNs"]
                .as_array()
                .unwrap()
                .iter()
                .map(ns)
                .find(|t| *t >= term)
                .expect("a stop after the SIGTERM");
            secs(stop - term)
        }
        Obs::SigtermAfter(p, at) => secs(first(p, "sigtermsAtNs").expect("a SIGTERM") - at * S),
        Obs::Condition(p, c) => pod(v, p)["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["type"] == c)
            .map_or("-".to_owned(), |x| x["status"].as_str().unwrap().to_owned()),
    }
}

/// The row's outcome on `release`.
fn outcome(r: &Row, release: &str) -> String {
    let runs = match (1..=r.seeds)
        .map(|s| json(r.scenario, release, s))
        .collect::<Result<Vec<Value>, String>>()
    {
        Ok(runs) => runs,
        Err(gate) => return format!("refused ({gate} off)"),
    };
    for v in &runs {
        assert_eq!(v["release"], release);
    }
    match r.obs {
        Obs::Finding(inv) => {
            let hit = runs.iter().any(|v| {
                v["findings"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f["invariant"] == inv)
            });
            if hit { "yes" } else { "-" }.to_owned()
        }
        o => {
            let seen: Vec<String> = runs.iter().map(|v| observe(v, o)).collect();
            assert!(
                seen.windows(2).all(|w| w[0] == w[1]),
                "{} on {release}: seeds disagree: {seen:?}",
                r.behaviour
            );
            seen[0].clone()
        }
    }
}

#[test]
fn every_row_holds_on_every_release() {
    let mut wrong = Vec::new();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|k| {
                s.spawn(move || {
                    let mut w = Vec::new();
                    for r in ROWS.iter().skip(k).step_by(2) {
                        for (i, rel) in podsim::RELEASES.iter().enumerate() {
                            let got = outcome(r, rel);
                            if got != r.expect[i] {
                                w.push(format!(
                                    "{} ({}) on {rel}: got {got}, the table says {}",
                                    r.behaviour,
                                    obs_text(r.obs),
                                    r.expect[i]
                                ));
                            }
                        }
                    }
                    w
                })
            })
            .collect();
        for h in handles {
            wrong.extend(h.join().unwrap());
        }
    });
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every switch whose value is not the same on every release has a row (the switches a
/// row names are the ones whose release values it shows).
#[test]
fn every_switch_that_differs_between_releases_has_a_row() {
    let named: Vec<&str> = ROWS.iter().flat_map(|r| r.behaviour.split(", ")).collect();
    for s in podsim::SWITCHES {
        let on = s.on_releases();
        if !on.is_empty() && on.len() < podsim::RELEASES.len() {
            assert!(named.contains(&s.name), "no conformance row for {}", s.name);
        }
    }
    for n in named {
        assert!(
            podsim::SWITCHES.iter().any(|s| s.name == n),
            "{n} is not a switch"
        );
    }
}

/// Replaces the text between `<!-- NAME begin -->` and `<!-- NAME end -->` in `readme`.
fn section(readme: &str, name: &str) -> (usize, usize) {
    let (b, e) = (
        format!("<!-- {name} begin -->\n"),
        format!("<!-- {name} end -->"),
    );
    let i = readme.find(&b).unwrap_or_else(|| panic!("README: no {b}")) + b.len();
    let j = readme.find(&e).unwrap_or_else(|| panic!("README: no {e}"));
    (i, j)
}

#[test]
fn readme_tables_are_the_codes() {
    let record = std::env::var("PODSIM_README_RECORD").is_ok_and(|v| v == "1");
    let mut readme = std::fs::read_to_string("README.md").unwrap();
    for (name, want) in [
        ("switch", podsim::switches_markdown()),
        ("conformance", markdown()),
    ] {
        let (i, j) = section(&readme, name);
        if record {
            readme.replace_range(i..j, &want);
        } else {
            assert_eq!(
                readme[i..j],
                want,
                "README's {name} table is out of date: PODSIM_README_RECORD=1 cargo test --test main conformance"
            );
        }
    }
    if record {
        std::fs::write("README.md", readme).unwrap();
    }
}
