//! The graceful node shutdown manager: holds a logind delay inhibitor lock, and on
//! `PrepareForShutdown(true)` marks the node NotReady, rejects new pods and kills the
//! active pods group by group in ascending priority before releasing the lock.
//!
//! Follows `pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go` (v1.31: `NewManager`,
//! `migrateConfig`, `groupByPriority`, `periodRequested`, `start`, `acquireInhibitLock`,
//! `Admit`, `processShutdownEvent`) and `killPodNow` from `pkg/kubelet/pod_workers.go`
//! (in `pod_workers.rs`). Behaviour is that of the `current` profile: killed pods get
//! phase Failed (unless Succeeded), reason `Terminated` (PRs 106899/106900/106901); with
//! the switch `shutdownSetsFailedPhase` off (v1.22.0-v1.23.0, race catalog 8, issue 104531)
//! the kill's status function sets only reason and message.
//!
//! As in v1.31, a group ends when every `killPodNow` call of the group has returned or
//! the group's period has passed, whichever comes first; kills still running at the
//! deadline are neither waited for nor cancelled (the behaviour behind kubernetes issue
//! 108040 and PR 108193), and after the last group the lock is released at once, so
//! status writes still queued in the status manager can be lost at power-off (issues
//! 109531, 112443). Later upstream (the `podManager` split) adds a context cancelled at the
//! deadline, but it only bounds the wait for volume unmounts; the kills still run on.
//!
//! Behaviour switch `shutdownCancelsKillsAtGroupDeadline` (race catalog 9), on in no
//! profile: when on, a group ends only once every kill of it completed (the pod worker
//! reached Terminated), so no kill outlives its group into the next group or past the lock
//! release. It is the change the issue threads ask for, not an upstream release.
//!
//! Where it deliberately differs:
//! * Goroutines become events: each `killPodNow` caller's wait is a channel number plus
//!   a timeout timer (`KEv::KillPodNowReturned`), the group timer is
//!   `KEv::ShutdownGroupDeadline`. The kill calls of a group are issued in UID order
//!   (upstream starts one goroutine per pod; each pod has its own worker, so the order of
//!   the `UpdatePod` calls only matters through the scheduler's order of their wake-ups).
//! * logind is `world::node`: the `InhibitDelayMaxSec` check, drop-in override and reload
//!   are folded into the lock request (logind starts with the total period), and D-Bus
//!   calls take no time. The D-Bus reconnect loop, the SIGUSR1 trigger, the shutdown
//!   state file, metrics, events, the `DisruptionTarget` condition and the Windows
//!   manager are not modelled.
//! * The node Ready condition is internal state and a trace transition (node objects are
//!   not modelled); `syncNodeStatus` is immediate.
//! * The feature gates are taken as on (their v1.31 defaults).
//!
//! With the switch `shutdownKillsByPriorityGroups` off (v1.21, v1.22) the manager of
//! those releases runs instead: `nodeshutdown_v122.rs`.

use super::pod_workers::StatusFn;
use super::profile::Sw;
use super::Kubelet;
use crate::kubelet::Ctx;
use crate::model::reach::Reach;
use crate::model::{ApiPod, PodUid, Transition};
use crate::model::{RejectReason, ShutdownStep};
use crate::scenario::KubeletConfig;
use crate::sim::{Dur, TimerKey};
use std::collections::BTreeSet;
use std::sync::Arc;

/// `scheduling.SystemCriticalPriority`.
pub(crate) const SYSTEM_CRITICAL_PRIORITY: i32 = 2_000_000_000;
/// `scheduling.DefaultPriorityWhenNoDefaultClassExists`.
pub(crate) const DEFAULT_PRIORITY: i32 = 0;
/// Reason and message of a pod killed by the manager.
pub(crate) const NODE_SHUTDOWN_REASON: &str = "Terminated";
pub(crate) const NODE_SHUTDOWN_MESSAGE: &str =
    "Pod was terminated in response to imminent node shutdown.";
/// Message of a pod rejected at admission while the node shuts down (its reason is
/// `RejectReason::NodeShutdown`).
pub(crate) const NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE: &str =
    "Pod was rejected as the node is shutting down.";

/// `shutdownCancelsKillsAtGroupDeadline`: how often the manager re-checks the kills it
/// waits for after a group's deadline (a model choice; the switch is on in no release).
pub(crate) const JOIN_POLL: Dur = Dur::millis(100);

