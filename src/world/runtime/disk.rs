//! Disk, inode and process figures of the node and its pods (model in `world::stats`).

use super::{Container, RtState, Runtime};
use crate::model::{EmptyDir, PodUid};
use crate::scenario::types::FsSpec;
use crate::sim::{Dur, SimTime};
use crate::world::stats::{ContainerFs, FsStats, NodeDisk};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The node's storage configuration and the pins of `diskPressure`/`pidPressure` actions.
#[derive(Clone, Debug)]
pub(crate) struct DiskConfig {
    pub(crate) nodefs: FsSpec,
    pub(crate) imagefs: Option<FsSpec>,
    pub(crate) max_pids: u64,
    pub(crate) image_sizes: BTreeMap<String, u64>,
    pub(crate) default_image_size: u64,
    /// (available bytes, free inodes) pinned on nodefs and on imagefs.
    pub(crate) nodefs_pin: (Option<u64>, Option<u64>),
    pub(crate) imagefs_pin: (Option<u64>, Option<u64>),
    pub(crate) pids_pin: Option<u64>,
    /// Each pod's emptyDir volumes with the workload's usage.
    pub(crate) volumes: BTreeMap<PodUid, Vec<EmptyDir>>,
}

impl Default for DiskConfig {
    fn default() -> Self {
        let d = crate::scenario::defaults::NODEFS_BYTES;
        DiskConfig {
            nodefs: FsSpec {
                capacity_bytes: d,
                inodes: crate::scenario::defaults::NODEFS_INODES,
            },
            imagefs: None,
            max_pids: crate::scenario::defaults::MAX_PIDS,
            image_sizes: BTreeMap::new(),
            default_image_size: crate::scenario::defaults::IMAGE_SIZE,
            nodefs_pin: (None, None),
            imagefs_pin: (None, None),
            pids_pin: None,
            volumes: BTreeMap::new(),
        }
    }
}

/// How long a container has run by `now` (frozen at its exit); `None` if it never started
/// or was removed.
fn ran_for(c: &Container, now: SimTime) -> Option<Dur> {
    if c.removed {
        return None;
    }
    let start = c.started_at?;
    let end = match c.state {
        RtState::Running => now,
        _ => c.finished_at.unwrap_or(now),
    };
    Some(end.since(start))
}

impl Runtime {
    /// A container's (writable layer + logs bytes, inodes) at `now`.
    pub(super) fn container_fs_at(c: &Container, now: SimTime) -> (u64, u64) {
        match ran_for(c, now) {
            Some(d) => (c.behaviour.disk_usage.at(d), c.behaviour.inodes.at(d)),
            None => (0, 0),
        }
    }

    /// A running container's processes at `now`.
    pub(super) fn container_pids_at(c: &Container, now: SimTime) -> u64 {
        match (c.state == RtState::Running, ran_for(c, now)) {
            (true, Some(d)) => c.behaviour.pids.at(d),
            _ => 0,
        }
    }

    /// A pod's emptyDir usage at `now`: while its volumes are mounted, growing from the mount.
    pub(super) fn volume_usage_at(&self, uid: PodUid, now: SimTime) -> Vec<(String, u64)> {
        let Some(dirs) = self.disk.volumes.get(&uid) else {
            return Vec::new();
        };
        let host = self.host.get(&uid);
        let mounted = host
            .filter(|h| h.volumes_mounted)
            .and_then(|h| h.mounted_at);
        dirs.iter()
            .map(|d| {
                let used = mounted.map_or(0, |at| d.usage.at(now.since(at)));
                (d.name.clone(), used)
            })
            .collect()
    }

    /// The running containers' local storage of a pod at `now`, and its processes.
    pub(super) fn pod_fs_at(&self, uid: PodUid, now: SimTime) -> (Vec<ContainerFs>, u64) {
        let mut out = Vec::new();
        let mut pids = 0u64;
        let Some(p) = self.pods.get(&uid) else {
            return (out, pids);
        };
        for c in p.live.iter().filter_map(|id| self.containers.get(id)) {
            if c.state != RtState::Running {
                continue;
            }
            let (b, i) = Self::container_fs_at(c, now);
            out.push(ContainerFs {
                name: String::from(&*c.name),
                used_bytes: b,
                inodes_used: i,
            });
            pids = pids.saturating_add(Self::container_pids_at(c, now));
        }
        (out, pids)
    }

