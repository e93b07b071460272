//! Liveness of pods: bounded progress, checked at the end of the run (and where the
//! progress shows in the trace, as it happens): a deleted pod stops and leaves the API,
//! a termination finishes, orphans die, a stopped pod gets a terminal phase, a finished
//! worker is forgotten, a liveness failure kills, a desired static pod runs, a pod whose
//! containers completed completes.

use super::{crashed, record_removed, topic, Checker, PerPod, PER_ERROR, SLACK};
use crate::model::{
    ContainerId, CriOp, PodUid, ProbeCached, ProbeType, RestartPolicy, SyncKind, Transition,
    WorkerStep,
};
use crate::oracle::facts::{Facts, PodFacts};
use crate::oracle::findings::{t, Findings};
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, V122, V125, V127, V129};
use crate::sim::{Dur, SimTime};

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::DeletedPodStops,
        Invariant {
            name: "deleted-pod-stops",
            id: "L1",
            kind: Kind::Liveness,
            meaning: "after the kubelet observed a pod's deletion, every container of it exits",
            bound: "G + 60 s after the kubelet observed the deletion (or, later, after the SyncPod in flight then ended, or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since; G = the largest grace the pod could get (spec, deletes, kills)",
            source: "pkg/kubelet/pod_workers.go, kuberuntime/kuberuntime_container.go killContainer",
            profiles: V127,
        },
    ),
    (
        Inv::DeletedPodRemovedFromApi,
        Invariant {
            name: "deleted-pod-removed-from-api",
            id: "L3",
            kind: Kind::Liveness,
            meaning: "a gracefully deleted pod object is removed from the API by the kubelet",
            bound: "as deleted-pod-stops (G + 60 s + 20 s per error after the kubelet observed the delete)",
            source: "pkg/kubelet/status/status_manager.go syncPod, canBeDeleted (PR 113145); race catalog 15",
            profiles: V129,
        },
    ),
    (
        Inv::TerminationFinishes,
        Invariant {
            name: "termination-finishes",
            id: "L4",
            kind: Kind::Liveness,
            meaning: "every termination the pod worker took on reaches Finished (or the record is removed, for runtime pods)",
            bound: "G + 60 s after termination was requested (or after the kubelet last started, or after the SyncPod in flight at the request ended: v1.31 does not cancel its kills), + 20 s per failed sync or CRI call of the pod since",
            source: "pkg/kubelet/pod_workers.go (PR 113145, issue 116544); race catalog 13, 15",
            profiles: V127,
        },
    ),
    (
        Inv::OrphanedRuntimePodsDie,
        Invariant {
            name: "orphaned-runtime-pods-die",
            id: "L6",
            kind: Kind::Liveness,
            meaning: "containers of a pod the running kubelet never knew from config (an orphan, e.g. removed from the API while the kubelet was down) are killed",
            bound: "2 s (the kill of a runtime pod gives each container the 2 s minimum) + 60 s after the kubelet first saw it as a runtime pod (housekeeping) or last started, + 20 s per failed sync or CRI call of the pod since",
            source: "pkg/kubelet/kubelet_pods.go HandlePodCleanups (orphaned runtime pods), pod_workers.go SyncTerminatingRuntimePod",
            profiles: V122,
        },
    ),
    (
        Inv::NaturalCompletion,
        Invariant {
            name: "natural-completion",
            id: "L7",
            kind: Kind::Liveness,
            meaning: "a pod whose containers all ran and exited and will not be restarted (Never, or OnFailure with every exit 0) reaches a terminal API phase and its worker finishes",
            bound: "60 s after the last container exited (or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since; pods with init containers, static pods and deleted pods are not checked",
            source: "pkg/kubelet/kubelet.go SyncPod isTerminal, pod_workers.go completeSync (PR 115331)",
            profiles: V127,
        },
    ),
    (
        Inv::DesiredStaticPodRuns,
        Invariant {
            name: "desired-static-pod-runs",
            id: "C7",
            kind: Kind::Liveness,
            meaning: "a static pod whose manifest is on the node gets a container started after the manifest (re)appeared (or, never asked to terminate, still runs the one it had), once no other UID with its full name has a running container",
            bound: "60 s after the later of: the manifest (re)appeared, the last container of another UID with the same full name exited, the kubelet last started; + 20 s per failed sync or CRI call of the pod since; not checked once a node shutdown started or the pod was rejected",
            source: "pkg/kubelet/pod_workers.go UpdatePod restartRequested, allowStaticPodStart, cleanupUnstartedPod (PRs 104847, 107900; issues 104648, 107733); race catalog 6, 7",
            profiles: V125,
        },
    ),
    (
        Inv::TerminalInApiAfterStop,
        Invariant {
            name: "terminal-in-api-after-stop",
            id: "L2",
            kind: Kind::Liveness,
            meaning: "once a pod's worker reached Terminated (its containers stopped), the API gets a terminal phase (or the object is removed)",
            bound: "60 s after the worker reached Terminated (or after the kubelet last started), + 20 s per failed sync or CRI call of the pod since (the spec's min(R + unmount, 10 s) + Q, with room for status back-off); static, mirror, runtime-only and rejected pods are not checked",
            source: "pkg/kubelet/status/status_manager.go syncPod/needsUpdate, pod_workers.go completeTerminating, kubelet.go SyncTerminatedPod (PRs 108366, 115331)",
            profiles: V127,
        },
    ),
    (
        Inv::FinishedPodForgotten,
        Invariant {
            name: "finished-pod-forgotten",
            id: "L5",
            kind: Kind::Liveness,
            meaning: "a finished worker whose pod left the config is forgotten by the next housekeeping (SyncKnownPods)",
            bound: "the next housekeeping after the worker finished and the pod was REMOVEd (every 2 s; housekeeping runs only once all sources are ready, so the bound starts then); checked at each housekeeping",
            source: "pkg/kubelet/pod_workers.go SyncKnownPods, removeTerminatedWorker; kubelet_pods.go HandlePodCleanups",
            profiles: V122,
        },
    ),
    (
        Inv::LivenessFailureKills,
        Invariant {
            name: "liveness-failure-kills",
            id: "L11",
            kind: Kind::Liveness,
            meaning: "a running container whose liveness or startup probe result turned Failure is killed, when its pod is not terminating",
            bound: "its kill (the PreStop hook, else StopContainer) begins 60 s after the Failure result (or after the SyncPod in flight then ended, or the kubelet last started), + 20 s per failed sync or CRI call of the pod since (the spec's syncLoop dispatch + R), or within a SyncPod that began by then (SyncPod kills the containers to kill one after another); how long the kill then takes is the grace's (the pod's or the probe's terminationGracePeriodSeconds, and the runtime's SIGKILL), not this bound's; not checked once termination was requested or the deletion seen",
            source: "pkg/kubelet/kubelet.go syncLoopIteration (liveness/startup manager updates), kuberuntime/kuberuntime_manager.go computePodActions",
            profiles: ALL,
        },
    ),
];

