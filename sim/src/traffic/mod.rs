//! Traffic: the flows of a capacity study, generated from size
//! distributions and arrival processes, or read from the reference's flow
//! file.
//!
//! A flow ([`FlowSpec`]) is one message of `size_bytes` from one host to
//! another, started at a time, in a traffic class (priority, UDP
//! destination port, RDMA verb). Hosts are host indices of a
//! [`crate::topology::Topology`] ([`HostId`]), so the same flows run on any
//! fabric with enough hosts.
//!
//! # Load
//!
//! *Load* is the fraction of a host link's rate that the flows offered to
//! it would fill: a sender at 30 % load on a 100 Gb/s link starts, on
//! average, 30 Gb of flow payload per second (headers not counted, as the
//! reference's generator does not count them). With flow sizes of mean
//! S bytes, that is one flow every `S x 8 / (load x rate)` seconds; the
//! reference's WebSearch distribution has S = 1.71 MB, so at 30 % of 100G
//! a host starts a flow every 456 µs on average. Whether the network
//! *carries* that load is what a simulation finds out. Load is offered
//! per sender: an all-to-all pattern at 30 % offers each link of a
//! non-blocking fabric at most about 30 % on average (less on the core
//! links when some destinations are local), while an incast of N senders
//! at 30 % offers the receiver's link N x 30 %.
//!
//! # Arrivals
//!
//! Poisson arrivals ([`Arrivals::Poisson`]) are the standard model of many
//! independent users: each sender draws the gap to its next flow from an
//! exponential distribution with that mean, independently of everything
//! else, so flows cluster and spread as real request traffic does, and
//! the offered load converges to the target over a long run. This is the
//! reference's traffic_gen.py. [`Arrivals::Once`] starts every flow of a
//! pattern at one instant instead (incast, shuffle).
//!
//! ```text
//!  host 0  ──●────────●──●─────────────────●───●──▶ t     gaps ~ Exp(mean = S x 8 / (load x rate))
//!  host 1  ─────●─────────────●──●──●─────────────▶ t     each flow: size ~ CDF, dst by pattern
//! ```
//!
//! Everything is drawn from seeded streams, one per purpose and sender
//! (`traffic.<workload>.arrivals.<host>`, `.dst.`, `.size.`, and
//! `.permutation`, `.pick` for the pattern): the same seed gives the same
//! flows, and changing the size distribution leaves destinations alone.

use crate::hpcc::HpccFlow;
use crate::time::Ps;
use crate::topology::{HostId, NodeId, Topology};

mod cdf;
mod generate;

pub use cdf::{CdfError, SizeCdf};
pub use generate::{Arrivals, Hosts, Pattern, Sizes, Workload, generate};

/// The RDMA operation that carries a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verb {
    /// RDMA WRITE from src into dst's memory.
    Write,
    /// SEND from src, consumed by a receive posted at dst.
    Send,
    /// RDMA READ: the `size_bytes` flow from dst to src, requested by src.
    Read,
}

/// Priority, UDP destination port and verb of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TrafficClass {
    /// Priority (traffic class queue) 0..=7.
    pub priority: u8,
    pub dport: u16,
    pub verb: Verb,
}

impl Default for TrafficClass {
    /// The reference's flows: priority 3, port 100, a WRITE.
    fn default() -> TrafficClass {
        TrafficClass {
            priority: 3,
            dport: 100,
            verb: Verb::Write,
        }
    }
}

/// One flow: a message of `size_bytes` from `src` to `dst` at `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowSpec {
    /// Position in start order, from 0.
    pub id: u32,
    pub src: HostId,
    pub dst: HostId,
    pub size_bytes: u64,
    pub start: Ps,
    pub priority: u8,
    pub dport: u16,
    /// The UDP source port the HPCC reference gives the flow: 10000 + the
    /// flows between the same two hosts given before it ([`number_ports`]).
    /// rocesim's QPs take theirs from their QPNs; switches hash this one
    /// where the sender's profile says `ecmp_ports = "flow"`.
    pub sport: u16,
    pub verb: Verb,
}

/// Bad traffic parameters or flows that do not fit the topology.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TrafficError(pub String);

/// Numbers the flows' source ports as the HPCC reference does, in the
/// order given: each (source, destination) pair's from 10000 (third.cc's
/// `portNumder`, a `uint16_t` that wraps).
pub fn number_ports(flows: &mut [FlowSpec]) {
    let mut next: std::collections::HashMap<(HostId, HostId), u16> = Default::default();
    for f in flows {
        let n = next.entry((f.src, f.dst)).or_insert(10_000);
        f.sport = *n;
        *n = n.wrapping_add(1);
    }
}

/// Sorts flows by start time (then source, destination, size), and
/// numbers them from 0 in that order; for several workloads' flows.
pub fn merge(mut flows: Vec<FlowSpec>) -> Vec<FlowSpec> {
    flows.sort_by_key(|f| (f.start, f.src, f.dst, f.size_bytes));
    for (i, f) in flows.iter_mut().enumerate() {
        f.id = i as u32;
    }
    flows
}

/// The reference's flows on its topology (imported with
/// [`Topology::from_hpcc`]): node ids become host indices, each flow a
/// WRITE in its priority and port.
pub fn from_hpcc(flows: &[HpccFlow], topo: &Topology) -> Result<Vec<FlowSpec>, TrafficError> {
    let host = |node: u32, line: usize, what: &str| {
        if node as usize >= topo.nodes().len() {
            return Err(TrafficError(format!(
                "flow on line {line}: {what} node {node} does not exist (the topology has {} nodes)",
                topo.nodes().len()
            )));
        }
        topo.host_of(NodeId(node)).ok_or_else(|| {
            TrafficError(format!(
                "flow on line {line}: {what} node {node} is a switch, not a host"
            ))
        })
    };
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Ok(FlowSpec {
                id: i as u32,
                src: host(f.src, f.line, "src")?,
                dst: host(f.dst, f.line, "dst")?,
                size_bytes: f.size,
                start: f.start,
                priority: f.priority,
                dport: f.dport,
                sport: 0,
                verb: Verb::Write,
            })
        })
        .collect()
}

/// Flows as the reference's flow lines (node ids of `topo`'s hosts), to
/// run the same traffic in the reference ([`crate::hpcc::flows::write`]).
/// The verb is dropped: the reference knows one kind of flow.
pub fn to_hpcc(flows: &[FlowSpec], topo: &Topology) -> Vec<HpccFlow> {
    flows
        .iter()
        .map(|f| HpccFlow {
            src: topo.host_node(f.src).0,
            dst: topo.host_node(f.dst).0,
            priority: f.priority,
            dport: f.dport,
            size: f.size_bytes,
            start: f.start,
            line: 0,
        })
        .collect()
}
