//! `connect = "socket"`: perftest's TCP exchange of QPNs and PSNs on the
//! wire before the first RoCE packet, decoded by tshark and by
//! `roce-pcap analyze`, along the routes of the set-up's neighbour steps.

mod common;

use common::*;
use roce_testkit::tshark::{fields, tshark};

/// (tcp.flags, tcp.len, the key text) of a TCP frame.
type Segment = (String, String, String);

/// Every TCP frame, and the first PSN tshark sees per destination QP.
fn tcp_and_first_psns(file: &std::path::Path) -> (Vec<Segment>, Vec<(String, String)>) {
    let rows = fields(
        file,
        &[
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
            "-o",
            "data.show_as_text:TRUE",
        ],
        &[
            "tcp.flags.str",
            "tcp.len",
            "data.text",
            "tcp.checksum.status",
            "ip.checksum.status",
            "infiniband.bth.destqp",
            "infiniband.bth.psn",
            "_ws.malformed",
        ],
    );
    let mut tcp = Vec::new();
    let mut psns: Vec<(String, String)> = Vec::new();
    for r in rows {
        assert!(r[7].is_empty(), "malformed: {r:?}");
        if !r[0].is_empty() {
            assert_eq!(
                (r[3].as_str(), r[4].as_str()),
                ("1", "1"),
                "checksums: {r:?}"
            );
            tcp.push((r[0].clone(), r[1].clone(), r[2].clone()));
        } else if !r[5].is_empty() && !psns.iter().any(|(q, _)| *q == r[5]) {
            psns.push((r[5].clone(), r[6].clone()));
        }
    }
    (tcp, psns)
}

/// `scenarios/roce_modes.toml` with `connect`, whole frames in its tap,
/// and `sets`.
fn roce_modes(tag: &str, connect: &str, sets: &[&str]) -> (std::path::PathBuf, serde_json::Value) {
    let connect = format!("workload.0.connect={connect}");
    let mut all = vec![connect.as_str(), "tap.0.snaplen=0"];
    all.extend(sets);
    run_scenario("roce_modes", tag, &all)
}

#[test]
fn socket_setup_precedes_the_qps_and_carries_their_qpns_and_psns() {
    if tshark().is_none() {
        return;
    }
    let (out, s) = roce_modes(
        "connect_socket",
        "socket",
        &["workload.0.qps=2", "workload.0.iters=4"],
    );
    assert!(clients(&s).iter().all(|q| q["status"] == "success"));
    let file = tap_file(&s, &out, "hostA.eth0");
    let (tcp, psns) = tcp_and_first_psns(&file);
    let flags: Vec<&str> = tcp.iter().map(|t| t.0.as_str()).collect();
    // tshark's flag strings (·······A··S· and so on): SYN, SYN-ACK, ACK,
    // then per QP the client's keys and the server's, then the last ACK.
    let short: Vec<String> = flags
        .iter()
        .map(|f| f.chars().filter(|c| c.is_ascii_alphabetic()).collect())
        .collect();
    assert_eq!(short, ["S", "AS", "A", "AP", "AP", "AP", "AP", "A"]);
    let keys: Vec<&str> = tcp
        .iter()
        .filter(|t| t.1 == "108")
        .map(|t| t.2.as_str())
        .collect();
    assert_eq!(keys.len(), 4);
    // perftest's KEY_PRINT_FMT_GID: LID:OUT:QPN:PSN:RKEY:VADDR:GID...:SRQN:
    // The client's keys (0 and 2) name the QPN and PSN its QPs then use.
    for (k, i) in [(keys[0], 0), (keys[2], 1)] {
        let f: Vec<&str> = k.split(':').collect();
        assert_eq!(f.len(), 6 + 16 + 2, "{k}");
        assert_eq!(
            &f[6..22].join(":"),
            "00:00:00:00:00:00:00:00:00:00:ff:ff:0a:00:00:01"
        );
        let qpn = u32::from_str_radix(f[2], 16).unwrap();
        let psn = u32::from_str_radix(f[3], 16).unwrap();
        let (q, p) = &psns[i];
        assert_eq!(
            (
                u32::from_str_radix(q.trim_start_matches("0x"), 16).unwrap(),
                p.parse::<u32>().unwrap()
            ),
            (qpn, psn),
            "key {k} vs the first packet of QP {q}"
        );
    }
    // The QPs started after the set-up: the first RoCE frame follows the
    // last ACK.
    let first = clients(&s)[0]["first_tx_ns"].as_u64().unwrap();
    assert!(first > 4_000, "first RoCE packet at {first} ns");
}

