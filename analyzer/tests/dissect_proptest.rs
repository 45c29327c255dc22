//! No byte string makes `dissect` panic or print anything but one valid
//! JSON object per frame: arbitrary bytes, mutated valid frames and
//! truncated valid frames, on every link type, through the same
//! `Dissector` that `roce-pcap dissect` runs. Also the CLI end to end:
//! exit codes and messages for bad input.

use std::process::Command;

use proptest::prelude::*;
use roce_capture::read::{LinkType, RawFrame};
use roce_codec::{ParseOptions, arbitrary};
use roce_pcap::dissect::{Dissector, Format, json_line};
use roce_testkit::cli::{TempDir, json_lines, succeed};
use roce_testkit::repo::trace as corpus;
use roce_testkit::synth::{CaptureFormat, Synth};

fn link() -> impl Strategy<Value = LinkType> {
    prop_oneof![
        Just(LinkType::Ethernet),
        Just(LinkType::LinuxSll),
        Just(LinkType::LinuxSll2)
    ]
}

/// Dissects one frame both ways and checks the JSON line.
fn check(data: &[u8], wire_len: usize, link: LinkType) -> Result<(), TestCaseError> {
    let raw = RawFrame {
        ts_ns: 1,
        wire_len: wire_len.max(data.len()),
        data,
        link,
        offset: 0,
    };
    let decoded = raw.decode(&ParseOptions::default());
    let mut line = Vec::new();
    json_line(&mut line, 7, &raw, &decoded);
    prop_assert!(!line.contains(&b'\n'));
    let v: serde_json::Value = serde_json::from_slice(&line)
        .map_err(|e| TestCaseError::fail(format!("{e}: {}", String::from_utf8_lossy(&line))))?;
    let o = v.as_object().unwrap();
    prop_assert_eq!(&o["frame"], 7);
    prop_assert_eq!(&o["caplen"], data.len());
    let kind = o["kind"].as_str().unwrap();
    prop_assert!(
        [
            "rocev2",
            "rocev1",
            "pfc",
            "pause8023x",
            "other",
            "malformed",
            "truncated"
        ]
        .contains(&kind)
    );
    // `error` exactly when decoding stopped.
    prop_assert_eq!(
        o.contains_key("error"),
        kind == "malformed" || kind == "truncated"
    );
    if let Some(icrc) = o.get("icrc") {
        let s = icrc.as_str().unwrap();
        prop_assert!(s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit()));
    }
    if o.contains_key("icrc_valid") {
        prop_assert!(o.contains_key("icrc"));
    }
    // The text format must not panic either, and stays on one line.
    let mut d = Dissector::new(ParseOptions::default(), Format::Text);
    let mut out = Vec::new();
    d.write_frame(&raw, &mut out).unwrap();
    prop_assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 1);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..400),
                       extra in 0usize..64, link in link()) {
        check(&data, data.len() + extra, link)?;
    }

    #[test]
    fn mutated_valid_frames((repr, payload) in arbitrary::frame(),
                            flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let mut b = repr.to_vec(&payload);
        for (at, x) in flips {
            let n = b.len();
            b[at % n] ^= x | 1;
        }
        check(&b, b.len(), LinkType::Ethernet)?;
    }

    #[test]
    fn truncated_valid_frames((repr, payload) in arbitrary::frame(), cut in any::<usize>()) {
        let b = repr.to_vec(&payload);
        let cut = cut % (b.len() + 1);
        check(&b[..cut], b.len(), LinkType::Ethernet)?;
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
}

