//! The typed vocabulary of transitions: every word the kubelet, the world and the oracle
//! say to each other about a step (worker and sync steps, host operations, CRI calls, API
//! removals, watch deliveries, probe events, eviction and shutdown steps ...) is a variant
//! of an enum here. Producers emit variants, the oracle matches variants, and the trace
//! text is rendered from them in one place (`as_str` / `Display`), so rewording a record
//! cannot silently switch an invariant off.
//!
//! Each word hashes as the text it renders to (not as its variant number): the trace hash
//! of a run is a fold of what the records say, and stays the same when a variant is added
//! or the enum is reordered.

use std::fmt;
use std::hash::{Hash, Hasher};

/// A closed set of words with fixed texts.
pub trait Word: Copy + Sized + 'static {
    fn all() -> &'static [Self];
    fn text(self) -> &'static str;
    /// The word whose text is `s` (for reading traces back).
    fn from_text(s: &str) -> Option<Self> {
        Self::all().iter().copied().find(|w| w.text() == s)
    }
}

/// Declares a closed set of words, each rendered as a fixed text.
macro_rules! words {
    ($(#[$m:meta])* $vis:vis enum $name:ident { $($(#[$vm:meta])* $var:ident => $s:literal,)+ }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        $vis enum $name {
            $($(#[$vm])* $var,)+
        }
        impl $name {
            /// Every word, in declaration order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$var,)+];
            /// The text the trace shows.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $s,)+
                }
            }
            /// The words [`crate::sim::trace::StableHasher`] takes for this word's `Hash`
            /// (its text's), worked out at compile time.
            #[allow(dead_code)]
            #[inline]
            pub fn hash_words(self) -> &'static [u64] {
                match self {
                    $($name::$var => $crate::str_words!($s),)+
                }
            }
        }
        impl Word for $name {
            fn all() -> &'static [Self] {
                $name::ALL
            }
            fn text(self) -> &'static str {
                self.as_str()
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl Hash for $name {
            fn hash<H: Hasher>(&self, h: &mut H) {
                self.as_str().hash(h)
            }
        }
    };
}

words! {
    /// Who took a pod object out of the API server (or, for a static pod, what happened to
    /// its manifest).
    pub enum RemovedBy {
        /// The status manager's final DELETE (grace 0) once the kubelet let the pod go.
        Kubelet => "kubelet",
        ForceDelete => "force delete",
        /// A graceful delete of a terminal pod, or one with grace 0 (`CheckGracefulDelete`).
        UserDeleteGraceZero => "user delete (grace 0)",
        /// The kubelet deleted a static pod's mirror pod.
        KubeletMirrorPod => "kubelet (mirror pod)",
        ManifestUpdated => "manifest updated",
        ManifestRemoved => "manifest removed",
    }
}

words! {
    /// A watch event as delivered to a kubelet config source.
    pub enum WatchDelivery {
        Added => "ADDED",
        Modified => "MODIFIED",
        Deleted => "DELETED",
        FileAdded => "FILE ADDED",
        FileModified => "FILE MODIFIED",
        FileRemoved => "FILE REMOVED",
    }
}

words! {
    /// Every request the kubelet sends to the runtime or the host, as the trace names it.
    pub enum CriOp {
        RunPodSandbox => "RunPodSandbox",
        PullImage => "PullImage",
        CreateContainer => "CreateContainer",
        StartContainer => "StartContainer",
        StopContainer => "StopContainer",
        ExecPreStop => "ExecPreStop",
        /// The container's postStart hook, run right after `StartContainer` returned.
        ExecPostStart => "ExecPostStart",
        StopPodSandbox => "StopPodSandbox",
        RemoveContainer => "RemoveContainer",
        /// The sandbox garbage collector removes a stopped sandbox.
        RemovePodSandbox => "RemovePodSandbox",
        MountVolumes => "MountVolumes",
        UnmountVolumes => "UnmountVolumes",
        RemovePodCgroup => "RemovePodCgroup",
        RemovePodDir => "RemovePodDir",
        PodStatus => "PodStatus",
        Relist => "Relist",
        /// Image garbage collection or the eviction manager's reclaim removes an image.
        RemoveImage => "RemoveImage",
    }
}

