//! The RC queue pair: requester and responder halves of one end.
//!
//! ```text
//!               ┌─────────────────────────── RcQp ───────────────────────────┐
//!  post_send ──▶│ requester.rs: send queue, PSNs, go-back-N, ACK timer, CQ   │
//!  on_receive ─▶│   ACKs, NAKs, READ responses ──▶ requester                 │
//!               │   requests ──▶ responder.rs: ePSN, ACK/NAK, READ responses │
//!  next_tx ◀────│ responses first, then requests, paced (this file)          │
//!               └────────────────────────────────────────────────────────────┘
//! ```
//!
//! This file holds the QP's state and the calls the network side makes;
//! [`requester`] and [`responder`] hold the two halves' protocol rules.

mod requester;
mod responder;

use super::{
    Completion, ConfigError, MAX_MSG_LEN, PostError, QpConfig, QpCounters, QpState, Verb, WcStatus,
    WorkRequest,
};
use crate::time::{Ps, Rate};
use roce_codec::{IbRepr, Opcode, Psn};
use std::collections::VecDeque;

use requester::{RetryCause, SendWqe};
use responder::{InMessage, Response};

/// Largest number of PSNs one message may occupy: a quarter of the PSN
/// comparison window, so that ranges never become ambiguous.
const MAX_MSG_PSNS: u64 = 1 << 21;

/// The largest message [`RcQp::post_send`] accepts with `segment` payload
/// bytes per packet (the path MTU, [`QpConfig::segment`]): [`MAX_MSG_LEN`],
/// or less when the message would span more than 2^21 PSNs (at MTU 256,
/// 512 MiB).
pub fn max_message_len(segment: u32) -> u64 {
    MAX_MSG_LEN.min(MAX_MSG_PSNS * u64::from(segment))
}

/// A message the responder executed, in order (see
/// [`RcQp::set_record_inbound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboundMessage {
    pub verb: Verb,
    /// Payload bytes (READ: bytes requested).
    pub len: u64,
    /// PSN of the message's first packet.
    pub first_psn: Psn,
    /// Immediate data, for the verbs that carry it.
    pub imm: Option<u32>,
    /// MSN after this message.
    pub msn: u32,
    pub at: Ps,
}

/// One RC QP: requester and responder halves of one end of a connection.
#[derive(Debug, Clone)]
pub struct RcQp {
    qpn: u32,
    dest_qpn: u32,
    cfg: QpConfig,
    state: QpState,
    counters: QpCounters,

    // Requester.
    /// Packets in flight at most (a byte window in packets, see
    /// [`RcQp::set_inflight_cap`]); `u32::MAX`: none.
    inflight_cap: u32,
    sq: VecDeque<SendWqe>,
    /// First PSN of the next posted WQE.
    next_psn: Psn,
    /// Oldest PSN not yet acknowledged.
    una: Psn,
    /// Send cursor: WQE index in `sq` and the PSN to send next.
    tx_wqe: usize,
    tx_psn: Psn,
    /// One past the highest PSN ever sent: anything before it is a resend.
    tx_hi: Psn,
    /// READ requests sent whose responses are not complete.
    reads_in_flight: u32,
    /// Consecutive non-last request packets sent without AckReq.
    noack_pkts: u32,
    retry_left: u8,
    rnr_left: u8,
    ack_deadline: Option<Ps>,
    rnr_deadline: Option<Ps>,
    /// A retry round started by a NAK, a READ response gap or an ACK past
    /// a READ is under way: until something makes progress, further such
    /// triggers (responses to packets sent before the rewind) start no
    /// new round; only the ACK timer does (rxe `comp.started_retry`).
    retry_started: bool,
    cq: VecDeque<Completion>,
    /// When the QP entered Error (time of later flush completions).
    error_at: Ps,
    rate: Option<Rate>,
    next_send_at: Ps,
    /// Wire bytes of the last paced packet: what [`RcQp::change_rate`]
    /// re-times the waiting slot by.
    last_paced_bytes: u64,

    // Responder.
    epsn: Psn,
    msn: u32,
    nak_sent: bool,
    rq_len: u32,
    in_msg: InMessage,
    msg_first: Psn,
    msg_len: u64,
    responses: VecDeque<Response>,
    /// A class-C NAK was queued: the QP goes to Error once it is sent.
    fatal_after_responses: bool,
    record_inbound: bool,
    inbound: VecDeque<InboundMessage>,
    last_ce: Option<Ps>,
    last_cnp: Option<Ps>,
    /// The packet being received asks its ACK or NAK to echo congestion
    /// ([`RcQp::on_receive_echoing`]).
    echo_becn: bool,
}

