//! Finding rate against one swept parameter (`rate--<parameter>--<invariant>`), one series
//! per profile: on a numeric axis (numbers, durations) a line through the rates with the
//! 95 % interval as a band; on a categorical axis (distributions, strings, booleans) a point
//! per category with an error bar, the profiles side by side, and no line between
//! categories (their order means nothing).

use super::sweep::{parse_value, pooled_rate, Data, Point};
use super::{e, fmt_secs, font, header, Figure};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::collections::BTreeMap;

/// The x axis of a rate plot.
#[derive(Debug, Clone)]
pub(super) enum Axis {
    /// Numeric values (seconds when `durations`).
    Numeric { durations: bool },
    /// Categories, in this order.
    Categories(Vec<String>),
}

/// One profile's series: (x, rate, lo, hi) in x order (x is the category's index on a
/// categorical axis). Empty when the profile has no point with a rate.
#[derive(Debug, Clone)]
pub(super) struct Series {
    pub(super) profile: String,
    pub(super) colour: RGBColor,
    pub(super) points: Vec<(f64, f64, f64, f64)>,
}

pub(super) struct RateFigure {
    pub(super) parameter: String,
    pub(super) invariant: String,
    pub(super) axis: Axis,
    pub(super) series: Vec<Series>,
}

/// The axis of a parameter from its value labels: numeric when every label is a number or
/// a duration, else the labels as categories in the sweep's order.
pub(super) fn axis_of(labels: &[String]) -> Axis {
    let parsed: Vec<Option<(f64, bool)>> = labels.iter().map(|v| parse_value(v)).collect();
    if parsed.iter().all(Option::is_some) {
        Axis::Numeric {
            durations: parsed.iter().flatten().any(|(_, d)| *d),
        }
    } else {
        Axis::Categories(labels.to_vec())
    }
}

/// Every (parameter, invariant) rate figure, every profile in each.
pub(super) fn rate_figures(data: &Data, notes: &mut Vec<String>) -> Vec<RateFigure> {
    if data.axes.is_empty() {
        notes.push("no point has \"parameters\": no finding-rate plots".into());
        return Vec::new();
    }
    if data.invariants.is_empty() {
        notes.push("no point has \"findings\": no finding-rate plots".into());
        return Vec::new();
    }
    let mut figs = Vec::new();
    for (param, labels) in &data.axes {
        let axis = axis_of(labels);
        let x_of = |v: &str| -> f64 {
            match &axis {
                Axis::Numeric { .. } => parse_value(v).map_or(0.0, |x| x.0),
                Axis::Categories(c) => c.iter().position(|s| s == v).unwrap_or(0) as f64,
            }
        };
        for inv in &data.invariants {
            let mut skipped = 0;
            let mut series = Vec::new();
            for profile in data.profiles() {
                // Points that differ only in other parameters are pooled.
                let mut groups: BTreeMap<&str, Vec<&Point>> = BTreeMap::new();
                for p in data.points.iter().filter(|p| p.profile == profile) {
                    if let Some(v) = p.labels.get(param) {
                        groups.entry(v.as_str()).or_default().push(p);
                    }
                }
                let mut pts = Vec::new();
                for (v, ps) in &groups {
                    match pooled_rate(ps, inv) {
                        Some((r, lo, hi)) => pts.push((x_of(v), r, lo, hi)),
                        None => skipped += 1,
                    }
                }
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                series.push(Series {
                    profile: profile.to_string(),
                    colour: data.colours.of(profile),
                    points: pts,
                });
            }
            if skipped > 0 {
                notes.push(format!(
                    "{param} / {inv}: {skipped} point(s) without \"runs\" or a rate: left out"
                ));
            }
            if series.iter().all(|s| s.points.is_empty()) {
                continue;
            }
            figs.push(RateFigure {
                parameter: param.clone(),
                invariant: inv.clone(),
                axis: axis.clone(),
                series,
            });
        }
    }
    figs
}

pub(super) const W: u32 = 960;
pub(super) const H: u32 = 600;

/// `0.125` -> `12.5%`.
pub(super) fn pct(y: f64) -> String {
    let t = format!("{:.2}", y * 100.0);
    format!("{}%", t.trim_end_matches('0').trim_end_matches('.'))
}

fn legend(series: &[Series]) -> Vec<(String, RGBColor)> {
    series
        .iter()
        .map(|s| (format!("profile {}", s.profile), s.colour))
        .collect()
}

