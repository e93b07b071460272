//! Unit tests of the probe worker record (`worker.rs`).

use super::*;
use crate::model::{ApiContainerStatus, PodPhase};

fn status(phase: PodPhase, state: ApiContainerState, id: Option<u32>) -> ApiPodStatus {
    ApiPodStatus {
        phase,
        containers: vec![ApiContainerStatus {
            name: "app".into(),
            state,
            last_state: None,
            restart_count: 0,
            ready: false,
            started: true,
            container_id: id.map(ContainerId),
        }],
        ..ApiPodStatus::default()
    }
}

/// A one-container pod (`app`) and the key of a liveness probe on its container.
fn app_pod_and_liveness_key() -> (Arc<ApiPod>, ProbeKey) {
    let spec = crate::model::PodSpec::new(
        "p",
        "default",
        RestartPolicy::Always,
        vec![crate::model::ContainerSpec::named("app", "img")],
    );
    let pod = Arc::new(ApiPod::new(crate::model::PodUid(1), spec));
    let key = ProbeKey {
        uid: crate::model::PodUid(1),
        container: Arc::from("app"),
        kind: ProbeType::Liveness,
    };
    (pod, key)
}

#[test]
fn a_steady_probe_reads_only_the_first_line_of_its_worker() {
    // The fields of the kept `Probe` transition that a probe writes and hashes lie in
    // the worker's first line (its tag is checked where it is compared: the start of
    // `rec`, at offset 32).
    let (pod, key) = app_pod_and_liveness_key();
    let w = Worker::new(1, key, &pod, &Probe::default(), StatusView::NoStatus);
    let base = &w as *const Worker as usize;
    let Transition::Probe {
        uid, kind, result, ..
    } = &w.rec
    else {
        panic!("a worker keeps a Probe transition");
    };
    let end = |p: usize, n: usize| p + n - base;
    assert!(end(uid as *const _ as usize, 4) <= 64);
    assert!(end(kind as *const _ as usize, 1) <= 64);
    assert!(end(result as *const _ as usize, 1) <= 64);
}

#[test]
fn initial_delay_in_nanoseconds_is_the_whole_seconds_test() {
    // `doProbe` compares the whole seconds the container ran with the field; the worker
    // compares nanoseconds with the field as a duration: the same answer everywhere.
    for delay in [0u32, 1, 2, 7, 3600, u32::MAX] {
        let d = Dur::secs(u64::from(delay));
        for ran in [
            0,
            1,
            999_999_999,
            1_000_000_000,
            1_000_000_001,
            7_500_000_000,
        ]
        .into_iter()
        .chain([d.0.saturating_sub(1), d.0, d.0.saturating_add(1)])
        {
            let ran = Dur(ran);
            assert_eq!(
                ran < d,
                ran.whole_secs() < u64::from(delay),
                "ran {ran:?}, delay {delay} s"
            );
        }
    }
}

#[test]
fn status_view_reads_what_do_probe_needs() {
    let t = SimTime(5);
    let running = ApiContainerState::Running { started_at: t };
    let gone = ApiContainerState::Terminated {
        exit_code: 1,
        reason: "Error",
        started_at: Some(t),
        finished_at: Some(t),
    };
    assert_eq!(StatusView::of(None, "app"), StatusView::NoStatus);
    let s = status(PodPhase::Failed, running.clone(), Some(3));
    assert_eq!(StatusView::of(Some(&s), "app"), StatusView::Terminal);
    let s = status(PodPhase::Running, running.clone(), Some(3));
    assert_eq!(StatusView::of(Some(&s), "other"), StatusView::NoContainer);
    assert_eq!(
        StatusView::of(Some(&s), "app"),
        StatusView::Container {
            id: ContainerId(3),
            running_since: Some(t),
            terminated: false,
            started: true,
        }
    );
    let s = status(PodPhase::Running, running, None);
    assert_eq!(StatusView::of(Some(&s), "app"), StatusView::NoContainer);
    let s = status(PodPhase::Running, gone, Some(4));
    assert_eq!(
        StatusView::of(Some(&s), "app"),
        StatusView::Container {
            id: ContainerId(4),
            running_since: None,
            terminated: true,
            started: true,
        }
    );
}

#[test]
fn a_worker_told_to_stop_leaves_the_steady_path() {
    // A steady worker (its container running, known and started) probes at once; once a
    // stop waits in its channel, a tick takes the step-by-step path (which probes, then
    // exits). Debug builds check the first line's answers at each `probes_now`.
    let (pod, key) = app_pod_and_liveness_key();
    let running = ApiContainerState::Running {
        started_at: SimTime(5),
    };
    let s = status(PodPhase::Running, running, Some(3));
    let view = StatusView::of(Some(&s), "app");
    let mut w = Worker::new(1, key, &pod, &Probe::default(), view);
    let _ = w.take_container(ContainerId(3));
    let now = SimTime(3_600_000_000_000);
    assert_eq!(
        w.probes_now(now),
        Some(ContainerId(3)),
        "steady before the stop"
    );
    w.set_stop_pending();
    assert_eq!(
        w.probes_now(now),
        None,
        "a worker told to stop is not steady"
    );
}
