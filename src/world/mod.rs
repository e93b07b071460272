//! What the kubelet talks to: the container runtime, the API server, and the workload each
//! container runs. Also the closed [`Event`] enum of a run and the [`Ctx`] through which the
//! kubelet acts on the world: it can issue CRI calls and API requests and set timers, but it
//! cannot read the runtime's or the API server's ground truth (design.md decision 3).

pub mod apiserver;
pub mod dist;
pub mod node;
pub mod runtime;
pub mod stats;

use crate::kubelet::KEv;
use crate::model::{ContainerId, PodUid, ProbeHandler, ProbeType, RunningPod, Transition};
use crate::sim::{Dur, Sim, SimTime, TimerKey};
use apiserver::{ApiServer, WatchEvent};
use node::LogindEv;
use runtime::{CriReq, CriResult, RtEvent, Runtime};

/// The run's trace: every transition is hashed, optionally kept, and shown to the
/// invariant oracle (which never changes the hash).
pub type Trace = crate::sim::Trace<crate::oracle::Oracle>;

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

/// A kubelet incarnation: 0 for the kubelet started with the run, one more after each
/// `kubeletRestart`. Everything addressed to a kubelet process (its timers, CRI replies,
/// watch deliveries, answers to its API requests) carries the incarnation it belongs to;
/// the world drops what belongs to a dead one.
pub type Epoch = u32;

/// The client of a CRI call: the kubelet incarnation that made it, and who in it waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CriClient {
    pub epoch: Epoch,
    pub caller: Caller,
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
        caller: CriClient,
        req: CriReq,
        fault: Option<crate::model::CriError>,
    },
    /// A CRI reply that was held back (a stop waiting for the process to exit).
    CriReply {
        caller: CriClient,
        req: CriReq,
        result: CriResult,
    },
    /// A watch event reaches the config source of kubelet incarnation `.0`.
    Watch(Epoch, WatchEvent),
    /// The watch's initial list reached kubelet incarnation `.0`.
    WatchSynced(Epoch),
    /// The status manager's GET + PATCH for a pod reaches the API server.
    ApiStatusSync { uid: PodUid, epoch: Epoch },
    /// The status manager's final DELETE reaches the API server.
    ApiDelete { uid: PodUid, epoch: Epoch },
    /// A timer or wake-up of kubelet incarnation `.0`.
    Kubelet(Epoch, KEv),
    /// Kubelet incarnation `.0` starts after a restart's downtime.
    KubeletStart(Epoch),
    /// The static-pod file source reports a manifest change (inotify) to kubelet
    /// incarnation `.0`.
    File(Epoch, WatchEvent),
    /// The file source's initial listing reached kubelet incarnation `.0`.
    FileSynced(Epoch),
    /// The kubelet's request to create a mirror pod reaches the API server.
    ApiCreateMirror {
        pod: std::sync::Arc<crate::model::ApiPod>,
        epoch: Epoch,
    },
    /// The kubelet's request to delete a mirror pod reaches the API server.
    ApiDeleteMirror { uid: PodUid, epoch: Epoch },
    /// systemd-logind: a D-Bus call from the kubelet, or its own delay timer.
    Logind(LogindEv),
}

impl Event {
    /// Whether the event happens on the node (kubelet, runtime, logind, and the kubelet's
    /// side of the API connection). After power-off these are dropped.
    pub fn on_node(&self) -> bool {
        match self {
            Event::CreatePod(_) | Event::Timeline(_) => false,
            Event::Runtime(_)
            | Event::CriComplete { .. }
            | Event::CriReply { .. }
            | Event::Watch(..)
            | Event::WatchSynced(_)
            | Event::ApiStatusSync { .. }
            | Event::ApiDelete { .. }
            | Event::Kubelet(..)
            | Event::KubeletStart(_)
            | Event::File(..)
            | Event::FileSynced(_)
            | Event::ApiCreateMirror { .. }
            | Event::ApiDeleteMirror { .. }
            | Event::Logind(_) => true,
        }
    }
}

