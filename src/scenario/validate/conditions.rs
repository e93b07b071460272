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
