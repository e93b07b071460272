//! Every field of a v1.31 Pod manifest, and what podsim does with it.
//!
//! A scenario's pod templates are real Pod manifests, and nothing a user writes in one is
//! silently ignored. Each field of the objects below (as the v1.31 API, `k8s.io/api/core/v1`
//! `types.go`, defines them) has exactly one treatment:
//!
//! - **modelled**: read and given its lifecycle effect;
//! - **no effect**: accepted, and a note printed by `check` and `run` says why it changes
//!   nothing in a pod's lifecycle on this simulated node;
//! - **not built**: an error naming the capability podsim lacks, so a run never goes ahead
//!   without what the manifest asks for.
//!
//! Validation (`validate/pods.rs`) reads the modelled fields and asks this table about every
//! other key; a key that is not a v1.31 field at all gets a note with the nearest field name.
//! The README's field list is generated from this table and a test keeps the two equal.

/// The manifest objects the table covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Object {
    /// The Pod itself (`spec.pods[].template`).
    Pod,
    /// `metadata` (ObjectMeta).
    Metadata,
    /// `spec` (PodSpec).
    PodSpec,
    /// `spec.containers[]` and `spec.initContainers[]` (Container).
    Container,
}

impl Object {
    /// How the README and messages name the object.
    pub fn title(self) -> &'static str {
        match self {
            Object::Pod => "Pod",
            Object::Metadata => "ObjectMeta",
            Object::PodSpec => "PodSpec",
            Object::Container => "Container",
        }
    }

    /// The path prefix the README shows for the object's fields.
    pub fn prefix(self) -> &'static str {
        match self {
            Object::Pod => "",
            Object::Metadata => "metadata.",
            Object::PodSpec => "spec.",
            Object::Container => "containers[].",
        }
    }
}

