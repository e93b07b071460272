//! `podsim plot DIR`: plots of a sweep result directory, from `DIR/summary.json` only (the
//! schema is at the top of `src/plot/mod.rs`). The reader is tolerant: whatever is missing
//! or malformed skips the plot that needs it, with a note.

use super::{e, fmt_secs, font, write_figure, Figure, PALETTE};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The histogram metrics: (key in `metrics`, file stem, title).
pub(crate) const METRICS: [(&str, &str, &str); 2] = [
    (
        "timeToTerminatedNs",
        "time-to-terminated",
        "time from deletion request to all containers stopped",
    ),
    (
        "timeToRemovedNs",
        "time-to-removed",
        "time from deletion request to removal from the API",
    ),
];

/// What `plot_dir` did.
#[derive(Debug, Default)]
pub(crate) struct PlotReport {
    pub(crate) written: Vec<PathBuf>,
    pub(crate) notes: Vec<String>,
}

/// One invariant's count at a point: runs with the finding (k), `rate`, `ci95`.
#[derive(Debug, Clone, Copy)]
struct Count {
    k: Option<u64>,
    rate: Option<f64>,
    ci95: Option<(f64, f64)>,
}

/// One point of the summary, as far as it could be read.
#[derive(Debug, Clone)]
struct Point {
    /// The point index (`cells[].point` in a sweep's summary), if given.
    index: Option<u64>,
    parameters: BTreeMap<String, String>,
    profile: String,
    runs: Option<u64>,
    findings: BTreeMap<String, Count>,
    metrics: BTreeMap<String, Value>,
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn read_points(summary: &Value, notes: &mut Vec<String>) -> Option<Vec<Point>> {
    // `podsim sweep` writes `cells`; `points` is accepted too.
    let Some(points) = summary
        .get("points")
        .or_else(|| summary.get("cells"))
        .and_then(Value::as_array)
    else {
        notes.push("summary.json has no \"cells\" (or \"points\") array: nothing to plot".into());
        return None;
    };
    let mut out = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let Some(obj) = p.as_object() else {
            notes.push(format!("points[{i}] is not an object: skipped"));
            continue;
        };
        let mut parameters = BTreeMap::new();
        if let Some(ps) = obj.get("parameters").and_then(Value::as_object) {
            for (k, v) in ps {
                match scalar(v) {
                    Some(s) => {
                        parameters.insert(k.clone(), s);
                    }
                    None => notes.push(format!(
                        "points[{i}].parameters.{k} is not a string or number: ignored"
                    )),
                }
            }
        }
        let mut findings = BTreeMap::new();
        // The sweep's "any finding" count is plotted as the pseudo-invariant `any`.
        let any = obj.get("anyFinding").map(|a| ("any".to_string(), a));
        if let Some(fs) = obj.get("findings").and_then(Value::as_object) {
            for (inv, f) in fs.iter().map(|(k, v)| (k.clone(), v)).chain(any) {
                let k = f.get("runs").and_then(Value::as_u64);
                let rate = f.get("rate").and_then(Value::as_f64);
                let ci = f.get("ci95").and_then(Value::as_array).and_then(|a| {
                    match (
                        a.first().and_then(Value::as_f64),
                        a.get(1).and_then(Value::as_f64),
                    ) {
                        (Some(lo), Some(hi)) => Some((lo, hi)),
                        _ => None,
                    }
                });
                findings.insert(inv, Count { k, rate, ci95: ci });
            }
        }
        out.push(Point {
            index: obj.get("point").and_then(Value::as_u64),
            parameters,
            profile: obj
                .get("profile")
                .and_then(Value::as_str)
                .unwrap_or("(none)")
                .to_string(),
            runs: obj.get("runs").and_then(Value::as_u64),
            findings,
            metrics: obj
                .get("metrics")
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .unwrap_or_default(),
        });
    }
    Some(out)
}

/// The most samples one histogram of per-pod times is drawn from.
const MAX_HISTOGRAM_SAMPLES: usize = 1_000_000;

