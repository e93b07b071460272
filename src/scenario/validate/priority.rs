//! `spec.priorityClasses` and a pod's `priorityClassName`, resolved to its priority as the
//! API server does it before the kubelet ever sees the pod. Follows v1.31: the Priority
//! admission plugin (`plugin/pkg/admission/priority/admission.go`: the class named by the
//! pod gives its priority, a missing class rejects the pod, and so does a `priority` the pod
//! carries that differs from its class's), the built-in classes of `pkg/apis/scheduling`
//! (`types.go`), and PriorityClass validation (`pkg/apis/scheduling/validation`: a DNS
//! subdomain name, `system-` reserved for the built-in classes, user values at most one
//! billion).

use super::primitives::{idx, int, list, name, obj, suggest, Cx, Obj, Unknown};
use crate::scenario::schema::Node;
use std::collections::BTreeMap;

/// `scheduling.SystemCriticalPriority` + 1000: the `system-node-critical` class.
pub(crate) const SYSTEM_NODE_CRITICAL: i32 = 2_000_001_000;
/// `scheduling.SystemCriticalPriority`: the `system-cluster-critical` class.
pub(crate) const SYSTEM_CLUSTER_CRITICAL: i32 = 2_000_000_000;
/// `scheduling.HighestUserDefinablePriority`.
pub(crate) const HIGHEST_USER_DEFINABLE: i32 = 1_000_000_000;

/// Every class a pod may name: the built-in ones and those the scenario declares.
pub(super) struct PriorityClasses {
    values: BTreeMap<String, i32>,
    /// False when a declaration was invalid: an unknown name may then be that class.
    complete: bool,
}

impl PriorityClasses {
    fn builtin() -> PriorityClasses {
        let values = [
            ("system-node-critical", SYSTEM_NODE_CRITICAL),
            ("system-cluster-critical", SYSTEM_CLUSTER_CRITICAL),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v))
        .collect();
        PriorityClasses {
            values,
            complete: true,
        }
    }
}

/// `spec.priorityClasses: [{name, value}]`.
pub(super) fn priority_classes(cx: &mut Cx, n: Option<&Node>) -> PriorityClasses {
    let mut out = PriorityClasses::builtin();
    let lp = "spec.priorityClasses";
    for (i, item) in list(cx, n, lp).iter().enumerate() {
        let p = idx(lp, i);
        let Some(o) = obj(cx, item, &p, &["name", "value"], Unknown::Error) else {
            out.complete = false;
            continue;
        };
        let nn = o.req(cx, "name");
        let class = name(cx, nn, &o.at("name"), true, 253);
        let vn = o.req(cx, "value");
        let max = HIGHEST_USER_DEFINABLE.into();
        let value = int(cx, vn, &o.at("value"), i32::MIN.into(), max).map(|v| v as i32);
        let (Some(class), Some(value), Some(nn)) = (class, value, nn) else {
            out.complete = false;
            continue;
        };
        if class.starts_with("system-") {
            let m = format!(
                "`{class}`: names starting with `system-` are reserved for the built-in \
                 classes (system-node-critical, system-cluster-critical)"
            );
            cx.err(nn.loc, &o.at("name"), m);
            out.complete = false;
        } else if let std::collections::btree_map::Entry::Vacant(e) =
            out.values.entry(class.clone())
        {
            e.insert(value);
        } else {
            let m = format!("priority class `{class}` is declared twice");
            cx.err(nn.loc, &o.at("name"), m);
        }
    }
    out
}

/// The pod's priority after admission: its class's value when it names one (an unknown
/// class, or a `priority` that differs from the class's, is an error as the API server
/// rejects the pod), else `priority` as given (0 if absent).
pub(super) fn resolve(
    cx: &mut Cx,
    classes: &PriorityClasses,
    s: &Obj,
    class: Option<&str>,
    priority: Option<i32>,
) -> i32 {
    let Some(class) = class else {
        return priority.unwrap_or(0);
    };
    let Some(&value) = classes.values.get(class) else {
        if classes.complete {
            if let Some(n) = s.get("priorityClassName") {
                let known: Vec<&str> = classes.values.keys().map(String::as_str).collect();
                let m = format!(
                    "no priority class `{class}` (the API server would reject the pod; \
                     declare it in spec.priorityClasses){}",
                    suggest(class, &known)
                );
                cx.err(n.loc, &s.at("priorityClassName"), m);
            }
        }
        return priority.unwrap_or(0);
    };
    if let (Some(given), Some(n)) = (priority, s.get("priority")) {
        if given != value {
            let m = format!(
                "{given} differs from {value}, the value of priority class `{class}`: the API \
                 server rejects a pod whose priority is not its class's (leave `priority` out)"
            );
            cx.err(n.loc, &s.at("priority"), m);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::super::load_str;

    fn priorities(pods: &str) -> Vec<i32> {
        let text = format!(
            "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {{name: m}}\nspec:\n  priorityClasses: [{{name: low, value: -5}}]\n  pods:\n{pods}"
        );
        let l = load_str("m.yaml", &text, &[], &crate::names()).unwrap();
        l.scenario.pods.iter().map(|p| p.spec.priority).collect()
    }

    #[test]
    fn class_names_resolve_to_their_values() {
        let t = |extra: &str, n: &str| {
            format!("    - template: {{metadata: {{name: {n}}}, spec: {{{extra}containers: [{{name: app}}]}}}}\n")
        };
        let pods = [
            t("priorityClassName: system-node-critical, ", "a"),
            t("priorityClassName: system-cluster-critical, ", "b"),
            t("priorityClassName: low, ", "c"),
            t("priorityClassName: low, priority: -5, ", "d"),
            t("priority: 7, ", "e"),
            t("", "f"),
        ]
        .concat();
        assert_eq!(
            priorities(&pods),
            [2_000_001_000, 2_000_000_000, -5, -5, 7, 0]
        );
    }
}
