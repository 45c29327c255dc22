//! `[[traffic]]`: flows from size distributions and arrival processes, or
//! from the reference's flow file, lowered into one `[[workload]]` each.
//!
//! ```text
//!  [[traffic]] pattern, cdf | size, load + duration | once, class
//!  [[traffic]] flows = "ws30_10ms.txt"            generate::traffic, rocesim_ns3::flows::to_specs
//!        │                                                 │
//!        ▼                                                 ▼
//!  FlowSpec (host indices = [[host]] order) ──▶ [[workload]] tool = "messages", one QP,
//!                                               one message of the flow's size at its start
//!                                          ──▶ Scenario::flows (ideal FCT on the fabric)
//! ```
//!
//! A flow is one RC QP pair carrying one message, as the reference opens
//! one QP per flow. Its ideal completion time is
//! [`rocesim_model::topology::Routes::framed_ideal_fct`] on the scenario's own
//! graph ([`graph`]): every frame of the message at the path's bottleneck
//! rate plus the unloaded round trip with rocesim's framing.

use std::collections::HashMap;
use std::path::Path;

use crate::diagnostic::{KeyPath, ModelError};
use crate::generate::traffic::{self as generate, Arrivals, Hosts, Pattern, Sizes};
use crate::schema::{
    Bytes, Dur, MessageCfg, Scenario, Tool, TopologyKind, VerbCfg, WorkloadCfg, resolve_path,
};
use rocesim_model::flow::{self as traffic, FlowSpec, TrafficClass, Verb};
use rocesim_model::packet::Billing;
use rocesim_model::time::{Ps, Rate};
use rocesim_model::topology::{
    Addressing, Framing, HostId, Link, LinkId, Node, NodeId, NodeKind, PerHop, Port, Routes,
    SearchOrder, Topology, ecmp_routes_searching,
};

// The schema holds `[[traffic]]`; its types keep their paths here too.
pub use crate::schema::{FlowVerbCfg, PatternCfg, TrafficCfg};
pub use rocesim_model::flow::FlowRef;

/// Lowers every `[[traffic]]` into workloads and `sc.flows`.
pub fn lower(sc: &mut Scenario, base: &Path) -> Result<(), ModelError> {
    if sc.traffic.is_empty() {
        return Ok(());
    }
    let mut flows = Vec::new();
    for (ti, t) in sc.traffic.iter().enumerate() {
        let at = KeyPath::root().key("traffic").index(ti);
        flows.extend(flows_of(sc, t, ti, &at, base)?);
    }
    traffic::number_ports(&mut flows);
    let flows = traffic::merge(flows);
    let (topo, routes) = graph(sc)
        .map_err(|m| ModelError::new(KeyPath::root().key("traffic"), format!("the fabric: {m}")))?;
    // Each sending host's framing, made at its first flow: a fabric run
    // has tens of thousands of flows from a few hundred hosts.
    let mut framings: Vec<Option<Framing>> = vec![None; sc.hosts.len()];
    let nics = NicPick::new(sc, &topo, &routes)?;
    for f in flows {
        let host = &sc.hosts[f.src.0 as usize];
        let framing = match framings[f.src.0 as usize] {
            Some(framing) => framing,
            None => {
                let (mtu, vlan) = host
                    .nics
                    .first()
                    .map_or((1500, false), |n| (n.mtu, n.vlan.is_some()));
                let pmtu = rocesim_model::net::roce_mtu(mtu).unwrap_or(1024);
                // The host's NIC profile, checked at its keys: its payload
                // per packet (0: the path MTU) and what it bills its frames
                // at make the ideal time (the hpcc profile's 1000-byte
                // packets at 1048 bytes).
                let profile = crate::profile::host_profile(host, f.src.0 as usize)?;
                let framing = Framing {
                    pmtu: match profile.segment_bytes {
                        0 => pmtu,
                        s => s.min(pmtu),
                    },
                    vlan,
                    // The reference's ideal leaves its HPCC telemetry out
                    // ("the minimum bytes required (with header but no
                    // INT)", third.cc `qp_finish`): so does ours.
                    billing: match profile.billing {
                        Billing::HPCC_INT | Billing::HPCC_PINT => Billing::HPCC,
                        b => b,
                    },
                };
                framings[f.src.0 as usize] = Some(framing);
                framing
            }
        };
        let ideal = routes
            .framed_ideal_fct(&topo, f.src, f.dst, f.size_bytes, framing)
            .ok_or_else(|| {
                ModelError::new(
                    KeyPath::root().key("traffic"),
                    format!(
                        "flow {}: no path from `{}` to `{}`",
                        f.id, host.name, sc.hosts[f.dst.0 as usize].name
                    ),
                )
            })?;
        let payload = u64::from(framing.pmtu);
        let path_rtt = routes.base_rtt(&topo, f.src, f.dst, &PerHop::Reference { payload });
        let path_bdp = path_rtt
            .zip(routes.bottleneck_rate(&topo, f.src, f.dst))
            .map_or(0, |(rtt, bw)| {
                (u128::from(rtt.as_ns()) * u128::from(bw.bps()) / 1_000_000_000 / 8) as u64
            });
        let path_rtt = path_rtt.unwrap_or(Ps::ZERO);
        let workload = sc.workloads.len() as u32;
        let mut wc = workload_of(sc, &f);
        let (sip, dip) = (nics.ip(f.src), nics.ip(f.dst));
        let (sport, dport) = (u32::from(f.sport), u32::from(f.dport));
        wc.client_lag_port = nics.port(f.src, f.dst, [sip, dip, sport | dport << 16]);
        wc.server_lag_port = nics.port(f.dst, f.src, [dip, sip, dport | sport << 16]);
        sc.workloads.push(wc);
        sc.flows.push(FlowRef {
            spec: f,
            workload,
            ideal,
            path_bdp,
            path_rtt,
        });
    }
    Ok(())
}

