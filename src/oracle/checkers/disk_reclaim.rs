//! Disk reclaim: an eviction for a disk signal comes only after the node-level reclaim for
//! that signal ran in the same round and left the signal met, no image a running or
//! starting pod uses is removed, and no pod is evicted for a disk signal while a pod
//! evicted before still keeps dead containers.

use super::Checker;
use crate::model::{EvictionSignal, PodUid, ReclaimStep, Transition};
use crate::oracle::facts::Facts;
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, NONE};
use crate::sim::SimTime;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::ReclaimBeforeDiskEviction,
        Invariant {
            name: "reclaim-before-disk-eviction",
            id: "S21",
            kind: Kind::Safety,
            meaning: "no pod is evicted for a nodefs or imagefs signal unless, in the same round (the same instant), the eviction manager's node-level reclaim for that signal ran (dead containers, then unused images) and the signal was still met when it measured again; a nodefs signal on a node with a separate imagefs, which has no reclaim functions, is evicted for at once",
            bound: "",
            source: "pkg/kubelet/eviction/eviction_manager.go synchronize, reclaimNodeLevelResources; helpers.go buildSignalToNodeReclaimFuncs",
            profiles: ALL,
        },
    ),
    (
        Inv::ImageGcSparesUsedImages,
        Invariant {
            name: "image-gc-spares-used-images",
            id: "S22",
            kind: Kind::Safety,
            meaning: "no image is removed from the node while a pod whose containers use it is running or starting (has a ready sandbox or a running container); an open upstream race: the collector counts as used only images of containers that exist, so an image pulled (or found present) for a container not yet created can go",
            bound: "",
            source: "pkg/kubelet/images/image_gc_manager.go detectImages, freeSpace; issues 18140, 123631",
            profiles: NONE,
        },
    ),
    (
        Inv::EvictedPodContainersReclaimed,
        Invariant {
            name: "evicted-pod-containers-reclaimed",
            id: "S23",
            kind: Kind::Safety,
            meaning: "no pod is evicted for a nodefs or imagefs signal while a pod evicted earlier, whose pod worker has terminated it, still has a dead container on the node that exited before that round: the reclaim's DeleteAllUnusedContainers removes every dead container of a terminated pod, evicted or not, before the eviction manager picks another pod (containerGC.minAge 0, the default)",
            bound: "",
            source: "pkg/kubelet/eviction/helpers.go buildSignalToNodeReclaimFuncs; pkg/kubelet/kuberuntime/kuberuntime_gc.go evictContainers; issue 29803, PR 45896",
            profiles: ALL,
        },
    ),
];

/// Disk signals: nodefs and imagefs, bytes and inodes.
fn disk_signal(s: EvictionSignal) -> bool {
    matches!(
        s,
        EvictionSignal::NodeFsAvailable
            | EvictionSignal::NodeFsInodesFree
            | EvictionSignal::ImageFsAvailable
            | EvictionSignal::ImageFsInodesFree
    )
}

#[derive(Clone, Debug, Default)]
pub(crate) struct DiskReclaim {
    /// The last reclaim outcome: when, for which signal, what it found.
    last: Option<(SimTime, EvictionSignal, ReclaimStep)>,
}

