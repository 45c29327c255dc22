//! From a scenario to a [`World`]: resolves names, checks every value a real
//! network would refuse, assigns MACs, QPNs and PSNs, resolves neighbours
//! (ARP) and places queue pairs on ports.
//!
//! ```text
//!  Scenario ─▶ names.rs      unique names, key paths for errors
//!           ─▶ hosts.rs      hosts, NICs, bonds, interfaces; unique IPs;
//!                            crate::profile: each host's NIC profile and its overrides
//!           ─▶ fabric.rs     switches, unique MACs, links and ports, LAGs, routes,
//!                            bridging loops, pre-learned FDBs and neighbour tables
//!              qos.rs        ECN marking per (egress port, priority), by port speed
//!           ─▶ taps.rs       capture points (checked; files opened last)
//!           ─▶ workloads.rs  endpoints, transport settings, neighbours
//!                            (neighbours.rs), QPNs, PSNs, QPs on ports
//!           ─▶ World         (taps.rs opens the capture files only now)
//! ```
//!
//! Each step checks its part of the scenario before it builds anything
//! from it, and the whole scenario is checked before any file is created:
//! a failed build has no side effect. Every error is a [`ModelError`] at
//! the key it is about (file, line and hint are added by
//! [`crate::Loaded::locate`]).
//!
//! ## Neighbour resolution (ARP)
//! By default ARP is an instantaneous resolution step at connection setup,
//! following the kernel's rules; it also validates every scenario (an ARP
//! nobody answers is an error). With `[sim] arp = "frames"` the same rules
//! are played out with real frames (`world::arp`), and captures show them.
//! Both walk the set-up's four resolutions (`world::neigh`): the client's
//! TCP connection (unbound socket: main table), the server's SYN-ACK (from
//! the address connected to: policy routing, `arp_announce`), then each
//! side's QP bound to its GID's device (`addr4_resolve` with
//! `flowi4_oif = bound_dev_if`; its ARP asks with the device's own
//! address). The rules:
//!
//! 1. Route: with `policy_routing` the lookup of a bound source uses the
//!    table of the interface that owns it; without it, the main table's
//!    first connected route that covers the destination (the interface listed
//!    first), or the gateway, through the interface on its subnet. A QP's
//!    lookup leaves its GID's interface.
//! 2. The request leaves that interface `E`. Its sender IP is the packet's
//!    source address (`arp_announce = 0`, or 1 when `E`'s subnet holds both
//!    that address and the target), else `E`'s own address.
//! 3. Every interface of the target host on the requester's L2 segment
//!    receives the broadcast and answers with its own MAC if `arp_ignore`
//!    allows (0 = the target is any local address, 1 = it is the receiving
//!    interface's, 2 = as 1 and the sender in that interface's subnet) and
//!    `rp_filter` passes (1: the route back to the sender leaves the
//!    receiving interface; 2: there is one). Each reply takes a processing
//!    time drawn from the seed (under 20 µs); the first reply wins (the
//!    kernel ignores later ones within `locktime`).
//! 4. An answering interface records sender IP → `E`'s MAC in its own
//!    neighbour table, overriding what it had (`neigh_event_ns`); a device
//!    with an entry does not ask again. Tables are per device, as Linux's.
//!
//! A RoCE NIC accepts only frames to its own MAC whose destination GID
//! (IP) it owns, so a wrong answer in step 3 or a wrong entry from step 4
//! silently blackholes one direction: "ping works, RDMA fails".

mod ets;
mod fabric;
mod hosts;
mod names;
mod nccl_algo;
mod nccl_connect;
mod neighbours;
pub use crate::profile::host_profile;
mod collective;
pub(crate) mod qos;
mod qpns;
mod taps;
mod workloads;

#[cfg(test)]
mod model_tests;

use std::path::{Path, PathBuf};

use crate::ModelError;
use crate::schema::Scenario;
use rocesim_model::time::Ps;
use rocesim_model::world::{Settings, World};

/// What the builder needs beyond the scenario.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Directory the taps write into; `None`: none yet (`rocesim check`,
    /// or a run, which opens them in its run directory with
    /// [`open_taps`] once the build succeeded).
    pub tap_dir: Option<PathBuf>,
}

pub use rocesim_model::net::roce_mtu;

