//! The effect of each CRI call when it completes ([`Runtime::complete`] dispatches here).
//! Each returns the call's result; `finish` (the `CriEnd` record) is the caller's job,
//! except for `StopContainer`, whose reply may have to wait for the process to exit.

use super::{Container, Runtime, Sandbox, Tracer};
use crate::model::{
    ContainerId, CriCall, CriError, OnSigterm, PodUid, RtPodStatus, RtState, RunFor, SandboxId,
    Transition,
};
use crate::model::{CriFailed, HostOp, ProcessSignal, OOM_AFTER};
use crate::sim::{Dur, Sim, SimTime};
use crate::world::cri::{CriClient, CriReq, CriResult};
use crate::world::runtime::RtEvent;
use crate::world::Event;
use std::sync::Arc;

impl Runtime {
    pub(super) fn run_pod_sandbox(
        &mut self,
        trace: &mut Tracer,
        now: SimTime,
        uid: PodUid,
        name: &str,
        namespace: &str,
        attempt: u32,
    ) -> CriResult {
        let id = SandboxId(self.next_sandbox);
        self.next_sandbox += 1;
        self.sandboxes.insert(
            id,
            Sandbox {
                ready: true,
                attempt,
                created_at: now,
                removed: false,
            },
        );
        let namespace = self.intern(namespace);
        let pod = self.pods.get_or_insert_with(uid, Default::default);
        if *pod.name != *name {
            pod.name = name.into();
        }
        pod.namespace = namespace;
        pod.sandboxes.push(id);
        self.note_changed(uid);
        self.set_running(uid, true);
        trace.emit(now, &Transition::SandboxReady { uid, id });
        CriResult::SandboxCreated(id)
    }

    pub(super) fn pull_image(&mut self, uid: PodUid, image: &str, always: bool) -> CriResult {
        let ppm = self.image_failure_ppm(uid, image);
        if !always && self.images.contains(image) {
            CriResult::Ok
        } else if self.fault_rng.chance_ppm(ppm) {
            CriResult::Failed(CriFailed::ErrImagePull)
        } else {
            self.images.insert(image.to_string());
            CriResult::Ok
        }
    }

    pub(super) fn create_container(
        &mut self,
        now: SimTime,
        uid: PodUid,
        sandbox: SandboxId,
        (name, image): (&str, &str),
        attempt: u32,
    ) -> CriResult {
        if !self.sandboxes.get(&sandbox).is_some_and(|sb| sb.ready) {
            return CriResult::Failed(CriFailed::SandboxNotReady);
        }
        if !self.images.contains(image) {
            // Removed since its pull (race catalog 33): the runtime cannot create from it.
            return CriResult::Failed(CriFailed::ImageNotFound);
        }
        // A container's name is the pod, the container name and the attempt; the runtime
        // holds it from the create until the container is removed (containerd and CRI-O
        // reserve it so). Two creates of one attempt (a create of a kubelet that died
        // still in flight, and the next kubelet's own) leave one container: podsim decides
        // at completion, so the first to finish wins (containerd: the first to begin).
        let held = self.pods.get(&uid).is_some_and(|p| {
            p.live.iter().any(|c| {
                self.containers
                    .get(c)
                    .is_some_and(|c| c.attempt == attempt && *c.name == *name && !c.removed)
            })
        });
        if held {
            return CriResult::Failed(CriFailed::NameReserved);
        }
        let id = ContainerId(self.next_container);
        self.next_container += 1;
        let behaviour = self
            .workloads
            .get(&uid)
            .and_then(|w| w.get(name))
            .cloned()
            .unwrap_or_default();
        let (name, image) = (self.intern(name), self.intern(image));
        self.containers.insert(
            id,
            Container {
                uid,
                sandbox,
                name,
                image,
                attempt,
                state: RtState::Created,
                exit_code: 0,
                reason: "",
                created_at: now,
                started_at: None,
                finished_at: None,
                behaviour,
                gen: 0,
                sigterm_at: None,
                removed: false,
                calls: None,
                powered_off: false,
            },
        );
        let pod = self.pods.get_or_insert_with(uid, Default::default);
        pod.containers.push(id);
        pod.live.push(id);
        self.live.insert(id);
        if Self::uses_resources(&self.containers[&id]) {
            self.live_using.insert(id);
        }
        self.note_changed(uid);
        CriResult::ContainerCreated(id)
    }

