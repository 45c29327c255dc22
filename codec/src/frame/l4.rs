//! Layer 4 of the host stack: TCP (perftest's out-of-band exchange) and
//! ICMPv4 (the port unreachable a host answers stray RoCEv2 with).
//!
//! ```text
//!  IPv4/IPv6 ── protocol 6 ── TCP header (crate::wire::tcp) ── payload (opaque)
//!  IPv4      ── protocol 1 ── ICMP header (crate::wire::icmpv4) ── data (a quoted datagram)
//! ```
//!
//! The headers are read with [`crate::wire`]; what belongs to the frame is
//! where the segment starts and how long the IP header says it is. As with
//! UDP, a later fragment carries no header and stays opaque.

use super::{Frame, IpRepr, Net, split_declared};
use crate::error::{Error, Layer, Result};
use crate::wire::icmpv4::Icmpv4Repr;
use crate::wire::tcp::TcpRepr;

/// The captured part of `declared` bytes at `off`, or the error when not
/// even `min` bytes of header are there (in the declared length or the
/// capture).
fn segment(bytes: &[u8], layer: Layer, off: usize, declared: usize, min: usize) -> Result<&[u8]> {
    let (seg, _) = split_declared(bytes, off, declared);
    let present = seg.len().min(declared);
    if present < min {
        return Err(Error::Truncated {
            layer,
            offset: off,
            required: min,
            present,
        });
    }
    Ok(seg)
}

pub(super) fn parse_tcp<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    ip: IpRepr,
    off: usize,
    declared: usize,
) -> Result<()> {
    let seg = segment(bytes, Layer::Tcp, off, declared, TcpRepr::MIN_LEN)?;
    let complete = seg.len() == declared;
    let (tcp, hl) = TcpRepr::parse(seg, ip.src(), ip.dst(), complete).map_err(|e| match e {
        // A data offset beyond the declared segment is a lie, not a cut.
        Error::Truncated { required, .. } if required > declared => Error::Invalid {
            layer: Layer::Tcp,
            offset: off + 12,
            field: "data_offset",
            value: (required / 4) as u64,
            expected: "larger than the segment",
        },
        e => e.at(off),
    })?;
    f.net = Net::Tcp {
        ip,
        tcp,
        payload: &seg[hl..],
        declared_len: declared - hl,
    };
    Ok(())
}

pub(super) fn parse_icmpv4<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    ip: IpRepr,
    off: usize,
    declared: usize,
) -> Result<()> {
    let msg = segment(bytes, Layer::Icmpv4, off, declared, Icmpv4Repr::LEN)?;
    let icmp = Icmpv4Repr::parse(msg, msg.len() == declared).map_err(|e| e.at(off))?;
    f.net = Net::Icmpv4 {
        ip,
        icmp,
        data: &msg[Icmpv4Repr::LEN..],
        declared_len: declared - Icmpv4Repr::LEN,
    };
    Ok(())
}
