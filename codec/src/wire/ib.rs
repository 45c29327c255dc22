//! An InfiniBand transport packet: BTH, the extended headers its opcode
//! calls for, payload, pad and ICRC.
//!
//! ```text
//! +-----+--------------------------------+-------------+-----+------+
//! | BTH | RDETH DETH XRCETH FETH RETH    |   payload   | pad | ICRC |
//! |     | AtomicETH AETH AtomicAckETH    |             | 0-3 |  4   |
//! |     | ImmDt IETH (CNP: 16 reserved)  |             |     |      |
//! +-----+--------------------------------+-------------+-----+------+
//!        only those the opcode's header set names, in this order
//! ```
//! The packet length is not in the BTH: it comes from the enclosing UDP
//! length (RoCEv2) or GRH PayLen (RoCE v1), so parsing takes that
//! *declared* length next to the bytes actually captured.

use crate::error::{Error, Layer, Warnings, need};
use crate::wire::aeth::AethRepr;
use crate::wire::atomic_ack_eth::AtomicAckEthRepr;
use crate::wire::atomic_eth::AtomicEthRepr;
use crate::wire::bth::BthRepr;
use crate::wire::cnp::CnpRepr;
use crate::wire::deth::DethRepr;
use crate::wire::feth::FethRepr;
use crate::wire::ieth::IethRepr;
use crate::wire::immdt::ImmDtRepr;
use crate::wire::opcode::HeaderSet;
use crate::wire::rdeth::RdethRepr;
use crate::wire::reth::RethRepr;
use crate::wire::xrceth::XrcethRepr;

/// Length of the ICRC at the end of every RoCE packet (its value is
/// [`crate::icrc`]'s to compute).
pub const ICRC_LEN: usize = 4;

/// The extended headers of one packet: each present or not (an accessor
/// per header gives `None` where the packet has none).
///
/// The headers sit side by side behind one presence mask rather than as
/// eleven `Option`s: an `Option` pads each to its alignment plus a tag,
/// 176 bytes where these take 128. The simulator carries one per frame in
/// flight, and a fabric of thousands of hosts holds millions of frames in
/// its switch buffers (`rocesim_model::packet::Packet`). An absent
/// header's value is always its default, so equality and hashing see
/// only the headers present.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ExtHeaders {
    present: HeaderSet,
    rdeth: RdethRepr,
    deth: DethRepr,
    xrceth: XrcethRepr,
    feth: FethRepr,
    reth: RethRepr,
    atomic_eth: AtomicEthRepr,
    aeth: AethRepr,
    atomic_ack_eth: AtomicAckEthRepr,
    immdt: ImmDtRepr,
    ieth: IethRepr,
    cnp: CnpRepr,
}

/// Visits the headers of a set in wire order with their lengths and layers.
/// One list, used by parse, emit, length, check and the accessors, so the
/// order cannot drift between them.
macro_rules! for_each_header {
    ($m:ident) => {
        $m!(RDETH, rdeth, set_rdeth, RdethRepr, Rdeth);
        $m!(DETH, deth, set_deth, DethRepr, Deth);
        $m!(XRCETH, xrceth, set_xrceth, XrcethRepr, Xrceth);
        $m!(FETH, feth, set_feth, FethRepr, Feth);
        $m!(RETH, reth, set_reth, RethRepr, Reth);
        $m!(
            ATOMIC_ETH,
            atomic_eth,
            set_atomic_eth,
            AtomicEthRepr,
            AtomicEth
        );
        $m!(AETH, aeth, set_aeth, AethRepr, Aeth);
        $m!(
            ATOMIC_ACK_ETH,
            atomic_ack_eth,
            set_atomic_ack_eth,
            AtomicAckEthRepr,
            AtomicAckEth
        );
        $m!(IMMDT, immdt, set_immdt, ImmDtRepr, ImmDt);
        $m!(IETH, ieth, set_ieth, IethRepr, Ieth);
        $m!(CNP, cnp, set_cnp, CnpRepr, Cnp);
    };
}

macro_rules! accessors {
    ($flag:ident, $f:ident, $set:ident, $ty:ty, $layer:ident) => {
        #[doc = concat!("The ", stringify!($flag), ", if present.")]
        #[inline]
        pub fn $f(&self) -> Option<$ty> {
            self.present.contains(HeaderSet::$flag).then_some(self.$f)
        }

        #[doc = concat!("Sets (`Some`) or removes (`None`) the ", stringify!($flag), ".")]
        #[inline]
        pub fn $set(&mut self, h: Option<$ty>) {
            match h {
                Some(h) => {
                    self.present = self.present.with(HeaderSet::$flag);
                    self.$f = h;
                }
                None => {
                    self.present = self.present.without(HeaderSet::$flag);
                    self.$f = <$ty>::default();
                }
            }
        }
    };
}