    /// The node's filesystems and processes at `now`.
    pub(crate) fn node_disk(&self, now: SimTime) -> NodeDisk {
        let (mut layers, mut inodes, mut pids) = (0u64, 0u64, 0u64);
        // Removed containers use nothing (`ran_for`): only the live ones count, and of
        // those only the ones whose behaviour uses disk, inodes or processes.
        #[cfg(debug_assertions)]
        {
            let full: Vec<_> = (self.live.iter())
                .filter(|id| self.containers.get(id).is_some_and(Self::uses_resources))
                .collect();
            assert!(
                full.iter().copied().eq(self.live_using.iter()),
                "stats index out of step"
            );
            for c in self.live.iter().filter_map(|id| self.containers.get(id)) {
                if !Self::uses_resources(c) {
                    let zero = (
                        Self::container_fs_at(c, now),
                        Self::container_pids_at(c, now),
                    );
                    assert_eq!(
                        zero,
                        ((0, 0), 0),
                        "a container outside `live_using` uses disk"
                    );
                }
            }
        }
        for c in self
            .live_using
            .iter()
            .filter_map(|id| self.containers.get(id))
        {
            let (b, i) = Self::container_fs_at(c, now);
            layers = layers.saturating_add(b);
            inodes = inodes.saturating_add(i);
            pids = pids.saturating_add(Self::container_pids_at(c, now));
        }
        let images = self
            .images
            .iter()
            .map(|i| self.image_size(i))
            .fold(0u64, u64::saturating_add);
        let volumes = self
            .disk
            .volumes
            .keys()
            .flat_map(|uid| self.volume_usage_at(*uid, now))
            .fold(0u64, |a, (_, b)| a.saturating_add(b));
        let fs =
            |spec: FsSpec, used: u64, inodes_used: u64, pin: (Option<u64>, Option<u64>)| FsStats {
                capacity_bytes: spec.capacity_bytes,
                available_bytes: pin
                    .0
                    .unwrap_or(spec.capacity_bytes.saturating_sub(used))
                    .min(spec.capacity_bytes),
                inodes: spec.inodes,
                inodes_free: pin
                    .1
                    .unwrap_or(spec.inodes.saturating_sub(inodes_used))
                    .min(spec.inodes),
            };
        let d = &self.disk;
        let (nodefs, imagefs) = match d.imagefs {
            Some(ifs) => (
                fs(d.nodefs, volumes, 0, d.nodefs_pin),
                fs(ifs, images.saturating_add(layers), inodes, d.imagefs_pin),
            ),
            None => {
                let used = images.saturating_add(layers).saturating_add(volumes);
                let n = fs(d.nodefs, used, inodes, d.nodefs_pin);
                (n, n)
            }
        };
        NodeDisk {
            nodefs,
            imagefs,
            separate_imagefs: d.imagefs.is_some(),
            max_pids: d.max_pids,
            pids_available: d.pids_pin.unwrap_or(d.max_pids.saturating_sub(pids)),
        }
    }

    /// A `diskPressure` action: pins the filesystem's figures that are given (on a node
    /// without a separate imagefs, imagefs is nodefs).
    pub(crate) fn pin_fs(&mut self, imagefs: bool, available: Option<u64>, inodes: Option<u64>) {
        let pin = if imagefs && self.disk.imagefs.is_some() {
            &mut self.disk.imagefs_pin
        } else {
            &mut self.disk.nodefs_pin
        };
        if available.is_some() {
            pin.0 = available;
        }
        if inodes.is_some() {
            pin.1 = inodes;
        }
    }

    /// The emptyDir volumes of pod `uid` (with the workload's usage).
    pub(crate) fn register_volumes(&mut self, uid: PodUid, spec: &crate::model::PodSpec) {
        if !spec.empty_dirs.0.is_empty() {
            self.disk.volumes.insert(uid, spec.empty_dirs.0.clone());
        }
    }

    /// `RemoveImage`: the image goes from the node and its size is freed on imagefs (nodefs
    /// without a separate imagefs). The runtime does not refuse an image a container uses
    /// (the container keeps its own snapshot); removing an absent image succeeds.
    pub(super) fn remove_image(
        &mut self,
        trace: &mut super::Tracer,
        now: SimTime,
        image: &str,
    ) -> crate::world::cri::CriResult {
        if self.images.remove(image) {
            let size = self.image_size(image);
            self.removed_images.push((now, image.to_string(), size));
            let t = crate::model::Transition::ImageRemoved {
                image: image.to_string(),
                size,
            };
            trace.emit(now, &t);
        }
        crate::world::cri::CriResult::Ok
    }

    /// `ListImages`: every image on the node with its size, by name.
    pub(crate) fn list_images(&self) -> Vec<(String, u64)> {
        self.images
            .iter()
            .map(|i| (i.clone(), self.image_size(i)))
            .collect()
    }

    /// The images of the containers the runtime still has (running or not, not removed):
    /// what `GetPods(all)` shows the image garbage collector as in use.
    pub(crate) fn images_in_use(&self) -> std::collections::BTreeSet<Arc<str>> {
        // The containers' shared image names: no text is copied. Many containers share
        // few images, and the containers of one image hold one interned copy of its name:
        // a container whose copy is one already put in the set is skipped on an address
        // check, so the set compares texts only once per distinct copy (up to `SEEN` of
        // them; beyond that the set's own look-up still keeps each name once).
        const SEEN: usize = 16;
        let mut out = std::collections::BTreeSet::new();
        let mut seen: Vec<&Arc<str>> = Vec::with_capacity(SEEN);
        for c in self.live.iter().filter_map(|id| self.containers.get(id)) {
            if seen.iter().any(|s| Arc::ptr_eq(s, &c.image)) {
                continue;
            }
            if seen.len() < SEEN {
                seen.push(&c.image);
            }
            out.insert(c.image.clone());
        }
        // The set is the one every container's name inserted gives (debug builds).
        #[cfg(debug_assertions)]
        {
            let full: std::collections::BTreeSet<Arc<str>> = (self.live.iter())
                .filter_map(|id| self.containers.get(id))
                .map(|c| c.image.clone())
                .collect();
            assert_eq!(out, full, "images in use out of step with the containers'");
        }
        out
    }

    /// An image's size on disk.
    pub(crate) fn image_size(&self, image: &str) -> u64 {
        self.disk
            .image_sizes
            .get(image)
            .copied()
            .unwrap_or(self.disk.default_image_size)
    }
}
