//! `spec.kubelet.featureGates`: gate name -> bool, checked against the release of the
//! scenario's profile as the kubelet's `featuregate.Set` checks its `--feature-gates`
//! (`k8s.io/component-base/featuregate`): an unknown gate, a gate the release does not have
//! (yet, or any more), and a locked gate set against its default keep the kubelet from
//! starting, so each is an error. Also the gate values the rest of validation asks for:
//! a feature used while its gate is off is an error naming the gate.

use super::primitives::{boolean, expected, join, suggest_or_point, Cx};
use crate::scenario::schema::{Kind, Loc, Node};
use std::collections::BTreeMap;

/// Reads `featureGates` (node `n` at path `p`) for `profile` into `out`.
pub(super) fn feature_gates(
    cx: &mut Cx,
    n: &Node,
    p: &str,
    profile: &str,
    out: &mut BTreeMap<String, bool>,
) {
    let Kind::Map(entries) = &n.kind else {
        expected(
            cx,
            n,
            p,
            "a mapping of feature gate names to `true`/`false`",
        );
        return;
    };
    let names = cx.names;
    for (key, v) in entries {
        let kp = join(p, &key.name);
        let Some(val) = boolean(cx, Some(v), &kp) else {
            continue;
        };
        let Some(g) = names.gate(&key.name) else {
            let all: Vec<&str> = names
                .gates
                .iter()
                .flat_map(|g| g.names.iter().copied())
                .collect();
            let hint = suggest_or_point(&key.name, &all, None);
            let m = format!(
                "unknown feature gate `{}` (podsim models the gates that change pod lifecycles){hint}",
                key.name
            );
            cx.err(key.loc, &kp, m);
            continue;
        };
        let Some(on) = g.on.iter().find(|o| o.profile == profile) else {
            let why = if g.removed_on.contains(&profile) {
                "it was removed after GA, the feature is always on"
            } else {
                "the kubelet would refuse to start"
            };
            let m = format!(
                "profile {profile}'s release has no feature gate `{}` ({why}): {}",
                key.name, g.history
            );
            cx.err(key.loc, &kp, m);
            continue;
        };
        if on.name != key.name {
            let m = format!(
                "on profile {profile} this feature gate is called `{}` (the kubelet would refuse to start with `{}`)",
                on.name, key.name
            );
            cx.err(key.loc, &kp, m);
            continue;
        }
        if on.locked && val != on.default {
            let m = format!(
                "`{}` is {} and locked to `{}` on profile {profile}: the kubelet refuses to start with it set to `{val}`",
                key.name, on.stage, on.default
            );
            cx.err(v.loc, &kp, m);
            continue;
        }
        if !val && !g.off_built {
            let m = format!(
                "`{}: false` is not built yet: podsim does not model the kubelet with this gate off ({})",
                key.name, g.history
            );
            cx.err(v.loc, &kp, m);
            continue;
        }
        out.insert(key.name.clone(), val);
    }
    if !out.is_empty() {
        let m = resolved_note(names, profile, out);
        cx.note(n.loc, p, m);
    }
}

/// The note `podsim check` (and every command loading the scenario) prints for a scenario
/// that sets gates: the gates set, the switches they set, the others at their defaults.
fn resolved_note(
    names: &crate::scenario::Names,
    profile: &str,
    set: &BTreeMap<String, bool>,
) -> String {
    let (mut mine, mut rest) = (Vec::new(), Vec::new());
    for g in &names.gates {
        let Some(on) = g.on.iter().find(|o| o.profile == profile) else {
            continue;
        };
        match set.get(on.name) {
            Some(&v) => {
                let sw = match g.switch {
                    Some(sw) if v != on.default => format!(" (sets behaviour {sw}={v})"),
                    _ => String::new(),
                };
                mine.push(format!("{}={v}{sw}", on.name));
            }
            None => rest.push(format!("{}={}", on.name, on.default)),
        }
    }
    format!(
        "feature gates on profile {profile}: {}; at the release's defaults: {}",
        mine.join(", "),
        if rest.is_empty() {
            "none".to_owned()
        } else {
            rest.join(", ")
        }
    )
}

/// For every gate that is off on `profile` with the scenario's `gates`, why (for the
/// errors of the features it refuses), by the gate's newest name.
pub(super) fn gates_off(
    cx: &Cx,
    profile: &str,
    gates: &BTreeMap<String, bool>,
) -> BTreeMap<&'static str, String> {
    let mut off = BTreeMap::new();
    for g in &cx.names.gates {
        let why = match g.on.iter().find(|o| o.profile == profile) {
            None if g.removed_on.contains(&profile) => continue,
            None => format!("profile {profile}'s release does not have it ({})", g.history),
            Some(on) => match gates.get(on.name) {
                Some(false) => format!("`spec.kubelet.featureGates.{}` is false", on.name),
                Some(true) => continue,
                None if on.default => continue,
                None => format!(
                    "it is off by default on profile {profile} ({}); `featureGates: {{{}: true}}` turns it on",
                    g.history, on.name
                ),
            },
        };
        off.insert(g.name, why);
    }
    off
}

/// An error for a use (at `loc`, path `p`, described by `what`) of a feature that gate
/// `gate` allows, if the gate is off.
pub(super) fn needs(cx: &mut Cx, gate: &str, loc: Loc, p: &str, what: &str) {
    if let Some(why) = cx.gates_off.get(gate).cloned() {
        let profile = &cx.gates_profile;
        let m = format!(
            "{what} is not available on profile {profile}: it needs the feature gate {gate}, which is off: {why}"
        );
        cx.err(loc, p, m);
    }
}
