//! The scenario's timeline actions: what happens to the node and its pods from outside
//! (users, controllers, the machine).

use super::world::{Event, World};
use crate::model::reach::Reach;
use crate::model::RemovedBy;
use crate::model::{PodUid, Transition};
use crate::scenario::{Action, PodDecl};
use crate::sim::Dur;

/// The declared pods' indices sorted by name (ties in declaration order), so a timeline
/// action finds the pod it names by a binary search instead of comparing the name with
/// every declaration. Built only for a scenario with a timeline (4 bytes a pod).
#[derive(Clone, Debug, Default)]
pub(crate) struct DeclIndex(Vec<u32>);

impl DeclIndex {
    /// The index of `pods`, or an empty one when no action will ask (`timeline` false).
    pub(crate) fn new(pods: &[PodDecl], timeline: bool) -> Self {
        if !timeline {
            return DeclIndex(Vec::new());
        }
        let mut ix: Vec<u32> = (0..pods.len() as u32).collect();
        // Stable: equal names keep declaration order, so the first is the one `find` gave.
        ix.sort_by(|a, b| {
            pods[*a as usize]
                .spec
                .name
                .cmp(&pods[*b as usize].spec.name)
        });
        DeclIndex(ix)
    }

    /// The first declaration (in file order) of a pod named `name`. Debug builds compare
    /// with a walk of every declaration.
    pub(crate) fn find<'a>(&self, pods: &'a [PodDecl], name: &str) -> Option<&'a PodDecl> {
        if self.0.len() != pods.len() {
            // Not built for these declarations: walk them.
            return pods.iter().find(|p| p.spec.name == name);
        }
        let at = self
            .0
            .partition_point(|i| pods[*i as usize].spec.name.as_str() < name);
        let found = (self.0.get(at))
            .map(|i| &pods[*i as usize])
            .filter(|d| d.spec.name == name);
        debug_assert!(
            found.map(|d| d as *const PodDecl)
                == (pods.iter().find(|p| p.spec.name == name)).map(|d| d as *const PodDecl),
            "timeline's pod index out of step with the declarations"
        );
        found
    }
}

impl World {
    /// Timeline action `action` happens now.
    pub(super) fn timeline(&mut self, action: Action) {
        match action {
            Action::DeletePod {
                pod,
                grace_period_seconds,
            } => {
                if let Some(uid) = self.api_object_of(&pod) {
                    self.reach_if_kubelet_down();
                    self.api
                        .delete(&mut self.sim, &mut self.trace, uid, grace_period_seconds);
                }
            }
            Action::ForceDeletePod { pod } => {
                if let Some(uid) = self.api_object_of(&pod) {
                    self.reach_if_kubelet_down();
                    if self.runtime.has_running(uid) {
                        self.trace.reach(Reach::ForceDeleteWhileRunning as u32);
                    }
                    self.api.force_delete(&mut self.sim, &mut self.trace, uid);
                }
            }
            Action::ContainerExit {
                pod,
                container,
                exit_code,
            } => {
                if let Some(uid) = self.uid_of(&pod) {
                    let replies = self.runtime.container_exit(
                        &mut self.sim,
                        &mut self.trace,
                        uid,
                        &container,
                        exit_code,
                    );
                    self.deliver(replies);
                }
            }
            Action::UpdateStaticPod { pod } => self.update_static_pod(&pod),
            Action::RemoveStaticPod { pod } => {
                self.remove_static_manifest(&pod, RemovedBy::ManifestRemoved);
            }
            Action::RestoreStaticPod { pod } => self.restore_static_pod(&pod),
            Action::RecreatePod { pod } => self.recreate_pod(&pod),
            Action::NodeShutdown => self.node_shutdown(),
            Action::MemoryPressure { available_bytes } => {
                // The node's memory.available is this value from now on (world::stats).
                self.runtime.memory_available_override = Some(available_bytes);
                self.trace.emit(
                    self.sim.now(),
                    &Transition::NodeMemoryAvailable {
                        bytes: available_bytes,
                    },
                );
            }
            Action::DiskPressure {
                imagefs,
                available,
                inodes_free,
            } => {
                self.runtime.pin_fs(imagefs, available, inodes_free);
                self.trace.emit(
                    self.sim.now(),
                    &Transition::NodeFsPinned {
                        imagefs,
                        available,
                        inodes_free,
                    },
                );
            }
            Action::PidPressure { available } => {
                self.runtime.disk.pids_pin = Some(available);
                self.trace.emit(
                    self.sim.now(),
                    &Transition::NodePidAvailable { pids: available },
                );
            }
            Action::KubeletRestart { downtime } => self.kubelet_restart(downtime),
            Action::SetPodCondition { pod, condition } => {
                // By name in the API: a static pod's conditions are its mirror pod's.
                let ns = self.decls.find(&self.scenario.pods, &pod);
                let uid = ns.and_then(|d| self.api.uid_by_name(&d.spec.namespace, &pod));
                if let Some(uid) = uid {
                    self.api
                        .set_condition(&mut self.sim, &mut self.trace, uid, condition);
                }
            }
        }
    }

