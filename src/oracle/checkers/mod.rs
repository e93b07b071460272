//! The checkers: one per concern, each owning the invariants it checks (their table rows,
//! their state, their checks). They see every transition after [`Facts`] took it in, in a
//! fixed order (see [`Checkers`]), and report into [`Findings`].

pub(crate) mod api;
pub(crate) mod eviction;
pub(crate) mod kills;
pub(crate) mod liveness;
pub(crate) mod probes;
pub(crate) mod shutdown;
pub(crate) mod static_pods;
pub(crate) mod sync;
pub(crate) mod teardown;
pub(crate) mod worker;

use super::facts::Facts;
use super::findings::Findings;
use crate::model::{PodUid, ProcessEvent, Transition, WorkerStep};
use crate::sim::{Dur, SimTime};

/// Liveness: time allowed on top of the grace period (sync ticker, PLEG relist, status
/// writes, CRI latencies, one post-kill verification retry).
pub(crate) const SLACK: Dur = Dur::secs(60);
/// Liveness: extra time per failed sync or CRI call of the pod (one pod-worker back-off of
/// 10-15 s, and the retry).
pub(crate) const PER_ERROR: Dur = Dur::secs(20);
/// Node shutdown, killPodNow: slack on a step's deadline (event ordering, latencies).
pub(crate) const STEP_SLACK: Dur = Dur::secs(1);

/// One concern of the oracle.
pub(crate) trait Checker {
    /// One transition, after the facts took it in.
    fn transition(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings);
    /// End of the run: the node-level checks (before any pod's).
    fn finish_node(&mut self, _end: SimTime, _facts: &Facts, _out: &mut Findings) {}
    /// End of the run: the checks of one pod (every pod with a spec, in UID order).
    fn finish_pod(&mut self, _end: SimTime, _uid: PodUid, _facts: &Facts, _out: &mut Findings) {}
}

/// Every checker. The order is the order findings of one transition (or of the end of a
/// run) come in: a container start is checked for static pods before the worker, a CRI
/// call for the worker before the node shutdown; at the end, the shutdown's node checks
/// before the eviction's and the kills', and a pod's API checks before its eviction's and
/// its liveness.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checkers {
    static_pods: static_pods::StaticPods,
    pub worker: worker::WorkerChecker,
    sync: sync::SyncChecker,
    api: api::ApiChecker,
    teardown: teardown::Teardown,
    probes: probes::Probes,
    shutdown: shutdown::Shutdown,
    eviction: eviction::Eviction,
    kills: kills::Kills,
    pub liveness: liveness::Liveness,
}

impl Checkers {
    pub fn transition(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        self.static_pods.transition(at, tr, facts, out);
        self.worker.transition(at, tr, facts, out);
        self.sync.transition(at, tr, facts, out);
        self.api.transition(at, tr, facts, out);
        self.teardown.transition(at, tr, facts, out);
        self.probes.transition(at, tr, facts, out);
        self.shutdown.transition(at, tr, facts, out);
        self.eviction.transition(at, tr, facts, out);
        self.kills.transition(at, tr, facts, out);
        self.liveness.transition(at, tr, facts, out);
    }

    pub fn finish(&mut self, end: SimTime, facts: &Facts, out: &mut Findings) {
        self.shutdown.finish_node(end, facts, out);
        self.eviction.finish_node(end, facts, out);
        self.kills.finish_node(end, facts, out);
        for (i, p) in facts.pods.iter().enumerate() {
            if p.spec.is_none() {
                continue;
            }
            let uid = PodUid(i as u32);
            self.api.finish_pod(end, uid, facts, out);
            self.eviction.finish_pod(end, uid, facts, out);
            self.liveness.finish_pod(end, uid, facts, out);
        }
    }
}

/// Per-pod state of one checker, by UID.
#[derive(Clone, Debug, Default)]
pub(crate) struct PerPod<T>(Vec<T>);

impl<T: Default> PerPod<T> {
    pub fn at(&mut self, uid: PodUid) -> &mut T {
        let i = uid.0 as usize;
        if self.0.len() <= i {
            self.0.resize_with(i + 1, T::default);
        }
        &mut self.0[i]
    }
    pub fn get(&self, uid: PodUid) -> Option<&T> {
        self.0.get(uid.0 as usize)
    }
    /// Back to the default for `uid`.
    pub fn reset(&mut self, uid: PodUid) {
        if let Some(x) = self.0.get_mut(uid.0 as usize) {
            *x = T::default();
        }
    }
    pub fn reset_all(&mut self) {
        for x in &mut self.0 {
            *x = T::default();
        }
    }
}

/// The kubelet process died: what the process knew is gone.
pub(crate) fn crashed(tr: &Transition) -> bool {
    matches!(
        tr,
        Transition::KubeletProcess {
            what: ProcessEvent::Crashed,
            ..
        }
    )
}

/// The pod's worker record was removed (what it went through is gone): its UID.
pub(crate) fn record_removed(tr: &Transition) -> Option<PodUid> {
    match tr {
        Transition::Worker {
            uid,
            what:
                WorkerStep::RuntimePodRecordRemoved
                | WorkerStep::Forgotten
                | WorkerStep::OrphanNeverStarted,
        } => Some(*uid),
        _ => None,
    }
}
