//! The per-pod timeline of one run (`podsim run SCENARIO --timeline FILE`), drawn from the
//! [`RunOutput`] alone: one row per pod object (UID) with the phases the API server held as
//! coloured bands (and `Deleted` after removal), the Ready condition as a thin strip under
//! them, every container instance as a bar from start to exit, and markers for SIGTERM,
//! SIGKILL at grace expiry, power-off kills, probe failures, the deletion request and the
//! removal from the API; findings and the node's power-off are vertical lines across all
//! rows. Probe failures come from the run's trace records (`probe <uid> <container> <kind>
//! failure`), so the run must keep its trace (the CLI does when `--timeline` is given);
//! without records none are drawn. Lifecycle hooks (postStart and preStop calls, from the
//! same records: `hook_spans`) are drawn as thin spans under their container's bars.

use super::hook_spans::{HookKind, HookSpan, HookSpans};
use super::{e, fmt_secs, font, Figure};
use crate::run::{PodSummary, RunOutput};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

const NS: f64 = 1e9;
const WIDTH: u32 = 1280;
const LEFT: u32 = 190;
const CAPTION: u32 = 50;
const X_AXIS: u32 = 45;
const LEGEND_ROW: u32 = 22;
/// Height of one lane of power-off and finding labels above the rows.
const LANE: i32 = 15;
/// Right margin of the plotting area.
const RIGHT: u32 = 20;

const PENDING: RGBColor = RGBColor(242, 201, 76);
const RUNNING: RGBColor = RGBColor(111, 207, 151);
const SUCCEEDED: RGBColor = RGBColor(86, 156, 219);
const FAILED: RGBColor = RGBColor(235, 87, 87);
const UNKNOWN: RGBColor = RGBColor(155, 81, 224);
const DELETED: RGBColor = RGBColor(200, 200, 200);
const CONTAINER: RGBColor = RGBColor(70, 90, 120);
/// Every other instance of a restarted container: each start is a bar of its own.
const CONTAINER_ALT: RGBColor = RGBColor(115, 140, 180);
const READY: RGBColor = RGBColor(20, 120, 60);
const SIGTERM: RGBColor = RGBColor(230, 126, 34);
const SIGKILL: RGBColor = RGBColor(200, 0, 0);
const POWER_OFF: RGBColor = RGBColor(120, 40, 160);
const PROBE_FAIL: RGBColor = RGBColor(220, 0, 160);
const DELETE_REQ: RGBColor = RGBColor(0, 0, 0);
const REMOVED: RGBColor = RGBColor(90, 90, 90);
const FINDING: RGBColor = RGBColor(200, 0, 0);
const POST_START: RGBColor = RGBColor(0, 160, 175);
const PRE_STOP: RGBColor = RGBColor(150, 95, 25);
const HOOK_FAILED: RGBColor = RGBColor(160, 0, 60);

fn phase_color(p: &str) -> RGBColor {
    match p {
        "Pending" => PENDING,
        "Running" => RUNNING,
        "Succeeded" => SUCCEEDED,
        "Failed" => FAILED,
        "Deleted" => DELETED,
        _ => UNKNOWN,
    }
}

/// One failed probe run: (time ns, container, probe kind).
type ProbeFailure = (u64, String, String);

/// The most probe-failure markers a timeline keeps (a probe failing every few
/// milliseconds for minutes would otherwise keep one per failure).
pub(crate) const MAX_PROBE_MARKERS: usize = 100_000;

/// The tallest picture drawn, in pixels of pod rows: 16,000 px (a 1280-pixel-wide PNG of
/// about 80 MB of pixels); pods that do not fit are left out and counted in a last line.
pub(crate) const MAX_ROWS_PX: f64 = 16_000.0;

/// Probe failures per pod UID, gathered from the trace records as the run makes them
/// (nothing else of the trace is kept), at most [`MAX_PROBE_MARKERS`].
#[derive(Debug, Default)]
pub(crate) struct ProbeFailures {
    by_uid: BTreeMap<String, Vec<ProbeFailure>>,
    kept: usize,
    /// Failures seen beyond the cap (not drawn).
    pub(crate) dropped: u64,
    /// Lifecycle hook calls, from the same records.
    hooks: HookSpans,
}

