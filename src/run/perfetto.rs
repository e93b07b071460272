//! `podsim run --perfetto FILE`: the run in the Chrome trace-event JSON format (the "JSON
//! Object Format", `{"traceEvents": [...], "displayTimeUnit": "ms"}`), which the Perfetto
//! UI (ui.perfetto.dev, "Open trace file") and `chrome://tracing` open as it is.
//!
//! Drawn from the run's typed transitions (never from the text of trace records):
//!
//! * one process per pod object, `pod NAME (UID)`, with a thread for its API phase
//!   (`phase`, plus deletion, removal, rejection and eviction as instants), one for its
//!   Ready condition (`ready`), one for the pod worker (`pod worker`: SyncPod,
//!   SyncTerminatingPod, SyncTerminatedPod as slices; the worker's steps, UpdatePod calls,
//!   notes as instants), one for the runtime and host calls that are not about one
//!   container (`runtime`: RunPodSandbox, PullImage, CreateContainer, volumes, cgroup,
//!   StopPodSandbox), one for the prober (`probes`: a slice per probe worker, an instant per
//!   probe run), and two per container: `NAME` (a slice per running instance; SIGTERM,
//!   SIGKILL and the exit as instants) and `NAME CRI` (StartContainer, the PostStart and
//!   PreStop hooks, StopContainer, RemoveContainer);
//! * a `node` process: the kubelet's incarnations (restarts), the node's Ready condition,
//!   the graceful shutdown (logind, the shutdown manager's groups, power-off) and the
//!   eviction manager (memory.available as a counter, MemoryPressure as a slice);
//! * an `oracle findings` process with one instant per finding.
//!
//! Slices are complete events (`ph: X`), written when they end; slices that would overlap
//! on one thread go to a second lane (`NAME (2)`), so every thread's slices nest as the
//! format requires. Slices still open when the kubelet crashes (its syncs and probe
//! workers), when the node powers off (everything on the node) or when the run ends are
//! closed there, and say so in their `args`. PLEG relists and housekeeping passes are left
//! out (they happen every second and say nothing about one pod).
//!
//! Streamed: events are written as the run makes them; what is kept is one small record
//! per pod object and the slices open at the moment. Times are microseconds with the
//! nanoseconds as three decimals, so the same run gives the same bytes.

use crate::model::{CriOp, PodUid, ProcessEvent, ProcessSignal, Transition};
use crate::run::RunOutput;
use crate::sim::SimTime;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;

const NODE_PID: u64 = 1;
const FINDINGS_PID: u64 = 2;
/// The first pod's process id; pods follow in the order they appear.
const FIRST_POD_PID: u64 = 10;

/// Thread kinds of a pod's process (a thread id is `pid * 10000 + kind * 100 + lane + 1`,
/// so thread ids are unique in the file and sort as the kinds do).
const PHASE: u64 = 0;
const READY: u64 = 1;
const WORKER: u64 = 2;
const RUNTIME: u64 = 3;
const PROBES: u64 = 4;
/// Container `i` (in spec order, init containers first) is kind `5 + 2i`, its CRI calls
/// `6 + 2i`.
const FIRST_CONTAINER: u64 = 5;
/// Thread kinds of the node's process.
const KUBELET: u64 = 0;
const NODE_READY: u64 = 1;
const SHUTDOWN: u64 = 2;
const EVICTION: u64 = 3;
const MAX_KIND: u64 = 99;
const MAX_LANE: usize = 98;

/// Microseconds with three decimals, from nanoseconds.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

/// A slice that began and has not ended yet.
#[derive(Clone, Debug)]
struct Open {
    at: u64,
    name: String,
    args: Value,
}

impl Open {
    fn new(at: SimTime, name: impl Into<String>, args: Value) -> Open {
        Open {
            at: at.0,
            name: name.into(),
            args,
        }
    }
}

