//! Wire formats, one file per header in the manner of smoltcp's `wire`:
//! a private `field` module of byte ranges, a `Repr` with `parse`, `emit`
//! and `buffer_len`, and tests that emit into a buffer pre-filled with 0xa5
//! so that a forgotten field shows.
//!
//! Ethernet, 802.1Q, IPv4, IPv6 and UDP are decoded with etherparse in
//! [`crate::frame`]; the InfiniBand headers, MAC control, the management
//! datagrams of connection set-up (MAD, CM, the RDMA CM header) and the
//! TCP and ICMPv4 headers of the host stack are here.

pub mod aeth;
pub mod atomic_ack_eth;
pub mod atomic_eth;
pub mod bth;
pub(crate) mod checksum;
pub mod cm;
pub mod cma;
pub mod cnp;
pub mod deth;
pub mod feth;
pub mod grh;
pub mod ib;
pub mod icmpv4;
pub mod ieth;
pub mod immdt;
pub mod int;
pub mod mac_control;
pub mod mad;
pub mod opcode;
pub(crate) mod options;
pub mod rdeth;
pub mod reth;
pub mod tcp;
pub mod xrceth;

use crate::error::{Error, Layer, Result, need};

type NomError<'a> = nom::error::Error<&'a [u8]>;

/// Runs a nom parser over a fixed-size header after checking the length, so
/// that a short buffer gives our error (layer, required, present) rather than
/// nom's.
pub(crate) fn parse_fixed<'a, O>(
    buf: &'a [u8],
    layer: Layer,
    len: usize,
    mut parser: impl nom::Parser<&'a [u8], Output = O, Error = NomError<'a>>,
) -> Result<O> {
    need(buf, layer, len)?;
    parser
        .parse(&buf[..len])
        .map(|(_, o)| o)
        .map_err(|_| Error::Truncated {
            layer,
            offset: 0,
            required: len,
            present: buf.len(),
        })
}
