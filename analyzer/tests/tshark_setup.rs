//! Connection set-up frames built by the codec, checked against tshark
//! field by field: CM MADs (InfiniBand CM), perftest's TCP exchange, the
//! ICMP port unreachable of a v1-only host, an IPv4 total length beyond
//! the frame.

use roce_codec::perftest::KeyMessage;
use roce_codec::wire::cm::RejReason;
use roce_codec::wire::icmpv4::Icmpv4Repr;
use roce_codec::*;
use roce_testkit::setup::{CmSetup, PerftestTcp};
use roce_testkit::synth::{Endpoint, temp_captures};
use roce_testkit::tshark;

fn keys(qpn: u32, psn: u32, host: u8) -> KeyMessage {
    let mut gid = [0u8; 16];
    gid[10] = 0xff;
    gid[11] = 0xff;
    gid[12..].copy_from_slice(&[10, 0, 0, host]);
    KeyMessage {
        lid: 0,
        out_reads: 16,
        qpn,
        psn,
        rkey: 0x201d00,
        vaddr: 0x7f3a_5c00_0000,
        gid: Some(gid),
        srqn: 0,
    }
}

/// Frames 1..=9: REQ, REQ (resent), MRA, REP, RTU, REJ (second pair),
/// SYN, SYN-ACK, ACK, client keys, server keys, ICMP, bad IPv4 length.
fn write_capture(path_dir: &str) -> (roce_testkit::cli::TempDir, std::path::PathBuf) {
    let (dir, [p], mut s) = temp_captures(path_dir, ["setup.pcap"]);
    let a = Endpoint::host(1, 0x112);
    let b = Endpoint::host(2, 0x113);
    let mut cm = CmSetup::new(a, b, 0x4c11a5, 0x7a0001);
    cm.req(&mut s, 1_000).unwrap();
    cm.req(&mut s, 2_000).unwrap();
    cm.mra(&mut s, 3_000, 22).unwrap();
    cm.rep(&mut s, 4_000).unwrap();
    cm.rtu(&mut s, 5_000).unwrap();
    let mut cm2 = CmSetup::new(a, Endpoint::host(3, 0x114), 5, 6);
    cm2.rej(&mut s, 6_000, RejReason::InvalidServiceId).unwrap();
    let mut t = PerftestTcp::new(a, b, 40000);
    t.connect(&mut s, 7_000, 100).unwrap();
    t.keys(&mut s, 8_000, true, &keys(0x112, 0x4c11a5, 1))
        .unwrap();
    t.keys(&mut s, 9_000, false, &keys(0x113, 0x7a0001, 2))
        .unwrap();
    let v2 = FrameRepr::rocev2(
        b.mac,
        a.mac,
        IpRepr::V4(Ipv4Repr::udp(a.ip, b.ip, 26, 2)),
        0xc000,
        IbRepr::new(Opcode(0x04), 0x113, Psn::new(7), 4),
    );
    let v2_bytes = v2.to_vec(&[1, 2, 3, 4]);
    let NetRepr::RoceV2 {
        ip: IpRepr::V4(v2_ip),
        ..
    } = v2.net
    else {
        unreachable!()
    };
    let icmp = FrameRepr::icmpv4(
        a.mac,
        b.mac,
        Ipv4Repr::icmp_error_about(&v2_ip, 0x1234),
        Icmpv4Repr::port_unreachable(),
    );
    let quote = roce_codec::build::linux_icmp_quote(&v2_bytes[14..]);
    s.record(0, 10_000, &icmp, &icmp.to_vec(quote)).unwrap();
    let mut bad = v2_bytes.clone();
    bad[16..18].copy_from_slice(&1000u16.to_be_bytes());
    s.raw(0, 11_000, &bad).unwrap();
    s.finish().unwrap();
    (dir, p)
}

/// (our dissect key, tshark field, how tshark writes it): compared on
/// every frame where either side shows the field.
const PAIRS: &[(&str, &str, Norm)] = &[
    ("mad_method", "infiniband.mad.method", Norm::Num),
    ("mad_attr", "infiniband.mad.attributeid", Norm::Num),
    ("mad_tid", "infiniband.mad.transactionid", Norm::Num),
    ("cm_service_id", "infiniband.cm.req.serviceid", Norm::Num),
    ("cm_local_qpn", "infiniband.cm.req.localqpn", Norm::Num),
    ("cm_starting_psn", "infiniband.cm.req.startpsn", Norm::Num),
    (
        "cm_remote_resp_timeout",
        "infiniband.cm.req.remoteresptout",
        Norm::Num,
    ),
    (
        "cm_local_resp_timeout",
        "infiniband.cm.req.localresptout",
        Norm::Num,
    ),
    ("cm_retry_count", "infiniband.cm.req.retrcount", Norm::Num),
    (
        "cm_rnr_retry_count",
        "infiniband.cm.req.rnrretrcount",
        Norm::Num,
    ),
    (
        "cm_max_cm_retries",
        "infiniband.cm.req.maxcmretr",
        Norm::Num,
    ),
    ("cm_path_mtu", "infiniband.cm.req.pppmtu", Norm::Num),
    ("cma_src", "infiniband.cm.req.ip_cm.sip4", Norm::Text),
    ("cma_dst", "infiniband.cm.req.ip_cm.dip4", Norm::Text),
    ("cma_sport", "infiniband.cm.req.ip_cm.sport", Norm::Num),
    ("cm_rej_reason", "infiniband.cm.rej.reason", Norm::Num),
    ("tcp_seq", "tcp.seq_raw", Norm::Num),
    ("tcp_ack", "tcp.ack_raw", Norm::Num),
    ("tcp_flags", "tcp.flags", Norm::Num),
    ("tcp_window", "tcp.window_size_value", Norm::Num),
    ("tcp_len", "tcp.len", Norm::Num),
    ("icmp_type", "icmp.type", Norm::Num),
    ("icmp_code", "icmp.code", Norm::Num),
];

