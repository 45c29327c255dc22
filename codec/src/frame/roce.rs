//! The InfiniBand packet inside a frame, and its ICRC.
//!
//! ```text
//!  RoCEv2:  Ethernet | IPv4/IPv6 | UDP (dport 4791) | BTH | ext hdrs | payload | pad | ICRC
//!  + INT:   Ethernet | IPv4/IPv6 | UDP (dport 4792) | INT | BTH | ...                | ICRC
//!  RoCE v1: Ethernet (0x8915)    | GRH (40 bytes)   | BTH | ext hdrs | payload | pad | ICRC
//!                                                   \________ crate::wire::ib ________/
//!  ICRC = CRC-32 over  masked IP header or GRH  +  masked UDP header  +  BTH..pad
//! ```
//!
//! A RoCEv2 packet with in-band telemetry ([`crate::wire::int`]) keeps the
//! ICRC of the packet without it: the INT source (the sending NIC) computes
//! the ICRC before any switch pushes a record, and the INT sink hands its
//! transport the packet restored, telemetry removed, UDP destination port
//! back from the shim, IP and UDP lengths shortened. The ICRC masks the
//! IPv4 checksum (and TOS, TTL) but not the lengths nor the port, so the
//! CRC runs over the headers patched that way; switches that push records
//! change only bytes the restored packet does not have.
//!
//! The IB packet itself (BTH, extended headers, payload and pad) is
//! [`crate::wire::ib`]'s; what belongs to the frame is where it starts, how
//! long its enclosing header says it is, and the ICRC, which covers the
//! enclosing headers too ([`crate::icrc`]). Emit computes the ICRC from the
//! bytes it has just written; parse compares it when
//! [`ParseOptions::verify_icrc`] asks.
//!
//! RoCE v1's GRH is decoded here: it is the only network header a v1
//! packet has, and it exists to carry the IB packet.

use super::{Frame, IpRepr, Net, ParseOptions, split_declared};
use crate::error::{Result, Warnings};
use crate::icrc::{self, ICRC_LEN};
use crate::wire::grh::{GrhRepr, NXTHDR_IBA};
use crate::wire::ib::{self, IbPacket, IbRepr};
use crate::wire::int::IntRepr;

/// The ICRC of a RoCEv2 packet: `ip_hdr` and `udp_hdr` are the header bytes
/// of `ip`, and `ib` the IB packet up to the ICRC.
pub(super) fn rocev2_icrc(ip: &IpRepr, ip_hdr: &[u8], udp_hdr: &[u8], ib: &[u8]) -> [u8; 4] {
    match ip {
        IpRepr::V4(_) => icrc::rocev2_ipv4(ip_hdr, udp_hdr, ib),
        IpRepr::V6(_) => icrc::rocev2_ipv6(ip_hdr, udp_hdr, ib),
    }
}

/// The ICRC of a RoCEv2 packet that carries telemetry `int`: the one of the
/// packet the INT sink restores. `ip_hdr` and `udp_hdr` are the headers as
/// sent (lengths with the telemetry, UDP port 4792); the IP length fields
/// and the UDP length lose the telemetry's bytes and the UDP port becomes
/// `int.orig_dport`. The restored IPv4 checksum is not computed: the ICRC
/// masks it.
pub(super) fn rocev2_icrc_at_sink(
    ip: &IpRepr,
    ip_hdr: &[u8],
    udp_hdr: &[u8],
    int: &IntRepr,
    ib: &[u8],
) -> [u8; 4] {
    let n = int.buffer_len() as u16;
    let shorten = |b: &mut [u8], at: usize| {
        let v = u16::from_be_bytes([b[at], b[at + 1]]).wrapping_sub(n);
        b[at..at + 2].copy_from_slice(&v.to_be_bytes());
    };
    let mut ip_sink = [0u8; 60];
    let ip_sink = &mut ip_sink[..ip_hdr.len().min(60)];
    ip_sink.copy_from_slice(&ip_hdr[..ip_sink.len()]);
    match ip {
        IpRepr::V4(_) => shorten(ip_sink, 2), // total length
        IpRepr::V6(_) => shorten(ip_sink, 4), // payload length
    }
    let mut udp_sink: [u8; 8] = udp_hdr[..8].try_into().expect("UDP header is 8 bytes");
    udp_sink[2..4].copy_from_slice(&int.orig_dport.to_be_bytes());
    shorten(&mut udp_sink, 4);
    rocev2_icrc(ip, ip_sink, &udp_sink, ib)
}

/// Writes `ib` at `buf[start..]`, then its ICRC, which `icrc_of` computes
/// from the frame written so far (everything before the ICRC).
pub(super) fn emit_ib(
    buf: &mut [u8],
    start: usize,
    ib: &IbRepr,
    payload: &[u8],
    icrc_of: impl FnOnce(&[u8]) -> [u8; 4],
) {
    let icrc_at = start + ib.emit_without_icrc(&mut buf[start..], payload);
    let (head, tail) = buf.split_at_mut(icrc_at);
    tail[..ICRC_LEN].copy_from_slice(&icrc_of(head));
}

/// Decodes the IB packet at `bytes[start..]`, which its enclosing header
/// says is `declared` bytes long, and checks its ICRC with `icrc_of` (given
/// the packet up to the ICRC) if the options ask and the ICRC was captured.
/// The packet's warnings join the frame's; the error that stopped decoding,
/// if any, is in frame offsets.
pub(super) fn parse_ib<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    start: usize,
    declared: usize,
    opts: &ParseOptions,
    icrc_of: impl FnOnce(&[u8]) -> [u8; 4],
) -> (Option<IbPacket<'a>>, Result<()>) {
    let (pkt, stop) = ib::parse(&bytes[start.min(bytes.len())..], declared);
    let pkt = pkt.map(|mut p| {
        if let Some(wire) = p.icrc.filter(|_| opts.verify_icrc) {
            let valid = icrc_of(&bytes[start..start + declared - ICRC_LEN]) == wire;
            p.icrc_valid = Some(valid);
            if !valid {
                p.warnings.insert(Warnings::ICRC_MISMATCH);
            }
        }
        f.warnings.insert(p.warnings);
        p
    });
    (pkt, stop.map_or(Ok(()), |e| Err(e.at(start))))
}

/// A RoCE v1 frame from the GRH at `off` on. A GRH that announces anything
/// but an IBA transport header is kept, flagged, and its body left alone.
pub(super) fn parse_rocev1<'a>(
    f: &mut Frame<'a>,
    bytes: &'a [u8],
    off: usize,
    opts: &ParseOptions,
) -> Result<()> {
    let grh = GrhRepr::parse(&bytes[off..]).map_err(|e| e.at(off))?;
    let ib_start = off + GrhRepr::LEN;
    let declared = usize::from(GrhRepr::pay_len(&bytes[off..]));
    f.trailer = split_declared(bytes, ib_start, declared).1;
    f.net = Net::RoceV1 { grh, ib: None };
    if grh.next_header != NXTHDR_IBA {
        f.warnings.insert(Warnings::GRH_NXTHDR);
        return Ok(());
    }
    let grh_raw = &bytes[off..ib_start];
    let (ib, result) = parse_ib(f, bytes, ib_start, declared, opts, |body| {
        icrc::rocev1(grh_raw, body)
    });
    f.net = Net::RoceV1 { grh, ib };
    result
}
