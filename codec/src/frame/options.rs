//! How to decode: which UDP ports are RoCEv2, and whether to check ICRCs.
//!
//! The same options serve the strict and the lax parse
//! ([`Frame::parse`](super::Frame::parse) and
//! [`Frame::parse_lax`](super::Frame::parse_lax)); what differs between
//! those is only whether a stop is an error. Both types are `Copy` and
//! fixed-size so that decoding never allocates.

/// The UDP destination ports decoded as RoCEv2 (4791 unless configured).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortSet {
    ports: [u16; PortSet::MAX],
    len: u8,
}

impl PortSet {
    pub const MAX: usize = 8;

    /// A set of up to [`PortSet::MAX`] ports; `None` if there are more.
    pub fn new(ports: &[u16]) -> Option<PortSet> {
        if ports.len() > Self::MAX {
            return None;
        }
        let mut s = PortSet {
            ports: [0; Self::MAX],
            len: ports.len() as u8,
        };
        s.ports[..ports.len()].copy_from_slice(ports);
        Some(s)
    }

    pub fn contains(&self, port: u16) -> bool {
        self.ports[..self.len as usize].contains(&port)
    }

    pub fn as_slice(&self) -> &[u16] {
        &self.ports[..self.len as usize]
    }
}

impl Default for PortSet {
    fn default() -> Self {
        PortSet::new(&[crate::hash::ROCE_V2_UDP_DPORT]).unwrap()
    }
}

/// How to decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseOptions {
    pub roce_v2_ports: PortSet,
    /// Compute and compare the ICRC of every complete RoCE packet.
    pub verify_icrc: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            roce_v2_ports: PortSet::default(),
            verify_icrc: true,
        }
    }
}
