//! Who goes first among events due at the same instant. This stands in for Go's `select`
//! and the OS scheduler. Three strategies implement the same trait: uniformly random (the
//! default), FIFO (for debugging), and PCT (probabilistic concurrency testing).

use super::rng::Stream;
use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fmt;

/// One event of the ready batch, as a scheduler that tells sources apart sees it: the
/// source it comes from (a plain key the run layer gives each event, standing for the
/// goroutine or component that would run it) and its scheduling sequence number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ready {
    pub source: u64,
    pub seq: u64,
}

/// Chooses which of `n` simultaneously ready events runs next (index into the ready batch,
/// which holds events in scheduling order).
pub trait Scheduler {
    fn choose(&mut self, n: usize) -> usize;

    /// Whether [`Scheduler::choose_ready`] needs each ready event's source (building the
    /// keys costs a little, so schedulers that ignore them say no).
    fn by_source(&self) -> bool {
        false
    }

    /// Chooses among the ready batch given each event's source; the default ignores them.
    fn choose_ready(&mut self, ready: &[Ready]) -> usize {
        self.choose(ready.len())
    }
}

/// Always the earliest-scheduled event: useful for debugging.
#[derive(Clone, Debug, Default)]
pub struct Fifo;

impl Scheduler for Fifo {
    fn choose(&mut self, _n: usize) -> usize {
        0
    }
}

/// Uniformly random among the ready events, from the run's `scheduler` stream.
#[derive(Clone, Debug)]
pub struct RandomOrder {
    rng: Stream,
}

impl RandomOrder {
    pub fn new(seed: u64) -> Self {
        RandomOrder {
            rng: Stream::new(seed, "scheduler"),
        }
    }
}

impl Scheduler for RandomOrder {
    fn choose(&mut self, n: usize) -> usize {
        self.rng.below(n as u64) as usize
    }
}

/// The number of same-instant choices PCT spreads its change points over when `pct:D` does
/// not say (`pct:D:K`): about what a bundled race scenario makes in one run (16 to 181,
/// most near 100). A run with fewer choices reaches only the change points below its count.
pub const PCT_DEFAULT_STEPS: u32 = 100;

/// Probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte: "A
/// Randomized Scheduler with Probabilistic Guarantees of Finding Bugs", ASPLOS 2010),
/// adapted to a discrete-event loop.
///
/// The paper's threads are the sources of ready events. Each source gets a random priority
/// (from the run's `scheduler` stream) the first time it is among several events due at
/// the same instant; the ready event of the highest-priority source runs (among one
/// source's events, the earliest scheduled). Before the run, `depth - 1` change points are
/// drawn among the first `steps` same-instant choices; at change point `i` the source that
/// would run drops to priority `i`, below every source's initial priority, and the choice
/// is made again. A bug that needs `depth` ordering constraints between sources is found
/// with probability at least 1/(sources x steps^(depth-1)) per run.
#[derive(Clone, Debug)]
pub struct Pct {
    rng: Stream,
    depth: u32,
    /// Same-instant choices made so far.
    step: u64,
    /// (step, priority) of the change points not yet reached, latest first.
    changes: Vec<(u64, u64)>,
    priorities: BTreeMap<u64, u64>,
}

impl Pct {
    pub fn new(seed: u64, depth: u32, steps: u32) -> Self {
        let mut rng = Stream::new(seed, "scheduler");
        let depth = depth.max(1);
        let steps = u64::from(steps.max(1));
        let mut changes: Vec<(u64, u64)> = (1..u64::from(depth))
            .map(|prio| (1 + rng.below(steps), prio))
            .collect();
        // Latest first, so the next one is at the end; at one step, the lower priority
        // (the later change point) applies last.
        changes.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Pct {
            rng,
            depth,
            step: 0,
            changes,
            priorities: BTreeMap::new(),
        }
    }

    fn priority(&mut self, source: u64) -> u64 {
        let low = u64::from(self.depth);
        let rng = &mut self.rng;
        *self
            .priorities
            .entry(source)
            .or_insert_with(|| low + rng.below(u64::MAX - low))
    }

