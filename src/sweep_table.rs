//! The tables `podsim sweep` and `podsim merge` print: finding rates per point x profile
//! with their 95 % intervals, then the metrics (containers alive at power-off, statuses
//! lost, time to terminated, ...) per point x profile, then the first failing runs.

use crate::report::plural;
use crate::results::{Cell, Manifest, Percentiles, Rate, Summary};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// The table printed at the end of a sweep or merge.
pub(crate) fn table(m: &Manifest, s: &Summary, out: &Path) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "sweep {}: {} x {} x {} = {} (base seed {}){}",
        m.name,
        plural(m.points.len() as u64, "point"),
        plural(m.profiles.len() as u64, "profile"),
        plural(m.seeds, "seed"),
        plural(m.runs, "run"),
        m.base_seed,
        m.shard.map_or(String::new(), |sh| format!(
            ", shard {sh}: {}",
            plural(s.runs, "run")
        )),
    );
    let _ = writeln!(t, "results: {}", out.display());
    if !m.parameters.is_empty() {
        for p in &m.points {
            let _ = writeln!(t, "  point {}: {}", p.index, m.point_label(p.index));
        }
    }
    let _ = writeln!(t);
    let mut rows: Vec<[String; 7]> = vec![[
        "point".into(),
        "profile".into(),
        "runs".into(),
        "finding".into(),
        "runs with".into(),
        "rate".into(),
        "95% CI".into(),
    ]];
    let mut firsts = Vec::new();
    for c in &s.cells {
        let mut push = |name: &str, r: &Rate| {
            rows.push([
                c.point.to_string(),
                c.profile.clone(),
                c.runs.to_string(),
                name.to_string(),
                r.runs.to_string(),
                pct(r.rate),
                format!("[{}, {}]", pct(r.ci95[0]), pct(r.ci95[1])),
            ]);
        };
        push("(any)", &c.any_finding);
        for (inv, r) in &c.findings {
            push(&m.finding_label(inv), r);
            if let Some(f) = &r.first_failing {
                firsts.push(format!(
                    "  point {} {} {}: seed {} (replicate {})\n    {}",
                    c.point, c.profile, inv, f.seed, f.replicate, f.replay
                ));
            }
        }
    }
    let rows: Vec<Vec<String>> = rows.into_iter().map(Vec::from).collect();
    t.push_str(&aligned(&rows, &[2, 4, 5]));
    t.push_str(&metrics_table(s));
    let _ = writeln!(t);
    if firsts.is_empty() {
        let _ = writeln!(t, "findings: none");
    } else {
        let _ = writeln!(t, "first failing runs:");
        for f in firsts {
            let _ = writeln!(t, "{f}");
        }
    }
    t
}

// ---- files ---------------------------------------------------------------------------

/// Metrics that count the simulation's own work, not the kubelet's behaviour: left out of
/// the printed table (they stay in `summary.json`).
const BOOKKEEPING: [&str; 2] = ["events", "simulatedNs"];

/// A metric value: nanosecond metrics (`...Ns`, `...Ns/pod`) in seconds, counts as they are.
fn metric_value(key: &str, v: f64) -> String {
    let ns = key.split('/').next().is_some_and(|k| k.ends_with("Ns"));
    if ns {
        crate::plot::fmt_secs(v / 1e9)
    } else {
        let t = format!("{v:.2}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Rows of cells padded to their widest entry; `right` columns aligned right.
fn aligned(rows: &[Vec<String>], right: &[usize]) -> String {
    let mut widths = vec![0usize; rows.first().map_or(0, Vec::len)];
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut t = String::new();
    for r in rows {
        let mut line = String::new();
        for (i, (w, cell)) in widths.iter().zip(r).enumerate() {
            if right.contains(&i) {
                let _ = write!(line, "{cell:>w$}  ");
            } else {
                let _ = write!(line, "{cell:<w$}  ");
            }
        }
        let _ = writeln!(t, "{}", line.trim_end());
    }
    t
}

/// The metrics table: for each point x profile, each metric that is not zero in every run
/// of the sweep (bookkeeping left out): runs that have it (`n`; a per-pod time exists only
/// where that pod was deleted), mean, median, p99 and max. A metric equal in every cell
/// (of several) is listed once below the table instead.
pub(crate) fn metrics_table(s: &Summary) -> String {
    let mut keys: BTreeMap<&str, Vec<(&Cell, &Percentiles)>> = BTreeMap::new();
    for c in &s.cells {
        for (k, p) in &c.metrics {
            if !BOOKKEEPING.contains(&k.as_str()) {
                keys.entry(k.as_str()).or_default().push((c, p));
            }
        }
    }
    let mut same = Vec::new();
    let mut shown: Vec<&str> = Vec::new();
    for (k, cells) in &keys {
        if cells.iter().all(|(_, p)| p.max == 0) {
            continue;
        }
        let (_, first) = cells[0];
        if s.cells.len() > 1
            && cells.len() == s.cells.len()
            && cells.iter().all(|(_, p)| *p == first)
        {
            same.push(format!(
                "{k} {} (p99 {}, max {})",
                metric_value(k, first.mean),
                metric_value(k, first.p99 as f64),
                metric_value(k, first.max as f64)
            ));
        } else {
            shown.push(k);
        }
    }
    let mut t = String::new();
    if shown.is_empty() && same.is_empty() {
        return t;
    }
    let _ = writeln!(t);
    let _ = writeln!(t, "metrics per run (durations in seconds):");
    if !shown.is_empty() {
        let mut rows: Vec<Vec<String>> = vec![[
            "point", "profile", "metric", "n", "mean", "p50", "p99", "max",
        ]
        .iter()
        .map(|h| h.to_string())
        .collect()];
        for c in &s.cells {
            for k in &shown {
                let Some(p) = c.metrics.get(*k) else { continue };
                rows.push(vec![
                    c.point.to_string(),
                    c.profile.clone(),
                    k.to_string(),
                    p.n.to_string(),
                    metric_value(k, p.mean),
                    metric_value(k, p.p50 as f64),
                    metric_value(k, p.p99 as f64),
                    metric_value(k, p.max as f64),
                ]);
            }
        }
        t.push_str(&aligned(&rows, &[3, 4, 5, 6, 7]));
    }
    if !same.is_empty() {
        let _ = writeln!(
            t,
            "the same in every point and profile (mean): {}",
            same.join(", ")
        );
    }
    t
}

/// A cell's metrics, one line each (bookkeeping left out), for the JUnit report.
pub(crate) fn cell_metrics_text(c: &Cell) -> String {
    let mut t = String::new();
    for (k, p) in &c.metrics {
        if BOOKKEEPING.contains(&k.as_str()) {
            continue;
        }
        let _ = writeln!(
            t,
            "metric {k}: n {}, mean {}, p50 {}, p99 {}, max {}",
            p.n,
            metric_value(k, p.mean),
            metric_value(k, p.p50 as f64),
            metric_value(k, p.p99 as f64),
            metric_value(k, p.max as f64)
        );
    }
    t
}
