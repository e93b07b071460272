//! The run's output, built from the world when the run has ended: per pod from the API
//! server's history and the runtime's ground truth, metrics, and the oracle's findings.

use super::output::{
    ConditionSummary, ContainerSummary, EvictionSummary, Finding, Metrics, PodSummary, RunOutput,
};
use super::world::World;
use super::RunOptions;
use crate::kubelet::UPSTREAM_RELEASE;
use crate::model::{ContainerSpec, PodPhase, PodUid};
use crate::scenario::Scenario;
use crate::sim::{SimTime, StopReason};
use crate::world::apiserver::ObjectHistory;
use crate::world::runtime::{ContainerFacts, Runtime};
use std::borrow::Cow;
use std::sync::Arc;

/// The output of the run that left `world`, stopped for `stop`; the world is used up. The
/// per-pod summaries are built last, after the kubelet, the pending events and the API
/// server's live objects have been dropped (only the summaries read the API's history and
/// the runtime's records): at 100,000 pods the summaries would otherwise sit on top of the
/// whole live world and make the run's memory peak. The world is taken apart rather than
/// given a fresh kubelet to hold, which would be built only to be dropped.
pub(crate) fn summarize(mut world: World, stop: StopReason, opts: &RunOptions) -> RunOutput {
    let w = &mut world;
    // Every incarnation's: a `kubeletRestart` replaces the kubelet, not the node's history.
    let tally = w.process.tally(&w.kubelet);
    let mut metrics = Metrics {
        kills_at_grace_expiry: w.runtime.sigkills,
        pleg_relists: tally.relists,
        kubelet_restarts: w.process.crashes,
        probes_run: tally.probes_run,
        node_shutdown_at_ns: w.node.shutdown_requested_at.map(|t| t.0),
        power_off_at_ns: w.node.powered_off_at.map(|t| t.0),
        power_off_cause: w.node.power_off_cause.map(|c| c.as_str().to_string()),
        containers_alive_at_power_off: w.power_off.containers_alive,
        statuses_lost_at_power_off: w.power_off.statuses_lost,
        starts_while_termination_requested: w.trace.observer().starts_while_termination_requested(),
        ..Default::default()
    };
    metrics.evictions = tally
        .evictions
        .iter()
        .map(|r| EvictionSummary {
            pod: r.pod.clone(),
            uid: uid_string(r.uid),
            at_ns: r.at.0,
            signal: r.signal.clone(),
            grace_period_seconds: r.grace,
            kill_returned_at_ns: r.kill_returned_at.map(|t| t.0),
            kill_timed_out: r.kill_timed_out,
            cleaned_up_at_ns: r.cleaned_up_at.map(|t| t.0),
            cleanup_timed_out: r.cleanup_timed_out,
            message: r.message.clone(),
        })
        .collect();
    metrics.node_conditions = tally
        .node_conditions
        .iter()
        .map(|(t, c, s)| (t.0, c.to_string(), *s))
        .collect();
    disk_summary(w, &tally, &mut metrics);
    let sc = Arc::clone(&w.scenario);
    let mut out = RunOutput {
        podsim: env!("CARGO_PKG_VERSION").into(),
        scenario: sc.name.clone(),
        scenario_hash: sc.hash.clone(),
        seed: opts.seed,
        profile: sc.kubelet.profile.clone(),
        release: crate::kubelet::profile::release_of(&sc.kubelet.profile).into(),
        upstream_release: UPSTREAM_RELEASE.into(),
        behaviours: w.kubelet.behaviours(),
        feature_gates: crate::kubelet::gates::resolved(
            &sc.kubelet.profile,
            &sc.kubelet.feature_gates,
        ),
        trace_hash: w.trace.hash_hex(),
        events: w.sim.events(),
        simulated_ns: w.sim.now().0,
        stop_reason: stop.as_str().into(),
        findings: findings(w, stop, opts),
        reached: crate::model::reach::names(w.trace.reached()),
        pods: Vec::new(),
        metrics: Metrics::default(),
        replay: opts.replay.clone(),
        trace: w.trace.take_records(),
        scheduler: (sc.scheduler != crate::sim::Strategy::Random).then(|| sc.scheduler.to_string()),
    };
    let World {
        kubelet,
        sim,
        mut api,
        runtime,
        scenario,
        ..
    } = world;
    drop(kubelet);
    drop(sim);
    api.release_objects();
    let mut facts = Vec::new();
    out.pods = api
        .history
        .iter()
        .map(|(uid, h)| pod_summary(&runtime, &scenario, *uid, h, &mut metrics, &mut facts))
        .collect();
    metrics.pods = out.pods.len() as u32;
    out.metrics = metrics;
    out
}

