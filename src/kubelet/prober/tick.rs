//! A probe worker's wake-up, and its steady path: a tick of a worker that probes the
//! container it already knows, whose result changes nothing, takes a short path that
//! keeps few values across its calls (the rest goes to
//! [`Kubelet::probe_worker_wake_slow`], which follows `worker.go` step by step).

use super::{probe_exec, ProbeResult, ProbeWake};
use crate::kubelet::Ctx;
use crate::kubelet::{KEv, Kubelet};
use crate::model::ProbeVerdict;

impl Kubelet {
    /// The worker's loop, one wake-up at a time (see [`Kubelet::probe_worker_wake_slow`]).
    ///
    /// A tick that probes the container the worker already knows (almost all wake-ups),
    /// with no stop waiting, is taken here: the probe, then the next tick (a tick's event
    /// is usually still in the queue's hand, as the run loop holds probe ticks: it is
    /// filed again rather than pushed as a copy, [`Ctx::after_again`]), and the `Probe`
    /// transition. The queue and the trace do not see each other, so either may go first
    /// (the steadiest tick traces first, so that the queue's call is its last); what the
    /// result changes (rarely anything) comes after both, as on the step-by-step path.
    #[inline(never)]
    pub(crate) fn probe_worker_wake(
        &mut self,
        ctx: &mut Ctx,
        slot: u32,
        gen: u64,
        wake: ProbeWake,
        source: u64,
    ) {
        // The workers' copies of `IsPodTerminationRequested` must be up to date before a
        // worker is read (only while the reach point they serve is unmarked).
        let unmarked = !self.prober.reached_probe_while_terminating;
        if wake != ProbeWake::Tick
            || (unmarked && self.prober.terminating_stale(self.pw.records.watch()))
        {
            return self.probe_worker_wake_slow(ctx, slot, gen, wake, source);
        }
        let p = &mut self.prober;
        let w = match p.slots.get_mut(slot as usize) {
            Some(Some(w)) if u64::from(w.gen) == gen => w,
            _ => return,
        };
        // (A worker told to stop has no steady container.)
        let Some(id) = w.probes_now(ctx.now()) else {
            return self.probe_worker_wake_slow(ctx, slot, gen, wake, source);
        };
        #[cfg(debug_assertions)]
        {
            w.check_wake(source, &self.status);
            // A steady worker does not see the pod's termination requested (one that does
            // takes the step-by-step path, which marks the reach point).
            super::worker::note_probe_while_terminating(
                ctx,
                &mut p.reached_probe_while_terminating,
                &self.pw,
                w,
                unmarked,
            );
        }
        // The steadiest tick of all: the runtime answers without the clock or a draw, the
        // answer is the settled result, and the tick's event is in the queue's hand.
        // Anything else takes the tick's general end, out of line.
        let Some(ok) = ctx.exec_probe_steady(id, w.kind, w.handler) else {
            return self.probe_tick_general(ctx, slot, id);
        };
        let result = if ok {
            ProbeResult::Success
        } else {
            ProbeResult::Failure
        };
        // The held event's slot is read once: it is filed again after the transition.
        let held = match ctx.held_slot() {
            Some(held) if w.is_settled(result) => held,
            _ => return self.probe_tick_general(ctx, slot, id),
        };
        p.probes_run += 1;
        // A settled result's verdict is the one the kept transition holds already (see
        // `Worker::settles`): nothing is written. Debug builds write it again, and check
        // that it was there and that recording the result changes nothing.
        #[cfg(debug_assertions)]
        {
            let verdict = if ok {
                ProbeVerdict::Success
            } else {
                ProbeVerdict::Failure
            };
            let before = w.rec().clone();
            assert_eq!(
                *w.probe_record(verdict),
                before,
                "a settled result's verdict is already kept"
            );
            assert_eq!(
                w.record(result),
                Some(false),
                "a settled result changes nothing"
            );
        }
        let tick = || KEv::ProbeWorker {
            slot,
            gen,
            wake: ProbeWake::Tick,
            source,
        };
        // The transition first: across its call only the handle and the period are kept,
        // and the queue's call is then the last thing done.
        let period = w.period();
        ctx.emit_hinted(w.rec(), w.name_word);
        ctx.refile_held(held, period, tick);
        #[cfg(debug_assertions)]
        self.probe_check_published(slot);
    }

    /// The steady tick's end when [`Kubelet::probe_worker_wake`]'s shortest one does not
    /// apply: the probe of container `id` (the worker's steady one) in full, its result
    /// counted, then the next tick and the `Probe` transition, then what the result
    /// changes (rarely anything).
    #[cold]
    #[inline(never)]
    fn probe_tick_general(&mut self, ctx: &mut Ctx, slot: u32, id: crate::model::ContainerId) {
        let p = &mut self.prober;
        p.probes_run += 1;
        let w = p.worker_at(slot);
        // The tick's own fields, from the worker it woke (fewer values kept for this call).
        let (gen, source) = (u64::from(w.gen), w.source);
        let out = probe_exec(ctx, w, id);
        let verdict = match out {
            Ok(true) => ProbeVerdict::Success,
            Ok(false) => ProbeVerdict::Failure,
            Err(_) => ProbeVerdict::Error,
        };
        let _ = w.probe_record(verdict);
        // Whether the worker's copy of the published result is to be checked (debug
        // builds), once the worker is no longer borrowed.
        #[cfg(debug_assertions)]
        let mut check_published = false;
        let changed = match out {
            Ok(ok) => {
                let result = if ok {
                    ProbeResult::Success
                } else {
                    ProbeResult::Failure
                };
                match w.record(result) {
                    Some(true) => Some(result),
                    #[cfg(debug_assertions)]
                    Some(false) => {
                        check_published = true;
                        None
                    }
                    _ => None,
                }
            }
            Err(_) => None,
        };
        if let Some(result) = changed {
            return self.probe_tick_publish(ctx, slot, result);
        }
        // The worker found above is still the one to file and trace: no second look-up.
        let tick = KEv::ProbeWorker {
            slot,
            gen,
            wake: ProbeWake::Tick,
            source,
        };
        let _ = ctx.after_again(w.period(), tick);
        ctx.emit_hinted(w.rec(), w.name_word);
        #[cfg(debug_assertions)]
        if check_published {
            self.probe_check_published(slot);
        }
    }

    /// The steady tick's end when its probe's result must be published: the next tick,
    /// the `Probe` transition, then the result.
    #[cold]
    #[inline(never)]
    fn probe_tick_publish(&mut self, ctx: &mut Ctx, slot: u32, result: ProbeResult) {
        let w = self.prober.worker(slot);
        let tick = KEv::ProbeWorker {
            slot,
            gen: u64::from(w.gen),
            wake: ProbeWake::Tick,
            source: w.source,
        };
        let _ = ctx.after_again(w.period(), tick);
        ctx.emit_hinted(w.rec(), w.name_word);
        self.probe_publish_changed(ctx, slot, result);
    }
}
