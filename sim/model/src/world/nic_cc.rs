//! DCQCN in the world (the NIC's congestion control): the NIC's
//! notification point turns CE marks into CNPs on the wire, and each QP's
//! reaction point paces the QP.
//!
//! ```text
//!  receiver NIC (host.rs → congestion_rx)                 sender NIC
//!  CE-marked packet for QP r ──▶ NotificationPoint ──▶ CNP (0x81, DestQP = r's peer)
//!                                 (per port, paced)        │ queued on the port at
//!                                                          │ cnp_802p_prio / cnp_dscp
//!                                                          ▼ (cnp_on_ack: BECN on r's ACK)
//!  CNP or BECN ACK ──▶ ReactionPoint of s ──rate changed──▶ RcQp::change_rate (re-times
//!  for QP s            on_cnp / on_sent / on_deadline          the waiting packet) ─▶ wake
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

use roce_codec::{IbRepr, IntRepr, Opcode, Operation, Psn};

use super::World;
use super::profile::Trust;
use super::profile::{AckRoute, ByteWindow, ECT0, EcnMode};
use crate::cc::{AckClocked, AckInfo, MarkedPacket, ReactionPoint};
use crate::engine::Event;
use crate::packet::{L3, Packet, PacketId, frame_sizes};
use crate::time::{Ps, Rate};
use crate::transport::RcQp;

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
    /// The reaction point of an algorithm clocked by ACKs (DCTCP), where
    /// its profile runs one in place of DCQCN's.
    pub acks: Option<AckClocked>,
    /// The requester's PSNs as byte counts, for `acks`.
    pub seq: SeqCount,
    /// The time stamp of the last request the responder took, which its
    /// next ACK or NAK echoes (`Packet::ts`).
    pub echo: Ps,
    /// The telemetry of the last request the responder took, which its
    /// next ACK or NAK echoes (HPCC's; boxed: most QPs never see any).
    pub echo_int: Option<Box<IntRepr>>,
    /// HPCC-PINT's ACK sampling (`PINT_PROB` below 1): the QP's own
    /// stream, where the reference draws `rand()`.
    pub pint_sample: Option<Box<rand_chacha::ChaCha8Rng>>,
}

impl QpCc {
    /// The rate the QP's limiter allows now on a port of rate `line`:
    /// its congestion control's current rate under the workload's
    /// `rate_limit`.
    pub fn allowed_rate(&self, line: Rate) -> Rate {
        let r = self.cc_rate().unwrap_or(line);
        self.cap.map_or(r, |c| c.min(r)).min(line)
    }

    /// The rate its reaction point (DCQCN's or an ACK-clocked one) sets.
    pub fn cc_rate(&self) -> Option<Rate> {
        match (&self.rp, &self.acks) {
            (Some(rp), _) => Some(rp.rate()),
            (None, Some(a)) => Some(a.rate()),
            (None, None) => None,
        }
    }
}

/// A requester's progress in payload bytes, as the reference counts its
/// sequence numbers (`snd_una`, `snd_nxt`): packets × the QP's segment,
/// counted from its first PSN without wrapping (exact while every packet
/// but a message's last is full).
#[derive(Debug, Clone, Copy, Default)]
pub struct SeqCount {
    /// The oldest unacknowledged PSN when last read.
    pub una: Psn,
    /// Packets acknowledged until then.
    pub acked: u64,
    /// Payload bytes per packet.
    pub segment: u32,
}

/// How a receiving NIC notifies the sender of a CE-marked packet.
#[derive(Debug, Clone, Copy)]
pub enum Notify {
    /// A CNP of its own: see [`World::send_cnp`].
    Cnp(CnpOut),
    /// BTH BECN on the ACK or NAK the marked packet makes
    /// ([`crate::transport::RcQp::on_receive_echoing`]): the HPCC
    /// reference's CNP flag on its ACK (`RdmaHw::ReceiveUdp`, `SetCnp`),
    /// put on the wire as InfiniBand's own backward congestion notification
    /// bit, so that a capture stays plain RoCEv2.
    EchoOnAck,
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
}