/// The oracle's findings, and `run-limit-reached` if a limit stopped the run.
fn findings(w: &World, stop: StopReason, opts: &RunOptions) -> Vec<Finding> {
    let mut findings: Vec<Finding> = w
        .trace
        .observer()
        .findings()
        .iter()
        .map(|f| Finding {
            invariant: f.invariant.to_string(),
            pod: f.pod.clone(),
            at_ns: f.at.0,
            message: f.message.clone(),
            replay: opts.replay.clone(),
        })
        .collect();
    if stop.is_limit() {
        findings.push(Finding {
            invariant: "run-limit-reached".into(),
            pod: String::new(),
            at_ns: w.sim.now().0,
            message: format!(
                "the run stopped at the {} limit after {} events",
                stop.as_str(),
                w.sim.events()
            ),
            replay: opts.replay.clone(),
        });
    }
    findings
}

/// The reclaims, image collections, image removals and final disk figures.
fn disk_summary(w: &World, tally: &crate::kubelet::Tally, m: &mut Metrics) {
    use super::output::{DiskSummary, ImageGcRunSummary, ImageRemovedSummary, NodeReclaimSummary};
    m.node_reclaims = tally
        .reclaims
        .iter()
        .map(|r| NodeReclaimSummary {
            at_ns: r.at.0,
            signal: r.signal.clone(),
            containers_removed: r.containers,
            images_removed: r.images,
            done_at_ns: r.done_at.map(|t| t.0),
            relieved: r.relieved,
        })
        .collect();
    m.image_gc_runs = tally
        .image_gc_runs
        .iter()
        .map(|r| ImageGcRunSummary {
            at_ns: r.at.0,
            usage_percent: r.usage_percent,
            to_free_bytes: r.to_free,
            images: r.images.clone(),
        })
        .collect();
    m.images_removed = w
        .runtime
        .removed_images
        .iter()
        .map(|(t, image, size)| ImageRemovedSummary {
            at_ns: t.0,
            image: image.clone(),
            size_bytes: *size,
        })
        .collect();
    let d = w.runtime.node_disk(w.sim.now());
    m.disk_at_end = DiskSummary {
        nodefs_capacity_bytes: d.nodefs.capacity_bytes,
        nodefs_available_bytes: d.nodefs.available_bytes,
        imagefs_capacity_bytes: d.imagefs.capacity_bytes,
        imagefs_available_bytes: d.imagefs.available_bytes,
    };
}

/// One pod object (one UID), from the API server's history and the node's ground truth;
/// its containers count into `metrics`. `facts` is a buffer kept across pods.
fn pod_summary(
    runtime: &Runtime,
    scenario: &Scenario,
    uid: PodUid,
    h: &ObjectHistory,
    metrics: &mut Metrics,
    facts: &mut Vec<ContainerFacts>,
) -> PodSummary {
    let decl = &scenario.pods[h.decl];
    runtime.facts(uid, facts);
    // In debug builds, each container's instances are checked against a search of the
    // runtime's order below.
    #[cfg(debug_assertions)]
    let in_runtime_order = facts.clone();
    // Each container's instances side by side, oldest first (the sort is stable), so that
    // a container's instances are one slice of `facts`.
    facts.sort_by(|a, b| a.name.cmp(&b.name));
    let facts = &facts[..];
    let host = runtime.host.get(&uid);
    let mut summaries = |specs: &[ContainerSpec]| -> Vec<ContainerSummary> {
        let mut out = Vec::with_capacity(specs.len());
        for c in specs {
            let inst = instances(facts, &c.name);
            #[cfg(debug_assertions)]
            debug_assert!(
                inst.iter()
                    .eq(in_runtime_order.iter().filter(|f| *f.name == *c.name)),
                "the instances of container {} are not those the runtime lists",
                c.name
            );
            let mut s = container_summary(c, inst);
            s.last_reason = h.last_reason(&c.name);
            metrics.container_starts += s.starts;
            metrics.restarts += s.restarts;
            if s.running_at_end {
                metrics.containers_running_at_end += 1;
            }
            out.push(s);
        }
        out
    };
    let containers = summaries(&decl.spec.containers);
    let init_containers = summaries(&decl.spec.init_containers);
    let stopped_at = containers_stopped_at(facts, h.deletion_requested_at());
    if let (Some(d), Some(s)) = (h.deletion_requested_at(), stopped_at) {
        metrics.time_to_terminated_ns.push(s.since(d).0);
    }
    if let (Some(d), Some(r)) = (h.deletion_requested_at(), h.removed_at()) {
        metrics.time_to_removed_ns.push(r.since(d).0);
    }
    let last_phase = h.phases.last().map_or(PodPhase::Pending, |p| p.1);
    PodSummary {
        name: h.name.clone(),
        uid: uid_string(uid),
        is_static: h.is_static,
        final_phase: if h.removed_at().is_some() {
            "Deleted"
        } else {
            last_phase.as_str()
        },
        last_phase: last_phase.as_str(),
        reason: h.reason().cloned(),
        created_at_ns: h.created_at.0,
        deletion_requested_at_ns: h.deletion_requested_at().map(|t| t.0),
        containers_stopped_at_ns: stopped_at.map(|t| t.0),
        removed_from_api_at_ns: h.removed_at().map(|t| t.0),
        removed_by: h.removed_by().map(|b| b.as_str()),
        phases: h.phases.iter().map(|(t, p)| (t.0, p.as_str())).collect(),
        volumes_unmounted_at_ns: host.and_then(|h| h.unmounted_at.map(|t| t.0)),
        pod_cgroup_removed_at_ns: host.and_then(|h| h.cgroup_removed_at.map(|t| t.0)),
        pod_dir_removed_at_ns: host.and_then(|h| h.pod_dir_removed_at.map(|t| t.0)),
        killed_by_cgroup_removal: host.map_or(0, |h| h.killed_by_cgroup_removal),
        ready_transitions: h.ready.iter().map(|(t, r)| (t.0, *r)).collect(),
        containers,
        init_containers,
        conditions: h
            .conditions
            .iter()
            .map(|c| ConditionSummary {
                kind: c
                    .kind
                    .static_name()
                    .map_or_else(|| Cow::Owned(c.kind.as_str().to_owned()), Cow::Borrowed),
                status: c.status.as_str(),
                reason: c.reason,
            })
            .collect(),
    }
}

