//! Global Route Header: the 40 bytes that follow the Ethernet header in
//! RoCE v1 (EtherType 0x8915). Laid out like an IPv6 header, with GIDs as
//! addresses and next header 0x1B for the IBA transport.
//!
//! ```text
//! +------+---------+----------------+
//! |IPVer | TClass  |   Flow Label   |  4 + 8 + 20 bits
//! +------+---------+-------+--------+
//! |     PayLen     | NxtHdr| HopLmt |
//! +----------------+-------+--------+
//! |        SGID (128 bits)          |
//! |        DGID (128 bits)          |
//! +---------------------------------+
//! ```

use crate::error::{Error, Layer, Result, need};

mod field {
    use core::ops::Range;
    pub const VER_TC_FL: Range<usize> = 0..4;
    pub const PAYLEN: Range<usize> = 4..6;
    pub const NXTHDR: usize = 6;
    pub const HOPLMT: usize = 7;
    pub const SGID: Range<usize> = 8..24;
    pub const DGID: Range<usize> = 24..40;
}

/// Next-header value that announces an IBA transport header.
pub const NXTHDR_IBA: u8 = 0x1B;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GrhRepr {
    pub ip_ver: u8,
    pub traffic_class: u8,
    pub flow_label: u32,
    pub next_header: u8,
    pub hop_limit: u8,
    pub sgid: [u8; 16],
    pub dgid: [u8; 16],
}

impl Default for GrhRepr {
    fn default() -> Self {
        GrhRepr {
            ip_ver: 6,
            traffic_class: 0,
            flow_label: 0,
            next_header: NXTHDR_IBA,
            hop_limit: 1,
            sgid: [0; 16],
            dgid: [0; 16],
        }
    }
}

impl GrhRepr {
    pub const LEN: usize = 40;

    pub fn parse(buf: &[u8]) -> Result<GrhRepr> {
        need(buf, Layer::Grh, Self::LEN)?;
        let w = u32::from_be_bytes(buf[field::VER_TC_FL].try_into().unwrap());
        let ip_ver = (w >> 28) as u8;
        if ip_ver != 6 {
            return Err(Error::Invalid {
                layer: Layer::Grh,
                offset: 0,
                field: "ip_ver",
                value: ip_ver.into(),
                expected: "expected 6",
            });
        }
        Ok(GrhRepr {
            ip_ver,
            traffic_class: (w >> 20) as u8,
            flow_label: w & 0xF_FFFF,
            next_header: buf[field::NXTHDR],
            hop_limit: buf[field::HOPLMT],
            sgid: buf[field::SGID].try_into().unwrap(),
            dgid: buf[field::DGID].try_into().unwrap(),
        })
    }

    /// PayLen of a GRH in `buf` (at least 40 bytes): the bytes after the
    /// GRH, BTH through ICRC. It is derived from the packet, so it is not a
    /// field of the repr.
    pub fn pay_len(buf: &[u8]) -> u16 {
        u16::from_be_bytes([buf[field::PAYLEN.start], buf[field::PAYLEN.start + 1]])
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn dscp(&self) -> u8 {
        self.traffic_class >> 2
    }

    pub fn ecn(&self) -> u8 {
        self.traffic_class & 0x3
    }

    pub fn emit(&self, buf: &mut [u8], pay_len: u16) {
        let w = (u32::from(self.ip_ver & 0xF) << 28)
            | (u32::from(self.traffic_class) << 20)
            | (self.flow_label & 0xF_FFFF);
        buf[field::VER_TC_FL].copy_from_slice(&w.to_be_bytes());
        buf[field::PAYLEN].copy_from_slice(&pay_len.to_be_bytes());
        buf[field::NXTHDR] = self.next_header;
        buf[field::HOPLMT] = self.hop_limit;
        buf[field::SGID].copy_from_slice(&self.sgid);
        buf[field::DGID].copy_from_slice(&self.dgid);
    }

    /// The GRH as the ICRC sees it: traffic class, flow label and hop limit
    /// replaced by ones (they may change in flight).
    pub(crate) fn icrc_masked(raw: &[u8]) -> [u8; 40] {
        let mut m: [u8; 40] = raw[..40].try_into().unwrap();
        m[0] |= 0x0F;
        m[1] = 0xFF;
        m[2] = 0xFF;
        m[3] = 0xFF;
        m[field::HOPLMT] = 0xFF;
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_masks() {
        let r = GrhRepr {
            traffic_class: 0x6A,
            flow_label: 0xABCDE,
            hop_limit: 64,
            sgid: [0xfe; 16],
            dgid: [0x80; 16],
            ..GrhRepr::default()
        };
        let mut buf = [0xa5; 40];
        r.emit(&mut buf, 0x1234);
        assert_eq!(GrhRepr::pay_len(&buf), 0x1234);
        assert_eq!(&buf[..8], &[0x66, 0xAA, 0xBC, 0xDE, 0x12, 0x34, 0x1B, 64]);
        assert_eq!(GrhRepr::parse(&buf).unwrap(), r);
        let m = GrhRepr::icrc_masked(&buf);
        assert_eq!(&m[..8], &[0x6F, 0xFF, 0xFF, 0xFF, 0x12, 0x34, 0x1B, 0xFF]);
        assert_eq!(r.dscp(), 26);
        assert_eq!(r.ecn(), 2);
    }

    #[test]
    fn rejects_other_versions() {
        let mut buf = [0u8; 40];
        buf[0] = 0x40;
        let e = GrhRepr::parse(&buf).unwrap_err();
        assert_eq!(
            e.to_string(),
            "GRH at offset 0: field `ip_ver` is 4, expected 6"
        );
    }
}
