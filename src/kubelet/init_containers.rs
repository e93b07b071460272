//! Init containers and native sidecars in the runtime manager's action computation.
//!
//! Follows `pkg/kubelet/kuberuntime/kuberuntime_container.go` (v1.31,
//! `computeInitContainerActions`, `isInitContainerFailed`, `hasAnyRegularContainerCreated`)
//! with the `SidecarContainers` gate on, as it is by default in v1.31: init containers are
//! walked from the last one back; while the pod is not yet initialized the last one with a
//! runtime status decides (a classic init container that completed starts
//! the next one, one that failed restarts under the pod's policy or fails the pod under
//! `Never`; a sidecar that is started (running, and past its startup probe if it has one)
//! lets the next one start), and the ones before it only keep their sidecars running. Once
//! any regular container exists in the sandbox, classic init
//! containers are never looked at again (so they are not re-run after a kubelet restart
//! while the sandbox lives), and sidecars are restarted whenever they exit, whatever the
//! pod's restart policy. A container whose runtime state is unknown is restarted as a
//! created one would be (podsim's runtime never reports that state).
//!
//! That guard came with PR 96572 (v1.20; issues 62362, 90271): before it, the walk looked
//! only at init containers, so once the container garbage collector (or anyone) removed
//! a running pod's exited init containers, the kubelet ran them again beside the running
//! app containers and the pod went back to `Pending`. Switch
//! `initContainersNotRerunAfterAppStart` off restores that.

use super::prober::{ProbeManager, ProbeResult};
use crate::model::{ApiPod, ContainerId, ProbeType, RestartPolicy, RtContainer, RtPodStatus};
use crate::model::{ContainerSpec, RtState};

/// What `computeInitContainerActions` decides: init containers to start (spec indices, in
/// spec order), running sidecars to kill first (id, name, failed probe), whether the pod is
/// to be killed (a classic init container failed under `Never`), and whether the pod has
/// been initialized (regular containers may be looked at).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct InitActions {
    pub(crate) to_start: Vec<usize>,
    pub(crate) to_kill: Vec<(ContainerId, String, ProbeType)>,
    pub(crate) kill_pod: bool,
    pub(crate) initialized: bool,
}

/// `isInitContainerFailed`.
pub(crate) fn is_init_container_failed(s: &RtContainer) -> bool {
    s.reason == "OOMKilled"
        || (s.state == RtState::Exited && s.exit_code != 0)
        || s.state == RtState::Unknown
}

/// `hasAnyRegularContainerCreated`: a regular container has a runtime status (created,
/// running or exited).
pub(crate) fn has_any_regular_container_created(pod: &ApiPod, status: &RtPodStatus) -> bool {
    pod.spec.containers.iter().any(|c| {
        status.find(&c.name).is_some_and(|s| {
            matches!(
                s.state,
                RtState::Created | RtState::Running | RtState::Exited
            )
        })
    })
}

/// The pod counts as initialized before the walk when a regular container is created or
/// running in the runtime (exited ones do not count: they may be left from a sandbox that
/// died, e.g. across a node reboot).
fn previously_initialized(pod: &ApiPod, status: &RtPodStatus) -> bool {
    pod.spec.containers.iter().any(|c| {
        status
            .find(&c.name)
            .is_some_and(|s| matches!(s.state, RtState::Created | RtState::Running))
    })
}

