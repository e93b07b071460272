//! Metric distributions per point (`metric--<metric>`): for each metric of the summary
//! (containers alive at power-off, statuses lost, time to terminated per pod, ...) a box per
//! point and profile, the profiles side by side: the box spans p25 to p75, a line marks
//! the median, whiskers reach the minimum and the maximum, a dot marks the mean. So the
//! swept parameter's effect on a distribution shows point by point.

use super::sweep::Data;
use super::{e, fmt_secs, font, header, text_width, Figure};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

/// A metric's distribution over a point's runs (what `summary.json` keeps, or computed
/// from raw samples). Missing quantiles are not drawn.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dist {
    pub(crate) n: Option<u64>,
    pub(crate) mean: Option<f64>,
    pub(crate) min: Option<f64>,
    pub(crate) p25: Option<f64>,
    pub(crate) p50: f64,
    pub(crate) p75: Option<f64>,
    pub(crate) max: Option<f64>,
}

impl Dist {
    /// From an array of integer samples or an object of percentiles (`p50` required).
    pub(crate) fn from_json(v: &Value) -> Option<Dist> {
        match v {
            Value::Array(a) => {
                let mut xs: Vec<u64> = a.iter().map(Value::as_u64).collect::<Option<_>>()?;
                if xs.is_empty() {
                    return None;
                }
                xs.sort_unstable();
                let q = |p: u64| crate::results::percentile(&xs, p) as f64;
                let sum: u128 = xs.iter().map(|x| u128::from(*x)).sum();
                Some(Dist {
                    n: Some(xs.len() as u64),
                    mean: Some(sum as f64 / xs.len() as f64),
                    min: Some(xs[0] as f64),
                    p25: Some(q(25)),
                    p50: q(50),
                    p75: Some(q(75)),
                    max: xs.last().map(|x| *x as f64),
                })
            }
            Value::Object(o) => {
                let f = |k: &str| o.get(k).and_then(Value::as_f64).filter(|x| x.is_finite());
                Some(Dist {
                    n: o.get("n").and_then(Value::as_u64),
                    mean: f("mean"),
                    min: f("min"),
                    p25: f("p25"),
                    p50: f("p50")?,
                    p75: f("p75"),
                    max: f("max"),
                })
            }
            _ => None,
        }
    }

    fn top(&self) -> f64 {
        [self.max, self.p75, self.mean]
            .into_iter()
            .flatten()
            .fold(self.p50, f64::max)
    }

    fn bottom(&self) -> f64 {
        [self.min, self.p25, self.mean]
            .into_iter()
            .flatten()
            .fold(self.p50, f64::min)
    }
}

/// Metrics that count the simulation's own work, not the kubelet's behaviour: not plotted.
const BOOKKEEPING: [&str; 2] = ["events", "simulatedNs"];

/// Titles of the metrics `podsim sweep` writes (a per-pod metric is `name/pod`).
fn title_of(metric: &str) -> String {
    let (base, pod) = match metric.split_once('/') {
        Some((b, p)) => (b, Some(p)),
        None => (metric, None),
    };
    let t = match base {
        "timeToTerminatedNs" => "time from deletion request to all containers stopped",
        "timeToRemovedNs" => "time from deletion request to removal from the API",
        "containersAliveAtPowerOff" => "containers alive at power-off",
        "statusesLostAtPowerOff" => "statuses lost at power-off",
        "killsAtGraceExpiry" => "SIGKILLs at grace expiry",
        "containerStarts" => "container starts",
        "restarts" => "container restarts",
        "containersRunningAtEnd" => "containers running at the end",
        "evictions" => "evictions",
        "kubeletRestarts" => "kubelet restarts",
        "shutdownToPowerOffNs" => "time from shutdown request to power-off",
        "nodeReclaims" => "node-level reclaims before a disk eviction",
        "imagesRemoved" => "images removed",
        "firstEvictionNs" => "time of the first eviction",
        other => other,
    };
    match pod {
        Some(p) => format!("{t}: pod {p}"),
        None => t.to_string(),
    }
}

/// One profile's boxes, one per x slot (`None`: no data there).
pub(super) struct Series {
    pub(super) profile: String,
    pub(super) colour: RGBColor,
    pub(super) boxes: Vec<Option<Dist>>,
}

pub(super) struct BoxFigure {
    pub(super) metric: String,
    /// Nanoseconds, drawn in seconds (else a count).
    seconds: bool,
    /// Each x slot's tick label, one line per parameter.
    slots: Vec<Vec<String>>,
    x_desc: String,
    series: Vec<Series>,
}

