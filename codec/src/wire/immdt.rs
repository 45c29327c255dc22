//! Immediate Data: 4 opaque bytes delivered to the receiver's completion.
//!
//! Applications treat the value as a 32-bit number in network order, which
//! is how it is shown here.

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::be_u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ImmDtRepr {
    pub data: u32,
}

impl ImmDtRepr {
    pub const LEN: usize = 4;

    pub fn parse(buf: &[u8]) -> Result<ImmDtRepr> {
        Ok(ImmDtRepr {
            data: parse_fixed(buf, Layer::ImmDt, Self::LEN, be_u32)?,
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::LEN].copy_from_slice(&self.data.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = [0xa5; 4];
        ImmDtRepr { data: 0x01020304 }.emit(&mut buf);
        assert_eq!(buf, [1, 2, 3, 4]);
        assert_eq!(ImmDtRepr::parse(&buf).unwrap().data, 0x01020304);
        assert!(ImmDtRepr::parse(&buf[..3]).is_err());
    }
}
