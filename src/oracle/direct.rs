//! The oracle's direct paths: one small out-of-line function per frequent kind of
//! transition, each making the same facts update and calling the same checkers as
//! [`Oracle::general`], without its dispatches on the kind. [`Oracle::other`] only picks
//! the function (a jump on the kind and a tail call), so a transition runs through the
//! few cache lines of its own kind's code and the dispatcher saves no registers.
//!
//! Debug builds check each path ([`Oracle::check_direct`]): the transition's topic is
//! the one whose checkers the path calls, and the record pushed to the pod's history is
//! the one the general path keeps. The kinds no checker acts on show the transition to
//! the checkers of its topic and assert that none reports ([`Checkers::unwatched`]).
//!
//! [`Checkers::unwatched`]: super::checkers::Checkers::unwatched

use super::checkers::{self, topic};
use super::facts::Facts;
use super::ring::{NodeRec, Rec, I64};
use super::Oracle;
use crate::model::{ApiPodStatus, PodPhase, PodUid, SyncKind, Transition};
use crate::sim::SimTime;
use std::sync::Arc;

impl Oracle {
    /// Push `rec` at `at` to the history of `uid` if the pod has one (else nothing, and
    /// false: the caller then takes [`Oracle::general`], which makes the pod's facts and
    /// history). A pod with a history has its facts (every push follows `Facts::pod_mut`),
    /// so the path needs no test of them; it makes no call, so the direct paths built on
    /// it save no registers.
    #[inline(always)]
    fn record(&mut self, at: SimTime, uid: PodUid, rec: Rec) -> bool {
        let pushed = self.facts.rings.try_push(uid, at, rec);
        debug_assert!(
            !pushed || self.facts.get(uid).is_some(),
            "{uid} has a ring, no facts"
        );
        pushed
    }

