//! The rare paths of the pod worker's sync operations (`sync.rs`), kept out of line so
//! that the common `SyncPod` (a running pod whose sync changes nothing, or a container in
//! crash-loop back-off) runs through fewer cache lines: the terminating and terminated
//! syncs' plans, the status error that ends a sync before it starts, the terminal-phase
//! end, the static pod's mirror, the kill steps, and every runtime step other than a
//! container start.

use super::pod_workers::{SyncError, Work};
use super::profile::Sw;
use super::sync::{
    apply_status_fn, image_backoff_key, running_pod_from, KillPlan, KillStage, KillState, Op, Step,
    MIN_CONTAINER_GRACE,
};
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::{ApiPod, NoteKind, PodUid, ProbeType, SyncKind, SyncStepKind, Transition};
use crate::model::{ContainerId, PodPhase, SandboxId};
use crate::sim::Dur;
use crate::world::cri::CriReq;
use std::sync::Arc;

/// What a `KillPod` step kills: containers, sandboxes, grace override, probe reason.
type KillArgs = (
    Vec<(ContainerId, String)>,
    Vec<SandboxId>,
    Option<i64>,
    Option<ProbeType>,
);

impl Kubelet {
    /// `GetNewerThan` returned the inspection error: no sync runs, the worker backs off
    /// (event FailedSync).
    #[cold]
    #[inline(never)]
    pub(super) fn sync_status_failed(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        work: Work,
        e: crate::model::CriError,
    ) {
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::FailedSyncStatus,
        });
        let err = format!("error determining status: {}", e.as_str());
        self.finish_work(ctx, uid, op_id, &work, Err(SyncError::of(&err)));
    }

    /// The other sync operations (`SyncTerminatingPod`, `SyncTerminatingRuntimePod`,
    /// `SyncTerminatedPod`): plan and start them. Out of line: about one sync in fifty.
    #[cold]
    #[inline(never)]
    pub(super) fn plan_termination(&mut self, ctx: &mut Ctx, uid: PodUid, mut op: Box<Op>) {
        let grace = op.grace;
        match op.kind {
            SyncKind::SyncPod => unreachable!("SyncPod is planned by plan_sync_pod"),
            SyncKind::SyncTerminatingPod => {
                let mut api = self.generate_api_pod_status(ctx, &op.pod, &op.status, false);
                let status_fn = self.acknowledge_terminating(ctx, uid);
                if let Some(f) = &status_fn {
                    apply_status_fn(&mut api, f);
                }
                self.set_pod_status(ctx, &op.pod, api);
                ctx.emit(Transition::SyncStep {
                    uid,
                    step: SyncStepKind::StatusSet,
                });
                if self.b.on(Sw::StopProbesAtTermination) {
                    self.probe_stop_liveness_and_startup(ctx, &op.pod);
                    ctx.emit(Transition::SyncStep {
                        uid,
                        step: SyncStepKind::ProbesStopped,
                    });
                }
                plan_kill_running(&mut op, grace);
                op.plan.push_back(Step::VerifyStopped);
            }
            SyncKind::SyncTerminatingRuntimePod => {
                let _ = self.acknowledge_terminating(ctx, uid);
                let rp = op.work.options.running_pod.clone().expect("runtime pod");
                op.plan.push_back(Step::KillPod(Box::new(KillPlan {
                    containers: rp.containers.clone(),
                    sandboxes: rp.sandboxes.clone(),
                    grace_override: Some(1),
                    reason: None,
                })));
            }
            SyncKind::SyncTerminatedPod => {
                let api = self.generate_api_pod_status(ctx, &op.pod, &op.status, true);
                self.set_pod_status(ctx, &op.pod, api);
                if self.mounted.contains(&uid) {
                    op.plan.push_back(Step::UnmountVolumes);
                }
                op.plan.push_back(Step::RemovePodCgroup);
                op.plan.push_back(Step::FinishTerminated);
            }
        }
        self.advance(ctx, uid, op);
    }

    /// `SyncPod` found the pod's phase terminal: the sync ends at once (v1.21 kills a
    /// Failed pod from its ordinary sync instead).
    #[cold]
    #[inline(never)]
    pub(super) fn end_terminal_sync(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        phase: PodPhase,
    ) {
        if phase == PodPhase::Failed && self.legacy() {
            plan_kill_running(&mut op, None);
            self.advance(ctx, uid, op);
            return;
        }
        ctx.reach(crate::model::reach::Reach::TerminalPhaseWhileSyncing);
        self.end_op(ctx, uid, op, Ok(true));
    }

    /// `SyncPod` of a static pod: create or repair its mirror pod.
    #[cold]
    #[inline(never)]
    pub(super) fn sync_mirror_pod(&mut self, ctx: &mut Ctx, uid: PodUid, pod: &Arc<ApiPod>) {
        let mirror = self.config.mirror_for(pod);
        let mut deleted = false;
        if let Some(m) = &mirror {
            if m.deletion_timestamp.is_some() || m.mirror_of != Some(uid) {
                ctx.api_delete_mirror(m.uid);
                deleted = true;
            }
        }
        if mirror.is_none() || deleted {
            ctx.api_create_mirror(pod.clone());
        }
    }

    /// `SyncPod`'s kill steps: the whole pod (`kill_pod`), else each running container
    /// whose liveness or startup probe failed.
    #[cold]
    #[inline(never)]
    pub(super) fn plan_kills(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op: &mut Op,
        kill_pod: bool,
        containers_to_kill: Vec<(ContainerId, String, ProbeType)>,
    ) {
        if kill_pod {
            plan_kill_running(op, None);
            return;
        }
        for (id, name, reason) in containers_to_kill {
            ctx.emit(Transition::Note {
                uid,
                what: match reason {
                    ProbeType::Liveness => NoteKind::LivenessKill,
                    ProbeType::Startup => NoteKind::StartupKill,
                    ProbeType::Readiness => unreachable!("readiness never kills"),
                },
            });
            op.plan.push_back(Step::KillPod(Box::new(KillPlan {
                containers: vec![(id, name)],
                sandboxes: Vec::new(),
                grace_override: None,
                reason: Some(reason),
            })));
        }
    }

    /// A start step's image is in pull back-off: the step fails with
    /// `ImagePullBackOff` (true), or it is not (false).
    #[cold]
    #[inline(never)]
    pub(super) fn in_image_backoff(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op: &mut Op,
        idx: usize,
    ) -> bool {
        let c = op.pod.spec.container_at(idx);
        let key = image_backoff_key(uid, &c.image);
        if !self
            .image_backoff
            .is_in_back_off_since_update(&key, ctx.now())
        {
            return false;
        }
        self.reason_cache.set(uid, &c.name, "ImagePullBackOff");
        op.errors.push(format!(
            "ImagePullBackOff: back-off pulling image {:?}",
            c.image
        ));
        true
    }

    /// Issue a plan's step other than a container start. Returns the operation when the
    /// plan goes on at once (a failed mount), `None` when the step parked or ended it.
    #[cold]
    #[inline(never)]
    pub(super) fn issue_step(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        mut op: Box<Op>,
        step: Step,
    ) -> Option<Box<Op>> {
        match step {
            Step::KillPod(plan) => {
                let KillPlan {
                    containers,
                    sandboxes,
                    grace_override,
                    reason,
                } = *plan;
                let kill = (containers, sandboxes, grace_override, reason);
                self.begin_kill(ctx, uid, op, kill);
            }
            Step::CreateSandbox { attempt } => {
                let run = CriReq::RunPodSandbox {
                    uid,
                    name: Arc::from(op.pod.spec.name.as_str()),
                    namespace: op.pod.spec.namespace.clone(),
                    attempt,
                };
                self.worker_cri(ctx, uid, op.id, 0, run);
                self.park_op(uid, op);
            }
            Step::StartContainer { .. } => unreachable!("a start is issued by advance"),
            Step::VerifyStopped => {
                // The kill succeeded: every probe worker of the pod stops.
                if self.b.on(Sw::StopProbesAtTermination) {
                    let pod = op.pod.clone();
                    self.probe_remove_pod(ctx, &pod);
                    ctx.emit(Transition::SyncStep {
                        uid,
                        step: SyncStepKind::ProbesRemoved,
                    });
                }
                self.worker_cri(ctx, uid, op.id, 0, CriReq::PodStatus { uid });
                op.plan.push_front(Step::VerifyStopped);
                self.park_op(uid, op);
            }
            Step::MountVolumes => {
                if let Err(e) = self.mount_backoff(uid, ctx.now()) {
                    op.fatal = Some(e);
                    return Some(op);
                }
                self.worker_cri(ctx, uid, op.id, 0, CriReq::MountVolumes { uid });
                self.park_op(uid, op);
            }
            Step::UnmountVolumes => {
                self.worker_cri(ctx, uid, op.id, 0, CriReq::UnmountVolumes { uid });
                self.park_op(uid, op);
            }
            Step::RemovePodCgroup => {
                // Secrets and configmaps are unregistered (in memory) before this.
                let pod = op.pod.clone();
                self.objects_unregister(&pod);
                ctx.emit(Transition::Note {
                    uid,
                    what: NoteKind::ObjectsUnregistered,
                });
                self.worker_cri(ctx, uid, op.id, 0, CriReq::RemovePodCgroup { uid });
                self.park_op(uid, op);
            }
            Step::FinishTerminated => {
                let pod = op.pod.clone();
                self.terminate_pod_status(ctx, &pod);
                self.end_op(ctx, uid, op, Ok(false));
            }
        }
        None
    }

    /// The `KillPod` step: every listed container is stopped in parallel (through its
    /// PreStop hook if it has one), then the sandboxes one by one.
    #[inline(never)]
    fn begin_kill(&mut self, ctx: &mut Ctx, uid: PodUid, mut op: Box<Op>, kill: KillArgs) {
        let (containers, sandboxes, grace_override, reason) = kill;
        assert!(
            op.kill.is_none(),
            "sync operation rule broken: a kill starts only when no kill is in progress (pod {uid})"
        );
        let order = self.kill_ordering(&op.pod, &containers);
        let spec = &op.pod.spec;
        let has = |f: &dyn Fn(&str) -> bool| containers.iter().any(|(_, n)| f(n));
        if spec.has_sidecars()
            && has(&|n| spec.containers.iter().any(|c| c.name == n))
            && has(&|n| spec.container_named(n).is_some_and(|c| c.is_sidecar()))
        {
            ctx.reach(crate::model::reach::Reach::SidecarKilledWithApp);
        }
        let ks = KillState {
            pending: containers
                .iter()
                .map(|(id, _)| (*id, KillStage::Stopping))
                .collect(),
            sandboxes: sandboxes.into(),
            errors: Vec::new(),
            order,
            unstopped: Vec::new(),
        };
        op.kill = Some(Box::new(ks));
        // `killContainer` before PR 115835 (`pkg/kubelet/kuberuntime/kuberuntime_container.go`,
        // v1.22 to v1.27): the preStop hook gets setTerminationGracePeriod's grace, and the
        // override replaces the rest afterwards, below the 2 s minimum too.
        let late = (!self.b.on(Sw::GraceOverrideBeforePreStop)).then_some(grace_override);
        for (id, name) in containers {
            let early = if late.is_some() { None } else { grace_override };
            let g = self.container_grace(&op.pod, &name, reason, early);
            let then = late.flatten();
            let spec = op.pod.spec.container_named(&name);
            let has_pre_stop = spec.is_some_and(|c| c.has_pre_stop) && g > 0;
            // A hook that fails at once leaves the stop its whole grace.
            if has_pre_stop && !super::hooks::pre_stop_fails_at_once(ctx, uid, spec) {
                let ks = op.kill.as_mut().expect("kill in progress");
                ks.pending.insert(
                    id,
                    KillStage::PreStop {
                        started: ctx.now(),
                        grace: g,
                        then,
                    },
                );
                self.worker_cri(ctx, uid, op.id, id.0, CriReq::ExecPreStop { uid, id });
                let _ = ctx.after(
                    Dur::secs(g as u64),
                    KEv::PreStopTimeout { uid, op: op.id, id },
                );
            } else {
                let (g, min) = then.map_or((g, MIN_CONTAINER_GRACE), |o| (o, 0));
                self.stop_or_wait(ctx, uid, &mut op, id, g, min);
            }
        }
        let nothing_to_stop = op.kill.as_ref().is_some_and(|k| k.pending.is_empty());
        if nothing_to_stop {
            self.kill_next_sandbox(ctx, uid, op);
        } else {
            self.park_op(uid, op);
        }
    }

    /// `setTerminationGracePeriod` then the override (per container, before PreStop): a
    /// kill for a failed liveness or startup probe uses the probe's own
    /// `terminationGracePeriodSeconds` when it is set.
    fn container_grace(
        &self,
        pod: &ApiPod,
        name: &str,
        reason: Option<ProbeType>,
        grace_override: Option<i64>,
    ) -> i64 {
        if let Some(o) = grace_override {
            return o;
        }
        if let Some(d) = pod.deletion_grace_period_seconds {
            return d;
        }
        let Some(tgps) = pod.spec.termination_grace_period_seconds else {
            return MIN_CONTAINER_GRACE;
        };
        // The ProbeTerminationGracePeriod gate (`setTerminationGracePeriod` in
        // `pkg/kubelet/kuberuntime/kuberuntime_container.go`), off by default before v1.25.
        let gate = self.b.on(Sw::ProbeTerminationGracePeriod);
        let probe_grace = reason.filter(|_| gate).and_then(|r| {
            pod.spec
                .container_named(name)
                .and_then(|c| c.probe(r))
                .and_then(|p| p.termination_grace_period_seconds)
        });
        probe_grace.unwrap_or(tgps)
    }
}

/// `killPod` as a step of a sync (every release's): kill what the pod status shows running,
/// with the grace the kill asks for, if any.
pub(super) fn plan_kill_running(op: &mut Op, grace_override: Option<i64>) {
    let (containers, sandboxes) = running_pod_from(&op.status);
    op.plan.push_back(Step::KillPod(Box::new(KillPlan {
        containers,
        sandboxes,
        grace_override,
        reason: None,
    })));
}
