//! Flows: the messages of a capacity study, each from one host to another
//! at a time ([`FlowSpec`]), and a flow as a run carries it ([`FlowRef`]).
//!
//! Where flows come from is not the model's business: the scenario crate
//! generates them from size distributions and arrival processes, or reads
//! the reference's flow file (the ns-3 crate). Hosts are host indices of a
//! [`crate::topology::Topology`] ([`HostId`]), so the same flows run on any
//! fabric with enough hosts.

use crate::time::Ps;
use crate::topology::HostId;

mod cdf;

pub use cdf::{CdfError, SizeCdf};

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

/// A flow of a run: its spec and the workload that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowRef {
    pub spec: FlowSpec,
    /// Index of the workload that carries it.
    pub workload: u32,
    /// Ideal FCT on an idle fabric with rocesim's framing.
    pub ideal: Ps,
    /// The bandwidth-delay product of the flow's path in bytes, as the
    /// HPCC reference computes a pair's (`pairBdp`, its window with
    /// `GLOBAL_T 0`): the base RTT with one payload-sized packet per hop,
    /// in whole ns, times the slowest link's rate.
    pub path_bdp: u64,
    /// That base RTT (0 where the flow has no path): HPCC's default base
    /// RTT is the largest of them.
    pub path_rtt: Ps,
}
