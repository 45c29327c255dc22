//! The common header of an InfiniBand Management Datagram (IBA 1.2 §13.4.2).
//!
//! ```text
//!  0        8        16       24       32
//!  +--------+--------+--------+-+------+
//!  |BaseVer | MgmtCl |ClassVer|R|Method|    BaseVer 1; R = response bit
//!  +--------+--------+--------+-+------+
//!  |     Status      | ClassSpecific   |
//!  +-----------------+-----------------+
//!  |       Transaction ID (64)         |
//!  |                                   |
//!  +-----------------+-----------------+
//!  |  Attribute ID   |    Reserved     |
//!  +-----------------+-----------------+
//!  |       Attribute Modifier          |
//!  +-----------------------------------+
//!  |  232 bytes of class data (the CM message, crate::wire::cm)
//! ```
//!
//! A MAD is always 256 bytes. On RoCE it travels as the payload of a UD
//! SEND ONLY to QP1, the General Services Interface, with a DETH carrying
//! the GSI Q_Key 0x80010000 and source QP 1 ([`MadRepr::gsi_packet`]).

use crate::error::{Layer, Result};
use crate::psn::Psn;
use crate::wire::deth::DethRepr;
use crate::wire::ib::{IbPacket, IbRepr};
use crate::wire::opcode::Opcode;
use crate::wire::parse_fixed;
use nom::number::complete::{be_u8, be_u16, be_u32, be_u64};

mod field {
    use core::ops::Range;
    pub const BASE_VERSION: usize = 0;
    pub const MGMT_CLASS: usize = 1;
    pub const CLASS_VERSION: usize = 2;
    pub const METHOD: usize = 3;
    pub const STATUS: Range<usize> = 4..6;
    pub const CLASS_SPECIFIC: Range<usize> = 6..8;
    pub const TRANSACTION_ID: Range<usize> = 8..16;
    pub const ATTRIBUTE_ID: Range<usize> = 16..18;
    pub const RESV: Range<usize> = 18..20;
    pub const ATTRIBUTE_MODIFIER: Range<usize> = 20..24;
}

/// The QP every MAD is addressed to on RoCE (there is no QP0, the SMI).
pub const GSI_QPN: u32 = 1;
/// The opcode of the UD packet that carries a MAD: UD SEND ONLY.
pub const UD_SEND_ONLY: Opcode = Opcode(0x64);
/// Management class of the Communication Manager.
pub const MGMT_CLASS_CM: u8 = 0x07;
/// Method `Send`, which every CM message uses.
pub const METHOD_SEND: u8 = 0x03;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct MadRepr {
    pub base_version: u8,
    pub mgmt_class: u8,
    pub class_version: u8,
    /// The whole byte: the response bit (0x80) and the 7-bit method.
    pub method: u8,
    pub status: u16,
    pub class_specific: u16,
    pub transaction_id: u64,
    pub attribute_id: u16,
    /// Reserved, kept for byte-exact re-emission.
    pub resv: u16,
    pub attribute_modifier: u32,
}

impl MadRepr {
    /// The common header.
    pub const HEADER_LEN: usize = 24;
    /// A whole MAD, header and class data.
    pub const LEN: usize = 256;
    /// The class data after the header.
    pub const DATA_LEN: usize = Self::LEN - Self::HEADER_LEN;

