//! Housekeeping: `HandlePodCleanups`, run every 2 s from the sync loop once all config
//! sources are ready.
//!
//! Follows `pkg/kubelet/kubelet_pods.go` `HandlePodCleanups` (v1.31): `SyncKnownPods`,
//! probe and status cleanup, restart of desired pods the workers forgot, the kill of
//! terminal deleted pods never seen by workers (PR 118497), and the kill of orphaned
//! runtime pods with grace 1. Pod directories, cgroups, mirror pods and user namespaces
//! are not modelled yet.

use super::pod_workers::{KillPodOptions, UpdatePodOptions, WorkType};
use super::profile::Sw;
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::{NoteKind, UpdateType};
use crate::model::{PodUid, Transition};
use std::sync::Arc;

impl Kubelet {
    /// `HandlePodCleanups`.
    pub(super) fn handle_pod_cleanups(&mut self, ctx: &mut Ctx) {
        ctx.emit(Transition::Housekeeping);
        // Borrow the pod manager's map for the duration (nothing below changes it).
        let all_pods = std::mem::take(&mut self.config.pods);
        let working = self.sync_known_pods(ctx, &all_pods);
        // Stop probing pods that are not running.
        let possibly_running = |uid: PodUid| matches!(working.get(&uid), Some(w) if matches!(w.state, WorkType::Sync | WorkType::Terminating));
        self.probe_cleanup_pods(ctx, possibly_running);
        // Force-refresh the runtime cache: a fresh list of running pods (in UID order).
        let running_list = ctx.list_running_pod_uids();
        debug_assert!(running_list.windows(2).all(|w| w[0] < w[1]));
        let is_running = |uid: &PodUid| running_list.binary_search(uid).is_ok();
        self.status_remove_orphans(&all_pods);
        // filterOutInactivePods + restart of desired pods unknown to the workers.
        // (`working` is walked beside the UID-ordered pods rather than searched.)
        let mut known = working.keys().peekable();
        for (uid, pod) in &all_pods {
            let rec = self.pw.records.get(uid);
            if rec.is_some_and(|s| s.is_terminated()) {
                continue;
            }
            let terminal = pod.status.phase.is_terminal()
                || self
                    .status
                    .statuses
                    .get(uid)
                    .is_some_and(|v| v.status.phase.is_terminal());
            if terminal && !rec.is_some_and(|s| s.is_termination_requested()) {
                continue;
            }
            while known.next_if(|k| *k < uid).is_some() {}
            if known.peek() != Some(&uid) {
                ctx.emit(Transition::Note {
                    uid: *uid,
                    what: NoteKind::HousekeepingRestartsUnknown,
                });
                self.update_pod(ctx, UpdatePodOptions::new(UpdateType::Create, pod.clone()));
            }
        }
        // Terminal pods with a deletion timestamp that no worker knows and nothing runs
        // (`filterTerminalPodsToDelete`, PR 118497; before it, a pod rejected at admission
        // after a restart never reached a worker, so nothing finished it).
        let push_terminal = self.b.on(Sw::DeletionUsesLocalPhase);
        for (uid, pod) in all_pods.iter().filter(|_| push_terminal) {
            // (Cheap fields first; every test is free of side effects.)
            if !(pod.deletion_timestamp.is_some() && pod.status.phase.is_terminal()) {
                continue;
            }
            if working.contains_key(uid) || self.pw.records.contains_key(uid) {
                continue;
            }
            if !is_running(uid) {
                self.update_pod(ctx, UpdatePodOptions::new(UpdateType::Kill, pod.clone()));
            }
        }
        // Orphaned mirror pods: delete them, unless their static pod is still terminating.
        let orphaned_mirrors: Vec<(String, crate::model::PodUid)> = self
            .config
            .mirrors
            .iter()
            .filter(|(full, _)| {
                !all_pods
                    .values()
                    .any(|p| p.static_pod && &p.full_name() == *full)
            })
            .map(|(full, m)| (full.clone(), m.uid))
            .collect();
        for (full, uid) in orphaned_mirrors {
            if !self
                .pw
                .is_pod_for_mirror_pod_terminating_by_full_name(&full)
            {
                ctx.api_delete_mirror(uid);
            }
        }
        // cleanupOrphanedPodDirs: pod directories of pods neither in config nor possibly
        // running, whose volumes are gone.
        let mut in_config = all_pods.keys().peekable();
        for (uid, mounted) in ctx.list_pod_dirs() {
            if mounted {
                continue;
            }
            while in_config.next_if(|k| **k < uid).is_some() {}
            if in_config.peek() == Some(&&uid) || possibly_running(uid) || is_running(&uid) {
                continue;
            }
            ctx.cri(
                crate::world::cri::Caller::Deletor,
                crate::world::cri::CriReq::RemovePodDir { uid },
            );
        }
        // Orphaned runtime pods: kill with grace 1.
        let orphans: Vec<_> = running_list
            .into_iter()
            .filter(|uid| !possibly_running(*uid))
            .collect();
        for rp in ctx.list_running_pods_of(&orphans) {
            let uid = rp.uid;
            ctx.reach(crate::model::reach::Reach::RuntimeOnlyPodKilled);
            ctx.emit(Transition::Note {
                uid,
                what: NoteKind::HousekeepingKillsOrphan,
            });
            self.update_pod(
                ctx,
                UpdatePodOptions {
                    update_type: UpdateType::Kill,
                    pod: None,
                    mirror: None,
                    running_pod: Some(Arc::new(rp)),
                    kill: Some(Box::new(KillPodOptions {
                        grace_override: Some(1),
                        ..Default::default()
                    })),
                },
            );
        }
        self.crash_backoff.gc(ctx.now());
        self.config.pods = all_pods;
    }
}
