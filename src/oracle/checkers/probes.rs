//! Probes: only against containers that ran (and never a success against one not
//! running), at most one more after the workers were told to stop, and readiness kept up
//! while a pod terminates.

use super::{crashed, record_removed, topic, Checker, PerPod};
use crate::model::{PodUid, ProbeType, ProbeVerdict, ProbeWorkerStep, SyncStepKind, Transition};
use crate::oracle::facts::{Facts, PodFacts};
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, V121_V125, V125};
use crate::oracle::ring::Sym;
use crate::sim::SimTime;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::NoProbeAfterTermination,
        Invariant {
            name: "no-probe-after-termination",
            id: "S8",
            kind: Kind::Safety,
            meaning: "after SyncTerminatingPod set the pod's status (where StopLivenessAndStartup follows) a liveness/startup worker runs at most one more probe (one already past its select); after RemovePod every worker runs at most one more",
            bound: "",
            source: "pkg/kubelet/prober/prober_manager.go, worker.go (PR 110191, issue 110309); race catalog 10",
            profiles: V125,
        },
    ),
    (
        Inv::ReadinessDuringTermination,
        Invariant {
            name: "readiness-during-termination",
            id: "C10, L12",
            kind: Kind::Safety,
            meaning: "while a pod terminates, the readiness worker of a running container is not stopped before the kill completed (RemovePod), unless the kubelet's own phase for the pod is already terminal (eviction, node shutdown: issue 124648, open upstream)",
            bound: "",
            source: "pkg/kubelet/kubelet.go SyncTerminatingPod, prober/prober_manager.go (PR 110191, issue 110309); race catalog 10 (ii); podsim L12: readiness is reported during termination, as the worker keeps running until RemovePod",
            profiles: V121_V125,
        },
    ),
    (
        Inv::ProbesOnlyRunningContainers,
        Invariant {
            name: "probes-only-running-containers",
            id: "S9",
            kind: Kind::Safety,
            meaning: "a probe runs only against a container that has been seen running, and a probe of a container that is not running (ground truth) never succeeds (an exited container yields Failure; the restart half is no-restart-after-termination)",
            bound: "",
            source: "pkg/kubelet/prober/worker.go doProbe (non-running containers are not probed), prober/prober.go",
            profiles: ALL,
        },
    ),
];

/// What the probe workers of one worker record were told, and a cache of S9's check:
/// 32 bytes per pod, the one record a quiet probe reads (the rare per-container counts of
/// S8 live in [`Probes::after_stop`]).
#[derive(Clone, Copy, Debug)]
struct Stops {
    /// Per probe kind (a worker each, each with its own copy of the container's name): the
    /// address of the shared name (`Arc<str>`) of the probe of that kind that last
    /// confirmed [`Stops::running`], 0 when none. A probe that carries the same allocation
    /// names the same container, found without interning its name. [`Probes::names`]
    /// holds a clone of that `Arc`, so the allocation cannot be freed and its address
    /// reused for another text while it is recorded here.
    addr: [usize; 3],
    /// S9's cache: the interned name of a container of the pod that has an instance
    /// running (ground truth) as [`target_check`] last found it, else [`Sym::NONE`].
    /// Containers start running but stop only by exiting: it is forgotten when one of the
    /// pod's containers exits.
    running: Sym,
    /// What the pod's probe workers were told, a bit each: [`Stops::LVS_STOPPED`],
    /// [`Stops::STATUS_SET`], [`Stops::REMOVED`] (0: nothing, the common case, tested
    /// with one comparison on every probe).
    told: u8,
}

impl Stops {
    /// StopLivenessAndStartup ran.
    const LVS_STOPPED: u8 = 1;
    /// SyncTerminatingPod set the pod's status (where v1.31 stops liveness and startup
    /// probes; the same instant as `LVS_STOPPED` there).
    const STATUS_SET: u8 = 2;
    /// RemovePod ran.
    const REMOVED: u8 = 4;

    /// Have the workers of probes of `kind` been told to stop?
    fn stopped(self, kind: ProbeType) -> bool {
        let lvs = self.told & (Stops::LVS_STOPPED | Stops::STATUS_SET) != 0;
        self.told & Stops::REMOVED != 0 || (lvs && kind != ProbeType::Readiness)
    }

    /// S9's cache is stale (a container of the pod exited): no container is known running,
    /// and no name is recognised by its address.
    fn forget_running(&mut self) {
        self.running = Sym::NONE;
        self.addr = [0; 3];
    }
}

impl Default for Stops {
    fn default() -> Self {
        Stops {
            addr: [0; 3],
            running: Sym::NONE,
            told: 0,
        }
    }
}

const _: () = assert!(std::mem::size_of::<Stops>() == 32);

