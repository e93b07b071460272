//! The kubelet process and the node's power: a `kubeletRestart` (crash, downtime,
//! start), logind's side of a node shutdown, and the power-off.

use super::world::{Event, World};
use crate::kubelet::{Ctx, KEv, Kubelet, Tally};
use crate::model::Transition;
use crate::model::{PowerOffCause, ProcessEvent};
use crate::world::node::{LogindEv, ShutdownRequest};
use crate::world::Epoch;

/// What the node left behind when it powered off.
#[derive(Clone, Debug, Default)]
pub(crate) struct PowerOffFacts {
    pub(crate) containers_alive: u32,
    pub(crate) statuses_lost: u32,
}

/// The kubelet process as the world sees it: which incarnation runs, and whether it runs.
/// Events addressed to another incarnation, or arriving while the kubelet is down, are
/// dropped (see [`World::kubelet_crash`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct KubeletProcess {
    pub(crate) epoch: Epoch,
    pub(crate) up: bool,
    /// The run seed (each incarnation's own streams derive from it).
    pub(crate) seed: u64,
    /// Crashes so far.
    pub(crate) crashes: u32,
    /// What the dead incarnations did (for the metrics: the summary adds the running
    /// one's).
    pub(crate) dead: Tally,
}

impl KubeletProcess {
    /// Incarnation 0, running.
    pub(crate) fn new(seed: u64) -> Self {
        KubeletProcess {
            epoch: 0,
            up: true,
            seed,
            crashes: 0,
            dead: Tally::default(),
        }
    }

    /// What every incarnation so far did, `running` being the current one.
    pub(crate) fn tally(&self, running: &Kubelet) -> Tally {
        let mut t = self.dead.clone();
        t.add(running.tally());
        t
    }

    /// Whether something addressed to incarnation `epoch` reaches a running kubelet.
    pub(crate) fn live(&self, epoch: Epoch) -> bool {
        self.up && epoch == self.epoch
    }
}

impl World {
    /// The kubelet process dies (`kubeletRestart`, first half). Every in-memory structure
    /// goes with it: the `Kubelet` is replaced by a fresh, not yet started one. Whatever is
    /// still addressed to the dead incarnation is dropped when it arrives: its timers, the
    /// replies to its CRI calls (the calls themselves complete in the runtime), its watch
    /// deliveries, and its status PATCH / DELETE requests that had not reached the API
    /// server yet (their connection died with the process; a request that arrived before
    /// the crash took effect). The runtime, the API server and the node's disk keep their
    /// state. A restart while the kubelet is already down supersedes the pending start.
    pub(crate) fn kubelet_crash(&mut self) {
        let old = self.process.epoch;
        if self.process.up {
            self.trace.emit(
                self.sim.now(),
                &Transition::KubeletProcess {
                    what: ProcessEvent::Crashed,
                    epoch: old,
                },
            );
            self.process.crashes += 1;
            self.process.dead.add(self.kubelet.tally());
            self.api.disconnect_watch();
            self.files.disconnect();
            let now = self.sim.now();
            if self.node.release_all(now, &mut self.trace) {
                self.power_off_node(PowerOffCause::InhibitorLockReleased);
            }
        }
        self.process.up = false;
        self.process.epoch = old + 1;
        let seed = crate::kubelet::restart::incarnation_seed(self.process.seed, self.process.epoch);
        self.kubelet = Kubelet::new(&self.scenario.kubelet, &self.scenario.node, seed);
    }

    /// The next kubelet process starts after the downtime (`kubeletRestart`, second half),
    /// rebuilding in upstream's order: volume reconstruction from disk, then the PLEG (whose
    /// first relist sees every container as new), status manager and sync loop, and the API
    /// watch, whose initial list reaches the pod workers as ADDs before the source is ready.
    pub(super) fn kubelet_start(&mut self, epoch: Epoch) {
        if epoch != self.process.epoch || self.process.up {
            return; // superseded by a later restart
        }
        self.process.up = true;
        self.trace.emit(
            self.sim.now(),
            &Transition::KubeletProcess {
                what: ProcessEvent::Started,
                epoch,
            },
        );
        self.api.connect_watch(&mut self.sim, epoch);
        self.files.connect(&mut self.sim, epoch);
        let mut ctx = Ctx::new(
            &mut self.sim,
            &mut self.trace,
            &mut self.runtime,
            &mut self.api,
            epoch,
        );
        self.kubelet.reconstruct_volumes(&mut ctx);
        self.kubelet.start(&mut ctx);
    }

    /// logind handles a D-Bus call or its delay timer.
    pub(super) fn logind(&mut self, ev: LogindEv) {
        let now = self.sim.now();
        match ev {
            LogindEv::Inhibit { lock, delay } => {
                self.node.inhibit(now, &mut self.trace, lock, delay);
            }
            LogindEv::Release { lock } => {
                if self.node.release(now, &mut self.trace, lock) {
                    self.power_off_node(PowerOffCause::InhibitorLockReleased);
                }
            }
            LogindEv::DelayExpired => {
                self.node.delay_timer = None;
                self.power_off_node(PowerOffCause::InhibitDelayExpired);
            }
        }
    }

    /// Timeline `nodeShutdown`: logind is asked to shut the node down.
    pub(super) fn node_shutdown(&mut self) {
        let now = self.sim.now();
        match self.node.request_shutdown(now, &mut self.trace) {
            ShutdownRequest::Ignored => {}
            ShutdownRequest::PowerOffNow => self.power_off_node(PowerOffCause::NoInhibitorLock),
            ShutdownRequest::Delay(max) => {
                let key = self.sim.after(max, Event::Logind(LogindEv::DelayExpired));
                self.node.delay_timer = Some(key);
                let _ = self.sim.after(
                    crate::sim::Dur::ZERO,
                    Event::Kubelet(self.process.epoch, KEv::PrepareForShutdown(true)),
                );
            }
        }
    }

    /// The node powers off: every container dies, the kubelet stops, and every node
    /// event still queued is dropped from now on (`Event::on_node`).
    fn power_off_node(&mut self, cause: PowerOffCause) {
        let now = self.sim.now();
        if let Some(key) = self.node.delay_timer.take() {
            self.sim.cancel(key);
        }
        // Status-manager phases that never reached the API server.
        let lost = self
            .kubelet
            .status_phases()
            .filter(|(uid, phase)| self.api.get(*uid).is_some_and(|p| p.status.phase != *phase))
            .count() as u32;
        let alive = self.runtime.power_off(&mut self.sim, &mut self.trace);
        self.trace.emit(now, &Transition::PowerOff { cause, alive });
        self.node.mark_powered_off(now, cause);
        self.power_off = PowerOffFacts {
            containers_alive: alive,
            statuses_lost: lost,
        };
    }
}
