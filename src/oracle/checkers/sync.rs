//! Sync calls: one at a time per UID, in lifecycle order, none after the worker finished
//! or (SyncPod) reached Terminated; termination graces never increase and respect the
//! eviction's override; SyncTerminatingPod sets the status before it stops anything.

use super::{crashed, record_removed, topic, Checker, PerPod};
use crate::model::{CriOp, PodUid, SyncKind, SyncStepKind, Transition};
use crate::oracle::facts::{Facts, WorkerFacts};
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, V121_V131, V122, V129};
use crate::sim::SimTime;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::SingleSyncPerUid,
        Invariant {
            name: "single-sync-per-uid",
            id: "S2",
            kind: Kind::Safety,
            meaning: "at most one sync call (SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod, SyncTerminatedPod) is open per UID at any time",
            bound: "",
            source: "pkg/kubelet/pod_workers.go podWorkerLoop (one worker per UID)",
            profiles: ALL,
        },
    ),
    (
        Inv::SyncOrder,
        Invariant {
            name: "sync-order",
            id: "S3",
            kind: Kind::Safety,
            meaning: "per UID: SyncPod* then SyncTerminating+ then SyncTerminated+; no SyncPod after the first SyncTerminating, no SyncTerminated unless the latest SyncTerminating succeeded (or the pod was first seen terminal), no SyncTerminating after SyncTerminated",
            bound: "",
            source: "pkg/kubelet/pod_workers.go (PR 102344, PR 113145)",
            profiles: V122,
        },
    ),
    (
        Inv::GraceNeverIncreases,
        Invariant {
            name: "grace-never-increases",
            id: "S7",
            kind: Kind::Safety,
            meaning: "the grace periods given to SyncTerminatingPod for a UID never increase and are >= 1 s; every StopContainer timeout is >= 2 s (v1.31 quirk not checked: after a delete with grace 0, calculateEffectiveGracePeriod reads deletionGracePeriodSeconds=0 as unset and a later eviction or shutdown override raises the grace from 1)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go calculateEffectiveGracePeriod, kuberuntime/kuberuntime_container.go minimumGracePeriodInSeconds; race catalog 20",
            profiles: V129,
        },
    ),
    (
        Inv::FinishedIsFinal,
        Invariant {
            name: "finished-is-final",
            id: "S11",
            kind: Kind::Safety,
            meaning: "after a worker finished (SyncTerminatedPod done, or never started), no sync call runs for the UID until it is forgotten",
            bound: "",
            source: "pkg/kubelet/pod_workers.go UpdatePod (finished pods ignore updates)",
            profiles: V122,
        },
    ),
    (
        Inv::NoSyncOfKnownTerminated,
        Invariant {
            name: "no-sync-of-known-terminated",
            id: "S17",
            kind: Kind::Safety,
            meaning: "a UID whose worker reached Terminated (IsPodKnownTerminated) is never given a SyncPod",
            bound: "",
            source: "pkg/kubelet/pod_workers.go IsPodKnownTerminated, kubelet.go HandlePodAdditions",
            profiles: V122,
        },
    ),
    (
        Inv::StatusBeforeStop,
        Invariant {
            name: "status-before-stop",
            id: "S18",
            kind: Kind::Safety,
            meaning: "SyncTerminatingPod sets the local status before its first StopContainer or PreStop hook",
            bound: "",
            source: "pkg/kubelet/kubelet.go SyncTerminatingPod",
            profiles: V122,
        },
    ),
    (
        Inv::GraceWithinOverrides,
        Invariant {
            name: "grace-within-overrides",
            id: "C8",
            kind: Kind::Safety,
            meaning: "a SyncTerminatingPod that begins after an eviction killed the pod with grace override o gets a grace <= max(o, 1): an explicit 0 means 1 s, never the spec's grace (the kubelet process that evicted; a restart forgets)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go calculateEffectiveGracePeriod, eviction/eviction_manager.go evictPod (issue 115819, PR 124063); race catalog 20",
            profiles: V121_V131,
        },
    ),
];

