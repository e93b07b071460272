//! The invariant table: every property the oracle checks, with a stable kebab-case name,
//! its one-line meaning, the upstream source it comes from, and the behaviour profiles on
//! which it must hold.
//!
//! Sources: `shared/reference/kubelet-model.md` section 11 (ids `S*`, `L*`) and the
//! consolidated checklist of `shared/reference/race-catalog.md` (ids `C*`, by checklist
//! item). Profile labels follow kubelet-model.md section 0.1 and design.md decision 7:
//! `v1.21` (before PR 102344), `v1.22` (the pod-worker state machine), `v1.27` (PRs 113145
//! and 115331) and `current` (v1.31). Only `current` runs today; an invariant upstream
//! itself violates by design on a release does not list that release.

/// Safety (checked as each transition happens) or liveness (bounded progress, checked at
/// the end of a run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Safety,
    Liveness,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Safety => "safety",
            Kind::Liveness => "liveness",
        }
    }
}

/// One invariant.
#[derive(Clone, Copy, Debug)]
pub struct Invariant {
    /// Stable kebab-case name (the `invariant` of a finding, `expect.findings` entries).
    pub name: &'static str,
    /// Where it comes from: `S1`.. and `L1`.. of kubelet-model.md section 11, `C<n>` for
    /// item n of race-catalog.md's consolidated checklist.
    pub id: &'static str,
    pub kind: Kind,
    /// One line: what must hold.
    pub meaning: &'static str,
    /// For liveness: the bound, and when the check is skipped.
    pub bound: &'static str,
    /// The upstream file, PR or issue it comes from.
    pub source: &'static str,
    /// The profiles on which it must hold.
    pub profiles: &'static [&'static str],
}

/// Every profile label.
pub const ALL: &[&str] = &["v1.21", "v1.22", "v1.27", "current"];
/// Since the pod-worker state machine (PR 102344).
const V122: &[&str] = &["v1.22", "v1.27", "current"];
/// Since v1.27 (PRs 113145, 115331); also where the 1.23-1.25 fixes are required.
const V127: &[&str] = &["v1.27", "current"];
/// Every profile but v1.22 (a v1.22.0-2 regression, fixed in 1.22.3 and 1.23).
const NOT_V122: &[&str] = &["v1.21", "v1.27", "current"];
/// An open upstream bug: no release holds it (a finding on `current` is upstream's
/// behaviour, not a port bug).
const NONE: &[&str] = &[];

/// An invariant by position in [`INVARIANTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Inv {
    NoStartAfterTermination,
    SingleSyncPerUid,
    SyncOrder,
    NoTerminalPhaseWhileRunning,
    TerminalPhaseAbsorbing,
    LocalTerminalPhaseAbsorbing,
    DeleteOnlyAfterReclamation,
    GraceNeverIncreases,
    NoProbeAfterTermination,
    NoRestartAfterTermination,
    FinishedIsFinal,
    StaticFullnameExclusivity,
    KillCompletionTruthful,
    RuntimePodsNoApiWrites,
    EvictionRules,
    ShutdownGroupOrder,
    NoSyncOfKnownTerminated,
    StatusBeforeStop,
    NoTeardownUnderRunningContainer,
    NoReadyWithTerminalPhase,
    FailedNeverBecomesSucceeded,
    FinalContainerStatusFidelity,
    DeletedPodStops,
    DeletedPodRemovedFromApi,
    TerminationFinishes,
    OrphanedRuntimePodsDie,
    NaturalCompletion,
    RestartReadmitsRunningPods,
    CacheFreshness,
    ReferencedObjectsRegistered,
    ShutdownKillsDoneAtGroupDeadline,
    ReadinessDuringTermination,
    ShutdownPodsFailed,
    GraceWithinOverrides,
    DesiredStaticPodRuns,
    WorkerKeptUntilTerminated,
    StartsOnlyInInflightSync,
    ProbesOnlyRunningContainers,
    TerminalInApiAfterStop,
    FinishedPodForgotten,
    KillPodNowReturns,
    EvictionReevaluates,
    NodeShutdownCompletes,
    LivenessFailureKills,
    NotReadyAfterShutdownStart,
    ApiWritesCarryUid,
}

