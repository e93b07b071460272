//! `spec.pods[].behaviour`: how each container behaves (run time, exit code, SIGTERM
//! handling, preStop duration, memory use, probe outcomes, image pull failures).

use super::primitives::{
    boolean, bytes, dur, exactly_one, expected, idx, int, join, list, obj, pos_dur, present,
    probability, Cx, Unknown,
};
use crate::model::{Behaviour, EmptyDirs, OnSigterm, ProbeOutcome, RunFor, Usage};
use crate::scenario::duration;
use crate::scenario::schema::{Kind, Loc, Node};
use crate::sim::Dur;
use std::collections::BTreeMap;

/// `behaviour.volumes`: volume name -> (usage, where it was written).
pub(super) type VolumeUsage = Vec<(String, Usage, Loc, String)>;

/// `behaviour`: container name -> behaviour, for the entries given, and the `volumes` entry
/// (emptyDir usage; a key `volumes` is a container's only if the pod has a container of that
/// name). Keys are checked against `containers` when it is known (`None` when the template
/// itself has problems).
pub(super) fn behaviours(
    cx: &mut Cx,
    n: Option<&Node>,
    p: &str,
    containers: Option<&[&str]>,
) -> (BTreeMap<String, Behaviour>, VolumeUsage) {
    let mut out = BTreeMap::new();
    let mut volumes = Vec::new();
    let Some(n) = present(n) else {
        return (out, volumes);
    };
    let Kind::Map(entries) = &n.kind else {
        expected(cx, n, p, "a mapping of container names to behaviours");
        return (out, volumes);
    };
    for (k, v) in entries {
        let bp = join(p, &k.name);
        if k.name == "volumes" && !containers.is_some_and(|all| all.contains(&"volumes")) {
            volumes = volume_behaviours(cx, v, &bp);
            continue;
        }
        let b = behaviour(cx, v, &bp);
        if let Some(all) = containers.filter(|all| !all.contains(&k.name.as_str())) {
            let msg = format!(
                "no container named `{}` in this pod's template (containers: {})",
                k.name,
                all.join(", ")
            );
            cx.err(k.loc, &bp, msg);
        } else if let Some(b) = b {
            out.insert(k.name.clone(), b);
        }
    }
    (out, volumes)
}

/// `behaviour.volumes`: `{<volume>: {usage: U}}`.
fn volume_behaviours(cx: &mut Cx, n: &Node, p: &str) -> VolumeUsage {
    let mut out = Vec::new();
    let Kind::Map(entries) = &n.kind else {
        expected(
            cx,
            n,
            p,
            "a mapping of emptyDir volume names to `{usage: Q}`",
        );
        return out;
    };
    for (k, v) in entries {
        let vp = join(p, &k.name);
        let Some(o) = obj(cx, v, &vp, &["usage"], Unknown::Error) else {
            continue;
        };
        if let Some(u) = usage(cx, o.get("usage"), &o.at("usage")) {
            out.push((k.name.clone(), u, k.loc, vp));
        }
    }
    out
}

/// The pod's emptyDir volumes with `behaviour.volumes` usage on them; a name that is not one
/// is an error.
pub(super) fn volume_usage(cx: &mut Cx, dirs: &EmptyDirs, volumes: VolumeUsage) -> EmptyDirs {
    let mut dirs = dirs.clone();
    for (name, u, loc, vp) in volumes {
        match dirs.0.iter_mut().find(|d| d.name == name) {
            Some(d) => d.usage = u,
            None => {
                let all: Vec<&str> = dirs.0.iter().map(|d| d.name.as_str()).collect();
                let msg = format!(
                    "no emptyDir volume named `{name}` in this pod's template (emptyDir volumes: {})",
                    if all.is_empty() { "none".to_string() } else { all.join(", ") }
                );
                cx.err(loc, &vp, msg);
            }
        }
    }
    dirs
}

/// A usage figure: a quantity, or `{initial: Q, growBy: Q, every: D}` (`initial` default 0;
/// the figure grows by `growBy` at the end of every `every` after the container started).
pub(super) fn usage(cx: &mut Cx, n: Option<&Node>, p: &str) -> Option<Usage> {
    let n = present(n)?;
    if !matches!(n.kind, Kind::Map(_)) {
        return bytes(cx, Some(n), p).map(Usage::fixed);
    }
    let o = obj(cx, n, p, &["initial", "growBy", "every"], Unknown::Error)?;
    let base = bytes(cx, o.get("initial"), &o.at("initial")).unwrap_or(0);
    let gb = o.req(cx, "growBy");
    let grow_by = bytes(cx, gb, &o.at("growBy"))?;
    let ev = o.req(cx, "every");
    let every = pos_dur(cx, ev, &o.at("every"))?;
    Some(Usage {
        base,
        grow_by,
        every,
    })
}

