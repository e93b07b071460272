//! What the oracle's unit tests share: a feed of hand-written transitions at increasing
//! times, and the words they use. The tests sit beside the checkers (for each safety
//! invariant a transition sequence that violates it, where the finding is reported, and
//! one that does not; the liveness properties on short hand-written runs).

pub(crate) use super::invariants::{Inv, INVARIANTS};
pub(crate) use super::Oracle;
pub(crate) use crate::model::{
    ApiContainerState, ApiContainerStatus, ApiPodStatus, ContainerId, ContainerSpec, CriOp,
    EvictionSignal, EvictionStep, NoteKind, PodPhase, PodSpec, PodUid, PowerOffCause, ProbeCached,
    ProbeType, ProbeVerdict, ProbeWorkerStep, ProcessEvent, RemovedBy, RestartPolicy, ShutdownStep,
    SyncKind, Transition, UpdateType, Word,
};
pub(crate) use crate::sim::{Dur, Observer, SimTime};
pub(crate) use std::sync::Arc;

pub(crate) const P: PodUid = PodUid(1);
pub(crate) const Q: PodUid = PodUid(2);

pub(crate) fn spec(name: &str, policy: RestartPolicy) -> Arc<PodSpec> {
    let mut s = PodSpec::new(
        name,
        "default",
        policy,
        vec![ContainerSpec::named("app", "img:1")],
    );
    s.termination_grace_period_seconds = Some(30);
    Arc::new(s)
}

/// The word whose trace text is `text` (a typo fails the test).
pub(crate) fn w<T: Word>(text: &str) -> T {
    T::from_text(text).unwrap_or_else(|| panic!("no word renders as {text:?}"))
}

/// The node-shutdown steps the tests feed, by their trace text.
pub(crate) fn gns(text: &str) -> ShutdownStep {
    match text {
        "PrepareForShutdown(true)" => ShutdownStep::PrepareForShutdown {
            shutting_down: true,
        },
        "PrepareForShutdown(false)" => ShutdownStep::PrepareForShutdown {
            shutting_down: false,
        },
        "shutdown processed: inhibitor lock 1 released, node will shut down" => {
            ShutdownStep::Processed { lock: 1 }
        }
        _ => panic!("no shutdown step {text:?} in these tests"),
    }
}

/// Feeds transitions to an oracle at increasing times.
pub(crate) struct Feed {
    pub(crate) o: Oracle,
    pub(crate) now: SimTime,
    /// The container name "app" of the probes fed: one shared copy, as a probe worker of
    /// the model holds one for all its probes (so the oracle's quiet-probe path is taken).
    pub(crate) app: Arc<str>,
}

