//! `spec.kubelet` (profile, behaviour switches, configuration, timing), `spec.node`,
//! `spec.runtime` and `spec.api`.

use super::dist::dist;
use super::primitives::{
    boolean, bytes, dur, expected, idx, int, join, list, milli, obj, one_of, pos_dur, present,
    probability, profile, suggest_or_point, Cx, Unknown,
};
use crate::model::{CriCall, CriError};
use crate::scenario::defaults;
use crate::scenario::not_built_yet::Capability;
use crate::scenario::schema::{Kind, Node};
use crate::scenario::types::{
    ApiSpec, Fault, FsSpec, KubeletConfig, KubeletSpec, NodeSpec, RuntimeSpec, Threshold,
};
use crate::sim::Dur;
use std::collections::BTreeMap;

const EVICTION_SIGNALS: [&str; 9] = [
    "memory.available",
    "allocatableMemory.available",
    "nodefs.available",
    "nodefs.inodesFree",
    "imagefs.available",
    "imagefs.inodesFree",
    "containerfs.available",
    "containerfs.inodesFree",
    "pid.available",
];

/// Accepted signals without observations: their thresholds are never met.
const UNOBSERVED_SIGNALS: [&str; 3] = [
    "allocatableMemory.available",
    "containerfs.available",
    "containerfs.inodesFree",
];

/// Entries of a `signal -> value` map (evictionHard and friends), with checked signal names.
fn signal_map<'n>(cx: &mut Cx, n: Option<&'n Node>, path: &str) -> Vec<(String, &'n Node, String)> {
    let Some(n) = present(n) else {
        return Vec::new();
    };
    let Some(o) = obj(cx, n, path, &EVICTION_SIGNALS, Unknown::Error) else {
        return Vec::new();
    };
    for (k, _) in o.entries.iter() {
        if UNOBSERVED_SIGNALS.contains(&k.name.as_str()) {
            cx.note(
                k.loc,
                &o.at(&k.name),
                "no effect: podsim has no observation of this signal, so its threshold is never met (as upstream treats a signal it cannot observe)",
            );
        }
    }
    o.entries
        .iter()
        .filter(|(k, _)| EVICTION_SIGNALS.contains(&k.name.as_str()))
        .map(|(k, v)| (k.name.clone(), v, o.at(&k.name)))
        .collect()
}

fn threshold(cx: &mut Cx, n: &Node, path: &str) -> Option<Threshold> {
    if let Kind::Str(s) = &n.kind {
        if let Some(pct) = s.strip_suffix('%') {
            return match pct.trim().parse::<f64>() {
                Ok(p) if (0.0..=100.0).contains(&p) => {
                    Some(Threshold::PercentPpm((p * 1e4).round() as u32))
                }
                _ => {
                    cx.err(
                        n.loc,
                        path,
                        format!("`{s}` is not a percentage between 0% and 100%"),
                    );
                    None
                }
            };
        }
    }
    bytes(cx, Some(n), path).map(Threshold::Bytes)
}

/// `behaviours`: switch name -> bool, names checked against the switch table.
pub(super) fn switch_map(cx: &mut Cx, b: &Node, bp: &str, out: &mut BTreeMap<String, bool>) {
    match &b.kind {
        Kind::Map(entries) => {
            for (key, v) in entries {
                let kp = join(bp, &key.name);
                let Some(val) = boolean(cx, Some(v), &kp) else {
                    continue;
                };
                let known = cx.names;
                match known.switch(&key.name) {
                        None => {
                            let names: Vec<&str> =
                                known.switches.iter().map(|s| s.name).collect();
                            let hint =
                                suggest_or_point(&key.name, &names, Some("podsim bisect --list"));
                            cx.err(
                                key.loc,
                                &kp,
                                format!("unknown behaviour switch `{}`{hint}", key.name),
                            );
                        }
                        Some(s) if !s.built && !val => cx.err(
                            v.loc,
                            &kp,
                            format!(
                                "`{}: false` is not built yet: podsim does not model the behaviour before {} (every profile runs it as `true`)",
                                s.name, s.refs
                            ),
                        ),
                        Some(_) => {
                            out.insert(key.name.clone(), val);
                        }
                    }
            }
        }
        _ => expected(cx, b, bp, "a mapping of switch names to `true`/`false`"),
    }
}

