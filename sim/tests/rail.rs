//! `[topology] kind = "rail"` end to end: perftest between NICs of two
//! GPU servers on a rail-optimized fabric. Traffic between NICs of one
//! rail stays on that rail's leaf; traffic between rails crosses a spine;
//! both at the rate the link and the RoCE headers allow. With every NIC
//! in one subnet (`subnet = "shared"`), the cross-rail QP dies of the
//! ARP answered by the wrong NIC (status 12), as NCCL's "error 12" does.

mod common;

use common::*;
use serde_json::Value;

/// 2 servers of 4 rails, 100G, 1 us links; non-blocking (2 servers x
/// 100G down = 2 x 100G up: 2 spines). One `ib_write_bw` of 200 x 64 KiB.
fn fabric(keys: &str, client: &str, server: &str, wl: &str) -> String {
    format!(
        r#"name = "rail"
[topology]
kind = "rail"
servers = 2
nics_per_server = 4
host_link = {{ rate = "100Gbps", delay = "1us" }}
{keys}
[topology.nic]
mtu = 4200
[[workload]]
tool = "ib_write_bw"
client = "{client}"
server = "{server}"
size = "64KiB"
iters = 200
{wl}
"#
    )
}

fn bytes(s: &Value, name: &str, key: &str) -> u64 {
    port(s, name)[key].as_u64().unwrap()
}

/// Every port of the switches named `prefix*`, (name, tx_bytes).
fn switch_ports<'a>(s: &'a Value, prefix: &str) -> Vec<(&'a str, u64)> {
    s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"].as_str().unwrap().starts_with(prefix))
        .map(|p| (p["name"].as_str().unwrap(), p["tx_bytes"].as_u64().unwrap()))
        .collect()
}

/// The hand-computed goodput of 200 x 64 KiB WRITEs at 100 Gb/s whose
/// last ACK is back `tail_ns` after the last byte left: 16 packets a
/// message at path MTU 4096 (Ethernet MTU 4200), each 4096 B of payload
/// plus Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4 and 20 of
/// preamble and gap (4178 B on the wire), the first also a RETH (16):
/// 66 864 B a message, 98.014 % of the link.
fn expected_gbps(tail_ns: f64) -> f64 {
    let wire_ns = 200.0 * 66_864.0 * 8.0 / 100.0; // 1 069 824 ns at 100 Gb/s
    200.0 * 65_536.0 * 8.0 / (wire_ns + tail_ns)
}

#[test]
fn same_rail_stays_on_its_leaf_at_line_rate() {
    let (dir, s) = run_text(
        "rail_same",
        &fabric("", "server0.eth3", "server1.eth3", ""),
        &[],
    );
    let c = &clients(&s)[0];
    assert_eq!(c["status"], "success");
    let sent = c["tx_bytes"].as_u64().unwrap();
    // 200 x 16 packets; the bytes the client NIC sent are what rail 3's
    // leaf forwarded to server1's NIC 3.
    assert_eq!(c["tx_packets"], 3200);
    assert_eq!(bytes(&s, "server0.eth3", "tx_bytes"), sent);
    assert_eq!(bytes(&s, "su0_leaf3.p2", "tx_bytes"), sent);
    // No byte on any spine, nor on any other leaf.
    for (name, tx) in switch_ports(&s, "plane0_spine").into_iter().chain(
        ["su0_leaf0", "su0_leaf1", "su0_leaf2"]
            .iter()
            .flat_map(|l| switch_ports(&s, l)),
    ) {
        assert_eq!(tx, 0, "{name}");
    }
    // NIC r is RDMA device mlx5_<r>: server0's traffic is mlx5_3's.
    let xmit = |dev: &str| {
        let f = dir.join(format!(
            "run/sysfs/server0/class/infiniband/{dev}/ports/1/counters/port_xmit_data"
        ));
        std::fs::read_to_string(f)
            .unwrap()
            .trim()
            .parse::<u64>()
            .unwrap()
    };
    assert!(xmit("mlx5_3") > 0);
    assert_eq!(xmit("mlx5_0") + xmit("mlx5_2"), 0);
    // The last ACK is back one round trip after the last byte left: 2 x
    // 1 us out and the leaf's store-and-forward of the 4178 B frame
    // (334.24 ns), then the 86 B ACK (6.88 ns a hop) 2 x 1 us back:
    // 4 348 ns, so 97.612 Gb/s (the run: 97.617).
    let g = c["goodput_gbps"].as_f64().unwrap();
    let want = expected_gbps(4.0 * 1000.0 + 334.24 + 2.0 * 6.88);
    assert!(
        (g - want).abs() < 0.01,
        "goodput {g} Gb/s, hand-computed {want}"
    );
}

