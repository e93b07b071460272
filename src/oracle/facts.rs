//! The facts several checkers need, updated from each transition before any checker sees
//! it: per UID, the ground truth of the runtime and the node (container instances, running
//! containers, mounts), of the API (deletion, removal, the last status written) and what
//! the kubelet's worker record and the current kubelet process went through; per node,
//! the kubelet process and the graceful shutdown. Checkers read them; state only one
//! checker needs lives in that checker.
//!
//! A check that must see a value as it was just before the transition reads it from
//! [`Facts::before`].

use super::few::Few;
use super::ring::{NodeRing, Rec, Rings, Sym, Syms};
use crate::model::{
    ApiPodStatus, ConfigOpKind, ContainerId, CriOp, HostOp, NoteKind, PodPhase, PodSpec, PodUid,
    ProbeType, ProbeVerdict, ProcessEvent, SandboxId, ShutdownStep, SyncKind, Transition,
    WorkerStep,
};
use crate::sim::SimTime;
use std::sync::Arc;

/// Transitions kept for the node's diagnostics.
const NODE_RING: usize = super::RING;
/// The priority from which a pod is critical (`scheduling.SystemCriticalPriority`).
const CRITICAL_PRIORITY: i32 = 2_000_000_000;

/// One container instance (ground truth).
#[derive(Clone, Debug)]
pub(crate) struct Instance {
    pub(crate) id: ContainerId,
    /// The container's name (in [`Facts::syms`]: [`Facts::text`]).
    pub(crate) name: Sym,
    /// (exit code, when).
    pub(crate) exit: Option<(i32, SimTime)>,
    /// When the kubelet asked the runtime to remove it.
    pub(crate) removed_at: Option<SimTime>,
    /// When it started running.
    pub(crate) running_at: SimTime,
}

/// What one kubelet worker record went through (reset when the record goes, and when the
/// kubelet process dies).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WorkerFacts {
    pub(crate) started: bool,
    pub(crate) term_acked: bool,
    pub(crate) terminating_began: bool,
    pub(crate) terminated_began: bool,
    pub(crate) last_terminating_ok: bool,
    pub(crate) terminated_sync_ok: bool,
    pub(crate) first_sight_terminal: bool,
    pub(crate) terminated: bool,
    pub(crate) finished: bool,
    pub(crate) open_sync: Option<SyncKind>,
    pub(crate) last_grace: Option<i64>,
    /// A kill of the pod is in flight: termination requested and not yet terminated, or
    /// (v1.21 design) a pod-killer kill requested and not yet done.
    pub(crate) kill_in_flight: bool,
    /// When the record's last SyncPod ended.
    pub(crate) last_sync_pod_end: Option<SimTime>,
    /// Termination was requested (TermRequested).
    pub(crate) term_requested: bool,
    /// The open SyncPod is one the worker took up before termination was requested.
    pub(crate) inflight_sync_pod: bool,
    /// A sync ended since termination was requested.
    pub(crate) sync_ended_since_request: bool,
}

/// What the current kubelet incarnation knows of a UID (reset when the process dies).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IncFacts {
    pub(crate) config_known: bool,
    pub(crate) rejected: bool,
    pub(crate) local_terminal: bool,
    /// REMOVEd from config: the status manager may drop the pod's status at any time.
    pub(crate) out_of_config: bool,
    /// When it first saw the pod deleted (after the API delete).
    pub(crate) saw_delete_at: Option<SimTime>,
    /// When it first saw the UID as a runtime-only pod (and had no config for it).
    pub(crate) runtime_only_at: Option<SimTime>,
    /// The termination in progress (requested, not yet finished).
    pub(crate) term_requested_at: Option<SimTime>,
    /// A SyncPod was open when the deletion was seen: when it ended.
    pub(crate) inflight_sync_end: Option<SimTime>,
    pub(crate) inflight_sync_open: bool,
    /// The phase of the status manager's cache (the last `LocalStatus`).
    pub(crate) local_phase: Option<PodPhase>,
    /// When the worker reached Terminated.
    pub(crate) terminated_at: Option<SimTime>,
}

