//! `podsim report DIR` (and `sweep --report`): one self-contained HTML page of a sweep
//! result directory, for people and CI artifact viewers: the manifest, the rate of
//! findings per point x profile with its 95 % interval, the plots, the metrics and the
//! first failing run of each cell with its replay command.
//!
//! Self-contained: inline CSS, the plots of `DIR/plots/` as `data:` images (SVG, or PNG
//! where a plot has no SVG), no script and nothing fetched. Readable on a phone: a viewport
//! tag, tables that scroll sideways, images no wider than the screen. Everything taken
//! from the directory is HTML-escaped. The page is a pure function of the directory's
//! files: no wall-clock time (the manifest holds none, and none is made up).
//!
//! The manifest is read as podsim reads it everywhere (`results::read_manifest`); the
//! summary as plain JSON, so that whatever metrics and findings it holds are shown.

use crate::results::{read_manifest, Manifest, MANIFEST, SUMMARY};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A plot larger than this is left out of the page (with a note in its place).
const MAX_PLOT_BYTES: u64 = 8 << 20;

/// The default output: `DIR/report.html`.
pub(crate) fn default_out(dir: &Path) -> PathBuf {
    dir.join("report.html")
}

/// Writes the report of result directory `dir` to `out` (through `crate::outfile`).
/// Errors name the file (and, for JSON, the line and column or the field).
pub(crate) fn write_report(dir: &Path, out: &Path) -> Result<(), String> {
    let html = render_dir(dir)?;
    crate::outfile::write_bytes(out, html.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", out.display()))
}

/// `podsim report DIR [--out FILE]`: holds the directory's lock (the page is read from
/// files a sweep may be writing), writes the page, prints where. Exit 2 on any error.
pub(crate) fn command(dir: &Path, out: Option<&Path>) -> std::process::ExitCode {
    let is_result = |f: &str| dir.join(f).is_file();
    let _lock = if is_result(MANIFEST) || is_result(SUMMARY) {
        match crate::lock::DirLock::acquire(dir) {
            Ok(l) => Some(l),
            Err(e) => {
                eprintln!("error: {e}");
                return std::process::ExitCode::from(2);
            }
        }
    } else {
        None
    };
    report_to(dir, out)
}

/// Writes the report (the caller holds the lock) and says where, or prints the error:
/// exit 0 or 2.
pub(crate) fn report_to(dir: &Path, out: Option<&Path>) -> std::process::ExitCode {
    let out = out.map_or_else(|| default_out(dir), Path::to_path_buf);
    match write_report(dir, &out) {
        Ok(()) => {
            eprintln!("report: {}", out.display());
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {}", crate::scenario::escape_controls(&e));
            std::process::ExitCode::from(2)
        }
    }
}

/// The page for `dir`.
pub(crate) fn render_dir(dir: &Path) -> Result<String, String> {
    let m = read_manifest(dir)?;
    let p = dir.join(SUMMARY);
    let text = crate::scenario::file::read_capped(&p, crate::scenario::file::MAX_RESULT_FILE_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    let summary: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", p.display()))?;
    let cells = cells(&summary).map_err(|e| format!("{}: {e}", p.display()))?;
    let plots = plots(&dir.join("plots"));
    Ok(render(&m, &cells, &plots))
}

/// One cell of `summary.json` (point x profile), as much as the page needs.
struct Cell<'a> {
    point: u64,
    profile: &'a str,
    runs: u64,
    any: &'a Value,
    /// By invariant name.
    findings: Vec<(&'a str, &'a Value)>,
    metrics: Vec<(&'a str, &'a Value)>,
}

/// The cells of a summary, checked for the fields the page uses.
fn cells(s: &Value) -> Result<Vec<Cell<'_>>, String> {
    let list = s
        .get("cells")
        .and_then(Value::as_array)
        .ok_or("cells: missing, or not a list")?;
    let mut out = Vec::new();
    for (i, c) in list.iter().enumerate() {
        let field = |k: &str| c.get(k).ok_or(format!("cells[{i}].{k}: missing"));
        let num = |k: &str| {
            field(k)?
                .as_u64()
                .ok_or(format!("cells[{i}].{k}: not a whole number"))
        };
        let map = |k: &str| -> Result<Vec<(&str, &Value)>, String> {
            match c.get(k) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Object(m)) => Ok(m.iter().map(|(k, v)| (k.as_str(), v)).collect()),
                Some(_) => Err(format!("cells[{i}].{k}: not an object")),
            }
        };
        out.push(Cell {
            point: num("point")?,
            profile: field("profile")?
                .as_str()
                .ok_or(format!("cells[{i}].profile: not a string"))?,
            runs: num("runs")?,
            any: field("anyFinding")?,
            findings: map("findings")?,
            metrics: map("metrics")?,
        });
    }
    Ok(out)
}

