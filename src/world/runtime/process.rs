//! The container processes: their own exits and SIGKILLs ([`RtEvent`]), the stop replies
//! an exit releases, the node's power-off, the timeline's `containerExit`, and probes
//! answered from the container's behaviour.

use super::{Container, Runtime, Tracer};
use crate::model::{
    Behaviour, ContainerId, PodUid, ProbeHandler, ProbeOutcome, ProbeType, RtState, Transition,
};
use crate::model::{CriFailed, ProcessSignal};
use crate::sim::{Sim, SimTime};
use crate::world::cri::{CriClient, CriReq, CriResult};
use crate::world::Event;
use std::sync::Arc;

/// Events the runtime schedules for itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RtEvent {
    /// The process exits on its own (run time over, or SIGTERM handled).
    ProcExit {
        id: ContainerId,
        gen: u32,
        code: i32,
        reason: &'static str,
    },
    /// The stop timeout expired: SIGKILL.
    Sigkill { id: ContainerId, gen: u32 },
}

/// What a probe's exec reads of one container's record: whether it runs (state `Running`,
/// not removed), since when, and its behaviour. The runtime keeps one per container ID in a
/// dense vector beside the records (16 bytes, four to a cache line), in step with every
/// write of those fields ([`Runtime::sync_exec_view`]): a probe comes seconds after the
/// last, when the container's own line-sized record has left the data cache, and this
/// small copy is more likely to still be there. It holds nothing the record does not.
#[derive(Clone, Debug, Default)]
pub(super) struct ExecView {
    /// The container's start (meaningful while `behaviour` is set).
    since: SimTime,
    /// The container's behaviour while it runs; `None` while it does not.
    behaviour: Option<Arc<Behaviour>>,
}

/// The exec views of the containers, by ID, and beside them one byte per container: the
/// answers its probes get without the clock or a draw. A steady probe (an `Always`
/// outcome) reads only that byte: a few hundred containers' bytes take a few cache lines,
/// which the probes of all the pods keep in the data cache, where a view of its own (a
/// quarter of a line, and the behaviour it points to) is often gone by the container's next
/// probe. Both are written together, by [`Runtime::sync_exec_view`] only.
#[derive(Clone, Debug, Default)]
pub(super) struct ExecViews {
    views: Vec<ExecView>,
    /// By container ID: two bits per probe kind, at bit `2 * kind`: the upper one set when
    /// the container runs and its behaviour answers probes of that kind the same way
    /// always, the lower one that answer (see [`ExecView::steady_bits`]).
    steady: Vec<u8>,
}

impl ExecViews {
    /// Room for `n` containers' views and bytes.
    pub(super) fn reserve(&mut self, n: usize) {
        self.views.reserve_exact(n.saturating_sub(self.views.len()));
        self.steady
            .reserve_exact(n.saturating_sub(self.steady.len()));
    }
}

impl ExecView {
    /// The view of a container's record (of no container: `None`).
    fn of(c: Option<&Container>) -> Self {
        match c {
            Some(c) if c.state == RtState::Running && !c.removed => ExecView {
                since: c.started_at.unwrap_or(c.created_at),
                behaviour: Some(c.behaviour.clone()),
            },
            _ => ExecView::default(),
        }
    }

    /// The byte [`ExecViews::steady`] keeps for this view: for each probe kind that the
    /// behaviour of a running container answers the same way always (`Always`), two bits at
    /// `2 * kind`: 2, plus 1 for a success. 0 for a container that does not run.
    fn steady_bits(&self) -> u8 {
        let Some(b) = &self.behaviour else {
            return 0;
        };
        [
            ProbeType::Liveness,
            ProbeType::Readiness,
            ProbeType::Startup,
        ]
        .into_iter()
        .map(|kind| match b.probe_outcome(kind) {
            ProbeOutcome::Always(ok) => (2 | u8::from(ok)) << (2 * kind as u32),
            _ => 0,
        })
        .fold(0, |bits, b| bits | b)
    }

    /// Debug builds: the same answers as `other` (the same start while running, and the
    /// same shared behaviour).
    #[cfg(debug_assertions)]
    fn same(&self, other: &ExecView) -> bool {
        match (&self.behaviour, &other.behaviour) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b) && self.since == other.since,
            (None, None) => true,
            _ => false,
        }
    }
}