/// `podsim sweep` keeps only percentiles of per-pod times in `summary.json`; the samples the
/// histograms need are in `runs.jsonl` (`metrics.timeToTerminatedNs` / `timeToRemovedNs`,
/// each `{pod: ns}`). Gather them per (point, profile) where the summary has no raw arrays.
/// `runs.jsonl` grows with the run count, so it is read line by line, and each histogram
/// keeps at most [`MAX_HISTOGRAM_SAMPLES`] samples (the first ones, in run order).
fn samples_from_runs(dir: &Path, points: &mut [Point]) {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(dir.join("runs.jsonl")) else {
        return;
    };
    let mut extra: BTreeMap<(u64, String, &str), Vec<Value>> = BTreeMap::new();
    for line in std::io::BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        let Ok(row) = serde_json::from_str::<Value>(&line) else {
            continue; // a truncated last line of an interrupted sweep
        };
        let (Some(point), Some(profile)) = (
            row.get("point").and_then(Value::as_u64),
            row.get("profile").and_then(Value::as_str),
        ) else {
            continue;
        };
        for key in ["timeToTerminatedNs", "timeToRemovedNs"] {
            if let Some(m) = row
                .pointer(&format!("/metrics/{key}"))
                .and_then(Value::as_object)
            {
                let v = extra.entry((point, profile.to_string(), key)).or_default();
                let room = MAX_HISTOGRAM_SAMPLES.saturating_sub(v.len());
                v.extend(m.values().take(room).cloned());
            }
        }
    }
    for p in points.iter_mut() {
        let Some(i) = p.index else { continue };
        for key in ["timeToTerminatedNs", "timeToRemovedNs"] {
            if p.metrics.get(key).is_some_and(Value::is_array) {
                continue;
            }
            if let Some(v) = extra.remove(&(i, p.profile.clone(), key)) {
                p.metrics.insert(key.to_string(), Value::Array(v));
            }
        }
    }
}

/// A parameter value as a number: plain numbers as they are, Go-style durations
/// (`1m30s`, `500ms`, `2s`) in seconds. `(value, is_duration)`.
pub(crate) fn parse_value(s: &str) -> Option<(f64, bool)> {
    let t = s.trim();
    if let Ok(v) = t.parse::<f64>() {
        return v.is_finite().then_some((v, false));
    }
    let (total, durations) = parse_duration(t)?;
    // `1e300h` is a finite number of hours but not of seconds.
    total.is_finite().then_some((total, durations))
}

/// `1m30s` in seconds (see [`parse_value`]).
fn parse_duration(t: &str) -> Option<(f64, bool)> {
    let mut rest = t;
    let mut total = 0.0;
    let mut any = false;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if n == 0 {
            return None;
        }
        let num: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let mul = match &rest[..u] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return None,
        };
        rest = &rest[u..];
        total += num * mul;
        any = true;
    }
    any.then_some((total, true))
}

/// The 95 % Wilson score interval of k successes in n trials.
pub(crate) fn wilson(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let n_f = n as f64;
    let p = k as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let center = (p + z2 / (2.0 * n_f)) / denom;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    // At k = 0 (k = n) the bound is exactly 0 (1); rounding would leave a speck.
    let lo = if k == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let hi = if k >= n {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (lo, hi)
}

/// The longest slug: two of them, the `rate--` frame, an extension and the temporary-file
/// decoration stay far below the 255-byte file-name limit of common file systems.
const MAX_SLUG: usize = 64;

/// A file-name-safe form of a parameter path or invariant name: ASCII letters, digits and
/// `-`. A long one is cut and ends in a hash of the whole name, so distinct names keep
/// distinct files.
pub(crate) fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-');
    if out.len() <= MAX_SLUG {
        return out.to_string();
    }
    let hash = crate::sim::rng::stable_hash(s.as_bytes()) as u32;
    format!("{}-{hash:08x}", out[..MAX_SLUG - 9].trim_end_matches('-'))
}

