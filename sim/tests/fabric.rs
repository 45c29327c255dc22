//! Routed fabrics (ECMP by the switch's 5-tuple hash), RoCE v1, VLAN
//! priority tags and pcapng taps.

mod common;

use common::*;
use core::net::Ipv4Addr;
use roce_codec::hash::{EcmpHash, FiveTuple, FlowAddrs};

const LEAF_SPINE: &str = r#"
name = "leaf_spine"
[[host]]
name = "a"
gateway = "10.0.1.254"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.1.1/24"
  mtu = 4200
[[host]]
name = "b"
gateway = "10.0.2.254"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.2.1/24"
  mtu = 4200
[[switch]]
name = "leaf1"
hash_seed = 7
  [[switch.route]]
  prefix = "10.0.2.0/24"
  via = ["u1", "u2"]
[[switch]]
name = "leaf2"
hash_seed = 7
  [[switch.route]]
  prefix = "10.0.1.0/24"
  via = ["u1", "u2"]
[[switch]]
name = "spine1"
  [[switch.route]]
  prefix = "10.0.1.0/24"
  via = ["d1"]
  [[switch.route]]
  prefix = "10.0.2.0/24"
  via = ["d2"]
[[switch]]
name = "spine2"
  [[switch.route]]
  prefix = "10.0.1.0/24"
  via = ["d1"]
  [[switch.route]]
  prefix = "10.0.2.0/24"
  via = ["d2"]
[[link]]
a = "a.eth0"
b = "leaf1.p1"
rate = "100G"
delay = "1us"
[[link]]
a = "b.eth0"
b = "leaf2.p1"
rate = "100G"
delay = "1us"
[[link]]
a = "leaf1.u1"
b = "spine1.d1"
rate = "100G"
delay = "1us"
[[link]]
a = "leaf1.u2"
b = "spine2.d1"
rate = "100G"
delay = "1us"
[[link]]
a = "leaf2.u1"
b = "spine1.d2"
rate = "100G"
delay = "1us"
[[link]]
a = "leaf2.u2"
b = "spine2.d2"
rate = "100G"
delay = "1us"
[[workload]]
tool = "ib_write_bw"
client = "a"
server = "b"
size = "256KiB"
qps = 8
iters = 4
[[tap]]
at = "b.eth0"
"#;

#[test]
fn leaf_spine_routes_and_spreads_qps_by_the_switch_hash() {
    let dir = tmp("leaf_spine");
    let file = dir.join("leaf_spine.toml");
    std::fs::write(&file, LEAF_SPINE).unwrap();
    let s = run_ok(&file, &dir.join("run"), &[]);
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
    if let Some(tshark) = tshark() {
        let o = std::process::Command::new(tshark)
            .arg("-r")
            .arg(dir.join("run/b.eth0.pcap"))
            .args([
                "-Y",
                "ip.src == 10.0.1.1",
                "-T",
                "fields",
                "-e",
                "ip.ttl",
                "-e",
                "eth.src",
                "-c",
                "3",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(text.lines().count(), 3, "{text}");
        for l in text.lines() {
            assert_eq!(l, "61\t02:5e:00:00:00:02", "{text}");
        }
    }
}

#[test]
fn missing_route_drops_and_the_qp_fails() {
    let dir = tmp("no_route");
    let file = dir.join("no_route.toml");
    let text = LEAF_SPINE
        .replacen(
            "  [[switch.route]]\n  prefix = \"10.0.2.0/24\"\n  via = [\"u1\", \"u2\"]\n",
            "",
            1,
        )
        .replace("iters = 4", "iters = 1\ntimeout = 1\nretry_cnt = 0");
    std::fs::write(&file, text).unwrap();
    let s = run_ok(&file, &dir.join("run"), &[]);
    assert!(port(&s, "leaf1.p1")["drops_no_route"].as_u64().unwrap() > 0);
    assert!(clients(&s).iter().all(|q| q["status"] == "retry_exceeded"));
}

fn tshark_fields(file: &std::path::Path, fields: &[&str]) -> Vec<String> {
    let tshark = tshark().unwrap();
    let mut c = std::process::Command::new(tshark);
    c.arg("-r").arg(file).args(["-T", "fields"]);
    for f in fields {
        c.args(["-e", f]);
    }
    let o = c.output().unwrap();
    assert!(o.status.success());
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn roce_v1_vlan_pcp_and_pcapng_taps() {
    if tshark().is_none() {
        return;
    }
    let out = tmp("v1_vlan");
    let s = run_ok(
        &scenario("lag_hash"),
        &out,
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
    let rows = tshark_fields(
        &tap,
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
    for r in &rows {
        let f: Vec<&str> = r.split('\t').collect();
        assert_eq!(f[0], format!("hostA.eth{}", slaves[0]));
        assert_eq!(f[1], "0x8915", "{r}");
        assert_eq!(f[2], "100");
        // TC 128: the host maps DSCP 32 to priority 4 and tags frames with it.
        assert_eq!(f[3], "4");
        assert!(!f[4].is_empty());
        assert!(f[5].is_empty(), "malformed: {r}");
    }
}
