//! The command line: parse arguments, call one function per subcommand, map the outcome
//! to an exit code (0 clean, 1 findings or `expect` not met, 2 bad input or usage).

use crate::report;
use crate::run::{run, RunOptions};
use crate::scenario::Scenario;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// `print!` to standard output through [`crate::outfile::stdout_write`]: a reader that
/// went away (`podsim invariants | head`) ends the output quietly instead of a panic.
macro_rules! out {
    ($($t:tt)*) => { crate::outfile::stdout_write(format_args!($($t)*)) };
}

/// `println!` the same way.
macro_rules! outln {
    () => { crate::outfile::stdout_write(format_args!("\n")) };
    ($($t:tt)*) => { crate::outfile::stdout_write(format_args!("{}\n", format_args!($($t)*))) };
}

/// podsim: a deterministic discrete-event simulator of kubelet pod lifecycles.
#[derive(Parser, Debug)]
#[command(name = "podsim", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario once and print its per-pod lifecycle summary.
    Run(RunArgs),
    /// Validate scenario and sweep files; print every problem.
    Check {
        /// Files to check (`-`: standard input).
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Draw the plots of a sweep result directory (from its summary.json) into DIR/plots/.
    Plot {
        /// The sweep result directory.
        dir: PathBuf,
        /// Where the plots go (default DIR/plots).
        #[arg(long, value_name = "PLOTDIR")]
        out: Option<PathBuf>,
    },
    /// Run seeds x parameter points x profiles in parallel; write a result directory.
    Sweep(SweepArgs),
    /// Write a sweep result directory as one self-contained HTML page (DIR/report.html).
    Report {
        /// The sweep result directory.
        dir: PathBuf,
        /// Write the page here instead of DIR/report.html.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Combine shard directories into the result of the unsharded sweep.
    Merge(MergeArgs),
    /// List the invariants the oracle checks: name, meaning, source and profiles.
    Invariants {
        /// Print a JSON array (one object per invariant, the fields of the text listing).
        #[arg(long)]
        json: bool,
    },
    /// Run a scenario under every profile and every single switch flip on the same seeds;
    /// report which behaviour changes the findings.
    Bisect(BisectArgs),
    /// Run one scenario and seed on two sides (two profiles or schedulers, or `--set` on
    /// the right side), or read two trace files; print where the runs part.
    Diff(crate::diff::DiffArgs),
    /// Search from a base scenario for runs that break an invariant; write each distinct
    /// finding as a scenario file that replays it.
    Hunt(crate::hunt::HuntArgs),
    /// Shrink a scenario to a small one that still shows a finding; write it as a
    /// standalone scenario file that replays the finding.
    Shrink(ShrinkArgs),
}

#[derive(Args, Debug)]
pub struct ShrinkArgs {
    /// The scenario file (`-`: standard input).
    pub scenario: PathBuf,
    /// The seed whose run shows the finding.
    #[arg(long)]
    pub seed: u64,
    /// Behaviour profile (sets `spec.kubelet.profile`, as for `run`).
    #[arg(long)]
    pub profile: Option<String>,
    /// Override a scenario field (repeatable); the shrunk file has it written in.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// The invariant whose finding must persist.
    #[arg(long, value_name = "NAME")]
    pub invariant: String,
    /// Where the shrunk scenario goes (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Also accept a candidate that shows the finding on one of seeds 1..=N (default: the
    /// seed stays fixed).
    #[arg(long, value_name = "N")]
    pub seeds: Option<u64>,
    /// Runs to spend at most.
    #[arg(long, value_name = "N", default_value_t = 5000)]
    pub max_runs: u64,
    /// Print the outcome as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct BisectArgs {
    /// The scenario file (not needed with `--list`; `-`: standard input).
    #[arg(required_unless_present = "list")]
    pub scenario: Option<PathBuf>,
    /// Seeds per variant (seeds 1..=N).
    #[arg(long, default_value_t = 200)]
    pub seeds: u64,
    /// Override a scenario field for every variant (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Worker threads (default: one per CPU).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Print the result as JSON on stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// List the behaviour switches and the profiles' values, and exit.
    #[arg(long)]
    pub list: bool,
    /// Run every release profile instead; name the first release where the outcome changes.
    #[arg(long, conflicts_with = "list")]
    pub releases: bool,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// A sweep file, or a scenario file (swept over seeds and `--set` axes); `-`: standard
    /// input (a sweep file's relative `spec.scenario` is then resolved against the current
    /// directory).
    pub input: PathBuf,
    /// Replicates per point (default: the sweep file's `spec.seeds`, or 100).
    #[arg(long)]
    pub seeds: Option<u64>,
    /// Profile to run every point under (repeatable; replaces the sweep file's list): a
    /// release, v1.21, v1.22, v1.23, v1.25, v1.27, v1.29 or v1.31 (current names v1.31).
    #[arg(long = "profile", value_name = "P")]
    pub profiles: Vec<String>,
    /// A grid axis: `--set spec.runtime.latencies.stopContainer.fixed=100ms,1s` (repeatable;
    /// replaces the sweep file's axis with the same path).
    #[arg(long = "set", value_name = "PATH=V1,V2")]
    pub set: Vec<String>,
    /// Worker threads (default: one per CPU).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Run only the runs whose index % N == I (I is 0-based).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// Result directory (default `results/bulk/<name>`; a shard: `.../shard-I-of-N`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write a JUnit XML report (one test case per point x profile; `-`: standard output,
    /// the table then goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Which findings make the exit code 1: `any` (default), `none`, or an invariant name
    /// (repeatable).
    #[arg(long = "fail-on", value_name = "any|none|INVARIANT")]
    pub fail_on: Vec<String>,
    /// Also write the result directory as one HTML page, DIR/report.html (as
    /// `podsim report DIR` does).
    #[arg(long)]
    pub report: bool,
    /// Order of events due at the same instant in every run (as for `run`).
    #[arg(long, value_name = "random|fifo|pct:D")]
    pub scheduler: Option<String>,
}

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard directories (every shard of one sweep, each complete).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The merged result directory.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Write a JUnit XML report (one test case per point x profile; `-`: standard output,
    /// the table then goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Which findings make the exit code 1 (as for `sweep`).
    #[arg(long = "fail-on", value_name = "any|none|INVARIANT")]
    pub fail_on: Vec<String>,
}

/// `--timeline-format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineFormat {
    Svg,
    Png,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (`-`: standard input).
    pub scenario: PathBuf,
    /// Seed (default: the scenario's `spec.seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Behaviour profile (sets `spec.kubelet.profile`): a release, v1.21, v1.22, v1.23,
    /// v1.25, v1.27, v1.29 or v1.31 (current names v1.31).
    #[arg(long)]
    pub profile: Option<String>,
    /// Override a scenario field: `--set spec.runtime.latencies.stopContainer.fixed=2s`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Write the trace as JSON Lines to FILE (`-`: standard output; the text summary then
    /// goes to standard error).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Draw the run as a per-pod timeline into FILE (.svg or .png; `-`: standard output).
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Write the run as a Chrome/Perfetto trace-event JSON file (open it in
    /// ui.perfetto.dev or chrome://tracing).
    #[arg(long, value_name = "FILE")]
    pub perfetto: Option<PathBuf>,
    /// The timeline's format (default: from FILE's extension; SVG for `-`).
    #[arg(long, value_name = "svg|png", requires = "timeline")]
    pub timeline_format: Option<TimelineFormat>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run twice (the second time on another thread) and compare trace hashes.
    #[arg(long)]
    pub check_determinism: bool,
    /// Write a JUnit XML report (one test case: this scenario under its profile; `-`:
    /// standard output).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Run without the invariant oracle (same trace hash, no invariant findings); for
    /// measuring the oracle's cost.
    #[arg(long)]
    pub no_oracle: bool,
    /// Order of events due at the same instant (sets `spec.scheduler`): random (the
    /// default), fifo, or pct:D (PCT with D-1 priority change points; pct:D:K spreads them
    /// over the first K same-instant choices, default 100).
    #[arg(long, value_name = "random|fifo|pct:D")]
    pub scheduler: Option<String>,
}

/// Entry point used by `main`.
pub fn main_with(cli: Cli) -> ExitCode {
    let code = command(cli);
    match crate::outfile::stdout_failure() {
        Some(e) => {
            eprintln!("error: cannot write to standard output: {e}");
            ExitCode::from(2)
        }
        None => code,
    }
}

fn command(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Check { files } => cmd_check(&files),
        Command::Plot { dir, out } => cmd_plot(&dir, out.as_deref()),
        Command::Sweep(a) => crate::cli_sweep::cmd_sweep(a),
        Command::Report { dir, out } => crate::report_html::command(&dir, out.as_deref()),
        Command::Merge(a) => crate::cli_sweep::cmd_merge(a),
        Command::Invariants { json: false } => {
            out!("{}", invariants_table());
            ExitCode::SUCCESS
        }
        Command::Invariants { json: true } => {
            outln!("{}", invariants_json());
            ExitCode::SUCCESS
        }
        Command::Bisect(a) => cmd_bisect(a),
        Command::Diff(a) => crate::diff::command(a),
        Command::Hunt(a) => crate::hunt::command(a),
        Command::Shrink(a) => cmd_shrink(a),
    }
}

