//! A cache of the status step of `SyncPod` (`pkg/kubelet/kubelet.go`, v1.31: the
//! `generateAPIPodStatus` of `pkg/kubelet/kubelet_pods.go`, then the status manager's
//! `SetPodStatus`).
//!
//! Upstream regenerates the whole API status on every sync; in the steady state the result
//! equals the status manager's cached status and `SetPodStatus` writes nothing. The
//! generated status is a pure function of the pod object, the runtime's pod status (the
//! PLEG cache entry), the status manager's cached status, the reason cache's entries for
//! the pod, the probe results and probe workers of its containers, the active deadline
//! (with the clock) and the run's behaviour switches. When a sync found its generated
//! status unchanged, the pod's worker record keeps the three shared, immutable objects it
//! was computed from (by reference) and a copy of the pod's reason-cache entries. The next
//! sync given the very same three objects and reason-cache entries, for a pod without
//! active deadline or deletion, and whose probe-derived `started` and
//! `ready` flags equal the cached status's, would generate the same status again and write
//! nothing: it is skipped, and only the generation's side effect (triggering the readiness
//! probes of started containers without a success) runs. Debug builds regenerate and check.
//!
//! The flags' test reads the pod's probe results and probe workers, which change far less
//! often than the pod syncs: a hit that tested them keeps its answer (the readiness probes
//! to trigger) in the memo, and every change of the pod's probe results or workers forgets
//! it (`Kubelet::status_memo_probes_changed`). A later hit with a kept answer skips the
//! flags' test; debug builds run it anyway and check the answer.

use super::prober::{ProbeKey, ProbeResult};
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPod, ApiPodStatus, CriError, PodPhase, PodUid,
    ProbeType, RtPodStatus,
};
use std::sync::Arc;

/// Whether two objects of a pod give a status generation the same inputs: the same
/// object, or equal in every field the generation reads. The status manager's writes
/// reach the API object and come back over the watch as a new object whose status is
/// the one just written; of the API object's status the generation reads only the phase,
/// reason and message and the conditions the kubelet does not own, so those are compared
/// (the resource version it does not read at all).
fn same_pod_inputs<'a>(a: &'a ApiPod, b: &'a ApiPod) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    // Every field listed (no `..`): a new field must be sorted here.
    let ApiPod {
        uid,
        spec,
        decl,
        created_at,
        deletion_timestamp,
        deletion_grace_period_seconds,
        status,
        resource_version: _,
        static_pod,
        mirror_of,
    } = a;
    let not_kubelets = |s: &'a ApiPodStatus| s.conditions.iter().filter(|c| !c.kind.by_kubelet());
    *uid == b.uid
        && Arc::ptr_eq(spec, &b.spec)
        && *decl == b.decl
        && *created_at == b.created_at
        && *deletion_timestamp == b.deletion_timestamp
        && *deletion_grace_period_seconds == b.deletion_grace_period_seconds
        && *static_pod == b.static_pod
        && *mirror_of == b.mirror_of
        && (Arc::ptr_eq(status, &b.status)
            || (status.phase == b.status.phase
                && status.reason == b.status.reason
                && status.message == b.status.message
                && not_kubelets(status).eq(not_kubelets(&b.status))))
}

/// The objects a `SyncPod` status generation that changed nothing was computed from.
#[derive(Clone, Debug)]
pub(crate) struct StatusMemo {
    pod: Arc<ApiPod>,
    rt: Arc<RtPodStatus>,
    cached: Arc<ApiPodStatus>,
    /// The reason cache's entries for the pod (container name, reason), in key order;
    /// empty (no allocation) for most pods.
    reasons: Vec<(String, &'static str)>,
    /// The readiness probes a hit's flags' test triggered, kept while the pod's probe
    /// results and probe workers are unchanged since (`None`: not tested since the memo
    /// was made or since one of them changed). With `cached` the same object, the test
    /// would find the same flags and the same probes again.
    probes: Option<Vec<ProbeKey>>,
}

/// What the pod worker looked up before a sync ran, so the sync does not search again:
/// the PLEG cache's entry for the pod (`GetNewerThan`'s answer) and, for a `SyncPod`, the
/// status memo's test run on the worker record the worker held (`None`: not run).
pub(crate) struct Found {
    pub(super) cached: Result<Arc<RtPodStatus>, CriError>,
    pub(super) memo: Option<MemoHit>,
}

/// The parts of the kubelet a memo's test reads besides the pod's worker record: held
/// apart so the pod worker can run the test on the record it holds (`worker_wake`), with
/// no second search of the records.
pub(super) struct MemoView<'a> {
    statuses: &'a super::record_map::RecordMap<super::status::Versioned>,
    reasons: &'a super::reason_cache::ReasonCache,
    prober: &'a super::prober::ProbeManager,
    legacy: bool,
}