    /// The index of the event that runs: highest source priority, then earliest scheduled.
    fn best(&mut self, ready: &[Ready]) -> usize {
        let mut best: Option<(usize, (u64, Reverse<u64>))> = None;
        for (i, r) in ready.iter().enumerate() {
            let k = (self.priority(r.source), Reverse(r.seq));
            if best.as_ref().is_none_or(|(_, b)| k > *b) {
                best = Some((i, k));
            }
        }
        best.map_or(0, |(i, _)| i)
    }
}

impl Scheduler for Pct {
    fn choose(&mut self, n: usize) -> usize {
        // Without sources every event is its own: the batch index stands in.
        let ready: Vec<Ready> = (0..n as u64)
            .map(|i| Ready {
                source: u64::MAX - i,
                seq: i,
            })
            .collect();
        self.choose_ready(&ready)
    }

    fn by_source(&self) -> bool {
        true
    }

    fn choose_ready(&mut self, ready: &[Ready]) -> usize {
        self.step += 1;
        let mut i = self.best(ready);
        while let Some(&(at, prio)) = self.changes.last() {
            if at != self.step {
                break;
            }
            self.changes.pop();
            self.priorities.insert(ready[i].source, prio);
            i = self.best(ready);
        }
        i
    }
}

/// The strategies selectable from a scenario (`spec.scheduler`) or the command line
/// (`--scheduler`): `random`, `fifo`, `pct:D` or `pct:D:K`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Strategy {
    #[default]
    Random,
    Fifo,
    /// PCT with `depth` (d >= 1: d - 1 change points) over the first `steps` (k)
    /// same-instant choices.
    Pct {
        depth: u32,
        steps: u32,
    },
}

impl Strategy {
    /// Parses `random`, `fifo`, `pct:D` or `pct:D:K` (D, K at least 1); the error says
    /// what is wrong, without naming where the text came from.
    pub fn parse(s: &str) -> Result<Strategy, String> {
        let num = |what: &str, v: &str| -> Result<u32, String> {
            match v.parse::<u32>() {
                Ok(0) => Err(format!("`{s}`: the PCT {what} must be at least 1")),
                Ok(n) => Ok(n),
                Err(_) => Err(format!(
                    "`{s}`: the PCT {what} `{v}` is not a whole number (expected pct:D or pct:D:K, e.g. pct:3)"
                )),
            }
        };
        match s {
            "random" => return Ok(Strategy::Random),
            "fifo" => return Ok(Strategy::Fifo),
            _ => {}
        }
        let Some(rest) = s.strip_prefix("pct:") else {
            let hint = if s == "pct" {
                " (pct needs a depth: pct:D, e.g. pct:3)"
            } else {
                ""
            };
            return Err(format!(
                "unknown scheduler `{s}`{hint}: expected random, fifo or pct:D"
            ));
        };
        let (d, k) = match rest.split_once(':') {
            Some((d, k)) => (d, Some(k)),
            None => (rest, None),
        };
        let depth = num("depth", d)?;
        let steps = match k {
            Some(k) => num("step count", k)?,
            None => PCT_DEFAULT_STEPS,
        };
        Ok(Strategy::Pct { depth, steps })
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strategy::Random => f.write_str("random"),
            Strategy::Fifo => f.write_str("fifo"),
            Strategy::Pct { depth, steps } if *steps == PCT_DEFAULT_STEPS => {
                write!(f, "pct:{depth}")
            }
            Strategy::Pct { depth, steps } => write!(f, "pct:{depth}:{steps}"),
        }
    }
}

/// A scheduler chosen at run time, kept as plain data so the world stays `Clone`.
#[derive(Clone, Debug)]
pub enum AnyScheduler {
    Random(Box<RandomOrder>),
    Fifo(Fifo),
    Pct(Box<Pct>),
}

impl AnyScheduler {
    pub fn new(strategy: Strategy, seed: u64) -> Self {
        match strategy {
            Strategy::Random => AnyScheduler::Random(Box::new(RandomOrder::new(seed))),
            Strategy::Fifo => AnyScheduler::Fifo(Fifo),
            Strategy::Pct { depth, steps } => {
                AnyScheduler::Pct(Box::new(Pct::new(seed, depth, steps)))
            }
        }
    }
}

