//! Message assembly: FIRST/MIDDLE/LAST/ONLY packets into messages with
//! their kind, size and latency (first packet to the ACK that covers the
//! last; READ request to its last response).

use roce_codec::{Operation, Psn};

use super::{Flow, MAX_OUTSTANDING, RoceEvent};
use crate::analyze::model::{LoggedMessage, MESSAGE_LOG_MAX, MessageKind};

#[derive(Debug, Clone, Copy)]
pub(super) struct OpenMessage {
    pub(super) first: Psn,
    pub(super) ts: u64,
    pub(super) first_payload: u32,
    pub(super) dma_len: Option<u32>,
    pub(super) kind: MessageKind,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct PendingRead {
    pub(super) psn: Psn,
    pub(super) ts: u64,
    pub(super) dma_len: u32,
}

impl Flow {
    pub fn messages_total(&self) -> u64 {
        self.messages.values().sum()
    }

    pub(super) fn record_message(
        &mut self,
        kind: MessageKind,
        size: u64,
        start_ts: u64,
        last: Psn,
        acked: bool,
    ) {
        *self.messages.entry(kind).or_insert(0) += 1;
        self.message_size.add(size);
        self.message_bytes += size;
        self.log_message(kind, size, start_ts);
        if acked {
            if self.unacked_messages.len() >= MAX_OUTSTANDING {
                self.unacked_messages.pop_front();
            }
            self.unacked_messages.push_back((last, start_ts));
        }
    }

    /// Keeps the message for `infer` when the log is on and has room.
    fn log_message(&mut self, kind: MessageKind, size: u64, start_ns: u64) {
        if let Some(log) = &mut self.message_log {
            if log.messages.len() < MESSAGE_LOG_MAX {
                log.messages.push(LoggedMessage {
                    kind,
                    size,
                    start_ns,
                });
            } else {
                log.dropped += 1;
            }
        }
    }

    pub(super) fn is_new_message(&self, psn: Psn) -> bool {
        self.last_done.is_none_or(|d| psn.is_after(d))
    }

    /// Message reconstruction from FIRST/MIDDLE/LAST/ONLY. Sizes come from
    /// the RETH (WRITE) or from the PSN count and the FIRST packet's
    /// payload (SEND), so they are right even when packets were lost
    /// before the capture point.
    ///
    /// `first_sighting`: a resend that fills a PSN gap (the original was lost
    /// before the capture point); a single-packet message there is new.
    pub(super) fn assemble(
        &mut self,
        ev: &RoceEvent,
        op: Operation,
        reliable: bool,
        first_sighting: bool,
    ) {
        use Operation::*;
        let p = ev.psn;
        let kind = match op {
            SendFirst
            | SendMiddle
            | SendLast
            | SendLastWithImmediate
            | SendLastWithInvalidate
            | SendOnly
            | SendOnlyWithImmediate
            | SendOnlyWithInvalidate => MessageKind::Send,
            RdmaWriteFirst
            | RdmaWriteMiddle
            | RdmaWriteLast
            | RdmaWriteLastWithImmediate
            | RdmaWriteOnly
            | RdmaWriteOnlyWithImmediate => MessageKind::Write,
            RdmaReadRequest => MessageKind::Read,
            CompareSwap | FetchAdd | AtomicWrite => MessageKind::Atomic,
            _ => return,
        };
        if op == RdmaReadRequest {
            if self.is_new_message(p) && !self.reads.iter().any(|r| r.psn == p) {
                if self.reads.len() >= MAX_OUTSTANDING {
                    self.reads.pop_front();
                }
                self.reads.push_back(PendingRead {
                    psn: p,
                    ts: ev.ts_ns,
                    dma_len: ev.dma_len.unwrap_or(0),
                });
            }
            return;
        }
        let starts = op.starts_message();
        let ends = op.ends_message();
        if first_sighting && starts && ends && !self.is_new_message(p) {
            let size = if kind == MessageKind::Atomic && op != AtomicWrite {
                8
            } else {
                u64::from(ev.payload_len)
            };
            self.record_message(kind, size, ev.ts_ns, p, reliable);
            return;
        }
        if !self.is_new_message(p) {
            return;
        }
        match (starts, ends) {
            (true, true) => {
                let size = if kind == MessageKind::Atomic && op != AtomicWrite {
                    8
                } else {
                    u64::from(ev.payload_len)
                };
                self.record_message(kind, size, ev.ts_ns, p, reliable);
                self.last_done = Some(p);
                self.open = None;
            }
            (true, false) => {
                if self.open.is_some_and(|o| o.first == p) {
                    return;
                }
                self.open = Some(OpenMessage {
                    first: p,
                    ts: ev.ts_ns,
                    first_payload: ev.payload_len,
                    dma_len: ev.dma_len,
                    kind,
                });
            }
            (false, true) => {
                match self.open.take() {
                    Some(o) if p.distance(o.first) >= 0 => {
                        let size = match o.dma_len {
                            Some(d) if o.kind == MessageKind::Write => u64::from(d),
                            _ => {
                                p.distance(o.first) as u64 * u64::from(o.first_payload)
                                    + u64::from(ev.payload_len)
                            }
                        };
                        self.record_message(o.kind, size, o.ts, p, reliable);
                    }
                    _ => self.partial_messages += 1,
                }
                self.last_done = Some(p);
            }
            (false, false) => {}
        }
    }

    pub(super) fn complete_read(&mut self, last: Psn, ts: u64) {
        let mut done = None;
        while let Some(r) = self.reads.front() {
            if r.psn.is_after(last) {
                break;
            }
            done = self.reads.pop_front();
        }
        let Some(r) = done else { return };
        // The responses tell how many PSNs the READ took.
        if let Some((rp, _, _)) = self.seq.read_fuzz {
            if rp == r.psn {
                let n = (last.distance(r.psn) + 1) as u32;
                self.seq.read_fuzz = None;
                self.seq.next = r.psn.add(n);
                self.seq.unwrapped_max = self
                    .seq
                    .unwrapped_max
                    .max(self.unwrapped(r.psn) + i64::from(n) - 1);
            }
        }
        *self.messages.entry(MessageKind::Read).or_insert(0) += 1;
        self.message_size.add(u64::from(r.dma_len));
        self.message_bytes += u64::from(r.dma_len);
        self.log_message(MessageKind::Read, u64::from(r.dma_len), r.ts);
        self.message_latency.add(ts.saturating_sub(r.ts));
        self.ack_through(last, ts);
    }
}
