//! Graceful node shutdown: groups in ascending priority, each only after the previous
//! one's kills returned or its period elapsed, every kill done by the group's deadline,
//! killed pods Failed, no pod added after the start run, the node NotReady promptly and
//! the whole shutdown within the sum of its periods.

use super::{crashed, topic, Checker, PerPod, STEP_SLACK};
use crate::model::{
    ConfigOpKind, CriOp, KillPodNowStep, PodUid, ShutdownStep, SyncStepKind, Transition, WorkerStep,
};
use crate::oracle::facts::Facts;
use crate::oracle::findings::{t, Findings};
use crate::oracle::invariants::{Inv, Invariant, Kind, ALL, NONE, V121_V125};
use crate::sim::{Dur, SimTime};

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::ShutdownGroupOrder,
        Invariant {
            name: "shutdown-group-order",
            id: "S16",
            kind: Kind::Safety,
            meaning: "graceful node shutdown kills groups in ascending priority, a group only after every kill of the previous one returned or its period elapsed; no pod added after the shutdown started is run",
            bound: "",
            source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent, Admit (KEP 2712); race catalog 9",
            profiles: ALL,
        },
    ),
    (
        Inv::ShutdownKillsDoneAtGroupDeadline,
        Invariant {
            name: "shutdown-kills-done-at-group-deadline",
            id: "C9",
            kind: Kind::Safety,
            meaning: "every kill a graceful node shutdown started for a priority group has completed (its killPodNow channel closed: the pod worker reached Terminated) when the next group starts or the inhibitor lock is released",
            bound: "",
            source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (issues 108040, 109531, 110755; PR 108193 fixed only the test); race catalog 9 (a), (b); held by no release",
            profiles: NONE,
        },
    ),
    (
        Inv::ShutdownPodsFailed,
        Invariant {
            name: "shutdown-pods-failed",
            id: "C8",
            kind: Kind::Safety,
            meaning: "a pod the graceful node shutdown manager kills gets phase Failed (unless it had Succeeded) in the status SyncTerminatingPod sets",
            bound: "",
            source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (PRs 106899, 106900, 106901; issue 104531); race catalog 8",
            profiles: V121_V125,
        },
    ),
    (
        Inv::NodeShutdownCompletes,
        Invariant {
            name: "node-shutdown-completes",
            id: "L10",
            kind: Kind::Liveness,
            meaning: "a graceful node shutdown releases the inhibitor lock (or the node powers off) within the sum of its group periods",
            bound: "each group starts by the previous group's start + its period, the lock is released by the last group's start + its period (so within the sum of the periods of the groups with pods), + 1 s; not checked once the shutdown was cancelled or the kubelet crashed",
            source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (KEP 2712)",
            profiles: ALL,
        },
    ),
    (
        Inv::NotReadyAfterShutdownStart,
        Invariant {
            name: "not-ready-after-shutdown-start",
            id: "C13",
            kind: Kind::Liveness,
            meaning: "once a graceful node shutdown starts, the kubelet reports the node NotReady promptly",
            bound: "10 s (nodeStatusUpdateFrequency; v1.31 syncs the node status at once) after PrepareForShutdown(true), checked up to the power-off; not checked once the shutdown was cancelled or the kubelet crashed",
            source: "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go processShutdownEvent (setNodeShutdownStatus, syncNodeStatus), kubelet_node_status.go; race catalog checklist 13",
            profiles: ALL,
        },
    ),
];

/// The node is reported NotReady this soon after a graceful shutdown starts.
const NOT_READY_BOUND: Dur = Dur::secs(10);

/// One priority group of a graceful node shutdown.
#[derive(Clone, Debug)]
struct Group {
    priority: i32,
    period_s: i64,
    start: SimTime,
    /// killPodNow channels requested for this group, and whether each returned.
    kills: Vec<(u64, bool)>,
    /// Kills of this group whose channel has not closed yet.
    open: Vec<(u64, PodUid)>,
}

