//! The kubelet's handle on the world for one event.

use super::apiserver::ApiServer;
use super::cri::{Caller, CriClient, CriReq};
use super::node::LogindEv;
use super::runtime::Runtime;
use super::{stats, Epoch, Event, Tracer};
use crate::model::{ApiPod, ContainerId, PodUid, ProbeHandler, ProbeType, RunningPod, Transition};
use crate::sim::{Dur, Sim, SimTime, TimerKey};
use std::sync::Arc;

/// The kubelet's handle on the world for one event.
pub(crate) struct Ctx<'a, K> {
    sim: &'a mut Sim<Event<K>>,
    trace: &'a mut Tracer,
    runtime: &'a mut Runtime,
    api: &'a mut ApiServer,
    /// The incarnation of the kubelet acting through this handle.
    epoch: Epoch,
}

impl<'a, K> Ctx<'a, K> {
    pub(crate) fn new(
        sim: &'a mut Sim<Event<K>>,
        trace: &'a mut Tracer,
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
    pub(crate) fn epoch(&self) -> Epoch {
        self.epoch
    }

    pub(crate) fn now(&self) -> SimTime {
        self.sim.now()
    }

    /// Set a kubelet timer.
    pub(crate) fn after(&mut self, d: Dur, ev: K) -> TimerKey {
        self.sim.after(d, Event::Kubelet(self.epoch, ev))
    }

    /// [`Ctx::after`] of a timer equal to the one being handled: when the run loop left
    /// that one in the queue's hand, it is filed again instead of a copy being pushed (the
    /// same order; see `Sim::after_again`).
    #[inline(always)]
    pub(crate) fn after_again(&mut self, d: Dur, ev: K) -> TimerKey
    where
        K: PartialEq,
    {
        let same = |a: &Event<K>, b: &Event<K>| match (a, b) {
            (Event::Kubelet(x, k), Event::Kubelet(y, l)) => x == y && k == l,
            _ => false,
        };
        let epoch = self.epoch;
        self.sim
            .after_again(d, move || Event::Kubelet(epoch, ev), same)
    }

    /// The queue's slot of the event being handled, when the run loop holds it in the
    /// queue's hand (so that [`Ctx::refile_held`] files it again).
    #[inline(always)]
    pub(crate) fn held_slot(&self) -> Option<u32> {
        self.sim.held_slot()
    }

    /// [`Ctx::after_again`] of the held event, in `slot` as [`Ctx::held_slot`] answered:
    /// it is filed again `d` from now (debug builds check it is that one, equal to
    /// `ev()`), without a second look at what is held.
    #[inline(always)]
    pub(crate) fn refile_held(&mut self, slot: u32, d: Dur, ev: impl FnOnce() -> K)
    where
        K: PartialEq,
    {
        let epoch = self.epoch;
        self.sim.refile_held(slot, d, move |held| match held {
            Event::Kubelet(e, k) => *e == epoch && *k == ev(),
            _ => false,
        });
    }

    pub(crate) fn cancel(&mut self, key: TimerKey) {
        self.sim.cancel(key);
    }

    pub(crate) fn emit(&mut self, t: Transition) {
        self.trace.emit(self.sim.now(), &t);
    }

    /// [`Ctx::emit`] of a transition the caller keeps (to take its fields back), with a
    /// word the caller kept that the transition's hash takes (a probe's: its container
    /// name's, see `Transition::trace_hash_hinted`; 0: none); the same hash.
    #[inline]
    pub(crate) fn emit_hinted(&mut self, t: &Transition, hint: u64) {
        self.trace.emit_hinted(self.sim.now(), t, hint);
    }

    /// Mark reach point `r` (a rare state this run got into; not part of the trace).
    #[inline]
    pub(crate) fn reach(&mut self, r: crate::model::reach::Reach) {
        self.trace.reach(r as u32);
    }

    /// Issue a CRI call; the reply comes back through `Kubelet::on_cri_reply`.
    pub(crate) fn cri(&mut self, caller: Caller, req: CriReq) {
        let client = CriClient {
            epoch: self.epoch,
            caller,
        };
        self.runtime.issue(self.sim, self.trace, client, req);
    }

    /// Hand a pod status the PLEG's cache dropped back to the runtime, which refills it
    /// at a later inspection if no one else holds it (`Runtime::recycle_status`).
    #[inline]
    pub(crate) fn recycle_status(&mut self, st: std::sync::Arc<crate::model::RtPodStatus>) {
        self.runtime.recycle_status(st);
    }

    /// `runtimeCache.GetPods` after `ForceUpdateIfOlder(now)`: the running pods, as a fresh
    /// CRI list shows them. (Modelled as instantaneous.)
    pub(crate) fn list_running_pods(&self) -> Vec<RunningPod> {
        self.runtime.running_pods()
    }

    /// The stats summary (cAdvisor / summary API, memory only), fresh as of now.
    pub(crate) fn stats_summary(&self) -> stats::StatsSummary {
        self.runtime.stats_summary(self.sim.now())
    }

    /// [`Ctx::stats_summary`]'s node figures only (no per-pod list).
    pub(crate) fn stats_node(&self) -> stats::StatsSummary {
        self.runtime.stats_node(self.sim.now())
    }

    /// CRI `ListImages`: (image, size) of every image on the node. (Instantaneous.)
    pub(crate) fn list_images(&self) -> Vec<(String, u64)> {
        self.runtime.list_images()
    }

    /// The images the runtime's containers (all of them, exited included) were created
    /// from, as `GetPods(all)` shows them. (Instantaneous.)
    pub(crate) fn images_in_use(&self) -> std::collections::BTreeSet<std::sync::Arc<str>> {
        self.runtime.images_in_use()
    }

    /// The UIDs of [`Ctx::list_running_pods`] that `keep` accepts (asked about every runtime
    /// pod in UID order, before its containers are read), into a buffer (cleared first).
    pub(crate) fn list_running_pod_uids_where(
        &self,
        keep: impl FnMut(PodUid) -> bool,
        out: &mut Vec<PodUid>,
    ) {
        self.runtime.running_pod_uids_where(keep, out)
    }

    /// The pods that joined or left the [`Ctx::list_running_pods`] listing since the last
    /// call, with the epoch to pass next (an index of the runtime's: housekeeping updates
    /// its orphan list from it instead of listing every pod; see `Runtime::take_running_changes`).
    pub(crate) fn running_pod_changes(
        &mut self,
        synced: Option<u64>,
        out: &mut Vec<PodUid>,
    ) -> (crate::model::change_log::Changes, u64) {
        self.runtime.take_running_changes(synced, out)
    }

    /// Whether [`Ctx::list_running_pods`] would list the pod.
    pub(crate) fn pod_listed_running(&self, uid: PodUid) -> bool {
        self.runtime.pod_listed_running(uid)
    }

    /// [`Ctx::list_pod_dirs`] restricted to the directories whose volumes are unmounted.
    pub(crate) fn list_unmounted_pod_dirs(&self) -> Vec<PodUid> {
        self.runtime.unmounted_pod_dirs()
    }

    /// A listing of the kubelet's pods directory: (pod UID, volumes still mounted).
    pub(crate) fn list_pod_dirs(&self) -> Vec<(PodUid, bool)> {
        self.runtime.pod_dirs()
    }

    /// The pod cgroups present on the node (what a listing of the cgroup hierarchy shows).
    pub(crate) fn list_pod_cgroups(&self) -> Vec<PodUid> {
        self.runtime.pod_cgroups()
    }

    /// [`Ctx::list_running_pods`] restricted to `uids`.
    pub(crate) fn list_running_pods_of(&self, uids: &[PodUid]) -> Vec<RunningPod> {
        self.runtime.running_pods_of(uids)
    }

    /// Run a probe against a container (the prober's exec, HTTP, TCP or gRPC call). Modelled
    /// as instantaneous: the answer comes from the container's `behaviour.probes`. Inlined
    /// into the probe worker, whose every tick asks.
    #[inline(always)]
    pub(crate) fn exec_probe(
        &mut self,
        id: ContainerId,
        kind: ProbeType,
        handler: ProbeHandler,
    ) -> Result<bool, &'static str> {
        let now = self.sim.now();
        self.runtime.exec_probe(now, id, kind, handler)
    }