fn behaviour(cx: &mut Cx, n: &Node, p: &str) -> Option<Behaviour> {
    let fields = [
        "runFor",
        "exitCode",
        "onSigterm",
        "preStopDuration",
        "memoryUsage",
        "postStartDuration",
        "postStartExitCode",
        "probes",
        "imagePullFailureRatio",
        "diskUsage",
        "inodes",
        "pids",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Error)?;
    let mut b = Behaviour::default();
    if let Some(r) = o.get("runFor") {
        match &r.kind {
            Kind::Str(x) if x == "forever" => b.run_for = RunFor::Forever,
            Kind::Str(x) if duration::parse_go_duration(x).is_err() => {
                let msg = format!("expected `forever` or a duration such as `30s`, found `{x}`");
                cx.err(r.loc, &o.at("runFor"), msg);
            }
            _ => {
                if let Some(d) = dur(cx, Some(r), &o.at("runFor")) {
                    b.run_for = RunFor::For(d);
                }
            }
        }
    }
    b.exit_code = int(cx, o.get("exitCode"), &o.at("exitCode"), 0, 255).map_or(0, |v| v as i32);
    if let Some(s) = o.get("onSigterm") {
        let sp = o.at("onSigterm");
        match &s.kind {
            Kind::Str(x) if x == "ignore" => b.on_sigterm = OnSigterm::Ignore,
            Kind::Map(_) => {
                if let Some(so) = obj(cx, s, &sp, &["exitAfter", "exitCode"], Unknown::Error) {
                    let after =
                        dur(cx, so.get("exitAfter"), &so.at("exitAfter")).unwrap_or(Dur::ZERO);
                    let exit_code = int(cx, so.get("exitCode"), &so.at("exitCode"), 0, 255)
                        .map_or(0, |v| v as i32);
                    b.on_sigterm = OnSigterm::ExitAfter { after, exit_code };
                }
            }
            _ => expected(cx, s, &sp, "`ignore` or `{exitAfter: D, exitCode: N}`"),
        }
    }
    if let Some(d) = dur(cx, o.get("preStopDuration"), &o.at("preStopDuration")) {
        b.pre_stop_duration = d;
    }
    let psd = "postStartDuration";
    if let Some(d) = dur(cx, o.get(psd), &o.at(psd)) {
        b.post_start_duration = d;
    }
    let pse = "postStartExitCode";
    if let Some(c) = super::hooks::post_start_exit_code(cx, o.get(pse), &o.at(pse)) {
        b.post_start_exit_code = c;
    }
    if let Some(m) = bytes(cx, o.get("memoryUsage"), &o.at("memoryUsage")) {
        b.memory_usage_bytes = m;
    }
    for (k, slot) in [
        ("diskUsage", &mut b.disk_usage),
        ("inodes", &mut b.inodes),
        ("pids", &mut b.pids),
    ] {
        if let Some(u) = usage(cx, o.get(k), &o.at(k)) {
            *slot = u;
        }
    }
    if let Some(r) = probability(
        cx,
        o.get("imagePullFailureRatio"),
        &o.at("imagePullFailureRatio"),
    ) {
        b.image_pull_failure_ppm = r;
    }
    if let Some(pr) = o.get("probes") {
        let pp = o.at("probes");
        let kinds = ["liveness", "readiness", "startup"];
        if let Some(po) = obj(cx, pr, &pp, &kinds, Unknown::Error) {
            for (k, slot) in kinds
                .iter()
                .zip([&mut b.liveness, &mut b.readiness, &mut b.startup])
            {
                if let Some(v) = po.get(k) {
                    if let Some(outcome) = probe_outcome(cx, v, &po.at(k)) {
                        *slot = outcome;
                    }
                }
            }
        }
    }
    Some(b)
}

