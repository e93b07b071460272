//! The simulation core. It moves typed events in time order; it knows nothing about pods.
//!
//! * [`time`]: `SimTime` / `Dur`, integer nanoseconds.
//! * [`queue`]: the event queue, ordered by (time, sequence), with cancellable timers.
//! * [`scheduler`]: who goes first among events due at the same instant.
//! * [`rng`]: named random streams derived from (seed, stream name).
//! * [`limits`]: horizon and event budgets.
//! * [`trace`]: records and the running hash.
//!
//! [`Sim`] ties them together: `step` pops one event, advances the clock and hands the
//! event to the model. The clock only moves here.

pub mod limits;
pub mod queue;
#[cfg(test)]
#[allow(dead_code)]
mod queue_ref;
pub mod rng;
pub mod scheduler;
pub mod time;
pub mod trace;

pub use limits::{Limits, StopReason};
pub use queue::{EventQueue, TimerKey};
pub use rng::Stream;
pub use scheduler::{AnyScheduler, Scheduler, Strategy};
pub use time::{Dur, SimTime};
pub use trace::{Emit, NoObserver, Observer, Trace};

/// The clock, queue, scheduler and counters of one run.
#[derive(Clone, Debug)]
pub struct Sim<E> {
    now: SimTime,
    pub queue: EventQueue<E>,
    pub scheduler: AnyScheduler,
    pub limits: Limits,
    events: u64,
    events_this_instant: u64,
    /// The source of an event, for schedulers that tell sources apart (PCT).
    source: Option<fn(&E) -> u64>,
    /// The slot of the event being handled, while it stays in the queue's hand to be
    /// re-armed by [`Sim::after_again`] (see [`Sim::hold`]).
    held: Option<u32>,
}

impl<E> Sim<E> {
    pub fn new(seed: u64, strategy: Strategy, limits: Limits) -> Self {
        Sim {
            now: SimTime::ZERO,
            queue: EventQueue::new(),
            scheduler: AnyScheduler::new(strategy, seed),
            limits,
            events: 0,
            events_this_instant: 0,
            source: None,
            held: None,
        }
    }

    /// Says what source (goroutine, component) each event comes from, as a plain key: what
    /// the PCT scheduler gives priorities to. Without it each event is its own source.
    pub fn set_sources(&mut self, source: fn(&E) -> u64) {
        self.source = Some(source);
    }

