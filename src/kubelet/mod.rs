//! The kubelet port: a faithful model of the kubelet's pod-lifecycle logic, driven by
//! events through a [`Ctx`].
//!
//! **The `current` profile follows upstream Kubernetes v1.31** (`pkg/kubelet` at the
//! v1.31 release; see [`UPSTREAM_RELEASE`]), with the effective crash-loop behaviour of
//! v1.30-v1.34 (issue 123602). Each file names the upstream file it ports and where it
//! deliberately differs.
//!
//! * [`pod_workers`]: `pod_workers.go`, the per-UID lifecycle state machine (its record).
//! * [`worker_loop`]: `pod_workers.go`, `UpdatePod`, the worker loop and its completion.
//! * [`sync`]: the sync functions and the runtime manager parts they drive.
//! * [`cri_reply`]: a sync operation's CRI replies, parking and end.
//! * [`pleg`]: the generic PLEG and the pod status cache.
//! * [`status`]: the status manager and phase computation.
//! * [`config`]: config source classification and the pod manager.
//! * [`housekeeping`]: the `HandlePodCleanups` port.
//! * [`prober`]: the probe manager, probe workers and results managers.
//! * [`nodeshutdown`]: the graceful node shutdown manager.
//! * [`backoff`]: the `flowcontrol.Backoff` port.
//! * [`admission`]: `canAdmitPod` (resource fit, eviction admit handler) and
//!   `filterOutInactivePods`.
//! * [`eviction`]: the eviction manager (memory signal, thresholds, ranking, `evictPod`).
//! * [`restart`]: what a restarted kubelet process recovers (volume reconstruction).
//!
//! The sync loop itself is [`Kubelet::handle`]: each input channel of upstream's
//! `syncLoopIteration` is a separate event, so when several are ready at the same instant
//! the run's scheduler picks the order, as Go's `select` would.
//!
//! Kubelet code never reads the runtime's or the API server's ground truth: it sees CRI
//! replies (through the PLEG cache or direct calls) and watch events only.

pub(crate) mod active_deadline;
pub(crate) mod admission;
pub(crate) mod api_statuses;
pub(crate) mod backoff;
pub(crate) mod conditions;
pub(crate) mod config;
pub(crate) mod container_gc;
pub(crate) mod cri_reply;
pub(crate) mod eviction;
mod eviction_reclaim;
pub(crate) mod eviction_signals;
pub(crate) mod gates;
mod hooks;
pub(crate) mod housekeeping;
pub(crate) mod image_gc;
pub(crate) mod init_containers;
pub(crate) mod kill_order;
pub(crate) mod known_report;
pub(crate) mod legacy;
pub(crate) mod nodeshutdown;
mod nodeshutdown_v122;
pub(crate) mod objects;
pub(crate) mod pleg;
pub(crate) mod pod_workers;
pub(crate) mod prober;
pub(crate) mod profile;
pub(crate) mod profile_doc;
pub(crate) mod reason_cache;
pub(crate) mod record_map;
#[allow(dead_code)] // wired in by the release profiles and the feature-gate table
pub(crate) mod release;
pub(crate) mod restart;
mod spare;
pub(crate) mod status;
mod status_memo;
pub(crate) mod status_sync;
pub(crate) mod sync;
mod sync_rare;
mod v122;
pub(crate) mod worker_loop;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod pod_workers_asserts;

use crate::model::uid_map::UidMap;
use crate::model::{ApiPod, ContainerId, PodPhase, PodUid, ProbeType};
use crate::scenario::{KubeletSpec, NodeSpec};
use crate::sim::{Dur, SimTime};
use crate::world::apiserver::WatchEvent;
use crate::world::cri::{Caller, CriReq, CriResult};
use backoff::{Backoff, ContainerBackoff};
use config::PodManager;
use eviction::EvictionManager;
use nodeshutdown::ShutdownManager;
use pleg::Pleg;
use pod_workers::{PodWorkers, Work};
use prober::{ProbeManager, ProbeWake};
use status::StatusManager;
use std::collections::BTreeMap;

/// The upstream release the `current` profile follows.
pub(crate) const UPSTREAM_RELEASE: &str = "v1.31";

