//! `podsim sweep`: seeds x parameter points x profiles as independent runs.
//!
//! A sweep comes from a `kind: Sweep` file or a plain scenario (its own seed as the base,
//! `--set PATH=V1,V2` axes as the grid). Every (point, profile) scenario is loaded and
//! validated once, before any run. Run `index` decodes as point, replicate, profile (the
//! profile varies fastest); its seed depends only on (base seed, point, replicate)
//! ([`run_seed`]), so every profile of a point runs on the same seeds (common random
//! numbers). Runs execute on a local rayon pool (`--jobs`), in chunks: each chunk is
//! collected in index order and appended to `runs.jsonl` with an fsync, so the file never
//! depends on completion order and an interrupted sweep resumes where it stopped.

use crate::progress::Progress;
use crate::results::{self, Axis, Manifest, Metric, Point, RunRow, Shard, Summary};
use crate::run::{run, RunOptions, RunOutput};
use crate::scenario::{self, Scenario};
use crate::sim::rng::{mix64, stable_hash};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// What `podsim sweep` was asked to do.
#[derive(Clone, Debug, Default)]
pub(crate) struct Request {
    /// A sweep file or a scenario file.
    pub(crate) input: PathBuf,
    /// Replicates per point (default: the sweep file's `spec.seeds`, or 100).
    pub(crate) seeds: Option<u64>,
    /// Profiles (default: the sweep file's, or the scenario's own).
    pub(crate) profiles: Vec<String>,
    /// `PATH=V1,V2` grid axes (replacing a sweep-file axis with the same path).
    pub(crate) sets: Vec<String>,
    /// Worker threads (default: rayon's, one per CPU or `RAYON_NUM_THREADS`).
    pub(crate) jobs: Option<usize>,
    pub(crate) shard: Option<Shard>,
    /// Result directory (default `results/bulk/<name>`, a shard in `shard-I-of-N` below it).
    pub(crate) out: Option<PathBuf>,
    /// `--scheduler` for every run (sets `spec.scheduler`; replay lines carry it).
    pub(crate) scheduler: Option<String>,
}

/// Why a sweep did not finish.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Bad input, usage or an unusable result directory (exit code 2).
    Input(String),
    /// A run panicked: a podsim bug (exit code 101). The runs before it are saved.
    Panic { replay: String },
}

/// A finished sweep (or shard).
#[derive(Debug)]
pub(crate) struct Done {
    pub(crate) manifest: Manifest,
    pub(crate) summary: Summary,
    pub(crate) out: PathBuf,
    /// The result directory's lock, held until the caller is done writing into it (plots).
    pub(crate) lock: crate::lock::DirLock,
}

/// Which findings make `sweep`/`merge` exit 1 (`--fail-on`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FailOn {
    /// Any finding (the default) but those the scenario expects (`expect.findings`, filled
    /// in by [`FailOn::expecting`] once the sweep is known): a sweep of a scenario that
    /// documents a known finding fails on something new, as `podsim run` does.
    Any { expected: Vec<String> },
    /// Never: rates are reported, the exit code stays 0.
    Never,
    /// Only these invariants.
    Invariants(Vec<String>),
}

impl FailOn {
    /// The `--fail-on` values (each may be a comma-separated list): `any` or `none` alone,
    /// or finding names from `known`. An error names the bad value and what is valid.
    pub(crate) fn parse(args: &[String], known: &[&str]) -> Result<FailOn, String> {
        let values: Vec<&str> = args.iter().flat_map(|a| a.split(',')).collect();
        if values.iter().any(|v| v.trim().is_empty()) {
            return Err(format!(
                "--fail-on {}: a value is empty; give `any`, `none` or invariant names",
                args.join(",")
            ));
        }
        let values: Vec<&str> = values.iter().map(|v| v.trim()).collect();
        let mut names: Vec<String> = Vec::new();
        for v in &values {
            if (*v == "any" || *v == "none") && values.len() > 1 {
                return Err(format!(
                    "--fail-on {}: `{v}` cannot be combined with other values; give `any` \
                     alone, `none` alone, or only invariant names",
                    values.join(",")
                ));
            }
            if *v != "any" && *v != "none" && !known.contains(v) {
                let hint = crate::scenario::closest(v, known)
                    .map(|c| format!(" (did you mean `{c}`?)"))
                    .unwrap_or_default();
                return Err(format!(
                    "--fail-on {v}: unknown invariant{}; valid values: any, none, or one or \
                     more of: {}",
                    hint,
                    known.join(", ")
                ));
            }
            if !names.iter().any(|n| n == v) {
                names.push((*v).to_owned());
            }
        }
        Ok(match values.first() {
            None | Some(&"any") => FailOn::Any {
                expected: Vec::new(),
            },
            Some(&"none") => FailOn::Never,
            Some(_) => FailOn::Invariants(names),
        })
    }