/// What one worker record went through, for these checks.
#[derive(Clone, Copy, Debug, Default)]
struct Record {
    /// A liveness/startup Failure of a running container of a pod not terminating: from
    /// when the kill is due, and which container (L11).
    lv_fail: Option<(SimTime, ContainerId)>,
    /// The Failure came while a SyncPod was open: the bound starts when it ends.
    lv_wait_sync: bool,
    /// A SyncPod that began in time is open: it kills the containers to kill one after
    /// another (each with its PreStop hook and grace), so this one's kill may begin late
    /// in it.
    lv_in_sync: bool,
    /// Housekeepings seen since the worker finished with its pod out of config (L5).
    hk_since_undesired: u8,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Liveness {
    records: PerPod<Record>,
    /// A static pod's manifest is on the node: since when (it last (re)appeared).
    desired_since: PerPod<Option<SimTime>>,
    /// Finished workers whose pod left the config (L5 candidates).
    undesired_finished: Vec<PodUid>,
}

impl Checker for Liveness {
    const TOPICS: u32 = topic::API_CREATED
        | topic::CONFIG_OP
        | topic::CONTAINER_EXITED
        | topic::CRI_BEGIN
        | topic::HOUSEKEEPING
        | topic::PROBE_RESULT
        | topic::SYNC_BEGIN
        | topic::SYNC_END
        | topic::WORKER
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::ApiCreated {
                uid,
                static_pod: true,
                ..
            } => *self.desired_since.at(*uid) = Some(at),
            Transition::ConfigOp { uid, .. } => {
                let p = facts.pod(*uid);
                if p.inc.out_of_config && p.worker.finished {
                    self.undesired_finished.push(*uid);
                }
            }
            Transition::Worker {
                uid,
                what: WorkerStep::Finished | WorkerStep::FinishedNeverStarted,
            } => {
                if facts.pod(*uid).inc.out_of_config {
                    self.undesired_finished.push(*uid);
                }
                termination_done(facts, out);
            }
            Transition::Housekeeping => self.housekeeping(at, facts, out),
            Transition::ProbeResult {
                uid,
                kind,
                result,
                id,
            } => {
                if matches!(*kind, ProbeType::Liveness | ProbeType::Startup)
                    && *result == ProbeCached::Failure
                {
                    let p = facts.pod(*uid);
                    let r = self.records.at(*uid);
                    let terminating = p.worker.term_requested || p.inc.saw_delete_at.is_some();
                    if !terminating && p.running.contains(id) && r.lv_fail.is_none() {
                        r.lv_fail = Some((at, *id));
                        r.lv_wait_sync = p.worker.open_sync == Some(SyncKind::SyncPod);
                    }
                }
            }
            Transition::SyncBegin {
                uid,
                kind: SyncKind::SyncPod,
                ..
            } => self.sync_pod_begin(at, *uid, facts),
            Transition::SyncEnd {
                uid,
                kind: SyncKind::SyncPod,
                ..
            } => self.sync_pod_end(at, *uid),
            Transition::ContainerExited { uid, id, .. } => {
                self.kill_began(at, *uid, *id, facts, out)
            }
            Transition::CriBegin {
                uid,
                call: CriOp::StopContainer | CriOp::ExecPreStop,
                target,
                ..
            } => self.kill_began(at, *uid, ContainerId(*target), facts, out),
            _ if crashed(tr) => {
                self.undesired_finished.clear();
                self.records.reset_all();
            }
            _ => {
                if let Some(uid) = record_removed(tr) {
                    let before = &facts.before;
                    if before.worker.finished && before.inc.out_of_config {
                        out.checked(Inv::FinishedPodForgotten);
                    }
                    termination_done(facts, out);
                    self.records.reset(uid);
                }
            }
        }
    }

    fn finish_pod(&mut self, end: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        if facts.node.power_off_at.is_some() || facts.node.kubelet_down {
            return;
        }
        let p = facts.pod(uid);
        if p.mirror_of.is_some() {
            return;
        }
        let c = End { end, uid, p, facts };
        let record = self.records.get(uid).copied().unwrap_or_default();
        deleted(&c, out);
        termination_finishes(&c, out);
        orphans_die(&c, out);
        terminal_in_api(&c, out);
        liveness_failure(&c, record, out);
        let desired = self.desired_since.get(uid).copied().flatten();
        desired_static_pod(&c, desired, out);
        natural_completion(&c, out);
    }
}

