//! # rocesim
//!
//! A deterministic discrete-event simulator of RoCEv2 networks: hosts with
//! bonded NICs, switches with per-priority queues, ECMP and LACP trunks, and
//! RC queue pairs that retransmit go-back-N (PFC, ECN marking and DCQCN are
//! not modelled yet: see the end of this page). Packets carry `roce-codec`
//! reprs; bytes exist only at capture taps, written by the codec's `emit`.
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
//!
//! ## What is modelled, and how
//! * Time is integer picoseconds. A frame occupies its port for
//!   `wire_bytes(len)` (FCS, preamble, SFD and IFG included) at the port's
//!   rate, then arrives `delay` later, whole (store and forward).
//! * Host ports pull packets from the queue pairs mapped to them (strict
//!   priority between the 8 priorities, round robin inside one), so a NIC
//!   never queues more than the frame on the wire; a QP's `tx_ready_at` is
//!   the rate-limiter seam. Switch ports queue per priority (strict
//!   priority); the switch buffer is shared, tail-dropping, and accounted
//!   per (ingress port, priority) for PFC.
//! * A port whose link is down keeps "sending" into it and loses the frames
//!   (counted as `drops_link_down`), which is what a bond slave does until
//!   the MII monitor notices; frames queued on a dead switch port are lost.
//! * Neighbour resolution (ARP) follows the kernel's routing, `arp_ignore`
//!   and `arp_announce` rules (see `world::build`): by default as an
//!   instantaneous step at connection setup, or with `[sim] arp = "frames"`
//!   as real ARP requests and replies before each workload starts, which
//!   the captures then show. LACPDUs and RDMA-CM (or perftest's TCP
//!   exchange) are not put on the wire.
//! * Switch FDBs and neighbour tables start as learned (they would be after
//!   the ARP/CM exchange); switches still learn and flood. A port or LAG
//!   named as a route next hop (`via`) is a routed port: it takes only
//!   frames addressed to the switch and is never flooded to. No spanning
//!   tree runs, so a bridging loop (a cycle of links between switch ports
//!   that are not routed, a LAG counting once) is refused at load.
//! * Not modelled yet: PFC/PAUSE, ECN marking, CNPs and DCQCN (the hooks
//!   are in place), IPv6, LACP negotiation (802.3ad behaves as balance-xor
//!   over the configured slaves), per-port buffer thresholds, CPU/PCIe
//!   limits of the hosts, VLAN-aware bridging (a VLAN id is a tag carrying
//!   the priority; a bridged workload must stay within one VLAN), spanning
//!   tree (bridging loops are refused).

// Errors here carry file, line, key and hint for the user; they are built once
// per failed run, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod cc;
pub mod engine;
pub mod fasthash;
pub mod hpcc;
pub mod packet;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod time;
pub mod topology;
pub mod traffic;
pub mod transport;
pub mod units;
pub mod world;
