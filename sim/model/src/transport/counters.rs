//! Per-QP counters: what summary.json reports per QP and what the analyzer
//! recomputes from the captures.
//!
//! Byte counts named `bytes` are IB bytes, BTH through ICRC
//! ([`IbRepr::buffer_len`]): the part of a packet the QP itself builds. The
//! network side adds its own headers (Ethernet, IP, UDP) where it reports
//! frame bytes. `payload_bytes` count message payload only (no pad).

use roce_codec::{IbRepr, Opcode, Syndrome, SyndromeKind};
use serde::Serialize;

/// Packets and IB bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TxRx {
    pub packets: u64,
    pub bytes: u64,
}

impl TxRx {
    fn add(&mut self, bytes: u64) {
        self.packets += 1;
        self.bytes += bytes;
    }
}

/// The class of an RC packet, from its opcode (and, for ACKNOWLEDGE, its
/// AETH syndrome).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PacketClass {
    Send,
    Write,
    ReadRequest,
    ReadResponse,
    /// ACKNOWLEDGE with a positive syndrome.
    Ack,
    /// ACKNOWLEDGE with an RNR NAK or NAK syndrome.
    Nak,
    Cnp,
    Other,
}

impl PacketClass {
    pub fn of(pkt: &IbRepr) -> PacketClass {
        match pkt.bth.opcode {
            Opcode(0x00..=0x05) => PacketClass::Send,
            Opcode(0x06..=0x0B) => PacketClass::Write,
            Opcode(0x0C) => PacketClass::ReadRequest,
            Opcode(0x0D..=0x10) => PacketClass::ReadResponse,
            Opcode(0x11) => match pkt.ext.aeth.map(|a| a.syndrome.kind()) {
                Some(SyndromeKind::Ack { .. }) => PacketClass::Ack,
                Some(SyndromeKind::RnrNak { .. } | SyndromeKind::Nak(_)) => PacketClass::Nak,
                _ => PacketClass::Other,
            },
            Opcode::CNP => PacketClass::Cnp,
            _ => PacketClass::Other,
        }
    }
}

/// Packets and bytes per [`PacketClass`], one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ClassCounts {
    pub send: TxRx,
    pub write: TxRx,
    pub read_request: TxRx,
    pub read_response: TxRx,
    pub ack: TxRx,
    pub nak: TxRx,
    pub cnp: TxRx,
    pub other: TxRx,
}

impl ClassCounts {
    pub fn get(&self, class: PacketClass) -> TxRx {
        match class {
            PacketClass::Send => self.send,
            PacketClass::Write => self.write,
            PacketClass::ReadRequest => self.read_request,
            PacketClass::ReadResponse => self.read_response,
            PacketClass::Ack => self.ack,
            PacketClass::Nak => self.nak,
            PacketClass::Cnp => self.cnp,
            PacketClass::Other => self.other,
        }
    }

    fn add(&mut self, class: PacketClass, bytes: u64) {
        let slot = match class {
            PacketClass::Send => &mut self.send,
            PacketClass::Write => &mut self.write,
            PacketClass::ReadRequest => &mut self.read_request,
            PacketClass::ReadResponse => &mut self.read_response,
            PacketClass::Ack => &mut self.ack,
            PacketClass::Nak => &mut self.nak,
            PacketClass::Cnp => &mut self.cnp,
            PacketClass::Other => &mut self.other,
        };
        slot.add(bytes);
    }
}

/// NAKs by AETH syndrome; the field names are [`Syndrome::name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NakCounts {
    pub rnr_nak: u64,
    pub psn_sequence_error: u64,
    pub invalid_request: u64,
    pub remote_access_error: u64,
    pub remote_operational_error: u64,
    pub invalid_rd_request: u64,
    pub nak_unknown: u64,
}