    /// The policy for a sweep whose scenario expects `expected` (the manifest's
    /// `expectedFindings`): `any` then leaves them out; invariants named in `--fail-on`
    /// count whether expected or not.
    pub(crate) fn expecting(self, expected: &[String]) -> FailOn {
        match self {
            FailOn::Any { .. } => FailOn::Any {
                expected: expected.to_vec(),
            },
            p => p,
        }
    }

    /// Whether a finding of `invariant` counts as a failure.
    pub(crate) fn counts(&self, invariant: &str) -> bool {
        match self {
            FailOn::Any { expected } => !expected.iter().any(|x| x == invariant),
            FailOn::Never => false,
            FailOn::Invariants(v) => v.iter().any(|x| x == invariant),
        }
    }

    /// Whether a cell fails.
    pub(crate) fn cell_fails(&self, c: &results::Cell) -> bool {
        c.findings.keys().any(|k| self.counts(k))
    }

    /// Whether the sweep fails (exit code 1).
    pub(crate) fn fails(&self, s: &Summary) -> bool {
        s.cells.iter().any(|c| self.cell_fails(c))
    }
}

/// `--profile NAME` (run, sweep): the profile it names (kept as given: `current` stays
/// `current`); an error naming the flag, with a did-you-mean hint and the valid values.
pub(crate) fn profile_flag(name: &str) -> Result<&'static str, String> {
    let names = crate::names();
    names
        .profile(name)
        .ok_or_else(|| format!("--profile {name}: {}", names.profile_problem(name)))
}

/// `--scheduler NAME` (run, sweep, diff): the strategy in its canonical spelling, or an
/// error naming the flag and what is wrong.
pub(crate) fn scheduler_flag(given: &str) -> Result<String, String> {
    crate::sim::Strategy::parse(given)
        .map(|s| s.to_string())
        .map_err(|e| format!("--scheduler {given}: {e}"))
}

/// The seed of replicate `replicate` of point `point`: a stable mix of the three numbers
/// (SplitMix64 rounds, see [`results::SEED_DERIVATION`]), cut to 53 bits so that every
/// JSON reader (including JavaScript and jq) reads it exactly. The profile is not an input:
/// every profile of a point runs on the same seeds.
pub fn run_seed(base: u64, point: u64, replicate: u64) -> u64 {
    let tag = stable_hash(b"podsim/sweep");
    let h = mix64(base ^ tag);
    let h = mix64(h ^ point);
    mix64(h ^ replicate) >> 11
}

/// Splits `V1,V2,...` at top-level commas (commas inside `{}`, `[]` or quotes belong to
/// the value: `{uniform: {min: 1s, max: 2s}},{fixed: 1s}` is two values).
pub(crate) fn split_values(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut cur = String::new();
    for c in s.chars() {
        match quote {
            Some(q) => {
                if c == q {
                    quote = None;
                }
                cur.push(c);
            }
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    cur.push(c);
                }
                '{' | '[' => {
                    depth += 1;
                    cur.push(c);
                }
                '}' | ']' => {
                    depth -= 1;
                    cur.push(c);
                }
                ',' if depth <= 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
                _ => cur.push(c),
            },
        }
    }
    out.push(cur.trim().to_string());
    out
}

/// `a/b/../c` -> `a/c` (lexically; leading `..` stay), so replay lines read naturally.
fn normalize(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    if out.is_empty() {
        PathBuf::from(".")
    } else {
        out.iter().collect()
    }
}

