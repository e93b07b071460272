//! The eviction manager's node-level reclaim: before evicting a pod for a disk signal, it
//! deletes dead containers and unused images and measures again, evicting only if a
//! threshold is still met.
//!
//! Follows upstream v1.31 `pkg/kubelet/eviction/eviction_manager.go`
//! (`reclaimNodeLevelResources`: run the signal's reclaim functions, take a fresh summary,
//! `thresholdsMet` over every threshold with the minimum reclaim enforced and grace periods
//! ignored, done if none is met) and `helpers.go` (`buildSignalToNodeReclaimFuncs`: with a
//! separate imagefs, the imagefs signals reclaim dead containers then unused images and the
//! nodefs signals have nothing to reclaim; without one, every nodefs and imagefs signal
//! reclaims both; memory and PID signals have none). The reclaim functions are
//! `DeleteAllUnusedContainers` (`container_gc.rs`) and `DeleteUnusedImages`
//! (`image_gc.rs`).
//!
//! Where it deliberately differs: upstream's reclaim functions block until each removal
//! returned; here the manager issues the dead containers' removals at once and waits for
//! all their replies, then the unused images' removals likewise (a failed removal frees
//! nothing), before it measures again. The split containerfs of v1.31
//! (`KubeletSeparateDiskGC`, alpha) is not modelled. After the reclaim, the pods are ranked
//! on the fresh summary (upstream ranks on the round's first one).
//!
//! Switch `evictedPodContainersRemoved` (race catalog 35; issue 29803, PR 45896, v1.7):
//! off, the reclaim deletes unused images only, as before v1.7 (dead containers were left
//! to the periodic container GC, which removed a pod's containers only once it was
//! deleted).

use super::eviction::Wait;
use super::eviction_signals as signals;
use super::profile::Sw;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::{ReclaimStep, RtState, Transition};
use crate::sim::SimTime;
use crate::world::cri::Caller;

/// One node-level reclaim, for the run summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ReclaimRecord {
    pub(crate) at: SimTime,
    pub(crate) signal: String,
    /// Removals issued: dead containers, unused images.
    pub(crate) containers: u32,
    pub(crate) images: u32,
    /// When it measured again and whether that relieved the pressure (`None`: not yet).
    pub(crate) done_at: Option<SimTime>,
    pub(crate) relieved: Option<bool>,
}

/// `buildSignalToNodeReclaimFuncs`: `None` for a signal without an entry (no reclaim is
/// attempted), `Some(false)` for a disk signal whose list is empty, `Some(true)` for one
/// that deletes dead containers and unused images.
pub(crate) fn reclaim_funcs(signal: &str, separate_imagefs: bool) -> Option<bool> {
    let image = signal.starts_with("imagefs.");
    if !image && !signal.starts_with("nodefs.") {
        return None;
    }
    Some(image || !separate_imagefs)
}

impl Kubelet {
    /// `reclaimNodeLevelResources` for threshold `ti`: starts the removals and returns true
    /// (the round decides when they are answered), or returns false when the signal has no
    /// reclaim functions (the ranked eviction follows).
    pub(super) fn eviction_reclaim(
        &mut self,
        ctx: &mut Ctx,
        ti: usize,
        separate_imagefs: bool,
    ) -> bool {
        let signal = self.eviction.thresholds[ti].signal.clone();
        let word = signals::signal_word(&signal);
        match reclaim_funcs(&signal, separate_imagefs) {
            None => return false,
            Some(false) => {
                ctx.emit(Transition::NodeReclaim {
                    signal: word,
                    step: ReclaimStep::Nothing,
                });
                return false;
            }
            Some(true) => {}
        }
        ctx.emit(Transition::NodeReclaim {
            signal: word,
            step: ReclaimStep::Started,
        });
        if self.evicted_pod_has_dead_containers() {
            ctx.reach(Reach::DiskReclaimWithEvictedPodContainers);
        }
        let containers = if self.b.on(Sw::EvictedPodContainersRemoved) {
            self.delete_all_unused_containers(ctx, Caller::Reclaim)
        } else {
            0
        };
        self.eviction.reclaims.push(ReclaimRecord {
            at: ctx.now(),
            signal,
            containers,
            images: 0,
            done_at: None,
            relieved: None,
        });
        self.eviction.wait = Wait::Reclaiming {
            ti,
            pending: containers,
            images: false,
        };
        if containers == 0 {
            self.eviction_reclaim_next(ctx, ti, false);
        }
        true
    }

