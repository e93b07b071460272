//! Shared domain data, no behaviour: pod identity, the Pod-manifest subset podsim models,
//! phases, container behaviour and latency distributions. `kubelet/` and `world/` both
//! import from here and never from each other's internals.

use crate::sim::Dur;
use std::fmt;
use std::sync::Arc;

/// A pod UID. Assigned by the simulated API server (or the static-pod source) in creation
/// order, so UIDs are deterministic and sort in creation order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodUid(pub u32);

impl fmt::Display for PodUid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "uid-{:04}", self.0)
    }
}

impl PodUid {
    /// Append the `Display` form (`uid-` and at least four decimal digits) to `buf`
    /// without the formatting machinery: back-off keys are built on hot paths.
    pub(crate) fn push_to(self, buf: &mut String) {
        #[cfg(debug_assertions)]
        let start = buf.len();
        buf.push_str("uid-");
        let mut digits = [0u8; 10];
        let mut n = self.0;
        let mut len = 0;
        while n > 0 || len < 4 {
            digits[len] = b'0' + (n % 10) as u8;
            n /= 10;
            len += 1;
        }
        for d in digits[..len].iter().rev() {
            buf.push(char::from(*d));
        }
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            buf[start..],
            self.to_string(),
            "PodUid::push_to writes what Display writes"
        );
    }
}

/// A runtime container ID, unique for the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ContainerId(pub u32);

impl fmt::Display for ContainerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "c{}", self.0)
    }
}

/// A runtime sandbox ID, unique for the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SandboxId(pub u32);

impl fmt::Display for SandboxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "s{}", self.0)
    }
}

/// `v1.PodPhase`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum PodPhase {
    #[default]
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

impl PodPhase {
    pub fn is_terminal(self) -> bool {
        matches!(self, PodPhase::Succeeded | PodPhase::Failed)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            PodPhase::Pending => "Pending",
            PodPhase::Running => "Running",
            PodPhase::Succeeded => "Succeeded",
            PodPhase::Failed => "Failed",
            PodPhase::Unknown => "Unknown",
        }
    }
}

impl fmt::Display for PodPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `v1.RestartPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum RestartPolicy {
    #[default]
    Always,
    OnFailure,
    Never,
}

impl RestartPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            RestartPolicy::Always => "Always",
            RestartPolicy::OnFailure => "OnFailure",
            RestartPolicy::Never => "Never",
        }
    }
}

/// What a probe does (only its kind matters to the simulator; outcomes come from
/// `behaviour.probes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeHandler {
    Exec,
    HttpGet,
    TcpSocket,
    Grpc,
}

/// The kind of a probe (`probeType` in `pkg/kubelet/prober`). Hashes as its text, like the
/// words of [`vocab`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProbeType {
    Liveness,
    Readiness,
    Startup,
}

impl ProbeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ProbeType::Liveness => "liveness",
            ProbeType::Readiness => "readiness",
            ProbeType::Startup => "startup",
        }
    }
}

impl std::hash::Hash for ProbeType {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}

impl vocab::Word for ProbeType {
    fn all() -> &'static [Self] {
        &[
            ProbeType::Liveness,
            ProbeType::Readiness,
            ProbeType::Startup,
        ]
    }
    fn text(self) -> &'static str {
        self.as_str()
    }
}

impl std::fmt::Display for ProbeType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `v1.Probe` with API defaults applied.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Probe {
    pub handler: ProbeHandler,
    pub initial_delay_seconds: u32,
    pub period_seconds: u32,
    pub timeout_seconds: u32,
    pub success_threshold: u32,
    pub failure_threshold: u32,
    pub termination_grace_period_seconds: Option<i64>,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            handler: ProbeHandler::Exec,
            initial_delay_seconds: 0,
            period_seconds: 10,
            timeout_seconds: 1,
            success_threshold: 1,
            failure_threshold: 3,
            termination_grace_period_seconds: None,
        }
    }
}

/// Resource amounts: CPU in millicores, memory in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    pub cpu_milli: u64,
    pub memory_bytes: u64,
}