/// `ShutdownGracePeriodByPodPriority`: one priority group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ShutdownGroup {
    pub(crate) priority: i32,
    pub(crate) period_s: i64,
}

/// `migrateConfig`: the two legacy durations as two groups (truncated to whole seconds).
pub(crate) fn migrate_config(requested: Dur, critical: Dur) -> Vec<ShutdownGroup> {
    if requested == Dur::ZERO || critical > requested {
        return Vec::new();
    }
    let default_s = (requested.0 - critical.0) / Dur::secs(1).0;
    let critical_s = critical.0 / Dur::secs(1).0;
    vec![
        ShutdownGroup {
            priority: DEFAULT_PRIORITY,
            period_s: default_s as i64,
        },
        ShutdownGroup {
            priority: SYSTEM_CRITICAL_PRIORITY,
            period_s: critical_s as i64,
        },
    ]
}

/// The groups `NewManager` ends up with, sorted by priority (stable, as `sort.Slice` on
/// distinct priorities).
pub(crate) fn shutdown_groups(c: &KubeletConfig) -> Vec<ShutdownGroup> {
    let mut groups: Vec<ShutdownGroup> = if c.shutdown_grace_period_by_pod_priority.is_empty() {
        migrate_config(
            c.shutdown_grace_period,
            c.shutdown_grace_period_critical_pods,
        )
    } else {
        c.shutdown_grace_period_by_pod_priority
            .iter()
            .map(|&(priority, period_s)| ShutdownGroup { priority, period_s })
            .collect()
    };
    groups.sort_by_key(|g| g.priority);
    groups
}

/// `periodRequested`: the sum of the group periods.
pub(crate) fn period_requested(groups: &[ShutdownGroup]) -> Dur {
    Dur::secs(groups.iter().map(|g| g.period_s.max(0) as u64).sum())
}

/// `groupByPriority`'s choice for one pod: the group with the largest priority not above
/// the pod's; pods below the lowest group go to the lowest, above the highest to the
/// highest.
pub(crate) fn group_index(groups: &[ShutdownGroup], priority: i32) -> usize {
    let i = groups.partition_point(|g| g.priority < priority);
    if i == groups.len() {
        groups.len() - 1
    } else if i > 0 && groups[i].priority > priority {
        i - 1
    } else {
        i
    }
}

/// The group being killed.
#[derive(Clone, Debug)]
struct CurrentGroup {
    index: usize,
    group: ShutdownGroup,
    /// Every kill of the group: (channel, pod).
    kills: Vec<(u64, PodUid)>,
    /// `killPodNow` calls that have not returned yet.
    waiting: BTreeSet<u64>,
    timer: TimerKey,
    /// `shutdownCancelsKillsAtGroupDeadline`: the deadline passed and the manager waits
    /// for the group's kills still in flight.
    joining: bool,
}

/// `processShutdownEvent` in progress.
#[derive(Clone, Debug)]
struct Processing {
    /// The groups with the active pods sampled at the start.
    groups: Vec<(ShutdownGroup, Vec<Arc<ApiPod>>)>,
    next: usize,
    current: Option<CurrentGroup>,
}

/// The manager's state (`managerImpl`).
#[derive(Clone, Debug)]
pub(crate) struct ShutdownManager {
    /// The run's behaviour switches (set by [`crate::kubelet::Kubelet::new`]).
    pub(crate) b: crate::kubelet::profile::Behaviours,
    /// Sorted by priority; empty for the stub manager.
    pub(crate) groups: Vec<ShutdownGroup>,
    /// The delay lock held, if any.
    pub(crate) inhibit_lock: Option<u64>,
    next_lock: u64,
    /// `nodeShuttingDownNow`.
    pub(crate) shutting_down_now: bool,
    /// The node's Ready condition as the kubelet reports it.
    pub(crate) node_ready: bool,
    processing: Option<Processing>,
    /// `shutdownGracePeriod` and `shutdownGracePeriodCriticalPods` as configured (the
    /// v1.22 manager uses them directly, see `nodeshutdown_v122.rs`).
    pub(crate) legacy_periods: (Dur, Dur),
    /// The v1.22 manager's `processShutdownEvent` in progress.
    pub(crate) two_class: Option<super::nodeshutdown_v122::TwoClassRun>,
}