pub(super) fn kubelet(cx: &mut Cx, n: Option<&Node>) -> KubeletSpec {
    let mut k = KubeletSpec {
        profile: defaults::PROFILE.to_owned(),
        behaviours: BTreeMap::new(),
        feature_gates: BTreeMap::new(),
        config: defaults::kubelet_config(),
        timing: defaults::timing(),
        container_gc: None,
        image_gc: None,
    };
    let Some(n) = present(n) else { return k };
    let p = "spec.kubelet";
    let Some(o) = obj(
        cx,
        n,
        p,
        &[
            "profile",
            "behaviours",
            "featureGates",
            "config",
            "timing",
            "containerGC",
            "imageGC",
        ],
        Unknown::Error,
    ) else {
        return k;
    };
    if let Some(p) = profile(cx, o.get("profile"), &o.at("profile")) {
        k.profile = p.to_owned();
    }
    if let Some(b) = o.get("behaviours") {
        let bp = o.at("behaviours");
        switch_map(cx, b, &bp, &mut k.behaviours);
    }
    if let Some(g) = present(o.get("featureGates")) {
        let p = o.at("featureGates");
        super::gates::feature_gates(cx, g, &p, &k.profile, &mut k.feature_gates);
    }
    cx.gates_off = super::gates::gates_off(cx, &k.profile, &k.feature_gates);
    cx.gates_profile = k.profile.clone();
    if let Some(c) = o.get("config") {
        let eff = cx
            .names
            .effective_switches(&k.profile, &k.feature_gates, &k.behaviours);
        let switches = (k.profile.as_str(), &eff);
        kubelet_config(cx, c, &o.at("config"), &mut k.config, switches);
    }
    if let Some(g) = present(o.get("containerGC")) {
        k.container_gc = container_gc(cx, g, &o.at("containerGC"));
    }
    if let Some(g) = present(o.get("imageGC")) {
        k.image_gc = image_gc(cx, g, &o.at("imageGC"));
    }
    if let Some(t) = o.get("timing") {
        let tp = o.at("timing");
        let fields = [
            "plegRelistPeriod",
            "housekeepingPeriod",
            "statusSyncPeriod",
            "evictionMonitoringPeriod",
            "syncLoopTick",
        ];
        let all = [&fields[..], &["plegRelistPhase", "housekeepingPhase"]].concat();
        if let Some(to) = obj(cx, t, &tp, &all, Unknown::Error) {
            let tm = &mut k.timing;
            let slots = [
                &mut tm.pleg_relist_period,
                &mut tm.housekeeping_period,
                &mut tm.status_sync_period,
                &mut tm.eviction_monitoring_period,
                &mut tm.sync_loop_tick,
            ];
            for (f, slot) in fields.iter().zip(slots) {
                if let Some(d) = pos_dur(cx, to.get(f), &to.at(f)) {
                    *slot = d;
                }
            }
            for (f, slot) in [
                ("plegRelistPhase", &mut tm.pleg_relist_phase),
                ("housekeepingPhase", &mut tm.housekeeping_phase),
            ] {
                if let Some(d) = dur(cx, to.get(f), &to.at(f)) {
                    *slot = d;
                }
            }
        }
    }
    k
}

