//! `spec.pods`: the pod declarations (replicas, static pods, creation times) and their Pod
//! manifests (metadata, spec, containers, probes, volumes).

use super::behaviour::behaviours;
use super::conditions;
use super::primitives::{
    boolean, bytes, dur, exactly_one, expected, idx, int, list, milli, name, obj, one_of, string,
    Cx, Obj, Unknown,
};
use super::priority::{resolve, PriorityClasses};
use super::timeline::{past_horizon, Horizon};
use crate::model::{
    ActiveDeadline, Behaviour, ContainerRestart, ContainerSpec, EmptyDir, EmptyDirs,
    EphemeralStorage, ImagePull, ObjectRefs, PodSpec, PostStartHook, PreStopHook, Probe,
    ProbeHandler, PullPolicy, Resources, RestartPolicy,
};
use crate::scenario::defaults;
use crate::scenario::fields::{self, Object};
use crate::scenario::not_built_yet::Capability;
use crate::scenario::schema::{Kind, Loc, Node};
use crate::scenario::types::PodDecl;
use crate::sim::Dur;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// The expanded pods; whether every declaration was valid (if not, references to pods
/// cannot be checked without false alarms); and the names of the declarations whose
/// `replicas` is wrong (their pods `NAME-K` are unknown, but the rest can be checked).
pub(super) fn pods(
    cx: &mut Cx,
    n: Option<&Node>,
    horizon: Option<&Horizon>,
    classes: &PriorityClasses,
) -> (Vec<PodDecl>, bool, Vec<String>) {
    let mut out = Vec::new();
    let mut complete = true;
    let mut unknown_replicas = Vec::new();
    // Expanded name -> index of the declaration that made it.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    // Pods declared so far (replicas summed, static pods included), and whether an entry
    // took the total past the cap: nothing after it is expanded.
    let mut total = 0u64;
    let mut over = false;
    for (i, item) in list(cx, n, "spec.pods").iter().enumerate() {
        let p = idx("spec.pods", i);
        let fields = ["replicas", "static", "createAt", "template", "behaviour"];
        let Some(o) = obj(cx, item, &p, &fields, Unknown::Error) else {
            complete = false;
            continue;
        };
        let replicas = int(
            cx,
            o.get("replicas"),
            &o.at("replicas"),
            1,
            defaults::MAX_PODS.into(),
        )
        .map(|r| r as usize);
        let static_pod = boolean(cx, o.get("static"), &o.at("static")).unwrap_or(false);
        if static_pod {
            if let Some(s) = o.get("static") {
                cx.uses(Capability::StaticPods, s.loc, &o.at("static"));
            }
        }
        let create_at = dur(cx, o.get("createAt"), &o.at("createAt")).unwrap_or(Dur::ZERO);
        let what = "the pod's creation";
        past_horizon(
            cx,
            horizon,
            create_at,
            o.get("createAt"),
            &o.at("createAt"),
            what,
        );
        let template = o
            .req(cx, "template")
            .and_then(|t| pod_template(cx, t, &o.at("template"), classes));
        let bp = o.at("behaviour");
        let Some((mut spec, name_loc, containers_ok, sleeps)) = template else {
            complete = false;
            let _ = behaviours(cx, o.get("behaviour"), &bp, None);
            continue;
        };
        let containers: Vec<&str> = spec
            .init_containers
            .iter()
            .chain(&spec.containers)
            .map(|c| c.name.as_str())
            .collect();
        complete &= containers_ok;
        let known = containers_ok.then_some(containers.as_slice());
        let (mut behaviour, volumes) = behaviours(cx, o.get("behaviour"), &bp, known);
        let dirs = super::behaviour::volume_usage(cx, &spec.empty_dirs, volumes);
        for c in &containers {
            behaviour.entry((*c).to_owned()).or_default();
        }
        // A classic init container whose behaviour does not say `runFor` completes: it
        // exits 0 after `defaults::INIT_CONTAINER_RUN_FOR` (a `forever` default would
        // keep its pod Pending for good).
        for c in spec.init_containers.iter().filter(|c| !c.is_sidecar()) {
            if entry(entry(o.get("behaviour"), &c.name), "runFor").is_none() {
                if let Some(b) = behaviour.get_mut(&c.name) {
                    b.run_for = crate::model::RunFor::For(
                        crate::scenario::defaults::INIT_CONTAINER_RUN_FOR,
                    );
                }
            }
        }
        spec.empty_dirs = dirs;
        pre_stop_sleeps(cx, &mut behaviour, &sleeps, o.get("behaviour"), &bp);
        let specs: Vec<_> = spec
            .init_containers
            .iter()
            .chain(&spec.containers)
            .collect();
        super::hooks::manifest_behaviour(cx, &mut behaviour, &specs, o.get("behaviour"), &bp);
        // One copy shared by every replica.
        let behaviour = Arc::new(behaviour);
        let name_path = format!("{p}.template.metadata.name");
        if !over {
            total += replicas.unwrap_or(1) as u64;
            if total > defaults::MAX_PODS {
                over = true;
                let loc = o.get("replicas").map_or(o.loc, |r| r.loc);
                cx.err(
                    loc,
                    &o.at("replicas"),
                    format!(
                        "this entry brings the scenario to {total} pods, more than the {} \
                         pods a scenario may declare in all",
                        defaults::MAX_PODS
                    ),
                );
            }
        }
        if over {
            complete = false;
            continue;
        }
        let names: Vec<String> = match (o.get("replicas"), replicas) {
            (None, _) => vec![spec.name.clone()],
            (Some(_), Some(r)) => (0..r).map(|k| format!("{}-{k}", spec.name)).collect(),
            (Some(_), None) => {
                unknown_replicas.push(spec.name.clone());
                continue;
            }
        };
        for pod_name in names {
            if let Some(first) = seen.get(&pod_name) {
                cx.err(
                    name_loc,
                    &name_path,
                    format!("pod name `{pod_name}` is already used by spec.pods[{first}]"),
                );
                break;
            }
            if pod_name.len() > 253 {
                cx.err(
                    name_loc,
                    &name_path,
                    format!("pod name `{pod_name}` is longer than 253 characters"),
                );
                break;
            }
            seen.insert(pod_name.clone(), i);
            let mut spec = spec.clone();
            spec.name = pod_name;
            out.push(PodDecl {
                decl_index: i,
                static_pod,
                create_at,
                spec: std::sync::Arc::new(spec),
                behaviour: behaviour.clone(),
            });
        }
    }
    (out, complete, unknown_replicas)
}

