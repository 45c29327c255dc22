//! The body of a RoCEv2 Congestion Notification Packet: 16 reserved bytes
//! after a BTH with opcode 0x81 and BECN set. A CNP carries no other header
//! and no payload; the bytes are zero on the wire and kept as sent.

use crate::error::{Layer, Result, need};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CnpRepr {
    pub reserved: [u8; 16],
}

impl CnpRepr {
    pub const LEN: usize = 16;

    pub fn parse(buf: &[u8]) -> Result<CnpRepr> {
        need(buf, Layer::Cnp, Self::LEN)?;
        Ok(CnpRepr {
            reserved: buf[..Self::LEN].try_into().unwrap(),
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[..Self::LEN].copy_from_slice(&self.reserved);
    }

    pub fn reserved_is_zero(&self) -> bool {
        self.reserved.iter().all(|&b| b == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut buf = [0xa5; 16];
        CnpRepr::default().emit(&mut buf);
        assert_eq!(buf, [0; 16]);
        assert!(CnpRepr::parse(&buf).unwrap().reserved_is_zero());
        assert_eq!(
            CnpRepr::parse(&buf[..4]).unwrap_err().to_string(),
            "CNP at offset 0: 16 bytes required, 4 present"
        );
    }
}
