//! The simulated API server, reduced to what the kubelet's pod lifecycle touches: pod
//! objects with UIDs, graceful deletion (deletion timestamp and grace period, which a later
//! delete may only shorten), force deletion, the kubelet's status writes and final delete
//! (with a UID precondition), and one ordered watch stream to the kubelet with modelled
//! delay.
//!
//! Follows `pkg/registry/core/pod/strategy.go` (`CheckGracefulDelete`) and the generic
//! registry's graceful-deletion rules as of v1.30: a pod that is already terminal, or a
//! delete with grace 0, is removed at once.

use super::dist::sample;
use super::{Epoch, Event, Tracer};
use crate::model::uid_map::UidMap;
use crate::model::{ApiContainerState, RemovedBy};
use crate::model::{
    ApiPod, ApiPodStatus, Conditions, Dist, PodCondition, PodPhase, PodSpec, PodUid, Transition,
};
use crate::sim::{Dur, Sim, SimTime, Stream};
use std::collections::BTreeMap;
use std::sync::Arc;

/// What a watch event says happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum WatchKind {
    Added,
    Modified,
    Deleted,
}

/// One event on the kubelet's pod watch, with the object as it was then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WatchEvent {
    pub(crate) kind: WatchKind,
    pub(crate) pod: Arc<ApiPod>,
}

/// The history of one object, for the run summary (ground truth, never read by the
/// kubelet).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ObjectHistory {
    pub(crate) uid: Option<PodUid>,
    pub(crate) name: String,
    pub(crate) decl: usize,
    pub(crate) created_at: SimTime,
    pub(crate) last_phase: PodPhase,
    /// What most objects never get (a reason, a deletion, a terminated container), boxed.
    end: Option<Box<HistoryEnd>>,
    /// (time, phase) for each phase change written to the API (for a static pod: to its
    /// mirror pods).
    pub(crate) phases: Vec<(SimTime, PodPhase)>,
    /// A static pod (known to the API only through mirror pods).
    pub(crate) is_static: bool,
    /// (time, ready) for each change of the pod's Ready condition written to the API.
    pub(crate) ready: Vec<(SimTime, bool)>,
    /// The conditions the API object held last (for a static pod: its mirror pod).
    pub(crate) conditions: Conditions,
}

/// The part of an [`ObjectHistory`] most objects never need.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct HistoryEnd {
    reason: Option<String>,
    deletion_requested_at: Option<SimTime>,
    removed_at: Option<SimTime>,
    removed_by: Option<RemovedBy>,
    /// Per container: the reason of its newest termination the kubelet wrote (its state's,
    /// else its last state's; empty reasons are not recorded).
    last_reasons: BTreeMap<String, &'static str>,
}

impl ObjectHistory {
    fn end_mut(&mut self) -> &mut HistoryEnd {
        self.end.get_or_insert_with(Box::default)
    }
    /// The status reason the API object held last.
    pub(crate) fn reason(&self) -> Option<&String> {
        self.end.as_ref().and_then(|e| e.reason.as_ref())
    }
    /// When the object was first asked to be deleted.
    pub(crate) fn deletion_requested_at(&self) -> Option<SimTime> {
        self.end.as_ref().and_then(|e| e.deletion_requested_at)
    }
    /// When the object left the API server.
    pub(crate) fn removed_at(&self) -> Option<SimTime> {
        self.end.as_ref().and_then(|e| e.removed_at)
    }
    pub(crate) fn removed_by(&self) -> Option<RemovedBy> {
        self.end.as_ref().and_then(|e| e.removed_by)
    }
    /// The reason of the newest termination of container `name` the kubelet wrote.
    pub(crate) fn last_reason(&self, name: &str) -> Option<&'static str> {
        self.end
            .as_ref()
            .and_then(|e| e.last_reasons.get(name).copied())
    }
}

/// The name index's key: the object's spec, shared rather than copied, ordered by
/// (namespace, name); looked up by a `(&str, &str)` pair through [`Named`].
#[derive(Clone, Debug)]
struct NameKey(Arc<PodSpec>);

/// A (namespace, name) pair, however it is held.
trait Named {
    fn key(&self) -> (&str, &str);
}

