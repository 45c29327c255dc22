//! The RDMA CM's header in the private data of a CM REQ, and the service
//! ID it connects to (IBA Annex A11, "RDMA IP CM Service").
//!
//! ```text
//!  0          1            2               4                20               36
//!  +----------+------------+---------------+----------------+----------------+------------
//!  | version  | IP ver(4)  | source port   | source IP (16) | dest IP (16)   | consumer's
//!  |   0x00   | rsvd(4)    |               | v4: ::a.b.c.d  |                | private data
//!  +----------+------------+---------------+----------------+----------------+------------
//!
//!  service ID = 0x0000_0000_0106_0000 | destination port     (RDMA_PS_TCP = 0x0106)
//! ```
//!
//! Linux's `drivers/infiniband/core/cma.c` (`struct cma_hdr`,
//! `cma_format_hdr`; `CMA_VERSION` 0x00) writes it; an IPv4 address sits in
//! the last 4 bytes of its 16 with the first 12 zero (`union cma_ip_addr`).
//! The service ID is `RDMA_IB_IP_PS_TCP | port` (`include/rdma/rdma_cm.h`,
//! `rdma_get_service_id`). tshark 4.0 decodes the header as
//! `infiniband.cm.req.ip_cm.*` when the service ID has that form.

use core::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::error::{Error, Layer, Result, need};

mod field {
    use core::ops::Range;
    pub const VERSION: usize = 0;
    pub const IP_VERSION: usize = 1;
    pub const PORT: Range<usize> = 2..4;
    pub const SRC: Range<usize> = 4..20;
    pub const DST: Range<usize> = 20..36;
}

/// `RDMA_IB_IP_PS_TCP`: the service ID prefix of RDMA_PS_TCP connections.
pub const IP_PS_TCP: u64 = 0x0000_0000_0106_0000;
/// `RDMA_IB_IP_PS_MASK`.
pub const IP_PS_MASK: u64 = 0xFFFF_FFFF_FFFF_0000;
/// `CMA_VERSION`.
pub const CMA_VERSION: u8 = 0x00;

/// The service ID an RDMA_PS_TCP `rdma_connect` to `port` asks for.
pub fn service_id(port: u16) -> u64 {
    IP_PS_TCP | u64::from(port)
}

/// The destination port of an RDMA IP CM service ID, if it is one.
pub fn service_port(service_id: u64) -> Option<u16> {
    (service_id & IP_PS_MASK == IP_PS_TCP).then_some(service_id as u16)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmaHdr {
    pub version: u8,
    /// The source port of the active side (its rdma_cm_id's port).
    pub src_port: u16,
    /// Both IPv4 or both IPv6; the version nibble follows from them.
    pub src: IpAddr,
    pub dst: IpAddr,
}

fn addr(b: &[u8; 16], v4: bool) -> IpAddr {
    if v4 {
        IpAddr::V4(Ipv4Addr::new(b[12], b[13], b[14], b[15]))
    } else {
        IpAddr::V6(Ipv6Addr::from(*b))
    }
}

fn addr_bytes(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => {
            let mut b = [0; 16];
            b[12..].copy_from_slice(&v4.octets());
            b
        }
        IpAddr::V6(v6) => v6.octets(),
    }
}

impl CmaHdr {
    pub const LEN: usize = 36;

    pub fn new(src: IpAddr, src_port: u16, dst: IpAddr) -> CmaHdr {
        CmaHdr {
            version: CMA_VERSION,
            src_port,
            src,
            dst,
        }
    }

    pub fn parse(buf: &[u8]) -> Result<CmaHdr> {
        need(buf, Layer::Cm, Self::LEN)?;
        let ip_version = buf[field::IP_VERSION] >> 4;
        let v4 = match ip_version {
            4 => true,
            6 => false,
            v => {
                return Err(Error::Invalid {
                    layer: Layer::Cm,
                    offset: field::IP_VERSION,
                    field: "ip_version",
                    value: v.into(),
                    expected: "expected 4 or 6",
                });
            }
        };
        let src: [u8; 16] = buf[field::SRC].try_into().expect("16 bytes");
        let dst: [u8; 16] = buf[field::DST].try_into().expect("16 bytes");
        Ok(CmaHdr {
            version: buf[field::VERSION],
            src_port: u16::from_be_bytes([buf[2], buf[3]]),
            src: addr(&src, v4),
            dst: addr(&dst, v4),
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn ip_version(&self) -> u8 {
        if self.src.is_ipv4() { 4 } else { 6 }
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::VERSION] = self.version;
        buf[field::IP_VERSION] = self.ip_version() << 4;
        buf[field::PORT].copy_from_slice(&self.src_port.to_be_bytes());
        buf[field::SRC].copy_from_slice(&addr_bytes(self.src));
        buf[field::DST].copy_from_slice(&addr_bytes(self.dst));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ipv4_header_literal_bytes() {
        let h = CmaHdr::new(
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            0xb5c3,
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        );
        let mut buf = [0xa5; 36];
        h.emit(&mut buf);
        let mut want = [0u8; 36];
        want[1] = 0x40;
        want[2..4].copy_from_slice(&[0xb5, 0xc3]);
        want[16..20].copy_from_slice(&[10, 0, 0, 1]);
        want[32..36].copy_from_slice(&[10, 0, 0, 2]);
        assert_eq!(buf, want);
        assert_eq!(CmaHdr::parse(&buf).unwrap(), h);
    }

    #[test]
    fn service_id_of_port_18515() {
        assert_eq!(service_id(18515), 0x0000_0000_0106_4853);
        assert_eq!(service_port(0x0000_0000_0106_4853), Some(18515));
        assert_eq!(service_port(0x0000_0000_0111_4853), None);
    }

    #[test]
    fn bad_ip_version_names_the_field() {
        let e = CmaHdr::parse(&[0; 36]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "CM at offset 1: field `ip_version` is 0, expected 4 or 6"
        );
    }

    proptest! {
        #[test]
        fn round_trip(v6 in any::<bool>(), a in any::<[u8; 16]>(), b in any::<[u8; 16]>(), port in any::<u16>()) {
            let (src, dst) = if v6 {
                (IpAddr::V6(a.into()), IpAddr::V6(b.into()))
            } else {
                (IpAddr::V4(Ipv4Addr::new(a[0], a[1], a[2], a[3])), IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3])))
            };
            let h = CmaHdr::new(src, port, dst);
            let mut buf = [0xa5; 36];
            h.emit(&mut buf);
            prop_assert_eq!(CmaHdr::parse(&buf).unwrap(), h);
        }
    }
}
