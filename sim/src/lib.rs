//! # rocesim
//!
//! A deterministic discrete-event simulator of RoCEv2 networks: hosts with
//! bonded NICs, switches, lossless priorities, ECN and RC queue pairs that
//! retransmit go-back-N. Packets carry `roce-codec` reprs; bytes exist only
//! at capture taps, written by the codec's `emit`.
//!
//! ```text
//!  scenario.toml ──scenario::load──▶ Scenario ──World::build──▶ World ──run──▶ output (run dir)
//!                   (spans, --set)             (validation,        (engine:     summary.json, CSV,
//!                                               ARP, QPNs)          events)     plots, pcaps
//! ```
//!
//! * [`engine`]: the event queue (integer picoseconds, insertion order for ties).
//! * [`world`]: ports, links, NICs, bonds, switches, taps, and the dispatch.
//! * [`transport`]: RC queue pairs and workloads (sans-I/O).
//! * [`scenario`]: loading and error reporting; [`run`]: the run directory
//!   lifecycle and sweeps.

// Errors here carry file, line, key and hint for the user; they are built once
// per failed run, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod engine;
pub mod fasthash;
pub mod output;
pub mod packet;
pub mod plot;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod time;
pub mod transport;
pub mod units;
pub mod world;