impl Scenario {
    /// Gives back what lowering made per flow, its `[[workload]]` and its
    /// [`FlowRef`], once the world is built: the world has its own of
    /// both, and these were 35 MB of an FbHdp run's 100,000 flows. The
    /// flows' workloads are the last ones ([`lower`] appends them).
    pub fn release_flows(&mut self) {
        if let Some(first) = self.flows.iter().map(|f| f.workload).min() {
            self.workloads.truncate(first as usize);
            self.workloads.shrink_to_fit();
        }
        self.flows = Vec::new();
    }
}

fn flows_of(
    sc: &Scenario,
    t: &TrafficCfg,
    ti: usize,
    at: &KeyPath,
    base: &Path,
) -> Result<Vec<FlowSpec>, ModelError> {
    let hosts = sc.hosts.len() as u32;
    let host = |name: &str, key: &str| {
        sc.hosts
            .iter()
            .position(|h| h.name == name)
            .map(|i| HostId(i as u32))
            .ok_or_else(|| {
                ModelError::new(at.key(key), format!("no host named `{name}`"))
                    .did_you_mean(name, sc.hosts.iter().map(|h| h.name.as_str()))
            })
    };
    if let Some(file) = &t.flows {
        if t.pattern.is_some() || t.cdf.is_some() || t.load.is_some() {
            return Err(ModelError::new(
                at.key("flows"),
                "a flow file gives every flow; drop `pattern`, `cdf` and `load`",
            ));
        }
        let path = resolve_path(base, file);
        let read = rocesim_ns3::flows::read(&path)
            .map_err(|e| ModelError::new(at.key("flows"), e.to_string()))?;
        // Node n is the host `n<n>` (an imported topology), else host index n.
        // One map, not a search of the hosts per flow: a flow file has
        // tens of thousands of lines.
        let mut named = HashMap::new();
        for (i, h) in sc.hosts.iter().enumerate() {
            if let Some(n) = h.name.strip_prefix('n').and_then(|d| d.parse::<u32>().ok()) {
                if h.name == format!("n{n}") {
                    named.entry(n).or_insert(HostId(i as u32));
                }
            }
        }
        let mut out = Vec::new();
        for f in &read.flows {
            let node = |n: u32, what: &str| {
                named
                    .get(&n)
                    .copied()
                    .or((n < hosts).then_some(HostId(n)))
                    .ok_or_else(|| {
                        ModelError::new(
                            at.key("flows"),
                            format!(
                                "{}:{}: {what} node {n} is not a host of the scenario ({hosts} hosts)",
                                path.display(),
                                f.line
                            ),
                        )
                    })
            };
            out.push(FlowSpec {
                id: 0,
                src: node(f.src, "src")?,
                dst: node(f.dst, "dst")?,
                size_bytes: f.size,
                start: f.start,
                priority: f.priority,
                dport: f.dport,
                sport: 0,
                verb: verb_of(t.verb),
            });
        }
        return Ok(out);
    }
    let pattern = t.pattern.ok_or_else(|| {
        ModelError::new(at.clone(), "a [[traffic]] needs `pattern` (or `flows`)")
            .hint("pattern = \"all-to-all\", \"permutation\", \"incast\" or \"one-to-many\"")
    })?;
    let many = || -> Result<Hosts, ModelError> {
        Ok(match (&t.hosts, t.count) {
            (Some(list), _) => Hosts::List(
                list.iter()
                    .map(|n| host(n, "hosts"))
                    .collect::<Result<_, _>>()?,
            ),
            (None, Some(n)) => Hosts::Random(n),
            (None, None) => Hosts::All,
        })
    };
    let one = |key: &str, v: &Option<String>| {
        let name = v.as_deref().ok_or_else(|| {
            ModelError::new(
                at.clone(),
                format!("this pattern needs `{key}` (a host name)"),
            )
        })?;
        host(name, key)
    };
    let pattern = match pattern {
        PatternCfg::AllToAll => Pattern::AllToAll,
        PatternCfg::Permutation => Pattern::Permutation,
        PatternCfg::Incast => Pattern::Incast {
            receiver: one("receiver", &t.receiver)?,
            senders: many()?,
        },
        PatternCfg::OneToMany => Pattern::OneToMany {
            sender: one("sender", &t.sender)?,
            receivers: many()?,
        },
    };
    let sizes = match (&t.cdf, t.size) {
        (Some(_), Some(_)) => {
            return Err(ModelError::new(
                at.key("size"),
                "give `cdf` or `size`, not both",
            ));
        }
        (Some(c), None) => {
            let path = if c.contains('/') || c.contains('.') {
                resolve_path(base, c)
            } else {
                base.join("cdf").join(format!("{c}.txt"))
            };
            Sizes::Cdf(
                rocesim_ns3::cdf::read(&path)
                    .map_err(|e| ModelError::new(at.key("cdf"), e.to_string()))?,
            )
        }
        (None, Some(s)) => Sizes::Fixed(s.0),
        (None, None) => {
            return Err(ModelError::new(
                at.clone(),
                "a generated [[traffic]] needs `cdf` or `size`",
            )
            .hint("cdf = \"WebSearch\" or size = \"1MB\""));
        }
    };
    let arrivals = match (t.load, t.duration) {
        (Some(load), Some(d)) => Arrivals::Poisson {
            load,
            host_rate: match t.rate {
                Some(r) => r.0,
                None => host_rate(sc, first_sender(&pattern)).ok_or_else(|| {
                    ModelError::new(at.key("rate"), "no host link to take the rate from")
                })?,
            },
            start: t.start.0,
            duration: d.0,
            like_traffic_gen: false,
        },
        (Some(_), None) => {
            return Err(ModelError::new(
                at.key("load"),
                "`load` needs an arrival window `duration`",
            ));
        }
        (None, _) => Arrivals::Once { at: t.start.0 },
    };
    let w = generate::Workload {
        name: t.name.clone().unwrap_or_else(|| format!("traffic{ti}")),
        pattern,
        arrivals,
        sizes,
        class: TrafficClass {
            priority: t.priority,
            dport: t.dport,
            verb: verb_of(t.verb),
        },
    };
    generate::generate(&w, hosts, sc.seed).map_err(|e| ModelError::new(at.clone(), e.0))
}

