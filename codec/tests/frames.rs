//! Whole-frame behaviour: round trips, errors, lax decoding, no panics.

use core::net::Ipv4Addr;

use proptest::prelude::*;
use roce_codec::arbitrary;
use roce_codec::*;

fn opts() -> ParseOptions {
    ParseOptions::default()
}

fn write(opcode: u8, psn: u32, payload_len: u32, reth: Option<RethRepr>) -> FrameRepr {
    FrameRepr {
        eth: EthRepr {
            dst: [0x02, 0, 0, 0, 0, 0x0b],
            src: [0x02, 0, 0, 0, 0, 0x0a],
        },
        vlans: Vlans::none(),
        net: NetRepr::RoceV2 {
            ip: IpRepr::V4(Ipv4Repr::udp(
                Ipv4Addr::new(10, 0, 0, 1),
                Ipv4Addr::new(10, 0, 0, 2),
                32,
                2,
            )),
            udp: UdpRepr {
                src_port: 0xC132,
                dst_port: 4791,
                checksum: 0,
            },
            int: None,
            ib: IbRepr {
                bth: BthRepr {
                    opcode: Opcode(opcode),
                    pkey: 0xFFFF,
                    dest_qp: 0x12,
                    psn: Psn::new(psn),
                    pad_count: pad_for(payload_len),
                    ack_req: opcode == 0x08,
                    ..BthRepr::default()
                },
                ext: {
                    let mut ext = ExtHeaders::default();
                    ext.set_reth(reth);
                    ext
                },
                payload_len,
            },
        },
    }
}

// RDMA WRITE of 10000 B at MTU 4096 (segmented as rxe_req.c does, header
// sizes of include/rdma/ib_pack.h) gives frames of 4174, 4158 and 1870
// bytes including the 4-byte FCS.
#[test]
fn write_segment_lengths_match_the_reference() {
    let reth = Some(RethRepr {
        va: 0x10000,
        rkey: 0x1234,
        dma_len: 10000,
    });
    let frames = [
        write(0x06, 0, 4096, reth),
        write(0x07, 1, 4096, None),
        write(0x08, 2, 1808, None),
    ];
    let lens: Vec<usize> = frames.iter().map(|f| f.buffer_len(0) + 4).collect();
    assert_eq!(lens, [4174, 4158, 1870]);
    let payload = vec![0x5a; 4096];
    for f in frames {
        let bytes = f.to_vec(&payload);
        let p = Frame::parse(&bytes, &opts()).unwrap();
        assert_eq!(p.kind(), FrameKind::RoceV2);
        assert_eq!(p.ib().unwrap().icrc_valid, Some(true));
        assert_eq!(p.to_repr().unwrap().0, f);
        // IPv4 total length and UDP length follow from the IB length.
        let ib_len = if let NetRepr::RoceV2 { ib, .. } = f.net {
            ib.buffer_len()
        } else {
            unreachable!()
        };
        assert_eq!(
            u16::from_be_bytes([bytes[16], bytes[17]]) as usize,
            20 + 8 + ib_len
        );
        assert_eq!(
            u16::from_be_bytes([bytes[38], bytes[39]]) as usize,
            8 + ib_len
        );
        assert_eq!(bytes[15], (32 << 2) | 2, "TOS = DSCP<<2 | ECN");
    }
}

#[test]
fn emit_fills_every_byte() {
    // Pre-fill with 0xa5 so that a byte emit forgets shows up.
    let f = write(
        0x06,
        7,
        13,
        Some(RethRepr {
            va: 1,
            rkey: 2,
            dma_len: 13,
        }),
    );
    let mut a = vec![0xa5; f.buffer_len(0)];
    let mut b = vec![0x00; f.buffer_len(0)];
    let payload = [0x11; 13];
    f.emit(&mut a, &payload);
    f.emit(&mut b, &payload);
    assert_eq!(a, b);
}