/// `spec.kubelet.containerGC`: every field optional, upstream defaults.
fn container_gc(cx: &mut Cx, n: &Node, p: &str) -> Option<crate::scenario::types::ContainerGc> {
    let fields = ["minAge", "maxPerPodContainer", "maxContainers", "period"];
    let o = obj(cx, n, p, &fields, Unknown::Error)?;
    let mut g = defaults::container_gc();
    if let Some(d) = dur(cx, o.get("minAge"), &o.at("minAge")) {
        g.min_age = d;
    }
    for (f, slot) in [
        ("maxPerPodContainer", &mut g.max_per_pod_container),
        ("maxContainers", &mut g.max_containers),
    ] {
        if let Some(i) = int(cx, o.get(f), &o.at(f), -1, i32::MAX.into()) {
            *slot = i as i64;
        }
    }
    if let Some(d) = pos_dur(cx, o.get("period"), &o.at("period")) {
        g.period = d;
    }
    Some(g)
}

/// The profile and the switch overrides, for fields a release did not have.
type Switches<'a> = (&'a str, &'a BTreeMap<String, bool>);

/// `spec.kubelet.imageGC`: every field optional, upstream defaults; the low threshold must
/// be below the high one (as upstream's configuration validation requires).
fn image_gc(cx: &mut Cx, n: &Node, p: &str) -> Option<crate::scenario::types::ImageGc> {
    let fields = [
        "highThresholdPercent",
        "lowThresholdPercent",
        "minimumGCAge",
        "period",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Error)?;
    let mut g = defaults::image_gc();
    for (f, slot) in [
        ("highThresholdPercent", &mut g.high_threshold_percent),
        ("lowThresholdPercent", &mut g.low_threshold_percent),
    ] {
        if let Some(i) = int(cx, o.get(f), &o.at(f), 0, 100) {
            *slot = i as u32;
        }
    }
    if g.low_threshold_percent >= g.high_threshold_percent {
        let f = if o.get("lowThresholdPercent").is_some() {
            "lowThresholdPercent"
        } else {
            "highThresholdPercent"
        };
        if let Some(v) = o.get(f) {
            cx.err(
                v.loc,
                &o.at(f),
                "`lowThresholdPercent` must be less than `highThresholdPercent`",
            );
        }
    }
    if let Some(d) = dur(cx, o.get("minimumGCAge"), &o.at("minimumGCAge")) {
        g.minimum_gc_age = d;
    }
    if let Some(d) = pos_dur(cx, o.get("period"), &o.at("period")) {
        g.period = d;
    }
    Some(g)
}