/// `v1.Container`, the subset podsim models.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ContainerSpec {
    pub name: String,
    pub image: String,
    pub liveness_probe: Option<Probe>,
    pub readiness_probe: Option<Probe>,
    pub startup_probe: Option<Probe>,
    /// Whether `lifecycle.preStop` is set (its duration comes from `behaviour`).
    pub has_pre_stop: bool,
    pub requests: Resources,
    pub limits: Resources,
    /// The handler of `lifecycle.postStart`, if set.
    pub post_start: PostStartHook,
    /// The handler of `lifecycle.preStop`, if set (`has_pre_stop` says whether it runs).
    pub pre_stop: PreStopHook,
    /// `imagePullPolicy` as written; `None`: the API server's default for the image.
    pub pull_policy: ImagePull,
    /// `restartPolicy` of an init container: `Always` makes it a native sidecar.
    pub restart_policy: ContainerRestart,
    /// `resources.requests/limits["ephemeral-storage"]`.
    pub ephemeral: EphemeralStorage,
}

/// A container's `imagePullPolicy` (`Never` is refused by validation: it needs images
/// preloaded on the node, which podsim does not model).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PullPolicy {
    Always,
    IfNotPresent,
}

/// `imagePullPolicy` as written. Hashes nothing when unset, so containers without one keep
/// the trace hashes they had before the policy was read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImagePull(pub Option<PullPolicy>);

impl std::hash::Hash for ImagePull {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if let Some(p) = self.0 {
            p.hash(state);
        }
    }
}

impl PullPolicy {
    /// The API server's default (v1.31 `pkg/apis/core/v1/defaults.go`): `Always` for an
    /// image whose tag is `latest` or missing, `IfNotPresent` otherwise (a digest counts as
    /// a tag).
    pub fn default_for(image: &str) -> PullPolicy {
        let last = image.rsplit('/').next().unwrap_or(image);
        if image.contains('@') {
            return PullPolicy::IfNotPresent;
        }
        match last.rsplit_once(':') {
            Some((_, tag)) if tag != "latest" => PullPolicy::IfNotPresent,
            _ => PullPolicy::Always,
        }
    }
}

/// A container's own `restartPolicy` (only `Always`, only on init containers, as v1.31's
/// API validation allows). Hashes nothing when unset, so containers without it keep the
/// trace hashes they had before sidecars were modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ContainerRestart(pub Option<RestartPolicy>);

impl std::hash::Hash for ContainerRestart {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if let Some(p) = self.0 {
            p.hash(state);
        }
    }
}

/// `lifecycle.postStart`'s handler. Hashes nothing when unset, so containers without one
/// keep the trace hashes they had before postStart hooks were modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostStartHook(pub Option<HookHandler>);

impl std::hash::Hash for PostStartHook {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if let Some(h) = self.0 {
            h.hash(state);
        }
    }
}

/// `lifecycle.preStop`'s handler. Hashes only a `tcpSocket` handler: whether any other
/// runs was already said by `has_pre_stop` (and how long by the behaviour), so specs keep
/// the trace hashes they had before handler kinds were modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PreStopHook(pub Option<HookHandler>);

impl std::hash::Hash for PreStopHook {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if self.0 == Some(HookHandler::TcpSocket) {
            HookHandler::TcpSocket.hash(state);
        }
    }
}

/// A lifecycle hook's handler kind (`v1.LifecycleHandler`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookHandler {
    Exec,
    HttpGet,
    /// Accepted by the API but not runnable: v1.31's handler runner rejects it at once.
    TcpSocket,
    /// The `sleep` action: the kubelet waits its seconds.
    Sleep(u64),
}

/// A Pod manifest, the subset podsim models (metadata + spec).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PodSpec {
    pub name: String,
    pub namespace: Arc<str>,
    /// `spec.terminationGracePeriodSeconds` (API default 30).
    pub termination_grace_period_seconds: Option<i64>,
    pub restart_policy: RestartPolicy,
    pub priority: i32,
    pub priority_class_name: Option<String>,
    pub host_network: bool,
    pub init_containers: Containers,
    pub containers: Containers,
    /// The configmaps and secrets the pod's volumes reference.
    pub objects: ObjectRefs,
    /// `spec.activeDeadlineSeconds`.
    pub active_deadline: ActiveDeadline,
    /// `spec.readinessGates[].conditionType`.
    pub readiness_gates: ReadinessGates,
    /// `spec.volumes[].emptyDir`.
    pub empty_dirs: EmptyDirs,
}

/// A pod's `containers` or `initContainers`: shared copy-on-write, so the replicas of one
/// `spec.pods` entry (and every holder of a pod's spec) keep one copy of their container
/// specs instead of one each. Reads as a `Vec`; a change copies a shared list first.
/// Hashes, compares and prints as the `Vec` it holds.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Containers(Arc<Vec<ContainerSpec>>);

