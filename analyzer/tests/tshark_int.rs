//! In-band telemetry (HPCC's INT) judged by tshark, which knows nothing of
//! it: a frame with telemetry must be a well-formed UDP datagram to port
//! 4792 (IP and UDP lengths agreeing with the frame, IPv4 checksum good)
//! whose payload starts with the shim and MD header `wire::int` documents;
//! the same frame without telemetry stays InfiniBand to tshark.

use core::net::Ipv6Addr;

use roce_codec::*;
use roce_testkit::synth::{Endpoint, temp_captures};
use roce_testkit::tshark;

/// Two switches' records on a 100G then a 25G port.
fn two_hops() -> IntRepr {
    let mut int = IntRepr::source(4791, 5, 1);
    int.push(IntHopRepr::new(100_000_000_000, 5_000, 1_280_000, 16_000, 1).unwrap());
    int.push(IntHopRepr::new(25_000_000_000, 6_000, 128_000, 800, 1).unwrap());
    int
}

/// Frames 1-6: WRITE Only with two records, the ACK echoing them, a WRITE
/// as the sender's NIC starts it (no record yet), the first WRITE without
/// telemetry, and the first and the fourth over IPv6.
fn write_capture() -> (roce_testkit::cli::TempDir, std::path::PathBuf, Vec<Vec<u8>>) {
    let (dir, [p], mut s) = temp_captures("tshark-int", ["int.pcap"]);
    let a = Endpoint::host(1, 0x11);
    let b = Endpoint::host(2, 0x22);
    let ip = |from: &Endpoint, to: &Endpoint| IpRepr::V4(Ipv4Repr::udp(from.ip, to.ip, 26, 2));
    let data = FrameRepr::rocev2(
        b.mac,
        a.mac,
        ip(&a, &b),
        0xc011,
        IbRepr::new(Opcode(0x0A), b.qpn, Psn::new(7), 1000),
    );
    let ack = FrameRepr::rocev2(
        a.mac,
        b.mac,
        ip(&b, &a),
        0xc022,
        IbRepr::ack(a.qpn, Psn::new(7), Syndrome::ACK_NO_CREDITS, 1),
    );
    let v6 = FrameRepr::rocev2(
        b.mac,
        a.mac,
        IpRepr::V6(Ipv6Repr {
            dscp: 26,
            ecn: 2,
            flow_label: 0x12345,
            next_header: 17,
            hop_limit: 64,
            src: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1),
            dst: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 2),
        }),
        0xc011,
        IbRepr::new(Opcode(0x0A), b.qpn, Psn::new(8), 1000),
    );
    let frames = [
        data.with_int(two_hops()),
        ack.with_int(two_hops().echo_of(4791)),
        data.with_int(IntRepr::source(4791, 5, 1)),
        data,
        v6.with_int(two_hops()),
        v6,
    ];
    let payload = [0x5a; 1000];
    let mut all = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let bytes = f.to_vec(&payload);
        s.record(0, 1_000 * (i as u64 + 1), f, &bytes).unwrap();
        all.push(bytes);
    }
    s.finish().unwrap();
    (dir, p, all)
}