/// `computeInitContainerActions`, reading liveness and startup results of sidecars;
/// `rerun_guard` false: the walk before PR 96572 (regular containers are not looked at).
pub(crate) fn compute_init_container_actions(
    pod: &ApiPod,
    status: &RtPodStatus,
    probes: Option<&ProbeManager>,
    rerun_guard: bool,
) -> InitActions {
    let mut a = InitActions::default();
    let inits = &pod.spec.init_containers;
    if inits.is_empty() {
        a.initialized = true;
        return a;
    }
    // Whether the containers before the one looked at have been initialized: true from
    // the start once a regular container exists, else from the newest init container with
    // a runtime status on (the walk then only keeps sidecars running).
    let mut previously = rerun_guard && previously_initialized(pod, status);
    a.initialized = previously;
    let restart_on_failure = pod.spec.restart_policy != RestartPolicy::Never;
    let result = |kind: ProbeType, id: ContainerId| probes.and_then(|p| p.results(kind).get(id));
    let last = inits.len() - 1;
    for i in (0..inits.len()).rev() {
        let c = &inits[i];
        let Some(s) = status.find(&c.name) else {
            // Gone from the runtime after initialization: only a sidecar comes back.
            if previously && c.is_sidecar() {
                a.to_start.push(i);
            }
            continue;
        };
        if previously && !c.is_sidecar() {
            continue;
        }
        match s.state {
            RtState::Created | RtState::Unknown => a.to_start.push(i),
            RtState::Running if c.is_sidecar() => {
                sidecar_running(&mut a, c, s, i, last, previously, &result);
            }
            RtState::Running => {}
            RtState::Exited if c.is_sidecar() => a.to_start.push(i),
            RtState::Exited => {
                if is_init_container_failed(s) {
                    if !restart_on_failure {
                        a.kill_pod = true;
                        a.to_start.clear();
                        return a;
                    }
                    a.to_start.push(i);
                } else if i == last {
                    a.initialized = true;
                } else {
                    a.to_start.push(i + 1);
                }
            }
        }
        previously = true;
    }
    if !previously {
        // No init container has a status yet: the first one starts.
        a.to_start.push(0);
    }
    a.to_start.reverse();
    a
}

