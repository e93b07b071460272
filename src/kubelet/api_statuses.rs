//! `convertToAPIContainerStatuses` (`pkg/kubelet/kubelet_pods.go`, v1.31): the API's
//! container statuses (regular or init) from the runtime's view, the previous statuses and
//! the reason cache; and `ShouldContainerBeRestarted` (`pkg/kubelet/container/helpers.go`),
//! which it consults.

use super::Kubelet;
use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, PodUid, RestartPolicy, RtPodStatus, RtState,
};
use std::sync::Arc;

/// `ShouldContainerBeRestarted` (pkg/kubelet/container/helpers.go).
pub(crate) fn should_container_be_restarted(
    name: &str,
    pod: &ApiPod,
    status: &RtPodStatus,
) -> bool {
    if pod.deletion_timestamp.is_some() {
        return false;
    }
    let Some(c) = status.find(name) else {
        return true;
    };
    match c.state {
        RtState::Running => false,
        RtState::Unknown | RtState::Created => true,
        RtState::Exited => match pod.spec.restart_policy {
            RestartPolicy::Never => false,
            RestartPolicy::OnFailure => c.exit_code != 0,
            RestartPolicy::Always => true,
        },
    }
}

pub(super) fn rt_to_api(c: &crate::model::RtContainer) -> ApiContainerState {
    match c.state {
        RtState::Running => ApiContainerState::Running {
            started_at: c.started_at.unwrap_or(c.created_at),
        },
        RtState::Exited => ApiContainerState::Terminated {
            exit_code: c.exit_code,
            reason: c.reason,
            started_at: c.started_at,
            finished_at: c.finished_at,
        },
        RtState::Created | RtState::Unknown => ApiContainerState::Waiting { reason: "" },
    }
}

/// The container names given lately to a container's first status (most recently used
/// first): pods are made from a few templates, so a handful of names stand for every
/// container, and a new pod's first status shares them instead of copying its spec's. Only
/// memory changes: a name is compared and printed as its text.
#[derive(Clone, Debug, Default)]
pub(crate) struct RecentNames(std::cell::RefCell<Vec<Arc<str>>>);

impl RecentNames {
    /// The name `name`, shared with an equal one kept here.
    fn shared(&self, name: &str) -> Arc<str> {
        /// Distinct names kept.
        const KEEP: usize = 16;
        let mut recent = self.0.borrow_mut();
        if let Some(i) = recent.iter().position(|n| **n == *name) {
            let n = Arc::clone(&recent[i]);
            recent[..=i].rotate_right(1);
            return n;
        }
        let n: Arc<str> = Arc::from(name);
        if recent.len() == KEEP {
            recent.pop();
        }
        recent.insert(0, Arc::clone(&n));
        n
    }
}

impl Kubelet {
    /// The reason cache's entry for a container (`reason_cache.rs`).
    fn cached_reason(&self, uid: PodUid, name: &str) -> Option<&'static str> {
        self.reason_cache.get(uid, name)
    }

    /// `convertToAPIContainerStatuses` for one list of containers (regular or init).
    pub(super) fn convert_statuses(
        &self,
        pod: &ApiPod,
        rt: &RtPodStatus,
        old: &[ApiContainerStatus],
        specs: &[crate::model::ContainerSpec],
        default_reason: &'static str,
    ) -> Vec<ApiContainerStatus> {
        let mut statuses: Vec<ApiContainerStatus> = Vec::with_capacity(specs.len());
        for c in specs {
            // The previous status and the runtime's containers of this name are each looked
            // up once (upstream: the old-status map and the runtime status's list).
            let prev = old.iter().find(|o| *o.name == *c.name);
            // The name is shared with the previous status of this container (found by that
            // very name), or for a first status with an equal name given lately.
            let name = prev.map_or_else(
                || self.status.recent_names.shared(&c.name),
                |o| Arc::clone(&o.name),
            );
            debug_assert_eq!(*name, *c.name, "a shared container name is the spec's");
            let mut s = ApiContainerStatus {
                name,
                state: ApiContainerState::Waiting {
                    reason: default_reason,
                },
                last_state: None,
                restart_count: 0,
                ready: false,
                started: false,
                container_id: None,
            };
            if let Some(o) = prev {
                if o.state.is_terminated() {
                    s = o.clone();
                } else {
                    s.restart_count = o.restart_count;
                    s.last_state.clone_from(&o.last_state);
                }
            }
            let mut in_runtime = false;
            for (seen, rc) in rt
                .containers
                .iter()
                .filter(|r| *r.name == *c.name)
                .enumerate()
            {
                in_runtime = true;
                if seen == 0 {
                    s.state = rt_to_api(rc);
                    s.restart_count = rc.restart_count;
                    s.container_id = Some(rc.id);
                    s.last_state = None;
                } else if seen == 1 {
                    s.last_state = Some(rt_to_api(rc));
                } else {
                    break;
                }
            }
            // Gone from the runtime while it was running: it terminated, code unknown.
            if !in_runtime {
                if let Some(o) = prev {
                    if o.state.is_running() && s.last_state.is_none() && !s.state.is_terminated() {
                        s.last_state = Some(ApiContainerState::Terminated {
                            exit_code: 137,
                            reason: "ContainerStatusUnknown",
                            started_at: None,
                            finished_at: None,
                        });
                        if pod.deletion_timestamp.is_none() {
                            s.restart_count += 1;
                        }
                    }
                }
            }
            if should_container_be_restarted(&c.name, pod, rt) {
                if let Some(reason) = self.cached_reason(pod.uid, &c.name) {
                    if s.state.is_terminated() {
                        s.last_state = Some(s.state.clone());
                    }
                    s.state = ApiContainerState::Waiting { reason };
                }
            }
            s.ready = false;
            s.started = false;
            statuses.push(s);
        }
        statuses
    }
}