/// One pod object's process and the slices open on it.
#[derive(Debug, Default)]
struct Pod {
    pid: u64,
    /// Container names in spec order (a name first seen at run time is added).
    containers: Vec<String>,
    /// Runtime container id -> container name.
    ids: BTreeMap<u32, String>,
    phase: Option<(String, Open)>,
    ready: Option<Open>,
    syncs: BTreeMap<&'static str, VecDeque<Open>>,
    cri: BTreeMap<(CriOp, u32), VecDeque<Open>>,
    running: BTreeMap<u32, Open>,
    probe_workers: BTreeMap<(String, &'static str), Open>,
}

impl Pod {
    /// The thread of a CRI call: its container's CRI thread when the call names a known
    /// container, else the pod's runtime thread.
    fn cri_thread(&mut self, call: CriOp, target: u32) -> (u64, String) {
        let by_id = matches!(
            call,
            CriOp::StartContainer
                | CriOp::StopContainer
                | CriOp::ExecPreStop
                | CriOp::ExecPostStart
                | CriOp::RemoveContainer
        );
        match by_id.then(|| self.ids.get(&target).cloned()).flatten() {
            Some(c) => (self.container_kind(&c) + 1, format!("{c} CRI")),
            None => (RUNTIME, "runtime".into()),
        }
    }

    /// The thread kind of container `name` (its CRI calls: `+ 1`).
    fn container_kind(&mut self, name: &str) -> u64 {
        let i = match self.containers.iter().position(|c| c == name) {
            Some(i) => i,
            None => {
                self.containers.push(name.to_string());
                self.containers.len() - 1
            }
        };
        (FIRST_CONTAINER + 2 * i as u64).min(MAX_KIND - 1)
    }
}

/// The trace-event writer of one run.
pub(crate) struct Perfetto<W: Write> {
    w: W,
    /// The first write error (nothing is written after it).
    err: Option<std::io::Error>,
    /// No event written yet (no comma before the next).
    first: bool,
    pods: BTreeMap<PodUid, Pod>,
    next_pid: u64,
    /// Per (pid, kind): when the last slice of each lane ended.
    lanes: BTreeMap<(u64, u64), Vec<u64>>,
    /// Threads whose names are written.
    named: BTreeSet<u64>,
    kubelet: Option<Open>,
    node_ready: Option<Open>,
    shutdown: Option<Open>,
    pressure: Option<Open>,
    /// Events written.
    pub(crate) events: u64,
}

impl<W: Write> Perfetto<W> {
    /// Starts the file: the header and the node's and the findings' processes.
    pub(crate) fn new(w: W) -> Self {
        let mut p = Perfetto {
            w,
            err: None,
            first: true,
            pods: BTreeMap::new(),
            next_pid: FIRST_POD_PID,
            lanes: BTreeMap::new(),
            named: BTreeSet::new(),
            // The first incarnation starts with the run (later ones are in the trace).
            kubelet: Some(Open::new(SimTime(0), "kubelet #0", json!({}))),
            node_ready: None,
            shutdown: None,
            pressure: None,
            events: 0,
        };
        p.raw("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
        p.process(NODE_PID, "node");
        p.process(FINDINGS_PID, "oracle findings");
        p
    }

    fn raw(&mut self, s: &str) {
        if self.err.is_none() {
            if let Err(e) = self.w.write_all(s.as_bytes()) {
                self.err = Some(e);
            }
        }
    }

    /// Writes one event (its fields in a fixed order).
    fn event(&mut self, fields: &[(&str, Value)]) {
        let mut s = String::with_capacity(160);
        s.push_str(if self.first { "{" } else { ",\n{" });
        self.first = false;
        for (i, (k, v)) in fields.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            s.push_str(&format!("\"{k}\":{v}"));
        }
        s.push('}');
        self.events += 1;
        self.raw(&s);
    }

    fn metadata(&mut self, name: &str, pid: u64, tid: Option<u64>, args: Value) {
        let mut f = vec![
            ("name", json!(name)),
            ("ph", json!("M")),
            ("pid", json!(pid)),
        ];
        if let Some(t) = tid {
            f.push(("tid", json!(t)));
        }
        f.push(("args", args));
        self.event(&f);
    }

    fn process(&mut self, pid: u64, name: &str) {
        self.metadata("process_name", pid, None, json!({ "name": name }));
        self.metadata(
            "process_sort_index",
            pid,
            None,
            json!({ "sort_index": pid }),
        );
    }