/// A pod template's `apiVersion` and `kind` (checked) and `metadata`: the pod's name (if
/// valid), namespace and the name's location, and whether `metadata` was there.
fn pod_header(cx: &mut Cx, o: &Obj) -> (Option<String>, String, Loc, bool) {
    for (key, want) in [("apiVersion", "v1"), ("kind", "Pod")] {
        if let Some(v) = string(cx, o.get(key), &o.at(key)) {
            if v != want {
                let at = o.get(key).map_or(o.loc, |n| n.loc);
                let m = format!("`{v}`: a pod template is a `{want}` Pod manifest");
                cx.err(at, &o.at(key), m);
            }
        }
    }
    let (mut pod_name, mut namespace, mut name_loc) = (None, defaults::NAMESPACE.to_owned(), o.loc);
    let Some(m) = o.req(cx, "metadata") else {
        return (pod_name, namespace, name_loc, false);
    };
    let fields = ["name", "namespace"];
    let metadata = Unknown::Manifest(Object::Metadata);
    if let Some(mo) = obj(cx, m, &o.at("metadata"), &fields, metadata) {
        let nn = mo.req(cx, "name");
        name_loc = nn.map_or(mo.loc, |n| n.loc);
        pod_name = name(cx, nn, &mo.at("name"), true, 253);
        if let Some(ns) = name(cx, mo.get("namespace"), &mo.at("namespace"), false, 63) {
            namespace = ns;
        }
    }
    (pod_name, namespace, name_loc, true)
}

