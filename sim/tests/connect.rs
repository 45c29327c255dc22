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

#[test]
fn socket_setup_precedes_the_qps_and_carries_their_qpns_and_psns() {
    if tshark().is_none() {
        return;
    }
    let (out, s) = run_scenario(
        "roce_modes",
        "connect_socket",
        &[
            "workload.0.connect=socket",
            "workload.0.qps=2",
            "workload.0.iters=4",
            "tap.0.snaplen=0",
        ],
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
    let (out, s) = run_scenario(
        "roce_modes",
        "connect_analyze",
        &[
            "workload.0.connect=socket",
            "workload.0.iters=4",
            "tap.0.snaplen=0",
        ],
    );
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