impl CriOp {
    /// Calls that create something for the pod (a sandbox or a container, or start one).
    pub fn is_start(self) -> bool {
        matches!(
            self,
            CriOp::RunPodSandbox | CriOp::CreateContainer | CriOp::StartContainer
        )
    }
    /// Host teardown operations (volumes, the pod cgroup, the pod directory).
    pub fn is_teardown(self) -> bool {
        matches!(
            self,
            CriOp::UnmountVolumes | CriOp::RemovePodCgroup | CriOp::RemovePodDir
        )
    }
}

words! {
    /// Why a runtime or host call failed for a reason of its own (not an injected fault).
    pub enum CriFailed {
        ErrImagePull => "ErrImagePull",
        SandboxNotReady => "sandbox not ready",
        ContainerNotCreated => "container not in created state",
        VolumesStillMounted => "volumes still mounted",
        /// A postStart hook's handler failed (or its container exited while it ran).
        PostStartHookFailed => "PostStartHook failed",
        /// `RemovePodSandbox` of a sandbox still ready (not stopped).
        SandboxNotStopped => "sandbox not stopped",
        /// `RemovePodSandbox` of a sandbox that still has containers.
        SandboxHasContainers => "sandbox has containers",
        /// `CreateContainer` of an image no longer on the node (removed after its pull).
        ImageNotFound => "image not found",
        /// `CreateContainer` whose name (pod, container, attempt) a container not yet
        /// removed holds: containerd's name reservation (`failed to reserve container
        /// name`), CRI-O's likewise.
        NameReserved => "failed to reserve container name",
    }
}

/// How a runtime or host call failed: an injected gRPC fault or the call's own reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CriFailure {
    Code(super::CriError),
    Failed(CriFailed),
}

impl CriFailure {
    pub fn as_str(self) -> &'static str {
        match self {
            CriFailure::Code(e) => e.as_str(),
            CriFailure::Failed(f) => f.as_str(),
        }
    }
}

