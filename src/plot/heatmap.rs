//! Finding rate against two swept parameters (`heatmap--<x>--<y>--<invariant>`): a grid of
//! cells per profile, side by side, each cell coloured by its rate (white 0 %, dark red
//! 100 %) and annotated with the rate and its 95 % interval. Points that differ only in
//! other parameters are pooled, as in the rate plots.

use super::rate::pct;
use super::sweep::{pooled_rate, Data, Point};
use super::{e, font, header, text_width, Figure};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One profile's grid: `cells[row][column]` is (rate, lo, hi), `None` without data.
pub(super) struct Panel {
    pub(super) profile: String,
    pub(super) colour: RGBColor,
    pub(super) cells: Vec<Vec<Option<(f64, f64, f64)>>>,
}

pub(super) struct HeatFigure {
    /// The column parameter and its value labels.
    pub(super) x: (String, Vec<String>),
    /// The row parameter and its value labels.
    pub(super) y: (String, Vec<String>),
    pub(super) invariant: String,
    pub(super) panels: Vec<Panel>,
}

/// A heatmap per pair of parameters (each with at least two values) and invariant.
pub(super) fn heatmap_figures(data: &Data) -> Vec<HeatFigure> {
    let mut figs = Vec::new();
    let axes: Vec<&(String, Vec<String>)> = data.axes.iter().filter(|(_, l)| l.len() > 1).collect();
    for (i, x) in axes.iter().enumerate() {
        for y in &axes[i + 1..] {
            for inv in &data.invariants {
                let panels = data
                    .profiles()
                    .into_iter()
                    .map(|profile| Panel {
                        profile: profile.to_string(),
                        colour: data.colours.of(profile),
                        cells: y
                            .1
                            .iter()
                            .map(|yl| {
                                x.1.iter()
                                    .map(|xl| {
                                        let ps: Vec<&Point> = data
                                            .points
                                            .iter()
                                            .filter(|p| {
                                                p.profile == profile
                                                    && p.labels.get(&x.0) == Some(xl)
                                                    && p.labels.get(&y.0) == Some(yl)
                                            })
                                            .collect();
                                        pooled_rate(&ps, inv)
                                    })
                                    .collect()
                            })
                            .collect(),
                    })
                    .collect();
                figs.push(HeatFigure {
                    x: (*x).clone(),
                    y: (*y).clone(),
                    invariant: inv.clone(),
                    panels,
                });
            }
        }
    }
    figs
}

const CELL_H: i32 = 52;
const GAP: i32 = 36;
const PAD: i32 = 24;
/// Rows above the grid: the row parameter's name, then the panel titles.
const ABOVE: i32 = 24 + 26;
/// Rows below the grid: the column labels, then the column parameter's name.
const BELOW: i32 = 26 + 30;

impl HeatFigure {
    fn cell_w(&self) -> i32 {
        let widest = self
            .x
            .1
            .iter()
            .map(|l| text_width(l, 12.0))
            .max()
            .unwrap_or(0);
        (widest + 16).max(110)
    }

    fn label_w(&self) -> i32 {
        let widest = self
            .y
            .1
            .iter()
            .map(|l| text_width(l, 12.0))
            .max()
            .unwrap_or(0);
        widest + 16
    }

    fn panel_w(&self) -> i32 {
        self.cell_w() * self.x.1.len() as i32
    }
}

/// White at 0, dark red at 1.
fn shade(r: f64) -> RGBColor {
    let r = r.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * r).round() as u8;
    RGBColor(lerp(255.0, 165.0), lerp(250.0, 15.0), lerp(245.0, 21.0))
}

impl Figure for HeatFigure {
    fn size(&self) -> (u32, u32) {
        let n = self.panels.len().max(1) as i32;
        let w = PAD + self.label_w() + n * self.panel_w() + (n - 1) * GAP + PAD;
        let w = w.max(text_width(&self.y.0, 13.0) + 2 * PAD).max(640);
        let h = 36 + ABOVE + CELL_H * self.y.1.len() as i32 + BELOW + 12;
        (w as u32, h as u32)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let title = if self.invariant == "any" {
            "runs with any finding".to_string()
        } else {
            format!("finding rate: {}", self.invariant)
        };
        let body = header(root, &title, &[])?;
        let left = PAD + self.label_w();
        let top = ABOVE;
        let (cw, pw) = (self.cell_w(), self.panel_w());
        let rows = self.y.1.len() as i32;
        e(body.draw(&Text::new(
            format!("rows: {}", self.y.0),
            (PAD, 4),
            font(13.0).pos(Pos::new(HPos::Left, VPos::Top)),
        )))?;
        for (j, l) in self.y.1.iter().enumerate() {
            let cy = top + CELL_H * j as i32 + CELL_H / 2;
            e(body.draw(&Text::new(
                l.clone(),
                (left - 8, cy),
                font(12.0).pos(Pos::new(HPos::Right, VPos::Center)),
            )))?;
        }
        for (k, p) in self.panels.iter().enumerate() {
            let x0 = left + k as i32 * (pw + GAP);
            e(body.draw(&Rectangle::new(
                [(x0, top - 19), (x0 + 20, top - 9)],
                p.colour.filled(),
            )))?;
            e(body.draw(&Text::new(
                format!("profile {}", p.profile),
                (x0 + 26, top - 14),
                font(13.0).pos(Pos::new(HPos::Left, VPos::Center)),
            )))?;
            for (j, row) in p.cells.iter().enumerate() {
                for (i, cell) in row.iter().enumerate() {
                    let (cx, cy) = (x0 + cw * i as i32, top + CELL_H * j as i32);
                    // Inset by a pixel: a white line between cells.
                    let rect = [(cx + 1, cy + 1), (cx + cw - 1, cy + CELL_H - 1)];
                    let Some((r, lo, hi)) = cell else {
                        e(body.draw(&Rectangle::new(rect, RGBColor(235, 235, 235).filled())))?;
                        continue;
                    };
                    e(body.draw(&Rectangle::new(rect, shade(*r).filled())))?;
                    let ink = if *r > 0.55 { WHITE } else { BLACK };
                    let mid = cx + cw / 2;
                    e(body.draw(&Text::new(
                        pct(*r),
                        (mid, cy + CELL_H / 2 - 8),
                        font(14.0)
                            .color(&ink)
                            .pos(Pos::new(HPos::Center, VPos::Center)),
                    )))?;
                    e(body.draw(&Text::new(
                        format!("[{}, {}]", pct(*lo), pct(*hi)),
                        (mid, cy + CELL_H / 2 + 10),
                        font(10.0)
                            .color(&ink)
                            .pos(Pos::new(HPos::Center, VPos::Center)),
                    )))?;
                }
            }
            for (i, l) in self.x.1.iter().enumerate() {
                e(body.draw(&Text::new(
                    l.clone(),
                    (x0 + cw * i as i32 + cw / 2, top + CELL_H * rows + 8),
                    font(12.0).pos(Pos::new(HPos::Center, VPos::Top)),
                )))?;
            }
        }
        let n = self.panels.len().max(1) as i32;
        let grid_w = n * pw + (n - 1) * GAP;
        e(body.draw(&Text::new(
            format!("columns: {}", self.x.0),
            (left + grid_w / 2, top + CELL_H * rows + 34),
            font(13.0).pos(Pos::new(HPos::Center, VPos::Top)),
        )))?;
        Ok(())
    }
}
