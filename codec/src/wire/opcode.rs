//! BTH opcodes and the extended headers each one carries.
//!
//! The opcode byte is `transport(3 bits) | operation(5 bits)`:
//!
//! ```text
//!   7   6   5   4   3   2   1   0
//! +---+---+---+---+---+---+---+---+
//! | transport |     operation     |   RC 000, UC 001, RD 010, UD 011,
//! +---+---+---+---+---+---+---+---+   CNP 100, XRC 101
//! ```
//!
//! One table, built at compile time, maps each of the 256 byte values to its
//! name, transport, operation and header set (IBA vol. 1 ch. 9, kernel
//! `ib_pack.h`, rxe `rxe_opcode.c`, Wireshark `packet-infiniband.c`). Bytes
//! with no entry are reserved: [`Opcode::info`] returns `None` and the decoder
//! keeps the BTH and treats what follows as opaque payload.

use core::fmt;

/// The transport service an opcode belongs to (bits 7..5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    Rc,
    Uc,
    Rd,
    Ud,
    Cnp,
    Xrc,
    /// Reserved transport bits (110, 111).
    Unknown(u8),
}

impl Transport {
    pub fn from_bits(bits: u8) -> Transport {
        match bits & 0x7 {
            0 => Transport::Rc,
            1 => Transport::Uc,
            2 => Transport::Rd,
            3 => Transport::Ud,
            4 => Transport::Cnp,
            5 => Transport::Xrc,
            other => Transport::Unknown(other),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Transport::Rc => "RC",
            Transport::Uc => "UC",
            Transport::Rd => "RD",
            Transport::Ud => "UD",
            Transport::Cnp => "CNP",
            Transport::Xrc => "XRC",
            Transport::Unknown(_) => "reserved",
        }
    }
}

/// What a packet does, independent of its transport (bits 4..0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    SendFirst,
    SendMiddle,
    SendLast,
    SendLastWithImmediate,
    SendOnly,
    SendOnlyWithImmediate,
    RdmaWriteFirst,
    RdmaWriteMiddle,
    RdmaWriteLast,
    RdmaWriteLastWithImmediate,
    RdmaWriteOnly,
    RdmaWriteOnlyWithImmediate,
    RdmaReadRequest,
    RdmaReadResponseFirst,
    RdmaReadResponseMiddle,
    RdmaReadResponseLast,
    RdmaReadResponseOnly,
    Acknowledge,
    AtomicAcknowledge,
    CompareSwap,
    FetchAdd,
    Resync,
    SendLastWithInvalidate,
    SendOnlyWithInvalidate,
    Flush,
    AtomicWrite,
    /// RoCEv2 congestion notification packet.
    Cnp,
}

impl Operation {
    /// Requests go from requester to responder; everything else (ACKs, read
    /// responses, atomic ACKs) comes back.
    pub const fn is_response(self) -> bool {
        use Operation::*;
        matches!(
            self,
            RdmaReadResponseFirst
                | RdmaReadResponseMiddle
                | RdmaReadResponseLast
                | RdmaReadResponseOnly
                | Acknowledge
                | AtomicAcknowledge
        )
    }

    /// First packet of a message (FIRST or ONLY, or a single-packet request).
    pub fn starts_message(self) -> bool {
        use Operation::*;
        !matches!(
            self,
            SendMiddle
                | SendLast
                | SendLastWithImmediate
                | SendLastWithInvalidate
                | RdmaWriteMiddle
                | RdmaWriteLast
                | RdmaWriteLastWithImmediate
                | RdmaReadResponseMiddle
                | RdmaReadResponseLast
        )
    }

    /// Last packet of a message (LAST or ONLY, or a single-packet request).
    pub fn ends_message(self) -> bool {
        use Operation::*;
        !matches!(
            self,
            SendFirst
                | SendMiddle
                | RdmaWriteFirst
                | RdmaWriteMiddle
                | RdmaReadResponseFirst
                | RdmaReadResponseMiddle
        )
    }
}

/// The set of extended headers after the BTH, in wire order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HeaderSet(u16);

impl HeaderSet {
    pub const RDETH: HeaderSet = HeaderSet(1 << 0);
    pub const DETH: HeaderSet = HeaderSet(1 << 1);
    pub const XRCETH: HeaderSet = HeaderSet(1 << 2);
    pub const FETH: HeaderSet = HeaderSet(1 << 3);
    pub const RETH: HeaderSet = HeaderSet(1 << 4);
    pub const ATOMIC_ETH: HeaderSet = HeaderSet(1 << 5);
    pub const AETH: HeaderSet = HeaderSet(1 << 6);
    pub const ATOMIC_ACK_ETH: HeaderSet = HeaderSet(1 << 7);
    pub const IMMDT: HeaderSet = HeaderSet(1 << 8);
    pub const IETH: HeaderSet = HeaderSet(1 << 9);
    /// The 16 reserved bytes of a CNP.
    pub const CNP: HeaderSet = HeaderSet(1 << 10);
    /// Not a header: the opcode carries a data payload.
    pub const PAYLOAD: HeaderSet = HeaderSet(1 << 15);