impl ProbeFailures {
    /// Looks at one record: `probe <uid> <container> <kind> failure`.
    pub(crate) fn see(&mut self, r: &crate::sim::trace::Record) {
        if r.text.starts_with("rt ") || r.text.starts_with("cri ") {
            self.hooks.see(r.at.0, &r.text);
            return;
        }
        if !r.text.starts_with("probe ") || !r.text.ends_with(" failure") {
            return;
        }
        let w: Vec<&str> = r.text.split_whitespace().collect();
        if w.len() != 5 {
            return;
        }
        if self.kept >= MAX_PROBE_MARKERS {
            self.dropped += 1;
            return;
        }
        self.kept += 1;
        self.by_uid.entry(w[1].to_string()).or_default().push((
            r.at.0,
            w[2].to_string(),
            w[3].to_string(),
        ));
    }
}

/// The timeline figure of one run.
pub(crate) struct Timeline<'a> {
    out: &'a RunOutput,
    /// Probe failures per pod UID, from the trace records.
    probe_failures: BTreeMap<String, Vec<ProbeFailure>>,
    /// Lifecycle hook calls per pod UID, from the trace records.
    hooks: BTreeMap<String, Vec<HookSpan>>,
    /// Pods drawn (the first ones, in order); the rest are counted in a last line.
    shown: usize,
    /// Right end of the time axis (s).
    x_end: f64,
    /// Where the run stopped (s): bars still open end here (or at `x_end`).
    run_end: f64,
    /// Height of each row in row units (1 + extra per container beyond the first).
    heights: Vec<f64>,
    row_px: f64,
}

impl<'a> Timeline<'a> {
    /// The timeline of `out`, with the probe failures its trace records showed.
    pub(crate) fn new(out: &'a RunOutput, probes: ProbeFailures) -> Self {
        let probe_failures = probes.by_uid;
        let hooks = probes.hooks.by_uid;
        let mut last = 0u64;
        let mut see = |t: u64| last = last.max(t);
        for p in &out.pods {
            see(p.created_at_ns);
            p.phases.iter().for_each(|(t, _)| see(*t));
            p.ready_transitions.iter().for_each(|(t, _)| see(*t));
            p.deletion_requested_at_ns.map(&mut see);
            p.removed_from_api_at_ns.map(&mut see);
            for (_, c) in p.labelled_containers() {
                c.started_at_ns.iter().for_each(|t| see(*t));
                c.finished_at_ns.iter().for_each(|t| see(*t));
                c.sigterms_at_ns.iter().for_each(|t| see(*t));
            }
        }
        out.findings.iter().for_each(|f| see(f.at_ns));
        out.metrics.power_off_at_ns.map(&mut see);
        probe_failures
            .values()
            .flatten()
            .for_each(|(t, _, _)| see(*t));
        let last_s = last as f64 / NS;
        let run_end = out.simulated_ns as f64 / NS;
        // A little room after the last event, or up to the end of the run if that is near.
        let x_end = (last_s * 1.06 + 0.5).min(run_end.max(last_s + 0.001));
        let row_px = if out.pods.len() > 40 { 30.0 } else { 46.0 };
        // Rows while they fit in MAX_ROWS_PX; a last row says how many pods are left out.
        let mut heights: Vec<f64> = Vec::new();
        let mut used = 0.0;
        for p in &out.pods {
            let n = p.containers.len() + p.init_containers.len();
            let h = 1.0 + 0.4 * n.saturating_sub(1) as f64;
            if (used + h + 1.0) * row_px > MAX_ROWS_PX {
                break;
            }
            used += h;
            heights.push(h);
        }
        let shown = heights.len();
        if shown < out.pods.len() {
            heights.push(1.0);
        }
        Timeline {
            out,
            probe_failures,
            hooks,
            shown,
            x_end: x_end.max(1e-3),
            run_end,
            heights,
            row_px,
        }
    }

    fn total_units(&self) -> f64 {
        self.heights.iter().sum::<f64>().max(1.0)
    }

