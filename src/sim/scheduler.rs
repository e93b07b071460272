//! Who goes first among events due at the same instant. This stands in for Go's `select`
//! and the OS scheduler; later strategies (PCT, bounded exhaustive search) implement the
//! same trait.

use super::rng::Stream;

/// Chooses which of `n` simultaneously ready events runs next (index into the ready batch,
/// which holds events in scheduling order).
pub trait Scheduler {
    fn choose(&mut self, n: usize) -> usize;
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

/// The strategies selectable from a scenario or the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Strategy {
    #[default]
    Random,
    Fifo,
}

/// A scheduler chosen at run time, kept as plain data so the world stays `Clone`.
#[derive(Clone, Debug)]
pub enum AnyScheduler {
    Random(Box<RandomOrder>),
    Fifo(Fifo),
}

impl AnyScheduler {
    pub fn new(strategy: Strategy, seed: u64) -> Self {
        match strategy {
            Strategy::Random => AnyScheduler::Random(Box::new(RandomOrder::new(seed))),
            Strategy::Fifo => AnyScheduler::Fifo(Fifo),
        }
    }
}

impl Scheduler for AnyScheduler {
    fn choose(&mut self, n: usize) -> usize {
        match self {
            AnyScheduler::Random(s) => s.choose(n),
            AnyScheduler::Fifo(s) => s.choose(n),
        }
    }
}