#[test]
fn cross_rail_crosses_one_spine_at_line_rate() {
    let (_, s) = run_text(
        "rail_cross",
        &fabric("", "server0.eth3", "server1.eth1", ""),
        &[],
    );
    let c = &clients(&s)[0];
    assert_eq!(c["status"], "success");
    let sent = c["tx_bytes"].as_u64().unwrap();
    // Up rail 3's leaf, over one spine (one QP: one ECMP choice), down
    // rail 1's leaf to server1's NIC 1.
    let up: u64 = switch_ports(&s, "su0_leaf3.u").iter().map(|p| p.1).sum();
    assert_eq!(up, sent);
    // A spine's p2 leads to the plane's second leaf, su0_leaf1 (and its
    // p4 to su0_leaf3, which the ACKs take, hashed on their own).
    let down: Vec<u64> = ["plane0_spine0.p2", "plane0_spine1.p2"]
        .iter()
        .map(|p| bytes(&s, p, "tx_bytes"))
        .collect();
    assert!(down.contains(&sent) && down.contains(&0), "{down:?}");
    assert_eq!(bytes(&s, "su0_leaf1.p2", "tx_bytes"), sent);
    assert_eq!(bytes(&s, "server1.eth1", "rx_bytes"), sent);
    // The same bottleneck (100G), two more links and two more
    // store-and-forward hops each way: 4 x 1 us + 3 x 334.24 ns out,
    // 4 x (1 us + 6.88 ns) back: 9 030 ns, 97.188 Gb/s (the run: 97.193).
    let g = c["goodput_gbps"].as_f64().unwrap();
    let want = expected_gbps(8.0 * 1000.0 + 3.0 * 334.24 + 4.0 * 6.88);
    assert!(
        (g - want).abs() < 0.01,
        "goodput {g} Gb/s, hand-computed {want}"
    );
}

#[test]
fn a_shared_subnet_sends_cross_rail_frames_to_the_wrong_nic() {
    // Every NIC in 10.0.0.0/8: the client's ARP for server1's NIC 1 is
    // broadcast on rail 3's leaf, where server1's NIC 3 answers for it
    // (arp_ignore = 0). The WRITEs go to NIC 3, which owns no such GID:
    // retry exceeded after 8 local ACK timeouts of 4.096 us x 2^10.
    let (_, s) = run_text(
        "rail_shared",
        &fabric(
            "subnet = \"shared\"",
            "server0.eth3",
            "server1.eth1",
            "timeout = 10\nretry_cnt = 7",
        ),
        &[],
    );
    let c = &clients(&s)[0];
    assert_eq!(c["status_code"], 12, "{c}");
    assert!(bytes(&s, "server1.eth3", "drops_not_ours") > 0);
    assert_eq!(bytes(&s, "server1.eth1", "rx_bytes"), 0);
}

#[test]
fn planes_do_not_reach_each_other() {
    // planes = 2: rails 0 and 2 in plane 0, rails 1 and 3 in plane 1. A
    // QP from rail 3 to rail 2 has no route at rail 3's leaf.
    let (_, s) = run_text(
        "rail_planes",
        &fabric(
            "planes = 2",
            "server0.eth3",
            "server1.eth2",
            "timeout = 10\nretry_cnt = 7",
        ),
        &[],
    );
    assert_eq!(clients(&s)[0]["status_code"], 12);
    assert_eq!(
        switch_ports(&s, "plane0_spine")
            .iter()
            .map(|p| p.1)
            .sum::<u64>(),
        0
    );
    // Between rails 1 and 3 of plane 1, it works.
    let (_, s) = run_text(
        "rail_planes_same",
        &fabric("planes = 2", "server0.eth3", "server1.eth1", ""),
        &[],
    );
    assert_eq!(clients(&s)[0]["status"], "success");
}
