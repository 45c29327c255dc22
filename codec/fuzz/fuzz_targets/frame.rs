//! Any byte string through the codec's frame decoder, as `roce-pcap
//! dissect` drives it: no panic, and every frame that converts back to a
//! repr re-emits byte for byte (except a wrong ICRC, which emit corrects).
//!
//! The first byte picks the wire length the capture claims (to exercise
//! snaplen truncation) and whether the ICRC is verified; the rest is the
//! frame.
//!
//! ```sh
//! cd codec/fuzz && cargo +nightly fuzz run frame -- -max_total_time=300
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;
use roce_codec::{Frame, ParseOptions, PortSet, Warnings};

fuzz_target!(|input: &[u8]| {
    let Some((&ctl, bytes)) = input.split_first() else {
        return;
    };
    let opts = ParseOptions {
        roce_v2_ports: if ctl & 0x80 != 0 {
            PortSet::new(&[4791, 1000]).unwrap()
        } else {
            PortSet::default()
        },
        verify_icrc: ctl & 0x40 == 0,
    };
    let wire_len = bytes.len() + usize::from(ctl & 0x3F);
    let Ok(f) = Frame::parse_lax(bytes, wire_len, &opts) else {
        return;
    };
    // Everything a dissector reads must be reachable without a panic.
    let _ = (f.kind().name(), f.warnings.to_string(), f.stop.map(|e| e.to_string()));
    if let Some(ib) = f.ib() {
        let _ = (ib.bth.opcode.name(), ib.repr(), ib.payload_len);
    }
    if wire_len != bytes.len() || !opts.verify_icrc {
        return;
    }
    if let Some((repr, payload)) = f.to_repr() {
        let mut again = repr.to_vec(payload);
        again.extend_from_slice(f.trailer);
        if f.warnings.contains(Warnings::ICRC_MISMATCH) {
            assert_eq!(again.len(), bytes.len());
        } else {
            assert_eq!(again, bytes, "emit(parse(bytes)) != bytes");
        }
        let back = Frame::parse(&again, &opts).expect("an emitted frame parses");
        assert_eq!(back.to_repr().map(|(r, _)| r), Some(repr));
    }
});
