//! Sampling latency distributions. Floating-point math goes through `libm` (pure Rust), so a
//! sample is the same on every platform, and the result is rounded to whole nanoseconds.

use crate::model::Dist;
use crate::sim::{Dur, Stream};

/// Draw one duration from `d`. The fixed and uniform draws (most of a run's) take no
/// floating-point work: the others are out of line, so this needs no registers saved.
#[inline]
pub(crate) fn sample(d: &Dist, rng: &mut Stream) -> Dur {
    match *d {
        Dist::Fixed(v) => v,
        Dist::Uniform { min, max } => Dur(rng.between(min.0, max.0)),
        Dist::Exponential { mean } => exponential(mean, rng),
        Dist::LogNormal { median, p99 } => log_normal(median, p99, rng),
    }
}

/// An exponential draw of mean `mean`, by the inverse CDF on (0, 1].
#[inline(never)]
fn exponential(mean: Dur, rng: &mut Stream) -> Dur {
    let u = 1.0 - rng.unit_f64();
    let x = -libm::log(u) * mean.0 as f64;
    to_dur(x)
}

/// A log-normal draw with median `median` and 99th percentile `p99`.
#[inline(never)]
fn log_normal(median: Dur, p99: Dur, rng: &mut Stream) -> Dur {
    if median.0 == 0 {
        return Dur::ZERO;
    }
    let mu = libm::log(median.0 as f64);
    // z(0.99) of the standard normal.
    const Z99: f64 = 2.326_347_874_040_841;
    let sigma = if p99.0 > median.0 {
        (libm::log(p99.0 as f64) - mu) / Z99
    } else {
        0.0
    };
    // Box-Muller.
    let u1 = 1.0 - rng.unit_f64();
    let u2 = rng.unit_f64();
    let z = libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * std::f64::consts::PI * u2);
    to_dur(libm::exp(mu + sigma * z))
}

fn to_dur(x: f64) -> Dur {
    if !x.is_finite() || x <= 0.0 {
        return Dur::ZERO;
    }
    // Cap at ~292 years so a pathological draw cannot overflow time.
    let capped = x.min(9.0e18);
    Dur(libm::round(capped) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_uniform() {
        let mut r = Stream::new(1, "t");
        assert_eq!(sample(&Dist::Fixed(Dur::millis(5)), &mut r), Dur::millis(5));
        for _ in 0..1000 {
            let v = sample(
                &Dist::Uniform {
                    min: Dur::millis(1),
                    max: Dur::millis(3),
                },
                &mut r,
            );
            assert!(v >= Dur::millis(1) && v <= Dur::millis(3));
        }
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut r = Stream::new(2, "t");
        let n = 20_000u64;
        let sum: u64 = (0..n)
            .map(|_| {
                sample(
                    &Dist::Exponential {
                        mean: Dur::millis(100),
                    },
                    &mut r,
                )
                .0
            })
            .sum();
        let mean = sum / n;
        assert!((90_000_000..110_000_000).contains(&mean), "mean {mean}");
    }

    #[test]
    fn lognormal_median_and_p99_are_close() {
        let mut r = Stream::new(3, "t");
        let d = Dist::LogNormal {
            median: Dur::secs(1),
            p99: Dur::secs(20),
        };
        let mut v: Vec<u64> = (0..20_000).map(|_| sample(&d, &mut r).0).collect();
        v.sort_unstable();
        let med = v[v.len() / 2];
        let p99 = v[v.len() * 99 / 100];
        assert!((900_000_000..1_100_000_000).contains(&med), "median {med}");
        assert!((16_000_000_000..25_000_000_000).contains(&p99), "p99 {p99}");
    }
}