    /// [`Ctx::exec_probe`] when the runtime can answer without the clock or a draw (see
    /// `Runtime::exec_probe_steady`); `None`: ask [`Ctx::exec_probe`].
    #[inline(always)]
    pub(crate) fn exec_probe_steady(
        &mut self,
        id: ContainerId,
        kind: ProbeType,
        handler: ProbeHandler,
    ) -> Option<bool> {
        let now = self.sim.now();
        self.runtime.exec_probe_steady(now, id, kind, handler)
    }

    /// The status manager sends GET + PATCH for `uid`; the API's answer comes back through
    /// `Kubelet::status_on_api`.
    pub(crate) fn api_status_sync(&mut self, uid: PodUid) {
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
    pub(crate) fn api_create_mirror(&mut self, pod: Arc<ApiPod>) {
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
    pub(crate) fn api_delete_mirror(&mut self, uid: PodUid) {
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
    pub(crate) fn logind_inhibit(&mut self, lock: u64, delay: Dur) {
        let _ = self
            .sim
            .after(Dur::ZERO, Event::Logind(LogindEv::Inhibit { lock, delay }));
    }

    /// Close a delay lock's file descriptor.
    pub(crate) fn logind_release(&mut self, lock: u64) {
        let _ = self
            .sim
            .after(Dur::ZERO, Event::Logind(LogindEv::Release { lock }));
    }

    /// The status manager's final DELETE (grace 0, UID precondition).
    pub(crate) fn api_delete(&mut self, uid: PodUid) {
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
