//! The command line: parse arguments, call one function per subcommand, map the outcome
//! to an exit code (0 clean, 1 findings or `expect` not met, 2 bad input or usage).

use crate::report;
use crate::run::{run, RunOptions, RunOutput};
use crate::scenario::{self, Scenario};
use crate::sim::trace::first_difference;
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

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
        /// Files to check.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List the invariants the oracle checks: name, meaning, source and profiles.
    Invariants,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file.
    pub scenario: PathBuf,
    /// Seed (default: the scenario's `spec.seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Behaviour profile (sets `spec.kubelet.profile`).
    #[arg(long)]
    pub profile: Option<String>,
    /// Override a scenario field: `--set spec.runtime.latencies.stopContainer.fixed=2s`.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Write the trace as JSON Lines to FILE.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run twice (the second time on another thread) and compare trace hashes.
    #[arg(long)]
    pub check_determinism: bool,
    /// Run without the invariant oracle (same trace hash, no invariant findings); for
    /// measuring the oracle's cost.
    #[arg(long)]
    pub no_oracle: bool,
}

/// Entry point used by `main`.
pub fn main_with(cli: Cli) -> ExitCode {
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Check { files } => cmd_check(&files),
        Command::Invariants => {
            print!("{}", invariants_table());
            ExitCode::SUCCESS
        }
    }
}

/// `podsim invariants`: every invariant of the oracle, one block each.
pub fn invariants_table() -> String {
    use crate::oracle::invariants::INVARIANTS;
    let mut s = String::new();
    for i in INVARIANTS {
        s.push_str(&format!(
            "{}  [{} {}]  profiles: {}\n  {}\n",
            i.name,
            i.id,
            i.kind.as_str(),
            i.profiles.join(", "),
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

/// The line that replays a run exactly.
pub fn replay_line(path: &Path, seed: u64, sets: &[String], profile: &Option<String>) -> String {
    let mut s = format!(
        "podsim run {} --seed {seed}",
        shell_quote(&path.display().to_string())
    );
    if let Some(p) = profile {
        s.push_str(&format!(" --profile {}", shell_quote(p)));
    }
    for x in sets {
        s.push_str(&format!(" --set {}", shell_quote(x)));
    }
    s
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn load(path: &Path, overrides: &[(String, String)]) -> Result<Scenario, ExitCode> {
    match scenario::load(path, overrides) {
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

fn cmd_run(a: RunArgs) -> ExitCode {
    let overrides = match parse_sets(&a.set, &a.profile) {
        Ok(o) => o,
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
    let replay = replay_line(&a.scenario, seed, &a.set, &a.profile);
    let opts = RunOptions {
        seed,
        keep_trace: a.trace.is_some() || a.check_determinism,
        replay: replay.clone(),
        no_oracle: a.no_oracle,
    };
    let out = run_reporting_panics(sc.clone(), &opts);

    if a.check_determinism {
        let sc2 = sc.clone();
        let opts2 = opts.clone();
        let second = std::thread::spawn(move || run(sc2, &opts2)).join();
        let second = match second {
            Ok(o) => o,
            Err(_) => {
                eprintln!("podsim: the second run panicked\nreplay: {replay}");
                return ExitCode::from(101);
            }
        };
        if second.trace_hash != out.trace_hash {
            eprintln!(
                "determinism check FAILED: trace hashes differ ({} vs {})",
                out.trace_hash, second.trace_hash
            );
            if let Some(i) = first_difference(&out.trace, &second.trace) {
                let show = |r: Option<&crate::sim::trace::Record>| {
                    r.map_or("<end of trace>".to_string(), |r| {
                        format!("#{} {} {}", r.index, r.at, r.text)
                    })
                };
                eprintln!(
                    "first differing record:\n  run 1: {}\n  run 2: {}",
                    show(out.trace.get(i)),
                    show(second.trace.get(i))
                );
            }
            eprintln!("replay: {replay}");
            return ExitCode::from(1);
        }
        eprintln!(
            "determinism check passed: two runs (two threads) gave trace hash {} over {} records",
            out.trace_hash,
            out.trace.len()
        );
    }

    if let Some(path) = &a.trace {
        if let Err(e) = write_trace(path, &out) {
            eprintln!("error: cannot write trace {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    let expect_failure = report::expect_failure(&sc, &out);
    if a.json {
        match serde_json::to_string_pretty(&out) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", report::text_summary(&sc, &out));
    }
    if let Some(msg) = &expect_failure {
        eprintln!("expect not met: {msg}\nreplay: {replay}");
    }
    if !out.findings.is_empty() || expect_failure.is_some() {
        if !out.findings.is_empty() && sc.expect.as_ref().is_some_and(|_| expect_failure.is_none())
        {
            // Findings that the scenario expects: a clean result.
            return ExitCode::SUCCESS;
        }
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

/// A panic inside a run is a podsim bug: print the replay line before propagating it.
fn run_reporting_panics(sc: Arc<Scenario>, opts: &RunOptions) -> RunOutput {
    let replay = opts.replay.clone();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        prev(info);
        eprintln!(
            "podsim panicked: this is a bug in podsim, not in the kubelet.\nreplay: {replay}"
        );
    }));
    let out = run(sc, opts);
    let _ = std::panic::take_hook();
    out
}

/// Write the trace as JSON Lines, atomically (temporary file, then rename).
fn write_trace(path: &Path, out: &RunOutput) -> std::io::Result<()> {
    let tmp = tmp_path(path);
    {
        let f = std::fs::File::create(&tmp)?;
        let mut w = std::io::BufWriter::new(f);
        for r in &out.trace {
            let line = serde_json::json!({
                "i": r.index,
                "atNs": r.at.0,
                "rec": r.text,
                "hash": format!("{:016x}", r.hash),
            });
            writeln!(w, "{line}")?;
        }
        w.flush()?;
        w.get_ref().sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// `dir/.name.tmp-<pid>` next to `path`.
pub fn tmp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

fn cmd_check(files: &[PathBuf]) -> ExitCode {
    let mut bad = false;
    for f in files {
        match scenario::check_file(f) {
            Ok(notes) => {
                for n in &notes {
                    eprintln!("{n}");
                }
                println!("ok: {}", f.display());
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