#[derive(Clone, Debug, Default)]
pub(crate) struct SyncChecker {
    /// Per worker record: the open SyncTerminatingPod set the local status (S18).
    status_set: PerPod<bool>,
}

impl Checker for SyncChecker {
    const TOPICS: u32 = topic::CRI_BEGIN
        | topic::SYNC_BEGIN
        | topic::SYNC_STEP
        | topic::WORKER
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::SyncBegin { uid, kind, grace } => {
                sync_begin(at, *uid, *kind, *grace, facts, out);
                if kind.is_terminating() {
                    *self.status_set.at(*uid) = false;
                }
            }
            Transition::CriBegin {
                uid,
                call: call @ (CriOp::StopContainer | CriOp::ExecPreStop),
                timeout_s,
                ..
            } => {
                let uid = *uid;
                let status_set = self.status_set.get(uid).copied().unwrap_or(false);
                let before_status = facts.pod(uid).worker.open_sync
                    == Some(SyncKind::SyncTerminatingPod)
                    && !status_set;
                if let Some(t) = timeout_s.filter(|t| *t < 2) {
                    out.report(
                        facts,
                        Inv::GraceNeverIncreases,
                        Some(uid),
                        at,
                        format_args!("StopContainer with a timeout of {t}s (the minimum is 2 s)"),
                    );
                }
                if before_status {
                    out.report(
                        facts,
                        Inv::StatusBeforeStop,
                        Some(uid),
                        at,
                        format_args!(
                            "{call} began in SyncTerminatingPod before the local status was set"
                        ),
                    );
                }
            }
            Transition::SyncStep {
                uid,
                step: SyncStepKind::StatusSet,
            } => *self.status_set.at(*uid) = true,
            _ if crashed(tr) => self.status_set.reset_all(),
            _ => {
                if let Some(uid) = record_removed(tr) {
                    self.status_set.reset(uid);
                }
            }
        }
    }
}

impl SyncChecker {
    /// A SyncPod begins (the oracle's direct path): what [`Checker::transition`] does for
    /// it (a SyncPod leaves `status_set` alone).
    #[inline(always)]
    pub(crate) fn sync_pod_begin(
        &mut self,
        at: SimTime,
        uid: PodUid,
        grace: Option<i64>,
        facts: &Facts,
        out: &mut Findings,
    ) {
        sync_begin(at, uid, SyncKind::SyncPod, grace, facts, out);
    }

    /// [`SyncChecker::sync_pod_begin`] of the oracle's direct path, which decided from the
    /// pod's worker record, before the sync's beginning changed it, that the SyncPod is
    /// quiet (`quiet`; then it took no snapshot of the record: [`Facts::before`] is stale)
    /// or not (then it took one). Debug builds, which always take the snapshot, check the
    /// decision against it.
    ///
    /// [`Facts::before`]: crate::oracle::facts::Facts::before
    #[inline(always)]
    pub(crate) fn sync_pod_begin_decided(
        &mut self,
        at: SimTime,
        uid: PodUid,
        grace: Option<i64>,
        quiet: bool,
        facts: &Facts,
        out: &mut Findings,
    ) {
        debug_assert_eq!(
            quiet,
            quiet_sync_pod(SyncKind::SyncPod, &facts.before.worker),
            "the quiet SyncPod of {uid} decided before its snapshot"
        );
        if quiet {
            // Debug builds run the full checks too: they must find nothing.
            #[cfg(debug_assertions)]
            sync_begin_checks(uid, SyncKind::SyncPod, grace, facts, &mut |inv, what| {
                panic!("quiet SyncPod begin of {uid} has a finding: {inv:?}: {what}")
            });
            return;
        }
        sync_begin_out_of_line(at, uid, SyncKind::SyncPod, grace, facts, out);
    }
}

