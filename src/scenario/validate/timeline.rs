//! `spec.timeline` (the outside actions and the pods they name) and `spec.expect`.

use super::kubelet::switch_map;
use super::primitives::{
    bytes, dur, exactly_one, expected, idx, int, list, obj, one_of, string, suggest,
    suggest_or_point, Cx, Obj, Unknown,
};
use crate::scenario::not_built_yet::Capability;
use crate::scenario::schema::{Kind, Node};
use crate::scenario::types::{Action, Expect, ExpectOld, PodDecl, TimedAction};
use crate::sim::Dur;
use std::collections::BTreeMap;

const ACTIONS: [&str; 13] = [
    "deletePod",
    "forceDeletePod",
    "nodeShutdown",
    "memoryPressure",
    "diskPressure",
    "pidPressure",
    "kubeletRestart",
    "containerExit",
    "updateStaticPod",
    "removeStaticPod",
    "restoreStaticPod",
    "recreatePod",
    "setPodCondition",
];

/// The scenario's horizon, when it is valid: nothing scheduled after it ever happens.
pub(super) struct Horizon {
    pub(super) at: Dur,
    /// How to name it in a message: `spec.horizon: 1m` or the default.
    pub(super) shown: String,
}

/// A note when `value` (of the field at `path`, node `n`) lies past the horizon: the run
/// stops before it. A note, not an error: bundled benchmark scenarios have timelines that
/// run on past their horizon, and they must keep loading (and their trace hashes).
pub(super) fn past_horizon(
    cx: &mut Cx,
    horizon: Option<&Horizon>,
    value: Dur,
    n: Option<&Node>,
    path: &str,
    what: &str,
) {
    let (Some(h), Some(n)) = (horizon, n) else {
        return;
    };
    if value > h.at {
        let text = n.scalar_text().unwrap_or_else(|| value.to_string());
        cx.note(
            n.loc,
            path,
            format!(
                "`{text}` is past the horizon ({}): {what} never happens in a run; raise \
                 spec.horizon or move it earlier",
                h.shown
            ),
        );
    }
}

/// The pods timeline actions can name.
pub(super) struct KnownPods<'a> {
    by_name: BTreeMap<&'a str, &'a PodDecl>,
    /// Every pod declaration was valid: a name not found is really missing.
    complete: bool,
    /// Declarations whose `replicas` is wrong: `NAME-K` may or may not exist.
    unknown_replicas: &'a [String],
}

impl<'a> KnownPods<'a> {
    pub(super) fn new(
        pods: &'a [PodDecl],
        complete: bool,
        unknown_replicas: &'a [String],
    ) -> KnownPods<'a> {
        KnownPods {
            by_name: pods.iter().map(|p| (p.spec.name.as_str(), p)).collect(),
            complete,
            unknown_replicas,
        }
    }

    /// Whether `name` may be a pod of a declaration whose replica count is unknown.
    fn maybe_replica(&self, name: &str) -> bool {
        self.unknown_replicas.iter().any(|base| {
            name.strip_prefix(base.as_str())
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        })
    }
}

pub(super) fn timeline(
    cx: &mut Cx,
    n: Option<&Node>,
    by_name: &KnownPods,
    horizon: Option<&Horizon>,
) -> Vec<TimedAction> {
    let mut out = Vec::new();
    let mut fields = vec!["at"];
    fields.extend(ACTIONS);
    for (i, item) in list(cx, n, "spec.timeline").iter().enumerate() {
        let p = idx("spec.timeline", i);
        let Some(o) = obj(cx, item, &p, &fields, Unknown::Error) else {
            continue;
        };
        let at_node = o.req(cx, "at");
        let at = dur(cx, at_node, &o.at("at"));
        if let Some(t) = at {
            past_horizon(cx, horizon, t, at_node, &o.at("at"), "the action");
        }
        let Some((k, v)) = exactly_one(cx, &o, &ACTIONS, "a timeline entry", Some(&fields)) else {
            continue;
        };
        let ap = o.at(&k.name);
        if let Some(action) = action(cx, &k.name, v, &ap, by_name) {
            if let Some(at) = at {
                out.push(TimedAction { at, action });
            }
        }
    }
    out.sort_by_key(|a| a.at);
    out
}

