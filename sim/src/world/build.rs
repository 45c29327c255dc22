//! From a scenario to a [`World`]: resolves names, checks every value a real
//! network would refuse, assigns MACs, QPNs and PSNs, resolves neighbours
//! (ARP) and places queue pairs on ports.
//!
//! ## Neighbour resolution (ARP)
//! By default ARP is an instantaneous resolution step at connection setup
//! (what RDMA-CM does before the first RoCE packet), following the kernel's
//! rules; it also validates every scenario (an ARP nobody answers is an
//! error). With `[sim] arp = "frames"` the same rules are played out with
//! real frames (`world::arp`), and captures show them. The rules:
//!
//! 1. Route: with `policy_routing` the lookup uses the table of the
//!    interface that owns the source address; without it, the main table's
//!    first connected route that covers the destination (the interface listed
//!    first) — or the gateway, through the interface on its subnet.
//! 2. The request leaves that interface `E`. Its sender IP is the
//!    connection's source address (`arp_announce = 0`, or 1 when `E`'s
//!    subnet holds both that address and the target), else `E`'s own
//!    address (`arp_announce = 2`, and 1 otherwise).
//! 3. Every interface of the target host on the requester's subnet receives
//!    the broadcast and answers with its own MAC if `arp_ignore` allows:
//!    0 = the target address is any local address, 1 = it is configured on
//!    the receiving interface, 2 = as 1 and the sender IP is in that
//!    interface's subnet. The first answer wins (the kernel ignores later
//!    ones within `locktime`); equal paths answer in interface order.
//! 4. An answering interface records the sender IP → `E`'s MAC, which is
//!    what the responder later uses to send its ACKs back.
//!
//! A RoCE NIC accepts only frames to its own MAC whose destination GID
//! (IP) it owns, so a wrong answer in step 3 or a wrong learned entry in
//! step 4 silently blackholes one direction: "ping works, RDMA fails".
//!
//! What step 1 stands for: the route of the host's *socket* traffic from
//! the connection's source address (a ping, perftest's or NCCL's TCP
//! exchange), whose ARP is the first the peer sees. The kernel's RDMA
//! address resolution itself binds its lookup to the GID's netdev
//! (`addr4_resolve` with `flowi4_oif = bound_dev_if`), so an ARP the RoCE
//! stack sends on its own always leaves the QP's NIC with that NIC's
//! address; policy routing and `arp_announce` matter through the socket
//! traffic. Neighbour entries are kept per host, not per interface.

use std::collections::HashMap;

use core::net::Ipv4Addr;

use roce_codec::Psn;
use roce_codec::frame::{EthRepr, VlanTag};
use roce_codec::hash::EcmpHash;

use super::*;
use crate::rng::component_rng;
use crate::scenario::schema::{
    QpnAlloc, Scenario, SwitchHash, TapFormat, Tool, VerbCfg, WorkloadCfg,
};
use crate::scenario::{KeyPath, ModelError};
use crate::transport::{
    DEFAULT_QPN_BASE, MessageSpec, PerftestOp, PerftestSpec, QpConfig, QpnAllocator, Verb,
    WorkloadSpec,
};

/// What the builder needs beyond the scenario.
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Directory the taps write into; `None` = no taps (`rocesim check`).
    pub tap_dir: Option<std::path::PathBuf>,
}

fn p() -> KeyPath {
    KeyPath::root()
}

/// RoCE path MTU from the Ethernet MTU, as `iboe_get_mtu` does: subtract
/// GRH, UDP, BTH, XRC, AtomicETH and ICRC sizes (96 B) and take the largest
/// IB MTU that fits.
pub fn roce_mtu(eth_mtu: u32) -> Option<u32> {
    let room = eth_mtu.checked_sub(40 + 8 + 12 + 4 + 28 + 4)?;
    [4096, 2048, 1024, 512, 256]
        .into_iter()
        .find(|&m| m <= room)
}

/// A neighbour entry a host learned from an ARP request: (host, IP, MAC).
type Learned = (u32, Ipv4Addr, [u8; 6]);

struct Endpoint {
    host: u32,
    iface: u32,
}