/// The x axis of a rate plot.
#[derive(Debug, Clone)]
enum Axis {
    /// Numeric values (seconds when `durations`).
    Numeric { durations: bool },
    /// Categories, in this order.
    Categories(Vec<String>),
}

/// One line of a rate plot: a profile's (x, rate, lo, hi) in x order.
#[derive(Debug, Clone)]
struct RateLine {
    profile: String,
    points: Vec<(f64, f64, f64, f64)>,
}

struct RateFigure {
    parameter: String,
    invariant: String,
    axis: Axis,
    lines: Vec<RateLine>,
}

struct HistFigure {
    title: String,
    /// Bin edges in ns: bin i is [lo + i*width, lo + (i+1)*width).
    lo: u64,
    width: u64,
    /// Per profile, counts per bin.
    counts: Vec<(String, Vec<u64>)>,
}

/// Plot `dir`'s summary into `dir/plots/`.
pub(crate) fn plot_dir(dir: &Path) -> Result<PlotReport, String> {
    let path = dir.join("summary.json");
    let text =
        crate::scenario::file::read_capped(&path, crate::scenario::file::MAX_RESULT_FILE_BYTES)
            .map_err(|err| format!("{}: {err}", path.display()))?;
    let summary: Value =
        serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    let mut rep = PlotReport::default();
    let Some(mut points) = read_points(&summary, &mut rep.notes) else {
        return Ok(rep);
    };
    samples_from_runs(dir, &mut points);
    let out_dir = dir.join("plots");
    std::fs::create_dir_all(&out_dir).map_err(|err| format!("{}: {err}", out_dir.display()))?;
    let mut write = |stem: &str, fig: &dyn Fn(&Path) -> Result<(), String>| {
        for ext in ["svg", "png"] {
            let p = out_dir.join(format!("{stem}.{ext}"));
            fig(&p)?;
            rep.written.push(p);
        }
        Ok::<(), String>(())
    };

    let mut notes = Vec::new();
    for fig in rate_figures(&points, &mut notes) {
        let stem = format!("rate--{}--{}", slug(&fig.parameter), slug(&fig.invariant));
        write(&stem, &|p| write_figure(&fig, p))?;
    }
    for (key, stem, title) in METRICS {
        if let Some(fig) = hist_figure(&points, key, title, &mut notes) {
            write(stem, &|p| write_figure(&fig, p))?;
        }
    }
    rep.notes.extend(notes);
    Ok(rep)
}

fn rate_figures(points: &[Point], notes: &mut Vec<String>) -> Vec<RateFigure> {
    let params: BTreeSet<&String> = points.iter().flat_map(|p| p.parameters.keys()).collect();
    let invariants: BTreeSet<&String> = points.iter().flat_map(|p| p.findings.keys()).collect();
    if params.is_empty() {
        notes.push("no point has \"parameters\": no finding-rate plots".into());
        return Vec::new();
    }
    if invariants.is_empty() {
        notes.push("no point has \"findings\": no finding-rate plots".into());
        return Vec::new();
    }
    let mut figs = Vec::new();
    for param in &params {
        let values: BTreeSet<&String> = points
            .iter()
            .filter_map(|p| p.parameters.get(*param))
            .collect();
        let parsed: Vec<Option<(f64, bool)>> = values.iter().map(|v| parse_value(v)).collect();
        let axis = if parsed.iter().all(Option::is_some) {
            Axis::Numeric {
                durations: parsed.iter().flatten().any(|(_, d)| *d),
            }
        } else {
            Axis::Categories(values.iter().map(|s| s.to_string()).collect())
        };
        let x_of = |v: &str| -> f64 {
            match &axis {
                Axis::Numeric { .. } => parse_value(v).map_or(0.0, |x| x.0),
                Axis::Categories(c) => c.iter().position(|s| s == v).unwrap_or(0) as f64,
            }
        };
        for inv in &invariants {
            // (profile, x as string) -> pooled points
            let mut groups: BTreeMap<(String, String), Vec<&Point>> = BTreeMap::new();
            for p in points {
                if let (Some(v), true) = (p.parameters.get(*param), p.findings.contains_key(*inv)) {
                    groups
                        .entry((p.profile.clone(), v.clone()))
                        .or_default()
                        .push(p);
                }
            }
            let mut lines: BTreeMap<String, Vec<(f64, f64, f64, f64)>> = BTreeMap::new();
            let mut skipped = 0;
            for ((profile, v), ps) in &groups {
                match pooled_rate(ps, inv) {
                    Some((r, lo, hi)) => {
                        lines
                            .entry(profile.clone())
                            .or_default()
                            .push((x_of(v), r, lo, hi))
                    }
                    None => skipped += 1,
                }
            }
            if skipped > 0 {
                notes.push(format!(
                    "{param} / {inv}: {skipped} point(s) without \"runs\" or a rate: left out"
                ));
            }
            if lines.is_empty() {
                continue;
            }
            let lines = lines
                .into_iter()
                .map(|(profile, mut pts)| {
                    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                    RateLine {
                        profile,
                        points: pts,
                    }
                })
                .collect();
            figs.push(RateFigure {
                parameter: param.to_string(),
                invariant: inv.to_string(),
                axis: axis.clone(),
                lines,
            });
        }
    }
    figs
}

