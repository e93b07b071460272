//! Behaviour profiles and behaviour switches.
//!
//! A *switch* stands for one upstream change to the kubelet's pod-lifecycle logic and is
//! named after what that change does; `true` means the change is in (the newer behaviour),
//! `false` re-creates the behaviour from before it. A *profile* is a release
//! ([`super::release::RELEASES`]: `v1.21` ... `v1.31`, each its `.0` as upstream shipped
//! it; `current` is another name of the newest) and is the set of switch values that
//! release had, derived from each switch's `since` (the first release with the change) and
//! `absent` (releases after it that regressed). A scenario picks a profile
//! (`spec.kubelet.profile`) and may override single switches
//! (`spec.kubelet.behaviours: {name: bool}`, or `--set spec.kubelet.behaviours.NAME=false` on
//! the command line).
//!
//! * `v1.21`: the last release before the pod-worker state machine (PR 102344).
//! * `v1.22`: v1.22.0, the first release with the state machine and its regressions.
//! * `v1.23`, `v1.25`, `v1.27`, `v1.29`, `v1.31`: those `.0` releases (a change merged for
//!   v1.24 or v1.28 is on from the next profile).
//! * `current`: `v1.31`, the release [`super::UPSTREAM_RELEASE`] the port follows.
//!
//! Each switch row cites the number of the race in podsim's own race catalogue whose old
//! behaviour it restores, and the upstream issue and PR. The numbers are the ids of
//! podsim's bundled race scenarios under `scenarios/races/` (each scenario's description
//! opens with "Race catalog N"), not a pointer to any other document; the eviction,
//! prober and node shutdown modules cite the same ids. A switch that upstream has not made
//! (an open upstream bug, with the change a fix would make) is on in no profile.
//!
//! A row with `built: false` is declared but its old behaviour is not modelled yet: the
//! switch cannot be set to `false` in a scenario (validation says so), and every profile
//! runs it as `true`.

use super::release;
use std::collections::BTreeMap;

/// Every behaviour switch, by position in [`SWITCHES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Sw {
    PodWorkerOwnsLifecycle,
    KillPodMarksPendingAtOnce,
    HousekeepingSkipsPodsBeingKilled,
    TerminalPhaseKept,
    TerminalPhaseAfterTermination,
    UnknownExitCodeIs137,
    StaticPodFullNameGate,
    PodWorkerHandlesUidReuse,
    UnstartedPodsDoNotBlockStart,
    ShutdownSetsFailedPhase,
    ShutdownCancelsKillsAtGroupDeadline,
    StopProbesAtTermination,
    OrphanedPodsDrivenToCompletion,
    TerminalPodsTerminatedOnFirstSight,
    DeletionUsesLocalPhase,
    GraceOverrideZeroHonoured,
    EvictionWaitsForReclaim,
    SecretConfigMapRegisteredPerUid,
    VolumesKeptForTerminatingPodsAcrossRestart,
    FullNameGateCountsRuntimePods,
    PlegTimestampBeforeList,
    PlegReinspectsFailedPods,
    ReadyToStartContainersCondition,
    DisruptionTargetCondition,
    SidecarsStopAfterMainContainers,
    HardEvictionGraceOne,
    InitContainersNotRerunAfterAppStart,
    PostStartCancelledByDeletion,
    PodDeletedOnlyWhenTerminal,
    ShutdownKillsByPriorityGroups,
    GraceOverrideBeforePreStop,
    ProbeTerminationGracePeriod,
    ShutdownRemovesProbesBeforeKill,
    ImageGcSparesNewImages,
    EvictedPodContainersRemoved,
}

