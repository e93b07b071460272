//! Run limits. Hitting one ends the run and is reported; a run can never hang.

use super::time::SimTime;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Simulated-time bound: events after it are not processed.
    pub horizon: SimTime,
    /// Total events processed.
    pub max_events: u64,
    /// Events processed at one simulated instant (catches zero-delay loops).
    pub max_events_per_instant: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            horizon: SimTime(600 * 1_000_000_000),
            max_events: 200_000_000,
            max_events_per_instant: 5_000_000,
        }
    }
}

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StopReason {
    /// Nothing left to do.
    Quiescent,
    /// The next event lies beyond the horizon.
    Horizon,
    /// `max_events` reached.
    MaxEvents,
    /// `max_events_per_instant` reached at one instant.
    MaxEventsPerInstant,
    /// The run kept [`MAX_KEPT_RECORDS`] readable trace records in memory.
    MaxKeptRecords,
}

/// The most readable trace records a run keeps in memory (about 60 bytes and a string
/// each, so roughly 2 GB): a run that would keep more stops with a `run-limit-reached`
/// finding. Records streamed to a file (`podsim run --trace`) are not kept, so they have
/// no such bound; the event budget bounds them.
pub const MAX_KEPT_RECORDS: usize = 20_000_000;

impl StopReason {
    pub fn is_limit(self) -> bool {
        matches!(
            self,
            StopReason::MaxEvents | StopReason::MaxEventsPerInstant | StopReason::MaxKeptRecords
        )
    }
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Quiescent => "quiescent",
            StopReason::Horizon => "horizon",
            StopReason::MaxEvents => "max-events",
            StopReason::MaxEventsPerInstant => "max-events-per-instant",
            StopReason::MaxKeptRecords => "max-kept-records",
        }
    }
}
