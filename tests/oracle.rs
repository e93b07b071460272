//! The invariant oracle end to end: no finding on the `current` profile for any bundled
//! scenario, the oracle changes no trace hash, it sees what the world's trace records, and
//! `podsim invariants` lists every invariant.

use assert_cmd::Command;
use podsim::load;
use podsim::oracle::invariants::INVARIANTS;
use podsim::run::{run, RunOptions};
use podsim::scenario::Scenario;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every bundled scenario: quickstart, reference and each file of each scenarios/ folder.
fn scenario_files() -> Vec<PathBuf> {
    crate::files::scenarios("scenarios")
}

fn scenario(path: &Path) -> Arc<Scenario> {
    Arc::new(load(path, &[]).unwrap().scenario)
}

fn opts(seed: u64, replay: String, no_oracle: bool, keep_trace: bool) -> RunOptions {
    RunOptions {
        seed,
        keep_trace,
        replay,
        no_oracle,
        history: podsim::run::FindingHistory::Rerun,
    }
}

/// The findings a scenario declares in `spec.expect.findings` (an open upstream bug that
/// `current` still reproduces, e.g. race catalog 27); every other finding is a failure.
fn declared(sc: &Scenario) -> Vec<String> {
    sc.expect
        .as_ref()
        .map(|e| e.findings.clone())
        .unwrap_or_default()
}

/// The whole scenario set on seeds 1-20: no invariant is violated on `current` (beyond
/// what a scenario declares).
#[test]
fn no_finding_on_any_bundled_scenario() {
    let files = scenario_files();
    assert!(files.len() >= 20, "scenario files: {files:?}");
    let mut bad = Vec::new();
    for f in &files {
        let sc = scenario(f);
        assert_eq!(sc.kubelet.profile, "current");
        let ok = declared(&sc);
        for seed in 1..=20 {
            let replay = format!("podsim run {} --seed {seed}", f.display());
            let out = run(sc.clone(), &opts(seed, replay, false, false));
            for x in out.findings.iter().filter(|x| !ok.contains(&x.invariant)) {
                bad.push(format!(
                    "[{}] {} at {} ns: {}\n    replay: {}",
                    x.invariant, x.pod, x.at_ns, x.message, x.replay
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A finding's history comes from running the run again ([`FindingHistory::Rerun`], the
/// default): the whole output, messages included, is the one of the run that kept its
/// histories as it went ([`FindingHistory::Kept`]); without histories
/// ([`FindingHistory::Omitted`]) the findings are the same, their messages without the
/// transitions. Over every bundled scenario on v1.21 and `current`, seeds 1-2: enough runs
/// with findings that a rerun that quoted nothing, or another run, fails.
#[test]
fn a_rerun_quotes_the_history_a_kept_run_keeps() {
    use podsim::run::FindingHistory;
    let (mut with_findings, mut pod_quotes, mut node_quotes) = (0, 0, 0);
    for f in scenario_files() {
        for profile in ["v1.21", "current"] {
            let sets = [("spec.kubelet.profile".to_string(), profile.to_string())];
            // A scenario that needs a newer release than v1.21 is not loaded on it.
            let Ok(loaded) = load(&f, &sets) else {
                continue;
            };
            let sc = Arc::new(loaded.scenario);
            for seed in [1, 2] {
                let replay = format!(
                    "podsim run {} --seed {seed} --profile {profile}",
                    f.display()
                );
                let of = |history| {
                    let o = RunOptions {
                        history,
                        ..opts(seed, replay.clone(), false, false)
                    };
                    run(sc.clone(), &o)
                };
                let rerun = of(FindingHistory::Rerun);
                let kept = of(FindingHistory::Kept);
                let omitted = of(FindingHistory::Omitted);
                let json = |o: &podsim::run::RunOutput| serde_json::to_string(o).unwrap();
                assert_eq!(json(&rerun), json(&kept), "{replay}");
                let key = |o: &podsim::run::RunOutput| -> Vec<(String, String, u64)> {
                    o.findings
                        .iter()
                        .map(|x| (x.invariant.clone(), x.pod.clone(), x.at_ns))
                        .collect()
                };
                assert_eq!(key(&omitted), key(&kept), "{replay}");
                assert_eq!(omitted.trace_hash, kept.trace_hash, "{replay}");
                let oracle_findings = kept
                    .findings
                    .iter()
                    .zip(&omitted.findings)
                    .filter(|(k, _)| k.invariant != "run-limit-reached");
                for (k, o) in oracle_findings {
                    assert!(
                        !o.message.contains("\n    last "),
                        "{replay}: {}",
                        o.message
                    );
                    assert!(k.message.starts_with(&o.message), "{replay}: {}", k.message);
                    if k.message.contains("\n    last transitions of ") {
                        pod_quotes += 1;
                    } else {
                        assert!(
                            k.message.contains("\n    last node transitions:"),
                            "{replay}: {}",
                            k.message
                        );
                        node_quotes += 1;
                    }
                }
                with_findings += usize::from(!kept.findings.is_empty());
            }
        }
    }
    // (No bundled scenario makes a node finding; the oracle's unit tests quote one.)
    assert!(
        with_findings >= 40 && pod_quotes >= 100,
        "runs with findings {with_findings}, pod findings {pod_quotes}, node findings {node_quotes}"
    );
}

/// Removing the oracle changes neither the trace hash nor any record.
#[test]
fn the_oracle_changes_no_trace_hash() {
    for f in [
        "scenarios/quickstart.yaml",
        "scenarios/reference.yaml",
        "scenarios/eviction/memory-pressure.yaml",
        "scenarios/shutdown/priority-groups.yaml",
        "scenarios/restart/delete-during-downtime.yaml",
    ] {
        let sc = scenario(Path::new(f));
        for seed in [1, 7] {
            let with = run(sc.clone(), &opts(seed, String::new(), false, true));
            let without = run(sc.clone(), &opts(seed, String::new(), true, true));
            assert_eq!(with.trace_hash, without.trace_hash, "{f} seed {seed}");
            assert_eq!(with.trace, without.trace, "{f} seed {seed}");
            assert_eq!(with.pods, without.pods, "{f} seed {seed}");
            assert!(without.findings.is_empty());
        }
    }
}

/// `podsim invariants` lists every invariant with its meaning, source and profiles.
#[test]
fn podsim_invariants_lists_every_name() {
    let out = Command::cargo_bin("podsim")
        .unwrap()
        .arg("invariants")
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for i in INVARIANTS {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(i.name))
            .unwrap_or_else(|| panic!("{} not listed:\n{text}", i.name));
        assert!(
            line.contains("v1.31") || line.contains("none (open upstream bug)"),
            "{line}"
        );
        assert!(text.contains(i.meaning) && text.contains(i.source));
    }
}
