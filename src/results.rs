//! Sweep result files: `manifest.json`, `runs.jsonl` and `summary.json` in one result
//! directory, their atomic writing, reading them back (resume, merge), the summary
//! (finding rates with 95 % Wilson intervals, first failing seeds, metric percentiles) and
//! the printed table.
//!
//! Every number in these files comes from the runs alone (no wall clock, no thread count,
//! no completion order), so the same sweep always writes the same bytes: with any `--jobs`,
//! after a resume, or merged from shards. The summary is always computed from the lines of
//! `runs.jsonl`, which is what makes a merged summary byte-identical to an unsharded one.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// Version of the result-file layout (bumped when a field changes meaning). Format 2: every
/// `runs.jsonl` row carries a `checksum`. Format 3: parameter values are spelled as one-line
/// flow YAML whatever their source, rows and cells carry their canonical `labels`, the
/// summary names its `profiles` and `parameters`, and metric percentiles have `min`, `p25`
/// and `p75`.
pub const FORMAT: u32 = 3;

/// The order of runs, recorded in the manifest: run `index` decodes as
/// `profile = index % profiles`, `replicate = (index / profiles) % seeds`,
/// `point = index / (profiles * seeds)`.
pub const RUN_ORDER: &str = "point, replicate, profile (profile varies fastest)";

/// How run seeds are derived, recorded in the manifest (see `sweep::run_seed`).
pub const SEED_DERIVATION: &str =
    "v1: mix64(mix64(mix64(base ^ fnv1a(\"podsim/sweep\")) ^ point) ^ replicate) >> 11";

/// The most runs a sweep may have (all shards together): ten million. The summary keeps
/// one number per run for each metric of its cell (exact percentiles), about 100 bytes a
/// run, so the cap keeps a summary (and a merge) near a gigabyte; at a few thousand runs
/// a second it is already hours of work. Larger sweeps are refused before any run.
pub const MAX_RUNS: u64 = 10_000_000;

pub const MANIFEST: &str = "manifest.json";
pub const RUNS: &str = "runs.jsonl";
pub const SUMMARY: &str = "summary.json";

/// `manifest.json`: what a result directory holds. Two directories with equal manifests
/// (shard aside) hold runs of the same sweep.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub podsim: String,
    pub format: u32,
    /// The sweep's name (`metadata.name` of the sweep file, or of the scenario).
    pub name: String,
    /// The sweep file, when the sweep came from one.
    pub sweep_file: Option<String>,
    pub sweep_hash: Option<String>,
    /// The scenario file as replay lines name it.
    pub scenario_file: String,
    /// The scenario's `metadata.name` and hash (without any override).
    pub scenario: String,
    pub scenario_hash: String,
    pub base_seed: u64,
    /// Replicates per point.
    pub seeds: u64,
    pub seed_derivation: String,
    /// Each point runs under each profile, on the same seeds.
    pub profiles: Vec<String>,
    /// Whether the profile is set by the sweep (replay lines then carry `--profile`), or is
    /// the scenario's own.
    pub profile_override: bool,
    /// The grid axes, in order; every combination of values is a point.
    pub parameters: Vec<Axis>,
    pub points: Vec<Point>,
    pub run_order: String,
    /// Runs of the whole sweep (all shards).
    pub runs: u64,
    /// Present in a shard directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The scenario's `expect.findings` (absent when it expects none): marked `(expected)`
    /// in the table and the JUnit report, and not failing `--fail-on any`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected_findings: Vec<String>,
    /// `--scheduler`, when the sweep set it (every run's `spec.scheduler`; replay lines
    /// carry it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
}

/// One grid axis: an override path and its values (one-line flow YAML, as `--set` takes
/// them; see `scenario::label`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

/// One grid point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub index: u64,
    /// Override path -> value.
    pub parameters: BTreeMap<String, String>,
}

