//! Reach points: rare states a run can get into, the windows lifecycle races need.
//!
//! Kubelet and world code mark a point when the state happens (`Ctx::reach`); a run
//! reports the points it reached (`reached` in `--json`, counts per point in a sweep's
//! summary), and a race scenario declares in `spec.expect.reach` the points it exists to
//! reach, so a scenario whose window silently closes fails its test. Marking a point never
//! changes the run: it is not part of the trace or its hash.

/// Every reach point, by position in [`REACH`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reach {
    KillDuringImagePull,
    DeleteBeforeContainersStarted,
    CriErrorWhileTerminating,
    ShutdownDeadlineWithKillsInFlight,
    StaticPodWaitsForFullName,
    CreateForTerminatingUid,
    KillOfUnstartedPod,
    EvictionKill,
    TerminalPodSeenAfterRestart,
    RejectedAfterRestart,
    ForceDeleteWhileRunning,
    ProbeWhileTerminating,
    GraceShortened,
    SameNamePodsOverlap,
    PlegInspectionFailed,
    RuntimeOnlyPodKilled,
    DeleteDuringKubeletDowntime,
    TerminalPhaseWhileSyncing,
    TerminatePodWithUnterminatedContainer,
    RelistSpansSyncEnd,
    StaticPodStartedBesideRuntimePod,
    KillWithZeroGraceOverride,
    DeleteWhileRestartingContainer,
    TerminatingPodVolumesAfterRestart,
    ShutdownKill,
    SidecarKilledWithApp,
    InitContainerRemovedBesideApp,
    DeleteDuringPostStart,
    ImageGcWhileContainerAwaitsImage,
    DiskReclaimWithEvictedPodContainers,
    EvictedPodContainerDied,
}

/// One reach point: its stable kebab-case name and what it means.
#[derive(Clone, Copy, Debug)]
pub struct Point {
    pub reach: Reach,
    pub name: &'static str,
    pub meaning: &'static str,
}

