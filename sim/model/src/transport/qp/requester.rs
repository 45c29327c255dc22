//! The requester half: send queue, PSNs, go-back-N, completions.
//!
//! Posted work requests wait in the send queue until they complete. Each
//! owns a PSN range fixed at post time: `Psn::packets_for(len, segment)` PSNs
//! (the segment is the path MTU unless the NIC profile says otherwise),
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

use super::RcQp;
use crate::time::Ps;
use crate::transport::{Completion, QpState, Verb, WcStatus};
use roce_codec::wire::aeth::rnr_timer_us;
use roce_codec::{IbRepr, NakCode, Opcode, Psn, RethRepr, SyndromeKind};

#[derive(Debug, Clone, Copy)]
pub(super) struct SendWqe {
    pub(super) wr_id: u64,
    pub(super) verb: Verb,
    pub(super) len: u64,
    pub(super) first_psn: Psn,
    /// PSNs the message occupies (READ: responses reserved).
    pub(super) npkts: u32,
}

impl SendWqe {
    pub(super) fn end_psn(&self) -> Psn {
        self.first_psn.add(self.npkts)
    }
}

/// Why the requester rewinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RetryCause {
    SequenceNak,
    Timeout,
    ReadGap,
    AckPastRead,
}

impl RcQp {
    /// PSNs sent in the current pass and not yet acknowledged.
    pub(super) fn outstanding(&self) -> bool {
        self.tx_psn.is_after(self.una)
    }

    pub(super) fn requester_can_send(&self) -> bool {
        if self.rnr_deadline.is_some() {
            return false;
        }
        let Some(wqe) = self.sq.get(self.tx_wqe) else {
            return false;
        };
        // rxe: stop while req.psn > comp.psn + RXE_MAX_UNACKED_PSNS.
        let in_flight = self.tx_psn.distance(self.una);
        if in_flight > self.cfg.max_unacked_psns as i32
            || i64::from(in_flight) >= i64::from(self.inflight_cap)
        {
            return false;
        }
        !(wqe.verb == Verb::Read && self.reads_in_flight >= u32::from(self.cfg.max_rd_atomic))
    }

    /// Builds the request packet at the cursor and advances the cursor.
    pub(super) fn build_request(&mut self) -> IbRepr {
        let wqe = self.sq[self.tx_wqe];
        let psn = self.tx_psn;
        let k = psn.distance(wqe.first_psn) as u32;
        let seg = u64::from(self.cfg.segment());
        let done = u64::from(k) * seg;
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
            let payload = if last { wqe.len - done } else { seg } as u32;
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
            if pkt.ext.reth().is_some() {
                pkt.ext.set_reth(Some(RethRepr {
                    va: self.cfg.remote_va,
                    rkey: self.cfg.rkey,
                    dma_len: wqe.len as u32,
                }));
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
    pub(super) fn rewind(&mut self) {
        self.tx_wqe = 0;
        self.tx_psn = self.una;
        self.reads_in_flight = 0;
        self.ack_deadline = None;
    }

    /// One retry round (timeout, sequence NAK, READ gap), or
    /// RETRY_EXC_ERR when `retry_cnt` rounds were already spent.
    pub(super) fn retry(&mut self, cause: RetryCause, now: Ps) {
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

    pub(super) fn ack_receive(&mut self, pkt: &IbRepr, now: Ps) {
        let Some(aeth) = pkt.ext.aeth() else {
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
                if self.rnr_deadline.is_some() && psn == self.una {
                    // The responder's sequence NAK for the packets behind
                    // an RNR NAK: the go-back-N it asks for is the one the
                    // RNR wait ends with, not a retry of its own.
                    return;
                }
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

    pub(super) fn read_response_receive(&mut self, pkt: &IbRepr, now: Ps) {
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
    pub(super) fn fail(&mut self, status: WcStatus, now: Ps) {
        self.state = QpState::Error(status);
        self.error_at = now;
        let mut first = true;
        while let Some(wqe) = self.sq.pop_front() {
            let st = if first { status } else { WcStatus::WrFlushErr };
            first = false;
            self.counters.msgs_failed += 1;
            if st == WcStatus::WrFlushErr {
                self.counters.req_cqe_flush_error += 1;
            } else {
                self.counters.req_cqe_error += 1;
            }
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
        // Posted receive WQEs complete in error (flushed) too.
        self.counters.resp_cqe_flush_error += u64::from(self.rq_len);
        self.rq_len = 0;
    }
}
