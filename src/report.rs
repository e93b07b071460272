//! Human-readable output of a run and the check of a scenario's `expect`.

use crate::run::{PodSummary, RunOutput};
use crate::scenario::Scenario;
use crate::sim::Dur;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Seconds with millisecond precision: readable, and exact in `--json`.
fn secs(ns: u64) -> String {
    let ms = (ns + 500_000) / 1_000_000;
    Dur::millis(ms).to_string()
}

/// Whether a run met its scenario's `expect.findings`: the set of invariants it reported
/// is exactly the expected set. `--json` carries it as `expect` (only when the scenario has
/// an `expect`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct ExpectOutcome {
    pub(crate) held: bool,
    /// Expected invariants the run did not report.
    pub(crate) missing: Vec<String>,
    /// Invariants the run reported that the scenario does not expect.
    pub(crate) unexpected: Vec<String>,
}

/// The outcome of the scenario's `expect` (`None` when it has none).
pub(crate) fn expect_outcome(sc: &Scenario, out: &RunOutput) -> Option<ExpectOutcome> {
    let expect = sc.expect.as_ref()?;
    let want: BTreeSet<&str> = expect.findings.iter().map(String::as_str).collect();
    let got: BTreeSet<&str> = out.findings.iter().map(|f| f.invariant.as_str()).collect();
    let owned = |v: std::collections::btree_set::Difference<'_, &str>| {
        v.map(|s| (*s).to_owned()).collect::<Vec<_>>()
    };
    let missing = owned(want.difference(&got));
    let unexpected = owned(got.difference(&want));
    Some(ExpectOutcome {
        held: missing.is_empty() && unexpected.is_empty(),
        missing,
        unexpected,
    })
}

/// `None` when the run meets the scenario's `expect` (or it has none), else why not.
pub(crate) fn expect_failure(sc: &Scenario, out: &RunOutput) -> Option<String> {
    let o = expect_outcome(sc, out)?;
    if o.held {
        return None;
    }
    let mut m = String::new();
    if !o.missing.is_empty() {
        let _ = write!(
            m,
            "expected findings not reported: {}",
            o.missing.join(", ")
        );
    }
    if !o.unexpected.is_empty() {
        if !m.is_empty() {
            m.push_str("; ");
        }
        let _ = write!(m, "unexpected findings: {}", o.unexpected.join(", "));
    }
    Some(m)
}

/// `1 word` or `n words`.
pub(crate) fn plural(n: impl Into<u64>, word: &str) -> String {
    plural_of(n, word, &format!("{word}s"))
}

/// `1 one` or `n many`.
pub(crate) fn plural_of(n: impl Into<u64>, one: &str, many: &str) -> String {
    match n.into() {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    }
}

/// The summary's `expect:` line (without the newline): `expect: held (2 findings, all
/// expected: a)` or `expect: NOT held: missing a; unexpected b`.
pub(crate) fn expect_line(o: &ExpectOutcome, out: &RunOutput) -> String {
    if o.held {
        let names: BTreeSet<&str> = out.findings.iter().map(|f| f.invariant.as_str()).collect();
        return if names.is_empty() {
            "expect: held (no findings, as expected)".to_owned()
        } else {
            format!(
                "expect: held ({}, all expected: {})",
                plural(out.findings.len() as u64, "finding"),
                names.into_iter().collect::<Vec<_>>().join(", ")
            )
        };
    }
    let mut parts = Vec::new();
    if !o.missing.is_empty() {
        parts.push(format!("missing {}", o.missing.join(", ")));
    }
    if !o.unexpected.is_empty() {
        parts.push(format!("unexpected {}", o.unexpected.join(", ")));
    }
    format!("expect: NOT held: {}", parts.join("; "))
}