/// Everything shared about one UID.
#[derive(Clone, Debug, Default)]
pub(crate) struct PodFacts {
    pub(crate) spec: Option<Arc<PodSpec>>,
    pub(crate) static_pod: bool,
    pub(crate) mirror_of: Option<PodUid>,
    // ---- ground truth: runtime and node ----
    pub(crate) running: Few<ContainerId>,
    /// Ready sandboxes and when each became ready.
    pub(crate) ready_sandboxes: Few<(SandboxId, SimTime)>,
    pub(crate) instances: Few<Instance>,
    pub(crate) last_exit_at: Option<SimTime>,
    /// When a container of the pod last started running.
    pub(crate) last_started_at: Option<SimTime>,
    pub(crate) mounted: bool,
    pub(crate) cgroup: bool,
    // ---- ground truth: API ----
    pub(crate) api_phase: PodPhase,
    pub(crate) api_status: Option<Arc<ApiPodStatus>>,
    pub(crate) api_status_at: SimTime,
    // ---- the kubelet ----
    pub(crate) worker: WorkerFacts,
    pub(crate) inc: IncFacts,
    /// What only some pods have (a deletion, an eviction, errors): none for most pods.
    cold: Option<Box<ColdFacts>>,
}

/// The part of [`PodFacts`] most pods never need, created on first use: the API's
/// deletion and removal, evictions and their grace overrides, failed calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct ColdFacts {
    deleted_at: Option<SimTime>,
    graceful_delete: bool,
    /// Deleted with grace 0 (a force delete, or a delete of a terminal pod).
    zero_grace_delete: bool,
    /// The largest grace of a delete since the pod was created, or of its spec.
    max_grace: Option<i64>,
    removed_at: Option<SimTime>,
    evicted_at: Option<SimTime>,
    /// The smallest grace override of an eviction of the pod by the running kubelet.
    min_override: Option<i64>,
    /// An eviction override that arrived while the worker, with termination already
    /// requested and no sync open, may have taken up its terminating work (and its grace)
    /// already and be waiting for a newer pod status (GetNewerThan): v1.31 runs that
    /// SyncTerminatingPod with the grace it took (the override only cancels a context
    /// SyncTerminatingPod does not use, TODO 113606), so the override binds only the syncs
    /// after it. (A worker idle in its error back-off has not taken its work up yet; the
    /// check is lenient there.)
    late_override: Option<i64>,
    /// Failed syncs and CRI calls of the pod.
    errors: Vec<SimTime>,
    /// Failed StartContainer calls (each leaves a created container that never ran).
    start_errors: Vec<SimTime>,
    /// The interned text of the pod's last sync error (a crash-looping pod fails its syncs
    /// with the same text again and again): a hint, tried before the string table. Its
    /// default, the first string's id, is a hint like any other.
    last_error: Sym,
}

impl PodFacts {
    /// A static pod's UID starts a new life (its manifest is back): its earlier deletion
    /// no longer counts.
    fn new_life(&mut self) {
        if let Some(c) = self.cold.as_deref_mut() {
            c.deleted_at = None;
            c.graceful_delete = false;
            c.zero_grace_delete = false;
        }
        self.inc.saw_delete_at = None;
        self.inc.inflight_sync_end = None;
        self.inc.inflight_sync_open = false;
    }
    fn cold(&self) -> Option<&ColdFacts> {
        self.cold.as_deref()
    }
    fn cold_mut(&mut self) -> &mut ColdFacts {
        self.cold.get_or_insert_with(Box::default)
    }
    /// A sync of the pod failed at `at` (kept with its failed CRI calls). Out of line: a
    /// sync's end is frequent, a failed one much less, and the growth of the list is not
    /// code a successful end should carry.
    #[cold]
    #[inline(never)]
    fn failed_at(&mut self, at: SimTime) {
        self.cold_mut().errors.push(at);
    }
    /// When the API was asked to delete the pod (first time).
    pub(crate) fn deleted_at(&self) -> Option<SimTime> {
        self.cold().and_then(|c| c.deleted_at)
    }
    /// Deleted with a grace above 0.
    pub(crate) fn graceful_delete(&self) -> bool {
        self.cold().is_some_and(|c| c.graceful_delete)
    }
    /// Deleted with grace 0 (a force delete, or a delete of a terminal pod).
    pub(crate) fn zero_grace_delete(&self) -> bool {
        self.cold().is_some_and(|c| c.zero_grace_delete)
    }
    /// The largest grace the API gave the pod: its spec's, or a delete's (0 before the
    /// pod was created).
    pub(crate) fn max_grace(&self) -> i64 {
        match self.cold().and_then(|c| c.max_grace) {
            Some(g) => g,
            None if self.spec.is_some() => self.spec_grace(),
            None => 0,
        }
    }
    /// When the object left the API server.
    pub(crate) fn removed_at(&self) -> Option<SimTime> {
        self.cold().and_then(|c| c.removed_at)
    }
    /// When the running kubelet last evicted the pod.
    pub(crate) fn evicted_at(&self) -> Option<SimTime> {
        self.cold().and_then(|c| c.evicted_at)
    }
    /// The smallest grace override of an eviction of the pod by the running kubelet.
    pub(crate) fn min_override(&self) -> Option<i64> {
        self.cold().and_then(|c| c.min_override)
    }
    /// Failed StartContainer calls.
    pub(crate) fn start_errors(&self) -> &[SimTime] {
        self.cold().map_or(&[], |c| &c.start_errors)
    }
    /// Forget the grace overrides (their worker record, or the kubelet, went away).
    fn clear_overrides(&mut self) {
        if let Some(c) = self.cold.as_deref_mut() {
            c.min_override = None;
            c.late_override = None;
        }
    }
    /// The pod's name (empty before the oracle saw it created).
    pub(crate) fn name(&self) -> &str {
        self.spec.as_ref().map_or("", |s| s.name.as_str())
    }
    pub(crate) fn is_critical(&self) -> bool {
        self.static_pod
            || self.mirror_of.is_some()
            || self
                .spec
                .as_ref()
                .is_some_and(|s| s.priority >= CRITICAL_PRIORITY)
    }
    pub(crate) fn spec_grace(&self) -> i64 {
        self.spec
            .as_ref()
            .and_then(|s| s.termination_grace_period_seconds)
            .unwrap_or(30)
    }
    pub(crate) fn errors_since(&self, t: SimTime) -> u64 {
        self.cold()
            .map_or(0, |c| c.errors.iter().filter(|e| **e >= t).count() as u64)
    }
    pub(crate) fn instance(&self, id: ContainerId) -> Option<&Instance> {
        self.instances.iter().find(|i| i.id == id)
    }
    /// The static full name of a pod, if it is a static pod.
    pub(crate) fn static_full_name(&self) -> Option<String> {
        if !self.static_pod {
            return None;
        }
        self.spec
            .as_ref()
            .map(|s| format!("{}_{}", s.name, s.namespace))
    }
}

