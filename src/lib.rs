//! # podsim
//!
//! podsim replays kubelet pod lifecycles on virtual time. A *scenario* (YAML) describes a
//! node, its pods (real Pod manifest fields), how their containers behave, the container
//! runtime's latencies and faults, the kubelet's configuration and behaviour profile, and a
//! timeline of outside actions. A *run* is a pure function of (scenario, seed, podsim
//! version): one seeded, single-threaded event loop drives a port of the kubelet's
//! pod-lifecycle logic against a simulated container runtime and API server, and yields a
//! per-pod lifecycle summary, findings, metrics and a trace hash.
//!
//! ## Code map (in reading order)
//!
//! * [`sim`]: the simulation core (time, event queue, scheduler, RNG streams, limits,
//!   trace). It knows nothing about pods.
//! * [`model`]: shared domain data with no behaviour (pod spec subset, phases, runtime and
//!   API statuses) and the **typed vocabulary** of the trace: every [`model::Transition`]
//!   and the words inside it ([`model::vocab`]: worker and sync steps, host operations, CRI
//!   calls, API removals, probe, eviction and shutdown steps ...). The trace text is
//!   rendered from these enums in one place, and each word hashes as its text.
//! * [`scenario`]: scenario and sweep files: parsing, `--set` overrides, validation by
//!   section (`scenario::validate::{primitives, kubelet, pods, behaviour, timeline,
//!   sweep}`) into a typed [`scenario::Scenario`] with every default applied.
//! * `world` (crate-private): what the kubelet talks to: the CRI runtime with container
//!   processes (`world::runtime`, answering the protocol of `world::cri`), the API server
//!   with its watch, the static-pod manifest directory, systemd-logind and the node's
//!   power. The kubelet acts on it only through `world::Ctx`: calls and timers, no ground
//!   truth. Everything addressed to the kubelet carries its incarnation (`world::Epoch`);
//!   after a `kubeletRestart` the world drops what belongs to the dead process.
//! * `kubelet` (crate-private): the port (pod workers and their loop, sync phases, CRI
//!   reply routing, PLEG, status manager, prober, housekeeping, admission, eviction manager,
//!   graceful node shutdown, restart recovery, the v1.21 design, behaviour profiles). Each
//!   file names the upstream file and release it follows; state-machine rules are checked
//!   as pre- and postconditions in every build (a broken one panics, and the caller prints
//!   the replay line).
//! * [`oracle`]: the invariant oracle, a set of checkers (one per concern: pod worker,
//!   sync, API and status, teardown, probes, static pods, eviction, node shutdown,
//!   `killPodNow`, liveness), each owning its invariants and their table rows; it keeps its
//!   own history from the transitions it is shown and turns violated properties into
//!   findings. Removing it changes no trace hash.
//! * [`run`]: one run, scenario + seed -> [`run::RunOutput`]. `run::World` is the
//!   composition root: it owns the simulation core, the kubelet, the world parts and the
//!   trace with its oracle, and dispatches every event; the timeline, the kubelet process
//!   and the node's power, the output types and the summary have a file each.
//! * Bulk: [`sweep`] (seeds x parameter points x profiles on a rayon pool), [`results`]
//!   (result directory, resume, merge), [`bisect`], [`hunt`] (search over a base scenario's
//!   inputs for runs that break an invariant; its generator is also the swarm test's);
//!   crate-private `progress` (a wall-clock
//!   reader, for the person watching), `lock` (the result directory's lock file, which
//!   records the wall time it was taken, for the person reading who holds it), `outfile`
//!   (writing an output file atomically without replacing a device, FIFO or symlink),
//!   `junit`, `plot`, `report`, `report_html` (`podsim report`: a result directory as one
//!   HTML page), and `replay` (the replay line and the temporary-file paths
//!   that bulk code and the CLI share); [`diff`] (`podsim diff`: where two runs part).
//! * [`hunt`]: search over scenario inputs (`podsim hunt`); `hunt::doc` holds a scenario
//!   as a document tree (a `serde_json::Value`) with a YAML writer; `hunt::shrink` cuts a
//!   scenario down to a small one that still shows a finding (`podsim shrink`).
//! * [`cli`]: the command line, thin: one function per subcommand (`cli_run` holds `run`'s
//!   streamed outputs, `cli_sweep` the `sweep` and `merge` commands).
//!
//! ## Architecture invariants (enforced by `tests/architecture.rs`)
//!
//! * Arrows point down: cli -> bulk -> run -> {kubelet, world, oracle} -> model -> sim.
//!   The oracle imports only `model` and `sim` (never `kubelet`, `world`, `run`,
//!   `scenario`); `world` names neither the kubelet (its timers are the `K` of
//!   `world::Event<K>`) nor the oracle (it writes to a `world::Tracer`); `scenario` names
//!   neither the kubelet nor the oracle (the entry points below hand it the profile, switch
//!   and invariant names it checks against); bulk modules never call `cli`.
//! * No source file over 1,000 lines, and no function over 150 lines.
//! * The documentation stands alone: no pointer to a document outside the repository.
//!
//! ## Public API
//!
//! What a user of the crate needs: [`load`], [`load_str`], [`load_sweep`],
//! [`load_sweep_str`], [`check_file`] (scenario and sweep files in, typed and validated);
//! [`run::run`] with [`run::RunOptions`] and the output types ([`run::RunOutput`],
//! [`run::Finding`], [`run::PodSummary`], [`run::Metrics`] ...); [`sweep`], [`results`]
//! and [`bisect`] for bulk runs; the invariant table ([`oracle::invariants`]); the switch
//! table ([`SWITCHES`], [`PROFILES`]); the vocabulary ([`model`]) and the simulation core
//! ([`sim`]) for reading traces and benchmarking. Everything else is `pub(crate)`.
//!
//! ## Determinism
//!
//! Virtual time is integer nanoseconds; every random choice comes from a named ChaCha8
//! stream derived from (seed, stream name); nothing iterates a hash map; nothing reads the
//! wall clock (`clippy.toml` bans both). Same (scenario, seed, version) gives the same
//! trace hash on any thread count.