impl World {
    /// Builds the world; every problem is a [`ModelError`] at its key.
    pub fn build(sc: &Scenario, name: &str, opts: &BuildOptions) -> Result<World, ModelError> {
        let seed = sc.seed;
        let mut w = World {
            name: name.to_string(),
            seed,
            sched: Scheduler::new(),
            pool: PacketPool::new(),
            ports: Vec::new(),
            links: Vec::new(),
            hosts: Vec::new(),
            bonds: Vec::new(),
            switches: Vec::new(),
            qps: Vec::new(),
            wls: Vec::new(),
            taps: Vec::new(),
            stop_at: sc.sim.stop_at.map(|d| d.0),
            sample_every: sc.sim.sample_interval.map_or(Ps::from_us(10), |d| d.0),
            active_since_sample: true,
            sampling_paused: false,
            port_samples: Vec::new(),
            qp_samples: Vec::new(),
            packet_hops: 0,
            last_activity: Ps::ZERO,
            neigh: Vec::new(),
            pending: Vec::new(),
            conns: Vec::new(),
        };
        if let Some(n) = &sc.name {
            // It names the default run directory, runs/<name>/.
            if n.is_empty() || n == "." || n == ".." || n.contains(['/', '\\']) {
                return Err(ModelError::new(
                    p().key("name"),
                    format!("scenario name `{n}` must be a plain directory name"),
                )
                .hint("the default output is runs/<name>/; use e.g. name = \"lag_hash\""));
            }
        }
        if w.sample_every == Ps::ZERO {
            return Err(ModelError::new(
                p().key("sim").key("sample_interval"),
                "must be greater than 0",
            ));
        }
        if sc.hosts.is_empty() {
            return Err(ModelError::new(p(), "the scenario has no [[host]]")
                .hint("add at least two [[host]] tables and a [[link]] between them"));
        }
        let mut names: HashMap<String, KeyPath> = HashMap::new();
        let mut claim = |n: &str, at: KeyPath| -> Result<(), ModelError> {
            if n.is_empty() || n.contains('.') || n.contains('/') {
                return Err(ModelError::new(
                    at,
                    format!("name `{n}` must be non-empty and contain no `.` or `/`"),
                ));
            }
            if let Some(prev) = names.insert(n.to_string(), at.clone()) {
                return Err(
                    ModelError::new(at, format!("name `{n}` is already used by `{prev}`"))
                        .hint("host and switch names must be unique"),
                );
            }
            Ok(())
        };
        for (i, h) in sc.hosts.iter().enumerate() {
            claim(&h.name, p().key("host").index(i).key("name"))?;
        }
        for (i, s) in sc.switches.iter().enumerate() {
            claim(&s.name, p().key("switch").index(i).key("name"))?;
        }

        // Hosts, NICs, interfaces, bonds (ports come with links).
        let mut nic_index: HashMap<(u32, String), u32> = HashMap::new();
        for (hi, hc) in sc.hosts.iter().enumerate() {
            let hp = p().key("host").index(hi);
            if hc.arp_ignore > 2 {
                return Err(ModelError::new(hp.key("arp_ignore"), format!("arp_ignore = {} is not modelled", hc.arp_ignore)).hint("use 0 (reply for any local address), 1 (only the receiving interface's address) or 2"));
            }
            if hc.arp_announce > 2 {
                return Err(ModelError::new(
                    hp.key("arp_announce"),
                    format!("arp_announce = {} is out of range", hc.arp_announce),
                )
                .hint("the kernel accepts 0, 1 or 2"));
            }
            if hc.nics.is_empty() {
                return Err(ModelError::new(
                    hp.key("nic"),
                    format!("host `{}` has no [[host.nic]]", hc.name),
                ));
            }
            let mut host = Host {
                name: hc.name.clone(),
                roce: hc.roce,
                trust: hc.trust,
                arp_ignore: hc.arp_ignore,
                arp_announce: hc.arp_announce,
                policy_routing: hc.policy_routing,
                gateway: hc.gateway.map(|g| g.0),
                nics: Vec::new(),
                ifaces: Vec::new(),
            };
            let mut seen = HashMap::new();
            for (ni, nc) in hc.nics.iter().enumerate() {
                let np = hp.key("nic").index(ni);
                if seen.insert(nc.name.clone(), ni).is_some() || nc.name.contains('.') {
                    return Err(ModelError::new(
                        np.key("name"),
                        format!("NIC name `{}` is repeated or contains `.`", nc.name),
                    ));
                }
                if !(576..=9216).contains(&nc.mtu) {
                    return Err(ModelError::new(
                        np.key("mtu"),
                        format!("MTU {} is impossible for Ethernet", nc.mtu),
                    )
                    .hint("use 1500 (default), 4200 or 9000; RoCE needs at least 352 + headers"));
                }
                if roce_mtu(nc.mtu).is_none() {
                    return Err(ModelError::new(
                        np.key("mtu"),
                        format!("MTU {} leaves no room for a 256-byte RoCE MTU", nc.mtu),
                    ));
                }
                if let Some(v) = nc.vlan {
                    if v == 0 || v > 4094 {
                        return Err(ModelError::new(
                            np.key("vlan"),
                            format!("VLAN id {v} is out of range 1..=4094"),
                        ));
                    }
                }
                let mac = nc.mac.map_or(
                    [
                        0x02,
                        0x00,
                        0x00,
                        (hi >> 8) as u8,
                        (ni + 1) as u8,
                        (hi + 1) as u8,
                    ],
                    |m| m.0,
                );
                nic_index.insert((hi as u32, nc.name.clone()), ni as u32);
                host.nics.push(Nic {
                    name: nc.name.clone(),
                    mac,
                    port: NONE,
                    iface: NONE,
                    slave: None,
                });
            }
            // Bonds first claim their slaves.
            for (bi, bc) in hc.bonds.iter().enumerate() {
                let bp = hp.key("bond").index(bi);
                if seen.contains_key(&bc.name) {
                    return Err(ModelError::new(
                        bp.key("name"),
                        format!("`{}` is already a NIC of host `{}`", bc.name, hc.name),
                    ));
                }
                if bc.slaves.len() < 2 {
                    return Err(ModelError::new(
                        bp.key("slaves"),
                        format!("bond `{}` needs at least two slaves", bc.name),
                    ));
                }
                if bc.slaves.len() > 4 {
                    return Err(ModelError::new(
                        bp.key("slaves"),
                        "an mlx5 RoCE LAG spans at most 4 ports",
                    ));
                }
                if bc.lag_buckets == 0 || bc.lag_buckets > 16 {
                    return Err(ModelError::new(bp.key("lag_buckets"), "must be 1..=16"));
                }
                let Some(ip) = bc.ip else {
                    return Err(ModelError::new(
                        bp.key("name"),
                        format!("bond `{}` has no `ip`", bc.name),
                    )
                    .hint("add e.g. ip = \"10.0.0.1/24\""));
                };
                let mut slaves = Vec::new();
                for (si, sname) in bc.slaves.iter().enumerate() {
                    let Some(&ni) = nic_index.get(&(hi as u32, sname.clone())) else {
                        return Err(ModelError::new(
                            bp.key("slaves").index(si),
                            format!("host `{}` has no NIC `{sname}`", hc.name),
                        )
                        .did_you_mean(sname, hc.nics.iter().map(|n| n.name.as_str())));
                    };
                    if host.nics[ni as usize].slave.is_some() {
                        return Err(ModelError::new(
                            bp.key("slaves").index(si),
                            format!("NIC `{sname}` is already a slave of a bond"),
                        ));
                    }
                    if hc.nics[ni as usize].ip.is_some() {
                        return Err(ModelError::new(p().key("host").index(hi).key("nic").index(ni as usize).key("ip"), format!("NIC `{sname}` is a slave of bond `{}` and cannot have its own address", bc.name)).hint("move the address to the bond"));
                    }
                    host.nics[ni as usize].slave = Some(si as u32);
                    slaves.push(ni);
                }
                let mtus: Vec<u32> = slaves.iter().map(|&n| hc.nics[n as usize].mtu).collect();
                let mac = bc.mac.map_or(host.nics[slaves[0] as usize].mac, |m| m.0);
                let iface = host.ifaces.len() as u32;
                for &n in &slaves {
                    host.nics[n as usize].iface = iface;
                }
                let bond_id = w.bonds.len() as u32;
                let bond = Bond::new(
                    format!("{}.{}", hc.name, bc.name),
                    bc.mode,
                    bc.xmit_hash_policy,
                    bc.miimon.0,
                    bc.updelay.0,
                    bc.downdelay.0,
                    bc.lag,
                    bc.lag_hash,
                    bc.lag_buckets,
                    slaves.iter().map(|&n| (n, NONE)).collect(),
                    component_rng(seed, &format!("bond:{}.{}", hc.name, bc.name)),
                );
                w.bonds.push((hi as u32, iface, bond));
                host.ifaces.push(Iface {
                    name: bc.name.clone(),
                    kind: IfaceKind::Bond(bond_id),
                    mac,
                    ip: Some(ip),
                    mtu: *mtus.iter().min().unwrap(),
                    vlan: hc.nics[slaves[0] as usize].vlan,
                    qpns: FastMap::default(),
                });
            }
            for (ni, nc) in hc.nics.iter().enumerate() {
                if host.nics[ni].slave.is_some() {
                    continue;
                }
                let iface = host.ifaces.len() as u32;
                host.nics[ni].iface = iface;
                host.ifaces.push(Iface {
                    name: nc.name.clone(),
                    kind: IfaceKind::Nic(ni as u32),
                    mac: host.nics[ni].mac,
                    ip: nc.ip,
                    mtu: nc.mtu,
                    vlan: nc.vlan,
                    qpns: FastMap::default(),
                });
            }
            w.hosts.push(host);
        }
        // Unique IPs.
        let mut ips: HashMap<Ipv4Addr, (u32, u32)> = HashMap::new();
        for (hi, h) in w.hosts.iter().enumerate() {
            for (ii, f) in h.ifaces.iter().enumerate() {
                if let Some(ip) = f.ip {
                    if let Some((oh, oi)) = ips.insert(ip.addr, (hi as u32, ii as u32)) {
                        return Err(ModelError::new(
                            iface_path(sc, hi, &f.name).key("ip"),
                            format!(
                                "address {} is also on {}.{}",
                                ip.addr,
                                w.hosts[oh as usize].name,
                                w.hosts[oh as usize].ifaces[oi as usize].name
                            ),
                        ));
                    }
                }
            }
        }

        // Switches.
        for (si, scfg) in sc.switches.iter().enumerate() {
            let mac = scfg.mac.map_or(
                [0x02, 0x5e, 0x00, 0x00, (si >> 8) as u8, (si + 1) as u8],
                |m| m.0,
            );
            w.switches.push(Switch {
                name: scfg.name.clone(),
                mac,
                ports: Vec::new(),
                groups: Vec::new(),
                group_of: Vec::new(),
                fdb: FastMap::default(),
                neigh: HashMap::new(),
                routes: Vec::new(),
                routed: Vec::new(),
                hash: match scfg.hash {
                    SwitchHash::Crc32 => EcmpHash::Crc32 {
                        seed: scfg.hash_seed,
                    },
                    SwitchHash::LinuxL34 => EcmpHash::LinuxL34,
                    SwitchHash::Xor16 => EcmpHash::Xor16,
                },
                trust: scfg.trust,
                buffer: scfg.buffer.0,
                used: 0,
                peak_used: 0,
                ingress: Vec::new(),
            });
            if scfg.buffer.0 < 16 * 1024 {
                return Err(ModelError::new(
                    p().key("switch").index(si).key("buffer"),
                    "a switch buffer below 16 KiB cannot hold a jumbo frame per port",
                ));
            }
        }
        // One station, one MAC: a MAC on two interfaces (or a switch)
        // makes the FDBs flap between them.
        let mut macs: HashMap<[u8; 6], String> = HashMap::new();
        let stations = w.hosts.iter().enumerate().flat_map(|(hi, h)| {
            h.ifaces.iter().map(move |f| {
                (
                    f.mac,
                    iface_path(sc, hi, &f.name).key("mac"),
                    format!("{}.{}", h.name, f.name),
                )
            })
        });
        let switches = w.switches.iter().enumerate().map(|(si, s)| {
            (
                s.mac,
                p().key("switch").index(si).key("mac"),
                s.name.clone(),
            )
        });
        for (mac, at, who) in stations.chain(switches) {
            if let Some(prev) = macs.insert(mac, who.clone()) {
                return Err(ModelError::new(
                    at,
                    format!(
                        "MAC {} of `{who}` is also the MAC of `{prev}`",
                        crate::scenario::schema::fmt_mac(&mac)
                    ),
                )
                .hint("give each interface its own `mac`, or leave it out to have one assigned"));
            }
        }

        // Links create ports.
        let mut port_by_name: HashMap<String, u32> = HashMap::new();
        for (li, lc) in sc.links.iter().enumerate() {
            let lp = p().key("link").index(li);
            if !(0.0..1.0).contains(&lc.loss) {
                return Err(ModelError::new(
                    lp.key("loss"),
                    format!("loss {} must be a probability in [0, 1)", lc.loss),
                ));
            }
            let link = w.links.len() as u32;
            let mut ends = [NONE; 2];
            for (e, (key, ep)) in [("a", &lc.a), ("b", &lc.b)].into_iter().enumerate() {
                let port = w.make_port(sc, ep, lp.key(key), link, lc.rate.0, &mut port_by_name)?;
                ends[e] = port;
            }
            w.ports[ends[0] as usize].peer = ends[1];
            w.ports[ends[1] as usize].peer = ends[0];
            let lname = lc
                .name
                .clone()
                .unwrap_or_else(|| format!("{}--{}", lc.a, lc.b));
            let mut last = Ps::ZERO;
            for (ei, ev) in lc.events.iter().enumerate() {
                if ev.at.0 < last {
                    return Err(ModelError::new(
                        lp.key("event").index(ei).key("at"),
                        "link events must be in time order",
                    ));
                }
                last = ev.at.0;
                w.sched.at(
                    ev.at.0,
                    Event::Link {
                        link,
                        up: ev.state == crate::scenario::schema::LinkState::Up,
                    },
                );
            }
            w.links.push(Link {
                name: lname.clone(),
                a: ends[0],
                b: ends[1],
                delay: lc.delay.0,
                loss: lc.loss,
                rng: component_rng(seed, &format!("link:{lname}")),
                up: true,
                sent_bytes: 0,
                delivered_bytes: 0,
                lost_bytes: 0,
            });
        }
        for (hi, h) in w.hosts.iter().enumerate() {
            for (ni, n) in h.nics.iter().enumerate() {
                if n.port == NONE {
                    return Err(ModelError::new(
                        p().key("host").index(hi).key("nic").index(ni).key("name"),
                        format!("NIC `{}.{}` is not cabled", h.name, n.name),
                    )
                    .hint(format!("add a [[link]] with a = \"{}.{}\"", h.name, n.name)));
                }
            }
        }
        for (b, (host, _, bond)) in w.bonds.iter_mut().enumerate() {
            let _ = b;
            for s in bond.slaves.iter_mut() {
                s.port = w.hosts[*host as usize].nics[s.nic as usize].port;
            }
        }

        // Switch groups (LAGs), FDB, neighbours and routes.
        for (si, scfg) in sc.switches.iter().enumerate() {
            let sp = p().key("switch").index(si);
            let nports = w.switches[si].ports.len();
            let local_name = |w: &World, l: usize| -> String {
                let full = &w.ports[w.switches[si].ports[l] as usize].name;
                full.split_once('.')
                    .map_or(full.clone(), |(_, b)| b.to_string())
            };
            let mut group_of = vec![NONE; nports];
            let mut groups = Vec::new();
            for (gi, lag) in scfg.lags.iter().enumerate() {
                let mut members = Vec::new();
                if lag.ports.is_empty() {
                    return Err(ModelError::new(
                        sp.key("lag").index(gi).key("ports"),
                        "a LAG needs member ports",
                    ));
                }
                for (pi, pn) in lag.ports.iter().enumerate() {
                    let Some(l) = (0..nports).find(|&l| local_name(&w, l) == *pn) else {
                        let names: Vec<String> = (0..nports).map(|l| local_name(&w, l)).collect();
                        return Err(ModelError::new(sp.key("lag").index(gi).key("ports").index(pi), format!("switch `{}` has no port `{pn}` (ports are created by [[link]] endpoints)", scfg.name)).did_you_mean(pn, names.iter().map(String::as_str)));
                    };
                    if group_of[l] != NONE {
                        return Err(ModelError::new(
                            sp.key("lag").index(gi).key("ports").index(pi),
                            format!("port `{pn}` is already in a LAG"),
                        ));
                    }
                    group_of[l] = groups.len() as u32;
                    members.push(l as u32);
                }
                groups.push(Group {
                    name: lag.name.clone(),
                    members,
                });
            }
            for (l, g) in group_of.iter_mut().enumerate() {
                if *g == NONE {
                    *g = groups.len() as u32;
                    groups.push(Group {
                        name: local_name(&w, l),
                        members: vec![l as u32],
                    });
                }
            }
            let sw = &mut w.switches[si];
            sw.group_of = group_of;
            sw.routed = vec![false; groups.len()];
            sw.groups = groups;
            sw.ingress = vec![[0; PRIOS]; nports];
        }
        for (si, scfg) in sc.switches.iter().enumerate() {
            for (ri, r) in scfg.routes.iter().enumerate() {
                let rp = p().key("switch").index(si).key("route").index(ri);
                let mut hops = Vec::new();
                for (vi, v) in r.via.iter().enumerate() {
                    let sw = &w.switches[si];
                    let Some(g) = sw.groups.iter().position(|g| g.name == *v) else {
                        let names: Vec<&str> = sw.groups.iter().map(|g| g.name.as_str()).collect();
                        return Err(ModelError::new(
                            rp.key("via").index(vi),
                            format!("switch `{}` has no port or LAG `{v}`", scfg.name),
                        )
                        .did_you_mean(v, names));
                    };
                    let port = sw.ports[sw.groups[g].members[0] as usize];
                    let peer = w.ports[port as usize].peer;
                    let mac = match w.ports[peer as usize].owner {
                        Owner::Switch { sw: o, .. } => w.switches[o as usize].mac,
                        Owner::Host { host, nic } => {
                            let h = &w.hosts[host as usize];
                            h.ifaces[h.nics[nic as usize].iface as usize].mac
                        }
                    };
                    hops.push((g as u32, mac));
                }
                if hops.is_empty() {
                    return Err(ModelError::new(
                        rp.key("via"),
                        "a route needs at least one next hop",
                    ));
                }
                for &(g, _) in &hops {
                    w.switches[si].routed[g as usize] = true;
                }
                w.switches[si].routes.push((r.prefix, hops));
            }
        }

        w.check_bridging_loops(sc)?;
        // Pre-learned FDB and neighbour tables: what the switch would have
        // learned from the ARP and CM exchange before the first RoCE packet.
        // The FDB spans the bridged domain (it stops at routed ports); the
        // neighbour (ARP) table of the router holds only hosts cabled to
        // this switch, so routed traffic to farther hosts follows the routes.
        for si in 0..w.switches.len() {
            let mut fdb = FastMap::default();
            let mut neigh = HashMap::new();
            for g in 0..w.switches[si].groups.len() {
                let routed = w.switches[si].routed[g];
                for &m in &w.switches[si].groups[g].members {
                    let port = w.switches[si].ports[m as usize];
                    let peer = w.ports[port as usize].peer;
                    let direct = matches!(w.ports[peer as usize].owner, Owner::Host { .. });
                    for (mac, ip) in w.macs_behind(peer, port) {
                        if !routed {
                            fdb.entry(mac).or_insert(g as u32);
                        }
                        if let (true, Some(ip)) = (direct, ip) {
                            neigh.entry(ip).or_insert((mac, g as u32));
                        }
                    }
                }
            }
            w.switches[si].fdb = fdb;
            w.switches[si].neigh = neigh;
        }
        w.neigh = (0..w.hosts.len()).map(|_| FastMap::default()).collect();

        // Taps.
        for (ti, tc) in sc.taps.iter().enumerate() {
            let tp = p().key("tap").index(ti);
            let Some(&port) = port_by_name.get(&tc.at) else {
                let names: Vec<&str> = port_by_name.keys().map(String::as_str).collect();
                let mut sorted = names.clone();
                sorted.sort_unstable();
                return Err(
                    ModelError::new(tp.key("at"), format!("no port `{}` to tap", tc.at))
                        .did_you_mean(&tc.at, sorted),
                );
            };
            if w.ports[port as usize].tap.is_some() {
                return Err(ModelError::new(
                    tp.key("at"),
                    format!("port `{}` already has a tap", tc.at),
                ));
            }
            let (fmt, ext) = match tc.format {
                TapFormat::Pcap => (roce_capture::write::CaptureFormat::Pcap, "pcap"),
                TapFormat::Pcapng => (roce_capture::write::CaptureFormat::PcapNg, "pcapng"),
            };
            let file = tc
                .file
                .clone()
                .unwrap_or_else(|| format!("{}.{ext}", tc.at));
            if file.contains('/') || file.starts_with('.') || file == "summary.json" {
                return Err(ModelError::new(
                    tp.key("file"),
                    format!("`{file}` must be a plain file name inside the run directory"),
                ));
            }
            if w.taps.iter().any(|t| t.file_name == file) {
                return Err(ModelError::new(
                    tp.key("file"),
                    format!("two taps write `{file}`"),
                ));
            }
            if tc.snaplen != 0 && tc.snaplen < 64 {
                return Err(ModelError::new(
                    tp.key("snaplen"),
                    format!(
                        "snaplen {} cuts even the headers; use 0 (whole frames) or at least 64",
                        tc.snaplen
                    ),
                )
                .hint("128 keeps Ethernet/IP/UDP/BTH/RETH"));
            }
            if let Some(dir) = &opts.tap_dir {
                let tap = Tap::create(port, dir, file, fmt, tc.snaplen, &tc.at).map_err(|e| {
                    ModelError::new(tp.key("at"), format!("cannot create the capture: {e}"))
                })?;
                w.ports[port as usize].tap = Some(w.taps.len() as u32);
                w.taps.push(tap);
            }
        }

        // Workloads and queue pairs.
        let mut allocs: HashMap<(u32, u32), QpnAllocator> = HashMap::new();
        let mut qpn_rngs: HashMap<u32, ChaCha8Rng> = HashMap::new();
        for (wi, wc) in sc.workloads.iter().enumerate() {
            w.add_workload(sc, wi, wc, &mut allocs, &mut qpn_rngs)?;
        }
        if w.wls.is_empty() {
            return Err(ModelError::new(p(), "the scenario has no [[workload]]").hint("add e.g. [[workload]] tool = \"ib_write_bw\" client = \"hostA\" server = \"hostB\""));
        }
        Ok(w)
    }

