//! Base Transport Header: the 12 bytes every InfiniBand packet starts with.
//!
//! ```text
//!  byte 0      1                 2..3      4            5..7      8        9..11
//! +--------+-----------------+---------+-----------+--------+---------+--------+
//! | OpCode | SE|M|Pad|TVer   |  P_Key  | F|B|resv6 | DestQP | A|resv7 |  PSN   |
//! +--------+-----------------+---------+-----------+--------+---------+--------+
//! ```

use crate::error::{Error, Layer, Result, need};
use crate::psn::Psn;
use crate::wire::opcode::Opcode;

mod field {
    use core::ops::Range;
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const PKEY: Range<usize> = 2..4;
    /// FECN, BECN and resv6; the ICRC masks this whole byte.
    pub const FECN_BECN: usize = 4;
    pub const DEST_QP: Range<usize> = 5..8;
    pub const ACK_REQ: usize = 8;
    pub const PSN: Range<usize> = 9..12;
}

/// A read/write view of a BTH at the start of a buffer.
#[derive(Debug, Clone, Copy)]
pub struct Bth<T: AsRef<[u8]>> {
    buffer: T,
}

fn u24(b: &[u8]) -> u32 {
    u32::from_be_bytes([0, b[0], b[1], b[2]])
}

impl<T: AsRef<[u8]>> Bth<T> {
    pub const LEN: usize = 12;

