//! Queue pairs placed in the network: a transport [`RcQp`](crate::transport::RcQp) with the
//! headers its packets carry, the port it sends on, and the events that
//! drive it.
//!
//! ```text
//!   Drive ──▶ workload posts work ─┐                     ┌ ACKs at their own priority → port queue
//!   Arrive ─▶ RcQp::on_receive ────┤                     ├ DCQCN rate → RcQp::change_rate (nic_cc.rs)
//!   QpTimer ─▶ RcQp::on_timer ─────┼─▶ after_qp_change ─▶├ tx_ready_at: now → on the NIC's active list
//!   RpDeadline ─▶ ReactionPoint ───┘                     │            later → QpWake at that time
//!   QpWake ──▶ on the active list                        └ next_timer ─▶ QpTimer (re-armed)
//! ```
//!
//! Events for a QP can be stale (the QP was woken, driven or re-armed since
//! they were scheduled); each slot remembers the one time it is waiting
//! for, and a handler whose time is not due does nothing.

use roce_codec::IbRepr;
use roce_codec::frame::{EthRepr, VlanTag};
use roce_codec::hash::ROCE_V2_UDP_DPORT;
use serde::Serialize;

use super::World;
use super::retire::QpBody;
use crate::engine::{Event, Scheduler};
use crate::packet::{Billing, L3, Packet, PacketId, frame_sizes};
use crate::time::Ps;
use crate::transport::{QpState, WcStatus, Workload};

/// Which end of a connection a QP is: the requester (perftest's client)
/// or the responder (its server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Client,
    Server,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }
}

/// Where a QP's work stands, as the summary reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QpStatus {
    /// Work left (or, for a server, its client still working).
    Running,
    /// All work completed successfully.
    Success,
    /// The QP went to Error, or its work completed with this status.
    Error(WcStatus),
    /// Its connection never came up: the RDMA CM's `rejected` (a REJ) or
    /// `unreachable` (no answer to its REQs).
    Unconnected(&'static str),
}

impl QpStatus {
    /// The `status` word of summary.json: `running`, `success`, or the
    /// completion status' name (`retry_exceeded`, ...).
    pub fn name(self) -> &'static str {
        match self {
            QpStatus::Running => "running",
            QpStatus::Success => "success",
            QpStatus::Error(e) => e.summary_name(),
            QpStatus::Unconnected(why) => why,
        }
    }
}

impl Serialize for QpStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

pub struct QpSlot {
    /// Its transport and congestion control, or once its flow is over
    /// what the outputs read of them (`world::retire`).
    pub live: QpBody,
    /// The other end of its `[[traffic]]` flow (`u32::MAX`: not a flow's).
    pub peer: u32,
    /// Frames delivered to it. Its pair has nothing on the way when
    /// what both ends made (`tx_packets`, `cnps_made`) equals what both
    /// got (`world::retire`): each end counts in its own slot only.
    pub rx_frames: u64,
    /// CNPs its NIC made for its peer on its behalf.
    pub cnps_made: u32,
    /// Its `[[traffic]]` flow's work is done (set on both ends at the
    /// client's last completion): from then on every change to it asks
    /// whether the pair can retire.
    pub finished: bool,
    /// Why its connection never came up (`connect = "rdma_cm"`).
    pub unconnected: Option<&'static str>,
    pub host: u32,
    pub iface: u32,
    pub workload: u32,
    /// Index of the QP in its workload.
    pub index: u32,
    pub role: Role,
    /// The NIC port it sends on now.
    pub port: u32,
    pub prio: u8,
    pub eth: EthRepr,
    pub vlan: Option<VlanTag>,
    pub l3: L3,
    /// How its NIC bills its frames to wire and buffers.
    pub billing: Billing,
    pub sport: u16,
    pub lag_hash: u32,
    pub affinity: u32,
    /// On its NIC's active list.
    pub active: bool,
    pub wake_at: Option<Ps>,
    pub timer_at: Option<Ps>,
    /// When the workload asked to be driven again (a scheduled message,
    /// the end of `-D`).
    pub drive_at: Option<Ps>,
    pub first_data_port: Option<u32>,
    pub first_tx: Option<Ps>,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_payload: u64,
}

impl QpSlot {
    /// Schedules a wake-up at `t` unless one at or before `t` is pending.
    pub fn wake_at_least(&mut self, t: Ps, q: u32, sched: &mut Scheduler) {
        if self.wake_at.is_none_or(|w| w > t) {
            self.wake_at = Some(t);
            sched.at(t, Event::QpWake { qp: q });
        }
    }
}

