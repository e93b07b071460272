//! The graceful node shutdown manager of v1.21 and v1.22, before priority groups: what
//! `shutdownKillsByPriorityGroups: false` runs.
//!
//! Follows `processShutdownEvent` in `pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go`
//! of the release-1.22 branch (the v1.21 function has the same shape). The active pods
//! fall in two classes, started together: a pod that is not critical is killed at once with
//! the non-critical period (`shutdownGracePeriod - shutdownGracePeriodCriticalPods`, whole
//! seconds) as its grace; a critical pod (`IsCriticalPod`: static, mirror, or a priority
//! of at least system-critical) first sleeps the whole non-critical period, however soon
//! the other kills return, and is then killed with the critical period. Either grace is
//! replaced by the pod's own `terminationGracePeriodSeconds` when that is not longer.
//! Neither v1.21.0 nor v1.22.0 calls the probe manager's `RemovePod` before a kill: PR
//! 105215 added that call after v1.22.0 (in v1.23.0, and in later v1.22 patch releases);
//! with `shutdownRemovesProbesBeforeKill` set on, the v1.22 manager makes it too. The manager waits for every kill (and every critical pod's sleep) to return,
//! but at most `shutdownGracePeriod`, then releases the inhibitor lock: kills still in
//! flight run on. The status function is the one of the profile (`shutdownSetsFailedPhase`:
//! reason and message only on v1.22, issue 104531).
//!
//! Where it deliberately differs: the goroutines become timers and `killPodNow` channels;
//! the trace marks each class's start as a shutdown group (priority 0 with the
//! non-critical period at the start, system-critical with the critical period when the
//! critical pods' sleep ends, also when there is no critical pod), so the oracle's
//! deadlines apply unchanged.

use super::nodeshutdown::{DEFAULT_PRIORITY, SYSTEM_CRITICAL_PRIORITY};
use super::profile::Sw;
use super::{KEv, Kubelet};
use crate::kubelet::Ctx;
use crate::model::{ApiPod, ShutdownStep, Transition};
use crate::sim::TimerKey;
use std::collections::BTreeSet;
use std::sync::Arc;

/// `processShutdownEvent` of v1.22 in progress.
#[derive(Clone, Debug)]
pub(crate) struct TwoClassRun {
    /// `killPodNow` calls that have not returned yet.
    waiting: BTreeSet<u64>,
    /// The critical pods, still sleeping until the non-critical period has passed.
    critical: Vec<Arc<ApiPod>>,
    /// Whether the critical pods' sleep is over.
    critical_started: bool,
    critical_s: i64,
    timers: [TimerKey; 2],
}

/// `kubelettypes.IsCriticalPod` (v1.22): static, mirror or system-critical priority.
fn is_critical(pod: &ApiPod) -> bool {
    pod.static_pod || pod.mirror_of.is_some() || pod.spec.priority >= SYSTEM_CRITICAL_PRIORITY
}

impl Kubelet {
    /// `processShutdownEvent` (v1.22): kill the non-critical pods, put the critical ones to
    /// sleep, start the bounded wait.
    pub(super) fn v122_process_shutdown_event(&mut self, ctx: &mut Ctx) {
        let active = self.shutdown_active_pods();
        let (requested, critical) = self.shutdown.legacy_periods;
        let non_critical = requested.saturating_sub(critical);
        ctx.emit(Transition::Shutdown {
            what: ShutdownStep::Processing {
                pods: active.len(),
                groups: 2,
            },
        });
        if active.is_empty() {
            self.v122_release(ctx);
            return;
        }
        let (crit, rest): (Vec<_>, Vec<_>) = active.into_iter().partition(|p| is_critical(p));
        let non_critical_s = non_critical.whole_secs() as i64;
        ctx.emit(Transition::ShutdownGroup {
            priority: DEFAULT_PRIORITY,
            period_s: non_critical_s,
            pods: rest.len() as u32,
        });
        let mut waiting = BTreeSet::new();
        for pod in rest {
            waiting.insert(self.v122_kill(ctx, pod, non_critical_s));
        }
        // The critical pods' sleep is timed before the overall wait, so that when the two
        // end together (no critical period) the critical kills are still issued.
        let timers = [
            ctx.after(non_critical, KEv::ShutdownV122Timer { critical: true }),
            ctx.after(requested, KEv::ShutdownV122Timer { critical: false }),
        ];
        self.shutdown.two_class = Some(TwoClassRun {
            waiting,
            critical: crit,
            critical_started: false,
            critical_s: critical.whole_secs() as i64,
            timers,
        });
    }