/// A `pod:` reference that must name an (expanded) pod; returns the name.
fn pod_ref(cx: &mut Cx, o: &Obj, pods: &KnownPods) -> Option<String> {
    let n = o.req(cx, "pod");
    let name = string(cx, n, &o.at("pod"))?;
    if !pods.by_name.contains_key(name.as_str()) {
        if !pods.complete || pods.maybe_replica(&name) {
            return None; // the pod declarations have problems of their own
        }
        let known: Vec<&str> = pods.by_name.keys().copied().take(10).collect();
        let more = if pods.by_name.len() > 10 { ", ..." } else { "" };
        let loc = n.map_or(o.loc, |n| n.loc);
        let list = if known.is_empty() {
            "no valid pod is declared".to_owned()
        } else {
            format!("pods: {}{more}", known.join(", "))
        };
        cx.err(
            loc,
            &o.at("pod"),
            format!("no pod named `{name}` in spec.pods ({list})"),
        );
        return None;
    }
    Some(name)
}

fn action(cx: &mut Cx, kind: &str, v: &Node, p: &str, pods: &KnownPods) -> Option<Action> {
    let fields: &[&str] = match kind {
        "deletePod" => &["pod", "gracePeriodSeconds"],
        "memoryPressure" => &["available"],
        "diskPressure" => &["filesystem", "available", "inodesFree"],
        "pidPressure" => &["available"],
        "kubeletRestart" => &["downtime"],
        "containerExit" => &["pod", "container", "exitCode"],
        "nodeShutdown" => &[],
        "setPodCondition" => &["pod", "type", "status"],
        _ => &["pod"],
    };
    let o = obj(cx, v, p, fields, Unknown::Error)?;
    let cap = match kind {
        "nodeShutdown" => Some(Capability::NodeShutdownAction),
        "memoryPressure" => Some(Capability::MemoryPressureAction),
        "kubeletRestart" => Some(Capability::KubeletRestartAction),
        "updateStaticPod" => Some(Capability::UpdateStaticPodAction),
        "removeStaticPod" | "restoreStaticPod" => Some(Capability::RemoveStaticPodAction),
        "recreatePod" => Some(Capability::RecreatePodAction),
        _ => None,
    };
    if let Some(cap) = cap {
        cx.uses(cap, v.loc, p);
    }
    match kind {
        "deletePod" => {
            let pod = pod_ref(cx, &o, pods);
            let g = int(
                cx,
                o.get("gracePeriodSeconds"),
                &o.at("gracePeriodSeconds"),
                0,
                i64::MAX.into(),
            );
            let bad_grace = o.get("gracePeriodSeconds").is_some() && g.is_none();
            if bad_grace {
                return None;
            }
            Some(Action::DeletePod {
                pod: pod?,
                grace_period_seconds: g.map(|g| g as i64),
            })
        }
        "forceDeletePod" => pod_ref(cx, &o, pods).map(|pod| Action::ForceDeletePod { pod }),
        "nodeShutdown" => Some(Action::NodeShutdown),
        "memoryPressure" => {
            let a = o.req(cx, "available");
            bytes(cx, a, &o.at("available"))
                .map(|available_bytes| Action::MemoryPressure { available_bytes })
        }
        "diskPressure" => {
            let fs = match o.get("filesystem") {
                None => Some(0),
                f => one_of(cx, f, &o.at("filesystem"), &["nodefs", "imagefs"]),
            };
            let available = bytes(cx, o.get("available"), &o.at("available"));
            let inodes_free = bytes(cx, o.get("inodesFree"), &o.at("inodesFree"));
            if o.get("available").is_none() && o.get("inodesFree").is_none() {
                cx.err(v.loc, p, "set `available`, `inodesFree` or both");
                return None;
            }
            let bad = (o.get("available").is_some() && available.is_none())
                || (o.get("inodesFree").is_some() && inodes_free.is_none());
            if bad {
                return None;
            }
            Some(Action::DiskPressure {
                imagefs: fs? == 1,
                available,
                inodes_free,
            })
        }
        "pidPressure" => {
            let a = o.req(cx, "available");
            bytes(cx, a, &o.at("available")).map(|available| Action::PidPressure { available })
        }
        "kubeletRestart" => {
            let downtime = dur(cx, o.get("downtime"), &o.at("downtime"));
            if o.get("downtime").is_some() && downtime.is_none() {
                return None;
            }
            Some(Action::KubeletRestart {
                downtime: downtime.unwrap_or(Dur::ZERO),
            })
        }
        "containerExit" => {
            let pod = pod_ref(cx, &o, pods);
            let cn = o.req(cx, "container");
            let container = string(cx, cn, &o.at("container"));
            let code = int(cx, o.get("exitCode"), &o.at("exitCode"), 0, 255);
            let bad_code = o.get("exitCode").is_some() && code.is_none();
            let (pod, container) = (pod?, container?);
            let decl = pods.by_name.get(pod.as_str())?;
            let known: Vec<&str> = decl
                .spec
                .init_containers
                .iter()
                .chain(&decl.spec.containers)
                .map(|c| c.name.as_str())
                .collect();
            if !known.contains(&container.as_str()) {
                let loc = cn.map_or(o.loc, |n| n.loc);
                cx.err(
                    loc,
                    &o.at("container"),
                    format!(
                        "pod `{pod}` has no container named `{container}` (containers: {})",
                        known.join(", ")
                    ),
                );
                return None;
            }
            if bad_code {
                return None;
            }
            Some(Action::ContainerExit {
                pod,
                container,
                exit_code: code.map_or(0, |c| c as i32),
            })
        }
        "updateStaticPod" | "removeStaticPod" | "restoreStaticPod" => {
            let pod = pod_ref(cx, &o, pods)?;
            if pods
                .by_name
                .get(pod.as_str())
                .is_some_and(|d| !d.static_pod)
            {
                let loc = o.get("pod").map_or(o.loc, |n| n.loc);
                cx.err(
                    loc,
                    &o.at("pod"),
                    format!("`{kind}` needs a static pod, and `{pod}` is not `static: true`"),
                );
                return None;
            }
            Some(match kind {
                "updateStaticPod" => Action::UpdateStaticPod { pod },
                "removeStaticPod" => Action::RemoveStaticPod { pod },
                _ => Action::RestoreStaticPod { pod },
            })
        }
        "setPodCondition" => set_pod_condition(cx, &o, pods),
        _ => pod_ref(cx, &o, pods).map(|pod| Action::RecreatePod { pod }),
    }
}