/// The node's static-pod manifest directory, as the kubelet's file source sees it:
/// changes are delivered in order and at once (inotify); the periodic re-list, which finds
/// nothing new when inotify works, is not modelled. A (re)started kubelet's file source
/// lists every manifest first.
#[derive(Clone, Debug, Default)]
pub struct FileSource {
    manifests: std::collections::BTreeMap<String, std::sync::Arc<crate::model::ApiPod>>,
    /// The manifest last removed, per pod name (what `restoreStaticPod` puts back).
    removed: std::collections::BTreeMap<String, std::sync::Arc<crate::model::ApiPod>>,
    last_delivery: SimTime,
    /// The kubelet incarnation whose file source watches, if one runs.
    epoch: Option<Epoch>,
}

impl FileSource {
    fn deliver(
        &mut self,
        sim: &mut Sim<Event>,
        kind: apiserver::WatchKind,
        pod: std::sync::Arc<crate::model::ApiPod>,
    ) {
        let Some(epoch) = self.epoch else {
            return; // no kubelet watches: it lists the directory when it starts
        };
        let at = sim.now().max(self.last_delivery + Dur(1));
        self.last_delivery = at;
        let _ = sim.at(at, Event::File(epoch, WatchEvent { kind, pod }));
    }

    /// Kubelet incarnation `epoch` starts its file source: every manifest, then "synced".
    pub fn connect(&mut self, sim: &mut Sim<Event>, epoch: Epoch) {
        self.epoch = Some(epoch);
        let pods: Vec<_> = self.manifests.values().cloned().collect();
        for pod in pods {
            self.deliver(sim, apiserver::WatchKind::Added, pod);
        }
        let at = sim.now().max(self.last_delivery + Dur(1));
        self.last_delivery = at;
        let _ = sim.at(at, Event::FileSynced(epoch));
    }

    /// The kubelet died: nobody watches the directory.
    pub fn disconnect(&mut self) {
        self.epoch = None;
    }

    /// The manifest with this pod name, if present.
    pub fn get(&self, name: &str) -> Option<&std::sync::Arc<crate::model::ApiPod>> {
        self.manifests.get(name)
    }

    /// A manifest appears.
    pub fn add(&mut self, sim: &mut Sim<Event>, pod: std::sync::Arc<crate::model::ApiPod>) {
        self.manifests.insert(pod.spec.name.clone(), pod.clone());
        self.deliver(sim, apiserver::WatchKind::Added, pod);
    }

    /// A manifest is removed; returns the pod it described.
    pub fn remove(
        &mut self,
        sim: &mut Sim<Event>,
        name: &str,
    ) -> Option<std::sync::Arc<crate::model::ApiPod>> {
        let old = self.manifests.remove(name)?;
        self.removed.insert(name.to_string(), old.clone());
        self.deliver(sim, apiserver::WatchKind::Deleted, old.clone());
        Some(old)
    }

    /// The manifest last removed under this pod name puts back unchanged (same content,
    /// so the same UID); `None` if a manifest with the name is present or none was removed.
    pub fn restore(
        &mut self,
        sim: &mut Sim<Event>,
        name: &str,
    ) -> Option<std::sync::Arc<crate::model::ApiPod>> {
        if self.manifests.contains_key(name) {
            return None;
        }
        let pod = self.removed.remove(name)?;
        self.add(sim, pod.clone());
        Some(pod)
    }
}