/// Probes per (pod, container, kind) after that kind's workers were told to stop (S8).
type AfterStop = BTreeMap<(PodUid, String, ProbeType), u32>;

/// A probe after its kind's workers were told to stop: the second one is a finding.
/// (Out of line: the common case, a probe of a pod not stopping, never gets here.)
#[cold]
#[inline(never)]
fn after_stop_probe(
    counts: &mut AfterStop,
    at: SimTime,
    uid: PodUid,
    container: &str,
    kind: ProbeType,
    facts: &Facts,
    out: &mut Findings,
) {
    let n = counts
        .entry((uid, container.to_string(), kind))
        .or_insert(0);
    *n += 1;
    let n = *n;
    if n > 1 {
        let when = if kind == ProbeType::Readiness {
            "RemovePod"
        } else {
            "StopLivenessAndStartup"
        };
        out.report(
            facts,
            Inv::NoProbeAfterTermination,
            Some(uid),
            at,
            format_args!("{kind} probe of container {container} ran {n} times after {when}"),
        );
    }
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Probes {
    stops: PerPod<Stops>,
    /// Per pod (by UID) and probe kind, the shared name whose address [`Stops::addr`]
    /// holds, kept alive by this clone; read only in debug builds, written on the full
    /// probe path. Pods never probed leave it short.
    names: Vec<[Option<Arc<str>>; 3]>,
    /// S8's counts (only pods whose workers were told to stop have any).
    after_stop: AfterStop,
    /// Tests only: a container's exit leaves S9's cache as it was (the update a cache
    /// bug would skip), so a test can show the debug checks catch a stale cache.
    #[cfg(test)]
    pub(crate) skip_exit_update: bool,
}

impl Checker for Probes {
    const TOPICS: u32 = topic::PROBE
        | topic::CONTAINER_EXITED
        | topic::PROBE_WORKER
        | topic::SYNC_STEP
        | topic::WORKER
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::SyncStep { uid, step } => {
                let s = self.stops.at(*uid);
                match *step {
                    SyncStepKind::StatusSet => s.told |= Stops::STATUS_SET,
                    SyncStepKind::ProbesStopped => s.told |= Stops::LVS_STOPPED,
                    SyncStepKind::ProbesRemoved => s.told |= Stops::REMOVED,
                    _ => {}
                }
            }
            Transition::Probe {
                uid,
                container,
                kind,
                result,
            } => self.probe(at, *uid, container, *kind, *result, facts, out),
            Transition::ContainerExited { uid, .. } => {
                #[cfg(test)]
                if self.skip_exit_update {
                    return;
                }
                // The pod's running containers changed: S9's cache is stale.
                if let Some(s) = self.stops.get_mut(*uid) {
                    s.forget_running();
                }
            }
            Transition::ProbeWorker {
                uid,
                container,
                kind: ProbeType::Readiness,
                what: ProbeWorkerStep::Stopped,
            } => self.readiness_stopped(at, *uid, container, facts, out),
            _ if crashed(tr) => {
                self.stops.reset_all();
                self.names.clear();
                self.after_stop.clear();
            }
            _ => {
                if let Some(uid) = record_removed(tr) {
                    self.stops.reset(uid);
                    if let Some(n) = self.names.get_mut(uid.0 as usize) {
                        *n = Default::default();
                    }
                    if !self.after_stop.is_empty() {
                        self.after_stop.retain(|k, _| k.0 != uid);
                    }
                }
            }
        }
    }
}

impl Probes {
    /// A probe of `uid`'s container shared as `container` needs no check: S9's cache
    /// says an instance of it runs (the probe carries the very allocation the cache was
    /// confirmed with), and the pod's workers were told nothing (S8). The container's
    /// interned name, else `None`. One record read, no call; changes nothing.
    #[inline(always)]
    pub(crate) fn quiet(&self, uid: PodUid, container: &Arc<str>, kind: ProbeType) -> Option<Sym> {
        let s = self.stops.get(uid)?;
        if s.addr[kind as usize] == container.as_ptr() as usize && s.told == 0 {
            // Debug builds: the address is backed by the kept clone, and names `running`.
            #[cfg(debug_assertions)]
            assert!(
                s.running != Sym::NONE
                    && self
                        .names
                        .get(uid.0 as usize)
                        .is_some_and(|n| n[kind as usize]
                            .as_ref()
                            .is_some_and(|n| Arc::ptr_eq(n, container))),
                "S9's cache of {uid}: address of {container} not kept"
            );
            Some(s.running)
        } else {
            None
        }
    }

