//! Connection set-up by the RDMA CM (`connect = "rdma_cm"`, perftest's
//! `-R`): REQ, REP and RTU MADs between the two hosts' QP1 over the RoCE
//! path, one exchange per QP, before the client's QPs start.
//!
//! ```text
//!  client (active)                                   server (passive, listening)
//!    │── REQ (QPN, starting PSN, GIDs, service ID) ───▶│  no answer within the CM
//!    │   ... resent after each response timeout,       │  response timeout: the same
//!    │       max_cm_retries (15) times ...             │  REQ again
//!    │◀──────────────────── REP (QPN, starting PSN) ───│  or REJ (no listener: invalid
//!    │── RTU ─────────────────────────────────────────▶│  service ID; consumer reject)
//!    │  established: the client's QPs start
//! ```
//!
//! Each MAD is a UD SEND ONLY from QP1 to QP1 (BTH, DETH with Q_Key
//! 0x80010000, the 256-byte MAD), in the RoCE version of its sender's QP:
//! the REQ in the client's, the answers in the server's (the client's when
//! its NIC supports it). A REQ in RoCE v2 reaching a v1-only NIC is UDP for
//! the server's kernel: ICMP port unreachable (`world::icmp`), which the CM
//! ignores, so it times out after its retries (RDMA_CM_EVENT_UNREACHABLE).
//!
//! The REQ's timeout is Linux's (`drivers/infiniband/core/cm.c`,
//! `ib_send_cm_req`): twice the path's packet life time plus the remote CM
//! response timeout, each as `cm_convert_to_ms` rounds 4.096 µs × 2^t to
//! 2^(t−8) ms: RoCE paths have packet life time 16 (`cma.c`,
//! `CMA_IBOE_PACKET_LIFETIME`) and rdma_cm asks 20 (`CMA_CM_RESPONSE_TIMEOUT`),
//! so 2 × 256 + 4096 = 4608 ms; after `CMA_MAX_CM_RETRIES` (15) resends
//! the connection fails 16 × 4.608 = 73.728 s after the first REQ. The MADs
//! leave at once (no processing time) to the MACs of the set-up's RoCE
//! resolutions (`world::neigh` steps 3 and 4). Not as the kernel does it:
//! the four steps are all made before the first REQ, the two of perftest's
//! socket included (an rdma_cm set-up has no TCP connection, so a multi-NIC
//! host's tables may end differently), and MRA, DREQ and DREP are not sent.

use core::net::Ipv4Addr;

use roce_codec::build::CMA_CM_RESPONSE_TIMEOUT;
use roce_codec::wire::cm::{CmMessage, CmRej, CmRep, CmReq, CmRtu, RejReason};
use roce_codec::wire::mad::MadRepr;
use roce_codec::{CmRepr, Psn};

use super::World;
use super::port::DropReason;
use crate::engine::Event;
use crate::packet::{L3, Packet, PacketId};
use crate::time::Ps;
use serde::Deserialize;

/// `CMA_IBOE_PACKET_LIFETIME`: the packet life time of a RoCE path.
const IBOE_PACKET_LIFETIME: u32 = 16;
/// `CMA_MAX_CM_RETRIES`.
pub const MAX_CM_RETRIES: u8 = roce_codec::build::CMA_MAX_CM_RETRIES;

/// `cm_convert_to_ms`.
fn cm_ms(iba_time: u32) -> u64 {
    1 << iba_time.saturating_sub(8)
}

/// How long the active side waits for an answer to its REQ.
pub fn req_timeout() -> Ps {
    Ps::from_ms(2 * cm_ms(IBOE_PACKET_LIFETIME) + cm_ms(u32::from(CMA_CM_RESPONSE_TIMEOUT)))
}

/// One end of a CM set-up: (host, GID interface, address), the MAC its
/// QPs send to, its QPs' RoCE version as an L3 template.
#[derive(Debug, Clone, Copy)]
pub struct CmEnd {
    pub host: u32,
    pub iface: u32,
    pub ip: Ipv4Addr,
    pub dmac: [u8; 6],
    /// The L3 of its first QP (addresses, version, UDP port).
    pub l3: L3,
}

