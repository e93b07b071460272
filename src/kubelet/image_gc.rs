//! The image garbage collector: image records (when each image was first detected on the
//! node and last seen in use), the periodic collection that frees imagefs down to the low
//! threshold once usage reaches the high one, and `DeleteUnusedImages`, which the eviction
//! manager runs as a node-level reclaim function.
//!
//! Follows upstream v1.31 `pkg/kubelet/images/image_gc_manager.go`: `detectImages` (a new
//! image is first detected at the detection that lists it; an image a container of the
//! runtime uses, exited or not, is last used at each detection; records of images gone from
//! the node are dropped), `GarbageCollect` (usage percent = 100 - available x 100 /
//! capacity of imagefs; at or above `highThresholdPercent` it frees
//! `capacity x (100 - lowThresholdPercent) / 100 - available` bytes), `freeSpace` (unused
//! images, least recently used first, then first detected first; an image detected less
//! than `minimumGCAge` ago is skipped; removal stops once enough is freed) and
//! `DeleteUnusedImages` (`freeSpace` with no bound). The period is `ImageGCPeriod`
//! (`StartGarbageCollection` in `pkg/kubelet/kubelet.go`).
//!
//! Where it deliberately differs: the list of images and of the containers using them is
//! taken at once from the runtime (`ListImages` and `GetPods(all)` without latency); the
//! removals are CRI `RemoveImage` calls issued together (upstream makes them one after the
//! other and counts only those that succeed; here an image is counted as freed when its
//! removal is issued). Detection runs only at a collection or a reclaim (upstream also
//! detects every 5 minutes on its own loop, which coincides with the default period).
//! Pinned images and `imageMaximumGCAge` (off by default in v1.31) are not modelled.
//!
//! Switch `imageGcSparesNewImages` (race catalog 33; issue 18140, PRs 18820 and 20063,
//! v1.2): off, the minimum age is not applied, as before v1.2, so an image pulled for a
//! container not yet created may go before the container is created.

use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::Transition;
use crate::scenario::types::ImageGc;
use crate::sim::SimTime;
use crate::world::cri::{Caller, CriReq};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// `imageRecord`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ImageRecord {
    pub(crate) first_detected: SimTime,
    /// `None`: never seen in use.
    pub(crate) last_used: Option<SimTime>,
    pub(crate) size: u64,
}

/// One periodic collection that found imagefs at or above its high threshold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ImageGcRun {
    pub(crate) at: SimTime,
    pub(crate) usage_percent: u32,
    pub(crate) to_free: u64,
    /// The images whose removal it issued, in order.
    pub(crate) images: Vec<String>,
}

/// The image garbage collector's state (`realImageGCManager`).
#[derive(Clone, Debug)]
pub(crate) struct ImageGcManager {
    pub(crate) policy: ImageGc,
    /// Whether the periodic collection runs (the scenario's `imageGC`, or the newest release:
    /// `current` and `v1.31`).
    pub(crate) periodic: bool,
    records: BTreeMap<String, ImageRecord>,
    /// Every collection that had something to free, in order.
    pub(crate) runs: Vec<ImageGcRun>,
    /// Switch `imageGcSparesNewImages`: whether `minimumGCAge` is applied.
    pub(crate) spare_new: bool,
}

impl ImageGcManager {
    pub(crate) fn new(spec: &crate::scenario::KubeletSpec) -> Self {
        ImageGcManager {
            policy: spec
                .image_gc
                .unwrap_or_else(crate::scenario::defaults::image_gc),
            periodic: spec.image_gc.is_some() || super::release::is_newest(&spec.profile),
            records: BTreeMap::new(),
            runs: Vec::new(),
            spare_new: true,
        }
    }

    /// `detectImages` on a listing of the node's images and the images in use.
    pub(crate) fn detect(
        &mut self,
        now: SimTime,
        listed: &[(String, u64)],
        in_use: &BTreeSet<Arc<str>>,
    ) {
        for (image, size) in listed {
            // A known image is found without building an owned key.
            let r = match self.records.get_mut(image) {
                Some(r) => r,
                None => self.records.entry(image.clone()).or_insert(ImageRecord {
                    first_detected: now,
                    last_used: None,
                    size: *size,
                }),
            };
            r.size = *size;
            if in_use.contains(image.as_str()) {
                r.last_used = Some(now);
            }
        }
        self.records
            .retain(|image, _| listed.iter().any(|(i, _)| i == image));
    }

    /// `freeSpace`'s choice: the unused images to remove to free `bytes`, in order.
    pub(crate) fn choose(
        &self,
        bytes: u64,
        now: SimTime,
        in_use: &BTreeSet<Arc<str>>,
    ) -> Vec<(String, u64)> {
        let mut candidates: Vec<(&String, &ImageRecord)> = self
            .records
            .iter()
            .filter(|(image, _)| !in_use.contains(image.as_str()))
            .collect();
        // byLastUsedAndDetected (a stable sort: ties keep name order).
        candidates.sort_by_key(|(_, r)| (r.last_used, r.first_detected));
        let mut out = Vec::new();
        let mut freed = 0u64;
        for (image, r) in candidates {
            if r.last_used.is_some_and(|t| t >= now) {
                continue;
            }
            if self.spare_new && now.since(r.first_detected) < self.policy.minimum_gc_age {
                continue;
            }
            out.push((image.clone(), r.size));
            freed = freed.saturating_add(r.size);
            if freed >= bytes {
                break;
            }
        }
        out
    }
}