/// What podsim does with a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Treatment {
    /// Read and modelled; the text says what it does here.
    Modelled(&'static str),
    /// Accepted with a note; the text says why it has no lifecycle effect here.
    NoEffect(&'static str),
    /// An error; the text names the capability podsim does not have.
    NotBuilt(&'static str),
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    pub object: Object,
    pub name: &'static str,
    pub treatment: Treatment,
    /// A valid value in YAML flow style (used by the test that walks the table).
    pub example: &'static str,
}

use Object::{Container, Metadata, Pod, PodSpec};
use Treatment::{Modelled, NoEffect, NotBuilt};

const fn f(
    object: Object,
    name: &'static str,
    treatment: Treatment,
    example: &'static str,
) -> Field {
    Field {
        object,
        name,
        treatment,
        example,
    }
}

// Shared reasons.
const SET_BY_API: &str = "no effect: set by the API server, which assigns its own when the \
    pod is created";
const NO_CONTROLLERS: &str = "no effect: podsim runs no controllers, so nothing selects, \
    owns or acts on the pod through it (a controller's recreate is the `recreatePod` action)";
const SCHEDULING: &str = "no effect: every pod is already bound to the one simulated node, \
    which has no labels, taints or topology, so the kubelet's admission check of it passes";
const NAMES: &str = "no effect: DNS settings and host names are written into the sandbox; \
    podsim simulates no network or name service";
const RUNTIME_SETTING: &str = "no effect: passed to the runtime when the sandbox or container \
    is created; the simulated runtime's timing does not depend on it";
const TOKEN: &str = "no effect: the service-account token volume mounts like the pod's other \
    volumes; token issuance is not simulated";
const PROCESS: &str = "no effect: what the container's process does comes from \
    `behaviour.<container>`, not from its command line or environment";
const CONSOLE: &str = "no effect: a terminal or attached standard input does not change how \
    the container starts or stops";
const MESSAGE: &str = "no effect: the termination message is read after the container \
    exits; it does not change when or how it stops";
const MOUNTS: &str = "no effect: the kubelet mounts all of the pod's volumes before any \
    container starts, whatever each container mounts, and podsim models exactly that";

/// The table, in the order the v1.31 API declares the fields.
pub const FIELDS: &[Field] = &[
    // Pod
    f(Pod, "apiVersion", Modelled("checked: must be `v1`"), "v1"),
    f(Pod, "kind", Modelled("checked: must be `Pod`"), "Pod"),
    f(Pod, "metadata", Modelled("see ObjectMeta"), "{name: web}"),
    f(Pod, "spec", Modelled("see PodSpec"), "{containers: [{name: app}]}"),
    f(
        Pod,
        "status",
        NoEffect(
            "no effect: the API server discards a new pod's status, and the kubelet writes \
             it from then on",
        ),
        "{phase: Running}",
    ),
    // ObjectMeta
    f(Metadata, "name", Modelled("the pod's name (required)"), "web"),
    f(
        Metadata,
        "generateName",
        NoEffect(
            "no effect: the API server uses `metadata.name` when it is given, and podsim \
             requires it so that the timeline can name the pod",
        ),
        "web-",
    ),
    f(Metadata, "namespace", Modelled("the pod's namespace (`default`)"), "kube-system"),
    f(Metadata, "selfLink", NoEffect(SET_BY_API), "/api/v1/pods/web"),
    f(Metadata, "uid", NoEffect(SET_BY_API), "0c8a1f4e-1"),
    f(Metadata, "resourceVersion", NoEffect(SET_BY_API), "\"1\""),
    f(Metadata, "generation", NoEffect(SET_BY_API), "1"),
    f(Metadata, "creationTimestamp", NoEffect(SET_BY_API), "2024-01-01T00:00:00Z"),
    f(Metadata, "deletionTimestamp", NoEffect(SET_BY_API), "2024-01-01T00:00:00Z"),
    f(Metadata, "deletionGracePeriodSeconds", NoEffect(SET_BY_API), "30"),
    f(Metadata, "labels", NoEffect(NO_CONTROLLERS), "{app: web}"),
    f(
        Metadata,
        "annotations",
        NoEffect(
            "no effect: no annotation a v1.31 kubelet reads changes a pod's lifecycle here \
             (a static pod's source and hash annotations are podsim's to set)",
        ),
        "{team: a}",
    ),
    f(Metadata, "ownerReferences", NoEffect(NO_CONTROLLERS), "[]"),
    f(
        Metadata,
        "finalizers",
        NotBuilt(
            "need finalizers in the simulated API server (a finalizer keeps a deleted pod in \
             the API until a controller removes it)",
        ),
        "[example.com/keep]",
    ),
    f(Metadata, "managedFields", NoEffect(SET_BY_API), "[]"),
    // PodSpec
    f(
        PodSpec,
        "volumes",
        Modelled("configMap and secret volumes are registered and mounted; others mount at once"),
        "[{name: cfg, configMap: {name: app-config}}]",
    ),
    f(
        PodSpec,
        "initContainers",
        Modelled("run in order before the app containers; `restartPolicy: Always` makes a sidecar"),
        "[{name: setup, image: busybox:1}]",
    ),
    f(PodSpec, "containers", Modelled("the app containers (required)"), "[{name: app}]"),
    f(
        PodSpec,
        "ephemeralContainers",
        NotBuilt(
            "need the ephemeralcontainers subresource (the API server refuses them in a new \
             pod; `kubectl debug` adds them later)",
        ),
        "[{name: debug, image: busybox:1}]",
    ),
    f(PodSpec, "restartPolicy", Modelled("`Always`, `OnFailure` or `Never`"), "Never"),
    f(
        PodSpec,
        "terminationGracePeriodSeconds",
        Modelled("the grace period of a deletion (30)"),
        "10",
    ),
    f(
        PodSpec,
        "activeDeadlineSeconds",
        Modelled("the pod is failed with `DeadlineExceeded` and killed at its deadline"),
        "30",
    ),
    f(PodSpec, "dnsPolicy", NoEffect(NAMES), "ClusterFirst"),
    f(PodSpec, "nodeSelector", NoEffect(SCHEDULING), "{disk: ssd}"),
    f(PodSpec, "serviceAccountName", NoEffect(TOKEN), "app"),
    f(PodSpec, "serviceAccount", NoEffect(TOKEN), "app"),
    f(PodSpec, "automountServiceAccountToken", NoEffect(TOKEN), "false"),
    f(PodSpec, "nodeName", NoEffect(SCHEDULING), "node-1"),
    f(
        PodSpec,
        "hostNetwork",
        NoEffect(
            "no effect: podsim simulates no pod network (no network plugin readiness, no IP \
             allocation), so a pod on the host's network starts and stops as any other",
        ),
        "true",
    ),
    f(PodSpec, "hostPID", NoEffect(RUNTIME_SETTING), "true"),
    f(PodSpec, "hostIPC", NoEffect(RUNTIME_SETTING), "true"),
    f(PodSpec, "shareProcessNamespace", NoEffect(RUNTIME_SETTING), "true"),
    f(PodSpec, "securityContext", NoEffect(RUNTIME_SETTING), "{runAsUser: 1000}"),
    f(
        PodSpec,
        "imagePullSecrets",
        NoEffect(
            "no effect: pulls take `spec.runtime.latencies.pullImage` and fail as \
             `behaviour.<container>.imagePullFailureRatio` says; registry credentials are not \
             simulated",
        ),
        "[{name: regcred}]",
    ),
    f(PodSpec, "hostname", NoEffect(NAMES), "web"),
    f(PodSpec, "subdomain", NoEffect(NAMES), "svc"),
    f(PodSpec, "affinity", NoEffect(SCHEDULING), "{}"),
    f(PodSpec, "schedulerName", NoEffect(SCHEDULING), "default-scheduler"),
    f(PodSpec, "tolerations", NoEffect(SCHEDULING), "[{operator: Exists}]"),
    f(PodSpec, "hostAliases", NoEffect(NAMES), "[{ip: 10.0.0.1, hostnames: [db]}]"),
    f(
        PodSpec,
        "priorityClassName",
        Modelled("resolved to its value as the API server's priority admission does"),
        "system-node-critical",
    ),
    f(
        PodSpec,
        "priority",
        Modelled("orders evictions and shutdown groups; 2000000000 or more is critical"),
        "1000",
    ),
    f(PodSpec, "dnsConfig", NoEffect(NAMES), "{nameservers: [10.0.0.10]}"),
    f(
        PodSpec,
        "readinessGates",
        Modelled("Ready waits for each gate's condition (set by the `setPodCondition` action)"),
        "[{conditionType: example.com/lb-ready}]",
    ),
    f(
        PodSpec,
        "runtimeClassName",
        NoEffect(
            "no effect: the simulated runtime has one handler, and its timing comes from \
             `spec.runtime`",
        ),
        "kata",
    ),
    f(
        PodSpec,
        "enableServiceLinks",
        NoEffect("no effect: service environment variables need services, which podsim does not simulate"),
        "false",
    ),
    f(PodSpec, "preemptionPolicy", NoEffect(SCHEDULING), "Never"),
    f(
        PodSpec,
        "overhead",
        NoEffect(
            "no effect: the RuntimeClass admission sets it, and podsim's resource admission \
             counts the containers' requests only",
        ),
        "{memory: 10Mi}",
    ),
    f(PodSpec, "topologySpreadConstraints", NoEffect(SCHEDULING), "[]"),
    f(PodSpec, "setHostnameAsFQDN", NoEffect(NAMES), "true"),
    f(
        PodSpec,
        "os",
        Modelled("checked: the simulated node runs Linux, so `os.name` must be `linux`"),
        "{name: linux}",
    ),
    f(PodSpec, "hostUsers", NoEffect(RUNTIME_SETTING), "false"),
    f(PodSpec, "schedulingGates", NoEffect(SCHEDULING), "[{name: example.com/wait}]"),
    f(
        PodSpec,
        "resourceClaims",
        NotBuilt("need dynamic resource allocation (claims prepared before the containers start)"),
        "[{name: gpu, resourceClaimName: gpu-claim}]",
    ),
    // Container
    f(Container, "name", Modelled("the container's name (required, unique in the pod)"), "app"),
    f(
        Container,
        "image",
        Modelled("pulled as its pull policy says (`latest` or no tag: every start)"),
        "registry.example/app:1",
    ),
    f(Container, "command", NoEffect(PROCESS), "[/bin/app]"),
    f(Container, "args", NoEffect(PROCESS), "[--port, \"8080\"]"),
    f(Container, "workingDir", NoEffect(PROCESS), "/srv"),
    f(
        Container,
        "ports",
        NoEffect("no effect: no network is simulated, so ports are neither opened nor checked"),
        "[{containerPort: 8080}]",
    ),
    f(Container, "envFrom", NoEffect(PROCESS), "[{configMapRef: {name: env}}]"),
    f(Container, "env", NoEffect(PROCESS), "[{name: MODE, value: prod}]"),
    f(
        Container,
        "resources",
        Modelled("requests are checked by admission; a memory limit OOM-kills a container using more"),
        "{requests: {memory: 200Mi}}",
    ),
    f(
        Container,
        "resizePolicy",
        NoEffect("no effect: podsim never resizes a container in place, so the policy is never consulted"),
        "[{resourceName: cpu, restartPolicy: NotRequired}]",
    ),
    f(
        Container,
        "restartPolicy",
        Modelled("`Always` on an init container makes it a sidecar; not allowed on app containers"),
        "Always",
    ),
    f(Container, "volumeMounts", NoEffect(MOUNTS), "[{name: cfg, mountPath: /etc/app}]"),
    f(Container, "volumeDevices", NoEffect(MOUNTS), "[{name: disk, devicePath: /dev/xvda}]"),
    f(
        Container,
        "livenessProbe",
        Modelled("probed; failures restart the container"),
        "{exec: {command: [check]}}",
    ),
    f(
        Container,
        "readinessProbe",
        Modelled("probed; results set the Ready condition"),
        "{httpGet: {path: /ready, port: 8080}}",
    ),
    f(
        Container,
        "startupProbe",
        Modelled("probed; gates the other probes"),
        "{tcpSocket: {port: 8080}}",
    ),
    f(
        Container,
        "lifecycle",
        Modelled("`postStart` and `preStop` hooks"),
        "{preStop: {exec: {command: [drain]}}}",
    ),
    f(Container, "terminationMessagePath", NoEffect(MESSAGE), "/tmp/msg"),
    f(Container, "terminationMessagePolicy", NoEffect(MESSAGE), "FallbackToLogsOnError"),
    f(
        Container,
        "imagePullPolicy",
        Modelled(
            "`Always` pulls before every start, `IfNotPresent` once per node; `Never` is not \
             built (it needs images preloaded on the node)",
        ),
        "IfNotPresent",
    ),
    f(Container, "securityContext", NoEffect(RUNTIME_SETTING), "{runAsNonRoot: true}"),
    f(Container, "stdin", NoEffect(CONSOLE), "true"),
    f(Container, "stdinOnce", NoEffect(CONSOLE), "true"),
    f(Container, "tty", NoEffect(CONSOLE), "true"),
];

/// The row for `name` in `object`, if it is a v1.31 field.
pub fn field(object: Object, name: &str) -> Option<&'static Field> {
    FIELDS.iter().find(|f| f.object == object && f.name == name)
}

/// The names of `object`'s fields, in table order.
pub fn names(object: Object) -> Vec<&'static str> {
    FIELDS
        .iter()
        .filter(|f| f.object == object)
        .map(|f| f.name)
        .collect()
}