/// One workload's CM set-up.
pub struct CmSetup {
    pub ends: [CmEnd; 2],
    /// Per QP: (QPN, first PSN) of the client's and the server's QP.
    pub keys: Vec<[(u32, u32); 2]>,
    pub clients: Vec<u32>,
    pub servers: Vec<u32>,
    pub answer: CmAnswer,
    /// IB MTU code of the path (3 = 1024 ... 5 = 4096).
    pub path_mtu: u8,
    /// Per QP: REQs sent, and whether it is over (established or failed).
    tries: Vec<u8>,
    over: Vec<bool>,
    /// The next PSN of each side's QP1.
    gsi_psn: [u32; 2],
    /// Each QP's REQ in the MAD log (resent as is).
    req_mad: Vec<u32>,
    pub established: usize,
}

impl CmSetup {
    pub fn new(
        ends: [CmEnd; 2],
        keys: Vec<[(u32, u32); 2]>,
        (clients, servers): (Vec<u32>, Vec<u32>),
        answer: CmAnswer,
        path_mtu: u8,
    ) -> CmSetup {
        let n = keys.len();
        CmSetup {
            ends,
            keys,
            clients,
            servers,
            answer,
            path_mtu,
            tries: vec![0; n],
            over: vec![false; n],
            gsi_psn: [0, 0],
            req_mad: vec![u32::MAX; n],
            established: 0,
        }
    }

    /// Communication IDs: distinct per QP and side.
    fn comm_id(&self, side: usize, qp: usize) -> u32 {
        (0x1000_0000 * (side as u32 + 1)) | self.keys[qp][side].0
    }

    fn req(&self, qp: usize) -> CmReq {
        let (c, s) = (&self.ends[0], &self.ends[1]);
        let (qpn, psn) = self.keys[qp][0];
        let sport = 0xc000 | (qpn as u16 & 0x3fff);
        CmReq::rdma_cm(
            self.comm_id(0, qp),
            qpn,
            psn,
            c.ip.into(),
            sport,
            s.ip.into(),
            roce_codec::perftest::PORT,
            self.path_mtu,
        )
    }