    fn legend_items() -> Vec<(Swatch, &'static str)> {
        vec![
            (Swatch::Band(PENDING), "Pending"),
            (Swatch::Band(RUNNING), "Running"),
            (Swatch::Band(SUCCEEDED), "Succeeded"),
            (Swatch::Band(FAILED), "Failed"),
            (Swatch::Band(DELETED), "Deleted (removed from the API)"),
            (Swatch::Strip(READY), "Ready"),
            (
                Swatch::Bar(CONTAINER),
                "container running (a bar per start)",
            ),
            (Swatch::Strip(POST_START), "postStart hook"),
            (Swatch::Strip(HOOK_FAILED), "postStart hook that failed"),
            (Swatch::Strip(PRE_STOP), "preStop hook"),
            (Swatch::Triangle(SIGTERM), "SIGTERM"),
            (Swatch::Cross(SIGKILL), "SIGKILL at grace expiry"),
            (Swatch::Cross(POWER_OFF), "killed by power-off"),
            (Swatch::Dot(PROBE_FAIL), "probe failure"),
            (Swatch::VLine(DELETE_REQ), "deletion requested"),
            (Swatch::VLine(REMOVED), "removed from the API"),
            (Swatch::VLine(FINDING), "finding"),
        ]
    }

    fn legend_rows(&self) -> u32 {
        // Laid out by `draw_legend` at WIDTH; estimate with the same arithmetic.
        let mut rows = 1;
        let mut x = 10.0;
        for (_, label) in Self::legend_items() {
            let w = 30.0 + label.len() as f64 * 7.0 + 16.0;
            if x + w > WIDTH as f64 - 10.0 {
                rows += 1;
                x = 10.0;
            }
            x += w;
        }
        rows
    }

    fn legend_px(&self) -> u32 {
        self.legend_rows() * LEGEND_ROW + 12
    }

    /// Run-wide vertical lines: the node's power-off, then every finding (time s, colour,
    /// label).
    fn vlines(&self) -> Vec<(f64, RGBColor, String)> {
        let o = self.out;
        let s = |ns: u64| (ns as f64 / NS).min(self.x_end);
        let mut v = Vec::new();
        if let Some(t) = o.metrics.power_off_at_ns {
            v.push((s(t), POWER_OFF, "node power-off".to_string()));
        }
        for f in &o.findings {
            let who = if f.pod.is_empty() {
                String::new()
            } else {
                format!(" ({})", f.pod)
            };
            v.push((s(f.at_ns), FINDING, format!("{}{who}", f.invariant)));
        }
        v
    }

    /// Where each vertical line's label goes, in the strip above the rows: (left pixel,
    /// lane), lanes filled greedily so that no two labels overlap each other (and none
    /// covers a row). Returns the places and the number of lanes.
    fn label_places(&self) -> (Vec<(i32, i32)>, i32) {
        let plot_w = (WIDTH - LEFT - RIGHT) as f64;
        let mut ends: Vec<i32> = Vec::new();
        let mut places = Vec::new();
        for (x, _, label) in self.vlines() {
            let px = LEFT as i32 + (x / self.x_end * plot_w) as i32;
            let tw = super::text_width(&label, 12.0);
            let left = if px + 4 + tw > WIDTH as i32 - 4 {
                px - 4 - tw
            } else {
                px + 4
            };
            let lane = match ends.iter().position(|end| left > end + 8) {
                Some(l) => l,
                None => {
                    ends.push(i32::MIN);
                    ends.len() - 1
                }
            };
            ends[lane] = left + tw;
            places.push((left, lane as i32));
        }
        let lanes = ends.len() as i32;
        (places, lanes)
    }

    fn strip_px(&self) -> u32 {
        let (_, lanes) = self.label_places();
        (lanes * LANE + if lanes > 0 { 6 } else { 0 }) as u32
    }
}

#[derive(Clone, Copy)]
enum Swatch {
    Band(RGBColor),
    Strip(RGBColor),
    Bar(RGBColor),
    Triangle(RGBColor),
    Cross(RGBColor),
    Dot(RGBColor),
    VLine(RGBColor),
}