/// `--shard I/N`: this directory holds the runs whose `index % count == index`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let err = || format!("--shard {s:?}: expected I/N with 0 <= I < N (I is 0-based)");
        let (i, n) = s.split_once('/').ok_or_else(err)?;
        let index: u64 = i.trim().parse().map_err(|_| err())?;
        let count: u64 = n.trim().parse().map_err(|_| err())?;
        if count == 0 || index >= count {
            return Err(err());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Manifest {
    /// The run indices this directory holds, in order.
    pub fn run_indices(&self) -> impl Iterator<Item = u64> {
        let (start, step) = self.shard.map_or((0, 1), |s| (s.index, s.count));
        (start..self.runs).step_by(step as usize)
    }

    /// (point, replicate, profile index) of run `index`.
    pub fn decode(&self, index: u64) -> (u64, u64, usize) {
        let np = self.profiles.len() as u64;
        let profile = (index % np) as usize;
        let rest = index / np;
        (rest / self.seeds, rest % self.seeds, profile)
    }

    /// The `--set PATH=VALUE` arguments of a point, in axis order.
    pub fn point_sets(&self, point: u64) -> Vec<String> {
        let p = &self.points[point as usize];
        self.parameters
            .iter()
            .map(|a| {
                let v = p.parameters.get(&a.path).map_or("?", String::as_str);
                format!("{}={v}", a.path)
            })
            .collect()
    }

    /// Path -> canonical label of each value of a point (`fixed 100ms`; see
    /// `scenario::label::value_label`).
    pub fn point_labels(&self, point: u64) -> BTreeMap<String, String> {
        self.points[point as usize]
            .parameters
            .iter()
            .map(|(k, v)| (k.clone(), crate::scenario::label::value_label(v)))
            .collect()
    }

    /// "path=label, path=label" with canonical labels (`...stopContainer=fixed 100ms`), or
    /// "-" for the single point of a grid without axes, for people: control and bidi
    /// characters of a value are escaped (`\u{1b}`).
    pub fn point_label(&self, point: u64) -> String {
        let labels = self.point_labels(point);
        let s: Vec<String> = self
            .parameters
            .iter()
            .map(|a| {
                let v = labels.get(&a.path).map_or("?", String::as_str);
                format!("{}={v}", a.path)
            })
            .collect();
        if s.is_empty() {
            "-".into()
        } else {
            crate::scenario::error::escape_controls(&s.join(", ")).into_owned()
        }
    }

    /// The axes with the canonical label of each value (for the summary).
    pub fn axis_labels(&self) -> Vec<AxisLabels> {
        self.parameters
            .iter()
            .map(|a| AxisLabels {
                path: a.path.clone(),
                values: a.values.clone(),
                labels: a
                    .values
                    .iter()
                    .map(|v| crate::scenario::label::value_label(v))
                    .collect(),
            })
            .collect()
    }

    /// A finding's name in tables: `(expected)` after one the scenario expects.
    pub fn finding_label(&self, invariant: &str) -> String {
        if self.expected_findings.iter().any(|e| e == invariant) {
            format!("{invariant} (expected)")
        } else {
            invariant.to_owned()
        }
    }

    /// The same manifest without the shard (what an unsharded sweep writes).
    pub fn unsharded(&self) -> Manifest {
        Manifest {
            shard: None,
            ..self.clone()
        }
    }
}

/// A metric of one run: a number, or a number per pod.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Metric {
    Value(u64),
    PerPod(BTreeMap<String, u64>),
}

/// One line of `runs.jsonl`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    pub index: u64,
    pub point: u64,
    pub replicate: u64,
    pub seed: u64,
    pub profile: String,
    /// Path -> value, as `--set` takes it.
    pub parameters: BTreeMap<String, String>,
    /// Path -> the value's canonical label (`fixed 100ms`).
    pub labels: BTreeMap<String, String>,
    /// Findings of this run, counted by invariant (empty: a clean run).
    pub findings: BTreeMap<String, u64>,
    /// Reach points the run got into.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reached: Vec<String>,
    pub trace_hash: String,
    pub stop_reason: String,
    pub metrics: BTreeMap<String, Metric>,
    /// The command line that replays this run.
    pub replay: String,
    /// FNV-1a (64 bits, 16 hex digits) of the row's JSON without this field. [`RunRow::line`]
    /// writes it; resume and merge refuse a row whose content no longer gives it.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub checksum: String,
}