    /// The message of kind `kind` for QP `qp`.
    fn message(&self, kind: CmKind, qp: usize) -> CmMessage {
        match kind {
            CmKind::Req => CmMessage::Req(self.req(qp)),
            CmKind::Rep => {
                let (qpn, psn) = self.keys[qp][1];
                CmMessage::Rep(CmRep::answering(
                    &self.req(qp),
                    self.comm_id(1, qp),
                    qpn,
                    psn,
                ))
            }
            CmKind::Rtu => CmMessage::Rtu(CmRtu::between(self.comm_id(0, qp), self.comm_id(1, qp))),
            CmKind::Rej => {
                let (local, reason) = match self.answer {
                    // Linux's CM answers for no listener with comm ID 0.
                    CmAnswer::NoListener | CmAnswer::Accept => (0, RejReason::InvalidServiceId),
                    CmAnswer::Reject => (self.comm_id(1, qp), RejReason::ConsumerDefined),
                };
                CmMessage::Rej(CmRej {
                    local_comm_id: local,
                    remote_comm_id: self.comm_id(0, qp),
                    message_rejected: 0,
                    reject_info_length: 0,
                    reason,
                    ari: [0; 72],
                    private_data: [0; 148],
                })
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmKind {
    Req,
    Rep,
    Rtu,
    Rej,
}

/// A MAD sent: which set-up, QP and message, and its bytes.
pub struct SentMad {
    setup: u32,
    qp: u16,
    kind: CmKind,
    pub bytes: [u8; MadRepr::LEN],
}

impl World {
    /// The client's CM connects every QP: a REQ each.
    pub fn cm_start(&mut self, s: u32) {
        for qp in 0..self.cms[s as usize].keys.len() {
            self.cm_send_req(s, qp);
        }
    }

    fn cm_send_req(&mut self, s: u32, qp: usize) {
        let now = self.now();
        let cm = &mut self.cms[s as usize];
        let tries = cm.tries[qp];
        cm.tries[qp] += 1;
        let mad = if cm.req_mad[qp] == u32::MAX {
            let m = self.log_mad(s, qp, CmKind::Req);
            self.cms[s as usize].req_mad[qp] = m;
            m
        } else {
            cm.req_mad[qp]
        };
        self.send_mad(s, 0, mad);
        self.sched.at(
            now + req_timeout(),
            Event::CmTimeout {
                setup: s,
                qp: qp as u16,
                tries: tries + 1,
            },
        );
    }

    /// Builds and logs message `kind` of QP `qp`; returns its index.
    fn log_mad(&mut self, s: u32, qp: usize, kind: CmKind) -> u32 {
        let cm = &self.cms[s as usize];
        // The transaction ID of the active side's request, echoed.
        let tid = 0x0000_0001_0000_0000 | u64::from(cm.keys[qp][0].0);
        let bytes = CmRepr::new(tid, cm.message(kind, qp)).to_bytes();
        self.mads.push(SentMad {
            setup: s,
            qp: qp as u16,
            kind,
            bytes,
        });
        self.mads.len() as u32 - 1
    }

    /// Sends logged MAD `mad` from side `side` (0 client, 1 server).
    fn send_mad(&mut self, s: u32, side: usize, mad: u32) {
        let now = self.now();
        let cm = &mut self.cms[s as usize];
        let end = cm.ends[side];
        let psn = cm.gsi_psn[side];
        cm.gsi_psn[side] = (psn + 1) & 0xFF_FFFF;
        let ib = MadRepr::gsi_packet(Psn::new(psn));
        let h = &self.hosts[end.host as usize];
        let f = h.iface(end.iface);
        let l3 = match end.l3 {
            L3::V2 { src, dst, ttl, .. } => L3::V2 {
                src,
                dst,
                dscp: 0,
                ecn: 0,
                ttl,
                sport: 0xc000 | (mad as u16 & 0x3fff),
                ecmp: crate::packet::hash_ports(0xc000 | (mad as u16 & 0x3fff)),
            },
            L3::V1 { sgid, dgid, .. } => L3::V1 {
                sgid,
                dgid,
                tclass: 0,
                flow_label: 0,
            },
            other => other,
        };
        let mut pkt = Packet::kernel(f.mac, end.dmac, f.vlan, l3, ib, now);
        pkt.mad = mad;
        self.kernel_send(end.host, end.iface, pkt, now);
    }

    /// A REQ's response timeout: resend, or give up.
    pub fn cm_timeout(&mut self, s: u32, qp: u16, tries: u8) {
        let cm = &self.cms[s as usize];
        let qp = qp as usize;
        if cm.over[qp] || cm.tries[qp] != tries {
            return;
        }
        if tries <= MAX_CM_RETRIES {
            return self.cm_send_req(s, qp);
        }
        self.cm_fail(s, qp, "unreachable");
    }

    fn cm_fail(&mut self, s: u32, qp: usize, why: &'static str) {
        let cm = &mut self.cms[s as usize];
        cm.over[qp] = true;
        let (c, sv) = (cm.clients[qp], cm.servers[qp]);
        self.qps[c as usize].unconnected = Some(why);
        self.qps[sv as usize].unconnected = Some(why);
    }

    /// A MAD to QP1 reached `host`'s NIC `nic`.
    pub fn cm_receive(&mut self, port: u32, host: u32, id: PacketId) {
        let pkt = *self.pool.get(id);
        let Some(m) = self.mads.get(pkt.mad as usize) else {
            return self.drop_frame(port, id, DropReason::NotOurs);
        };
        let (s, qp, kind) = (m.setup, m.qp as usize, m.kind);
        self.pool.free(id);
        let cm = &self.cms[s as usize];
        let at_server = host == cm.ends[1].host;
        match (at_server, kind) {
            (true, CmKind::Req) => {
                let answer = if cm.answer == CmAnswer::Accept {
                    CmKind::Rep
                } else {
                    CmKind::Rej
                };
                let mad = self.log_mad(s, qp, answer);
                self.send_mad(s, 1, mad);
            }
            (false, CmKind::Rep) if !cm.over[qp] => {
                let mad = self.log_mad(s, qp, CmKind::Rtu);
                self.send_mad(s, 0, mad);
                let now = self.now();
                let cm = &mut self.cms[s as usize];
                cm.over[qp] = true;
                cm.established += 1;
                let q = cm.clients[qp];
                self.drive_at(q, now);
            }
            (false, CmKind::Rej) if !cm.over[qp] => self.cm_fail(s, qp, "rejected"),
            _ => {}
        }
    }

    /// The bytes after the IB headers of a MAD packet, for a tap.
    pub fn mad_bytes(&self, pkt: &Packet) -> Option<&[u8]> {
        (pkt.mad != u32::MAX).then(|| &self.mads[pkt.mad as usize].bytes[..])
    }
}

/// What the server's RDMA CM does with a REQ (`connect = "rdma_cm"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum CmAnswer {
    /// `rdma_accept`: REP.
    #[default]
    Accept,
    /// No listener on the port: the CM answers REJ "invalid service ID".
    NoListener,
    /// `rdma_reject`: REJ "consumer defined".
    Reject,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_req_timeout_and_retries() {
        assert_eq!(req_timeout(), Ps::from_ms(4608));
        assert_eq!(MAX_CM_RETRIES, 15);
    }
}