/// One switch.
#[derive(Clone, Copy, Debug)]
pub struct Switch {
    pub(crate) sw: Sw,
    /// camelCase name used in scenarios, `--json` and `podsim bisect`.
    pub name: &'static str,
    /// Race catalogue ids (see the module doc) whose old behaviour `false` restores.
    pub entries: &'static [u32],
    /// Upstream issue(s) and PR(s).
    pub refs: &'static str,
    /// One line: what `true` does, and what `false` restores.
    pub meaning: &'static str,
    /// The first release with the change: a release name (`v1.NN`, which may fall between
    /// two profiles: a profile is the `.0` of its release), [`EARLIER`] for a change older
    /// than every profile, or [`NONE`] for a change no release has made.
    pub since: &'static str,
    /// Releases after `since` that did not have the change (a regression and its fix):
    /// `(from, to)` is off from `from` up to before `to`; `to` [`NONE`] means never again.
    pub absent: &'static [(&'static str, &'static str)],
    /// Whether `false` is modelled.
    pub built: bool,
}

/// Every profile, oldest first: the releases podsim models, then `current`.
pub const PROFILES: [&str; 8] = [
    "v1.21", "v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31", "current",
];

/// Other names a profile may be given (alias, release): `current` is another name of the
/// newest release. An alias is accepted wherever a profile is named; outputs keep the
/// name the user gave (a run on `current` says `current`, with its release beside it), and
/// a sweep or bisect treats the alias and its release as one point.
pub const PROFILE_ALIASES: [(&str, &str); 1] = [("current", super::release::NEWEST)];

/// `since` of a change older than every profile (before v1.21).
pub const EARLIER: &str = "<v1.21";
/// `since` of a change no release has made (an open upstream bug and the fix it asks for),
/// and the end of an `absent` range that never ends.
pub const NONE: &str = "none";