impl fmt::Display for CriFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Hash for CriFailure {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

words! {
    /// A signal the runtime sends a container's process.
    pub enum ProcessSignal {
        Sigterm => "SIGTERM",
        Sigkill => "SIGKILL",
    }
}

words! {
    /// A host operation that took effect on the node.
    pub enum HostOp {
        VolumesMounted => "volumes mounted",
        VolumesUnmounted => "volumes unmounted",
        PodCgroupRemoved => "pod cgroup removed",
        PodDirRemoved => "pod dir removed",
    }
}

words! {
    /// Why the node powered off.
    pub enum PowerOffCause {
        InhibitorLockReleased => "inhibitor lock released",
        InhibitDelayExpired => "inhibit delay expired",
        NoInhibitorLock => "no inhibitor lock",
    }
}

words! {
    /// A node condition the eviction manager reports.
    pub enum NodeConditionType {
        MemoryPressure => "MemoryPressure",
        DiskPressure => "DiskPressure",
        PIDPressure => "PIDPressure",
    }
}

words! {
    /// An eviction signal.
    pub enum EvictionSignal {
        MemoryAvailable => "memory.available",
        NodeFsAvailable => "nodefs.available",
        NodeFsInodesFree => "nodefs.inodesFree",
        ImageFsAvailable => "imagefs.available",
        ImageFsInodesFree => "imagefs.inodesFree",
        PidAvailable => "pid.available",
        /// Local storage eviction of a pod over an emptyDir `sizeLimit` (upstream's
        /// `SignalEmptyDirFsLimit`, a metrics label).
        EmptyDirFsLimit => "emptydirfs.limit",
        /// ... over its pod-level ephemeral-storage limit (`SignalEphemeralPodFsLimit`).
        EphemeralPodFsLimit => "ephemeralpodfs.limit",
        /// ... a container over its ephemeral-storage limit
        /// (`SignalEphemeralContainerFsLimit`).
        EphemeralContainerFsLimit => "ephemeralcontainerfs.limit",
    }
}

words! {
    /// The eviction manager's node-level reclaim for a disk signal
    /// (`reclaimNodeLevelResources`).
    pub enum ReclaimStep {
        /// A disk signal without reclaim functions (nodefs with a separate imagefs): the
        /// ranked eviction follows at once.
        Nothing => "no node-level reclaim for this signal",
        /// The reclaim functions run (dead containers, then unused images).
        Started => "reclaim started",
        /// After the removals, no threshold is met: no pod is evicted this round.
        Relieved => "reclaim relieved the pressure",
        /// After the removals a threshold is still met: the ranked eviction follows.
        NotRelieved => "still under pressure after reclaim",
    }
}

words! {
    /// The eviction manager's waits and skips for one pod.
    pub enum EvictionStep {
        CannotEvictCritical => "cannot evict a critical pod",
        KillCompleted => "kill completed",
        KillTimedOut => "kill timed out (ExceededGracePeriod)",
        PodCleanedUp => "pod cleaned up",
        CleanupTimedOut => "timed out waiting for the pod to be cleaned up",
    }
}

words! {
    /// What a kubelet config source did with a pod.
    pub enum ConfigOpKind {
        Add => "ADD",
        Remove => "REMOVE",
        AddFile => "ADD (file)",
        RemoveFile => "REMOVE (file)",
        Update => "UPDATE",
        Delete => "DELETE",
    }
}

words! {
    /// `kubetypes.SyncPodType` of an `UpdatePod` call.
    pub enum UpdateType {
        Create => "create",
        Update => "update",
        Sync => "sync",
        Kill => "kill",
    }
}

words! {
    /// The sync operation a pod worker runs.
    pub enum SyncKind {
        SyncPod => "SyncPod",
        SyncTerminatingPod => "SyncTerminatingPod",
        SyncTerminatingRuntimePod => "SyncTerminatingRuntimePod",
        SyncTerminatedPod => "SyncTerminatedPod",
    }
}

impl SyncKind {
    /// `SyncTerminatingPod` or its runtime-only form.
    pub fn is_terminating(self) -> bool {
        matches!(
            self,
            SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod
        )
    }
}

words! {
    /// A pod worker's state changes and decisions (v1.31 `pod_workers.go`, and the v1.21
    /// design's worker and `ForgetWorker`).
    pub enum WorkerStep {
        Record => "record",
        FirstSightTerminal => "first sight of a terminal pod: recorded as terminated",
        RestartWhileTerminating => "restart requested while terminating",
        TerminationRequested => "termination requested",
        StaticPodBlocked => "static pod cannot start yet: another pod holds its full name",
        Started => "started",
        FinishedNeverStarted => "finished (never started)",
        TerminationAcknowledged => "termination acknowledged",
        Finished => "finished",
        RuntimePodRecordRemoved => "runtime pod terminated: record removed",
        Terminated => "terminated",
        TerminalTerminating => "pod is terminal: terminating",
        Forgotten => "forgotten",
        OrphanNeverStarted => "orphan never started: record dropped",
        OrphanTerminationRequested => "orphan: termination requested",
        /// v1.21: `podAndContainersAreTerminal` treated the pod as terminated.
        V121TreatedAsTerminated => "v1.21 dispatchWork: pod and containers terminal: TerminatePod, worker skipped",
        /// v1.21: `ForgetWorker`.
        V121Forgotten => "v1.21 ForgetWorker: worker forgotten",
    }
}

words! {
    /// A step inside a sync operation that the oracle orders against others.
    pub enum SyncStepKind {
        /// The terminal status was handed to the status manager.
        StatusSet => "status set",
        /// `StopLivenessAndStartup`.
        ProbesStopped => "probes stopped: liveness, startup",
        /// The prober's `RemovePod`.
        ProbesRemoved => "probes removed",
        V121DeletionKill => "v1.21 syncPod: deletion timestamp set: killPod",
        V121KillUpdate => "v1.21 syncPod: kill update: status set, killPod with the override",
    }
}

words! {
    /// A kubelet event or log line worth a trace record (`note`).
    pub enum NoteKind {
        ExceededGracePeriod => "ExceededGracePeriod: timeout waiting to kill pod",
        HousekeepingRestartsUnknown => "housekeeping restarts a desired pod unknown to the workers",
        HousekeepingKillsOrphan => "housekeeping kills an orphaned runtime pod",
        FailedMountNotRegistered => "FailedMount: MountVolume.SetUp failed: object not registered",
        FailedSyncStatus => "FailedSync: error determining status",
        LivenessKill => "container failed liveness probe, will be killed",
        StartupKill => "container failed startup probe, will be killed",
        ObjectsUnregistered => "secrets and configmaps unregistered",
        CrashLoopBackOff => "CrashLoopBackOff",
        PreStopTimedOut => "PreStop hook did not finish within the grace period",
        V121NotInRuntimeCache => "v1.21 deletePod: pod not found in the runtime cache",
        V121KillRequested => "v1.21 pod killer: kill requested",
        V121KillDone => "v1.21 pod killer: pod killed",
        V121KillFailed => "FailedSync: v1.21 pod killer: failed to kill pod",
        V121PodKillerKilling => "v1.21 pod killer: killing unwanted pod",
        V121HousekeepingPodKiller => "v1.21 housekeeping: running pod not desired: pod killer",
        VolumesReconstructed => "volume manager: mounted volumes reconstructed from disk",
        ReconstructedVolumesUnmount => "volume manager: reconstructed volumes not in the desired state: unmount",
        StatusRejectedWouldRestart => "status update rejected: terminated container would restart",
        DeadKubeletRequestDropped => "API request of a dead kubelet dropped",
        /// The postStart hook failed: the container is killed.
        FailedPostStartHook => "FailedPostStartHook: PostStartHook failed, container will be killed",
        /// The preStop hook failed (a `tcpSocket` handler cannot run): the stop goes on.
        FailedPreStopHook => "FailedPreStopHook: PreStopHook failed",
        SidecarTurnTimedOut => "sidecar stopped before the containers it waits for: its grace ran out",
        /// Switch `postStartCancelledByDeletion`: the termination request cancelled the
        /// SyncPod waiting on a postStart hook, which is abandoned.
        PostStartCancelled => "SyncPod cancelled while its postStart hook ran: the hook is abandoned",
    }
}

impl NoteKind {
    /// A `FailedSync` event: a sync returned an error.
    pub fn is_failed_sync(self) -> bool {
        self.as_str().starts_with("FailedSync")
    }
    /// A `FailedMount` event.
    pub fn is_failed_mount(self) -> bool {
        self.as_str().starts_with("FailedMount")
    }
}

words! {
    /// Why admission rejected a pod (the pod status `reason` it gets): the eviction
    /// manager's, the predicate handler's `OutOf<resource>`, or the node shutdown manager's.
    pub enum RejectReason {
        Evicted => "Evicted",
        OutOfPods => "OutOfpods",
        OutOfCpu => "OutOfcpu",
        OutOfMemory => "OutOfmemory",
        NodeShutdown => "NodeShutdown",
    }
}

impl RejectReason {
    /// The predicate handler's insufficient-resource reasons.
    pub fn is_out_of_resource(self) -> bool {
        matches!(
            self,
            RejectReason::OutOfPods | RejectReason::OutOfCpu | RejectReason::OutOfMemory
        )
    }
}

words! {
    /// The kubelet process of one incarnation.
    pub enum ProcessEvent {
        Crashed => "crashed",
        Started => "started",
    }
}

words! {
    /// `killPodNow` and its completion channel.
    pub enum KillPodNowStep {
        Requested => "requested",
        Closed => "closed",
        Returned => "returned",
        TimedOut => "timed out",
    }
}

words! {
    /// A probe worker's life.
    pub enum ProbeWorkerStep {
        Started => "started",
        Stopped => "stopped",
    }
}

words! {
    /// What one probe run returned (`probe.Result`).
    pub enum ProbeVerdict {
        Success => "success",
        Failure => "failure",
        Error => "error",
    }
}

words! {
    /// A results manager's cached value (`results.Result`).
    pub enum ProbeCached {
        Unknown => "unknown",
        Success => "success",
        Failure => "failure",
    }
}

/// A step of the graceful node shutdown manager (v1.31 `nodeshutdown_manager_linux.go`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownStep {
    DelayLockRequested {
        lock: u64,
    },
    /// logind's `PrepareForShutdown` signal, `true` when shutting down, `false` cancelled.
    PrepareForShutdown {
        shutting_down: bool,
    },
    Processing {
        pods: usize,
        groups: usize,
    },
    Processed {
        lock: u64,
    },
    GroupReturned {
        priority: i32,
        kills: usize,
        in_flight: usize,
    },
    GroupDeadlineWaiting {
        priority: i32,
        in_flight: usize,
    },
    GroupKillsCompleted {
        priority: i32,
    },
    GroupDeadlinePassed {
        priority: i32,
        in_flight: usize,
    },
}