#[test]
fn strict_errors_name_layer_offset_and_lengths() {
    let f = write(0x0A, 1, 64, Some(RethRepr::default())).to_vec(&[0; 64]);
    // 60 bytes as a whole frame: the IP header claims more than there is.
    let e = Frame::parse(&f[..60], &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "IPv4 at offset 14: field `total_len` is 124, exceeds the packet length"
    );
    // Cut by a snaplen inside the RETH: 14 + 20 + 8 + 12 = 54 is where it starts.
    let e = Frame::parse_lax(&f[..60], f.len(), &opts())
        .unwrap()
        .stop
        .unwrap();
    assert_eq!(
        e,
        Error::Truncated {
            layer: Layer::Reth,
            offset: 54,
            required: 16,
            present: 6
        }
    );
    assert_eq!(
        e.to_string(),
        "RETH at offset 54: 16 bytes required, 6 present"
    );
    let e = Frame::parse(&f[..10], &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "Ethernet at offset 0: 14 bytes required, 10 present"
    );
    let e = Frame::parse(&f[..30], &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "IPv4 at offset 14: 20 bytes required, 16 present"
    );
    let mut bad = f.clone();
    bad[14] = 0x43; // IHL 3
    let e = Frame::parse(&bad, &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "IPv4 at offset 14: field `ihl` is 3, expected at least 5"
    );
    let mut bad = f.clone();
    bad[38..40].copy_from_slice(&5u16.to_be_bytes()); // UDP length 5
    let e = Frame::parse(&bad, &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "UDP at offset 34: field `length` is 5, expected at least 8"
    );
}

#[test]
fn lax_decoding_marks_snaplen_truncation() {
    let f = write(
        0x0A,
        1,
        1000,
        Some(RethRepr {
            va: 9,
            rkey: 8,
            dma_len: 1000,
        }),
    )
    .to_vec(&[0; 1000]);
    let p = Frame::parse_lax(&f[..128], f.len(), &opts()).unwrap();
    assert_eq!(p.kind(), FrameKind::Truncated);
    let ib = p.ib().unwrap();
    assert_eq!(ib.bth.psn, Psn::new(1));
    assert_eq!(ib.ext.reth().unwrap().dma_len, 1000);
    assert_eq!(ib.payload.len(), 128 - 70);
    assert_eq!(ib.payload_len, Some(1000));
    assert_eq!(ib.icrc, None);
    assert!(p.to_repr().is_none());
    // The same bytes with no snaplen story are a malformed frame: the IP
    // header promises more than the frame holds.
    let p = Frame::parse_lax(&f[..128], 128, &opts()).unwrap();
    assert_eq!(p.kind(), FrameKind::Malformed);
}