impl RunRow {
    /// The checksum of the row's content (every field but `checksum`).
    pub fn content_checksum(&self) -> String {
        let bare = RunRow {
            checksum: String::new(),
            ..self.clone()
        };
        let json = serde_json::to_string(&bare).expect("a run row serializes");
        format!("{:016x}", crate::sim::rng::stable_hash(json.as_bytes()))
    }

    /// The row as one line of JSON (with its newline), its checksum filled in.
    pub fn line(&self) -> String {
        let sealed = RunRow {
            checksum: self.content_checksum(),
            ..self.clone()
        };
        let mut s = serde_json::to_string(&sealed).expect("a run row serializes");
        s.push('\n');
        s
    }

    /// Why the row's checksum does not hold, if it does not.
    pub fn checksum_problem(&self) -> Option<String> {
        if self.checksum.is_empty() {
            return Some("the row has no checksum".into());
        }
        let want = self.content_checksum();
        (self.checksum != want).then(|| {
            format!(
                "checksum mismatch: the row says {} but its content gives {want}, so it was edited or damaged",
                self.checksum
            )
        })
    }
}

/// Nearest-rank percentiles (and the mean) of a metric over the runs of a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    /// Runs that have the metric (per-pod metrics exist only where that pod was deleted).
    pub n: u64,
    /// Rounded to 6 decimals.
    pub mean: f64,
    pub min: u64,
    pub p25: u64,
    pub p50: u64,
    pub p75: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

/// The first failing run of a cell (lowest replicate).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstFailing {
    pub seed: u64,
    pub replicate: u64,
    pub replay: String,
}

/// How often a finding (or any finding) showed in a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    /// Runs that reported it.
    pub runs: u64,
    /// `runs / cell runs`, rounded to 6 decimals.
    pub rate: f64,
    /// 95 % Wilson score interval of the rate, rounded to 6 decimals.
    pub ci95: [f64; 2],
    pub first_failing: Option<FirstFailing>,
}

/// One point x profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cell {
    pub point: u64,
    pub profile: String,
    /// Path -> value, as `--set` takes it.
    pub parameters: BTreeMap<String, String>,
    /// Path -> the value's canonical label (`fixed 100ms`), for tables and plots.
    pub labels: BTreeMap<String, String>,
    pub runs: u64,
    /// Runs with at least one finding.
    pub any_finding: Rate,
    /// By invariant name.
    pub findings: BTreeMap<String, Rate>,
    /// By metric name; a per-pod metric is `name/pod`.
    pub metrics: BTreeMap<String, Percentiles>,
    /// Runs that got into each reach point, by point name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub reached: BTreeMap<String, u64>,
}

/// `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub podsim: String,
    pub name: String,
    /// Runs summarised (a shard's share, or the whole sweep).
    pub runs: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<Shard>,
    /// The profiles, in the sweep's order.
    pub profiles: Vec<String>,
    /// The grid axes in order, each value with its label (values in the sweep's order).
    pub parameters: Vec<AxisLabels>,
    /// One per point x profile (point-major, profiles in order).
    pub cells: Vec<Cell>,
}

/// A grid axis in `summary.json`: its values (as `--set` takes them) and their labels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AxisLabels {
    pub path: String,
    pub values: Vec<String>,
    pub labels: Vec<String>,
}

impl Summary {
    /// Runs with any finding, by invariant, over all cells.
    pub fn totals(&self) -> (u64, BTreeMap<String, u64>) {
        let mut any = 0;
        let mut by = BTreeMap::new();
        for c in &self.cells {
            any += c.any_finding.runs;
            for (k, r) in &c.findings {
                *by.entry(k.clone()).or_insert(0) += r.runs;
            }
        }
        (any, by)
    }
}