fn first_sender(p: &Pattern) -> HostId {
    match p {
        Pattern::OneToMany { sender, .. } => *sender,
        Pattern::Incast { receiver, .. } if receiver.0 == 0 => HostId(1),
        _ => HostId(0),
    }
}

fn verb_of(v: FlowVerbCfg) -> Verb {
    match v {
        FlowVerbCfg::Write => Verb::Write,
        FlowVerbCfg::Send => Verb::Send,
        FlowVerbCfg::Read => Verb::Read,
    }
}

/// The rate of the link cabled to host `h`'s first NIC.
fn host_rate(sc: &Scenario, h: HostId) -> Option<Rate> {
    let name = &sc.hosts.get(h.0 as usize)?.name;
    let prefix = format!("{name}.");
    sc.links
        .iter()
        .find(|l| l.a.starts_with(&prefix) || l.b.starts_with(&prefix))
        .map(|l| l.rate.0)
}

/// Which NIC a flow's QPs leave by on a host cabled to several switches,
/// where the host numbers its flows' ports as the HPCC reference does
/// (`ecmp_ports = "flow"`) and holds its address on a bond whose QPs keep
/// a port each (`lag = "queue-affinity"`, as generated fabrics make it).
///
/// The reference (`RdmaHw::GetNicIdxOfQp`, `GetNicIdxOfRxQp`) takes, of
/// the host's NICs on a shortest path to the peer, in the order its route
/// calculation found them, the one ns-3's `Hash32` (MurmurHash3, seed
/// 0x8BADF00D) of the QP's (sip, dip, sport | dport << 16) picks:
///
/// ```text
///   third.cc CalculateRoute(peer): breadth-first from the peer through
///   switches, each node's neighbours by address; a switch `now` one
///   hop nearer than the host is pushed onto nextHop[host][peer]
///       v = [ NIC to tor321, NIC to tor320 ]      (the order pushed)
///       nic = v[ murmur3(0x8BADF00D; sip, dip, ports) % v.len() ]
/// ```
///
/// That list is the host's next hops toward the peer in the scenario's
/// routes ([`graph`]), searched in the reference's order
/// ([`SearchOrder::ByAddress`]) on its topologies.
struct NicPick<'a> {
    topo: &'a Topology,
    routes: &'a Routes,
    /// Per host: its address, and its bond's ports (1-based) with the link
    /// each is cabled by, when its QPs are placed this way.
    hosts: Vec<(u32, Option<LagPorts>)>,
}