impl std::fmt::Debug for Containers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::ops::Deref for Containers {
    type Target = Vec<ContainerSpec>;
    fn deref(&self) -> &Vec<ContainerSpec> {
        &self.0
    }
}

impl std::ops::DerefMut for Containers {
    fn deref_mut(&mut self) -> &mut Vec<ContainerSpec> {
        Arc::make_mut(&mut self.0)
    }
}

impl From<Vec<ContainerSpec>> for Containers {
    fn from(v: Vec<ContainerSpec>) -> Self {
        Containers(Arc::new(v))
    }
}

impl<'a> IntoIterator for &'a Containers {
    type Item = &'a ContainerSpec;
    type IntoIter = std::slice::Iter<'a, ContainerSpec>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// `spec.readinessGates`: the condition types that must be True (in the API object) before
/// the pod is Ready. Hashes nothing when empty, so pods without gates keep the trace hashes
/// they had before gates were modelled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadinessGates(pub Vec<PodConditionType>);

impl std::hash::Hash for ReadinessGates {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if !self.0.is_empty() {
            self.0.hash(state);
        }
    }
}

/// `spec.activeDeadlineSeconds` (at least 1 when set). Hashes nothing when unset, so pods
/// without a deadline keep the trace hashes they had before the field was modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ActiveDeadline(pub Option<i64>);

impl std::hash::Hash for ActiveDeadline {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if let Some(s) = self.0 {
            s.hash(state);
        }
    }
}

/// The configmaps (`configmap/NAME`) and secrets (`secret/NAME`) a pod's `configMap` and
/// `secret` volumes reference, in spec order. Hashes nothing when empty, so pods without
/// such volumes keep the trace hashes they had before volumes were parsed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectRefs(pub Vec<String>);

impl std::hash::Hash for ObjectRefs {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        if !self.0.is_empty() {
            self.0.hash(state);
        }
    }
}

impl PodSpec {
    /// Every container, init containers first: the index space of the kubelet's container
    /// starts (an app container's index is `init_containers.len()` plus its position).
    pub fn all_containers(&self) -> impl Iterator<Item = &ContainerSpec> {
        self.init_containers.iter().chain(&self.containers)
    }

    /// The container at `idx` of [`PodSpec::all_containers`].
    pub fn container_at(&self, idx: usize) -> &ContainerSpec {
        let n = self.init_containers.len();
        if idx < n {
            &self.init_containers[idx]
        } else {
            &self.containers[idx - n]
        }
    }

    /// The container (init or app) with this name.
    pub fn container_named(&self, name: &str) -> Option<&ContainerSpec> {
        self.all_containers().find(|c| c.name == name)
    }

    /// Whether the pod has a native sidecar (`HasRestartableInitContainer`).
    pub fn has_sidecars(&self) -> bool {
        self.init_containers.iter().any(ContainerSpec::is_sidecar)
    }

    /// `name_namespace`, the kubelet's pod full name.
    pub fn full_name(&self) -> String {
        format!("{}_{}", self.name, self.namespace)
    }
}

/// When a container's process exits on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RunFor {
    Forever,
    For(Dur),
}

/// What the process does on SIGTERM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OnSigterm {
    /// Exits `after` the signal with `exit_code`.
    ExitAfter { after: Dur, exit_code: i32 },
    /// Keeps running until SIGKILL (exit code 137).
    Ignore,
}

/// A probe outcome model from `behaviour.probes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeOutcome {
    /// Always succeeds (`{succeed: true}`) or always fails (`{succeed: false}`).
    Always(bool),
    /// Fails from this time after the container started.
    FailFrom(Dur),
    /// Fails in [from, to) after the container started.
    FailBetween(Dur, Dur),
    /// Each probe fails with this probability (parts per million).
    FailureRatio(u32),
}

/// `behaviour.<container>`: what a container's process does. Not part of a Pod manifest.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Behaviour {
    pub run_for: RunFor,
    pub exit_code: i32,
    pub on_sigterm: OnSigterm,
    pub pre_stop_duration: Dur,
    /// The container's preStop hook is the `sleep` action (set from the manifest): the
    /// kubelet waits by itself, so the hook needs no running container and does not end
    /// with it.
    pub pre_stop_sleep: bool,
    pub memory_usage_bytes: u64,
    pub liveness: ProbeOutcome,
    pub readiness: ProbeOutcome,
    pub startup: ProbeOutcome,
    /// Image pull fails (ErrImagePull) with this probability (parts per million).
    pub image_pull_failure_ppm: u32,
    /// How long a postStart `exec` or `httpGet` handler runs (a `sleep` handler: its
    /// seconds, set from the manifest).
    pub post_start_duration: Dur,
    /// The postStart handler's outcome: non-zero, the hook fails.
    pub post_start_exit_code: i32,
    /// The container's postStart hook is the `sleep` action (set from the manifest).
    pub post_start_sleep: bool,
    /// `resources.limits.memory` (set from the manifest; 0: none): an instance whose
    /// `memory_usage_bytes` exceeds it is OOM-killed by the runtime.
    pub memory_limit_bytes: u64,
    /// `diskUsage`: the container's writable layer and logs.
    pub disk_usage: Usage,
    /// `inodes`: inodes the container uses on the same filesystem.
    pub inodes: Usage,
    /// `pids`: processes the container runs.
    pub pids: Usage,
}