fn kubelet_config(cx: &mut Cx, n: &Node, p: &str, c: &mut KubeletConfig, sw: Switches) {
    let fields = [
        "syncFrequency",
        "shutdownGracePeriod",
        "shutdownGracePeriodCriticalPods",
        "shutdownGracePeriodByPodPriority",
        "evictionHard",
        "evictionSoft",
        "evictionSoftGracePeriod",
        "evictionMaxPodGracePeriod",
        "evictionPressureTransitionPeriod",
        "evictionMinimumReclaim",
    ];
    let Some(o) = obj(cx, n, p, &fields, Unknown::Error) else {
        return;
    };
    if let Some(d) = pos_dur(cx, o.get("syncFrequency"), &o.at("syncFrequency")) {
        c.sync_frequency = d;
    }
    for (f, cap) in [
        ("shutdownGracePeriod", Capability::ShutdownGracePeriod),
        (
            "shutdownGracePeriodCriticalPods",
            Capability::ShutdownGracePeriodCriticalPods,
        ),
    ] {
        if let Some(d) = dur(cx, o.get(f), &o.at(f)) {
            if f == "shutdownGracePeriod" {
                c.shutdown_grace_period = d;
            } else {
                c.shutdown_grace_period_critical_pods = d;
            }
            if d > Dur::ZERO {
                if let Some(v) = o.get(f) {
                    cx.uses(cap, v.loc, &o.at(f));
                    let what = format!("`{f}` above 0");
                    super::gates::needs(cx, "GracefulNodeShutdown", v.loc, &o.at(f), &what);
                }
            }
        }
    }
    if c.shutdown_grace_period_critical_pods > c.shutdown_grace_period {
        if let Some(v) = o.get("shutdownGracePeriodCriticalPods") {
            cx.err(
                v.loc,
                &o.at("shutdownGracePeriodCriticalPods"),
                "must not be greater than `shutdownGracePeriod`",
            );
        }
    }
    let bp = o.at("shutdownGracePeriodByPodPriority");
    let items = list(cx, o.get("shutdownGracePeriodByPodPriority"), &bp);
    for (i, item) in items.iter().enumerate() {
        let ip = idx(&bp, i);
        let fields = ["priority", "shutdownGracePeriodSeconds"];
        if let Some(io) = obj(cx, item, &ip, &fields, Unknown::Error) {
            let pr = io.req(cx, "priority");
            let pr = int(cx, pr, &io.at("priority"), i32::MIN.into(), i32::MAX.into());
            let g = io.req(cx, "shutdownGracePeriodSeconds");
            let g = int(
                cx,
                g,
                &io.at("shutdownGracePeriodSeconds"),
                0,
                i64::MAX.into(),
            );
            if let (Some(pr), Some(g)) = (pr, g) {
                c.shutdown_grace_period_by_pod_priority
                    .push((pr as i32, g as i64));
            }
        }
    }
    if let Some(first) = items.first() {
        cx.uses(Capability::ShutdownGracePeriodByPodPriority, first.loc, &bp);
        priority_groups_on_profile(cx, first.loc, &bp, sw);
        // KubeletConfiguration validation: the list replaces the two durations.
        if c.shutdown_grace_period > Dur::ZERO || c.shutdown_grace_period_critical_pods > Dur::ZERO
        {
            cx.err(
                first.loc,
                &bp,
                "cannot be set together with `shutdownGracePeriod` or `shutdownGracePeriodCriticalPods`",
            );
        }
    }
    if o.get("evictionHard").is_some() {
        c.eviction_hard.clear();
    }
    for (sig, v, sp) in signal_map(cx, o.get("evictionHard"), &o.at("evictionHard")) {
        if let Some(t) = threshold(cx, v, &sp) {
            c.eviction_hard.insert(sig, t);
        }
    }
    let soft = signal_map(cx, o.get("evictionSoft"), &o.at("evictionSoft"));
    for (sig, v, sp) in &soft {
        if let Some(t) = threshold(cx, v, sp) {
            c.eviction_soft.insert(sig.clone(), t);
        }
    }
    if let (Some(n), false) = (o.get("evictionSoft"), soft.is_empty()) {
        cx.uses(Capability::EvictionSoft, n.loc, &o.at("evictionSoft"));
    }
    let grace = signal_map(
        cx,
        o.get("evictionSoftGracePeriod"),
        &o.at("evictionSoftGracePeriod"),
    );
    for (sig, v, sp) in &grace {
        if let Some(d) = dur(cx, Some(v), sp) {
            c.eviction_soft_grace_period.insert(sig.clone(), d);
        }
    }
    // ParseThresholdConfig: every soft threshold needs its grace period.
    for (sig, v, sp) in &soft {
        if !grace.iter().any(|(g, _, _)| g == sig) {
            cx.err(
                v.loc,
                sp,
                format!("a soft eviction threshold needs a grace period: set `evictionSoftGracePeriod` for `{sig}`"),
            );
        }
    }
    if let (Some(n), false) = (o.get("evictionSoftGracePeriod"), grace.is_empty()) {
        cx.uses(
            Capability::EvictionSoftGracePeriod,
            n.loc,
            &o.at("evictionSoftGracePeriod"),
        );
    }
    let f = "evictionMaxPodGracePeriod";
    if let Some(v) = int(cx, o.get(f), &o.at(f), i64::MIN.into(), i64::MAX.into()) {
        c.eviction_max_pod_grace_period = v as i64;
        if v != 0 {
            if let Some(n) = o.get(f) {
                cx.uses(Capability::EvictionMaxPodGracePeriod, n.loc, &o.at(f));
            }
        }
    }
    let f = "evictionPressureTransitionPeriod";
    if let Some(d) = dur(cx, o.get(f), &o.at(f)) {
        c.eviction_pressure_transition_period = d;
    }
    let f = "evictionMinimumReclaim";
    for (sig, v, sp) in signal_map(cx, o.get(f), &o.at(f)) {
        if let Some(t) = threshold(cx, v, &sp) {
            c.eviction_minimum_reclaim.insert(sig, t);
        }
    }
}

