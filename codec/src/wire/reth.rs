//! RDMA Extended Transport Header: where an RDMA WRITE or READ goes.
//!
//! ```text
//! +-------------------------------+---------------+---------------+
//! |       Virtual Address (64)    |  R_Key (32)   | DMA Length(32)|
//! +-------------------------------+---------------+---------------+
//! ```

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::{be_u32, be_u64};

mod field {
    use core::ops::Range;
    pub const VA: Range<usize> = 0..8;
    pub const RKEY: Range<usize> = 8..12;
    pub const DMA_LEN: Range<usize> = 12..16;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RethRepr {
    pub va: u64,
    pub rkey: u32,
    pub dma_len: u32,
}

impl RethRepr {
    pub const LEN: usize = 16;

    pub fn parse(buf: &[u8]) -> Result<RethRepr> {
        let (va, rkey, dma_len) =
            parse_fixed(buf, Layer::Reth, Self::LEN, (be_u64, be_u32, be_u32))?;
        Ok(RethRepr { va, rkey, dma_len })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::VA].copy_from_slice(&self.va.to_be_bytes());
        buf[field::RKEY].copy_from_slice(&self.rkey.to_be_bytes());
        buf[field::DMA_LEN].copy_from_slice(&self.dma_len.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The Soft-RoCE READ request of InfiniBandPacket.dat (SOURCES.md):
    // VA 0x00007fee260fb000, rkey 0x2b8, length 65536.
    const BYTES: [u8; 16] = [
        0x00, 0x00, 0x7f, 0xee, 0x26, 0x0f, 0xb0, 0x00, 0x00, 0x00, 0x02, 0xb8, 0x00, 0x01, 0x00,
        0x00,
    ];

    #[test]
    fn parse_and_emit() {
        let r = RethRepr::parse(&BYTES).unwrap();
        assert_eq!(
            r,
            RethRepr {
                va: 0x00007fee260fb000,
                rkey: 0x2b8,
                dma_len: 65536
            }
        );
        let mut buf = [0xa5; 16];
        r.emit(&mut buf);
        assert_eq!(buf, BYTES);
    }

    #[test]
    fn truncated() {
        let e = RethRepr::parse(&BYTES[..15]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "RETH at offset 0: 16 bytes required, 15 present"
        );
    }
}
