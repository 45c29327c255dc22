//! rocesim's scenarios: the TOML file a user writes, loaded with its
//! `--set` overrides, its generated fabric and traffic lowered into the
//! explicit form, and built into a [`World`](rocesim_model::world::World)
//! of the model, every error placed at the key it is about.
//!
//! ```text
//!  scenario.toml, --set KEY=VALUE
//!      │  load::load_str      parse into a spanned tree (tree), apply each --set
//!      │  lower::topology     [topology] ─▶ generated [[host]], [[switch]], [[link]] tables
//!      │  serde               ─▶ schema::Scenario (deny_unknown_fields)
//!      │  lower::traffic      [[traffic]] ─▶ one [[workload]] per flow, Scenario::flows
//!      ▼
//!  Loaded { scenario, name, path } ── Loaded::locate(&ModelError) ─▶ Diagnostic
//!      │  build::build_world  names, hosts (profile), fabric, qos, taps, workloads
//!      ▼
//!  rocesim_model::world::World
//! ```
//!
//! Every error, whether from the TOML parser, from serde (unknown key, bad
//! unit) or from the model builder (dangling reference, impossible value),
//! ends up as a [`Diagnostic`] naming the file, line, column and dotted key,
//! with a hint where one helps. Values that came from `--set` are reported
//! as such:
//!
//! ```text
//!  file text ──DeTable::parse──▶ spanned tree ──apply --set──▶ serde (deny_unknown_fields)
//!                                    │                              │
//!                                    └── key path ──▶ span ──▶ "file:line:col: key: message"
//! ```
//!
//! ## Modules
//!
//! ```text
//!  module       holds                                                 imports (of this crate)
//!  load         Loaded, load, load_str; --set; serde's wording        lower tree schema diagnostic
//!  lower/       topology: [topology] into tables (generate::topology) generate tree schema diagnostic
//!               traffic: [[traffic]] into workloads, ideal FCTs       generate profile schema diagnostic
//!  build/       build_world, open_taps: Scenario ─▶ World, checked    profile schema diagnostic
//!  profile      a host's NIC profile: preset + its overrides          schema diagnostic
//!  assumptions  the unsourced defaults a scenario runs on               profile schema
//!  tree         the spanned TOML tree: owned, key path ⇄ span         diagnostic
//!  diagnostic   KeyPath, ModelError, Diagnostic, closest              -
//!  schema/      the file as serde types, a file per table             - (the model's types only)
//!  generate/    fat-trees, leaf-spines, flow patterns (no TOML)       -
//! ```
//!
//! No module imports one that imports it back (`scripts/module-cycles
//! sim/scenario`): the schema and the generators are leaves, the lowering
//! steps ([`lower`]) sit under [`load`](mod@load), and the builder
//! ([`build`]) only reads a loaded [`Scenario`]. The reference's file
//! formats (topology, flow and CDF files) are read through `rocesim_ns3`.

// Errors here carry file, line, key and hint for the user; they are built
// once per failed run, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod assumptions;
pub mod build;
pub mod diagnostic;
pub mod generate;
pub mod load;
pub mod lower;
pub mod profile;
pub mod schema;
pub mod tree;

pub use assumptions::assumptions;
pub use build::{BuildOptions, build_world, open_taps};
pub use diagnostic::{Diagnostic, KeyPath, ModelError, Seg, closest};
pub use load::{Loaded, load, load_str};
pub use schema::{Scenario, qos};
pub use tree::span_of;