impl Liveness {
    /// A SyncPod began: a pending Failure's kill may come within it (L11). A pod without a
    /// record has no Failure pending: nothing to note, and no record grows for it.
    #[inline]
    pub(crate) fn sync_pod_begin(&mut self, at: SimTime, uid: PodUid, facts: &Facts) {
        // The common case, no Failure waiting for its bound, makes no call: the bound is
        // computed out of line (a tail call), so the oracle's SyncPod path needs no frame.
        if self
            .records
            .get(uid)
            .is_some_and(|r| r.lv_fail.is_some() && !r.lv_wait_sync)
        {
            self.sync_pod_begin_in_sync(at, uid, facts);
        }
    }

    /// [`Liveness::sync_pod_begin`] of a pod with a Failure whose bound runs: does the
    /// SyncPod begin within it?
    #[cold]
    #[inline(never)]
    fn sync_pod_begin_in_sync(&mut self, at: SimTime, uid: PodUid, facts: &Facts) {
        if let Some(r) = self.records.get_mut(uid) {
            if let (Some((s, _)), false) = (r.lv_fail, r.lv_wait_sync) {
                r.lv_in_sync = at <= lv_deadline(s, uid, facts);
            }
        }
    }

    /// A SyncPod ended: a Failure that came during it starts its bound now (L11). Without
    /// a record every field is at its default: nothing to clear.
    #[inline]
    pub(crate) fn sync_pod_end(&mut self, at: SimTime, uid: PodUid) {
        let Some(r) = self.records.get_mut(uid) else {
            return;
        };
        r.lv_in_sync = false;
        if r.lv_wait_sync {
            r.lv_wait_sync = false;
            if let Some(f) = r.lv_fail.as_mut() {
                f.0 = at;
            }
        }
    }

