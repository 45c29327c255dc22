//! FLUSH Extended Transport Header (IBA 1.5): which persistence level a FLUSH
//! asks for. Bits 5..4 of the 32-bit word are the selectivity level, bits
//! 3..0 the placement type; the rest is reserved and kept as sent.

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::be_u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FethRepr {
    pub raw: u32,
}

impl FethRepr {
    pub const LEN: usize = 4;

    pub fn selectivity_level(&self) -> u8 {
        ((self.raw >> 4) & 0x3) as u8
    }

    pub fn placement_type(&self) -> u8 {
        (self.raw & 0xF) as u8
    }

    pub fn parse(buf: &[u8]) -> Result<FethRepr> {
        Ok(FethRepr {
            raw: parse_fixed(buf, Layer::Feth, Self::LEN, be_u32)?,
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::LEN].copy_from_slice(&self.raw.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_fields() {
        let r = FethRepr::parse(&[0, 0, 0, 0x31]).unwrap();
        assert_eq!(r.selectivity_level(), 3);
        assert_eq!(r.placement_type(), 1);
        let mut buf = [0xa5; 4];
        r.emit(&mut buf);
        assert_eq!(buf, [0, 0, 0, 0x31]);
    }
}
