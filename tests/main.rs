//! podsim's integration tests: one binary, one module per area.

mod scenario_errors;