    /// A static pod's manifest went away.
    pub(crate) fn static_manifest_removed(&mut self, uid: PodUid) {
        *self.desired_since.at(uid) = None;
    }

    /// L11 as it happens: the kill of the container with a Failure began (its PreStop hook
    /// or StopContainer), or the container exited by itself first; in time? A kill that
    /// began in time may take as long as its grace allows (a probe-level or pod-level
    /// terminationGracePeriodSeconds of minutes, SIGTERM ignored): that is not late.
    fn kill_began(
        &mut self,
        at: SimTime,
        uid: PodUid,
        id: ContainerId,
        facts: &Facts,
        out: &mut Findings,
    ) {
        // A pod without a record has no Failure pending.
        let Some(r) = self.records.get_mut(uid) else {
            return;
        };
        let Some((s, _)) = r.lv_fail.filter(|f| f.1 == id) else {
            return;
        };
        let wait = r.lv_wait_sync || r.lv_in_sync;
        r.lv_fail = None;
        r.lv_wait_sync = false;
        r.lv_in_sync = false;
        out.checked(Inv::LivenessFailureKills);
        if !wait && at > lv_deadline(s, uid, facts) {
            out.report(
                facts,
                Inv::LivenessFailureKills,
                Some(uid),
                at,
                format_args!("container {id} got a liveness/startup Failure at {}, and its kill began only at {} (bound {}s + {}s per error)", t(s), t(at), SLACK.whole_secs(), PER_ERROR.whole_secs()),
            );
        }
    }

    /// A housekeeping began: a finished worker whose pod left the config before the
    /// previous housekeeping must be gone by now (L5).
    #[inline]
    pub(crate) fn housekeeping(&mut self, at: SimTime, facts: &Facts, out: &mut Findings) {
        // No candidate (nearly every pass): nothing to count or report.
        if self.undesired_finished.is_empty() {
            return;
        }
        self.housekeeping_candidates(at, facts, out);
    }

    /// [`Liveness::housekeeping`] with candidates.
    #[inline(never)]
    fn housekeeping_candidates(&mut self, at: SimTime, facts: &Facts, out: &mut Findings) {
        let mut cands = std::mem::take(&mut self.undesired_finished);
        cands.sort_unstable();
        cands.dedup();
        let mut late = Vec::new();
        let records = &mut self.records;
        cands.retain(|u| {
            let Some(p) = facts.get(*u) else {
                return false;
            };
            let r = records.at(*u);
            if !(p.worker.finished && p.inc.out_of_config) {
                r.hk_since_undesired = 0;
                return false;
            }
            r.hk_since_undesired = r.hk_since_undesired.saturating_add(1);
            if r.hk_since_undesired >= 2 {
                late.push(*u);
            }
            true
        });
        self.undesired_finished = cands;
        for u in late {
            out.report(
                facts,
                Inv::FinishedPodForgotten,
                Some(u),
                at,
                format_args!("the pod's worker finished and the pod left the config, yet a housekeeping passed without forgetting it"),
            );
        }
    }
}