    pub fn parse(buf: &[u8]) -> Result<MadRepr> {
        let ((base_version, mgmt_class, class_version, method), rest) = parse_fixed(
            buf,
            Layer::Mad,
            Self::HEADER_LEN,
            (
                (be_u8, be_u8, be_u8, be_u8),
                (be_u16, be_u16, be_u64, be_u16, be_u16, be_u32),
            ),
        )?;
        let (status, class_specific, transaction_id, attribute_id, resv, attribute_modifier) = rest;
        Ok(MadRepr {
            base_version,
            mgmt_class,
            class_version,
            method,
            status,
            class_specific,
            transaction_id,
            attribute_id,
            resv,
            attribute_modifier,
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::HEADER_LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::BASE_VERSION] = self.base_version;
        buf[field::MGMT_CLASS] = self.mgmt_class;
        buf[field::CLASS_VERSION] = self.class_version;
        buf[field::METHOD] = self.method;
        buf[field::STATUS].copy_from_slice(&self.status.to_be_bytes());
        buf[field::CLASS_SPECIFIC].copy_from_slice(&self.class_specific.to_be_bytes());
        buf[field::TRANSACTION_ID].copy_from_slice(&self.transaction_id.to_be_bytes());
        buf[field::ATTRIBUTE_ID].copy_from_slice(&self.attribute_id.to_be_bytes());
        buf[field::RESV].copy_from_slice(&self.resv.to_be_bytes());
        buf[field::ATTRIBUTE_MODIFIER].copy_from_slice(&self.attribute_modifier.to_be_bytes());
    }

    /// Whether the method is a response (the R bit).
    pub fn is_response(&self) -> bool {
        self.method & 0x80 != 0
    }

    /// The IB packet that carries one MAD on RoCE: a UD SEND ONLY to QP1
    /// with the GSI Q_Key and source QP 1 (a MAD is sent from one GSI to
    /// another), 256 bytes of payload. `psn` is the sending QP1's.
    pub fn gsi_packet(psn: Psn) -> IbRepr {
        IbRepr::new(UD_SEND_ONLY, GSI_QPN, psn, Self::LEN as u32).with_deth(DethRepr {
            qkey: DethRepr::GSI_QKEY,
            resv: 0,
            src_qp: GSI_QPN,
        })
    }

    /// The MAD bytes of a decoded packet, if it is a complete UD SEND ONLY
    /// to QP1 with 256 bytes of payload.
    pub fn payload_of<'a>(ib: &IbPacket<'a>) -> Option<&'a [u8]> {
        let is_gsi = ib.bth.opcode == UD_SEND_ONLY && ib.bth.dest_qp == GSI_QPN;
        (is_gsi && ib.payload_len == Some(Self::LEN as u32) && ib.payload.len() == Self::LEN)
            .then_some(ib.payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The header of a CM REQ as Linux's ib_cm sends it.
    const REQ_HEADER: [u8; 24] = [
        0x01, 0x07, 0x02, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x2c, 0x7a, 0x15,
        0x8e, 0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    ];

    #[test]
    fn parses_literal_bytes() {
        let m = MadRepr::parse(&REQ_HEADER).unwrap();
        assert_eq!(m.base_version, 1);
        assert_eq!(m.mgmt_class, MGMT_CLASS_CM);
        assert_eq!(m.class_version, 2);
        assert_eq!(m.method, METHOD_SEND);
        assert!(!m.is_response());
        assert_eq!(m.transaction_id, 0x0000_0001_2c7a_158e);
        assert_eq!(m.attribute_id, 0x0010);
    }

    #[test]
    fn emit_writes_every_byte() {
        let m = MadRepr::parse(&REQ_HEADER).unwrap();
        let mut buf = [0xa5; 24];
        m.emit(&mut buf);
        assert_eq!(buf, REQ_HEADER);
    }

    #[test]
    fn short_buffer_names_the_layer() {
        let e = MadRepr::parse(&REQ_HEADER[..20]).unwrap_err();
        assert_eq!(e.layer(), Layer::Mad);
        assert_eq!(
            e.to_string(),
            "MAD at offset 0: 24 bytes required, 20 present"
        );
    }

    #[test]
    fn gsi_packet_is_a_ud_send_to_qp1() {
        let ib = MadRepr::gsi_packet(Psn::new(5));
        ib.check().unwrap();
        assert_eq!(ib.bth.dest_qp, 1);
        assert_eq!(ib.ext.deth().unwrap().qkey, 0x8001_0000);
        assert_eq!(ib.ext.deth().unwrap().src_qp, 1);
        // BTH 12 + DETH 8 + MAD 256 + ICRC 4.
        assert_eq!(ib.buffer_len(), 280);
    }

    proptest! {
        #[test]
        fn round_trip(b in any::<[u8; 24]>()) {
            let m = MadRepr::parse(&b).unwrap();
            let mut out = [0xa5; 24];
            m.emit(&mut out);
            prop_assert_eq!(out, b);
        }
    }
}