impl Inv {
    /// Every invariant, in table order.
    pub const ALL: &[Inv] = &[
        Inv::NoStartAfterTermination,
        Inv::SingleSyncPerUid,
        Inv::SyncOrder,
        Inv::NoTerminalPhaseWhileRunning,
        Inv::TerminalPhaseAbsorbing,
        Inv::LocalTerminalPhaseAbsorbing,
        Inv::DeleteOnlyAfterReclamation,
        Inv::GraceNeverIncreases,
        Inv::NoProbeAfterTermination,
        Inv::NoRestartAfterTermination,
        Inv::FinishedIsFinal,
        Inv::StaticFullnameExclusivity,
        Inv::KillCompletionTruthful,
        Inv::RuntimePodsNoApiWrites,
        Inv::EvictionRules,
        Inv::ShutdownGroupOrder,
        Inv::NoSyncOfKnownTerminated,
        Inv::StatusBeforeStop,
        Inv::NoTeardownUnderRunningContainer,
        Inv::NoReadyWithTerminalPhase,
        Inv::FailedNeverBecomesSucceeded,
        Inv::FinalContainerStatusFidelity,
        Inv::DeletedPodStops,
        Inv::DeletedPodRemovedFromApi,
        Inv::TerminationFinishes,
        Inv::OrphanedRuntimePodsDie,
        Inv::NaturalCompletion,
        Inv::RestartReadmitsRunningPods,
        Inv::CacheFreshness,
        Inv::ReferencedObjectsRegistered,
        Inv::ShutdownKillsDoneAtGroupDeadline,
        Inv::ReadinessDuringTermination,
        Inv::ShutdownPodsFailed,
        Inv::GraceWithinOverrides,
        Inv::DesiredStaticPodRuns,
        Inv::WorkerKeptUntilTerminated,
        Inv::StartsOnlyInInflightSync,
        Inv::ProbesOnlyRunningContainers,
        Inv::TerminalInApiAfterStop,
        Inv::FinishedPodForgotten,
        Inv::KillPodNowReturns,
        Inv::EvictionReevaluates,
        Inv::NodeShutdownCompletes,
        Inv::LivenessFailureKills,
        Inv::NotReadyAfterShutdownStart,
        Inv::ApiWritesCarryUid,
    ];

