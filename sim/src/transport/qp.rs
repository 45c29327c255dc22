//! The RC queue pair: requester and responder halves of one end.

use super::{Completion, ConfigError, PostError, QpConfig, QpCounters, QpState, Verb, WorkRequest};
use crate::time::{Ps, Rate};
use roce_codec::{IbRepr, Psn};

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
    counters: QpCounters,
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
        let _ = (sq_psn, rq_psn);
        Ok(RcQp {
            qpn,
            dest_qpn,
            cfg,
            counters: QpCounters::default(),
        })
    }

    /// Queues a send work request (bounded by `max_send_wr`). On an Error
    /// QP the request is accepted and completes at once with
    /// `WrFlushErr`, as verbs do.
    pub fn post_send(&mut self, wr: WorkRequest) -> Result<(), PostError> {
        let _ = wr;
        Ok(())
    }

    /// Adds `count` receive WQEs, consumed by incoming SEND and
    /// WRITE-with-immediate messages.
    pub fn post_recv(&mut self, count: u32) {
        let _ = count;
    }

    /// The next packet this QP wants on the wire now: responses first, then
    /// request packets (retransmissions and new data share the go-back-N
    /// cursor), or `None`.
    pub fn next_tx(&mut self, now: Ps) -> Option<IbRepr> {
        let _ = now;
        None
    }

    /// Earliest time at which `next_tx` could return `Some` without new
    /// input; later than `now` only while the rate limiter holds the QP
    /// back. `None` if nothing can go until a packet arrives, a timer fires
    /// or a work request is posted.
    pub fn tx_ready_at(&self, now: Ps) -> Option<Ps> {
        let _ = now;
        None
    }

    /// A packet whose BTH DestQP is this QP arrived. `ecn_ce`: the IP ECN
    /// field was CE.
    pub fn on_receive(&mut self, pkt: &IbRepr, ecn_ce: bool, now: Ps) {
        let _ = (pkt, ecn_ce, now);
    }

    /// The earliest pending deadline: ACK timeout or end of an RNR wait.
    pub fn next_timer(&self) -> Option<Ps> {
        None
    }

    /// Handles every deadline at or before `now`; a no-op otherwise.
    pub fn on_timer(&mut self, now: Ps) {
        let _ = now;
    }

    pub fn poll_completion(&mut self) -> Option<Completion> {
        None
    }

    /// Messages the responder executed, when recording is on.
    pub fn poll_inbound(&mut self) -> Option<InboundMessage> {
        None
    }

    /// Records every message the responder executes for
    /// [`RcQp::poll_inbound`] (off by default: tests and traces use it).
    pub fn set_record_inbound(&mut self, on: bool) {
        let _ = on;
    }

    /// Paces this QP's data packets (requests and READ responses; ACKs and
    /// NAKs are never held back) to `rate` on the wire, counting
    /// `cfg.wire_overhead` bytes per packet. `None` = line rate. This is
    /// the reaction point DCQCN adjusts.
    pub fn set_rate_limit(&mut self, rate: Option<Rate>) {
        let _ = rate;
    }

    pub fn rate_limit(&self) -> Option<Rate> {
        None
    }

    pub fn counters(&self) -> &QpCounters {
        &self.counters
    }

    pub fn state(&self) -> QpState {
        QpState::Rts
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
        0
    }

    /// Receive WQEs posted and not yet consumed.
    pub fn rq_len(&self) -> u32 {
        0
    }

    /// Time of the last packet received with ECN CE, for the notification
    /// point that turns marks into CNPs.
    pub fn last_ce_mark(&self) -> Option<Ps> {
        None
    }

    /// Time of the last CNP received.
    pub fn last_cnp(&self) -> Option<Ps> {
        None
    }
}