impl RcQp {
    /// A QP in RTS. `sq_psn` is the first PSN this QP sends, `rq_psn` the
    /// first it expects (the peer's `sq_psn`).
    ///
    /// # Panics
    /// If `cfg` fails [`QpConfig::validate`]; use [`RcQp::try_new`] on
    /// unchecked input.
    pub fn new(qpn: u32, dest_qpn: u32, sq_psn: Psn, rq_psn: Psn, cfg: QpConfig) -> RcQp {
        match RcQp::try_new(qpn, dest_qpn, sq_psn, rq_psn, cfg) {
            Ok(qp) => qp,
            Err(e) => panic!("invalid QpConfig: {e}"),
        }
    }

    pub fn try_new(
        qpn: u32,
        dest_qpn: u32,
        sq_psn: Psn,
        rq_psn: Psn,
        cfg: QpConfig,
    ) -> Result<RcQp, ConfigError> {
        cfg.validate()?;
        Ok(RcQp {
            qpn,
            dest_qpn,
            cfg,
            state: QpState::Rts,
            counters: QpCounters::default(),
            inflight_cap: u32::MAX,
            sq: VecDeque::with_capacity(cfg.max_send_wr.min(4096) as usize),
            next_psn: sq_psn,
            una: sq_psn,
            tx_wqe: 0,
            tx_psn: sq_psn,
            tx_hi: sq_psn,
            reads_in_flight: 0,
            noack_pkts: 0,
            retry_left: cfg.retry_cnt,
            rnr_left: cfg.rnr_retry,
            ack_deadline: None,
            rnr_deadline: None,
            retry_started: false,
            cq: VecDeque::new(),
            error_at: Ps::ZERO,
            rate: None,
            next_send_at: Ps::ZERO,
            last_paced_bytes: 0,
            epsn: rq_psn,
            msn: 0,
            nak_sent: false,
            rq_len: 0,
            in_msg: InMessage::None,
            msg_first: rq_psn,
            msg_len: 0,
            responses: VecDeque::new(),
            fatal_after_responses: false,
            record_inbound: false,
            inbound: VecDeque::new(),
            last_ce: None,
            last_cnp: None,
            echo_becn: false,
        })
    }

    /// Queues a send work request (bounded by `max_send_wr`). On an Error
    /// QP the request is accepted and completes at once with
    /// `WrFlushErr`, as verbs do.
    pub fn post_send(&mut self, wr: WorkRequest) -> Result<(), PostError> {
        let max = max_message_len(self.cfg.segment());
        if wr.len > max {
            return Err(PostError::MessageTooLong { len: wr.len, max });
        }
        if self.sq.len() >= self.cfg.max_send_wr as usize {
            return Err(PostError::QueueFull {
                depth: self.cfg.max_send_wr,
            });
        }
        if let QpState::Error(_) = self.state {
            self.counters.msgs_failed += 1;
            self.counters.req_cqe_flush_error += 1;
            self.cq.push_back(Completion {
                wr_id: wr.wr_id,
                verb: wr.verb,
                status: WcStatus::WrFlushErr,
                bytes: 0,
                at: self.error_at,
            });
            return Ok(());
        }
        let npkts = Psn::packets_for(wr.len, self.cfg.segment());
        self.sq.push_back(SendWqe {
            wr_id: wr.wr_id,
            verb: wr.verb,
            len: wr.len,
            first_psn: self.next_psn,
            npkts,
        });
        self.next_psn = self.next_psn.add(npkts);
        Ok(())
    }

    /// Adds `count` receive WQEs, consumed by incoming SEND and
    /// WRITE-with-immediate messages.
    pub fn post_recv(&mut self, count: u32) {
        if self.state == QpState::Rts {
            self.rq_len = self.rq_len.saturating_add(count);
        }
    }

    /// The next packet this QP wants on the wire now: responses first, then
    /// request packets (retransmissions and new data share the go-back-N
    /// cursor), or `None`.
    pub fn next_tx(&mut self, now: Ps) -> Option<IbRepr> {
        if self.state != QpState::Rts {
            return None;
        }
        if let Some(front) = self.responses.front() {
            let paced = matches!(front, Response::Read { .. });
            if paced && now < self.next_send_at {
                return None;
            }
            return Some(self.emit_response(paced, now));
        }
        if !self.requester_can_send() || now < self.next_send_at {
            return None;
        }
        let pkt = self.build_request();
        self.counters.on_tx(&pkt);
        self.pace(&pkt, now);
        if self.ack_deadline.is_none() {
            self.ack_deadline = self.cfg.ack_timeout().map(|t| now + t);
        }
        Some(pkt)
    }