impl Figure for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        let rows = (self.total_units() * self.row_px).ceil() as u32;
        (
            WIDTH,
            CAPTION + self.strip_px() + rows + X_AXIS + 10 + self.legend_px(),
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let (_, h) = self.size();
        let (main, legend) = root.split_vertically(h - self.legend_px());
        let total = self.total_units();
        let o = self.out;
        let title = format!(
            "{}  seed {}  profile {}  trace {}",
            o.scenario, o.seed, o.profile, o.trace_hash
        );
        e(main.draw(&Text::new(
            title,
            (WIDTH as i32 / 2, 10),
            font(18.0).pos(Pos::new(HPos::Center, VPos::Top)),
        )))?;
        let mut chart = e(ChartBuilder::on(&main)
            .margin_right(RIGHT)
            .margin_top((CAPTION + self.strip_px()) as i32)
            .x_label_area_size(X_AXIS)
            .y_label_area_size(LEFT)
            .build_cartesian_2d(0.0..self.x_end, 0.0..total))?;
        let fmt = |x: &f64| fmt_secs(*x);
        e(chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(12)
            .x_label_formatter(&fmt)
            .x_desc("simulated time")
            .label_style(font(12.0))
            .axis_desc_style(font(13.0))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw())?;

        let bar_end = self.run_end.min(self.x_end);
        let s = |ns: u64| (ns as f64 / NS).min(self.x_end);
        // Two passes over the rows: bands and bars, then (over the run-wide lines drawn in
        // between) the per-row lines, markers and labels, so no line hides a marker.
        let mut top = total;
        for pass in 0..2 {
            top = total;
            for (i, p) in o.pods.iter().enumerate().take(self.shown) {
                let h = self.heights[i];
                let row = Row {
                    top,
                    h,
                    k: (p.containers.len() + p.init_containers.len()).max(1),
                };
                top -= h;
                if pass == 0 {
                    if i % 2 == 1 {
                        e(chart.draw_series(std::iter::once(Rectangle::new(
                            [(0.0, row.top - h), (self.x_end, row.top)],
                            RGBColor(247, 247, 250).filled(),
                        ))))?;
                    }
                    self.draw_phases(&mut chart, &main, p, &row, bar_end)?;
                    self.draw_ready(&mut chart, p, &row, bar_end)?;
                    self.draw_containers(&mut chart, p, &row, bar_end, false)?;
                    continue;
                }
                // Deletion requested and removal: lines over the whole row.
                let mut lines = Vec::new();
                if let Some(t) = p.deletion_requested_at_ns {
                    lines.push((s(t), DELETE_REQ));
                }
                if let Some(t) = p.removed_from_api_at_ns {
                    lines.push((s(t), REMOVED));
                }
                for (x, c) in lines {
                    e(chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x, row.top - h + 0.03), (x, row.top - 0.03)],
                        c.stroke_width(2),
                    ))))?;
                    let (px, py) = chart.backend_coord(&(x, row.top - 0.03));
                    e(main.draw(&Polygon::new(
                        vec![(px - 5, py - 1), (px + 5, py - 1), (px, py + 6)],
                        c.filled(),
                    )))?;
                }
                self.draw_containers(&mut chart, p, &row, bar_end, true)?;
                self.draw_row_labels(&chart, &main, p, &row)?;
            }
            if pass == 0 {
                self.draw_vlines(&chart, &main, total)?;
            }
        }

        if self.shown < o.pods.len() {
            let (px, py) = chart.backend_coord(&(0.0, top - 0.5));
            let style = font(13.0).pos(Pos::new(HPos::Left, VPos::Center));
            e(main.draw(&Text::new(
                format!(
                    "... and {} more pods (not drawn: a timeline shows at most {} px of rows)",
                    o.pods.len() - self.shown,
                    MAX_ROWS_PX
                ),
                (px + 8, py),
                style,
            )))?;
        }

        draw_legend(&legend, &Self::legend_items())
    }
}

/// A row's place: its top in row units, height, and container count.
struct Row {
    top: f64,
    h: f64,
    k: usize,
}