/// A Pod manifest. Returns the spec, the location of `metadata.name`, and whether every
/// container was valid.
fn pod_template(
    cx: &mut Cx,
    n: &Node,
    p: &str,
    classes: &PriorityClasses,
) -> Option<(PodSpec, Loc, bool, Sleeps)> {
    let top = ["apiVersion", "kind", "metadata", "spec"];
    let o = obj(cx, n, p, &top, Unknown::Manifest(Object::Pod))?;
    let (pod_name, namespace, name_loc, ok) = pod_header(cx, &o);
    let sp = o.at("spec");
    let spec_fields = [
        "terminationGracePeriodSeconds",
        "restartPolicy",
        "priority",
        "priorityClassName",
        "hostNetwork",
        "activeDeadlineSeconds",
        "readinessGates",
        "initContainers",
        "containers",
        "volumes",
        "os",
    ];
    let s = o
        .req(cx, "spec")
        .and_then(|s| obj(cx, s, &sp, &spec_fields, Unknown::Manifest(Object::PodSpec)));
    let s = s?;
    let tgps = int(
        cx,
        s.get("terminationGracePeriodSeconds"),
        &s.at("terminationGracePeriodSeconds"),
        0,
        i64::MAX.into(),
    )
    .map_or(defaults::TERMINATION_GRACE_PERIOD_SECONDS, |v| v as i64);
    let policies = ["Always", "OnFailure", "Never"];
    let restart_policy = match one_of(
        cx,
        s.get("restartPolicy"),
        &s.at("restartPolicy"),
        &policies,
    ) {
        Some(1) => RestartPolicy::OnFailure,
        Some(2) => RestartPolicy::Never,
        _ => RestartPolicy::Always,
    };
    let priority = int(
        cx,
        s.get("priority"),
        &s.at("priority"),
        i32::MIN.into(),
        i32::MAX.into(),
    )
    .map(|v| v as i32);
    let priority_class_name = string(cx, s.get("priorityClassName"), &s.at("priorityClassName"));
    let priority = resolve(
        cx,
        classes,
        &s,
        priority_class_name.as_deref().filter(|c| !c.is_empty()),
        priority,
    );
    let host_network = boolean(cx, s.get("hostNetwork"), &s.at("hostNetwork")).unwrap_or(false);
    // API validation: a positive int64 when set.
    let ads = "activeDeadlineSeconds";
    let active_deadline = int(cx, s.get(ads), &s.at(ads), 1, i64::MAX.into()).map(|v| v as i64);
    no_effect(
        cx,
        &s,
        "hostNetwork",
        fields::why(Object::PodSpec, "hostNetwork"),
    );
    pod_os(cx, &s);
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut containers_ok = true;
    let mut sleeps = Sleeps::new();
    let mut containers_of = |cx: &mut Cx, key: &str| -> Vec<ContainerSpec> {
        let lp = s.at(key);
        let mut out = Vec::new();
        let init = key == "initContainers";
        for (i, node) in list(cx, s.get(key), &lp).iter().enumerate() {
            let Some((c, sleep)) = container(cx, node, &idx(&lp, i), tgps, init) else {
                containers_ok = false;
                continue;
            };
            if let Some(secs) = sleep {
                sleeps.insert(c.name.clone(), secs);
            }
            if !names.insert(c.name.clone()) {
                let at = node.get("name").map_or(node.loc, |n| n.loc);
                let msg = format!("duplicate container name `{}`", c.name);
                cx.err(at, &format!("{}.name", idx(&lp, i)), msg);
            }
            out.push(c);
        }
        out
    };
    let init_containers = containers_of(cx, "initContainers");
    let containers = containers_of(cx, "containers");
    let cnode = s.req(cx, "containers");
    if let Some(cn) = cnode {
        if matches!(&cn.kind, Kind::Seq(v) if v.is_empty()) {
            cx.err(
                cn.loc,
                &s.at("containers"),
                "a pod needs at least one container",
            );
        }
    }
    let (objects, empty_dirs) = volume_objects(cx, &s);
    let readiness_gates = conditions::readiness_gates(cx, &s);
    let name = pod_name?;
    if !ok {
        return None;
    }
    Some((
        PodSpec {
            name,
            namespace: namespace.into(),
            termination_grace_period_seconds: Some(tgps),
            restart_policy,
            priority,
            priority_class_name,
            host_network,
            init_containers: init_containers.into(),
            containers: containers.into(),
            objects,
            active_deadline: ActiveDeadline(active_deadline),
            readiness_gates,
            empty_dirs,
        },
        name_loc,
        containers_ok,
        sleeps,
    ))
}

