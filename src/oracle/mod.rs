//! The invariant oracle: read-only and separate from the model. It is the trace's
//! [`Observer`]: it sees every [`Transition`] as it is emitted, after it is hashed, keeps
//! its own derived state and never reads the world. Removing it (or switching it off)
//! changes no trace hash.
//!
//! A finding's message ends with the pod's (or the node's) last transitions: per pod, a
//! ring of the last `RING` transitions, or `RING_LARGE` in a large run, kept as compact
//! records rendered only for a finding. A run's oracle keeps none of them
//! (`Oracle::for_pods` with `history` false): the run goes again with them kept when it
//! made a finding (`crate::run::FindingHistory`), so the store a history costs at nearly
//! every transition is paid only by runs that find something.
//!
//! Safety properties are checked as transitions happen; liveness properties (bounded
//! progress) at the end of the run (`Oracle::finish`), each with its bound, and skipped
//! (never failed) when the run leaves too little time after the trigger, the node powered
//! off, or the kubelet is down. Each property is reported at most once per pod. The table
//! of properties is [`invariants::INVARIANTS`] (`podsim invariants`).
//!
//! How it is built: each transition first updates the shared `facts` (what several
//! checks need: container instances, running containers, the API's view, what the worker
//! record and the kubelet process went through), then goes to the `checkers`, one per
//! concern (the pod worker, sync calls, the API and status, teardown, probes, static pods,
//! eviction, node shutdown, killPodNow, liveness at the end). Each checker owns its
//! invariants: their table rows, their state and their checks.
//!
//! The invariants are podsim's own catalogue, not upstream code. Their ids: `S<n>` is a
//! safety property (something that must never happen), `L<n>` a liveness property
//! (something that must happen within a bound), `C<n>` an item of podsim's checklist of
//! kubelet races that were fixed upstream or are still open (`S1'`, `S5'`: a refinement of
//! `S1`, `S5`). Each row cites where the behaviour lives upstream: the kubelet files
//! (`pkg/kubelet/pod_workers.go`, `status/status_manager.go`, ...), and the issues and pull
//! requests of kubernetes/kubernetes that introduced or fixed it.

pub(crate) mod checkers;
mod direct;
pub(crate) mod facts;
mod few;
pub(crate) mod findings;
pub mod invariants;
pub(crate) mod ring;

use crate::model::{PodUid, ProbeType, ProbeVerdict, SyncKind, Transition};
use crate::sim::{Observer, SimTime};
use checkers::Checkers;
use facts::Facts;
use findings::Findings;
#[cfg(test)]
use invariants::Inv;
use std::sync::Arc;

/// Transitions kept per pod for a finding's diagnosis.
pub(crate) const RING: usize = 20;
/// The ring of a large run ([`Oracle::for_pods`] with more than [`LARGE_RUN_PODS`] pods):
/// a finding there prints the pod's last 8 transitions, and the oracle keeps 288 bytes
/// less per pod (12 slots of 24 bytes, [`ring::Rings`]).
pub(crate) const RING_LARGE: usize = 8;
pub(crate) const LARGE_RUN_PODS: usize = 1000;

/// A finding of the oracle (the run adds the replay line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OracleFinding {
    pub(crate) invariant: &'static str,
    /// The pod's name (empty for node-level findings).
    pub(crate) pod: String,
    pub(crate) at: SimTime,
    /// What went wrong, then the pod's last transitions.
    pub(crate) message: String,
}

/// The oracle of one run.
#[derive(Clone, Debug, Default)]
pub(crate) struct Oracle {
    on: bool,
    facts: Facts,
    checkers: Checkers,
    out: Findings,
}

impl Observer<Transition> for Oracle {
    #[inline]
    fn observe(&mut self, at: SimTime, rec: &Transition) {
        if self.on {
            self.transition(at, rec);
        }
    }
}

