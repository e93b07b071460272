//! Plots: the per-pod timeline of one run (`podsim run --timeline FILE`) and the plots of a
//! sweep result directory (`podsim plot DIR`). Drawn with `plotters` into SVG or PNG, with
//! an embedded DejaVu Sans subset (`assets/fonts/`) registered as `sans-serif`, so nothing
//! depends on the machine's fonts. Every file is written to a temporary name and renamed.
//!
//! # Input of `podsim plot DIR`: `DIR/summary.json`
//!
//! `podsim plot` reads only `DIR/summary.json` (never runs a simulation) and writes
//! `DIR/plots/*.svg` and `*.png` (or into `--out`). The schema (every field optional unless
//! marked; a missing or malformed field skips the plot that needs it, with a note on
//! stderr):
//!
//! ```text
//! {
//!   "cells": [                                    // required (or "points"): one per (values, profile)
//!     {
//!       "parameters": {"<path>": <value>, ...},   // the swept values: YAML text as `--set` takes
//!                                                 //   it ("10s", "{fixed: 1s}"), a number or a boolean
//!       "labels": {"<path>": "fixed 1s", ...},    // their labels (default: made from the values)
//!       "profile": "current",                     // behaviour profile; absent: "(none)"
//!       "runs": 200,                              // runs at this point (N)
//!       "anyFinding": {"runs": 5, ...},           // as a finding, plotted as `any`
//!       "findings": {                             // per invariant, over the N runs (absent: 0):
//!         "<invariant>": {"runs": 3,              //   runs with at least one finding of it (k)
//!                         "rate": 0.015,          //   k / N
//!                         "ci95": [0.005, 0.043]} //   95 % interval of the rate (Wilson)
//!       },
//!       "metrics": {                              // per metric, over the point's runs: raw
//!         "timeToTerminatedNs/web": {"n": 200,    //   integer samples, or percentiles
//!           "mean": 2.1e9, "min": 2e9, "p25": 2e9, "p50": 2.1e9, "p75": 2.2e9, "max": 3e9}
//!       }
//!     }
//!   ],
//!   "parameters": [{"path": "<path>", "labels": [...]}] // the axes and their values' order
//! }
//! ```
//!
//! Plots written (`sweep.rs` reads, the figures are in `rate.rs`, `heatmap.rs` and
//! `boxplot.rs`); every profile is in every plot, each with its colour ([`Colours`]):
//!
//! * `rate--<parameter>--<invariant>`, for every swept parameter and every invariant: the
//!   finding rate against the parameter's values, a series per profile. Points that differ
//!   only in other parameters are pooled: k and N are summed and the interval is the Wilson
//!   interval of the pooled counts (a single point keeps its own `rate` and `ci95`). Labels
//!   that all parse as numbers or Go-style durations give a numeric axis (durations in
//!   seconds), drawn as lines with the interval as a band; otherwise the labels are
//!   categories in the sweep's order, drawn as points with error bars.
//! * `heatmap--<x>--<y>--<invariant>`, for every pair of parameters with two values or more:
//!   the rate per cell, a grid per profile.
//! * `metric--<metric>`: a box per point and profile for each metric that varies.

mod boxplot;
mod heatmap;
pub(crate) mod hook_spans;
mod rate;
pub(crate) mod sweep;
pub(crate) mod timeline;

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::Once;

/// The embedded font (a DejaVu Sans subset; licence in `assets/fonts/LICENSE-DejaVu.txt`).
pub(crate) static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf");

/// The family every plot uses.
pub(crate) const FAMILY: &str = "sans-serif";

static REGISTER: Once = Once::new();

/// Register the embedded font as `sans-serif` (once per process).
pub(crate) fn register_font() {
    REGISTER.call_once(|| {
        if plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_err() {
            // The font is compiled in and checked by a unit test: this cannot happen.
            panic!("the embedded DejaVu Sans subset is not a valid font");
        }
    });
}

/// Something that can be drawn on any plotters backend.
pub(crate) trait Figure {
    /// Size in pixels.
    fn size(&self) -> (u32, u32);
    /// Draw on `root` (already filled white).
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Output format, from the file name's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Svg,
    Png,
}