/// Node-level facts.
#[derive(Clone, Debug, Default)]
pub(crate) struct NodeFacts {
    pub(crate) kubelet_down: bool,
    pub(crate) kubelet_started_at: SimTime,
    pub(crate) crashes_at: Vec<SimTime>,
    pub(crate) power_off_at: Option<SimTime>,
    pub(crate) shutdown_started: Option<SimTime>,
    /// The longest shutdown group period seen (a shutdown kill's grace is at most that).
    pub(crate) max_group_period_s: i64,
    /// The node's last transitions (a node finding's diagnosis).
    pub(crate) recent: NodeRing<NODE_RING>,
}

/// Values as they were just before the current transition: on `ConfigOp` and `Worker`, of
/// the pod it is about (the worker record, the incarnation, the eviction override); on
/// `SyncBegin`, of the pod's worker record and eviction override only (its incarnation
/// facts are not saved: no check of a sync's beginning reads them), except on a quiet
/// SyncPod's beginning taken by the oracle's direct path, whose checks read none of them
/// (release builds save nothing there); on `ApiStatusPatched`, of the object written (its
/// API phase); on `Shutdown`, of the node (the shutdown's start). On other transitions
/// they are stale.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Before {
    pub(crate) worker: WorkerFacts,
    pub(crate) inc: IncFacts,
    pub(crate) min_override: Option<i64>,
    /// On `ApiStatusPatched`: the phase the object had.
    pub(crate) api_phase: PodPhase,
    /// On `Shutdown`: when the shutdown had started.
    pub(crate) shutdown_started: Option<SimTime>,
}

/// The facts of one run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts {
    pub(crate) pods: Vec<PodFacts>,
    pub(crate) node: NodeFacts,
    pub(crate) before: Before,
    /// Every pod's last transitions (a finding's diagnosis).
    pub(crate) rings: Rings,
    /// The strings of the rings' records (and of the container instances' names).
    pub(crate) syms: Syms,
    /// On `Probe`, `ProbeWorker` and `ContainerRunning`: the container's name, interned
    /// (stale on other transitions). Checkers compare it with [`Instance::name`] instead of
    /// comparing texts.
    pub(crate) container: Sym,
}

