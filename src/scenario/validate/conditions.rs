//! Pod condition types in scenario files: `spec.readinessGates` of a pod template and the
//! timeline's `setPodCondition`.

use super::primitives::{idx, list, obj, string, Cx, Obj, Unknown};
use crate::model::{check_condition_type, PodConditionType, ReadinessGates};
use crate::scenario::schema::Node;

/// A condition type (a qualified name, as API validation requires); a problem if not.
pub(super) fn condition_type(
    cx: &mut Cx,
    n: Option<&Node>,
    path: &str,
) -> Option<PodConditionType> {
    let s = string(cx, n, path)?;
    match check_condition_type(&s) {
        Ok(()) => Some(PodConditionType::parse(&s)),
        Err(why) => {
            if let Some(n) = n {
                cx.err(
                    n.loc,
                    path,
                    format!("`{s}` is not a valid condition type: {why}"),
                );
            }
            None
        }
    }
}

/// `spec.readinessGates: [{conditionType}]`.
pub(super) fn readiness_gates(cx: &mut Cx, s: &Obj) -> ReadinessGates {
    let lp = s.at("readinessGates");
    let mut out = Vec::new();
    for (i, item) in list(cx, s.get("readinessGates"), &lp).iter().enumerate() {
        let ip = idx(&lp, i);
        let Some(o) = obj(cx, item, &ip, &["conditionType"], Unknown::Note) else {
            continue;
        };
        let n = o.req(cx, "conditionType");
        if let Some(t) = condition_type(cx, n, &o.at("conditionType")) {
            out.push(t);
        }
    }
    ReadinessGates(out)
}

#[cfg(test)]
mod tests {
    use super::super::test_util::{problems, with};
    use super::super::{load_str, LoadError, Loaded};
    use crate::model::{ConditionStatus, PodConditionType};
    use crate::scenario::types::Action;

    fn gates(g: &str) -> Result<Loaded, LoadError> {
        let text = format!(
            "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {{name: m}}\nspec:\n  pods:\n    - template: {{metadata: {{name: web}}, spec: {{readinessGates: {g}, containers: [{{name: app}}]}}}}\n"
        );
        load_str("m.yaml", &text, &[], &crate::names())
    }

    fn messages(r: Result<Loaded, LoadError>) -> Vec<String> {
        r.err()
            .map(|e| {
                e.problems
                    .iter()
                    .map(|p| format!("{}: {}", p.path, p.message))
                    .collect()
            })
            .unwrap_or_default()
    }

    #[test]
    fn readiness_gates_are_modelled_and_their_types_checked() {
        let l = gates("[{conditionType: example.com/lb-ready}]").unwrap();
        assert!(l.notes.is_empty(), "{:?}", l.notes);
        assert_eq!(
            l.scenario.pods[0].spec.readiness_gates.0,
            [PodConditionType::parse("example.com/lb-ready")]
        );
        let m = messages(gates("[{conditionType: \"Bad Type\"}]"));
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].starts_with("spec.pods[0].template.spec.readinessGates[0].conditionType: `Bad Type` is not a valid condition type"),
            "{m:?}"
        );
        let m = messages(gates("[{}]"));
        assert!(
            m[0].contains("missing required field `conditionType`"),
            "{m:?}"
        );
    }

    #[test]
    fn set_pod_condition_is_validated() {
        let l = with("  timeline:\n    - {at: 5s, setPodCondition: {pod: web, type: example.com/g, status: True}}\n").unwrap();
        assert_eq!(
            l.scenario.timeline[0].action,
            Action::SetPodCondition {
                pod: "web".into(),
                condition: crate::model::PodCondition::new(
                    PodConditionType::parse("example.com/g"),
                    ConditionStatus::True
                ),
            }
        );
        let p = problems("  timeline:\n    - {at: 5s, setPodCondition: {pod: web, type: Ready, status: \"True\"}}\n");
        assert_eq!(p.len(), 1, "{p:?}");
        assert!(
            p[0].starts_with(
                "spec.timeline[0].setPodCondition.type: `Ready` is owned by the kubelet"
            ),
            "{p:?}"
        );
        let p = problems(
            "  timeline:\n    - {at: 5s, setPodCondition: {pod: nope, type: x/y, status: Maybe}}\n",
        );
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("no pod named `nope`"), "{p:?}");
        assert!(p[1].contains("status"), "{p:?}");
        // DisruptionTarget may be set by others (the scheduler, the taint manager).
        assert!(problems("  timeline:\n    - {at: 5s, setPodCondition: {pod: web, type: DisruptionTarget, status: \"True\"}}\n").is_empty());
    }
}