pub mod bisect;
pub mod bisect_releases;
pub mod cli;
/// The behaviour switches and release profiles (see the README's profile table).
pub use kubelet::profile::{Switch, PROFILES, PROFILE_ALIASES, SWITCHES};
pub use kubelet::profile_doc::switches_markdown;
pub use kubelet::release::{NEWEST, RELEASES};

pub(crate) mod cli_run;
pub(crate) mod cli_sweep;
pub mod diff;
pub mod hunt;
pub(crate) mod junit;
pub(crate) mod kubelet;
pub(crate) mod lock;
pub mod model;
pub mod oracle;
pub(crate) mod outfile;
pub(crate) mod plot;
pub(crate) mod progress;
pub(crate) mod replay;
pub(crate) mod report;
pub(crate) mod report_html;
pub mod results;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub(crate) mod sweep_table;
pub(crate) mod world;

/// The process's allocator (issue 15): a run makes and frees many small objects (operation
/// records, status copies, queue entries), and mimalloc's per-size free lists serve them in
/// fewer instructions than glibc's malloc. Set here, in the library, so that the binary, the
/// tests and the benchmarks all measure the same allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use scenario::{GateName, GateOnProfile, LoadError, Loaded, Names, Note, SweepFile, SwitchName};
use std::path::Path;

/// The names scenario validation checks against, gathered from the modules that define
/// them: the kubelet's profiles and behaviour switches, the oracle's invariants, and the
/// finding a run reports itself.
pub(crate) fn names() -> Names {
    Names {
        profiles: kubelet::profile::PROFILES.to_vec(),
        profile_aliases: kubelet::profile::PROFILE_ALIASES.to_vec(),
        switches: kubelet::profile::SWITCHES
            .iter()
            .map(|s| SwitchName {
                name: s.name,
                built: s.built,
                refs: s.refs,
                on: s.on_releases(),
            })
            .collect(),
        gates: kubelet::gates::GATES
            .iter()
            .map(|g| GateName {
                name: g.name,
                names: g.names(),
                on: kubelet::profile::PROFILES
                    .iter()
                    .filter_map(|p| {
                        let r = g.on(p)?;
                        Some(GateOnProfile {
                            profile: p,
                            name: r.name,
                            default: r.default,
                            locked: r.locked,
                            stage: r.stage.as_str(),
                        })
                    })
                    .collect(),
                removed_on: kubelet::profile::PROFILES
                    .iter()
                    .copied()
                    .filter(|p| g.removed_on(p))
                    .collect(),
                switch: g.switch_name(),
                off_built: g.off_built,
                history: g.history(),
            })
            .collect(),
        invariants: oracle::invariants::INVARIANTS
            .iter()
            .map(|i| i.name)
            .collect(),
        // Reported by the run itself when it stops at an event budget.
        run_findings: vec!["run-limit-reached"],
    }
}

/// Loads and validates a scenario file, applying `--set` overrides `(PATH, VALUE)` first.
pub fn load(path: &Path, overrides: &[(String, String)]) -> Result<Loaded, LoadError> {
    scenario::load(path, overrides, &names())
}

/// [`load`] from text; `source_name` is used in messages and `Scenario::source`.
pub fn load_str(
    source_name: &str,
    text: &str,
    overrides: &[(String, String)],
) -> Result<Loaded, LoadError> {
    scenario::load_str(source_name, text, overrides, &names())
}

/// Loads and validates a `kind: Sweep` file and the scenario it names.
pub fn load_sweep(path: &Path) -> Result<SweepFile, LoadError> {
    scenario::load_sweep(path, &names())
}

/// [`load_sweep`] from text; `spec.scenario` is resolved against `base_dir`.
pub fn load_sweep_str(
    source_name: &str,
    text: &str,
    base_dir: &Path,
) -> Result<SweepFile, LoadError> {
    scenario::load_sweep_str(source_name, text, base_dir, &names())
}

/// Validates a scenario or sweep file (dispatching on `kind`), as `podsim check` does.
/// Returns the notes of a valid file.
pub fn check_file(path: &Path) -> Result<Vec<Note>, LoadError> {
    scenario::check_file(path, &names())
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_hold_the_default_profile_every_switch_and_the_run_finding() {
        let n = super::names();
        assert!(n.profiles.contains(&crate::scenario::defaults::PROFILE));
        assert_eq!(n.switches.len(), crate::kubelet::profile::SWITCHES.len());
        assert!(!n.invariants.is_empty());
        assert!(n.is_finding("run-limit-reached"));
        assert!(!n.invariants.contains(&"run-limit-reached"));
        assert_eq!(n.profile("v1.31"), Some("v1.31"));
        assert_eq!(n.profile("current"), Some("current"));
        assert_eq!(n.release("current"), "v1.31");
        assert_eq!(n.release("v1.23"), "v1.23");
        assert_eq!(n.profile("v1.3"), None);
    }
}
