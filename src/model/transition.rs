//! Transitions: what every component reports as it happens. They go into the trace (and
//! its hash) and to the invariant oracle (`crate::oracle`). Display is the compact
//! human-readable record; some fields are there for the oracle only and are not displayed
//! (they are hashed like the rest).

use super::vocab::*;
use super::{ApiPodStatus, ContainerId, PodPhase, PodSpec, PodUid, ProbeType, SandboxId};
use crate::sim::trace::{StableHasher, TraceHash};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// One observable transition of the world or the kubelet.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Transition {
    // ---- API server (ground truth) ----
    ApiCreated {
        uid: PodUid,
        name: String,
        /// The pod's spec (not displayed).
        spec: Arc<PodSpec>,
        /// A static pod's manifest appeared (not displayed).
        static_pod: bool,
        /// A mirror pod of this static pod was created (not displayed).
        mirror_of: Option<PodUid>,
    },
    ApiDeleteRequested {
        uid: PodUid,
        grace: i64,
    },
    ApiForceDeleted {
        uid: PodUid,
    },
    ApiStatus {
        uid: PodUid,
        phase: PodPhase,
        reason: Option<String>,
    },
    ApiRemoved {
        uid: PodUid,
        by: RemovedBy,
    },
    WatchDelivered {
        uid: PodUid,
        kind: WatchDelivery,
    },
    // ---- runtime (ground truth) ----
    CriBegin {
        uid: PodUid,
        call: CriOp,
        target: u32,
        /// `StopContainer`'s SIGTERM-to-SIGKILL timeout in seconds.
        timeout_s: Option<i64>,
    },
    CriEnd {
        uid: PodUid,
        call: CriOp,
        target: u32,
        error: Option<CriFailure>,
    },
    SandboxReady {
        uid: PodUid,
        id: SandboxId,
    },
    SandboxStopped {
        uid: PodUid,
        id: SandboxId,
    },
    ContainerRunning {
        uid: PodUid,
        id: ContainerId,
        name: String,
    },
    Signal {
        uid: PodUid,
        id: ContainerId,
        signal: ProcessSignal,
    },
    ContainerExited {
        uid: PodUid,
        id: ContainerId,
        code: i32,
        reason: &'static str,
    },
    /// A host operation took effect (volumes mounted/unmounted, cgroup or pod dir removed).
    Host {
        uid: PodUid,
        what: HostOp,
    },
    // ---- node (ground truth): systemd-logind and power ----
    Logind {
        what: LogindStep,
    },
    /// The node powered off; `alive` containers were still running.
    PowerOff {
        cause: PowerOffCause,
        alive: u32,
    },
    // ---- node (ground truth) ----
    /// A `memoryPressure` timeline action: memory.available is this many bytes from now on.
    NodeMemoryAvailable {
        bytes: u64,
    },
    // ---- kubelet ----
    /// Admission rejected the pod (`rejectPod`).
    PodRejected {
        uid: PodUid,
        reason: RejectReason,
    },
    /// The eviction manager's view of a node condition changed.
    NodeCondition {
        condition: NodeConditionType,
        status: bool,
    },
    /// The eviction manager evicts a pod (`evictPod` -> `killPodNow`).
    Evict {
        uid: PodUid,
        signal: EvictionSignal,
        grace: i64,
    },
    /// The eviction manager's waits and skips.
    Eviction {
        uid: PodUid,
        what: EvictionStep,
    },
    ConfigOp {
        uid: PodUid,
        op: ConfigOpKind,
    },
    UpdatePod {
        uid: PodUid,
        ty: UpdateType,
        runtime_only: bool,
    },
    Worker {
        uid: PodUid,
        what: WorkerStep,
    },
    SyncBegin {
        uid: PodUid,
        kind: SyncKind,
        grace: Option<i64>,
    },
    SyncEnd {
        uid: PodUid,
        kind: SyncKind,
        error: Option<String>,
    },
    LocalStatus {
        uid: PodUid,
        phase: PodPhase,
    },
    Relist {
        changed: u32,
    },
    Housekeeping,
    /// A probe worker started or stopped.
    ProbeWorker {
        uid: PodUid,
        container: Arc<str>,
        kind: ProbeType,
        what: ProbeWorkerStep,
    },
    /// A probe ran against a container (`success`, `failure` or `error`).
    Probe {
        uid: PodUid,
        container: Arc<str>,
        kind: ProbeType,
        result: ProbeVerdict,
    },
    /// A results manager's cached result for a container changed.
    ProbeResult {
        uid: PodUid,
        id: ContainerId,
        kind: ProbeType,
        result: ProbeCached,
    },
    /// The graceful node shutdown manager.
    Shutdown {
        what: ShutdownStep,
    },
    /// The kubelet's node Ready condition (internal; node objects are not modelled).
    NodeReady {
        ready: bool,
    },
    Note {
        uid: PodUid,
        what: NoteKind,
    },
    /// The kubelet process of incarnation `epoch` crashed or started.
    KubeletProcess {
        what: ProcessEvent,
        epoch: u32,
    },
    /// A kubelet status PATCH changed the object `uid` (for a static pod, its mirror pod);
    /// `of` is the pod whose status it is. Emitted after `ApiStatus` for every landed change.
    ApiStatusPatched {
        uid: PodUid,
        of: PodUid,
        status: Arc<ApiPodStatus>,
    },
    /// `killPodNow` and its `CompletedCh` `ch`: `requested` (by the eviction manager when
    /// `evict`, else the node shutdown manager), `closed` by the pod worker, `returned` to
    /// the caller, or `timed out` for the caller (`evict` is only meaningful on `requested`).
    KillPodNow {
        uid: PodUid,
        ch: u64,
        what: KillPodNowStep,
        evict: bool,
    },
    /// A step inside a sync operation the oracle orders against others (`status set`,
    /// `probes stopped`: `StopLivenessAndStartup`, `probes removed`: `RemovePod`).
    SyncStep {
        uid: PodUid,
        step: SyncStepKind,
    },
    /// The graceful node shutdown manager starts killing one priority group.
    ShutdownGroup {
        priority: i32,
        period_s: i64,
        pods: u32,
    },
    /// Another controller set a condition of the pod (timeline `setPodCondition`). Placed
    /// after every older variant so that their hashes stay what they were.
    ApiConditionSet {
        uid: PodUid,
        /// Boxed: inline it would make every transition (wherever one is held: the trace's
        /// batches, the oracle's node ring) half again as large for a rare timeline action.
        condition: Box<super::PodCondition>,
    },
    /// A `diskPressure` timeline action: the filesystem's available bytes and/or free inodes
    /// are these from now on.
    NodeFsPinned {
        imagefs: bool,
        available: Option<u64>,
        inodes_free: Option<u64>,
    },
    /// A `pidPressure` timeline action: pid.available is this from now on.
    NodePidAvailable {
        pids: u64,
    },
    /// Static pod `uid`'s manifest left the node's manifest directory (edited or removed).
    /// Ground truth the oracle needs but the trace has never recorded: it is shown to the
    /// trace's observer only (`Trace::show`), never hashed or kept, so it stays last.
    StaticManifestRemoved {
        uid: PodUid,
    },
    // ---- added later (kept last: the variant's position is hashed) ----
    /// Ground truth: the runtime removed an image (`RemoveImage` took effect), freeing `size` bytes.
    ImageRemoved {
        image: String,
        size: u64,
    },
    /// The eviction manager's node-level reclaim for threshold `signal`.
    NodeReclaim {
        signal: EvictionSignal,
        step: ReclaimStep,
    },
    /// The image garbage collector found imagefs at `usage_percent` (at or above its high
    /// threshold) and sets out to free `to_free` bytes.
    ImageGc {
        usage_percent: u32,
        to_free: u64,
    },
    /// The status manager's sync dropped `uid`'s cached status because the pod object of
    /// that name now belongs to another UID, `now_of` (the pod was deleted and recreated;
    /// for a mirror pod, a newer static pod of the same full name): v1.31 `syncPod` in
    /// `pkg/kubelet/status/status_manager.go`. A later status write for `uid` starts afresh.
    LocalStatusDropped {
        uid: PodUid,
        now_of: PodUid,
    },
}

