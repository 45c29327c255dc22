//! The responder half: in-order acceptance, ACKs and NAKs, READ responses.
//!
//! Accepts the packet with the expected PSN (ePSN), NAKs the first gap of
//! an episode with ePSN, drops later out-of-order packets silently,
//! re-ACKs duplicates with ePSN - 1 and replays duplicate READs. Its
//! responses wait in one FIFO (ACKs, NAKs, READ response streams) that
//! [`RcQp::next_tx`] drains before any request. With
//! `QpConfig::coalesce_acks` (rxe), a positive ACK queued behind another
//! positive ACK replaces it: a cumulative ACK says everything the older
//! one said, so a NIC whose port is busy coalesces.

use super::{InboundMessage, RcQp};
use crate::time::Ps;
use crate::transport::Verb;
use roce_codec::{AethRepr, IbRepr, NakCode, Opcode, Psn, Syndrome};

/// One item of the responder's output FIFO.
#[derive(Debug, Clone, Copy)]
pub(super) enum Response {
    /// ACKNOWLEDGE with any syndrome (ACK, RNR NAK, NAK); `becn`: it
    /// echoes congestion (BTH BECN) of the packet it answers.
    Ack {
        psn: Psn,
        syndrome: Syndrome,
        msn: u32,
        becn: bool,
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
pub(super) enum InMessage {
    None,
    Send,
    Write,
}

impl RcQp {
    fn queue_ack(&mut self, psn: Psn, syndrome: Syndrome) {
        let mut item = Response::Ack {
            psn,
            syndrome,
            msn: self.msn,
            becn: self.echo_becn,
        };
        if syndrome.is_ack() && self.cfg.coalesce_acks {
            if let Some(back) = self.responses.back_mut() {
                if let Response::Ack {
                    syndrome: s,
                    becn: older,
                    ..
                } = *back
                {
                    if s.is_ack() {
                        // The newer ACK says all the older one said,
                        // its congestion echo too.
                        if let Response::Ack { becn, .. } = &mut item {
                            *becn |= older;
                        }
                        *back = item;
                        return;
                    }
                }
            }
        }
        self.responses.push_back(item);
    }

    pub(super) fn build_response(&mut self) -> IbRepr {
        let front = self.responses.front_mut().expect("caller checked");
        match *front {
            Response::Ack {
                psn,
                syndrome,
                msn,
                becn,
            } => {
                self.responses.pop_front();
                let mut ack = IbRepr::ack(self.dest_qpn, psn, syndrome, msn);
                ack.bth.becn = becn;
                ack
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
                let seg = u64::from(self.cfg.segment());
                let last = k + 1 == n;
                let payload = if last { len - u64::from(k) * seg } else { seg } as u32;
                let op = match (n == 1, k == 0, last) {
                    (true, _, _) => 0x10,
                    (_, true, _) => 0x0D,
                    (_, _, true) => 0x0F,
                    _ => 0x0E,
                };
                let mut pkt = IbRepr::new(Opcode(op), self.dest_qpn, next, payload);
                if pkt.ext.aeth().is_some() {
                    pkt.ext.set_aeth(Some(AethRepr {
                        syndrome: Syndrome::ACK_NO_CREDITS,
                        msn,
                    }));
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
        if self.in_msg == InMessage::Send {
            // The SEND under way took a receive WQE at its first packet:
            // that WQE completes in error.
            self.counters.resp_cqe_error += 1;
        }
    }

    pub(super) fn responder_receive(&mut self, pkt: &IbRepr, now: Ps) {
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
                self.replay_read(psn, pkt.ext.reth().map_or(0, |r| r.dma_len));
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
                // Not a sequence error: the packets behind it still earn
                // one sequence NAK (rxe's `sent_psn_nak` is set only by
                // an out-of-sequence PSN).
                self.queue_ack(psn, Syndrome::rnr_nak(self.cfg.min_rnr_timer));
                return;
            }
            self.rq_len -= 1;
            self.counters.recv_wqes_consumed += 1;
        }
        self.nak_sent = false;
        if op == 0x0C {
            let len = u64::from(pkt.ext.reth().map_or(0, |r| r.dma_len));
            self.epsn = psn.add(Psn::packets_for(len, self.cfg.segment()));
            self.msn = (self.msn + 1) & 0xFF_FFFF;
            self.counters.bytes_received += len;
            self.record(Verb::Read, len, psn, None, now);
            self.queue_read(psn, len);
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
            let imm = pkt.ext.immdt().map(|i| i.data);
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
        self.counters.read_replays += 1;
        self.queue_read(psn, u64::from(dma_len));
    }

    /// Queues the responses of a READ of `len` bytes whose first response
    /// is `psn`, carrying the current MSN.
    fn queue_read(&mut self, psn: Psn, len: u64) {
        let n = Psn::packets_for(len, self.cfg.segment());
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