/// A running sidecar: wait for its startup probe, restart it when a startup or liveness
/// probe failed, else it counts as started and lets the next init container start.
fn sidecar_running(
    a: &mut InitActions,
    c: &ContainerSpec,
    s: &RtContainer,
    i: usize,
    last: usize,
    previously: bool,
    result: &dyn Fn(ProbeType, ContainerId) -> Option<ProbeResult>,
) {
    if c.startup_probe.is_some() {
        match result(ProbeType::Startup, s.id) {
            Some(ProbeResult::Success) => {}
            Some(ProbeResult::Failure) => {
                a.to_kill.push((s.id, c.name.clone(), ProbeType::Startup));
                a.to_start.push(i);
                return;
            }
            _ => return,
        }
    }
    if i == last {
        a.initialized = true;
    } else if !previously {
        a.to_start.push(i + 1);
    }
    if c.liveness_probe.is_some() && result(ProbeType::Liveness, s.id) == Some(ProbeResult::Failure)
    {
        a.to_kill.push((s.id, c.name.clone(), ProbeType::Liveness));
        a.to_start.push(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{PodSpec, PodUid, RtSandbox, SandboxId};
    use crate::sim::SimTime;

    fn sidecar(name: &str) -> ContainerSpec {
        let mut c = ContainerSpec::named(name, "img:1");
        c.restart_policy = crate::model::ContainerRestart(Some(RestartPolicy::Always));
        c
    }

    fn pod(policy: RestartPolicy, inits: Vec<ContainerSpec>) -> ApiPod {
        let c = vec![ContainerSpec::named("app", "img:1")];
        let mut spec = PodSpec::new("p", "default", policy, c);
        spec.init_containers = inits.into();
        ApiPod::new(PodUid(1), spec)
    }

    fn rt(list: &[(&str, RtState, i32)]) -> RtPodStatus {
        RtPodStatus {
            uid: Some(PodUid(1)),
            sandboxes: vec![RtSandbox {
                id: SandboxId(1),
                ready: true,
                attempt: 0,
                created_at: SimTime::ZERO,
            }],
            containers: list
                .iter()
                .enumerate()
                .map(|(k, (n, st, code))| RtContainer {
                    id: ContainerId(k as u32 + 1),
                    name: (*n).into(),
                    state: *st,
                    exit_code: *code,
                    reason: "",
                    created_at: SimTime::ZERO,
                    started_at: Some(SimTime::ZERO),
                    finished_at: None,
                    restart_count: 0,
                    sandbox: crate::model::SandboxId(1),
                })
                .collect(),
            ..Default::default()
        }
    }

    fn two_inits() -> Vec<ContainerSpec> {
        vec![
            ContainerSpec::named("i0", "img:1"),
            ContainerSpec::named("i1", "img:1"),
        ]
    }

    #[test]
    fn classic_init_containers_run_one_at_a_time_in_order() {
        let p = pod(RestartPolicy::Always, two_inits());
        let a = compute_init_container_actions(&p, &rt(&[]), None, true);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![0], false));
        // Running: wait for it.
        let a = compute_init_container_actions(&p, &rt(&[("i0", RtState::Running, 0)]), None, true);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![], false));
        // Completed: the next one.
        let a = compute_init_container_actions(&p, &rt(&[("i0", RtState::Exited, 0)]), None, true);
        assert_eq!(a.to_start, vec![1]);
        let done = rt(&[("i1", RtState::Exited, 0), ("i0", RtState::Exited, 0)]);
        let a = compute_init_container_actions(&p, &done, None, true);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![], true));
    }

    #[test]
    fn failed_init_container_restarts_or_kills_the_pod() {
        let failed = rt(&[("i0", RtState::Exited, 1)]);
        let a = compute_init_container_actions(
            &pod(RestartPolicy::OnFailure, two_inits()),
            &failed,
            None,
            true,
        );
        assert_eq!((a.to_start.clone(), a.kill_pod), (vec![0], false));
        let a = compute_init_container_actions(
            &pod(RestartPolicy::Never, two_inits()),
            &failed,
            None,
            true,
        );
        assert!(a.kill_pod && a.to_start.is_empty() && !a.initialized);
    }

    #[test]
    fn completed_init_containers_are_not_rerun_once_an_app_container_runs() {
        let p = pod(RestartPolicy::Always, two_inits());
        // The init containers are gone from the runtime (or exited): not re-run.
        let s = rt(&[("app", RtState::Running, 0)]);
        let a = compute_init_container_actions(&p, &s, None, true);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![], true));
        let s = rt(&[("app", RtState::Running, 0), ("i0", RtState::Exited, 1)]);
        assert!(compute_init_container_actions(&p, &s, None, true)
            .to_start
            .is_empty());
        // Before PR 96572 the walk does not look at the app container: init containers
        // the garbage collector removed run again from the first one.
        let s = rt(&[("app", RtState::Running, 0)]);
        let a = compute_init_container_actions(&p, &s, None, false);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![0], false));
        // With the last one still listed it counts as done, guard or not.
        let s = rt(&[("app", RtState::Running, 0), ("i1", RtState::Exited, 0)]);
        let a = compute_init_container_actions(&p, &s, None, false);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![], true));
    }

    #[test]
    fn sidecars_start_the_next_one_and_restart_whatever_the_policy() {
        let p = pod(
            RestartPolicy::Never,
            vec![sidecar("s0"), ContainerSpec::named("i1", "img:1")],
        );
        let a = compute_init_container_actions(&p, &rt(&[("s0", RtState::Running, 0)]), None, true);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![1], false));
        // Initialized (app running): an exited sidecar restarts under Never; a gone one too.
        let s = rt(&[("app", RtState::Running, 0), ("s0", RtState::Exited, 1)]);
        let a = compute_init_container_actions(&p, &s, None, true);
        assert_eq!((a.to_start.clone(), a.initialized), (vec![0], true));
        let a =
            compute_init_container_actions(&p, &rt(&[("app", RtState::Running, 0)]), None, true);
        assert_eq!(a.to_start, vec![0]);
    }

    #[test]
    fn sidecar_waits_for_its_startup_probe_and_is_killed_on_probe_failure() {
        let mut sc = sidecar("s0");
        sc.startup_probe = Some(Default::default());
        sc.liveness_probe = Some(Default::default());
        let p = pod(
            RestartPolicy::Always,
            vec![sc, ContainerSpec::named("i1", "img:1")],
        );
        let s = rt(&[("s0", RtState::Running, 0)]);
        let mut pm = ProbeManager::new(1);
        let a = compute_init_container_actions(&p, &s, Some(&pm), true);
        assert!(a.to_start.is_empty() && !a.initialized);
        pm.startup
            .set(ContainerId(1), ProbeResult::Success, PodUid(1));
        let a = compute_init_container_actions(&p, &s, Some(&pm), true);
        assert_eq!(a.to_start, vec![1]);
        pm.liveness
            .set(ContainerId(1), ProbeResult::Failure, PodUid(1));
        let a = compute_init_container_actions(&p, &s, Some(&pm), true);
        assert_eq!(a.to_start, vec![0, 1]);
        assert_eq!(a.to_kill[0].2, ProbeType::Liveness);
    }
}