    pub(super) fn start_container<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        id: ContainerId,
    ) -> CriResult {
        let now = sim.now();
        let ok = matches!(self.containers.get(&id), Some(c) if c.state == RtState::Created
            && self.sandboxes.get(&c.sandbox).is_some_and(|s| s.ready));
        if !ok {
            return CriResult::Failed(CriFailed::ContainerNotCreated);
        }
        let c = self.containers.get_mut(&id).expect("checked");
        c.state = RtState::Running;
        c.started_at = Some(now);
        let name = String::from(&*c.name);
        self.sync_exec_view(id);
        let c = &self.containers[&id];
        if let RunFor::For(d) = c.behaviour.run_for {
            let (gen, code) = (c.gen, c.behaviour.exit_code);
            let reason = if code == 0 { "Completed" } else { "Error" };
            let _ = sim.after(
                d,
                Event::Runtime(RtEvent::ProcExit {
                    id,
                    gen,
                    code,
                    reason,
                }),
            );
        }
        // The kernel's OOM killer: an instance whose memory use exceeds its limit is
        // killed `OOM_AFTER` into its run (unless it exits before), exit code 137 and the
        // reason the runtime reports for it, `OOMKilled`.
        let b = &c.behaviour;
        if b.memory_limit_bytes > 0 && b.memory_usage_bytes > b.memory_limit_bytes {
            let ev = RtEvent::ProcExit {
                id,
                gen: c.gen,
                code: 137,
                reason: "OOMKilled",
            };
            let _ = sim.after(OOM_AFTER, Event::Runtime(ev));
        }
        self.note_changed(uid);
        self.set_running(uid, true);
        trace.emit(now, &Transition::ContainerRunning { uid, id, name });
        CriResult::Ok
    }

    /// `StopContainer`: SIGTERM now, and SIGKILL when the timeout runs out unless the
    /// process exits first. `None`: the reply waits for the exit (see `exit`).
    pub(super) fn stop_container<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        caller: CriClient,
        req: &CriReq,
        (uid, id, timeout_s): (PodUid, ContainerId, i64),
    ) -> Option<CriResult> {
        let now = sim.now();
        let Some(c) = self.containers.get_mut(&id) else {
            // NotFound counts as success for the kubelet.
            return Some(self.finish(sim, trace, req, CriResult::Ok));
        };
        if c.state != RtState::Running {
            if c.state == RtState::Created {
                c.state = RtState::Exited;
                c.finished_at = Some(now);
                self.note_changed(uid);
            }
            return Some(self.finish(sim, trace, req, CriResult::Ok));
        }
        c.calls_mut().stop_waiters.push((caller, req.clone()));
        if c.sigterm_at.is_some() {
            return None;
        }
        c.sigterm_at = Some(now);
        trace.emit(
            now,
            &Transition::Signal {
                uid,
                id,
                signal: ProcessSignal::Sigterm,
            },
        );
        c.gen += 1;
        let gen = c.gen;
        let timeout = Dur::secs(timeout_s.max(0) as u64);
        match c.behaviour.on_sigterm {
            OnSigterm::ExitAfter { after, exit_code } if after < timeout => {
                let reason = if exit_code == 0 { "Completed" } else { "Error" };
                let _ = sim.after(
                    after,
                    Event::Runtime(RtEvent::ProcExit {
                        id,
                        gen,
                        code: exit_code,
                        reason,
                    }),
                );
            }
            _ => {
                let _ = sim.after(timeout, Event::Runtime(RtEvent::Sigkill { id, gen }));
            }
        }
        None
    }

    pub(super) fn stop_pod_sandbox<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        id: SandboxId,
    ) -> CriResult {
        let victims = self.running_containers(uid, Some(id));
        for cid in victims {
            self.exit(sim, trace, cid, 137, "Error");
        }
        if let Some(sb) = self.sandboxes.get_mut(&id) {
            if sb.ready {
                sb.ready = false;
                self.note_changed(uid);
                self.refresh_running(uid);
                trace.emit(sim.now(), &Transition::SandboxStopped { uid, id });
            }
        }
        CriResult::Ok
    }

    pub(super) fn remove_container<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
        id: ContainerId,
    ) -> CriResult {
        let running = self
            .containers
            .get(&id)
            .is_some_and(|c| c.state == RtState::Running && !c.removed);
        if running {
            // Replies to stop callers are not expected here: the kubelet only removes
            // exited containers.
            let _ = self.exit(sim, trace, id, 137, "Error");
        }
        if self.mark_removed(id) {
            self.note_changed(uid);
        }
        CriResult::Ok
    }

    /// The container goes from the runtime (kept only in the pod's history for the run
    /// summary); false if it was unknown or removed already.
    pub(super) fn mark_removed(&mut self, id: ContainerId) -> bool {
        let Some(c) = self.containers.get_mut(&id) else {
            return false;
        };
        if c.removed {
            return false;
        }
        c.removed = true;
        let uid = c.uid;
        self.sync_exec_view(id);
        self.live.remove(&id);
        self.live_using.remove(&id);
        if let Some(p) = self.pods.get_mut(&uid) {
            p.live.retain(|x| *x != id);
        }
        self.refresh_running(uid);
        true
    }

    /// `RemovePodSandbox`: a stopped sandbox without containers goes from the runtime.
    /// The CRI contract lets a runtime force-stop and remove what is left in the sandbox
    /// (containerd and CRI-O do); this runtime is stricter and refuses, with
    /// `sandbox not stopped` for a ready sandbox and `sandbox has containers` while a
    /// container created in it is not removed, so a kubelet that removes a sandbox too early
    /// shows in the trace. Removing an unknown or removed sandbox succeeds (idempotent, as
    /// the CRI asks).
    pub(super) fn remove_pod_sandbox(&mut self, uid: PodUid, id: SandboxId) -> CriResult {
        let Some(sb) = self.sandboxes.get(&id) else {
            return CriResult::Ok;
        };
        if sb.removed {
            return CriResult::Ok;
        }
        if sb.ready {
            return CriResult::Failed(CriFailed::SandboxNotStopped);
        }
        let members = self.pods.get(&uid).map(|p| p.live.as_slice());
        let in_use = members.unwrap_or_default().iter().any(|c| {
            self.containers
                .get(c)
                .is_some_and(|c| c.sandbox == id && !c.removed)
        });
        if in_use {
            return CriResult::Failed(CriFailed::SandboxHasContainers);
        }
        if let Some(sb) = self.sandboxes.get_mut(&id) {
            sb.removed = true;
        }
        self.note_changed(uid);
        CriResult::Ok
    }

    pub(super) fn mount_volumes(&mut self, trace: &mut Tracer, now: SimTime, uid: PodUid) {
        let h = self.host.get_or_insert_with(uid, Default::default);
        if !h.volumes_mounted {
            h.volumes_mounted = true;
            h.cgroup = true;
            h.pod_dir = true;
            h.mounted_at = Some(now);
            self.unmounted_dirs.remove(&uid);
            trace.emit(
                now,
                &Transition::Host {
                    uid,
                    what: HostOp::VolumesMounted,
                },
            );
        }
    }

    pub(super) fn unmount_volumes(&mut self, trace: &mut Tracer, now: SimTime, uid: PodUid) {
        if let Some(h) = self.host.get_mut(&uid) {
            if h.volumes_mounted {
                h.volumes_mounted = false;
                h.unmounted_at = Some(now);
                if h.pod_dir {
                    self.unmounted_dirs.insert(uid);
                }
                trace.emit(
                    now,
                    &Transition::Host {
                        uid,
                        what: HostOp::VolumesUnmounted,
                    },
                );
            }
        }
    }

    /// Destroying the cgroup kills whatever still runs in it (their stop callers' replies
    /// go to `deferred`).
    pub(super) fn remove_pod_cgroup<K>(
        &mut self,
        sim: &mut Sim<Event<K>>,
        trace: &mut Tracer,
        uid: PodUid,
    ) {
        let now = sim.now();
        let victims = self.running_containers(uid, None);
        let n = victims.len() as u32;
        for cid in victims {
            let replies = self.exit(sim, trace, cid, 137, "Error");
            self.deferred.extend(replies);
        }
        if let Some(h) = self.host.get_mut(&uid) {
            h.killed_by_cgroup_removal += n;
            if h.cgroup {
                h.cgroup = false;
                h.cgroup_removed_at = Some(now);
                trace.emit(
                    now,
                    &Transition::Host {
                        uid,
                        what: HostOp::PodCgroupRemoved,
                    },
                );
            }
        }
    }

    pub(super) fn remove_pod_dir(
        &mut self,
        trace: &mut Tracer,
        now: SimTime,
        uid: PodUid,
    ) -> CriResult {
        match self.host.get_mut(&uid) {
            Some(h) if h.volumes_mounted => CriResult::Failed(CriFailed::VolumesStillMounted),
            Some(h) => {
                if h.pod_dir {
                    h.pod_dir = false;
                    h.pod_dir_removed_at = Some(now);
                    self.unmounted_dirs.remove(&uid);
                    trace.emit(
                        now,
                        &Transition::Host {
                            uid,
                            what: HostOp::PodDirRemoved,
                        },
                    );
                }
                CriResult::Ok
            }
            None => CriResult::Ok,
        }
    }

    /// A `list_first` relist completes: the pods listed when it was issued are inspected
    /// now, each showing only the sandboxes and containers it had then.
    pub(super) fn relist_listed(&mut self, now: SimTime) -> CriResult {
        let listed = self.listed.take().unwrap_or_default();
        let mut out = Vec::with_capacity(listed.pods.len());
        for uid in listed.pods {
            match self.fault(CriCall::PodStatus, now) {
                Some(e) => out.push((uid, Err(e))),
                None => {
                    let mut st = self.pod_status(uid);
                    let (sb, cs) = listed.members.get(&uid).cloned().unwrap_or_default();
                    st.sandboxes.retain(|s| sb.contains(&s.id));
                    st.containers.retain(|c| cs.contains(&c.id));
                    out.push((uid, Ok(Arc::new(st))));
                }
            }
        }
        CriResult::Relist(out)
    }

    /// Note that `uid`'s state changed: the next relist inspects it.
    #[inline]
    pub(super) fn note_changed(&mut self, uid: PodUid) {
        // A pod usually changes several times in a row (a create, then its start): a
        // repeat of the last note is not pushed again.
        if self.changed.last() != Some(&uid) {
            self.changed.push(uid);
        }
    }

    /// The pods a relist inspects, ascending and each once: those noted changed since the
    /// last relist, plus `reinspect`, plus every pod when `all`. The notes are taken (the
    /// list is handed back to [`Runtime::recycle_changed`] once walked).
    pub(super) fn take_changed(&mut self, reinspect: &[PodUid], all: bool) -> Vec<PodUid> {
        let mut pods = std::mem::take(&mut self.changed);
        pods.extend_from_slice(reinspect);
        if all {
            pods.extend(self.pods.keys().copied());
        }
        pods.sort_unstable();
        pods.dedup();
        pods
    }

    /// Keep the list [`Runtime::take_changed`] handed out (emptied) for the next notes,
    /// unless notes were made in the meantime.
    pub(super) fn recycle_changed(&mut self, pods: &mut Vec<PodUid>) {
        if self.changed.is_empty() {
            pods.clear();
            std::mem::swap(&mut self.changed, pods);
        }
    }

    /// A relist that lists and inspects when it completes: the pods that changed since
    /// the last relist, plus `reinspect` (every pod when `all`).
    pub(super) fn relist(&mut self, now: SimTime, reinspect: &[PodUid], all: bool) -> CriResult {
        if self.changed.is_empty() && reinspect.is_empty() && !all {
            // Nothing changed and nothing to look at again: an empty listing, with no
            // list taken, sorted and handed back.
            return CriResult::Relist(Vec::new());
        }
        let mut pods = self.take_changed(reinspect, all);
        let mut out: Vec<(PodUid, Result<Arc<RtPodStatus>, CriError>)> =
            Vec::with_capacity(pods.len());
        for &uid in &pods {
            match self.fault(CriCall::PodStatus, now) {
                Some(e) => out.push((uid, Err(e))),
                None => out.push((uid, Ok(self.pod_status_shared(uid)))),
            }
        }
        self.recycle_changed(&mut pods);
        CriResult::Relist(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A runtime with pod 1's ready sandbox 1 (no containers).
    fn runtime() -> Runtime {
        let mut rt = Runtime::new(1, BTreeMap::new(), Vec::new());
        let sb = Sandbox {
            ready: true,
            attempt: 0,
            created_at: SimTime::ZERO,
            removed: false,
        };
        rt.sandboxes.insert(SandboxId(1), sb);
        rt.running.insert(PodUid(1));
        rt.pods
            .get_or_insert_with(PodUid(1), Default::default)
            .sandboxes
            .push(SandboxId(1));
        rt.images.insert("img".to_string());
        rt
    }

    /// A request comes out of its box unchanged; emptied boxes are kept up to the bound.
    #[test]
    fn unboxed_requests_leave_their_boxes_for_reuse() {
        let mut rt = runtime();
        let req = CriReq::StartContainer {
            uid: PodUid(1),
            id: ContainerId(7),
        };
        assert_eq!(rt.unbox(Box::new(req.clone())), req);
        assert_eq!(rt.spare.len(), 1);
        for _ in 0..2 * super::super::SPARE_BOXES {
            let _ = rt.unbox(Box::new(req.clone()));
        }
        assert_eq!(rt.spare.len(), super::super::SPARE_BOXES);
    }

    /// A status the PLEG dropped is refilled by the next inspection, in its own box; in a
    /// clone of the runtime, which shares the kept statuses with the original, both
    /// inspections still give the status a fresh one would.
    #[test]
    fn a_dropped_status_is_refilled_and_a_clone_sharing_it_builds_anew() {
        let uid = PodUid(1);
        let mut rt = runtime();
        let dropped = rt.pod_status_shared(uid);
        let at = Arc::as_ptr(&dropped);
        rt.recycle_status(dropped);
        assert_eq!(rt.spare_statuses.len(), 1);
        let mut twin = rt.clone();
        let (mine, theirs) = (rt.pod_status_shared(uid), twin.pod_status_shared(uid));
        assert_eq!((*mine).clone(), rt.pod_status(uid));
        assert_eq!(*theirs, *mine);
        // One of the two took the shared box (the other still held it), the other built anew.
        assert!(!std::ptr::eq(Arc::as_ptr(&mine), Arc::as_ptr(&theirs)));
        assert!(std::ptr::eq(Arc::as_ptr(&theirs), at) || std::ptr::eq(Arc::as_ptr(&mine), at));
        // A status someone still holds is not kept.
        let held = rt.pod_status_shared(uid);
        rt.recycle_status(held.clone());
        assert!(rt.spare_statuses.is_empty());
    }

    #[test]
    fn create_container_needs_its_image_on_the_node() {
        let (uid, id) = (PodUid(1), SandboxId(1));
        let mut rt = runtime();
        let gone = rt.create_container(SimTime::ZERO, uid, id, ("c", "other"), 0);
        assert_eq!(gone, CriResult::Failed(CriFailed::ImageNotFound));
        let ok = rt.create_container(SimTime::ZERO, uid, id, ("c", "img"), 0);
        assert!(matches!(ok, CriResult::ContainerCreated(_)), "{ok:?}");
    }

    #[test]
    fn a_container_name_is_held_until_its_container_is_removed() {
        let (uid, id) = (PodUid(1), SandboxId(1));
        let mut rt = runtime();
        let first = rt.create_container(SimTime::ZERO, uid, id, ("c", "img"), 0);
        let CriResult::ContainerCreated(c) = first else {
            panic!("{first:?}");
        };
        let again = rt.create_container(SimTime::ZERO, uid, id, ("c", "img"), 0);
        assert_eq!(again, CriResult::Failed(CriFailed::NameReserved));
        // Another attempt, or another container name, is another name.
        let next = rt.create_container(SimTime::ZERO, uid, id, ("c", "img"), 1);
        assert!(matches!(next, CriResult::ContainerCreated(_)), "{next:?}");
        let other = rt.create_container(SimTime::ZERO, uid, id, ("d", "img"), 0);
        assert!(matches!(other, CriResult::ContainerCreated(_)), "{other:?}");
        assert!(rt.mark_removed(c));
        let freed = rt.create_container(SimTime::ZERO, uid, id, ("c", "img"), 0);
        assert!(matches!(freed, CriResult::ContainerCreated(_)), "{freed:?}");
    }

    #[test]
    fn remove_pod_sandbox_refuses_a_ready_sandbox_or_one_with_containers() {
        let (uid, id) = (PodUid(1), SandboxId(1));
        let mut rt = runtime();
        let created = rt.create_container(SimTime::ZERO, uid, id, ("c", "img"), 0);
        let CriResult::ContainerCreated(c) = created else {
            panic!("{created:?}");
        };
        let not_stopped = CriResult::Failed(CriFailed::SandboxNotStopped);
        assert_eq!(rt.remove_pod_sandbox(uid, id), not_stopped);
        rt.sandboxes.get_mut(&id).unwrap().ready = false;
        rt.refresh_running(uid);
        let in_use = CriResult::Failed(CriFailed::SandboxHasContainers);
        assert_eq!(rt.remove_pod_sandbox(uid, id), in_use);
        assert_eq!(rt.pod_status(uid).sandboxes.len(), 1);
        assert!(rt.mark_removed(c));
        assert_eq!(rt.remove_pod_sandbox(uid, id), CriResult::Ok);
        assert!(rt.pod_status(uid).sandboxes.is_empty());
        // Idempotent: removing it again, or an unknown sandbox, succeeds.
        assert_eq!(rt.remove_pod_sandbox(uid, id), CriResult::Ok);
        assert_eq!(rt.remove_pod_sandbox(uid, SandboxId(9)), CriResult::Ok);
    }
}