impl Named for NameKey {
    fn key(&self) -> (&str, &str) {
        (&self.0.namespace, &self.0.name)
    }
}

impl Named for (&str, &str) {
    fn key(&self) -> (&str, &str) {
        (self.0, self.1)
    }
}

impl<'a> std::borrow::Borrow<dyn Named + 'a> for NameKey {
    fn borrow(&self) -> &(dyn Named + 'a) {
        self
    }
}

impl PartialEq for dyn Named + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn Named + '_ {}

impl PartialOrd for dyn Named + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn Named + '_ {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialEq for NameKey {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for NameKey {}

impl PartialOrd for NameKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for NameKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

#[derive(Clone, Debug)]
pub(crate) struct ApiServer {
    /// The objects, shared with the watch events that carry them (a write copies an
    /// object only while a watcher still holds the previous version). Kept by UID in an
    /// array-indexed map: a status sync looks its object up several times (the GET, the
    /// PATCH), each an index instead of a tree search; walks still go in UID order.
    pods: UidMap<Arc<ApiPod>>,
    by_name: BTreeMap<NameKey, PodUid>,
    /// How many live objects the name index does not name (a later object of theirs
    /// took their name): while none does, an object whose name matches is the one the
    /// index gives, with no search of the index.
    shadowed: usize,
    watch_delay: Dist,
    write_delay: Dist,
    watch_rng: Stream,
    write_rng: Stream,
    last_delivery: SimTime,
    /// The kubelet incarnation whose watch is connected (`None` while the kubelet is down).
    watcher: Option<Epoch>,
    next_uid: u32,
    next_rv: u64,
    /// By UID, in the same array-indexed map (a status patch updates its object's
    /// history); walks go in UID order. Boxed: a map's slot then holds a pointer, not a
    /// whole record.
    pub(crate) history: UidMap<Box<ObjectHistory>>,
    /// The empty status (and its empty condition list) every new object and history
    /// starts from, shared instead of allocated per pod.
    empty_status: Arc<ApiPodStatus>,
}

impl ApiServer {
    /// Drops the live objects and the name index, keeping the history: what a run's
    /// summary reads after the run ended.
    pub(crate) fn release_objects(&mut self) {
        self.pods = UidMap::new();
        self.by_name = BTreeMap::new();
        self.shadowed = 0;
    }

    pub(crate) fn new(seed: u64, watch_delay: Dist, write_delay: Dist) -> Self {
        ApiServer {
            pods: UidMap::new(),
            by_name: BTreeMap::new(),
            shadowed: 0,
            watch_delay,
            write_delay,
            watch_rng: Stream::new(seed, "api/watch"),
            write_rng: Stream::new(seed, "api/write"),
            last_delivery: SimTime::ZERO,
            watcher: None,
            next_uid: 1,
            next_rv: 1,
            history: UidMap::new(),
            empty_status: Arc::default(),
        }
    }

    /// Latency of one kubelet request (status patch or delete).
    pub(crate) fn write_latency(&mut self) -> Dur {
        sample(&self.write_delay, &mut self.write_rng)
    }

    /// Deliver a watch event: the stream is ordered, so an event never overtakes an
    /// earlier one.
    fn notify<K>(&mut self, sim: &mut Sim<Event<K>>, kind: WatchKind, pod: Arc<ApiPod>) {
        let Some(epoch) = self.watcher else {
            return; // no kubelet is watching
        };
        let d = sample(&self.watch_delay, &mut self.watch_rng);
        // Strictly after the previous delivery, so that same-instant scheduling choices can
        // never reorder the stream.
        let at = (sim.now() + d).max(self.last_delivery + Dur(1));
        self.last_delivery = at;
        let _ = sim.at(at, Event::Watch(epoch, WatchEvent { kind, pod }));
    }

    /// Kubelet incarnation `epoch` connects its watch: the reflector's initial LIST reaches
    /// it after one watch delay as an ADDED event per existing object (in creation order),
    /// then the source is marked as seen; later changes follow on the same ordered stream.
    /// (At the start of a run the list is empty.)
    pub(crate) fn connect_watch<K>(&mut self, sim: &mut Sim<Event<K>>, epoch: Epoch) {
        self.watcher = Some(epoch);
        let d = sample(&self.watch_delay, &mut self.watch_rng);
        let mut at = sim.now() + d;
        for pod in self.pods.values() {
            let _ = sim.at(
                at,
                Event::Watch(
                    epoch,
                    WatchEvent {
                        kind: WatchKind::Added,
                        pod: pod.clone(),
                    },
                ),
            );
            at = at + Dur(1);
        }
        self.last_delivery = at;
        let _ = sim.at(at, Event::WatchSynced(epoch));
    }