/// A workload (one perftest run or message list) and its client QPs.
pub struct WorkloadSlot {
    pub name: String,
    pub workload: Workload,
    /// Global QP index of each client QP, by index in the workload.
    pub clients: Vec<u32>,
}

impl World {
    /// `QpWake`: the rate limiter lets the QP send again.
    pub fn qp_wake(&mut self, q: u32) {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        if s.live.is_retired() {
            return;
        }
        if s.wake_at.is_some_and(|w| w <= now) {
            s.wake_at = None;
            self.activate(q);
        }
    }

    /// `QpTimer`: returns whether a deadline had passed.
    pub fn qp_timer(&mut self, q: u32) -> bool {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        if s.live.is_retired() || s.timer_at.is_none_or(|t| t > now) {
            return false;
        }
        s.timer_at = None;
        let fired = s.live.qp.next_timer().is_some_and(|t| t <= now);
        if fired {
            s.live.qp.on_timer(now);
        }
        self.after_qp_change(q);
        fired
    }

    /// `Drive`: the workload asked to act now; returns whether it was due.
    pub fn drive(&mut self, q: u32) -> bool {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        if s.live.is_retired() || s.drive_at.is_none_or(|t| t > now) {
            return false;
        }
        s.drive_at = None;
        self.after_qp_change(q);
        true
    }

    /// Has client QP `q` driven at `at`.
    pub fn drive_at(&mut self, q: u32, at: Ps) {
        self.qps[q as usize].drive_at = Some(at);
        self.sched.at(at, Event::Drive { qp: q });
    }

    /// After anything happened to a QP: let the workload react, wake the
    /// QP if it has something to send, and (re)arm its timer. A
    /// collective's news for its other QPs (a CTS lets data go, data lets
    /// the next step go) is handled at once, at the same time.
    pub fn after_qp_change(&mut self, q: u32) {
        self.qp_changed(q);
        let wl = self.qps[q as usize].workload as usize;
        while let Some(next) = self.workloads[wl].workload.take_wake() {
            self.qp_changed(next);
        }
        self.try_retire(q);
    }

    fn qp_changed(&mut self, q: u32) {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        let w = &mut self.workloads[s.workload as usize].workload;
        let mut peer_finished = u32::MAX;
        match s.role {
            Role::Client => {
                let next = w.drive_requester(s.index as usize, &mut s.live.qp, now);
                if w.qp_done(s.index as usize) {
                    // A finished flow keeps its counters, not its queues.
                    s.live.qp.release_buffers();
                    if !s.finished && s.peer != u32::MAX {
                        // Both ends may retire from now on.
                        s.finished = true;
                        peer_finished = s.peer;
                    }
                }
                if let Some(t) = next {
                    if s.drive_at.is_none_or(|d| d > t || d <= now) {
                        s.drive_at = Some(t);
                        self.sched.at(t.max(now), Event::Drive { qp: q });
                    }
                }
            }
            Role::Server => w.drive_responder(s.index as usize, &mut s.live.qp, now),
        }
        if peer_finished != u32::MAX {
            self.qps[peer_finished as usize].finished = true;
        }
        self.flush_acks(q);
        self.rp_update(q);
        let s = &mut self.qps[q as usize];
        if !s.active {
            if let Some(t) = s.live.qp.tx_ready_at(now) {
                if t <= now {
                    self.activate(q);
                } else {
                    s.wake_at_least(t, q, &mut self.sched);
                }
            }
        }
        self.rearm_timer(q);
    }

    /// Schedules the QP's next deadline unless an earlier timer event is
    /// pending.
    pub fn rearm_timer(&mut self, q: u32) {
        let s = &mut self.qps[q as usize];
        if let Some(t) = s.live.qp.next_timer() {
            if s.timer_at.is_none_or(|cur| cur > t) {
                s.timer_at = Some(t);
                let now = self.sched.now();
                self.sched.at(t.max(now), Event::QpTimer { qp: q });
            }
        }
    }