/// `backOffPeriod`: the pod-worker error back-off and the initial crash-loop back-off.
pub(crate) const BACKOFF_PERIOD: Dur = Dur::secs(10);
/// `minDeadContainerInPod`: dead containers the deletor keeps per container name.
pub(crate) const MIN_DEAD_CONTAINERS_IN_POD: usize = 1;
/// `MaxContainerBackOff`.
pub(crate) const MAX_CONTAINER_BACKOFF: Dur = Dur::secs(300);

/// The kubelet's handle on the world ([`crate::world::Ctx`]), its timers being [`KEv`]s.
pub(crate) type Ctx<'a> = crate::world::Ctx<'a, KEv>;

/// Kubelet timers and wake-ups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum KEv {
    /// A pod worker's signal channel fired.
    WorkerWake(PodUid),
    /// A pod worker blocked in `GetNewerThan` can go on.
    WorkerCacheReady(PodUid),
    /// The 1 s sync ticker.
    SyncTick,
    /// The 2 s housekeeping ticker.
    HousekeepingTick,
    /// The PLEG relist timer.
    PlegRelist,
    /// PLEG events for a pod reach the sync loop: whether any is sync-worthy, and the
    /// containers that died.
    PlegEvent {
        uid: PodUid,
        sync: bool,
        died: Vec<ContainerId>,
    },
    /// The status manager's change signal.
    StatusSignal,
    /// The status manager's periodic full sync.
    StatusTick,
    /// A PreStop hook ran out of grace.
    PreStopTimeout {
        uid: PodUid,
        op: u64,
        id: ContainerId,
    },
    /// A sidecar waited for its turn to stop as long as its grace allows.
    KillTurnTimeout {
        uid: PodUid,
        op: u64,
        id: ContainerId,
    },
    /// A probe worker wakes up: its slot and instance find it, and the worker's own record
    /// holds its key (pod, container, probe type), so a tick moves no name around. `source`:
    /// the worker's source key for the schedulers that tell sources apart, kept in the worker
    /// (see [`crate::run::sources::probe_worker_source`]).
    ProbeWorker {
        slot: u32,
        gen: u64,
        wake: ProbeWake,
        source: u64,
    },
    /// A results manager's update channel has an update for the sync loop.
    ProbeUpdates(ProbeType),
    /// logind's `PrepareForShutdown` signal (D-Bus) reaches the shutdown manager.
    PrepareForShutdown(bool),
    /// The shutdown manager's timer for priority group `group` fired.
    ShutdownGroupDeadline { group: usize },
    /// The v1.22 shutdown manager: the critical pods' wait ended (`critical`), or the
    /// wait for the kills reached `shutdownGracePeriod`.
    ShutdownV122Timer { critical: bool },
    /// A `killPodNow` caller stops waiting: channel `ch` closed, or its timeout fired.
    KillPodNowReturned {
        uid: PodUid,
        ch: u64,
        timed_out: bool,
    },
    /// The eviction manager's sleep between rounds ended.
    EvictionSync,
    /// The eviction manager's `waitForPodsCleanup` ticker (round number).
    EvictionCleanupPoll(u64),
    /// The eviction manager's `waitForPodsCleanup` timeout (round number).
    EvictionCleanupTimeout(u64),
    /// The v1.21 pod killer's goroutine receives a request from its channel.
    PodKillerReceive,
    /// The v1.21 design's periodic container garbage collection.
    LegacyContainerGc,
    /// The container garbage collector's period (`container_gc.rs`).
    ContainerGc,
    /// The volume manager's desired state populator loop, after a restart (100 ms).
    VolumePopulatorTick,
    /// Switch `postStartCancelledByDeletion`: the cancelled SyncPod `op` of `uid` stops
    /// waiting on its postStart hook.
    PostStartCancelled { uid: PodUid, op: u64 },
    /// The image garbage collector's period (`image_gc.rs`).
    ImageGc,
}