/// The records of node-level reclaim and image garbage collection.
fn fmt_disk_gc(t: &Transition, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match t {
        Transition::NodeReclaim { signal, step } => {
            write!(f, "eviction reclaim ({signal}) {step}")
        }
        Transition::ImageGc {
            usage_percent,
            to_free,
        } => write!(f, "imagegc usage={usage_percent}% free={to_free}"),
        Transition::ImageRemoved { image, size } => {
            write!(f, "runtime image removed {image} ({size})")
        }
        _ => Ok(()),
    }
}

/// `status uid-N local dropped: the object is uid-M's` (`LocalStatusDropped`).
fn fmt_dropped(f: &mut fmt::Formatter<'_>, uid: PodUid, now_of: PodUid) -> fmt::Result {
    write!(f, "status {uid} local dropped: the object is {now_of}'s")
}

/// `node nodefs available=Q inodesFree=N` of a `diskPressure` action.
fn fmt_fs_pinned(
    f: &mut fmt::Formatter<'_>,
    imagefs: bool,
    available: Option<u64>,
    inodes_free: Option<u64>,
) -> fmt::Result {
    let fs = if imagefs { "imagefs" } else { "nodefs" };
    write!(f, "node {fs}")?;
    if let Some(a) = available {
        write!(f, " available={}", super::quantity(a))?;
    }
    if let Some(i) = inodes_free {
        write!(f, " inodesFree={i}")?;
    }
    Ok(())
}