/// The table, in [`Reach`] order.
pub const REACH: &[Point] = &[
    Point { reach: Reach::KillDuringImagePull, name: "kill-during-image-pull", meaning: "termination was requested while one of the pod's images was being pulled" },
    Point { reach: Reach::DeleteBeforeContainersStarted, name: "delete-before-containers-started", meaning: "an API delete reached the kubelet before every container of the pod had started" },
    Point { reach: Reach::CriErrorWhileTerminating, name: "cri-error-while-terminating", meaning: "a CRI call made to stop a pod failed" },
    Point { reach: Reach::ShutdownDeadlineWithKillsInFlight, name: "shutdown-deadline-with-kills-in-flight", meaning: "a node-shutdown priority group's deadline passed with kills of that group still in flight" },
    Point { reach: Reach::StaticPodWaitsForFullName, name: "static-pod-waits-for-full-name", meaning: "a static pod could not start because another UID with its full name was started" },
    Point { reach: Reach::CreateForTerminatingUid, name: "create-for-terminating-uid", meaning: "a create arrived for a UID whose termination was already requested" },
    Point { reach: Reach::KillOfUnstartedPod, name: "kill-of-unstarted-pod", meaning: "termination was requested for a pod whose worker had not started it" },
    Point { reach: Reach::EvictionKill, name: "eviction-kill", meaning: "the eviction manager killed a pod" },
    Point { reach: Reach::TerminalPodSeenAfterRestart, name: "terminal-pod-seen-after-restart", meaning: "a restarted kubelet saw a pod whose API phase was already terminal" },
    Point { reach: Reach::RejectedAfterRestart, name: "rejected-after-restart", meaning: "a restarted kubelet rejected a pod at admission" },
    Point { reach: Reach::ForceDeleteWhileRunning, name: "force-delete-while-running", meaning: "a pod was removed from the API (grace 0) while its containers ran" },
    Point { reach: Reach::ProbeWhileTerminating, name: "probe-while-terminating", meaning: "a probe ran for a pod whose termination was requested" },
    Point { reach: Reach::GraceShortened, name: "grace-shortened", meaning: "a pod's effective grace period was shortened while it was terminating" },
    Point { reach: Reach::SameNamePodsOverlap, name: "same-name-pods-overlap", meaning: "two UIDs with one full name were known to the pod workers at once" },
    Point { reach: Reach::PlegInspectionFailed, name: "pleg-inspection-failed", meaning: "a PLEG relist could not inspect a pod" },
    Point { reach: Reach::RuntimeOnlyPodKilled, name: "runtime-only-pod-killed", meaning: "housekeeping killed a pod known only from the runtime" },
    Point { reach: Reach::DeleteDuringKubeletDowntime, name: "delete-during-kubelet-downtime", meaning: "a pod was deleted in the API while the kubelet was down" },
    Point { reach: Reach::TerminalPhaseWhileSyncing, name: "terminal-phase-while-syncing", meaning: "SyncPod computed a terminal phase for a pod whose worker had not started terminating it" },
    Point { reach: Reach::TerminatePodWithUnterminatedContainer, name: "terminate-pod-with-unterminated-container", meaning: "TerminatePod found a container status that was not terminated (an exit the kubelet never observed)" },
    Point { reach: Reach::RelistSpansSyncEnd, name: "relist-spans-sync-end", meaning: "a PLEG relist that started before a pod's SyncPod ended inspected the pod after it ended" },
    Point { reach: Reach::StaticPodStartedBesideRuntimePod, name: "static-pod-started-beside-runtime-pod", meaning: "a static pod started while the runtime ran containers of another UID with its full name (after a kubelet restart: a runtime-only pod)" },
    Point { reach: Reach::KillWithZeroGraceOverride, name: "kill-with-zero-grace-override", meaning: "the pod worker was asked to kill a pod with an explicit grace override of 0 or 1 (an immediate eviction: 0 before PR 124063, 1 from v1.31)" },
    Point { reach: Reach::DeleteWhileRestartingContainer, name: "delete-while-restarting-container", meaning: "an API delete reached the kubelet while a SyncPod was restarting a container of the pod that had exited" },
    Point { reach: Reach::TerminatingPodVolumesAfterRestart, name: "terminating-pod-volumes-after-restart", meaning: "after a kubelet restart the volume manager's desired state populator decided on reconstructed volumes of a pod whose termination was requested while its containers could still run" },
    Point { reach: Reach::ShutdownKill, name: "shutdown-kill", meaning: "the graceful node shutdown manager killed a pod" },
    Point { reach: Reach::SidecarKilledWithApp, name: "sidecar-killed-with-app", meaning: "a pod kill stopped a native sidecar and a regular container of the pod that both still ran" },
    Point { reach: Reach::InitContainerRemovedBesideApp, name: "init-container-removed-beside-app", meaning: "the container garbage collector removed an exited classic init container of a pod whose regular container was running" },
    Point { reach: Reach::DeleteDuringPostStart, name: "delete-during-poststart", meaning: "termination was requested while the pod's SyncPod waited on a postStart hook" },
    Point { reach: Reach::ImageGcWhileContainerAwaitsImage, name: "image-gc-while-container-awaits-image", meaning: "the image garbage collector (periodic, or the eviction manager's DeleteUnusedImages) chose images while a SyncPod had its image pulled and its container's creation in flight" },
    Point { reach: Reach::DiskReclaimWithEvictedPodContainers, name: "disk-reclaim-with-evicted-pod-containers", meaning: "the eviction manager's node-level reclaim for a disk signal started while dead containers of a pod evicted earlier were still on the node" },
    Point { reach: Reach::EvictedPodContainerDied, name: "evicted-pod-container-died", meaning: "a container of a pod the pod workers know as evicted died, and the container deletor decided whether to remove the pod's dead containers" },
];

/// The point named `name`.
pub fn by_name(name: &str) -> Option<&'static Point> {
    REACH.iter().find(|p| p.name == name)
}

/// The names of the points set in `bits`, in table order.
pub fn names(bits: u64) -> Vec<String> {
    REACH
        .iter()
        .filter(|p| bits & (1 << p.reach as u32) != 0)
        .map(|p| p.name.to_owned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_in_enum_order() {
        assert!(REACH.len() <= 64);
        for (i, p) in REACH.iter().enumerate() {
            assert_eq!(p.reach as usize, i, "{}", p.name);
            assert_eq!(REACH.iter().filter(|q| q.name == p.name).count(), 1);
        }
        assert_eq!(
            names(0b101),
            vec!["kill-during-image-pull", "cri-error-while-terminating"]
        );
    }
}
