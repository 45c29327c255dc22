//! RoCE modes: a NIC's supported versions, the server answering in the
//! client's, and a v2 frame at a v1-only NIC answered by the kernel with
//! ICMP port unreachable (checked with tshark), in `scenarios/roce_modes.toml`.

mod common;

use common::*;
use roce_testkit::tshark::{fields, tshark};
use serde_json::Value;

/// 4.096 us x 2^10: the local ACK timeout of `timeout = 10`.
const ACK_TIMEOUT_NS: u64 = 4_194_304;

#[test]
fn sweep_shows_the_compatibility_matrix() {
    let dir = tmp("roce_modes_sweep");
    let o = bin()
        .arg("sweep")
        .arg(scenario("roce_modes"))
        .args(["--set", "host.hostA.roce=v1,v2"])
        .args(["--set", "host.hostB.roce_modes=v1,v1+v2"])
        .arg("--out")
        .arg(dir.join("s"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Value =
        serde_json::from_slice(&std::fs::read(dir.join("s/sweep.json")).unwrap()).unwrap();
    let got: Vec<(String, String, u64, u64)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["params"]["host.hostA.roce"].as_str().unwrap().to_string(),
                r["params"]["host.hostB.roce_modes"]
                    .as_str()
                    .unwrap()
                    .to_string(),
                r["qps_ok"].as_u64().unwrap(),
                r["qps_failed"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("v1", "v1", 1, 0),
        ("v1", "v1+v2", 1, 0),
        ("v2", "v1", 0, 1),
        ("v2", "v1+v2", 1, 0),
    ];
    assert_eq!(got.len(), 4);
    for (g, w) in got.iter().zip(want) {
        assert_eq!((g.0.as_str(), g.1.as_str(), g.2, g.3), w);
    }
}

#[test]
fn v1_client_gets_v1_answers_from_a_v1_v2_server() {
    let (out, s) = run_scenario(
        "roce_modes",
        "roce_modes_v1_dual",
        &["host.hostA.roce=v1", "workload.0.iters=4"],
    );
    assert_eq!(clients(&s)[0]["status"], "success");
    if tshark().is_none() {
        return;
    }
    let rows = fields(
        &tap_file(&s, &out, "hostA.eth0"),
        &[],
        &["eth.type", "ip.src", "infiniband.bth.opcode"],
    );
    let from_b = rows.iter().filter(|r| r[2] == "17").count();
    assert!(from_b > 0, "no ACK came back");
    // Every frame both ways is RoCE v1 (EtherType 0x8915, no IP header).
    assert!(
        rows.iter().all(|r| r[0] == "0x8915" && r[1].is_empty()),
        "{rows:?}"
    );
}

#[test]
fn v2_to_a_v1_only_nic_is_udp_for_the_kernel_icmp_and_status_12() {
    let (out, s) = run_scenario(
        "roce_modes",
        "roce_modes_v2_v1",
        &["host.hostB.roce_modes=v1", "tap.0.snaplen=0"],
    );
    let q = clients(&s)[0];
    assert_eq!(q["status_code"], 12);
    let first = q["first_tx_ns"].as_u64().unwrap();
    let done = q["finished_at_ns"].as_u64().unwrap();
    // The ICMP errors teach the requester nothing: the first try and 7
    // retries each wait a full timeout, as with no answer at all.
    assert!(
        done.abs_diff(first + 8 * ACK_TIMEOUT_NS) <= 1,
        "{first} {done}"
    );
    assert_eq!(q["timeouts"], 8);
    // hostB's kernel answered: a burst of 6 (XRLIM_BURST_FACTOR), then one
    // per second, and the run is over in 34 ms.
    let b = port(&s, "hostB.eth0");
    assert_eq!(b["tx_packets"], 6, "{b}");
    assert_eq!(b["drops"], 0);
    if tshark().is_none() {
        return;
    }
    let file = tap_file(&s, &out, "hostA.eth0");
    let rows = fields(
        &file,
        &["-Y", "icmp", "-o", "ip.check_checksum:TRUE"],
        &[
            "frame.len",
            "ip.src",
            "ip.dst",
            "ip.dsfield",
            "ip.ttl",
            "ip.flags.df",
            "icmp.type",
            "icmp.code",
            "icmp.checksum.status",
            "udp.dstport",
            "ip.checksum.status",
            "_ws.malformed",
        ],
    );
    assert_eq!(rows.len(), 6);
    for r in &rows {
        // 14 + 20 + 8 + the quote: the 1082-byte frame's IP datagram cut to
        // 576 - 28 = 548 bytes (icmp.c). Two-valued fields: the error's IP
        // header, then the quoted one.
        assert_eq!(r[0], "590", "{r:?}");
        assert_eq!(
            (r[1].as_str(), r[2].as_str()),
            ("10.0.0.2,10.0.0.1", "10.0.0.1,10.0.0.2")
        );
        // TOS: precedence 6 (internetwork control) over the datagram's TOS
        // bits; Linux's mask 0x1e keeps ECT(0) (0x02) of a ConnectX packet.
        assert_eq!(r[3], "0xc2,0x02", "{r:?}");
        // TTL 64; DF clear on the error (IP_PMTUDISC_DONT), set on RoCE.
        assert_eq!((r[4].as_str(), r[5].as_str()), ("64,64", "0,1"), "{r:?}");
        assert_eq!((r[6].as_str(), r[7].as_str()), ("3", "3"));
        // tshark's checksum status 1 = good: ICMP and both IP headers.
        assert_eq!(r[8], "1", "ICMP checksum: {r:?}");
        assert_eq!(r[9], "4791", "the quoted UDP header");
        assert_eq!(r[10], "1,1", "{r:?}");
        assert!(r[11].is_empty(), "malformed: {r:?}");
    }
}

#[test]
fn v2_on_a_v1_only_nic_is_an_error_at_its_key() {
    let dir = tmp("roce_modes_err");
    let o = run(
        &scenario("roce_modes"),
        &dir.join("run"),
        &["host.hostB.roce_modes=v1", "host.hostB.roce=v2"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for part in [
        "host[1].roce",
        "--set host.hostB.roce=v2",
        "support RoCE v1 only",
    ] {
        assert!(err.contains(part), "no {part:?} in {err}");
    }
    assert!(!dir.join("run").exists());
}