/// The position of a variant in [`Transition`], which its derived `Hash` feeds first (as
/// an `isize`): [`Transition::trace_hash`]'s arms give the same (a unit test checks each).
mod pos {
    pub(super) const WATCH_DELIVERED: isize = 5;
    pub(super) const CRI_BEGIN: isize = 6;
    pub(super) const CRI_END: isize = 7;
    pub(super) const UPDATE_POD: isize = 22;
    pub(super) const SYNC_BEGIN: isize = 24;
    pub(super) const SYNC_END: isize = 25;
    pub(super) const RELIST: isize = 27;
    pub(super) const HOUSEKEEPING: isize = 28;
    pub(super) const PROBE: isize = 30;
    pub(super) const NOTE: isize = 34;
}

/// The words of a probe's kind's `Hash` (its text's, as [`ProbeType::as_str`] gives it).
#[inline]
fn probe_type_words(kind: ProbeType) -> &'static [u64] {
    match kind {
        ProbeType::Liveness => crate::str_words!("liveness"),
        ProbeType::Readiness => crate::str_words!("readiness"),
        ProbeType::Startup => crate::str_words!("startup"),
    }
}

/// The trace's hash of a transition: the frequent kinds feed [`StableHasher`] the words
/// their derived `Hash` feeds, with each vocabulary word's words worked out at compile time
/// (`hash_words`) instead of hashing its text's bytes; any other kind is hashed as derived.
/// (Unit tests compare both for every value of the words these kinds hold.)
impl TraceHash for Transition {
    #[inline]
    fn trace_hash(&self, h: &mut StableHasher) {
        use Transition as T;
        #[cfg(debug_assertions)]
        let before = h.clone();
        // A probe, the most frequent kind, is told apart by one comparison first.
        if let T::Probe {
            uid,
            container,
            kind,
            result,
        } = self
        {
            h.write_isize(pos::PROBE);
            h.write_u32(uid.0);
            container.hash(h);
            h.write_words(probe_type_words(*kind));
            h.write_words(result.hash_words());
            return;
        }
        match self {
            T::SyncBegin { uid, kind, grace } => {
                h.write_isize(pos::SYNC_BEGIN);
                h.write_u32(uid.0);
                h.write_words(kind.hash_words());
                grace.hash(h);
            }
            T::SyncEnd { uid, kind, error } => sync_end_words(h, *uid, *kind, error),
            T::UpdatePod {
                uid,
                ty,
                runtime_only,
            } => {
                h.write_isize(pos::UPDATE_POD);
                h.write_u32(uid.0);
                h.write_words(ty.hash_words());
                runtime_only.hash(h);
            }
            T::WatchDelivered { uid, kind } => {
                h.write_isize(pos::WATCH_DELIVERED);
                h.write_u32(uid.0);
                h.write_words(kind.hash_words());
            }
            T::Note { uid, what } => {
                h.write_isize(pos::NOTE);
                h.write_u32(uid.0);
                h.write_words(what.hash_words());
            }
            // The runtime's call records, the PLEG's relists and housekeeping: frequent
            // kinds of a few words, which the derived `Hash` (one large function for every
            // kind) would fetch cold code for.
            T::CriBegin {
                uid,
                call,
                target,
                timeout_s,
            } => {
                h.write_isize(pos::CRI_BEGIN);
                h.write_u32(uid.0);
                h.write_words(call.hash_words());
                h.write_u32(*target);
                timeout_s.hash(h);
            }
            T::CriEnd {
                uid,
                call,
                target,
                error,
            } => {
                h.write_isize(pos::CRI_END);
                h.write_u32(uid.0);
                h.write_words(call.hash_words());
                h.write_u32(*target);
                error.hash(h);
            }
            T::Relist { changed } => {
                h.write_isize(pos::RELIST);
                h.write_u32(*changed);
            }
            T::Housekeeping => h.write_isize(pos::HOUSEKEEPING),
            _ => other_words(self, h),
        }
        #[cfg(debug_assertions)]
        check_derived(self, before, h);
    }