/// A termination finished: termination-finishes was met (counted as checked).
fn termination_done(facts: &Facts, out: &mut Findings) {
    if facts.before.inc.term_requested_at.is_some() {
        out.checked(Inv::TerminationFinishes);
    }
}

/// One pod at the end of the run.
struct End<'a> {
    end: SimTime,
    uid: PodUid,
    p: &'a PodFacts,
    facts: &'a Facts,
}

impl End<'_> {
    /// When `bound` after `start` (and after the kubelet last started), plus the error
    /// allowance, fits before the end: the start it counts from.
    fn due(&self, start: SimTime, bound: Dur) -> Option<SimTime> {
        let start = start.max(self.facts.node.kubelet_started_at);
        let deadline = start + bound + Dur(PER_ERROR.0 * self.p.errors_since(start));
        (deadline <= self.end).then_some(start)
    }
    /// The largest grace the pod could get (spec, deletes, kills).
    fn grace(&self) -> Dur {
        let p = self.p;
        Dur::secs(
            p.max_grace()
                .max(p.spec_grace())
                .max(p.worker.last_grace.unwrap_or(0))
                .max(0) as u64,
        )
    }
    fn report(&self, out: &mut Findings, inv: Inv, what: std::fmt::Arguments<'_>) {
        out.report(self.facts, inv, Some(self.uid), self.end, what);
    }
}

/// L1 / L3: the kubelet saw the deletion.
fn deleted(c: &End, out: &mut Findings) {
    let p = c.p;
    let Some(seen) = p.inc.saw_delete_at else {
        return;
    };
    let start = match (p.inc.inflight_sync_open, p.inc.inflight_sync_end) {
        (true, _) => None, // the SyncPod in flight never ended: unbounded
        (false, Some(e)) => Some(e.max(seen)),
        (false, None) => Some(seen),
    };
    let grace = c.grace();
    let Some(s) = start.and_then(|s| c.due(s, grace + SLACK)) else {
        return;
    };
    out.checked(Inv::DeletedPodStops);
    if let Some(ctr) = p.running.first() {
        c.report(
            out,
            Inv::DeletedPodStops,
            format_args!(
                "the kubelet saw the deletion at {}, yet container {ctr} still runs at {} (bound from {}: grace {}s + {}s + {}s per error)",
                t(seen),
                t(c.end),
                t(s),
                grace.whole_secs(),
                SLACK.whole_secs(),
                PER_ERROR.whole_secs()
            ),
        );
    }
    if p.graceful_delete() && !p.static_pod {
        out.checked(Inv::DeletedPodRemovedFromApi);
        if p.removed_at().is_none() {
            c.report(
                out,
                Inv::DeletedPodRemovedFromApi,
                format_args!(
                    "deleted gracefully, seen by the kubelet at {}, yet the object is still in the API at {} (phase {})",
                    t(seen),
                    t(c.end),
                    p.api_phase
                ),
            );
        }
    }
}

