//! `podsim hunt`: search over the inputs of a base scenario for runs that break an
//! invariant. Hunting is search over inputs, not a second simulator: every candidate is an
//! ordinary scenario run by the same `run` everything else calls.
//!
//! * `generate`: the random-scenario generator (also the swarm test's) and its pieces.
//! * `mutate`: the mutations (timing, nudges, disturbances, faults, latencies, delays).
//! * `coverage`: (pod worker state, transition kind) pairs and finding signatures.
//! * `search`: strategies, generations, corpus, deduplicated findings.
//! * `found`: the finding files and the `--json` summary.
//! * `doc`, `yaml`: a scenario as a document tree (what the mutations and the shrinker
//!   edit, and `Doc::run`, the one place a tree runs), and a YAML writer for it.
//! * `shrink`: cutting a run's finding down to a small replay (`podsim shrink`).
//! * `bench`: the hunting-power benchmark's entry point (`benches/hunting.rs`).

#[doc(hidden)]
pub mod bench;
mod coverage;
pub(crate) mod doc;
mod found;
#[doc(hidden)]
pub mod generate;
mod mutate;
mod search;
pub(crate) mod shrink;
mod yaml;

pub use search::Strategy;
#[doc(hidden)]
pub use search::Tuning;

use clap::Args;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set when the hunt should stop (Ctrl-C): it ends after the generation in flight and
/// still writes what it found.
static STOP: AtomicBool = AtomicBool::new(false);

/// `podsim hunt`.
#[derive(Args, Debug)]
pub struct HuntArgs {
    /// The base scenario file (`-`: standard input).
    pub scenario: PathBuf,
    /// Behaviour profile (sets `spec.kubelet.profile`).
    #[arg(long)]
    pub profile: Option<String>,
    /// Override a field of the base scenario: `--set PATH=VALUE` (repeatable).
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub set: Vec<String>,
    /// Runs (`500`) or wall time (`30s`, `10m`).
    #[arg(long, value_name = "RUNS|DURATION", default_value = "10m")]
    pub budget: String,
    /// Search strategy.
    #[arg(long, value_enum, default_value_t = Strategy::Guided)]
    pub strategy: Strategy,
    /// Worker threads (default: one per CPU).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// The hunt's seed: with a budget in runs, the same seed gives the same hunt.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Where finding files go (default `results/hunt/<scenario name>`).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print the result as one JSON object on stdout.
    #[arg(long)]
    pub json: bool,
    /// Same-instant event order of every candidate: `random`, `fifo` or `pct:D` (default:
    /// the scenario's, or `pct:3` for `--strategy pct`).
    #[arg(long, value_name = "random|fifo|pct:D")]
    pub scheduler: Option<String>,
    /// Runs each distinct finding's shrink may spend (0: write findings unshrunk).
    #[arg(long, value_name = "N", default_value_t = found::SHRINK_RUNS)]
    pub shrink_runs: u64,
}

/// A budget: runs, or wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Budget {
    Runs(u64),
    Time(Duration),
}

impl Budget {
    pub(crate) fn parse(s: &str) -> Result<Budget, String> {
        let s = s.trim();
        if let Ok(n) = s.parse::<u64>() {
            return if n == 0 {
                Err("--budget 0: give at least one run".into())
            } else {
                Ok(Budget::Runs(n))
            };
        }
        match crate::scenario::duration::parse_go_duration(s) {
            Ok(ns) if ns > 0 => Ok(Budget::Time(Duration::from_nanos(
                u64::try_from(ns).unwrap_or(u64::MAX),
            ))),
            _ => Err(format!(
                "--budget {s:?}: expected a number of runs (`500`) or a duration (`30s`, `10m`)"
            )),
        }
    }
}