/// `spec.node.nodefs` / `imagefs`: `{capacity: Q, inodes: N}`.
fn fs_spec(cx: &mut Cx, n: &Node, p: &str, d: FsSpec) -> FsSpec {
    let mut s = d;
    if let Some(o) = obj(cx, n, p, &["capacity", "inodes"], Unknown::Error) {
        if let Some(v) = bytes(cx, o.get("capacity"), &o.at("capacity")) {
            s.capacity_bytes = v;
        }
        if let Some(v) = bytes(cx, o.get("inodes"), &o.at("inodes")) {
            s.inodes = v;
        }
    }
    if s.capacity_bytes == 0 || s.inodes == 0 {
        cx.err(n.loc, p, "a filesystem needs a capacity and inodes above 0");
    }
    s
}

/// Priority groups came with GracefulNodeShutdownBasedOnPodPriority (alpha in v1.23, on by
/// default from v1.24): the older profiles' node shutdown manager has no such field.
fn priority_groups_on_profile(
    cx: &mut Cx,
    loc: crate::scenario::schema::Loc,
    bp: &str,
    sw: Switches,
) {
    let gate = "GracefulNodeShutdownBasedOnPodPriority";
    let groups = "shutdownKillsByPriorityGroups";
    // `behaviours: {shutdownKillsByPriorityGroups: true}` brings the priority groups into
    // a release without the gate (a deliberate mix, as `podsim bisect` flips it).
    if cx.gates_off.contains_key(gate) && sw.1.get(groups) != Some(&true) {
        super::gates::needs(cx, gate, loc, bp, "`shutdownGracePeriodByPodPriority`");
        return;
    }
    if !cx.names.switch_value(groups, sw.0, sw.1) {
        cx.err(
            loc,
            bp,
            format!(
                "not available on profile {} (its node shutdown manager has no priority groups, behaviour `{groups}` is off; they came with v1.23's feature gate GracefulNodeShutdownBasedOnPodPriority, on by default from v1.24): use `shutdownGracePeriod` and `shutdownGracePeriodCriticalPods`",
                sw.0
            ),
        );
    }
}

pub(super) fn node_spec(cx: &mut Cx, n: Option<&Node>) -> NodeSpec {
    let nodefs = FsSpec {
        capacity_bytes: defaults::NODEFS_BYTES,
        inodes: defaults::NODEFS_INODES,
    };
    let mut s = NodeSpec {
        cpu_milli: defaults::NODE_CPU_MILLI,
        memory_bytes: defaults::NODE_MEMORY_BYTES,
        pods: defaults::NODE_PODS,
        nodefs,
        imagefs: None,
        max_pids: defaults::MAX_PIDS,
    };
    let Some(n) = present(n) else { return s };
    let fields = ["capacity", "nodefs", "imagefs", "maxPids"];
    let Some(o) = obj(cx, n, "spec.node", &fields, Unknown::Error) else {
        return s;
    };
    if let Some(f) = present(o.get("nodefs")) {
        s.nodefs = fs_spec(cx, f, &o.at("nodefs"), nodefs);
    }
    if let Some(f) = present(o.get("imagefs")) {
        s.imagefs = Some(fs_spec(cx, f, &o.at("imagefs"), nodefs));
    }
    if let Some(v) = int(cx, o.get("maxPids"), &o.at("maxPids"), 1, i64::MAX.into()) {
        s.max_pids = v as u64;
    }
    let Some(c) = o.get("capacity") else { return s };
    let p = o.at("capacity");
    let Some(co) = obj(cx, c, &p, &["cpu", "memory", "pods"], Unknown::Error) else {
        return s;
    };
    if let Some(v) = milli(cx, co.get("cpu"), &co.at("cpu")) {
        s.cpu_milli = v;
    }
    if let Some(v) = bytes(cx, co.get("memory"), &co.at("memory")) {
        s.memory_bytes = v;
    }
    if let Some(v) = bytes(cx, co.get("pods"), &co.at("pods")) {
        s.pods = v;
    }
    s
}