    /// One pod's goroutine after its sleep: `RemovePod` (see the module doc), the grace,
    /// `killPodNow`.
    fn v122_kill(&mut self, ctx: &mut Ctx, pod: Arc<ApiPod>, period_s: i64) -> u64 {
        if self.b.on(Sw::PodWorkerOwnsLifecycle) && self.b.on(Sw::ShutdownRemovesProbesBeforeKill) {
            self.probe_remove_pod(ctx, &pod);
        }
        let grace = match pod.spec.termination_grace_period_seconds {
            Some(t) if t <= period_s => t,
            _ => period_s,
        };
        let status_fn = self.shutdown_status_fn();
        ctx.reach(crate::model::reach::Reach::ShutdownKill);
        self.kill_pod_now(ctx, pod, false, Some(grace), Some(status_fn))
    }

    /// A `killPodNow` call of the v1.22 manager returned.
    pub(super) fn v122_kill_returned(&mut self, ctx: &mut Ctx, ch: u64) {
        let Some(run) = self.shutdown.two_class.as_mut() else {
            return;
        };
        run.waiting.remove(&ch);
        let done = run.waiting.is_empty() && (run.critical_started || run.critical.is_empty());
        if done {
            self.v122_finish(ctx, None);
        }
    }

    /// The critical pods' sleep ended, or the overall wait timed out.
    pub(super) fn v122_shutdown_timer(&mut self, ctx: &mut Ctx, critical: bool) {
        let Some(run) = self.shutdown.two_class.as_mut() else {
            return;
        };
        if !critical {
            let in_flight = run.waiting.len();
            self.v122_finish(ctx, Some(in_flight));
            return;
        }
        run.critical_started = true;
        let pods = std::mem::take(&mut run.critical);
        let critical_s = run.critical_s;
        ctx.emit(Transition::ShutdownGroup {
            priority: SYSTEM_CRITICAL_PRIORITY,
            period_s: critical_s,
            pods: pods.len() as u32,
        });
        for pod in pods {
            let ch = self.v122_kill(ctx, pod, critical_s);
            if let Some(run) = self.shutdown.two_class.as_mut() {
                run.waiting.insert(ch);
            }
        }
        if self
            .shutdown
            .two_class
            .as_ref()
            .is_some_and(|r| r.waiting.is_empty())
        {
            self.v122_finish(ctx, None);
        }
    }

    /// The wait is over (`timed_out` with the kills still in flight): release the lock.
    fn v122_finish(&mut self, ctx: &mut Ctx, timed_out: Option<usize>) {
        let Some(run) = self.shutdown.two_class.take() else {
            return;
        };
        for t in run.timers {
            ctx.cancel(t);
        }
        if let Some(in_flight) = timed_out {
            let priority = if run.critical_started {
                SYSTEM_CRITICAL_PRIORITY
            } else {
                DEFAULT_PRIORITY
            };
            ctx.emit(Transition::Shutdown {
                what: ShutdownStep::GroupDeadlinePassed {
                    priority,
                    in_flight,
                },
            });
        }
        self.v122_release(ctx);
    }

    fn v122_release(&mut self, ctx: &mut Ctx) {
        if let Some(lock) = self.shutdown.inhibit_lock.take() {
            ctx.logind_release(lock);
            ctx.emit(Transition::Shutdown {
                what: ShutdownStep::Processed { lock },
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{ContainerSpec, PodSpec, PodUid, RestartPolicy};

    #[test]
    fn critical_pods_are_static_mirror_or_system_critical() {
        let pod = |priority: i32, static_pod: bool| {
            let c = vec![ContainerSpec::named("c", "img")];
            let mut spec = PodSpec::new("p", "default", RestartPolicy::Always, c);
            spec.priority = priority;
            let mut p = ApiPod::new(PodUid(1), spec);
            p.static_pod = static_pod;
            p
        };
        assert!(!is_critical(&pod(0, false)));
        assert!(!is_critical(&pod(SYSTEM_CRITICAL_PRIORITY - 1, false)));
        assert!(is_critical(&pod(SYSTEM_CRITICAL_PRIORITY, false)));
        assert!(is_critical(&pod(0, true)));
        let mut mirror = pod(0, false);
        mirror.mirror_of = Some(PodUid(2));
        assert!(is_critical(&mirror));
    }
}