impl World {
    /// A RoCE packet `id` for QP `q` arrived at NIC `nic` of `host`: a CNP,
    /// or an ACK echoing congestion (BTH BECN), goes to DCQCN's reaction
    /// point; a CE mark to the notification point, which may want the
    /// sender notified: by a CNP sent after the QP has handled the packet,
    /// or by BECN on the ACK the packet makes ([`Notify`]).
    pub fn congestion_rx(&mut self, host: u32, nic: u32, q: u32, id: PacketId) -> Option<Notify> {
        let now = self.now();
        let pkt = self.pool.get(id);
        let op = pkt.ib.bth.opcode;
        let is_ack = op.operation() == Some(Operation::Acknowledge);
        if op == Opcode::CNP || (is_ack && pkt.ib.bth.becn) {
            let cc = &mut self.qps[q as usize].live.cc;
            match &mut cc.rp {
                Some(rp) => cc.dirty |= rp.on_cnp(now),
                // An ACK-clocked reaction point reads the echo with the
                // ACK, once the transport has processed it
                // (`ack_clocked_rx`).
                None if is_ack && cc.acks.is_some() => {}
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
        if setup.cnp_on_ack && is_ack {
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
        if on_ack {
            return Some(Notify::EchoOnAck);
        }
        let L3::V2 { .. } = s.l3 else {
            return None;
        };
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
        Some(Notify::Cnp(CnpOut {
            qp: q,
            port: n.port,
            queue: prio,
            prio,
            dscp,
            ecn,
        }))
    }

    /// Queues a CNP on the port the marked packet came in on: BTH opcode
    /// 0x81 with BECN, DestQP the marked traffic's sender QP, addressed
    /// back to it.
    pub fn send_cnp(&mut self, c: CnpOut) {
        let now = self.now();
        let s = &self.qps[c.qp as usize];
        let ib = IbRepr::cnp(s.live.dest_qpn());
        let L3::V2 { src, dst, ttl, .. } = s.l3 else {
            return;
        };
        // UDP source port 0, as a ConnectX CNP (see `congestion_rx`).
        let l3 = L3::V2 {
            src,
            dst,
            dscp: c.dscp,
            ecn: c.ecn,
            ttl,
            sport: 0,
            ecmp: crate::packet::hash_ports(0),
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
            int: crate::packet::NO_INT,
            ts: now,
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
        let Some(route) = self.qps[q as usize].live.cc.ack else {
            return;
        };
        let now = self.now();
        while let Some(ib) = self.qps[q as usize].live.qp.next_ack(now) {
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
        let s = &mut self.qps[q as usize];
        if s.live.is_retired() {
            return false;
        }
        let cc = &mut s.live.cc;
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

    /// An ACK or NAK (`ack`, still in the pool) for requester `q` was
    /// processed by its transport: its ACK-clocked reaction point, if it
    /// runs one, reads it. `echo`: the ACK carried BECN; its stamp and
    /// telemetry are read where they are.
    pub fn ack_clocked_rx(&mut self, q: u32, echo: bool, ack: PacketId) {
        let now = self.now();
        let pkt = self.pool.get(ack);
        let (stamp, int) = (pkt.ts, self.pool.int_of(pkt));
        let live = &mut *self.qps[q as usize].live;
        let (qp, cc) = (&mut live.qp, &mut live.cc);
        let Some(a) = &mut cc.acks else {
            return;
        };
        // HPCC-PINT reacts to a sample of the ACKs (`HandleAckHpPint`:
        // `rand() % 65536 < 65536 × PINT_PROB`); the sequence counts all.
        let skip = match (a.pint(), cc.pint_sample.as_deref_mut()) {
            (Some(p), Some(rng)) => crate::rng::below(rng, 65_536) >= p.sample_threshold(),
            _ => false,
        };
        let (una, next) = (qp.oldest_unacked_psn(), qp.next_send_psn());
        let seq = &mut cc.seq;
        let advanced = una.distance(seq.una);
        if advanced > 0 {
            seq.acked += advanced as u64;
            seq.una = una;
        }
        let in_flight = next.distance(una).max(0) as u64;
        let segment = u64::from(seq.segment);
        let ack = AckInfo {
            acked: seq.acked * segment,
            sent: (seq.acked + in_flight) * segment,
            ecn_echo: echo,
            rtt: Some(now.saturating_sub(stamp)),
        };
        if !skip {
            cc.dirty |= a.on_ack(&ack, int);
        }
    }

    /// Applies a changed rate and keeps one deadline event pending while
    /// the QP has work (see the module documentation).
    pub fn rp_update(&mut self, q: u32) {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        let line = self.ports[s.port as usize].rate();
        let live = &mut *s.live;
        let (qp, cc) = (&mut live.qp, &mut live.cc);
        let Some(rp) = &mut cc.rp else {
            // An ACK-clocked reaction point has no deadline: its rate
            // changes only when an ACK arrives.
            if let Some(rate) = cc.acks.as_ref().map(AckClocked::rate) {
                if std::mem::take(&mut cc.dirty) {
                    apply_rate(qp, cc, rate, line);
                }
            }
            return;
        };
        let busy = qp.tx_ready_at(now).is_some() || qp.next_timer().is_some();
        let due = rp.next_deadline().filter(|&d| d <= now);
        if busy && due.is_some() {
            cc.dirty |= rp.on_deadline(now);
        }
        if std::mem::take(&mut cc.dirty) {
            let rate = rp.rate();
            apply_rate(qp, cc, rate, line);
        }
        let Some(rp) = &cc.rp else {
            return;
        };
        let next = rp.next_deadline();
        if let (true, Some(d)) = (busy, next) {
            if cc.rp_at.is_none_or(|t| t > d) {
                cc.rp_at = Some(d);
                self.sched.at(d, Event::RpDeadline { qp: q });
            }
        }
    }
}

/// Paces `qp` at its reaction point's `rate` (under the workload's cap
/// in `cc`) on a port of rate `line`, and sizes a window that follows the
/// rate. (The QP and its state, not its slot: `world::qp` imports this
/// module.)
fn apply_rate(qp: &mut RcQp, cc: &QpCc, rate: Rate, line: Rate) {
    let capped = cc.cap.map_or(rate, |c| c.min(rate));
    let limit = (capped < line).then_some(capped);
    if limit != qp.rate_limit() {
        qp.change_rate(limit, cc.retime);
    }
    if let Some((w, segment)) = cc.window.filter(|(w, _)| w.follows_rate) {
        // GetWin: the window at the reaction point's rate, not the
        // workload's cap.
        let cap = w.packets(segment, rate.min(line), line);
        qp.set_inflight_cap(Some(cap));
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
