//! Codec behaviour found by the roce-pcap dissect corpus.
//!
//! MAC control bodies that emit cannot reproduce (non-zero reserved bytes,
//! the body of an opcode the codec does not decode) are flagged and do not
//! convert back to a repr, so `emit(parse(bytes)) == bytes` holds for every
//! frame that does.

use roce_codec::*;

const SRC: [u8; 6] = [2, 0, 0, 0, 0, 1];

/// `ib` in an untagged RoCEv2/IPv4 frame, ECT(0) in DSCP 26 as rxe sends it.
fn rocev2(ib: IbRepr) -> FrameRepr {
    use core::net::Ipv4Addr;
    let ip = Ipv4Repr::udp(
        Ipv4Addr::new(10, 0, 0, 1),
        Ipv4Addr::new(10, 0, 0, 2),
        26,
        2,
    );
    FrameRepr::rocev2([2; 6], [4; 6], IpRepr::V4(ip), 0xC000, ib)
}

/// `bytes` decode with `warning` and, since emit could not reproduce
/// them, without a repr.
fn flagged_without_repr(bytes: &[u8], warning: Warnings) -> Frame<'_> {
    let f = Frame::parse(bytes, &ParseOptions::default()).unwrap();
    assert!(f.warnings.contains(warning), "{}", f.warnings);
    assert!(f.to_repr().is_none());
    f
}

/// An RC ACK of PSN 5 (no payload), the frame most findings start from.
fn ack() -> IbRepr {
    IbRepr::ack(0x12, Psn::new(5), Syndrome::ACK_NO_CREDITS, 1)
}

#[test]
fn zero_padded_bodies_round_trip_and_others_are_flagged() {
    for repr in [
        FrameRepr::pause(SRC, 7),
        FrameRepr::pfc(SRC, 0x08, [0, 0, 0, 0xFFFF, 0, 0, 0, 0]),
    ] {
        let mut bytes = repr.to_vec(&[]);
        let f = Frame::parse(&bytes, &ParseOptions::default()).unwrap();
        assert!(!f.warnings.contains(Warnings::MAC_CONTROL_PAD_NONZERO));
        assert_eq!(f.to_repr().unwrap().0, repr);
        // A non-zero byte in the reserved padding.
        bytes[50] = 0x5A;
        let f = flagged_without_repr(&bytes, Warnings::MAC_CONTROL_PAD_NONZERO);
        assert_ne!(f.kind(), FrameKind::Malformed);
    }
    // MPCP GATE (opcode 2) with a body: not decoded, so not re-emitted.
    let mut bytes = FrameRepr::pause(SRC, 0x1234).to_vec(&[]);
    bytes[14..16].copy_from_slice(&2u16.to_be_bytes());
    let f = flagged_without_repr(&bytes, Warnings::UNKNOWN_MAC_CONTROL);
    assert!(f.warnings.contains(Warnings::MAC_CONTROL_PAD_NONZERO));
    assert_eq!(f.kind(), FrameKind::Other);
}

#[test]
fn pad_bytes_on_an_opcode_without_payload_warn() {
    let mut ib = ack();
    let clean = rocev2(ib).to_vec(&[]);
    let f = Frame::parse(&clean, &ParseOptions::default()).unwrap();
    assert!(f.warnings.is_empty(), "{}", f.warnings);
    // PadCnt 3 and 3 pad bytes on an ACK: valid ICRC, but nothing to pad.
    ib.bth.pad_count = 3;
    let padded = rocev2(ib).to_vec(&[]);
    assert_eq!(padded.len(), clean.len() + 3);
    let f = Frame::parse(&padded, &ParseOptions::default()).unwrap();
    assert!(f.warnings.contains(Warnings::UNEXPECTED_PAYLOAD));
    assert_eq!(f.ib().unwrap().icrc_valid, Some(true));
    assert_eq!(f.ib().unwrap().payload_len, Some(0));
}