impl NakCounts {
    /// Counts `syndrome` if it is a NAK of any kind; returns whether it was.
    pub fn bump(&mut self, syndrome: Syndrome) -> bool {
        let slot = match syndrome.name() {
            "rnr_nak" => &mut self.rnr_nak,
            "psn_sequence_error" => &mut self.psn_sequence_error,
            "invalid_request" => &mut self.invalid_request,
            "remote_access_error" => &mut self.remote_access_error,
            "remote_operational_error" => &mut self.remote_operational_error,
            "invalid_rd_request" => &mut self.invalid_rd_request,
            "nak_unknown" => &mut self.nak_unknown,
            _ => return false,
        };
        *slot += 1;
        true
    }

    pub fn total(&self) -> u64 {
        self.rnr_nak
            + self.psn_sequence_error
            + self.invalid_request
            + self.remote_access_error
            + self.remote_operational_error
            + self.invalid_rd_request
            + self.nak_unknown
    }
}

/// Go-back-N episodes (the requester rewinding its send cursor) by cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct RewindCounts {
    /// A PSN-sequence-error NAK.
    pub psn_sequence_error: u64,
    /// The local ACK timer expired.
    pub timeout: u64,
    /// The RNR wait after an RNR NAK ended.
    pub rnr: u64,
    /// RDMA READ responses arrived with a gap: re-request from the gap.
    pub read_response_gap: u64,
    /// An ACK acknowledged PSNs past a READ whose responses never came.
    pub ack_past_read: u64,
}

impl RewindCounts {
    pub fn total(&self) -> u64 {
        self.psn_sequence_error
            + self.timeout
            + self.rnr
            + self.read_response_gap
            + self.ack_past_read
    }
}

/// Everything one QP counts, requester and responder halves together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct QpCounters {
    /// Packets sent by this QP (requests and responses).
    pub tx_packets: u64,
    /// IB bytes sent (BTH through ICRC).
    pub tx_bytes: u64,
    /// Payload bytes sent, retransmissions included.
    pub tx_payload_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub rx_payload_bytes: u64,
    /// Sent, per class.
    pub tx: ClassCounts,
    /// Received, per class.
    pub rx: ClassCounts,
    /// Request packets (and READ re-requests) sent again: any request
    /// packet whose PSN had been sent before.
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    pub retransmitted_payload_bytes: u64,
    /// Local ACK timer expiries.
    pub timeouts: u64,
    pub rewinds: RewindCounts,
    /// NAKs received (RNR NAKs included), total and by syndrome.
    pub naks_rx: u64,
    pub naks_rx_by_syndrome: NakCounts,
    /// NAKs sent by the responder, total and by syndrome.
    pub naks_tx: u64,
    pub naks_tx_by_syndrome: NakCounts,
    /// Positive ACK packets received / sent.
    pub acks_rx: u64,
    pub acks_tx: u64,
    /// ACKs, NAKs and READ responses the requester ignored as stale.
    pub stale_responses_rx: u64,
    /// Requests at or before ePSN - 1 (duplicates) the responder saw.
    pub duplicate_requests_rx: u64,
    /// Requests after ePSN the responder dropped (the first of an episode
    /// is NAKed, the rest are silent).
    pub out_of_sequence_rx: u64,
    /// Duplicate READ requests the responder re-executed.
    pub read_replays: u64,
    /// Packets received with IP ECN = CE.
    pub ce_marks_rx: u64,
    /// CNPs received (opcode 0x81).
    pub cnps_rx: u64,
    /// Work requests completed successfully, and their payload bytes.
    pub msgs_completed: u64,
    pub bytes_completed: u64,
    /// Work requests completed with an error status (flushes included).
    pub msgs_failed: u64,
    /// Messages the responder executed in order (SEND, WRITE, READ), and
    /// the payload bytes it accepted (READ: bytes it was asked to return).
    pub msgs_received: u64,
    pub bytes_received: u64,
    /// Receive WQEs consumed by SEND / WRITE-with-immediate messages.
    pub recv_wqes_consumed: u64,
    /// Send completions with an error status other than a flush (mlx5
    /// `req_cqe_error`), and flushed ones (`req_cqe_flush_error`).
    pub req_cqe_error: u64,
    pub req_cqe_flush_error: u64,
    /// Receive completions in error: a SEND cut short by a fatal NAK
    /// (`resp_cqe_error`), receive WQEs flushed when the QP went to Error
    /// (`resp_cqe_flush_error`).
    pub resp_cqe_error: u64,
    pub resp_cqe_flush_error: u64,
}

