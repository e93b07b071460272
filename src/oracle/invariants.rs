//! The invariant table: every property the oracle checks, with a stable kebab-case name,
//! its one-line meaning, the upstream source it comes from, and the behaviour profiles on
//! which it must hold.
//!
//! Each checker under `super::checkers` owns the rows of the invariants it checks; this
//! module puts them together, at compile time, in [`Inv`] order (the order of `podsim
//! invariants`). Profile labels: `v1.21` (before the pod-worker state machine of PR
//! 102344), `v1.22` (that state machine), `v1.27` (PRs 113145 and 115331) and `current`
//! (v1.31). An invariant upstream itself violates by design on a release does not list
//! that release.

use super::checkers;

/// Safety (checked as each transition happens) or liveness (bounded progress, checked at
/// the end of a run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Safety,
    Liveness,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Safety => "safety",
            Kind::Liveness => "liveness",
        }
    }
}

/// One invariant.
#[derive(Clone, Copy, Debug)]
pub struct Invariant {
    /// Stable kebab-case name (the `invariant` of a finding, `expect.findings` entries).
    pub name: &'static str,
    /// Its id in podsim's own catalogue (see the [`super`] module doc): `S<n>` safety,
    /// `L<n>` liveness, `C<n>` checklist item.
    pub id: &'static str,
    pub kind: Kind,
    /// One line: what must hold.
    pub meaning: &'static str,
    /// For liveness: the bound, and when the check is skipped.
    pub bound: &'static str,
    /// The upstream file, PR or issue it comes from.
    pub source: &'static str,
    /// The profiles on which it must hold.
    pub profiles: &'static [&'static str],
}

/// Every release (a profile is a release; `current` is the newest, `v1.31`).
pub const ALL: &[&str] = &[
    "v1.21", "v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31",
];
/// Since the pod-worker state machine (PR 102344, v1.22).
pub(crate) const V122: &[&str] = &["v1.22", "v1.23", "v1.25", "v1.27", "v1.29", "v1.31"];
/// Since v1.23 (PRs 104743, 104847, 105462, 105527).
pub(crate) const V123: &[&str] = &["v1.23", "v1.25", "v1.27", "v1.29", "v1.31"];
/// Since v1.25 (the v1.24 fixes: PRs 107900, 107831, 108366, 106899; PR 110191).
pub(crate) const V125: &[&str] = &["v1.25", "v1.27", "v1.29", "v1.31"];
/// Since v1.27 (PRs 113145, 115331).
pub(crate) const V127: &[&str] = &["v1.27", "v1.29", "v1.31"];
/// Since v1.29 (PR 120620).
pub(crate) const V129: &[&str] = &["v1.29", "v1.31"];
/// v1.21 and v1.31: an explicit grace of 0 means 1 s (v1.21's kill path; PR 124063's
/// override of 1 in v1.31).
pub(crate) const V121_V131: &[&str] = &["v1.21", "v1.31"];
/// v1.21's design, then a regression from v1.22.0 fixed for v1.24 (first profile v1.25).
pub(crate) const V121_V125: &[&str] = &["v1.21", "v1.25", "v1.27", "v1.29", "v1.31"];
/// An open upstream bug: no release holds it (a finding on `current` is upstream's
/// behaviour, not a port bug).
pub(crate) const NONE: &[&str] = &[];

/// An invariant by position in [`INVARIANTS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Inv {
    NoStartAfterTermination,
    SingleSyncPerUid,
    SyncOrder,
    NoTerminalPhaseWhileRunning,
    TerminalPhaseAbsorbing,
    LocalTerminalPhaseAbsorbing,
    DeleteOnlyAfterReclamation,
    GraceNeverIncreases,
    NoProbeAfterTermination,
    NoRestartAfterTermination,
    FinishedIsFinal,
    StaticFullnameExclusivity,
    KillCompletionTruthful,
    RuntimePodsNoApiWrites,
    EvictionRules,
    ShutdownGroupOrder,
    NoSyncOfKnownTerminated,
    StatusBeforeStop,
    NoTeardownUnderRunningContainer,
    NoReadyWithTerminalPhase,
    FailedNeverBecomesSucceeded,
    FinalContainerStatusFidelity,
    DeletedPodStops,
    DeletedPodRemovedFromApi,
    TerminationFinishes,
    OrphanedRuntimePodsDie,
    NaturalCompletion,
    RestartReadmitsRunningPods,
    CacheFreshness,
    ReferencedObjectsRegistered,
    ShutdownKillsDoneAtGroupDeadline,
    ReadinessDuringTermination,
    ShutdownPodsFailed,
    GraceWithinOverrides,
    DesiredStaticPodRuns,
    WorkerKeptUntilTerminated,
    StartsOnlyInInflightSync,
    ProbesOnlyRunningContainers,
    TerminalInApiAfterStop,
    FinishedPodForgotten,
    KillPodNowReturns,
    EvictionReevaluates,
    NodeShutdownCompletes,
    LivenessFailureKills,
    NotReadyAfterShutdownStart,
    ApiWritesCarryUid,
    SidecarsStopAfterMainContainers,
    InitContainersNotRerun,
    DeletionNotHeldByPostStart,
    ReclaimBeforeDiskEviction,
    ImageGcSparesUsedImages,
    EvictedPodContainersReclaimed,
}