    /// The thread of lane `lane` of `kind`.
    fn tid(pid: u64, kind: u64, lane: usize) -> u64 {
        pid * 10_000 + kind.min(MAX_KIND) * 100 + lane as u64 + 1
    }

    /// The first lane of (pid, kind) free from `from` on (made if needed) for a slice up to
    /// `to`, and its thread (named after `base` when first used).
    fn lane(&mut self, pid: u64, kind: u64, base: &str, from: u64, to: u64) -> u64 {
        let lanes = self.lanes.entry((pid, kind)).or_default();
        let i = match lanes.iter().position(|&end| end <= from) {
            Some(i) => i,
            None if lanes.len() <= MAX_LANE => {
                lanes.push(0);
                lanes.len() - 1
            }
            None => lanes.len() - 1,
        };
        lanes[i] = lanes[i].max(to);
        self.thread(pid, kind, base, i)
    }

    /// The thread of lane `lane` of (pid, kind), named when first used.
    fn thread(&mut self, pid: u64, kind: u64, base: &str, lane: usize) -> u64 {
        let tid = Self::tid(pid, kind, lane);
        if self.named.insert(tid) {
            self.name_thread(pid, tid, base, lane);
        }
        tid
    }

    fn name_thread(&mut self, pid: u64, tid: u64, base: &str, lane: usize) {
        let name = if lane == 0 {
            base.to_string()
        } else {
            format!("{base} ({})", lane + 1)
        };
        self.metadata("thread_name", pid, Some(tid), json!({ "name": name }));
        self.metadata(
            "thread_sort_index",
            pid,
            Some(tid),
            json!({ "sort_index": tid }),
        );
    }

    /// A complete slice `o` .. `end` on a lane of (pid, kind).
    fn slice(&mut self, pid: u64, kind: u64, base: &str, o: Open, end: u64) {
        let end = end.max(o.at);
        let tid = self.lane(pid, kind, base, o.at, end);
        let mut f = vec![
            ("name", json!(o.name)),
            ("cat", json!(base)),
            ("ph", json!("X")),
            ("ts", Value::Null),
            ("dur", Value::Null),
            ("pid", json!(pid)),
            ("tid", json!(tid)),
        ];
        if o.args.as_object().is_some_and(|m| !m.is_empty()) {
            f.push(("args", o.args));
        }
        self.event_timed(f, o.at, Some(end - o.at));
    }

    /// An instant event on the first lane of (pid, kind).
    fn instant(&mut self, pid: u64, kind: u64, base: &str, name: &str, at: SimTime, args: Value) {
        self.lanes.entry((pid, kind)).or_insert_with(|| vec![0]);
        let tid = self.thread(pid, kind, base, 0);
        let mut f = vec![
            ("name", json!(name)),
            ("cat", json!(base)),
            ("ph", json!("i")),
            ("s", json!("t")),
            ("ts", Value::Null),
            ("pid", json!(pid)),
            ("tid", json!(tid)),
        ];
        if args.as_object().is_some_and(|m| !m.is_empty()) {
            f.push(("args", args));
        }
        self.event_timed(f, at.0, None);
    }

    /// Writes `fields` with `ts` (and `dur`) filled in as exact decimals.
    fn event_timed(&mut self, fields: Vec<(&str, Value)>, ts: u64, dur: Option<u64>) {
        let mut s = String::with_capacity(200);
        s.push_str(if self.first { "{" } else { ",\n{" });
        self.first = false;
        for (i, (k, v)) in fields.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            match *k {
                "ts" => s.push_str(&format!("\"ts\":{}", us(ts))),
                "dur" => s.push_str(&format!("\"dur\":{}", us(dur.unwrap_or(0)))),
                _ => s.push_str(&format!("\"{k}\":{v}")),
            }
        }
        s.push('}');
        self.events += 1;
        self.raw(&s);
    }