impl QpCounters {
    pub(crate) fn on_tx(&mut self, pkt: &IbRepr) {
        let bytes = pkt.buffer_len() as u64;
        self.tx_packets += 1;
        self.tx_bytes += bytes;
        self.tx_payload_bytes += u64::from(pkt.payload_len);
        let class = PacketClass::of(pkt);
        self.tx.add(class, bytes);
        if class == PacketClass::Nak {
            let nak = pkt
                .ext
                .aeth
                .is_some_and(|a| self.naks_tx_by_syndrome.bump(a.syndrome));
            self.naks_tx += u64::from(nak);
        }
        if class == PacketClass::Ack {
            self.acks_tx += 1;
        }
    }

    pub(crate) fn on_rx(&mut self, pkt: &IbRepr) {
        let bytes = pkt.buffer_len() as u64;
        self.rx_packets += 1;
        self.rx_bytes += bytes;
        self.rx_payload_bytes += u64::from(pkt.payload_len);
        let class = PacketClass::of(pkt);
        self.rx.add(class, bytes);
        if class == PacketClass::Nak {
            let nak = pkt
                .ext
                .aeth
                .is_some_and(|a| self.naks_rx_by_syndrome.bump(a.syndrome));
            self.naks_rx += u64::from(nak);
        }
        match class {
            PacketClass::Ack => self.acks_rx += 1,
            PacketClass::Cnp => self.cnps_rx += 1,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roce_codec::{NakCode, Psn};

    #[test]
    fn nak_counts_use_syndrome_names() {
        let mut n = NakCounts::default();
        assert!(n.bump(Syndrome::rnr_nak(12)));
        assert!(n.bump(Syndrome::NAK_PSN_SEQUENCE_ERROR));
        assert!(n.bump(Syndrome::nak(NakCode::RemoteAccessError)));
        assert!(!n.bump(Syndrome::ACK_NO_CREDITS));
        assert_eq!(
            (n.rnr_nak, n.psn_sequence_error, n.remote_access_error),
            (1, 1, 1)
        );
        assert_eq!(n.total(), 3);
        let json = serde_json::to_value(n).unwrap();
        for name in ["rnr_nak", "psn_sequence_error", "remote_access_error"] {
            assert_eq!(json[name], 1, "{name}");
        }
    }

    #[test]
    fn classes_follow_opcodes_and_syndromes() {
        let ack = IbRepr::ack(1, Psn::new(0), Syndrome::ACK_NO_CREDITS, 0);
        let nak = IbRepr::ack(1, Psn::new(0), Syndrome::rnr_nak(1), 0);
        assert_eq!(PacketClass::of(&ack), PacketClass::Ack);
        assert_eq!(PacketClass::of(&nak), PacketClass::Nak);
        assert_eq!(PacketClass::of(&IbRepr::cnp(5)), PacketClass::Cnp);
        let w = IbRepr::new(Opcode(0x07), 1, Psn::new(0), 4096);
        assert_eq!(PacketClass::of(&w), PacketClass::Write);
        let mut c = QpCounters::default();
        c.on_tx(&w);
        c.on_rx(&nak);
        assert_eq!(
            c.tx.write,
            TxRx {
                packets: 1,
                bytes: 12 + 4096 + 4
            }
        );
        assert_eq!((c.naks_rx, c.naks_rx_by_syndrome.rnr_nak), (1, 1));
        assert_eq!(c.rx.nak.bytes, 12 + 4 + 4);
    }
}
