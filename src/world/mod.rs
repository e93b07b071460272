//! What the kubelet talks to: the container runtime, the API server, and the workload each
//! container runs. Also the closed [`Event`] enum of a run and the [`Ctx`] through which the
//! kubelet acts on the world: it can issue CRI calls and API requests and set timers, but it
//! cannot read the runtime's or the API server's ground truth (design.md decision 3).

pub mod apiserver;
pub mod dist;
pub mod runtime;
pub mod stats;

use crate::kubelet::KEv;
use crate::model::{PodUid, RunningPod, Transition};
use crate::sim::{Dur, Sim, SimTime, TimerKey, Trace};
use apiserver::{ApiServer, WatchEvent};
use runtime::{CriReq, CriResult, RtEvent, Runtime};

/// Who is waiting for a CRI reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Caller {
    /// A pod worker's in-flight sync operation `op`, sub-step `tag`.
    Worker { uid: PodUid, op: u64, tag: u32 },
    /// The PLEG's relist.
    Pleg,
    /// The container deletor (removal of dead containers).
    Deletor,
}

/// Every event of a run.
#[derive(Clone, Debug)]
pub enum Event {
    /// Scenario pod declaration `i` is created in the API server.
    CreatePod(usize),
    /// Scenario timeline action `i` happens.
    Timeline(usize),
    /// The runtime's own process events.
    Runtime(RtEvent),
    /// A CRI call completes (its effect is applied now).
    CriComplete {
        caller: Caller,
        req: CriReq,
        fault: Option<crate::model::CriError>,
    },
    /// A CRI reply that was held back (a stop waiting for the process to exit).
    CriReply {
        caller: Caller,
        req: CriReq,
        result: CriResult,
    },
    /// A watch event reaches the kubelet's config source.
    Watch(WatchEvent),
    /// The watch's initial list reached the kubelet.
    WatchSynced,
    /// The status manager's GET + PATCH for a pod reaches the API server.
    ApiStatusSync { uid: PodUid },
    /// The status manager's final DELETE reaches the API server.
    ApiDelete { uid: PodUid },
    /// A kubelet timer or wake-up.
    Kubelet(KEv),
}

/// The kubelet's handle on the world for one event.
pub struct Ctx<'a> {
    sim: &'a mut Sim<Event>,
    trace: &'a mut Trace,
    runtime: &'a mut Runtime,
    api: &'a mut ApiServer,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        sim: &'a mut Sim<Event>,
        trace: &'a mut Trace,
        runtime: &'a mut Runtime,
        api: &'a mut ApiServer,
    ) -> Self {
        Ctx {
            sim,
            trace,
            runtime,
            api,
        }
    }

    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// Set a kubelet timer.
    pub fn after(&mut self, d: Dur, ev: KEv) -> TimerKey {
        self.sim.after(d, Event::Kubelet(ev))
    }

    pub fn cancel(&mut self, key: TimerKey) {
        self.sim.cancel(key);
    }

    pub fn emit(&mut self, t: Transition) {
        self.trace.emit(self.sim.now(), &t);
    }

    /// Issue a CRI call; the reply comes back through `Kubelet::on_cri_reply`.
    pub fn cri(&mut self, caller: Caller, req: CriReq) {
        self.runtime.issue(self.sim, self.trace, caller, req);
    }

    /// `runtimeCache.GetPods` after `ForceUpdateIfOlder(now)`: the running pods, as a fresh
    /// CRI list shows them. (Modelled as instantaneous.)
    pub fn list_running_pods(&self) -> Vec<RunningPod> {
        self.runtime.running_pods()
    }

    /// The stats summary (cAdvisor / summary API, memory only), fresh as of now.
    pub fn stats_summary(&self) -> stats::StatsSummary {
        self.runtime.stats_summary(self.sim.now())
    }

    /// The UIDs of [`Ctx::list_running_pods`], without building the pod objects.
    pub fn list_running_pod_uids(&self) -> Vec<PodUid> {
        self.runtime.running_pod_uids()
    }

    /// [`Ctx::list_running_pods`] restricted to `uids`.
    pub fn list_running_pods_of(&self, uids: &[PodUid]) -> Vec<RunningPod> {
        self.runtime.running_pods_of(uids)
    }

    /// The status manager sends GET + PATCH for `uid`; the API's answer comes back through
    /// `Kubelet::status_on_api`.
    pub fn api_status_sync(&mut self, uid: PodUid) {
        let d = self.api.write_latency();
        let _ = self.sim.after(d, Event::ApiStatusSync { uid });
    }

    /// The status manager's final DELETE (grace 0, UID precondition).
    pub fn api_delete(&mut self, uid: PodUid) {
        let d = self.api.write_latency();
        let _ = self.sim.after(d, Event::ApiDelete { uid });
    }
}
