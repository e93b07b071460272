//! The node's static-pod manifest directory, as the kubelet's file source sees it.

use super::apiserver::{WatchEvent, WatchKind};
use super::{Epoch, Event};
use crate::model::ApiPod;
use crate::sim::{Dur, Sim, SimTime};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The node's static-pod manifest directory, as the kubelet's file source sees it:
/// changes are delivered in order and at once (inotify); the periodic re-list, which finds
/// nothing new when inotify works, is not modelled. A (re)started kubelet's file source
/// lists every manifest first.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileSource {
    manifests: BTreeMap<String, Arc<ApiPod>>,
    /// The manifest last removed, per pod name (what `restoreStaticPod` puts back).
    removed: BTreeMap<String, Arc<ApiPod>>,
    last_delivery: SimTime,
    /// The kubelet incarnation whose file source watches, if one runs.
    epoch: Option<Epoch>,
}

impl FileSource {
    fn deliver<K>(&mut self, sim: &mut Sim<Event<K>>, kind: WatchKind, pod: Arc<ApiPod>) {
        let Some(epoch) = self.epoch else {
            return; // no kubelet watches: it lists the directory when it starts
        };
        let at = sim.now().max(self.last_delivery + Dur(1));
        self.last_delivery = at;
        let _ = sim.at(at, Event::File(epoch, WatchEvent { kind, pod }));
    }

    /// Kubelet incarnation `epoch` starts its file source: every manifest, then "synced".
    pub(crate) fn connect<K>(&mut self, sim: &mut Sim<Event<K>>, epoch: Epoch) {
        self.epoch = Some(epoch);
        let pods: Vec<_> = self.manifests.values().cloned().collect();
        for pod in pods {
            self.deliver(sim, WatchKind::Added, pod);
        }
        let at = sim.now().max(self.last_delivery + Dur(1));
        self.last_delivery = at;
        let _ = sim.at(at, Event::FileSynced(epoch));
    }

    /// The kubelet died: nobody watches the directory.
    pub(crate) fn disconnect(&mut self) {
        self.epoch = None;
    }

    /// The manifest with this pod name, if present.
    pub(crate) fn get(&self, name: &str) -> Option<&Arc<ApiPod>> {
        self.manifests.get(name)
    }

    /// A manifest appears.
    pub(crate) fn add<K>(&mut self, sim: &mut Sim<Event<K>>, pod: Arc<ApiPod>) {
        self.manifests.insert(pod.spec.name.clone(), pod.clone());
        self.deliver(sim, WatchKind::Added, pod);
    }

    /// A manifest is removed; returns the pod it described.
    pub(crate) fn remove<K>(&mut self, sim: &mut Sim<Event<K>>, name: &str) -> Option<Arc<ApiPod>> {
        let old = self.manifests.remove(name)?;
        self.removed.insert(name.to_string(), old.clone());
        self.deliver(sim, WatchKind::Deleted, old.clone());
        Some(old)
    }

    /// The manifest last removed under this pod name puts back unchanged (same content,
    /// so the same UID); `None` if a manifest with the name is present or none was removed.
    pub(crate) fn restore<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        name: &str,
    ) -> Option<Arc<ApiPod>> {
        if self.manifests.contains_key(name) {
            return None;
        }
        let pod = self.removed.remove(name)?;
        self.add(sim, pod.clone());
        Some(pod)
    }
}