impl Format {
    pub(crate) fn of(path: &Path) -> Result<Self, String> {
        match path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .as_deref()
        {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(format!(
                "{}: the file name must end in .svg or .png",
                path.display()
            )),
        }
    }
}

/// Map any displayable plotters error to a string.
pub(crate) fn e<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<T, String> {
    r.map_err(|e| e.to_string())
}

/// Render `fig` as SVG text.
pub(crate) fn render_svg(fig: &impl Figure) -> Result<String, String> {
    register_font();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, fig.size()).into_drawing_area();
        e(root.fill(&WHITE))?;
        fig.draw(&root)?;
        e(root.present())?;
    }
    Ok(s)
}

/// `dir/.stem.tmp-<pid>.ext` next to `path` (the extension is kept: the PNG encoder picks
/// the format from it).
fn tmp_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let ext = path
        .extension()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    path.with_file_name(format!(".{stem}.tmp-{}.{ext}", std::process::id()))
}

/// Write `fig` to `path` (SVG or PNG by extension), atomically: a temporary file in the
/// same directory, then a rename (a device, FIFO or symbolic link is not replaced: see
/// `crate::outfile`).
pub(crate) fn write_figure(fig: &impl Figure, path: &Path) -> Result<(), String> {
    let fmt = Format::of(path)?;
    match fmt {
        Format::Svg => {
            let s = render_svg(fig).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            crate::outfile::write_bytes(path, s.as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        Format::Png => crate::outfile::write_via_file(path, tmp_path, |tmp| {
            // The PNG encoder reports a file it cannot write as a nest of debug dumps: a
            // file that cannot be created is found here first, with the OS's words.
            std::fs::File::create(tmp).map_err(|e| e.to_string())?;
            register_font();
            let root = BitMapBackend::new(tmp, fig.size()).into_drawing_area();
            e(root.fill(&WHITE))?;
            fig.draw(&root)?;
            root.present().map_err(|e| encoder_error(&e.to_string()))
        }),
    }
}

/// The OS error inside a PNG encoder's error text (`... Os { code: 28, kind: StorageFull,
/// message: "No space left on device" } ...` -> `No space left on device (os error 28)`),
/// else the text after a short preface.
fn encoder_error(text: &str) -> String {
    let os = (|| {
        let rest = &text[text.find("Os { code: ")? + 11..];
        let code = &rest[..rest.find(',')?];
        let msg = &rest[rest.find("message: \"")? + 10..];
        let msg = &msg[..msg.find('"')?];
        Some(format!("{msg} (os error {code})"))
    })();
    os.unwrap_or_else(|| format!("the PNG encoder failed: {text}"))
}

/// A text style in the embedded family.
pub(crate) fn font(size: f64) -> TextStyle<'static> {
    TextStyle::from((FAMILY, size).into_font())
}

/// The largest magnitude an axis reaches: values beyond it are drawn at its edge. Far
/// from `f64::MAX`, so that spans, padding and tick steps stay finite.
pub(crate) const AXIS_LIMIT: f64 = 1e300;

/// A drawable axis range around the data range `mn..=mx`, padded 5 %: always finite,
/// never empty, and wide enough relative to its magnitude that tick steps are
/// representable (plotters steps through ticks; a range of infinite or zero width makes it
/// loop forever). NaN or reversed ends give the range around 0; infinite values or values
/// past [`AXIS_LIMIT`] are clamped to it; one value (or a span too narrow for f64 ticks)
/// gets a range half its magnitude wide on each side.
pub(crate) fn axis_range(mn: f64, mx: f64) -> (f64, f64) {
    let (mn, mx) = if mn.is_nan() || mx.is_nan() || mn > mx {
        (0.0, 0.0)
    } else {
        (
            mn.clamp(-AXIS_LIMIT, AXIS_LIMIT),
            mx.clamp(-AXIS_LIMIT, AXIS_LIMIT),
        )
    };
    let mag = mn.abs().max(mx.abs()).max(1.0);
    let span = mx - mn;
    let pad = if span > mag * 1e-9 {
        span * 0.05
    } else {
        mag * 0.5
    };
    (mn - pad, mx + pad)
}

/// Seconds with up to three decimals and no trailing zeros: `12.5s`, `0.042s`, `3s`.
pub(crate) fn fmt_secs(s: f64) -> String {
    if !s.is_finite() || s.abs() >= 1e9 {
        return format!("{s:.3e}s");
    }
    let t = format!("{s:.3}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    let t = if t == "-0" { "0" } else { t };
    format!("{t}s")
}

/// A qualitative palette (colour-blind friendly, after Okabe and Ito). The first eight are
/// the profiles' colours in [`crate::names`]' order (the releases, oldest first, then current).
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(213, 94, 0),    // v1.21
    RGBColor(230, 159, 0),   // v1.22
    RGBColor(204, 121, 167), // v1.23
    RGBColor(86, 180, 233),  // v1.25
    RGBColor(0, 158, 115),   // v1.27
    RGBColor(153, 153, 51),  // v1.29
    RGBColor(136, 34, 85),   // v1.31
    RGBColor(0, 114, 178),   // current
    RGBColor(120, 120, 120), // other names
    RGBColor(60, 60, 60),
];

/// One colour per profile, the same in every plot: a known profile has its place in the
/// profile list (the releases `v1.21` to `v1.31`, then `current`; the colours of `v1.21`,
/// `v1.22`, `v1.27` and `current` are those of the four profiles before the releases came),
/// whichever profiles a sweep ran; other names (a hand-made summary) take the next colours
/// in name order.
#[derive(Clone, Debug)]
pub(crate) struct Colours {
    known: Vec<&'static str>,
    others: Vec<String>,
}

impl Colours {
    /// Colours for a summary whose profiles are `profiles` (any order, repeats allowed).
    pub(crate) fn new<'a>(profiles: impl IntoIterator<Item = &'a str>) -> Colours {
        let known = crate::names().profiles;
        let mut others: Vec<String> = profiles
            .into_iter()
            .filter(|p| !known.contains(p))
            .map(str::to_owned)
            .collect();
        others.sort();
        others.dedup();
        Colours { known, others }
    }

    /// The colour of `profile`.
    pub(crate) fn of(&self, profile: &str) -> RGBColor {
        let i = match self.known.iter().position(|k| *k == profile) {
            Some(i) => i,
            None => self.known.len() + self.others.iter().position(|o| o == profile).unwrap_or(0),
        };
        PALETTE[i % PALETTE.len()]
    }

    /// `profiles` in legend order: known ones in profile order, then the others by name.
    pub(crate) fn order<'a>(&self, profiles: &[&'a str]) -> Vec<&'a str> {
        let mut v: Vec<&'a str> = profiles.to_vec();
        v.sort_by_key(|p| {
            let k = self.known.iter().position(|k| k == p).unwrap_or(usize::MAX);
            (k, p.to_string())
        });
        v.dedup();
        v
    }
}