/// The 95 % Wilson score interval for `k` successes in `n` trials.
pub fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    const Z: f64 = 1.959_963_984_540_054;
    let nf = n as f64;
    let p = k as f64 / nf;
    let z2 = Z * Z;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = Z * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt() / denom;
    let lo = if k == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let hi = if k == n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (lo, hi)
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// Nearest-rank percentile (`p` in percent) of sorted values.
pub(crate) fn percentile(sorted: &[u64], p: u64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let n = sorted.len() as u64;
    let rank = (p * n).div_ceil(100).max(1);
    sorted[(rank - 1) as usize]
}

#[derive(Default)]
struct CellAcc {
    runs: u64,
    any: (u64, Option<FirstFailing>),
    by: BTreeMap<String, (u64, Option<FirstFailing>)>,
    metrics: BTreeMap<String, Vec<u64>>,
    reached: BTreeMap<String, u64>,
}

fn rate(runs: u64, (k, first): (u64, Option<FirstFailing>)) -> Rate {
    let (lo, hi) = wilson(k, runs);
    Rate {
        runs: k,
        rate: if runs == 0 {
            0.0
        } else {
            round6(k as f64 / runs as f64)
        },
        ci95: [round6(lo), round6(hi)],
        first_failing: first,
    }
}

/// Accumulates rows (in index order) into a [`Summary`] without keeping them.
pub struct SummaryBuilder<'m> {
    m: &'m Manifest,
    acc: Vec<CellAcc>,
    total: u64,
}