    /// Wraps a buffer without checking its length; accessors panic on a
    /// short buffer, so use [`Bth::new_checked`] on untrusted input.
    pub fn new_unchecked(buffer: T) -> Bth<T> {
        Bth { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Bth<T>> {
        need(buffer.as_ref(), Layer::Bth, Self::LEN)?;
        Ok(Bth { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn opcode(&self) -> Opcode {
        Opcode(self.b()[field::OPCODE])
    }
    pub fn solicited_event(&self) -> bool {
        self.b()[field::FLAGS] & 0x80 != 0
    }
    pub fn mig_req(&self) -> bool {
        self.b()[field::FLAGS] & 0x40 != 0
    }
    pub fn pad_count(&self) -> u8 {
        (self.b()[field::FLAGS] >> 4) & 0x3
    }
    pub fn tver(&self) -> u8 {
        self.b()[field::FLAGS] & 0x0F
    }
    pub fn pkey(&self) -> u16 {
        u16::from_be_bytes([self.b()[field::PKEY.start], self.b()[field::PKEY.start + 1]])
    }
    pub fn fecn(&self) -> bool {
        self.b()[field::FECN_BECN] & 0x80 != 0
    }
    pub fn becn(&self) -> bool {
        self.b()[field::FECN_BECN] & 0x40 != 0
    }
    pub fn resv6(&self) -> u8 {
        self.b()[field::FECN_BECN] & 0x3F
    }
    pub fn dest_qp(&self) -> u32 {
        u24(&self.b()[field::DEST_QP])
    }
    pub fn ack_req(&self) -> bool {
        self.b()[field::ACK_REQ] & 0x80 != 0
    }
    pub fn resv7(&self) -> u8 {
        self.b()[field::ACK_REQ] & 0x7F
    }
    pub fn psn(&self) -> Psn {
        Psn::new(u24(&self.b()[field::PSN]))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Bth<T> {
    fn m(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    pub fn set_opcode(&mut self, v: Opcode) {
        self.m()[field::OPCODE] = v.0;
    }
    pub fn set_flags(&mut self, se: bool, mig_req: bool, pad_count: u8, tver: u8) {
        self.m()[field::FLAGS] = (u8::from(se) << 7)
            | (u8::from(mig_req) << 6)
            | ((pad_count & 0x3) << 4)
            | (tver & 0x0F);
    }
    pub fn set_pkey(&mut self, v: u16) {
        self.m()[field::PKEY].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_fecn_becn(&mut self, fecn: bool, becn: bool, resv6: u8) {
        self.m()[field::FECN_BECN] = (u8::from(fecn) << 7) | (u8::from(becn) << 6) | (resv6 & 0x3F);
    }
    pub fn set_dest_qp(&mut self, v: u32) {
        self.m()[field::DEST_QP].copy_from_slice(&v.to_be_bytes()[1..]);
    }
    pub fn set_ack_req(&mut self, ack_req: bool, resv7: u8) {
        self.m()[field::ACK_REQ] = (u8::from(ack_req) << 7) | (resv7 & 0x7F);
    }
    pub fn set_psn(&mut self, v: Psn) {
        self.m()[field::PSN].copy_from_slice(&v.value().to_be_bytes()[1..]);
    }
}

/// The decoded BTH.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BthRepr {
    pub opcode: Opcode,
    pub solicited_event: bool,
    pub mig_req: bool,
    pub pad_count: u8,
    pub tver: u8,
    pub pkey: u16,
    pub fecn: bool,
    pub becn: bool,
    /// Reserved bits; kept so that a frame re-emits byte for byte.
    pub resv6: u8,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub resv7: u8,
    pub psn: Psn,
}

impl BthRepr {
    pub const LEN: usize = 12;
    /// The P_Key every RoCE NIC sends unless partitions are configured.
    pub const DEFAULT_PKEY: u16 = 0xFFFF;

    pub fn parse(buf: &[u8]) -> Result<BthRepr> {
        let v = Bth::new_checked(buf)?;
        Ok(BthRepr {
            opcode: v.opcode(),
            solicited_event: v.solicited_event(),
            mig_req: v.mig_req(),
            pad_count: v.pad_count(),
            tver: v.tver(),
            pkey: v.pkey(),
            fecn: v.fecn(),
            becn: v.becn(),
            resv6: v.resv6(),
            dest_qp: v.dest_qp(),
            ack_req: v.ack_req(),
            resv7: v.resv7(),
            psn: v.psn(),
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    /// Writes the header into the first 12 bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        let mut v = Bth::new_unchecked(&mut buf[..Self::LEN]);
        v.set_opcode(self.opcode);
        v.set_flags(
            self.solicited_event,
            self.mig_req,
            self.pad_count,
            self.tver,
        );
        v.set_pkey(self.pkey);
        v.set_fecn_becn(self.fecn, self.becn, self.resv6);
        v.set_dest_qp(self.dest_qp);
        v.set_ack_req(self.ack_req, self.resv7);
        v.set_psn(self.psn);
    }

    /// Checks the fields a writer controls; a reader never fails on them.
    pub fn check(&self) -> Result<()> {
        let bad = |field, value: u64, expected| Error::Invalid {
            layer: Layer::Bth,
            offset: 0,
            field,
            value,
            expected,
        };
        if self.pad_count > 3 {
            return Err(bad("pad_count", self.pad_count.into(), "expected 0..=3"));
        }
        if self.dest_qp > 0xFF_FFFF {
            return Err(bad("dest_qp", self.dest_qp.into(), "expected a 24-bit QPN"));
        }
        Ok(())
    }
}

/// Offset of the byte the ICRC masks inside a BTH.
pub(crate) const ICRC_MASKED_BYTE: usize = field::FECN_BECN;

#[cfg(test)]
mod tests {
    use super::*;

    // The ConnectX-4 Lx CNP captured in scapy's test/contrib/roce.uts:
    // `81 00 ffff 40 000118 00 000000`.
    const CNP_BTH: [u8; 12] = [
        0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn parses_a_real_cnp_bth() {
        let r = BthRepr::parse(&CNP_BTH).unwrap();
        assert_eq!(r.opcode, Opcode::CNP);
        assert!(r.becn && !r.fecn && !r.ack_req);
        assert_eq!(r.pkey, 0xFFFF);
        assert_eq!(r.dest_qp, 0x118);
        assert_eq!(r.psn, Psn::new(0));
    }

    #[test]
    fn every_field_lands_in_its_bits() {
        let r = BthRepr {
            opcode: Opcode(0x24),
            solicited_event: true,
            mig_req: true,
            pad_count: 2,
            tver: 0,
            pkey: 0x8001,
            fecn: true,
            becn: false,
            resv6: 0,
            dest_qp: 0xD3,
            ack_req: true,
            resv7: 0,
            psn: Psn::new(13571856),
        };
        let mut buf = [0xa5u8; 12];
        r.emit(&mut buf);
        assert_eq!(
            buf,
            [
                0x24, 0xE0, 0x80, 0x01, 0x80, 0x00, 0x00, 0xD3, 0x80, 0xCF, 0x17, 0x10
            ]
        );
        assert_eq!(BthRepr::parse(&buf).unwrap(), r);
    }

    #[test]
    fn short_buffer_names_layer_and_lengths() {
        let e = BthRepr::parse(&CNP_BTH[..7]).unwrap_err();
        assert_eq!(
            e,
            Error::Truncated {
                layer: Layer::Bth,
                offset: 0,
                required: 12,
                present: 7
            }
        );
        assert_eq!(
            e.to_string(),
            "BTH at offset 0: 12 bytes required, 7 present"
        );
    }
}
