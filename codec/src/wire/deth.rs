//! Datagram Extended Transport Header: Q_Key and source QP of UD (and RD)
//! packets.
//!
//! ```text
//! +-----------------+--------+----------------+
//! |   Q_Key (32)    | rsvd(8)|  SrcQP (24)    |
//! +-----------------+--------+----------------+
//! ```

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::{be_u8, be_u24, be_u32};

mod field {
    use core::ops::Range;
    pub const QKEY: Range<usize> = 0..4;
    pub const RESV: usize = 4;
    pub const SRC_QP: Range<usize> = 5..8;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DethRepr {
    pub qkey: u32,
    /// Reserved byte, kept for byte-exact re-emission.
    pub resv: u8,
    pub src_qp: u32,
}

impl DethRepr {
    pub const LEN: usize = 8;
    /// The well-known Q_Key of the GSI (QP1) used by MADs and RDMA-CM.
    pub const GSI_QKEY: u32 = 0x8001_0000;

    pub fn parse(buf: &[u8]) -> Result<DethRepr> {
        let (qkey, resv, src_qp) =
            parse_fixed(buf, Layer::Deth, Self::LEN, (be_u32, be_u8, be_u24))?;
        Ok(DethRepr { qkey, resv, src_qp })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::QKEY].copy_from_slice(&self.qkey.to_be_bytes());
        buf[field::RESV] = self.resv;
        buf[field::SRC_QP].copy_from_slice(&self.src_qp.to_be_bytes()[1..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = DethRepr {
            qkey: DethRepr::GSI_QKEY,
            resv: 0,
            src_qp: 1,
        };
        let mut buf = [0xa5; 8];
        r.emit(&mut buf);
        assert_eq!(buf, [0x80, 0x01, 0, 0, 0, 0, 0, 1]);
        assert_eq!(DethRepr::parse(&buf).unwrap(), r);
    }
}