/// What the current kubelet process did to one pod for the shutdown.
#[derive(Clone, Copy, Debug, Default)]
struct PodShutdown {
    /// Added to the config after the shutdown started.
    added_after_shutdown: bool,
    /// The node shutdown manager asked to kill the pod.
    killed: bool,
    /// The latest SyncTerminatingPod began after that request (its status function
    /// applies there).
    fn_applies: bool,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct Shutdown {
    pods: PerPod<PodShutdown>,
    group: Option<Group>,
    /// A graceful shutdown is under way: by when the next group or the lock release is due
    /// (L10).
    due: Option<SimTime>,
    /// The shutdown started and the node was not yet reported NotReady: since when (C13).
    not_ready_due_since: Option<SimTime>,
}

impl Shutdown {
    /// What a transition of `uid` could change here, as text: debug builds compare it
    /// around a transition the oracle's direct paths do not show this checker.
    #[cfg(debug_assertions)]
    pub(crate) fn fingerprint(&self, uid: PodUid) -> String {
        format!(
            "{:?} {:?} {:?} {:?}",
            self.pods.get(uid),
            self.group,
            self.due,
            self.not_ready_due_since
        )
    }
}

impl Checker for Shutdown {
    const TOPICS: u32 = topic::CONFIG_OP
        | topic::CRI_BEGIN
        | topic::KILL_POD_NOW
        | topic::NODE_READY
        | topic::POWER_OFF
        | topic::SHUTDOWN
        | topic::SHUTDOWN_GROUP
        | topic::SYNC_BEGIN
        | topic::SYNC_STEP
        | topic::WORKER
        | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::ConfigOp {
                uid,
                op: ConfigOpKind::Add | ConfigOpKind::AddFile,
            } if !facts.before.inc.config_known && facts.node.shutdown_started.is_some() => {
                self.pods.at(*uid).added_after_shutdown = true;
            }
            Transition::CriBegin {
                uid,
                call: call @ (CriOp::RunPodSandbox | CriOp::CreateContainer | CriOp::StartContainer),
                ..
            } if self.pods.get(*uid).is_some_and(|p| p.added_after_shutdown) => {
                out.report(
                    facts,
                    Inv::ShutdownGroupOrder,
                    Some(*uid),
                    at,
                    format_args!("{call} began for a pod the kubelet first saw after the node shutdown started (it must be rejected)"),
                );
            }
            Transition::SyncBegin { uid, kind, .. } if kind.is_terminating() => {
                let p = self.pods.at(*uid);
                p.fn_applies = p.killed;
            }
            Transition::SyncStep {
                uid,
                step: SyncStepKind::StatusSet,
            } => self.status_check(at, *uid, facts, out),
            Transition::Worker {
                uid,
                what: WorkerStep::RuntimePodRecordRemoved,
            } => {
                // A kill queued on an orphaned runtime pod's worker record goes with the
                // record when that termination completes (v1.31
                // `completeTerminatingRuntimePod` in `pkg/kubelet/pod_workers.go` deletes
                // the record with its pending update), status function included: the
                // pod's next termination is not the shutdown manager's.
                let p = self.pods.at(*uid);
                p.killed = false;
                p.fn_applies = false;
            }
            Transition::KillPodNow {
                uid,
                ch,
                what,
                evict,
            } => self.kill_pod_now(*uid, *ch, *what, *evict),
            Transition::PowerOff { .. } => {
                if self.due.take().is_some() {
                    out.checked(Inv::NodeShutdownCompletes);
                }
                self.not_ready_check(at, facts, out);
                self.not_ready_due_since = None;
            }
            Transition::Shutdown { what } => self.step(at, *what, facts, out),
            Transition::ShutdownGroup {
                priority, period_s, ..
            } => {
                if let Some(due) = self.due {
                    let what = format!("group priority {priority} started");
                    due_check(at, due, &what, facts, out);
                    self.due = Some(at + Dur::secs((*period_s).max(0) as u64));
                }
                self.group_started(at, *priority, *period_s, facts, out)
            }
            Transition::NodeReady { ready: false } if self.not_ready_due_since.is_some() => {
                self.not_ready_due_since = None;
                out.checked(Inv::NotReadyAfterShutdownStart);
            }
            _ if crashed(tr) => {
                self.group = None;
                self.due = None;
                self.not_ready_due_since = None;
                self.pods.reset_all();
            }
            _ => {}
        }
    }

    fn finish_node(&mut self, end: SimTime, facts: &Facts, out: &mut Findings) {
        if facts.node.kubelet_down {
            return;
        }
        self.not_ready_check(end, facts, out);
        if facts.node.power_off_at.is_some() {
            return;
        }
        if let Some(due) = self.due {
            if due + STEP_SLACK <= end {
                out.checked(Inv::NodeShutdownCompletes);
                out.report(
                    facts,
                    Inv::NodeShutdownCompletes,
                    None,
                    end,
                    format_args!("the graceful node shutdown's next step was due by {} and has not come by {}", t(due), t(end)),
                );
            }
        }
    }
}

impl Shutdown {
    fn step(&mut self, at: SimTime, what: ShutdownStep, facts: &Facts, out: &mut Findings) {
        match what {
            ShutdownStep::PrepareForShutdown {
                shutting_down: true,
            } if facts.before.shutdown_started.is_none() => {
                self.due = Some(at);
                self.not_ready_due_since = Some(at);
            }
            ShutdownStep::PrepareForShutdown {
                shutting_down: false,
            } => {
                self.due = None;
                self.not_ready_due_since = None;
            }
            ShutdownStep::Processed { .. } => {
                let released = "the inhibitor lock was released";
                if let Some(due) = self.due.take() {
                    due_check(at, due, released, facts, out);
                    out.checked(Inv::NodeShutdownCompletes);
                }
                if let Some(g) = self.group.take() {
                    kills_left_open(at, &g, released, facts, out);
                }
            }
            _ => {}
        }
    }

