//! # rocesim-model
//!
//! The simulated network, and nothing else: an event engine in integer
//! picoseconds, packets in flight as `roce-codec` values, RC queue pairs
//! that retransmit go-back-N, congestion control as pure algorithms, and
//! the network's components (ports, links, hosts and NICs, bonds, switches
//! with their MMU, PFC and ECN) dispatched by one [`world::World`].
//!
//! It reads no files and knows no file format: the scenario crate
//! (`rocesim-scenario`) builds a world from a TOML scenario, the ns-3 crate
//! (`rocesim-ns3`) reads and writes the HPCC reference simulator's files,
//! and the `rocesim` binary writes a run's outputs. Capture taps write
//! pcap bytes through `roce-capture` into the files those layers open.
//!
//! ## Crate map
//!
//! ```text
//!   world/      the network: components in arenas, one scheduler, event dispatch;
//!      │        mmu.rs the switch buffer, pfc.rs pauses, view.rs what outputs read
//!      ├──────────────────────┐
//!   transport/  RC QPs and    cc/  DCQCN reaction and notification points, RED marking
//!      │        workloads      │   (pure algorithms: told the time, say what to do)
//!      │        (sans-I/O)     │
//!   flow  topology  engine  packet  net  time  units  rng
//!
//!   each module uses only the ones below it (or beside it, in the last row)
//! ```
//!
//! * [`engine`]: the event queue (integer picoseconds, insertion order for ties).
//! * [`packet`]: a frame in flight as codec values (what hashes read of it,
//!   what it is billed, what a tap emits), and the packet pool.
//! * [`transport`]: RC queue pairs ([`transport::RcQp`]) and perftest-like
//!   workloads.
//! * [`cc`]: congestion control (DCQCN, RED) as pure algorithms.
//! * [`world`]: ports, links, hosts and NICs, bonds, switches, taps, the
//!   sampler, read-only views.
//! * [`topology`]: fabric graphs and their ECMP routes; [`flow`]: the
//!   flows of a capacity study.
//! * [`net`], [`time`], [`units`], [`rng`]: addresses, picoseconds and
//!   rates, unit formatting, one random stream per component.

// Errors here carry key and hint for the user; they are built once per
// failed run, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod cc;
pub mod engine;
pub mod flow;
pub mod net;
pub mod packet;
pub mod rng;
pub mod time;
pub mod topology;
pub mod transport;
pub mod units;
pub mod world;