/// The switch table, in `Sw` order.
pub const SWITCHES: &[Switch] = &[
    Switch {
        sw: Sw::PodWorkerOwnsLifecycle,
        name: "podWorkerOwnsLifecycle",
        entries: &[1, 13],
        refs: "issue 102149, PR 102344 (merged for v1.22.0)",
        meaning: "every kill goes through the pod worker's state machine; false: the v1.21 design (dispatchWork's terminal shortcut, a separate pod killer, workers forgotten when the pod leaves config)",
        since: "v1.22",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::KillPodMarksPendingAtOnce,
        name: "killPodMarksPendingAtOnce",
        entries: &[11],
        refs: "issue 98953, PR 98956 (v1.21.0; v1.21 design only)",
        meaning: "(v1.21 design) the pod killer marks a pod pending termination before it queues the kill; false: only when its goroutine dequeues it",
        since: "v1.21",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::HousekeepingSkipsPodsBeingKilled,
        name: "housekeepingSkipsPodsBeingKilled",
        entries: &[12],
        refs: "issue 98142, PRs 98424, 101524 (v1.21 design only; kept as the v1.21 profile had it)",
        meaning: "(v1.21 design) orphan cgroup and volume cleanup skips pods the pod killer is still killing; false: tears them down",
        since: "v1.21",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::TerminalPhaseKept,
        name: "terminalPhaseKept",
        entries: &[2],
        refs: "issue 105358, PR 105462 (v1.23.0 CHANGELOG: terminated pods no longer revert to Running; the v1.22.0 regression came with PR 102344)",
        meaning: "a newly generated status keeps a terminal phase the status manager already holds; false: it is recomputed from containers (Failed can go back to Running)",
        since: EARLIER,
        absent: &[("v1.22", "v1.23")],
        built: true,
    },
    Switch {
        sw: Sw::TerminalPhaseAfterTermination,
        name: "terminalPhaseAfterTermination",
        entries: &[3],
        refs: "issues 106884, 108733, PR 108366 (merged March 2022: v1.24.0; the getPhase part of PR 115331 is podDeletedOnlyWhenTerminal)",
        meaning: "a terminal phase is written only once the pod worker says no container can run, and SyncPod reports a terminal pod to its worker; false (before v1.24): the phase is written as soon as it is computed, and the worker learns of it only from a later update carrying the API phase",
        since: "v1.24",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::UnknownExitCodeIs137,
        name: "unknownExitCodeIs137",
        entries: &[4],
        refs: "issue 58711, PR 88440 (v1.19)",
        meaning: "TerminatePod reports a container whose exit was not observed as ContainerStatusUnknown/137; false: it rewrites every container status (observed exits too) to terminated with exit code 0, as before PR 88440",
        since: EARLIER,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::StaticPodFullNameGate,
        name: "staticPodFullNameGate",
        entries: &[5],
        refs: "issue 97722, PR 104743 (opened 2021-09, after v1.22.0: v1.23.0)",
        meaning: "a static pod starts only when no other UID with its full name is started (FIFO wait); false: UIDs with one full name run side by side",
        since: "v1.23",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::PodWorkerHandlesUidReuse,
        name: "podWorkerHandlesUidReuse",
        entries: &[6],
        refs: "issue 104648, PR 104847 (merged September 2021: v1.23.0, cherry-picked to v1.22.x only after v1.22.0)",
        meaning: "a create for a UID that is terminating asks for a restart once it finishes; false: a UID terminated once never starts again",
        since: EARLIER,
        absent: &[("v1.22", "v1.23")],
        built: true,
    },
    Switch {
        sw: Sw::UnstartedPodsDoNotBlockStart,
        name: "unstartedPodsDoNotBlockStart",
        entries: &[7],
        refs: "issue 107733, PRs 107695, 107900 (merged early 2022: v1.24.0; v1.23.0 shipped the full-name gate with the bug; v1.21 and v1.22 have no gate, the value has no effect there)",
        meaning: "static pods terminated before they started leave the full-name wait queue; false: they block later UIDs of the same name",
        since: "v1.24",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::ShutdownSetsFailedPhase,
        name: "shutdownSetsFailedPhase",
        entries: &[8],
        refs: "issue 104531, PRs 106899, 106900, 106901 (master and the 1.22/1.23 cherry-picks, merged 2021-12-09, after v1.23.0 of 2021-12-07: the first .0 with it is v1.24.0)",
        meaning: "pods killed by graceful node shutdown get phase Failed unless Succeeded; false: only reason and message are set, the phase is recomputed from the containers (the v1.22 regression)",
        since: EARLIER,
        absent: &[("v1.22", "v1.24")],
        built: true,
    },
    Switch {
        sw: Sw::ShutdownCancelsKillsAtGroupDeadline,
        name: "shutdownCancelsKillsAtGroupDeadline",
        entries: &[9],
        refs: "issues 108040, 109531, 110755, PR 108193",
        meaning: "at a priority group's deadline the shutdown manager ends the group's kills still in flight and waits for them before the next group or the lock release (on in no release: v1.31 and later only cancel the volume-unmount wait); false: it moves on while they keep running",
        since: NONE,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::StopProbesAtTermination,
        name: "stopProbesAtTermination",
        entries: &[10],
        refs: "issues 105014, 110309, PRs 98571, 110191 (v1.25.0 CHANGELOG: pods post their readiness during termination; PR 110191 also made the pod worker stop liveness probes, see PR 107514's closing note)",
        meaning: "the pod worker owns probes: liveness/startup stop when termination starts, readiness runs until containers stop, all removed after the kill; false: probes follow the pod's config (added at ADD, all removed when a deletion is handled and at REMOVE, else by housekeeping), so liveness keeps probing through a kill and readiness stops at deletion",
        since: "v1.25",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::OrphanedPodsDrivenToCompletion,
        name: "orphanedPodsDrivenToCompletion",
        entries: &[15],
        refs: "PR 113145 (v1.27.0), issue 116544; v1.21's pod killer retried the kill from housekeeping",
        meaning: "housekeeping drives workers of pods gone from config to completion, retrying failed kills; false: a failed kill of a force-deleted pod is never retried",
        since: EARLIER,
        absent: &[("v1.22", "v1.27")],
        built: true,
    },
    Switch {
        sw: Sw::TerminalPodsTerminatedOnFirstSight,
        name: "terminalPodsTerminatedOnFirstSight",
        entries: &[16],
        refs: "issue 105523, PR 105527 (opened 2021-10, after v1.22.0: v1.23.0)",
        meaning: "a pod first seen with a terminal API phase and nothing running is terminated at once (not counted by admission); false: it counts until its worker finishes",
        since: EARLIER,
        absent: &[("v1.22", "v1.23")],
        built: true,
    },
    Switch {
        sw: Sw::DeletionUsesLocalPhase,
        name: "deletionUsesLocalPhase",
        entries: &[17],
        refs: "issue 118472, PR 118497 (v1.28.0); filterTerminalPodsToDelete does not exist before it, but before PR 115331 (v1.27) the deletion rule needs no terminal phase, so the stuck pod cannot occur and the switch is read as on",
        meaning: "housekeeping hands deleted terminal pods that no worker knows and nothing of which runs to the pod workers as a kill (filterTerminalPodsToDelete), so they finish and the status manager deletes them; false: nothing does, and a pod rejected at admission after a restart stays Terminating (the PR's first draft changed canBeDeleted to the local phase instead)",
        since: EARLIER,
        absent: &[("v1.27", "v1.28")],
        built: true,
    },
    Switch {
        sw: Sw::GraceOverrideZeroHonoured,
        name: "graceOverrideZeroHonoured",
        entries: &[20],
        refs: "issues 115819, 120449, 113717; not fixed in v1.31 (PR 124063 only changed the eviction manager's override to 1, see hardEvictionGraceOne; PRs 119570, 120451 closed)",
        meaning: "an explicit grace of 0 (eviction override, force delete) means 1 s (the v1.21 kill path; later master releases track that a value was given); false: v1.22 to v1.31's calculateEffectiveGracePeriod takes 0 as unset and the spec's grace is used",
        since: EARLIER,
        absent: &[("v1.22", NONE)],
        built: true,
    },
    Switch {
        sw: Sw::EvictionWaitsForReclaim,
        name: "evictionWaitsForReclaim",
        entries: &[21],
        refs: "issues 40474, 43166, PRs 43590, 50350",
        meaning: "after an eviction the eviction manager waits (bounded) until the pod's resources are reclaimed; false: it decides again a monitoring period after the kill returned, and evicts again while the pod still holds its memory",
        since: EARLIER,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::SecretConfigMapRegisteredPerUid,
        name: "secretConfigMapRegisteredPerUid",
        entries: &[23],
        refs: "issue 105204 (a v1.22.0 regression of PR 102344), PRs 107821, 107831 (opened 2022-01, after v1.23.0: v1.24.0)",
        meaning: "configmap/secret references are registered in SyncPod and unregistered in SyncTerminatedPod, keyed by UID; false: keyed by namespace/name (a same-name predecessor unregisters the successor's)",
        since: EARLIER,
        absent: &[("v1.22", "v1.24")],
        built: true,
    },
    Switch {
        sw: Sw::VolumesKeptForTerminatingPodsAcrossRestart,
        name: "volumesKeptForTerminatingPodsAcrossRestart",
        entries: &[24],
        refs: "issues 113979, 114047, 103651, 75345, 120150; PR 114326 (v1.27.0, cherry-picked to 1.24-1.26 patch releases as 114733, 114732, 114730: not in any .0 before v1.27)",
        meaning: "until the desired state of world populator has added the pods after a kubelet restart, it skips only pods whose runtime may be removed, so a terminating pod whose containers may still run keeps its reconstructed volumes; false (v1.22 to v1.26.0): it skips every pod whose termination the pod worker has started, and the reconciler unmounts the reconstructed volumes under the still-running containers",
        since: EARLIER,
        absent: &[("v1.22", "v1.27")],
        built: true,
    },
    Switch {
        sw: Sw::FullNameGateCountsRuntimePods,
        name: "fullNameGateCountsRuntimePods",
        entries: &[27],
        refs: "issues 112814, 116880, 15195, PR 105547 (closed)",
        meaning: "the static full-name gate also counts runtime-only containers of the same full name, across a restart; false: only UIDs this kubelet process started",
        since: NONE,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::PlegTimestampBeforeList,
        name: "plegTimestampBeforeList",
        entries: &[29],
        refs: "issue 137724, PRs 137471, 138024",
        meaning: "the PLEG takes a pod's cache timestamp before its sandboxes and containers are listed (v1.31 updateCache, and master since PR 138024); false: after (master between PRs 137471 and 138024), so a status can claim a freshness it does not have",
        since: EARLIER,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::PlegReinspectsFailedPods,
        name: "plegReinspectsFailedPods",
        entries: &[29],
        refs: "issues 23636, 24819, PRs 22155, 25077",
        meaning: "the PLEG re-inspects pods whose inspection failed and updates records of pods that disappeared; false: a failed or missed inspection leaves the cache stale",
        since: EARLIER,
        absent: &[],
        built: false,
    },
    Switch {
        sw: Sw::ReadyToStartContainersCondition,
        name: "readyToStartContainersCondition",
        entries: &[],
        refs: "KEP 3085, feature gate PodReadyToStartContainersCondition (alpha v1.28 as PodHasNetworkCondition renamed, beta and on by default since v1.29)",
        meaning: "the kubelet writes the PodReadyToStartContainers condition (True once the pod has a ready sandbox); false: it writes no such condition",
        since: "v1.29",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::DisruptionTargetCondition,
        name: "disruptionTargetCondition",
        entries: &[],
        refs: "KEP 3329, feature gate PodDisruptionConditions (alpha v1.25, beta and on by default since v1.26; GA in v1.31)",
        meaning: "a pod the eviction manager or the node shutdown manager kills gets the condition DisruptionTarget=True (reason TerminationByKubelet), sent with its terminal phase; false: no DisruptionTarget",
        since: "v1.26",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::SidecarsStopAfterMainContainers,
        name: "sidecarsStopAfterMainContainers",
        entries: &[30],
        refs: "KEP 753, PR 120620 (v1.29.0)",
        meaning: "a pod kill stops native sidecars only after every regular container stopped, in reverse order of declaration (each waits at most its grace); false: sidecars are stopped in parallel with the regular containers, as in v1.28 (the profiles before v1.28 had no sidecars and run them so)",
        since: "v1.29",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::HardEvictionGraceOne,
        name: "hardEvictionGraceOne",
        entries: &[20],
        refs: "issue 115819, PR 124063 (v1.31.0)",
        meaning: "a hard eviction (and a pod over its ephemeral-storage limit) asks the pod worker for a grace of 1 s; false: it asks for 0, which the pod worker reads as unset unless graceOverrideZeroHonoured, so the spec's grace is used",
        since: "v1.31",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::InitContainersNotRerunAfterAppStart,
        name: "initContainersNotRerunAfterAppStart",
        entries: &[31],
        refs: "issues 62362, 90271, PR 96572 (v1.20)",
        meaning: "once a regular container of the pod was created or runs in the sandbox, the pod counts as initialized and classic init containers are not run again, even when their exited instances were removed; false: init containers the container garbage collector removed run again beside the running app containers (before v1.20)",
        since: EARLIER,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::PostStartCancelledByDeletion,
        name: "postStartCancelledByDeletion",
        entries: &[32],
        refs: "issue 116032 (open; PR 119149 closed)",
        meaning: "a termination request cancels the SyncPod in flight when it waits on a postStart hook (or is about to run one): the hook is abandoned, SyncPod returns at once with a context error and SyncTerminatingPod stops the container within the grace (on in no release: the fix the issue asks for); false: SyncPod's runtime part runs on a context without cancel, so the kill waits until the hook returns, however long past the grace",
        since: NONE,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::PodDeletedOnlyWhenTerminal,
        name: "podDeletedOnlyWhenTerminal",
        entries: &[],
        refs: "PR 115331 (v1.27.0): TerminatePod's terminal phase, canBeDeleted's wait, and getPhase's podIsTerminal",
        meaning: "TerminatePod gives a pod that is not static and not yet terminal the phase Failed, getPhase knows a pod at the end of its termination is terminal (a stopped RestartPolicy Always pod is Failed, not Running), and the status manager deletes a pod object only once its API phase is terminal and its termination finished; false (v1.22 to v1.26): TerminatePod keeps the phase, getPhase has no podIsTerminal, and canBeDeleted asks only PodResourcesAreReclaimed (the pod worker says no container can run, no container running in the status, volumes unmounted, pod cgroup gone), so a deleted RestartPolicy Always pod leaves the API with phase Running (v1.21's own rule, see podWorkerOwnsLifecycle, never forced a phase either)",
        since: "v1.27",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::ShutdownKillsByPriorityGroups,
        name: "shutdownKillsByPriorityGroups",
        entries: &[],
        refs: "KEP 2712, PR 102915 (v1.23.0: processShutdownEvent groups by priority always, migrateConfig turns shutdownGracePeriod/shutdownGracePeriodCriticalPods into two groups; the GracefulNodeShutdownBasedOnPodPriority gate, alpha in v1.23 and on by default since v1.24, only lets shutdownGracePeriodByPodPriority through)",
        meaning: "graceful node shutdown kills the pods group by group in ascending priority (without shutdownGracePeriodByPodPriority: a default group with the non-critical period, then system-critical priority with the critical period), each group ending when its kills returned or its period passed; false (v1.21, v1.22): two classes started together, the non-critical pods killed at once with the non-critical period, the critical ones (static, mirror or system-critical priority) only after a fixed wait of that period with the critical period, and the inhibitor lock released once every kill returned or shutdownGracePeriod passed; shutdownGracePeriodByPodPriority is an error",
        since: "v1.23",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::GraceOverrideBeforePreStop,
        name: "graceOverrideBeforePreStop",
        entries: &[],
        refs: "issues 115817, 117373, PR 115835 (v1.28.0)",
        meaning: "killContainer applies the kill's grace override before the preStop hook, so hook and stop share one grace; false (before v1.28): the hook runs with the pod's own grace (deletion grace, spec or probe grace), and after it the override replaces what is left (also after the 2 s minimum, so an override of 1 s stops with 1 s): a preStop hook plus the stop can take up to twice the grace",
        since: "v1.28",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::ProbeTerminationGracePeriod,
        name: "probeTerminationGracePeriod",
        entries: &[],
        refs: "KEP 2238, feature gate ProbeTerminationGracePeriod (alpha v1.21, beta off by default v1.22 to v1.24, on by default since v1.25)",
        meaning: "a container killed for a failed liveness or startup probe gets that probe's own terminationGracePeriodSeconds when it sets one; false (gate off, before v1.25): the probe's value is ignored and the pod's grace is used",
        since: "v1.25",
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::ShutdownRemovesProbesBeforeKill,
        name: "shutdownRemovesProbesBeforeKill",
        entries: &[],
        refs: "PR 105215 (merged 2021-09: v1.23.0, after v1.22.0; cherry-picked to 1.22.x), removed again by PR 110191 (v1.25.0: the pod worker owns the probes; v1.31's processShutdownEvent has no RemovePod)",
        meaning: "the graceful node shutdown manager calls the probe manager's RemovePod for each pod just before its kill, so readiness stops at once; false: the probes follow the pod worker (or the pod's config, before v1.25)",
        since: "v1.23",
        absent: &[("v1.25", NONE)],
        built: true,
    },
    Switch {
        sw: Sw::ImageGcSparesNewImages,
        name: "imageGcSparesNewImages",
        entries: &[33],
        refs: "issue 18140, PRs 18151 (closed, split into 18820), 18820, 20063 (v1.2); issue 123631 is the part still open",
        meaning: "the image garbage collector (periodic and the eviction manager's DeleteUnusedImages) skips an image first detected less than imageMinimumGCAge ago, so an image just pulled for a container not yet created is kept; false (before v1.2): every unused image may go, and the container's creation then fails with image not found and the image is pulled again",
        since: EARLIER,
        absent: &[],
        built: true,
    },
    Switch {
        sw: Sw::EvictedPodContainersRemoved,
        name: "evictedPodContainersRemoved",
        entries: &[35],
        refs: "issue 29803, PR 45896 (v1.7)",
        meaning: "the dead containers of an evicted pod may be removed before its API object is deleted (ShouldPodContentBeRemoved counts eviction), and the eviction manager's reclaim for a disk signal deletes every dead container of terminated pods before the unused images; false (before v1.7): container GC removes all of a pod's containers only once the pod is deleted, and the reclaim deletes unused images only, so an evicted pod's writable layers and logs keep their disk",
        since: EARLIER,
        absent: &[],
        built: true,
    },
];

