//! The responses of a flow: ACKs (round-trip times, what they
//! acknowledge), NAKs (sequence errors and RNR, the causes of the next
//! rewind; error NAKs) and READ responses.
//!
//! ```text
//!  request PSN p sent at t0 ──▶ outstanding [p, t0]
//!  ACK for p at t1          ──▶ RTT sample t1 - t0 (skipped if p was resent: Karn), everything ≤ p acknowledged
//!  NAK seq error for p      ──▶ cause of the next go-back-N episode; everything < p acknowledged
//! ```

use roce_codec::wire::aeth::{NakCode, SyndromeKind};
use roce_codec::{Operation, Psn};

use super::sequence::Cause;
use super::slaves::HashFields;
use super::{Flow, FlowOptions, FrameRef, MAX_OUTSTANDING, RoceEvent};

/// How late a NAK may be captured after the resend it caused.
pub(super) const NAK_AFTER_REWIND_NS: u64 = 10_000;

#[derive(Debug, Clone, Copy)]
pub(super) struct SentRequest {
    pub(super) psn: Psn,
    /// Its last transmission (the first, until it is resent).
    pub(super) ts: u64,
    pub(super) retransmitted: bool,
}

impl Flow {
    /// A response (ACK, NAK, READ response, atomic ACK) to this flow's requests.
    pub fn on_response(&mut self, ev: &RoceEvent, opts: &FlowOptions) {
        if self.is_mirror_duplicate(ev, opts.dup_window_ns, self.seq.retx_epoch) {
            // A responder re-ACKs every duplicate request with the same PSN
            // and MSN, which looks exactly like a mirror copy; only a
            // capture that also copied requests is taken to copy responses.
            if self.mirrored_requests > 0 {
                self.mirror_duplicates += 1;
                return;
            }
            self.repeated_responses += 1;
        }
        self.response_sport.get_or_insert(ev.sport);
        if self.response_fields.is_none() {
            self.response_fields = Some(HashFields::of(ev));
        }
        if !self.arrive(ev, false) {
            return;
        }
        let Some(op) = ev.opcode.operation() else {
            return;
        };
        let p = ev.psn;
        match op {
            Operation::Acknowledge | Operation::AtomicAcknowledge => {
                let Some(aeth) = ev.aeth else { return };
                match aeth.syndrome.kind() {
                    SyndromeKind::Ack { .. } => {
                        self.acks += 1;
                        if let Some(i) = self.find_outstanding(p) {
                            let s = self.outstanding[i];
                            if !s.retransmitted {
                                self.ack_rtt.add(ev.ts_ns.saturating_sub(s.ts));
                            }
                        }
                        self.ack_through(p, ev.ts_ns);
                        self.series_ack(ev, false);
                    }
                    SyndromeKind::RnrNak { .. } => {
                        self.count_nak(ev, aeth.syndrome.name());
                        let timer_us = aeth.syndrome.rnr_timer_us().unwrap_or(0);
                        *self.rnr_timers_us.entry(timer_us).or_insert(0) += 1;
                        if self.rnr_frames.len() < 16 {
                            self.rnr_frames.push(FrameRef::of(ev));
                        }
                        self.nak_cause(
                            ev,
                            Cause::RnrNak {
                                frame: FrameRef::of(ev),
                                timer_us,
                            },
                        );
                        self.ack_through(p.sub(1), ev.ts_ns);
                        self.replay_resends(ev, opts);
                    }
                    SyndromeKind::Nak(NakCode::PsnSequenceError) => {
                        self.count_nak(ev, aeth.syndrome.name());
                        self.nak_cause(
                            ev,
                            Cause::Nak {
                                frame: FrameRef::of(ev),
                                psn: p,
                            },
                        );
                        self.ack_through(p.sub(1), ev.ts_ns);
                        self.replay_resends(ev, opts);
                    }
                    SyndromeKind::Nak(_) | SyndromeKind::Reserved { .. } => {
                        let name = aeth.syndrome.name();
                        self.count_nak(ev, name);
                        if self.error_naks.len() < 16 {
                            self.error_naks.push((FrameRef::of(ev), name, p));
                        }
                    }
                }
            }
            Operation::RdmaReadResponseFirst
            | Operation::RdmaReadResponseMiddle
            | Operation::RdmaReadResponseLast
            | Operation::RdmaReadResponseOnly => {
                if matches!(
                    op,
                    Operation::RdmaReadResponseFirst | Operation::RdmaReadResponseMiddle
                ) && self.pmtu.is_none()
                    && ev.payload_len > 0
                {
                    self.pmtu = Some(ev.payload_len);
                }
                let new = self.read_response_max.is_none_or(|m| p.is_after(m));
                if new {
                    self.read_response_max = Some(p);
                    self.goodput_bytes += u64::from(ev.payload_len);
                    if let Some(s) = &mut self.series {
                        s.goodput.add(ev.ts_ns, f64::from(ev.payload_len));
                    }
                } else {
                    self.read_responses_replayed += 1;
                }
                self.ack_through(p.sub(1), ev.ts_ns);
                if op.ends_message() {
                    self.complete_read(p, ev.ts_ns);
                }
            }
            _ => {}
        }
    }

