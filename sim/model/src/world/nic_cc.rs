//! DCQCN in the world (the NIC's congestion control): the NIC's
//! notification point turns CE marks into CNPs on the wire, and each QP's
//! reaction point paces the QP.
//!
//! ```text
//!  receiver NIC (host.rs → congestion_rx)                 sender NIC
//!  CE-marked packet for QP r ──▶ NotificationPoint ──▶ CNP (0x81, DestQP = r's peer)
//!                                 (per port, paced)        │ queued on the port at
//!                                                          │ cnp_802p_prio / cnp_dscp
//!                                                          ▼ (or behind the ACK)
//!  CNP for QP s ──▶ ReactionPoint of s ──rate changed──▶ RcQp::change_rate (re-times
//!                   on_cnp / on_sent / on_deadline          the waiting packet) ─▶ wake
//!                          │
//!                          └─ next_deadline ──▶ one RpDeadline event per QP
//! ```
//!
//! The reaction point's clocks are deadlines, not ticks (`cc::rp`): the
//! world keeps one [`Event::RpDeadline`] per QP pending at
//! `ReactionPoint::next_deadline`, re-read after every call (an event whose
//! time is no longer the slot's is stale and does nothing). While a QP has
//! nothing to send and nothing in flight, no deadline is scheduled: the
//! reaction point catches up, in closed form or a loop of its due events,
//! when the QP has work again, so an idle QP costs nothing.
//!
//! The notification point answers CE-marked RoCE packets other than CNPs
//! on the priorities its profile enables it for (the receiving QP's
//! priority); CNPs for a QP whose priority has no reaction point are
//! counted as `rp_cnp_ignored`. A CNP goes out of the port the marked
//! packet came in on, queued on that port like the kernel's frames.

use roce_codec::{IbRepr, Opcode, Operation};

use super::World;
use super::profile::Trust;
use super::profile::{AckRoute, ByteWindow, ECT0, EcnMode};
use crate::cc::{MarkedPacket, ReactionPoint};
use crate::engine::Event;
use crate::packet::{L3, Packet, PacketId, frame_sizes};
use crate::time::{Ps, Rate};

/// A QP's congestion-control state in the world.
#[derive(Debug, Clone, Default)]
pub struct QpCc {
    /// DCQCN's reaction point, where its profile runs one on the QP's
    /// priority.
    pub rp: Option<ReactionPoint>,
    /// The time of the pending `RpDeadline` event.
    pub rp_at: Option<Ps>,
    /// A rate change re-times the packet waiting for its slot.
    pub retime: bool,
    /// A fixed rate limit of the workload (`rate_limit`), under DCQCN's.
    pub cap: Option<Rate>,
    /// The reaction point's rate changed since it was applied.
    pub dirty: bool,
    /// CNPs for this QP while no reaction point runs on its priority.
    pub cnps_ignored: u64,
    /// Where its ACKs and NAKs leave, when not in the QP's own turn.
    pub ack: Option<AckRoute>,
    /// Its window of bytes in flight, where its profile keeps one; `u32`:
    /// the QP's payload per packet.
    pub window: Option<(ByteWindow, u32)>,
}

impl QpCc {
    /// The rate the QP's limiter allows now on a port of rate `line`:
    /// DCQCN's current rate under the workload's `rate_limit`.
    pub fn allowed_rate(&self, line: Rate) -> Rate {
        let r = self.rp.as_ref().map_or(line, ReactionPoint::rate);
        self.cap.map_or(r, |c| c.min(r)).min(line)
    }
}

/// A CNP to send: see [`World::send_cnp`].
#[derive(Debug, Clone, Copy)]
pub struct CnpOut {
    /// The QP whose peer's traffic was marked (it names the addresses).
    qp: u32,
    /// The NIC port the marked packet came in on.
    port: u32,
    /// The port's egress queue it waits in.
    queue: u8,
    prio: u8,
    dscp: u8,
    ecn: u8,
    sport: u16,
}

