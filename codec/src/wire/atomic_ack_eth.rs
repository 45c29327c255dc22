//! Atomic Acknowledge Extended Transport Header: the value the remote memory
//! held before the atomic operation (8 bytes).

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::be_u64;

mod field {
    use core::ops::Range;
    pub const ORIG: Range<usize> = 0..8;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AtomicAckEthRepr {
    pub orig: u64,
}

impl AtomicAckEthRepr {
    pub const LEN: usize = 8;

    pub fn parse(buf: &[u8]) -> Result<AtomicAckEthRepr> {
        let orig = parse_fixed(buf, Layer::AtomicAckEth, Self::LEN, be_u64)?;
        Ok(AtomicAckEthRepr { orig })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::ORIG].copy_from_slice(&self.orig.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = AtomicAckEthRepr {
            orig: 0xdead_beef_0000_0001,
        };
        let mut buf = [0xa5; 8];
        r.emit(&mut buf);
        assert_eq!(buf, [0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1]);
        assert_eq!(AtomicAckEthRepr::parse(&buf).unwrap(), r);
    }
}