/// A memo's hit: a generation that would change nothing.
#[derive(Debug, PartialEq)]
pub(super) struct Hit {
    /// The phase the generation would give.
    phase: PodPhase,
    /// The readiness probes the generation would trigger.
    trigger: Vec<ProbeKey>,
    /// The memo holds another object of the pod (with the same inputs), to be replaced by
    /// the one given.
    replaced: bool,
    /// The probe flags were tested (not taken from the memo): the memo is to keep
    /// `trigger`.
    tested_flags: bool,
}

/// What a memo's test found: a hit, or `None` when the generation must run.
pub(super) type MemoHit = Option<Hit>;

impl<'a> MemoView<'a> {
    /// The view of `k`'s parts other than the pod workers' records.
    pub(super) fn of(
        b: &super::profile::Behaviours,
        statuses: &'a super::record_map::RecordMap<super::status::Versioned>,
        reasons: &'a super::reason_cache::ReasonCache,
        prober: &'a super::prober::ProbeManager,
    ) -> Self {
        MemoView {
            statuses,
            reasons,
            prober,
            legacy: !b.on(super::profile::Sw::PodWorkerOwnsLifecycle),
        }
    }

    /// Whether a generation for `pod` depends only on what the memo compares: not the
    /// v1.21 design, no deletion (a forced write), no active deadline (the clock).
    fn memoizable(&self, pod: &ApiPod) -> bool {
        !self.legacy && pod.deletion_timestamp.is_none() && pod.spec.active_deadline.0.is_none()
    }

    /// The phase and the probe triggers of a generation `memo` (the pod's worker record's)
    /// shows unchanged, or `None` when it must run.
    pub(super) fn hit(
        &self,
        memo: Option<&StatusMemo>,
        pod: &Arc<ApiPod>,
        rt: &Arc<RtPodStatus>,
    ) -> MemoHit {
        let memo = memo?;
        let v = self.statuses.get(&pod.uid)?;
        let replaced = !Arc::ptr_eq(&memo.pod, pod);
        let same = (!replaced || same_pod_inputs(&memo.pod, pod))
            && Arc::ptr_eq(&memo.rt, rt)
            && Arc::ptr_eq(&memo.cached, &v.status);
        if !same
            || !self.memoizable(pod)
            || !self
                .reasons
                .entries(pod.uid)
                .eq(memo.reasons.iter().map(|(n, r)| (n.as_str(), *r)))
        {
            return None;
        }
        let s = &v.status;
        if let Some(kept) = &memo.probes {
            debug_assert_eq!(
                self.flags_test(pod, s).as_ref(),
                Some(kept),
                "status memo rule broken: pod {}'s probe results or workers changed since \
                 its memo kept the flags' test, and the memo was not told",
                pod.uid
            );
            // Most pods trigger nothing: no call to clone an empty list.
            let trigger = if kept.is_empty() {
                Vec::new()
            } else {
                kept.clone()
            };
            return Some(Hit {
                phase: s.phase,
                trigger,
                replaced,
                tested_flags: false,
            });
        }
        let trigger = self.flags_test(pod, s)?;
        Some(Hit {
            phase: s.phase,
            trigger,
            replaced,
            tested_flags: true,
        })
    }