    /// The ACKNOWLEDGE (ACK, NAK or RNR NAK) at the head of the responses,
    /// if one is there: for a NIC that sends its ACKs at a priority of
    /// their own rather than in the QP's turn. Responses keep their order:
    /// an ACK queued behind READ responses waits for them.
    pub fn next_ack(&mut self, now: Ps) -> Option<IbRepr> {
        if self.state != QpState::Rts
            || !matches!(self.responses.front(), Some(Response::Ack { .. }))
        {
            return None;
        }
        Some(self.emit_response(false, now))
    }

    /// Builds the response at the head of the queue and counts it.
    fn emit_response(&mut self, paced: bool, now: Ps) -> IbRepr {
        let pkt = self.build_response();
        self.counters.on_tx(&pkt);
        if paced {
            self.pace(&pkt, now);
        }
        if self.fatal_after_responses && self.responses.is_empty() {
            self.fail(WcStatus::WrFlushErr, now);
        }
        pkt
    }

    /// Earliest time at which `next_tx` could return `Some` without new
    /// input; later than `now` only while the rate limiter holds the QP
    /// back. `None` if nothing can go until a packet arrives, a timer fires
    /// or a work request is posted.
    pub fn tx_ready_at(&self, now: Ps) -> Option<Ps> {
        if self.state != QpState::Rts {
            return None;
        }
        let paced = now.max(self.next_send_at);
        match self.responses.front() {
            Some(Response::Ack { .. }) => Some(now),
            Some(Response::Read { .. }) => Some(paced),
            None => self.requester_can_send().then_some(paced),
        }
    }

    /// A packet whose BTH DestQP is this QP arrived. `ecn_ce`: the IP ECN
    /// field was CE.
    pub fn on_receive(&mut self, pkt: &IbRepr, ecn_ce: bool, now: Ps) {
        self.on_receive_echoing(pkt, ecn_ce, false, now);
    }

    /// As [`RcQp::on_receive`]; with `becn`, the ACK or NAK this packet
    /// makes the responder queue carries BTH BECN: the congestion echo of
    /// a NIC that notifies the sender on its ACK rather than with a CNP
    /// of its own (the HPCC reference's CNP flag, `qbbHeader::SetCnp`).
    /// A packet that makes no ACK (one dropped out of order) echoes nothing,
    /// as the reference's flag is lost with the ACK it does not send.
    pub fn on_receive_echoing(&mut self, pkt: &IbRepr, ecn_ce: bool, becn: bool, now: Ps) {
        self.echo_becn = becn;
        self.receive(pkt, ecn_ce, now);
        self.echo_becn = false;
    }

    fn receive(&mut self, pkt: &IbRepr, ecn_ce: bool, now: Ps) {
        self.counters.on_rx(pkt);
        if ecn_ce {
            self.counters.ce_marks_rx += 1;
            self.last_ce = Some(now);
        }
        if pkt.bth.opcode == Opcode::CNP {
            self.last_cnp = Some(now);
            return;
        }
        if self.state != QpState::Rts {
            return;
        }
        match pkt.bth.opcode.0 {
            0x00..=0x0C => self.responder_receive(pkt, now),
            0x0D..=0x10 => self.read_response_receive(pkt, now),
            0x11 => self.ack_receive(pkt, now),
            _ => {}
        }
    }