/// Found by the cargo-fuzz target: a non-RoCE UDP datagram whose UDP length
/// disagrees with its IP length converted to a repr that re-emitted the
/// length derived from IP.
#[test]
fn udp_length_that_disagrees_with_ip_is_flagged_and_not_re_emitted() {
    use core::net::Ipv4Addr;
    let repr = FrameRepr {
        eth: EthRepr {
            dst: [2; 6],
            src: [4; 6],
        },
        vlans: Vlans::none(),
        net: NetRepr::Ip {
            ip: IpRepr::V4(Ipv4Repr::udp(
                Ipv4Addr::new(10, 0, 0, 1),
                Ipv4Addr::new(10, 0, 0, 2),
                0,
                0,
            )),
            udp: Some(UdpRepr {
                src_port: 5353,
                dst_port: 5353,
                checksum: 0,
            }),
        },
    };
    let mut bytes = repr.to_vec(&[7; 12]);
    let f = Frame::parse(&bytes, &ParseOptions::default()).unwrap();
    assert!(f.warnings.is_empty());
    assert_eq!(f.to_repr().unwrap().0, repr);
    bytes[38..40].copy_from_slice(&0xFC28u16.to_be_bytes());
    let f = flagged_without_repr(&bytes, Warnings::UDP_LENGTH_MISMATCH);
    assert_eq!(f.kind(), FrameKind::Other);
}

/// Found by the cargo-fuzz target: the IPv4 reserved flag bit was dropped
/// on re-emit (the repr has no field for it).
#[test]
fn ipv4_reserved_flag_is_flagged_and_not_re_emitted() {
    let mut bytes = rocev2(ack()).to_vec(&[]);
    bytes[20] |= 0x80;
    let f = flagged_without_repr(&bytes, Warnings::IPV4_RESERVED_FLAG);
    // The ICRC covers the flags, so this also shows as a mismatch.
    assert_eq!(f.kind(), FrameKind::RoceV2);
}

/// Found by the cargo-fuzz target: a RoCEv2 frame whose IPv4 total length
/// claims more than the UDP length (and the frame) holds re-emitted with
/// the IP length derived from UDP.
#[test]
fn rocev2_ip_length_beyond_udp_is_flagged_and_not_re_emitted() {
    let mut bytes = rocev2(ack()).to_vec(&[]);
    // Four bytes of IP-level padding after the UDP datagram, inside the frame.
    let total = u16::from_be_bytes([bytes[16], bytes[17]]) + 4;
    bytes[16..18].copy_from_slice(&total.to_be_bytes());
    bytes.extend_from_slice(&[0; 4]);
    flagged_without_repr(&bytes, Warnings::UDP_LENGTH_MISMATCH);
}

/// An IPv4 total length beyond the frame is malformed, as tshark says
/// ("IPv4 total length exceeds packet length"), unless the snaplen cut the
/// frame short of a length that fits the frame on the wire.
#[test]
fn ipv4_total_length_beyond_the_frame_is_malformed_not_truncated() {
    let mut bytes = rocev2(ack()).to_vec(&[]);
    bytes[16..18].copy_from_slice(&0x2854u16.to_be_bytes());
    let e = Frame::parse(&bytes, &ParseOptions::default()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "IPv4 at offset 14: field `total_len` is 10324, exceeds the packet length"
    );
    let f = Frame::parse_lax(&bytes, bytes.len(), &ParseOptions::default()).unwrap();
    assert_eq!(f.kind(), FrameKind::Malformed);
    assert!(f.warnings.contains(Warnings::IPV4_TOTAL_LENGTH_EXCEEDS));
    assert!(f.to_repr().is_none());
    // The layers above are still shown.
    assert!(matches!(f.net, Net::RoceV2 { .. }));
    // The same bytes as the first 62 of a 10338-byte frame: the snaplen cut
    // what followed the UDP datagram, which is complete.
    let f = Frame::parse_lax(&bytes, 14 + 10324, &ParseOptions::default()).unwrap();
    assert_eq!(f.kind(), FrameKind::RoceV2);
    assert!(!f.warnings.contains(Warnings::IPV4_TOTAL_LENGTH_EXCEEDS));
    // Cut inside the IB packet instead: truncated.
    let f = Frame::parse_lax(&bytes[..50], 14 + 10324, &ParseOptions::default()).unwrap();
    assert_eq!(f.kind(), FrameKind::Truncated);
}

/// Found by the cargo-fuzz target: non-zero pad bytes were re-emitted as
/// zeros.
#[test]
fn non_zero_pad_bytes_are_flagged_and_not_re_emitted() {
    let send = IbRepr::new(Opcode(0x04), 0x12, Psn::new(5), 6);
    let mut bytes = rocev2(send).to_vec(&[9; 6]);
    let f = Frame::parse(&bytes, &ParseOptions::default()).unwrap();
    assert!(f.to_repr().is_some() && f.warnings.is_empty());
    let n = bytes.len();
    bytes[n - 5] = 0x0A; // the second pad byte
    flagged_without_repr(&bytes, Warnings::PAD_NONZERO);
}