    /// Creates the port for a link endpoint `x.y`.
    fn make_port(
        &mut self,
        sc: &Scenario,
        ep: &str,
        at: KeyPath,
        link: u32,
        rate: Rate,
        by_name: &mut HashMap<String, u32>,
    ) -> Result<u32, ModelError> {
        let Some((node, port)) = ep.split_once('.') else {
            return Err(ModelError::new(
                at,
                format!("endpoint `{ep}` must be `host.nic` or `switch.port`"),
            ));
        };
        if by_name.contains_key(ep) {
            return Err(ModelError::new(
                at,
                format!("`{ep}` is already cabled by another link"),
            ));
        }
        let id = self.ports.len() as u32;
        let owner = if let Some(hi) = self.hosts.iter().position(|h| h.name == node) {
            let h = &mut self.hosts[hi];
            let Some(ni) = h.nics.iter().position(|n| n.name == port) else {
                return Err(
                    ModelError::new(at, format!("host `{node}` has no NIC `{port}`"))
                        .did_you_mean(port, sc.hosts[hi].nics.iter().map(|n| n.name.as_str())),
                );
            };
            if let Some(r) = sc.hosts[hi].nics[ni].rate {
                if r.0 != rate {
                    return Err(ModelError::new(
                        at,
                        format!(
                            "NIC `{ep}` runs at {} but the link at {}",
                            crate::units::fmt_rate(r.0),
                            crate::units::fmt_rate(rate)
                        ),
                    )
                    .hint("make the link rate match the NIC, or drop the NIC's `rate`"));
                }
            }
            h.nics[ni].port = id;
            Owner::Host {
                host: hi as u32,
                nic: ni as u32,
            }
        } else if let Some(si) = self.switches.iter().position(|s| s.name == node) {
            let s = &mut self.switches[si];
            let local = s.ports.len() as u32;
            s.ports.push(id);
            self.switches[si].group_of.push(NONE);
            Owner::Switch {
                sw: si as u32,
                local,
            }
        } else {
            let names: Vec<&str> = sc
                .hosts
                .iter()
                .map(|h| h.name.as_str())
                .chain(sc.switches.iter().map(|s| s.name.as_str()))
                .collect();
            return Err(ModelError::new(at, format!("no host or switch `{node}`"))
                .did_you_mean(node, names));
        };
        let extra = match owner {
            Owner::Switch { sw, .. } => sc.switches[sw as usize].latency.0,
            Owner::Host { .. } => Ps::ZERO,
        };
        self.ports.push(Port {
            name: ep.to_string(),
            owner,
            link,
            peer: NONE,
            rate,
            busy: false,
            carrier: true,
            queues: Default::default(),
            qbytes: [0; PRIOS],
            active: Default::default(),
            c: PortCounters::default(),
            tap: None,
            extra_delay: extra,
        });
        by_name.insert(ep.to_string(), id);
        Ok(id)
    }