/// Builds the world; every problem is a [`ModelError`] at its key. A
/// partitioned run (`[sim] partitions`) builds one per part.
pub fn build_world(sc: &Scenario, opts: &BuildOptions) -> Result<World, ModelError> {
    names::check_scenario(sc)?;
    let mut w = World::new(
        sc.seed,
        Settings {
            sample_interval: sc.sim.sample_interval.map_or(Ps::from_us(10), |d| d.0),
            tx_time_step: sc.sim.tx_time_step.map_or(1, |d| d.0.as_ps()),
        },
        sc.flows.clone(),
    );
    let nodes = names::check_names(sc)?;
    hosts::add_hosts(&mut w, sc)?;
    let ports = fabric::add_fabric(&mut w, sc, &nodes)?;
    hosts::enable_pint(&mut w)?;
    taps::check_taps(&w, sc, &ports)?;
    if let Some(topo) = &sc.fabric {
        let r = rocesim_model::world::reroute::Rerouter::new(&w, topo.clone()).map_err(|e| {
            ModelError::new(crate::KeyPath::root().key("topology").key("reroute"), e)
        })?;
        w.reroute = Some(Box::new(r));
    }
    workloads::add_workloads(&mut w, sc, &nodes)?;
    if let Some(dir) = &opts.tap_dir {
        open_taps(&mut w, sc, dir)?;
    }
    Ok(w)
}

/// Creates the capture files of a world built without a tap directory
/// in `dir`: a run builds (and so checks) the whole scenario before it
/// makes its output directory, then opens the taps there. A world whose
/// taps are open already is left as it is.
pub fn open_taps(w: &mut World, sc: &Scenario, dir: &Path) -> Result<(), ModelError> {
    if !w.taps.is_empty() {
        return Ok(());
    }
    // The ports by name, as the build cabled them (a port is named by its
    // link endpoint).
    let ports: fabric::PortNames = w
        .ports
        .iter()
        .enumerate()
        .map(|(i, p)| (p.name().to_string(), i as u32))
        .collect();
    let plans = taps::check_taps(w, sc, &ports)?;
    taps::open_taps(w, sc, plans, dir)
}

#[cfg(test)]
mod tests {
    use super::{BuildOptions, build_world};
    use std::path::Path;

    /// Two leaves of two hosts under two spines, 100G links of 1 us.
    const LEAF_SPINE: &str = r#"
[topology]
kind = "leaf-spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
host_link = { rate = "100Gbps", delay = "1us" }
"#;

    /// `window_bytes = "path"` (the reference's `GLOBAL_T 0`): each flow's
    /// QP gets its own path's bandwidth-delay product, by hand: host0 to
    /// host1 (one leaf, 2 links of 1 us) rtt = 2 x 2000 + 2 x 80 = 4160 ns,
    /// x 100 Gb/s / 8 = 52,000 bytes: 52 packets of 1000 bytes; host0 to
    /// host3 (over a spine, 4 links) 8000 + 320 = 8320 ns, 104,000 bytes:
    /// 104 packets. A perftest-style workload has no path: refused.
    #[test]
    fn a_window_of_the_flows_own_path() {
        let text = &format!(
            r#"{LEAF_SPINE}  [topology.host]
  profile = "hpcc"
    [topology.host.transport]
    window_bytes = "path"
[[traffic]]
pattern = "one-to-many"
sender = "host0"
hosts = ["host1", "host3"]
size = "64000"
"#
        );
        let mut w = build(text, &[]).unwrap();
        for i in 0..w.pending.len() as u32 {
            rocesim_model::world::flows::start_flow(&mut w, i);
        }
        let caps: Vec<(u32, Option<u32>)> = w
            .qps
            .iter()
            .filter(|q| q.role == rocesim_model::world::qp::Role::Client)
            .map(|q| (q.live.qp.dest_qpn(), q.live.qp.inflight_cap()))
            .collect();
        let mut got: Vec<Option<u32>> = caps.iter().map(|c| c.1).collect();
        got.sort();
        assert_eq!(got, [Some(52), Some(104)], "{caps:?}");
        let paths: Vec<u64> = w.flows.iter().map(|f| f.path_bdp).collect();
        assert_eq!(paths, [52_000, 104_000]);

        let perftest = text
            .replace("[[traffic]]", "[[workload]]\ntool = \"ib_write_bw\"\nclient = \"host0\"\nserver = \"host1\"\n[[traffic]]");
        let Err(err) = build(&perftest, &[]) else {
            panic!("a perftest workload with window_bytes = \"path\" was built");
        };
        assert!(
            err.contains("window_bytes = \"path\" needs the QP's path"),
            "{err}"
        );
    }

