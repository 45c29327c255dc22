//! Atomic Extended Transport Header: the operands of COMPARE_SWAP and
//! FETCH_ADD (28 bytes, packed).
//!
//! ```text
//! +-------------+-----------+-------------------+-------------------+
//! |   VA (64)   | R_Key(32) | Swap or Add (64)  |   Compare (64)    |
//! +-------------+-----------+-------------------+-------------------+
//! ```

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::{be_u32, be_u64};

mod field {
    use core::ops::Range;
    pub const VA: Range<usize> = 0..8;
    pub const RKEY: Range<usize> = 8..12;
    pub const SWAP_ADD: Range<usize> = 12..20;
    pub const COMPARE: Range<usize> = 20..28;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AtomicEthRepr {
    pub va: u64,
    pub rkey: u32,
    pub swap_add: u64,
    pub compare: u64,
}

impl AtomicEthRepr {
    pub const LEN: usize = 28;

    pub fn parse(buf: &[u8]) -> Result<AtomicEthRepr> {
        let (va, rkey, swap_add, compare) = parse_fixed(
            buf,
            Layer::AtomicEth,
            Self::LEN,
            (be_u64, be_u32, be_u64, be_u64),
        )?;
        Ok(AtomicEthRepr {
            va,
            rkey,
            swap_add,
            compare,
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::VA].copy_from_slice(&self.va.to_be_bytes());
        buf[field::RKEY].copy_from_slice(&self.rkey.to_be_bytes());
        buf[field::SWAP_ADD].copy_from_slice(&self.swap_add.to_be_bytes());
        buf[field::COMPARE].copy_from_slice(&self.compare.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_packed_without_padding() {
        let r = AtomicEthRepr {
            va: 0x0102030405060708,
            rkey: 0x090a0b0c,
            swap_add: 0x1112131415161718,
            compare: 0x2122232425262728,
        };
        let mut buf = [0xa5; 28];
        r.emit(&mut buf);
        assert_eq!(&buf[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&buf[8..12], &[9, 10, 11, 12]);
        assert_eq!(
            &buf[12..20],
            &[0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18]
        );
        assert_eq!(
            &buf[20..],
            &[0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28]
        );
        assert_eq!(AtomicEthRepr::parse(&buf).unwrap(), r);
        assert!(AtomicEthRepr::parse(&buf[..27]).is_err());
    }
}
