//! podsim's integration tests: one binary, one module per area.

mod cli;
mod conformance;
mod determinism;
mod lifecycle;
mod restart;
mod scenario_errors;
mod swarm;