impl World {
    /// A RoCE packet `id` for QP `q` arrived at NIC `nic` of `host`: a CNP
    /// goes to the reaction point; a CE mark to the notification point,
    /// which may want a CNP sent (after the QP has handled the packet, so
    /// that a CNP sent with the ACK follows it).
    pub fn congestion_rx(&mut self, host: u32, nic: u32, q: u32, id: PacketId) -> Option<CnpOut> {
        let now = self.now();
        let pkt = self.pool.get(id);
        if pkt.ib.bth.opcode == Opcode::CNP {
            let cc = &mut self.qps[q as usize].cc;
            match &mut cc.rp {
                Some(rp) => cc.dirty |= rp.on_cnp(now),
                None => cc.cnps_ignored += 1,
            }
            return None;
        }
        if !pkt.ecn_ce() {
            return None;
        }
        let h = &mut self.hosts[host as usize];
        let s = &self.qps[q as usize];
        let setup = h.profile.np(s.prio)?;
        // The reference's notification is a flag on the ACK of a marked
        // data packet: a marked ACK, never acknowledged, notifies nothing.
        if setup.cnp_on_ack && pkt.ib.bth.opcode.operation() == Some(Operation::Acknowledge) {
            return None;
        }
        let marked = MarkedPacket {
            port: nic,
            src: pkt.src_ip(),
            dst: pkt.dst_ip(),
            dest_qpn: pkt.ib.bth.dest_qp,
        };
        let (on_ack, dscp, prio802) = (
            setup.cnp_on_ack,
            setup.params.cnp_dscp,
            setup.params.cnp_802p_prio,
        );
        let n = &mut h.nics[nic as usize];
        if !n.np.as_mut()?.on_ce(now, &marked) {
            return None;
        }
        let L3::V2 {
            dscp: qp_dscp,
            ecn: qp_ecn,
            ..
        } = s.l3
        else {
            return None;
        };
        let out = if on_ack {
            // Behind the ACK, marked and queued as the ACK is.
            let (prio, dscp) = ack_marking(s.prio, qp_dscp, s.cc.ack.and_then(|r| r.prio));
            CnpOut {
                qp: q,
                port: n.port,
                queue: s.cc.ack.map_or(prio, |r| r.queue),
                prio,
                dscp,
                ecn: qp_ecn,
                sport: s.sport,
            }
        } else {
            let prio = match h.trust {
                Trust::Pcp => prio802,
                Trust::Dscp => dscp >> 3,
            };
            // A ConnectX CNP carries ECT(0) and UDP source port 0 (the
            // ConnectX-4 Lx CNP captured in scapy's test/contrib/roce.uts).
            let ecn = if h.profile.ecn == EcnMode::Cc {
                ECT0
            } else {
                0
            };
            CnpOut {
                qp: q,
                port: n.port,
                queue: prio,
                prio,
                dscp,
                ecn,
                sport: 0,
            }
        };
        Some(out)
    }

    /// Queues a CNP on the port the marked packet came in on: BTH opcode
    /// 0x81 with BECN, DestQP the marked traffic's sender QP, addressed
    /// back to it.
    pub fn send_cnp(&mut self, c: CnpOut) {
        let now = self.now();
        let s = &self.qps[c.qp as usize];
        let ib = IbRepr::cnp(s.qp.dest_qpn());
        let L3::V2 {
            src,
            dst,
            ttl,
            sport,
            ecmp,
            ..
        } = s.l3
        else {
            return;
        };
        // A CNP with the QP's port (the reference's, on the ACK) hashes as
        // the QP's ACKs do.
        let ecmp = if c.sport == sport {
            ecmp
        } else {
            crate::packet::hash_ports(c.sport)
        };
        let l3 = L3::V2 {
            src,
            dst,
            dscp: c.dscp,
            ecn: c.ecn,
            ttl,
            sport: c.sport,
            ecmp,
        };
        let vlan = s.vlan.map(|mut v| {
            v.pcp = c.prio;
            v
        });
        let (frame_len, billed_len, wire_extra) = frame_sizes(
            Packet::compute_frame_len(vlan.is_some(), &l3, &ib),
            s.billing.billed(&ib),
        );
        let pkt = Packet {
            eth: s.eth,
            vlan,
            l3,
            ib,
            prio: c.prio,
            frame_len,
            billed_len,
            wire_extra,
            src_qp: u32::MAX,
            ingress: u32::MAX,
            mad: u32::MAX,
            born: now,
        };
        self.queue_on_port(c.port, c.queue, pkt);
    }