const CRI_ERRORS: [(&str, CriError); 5] = [
    ("DeadlineExceeded", CriError::DeadlineExceeded),
    ("Unavailable", CriError::Unavailable),
    ("Unknown", CriError::Unknown),
    ("Internal", CriError::Internal),
    ("ResourceExhausted", CriError::ResourceExhausted),
];

pub(super) fn runtime(cx: &mut Cx, n: Option<&Node>) -> RuntimeSpec {
    let mut r = RuntimeSpec {
        latencies: CriCall::ALL
            .iter()
            .map(|c| (*c, defaults::latency(*c)))
            .collect(),
        faults: Vec::new(),
        image_sizes: BTreeMap::new(),
    };
    let Some(n) = present(n) else { return r };
    let Some(o) = obj(
        cx,
        n,
        "spec.runtime",
        &["latencies", "faults", "images"],
        Unknown::Error,
    ) else {
        return r;
    };
    let ip = o.at("images");
    for (i, item) in list(cx, o.get("images"), &ip).iter().enumerate() {
        let p = idx(&ip, i);
        let Some(io) = obj(cx, item, &p, &["image", "size"], Unknown::Error) else {
            continue;
        };
        let image = io.req(cx, "image").and_then(|v| match &v.kind {
            Kind::Str(s) if !s.is_empty() => Some(s.clone()),
            _ => {
                expected(cx, v, &io.at("image"), "an image name");
                None
            }
        });
        let size = io.req(cx, "size");
        let size = bytes(cx, size, &io.at("size"));
        if let (Some(image), Some(size)) = (image, size) {
            r.image_sizes.insert(image, size);
        }
    }
    let calls: Vec<&str> = CriCall::ALL.iter().map(|c| c.as_str()).collect();
    if let Some(l) = o.get("latencies") {
        if let Some(lo) = obj(cx, l, &o.at("latencies"), &calls, Unknown::Error) {
            for call in CriCall::ALL {
                if let Some(d) = dist(cx, lo.get(call.as_str()), &lo.at(call.as_str())) {
                    r.latencies.insert(call, d);
                }
            }
        }
    }
    let fp = o.at("faults");
    for (i, item) in list(cx, o.get("faults"), &fp).iter().enumerate() {
        let ip = idx(&fp, i);
        let Some(io) = obj(
            cx,
            item,
            &ip,
            &["call", "probability", "error", "from", "until"],
            Unknown::Error,
        ) else {
            continue;
        };
        let call = io.req(cx, "call");
        let call = one_of(cx, call, &io.at("call"), &calls).map(|i| CriCall::ALL[i]);
        let prob = io.req(cx, "probability");
        let prob = probability(cx, prob, &io.at("probability"));
        let names: Vec<&str> = CRI_ERRORS.iter().map(|e| e.0).collect();
        let error = match io.get("error") {
            None => Some(CriError::Unknown),
            e => one_of(cx, e, &io.at("error"), &names).map(|i| CRI_ERRORS[i].1),
        };
        let from = match io.get("from") {
            None => Some(Dur::ZERO),
            f => dur(cx, f, &io.at("from")),
        };
        let until = match io.get("until") {
            None => Some(None),
            u => dur(cx, u, &io.at("until")).map(Some),
        };
        if let (Some(Some(u)), Some(f)) = (until, from) {
            if u < f {
                let loc = io.get("until").map_or(io.loc, |n| n.loc);
                cx.err(loc, &io.at("until"), "`until` must not be before `from`");
            }
        }
        if let (Some(call), Some(probability_ppm), Some(error), Some(from), Some(until)) =
            (call, prob, error, from, until)
        {
            r.faults.push(Fault {
                call,
                probability_ppm,
                error,
                from,
                until,
            });
        }
    }
    r
}