    /// A probe's hint is its container name's word ([`crate::sim::trace::short_str_word`],
    /// which the probe worker keeps), hashed in place of the name's text; 0 (a name of
    /// eight bytes or more) hashes the text. Any other kind ignores the hint.
    #[inline]
    fn trace_hash_hinted(&self, h: &mut StableHasher, name_word: u64) {
        use Transition as T;
        // A probe with its name's word: the by-value words.
        if let Some(q) = self.trace_hash_quick(h.clone(), name_word) {
            *h = q;
            return;
        }
        let T::Probe {
            uid,
            container,
            kind,
            result,
        } = self
        else {
            return trace_hash_other(self, h);
        };
        h.write_isize(pos::PROBE);
        h.write_u32(uid.0);
        hash_text(container, h);
        probe_tail_words(h, *kind, *result);
    }

    /// A probe whose container name's word is given (`name_word != 0`), hashed by value
    /// with no call on the way: the word in place of the name's text, as
    /// [`Transition::trace_hash_hinted`] feeds it (which takes this path for such a probe).
    #[inline]
    fn trace_hash_quick(&self, mut h: StableHasher, name_word: u64) -> Option<StableHasher> {
        // The word is checked where it is used: both callers, in debug builds, compare
        // the hash with the one of the name's text.
        let Transition::Probe {
            uid, kind, result, ..
        } = self
        else {
            return None;
        };
        if name_word == 0 {
            return None;
        }
        h.write_isize(pos::PROBE);
        h.write_u32(uid.0);
        h.write_u64(name_word);
        h.write_u8(0xff);
        probe_tail_words(&mut h, *kind, *result);
        Some(h)
    }
}

/// The words of a probe's kind and verdict (`probe_type_words`, `hash_words`) without a
/// loop over a table of slices: the kind's first word, readiness's second, then `0xff`;
/// the verdict's one word, then `0xff`.
#[inline(always)]
fn probe_tail_words(h: &mut StableHasher, kind: ProbeType, result: ProbeVerdict) {
    h.write_u64(PROBE_TYPE_FIRST_WORD[kind as usize]);
    if kind == ProbeType::Readiness {
        h.write_u64(READINESS_SECOND_WORD);
    }
    h.write_u8(0xff);
    h.write_u64(VERDICT_WORD[result as usize]);
    h.write_u8(0xff);
}

/// The first word of each probe kind's text (in `ProbeType`'s order): "liveness" is one
/// whole word, "startup" one partial word, "readiness" a whole word and
/// [`READINESS_SECOND_WORD`]; each then ends with `0xff` (a unit test checks them against
/// `probe_type_words`, through the hinted hash of every kind and verdict).
const PROBE_TYPE_FIRST_WORD: [u64; 3] = [
    crate::str_words!("liveness")[0],
    crate::str_words!("readiness")[0],
    crate::str_words!("startup")[0],
];

/// The second word of "readiness".
const READINESS_SECOND_WORD: u64 = crate::str_words!("readiness")[1];

/// The one word of each probe verdict's text (in `ProbeVerdict`'s order; each is 1 to 7
/// bytes), which ends with `0xff` (a unit test checks them against `hash_words`, through
/// the hinted hash of every kind and verdict).
const VERDICT_WORD: [u64; 3] = [
    crate::sim::trace::short_str_word("success"),
    crate::sim::trace::short_str_word("failure"),
    crate::sim::trace::short_str_word("error"),
];