impl ExtHeaders {
    for_each_header!(accessors);

    /// Every header of `set` (its payload flag aside) present with its
    /// default value: the headers' part of `ExtHeaders::for_set`, one
    /// store instead of a setter per header.
    pub(crate) fn defaults_of(set: HeaderSet) -> ExtHeaders {
        ExtHeaders {
            // PAYLOAD is the one flag that names no header.
            present: set.without(HeaderSet::PAYLOAD),
            ..ExtHeaders::default()
        }
    }

    /// Total length of the headers present.
    pub fn len(&self) -> usize {
        let mut n = 0;
        macro_rules! add {
            ($flag:ident, $f:ident, $set:ident, $ty:ty, $layer:ident) => {
                if self.present.contains(HeaderSet::$flag) {
                    n += <$ty>::LEN;
                }
            };
        }
        for_each_header!(add);
        n
    }

    pub fn is_empty(&self) -> bool {
        self.present == HeaderSet::empty()
    }

    /// The header set these headers form (without the payload flag).
    pub fn set(&self) -> HeaderSet {
        self.present
    }

    /// Writes the headers present in wire order; returns the bytes written.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let mut off = 0;
        macro_rules! put {
            ($flag:ident, $f:ident, $set:ident, $ty:ty, $layer:ident) => {
                if let Some(h) = self.$f() {
                    h.emit(&mut buf[off..off + <$ty>::LEN]);
                    off += <$ty>::LEN;
                }
            };
        }
        for_each_header!(put);
        off
    }
}

impl core::fmt::Debug for ExtHeaders {
    /// The headers present, as the `Option` fields they once were showed
    /// them (absent ones left out).
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut d = f.debug_struct("ExtHeaders");
        macro_rules! show {
            ($flag:ident, $f:ident, $set:ident, $ty:ty, $layer:ident) => {
                if let Some(h) = self.$f() {
                    d.field(stringify!($f), &h);
                }
            };
        }
        for_each_header!(show);
        d.finish_non_exhaustive()
    }
}

/// Pad bytes that bring a payload to a multiple of 4 (BTH PadCnt).
pub const fn pad_for(payload_len: u32) -> u8 {
    ((4 - payload_len % 4) % 4) as u8
}

/// A complete InfiniBand transport packet as values: what the simulator
/// carries and what [`crate::frame::FrameRepr::emit`] turns into bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IbRepr {
    pub bth: BthRepr,
    pub ext: ExtHeaders,
    /// Payload bytes, without pad.
    pub payload_len: u32,
}

impl IbRepr {
    /// BTH plus extended headers.
    pub fn header_len(&self) -> usize {
        BthRepr::LEN + self.ext.len()
    }

    /// Everything from the BTH through the ICRC.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload_len as usize + usize::from(self.bth.pad_count) + ICRC_LEN
    }

    /// Writes BTH, headers, the first `payload_len` bytes of `payload` and
    /// zero pad, leaving the last 4 bytes (the ICRC) to the caller, who
    /// knows the enclosing headers. Returns the offset of the ICRC.
    ///
    /// # Panics
    /// If `buf` is shorter than [`IbRepr::buffer_len`] or `payload` shorter
    /// than `payload_len`.
    pub fn emit_without_icrc(&self, buf: &mut [u8], payload: &[u8]) -> usize {
        self.bth.emit(buf);
        let mut off = BthRepr::LEN;
        off += self.ext.emit(&mut buf[off..]);
        let n = self.payload_len as usize;
        buf[off..off + n].copy_from_slice(&payload[..n]);
        off += n;
        let pad = usize::from(self.bth.pad_count);
        buf[off..off + pad].fill(0);
        off + pad
    }

    /// Checks that a hand-built packet is what its opcode says: the header
    /// set matches the opcode's, payload only where allowed, PadCnt right.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |layer, field, value: u64, expected| Error::Invalid {
            layer,
            offset: 0,
            field,
            value,
            expected,
        };
        self.bth.check()?;
        let Some(info) = self.bth.opcode.info() else {
            return Err(bad(
                Layer::Bth,
                "opcode",
                self.bth.opcode.0.into(),
                "expected a defined opcode",
            ));
        };
        let want = HeaderSet::empty();
        let mut want = want;
        macro_rules! want {
            ($flag:ident, $f:ident, $set:ident, $ty:ty, $layer:ident) => {
                if info.headers.contains(HeaderSet::$flag) {
                    want = want.with(HeaderSet::$flag);
                }
            };
        }
        for_each_header!(want);
        if self.ext.set() != want {
            return Err(bad(
                Layer::Bth,
                "opcode",
                self.bth.opcode.0.into(),
                "whose header set differs from the headers given",
            ));
        }
        if !info.headers.contains(HeaderSet::PAYLOAD) && self.payload_len != 0 {
            return Err(bad(
                Layer::IbPayload,
                "payload_len",
                self.payload_len.into(),
                "expected 0 for this opcode",
            ));
        }
        if self.bth.pad_count != pad_for(self.payload_len) {
            return Err(bad(
                Layer::Bth,
                "pad_count",
                self.bth.pad_count.into(),
                "expected (4 - payload_len % 4) % 4",
            ));
        }
        Ok(())
    }
}

