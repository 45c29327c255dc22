//! XRC Extended Transport Header: the XRC SRQ a request is destined for
//! (8 reserved bits, 24-bit XRC SRQ number).

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::{be_u8, be_u24};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct XrcethRepr {
    pub resv: u8,
    pub xrc_srq: u32,
}

impl XrcethRepr {
    pub const LEN: usize = 4;

    pub fn parse(buf: &[u8]) -> Result<XrcethRepr> {
        let (resv, xrc_srq) = parse_fixed(buf, Layer::Xrceth, Self::LEN, (be_u8, be_u24))?;
        Ok(XrcethRepr { resv, xrc_srq })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.resv;
        buf[1..4].copy_from_slice(&self.xrc_srq.to_be_bytes()[1..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = XrcethRepr {
            resv: 0,
            xrc_srq: 0x000102,
        };
        let mut buf = [0xa5; 4];
        r.emit(&mut buf);
        assert_eq!(buf, [0, 0, 1, 2]);
        assert_eq!(XrcethRepr::parse(&buf).unwrap(), r);
    }
}
