//! podsim's integration tests: one binary, one module per area.

mod architecture;
mod cli;
mod determinism;
mod eviction;
mod files;
mod golden;
mod lifecycle;
mod oracle;
mod plots;
mod probes;
mod races;
mod reliability_errors;
mod restart;
mod scenario_errors;
mod shutdown;
mod static_pods;
mod swarm;
mod sweep;
