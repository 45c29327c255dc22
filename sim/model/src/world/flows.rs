//! Flows (`[[traffic]]`) in the world: each one's connection, whose QPs
//! are made only when it starts ([`PendingFlow`], [`start_flow`]), so a
//! run's memory follows the flows under way; and each one as the world ran
//! it: its QPs, addresses and completion time, for `fct.txt`, `fct.csv`
//! and the progress bar.

use std::collections::HashMap;

use core::net::Ipv4Addr;

use super::World;
use super::place::{QpKnobs, Side, add_qp};
use super::profile::EcmpPorts;
use crate::flow::FlowRef;
use crate::packet::L3;
use crate::time::Ps;
use crate::transport::QpConfig;

/// A flow's connection, checked and addressed at build time, whose two QPs
/// are made when it starts ([`start_flow`]): a run's memory follows the
/// flows under way, not all the flows it will ever have. Once it starts,
/// only its client's host is kept (which part of a split run counts it)
/// and the connection's 184 bytes are freed: an FbHdp run's 100,000 flows
/// kept 24 MB of them to the end.
pub struct PendingFlow {
    client_host: u32,
    /// `None` once started.
    conn: Option<Box<FlowConn>>,
}

/// What [`start_flow`] makes a flow's QP pair of.
#[derive(Clone, Copy)]
struct FlowConn {
    workload: u32,
    knobs: QpKnobs,
    cfg: QpConfig,
    /// Client, then server.
    sides: [Side; 2],
}

impl PendingFlow {
    /// Flow `sides` (client, then server) of workload `workload`.
    pub fn new(workload: u32, knobs: QpKnobs, cfg: QpConfig, sides: [Side; 2]) -> PendingFlow {
        PendingFlow {
            client_host: sides[0].local.host,
            conn: Some(Box::new(FlowConn {
                workload,
                knobs,
                cfg,
                sides,
            })),
        }
    }

    /// Source and destination address, requester's and responder's QPN,
    /// UDP source port; `None` once started (its QPs have them).
    pub fn ends(&self) -> Option<(Ipv4Addr, Ipv4Addr, u32, u32, u16)> {
        let c = &self.conn.as_ref()?.sides[0];
        Some((c.local.ip, c.remote_ip, c.qpn[0], c.qpn[1], c.sport))
    }
    pub fn started(&self) -> bool {
        self.conn.is_none()
    }
    /// The host of its client (requester).
    pub fn client_host(&self) -> u32 {
        self.client_host
    }

    /// The hosts of its two ends, if not started.
    pub fn hosts(&self) -> Option<[u32; 2]> {
        let s = &self.conn.as_ref()?.sides;
        Some([s[0].local.host, s[1].local.host])
    }
}

/// `FlowStart`: flow `i`'s QP pair is made; the responder posts its
/// receive and the requester is driven now.
pub fn start_flow(w: &mut World, i: u32) {
    let Some(conn) = w.pending[i as usize].conn.take() else {
        return;
    };
    let FlowConn {
        workload: wl,
        knobs,
        cfg,
        sides,
    } = *conn;
    let mut contexts = HashMap::new();
    let c = add_qp(w, &knobs, cfg, &sides[0], wl, 0, &mut contexts);
    let s = add_qp(w, &knobs, cfg, &sides[1], wl, 0, &mut contexts);
    // A window of its own path's bandwidth-delay product (GLOBAL_T 0).
    let bdp = w.flows[i as usize].path_bdp;
    let line = w.ports[w.qps[c as usize].port as usize].rate();
    w.qps[c as usize].peer = s;
    w.qps[s as usize].peer = c;
    let live = &mut *w.qps[c as usize].live;
    if let Some((bw, segment)) = live.cc.window.as_mut().filter(|(bw, _)| bw.per_path) {
        bw.bytes = bdp;
        let cap = bw.packets(*segment, line, line);
        live.qp.set_inflight_cap(Some(cap));
        if let Some(a) = &mut live.cc.acks {
            a.set_window(bdp);
        }
    }
    // The reference's ports, where the ends' profiles hash by them: the
    // requests (client) with its flow's (sport, dport), the ACKs and CNPs
    // (server) with them swapped.
    let f = &w.flows[i as usize].spec;
    let (sport, dport) = (u32::from(f.sport), u32::from(f.dport));
    for (q, word) in [(c, sport | dport << 16), (s, dport | sport << 16)] {
        let slot = &mut w.qps[q as usize];
        if w.hosts[slot.host as usize].profile.ecmp_ports == EcmpPorts::Flow {
            if let L3::V2 { ecmp, .. } = &mut slot.l3 {
                *ecmp = word;
            }
        }
    }
    let now = w.now();
    let slot = &mut w.workloads[wl as usize];
    slot.clients = vec![c];
    slot.workload
        .drive_responder(0, &mut w.qps[s as usize].live.qp, now);
    w.qps[c as usize].drive_at = Some(now);
    // In a partitioned run, only the client's part drives it.
    if w.owns_qp(c) {
        w.drive(c);
    }
    // Every part makes every flow's pair (QP indices are the run's), but
    // an end simulated in another part never acts here, and that part's
    // slot replaces this one when the parts are put together
    // (`World::absorb`): its transport goes at once, as a retired QP's.
    // (An FbHdp run split in two kept 200,000 such ends live, 1.1 KB each.)
    w.shed_foreign(c);
    w.shed_foreign(s);
}

/// Where [`World::count_finished_flows`] left off: the progress bar's,
/// kept by the run loop.
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
        (0..self.flows.len()).map(|i| self.flow(i)).collect()
    }

    /// How many flows the scenario has.
    pub fn flow_count(&self) -> usize {
        self.flows.len()
    }

    /// Flow `i` (in start order) as the world ran it.
    pub fn flow(&self, i: usize) -> FlowResult {
        let f = &self.flows[i];
        let slot = &self.workloads[f.workload as usize];
        if let Some(ends) = self.pending.get(i).and_then(PendingFlow::ends) {
            // Not started: no QPs yet, only its addresses.
            let (src_ip, dst_ip, src_qpn, dst_qpn, sport) = ends;
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
            L3::Arp { .. } | L3::MacControl(_) | L3::IcmpUnreachable { .. } | L3::Tcp { .. } => {
                (Ipv4Addr::UNSPECIFIED, Ipv4Addr::UNSPECIFIED, 0)
            }
        };
        let done = slot.workload.qp_done(0);
        FlowResult {
            flow: *f,
            src_ip,
            dst_ip,
            src_qpn: q.live.qpn(),
            dst_qpn: q.live.dest_qpn(),
            sport,
            finished_at: slot.workload.stats(0).last_completion_at.filter(|_| done),
        }
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
    pub fn count_finished_flows(&self, t: &mut FlowTally) -> (usize, usize) {
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
        t.live = live;
        (t.next - t.live.len(), self.flows.len())
    }
}