/// (rate, lo, hi) of `inv` over the pooled points.
fn pooled_rate(ps: &[&Point], inv: &str) -> Option<(f64, f64, f64)> {
    if let [p] = ps {
        let c = p.findings.get(inv)?;
        let rate = match (c.rate, c.k, p.runs) {
            (Some(r), _, _) => Some(r),
            (None, Some(k), Some(n)) if n > 0 => Some(k as f64 / n as f64),
            _ => None,
        };
        if let (Some(r), Some((lo, hi))) = (rate, c.ci95) {
            return Some((r, lo, hi));
        }
    }
    let mut k_sum = 0u64;
    let mut n_sum = 0u64;
    for p in ps {
        let n = p.runs?;
        let c = p.findings.get(inv)?;
        let k = match (c.k, c.rate) {
            (Some(k), _) => k,
            (None, Some(r)) => (r * n as f64).round() as u64,
            (None, None) => return None,
        };
        k_sum += k;
        n_sum += n;
    }
    if n_sum == 0 {
        return None;
    }
    let (lo, hi) = wilson(k_sum, n_sum);
    Some((k_sum as f64 / n_sum as f64, lo, hi))
}

fn hist_figure(
    points: &[Point],
    key: &str,
    title: &str,
    notes: &mut Vec<String>,
) -> Option<HistFigure> {
    let mut per_profile: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut bad = 0;
    let mut missing = 0;
    for p in points {
        match p.metrics.get(key) {
            None => missing += 1,
            Some(Value::Array(a)) => {
                let vals: Option<Vec<u64>> = a.iter().map(Value::as_u64).collect();
                match vals {
                    Some(v) => per_profile.entry(p.profile.clone()).or_default().extend(v),
                    None => bad += 1,
                }
            }
            Some(_) => bad += 1,
        }
    }
    if bad > 0 {
        notes.push(format!(
            "metrics.{key}: {bad} point(s) without an array of integer nanoseconds: left out"
        ));
    }
    let all: Vec<u64> = per_profile.values().flatten().copied().collect();
    if all.is_empty() {
        notes.push(format!(
            "metrics.{key}: no samples ({missing} point(s) without it): no histogram"
        ));
        return None;
    }
    let lo = *all.iter().min()?;
    let hi = *all.iter().max()?;
    let bins = ((all.len() as f64).sqrt().ceil() as u64).clamp(1, 30);
    let width = ((hi - lo) / bins + 1).max(1);
    let nbins = ((hi - lo) / width + 1) as usize;
    let counts = per_profile
        .into_iter()
        .map(|(profile, vals)| {
            let mut c = vec![0u64; nbins];
            for v in vals {
                c[((v - lo) / width) as usize] += 1;
            }
            (profile, c)
        })
        .collect();
    Some(HistFigure {
        title: title.to_string(),
        lo,
        width,
        counts,
    })
}