/// `setPodCondition: {pod, type, status}`: the type is a valid condition type that the
/// kubelet does not own (it would overwrite it at its next status write), the status one
/// of `True`, `False`, `Unknown`.
fn set_pod_condition(cx: &mut Cx, o: &Obj, pods: &KnownPods) -> Option<Action> {
    use crate::model::{ConditionStatus, PodCondition};
    let pod = pod_ref(cx, o, pods);
    let tn = o.req(cx, "type");
    let kind = super::conditions::condition_type(cx, tn, &o.at("type"));
    if let (Some(k), Some(n)) = (&kind, tn) {
        if k.by_kubelet() {
            cx.err(
                n.loc,
                &o.at("type"),
                format!(
                    "`{}` is owned by the kubelet, which rewrites it at every status write: \
                     set a readiness gate's condition (e.g. `example.com/lb-ready`) or \
                     `DisruptionTarget`",
                    k.as_str()
                ),
            );
            return None;
        }
    }
    let sn = o.req(cx, "status");
    let statuses = ["True", "False", "Unknown"];
    // An unquoted `True` or `false` reads as a YAML boolean: taken as the same status.
    let status = match sn.map(|n| &n.kind) {
        Some(Kind::Bool(true)) => Some(ConditionStatus::True),
        Some(Kind::Bool(false)) => Some(ConditionStatus::False),
        _ => super::primitives::one_of(cx, sn, &o.at("status"), &statuses)
            .and_then(|i| ConditionStatus::parse(statuses[i])),
    };
    Some(Action::SetPodCondition {
        pod: pod?,
        condition: PodCondition::new(kind?, status?),
    })
}