/// `podsim bisect --list`: every switch, its value on each release, and its references.
pub(crate) fn switches_table() -> String {
    let mut s = crate::kubelet::profile_doc::switches_table();
    s.push_str(&crate::kubelet::gates::list_table());
    s
}

fn cmd_bisect(a: BisectArgs) -> ExitCode {
    if a.list {
        out!("{}", switches_table());
        return ExitCode::SUCCESS;
    }
    let Some(path) = a.scenario else {
        eprintln!("error: a scenario file is needed");
        return ExitCode::from(2);
    };
    if a.seeds == 0 {
        eprintln!("error: --seeds must be at least 1");
        return ExitCode::from(2);
    }
    let seeds_ok = if a.releases {
        crate::bisect_releases::check_seeds(a.seeds)
    } else {
        crate::bisect::check_seeds(a.seeds)
    };
    if let Err(e) = seeds_ok.and_then(|()| crate::sweep::check_jobs(a.jobs)) {
        eprintln!("error: {e}");
        return ExitCode::from(2);
    }
    let overrides = match parse_sets(&a.set, &None) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let sc = match load(&path, &overrides) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot start worker threads: {e}");
            return ExitCode::from(2);
        }
    };
    let printed = if a.releases {
        let b = crate::bisect_releases::bisect_releases(&path, &a.set, &sc, a.seeds, &pool);
        crate::bisect_releases::render(&b, a.json, crate::bisect_releases::table)
    } else {
        let b = crate::bisect::bisect(&path, &a.set, &sc, a.seeds, &pool);
        crate::bisect_releases::render(&b, a.json, crate::bisect::table)
    };
    match printed {
        Ok(s) => out!("{s}"),
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// `podsim invariants`: every invariant of the oracle, one block each.
pub(crate) fn invariants_table() -> String {
    use crate::oracle::invariants::INVARIANTS;
    let mut s = String::new();
    for i in INVARIANTS {
        s.push_str(&format!(
            "{}  [{} {}]  profiles: {}\n  {}\n",
            i.name,
            i.id,
            i.kind.as_str(),
            if i.profiles.is_empty() {
                "none (open upstream bug)".to_string()
            } else {
                i.profiles.join(", ")
            },
            i.meaning
        ));
        if !i.bound.is_empty() {
            s.push_str(&format!("  bound: {}\n", i.bound));
        }
        s.push_str(&format!("  source: {}\n\n", i.source));
    }
    s.push_str(
        "Also reported, by the run itself: run-limit-reached (an event budget was exhausted).\n",
    );
    s
}

/// `podsim invariants --json`: an array of objects with the text listing's fields (the
/// `profiles` of an open upstream bug are empty).
pub(crate) fn invariants_json() -> String {
    use crate::oracle::invariants::INVARIANTS;
    #[derive(serde::Serialize)]
    struct Row {
        name: &'static str,
        id: &'static str,
        kind: &'static str,
        profiles: &'static [&'static str],
        meaning: &'static str,
        bound: &'static str,
        source: &'static str,
    }
    let all: Vec<Row> = INVARIANTS
        .iter()
        .map(|i| Row {
            name: i.name,
            id: i.id,
            kind: i.kind.as_str(),
            profiles: i.profiles,
            meaning: i.meaning,
            bound: i.bound,
            source: i.source,
        })
        .collect();
    serde_json::to_string_pretty(&all).expect("JSON of plain strings")
}

