//! One run: a scenario and a seed in, a [`RunOutput`] out. A run is a pure function of
//! (scenario, seed, podsim version): single-threaded, virtual time, every random choice
//! from a named stream.
//!
//! * `world`: the `World`, the composition root: it owns the simulation core, the
//!   kubelet, the fake runtime, the API server, the node and the trace with its oracle, and
//!   dispatches every event.
//! * `timeline`: the scenario's timeline actions.
//! * `process`: the kubelet process (crash, restart) and the node's power (logind,
//!   shutdown, power-off).
//! * `output`: what a run produces (`--json`); `summary`: building it from the world.
//! * `perfetto`: the run as a Chrome/Perfetto trace-event file (`--perfetto`).

mod output;
pub(crate) mod perfetto;
mod process;
pub(crate) mod sources;
mod summary;
mod timeline;
mod world;

#[cfg(test)]
pub(crate) mod tests;

pub use output::{
    ConditionSummary, ContainerSummary, EvictionSummary, Finding, Metrics, PodSummary, RunOutput,
};
pub(crate) use world::World;

use crate::scenario::Scenario;
use std::sync::Arc;

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub seed: u64,
    /// Keep readable trace records (for `--trace` and determinism diffs).
    pub keep_trace: bool,
    /// The replay line printed with every failure.
    pub replay: String,
    /// Run without the invariant oracle (no findings but `run-limit-reached`; the trace
    /// hash is the same). For measuring the oracle's cost.
    pub no_oracle: bool,
}

/// Run `sc` with `opts`. With `keep_trace`, the records are kept in
/// [`RunOutput::trace`] (a run that would keep more than
/// [`crate::sim::limits::MAX_KEPT_RECORDS`] stops with `run-limit-reached`).
pub fn run(sc: Arc<Scenario>, opts: &RunOptions) -> RunOutput {
    run_inner(sc, opts, None, None)
}

/// Run `sc` with `opts`, handing every trace record to `sink` as the run makes them (in
/// batches, in order), instead of keeping them: memory stays bounded however long the run
/// is. [`RunOutput::trace`] is empty; the hash is the same as [`run`]'s.
pub fn run_streaming(
    sc: Arc<Scenario>,
    opts: &RunOptions,
    sink: &mut dyn FnMut(&[crate::sim::trace::Record]),
) -> RunOutput {
    run_observed(sc, opts, sink, None)
}

/// [`run_streaming`], also handing the run's typed transitions to `typed` (in batches, in
/// order) when given: what `run --perfetto` draws from. The hash is the same.
pub fn run_observed(
    sc: Arc<Scenario>,
    opts: &RunOptions,
    sink: &mut dyn FnMut(&[crate::sim::trace::Record]),
    typed: Option<&mut world::TransitionSink<'_>>,
) -> RunOutput {
    let opts = RunOptions {
        keep_trace: true,
        ..opts.clone()
    };
    run_inner(sc, &opts, Some(sink), typed)
}

fn run_inner(
    sc: Arc<Scenario>,
    opts: &RunOptions,
    sink: Option<&mut world::RecordSink<'_>>,
    typed: Option<&mut world::TransitionSink<'_>>,
) -> RunOutput {
    let mut world = World::with_oracle(
        sc,
        opts.seed,
        opts.keep_trace,
        !opts.no_oracle,
        typed.is_some(),
    );
    let stop = world.run_to_end_with(sink, typed);
    let end = world.sim.now();
    world.trace.observer_mut().finish(end);
    world.trace.observer_mut().release_pod_state();
    summary::summarize(world, stop, opts)
}

/// [`run`] without kept records, handing the run's typed transitions to `typed` (in
/// batches, in order): what `podsim hunt` reads its coverage from. The hash is the same.
pub(crate) fn run_typed(
    sc: Arc<Scenario>,
    opts: &RunOptions,
    typed: &mut world::TransitionSink<'_>,
) -> RunOutput {
    let opts = RunOptions {
        keep_trace: false,
        ..opts.clone()
    };
    run_inner(sc, &opts, None, Some(typed))
}