    /// The hpcc profile's flows hash as the reference's: a request by
    /// (10000 + the pair's earlier flows, the flow's dport), its ACKs by
    /// the two swapped; `ecmp_ports = "udp"` by the frames' own ports.
    #[test]
    fn flows_hash_by_the_references_ports() {
        let text = |ports: &str| {
            format!(
                r#"{LEAF_SPINE}  [topology.host]
  profile = "hpcc"
    [topology.host.transport]
    {ports}
[[traffic]]
pattern = "one-to-many"
sender = "host0"
hosts = ["host1", "host3"]
size = "64000"
[[traffic]]
pattern = "one-to-many"
sender = "host0"
hosts = ["host1"]
size = "8000"
"#
            )
        };
        let ports_of = |w: &World| -> Vec<(u16, u16, u16, u16)> {
            let mut v: Vec<_> = w
                .qps
                .chunks(2)
                .map(|pair| {
                    let (c, s) = (pair[0].l3, pair[1].l3);
                    let (Packet5 { sport: a, dport: b }, Packet5 { sport: x, dport: y }) =
                        (Packet5::of(c), Packet5::of(s));
                    (a, b, x, y)
                })
                .collect();
            v.sort();
            v
        };
        let mut w = build(&text(""), &[]).unwrap();
        for i in 0..w.pending.len() as u32 {
            rocesim_model::world::flows::start_flow(&mut w, i);
        }
        // host0 -> host1 twice (10000, 10001), host0 -> host3 once (10000).
        assert_eq!(
            ports_of(&w),
            [
                (10_000, 100, 100, 10_000),
                (10_000, 100, 100, 10_000),
                (10_001, 100, 100, 10_001)
            ]
        );
        let mut w = build(&text("ecmp_ports = \"udp\""), &[]).unwrap();
        for i in 0..w.pending.len() as u32 {
            rocesim_model::world::flows::start_flow(&mut w, i);
        }
        for (a, b, x, y) in ports_of(&w) {
            assert_eq!((b, y), (4791, 4791));
            assert_eq!(a, x, "both ends send from the port of their QPNs");
            assert!(a >= 0xC000, "{a}");
        }
    }

    /// The reference's PFC threshold is the free buffer over 2^shift, its
    /// shift 3 less one per doubling of a port's rate over its first
    /// host's NIC (`pfc_a_shift`): a spine of 400G ports among 100G hosts
    /// has 1/2, not the 1/8 its own slowest port would give, and a leaf's
    /// 100G host ports 1/8.
    #[test]
    fn the_reference_mmu_scales_alpha_by_the_hosts_rate() {
        let text = format!(
            r#"{LEAF_SPINE}fabric_link = {{ rate = "400Gbps", delay = "1us" }}
  [topology.switch.mmu]
  preset = "hpcc_reference"
[[traffic]]
pattern = "one-to-many"
sender = "host0"
hosts = ["host3"]
size = "8000"
"#
        );
        let w = build(&text, &[]).unwrap();
        let alpha = |name: &str, port: usize| {
            let s = w.switches.iter().find(|s| s.name() == name).unwrap();
            let m = s.mmu();
            m.threshold(port, 3) as f64 / m.pool_bytes() as f64
        };
        assert_eq!(alpha("spine0", 0), 0.5);
        assert_eq!(alpha("leaf0", 0), 0.125, "a host port");
    }

    /// A QP template's ECMP ports.
    struct Packet5 {
        sport: u16,
        dport: u16,
    }

    impl Packet5 {
        fn of(l3: rocesim_model::packet::L3) -> Packet5 {
            match l3 {
                rocesim_model::packet::L3::V2 { ecmp, .. } => Packet5 {
                    sport: ecmp as u16,
                    dport: (ecmp >> 16) as u16,
                },
                _ => panic!("a RoCEv2 QP"),
            }
        }
    }

    use core::net::Ipv4Addr;

    use rocesim_model::world::*;

