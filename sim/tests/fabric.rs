//! Routed fabrics (ECMP by the switch's 5-tuple hash), RoCE v1, VLAN
//! priority tags and pcapng taps.

mod common;

use common::*;
use core::net::Ipv4Addr;
use roce_codec::hash::{EcmpHash, FiveTuple, FlowAddrs};
use roce_testkit::tshark::{fields, tshark};

/// a (10.0.1.1) on leaf1, b (10.0.2.1) on leaf2, both leaves routing over
/// spine1 and spine2 (ECMP, seed 7), 100G links of 1 us; 8 QPs from a to
/// b with `workload` keys; a tap at b. Without `leaf1_routes` leaf1 has no
/// route to b's subnet.
fn leaf_spine(leaf1_routes: bool, workload: &str) -> String {
    let uplinks: &[&str] = &["u1", "u2"];
    let mut t = "name = \"leaf_spine\"\n".to_string()
        + &host(
            "a",
            "gateway = \"10.0.1.254\"\n",
            &[("eth0", "10.0.1.1/24")],
            4200,
        )
        + &host(
            "b",
            "gateway = \"10.0.2.254\"\n",
            &[("eth0", "10.0.2.1/24")],
            4200,
        );
    let leaf1: &[(&str, &[&str])] = if leaf1_routes {
        &[("10.0.2.0/24", uplinks)]
    } else {
        &[]
    };
    t += &switch("leaf1", "hash_seed = 7\n", leaf1);
    t += &switch("leaf2", "hash_seed = 7\n", &[("10.0.1.0/24", uplinks)]);
    for spine in ["spine1", "spine2"] {
        let routes: &[(&str, &[&str])] = &[("10.0.1.0/24", &["d1"]), ("10.0.2.0/24", &["d2"])];
        t += &switch(spine, "", routes);
    }
    t += &link("a.eth0", "leaf1.p1", "100G");
    t += &link("b.eth0", "leaf2.p1", "100G");
    for (leaf, d) in [("leaf1", "d1"), ("leaf2", "d2")] {
        for (u, spine) in [("u1", "spine1"), ("u2", "spine2")] {
            t += &link(&format!("{leaf}.{u}"), &format!("{spine}.{d}"), "100G");
        }
    }
    t + &write_bw("a", "b", &format!("size = \"256KiB\"\nqps = 8\n{workload}"))
        + "[[tap]]\nat = \"b.eth0\"\n"
}

#[test]
fn leaf_spine_routes_and_spreads_qps_by_the_switch_hash() {
    let (dir, s) = run_text("leaf_spine", &leaf_spine(true, "iters = 4\n"), &[]);
    let hash = EcmpHash::Crc32 { seed: 7 };
    let mut want = [0u64; 2];
    for q in clients(&s) {
        assert_eq!(q["status"], "success", "{q}");
        let t = FiveTuple {
            addrs: FlowAddrs::V4 {
                src: Ipv4Addr::new(10, 0, 1, 1),
                dst: Ipv4Addr::new(10, 0, 2, 1),
            },
            protocol: 17,
            sport: q["udp_sport"].as_u64().unwrap() as u16,
            dport: 4791,
        };
        want[hash.select(&t, 2).unwrap()] += q["tx_bytes"].as_u64().unwrap();
    }
    // Routing rewrites MACs and TTL but not lengths: each uplink carries
    // exactly the frames of the QPs the hash sent there.
    assert_eq!(port(&s, "leaf1.u1")["tx_bytes"].as_u64().unwrap(), want[0]);
    assert_eq!(port(&s, "leaf1.u2")["tx_bytes"].as_u64().unwrap(), want[1]);
    assert!(
        want.iter().all(|&w| w > 0),
        "8 QPs should use both spines: {want:?}"
    );
    let drops: u64 = s["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["drops"].as_u64().unwrap())
        .sum();
    assert_eq!(drops, 0);
    // Three routed hops: TTL 64 -> 61 at b, source MAC = leaf2's router MAC.
    if tshark().is_some() {
        let filter = ["-Y", "ip.src == 10.0.1.1", "-c", "3"];
        let rows = fields(
            &dir.join("run/b.eth0.pcap"),
            &filter,
            &["ip.ttl", "eth.src"],
        );
        assert_eq!(rows.len(), 3, "{rows:?}");
        for r in &rows {
            assert_eq!(r.join("\t"), "61\t02:5e:00:00:00:02", "{rows:?}");
        }
    }
}

#[test]
fn missing_route_drops_and_the_qp_fails() {
    let workload = "iters = 1\ntimeout = 1\nretry_cnt = 0\n";
    let (_, s) = run_text("no_route", &leaf_spine(false, workload), &[]);
    assert!(port(&s, "leaf1.p1")["drops_no_route"].as_u64().unwrap() > 0);
    assert!(clients(&s).iter().all(|q| q["status"] == "retry_exceeded"));
}

#[test]
fn roce_v1_vlan_pcp_and_pcapng_taps() {
    if tshark().is_none() {
        return;
    }
    let (out, s) = run_scenario(
        "lag_hash",
        "v1_vlan",
        &[
            "workload.0.size=256KiB",
            "workload.0.iters=2",
            "host.hostA.roce=v1",
            "host.hostB.roce=v1",
            "host.hostA.nic.eth0.vlan=100",
            "host.hostA.nic.eth1.vlan=100",
            "host.hostB.nic.eth0.vlan=100",
            "host.hostB.nic.eth1.vlan=100",
            "tap.0.format=pcapng",
            "tap.1.format=pcapng",
        ],
    );
    assert!(clients(&s).iter().all(|q| q["status"] == "success"));
    // RoCE v1 has no IP/UDP: every bond policy falls back to the layer2
    // hash, so all QPs share one slave.
    let slaves: Vec<_> = clients(&s).iter().map(|q| q["slave"].clone()).collect();
    assert!(slaves.iter().all(|x| *x == slaves[0]));
    let tap = out.join(format!("hostA.eth{}.pcapng", slaves[0]));
    let rows = fields(
        &tap,
        &[],
        &[
            "frame.interface_name",
            "vlan.etype",
            "vlan.id",
            "vlan.priority",
            "infiniband.bth.opcode",
            "_ws.malformed",
        ],
    );
    assert!(!rows.is_empty());
    for f in &rows {
        let r = f.join("\t");
        assert_eq!(f[0], format!("hostA.eth{}", slaves[0]));
        assert_eq!(f[1], "0x8915", "{r}");
        assert_eq!(f[2], "100");
        // TC 128: the host maps DSCP 32 to priority 4 and tags frames with it.
        assert_eq!(f[3], "4");
        assert!(!f[4].is_empty());
        assert!(f[5].is_empty(), "malformed: {r}");
    }
}