/// All in-memory kubelet state.
#[derive(Clone, Debug)]
pub(crate) struct Kubelet {
    /// The run's behaviour switches: the profile with the scenario's overrides.
    pub(crate) b: profile::Behaviours,
    pub(crate) config: PodManager,
    pub(crate) pw: PodWorkers,
    pub(crate) pleg: Pleg,
    pub(crate) status: StatusManager,
    pub(crate) prober: ProbeManager,
    pub(crate) shutdown: ShutdownManager,
    pub(crate) crash_backoff: ContainerBackoff,
    pub(crate) image_backoff: Backoff,
    /// `reasonCache`: the last start failure of each container.
    pub(crate) reason_cache: reason_cache::ReasonCache,
    /// The volume manager's actual state: pods whose volumes are mounted (a set indexed
    /// by UID: every `SyncPod` asks it; walked in UID order).
    pub(crate) mounted: crate::model::uid_map::UidSet,
    /// The volume manager's desired state of world for reconstructed volumes (restart.rs).
    pub(crate) vol_dsw: restart::VolumePopulator,
    /// Secret and configmap registrations, and the mount back-off.
    pub(crate) objects: objects::Objects,
    /// The boxes of ended sync operations, for the next ones (`spare.rs`).
    spare_ops: spare::SpareOps,
    /// The CRI calls of pod workers (and of the v1.21 pod killer) that await a reply, by
    /// (pod, operation, step tag); checked against every reply (`cri_reply.rs`). Debug
    /// builds only: a check.
    #[cfg(debug_assertions)]
    pub(crate) worker_calls: BTreeMap<(PodUid, u64, u32), cri_reply::StepCalls>,
    /// The emptied list of containers to start of the last `SyncPod` (`sync.rs`): a
    /// crash-looping pod's every retry lists its container again.
    spare_to_start: Vec<usize>,
    /// The emptied text of the last crash-loop back-off error, taken back from its
    /// `SyncEnd` transition (`sync.rs`): the next retry writes its error there.
    spare_message: String,
    /// Workers blocked in `GetNewerThan`, with the work they will run (looked up by UID
    /// only, never walked).
    pub(crate) waiting_work: UidMap<(u64, Work)>,
    pub(crate) sync_tick: Dur,
    pub(crate) housekeeping_period: Dur,
    /// Offsets of the first PLEG relist and the first housekeeping tick after a start.
    pub(crate) pleg_phase: Dur,
    pub(crate) housekeeping_phase: Dur,
    /// Housekeeping runs (true in every real run; conformance tests that drive the pod
    /// workers by hand switch it off, as upstream's pod-worker tests have no housekeeping).
    pub(crate) housekeeping_enabled: bool,
    /// The node's allocatable resources (admission).
    pub(crate) allocatable: admission::Allocatable,
    pub(crate) eviction: EvictionManager,
    /// State of the v1.21 design (`podWorkerOwnsLifecycle: false`).
    pub(crate) legacy: legacy::LegacyState,
    /// The container garbage collector's policy: the scenario's `containerGC`, else the
    /// upstream defaults on the newest release (`current`, `v1.31`); `None` (no collector) on
    /// older releases (a modelling choice kept from before the release profiles, not a
    /// release difference: every release has a container garbage collector).
    pub(crate) container_gc: Option<crate::scenario::types::ContainerGc>,
    /// The image garbage collector (its policy, records and periodic runs).
    pub(crate) image_gc: image_gc::ImageGcManager,
    /// Buffers housekeeping reuses every pass (no allocation per pass).
    pub(crate) hk: housekeeping::Scratch,
    /// The status manager's reconcile candidates, kept between periodic batches.
    pub(crate) reconcile: status_sync::ReconcileIndex,
    /// The sync-loop tick's list of pods to sync (a buffer reused every tick).
    sync_due: Vec<PodUid>,
}