    pub const fn empty() -> HeaderSet {
        HeaderSet(0)
    }
    pub const fn with(self, other: HeaderSet) -> HeaderSet {
        HeaderSet(self.0 | other.0)
    }
    pub const fn contains(self, other: HeaderSet) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn without(self, other: HeaderSet) -> HeaderSet {
        HeaderSet(self.0 & !other.0)
    }
}

/// Everything the codec knows about one opcode byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpcodeInfo {
    /// Kernel-style name, e.g. `RC_RDMA_WRITE_FIRST` (`IB_OPCODE_` dropped).
    pub name: &'static str,
    pub transport: Transport,
    pub operation: Operation,
    pub headers: HeaderSet,
}

/// A BTH opcode byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Opcode(pub u8);

impl Opcode {
    pub const CNP: Opcode = Opcode(0x81);

    pub fn transport(self) -> Transport {
        Transport::from_bits(self.0 >> 5)
    }

    /// The table entry, or `None` for a reserved opcode.
    pub fn info(self) -> Option<&'static OpcodeInfo> {
        TABLE[self.0 as usize].as_ref()
    }

    pub fn operation(self) -> Option<Operation> {
        self.info().map(|i| i.operation)
    }

    /// The name, or `"reserved"` for an opcode with no table entry.
    pub fn name(self) -> &'static str {
        self.info().map_or("reserved", |i| i.name)
    }

    /// Builds the opcode byte of `operation` on `transport`, if that
    /// combination exists.
    pub fn of(transport: Transport, operation: Operation) -> Option<Opcode> {
        (0..=255u8).map(Opcode).find(|o| {
            o.info()
                .is_some_and(|i| i.transport == transport && i.operation == operation)
        })
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#04x})", self.name(), self.0)
    }
}

const fn h(sets: &[HeaderSet]) -> HeaderSet {
    let mut acc = HeaderSet::empty();
    let mut i = 0;
    while i < sets.len() {
        acc = acc.with(sets[i]);
        i += 1;
    }
    acc
}

const P: HeaderSet = HeaderSet::PAYLOAD;
const RETH: HeaderSet = HeaderSet::RETH;
const AETH: HeaderSet = HeaderSet::AETH;
const IMM: HeaderSet = HeaderSet::IMMDT;

/// The operations in op-code order with their names and the headers they
/// carry on RC and UC (other transports add their own headers below).
const OPS: [(u8, Operation, &str, HeaderSet); 26] = {
    use Operation::*;
    [
        (0x00, SendFirst, "SEND_FIRST", P),
        (0x01, SendMiddle, "SEND_MIDDLE", P),
        (0x02, SendLast, "SEND_LAST", P),
        (
            0x03,
            SendLastWithImmediate,
            "SEND_LAST_WITH_IMMEDIATE",
            h(&[IMM, P]),
        ),
        (0x04, SendOnly, "SEND_ONLY", P),
        (
            0x05,
            SendOnlyWithImmediate,
            "SEND_ONLY_WITH_IMMEDIATE",
            h(&[IMM, P]),
        ),
        (0x06, RdmaWriteFirst, "RDMA_WRITE_FIRST", h(&[RETH, P])),
        (0x07, RdmaWriteMiddle, "RDMA_WRITE_MIDDLE", P),
        (0x08, RdmaWriteLast, "RDMA_WRITE_LAST", P),
        (
            0x09,
            RdmaWriteLastWithImmediate,
            "RDMA_WRITE_LAST_WITH_IMMEDIATE",
            h(&[IMM, P]),
        ),
        (0x0A, RdmaWriteOnly, "RDMA_WRITE_ONLY", h(&[RETH, P])),
        (
            0x0B,
            RdmaWriteOnlyWithImmediate,
            "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
            h(&[RETH, IMM, P]),
        ),
        (0x0C, RdmaReadRequest, "RDMA_READ_REQUEST", RETH),
        (
            0x0D,
            RdmaReadResponseFirst,
            "RDMA_READ_RESPONSE_FIRST",
            h(&[AETH, P]),
        ),
        (0x0E, RdmaReadResponseMiddle, "RDMA_READ_RESPONSE_MIDDLE", P),
        (
            0x0F,
            RdmaReadResponseLast,
            "RDMA_READ_RESPONSE_LAST",
            h(&[AETH, P]),
        ),
        (
            0x10,
            RdmaReadResponseOnly,
            "RDMA_READ_RESPONSE_ONLY",
            h(&[AETH, P]),
        ),
        (0x11, Acknowledge, "ACKNOWLEDGE", AETH),
        (
            0x12,
            AtomicAcknowledge,
            "ATOMIC_ACKNOWLEDGE",
            h(&[AETH, HeaderSet::ATOMIC_ACK_ETH]),
        ),
        (0x13, CompareSwap, "COMPARE_SWAP", HeaderSet::ATOMIC_ETH),
        (0x14, FetchAdd, "FETCH_ADD", HeaderSet::ATOMIC_ETH),
        (0x15, Resync, "RESYNC", HeaderSet::empty()),
        (
            0x16,
            SendLastWithInvalidate,
            "SEND_LAST_WITH_INVALIDATE",
            h(&[HeaderSet::IETH, P]),
        ),
        (
            0x17,
            SendOnlyWithInvalidate,
            "SEND_ONLY_WITH_INVALIDATE",
            h(&[HeaderSet::IETH, P]),
        ),
        (0x1C, Flush, "FLUSH", h(&[HeaderSet::FETH, RETH])),
        (0x1D, AtomicWrite, "ATOMIC_WRITE", h(&[RETH, P])),
    ]
};