/// The `Display` form of `uid`, written straight into a string of its usual length
/// (`uid-` and four digits) rather than through the formatting machinery
/// ([`PodUid::push_to`] checks it against `Display` in debug builds).
fn uid_string(uid: PodUid) -> String {
    let mut s = String::with_capacity(8);
    uid.push_to(&mut s);
    s
}

/// When the last container of a pod whose deletion was requested stopped (`None` while
/// one still runs, or if no deletion was requested).
fn containers_stopped_at(
    facts: &[ContainerFacts],
    deletion_requested_at: Option<SimTime>,
) -> Option<SimTime> {
    if facts.iter().any(|f| f.running) {
        return None;
    }
    deletion_requested_at.map(|d| {
        facts
            .iter()
            .filter_map(|f| f.finished_at)
            .max()
            .unwrap_or(d)
            .max(d)
    })
}

/// The instances of container `name` in `facts` sorted by name: one slice, oldest first.
fn instances<'a>(facts: &'a [ContainerFacts], name: &str) -> &'a [ContainerFacts] {
    let start = facts.partition_point(|f| *f.name < *name);
    let len = facts[start..].partition_point(|f| *f.name == *name);
    &facts[start..start + len]
}

/// One container of a pod spec from `inst`, every instance the runtime ran under its name
/// (oldest first).
fn container_summary(c: &ContainerSpec, inst: &[ContainerFacts]) -> ContainerSummary {
    let starts = inst.iter().filter(|f| f.started).count() as u32;
    ContainerSummary {
        name: c.name.clone(),
        starts,
        restarts: starts.saturating_sub(1),
        last_exit_code: inst.iter().rev().find_map(|f| f.exit_code),
        last_reason: None,
        running_at_end: inst.iter().any(|f| f.running),
        killed_at_grace_expiry: inst.iter().filter(|f| f.killed).count() as u32,
        started_at_ns: inst
            .iter()
            .filter_map(|f| f.started_at.map(|t| t.0))
            .collect(),
        finished_at_ns: inst
            .iter()
            .filter(|f| f.started)
            .filter_map(|f| f.finished_at.map(|t| t.0))
            .collect(),
        sigterm_at_ns: inst.last().and_then(|f| f.sigterm_at.map(|t| t.0)),
        killed_by_power_off: inst.iter().any(|f| f.powered_off),
        sigterms_at_ns: inst
            .iter()
            .filter_map(|f| f.sigterm_at.map(|t| t.0))
            .collect(),
        grace_expiry_kills_at_ns: inst
            .iter()
            .filter(|f| f.killed)
            .filter_map(|f| f.finished_at.map(|t| t.0))
            .collect(),
        dead_at_end: inst.iter().filter(|f| !f.running && !f.removed).count() as u32,
        restart_policy: c.restart_policy.0.map(|p| p.as_str()),
    }
}