impl Checker for DiskReclaim {
    const TOPICS: u32 = super::topic::EVICT | super::topic::NODE_RECLAIM | super::topic::IMAGE;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::NodeReclaim { signal, step } => self.last = Some((at, *signal, *step)),
            Transition::Evict { uid, signal, .. } if disk_signal(*signal) => {
                self.reclaim_check(at, *uid, *signal, facts, out);
                self.evicted_pods_check(at, *uid, *signal, facts, out);
            }
            Transition::ImageRemoved { image, .. } => {
                out.checked(Inv::ImageGcSparesUsedImages);
                for (i, p) in facts.pods.iter().enumerate() {
                    let Some(spec) = &p.spec else { continue };
                    let live = !p.ready_sandboxes.is_empty() || !p.running.is_empty();
                    if live && spec.all_containers().any(|c| c.image == *image) {
                        out.report(
                            facts,
                            Inv::ImageGcSparesUsedImages,
                            Some(crate::model::PodUid(i as u32)),
                            at,
                            format_args!("image {image} was removed while the pod, which uses it, is running or starting"),
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

impl DiskReclaim {
    /// S21 at an eviction for a disk signal.
    fn reclaim_check(
        &self,
        at: SimTime,
        uid: PodUid,
        signal: EvictionSignal,
        facts: &Facts,
        out: &mut Findings,
    ) {
        out.checked(Inv::ReclaimBeforeDiskEviction);
        let nodefs = matches!(
            signal,
            EvictionSignal::NodeFsAvailable | EvictionSignal::NodeFsInodesFree
        );
        let ok = match self.last {
            Some((t, s, ReclaimStep::NotRelieved)) => t == at && s == signal,
            Some((t, s, ReclaimStep::Nothing)) => t == at && s == signal && nodefs,
            _ => false,
        };
        if !ok {
            let why = match self.last {
                Some((t, s, step)) if t == at && s == signal => format!("({step})"),
                _ => "without a node-level reclaim for it in the same round".into(),
            };
            out.report(
                facts,
                Inv::ReclaimBeforeDiskEviction,
                Some(uid),
                at,
                format_args!("the pod was evicted for {signal} {why}"),
            );
        }
    }

    /// S23 at an eviction for a disk signal: no pod evicted before and terminated keeps a
    /// dead container that exited before this instant.
    fn evicted_pods_check(
        &self,
        at: SimTime,
        uid: PodUid,
        signal: EvictionSignal,
        facts: &Facts,
        out: &mut Findings,
    ) {
        out.checked(Inv::EvictedPodContainersReclaimed);
        for (i, p) in facts.pods.iter().enumerate() {
            let q = PodUid(i as u32);
            if q == uid || p.evicted_at().is_none_or(|t| t >= at) || !p.worker.terminated {
                continue;
            }
            let kept = p
                .instances
                .iter()
                .filter(|c| c.removed_at.is_none() && c.exit.is_some_and(|(_, t)| t < at))
                .count();
            if kept > 0 {
                out.report(
                    facts,
                    Inv::EvictedPodContainersReclaimed,
                    Some(uid),
                    at,
                    format_args!(
                        "the pod was evicted for {signal} while {}, evicted before, still keeps {kept} dead container(s) on the node",
                        p.name()
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::ReclaimStep;
    use crate::oracle::testkit::*;

    fn evict(uid: PodUid, signal: EvictionSignal) -> Transition {
        Transition::Evict {
            uid,
            signal,
            grace: 1,
        }
    }

    fn reclaim(signal: EvictionSignal, step: ReclaimStep) -> Transition {
        Transition::NodeReclaim { signal, step }
    }

    #[test]
    fn s21_reclaim_before_disk_eviction() {
        let nodefs = EvictionSignal::NodeFsAvailable;
        let imagefs = EvictionSignal::ImageFsAvailable;
        // Reclaim ran, the signal was still met, the eviction follows at once.
        let mut f = Feed::new();
        f.running_pod(P, RestartPolicy::Always)
            .tr(reclaim(nodefs, ReclaimStep::Started))
            .wait(100)
            .tr(reclaim(nodefs, ReclaimStep::NotRelieved))
            .tr(evict(P, nodefs));
        assert!(!f.has(Inv::ReclaimBeforeDiskEviction));
        // No reclaim at all.
        let mut g = Feed::new();
        g.running_pod(P, RestartPolicy::Always).tr(evict(P, nodefs));
        assert!(g.has(Inv::ReclaimBeforeDiskEviction));
        // A reclaim that relieved the pressure, or one of an earlier round.
        let mut h = Feed::new();
        h.running_pod(P, RestartPolicy::Always)
            .tr(reclaim(nodefs, ReclaimStep::Relieved))
            .tr(evict(P, nodefs));
        assert!(h.has(Inv::ReclaimBeforeDiskEviction));
        let mut k = Feed::new();
        k.running_pod(P, RestartPolicy::Always)
            .tr(reclaim(nodefs, ReclaimStep::NotRelieved))
            .wait(10_000)
            .tr(evict(P, nodefs));
        assert!(k.has(Inv::ReclaimBeforeDiskEviction));
        // Nothing to reclaim: allowed for nodefs (separate imagefs), never for imagefs.
        let mut m = Feed::new();
        m.running_pod(P, RestartPolicy::Always)
            .tr(reclaim(nodefs, ReclaimStep::Nothing))
            .tr(evict(P, nodefs));
        assert!(!m.has(Inv::ReclaimBeforeDiskEviction));
        let mut n = Feed::new();
        n.running_pod(P, RestartPolicy::Always)
            .tr(reclaim(imagefs, ReclaimStep::Nothing))
            .tr(evict(P, imagefs));
        assert!(n.has(Inv::ReclaimBeforeDiskEviction));
        // Memory and PID evictions need none.
        let mut o = Feed::new();
        o.running_pod(P, RestartPolicy::Always)
            .tr(evict(P, EvictionSignal::MemoryAvailable));
        assert!(!o.has(Inv::ReclaimBeforeDiskEviction));
    }

    #[test]
    fn s22_image_gc_spares_used_images() {
        let removed = |image: &str| Transition::ImageRemoved {
            image: image.into(),
            size: 1,
        };
        // The running pod's image (img:1) may not go; another image may.
        let mut f = Feed::new();
        f.running_pod(P, RestartPolicy::Always)
            .tr(removed("other:1"));
        assert!(!f.has(Inv::ImageGcSparesUsedImages));
        f.tr(removed("img:1"));
        assert!(f.has(Inv::ImageGcSparesUsedImages));
        // Once its container exited (no ready sandbox in this feed), it may.
        let mut g = Feed::new();
        g.running_pod(P, RestartPolicy::Never)
            .exited(P, 1, 0)
            .tr(removed("img:1"));
        assert!(!g.has(Inv::ImageGcSparesUsedImages));
    }

    #[test]
    fn s23_evicted_pod_containers_reclaimed() {
        let nodefs = EvictionSignal::NodeFsAvailable;
        let removed = Transition::CriEnd {
            uid: P,
            call: w("RemoveContainer"),
            target: 1,
            error: None,
        };
        // P evicted and terminated, its dead container kept: Q's eviction is a finding.
        let mut f = Feed::new();
        f.running_pod(P, RestartPolicy::Always)
            .running_pod(Q, RestartPolicy::Always)
            .tr(reclaim(nodefs, ReclaimStep::NotRelieved))
            .tr(evict(P, nodefs))
            .terminate(P)
            .wait(1000)
            .tr(reclaim(nodefs, ReclaimStep::NotRelieved))
            .tr(evict(Q, nodefs));
        assert!(f.has(Inv::EvictedPodContainersReclaimed));
        // Its container removed (the reclaim's DeleteAllUnusedContainers): none.
        let mut g = Feed::new();
        g.running_pod(P, RestartPolicy::Always)
            .running_pod(Q, RestartPolicy::Always)
            .tr(reclaim(nodefs, ReclaimStep::NotRelieved))
            .tr(evict(P, nodefs))
            .terminate(P)
            .wait(1000)
            .tr(removed)
            .tr(reclaim(nodefs, ReclaimStep::NotRelieved))
            .tr(evict(Q, nodefs));
        assert!(!g.has(Inv::EvictedPodContainersReclaimed));
        // A memory eviction is not checked.
        let mut h = Feed::new();
        h.running_pod(P, RestartPolicy::Always)
            .running_pod(Q, RestartPolicy::Always)
            .tr(evict(P, EvictionSignal::MemoryAvailable))
            .terminate(P)
            .tr(evict(Q, EvictionSignal::MemoryAvailable));
        assert!(!h.has(Inv::EvictedPodContainersReclaimed));
    }
}