    /// The pod object `uid` (its process made on first sight).
    fn pod(&mut self, uid: PodUid) -> &mut Pod {
        if !self.pods.contains_key(&uid) {
            let pid = self.next_pid;
            self.next_pid += 1;
            self.process(pid, &format!("pod ? ({uid})"));
            self.pods.insert(
                uid,
                Pod {
                    pid,
                    ..Pod::default()
                },
            );
        }
        self.pods.get_mut(&uid).expect("just made")
    }

    /// A pod appears in the API server (or as a static manifest).
    fn created(&mut self, at: SimTime, uid: PodUid, t: &Transition) {
        let Transition::ApiCreated {
            name,
            spec,
            static_pod,
            mirror_of,
            ..
        } = t
        else {
            return;
        };
        let label = match (static_pod, mirror_of) {
            (true, _) => format!("pod {} ({uid}) static", spec.name),
            (false, Some(of)) => format!("pod {} ({uid}) mirror of {of}", spec.name),
            _ => format!("pod {} ({uid})", spec.name),
        };
        let known = self.pods.contains_key(&uid);
        let pid = if known {
            self.pods[&uid].pid
        } else {
            let pid = self.next_pid;
            self.next_pid += 1;
            self.pods.insert(
                uid,
                Pod {
                    pid,
                    ..Pod::default()
                },
            );
            pid
        };
        self.metadata("process_name", pid, None, json!({ "name": label }));
        if !known {
            self.metadata(
                "process_sort_index",
                pid,
                None,
                json!({ "sort_index": pid }),
            );
        }
        let pod = self.pods.get_mut(&uid).expect("made above");
        for c in spec.init_containers.iter().chain(&spec.containers) {
            pod.container_kind(&c.name);
        }
        self.set_phase(uid, at, "Pending");
        self.instant(pid, PHASE, "phase", "created", at, json!({ "name": name }));
    }

    fn set_phase(&mut self, uid: PodUid, at: SimTime, phase: &str) {
        let pod = self.pod(uid);
        let pid = pod.pid;
        if pod.phase.as_ref().is_some_and(|(p, _)| p == phase) {
            return;
        }
        let old = pod.phase.take();
        pod.phase = Some((phase.to_string(), Open::new(at, phase, json!({}))));
        if let Some((_, o)) = old {
            self.slice(pid, PHASE, "phase", o, at.0);
        }
    }

    /// Transitions of the API server about one pod.
    fn api(&mut self, at: SimTime, t: &Transition) {
        use Transition::*;
        match t {
            ApiCreated { uid, .. } => self.created(at, *uid, t),
            ApiDeleteRequested { uid, grace } => {
                let pid = self.pod(*uid).pid;
                let args = json!({ "gracePeriodSeconds": grace });
                self.instant(pid, PHASE, "phase", "delete requested", at, args);
            }
            ApiForceDeleted { uid } => {
                let pid = self.pod(*uid).pid;
                self.instant(pid, PHASE, "phase", "force-deleted", at, json!({}));
            }
            ApiStatus { uid, phase, reason } => {
                self.set_phase(*uid, at, phase.as_str());
                if let Some(r) = reason {
                    let pid = self.pod(*uid).pid;
                    let name = format!("reason {r}");
                    self.instant(pid, PHASE, "phase", &name, at, json!({}));
                }
            }
            ApiRemoved { uid, by } => {
                let pod = self.pod(*uid);
                let pid = pod.pid;
                let (phase, ready) = (pod.phase.take(), pod.ready.take());
                if let Some((_, o)) = phase {
                    self.slice(pid, PHASE, "phase", o, at.0);
                }
                if let Some(o) = ready {
                    self.slice(pid, READY, "ready", o, at.0);
                }
                let name = format!("removed from the API by {}", by.as_str());
                self.instant(pid, PHASE, "phase", &name, at, json!({}));
            }
            ApiStatusPatched { uid, status, .. } => {
                let pod = self.pod(*uid);
                let pid = pod.pid;
                match (status.ready, pod.ready.is_some()) {
                    (true, false) => pod.ready = Some(Open::new(at, "Ready", json!({}))),
                    (false, true) => {
                        let o = pod.ready.take().expect("open");
                        self.slice(pid, READY, "ready", o, at.0);
                    }
                    _ => {}
                }
            }
            WatchDelivered { uid, kind } => {
                let pid = self.pod(*uid).pid;
                let name = format!("watch {}", kind.as_str());
                self.instant(pid, WORKER, "pod worker", &name, at, json!({}));
            }
            StaticManifestRemoved { uid } => {
                let pid = self.pod(*uid).pid;
                self.instant(pid, PHASE, "phase", "manifest removed", at, json!({}));
            }
            _ => {}
        }
    }