/// The pod a transition is about, if any.
pub(crate) fn uid_of(tr: &Transition) -> Option<PodUid> {
    use Transition::*;
    match tr {
        ApiCreated { uid, .. }
        | ApiDeleteRequested { uid, .. }
        | ApiForceDeleted { uid }
        | ApiConditionSet { uid, .. }
        | ApiStatus { uid, .. }
        | ApiRemoved { uid, .. }
        | WatchDelivered { uid, .. }
        | CriBegin { uid, .. }
        | CriEnd { uid, .. }
        | SandboxReady { uid, .. }
        | SandboxStopped { uid, .. }
        | ContainerRunning { uid, .. }
        | Signal { uid, .. }
        | ContainerExited { uid, .. }
        | Host { uid, .. }
        | PodRejected { uid, .. }
        | Evict { uid, .. }
        | Eviction { uid, .. }
        | ConfigOp { uid, .. }
        | UpdatePod { uid, .. }
        | Worker { uid, .. }
        | SyncBegin { uid, .. }
        | SyncEnd { uid, .. }
        | LocalStatus { uid, .. }
        | LocalStatusDropped { uid, .. }
        | ProbeWorker { uid, .. }
        | Probe { uid, .. }
        | ProbeResult { uid, .. }
        | Note { uid, .. }
        | KillPodNow { uid, .. }
        | SyncStep { uid, .. }
        | StaticManifestRemoved { uid } => Some(*uid),
        ApiStatusPatched { of, .. } => Some(*of),
        Logind { .. }
        | PowerOff { .. }
        | NodeMemoryAvailable { .. }
        | NodeFsPinned { .. }
        | NodePidAvailable { .. }
        | ImageRemoved { .. }
        | NodeReclaim { .. }
        | ImageGc { .. }
        | NodeCondition { .. }
        | Relist { .. }
        | Housekeeping
        | Shutdown { .. }
        | NodeReady { .. }
        | KubeletProcess { .. }
        | ShutdownGroup { .. } => None,
    }
}

/// A note that changes no fact and no checker acts on: the crash-loop back-off of a
/// container, the most frequent note (a failed sync or mount, a v1.21 kill's steps and a
/// sidecar's timed-out turn are not).
#[inline]
pub(crate) fn plain_note(what: NoteKind) -> bool {
    what == NoteKind::CrashLoopBackOff
}

impl Facts {
    pub(crate) fn get(&self, uid: PodUid) -> Option<&PodFacts> {
        self.pods.get(uid.0 as usize)
    }

    /// The facts of `uid`, a pod the oracle saw a transition of (the pod of the current
    /// transition always is).
    pub(crate) fn pod(&self, uid: PodUid) -> &PodFacts {
        &self.pods[uid.0 as usize]
    }

    /// An interned string (a container instance's name).
    pub(crate) fn text(&self, s: Sym) -> &str {
        self.syms.text(s)
    }

    /// The facts of `uid`, made (with those of every lower UID) when it has none yet.
    /// Inlined: a pod seen before, the common case, is one comparison and the index.
    #[inline]
    pub(super) fn pod_mut(&mut self, uid: PodUid) -> &mut PodFacts {
        let i = uid.0 as usize;
        if i < self.pods.len() {
            return &mut self.pods[i];
        }
        self.pod_new(i)
    }

    /// [`Facts::pod_mut`] of a UID the facts do not reach yet.
    #[cold]
    #[inline(never)]
    fn pod_new(&mut self, i: usize) -> &mut PodFacts {
        self.pods.resize_with(i + 1, PodFacts::default);
        &mut self.pods[i]
    }

    /// Keep `tr` in the history of its pod (or of the node).
    fn remember(&mut self, at: SimTime, tr: &Transition) {
        match uid_of(tr) {
            Some(uid) => {
                // Every pod the oracle saw a transition of has its facts.
                self.pod_mut(uid);
                if let Some(rec) = Rec::of(tr, &mut self.syms) {
                    if let Rec::Probe(c, ..) | Rec::ProbeWorker(c, ..) | Rec::Running(_, c) = rec {
                        self.container = c;
                    }
                    self.rings.push(uid, at, rec);
                }
            }
            None => self.node.recent.push(at, tr),
        }
    }

    /// [`Facts::update`] of a `Probe` transition, the most frequent kind (the oracle's
    /// shortcut): it changes no fact, only the pod's history (as [`Facts::remember`] would
    /// keep it) and [`Facts::container`].
    #[inline]
    pub(crate) fn probe(
        &mut self,
        at: SimTime,
        uid: PodUid,
        container: &Arc<str>,
        kind: ProbeType,
        result: ProbeVerdict,
    ) {
        self.pod_mut(uid);
        let c = self.syms.intern_shared(container);
        self.container = c;
        self.rings.push(uid, at, Rec::Probe(c, kind, result));
    }