    fn kill_pod_now(&mut self, uid: PodUid, ch: u64, what: KillPodNowStep, evict: bool) {
        match what {
            KillPodNowStep::Requested if !evict => {
                if let Some(g) = self.group.as_mut() {
                    self.pods.at(uid).killed = true;
                    g.kills.push((ch, false));
                    g.open.push((ch, uid));
                }
            }
            KillPodNowStep::Closed => {
                if let Some(g) = self.group.as_mut() {
                    g.open.retain(|(c, _)| *c != ch);
                }
            }
            KillPodNowStep::Returned | KillPodNowStep::TimedOut => {
                if let Some(g) = self.group.as_mut() {
                    for k in &mut g.kills {
                        if k.0 == ch {
                            k.1 = true;
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// SyncTerminatingPod set the status of a pod the shutdown manager kills: Failed,
    /// unless it had Succeeded.
    fn status_check(&self, at: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        let p = facts.pod(uid);
        let applies = self.pods.get(uid).is_some_and(|p| p.fn_applies);
        // The status manager may hold nothing for the pod: this kubelet incarnation's writes
        // were all rejected (v1.31 `checkContainerStateTransition` in
        // `pkg/kubelet/status/status_manager.go`: a terminated container of a Never pod would
        // become waiting). Then the pod's phase is the API's, which stays as it was.
        let (phase, what) = match p.inc.local_phase {
            Some(phase) => (phase, "set phase"),
            None => (
                p.api_phase,
                "had its status write rejected; the API phase stays",
            ),
        };
        if !applies || phase.is_terminal() {
            return;
        }
        out.report(
            facts,
            Inv::ShutdownPodsFailed,
            Some(uid),
            at,
            format_args!("SyncTerminatingPod of a pod killed by the node shutdown manager {what} {phase} (want Failed unless Succeeded)"),
        );
    }

    /// The node was not reported NotReady within 10 s of the shutdown's start (C13).
    fn not_ready_check(&mut self, at: SimTime, facts: &Facts, out: &mut Findings) {
        if let Some(since) = self.not_ready_due_since {
            if at >= since + NOT_READY_BOUND {
                self.not_ready_due_since = None;
                out.checked(Inv::NotReadyAfterShutdownStart);
                out.report(
                    facts,
                    Inv::NotReadyAfterShutdownStart,
                    None,
                    at,
                    format_args!(
                        "the graceful node shutdown started at {}, yet the node was not reported NotReady within {}s",
                        t(since),
                        NOT_READY_BOUND.whole_secs()
                    ),
                );
            }
        }
    }

    fn group_started(
        &mut self,
        at: SimTime,
        priority: i32,
        period_s: i64,
        facts: &Facts,
        out: &mut Findings,
    ) {
        if let Some(g) = self.group.take() {
            let what = format!("group priority {priority} started");
            kills_left_open(at, &g, &what, facts, out);
            let elapsed = at >= g.start + Dur::secs(g.period_s.max(0) as u64);
            let open = g.kills.iter().filter(|(_, done)| !done).count();
            if priority <= g.priority {
                out.report(
                    facts,
                    Inv::ShutdownGroupOrder,
                    None,
                    at,
                    format_args!(
                        "group priority {priority} started after group priority {}",
                        g.priority
                    ),
                );
            }
            if !elapsed && open > 0 {
                out.report(
                    facts,
                    Inv::ShutdownGroupOrder,
                    None,
                    at,
                    format_args!(
                        "group priority {priority} started {} after group priority {} (period {}s) with {open} of its kills not returned",
                        t(SimTime(at.0 - g.start.0)),
                        g.priority,
                        g.period_s
                    ),
                );
            }
        }
        self.group = Some(Group {
            priority,
            period_s,
            start: at,
            kills: Vec::new(),
            open: Vec::new(),
        });
    }
}

/// The next shutdown step (`what`) came at `at`; it was due by `due` (L10).
fn due_check(at: SimTime, due: SimTime, what: &str, facts: &Facts, out: &mut Findings) {
    if at > due + STEP_SLACK {
        out.report(
            facts,
            Inv::NodeShutdownCompletes,
            None,
            at,
            format_args!(
                "{what} at {}, later than the previous step's deadline {} (+{}s)",
                t(at),
                t(due),
                STEP_SLACK.whole_secs()
            ),
        );
    }
}

/// Kills of group `g` still in flight when `when`.
fn kills_left_open(at: SimTime, g: &Group, when: &str, facts: &Facts, out: &mut Findings) {
    for (ch, uid) in &g.open {
        out.report(
            facts,
            Inv::ShutdownKillsDoneAtGroupDeadline,
            Some(*uid),
            at,
            format_args!(
                "the node-shutdown kill (channel {ch}) of group priority {} was still in flight when {when}, {} after the group started (period {}s)",
                g.priority,
                t(SimTime(at.0 - g.start.0)),
                g.period_s
            ),
        );
    }
}

#[cfg(test)]
#[path = "shutdown_tests.rs"]
mod tests;