fn is_sweep_file(path: &Path) -> bool {
    let Ok(text) = scenario::file::read_capped(path, scenario::file::MAX_INPUT_BYTES) else {
        return false;
    };
    scenario::schema::parse(&text)
        .ok()
        .and_then(|root| root.get("kind").and_then(|k| k.scalar_text()))
        .is_some_and(|k| k == "Sweep")
}

fn load_error(e: &scenario::LoadError) -> String {
    let s = e.to_string();
    s.trim_end().to_string()
}

/// The most points x profiles a sweep may have: each is a scenario loaded, validated and
/// held before any run starts (and a cell of the summary).
pub const MAX_CELLS: u64 = 10_000;

/// The most worker threads `--jobs` may ask for (sweep and bisect): far more than any
/// machine has cores; beyond it a typo would start thousands of threads.
pub const MAX_JOBS: usize = 256;

/// `--jobs N` checked against [`MAX_JOBS`].
pub(crate) fn check_jobs(jobs: Option<usize>) -> Result<(), String> {
    match jobs {
        Some(n) if n > MAX_JOBS => Err(format!(
            "--jobs {n}: more than the {MAX_JOBS} worker threads podsim starts"
        )),
        _ => Ok(()),
    }
}

/// Refuses a sweep whose size is over a cap, before the grid is built: points (the product
/// of the axis lengths) x profiles over [`MAX_CELLS`], or runs (points x seeds x
/// profiles, checked arithmetic) over [`results::MAX_RUNS`]. `seeds_flag`: the seeds came
/// from `--seeds` (else from the sweep file's `spec.seeds` or the default).
fn check_size(axes: &[Axis], seeds: u64, profiles: usize, seeds_flag: bool) -> Result<(), Failure> {
    let points = axes
        .iter()
        .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64));
    let cells = points.and_then(|p| p.checked_mul(profiles as u64));
    let grid = || {
        let lens: Vec<String> = axes.iter().map(|a| a.values.len().to_string()).collect();
        if lens.is_empty() {
            "1 point".to_string()
        } else {
            format!("{} points", lens.join(" x "))
        }
    };
    if cells.is_none_or(|c| c > MAX_CELLS) {
        return Err(Failure::Input(format!(
            "the sweep grid has {} x {profiles} profile(s): more than the {MAX_CELLS} points x profiles a sweep may have",
            grid()
        )));
    }
    let runs = cells.and_then(|c| c.checked_mul(seeds));
    if runs.is_none_or(|r| r > results::MAX_RUNS) {
        let flag = if seeds_flag { "--seeds" } else { "spec.seeds" };
        return Err(Failure::Input(format!(
            "{flag} {seeds}: the sweep would have {} runs ({} x {profiles} profile(s) x {seeds} seeds), more than the {} runs a sweep may have",
            runs.map_or("more than 2^64".to_string(), |r| r.to_string()),
            grid(),
            results::MAX_RUNS
        )));
    }
    Ok(())
}

/// `--set PATH=V1,V2` axes: each replaces the sweep file's axis with the same path or adds
/// one. An empty value (`1m,`) is an error naming the `--set` and the value's position.
fn apply_axis_sets(sets: &[String], axes: &mut Vec<Axis>) -> Result<(), Failure> {
    for s in sets {
        let Some((path, values)) = s.split_once('=').filter(|(p, _)| !p.trim().is_empty()) else {
            return Err(Failure::Input(format!(
                "--set {s:?}: expected PATH=VALUE or PATH=V1,V2,..."
            )));
        };
        let path = path.trim().to_string();
        // One spelling whatever the layout: `{fixed:10ms}` is stored as `{fixed: 10ms}`.
        let values: Vec<String> = split_values(values)
            .iter()
            .map(|v| {
                if v.is_empty() {
                    String::new()
                } else {
                    scenario::label::normalize_value(v)
                }
            })
            .collect();
        if let Some(k) = values.iter().position(|v| v.is_empty()) {
            return Err(Failure::Input(format!(
                "--set {s}: value {} of {} is empty (a comma too many?); give each value \
                 between commas, e.g. `--set {path}=V1,V2`, and `null` for the field's default",
                k + 1,
                values.len()
            )));
        }
        match axes.iter_mut().find(|a| a.path == path) {
            Some(a) => a.values = values,
            None => axes.push(Axis { path, values }),
        }
    }
    Ok(())
}

