//! ============================ NOT BUILT YET ============================
//!
//! Capabilities that scenario files can already express (and that are fully parsed and
//! type-checked) but that the simulator does not model yet. Using one is a validation error
//! naming the missing capability, so a scenario never silently runs without what it asks for.
//!
//! When a capability is built, delete its row from [`NOT_BUILT_YET`]: nothing else changes.

/// Something a scenario can ask for that may not be built yet. Validation reports every use
/// (with its path and position) through `Cx::uses`; the table below decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capability {
    NodeShutdownAction,
    MemoryPressureAction,
    KubeletRestartAction,
    UpdateStaticPodAction,
    RemoveStaticPodAction,
    RecreatePodAction,
    StaticPods,
    LivenessProbe,
    ReadinessProbe,
    StartupProbe,
    InitContainers,
    ProfileV1_21,
    ProfileV1_22,
    ProfileV1_27,
    KubeletBehaviours,
    ShutdownGracePeriod,
    ShutdownGracePeriodCriticalPods,
    ShutdownGracePeriodByPodPriority,
    EvictionSoft,
    EvictionSoftGracePeriod,
    EvictionMaxPodGracePeriod,
}

const PROFILE: &str =
    "is not built yet: the only kubelet profile podsim models so far is `current`";

/// The table: capability -> (what the user wrote, why it is rejected).
pub const NOT_BUILT_YET: &[(Capability, &str, &str)] = &[
    (Capability::InitContainers, "`initContainers`", "need init-container sequencing, which podsim does not model yet"),
    (Capability::ProfileV1_21, "profile `v1.21`", PROFILE),
    (Capability::ProfileV1_22, "profile `v1.22`", PROFILE),
    (Capability::ProfileV1_27, "profile `v1.27`", PROFILE),
    (Capability::KubeletBehaviours, "`behaviours`", "needs behaviour switches, which podsim does not model yet (only the `current` profile's behaviour is built)"),
];

/// The error message if `cap` is not built yet, `None` if it is.
pub fn not_built_yet(cap: Capability) -> Option<String> {
    NOT_BUILT_YET
        .iter()
        .find(|(c, _, _)| *c == cap)
        .map(|(_, what, why)| format!("{what} {why}"))
}

/// The capability for a (valid) profile name, `None` for `current`.
pub fn profile_capability(name: &str) -> Option<Capability> {
    match name {
        "v1.21" => Some(Capability::ProfileV1_21),
        "v1.22" => Some(Capability::ProfileV1_22),
        "v1.27" => Some(Capability::ProfileV1_27),
        _ => None,
    }
}