    pub fn def(self) -> &'static Invariant {
        &INVARIANTS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// Every invariant, in [`Inv`] order.
pub const INVARIANTS: &[Invariant] = &[
    Invariant {
        name: "no-start-after-termination",
        id: "S1",
        kind: Kind::Safety,
        meaning: "no RunPodSandbox, CreateContainer or StartContainer begins for a UID after its termination was acknowledged (SyncTerminatingPod began; in the v1.21 design: dispatchWork treated the pod as terminated, called TerminatePod and skipped its worker)",
        bound: "",
        source: "pkg/kubelet/pod_workers.go (PR 102344); race catalog 1",
        profiles: V122,
    },
    Invariant {
        name: "single-sync-per-uid",
        id: "S2",
        kind: Kind::Safety,
        meaning: "at most one sync call (SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod, SyncTerminatedPod) is open per UID at any time",
        bound: "",
        source: "pkg/kubelet/pod_workers.go podWorkerLoop (one worker per UID)",
        profiles: ALL,
    },
    Invariant {
        name: "sync-order",
        id: "S3",
        kind: Kind::Safety,
        meaning: "per UID: SyncPod* then SyncTerminating+ then SyncTerminated+; no SyncPod after the first SyncTerminating, no SyncTerminated unless the latest SyncTerminating succeeded (or the pod was first seen terminal), no SyncTerminating after SyncTerminated",
        bound: "",
        source: "pkg/kubelet/pod_workers.go (PR 102344, PR 113145)",
        profiles: V122,
    },
    Invariant {
        name: "no-terminal-phase-while-running",
        id: "S4",
        kind: Kind::Safety,
        meaning: "the API gets Succeeded/Failed for a pod only when no container of it runs and its worker reached Terminated (admission rejections excepted)",
        bound: "",
        source: "pkg/kubelet/status/status_manager.go, kubelet_pods.go (PR 108366, issue 106884; by design violated in v1.21, race catalog 3)",
        profiles: V122,
    },
    Invariant {
        name: "terminal-phase-absorbing",
        id: "S5",
        kind: Kind::Safety,
        meaning: "once the API holds Succeeded or Failed for a pod object, no status write changes it to Pending, Running or Unknown, or Succeeded to Failed",
        bound: "",
        source: "pkg/kubelet/status/status_manager.go, kubelet_pods.go generateAPIPodStatus (PR 105462, issue 105358); race catalog 2",
        profiles: V122,
    },
    Invariant {
        name: "local-terminal-phase-absorbing",
        id: "S5'",
        kind: Kind::Safety,
        meaning: "once the status manager's cache holds a terminal phase for a UID, it never goes back to Pending or Running while the pod is in config (once REMOVEd, housekeeping may drop the cached status)",
        bound: "",
        source: "pkg/kubelet/status/status_manager.go updateStatusInternal",
        profiles: V122,
    },
    Invariant {
        name: "delete-only-after-reclamation",
        id: "S6",
        kind: Kind::Safety,
        meaning: "the kubelet deletes a pod object only after SyncTerminatedPod succeeded, its volumes are unmounted, its cgroup is removed, the API holds a terminal phase and a deletion timestamp",
        bound: "",
        source: "pkg/kubelet/status/status_manager.go canBeDeleted, kubelet.go SyncTerminatedPod (PR 108366, PR 113145)",
        profiles: V127,
    },
    Invariant {
        name: "grace-never-increases",
        id: "S7",
        kind: Kind::Safety,
        meaning: "the grace periods given to SyncTerminatingPod for a UID never increase and are >= 1 s; every StopContainer timeout is >= 2 s (v1.31 quirk not checked: after a delete with grace 0, calculateEffectiveGracePeriod reads deletionGracePeriodSeconds=0 as unset and a later eviction or shutdown override raises the grace from 1)",
        bound: "",
        source: "pkg/kubelet/pod_workers.go calculateEffectiveGracePeriod, kuberuntime/kuberuntime_container.go minimumGracePeriodInSeconds; race catalog 20",
        profiles: V122,
    },
    Invariant {
        name: "no-probe-after-termination",
        id: "S8",
        kind: Kind::Safety,
        meaning: "after SyncTerminatingPod set the pod's status (where StopLivenessAndStartup follows) a liveness/startup worker runs at most one more probe (one already past its select); after RemovePod every worker runs at most one more",
        bound: "",
        source: "pkg/kubelet/prober/prober_manager.go, worker.go (PR 110191, issue 110309); race catalog 10",
        profiles: V127,
    },
    Invariant {
        name: "no-restart-after-termination",
        id: "S10",
        kind: Kind::Safety,
        meaning: "a liveness or startup failure never leads to a StartContainer of the pod after its termination was acknowledged",
        bound: "",
        source: "pkg/kubelet/kuberuntime/kuberuntime_manager.go computePodActions, prober/worker.go (PR 98571); race catalog 10",
        profiles: V122,
    },
    Invariant {
        name: "finished-is-final",
        id: "S11",
        kind: Kind::Safety,
        meaning: "after a worker finished (SyncTerminatedPod done, or never started), no sync call runs for the UID until it is forgotten",
        bound: "",
        source: "pkg/kubelet/pod_workers.go UpdatePod (finished pods ignore updates)",
        profiles: V122,
    },
    Invariant {
        name: "static-fullname-exclusivity",
        id: "S12",
        kind: Kind::Safety,
        meaning: "no two UIDs of static pods with the same full name are started and not finished at the same time (in one kubelet process), and no container of a static pod starts while a container of another UID with the same full name runs (ground truth, across kubelet restarts: runtime-only containers count)",
        bound: "",
        source: "pkg/kubelet/pod_workers.go allowStaticPodStart (PR 104743, issue 97722); race catalog 5, 27 (issues 112814, 116880: open upstream)",
        profiles: V127,
    },
    Invariant {
        name: "kill-completion-truthful",
        id: "S13",
        kind: Kind::Safety,
        meaning: "a killPodNow CompletedCh is closed only once the pod's worker reached Terminated",
        bound: "",
        source: "pkg/kubelet/pod_workers.go KillPodOptions.CompletedCh, completeTerminating",
        profiles: V122,
    },
    Invariant {
        name: "runtime-pods-no-api-writes",
        id: "S14",
        kind: Kind::Safety,
        meaning: "the kubelet writes no status and deletes no object for a UID it knows only as a runtime pod",
        bound: "",
        source: "pkg/kubelet/pod_workers.go (runtime-only pods), status/status_manager.go",
        profiles: V122,
    },
    Invariant {
        name: "eviction-rules",
        id: "S15",
        kind: Kind::Safety,
        meaning: "at most one pod is evicted per eviction round (the next only after the previous was cleaned up, its containers, volumes and cgroup were reclaimed, or the wait timed out); no critical (static, mirror or priority >= 2000000000) pod is evicted; an evicted pod's final API status is Failed/Evicted (v1.31: Succeeded if every container exited 0, as the phase is recomputed after the kill; not checked when the pod was already terminating or another killPodNow's status function replaced the eviction's, or after a kubelet restart)",
        bound: "",
        source: "pkg/kubelet/eviction/eviction_manager.go synchronize, evictPod, waitForPodsCleanup (PRs 43590, 50350); pkg/kubelet/types IsCriticalPod; race catalog 21",
        profiles: ALL,
    },
    Invariant {
        name: "shutdown-group-order",
        id: "S16",
        kind: Kind::Safety,
        meaning: "graceful node shutdown kills groups in ascending priority, a group only after every kill of the previous one returned or its period elapsed; no pod added after the shutdown started is run",
        bound: "",
        source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent, Admit (KEP 2712); race catalog 9",
        profiles: ALL,
    },
    Invariant {
        name: "no-sync-of-known-terminated",
        id: "S17",
        kind: Kind::Safety,
        meaning: "a UID whose worker reached Terminated (IsPodKnownTerminated) is never given a SyncPod",
        bound: "",
        source: "pkg/kubelet/pod_workers.go IsPodKnownTerminated, kubelet.go HandlePodAdditions",
        profiles: V122,
    },
    Invariant {
        name: "status-before-stop",
        id: "S18",
        kind: Kind::Safety,
        meaning: "SyncTerminatingPod sets the local status before its first StopContainer or PreStop hook",
        bound: "",
        source: "pkg/kubelet/kubelet.go SyncTerminatingPod",
        profiles: V122,
    },
    Invariant {
        name: "no-teardown-under-running-container",
        id: "C5",
        kind: Kind::Safety,
        meaning: "no volume unmount, pod cgroup removal or pod directory removal begins or takes effect while a container of the pod runs, or begins while a kill of the pod is in flight (termination requested and not yet terminated; in the v1.21 design, a pod-killer kill not yet done)",
        bound: "",
        source: "pkg/kubelet/kubelet.go SyncTerminatedPod, kubelet_pods.go cleanupOrphanedPodDirs (PRs 98424, 101524; issues 98142, 113979); race catalog 12, 24",
        profiles: V122,
    },
    Invariant {
        name: "no-ready-with-terminal-phase",
        id: "C3",
        kind: Kind::Safety,
        meaning: "the API never shows a pod Ready while its phase is Succeeded or Failed",
        bound: "",
        source: "pkg/kubelet/status/generate.go GeneratePodReadyCondition",
        profiles: ALL,
    },
    Invariant {
        name: "failed-never-becomes-succeeded",
        id: "C1",
        kind: Kind::Safety,
        meaning: "a pod object whose API phase was Failed never becomes Succeeded",
        bound: "",
        source: "pkg/kubelet/kubelet_pods.go, status/status_manager.go (PR 88440, issue 58711); race catalog 4",
        profiles: ALL,
    },
    Invariant {
        name: "final-container-status-fidelity",
        id: "C12",
        kind: Kind::Safety,
        meaning: "in a terminal pod's final API status, a terminated container status naming a container ID carries that container's real exit code, and none says ContainerStatusUnknown when the real exit was observable (it exited 5 s or more before the write, is not in the last termination state, was not removed, and no failed start or kubelet restart came since)",
        bound: "",
        source: "pkg/kubelet/kubelet_pods.go convertToAPIContainerStatuses, status_manager.go TerminatePod (PR 88440, issue 58711); race catalog 4",
        profiles: V122,
    },
    Invariant {
        name: "deleted-pod-stops",
        id: "L1",
        kind: Kind::Liveness,
        meaning: "after the kubelet observed a pod's deletion, every container of it exits",
        bound: "G + 60 s after the kubelet observed the deletion (or, later, after the SyncPod in flight then ended, or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since; G = the largest grace the pod could get (spec, deletes, kills)",
        source: "pkg/kubelet/pod_workers.go, kuberuntime/kuberuntime_container.go killContainer",
        profiles: V122,
    },
    Invariant {
        name: "deleted-pod-removed-from-api",
        id: "L3",
        kind: Kind::Liveness,
        meaning: "a gracefully deleted pod object is removed from the API by the kubelet",
        bound: "as deleted-pod-stops (G + 60 s + 20 s per error after the kubelet observed the delete)",
        source: "pkg/kubelet/status/status_manager.go syncPod, canBeDeleted (PR 113145); race catalog 15",
        profiles: V127,
    },
    Invariant {
        name: "termination-finishes",
        id: "L4",
        kind: Kind::Liveness,
        meaning: "every termination the pod worker took on reaches Finished (or the record is removed, for runtime pods)",
        bound: "G + 60 s after termination was requested (or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since",
        source: "pkg/kubelet/pod_workers.go (PR 113145, issue 116544); race catalog 13, 15",
        profiles: V127,
    },
    Invariant {
        name: "orphaned-runtime-pods-die",
        id: "L6",
        kind: Kind::Liveness,
        meaning: "containers of a pod the running kubelet never knew from config (an orphan, e.g. removed from the API while the kubelet was down) are killed",
        bound: "2 s (the kill of a runtime pod gives each container the 2 s minimum) + 60 s after the kubelet first saw it as a runtime pod (housekeeping) or last started, + 20 s per failed sync or CRI call of the pod since",
        source: "pkg/kubelet/kubelet_pods.go HandlePodCleanups (orphaned runtime pods), pod_workers.go SyncTerminatingRuntimePod",
        profiles: V122,
    },
    Invariant {
        name: "natural-completion",
        id: "L7",
        kind: Kind::Liveness,
        meaning: "a pod whose containers all ran and exited and will not be restarted (Never, or OnFailure with every exit 0) reaches a terminal API phase and its worker finishes",
        bound: "60 s after the last container exited (or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since; pods with init containers, static pods and deleted pods are not checked",
        source: "pkg/kubelet/kubelet.go SyncPod isTerminal, pod_workers.go completeSync (PR 115331)",
        profiles: V127,
    },
    Invariant {
        name: "restart-readmits-running-pods",
        id: "C16",
        kind: Kind::Safety,
        meaning: "a restarted kubelet does not reject for resources (OutOf<resource>) a pod whose containers were running when it went down, unless a pod was created since (with unchanged capacity the pods admitted before the restart still fit; terminal pods must not count)",
        bound: "",
        source: "pkg/kubelet/pod_workers.go UpdatePod first sight of a terminal pod, kubelet_pods.go filterOutInactivePods (PR 105527, issue 105523); race catalog 16",
        profiles: NOT_V122,
    },
    Invariant {
        name: "cache-freshness",
        id: "C15",
        kind: Kind::Safety,
        meaning: "a SyncPod acts on a pod status newer than the end of the pod's previous SyncPod: it never creates a sandbox while one that was ready before that end still is, and never runs a restartPolicy=Never container again that already ran before that end",
        bound: "",
        source: "pkg/kubelet/pod_workers.go (GetNewerThan the last sync), pkg/kubelet/pleg/generic.go updateCache (PRs 7749, 138024); race catalog 29",
        profiles: ALL,
    },
    Invariant {
        name: "referenced-objects-registered",
        id: "C14",
        kind: Kind::Safety,
        meaning: "while a pod is being synced (its worker started it and its termination is not acknowledged), the configmaps and secrets it references are registered: no volume SetUp of the pod fails with \"not registered\"",
        bound: "",
        source: "pkg/kubelet/kubelet.go SyncPod/SyncTerminatedPod RegisterPod/UnregisterPod, pkg/kubelet/util/manager/cache_based_manager.go (PRs 107821, 107831); race catalog 23",
        profiles: V127,
    },
    Invariant {
        name: "shutdown-kills-done-at-group-deadline",
        id: "C9",
        kind: Kind::Safety,
        meaning: "every kill a graceful node shutdown started for a priority group has completed (its killPodNow channel closed: the pod worker reached Terminated) when the next group starts or the inhibitor lock is released",
        bound: "",
        source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (issues 108040, 109531, 110755; PR 108193 fixed only the test); race catalog 9 (a), (b); held by no release",
        profiles: NONE,
    },
    Invariant {
        name: "readiness-during-termination",
        id: "C10, L12",
        kind: Kind::Safety,
        meaning: "while a pod terminates, the readiness worker of a running container is not stopped before the kill completed (RemovePod), unless the kubelet's own phase for the pod is already terminal (eviction, node shutdown: issue 124648, open upstream)",
        bound: "",
        source: "pkg/kubelet/kubelet.go SyncTerminatingPod, prober/prober_manager.go (PR 110191, issue 110309); race catalog 10 (ii); also kubelet-model.md L12 (readiness reported during termination: the worker keeps running until RemovePod)",
        profiles: &["v1.21", "v1.27", "current"],
    },
    Invariant {
        name: "shutdown-pods-failed",
        id: "C8",
        kind: Kind::Safety,
        meaning: "a pod the graceful node shutdown manager kills gets phase Failed (unless it had Succeeded) in the status SyncTerminatingPod sets",
        bound: "",
        source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (PRs 106899, 106900, 106901; issue 104531); race catalog 8",
        profiles: &["v1.21", "v1.27", "current"],
    },
    Invariant {
        name: "grace-within-overrides",
        id: "C8",
        kind: Kind::Safety,
        meaning: "a SyncTerminatingPod that begins after an eviction killed the pod with grace override o gets a grace <= max(o, 1): an explicit 0 means 1 s, never the spec's grace (the kubelet process that evicted; a restart forgets)",
        bound: "",
        source: "pkg/kubelet/pod_workers.go calculateEffectiveGracePeriod, eviction/eviction_manager.go evictPod (issue 115819, PR 115835); race catalog 20",
        profiles: V127,
    },
    Invariant {
        name: "desired-static-pod-runs",
        id: "C7",
        kind: Kind::Liveness,
        meaning: "a static pod whose manifest is on the node gets a container started after the manifest (re)appeared, once no other UID with its full name has a running container",
        bound: "60 s after the later of: the manifest (re)appeared, the last container of another UID with the same full name exited, the kubelet last started; + 20 s per failed sync or CRI call of the pod since; not checked once a node shutdown started or the pod was rejected",
        source: "pkg/kubelet/pod_workers.go UpdatePod restartRequested, allowStaticPodStart, cleanupUnstartedPod (PRs 104847, 107900; issues 104648, 107733); race catalog 6, 7",
        profiles: V127,
    },
    Invariant {
        name: "worker-kept-until-terminated",
        id: "C7",
        kind: Kind::Safety,
        meaning: "a pod worker is not forgotten (its record removed, or in the v1.21 design its goroutine told to exit by ForgetWorker) while a container of the pod runs or a sync of it is in flight",
        bound: "",
        source: "pkg/kubelet/pod_workers.go SyncKnownPods, removeTerminatedWorker (PR 102344; v1.21 ForgetNonExistingPodWorkers); race catalog 13",
        profiles: V122,
    },
    Invariant {
        name: "starts-only-in-inflight-sync",
        id: "S1'",
        kind: Kind::Safety,
        meaning: "a RunPodSandbox, CreateContainer or StartContainer between a pod's TermRequested and TermAcked happens only inside the SyncPod the worker took up before termination was requested (open then, or waiting in GetNewerThan for a newer pod status and beginning right after; v1.31 runs the runtime part of SyncPod on a context without cancel) (the run metric startsWhileTerminationRequested counts them)",
        bound: "",
        source: "pkg/kubelet/pod_workers.go UpdatePod (cancels the in-flight SyncPod; the next sync is SyncTerminatingPod), PR 102344; race catalog 1",
        profiles: V122,
    },
    Invariant {
        name: "probes-only-running-containers",
        id: "S9",
        kind: Kind::Safety,
        meaning: "a probe runs only against a container that has been seen running, and a probe of a container that is not running (ground truth) never succeeds (an exited container yields Failure; the restart half is no-restart-after-termination)",
        bound: "",
        source: "pkg/kubelet/prober/worker.go doProbe (non-running containers are not probed), prober/prober.go",
        profiles: ALL,
    },
    Invariant {
        name: "terminal-in-api-after-stop",
        id: "L2",
        kind: Kind::Liveness,
        meaning: "once a pod's worker reached Terminated (its containers stopped), the API gets a terminal phase (or the object is removed)",
        bound: "60 s after the worker reached Terminated (or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since (the spec's min(R + unmount, 10 s) + Q, with room for status back-off); static, mirror, runtime-only and rejected pods are not checked",
        source: "pkg/kubelet/status/status_manager.go syncPod/needsUpdate, pod_workers.go completeTerminating, kubelet.go SyncTerminatedPod (PRs 108366, 115331)",
        profiles: V127,
    },
    Invariant {
        name: "finished-pod-forgotten",
        id: "L5",
        kind: Kind::Liveness,
        meaning: "a finished worker whose pod left the config is forgotten by the next housekeeping (SyncKnownPods)",
        bound: "the next housekeeping after the worker finished and the pod was REMOVEd (every 2 s; housekeeping runs only once all sources are ready, so the bound starts then); checked at each housekeeping",
        source: "pkg/kubelet/pod_workers.go SyncKnownPods, removeTerminatedWorker; kubelet_pods.go HandlePodCleanups",
        profiles: V122,
    },
    Invariant {
        name: "kill-pod-now-returns",
        id: "L8",
        kind: Kind::Liveness,
        meaning: "a killPodNow call (eviction, node shutdown) stops blocking: its channel closes or it times out",
        bound: "max(10 s, 1.5 x G) + 1 s after the request, G = the largest grace the kill could use (the spec's, the eviction override, the longest shutdown group period); checked on return and at the end; pending calls are dropped when the kubelet crashes",
        source: "pkg/kubelet/pod_workers.go killPodNow",
        profiles: V122,
    },
    Invariant {
        name: "eviction-reevaluates",
        id: "L9",
        kind: Kind::Liveness,
        meaning: "after an eviction's killPodNow returned, the eviction manager ends its wait for the pod's cleanup and evaluates the thresholds again",
        bound: "30 s (waitForPodsCleanup timeout) + 10 s (monitoring interval) + 1 s after the kill returned; skipped when the kubelet crashed or the node powered off since; with switch evictionWaitsForReclaim off (<= v1.6, no cleanup wait) the next evaluation is not in the trace unless it evicts, so a finding there may be spurious",
        source: "pkg/kubelet/eviction/eviction_manager.go synchronize, waitForPodsCleanup (PRs 43590, 50350)",
        profiles: ALL,
    },
    Invariant {
        name: "node-shutdown-completes",
        id: "L10",
        kind: Kind::Liveness,
        meaning: "a graceful node shutdown releases the inhibitor lock (or the node powers off) within the sum of its group periods",
        bound: "each group starts by the previous group's start + its period, the lock is released by the last group's start + its period (so within the sum of the periods of the groups with pods), + 1 s; not checked once the shutdown was cancelled or the kubelet crashed",
        source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (KEP 2712)",
        profiles: ALL,
    },
    Invariant {
        name: "liveness-failure-kills",
        id: "L11",
        kind: Kind::Liveness,
        meaning: "a running container whose liveness or startup probe result turned Failure is killed, when its pod is not terminating",
        bound: "60 s after the Failure result (or after the SyncPod in flight then ended, or the kubelet last started), + 20 s per failed sync or CRI call of the pod since (the spec's syncLoop dispatch + R + kill); not checked once termination was requested or the deletion seen",
        source: "pkg/kubelet/kubelet.go syncLoopIteration (liveness/startup manager updates), kuberuntime/kuberuntime_manager.go computePodActions",
        profiles: ALL,
    },
    Invariant {
        name: "not-ready-after-shutdown-start",
        id: "C13",
        kind: Kind::Liveness,
        meaning: "once a graceful node shutdown starts, the kubelet reports the node NotReady promptly",
        bound: "10 s (nodeStatusUpdateFrequency; v1.31 syncs the node status at once) after PrepareForShutdown(true), checked up to the power-off; not checked once the shutdown was cancelled or the kubelet crashed",
        source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (setNodeShutdownStatus, syncNodeStatus), kubelet_node_status.go; race catalog checklist 13",
        profiles: ALL,
    },
    Invariant {
        name: "api-writes-carry-uid",
        id: "C14",
        kind: Kind::Safety,
        meaning: "every status the kubelet writes to a pod object is that object's own (by UID): no container ID in it is one of another UID's containers (for a mirror pod: its static pod's), so a status computed for another UID of the same name never lands; the final DELETE is checked per UID by delete-only-after-reclamation",
        bound: "",
        source: "pkg/kubelet/status/status_manager.go syncPod (UID check before the PATCH; DELETE with a UID precondition), pkg/util/pod/pod.go PatchPodStatus; race catalog checklist 14",
        profiles: ALL,
    },
];

/// The invariant named `name`.
pub fn by_name(name: &str) -> Option<&'static Invariant> {
    INVARIANTS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_with_unique_kebab_names() {
        assert_eq!(*Inv::ALL.last().unwrap() as usize + 1, INVARIANTS.len());
        assert_eq!(Inv::ALL.len(), INVARIANTS.len());
        for (k, i) in Inv::ALL.iter().enumerate() {
            assert_eq!(*i as usize, k);
        }
        assert_eq!(Inv::StatusBeforeStop.name(), "status-before-stop");
        assert_eq!(
            Inv::FinalContainerStatusFidelity.name(),
            "final-container-status-fidelity"
        );
        let mut names: Vec<&str> = INVARIANTS.iter().map(|i| i.name).collect();
        for n in &names {
            assert!(
                n.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    && !n.starts_with('-')
                    && !n.ends_with('-')
                    && !n.contains("--"),
                "{n} is not kebab-case"
            );
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INVARIANTS.len());
        for i in INVARIANTS {
            // On current, unless no release holds it (an open upstream bug).
            assert!(
                i.profiles.contains(&"current") || i.profiles.is_empty(),
                "{} not on current",
                i.name
            );
            assert!(i.profiles.iter().all(|p| ALL.contains(p)));
            assert_eq!(i.kind == Kind::Liveness, !i.bound.is_empty(), "{}", i.name);
            assert!(i.invariants_len_ok());
        }
    }

    impl Invariant {
        fn invariants_len_ok(&self) -> bool {
            !self.meaning.is_empty() && !self.source.is_empty() && INVARIANTS.len() < 64
        }
    }
}
