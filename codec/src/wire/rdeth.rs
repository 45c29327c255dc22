//! Reliable Datagram Extended Transport Header: the EE context of an RD
//! packet (8 reserved bits, 24-bit EE context). RoCE NICs do not implement
//! RD; the header is decoded so that such frames are shown, not rejected.

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::{be_u8, be_u24};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RdethRepr {
    pub resv: u8,
    pub ee_context: u32,
}

impl RdethRepr {
    pub const LEN: usize = 4;

    pub fn parse(buf: &[u8]) -> Result<RdethRepr> {
        let (resv, ee_context) = parse_fixed(buf, Layer::Rdeth, Self::LEN, (be_u8, be_u24))?;
        Ok(RdethRepr { resv, ee_context })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.resv;
        buf[1..4].copy_from_slice(&self.ee_context.to_be_bytes()[1..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = RdethRepr {
            resv: 0,
            ee_context: 0xABCDEF,
        };
        let mut buf = [0xa5; 4];
        r.emit(&mut buf);
        assert_eq!(buf, [0, 0xAB, 0xCD, 0xEF]);
        assert_eq!(RdethRepr::parse(&buf).unwrap(), r);
    }
}
