//! Mutations of a candidate tree: moving a timeline action or a pod's creation, nudging
//! one past another by a few milliseconds (real races are between events a few
//! milliseconds apart, not only at the same instant), inserting a disturbance from the
//! scenario vocabulary, CRI faults and latency tails, watch and status-write delays. Times
//! are drawn by the search, half of them near an event the candidate already has. A
//! mutation that makes the scenario invalid is not checked here: validation discards the
//! candidate.

use super::doc::{dur_of, flow, list, list_at, ms, obj_at, MS};
use super::generate::{dist, pick, CRI_CALLS, EXIT_CODES, FAULT_CALLS, FAULT_ERRORS};
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

/// One change of the guided search's seed phase: a disturbance of one kind, a CRI fault,
/// a latency distribution or an API delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Change {
    Disturb(Disturbance),
    Fault,
    Latency,
    ApiDelay,
}

impl Change {
    fn apply(self, t: &mut Value, v: &Vocab, s: &mut Stream) -> Option<String> {
        match self {
            Change::Disturb(d) => insert_disturbance(t, v, s, d),
            Change::Fault => fault(t, s),
            Change::Latency => latency(t, s),
            Change::ApiDelay => api_delay(t, s),
        }
    }
}

/// The guided search's first inputs: every kind of change once, in the vocabulary's order
/// (each [`Disturbance`] that has a pod to act on, then a CRI fault, a latency
/// distribution and an API delay). With `stack` 1, one change per input; with more, the
/// kinds are shuffled (by `s`, so by the hunt seed) and stacked `stack` to an input, so
/// that every kind is tried in a third (or less) of the runs and kinds meet each other.
/// Each input comes with what it did.
pub(crate) fn seed_inputs(
    base: &Value,
    v: &Vocab,
    s: &mut Stream,
    stack: usize,
) -> Vec<(Value, String)> {
    let mut changes: Vec<Change> = Disturbance::ALL
        .into_iter()
        .map(Change::Disturb)
        .chain([Change::Fault, Change::Latency, Change::ApiDelay])
        .collect();
    let mut out = Vec::new();
    if stack <= 1 {
        for c in changes {
            let mut t = base.clone();
            if let Some(what) = c.apply(&mut t, v, s) {
                out.push((t, what));
            }
        }
        return out;
    }
    changes.retain(|c| match c {
        Change::Disturb(d) => d.applies(v),
        _ => true,
    });
    for i in (1..changes.len()).rev() {
        let j = s.below(i as u64 + 1) as usize;
        changes.swap(i, j);
    }
    for group in changes.chunks(stack) {
        let mut t = base.clone();
        let whats: Vec<String> = group.iter().filter_map(|c| c.apply(&mut t, v, s)).collect();
        if !whats.is_empty() {
            out.push((t, whats.join("; ")));
        }
    }
    out
}

/// Splicing (as coverage-guided fuzzers splice two queue entries): appends the timeline
/// actions of `other` to `tree`'s (up to the cap), so disturbances that reached new
/// coverage in two different inputs meet in one. `None` when `other` has none to give.
pub(crate) fn splice(tree: &mut Value, other: &Value) -> Option<String> {
    let theirs = list(other, &["spec", "timeline"])?.clone();
    let ours = list_at(tree, &["spec", "timeline"]);
    let room = MAX_ACTIONS.saturating_sub(ours.len());
    let n = theirs.len().min(room);
    if n == 0 {
        return None;
    }
    ours.extend(theirs.into_iter().take(n));
    Some(format!(
        "spliced in {n} timeline actions of another corpus input"
    ))
}

