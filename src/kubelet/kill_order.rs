//! Termination ordering of native sidecars in a `KillPod`.
//!
//! Follows `pkg/kubelet/kuberuntime/kuberuntime_termination_order.go` and `killContainer`
//! in `kuberuntime_container.go` (v1.31, added by PR 120620 for v1.29): when the pod has
//! sidecars, each sidecar being killed waits (after its PreStop hook, within what is left of
//! its grace) until every regular container and every later-declared sidecar of the same
//! kill has stopped, so sidecars stop after the app, in reverse order of declaration. A wait
//! that outlasts the grace gives up and the stop goes on with the 2 s minimum. A container
//! whose `StopContainer` failed is never marked terminated (`killContainer` returns the
//! error before `containerTerminated`), so the sidecars after it wait out their grace. Kills of
//! single containers (probe failures) and of runtime-only pods have no ordering. Switch
//! `sidecarsStopAfterMainContainers` off restores v1.28, where sidecars were stopped in
//! parallel with the regular containers.

use super::cri_reply::MIN_GRACE;
use super::profile::Sw;
use super::sync::{KillStage, KillState, Op};
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::{ApiPod, ContainerId, NoteKind, PodUid, Transition};
use crate::sim::Dur;
use crate::world::cri::CriReq;
use std::collections::BTreeMap;

/// `newTerminationOrdering`: for each container of the kill, the containers of the same kill
/// it waits for (empty when the pod has no sidecars).
pub(crate) fn termination_ordering(
    pod: &ApiPod,
    containers: &[(ContainerId, String)],
) -> BTreeMap<ContainerId, Vec<ContainerId>> {
    let mut order = BTreeMap::new();
    if !pod.spec.has_sidecars() {
        return order;
    }
    let id_of = |name: &str| {
        containers
            .iter()
            .find(|(_, n)| n == name)
            .map(|(id, _)| *id)
    };
    let mains: Vec<ContainerId> = pod
        .spec
        .containers
        .iter()
        .filter_map(|c| id_of(&c.name))
        .collect();
    let mut later: Option<ContainerId> = None;
    for c in pod.spec.init_containers.iter().rev() {
        if !c.is_sidecar() {
            continue;
        }
        let Some(id) = id_of(&c.name) else {
            // Not running: nothing waits for it.
            continue;
        };
        let mut prereqs = mains.clone();
        prereqs.extend(later);
        order.insert(id, prereqs);
        later = Some(id);
    }
    order
}

impl KillState {
    /// Whether `id` is not yet terminated for the ordering: its stop is pending, or failed.
    fn not_terminated(&self, id: ContainerId) -> bool {
        self.pending.contains_key(&id) || self.unstopped.contains(&id)
    }
}

impl Kubelet {
    /// Whether this kill orders sidecars (the switch, and a pod with sidecars).
    pub(super) fn kill_ordering(
        &self,
        pod: &ApiPod,
        containers: &[(ContainerId, String)],
    ) -> BTreeMap<ContainerId, Vec<ContainerId>> {
        if !self.b.on(Sw::SidecarsStopAfterMainContainers) {
            return BTreeMap::new();
        }
        termination_ordering(pod, containers)
    }

    /// After the PreStop hook (or without one): wait for the container's turn if it has
    /// one to wait for and grace left, else `StopContainer` with the grace left (at least
    /// `min` seconds).
    pub(super) fn stop_or_wait(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op: &mut Op,
        id: ContainerId,
        g: i64,
        min: i64,
    ) {
        let ks = op.kill.as_mut().expect("kill in progress");
        let waits = ks
            .order
            .get(&id)
            .is_some_and(|pre| pre.iter().any(|p| ks.not_terminated(*p)));
        if waits && g > 0 {
            ks.pending.insert(
                id,
                KillStage::WaitTurn {
                    started: ctx.now(),
                    grace: g,
                },
            );
            let _ = ctx.after(
                Dur::secs(g as u64),
                KEv::KillTurnTimeout { uid, op: op.id, id },
            );
            return;
        }
        ks.pending.insert(id, KillStage::Stopping);
        let stop = CriReq::StopContainer {
            uid,
            id,
            timeout_s: g.max(min),
        };
        self.worker_cri(ctx, uid, op.id, id.0, stop);
    }