/// How long an instance whose memory use exceeds its limit runs before the kernel's OOM
/// killer ends it (a simplification: the working set is reached this soon after start).
pub const OOM_AFTER: Dur = Dur::secs(1);

impl Behaviour {
    /// How the container answers probes of this kind.
    pub fn probe_outcome(&self, t: ProbeType) -> ProbeOutcome {
        match t {
            ProbeType::Liveness => self.liveness,
            ProbeType::Readiness => self.readiness,
            ProbeType::Startup => self.startup,
        }
    }
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            run_for: RunFor::Forever,
            exit_code: 0,
            on_sigterm: OnSigterm::ExitAfter {
                after: Dur::ZERO,
                exit_code: 143,
            },
            pre_stop_duration: Dur::ZERO,
            pre_stop_sleep: false,
            memory_usage_bytes: 0,
            liveness: ProbeOutcome::Always(true),
            readiness: ProbeOutcome::Always(true),
            startup: ProbeOutcome::Always(true),
            image_pull_failure_ppm: 0,
            post_start_duration: Dur::ZERO,
            post_start_exit_code: 0,
            post_start_sleep: false,
            memory_limit_bytes: 0,
            disk_usage: Usage::default(),
            inodes: Usage::default(),
            pids: Usage::default(),
        }
    }
}

/// A latency distribution. Sampling lives in `world::dist`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dist {
    Fixed(Dur),
    Uniform { min: Dur, max: Dur },
    Exponential { mean: Dur },
    LogNormal { median: Dur, p99: Dur },
}

/// CRI calls that have latencies and can be given faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CriCall {
    RunPodSandbox,
    PullImage,
    CreateContainer,
    StartContainer,
    StopContainer,
    StopPodSandbox,
    PodStatus,
    RemoveContainer,
    /// `RemovePodSandbox` (the sandbox garbage collector).
    RemovePodSandbox,
    /// Host operations of the node (not CRI): volume mounts, the pod cgroup, the pod dir.
    MountVolumes,
    UnmountVolumes,
    RemovePodCgroup,
    RemovePodDir,
    /// `RemoveImage` (image garbage collection and the eviction manager's reclaim).
    RemoveImage,
}

impl CriCall {
    pub const ALL: [CriCall; 14] = [
        CriCall::RunPodSandbox,
        CriCall::PullImage,
        CriCall::CreateContainer,
        CriCall::StartContainer,
        CriCall::StopContainer,
        CriCall::StopPodSandbox,
        CriCall::PodStatus,
        CriCall::RemoveContainer,
        CriCall::RemovePodSandbox,
        CriCall::MountVolumes,
        CriCall::UnmountVolumes,
        CriCall::RemovePodCgroup,
        CriCall::RemovePodDir,
        CriCall::RemoveImage,
    ];
    /// The camelCase name used in scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            CriCall::RunPodSandbox => "runPodSandbox",
            CriCall::PullImage => "pullImage",
            CriCall::CreateContainer => "createContainer",
            CriCall::StartContainer => "startContainer",
            CriCall::StopContainer => "stopContainer",
            CriCall::StopPodSandbox => "stopPodSandbox",
            CriCall::PodStatus => "podStatus",
            CriCall::RemoveContainer => "removeContainer",
            CriCall::RemovePodSandbox => "removePodSandbox",
            CriCall::MountVolumes => "mountVolumes",
            CriCall::UnmountVolumes => "unmountVolumes",
            CriCall::RemovePodCgroup => "removePodCgroup",
            CriCall::RemovePodDir => "removePodDir",
            CriCall::RemoveImage => "removeImage",
        }
    }
}

/// gRPC-style error codes a faulty CRI call returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CriError {
    DeadlineExceeded,
    Unavailable,
    Unknown,
    Internal,
    ResourceExhausted,
}