    /// What an `ApiStatusPatched` of object `obj` changes: the object takes the status,
    /// its phase and time, and [`Before::api_phase`] the phase it had.
    #[inline]
    pub(super) fn status_patched_fact(
        &mut self,
        at: SimTime,
        obj: PodUid,
        status: &Arc<ApiPodStatus>,
    ) {
        let o = self.pod_mut(obj);
        let old = o.api_phase;
        o.api_phase = status.phase;
        o.api_status = Some(status.clone());
        o.api_status_at = at;
        self.before.api_phase = old;
    }

    /// What a `LocalStatus` changes: the phase of the status manager's cache (a terminal
    /// one is remembered).
    #[inline]
    pub(super) fn local_status_fact(&mut self, uid: PodUid, phase: PodPhase) {
        let p = self.pod_mut(uid);
        p.inc.local_phase = Some(phase);
        if phase.is_terminal() {
            p.inc.local_terminal = true;
        }
    }

    /// The fact an `UpdatePod` changes: when the UID was first seen as a runtime-only pod.
    /// (The oracle's direct path pushes the record itself.)
    #[inline]
    pub(super) fn update_pod_fact(&mut self, at: SimTime, uid: PodUid, runtime_only: bool) {
        let p = &mut self.pods[uid.0 as usize];
        if runtime_only && !p.inc.config_known {
            p.inc.runtime_only_at.get_or_insert(at);
        }
    }

    /// Whether [`Facts::cri_end_fact`] changes anything for the end of `call`.
    #[inline(always)]
    pub(super) fn cri_end_changes(call: CriOp, failed: bool) -> bool {
        failed || call == CriOp::RemoveContainer
    }

    /// What the end of CRI call `call` on `target` changes (`failed`: with an error): the
    /// pod's errors, and a removed container's instance (nothing unless
    /// [`Facts::cri_end_changes`]).
    pub(super) fn cri_end_fact(
        &mut self,
        at: SimTime,
        uid: PodUid,
        call: CriOp,
        target: u32,
        failed: bool,
    ) {
        // Every caller made the pod's facts first (with its record).
        let p = &mut self.pods[uid.0 as usize];
        if failed {
            let c = p.cold_mut();
            c.errors.push(at);
            if call == CriOp::StartContainer {
                c.start_errors.push(at);
            }
        }
        if call == CriOp::RemoveContainer && !failed {
            let id = ContainerId(target);
            if let Some(i) = p.instances.iter_mut().find(|i| i.id == id) {
                i.removed_at.get_or_insert(at);
            }
        }
    }

    /// [`Facts::update`] of a sync's end with error `e` other than the pod's last one (the
    /// oracle's path of a new text, taken after [`Facts::last_error_is`] said no): the text
    /// is interned through the table and kept as the pod's last ([`ColdFacts::last_error`]).
    #[inline]
    pub(crate) fn sync_end_of(&mut self, at: SimTime, uid: PodUid, kind: SyncKind, e: &str) {
        self.pod_mut(uid);
        let error = self.syms.intern(e);
        self.pods[uid.0 as usize].cold_mut().last_error = error;
        self.rings.push(uid, at, Rec::SyncEnd(kind, Some(error)));
        self.sync_end(at, uid, kind, false);
    }

    /// The id of `uid`'s sync error `e` if it is the pod's last one again (found by one
    /// comparison of the text, without hashing), else `None` (another text, no last one
    /// kept, or no facts of the pod): changes nothing.
    #[inline(always)]
    pub(crate) fn last_error_is(&self, uid: PodUid, e: &str) -> Option<Sym> {
        let k = self.pods.get(uid.0 as usize)?.cold()?.last_error;
        if !self.syms.holds(k, e) {
            return None;
        }
        // Debug builds look the text up in the table: the kept id is the one it gives.
        debug_assert_eq!(self.syms.find(e), Some(k), "sync error {e:?}");
        Some(k)
    }

    /// Remember the values of `uid` before the current transition changes them (for the
    /// transitions whose checks read all of [`Facts::before`]: `ConfigOp`, `Worker`).
    pub(super) fn snapshot(&mut self, uid: PodUid) {
        let p = &self.pods[uid.0 as usize];
        self.before.worker = p.worker;
        self.before.inc = p.inc;
        self.before.min_override = p.min_override();
    }

    /// [`Facts::snapshot`] of what a `SyncBegin`'s checks read: the worker record and the
    /// eviction override (not the incarnation).
    pub(super) fn snapshot_worker(&mut self, uid: PodUid) {
        let p = &self.pods[uid.0 as usize];
        self.before.worker = p.worker;
        self.before.min_override = p.min_override();
    }