const W: u32 = 960;
const H: u32 = 560;

fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    profiles: &[&str],
    at: (i32, i32),
) -> Result<(), String> {
    let (mut x, y) = at;
    for (i, p) in profiles.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        e(area.draw(&Rectangle::new([(x, y - 5), (x + 20, y + 5)], c.filled())))?;
        e(area.draw(&Text::new(
            format!("profile {p}"),
            (x + 26, y),
            font(13.0).pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
        x += 26 + 8 * (p.len() as i32 + 8) + 20;
    }
    Ok(())
}

impl Figure for RateFigure {
    fn size(&self) -> (u32, u32) {
        (W, H)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (x0, x1) = match &self.axis {
            Axis::Categories(c) => (-0.5, c.len() as f64 - 0.5),
            Axis::Numeric { .. } => {
                let xs = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
                let (mn, mx) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
                super::axis_range(mn, mx)
            }
        };
        let y_max = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.3))
            .fold(0.0f64, f64::max);
        let y_max = (y_max * 1.15).clamp(0.001, 1.0);
        let mut chart = e(ChartBuilder::on(root)
            .caption(format!("finding rate: {}", self.invariant), font(18.0))
            .margin(12)
            .margin_top(8)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, 0.0..y_max))?;
        let durations = matches!(self.axis, Axis::Numeric { durations: true });
        let cats = match &self.axis {
            Axis::Categories(c) => c.clone(),
            _ => Vec::new(),
        };
        let xfmt = |x: &f64| {
            if durations {
                fmt_secs(*x)
            } else {
                if x.abs() >= 1e9 {
                    return format!("{x:.3e}");
                }
                let t = format!("{x:.3}");
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        };
        let yfmt = |y: &f64| {
            let t = format!("{:.2}", y * 100.0);
            format!("{}%", t.trim_end_matches('0').trim_end_matches('.'))
        };
        let mut mesh = chart.configure_mesh();
        mesh.y_label_formatter(&yfmt)
            .y_desc("runs with the finding (95% interval)")
            .x_desc(self.parameter.clone())
            .label_style(font(12.0))
            .axis_desc_style(font(13.0))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215));
        if cats.is_empty() {
            mesh.x_label_formatter(&xfmt);
        } else {
            mesh.x_labels(0).disable_x_mesh();
        }
        e(mesh.draw())?;
        if !cats.is_empty() {
            for (i, c) in cats.iter().enumerate() {
                let (px, py) = chart.backend_coord(&(i as f64, 0.0));
                e(root.draw(&Text::new(
                    c.clone(),
                    (px, py + 8),
                    font(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
                )))?;
            }
        }
        for (i, l) in self.lines.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            // Values past the axis limit are drawn at its edge.
            let clamped: Vec<_> = l
                .points
                .iter()
                .map(|p| (p.0.clamp(x0, x1), p.1, p.2, p.3))
                .collect();
            let l = RateLine {
                profile: l.profile.clone(),
                points: clamped,
            };
            if l.points.len() > 1 {
                let mut band: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.3)).collect();
                band.extend(l.points.iter().rev().map(|p| (p.0, p.2)));
                e(chart.draw_series(std::iter::once(Polygon::new(band, c.mix(0.18).filled()))))?;
                e(chart.draw_series(LineSeries::new(
                    l.points.iter().map(|p| (p.0, p.1)),
                    c.stroke_width(2),
                )))?;
            }
            for p in &l.points {
                e(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(p.0, p.2), (p.0, p.3)],
                    c.mix(0.6).stroke_width(2),
                ))))?;
                e(chart.draw_series(std::iter::once(Circle::new((p.0, p.1), 4, c.filled()))))?;
            }
        }
        let profiles: Vec<&str> = self.lines.iter().map(|l| l.profile.as_str()).collect();
        let (px, py) = chart.backend_coord(&(x0, y_max));
        legend(root, &profiles, (px + 12, py + 14))
    }
}