/// A text's `Hash`, out of line: a probe's container name of eight bytes or more.
#[cold]
#[inline(never)]
fn hash_text(s: &str, h: &mut StableHasher) {
    s.hash(h);
}

/// The hinted path's other kinds, out of line so that path holds a probe's hashing only.
/// A sync's end (the one other kind emitted that way, once per sync, with no hint) feeds
/// its words here; anything else the derived `Hash`. Both feed the words
/// [`Transition::trace_hash`] feeds (unit tests compare them), which is not called here
/// so that it keeps one caller and stays inline in `Trace::emit`.
#[inline(never)]
fn trace_hash_other(t: &Transition, h: &mut StableHasher) {
    if let Transition::SyncEnd { uid, kind, error } = t {
        #[cfg(debug_assertions)]
        let before = h.clone();
        sync_end_words(h, *uid, *kind, error);
        #[cfg(debug_assertions)]
        check_derived(t, before, h);
        return;
    }
    derived_hash(t, h);
}

/// [`TraceHash::trace_hash`]'s less frequent kinds, out of line: pod workers' steps,
/// statuses, runtime and host records ... word by word (`words::mid_words`), anything
/// else (rare) the derived `Hash`.
#[inline(never)]
fn other_words(t: &Transition, h: &mut StableHasher) {
    if !words::mid_words(t, h) {
        derived_hash(t, h);
    }
}

/// Debug builds: the words fed for `t` from state `before` left the hasher where its
/// derived `Hash` does.
#[cfg(debug_assertions)]
fn check_derived(t: &Transition, mut before: StableHasher, after: &StableHasher) {
    t.hash(&mut before);
    assert_eq!(
        before.finish(),
        after.finish(),
        "trace: a transition's word-by-word hash differs from its derived `Hash`: {t}"
    );
}

/// [`trace_hash_other`]'s rare kinds: the derived `Hash`.
#[cold]
#[inline(never)]
fn derived_hash(t: &Transition, h: &mut StableHasher) {
    t.hash(h);
}

/// The words of a `SyncEnd`'s derived `Hash`, its kind's worked out at compile time.
#[inline(always)]
fn sync_end_words(h: &mut StableHasher, uid: PodUid, kind: SyncKind, error: &Option<String>) {
    h.write_isize(pos::SYNC_END);
    h.write_u32(uid.0);
    h.write_words(kind.hash_words());
    error.hash(h);
}

// Transitions are held in the trace's batches and the oracle's node ring: keep them small.
const _: () = assert!(std::mem::size_of::<Transition>() <= 48);

impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Transition::*;
        match self {
            ApiCreated { uid, name, .. } => write!(f, "api {uid} created {name}"),
            ApiDeleteRequested { uid, grace } => write!(f, "api {uid} delete grace={grace}s"),
            ApiForceDeleted { uid } => write!(f, "api {uid} force-deleted"),
            ApiConditionSet { uid, condition } => write!(
                f,
                "api {uid} condition {}={}",
                condition.kind.as_str(),
                condition.status.as_str()
            ),
            ApiStatus { uid, phase, reason } => match reason {
                Some(r) => write!(f, "api {uid} status {phase} ({r})"),
                None => write!(f, "api {uid} status {phase}"),
            },
            ApiRemoved { uid, by } => write!(f, "api {uid} removed by {by}"),
            WatchDelivered { uid, kind } => write!(f, "watch {uid} {kind}"),
            CriBegin {
                uid,
                call,
                target,
                timeout_s,
            } => match timeout_s {
                Some(t) => write!(f, "cri {uid} {call}#{target} begin timeout={t}s"),
                None => write!(f, "cri {uid} {call}#{target} begin"),
            },
            CriEnd {
                uid,
                call,
                target,
                error,
            } => match error {
                Some(e) => write!(f, "cri {uid} {call}#{target} error {e}"),
                None => write!(f, "cri {uid} {call}#{target} ok"),
            },
            SandboxReady { uid, id } => write!(f, "rt {uid} sandbox {id} ready"),
            SandboxStopped { uid, id } => write!(f, "rt {uid} sandbox {id} stopped"),
            ContainerRunning { uid, id, name } => write!(f, "rt {uid} {id} {name} running"),
            Signal { uid, id, signal } => write!(f, "rt {uid} {id} {signal}"),
            ContainerExited {
                uid,
                id,
                code,
                reason,
            } => write!(f, "rt {uid} {id} exited code={code} {reason}"),
            Host { uid, what } => write!(f, "host {uid} {what}"),
            Logind { what } => write!(f, "logind {what}"),
            PowerOff { cause, alive } => {
                write!(
                    f,
                    "node power-off ({cause}): {alive} containers still running"
                )
            }
            NodeMemoryAvailable { bytes } => {
                write!(f, "node memory.available={}", super::quantity(*bytes))
            }
            NodeFsPinned {
                imagefs,
                available,
                inodes_free,
            } => fmt_fs_pinned(f, *imagefs, *available, *inodes_free),
            NodePidAvailable { pids } => write!(f, "node pid.available={pids}"),
            PodRejected { uid, reason } => write!(f, "admit {uid} rejected {reason}"),
            NodeCondition { condition, status } => write!(f, "eviction {condition}={status}"),
            Evict { uid, signal, grace } => {
                write!(f, "eviction {uid} evict grace={grace} ({signal})")
            }
            Eviction { uid, what } => write!(f, "eviction {uid} {what}"),
            NodeReclaim { .. } | ImageGc { .. } | ImageRemoved { .. } => fmt_disk_gc(self, f),
            LocalStatusDropped { uid, now_of } => fmt_dropped(f, *uid, *now_of),
            ConfigOp { uid, op } => write!(f, "config {uid} {op}"),
            UpdatePod {
                uid,
                ty,
                runtime_only,
            } => {
                if *runtime_only {
                    write!(f, "pw {uid} UpdatePod {ty} (runtime pod)")
                } else {
                    write!(f, "pw {uid} UpdatePod {ty}")
                }
            }
            Worker { uid, what } => write!(f, "pw {uid} {what}"),
            SyncBegin { uid, kind, grace } => match grace {
                Some(g) => write!(f, "sync {uid} {kind} begin grace={g}"),
                None => write!(f, "sync {uid} {kind} begin"),
            },
            SyncEnd { uid, kind, error } => match error {
                Some(e) => write!(f, "sync {uid} {kind} error: {e}"),
                None => write!(f, "sync {uid} {kind} ok"),
            },
            LocalStatus { uid, phase } => write!(f, "status {uid} local {phase}"),
            Relist { changed } => write!(f, "pleg relist changed={changed}"),
            Housekeeping => write!(f, "housekeeping"),
            ProbeWorker {
                uid,
                container,
                kind,
                what,
            } => write!(f, "prober {uid} {container} {kind} worker {what}"),
            Probe {
                uid,
                container,
                kind,
                result,
            } => write!(f, "probe {uid} {container} {kind} {result}"),
            ProbeResult {
                uid,
                id,
                kind,
                result,
            } => write!(f, "prober {uid} {id} {kind} result {result}"),
            Shutdown { what } => write!(f, "gns {what}"),
            NodeReady { ready } => {
                write!(f, "node {}", if *ready { "Ready" } else { "NotReady" })
            }
            KubeletProcess { what, epoch } => write!(f, "kubelet#{epoch} {what}"),
            Note { uid, what } => write!(f, "note {uid} {what}"),
            ApiStatusPatched { uid, status, .. } => write!(
                f,
                "api {uid} patched phase={} ready={}",
                status.phase, status.ready
            ),
            KillPodNow {
                uid,
                ch,
                what,
                evict,
            } => {
                if *what == KillPodNowStep::Requested {
                    let by = if *evict { "eviction" } else { "shutdown" };
                    write!(f, "pw {uid} killPodNow ch={ch} requested ({by})")
                } else {
                    write!(f, "pw {uid} killPodNow ch={ch} {what}")
                }
            }
            SyncStep { uid, step } => write!(f, "step {uid} {step}"),
            ShutdownGroup {
                priority,
                period_s,
                pods,
            } => write!(
                f,
                "gns group priority {priority} ({period_s}s): killing {pods} pods"
            ),
            StaticManifestRemoved { uid } => write!(f, "file {uid} manifest removed"),
        }
    }
}

#[path = "transition_words.rs"]
mod words;

#[cfg(test)]
#[path = "transition_tests.rs"]
mod tests;
