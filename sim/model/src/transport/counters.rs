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
            Opcode(0x11) => match pkt.ext.aeth().map(|a| a.syndrome.kind()) {
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
                .aeth()
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
                .aeth()
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

/// Every counter of [`QpCounters`], one reference each, in one fixed
/// order: what [`PackedCounters`] packs and unpacks by.
fn fields(c: &mut QpCounters) -> [&mut u64; 81] {
    let [tx, rx] = [&mut c.tx, &mut c.rx];
    let [ns_rx, ns_tx] = [&mut c.naks_rx_by_syndrome, &mut c.naks_tx_by_syndrome];
    let rw = &mut c.rewinds;
    [
        &mut c.tx_packets,
        &mut c.tx_bytes,
        &mut c.tx_payload_bytes,
        &mut c.rx_packets,
        &mut c.rx_bytes,
        &mut c.rx_payload_bytes,
        &mut tx.send.packets,
        &mut tx.send.bytes,
        &mut tx.write.packets,
        &mut tx.write.bytes,
        &mut tx.read_request.packets,
        &mut tx.read_request.bytes,
        &mut tx.read_response.packets,
        &mut tx.read_response.bytes,
        &mut tx.ack.packets,
        &mut tx.ack.bytes,
        &mut tx.nak.packets,
        &mut tx.nak.bytes,
        &mut tx.cnp.packets,
        &mut tx.cnp.bytes,
        &mut tx.other.packets,
        &mut tx.other.bytes,
        &mut rx.send.packets,
        &mut rx.send.bytes,
        &mut rx.write.packets,
        &mut rx.write.bytes,
        &mut rx.read_request.packets,
        &mut rx.read_request.bytes,
        &mut rx.read_response.packets,
        &mut rx.read_response.bytes,
        &mut rx.ack.packets,
        &mut rx.ack.bytes,
        &mut rx.nak.packets,
        &mut rx.nak.bytes,
        &mut rx.cnp.packets,
        &mut rx.cnp.bytes,
        &mut rx.other.packets,
        &mut rx.other.bytes,
        &mut c.retransmitted_packets,
        &mut c.retransmitted_bytes,
        &mut c.retransmitted_payload_bytes,
        &mut c.timeouts,
        &mut rw.psn_sequence_error,
        &mut rw.timeout,
        &mut rw.rnr,
        &mut rw.read_response_gap,
        &mut rw.ack_past_read,
        &mut c.naks_rx,
        &mut ns_rx.rnr_nak,
        &mut ns_rx.psn_sequence_error,
        &mut ns_rx.invalid_request,
        &mut ns_rx.remote_access_error,
        &mut ns_rx.remote_operational_error,
        &mut ns_rx.invalid_rd_request,
        &mut ns_rx.nak_unknown,
        &mut c.naks_tx,
        &mut ns_tx.rnr_nak,
        &mut ns_tx.psn_sequence_error,
        &mut ns_tx.invalid_request,
        &mut ns_tx.remote_access_error,
        &mut ns_tx.remote_operational_error,
        &mut ns_tx.invalid_rd_request,
        &mut ns_tx.nak_unknown,
        &mut c.acks_rx,
        &mut c.acks_tx,
        &mut c.stale_responses_rx,
        &mut c.duplicate_requests_rx,
        &mut c.out_of_sequence_rx,
        &mut c.read_replays,
        &mut c.ce_marks_rx,
        &mut c.cnps_rx,
        &mut c.msgs_completed,
        &mut c.bytes_completed,
        &mut c.msgs_failed,
        &mut c.msgs_received,
        &mut c.bytes_received,
        &mut c.recv_wqes_consumed,
        &mut c.req_cqe_error,
        &mut c.req_cqe_flush_error,
        &mut c.resp_cqe_error,
        &mut c.resp_cqe_flush_error,
    ]
}

/// The counters of a QP that has finished, kept exactly in a fraction of
/// their size: a short flow's QP counts in a score of its 81 counters, and
/// a fabric run keeps two QPs per flow to the end. Each counter that is not
/// zero is one LEB128 varint (most take 1 to 3 bytes, not 8); after them
/// come up to [`PackedCounters::EXTRA`] optional numbers of the QP's
/// congestion control, each kept when `Some`, zero included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedCounters {
    /// Bit `i` set: counter `i` (in [`fields`]' order) is not zero; bit
    /// `81 + j`: extra number `j` is present.
    present: u128,
    /// The present values, in that order, as varints.
    bytes: Box<[u8]>,
}

const COUNTERS: usize = 81;

impl PackedCounters {
    /// How many extra numbers fit beside the counters.
    pub const EXTRA: usize = 128 - COUNTERS;

    pub fn pack(c: &QpCounters) -> PackedCounters {
        PackedCounters::pack_with(c, &[])
    }

    /// Packs `c` and the `extra` numbers (at most [`Self::EXTRA`]).
    pub fn pack_with(c: &QpCounters, extra: &[Option<u64>]) -> PackedCounters {
        assert!(extra.len() <= Self::EXTRA, "too many extra numbers");
        let mut c = *c;
        let mut present = 0u128;
        let mut bytes = Vec::new();
        let values = fields(&mut c).map(|v| Some(*v).filter(|&v| v != 0));
        for (i, v) in values.iter().chain(extra).enumerate() {
            if let Some(v) = *v {
                present |= 1 << i;
                put_varint(&mut bytes, v);
            }
        }
        PackedCounters {
            present,
            bytes: bytes.into_boxed_slice(),
        }
    }