impl<'m> SummaryBuilder<'m> {
    pub fn new(m: &'m Manifest) -> SummaryBuilder<'m> {
        SummaryBuilder {
            m,
            acc: (0..m.points.len() * m.profiles.len())
                .map(|_| CellAcc::default())
                .collect(),
            total: 0,
        }
    }

    pub fn add(&mut self, r: &RunRow) {
        let np = self.m.profiles.len();
        self.total += 1;
        let pi = self
            .m
            .profiles
            .iter()
            .position(|p| *p == r.profile)
            .unwrap_or(0);
        let c = &mut self.acc[r.point as usize * np + pi];
        c.runs += 1;
        let first = || FirstFailing {
            seed: r.seed,
            replicate: r.replicate,
            replay: r.replay.clone(),
        };
        if !r.findings.is_empty() {
            c.any.0 += 1;
            c.any.1.get_or_insert_with(first);
        }
        for inv in r.findings.keys() {
            let e = c.by.entry(inv.clone()).or_default();
            e.0 += 1;
            e.1.get_or_insert_with(first);
        }
        for p in &r.reached {
            *c.reached.entry(p.clone()).or_default() += 1;
        }
        for (k, v) in &r.metrics {
            match v {
                Metric::Value(x) => c.metrics.entry(k.clone()).or_default().push(*x),
                Metric::PerPod(pods) => {
                    for (pod, x) in pods {
                        c.metrics.entry(format!("{k}/{pod}")).or_default().push(*x);
                    }
                }
            }
        }
    }

    pub fn finish(self) -> Summary {
        let m = self.m;
        let np = m.profiles.len();
        let mut cells = Vec::new();
        for (i, c) in self.acc.into_iter().enumerate() {
            let point = (i / np) as u64;
            let runs = c.runs;
            cells.push(Cell {
                point,
                profile: m.profiles[i % np].clone(),
                parameters: m.points[point as usize].parameters.clone(),
                labels: m.point_labels(point),
                runs,
                any_finding: rate(runs, c.any),
                findings: c.by.into_iter().map(|(k, v)| (k, rate(runs, v))).collect(),
                reached: c.reached,
                metrics: c
                    .metrics
                    .into_iter()
                    .map(|(k, mut v)| {
                        v.sort_unstable();
                        let sum: u128 = v.iter().map(|x| u128::from(*x)).sum();
                        let p = Percentiles {
                            n: v.len() as u64,
                            mean: round6(sum as f64 / v.len().max(1) as f64),
                            min: v.first().copied().unwrap_or(0),
                            p25: percentile(&v, 25),
                            p50: percentile(&v, 50),
                            p75: percentile(&v, 75),
                            p90: percentile(&v, 90),
                            p99: percentile(&v, 99),
                            max: v.last().copied().unwrap_or(0),
                        };
                        (k, p)
                    })
                    .collect(),
            });
        }
        Summary {
            podsim: m.podsim.clone(),
            name: m.name.clone(),
            runs: self.total,
            shard: m.shard,
            profiles: m.profiles.clone(),
            parameters: m.axis_labels(),
            cells,
        }
    }
}

/// The table printed at the end of a sweep or merge (in its own module).
pub(crate) use crate::sweep_table::table;

// ---- files ---------------------------------------------------------------------------

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsync, rename (a
/// device, FIFO or symbolic link is not replaced: see [`crate::outfile`]).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::outfile::write_bytes(path, bytes)
}

/// Whether a directory entry is one podsim leaves while it writes: the lock, a stale lock
/// moved aside, a temporary `.name.tmp-<pid>` file.
fn is_podsim_leftover(name: &str) -> bool {
    name == crate::lock::LOCK
        || name.starts_with(".lock.stale-")
        || (name.starts_with('.') && name.contains(".tmp-"))
}

/// Checks that `dir` may be written as a result directory: it does not exist, is empty
/// (but for podsim's own leftovers), or holds podsim's manifest. Anything else is refused
/// before anything is written into it: a result directory's files are created, replaced
/// and truncated, and must not land among someone else's files (`--out /`).
pub(crate) fn check_out_dir(dir: &Path) -> Result<(), String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) if dir.exists() && !dir.is_dir() => {
            return Err(format!(
                "{} is not a directory ({e}); choose a new or empty directory for --out",
                dir.display()
            ))
        }
        Err(e) => return Err(format!("cannot read {}: {e}", dir.display())),
    };
    let mut names: Vec<String> = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().to_string();
        if !is_podsim_leftover(&name) {
            names.push(name);
        }
    }
    if names.is_empty() {
        return Ok(());
    }
    if names.iter().any(|n| n == MANIFEST) {
        // A manifest that is not podsim's is refused by the reader, with its reason.
        return read_manifest(dir).map(|_| ());
    }
    if names.iter().any(|n| n == RUNS) {
        return Err(format!(
            "{} has a runs.jsonl but no manifest.json; choose another --out or remove the directory",
            dir.display()
        ));
    }
    names.sort();
    let shown: Vec<&str> = names.iter().take(3).map(String::as_str).collect();
    let more = names.len().saturating_sub(shown.len());
    Err(format!(
        "{} is not empty and is not a podsim result directory: it has no {MANIFEST} and holds {}{}; choose a new or empty directory for --out",
        dir.display(),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    ))
}

/// Pretty JSON with a final newline.
pub(crate) fn to_json<T: Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string_pretty(v).expect("result files serialize");
    s.push('\n');
    s
}

pub(crate) fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let p = dir.join(MANIFEST);
    let text = crate::scenario::file::read_capped(&p, crate::scenario::file::MAX_RESULT_FILE_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    let m: Manifest = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a podsim manifest: {e}", p.display()))?;
    if m.format != FORMAT {
        return Err(format!(
            "{}: result format {}, but this podsim reads and writes format {FORMAT} (parameter labels beside the values, run rows with checksums); this directory cannot be resumed or merged: run its sweep again into a new directory",
            p.display(),
            m.format
        ));
    }
    m.check()
        .map_err(|e| format!("{}: inconsistent manifest: {e}", p.display()))?;
    Ok(m)
}