    /// `UpdatePod`: its record and [`Facts::update_pod`]'s fact; no checker looks at it.
    #[inline(never)]
    pub(super) fn direct_update_pod(&mut self, at: SimTime, tr: &Transition) {
        let Transition::UpdatePod {
            uid,
            ty,
            runtime_only,
        } = *tr
        else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::UpdatePod(ty, runtime_only)) {
            return self.general(at, tr);
        }
        self.facts.update_pod_fact(at, uid, runtime_only);
        self.check_direct(at, tr, topic::NONE);
    }

    /// A SyncPod's beginning: the sync checker and liveness (the shutdown checker acts on
    /// terminating syncs only). Whether it is quiet (no check of the sync checker applies,
    /// [`checkers::sync::quiet_sync_pod`]) is decided from the worker record before the
    /// sync changes it: a quiet one, nearly every one, needs no snapshot of the record
    /// ([`Facts::snapshot_worker`]; debug builds take it all the same, and check the
    /// decision against it).
    #[inline(never)]
    pub(super) fn direct_sync_pod_begin(&mut self, at: SimTime, tr: &Transition) {
        let Transition::SyncBegin {
            uid,
            kind: SyncKind::SyncPod,
            grace,
        } = *tr
        else {
            unreachable!()
        };
        let rec = match grace {
            Some(g) => Rec::SyncBeginGrace(SyncKind::SyncPod, I64::new(g)),
            None => Rec::SyncBegin(SyncKind::SyncPod),
        };
        if !self.record(at, uid, rec) {
            return self.general(at, tr);
        }
        let quiet = checkers::sync::quiet_sync_pod(SyncKind::SyncPod, &self.facts.pod(uid).worker);
        if !quiet || cfg!(debug_assertions) {
            return self.sync_pod_begin_checked(at, tr, uid, grace, quiet);
        }
        // A quiet SyncPod (release builds): no snapshot and no sync check; the path calls
        // nothing but in tail position, so it saves no register.
        self.facts.sync_begin(uid, SyncKind::SyncPod, grace);
        self.checkers
            .sync_pod_begin_decided(at, tr, uid, grace, true, &self.facts, &mut self.out);
    }

    /// [`Oracle::direct_sync_pod_begin`] of a SyncPod that is not quiet (and of every one in
    /// debug builds): the worker record's snapshot, then the sync checker's checks.
    #[inline(never)]
    fn sync_pod_begin_checked(
        &mut self,
        at: SimTime,
        tr: &Transition,
        uid: PodUid,
        grace: Option<i64>,
        quiet: bool,
    ) {
        self.facts.snapshot_worker(uid);
        self.facts.sync_begin(uid, SyncKind::SyncPod, grace);
        self.check_direct(at, tr, topic::SYNC_BEGIN);
        self.checkers
            .sync_pod_begin_decided(at, tr, uid, grace, quiet, &self.facts, &mut self.out);
    }

    /// The beginning of a SyncTerminatingPod, SyncTerminatingRuntimePod or
    /// SyncTerminatedPod: its record, the snapshot of the worker record and
    /// [`Facts::sync_begin`], then the checkers of its topic, without the table.
    #[inline(never)]
    pub(super) fn direct_sync_begin(&mut self, at: SimTime, tr: &Transition) {
        let Transition::SyncBegin { uid, kind, grace } = *tr else {
            unreachable!()
        };
        let rec = match grace {
            Some(g) => Rec::SyncBeginGrace(kind, I64::new(g)),
            None => Rec::SyncBegin(kind),
        };
        if !self.record(at, uid, rec) {
            return self.general(at, tr);
        }
        self.facts.snapshot_worker(uid);
        self.facts.sync_begin(uid, kind, grace);
        self.check_direct(at, tr, topic::SYNC_BEGIN);
        self.checkers
            .route::<{ topic::SYNC_BEGIN }>(at, tr, &self.facts, &mut self.out);
    }

    /// A sync's end without an error: only liveness looks at it.
    #[inline(never)]
    pub(super) fn direct_sync_end(&mut self, at: SimTime, tr: &Transition) {
        let Transition::SyncEnd {
            uid,
            kind,
            error: None,
        } = *tr
        else {
            return self.direct_sync_failed(at, tr);
        };
        if !self.record(at, uid, Rec::SyncEnd(kind, None)) {
            return self.general(at, tr);
        }
        self.facts.sync_end(at, uid, kind, true);
        self.check_direct(at, tr, topic::SYNC_END);
        self.checkers.sync_end(at, uid, kind);
    }

    /// A sync's end with an error. Nearly always the pod's last error again (a pod whose
    /// sync keeps failing fails it with the same text): its id is the kept one
    /// ([`Facts::last_error_is`], one comparison of the text, no table lookup), and the
    /// rest is [`Oracle::direct_sync_end`]'s path. Any other text, or a pod without facts
    /// or history yet, takes [`Oracle::sync_failed_other`], out of line: the path that runs
    /// stays a few cache lines.
    #[inline(never)]
    fn direct_sync_failed(&mut self, at: SimTime, tr: &Transition) {
        let Transition::SyncEnd {
            uid,
            kind,
            error: Some(ref error),
        } = *tr
        else {
            unreachable!()
        };
        let Some(e) = self.facts.last_error_is(uid, error) else {
            return self.sync_failed_other(at, tr, uid, kind, error);
        };
        if !self.record(at, uid, Rec::SyncEnd(kind, Some(e))) {
            return self.general(at, tr);
        }
        self.facts.sync_end(at, uid, kind, false);
        self.check_direct(at, tr, topic::SYNC_END);
        self.checkers.sync_end(at, uid, kind);
    }

    /// [`Oracle::direct_sync_failed`] of `tr`, pod `uid`'s sync of `kind` failed with
    /// `error`, a text other than the pod's last error (or of a pod without its facts yet):
    /// the text is interned through the table and kept as the pod's last
    /// ([`Facts::sync_end_of`]).
    #[cold]
    #[inline(never)]
    fn sync_failed_other(
        &mut self,
        at: SimTime,
        tr: &Transition,
        uid: PodUid,
        kind: SyncKind,
        error: &str,
    ) {
        self.facts.sync_end_of(at, uid, kind, error);
        self.check_direct(at, tr, topic::SYNC_END);
        self.checkers.sync_end(at, uid, kind);
    }

    /// A note that changes no fact ([`super::facts::plain_note`]): only its record; no checker
    /// acts on it.
    #[inline(never)]
    pub(super) fn direct_plain_note(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Note { uid, what } = *tr else {
            unreachable!()
        };
        debug_assert!(super::facts::plain_note(what), "{what:?} changes a fact");
        if !self.record(at, uid, Rec::Note(what)) {
            return self.general(at, tr);
        }
        self.check_direct(at, tr, topic::NOTE);
        self.checkers.unwatched(at, tr, &self.facts, &mut self.out);
    }

    /// Any other note ([`Facts::note_fact`]): its record and its facts, then the checkers
    /// of its topic, without the table.
    #[inline(never)]
    pub(super) fn direct_note(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Note { uid, what } = *tr else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::Note(what)) {
            return self.general(at, tr);
        }
        self.facts.note_fact(at, uid, what);
        self.check_direct(at, tr, topic::NOTE);
        self.checkers
            .route::<{ topic::NOTE }>(at, tr, &self.facts, &mut self.out);
    }

    /// A step of a sync (`SyncStep`): only its record (it changes no fact), then the
    /// checkers of its topic, without the table.
    #[inline(never)]
    pub(super) fn direct_sync_step(&mut self, at: SimTime, tr: &Transition) {
        let Transition::SyncStep { uid, step } = *tr else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::Step(step)) {
            return self.general(at, tr);
        }
        self.check_direct(at, tr, topic::SYNC_STEP);
        self.checkers
            .route::<{ topic::SYNC_STEP }>(at, tr, &self.facts, &mut self.out);
    }

    /// A sandbox became ready or stopped: its record and the pod's ready sandboxes
    /// ([`Facts::sandbox_fact`]); no checker looks at it.
    #[inline(never)]
    pub(super) fn direct_sandbox(&mut self, at: SimTime, tr: &Transition) {
        let (uid, id, ready, rec) = match *tr {
            Transition::SandboxReady { uid, id } => (uid, id, true, Rec::SandboxReady(id)),
            Transition::SandboxStopped { uid, id } => (uid, id, false, Rec::SandboxStopped(id)),
            _ => unreachable!(),
        };
        if !self.record(at, uid, rec) {
            return self.general(at, tr);
        }
        self.facts.sandbox_fact(at, uid, id, ready);
        self.check_direct(at, tr, topic::NONE);
    }

    /// The API was asked to delete a pod: its record and [`Facts::delete_requested_fact`];
    /// no checker looks at it.
    #[inline(never)]
    pub(super) fn direct_delete_requested(&mut self, at: SimTime, tr: &Transition) {
        let Transition::ApiDeleteRequested { uid, grace } = *tr else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::DeleteRequested(I64::new(grace))) {
            return self.general(at, tr);
        }
        self.facts.delete_requested_fact(at, uid, grace);
        self.check_direct(at, tr, topic::NONE);
    }

    /// The beginning of a CRI call: only the checkers of its topic that act on the call
    /// ([`checkers::cri_begin_checkers`]; none for most calls).
    #[inline(never)]
    pub(super) fn direct_cri_begin(&mut self, at: SimTime, tr: &Transition) {
        let Transition::CriBegin {
            uid,
            call,
            target,
            timeout_s,
        } = *tr
        else {
            unreachable!()
        };
        let rec = match timeout_s {
            Some(t) => Rec::CriBeginTimeout(call, target, I64::new(t)),
            None => Rec::CriBegin(call, target),
        };
        if !self.record(at, uid, rec) {
            return self.general(at, tr);
        }
        self.check_direct(at, tr, topic::CRI_BEGIN);
        self.checkers
            .cri_begin(at, tr, call, &self.facts, &mut self.out);
    }

    /// A pod worker's step: its record, the snapshot of the pod's values before it and
    /// [`Facts::worker`]'s facts, then the checkers of its topic that act on the step
    /// ([`checkers::worker_step_checkers`]), without the table.
    #[inline(never)]
    pub(super) fn direct_worker(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Worker { uid, what } = *tr else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::Worker(what)) {
            return self.general(at, tr);
        }
        self.facts.snapshot(uid);
        self.facts.worker(at, uid, what);
        self.check_direct(at, tr, topic::WORKER);
        self.checkers
            .worker_step(at, tr, what, &self.facts, &mut self.out);
    }

    /// A host operation: its record and [`Facts::host_fact`], then the checkers of its
    /// topic, without the table.
    #[inline(never)]
    pub(super) fn direct_host(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Host { uid, what } = *tr else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::Host(what)) {
            return self.general(at, tr);
        }
        self.facts.host_fact(uid, what);
        self.check_direct(at, tr, topic::HOST);
        self.checkers
            .route::<{ topic::HOST }>(at, tr, &self.facts, &mut self.out);
    }

    /// A container runs: its record (the name interned, and kept as
    /// [`Facts::container`]) and [`Facts::running_fact`], then the checkers of its topic,
    /// without the table.
    #[inline(never)]
    pub(super) fn direct_running(&mut self, at: SimTime, tr: &Transition) {
        let Transition::ContainerRunning { uid, id, ref name } = *tr else {
            unreachable!()
        };
        let c = self.facts.syms.intern(name);
        if !self.record(at, uid, Rec::Running(id, c)) {
            return self.general(at, tr);
        }
        self.facts.container = c;
        self.facts.running_fact(at, uid, id);
        self.check_direct(at, tr, topic::CONTAINER_RUNNING);
        self.checkers
            .route::<{ topic::CONTAINER_RUNNING }>(at, tr, &self.facts, &mut self.out);
    }

    /// A container exited: its record and [`Facts::exited_fact`], then the checkers of its
    /// topic, without the table.
    #[inline(never)]
    pub(super) fn direct_exited(&mut self, at: SimTime, tr: &Transition) {
        let Transition::ContainerExited {
            uid,
            id,
            code,
            reason,
        } = *tr
        else {
            unreachable!()
        };
        let r = self.facts.syms.intern_static(reason);
        if !self.record(at, uid, Rec::Exited(id, code, r)) {
            return self.general(at, tr);
        }
        self.facts.exited_fact(at, uid, id, code);
        self.check_direct(at, tr, topic::CONTAINER_EXITED);
        self.checkers
            .route::<{ topic::CONTAINER_EXITED }>(at, tr, &self.facts, &mut self.out);
    }

    /// The end of a CRI call: its record, then, when it changes a fact
    /// ([`Facts::cri_end_changes`]) or a checker acts on it ([`checkers::cri_end_watched`]),
    /// [`Oracle::cri_end_checked`] (a tail call). A call that ended well, nearly every
    /// one, usually needs neither: the path then calls nothing (no register saved).
    #[inline(never)]
    pub(super) fn direct_cri_end(&mut self, at: SimTime, tr: &Transition) {
        let Transition::CriEnd {
            uid,
            call,
            target,
            error,
        } = *tr
        else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::CriEnd(call, target, error)) {
            return self.general(at, tr);
        }
        let failed = error.is_some();
        if Facts::cri_end_changes(call, failed) || checkers::cri_end_watched(call, failed) {
            return self.cri_end_checked(at, tr);
        }
        self.check_direct(at, tr, topic::CRI_END);
        self.checkers.unwatched(at, tr, &self.facts, &mut self.out);
    }

    /// [`Oracle::direct_cri_end`] of a call that changes a fact or that a checker acts on,
    /// its record pushed: [`Facts::cri_end_fact`], then the checkers of its topic, without
    /// the table, when one acts on it.
    #[inline(never)]
    fn cri_end_checked(&mut self, at: SimTime, tr: &Transition) {
        let Transition::CriEnd {
            uid,
            call,
            target,
            error,
        } = *tr
        else {
            unreachable!()
        };
        self.facts
            .cri_end_fact(at, uid, call, target, error.is_some());
        self.check_direct(at, tr, topic::CRI_END);
        if checkers::cri_end_watched(call, error.is_some()) {
            self.checkers
                .route::<{ topic::CRI_END }>(at, tr, &self.facts, &mut self.out);
        } else {
            self.checkers.unwatched(at, tr, &self.facts, &mut self.out);
        }
    }

    /// A watch delivery: only its record; no checker looks at it.
    #[inline(never)]
    pub(super) fn direct_watch(&mut self, at: SimTime, tr: &Transition) {
        let Transition::WatchDelivered { uid, kind } = *tr else {
            unreachable!()
        };
        if !self.record(at, uid, Rec::Watch(kind)) {
            return self.general(at, tr);
        }
        self.check_direct(at, tr, topic::NONE);
    }

    /// A relist: the node's history only; no checker looks at it.
    #[inline(never)]
    pub(super) fn direct_relist(&mut self, at: SimTime, tr: &Transition) {
        let Transition::Relist { changed } = *tr else {
            unreachable!()
        };
        self.facts
            .node
            .recent
            .push_rec(at, NodeRec::Relist(changed));
        self.check_direct(at, tr, topic::NONE);
    }

    /// A housekeeping: the node's history, and liveness.
    #[inline(never)]
    pub(super) fn direct_housekeeping(&mut self, at: SimTime, tr: &Transition) {
        self.facts.node.recent.push_rec(at, NodeRec::Housekeeping);
        self.check_direct(at, tr, topic::HOUSEKEEPING);
        self.checkers.housekeeping(at, &self.facts, &mut self.out);
    }

    /// A status written to the API ([`Facts::status_patched`]): the checkers of its topic
    /// (the API checker alone, today), without the table.
    #[inline(never)]
    pub(super) fn direct_status_patched(&mut self, at: SimTime, tr: &Transition) {
        let Transition::ApiStatusPatched {
            uid,
            of,
            ref status,
        } = *tr
        else {
            unreachable!()
        };
        self.facts.status_patched(at, uid, of, status);
        self.check_direct(at, tr, topic::API_STATUS_PATCHED);
        self.checkers
            .route::<{ topic::API_STATUS_PATCHED }>(at, tr, &self.facts, &mut self.out);
    }

    /// The status manager's cache took a phase ([`Facts::local_status`]): the checkers of
    /// its topic (the API checker alone, today), without the table.
    #[inline(never)]
    pub(super) fn direct_local_status(&mut self, at: SimTime, tr: &Transition) {
        let Transition::LocalStatus { uid, phase } = *tr else {
            unreachable!()
        };
        self.facts.local_status(at, uid, phase);
        self.check_direct(at, tr, topic::LOCAL_STATUS);
        self.checkers
            .route::<{ topic::LOCAL_STATUS }>(at, tr, &self.facts, &mut self.out);
    }

    /// A config operation: its record, the snapshot of the pod's values before it and its
    /// facts ([`Facts::config_op`]), then the checkers of its topic (hooks, shutdown and
    /// liveness, today), without the table.
    #[inline(never)]
    pub(super) fn direct_config_op(&mut self, at: SimTime, tr: &Transition) {
        let Transition::ConfigOp { uid, op } = *tr else {
            unreachable!()
        };
        self.facts.pod_mut(uid);
        self.facts.rings.push(uid, at, Rec::Config(op));
        self.facts.snapshot(uid);
        self.facts.config_op(at, uid, op);
        self.check_direct(at, tr, topic::CONFIG_OP);
        self.checkers
            .route::<{ topic::CONFIG_OP }>(at, tr, &self.facts, &mut self.out);
    }

    /// The API's status of a pod (`ApiStatus`): only its record; no checker looks at it.
    #[inline(never)]
    pub(super) fn direct_api_status(&mut self, at: SimTime, tr: &Transition) {
        let Transition::ApiStatus {
            uid,
            phase,
            ref reason,
        } = *tr
        else {
            unreachable!()
        };
        self.facts.pod_mut(uid);
        let reason = reason.as_deref().map(|r| self.facts.syms.intern(r));
        self.facts.rings.push(uid, at, Rec::Status(phase, reason));
        self.check_direct(at, tr, topic::NONE);
    }
}