/// A sync call begins: checked against the worker record as it was. The common case, a
/// SyncPod of a worker in order, is decided here; every other goes to [`sync_begin_checks`].
#[inline]
fn sync_begin(
    at: SimTime,
    uid: PodUid,
    kind: SyncKind,
    grace: Option<i64>,
    facts: &Facts,
    out: &mut Findings,
) {
    if quiet_sync_pod(kind, &facts.before.worker) {
        // Debug builds run the full checks too: they must find nothing.
        #[cfg(debug_assertions)]
        sync_begin_checks(uid, kind, grace, facts, &mut |inv, what| {
            panic!("quiet SyncPod begin of {uid} has a finding: {inv:?}: {what}")
        });
        return;
    }
    sync_begin_out_of_line(at, uid, kind, grace, facts, out);
}

/// A SyncPod that begins with no sync open, on a worker that neither finished, nor began
/// terminating, nor reached Terminated: none of [`sync_begin_checks`]' findings apply.
#[inline]
pub(crate) fn quiet_sync_pod(kind: SyncKind, w: &WorkerFacts) -> bool {
    kind == SyncKind::SyncPod
        && w.open_sync.is_none()
        && !w.finished
        && !w.terminating_began
        && !w.terminated
}

/// [`sync_begin`] of a sync that is not a quiet SyncPod: the findings go to `out`.
#[inline(never)]
fn sync_begin_out_of_line(
    at: SimTime,
    uid: PodUid,
    kind: SyncKind,
    grace: Option<i64>,
    facts: &Facts,
    out: &mut Findings,
) {
    sync_begin_checks(uid, kind, grace, facts, &mut |inv, what| {
        out.report(facts, inv, Some(uid), at, format_args!("{}", what))
    });
}

/// Every check of a sync call's beginning, each finding handed to `found` as it is made,
/// in this order (no list built on the way).
fn sync_begin_checks(
    uid: PodUid,
    kind: SyncKind,
    grace: Option<i64>,
    facts: &Facts,
    found: &mut dyn FnMut(Inv, String),
) {
    let zero_grace_delete = facts.pod(uid).zero_grace_delete();
    let min_override = facts.before.min_override;
    let w = &facts.before.worker;
    if let Some(open) = w.open_sync {
        found(
            Inv::SingleSyncPerUid,
            format!("{kind} began while {open} was still open"),
        );
    }
    if w.finished {
        found(
            Inv::FinishedIsFinal,
            format!("{kind} began after the worker finished"),
        );
    }
    match kind {
        SyncKind::SyncPod => {
            if w.terminating_began {
                found(
                    Inv::SyncOrder,
                    "SyncPod began after SyncTerminatingPod had begun".into(),
                );
            }
            if w.terminated {
                found(
                    Inv::NoSyncOfKnownTerminated,
                    "SyncPod began for a pod whose worker reached Terminated".into(),
                );
            }
        }
        SyncKind::SyncTerminatingPod | SyncKind::SyncTerminatingRuntimePod => {
            if w.terminated_began {
                found(
                    Inv::SyncOrder,
                    format!("{kind} began after SyncTerminatedPod had begun"),
                );
            }
            if let Some(g) = grace {
                if g < 1 {
                    found(
                        Inv::GraceNeverIncreases,
                        format!("{kind} with a grace period of {g}s (the minimum is 1 s)"),
                    );
                }
                // v1.31's calculateEffectiveGracePeriod reads a deletionGracePeriodSeconds
                // of 0 as unset, so after a delete with grace 0 (worker grace 1) a later
                // kill override (eviction, node shutdown) raises the grace: upstream
                // behaviour, not checked.
                if let Some(o) = min_override.filter(|o| g > (*o).max(1)) {
                    found(
                        Inv::GraceWithinOverrides,
                        format!(
                            "{kind} with grace {g}s after an eviction with grace override {o}s"
                        ),
                    );
                }
                if let Some(prev) = w.last_grace.filter(|prev| g > *prev && !zero_grace_delete) {
                    found(
                        Inv::GraceNeverIncreases,
                        format!("{kind} with grace {g}s after an earlier {prev}s"),
                    );
                }
            }
        }
        SyncKind::SyncTerminatedPod
            if !(w.first_sight_terminal || w.terminating_began && w.last_terminating_ok) =>
        {
            found(
                Inv::SyncOrder,
                "SyncTerminatedPod began without a successful SyncTerminatingPod before it".into(),
            );
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "sync_tests.rs"]
mod tests;