/// A plot: its file name and a `data:` URL.
struct Plot {
    name: String,
    data: Result<String, String>,
}

/// The plots of `dir` in name order, one per stem: the SVG, else the PNG.
fn plots(dir: &Path) -> Vec<Plot> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".svg") || n.ends_with(".png"))
        .collect();
    names.sort();
    let has_svg = |n: &str| {
        n.strip_suffix(".png")
            .is_some_and(|stem| names.iter().any(|m| *m == format!("{stem}.svg")))
    };
    names
        .iter()
        .filter(|n| !has_svg(n))
        .map(|n| {
            let p = dir.join(n);
            let mime = if n.ends_with(".svg") {
                "image/svg+xml"
            } else {
                "image/png"
            };
            let data = crate::scenario::file::read_capped_bytes(&p, MAX_PLOT_BYTES)
                .map(|b| format!("data:{mime};base64,{}", base64(&b)));
            Plot {
                name: n.clone(),
                data,
            }
        })
        .collect()
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= c.len() {
                s.push(A[(n >> (18 - 6 * k) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// `s` escaped for HTML text and attribute values.
pub(crate) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const STYLE: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:0 auto;max-width:1100px;padding:0 12px 32px;color:#1b1b1b;line-height:1.4}
h1{font-size:1.45em;margin:18px 0 4px;overflow-wrap:anywhere}
h2{font-size:1.2em;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:3px}
h3{font-size:1em;margin:16px 0 6px;overflow-wrap:anywhere}
.sub{color:#555;margin:0 0 8px}
.scroll{overflow-x:auto;-webkit-overflow-scrolling:touch;margin:0 0 8px}
table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #d4d4d4;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#f2f2f2;font-weight:600;overflow-wrap:anywhere;min-width:4em;max-width:16em}
table.kv{table-layout:fixed;width:100%}
table.kv th{width:30%;max-width:none;min-width:0}
table.kv td{overflow-wrap:anywhere}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.v{overflow-wrap:anywhere;min-width:5em;max-width:18em}
.hit{background:#fde8e8}
.ci{color:#666;font-size:.85em}
code,pre{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:.85em}
pre{background:#f6f6f6;border:1px solid #ddd;padding:6px 8px;white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0 10px}
figure{margin:10px 0 18px}
figure img{max-width:100%;height:auto;border:1px solid #e4e4e4}
figcaption{color:#555;font-size:.85em;overflow-wrap:anywhere}
details{margin:4px 0}
summary{cursor:pointer}
nav a{margin-right:12px}
";

/// The whole page.
fn render(m: &Manifest, cells: &[Cell<'_>], plots: &[Plot]) -> String {
    let mut h = String::new();
    let title = format!("podsim sweep {}", m.name);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(&title),
        esc(&title)
    );
    let (any, _) = totals(cells);
    let runs: u64 = cells.iter().map(|c| c.runs).sum();
    let _ = writeln!(
        h,
        "<p class=\"sub\">scenario {} &middot; {} runs &middot; {} with findings</p>",
        esc(&m.scenario),
        runs,
        any
    );
    h.push_str(
        "<nav><a href=\"#manifest\">manifest</a><a href=\"#rates\">rates</a>\
         <a href=\"#plots\">plots</a><a href=\"#metrics\">metrics</a>\
         <a href=\"#failing\">failing runs</a></nav>\n",
    );
    manifest(&mut h, m);
    rates(&mut h, m, cells);
    plots_section(&mut h, plots);
    metrics(&mut h, m, cells);
    failing(&mut h, m, cells);
    h.push_str("</body>\n</html>\n");
    h
}

/// Runs with any finding, and the invariant names in order of first appearance.
fn totals<'a>(cells: &[Cell<'a>]) -> (u64, Vec<&'a str>) {
    let mut names: Vec<&str> = Vec::new();
    let mut any = 0;
    for c in cells {
        any += c.any.get("runs").and_then(Value::as_u64).unwrap_or(0);
        for (n, _) in &c.findings {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    (any, names)
}

fn manifest(h: &mut String, m: &Manifest) {
    h.push_str("<h2 id=\"manifest\">Manifest</h2>\n<div class=\"scroll\"><table class=\"kv\">\n");
    let mut row = |k: &str, v: String| {
        let _ = writeln!(h, "<tr><th>{}</th><td>{v}</td></tr>", esc(k));
    };
    row("podsim", esc(&m.podsim));
    row("sweep", esc(&m.name));
    if let Some(f) = &m.sweep_file {
        row("sweep file", format!("<code>{}</code>", esc(f)));
    }
    if let Some(x) = &m.sweep_hash {
        row("sweep hash", format!("<code>{}</code>", esc(x)));
    }
    row(
        "scenario",
        format!(
            "{} (<code>{}</code>)",
            esc(&m.scenario),
            esc(&m.scenario_file)
        ),
    );
    row(
        "scenario hash",
        format!("<code>{}</code>", esc(&m.scenario_hash)),
    );
    row("base seed", m.base_seed.to_string());
    row("seeds per point", m.seeds.to_string());
    row(
        "seed derivation",
        format!("<code>{}</code>", esc(&m.seed_derivation)),
    );
    row("profiles", esc(&m.profiles.join(", ")));
    row("points", m.points.len().to_string());
    row("runs", m.runs.to_string());
    row("run order", esc(&m.run_order));
    if let Some(s) = &m.shard {
        row(
            "shard",
            format!(
                "{} of {} (this directory holds part of the runs)",
                s.index, s.count
            ),
        );
    }
    for a in &m.parameters {
        let vals: Vec<String> = a
            .values
            .iter()
            .map(|v| {
                format!(
                    "<code>{}</code>",
                    esc(&crate::scenario::label::value_label(v))
                )
            })
            .collect();
        row(&format!("axis {}", a.path), vals.join(", "));
    }
    h.push_str("</table></div>\n");
}

/// A rate object's `rate` and `ci95` as "12.5 %" and "[8.1 %, 17.9 %]".
fn rate_cells(r: &Value) -> (String, String, bool) {
    let pct = |x: f64| format!("{:.1}&nbsp;%", x * 100.0);
    let rate = r.get("rate").and_then(Value::as_f64);
    let ci = r.get("ci95").and_then(Value::as_array).and_then(|a| {
        let lo = a.first()?.as_f64()?;
        let hi = a.get(1)?.as_f64()?;
        Some(format!("[{}, {}]", pct(lo), pct(hi)))
    });
    (
        rate.map_or("-".into(), pct),
        ci.unwrap_or_default(),
        rate.is_some_and(|x| x > 0.0),
    )
}

/// The point's value on each axis, as table cells.
fn axis_cells(m: &Manifest, point: u64) -> String {
    let labels = if (point as usize) < m.points.len() {
        m.point_labels(point)
    } else {
        Default::default()
    };
    m.parameters
        .iter()
        .map(|a| {
            let v = labels.get(&a.path);
            format!(
                "<td class=\"v\"><code>{}</code></td>",
                esc(v.map_or("?", |s| s))
            )
        })
        .collect()
}

fn axis_headers(m: &Manifest) -> String {
    m.parameters
        .iter()
        .map(|a| format!("<th>{}</th>", esc(&a.path)))
        .collect()
}

fn rates(h: &mut String, m: &Manifest, cells: &[Cell<'_>]) {
    let (_, names) = totals(cells);
    h.push_str("<h2 id=\"rates\">How often</h2>\n");
    h.push_str(
        "<p class=\"sub\">Runs with findings per point and profile, with the 95&nbsp;% \
         Wilson interval.</p>\n<div class=\"scroll\"><table>\n<tr><th>point</th>",
    );
    h.push_str(&axis_headers(m));
    h.push_str("<th>profile</th><th>runs</th><th>any finding</th>");
    for n in &names {
        let _ = write!(h, "<th>{}</th>", esc(n));
    }
    h.push_str("</tr>\n");
    for c in cells {
        let _ = write!(
            h,
            "<tr class=\"cell\"><td class=\"n\">{}</td>{}<td>{}</td><td class=\"n\">{}</td>",
            c.point,
            axis_cells(m, c.point),
            esc(c.profile),
            c.runs
        );
        // A finding a cell does not list did not occur there: 0 of its runs.
        let (lo, hi) = crate::results::wilson(0, c.runs);
        let none = serde_json::json!({ "runs": 0, "rate": 0.0, "ci95": [lo, hi] });
        let mut rate = |r: Option<&Value>| {
            let (v, ci, hit) = rate_cells(r.unwrap_or(&none));
            let class = if hit { "n hit" } else { "n" };
            let _ = write!(
                h,
                "<td class=\"{class}\">{v}<br><span class=\"ci\">{ci}</span></td>"
            );
        };
        rate(Some(c.any));
        for n in &names {
            rate(c.findings.iter().find(|(k, _)| k == n).map(|(_, v)| *v));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table></div>\n");
}

fn plots_section(h: &mut String, plots: &[Plot]) {
    h.push_str("<h2 id=\"plots\">Plots</h2>\n");
    if plots.is_empty() {
        h.push_str("<p class=\"sub\">No plots in this directory (<code>podsim plot DIR</code> draws them).</p>\n");
    }
    for p in plots {
        match &p.data {
            Ok(url) => {
                let _ = writeln!(
                    h,
                    "<figure><img src=\"{}\" alt=\"{}\"><figcaption>{}</figcaption></figure>",
                    url,
                    esc(&p.name),
                    esc(&p.name)
                );
            }
            Err(e) => {
                let _ = writeln!(
                    h,
                    "<p class=\"sub\">{}: left out ({})</p>",
                    esc(&p.name),
                    esc(e)
                );
            }
        }
    }
}

/// A metric statistic: a number, shown as seconds when the metric is in nanoseconds.
fn stat(name: &str, v: &Value) -> String {
    match v.as_f64() {
        Some(x) if name.ends_with("Ns") || name.contains("Ns/") => {
            format!("{} s", trim_float(x / 1e9))
        }
        Some(_) => esc(&v.to_string()),
        None => esc(&match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }),
    }
}

fn trim_float(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

fn metrics(h: &mut String, m: &Manifest, cells: &[Cell<'_>]) {
    h.push_str("<h2 id=\"metrics\">Metrics</h2>\n");
    h.push_str(
        "<p class=\"sub\">Per point and profile, over the runs that have the metric \
         (times in seconds). Metrics that are 0 in every run are folded.</p>\n",
    );
    let mut names: Vec<&str> = Vec::new();
    for c in cells {
        for (n, _) in &c.metrics {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    for name in names {
        let rows: Vec<(&Cell<'_>, &Value)> = cells
            .iter()
            .filter_map(|c| {
                c.metrics
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| (c, *v))
            })
            .collect();
        // The statistics' names: the usual ones in their usual order, then any other.
        let mut keys: Vec<&str> = Vec::new();
        for (_, v) in &rows {
            if let Some(o) = v.as_object() {
                for k in o.keys() {
                    if !keys.contains(&k.as_str()) {
                        keys.push(k);
                    }
                }
            }
        }
        const USUAL: [&str; 7] = ["n", "mean", "min", "p50", "p90", "p99", "max"];
        keys.sort_by_key(|k| USUAL.iter().position(|u| u == k).unwrap_or(USUAL.len()));
        let zero = rows.iter().all(|(_, v)| {
            v.as_object().is_some_and(|o| {
                o.iter()
                    .filter(|(k, _)| k.as_str() != "n")
                    .all(|(_, x)| x.as_f64() == Some(0.0))
            })
        });
        let open = if zero { "" } else { " open" };
        let _ = write!(
            h,
            "<details{open}><summary><b>{}</b></summary>\n<div class=\"scroll\"><table>\n\
             <tr><th>point</th>{}<th>profile</th>",
            esc(name),
            axis_headers(m)
        );
        for k in &keys {
            let _ = write!(h, "<th>{}</th>", esc(k));
        }
        h.push_str("</tr>\n");
        for (c, v) in rows {
            let _ = write!(
                h,
                "<tr><td class=\"n\">{}</td>{}<td>{}</td>",
                c.point,
                axis_cells(m, c.point),
                esc(c.profile)
            );
            for k in &keys {
                let s = match v.get(*k) {
                    Some(x) if *k == "n" => esc(&x.to_string()),
                    Some(x) => stat(name, x),
                    None => "-".into(),
                };
                let _ = write!(h, "<td class=\"n\">{s}</td>");
            }
            if !v.is_object() {
                let _ = write!(h, "<td>{}</td>", stat(name, v));
            }
            h.push_str("</tr>\n");
        }
        h.push_str("</table></div></details>\n");
    }
}

/// The first failing run of each cell, and of each invariant where it is another run.
fn failing(h: &mut String, m: &Manifest, cells: &[Cell<'_>]) {
    h.push_str("<h2 id=\"failing\">First failing runs</h2>\n");
    let replay = |r: &Value| -> Option<(u64, String)> {
        let f = r.get("firstFailing")?;
        Some((
            f.get("seed")?.as_u64()?,
            f.get("replay")?.as_str()?.to_string(),
        ))
    };
    let mut any = false;
    for c in cells {
        let Some((seed, line)) = replay(c.any) else {
            continue;
        };
        any = true;
        let hits: Vec<String> = c
            .findings
            .iter()
            .filter(|(_, r)| r.get("runs").and_then(Value::as_u64).unwrap_or(0) > 0)
            .map(|(n, _)| esc(n))
            .collect();
        let _ = write!(
            h,
            "<h3 class=\"failing\">point {} ({}) &middot; {}</h3>\n<p class=\"sub\">seed {seed}; findings in this cell: {}</p>\n<pre><code>{}</code></pre>\n",
            c.point,
            esc(&m.point_label(c.point)),
            esc(c.profile),
            hits.join(", "),
            esc(&line)
        );
        for (n, r) in &c.findings {
            if let Some((s, l)) = replay(r).filter(|(s, _)| *s != seed) {
                let _ = write!(
                    h,
                    "<p class=\"sub\">first {} (seed {s}):</p>\n<pre><code>{}</code></pre>\n",
                    esc(n),
                    esc(&l)
                );
            }
        }
    }
    if !any {
        h.push_str("<p class=\"sub\">No run had a finding.</p>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc("<b>'x' & \"y\"</b>"),
            "&lt;b&gt;&#39;x&#39; &amp; &quot;y&quot;&lt;/b&gt;"
        );
    }
}