impl Switch {
    /// Whether the switch is on in `profile` (a release, or `current`; an unknown name is
    /// read as the newest release): derived from `since` and `absent`. A switch whose old
    /// behaviour is not built is on everywhere.
    pub fn on_in(&self, profile: &str) -> bool {
        if !self.built {
            return true;
        }
        let r = release::minor(profile).unwrap_or_else(newest_minor);
        let at = |name: &str| match name {
            EARLIER => 0,
            NONE => u32::MAX,
            n => release::minor(n).expect("a release name in the switch table"),
        };
        r >= at(self.since)
            && !self
                .absent
                .iter()
                .any(|(from, to)| r >= at(from) && r < at(to))
    }

    /// The releases (profiles but `current`) the switch is on in, oldest first.
    pub fn on_releases(&self) -> Vec<&'static str> {
        release::RELEASES
            .iter()
            .copied()
            .filter(|r| self.on_in(r))
            .collect()
    }
}

fn newest_minor() -> u32 {
    release::minor(release::NEWEST).expect("NEWEST is a release")
}

/// The release a profile name stands for (`current` is the newest; an unknown name too).
pub fn release_of(profile: &str) -> &'static str {
    release::RELEASES
        .iter()
        .copied()
        .find(|r| *r == profile)
        .unwrap_or(release::NEWEST)
}