    /// Puts a frame the NIC made itself into its port's egress queue
    /// `queue` and starts the port if idle.
    fn queue_on_port(&mut self, port: u32, queue: u8, pkt: Packet) {
        let len = pkt.billed_len.into();
        let id = self.pool.alloc(pkt);
        self.ports[port as usize].push(usize::from(queue & 7), id, len);
        self.pump(port);
    }

    /// Queues the ACKs and NAKs at the head of QP `q`'s responses on the
    /// NIC queue its profile gives them, at their priority (the QP's or
    /// the profile's), when it sends them apart from the QP's data.
    pub fn flush_acks(&mut self, q: u32) {
        let Some(route) = self.qps[q as usize].cc.ack else {
            return;
        };
        let now = self.now();
        while let Some(ib) = self.qps[q as usize].qp.next_ack(now) {
            let id = self.make_packet(q, ib);
            let s = &self.qps[q as usize];
            let pkt = self.pool.get_mut(id);
            let dscp = match s.l3 {
                L3::V2 { dscp, .. } => dscp,
                _ => 0,
            };
            let (prio, d) = ack_marking(s.prio, dscp, route.prio);
            pkt.prio = prio;
            if let L3::V2 { dscp, .. } = &mut pkt.l3 {
                *dscp = d;
            }
            if let Some(v) = &mut pkt.vlan {
                v.pcp = prio;
            }
            let (port, queue, len) = (s.port, usize::from(route.queue), pkt.billed_len.into());
            self.ports[port as usize].push(queue, id, len);
            self.pump(port);
        }
    }

    /// `RpDeadline`: the reaction point's timer or cut may be due. Not
    /// activity by itself: a recovering QP with no work does not keep a
    /// run going.
    pub fn rp_deadline(&mut self, q: u32) -> bool {
        let now = self.now();
        let cc = &mut self.qps[q as usize].cc;
        if cc.rp_at != Some(now) {
            return false;
        }
        cc.rp_at = None;
        if let Some(rp) = &mut cc.rp {
            cc.dirty |= rp.on_deadline(now);
        }
        self.after_qp_change(q);
        false
    }

    /// Applies a changed rate and keeps one deadline event pending while
    /// the QP has work (see the module documentation).
    pub fn rp_update(&mut self, q: u32) {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        let Some(rp) = &mut s.cc.rp else {
            return;
        };
        let busy = s.qp.tx_ready_at(now).is_some() || s.qp.next_timer().is_some();
        let due = rp.next_deadline().filter(|&d| d <= now);
        if busy && due.is_some() {
            s.cc.dirty |= rp.on_deadline(now);
        }
        if std::mem::take(&mut s.cc.dirty) {
            let line = self.ports[s.port as usize].rate();
            let rate = rp.rate();
            let rate = s.cc.cap.map_or(rate, |c| c.min(rate));
            let limit = (rate < line).then_some(rate);
            if limit != s.qp.rate_limit() {
                s.qp.change_rate(limit, s.cc.retime);
            }
            if let Some((w, segment)) = s.cc.window.filter(|(w, _)| w.follows_rate) {
                // GetWin: the window at DCQCN's rate, not the workload's cap.
                let cap = w.packets(segment, rp.rate().min(line), line);
                s.qp.set_inflight_cap(Some(cap));
            }
        }
        let next = rp.next_deadline();
        if let (true, Some(d)) = (busy, next) {
            if s.cc.rp_at.is_none_or(|t| t > d) {
                s.cc.rp_at = Some(d);
                self.sched.at(d, Event::RpDeadline { qp: q });
            }
        }
    }
}

/// The priority and DSCP of an ACK of a QP at `prio` with `dscp`: its
/// own, or the fixed ACK priority with the DSCP that DSCP trust maps to
/// it (`prio << 3`).
fn ack_marking(prio: u8, dscp: u8, ack_prio: Option<u8>) -> (u8, u8) {
    match ack_prio {
        Some(p) => (p, p << 3),
        None => (prio, dscp),
    }
}
