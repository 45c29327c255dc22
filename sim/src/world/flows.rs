//! Flows (`[[traffic]]`) as the world ran them: each one's QPs, addresses
//! and completion time, for `fct.txt`, `fct.csv` and the progress bar.

use core::net::Ipv4Addr;

use super::World;
use crate::packet::L3;
use crate::scenario::traffic::FlowRef;
use crate::time::Ps;

/// One flow after (or during) a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowResult {
    pub flow: FlowRef,
    pub src_ip: Ipv4Addr,
    pub dst_ip: Ipv4Addr,
    /// The requester's and the responder's QPN.
    pub src_qpn: u32,
    pub dst_qpn: u32,
    /// The RoCEv2 UDP source port of the flow's packets.
    pub sport: u16,
    /// When the message's completion was reaped; `None` if it never was.
    pub finished_at: Option<Ps>,
}

impl FlowResult {
    /// Completion time, from the flow's start.
    pub fn fct(&self) -> Option<Ps> {
        self.finished_at
            .map(|t| Ps(t.0.saturating_sub(self.flow.spec.start.0)))
    }
    /// FCT over the ideal, at least 1 (as the reference's scripts clamp it).
    pub fn slowdown(&self) -> Option<f64> {
        self.fct()
            .map(|f| (f.0 as f64 / self.flow.ideal.0.max(1) as f64).max(1.0))
    }
}

impl World {
    /// The scenario's flows, in start order.
    pub fn flows(&self) -> Vec<FlowResult> {
        self.flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let slot = &self.workloads[f.workload as usize];
                if let Some(p) = self.pending.get(i).filter(|p| !p.started()) {
                    // Not started: no QPs yet, only its addresses.
                    let (src_ip, dst_ip, src_qpn, dst_qpn, sport) = p.ends();
                    return FlowResult {
                        flow: *f,
                        src_ip,
                        dst_ip,
                        src_qpn,
                        dst_qpn,
                        sport,
                        finished_at: None,
                    };
                }
                let q = &self.qps[slot.clients[0] as usize];
                let (src_ip, dst_ip, sport) = match q.l3 {
                    L3::V2 {
                        src, dst, sport, ..
                    } => (src, dst, sport),
                    L3::V1 { sgid, dgid, .. } => (sgid, dgid, 0),
                    L3::Arp { .. }
                    | L3::MacControl(_)
                    | L3::IcmpUnreachable { .. }
                    | L3::Tcp { .. } => (Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED, 0),
                };
                let done = slot.workload.qp_done(0);
                FlowResult {
                    flow: *f,
                    src_ip,
                    dst_ip,
                    src_qpn: q.qp.qpn(),
                    dst_qpn: q.qp.dest_qpn(),
                    sport,
                    finished_at: slot.workload.stats(0).last_completion_at.filter(|_| done),
                }
            })
            .collect()
    }

    /// The name of host `h` (`[[host]]` order, the flows' host index).
    pub fn host_name(&self, h: u32) -> &str {
        &self.hosts[h as usize].name
    }

    /// How many flows have finished, of how many.
    pub fn flows_done(&self) -> (usize, usize) {
        let done = self
            .flows
            .iter()
            .filter(|f| self.workloads[f.workload as usize].workload.is_done())
            .count();
        (done, self.flows.len())
    }
}
