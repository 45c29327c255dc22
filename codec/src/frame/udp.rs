//! Layer 4: UDP, and the port test that makes a datagram RoCEv2.
//!
//! ```text
//!  0                16               32
//!  +----------------+----------------+
//!  |  source port   |  dest port     |   dest port in ParseOptions::roce_v2_ports
//!  +----------------+----------------+   (4791 unless configured): the payload
//!  |  length        |  checksum      |   is an IB packet; dest port 4792
//!  +----------------+----------------+   (INT_UDP_PORT): in-band telemetry, then
//!                                        an IB packet; otherwise it is opaque
//! ```
//!
//! Telemetry ([`crate::wire::int`]) sits between the UDP header and the
//! BTH; its shim keeps the RoCEv2 port the UDP header gave up. A datagram to
//! 4792 is RoCEv2 whatever [`ParseOptions::roce_v2_ports`] says; telemetry
//! that does not decode stops the frame at layer INT, as a bad BTH does
//! after 4791.
//!
//! The length is not a field of [`UdpRepr`]: emit derives it from what
//! follows. Three lengths meet here and may disagree in a capture: the IP
//! payload length, the UDP length and the bytes captured. The UDP length
//! decides where a RoCE packet ends; a frame where it differs from the IP
//! payload length is decoded, flagged with
//! [`Warnings::UDP_LENGTH_MISMATCH`], and has no repr (emit could not
//! reproduce it). The source port is the RoCEv2 flow entropy
//! ([`crate::hash::roce_udp_sport`]).

use etherparse::{UdpHeader, UdpHeaderSlice};

use super::roce::{parse_ib, rocev2_icrc, rocev2_icrc_at_sink};
use super::{Frame, IpRepr, Net, ParseOptions, split_declared};
use crate::error::{Error, Layer, Result, Warnings};
use crate::wire::int::{INT_UDP_PORT, IntRepr};

pub(super) const UDP_LEN: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    /// Sent as is. RoCE NICs send 0 (no checksum); the ICRC protects the packet.
    pub checksum: u16,
}

impl UdpRepr {
    /// Writes the header for `payload_len` bytes of UDP payload.
    pub(super) fn emit(&self, buf: &mut [u8], payload_len: usize) -> usize {
        let h = UdpHeader {
            source_port: self.src_port,
            destination_port: self.dst_port,
            length: (UDP_LEN + payload_len).min(usize::from(u16::MAX)) as u16,
            checksum: self.checksum,
        };
        buf[..UDP_LEN].copy_from_slice(&h.to_bytes());
        UDP_LEN
    }
}

/// UDP at `off`, and RoCEv2 when the destination port is one of ours.
/// `ip_raw` is the IP header (for the ICRC) and `ip_payload` the length it
/// gives its payload.
pub(super) fn parse_udp<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    ip: IpRepr,
    ip_raw: &'a [u8],
    off: usize,
    ip_payload: usize,
    opts: &ParseOptions,
) -> Result<()> {
    let captured = &bytes[off.min(bytes.len())..bytes.len().min(off + ip_payload)];
    let present = if ip_payload < UDP_LEN {
        Some(ip_payload)
    } else if captured.len() < UDP_LEN {
        Some(captured.len())
    } else {
        None
    };
    if let Some(present) = present {
        return Err(Error::Truncated {
            layer: Layer::Udp,
            offset: off,
            required: UDP_LEN,
            present,
        });
    }
    let h = UdpHeaderSlice::from_slice(captured).expect("length checked");
    let udp = UdpRepr {
        src_port: h.source_port(),
        dst_port: h.destination_port(),
        checksum: h.checksum(),
    };
    let udp_len = usize::from(h.length());
    let with_int = udp.dst_port == INT_UDP_PORT;
    if !with_int && !opts.roce_v2_ports.contains(udp.dst_port) {
        // Emit derives the UDP length from the IP length; a datagram whose
        // own length says otherwise is kept opaque but cannot re-emit.
        if udp_len != ip_payload {
            f.warnings.insert(Warnings::UDP_LENGTH_MISMATCH);
        }
        let declared = ip_payload - UDP_LEN;
        let (payload, _) = split_declared(bytes, off + UDP_LEN, declared);
        f.net = Net::Ip {
            ip,
            udp: Some(udp),
            payload,
            declared_len: declared,
        };
        return Ok(());
    }
    f.net = Net::RoceV2 {
        ip,
        udp,
        int: None,
        ib: None,
    };
    if udp_len < UDP_LEN || udp_len > ip_payload {
        return Err(Error::Invalid {
            layer: Layer::Udp,
            offset: off,
            field: "length",
            value: udp_len as u64,
            expected: if udp_len < UDP_LEN {
                "expected at least 8"
            } else {
                "larger than the IP payload"
            },
        });
    }
    // A UDP length shorter than the IP payload leaves IP-level padding,
    // which we report with the trailer; emit derives the IP length from
    // the UDP length, so such a frame has no repr.
    if udp_len != ip_payload {
        f.warnings.insert(Warnings::UDP_LENGTH_MISMATCH);
    }
    if udp_len < ip_payload && bytes.len() > off + udp_len {
        f.trailer = &bytes[off + udp_len..];
    }
    let int_start = off + UDP_LEN;
    let udp_raw = &bytes[off..int_start];
    let (int, ib_start) = if with_int {
        let end = bytes.len().min(off + udp_len);
        let (int, n) = IntRepr::parse(&bytes[int_start..end]).map_err(|e| e.at(int_start))?;
        f.net = Net::RoceV2 {
            ip,
            udp,
            int: Some(int),
            ib: None,
        };
        (Some(int), int_start + n)
    } else {
        (None, int_start)
    };
    let declared = udp_len - (ib_start - off);
    let (ib, result) = parse_ib(f, bytes, ib_start, declared, opts, |body| match &int {
        None => rocev2_icrc(&ip, ip_raw, udp_raw, body),
        Some(int) => rocev2_icrc_at_sink(&ip, ip_raw, udp_raw, int, body),
    });
    f.net = Net::RoceV2 { ip, udp, int, ib };
    result
}
