//! Helpers shared by the benchmarks (each bench is its own crate and includes this module).

/// The median of the measurements (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// An unsigned setting from the environment, or `default`.
#[allow(dead_code)] // not every bench reads a setting
pub fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
