//! The codec against real captures in ../shared/traces/public: every RoCE
//! frame decodes, every ICRC is valid, and every complete frame re-emits
//! byte for byte. These files have no licence to ship, so they are read in
//! place and the tests skip (saying so) where ../shared is absent.

use std::path::Path;

use roce_capture::read::{CaptureError, CaptureReader, Next};
use roce_codec::{FrameKind, ParseOptions};
use roce_testkit::ci::public_trace as public;

struct Seen {
    kinds: Vec<FrameKind>,
    icrc_checked: usize,
    round_trips: usize,
}

fn read_all(path: &Path) -> Seen {
    let mut r = CaptureReader::open(path).unwrap();
    let opts = ParseOptions::default();
    let mut s = Seen {
        kinds: Vec::new(),
        icrc_checked: 0,
        round_trips: 0,
    };
    loop {
        match r.next_frame().unwrap() {
            Next::Frame(raw) => {
                let f = raw.decode(&opts).unwrap();
                s.kinds.push(f.kind());
                if let Some(ib) = f.ib() {
                    assert_eq!(
                        ib.icrc_valid,
                        Some(true),
                        "frame at byte {} has a bad ICRC",
                        raw.offset
                    );
                    s.icrc_checked += 1;
                }
                if let Some((repr, payload)) = f.to_repr() {
                    let mut again = repr.to_vec(payload);
                    again.extend_from_slice(f.trailer);
                    assert_eq!(
                        again, raw.data,
                        "frame at byte {} does not re-emit",
                        raw.offset
                    );
                    s.round_trips += 1;
                }
            }
            Next::End => break,
            Next::Cut { offset } => panic!("cut at {offset}"),
        }
    }
    s
}

#[test]
fn hardware_rocev2_trace() {
    let Some(p) = public("roce.pcap") else { return };
    let s = read_all(&p);
    assert_eq!(s.kinds.len(), 123);
    assert_eq!(
        s.kinds.iter().filter(|k| **k == FrameKind::RoceV2).count(),
        105
    );
    assert_eq!(s.icrc_checked, 105);
    assert_eq!(s.round_trips, 123);
}

#[test]
fn soft_roce_read_request() {
    let Some(p) = public("InfiniBandPacket.pcap") else {
        return;
    };
    let mut r = CaptureReader::open(&p).unwrap();
    let Next::Frame(raw) = r.next_frame().unwrap() else {
        panic!()
    };
    let f = raw.decode(&ParseOptions::default()).unwrap();
    let ib = f.ib().unwrap();
    assert_eq!(ib.bth.opcode.name(), "RC_RDMA_READ_REQUEST");
    assert_eq!(ib.bth.dest_qp, 0x11);
    assert_eq!(ib.bth.psn.value(), 5557091);
    assert!(ib.bth.ack_req);
    let reth = ib.ext.reth().unwrap();
    assert_eq!(
        (reth.va, reth.rkey, reth.dma_len),
        (0x00007fee260fb000, 0x2b8, 65536)
    );
    assert_eq!(ib.icrc, Some(0x08c6154au32.to_be_bytes()));
    assert_eq!(ib.icrc_valid, Some(true));
}

#[test]
fn dcbx_lldp_is_not_pfc() {
    let Some(p) = public("dcb_pfc.pcap") else {
        return;
    };
    let s = read_all(&p);
    assert_eq!(s.kinds, vec![FrameKind::Other; 5]);
}

#[test]
fn erf_link_type_is_a_clear_error() {
    let Some(p) = public("infiniband.pcap") else {
        return;
    };
    let e = CaptureReader::open(&p).err().expect("ERF is not supported");
    assert!(
        matches!(e, CaptureError::UnsupportedLinkType { linktype: 197, .. }),
        "{e}"
    );
    let msg = e.to_string();
    assert!(
        msg.contains("infiniband.pcap") && msg.contains("link type 197"),
        "{msg}"
    );
}
