//! `convertToAPIContainerStatuses` (`pkg/kubelet/kubelet_pods.go`, v1.31): the API's
//! container statuses (regular or init) from the runtime's view, the previous statuses and
//! the reason cache; and `ShouldContainerBeRestarted` (`pkg/kubelet/container/helpers.go`),
//! which it consults.

use super::Kubelet;
use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, PodUid, RestartPolicy, RtPodStatus, RtState,
};
use std::collections::BTreeMap;

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

/// `reasonCache.Update` for one container: the entry of (`uid`, `name`) becomes `reason`.
/// An entry already there is overwritten in place, so the owned key is built only for a
/// new entry (a crash loop sets the same entry at every sync in back-off).
pub(super) fn set_cached_reason(
    cache: &mut BTreeMap<(PodUid, String), &'static str>,
    uid: PodUid,
    name: &str,
    reason: &'static str,
) {
    let held = cache
        .range_mut((uid, String::new())..)
        .take_while(|((u, _), _)| *u == uid)
        .find(|((_, n), _)| n == name);
    match held {
        Some((_, r)) => *r = reason,
        None => {
            cache.insert((uid, name.to_owned()), reason);
        }
    }
}

impl Kubelet {
    /// The reason cache's entry for a container, looked up without building an owned key
    /// (the cache is keyed by UID then name, so the UID's entries are one range).
    fn cached_reason(&self, uid: PodUid, name: &str) -> Option<&'static str> {
        let found = self
            .reason_cache
            .range((uid, String::new())..)
            .take_while(|((u, _), _)| *u == uid)
            .find(|((_, n), _)| n == name)
            .map(|(_, r)| *r);
        debug_assert_eq!(
            found,
            self.reason_cache.get(&(uid, name.to_owned())).copied(),
            "reason cache range lookup disagrees with the keyed lookup"
        );
        found
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
            let mut s = ApiContainerStatus {
                name: c.name.clone(),
                state: ApiContainerState::Waiting {
                    reason: default_reason,
                },
                last_state: None,
                restart_count: 0,
                ready: false,
                started: false,
                container_id: None,
            };
            // The previous status and the runtime's containers of this name are each looked
            // up once (upstream: the old-status map and the runtime status's list).
            let prev = old.iter().find(|o| o.name == c.name);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_cached_reason_is_a_keyed_insert() {
        let mut fast = BTreeMap::new();
        let mut keyed = BTreeMap::new();
        let steps = [
            (2, "app", "CrashLoopBackOff"),
            (2, "app", "CrashLoopBackOff"),
            (1, "app", "ErrImagePull"),
            (2, "side", "ImagePullBackOff"),
            (2, "app", "ImagePullBackOff"),
            (3, "", "RunContainerError"),
            (2, "ap", "CrashLoopBackOff"),
            (2, "side", "CrashLoopBackOff"),
        ];
        for (u, name, reason) in steps {
            set_cached_reason(&mut fast, PodUid(u), name, reason);
            keyed.insert((PodUid(u), name.to_owned()), reason);
            assert_eq!(fast, keyed);
        }
    }
}
