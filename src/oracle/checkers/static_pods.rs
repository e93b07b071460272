//! Static pods: two UIDs of one static full name never run at the same time.

use super::{crashed, record_removed, topic, Checker};
use crate::model::{PodUid, Transition, WorkerStep};
use crate::oracle::facts::Facts;
use crate::oracle::findings::Findings;
use crate::oracle::invariants::{Inv, Invariant, Kind, V123};
use crate::sim::SimTime;
use std::collections::BTreeMap;

/// The invariants this checker owns: their rows of the table.
pub(crate) const ROWS: &[(Inv, Invariant)] = &[
    (
        Inv::StaticFullnameExclusivity,
        Invariant {
            name: "static-fullname-exclusivity",
            id: "S12",
            kind: Kind::Safety,
            meaning: "no two UIDs of static pods with the same full name are started and not finished at the same time (in one kubelet process), and no container of a static pod starts while a container of another UID with the same full name runs (ground truth, across kubelet restarts: runtime-only containers count)",
            bound: "",
            source: "pkg/kubelet/pod_workers.go allowStaticPodStart (PR 104743, issue 97722); race catalog 5, 27 (issues 112814, 116880: open upstream)",
            profiles: V123,
        },
    ),
];

#[derive(Clone, Debug, Default)]
pub(crate) struct StaticPods {
    /// Static full name -> UIDs started and not finished.
    started: BTreeMap<String, Vec<PodUid>>,
}

impl Checker for StaticPods {
    const TOPICS: u32 = topic::CONTAINER_RUNNING | topic::WORKER | topic::KUBELET_PROCESS;

    #[inline(always)]
    fn on(&mut self, at: SimTime, tr: &Transition, facts: &Facts, out: &mut Findings) {
        match tr {
            Transition::ContainerRunning { uid, .. } => {
                Self::container_started(at, *uid, facts, out)
            }
            Transition::Worker {
                uid,
                what: WorkerStep::Started,
            } => self.worker_started(at, *uid, facts, out),
            Transition::Worker {
                uid,
                what: WorkerStep::Finished | WorkerStep::FinishedNeverStarted,
            } => self.release(*uid),
            _ if crashed(tr) => self.started.clear(),
            _ => {
                if let Some(uid) = record_removed(tr) {
                    self.release(uid);
                }
            }
        }
    }
}

impl StaticPods {
    /// The worker started a static pod while another UID of its full name was started
    /// and not finished (in this kubelet process).
    fn worker_started(&mut self, at: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        let p = facts.pod(uid);
        let full = p.static_pod.then(|| {
            p.spec
                .as_ref()
                .map(|s| format!("{}_{}", s.name, s.namespace))
                .unwrap_or_default()
        });
        if let Some(full) = full {
            let others = self.started.entry(full.clone()).or_default();
            let other = others.first().copied();
            others.push(uid);
            if let Some(o) = other {
                out.report(
                    facts,
                    Inv::StaticFullnameExclusivity,
                    Some(uid),
                    at,
                    format_args!("static pod {full} started while {o}, of the same full name, was started and not finished"),
                );
            }
        }
    }

    /// Ground truth: a container of a static pod starts while a container of another UID
    /// with the same full name runs (whether or not the kubelet knows that UID: after a
    /// restart it may be a runtime-only pod).
    fn container_started(at: SimTime, uid: PodUid, facts: &Facts, out: &mut Findings) {
        let Some(full) = facts.pod(uid).static_full_name() else {
            return;
        };
        let other = facts.pods.iter().enumerate().find_map(|(i, q)| {
            (i != uid.0 as usize
                && !q.running.is_empty()
                && q.static_full_name().as_deref() == Some(full.as_str()))
            .then_some(PodUid(i as u32))
        });
        if let Some(o) = other {
            out.report(
                facts,
                Inv::StaticFullnameExclusivity,
                Some(uid),
                at,
                format_args!("a container of static pod {full} started while a container of {o}, of the same full name, was running"),
            );
        }
    }

    fn release(&mut self, uid: PodUid) {
        for v in self.started.values_mut() {
            v.retain(|u| *u != uid);
        }
    }
}

#[cfg(test)]
#[path = "static_pods_tests.rs"]
mod tests;