    /// A CRI call of pod `uid` ended: its slice goes to the container's CRI thread when
    /// the call names a known container, else to the pod's runtime thread.
    fn cri_end(&mut self, at: SimTime, uid: PodUid, call: CriOp, target: u32, error: Option<&str>) {
        let pod = self.pod(uid);
        let pid = pod.pid;
        let Some(mut o) = pod
            .cri
            .get_mut(&(call, target))
            .and_then(VecDeque::pop_front)
        else {
            return;
        };
        if let (Some(e), Some(m)) = (error, o.args.as_object_mut()) {
            m.insert("error".into(), json!(e));
        }
        let (kind, base) = pod.cri_thread(call, target);
        self.slice(pid, kind, &base, o, at.0);
    }

    /// Transitions of the container runtime and the host.
    fn runtime(&mut self, at: SimTime, t: &Transition) {
        use Transition::*;
        match t {
            CriBegin {
                uid,
                call,
                target,
                timeout_s,
            } => {
                let name = match call {
                    CriOp::ExecPreStop => "PreStop hook",
                    CriOp::ExecPostStart => "PostStart hook",
                    c => c.as_str(),
                };
                let mut args = json!({ "target": target });
                if let Some(s) = timeout_s {
                    args["timeoutSeconds"] = json!(s);
                }
                let o = Open::new(at, name, args);
                let pod = self.pod(*uid);
                pod.cri.entry((*call, *target)).or_default().push_back(o);
            }
            CriEnd {
                uid,
                call,
                target,
                error,
            } => self.cri_end(at, *uid, *call, *target, error.map(|e| e.as_str())),
            SandboxReady { uid, id } | SandboxStopped { uid, id } => {
                let pid = self.pod(*uid).pid;
                let what = if matches!(t, SandboxReady { .. }) {
                    "ready"
                } else {
                    "stopped"
                };
                let name = format!("sandbox {id} {what}");
                self.instant(pid, RUNTIME, "runtime", &name, at, json!({}));
            }
            Host { uid, what } => {
                let pid = self.pod(*uid).pid;
                self.instant(pid, RUNTIME, "runtime", what.as_str(), at, json!({}));
            }
            ContainerRunning { uid, id, name } => {
                let pod = self.pod(*uid);
                pod.ids.insert(id.0, name.clone());
                let o = Open::new(at, format!("running ({id})"), json!({}));
                pod.running.insert(id.0, o);
            }
            Signal { uid, id, signal } => {
                let name = match signal {
                    ProcessSignal::Sigterm => "SIGTERM",
                    ProcessSignal::Sigkill => "SIGKILL",
                };
                self.on_container(at, *uid, id.0, name, json!({ "id": id.to_string() }));
            }
            ContainerExited {
                uid,
                id,
                code,
                reason,
            } => {
                let pod = self.pod(*uid);
                let pid = pod.pid;
                let c = pod.ids.get(&id.0).cloned();
                if let (Some(o), Some(c)) = (pod.running.remove(&id.0), c) {
                    let kind = pod.container_kind(&c);
                    self.slice(pid, kind, &c, o, at.0);
                }
                let name = format!("exited code={code} ({reason})");
                self.on_container(at, *uid, id.0, &name, json!({ "id": id.to_string() }));
            }
            _ => {}
        }
    }

    /// An instant on container `id`'s thread (the pod's runtime thread when unknown).
    fn on_container(&mut self, at: SimTime, uid: PodUid, id: u32, name: &str, args: Value) {
        let pod = self.pod(uid);
        let pid = pod.pid;
        match pod.ids.get(&id).cloned() {
            Some(c) => {
                let kind = pod.container_kind(&c);
                self.instant(pid, kind, &c, name, at, args);
            }
            None => self.instant(pid, RUNTIME, "runtime", name, at, args),
        }
    }