impl Figure for HistFigure {
    fn size(&self) -> (u32, u32) {
        (W, H)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let nbins = self.counts.first().map_or(0, |c| c.1.len());
        let s = |ns: u64| ns as f64 / 1e9;
        // In f64: lo + width x bins may pass u64::MAX for samples near it.
        let (x0, x1) = (s(self.lo), s(self.lo) + s(self.width) * nbins as f64);
        let (x0, x1) = if x1 - x0 > x0.abs().max(1.0) * 1e-9 {
            (x0, x1)
        } else {
            super::axis_range(x0, x1)
        };
        let y_max = self
            .counts
            .iter()
            .flat_map(|c| c.1.iter())
            .copied()
            .max()
            .unwrap_or(1)
            .max(1) as f64
            * 1.15;
        let total: u64 = self.counts.iter().flat_map(|c| c.1.iter()).sum();
        let mut chart = e(ChartBuilder::on(root)
            .caption(format!("{} ({total} samples)", self.title), font(18.0))
            .margin(12)
            .margin_top(8)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(x0..x1, 0.0..y_max))?;
        let xfmt = |x: &f64| fmt_secs(*x);
        let yfmt = |y: &f64| format!("{}", y.round() as u64);
        e(chart
            .configure_mesh()
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .x_desc("seconds")
            .y_desc("pods")
            .label_style(font(12.0))
            .axis_desc_style(font(13.0))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw())?;
        let np = self.counts.len().max(1) as f64;
        let bw = s(self.width).max(1e-9);
        for (j, (_, counts)) in self.counts.iter().enumerate() {
            let c = PALETTE[j % PALETTE.len()];
            for (i, n) in counts.iter().enumerate() {
                if *n == 0 {
                    continue;
                }
                let left = x0 + bw * i as f64 + bw * 0.05 + bw * 0.9 * j as f64 / np;
                let right = left + bw * 0.9 / np;
                e(chart.draw_series(std::iter::once(Rectangle::new(
                    [(left, 0.0), (right, *n as f64)],
                    c.filled(),
                ))))?;
            }
        }
        let profiles: Vec<&str> = self.counts.iter().map(|c| c.0.as_str()).collect();
        let (px, py) = chart.backend_coord(&(x0, y_max));
        legend(root, &profiles, (px + 12, py + 14))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_numbers_or_durations() {
        assert_eq!(parse_value("30"), Some((30.0, false)));
        assert_eq!(parse_value("0.5"), Some((0.5, false)));
        assert_eq!(parse_value("500ms"), Some((0.5, true)));
        assert_eq!(parse_value("1m30s"), Some((90.0, true)));
        assert_eq!(parse_value("Never"), None);
        assert_eq!(parse_value("10x"), None);
        assert_eq!(parse_value(""), None);
    }

    #[test]
    fn wilson_interval() {
        let (lo, hi) = wilson(0, 100);
        assert_eq!(lo, 0.0);
        assert!((hi - 0.0370).abs() < 1e-3, "{hi}");
        let (lo, hi) = wilson(50, 100);
        assert!((lo - 0.4038).abs() < 1e-3 && (hi - 0.5962).abs() < 1e-3);
    }

    #[test]
    fn slugs() {
        assert_eq!(
            slug("spec.pods[0].template.spec.terminationGracePeriodSeconds"),
            "spec-pods-0-template-spec-terminationGracePeriodSeconds"
        );
        assert_eq!(slug("sigkill-before-grace"), "sigkill-before-grace");
        let long = format!("spec.pods[0].template.spec.{}", "x".repeat(300));
        let (a, b) = (slug(&long), slug(&format!("{long}y")));
        assert!(a.len() <= MAX_SLUG && b.len() <= MAX_SLUG, "{a}");
        assert!(a.starts_with("spec-pods-0-template-spec-xxx"), "{a}");
        assert_ne!(a, b);
    }
}