#[test]
fn tshark_sees_udp_to_4792_with_the_shim_first() {
    if tshark::tshark().is_none() {
        return;
    }
    let (_d, p, bytes) = write_capture();
    let names = [
        "frame.len",
        "ip.len",
        "ipv6.plen",
        "udp.length",
        "udp.dstport",
        "ip.checksum.status",
        "_ws.malformed",
        "_ws.expert.message",
        "infiniband.bth.opcode",
        "udp.payload",
    ];
    let rows = tshark::fields(&p, &["-o", "ip.check_checksum:TRUE"], &names);
    assert_eq!(rows.len(), 6);
    let col =
        |r: &Vec<String>, name: &str| r[names.iter().position(|n| *n == name).unwrap()].clone();
    // Frame lengths: 14 + 20 + 8 + telemetry (16 + 8 per record) + BTH 12
    // + RETH 16 + 1000 + ICRC 4 for the WRITEs; BTH + AETH 4 + ICRC for the
    // ACK; 40 for IPv6's header.
    let telemetry = [32, 32, 16, 0, 32, 0];
    let ib = [1032, 20, 1032, 1032, 1032, 1032];
    for (i, r) in rows.iter().enumerate() {
        let frame = i + 1;
        let v6 = i >= 4;
        let ip_hdr = if v6 { 40 } else { 20 };
        let udp_len = 8 + telemetry[i] + ib[i];
        assert_eq!(
            col(r, "frame.len"),
            (14 + ip_hdr + udp_len).to_string(),
            "frame {frame}"
        );
        assert_eq!(bytes[i].len(), 14 + ip_hdr + udp_len);
        assert_eq!(col(r, "udp.length"), udp_len.to_string(), "frame {frame}");
        if v6 {
            assert_eq!(col(r, "ipv6.plen"), udp_len.to_string());
        } else {
            assert_eq!(
                col(r, "ip.len"),
                (20 + udp_len).to_string(),
                "frame {frame}"
            );
            assert_eq!(col(r, "ip.checksum.status"), "1", "frame {frame}: good");
        }
        assert_eq!(col(r, "_ws.malformed"), "", "frame {frame}");
        // The one remark: RoCEv2 sends UDP checksum 0 over IPv6 too, which
        // plain UDP over IPv6 may not (RFC 8200 §8.1); with or without
        // telemetry alike.
        let remark = if v6 { "Illegal checksum value (0)" } else { "" };
        assert_eq!(col(r, "_ws.expert.message"), remark, "frame {frame}");
        let with_int = telemetry[i] > 0;
        assert_eq!(
            col(r, "udp.dstport"),
            if with_int { "4792" } else { "4791" }
        );
        if !with_int {
            assert_eq!(col(r, "infiniband.bth.opcode"), "10", "frame {frame}");
            continue;
        }
        // Not InfiniBand to tshark: the shim is no BTH.
        assert_eq!(col(r, "infiniband.bth.opcode"), "", "frame {frame}");
        let payload = col(r, "udp.payload");
        let words = telemetry[i] / 4 - 1;
        // Shim: type 1 (INT-MD), NPT 1 | length in words | dport 4791.
        assert_eq!(&payload[..8], format!("14{words:02x}12b7"), "frame {frame}");
        // MD header: version 2 | HopML 2 | RemainingHopCnt (5 minus the
        // records, 0 on the echo) | no standard instructions | DS ID "HP".
        let remaining = match i {
            1 => 0,
            2 => 5,
            _ => 3,
        };
        assert_eq!(&payload[8..24], format!("200002{remaining:02x}00004850"));
        // DS instruction 0x8000 | flags: echo bit on the ACK, multi 1.
        let flags = if i == 1 { "8001" } else { "0001" };
        assert_eq!(&payload[24..32], format!("8000{flags}"), "frame {frame}");
        // The newest record first, its top 3 bits the rate code: the 25G
        // port's (code 0), then the 100G one (code 2: 0x40).
        if telemetry[i] == 32 {
            assert_eq!(&payload[32..34], "00", "frame {frame}: 25G first");
            assert_eq!(&payload[48..50], "40", "frame {frame}: 100G second");
        }
        // Then the BTH: WRITE Only (0x0a) or Acknowledge (0x11).
        let bth = 2 * telemetry[i];
        assert_eq!(&payload[bth..bth + 2], if i == 1 { "11" } else { "0a" });
    }
}

