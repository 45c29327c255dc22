//! Scenario files: loading, `--set` overrides, and error reports that point
//! at the offending key.
//!
//! ```text
//!  file text ──DeTable::parse──▶ spanned tree ──apply --set──▶ serde (deny_unknown_fields)
//!                                    │                              │
//!                                    └── key path ──▶ span ──▶ "file:line:col: key: message"
//! ```
//!
//! Every error, whether from the TOML parser, from serde (unknown key, bad
//! unit) or from the model builder (dangling reference, impossible value),
//! ends up as a [`Diagnostic`] naming the file, line, column and dotted key,
//! with a hint where one helps. Values that came from `--set` are reported
//! as such.

pub mod build;
pub mod diagnostic;
pub mod fabric;
pub mod generate;
pub mod load;
pub mod profile;
pub mod schema;
pub mod traffic;
pub mod tree;

pub use build::{BuildOptions, build_world, open_taps};
pub use diagnostic::{Diagnostic, KeyPath, ModelError, Seg, closest};
pub use load::{Loaded, load, load_str};
pub use schema::{Scenario, qos};
pub use tree::span_of;