#[test]
fn cut_file_prints_what_was_read_and_exits_3() {
    let bytes = std::fs::read(corpus("rc_flow.pcapng")).unwrap();
    let dir = TempDir::new("cut");
    let p = dir.join("cut.pcapng");
    std::fs::write(&p, &bytes[..bytes.len() - 100]).unwrap();
    let out = bin()
        .args(["dissect", "--format", "jsonl"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let lines = String::from_utf8(out.stdout).unwrap();
    assert_eq!(lines.lines().count(), 19, "all frames before the cut");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cut.pcapng") && err.contains("in the middle of the record at byte"),
        "{err}"
    );
}

#[test]
fn bad_input_is_a_clear_error_with_exit_2() {
    let dir = TempDir::new("bad");
    let p = dir.join("notes.txt");
    std::fs::write(&p, b"not a capture").unwrap();
    for (args, needle) in [
        (
            vec!["dissect".to_string(), p.display().to_string()],
            "notes.txt: not a pcap or pcapng",
        ),
        (
            vec![
                "dissect".into(),
                dir.join("missing.pcap").display().to_string(),
            ],
            "missing.pcap: cannot open",
        ),
        (
            vec![
                "dissect".into(),
                corpus("usec.pcap").display().to_string(),
                "--format".into(),
                "xml".into(),
            ],
            "--format",
        ),
        (
            vec![
                "dissect".into(),
                corpus("usec.pcap").display().to_string(),
                "--roce-port".into(),
                "70000".into(),
            ],
            "--roce-port",
        ),
    ] {
        let out = bin().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// One RDMA WRITE to UDP port 4791 and one to port 1000 (a lab setup with a
/// non-standard port).
fn two_port_capture(path: &std::path::Path) {
    use roce_codec::*;
    let mut s = Synth::create_named(&[(path, CaptureFormat::Pcap, 0, "x")]).unwrap();
    for (i, dport) in [4791u16, 1000].into_iter().enumerate() {
        let ib = IbRepr::new(Opcode(0x0A), 0x11, Psn::new(i as u32), 64);
        let ip = IpRepr::V4(Ipv4Repr::udp(
            std::net::Ipv4Addr::new(10, 0, 0, 1),
            std::net::Ipv4Addr::new(10, 0, 0, 2),
            26,
            2,
        ));
        let mut f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], ip, 49152, ib);
        if let NetRepr::RoceV2 { udp, .. } = &mut f.net {
            udp.dst_port = dport;
        }
        s.record(0, 1_000 * (i as u64 + 1), &f, &f.to_vec(&[0x5a; 64]))
            .unwrap();
    }
    s.finish().unwrap();
}

/// `--roce-port` adds a port to 4791, in dissect as in analyze and plot.
#[test]
fn roce_port_flag_adds_a_port() {
    let dir = TempDir::new("roce-port");
    let path = dir.join("two_ports.pcap");
    two_port_capture(&path);
    let run = |cmd: &str, format: &str, extra: &[&str]| {
        succeed(bin().args([cmd, "--format", format]).args(extra).arg(&path))
    };
    let kinds = |extra: &[&str]| -> Vec<String> {
        json_lines(&run("dissect", "jsonl", extra).stdout)
            .iter()
            .map(|v| format!("{}:{}", v["dport"], v["kind"].as_str().unwrap()))
            .collect()
    };
    assert_eq!(kinds(&[]), ["4791:rocev2", "1000:other"]);
    assert_eq!(
        kinds(&["--roce-port", "1000"]),
        ["4791:rocev2", "1000:rocev2"]
    );
    let analyze = |extra: &[&str]| -> u64 {
        let v: serde_json::Value =
            serde_json::from_slice(&run("analyze", "json", extra).stdout).unwrap();
        v["files"][0]["roce_packets"].as_u64().unwrap()
    };
    assert_eq!(analyze(&[]), 1);
    assert_eq!(analyze(&["--roce-port", "1000"]), 2);
    // Seven ports besides 4791 fit the codec's set of eight; eight do not.
    let many: Vec<String> = (1..=8)
        .flat_map(|p| ["--roce-port".to_string(), p.to_string()])
        .collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let out = bin()
        .args(["dissect"])
        .args(&many)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--roce-port: at most 7 ports besides 4791"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(kinds(&many[..14]).len(), 2);
}

#[test]
fn microsecond_and_nanosecond_timestamps() {
    let ts = |name: &str| -> Vec<u64> {
        let out = bin()
            .args(["dissect", "--format", "jsonl"])
            .arg(corpus(name))
            .output()
            .unwrap();
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["ts_ns"].as_u64().unwrap()
            })
            .collect()
    };
    // Generator: T0 = ...645.123456789 s, then 1 ms apart; a microsecond
    // file keeps ...645.123456 s.
    assert_eq!(ts("usec.pcap")[0], 1_704_164_645_123_456_000);
    assert_eq!(ts("usec.pcap")[1], 1_704_164_645_124_456_000);
    assert_eq!(ts("sll.pcap")[0], 1_704_164_645_123_456_789);
    assert_eq!(ts("rc_flow.pcapng")[0], 1_704_164_645_123_456_789);
}

#[test]
fn text_format_summarises_each_frame() {
    let out = bin()
        .arg("dissect")
        .arg(corpus("rc_flow.pcapng"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let s = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines.len(), 20);
    assert!(
        lines[0].contains("RC_RDMA_WRITE_FIRST qp 0x12 psn 100")
            && lines[0].contains("dmalen 10000")
    );
    assert!(lines[1].contains(" CE "), "{}", lines[1]);
    assert!(
        lines[3].contains("CNP qp 0x11") && lines[3].contains("BECN"),
        "{}",
        lines[3]
    );
    assert!(lines[7].contains("psn_sequence_error"), "{}", lines[7]);
    assert!(
        lines[12].contains("rnr_nak") && lines[12].contains("1280us"),
        "{}",
        lines[12]
    );
}