impl<'a> NicPick<'a> {
    fn new(
        sc: &Scenario,
        topo: &'a Topology,
        routes: &'a Routes,
    ) -> Result<NicPick<'a>, ModelError> {
        use crate::schema::{BondMode, EcmpPorts, LagSelect};
        let mut hosts = Vec::with_capacity(sc.hosts.len());
        for (i, h) in sc.hosts.iter().enumerate() {
            let nic_ip = h.nics.iter().find_map(|n| n.ip);
            let bond = h.bonds.iter().find(|b| b.ip.is_some());
            let ip = nic_ip
                .or(bond.and_then(|b| b.ip))
                .map_or(0, |n| u32::from(n.addr));
            let placed = match bond {
                Some(b)
                    if nic_ip.is_none()
                        && b.slaves.len() > 1
                        && b.mode != BondMode::ActiveBackup
                        && b.lag == LagSelect::QueueAffinity
                        && crate::profile::host_profile(h, i)?.ecmp_ports == EcmpPorts::Flow =>
                {
                    let mut ports = Vec::new();
                    for (k, slave) in b.slaves.iter().enumerate() {
                        let end = format!("{}.{slave}", h.name);
                        // The graph's links are the scenario's, in order.
                        let link = sc.links.iter().position(|l| l.a == end || l.b == end);
                        if let (Some(link), Ok(port)) = (link, u8::try_from(k + 1)) {
                            ports.push((LinkId(link as u32), port));
                        }
                    }
                    Some(ports)
                }
                _ => None,
            };
            hosts.push((ip, placed));
        }
        Ok(NicPick {
            topo,
            routes,
            hosts,
        })
    }

    /// A host's address as the reference hashes it (a host-order word).
    fn ip(&self, h: HostId) -> u32 {
        self.hosts[h.0 as usize].0
    }

    /// The LAG port (1-based) of `host`'s QP toward `peer` whose key is
    /// `words` (sip, dip, sport | dport << 16), or `None` where the host's
    /// QPs are not placed this way.
    fn port(&self, host: HostId, peer: HostId, words: [u32; 3]) -> Option<u8> {
        let ports = self.hosts[host.0 as usize].1.as_ref()?;
        let me = self.topo.host_node(host);
        // Two links to one switch are one neighbour there, by the later
        // (the reference keeps one interface per neighbour); the search
        // finds them one after the other.
        let mut v: Vec<(NodeId, u8)> = Vec::new();
        for &l in self.routes.next_hops(me, peer) {
            let Some(&(_, port)) = ports.iter().find(|&&(pl, _)| pl == l) else {
                continue;
            };
            let sw = self.topo.peer(l, me);
            match v.last_mut() {
                Some(last) if last.0 == sw => last.1 = port,
                _ => v.push((sw, port)),
            }
        }
        let h = roce_codec::hash::murmur3_32(&words, &[], NS3_HASH_SEED);
        v.get(h as usize % v.len().max(1)).map(|&(_, port)| port)
    }
}