impl Oracle {
    /// An oracle checking every invariant. (`Oracle::default()` is switched off and looks
    /// at nothing.) Every invariant is checked on every profile: on an old profile, a
    /// finding of an invariant that release did not keep is the historical race replayed;
    /// [`invariants::Invariant::profiles`](crate::oracle::invariants::Invariant::profiles) says where a finding means a port bug.
    pub(crate) fn new() -> Self {
        Oracle {
            on: true,
            facts: Facts {
                rings: ring::Rings::new(RING, 0),
                ..Default::default()
            },
            checkers: Checkers::default(),
            out: Findings::all_active(),
        }
    }

    /// [`Oracle::new`] for a run of `pods` pods: a shorter per-pod ring when it is large;
    /// with `history` false, no history at all (pod or node): the checks and findings are
    /// the same, and a finding's message lists no transitions.
    pub(crate) fn for_pods(pods: usize, history: bool) -> Self {
        let mut o = Self::new();
        let ring = if pods > LARGE_RUN_PODS {
            RING_LARGE
        } else {
            RING
        };
        // UIDs count from 1: one slot per declared pod, without doubling's slack (pods
        // created later, such as mirror pods, grow it as before).
        o.facts.rings = if history {
            ring::Rings::new(ring, pods + 1)
        } else {
            ring::Rings::unkept(pods + 1)
        };
        if !history {
            o.facts.node.recent = ring::NodeRing::unkept();
        }
        o.facts.pods = Vec::with_capacity(pods + 1);
        o
    }

    /// Whether the oracle keeps the pods' and the node's histories.
    pub(crate) fn keeps_history(&self) -> bool {
        self.facts.rings.kept()
    }

    #[cfg(test)]
    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// The findings so far, in the order they were made.
    pub(crate) fn findings(&self) -> &[OracleFinding] {
        self.out.list()
    }

    /// Observe one transition: the facts take it in, then every checker that looks at its
    /// kind sees it. Small enough to inline into the trace's emit: the two paths are out of
    /// line, so the most frequent transition (a probe run) does not pay for the register
    /// saves of the general path. A probe goes on as the transition itself, not its
    /// fields: the call site sets up no arguments beyond the ones it has, and
    /// [`Oracle::probe_run`] has only those three to keep for its slow path.
    #[inline(always)]
    pub(crate) fn transition(&mut self, at: SimTime, tr: &Transition) {
        if matches!(tr, Transition::Probe { .. }) {
            self.probe_run(at, tr);
        } else {
            self.other(at, tr);
        }
    }

    /// A probe ran: [`Oracle::quiet_probe`], else [`Oracle::probe`] (a tail call). It reads
    /// the probe's fields itself, so while the quiet path runs only `self`, `at` and `tr`
    /// are live, and they stay in the argument registers: the quiet path saves no register
    /// and the slow path is a jump. (Any other kind, which the caller never passes, goes
    /// to [`Oracle::other`].)
    #[inline(never)]
    fn probe_run(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Probe {
            uid,
            ref container,
            kind,
            result,
        } = *tr
        else {
            return self.other(at, tr);
        };
        if !self.quiet_probe(at, uid, container, kind, result) {
            self.probe(at, tr);
        }
    }

