//! The RC queue pair: requester and responder halves of one end.
//!
//! ## Requester
//! Posted work requests wait in the send queue until they complete. Each
//! owns a PSN range fixed at post time: `Psn::packets_for(len, pmtu)` PSNs,
//! one per packet for SEND/WRITE, and the same number *reserved* for the
//! responses of a READ, which is sent as one request packet.
//!
//! ```text
//!  send queue:  [ WRITE 3 pkts ][ READ 4 PSNs ][ SEND 1 ][ WRITE 2 ] ...
//!  PSN:          100 101 102     103 .. 106     107       108 109
//!                 ▲                   ▲                    ▲
//!                una               tx cursor           next_psn (next post)
//!   una: oldest PSN not yet acknowledged (or READ response not yet seen)
//! ```
//! Go-back-N: a PSN-sequence-error NAK for `p` acknowledges everything
//! before `p` and moves the cursor back to `p`; an ACK timeout moves it back
//! to `una`. Packets are rebuilt from (WQE, packet index), so a resent
//! MIDDLE is a MIDDLE again, a resent FIRST carries its RETH again, and a
//! READ re-requests only the responses still missing.
//!
//! ## Responder
//! Accepts the packet with the expected PSN (ePSN), NAKs the first gap of
//! an episode with ePSN, drops later out-of-order packets silently,
//! re-ACKs duplicates with ePSN - 1 and replays duplicate READs. Its
//! responses wait in one FIFO (ACKs, NAKs, READ response streams) that
//! [`RcQp::next_tx`] drains before any request. A positive ACK queued
//! behind another positive ACK replaces it: a cumulative ACK says
//! everything the older one said, so a NIC whose port is busy coalesces.

use super::{
    Completion, ConfigError, MAX_MSG_LEN, PostError, QpConfig, QpCounters, QpState, Verb, WcStatus,
    WorkRequest,
};
use crate::time::{Ps, Rate};
use roce_codec::wire::aeth::rnr_timer_us;
use roce_codec::{AethRepr, IbRepr, NakCode, Opcode, Psn, RethRepr, Syndrome, SyndromeKind};
use std::collections::VecDeque;

/// Largest number of PSNs one message may occupy: a quarter of the PSN
/// comparison window, so that ranges never become ambiguous.
const MAX_MSG_PSNS: u64 = 1 << 21;

/// The largest message [`RcQp::post_send`] accepts at path MTU `pmtu`:
/// [`MAX_MSG_LEN`], or less when the message would span more than 2^21
/// PSNs (at MTU 256, 512 MiB).
pub fn max_message_len(pmtu: u32) -> u64 {
    MAX_MSG_LEN.min(MAX_MSG_PSNS * u64::from(pmtu))
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

#[derive(Debug, Clone, Copy)]
struct SendWqe {
    wr_id: u64,
    verb: Verb,
    len: u64,
    first_psn: Psn,
    /// PSNs the message occupies (READ: responses reserved).
    npkts: u32,
}

impl SendWqe {
    fn end_psn(&self) -> Psn {
        self.first_psn.add(self.npkts)
    }
}

/// One item of the responder's output FIFO.
#[derive(Debug, Clone, Copy)]
enum Response {
    /// ACKNOWLEDGE with any syndrome (ACK, RNR NAK, NAK).
    Ack {
        psn: Psn,
        syndrome: Syndrome,
        msn: u32,
    },
    /// An RDMA READ response stream: packets `next..stop` of a READ whose
    /// responses are numbered from `first` (`n` packets, `len` bytes).
    Read {
        first: Psn,
        n: u32,
        len: u64,
        next: Psn,
        stop: Psn,
        /// MSN once this READ executed, carried by its AETHs.
        msn: u32,
    },
}

/// What the responder is in the middle of, for the opcode sequence check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InMessage {
    None,
    Send,
    Write,
}

