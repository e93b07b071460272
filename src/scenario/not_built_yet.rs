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
    ShutdownGracePeriod,
    ShutdownGracePeriodCriticalPods,
    ShutdownGracePeriodByPodPriority,
    EvictionSoft,
    EvictionSoftGracePeriod,
    EvictionMaxPodGracePeriod,
}

/// The table: capability -> (what the user wrote, why it is rejected).
pub const NOT_BUILT_YET: &[(Capability, &str, &str)] = &[];

/// The error message if `cap` is not built yet, `None` if it is.
pub fn not_built_yet(cap: Capability) -> Option<String> {
    NOT_BUILT_YET
        .iter()
        .find(|(c, _, _)| *c == cap)
        .map(|(_, what, why)| format!("{what} {why}"))
}