impl Figure for RateFigure {
    fn size(&self) -> (u32, u32) {
        (W, H)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let title = if self.invariant == "any" {
            "runs with any finding".to_string()
        } else {
            format!("finding rate: {}", self.invariant)
        };
        let body = header(root, &title, &legend(&self.series))?;
        let (x0, x1) = match &self.axis {
            Axis::Categories(c) => (-0.5, c.len() as f64 - 0.5),
            Axis::Numeric { .. } => {
                let xs = self
                    .series
                    .iter()
                    .flat_map(|l| l.points.iter().map(|p| p.0));
                let (mn, mx) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
                super::axis_range(mn, mx)
            }
        };
        let hi = self
            .series
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.3))
            .fold(0.0f64, f64::max);
        // Head-room above the highest interval: a 100 % rate stays clear of the frame.
        let y_max = (hi * 1.1).clamp(0.01, 1.06);
        // And a little room below 0: a 0 % series is drawn above the axis, not on it.
        let y_min = -y_max * 0.015;
        let mut chart = e(ChartBuilder::on(&body)
            .margin(12)
            .margin_top(4)
            .x_label_area_size(56)
            .y_label_area_size(70)
            .build_cartesian_2d(x0..x1, y_min..y_max))?;
        let durations = matches!(self.axis, Axis::Numeric { durations: true });
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
        let yfmt = |y: &f64| if *y < -1e-12 { String::new() } else { pct(*y) };
        let mut mesh = chart.configure_mesh();
        mesh.y_label_formatter(&yfmt)
            .y_desc("runs with the finding (95% interval)")
            .x_desc(self.parameter.clone())
            .label_style(font(12.0))
            .axis_desc_style(font(13.0))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215));
        match &self.axis {
            Axis::Numeric { .. } => {
                mesh.x_label_formatter(&xfmt);
            }
            Axis::Categories(_) => {
                mesh.x_labels(0).disable_x_mesh();
            }
        }
        e(mesh.draw())?;
        match &self.axis {
            Axis::Categories(cats) => {
                for (i, c) in cats.iter().enumerate() {
                    // Backend coordinates: drawn on the root.
                    let (px, py) = chart.backend_coord(&(i as f64, y_min));
                    e(root.draw(&Text::new(
                        c.clone(),
                        (px, py + 8),
                        font(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
                    )))?;
                }
                self.draw_categories(&mut chart, (x0, x1, y_max))
            }
            Axis::Numeric { .. } => self.draw_lines(&mut chart, (x0, x1)),
        }
    }
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;
use plotters::coord::types::RangedCoordf64;

impl RateFigure {
    /// Lines with interval bands, and a marker at each point.
    fn draw_lines<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        (x0, x1): (f64, f64),
    ) -> Result<(), String> {
        let n = self.series.len();
        for (i, s) in self.series.iter().enumerate() {
            let c = s.colour;
            // Earlier profiles are drawn wider and underneath, so where two profiles have
            // the same rate (both at 100 %) each shows as a band around the next.
            let width = 2 + 3 * (n - 1 - i) as u32;
            // Values past the axis limit are drawn at its edge.
            let pts: Vec<_> = s
                .points
                .iter()
                .map(|p| (p.0.clamp(x0, x1), p.1, p.2, p.3))
                .collect();
            if pts.len() > 1 {
                let mut band: Vec<(f64, f64)> = pts.iter().map(|p| (p.0, p.3)).collect();
                band.extend(pts.iter().rev().map(|p| (p.0, p.2)));
                e(chart.draw_series(std::iter::once(Polygon::new(band, c.mix(0.15).filled()))))?;
                e(chart.draw_series(LineSeries::new(
                    pts.iter().map(|p| (p.0, p.1)),
                    c.stroke_width(width),
                )))?;
            }
            for p in &pts {
                let r = 4 + 3 * (n - 1 - i) as i32;
                e(chart.draw_series(std::iter::once(Circle::new((p.0, p.1), r, c.filled()))))?;
            }
        }
        Ok(())
    }

    /// A point with an error bar per category and profile, the profiles side by side.
    fn draw_categories<DB: DrawingBackend>(
        &self,
        chart: &mut Chart<'_, DB>,
        (x0, x1, y_max): (f64, f64, f64),
    ) -> Result<(), String> {
        let (w, h) = chart.plotting_area().dim_in_pixel();
        // One pixel in data units.
        let (px, py) = ((x1 - x0) / w.max(1) as f64, y_max * 1.015 / h.max(1) as f64);
        let n = self.series.len().max(1) as f64;
        let slot = 0.6 / n;
        for (j, s) in self.series.iter().enumerate() {
            let style = s.colour.filled();
            let dx = (j as f64 - (n - 1.0) / 2.0) * slot;
            for p in &s.points {
                let x = p.0 + dx;
                let cap = (slot * 0.25).min(8.0 * px);
                // The bar and its caps are rectangles: nothing joins one category to the next.
                let bar = Rectangle::new([(x - px, p.2), (x + px, p.3)], style);
                let low = Rectangle::new([(x - cap, p.2 - py), (x + cap, p.2 + py)], style);
                let high = Rectangle::new([(x - cap, p.3 - py), (x + cap, p.3 + py)], style);
                e(chart.draw_series([bar, low, high]))?;
                e(chart.draw_series(std::iter::once(Circle::new((x, p.1), 5, style))))?;
            }
        }
        Ok(())
    }
}