impl Kubelet {
    /// A kubelet configured by the scenario's `spec.kubelet`, on a node of `node`'s
    /// capacity, its random streams derived from `seed`.
    pub(crate) fn new(spec: &KubeletSpec, node: &NodeSpec, seed: u64) -> Self {
        let t = &spec.timing;
        let b = gates::resolve(&spec.profile, &spec.feature_gates, &spec.behaviours);
        let mut k = Kubelet {
            b,
            config: PodManager::default(),
            pw: PodWorkers::new(seed, spec.config.sync_frequency, BACKOFF_PERIOD),
            pleg: Pleg::new(t.pleg_relist_period),
            status: StatusManager::new(t.status_sync_period),
            prober: ProbeManager::new(seed),
            shutdown: ShutdownManager::new(&spec.config),
            crash_backoff: ContainerBackoff::new(BACKOFF_PERIOD, MAX_CONTAINER_BACKOFF),
            image_backoff: Backoff::new(BACKOFF_PERIOD, MAX_CONTAINER_BACKOFF),
            reason_cache: Default::default(),
            spare_ops: spare::SpareOps::new(),
            #[cfg(debug_assertions)]
            worker_calls: BTreeMap::new(),
            spare_to_start: Vec::new(),
            spare_message: String::new(),
            mounted: Default::default(),
            vol_dsw: Default::default(),
            objects: Default::default(),
            waiting_work: UidMap::new(),
            sync_tick: t.sync_loop_tick,
            housekeeping_period: t.housekeeping_period,
            pleg_phase: t.pleg_relist_phase,
            housekeeping_phase: t.housekeeping_phase,
            housekeeping_enabled: true,
            allocatable: admission::Allocatable::new(&spec.config, node),
            eviction: EvictionManager::new(spec),
            legacy: legacy::LegacyState::new(seed),
            container_gc: spec.container_gc.or_else(|| {
                release::is_newest(&spec.profile).then(crate::scenario::defaults::container_gc)
            }),
            image_gc: image_gc::ImageGcManager::new(spec),
            hk: housekeeping::Scratch::default(),
            reconcile: Default::default(),
            sync_due: Vec::new(),
        };
        k.pw.b = b;
        k.pleg.b = b;
        k.status.b = b;
        k.prober.b = b;
        k.shutdown.b = b;
        k.eviction.b = b;
        k.image_gc.spare_new = b.on(profile::Sw::ImageGcSparesNewImages);
        k
    }

    /// Start the kubelet's loops (`Run`): PLEG, sync loop tickers, status manager, and the
    /// eviction manager (started once the runtime is up, its first round at once).
    pub(crate) fn start(&mut self, ctx: &mut Ctx) {
        self.prober.start = ctx.now();
        let _ = ctx.after(self.pleg_phase, KEv::PlegRelist);
        let _ = ctx.after(Dur::ZERO, KEv::EvictionSync);
        let _ = ctx.after(self.sync_tick, KEv::SyncTick);
        let _ = ctx.after(
            self.housekeeping_period + self.housekeeping_phase,
            KEv::HousekeepingTick,
        );
        let _ = ctx.after(self.status.period, KEv::StatusTick);
        if self.legacy() {
            let _ = ctx.after(legacy::CONTAINER_GC_PERIOD, KEv::LegacyContainerGc);
        }
        if let Some(gc) = self.container_gc {
            let _ = ctx.after(gc.period, KEv::ContainerGc);
        }
        if self.image_gc.periodic {
            let _ = ctx.after(self.image_gc.policy.period, KEv::ImageGc);
        }
        self.shutdown_start(ctx);
    }

    /// One kubelet event. A probe worker's wake-up (two events in three on a node with
    /// probes) is taken first; the rest go through [`Kubelet::handle_other`], out of line.
    #[inline]
    pub(crate) fn handle(&mut self, ctx: &mut Ctx, ev: KEv) {
        match ev {
            KEv::ProbeWorker {
                slot,
                gen,
                wake,
                source,
            } => self.probe_worker_wake(ctx, slot, gen, wake, source),
            ev => self.handle_other(ctx, ev),
        }
    }