impl ShutdownManager {
    pub(crate) fn new(c: &KubeletConfig) -> Self {
        ShutdownManager {
            b: Default::default(),
            groups: shutdown_groups(c),
            inhibit_lock: None,
            next_lock: 1,
            shutting_down_now: false,
            node_ready: true,
            processing: None,
            legacy_periods: (
                c.shutdown_grace_period,
                c.shutdown_grace_period_critical_pods,
            ),
            two_class: None,
        }
    }

    /// The real manager runs only with a positive total period; otherwise upstream's
    /// stub: no lock, shutdown is immediate.
    pub(crate) fn active(&self) -> bool {
        period_requested(&self.groups) > Dur::ZERO
    }

    /// `ShutdownStatus() != nil`.
    pub(crate) fn shutting_down(&self) -> bool {
        self.shutting_down_now
    }
}

impl Kubelet {
    /// `Start`: take the delay inhibitor lock and watch for `PrepareForShutdown`.
    pub(super) fn shutdown_start(&mut self, ctx: &mut Ctx) {
        if !self.shutdown.active() {
            return;
        }
        self.acquire_inhibit_lock(ctx);
    }

    /// `acquireInhibitLock`: take a new lock, then drop the old one if any.
    fn acquire_inhibit_lock(&mut self, ctx: &mut Ctx) {
        let m = &mut self.shutdown;
        let lock = m.next_lock;
        m.next_lock += 1;
        ctx.logind_inhibit(lock, period_requested(&m.groups));
        if let Some(old) = m.inhibit_lock.replace(lock) {
            ctx.logind_release(old);
        }
        ctx.emit(Transition::Shutdown {
            what: ShutdownStep::DelayLockRequested { lock },
        });
    }

    /// The `Admit` of the shutdown manager: `Some((reason, message))` if a new pod must be
    /// rejected because the node is shutting down.
    pub(super) fn shutdown_admission_reason(&self) -> Option<(RejectReason, &'static str)> {
        self.shutdown.shutting_down().then_some((
            RejectReason::NodeShutdown,
            NODE_SHUTDOWN_NOT_ADMITTED_MESSAGE,
        ))
    }

    /// logind's `PrepareForShutdown` signal reached the manager's watch loop.
    pub(super) fn on_prepare_for_shutdown(&mut self, ctx: &mut Ctx, shutting_down: bool) {
        if !self.shutdown.active() {
            return; // the stub manager does not watch
        }
        ctx.emit(Transition::Shutdown {
            what: ShutdownStep::PrepareForShutdown { shutting_down },
        });
        self.shutdown.shutting_down_now = shutting_down;
        if !shutting_down {
            // Cancelled: take the lock again. The node turns Ready at its next status
            // update (immediate here).
            self.acquire_inhibit_lock(ctx);
            if !self.shutdown.node_ready {
                self.shutdown.node_ready = true;
                ctx.emit(Transition::NodeReady { ready: true });
            }
            return;
        }
        // syncNodeStatus: the Ready condition goes false.
        if self.shutdown.node_ready {
            self.shutdown.node_ready = false;
            ctx.emit(Transition::NodeReady { ready: false });
        }
        if self.shutdown.processing.is_some() || self.shutdown.two_class.is_some() {
            return; // upstream's watch loop is still inside processShutdownEvent
        }
        if !self.shutdown.b.on(Sw::ShutdownKillsByPriorityGroups) {
            self.v122_process_shutdown_event(ctx);
            return;
        }
        self.process_shutdown_event(ctx);
    }

    /// `processShutdownEvent`: sample the active pods, group them, start the first group.
    fn process_shutdown_event(&mut self, ctx: &mut Ctx) {
        let active = self.shutdown_active_pods();
        let mut groups: Vec<(ShutdownGroup, Vec<Arc<ApiPod>>)> = self
            .shutdown
            .groups
            .iter()
            .map(|g| (*g, Vec::new()))
            .collect();
        let cfg: Vec<ShutdownGroup> = self.shutdown.groups.clone();
        for pod in active {
            let i = group_index(&cfg, pod.spec.priority);
            groups[i].1.push(pod);
        }
        ctx.emit(Transition::Shutdown {
            what: ShutdownStep::Processing {
                pods: groups.iter().map(|g| g.1.len()).sum::<usize>(),
                groups: groups.len(),
            },
        });
        self.shutdown.processing = Some(Processing {
            groups,
            next: 0,
            current: None,
        });
        self.shutdown_next_group(ctx);
    }