impl Manifest {
    /// The counts agree with each other (a manifest read from disk may have been edited).
    pub fn check(&self) -> Result<(), String> {
        if self.profiles.is_empty() || self.seeds == 0 || self.points.is_empty() {
            return Err("no profiles, seeds or points".into());
        }
        let runs = (self.points.len() as u64)
            .checked_mul(self.seeds)
            .and_then(|x| x.checked_mul(self.profiles.len() as u64));
        if self.runs > MAX_RUNS {
            return Err(format!(
                "runs is {}, more than the {MAX_RUNS} runs a sweep may have",
                self.runs
            ));
        }
        if runs != Some(self.runs) {
            return Err(format!(
                "runs is {}, not points x seeds x profiles",
                self.runs
            ));
        }
        for (i, p) in self.points.iter().enumerate() {
            if p.index != i as u64
                || self
                    .parameters
                    .iter()
                    .any(|a| !p.parameters.contains_key(&a.path))
            {
                return Err(format!("point {i} does not match the parameters"));
            }
        }
        if let Some(sh) = self.shard {
            if sh.count == 0 || sh.index >= sh.count {
                return Err(format!("bad shard {sh}"));
            }
        }
        Ok(())
    }
}

/// Reads the complete lines of `runs.jsonl` one by one, checking that they are exactly
/// the first runs of this directory in order, and hands each (raw line with its newline,
/// parsed row) to `f`. A last line without its newline (a write cut short) is not
/// complete and is skipped. Returns (complete rows, their length in bytes); a missing file
/// has none. A line that does not parse, fails its checksum, or holds the wrong run is an
/// error naming the file and line.
pub(crate) fn scan_runs(
    m: &Manifest,
    path: &Path,
    mut f: impl FnMut(&str, RunRow) -> Result<(), String>,
) -> Result<(u64, u64), String> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0)),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let mut r = std::io::BufReader::new(file);
    let mut expected = m.run_indices();
    let mut count = 0u64;
    let mut good_len = 0u64;
    let mut line = String::new();
    loop {
        line.clear();
        let n = r
            .read_line(&mut line)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if n == 0 || !line.ends_with('\n') {
            break;
        }
        let lineno = count + 1;
        let row: RunRow = serde_json::from_str(&line)
            .map_err(|e| format!("{}:{lineno}: not a run row: {e}", path.display()))?;
        if let Some(why) = row.checksum_problem() {
            return Err(format!(
                "{}:{lineno}: run {}: {why}; remove this line and the ones after it to run them again, or remove the directory",
                path.display(),
                row.index
            ));
        }
        let Some(want) = expected.next() else {
            return Err(format!(
                "{}:{lineno}: more runs than the {} this directory holds",
                path.display(),
                m.run_indices().count()
            ));
        };
        let (point, replicate, pi) = m.decode(want);
        if row.index != want
            || row.point != point
            || row.replicate != replicate
            || row.profile != m.profiles[pi]
        {
            return Err(format!(
                "{}:{lineno}: run index {} where run {want} was expected (the file is not this sweep's, or was edited)",
                path.display(),
                row.index
            ));
        }
        good_len += n as u64;
        count += 1;
        f(&line, row)?;
    }
    Ok((count, good_len))
}

/// Appends complete lines to `runs.jsonl` and makes them durable.
pub(crate) fn append_runs(f: &mut std::fs::File, lines: &str) -> std::io::Result<()> {
    f.write_all(lines.as_bytes())?;
    f.sync_data()
}

