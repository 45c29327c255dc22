//! The CM messages and their MAD, byte by byte: literal offsets from
//! Linux's `cm_msgs.h`, emit into a 0xa5-filled buffer, round trips, and
//! the whole RoCEv2 frame that carries a MAD.

use core::net::{IpAddr, Ipv4Addr};

use proptest::prelude::*;
use roce_codec::arbitrary;
use roce_codec::wire::cm::{self, CmDreq, CmMessage, CmRej, CmRep, CmReq, CmRtu, RejReason};
use roce_codec::wire::cma::{self, CmaHdr};
use roce_codec::wire::mad::MadRepr;
use roce_codec::*;

fn a() -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))
}
fn b() -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2))
}

fn req() -> CmReq {
    CmReq::rdma_cm(0x1122_3344, 0x000112, 0x4c11a5, a(), 0xb5c3, b(), 18515, 3)
}

#[test]
fn req_fields_sit_where_cm_msgs_h_puts_them() {
    let m = CmRepr::new(0x0000_0001_0000_002a, CmMessage::Req(req()));
    let mut buf = [0xa5; 256];
    m.emit(&mut buf);
    // MAD header: base version 1, class 7, class version 2, method Send.
    assert_eq!(&buf[..4], &[1, 7, 2, 3]);
    assert_eq!(&buf[8..16], &[0, 0, 0, 1, 0, 0, 0, 0x2a]);
    assert_eq!(&buf[16..18], &[0x00, 0x10]);
    let d = &buf[24..];
    assert_eq!(&d[0..4], &[0x11, 0x22, 0x33, 0x44]);
    assert_eq!(&d[4..8], &[0; 4]);
    // Service ID 0x0000000001064853: RDMA_PS_TCP, port 18515.
    assert_eq!(&d[8..16], &[0, 0, 0, 0, 0x01, 0x06, 0x48, 0x53]);
    // Local QPN 0x000112, responder resources 0.
    assert_eq!(&d[32..36], &[0x00, 0x01, 0x12, 0x00]);
    // Remote CM response timeout 20 << 3, RC, no flow control.
    assert_eq!(d[43], 20 << 3);
    // Starting PSN 0x4c11a5, local CM response timeout 20, retry count 7.
    assert_eq!(&d[44..48], &[0x4c, 0x11, 0xa5, 20 << 3 | 7]);
    assert_eq!(&d[48..50], &[0xff, 0xff]);
    // Path MTU 3 (1024), RNR retry 7; max CM retries 15.
    assert_eq!(d[50], 0x37);
    assert_eq!(d[51], 0xf0);
    // Primary path: LIDs 0xFFFF, GIDs ::ffff:10.0.0.1 / ::ffff:10.0.0.2, hop limit 64.
    assert_eq!(&d[52..56], &[0xff; 4]);
    assert_eq!(&d[56 + 10..56 + 16], &[0xff, 0xff, 10, 0, 0, 1]);
    assert_eq!(&d[72 + 10..72 + 16], &[0xff, 0xff, 10, 0, 0, 2]);
    assert_eq!(d[93], 64);
    // Alternate path all zero; private data: the RDMA CM header.
    assert!(d[96..140].iter().all(|&x| x == 0));
    assert_eq!(&d[140..144], &[0x00, 0x40, 0xb5, 0xc3]);
    assert_eq!(&d[156..160], &[10, 0, 0, 1]);
    assert_eq!(&d[172..176], &[10, 0, 0, 2]);
    assert!(d[176..].iter().all(|&x| x == 0));
    let back = CmRepr::parse(&buf).unwrap();
    assert_eq!(back, m);
    let CmMessage::Req(r) = back.message else {
        panic!("a REQ")
    };
    assert_eq!(cma::service_port(r.service_id), Some(18515));
    let h = CmaHdr::parse(&r.private_data).unwrap();
    assert_eq!((h.src, h.src_port, h.dst), (a(), 0xb5c3, b()));
}

