//! The node's power management: systemd-logind's *delay* inhibitor locks and the shutdown
//! they hold back, as the graceful node shutdown manager relies on it (upstream
//! `pkg/kubelet/nodeshutdown/systemd`; logind's inhibitor protocol as documented by
//! systemd).
//!
//! The model: a shutdown request (the scenario's `nodeShutdown` action) makes logind emit
//! `PrepareForShutdown(true)` to everyone holding a delay lock, then wait until every
//! delay lock is released or `InhibitDelayMaxSec` has passed since the request, whichever
//! comes first, and power the node off. With no delay lock held the node powers off at
//! once. A lock taken after the request does not hold the shutdown back.
//!
//! Deliberate simplifications: D-Bus calls and signals take no time; `InhibitDelayMaxSec`
//! starts equal to the kubelet's total shutdown period (as if the kubelet's logind drop-in
//! had been written and logind reloaded before the run), and a lock request asking for a
//! longer delay raises it, which is what the kubelet's override-and-reload achieves. The
//! kubelet learns of the shutdown only through the signal (an event), never by reading this
//! state.

use super::Tracer;
use crate::model::Transition;
use crate::model::{LogindStep, PowerOffCause};
use crate::sim::{Dur, SimTime, TimerKey};
use std::collections::BTreeSet;

/// Events logind handles (D-Bus calls from the kubelet, and its own delay timer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum LogindEv {
    /// `Inhibit("shutdown", ..., "delay")`: the kubelet took delay lock `lock`, needing
    /// `InhibitDelayMaxSec` of at least `delay`.
    Inhibit { lock: u64, delay: Dur },
    /// The kubelet closed the lock's file descriptor.
    Release { lock: u64 },
    /// `InhibitDelayMaxSec` has passed since the shutdown request.
    DelayExpired,
}

/// What a shutdown request leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShutdownRequest {
    /// Ignored: a shutdown is already under way or the node is off.
    Ignored,
    /// No delay lock is held: power off now.
    PowerOffNow,
    /// Delay locks are held: send `PrepareForShutdown(true)` and wait up to this long.
    Delay(Dur),
}

/// logind's state and the node's power state (ground truth).
#[derive(Clone, Debug, Default)]
pub(crate) struct Logind {
    /// `InhibitDelayMaxSec`.
    pub(crate) inhibit_delay_max: Dur,
    locks: BTreeSet<u64>,
    pub(crate) shutdown_requested_at: Option<SimTime>,
    pub(crate) powered_off_at: Option<SimTime>,
    pub(crate) power_off_cause: Option<PowerOffCause>,
    /// The `DelayExpired` timer, while a shutdown waits for locks.
    pub(crate) delay_timer: Option<TimerKey>,
}

impl Logind {
    pub(crate) fn new(inhibit_delay_max: Dur) -> Self {
        Logind {
            inhibit_delay_max,
            ..Default::default()
        }
    }

    pub(crate) fn powered_off(&self) -> bool {
        self.powered_off_at.is_some()
    }

    /// A delay lock is taken.
    pub(crate) fn inhibit(&mut self, now: SimTime, trace: &mut Tracer, lock: u64, delay: Dur) {
        if self.powered_off() {
            return;
        }
        if delay > self.inhibit_delay_max {
            self.inhibit_delay_max = delay;
            trace.emit(
                now,
                &Transition::Logind {
                    what: LogindStep::InhibitDelayRaised { delay },
                },
            );
        }
        self.locks.insert(lock);
        trace.emit(
            now,
            &Transition::Logind {
                what: LogindStep::DelayLockTaken { lock },
            },
        );
    }

    /// A delay lock is released. Returns whether the node powers off now.
    pub(crate) fn release(&mut self, now: SimTime, trace: &mut Tracer, lock: u64) -> bool {
        if self.powered_off() || !self.locks.remove(&lock) {
            return false;
        }
        trace.emit(
            now,
            &Transition::Logind {
                what: LogindStep::DelayLockReleased { lock },
            },
        );
        self.shutdown_requested_at.is_some() && self.locks.is_empty()
    }

    /// The process holding every delay lock died (a kubelet crash): its file descriptors
    /// close, so logind drops its locks. Returns whether the node powers off now.
    pub(crate) fn release_all(&mut self, now: SimTime, trace: &mut Tracer) -> bool {
        if self.powered_off() || self.locks.is_empty() {
            return false;
        }
        self.locks.clear();
        trace.emit(
            now,
            &Transition::Logind {
                what: LogindStep::HolderDied,
            },
        );
        self.shutdown_requested_at.is_some()
    }

    /// The node is asked to shut down.
    pub(crate) fn request_shutdown(&mut self, now: SimTime, trace: &mut Tracer) -> ShutdownRequest {
        if self.powered_off() || self.shutdown_requested_at.is_some() {
            return ShutdownRequest::Ignored;
        }
        self.shutdown_requested_at = Some(now);
        if self.locks.is_empty() {
            trace.emit(
                now,
                &Transition::Logind {
                    what: LogindStep::NoDelayLockHeld,
                },
            );
            return ShutdownRequest::PowerOffNow;
        }
        trace.emit(
            now,
            &Transition::Logind {
                what: LogindStep::PrepareForShutdown {
                    delay: self.inhibit_delay_max,
                    locks: self.locks.len(),
                },
            },
        );
        ShutdownRequest::Delay(self.inhibit_delay_max)
    }

    /// Record the power-off.
    pub(crate) fn mark_powered_off(&mut self, now: SimTime, cause: PowerOffCause) {
        self.powered_off_at = Some(now);
        self.power_off_cause = Some(cause);
        self.locks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shutdown_waits_for_delay_locks_only() {
        let mut t: crate::sim::Trace = crate::sim::Trace::new(false);
        let mut l = Logind::new(Dur::secs(30));
        l.inhibit(SimTime::ZERO, &mut t, 1, Dur::secs(20));
        assert_eq!(l.inhibit_delay_max, Dur::secs(30));
        l.inhibit(SimTime::ZERO, &mut t, 2, Dur::secs(40));
        assert_eq!(l.inhibit_delay_max, Dur::secs(40));
        assert!(
            !l.release(SimTime::ZERO, &mut t, 2),
            "no shutdown requested yet"
        );
        assert_eq!(
            l.request_shutdown(SimTime::ZERO, &mut t),
            ShutdownRequest::Delay(Dur::secs(40))
        );
        assert_eq!(
            l.request_shutdown(SimTime::ZERO, &mut t),
            ShutdownRequest::Ignored
        );
        assert!(!l.release(SimTime::ZERO, &mut t, 7), "unknown lock");
        assert!(l.release(SimTime::ZERO, &mut t, 1), "last lock released");

        let mut l = Logind::new(Dur::ZERO);
        assert_eq!(
            l.request_shutdown(SimTime::ZERO, &mut t),
            ShutdownRequest::PowerOffNow
        );
    }
}
