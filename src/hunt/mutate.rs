//! Mutations of a candidate tree: moving a timeline action or a pod's creation, nudging
//! one past another by a few milliseconds (real races are between events a few
//! milliseconds apart, not only at the same instant), inserting a disturbance from the
//! scenario vocabulary, CRI faults and latency tails, watch and status-write delays. Times
//! are drawn by the search, half of them near an event the candidate already has. A
//! mutation that makes the scenario invalid is not checked here: validation discards the
//! candidate.

use super::generate::{dist, pick, CRI_CALLS, EXIT_CODES, FAULT_CALLS, FAULT_ERRORS};
use super::tree::{dur_ms, flow, list, list_at, ms, obj_at};
use crate::scenario::Scenario;
use crate::sim::Stream;
use serde_json::{json, Value};

/// Timeline actions a candidate may hold at most (inserting stops there).
const MAX_ACTIONS: usize = 16;
/// The latest time a mutation puts an event at.
const LATEST_MS: u64 = 120_000;

/// A pod of the base scenario, as the timeline names it.
#[derive(Clone, Debug)]
struct PodRef {
    name: String,
    static_pod: bool,
    containers: Vec<String>,
}

/// What the mutations may name: the base scenario's pods (after `replicas` expansion) and
/// its horizon. Mutations never add or drop pods, so this holds for every candidate.
#[derive(Clone, Debug)]
pub(crate) struct Vocab {
    horizon_ms: u64,
    pods: Vec<PodRef>,
}

impl Vocab {
    pub(crate) fn of(sc: &Scenario) -> Vocab {
        Vocab {
            horizon_ms: sc.horizon.0 / 1_000_000,
            pods: sc
                .pods
                .iter()
                .map(|p| PodRef {
                    name: p.spec.name.clone(),
                    static_pod: p.static_pod,
                    containers: p.spec.containers.iter().map(|c| c.name.clone()).collect(),
                })
                .collect(),
        }
    }

    /// The latest time (ms) an event may be put at.
    fn latest(&self) -> u64 {
        self.horizon_ms.saturating_sub(1).min(LATEST_MS)
    }
}

/// Applies one random mutation to `tree`; returns what it did (for the finding's
/// description).
pub(crate) fn mutate(tree: &mut Value, v: &Vocab, s: &mut Stream) -> String {
    let actions = list(tree, &["spec", "timeline"]).map_or(0, Vec::len);
    loop {
        let done = match s.below(12) {
            0 if actions > 0 => move_action(tree, v, s, actions),
            1 if actions > 0 => remove_action(tree, s, actions),
            2 => move_creation(tree, v, s),
            3 | 4 => nudge(tree, v, s, actions),
            5..=7 if actions < MAX_ACTIONS => disturbance(tree, v, s),
            8 => fault(tree, s),
            9 | 10 => latency(tree, s),
            11 => api_delay(tree, s),
            _ => None,
        };
        if let Some(d) = done {
            return d;
        }
    }
}

/// Every event time (ms) the candidate has: timeline actions and pod creations.
fn event_times(tree: &Value) -> Vec<u64> {
    let mut t: Vec<u64> = list(tree, &["spec", "timeline"])
        .into_iter()
        .flatten()
        .filter_map(|a| a.get("at").and_then(dur_ms))
        .collect();
    t.extend(
        list(tree, &["spec", "pods"])
            .into_iter()
            .flatten()
            .map(|p| p.get("createAt").and_then(dur_ms).unwrap_or(0)),
    );
    t
}

/// A time for a new or moved event: uniform, or a little after an existing event.
fn time(tree: &Value, v: &Vocab, s: &mut Stream) -> u64 {
    let times = event_times(tree);
    let t = if !times.is_empty() && s.chance_ppm(500_000) {
        times[s.below(times.len() as u64) as usize] + s.between(0, 3_000)
    } else {
        s.between(0, v.latest())
    };
    t.min(v.latest())
}

