//! `GetPodStatus`: the pod statuses the runtime reports (a relist's inspections and the
//! kubelet's own status calls).

use super::{Container, ContainerId, PodUid, RtPod, Runtime, Sandbox, SandboxId, SPARE_STATUSES};
use crate::model::{RtContainer, RtPodStatus, RtSandbox};
use std::sync::Arc;

impl Runtime {
    /// `GetPodStatus`: sandboxes and containers newest first.
    pub(crate) fn pod_status(&self, uid: PodUid) -> RtPodStatus {
        let Some(p) = self.pods.get(&uid) else {
            return RtPodStatus {
                uid: Some(uid),
                ..Default::default()
            };
        };
        // Statuses are cached per pod (the kubelet's pod cache, sync operations): each
        // list is allocated once at its exact length (counted first), with no spare room
        // and no shrinking copy.
        let sandboxes = self.status_sandboxes(p);
        let containers = self.status_containers(p);
        let mut st = RtPodStatus {
            uid: Some(uid),
            name: p.name.clone(),
            namespace: p.namespace.clone(),
            sandboxes: Vec::with_capacity(sandboxes.clone().count()),
            containers: Vec::with_capacity(containers.clone().count()),
        };
        st.sandboxes.extend(sandboxes.map(rt_sandbox));
        st.containers.extend(containers.map(rt_container));
        debug_assert!(
            st.sandboxes.len() == st.sandboxes.capacity()
                && st.containers.len() == st.containers.capacity(),
            "a pod status's lists are allocated at their exact length"
        );
        st
    }

    /// [`Runtime::pod_status`] in a shared box, for a relist's inspection: a status the
    /// PLEG dropped ([`Runtime::recycle_status`]) is filled anew when there is one (its
    /// box and lists reused, so a list may keep some spare room), else a new one is built.
    /// A kept status is held by no one else when kept, but a clone of the runtime (the
    /// world is plain data and `Clone`) shares its kept statuses with the original: such
    /// a status is left to its other holder and a new one is built.
    pub(super) fn pod_status_shared(&mut self, uid: PodUid) -> Arc<RtPodStatus> {
        let Some(mut shared) = self.spare_statuses.pop() else {
            return Arc::new(self.pod_status(uid));
        };
        let Some(st) = Arc::get_mut(&mut shared) else {
            return Arc::new(self.pod_status(uid));
        };
        match self.pods.get(&uid) {
            Some(p) => {
                st.uid = Some(uid);
                st.name.clone_from(&p.name);
                st.namespace.clone_from(&p.namespace);
                st.sandboxes.clear();
                st.sandboxes
                    .extend(self.status_sandboxes(p).map(rt_sandbox));
                st.containers.clear();
                st.containers
                    .extend(self.status_containers(p).map(rt_container));
            }
            None => *st = self.pod_status(uid),
        }
        // A refilled status is the one a fresh inspection builds (debug builds).
        debug_assert_eq!(*shared, self.pod_status(uid), "a refilled pod status");
        shared
    }

    /// Keep a pod status the PLEG's cache no longer holds, to be refilled by a later
    /// inspection ([`Runtime::pod_status_shared`]), if no one else holds it and fewer than
    /// [`SPARE_STATUSES`] are kept.
    pub(crate) fn recycle_status(&mut self, mut st: Arc<RtPodStatus>) {
        if self.spare_statuses.len() < SPARE_STATUSES && Arc::get_mut(&mut st).is_some() {
            self.spare_statuses.push(st);
        }
    }

    /// A pod status's sandboxes, newest first (those not removed).
    fn status_sandboxes<'a>(
        &'a self,
        p: &'a RtPod,
    ) -> impl Iterator<Item = (&'a SandboxId, &'a Sandbox)> + Clone + 'a {
        p.sandboxes.iter().rev().filter_map(|id| {
            self.sandboxes
                .get(id)
                .filter(|s| !s.removed)
                .map(|s| (id, s))
        })
    }

    /// A pod status's containers, newest first (those not removed).
    fn status_containers<'a>(
        &'a self,
        p: &'a RtPod,
    ) -> impl Iterator<Item = (&'a ContainerId, &'a Container)> + Clone + 'a {
        p.live.iter().rev().filter_map(|id| {
            self.containers
                .get(id)
                .filter(|c| !c.removed)
                .map(|c| (id, c))
        })
    }
}

/// A sandbox as a pod status reports it.
fn rt_sandbox((id, s): (&SandboxId, &Sandbox)) -> RtSandbox {
    RtSandbox {
        id: *id,
        ready: s.ready,
        attempt: s.attempt,
        created_at: s.created_at,
    }
}

/// A container as a pod status reports it.
fn rt_container((id, c): (&ContainerId, &Container)) -> RtContainer {
    RtContainer {
        id: *id,
        name: c.name.clone(),
        state: c.state,
        exit_code: c.exit_code,
        reason: c.reason,
        created_at: c.created_at,
        started_at: c.started_at,
        finished_at: c.finished_at,
        restart_count: c.attempt,
        sandbox: c.sandbox,
    }
}