    /// The present values, by index (counters, then extras).
    fn values(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        let mut rest = &self.bytes[..];
        (0..128)
            .filter(|&i| self.present & 1 << i != 0)
            .map(move |i| (i, take_varint(&mut rest)))
    }

    pub fn unpack(&self) -> QpCounters {
        let mut c = QpCounters::default();
        let mut values = self.values().take_while(|&(i, _)| i < COUNTERS);
        for (i, f) in fields(&mut c).into_iter().enumerate() {
            if self.present & 1 << i != 0 {
                *f = values.next().map_or(0, |(_, v)| v);
            }
        }
        c
    }

    /// Extra number `j`, as packed.
    pub fn extra(&self, j: usize) -> Option<u64> {
        self.values()
            .find(|&(i, _)| i == COUNTERS + j)
            .map(|(_, v)| v)
    }
}

/// Appends `v` as an unsigned LEB128 varint: seven bits a byte, low first,
/// the high bit set on every byte but the last.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads one varint [`put_varint`] wrote from the front of `bytes`.
fn take_varint(bytes: &mut &[u8]) -> u64 {
    let mut v = 0u64;
    for (n, &b) in bytes.iter().enumerate() {
        v |= u64::from(b & 0x7f) << (7 * n);
        if b & 0x80 == 0 {
            *bytes = &bytes[n + 1..];
            return v;
        }
    }
    unreachable!("a varint ends in its own buffer")
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

    /// Counter `i` of [`fields`] set to `i + 1`: the JSON of the counters
    /// (serde's own walk of every field) holds 1 to 81 once each, so no
    /// counter is left out of the packing or named twice.
    #[test]
    fn packing_covers_every_counter_once() {
        let mut c = QpCounters::default();
        for (i, f) in fields(&mut c).into_iter().enumerate() {
            *f = i as u64 + 1;
        }
        fn leaves(v: &serde_json::Value, out: &mut Vec<u64>) {
            match v {
                serde_json::Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
                serde_json::Value::Number(n) => out.push(n.as_u64().unwrap()),
                other => panic!("not a counter: {other}"),
            }
        }
        let mut seen = Vec::new();
        leaves(&serde_json::to_value(c).unwrap(), &mut seen);
        seen.sort_unstable();
        assert_eq!(seen, (1..=81).collect::<Vec<u64>>());
        assert_eq!(PackedCounters::pack(&c).unpack(), c);
    }

    #[test]
    fn packing_keeps_only_what_is_not_zero() {
        let mut c = QpCounters::default();
        c.rx.ack.bytes = 7;
        c.resp_cqe_flush_error = u64::MAX;
        c.tx_packets = 3;
        let p = PackedCounters::pack(&c);
        // 3, then 7, then 2^64 - 1 in ten bytes of seven bits, low first.
        let mut max = vec![0xff; 9];
        max.push(0x01);
        assert_eq!(&*p.bytes, &[&[3, 7][..], &max].concat()[..]);
        assert_eq!(p.unpack(), c);
        assert_eq!(
            PackedCounters::pack(&QpCounters::default()).unpack(),
            QpCounters::default()
        );
    }

    /// Varints on their boundaries (hand-computed: 127 is one byte 0x7f,
    /// 128 two bytes 0x80 0x01, 300 0xac 0x02), and extras kept when
    /// `Some`, zero included, apart from the counters.
    #[test]
    fn varints_and_extras() {
        let mut b = Vec::new();
        for v in [0, 127, 128, 300] {
            put_varint(&mut b, v);
        }
        assert_eq!(b, [0x00, 0x7f, 0x80, 0x01, 0xac, 0x02]);
        let c = QpCounters {
            timeouts: 300,
            ..QpCounters::default()
        };
        let p = PackedCounters::pack_with(&c, &[None, Some(0), Some(1 << 40)]);
        assert_eq!(p.unpack(), c);
        assert_eq!(
            (p.extra(0), p.extra(1), p.extra(2), p.extra(3)),
            (None, Some(0), Some(1 << 40), None)
        );
    }

    proptest::proptest! {
        /// Whatever the counters and extras, unpacking gives them back.
        #[test]
        fn packing_round_trips(
            v in proptest::collection::vec(proptest::prelude::any::<u64>(), 81),
            zeros in proptest::collection::vec(proptest::prelude::any::<bool>(), 81),
            extra in proptest::collection::vec(proptest::option::of(proptest::prelude::any::<u64>()), 0..=47),
        ) {
            let mut c = QpCounters::default();
            for ((f, v), z) in fields(&mut c).into_iter().zip(v).zip(zeros) {
                *f = if z { 0 } else { v };
            }
            let p = PackedCounters::pack_with(&c, &extra);
            proptest::prop_assert_eq!(p.unpack(), c);
            for (j, e) in extra.iter().enumerate() {
                proptest::prop_assert_eq!(p.extra(j), *e);
            }
        }
    }
}