    /// The earliest pending deadline: ACK timeout or end of an RNR wait.
    pub fn next_timer(&self) -> Option<Ps> {
        match (self.ack_deadline, self.rnr_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Handles every deadline at or before `now`; a no-op otherwise.
    pub fn on_timer(&mut self, now: Ps) {
        if self.state != QpState::Rts {
            return;
        }
        if self.rnr_deadline.is_some_and(|d| d <= now) {
            self.rnr_deadline = None;
            self.counters.rewinds.rnr += 1;
            self.rewind();
        }
        if self.ack_deadline.is_some_and(|d| d <= now) {
            self.ack_deadline = None;
            if self.outstanding() {
                self.counters.timeouts += 1;
                self.retry(RetryCause::Timeout, now);
            }
        }
    }

    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.cq.pop_front()
    }

    /// Messages the responder executed, when recording is on.
    pub fn poll_inbound(&mut self) -> Option<InboundMessage> {
        self.inbound.pop_front()
    }

    /// Records every message the responder executes for
    /// [`RcQp::poll_inbound`] (off by default: tests and traces use it).
    pub fn set_record_inbound(&mut self, on: bool) {
        self.record_inbound = on;
        if !on {
            self.inbound.clear();
        }
    }

    /// Caps the requester's packets in flight (sent, not acknowledged)
    /// at `packets`, at least 1; `None` lifts the cap. Beside the
    /// unacknowledged-PSN window, for a NIC whose window is bytes in
    /// flight (the HPCC reference's `HAS_WIN`): it may be changed at any
    /// time, a smaller cap only stopping new packets.
    pub fn set_inflight_cap(&mut self, packets: Option<u32>) {
        self.inflight_cap = packets.map_or(u32::MAX, |p| p.max(1));
    }

    /// The cap on packets in flight ([`RcQp::set_inflight_cap`]).
    pub fn inflight_cap(&self) -> Option<u32> {
        (self.inflight_cap != u32::MAX).then_some(self.inflight_cap)
    }

    /// Paces this QP's data packets (requests and READ responses; ACKs and
    /// NAKs are never held back) to `rate` on the wire, counting
    /// `cfg.wire_overhead` bytes per packet. `None` = line rate. This is
    /// the reaction point DCQCN adjusts (see [`RcQp::change_rate`]).
    pub fn set_rate_limit(&mut self, rate: Option<Rate>) {
        self.rate = rate.filter(|r| r.bps() > 0);
        if self.rate.is_none() {
            self.next_send_at = Ps::ZERO;
        }
    }

    /// A rate limiter's new rate. With `retime`, the packet already waiting
    /// for its slot (given when the previous packet left at the old rate)
    /// has that slot moved by the difference of the previous packet's
    /// serialization times at the new and the old rate ([`crate::cc::retime`],
    /// the HPCC reference's `ChangeRate`), so a cut holds it back at once
    /// and an increase lets it go sooner; without, the slot stays and the
    /// new rate applies from the next packet on. Returns the new earliest
    /// send time if it moved.
    pub fn change_rate(&mut self, rate: Option<Rate>, retime: bool) -> Option<Ps> {
        let old = self.rate;
        let before = self.next_send_at;
        self.set_rate_limit(rate);
        if let (true, Some(old), Some(new)) = (retime, old, self.rate) {
            if self.last_paced_bytes > 0 {
                let step = self.cfg.tx_time_step_ps;
                self.next_send_at =
                    crate::cc::retime(self.next_send_at, self.last_paced_bytes, old, new, step);
            }
        }
        (self.next_send_at != before).then_some(self.next_send_at)
    }

    pub fn rate_limit(&self) -> Option<Rate> {
        self.rate
    }

    /// Gives back the memory of the queues that are empty (a finished
    /// QP's): what it does next is unchanged, an empty queue grows again.
    pub fn release_buffers(&mut self) {
        fn drop_empty<T>(q: &mut VecDeque<T>) {
            if q.is_empty() && q.capacity() > 0 {
                *q = VecDeque::new();
            }
        }
        drop_empty(&mut self.sq);
        drop_empty(&mut self.cq);
        drop_empty(&mut self.responses);
        drop_empty(&mut self.inbound);
    }

    pub fn counters(&self) -> &QpCounters {
        &self.counters
    }

    pub fn state(&self) -> QpState {
        self.state
    }

    pub fn qpn(&self) -> u32 {
        self.qpn
    }

    pub fn dest_qpn(&self) -> u32 {
        self.dest_qpn
    }

    pub fn config(&self) -> &QpConfig {
        &self.cfg
    }

    /// Send work requests posted and not yet completed.
    pub fn sq_outstanding(&self) -> u32 {
        self.sq.len() as u32
    }

    /// Receive WQEs posted and not yet consumed.
    pub fn rq_len(&self) -> u32 {
        self.rq_len
    }

    /// Time of the last packet received with ECN CE, for the notification
    /// point that turns marks into CNPs.
    pub fn last_ce_mark(&self) -> Option<Ps> {
        self.last_ce
    }

    /// Time of the last CNP received.
    pub fn last_cnp(&self) -> Option<Ps> {
        self.last_cnp
    }

    /// The responder's expected PSN.
    pub fn expected_psn(&self) -> Psn {
        self.epsn
    }

    /// The requester's oldest unacknowledged PSN.
    pub fn oldest_unacked_psn(&self) -> Psn {
        self.una
    }

    /// The PSN of the requester's next packet to send: past the highest
    /// sent, or back at a rewind's first (the reference's `snd_nxt`).
    pub fn next_send_psn(&self) -> Psn {
        self.tx_psn
    }

    /// The responder's message sequence number (messages completed).
    pub fn msn(&self) -> u32 {
        self.msn
    }

    // ----- requester ---------------------------------------------------

    fn pace(&mut self, pkt: &IbRepr, now: Ps) {
        if let Some(rate) = self.rate {
            let bytes = match self.cfg.billed_header_bytes {
                0 => pkt.buffer_len() as u64 + u64::from(self.cfg.wire_overhead),
                h => u64::from(pkt.payload_len) + u64::from(h),
            };
            let gap = rate.tx_time(bytes).floor_to(self.cfg.tx_time_step_ps);
            self.next_send_at = now.max(self.next_send_at) + gap;
            self.last_paced_bytes = bytes;
        }
    }
}
