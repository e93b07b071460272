//! The pod workers' entry points on the kubelet (the loop half of
//! `pkg/kubelet/pod_workers.go`, v1.31): `UpdatePod`, `killPodNow`, the per-UID worker loop
//! (`podWorkerLoop`, `startPodSync`, `allowPodStart`), `completeWork` and the completion
//! functions, and `SyncKnownPods`. The record they drive, and its state-machine rules, are
//! in [`super::pod_workers`]; what differs from upstream is listed there.

use super::known_report::KnownReport;
use super::pod_workers::{
    close_channel, KillPodOptions, PodSyncStatus, PodWorkers, StatusFn, SyncError,
    UpdatePodOptions, UpdateType, Work, WorkType,
};
use super::profile::Sw;
use super::status_memo::Found;
use super::status_memo::MemoView;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::uid_map::UidMap;
use crate::model::{ApiPod, PodUid, Transition};
use crate::model::{KillPodNowStep, NoteKind, WorkerStep};
use crate::sim::Dur;
use std::sync::Arc;

fn full_name(o: &UpdatePodOptions) -> (PodUid, String) {
    if let Some(p) = &o.pod {
        return (p.uid, p.spec.full_name());
    }
    let rp = o
        .running_pod
        .as_ref()
        .expect("update without pod or running pod");
    (rp.uid, format!("{}_{}", rp.name, rp.namespace))
}

/// Whether a record's active update carries a pod, and a static one (`None`: no pod; the
/// report then reads the pending update's).
fn active_pod_kind(st: &PodSyncStatus) -> Option<bool> {
    let pod = st.active_update.as_ref()?.pod.as_ref()?;
    Some(pod.static_pod)
}

/// The UID an update is for (what [`full_name`] pairs with the name).
fn pod_uid(o: &UpdatePodOptions) -> PodUid {
    match (&o.pod, &o.running_pod) {
        (Some(p), _) => p.uid,
        (None, Some(rp)) => rp.uid,
        (None, None) => panic!("update without pod or running pod"),
    }
}

/// `UpdatePod` step 3 for a runtime-only update: decide on the pod the worker knows
/// already (pending, else active), if any. Out of line: rare.
#[cold]
#[inline(never)]
fn prefer_known_pod(
    st: &mut PodSyncStatus,
    options: &mut UpdatePodOptions,
    decision_pod: &mut Option<Arc<ApiPod>>,
) {
    st.observed_runtime = true;
    let known = st
        .pending_update
        .as_ref()
        .and_then(|u| u.pod.clone())
        .or_else(|| st.active_update.as_ref().and_then(|u| u.pod.clone()));
    if let Some(p) = known {
        options.pod = Some(p.clone());
        options.running_pod = None;
        *decision_pod = Some(p);
    }
}