    /// Update the facts from one transition (before the checkers see it).
    pub(crate) fn update(&mut self, at: SimTime, tr: &Transition) {
        self.remember(at, tr);
        use Transition::*;
        match tr {
            ApiCreated {
                uid,
                spec,
                static_pod,
                mirror_of,
                ..
            } => {
                let p = self.pod_mut(*uid);
                if *static_pod && p.spec.is_some() {
                    // The same manifest put back (its UID is a hash of its content): a
                    // new life of the UID; its earlier removal no longer counts.
                    if let Some(c) = p.cold.as_deref_mut() {
                        c.removed_at = None;
                    }
                    p.new_life();
                }
                p.spec = Some(spec.clone());
                p.static_pod = *static_pod;
                p.mirror_of = *mirror_of;
                // The spec's grace again (the largest so far).
                if let Some(c) = p.cold.as_deref_mut() {
                    c.max_grace = None;
                }
            }
            ApiDeleteRequested { uid, grace } => self.delete_requested_fact(at, *uid, *grace),
            ApiForceDeleted { uid } => {
                let c = self.pod_mut(*uid).cold_mut();
                c.deleted_at.get_or_insert(at);
                c.zero_grace_delete = true;
            }
            ApiRemoved { uid, .. } => self.pod_mut(*uid).cold_mut().removed_at = Some(at),
            ApiStatusPatched { uid, status, .. } => self.status_patched_fact(at, *uid, status),
            CriEnd { .. }
            | SandboxReady { .. }
            | SandboxStopped { .. }
            | ContainerRunning { .. }
            | ContainerExited { .. }
            | Host { .. } => self.runtime(at, tr),
            PowerOff { .. } => {
                self.node.power_off_at.get_or_insert(at);
            }
            PodRejected { uid, .. } => self.pod_mut(*uid).inc.rejected = true,
            Evict { uid, grace, .. } => {
                let p = self.pod_mut(*uid);
                let w = p.worker;
                let c = p.cold_mut();
                if w.term_requested && w.open_sync.is_none() {
                    c.late_override = Some(c.late_override.map_or(*grace, |o| o.min(*grace)));
                } else {
                    c.min_override = Some(c.min_override.map_or(*grace, |o| o.min(*grace)));
                }
                c.evicted_at = Some(at);
            }
            ConfigOp { uid, op } => {
                self.snapshot(*uid);
                self.config_op(at, *uid, *op)
            }
            UpdatePod {
                uid, runtime_only, ..
            } => self.update_pod_fact(at, *uid, *runtime_only),
            Worker { uid, what } => {
                self.snapshot(*uid);
                self.worker(at, *uid, *what)
            }
            SyncBegin { uid, kind, grace } => {
                self.snapshot_worker(*uid);
                self.sync_begin(*uid, *kind, *grace)
            }
            SyncEnd { uid, kind, error } => self.sync_end(at, *uid, *kind, error.is_none()),
            LocalStatus { uid, phase } => self.local_status_fact(*uid, *phase),
            LocalStatusDropped { uid, .. } => {
                // The cache holds nothing for the UID any more: a later write starts afresh.
                let p = self.pod_mut(*uid);
                p.inc.local_phase = None;
                p.inc.local_terminal = false;
            }
            Shutdown { what } => {
                self.before.shutdown_started = self.node.shutdown_started;
                match *what {
                    ShutdownStep::PrepareForShutdown {
                        shutting_down: true,
                    } => {
                        self.node.shutdown_started.get_or_insert(at);
                    }
                    ShutdownStep::PrepareForShutdown {
                        shutting_down: false,
                    } => self.node.shutdown_started = None,
                    _ => {}
                }
            }
            ShutdownGroup { period_s, .. } => {
                self.node.max_group_period_s = self.node.max_group_period_s.max(*period_s);
            }
            Note { uid, what } => self.note_fact(at, *uid, *what),
            KubeletProcess { what, .. } => match *what {
                ProcessEvent::Crashed => self.kubelet_crashed(at),
                ProcessEvent::Started => {
                    self.node.kubelet_down = false;
                    self.node.kubelet_started_at = at;
                }
            },
            _ => {}
        }
    }

    /// Ground truth of the runtime and the node.
    fn runtime(&mut self, at: SimTime, tr: &Transition) {
        use Transition::*;
        match tr {
            CriEnd {
                uid,
                call,
                target,
                error,
            } => self.cri_end_fact(at, *uid, *call, *target, error.is_some()),
            SandboxReady { uid, id } => self.sandbox_fact(at, *uid, *id, true),
            SandboxStopped { uid, id } => self.sandbox_fact(at, *uid, *id, false),
            ContainerRunning { uid, id, .. } => self.running_fact(at, *uid, *id),
            ContainerExited { uid, id, code, .. } => self.exited_fact(at, *uid, *id, *code),
            Host { uid, what } => self.host_fact(*uid, *what),
            _ => {}
        }
    }