fn usage(e: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

/// `podsim hunt`: exit 0 when nothing was found, 1 with findings, 2 on bad input, 101
/// when a run panicked (a podsim bug; its scenario is written for the replay).
pub fn command(a: HuntArgs) -> ExitCode {
    let budget = match Budget::parse(&a.budget) {
        Ok(b) => b,
        Err(e) => return usage(e),
    };
    if let Err(e) = crate::sweep::check_jobs(a.jobs) {
        return usage(e);
    }
    if a.out
        .as_deref()
        .is_some_and(crate::scenario::file::is_stdio)
    {
        return usage("--out -: findings are a directory of files; name a directory");
    }
    let profile = match a.profile.as_deref().map(crate::sweep::profile_flag) {
        None => None,
        Some(Ok(p)) => Some(p.to_owned()),
        Some(Err(e)) => return usage(e),
    };
    let mut sets = Vec::new();
    for s in &a.set {
        match s.split_once('=') {
            Some((p, v)) if !p.trim().is_empty() => {
                sets.push((p.trim().to_string(), v.to_string()))
            }
            _ => return usage(format!("--set {s:?}: expected PATH=VALUE")),
        }
    }
    if let Some(p) = &profile {
        sets.push(("spec.kubelet.profile".to_string(), p.clone()));
    }
    let scheduler = match &a.scheduler {
        Some(given) => match crate::sweep::scheduler_flag(given) {
            Ok(s) => Some(s),
            Err(e) => return usage(e),
        },
        None => search::scheduler_for(a.strategy).map(str::to_string),
    };
    if let Some(s) = &scheduler {
        sets.push(("spec.scheduler".to_string(), s.clone()));
    }
    let (base, sc) = match load_base(&a.scenario, &sets) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results/hunt").join(&sc.name));
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(a.jobs.unwrap_or(0))
        .build()
    {
        Ok(p) => p,
        Err(e) => return usage(format!("cannot start worker threads: {e}")),
    };
    let profile_name = sc.kubelet.profile.clone();
    let mut s = search::Search::new(base, &sc, a.strategy, a.seed);
    let seconds = hunt(&mut s, budget, &pool, &sc.name);
    let cx = found::Context {
        base: &a.scenario,
        profile: &profile_name,
        sets: &a.set,
        strategy: a.strategy,
        seed: a.seed,
        out: &out,
        scheduler,
        shrink_runs: a.shrink_runs,
    };
    finish(&s, &cx, seconds, a.json, &pool)
}

/// The base scenario: validated as `podsim run` would (errors name file, field and
/// line:column), and as a tree with the overrides applied, for the mutations.
fn load_base(
    path: &Path,
    sets: &[(String, String)],
) -> Result<(serde_json::Value, crate::scenario::Scenario), ExitCode> {
    use crate::scenario::file;
    let name = file::display_name(path);
    let text = file::read_capped(path, file::MAX_INPUT_BYTES).map_err(usage)?;
    let bad = |e: crate::scenario::LoadError| {
        eprint!("{e}");
        if !e.to_string().ends_with('\n') {
            eprintln!();
        }
        ExitCode::from(2)
    };
    let loaded = crate::load_str(&name, &text, sets).map_err(bad)?;
    for n in &loaded.notes {
        eprintln!("{n}");
    }
    let doc = doc::Doc::from_text(&name, &text, sets).map_err(bad)?;
    Ok((doc.tree, loaded.scenario))
}

/// Runs generations until the budget is spent or the hunt is stopped; returns the wall
/// seconds it took.
fn hunt(s: &mut search::Search, budget: Budget, pool: &rayon::ThreadPool, label: &str) -> f64 {
    install_interrupt();
    let mut ticker = crate::progress::Ticker::new();
    let line = |s: &search::Search, secs: f64| {
        format!(
            "hunt {label}: {} runs, coverage {} pairs + {} reach points, corpus {}, {} findings, {:.0} runs/s",
            s.runs,
            s.pairs.len(),
            s.reach.len(),
            s.corpus_len(),
            s.findings.len(),
            s.runs as f64 / secs.max(1e-9)
        )
    };
    loop {
        let n = match budget {
            Budget::Runs(total) if s.runs >= total => break,
            Budget::Runs(total) => total - s.runs,
            Budget::Time(d) if ticker.elapsed() >= d => break,
            Budget::Time(_) => search::GENERATION,
        };
        if STOP.load(Ordering::Relaxed) {
            eprintln!("\nhunt: interrupted; writing what was found");
            break;
        }
        s.step(n, pool);
        if !s.panics.is_empty() {
            break;
        }
        ticker.tick(|secs| line(s, secs));
    }
    ticker.finish(|secs| line(s, secs));
    ticker.elapsed().as_secs_f64()
}

/// Writes the finding files and prints the result.
fn finish(
    s: &search::Search,
    cx: &found::Context<'_>,
    seconds: f64,
    json: bool,
    pool: &rayon::ThreadPool,
) -> ExitCode {
    if !s.panics.is_empty() {
        for line in found::write_panics(s, cx) {
            eprintln!(
                "podsim panicked: this is a bug in podsim, not in the kubelet.\nreplay: {line}"
            );
        }
        return ExitCode::from(101);
    }
    if !s.findings.is_empty() && cx.shrink_runs > 0 {
        eprintln!(
            "hunt: shrinking {} distinct findings (at most {} runs each)",
            s.findings.len(),
            cx.shrink_runs
        );
    }
    let findings = match found::write_findings(s, cx, pool) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let any = !findings.is_empty();
    if json {
        let j = found::HuntJson {
            runs: s.runs,
            seconds,
            coverage: found::Coverage {
                pairs: s.pairs.len(),
                reach: s.reach.iter().cloned().collect(),
                corpus: s.corpus_len(),
                discarded: s.discarded,
            },
            findings,
        };
        match serde_json::to_string_pretty(&j) {
            Ok(t) => crate::outfile::stdout_write(format_args!("{t}\n")),
            Err(e) => return usage(e),
        }
    } else {
        for f in &findings {
            crate::outfile::stdout_write(format_args!(
                "{} on {} (run {}): {}\n  replay: {}\n",
                f.invariant,
                if f.pod.is_empty() { "-" } else { &f.pod },
                f.first_run,
                cx.out.join(&f.replay_file).display(),
                f.replay
            ));
        }
        if !any {
            crate::outfile::stdout_write(format_args!("no findings in {} runs\n", s.runs));
        }
    }
    if any {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Ctrl-C stops the hunt after the generation in flight (see [`STOP`]); a second Ctrl-C
/// ends the process at once (the default action, restored by the first).
#[cfg(unix)]
fn install_interrupt() {
    extern "C" fn on_sigint(_: libc::c_int) {
        STOP.store(true, Ordering::Relaxed);
        // SAFETY: `signal` is async-signal-safe; this restores the default action.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
        }
    }
    let handler: extern "C" fn(libc::c_int) = on_sigint;
    // SAFETY: the handler only stores to an atomic and calls `signal`, both
    // async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
}

#[cfg(not(unix))]
fn install_interrupt() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_runs_or_wall_time() {
        assert_eq!(Budget::parse("500"), Ok(Budget::Runs(500)));
        assert_eq!(
            Budget::parse("10m"),
            Ok(Budget::Time(Duration::from_secs(600)))
        );
        assert_eq!(
            Budget::parse("1m30s"),
            Ok(Budget::Time(Duration::from_secs(90)))
        );
        for bad in ["0", "0s", "-5s", "soon", ""] {
            assert!(Budget::parse(bad).is_err(), "{bad}");
        }
    }

    /// The search state after a few generations is the same whatever the thread count.
    #[test]
    fn generations_merge_in_candidate_order() {
        let text = std::fs::read_to_string("scenarios/hunt/mixed-node.yaml").expect("base");
        let sets = vec![("spec.kubelet.profile".to_string(), "v1.21".to_string())];
        let sc = crate::load_str("b.yaml", &text, &sets)
            .expect("valid")
            .scenario;
        let summary = |jobs: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(jobs)
                .build()
                .expect("pool");
            let tree = doc::Doc::from_text("b.yaml", &text, &sets)
                .expect("valid")
                .tree;
            let mut s = search::Search::new(tree, &sc, Strategy::Guided, 3);
            for _ in 0..3 {
                s.step(search::GENERATION, &pool);
            }
            let f: Vec<(String, u64, String)> = s
                .findings
                .iter()
                .map(|f| (f.invariant.clone(), f.first_run, f.signature.clone()))
                .collect();
            (s.runs, s.pairs.len(), s.reach.clone(), s.corpus_len(), f)
        };
        let one = summary(1);
        assert_eq!(one.0, 3 * search::GENERATION);
        assert!(!one.4.is_empty());
        assert_eq!(one, summary(2));
    }
}