// Fields that are parsed and checked but change nothing in a pod's lifecycle here: each
// gets a note saying why when it is written, so none is silently ignored.

const PROBE_TIMEOUT: &str = "no effect: the runtime answers a probe at once (its result \
    comes from behaviour.<container>.probes), so no probe outlasts its timeout";

fn volume_why(key: &str) -> &'static str {
    match key {
        "optional" => {
            "no effect: the referenced objects always exist in the API in podsim (what \
             is modelled is whether the kubelet may read them), and `optional` only matters \
             for a missing one"
        }
        _ => {
            "no effect: it shapes the files in the volume, not when the mount \
              completes or the pod starts"
        }
    }
}

/// `spec.os`: the simulated node runs Linux. The kubelet's admission (v1.31
/// `pkg/kubelet/lifecycle/predicate.go`) rejects a pod for another OS; podsim has no other
/// node to offer, so such a pod is an error rather than a rejected run.
fn pod_os(cx: &mut Cx, s: &Obj) {
    let Some(n) = s.get("os") else { return };
    let Some(o) = obj(cx, n, &s.at("os"), &["name"], Unknown::Note) else {
        return;
    };
    let nn = o.req(cx, "name");
    if let Some(v) = string(cx, nn, &o.at("name")) {
        if v != "linux" {
            let m = format!(
                "`{v}`: the simulated node runs Linux, and the kubelet rejects a pod for \
                 another OS (podsim has no {v} node)"
            );
            cx.err(nn.map_or(o.loc, |n| n.loc), &o.at("name"), m);
        }
    }
}

/// A note at `key` (if written) saying why it has no effect.
fn no_effect(cx: &mut Cx, o: &Obj, key: &str, why: &str) {
    if let Some((k, _)) = o.entries.iter().find(|(k, _)| k.name == key) {
        cx.note(k.loc, &o.at(key), why);
    }
}

/// Containers whose preStop hook is the `sleep` action, and its `seconds`.
type Sleeps = BTreeMap<String, u64>;

/// A `preStop.sleep` hook lasts its `seconds` (v1.31 `pkg/kubelet/lifecycle/handlers.go`:
/// the kubelet itself waits that long, cut off at the grace period like any preStop hook;
/// the `PodLifecycleSleepAction` gate is on by default since v1.30). The manifest wins over
/// `behaviour.<container>.preStopDuration`, which describes how long a command or HTTP
/// handler takes and is noted as unused here.
fn pre_stop_sleeps(
    cx: &mut Cx,
    behaviour: &mut BTreeMap<String, Behaviour>,
    sleeps: &Sleeps,
    node: Option<&Node>,
    bp: &str,
) {
    for (c, secs) in sleeps {
        let explicit = entry(node, c).and_then(|b| entry(Some(b), "preStopDuration"));
        if let Some(d) = explicit {
            let m = format!(
                "no effect: the container's preStop hook is the `sleep` action, which lasts \
                 its {secs} seconds"
            );
            cx.note(d.loc, &format!("{bp}.{c}.preStopDuration"), m);
        }
        let b = behaviour.entry(c.clone()).or_default();
        b.pre_stop_duration = Dur::secs(*secs);
        b.pre_stop_sleep = true;
    }
}

/// The value under `key` in a mapping node.
fn entry<'n>(n: Option<&'n Node>, key: &str) -> Option<&'n Node> {
    match &n?.kind {
        Kind::Map(m) => m.iter().find(|(k, _)| k.name == key).map(|(_, v)| v),
        _ => None,
    }
}

/// The v1.31 volume sources other than `configMap` and `secret`.
const OTHER_VOLUME_SOURCES: [&str; 28] = [
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "persistentVolumeClaim",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
];

const OTHER_VOLUME: &str = "no effect: mounted with the pod's other volumes (taking \
    `spec.runtime.latencies.mountVolumes`); podsim models the API objects behind configMap and \
    secret volumes only";