    /// What a `ContainerRunning` of container `id` changes: a running container and a new
    /// instance, named [`Facts::container`] (interned as its record was made).
    #[inline]
    pub(super) fn running_fact(&mut self, at: SimTime, uid: PodUid, id: ContainerId) {
        let name = self.container;
        let p = self.pod_mut(uid);
        p.last_started_at = Some(at);
        p.running.push(id);
        p.instances.push(Instance {
            id,
            name,
            exit: None,
            removed_at: None,
            running_at: at,
        });
    }

    /// What a `ContainerExited` of container `id` with `code` changes.
    #[inline]
    pub(super) fn exited_fact(&mut self, at: SimTime, uid: PodUid, id: ContainerId, code: i32) {
        let p = self.pod_mut(uid);
        p.running.retain(|c| *c != id);
        if let Some(i) = p.instances.iter_mut().find(|i| i.id == id) {
            i.exit = Some((code, at));
        }
        p.last_exit_at = Some(at);
    }

    /// What a `SandboxReady` (`ready`) or `SandboxStopped` of sandbox `id` changes: the
    /// pod's ready sandboxes.
    #[inline]
    pub(super) fn sandbox_fact(&mut self, at: SimTime, uid: PodUid, id: SandboxId, ready: bool) {
        let p = self.pod_mut(uid);
        if ready {
            p.ready_sandboxes.push((id, at));
        } else {
            p.ready_sandboxes.retain(|s| s.0 != id);
        }
    }

    /// What an `ApiDeleteRequested` with `grace` changes: the pod's deletion (its first
    /// time, whether it was graceful or not) and the largest grace it was given.
    pub(super) fn delete_requested_fact(&mut self, at: SimTime, uid: PodUid, grace: i64) {
        let p = self.pod_mut(uid);
        let max = p.max_grace().max(grace);
        let c = p.cold_mut();
        c.deleted_at.get_or_insert(at);
        c.graceful_delete |= grace > 0;
        c.zero_grace_delete |= grace == 0;
        c.max_grace = Some(max);
    }

    /// What a `Note` changes: a failed sync or mount is an error of the pod, and a v1.21
    /// kill's steps open and close a kill in flight.
    pub(super) fn note_fact(&mut self, at: SimTime, uid: PodUid, what: NoteKind) {
        let p = self.pod_mut(uid);
        if what.is_failed_sync() {
            p.cold_mut().errors.push(at);
        }
        if what == NoteKind::V121KillRequested {
            p.worker.kill_in_flight = true;
        } else if matches!(what, NoteKind::V121KillDone | NoteKind::V121KillFailed) {
            p.worker.kill_in_flight = false;
        }
        if what.is_failed_mount() {
            p.cold_mut().errors.push(at);
        }
    }

    /// What a host operation changes: the pod's volumes and cgroup.
    #[inline]
    pub(super) fn host_fact(&mut self, uid: PodUid, what: HostOp) {
        let p = self.pod_mut(uid);
        match what {
            HostOp::VolumesMounted => {
                p.mounted = true;
                p.cgroup = true;
            }
            HostOp::VolumesUnmounted => p.mounted = false,
            HostOp::PodCgroupRemoved => p.cgroup = false,
            HostOp::PodDirRemoved => {}
        }
    }

    fn kubelet_crashed(&mut self, at: SimTime) {
        self.node.kubelet_down = true;
        self.node.crashes_at.push(at);
        self.node.shutdown_started = None;
        for p in &mut self.pods {
            p.worker = WorkerFacts::default();
            p.inc = IncFacts::default();
            p.clear_overrides();
        }
    }

    pub(super) fn config_op(&mut self, at: SimTime, uid: PodUid, op: ConfigOpKind) {
        let p = self.pod_mut(uid);
        p.inc.config_known = true;
        if op == ConfigOpKind::AddFile && p.inc.saw_delete_at.is_some() {
            // The file source adds the manifest again after the kubelet saw it removed:
            // a new life of the UID. (A removal and a restore at the same instant put the
            // manifest's API record back before the kubelet's REMOVE arrives, so the reset
            // at `ApiCreated` came too early; hunt finding `deleted-pod-stops`.)
            p.new_life();
        }
        // Out of config, the status manager may forget the pod's status at any time
        // (housekeeping's RemoveOrphanedStatuses, or the DELETE answered), and a later
        // SetPodStatus starts again from the API's copy.
        p.inc.out_of_config = matches!(op, ConfigOpKind::Remove | ConfigOpKind::RemoveFile);
        let deleted = p.deleted_at().is_some() || op == ConfigOpKind::RemoveFile;
        if deleted && p.inc.saw_delete_at.is_none() {
            p.inc.saw_delete_at = Some(at);
            p.inc.inflight_sync_open = p.worker.open_sync == Some(SyncKind::SyncPod);
            if op == ConfigOpKind::RemoveFile {
                p.cold_mut().deleted_at.get_or_insert(at);
            }
        }
    }