impl Facts {
    /// [`Facts::update`] of an `ApiStatusPatched` of object `obj` for pod `of`: the record
    /// goes to the history of `of`, then [`Facts::status_patched_fact`].
    #[inline(always)]
    fn status_patched(&mut self, at: SimTime, obj: PodUid, of: PodUid, status: &Arc<ApiPodStatus>) {
        self.pod_mut(of);
        self.rings
            .push(of, at, Rec::Patched(obj, status.phase, status.ready));
        self.status_patched_fact(at, obj, status);
    }

    /// [`Facts::update`] of a `LocalStatus`: its record, then [`Facts::local_status_fact`].
    #[inline(always)]
    fn local_status(&mut self, at: SimTime, uid: PodUid, phase: PodPhase) {
        self.pod_mut(uid);
        self.rings.push(uid, at, Rec::LocalStatus(phase));
        self.local_status_fact(uid, phase);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        ConfigOpKind, ContainerId, CriFailed, CriFailure, CriOp, HostOp, NoteKind, SandboxId,
        SyncStepKind, WorkerStep,
    };

    /// The facts and the history the general path leaves after `trs`.
    fn general(trs: &[Transition]) -> (Facts, Vec<Vec<(SimTime, Rec)>>) {
        let mut f = Facts {
            rings: super::super::ring::Rings::new(super::super::RING, 0),
            ..Default::default()
        };
        for (k, tr) in trs.iter().enumerate() {
            f.update(SimTime(k as u64 * 10), tr);
        }
        let h = (0..4).map(|u| f.rings.of(PodUid(u)).collect()).collect();
        (f, h)
    }

