//! Invalidate Extended Transport Header: the R_Key a SEND_WITH_INVALIDATE
//! asks the responder to invalidate.

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::be_u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct IethRepr {
    pub rkey: u32,
}

impl IethRepr {
    pub const LEN: usize = 4;

    pub fn parse(buf: &[u8]) -> Result<IethRepr> {
        Ok(IethRepr {
            rkey: parse_fixed(buf, Layer::Ieth, Self::LEN, be_u32)?,
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::LEN].copy_from_slice(&self.rkey.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = [0xa5; 4];
        IethRepr { rkey: 0xcafe0001 }.emit(&mut buf);
        assert_eq!(buf, [0xca, 0xfe, 0, 1]);
        assert_eq!(IethRepr::parse(&buf).unwrap().rkey, 0xcafe0001);
    }
}