    /// Whether the probe-derived `started` and `ready` flags of `s`'s containers are those
    /// `UpdatePodStatus` would set now; if so, the readiness probes it would trigger.
    fn flags_test(&self, pod: &ApiPod, s: &ApiPodStatus) -> Option<Vec<ProbeKey>> {
        let mut trigger = Vec::new();
        // The pod's probe workers, searched for once, when a container first needs them.
        let mut workers = None;
        for c in s.containers.iter() {
            if self.probe_flags(pod.uid, &mut workers, c, &mut trigger) != (c.started, c.ready) {
                return None;
            }
        }
        for (c, spec) in s.init_containers.0.iter().zip(&pod.spec.init_containers) {
            let (started, mut ready) = self.probe_flags(pod.uid, &mut workers, c, &mut trigger);
            if !spec.is_sidecar()
                && matches!(c.state, ApiContainerState::Terminated { exit_code: 0, .. })
            {
                ready = true;
            }
            if (started, ready) != (c.started, c.ready) {
                return None;
            }
        }
        Some(trigger)
    }

    /// The `started` and `ready` flags the prober's `UpdatePodStatus` gives a container
    /// status (`prober_manager.go`, v1.31; the same rules as `probe_update_pod_status`,
    /// which debug builds check), pushing the readiness probe to trigger if any.
    /// `workers`: the pod's probe workers (`ProbeManager::pod_workers`), once looked up.
    fn probe_flags(
        &self,
        uid: PodUid,
        workers: &mut Option<&'a [(Arc<str>, ProbeType, u32)]>,
        c: &ApiContainerStatus,
        trigger: &mut Vec<ProbeKey>,
    ) -> (bool, bool) {
        if !c.state.is_running() {
            return (false, false);
        }
        let result = |kind: ProbeType| {
            c.container_id
                .and_then(|id| self.prober.results(kind).get(id))
        };
        let prober = self.prober;
        let mut slot_of = |kind: ProbeType| {
            let pod = *workers.get_or_insert_with(|| prober.pod_workers(uid));
            let found = pod
                .iter()
                .find(|(n, k, _)| *k == kind && **n == *c.name)
                .map(|&(_, _, slot)| slot);
            debug_assert_eq!(found, prober.slot_of(uid, &c.name, kind));
            found
        };
        let started = match result(ProbeType::Startup) {
            Some(r) => r == ProbeResult::Success,
            None => slot_of(ProbeType::Startup).is_none(),
        };
        if !started {
            return (false, false);
        }
        if result(ProbeType::Readiness) == Some(ProbeResult::Success) {
            return (true, true);
        }
        let slot = slot_of(ProbeType::Readiness);
        if let Some(slot) = slot {
            trigger.push(self.prober.worker(slot).key.clone());
        }
        (true, slot.is_none())
    }
}

impl Kubelet {
    /// `SyncPod`'s `generateAPIPodStatus(pod, podStatus, false)` and `SetPodStatus`;
    /// returns the generated phase. `tested`: the memo's test, when the caller ran it
    /// already on the pod's worker record (`MemoView::hit`); otherwise it runs here.
    pub(super) fn sync_pod_status(
        &mut self,
        ctx: &mut Ctx,
        pod: &Arc<ApiPod>,
        rt: &Arc<RtPodStatus>,
        tested: Option<MemoHit>,
    ) -> PodPhase {
        #[cfg(debug_assertions)]
        if let Some(t) = &tested {
            // The caller's test saw the inputs this sync sees.
            assert_eq!(
                *t,
                self.status_memo_hit(pod, rt),
                "status memo rule broken: the memo test run by the pod worker gives the \
                 answer the sync's own test gives (pod {})",
                pod.uid
            );
        }
        let hit = match tested {
            Some(t) => t,
            None => self.status_memo_hit(pod, rt),
        };
        if let Some(Hit {
            phase,
            trigger,
            replaced,
            tested_flags,
        }) = hit
        {
            #[cfg(debug_assertions)]
            self.check_status_memo(pod, rt, ctx.now(), &trigger);
            // A new object with the same inputs: the memo keeps it, so that the next test
            // finds it by identity and the old object is released. Flags just tested: the
            // memo keeps the answer (before the triggers, which change no probe result).
            if replaced || tested_flags {
                if let Some(m) = self.status_memo_mut(pod.uid) {
                    if replaced {
                        m.pod = Arc::clone(pod);
                    }
                    if tested_flags {
                        m.probes = Some(trigger.clone());
                    }
                }
            }
            for key in trigger {
                self.probe_worker_trigger(ctx, &key);
            }
            return phase;
        }
        let api = self.generate_api_pod_status(ctx, pod, rt, false);
        let phase = api.phase;
        let version = self.status.statuses.get(&pod.uid).map(|v| v.version);
        let unchanged = self.set_pod_status_unchanged(ctx, pod, api);
        // A status written (a new version) is the one generated from these inputs: the
        // next generation from them, against it, gives it again (debug builds check each
        // skip). A status refused (no new version, not unchanged) is generated again.
        let stored = unchanged || self.status.statuses.get(&pod.uid).map(|v| v.version) != version;
        let memo = if stored && self.memo_view().memoizable(pod) {
            self.status.statuses.get(&pod.uid).map(|v| StatusMemo {
                pod: Arc::clone(pod),
                rt: Arc::clone(rt),
                cached: Arc::clone(&v.status),
                reasons: self
                    .reason_cache
                    .entries(pod.uid)
                    .map(|(n, r)| (n.to_owned(), r))
                    .collect(),
                probes: None,
            })
        } else {
            None
        };
        // Unlogged: the memo is nothing the known-pods report reads.
        if let Some(st) = self.pw.records.get_mut_unlogged(&pod.uid) {
            st.status_memo = memo;
        }
        phase
    }