    #[test]
    fn direct_paths_keep_the_general_facts() {
        let status = |phase| {
            Arc::new(ApiPodStatus {
                phase,
                ..Default::default()
            })
        };
        let trs = vec![
            Transition::ConfigOp {
                uid: PodUid(1),
                op: ConfigOpKind::Add,
            },
            Transition::LocalStatus {
                uid: PodUid(1),
                phase: PodPhase::Running,
            },
            Transition::ApiStatusPatched {
                uid: PodUid(3),
                of: PodUid(2),
                status: status(PodPhase::Running),
            },
            Transition::LocalStatus {
                uid: PodUid(1),
                phase: PodPhase::Succeeded,
            },
            Transition::ApiStatusPatched {
                uid: PodUid(1),
                of: PodUid(1),
                status: status(PodPhase::Succeeded),
            },
            Transition::ApiStatus {
                uid: PodUid(1),
                phase: PodPhase::Succeeded,
                reason: Some("Done".into()),
            },
            Transition::Worker {
                uid: PodUid(1),
                what: WorkerStep::Started,
            },
            Transition::Host {
                uid: PodUid(1),
                what: HostOp::VolumesMounted,
            },
            Transition::CriBegin {
                uid: PodUid(1),
                call: CriOp::StartContainer,
                target: 7,
                timeout_s: None,
            },
            Transition::CriBegin {
                uid: PodUid(1),
                call: CriOp::PullImage,
                target: 7,
                timeout_s: Some(30),
            },
            Transition::ContainerRunning {
                uid: PodUid(1),
                id: ContainerId(7),
                name: "app".into(),
            },
            Transition::ContainerExited {
                uid: PodUid(1),
                id: ContainerId(7),
                code: 1,
                reason: "Error",
            },
            Transition::SandboxReady {
                uid: PodUid(1),
                id: SandboxId(4),
            },
            Transition::CriEnd {
                uid: PodUid(1),
                call: CriOp::CreateContainer,
                target: 8,
                error: Some(CriFailure::Failed(CriFailed::ContainerNotCreated)),
            },
            Transition::Note {
                uid: PodUid(1),
                what: NoteKind::FailedSyncStatus,
            },
            Transition::Note {
                uid: PodUid(1),
                what: NoteKind::V121KillRequested,
            },
            Transition::ApiDeleteRequested {
                uid: PodUid(1),
                grace: 45,
            },
            Transition::Worker {
                uid: PodUid(1),
                what: WorkerStep::TerminationRequested,
            },
            Transition::SyncBegin {
                uid: PodUid(1),
                kind: SyncKind::SyncTerminatingPod,
                grace: Some(45),
            },
            Transition::SyncStep {
                uid: PodUid(1),
                step: SyncStepKind::StatusSet,
            },
            Transition::Note {
                uid: PodUid(1),
                what: NoteKind::V121KillDone,
            },
            Transition::SandboxStopped {
                uid: PodUid(1),
                id: SandboxId(4),
            },
            Transition::Host {
                uid: PodUid(1),
                what: HostOp::PodCgroupRemoved,
            },
            Transition::ConfigOp {
                uid: PodUid(1),
                op: ConfigOpKind::Remove,
            },
        ];
        let (want, want_h) = general(&trs);
        let mut o = Oracle::new();
        for (k, tr) in trs.iter().enumerate() {
            o.other(SimTime(k as u64 * 10), tr);
        }
        let f = &o.facts;
        let got_h: Vec<Vec<_>> = (0..4).map(|u| f.rings.of(PodUid(u)).collect()).collect();
        assert_eq!(got_h, want_h);
        assert_eq!(f.pods.len(), want.pods.len());
        for (a, b) in f.pods.iter().zip(&want.pods) {
            assert_eq!(format!("{:?}", a.inc), format!("{:?}", b.inc));
            assert_eq!(a.api_phase, b.api_phase);
            assert_eq!(a.api_status_at, b.api_status_at);
            assert_eq!(a.api_status, b.api_status);
        }
        assert_eq!(
            format!("{:?}", f.before),
            format!("{:?}", want.before),
            "the values before the last transition"
        );
        // Every fact of every pod (the worker's steps, the host's, the containers').
        assert_eq!(format!("{:?}", f.pods), format!("{:?}", want.pods));
        assert_eq!(f.container, want.container);
    }
}
