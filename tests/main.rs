//! podsim's integration tests: one binary, one module per area.

mod architecture;
mod cli;
mod determinism;
mod eviction;
mod files;
mod fuzz;
mod golden;
mod known_correct;
mod lifecycle;
mod oracle;
mod plots;
mod probes;
mod races;
mod reliability_bounds;
mod reliability_errors;
mod reliability_output;
mod restart;
mod scenario_errors;
mod shutdown;
mod static_pods;
mod swarm;
mod sweep;
mod ux_cli;