/// Every event time (ms) the candidate has: timeline actions and pod creations.
fn event_times(tree: &Value) -> Vec<u64> {
    let mut t: Vec<u64> = list(tree, &["spec", "timeline"])
        .into_iter()
        .flatten()
        .filter_map(|a| dur_of(a.get("at")).map(|ns| ns / MS))
        .collect();
    t.extend(
        list(tree, &["spec", "pods"])
            .into_iter()
            .flatten()
            .map(|p| dur_of(p.get("createAt")).map_or(0, |ns| ns / MS)),
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
    let cur = dur_of(list(tree, &path).and_then(|l| l[idx].get(field))).map_or(0, |ns| ns / MS);
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

/// The kinds of disturbance a mutation inserts: every timeline action of the scenario
/// vocabulary (deletes with the pod's grace, a grace of 0 and a drawn one counted apart,
/// and a static pod's removal followed by the restore of the same manifest, which brings
/// the same UID back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Disturbance {
    Delete,
    DeleteGraceZero,
    DeleteGrace,
    ForceDelete,
    Recreate,
    ContainerExit,
    KubeletRestart,
    UpdateStatic,
    RemoveStatic,
    RemoveRestoreStatic,
    NodeShutdown,
    MemoryPressure,
    DiskPressure,
    PidPressure,
    SetPodCondition,
}

impl Disturbance {
    pub(crate) const ALL: [Disturbance; 15] = [
        Disturbance::Delete,
        Disturbance::DeleteGraceZero,
        Disturbance::DeleteGrace,
        Disturbance::ForceDelete,
        Disturbance::Recreate,
        Disturbance::ContainerExit,
        Disturbance::KubeletRestart,
        Disturbance::UpdateStatic,
        Disturbance::RemoveStatic,
        Disturbance::RemoveRestoreStatic,
        Disturbance::NodeShutdown,
        Disturbance::MemoryPressure,
        Disturbance::DiskPressure,
        Disturbance::PidPressure,
        Disturbance::SetPodCondition,
    ];

    /// Whether the base has a pod this kind acts on (node-wide kinds always apply).
    fn applies(self, v: &Vocab) -> bool {
        use Disturbance::*;
        let plain = v.pods.iter().any(|p| !p.static_pod);
        let statics = v.pods.iter().any(|p| p.static_pod);
        match self {
            Delete | DeleteGraceZero | DeleteGrace | ForceDelete | Recreate | SetPodCondition => {
                plain
            }
            UpdateStatic | RemoveStatic | RemoveRestoreStatic => statics,
            ContainerExit => !v.pods.is_empty(),
            KubeletRestart | NodeShutdown | MemoryPressure | DiskPressure | PidPressure => true,
        }
    }

    /// A kind drawn with the weights random mutations use: the pod-level actions
    /// (deletes, exits) most often.
    fn draw(s: &mut Stream) -> Disturbance {
        use Disturbance::*;
        match s.below(20) {
            0 | 1 => Delete,
            2 => DeleteGraceZero,
            3 => DeleteGrace,
            4 | 5 => ForceDelete,
            6 | 7 => Recreate,
            8 | 9 => ContainerExit,
            10 | 11 => KubeletRestart,
            12 => UpdateStatic,
            13 => RemoveStatic,
            14 => RemoveRestoreStatic,
            15 => NodeShutdown,
            16 | 17 => MemoryPressure,
            18 => match s.below(3) {
                0 => DiskPressure,
                1 => PidPressure,
                _ => SetPodCondition,
            },
            _ => {
                if s.chance_ppm(500_000) {
                    RemoveRestoreStatic
                } else {
                    UpdateStatic
                }
            }
        }
    }
}

/// Inserts a timeline action from the scenario vocabulary, of a kind drawn at random.
fn disturbance(tree: &mut Value, v: &Vocab, s: &mut Stream) -> Option<String> {
    let d = Disturbance::draw(s);
    insert_disturbance(tree, v, s, d)
}

/// Inserts a disturbance of kind `d` for one of the base's pods (`None`: the base has no
/// pod it applies to, or the timeline is full).
pub(crate) fn insert_disturbance(
    tree: &mut Value,
    v: &Vocab,
    s: &mut Stream,
    d: Disturbance,
) -> Option<String> {
    use Disturbance::*;
    let actions = list(tree, &["spec", "timeline"]).map_or(0, Vec::len);
    if actions >= MAX_ACTIONS || (d == RemoveRestoreStatic && actions + 1 >= MAX_ACTIONS) {
        return None;
    }
    let t = time(tree, v, s);
    let plain: Vec<&PodRef> = v.pods.iter().filter(|p| !p.static_pod).collect();
    let statics: Vec<&PodRef> = v.pods.iter().filter(|p| p.static_pod).collect();
    let one = |s: &mut Stream, xs: &[&PodRef]| {
        (!xs.is_empty()).then(|| xs[s.below(xs.len() as u64) as usize].name.clone())
    };
    let mut extra = None;
    let action = match d {
        Delete => json!({"deletePod": {"pod": one(s, &plain)?}}),
        DeleteGraceZero => json!({"deletePod": {"pod": one(s, &plain)?, "gracePeriodSeconds": 0}}),
        DeleteGrace => {
            let pod = one(s, &plain)?;
            json!({"deletePod": {"pod": pod, "gracePeriodSeconds": s.between(1, 40)}})
        }
        ForceDelete => json!({"forceDeletePod": {"pod": one(s, &plain)?}}),
        Recreate => json!({"recreatePod": {"pod": one(s, &plain)?}}),
        ContainerExit => {
            if v.pods.is_empty() {
                return None;
            }
            let p = &v.pods[s.below(v.pods.len() as u64) as usize];
            let c = p
                .containers
                .get(s.below(p.containers.len().max(1) as u64) as usize)?;
            json!({"containerExit": {"pod": p.name, "container": c, "exitCode": pick(s, &EXIT_CODES)}})
        }
        KubeletRestart => json!({"kubeletRestart": {"downtime": ms(s.between(0, 20_000))}}),
        UpdateStatic => json!({"updateStaticPod": {"pod": one(s, &statics)?}}),
        RemoveStatic => json!({"removeStaticPod": {"pod": one(s, &statics)?}}),
        RemoveRestoreStatic => {
            // The same manifest back after a short while: the same UID, often while the
            // old instance is still terminating.
            let pod = one(s, &statics)?;
            let back = (t + s.between(0, 3_000)).min(v.latest());
            extra = Some(json!({"at": ms(back), "restoreStaticPod": {"pod": pod}}));
            json!({"removeStaticPod": {"pod": pod}})
        }
        NodeShutdown => json!({"nodeShutdown": {}}),
        MemoryPressure => {
            json!({"memoryPressure": {"available": pick(s, &["50Mi", "90Mi", "1Gi"])}})
        }
        DiskPressure => json!({"diskPressure": {
            "filesystem": pick(s, &["nodefs", "imagefs"]),
            "available": pick(s, &["0", "100Mi", "1Gi"]),
        }}),
        PidPressure => json!({"pidPressure": {"available": pick(s, &[0u64, 50, 1000])}}),
        SetPodCondition => json!({"setPodCondition": {
            "pod": one(s, &plain)?,
            "type": "DisruptionTarget",
            "status": pick(s, &["True", "False"]),
        }}),
    };
    let mut entry = serde_json::Map::new();
    entry.insert("at".into(), ms(t));
    if let Value::Object(o) = action {
        entry.extend(o);
    }
    let mut what = serde_json::to_string(&entry).unwrap_or_default();
    let timeline = list_at(tree, &["spec", "timeline"]);
    timeline.push(Value::Object(entry));
    if let Some(x) = extra {
        what = format!(
            "{what} and {}",
            serde_json::to_string(&x).unwrap_or_default()
        );
        timeline.push(x);
    }
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

    /// The vocabulary and the tree of a base scenario's text.
    fn vocab_and_tree(text: &str) -> (Vocab, Value) {
        let sc = crate::load_str("b.yaml", text, &[])
            .expect("valid")
            .scenario;
        let v = Vocab::of(&sc);
        (v, super::super::doc::parse(text).expect("yaml"))
    }

    const BASE: &str = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: b}\nspec:\n  horizon: 1m\n  pods:\n    - replicas: 2\n      template: {metadata: {name: web}, spec: {containers: [{name: app, image: i}]}}\n  timeline:\n    - {at: 1s, deletePod: {pod: web-0}}\n";

    /// Most mutations keep the scenario valid, and they are a pure function of the stream.
    #[test]
    fn mutations_are_deterministic_and_mostly_valid() {
        let (v, base) = vocab_and_tree(BASE);
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

    /// Stacked seed inputs hold every kind that applies to the base exactly once, at most
    /// `stack` to an input, every input valid; the grouping follows the stream.
    #[test]
    fn stacked_seed_inputs_cover_every_kind_once() {
        let text = std::fs::read_to_string("scenarios/hunt/static-node.yaml").expect("base");
        let (v, base) = vocab_and_tree(&text);
        let seeds = seed_inputs(&base, &v, &mut Stream::new(1, "s"), 4);
        // 15 disturbance kinds and 3 other changes, four to an input.
        assert_eq!(seeds.len(), 5);
        let changes: usize = seeds.iter().map(|(_, w)| w.split("; ").count()).sum();
        assert_eq!(changes, Disturbance::ALL.len() + 3);
        for (t, what) in &seeds {
            assert!(what.split("; ").count() <= 4, "{what}");
            let text = serde_json::to_string(t).expect("json");
            assert!(crate::load_str("c.yaml", &text, &[]).is_ok(), "{what}");
        }
        let again = seed_inputs(&base, &v, &mut Stream::new(1, "s"), 4);
        assert_eq!(seeds, again);
        let other = seed_inputs(&base, &v, &mut Stream::new(2, "s"), 4);
        assert_ne!(seeds, other);
        // No static pod in BASE: its three static-pod kinds are left out.
        let (v, base) = vocab_and_tree(BASE);
        let seeds = seed_inputs(&base, &v, &mut Stream::new(1, "s"), 4);
        let changes: usize = seeds.iter().map(|(_, w)| w.split("; ").count()).sum();
        assert_eq!(changes, Disturbance::ALL.len());
    }

    /// Splicing appends the other input's timeline actions, up to the cap.
    #[test]
    fn splice_appends_timeline_actions() {
        let mut a = super::super::doc::parse(BASE).expect("yaml");
        let b = a.clone();
        assert!(splice(&mut a, &b).is_some());
        assert_eq!(list(&a, &["spec", "timeline"]).map(Vec::len), Some(2));
        let empty = super::super::doc::parse("spec: {}").expect("yaml");
        assert!(splice(&mut a, &empty).is_none());
    }

    /// The seed inputs hold one change per kind that applies to the base (no static pod:
    /// no static-pod actions), every one valid; a removal and restore come as a pair.
    #[test]
    fn seed_inputs_cover_every_kind_that_applies() {
        let (v, base) = vocab_and_tree(BASE);
        let seeds = seed_inputs(&base, &v, &mut Stream::new(1, "s"), 1);
        // No static pod: the three static-pod kinds drop out; fault, latency, delay come in.
        assert_eq!(seeds.len(), Disturbance::ALL.len());
        for (t, what) in &seeds {
            let text = serde_json::to_string(t).expect("json");
            assert!(crate::load_str("c.yaml", &text, &[]).is_ok(), "{what}");
        }
        let text = std::fs::read_to_string("scenarios/hunt/static-node.yaml").expect("base");
        let (v, base) = vocab_and_tree(&text);
        let seeds = seed_inputs(&base, &v, &mut Stream::new(1, "s"), 1);
        assert_eq!(seeds.len(), Disturbance::ALL.len() + 3);
        let (pair, what) = seeds
            .iter()
            .find(|(_, w)| w.contains("restoreStaticPod"))
            .expect("a removal and restore");
        assert!(what.contains("removeStaticPod"), "{what}");
        let timeline = list(pair, &["spec", "timeline"]).expect("timeline");
        assert_eq!(timeline.len(), 2);
        for (t, what) in &seeds {
            let text = serde_json::to_string(t).expect("json");
            assert!(crate::load_str("c.yaml", &text, &[]).is_ok(), "{what}");
        }
    }
}