#[test]
fn icrc_mismatch_is_reported_not_fatal() {
    let mut f = write(0x0A, 1, 8, Some(RethRepr::default())).to_vec(&[1; 8]);
    let n = f.len();
    f[n - 10] ^= 0xFF; // payload byte
    let p = Frame::parse(&f, &opts()).unwrap();
    assert_eq!(p.ib().unwrap().icrc_valid, Some(false));
    assert!(p.warnings.contains(Warnings::ICRC_MISMATCH));
    let p = Frame::parse(
        &f,
        &ParseOptions {
            verify_icrc: false,
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(p.ib().unwrap().icrc_valid, None);
}

#[test]
fn only_the_destination_port_makes_rocev2() {
    let mut f = write(0x0A, 1, 8, Some(RethRepr::default()));
    if let NetRepr::RoceV2 { udp, .. } = &mut f.net {
        udp.src_port = 4791;
        udp.dst_port = 5000;
    }
    let bytes = f.to_vec(&[0; 8]);
    let p = Frame::parse(&bytes, &opts()).unwrap();
    assert_eq!(p.kind(), FrameKind::Other);
    assert!(matches!(
        p.net,
        Net::Ip {
            udp: Some(UdpRepr { dst_port: 5000, .. }),
            ..
        }
    ));
    let custom = ParseOptions {
        roce_v2_ports: PortSet::new(&[4791, 5000]).unwrap(),
        ..opts()
    };
    assert_eq!(
        Frame::parse(&bytes, &custom).unwrap().kind(),
        FrameKind::RoceV2
    );
}

#[test]
fn pfc_frame_is_60_bytes_and_decodes() {
    let f = FrameRepr {
        eth: EthRepr {
            dst: roce_codec::wire::mac_control::PAUSE_DST_MAC,
            src: [2, 0, 0, 0, 0, 1],
        },
        vlans: Vlans::none(),
        net: NetRepr::MacControl(MacControlRepr::Pfc {
            enable_vector: 0x08,
            times: [0, 0, 0, 0xFFFF, 0, 0, 0, 0],
        }),
    };
    let bytes = f.to_vec(&[]);
    assert_eq!(bytes.len(), 60);
    assert_eq!(&bytes[12..16], &[0x88, 0x08, 0x01, 0x01]);
    let p = Frame::parse(&bytes, &opts()).unwrap();
    assert_eq!(p.kind(), FrameKind::Pfc);
    assert_eq!(p.to_repr().unwrap().0, f);
}

#[test]
fn vlan_tags_and_padding_trailer() {
    let mut f = write(0x11, 5, 0, None);
    if let NetRepr::RoceV2 { ib, .. } = &mut f.net {
        ib.ext.set_aeth(Some(AethRepr {
            syndrome: Syndrome::ACK_NO_CREDITS,
            msn: 3,
        }));
        ib.bth.ack_req = false;
    }
    f.vlans = Vlans::one(VlanTag::dot1q(100, 4));
    let mut bytes = f.to_vec(&[]);
    assert_eq!(&bytes[12..18], &[0x81, 0x00, 0x80, 0x64, 0x08, 0x00]);
    bytes.extend_from_slice(&[0xDE, 0xAD, 0xBE, 0xEF]); // an FCS
    let p = Frame::parse(&bytes, &opts()).unwrap();
    assert_eq!(p.vlans.outer().unwrap().vid, 100);
    assert_eq!(p.vlans.outer().unwrap().pcp, 4);
    assert_eq!(p.trailer, &[0xDE, 0xAD, 0xBE, 0xEF]);
    let (repr, payload) = p.to_repr().unwrap();
    let mut again = repr.to_vec(payload);
    again.extend_from_slice(p.trailer);
    assert_eq!(again, bytes);
}

#[test]
fn ipv4_checksum_offload_round_trips() {
    let mut bytes = write(0x0A, 1, 8, Some(RethRepr::default())).to_vec(&[0; 8]);
    bytes[24] = 0;
    bytes[25] = 0;
    let p = Frame::parse(&bytes, &opts()).unwrap();
    let Some(IpRepr::V4(ip)) = p.ip() else {
        panic!()
    };
    assert_eq!(ip.checksum_override, Some(0));
    let (r, pl) = p.to_repr().unwrap();
    assert_eq!(r.to_vec(pl), bytes);
}

/// Two switches' records, as a 100G and a 400G port would write them.
fn two_hops() -> IntRepr {
    let mut int = IntRepr::source(4791, 5, 1);
    int.push(IntHopRepr::new(100_000_000_000, 1_000, 64_000, 8_000, 1).unwrap());
    int.push(IntHopRepr::new(400_000_000_000, 2_000, 128_000, 0, 1).unwrap());
    int
}

/// The bytes of the ICRC (the frame's last four).
fn icrc(bytes: &[u8]) -> &[u8] {
    &bytes[bytes.len() - 4..]
}

// An RDMA WRITE First of 64 B with two hop records: UDP to 4792, lengths
// that count the 16 + 2 x 8 = 32 bytes of telemetry, the shim of
// wire::int's layout at the start of the UDP payload, the BTH after it,
// and the ICRC of the same frame without telemetry.
#[test]
fn telemetry_sits_between_udp_and_bth() {
    let plain = write(0x06, 3, 64, Some(RethRepr::default()));
    let f = plain.with_int(two_hops());
    let ib_len = 12 + 16 + 64 + 4;
    assert_eq!(f.buffer_len(64), 14 + 20 + 8 + 32 + ib_len);
    // Pre-filled with 0xa5 so that a byte emit forgets shows up.
    let mut bytes = vec![0xa5; f.buffer_len(64)];
    f.emit(&mut bytes, &[7; 64]);
    let mut zeroed = vec![0; f.buffer_len(64)];
    f.emit(&mut zeroed, &[7; 64]);
    assert_eq!(bytes, zeroed);
    assert_eq!(&bytes[36..38], &4792u16.to_be_bytes(), "UDP dport");
    assert_eq!(
        u16::from_be_bytes([bytes[16], bytes[17]]) as usize,
        20 + 8 + 32 + ib_len
    );
    assert_eq!(
        u16::from_be_bytes([bytes[38], bytes[39]]) as usize,
        8 + 32 + ib_len
    );
    // Shim: INT-MD, NPT 1, 7 words, original port 4791 (0x12B7).
    assert_eq!(&bytes[42..46], &[0x14, 7, 0x12, 0xB7]);
    assert_eq!(&bytes[52..54], &[0x48, 0x50], "domain-specific ID");
    // The newest (400G, rate code 4) record first.
    assert_eq!(bytes[58] >> 5, 4);
    assert_eq!(bytes[66] >> 5, 2);
    assert_eq!(bytes[74], 0x06, "BTH opcode after the telemetry");
    let without = plain.to_vec(&[7; 64]);
    assert_eq!(icrc(&bytes), icrc(&without), "the ICRC the sink checks");
    assert_ne!(icrc(&bytes), &[0xa5; 4]);

    let p = Frame::parse(&bytes, &opts()).unwrap();
    assert_eq!(p.kind(), FrameKind::RoceV2);
    assert_eq!(p.int(), Some(&two_hops()));
    assert_eq!(p.udp().unwrap().dst_port, 4792);
    let ib = p.ib().unwrap();
    assert_eq!((ib.bth.psn, ib.icrc_valid), (Psn::new(3), Some(true)));
    let (repr, payload) = p.to_repr().unwrap();
    assert_eq!(repr, f);
    assert_eq!(repr.to_vec(payload), bytes);
    // A frame without telemetry parses as before.
    assert_eq!(Frame::parse(&without, &opts()).unwrap().int(), None);
}

// What a switch writes (records, RemainingHopCnt, the E bit) is outside
// the ICRC; the shim's original port is inside it: the sink restores it.
#[test]
fn the_icrc_covers_the_restored_packet_only() {
    let f = write(0x0A, 1, 8, Some(RethRepr::default()));
    // One hop of room: the second switch sets E instead of pushing.
    let mut fewer = IntRepr::source(4791, 1, 1);
    fewer.push(two_hops().hops()[0]);
    fewer.push(two_hops().hops()[1]);
    assert!(fewer.exceeded && fewer.hops().len() == 1);
    let a = f.with_int(two_hops()).to_vec(&[0; 8]);
    let b = f.with_int(fewer).to_vec(&[0; 8]);
    assert_eq!(icrc(&a), icrc(&b));
    let mut hop_changed = a.clone();
    hop_changed[60] ^= 0xFF;
    let p = Frame::parse(&hop_changed, &opts()).unwrap();
    assert_eq!(p.ib().unwrap().icrc_valid, Some(true));
    assert_ne!(p.int(), Some(&two_hops()));
    let mut port_changed = a.clone();
    port_changed[45] ^= 1;
    let p = Frame::parse(&port_changed, &opts()).unwrap();
    assert_eq!(p.ib().unwrap().icrc_valid, Some(false));
    assert!(p.warnings.contains(Warnings::ICRC_MISMATCH));
}

#[test]
fn telemetry_truncation_and_errors_name_layer_int() {
    let bytes = write(0x0A, 1, 8, Some(RethRepr::default()))
        .with_int(two_hops())
        .to_vec(&[0; 8]);
    // A snaplen inside the MD header: 42 + 16 needed, 10 there.
    let p = Frame::parse_lax(&bytes[..52], bytes.len(), &opts()).unwrap();
    assert_eq!(
        p.stop,
        Some(Error::Truncated {
            layer: Layer::Int,
            offset: 42,
            required: 16,
            present: 10
        })
    );
    assert_eq!(p.kind(), FrameKind::Truncated);
    assert!(matches!(
        p.net,
        Net::RoceV2 {
            int: None,
            ib: None,
            ..
        }
    ));
    // Inside the hop records: the shim says 32 bytes.
    let p = Frame::parse_lax(&bytes[..70], bytes.len(), &opts()).unwrap();
    assert_eq!(
        p.stop.unwrap().to_string(),
        "INT at offset 42: 32 bytes required, 28 present"
    );
    // Inside the BTH after complete telemetry: the stop is the BTH's, and
    // the telemetry is there.
    let p = Frame::parse_lax(&bytes[..80], bytes.len(), &opts()).unwrap();
    let stop = p.stop.unwrap();
    assert_eq!((stop.layer(), p.kind()), (Layer::Bth, FrameKind::Truncated));
    assert_eq!(p.int(), Some(&two_hops()));
    // Not INT-MD (shim type 2, INT-MX): malformed at the shim.
    let mut mx = bytes.clone();
    mx[42] = 0x24;
    let e = Frame::parse(&mx, &opts()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "INT at offset 42: field `shim type` is 2, 1 (INT-MD)"
    );
    assert_eq!(
        Frame::parse_lax(&mx, mx.len(), &opts()).unwrap().kind(),
        FrameKind::Malformed
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any RoCEv2 frame given any telemetry keeps its ICRC, its IB packet
    /// and its kind, and comes back with the telemetry.
    #[test]
    fn telemetry_keeps_the_packet((repr, payload) in arbitrary::frame(), int in arbitrary::int_repr()) {
        let NetRepr::RoceV2 { int: None, .. } = repr.net else {
            return Ok(());
        };
        let plain = repr.to_vec(&payload);
        let with = repr.with_int(int).to_vec(&payload);
        prop_assert_eq!(with.len(), plain.len() + int.buffer_len());
        prop_assert_eq!(icrc(&with), icrc(&plain));
        let f = Frame::parse(&with, &opts()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(f.int().map(|i| i.orig_dport), Some(4791));
        prop_assert_eq!(f.int().unwrap().hops(), int.hops());
        prop_assert_eq!(f.ib().unwrap().icrc_valid, Some(true));
        let p = Frame::parse(&plain, &opts()).unwrap();
        prop_assert_eq!(f.ib().unwrap().repr(), p.ib().unwrap().repr());
    }

    #[test]
    fn parse_of_emit_is_identity((repr, payload) in arbitrary::frame()) {
        let bytes = repr.to_vec(&payload);
        let f = Frame::parse(&bytes, &opts()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (back, back_payload) = f.to_repr().expect("complete frame converts back");
        prop_assert_eq!(back, repr);
        prop_assert_eq!(back_payload, &payload[..]);
        prop_assert!(f.trailer.is_empty());
        if let Some(ib) = f.ib() {
            prop_assert_eq!(ib.icrc_valid, Some(true));
        }
        prop_assert_eq!(back.to_vec(back_payload), bytes);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600), extra in 0usize..100) {
        let _ = Frame::parse(&bytes, &opts());
        if let Ok(f) = Frame::parse_lax(&bytes, bytes.len() + extra, &opts()) {
            let _ = f.kind();
            if let Some((r, p)) = f.to_repr() {
                let _ = r.to_vec(p);
            }
        }
    }

    #[test]
    fn mutated_frames_never_panic(
        (repr, payload) in arbitrary::frame(),
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8),
        cut in any::<usize>(),
    ) {
        let mut bytes = repr.to_vec(&payload);
        for (i, v) in flips {
            let n = bytes.len();
            bytes[i % n] = v;
        }
        let cut = cut % (bytes.len() + 1);
        for b in [&bytes[..], &bytes[..cut]] {
            let _ = Frame::parse(b, &opts());
            if let Ok(f) = Frame::parse_lax(b, bytes.len(), &opts()) {
                let _ = f.kind();
                if let Some((r, p)) = f.to_repr() {
                    // Whatever decodes completely re-emits to a frame of the
                    // same length (bytes may differ where a mutation hit pad
                    // or reserved bytes, which emit writes as zero).
                    let mut again = r.to_vec(p);
                    again.extend_from_slice(f.trailer);
                    prop_assert_eq!(again.len(), b.len());
                }
            }
        }
    }

    #[test]
    fn truncation_anywhere_is_lax_decodable((repr, payload) in arbitrary::frame(), cut in any::<usize>()) {
        let bytes = repr.to_vec(&payload);
        let cut = 14 + cut % (bytes.len() - 13);
        let f = Frame::parse_lax(&bytes[..cut], bytes.len(), &opts()).unwrap();
        if cut < bytes.len() {
            // Whatever was decoded agrees with the original.
            if let (Some(ib), NetRepr::RoceV2 { ib: orig, .. } | NetRepr::RoceV1 { ib: orig, .. }) = (f.ib(), repr.net) {
                prop_assert_eq!(ib.bth, orig.bth);
                let (d, o) = (ib.ext, orig.ext);
                prop_assert!(d.reth().is_none() || d.reth() == o.reth());
                prop_assert!(d.aeth().is_none() || d.aeth() == o.aeth());
                prop_assert!(d.deth().is_none() || d.deth() == o.deth());
                prop_assert!(d.immdt().is_none() || d.immdt() == o.immdt());
                prop_assert!(d.atomic_eth().is_none() || d.atomic_eth() == o.atomic_eth());
                prop_assert_eq!(ib.payload, &payload[..ib.payload.len()]);
                prop_assert_eq!(f.kind(), FrameKind::Truncated);
            }
        } else {
            prop_assert!(f.stop.is_none());
        }
    }
}