    /// Transitions of the kubelet about one pod.
    fn kubelet(&mut self, at: SimTime, t: &Transition) {
        use Transition::*;
        let worker = |p: &mut Self, uid: PodUid, name: &str, args: Value| {
            let pid = p.pod(uid).pid;
            p.instant(pid, WORKER, "pod worker", name, at, args);
        };
        match t {
            SyncBegin { uid, kind, grace } => {
                let args = grace.map_or(json!({}), |g| json!({ "grace": g }));
                let o = Open::new(at, kind.as_str(), args);
                let pod = self.pod(*uid);
                pod.syncs.entry(kind.as_str()).or_default().push_back(o);
            }
            SyncEnd { uid, kind, error } => {
                let pod = self.pod(*uid);
                let pid = pod.pid;
                let open = pod.syncs.get_mut(kind.as_str()).and_then(|q| q.pop_front());
                if let Some(mut o) = open {
                    if let (Some(e), Some(m)) = (error, o.args.as_object_mut()) {
                        m.insert("error".into(), json!(e));
                    }
                    self.slice(pid, WORKER, "pod worker", o, at.0);
                }
            }
            Worker { uid, what } => worker(self, *uid, what.as_str(), json!({})),
            UpdatePod {
                uid,
                ty,
                runtime_only,
            } => {
                let args = json!({ "runtimePod": runtime_only });
                worker(self, *uid, &format!("UpdatePod {}", ty.as_str()), args);
            }
            KillPodNow { uid, ch, what, .. } => {
                let name = format!("killPodNow {}", what.as_str());
                worker(self, *uid, &name, json!({ "ch": ch }));
            }
            SyncStep { uid, step } => worker(self, *uid, step.as_str(), json!({})),
            Note { uid, what } => worker(self, *uid, what.as_str(), json!({})),
            LocalStatus { uid, phase } => {
                worker(self, *uid, &format!("local status {phase}"), json!({}));
            }
            LocalStatusDropped { uid, now_of } => {
                let args = json!({"nowOf": now_of.to_string()});
                worker(self, *uid, "local status dropped (recreated)", args);
            }
            ConfigOp { uid, op } => {
                worker(self, *uid, &format!("config {}", op.as_str()), json!({}))
            }
            Eviction { uid, what } => worker(self, *uid, what.as_str(), json!({})),
            PodRejected { uid, reason } => {
                let pid = self.pod(*uid).pid;
                let name = format!("rejected: {}", reason.as_str());
                self.instant(pid, PHASE, "phase", &name, at, json!({}));
            }
            Evict { uid, signal, grace } => {
                let pid = self.pod(*uid).pid;
                let args = json!({ "signal": signal.as_str(), "grace": grace });
                self.instant(pid, PHASE, "phase", "evicted", at, args.clone());
                self.instant(NODE_PID, EVICTION, "eviction", "evict", at, args);
            }
            _ => self.prober(at, t),
        }
    }

    /// Transitions of the prober.
    fn prober(&mut self, at: SimTime, t: &Transition) {
        use crate::model::ProbeWorkerStep;
        use Transition::*;
        match t {
            ProbeWorker {
                uid,
                container,
                kind,
                what,
            } => {
                let pod = self.pod(*uid);
                let pid = pod.pid;
                let key = (container.to_string(), kind.as_str());
                match what {
                    ProbeWorkerStep::Started => {
                        let name = format!("{kind} worker ({container})");
                        pod.probe_workers
                            .insert(key, Open::new(at, name, json!({})));
                    }
                    ProbeWorkerStep::Stopped => {
                        if let Some(o) = pod.probe_workers.remove(&key) {
                            self.slice(pid, PROBES, "probes", o, at.0);
                        }
                    }
                }
            }
            Probe {
                uid,
                container,
                kind,
                result,
            } => {
                let pid = self.pod(*uid).pid;
                let name = format!("{kind} {}", result.as_str());
                let args = json!({ "container": &**container });
                self.instant(pid, PROBES, "probes", &name, at, args);
            }
            ProbeResult {
                uid,
                id,
                kind,
                result,
            } => {
                let pid = self.pod(*uid).pid;
                let name = format!("{kind} result {}", result.as_str());
                let args = json!({ "id": id.to_string() });
                self.instant(pid, PROBES, "probes", &name, at, args);
            }
            _ => self.node(at, t),
        }
    }

