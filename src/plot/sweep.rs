//! `podsim plot DIR`: plots of a sweep result directory, from `DIR/summary.json` only (the
//! schema is at the top of `src/plot/mod.rs`). The reader is tolerant: whatever is missing
//! or malformed skips the plot that needs it, with a note. The figures are in `rate.rs`
//! (finding rate against one parameter), `heatmap.rs` (against two) and `boxplot.rs`
//! (metric distributions per point).

use super::boxplot::{box_figures, Dist};
use super::heatmap::heatmap_figures;
use super::rate::rate_figures;
use super::{write_figure, Colours};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `plot_dir` did.
#[derive(Debug, Default)]
pub(crate) struct PlotReport {
    pub(crate) written: Vec<PathBuf>,
    pub(crate) notes: Vec<String>,
}

/// One invariant's count at a point: runs with the finding (k), `rate`, `ci95`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Count {
    pub(super) k: Option<u64>,
    pub(super) rate: Option<f64>,
    pub(super) ci95: Option<(f64, f64)>,
}

/// One point x profile of the summary, as far as it could be read.
#[derive(Debug, Clone)]
pub(super) struct Point {
    /// Parameter path -> the value's label (`fixed 100ms`, `5s`, `true`).
    pub(super) labels: BTreeMap<String, String>,
    pub(super) profile: String,
    pub(super) runs: Option<u64>,
    pub(super) findings: BTreeMap<String, Count>,
    /// Metric name -> its distribution over the point's runs.
    pub(super) metrics: BTreeMap<String, Dist>,
}

/// Everything the figures are drawn from.
pub(super) struct Data {
    pub(super) points: Vec<Point>,
    /// The swept parameters in the sweep's order, each with its value labels in order.
    pub(super) axes: Vec<(String, Vec<String>)>,
    /// Every invariant seen (and `any`), in name order.
    pub(super) invariants: Vec<String>,
    pub(super) colours: Colours,
}

impl Data {
    /// The profiles of the summary in legend order (each profile in every plot).
    pub(super) fn profiles(&self) -> Vec<&str> {
        let all: Vec<&str> = self.points.iter().map(|p| p.profile.as_str()).collect();
        self.colours.order(&all)
    }
}

/// The label of a raw parameter value: a string is YAML text as `--set` takes it (its
/// canonical label, see `scenario::label`), a number or boolean is itself.
fn label_of(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(crate::scenario::label::value_label(s)),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn count(f: &Value) -> Count {
    let ci = f.get("ci95").and_then(Value::as_array).and_then(|a| {
        match (
            a.first().and_then(Value::as_f64),
            a.get(1).and_then(Value::as_f64),
        ) {
            (Some(lo), Some(hi)) => Some((lo, hi)),
            _ => None,
        }
    });
    Count {
        k: f.get("runs").and_then(Value::as_u64),
        rate: f.get("rate").and_then(Value::as_f64),
        ci95: ci,
    }
}

/// The labels of a point: its `labels` where given, else the labels of its `parameters`.
fn point_labels(
    i: usize,
    obj: &serde_json::Map<String, Value>,
    notes: &mut Vec<String>,
) -> BTreeMap<String, String> {
    let given = obj.get("labels").and_then(Value::as_object);
    let mut labels = BTreeMap::new();
    if let Some(ps) = obj.get("parameters").and_then(Value::as_object) {
        for (k, v) in ps {
            let l = given
                .and_then(|g| g.get(k))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| label_of(v));
            match l {
                Some(l) => {
                    labels.insert(k.clone(), l);
                }
                None => notes.push(format!(
                    "points[{i}].parameters.{k} is not a string, number or boolean: ignored"
                )),
            }
        }
    }
    labels
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
        let mut findings = BTreeMap::new();
        if let Some(fs) = obj.get("findings").and_then(Value::as_object) {
            for (inv, f) in fs {
                findings.insert(inv.clone(), count(f));
            }
        }
        // The sweep's "any finding" count is plotted as the pseudo-invariant `any`.
        if let Some(a) = obj.get("anyFinding") {
            findings.insert("any".to_string(), count(a));
        }
        let mut metrics = BTreeMap::new();
        if let Some(ms) = obj.get("metrics").and_then(Value::as_object) {
            for (k, v) in ms {
                match Dist::from_json(v) {
                    Some(d) => {
                        metrics.insert(k.clone(), d);
                    }
                    None => notes.push(format!(
                        "points[{i}].metrics.{k}: neither an array of integers nor percentiles (n, p50, ...): left out"
                    )),
                }
            }
        }
        out.push(Point {
            labels: point_labels(i, obj, notes),
            profile: obj
                .get("profile")
                .and_then(Value::as_str)
                .unwrap_or("(none)")
                .to_string(),
            runs: obj.get("runs").and_then(Value::as_u64),
            findings,
            metrics,
        });
    }
    Some(out)
}