    /// Whether a pod the pod workers know as evicted still has a dead container in the
    /// PLEG cache (the window of race catalog 35).
    fn evicted_pod_has_dead_containers(&self) -> bool {
        self.pleg.cached_uids().into_iter().any(|uid| {
            self.pw.records.get(&uid).is_some_and(|s| s.is_evicted())
                && self.pleg.cache_get(uid).is_ok_and(|st| {
                    st.containers
                        .iter()
                        .any(|c| matches!(c.state, RtState::Exited | RtState::Unknown))
                })
        })
    }

    /// A removal of the reclaim was answered; the last one of a phase ends it.
    pub(super) fn eviction_reclaim_reply(&mut self, ctx: &mut Ctx) {
        let Wait::Reclaiming {
            ti,
            pending,
            images,
        } = self.eviction.wait
        else {
            return;
        };
        let pending = pending.saturating_sub(1);
        self.eviction.wait = Wait::Reclaiming {
            ti,
            pending,
            images,
        };
        if pending == 0 {
            self.eviction_reclaim_next(ctx, ti, images);
        }
    }

    /// A phase of the reclaim is over: after the dead containers (whose removal may have
    /// left images unused), `DeleteUnusedImages`; after the images, measure again.
    fn eviction_reclaim_next(&mut self, ctx: &mut Ctx, ti: usize, images_done: bool) {
        if images_done {
            return self.eviction_reclaim_done(ctx, ti);
        }
        let images = self.delete_unused_images(ctx, Caller::Reclaim);
        if let Some(r) = self.eviction.reclaims.last_mut() {
            r.images = images;
        }
        self.eviction.wait = Wait::Reclaiming {
            ti,
            pending: images,
            images: true,
        };
        if images == 0 {
            self.eviction_reclaim_done(ctx, ti);
        }
    }

    /// The removals are done: measure again; relieved, the round ends without an eviction;
    /// otherwise the ranked eviction for threshold `ti` follows on the fresh figures.
    fn eviction_reclaim_done(&mut self, ctx: &mut Ctx, ti: usize) {
        let node = ctx.stats_node();
        let obs = signals::observations(&node);
        let all: Vec<usize> = (0..self.eviction.thresholds.len()).collect();
        let relieved = self.eviction.thresholds_met(&all, &obs, true).is_empty();
        let signal = signals::signal_word(&self.eviction.thresholds[ti].signal);
        ctx.emit(Transition::NodeReclaim {
            signal,
            step: if relieved {
                ReclaimStep::Relieved
            } else {
                ReclaimStep::NotRelieved
            },
        });
        if let Some(r) = self.eviction.reclaims.last_mut() {
            r.done_at = Some(ctx.now());
            r.relieved = Some(relieved);
        }
        if relieved || !self.evict_ranked(ctx, ti, &node, &obs) {
            self.eviction.wait = Wait::Sleeping;
            let _ = ctx.after(self.eviction.monitoring_period, KEv::EvictionSync);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reclaim_functions_by_signal_and_imagefs() {
        assert_eq!(reclaim_funcs("memory.available", false), None);
        assert_eq!(reclaim_funcs("pid.available", true), None);
        assert_eq!(reclaim_funcs("nodefs.available", false), Some(true));
        assert_eq!(reclaim_funcs("nodefs.inodesFree", true), Some(false));
        assert_eq!(reclaim_funcs("imagefs.available", true), Some(true));
        assert_eq!(reclaim_funcs("imagefs.inodesFree", false), Some(true));
    }
}
