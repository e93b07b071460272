//! `podsim sweep` and `podsim merge`: check `--fail-on` and `--out` before any work, run
//! the sweep (or merge its shards), then print the summary table, draw the plots, write the
//! JUnit report and map the findings to the exit code.

use crate::cli::{MergeArgs, SweepArgs};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Prints the table, writes the JUnit report, maps findings to the exit code.
fn finish_sweep(
    m: &crate::results::Manifest,
    s: &crate::results::Summary,
    out: &Path,
    junit: &Option<PathBuf>,
    policy: &crate::sweep::FailOn,
) -> ExitCode {
    let policy = &policy.clone().expecting(&m.expected_findings);
    let table = crate::results::table(m, s, out);
    if junit
        .as_deref()
        .is_some_and(crate::scenario::file::is_stdio)
    {
        // Standard output holds the JUnit report alone.
        eprint!("{table}");
    } else {
        crate::outfile::stdout_write(format_args!("{table}"));
    }
    // The plots are drawn from the result files, as `podsim plot DIR` does (shards are
    // plotted once merged).
    if m.shard.is_none() {
        match crate::plot::sweep::plot_dir(out, None) {
            Ok(rep) => {
                for n in &rep.notes {
                    eprintln!("note: {n}");
                }
                eprintln!(
                    "plots: {} in {}",
                    crate::report::plural(rep.written.len() as u64, "file"),
                    out.join("plots").display()
                );
            }
            Err(e) => eprintln!("note: no plots: {e}"),
        }
    }
    if let Some(path) = junit {
        if let Err(code) = crate::cli::write_junit(path, &crate::junit::for_sweep(m, s, policy)) {
            return code;
        }
    }
    if policy.fails(s) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--fail-on`, checked before any work: `any` or `none` alone, or known finding names.
fn fail_on(args: &[String]) -> Result<crate::sweep::FailOn, ExitCode> {
    let names = crate::names();
    let known: Vec<&str> = names
        .invariants
        .iter()
        .chain(&names.run_findings)
        .copied()
        .collect();
    crate::sweep::FailOn::parse(args, &known).map_err(|e| {
        eprintln!("{}", crate::cli::error_text(&e));
        ExitCode::from(2)
    })
}

pub(crate) fn cmd_sweep(a: SweepArgs) -> ExitCode {
    let policy = match fail_on(&a.fail_on) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if a.out
        .as_deref()
        .is_some_and(crate::scenario::file::is_stdio)
    {
        eprintln!("error: --out -: a result directory cannot be standard output; name a directory");
        return ExitCode::from(2);
    }
    let shard = match a.shard.as_deref().map(crate::results::Shard::parse) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let req = crate::sweep::Request {
        input: a.input,
        seeds: a.seeds,
        profiles: a.profiles,
        sets: a.set,
        jobs: a.jobs,
        shard,
        out: a.out,
        scheduler: a.scheduler,
    };
    match crate::sweep::sweep(&req) {
        Ok(done) => {
            let mut code =
                finish_sweep(&done.manifest, &done.summary, &done.out, &a.junit, &policy);
            if a.report && crate::report_html::report_to(&done.out, None) != ExitCode::SUCCESS {
                code = ExitCode::from(2);
            }
            // Held until the plots and the report are written.
            drop(done.lock);
            code
        }
        Err(crate::sweep::Failure::Input(e)) => {
            eprintln!("{}", crate::cli::error_text(&e));
            ExitCode::from(2)
        }
        Err(crate::sweep::Failure::Panic { replay }) => {
            eprintln!(
                "podsim panicked: this is a bug in podsim, not in the kubelet.\nreplay: {replay}"
            );
            ExitCode::from(101)
        }
    }
}

pub(crate) fn cmd_merge(a: MergeArgs) -> ExitCode {
    let policy = match fail_on(&a.fail_on) {
        Ok(p) => p,
        Err(code) => return code,
    };
    if crate::scenario::file::is_stdio(&a.out) {
        eprintln!("error: --out -: a result directory cannot be standard output; name a directory");
        return ExitCode::from(2);
    }
    match crate::results::merge(&a.dirs, &a.out) {
        Ok(done) => {
            let code = finish_sweep(&done.manifest, &done.summary, &a.out, &a.junit, &policy);
            // Held until the plots and the report are written.
            drop(done.lock);
            code
        }
        Err(e) => {
            eprintln!("{}", crate::cli::error_text(&e));
            ExitCode::from(2)
        }
    }
}