    pub(super) fn worker(&mut self, at: SimTime, uid: PodUid, what: WorkerStep) {
        let p = self.pod_mut(uid);
        let w = &mut p.worker;
        match what {
            WorkerStep::FirstSightTerminal => {
                w.kill_in_flight = false;
                w.term_acked = true;
                w.terminated = true;
                w.first_sight_terminal = true;
            }
            WorkerStep::TerminationRequested | WorkerStep::OrphanTerminationRequested => {
                if !w.term_requested {
                    w.term_requested = true;
                    w.inflight_sync_pod = w.open_sync == Some(SyncKind::SyncPod);
                }
                w.kill_in_flight = true;
                p.inc.term_requested_at.get_or_insert(at);
            }
            WorkerStep::TerminalTerminating => {
                w.term_requested = true;
                w.kill_in_flight = true;
                w.term_acked = true;
                p.inc.term_requested_at.get_or_insert(at);
            }
            // v1.21: dispatchWork decided the pod is finished and skips its worker.
            WorkerStep::TerminationAcknowledged | WorkerStep::V121TreatedAsTerminated => {
                w.term_acked = true
            }
            WorkerStep::Terminated => {
                w.terminated = true;
                w.kill_in_flight = false;
                p.inc.terminated_at.get_or_insert(at);
            }
            WorkerStep::Started => w.started = true,
            WorkerStep::Finished | WorkerStep::FinishedNeverStarted => {
                w.kill_in_flight = false;
                w.terminated = true;
                w.finished = true;
                p.inc.term_requested_at = None;
            }
            WorkerStep::RuntimePodRecordRemoved
            | WorkerStep::Forgotten
            | WorkerStep::OrphanNeverStarted => {
                p.worker = WorkerFacts::default();
                // The record held the grace history: a new record starts without it.
                p.clear_overrides();
                p.inc.term_requested_at = None;
            }
            _ => {}
        }
    }

    pub(super) fn sync_begin(&mut self, uid: PodUid, kind: SyncKind, grace: Option<i64>) {
        // Every caller made the pod's facts first (with its record).
        let p = &mut self.pods[uid.0 as usize];
        let w = &mut p.worker;
        w.open_sync = Some(kind);
        match kind {
            SyncKind::SyncPod => {
                // After TermRequested the worker picks up only terminating work, so a
                // SyncPod that begins then is the one it picked up before the request and
                // that waited for a newer pod status (GetNewerThan); any later one is not in
                // flight.
                w.inflight_sync_pod = w.term_requested && !w.sync_ended_since_request;
            }
            SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => {
                w.terminating_began = true;
                w.term_acked = true;
                if let Some(g) = grace {
                    w.last_grace = Some(g);
                }
                // An override this sync could not take binds every later one.
                if let Some(c) = p.cold.as_deref_mut() {
                    if let Some(l) = c.late_override.take() {
                        c.min_override = Some(c.min_override.map_or(l, |o| o.min(l)));
                    }
                }
            }
            SyncKind::SyncTerminatedPod => w.terminated_began = true,
        }
    }

    #[inline]
    pub(super) fn sync_end(&mut self, at: SimTime, uid: PodUid, kind: SyncKind, ok: bool) {
        // Every caller made the pod's facts first (with its record).
        let p = &mut self.pods[uid.0 as usize];
        if !ok {
            p.failed_at(at);
        }
        let w = &mut p.worker;
        if w.open_sync == Some(kind) {
            w.open_sync = None;
        }
        if w.term_requested {
            w.sync_ended_since_request = true;
        }
        if kind == SyncKind::SyncPod {
            w.last_sync_pod_end = Some(at);
            w.inflight_sync_pod = false;
        }
        match kind {
            SyncKind::SyncPod if p.inc.inflight_sync_open => {
                p.inc.inflight_sync_open = false;
                p.inc.inflight_sync_end = Some(at);
            }
            SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => {
                w.last_terminating_ok = ok;
            }
            SyncKind::SyncTerminatedPod if ok => w.terminated_sync_ok = true,
            _ => {}
        }
    }
}
