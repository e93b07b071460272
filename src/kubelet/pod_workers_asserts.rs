//! The pod worker record's state-machine rules are checked in every build: breaking one
//! panics with a message naming the rule (the run's caller then prints the replay line).

use crate::kubelet::pod_workers::{PodSyncStatus, WorkType};
use crate::sim::SimTime;

fn record() -> PodSyncStatus {
    PodSyncStatus::new("p_default".into(), SimTime(0))
}

#[test]
fn a_worker_goes_syncing_terminating_terminated_finished() {
    let mut st = record();
    st.mark_started(SimTime(1));
    st.request_termination(SimTime(2));
    st.acknowledge_termination();
    st.mark_terminated(SimTime(3));
    assert_eq!(st.work_type(), WorkType::Terminated);
    st.has_worker = true;
    st.mark_finished();
    assert!(st.is_finished() && !st.has_worker);
    assert_eq!(
        (st.started_at, st.terminating_at, st.terminated_at),
        (Some(SimTime(1)), Some(SimTime(2)), Some(SimTime(3)))
    );
}

#[test]
#[should_panic(expected = "termination is requested once")]
fn termination_is_requested_once() {
    let mut st = record();
    st.request_termination(SimTime(1));
    st.request_termination(SimTime(2));
}

#[test]
#[should_panic(expected = "never goes back from terminated to terminating")]
fn a_terminated_worker_never_goes_back_to_terminating() {
    let mut st = record();
    st.terminate_on_first_sight(SimTime(1));
    st.request_termination(SimTime(2));
}

#[test]
#[should_panic(expected = "only a terminating worker becomes terminated")]
fn a_syncing_worker_is_not_terminated_directly() {
    let mut st = record();
    st.mark_terminated(SimTime(1));
}

#[test]
#[should_panic(expected = "only a terminated worker finishes")]
fn a_worker_finishes_only_once_terminated() {
    let mut st = record();
    st.request_termination(SimTime(1));
    st.mark_finished();
}

#[test]
#[should_panic(expected = "a worker starts once")]
fn a_worker_starts_once() {
    let mut st = record();
    st.mark_started(SimTime(1));
    st.mark_started(SimTime(2));
}

#[test]
fn the_grace_period_only_shortens_with_the_zero_override_fix() {
    let mut st = record();
    st.set_grace_period(30, true);
    st.set_grace_period(10, true);
    // v1.22-v1.26 (issue 115819): an explicit 0 falls back to the spec, which lengthens.
    st.set_grace_period(30, false);
    assert_eq!(st.grace_period, 30);
    let lengthen = std::panic::catch_unwind(move || {
        let mut st = st;
        st.set_grace_period(40, true)
    });
    assert!(lengthen.is_err());
}