#[test]
fn rep_rej_rtu_dreq_fields() {
    let rep = CmRep {
        vendor_id: 0x0002_c90a,
        ..CmRep::answering(&req(), 0x5566_7788, 0x000113, 0x7a0001)
    };
    let mut buf = [0xa5; 256];
    CmRepr::new(7, CmMessage::Rep(rep)).emit(&mut buf);
    let d = &buf[24..];
    assert_eq!(&buf[16..18], &[0x00, 0x13]);
    assert_eq!(&d[0..8], &[0x55, 0x66, 0x77, 0x88, 0x11, 0x22, 0x33, 0x44]);
    assert_eq!(&d[12..16], &[0x00, 0x01, 0x13, 0x02]);
    assert_eq!(&d[16..20], &[0, 0, 0, 0xc9]);
    assert_eq!(&d[20..24], &[0x7a, 0x00, 0x01, 0x0a]);
    assert_eq!(d[27], 7 << 5);
    assert_eq!(CmRepr::parse(&buf).unwrap().message, CmMessage::Rep(rep));

    let rej = CmRej {
        local_comm_id: 0x5566_7788,
        remote_comm_id: 0x1122_3344,
        message_rejected: 0,
        reject_info_length: 0,
        reason: RejReason::InvalidServiceId,
        ari: [0; 72],
        private_data: [0; 148],
    };
    CmRepr::new(7, CmMessage::Rej(rej)).emit(&mut buf);
    assert_eq!(&buf[16..18], &[0x00, 0x12]);
    assert_eq!(&buf[24 + 10..24 + 12], &[0, 8]);
    assert_eq!(RejReason::from_code(8).name(), "invalid service ID");
    assert_eq!(RejReason::from_code(34), RejReason::Unknown(34));
    assert_eq!(RejReason::Unknown(34).code(), 34);

    CmRepr::new(7, CmMessage::Rtu(CmRtu::between(1, 2))).emit(&mut buf);
    assert_eq!(&buf[16..18], &[0x00, 0x14]);
    assert_eq!(&buf[24..32], &[0, 0, 0, 1, 0, 0, 0, 2]);
    assert!(buf[32..].iter().all(|&x| x == 0));

    let dreq = CmDreq {
        local_comm_id: 1,
        remote_comm_id: 2,
        remote_qpn: 0x000113,
        private_data: [0; 220],
    };
    CmRepr::new(7, CmMessage::Dreq(dreq)).emit(&mut buf);
    assert_eq!(&buf[24 + 8..24 + 12], &[0x00, 0x01, 0x13, 0x00]);
}

#[test]
fn other_attributes_and_classes_are_errors_naming_the_field() {
    let mut buf = CmRepr::new(1, CmMessage::Rtu(CmRtu::between(1, 2))).to_bytes();
    buf[17] = 0x19; // LAP: not a connection message here
    assert_eq!(
        CmRepr::parse(&buf).unwrap_err().to_string(),
        "CM at offset 24: field `attribute_id` is 25, expected a connection message (0x0010..=0x0016)"
    );
    buf[1] = 0x03; // Subnet administration
    assert_eq!(
        CmRepr::parse(&buf).unwrap_err().to_string(),
        "MAD at offset 1: field `mgmt_class` is 3, expected 0x07 (CM)"
    );
    assert_eq!(
        CmRepr::parse(&buf[..100]).unwrap_err().to_string(),
        "MAD at offset 0: 256 bytes required, 100 present"
    );
}

#[test]
fn a_mad_frame_round_trips_and_its_payload_decodes() {
    let ip = Ipv4Repr::udp(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), 0, 0);
    let f = FrameRepr::mad([2; 6], [4; 6], IpRepr::V4(ip), 0xd1a0, Psn::new(0));
    let mad = CmRepr::new(42, CmMessage::Req(req()));
    let bytes = f.to_vec(&mad.to_bytes());
    // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8 + MAD 256 + ICRC 4.
    assert_eq!(bytes.len(), 322);
    let p = Frame::parse(&bytes, &ParseOptions::default()).unwrap();
    let ib = p.ib().unwrap();
    assert_eq!(ib.icrc_valid, Some(true));
    let payload = MadRepr::payload_of(ib).unwrap();
    assert_eq!(CmRepr::parse(payload).unwrap(), mad);
    let (repr, pl) = p.to_repr().unwrap();
    assert_eq!(repr.to_vec(pl), bytes);
}

#[test]
fn cm_timeout_exponents() {
    // 4.096 µs × 2^20 = 4.29 s, Linux's CMA_CM_RESPONSE_TIMEOUT.
    assert_eq!(cm::cm_timeout_ns(20), 4_294_967_296);
    assert_eq!(cm::cm_timeout_ns(0), 4096);
}

proptest! {
    #[test]
    fn every_message_round_trips(msg in arbitrary::cm_message(), tid in any::<u64>()) {
        let m = CmRepr::new(tid, msg);
        let mut buf = [0xa5; 256];
        m.emit(&mut buf);
        prop_assert_eq!(CmRepr::parse(&buf).unwrap(), m);
    }

    #[test]
    fn any_class_data_never_panics(attr_id in 0x10u16..0x17, d in proptest::collection::vec(any::<u8>(), 232)) {
        let _ = CmMessage::parse(attr_id, &d);
    }
}