    /// A NAK that makes the requester go back: the cause of the next
    /// rewind, or of the one that just began at this PSN. The second case
    /// is a NAK time-stamped with or just after the resend it caused: the
    /// requester reacted within the same clock tick, or the two directions
    /// were captured on different slaves whose clocks differ a little.
    pub(super) fn nak_cause(&mut self, ev: &RoceEvent, cause: Cause) {
        self.seq.nak_epoch += 1;
        if let Some(e) = &mut self.seq.episode {
            if e.cause == Cause::Timeout
                && e.rewind_psn == ev.psn
                && ev.ts_ns.saturating_sub(e.ts_ns) <= NAK_AFTER_REWIND_NS
            {
                e.cause = cause;
                return;
            }
        }
        self.seq.pending_cause = Some(cause);
    }

    pub(super) fn series_ack(&mut self, ev: &RoceEvent, nak: bool) {
        if self.seq.started {
            let uw = self.unwrapped(ev.psn);
            if let Some(s) = &mut self.series {
                if nak {
                    s.naks.push(ev.ts_ns, uw);
                } else {
                    s.acks.push(ev.ts_ns, uw);
                }
            }
        }
    }

    pub(super) fn count_nak(&mut self, ev: &RoceEvent, name: &'static str) {
        *self.naks.entry(name).or_insert(0) += 1;
        if self.nak_frames.len() < 16 {
            self.nak_frames.push(FrameRef::of(ev));
        }
        self.series_ack(ev, true);
    }

    pub(super) fn push_outstanding(&mut self, s: SentRequest) {
        if self.outstanding.len() >= MAX_OUTSTANDING {
            self.outstanding.pop_front();
            self.untracked_psns += 1;
        }
        self.outstanding.push_back(s);
    }

    pub(super) fn find_outstanding(&self, psn: Psn) -> Option<usize> {
        let front = self.outstanding.front()?.psn;
        let d = psn.distance(front);
        if d < 0 {
            return None;
        }
        let i = self
            .outstanding
            .partition_point(|s| s.psn.distance(front) < d);
        (i < self.outstanding.len() && self.outstanding[i].psn == psn).then_some(i)
    }

    /// Everything up to and including `psn` is acknowledged at `ts`.
    pub(super) fn ack_through(&mut self, psn: Psn, ts: u64) {
        self.last_ack_through = Some(match self.last_ack_through {
            Some(a) if a.is_after(psn) => a,
            _ => psn,
        });
        while let Some(s) = self.outstanding.front() {
            if s.psn.distance(psn) > 0 {
                break;
            }
            self.outstanding.pop_front();
        }
        while let Some(&(last, start)) = self.unacked_messages.front() {
            if last.distance(psn) > 0 {
                break;
            }
            self.unacked_messages.pop_front();
            self.message_latency.add(ts.saturating_sub(start));
        }
    }
}