    /// A probe ran (S9, then S8). Inlined into the oracle's probe path.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn probe(
        &mut self,
        at: SimTime,
        uid: PodUid,
        shared: &Arc<str>,
        kind: ProbeType,
        result: ProbeVerdict,
        facts: &Facts,
        out: &mut Findings,
    ) {
        let container: &str = shared;
        let s = self.stops.at(uid);
        let name = facts.container;
        if s.running == name {
            // An instance of it ran and one still runs: S9 holds whatever the result.
            #[cfg(debug_assertions)]
            assert!(
                runs_now(facts.pod(uid), name) == (true, true),
                "S9's cache of {uid}: container {container} has no instance running"
            );
        } else if target_check(at, uid, container, kind, result, facts, out) {
            // Another container: the addresses were those of the last one's names.
            s.forget_running();
            s.running = name;
        }
        // The cache holds: the next probe of this kind carrying this allocation is
        // recognised by its address (see [`Probes::quiet`]).
        let k = kind as usize;
        if s.running == name && s.addr[k] != shared.as_ptr() as usize {
            s.addr[k] = shared.as_ptr() as usize;
            keep_name(&mut self.names, uid, kind, shared);
        }
        // S8: probes after the workers of the probe's kind were told to stop (a pod's
        // workers told nothing, the common case, is one comparison).
        if s.told != 0 && s.stopped(kind) {
            after_stop_probe(&mut self.after_stop, at, uid, container, kind, facts, out);
        }
    }

    /// A readiness worker exited: while the pod terminates, not before its kill completed
    /// if its container still runs (unless the kubelet's phase is already terminal).
    fn readiness_stopped(
        &self,
        at: SimTime,
        uid: PodUid,
        container: &str,
        facts: &Facts,
        out: &mut Findings,
    ) {
        let p = facts.pod(uid);
        let terminating = p.inc.saw_delete_at.is_some() || p.inc.term_requested_at.is_some();
        let runs = p
            .instances
            .iter()
            .any(|i| i.name == facts.container && i.exit.is_none() && p.running.contains(&i.id));
        let removed = self
            .stops
            .get(uid)
            .is_some_and(|s| s.told & Stops::REMOVED != 0);
        if !terminating || !runs || removed || p.inc.local_terminal {
            return;
        }
        out.report(
            facts,
            Inv::ReadinessDuringTermination,
            Some(uid),
            at,
            format_args!("the readiness worker of container {container} stopped while the pod was terminating and the container still ran (its readiness is no longer reported)"),
        );
    }
}

/// Keep a clone of `shared` as pod `uid`'s entry of [`Probes::names`] for probes of
/// `kind` (growing it).
#[cold]
#[inline(never)]
fn keep_name(
    names: &mut Vec<[Option<Arc<str>>; 3]>,
    uid: PodUid,
    kind: ProbeType,
    shared: &Arc<str>,
) {
    let i = uid.0 as usize;
    if names.len() <= i {
        names.resize_with(i + 1, Default::default);
    }
    names[i][kind as usize] = Some(shared.clone());
}

/// Has an instance of the container named `name` run, and does one run now (ground truth)?
#[inline]
pub(crate) fn runs_now(p: &PodFacts, name: Sym) -> (bool, bool) {
    let mut ever = false;
    for i in p.instances.iter().filter(|i| i.name == name) {
        ever = true;
        if p.running.contains(&i.id) {
            return (true, true);
        }
    }
    (ever, false)
}

/// S9: a probe of `container` runs only when an instance of it has run, and does not
/// succeed while none runs (ground truth). `facts.container` is its name, interned.
/// Whether an instance of it runs.
#[inline]
fn target_check(
    at: SimTime,
    uid: PodUid,
    container: &str,
    kind: ProbeType,
    result: ProbeVerdict,
    facts: &Facts,
    out: &mut Findings,
) -> bool {
    let (ever, runs) = runs_now(facts.pod(uid), facts.container);
    if !ever || (!runs && result == ProbeVerdict::Success) {
        target_finding(at, uid, container, kind, ever, facts, out);
    }
    runs
}

/// The S9 finding of [`target_check`] (`ever`: an instance of the container has run).
#[cold]
#[inline(never)]
fn target_finding(
    at: SimTime,
    uid: PodUid,
    container: &str,
    kind: ProbeType,
    ever: bool,
    facts: &Facts,
    out: &mut Findings,
) {
    let what = if !ever {
        format!("a {kind} probe ran against container {container}, which has never run")
    } else {
        format!("a {kind} probe of container {container} succeeded while no instance of it runs")
    };
    out.report(
        facts,
        Inv::ProbesOnlyRunningContainers,
        Some(uid),
        at,
        format_args!("{}", what),
    );
}

#[cfg(test)]
#[path = "probes_tests.rs"]
mod tests;