impl Row {
    fn band(&self) -> (f64, f64) {
        (self.top - 0.36, self.top - 0.06)
    }
    /// The Ready strip: a tenth of a row (about 5 px), clear of the band and the bars.
    fn ready(&self) -> (f64, f64) {
        (self.top - 0.49, self.top - 0.38)
    }
    /// (bottom, top) of container `j`'s bar.
    fn container(&self, j: usize) -> (f64, f64) {
        let region_top = self.top - 0.53;
        let region_bottom = self.top - self.h + 0.06;
        let sub = (region_top - region_bottom) / self.k as f64;
        let t = region_top - sub * j as f64;
        (t - sub * 0.85, t - sub * 0.1)
    }
}

type Chart<'b, DB> = ChartContext<'b, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

impl Timeline<'_> {
    fn draw_phases<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        area: &DrawingArea<DB, Shift>,
        p: &PodSummary,
        row: &Row,
        bar_end: f64,
    ) -> Result<(), String> {
        let s = |ns: u64| (ns as f64 / NS).min(self.x_end);
        let removed = p.removed_from_api_at_ns.map(s);
        let mut bands: Vec<(f64, f64, &str)> = Vec::new();
        for (j, (t, ph)) in p.phases.iter().enumerate() {
            let end = p
                .phases
                .get(j + 1)
                .map(|n| s(n.0))
                .or(removed)
                .unwrap_or(bar_end);
            bands.push((s(*t), end, ph));
        }
        if let Some(r) = removed {
            bands.push((r, self.x_end, "Deleted"));
        }
        let (b0, b1) = row.band();
        for (x0, x1, ph) in bands {
            if x1 <= x0 {
                continue;
            }
            let c = phase_color(ph);
            e(chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, b0), (x1, b1)],
                c.filled(),
            ))))?;
            let (px0, py0) = chart.backend_coord(&(x0, b1));
            let (px1, py1) = chart.backend_coord(&(x1, b0));
            let style = font(11.0).pos(Pos::new(HPos::Center, VPos::Center));
            let (tw, _) = e(area.estimate_text_size(ph, &style))?;
            if (px1 - px0) as u32 > tw + 6 {
                e(area.draw(&Text::new(
                    ph.to_string(),
                    ((px0 + px1) / 2, (py0 + py1) / 2),
                    style,
                )))?;
            }
        }
        Ok(())
    }

    fn draw_ready<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        p: &PodSummary,
        row: &Row,
        bar_end: f64,
    ) -> Result<(), String> {
        let s = |ns: u64| (ns as f64 / NS).min(self.x_end);
        let end = p.removed_from_api_at_ns.map(s).unwrap_or(bar_end);
        let (y0, y1) = row.ready();
        for (j, (t, ready)) in p.ready_transitions.iter().enumerate() {
            if !ready {
                continue;
            }
            let x1 = p
                .ready_transitions
                .get(j + 1)
                .map(|n| s(n.0))
                .unwrap_or(end);
            e(chart.draw_series(std::iter::once(Rectangle::new(
                [(s(*t), y0), (x1, y1)],
                READY.filled(),
            ))))?;
        }
        Ok(())
    }

    fn draw_containers<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        p: &PodSummary,
        row: &Row,
        bar_end: f64,
        markers: bool,
    ) -> Result<(), String> {
        let s = |ns: u64| (ns as f64 / NS).min(self.x_end);
        let power_off = self.out.metrics.power_off_at_ns.map(s);
        let probes = self.probe_failures.get(&p.uid);
        for (j, (_, c)) in p.labelled_containers().enumerate() {
            let (y0, y1) = row.container(j);
            let mid = (y0 + y1) / 2.0;
            if !markers {
                // One bar per start, a pixel short at each end and in alternating shades,
                // so that a restart right after an exit still shows as a new bar.
                let px = self.x_end / (WIDTH - LEFT - RIGHT) as f64;
                for (n, st) in c.started_at_ns.iter().enumerate() {
                    let x1 = c.finished_at_ns.get(n).map(|t| s(*t)).unwrap_or(bar_end);
                    let x0 = s(*st);
                    let (x0, x1) = if x1 - x0 > 4.0 * px {
                        (x0 + px, x1 - px)
                    } else {
                        (x0, x1.max(x0))
                    };
                    let colour = if n % 2 == 0 { CONTAINER } else { CONTAINER_ALT };
                    e(chart.draw_series(std::iter::once(Rectangle::new(
                        [(x0, y0), (x1, y1)],
                        colour.filled(),
                    ))))?;
                }
                self.draw_hooks(chart, p, &c.name, (y0, y1), bar_end)?;
                continue;
            }
            let marker = (y1 - y0) * self.row_px;
            let size = (marker * 0.45).clamp(3.0, 7.0) as i32;
            for t in &c.sigterms_at_ns {
                let x = s(*t);
                e(chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, y0), (x, y1)],
                    SIGTERM.stroke_width(2),
                ))))?;
                e(chart.draw_series(std::iter::once(TriangleMarker::new(
                    (x, y1),
                    size,
                    SIGTERM.filled(),
                ))))?;
            }
            for t in &c.grace_expiry_kills_at_ns {
                e(chart.draw_series(std::iter::once(Cross::new(
                    (s(*t), mid),
                    size,
                    SIGKILL.stroke_width(3),
                ))))?;
            }
            if let (true, Some(x)) = (c.killed_by_power_off, power_off) {
                e(chart.draw_series(std::iter::once(Cross::new(
                    (x, mid),
                    size,
                    POWER_OFF.stroke_width(3),
                ))))?;
            }
            for (t, _, _) in probes
                .into_iter()
                .flatten()
                .filter(|(_, name, _)| *name == c.name)
            {
                e(chart.draw_series(std::iter::once(Circle::new(
                    (s(*t), y0),
                    (size - 1).max(2),
                    PROBE_FAIL.filled(),
                ))))?;
            }
        }
        Ok(())
    }

    /// The container's hook calls: a thin span along the bottom of its bar slot (a failed
    /// hook's in its own colour).
    fn draw_hooks<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        p: &PodSummary,
        name: &str,
        (y0, y1): (f64, f64),
        bar_end: f64,
    ) -> Result<(), String> {
        let s = |ns: u64| (ns as f64 / NS).min(self.x_end);
        let px = self.x_end / (WIDTH - LEFT - RIGHT) as f64;
        let h = (y1 - y0) * 0.4;
        let spans = self.hooks.get(&p.uid).into_iter().flatten();
        for sp in spans.filter(|sp| sp.container == name) {
            let colour = match sp.kind {
                _ if sp.failed => HOOK_FAILED,
                HookKind::PostStart => POST_START,
                HookKind::PreStop => PRE_STOP,
            };
            let x0 = s(sp.begin);
            // At least three pixels wide, so a hook that fails at once still shows.
            let x1 = sp.end.map_or(bar_end, s).max(x0 + 3.0 * px);
            e(chart.draw_series(std::iter::once(Rectangle::new(
                [(x0, y0 - h * 0.25), (x1, y0 + h)],
                colour.filled(),
            ))))?;
        }
        Ok(())
    }

    fn draw_row_labels<DB: DrawingBackend>(
        &self,
        chart: &Chart<'_, DB>,
        area: &DrawingArea<DB, Shift>,
        p: &PodSummary,
        row: &Row,
    ) -> Result<(), String> {
        let (plot_left, _) = chart.backend_coord(&(0.0, row.top));
        let (_, y_band) = chart.backend_coord(&(0.0, (row.band().0 + row.band().1) / 2.0));
        let name = if p.is_static {
            format!("{} (static)", p.name)
        } else {
            p.name.clone()
        };
        e(area.draw(&Text::new(
            name,
            (8, y_band),
            font(13.0).pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
        let mut sub = p.uid.clone();
        if let Some(r) = &p.reason {
            sub.push_str(&format!("  {r}"));
        }
        e(area.draw(&Text::new(
            sub,
            (8, y_band + 13),
            font(10.0)
                .color(&RGBColor(110, 110, 110))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
        for (j, (label, _)) in p.labelled_containers().enumerate() {
            let (y0, y1) = row.container(j);
            let (_, py) = chart.backend_coord(&(0.0, (y0 + y1) / 2.0));
            e(area.draw(&Text::new(
                label,
                (plot_left - 6, py),
                font(10.0)
                    .color(&CONTAINER)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            )))?;
        }
        // A thin separator under each row.
        let (x_right, _) = chart.backend_coord(&(self.x_end, 0.0));
        let (_, y_bottom) = chart.backend_coord(&(0.0, row.top - row.h));
        e(area.draw(&PathElement::new(
            vec![(4, y_bottom), (x_right, y_bottom)],
            RGBColor(225, 225, 225).stroke_width(1),
        )))?;
        Ok(())
    }
}

impl Timeline<'_> {
    /// The power-off and finding lines across every row, each labelled in the strip above
    /// the rows (the power-off line wide underneath, so a finding at the same instant does
    /// not hide it).
    fn draw_vlines<DB: DrawingBackend>(
        &self,
        chart: &Chart<'_, DB>,
        main: &DrawingArea<DB, Shift>,
        total: f64,
    ) -> Result<(), String> {
        let (_, y_top) = chart.backend_coord(&(0.0, total));
        let (_, y_bottom) = chart.backend_coord(&(0.0, 0.0));
        let (places, lanes) = self.label_places();
        for (i, ((x, c, label), (left, lane))) in self.vlines().iter().zip(places).enumerate() {
            let (px, _) = chart.backend_coord(&(*x, total));
            let width = if i == 0 && *c == POWER_OFF { 5 } else { 2 };
            let ty = y_top - 3 - LANE * (lanes - lane);
            e(main.draw(&PathElement::new(
                vec![(px, ty + LANE / 2), (px, y_bottom)],
                c.mix(if width > 2 { 0.7 } else { 1.0 }).stroke_width(width),
            )))?;
            let style = font(12.0).color(c).pos(Pos::new(HPos::Left, VPos::Top));
            let tw = super::text_width(label, 12.0);
            e(main.draw(&Rectangle::new(
                [(left - 2, ty - 1), (left + tw + 2, ty + LANE - 2)],
                WHITE.filled(),
            )))?;
            e(main.draw(&Text::new(label.clone(), (left, ty), style)))?;
        }
        Ok(())
    }
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    items: &[(Swatch, &str)],
) -> Result<(), String> {
    let width = area.dim_in_pixel().0 as i32;
    let mut x = 10;
    let mut y = 8 + LEGEND_ROW as i32 / 2;
    for (sw, label) in items {
        let style = font(12.0).pos(Pos::new(HPos::Left, VPos::Center));
        let tw = label.len() as i32 * 7;
        let w = 30 + tw + 16;
        if x + w > width - 10 {
            x = 10;
            y += LEGEND_ROW as i32;
        }
        let (l, r) = (x, x + 24);
        match *sw {
            Swatch::Band(c) => e(area.draw(&Rectangle::new([(l, y - 6), (r, y + 6)], c.filled())))?,
            Swatch::Strip(c) => {
                e(area.draw(&Rectangle::new([(l, y - 3), (r, y + 3)], c.filled())))?
            }
            Swatch::Bar(c) => e(area.draw(&Rectangle::new([(l, y - 4), (r, y + 4)], c.filled())))?,
            Swatch::Triangle(c) => e(area.draw(&TriangleMarker::new((l + 12, y), 6, c.filled())))?,
            Swatch::Cross(c) => e(area.draw(&Cross::new((l + 12, y), 5, c.stroke_width(3))))?,
            Swatch::Dot(c) => e(area.draw(&Circle::new((l + 12, y), 4, c.filled())))?,
            Swatch::VLine(c) => e(area.draw(&PathElement::new(
                vec![(l + 12, y - 8), (l + 12, y + 8)],
                c.stroke_width(2),
            )))?,
        }
        e(area.draw(&Text::new(label.to_string(), (x + 30, y), style)))?;
        x += w;
    }
    Ok(())
}