fn parse_sets(sets: &[String], profile: &Option<String>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for s in sets {
        match s.split_once('=') {
            Some((p, v)) if !p.trim().is_empty() => out.push((p.trim().to_string(), v.to_string())),
            _ => return Err(format!("--set {s:?}: expected PATH=VALUE")),
        }
    }
    if let Some(p) = profile {
        out.push(("spec.kubelet.profile".to_string(), p.clone()));
    }
    Ok(out)
}

fn load(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, ExitCode> {
    match crate::load(path, overrides) {
        Ok(l) => {
            for n in &l.notes {
                eprintln!("{n}");
            }
            Ok(l.scenario)
        }
        Err(e) => {
            eprint!("{e}");
            if !e.to_string().ends_with('\n') {
                eprintln!();
            }
            Err(ExitCode::from(2))
        }
    }
}

/// Prints the outcome of `--check-determinism` (if asked); a failure ends the command
/// (the trace file is then not written).
fn determinism_report(
    second: Option<crate::cli_run::Second>,
    trace: Option<crate::cli_run::TraceFile>,
    hash: &str,
    records: u64,
    replay: &str,
) -> Result<Option<crate::cli_run::TraceFile>, ExitCode> {
    use crate::cli_run::Second;
    let code = match second {
        None => return Ok(trace),
        Some(Second::Same) => {
            eprintln!(
                "determinism check passed: two runs (two threads) gave trace hash {hash} over {records} records"
            );
            return Ok(trace);
        }
        Some(Second::Panicked) => {
            eprintln!("podsim: the second run panicked\nreplay: {replay}");
            101
        }
        Some(Second::Differs { hash: hash2, first }) => {
            eprintln!("determinism check FAILED: trace hashes differ ({hash} vs {hash2})");
            if let Some((one, two)) = first {
                eprintln!("first differing record:\n  run 1: {one}\n  run 2: {two}");
            }
            eprintln!("replay: {replay}");
            1
        }
    };
    if let Some(t) = trace {
        t.discard();
    }
    Err(ExitCode::from(code))
}

/// `podsim run --json`: the run's output, with `expect` (whether the scenario's `expect`
/// held) when the scenario has one; without it the object is the run's output alone.
#[derive(serde::Serialize)]
struct RunJson<'a> {
    #[serde(flatten)]
    out: &'a crate::run::RunOutput,
    #[serde(skip_serializing_if = "Option::is_none")]
    expect: Option<&'a report::ExpectOutcome>,
}