/// An InfiniBand packet decoded from captured bytes, possibly incomplete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IbPacket<'a> {
    pub bth: BthRepr,
    /// The extended headers decoded (all of them unless decoding stopped).
    pub ext: ExtHeaders,
    /// BTH plus the extended headers decoded.
    pub header_len: usize,
    /// Payload length the enclosing length fields declare, without pad;
    /// `None` when decoding stopped inside the headers.
    pub payload_len: Option<u32>,
    /// The captured part of the payload (all of it unless truncated).
    pub payload: &'a [u8],
    /// The ICRC as its 4 wire bytes, when captured.
    pub icrc: Option<[u8; 4]>,
    /// Whether the ICRC matches, when it was captured and verification ran.
    pub icrc_valid: Option<bool>,
    pub warnings: Warnings,
}

impl IbPacket<'_> {
    /// The packet as a repr, if it was decoded completely (and its PadCnt
    /// fits, without which no repr re-emits it).
    pub fn repr(&self) -> Option<IbRepr> {
        let payload_len = self.payload_len?;
        if self.warnings.contains(Warnings::PAD_EXCEEDS_PAYLOAD)
            || self.warnings.contains(Warnings::PAD_NONZERO)
        {
            return None;
        }
        (self.icrc.is_some() && self.payload.len() == payload_len as usize).then_some(IbRepr {
            bth: self.bth,
            ext: self.ext,
            payload_len,
        })
    }
}

