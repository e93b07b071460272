//! Scenario and sweep files: parsing, `--set` overrides and validation into the typed
//! [`Scenario`] (see `types`). Every problem of a file is reported at once, with its field
//! path and line:column; unknown podsim fields are errors, unknown Pod-manifest fields notes.

pub mod defaults;
pub mod duration;
pub mod error;
pub mod not_built_yet;
pub mod overrides;
pub mod quantity;
pub mod schema;
pub mod types;
pub mod validate;

pub use error::{LoadError, Note, Problem};
pub use types::*;
pub use validate::{
    check_file, load, load_str, load_sweep, load_sweep_str, Loaded, SweepFile, SweepParameter,
    API_VERSION,
};