fn move_action(tree: &mut Value, v: &Vocab, s: &mut Stream, n: usize) -> Option<String> {
    let i = s.below(n as u64) as usize;
    let t = time(tree, v, s);
    list_at(tree, &["spec", "timeline"])[i]["at"] = ms(t);
    Some(format!("moved timeline action {i} to {t}ms"))
}

fn remove_action(tree: &mut Value, s: &mut Stream, n: usize) -> Option<String> {
    let i = s.below(n as u64) as usize;
    list_at(tree, &["spec", "timeline"]).remove(i);
    Some(format!("removed timeline action {i}"))
}

fn move_creation(tree: &mut Value, v: &Vocab, s: &mut Stream) -> Option<String> {
    let n = list(tree, &["spec", "pods"]).map_or(0, Vec::len);
    if n == 0 {
        return None;
    }
    let j = s.below(n as u64) as usize;
    let t = time(tree, v, s).min(30_000);
    let pod = list_at(tree, &["spec", "pods"])[j].as_object_mut()?;
    pod.insert("createAt".into(), ms(t));
    Some(format!("moved the creation of pods entry {j} to {t}ms"))
}

/// Moves a timeline action or a pod creation by a few milliseconds, or next to another
/// event (a few milliseconds either side).
fn nudge(tree: &mut Value, v: &Vocab, s: &mut Stream, actions: usize) -> Option<String> {
    let pods = list(tree, &["spec", "pods"]).map_or(0, Vec::len);
    let total = actions + pods;
    if total == 0 {
        return None;
    }
    let k = s.below(total as u64) as usize;
    let (path, idx, field) = if k < actions {
        (["spec", "timeline"], k, "at")
    } else {
        (["spec", "pods"], k - actions, "createAt")
    };
    let cur = list(tree, &path)
        .and_then(|l| l[idx].get(field))
        .and_then(dur_ms)
        .unwrap_or(0);
    let times = event_times(tree);
    let delta = s.between(0, 20);
    let to = if s.chance_ppm(500_000) && !times.is_empty() {
        let other = times[s.below(times.len() as u64) as usize];
        if s.chance_ppm(500_000) {
            other + delta.min(5)
        } else {
            other.saturating_sub(delta.min(5))
        }
    } else if s.chance_ppm(500_000) {
        cur + delta
    } else {
        cur.saturating_sub(delta)
    };
    let to = to.min(v.latest());
    let entry = list_at(tree, &path)[idx].as_object_mut()?;
    entry.insert(field.into(), ms(to));
    Some(format!("nudged {} {idx} from {cur}ms to {to}ms", path[1]))
}

/// Inserts a timeline action from the scenario vocabulary, valid for the base's pods.
fn disturbance(tree: &mut Value, v: &Vocab, s: &mut Stream) -> Option<String> {
    let at = ms(time(tree, v, s));
    let plain: Vec<&PodRef> = v.pods.iter().filter(|p| !p.static_pod).collect();
    let statics: Vec<&PodRef> = v.pods.iter().filter(|p| p.static_pod).collect();
    let any = if v.pods.is_empty() {
        None
    } else {
        Some(&v.pods[s.below(v.pods.len() as u64) as usize])
    };
    let one = |s: &mut Stream, xs: &[&PodRef]| {
        (!xs.is_empty()).then(|| xs[s.below(xs.len() as u64) as usize].name.clone())
    };
    let action = match s.below(9) {
        0 | 1 => {
            let pod = one(s, &plain)?;
            match s.below(4) {
                0 => json!({"deletePod": {"pod": pod, "gracePeriodSeconds": 0}}),
                1 => json!({"deletePod": {"pod": pod, "gracePeriodSeconds": s.between(1, 40)}}),
                _ => json!({"deletePod": {"pod": pod}}),
            }
        }
        2 => json!({"forceDeletePod": {"pod": one(s, &plain)?}}),
        3 => json!({"recreatePod": {"pod": one(s, &plain)?}}),
        4 => {
            let p = any?;
            let c = p
                .containers
                .get(s.below(p.containers.len().max(1) as u64) as usize)?;
            json!({"containerExit": {"pod": p.name, "container": c, "exitCode": pick(s, &EXIT_CODES)}})
        }
        5 => json!({"kubeletRestart": {"downtime": ms(s.between(0, 20_000))}}),
        6 => {
            let pod = one(s, &statics)?;
            if s.chance_ppm(500_000) {
                json!({"updateStaticPod": {"pod": pod}})
            } else {
                json!({"removeStaticPod": {"pod": pod}})
            }
        }
        7 => json!({"nodeShutdown": {}}),
        _ => json!({"memoryPressure": {"available": pick(s, &["50Mi", "90Mi", "1Gi"])}}),
    };
    let mut entry = serde_json::Map::new();
    entry.insert("at".into(), at.clone());
    if let Value::Object(o) = action {
        entry.extend(o);
    }
    let what = serde_json::to_string(&entry).unwrap_or_default();
    list_at(tree, &["spec", "timeline"]).push(Value::Object(entry));
    Some(format!("inserted {what}"))
}