/// Decodes the IB packet in `buf` (captured bytes from the BTH on) whose
/// enclosing header declares `declared` bytes (BTH through ICRC).
///
/// Returns what could be decoded and the error that stopped decoding, if
/// any. Offsets in the error are relative to the BTH.
pub(crate) fn parse(buf: &[u8], declared: usize) -> (Option<IbPacket<'_>>, Option<Error>) {
    let buf = &buf[..buf.len().min(declared)];
    if declared < BthRepr::LEN + ICRC_LEN {
        return (
            None,
            Some(Error::Truncated {
                layer: Layer::Bth,
                offset: 0,
                required: BthRepr::LEN + ICRC_LEN,
                present: declared,
            }),
        );
    }
    if let Err(e) = need(buf, Layer::Bth, BthRepr::LEN) {
        return (None, Some(e));
    }
    let bth = BthRepr::parse(buf).expect("length checked");
    let body_end = declared - ICRC_LEN;
    let mut warnings = Warnings::empty();
    let info = bth.opcode.info().filter(|_| bth.tver == 0);
    if bth.opcode.info().is_none() {
        warnings.insert(Warnings::UNKNOWN_OPCODE);
    }
    if bth.tver != 0 {
        warnings.insert(Warnings::TVER_NONZERO);
    }
    let headers = info.map_or(HeaderSet::PAYLOAD, |i| i.headers);
    let mut pkt = IbPacket {
        bth,
        ext: ExtHeaders::default(),
        header_len: BthRepr::LEN,
        payload_len: None,
        payload: &[],
        icrc: None,
        icrc_valid: None,
        warnings,
    };

    let mut off = BthRepr::LEN;
    macro_rules! take {
        ($flag:ident, $f:ident, $set:ident, $ty:ty, $layer:ident) => {
            if headers.contains(HeaderSet::$flag) {
                let len = <$ty>::LEN;
                // Which end is short tells a malformed packet (its own length
                // field is too small) from a truncated capture.
                let present = if off + len > body_end {
                    Some(body_end - off)
                } else if off + len > buf.len() {
                    Some(buf.len() - off)
                } else {
                    None
                };
                if let Some(present) = present {
                    pkt.header_len = off;
                    let e = Error::Truncated {
                        layer: Layer::$layer,
                        offset: off,
                        required: len,
                        present,
                    };
                    return (Some(pkt), Some(e));
                }
                match <$ty>::parse(&buf[off..]) {
                    Ok(h) => pkt.ext.$set(Some(h)),
                    Err(e) => {
                        pkt.header_len = off;
                        return (Some(pkt), Some(e.at(off)));
                    }
                }
                off += len;
            }
        };
    }
    for_each_header!(take);
    pkt.header_len = off;

    if pkt.ext.cnp().is_some_and(|c| !c.reserved_is_zero()) {
        pkt.warnings.insert(Warnings::CNP_RESERVED_NONZERO);
    }
    let with_pad = body_end - off;
    let pad = usize::from(bth.pad_count);
    let payload_len = if pad > with_pad {
        pkt.warnings.insert(Warnings::PAD_EXCEEDS_PAYLOAD);
        0
    } else {
        with_pad - pad
    };
    // Pad bytes count: PadCnt pads a payload, so an opcode without one has
    // nothing to pad (tshark then finds no ICRC either).
    if with_pad > 0 && !headers.contains(HeaderSet::PAYLOAD) {
        pkt.warnings.insert(Warnings::UNEXPECTED_PAYLOAD);
    }
    pkt.payload_len = Some(payload_len as u32);
    // Emit writes zero pad; pad bytes that are not zero cannot come back.
    let pad_bytes = &buf[(off + payload_len).min(buf.len())..body_end.min(buf.len())];
    if pad_bytes.iter().any(|&b| b != 0) {
        pkt.warnings.insert(Warnings::PAD_NONZERO);
    }
    let end = (off + payload_len).min(buf.len());
    pkt.payload = &buf[off.min(end)..end];
    if buf.len() >= declared {
        pkt.icrc = Some(buf[body_end..declared].try_into().unwrap());
        return (Some(pkt), None);
    }
    let e = if buf.len() < body_end {
        Error::Truncated {
            layer: Layer::IbPayload,
            offset: off,
            required: declared - off,
            present: buf.len() - off,
        }
    } else {
        Error::Truncated {
            layer: Layer::Icrc,
            offset: body_end,
            required: ICRC_LEN,
            present: buf.len() - body_end,
        }
    };
    (Some(pkt), Some(e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::psn::Psn;
    use crate::wire::aeth::Syndrome;
    use crate::wire::opcode::Opcode;

    fn write_first(len: u32) -> IbRepr {
        IbRepr {
            bth: BthRepr {
                opcode: Opcode(0x06),
                pkey: 0xFFFF,
                dest_qp: 0x12,
                psn: Psn::new(100),
                pad_count: pad_for(len),
                ..BthRepr::default()
            },
            ext: ExtHeaders::default(),
            payload_len: len,
        }
        .with_reth(RethRepr {
            va: 0x1000,
            rkey: 0x77,
            dma_len: 10000,
        })
    }

    /// A header set and then removed leaves the headers equal to ones it
    /// was never set in: equality and hashing see present headers only.
    #[test]
    fn a_removed_header_leaves_no_trace() {
        let mut a = ExtHeaders::default();
        a.set_reth(Some(RethRepr {
            va: 1,
            rkey: 2,
            dma_len: 3,
        }));
        a.set_immdt(Some(ImmDtRepr { data: 7 }));
        assert_eq!(a.set(), HeaderSet::RETH.with(HeaderSet::IMMDT));
        assert_eq!(a.len(), 20);
        assert_eq!(a.immdt(), Some(ImmDtRepr { data: 7 }));
        assert_eq!(
            format!("{a:?}"),
            "ExtHeaders { reth: RethRepr { va: 1, rkey: 2, dma_len: 3 }, immdt: ImmDtRepr { data: 7 }, .. }"
        );
        a.set_reth(None);
        a.set_immdt(None);
        assert_eq!(a, ExtHeaders::default());
        assert!(a.is_empty() && a.reth().is_none());
        assert!(
            size_of::<ExtHeaders>() <= 128,
            "{}",
            size_of::<ExtHeaders>()
        );
    }

    #[test]
    fn lengths_follow_the_ib_spec() {
        let r = write_first(4096);
        assert_eq!(r.header_len(), 28);
        assert_eq!(r.buffer_len(), 12 + 16 + 4096 + 4);
        let r = write_first(1807);
        assert_eq!(r.bth.pad_count, 1);
        assert_eq!(r.buffer_len(), 12 + 16 + 1807 + 1 + 4);
        r.check().unwrap();
    }

    #[test]
    fn emit_then_parse() {
        let r = write_first(5);
        let payload = [1, 2, 3, 4, 5];
        let mut buf = vec![0xa5; r.buffer_len()];
        let icrc_at = r.emit_without_icrc(&mut buf, &payload);
        assert_eq!(icrc_at, buf.len() - 4);
        assert_eq!(&buf[28..33], &payload);
        assert_eq!(&buf[33..36], &[0, 0, 0], "pad is zero");
        let (pkt, stop) = parse(&buf, buf.len());
        assert_eq!(stop, None);
        let pkt = pkt.unwrap();
        assert_eq!(pkt.repr(), Some(r));
        assert_eq!(pkt.payload, &payload);
        assert_eq!(pkt.icrc, Some([0xa5; 4]));
    }

    #[test]
    fn truncated_capture_keeps_the_headers() {
        let r = write_first(1000);
        let mut buf = vec![0; r.buffer_len()];
        r.emit_without_icrc(&mut buf, &[9; 1000]);
        let (pkt, stop) = parse(&buf[..128], buf.len());
        let pkt = pkt.unwrap();
        assert_eq!(pkt.ext.reth(), r.ext.reth());
        assert_eq!(pkt.payload.len(), 100);
        assert_eq!(pkt.payload_len, Some(1000));
        assert_eq!(pkt.icrc, None);
        assert_eq!(pkt.repr(), None);
        assert_eq!(
            stop,
            Some(Error::Truncated {
                layer: Layer::IbPayload,
                offset: 28,
                required: 1004,
                present: 100
            })
        );
        // Cut inside the RETH.
        let (pkt, stop) = parse(&buf[..20], buf.len());
        assert_eq!(pkt.unwrap().ext.reth(), None);
        assert_eq!(
            stop,
            Some(Error::Truncated {
                layer: Layer::Reth,
                offset: 12,
                required: 16,
                present: 8
            })
        );
    }

    #[test]
    fn short_declared_length_is_malformed_not_truncated() {
        // An ACK whose enclosing length leaves no room for the AETH.
        let mut buf = [0u8; 16];
        buf[0] = 0x11;
        let (_, stop) = parse(&buf, 16);
        assert_eq!(
            stop,
            Some(Error::Truncated {
                layer: Layer::Aeth,
                offset: 12,
                required: 4,
                present: 0
            })
        );
        let (pkt, stop) = parse(&buf, 10);
        assert!(pkt.is_none());
        assert_eq!(
            stop.unwrap().to_string(),
            "BTH at offset 0: 16 bytes required, 10 present"
        );
    }

    #[test]
    fn unknown_opcode_and_tver_warn_but_decode_bth() {
        let mut buf = [0u8; 24];
        buf[0] = 0x1E;
        let (pkt, stop) = parse(&buf, 24);
        let pkt = pkt.unwrap();
        assert_eq!(stop, None);
        assert!(pkt.warnings.contains(Warnings::UNKNOWN_OPCODE));
        assert_eq!(pkt.payload_len, Some(8));
        buf[0] = 0x11;
        buf[1] = 0x01; // TVer 1: header layout unknown, so nothing beyond the BTH
        let (pkt, _) = parse(&buf, 24);
        let pkt = pkt.unwrap();
        assert!(pkt.warnings.contains(Warnings::TVER_NONZERO));
        assert_eq!(pkt.ext.aeth(), None);
    }

    #[test]
    fn ack_with_payload_warns() {
        let r = IbRepr {
            bth: BthRepr {
                opcode: Opcode(0x11),
                ..BthRepr::default()
            },
            ext: ExtHeaders::default(),
            payload_len: 0,
        }
        .with_aeth(AethRepr {
            syndrome: Syndrome::ACK_NO_CREDITS,
            msn: 1,
        });
        r.check().unwrap();
        let mut buf = vec![0; r.buffer_len() + 4];
        r.emit_without_icrc(&mut buf, &[]);
        let (pkt, _) = parse(&buf, buf.len());
        assert!(pkt.unwrap().warnings.contains(Warnings::UNEXPECTED_PAYLOAD));
        buf[1] = 0x30; // PadCnt 3 with 4 bytes of room is fine
        let (pkt, _) = parse(&buf, buf.len());
        assert_eq!(pkt.unwrap().payload_len, Some(1));
    }

    #[test]
    fn check_rejects_inconsistent_reprs() {
        let mut r = write_first(10);
        r.ext.set_aeth(Some(AethRepr::default()));
        assert!(r.check().is_err());
        let mut r = write_first(10);
        r.bth.pad_count = 0;
        assert!(r.check().is_err());
        let mut r = write_first(0);
        r.bth.opcode = Opcode(0x0C);
        r.payload_len = 4;
        assert!(r.check().is_err());
    }
}