/// L4: a termination in progress finishes.
fn termination_finishes(c: &End, out: &mut Findings) {
    let Some(req) = c.p.inc.term_requested_at else {
        return;
    };
    let w = &c.p.worker;
    // A SyncPod the worker took up before the request runs to its end first: its kills
    // (liveness/startup failures, one container after another, each with its PreStop hook
    // and its own grace) are not cancelled in v1.31, so the bound counts from its end.
    if w.inflight_sync_pod && w.open_sync == Some(SyncKind::SyncPod) {
        return;
    }
    let from = req.max(w.last_sync_pod_end.unwrap_or(req));
    if let Some(s) = c.due(from, c.grace() + SLACK) {
        out.checked(Inv::TerminationFinishes);
        c.report(
            out,
            Inv::TerminationFinishes,
            format_args!(
                "termination requested at {} (counted from {}) has not finished at {} (worker: acknowledged {}, terminated {}, open sync {:?})",
                t(req),
                t(s),
                t(c.end),
                w.term_acked,
                w.terminated,
                w.open_sync
            ),
        );
    }
}

/// L6: a pod the kubelet knows only as a runtime pod is killed with grace 1
/// (SyncTerminatingRuntimePod), so every container gets the 2 s minimum.
fn orphans_die(c: &End, out: &mut Findings) {
    let p = c.p;
    let runtime_grace = Dur::secs(2);
    let Some(seen) = p.inc.runtime_only_at else {
        return;
    };
    if p.inc.config_known || c.due(seen, runtime_grace + SLACK).is_none() {
        return;
    }
    out.checked(Inv::OrphanedRuntimePodsDie);
    if let Some(ctr) = p.running.first() {
        c.report(
            out,
            Inv::OrphanedRuntimePodsDie,
            format_args!(
                "first seen as a runtime pod at {}, yet container {ctr} still runs at {}",
                t(seen),
                t(c.end)
            ),
        );
    }
}

/// L2: terminal in the API after the containers stopped.
fn terminal_in_api(c: &End, out: &mut Findings) {
    let p = c.p;
    let Some(tt) = p.inc.terminated_at else {
        return;
    };
    let eligible = p.inc.config_known
        && !p.static_pod
        && !p.inc.rejected
        && p.removed_at().is_none()
        && !p.inc.out_of_config;
    let Some(s) = eligible.then(|| c.due(tt, SLACK)).flatten() else {
        return;
    };
    out.checked(Inv::TerminalInApiAfterStop);
    if !p.api_phase.is_terminal() {
        c.report(
            out,
            Inv::TerminalInApiAfterStop,
            format_args!(
                "the pod's worker reached Terminated at {}, yet the API phase is {} at {} (bound from {}: {}s + {}s per error)",
                t(tt),
                p.api_phase,
                t(c.end),
                t(s),
                SLACK.whole_secs(),
                PER_ERROR.whole_secs()
            ),
        );
    }
}

/// L11: a liveness/startup failure of a running container kills it.
/// When the kill of a container whose liveness/startup Failure counts from `s` is due.
/// Out of line and cold: only a pod with an open Failure asks, and its count of the pod's
/// errors (a loop) would otherwise sit inline in the oracle's frequent SyncPod path
/// (`direct_sync_pod_begin`), spreading it over more cache lines.
#[cold]
#[inline(never)]
fn lv_deadline(s: SimTime, uid: PodUid, facts: &Facts) -> SimTime {
    s + SLACK + Dur(PER_ERROR.0 * facts.pod(uid).errors_since(s))
}

/// The record's Failure is cleared when the kill began, so a container still running here
/// was never asked to stop.
fn liveness_failure(c: &End, r: Record, out: &mut Findings) {
    let p = c.p;
    let (Some((s, id)), false) = (r.lv_fail, r.lv_wait_sync || r.lv_in_sync) else {
        return;
    };
    let terminating = p.worker.term_requested || p.inc.saw_delete_at.is_some();
    if terminating {
        return;
    }
    let Some(from) = c.due(s, SLACK) else {
        return;
    };
    out.checked(Inv::LivenessFailureKills);
    if p.running.contains(&id) {
        c.report(
            out,
            Inv::LivenessFailureKills,
            format_args!(
                "container {id} got a liveness/startup Failure at {}, yet no kill of it began by {} (bound from {}: {}s + {}s per error)",
                t(s),
                t(c.end),
                t(from),
                SLACK.whole_secs(),
                PER_ERROR.whole_secs()
            ),
        );
    }
}