pub(super) fn api(cx: &mut Cx, n: Option<&Node>) -> ApiSpec {
    let mut a = ApiSpec {
        watch_delay: defaults::WATCH_DELAY,
        status_write_delay: defaults::STATUS_WRITE_DELAY,
    };
    let Some(n) = present(n) else { return a };
    let Some(o) = obj(
        cx,
        n,
        "spec.api",
        &["watchDelay", "statusWriteDelay"],
        Unknown::Error,
    ) else {
        return a;
    };
    if let Some(d) = dist(cx, o.get("watchDelay"), &o.at("watchDelay")) {
        a.watch_delay = d;
    }
    if let Some(d) = dist(cx, o.get("statusWriteDelay"), &o.at("statusWriteDelay")) {
        a.status_write_delay = d;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::super::test_util::problems;

    #[test]
    fn behaviour_switches_are_checked_and_unknown_profiles_rejected() {
        let e = problems("  kubelet:\n    profile: v1.22\n    behaviours: {stopProbesAtTermnation: true, podWorkerOwnsLifecycle: 1}\n");
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(
            e[0].contains("unknown behaviour switch `stopProbesAtTermnation`; did you mean `stopProbesAtTermination`?"),
            "{e:#?}"
        );
        assert!(e[1].contains("expected `true` or `false`"), "{e:#?}");
        if let Some(s) = crate::names().switches.iter().find(|s| !s.built) {
            let e = problems(&format!(
                "  kubelet:\n    behaviours: {{{}: false}}\n",
                s.name
            ));
            assert!(e[0].contains("is not built yet"), "{e:#?}");
        }
        let e = problems(
            "  kubelet:\n    profile: v1.24\n    config: {evictionSoft: {memory.avail: 1Mi}}\n",
        );
        assert_eq!(e.len(), 2, "{e:#?}");
        assert!(e[0].contains("unknown profile `v1.24`"), "{e:#?}");
        assert!(e[1].contains("unknown field `memory.avail`"), "{e:#?}");
    }

    #[test]
    fn shutdown_grace_periods() {
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriod: 30s, shutdownGracePeriodCriticalPods: 10s}\n"),
            Vec::<String>::new()
        );
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriod: 10s, shutdownGracePeriodCriticalPods: 20s}\n"),
            ["spec.kubelet.config.shutdownGracePeriodCriticalPods: must not be greater than `shutdownGracePeriod`"]
        );
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriod: 30s, shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: 2}]}\n"),
            ["spec.kubelet.config.shutdownGracePeriodByPodPriority: cannot be set together with `shutdownGracePeriod` or `shutdownGracePeriodCriticalPods`"]
        );
        assert_eq!(
            problems("  kubelet:\n    config: {shutdownGracePeriodByPodPriority: [{priority: 1, shutdownGracePeriodSeconds: 2}]}\n  timeline: [{at: 1s, nodeShutdown: {}}]\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn soft_thresholds_need_a_grace_period() {
        let e = problems("  kubelet:\n    config: {evictionSoft: {memory.available: 1Gi}}\n");
        assert_eq!(
            e,
            ["spec.kubelet.config.evictionSoft.memory.available: a soft eviction threshold needs a grace period: set `evictionSoftGracePeriod` for `memory.available`"]
        );
    }
}