    /// [`Kubelet::handle`] of every event but a probe worker's wake-up.
    #[inline(never)]
    fn handle_other(&mut self, ctx: &mut Ctx, ev: KEv) {
        match ev {
            KEv::WorkerWake(uid) if self.legacy() => self.legacy_worker_wake(ctx, uid),
            KEv::WorkerWake(uid) => self.worker_wake(ctx, uid),
            KEv::WorkerCacheReady(uid) => self.worker_cache_ready(ctx, uid),
            KEv::SyncTick => {
                // getPodsToSync: pods in config whose work-queue entry is due, then those
                // a sync-loop handler (the active-deadline handler) asks for.
                // The list is built in a buffer kept between ticks. A due UID no longer in
                // config is not dropped here: `handle_pod_syncs` looks each UID up anyway
                // and skips those, and the deadline handler only names pods in config, so
                // one search a UID gives the same syncs as a filter and then a lookup.
                let mut due = std::mem::take(&mut self.sync_due);
                self.pw.work_queue.get_work_into(ctx.now(), &mut due);
                let deadline = self.deadline_pods_to_sync(ctx.now(), &due);
                due.extend(deadline);
                self.handle_pod_syncs(ctx, &due);
                self.sync_due = due;
                let _ = ctx.after(self.sync_tick, KEv::SyncTick);
            }
            KEv::HousekeepingTick => {
                if self.config.sources_ready && self.housekeeping_enabled {
                    self.volume_populator_settle(ctx);
                    if self.legacy() {
                        self.legacy_handle_pod_cleanups(ctx);
                    } else {
                        self.handle_pod_cleanups(ctx);
                    }
                }
                let _ = ctx.after(
                    self.housekeeping_period + self.housekeeping_phase,
                    KEv::HousekeepingTick,
                );
            }
            KEv::PlegRelist => self.pleg_relist(ctx),
            KEv::PlegEvent { uid, sync, died } => {
                if sync {
                    self.handle_pod_syncs(ctx, &[uid]);
                }
                for id in died {
                    self.clean_up_containers_in_pod(ctx, uid, id);
                }
            }
            KEv::StatusSignal => self.status_sync_batch(ctx, false),
            KEv::StatusTick => {
                self.status_sync_batch(ctx, true);
                let _ = ctx.after(self.status.period, KEv::StatusTick);
            }
            KEv::PreStopTimeout { uid, op, id } => self.prestop_timeout(ctx, uid, op, id),
            KEv::KillTurnTimeout { uid, op, id } => self.kill_turn_timeout(ctx, uid, op, id),
            KEv::ProbeWorker { .. } => unreachable!("taken by Kubelet::handle"),
            KEv::ProbeUpdates(kind) => self.on_probe_updates(ctx, kind),
            KEv::PrepareForShutdown(now) => self.on_prepare_for_shutdown(ctx, now),
            KEv::ShutdownGroupDeadline { group } => self.shutdown_group_deadline(ctx, group),
            KEv::ShutdownV122Timer { critical } => self.v122_shutdown_timer(ctx, critical),
            KEv::KillPodNowReturned { uid, ch, timed_out } => {
                self.kill_pod_now_returned(ctx, uid, ch, timed_out)
            }
            KEv::EvictionSync => self.eviction_round(ctx),
            KEv::EvictionCleanupPoll(gen) => self.eviction_cleanup_poll(ctx, gen),
            KEv::EvictionCleanupTimeout(gen) => self.eviction_cleanup_timeout(ctx, gen),
            KEv::PodKillerReceive => self.pod_killer_receive(ctx),
            KEv::LegacyContainerGc => self.legacy_container_gc(ctx),
            KEv::ContainerGc => self.container_gc(ctx),
            KEv::ImageGc => self.image_gc(ctx),
            KEv::VolumePopulatorTick => self.volume_populator_tick(ctx),
            KEv::PostStartCancelled { uid, op } => self.post_start_cancelled(ctx, uid, op),
        }
    }

    /// `cleanUpContainersInPod` and the container deletor (`pod_container_deletor.go`,
    /// v1.31): after a container died, remove the exited containers of the same name
    /// except the newest one (all of them once the pod's content may be removed).
    fn clean_up_containers_in_pod(&mut self, ctx: &mut Ctx, uid: PodUid, died: ContainerId) {
        let Ok(status) = self.pleg.cache_get(uid) else {
            return;
        };
        let remove_all = if self.legacy() {
            self.legacy_remove_all_dead(ctx, uid)
        } else {
            self.pw.should_pod_content_be_removed(uid)
        };
        if self.pw.records.get(&uid).is_some_and(|s| s.is_evicted()) {
            ctx.reach(crate::model::reach::Reach::EvictedPodContainerDied);
        }
        let keep = if remove_all {
            0
        } else {
            MIN_DEAD_CONTAINERS_IN_POD
        };
        let Some(name) = status
            .containers
            .iter()
            .find(|c| c.id == died)
            .map(|c| c.name.clone())
        else {
            return;
        };
        let candidates: Vec<ContainerId> = status
            .containers
            .iter()
            .filter(|c| c.name == name && c.state == crate::model::RtState::Exited)
            .map(|c| c.id)
            .collect();
        for id in candidates.into_iter().skip(keep) {
            ctx.cri(Caller::Deletor, CriReq::RemoveContainer { uid, id });
        }
    }