fn probe_outcome(cx: &mut Cx, n: &Node, p: &str) -> Option<ProbeOutcome> {
    let kinds = ["succeed", "failFrom", "failBetween", "failureRatio"];
    let o = obj(cx, n, p, &kinds, Unknown::Error)?;
    let (k, v) = exactly_one(cx, &o, &kinds, "a probe outcome", Some(&kinds))?;
    let kp = o.at(&k.name);
    if v.kind == Kind::Null {
        cx.err(v.loc, &kp, "missing value");
        return None;
    }
    match k.name.as_str() {
        "succeed" => boolean(cx, Some(v), &kp).map(ProbeOutcome::Always),
        "failFrom" => dur(cx, Some(v), &kp).map(ProbeOutcome::FailFrom),
        "failureRatio" => probability(cx, Some(v), &kp).map(ProbeOutcome::FailureRatio),
        _ => {
            let items = list(cx, Some(v), &kp);
            if items.len() != 2 {
                if matches!(v.kind, Kind::Seq(_)) {
                    cx.err(
                        v.loc,
                        &kp,
                        format!(
                            "expected two durations `[from, to]`, found {} items",
                            items.len()
                        ),
                    );
                }
                return None;
            }
            let from = dur(cx, Some(&items[0]), &idx(&kp, 0));
            let to = dur(cx, Some(&items[1]), &idx(&kp, 1));
            let (from, to) = (from?, to?);
            if to < from {
                cx.err(
                    items[1].loc,
                    &idx(&kp, 1),
                    format!("end ({to}) must not be before start ({from})"),
                );
                return None;
            }
            Some(ProbeOutcome::FailBetween(from, to))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::with;
    use crate::model::{CriError, OnSigterm, ProbeOutcome, RunFor};
    use crate::sim::Dur;

    #[test]
    fn behaviour_and_probabilities() {
        let s = with("      replicas: 2\n      behaviour:\n        app:\n          runFor: 30s\n          exitCode: 3\n          onSigterm: ignore\n          memoryUsage: 1Gi\n          imagePullFailureRatio: 0.25\n          probes: {liveness: {failBetween: [1m, 2m]}, readiness: {failureRatio: 1}, startup: {succeed: false}}\n  runtime:\n    faults: [{call: pullImage, probability: 0.000001}]\n")
            .unwrap()
            .scenario;
        assert_eq!(s.pods.len(), 2);
        assert_eq!(s.pods[1].spec.name, "web-1");
        let b = &s.pods[1].behaviour["app"];
        assert_eq!(b.run_for, RunFor::For(Dur::secs(30)));
        assert_eq!(b.exit_code, 3);
        assert_eq!(b.on_sigterm, OnSigterm::Ignore);
        assert_eq!(b.memory_usage_bytes, 1 << 30);
        assert_eq!(b.image_pull_failure_ppm, 250_000);
        assert_eq!(
            b.liveness,
            ProbeOutcome::FailBetween(Dur::secs(60), Dur::secs(120))
        );
        assert_eq!(b.readiness, ProbeOutcome::FailureRatio(1_000_000));
        assert_eq!(b.startup, ProbeOutcome::Always(false));
        assert_eq!(s.runtime.faults[0].probability_ppm, 1);
        assert_eq!(s.runtime.faults[0].error, CriError::Unknown);
        let s = with("      behaviour: {app: {onSigterm: {exitAfter: 2s}}}\n")
            .unwrap()
            .scenario;
        assert_eq!(
            s.pods[0].behaviour["app"].on_sigterm,
            OnSigterm::ExitAfter {
                after: Dur::secs(2),
                exit_code: 0
            }
        );
    }

    #[test]
    fn disk_usage_forms_volume_usage_and_node_storage() {
        let s = with("      behaviour:\n        app: {diskUsage: {initial: 1Gi, growBy: 100Mi, every: 10s}, inodes: 500, pids: 7}\n  node: {nodefs: {capacity: 20Gi, inodes: 1000}, maxPids: 100}\n  runtime: {images: [{image: a:1, size: 1Gi}]}\n  timeline:\n    - {at: 1s, diskPressure: {filesystem: imagefs, inodesFree: 5}}\n    - {at: 2s, pidPressure: {available: 3}}\n")
            .unwrap()
            .scenario;
        let b = &s.pods[0].behaviour["app"];
        assert_eq!(b.disk_usage.at(Dur::secs(25)), (1 << 30) + 2 * (100 << 20));
        assert_eq!(b.inodes.at(Dur::secs(99)), 500);
        assert_eq!(b.pids.at(Dur::ZERO), 7);
        assert_eq!(s.node.nodefs.capacity_bytes, 20 << 30);
        assert_eq!(s.node.nodefs.inodes, 1000);
        assert_eq!(s.node.imagefs, None);
        assert_eq!(s.node.max_pids, 100);
        assert_eq!(s.runtime.image_sizes["a:1"], 1 << 30);
        assert_eq!(
            s.timeline[0].action,
            crate::scenario::Action::DiskPressure {
                imagefs: true,
                available: None,
                inodes_free: Some(5)
            }
        );
        assert_eq!(
            s.timeline[1].action,
            crate::scenario::Action::PidPressure { available: 3 }
        );
    }

    #[test]
    fn storage_mistakes_are_errors_naming_the_field() {
        use super::super::test_util::problems;
        let e = problems("      behaviour: {volumes: {scratch: {usage: 1Gi}}, app: {diskUsage: {growBy: 1Mi}}}\n  node: {nodefs: {capacity: 0}}\n  timeline:\n    - {at: 1s, diskPressure: {filesystem: nodefs}}\n");
        let all = e.join("\n");
        assert!(
            all.contains("behaviour.volumes.scratch: no emptyDir volume named `scratch` in this pod's template (emptyDir volumes: none)"),
            "{all}"
        );
        assert!(all.contains("diskUsage.every"), "{all}");
        assert!(
            all.contains("spec.node.nodefs: a filesystem needs a capacity and inodes above 0"),
            "{all}"
        );
        assert!(
            all.contains("set `available`, `inodesFree` or both"),
            "{all}"
        );
    }
}