/// The x slots: the values of the one parameter, or every combination of values the points
/// have (in the sweep's order), or a single slot without parameters.
fn slots(data: &Data) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for p in &data.points {
        let s: Vec<String> = data
            .axes
            .iter()
            .map(|(path, _)| p.labels.get(path).cloned().unwrap_or_else(|| "-".into()))
            .collect();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    // In the order of the axes' values (the first axis slowest), as the grid is.
    let rank = |s: &Vec<String>| -> Vec<usize> {
        data.axes
            .iter()
            .zip(s)
            .map(|((_, ls), l)| ls.iter().position(|x| x == l).unwrap_or(usize::MAX))
            .collect()
    };
    out.sort_by_key(rank);
    out
}

/// A box figure per metric that is not zero everywhere and differs somewhere (with more
/// than one point or profile).
pub(super) fn box_figures(data: &Data, notes: &mut Vec<String>) -> Vec<BoxFigure> {
    let mut keys: Vec<&String> = data.points.iter().flat_map(|p| p.metrics.keys()).collect();
    keys.sort();
    keys.dedup();
    if keys.is_empty() {
        notes.push("no point has \"metrics\": no metric plots".into());
        return Vec::new();
    }
    let slots = slots(data);
    let x_desc = if data.axes.is_empty() {
        "all runs".to_string()
    } else {
        data.axes
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let mut figs = Vec::new();
    for key in keys {
        if BOOKKEEPING.contains(&key.as_str()) {
            continue;
        }
        let all: Vec<&Dist> = data
            .points
            .iter()
            .filter_map(|p| p.metrics.get(key))
            .collect();
        if all.iter().all(|d| d.top() <= 0.0) {
            continue;
        }
        if data.points.len() > 1
            && all.len() == data.points.len()
            && all.iter().all(|d| *d == all[0])
        {
            continue;
        }
        let series = data
            .profiles()
            .into_iter()
            .map(|profile| Series {
                profile: profile.to_string(),
                colour: data.colours.of(profile),
                boxes: slots
                    .iter()
                    .map(|s| {
                        data.points
                            .iter()
                            .find(|p| {
                                p.profile == profile
                                    && data.axes.iter().zip(s).all(|((path, _), l)| {
                                        p.labels.get(path).map_or("-", String::as_str) == l
                                    })
                            })
                            .and_then(|p| p.metrics.get(key).cloned())
                    })
                    .collect(),
            })
            .collect();
        let base = key.split('/').next().unwrap_or(key);
        figs.push(BoxFigure {
            metric: key.clone(),
            seconds: base.ends_with("Ns"),
            slots: slots.clone(),
            x_desc: x_desc.clone(),
            series,
        });
    }
    figs
}

const H: u32 = 600;

impl BoxFigure {
    fn slot_w(&self) -> i32 {
        let widest = self
            .slots
            .iter()
            .flatten()
            .map(|l| text_width(l, 12.0))
            .max()
            .unwrap_or(0);
        (widest + 20).max(36 * self.series.len() as i32).max(90)
    }

    fn lines(&self) -> i32 {
        self.slots.first().map_or(1, |s| s.len().max(1) as i32)
    }

    fn scale(&self) -> f64 {
        if self.seconds {
            1e-9
        } else {
            1.0
        }
    }
}

impl Figure for BoxFigure {
    fn size(&self) -> (u32, u32) {
        let w = 120 + self.slot_w() * self.slots.len() as i32 + 40;
        (w.max(960) as u32, H + 16 * (self.lines() as u32 - 1))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let legend: Vec<(String, RGBColor)> = self
            .series
            .iter()
            .map(|s| (format!("profile {}", s.profile), s.colour))
            .collect();
        let body = header(root, &title_of(&self.metric), &legend)?;
        let (body, foot) = body.split_vertically(body.dim_in_pixel().1 as i32 - 22);
        e(foot.draw(&Text::new(
            "box: p25 to p75, line: median, whiskers: min to max, dot: mean (per run of the point)",
            (12, 4),
            font(11.0).pos(Pos::new(HPos::Left, VPos::Top)),
        )))?;
        let k = self.scale();
        let boxes = || self.series.iter().flat_map(|s| s.boxes.iter().flatten());
        let hi = boxes().map(|d| d.top() * k).fold(0.0f64, f64::max);
        let lo = boxes().map(|d| d.bottom() * k).fold(f64::MAX, f64::min);
        // Counts from 0; times around their range (never below 0).
        let (y0, y1) = if self.seconds {
            let (a, b) = super::axis_range(lo.min(hi), hi);
            (a.max(0.0), b)
        } else {
            (0.0, (hi * 1.08).max(1.0))
        };
        let n = self.slots.len().max(1);
        let mut chart = e(ChartBuilder::on(&body)
            .margin(12)
            .margin_top(4)
            .x_label_area_size(24 + 16 * self.lines() + 22)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, y0..y1))?;
        let yfmt = |y: &f64| {
            if self.seconds {
                fmt_secs(*y)
            } else {
                let t = format!("{y:.2}");
                t.trim_end_matches('0').trim_end_matches('.').to_string()
            }
        };
        e(chart
            .configure_mesh()
            .x_labels(0)
            .disable_x_mesh()
            .y_label_formatter(&yfmt)
            .y_desc(if self.seconds { "seconds" } else { "per run" })
            .x_desc(self.x_desc.clone())
            .label_style(font(12.0))
            .axis_desc_style(font(13.0))
            .light_line_style(RGBColor(238, 238, 238))
            .bold_line_style(RGBColor(215, 215, 215))
            .draw())?;
        for (i, lines) in self.slots.iter().enumerate() {
            // Backend coordinates: drawn on the root.
            let (px, py) = chart.backend_coord(&(i as f64, y0));
            for (j, l) in lines.iter().enumerate() {
                e(root.draw(&Text::new(
                    l.clone(),
                    (px, py + 8 + 16 * j as i32),
                    font(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
                )))?;
            }
        }
        let m = self.series.len().max(1) as f64;
        let slot = 0.7 / m;
        for (j, s) in self.series.iter().enumerate() {
            let dx = (j as f64 - (m - 1.0) / 2.0) * slot;
            for (i, d) in s.boxes.iter().enumerate() {
                if let Some(d) = d {
                    draw_box(&mut chart, d, i as f64 + dx, slot * 0.4, k, s.colour)?;
                }
            }
        }
        Ok(())
    }
}

type Chart<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// One box at `x`, `half` wide on each side, values scaled by `k`.
fn draw_box<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    d: &Dist,
    x: f64,
    half: f64,
    k: f64,
    c: RGBColor,
) -> Result<(), String> {
    let med = d.p50 * k;
    let whisker = c.stroke_width(1);
    let (q1, q3) = (d.p25.map_or(med, |v| v * k), d.p75.map_or(med, |v| v * k));
    if let Some(mn) = d.min {
        e(chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, mn * k), (x, q1)],
            whisker,
        ))))?;
        e(chart.draw_series(std::iter::once(PathElement::new(
            vec![(x - half / 2.0, mn * k), (x + half / 2.0, mn * k)],
            whisker,
        ))))?;
    }
    if let Some(mx) = d.max {
        e(chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, q3), (x, mx * k)],
            whisker,
        ))))?;
        e(chart.draw_series(std::iter::once(PathElement::new(
            vec![(x - half / 2.0, mx * k), (x + half / 2.0, mx * k)],
            whisker,
        ))))?;
    }
    e(chart.draw_series([
        Rectangle::new([(x - half, q1), (x + half, q3)], c.mix(0.35).filled()),
        Rectangle::new([(x - half, q1), (x + half, q3)], c.stroke_width(1)),
    ]))?;
    e(chart.draw_series(std::iter::once(PathElement::new(
        vec![(x - half, med), (x + half, med)],
        c.stroke_width(3),
    ))))?;
    if let Some(mean) = d.mean {
        e(chart.draw_series([
            Circle::new((x, mean * k), 3, WHITE.filled()),
            Circle::new((x, mean * k), 3, c.stroke_width(1)),
        ]))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_from_samples_and_percentiles() {
        let d = Dist::from_json(&serde_json::json!([4, 1, 3, 2])).unwrap();
        assert_eq!(
            (d.min, d.p50, d.max, d.n),
            (Some(1.0), 2.0, Some(4.0), Some(4))
        );
        let d = Dist::from_json(&serde_json::json!({"n": 3, "p50": 5, "max": 9})).unwrap();
        assert_eq!((d.p25, d.p50, d.max), (None, 5.0, Some(9.0)));
        assert!(Dist::from_json(&serde_json::json!({"max": 9})).is_none());
        assert!(Dist::from_json(&serde_json::json!([])).is_none());
        assert!(Dist::from_json(&serde_json::json!("x")).is_none());
    }

    #[test]
    fn metric_titles() {
        assert_eq!(
            title_of("timeToTerminatedNs/web"),
            "time from deletion request to all containers stopped: pod web"
        );
        assert_eq!(title_of("somethingNew"), "somethingNew");
    }
}