    /// A quiet probe: one of a container S9's cache knows running, of a pod whose probe
    /// workers were told nothing (S8), whose ring the oracle has: the pod's history takes
    /// it in, and no check is needed. The probes checker's
    /// record of the pod gives the container's interned name (the probe carries the
    /// shared name the cache was confirmed with), so the name is not looked up. It makes
    /// no call (so [`Oracle::probe_run`] saves no registers on its way); false, having
    /// changed nothing, for any other probe, which then takes [`Oracle::probe`].
    #[inline(always)]
    fn quiet_probe(
        &mut self,
        at: SimTime,
        uid: PodUid,
        container: &Arc<str>,
        kind: ProbeType,
        result: ProbeVerdict,
    ) -> bool {
        let Some(name) = self.checkers.quiet_probe(uid, container, kind) else {
            return false;
        };
        // The one change, made last: nothing else is left to undo when there is no ring.
        // (A pod with a ring has its facts: every push follows `Facts::pod_mut`.)
        if !self
            .facts
            .rings
            .try_push_probe(uid, at, ring::Rec::Probe(name, kind, result))
        {
            return false;
        }
        debug_assert!(self.facts.get(uid).is_some(), "{uid} has a ring, no facts");
        // [`Facts::container`] is not set: no check runs on this path, and every path that
        // reads it (a probe that is not quiet, a probe worker's step, a container's start)
        // sets it first.
        // Debug builds check the cache's claims in full: `name` is the container's interned
        // name, and an instance of it runs now; and the push: the pod's history ends with
        // the probe.
        #[cfg(debug_assertions)]
        {
            assert!(
                self.facts.syms.holds(name, container),
                "quiet probe of {uid}'s container {container}: the cache names {}",
                self.facts.syms.text(name)
            );
            assert_eq!(
                checkers::probes::runs_now(self.facts.pod(uid), name),
                (true, true),
                "quiet probe of {uid}'s container {container}: no instance of it runs"
            );
            if self.keeps_history() {
                assert_eq!(
                    self.facts.rings.of(uid).last(),
                    Some((at, ring::Rec::Probe(name, kind, result))),
                    "quiet probe of {uid}'s container {container}: the history's last record"
                );
            }
        }
        true
    }

    /// A probe ran: the most frequent transition of a run with probes, taken the short
    /// way: the same facts update and the one checker that looks at probes.
    #[inline(never)]
    fn probe(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Probe {
            uid,
            ref container,
            kind,
            result,
        } = *tr
        else {
            return self.other(at, tr);
        };
        self.facts.probe(at, uid, container, kind, result);
        self.checkers
            .probe(at, uid, container, kind, result, &self.facts, &mut self.out);
    }

    /// Any transition but a probe run. The frequent kinds (a pod worker's update, any
    /// sync's beginning or end, a sync's step, a CRI call's beginning or end, a worker
    /// step, a host operation, a sandbox's readiness or stop, a container's start or exit,
    /// a watch delivery, a note, a relist, a housekeeping, a delete request, a status
    /// written to the API, the status manager's local status, a config operation, the
    /// API's status) take a direct path (`direct.rs`): the same facts update and the same
    /// checkers as [`Oracle::general`], without its several dispatches on the kind. This
    /// only picks the path: a jump on the kind and a tail call, with no register saved, so
    /// a transition touches the few cache lines of its own kind's code.
    #[inline(never)]
    fn other(&mut self, at: SimTime, tr: &Transition) {
        use Transition as T;
        match *tr {
            T::UpdatePod { .. } => self.direct_update_pod(at, tr),
            T::SyncBegin {
                kind: SyncKind::SyncPod,
                ..
            } => self.direct_sync_pod_begin(at, tr),
            T::SyncBegin { .. } => self.direct_sync_begin(at, tr),
            T::SyncEnd { .. } => self.direct_sync_end(at, tr),
            T::Note { what, .. } if facts::plain_note(what) => self.direct_plain_note(at, tr),
            T::Note { .. } => self.direct_note(at, tr),
            T::SyncStep { .. } => self.direct_sync_step(at, tr),
            T::SandboxReady { .. } | T::SandboxStopped { .. } => self.direct_sandbox(at, tr),
            T::ApiDeleteRequested { .. } => self.direct_delete_requested(at, tr),
            T::CriBegin { .. } => self.direct_cri_begin(at, tr),
            T::CriEnd { .. } => self.direct_cri_end(at, tr),
            T::WatchDelivered { .. } => self.direct_watch(at, tr),
            T::Relist { .. } => self.direct_relist(at, tr),
            T::Housekeeping => self.direct_housekeeping(at, tr),
            T::ApiStatusPatched { .. } => self.direct_status_patched(at, tr),
            T::LocalStatus { .. } => self.direct_local_status(at, tr),
            T::ConfigOp { .. } => self.direct_config_op(at, tr),
            T::ApiStatus { .. } => self.direct_api_status(at, tr),
            T::Worker { .. } => self.direct_worker(at, tr),
            T::Host { .. } => self.direct_host(at, tr),
            T::ContainerRunning { .. } => self.direct_running(at, tr),
            T::ContainerExited { .. } => self.direct_exited(at, tr),
            // Shown to the oracle, never traced: no history a finding quotes holds it.
            T::StaticManifestRemoved { uid } => self.static_manifest_removed(uid),
            _ => self.general(at, tr),
        }
    }

