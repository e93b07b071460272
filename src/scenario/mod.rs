//! Scenario and sweep files: parsing, `--set` overrides and validation into the typed
//! [`Scenario`] (see `types`). Every problem of a file is reported at once, with its field
//! path and line:column; unknown podsim fields are errors, unknown Pod-manifest fields notes.
//!
//! The names a scenario refers to that other modules define (profiles, behaviour switches,
//! invariants) arrive as plain data ([`Names`]); the entry points are `podsim::load`,
//! `podsim::load_str`, `podsim::load_sweep`, `podsim::load_sweep_str` and
//! `podsim::check_file`, which supply them.

pub mod defaults;
pub mod duration;
pub mod encoding;
pub mod error;
pub mod fields;
pub mod file;
pub mod label;
pub mod names;
pub mod not_built_yet;
pub mod overrides;
pub mod quantity;
pub mod schema;
pub mod types;
pub mod validate;

pub use error::{escape_controls, LoadError, Note, Problem};
pub use names::{GateName, GateOnProfile, Names, SwitchName};
pub use types::*;
pub(crate) use validate::{check_file, closest, load, load_str, load_sweep, load_sweep_str};
pub use validate::{Loaded, SweepFile, SweepParameter, API_VERSION};