/// `spec.volumes`: the configmaps and secrets referenced by `configMap` and `secret`
/// volumes, and the `emptyDir` volumes with their `sizeLimit` (other volume sources are
/// accepted and not modelled).
fn volume_objects(cx: &mut Cx, s: &Obj) -> (ObjectRefs, EmptyDirs) {
    let lp = s.at("volumes");
    let mut out = Vec::new();
    let mut dirs = Vec::new();
    for (i, node) in list(cx, s.get("volumes"), &lp).iter().enumerate() {
        let vp = idx(&lp, i);
        let mut fields = vec!["name", "configMap", "secret"];
        fields.extend(OTHER_VOLUME_SOURCES);
        let Some(v) = obj(cx, node, &vp, &fields, Unknown::Note) else {
            continue;
        };
        for k in OTHER_VOLUME_SOURCES.iter().filter(|k| **k != "emptyDir") {
            no_effect(cx, &v, k, OTHER_VOLUME);
        }
        let vn = v.req(cx, "name");
        let vname = name(cx, vn, &v.at("name"), false, 63);
        if let (Some(e), Some(vname)) = (v.get("emptyDir"), vname) {
            dirs.push(empty_dir(cx, e, &v.at("emptyDir"), vname));
        }
        if let Some(c) = v.get("configMap") {
            let cp = v.at("configMap");
            let cf = ["name", "items", "optional", "defaultMode"];
            if let Some(co) = obj(cx, c, &cp, &cf, Unknown::Note) {
                for k in ["items", "optional", "defaultMode"] {
                    no_effect(cx, &co, k, volume_why(k));
                }
                let cn = co.req(cx, "name");
                if let Some(n) = name(cx, cn, &co.at("name"), true, 253) {
                    out.push(format!("configmap/{n}"));
                }
            }
        }
        if let Some(c) = v.get("secret") {
            let cp = v.at("secret");
            let cf = ["secretName", "items", "optional", "defaultMode"];
            if let Some(co) = obj(cx, c, &cp, &cf, Unknown::Note) {
                for k in ["items", "optional", "defaultMode"] {
                    no_effect(cx, &co, k, volume_why(k));
                }
                let sn = co.req(cx, "secretName");
                if let Some(n) = name(cx, sn, &co.at("secretName"), true, 253) {
                    out.push(format!("secret/{n}"));
                }
            }
        }
    }
    (ObjectRefs(out), EmptyDirs(dirs))
}

/// An `emptyDir` volume: its `sizeLimit` is what local storage eviction holds its usage
/// (`behaviour.volumes.<name>.usage`) to; `medium` is noted.
fn empty_dir(cx: &mut Cx, n: &Node, p: &str, name: String) -> EmptyDir {
    let mut d = EmptyDir {
        name,
        size_limit: None,
        usage: Default::default(),
    };
    if matches!(n.kind, Kind::Null) {
        return d;
    }
    if let Some(o) = obj(cx, n, p, &["medium", "sizeLimit"], Unknown::Note) {
        no_effect(
            cx,
            &o,
            "medium",
            "no effect: every emptyDir counts on the node filesystem (nodefs) in podsim",
        );
        d.size_limit = bytes(cx, o.get("sizeLimit"), &o.at("sizeLimit")).filter(|b| *b > 0);
    }
    d
}