impl Feed {
    pub(crate) fn new() -> Self {
        Feed {
            o: Oracle::new(),
            now: SimTime::ZERO,
            app: Arc::from("app"),
        }
    }
    /// Move the clock forward by `ms` milliseconds.
    pub(crate) fn wait(&mut self, ms: u64) -> &mut Self {
        self.now = self.now + Dur::millis(ms);
        self
    }
    pub(crate) fn tr(&mut self, t: Transition) -> &mut Self {
        self.o.transition(self.now, &t);
        self
    }
    pub(crate) fn names(&self) -> Vec<&'static str> {
        self.o.findings().iter().map(|f| f.invariant).collect()
    }
    pub(crate) fn finish(&mut self) -> Vec<&'static str> {
        let end = self.now;
        self.o.finish(end);
        self.names()
    }
    pub(crate) fn has(&self, inv: Inv) -> bool {
        self.names().contains(&inv.name())
    }

    pub(crate) fn created(&mut self, uid: PodUid, policy: RestartPolicy) -> &mut Self {
        let name = format!("pod{}", uid.0);
        self.tr(Transition::ApiCreated {
            uid,
            name: name.clone(),
            spec: spec(&name, policy),
            static_pod: false,
            mirror_of: None,
        })
    }
    pub(crate) fn cfg(&mut self, uid: PodUid, op: &'static str) -> &mut Self {
        self.tr(Transition::ConfigOp { uid, op: w(op) })
    }
    pub(crate) fn worker(&mut self, uid: PodUid, what: &'static str) -> &mut Self {
        self.tr(Transition::Worker { uid, what: w(what) })
    }
    pub(crate) fn begin(
        &mut self,
        uid: PodUid,
        kind: &'static str,
        grace: Option<i64>,
    ) -> &mut Self {
        self.tr(Transition::SyncBegin {
            uid,
            kind: w(kind),
            grace,
        })
    }
    pub(crate) fn end(&mut self, uid: PodUid, kind: &'static str, ok: bool) -> &mut Self {
        self.tr(Transition::SyncEnd {
            uid,
            kind: w(kind),
            error: (!ok).then(|| "boom".to_string()),
        })
    }
    pub(crate) fn cri(&mut self, uid: PodUid, call: &'static str) -> &mut Self {
        self.tr(Transition::CriBegin {
            uid,
            call: w(call),
            target: 0,
            timeout_s: None,
        })
    }
    pub(crate) fn stop(&mut self, uid: PodUid, timeout: i64) -> &mut Self {
        self.tr(Transition::CriBegin {
            uid,
            call: CriOp::StopContainer,
            target: 1,
            timeout_s: Some(timeout),
        })
    }
    pub(crate) fn running(&mut self, uid: PodUid, id: u32) -> &mut Self {
        self.tr(Transition::ContainerRunning {
            uid,
            id: ContainerId(id),
            name: "app".into(),
        })
    }
    pub(crate) fn exited(&mut self, uid: PodUid, id: u32, code: i32) -> &mut Self {
        self.tr(Transition::ContainerExited {
            uid,
            id: ContainerId(id),
            code,
            reason: "Completed",
        })
    }
    pub(crate) fn host(&mut self, uid: PodUid, what: &'static str) -> &mut Self {
        self.tr(Transition::Host { uid, what: w(what) })
    }
    pub(crate) fn step(&mut self, uid: PodUid, step: &'static str) -> &mut Self {
        self.tr(Transition::SyncStep { uid, step: w(step) })
    }
    pub(crate) fn local(&mut self, uid: PodUid, phase: PodPhase) -> &mut Self {
        self.tr(Transition::LocalStatus { uid, phase })
    }
    pub(crate) fn patched(&mut self, uid: PodUid, phase: PodPhase, ready: bool) -> &mut Self {
        self.patched_with(uid, phase, ready, Vec::new())
    }
    pub(crate) fn patched_with(
        &mut self,
        uid: PodUid,
        phase: PodPhase,
        ready: bool,
        containers: Vec<ApiContainerStatus>,
    ) -> &mut Self {
        let status = ApiPodStatus {
            phase,
            ready,
            containers,
            ..Default::default()
        };
        self.tr(Transition::ApiStatusPatched {
            uid,
            of: uid,
            status: Arc::new(status),
        })
    }
    pub(crate) fn probe(&mut self, uid: PodUid, kind: &'static str) -> &mut Self {
        self.tr(Transition::Probe {
            uid,
            container: self.app.clone(),
            kind: w(kind),
            result: ProbeVerdict::Success,
        })
    }
    pub(crate) fn kill(
        &mut self,
        uid: PodUid,
        ch: u64,
        what: &'static str,
        evict: bool,
    ) -> &mut Self {
        self.tr(Transition::KillPodNow {
            uid,
            ch,
            what: w(what),
            evict,
        })
    }

    /// A pod created, admitted and running with container c1.
    pub(crate) fn running_pod(&mut self, uid: PodUid, policy: RestartPolicy) -> &mut Self {
        self.created(uid, policy)
            .wait(10)
            .cfg(uid, "ADD")
            .worker(uid, "record")
            .worker(uid, "started")
            .begin(uid, "SyncPod", None)
            .local(uid, PodPhase::Pending)
            .cri(uid, "MountVolumes")
            .wait(20)
            .host(uid, "volumes mounted")
            .cri(uid, "RunPodSandbox")
            .wait(100)
            .cri(uid, "CreateContainer")
            .cri(uid, "StartContainer")
            .wait(20)
            .running(uid, 1)
            .end(uid, "SyncPod", true)
            .wait(1000)
            .begin(uid, "SyncPod", None)
            .local(uid, PodPhase::Running)
            .end(uid, "SyncPod", true)
            .wait(20)
            .patched(uid, PodPhase::Running, true)
    }

    /// The pod is deleted with grace 30 and terminated the upstream way, up to the end of
    /// `SyncTerminatingPod`.
    pub(crate) fn terminate(&mut self, uid: PodUid) -> &mut Self {
        self.tr(Transition::ApiDeleteRequested { uid, grace: 30 })
            .wait(10)
            .cfg(uid, "DELETE")
            .worker(uid, "termination requested")
            .begin(uid, "SyncTerminatingPod", Some(30))
            .worker(uid, "termination acknowledged")
            .step(uid, "status set")
            .step(uid, "probes stopped: liveness, startup")
            .stop(uid, 30)
            .wait(3000)
            .exited(uid, 1, 0)
            .step(uid, "probes removed")
            .local(uid, PodPhase::Succeeded)
            .end(uid, "SyncTerminatingPod", true)
            .worker(uid, "terminated")
    }

    /// From `terminate` on: the terminal status, SyncTerminatedPod and the kubelet's delete.
    pub(crate) fn clean_up(&mut self, uid: PodUid) -> &mut Self {
        self.wait(20)
            .patched(uid, PodPhase::Succeeded, false)
            .wait(1000)
            .begin(uid, "SyncTerminatedPod", None)
            .cri(uid, "UnmountVolumes")
            .wait(20)
            .host(uid, "volumes unmounted")
            .cri(uid, "RemovePodCgroup")
            .wait(5)
            .host(uid, "pod cgroup removed")
            .end(uid, "SyncTerminatedPod", true)
            .worker(uid, "finished")
            .wait(40)
            .tr(Transition::ApiRemoved {
                uid,
                by: RemovedBy::Kubelet,
            })
    }
}