/// A CRI fault (probability up to 0.3) on one call, replacing the call's entry if any.
fn fault(tree: &mut Value, s: &mut Stream) -> Option<String> {
    let call = pick(s, &FAULT_CALLS);
    let mut entry = json!({"call": call, "probability": s.between(1, 300) as f64 / 1000.0});
    if s.chance_ppm(800_000) {
        entry["error"] = json!(pick(s, &FAULT_ERRORS));
    }
    let what = serde_json::to_string(&entry).unwrap_or_default();
    let faults = list_at(tree, &["spec", "runtime", "faults"]);
    faults.retain(|f| f.get("call").and_then(Value::as_str) != Some(call));
    faults.push(entry);
    Some(format!("fault {what}"))
}

/// A CRI call's latency distribution (tails included: the generator's four kinds).
fn latency(tree: &mut Value, s: &mut Stream) -> Option<String> {
    let call = pick(s, &CRI_CALLS);
    let max = if call == "pullImage" { 3_000 } else { 300 };
    let d = dist(s, max);
    obj_at(tree, &["spec", "runtime", "latencies"]).insert(call.into(), flow(&d));
    Some(format!("latency {call}: {d}"))
}

/// The API server's watch or status-write delay.
fn api_delay(tree: &mut Value, s: &mut Stream) -> Option<String> {
    let field = if s.chance_ppm(500_000) {
        "watchDelay"
    } else {
        "statusWriteDelay"
    };
    let d = dist(s, 500);
    obj_at(tree, &["spec", "api"]).insert(field.into(), flow(&d));
    Some(format!("api {field}: {d}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: b}\nspec:\n  horizon: 1m\n  pods:\n    - replicas: 2\n      template: {metadata: {name: web}, spec: {containers: [{name: app, image: i}]}}\n  timeline:\n    - {at: 1s, deletePod: {pod: web-0}}\n";

    /// Most mutations keep the scenario valid, and they are a pure function of the stream.
    #[test]
    fn mutations_are_deterministic_and_mostly_valid() {
        let sc = crate::load_str("b.yaml", BASE, &[])
            .expect("valid")
            .scenario;
        let v = Vocab::of(&sc);
        let base = super::super::tree::parse(BASE).expect("yaml");
        let mut valid = 0;
        for i in 0..200 {
            let mut a = base.clone();
            let mut b = base.clone();
            let da = mutate(&mut a, &v, &mut Stream::new(i, "m"));
            let db = mutate(&mut b, &v, &mut Stream::new(i, "m"));
            assert_eq!((da, &a), (db, &b));
            let text = serde_json::to_string(&a).expect("json");
            valid += u32::from(crate::load_str("c.yaml", &text, &[]).is_ok());
        }
        assert!(valid >= 180, "only {valid} of 200 mutants validate");
    }
}