/// A bond's ports: the link each is cabled by, and its number (1-based).
type LagPorts = Vec<(LinkId, u8)>;

/// ns-3's `Hash32` seed (`hash-murmur3.h`: `SEED = 0x8BADF00D`).
const NS3_HASH_SEED: u32 = 0x8BAD_F00D;

/// The workload that carries flow `f`: one QP, one message.
fn workload_of(sc: &Scenario, f: &FlowSpec) -> WorkloadCfg {
    let verb = match f.verb {
        Verb::Write => VerbCfg::Write,
        Verb::Send => VerbCfg::Send,
        Verb::Read => VerbCfg::Read,
    };
    let mut w: WorkloadCfg =
        toml::from_str("tool = \"messages\"\nclient = \"-\"\nserver = \"-\"\ntx_depth = 1\n")
            .expect("a valid workload table");
    w.tool = Tool::Messages;
    w.name = Some(format!("flow{}", f.id));
    w.client = sc.hosts[f.src.0 as usize].name.clone();
    w.server = sc.hosts[f.dst.0 as usize].name.clone();
    // DSCP = priority x 8, as the shipped scenarios map priority 3 to TC 104.
    w.tc = f.priority << 5;
    w.start = Dur(f.start);
    w.messages = vec![MessageCfg {
        verb,
        size: Bytes(f.size_bytes),
        qp: 0,
        at: None,
    }];
    w
}

/// The scenario's hosts, switches and links as a graph (hosts first, in
/// `[[host]]` order, so host index i is `sc.hosts[i]`), and its ECMP
/// routes: what ideal completion times are computed on.
pub fn graph(sc: &Scenario) -> Result<(Topology, Routes), String> {
    let mut nodes: Vec<Node> = sc
        .hosts
        .iter()
        .map(|h| Node {
            name: h.name.clone(),
            kind: NodeKind::Host,
            tier: 0,
        })
        .collect();
    nodes.extend(sc.switches.iter().map(|s| Node {
        name: s.name.clone(),
        kind: NodeKind::Switch,
        tier: 1,
    }));
    let index: std::collections::HashMap<&str, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    let mut next_port = vec![0u16; nodes.len()];
    let mut links = Vec::new();
    for l in &sc.links {
        let end = |s: &str| {
            let node = s.split('.').next().unwrap_or(s);
            index
                .get(node)
                .copied()
                .ok_or_else(|| format!("no node `{node}` for link end `{s}`"))
        };
        let (a, b) = (end(&l.a)?, end(&l.b)?);
        let mut port = |n: usize| {
            next_port[n] += 1;
            if nodes[n].kind == NodeKind::Host {
                Port::Nic(next_port[n] - 1)
            } else {
                Port::Down(next_port[n])
            }
        };
        let (a_port, b_port) = (port(a), port(b));
        links.push(Link {
            a: NodeId(a as u32),
            a_port,
            b: NodeId(b as u32),
            b_port,
            rate: l.rate.0,
            delay: l.propagation(),
            loss: l.loss,
        });
    }
    let topo = Topology::new(nodes, links, Addressing::Sequential).map_err(|e| e.0)?;
    // The reference's topology is searched as the reference does: its
    // switches are lowered in the file's order, so by descending index
    // is by descending node id (`topology::routes`).
    let order = match &sc.topology {
        Some(t) if t.kind == TopologyKind::Hpcc => SearchOrder::ByAddress,
        _ => SearchOrder::Links,
    };
    let routes = ecmp_routes_searching(&topo, order, |_| true).map_err(|e| e.0)?;
    Ok((topo, routes))
}
