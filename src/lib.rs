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
//!   trace). **Invariant:** it knows nothing about pods.
//! * [`model`]: shared domain data with no behaviour (pod spec subset, phases, runtime and
//!   API statuses, trace transitions).
//! * [`scenario`]: scenario and sweep files: parsing, `--set` overrides, validation into a
//!   typed [`scenario::Scenario`] with every default applied.
//! * [`world`]: what the kubelet talks to: the CRI runtime with container processes
//!   (`world::runtime`, speaking the protocol of `world::cri`), the API server with its
//!   watch, the static-pod manifest directory, systemd-logind and the node's power.
//!   **Invariant:** the kubelet acts on the world only through [`world::Ctx`], which exposes
//!   calls and timers but no ground truth; the world names neither the kubelet (its timers
//!   are the `K` of [`world::Event`]) nor the oracle (it writes to a [`world::Tracer`]).
//!   Everything addressed to the kubelet carries its incarnation ([`world::Epoch`]); after
//!   a `kubeletRestart` the world drops what belongs to the dead process.
//! * [`kubelet`]: the port (pod workers, sync phases, PLEG, status manager, prober,
//!   housekeeping, admission, eviction manager, graceful node shutdown, restart recovery).
//!   **Invariant:** each file names the upstream file and release it follows.
//! * [`oracle`]: the invariant oracle. **Invariant:** read-only; it sees the transitions
//!   the trace records (as the trace's observer) and nothing else, keeps its own history,
//!   and turns violated safety and liveness properties into findings. Removing it changes
//!   no trace hash.
//! * [`run`]: one run, scenario + seed -> [`run::RunOutput`]. [`run::World`] is the
//!   composition root: it owns the simulation core, kubelet, world parts and the trace with
//!   its oracle, and dispatches every event (`run::world`); the timeline, the kubelet
//!   process and the node's power, the output types and the summary have a file each.
//! * [`sweep`]: seeds x parameter points x profiles as independent runs on a rayon pool;
//!   [`results`]: the result directory (manifest, `runs.jsonl`, summary), resume, merge;
//!   [`progress`]: the progress display, the only wall-clock reader; [`junit`]: CI reports.
//! * [`report`], [`cli`]: output and the command line; [`plot`]: the run timeline and the
//!   sweep plots (SVG/PNG with an embedded font).
//!
//! ## Determinism
//!
//! Virtual time is integer nanoseconds; every random choice comes from a named ChaCha8
//! stream derived from (seed, stream name); nothing iterates a hash map; nothing reads the
//! wall clock (`clippy.toml` bans both). Same (scenario, seed, version) gives the same
//! trace hash on any thread count.

pub mod bisect;
pub mod cli;
pub mod junit;
pub mod kubelet;
pub mod model;
pub mod oracle;
pub mod plot;
pub mod progress;
pub mod report;
pub mod results;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod world;
