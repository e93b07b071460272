//! Virtual time: integer nanoseconds. No wall clock anywhere in the core.

use std::fmt;

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const fn nanos(n: u64) -> Dur {
        Dur(n)
    }
    pub const fn millis(n: u64) -> Dur {
        Dur(n * 1_000_000)
    }
    pub const fn secs(n: u64) -> Dur {
        Dur(n * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Whole seconds, rounded down (Go's `Duration.Seconds()` truncated to int64).
    pub const fn whole_secs(self) -> u64 {
        self.0 / 1_000_000_000
    }
    pub fn saturating_sub(self, o: Dur) -> Dur {
        Dur(self.0.saturating_sub(o.0))
    }
    pub fn times(self, k: u64) -> Dur {
        Dur(self.0.saturating_mul(k))
    }
}

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn plus(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
}

impl std::ops::Add<Dur> for SimTime {
    type Output = SimTime;
    fn add(self, d: Dur) -> SimTime {
        self.plus(d)
    }
}

impl std::ops::Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0.saturating_add(d.0))
    }
}

fn fmt_nanos(f: &mut fmt::Formatter<'_>, n: u64) -> fmt::Result {
    let secs = n / 1_000_000_000;
    let frac = n % 1_000_000_000;
    if frac == 0 {
        write!(f, "{secs}s")
    } else if frac % 1_000_000 == 0 {
        write!(f, "{secs}.{:03}s", frac / 1_000_000)
    } else {
        write!(f, "{secs}.{frac:09}s")
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("t=")?;
        fmt_nanos(f, self.0)
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos(f, self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn display_is_compact() {
        assert_eq!(SimTime(1_500_000_000).to_string(), "t=1.500s");
        assert_eq!(SimTime(2_000_000_000).to_string(), "t=2s");
        assert_eq!(Dur(1).to_string(), "0.000000001s");
        assert_eq!(SimTime(3).since(SimTime(5)), Dur(0));
    }
}
