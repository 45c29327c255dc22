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
//! ## Crate map
//!
//! ```text
//!   main.rs (binary: flags, exit codes, progress bar)
//!      │
//!   run/        run directory, sweeps, summary.json, CSV, plots, printed tables, QpFigures
//!      │        reads the world only through world::view
//!   world/      the network: components in arenas, one scheduler, event dispatch;
//!      │        build/ turns a Scenario into a World; mmu.rs the switch buffer, pfc.rs pauses
//!      ├──────────────────────┐
//!   transport/  RC QPs and    cc/  DCQCN reaction and notification points, RED marking
//!      │        workloads      │   (pure algorithms: told the time, say what to do)
//!      │        (sans-I/O)     │
//!   engine  packet  time  units  rng  fasthash     scenario/  (TOML, --set, errors at their key)
//!                                                  topology/, traffic/, hpcc/  (fabrics, flows,
//!                                                  the ns-3 reference's files: inputs, no simulation)
//!
//!   each module uses only the ones below it (or beside it, in the last row)
//! ```
//!
//! One event's way through the world (`world::World::run` pops the earliest
//! event, equal times in insertion order, and hands it to the component it
//! names):
//!
//! ```text
//!   Drive/QpTimer/QpWake ─▶ world/qp.rs ─▶ RcQp ─▶ NIC active list (host.rs)
//!   TxDone ─▶ port free ─▶ pump: host.rs (kernel frames, then QPs by strict priority)
//!   (scheduled only for a port with more to send; link.rs schedule_tx_done)
//!                              switch.rs (egress queues, strict priority)
//!         ─▶ port.rs start_tx ─▶ link.rs carry ─▶ Arrive at the peer port
//!   Arrive ─▶ host.rs: MAC, GID, QPN ─▶ RcQp::on_receive ─▶ workload ─▶ QP re-armed
//!          ─▶ switch.rs: learn, classify, forward (pure) ─▶ buffer ─▶ egress queue ─▶ pump
//!   Link / Miimon ─▶ carrier at both ends, bond failover, QPs moved to the new slave
//!   ArpStart / ArpRetry ─▶ arp.rs: ARP on the wire before a workload starts
//!   SocketStart ─▶ connect.rs: perftest's TCP set-up (`connect = "socket"`), then the QPs
//!   (a v2 frame at a v1-only NIC ─▶ icmp.rs: the kernel's port unreachable)
//!   Sample ─▶ sample.rs: the time series
//! ```
//!
//! * [`engine`]: the event queue (integer picoseconds, insertion order for ties).
//! * [`packet`]: a frame in flight as codec values, and the packet pool.
//! * [`transport`]: RC queue pairs ([`transport::RcQp`]) and perftest-like
//!   workloads.
//! * [`world`]: ports, links, hosts and NICs, bonds, switches, taps, the
//!   sampler, read-only views, and construction from a scenario.
//! * [`scenario`]: loading, `--set`, and error reports at their key.
//! * [`run`]: the run directory lifecycle and sweeps; what they write
//!   ([`run::Summary`], CSV, plots) and what `rocesim` prints.
//! * [`cc`]: congestion control (DCQCN, RED) as pure algorithms.
//! * [`topology`], [`traffic`], [`hpcc`]: fabrics and flows to simulate,
//!   generated or read from the HPCC ns-3 reference's files.
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
//!   ([`packet::Billing`]: the HPCC reference's), rounded down to `[sim]
//!   tx_time_step` where one is set (the reference's 1 ns clock), then
//!   arrives `delay` later, whole (store and forward).
//! * Host ports pull packets from the queue pairs mapped to them (strict
//!   priority between the 8 priorities, round robin inside one), so a NIC
//!   never queues more than the frame on the wire; a QP's `tx_ready_at` is
//!   the rate-limiter seam. Switch ports queue per priority (strict
//!   priority); the switch buffer ([`world::mmu`]) is accounted per
//!   (ingress port, priority): lossy priorities tail-drop, lossless ones
//!   (`[switch.mmu]`) send PFC XOFF/XON upstream and never drop while the
//!   headroom holds. A port skips the priorities its peer paused; a host
//!   NIC with `[host.pfc]` has a receive buffer and pauses its switch port
//!   (`world::pfc`, `world::nic_rx`). A switch with
//!   `[switch.ecn]` marks CE by RED on each egress queue (`world::ecn`).
//! * A port whose link is down keeps "sending" into it and loses the frames
//!   (counted as `drops_link_down`), which is what a bond slave does until
//!   the MII monitor notices; frames queued on a dead switch port are lost.
//! * Each host's NIC profile (`world::profile`: `rxe`, `connectx`, `hpcc`)
//!   sets what verbs do not: the unacknowledged-PSN window, AckReq
//!   frequency, ACK coalescing and priority, payload per packet, the ECN
//!   bits, the trust mode and DCQCN. With DCQCN (`world::dcqcn`) the
//!   receiving NIC answers CE-marked packets with CNPs on the wire and each
//!   QP (READ responders too) is paced by its own reaction point.
//! * Neighbour resolution (ARP) follows the kernel's routing, `arp_ignore`,
//!   `arp_announce` and `rp_filter` rules, per device, with the RDMA
//!   stack's lookups bound to the GID's device and replies racing by a
//!   seeded processing time (see `world::build`): by default as an
//!   instantaneous step at connection setup, or with `[sim] arp = "frames"`
//!   as real ARP requests and replies before each workload starts, which
//!   the captures then show. LACPDUs and RDMA-CM (or perftest's TCP
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
