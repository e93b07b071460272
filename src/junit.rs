//! JUnit XML for CI (`--junit FILE` on `run`, `sweep` and `merge`), written with
//! quick-junit. One test case per scenario x profile (`run`) or per point x profile
//! (`sweep`, `merge`); a failure's text carries the replay line of the first failing run.
//! No timestamps or durations are written, so the same results give the same file.

use crate::report::ExpectOutcome;
use crate::results::{Cell, Manifest, Summary};
use crate::run::RunOutput;
use crate::sweep::FailOn;
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::fmt::Write as _;

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// The report of one `podsim run`. `expect` is whether the scenario's `expect` held (when
/// it has one), `expect_failure` the message when it did not; `failed` is whether the run
/// exits 1.
pub(crate) fn for_run(
    out: &RunOutput,
    failed: bool,
    expect: Option<&ExpectOutcome>,
    expect_failure: Option<&str>,
) -> String {
    let mut suite = TestSuite::new(out.scenario.clone());
    suite.add_property(("seed", out.seed.to_string().as_str()));
    suite.add_property(("scenarioHash", out.scenario_hash.as_str()));
    let mut details = String::new();
    if let Some(o) = expect {
        suite.add_property(("expect", if o.held { "held" } else { "not held" }));
        let _ = writeln!(details, "{}", crate::report::expect_line(o, out));
    }
    for f in &out.findings {
        let _ = writeln!(
            details,
            "{} (pod {}, at {} ns): {}",
            f.invariant, f.pod, f.at_ns, f.message
        );
    }
    let _ = writeln!(details, "replay: {}", out.replay);
    let status = if failed {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        let msg = match expect_failure {
            Some(m) => format!("expect not met: {m}"),
            None => {
                let names: Vec<&str> = out.findings.iter().map(|f| f.invariant.as_str()).collect();
                format!("findings: {}", names.join(", "))
            }
        };
        s.set_message(msg);
        s.set_type("finding");
        s.set_description(details.clone());
        s
    } else {
        TestCaseStatus::success()
    };
    let mut case = TestCase::new(format!("{} [{}]", out.scenario, out.profile), status);
    case.set_classname(format!("podsim.run.{}", out.scenario));
    case.set_system_out(details);
    suite.add_test_case(case);
    let mut report = Report::new("podsim");
    report.add_test_suite(suite);
    report.to_string().expect("JUnit serializes")
}

fn cell_text(m: &Manifest, c: &Cell, policy: &FailOn, failing: bool) -> String {
    let mut t = String::new();
    for (inv, r) in &c.findings {
        if policy.counts(inv) != failing {
            continue;
        }
        let _ = writeln!(
            t,
            "{}: {} of {} ({} [{}, {}] 95% Wilson)",
            m.finding_label(inv),
            r.runs,
            crate::report::plural(c.runs, "run"),
            pct(r.rate),
            pct(r.ci95[0]),
            pct(r.ci95[1])
        );
        if let Some(f) = &r.first_failing {
            let _ = writeln!(
                t,
                "  first failing seed {} (replicate {})\n  replay: {}",
                f.seed, f.replicate, f.replay
            );
        }
    }
    t
}

/// The report of a sweep, a shard or a merge: one test case per point x profile, failing
/// when `policy` counts one of its findings.
pub(crate) fn for_sweep(m: &Manifest, s: &Summary, policy: &FailOn) -> String {
    let mut suite = TestSuite::new(m.name.clone());
    suite.add_property(("scenario", m.scenario_file.as_str()));
    suite.add_property(("baseSeed", m.base_seed.to_string().as_str()));
    suite.add_property(("seeds", m.seeds.to_string().as_str()));
    if let Some(sh) = m.shard {
        suite.add_property(("shard", sh.to_string().as_str()));
    }
    for c in &s.cells {
        let fails = policy.cell_fails(c);
        let status = if fails {
            let mut st = TestCaseStatus::non_success(NonSuccessKind::Failure);
            let names: Vec<String> = c
                .findings
                .iter()
                .filter(|(k, _)| policy.counts(k))
                .map(|(k, r)| {
                    format!(
                        "{k} in {} of {}",
                        r.runs,
                        crate::report::plural(c.runs, "run")
                    )
                })
                .collect();
            st.set_message(names.join("; "));
            st.set_type("finding");
            st.set_description(cell_text(m, c, policy, true));
            st
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(
            format!(
                "point {} [{}] {}",
                c.point,
                m.point_label(c.point),
                c.profile
            ),
            status,
        );
        case.set_classname(format!("podsim.sweep.{}", m.name));
        let mut out = format!(
            "{}, {} with findings ({} [{}, {}] 95% Wilson)\n",
            crate::report::plural(c.runs, "run"),
            c.any_finding.runs,
            pct(c.any_finding.rate),
            pct(c.any_finding.ci95[0]),
            pct(c.any_finding.ci95[1])
        );
        out.push_str(&cell_text(m, c, policy, false));
        out.push_str(&crate::sweep_table::cell_metrics_text(c));
        case.set_system_out(out);
        suite.add_test_case(case);
    }
    let mut report = Report::new("podsim");
    report.add_test_suite(suite);
    report.to_string().expect("JUnit serializes")
}