const fn entry(
    transport: Transport,
    prefix: &'static [&'static str; 26],
    i: usize,
    headers: HeaderSet,
) -> Option<OpcodeInfo> {
    Some(OpcodeInfo {
        name: prefix[i],
        transport,
        operation: OPS[i].1,
        headers,
    })
}

macro_rules! names {
    ($p:literal) => {
        [
            concat!($p, "SEND_FIRST"),
            concat!($p, "SEND_MIDDLE"),
            concat!($p, "SEND_LAST"),
            concat!($p, "SEND_LAST_WITH_IMMEDIATE"),
            concat!($p, "SEND_ONLY"),
            concat!($p, "SEND_ONLY_WITH_IMMEDIATE"),
            concat!($p, "RDMA_WRITE_FIRST"),
            concat!($p, "RDMA_WRITE_MIDDLE"),
            concat!($p, "RDMA_WRITE_LAST"),
            concat!($p, "RDMA_WRITE_LAST_WITH_IMMEDIATE"),
            concat!($p, "RDMA_WRITE_ONLY"),
            concat!($p, "RDMA_WRITE_ONLY_WITH_IMMEDIATE"),
            concat!($p, "RDMA_READ_REQUEST"),
            concat!($p, "RDMA_READ_RESPONSE_FIRST"),
            concat!($p, "RDMA_READ_RESPONSE_MIDDLE"),
            concat!($p, "RDMA_READ_RESPONSE_LAST"),
            concat!($p, "RDMA_READ_RESPONSE_ONLY"),
            concat!($p, "ACKNOWLEDGE"),
            concat!($p, "ATOMIC_ACKNOWLEDGE"),
            concat!($p, "COMPARE_SWAP"),
            concat!($p, "FETCH_ADD"),
            concat!($p, "RESYNC"),
            concat!($p, "SEND_LAST_WITH_INVALIDATE"),
            concat!($p, "SEND_ONLY_WITH_INVALIDATE"),
            concat!($p, "FLUSH"),
            concat!($p, "ATOMIC_WRITE"),
        ]
    };
}

static RC_NAMES: [&str; 26] = names!("RC_");
static UC_NAMES: [&str; 26] = names!("UC_");
static RD_NAMES: [&str; 26] = names!("RD_");
static UD_NAMES: [&str; 26] = names!("UD_");
static XRC_NAMES: [&str; 26] = names!("XRC_");

