//! Flows (`[[traffic]]`) as the world ran them: each one's QPs, addresses
//! and completion time, for `fct.txt`, `fct.csv` and the progress bar.

use core::net::Ipv4Addr;

use super::World;
use crate::flow::FlowRef;
use crate::packet::L3;
use crate::time::Ps;

/// Where [`World::count_finished_flows`] left off.
#[derive(Debug, Default)]
pub struct FlowTally {
    /// The first flow not yet started when last counted.
    next: usize,
    /// The flows started and not yet finished.
    live: Vec<u32>,
}

impl FlowTally {
    /// The flows started when last counted.
    pub fn started(&self) -> usize {
        self.next
    }
}

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

    /// How many flows have finished, of how many: the progress bar's
    /// count, which the run loop asks for every 65,536 events. Only the
    /// flows started and not yet seen finished are looked at: a scan of
    /// every flow's workload each time grew with flows x events, 7 % of a
    /// 99,000-flow run, on state long out of cache.
    pub fn count_finished_flows(&mut self) -> (usize, usize) {
        let t = &mut self.flow_tally;
        // Flows start in order (`flows` is sorted by start time, and equal
        // times run in insertion order); one started out of that order is
        // only counted late.
        while t.next < self.flows.len() && self.pending.get(t.next).is_none_or(|p| p.started()) {
            t.live.push(t.next as u32);
            t.next += 1;
        }
        let mut live = std::mem::take(&mut t.live);
        // A partitioned run's part counts the flows whose client it has
        // (the other part's are done here).
        live.retain(|&i| {
            self.owns_flow(i)
                && !self.workloads[self.flows[i as usize].workload as usize]
                    .workload
                    .is_done()
        });
        let t = &mut self.flow_tally;
        t.live = live;
        (t.next - t.live.len(), self.flows.len())
    }
}