/// Why the requester rewinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RetryCause {
    SequenceNak,
    Timeout,
    ReadGap,
    AckPastRead,
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
        })
    }

    /// Queues a send work request (bounded by `max_send_wr`). On an Error
    /// QP the request is accepted and completes at once with
    /// `WrFlushErr`, as verbs do.
    pub fn post_send(&mut self, wr: WorkRequest) -> Result<(), PostError> {
        let max = max_message_len(self.cfg.pmtu);
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
            self.cq.push_back(Completion {
                wr_id: wr.wr_id,
                verb: wr.verb,
                status: WcStatus::WrFlushErr,
                bytes: 0,
                at: self.error_at,
            });
            return Ok(());
        }
        let npkts = Psn::packets_for(wr.len, self.cfg.pmtu);
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
            let pkt = self.build_response();
            self.counters.on_tx(&pkt);
            if paced {
                self.pace(&pkt, now);
            }
            if self.fatal_after_responses && self.responses.is_empty() {
                self.fail(WcStatus::WrFlushErr, now);
            }
            return Some(pkt);
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

    /// Paces this QP's data packets (requests and READ responses; ACKs and
    /// NAKs are never held back) to `rate` on the wire, counting
    /// `cfg.wire_overhead` bytes per packet. `None` = line rate. This is
    /// the reaction point DCQCN adjusts.
    pub fn set_rate_limit(&mut self, rate: Option<Rate>) {
        self.rate = rate.filter(|r| r.bps() > 0);
        if self.rate.is_none() {
            self.next_send_at = Ps::ZERO;
        }
    }

    pub fn rate_limit(&self) -> Option<Rate> {
        self.rate
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

    /// The responder's message sequence number (messages completed).
    pub fn msn(&self) -> u32 {
        self.msn
    }

    // ----- requester ---------------------------------------------------

    /// PSNs sent in the current pass and not yet acknowledged.
    fn outstanding(&self) -> bool {
        self.tx_psn.is_after(self.una)
    }

    fn requester_can_send(&self) -> bool {
        if self.rnr_deadline.is_some() {
            return false;
        }
        let Some(wqe) = self.sq.get(self.tx_wqe) else {
            return false;
        };
        // rxe: stop while req.psn > comp.psn + RXE_MAX_UNACKED_PSNS.
        if self.tx_psn.distance(self.una) > self.cfg.max_unacked_psns as i32 {
            return false;
        }
        !(wqe.verb == Verb::Read && self.reads_in_flight >= u32::from(self.cfg.max_rd_atomic))
    }

    fn pace(&mut self, pkt: &IbRepr, now: Ps) {
        if let Some(rate) = self.rate {
            let bytes = pkt.buffer_len() as u64 + u64::from(self.cfg.wire_overhead);
            self.next_send_at = now.max(self.next_send_at) + rate.tx_time(bytes);
        }
    }

    /// Builds the request packet at the cursor and advances the cursor.
    fn build_request(&mut self) -> IbRepr {
        let wqe = self.sq[self.tx_wqe];
        let psn = self.tx_psn;
        let k = psn.distance(wqe.first_psn) as u32;
        let pmtu = u64::from(self.cfg.pmtu);
        let done = u64::from(k) * pmtu;
        let retransmit = psn.is_before(self.tx_hi);
        let pkt = if wqe.verb == Verb::Read {
            // One request for the responses still missing: PSN of the first
            // missing response, the rest of the buffer.
            self.tx_wqe += 1;
            self.tx_psn = wqe.end_psn();
            self.reads_in_flight += 1;
            self.noack_pkts = 0;
            IbRepr::new(Opcode(0x0C), self.dest_qpn, psn, 0)
                .with_reth(RethRepr {
                    va: self.cfg.remote_va + done,
                    rkey: self.cfg.rkey,
                    dma_len: (wqe.len - done) as u32,
                })
                .with_ack_req(true)
        } else {
            let n = wqe.npkts;
            let last = k + 1 == n;
            let payload = if last { wqe.len - done } else { pmtu } as u32;
            let send = matches!(wqe.verb, Verb::Send | Verb::SendImm);
            let imm = wqe.verb.has_immediate();
            let op = match (n == 1, k == 0, last) {
                (true, _, _) => match wqe.verb {
                    Verb::Send => 0x04,
                    Verb::SendImm => 0x05,
                    Verb::Write => 0x0A,
                    _ => 0x0B,
                },
                (_, true, _) => {
                    if send {
                        0x00
                    } else {
                        0x06
                    }
                }
                (_, _, true) => match wqe.verb {
                    Verb::Send => 0x02,
                    Verb::SendImm => 0x03,
                    Verb::Write => 0x08,
                    _ => 0x09,
                },
                _ => {
                    if send {
                        0x01
                    } else {
                        0x07
                    }
                }
            };
            let mut pkt = IbRepr::new(Opcode(op), self.dest_qpn, psn, payload);
            if pkt.ext.reth.is_some() {
                pkt.ext.reth = Some(RethRepr {
                    va: self.cfg.remote_va,
                    rkey: self.cfg.rkey,
                    dma_len: wqe.len as u32,
                });
            }
            if imm && last {
                pkt = pkt.with_immdt(wqe.wr_id as u32);
            }
            let ack_req = if last {
                true
            } else {
                self.cfg.ack_req_every != 0 && self.noack_pkts + 1 >= self.cfg.ack_req_every
            };
            if ack_req {
                self.noack_pkts = 0;
            } else {
                self.noack_pkts += 1;
            }
            self.tx_psn = psn.next();
            if last {
                self.tx_wqe += 1;
            }
            pkt.with_ack_req(ack_req)
        };
        if self.tx_psn.is_after(self.tx_hi) {
            self.tx_hi = self.tx_psn;
        }
        if retransmit {
            self.counters.retransmitted_packets += 1;
            self.counters.retransmitted_bytes += pkt.buffer_len() as u64;
            self.counters.retransmitted_payload_bytes += u64::from(pkt.payload_len);
        }
        pkt
    }

    /// Go-back-N: the cursor returns to the oldest unacknowledged PSN.
    fn rewind(&mut self) {
        self.tx_wqe = 0;
        self.tx_psn = self.una;
        self.reads_in_flight = 0;
        self.ack_deadline = None;
    }

    /// One retry round (timeout, sequence NAK, READ gap), or
    /// RETRY_EXC_ERR when `retry_cnt` rounds were already spent.
    fn retry(&mut self, cause: RetryCause, now: Ps) {
        if self.retry_started && cause != RetryCause::Timeout {
            self.counters.stale_responses_rx += 1;
            return;
        }
        if self.retry_left == 0 {
            self.fail(WcStatus::RetryExcErr, now);
            return;
        }
        self.retry_left -= 1;
        let r = &mut self.counters.rewinds;
        match cause {
            RetryCause::SequenceNak => r.psn_sequence_error += 1,
            RetryCause::Timeout => r.timeout += 1,
            RetryCause::ReadGap => r.read_response_gap += 1,
            RetryCause::AckPastRead => r.ack_past_read += 1,
        }
        self.retry_started = true;
        self.rewind();
    }

    /// Completes the oldest WQE.
    fn complete_front(&mut self, now: Ps) {
        let Some(wqe) = self.sq.pop_front() else {
            return;
        };
        if wqe.verb == Verb::Read {
            self.reads_in_flight = self.reads_in_flight.saturating_sub(1);
        }
        if self.tx_wqe > 0 {
            self.tx_wqe -= 1;
        }
        self.counters.msgs_completed += 1;
        self.counters.bytes_completed += wqe.len;
        self.cq.push_back(Completion {
            wr_id: wqe.wr_id,
            verb: wqe.verb,
            status: WcStatus::Success,
            bytes: wqe.len,
            at: now,
        });
    }

    /// Acknowledges every PSN before `upto`, completing WRITE/SEND WQEs.
    /// Stops at an incomplete READ: only its responses complete it.
    /// Returns whether `upto` reaches past such a READ's missing
    /// responses (the responder is done with it, so they were lost).
    fn ack_before(&mut self, upto: Psn, now: Ps) -> bool {
        let mut progress = false;
        let mut past_read = false;
        while upto.is_after(self.una) {
            let Some(front) = self.sq.front().copied() else {
                break;
            };
            if front.verb == Verb::Read {
                past_read = true;
                break;
            }
            let end = front.end_psn();
            progress = true;
            if upto.distance(end) >= 0 {
                self.una = end;
                self.complete_front(now);
            } else {
                self.una = upto;
            }
        }
        if progress {
            self.on_progress(now);
        }
        past_read
    }

    fn on_progress(&mut self, now: Ps) {
        self.retry_started = false;
        self.retry_left = self.cfg.retry_cnt;
        self.rnr_left = self.cfg.rnr_retry;
        if self.una.is_after(self.tx_psn) || self.sq.is_empty() {
            // Acknowledged beyond the cursor (packets sent before a rewind
            // arrived after all): skip resending them.
            self.tx_wqe = 0;
            self.tx_psn = self.una;
        }
        self.ack_deadline = if self.outstanding() {
            self.cfg.ack_timeout().map(|t| now + t)
        } else {
            None
        };
    }

    /// Whether `psn` is a PSN this requester has sent (in `una-1 ..
    /// tx_hi`): ACKs and NAKs outside it are stale or bogus.
    fn response_in_range(&self, psn: Psn, lowest: Psn) -> bool {
        psn.distance(lowest) >= 0 && psn.is_before(self.tx_hi)
    }

    fn ack_receive(&mut self, pkt: &IbRepr, now: Ps) {
        let Some(aeth) = pkt.ext.aeth else {
            return;
        };
        let psn = pkt.bth.psn;
        match aeth.syndrome.kind() {
            SyndromeKind::Ack { .. } => {
                if !self.response_in_range(psn, self.una) {
                    self.counters.stale_responses_rx += 1;
                    return;
                }
                if self.ack_before(psn.next(), now) {
                    self.retry(RetryCause::AckPastRead, now);
                }
            }
            SyndromeKind::RnrNak { timer_code } => {
                if !self.response_in_range(psn, self.una) {
                    self.counters.stale_responses_rx += 1;
                    return;
                }
                if self.ack_before(psn, now) {
                    self.retry(RetryCause::AckPastRead, now);
                    return;
                }
                if self.rnr_left == 0 {
                    self.fail(WcStatus::RnrRetryExcErr, now);
                    return;
                }
                if self.cfg.rnr_retry != 7 {
                    self.rnr_left -= 1;
                }
                // Nothing goes out until the wait ends; then go-back-N from
                // the NAKed PSN (now `una`).
                self.ack_deadline = None;
                self.rnr_deadline = Some(now + Ps::from_us(u64::from(rnr_timer_us(timer_code))));
            }
            SyndromeKind::Nak(NakCode::PsnSequenceError) => {
                if !self.response_in_range(psn, self.una) {
                    self.counters.stale_responses_rx += 1;
                    return;
                }
                self.ack_before(psn, now);
                self.retry(RetryCause::SequenceNak, now);
            }
            SyndromeKind::Nak(code) => {
                if !self.response_in_range(psn, self.una) {
                    self.counters.stale_responses_rx += 1;
                    return;
                }
                self.ack_before(psn, now);
                let status = match code.wc_status() {
                    Some(9) => WcStatus::RemInvReqErr,
                    Some(10) => WcStatus::RemAccessErr,
                    _ => WcStatus::RemOpErr,
                };
                self.fail(status, now);
            }
            SyndromeKind::Reserved { .. } => {
                self.counters.stale_responses_rx += 1;
            }
        }
    }

    fn read_response_receive(&mut self, pkt: &IbRepr, now: Ps) {
        let psn = pkt.bth.psn;
        if !self.response_in_range(psn, self.una) {
            self.counters.stale_responses_rx += 1;
            return;
        }
        // A response for a later PSN implicitly acknowledges the requests
        // before it.
        self.ack_before(psn, now);
        // Accepted even if a rewind has since moved the cursor back onto
        // this READ: the responder did execute it.
        let front_is_read = self.sq.front().is_some_and(|w| w.verb == Verb::Read);
        if psn == self.una && front_is_read {
            self.una = psn.next();
            let front = self.sq[0];
            if self.una == front.end_psn() {
                self.complete_front(now);
            }
            self.on_progress(now);
        } else if psn.is_after(self.una) {
            self.retry(RetryCause::ReadGap, now);
        } else {
            self.counters.stale_responses_rx += 1;
        }
    }

    /// Moves the QP to Error: the oldest WQE completes with `status`, every
    /// other one flushes, nothing more is sent or accepted.
    fn fail(&mut self, status: WcStatus, now: Ps) {
        self.state = QpState::Error(status);
        self.error_at = now;
        let mut first = true;
        while let Some(wqe) = self.sq.pop_front() {
            let st = if first { status } else { WcStatus::WrFlushErr };
            first = false;
            self.counters.msgs_failed += 1;
            self.cq.push_back(Completion {
                wr_id: wqe.wr_id,
                verb: wqe.verb,
                status: st,
                bytes: 0,
                at: now,
            });
        }
        self.tx_wqe = 0;
        self.ack_deadline = None;
        self.rnr_deadline = None;
        self.responses.clear();
        self.rq_len = 0;
    }

    // ----- responder ---------------------------------------------------

    fn queue_ack(&mut self, psn: Psn, syndrome: Syndrome) {
        let item = Response::Ack {
            psn,
            syndrome,
            msn: self.msn,
        };
        if syndrome.is_ack() {
            if let Some(back) = self.responses.back_mut() {
                if matches!(back, Response::Ack { syndrome: s, .. } if s.is_ack()) {
                    *back = item;
                    return;
                }
            }
        }
        self.responses.push_back(item);
    }

    fn build_response(&mut self) -> IbRepr {
        let front = self.responses.front_mut().expect("caller checked");
        match *front {
            Response::Ack { psn, syndrome, msn } => {
                self.responses.pop_front();
                IbRepr::ack(self.dest_qpn, psn, syndrome, msn)
            }
            Response::Read {
                first,
                n,
                len,
                next,
                stop,
                msn,
            } => {
                let k = next.distance(first) as u32;
                let pmtu = u64::from(self.cfg.pmtu);
                let last = k + 1 == n;
                let payload = if last {
                    len - u64::from(k) * pmtu
                } else {
                    pmtu
                } as u32;
                let op = match (n == 1, k == 0, last) {
                    (true, _, _) => 0x10,
                    (_, true, _) => 0x0D,
                    (_, _, true) => 0x0F,
                    _ => 0x0E,
                };
                let mut pkt = IbRepr::new(Opcode(op), self.dest_qpn, next, payload);
                if pkt.ext.aeth.is_some() {
                    pkt.ext.aeth = Some(AethRepr {
                        syndrome: Syndrome::ACK_NO_CREDITS,
                        msn,
                    });
                }
                let next = next.next();
                if next == stop {
                    self.responses.pop_front();
                } else if let Response::Read { next: n, .. } = front {
                    *n = next;
                }
                pkt
            }
        }
    }

    fn record(&mut self, verb: Verb, len: u64, first_psn: Psn, imm: Option<u32>, now: Ps) {
        self.counters.msgs_received += 1;
        if self.record_inbound {
            self.inbound.push_back(InboundMessage {
                verb,
                len,
                first_psn,
                imm,
                msn: self.msn,
                at: now,
            });
        }
    }

    fn nak_invalid(&mut self, psn: Psn) {
        self.queue_ack(psn, Syndrome::nak(NakCode::InvalidRequest));
        self.fatal_after_responses = true;
    }

    fn responder_receive(&mut self, pkt: &IbRepr, now: Ps) {
        if self.fatal_after_responses {
            return;
        }
        let psn = pkt.bth.psn;
        let d = psn.distance(self.epsn);
        if d > 0 {
            self.counters.out_of_sequence_rx += 1;
            if !self.nak_sent {
                self.nak_sent = true;
                self.queue_ack(self.epsn, Syndrome::NAK_PSN_SEQUENCE_ERROR);
            }
            return;
        }
        let op = pkt.bth.opcode.0;
        if d < 0 {
            self.counters.duplicate_requests_rx += 1;
            if op == 0x0C {
                self.replay_read(psn, pkt.ext.reth.map_or(0, |r| r.dma_len));
            } else {
                self.queue_ack(self.epsn.sub(1), Syndrome::ACK_NO_CREDITS);
            }
            return;
        }
        // In sequence.
        let starts = matches!(op, 0x00 | 0x04 | 0x05 | 0x06 | 0x0A | 0x0B | 0x0C);
        let ends = matches!(op, 0x02..=0x05 | 0x08..=0x0C);
        let kind = if op <= 0x05 {
            InMessage::Send
        } else {
            InMessage::Write
        };
        let seq_ok = if starts {
            self.in_msg == InMessage::None
        } else {
            self.in_msg == kind
        };
        if !seq_ok {
            self.nak_invalid(psn);
            return;
        }
        // Receive WQE: SEND takes it at its first packet, WRITE with
        // immediate at its last.
        let needs_wqe = matches!(op, 0x00 | 0x04 | 0x05 | 0x09 | 0x0B);
        if needs_wqe {
            if self.rq_len == 0 {
                self.nak_sent = true;
                self.queue_ack(psn, Syndrome::rnr_nak(self.cfg.min_rnr_timer));
                return;
            }
            self.rq_len -= 1;
            self.counters.recv_wqes_consumed += 1;
        }
        self.nak_sent = false;
        if op == 0x0C {
            let len = u64::from(pkt.ext.reth.map_or(0, |r| r.dma_len));
            let n = Psn::packets_for(len, self.cfg.pmtu);
            self.epsn = psn.add(n);
            self.msn = (self.msn + 1) & 0xFF_FFFF;
            self.counters.bytes_received += len;
            self.record(Verb::Read, len, psn, None, now);
            self.responses.push_back(Response::Read {
                first: psn,
                n,
                len,
                next: psn,
                stop: psn.add(n),
                msn: self.msn,
            });
            return;
        }
        self.epsn = psn.next();
        let payload = u64::from(pkt.payload_len);
        self.counters.bytes_received += payload;
        if starts {
            self.msg_first = psn;
            self.msg_len = 0;
            self.in_msg = kind;
        }
        self.msg_len += payload;
        if ends {
            self.in_msg = InMessage::None;
            self.msn = (self.msn + 1) & 0xFF_FFFF;
            let verb = match op {
                0x02 | 0x04 => Verb::Send,
                0x03 | 0x05 => Verb::SendImm,
                0x08 | 0x0A => Verb::Write,
                _ => Verb::WriteImm,
            };
            let imm = pkt.ext.immdt.map(|i| i.data);
            self.record(verb, self.msg_len, self.msg_first, imm, now);
        }
        if pkt.bth.ack_req {
            self.queue_ack(psn, Syndrome::ACK_NO_CREDITS);
        }
    }

    /// A duplicate READ request for `psn`: the requester lost responses
    /// from `psn` on. Everything queued from `psn` on is superseded (the
    /// requester will resend what follows too), and the READ is executed
    /// again from `psn`.
    fn replay_read(&mut self, psn: Psn, dma_len: u32) {
        self.responses.retain_mut(|r| match r {
            Response::Ack { psn: p, .. } => p.is_before(psn),
            Response::Read { next, stop, .. } => {
                if next.distance(psn) >= 0 {
                    false
                } else {
                    if stop.is_after(psn) {
                        *stop = psn;
                    }
                    true
                }
            }
        });
        let len = u64::from(dma_len);
        let n = Psn::packets_for(len, self.cfg.pmtu);
        self.counters.read_replays += 1;
        self.responses.push_back(Response::Read {
            first: psn,
            n,
            len,
            next: psn,
            stop: psn.add(n),
            msn: self.msn,
        });
    }
}
