//! # rocesim
//!
//! A deterministic discrete-event simulator of RoCEv2 networks: hosts with
//! bonded NICs, switches with per-priority queues, ECMP and LACP trunks, and
//! RC queue pairs that retransmit go-back-N, NICs that behave as Soft-RoCE,
//! ConnectX or the HPCC reference's NIC, with DCQCN (CNPs, per-QP rate
//! limiting), lossless priorities with PFC (or 802.3x PAUSE) between
//! switches and host NICs, and ECN marking at switch egress. Packets carry `roce-codec`
//! reprs; bytes exist only at capture taps, written by the codec's `emit`.
//!
//! This crate is the `rocesim` binary: its command line (`main.rs`: flags,
//! exit codes, the progress bar) over [`run`], what a run leaves behind
//! (the run directory, `summary.json`, CSVs, plots, printed tables, sweeps
//! and their shards), and [`parallel`], the run of a world cut into parts
//! on threads of their own. The simulation is the three crates below it.
//!
//! ## Crates
//!
//! ```text
//!   rocesim           this crate: main.rs (the CLI) over run/ (run directory, summary.json,
//!      │              CSV, plots, printed tables, sweeps, shards) and parallel/ (a world's
//!      │              parts on threads: their windows, mail, samples, merge); reads a
//!      │              finished world only through rocesim_model::world::view
//!   rocesim-scenario  TOML scenarios, --set, errors at file:line:col and key, fabric and
//!      │              traffic generators, build/: a Scenario turned into a World
//!   rocesim-ns3       the HPCC ns-3 reference's files: config, topology, flows, size CDFs,
//!      │              fct.txt, and import-hpcc (inputs and results, no simulation)
//!   rocesim-model     the network and nothing else: engine, packets, transport (RC QPs,
//!      │              workloads), cc (DCQCN, RED), world (ports, links, hosts and NICs,
//!      │              bonds, switches, taps, the sampler, read-only views); no files
//!   roce-capture      pcap/pcapng reading and writing, QpFigures, tables and counts as
//!      │              roce-pcap prints them
//!   roce-codec        RoCE v1/v2 wire formats (parse and emit), ICRC, PSNs, LAG/ECMP hashes
//!
//!   codec ◀── capture ◀── model ◀── ns3 ◀── scenario ◀── rocesim
//!   each crate uses only the ones below it
//! ```
//!
//! * [`rocesim_model`]: the event engine, packets, RC queue pairs, congestion
//!   control as pure algorithms, the world and its views; how one event
//!   travels through the world is drawn in [`rocesim_model::world`].
//! * [`rocesim_scenario`]: loading, `--set`, diagnostics at their key,
//!   generated fabrics and traffic, and [`rocesim_scenario::build_world`].
//! * [`rocesim_ns3`]: the reference's formats, parsed and written.
//!
//! Re-exported here under the names the binary, the tests and the book use:
//! the model's modules at the top (`rocesim::world`, `rocesim::transport`,
//! ...), `rocesim::scenario` (rocesim-scenario) and `rocesim::hpcc`
//! (rocesim-ns3).
//!
//! ## The `run` module
//!
//! ```text
//!   run/
//!     lifecycle.rs   rocesim check, rocesim run: load, build, run, write the run directory
//!     estimate.rs      a run's peak memory and events, estimated before it (check prints, run refuses)
//!     series.rs        all series, or a large fabric's summary ([output] series)
//!     atomic_dir.rs    which appears whole or not at all (.<out>.tmp-<pid>, renamed into place)
//!     outputs.rs     every file of a run directory, from the finished world, on two threads:
//!       summary.rs     summary.json (Summary); counters.rs its counters under hardware names
//!       figures.rs     the summary as roce-pcap's QpFigures (Summary::qp_figures)
//!       csv.rs         ports.csv, qps.csv; intervals.rs: rates from the sampled series
//!       prom.rs        counters.prom; devices.rs: a host's devices as Linux shows them
//!       sysfs.rs       sysfs/<host>/class/{infiniband,net}/...
//!       rate_plots.rs  ports, qps and rates .png/.svg; plot.rs: the drawing (PNG, SVG, font)
//!       queues.rs      queues.csv and its plot (runs with flow control)
//!       fct.rs         flow completion: summary section, fct.txt, fct.csv, plot, printed table
//!     table.rs       what rocesim prints; shortlist.rs: a long list cut to its telling rows
//!     sweep.rs       a grid of runs ─▶ sweep.csv, sweep.json, sweep.png/svg
//!     grid.rs          axes × seeds, a point's SweepRow, mean/min/max over its seeds
//!     shard.rs         one slice of a grid per machine (shard.json) ─▶ merge
//!     error.rs       RunError: exit status 2 (scenario, flag) or 1 (outputs)
//! ```
//!
//! Which file uses which is drawn in [`run`]: each only files on the rows
//! below its own, none of them `run/mod.rs`, which only maps and
//! re-exports them.
//!
//! ## One vocabulary with roce-pcap
//! `summary.json` describes every QP from inside, both ends of each
//! connection. [`run::Summary::qp_figures`] states each connection as
//! `roce-pcap` states a flow it finds in captures, in the shared type
//! [`roce_capture::figures::QpFigures`]: named from the requester (its
//! address, the responder's address and QPN), times in nanoseconds since
//! the run started (the captures' timestamps), payload and frames of both
//! directions, and the retransmissions, timeouts and NAKs the requester
//! saw, with the port that carried its first request. A simulation and a
//! capture of the same traffic are then compared field by field
//! (`sim/tests/figures.rs` does it on `scenarios/lag_hash.toml`).
//!
//! ## What is modelled, and how
//! * Time is integer picoseconds. A frame occupies its port for
//!   `wire_bytes(len)` (FCS, preamble, SFD and IFG included) at the port's
//!   rate, or for the size its NIC's profile bills it at
//!   ([`rocesim_model::packet::Billing`]: the HPCC reference's), rounded
//!   down to `[sim] tx_time_step` where one is set (the reference's 1 ns
//!   clock), then arrives `delay` later, whole (store and forward).
//! * Host ports pull packets from the queue pairs mapped to them (strict
//!   priority between the 8 priorities, round robin inside one), so a NIC
//!   never queues more than the frame on the wire; a QP's `tx_ready_at` is
//!   the rate-limiter seam. Switch ports queue per priority (strict
//!   priority); the switch buffer ([`rocesim_model::world::mmu`]) is
//!   accounted per (ingress port, priority): lossy priorities tail-drop,
//!   lossless ones (`[switch.mmu]`) send PFC XOFF/XON upstream and never
//!   drop while the headroom holds. A port skips the priorities its peer
//!   paused; a host NIC with `[host.pfc]` has receive buffers (a
//!   ConnectX's eight, mapped from priorities by `prio2buffer` and
//!   thresholded as the mlx5 driver does, or one FIFO) and pauses its
//!   switch port from its lossless ones ([`rocesim_model::world::pfc`],
//!   [`rocesim_model::world::nic_rx`]). A switch with `[switch.ecn]` marks
//!   CE by RED on each egress queue ([`rocesim_model::world::ecn`]).
//! * A port whose link is down keeps "sending" into it and loses the frames
//!   (counted as `drops_link_down`), which is what a bond slave does until
//!   the MII monitor notices; frames queued on a dead switch port are lost.
//! * Each host's NIC profile ([`rocesim_model::world::profile`]: `rxe`,
//!   `connectx`, `hpcc`) sets what verbs do not: the unacknowledged-PSN
//!   window, AckReq frequency, ACK coalescing and priority, payload per
//!   packet, the ECN bits, the trust mode and DCQCN. With DCQCN
//!   ([`rocesim_model::world::nic_cc`]) the receiving NIC answers CE-marked
//!   packets with CNPs on the wire and each QP (READ responders too) is
//!   paced by its own reaction point.
//! * Neighbour resolution (ARP) follows the kernel's routing, `arp_ignore`,
//!   `arp_announce` and `rp_filter` rules, per device, with the RDMA
//!   stack's lookups bound to the GID's device and replies racing by a
//!   seeded processing time (see [`rocesim_scenario::build`]): by default
//!   as an instantaneous step at connection setup, or with
//!   `[sim] arp = "frames"` as real ARP requests and replies before each
//!   workload starts, which the captures then show. LACPDUs and RDMA-CM (or perftest's TCP
//!   exchange) are not put on the wire; their neighbour resolutions are
//!   made. An active-backup bond announces a failover with `num_grat_arp`
//!   gratuitous ARPs.
//! * Switch FDBs and neighbour tables start as learned (they would be after
//!   the ARP/CM exchange); switches still learn and flood. A port or LAG
//!   named as a route next hop (`via`) is a routed port: it takes only
//!   frames addressed to the switch and is never flooded to. No spanning
//!   tree runs, so a bridging loop (a cycle of links between switch ports
//!   that are not routed, a LAG counting once) is refused at load.
//! * Not simulated yet: IPv6, LACP negotiation (802.3ad behaves as balance-xor
//!   over the configured slaves), per-port buffer thresholds, CPU/PCIe
//!   limits of the hosts, VLAN-aware bridging (a VLAN id is a tag carrying
//!   the priority; a bridged workload must stay within one VLAN), spanning
//!   tree (bridging loops are refused).

// Errors here carry file, line, key and hint for the user; they are built once
// per failed run, so their size does not matter.
#![allow(clippy::result_large_err)]

pub mod parallel;
pub mod run;

// The layers below, under the names the binary, the tests and the book use.
pub use rocesim_model::{
    cc, engine, flow, net, packet, rng, time, topology, transport, units, world,
};
pub use rocesim_ns3 as hpcc;
pub use rocesim_scenario as scenario;