    /// A packet of QP `q` with the headers of its connection, counted.
    pub fn make_packet(&mut self, q: u32, ib: IbRepr) -> PacketId {
        let now = self.now();
        let s = &mut self.qps[q as usize];
        s.first_tx.get_or_insert(now);
        let cc = &mut s.live.cc;
        let is_ack = ib.bth.opcode.0 == 0x11;
        // Telemetry: a request of an algorithm that reads it starts an
        // empty stack; an ACK echoes the last request's (`cc.echo_int`).
        let int = match (&s.l3, is_ack) {
            (L3::V2 { .. }, false) => cc
                .acks
                .as_ref()
                .and_then(|a| a.telemetry_source(ROCE_V2_UDP_DPORT)),
            (L3::V2 { .. }, true) => cc.echo_int.as_deref().map(|i| i.echo_of(ROCE_V2_UDP_DPORT)),
            _ => None,
        };
        let int_len = int.as_ref().map_or(0, |i| i.buffer_len() as u32);
        let (frame_len, billed_len, wire_extra) = frame_sizes(
            Packet::compute_frame_len(s.vlan.is_some(), &s.l3, &ib) + int_len,
            s.billing.billed(&ib),
        );
        s.tx_bytes += u64::from(frame_len);
        s.tx_packets += 1;
        s.tx_payload += u64::from(ib.payload_len);
        // The byte counter of DCQCN's increase counts the data the limiter
        // paces (requests, READ responses), not ACKs, at their billed size.
        if let (Some(rp), false) = (&mut cc.rp, is_ack) {
            cc.dirty |= rp.on_sent(now, u64::from(billed_len));
        }
        // A client QP's first packet is a request (the first data packet
        // of a WRITE or SEND, the request of a READ); a server's is its
        // first ACK or READ response.
        if s.first_data_port.is_none() {
            s.first_data_port = Some(s.port);
        }
        let pkt = Packet {
            eth: s.eth,
            vlan: s.vlan,
            l3: s.l3,
            ib,
            prio: s.prio,
            frame_len,
            billed_len,
            wire_extra,
            src_qp: q,
            ingress: u32::MAX,
            mad: u32::MAX,
            int: crate::packet::NO_INT,
            // An ACK or NAK echoes the stamp of the last packet the
            // responder took (`ts`'s documentation).
            ts: if is_ack { cc.echo } else { now },
        };
        let id = self.pool.alloc(pkt);
        if let Some(int) = int {
            self.pool.set_int(id, int);
        }
        id
    }

    /// Where QP `q`'s work stands. A server is done when its client is
    /// (or failed): it cannot know more.
    pub fn qp_status(&self, q: u32) -> QpStatus {
        let s = &self.qps[q as usize];
        if let Some(why) = s.unconnected {
            return QpStatus::Unconnected(why);
        }
        let wl = &self.workloads[s.workload as usize];
        let w = &wl.workload;
        match (s.live.state(), s.role) {
            (QpState::Error(e), _) => QpStatus::Error(e),
            (QpState::Rts, Role::Client) if w.qp_done(s.index as usize) => {
                match w.stats(s.index as usize).first_error {
                    Some(e) => QpStatus::Error(e),
                    None => QpStatus::Success,
                }
            }
            (QpState::Rts, Role::Server) => {
                let client = wl.clients[s.index as usize];
                if self.qps[client as usize].live.state() != QpState::Rts
                    || w.qp_done(s.index as usize)
                {
                    QpStatus::Success
                } else {
                    QpStatus::Running
                }
            }
            (QpState::Rts, Role::Client) => QpStatus::Running,
        }
    }

    /// The `ibv_wc_status` code of QP `q`'s end state: its own error, else
    /// the first error of its workload index (which, for a server whose
    /// client failed, is the client's, beside the status `success`).
    pub fn qp_status_code(&self, q: u32) -> u8 {
        let s = &self.qps[q as usize];
        match s.live.state() {
            QpState::Error(e) => e.code(),
            QpState::Rts => {
                let w = &self.workloads[s.workload as usize].workload;
                w.stats(s.index as usize)
                    .first_error
                    .map_or(0, |e| e.code())
            }
        }
    }

    /// Whether a client QP has work left, or a flow has yet to start.
    pub fn work_left(&self) -> bool {
        self.pending.iter().any(|p| !p.started())
            || (0..self.qps.len() as u32).any(|q| {
                self.qps[q as usize].role == Role::Client && self.qp_status(q) == QpStatus::Running
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_are_the_summary_words() {
        assert_eq!(QpStatus::Running.name(), "running");
        assert_eq!(QpStatus::Success.name(), "success");
        assert_eq!(
            QpStatus::Error(WcStatus::RetryExcErr).name(),
            "retry_exceeded"
        );
        assert_eq!(
            serde_json::to_string(&QpStatus::Error(WcStatus::WrFlushErr)).unwrap(),
            "\"flushed\""
        );
        assert_eq!(serde_json::to_string(&Role::Server).unwrap(), "\"server\"");
    }
}