/// `GarbageCollect`'s arithmetic: (usage percent, bytes to free) when usage is at or above
/// the high threshold.
pub(crate) fn over_high(policy: &ImageGc, capacity: u64, available: u64) -> Option<(u32, u64)> {
    if capacity == 0 {
        return None;
    }
    let available = available.min(capacity);
    let usage = 100 - (u128::from(available) * 100 / u128::from(capacity)) as u32;
    if usage < policy.high_threshold_percent {
        return None;
    }
    let target =
        (u128::from(capacity) * u128::from(100 - policy.low_threshold_percent) / 100) as u64;
    Some((usage, target.saturating_sub(available)))
}

impl Kubelet {
    /// One periodic run of the image garbage collector; schedules the next.
    pub(super) fn image_gc(&mut self, ctx: &mut Ctx) {
        let _ = ctx.after(self.image_gc.policy.period, KEv::ImageGc);
        let now = ctx.now();
        let (listed, in_use) = (ctx.list_images(), ctx.images_in_use());
        self.image_gc.detect(now, &listed, &in_use);
        let fs = ctx.stats_node().disk.imagefs;
        let policy = self.image_gc.policy;
        let Some((usage_percent, to_free)) =
            over_high(&policy, fs.capacity_bytes, fs.available_bytes)
        else {
            return;
        };
        ctx.emit(Transition::ImageGc {
            usage_percent,
            to_free,
        });
        self.mark_container_awaits_image(ctx);
        let chosen = self.image_gc.choose(to_free, now, &in_use);
        for (image, _) in &chosen {
            let image = Arc::from(image.as_str());
            ctx.cri(Caller::ImageGc, CriReq::RemoveImage { image });
        }
        self.image_gc.runs.push(ImageGcRun {
            at: now,
            usage_percent,
            to_free,
            images: chosen.into_iter().map(|c| c.0).collect(),
        });
    }

    /// `DeleteUnusedImages`: issues the removal of every unused image old enough, replies
    /// to `caller`; returns how many removals it issued.
    pub(super) fn delete_unused_images(&mut self, ctx: &mut Ctx, caller: Caller) -> u32 {
        let now = ctx.now();
        let (listed, in_use) = (ctx.list_images(), ctx.images_in_use());
        self.image_gc.detect(now, &listed, &in_use);
        self.mark_container_awaits_image(ctx);
        let chosen = self.image_gc.choose(u64::MAX, now, &in_use);
        for (image, _) in &chosen {
            let image = Arc::from(image.as_str());
            ctx.cri(caller, CriReq::RemoveImage { image });
        }
        chosen.len() as u32
    }

    /// The window of race catalog 33: a SyncPod pulled its image (the collector does not
    /// count it as used: no container exists yet) and its `CreateContainer` is in flight.
    fn mark_container_awaits_image(&self, ctx: &mut Ctx) {
        let creating = self
            .parked_ops()
            .any(|op| matches!(op.start, Some((_, super::sync::StartStage::Create))));
        if creating {
            ctx.reach(crate::model::reach::Reach::ImageGcWhileContainerAwaitsImage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::Dur;

    fn manager(min_age: u64) -> ImageGcManager {
        let mut policy = crate::scenario::defaults::image_gc();
        policy.minimum_gc_age = Dur::secs(min_age);
        ImageGcManager {
            policy,
            periodic: true,
            records: BTreeMap::new(),
            runs: Vec::new(),
            spare_new: true,
        }
    }

    fn set(names: &[&str]) -> BTreeSet<Arc<str>> {
        names.iter().map(|s| Arc::from(*s)).collect()
    }

    fn t(s: u64) -> SimTime {
        SimTime::ZERO + Dur::secs(s)
    }

    #[test]
    fn thresholds_follow_garbage_collect() {
        let p = crate::scenario::defaults::image_gc();
        // 84% used: below the high threshold.
        assert_eq!(over_high(&p, 100, 16), None);
        // 85% used: free down to 80% (20 available).
        assert_eq!(over_high(&p, 100, 15), Some((85, 5)));
        assert_eq!(over_high(&p, 1000, 0), Some((100, 200)));
        assert_eq!(over_high(&p, 0, 0), None);
    }

    #[test]
    fn free_space_takes_least_recently_used_unused_old_enough() {
        let mut m = manager(120);
        let listed = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
            v.iter().map(|(n, s)| (n.to_string(), *s)).collect()
        };
        // a and b seen at 0 (b in use), c first seen at 200.
        m.detect(t(0), &listed(&[("a", 10), ("b", 20)]), &set(&["b"]));
        m.detect(
            t(200),
            &listed(&[("a", 10), ("b", 20), ("c", 30)]),
            &set(&[]),
        );
        // At 300: c is younger than 2m since first detected; a never used, b used at 0.
        let none = set(&[]);
        let all = m.choose(u64::MAX, t(300), &none);
        assert_eq!(all, vec![("a".into(), 10), ("b".into(), 20)]);
        // Only 5 to free: a suffices.
        assert_eq!(m.choose(5, t(300), &none), vec![("a".into(), 10)]);
        // An image in use is never chosen.
        assert_eq!(m.choose(u64::MAX, t(300), &set(&["a"])).len(), 1);
        // At 400 c is old enough; records of images gone are dropped.
        m.detect(t(400), &listed(&[("c", 30)]), &none);
        assert_eq!(m.choose(u64::MAX, t(400), &none), vec![("c".into(), 30)]);
        // Without the minimum age (before v1.2) an image detected this instant may go.
        m.detect(t(400), &listed(&[("c", 30), ("d", 5)]), &none);
        assert_eq!(m.choose(u64::MAX, t(400), &none).len(), 1);
        m.spare_new = false;
        assert_eq!(m.choose(u64::MAX, t(400), &none).len(), 2);
    }
}