    /// The watching kubelet died: its connection is gone, nothing more is delivered.
    pub(crate) fn disconnect_watch(&mut self) {
        self.watcher = None;
    }

    /// Create a pod object (bound to this node).
    pub(crate) fn create<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        spec: Arc<PodSpec>,
        decl: usize,
    ) -> PodUid {
        let uid = PodUid(self.next_uid);
        self.next_uid += 1;
        let rv = self.bump();
        let pod = ApiPod {
            uid,
            spec: spec.clone(),
            decl,
            created_at: sim.now(),
            deletion_timestamp: None,
            deletion_grace_period_seconds: None,
            status: Arc::clone(&self.empty_status),
            resource_version: rv,
            static_pod: false,
            mirror_of: None,
        };
        trace.emit(
            sim.now(),
            &Transition::ApiCreated {
                uid,
                name: spec.name.clone(),
                spec: spec.clone(),
                static_pod: false,
                mirror_of: None,
            },
        );
        if let Some(before) = self.by_name.insert(NameKey(spec.clone()), uid) {
            // The object that held the name keeps living, without the index naming it.
            self.shadowed += usize::from(self.pods.contains_key(&before));
        }
        self.history.insert(
            uid,
            Box::new(ObjectHistory {
                uid: Some(uid),
                name: spec.name.clone(),
                decl,
                created_at: sim.now(),
                phases: vec![(sim.now(), PodPhase::Pending)],
                ready: vec![(sim.now(), false)],
                conditions: self.empty_status.conditions.clone(),
                ..Default::default()
            }),
        );
        let pod = Arc::new(pod);
        self.notify(sim, WatchKind::Added, pod.clone());
        self.pods.insert(uid, pod);
        uid
    }

    fn bump(&mut self) -> u64 {
        let v = self.next_rv;
        self.next_rv += 1;
        v
    }

    pub(crate) fn get(&self, uid: PodUid) -> Option<&ApiPod> {
        self.pods.get(&uid).map(|p| &**p)
    }

    /// The current object with this name, if any.
    pub(crate) fn uid_by_name(&self, namespace: &str, name: &str) -> Option<PodUid> {
        self.by_name.get(&(namespace, name) as &dyn Named).copied()
    }

    /// The current object with this name, if any, tried first as object `hint` (usually
    /// the one asked for: the status manager GETs a pod by its own name). Debug builds
    /// search the name index too and compare.
    pub(crate) fn get_by_name(
        &self,
        hint: PodUid,
        namespace: &str,
        name: &str,
    ) -> Option<&Arc<ApiPod>> {
        // The asker's key most often lies in the very spec the object holds (the watch
        // handed it out): the same address is the same text, with no bytes compared.
        let same = |a: &str, b: &str| std::ptr::eq(a, b) || a == b;
        let hinted = self.pods.get(&hint).filter(|p| {
            self.shadowed == 0
                && same(p.spec.name.as_str(), name)
                && same(&p.spec.namespace, namespace)
        });
        let found = match hinted {
            Some(p) => Some(p),
            None => self
                .uid_by_name(namespace, name)
                .and_then(|u| self.pods.get(&u)),
        };
        #[cfg(debug_assertions)]
        {
            let full = self.uid_by_name(namespace, name).and_then(|u| self.get(u));
            assert_eq!(
                found.map(|p| p.uid),
                full.map(|p| p.uid),
                "the name lookup's hint gave another object"
            );
        }
        found
    }

    /// A user's (graceful) delete. `grace = None` uses the pod's terminationGracePeriodSeconds.
    pub(crate) fn delete<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        grace: Option<i64>,
    ) {
        let now = sim.now();
        let Some(pod) = self.pods.get(&uid) else {
            return;
        };
        let g = grace
            .or(pod.spec.termination_grace_period_seconds)
            .unwrap_or(30)
            .max(0);
        // CheckGracefulDelete: terminal pods are deleted immediately.
        let g = if pod.status.phase.is_terminal() { 0 } else { g };
        if g == 0 {
            trace.emit(now, &Transition::ApiDeleteRequested { uid, grace: 0 });
            self.delete_now(sim, trace, uid, RemovedBy::UserDeleteGraceZero);
            return;
        }
        let pod = Arc::make_mut(self.pods.get_mut(&uid).expect("checked"));
        let shorter = pod.deletion_grace_period_seconds.is_none_or(|old| g < old);
        if !shorter {
            return;
        }
        pod.deletion_grace_period_seconds = Some(g);
        let ts = now + Dur::secs(g as u64);
        pod.deletion_timestamp = Some(pod.deletion_timestamp.map_or(ts, |old| old.min(ts)));
        trace.emit(now, &Transition::ApiDeleteRequested { uid, grace: g });
        if let Some(h) = self.history.get_mut(&uid) {
            h.end_mut().deletion_requested_at.get_or_insert(now);
        }
        let rv = self.bump();
        let pod = self.pods.get_mut(&uid).expect("checked");
        Arc::make_mut(pod).resource_version = rv;
        let snapshot = pod.clone();
        self.notify(sim, WatchKind::Modified, snapshot);
    }

    /// `kubectl delete --force --grace-period=0`: the object is gone at once.
    pub(crate) fn force_delete<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
    ) {
        if self.pods.contains_key(&uid) {
            trace.emit(sim.now(), &Transition::ApiForceDeleted { uid });
            if let Some(h) = self.history.get_mut(&uid) {
                h.end_mut().deletion_requested_at.get_or_insert(sim.now());
            }
            self.delete_now(sim, trace, uid, RemovedBy::ForceDelete);
        }
    }

    /// A delete with grace 0: the registry first updates the object (deletion timestamp
    /// now, grace 0), then removes it in the same request, so watchers see MODIFIED then
    /// DELETED.
    fn delete_now<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        by: RemovedBy,
    ) {
        let rv = self.bump();
        if let Some(shared) = self.pods.get_mut(&uid) {
            let pod = Arc::make_mut(shared);
            pod.deletion_timestamp = Some(
                pod.deletion_timestamp
                    .map_or(sim.now(), |t| t.min(sim.now())),
            );
            pod.deletion_grace_period_seconds = Some(0);
            pod.resource_version = rv;
            let snapshot = shared.clone();
            self.notify(sim, WatchKind::Modified, snapshot);
        }
        self.remove(sim, trace, uid, by);
    }

    fn remove<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        by: RemovedBy,
    ) {
        if let Some(pod) = self.pods.remove(&uid) {
            let key = (&*pod.spec.namespace, pod.spec.name.as_str());
            if self.by_name.get(&key as &dyn Named) == Some(&uid) {
                self.by_name.remove(&key as &dyn Named);
            } else {
                self.shadowed -= 1;
            }
            trace.emit(sim.now(), &Transition::ApiRemoved { uid, by });
            if let Some(h) = self.history.get_mut(&uid) {
                h.end_mut().removed_at = Some(sim.now());
                h.end_mut().removed_by = Some(by);
                h.end_mut().deletion_requested_at.get_or_insert(sim.now());
            }
            self.notify(sim, WatchKind::Deleted, pod);
        }
    }

    /// The kubelet's status PATCH. Returns the object after the patch (None: NotFound).
    pub(crate) fn patch_status<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        status: Arc<ApiPodStatus>,
    ) -> Option<&Arc<ApiPod>> {
        let now = sim.now();
        let rv = self.next_rv;
        let shared = self.pods.get_mut(&uid)?;
        if Arc::ptr_eq(&shared.status, &status) || shared.status == status {
            return self.pods.get(&uid);
        }
        let pod = Arc::make_mut(shared);
        let phase_changed = pod.status.phase != status.phase;
        let ready_changed = pod.status.ready != status.ready;
        pod.status = status;
        pod.resource_version = rv;
        self.next_rv += 1;
        if phase_changed {
            trace.emit(
                now,
                &Transition::ApiStatus {
                    uid,
                    phase: pod.status.phase,
                    reason: pod.status.reason.clone(),
                },
            );
            if let Some(h) = self.history.get_mut(&pod.mirror_of.unwrap_or(uid)) {
                h.phases.push((now, pod.status.phase));
            }
        }
        // A mirror pod's status is the static pod's.
        let hist = pod.mirror_of.unwrap_or(uid);
        if let Some(h) = self.history.get_mut(&hist) {
            if ready_changed {
                h.ready.push((now, pod.status.ready));
            }
            h.last_phase = pod.status.phase;
            if pod.status.reason.is_some() || h.end.is_some() {
                h.end_mut().reason.clone_from(&pod.status.reason);
            }
            for c in pod
                .status
                .containers
                .iter()
                .chain(&pod.status.init_containers.0)
            {
                let term = [Some(&c.state), c.last_state.as_ref()]
                    .into_iter()
                    .flatten()
                    .find_map(|s| match s {
                        ApiContainerState::Terminated { reason, .. } => Some(*reason),
                        _ => None,
                    });
                if let Some(r) = term.filter(|r| !r.is_empty()) {
                    // A container's name is copied only the first time (a crash-looping
                    // container's last state is written again at every patch).
                    let reasons = &mut h.end_mut().last_reasons;
                    match reasons.get_mut(&*c.name) {
                        Some(kept) => *kept = r,
                        None => {
                            reasons.insert(c.name.to_string(), r);
                        }
                    }
                }
            }
            h.conditions.clone_from(&pod.status.conditions);
        }
        trace.emit(
            now,
            &Transition::ApiStatusPatched {
                uid,
                of: hist,
                status: Arc::clone(&pod.status),
            },
        );
        let snapshot = shared.clone();
        self.notify(sim, WatchKind::Modified, snapshot);
        self.pods.get(&uid)
    }

    /// Another controller sets one condition of a pod's status (replacing the condition of
    /// its type, or appending it), as a status PATCH of that one condition would: the
    /// kubelet sees the change through the watch.
    pub(crate) fn set_condition<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        condition: PodCondition,
    ) {
        let rv = self.next_rv;
        let Some(shared) = self.pods.get_mut(&uid) else {
            return;
        };
        if shared.status.conditions.get(&condition.kind) == Some(&condition) {
            return;
        }
        let pod = Arc::make_mut(shared);
        trace.emit(
            sim.now(),
            &Transition::ApiConditionSet {
                uid,
                condition: Box::new(condition.clone()),
            },
        );
        Arc::make_mut(&mut pod.status)
            .conditions
            .replace_or_append(condition);
        pod.resource_version = rv;
        self.next_rv += 1;
        if let Some(h) = self.history.get_mut(&pod.mirror_of.unwrap_or(uid)) {
            h.conditions.clone_from(&pod.status.conditions);
        }
        let snapshot = shared.clone();
        self.notify(sim, WatchKind::Modified, snapshot);
    }

    /// A fresh UID (static pods get theirs from the same sequence, so UIDs stay unique and
    /// in creation order).
    pub(crate) fn allocate_uid(&mut self) -> PodUid {
        let uid = PodUid(self.next_uid);
        self.next_uid += 1;
        uid
    }

    /// Start the history of a static pod (its manifest appeared on the node).
    pub(crate) fn record_static(&mut self, uid: PodUid, name: &str, decl: usize, now: SimTime) {
        self.history.insert(
            uid,
            Box::new(ObjectHistory {
                uid: Some(uid),
                name: name.to_string(),
                decl,
                created_at: now,
                phases: vec![(now, PodPhase::Pending)],
                is_static: true,
                ..Default::default()
            }),
        );
    }

    /// A removed static manifest was put back unchanged: the same UID's history goes on,
    /// no longer removed.
    pub(crate) fn record_static_restored(&mut self, uid: PodUid) {
        if let Some(h) = self.history.get_mut(&uid) {
            if let Some(e) = h.end.as_deref_mut() {
                e.deletion_requested_at = None;
                e.removed_at = None;
                e.removed_by = None;
            }
        }
    }

    /// A static pod's manifest was removed (or replaced) on the node.
    pub(crate) fn record_static_removed(&mut self, uid: PodUid, now: SimTime, by: RemovedBy) {
        if let Some(h) = self.history.get_mut(&uid) {
            h.end_mut().deletion_requested_at.get_or_insert(now);
            h.end_mut().removed_at.get_or_insert(now);
            h.end_mut().removed_by.get_or_insert(by);
        }
    }

    /// The kubelet creates a mirror pod for a static pod. `None` if an object with that
    /// name already exists (AlreadyExists).
    pub(crate) fn create_mirror<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        of: &ApiPod,
    ) -> Option<PodUid> {
        let key = NameKey(of.spec.clone());
        if self.by_name.contains_key(&key) {
            return None;
        }
        let uid = self.allocate_uid();
        let rv = self.bump();
        let pod = ApiPod {
            uid,
            spec: of.spec.clone(),
            decl: of.decl,
            created_at: sim.now(),
            deletion_timestamp: None,
            deletion_grace_period_seconds: None,
            status: Arc::clone(&self.empty_status),
            resource_version: rv,
            static_pod: false,
            mirror_of: Some(of.uid),
        };
        trace.emit(
            sim.now(),
            &Transition::ApiCreated {
                uid,
                name: format!("{} (mirror of {})", of.spec.name, of.uid),
                spec: of.spec.clone(),
                static_pod: false,
                mirror_of: Some(of.uid),
            },
        );
        self.by_name.insert(key, uid);
        let pod = Arc::new(pod);
        self.notify(sim, WatchKind::Added, pod.clone());
        self.pods.insert(uid, pod);
        Some(uid)
    }

    /// The kubelet deletes a mirror pod (grace 0, UID precondition).
    pub(crate) fn delete_mirror<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
    ) {
        if self.pods.get(&uid).is_some_and(|p| p.mirror_of.is_some()) {
            self.delete_now(sim, trace, uid, RemovedBy::KubeletMirrorPod);
        }
    }

    /// The kubelet's final DELETE with grace 0 and a UID precondition.
    pub(crate) fn kubelet_delete<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
    ) -> bool {
        if self.pods.contains_key(&uid) {
            self.remove(sim, trace, uid, RemovedBy::Kubelet);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodSpec, RestartPolicy};

    fn spec(name: &str) -> Arc<PodSpec> {
        let c = vec![ContainerSpec::named("app", "img:1")];
        Arc::new(PodSpec::new(name, "default", RestartPolicy::Always, c))
    }

    /// The name lookup with a hint gives what the name index gives, also after a second
    /// object took a live object's name and after either of them left.
    #[test]
    fn the_hinted_name_lookup_is_the_name_index() {
        let mut sim: Sim<Event<()>> = Sim::new(1, Default::default(), Default::default());
        let mut t: crate::sim::Trace = crate::sim::Trace::new(false);
        let fixed = Dist::Fixed(Dur::ZERO);
        let mut api = ApiServer::new(1, fixed, fixed);
        let found = |api: &ApiServer, hint: u32, name: &str| {
            let by_index = api.uid_by_name("default", name);
            let hinted = api
                .get_by_name(PodUid(hint), "default", name)
                .map(|p| p.uid);
            assert_eq!(hinted, by_index, "hint {hint}, name {name}");
            hinted
        };
        let a = api.create(&mut sim, &mut t, spec("a"), 0);
        let b = api.create(&mut sim, &mut t, spec("b"), 0);
        assert_eq!(api.shadowed, 0);
        assert_eq!(found(&api, a.0, "a"), Some(a));
        assert_eq!(found(&api, a.0, "b"), Some(b), "a hint of another name");
        assert_eq!(found(&api, 99, "a"), Some(a), "a hint of no object");
        // A second object named "a": the first one lives on, unnamed by the index.
        let a2 = api.create(&mut sim, &mut t, spec("a"), 0);
        assert_eq!(api.shadowed, 1);
        assert_eq!(found(&api, a.0, "a"), Some(a2));
        api.remove(&mut sim, &mut t, a2, RemovedBy::UserDeleteGraceZero);
        assert_eq!(api.shadowed, 1);
        assert_eq!(found(&api, a.0, "a"), None, "the index holds no \"a\" now");
        api.remove(&mut sim, &mut t, a, RemovedBy::UserDeleteGraceZero);
        assert_eq!(api.shadowed, 0);
        assert_eq!(found(&api, b.0, "b"), Some(b));
    }
}