impl Runtime {
    /// Bring the exec view of container `id` in step with its record: called after every
    /// write of its state, start or removal.
    pub(super) fn sync_exec_view(&mut self, id: ContainerId) {
        let view = ExecView::of(self.containers.get(&id));
        let i = id.0 as usize;
        let v = &mut self.exec_views;
        if v.views.len() <= i {
            v.views.resize_with(i + 1, ExecView::default);
            v.steady.resize(i + 1, 0);
        }
        v.steady[i] = view.steady_bits();
        v.views[i] = view;
    }

    /// A probe against container `id` (an `ExecSync`, or an HTTP/TCP/gRPC request to the
    /// container), answered at once from the container's behaviour: `Ok(true)` success,
    /// `Ok(false)` failure, `Err` when the probe could not run. Times in the behaviour count
    /// from the container's start. Against a container that is not running, an exec probe
    /// errors (the runtime refuses the exec) and a network probe fails (connection refused).
    #[inline(always)]
    pub(crate) fn exec_probe(
        &mut self,
        now: SimTime,
        id: ContainerId,
        kind: ProbeType,
        handler: ProbeHandler,
    ) -> Result<bool, &'static str> {
        let view = self.exec_views.views.get(id.0 as usize);
        #[cfg(debug_assertions)]
        assert!(
            view.unwrap_or(&ExecView::default())
                .same(&ExecView::of(self.containers.get(&id))),
            "container {id:?}: its exec view is stale"
        );
        let Some((since, behaviour)) = view.and_then(|v| Some((v.since, v.behaviour.as_ref()?)))
        else {
            return match handler {
                ProbeHandler::Exec => Err("container is not running"),
                ProbeHandler::HttpGet | ProbeHandler::TcpSocket | ProbeHandler::Grpc => Ok(false),
            };
        };
        let up = now.since(since);
        Ok(match behaviour.probe_outcome(kind) {
            ProbeOutcome::Always(ok) => ok,
            ProbeOutcome::FailFrom(d) => up < d,
            ProbeOutcome::FailBetween(from, to) => !(from <= up && up < to),
            ProbeOutcome::FailureRatio(ppm) => !self.probe_chance(ppm),
        })
    }

    /// [`Runtime::exec_probe`] when its answer needs neither the clock nor a draw: a
    /// running container whose behaviour answers probes of this kind the same way always
    /// (`Some` of that answer); `None` for anything else, which the caller then asks
    /// [`Runtime::exec_probe`] (nothing is read or drawn here that would change).
    #[inline(always)]
    pub(crate) fn exec_probe_steady(
        &mut self,
        now: SimTime,
        id: ContainerId,
        kind: ProbeType,
        handler: ProbeHandler,
    ) -> Option<bool> {
        // The container's byte, its two bits for this kind at the bottom.
        let bits = *self.exec_views.steady.get(id.0 as usize)? >> (2 * kind as u32);
        // Debug builds: the byte is the one its view gives.
        debug_assert_eq!(
            self.exec_views.steady[id.0 as usize],
            self.exec_views.views[id.0 as usize].steady_bits(),
            "container {id:?}: its steady probe answers are stale"
        );
        if bits & 2 == 0 {
            return None;
        }
        let ok = bits & 1 != 0;
        // Debug builds: the full exec gives the same answer (an `Always` draws nothing).
        debug_assert_eq!(self.exec_probe(now, id, kind, handler), Ok(ok));
        #[cfg(not(debug_assertions))]
        let _ = (now, handler);
        Some(ok)
    }

    /// A draw of the probe stream: true with probability `ppm` parts per million (out of
    /// line, so that [`Runtime::exec_probe`] stays small where it is inlined).
    #[inline(never)]
    fn probe_chance(&mut self, ppm: u32) -> bool {
        self.probe_rng.chance_ppm(ppm)
    }

    /// Handle one of the runtime's own events. Returns stop calls that are now answered.
    pub(crate) fn on_event<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        ev: RtEvent,
    ) -> Vec<(CriClient, CriReq, CriResult)> {
        match ev {
            RtEvent::ProcExit {
                id,
                gen,
                code,
                reason,
            } => {
                if self
                    .containers
                    .get(&id)
                    .is_some_and(|c| c.gen == gen && c.state == RtState::Running)
                {
                    return self.exit(sim, trace, id, code, reason);
                }
            }
            RtEvent::Sigkill { id, gen } => {
                if self
                    .containers
                    .get(&id)
                    .is_some_and(|c| c.gen == gen && c.state == RtState::Running)
                {
                    let uid = self.containers[&id].uid;
                    trace.emit(
                        sim.now(),
                        &Transition::Signal {
                            uid,
                            id,
                            signal: ProcessSignal::Sigkill,
                        },
                    );
                    self.sigkills += 1;
                    return self.exit(sim, trace, id, 137, "Error");
                }
            }
        }
        Vec::new()
    }

    /// The process of container `id` ends now with `code`.
    pub(super) fn exit<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        id: ContainerId,
        code: i32,
        reason: &'static str,
    ) -> Vec<(CriClient, CriReq, CriResult)> {
        let now = sim.now();
        let Some(c) = self.containers.get_mut(&id) else {
            return Vec::new();
        };
        c.state = RtState::Exited;
        c.exit_code = code;
        c.reason = reason;
        c.finished_at = Some(now);
        c.gen += 1;
        let uid = c.uid;
        // A hook in flight ends with its container (the exec'd process dies with it; an
        // HTTP hook loses its server). The kubelet only logs a preStop hook's failure, so
        // its reply is a plain completion; a postStart hook's is a failure.
        let (waiters, hooks) = match c.calls.as_deref_mut() {
            Some(f) => {
                let waiters = std::mem::take(&mut f.stop_waiters);
                let hooks = std::mem::take(&mut f.hooks);
                f.hooks_answered
                    .extend(hooks.iter().map(|h| (h.0, h.2.name())));
                (waiters, hooks)
            }
            None => (Vec::new(), Vec::new()),
        };
        self.sync_exec_view(id);
        self.refresh_running(uid);
        self.note_changed(uid);
        trace.emit(
            now,
            &Transition::ContainerExited {
                uid,
                id,
                code,
                reason,
            },
        );
        let mut out = Vec::new();
        for (caller, req) in waiters {
            let r = self.finish(sim, trace, &req, CriResult::Ok);
            out.push((caller, req, r));
        }
        for (_, caller, req) in hooks {
            // A postStart hook whose container died under it failed.
            let r = match req {
                CriReq::ExecPostStart { .. } => CriResult::Failed(CriFailed::PostStartHookFailed),
                _ => CriResult::Ok,
            };
            let r = self.finish(sim, trace, &req, r);
            out.push((caller, req, r));
        }
        out
    }

    /// The node powers off: every process dies with it (exit code 137, reason
    /// `PowerOff`), every sandbox is gone, and no CRI call is answered any more. Returns
    /// how many containers were still running.
    pub(crate) fn power_off<K>(&mut self, sim: &mut Sim<Event<K>>, trace: &mut Tracer) -> u32 {
        // A running container is never removed (removal kills it first).
        let running: Vec<ContainerId> = self
            .live
            .iter()
            .filter(|id| {
                self.containers
                    .get(id)
                    .is_some_and(|c| c.state == RtState::Running)
            })
            .copied()
            .collect();
        for id in &running {
            // Stop callers are never answered: the kubelet is gone too.
            if let Some(c) = self.containers.get_mut(id) {
                c.powered_off = true;
                if let Some(f) = c.calls.as_deref_mut() {
                    f.stop_waiters.clear();
                    f.hooks.clear();
                }
            }
            let _ = self.exit(sim, trace, *id, 137, "PowerOff");
        }
        for sb in self.sandboxes.values_mut() {
            sb.ready = false;
        }
        // Nothing runs and no sandbox is ready any more.
        self.running = crate::model::uid_map::UidSet::default();
        self.running_log.note_all();
        running.len() as u32
    }

    /// Timeline `containerExit`: the newest running container of that name exits.
    pub(crate) fn container_exit<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        name: &str,
        code: i32,
    ) -> Vec<(CriClient, CriReq, CriResult)> {
        let id = self.pods.get(&uid).and_then(|p| {
            p.live
                .iter()
                .rev()
                .find(|c| {
                    self.containers
                        .get(c)
                        .is_some_and(|c| *c.name == *name && c.state == RtState::Running)
                })
                .copied()
        });
        match id {
            Some(id) => {
                let reason = if code == 0 {
                    "Completed"
                } else if code == 137 {
                    "OOMKilled"
                } else {
                    "Error"
                };
                self.exit(sim, trace, id, code, reason)
            }
            None => Vec::new(),
        }
    }
}