    /// Two hosts `a` and `t` (and a second NIC on `a`) behind one switch;
    /// `extra` goes into host `a`'s table.
    fn two_hosts(a_nics: &str) -> String {
        format!(
            r#"
[[host]]
name = "a"
{a_nics}
[[host]]
name = "t"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.9/24"
[[switch]]
name = "sw"
[[link]]
a = "a.eth0"
b = "sw.p1"
rate = "25Gbps"
[[link]]
a = "t.eth0"
b = "sw.p3"
rate = "25Gbps"
[[workload]]
tool = "ib_write_bw"
client = "a.eth0"
server = "t"
"#
        )
    }

    fn build(text: &str, sets: &[String]) -> Result<World, String> {
        let l =
            crate::load_str(Path::new("t.toml"), text.into(), sets).map_err(|d| d.to_string())?;
        build_world(&l.scenario, &BuildOptions::default()).map_err(|e| l.locate(&e).to_string())
    }

    /// A host with two NICs in different subnets and no policy routing
    /// talks from eth1's address to a peer on eth0's subnet: the request
    /// leaves eth0, and arp_announce decides its sender IP.
    #[test]
    fn arp_announce_picks_the_sender_address_as_arp_solicit_does() {
        let text = two_hosts(
            "  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n  \
             [[host.nic]]\n  name = \"eth1\"\n  ip = \"10.0.1.1/24\"\n",
        ) + "[[link]]\na = \"a.eth1\"\nb = \"sw.p2\"\nrate = \"25Gbps\"\n";
        let sender = |announce: u8, src_iface: u32| {
            let w = build(&text, &[format!("host.a.arp_announce={announce}")]).unwrap();
            let r = w.hosts[0]
                .route(src_iface, Ipv4Addr::new(10, 0, 0, 9))
                .unwrap();
            assert_eq!((r.egress, r.next_hop), (0, Ipv4Addr::new(10, 0, 0, 9)));
            r.sender_ip
        };
        let (eth0, eth1) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 1, 1));
        // From eth1's address: 0 announces it; 1 cannot (eth0's subnet
        // does not hold it) and uses eth0's; 2 always uses eth0's.
        assert_eq!(sender(0, 1), eth1);
        assert_eq!(sender(1, 1), eth0);
        assert_eq!(sender(2, 1), eth0);
        // From eth0's own address all three agree.
        for a in 0..=2 {
            assert_eq!(sender(a, 0), eth0);
        }
    }

    /// A NIC's own `gateway` is where its off-subnet RDMA traffic (and,
    /// with policy routing, its socket traffic) goes; the host's gateway
    /// stays the main table's.
    #[test]
    fn a_nics_gateway_routes_its_own_traffic() {
        let text = two_hosts(
            "gateway = \"10.0.0.254\"\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n  \
             [[host.nic]]\n  name = \"eth1\"\n  ip = \"10.0.1.1/24\"\n  gateway = \"10.0.1.254\"\n",
        ) + "[[link]]\na = \"a.eth1\"\nb = \"sw.p2\"\nrate = \"25Gbps\"\n";
        let far = Ipv4Addr::new(10, 5, 0, 1);
        let hop = |sets: &[String], via: &dyn Fn(&rocesim_model::world::host::Host) -> _| {
            let w = build(&text, sets).unwrap();
            let r: rocesim_model::world::host::Route = via(&w.hosts[0]);
            (r.egress, r.next_hop)
        };
        let (gw0, gw1) = (Ipv4Addr::new(10, 0, 0, 254), Ipv4Addr::new(10, 0, 1, 254));
        // A QP on eth1 leaves eth1 for eth1's gateway.
        assert_eq!(hop(&[], &|h| h.roce_route(1, far).unwrap()), (1, gw1));
        // A socket from eth1's address: the main table (eth0, the host's
        // gateway), or eth1's own table with policy routing.
        assert_eq!(hop(&[], &|h| h.route(1, far).unwrap()), (0, gw0));
        let policy = ["host.a.policy_routing=true".to_string()];
        assert_eq!(hop(&policy, &|h| h.route(1, far).unwrap()), (1, gw1));
        // A gateway off the NIC's subnet is refused at its key.
        let off = ["host.a.nic.eth1.gateway=10.0.0.254".to_string()];
        let e = build(&text, &off).err().unwrap();
        assert!(
            e.contains("key `host[0].nic[1].gateway`")
                && e.contains("not another address on its subnet 10.0.1.1/24"),
            "{e}"
        );
    }

    fn build_err(sets: &[&str]) -> String {
        let text = two_hosts("  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n");
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        build(&text, &sets).err().unwrap_or_default()
    }

    #[test]
    fn a_bridged_workload_stays_in_one_vlan() {
        let e = build_err(&["host.a.nic.eth0.vlan=100", "host.t.nic.eth0.vlan=200"]);
        assert!(
            e.contains("key `workload[0].server`") && e.contains("on VLAN 100"),
            "{e}"
        );
        let e = build_err(&["host.a.nic.eth0.vlan=100"]);
        assert!(e.contains("t is untagged"), "{e}");
        assert_eq!(
            build_err(&["host.a.nic.eth0.vlan=7", "host.t.nic.eth0.vlan=7"]),
            ""
        );
    }

    #[test]
    fn macs_are_unicast_and_unique() {
        assert_eq!(build_err(&[]), "");
        let e = build_err(&[
            "host.t.nic.eth0.mac=02:00:00:00:00:07",
            "host.a.nic.eth0.mac=02:00:00:00:00:07",
        ]);
        assert!(
            e.contains("key `host[1].nic[0].mac`") && e.contains("also the MAC of `a.eth0`"),
            "{e}"
        );
        for group in [
            "ff:ff:ff:ff:ff:ff",
            "01:00:5e:00:00:01",
            "00:00:00:00:00:00",
        ] {
            let e = build_err(&[&format!("host.a.nic.eth0.mac={group}")]);
            assert!(
                e.contains("key `host[0].nic[0].mac`") && e.contains("not a unicast MAC"),
                "{e}"
            );
        }
    }

    /// Two switches may share a MAC only when no bridged link joins them
    /// (an anycast gateway); a switch may never share a host's.
    #[test]
    fn switches_share_a_mac_only_across_a_routed_link() {
        let text = |routed: bool| {
            let (t_net, routes) = if routed {
                (
                    "10.0.2",
                    "  [[switch.route]]\n  prefix = \"10.0.2.0/24\"\n  via = [\"p2\"]\n",
                )
            } else {
                ("10.0.1", "")
            };
            let back = routes.replace("10.0.2.0", "10.0.1.0");
            format!(
                r#"
[[host]]
name = "a"
gateway = "10.0.1.254"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.1.1/24"
[[host]]
name = "t"
gateway = "{t_net}.254"
  [[host.nic]]
  name = "eth0"
  ip = "{t_net}.9/24"
[[switch]]
name = "r1"
mac = "02:00:5e:00:ff:fe"
{routes}[[switch]]
name = "r2"
mac = "02:00:5e:00:ff:fe"
{back}[[link]]
a = "a.eth0"
b = "r1.p1"
rate = "25Gbps"
[[link]]
a = "r1.p2"
b = "r2.p2"
rate = "25Gbps"
[[link]]
a = "t.eth0"
b = "r2.p1"
rate = "25Gbps"
[[workload]]
tool = "ib_write_bw"
client = "a.eth0"
server = "t"
"#
            )
        };
        build(&text(true), &[]).unwrap();
        let e = build(&text(false), &[]).err().unwrap();
        assert!(
            e.contains("key `switch[1].mac`") && e.contains("also the MAC of `r1`"),
            "{e}"
        );
        let e = build(
            &text(true),
            &["host.t.nic.eth0.mac=02:00:5e:00:ff:fe".into()],
        )
        .err()
        .unwrap();
        assert!(
            e.contains("key `switch[0].mac`") && e.contains("also the MAC of `t.eth0`"),
            "{e}"
        );
    }

    /// A failed build creates no file: the taps are opened only once the
    /// whole scenario is known to be good.
    #[test]
    fn a_failed_build_leaves_no_capture_behind() {
        let dir = std::env::temp_dir().join(format!("rocesim-build-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let text = two_hosts("  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n")
            + "[[tap]]\nat = \"sw.p1\"\n";
        let load =
            |sets: &[String]| crate::load_str(Path::new("t.toml"), text.clone(), sets).unwrap();
        let opts = BuildOptions {
            tap_dir: Some(dir.clone()),
        };
        let l = load(&["workload.0.qps=0".to_string()]);
        let e = build_world(&l.scenario, &opts).err().unwrap();
        assert_eq!(e.path.to_string(), "workload[0].qps");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        build_world(&load(&[]).scenario, &opts).unwrap();
        assert!(dir.join("sw.p1.pcap").is_file());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