    /// The API object a user's delete of `pod` reaches: the pod, or for a static pod its
    /// mirror pod (found by name, as `kubectl delete` does), if one exists now. The API
    /// server deletes the mirror pod like any pod; the kubelet sees it go (or being
    /// deleted) and its next SyncPod of the static pod deletes what is left and creates a
    /// new mirror pod (`SyncPod` in `pkg/kubelet/kubelet.go`, v1.31), while the static pod
    /// itself keeps running.
    fn api_object_of(&self, pod: &str) -> Option<PodUid> {
        let decl = self.decls.find(&self.scenario.pods, pod)?;
        if decl.static_pod {
            return self.api.uid_by_name(&decl.spec.namespace, pod);
        }
        self.uid_of(pod)
    }

    /// A deletion while the kubelet is down is a reach point.
    fn reach_if_kubelet_down(&mut self) {
        if !self.process.up {
            self.trace.reach(Reach::DeleteDuringKubeletDowntime as u32);
        }
    }

    /// A static pod's manifest leaves the directory (the file source's REMOVE). The oracle
    /// is told (it no longer expects the pod to run); the trace is not.
    fn remove_static_manifest(&mut self, pod: &str, why: RemovedBy) -> Option<usize> {
        let now = self.sim.now();
        let old = self.files.remove(&mut self.sim, pod)?;
        self.trace
            .show(now, &Transition::StaticManifestRemoved { uid: old.uid });
        self.api.record_static_removed(old.uid, now, why);
        Some(old.decl)
    }

    /// The manifest is edited: the old pod is removed and a new UID appears with the same
    /// full name (the file source's REMOVE, then ADD).
    fn update_static_pod(&mut self, pod: &str) {
        if let Some(decl) = self.remove_static_manifest(pod, RemovedBy::ManifestUpdated) {
            self.add_static(decl);
        }
    }

    /// The manifest last removed under this name is put back unchanged (same UID).
    fn restore_static_pod(&mut self, pod: &str) {
        let now = self.sim.now();
        if let Some(p) = self.files.restore(&mut self.sim, pod) {
            self.api.record_static_restored(p.uid);
            self.trace.emit(
                now,
                &Transition::ApiCreated {
                    uid: p.uid,
                    name: format!("{} (static manifest restored)", p.spec.name),
                    spec: p.spec.clone(),
                    static_pod: true,
                    mirror_of: None,
                },
            );
        }
    }

    /// As a StatefulSet controller does: the old object goes (grace 0, if it is still
    /// there) and a new one with the same name and a new UID is created.
    fn recreate_pod(&mut self, pod: &str) {
        let Some(uid) = self.uid_of(pod) else {
            return;
        };
        let decl = self.api.get(uid).map(|p| p.decl);
        self.api.force_delete(&mut self.sim, &mut self.trace, uid);
        if let Some(i) = decl {
            let d = &self.scenario.pods[i];
            let new: PodUid = self
                .api
                .create(&mut self.sim, &mut self.trace, d.spec.clone(), i);
            self.runtime.register_workload(new, d.behaviour.clone());
            self.runtime.register_volumes(new, &d.spec);
        }
    }

    /// `kubeletRestart`: the process dies now and the next one starts after `downtime`.
    fn kubelet_restart(&mut self, downtime: Dur) {
        self.kubelet_crash();
        let _ = self
            .sim
            .after(downtime, Event::KubeletStart(self.process.epoch));
    }
}

#[cfg(test)]
mod tests {
    use super::DeclIndex;

    const PODS: &str = "\
apiVersion: podsim/v1alpha1
kind: Scenario
metadata:
  name: decl-index
spec:
  horizon: 1h
  pods:
    - replicas: 3
      template:
        metadata: {name: web}
        spec:
          containers:
            - {name: app, image: img:1}
    - template:
        metadata: {name: db}
        spec:
          containers:
            - {name: app, image: img:1}
    - template:
        metadata: {name: a, namespace: other}
        spec:
          containers:
            - {name: app, image: img:1}
";

    #[test]
    fn the_index_finds_each_declaration_as_a_walk_does() {
        let loaded = crate::load_str("decl-index.yaml", PODS, &[]).expect("valid scenario");
        let pods = &loaded.scenario.pods;
        let ix = DeclIndex::new(pods, true);
        let mut names: Vec<&str> = pods.iter().map(|p| p.spec.name.as_str()).collect();
        names.extend(["", "b", "web", "web-", "web-3", "zz", "0"]);
        for name in names {
            let walk = pods.iter().position(|p| p.spec.name == name);
            let got = ix.find(pods, name).map(|d| {
                pods.iter()
                    .position(|p| std::ptr::eq(p, d))
                    .expect("in pods")
            });
            assert_eq!(got, walk, "{name:?}");
        }
        // An index built without a timeline is empty and falls back to the walk.
        let empty = DeclIndex::new(pods, false);
        assert!(empty.0.is_empty());
        assert!(std::ptr::eq(
            empty.find(pods, "db").expect("declared"),
            ix.find(pods, "db").expect("declared")
        ));
    }

    #[test]
    fn equal_names_give_the_first_declaration() {
        let loaded = crate::load_str("decl-index.yaml", PODS, &[]).expect("valid scenario");
        let mut pods = loaded.scenario.pods.clone();
        // Two declarations of one name (in different namespaces, say): the first wins.
        let mut twin = pods[4].clone();
        std::sync::Arc::make_mut(&mut twin.spec).namespace = "third".into();
        pods.push(twin);
        pods.swap(0, 5);
        let ix = DeclIndex::new(&pods, true);
        let first = pods
            .iter()
            .position(|p| p.spec.name == "a")
            .expect("declared");
        let got = ix.find(&pods, "a").expect("declared");
        assert!(std::ptr::eq(got, &pods[first]));
    }
}