#[test]
fn socket_frames_follow_the_neighbour_steps_routes() {
    if tshark().is_none() {
        return;
    }
    // retry_exceeded with arp_ignore = 1: only eth1 answers for 10.0.0.4,
    // but hostB's SYN-ACK from 10.0.0.4 leaves eth0, the main table's
    // first route (world::neigh step 2), with eth0's MAC.
    for arp in ["sim.arp=frames", "sim.arp=instant"] {
        let (out, s) = run_scenario(
            "retry_exceeded",
            &format!("connect_routes_{}", &arp[8..]),
            &[
                arp,
                "workload.0.connect=socket",
                "host.hostB.arp_ignore=1",
                "tap.0.snaplen=0",
                "tap.1.snaplen=0",
            ],
        );
        let rows = fields(
            &tap_file(&s, &out, "hostB.eth0"),
            &["-Y", "tcp.flags.syn == 1 && tcp.flags.ack == 1"],
            &["eth.src", "ip.src", "ip.dst", "tcp.srcport"],
        );
        assert_eq!(
            rows,
            [["02:00:00:00:01:02", "10.0.0.4", "10.0.0.1", "18515"]],
            "{arp}: the SYN-ACK leaves hostB.eth0"
        );
        // The client's SYN went to the MAC its step 1 learned, eth1's; the
        // rest to the entry step 2's ARP (from eth0, telling 10.0.0.4)
        // overwrote, eth0's: the pollution of the failing case, which no
        // later ARP corrects (eth1 learned hostA in step 1 and asks nothing).
        let client = fields(
            &tap_file(&s, &out, "hostA.eth0"),
            &["-Y", "tcp.srcport != 18515"],
            &["tcp.flags.str", "eth.dst"],
        );
        let macs: Vec<&str> = client.iter().map(|r| r[1].as_str()).collect();
        assert_eq!(
            macs,
            [
                "02:00:00:00:02:02",
                "02:00:00:00:01:02",
                "02:00:00:00:01:02",
                "02:00:00:00:01:02"
            ],
            "{arp}: {client:?}"
        );
        assert_eq!(clients(&s)[0]["status_code"], 12, "{arp}");
    }
}

#[test]
fn analyze_reports_the_simulated_socket_setup() {
    use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
    use roce_pcap::report::Format;
    let (out, s) = roce_modes("connect_analyze", "socket", &["workload.0.iters=4"]);
    let a = analyze_files(
        &[tap_file(&s, &out, "hostA.eth0")],
        &AnalyzeOptions::default(),
    )
    .unwrap();
    let mut table = Vec::new();
    Format::Table
        .exporter()
        .write(&a.report, &mut table)
        .unwrap();
    let table = String::from_utf8(table).unwrap();
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("socket "))
        .unwrap_or_else(|| panic!("no set-up in:\n{table}"));
    // SYN at 0; SYN-ACK, ACK + keys, server keys and the last ACK each a
    // one-way trip of two 25G hops: the set-up ends 2 RTTs after the SYN.
    let first = clients(&s)[0]["first_tx_ns"].as_u64().unwrap();
    assert!(line.contains("10.0.0.1 QP 0x100"), "{line}");
    assert!(line.contains("-> 10.0.0.2 QP 0x100"), "{line}");
    assert!(
        line.contains("established in 4."),
        "{line} (first RoCE packet at {first} ns)"
    );
}