    /// The PLEG replaced the pod's runtime status: a memo (which compares it by identity)
    /// can no longer hit, and is dropped so that it holds the old status no longer (the
    /// runtime refills a status no one else holds).
    pub(super) fn drop_status_memo(&mut self, uid: PodUid) {
        if let Some(st) = self.pw.records.get_mut_unlogged(&uid) {
            st.status_memo = None;
        }
    }

    /// A probe result of pod `uid` changed or was forgotten, or one of its probe workers
    /// was added or removed: the flags' answer its memo keeps may be stale, and is dropped.
    pub(super) fn status_memo_probes_changed(&mut self, uid: PodUid) {
        if let Some(m) = self.status_memo_mut(uid) {
            m.probes = None;
        }
    }

    /// Pod `uid`'s memo, if it has one. Unlogged: the memo is nothing the known-pods
    /// report reads.
    fn status_memo_mut(&mut self, uid: PodUid) -> Option<&mut StatusMemo> {
        self.pw
            .records
            .get_mut_unlogged(&uid)
            .and_then(|st| st.status_memo.as_mut())
    }

    /// The view a memo's test reads.
    pub(super) fn memo_view(&self) -> MemoView<'_> {
        MemoView::of(
            &self.b,
            &self.status.statuses,
            &self.reason_cache,
            &self.prober,
        )
    }

    /// The memo's test on the pod's worker record, looked up.
    fn status_memo_hit(&self, pod: &Arc<ApiPod>, rt: &Arc<RtPodStatus>) -> MemoHit {
        let memo = self.pw.records.get(&pod.uid)?.status_memo.as_ref();
        self.memo_view().hit(memo, pod, rt)
    }

    /// Debug builds: the skipped generation, run in full, gives a status `SetPodStatus`
    /// would find unchanged, and the same probe triggers.
    #[cfg(debug_assertions)]
    fn check_status_memo(
        &self,
        pod: &ApiPod,
        rt: &RtPodStatus,
        now: crate::sim::SimTime,
        trigger: &[ProbeKey],
    ) {
        let (mut g, t) = self.generate_api_pod_status_inner(pod, rt, false, now);
        let v = &self.status.statuses[&pod.uid];
        // updateStatusInternal's start-time rule, then its equality test.
        if g.start_time.is_none() || v.status.start_time.is_some() {
            g.start_time = v.status.start_time.or(g.start_time);
        }
        assert!(
            pod.deletion_timestamp.is_none()
                && g.containers == v.status.containers
                && super::conditions::equal_by_kubelet(&v.status, &g),
            "status memo rule broken: a skipped status generation for pod {} would have \
             changed the cached status",
            pod.uid
        );
        assert_eq!(
            t, trigger,
            "status memo rule broken: a skipped status generation for pod {} triggers other \
             readiness probes",
            pod.uid
        );
    }
}