    /// `GetActivePods` (`filterOutInactivePods`): pods in the pod manager, minus those the
    /// pod workers know as terminated and terminal ones not being terminated.
    pub(super) fn shutdown_active_pods(&self) -> Vec<Arc<ApiPod>> {
        self.config
            .pods
            .iter()
            .filter(|(uid, pod)| {
                if self.pw.is_pod_known_terminated(**uid) {
                    return false;
                }
                let terminal = self.phase_terminal(uid, pod);
                // Terminal pods are inactive unless being terminated.
                !terminal || self.pw.is_pod_termination_requested(**uid)
            })
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// The status function of a pod the manager kills.
    pub(super) fn shutdown_status_fn(&self) -> StatusFn {
        let (reason, message) = (NODE_SHUTDOWN_REASON.into(), NODE_SHUTDOWN_MESSAGE.into());
        if self.shutdown.b.on(Sw::ShutdownSetsFailedPhase) {
            // With PodDisruptionConditions (v1.26+) also DisruptionTarget (v1.31
            // `pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go`).
            StatusFn::FailedUnlessSucceeded {
                reason,
                message,
                disruption_target: self.shutdown.b.on(Sw::DisruptionTargetCondition),
            }
        } else {
            // v1.22.0-v1.23.0 (after PR 102344, before PRs 106899-106901): the phase is
            // left as computed from the containers (issue 104531).
            StatusFn::ReasonOnly { reason, message }
        }
    }

    /// Start the next group that has pods, or finish: release the inhibitor lock.
    fn shutdown_next_group(&mut self, ctx: &mut Ctx) {
        let Some(run) = self.shutdown.processing.as_mut() else {
            return;
        };
        while run.next < run.groups.len() && run.groups[run.next].1.is_empty() {
            run.next += 1; // no pods in this range: do not wait for it
        }
        if run.next == run.groups.len() {
            self.shutdown.processing = None;
            if let Some(lock) = self.shutdown.inhibit_lock.take() {
                ctx.logind_release(lock);
                ctx.emit(Transition::Shutdown {
                    what: ShutdownStep::Processed { lock },
                });
            }
            return;
        }
        let index = run.next;
        run.next += 1;
        let (group, pods) = run.groups[index].clone();
        ctx.emit(Transition::ShutdownGroup {
            priority: group.priority,
            period_s: group.period_s,
            pods: pods.len() as u32,
        });
        let mut kills = Vec::with_capacity(pods.len());
        for pod in pods {
            let mut grace = group.period_s;
            if let Some(t) = pod.spec.termination_grace_period_seconds {
                if t <= grace {
                    grace = t;
                }
            }
            // v1.23 and v1.24 stop the pod's probes first (PR 105215, until PR 110191).
            if self.b.on(Sw::ShutdownRemovesProbesBeforeKill) {
                self.probe_remove_pod(ctx, &pod);
            }
            let uid = pod.uid;
            let status_fn = self.shutdown_status_fn();
            ctx.reach(crate::model::reach::Reach::ShutdownKill);
            let ch = self.kill_pod_now(ctx, pod, false, Some(grace), Some(status_fn));
            kills.push((ch, uid));
        }
        let timer = ctx.after(
            Dur::secs(group.period_s.max(0) as u64),
            super::KEv::ShutdownGroupDeadline { group: index },
        );
        let waiting = kills.iter().map(|(ch, _)| *ch).collect();
        if let Some(run) = self.shutdown.processing.as_mut() {
            run.current = Some(CurrentGroup {
                index,
                group,
                kills,
                waiting,
                timer,
                joining: false,
            });
        }
    }

    /// Kills of the current group whose channel is still open.
    fn kills_in_flight(&self, g: &CurrentGroup) -> usize {
        g.kills
            .iter()
            .filter(|(ch, _)| !self.pw.closed_channels.contains(ch))
            .count()
    }

    /// A `killPodNow` call returned (channel closed or timed out).
    pub(super) fn shutdown_kill_returned(&mut self, ctx: &mut Ctx, ch: u64) {
        if self.shutdown.two_class.is_some() {
            self.v122_kill_returned(ctx, ch);
            return;
        }
        let Some(g) = self
            .shutdown
            .processing
            .as_mut()
            .and_then(|p| p.current.as_mut())
        else {
            return;
        };
        if !g.waiting.remove(&ch) || !g.waiting.is_empty() {
            return;
        }
        // With the switch on, a call that timed out does not end the group: the group's
        // timer (or the join's re-check) waits for the kill itself.
        let g = self
            .shutdown
            .processing
            .as_ref()
            .and_then(|p| p.current.as_ref());
        if self.shutdown.b.on(Sw::ShutdownCancelsKillsAtGroupDeadline)
            && g.is_some_and(|g| self.kills_in_flight(g) > 0)
        {
            return;
        }
        let g = self
            .shutdown
            .processing
            .as_mut()
            .and_then(|p| p.current.take())
            .expect("current group");
        ctx.cancel(g.timer);
        let in_flight = self.kills_in_flight(&g);
        ctx.emit(Transition::Shutdown {
            what: ShutdownStep::GroupReturned {
                priority: g.group.priority,
                kills: g.kills.len(),
                in_flight,
            },
        });
        self.shutdown_next_group(ctx);
    }

    /// The group timer fired.
    pub(super) fn shutdown_group_deadline(&mut self, ctx: &mut Ctx, index: usize) {
        let current = self
            .shutdown
            .processing
            .as_ref()
            .and_then(|p| p.current.as_ref());
        if current.is_none_or(|g| g.index != index) {
            return;
        }
        let g = current.expect("current group");
        let in_flight = self.kills_in_flight(g);
        if in_flight > 0 {
            ctx.reach(Reach::ShutdownDeadlineWithKillsInFlight);
        }
        if self.shutdown.b.on(Sw::ShutdownCancelsKillsAtGroupDeadline) {
            // Not upstream (no release does it): the deadline ends the group's kills
            // before the manager moves on. SyncTerminatingPod ignores its context (v1.31),
            // so a kill in flight cannot be cut short: the manager waits for it,
            // re-checking every JOIN_POLL.
            let first = !g.joining;
            let priority = g.group.priority;
            if in_flight > 0 {
                if first {
                    ctx.emit(Transition::Shutdown {
                        what: ShutdownStep::GroupDeadlineWaiting {
                            priority,
                            in_flight,
                        },
                    });
                }
                let timer = ctx.after(
                    JOIN_POLL,
                    super::KEv::ShutdownGroupDeadline { group: index },
                );
                if let Some(g) = self
                    .shutdown
                    .processing
                    .as_mut()
                    .and_then(|p| p.current.as_mut())
                {
                    g.joining = true;
                    g.timer = timer;
                }
                return;
            }
            if !first {
                self.shutdown
                    .processing
                    .as_mut()
                    .and_then(|p| p.current.take());
                ctx.emit(Transition::Shutdown {
                    what: ShutdownStep::GroupKillsCompleted { priority },
                });
                self.shutdown_next_group(ctx);
                return;
            }
        }
        let g = self
            .shutdown
            .processing
            .as_mut()
            .and_then(|p| p.current.take())
            .expect("current group");
        ctx.emit(Transition::Shutdown {
            what: ShutdownStep::GroupDeadlinePassed {
                priority: g.group.priority,
                in_flight,
            },
        });
        self.shutdown_next_group(ctx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(priority: i32, period_s: i64) -> ShutdownGroup {
        ShutdownGroup { priority, period_s }
    }

    #[test]
    fn migrate_config_builds_default_and_critical_groups() {
        assert_eq!(
            migrate_config(Dur::secs(30), Dur::secs(10)),
            [g(0, 20), g(SYSTEM_CRITICAL_PRIORITY, 10)]
        );
        assert_eq!(
            migrate_config(Dur::secs(30), Dur::ZERO),
            [g(0, 30), g(SYSTEM_CRITICAL_PRIORITY, 0)]
        );
        assert!(migrate_config(Dur::ZERO, Dur::ZERO).is_empty());
        assert!(migrate_config(Dur::secs(5), Dur::secs(10)).is_empty());
        assert_eq!(period_requested(&[g(0, 20), g(1, 10)]), Dur::secs(30));
    }

    /// Mirrors upstream `Test_groupByPriority`'s placement rules.
    #[test]
    fn group_index_picks_largest_priority_not_above_the_pods() {
        let groups = [g(1, 10), g(2, 20), g(3, 30), g(4, 40)];
        for (prio, want) in [(0, 0), (1, 0), (2, 1), (3, 2), (4, 3), (5, 3), (-7, 0)] {
            assert_eq!(group_index(&groups, prio), want, "priority {prio}");
        }
        let groups = [g(0, 20), g(SYSTEM_CRITICAL_PRIORITY, 10)];
        assert_eq!(group_index(&groups, 100_000), 0);
        assert_eq!(group_index(&groups, 2_000_000_000), 1);
        assert_eq!(group_index(&groups, 2_000_001_000), 1);
    }
}
