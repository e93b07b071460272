//! Kubelet restart: what a new kubelet process recovers before its loops start.
//!
//! Follows the start-up order of `pkg/kubelet/kubelet.go` `Run` and `syncLoop` (v1.31) and
//! the volume manager's reconstruction (`pkg/kubelet/volumemanager/reconciler/
//! reconstruct.go`, v1.31, `NewVolumeManagerReconstruction` GA). A restart is a crash of
//! the kubelet process followed, after a downtime, by a fresh process: every in-memory
//! structure is gone (pod workers, PLEG records and cache, status manager cache, pod
//! manager, crash-loop and image-pull back-off, reason cache, in-flight syncs, the volume
//! manager's actual state). The runtime, the API server and the node's disk survive. The
//! world side (dropping whatever was addressed to the dead process, reconnecting the
//! watch) is in `run.rs`; this file holds what the new kubelet does itself.
//!
//! The new process rebuilds in upstream's order:
//! 1. the volume manager reconstructs its actual state from the pods directory
//!    ([`Kubelet::reconstruct_volumes`]): pods whose volumes are mounted on disk count as
//!    mounted, so `SyncTerminatedPod` will unmount them and `SyncPod` does not mount again;
//! 2. the PLEG starts; its first relist has no previous view, so every existing container
//!    is new and every pod is inspected into the pod cache;
//! 3. the status manager and the sync loop tickers start; housekeeping waits until the API
//!    source has delivered its initial list (sources ready);
//! 4. the API watch delivers its initial LIST as ADDED events; the pod workers see every
//!    pod for the first time. A pod whose API phase is already terminal and whose cached
//!    runtime status shows nothing running is recorded as terminated at once (issue
//!    105523, `update_pod` step 2), so it is never started again. Before the first
//!    `SyncKnownPods`, `CouldHaveRunningContainers` is true for unknown pods;
//! 5. the volume manager's desired state of world populator runs every 100 ms
//!    ([`Kubelet::volume_populator_tick`], `pkg/kubelet/volumemanager/populator/
//!    desired_state_of_world_populator.go` `findAndAddNewPods`): each loop adds the volumes
//!    of the pods in the pod manager it does not skip; the first loop that started with
//!    sources ready sets `hasAddedPods`, and from then on the reconciler may unmount
//!    reconstructed volumes that are not in the desired state (`reconciler_new.go`
//!    `readyToUnmount`, `unmountVolumes`). Until `hasAddedPods`, v1.31 (PR 114326, v1.27 and
//!    cherry-picked to 1.24-1.26) skips only pods whose runtime may be removed
//!    (`ShouldPodRuntimeBeRemoved`), so a terminating pod whose containers may still run
//!    keeps its volumes until `SyncTerminatedPod`. With
//!    `volumesKeptForTerminatingPodsAcrossRestart: false` (v1.22 to v1.26.0, PR 102344 and
//!    issue 103651) it skips every pod whose termination its worker has started
//!    (`ShouldPodContainersBeTerminating`), and the reconciler unmounts the reconstructed
//!    volumes of a pod that was deleted before the restart while its containers still run
//!    their SIGTERM handlers (issues 113979, 114047).
//!
//! Where it deliberately differs from upstream:
//! * Reconstruction is an instantaneous scan at start (upstream's reconciler does it in
//!   its first pass and keeps reconstructed volumes "uncertain" until the desired state
//!   populator has seen the pods). The reconciler's unmount of a reconstructed volume that
//!   is not desired is modelled only where the two populator rules above differ: a pod in
//!   the pod manager, skipped because it is terminating, whose runtime may still run.
//!   Otherwise volumes are unmounted by `SyncTerminatedPod` as without a restart, so the
//!   volumes of a pod that is removed from the API while the kubelet is down stay mounted
//!   after its orphaned containers are killed (upstream unmounts them; issue 103651's
//!   e2e test). The populator and reconciler are not modelled in the v1.21 design, whose
//!   populator checked the pod's status (`isPodTerminated`) and kept such volumes.
//! * Volumes are one unit per pod (mount/unmount all of them). The populator loop runs
//!   only after a restart that reconstructed some, until `hasAddedPods`, and as timer
//!   events only under the old rule (a timer changes the scheduler's choices among
//!   simultaneous events, so trace hashes); under v1.31's rule, which never leads to an
//!   unmount here, its decision is evaluated once, silently, at the first housekeeping
//!   with sources ready, to mark the reach point.
//! * The pod workers' jitter stream of a new incarnation is seeded from the run seed and
//!   the incarnation number (a real process draws fresh randomness).

use super::profile::Sw;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::NoteKind;
use crate::model::{PodUid, Transition};
use crate::sim::Dur;
use crate::world::cri::{Caller, CriReq};
use crate::world::Epoch;
use std::collections::BTreeSet;