/// The width in pixels of `text` in the embedded font at `size` (an estimate for layout).
pub(crate) fn text_width(text: &str, size: f64) -> i32 {
    register_font();
    font(size).font.box_size(text).map_or(
        text.chars().count() as i32 * (size as i32) * 6 / 10,
        |(w, _)| w as i32,
    )
}

/// Height of the title and legend strip above a chart with `entries` legend entries at
/// width `width`.
pub(crate) fn header_height(entries: &[String], width: i32) -> i32 {
    36 + 22 * legend_rows(entries, width)
}

fn legend_rows(entries: &[String], width: i32) -> i32 {
    if entries.is_empty() {
        return 0;
    }
    let mut rows = 1;
    let mut x = 16;
    for t in entries {
        let w = 26 + text_width(t, 13.0) + 24;
        if x + w > width - 16 && x > 16 {
            rows += 1;
            x = 16;
        }
        x += w;
    }
    rows
}

/// Draws the title and, below it, the legend (a swatch and a text per entry, wrapped to
/// the width) in a strip of its own at the top of `root`, and returns the area below it:
/// the legend never covers data.
pub(crate) fn header<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    entries: &[(String, RGBColor)],
) -> Result<DrawingArea<DB, Shift>, String> {
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let (w, _) = root.dim_in_pixel();
    let texts: Vec<String> = entries.iter().map(|(t, _)| t.clone()).collect();
    let h = header_height(&texts, w as i32);
    let (top, body) = root.split_vertically(h);
    e(top.draw(&Text::new(
        title.to_string(),
        (w as i32 / 2, 8),
        font(18.0).pos(Pos::new(HPos::Center, VPos::Top)),
    )))?;
    let (mut x, mut y) = (16, 36 + 10);
    for (t, c) in entries {
        let ew = 26 + text_width(t, 13.0) + 24;
        if x + ew > w as i32 - 16 && x > 16 {
            x = 16;
            y += 22;
        }
        e(top.draw(&Rectangle::new([(x, y - 5), (x + 20, y + 5)], c.filled())))?;
        e(top.draw(&Text::new(
            t.clone(),
            (x + 26, y),
            font(13.0).pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
        x += ew;
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_ranges_are_finite_and_wide() {
        let ok = |(a, b): (f64, f64)| {
            assert!(a.is_finite() && b.is_finite() && b > a, "{a}..{b}");
            assert!(b - a > a.abs().max(b.abs()) * 1e-10, "{a}..{b}");
        };
        ok(axis_range(-1e308, 1e308));
        ok(axis_range(f64::NEG_INFINITY, f64::INFINITY));
        ok(axis_range(1e308, 1e308));
        ok(axis_range(f64::NAN, 1.0));
        ok(axis_range(3.0, 3.0));
        ok(axis_range(1e20, 1e20 + 1.0));
        ok(axis_range(5.0, 1.0));
        assert_eq!(axis_range(0.0, 10.0), (-0.5, 10.5));
    }

    #[test]
    fn embedded_font_parses_and_covers_latin1() {
        register_font();
        let (w, h) = e(font(14.0).font.box_size("Pending Running Succeeded äéß")).unwrap();
        assert!(w > 100 && h > 5, "{w}x{h}");
    }

    #[test]
    fn seconds_format() {
        assert_eq!(fmt_secs(12.5), "12.5s");
        assert_eq!(fmt_secs(3.0), "3s");
        assert_eq!(fmt_secs(0.0421), "0.042s");
        assert_eq!(fmt_secs(-0.0001), "0s");
    }

    #[test]
    fn profile_colours_do_not_depend_on_the_sweep() {
        let a = Colours::new(["current"]);
        let b = Colours::new(["v1.21", "current", "mine"]);
        assert_eq!(a.of("current"), b.of("current"));
        assert_ne!(b.of("v1.21"), b.of("current"));
        assert_ne!(b.of("mine"), b.of("current"));
        assert_eq!(
            b.order(&["mine", "current", "v1.21"]),
            ["v1.21", "current", "mine"]
        );
        // Every profile (7 releases and `current`) has a colour of its own.
        let all = Colours::new(crate::kubelet::profile::PROFILES);
        let mut c: Vec<_> = crate::kubelet::profile::PROFILES
            .iter()
            .map(|p| all.of(p))
            .map(|RGBColor(r, g, b)| (r, g, b))
            .collect();
        c.sort();
        c.dedup();
        assert_eq!(c.len(), crate::kubelet::profile::PROFILES.len());
        assert_eq!(all.of("current"), RGBColor(0, 114, 178));
    }

    #[test]
    fn encoder_errors_read_as_sentences() {
        let t = r#"backend error: Drawing backend error: ImageError(IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" }))"#;
        assert_eq!(encoder_error(t), "No space left on device (os error 28)");
        assert_eq!(encoder_error("odd"), "the PNG encoder failed: odd");
    }

    #[test]
    fn tmp_name_keeps_extension() {
        let t = tmp_path(Path::new("/x/y/a.png"));
        assert_eq!(t.extension().unwrap(), "png");
        assert!(t
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".a.tmp-"));
    }
}