/// A container, and the `seconds` of its preStop `sleep` action if that is its hook.
fn container(
    cx: &mut Cx,
    n: &Node,
    p: &str,
    tgps: i64,
    init: bool,
) -> Option<(ContainerSpec, Option<u64>)> {
    let fields = [
        "name",
        "image",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
        "lifecycle",
        "resources",
        "imagePullPolicy",
        "restartPolicy",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Manifest(Object::Container))?;
    let restart_policy = container_restart_policy(cx, &o, init);
    let nn = o.req(cx, "name");
    let name = name(cx, nn, &o.at("name"), false, 63);
    let image = string(cx, o.get("image"), &o.at("image")).unwrap_or_default();
    let pull_policy = pull_policy(cx, &o);
    let probe_of = |cx: &mut Cx, key: &str, cap: Capability| {
        let v = o.get(key)?;
        cx.uses(cap, v.loc, &o.at(key));
        probe(cx, v, &o.at(key), cap == Capability::ReadinessProbe)
    };
    let liveness_probe = probe_of(cx, "livenessProbe", Capability::LivenessProbe);
    let readiness_probe = probe_of(cx, "readinessProbe", Capability::ReadinessProbe);
    let startup_probe = probe_of(cx, "startupProbe", Capability::StartupProbe);
    let life = super::hooks::lifecycle(cx, &o, tgps);
    let (mut requests, mut limits) = (Resources::default(), Resources::default());
    let mut ephemeral = EphemeralStorage::default();
    if let Some(r) = o.get("resources") {
        let rp = o.at("resources");
        if let Some(ro) = obj(cx, r, &rp, &["requests", "limits"], Unknown::Note) {
            for (key, slot) in [("requests", &mut requests), ("limits", &mut limits)] {
                let Some(v) = ro.get(key) else { continue };
                let res = ["cpu", "memory", "ephemeral-storage"];
                let Some(vo) = obj(cx, v, &ro.at(key), &res, Unknown::Note) else {
                    continue;
                };
                let es = "ephemeral-storage";
                if let Some(b) = bytes(cx, vo.get(es), &vo.at(es)) {
                    match key {
                        "requests" => ephemeral.request = b,
                        _ => ephemeral.limit = b,
                    }
                }
                slot.cpu_milli = milli(cx, vo.get("cpu"), &vo.at("cpu")).unwrap_or(0);
                slot.memory_bytes = bytes(cx, vo.get("memory"), &vo.at("memory")).unwrap_or(0);
            }
            // API defaulting: a limit without a request sets the request.
            let asked = |res: &str| {
                ro.get("requests")
                    .and_then(|v| match &v.kind {
                        Kind::Map(m) => Some(m.iter().any(|(k, _)| k.name == res)),
                        _ => None,
                    })
                    .unwrap_or(false)
            };
            if !asked("cpu") {
                requests.cpu_milli = limits.cpu_milli;
            }
            if !asked("memory") {
                requests.memory_bytes = limits.memory_bytes;
            }
            if !asked("ephemeral-storage") {
                ephemeral.request = ephemeral.limit;
            }
        }
    }
    let spec = ContainerSpec {
        name: name?,
        image,
        liveness_probe,
        readiness_probe,
        startup_probe,
        has_pre_stop: life.has_pre_stop,
        requests,
        limits,
        post_start: PostStartHook(life.post_start),
        pre_stop: PreStopHook(life.pre_stop),
        pull_policy,
        restart_policy,
        ephemeral,
    };
    Some((spec, life.pre_stop_sleep))
}

/// `imagePullPolicy` as written. `Never` needs the image preloaded on the node: podsim starts
/// every node without images, so it is refused.
fn pull_policy(cx: &mut Cx, o: &Obj) -> ImagePull {
    let key = "imagePullPolicy";
    let policies = ["Always", "IfNotPresent", "Never"];
    ImagePull(match one_of(cx, o.get(key), &o.at(key), &policies) {
        Some(0) => Some(PullPolicy::Always),
        Some(1) => Some(PullPolicy::IfNotPresent),
        Some(_) => {
            let at = o.get(key).map_or(o.loc, |n| n.loc);
            let m = "not built yet: `Never` needs images preloaded on the node, and podsim's \
                     node starts with none (use `IfNotPresent`: pulled once per node)";
            cx.err(at, &o.at(key), m);
            None
        }
        None => None,
    })
}

/// A container's `restartPolicy`, checked as v1.31's API validation does
/// (`validateInitContainers`/`validateContainers` in `pkg/apis/core/validation`): only
/// init containers may set it, only to `Always` (a native sidecar); a classic init
/// container may have no probes and no lifecycle hooks.
fn container_restart_policy(cx: &mut Cx, o: &Obj, init: bool) -> ContainerRestart {
    let key = "restartPolicy";
    let Some(v) = o.get(key) else {
        if init {
            for k in [
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
                "lifecycle",
            ] {
                if let Some(n) = o.get(k) {
                    let msg = format!(
                        "`{k}` may not be set on an init container without `restartPolicy: \
                         Always` (API validation)"
                    );
                    cx.err(n.loc, &o.at(k), msg);
                }
            }
        }
        return ContainerRestart(None);
    };
    if !init {
        let msg = "`restartPolicy` may only be set on init containers (in v1.31; `Always` \
                   makes one a sidecar)";
        cx.err(v.loc, &o.at(key), msg);
        return ContainerRestart(None);
    }
    match one_of(cx, Some(v), &o.at(key), &["Always"]) {
        Some(_) => {
            let what = "a sidecar (an init container with `restartPolicy: Always`)";
            super::gates::needs(cx, "SidecarContainers", v.loc, &o.at(key), what);
            ContainerRestart(Some(RestartPolicy::Always))
        }
        None => ContainerRestart(None),
    }
}