    /// A watch event arrived.
    pub(crate) fn on_watch_event(&mut self, ctx: &mut Ctx, ev: WatchEvent) {
        self.on_watch(ctx, ev);
    }

    /// The API source's initial list arrived.
    pub(crate) fn on_watch_synced(&mut self) {
        self.on_source_ready();
    }

    /// A CRI reply arrived.
    pub(crate) fn on_cri_reply(
        &mut self,
        ctx: &mut Ctx,
        caller: Caller,
        req: CriReq,
        result: CriResult,
    ) {
        match caller {
            Caller::Pleg => self.pleg_on_relist(ctx, result),
            Caller::Deletor => self.deletor_reply(&req, result.error().is_none()),
            Caller::ImageGc => {}
            Caller::Reclaim => self.eviction_reclaim_reply(ctx),
            Caller::Worker { uid, op, tag } => self.worker_on_cri(ctx, uid, op, tag, req, result),
        }
    }

    /// The status manager's GET reached the API server.
    pub(crate) fn status_on_get(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        current: Option<&ApiPod>,
    ) -> Option<std::sync::Arc<crate::model::ApiPodStatus>> {
        self.status_on_api_get(ctx, uid, current)
    }

    /// The behaviour switches this kubelet runs with, by name.
    pub(crate) fn behaviours(&self) -> BTreeMap<String, bool> {
        self.b.to_map()
    }

    /// The delay the graceful node shutdown manager will ask logind for: the sum of its
    /// priority groups' periods (what its logind drop-in sets `InhibitDelayMaxSec` to).
    pub(crate) fn shutdown_delay_requested(&self) -> Dur {
        nodeshutdown::period_requested(&self.shutdown.groups)
    }

    /// The namespace and name the status manager GETs pod `uid` by (the mirror pod's, for
    /// a static pod), if it holds a status for it.
    pub(crate) fn status_get_key(&self, uid: PodUid) -> Option<(&str, &str)> {
        self.status
            .statuses
            .get(&uid)
            .map(|v| (&*v.spec.namespace, v.spec.name.as_str()))
    }

    /// The phase of every status the status manager holds (what it will write, or has
    /// written, to the API server).
    pub(crate) fn status_phases(&self) -> impl Iterator<Item = (PodUid, PodPhase)> + '_ {
        self.status
            .statuses
            .iter()
            .map(|(uid, v)| (*uid, v.status.phase))
    }

    /// What this kubelet did that a run summary reports.
    pub(crate) fn tally(&self) -> Tally {
        Tally {
            relists: self.pleg.relists,
            probes_run: self.prober.probes_run,
            evictions: self.eviction.history.clone(),
            node_conditions: self.eviction.condition_changes.clone(),
            reclaims: self.eviction.reclaims.clone(),
            image_gc_runs: self.image_gc.runs.clone(),
        }
    }
}

/// What a kubelet process did that the run summary reports: counters and histories. A
/// `kubeletRestart` replaces the process, so the run adds up the tallies of every
/// incarnation ([`Tally::add`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// PLEG relists.
    pub(crate) relists: u64,
    /// Probes the prober ran (liveness, readiness and startup together).
    pub(crate) probes_run: u64,
    /// Every eviction by the eviction manager, in order.
    pub(crate) evictions: Vec<eviction::EvictionRecord>,
    /// Every change of a node condition the eviction manager made: (time, condition,
    /// status), in order.
    pub(crate) node_conditions: Vec<(SimTime, &'static str, bool)>,
    /// Every node-level reclaim of the eviction manager, in order.
    pub(crate) reclaims: Vec<eviction_reclaim::ReclaimRecord>,
    /// Every periodic image collection that had something to free, in order.
    pub(crate) image_gc_runs: Vec<image_gc::ImageGcRun>,
}

impl Tally {
    /// Add the tally of a later incarnation.
    pub(crate) fn add(&mut self, later: Tally) {
        self.relists += later.relists;
        self.probes_run += later.probes_run;
        self.evictions.extend(later.evictions);
        self.node_conditions.extend(later.node_conditions);
        self.reclaims.extend(later.reclaims);
        self.image_gc_runs.extend(later.image_gc_runs);
    }
}
