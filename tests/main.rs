//! podsim's integration tests: one binary, one module per area.

mod lifecycle;
mod scenario_errors;
mod swarm;