/// The populator's loop period (`desiredStateOfWorldPopulatorLoopSleepPeriod`).
const POPULATOR_PERIOD: Dur = Dur::millis(100);

/// The volume manager's desired state for reconstructed volumes, after a restart.
#[derive(Clone, Debug, Default)]
pub(crate) struct VolumePopulator {
    /// Pods whose volumes were reconstructed from disk and whose fate is not decided yet.
    reconstructed: BTreeSet<PodUid>,
    /// Reconstructed pods whose volumes the populator added to the desired state.
    desired: BTreeSet<PodUid>,
}

/// The seed of the kubelet's own random streams in incarnation `epoch` (the run seed for
/// the first one, so runs without a restart are unchanged).
pub(crate) fn incarnation_seed(seed: u64, epoch: Epoch) -> u64 {
    if epoch == 0 {
        return seed;
    }
    seed ^ u64::from(epoch).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Kubelet {
    /// The volume manager's reconstruction: read the pods directory and mark the pods
    /// whose volumes are still mounted.
    pub(crate) fn reconstruct_volumes(&mut self, ctx: &mut Ctx) {
        for (uid, mounted) in ctx.list_pod_dirs() {
            if mounted && self.mounted.insert(uid) {
                ctx.emit(Transition::Note {
                    uid,
                    what: NoteKind::VolumesReconstructed,
                });
                self.vol_dsw.reconstructed.insert(uid);
            }
        }
        // Only the old rule can make the reconciler act, so only it gets the populator's
        // loop as events (a timer changes the scheduler's choices among simultaneous
        // events); v1.31's decision is evaluated, for its reach point only, at the first
        // housekeeping with sources ready ([`Kubelet::volume_populator_settle`]).
        if !self.legacy()
            && !self.vol_dsw.reconstructed.is_empty()
            && !self.b.on(Sw::VolumesKeptForTerminatingPodsAcrossRestart)
        {
            let _ = ctx.after(POPULATOR_PERIOD, KEv::VolumePopulatorTick);
        }
    }

    /// With v1.31's rule the populator keeps every reconstructed volume the reconciler
    /// could unmount in this model, so its loop changes nothing; housekeeping (sources
    /// ready) runs the decision once to mark the reach point.
    pub(super) fn volume_populator_settle(&mut self, ctx: &mut Ctx) {
        if !self.vol_dsw.reconstructed.is_empty()
            && self.b.on(Sw::VolumesKeptForTerminatingPodsAcrossRestart)
        {
            self.volume_populator_tick(ctx);
        }
    }

    /// One loop of the desired state populator (`findAndAddNewPods`) for the reconstructed
    /// volumes; the loop that started with sources ready sets `hasAddedPods`, after which
    /// the reconciler unmounts reconstructed volumes not in the desired state.
    pub(crate) fn volume_populator_tick(&mut self, ctx: &mut Ctx) {
        let sources_ready = self.config.sources_ready;
        let kept = self.b.on(Sw::VolumesKeptForTerminatingPodsAcrossRestart);
        let pending: Vec<PodUid> = self.vol_dsw.reconstructed.iter().copied().collect();
        for &uid in &pending {
            if !self.config.pods.contains_key(&uid) || self.vol_dsw.desired.contains(&uid) {
                continue;
            }
            // Before `hasAddedPods`: v1.31 skips pods whose runtime may be removed; v1.22 to
            // v1.26.0 skipped pods whose worker has started terminating them.
            let skip = if kept {
                self.pw.should_pod_runtime_be_removed(uid)
            } else {
                self.pw.should_pod_containers_be_terminating(uid)
            };
            if !skip {
                self.vol_dsw.desired.insert(uid);
            }
        }
        if !sources_ready {
            let _ = ctx.after(POPULATOR_PERIOD, KEv::VolumePopulatorTick);
            return;
        }
        // hasAddedPods: the reconciler may unmount what is mounted and not desired.
        for uid in pending {
            if !self.config.pods.contains_key(&uid) {
                continue;
            }
            let could_run = !self.pw.should_pod_runtime_be_removed(uid);
            if !(could_run && self.pw.is_pod_termination_requested(uid)) {
                continue;
            }
            ctx.reach(Reach::TerminatingPodVolumesAfterRestart);
            if self.vol_dsw.desired.contains(&uid) || !self.mounted.contains(&uid) {
                continue;
            }
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::ReconstructedVolumesUnmount,
            });
            ctx.cri(Caller::Deletor, CriReq::UnmountVolumes { uid });
        }
        self.vol_dsw = VolumePopulator::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_incarnation_keeps_the_run_seed() {
        assert_eq!(incarnation_seed(7, 0), 7);
        assert_ne!(incarnation_seed(7, 1), 7);
        assert_ne!(incarnation_seed(7, 1), incarnation_seed(7, 2));
    }
}