    /// MACs (and IPs) reachable at layer 2 behind `port` when entered
    /// from `from`: the host interface there, or the switch and, unless it
    /// was entered through a routed port, everything it bridges to.
    fn macs_behind(&self, port: u32, from: u32) -> Vec<([u8; 6], Option<Ipv4Addr>)> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.ports.len()];
        let mut stack = vec![(port, from)];
        while let Some((p, _)) = stack.pop() {
            if seen[p as usize] {
                continue;
            }
            seen[p as usize] = true;
            match self.ports[p as usize].owner {
                Owner::Host { host, nic } => {
                    let h = &self.hosts[host as usize];
                    let f = &h.ifaces[h.nics[nic as usize].iface as usize];
                    out.push((f.mac, f.ip.map(|i| i.addr)));
                }
                Owner::Switch { sw, local } => {
                    let s = &self.switches[sw as usize];
                    out.push((s.mac, None));
                    if s.is_routed(local) {
                        continue;
                    }
                    for (l, &other) in s.ports.iter().enumerate() {
                        seen[other as usize] = true;
                        let peer = self.ports[other as usize].peer;
                        if !seen[peer as usize] && !s.is_routed(l as u32) {
                            stack.push((peer, other));
                        }
                    }
                }
            }
        }
        out
    }

    /// Refuses a bridging loop: no spanning tree is modelled, so a
    /// broadcast or an unknown unicast frame would circle it forever and
    /// pre-learned tables would point around it. Links between two
    /// switches count unless either end is a routed port (a route `via`);
    /// the members of a LAG that joins the same two groups count once.
    fn check_bridging_loops(&self, sc: &Scenario) -> Result<(), ModelError> {
        let mut parent: Vec<usize> = (0..self.switches.len()).collect();
        fn root(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        let mut joined: Vec<((u32, u32), (u32, u32))> = Vec::new();
        for (li, l) in self.links.iter().enumerate() {
            let (Owner::Switch { sw: sa, local: la }, Owner::Switch { sw: sb, local: lb }) = (
                self.ports[l.a as usize].owner,
                self.ports[l.b as usize].owner,
            ) else {
                continue;
            };
            let (s_a, s_b) = (&self.switches[sa as usize], &self.switches[sb as usize]);
            if s_a.is_routed(la) || s_b.is_routed(lb) {
                continue;
            }
            let ends = (
                (sa, s_a.group_of[la as usize]),
                (sb, s_b.group_of[lb as usize]),
            );
            if joined.contains(&ends) {
                continue;
            }
            joined.push(ends);
            let (ra, rb) = (
                root(&mut parent, sa as usize),
                root(&mut parent, sb as usize),
            );
            if ra == rb {
                let ring: Vec<&str> = (0..self.switches.len())
                    .filter(|&s| root(&mut parent, s) == ra)
                    .map(|s| self.switches[s].name.as_str())
                    .collect();
                return Err(ModelError::new(
                    p().key("link").index(li),
                    format!(
                        "link `{} -- {}` closes a bridging loop through switch{} {}; rocesim runs no spanning tree, so frames would circle it",
                        sc.links[li].a,
                        sc.links[li].b,
                        if ring.len() > 1 { "es" } else { "" },
                        ring.join(", ")
                    ),
                )
                .hint("make parallel links one [[switch.lag]] on both switches, or route between the switches ([[switch.route]] via these ports)"));
            }
            parent[ra] = rb;
        }
        Ok(())
    }

    fn resolve_endpoint(
        &self,
        sc: &Scenario,
        s: &str,
        at: KeyPath,
    ) -> Result<Endpoint, ModelError> {
        let (hname, iname) = match s.split_once('.') {
            Some((h, i)) => (h, Some(i)),
            None => (s, None),
        };
        let Some(hi) = self.hosts.iter().position(|h| h.name == hname) else {
            return Err(ModelError::new(at, format!("no host `{hname}`"))
                .did_you_mean(hname, sc.hosts.iter().map(|h| h.name.as_str())));
        };
        let h = &self.hosts[hi];
        let ii = match iname {
            Some(i) => h.ifaces.iter().position(|f| f.name == i).ok_or_else(|| {
                ModelError::new(at.clone(), format!("host `{hname}` has no interface `{i}`"))
                    .did_you_mean(i, h.ifaces.iter().map(|f| f.name.as_str()))
            })?,
            None => h
                .ifaces
                .iter()
                .position(|f| f.ip.is_some())
                .ok_or_else(|| {
                    ModelError::new(
                        at.clone(),
                        format!("host `{hname}` has no interface with an address"),
                    )
                })?,
        };
        if h.ifaces[ii].ip.is_none() {
            return Err(ModelError::new(
                at,
                format!("interface `{s}` has no IP address, so it has no RoCE GID"),
            )
            .hint("give the NIC or bond an `ip`"));
        }
        Ok(Endpoint {
            host: hi as u32,
            iface: ii as u32,
        })
    }

    /// Neighbour resolution for a connection from `src` to `dst` (see the
    /// module docs). Returns the destination MAC the source NIC will use,
    /// and the (host, interface, ip, mac) entries the target learned.
    /// The route of a host's traffic from interface `src_iface` to
    /// `dst_ip`: the egress interface, the next hop, and the sender address
    /// its ARP request would carry (see the module docs).
    pub(crate) fn route(
        &self,
        host: u32,
        src_iface: u32,
        dst_ip: Ipv4Addr,
    ) -> Result<(usize, Ipv4Addr, Ipv4Addr), String> {
        let h = &self.hosts[host as usize];
        let s_if = &h.ifaces[src_iface as usize];
        let s_ip = s_if
            .ip
            .ok_or_else(|| format!("{}.{} has no address", h.name, s_if.name))?;
        let on_link = |f: &Iface| f.ip.is_some_and(|n| n.contains(dst_ip));
        let (egress, next_hop) = if h.policy_routing {
            if s_ip.contains(dst_ip) {
                (src_iface as usize, dst_ip)
            } else {
                let gw = h.gateway.ok_or_else(|| {
                    format!(
                        "{dst_ip} is not on {}'s subnet {s_ip} and host `{}` has no `gateway`",
                        s_if.name, h.name
                    )
                })?;
                (src_iface as usize, gw)
            }
        } else if let Some(e) = h.ifaces.iter().position(on_link) {
            (e, dst_ip)
        } else {
            let gw = h.gateway.ok_or_else(|| {
                format!(
                    "no route from host `{}` to {dst_ip}: not on any local subnet and no `gateway`",
                    h.name
                )
            })?;
            let e = h
                .ifaces
                .iter()
                .position(|f| f.ip.is_some_and(|n| n.contains(gw)))
                .ok_or_else(|| {
                    format!(
                        "gateway {gw} of host `{}` is on none of its subnets",
                        h.name
                    )
                })?;
            (e, gw)
        };
        // arp_solicit: 0 announces the packet's source address; 1 keeps it
        // only if the egress interface has a subnet holding both it and
        // the target (inet_addr_onlink), else falls back to 2; 2 uses the
        // egress interface's own address.
        let e_ip = h.ifaces[egress].ip;
        let keep = match h.arp_announce {
            0 => true,
            1 => e_ip.is_some_and(|n| n.contains(next_hop) && n.contains(s_ip.addr)),
            _ => false,
        };
        let sender_ip = if keep {
            s_ip.addr
        } else {
            e_ip.map_or(s_ip.addr, |n| n.addr)
        };
        Ok((egress, next_hop, sender_ip))
    }

    fn arp(
        &self,
        sc: &Scenario,
        src: &Endpoint,
        dst_ip: Ipv4Addr,
        learned: &HashMap<(u32, Ipv4Addr), [u8; 6]>,
    ) -> Result<([u8; 6], Vec<Learned>), String> {
        let h = &self.hosts[src.host as usize];
        let (egress, next_hop, sender_ip) = self.route(src.host, src.iface, dst_ip)?;
        let e_if = &h.ifaces[egress];
        if let Some(&mac) = learned.get(&(src.host, next_hop)) {
            return Ok((mac, vec![]));
        }
        // Who answers: walk what is behind the egress interface's port.
        let e_port = match e_if.kind {
            IfaceKind::Nic(n) => h.nics[n as usize].port,
            IfaceKind::Bond(b) => self.bonds[b as usize].2.slaves[0].port,
        };
        let reach = self.macs_behind(self.ports[e_port as usize].peer, e_port);
        // Switch router MACs answer for the gateway.
        if next_hop != dst_ip || !e_if.ip.is_some_and(|n| n.contains(dst_ip)) {
            if let Some((mac, _)) = reach
                .iter()
                .find(|(m, _)| self.switches.iter().any(|s| s.mac == *m))
            {
                return Ok((*mac, vec![]));
            }
            return Err(format!(
                "no router behind {}.{} answers for gateway {next_hop}",
                h.name, e_if.name
            ));
        }
        let reach_macs: Vec<[u8; 6]> = reach.iter().map(|(m, _)| *m).collect();
        for (ti, th) in self.hosts.iter().enumerate() {
            let tc = &sc.hosts[ti];
            let owns = th
                .ifaces
                .iter()
                .any(|f| f.ip.is_some_and(|n| n.addr == next_hop));
            if !owns {
                continue;
            }
            let mut learned_out = Vec::new();
            let mut answer = None;
            for (ri, rf) in th.ifaces.iter().enumerate() {
                if !reach_macs.contains(&rf.mac) || ti as u32 == src.host && ri == egress {
                    continue;
                }
                let Some(rnet) = rf.ip else { continue };
                let replies = match tc.arp_ignore {
                    0 => true,
                    1 => rnet.addr == next_hop,
                    _ => rnet.addr == next_hop && rnet.contains(sender_ip),
                };
                if replies {
                    learned_out.push((ti as u32, sender_ip, e_if.mac));
                    if answer.is_none() {
                        answer = Some(rf.mac);
                    }
                }
            }
            return match answer {
                Some(mac) => Ok((mac, learned_out)),
                None => Err(format!(
                    "ARP for {next_hop} from {}.{} gets no answer: host `{}` has arp_ignore = {} and no interface reachable from {}.{} owns {next_hop}",
                    h.name, e_if.name, th.name, tc.arp_ignore, h.name, e_if.name
                )),
            };
        }
        Err(format!("no host owns {next_hop}"))
    }

    fn add_workload(
        &mut self,
        sc: &Scenario,
        wi: usize,
        wc: &WorkloadCfg,
        allocs: &mut HashMap<(u32, u32), QpnAllocator>,
        rngs: &mut HashMap<u32, ChaCha8Rng>,
    ) -> Result<(), ModelError> {
        let wp = p().key("workload").index(wi);
        let cl = self.resolve_endpoint(sc, &wc.client, wp.key("client"))?;
        let sv = self.resolve_endpoint(sc, &wc.server, wp.key("server"))?;
        if cl.host == sv.host {
            return Err(ModelError::new(
                wp.key("server"),
                "client and server are on the same host; loopback is not modelled",
            ));
        }
        let ch = &self.hosts[cl.host as usize];
        let shh = &self.hosts[sv.host as usize];
        if ch.roce != shh.roce {
            return Err(ModelError::new(
                wp.key("server"),
                format!(
                    "`{}` runs RoCE {:?} but `{}` runs {:?}",
                    ch.name, ch.roce, shh.name, shh.roce
                ),
            )
            .hint("set the same `roce` on both hosts"));
        }
        let c_ip = ch.ifaces[cl.iface as usize].ip.unwrap();
        let s_ip = shh.ifaces[sv.iface as usize].ip.unwrap();
        if ch.roce == RoceMode::V1 && !c_ip.contains(s_ip.addr) {
            return Err(ModelError::new(wp.key("server"), format!("RoCE v1 frames cannot be routed, but {} ({c_ip}) and {} ({s_ip}) are in different subnets", wc.client, wc.server)).hint("use roce = \"v2\" on both hosts, or put them in one subnet"));
        }
        let (c_vlan, s_vlan) = (
            ch.ifaces[cl.iface as usize].vlan,
            shh.ifaces[sv.iface as usize].vlan,
        );
        if c_ip.contains(s_ip.addr) && c_vlan != s_vlan {
            // Bridged (one subnet): the switches here are not VLAN-aware,
            // and a real bridge never forwards between two VLANs.
            let show =
                |v: Option<u16>| v.map_or("untagged".to_string(), |v| format!("on VLAN {v}"));
            return Err(ModelError::new(
                wp.key("server"),
                format!(
                    "{} is {} but {} is {}: no bridge forwards between them",
                    wc.client,
                    show(c_vlan),
                    wc.server,
                    show(s_vlan)
                ),
            )
            .hint("give both interfaces the same `vlan`"));
        }
        let max_mtu = roce_mtu(ch.ifaces[cl.iface as usize].mtu)
            .unwrap()
            .min(roce_mtu(shh.ifaces[sv.iface as usize].mtu).unwrap());
        let pmtu = match wc.mtu {
            None => max_mtu,
            Some(m) if ![256, 512, 1024, 2048, 4096].contains(&m) => {
                return Err(
                    ModelError::new(wp.key("mtu"), format!("RoCE MTU {m} is impossible"))
                        .hint("RoCE path MTUs are 256, 512, 1024, 2048 or 4096"),
                );
            }
            Some(m) if m > max_mtu => {
                return Err(ModelError::new(wp.key("mtu"), format!("RoCE MTU {m} does not fit: the interfaces' Ethernet MTUs allow at most {max_mtu}")).hint("raise the NIC `mtu` (4200 or 9000 allow 4096)"));
            }
            Some(m) => m,
        };
        if wc.qps == 0 || wc.qps > 16384 {
            return Err(ModelError::new(
                wp.key("qps"),
                format!("qps = {} must be 1..=16384", wc.qps),
            ));
        }
        if wc.timeout > 31 {
            return Err(ModelError::new(
                wp.key("timeout"),
                format!("timeout = {} is a 5-bit exponent (0..=31)", wc.timeout),
            ));
        }
        if wc.retry_cnt > 7 {
            return Err(ModelError::new(
                wp.key("retry_cnt"),
                format!("retry_cnt = {} is a 3-bit count (0..=7)", wc.retry_cnt),
            ));
        }
        if wc.rnr_retry > 7 {
            return Err(ModelError::new(
                wp.key("rnr_retry"),
                format!(
                    "rnr_retry = {} is a 3-bit count (0..=7, 7 = infinite)",
                    wc.rnr_retry
                ),
            ));
        }
        if wc.min_rnr_timer > 31 {
            return Err(ModelError::new(
                wp.key("min_rnr_timer"),
                "min_rnr_timer is a 5-bit code (0..=31)",
            ));
        }
        if wc.sl > 7 {
            return Err(ModelError::new(
                wp.key("sl"),
                "service level must be 0..=7 on Ethernet",
            ));
        }
        if wc.tx_depth == 0 || wc.tx_depth > 8192 {
            return Err(ModelError::new(
                wp.key("tx_depth"),
                "tx_depth must be 1..=8192",
            ));
        }
        if wc.flow_label > 0xF_FFFF {
            return Err(ModelError::new(
                wp.key("flow_label"),
                "the flow label has 20 bits",
            ));
        }
        let verb = |v: VerbCfg| match v {
            VerbCfg::Write => Verb::Write,
            VerbCfg::WriteImm => Verb::WriteImm,
            VerbCfg::Send => Verb::Send,
            VerbCfg::SendImm => Verb::SendImm,
            VerbCfg::Read => Verb::Read,
        };
        let spec = match wc.tool {
            Tool::Messages => {
                if wc.messages.is_empty() {
                    return Err(ModelError::new(
                        wp.key("tool"),
                        "tool = \"messages\" needs [[workload.message]] entries",
                    ));
                }
                let mut msgs = Vec::new();
                for (mi, m) in wc.messages.iter().enumerate() {
                    if m.qp >= wc.qps {
                        return Err(ModelError::new(
                            wp.key("message").index(mi).key("qp"),
                            format!("qp {} but the workload has {} QPs", m.qp, wc.qps),
                        ));
                    }
                    check_message_size(m.size.0, pmtu, wp.key("message").index(mi).key("size"))?;
                    msgs.push(MessageSpec {
                        at: wc.start.0 + m.at.map_or(Ps::ZERO, |a| a.0),
                        qp: m.qp,
                        verb: verb(m.verb),
                        len: m.size.0,
                    });
                }
                WorkloadSpec::Messages {
                    qps: wc.qps,
                    tx_depth: wc.tx_depth,
                    rx_depth: 512,
                    tclass: wc.tc,
                    flow_label: wc.flow_label,
                    messages: msgs,
                }
            }
            t => {
                if !wc.messages.is_empty() {
                    return Err(ModelError::new(
                        wp.key("message"),
                        "messages are only used with tool = \"messages\"",
                    ));
                }
                check_message_size(wc.size.0, pmtu, wp.key("size"))?;
                let op = match t {
                    Tool::IbWriteBw => PerftestOp::WriteBw,
                    Tool::IbSendBw => PerftestOp::SendBw,
                    _ => PerftestOp::ReadBw,
                };
                let mut s = PerftestSpec::new(op);
                s.size = wc.size.0;
                s.qps = wc.qps;
                // As perftest: -D wins over -n.
                s.iters = if wc.duration.is_some() {
                    1000
                } else {
                    wc.iters.unwrap_or(1000)
                };
                s.duration = wc.duration.map(|d| d.0);
                s.tx_depth = wc.tx_depth;
                s.tclass = wc.tc;
                s.flow_label = wc.flow_label;
                WorkloadSpec::Perftest(s)
            }
        };
        let workload = crate::transport::Workload::new(spec).map_err(|e| {
            // Point at the key the transport's check is about.
            let key = match &e {
                crate::transport::WorkloadError::OutOfRange { field, .. }
                    if ["qps", "size", "tx_depth", "iters", "duration"].contains(field) =>
                {
                    *field
                }
                crate::transport::WorkloadError::NoSuchQp { .. } => "message",
                _ => "tool",
            };
            ModelError::new(wp.key(key), e.to_string())
        })?;
        let cfg = QpConfig {
            pmtu,
            timeout: wc.timeout,
            retry_cnt: wc.retry_cnt,
            rnr_retry: wc.rnr_retry,
            min_rnr_timer: wc.min_rnr_timer,
            max_send_wr: wc.tx_depth,
            ..QpConfig::default()
        };
        cfg.validate()
            .map_err(|e| ModelError::new(wp.key("tool"), e.to_string()))?;

        // Neighbours, both directions (the client resolves first).
        let mut learned: HashMap<(u32, Ipv4Addr), [u8; 6]> = HashMap::new();
        let (c_dmac, l1) = self
            .arp(sc, &cl, s_ip.addr, &learned)
            .map_err(|e| ModelError::new(wp.key("server"), e))?;
        for (h, ip, mac) in l1 {
            learned.entry((h, ip)).or_insert(mac);
        }
        let (s_dmac, _) = self
            .arp(sc, &sv, c_ip.addr, &learned)
            .map_err(|e| ModelError::new(wp.key("client"), e))?;

        let wl_id = self.wls.len() as u32;
        let wname = wc.name.clone().unwrap_or_else(|| format!("workload{wi}"));
        let mut clients = Vec::new();
        let mut servers = Vec::new();
        let mut qpn = |w: &mut World, ep: &Endpoint| -> Result<u32, ModelError> {
            let hc = &sc.hosts[ep.host as usize];
            let key = (ep.host, ep.iface);
            if let std::collections::hash_map::Entry::Vacant(e) = allocs.entry(key) {
                let a = match hc.qpn_alloc {
                    QpnAlloc::Sequential => QpnAllocator::sequential(
                        hc.qpn_base.unwrap_or(DEFAULT_QPN_BASE),
                    )
                    .map_err(|e| {
                        ModelError::new(
                            p().key("host").index(ep.host as usize).key("qpn_base"),
                            e.to_string(),
                        )
                    })?,
                    QpnAlloc::Random => QpnAllocator::random(),
                };
                e.insert(a);
            }
            let rng = rngs.entry(ep.host).or_insert_with(|| {
                component_rng(w.seed, &format!("qpn:{}", w.hosts[ep.host as usize].name))
            });
            allocs
                .get_mut(&key)
                .unwrap()
                .allocate(rng)
                .map_err(|e| ModelError::new(wp.key("qps"), e.to_string()))
        };
        let mut pairs = Vec::new();
        for _ in 0..wc.qps {
            let a = qpn(self, &cl)?;
            pairs.push(a);
        }
        let mut spairs = Vec::new();
        for _ in 0..wc.qps {
            spairs.push(qpn(self, &sv)?);
        }
        let mut psn_rng = component_rng(self.seed, &format!("psn:{wname}"));
        // Each end of a workload is one process: one user context per
        // bond device it uses (queue-affinity round robin).
        let mut contexts: HashMap<u32, u32> = HashMap::new();
        for q in 0..wc.qps as usize {
            let (cq, sq) = (pairs[q], spairs[q]);
            let c_psn = Psn::new(crate::rng::below(&mut psn_rng, 1 << 24));
            let s_psn = Psn::new(crate::rng::below(&mut psn_rng, 1 << 24));
            let sport = crate::transport::udp_sport(cq, sq, wc.flow_label);
            for (ep, lqpn, rqpn, sqp, rqp, dmac, src_ip, dst_ip, role) in [
                (
                    &cl,
                    cq,
                    sq,
                    c_psn,
                    s_psn,
                    c_dmac,
                    c_ip.addr,
                    s_ip.addr,
                    Role::Client,
                ),
                (
                    &sv,
                    sq,
                    cq,
                    s_psn,
                    c_psn,
                    s_dmac,
                    s_ip.addr,
                    c_ip.addr,
                    Role::Server,
                ),
            ] {
                let gidx = self.qps.len() as u32;
                let h = &mut self.hosts[ep.host as usize];
                let trust = h.trust;
                let roce = h.roce;
                let f = &mut h.ifaces[ep.iface as usize];
                f.qpns.insert(lqpn, gidx);
                let prio = match trust {
                    Trust::Dscp => (wc.tc >> 2) >> 3,
                    Trust::Pcp => wc.sl & 7,
                };
                let vlan = f.vlan.map(|vid| VlanTag::dot1q(vid, prio));
                let l3 = match roce {
                    RoceMode::V2 => L3::V2 {
                        src: src_ip,
                        dst: dst_ip,
                        dscp: wc.tc >> 2,
                        ecn: wc.tc & 3,
                        ttl: 64,
                        sport,
                    },
                    RoceMode::V1 => L3::V1 {
                        sgid: src_ip,
                        dgid: dst_ip,
                        tclass: wc.tc,
                        flow_label: wc.flow_label,
                    },
                };
                let eth = EthRepr {
                    dst: dmac,
                    src: f.mac,
                };
                let kind = f.kind;
                let mut pkt_keys = Packet {
                    eth,
                    vlan,
                    l3,
                    ib: Default::default(),
                    prio,
                    frame_len: 0,
                    src_qp: gidx,
                    ingress: NONE,
                    born: Ps::ZERO,
                };
                pkt_keys.frame_len = 0;
                let (port, lag_hash, affinity) = match kind {
                    IfaceKind::Nic(n) => (h.nics[n as usize].port, 0, 0),
                    IfaceKind::Bond(b) => {
                        let bond = &mut self.bonds[b as usize].2;
                        let hash = bond.hash(&pkt_keys.flow_keys());
                        // RESET->INIT takes the round-robin affinity; with a
                        // non-zero flow label the core then asks the bond for
                        // the slave of a fake frame of this flow (Linux hash
                        // over all slaves, roce-facts §4.3/4.4) at INIT->RTR.
                        let ctx = contexts.entry(b).or_insert_with(|| bond.new_context());
                        let mut aff = bond.next_affinity(ctx);
                        if wc.flow_label != 0 {
                            aff = bond.linux_slave_all(&pkt_keys.flow_keys());
                        }
                        let s = bond.slave_for(hash, aff);
                        (bond.slaves[s].port, hash, aff)
                    }
                };
                // Wire bytes beyond the IB packet, for the QP's rate limiter:
                // Ethernet (+ tag), IPv4 + UDP or the GRH, FCS, preamble, IFG.
                let mut qcfg = cfg;
                let l3_len = match l3 {
                    L3::V2 { .. } => 20 + 8,
                    L3::V1 { .. } => 40,
                    L3::Arp { .. } => unreachable!("QPs send RoCE"),
                };
                qcfg.wire_overhead = 14 + if vlan.is_some() { 4 } else { 0 } + l3_len + 4 + 20;
                let mut qp = crate::transport::RcQp::new(lqpn, rqpn, sqp, rqp, qcfg);
                if role == Role::Client {
                    qp.set_rate_limit(wc.rate_limit.map(|r| r.0));
                }
                self.qps.push(QpSlot {
                    qp,
                    host: ep.host,
                    iface: ep.iface,
                    wl: wl_id,
                    idx: q as u32,
                    role,
                    port,
                    prio,
                    eth,
                    vlan,
                    l3,
                    sport,
                    lag_hash,
                    affinity,
                    active: false,
                    wake_at: None,
                    timer_at: None,
                    drive_at: None,
                    first_data_port: None,
                    first_tx: None,
                    tx_bytes: 0,
                    tx_packets: 0,
                    tx_payload: 0,
                });
                match role {
                    Role::Client => clients.push(gidx),
                    Role::Server => servers.push(gidx),
                }
            }
        }
        self.wls.push(Wl {
            name: wname,
            w: workload,
            clients: clients.clone(),
        });
        // Start: servers first (receives posted), then clients at `start`.
        for (i, &q) in servers.iter().enumerate() {
            let wl = &mut self.wls[wl_id as usize].w;
            wl.drive_responder(i, &mut self.qps[q as usize].qp, Ps::ZERO);
        }
        if sc.sim.arp == crate::scenario::schema::ArpMode::Frames {
            // The instantaneous answers stand for router next hops only; the
            // QPs learn their peers' MACs from the ARP exchange.
            let router = |w: &World, ep: &Endpoint, dst: Ipv4Addr, mac: [u8; 6]| {
                w.route(ep.host, ep.iface, dst)
                    .ok()
                    .filter(|r| r.1 != dst)
                    .map(|_| mac)
            };
            let conn = Conn {
                client: (cl.host, cl.iface),
                server: (sv.host, sv.iface),
                client_ip: c_ip.addr,
                server_ip: s_ip.addr,
                client_dmac_router: router(self, &cl, s_ip.addr, c_dmac),
                server_dmac_router: router(self, &sv, c_ip.addr, s_dmac),
                client_dmac: None,
                server_dmac: None,
                clients: clients.clone(),
                servers: servers.clone(),
                started: false,
            };
            let id = self.conns.len() as u32;
            self.conns.push(conn);
            self.sched.at(wc.start.0, Event::ArpStart { conn: id });
        } else {
            for &q in &clients {
                self.qps[q as usize].drive_at = Some(wc.start.0);
                self.sched.at(wc.start.0, Event::Drive { qp: q });
            }
        }
        Ok(())
    }
}