/// Fields whose key means different tshark fields by message.
const BY_MESSAGE: &[(&str, &str, &str)] = &[
    ("REQ", "cm_local_comm_id", "infiniband.cm.req"),
    ("REP", "cm_local_comm_id", "infiniband.cm.rep"),
    ("REP", "cm_remote_comm_id", "infiniband.cm.rep.remotecommid"),
    ("REP", "cm_local_qpn", "infiniband.cm.rep.localqpn"),
    ("REP", "cm_starting_psn", "infiniband.cm.rep.startpsn"),
    ("RTU", "cm_local_comm_id", "infiniband.cm.rtu.localcommid"),
    ("RTU", "cm_remote_comm_id", "infiniband.cm.rtu.remotecommid"),
    ("REJ", "cm_local_comm_id", "infiniband.cm.rej.localcommid"),
    ("REJ", "cm_remote_comm_id", "infiniband.cm.rej.remotecommid"),
];

#[derive(Clone, Copy)]
enum Norm {
    Num,
    Text,
}

fn norm(n: Norm, s: &str) -> String {
    match n {
        Norm::Text => s.to_string(),
        Norm::Num => match s.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap().to_string(),
            None => s
                .parse::<u64>()
                .unwrap_or_else(|_| panic!("{s:?}"))
                .to_string(),
        },
    }
}

fn ours_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn setup_frames_agree_with_tshark_field_by_field() {
    if tshark::tshark().is_none() {
        return;
    }
    let (_d, p) = write_capture("tshark-setup");
    let mut names: Vec<&str> = PAIRS.iter().map(|(_, t, _)| *t).collect();
    names.extend(BY_MESSAGE.iter().map(|(_, _, t)| *t));
    names.extend([
        "_ws.col.Info",
        "icmp.checksum.status",
        "ip.src",
        "udp.dstport",
    ]);
    // ICMP checksums are checked by tshark by default; TCP's on request.
    let rows = tshark::fields(
        &p,
        &["-o", "tcp.check_checksum:TRUE", "-E", "occurrence=l"],
        &names,
    );
    let ours = roce_testkit::cli::json_lines(
        &roce_testkit::cli::succeed(
            std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
                .arg("dissect")
                .arg(&p)
                .args(["--format", "jsonl"]),
        )
        .stdout,
    );
    assert_eq!(rows.len(), 13);
    assert_eq!(ours.len(), 13);
    let col = |name: &str| names.iter().position(|n| *n == name).unwrap();
    let mut compared = 0;
    for (i, (t, o)) in rows.iter().zip(&ours).enumerate() {
        let frame = i + 1;
        let msg = o.get("cm_msg").and_then(|m| m.as_str()).unwrap_or("");
        for (key, field, n) in PAIRS {
            if BY_MESSAGE.iter().any(|(m, k, _)| *m == msg && k == key) {
                continue;
            }
            let theirs = &t[col(field)];
            match o.get(*key) {
                Some(v) => {
                    assert!(
                        !theirs.is_empty(),
                        "frame {frame}: we have {key}={v}, tshark has no {field}"
                    );
                    assert_eq!(
                        ours_text(v),
                        norm(*n, theirs),
                        "frame {frame} {key} vs {field}"
                    );
                    compared += 1;
                }
                // A REP's QPN and PSN are compared below, under the REP's fields.
                None => assert!(
                    theirs.is_empty(),
                    "frame {frame}: tshark has {field}={theirs}, we have no {key}"
                ),
            }
        }
        for (m, key, field) in BY_MESSAGE {
            if *m == msg {
                assert_eq!(
                    ours_text(&o[*key]),
                    norm(Norm::Num, &t[col(field)]),
                    "frame {frame} {key}"
                );
                compared += 1;
            }
        }
    }
    // The MRA: tshark 4.0 names the message but decodes none of its fields.
    assert_eq!(rows[2][col("_ws.col.Info")], "CM: MsgRcptAck");
    assert_eq!(ours[2]["cm_msg"], "MRA");
    assert_eq!(ours[2]["cm_service_timeout"], 22);
    // perftest's keys: the QPN and PSN each side announced, from the text.
    assert_eq!(ours[9]["perftest_qpn"], 0x112);
    assert_eq!(ours[10]["perftest_psn"], 0x7a0001);
    // ICMP: checksum good, and the quoted header is the RoCEv2 datagram's.
    assert_eq!(rows[11][col("icmp.checksum.status")], "1");
    assert_eq!(
        rows[11][col("ip.src")],
        ours[11]["icmp_quoted_src"].as_str().unwrap()
    );
    assert_eq!(rows[11][col("udp.dstport")], "4791");
    assert_eq!(ours[11]["icmp_quoted_dport"], 4791);
    // An IPv4 total length beyond the frame: malformed, as tshark says.
    let expert = tshark::fields(&p, &["-E", "occurrence=a"], &["_ws.expert.message"]);
    assert!(
        expert[12][0].contains("IPv4 total length exceeds packet length (48 bytes)"),
        "{:?}",
        expert[12]
    );
    assert_eq!(ours[12]["kind"], "malformed");
    let warning = ours[12]["warning"].as_str().unwrap();
    assert!(
        warning.contains("IPv4 total length exceeds packet length"),
        "{warning}"
    );
    assert!(
        ours[12]["error"]
            .as_str()
            .unwrap()
            .contains("field `total_len` is 1000, exceeds the packet length")
    );
    assert!(compared >= 60, "only {compared} fields compared");
}