/// Why a field has no effect (its table text), for validation that reads the field and then
/// notes it. Panics if the table does not say `NoEffect`: a bug in podsim, found by tests.
pub(crate) fn why(object: Object, name: &str) -> &'static str {
    match field(object, name).map(|f| f.treatment) {
        Some(NoEffect(why)) => why,
        other => panic!(
            "{}.{name} is not a no-effect field: {other:?}",
            object.title()
        ),
    }
}

/// The README's field list: one table per object.
pub fn markdown() -> String {
    let mut out = String::new();
    for object in [Pod, Metadata, PodSpec, Container] {
        out.push_str(&format!(
            "\n**{}** ({} fields)\n\n| field | treatment | what podsim does |\n|---|---|---|\n",
            object.title(),
            names(object).len()
        ));
        for fl in FIELDS.iter().filter(|fl| fl.object == object) {
            let (kind, text) = match fl.treatment {
                Modelled(t) => ("modelled", t),
                NoEffect(t) => ("note", t.strip_prefix("no effect: ").unwrap_or(t)),
                NotBuilt(t) => ("error", t),
            };
            out.push_str(&format!(
                "| `{}{}` | {kind} | {text} |\n",
                object.prefix(),
                fl.name
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_field_appears_once() {
        let mut seen = BTreeSet::new();
        for fl in FIELDS {
            assert!(seen.insert((fl.object, fl.name)), "{} twice", fl.name);
        }
        // The v1.31 API's field counts.
        assert_eq!(names(Pod).len(), 5);
        assert_eq!(names(Metadata).len(), 15);
        assert_eq!(names(PodSpec).len(), 39);
        assert_eq!(names(Container).len(), 24);
    }

    #[test]
    fn notes_say_why_and_errors_say_what_is_missing() {
        for fl in FIELDS {
            match fl.treatment {
                NoEffect(t) => assert!(t.starts_with("no effect: "), "{}", fl.name),
                NotBuilt(t) => assert!(t.starts_with("need "), "{}", fl.name),
                Modelled(t) => assert!(!t.is_empty(), "{}", fl.name),
            }
        }
    }

    #[test]
    fn why_finds_no_effect_fields() {
        assert!(why(PodSpec, "hostNetwork").contains("network"));
        assert!(field(Container, "imagePullPolicy").is_some());
        assert!(field(Container, "imagePullPolicyy").is_none());
    }
}
