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
//!    `SyncKnownPods`, `CouldHaveRunningContainers` is true for unknown pods.
//!
//! Where it deliberately differs from upstream:
//! * Reconstruction is an instantaneous scan at start (upstream's reconciler does it in
//!   its first pass and keeps reconstructed volumes "uncertain" until the desired state
//!   populator has seen the pods). The volume reconciler is not modelled, so volumes are
//!   only ever unmounted by `SyncTerminatedPod`: the race of issue 113979 (catalog 24,
//!   a reconstructed volume unmounted under a still-running container) cannot occur, and
//!   the volumes of a pod that is removed from the API while the kubelet is down stay
//!   mounted after its orphaned containers are killed.
//! * The pod workers' jitter stream of a new incarnation is seeded from the run seed and
//!   the incarnation number (a real process draws fresh randomness).

use super::Kubelet;
use crate::model::Transition;
use crate::world::{Ctx, Epoch};

/// The seed of the kubelet's own random streams in incarnation `epoch` (the run seed for
/// the first one, so runs without a restart are unchanged).
pub fn incarnation_seed(seed: u64, epoch: Epoch) -> u64 {
    if epoch == 0 {
        return seed;
    }
    seed ^ u64::from(epoch).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Kubelet {
    /// The volume manager's reconstruction: read the pods directory and mark the pods
    /// whose volumes are still mounted.
    pub fn reconstruct_volumes(&mut self, ctx: &mut Ctx) {
        for (uid, mounted) in ctx.list_pod_dirs() {
            if mounted && self.mounted.insert(uid) {
                ctx.emit(Transition::Note {
                    uid,
                    what: "volume manager: mounted volumes reconstructed from disk",
                });
            }
        }
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