impl Kubelet {
    /// `UpdatePod`: hand an update to the pod's worker.
    pub(crate) fn update_pod(&mut self, ctx: &mut Ctx, mut options: UpdatePodOptions) {
        if let Some(p) = &options.pod {
            // The pod may be active from now on: admission's scan visits it.
            self.config.candidates.insert(p.uid, ());
        }
        if self.legacy() {
            self.legacy_update_pod(ctx, options);
            return;
        }
        // 1. Identify the pod.
        let is_runtime_pod = options.is_runtime_only();
        if options.pod.is_none() && options.running_pod.is_none() {
            return;
        }
        if is_runtime_pod && options.update_type != UpdateType::Kill {
            return; // runtime pods can only be killed
        }
        if options.pod.is_some() {
            options.running_pod = None;
        }
        let uid = pod_uid(&options);
        ctx.emit(Transition::UpdatePod {
            uid,
            ty: options.update_type,
            runtime_only: is_runtime_pod,
        });

        // 2. First sight. The record is looked up once here (twice for a first sight); the
        // steps below that need the whole kubelet (only for kills, terminations and a
        // worker's first update) look it up again. Unlogged: the steps that change what
        // the known-pods report reads note it (a first sight's insert is noted).
        let (mut st, first_time) = match self.pw.records.get_mut_unlogged(&uid) {
            Some(st) => (st, false),
            None => {
                self.first_sight(ctx, uid, &options);
                (
                    self.pw.records.get_mut_unlogged(&uid).expect("inserted"),
                    true,
                )
            }
        };
        let before = st.work_type();

        // 3. Runtime-only substitution: prefer a real pod we already know.
        let mut decision_pod: Option<Arc<ApiPod>> = options.pod.clone();
        if is_runtime_pod {
            prefer_known_pod(st, &mut options, &mut decision_pod);
        }
        // Upstream keeps deciding on `isRuntimePod` (the update as it arrived) below, even
        // when a known pod replaced the running pod in the options.

        // 4. A create for a UID that is terminating: remember that a restart was asked for.
        if !first_time && st.is_termination_requested() && options.update_type == UpdateType::Create
        {
            ctx.reach(Reach::CreateForTerminatingUid);
        }
        // v1.22.0 (switch `podWorkerHandlesUidReuse` false, issue 104648) had no such step:
        // the create merges into a termination, and a finished UID ignores it for good.
        if !first_time
            && st.is_termination_requested()
            && options.update_type == UpdateType::Create
            && self.pw.b.on(Sw::PodWorkerHandlesUidReuse)
        {
            st.restart_requested = true;
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::RestartWhileTerminating,
            });
            self.pw.records.note(uid);
            return;
        }
        // 5. Finished pods ignore updates.
        if st.is_finished() {
            return;
        }
        // 6. Transition to terminating (skipped when it would return at once: already
        // requested, or an update that neither deletes, is terminal, nor kills).
        let may_terminate = !st.is_termination_requested()
            && (is_runtime_pod
                || options.update_type == UpdateType::Kill
                || decision_pod.as_deref().is_some_and(|p| {
                    p.deletion_timestamp.is_some() || p.status.phase.is_terminal()
                }));
        let became_terminating = may_terminate && {
            let b = self.terminate_for_update(
                ctx,
                uid,
                &options,
                decision_pod.as_deref(),
                is_runtime_pod,
            );
            st = self.pw.records.get_mut(&uid).expect("present");
            b
        };
        // 7. Kill options by state (nothing to do for a syncing worker's update without
        // kill options).
        let was_grace_shortened =
            if st.is_terminated() || st.is_termination_requested() || options.kill.is_some() {
                let Some(shortened) = self.kill_options_for_update(
                    ctx,
                    uid,
                    &mut options,
                    decision_pod.as_deref(),
                    is_runtime_pod,
                ) else {
                    return;
                };
                st = self.pw.records.get_mut(&uid).expect("present");
                shortened
            } else {
                false
            };
        // 8. Start a worker if none runs; a static pod joins the queue for its full name.
        if !st.has_worker {
            self.start_worker_if_none(ctx, uid, &options);
            st = self.pw.records.get_mut(&uid).expect("present");
        }
        // 9. Coalesce into the single pending slot and signal. The known-pods report reads
        // the pending update's pod only while the active update has none.
        let reported = st.active_update.as_ref().is_none_or(|u| u.pod.is_none());
        st.pending_update = Some(options);
        st.working = true;
        let need_signal = !st.signalled && st.op.is_none();
        if need_signal {
            st.signalled = true;
        }
        // 10. Cancel in-flight work.
        let cancel = (became_terminating || was_grace_shortened) && st.op.is_some();
        if cancel {
            st.cancelled = true;
        }
        assert!(
            st.work_type() >= before,
            "pod worker rule broken: an update never moves a worker back (terminated to \
             terminating, or terminating to syncing): {uid} {before:?} -> {:?}",
            st.work_type()
        );
        st.assert_invariants();
        if reported {
            self.pw.records.note(uid);
        }
        if need_signal {
            let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
        }
        if cancel {
            self.cancel_post_start(ctx, uid);
        }
    }

    /// `UpdatePod` step 2: the record of a UID seen for the first time (terminated at once
    /// when its pod's API phase is terminal and nothing of it runs, since PR 105527).
    #[cold]
    #[inline(never)]
    fn first_sight(&mut self, ctx: &mut Ctx, uid: PodUid, options: &UpdatePodOptions) {
        let now = ctx.now();
        // The full name is built only for a record's first update (it is kept there).
        let (_, fullname) = full_name(options);
        let mut st = PodSyncStatus::new(fullname, now);
        if let Some(pod) = &options.pod {
            if pod.status.phase.is_terminal() && ctx.epoch() > 0 {
                ctx.reach(Reach::TerminalPodSeenAfterRestart);
            }
            // Before PR 105527 (v1.22.0-2) a pod first seen terminal got a fresh record
            // like any other, and counted in admission until its worker terminated it.
            if pod.status.phase.is_terminal()
                && self.pw.b.on(Sw::TerminalPodsTerminatedOnFirstSight)
            {
                let idle = self
                    .pleg
                    .cache_get(uid)
                    .is_ok_and(|c| !c.has_running_container() && !c.has_ready_sandbox());
                if idle {
                    st.terminate_on_first_sight(now);
                    ctx.emit(Transition::Worker {
                        uid,
                        what: WorkerStep::FirstSightTerminal,
                    });
                }
            }
        }
        self.pw.insert_record(uid, st);
        ctx.emit(Transition::Worker {
            uid,
            what: WorkerStep::Record,
        });
    }

    /// `UpdatePod` step 6: a syncing worker becomes terminating when the update deletes
    /// the pod (a runtime-only update, or a deletion timestamp), carries a terminal phase,
    /// or is a kill. Returns whether it did.
    #[cold]
    #[inline(never)]
    fn terminate_for_update(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        options: &UpdatePodOptions,
        decision_pod: Option<&ApiPod>,
        is_runtime_pod: bool,
    ) -> bool {
        let now = ctx.now();
        let pulling = self.parked_op(uid).is_some_and(|op| op.is_pulling());
        let st = self.pw.records.get_mut_watched(&uid).expect("present");
        if st.is_termination_requested() {
            return false;
        }
        let deleted =
            is_runtime_pod || decision_pod.is_some_and(|p| p.deletion_timestamp.is_some());
        let terminal = decision_pod.is_some_and(|p| p.status.phase.is_terminal());
        let kill = options.update_type == UpdateType::Kill;
        if !(deleted || terminal || kill) {
            return false;
        }
        if deleted {
            st.deleted = true;
        } else if !terminal {
            st.evicted = options.kill.as_ref().is_some_and(|k| k.evict);
        }
        st.request_termination(now);
        if pulling {
            ctx.reach(Reach::KillDuringImagePull);
        }
        ctx.emit(Transition::Worker {
            uid,
            what: WorkerStep::TerminationRequested,
        });
        if !st.is_started() && !is_runtime_pod && st.has_worker {
            ctx.reach(Reach::KillOfUnstartedPod);
        }
        true
    }

    /// `UpdatePod` step 7: the kill options by state. A terminated worker closes the
    /// caller's channel at once and drops them; a terminating one registers the channel
    /// and status function and computes the grace period; a syncing one (no kill) closes
    /// the channel. Returns whether the grace period was shortened, or `None` when the
    /// update is dropped (a runtime-only update for a terminated worker).
    #[cold]
    #[inline(never)]
    fn kill_options_for_update(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        options: &mut UpdatePodOptions,
        decision_pod: Option<&ApiPod>,
        is_runtime_pod: bool,
    ) -> Option<bool> {
        let honour_zero = self.pw.b.on(Sw::GraceOverrideZeroHonoured);
        let st = self.pw.records.get_mut(&uid).expect("present");
        let mut was_grace_shortened = false;
        if st.is_terminated() {
            if is_runtime_pod {
                return None; // a stale housekeeping view must not restart termination
            }
            if let Some(ch) = options.kill.as_ref().and_then(|k| k.completed) {
                close_channel(
                    &mut self.pw.closed_channels,
                    &mut self.pw.kill_waiters,
                    ctx,
                    uid,
                    ch,
                );
            }
            options.kill = None;
        } else if st.is_termination_requested() {
            let kill = options.kill.get_or_insert_with(Box::default);
            // An immediate eviction's override: 0 before PR 124063, 1 from v1.31.
            if matches!(kill.grace_override, Some(0 | 1)) {
                ctx.reach(Reach::KillWithZeroGraceOverride);
            }
            if let Some(ch) = kill.completed {
                st.notify_post_terminating.push(ch);
            }
            if let Some(f) = &kill.status_fn {
                st.status_post_terminating.push(f.clone());
            }
            let (g, shortened) = PodWorkers::effective_grace_as(
                st.grace_period,
                decision_pod,
                Some(kill),
                honour_zero,
            );
            if shortened {
                ctx.reach(Reach::GraceShortened);
            }
            st.set_grace_period(g, honour_zero);
            kill.grace_override = Some(g);
            was_grace_shortened = shortened;
        } else if let Some(k) = options.kill.take() {
            if let Some(ch) = k.completed {
                close_channel(
                    &mut self.pw.closed_channels,
                    &mut self.pw.kill_waiters,
                    ctx,
                    uid,
                    ch,
                );
            }
        }
        Some(was_grace_shortened)
    }

    /// `UpdatePod` step 8: start the worker goroutine if none runs; a static pod joins the
    /// wait queue for its full name.
    #[cold]
    #[inline(never)]
    fn start_worker_if_none(&mut self, ctx: &mut Ctx, uid: PodUid, options: &UpdatePodOptions) {
        let st = self.pw.records.get_mut(&uid).expect("present");
        if st.has_worker {
            return;
        }
        st.has_worker = true;
        if !options.pod.as_ref().is_some_and(|p| p.static_pod) {
            return;
        }
        let full = st.fullname.clone();
        let held = self
            .pw
            .started_static_by_fullname
            .get(&full)
            .is_some_and(|u| *u != uid);
        // v1.22.0 (switch `staticPodFullNameGate` false) had no wait queue.
        if self.pw.b.on(Sw::StaticPodFullNameGate) {
            let queue = self.pw.waiting_static_by_fullname.entry(full).or_default();
            if held || !queue.is_empty() {
                ctx.reach(Reach::SameNamePodsOverlap);
            }
            queue.push(uid);
        } else if held {
            ctx.reach(Reach::SameNamePodsOverlap);
        }
    }

    /// `killPodNow`: ask the pod worker to kill `pod` and return the
    /// `CompletedCh` number the caller blocks on. The caller's wait ends with
    /// `KEv::KillPodNowReturned`: when the channel closes, or after `max(10 s, 1.5 g)`
    /// (event `ExceededGracePeriod`; the termination itself goes on).
    pub(crate) fn kill_pod_now(
        &mut self,
        ctx: &mut Ctx,
        pod: Arc<ApiPod>,
        evict: bool,
        grace_override: Option<i64>,
        status_fn: Option<StatusFn>,
    ) -> u64 {
        let g = grace_override
            .or(pod.spec.termination_grace_period_seconds)
            .unwrap_or(0);
        let timeout = (g + g / 2).max(10);
        let ch = self.pw.new_channel();
        let timer = ctx.after(
            Dur::secs(timeout as u64),
            KEv::KillPodNowReturned {
                uid: pod.uid,
                ch,
                timed_out: true,
            },
        );
        self.pw.kill_waiters.insert(ch, (pod.uid, timer));
        ctx.emit(Transition::KillPodNow {
            uid: pod.uid,
            ch,
            what: KillPodNowStep::Requested,
            evict,
        });
        self.update_pod(
            ctx,
            UpdatePodOptions {
                update_type: UpdateType::Kill,
                pod: Some(pod),
                mirror: None,
                running_pod: None,
                kill: Some(Box::new(KillPodOptions {
                    completed: Some(ch),
                    evict,
                    status_fn,
                    grace_override,
                })),
            },
        );
        ch
    }

    /// A `killPodNow` caller stops waiting: its channel closed, or its timeout fired.
    pub(super) fn kill_pod_now_returned(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        ch: u64,
        timed_out: bool,
    ) {
        if timed_out {
            let Some((uid, _)) = self.pw.kill_waiters.remove(&ch) else {
                return; // the channel closed first
            };
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::ExceededGracePeriod,
            });
            ctx.emit(Transition::KillPodNow {
                uid,
                ch,
                what: KillPodNowStep::TimedOut,
                evict: false,
            });
        } else {
            ctx.emit(Transition::KillPodNow {
                uid,
                ch,
                what: KillPodNowStep::Returned,
                evict: false,
            });
        }
        // The callers: the graceful node shutdown manager and the eviction manager.
        self.shutdown_kill_returned(ctx, ch);
        let _ = self.eviction_kill_returned(ctx, ch, timed_out);
    }

    /// The worker goroutine wakes on its signal channel (`startPodSync` and on).
    pub(super) fn worker_wake(&mut self, ctx: &mut Ctx, uid: PodUid) {
        // Unlogged: a started worker's wake-up changes what the known-pods report reads
        // only if its active update had no pod, or the merge changes the pod's kind
        // (noted below); a first start looks the record up again, noted.
        let Some(st) = self.pw.records.get_mut_unlogged(&uid) else {
            return; // record gone: no work
        };
        st.signalled = false;
        if st.op.is_some() || !st.has_worker {
            return;
        }
        let Some(options) = st.pending_update.take() else {
            st.working = false;
            return;
        };
        let work_type = st.work_type();
        st.cancelled = false;
        // Started pods, and runtime pods going straight to termination, proceed (with the
        // record looked up above; a first start looks it up again).
        let (st, options) = if st.is_started()
            || (options.is_runtime_only() && work_type == WorkType::Terminating)
        {
            let before = active_pod_kind(st);
            st.merge_last_update(&options);
            if before.is_none() || active_pod_kind(st) != before {
                self.pw.records.note(uid);
                (
                    self.pw.records.get_mut_unlogged(&uid).expect("present"),
                    options,
                )
            } else {
                (st, options)
            }
        } else {
            let Some(options) = self.worker_first_start(ctx, uid, options) else {
                return;
            };
            let st = self.pw.records.get_mut(&uid).expect("present");
            (st, options)
        };
        // The update moves into the work (no copy): every branch above that returns
        // before this point consumed or merged it.
        let work = Work { work_type, options };
        let (op, min) = st.begin_sync(uid, &mut self.pw.next_op);
        if work.options.is_runtime_only() {
            self.run_work(ctx, uid, op, work, None);
            return;
        }
        // podCache.GetNewerThan(uid, lastSyncTime): blocks until the PLEG has a newer status
        // (found on the same search the sync reads it from).
        if let Some(cached) = self.pleg.cache_get_if_newer(uid, min) {
            // A `SyncPod`'s status memo is tested here, on the record held.
            let memo = match (&cached, work.work_type, &work.options.pod) {
                (Ok(rt), WorkType::Sync, Some(pod)) => {
                    let view = MemoView::of(
                        &self.b,
                        &self.status.statuses,
                        &self.reason_cache,
                        &self.prober,
                    );
                    Some(view.hit(st.status_memo.as_ref(), pod, rt))
                }
                _ => None,
            };
            self.run_work(ctx, uid, op, work, Some(Found { cached, memo }));
        } else {
            self.pleg.add_waiter(uid, min);
            self.waiting_work.insert(uid, (op, work));
        }
    }

    /// A worker's wake-up for a pod not started yet (`allowPodStart`, then `startedAt`):
    /// the options to run with, or `None` when the pod cannot start (it finished
    /// unstarted, or a static pod waits for its full name). Out of line: once per pod.
    #[cold]
    #[inline(never)]
    fn worker_first_start(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        options: UpdatePodOptions,
    ) -> Option<UpdatePodOptions> {
        let now = ctx.now();
        let st = self.pw.records.get_mut(&uid).expect("present");
        if options.pod.is_none() {
            st.merge_last_update(&options);
            self.cleanup_unstarted_pod(ctx, uid);
            return None;
        }
        // allowPodStart: non-static pods may always start; a static pod whose
        // termination was requested never can; another only when it holds its full name.
        let is_static = options.pod.as_ref().is_some_and(|p| p.static_pod);
        let gate = self.pw.b.on(Sw::StaticPodFullNameGate);
        let unstarted_fix = self.pw.b.on(Sw::UnstartedPodsDoNotBlockStart);
        let mut beside_runtime = false;
        if is_static && !gate {
            // v1.22.0: no full-name gate; remember the UID last started under the name
            // (for the orphaned mirror-pod check).
            let full = st.fullname.clone();
            self.pw.started_static_by_fullname.insert(full, uid);
        } else if is_static {
            if st.is_termination_requested() && unstarted_fix {
                st.merge_last_update(&options);
                self.cleanup_unstarted_pod(ctx, uid);
                return None;
            }
            let full = st.fullname.clone();
            // Containers of another UID with this full name that the runtime runs (after
            // a restart: a runtime-only pod the gate does not know, issues 112814,
            // 116880). Counted only with switch `fullNameGateCountsRuntimePods`.
            let runtime_other = ctx.list_running_pods().iter().any(|rp| {
                rp.uid != uid
                    && !rp.containers.is_empty()
                    && rp.name.len() + rp.namespace.len() + 1 == full.len()
                    && full.starts_with(rp.name.as_str())
                    && full.ends_with(rp.namespace.as_str())
            });
            let runtime_blocks = runtime_other && self.pw.b.on(Sw::FullNameGateCountsRuntimePods);
            beside_runtime = runtime_other;
            if runtime_blocks || !self.pw.allow_static_pod_start(&full, uid) {
                ctx.reach(Reach::StaticPodWaitsForFullName);
                let st = self.pw.records.get_mut(&uid).expect("present");
                if unstarted_fix {
                    st.pending_update = Some(options);
                }
                // else (v1.22.5 / v1.23.0, PR 104743 before PR 107900): the update is
                // consumed; only a later UpdatePod (the work queue's resync of a pod
                // still in config) asks again.
                st.working = false;
                let delay = self.pw.jitter(self.pw.back_off_period);
                self.pw.work_queue.enqueue(uid, now + delay);
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::StaticPodBlocked,
                });
                return None;
            }
        }
        let st = self.pw.records.get_mut(&uid).expect("present");
        if beside_runtime {
            ctx.reach(Reach::StaticPodStartedBesideRuntimePod);
        }
        st.mark_started(now);
        st.merge_last_update(&options);
        ctx.emit(Transition::Worker {
            uid,
            what: WorkerStep::Started,
        });
        Some(options)
    }

    /// The PLEG released a worker blocked in `GetNewerThan`.
    pub(super) fn worker_cache_ready(&mut self, ctx: &mut Ctx, uid: PodUid) {
        if let Some((op, work)) = self.waiting_work.remove(&uid) {
            if self.pw.records.get(&uid).and_then(|s| s.op) == Some(op) {
                self.run_work(ctx, uid, op, work, None);
            }
        }
    }

    /// `cleanupUnstartedPod`: a pod that can never start.
    fn cleanup_unstarted_pod(&mut self, ctx: &mut Ctx, uid: PodUid) {
        let now = ctx.now();
        self.pw.release_static(uid);
        if let Some(st) = self.pw.records.get_mut_watched(&uid) {
            st.finish_unstarted(now);
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::FinishedNeverStarted,
            });
        }
    }

    /// `acknowledgeTerminating`: returns the last registered status function.
    pub(super) fn acknowledge_terminating(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
    ) -> Option<StatusFn> {
        let st = self.pw.records.get_mut(&uid)?;
        if !st.started_terminating && st.is_termination_requested() {
            st.acknowledge_termination();
            ctx.emit(Transition::Worker {
                uid,
                what: WorkerStep::TerminationAcknowledged,
            });
        }
        st.status_post_terminating.last().cloned()
    }

    /// A sync operation ended: outcome handling and `completeWork`.
    pub(super) fn finish_work(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        work: &Work,
        result: Result<bool, SyncError>,
    ) {
        if self.legacy() {
            self.legacy_finish_work(ctx, uid, op_id, work, result);
            return;
        }
        let now = ctx.now();
        // Before PR 108366 SyncPod returned only an error: the worker learned that the pod
        // was terminal only from a later update whose pod carried a terminal API phase.
        let result = match result {
            Ok(true)
                if work.work_type == WorkType::Sync
                    && !self.b.on(Sw::TerminalPhaseAfterTermination) =>
            {
                Ok(false)
            }
            r => r,
        };
        // The common ends (a failure, or a sync of a pod still running) change no phase:
        // `completeWork` alone, on the record the sync's end looks up.
        if let (Err(_), _) | (Ok(false), WorkType::Sync) = (&result, work.work_type) {
            if self.pw.end_sync_and_complete(uid, op_id, now, result.err()) == Some(true) {
                let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
            }
            return;
        }
        let Some(st) = self.pw.end_sync_record(uid, op_id, now) else {
            return;
        };
        let runtime_only = work.options.is_runtime_only();
        let mut phase_transition = false;
        match (&result, work.work_type) {
            (Err(_), _) => {}
            (Ok(_), WorkType::Terminated) => {
                // completeTerminated
                st.mark_finished();
                self.pw.release_static(uid);
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::Finished,
                });
                return;
            }
            (Ok(_), WorkType::Terminating) if runtime_only => {
                // completeTerminatingRuntimePod
                st.mark_terminated(now);
                st.mark_finished();
                self.pw.release_static(uid);
                self.pw.remove_record(uid);
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::RuntimePodRecordRemoved,
                });
                return;
            }
            (Ok(_), WorkType::Terminating) => {
                // completeTerminating
                st.mark_terminated(now);
                let chans = std::mem::take(&mut st.notify_post_terminating);
                st.status_post_terminating.clear();
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::Terminated,
                });
                for ch in chans {
                    close_channel(
                        &mut self.pw.closed_channels,
                        &mut self.pw.kill_waiters,
                        ctx,
                        uid,
                        ch,
                    );
                }
                self.requeue_last_pod_update(uid);
                phase_transition = true;
            }
            (Ok(true), WorkType::Sync) => {
                // completeSync
                if !st.is_termination_requested() {
                    st.request_termination(now);
                }
                st.acknowledge_termination();
                ctx.emit(Transition::Worker {
                    uid,
                    what: WorkerStep::TerminalTerminating,
                });
                self.requeue_last_pod_update(uid);
                phase_transition = true;
            }
            (Ok(false), WorkType::Sync) => {}
        }
        self.complete_work(ctx, uid, phase_transition, result.err());
    }

    /// `requeueLastPodUpdate`.
    fn requeue_last_pod_update(&mut self, uid: PodUid) {
        let Some(st) = self.pw.records.get_mut(&uid) else {
            return;
        };
        if st.pending_update.is_some() {
            return;
        }
        if let Some(active) = st.active_update.clone() {
            st.pending_update = Some(active);
            st.working = true;
        }
    }

    /// `completeWork`: schedule the next resync and pick up pending work.
    fn complete_work(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        phase_transition: bool,
        err: Option<SyncError>,
    ) {
        let now = ctx.now();
        let delay = if phase_transition {
            Dur::ZERO
        } else {
            let period = self.pw.requeue_period(err);
            self.pw.jitter(period)
        };
        self.pw.work_queue.enqueue(uid, now + delay);
        let Some(st) = self.pw.records.get_mut(&uid) else {
            return;
        };
        if st.take_pending_signal() {
            let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
        }
    }

    /// `SyncKnownPods` (called by housekeeping): forget finished orphans, drive orphaned
    /// started pods into termination, and report every remaining UID.
    #[cfg(test)]
    pub(crate) fn sync_known_pods(
        &mut self,
        ctx: &mut Ctx,
        desired: &UidMap<Arc<ApiPod>>,
    ) -> super::pod_workers::KnownPods {
        let mut out = KnownReport::default();
        self.sync_known_pods_into(ctx, desired, &mut out);
        out.pods
    }

    /// [`Kubelet::sync_known_pods`] into a report kept between calls: only the entries of
    /// records (and desired UIDs) changed since the last call are recomputed. A report kept
    /// between calls must be given the pod manager's pods as `desired` (their changes are
    /// read from its log); a fresh report is built in full.
    #[inline(never)]
    pub(crate) fn sync_known_pods_into(
        &mut self,
        ctx: &mut Ctx,
        desired: &UidMap<Arc<ApiPod>>,
        out: &mut KnownReport,
    ) {
        let now = ctx.now();
        self.pw.pods_synced = true;
        // Records needing work (a restart request, or no longer desired), in UID order.
        // The report is brought up to date again below only if some record needed work
        // (which changes records).
        out.refresh(&mut self.pw.records, desired, &mut self.config.changed);
        let act: Vec<(PodUid, bool)> = out.act().collect();
        if act.is_empty() {
            return;
        }
        for (uid, orphan) in act {
            let st = self.pw.records.get_mut_watched(&uid).expect("listed");
            {
                // removeTerminatedWorker
                if st.finished {
                    self.pw.release_static(uid);
                    self.pw.remove_record(uid);
                    self.pw.work_queue.remove(uid);
                    ctx.emit(Transition::Worker {
                        uid,
                        what: WorkerStep::Forgotten,
                    });
                    continue;
                }
                // v1.22-v1.26 (switch `orphanedPodsDrivenToCompletion` false, PR 113145):
                // removeTerminatedWorker only; an orphan whose last sync failed waits for an
                // UpdatePod that never comes.
                if orphan && self.pw.b.on(Sw::OrphanedPodsDrivenToCompletion) {
                    st.deleted = true;
                    if !st.is_started() && !st.observed_runtime {
                        self.pw.release_static(uid);
                        self.pw.remove_record(uid);
                        ctx.emit(Transition::Worker {
                            uid,
                            what: WorkerStep::OrphanNeverStarted,
                        });
                        continue;
                    }
                    if !st.is_termination_requested() {
                        st.request_termination(now);
                        let pod = st.active_update.as_ref().and_then(|u| u.pod.clone());
                        let grace = match pod {
                            Some(p) => {
                                PodWorkers::effective_grace_as(
                                    st.grace_period,
                                    Some(&p),
                                    None,
                                    self.pw.b.on(Sw::GraceOverrideZeroHonoured),
                                )
                                .0
                            }
                            None => 1,
                        };
                        st.set_grace_period(grace, self.pw.b.on(Sw::GraceOverrideZeroHonoured));
                        ctx.emit(Transition::Worker {
                            uid,
                            what: WorkerStep::OrphanTerminationRequested,
                        });
                    }
                    self.requeue_last_pod_update(uid);
                    let st = self.pw.records.get_mut(&uid).expect("present");
                    if st.pending_update.is_some()
                        && !st.signalled
                        && st.op.is_none()
                        && st.has_worker
                    {
                        st.signalled = true;
                        let _ = ctx.after(Dur::ZERO, KEv::WorkerWake(uid));
                    }
                }
            }
        }
        out.refresh(&mut self.pw.records, desired, &mut self.config.changed);
    }
}