impl CriError {
    pub fn as_str(self) -> &'static str {
        match self {
            CriError::DeadlineExceeded => "DeadlineExceeded",
            CriError::Unavailable => "Unavailable",
            CriError::Unknown => "Unknown",
            CriError::Internal => "Internal",
            CriError::ResourceExhausted => "ResourceExhausted",
        }
    }
}

/// `resource.Quantity.String()` of a byte count (BinarySI canonical form).
pub fn quantity(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    if bytes < 1024 {
        // Small values are printed in DecimalSI.
        return if bytes % 1000 == 0 {
            format!("{}k", bytes / 1000)
        } else {
            bytes.to_string()
        };
    }
    let mut n = bytes;
    let mut exp = 0;
    while n % 1024 == 0 && exp < 6 {
        n /= 1024;
        exp += 1;
    }
    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
    format!("{n}{suffix}")
}

pub(crate) mod change_log;
pub mod conditions;
pub use conditions::*;
pub mod reach;
pub mod storage;
pub use storage::{EmptyDir, EmptyDirs, EphemeralStorage, Usage};
pub mod status;
pub use status::*;
pub mod transition;
pub(crate) mod uid_map;
pub mod vocab;
pub use transition::Transition;
pub use vocab::*;

impl ContainerSpec {
    /// The container's probe of this kind, if it has one.
    pub fn probe(&self, t: ProbeType) -> Option<&Probe> {
        match t {
            ProbeType::Liveness => self.liveness_probe.as_ref(),
            ProbeType::Readiness => self.readiness_probe.as_ref(),
            ProbeType::Startup => self.startup_probe.as_ref(),
        }
    }

    /// `imagePullPolicy`: as written, else the API server's default for the image.
    pub fn image_pull_policy(&self) -> PullPolicy {
        self.pull_policy
            .0
            .unwrap_or_else(|| PullPolicy::default_for(&self.image))
    }

    /// A container with a name and an image and nothing else set.
    pub fn named(name: &str, image: &str) -> Self {
        ContainerSpec {
            name: name.to_string(),
            image: image.to_string(),
            liveness_probe: None,
            readiness_probe: None,
            startup_probe: None,
            has_pre_stop: false,
            requests: Resources::default(),
            limits: Resources::default(),
            post_start: PostStartHook(None),
            pre_stop: PreStopHook(None),
            pull_policy: ImagePull(None),
            restart_policy: ContainerRestart::default(),
            ephemeral: EphemeralStorage::default(),
        }
    }

    /// A restartable init container (`restartPolicy: Always`), a native sidecar
    /// (`IsRestartableInitContainer` in `pkg/kubelet/types`, v1.31).
    pub fn is_sidecar(&self) -> bool {
        self.restart_policy.0 == Some(RestartPolicy::Always)
    }
}

impl PodSpec {
    /// A pod spec with API defaults: grace 30 s, priority 0, no init containers.
    pub fn new(
        name: &str,
        namespace: &str,
        restart_policy: RestartPolicy,
        containers: Vec<ContainerSpec>,
    ) -> Self {
        PodSpec {
            name: name.to_string(),
            namespace: namespace.into(),
            termination_grace_period_seconds: Some(30),
            restart_policy,
            priority: 0,
            priority_class_name: None,
            host_network: false,
            init_containers: Containers::default(),
            containers: containers.into(),
            objects: ObjectRefs::default(),
            active_deadline: ActiveDeadline::default(),
            readiness_gates: ReadinessGates::default(),
            empty_dirs: EmptyDirs::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::PodUid;
    use super::PullPolicy::{self, Always, IfNotPresent};

    #[test]
    fn push_to_equals_display() {
        for n in [0, 7, 42, 999, 1000, 9999, 10_000, 123_456, u32::MAX] {
            let mut buf = String::from("x_");
            PodUid(n).push_to(&mut buf);
            assert_eq!(buf, format!("x_{}", PodUid(n)));
        }
    }

    #[test]
    fn image_pull_policy_defaults_from_tag() {
        assert_eq!(PullPolicy::default_for("nginx"), Always);
        assert_eq!(
            PullPolicy::default_for("registry.example/app:latest"),
            Always
        );
        assert_eq!(PullPolicy::default_for("registry.example:5000/app"), Always);
        assert_eq!(
            PullPolicy::default_for("registry.example:5000/app:1"),
            IfNotPresent
        );
        assert_eq!(PullPolicy::default_for("app@sha256:abc"), IfNotPresent);
    }
}