/// The switch named `name`.
pub(crate) fn by_name(name: &str) -> Option<&'static Switch> {
    SWITCHES.iter().find(|s| s.name == name)
}

/// The resolved switch values of one run: a bit per switch, set when the switch is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Behaviours(u64);

impl Default for Behaviours {
    /// Every switch on: the `current` profile when every switch it has is on.
    fn default() -> Self {
        Behaviours::profile("current")
    }
}

impl Behaviours {
    /// The switch values of `profile` (an unknown name gives `current`'s). A switch whose
    /// old behaviour is not built is on everywhere.
    pub(crate) fn profile(profile: &str) -> Self {
        let mut bits = 0u64;
        for (i, s) in SWITCHES.iter().enumerate() {
            if s.on_in(profile) {
                bits |= 1 << i;
            }
        }
        Behaviours(bits)
    }

    /// `profile` with the scenario's overrides applied (unknown names are ignored here;
    /// validation rejects them).
    pub(crate) fn resolve(profile: &str, overrides: &BTreeMap<String, bool>) -> Self {
        let mut b = Behaviours::profile(profile);
        for (name, &v) in overrides {
            if let Some(s) = by_name(name) {
                b.set(s.sw, v);
            }
        }
        b
    }

    /// Whether switch `sw` is on.
    #[inline]
    pub(crate) fn on(self, sw: Sw) -> bool {
        self.0 & (1 << sw as u32) != 0
    }

