//! Coverage for the guided search, read from a run's typed transitions: the set of
//! (pod worker state, transition kind) pairs the run went through, plus its reach points;
//! and, per pod, the kinds of its last transitions (a finding's signature).
//!
//! The worker state is what the pod's worker record was in when the transition happened,
//! derived from the worker's own steps (`Worker` transitions) the way the oracle's facts
//! track them: no record, recorded but not started, started (syncing), terminating,
//! terminated, finished, gone. Transitions about the node (relist, housekeeping, logind,
//! shutdown ...) pair with `Node`. The kind is the transition's variant and the word that
//! says what happened (the worker step, the CRI call with `!` when it failed, the sync
//! kind, the phase written ...), never a time, a UID or a count, so that a pair means the
//! same thing in every run.

use crate::model::{PodUid, Transition, WorkerStep};
use crate::sim::SimTime;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The state of a pod's worker record when a transition happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum WState {
    Node,
    NoRecord,
    Recorded,
    Started,
    Terminating,
    Terminated,
    Finished,
    Gone,
}

/// A transition kind: its variant and the word saying what happened ("" when none).
pub(crate) type Kind = (&'static str, &'static str);

/// One coverage pair.
pub(crate) type Pair = (WState, Kind);

/// Transitions of a pod kept for signatures (the finding's time picks the last few).
const RING: usize = 48;
/// Transitions in a finding's signature.
pub(crate) const SIGNATURE_LEN: usize = 4;

/// Watches one run's typed transitions.
#[derive(Debug, Default)]
pub(crate) struct Observer {
    pub(crate) pairs: BTreeSet<Pair>,
    states: BTreeMap<PodUid, WState>,
    names: BTreeMap<PodUid, String>,
    /// Pod name -> its last transitions (time, kind), oldest first.
    recent: BTreeMap<String, VecDeque<(SimTime, Kind)>>,
}

impl Observer {
    pub(crate) fn see(&mut self, batch: &[(SimTime, Transition)]) {
        for (t, tr) in batch {
            self.one(*t, tr);
        }
    }

    fn one(&mut self, t: SimTime, tr: &Transition) {
        let (uid, k) = kind(tr);
        if let Transition::ApiCreated { uid, name, .. } = tr {
            self.names.insert(*uid, name.clone());
        }
        if let Transition::KubeletProcess { .. } = tr {
            // A new process starts with no worker records.
            self.states.clear();
        }
        let state = match uid {
            None => WState::Node,
            Some(u) => *self.states.get(&u).unwrap_or(&WState::NoRecord),
        };
        self.pairs.insert((state, k));
        if let (Some(u), Transition::Worker { what, .. }) = (uid, tr) {
            if let Some(next) = after(*what) {
                self.states.insert(u, next);
            }
        }
        if let Some(name) = uid.and_then(|u| self.names.get(&u)) {
            let ring = self.recent.entry(name.clone()).or_default();
            if ring.len() == RING {
                ring.pop_front();
            }
            ring.push_back((t, k));
        }
    }

    /// The signature of a finding on `pod` at `at_ns`: the kinds of the pod's last
    /// [`SIGNATURE_LEN`] transitions up to then.
    pub(crate) fn signature(&self, pod: &str, at_ns: u64) -> String {
        let Some(ring) = self.recent.get(pod) else {
            return String::new();
        };
        let upto: Vec<&Kind> = ring
            .iter()
            .filter(|(t, _)| t.0 <= at_ns)
            .map(|(_, k)| k)
            .collect();
        let from = upto.len().saturating_sub(SIGNATURE_LEN);
        upto[from..]
            .iter()
            .map(|(v, w)| {
                if w.is_empty() {
                    (*v).to_string()
                } else {
                    format!("{v} {w}")
                }
            })
            .collect::<Vec<_>>()
            .join(" > ")
    }
}

/// The worker state a worker step leaves the record in (`None`: unchanged).
fn after(step: WorkerStep) -> Option<WState> {
    use WorkerStep::*;
    Some(match step {
        Record => WState::Recorded,
        Started => WState::Started,
        TerminationRequested | OrphanTerminationRequested | TerminalTerminating => {
            WState::Terminating
        }
        FirstSightTerminal | TerminationAcknowledged | Terminated | V121TreatedAsTerminated => {
            WState::Terminated
        }
        Finished | FinishedNeverStarted => WState::Finished,
        RuntimePodRecordRemoved | Forgotten | OrphanNeverStarted | V121Forgotten => WState::Gone,
        RestartWhileTerminating | StaticPodBlocked => return None,
    })
}