/// `sleep: {seconds: N}`: as v1.31's API validation has it (`validateSleepAction` in
/// `pkg/apis/core/validation`), more than 0 and at most the pod's grace period.
pub(super) fn sleep_seconds(cx: &mut Cx, n: &Node, p: &str, tgps: i64) -> Option<u64> {
    let o = obj(cx, n, p, &["seconds"], Unknown::Note)?;
    let sn = o.req(cx, "seconds")?;
    let secs = int(cx, Some(sn), &o.at("seconds"), 1, i64::MAX.into())? as i64;
    if secs > tgps {
        let m = format!(
            "{secs} is more than terminationGracePeriodSeconds ({tgps}): the API server \
             requires a sleep of at most the grace period"
        );
        cx.err(sn.loc, &o.at("seconds"), m);
        return None;
    }
    Some(secs as u64)
}

fn probe(cx: &mut Cx, n: &Node, p: &str, readiness: bool) -> Option<Probe> {
    let handlers = ["exec", "httpGet", "tcpSocket", "grpc"];
    let fields = [
        "exec",
        "httpGet",
        "tcpSocket",
        "grpc",
        "initialDelaySeconds",
        "periodSeconds",
        "timeoutSeconds",
        "successThreshold",
        "failureThreshold",
        "terminationGracePeriodSeconds",
    ];
    let o = obj(cx, n, p, &fields, Unknown::Note)?;
    let handler = exactly_one(cx, &o, &handlers, "a probe", None).map(|(k, v)| {
        if !matches!(v.kind, Kind::Map(_) | Kind::Null) {
            expected(cx, v, &o.at(&k.name), "a mapping");
        }
        match k.name.as_str() {
            "exec" => ProbeHandler::Exec,
            "httpGet" => ProbeHandler::HttpGet,
            "tcpSocket" => ProbeHandler::TcpSocket,
            _ => ProbeHandler::Grpc,
        }
    });
    let d = Probe::default();
    let u = |cx: &mut Cx, key: &str, min: i128, default: u32| {
        int(cx, o.get(key), &o.at(key), min, u32::MAX.into()).map_or(default, |v| v as u32)
    };
    let initial_delay_seconds = u(cx, "initialDelaySeconds", 0, d.initial_delay_seconds);
    let period_seconds = u(cx, "periodSeconds", 1, d.period_seconds);
    let timeout_seconds = u(cx, "timeoutSeconds", 1, d.timeout_seconds);
    no_effect(cx, &o, "timeoutSeconds", PROBE_TIMEOUT);
    let success_threshold = u(cx, "successThreshold", 1, d.success_threshold);
    let failure_threshold = u(cx, "failureThreshold", 1, d.failure_threshold);
    let k = "terminationGracePeriodSeconds";
    let tgps = int(cx, o.get(k), &o.at(k), 1, i64::MAX.into()).map(|v| v as i64);
    // API validation of probes.
    if let Some(v) = o.get("successThreshold") {
        if !readiness && success_threshold != 1 {
            let m = "must be 1 for liveness and startup probes";
            cx.err(v.loc, &o.at("successThreshold"), m);
        }
    }
    if let (Some(v), true) = (o.get(k), readiness) {
        cx.err(v.loc, &o.at(k), "must not be set for readiness probes");
    }
    if let (Some(v), false, Some(profile)) = (o.get(k), readiness, cx.probe_grace_off.clone()) {
        let m = format!(
            "has no effect on profile {profile}: the ProbeTerminationGracePeriod feature gate is \
             off by default before v1.25 (behaviour `probeTerminationGracePeriod` is off), so a \
             kill for this probe uses the pod's grace"
        );
        cx.note(v.loc, &o.at(k), m);
    }
    Some(Probe {
        handler: handler?,
        initial_delay_seconds,
        period_seconds,
        timeout_seconds,
        success_threshold,
        failure_threshold,
        termination_grace_period_seconds: tgps,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_util::problems;
    use super::super::{load_str, LoadError};

    /// A scenario whose one pod's spec carries `field`.
    fn with_pod_field(field: &str) -> Result<super::super::Loaded, LoadError> {
        let text = format!(
            "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {{name: m}}\nspec:\n  pods:\n    - template: {{metadata: {{name: web}}, spec: {{{field}, containers: [{{name: app}}]}}}}\n"
        );
        load_str("m.yaml", &text, &[], &crate::names())
    }

    #[test]
    fn active_deadline_seconds_is_modelled_and_validated() {
        let l = with_pod_field("activeDeadlineSeconds: 30").unwrap();
        assert!(l.notes.is_empty(), "{:?}", l.notes);
        assert_eq!(l.scenario.pods[0].spec.active_deadline.0, Some(30));
        let l = with_pod_field("restartPolicy: Always").unwrap();
        assert_eq!(l.scenario.pods[0].spec.active_deadline.0, None);
        for (v, want) in [
            ("0", "must be at least 1, found 0"),
            ("-5", "must be at least 1, found -5"),
            ("9223372036854775808", "must be at most 9223372036854775807"),
            ("\"30s\"", "expected an integer"),
        ] {
            let Err(e) = with_pod_field(&format!("activeDeadlineSeconds: {v}")) else {
                panic!("activeDeadlineSeconds: {v} accepted");
            };
            let got: Vec<String> = e
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.path, p.message))
                .collect();
            assert_eq!(got.len(), 1, "{got:?}");
            assert!(
                got[0].starts_with("spec.pods[0].template.spec.activeDeadlineSeconds: ")
                    && got[0].contains(want),
                "{got:?}"
            );
        }
    }

    fn field_problems(field: &str) -> Vec<String> {
        crate::scenario::validate::test_util::problem_lines(with_pod_field(field))
    }

    #[test]
    fn init_containers_and_sidecars_are_modelled_and_validated() {
        let ic = "initContainers: [{name: init}, {name: proxy, restartPolicy: Always, \
                  startupProbe: {exec: {command: [x]}}}]";
        let l = with_pod_field(ic).unwrap();
        let spec = &l.scenario.pods[0].spec;
        assert!(!spec.init_containers[0].is_sidecar());
        assert!(spec.init_containers[1].is_sidecar());
        // A classic init container without `runFor` completes; a sidecar runs on.
        let b = &l.scenario.pods[0].behaviour;
        assert_eq!(
            b["init"].run_for,
            crate::model::RunFor::For(crate::scenario::defaults::INIT_CONTAINER_RUN_FOR)
        );
        assert_eq!(b["proxy"].run_for, crate::model::RunFor::Forever);
        let got = field_problems("initContainers: [{name: i, restartPolicy: Never}]");
        assert!(
            got[0].contains("restartPolicy: unknown value `Never`"),
            "{got:?}"
        );
        let got = field_problems("initContainers: [{name: i, livenessProbe: {exec: {}}}]");
        assert!(
            got[0].contains("may not be set on an init container"),
            "{got:?}"
        );
        let got = field_problems("initContainers: [{name: app}]");
        assert!(got[0].contains("duplicate container name"), "{got:?}");
    }

    #[test]
    fn restart_policy_on_an_app_container_is_an_error() {
        let text = "apiVersion: podsim/v1alpha1\nkind: Scenario\nmetadata: {name: m}\nspec:\n  pods:\n    - template: {metadata: {name: web}, spec: {containers: [{name: app, restartPolicy: Always}]}}\n";
        let e = load_str("m.yaml", text, &[], &crate::names())
            .err()
            .unwrap();
        assert!(
            e.problems[0]
                .message
                .contains("may only be set on init containers"),
            "{:?}",
            e.problems
        );
    }

    #[test]
    fn replica_names_must_be_unique() {
        let e = problems("      replicas: 2\n    - template: {metadata: {name: web-1}, spec: {containers: [{name: app}]}}\n");
        assert_eq!(
            e,
            ["spec.pods[1].template.metadata.name: pod name `web-1` is already used by spec.pods[0]"]
        );
        assert_eq!(
            problems("      replicas: 0\n"),
            ["spec.pods[0].replicas: must be at least 1, found 0"]
        );
    }
}
