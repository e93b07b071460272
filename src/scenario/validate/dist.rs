//! Latency and delay distributions: `{fixed: D}`, `{uniform: {min: D, max: D}}`,
//! `{exponential: {mean: D}}` and `{lognormal: {median: D, p99: D}}`.

use super::primitives::{dur, exactly_one, expected, join, obj, present, Cx, Unknown};
use crate::model::Dist;
use crate::scenario::schema::{Kind, Node};
use crate::sim::Dur;

pub(super) use crate::scenario::overrides::DIST_KINDS;

pub(super) fn dist(cx: &mut Cx, n: Option<&Node>, path: &str) -> Option<Dist> {
    let n = present(n)?;
    let o = match &n.kind {
        Kind::Map(_) => obj(cx, n, path, &DIST_KINDS, Unknown::Error)?,
        _ => {
            expected(
                cx,
                n,
                path,
                "a distribution (`{fixed: D}`, `{uniform: {min: D, max: D}}`, `{exponential: {mean: D}}` or `{lognormal: {median: D, p99: D}}`)",
            );
            return None;
        }
    };
    let (k, v) = exactly_one(cx, &o, &DIST_KINDS, "a distribution", Some(&DIST_KINDS))?;
    let p = o.at(&k.name);
    let sub = |cx: &mut Cx, fields: &[&str]| -> Option<Vec<Option<Dur>>> {
        let so = obj(cx, v, &p, fields, Unknown::Error)?;
        Some(
            fields
                .iter()
                .map(|f| {
                    let n = so.req(cx, f);
                    dur(cx, n, &so.at(f))
                })
                .collect(),
        )
    };
    match k.name.as_str() {
        "fixed" => {
            if v.kind == Kind::Null {
                cx.err(v.loc, &p, "missing duration");
            }
            dur(cx, Some(v), &p).map(Dist::Fixed)
        }
        "uniform" => {
            let d = sub(cx, &["min", "max"])?;
            let (min, max) = (d[0]?, d[1]?);
            if min > max {
                let at = v.get("max").map_or(v.loc, |n| n.loc);
                cx.err(
                    at,
                    &join(&p, "max"),
                    format!("max ({max}) must not be less than min ({min})"),
                );
                return None;
            }
            Some(Dist::Uniform { min, max })
        }
        "exponential" => {
            let d = sub(cx, &["mean"])?;
            Some(Dist::Exponential { mean: d[0]? })
        }
        _ => {
            let d = sub(cx, &["median", "p99"])?;
            let (median, p99) = (d[0]?, d[1]?);
            if median == Dur::ZERO {
                let at = v.get("median").map_or(v.loc, |n| n.loc);
                cx.err(at, &join(&p, "median"), "must be greater than 0");
                return None;
            }
            if p99 < median {
                let at = v.get("p99").map_or(v.loc, |n| n.loc);
                cx.err(
                    at,
                    &join(&p, "p99"),
                    format!("p99 ({p99}) must not be less than median ({median})"),
                );
                return None;
            }
            Some(Dist::LogNormal { median, p99 })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{problems, with};
    use crate::model::{CriCall, Dist};
    use crate::sim::Dur;

    #[test]
    fn distributions() {
        let lat = |d: &str| format!("  runtime: {{latencies: {{podStatus: {d}}}}}\n");
        let get = |d: &str| with(&lat(d)).unwrap().scenario.runtime.latencies[&CriCall::PodStatus];
        assert_eq!(get("{fixed: 0}"), Dist::Fixed(Dur::ZERO));
        assert_eq!(
            get("{uniform: {min: 1ms, max: 1ms}}"),
            Dist::Uniform {
                min: Dur::millis(1),
                max: Dur::millis(1)
            }
        );
        assert_eq!(
            get("{exponential: {mean: 1s}}"),
            Dist::Exponential { mean: Dur::secs(1) }
        );
        assert_eq!(
            get("{lognormal: {median: 1s, p99: 1m}}"),
            Dist::LogNormal {
                median: Dur::secs(1),
                p99: Dur::secs(60)
            }
        );
        let p = "spec.runtime.latencies.podStatus";
        assert_eq!(
            problems(&lat("{fixed: 1s, exponential: {mean: 1s}}")),
            [format!("{p}.exponential: a distribution takes exactly one of fixed, uniform, exponential, lognormal; this one already has `fixed`")]
        );
        assert_eq!(problems(&lat("{}")).len(), 1);
        assert_eq!(problems(&lat("5ms")).len(), 1);
        assert_eq!(
            problems(&lat("{normal: 1s}")),
            [format!("{p}.normal: unknown field `normal`; expected one of: fixed, uniform, exponential, lognormal")]
        );
        assert_eq!(
            problems(&lat("{uniform: {min: 2s}}")),
            [format!("{p}.uniform.max: missing required field `max`")]
        );
        assert_eq!(
            problems(&lat("{lognormal: {median: 2s, p99: 1s}}")),
            [
                format!("{p}.lognormal.p99: p99 (2s) must not be less than median (2s)")
                    .replace("p99 (2s)", "p99 (1s)")
            ]
        );
    }
}
