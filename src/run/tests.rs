//! Tests that drive a `World` directly: the oracle sees the world's own trace, and every
//! liveness property is exercised by the bundled scenarios.

use super::World;
use crate::model::{PodUid, Transition};
use crate::oracle::invariants::INVARIANTS;
use crate::scenario::Scenario;
use crate::sim::SimTime;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Every bundled scenario file (sweeps left out), sorted.
pub(crate) fn scenario_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::from("scenarios")];
    while let Some(d) = dirs.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|e| e == "yaml")
                && !std::fs::read_to_string(&p).is_ok_and(|t| t.contains("\nkind: Sweep"))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn scenario(path: &Path) -> Arc<Scenario> {
    Arc::new(crate::load(path, &[]).unwrap().scenario)
}

fn declared(sc: &Scenario) -> Vec<String> {
    sc.expect
        .as_ref()
        .map(|e| e.findings.clone())
        .unwrap_or_default()
}

/// The oracle watches the world's own trace: a transition emitted there reaches it.
#[test]
fn the_oracle_sees_the_worlds_transitions() {
    let sc = scenario(Path::new("scenarios/quickstart.yaml"));
    let mut w = World::new(sc, 1, false);
    w.run_until(SimTime(5_000_000_000));
    assert!(w.trace.observer().is_on());
    assert!(w.trace.observer().findings().is_empty());
    let uid = PodUid(1);
    let begin = Transition::SyncBegin {
        uid,
        kind: crate::model::SyncKind::SyncTerminatedPod,
        grace: None,
    };
    let now = w.sim.now();
    w.trace.emit(now, &begin);
    let f = &w.trace.observer().findings()[0];
    assert_eq!(f.pod, "web");
    assert!(
        ["single-sync-per-uid", "sync-order"].contains(&f.invariant),
        "{}",
        f.invariant
    );
    assert!(f.message.contains("sync uid-0001 SyncTerminatedPod begin"));
}

/// The liveness properties are not vacuous: over the bundled scenarios each is checked
/// (the run left enough time after its trigger) for some pod.
#[test]
fn every_liveness_property_is_exercised() {
    use crate::oracle::invariants::{Inv, Kind};
    let mut counts = vec![0u64; INVARIANTS.len()];
    for f in scenario_files() {
        let sc = scenario(&f);
        for seed in 1..=3 {
            let mut w = World::new(sc.clone(), seed, false);
            w.run_to_end();
            let end = w.sim.now();
            let o = w.trace.observer_mut();
            o.finish(end);
            let ok = declared(&sc);
            assert!(
                o.findings()
                    .iter()
                    .all(|x| ok.iter().any(|d| d == x.invariant)),
                "{}",
                f.display()
            );
            for (k, c) in counts.iter_mut().enumerate() {
                *c += o.liveness_checked(Inv::ALL[k]);
            }
        }
    }
    for (k, i) in INVARIANTS.iter().enumerate() {
        if i.kind == Kind::Liveness {
            assert!(counts[k] > 0, "{} never checked", i.name);
        }
    }
}

/// A run again with its history kept must make the same findings; other ones (here at
/// another time) panic with the replay line, and the same ones give their messages.
#[test]
fn quoting_another_runs_findings_panics_with_the_replay_line() {
    use crate::oracle::OracleFinding;
    let finding = |at: u64, message: &str| OracleFinding {
        invariant: "no-start-after-termination",
        pod: "web".into(),
        at: SimTime(at),
        message: message.into(),
    };
    let mut found = vec![super::Finding {
        invariant: "no-start-after-termination".into(),
        pod: "web".into(),
        at_ns: 5,
        message: "started".into(),
        replay: "podsim run x.yaml --seed 3".into(),
    }];
    super::quote_from(&mut found, &[finding(5, "started\n    last ...")], "r");
    assert_eq!(found[0].message, "started\n    last ...");
    let other = std::panic::catch_unwind(move || {
        super::quote_from(
            &mut found,
            &[finding(6, "started")],
            "podsim run x.yaml --seed 3",
        )
    })
    .expect_err("other findings");
    let text = other.downcast_ref::<String>().expect("a formatted panic");
    assert!(
        text.starts_with(
            "podsim run x.yaml --seed 3: the run again with its history kept made other findings"
        ),
        "{text}"
    );
}