/// `roce-pcap dissect` on the same frames: the records in path order, in
/// the units the hop was built from (all multiples of 128 and 80 bytes).
#[test]
fn dissect_prints_the_records() {
    let (_d, p, _) = write_capture();
    let run = |format: &str| {
        roce_testkit::cli::succeed(
            std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
                .arg("dissect")
                .arg(&p)
                .args(["--format", format]),
        )
        .stdout
    };
    let json = roce_testkit::cli::json_lines(&run("jsonl"));
    assert_eq!(json.len(), 6);
    let data = &json[0];
    assert_eq!(data["kind"], "rocev2");
    assert_eq!(data["dport"], 4792);
    assert_eq!(data["int_orig_dport"], 4791);
    assert_eq!(data["int_echo"], false);
    assert_eq!(data["int_remaining"], 3);
    assert_eq!(
        data["int_rate_bps"],
        serde_json::json!([100_000_000_000u64, 25_000_000_000u64])
    );
    assert_eq!(data["int_time_ns"], serde_json::json!([5000, 6000]));
    assert_eq!(
        data["int_tx_bytes"],
        serde_json::json!([1_280_000, 128_000])
    );
    assert_eq!(data["int_qlen_bytes"], serde_json::json!([16_000, 800]));
    assert_eq!(data["opcode_name"], "RC_RDMA_WRITE_ONLY");
    assert_eq!(data["icrc_valid"], true);
    assert_eq!(json[1]["int_echo"], true);
    assert_eq!(json[1]["int_qlen_bytes"], data["int_qlen_bytes"]);
    assert_eq!(json[2]["int_rate_bps"], serde_json::json!([]));
    assert!(json[3].get("int_echo").is_none(), "no telemetry, no keys");
    let text = String::from_utf8(run("text")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains(
            ":4792 ECT(0) INT hops 2 rem 3 [100G t 5000 tx 1280000 q 16000] \
             [25G t 6000 tx 128000 q 800] RC_RDMA_WRITE_ONLY"
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(" INT echo hops 2 rem 0 [100G"),
        "{}",
        lines[1]
    );
    assert!(!lines[3].contains("INT"), "{}", lines[3]);
}

/// HPCC-PINT's form (`wire::int`'s second layout): a WRITE carrying power
/// 652 and the ACK echoing it, dissected as ` INT pint power 652` and
/// `int_pint_power`, the ICRC the one of the packet without telemetry;
/// tshark sees a UDP datagram to 4792 whose payload is the 20-byte stack
/// and the IB packet.
#[test]
fn dissect_prints_the_pint_power() {
    let (_d, [p], mut s) = temp_captures("tshark-pint", ["pint.pcap"]);
    let a = Endpoint::host(1, 0x11);
    let b = Endpoint::host(2, 0x22);
    let data = FrameRepr::rocev2(
        b.mac,
        a.mac,
        IpRepr::V4(Ipv4Repr::udp(a.ip, b.ip, 26, 2)),
        0xc011,
        IbRepr::new(Opcode(0x0A), b.qpn, Psn::new(7), 1000),
    );
    let ack = FrameRepr::rocev2(
        a.mac,
        b.mac,
        IpRepr::V4(Ipv4Repr::udp(b.ip, a.ip, 26, 2)),
        0xc022,
        IbRepr::ack(a.qpn, Psn::new(7), Syndrome::ACK_NO_CREDITS, 1),
    );
    let mut int = IntRepr::pint_source(4791);
    int.raise_power(652);
    let payload = [0x5a; 1000];
    let frames = [data.with_int(int), ack.with_int(int.echo_of(4791))];
    let mut lens = Vec::new();
    for (i, f) in frames.iter().enumerate() {
        let bytes = f.to_vec(&payload);
        lens.push(bytes.len());
        s.record(0, 1_000 * (i as u64 + 1), f, &bytes).unwrap();
    }
    s.finish().unwrap();
    let run = |format: &str| {
        roce_testkit::cli::succeed(
            std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
                .arg("dissect")
                .arg(&p)
                .args(["--format", format]),
        )
        .stdout
    };
    let json = roce_testkit::cli::json_lines(&run("jsonl"));
    assert_eq!(json.len(), 2);
    assert_eq!(json[0]["dport"], 4792);
    assert_eq!(json[0]["int_pint_power"], 652);
    assert_eq!(json[0]["int_echo"], false);
    assert_eq!(json[0]["icrc_valid"], true);
    assert!(json[0].get("int_rate_bps").is_none(), "no records");
    assert_eq!(json[1]["int_pint_power"], 652);
    assert_eq!(json[1]["int_echo"], true);
    let text = String::from_utf8(run("text")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains(":4792 ECT(0) INT pint power 652 RC_RDMA_WRITE_ONLY"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(" INT echo pint power 652 "),
        "{}",
        lines[1]
    );
    // Eth 14 + IPv4 20 + UDP 8 + the stack 20 + BTH 12 + RETH 16 + 1000 +
    // ICRC 4.
    assert_eq!(lens[0], 14 + 20 + 8 + 20 + 12 + 16 + 1000 + 4);
}