    /// Debug builds, on [`Oracle::other`]'s direct path: `tr`'s topic is `topic` (so the
    /// checkers the path calls are the ones that look at it), and for a pod's transition
    /// the record just pushed to its history is [`ring::Rec::of`] it (for a node's, the
    /// node's last record prints as it), when the oracle keeps histories.
    #[inline(always)]
    fn check_direct(&mut self, at: SimTime, tr: &Transition, topic: u32) {
        #[cfg(debug_assertions)]
        {
            assert_eq!(checkers::topic::of(tr), topic, "direct path of {tr:?}");
            if !self.keeps_history() {
                // No history kept: nothing was pushed.
            } else if let Some(uid) = facts::uid_of(tr) {
                let want = ring::Rec::of(tr, &mut self.facts.syms).map(|r| (at, r));
                assert_eq!(
                    self.facts.rings.of(uid).last(),
                    want,
                    "the history of {uid} after {tr:?}"
                );
            } else {
                let last = self.facts.node.recent.iter().last();
                assert_eq!(
                    last.map(|(t, r)| (*t, r.to_string())),
                    Some((at, tr.to_string())),
                    "the node's history after {tr:?}"
                );
            }
        }
        #[cfg(not(debug_assertions))]
        let _ = (at, tr, topic);
    }

    /// [`Oracle::other`] of the kinds without a direct path: the facts take the
    /// transition in, then every checker that looks at its kind sees it.
    #[inline(never)]
    fn general(&mut self, at: SimTime, tr: &Transition) {
        self.facts.update(at, tr);
        self.checkers.transition(at, tr, &self.facts, &mut self.out);
    }

    /// A static pod's manifest went away (`Transition::StaticManifestRemoved`, shown to the
    /// oracle outside the trace, so trace hashes do not change). Out of line and cold: it
    /// is rare, and inlined into [`Oracle::other`] its call would make the dispatcher save
    /// registers on every path.
    #[cold]
    #[inline(never)]
    fn static_manifest_removed(&mut self, uid: PodUid) {
        if self.on {
            self.checkers.liveness.static_manifest_removed(uid);
        }
    }

    /// Container starts that began between a pod's TermRequested and TermAcked (S1').
    pub(crate) fn starts_while_termination_requested(&self) -> u64 {
        self.out.starts_while_term_requested
    }

    /// Drop what the oracle kept per pod and for the node (histories included), keeping
    /// the findings and the counters: after [`Oracle::finish`] nothing else reads them, and
    /// freeing them first keeps a large run's peak memory down while its summary is built.
    pub(crate) fn release_pod_state(&mut self) {
        self.facts = Facts {
            rings: self.facts.rings.emptied(),
            ..Default::default()
        };
        self.checkers = Checkers::default();
        self.out.release_pods();
    }

    /// End of the run at `end`: the end-of-run safety checks and every liveness property.
    pub(crate) fn finish(&mut self, end: SimTime) {
        if !self.on {
            return;
        }
        self.checkers.finish(end, &self.facts, &mut self.out);
    }

    /// How many pods each liveness property was checked for (had enough time) at the end.
    #[cfg(test)]
    pub(crate) fn liveness_checked(&self, inv: Inv) -> u64 {
        self.out.checked_count(inv)
    }
}

#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;