impl Inv {
    /// Every invariant, in table order.
    pub const ALL: &[Inv] = &[
        Inv::NoStartAfterTermination,
        Inv::SingleSyncPerUid,
        Inv::SyncOrder,
        Inv::NoTerminalPhaseWhileRunning,
        Inv::TerminalPhaseAbsorbing,
        Inv::LocalTerminalPhaseAbsorbing,
        Inv::DeleteOnlyAfterReclamation,
        Inv::GraceNeverIncreases,
        Inv::NoProbeAfterTermination,
        Inv::NoRestartAfterTermination,
        Inv::FinishedIsFinal,
        Inv::StaticFullnameExclusivity,
        Inv::KillCompletionTruthful,
        Inv::RuntimePodsNoApiWrites,
        Inv::EvictionRules,
        Inv::ShutdownGroupOrder,
        Inv::NoSyncOfKnownTerminated,
        Inv::StatusBeforeStop,
        Inv::NoTeardownUnderRunningContainer,
        Inv::NoReadyWithTerminalPhase,
        Inv::FailedNeverBecomesSucceeded,
        Inv::FinalContainerStatusFidelity,
        Inv::DeletedPodStops,
        Inv::DeletedPodRemovedFromApi,
        Inv::TerminationFinishes,
        Inv::OrphanedRuntimePodsDie,
        Inv::NaturalCompletion,
        Inv::RestartReadmitsRunningPods,
        Inv::CacheFreshness,
        Inv::ReferencedObjectsRegistered,
        Inv::ShutdownKillsDoneAtGroupDeadline,
        Inv::ReadinessDuringTermination,
        Inv::ShutdownPodsFailed,
        Inv::GraceWithinOverrides,
        Inv::DesiredStaticPodRuns,
        Inv::WorkerKeptUntilTerminated,
        Inv::StartsOnlyInInflightSync,
        Inv::ProbesOnlyRunningContainers,
        Inv::TerminalInApiAfterStop,
        Inv::FinishedPodForgotten,
        Inv::KillPodNowReturns,
        Inv::EvictionReevaluates,
        Inv::NodeShutdownCompletes,
        Inv::LivenessFailureKills,
        Inv::NotReadyAfterShutdownStart,
        Inv::ApiWritesCarryUid,
        Inv::SidecarsStopAfterMainContainers,
        Inv::InitContainersNotRerun,
        Inv::DeletionNotHeldByPostStart,
        Inv::ReclaimBeforeDiskEviction,
        Inv::ImageGcSparesUsedImages,
        Inv::EvictedPodContainersReclaimed,
    ];

    pub fn def(self) -> &'static Invariant {
        &INVARIANTS[self as usize]
    }
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

/// Every invariant, in [`Inv`] order.
pub const INVARIANTS: &[Invariant] = &TABLE;

const TABLE: [Invariant; Inv::ALL.len()] = assemble(&[
    checkers::worker::ROWS,
    checkers::sync::ROWS,
    checkers::api::ROWS,
    checkers::teardown::ROWS,
    checkers::probes::ROWS,
    checkers::static_pods::ROWS,
    checkers::eviction::ROWS,
    checkers::shutdown::ROWS,
    checkers::kills::ROWS,
    checkers::liveness::ROWS,
    checkers::init_containers::ROWS,
    checkers::hooks::ROWS,
    checkers::disk_reclaim::ROWS,
]);

/// The checkers' rows, each at its [`Inv`] position; a compile error when an invariant has
/// no row or two.
const fn assemble(parts: &[&[(Inv, Invariant)]]) -> [Invariant; Inv::ALL.len()] {
    const BLANK: Invariant = Invariant {
        name: "",
        id: "",
        kind: Kind::Safety,
        meaning: "",
        bound: "",
        source: "",
        profiles: NONE,
    };
    let mut out = [BLANK; Inv::ALL.len()];
    let mut filled = [false; Inv::ALL.len()];
    let mut p = 0;
    while p < parts.len() {
        let mut r = 0;
        while r < parts[p].len() {
            let (inv, row) = parts[p][r];
            let k = inv as usize;
            assert!(!filled[k], "an invariant has two rows");
            out[k] = row;
            filled[k] = true;
            r += 1;
        }
        p += 1;
    }
    let mut k = 0;
    while k < out.len() {
        assert!(filled[k], "an invariant has no row");
        k += 1;
    }
    out
}

/// The invariant named `name`.
pub fn by_name(name: &str) -> Option<&'static Invariant> {
    INVARIANTS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_with_unique_kebab_names() {
        assert_eq!(*Inv::ALL.last().unwrap() as usize + 1, INVARIANTS.len());
        assert_eq!(Inv::ALL.len(), INVARIANTS.len());
        for (k, i) in Inv::ALL.iter().enumerate() {
            assert_eq!(*i as usize, k);
        }
        assert_eq!(Inv::StatusBeforeStop.name(), "status-before-stop");
        assert_eq!(
            Inv::FinalContainerStatusFidelity.name(),
            "final-container-status-fidelity"
        );
        let mut names: Vec<&str> = INVARIANTS.iter().map(|i| i.name).collect();
        for n in &names {
            assert!(
                n.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    && !n.starts_with('-')
                    && !n.ends_with('-')
                    && !n.contains("--"),
                "{n} is not kebab-case"
            );
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), INVARIANTS.len());
        for i in INVARIANTS {
            // On current, unless no release holds it (an open upstream bug).
            assert!(
                i.profiles.contains(&"v1.31") || i.profiles.is_empty(),
                "{} not on current",
                i.name
            );
            assert!(i.profiles.iter().all(|p| ALL.contains(p)));
            assert_eq!(i.kind == Kind::Liveness, !i.bound.is_empty(), "{}", i.name);
            assert!(i.invariants_len_ok());
        }
    }

    impl Invariant {
        fn invariants_len_ok(&self) -> bool {
            !self.meaning.is_empty() && !self.source.is_empty() && INVARIANTS.len() < 64
        }
    }
}