/// Runs this directory holds (a shard's share), without iterating them.
fn runs_here(m: &Manifest) -> u64 {
    match m.shard {
        Some(s) if s.index < m.runs => (m.runs - s.index).div_ceil(s.count),
        Some(_) => 0,
        None => m.runs,
    }
}

/// A sweep ready to run: the manifest and one validated scenario per (point, profile).
pub(crate) struct Plan {
    pub(crate) manifest: Manifest,
    /// Index `point * profiles + profile`.
    pub(crate) scenarios: Vec<Arc<Scenario>>,
    /// Notes found while loading (printed once).
    pub(crate) notes: Vec<String>,
}

/// The `--profile` flags: each a profile, no release twice (`current` and the newest
/// release are one point: naming both is an error).
fn profile_flags(flags: &[String]) -> Result<Vec<String>, Failure> {
    let names = crate::names();
    let mut profiles: Vec<String> = Vec::new();
    for given in flags {
        let p = profile_flag(given).map_err(Failure::Input)?.to_owned();
        let r = names.release(&p);
        if let Some(q) = profiles.iter().find(|q| names.release(q) == r) {
            return Err(Failure::Input(if *q == p {
                format!("--profile {p} is given twice")
            } else {
                format!("--profile {q} and --profile {given} name the same release, {r}")
            }));
        }
        profiles.push(p);
    }
    Ok(profiles)
}

/// Loads the input, builds the grid and validates every (point, profile) scenario.
pub(crate) fn plan(req: &Request) -> Result<Plan, Failure> {
    check_jobs(req.jobs).map_err(Failure::Input)?;
    let scheduler = match &req.scheduler {
        Some(s) => Some(scheduler_flag(s).map_err(Failure::Input)?),
        None => None,
    };
    let mut notes = Vec::new();
    let (name, sweep_file, sweep_hash, scenario_path, base, mut seeds, mut profiles, mut axes) =
        if is_sweep_file(&req.input) {
            let sf = crate::load_sweep(&req.input).map_err(|e| Failure::Input(load_error(&e)))?;
            notes.extend(sf.notes.iter().map(|n| n.to_string()));
            let axes: Vec<Axis> = sf
                .parameters
                .iter()
                .map(|p| Axis {
                    path: p.path.clone(),
                    values: p.values.clone(),
                })
                .collect();
            (
                sf.name.clone(),
                Some(req.input.display().to_string()),
                Some(sf.hash.clone()),
                normalize(&sf.scenario_path),
                sf.scenario,
                sf.seeds,
                sf.profiles.clone(),
                axes,
            )
        } else {
            let l = crate::load(&req.input, &[]).map_err(|e| Failure::Input(load_error(&e)))?;
            notes.extend(l.notes.iter().map(|n| n.to_string()));
            (
                l.scenario.name.clone(),
                None,
                None,
                req.input.clone(),
                l.scenario,
                scenario::defaults::SWEEP_SEEDS,
                Vec::new(),
                Vec::new(),
            )
        };
    if let Some(n) = req.seeds {
        if n == 0 {
            return Err(Failure::Input("--seeds must be at least 1".into()));
        }
        seeds = n;
    }
    if !req.profiles.is_empty() {
        profiles = profile_flags(&req.profiles)?;
    }
    apply_axis_sets(&req.sets, &mut axes)?;
    let profile_override = !profiles.is_empty();
    if !profile_override {
        profiles.push(base.kubelet.profile.clone());
    }
    check_size(&axes, seeds, profiles.len(), req.seeds.is_some())?;
    // The grid: the first axis varies slowest.
    let mut points: Vec<BTreeMap<String, String>> = vec![BTreeMap::new()];
    for a in &axes {
        let mut next = Vec::new();
        for p in &points {
            for v in &a.values {
                let mut q = p.clone();
                q.insert(a.path.clone(), v.clone());
                next.push(q);
            }
        }
        points = next;
    }
    // Checked above: at most MAX_RUNS.
    let runs = points.len() as u64 * seeds * profiles.len() as u64;
    let manifest = Manifest {
        podsim: env!("CARGO_PKG_VERSION").to_string(),
        format: results::FORMAT,
        name,
        sweep_file,
        sweep_hash,
        scenario_file: scenario_path.display().to_string(),
        scenario: base.name.clone(),
        scenario_hash: base.hash.clone(),
        base_seed: base.seed,
        seeds,
        seed_derivation: results::SEED_DERIVATION.to_string(),
        profiles,
        profile_override,
        parameters: axes,
        points: points
            .into_iter()
            .enumerate()
            .map(|(i, parameters)| Point {
                index: i as u64,
                parameters,
            })
            .collect(),
        run_order: results::RUN_ORDER.to_string(),
        runs,
        shard: req.shard,
        expected_findings: base
            .expect
            .iter()
            .flat_map(|e| e.findings.clone())
            .collect(),
        scheduler,
    };
    check_axis_paths(&scenario_path, &manifest.parameters)?;
    // Validate every (point, profile) once, reporting every bad one.
    let mut scenarios = Vec::new();
    let mut errors = Vec::new();
    for p in &manifest.points {
        for prof in &manifest.profiles {
            let overrides = overrides(&manifest, p.index, prof);
            match crate::load(&scenario_path, &overrides) {
                Ok(l) => scenarios.push(Arc::new(l.scenario)),
                Err(e) => errors.push(format!(
                    "sweep point {} ({}), profile {prof}:\n{}",
                    p.index,
                    manifest.point_label(p.index),
                    load_error(&e)
                )),
            }
        }
    }
    if !errors.is_empty() {
        let more = errors.len().saturating_sub(scenario::error::SHOWN_PROBLEMS);
        errors.truncate(scenario::error::SHOWN_PROBLEMS);
        if more > 0 {
            errors.push(format!(
                "... and {more} more sweep points with problems (not shown)"
            ));
        }
        return Err(Failure::Input(errors.join("\n")));
    }
    Ok(Plan {
        manifest,
        scenarios,
        notes,
    })
}