impl Scheduler for AnyScheduler {
    fn choose(&mut self, n: usize) -> usize {
        match self {
            AnyScheduler::Random(s) => s.choose(n),
            AnyScheduler::Fifo(s) => s.choose(n),
            AnyScheduler::Pct(s) => s.choose(n),
        }
    }

    fn by_source(&self) -> bool {
        match self {
            AnyScheduler::Random(s) => s.by_source(),
            AnyScheduler::Fifo(s) => s.by_source(),
            AnyScheduler::Pct(s) => s.by_source(),
        }
    }

    fn choose_ready(&mut self, ready: &[Ready]) -> usize {
        match self {
            AnyScheduler::Random(s) => s.choose_ready(ready),
            AnyScheduler::Fifo(s) => s.choose_ready(ready),
            AnyScheduler::Pct(s) => s.choose_ready(ready),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `batches` same-instant choices, each over the sources `srcs` (one event each),
    /// removing the chosen source from its batch until it is empty; returns the order.
    fn drain(s: &mut dyn Scheduler, batches: usize, srcs: &[u64]) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        for b in 0..batches {
            let mut ready: Vec<Ready> = srcs
                .iter()
                .enumerate()
                .map(|(i, &source)| Ready {
                    source,
                    seq: (b * 100 + i) as u64,
                })
                .collect();
            let mut order = Vec::new();
            while ready.len() > 1 {
                let i = s.choose_ready(&ready);
                order.push(ready.remove(i).source);
            }
            order.push(ready[0].source);
            out.push(order);
        }
        out
    }

    #[test]
    fn pct_is_deterministic_for_a_seed() {
        let srcs = [10, 20, 30, 40, 50];
        for seed in 1..5 {
            let a = drain(&mut Pct::new(seed, 3, 20), 8, &srcs);
            let b = drain(&mut Pct::new(seed, 3, 20), 8, &srcs);
            assert_eq!(a, b);
        }
    }

    #[test]
    fn pct_depth_one_is_a_fixed_priority_order() {
        let srcs = [10, 20, 30, 40, 50];
        let mut firsts = std::collections::BTreeSet::new();
        for seed in 1..20 {
            let orders = drain(&mut Pct::new(seed, 1, 20), 10, &srcs);
            // The same order in every batch: priorities never change without change points.
            assert!(orders.iter().all(|o| *o == orders[0]), "{orders:?}");
            firsts.insert(orders[0].clone());
        }
        // And the priorities are random across seeds.
        assert!(firsts.len() > 1);
    }

    #[test]
    fn pct_change_points_change_the_order() {
        let srcs = [10, 20, 30, 40, 50];
        let mut changed = 0;
        for seed in 1..20 {
            // Change points among the first 8 choices: they fall inside the first two batches.
            let orders = drain(&mut Pct::new(seed, 3, 8), 4, &srcs);
            let fixed = drain(&mut Pct::new(seed, 1, 8), 4, &srcs);
            assert_eq!(fixed[0], fixed[3]);
            // After the change points the order is fixed again (they are all used up).
            assert_eq!(orders[2], orders[3]);
            if orders[3] != fixed[3] {
                changed += 1;
            }
        }
        assert!(changed > 0, "change points never changed the order");
    }

    #[test]
    fn pct_runs_one_sources_events_in_scheduling_order() {
        let mut s = Pct::new(7, 1, 10);
        let ready = [
            Ready { source: 1, seq: 5 },
            Ready { source: 1, seq: 3 },
            Ready { source: 1, seq: 4 },
        ];
        assert_eq!(s.choose_ready(&ready), 1);
    }

    #[test]
    fn strategies_parse_and_print_back() {
        for s in ["random", "fifo", "pct:1", "pct:3", "pct:2:500"] {
            assert_eq!(Strategy::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            Strategy::parse("pct:3").unwrap(),
            Strategy::Pct {
                depth: 3,
                steps: PCT_DEFAULT_STEPS
            }
        );
        for (bad, says) in [
            ("pct:0", "at least 1"),
            ("pct:x", "not a whole number"),
            ("pct:3:0", "at least 1"),
            ("foo", "unknown scheduler `foo`"),
            ("pct", "needs a depth"),
            ("", "unknown scheduler"),
        ] {
            let e = Strategy::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