fn pod_block(s: &mut String, p: &PodSummary) {
    let head = if p.final_phase == "Deleted" {
        format!("Deleted (last phase {})", p.last_phase)
    } else {
        p.final_phase.to_owned()
    };
    let reason = p
        .reason
        .as_deref()
        .map(|r| format!(", reason {r}"))
        .unwrap_or_default();
    let _ = writeln!(s, "pod {}  {}  {head}{reason}", p.name, p.uid);
    let phases: Vec<String> = p
        .phases
        .iter()
        .map(|(t, ph)| format!("{ph} {}", secs(*t)))
        .collect();
    let _ = writeln!(s, "  phases:    {}", phases.join(" -> "));
    if let Some(d) = p.deletion_requested_at_ns {
        let mut line = format!("  deletion:  requested {}", secs(d));
        match p.containers_stopped_at_ns {
            Some(t) => {
                let _ = write!(
                    line,
                    ", containers stopped {} (+{})",
                    secs(t),
                    secs(t.saturating_sub(d))
                );
            }
            None => line.push_str(", containers still running at the end"),
        }
        match (p.removed_from_api_at_ns, &p.removed_by) {
            (Some(t), Some(by)) => {
                let _ = write!(
                    line,
                    ", removed from API {} by {by} (+{})",
                    secs(t),
                    secs(t.saturating_sub(d))
                );
            }
            _ => line.push_str(", still in the API at the end"),
        }
        let _ = writeln!(s, "{line}");
    }
    for (label, c) in p.labelled_containers() {
        let mut line = format!("  {label}: {}", plural(c.starts, "start"));
        if c.restarts > 0 {
            let _ = write!(line, " ({})", plural(c.restarts, "restart"));
        }
        if let Some(code) = c.last_exit_code {
            let _ = write!(line, ", last exit code {code}");
            if let Some(r) = &c.last_reason {
                let _ = write!(line, " ({r})");
            }
        }
        if c.killed_at_grace_expiry > 0 {
            let _ = write!(
                line,
                ", SIGKILLed at grace expiry x{}",
                c.killed_at_grace_expiry
            );
        }
        if c.running_at_end {
            line.push_str(", running at the end");
        }
        if c.killed_by_power_off {
            line.push_str(", killed by the node's power-off");
        }
        let _ = writeln!(s, "{line}");
    }
}

/// The text summary `podsim run` prints.
pub(crate) fn text_summary(sc: &Scenario, out: &RunOutput) -> String {
    let mut s = String::new();
    // A profile is a release; the scenario's gate and switch overrides are named after it.
    let switched = crate::kubelet::gates::resolve(
        &sc.kubelet.profile,
        &sc.kubelet.feature_gates,
        &sc.kubelet.behaviours,
    )
    .diff(&sc.kubelet.profile);
    let how = if switched.is_empty() {
        format!("release {}", out.release)
    } else {
        let flips: Vec<String> = switched.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("release {} with {}", out.release, flips.join(", "))
    };
    let _ = writeln!(
        s,
        "podsim {}  scenario {} ({})  seed {}  profile {} ({how})",
        out.podsim, out.scenario, out.scenario_hash, out.seed, out.profile
    );
    if !sc.description.is_empty() {
        let _ = writeln!(s, "{}", sc.description.trim());
    }
    let _ = writeln!(
        s,
        "{} over {} simulated, stopped: {}; trace hash {}\n",
        plural(out.events, "event"),
        secs(out.simulated_ns),
        out.stop_reason,
        out.trace_hash
    );
    for p in &out.pods {
        pod_block(&mut s, p);
        s.push('\n');
    }
    let m = &out.metrics;
    let _ = writeln!(
        s,
        "totals: {}, {}, {}, {} at grace expiry, {} running at the end",
        plural(m.pods, "pod"),
        plural(m.container_starts, "container start"),
        plural(m.restarts, "restart"),
        plural(m.kills_at_grace_expiry, "SIGKILL"),
        plural(m.containers_running_at_end, "container")
    );
    if let Some(t) = m.node_shutdown_at_ns {
        let mut line = format!("node: shutdown requested {}", secs(t));
        if let (Some(off), Some(cause)) = (m.power_off_at_ns, &m.power_off_cause) {
            let _ = write!(
                line,
                ", powered off {} ({cause}, +{}): {} still running, {} not written",
                secs(off),
                secs(off.saturating_sub(t)),
                plural(m.containers_alive_at_power_off, "container"),
                plural_of(m.statuses_lost_at_power_off, "pod status", "pod statuses")
            );
        }
        let _ = writeln!(s, "{line}");
    }
    if out.findings.is_empty() {
        let _ = writeln!(s, "findings: none");
    } else {
        let _ = writeln!(s, "findings: {}", out.findings.len());
        for f in &out.findings {
            let _ = writeln!(
                s,
                "  [{}] {} at {}: {}\n    replay: {}",
                f.invariant,
                if f.pod.is_empty() { "-" } else { &f.pod },
                secs(f.at_ns),
                f.message,
                f.replay
            );
        }
    }
    if let Some(o) = expect_outcome(sc, out) {
        let _ = writeln!(s, "{}", expect_line(&o, out));
    }
    if !out.reached.is_empty() {
        let _ = writeln!(s, "reached: {}", out.reached.join(", "));
    }
    if let Some(e) = &sc.expect {
        let missed: Vec<&str> = e
            .reach
            .iter()
            .filter(|r| !out.reached.contains(r))
            .map(String::as_str)
            .collect();
        if !missed.is_empty() {
            let _ = writeln!(
                s,
                "not reached on this seed (declared in expect.reach): {}",
                missed.join(", ")
            );
        }
    }
    let _ = writeln!(s, "replay: {}", out.replay);
    s
}