pub(super) fn expect(cx: &mut Cx, n: &Node) -> Option<Expect> {
    let o = obj(
        cx,
        n,
        "spec.expect",
        &["findings", "reach", "old"],
        Unknown::Error,
    )?;
    let findings = invariant_names(cx, o.get("findings"), &o.at("findings"));
    let rp = o.at("reach");
    let mut reach = Vec::new();
    for (i, r) in list(cx, o.get("reach"), &rp).iter().enumerate() {
        let ip = idx(&rp, i);
        if let Some(s) = string(cx, Some(r), &ip) {
            if crate::model::reach::by_name(&s).is_some() {
                reach.push(s);
            } else {
                let names: Vec<&str> = crate::model::reach::REACH.iter().map(|p| p.name).collect();
                let hint = suggest(&s, &names);
                cx.err(r.loc, &ip, format!("unknown reach point `{s}`{hint}"));
            }
        } else if r.kind == Kind::Null {
            expected(cx, r, &ip, "a reach point name");
        }
    }
    let old = o.get("old").and_then(|v| {
        let op = o.at("old");
        let oo = obj(cx, v, &op, &["behaviours", "findings"], Unknown::Error)?;
        let mut behaviours = BTreeMap::new();
        if let Some(b) = oo.get("behaviours") {
            let bp = oo.at("behaviours");
            switch_map(cx, b, &bp, &mut behaviours);
        }
        let findings = invariant_names(cx, oo.get("findings"), &oo.at("findings"));
        Some(ExpectOld {
            behaviours,
            findings,
        })
    });
    Some(Expect {
        findings,
        reach,
        old,
    })
}

/// A list of invariant names (checked against the oracle's table).
fn invariant_names(cx: &mut Cx, n: Option<&Node>, fp: &str) -> Vec<String> {
    let mut findings = Vec::new();
    for (i, f) in list(cx, n, fp).iter().enumerate() {
        let ip = idx(fp, i);
        match string(cx, Some(f), &ip) {
            Some(s) if s.is_empty() => cx.err(f.loc, &ip, "an invariant name must not be empty"),
            Some(s) if !cx.names.is_finding(&s) => {
                let hint = suggest_or_point(&s, &cx.names.invariants, Some("podsim invariants"));
                cx.err(f.loc, &ip, format!("unknown invariant `{s}`{hint}"));
            }
            Some(s) => findings.push(s),
            None if f.kind == Kind::Null => cx.err(f.loc, &ip, "expected an invariant name"),
            None => {}
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{problems, with};
    use crate::scenario::types::Action;

    #[test]
    fn timeline_is_sorted_stably() {
        let s = with("  timeline:\n    - {at: 2s, forceDeletePod: {pod: web}}\n    - {at: 1s, deletePod: {pod: web, gracePeriodSeconds: 0}}\n    - {at: 2s, containerExit: {pod: web, container: app, exitCode: 1}}\n")
            .unwrap()
            .scenario;
        let kinds: Vec<(u64, &str)> = s
            .timeline
            .iter()
            .map(|t| {
                let k = match &t.action {
                    Action::DeletePod { .. } => "delete",
                    Action::ForceDeletePod { .. } => "force",
                    Action::ContainerExit { .. } => "exit",
                    _ => "other",
                };
                (t.at.whole_secs(), k)
            })
            .collect();
        assert_eq!(kinds, [(1, "delete"), (2, "force"), (2, "exit")]);
        assert_eq!(
            problems("  timeline: [{at: 1s, containerExit: {pod: web, container: side}}]\n"),
            ["spec.timeline[0].containerExit.container: pod `web` has no container named `side` (containers: app)"]
        );
        assert_eq!(
            problems("  timeline: [{at: 1s, deletePod: {pod: web, gracePeriodSeconds: -1}}]\n"),
            ["spec.timeline[0].deletePod.gracePeriodSeconds: must be at least 0, found -1"]
        );
    }
}