    /// Transitions of the node, the kubelet process, logind and the shutdown manager.
    fn node(&mut self, at: SimTime, t: &Transition) {
        use crate::model::LogindStep;
        use Transition::*;
        let n = NODE_PID;
        match t {
            KubeletProcess { what, epoch } => match what {
                ProcessEvent::Crashed => {
                    if let Some(o) = self.kubelet.take() {
                        self.slice(n, KUBELET, "kubelet", o, at.0);
                    }
                    self.instant(n, KUBELET, "kubelet", "kubelet crashed", at, json!({}));
                    self.close_kubelet_side(at, "kubelet crashed");
                }
                ProcessEvent::Started => {
                    let name = format!("kubelet #{epoch}");
                    self.kubelet = Some(Open::new(at, name, json!({})));
                }
            },
            NodeReady { ready } => match (ready, self.node_ready.is_some()) {
                (true, false) => self.node_ready = Some(Open::new(at, "Ready", json!({}))),
                (false, true) => {
                    let o = self.node_ready.take().expect("open");
                    self.slice(n, NODE_READY, "node Ready", o, at.0);
                }
                _ => {}
            },
            Logind { what } => {
                if let LogindStep::PrepareForShutdown { .. } = what {
                    let o = Open::new(at, "shutting down", json!({}));
                    self.shutdown.get_or_insert(o);
                }
                let name = format!("logind: {what}");
                self.instant(n, SHUTDOWN, "shutdown", &name, at, json!({}));
            }
            Shutdown { what } => {
                let name = what.to_string();
                self.instant(n, SHUTDOWN, "shutdown", &name, at, json!({}));
            }
            ShutdownGroup {
                priority,
                period_s,
                pods,
            } => {
                let name = format!("group priority {priority}");
                let args = json!({ "pods": pods, "periodSeconds": period_s });
                let end =
                    at.0.saturating_add((*period_s).max(0) as u64 * 1_000_000_000);
                self.slice(n, SHUTDOWN, "shutdown", Open::new(at, name, args), end);
            }
            PowerOff { cause, alive } => {
                if let Some(o) = self.shutdown.take() {
                    self.slice(n, SHUTDOWN, "shutdown", o, at.0);
                }
                let args = json!({ "cause": cause.as_str(), "containersStillRunning": alive });
                self.instant(n, SHUTDOWN, "shutdown", "power-off", at, args);
                if let Some(o) = self.kubelet.take() {
                    self.slice(n, KUBELET, "kubelet", o, at.0);
                }
                self.close_kubelet_side(at, "node powered off");
                self.close_runtime_side(at, "node powered off");
            }
            NodeMemoryAvailable { bytes } => {
                let f = [
                    ("name", json!("memory.available")),
                    ("ph", json!("C")),
                    ("ts", Value::Null),
                    ("pid", json!(n)),
                    ("args", json!({ "bytes": bytes })),
                ];
                self.event_timed(f.to_vec(), at.0, None);
            }
            NodeCondition { condition, status } => match (status, self.pressure.is_some()) {
                (true, false) => {
                    let o = Open::new(at, condition.as_str(), json!({}));
                    self.pressure = Some(o);
                }
                (false, true) => {
                    let o = self.pressure.take().expect("open");
                    self.slice(n, EVICTION, "eviction", o, at.0);
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Closes every pod's open syncs and probe workers at `at` (the kubelet is gone).
    fn close_kubelet_side(&mut self, at: SimTime, why: &str) {
        let mut done = Vec::new();
        for pod in self.pods.values_mut() {
            for q in pod.syncs.values_mut() {
                done.extend(
                    q.drain(..)
                        .map(|o| (pod.pid, WORKER, "pod worker".into(), o)),
                );
            }
            let workers = std::mem::take(&mut pod.probe_workers);
            done.extend(
                workers
                    .into_values()
                    .map(|o| (pod.pid, PROBES, "probes".into(), o)),
            );
        }
        self.close_all(done, at, why);
    }

    /// Closes every pod's open CRI calls and running containers at `at` (the node is off).
    fn close_runtime_side(&mut self, at: SimTime, why: &str) {
        let mut done: Vec<(u64, u64, String, Open)> = Vec::new();
        for pod in self.pods.values_mut() {
            let cri = std::mem::take(&mut pod.cri);
            for ((call, target), q) in cri {
                let (kind, base) = pod.cri_thread(call, target);
                done.extend(q.into_iter().map(|o| (pod.pid, kind, base.clone(), o)));
            }
            let running = std::mem::take(&mut pod.running);
            for (id, o) in running {
                let c = pod.ids.get(&id).cloned().unwrap_or_default();
                let kind = pod.container_kind(&c);
                done.push((pod.pid, kind, c, o));
            }
        }
        self.close_all(done, at, why);
    }

    fn close_all(&mut self, done: Vec<(u64, u64, String, Open)>, at: SimTime, why: &str) {
        for (pid, kind, base, mut o) in done {
            if let Some(m) = o.args.as_object_mut() {
                m.insert("ended".into(), json!(why));
            }
            self.slice(pid, kind, &base, o, at.0);
        }
    }

    /// Takes one batch of the run's transitions.
    pub(crate) fn see(&mut self, batch: &[(SimTime, Transition)]) {
        for (at, t) in batch {
            self.api(*at, t);
            self.runtime(*at, t);
            self.kubelet(*at, t);
        }
    }

    /// Ends the file: the findings, every slice still open (closed at the end of the run),
    /// and what run this is. Returns the writer, or the first write error.
    pub(crate) fn finish(mut self, out: &RunOutput) -> std::io::Result<W> {
        for f in &out.findings {
            let args = json!({ "pod": f.pod, "message": f.message, "replay": f.replay });
            let at = SimTime(f.at_ns);
            self.instant(FINDINGS_PID, 0, "findings", &f.invariant, at, args);
        }
        let end = SimTime(out.simulated_ns);
        let why = "still open when the run ended";
        self.close_kubelet_side(end, why);
        self.close_runtime_side(end, why);
        let mut done = Vec::new();
        for pod in self.pods.values_mut() {
            if let Some((_, o)) = pod.phase.take() {
                done.push((pod.pid, PHASE, "phase".into(), o));
            }
            if let Some(o) = pod.ready.take() {
                done.push((pod.pid, READY, "ready".into(), o));
            }
        }
        let node = [
            (self.kubelet.take(), KUBELET, "kubelet"),
            (self.node_ready.take(), NODE_READY, "node Ready"),
            (self.shutdown.take(), SHUTDOWN, "shutdown"),
            (self.pressure.take(), EVICTION, "eviction"),
        ];
        for (o, kind, base) in node {
            if let Some(o) = o {
                done.push((NODE_PID, kind, base.into(), o));
            }
        }
        self.close_all(done, end, why);
        let other = json!({
            "podsim": out.podsim,
            "scenario": out.scenario,
            "seed": out.seed,
            "profile": out.profile,
            "traceHash": out.trace_hash,
            "replay": out.replay,
        });
        self.raw(&format!("\n],\"otherData\":{other}}}\n"));
        match self.err.take() {
            Some(e) => Err(e),
            None => self.w.flush().map(|()| self.w),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_exact_microseconds() {
        assert_eq!(us(0), "0.000");
        assert_eq!(us(1), "0.001");
        assert_eq!(us(50_065_011_729), "50065011.729");
    }

    #[test]
    fn overlapping_slices_take_a_second_lane() {
        let mut p = Perfetto::new(Vec::new());
        let a = p.lane(10, RUNTIME, "runtime", 5, 10);
        let b = p.lane(10, RUNTIME, "runtime", 7, 12);
        let c = p.lane(10, RUNTIME, "runtime", 10, 11);
        assert_ne!(a, b);
        assert_eq!(a, c);
    }
}
