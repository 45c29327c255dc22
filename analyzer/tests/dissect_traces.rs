//! The generated corpus in `traces/`: it cannot drift from its generator,
//! every frame decodes to the kind it was built to be, and every complete
//! frame re-emits byte for byte (`emit(parse(bytes)) == bytes`).

use std::path::{Path, PathBuf};

use roce_capture::read::{CaptureReader, LinkType, Next};
use roce_codec::{FrameKind, ParseOptions};
use roce_testkit::cli::TempDir;
use roce_testkit::{repo, traces};

fn traces_dir() -> PathBuf {
    repo::root().join("traces")
}

/// Rewrites the committed corpus from the generator. Run it after changing
/// `testkit/src/traces.rs`, then commit the files:
/// `cargo test -p roce-pcap --test dissect_traces -- --ignored regenerate`
#[test]
#[ignore = "writes into traces/"]
fn regenerate() {
    traces::generate(&traces_dir()).unwrap();
}

#[test]
fn committed_corpus_equals_a_fresh_generation() {
    let dir = TempDir::new("corpus");
    traces::generate(&dir).unwrap();
    for name in traces::FILES {
        let fresh = std::fs::read(dir.join(name)).unwrap();
        let committed = std::fs::read(traces_dir().join(name))
            .unwrap_or_else(|e| panic!("traces/{name}: {e}; run the `regenerate` test"));
        assert!(
            fresh == committed,
            "traces/{name} differs from what testkit/src/traces.rs writes now \
             ({} vs {} bytes); run the `regenerate` test and commit",
            committed.len(),
            fresh.len()
        );
    }
    // Nothing in traces/ that the generator does not make.
    let mut extra: Vec<String> = std::fs::read_dir(traces_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !traces::FILES.contains(&n.as_str()))
        .filter(|n| n != "README.md")
        // The analyzer's ground-truth corpus, drift-checked by analyze_truth.rs.
        .filter(|n| !n.starts_with("analyze_"))
        .collect();
    extra.sort();
    assert!(extra.is_empty(), "unexpected files in traces/: {extra:?}");
    let total: u64 = traces::FILES
        .iter()
        .map(|n| std::fs::metadata(traces_dir().join(n)).unwrap().len())
        .sum();
    assert!(total < 256 * 1024, "traces/ holds {total} bytes");
}

/// Decodes every frame of one corpus file: its kinds, and how many frames
/// re-emitted byte for byte.
fn kinds_and_round_trips(path: &Path) -> (Vec<FrameKind>, usize) {
    let mut r = CaptureReader::open(path).unwrap();
    let opts = ParseOptions::default();
    let (mut kinds, mut round_trips) = (Vec::new(), 0);
    loop {
        match r.next_frame().unwrap() {
            Next::Frame(raw) => {
                let Ok(f) = raw.decode(&opts) else {
                    kinds.push(FrameKind::Malformed);
                    continue;
                };
                kinds.push(f.kind());
                if let Some((repr, payload)) = f.to_repr() {
                    let mut again = repr.to_vec(payload);
                    again.extend_from_slice(f.trailer);
                    // Emit writes Ethernet; a cooked capture has its own
                    // link header, so compare from the EtherType's payload.
                    let (again, data) = match raw.link {
                        LinkType::Ethernet => (&again[..], raw.data),
                        LinkType::LinuxSll => (&again[14..], &raw.data[16..]),
                        LinkType::LinuxSll2 => (&again[14..], &raw.data[20..]),
                    };
                    if f.warnings.contains(roce_codec::Warnings::ICRC_MISMATCH) {
                        // Emit computes the ICRC: only those 4 bytes differ.
                        let at = data.len() - f.trailer.len() - 4;
                        assert_eq!(again[..at], data[..at]);
                        assert_eq!(again[at + 4..], data[at + 4..]);
                        assert_ne!(again[at..at + 4], data[at..at + 4]);
                        continue;
                    }
                    assert_eq!(
                        again,
                        data,
                        "{} frame {}: emit(parse(bytes)) != bytes",
                        path.display(),
                        kinds.len()
                    );
                    round_trips += 1;
                }
            }
            Next::End => return (kinds, round_trips),
            Next::Cut { offset } => panic!("{}: cut at {offset}", path.display()),
        }
    }
}

#[test]
fn every_frame_is_what_it_was_built_to_be_and_round_trips() {
    use FrameKind::*;
    let dir = traces_dir();
    let mut total_round_trips = 0;
    let mut check = |name: &str, want: &[FrameKind], round_trips: usize| {
        let (kinds, rt) = kinds_and_round_trips(&dir.join(name));
        assert_eq!(kinds, want, "{name}");
        assert_eq!(rt, round_trips, "{name}: frames that re-emit");
        total_round_trips += rt;
    };
    // 5 transports' defined opcodes (RC 25, UC 12, RD 22, UD 2, XRC 23, CNP 1),
    // 11 reserved ones and one TVer 1: all decode as RoCEv2.
    let defined = (0..=255u8)
        .filter(|&o| roce_codec::Opcode(o).info().is_some())
        .count();
    assert_eq!(defined, 25 + 12 + 22 + 2 + 23 + 1);
    check("opcodes.pcap", &vec![RoceV2; defined + 12], defined + 12);
    check("rc_flow.pcapng", &[RoceV2; 20], 20);
    check("vlan_ipv6_ecn.pcapng", &[RoceV2; 12], 12);
    check("rocev1.pcap", &[RoceV1; 12], 12);
    check(
        "pfc_pause.pcap",
        &[Pfc, Pfc, Pfc, Pfc, Pause8023x, Pause8023x, Other],
        // The MPCP frame's body is not decoded, so it does not re-emit.
        6,
    );
    check(
        "malformed.pcap",
        &[
            RoceV2, Malformed, Malformed, Malformed, Malformed, Malformed, Malformed, RoceV2,
            RoceV2, RoceV2, Other, Malformed, RoceV1, Malformed, Other, Other, RoceV2,
        ],
        // PadCnt, payload on ACK, CNP reserved, 4791 -> 5000, GRH next
        // header, UDP, TCP, padded ACK. PadCnt 3 with no room has no repr;
        // the bad ICRC re-emits corrected (checked above).
        7,
    );
    check(
        "truncated.pcap",
        &[
            Truncated, Truncated, Truncated, Truncated, Truncated, Truncated, Truncated, RoceV2,
        ],
        1,
    );
    check("sll.pcap", &[RoceV2; 4], 4);
    check("sll2.pcap", &[RoceV2; 4], 4);
    check("usec.pcap", &[RoceV2; 4], 4);
    let mut setup = vec![RoceV2; 6];
    setup.extend([Other; 5]);
    setup.extend([RoceV2; 2]);
    setup.extend([Other; 2]);
    setup.extend([RoceV2; 4]);
    setup.extend([Other, Malformed, RoceV2, RoceV2]);
    check("setup.pcap", &setup, 22);
    assert!(total_round_trips > 150, "{total_round_trips}");
}