/// An axis whose path names no podsim field (`--set spec.runtime.latencies.stopContaner=...`)
/// is reported once, not once per point.
fn check_axis_paths(scenario: &Path, axes: &[Axis]) -> Result<(), Failure> {
    for a in axes {
        let Some(v) = a.values.first() else { continue };
        let Err(e) = crate::load(scenario, &[(a.path.clone(), v.clone())]) else {
            continue;
        };
        let bad_path = e.problems.iter().find(|p| {
            (p.message.starts_with("unknown field")
                || p.message.starts_with("unknown behaviour switch"))
                && a.path.starts_with(&p.path)
        });
        if let Some(p) = bad_path {
            return Err(Failure::Input(format!(
                "error: --set {}: {}: {}",
                a.path, p.path, p.message
            )));
        }
    }
    Ok(())
}

/// The `--set` overrides of a point under a profile, in the order `podsim run` applies
/// them (sets, then `--profile`), so the replay line loads the identical scenario.
fn overrides(m: &Manifest, point: u64, profile: &str) -> Vec<(String, String)> {
    let p = &m.points[point as usize];
    let mut o: Vec<(String, String)> = m
        .parameters
        .iter()
        .map(|a| (a.path.clone(), p.parameters[&a.path].clone()))
        .collect();
    if m.profile_override {
        o.push(("spec.kubelet.profile".into(), profile.to_string()));
    }
    if let Some(s) = &m.scheduler {
        o.push(("spec.scheduler".into(), s.clone()));
    }
    o
}

/// The replay line of run `index`.
pub fn replay(m: &Manifest, index: u64) -> String {
    let (point, replicate, pi) = m.decode(index);
    let seed = run_seed(m.base_seed, point, replicate);
    let profile = m.profile_override.then(|| m.profiles[pi].clone());
    crate::replay::replay_line_with(
        Path::new(&m.scenario_file),
        seed,
        &m.point_sets(point),
        &profile,
        m.scheduler.as_deref(),
    )
}