    pub(crate) fn set(&mut self, sw: Sw, v: bool) {
        if v {
            self.0 |= 1 << sw as u32;
        } else {
            self.0 &= !(1 << sw as u32);
        }
    }

    /// Every switch with its value, by name (for `--json`).
    pub(crate) fn to_map(self) -> BTreeMap<String, bool> {
        SWITCHES
            .iter()
            .map(|s| (s.name.to_owned(), self.on(s.sw)))
            .collect()
    }

    /// The switches whose value differs from `profile`'s, by name.
    pub(crate) fn diff(self, profile: &str) -> BTreeMap<String, bool> {
        let base = Behaviours::profile(profile);
        SWITCHES
            .iter()
            .filter(|s| self.on(s.sw) != base.on(s.sw))
            .map(|s| (s.name.to_owned(), self.on(s.sw)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_with_unique_names() {
        for (i, s) in SWITCHES.iter().enumerate() {
            assert_eq!(s.sw as usize, i, "{} out of order", s.name);
            assert_eq!(
                SWITCHES.iter().filter(|t| t.name == s.name).count(),
                1,
                "{} twice",
                s.name
            );
            let known = |n: &str| n == EARLIER || n == NONE || release::minor(n).is_some();
            assert!(known(s.since), "{}: since {}", s.name, s.since);
            for (from, to) in s.absent {
                assert!(release::minor(from).is_some() && known(to), "{}", s.name);
                assert!(
                    s.since != NONE,
                    "{}: absent from a change never made",
                    s.name
                );
            }
        }
        assert!(SWITCHES.len() <= 64);
    }

    #[test]
    fn values_follow_since_and_absent() {
        let on = |n: &str| by_name(n).unwrap().on_releases();
        // A regression and its fix: off on v1.22 only.
        assert_eq!(
            on("terminalPhaseKept"),
            ["v1.21", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31"]
        );
        // A fix that fell between two profiles (v1.24): on from the next profile.
        assert_eq!(
            on("shutdownSetsFailedPhase"),
            ["v1.21", "v1.25", "v1.27", "v1.29", "v1.31"]
        );
        // On in v1.21's design and since v1.27.
        assert_eq!(
            on("orphanedPodsDrivenToCompletion"),
            ["v1.21", "v1.27", "v1.29", "v1.31"]
        );
        // Gone after v1.21, never back.
        assert_eq!(on("graceOverrideZeroHonoured"), ["v1.21"]);
        assert!(on("postStartCancelledByDeletion").is_empty());
        assert_eq!(
            on("probeTerminationGracePeriod"),
            ["v1.25", "v1.27", "v1.29", "v1.31"]
        );
        // `current` is the newest release; the bits agree.
        assert_eq!(Behaviours::profile("current"), Behaviours::profile("v1.31"));
        assert_eq!(release_of("current"), "v1.31");
        assert_eq!(release_of("v1.23"), "v1.23");
    }

    #[test]
    fn every_profile_differs_from_its_neighbours() {
        let b: Vec<Behaviours> = release::RELEASES
            .iter()
            .map(|r| Behaviours::profile(r))
            .collect();
        for (w, r) in b.windows(2).zip(release::RELEASES.iter().skip(1)) {
            assert_ne!(
                w[0], w[1],
                "{r} has the same switch values as the release before"
            );
        }
    }

    #[test]
    fn overrides_apply_on_top_of_the_profile() {
        let mut o = BTreeMap::new();
        o.insert("stopProbesAtTermination".to_owned(), false);
        let b = Behaviours::resolve("current", &o);
        assert!(!b.on(Sw::StopProbesAtTermination));
        assert!(b.on(Sw::PlegReinspectsFailedPods));
        assert_eq!(b.diff("current"), o);
    }

    #[test]
    fn unbuilt_switches_are_on_in_every_profile() {
        for s in SWITCHES.iter().filter(|s| !s.built) {
            for p in PROFILES {
                assert!(Behaviours::profile(p).on(s.sw), "{} on {p}", s.name);
            }
        }
    }
}