#[test]
fn rdma_cm_req_rep_rtu_carry_the_qpns_and_psns() {
    if tshark().is_none() {
        return;
    }
    let (out, s) = roce_modes(
        "connect_cm",
        "rdma_cm",
        &["workload.0.qps=2", "workload.0.iters=4"],
    );
    assert!(clients(&s).iter().all(|q| q["status"] == "success"));
    let rows = fields(
        &tap_file(&s, &out, "hostA.eth0"),
        &[],
        &[
            "infiniband.cm.rtu.localcommid",
            "infiniband.bth.destqp",
            "infiniband.deth.q_key",
            "infiniband.cm.req.localqpn",
            "infiniband.cm.req.startpsn",
            "infiniband.cm.req.maxcmretr",
            "infiniband.cm.rep.localqpn",
            "infiniband.cm.rep.startpsn",
            "infiniband.bth.psn",
            "_ws.malformed",
            "_ws.expert.severity",
        ],
    );
    let kind = |r: &Vec<String>| match (r[3].is_empty(), r[6].is_empty(), r[0].is_empty()) {
        (false, _, _) => "REQ",
        (_, false, _) => "REP",
        (_, _, false) => "RTU",
        _ => "other",
    };
    // The first QP's data may start at the instant the second QP's REP
    // arrives (a frame sent and one received by the tapped port at one
    // picosecond, in either order): the CM messages in their order, and
    // no data before the first RTU.
    let kinds: Vec<&str> = rows.iter().take(7).map(kind).collect();
    let cm: Vec<&Vec<String>> = rows.iter().filter(|r| kind(r) != "other").take(6).collect();
    let cm_kinds: Vec<&str> = cm.iter().map(|r| kind(r)).collect();
    assert_eq!(cm_kinds, ["REQ", "REQ", "REP", "RTU", "REP", "RTU"]);
    assert_eq!(kinds[..4], ["REQ", "REQ", "REP", "RTU"], "{kinds:?}");
    assert!(
        kinds.contains(&"other"),
        "data among the first seven frames: {kinds:?}"
    );
    for r in &cm {
        // UD SEND ONLY to QP1 with the GSI Q_Key.
        assert_eq!(
            (r[1].as_str(), r[2].as_str()),
            ("0x000001", "0x0000000080010000"),
            "{r:?}"
        );
        assert!(r[9].is_empty() && r[10].is_empty(), "{r:?}");
    }
    // Each REQ's QPN and starting PSN are the client QP's, each REP's QPN
    // the server QP its WRITEs go to.
    for (req, rep) in [(cm[0], cm[2]), (cm[1], cm[4])] {
        assert_eq!(req[5], "0x0f", "max_cm_retries");
        let first = rows
            .iter()
            .find(|r| r[1] == rep[6] && r[2].is_empty())
            .unwrap_or_else(|| panic!("no WRITE to {}", rep[6]));
        assert_eq!(
            first[8].parse::<u32>().unwrap(),
            u32::from_str_radix(req[4].trim_start_matches("0x"), 16).unwrap(),
            "{req:?} {first:?}"
        );
    }
}

#[test]
fn rdma_cm_without_listener_is_rejected() {
    if tshark().is_none() {
        return;
    }
    let (out, s) = roce_modes(
        "connect_cm_rej",
        "rdma_cm",
        &["workload.0.cm_answer=no_listener"],
    );
    assert_eq!(clients(&s)[0]["status"], "rejected");
    let rows = fields(
        &tap_file(&s, &out, "hostA.eth0"),
        &[],
        &["infiniband.cm.req.localqpn", "infiniband.cm.rej.reason"],
    );
    assert_eq!(rows.len(), 2, "REQ and REJ, no RoCE data: {rows:?}");
    assert!(!rows[0][0].is_empty(), "{rows:?}");
    // IBA table 112: 8 = invalid service ID, Linux's answer without a listener.
    assert_eq!(rows[1][1], "0x0008");
}

#[test]
fn rdma_cm_v2_req_to_a_v1_only_server_times_out_and_analyze_says_so() {
    use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
    use roce_pcap::report::Format;
    let (out, s) = roce_modes(
        "connect_cm_v1",
        "rdma_cm",
        &["host.hostB.roce_modes=v1", "sim.stop_at=80s"],
    );
    let q = clients(&s)[0];
    assert_eq!(q["status"], "unreachable");
    // 16 REQs (15 retries) 4.608 s apart (2 × 256 ms packet life time +
    // 4096 ms response timeout, cm.c), each answered by an ICMP error.
    let file = tap_file(&s, &out, "hostA.eth0");
    let a = analyze_files(std::slice::from_ref(&file), &AnalyzeOptions::default()).unwrap();
    let mut table = Vec::new();
    Format::Table
        .exporter()
        .write(&a.report, &mut table)
        .unwrap();
    let table = String::from_utf8(table).unwrap();
    assert!(table.contains("unanswered, 15 retries"), "{table}");
    assert!(table.contains("cm_req_unanswered"), "{table}");
    assert!(
        table.contains("sent 16 times (15 retries), the first two 4.61 s apart"),
        "{table}"
    );
    if tshark().is_some() {
        let rows = fields(&file, &[], &["frame.time_relative", "icmp.type"]);
        assert_eq!(rows.len(), 32);
        let last_req: f64 = rows[30][0].parse().unwrap();
        assert!((last_req - 15.0 * 4.608).abs() < 1e-6, "{last_req}");
        assert!(rows.iter().skip(1).step_by(2).all(|r| r[1] == "3"));
    }
}