/// The kubelet's handle on the world for one event.
pub struct Ctx<'a> {
    sim: &'a mut Sim<Event>,
    trace: &'a mut Trace,
    runtime: &'a mut Runtime,
    api: &'a mut ApiServer,
    /// The incarnation of the kubelet acting through this handle.
    epoch: Epoch,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        sim: &'a mut Sim<Event>,
        trace: &'a mut Trace,
        runtime: &'a mut Runtime,
        api: &'a mut ApiServer,
        epoch: Epoch,
    ) -> Self {
        Ctx {
            sim,
            trace,
            runtime,
            api,
            epoch,
        }
    }

    /// The incarnation of the kubelet acting through this handle.
    pub fn epoch(&self) -> Epoch {
        self.epoch
    }

    pub fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// Set a kubelet timer.
    pub fn after(&mut self, d: Dur, ev: KEv) -> TimerKey {
        self.sim.after(d, Event::Kubelet(self.epoch, ev))
    }

    pub fn cancel(&mut self, key: TimerKey) {
        self.sim.cancel(key);
    }

    pub fn emit(&mut self, t: Transition) {
        self.trace.emit(self.sim.now(), &t);
    }

    /// Mark reach point `r` (a rare state this run got into; not part of the trace).
    #[inline]
    pub fn reach(&mut self, r: crate::model::reach::Reach) {
        self.trace.reach(r as u32);
    }

    /// Issue a CRI call; the reply comes back through `Kubelet::on_cri_reply`.
    pub fn cri(&mut self, caller: Caller, req: CriReq) {
        let client = CriClient {
            epoch: self.epoch,
            caller,
        };
        self.runtime.issue(self.sim, self.trace, client, req);
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

    /// [`Ctx::stats_summary`]'s node figures only (no per-pod list).
    pub fn stats_node(&self) -> stats::StatsSummary {
        self.runtime.stats_node(self.sim.now())
    }

    /// The UIDs of [`Ctx::list_running_pods`], without building the pod objects.
    pub fn list_running_pod_uids(&self) -> Vec<PodUid> {
        self.runtime.running_pod_uids()
    }

    /// A listing of the kubelet's pods directory: (pod UID, volumes still mounted).
    pub fn list_pod_dirs(&self) -> Vec<(PodUid, bool)> {
        self.runtime.pod_dirs()
    }

    /// The pod cgroups present on the node (what a listing of the cgroup hierarchy shows).
    pub fn list_pod_cgroups(&self) -> Vec<PodUid> {
        self.runtime.pod_cgroups()
    }

    /// [`Ctx::list_running_pods`] restricted to `uids`.
    pub fn list_running_pods_of(&self, uids: &[PodUid]) -> Vec<RunningPod> {
        self.runtime.running_pods_of(uids)
    }

    /// Run a probe against a container (the prober's exec, HTTP, TCP or gRPC call). Modelled
    /// as instantaneous: the answer comes from the container's `behaviour.probes`.
    pub fn exec_probe(
        &mut self,
        id: ContainerId,
        kind: ProbeType,
        handler: ProbeHandler,
    ) -> Result<bool, &'static str> {
        let now = self.sim.now();
        self.runtime.exec_probe(now, id, kind, handler)
    }

    /// The status manager sends GET + PATCH for `uid`; the API's answer comes back through
    /// `Kubelet::status_on_api`.
    pub fn api_status_sync(&mut self, uid: PodUid) {
        let d = self.api.write_latency();
        let _ = self.sim.after(
            d,
            Event::ApiStatusSync {
                uid,
                epoch: self.epoch,
            },
        );
    }

    /// Create the mirror pod of a static pod.
    pub fn api_create_mirror(&mut self, pod: std::sync::Arc<crate::model::ApiPod>) {
        let d = self.api.write_latency();
        let _ = self.sim.after(
            d,
            Event::ApiCreateMirror {
                pod,
                epoch: self.epoch,
            },
        );
    }

    /// Delete a mirror pod (UID precondition).
    pub fn api_delete_mirror(&mut self, uid: PodUid) {
        let d = self.api.write_latency();
        let _ = self.sim.after(
            d,
            Event::ApiDeleteMirror {
                uid,
                epoch: self.epoch,
            },
        );
    }

    /// D-Bus `Inhibit` for a delay lock (the graceful node shutdown manager).
    pub fn logind_inhibit(&mut self, lock: u64, delay: Dur) {
        let _ = self
            .sim
            .after(Dur::ZERO, Event::Logind(LogindEv::Inhibit { lock, delay }));
    }

    /// Close a delay lock's file descriptor.
    pub fn logind_release(&mut self, lock: u64) {
        let _ = self
            .sim
            .after(Dur::ZERO, Event::Logind(LogindEv::Release { lock }));
    }

    /// The status manager's final DELETE (grace 0, UID precondition).
    pub fn api_delete(&mut self, uid: PodUid) {
        let d = self.api.write_latency();
        let _ = self.sim.after(
            d,
            Event::ApiDelete {
                uid,
                epoch: self.epoch,
            },
        );
    }
}