/// C7: a static pod whose manifest is on the node runs.
fn desired_static_pod(c: &End, desired_since: Option<SimTime>, out: &mut Findings) {
    let p = c.p;
    let Some(since) = desired_since else {
        return;
    };
    let full = p.static_full_name();
    let mut others_running = false;
    let mut others_exit: Option<SimTime> = None;
    for (i, q) in c.facts.pods.iter().enumerate() {
        if i == c.uid.0 as usize || q.static_full_name() != full {
            continue;
        }
        others_running |= !q.running.is_empty();
        others_exit = others_exit.max(q.last_exit_at);
    }
    let eligible = !others_running
        && c.facts.node.shutdown_started.is_none()
        && !p.inc.rejected
        && p.mirror_of.is_none();
    let start = others_exit.map_or(since, |e| e.max(since));
    let Some(s) = eligible.then(|| c.due(start, SLACK)).flatten() else {
        return;
    };
    out.checked(Inv::DesiredStaticPodRuns);
    // A container that started before the manifest reappeared and still runs, with no
    // termination of the UID requested, counts: a manifest removed and restored (same UID)
    // while the kubelet was down was never seen gone, and the restarted kubelet adopts the
    // running containers (v1.31 `pkg/kubelet/config/file.go` lists the directory at start).
    let still_running = !p.running.is_empty() && !p.worker.term_requested;
    if !still_running && p.last_started_at.is_none_or(|t| t < since) {
        c.report(
            out,
            Inv::DesiredStaticPodRuns,
            format_args!(
                "the manifest has been on the node since {}, yet no container of the pod started by {} (bound from {}: {}s + {}s per error)",
                t(since),
                t(c.end),
                t(s),
                SLACK.whole_secs(),
                PER_ERROR.whole_secs()
            ),
        );
    }
}

/// L7: natural completion.
fn natural_completion(c: &End, out: &mut Findings) {
    let (p, facts) = (c.p, c.facts);
    let (Some(last), Some(spec)) = (p.last_exit_at, p.spec.as_ref()) else {
        return;
    };
    let all_ran_and_exited = p.running.is_empty()
        && spec.containers.iter().all(|c| {
            p.instances
                .iter()
                .any(|i| facts.text(i.name) == c.name && i.exit.is_some())
        });
    let final_exits_zero = spec.containers.iter().all(|c| {
        p.instances
            .iter()
            .rev()
            .find(|i| facts.text(i.name) == c.name)
            .and_then(|i| i.exit)
            .is_some_and(|(code, _)| code == 0)
    });
    let completes = match spec.restart_policy {
        RestartPolicy::Never => true,
        RestartPolicy::OnFailure => final_exits_zero,
        RestartPolicy::Always => false,
    };
    let eligible = completes
        && all_ran_and_exited
        && spec.init_containers.is_empty()
        && !p.static_pod
        && p.deleted_at().is_none()
        && p.evicted_at().is_none()
        && p.inc.config_known
        && !p.inc.rejected;
    if !eligible || c.due(last, SLACK).is_none() {
        return;
    }
    out.checked(Inv::NaturalCompletion);
    if !p.api_phase.is_terminal() {
        c.report(
            out,
            Inv::NaturalCompletion,
            format_args!(
                "every container exited (the last at {}) and restartPolicy {} restarts none, yet the API phase is {} at {}",
                t(last),
                spec.restart_policy.as_str(),
                p.api_phase,
                t(c.end)
            ),
        );
    } else if !p.worker.finished {
        c.report(
            out,
            Inv::NaturalCompletion,
            format_args!(
                "every container exited (the last at {}) and the pod is {}, yet its worker has not finished at {}",
                t(last),
                p.api_phase,
                t(c.end)
            ),
        );
    }
}

#[cfg(test)]
#[path = "liveness_tests.rs"]
mod tests;