impl fmt::Display for ShutdownStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ShutdownStep::*;
        match *self {
            DelayLockRequested { lock } => write!(f, "delay inhibitor lock {lock} requested"),
            PrepareForShutdown { shutting_down } => {
                write!(f, "PrepareForShutdown({shutting_down})")
            }
            Processing { pods, groups } => {
                write!(f, "processing shutdown: {pods} active pods in {groups} groups")
            }
            Processed { lock } => write!(
                f,
                "shutdown processed: inhibitor lock {lock} released, node will shut down"
            ),
            GroupReturned {
                priority,
                kills,
                in_flight,
            } => write!(
                f,
                "group priority {priority}: all {kills} kill calls returned, {in_flight} kills in flight"
            ),
            GroupDeadlineWaiting {
                priority,
                in_flight,
            } => write!(
                f,
                "group priority {priority} deadline passed with {in_flight} kills in flight: waiting for them"
            ),
            GroupKillsCompleted { priority } => {
                write!(f, "group priority {priority}: every kill completed")
            }
            GroupDeadlinePassed {
                priority,
                in_flight,
            } => write!(
                f,
                "group priority {priority} deadline passed with {in_flight} kills in flight"
            ),
        }
    }
}

impl Hash for ShutdownStep {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // As the text it renders to; shutdown steps are rare, the allocation is cheap.
        self.to_string().hash(h)
    }
}

