//! Searching over scenario inputs: the scenario as a document tree with a YAML writer
//! (`doc`, `yaml`), and shrinking a run's finding to a small replay (`shrink`).

pub(crate) mod doc;
pub(crate) mod shrink;
mod yaml;
