//! The secret and configmap managers as far as pod lifecycles touch them: which pods'
//! referenced objects are registered, and the volume manager's mount back-off when a
//! `configMap` or `secret` volume's `SetUp` finds its object not registered.
//!
//! Follows `pkg/kubelet/secret/secret_manager.go`, `pkg/kubelet/configmap/configmap_manager.go`
//! and `pkg/kubelet/util/manager/cache_based_manager.go` (v1.31: `RegisterPod` in `SyncPod`,
//! `UnregisterPod` in `SyncTerminatedPod`, keyed by namespace, name and UID, PRs 107821 and
//! 107831), and `pkg/kubelet/volumemanager` / `nestedpendingoperations` for the mount retry
//! back-off (500 ms doubling to 2 m 2 s).
//!
//! `secretConfigMapRegisteredPerUid: false` restores v1.22-v1.23 (issue 105204): the pod
//! manager registers a pod when it adds or updates it, keyed by namespace/name only, so
//! registering a same-name successor replaces the predecessor's entry and the predecessor's
//! `UnregisterPod` in `SyncTerminatedPod` drops the successor's.
//!
//! Where it deliberately differs: the objects always exist in the API (what is modelled is
//! only whether the kubelet may read them); the volume manager's reconciler is folded into
//! `SyncPod`'s mount step (the `SetUp` reads the objects when the mount completes), a
//! failed or backed-off mount fails the sync at once instead of after
//! `WaitForAttachAndMount`'s 2 m 3 s wait, and configmap volumes are not re-`SetUp`
//! periodically.

use super::profile::Sw;
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::NoteKind;
use crate::model::{ApiPod, PodUid, Transition};
use crate::sim::{Dur, SimTime};
use std::collections::BTreeMap;

/// First mount retry delay (`initialDurationBeforeRetry`).
const INITIAL_RETRY: Dur = Dur::millis(500);
/// Longest mount retry delay (`maxDurationBeforeRetry`, 2 m 2 s).
const MAX_RETRY: Dur = Dur::millis(122_000);

/// The object managers' registrations and the volume manager's mount back-off.
#[derive(Clone, Debug, Default)]
pub(crate) struct Objects {
    /// Registration key -> the UID registered under it (`registeredPods`).
    registered: BTreeMap<String, PodUid>,
    /// Per pod: the earliest next mount attempt and the current delay.
    backoff: BTreeMap<PodUid, (SimTime, Dur)>,
}

impl Kubelet {
    fn objects_key(&self, pod: &ApiPod) -> String {
        if self.b.on(Sw::SecretConfigMapRegisteredPerUid) {
            format!("{}/{}/{}", pod.spec.namespace, pod.spec.name, pod.uid.0)
        } else {
            format!("{}/{}", pod.spec.namespace, pod.spec.name)
        }
    }

    /// `RegisterPod` (a pod without configmap or secret volumes registers nothing).
    pub(super) fn objects_register(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        if pod.spec.objects.0.is_empty() {
            return;
        }
        let full = pod.spec.full_name();
        let overlap = self
            .pw
            .records
            .iter()
            .any(|(u, r)| *u != pod.uid && r.fullname == full && !r.finished);
        if overlap {
            ctx.reach(Reach::SameNamePodsOverlap);
        }
        let key = self.objects_key(pod);
        self.objects.registered.insert(key, pod.uid);
    }

    /// The pod manager adds or updates a pod: v1.22 registers it there.
    pub(super) fn objects_on_pod_manager_update(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        if !self.b.on(Sw::SecretConfigMapRegisteredPerUid) {
            self.objects_register(ctx, pod);
        }
    }

    /// `SyncPod` registers the pod (v1.24+).
    pub(super) fn objects_on_sync_pod(&mut self, ctx: &mut Ctx, pod: &ApiPod) {
        if self.b.on(Sw::SecretConfigMapRegisteredPerUid) {
            self.objects_register(ctx, pod);
        }
    }

    /// `UnregisterPod` (from `SyncTerminatedPod`).
    pub(super) fn objects_unregister(&mut self, pod: &ApiPod) {
        let key = self.objects_key(pod);
        self.objects.registered.remove(&key);
        self.objects.backoff.remove(&pod.uid);
    }

    /// Whether the objects `pod` references can be read: some pod referencing them is
    /// registered under the pod's key.
    fn objects_registered(&self, pod: &ApiPod) -> bool {
        pod.spec.objects.0.is_empty()
            || self.objects.registered.contains_key(&self.objects_key(pod))
    }

    /// The volume manager's back-off: `Err` while the pod's next mount attempt is not due.
    pub(super) fn mount_backoff(&self, uid: PodUid, now: SimTime) -> Result<(), String> {
        match self.objects.backoff.get(&uid) {
            Some((next, _)) if now < *next => Err(format!(
                "MountVolume: no retries permitted until {} (durationBeforeRetry)",
                next
            )),
            _ => Ok(()),
        }
    }

    /// The mount completed on the host: the `configMap`/`secret` volumes' `SetUp` reads
    /// their objects. `Err` when they are not registered (the back-off grows).
    pub(super) fn mount_set_up(&mut self, ctx: &mut Ctx, pod: &ApiPod) -> Result<(), String> {
        let uid = pod.uid;
        if self.objects_registered(pod) {
            self.objects.backoff.remove(&uid);
            return Ok(());
        }
        ctx.emit(Transition::Note {
            uid,
            what: NoteKind::FailedMountNotRegistered,
        });
        let d = match self.objects.backoff.get(&uid) {
            Some((_, d)) => (*d + *d).min(MAX_RETRY),
            None => INITIAL_RETRY,
        };
        self.objects.backoff.insert(uid, (ctx.now() + d, d));
        Err(format!(
            "MountVolume.SetUp failed: {} not registered",
            pod.spec.objects.0.join(", ")
        ))
    }
}
