//! The options of an IPv4 header, and of a TCP header: the same container
//! for both (at most 40 bytes, a multiple of 4). IPv4 itself is decoded in
//! [`crate::frame`], TCP in [`crate::wire::tcp`]; the type is here, below
//! both, and public as `roce_codec::Ipv4Options` (and
//! [`crate::wire::tcp::TcpOptions`]).

/// IPv4 options, at most 40 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv4Options {
    bytes: [u8; 40],
    len: u8,
}

impl Default for Ipv4Options {
    fn default() -> Self {
        Ipv4Options {
            bytes: [0; 40],
            len: 0,
        }
    }
}

impl Ipv4Options {
    /// Options of `bytes`; `None` unless the length is a multiple of 4 up to 40.
    pub fn new(bytes: &[u8]) -> Option<Ipv4Options> {
        if bytes.len() > 40 || bytes.len() % 4 != 0 {
            return None;
        }
        let mut o = Ipv4Options {
            bytes: [0; 40],
            len: bytes.len() as u8,
        };
        o.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(o)
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}