/// Writes `summary.json` from the rows of this directory (streamed from `runs.jsonl`).
pub(crate) fn write_summary(dir: &Path, m: &Manifest) -> Result<Summary, String> {
    let mut b = SummaryBuilder::new(m);
    scan_runs(m, &dir.join(RUNS), |_, row| {
        b.add(&row);
        Ok(())
    })?;
    let s = b.finish();
    write_atomic(&dir.join(SUMMARY), to_json(&s).as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", dir.join(SUMMARY).display()))?;
    Ok(s)
}

/// A merged result directory, with its lock (held until the caller is done with it).
#[derive(Debug)]
pub(crate) struct Merged {
    pub(crate) manifest: Manifest,
    pub(crate) summary: Summary,
    pub(crate) lock: crate::lock::DirLock,
}

/// `podsim merge`: combines shard directories into what the unsharded sweep writes.
pub(crate) fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged, String> {
    let mut shards: Vec<(PathBuf, Manifest)> = Vec::new();
    for d in dirs {
        shards.push((d.clone(), read_manifest(d)?));
    }
    let Some((first_dir, first)) = shards.first().cloned() else {
        return Err("merge: no directories given".into());
    };
    let base = first.unsharded();
    let count = first.shard.map_or(1, |s| s.count);
    let mut by_index: BTreeMap<u64, (PathBuf, Manifest)> = BTreeMap::new();
    for (d, m) in shards {
        if m.unsharded() != base {
            return Err(format!(
                "{} and {} hold different sweeps (their manifests differ beyond the shard)",
                first_dir.display(),
                d.display()
            ));
        }
        let (i, n) = m.shard.map_or((0, 1), |s| (s.index, s.count));
        if n != count {
            return Err(format!(
                "{} is shard {i}/{n}, but {} is one of {count} shards",
                d.display(),
                first_dir.display()
            ));
        }
        if let Some((prev, _)) = by_index.get(&i) {
            return Err(format!(
                "shard {i}/{n} given twice: {} and {}",
                prev.display(),
                d.display()
            ));
        }
        by_index.insert(i, (d, m));
    }
    let missing: Vec<String> = (0..count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!("missing shard(s): {}", missing.join(", ")));
    }
    // Every shard must be complete and hold exactly its runs.
    for (i, (d, m)) in &by_index {
        let (n, _) = scan_runs(m, &d.join(RUNS), |_, _| Ok(()))?;
        let want = m.run_indices().count() as u64;
        if n != want {
            return Err(format!(
                "shard {i}/{count} in {} is incomplete: {n} of {want} runs (run its sweep command again to finish it)",
                d.display()
            ));
        }
    }
    check_out_dir(out)?;
    if let Ok(existing) = read_manifest(out) {
        if existing != base {
            return Err(format!(
                "{} holds results of a different sweep; choose another --out or remove it",
                out.display()
            ));
        }
    }
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    let lock = crate::lock::DirLock::acquire(out)?;
    write_atomic(&out.join(MANIFEST), to_json(&base).as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.join(MANIFEST).display()))?;
    // Interleave, streaming: run r is the next line of shard r % count.
    let runs_path = out.join(RUNS);
    let mut readers = Vec::new();
    for (d, _) in by_index.values() {
        let p = d.join(RUNS);
        let f = std::fs::File::open(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        readers.push(std::io::BufReader::new(f));
    }
    crate::outfile::write_with(&runs_path, |w| {
        let mut line = String::new();
        for r in 0..base.runs {
            line.clear();
            readers[(r % count) as usize].read_line(&mut line)?;
            w.write_all(line.as_bytes())?;
        }
        Ok(())
    })
    .map_err(|e| format!("cannot write {}: {e}", runs_path.display()))?;
    let summary = write_summary(out, &base)?;
    Ok(Merged {
        manifest: base,
        summary,
        lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_known_values() {
        let close = |a: (f64, f64), b: (f64, f64)| {
            assert!(
                (a.0 - b.0).abs() < 5e-5 && (a.1 - b.1).abs() < 5e-5,
                "{a:?} vs {b:?}"
            );
        };
        close(wilson(0, 10), (0.0, 0.2775));
        close(wilson(5, 10), (0.2366, 0.7634));
        close(wilson(10, 10), (0.7225, 1.0));
        // Newcombe (1998), example: 81 of 263.
        close(wilson(81, 263), (0.2553, 0.3662));
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50), 50);
        assert_eq!(percentile(&v, 90), 90);
        assert_eq!(percentile(&v, 99), 99);
        assert_eq!(percentile(&[7], 99), 7);
        assert_eq!(percentile(&[1, 2, 3], 50), 2);
    }

    #[test]
    fn shard_parse() {
        assert_eq!(Shard::parse("0/3"), Ok(Shard { index: 0, count: 3 }));
        assert!(Shard::parse("3/3").is_err());
        assert!(Shard::parse("1/0").is_err());
        assert!(Shard::parse("x").is_err());
    }
}