static TABLE: [Option<OpcodeInfo>; 256] = {
    let mut t: [Option<OpcodeInfo>; 256] = [None; 256];
    let mut i = 0;
    while i < OPS.len() {
        let (op, operation, _, headers) = OPS[i];
        let op = op as usize;
        // RC: everything but RESYNC (an RD-only operation).
        if !matches!(operation, Operation::Resync) {
            t[op] = entry(Transport::Rc, &RC_NAMES, i, headers);
        }
        // UC: SEND and RDMA WRITE only.
        if op <= 0x0B {
            t[0x20 | op] = entry(Transport::Uc, &UC_NAMES, i, headers);
        }
        // RD: operations up to RESYNC. Requests carry RDETH + DETH, responses
        // RDETH only.
        if op <= 0x15 {
            let extra = if operation.is_response() {
                HeaderSet::RDETH
            } else {
                HeaderSet::RDETH.with(HeaderSet::DETH)
            };
            t[0x40 | op] = entry(Transport::Rd, &RD_NAMES, i, extra.with(headers));
        }
        // UD: SEND_ONLY and SEND_ONLY_WITH_IMMEDIATE, with a DETH.
        if op == 0x04 || op == 0x05 {
            t[0x60 | op] = entry(Transport::Ud, &UD_NAMES, i, HeaderSet::DETH.with(headers));
        }
        // XRC: the RC operations of IBA 1.2; requests carry an XRCETH.
        if op <= 0x17 && op != 0x15 {
            let extra = if operation.is_response() {
                HeaderSet::empty()
            } else {
                HeaderSet::XRCETH
            };
            t[0xA0 | op] = entry(Transport::Xrc, &XRC_NAMES, i, extra.with(headers));
        }
        i += 1;
    }
    t[0x81] = Some(OpcodeInfo {
        name: "CNP",
        transport: Transport::Cnp,
        operation: Operation::Cnp,
        headers: HeaderSet::CNP,
    });
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_ib_pack_h() {
        assert_eq!(Opcode(0x00).name(), "RC_SEND_FIRST");
        assert_eq!(Opcode(0x0A).name(), "RC_RDMA_WRITE_ONLY");
        assert_eq!(Opcode(0x11).name(), "RC_ACKNOWLEDGE");
        assert_eq!(Opcode(0x24).name(), "UC_SEND_ONLY");
        assert_eq!(Opcode(0x2B).name(), "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE");
        assert_eq!(Opcode(0x64).name(), "UD_SEND_ONLY");
        assert_eq!(Opcode(0x65).name(), "UD_SEND_ONLY_WITH_IMMEDIATE");
        assert_eq!(Opcode(0x81).name(), "CNP");
        assert_eq!(Opcode(0x1C).name(), "RC_FLUSH");
        assert_eq!(Opcode(0x1D).name(), "RC_ATOMIC_WRITE");
    }

    #[test]
    fn reserved_opcodes_have_no_entry() {
        for op in [
            0x15u8, 0x18, 0x1B, 0x1E, 0x1F, 0x2C, 0x30, 0x60, 0x66, 0x80, 0x82, 0xC0, 0xFF,
        ] {
            assert!(Opcode(op).info().is_none(), "{op:#x}");
            assert_eq!(Opcode(op).name(), "reserved");
        }
    }

    #[test]
    fn header_sets_follow_the_ib_spec_opcode_table() {
        let hs = |op: u8| Opcode(op).info().unwrap().headers;
        assert_eq!(hs(0x06), HeaderSet::RETH.with(HeaderSet::PAYLOAD));
        assert_eq!(
            hs(0x0B),
            HeaderSet::RETH
                .with(HeaderSet::IMMDT)
                .with(HeaderSet::PAYLOAD)
        );
        assert_eq!(hs(0x0C), HeaderSet::RETH);
        assert_eq!(hs(0x0E), HeaderSet::PAYLOAD);
        assert_eq!(hs(0x11), HeaderSet::AETH);
        assert_eq!(hs(0x12), HeaderSet::AETH.with(HeaderSet::ATOMIC_ACK_ETH));
        assert_eq!(hs(0x13), HeaderSet::ATOMIC_ETH);
        assert_eq!(hs(0x17), HeaderSet::IETH.with(HeaderSet::PAYLOAD));
        assert_eq!(hs(0x1C), HeaderSet::FETH.with(HeaderSet::RETH));
        assert_eq!(hs(0x64), HeaderSet::DETH.with(HeaderSet::PAYLOAD));
        assert_eq!(hs(0x81), HeaderSet::CNP);
        assert_eq!(
            hs(0x4C),
            HeaderSet::RDETH.with(HeaderSet::DETH).with(HeaderSet::RETH)
        );
        assert_eq!(hs(0x51), HeaderSet::RDETH.with(HeaderSet::AETH));
        assert_eq!(
            hs(0xA6),
            HeaderSet::XRCETH
                .with(HeaderSet::RETH)
                .with(HeaderSet::PAYLOAD)
        );
        assert_eq!(hs(0xB1), HeaderSet::AETH);
    }

    #[test]
    fn uc_has_no_read_or_ack() {
        assert!(Opcode(0x2C).info().is_none());
        assert!(Opcode(0x31).info().is_none());
    }

    #[test]
    fn of_finds_the_byte() {
        assert_eq!(
            Opcode::of(Transport::Rc, Operation::Acknowledge),
            Some(Opcode(0x11))
        );
        assert_eq!(
            Opcode::of(Transport::Ud, Operation::SendOnly),
            Some(Opcode(0x64))
        );
        assert_eq!(Opcode::of(Transport::Uc, Operation::RdmaReadRequest), None);
    }

    #[test]
    fn message_boundaries() {
        use Operation::*;
        assert!(SendFirst.starts_message() && !SendFirst.ends_message());
        assert!(!SendMiddle.starts_message() && !SendMiddle.ends_message());
        assert!(!SendLast.starts_message() && SendLast.ends_message());
        assert!(SendOnly.starts_message() && SendOnly.ends_message());
        assert!(RdmaReadRequest.starts_message() && RdmaReadRequest.ends_message());
    }
}