/// The `runs.jsonl` row of one run.
pub(crate) fn row(m: &Manifest, index: u64, out: &RunOutput) -> RunRow {
    let (point, replicate, pi) = m.decode(index);
    let mut findings = BTreeMap::new();
    for f in &out.findings {
        *findings.entry(f.invariant.clone()).or_insert(0) += 1;
    }
    let mx = &out.metrics;
    let mut metrics = BTreeMap::new();
    let mut put = |k: &str, v: u64| {
        metrics.insert(k.to_string(), Metric::Value(v));
    };
    put("containerStarts", mx.container_starts.into());
    put("restarts", mx.restarts.into());
    put("killsAtGraceExpiry", mx.kills_at_grace_expiry);
    put(
        "containersRunningAtEnd",
        mx.containers_running_at_end.into(),
    );
    put(
        "containersAliveAtPowerOff",
        mx.containers_alive_at_power_off.into(),
    );
    put(
        "statusesLostAtPowerOff",
        mx.statuses_lost_at_power_off.into(),
    );
    put("evictions", mx.evictions.len() as u64);
    put("kubeletRestarts", mx.kubelet_restarts.into());
    put("events", out.events);
    put("simulatedNs", out.simulated_ns);
    put("nodeReclaims", mx.node_reclaims.len() as u64);
    put("imagesRemoved", mx.images_removed.len() as u64);
    if let Some(e) = mx.evictions.first() {
        put("firstEvictionNs", e.at_ns);
    }
    if let (Some(s), Some(p)) = (mx.node_shutdown_at_ns, mx.power_off_at_ns) {
        put("shutdownToPowerOffNs", p.saturating_sub(s));
    }
    // Per pod, as `run` computes the unnamed lists: deletion request -> containers stopped,
    // and -> object removed. A recreated name gets its UID appended.
    let mut terminated = BTreeMap::new();
    let mut removed = BTreeMap::new();
    for pod in &out.pods {
        let key = if out.pods.iter().filter(|p| p.name == pod.name).count() > 1 {
            format!("{}@{}", pod.name, pod.uid)
        } else {
            pod.name.clone()
        };
        if let Some(d) = pod.deletion_requested_at_ns {
            if let Some(s) = pod.containers_stopped_at_ns {
                terminated.insert(key.clone(), s.saturating_sub(d));
            }
            if let Some(r) = pod.removed_from_api_at_ns {
                removed.insert(key, r.saturating_sub(d));
            }
        }
    }
    metrics.insert("timeToTerminatedNs".into(), Metric::PerPod(terminated));
    metrics.insert("timeToRemovedNs".into(), Metric::PerPod(removed));
    RunRow {
        index,
        point,
        replicate,
        seed: out.seed,
        profile: m.profiles[pi].clone(),
        parameters: m.points[point as usize].parameters.clone(),
        labels: m.point_labels(point),
        findings,
        reached: out.reached.clone(),
        trace_hash: out.trace_hash.clone(),
        stop_reason: out.stop_reason.clone(),
        metrics,
        replay: out.replay.clone(),
        // Filled in when the row is written (`RunRow::line`).
        checksum: String::new(),
    }
}

/// Runs one run of the plan; `Err(replay)` if it panicked.
fn one(plan: &Plan, index: u64) -> Result<RunRow, String> {
    let m = &plan.manifest;
    let (point, replicate, pi) = m.decode(index);
    let sc = plan.scenarios[point as usize * m.profiles.len() + pi].clone();
    let opts = RunOptions {
        seed: run_seed(m.base_seed, point, replicate),
        keep_trace: false,
        replay: replay(m, index),
        no_oracle: false,
        // A row counts findings by invariant; their messages are not kept (the replay
        // line shows them), so no run goes again to quote a history.
        history: crate::run::FindingHistory::Omitted,
    };
    let replay = opts.replay.clone();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(sc, &opts)))
        .map(|out| row(m, index, &out))
        .map_err(|_| replay)
}

/// The default result directory.
pub(crate) fn default_out(m: &Manifest) -> PathBuf {
    let base = Path::new("results").join("bulk").join(&m.name);
    match m.shard {
        Some(s) => base.join(format!("shard-{}-of-{}", s.index, s.count)),
        None => base,
    }
}