/// Checks what `podsim run` writes where before anything runs: at most one output on
/// standard output, and the timeline's format. Returns whether standard output holds a
/// file (the text summary then goes to standard error) and the timeline format.
fn run_outputs(a: &RunArgs) -> Result<(bool, Option<crate::cli_run::Fig>), ExitCode> {
    let usage = |e: String| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    };
    let to_stdout = crate::outfile::claim_stdout(
        &[
            ("--trace", a.trace.as_deref()),
            ("--perfetto", a.perfetto.as_deref()),
            ("--junit", a.junit.as_deref()),
            ("--timeline", a.timeline.as_deref()),
        ],
        &[("--json", a.json)],
    )
    .map_err(usage)?;
    let fig = match &a.timeline {
        None => None,
        Some(t) => Some(crate::cli_run::Fig::of(t, a.timeline_format).map_err(usage)?),
    };
    Ok((to_stdout, fig))
}

/// Prints the `--json` object (streamed: a 100,000-pod summary would otherwise be a second
/// copy in one string).
fn print_json(out: &crate::run::RunOutput, expect: Option<&report::ExpectOutcome>) -> bool {
    let mut w = std::io::BufWriter::new(std::io::stdout().lock());
    let written = serde_json::to_writer_pretty(&mut w, &RunJson { out, expect })
        .map_err(std::io::Error::from)
        .and_then(|()| {
            use std::io::Write as _;
            writeln!(w)?;
            w.flush()
        });
    if let Err(e) = written {
        eprintln!("error: {e}");
        return false;
    }
    true
}