    /// A container of the kill stopped: the sidecars whose turn came stop now, with the
    /// grace left after their wait.
    pub(super) fn release_turns(&mut self, ctx: &mut Ctx, uid: PodUid, op: &mut Op) {
        let ks = op.kill.as_ref().expect("kill in progress");
        let ready: Vec<ContainerId> = ks
            .pending
            .iter()
            .filter(|(_, st)| matches!(st, KillStage::WaitTurn { .. }))
            .map(|(id, _)| *id)
            .filter(|id| {
                ks.order
                    .get(id)
                    .is_none_or(|pre| !pre.iter().any(|p| ks.not_terminated(*p)))
            })
            .collect();
        for id in ready {
            self.end_turn(ctx, uid, op, id);
        }
    }

    /// The wait of `id` ends (its turn came, or its grace ran out): stop it.
    fn end_turn(&mut self, ctx: &mut Ctx, uid: PodUid, op: &mut Op, id: ContainerId) {
        let ks = op.kill.as_mut().expect("kill in progress");
        let Some(KillStage::WaitTurn { started, grace }) = ks.pending.get(&id).cloned() else {
            return;
        };
        let waited = ctx.now().since(started).whole_secs() as i64;
        ks.pending.insert(id, KillStage::Stopping);
        let stop = CriReq::StopContainer {
            uid,
            id,
            timeout_s: (grace - waited).max(MIN_GRACE),
        };
        self.worker_cri(ctx, uid, op.id, id.0, stop);
    }

    /// A sidecar's wait for its turn outlasted its grace: it is stopped anyway.
    pub(super) fn kill_turn_timeout(
        &mut self,
        ctx: &mut Ctx,
        uid: PodUid,
        op_id: u64,
        id: ContainerId,
    ) {
        let Some(mut op) = self.take_op(uid, op_id) else {
            return;
        };
        let waiting = op
            .kill
            .as_ref()
            .is_some_and(|k| matches!(k.pending.get(&id), Some(KillStage::WaitTurn { .. })));
        if waiting {
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::SidecarTurnTimedOut,
            });
            self.end_turn(ctx, uid, &mut op, id);
        }
        self.park_op(uid, op);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerRestart, ContainerSpec, PodSpec, RestartPolicy};

    #[test]
    fn sidecars_wait_for_the_app_and_for_later_sidecars() {
        let mut s0 = ContainerSpec::named("s0", "i");
        s0.restart_policy = ContainerRestart(Some(RestartPolicy::Always));
        let mut s1 = s0.clone();
        s1.name = "s1".into();
        let classic = ContainerSpec::named("init", "i");
        let mut spec = PodSpec::new(
            "p",
            "ns",
            RestartPolicy::Always,
            vec![ContainerSpec::named("app", "i")],
        );
        spec.init_containers = vec![s0, classic, s1].into();
        let pod = ApiPod::new(PodUid(1), spec);
        let c = |n: u32, name: &str| (ContainerId(n), name.to_string());
        let running = vec![c(1, "app"), c(2, "s0"), c(3, "s1")];
        let o = termination_ordering(&pod, &running);
        assert_eq!(o.get(&ContainerId(3)), Some(&vec![ContainerId(1)]));
        assert_eq!(
            o.get(&ContainerId(2)),
            Some(&vec![ContainerId(1), ContainerId(3)])
        );
        assert_eq!(o.get(&ContainerId(1)), None);
        // The app already stopped, s1 not running: s0 waits for nothing.
        let o = termination_ordering(&pod, &[c(2, "s0")]);
        assert_eq!(o.get(&ContainerId(2)), Some(&vec![]));
        // No sidecars: no ordering.
        let mut plain = (*pod.spec).clone();
        plain.init_containers.clear();
        assert!(termination_ordering(&ApiPod::new(PodUid(1), plain), &running).is_empty());
    }
}