/// A message must fit the QP: 2 GiB (`max_msg_sz`) and, at small path
/// MTUs, the PSNs one message may span.
fn check_message_size(len: u64, pmtu: u32, at: KeyPath) -> Result<(), ModelError> {
    let max = crate::transport::max_message_len(pmtu);
    if len <= max {
        return Ok(());
    }
    let e = ModelError::new(
        at,
        format!("a message of {len} bytes is too long: at most {max} bytes at RoCE MTU {pmtu}"),
    );
    Err(if max < crate::transport::MAX_MSG_LEN {
        e.hint("a message may span at most 2^21 packets; raise the MTU or send smaller messages")
    } else {
        e.hint("2 GiB is the largest RDMA message (max_msg_sz)")
    })
}

fn iface_path(sc: &Scenario, hi: usize, iface: &str) -> KeyPath {
    let h = &sc.hosts[hi];
    if let Some(b) = h.bonds.iter().position(|b| b.name == iface) {
        return p().key("host").index(hi).key("bond").index(b);
    }
    let n = h.nics.iter().position(|n| n.name == iface).unwrap_or(0);
    p().key("host").index(hi).key("nic").index(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host with two NICs in different subnets and no policy routing
    /// talks from eth1's address to a peer on eth0's subnet: the request
    /// leaves eth0, and arp_announce decides its sender IP.
    #[test]
    fn arp_announce_picks_the_sender_address_as_arp_solicit_does() {
        let text = r#"
[[host]]
name = "a"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.1/24"
  [[host.nic]]
  name = "eth1"
  ip = "10.0.1.1/24"
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
a = "a.eth1"
b = "sw.p2"
rate = "25Gbps"
[[link]]
a = "t.eth0"
b = "sw.p3"
rate = "25Gbps"
[[workload]]
tool = "ib_write_bw"
client = "a.eth0"
server = "t"
"#;
        let sender = |announce: u8, src_iface: u32| {
            let sets = [format!("host.a.arp_announce={announce}")];
            let l = crate::scenario::load_str(Path::new("t.toml"), text.into(), &sets).unwrap();
            let w = World::build(&l.scenario, "t", &BuildOptions::default()).unwrap();
            let (egress, hop, ip) = w.route(0, src_iface, Ipv4Addr::new(10, 0, 0, 9)).unwrap();
            assert_eq!((egress, hop), (0, Ipv4Addr::new(10, 0, 0, 9)));
            ip
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

    const PAIR: &str = r#"
[[host]]
name = "a"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.1/24"
[[host]]
name = "b"
  [[host.nic]]
  name = "eth0"
  ip = "10.0.0.2/24"
[[link]]
a = "a.eth0"
b = "b.eth0"
rate = "25Gbps"
[[workload]]
tool = "ib_write_bw"
client = "a"
server = "b"
"#;

    fn build_err(sets: &[&str]) -> String {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        match crate::scenario::load_str(Path::new("t.toml"), PAIR.into(), &sets) {
            Err(d) => d.to_string(),
            Ok(l) => match World::build(&l.scenario, "t", &BuildOptions::default()) {
                Err(e) => l.locate(&e).to_string(),
                Ok(_) => String::new(),
            },
        }
    }

    #[test]
    fn a_bridged_workload_stays_in_one_vlan() {
        let e = build_err(&["host.a.nic.eth0.vlan=100", "host.b.nic.eth0.vlan=200"]);
        assert!(
            e.contains("key `workload[0].server`") && e.contains("on VLAN 100"),
            "{e}"
        );
        let e = build_err(&["host.a.nic.eth0.vlan=100"]);
        assert!(e.contains("b is untagged"), "{e}");
        assert_eq!(
            build_err(&["host.a.nic.eth0.vlan=7", "host.b.nic.eth0.vlan=7"]),
            ""
        );
    }

    #[test]
    fn macs_are_unicast_and_unique() {
        assert_eq!(build_err(&[]), "");
        let e = build_err(&[
            "host.b.nic.eth0.mac=02:00:00:00:00:07",
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
}