/// `podsim run`'s overrides, in the order they apply (`--set`s, `--profile`,
/// `--scheduler`), and the scheduler in its canonical spelling.
type Overrides = (Vec<(String, String)>, Option<String>);

fn run_overrides(a: &RunArgs) -> Result<Overrides, String> {
    let profile = a
        .profile
        .as_deref()
        .map(crate::sweep::profile_flag)
        .transpose()?
        .map(str::to_owned);
    let scheduler = a
        .scheduler
        .as_deref()
        .map(crate::sweep::scheduler_flag)
        .transpose()?;
    let mut o = parse_sets(&a.set, &profile)?;
    o.extend(
        scheduler
            .iter()
            .map(|s| ("spec.scheduler".to_string(), s.clone())),
    );
    Ok((o, scheduler))
}

fn cmd_run(a: RunArgs) -> ExitCode {
    let (to_stdout, fig) = match run_outputs(&a) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let (overrides, scheduler) = match run_overrides(&a) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let sc = match load(&a.scenario, &overrides) {
        Ok(s) => Arc::new(s),
        Err(code) => return code,
    };
    let seed = a.seed.unwrap_or(sc.seed);
    let replay = crate::replay::replay_line_with(
        &a.scenario,
        seed,
        &a.set,
        &a.profile,
        scheduler.as_deref(),
    );
    let opts = RunOptions {
        seed,
        // Records are streamed (see `cli_run`), never kept.
        keep_trace: false,
        replay: replay.clone(),
        no_oracle: a.no_oracle,
        history: crate::run::FindingHistory::Rerun,
    };
    let wants = crate::cli_run::Wants {
        trace: a.trace.as_deref(),
        perfetto: a.perfetto.as_deref(),
        timeline: a.timeline.is_some(),
        check_determinism: a.check_determinism,
    };
    let streams = a.trace.is_some() || a.perfetto.is_some() || a.timeline.is_some();
    let streamed = if streams || a.check_determinism {
        crate::cli_run::run(sc.clone(), &opts, &wants, |sink, typed| {
            reporting_panics(&replay, || {
                crate::run::run_observed(sc.clone(), &opts, sink, typed)
            })
        })
    } else {
        let out = reporting_panics(&replay, || run(sc.clone(), &opts));
        Ok(crate::cli_run::Streamed {
            out,
            records: 0,
            probes: Default::default(),
            second: None,
            trace: None,
            perfetto: None,
        })
    };
    let trace_name = || crate::outfile::display_name(a.trace.as_deref().unwrap_or(Path::new("")));
    let streamed = match streamed {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let crate::cli_run::Streamed {
        out,
        records,
        probes,
        second,
        trace,
        perfetto,
    } = streamed;
    let trace = match determinism_report(second, trace, &out.trace_hash, records, &replay) {
        Ok(t) => t,
        Err(code) => {
            if let Some(Ok(p)) = perfetto {
                p.discard();
            }
            return code;
        }
    };
    if let Err(code) = crate::cli_run::commit_perfetto(perfetto, a.perfetto.as_deref()) {
        return code;
    }
    if let Some(t) = trace {
        if let Err(e) = t.commit() {
            eprintln!("error: cannot write trace {}: {e}", trace_name());
            return ExitCode::from(2);
        }
    }
    if let (Some(path), Some(fig)) = (&a.timeline, fig) {
        if probes.dropped > 0 {
            eprintln!(
                "note: --timeline: {} not marked (at most {} are)",
                report::plural(probes.dropped, "probe failure"),
                crate::plot::timeline::MAX_PROBE_MARKERS
            );
        }
        let timeline = crate::plot::timeline::Timeline::new(&out, probes);
        if let Err(e) = fig.write(&timeline, path) {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    }
    let expect = report::expect_outcome(&sc, &out);
    let expect_failure = report::expect_failure(&sc, &out);
    if a.json {
        if !print_json(&out, expect.as_ref()) {
            return ExitCode::from(2);
        }
    } else if to_stdout {
        // Standard output holds the file alone.
        eprint!("{}", report::text_summary(&sc, &out));
    } else {
        out!("{}", report::text_summary(&sc, &out));
    }
    if let Some(msg) = &expect_failure {
        eprintln!("expect not met: {msg}\nreplay: {replay}");
    }
    // Findings that the scenario expects make a clean result.
    let failed = expect_failure.is_some() || (!out.findings.is_empty() && sc.expect.is_none());
    if let Some(path) = &a.junit {
        let xml = crate::junit::for_run(&out, failed, expect.as_ref(), expect_failure.as_deref());
        if let Err(code) = write_junit(path, &xml) {
            return code;
        }
    }
    if failed {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn cmd_shrink(a: ShrinkArgs) -> ExitCode {
    let profile = match a.profile.as_deref().map(crate::sweep::profile_flag) {
        None => None,
        Some(Ok(p)) => Some(p.to_owned()),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let overrides = match parse_sets(&a.set, &profile) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    crate::hunt::shrink::command(&crate::hunt::shrink::Request {
        scenario: &a.scenario,
        seed: a.seed,
        overrides: &overrides,
        invariant: &a.invariant,
        out: &a.out,
        json: a.json,
        limits: crate::hunt::shrink::Limits {
            max_runs: a.max_runs,
            seeds: a.seeds.unwrap_or(0),
        },
    })
}

pub(crate) fn write_junit(path: &Path, xml: &str) -> Result<(), ExitCode> {
    crate::results::write_atomic(path, xml.as_bytes()).map_err(|e| {
        eprintln!(
            "error: cannot write {}: {e}",
            crate::outfile::display_name(path)
        );
        ExitCode::from(2)
    })
}

/// Load errors already carry `error:` on each problem line; other messages get it here.
/// Control characters in the user text they echo are escaped, line by line.
pub(crate) fn error_text(e: &str) -> String {
    let e = e
        .lines()
        .map(crate::scenario::escape_controls)
        .collect::<Vec<_>>()
        .join("\n");
    if e.starts_with("error:") || e.contains("\nerror:") || e.starts_with("sweep point") {
        e
    } else {
        format!("error: {e}")
    }
}

/// A panic inside a run is a podsim bug: print the replay line before propagating it.
fn reporting_panics<T>(replay: &str, f: impl FnOnce() -> T) -> T {
    let replay = replay.to_string();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        prev(info);
        eprintln!(
            "podsim panicked: this is a bug in podsim, not in the kubelet.\nreplay: {replay}"
        );
    }));
    let out = f();
    let _ = std::panic::take_hook();
    out
}

/// `podsim plot DIR`: exit 0 when at least one plot was written, 2 when the summary is
/// unreadable or nothing could be plotted. Notes about skipped plots go to stderr.
fn cmd_plot(dir: &Path, out: Option<&Path>) -> ExitCode {
    if out.is_some_and(crate::scenario::file::is_stdio) {
        eprintln!(
            "error: --out -: plots are a directory of files, not standard output; name a directory"
        );
        return ExitCode::from(2);
    }
    // Plotting writes DIR/plots/: not while a sweep or merge writes the directory. (Not a
    // result directory at all: nothing is written, and the reader below says why.)
    let is_result = |f: &str| dir.join(f).is_file();
    let _lock = if is_result(crate::results::MANIFEST) || is_result(crate::results::SUMMARY) {
        match crate::lock::DirLock::acquire(dir) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        None
    };
    match crate::plot::sweep::plot_dir(dir, out) {
        Ok(rep) => {
            for n in &rep.notes {
                eprintln!("note: {n}");
            }
            for p in &rep.written {
                outln!("wrote {}", p.display());
            }
            if rep.written.is_empty() {
                eprintln!("error: {}: nothing to plot", dir.display());
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

fn cmd_check(files: &[PathBuf]) -> ExitCode {
    let mut bad = false;
    for f in files {
        match crate::check_file(f) {
            Ok(notes) => {
                for n in &notes {
                    eprintln!("{n}");
                }
                outln!("ok: {}", crate::scenario::file::display_name(f));
            }
            Err(e) => {
                bad = true;
                eprint!("{e}");
                if !e.to_string().ends_with('\n') {
                    eprintln!();
                }
            }
        }
    }
    if bad {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