/// What systemd-logind did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogindStep {
    InhibitDelayRaised {
        delay: crate::sim::Dur,
    },
    DelayLockTaken {
        lock: u64,
    },
    DelayLockReleased {
        lock: u64,
    },
    HolderDied,
    NoDelayLockHeld,
    /// The node was asked to shut down and sent `PrepareForShutdown(true)`; it waits up to
    /// `delay` for `locks` delay locks.
    PrepareForShutdown {
        delay: crate::sim::Dur,
        locks: usize,
    },
}

impl fmt::Display for LogindStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LogindStep::*;
        match *self {
            InhibitDelayRaised { delay } => write!(f, "InhibitDelayMaxSec raised to {delay}"),
            DelayLockTaken { lock } => write!(f, "delay lock {lock} taken"),
            DelayLockReleased { lock } => write!(f, "delay lock {lock} released"),
            HolderDied => f.write_str("delay locks released: their holder died"),
            NoDelayLockHeld => f.write_str("shutdown requested, no delay lock held"),
            PrepareForShutdown { delay, locks } => write!(
                f,
                "shutdown requested: PrepareForShutdown(true) sent, waiting up to {delay} for {locks} delay lock(s)"
            ),
        }
    }
}

impl Hash for LogindStep {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.to_string().hash(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::trace::StableHasher;

    fn h<T: Hash + ?Sized>(t: &T) -> u64 {
        let mut s = StableHasher::default();
        t.hash(&mut s);
        s.finish()
    }

    #[test]
    fn a_word_hashes_as_its_text() {
        for w in WorkerStep::ALL {
            assert_eq!(h(w), h(w.as_str()), "{w:?}");
        }
        assert_eq!(
            h(&Some(CriFailure::Failed(CriFailed::SandboxNotReady))),
            h(&Some("sandbox not ready"))
        );
        let s = ShutdownStep::GroupKillsCompleted { priority: 7 };
        assert_eq!(
            h(&s),
            h(&"group priority 7: every kill completed".to_string())
        );
    }

    #[test]
    fn a_words_hash_words_are_its_texts() {
        fn same<W: Word + Hash>(w: W, words: &[u64]) {
            let mut plain = StableHasher::default();
            w.hash(&mut plain);
            let mut fast = StableHasher::default();
            fast.write_words(words);
            assert_eq!(plain.finish(), fast.finish(), "{}", w.text());
        }
        for &w in ProbeVerdict::ALL {
            same(w, w.hash_words());
        }
        for &w in SyncKind::ALL {
            same(w, w.hash_words());
        }
        for &w in UpdateType::ALL {
            same(w, w.hash_words());
        }
        for &w in NoteKind::ALL {
            same(w, w.hash_words());
        }
        for &w in WatchDelivery::ALL {
            same(w, w.hash_words());
        }
        for &w in WorkerStep::ALL {
            same(w, w.hash_words());
        }
    }

    #[test]
    fn words_of_one_enum_render_differently() {
        let mut seen = std::collections::BTreeSet::new();
        for w in NoteKind::ALL {
            assert!(seen.insert(w.as_str()), "{w:?}");
        }
        assert!(NoteKind::V121KillFailed.is_failed_sync());
        assert!(NoteKind::FailedMountNotRegistered.is_failed_mount());
    }
}
