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

use crate::oracle::{self, Oracle};
use crate::scenario::Scenario;
use crate::sim::StopReason;
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
    /// Where a finding's message gets the pod's (or the node's) last transitions.
    pub history: FindingHistory,
}

/// Where the oracle's findings get the histories their messages end with (the pod's last
/// transitions, or the node's).
///
/// Keeping every pod's last transitions as the run goes is a store for nearly every
/// transition, for the few runs that make a finding. A run is deterministic, so the
/// histories can come instead from running it again: the same findings at the same
/// points, this time with the histories kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FindingHistory {
    /// The run keeps no history; if the oracle makes a finding, the run goes again with
    /// the histories kept (no records handed out, nothing else kept) and its findings are
    /// taken, after a check that they are the same ones. A run without findings costs
    /// less; a run with findings costs about twice as much.
    #[default]
    Rerun,
    /// The histories are kept as the run goes.
    Kept,
    /// No history: a finding's message says what went wrong, without the transitions
    /// that led there (for callers that read only which invariants a run broke).
    Omitted,
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
        sc.clone(),
        opts.seed,
        opts.keep_trace,
        !opts.no_oracle,
        opts.history == FindingHistory::Kept,
        typed.is_some(),
    );
    let stop = world.run_to_end_with(sink, typed);
    let end = world.sim.now();
    world.trace.observer_mut().finish(end);
    world.trace.observer_mut().release_pod_state();
    let oracle: &Oracle = world.trace.observer();
    debug_assert!(
        opts.no_oracle || oracle.keeps_history() == (opts.history == FindingHistory::Kept)
    );
    let found = oracle.findings().len();
    let quote = opts.history == FindingHistory::Rerun && found > 0;
    let hash = world.trace.hash();
    // The world is summarized (and dropped) before a run again: the two are never in
    // memory at once.
    let mut out = summary::summarize(world, stop, opts);
    if quote {
        quote_history(&mut out.findings[..found], sc, opts, stop, hash);
    }
    out
}

/// [`FindingHistory::Rerun`]: the run's oracle `findings` take the messages of the same
/// run made again with its histories kept ([`with_history`], [`quote_from`]). Out of line
/// and cold: few runs make findings, and [`run_inner`] stays short.
#[cold]
#[inline(never)]
fn quote_history(
    findings: &mut [Finding],
    sc: Arc<Scenario>,
    opts: &RunOptions,
    stop: StopReason,
    hash: u64,
) {
    let quoted = with_history(sc, opts, stop, hash);
    quote_from(findings, quoted.findings(), &opts.replay);
}

/// The oracle of `sc`'s run under `opts` again, this time keeping the histories its
/// findings quote ([`FindingHistory::Rerun`]). The first run ended with `stop` and trace
/// hash `hash`; this one must too (else it panics: the run is not deterministic). It hands
/// nothing out and keeps no records, except when the first stopped at the limit of kept
/// records: it then keeps them too, to stop at the same event.
fn with_history(sc: Arc<Scenario>, opts: &RunOptions, stop: StopReason, hash: u64) -> Oracle {
    let keep_trace = stop == StopReason::MaxKeptRecords;
    let mut world = World::with_oracle(sc, opts.seed, keep_trace, true, true, false);
    let again = world.run_to_end_with(None, None);
    assert!(
        again == stop && world.trace.hash() == hash,
        "{}: the run again with its history kept ended otherwise ({again:?}, not {stop:?}; \
         trace hash {:016x}, not {hash:016x})",
        opts.replay,
        world.trace.hash()
    );
    let end = world.sim.now();
    world.trace.observer_mut().finish(end);
    std::mem::take(&mut world.trace.observer_mut().oracle)
}

/// The messages of `quoted` (the oracle findings of the same run, made again with the
/// histories kept) in place of those of `findings`, the run's oracle findings. Panics,
/// with the replay line, if they are not the same findings (invariant, pod and time, in
/// order): the run was not deterministic.
fn quote_from(findings: &mut [Finding], quoted: &[oracle::OracleFinding], replay: &str) {
    let same = findings.len() == quoted.len()
        && findings
            .iter()
            .zip(quoted)
            .all(|(f, q)| f.invariant == q.invariant && f.pod == q.pod && f.at_ns == q.at.0);
    assert!(
        same,
        "{replay}: the run again with its history kept made other findings: {:?}, not {:?}",
        quoted
            .iter()
            .map(|q| (q.invariant, &q.pod, q.at.0))
            .collect::<Vec<_>>(),
        findings
            .iter()
            .map(|f| (&f.invariant, &f.pod, f.at_ns))
            .collect::<Vec<_>>()
    );
    for (f, q) in findings.iter_mut().zip(quoted) {
        f.message.clone_from(&q.message);
    }
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