    pub fn now(&self) -> SimTime {
        self.now
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    /// Schedule `event` after `delay`.
    pub fn after(&mut self, delay: Dur, event: E) -> TimerKey {
        self.queue.push(self.now + delay, event)
    }

    /// Schedule `event` at an absolute time, which must not be in the past.
    pub fn at(&mut self, at: SimTime, event: E) -> TimerKey {
        assert!(
            at >= self.now,
            "event scheduled in the past: {at} < {}",
            self.now
        );
        self.queue.push(at, event)
    }

    pub fn cancel(&mut self, key: TimerKey) {
        self.queue.cancel(key);
    }

    /// Pop the next event, advancing the clock, or say why the run must stop.
    #[inline]
    pub fn next_event(&mut self) -> Result<E, StopReason> {
        let slot = self.next_held()?;
        Ok(self.queue.take_held(slot))
    }

    /// [`Sim::next_event`], leaving the event in the queue's hand (see
    /// [`EventQueue::pop_held`]): returns its slot, to read with `queue.held` and then
    /// either take out (`queue.take_held`) or [`Sim::hold`] while it is handled.
    #[inline]
    pub(crate) fn next_held(&mut self) -> Result<u32, StopReason> {
        let Some(at) = self.queue.peek_time() else {
            return Err(StopReason::Quiescent);
        };
        if at > self.limits.horizon {
            self.now = self.now.max(self.limits.horizon);
            return Err(StopReason::Horizon);
        }
        if self.events >= self.limits.max_events {
            return Err(StopReason::MaxEvents);
        }
        if at == self.now {
            if self.events_this_instant >= self.limits.max_events_per_instant {
                return Err(StopReason::MaxEventsPerInstant);
            }
        } else {
            self.events_this_instant = 0;
        }
        assert!(at >= self.now, "clock went backwards: {at} < {}", self.now);
        let slot = self.queue.pop_held(&mut self.scheduler, self.source);
        self.now = at;
        self.events += 1;
        self.events_this_instant += 1;
        Ok(slot)
    }

    /// The event in hand in `slot` is being handled and may re-arm itself with
    /// [`Sim::after_again`]; [`Sim::release_held`] ends that.
    #[inline]
    pub(crate) fn hold(&mut self, slot: u32) {
        debug_assert!(self.held.is_none(), "one event in hand at a time");
        self.queue.keep_held(slot);
        self.held = Some(slot);
    }

    /// The handling of the event held by [`Sim::hold`] is over: unless it re-armed itself,
    /// it leaves the queue.
    #[inline]
    pub(crate) fn release_held(&mut self) {
        if let Some(slot) = self.held.take() {
            drop(self.queue.take_held(slot));
        }
    }

    /// The slot of the held event (see [`Sim::hold`]), if one is held: read once by a
    /// caller that may then file it again with [`Sim::refile_held`].
    #[inline(always)]
    pub(crate) fn held_slot(&self) -> Option<u32> {
        self.held
    }

    /// [`Sim::after_again`] of the held event, in `slot` as [`Sim::held_slot`] answered (no
    /// event was held or let go since; checked in debug builds, with `is_it` of the event):
    /// it is filed again `delay` from now, and `held` is not read again. No event is made:
    /// the caller needs none.
    #[inline(always)]
    pub(crate) fn refile_held(&mut self, slot: u32, delay: Dur, is_it: impl FnOnce(&E) -> bool) {
        debug_assert_eq!(self.held, Some(slot), "the slot held is another");
        debug_assert!(
            is_it(self.queue.held(slot)),
            "the event filed again is not the one in hand"
        );
        self.held = None;
        let _ = self.queue.refile(slot, self.now + delay);
    }

    /// [`Sim::after`] of an event equal to the one being handled, if it is held (see
    /// [`Sim::hold`]): that one is filed again where and with the sequence number the push
    /// would give (`same` tells the two are equal; checked in debug builds). Without an
    /// event held, a plain push.
    /// The event is made by `event`, and only when it is pushed (or checked).
    #[inline(always)]
    pub(crate) fn after_again(
        &mut self,
        delay: Dur,
        event: impl FnOnce() -> E,
        same: fn(&E, &E) -> bool,
    ) -> TimerKey {
        let at = self.now + delay;
        match self.held.take() {
            Some(slot) => {
                #[cfg(debug_assertions)]
                assert!(
                    same(self.queue.held(slot), &event()),
                    "the event filed again is not the one in hand"
                );
                #[cfg(not(debug_assertions))]
                let _ = (same, event);
                self.queue.refile(slot, at)
            }
            None => self.queue.push(at, event()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_stop_runaway_loops() {
        let mut sim: Sim<u32> = Sim::new(
            1,
            Strategy::Fifo,
            Limits {
                max_events_per_instant: 10,
                ..Limits::default()
            },
        );
        let _ = sim.after(Dur::ZERO, 0);
        let r = loop {
            match sim.next_event() {
                Ok(_) => {
                    let _ = sim.after(Dur::ZERO, 0);
                }
                Err(r) => break r,
            }
        };
        assert_eq!(r, StopReason::MaxEventsPerInstant);
        assert_eq!(sim.events(), 10);
    }

    #[test]
    fn horizon_stops_and_clock_never_goes_back() {
        let mut sim: Sim<u32> = Sim::new(
            1,
            Strategy::Random,
            Limits {
                horizon: SimTime(100),
                ..Limits::default()
            },
        );
        let _ = sim.at(SimTime(50), 1);
        let _ = sim.at(SimTime(150), 2);
        assert_eq!(sim.next_event(), Ok(1));
        assert_eq!(sim.now(), SimTime(50));
        assert_eq!(sim.next_event(), Err(StopReason::Horizon));
        assert_eq!(sim.now(), SimTime(100));
    }

    #[test]
    fn max_events_is_reported() {
        let mut sim: Sim<u32> = Sim::new(
            1,
            Strategy::Fifo,
            Limits {
                max_events: 3,
                ..Limits::default()
            },
        );
        for i in 0..10 {
            let _ = sim.after(Dur(i), 0);
        }
        let mut n = 0;
        while sim.next_event().is_ok() {
            n += 1;
        }
        assert_eq!(n, 3);
        assert_eq!(sim.next_event(), Err(StopReason::MaxEvents));
    }
}