fn io(e: impl std::fmt::Display) -> Failure {
    Failure::Input(e.to_string())
}

/// Top-level fields in which two manifests differ.
fn differing_fields(a: &Manifest, b: &Manifest) -> Vec<String> {
    let a = serde_json::to_value(a).unwrap_or_default();
    let b = serde_json::to_value(b).unwrap_or_default();
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return Vec::new();
    };
    let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// Runs a sweep (or one shard of it) to completion, resuming what `out` already holds.
pub(crate) fn sweep(req: &Request) -> Result<Done, Failure> {
    let plan = plan(req)?;
    for n in &plan.notes {
        eprintln!("{n}");
    }
    let m = &plan.manifest;
    let out = req.out.clone().unwrap_or_else(|| default_out(m));
    results::check_out_dir(&out).map_err(io)?;
    std::fs::create_dir_all(&out)
        .map_err(|e| io(format!("cannot create {}: {e}", out.display())))?;
    // Held from here to the caller's last write; released on every error path by its drop.
    let lock = crate::lock::DirLock::acquire(&out).map_err(io)?;
    let manifest_path = out.join(results::MANIFEST);
    let runs_path = out.join(results::RUNS);
    if manifest_path.exists() {
        let old = results::read_manifest(&out).map_err(io)?;
        if &old != m {
            return Err(Failure::Input(format!(
                "{} holds results of a different sweep (manifest differs in: {}); choose another --out or remove the directory",
                out.display(),
                differing_fields(&old, m).join(", ")
            )));
        }
    } else {
        if runs_path.exists() {
            return Err(Failure::Input(format!(
                "{} has a runs.jsonl but no manifest.json; choose another --out or remove the directory",
                out.display()
            )));
        }
        let _ = std::fs::remove_file(out.join(results::SUMMARY));
        results::write_atomic(&manifest_path, results::to_json(m).as_bytes())
            .map_err(|e| io(format!("cannot write {}: {e}", manifest_path.display())))?;
    }
    // Resume: keep the complete lines, drop a line cut short.
    // The resumed runs' findings count on the progress lines too.
    let mut resumed = BTreeMap::new();
    let (done, good_len) = results::scan_runs(m, &runs_path, |_, row| {
        for k in row.findings.keys() {
            *resumed.entry(k.clone()).or_insert(0) += 1;
        }
        Ok(())
    })
    .map_err(io)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&runs_path)
        .map_err(|e| io(format!("cannot open {}: {e}", runs_path.display())))?;
    let len = file.metadata().map_err(io)?.len();
    if len > good_len {
        file.set_len(good_len).map_err(io)?;
        file.sync_data().map_err(io)?;
    }
    let total = runs_here(m);
    let label = match m.shard {
        Some(s) => format!("sweep {} shard {s}", m.name),
        None => format!("sweep {}", m.name),
    };
    let progress = Progress::new(&label, total, done, resumed);
    if done > 0 {
        progress.message(&format!(
            "resuming: {done} of {total} runs already in {}{}",
            out.display(),
            if len > good_len {
                " (dropped a truncated last line)"
            } else {
                ""
            }
        ));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(req.jobs.unwrap_or(0))
        .build()
        .map_err(|e| io(format!("cannot start worker threads: {e}")))?;
    // The indices still to run, produced lazily: only one chunk of them is ever held.
    let mut todo = m.run_indices().skip(done as usize).peekable();
    // Chunks: large enough to keep every thread busy, small enough that an interruption
    // loses little; each is written in index order and made durable before the next.
    // `PODSIM_SWEEP_CHUNK` overrides the size (tests use it to cross chunk boundaries).
    let chunk = std::env::var("PODSIM_SWEEP_CHUNK")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or((pool.current_num_threads() * 32).max(32));
    // A writer thread appends each chunk and fsyncs it while the next chunk runs; the
    // bounded channel keeps at most one finished chunk waiting.
    let (tx, rx) = std::sync::mpsc::sync_channel::<String>(1);
    let (panicked, written) = std::thread::scope(|s| {
        let writer = s.spawn(move || -> std::io::Result<()> {
            for buf in rx {
                results::append_runs(&mut file, &buf)?;
            }
            Ok(())
        });
        let mut panicked = None;
        while todo.peek().is_some() {
            let c: Vec<u64> = todo.by_ref().take(chunk).collect();
            let rows: Vec<Result<RunRow, String>> = pool.install(|| {
                // Nothing shared is written while runs execute: progress is recorded
                // below, once the chunk is in.
                c.par_iter().map(|&i| one(&plan, i)).collect()
            });
            for row in rows.iter().flatten() {
                progress.record(&row.findings);
            }
            let mut buf = String::new();
            for r in rows {
                match r {
                    Ok(row) => buf.push_str(&row.line()),
                    Err(replay) => {
                        panicked = Some(replay);
                        break;
                    }
                }
            }
            // A failed send means the writer stopped on an error, reported below.
            if tx.send(buf).is_err() || panicked.is_some() {
                break;
            }
        }
        drop(tx);
        let written = writer.join().expect("the writer thread does not panic");
        (panicked, written)
    });
    progress.finish();
    written.map_err(|e| io(format!("cannot write {}: {e}", runs_path.display())))?;
    if let Some(replay) = panicked {
        return Err(Failure::Panic { replay });
    }
    let summary = results::write_summary(&out, m).map_err(io)?;
    Ok(Done {
        manifest: plan.manifest.clone(),
        summary,
        out,
        lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_split_at_top_level_commas() {
        assert_eq!(split_values("1s,2s"), vec!["1s", "2s"]);
        assert_eq!(
            split_values("{uniform: {min: 1s, max: 2s}}, {fixed: 1s}"),
            vec!["{uniform: {min: 1s, max: 2s}}", "{fixed: 1s}"]
        );
        assert_eq!(split_values("'a,b',[1, 2]"), vec!["'a,b'", "[1, 2]"]);
        assert_eq!(split_values("3"), vec!["3"]);
    }

    #[test]
    fn paths_normalize() {
        assert_eq!(
            normalize(Path::new("scenarios/sweeps/../shutdown/x.yaml")),
            PathBuf::from("scenarios/shutdown/x.yaml")
        );
        assert_eq!(
            normalize(Path::new("../x.yaml")),
            PathBuf::from("../x.yaml")
        );
    }

    #[test]
    fn seeds_differ_by_point_and_replicate() {
        let mut all = std::collections::BTreeSet::new();
        for p in 0..10 {
            for r in 0..100 {
                let s = run_seed(1, p, r);
                assert!(s < 1 << 53);
                all.insert(s);
            }
        }
        assert_eq!(all.len(), 1000);
    }

    #[test]
    fn fail_on_parsing() {
        let known = ["x", "y"];
        let p = |a: &[&str]| {
            let a: Vec<String> = a.iter().map(|s| s.to_string()).collect();
            FailOn::parse(&a, &known)
        };
        let any = FailOn::Any {
            expected: Vec::new(),
        };
        assert_eq!(p(&[]), Ok(any.clone()));
        assert_eq!(p(&["any"]), Ok(any.clone()));
        assert_eq!(p(&["none"]), Ok(FailOn::Never));
        assert_eq!(p(&["x"]), Ok(FailOn::Invariants(vec!["x".into()])));
        assert_eq!(
            p(&["x,y", "x"]),
            Ok(FailOn::Invariants(vec!["x".into(), "y".into()]))
        );
        assert!(p(&["any,none"]).unwrap_err().contains("cannot be combined"));
        assert!(p(&["x", "none"])
            .unwrap_err()
            .contains("cannot be combined"));
        assert!(p(&["x,"]).unwrap_err().contains("empty"));
        let e = p(&["z"]).unwrap_err();
        assert!(e.contains("unknown invariant") && e.contains("x, y"), "{e}");
        assert!(!FailOn::Never.counts("x"));
        // `any` leaves out what the scenario expects; a named invariant counts anyway.
        let expected = vec!["x".to_string()];
        assert!(!any.clone().expecting(&expected).counts("x"));
        assert!(any.expecting(&expected).counts("y"));
        let named = FailOn::Invariants(vec!["x".into()]).expecting(&expected);
        assert!(named.counts("x"));
    }
}