/// The pod a transition is about (if any) and its kind.
fn kind(tr: &Transition) -> (Option<PodUid>, Kind) {
    use Transition::*;
    match tr {
        ApiCreated { uid, .. } => (Some(*uid), ("ApiCreated", "")),
        ApiDeleteRequested { uid, grace } => (
            Some(*uid),
            ("ApiDeleteRequested", if *grace == 0 { "0" } else { "" }),
        ),
        ApiForceDeleted { uid } => (Some(*uid), ("ApiForceDeleted", "")),
        ApiStatus { uid, phase, .. } => (Some(*uid), ("ApiStatus", phase.as_str())),
        ApiRemoved { uid, by } => (Some(*uid), ("ApiRemoved", by.as_str())),
        WatchDelivered { uid, kind } => (Some(*uid), ("WatchDelivered", kind.as_str())),
        CriBegin { uid, call, .. } => (Some(*uid), ("CriBegin", call.as_str())),
        CriEnd {
            uid, call, error, ..
        } => (
            Some(*uid),
            (
                if error.is_some() { "CriEnd!" } else { "CriEnd" },
                call.as_str(),
            ),
        ),
        SandboxReady { uid, .. } => (Some(*uid), ("SandboxReady", "")),
        SandboxStopped { uid, .. } => (Some(*uid), ("SandboxStopped", "")),
        ContainerRunning { uid, .. } => (Some(*uid), ("ContainerRunning", "")),
        Signal { uid, signal, .. } => (Some(*uid), ("Signal", signal.as_str())),
        ContainerExited { uid, reason, .. } => (Some(*uid), ("ContainerExited", reason)),
        Host { uid, what } => (Some(*uid), ("Host", what.as_str())),
        Logind { .. } => (None, ("Logind", "")),
        PowerOff { cause, .. } => (None, ("PowerOff", cause.as_str())),
        NodeMemoryAvailable { .. } => (None, ("NodeMemoryAvailable", "")),
        NodeFsPinned { imagefs, .. } => (
            None,
            ("NodeFsPinned", if *imagefs { "imagefs" } else { "nodefs" }),
        ),
        NodePidAvailable { .. } => (None, ("NodePidAvailable", "")),
        ImageRemoved { .. } => (None, ("ImageRemoved", "")),
        NodeReclaim { step, .. } => (None, ("NodeReclaim", step.as_str())),
        ImageGc { .. } => (None, ("ImageGc", "")),
        PodRejected { uid, reason } => (Some(*uid), ("PodRejected", reason.as_str())),
        NodeCondition { condition, .. } => (None, ("NodeCondition", condition.as_str())),
        Evict { uid, signal, .. } => (Some(*uid), ("Evict", signal.as_str())),
        Eviction { uid, what } => (Some(*uid), ("Eviction", what.as_str())),
        ConfigOp { uid, op } => (Some(*uid), ("ConfigOp", op.as_str())),
        UpdatePod { uid, ty, .. } => (Some(*uid), ("UpdatePod", ty.as_str())),
        Worker { uid, what } => (Some(*uid), ("Worker", what.as_str())),
        SyncBegin { uid, kind, .. } => (Some(*uid), ("SyncBegin", kind.as_str())),
        SyncEnd {
            uid, kind, error, ..
        } => (
            Some(*uid),
            (
                if error.is_some() {
                    "SyncEnd!"
                } else {
                    "SyncEnd"
                },
                kind.as_str(),
            ),
        ),
        LocalStatus { uid, phase } => (Some(*uid), ("LocalStatus", phase.as_str())),
        LocalStatusDropped { uid, .. } => (Some(*uid), ("LocalStatusDropped", "")),
        Relist { .. } => (None, ("Relist", "")),
        Housekeeping => (None, ("Housekeeping", "")),
        ProbeWorker { uid, what, .. } => (Some(*uid), ("ProbeWorker", what.as_str())),
        Probe { uid, result, .. } => (Some(*uid), ("Probe", result.as_str())),
        ProbeResult { uid, result, .. } => (Some(*uid), ("ProbeResult", result.as_str())),
        Shutdown { .. } => (None, ("Shutdown", "")),
        NodeReady { ready } => (None, ("NodeReady", if *ready { "true" } else { "false" })),
        Note { uid, what } => (Some(*uid), ("Note", what.as_str())),
        KubeletProcess { what, .. } => (None, ("KubeletProcess", what.as_str())),
        ApiStatusPatched { of, .. } => (Some(*of), ("ApiStatusPatched", "")),
        KillPodNow { uid, what, .. } => (Some(*uid), ("KillPodNow", what.as_str())),
        SyncStep { uid, step } => (Some(*uid), ("SyncStep", step.as_str())),
        ShutdownGroup { .. } => (None, ("ShutdownGroup", "")),
        ApiConditionSet { uid, condition } => {
            (Some(*uid), ("ApiConditionSet", condition.status.as_str()))
        }
        StaticManifestRemoved { uid } => (Some(*uid), ("StaticManifestRemoved", "")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SyncKind, UpdateType};

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn pairs_carry_the_worker_state_and_signatures_the_last_kinds() {
        let u = PodUid(1);
        let mut o = Observer::default();
        let sc = crate::load_str(
            "t.yaml",
            "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: t}\nspec:\n  pods:\n    - template: {metadata: {name: web}, spec: {containers: [{name: a, image: i}]}}\n",
            &[],
        )
        .expect("valid");
        let spec = sc.scenario.pods[0].spec.clone();
        o.see(&[
            (
                at(0),
                Transition::ApiCreated {
                    uid: u,
                    name: "web".into(),
                    spec,
                    static_pod: false,
                    mirror_of: None,
                },
            ),
            (
                at(1),
                Transition::UpdatePod {
                    uid: u,
                    ty: UpdateType::Create,
                    runtime_only: false,
                },
            ),
            (
                at(2),
                Transition::Worker {
                    uid: u,
                    what: WorkerStep::Started,
                },
            ),
            (
                at(3),
                Transition::SyncBegin {
                    uid: u,
                    kind: SyncKind::SyncPod,
                    grace: None,
                },
            ),
            (at(4), Transition::Housekeeping),
        ]);
        assert!(o.pairs.contains(&(WState::NoRecord, ("Worker", "started"))));
        assert!(o
            .pairs
            .contains(&(WState::Started, ("SyncBegin", "SyncPod"))));
        assert!(o.pairs.contains(&(WState::Node, ("Housekeeping", ""))));
        assert_eq!(
            o.signature("web", 3_000_000),
            "ApiCreated > UpdatePod create > Worker started > SyncBegin SyncPod"
        );
        assert_eq!(
            o.signature("web", 1_000_000),
            "ApiCreated > UpdatePod create"
        );
        assert_eq!(o.signature("other", 9), "");
    }
}