/// The axes: the summary's `parameters` (`[{path, labels}]`, in the sweep's order) where
/// given, then any other path and label the points have, in order of appearance.
fn read_axes(summary: &Value, points: &[Point]) -> Vec<(String, Vec<String>)> {
    let mut axes: Vec<(String, Vec<String>)> = Vec::new();
    for a in summary
        .get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(path) = a.get("path").and_then(Value::as_str) else {
            continue;
        };
        let labels: Vec<String> = match a.get("labels").and_then(Value::as_array) {
            Some(ls) => ls
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            None => a
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(label_of)
                .collect(),
        };
        if !axes.iter().any(|(p, _)| p == path) {
            axes.push((path.to_owned(), labels));
        }
    }
    for p in points {
        for (path, l) in &p.labels {
            let i = match axes.iter().position(|(q, _)| q == path) {
                Some(i) => i,
                None => {
                    axes.push((path.clone(), Vec::new()));
                    axes.len() - 1
                }
            };
            if !axes[i].1.contains(l) {
                axes[i].1.push(l.clone());
            }
        }
    }
    // Labels no point has (a partial summary) are not drawn.
    for (path, labels) in &mut axes {
        labels.retain(|l| points.iter().any(|p| p.labels.get(path) == Some(l)));
    }
    axes.retain(|(_, labels)| !labels.is_empty());
    axes
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
    crate::results::wilson(k, n)
}

/// (rate, lo, hi) of `inv` over the points `ps` (pooled: k and N summed, the Wilson
/// interval of the sums; a single point keeps its own `rate` and `ci95`). A point without
/// the invariant but with `runs` had it in none of its runs.
pub(super) fn pooled_rate(ps: &[&Point], inv: &str) -> Option<(f64, f64, f64)> {
    if let [p] = ps {
        let c = p.findings.get(inv).copied().unwrap_or_default();
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
        let k = match p.findings.get(inv) {
            None => 0,
            Some(Count { k: Some(k), .. }) => *k,
            Some(Count { rate: Some(r), .. }) => (r * n as f64).round() as u64,
            Some(_) => return None,
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

/// Reads `dir/summary.json` into the figures' data (notes for what is skipped).
fn read_data(dir: &Path, notes: &mut Vec<String>) -> Result<Option<Data>, String> {
    let path = dir.join("summary.json");
    let text =
        crate::scenario::file::read_capped(&path, crate::scenario::file::MAX_RESULT_FILE_BYTES)
            .map_err(|err| format!("{}: {err}", path.display()))?;
    let summary: Value =
        serde_json::from_str(&text).map_err(|err| format!("{}: {err}", path.display()))?;
    let Some(points) = read_points(&summary, notes) else {
        return Ok(None);
    };
    let axes = read_axes(&summary, &points);
    let mut invariants: Vec<String> = points
        .iter()
        .flat_map(|p| p.findings.keys().cloned())
        .collect();
    invariants.sort();
    invariants.dedup();
    let colours = Colours::new(points.iter().map(|p| p.profile.as_str()));
    Ok(Some(Data {
        points,
        axes,
        invariants,
        colours,
    }))
}

/// Plot `dir`'s summary into `out_dir` (`dir/plots` unless given).
pub(crate) fn plot_dir(dir: &Path, out_dir: Option<&Path>) -> Result<PlotReport, String> {
    let mut rep = PlotReport::default();
    let mut notes = Vec::new();
    let Some(data) = read_data(dir, &mut notes)? else {
        rep.notes = notes;
        return Ok(rep);
    };
    let out_dir = out_dir.map_or_else(|| dir.join("plots"), Path::to_path_buf);
    std::fs::create_dir_all(&out_dir)
        .map_err(|err| format!("cannot create {}: {err}", out_dir.display()))?;
    let mut write = |stem: &str, fig: &dyn Fn(&Path) -> Result<(), String>| {
        for ext in ["svg", "png"] {
            let p = out_dir.join(format!("{stem}.{ext}"));
            fig(&p)?;
            rep.written.push(p);
        }
        Ok::<(), String>(())
    };
    for fig in rate_figures(&data, &mut notes) {
        let stem = format!("rate--{}--{}", slug(&fig.parameter), slug(&fig.invariant));
        write(&stem, &|p| write_figure(&fig, p))?;
    }
    for fig in heatmap_figures(&data) {
        let stem = format!(
            "heatmap--{}--{}--{}",
            slug(&fig.x.0),
            slug(&fig.y.0),
            slug(&fig.invariant)
        );
        write(&stem, &|p| write_figure(&fig, p))?;
    }
    for fig in box_figures(&data, &mut notes) {
        let stem = format!("metric--{}", slug(&fig.metric));
        write(&stem, &|p| write_figure(&fig, p))?;
    }
    rep.notes.extend(notes);
    Ok(rep)
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
        assert_eq!(parse_value("fixed 10ms"), None);
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
    fn labels_of_raw_values() {
        let l = |v: Value| label_of(&v).unwrap();
        assert_eq!(l(Value::from(r#"{"fixed":"100ms"}"#)), "fixed 100ms");
        assert_eq!(l(Value::from("{fixed: 100ms}")), "fixed 100ms");
        assert_eq!(l(Value::from(5)), "5");
        assert_eq!(l(Value::from(true)), "true");
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
