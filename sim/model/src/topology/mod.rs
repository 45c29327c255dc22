//! Fabric graphs: hosts, switches and the links between them, generated
//! (fat-tree, leaf-spine) or imported from the reference's topology file,
//! with ECMP routes and per-pair figures (base RTT, bottleneck rate).
//!
//! Nothing here simulates: a [`Topology`] is a plain graph, neutral to the
//! simulator's world, and [`ecmp_routes`] is the routing a fabric's
//! switches would be programmed with.
//!
//! # A fat-tree
//!
//! A k-ary fat-tree (Al-Fares et al., SIGCOMM 2008) builds a big
//! non-blocking fabric from identical k-port switches in three tiers. It
//! has k *pods*; a pod is k/2 *edge* (top-of-rack) switches and k/2
//! *aggregation* switches, every edge wired to every aggregation switch of
//! its pod. Above the pods sit (k/2)² *core* switches in k/2 groups; the
//! core switches of group j connect to aggregation switch j of every pod.
//! Each edge switch serves k/2 hosts with its other k/2 ports, so k³/4
//! hosts in all, and the fabric has full bisection bandwidth: between any
//! two tiers there is as much capacity up as down, so a permutation of
//! host pairs could run at line rate if flows were spread perfectly
//! (ECMP's hashing spreads them randomly, which is what a simulation of
//! such a fabric measures).
//!
//! ```text
//!  k = 4: 4 pods, 16 hosts, 20 switches
//!
//!     core0  core1      core2  core3      (k/2)² cores in k/2 groups:
//!       │      │          │      │        group 0 (core0, core1): agg 0 of every pod
//!       └──┬───┘          └──┬───┘        group 1 (core2, core3): agg 1 of every pod
//!          │  (and agg0 of   │
//!          │   pods 1..3)    │
//!   ┌──────┼─────────────────┼──────┐ pod 0 (pods 1..3 alike: agg2, agg3, edge2, ...)
//!   │    agg0              agg1     │     k/2 aggregation switches
//!   │      │  ╲          ╱  │       │
//!   │      │     ╲    ╱     │       │     every edge to every agg of its pod
//!   │      │     ╱    ╲     │       │
//!   │      │  ╱          ╲  │       │
//!   │    edge0             edge1    │     k/2 edge (ToR) switches
//!   │    ╱   ╲             ╱   ╲    │
//!   │ host0 host1      host2 host3  │     k/2 hosts per edge (more: oversubscribed)
//!   └───────────────────────────────┘
//! ```
//!
//! Between two hosts on one edge switch a packet crosses 2 links; within
//! a pod 4 (up to any of the k/2 aggregation switches: ECMP); between pods
//! 6 (up through any aggregation switch and any core of its group). Giving
//! each edge switch more hosts than uplinks *oversubscribes* it: at
//! `hosts_per_edge = 2 x k/2` and equal link rates, the hosts of a rack
//! can together offer twice what the rack can send up. Faster uplinks
//! compensate: the reference's `fat.txt` is a k = 8 fat-tree cut to 5 pods
//! with 16 hosts per edge switch at 100G and 4 uplinks at 400G (1:1).
//!
//! A leaf-spine (`LeafSpine`, in the scenario crate) is the two-tier version: every leaf
//! (ToR) wired to every spine, optionally with several parallel links per
//! leaf-spine pair; two hosts on different leaves are 4 links apart, over
//! any spine.
//!
//! ```text
//!      spine0        spine1             every leaf to every spine
//!      │ │ ╲ ╲      ╱ ╱ │ │             (here 2 parallel links per pair: leaf0.u1, u2 to spine0,
//!      │ │   ╲ ╲  ╱ ╱   │ │              leaf0.u3, u4 to spine1)
//!      │ │    ╱ ╱╲ ╲    │ │
//!     leaf0          leaf1
//!     ╱ │ ╲          ╱ │ ╲
//!   host0..2       host3..5
//! ```
//!
//! # Names, ports and addresses
//!
//! Nodes are numbered hosts first, then switches tier by tier (for an
//! imported topology: the reference's node ids, so node n is its node n).
//! Generated names: hosts `host0..` (numbered across the whole fabric),
//! `edge0..`/`agg0..`/`core0..` or `leaf0..`/`spine0..` (each numbered
//! across the fabric). Imported names carry the reference's id: hosts
//! `n<id>`, switches `sw<id>`.
//!
//! Ports ([`Port`]) are named from 1 on switches and from 0 on hosts, as
//! front panels and Linux do: a host's NICs `eth0..`; a switch's ports
//! toward a lower tier `p1..`, toward a higher tier `u1..`, so the port
//! `leaf3.p2` leads to leaf3's second host and `leaf3.u1` to its first
//! uplink. In generated fabrics the order is fixed: edge/leaf `p<i+1>` to
//! its i-th host; edge `u<j+1>` to aggregation switch j of its pod; agg
//! `p<i+1>` to edge i of its pod and `u<i+1>` to core i of its group; core
//! `p<pod+1>`; leaf `u<s x U + u + 1>` and spine `p<l x U + u + 1>` for
//! the u-th of U parallel links between leaf l and spine s. Imported
//! switches number every port `p<n>` in the order of the file's links
//! (the reference's interface index, from 1); imported hosts `eth<n-1>`.
//!
//! Host addresses ([`Topology::host_ip`]): generated fabrics give host h
//! the address 10.0.0.1 + h << 8 as a 32-bit number (host0 10.0.0.1,
//! host1 10.0.1.1, host300 10.1.44.1): a /24 per host, its gateway at .254
//! on the edge switch, as the reference lays out its own; imported ones
//! the reference's rule, node n at `0x0b000001 + (n / 256) << 16 + (n %
//! 256) << 8` (node 2 is 11.0.2.1), so addresses match its FCT files.

use core::fmt;
use core::net::Ipv4Addr;

use crate::time::{Ps, Rate};

mod routes;

pub use routes::{
    Framing, PerHop, Routes, SearchOrder, TableRoute, ecmp_routes, ecmp_routes_over,
    ecmp_routes_searching, route_table,
};

/// A node's index in [`Topology::nodes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// A link's index in [`Topology::links`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A host's index among the hosts (0..[`Topology::host_count`]), the
/// numbering flows use. For generated fabrics it equals the node id; for
/// an imported one it does where the file lists hosts first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Host,
    Switch,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub kind: NodeKind,
    /// 0 for hosts, 1 for edge/leaf switches, 2 aggregation/spine, 3
    /// core; for an imported topology a switch's hop distance from the
    /// nearest host (`u8::MAX` if no host reaches it).
    pub tier: u8,
}

/// A port name's shape (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Port {
    /// `eth<n>`, a host NIC.
    Nic(u16),
    /// `p<n>`, a switch port toward a lower tier (or any imported port).
    Down(u16),
    /// `u<n>`, a switch port toward a higher tier.
    Up(u16),
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Port::Nic(n) => write!(f, "eth{n}"),
            Port::Down(n) => write!(f, "p{n}"),
            Port::Up(n) => write!(f, "u{n}"),
        }
    }
}

/// A full-duplex link: the same rate and delay both ways.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    pub a: NodeId,
    pub a_port: Port,
    pub b: NodeId,
    pub b_port: Port,
    pub rate: Rate,
    /// One-way propagation delay.
    pub delay: Ps,
    /// Probability that a frame is lost, each direction.
    pub loss: f64,
}

/// How hosts get their IPv4 addresses (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// Host h has 10.0.0.1 + h << 8 (a /24 per host).
    Sequential,
    /// The reference's rule on the node id: node n has 11.0.0.1 +
    /// (n / 256) << 16 + (n % 256) << 8.
    Hpcc,
}

/// A graph that makes no sense (from [`Topology::new`] or a generator's
/// parameters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TopologyError(pub String);

/// Hosts, switches and links, with each node's links indexed.
#[derive(Debug, Clone)]
pub struct Topology {
    nodes: Vec<Node>,
    links: Vec<Link>,
    addressing: Addressing,
    /// Host index -> node.
    hosts: Vec<NodeId>,
    /// Node -> host index, `u32::MAX` for a switch.
    host_of: Vec<u32>,
    /// Node n's links are `adj[adj_off[n]..adj_off[n + 1]]`, in link order.
    adj_off: Vec<u32>,
    adj: Vec<LinkId>,
}

impl Topology {
    /// Checks the graph: link ends exist and differ, hosts use `eth`
    /// ports and switches `p`/`u` ports, no port is used twice, names are
    /// unique and not empty.
    pub fn new(
        nodes: Vec<Node>,
        links: Vec<Link>,
        addressing: Addressing,
    ) -> Result<Topology, TopologyError> {
        let err = |m: String| Err(TopologyError(m));
        if nodes.len() >= u32::MAX as usize || links.len() >= u32::MAX as usize {
            return err("too many nodes or links for 32-bit ids".into());
        }
        let mut names = std::collections::HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            if n.name.is_empty() {
                return err(format!("node {i} has no name"));
            }
            if let Some(j) = names.insert(n.name.as_str(), i) {
                return err(format!("nodes {j} and {i} are both named `{}`", n.name));
            }
        }
        let mut ports = std::collections::HashMap::with_capacity(2 * links.len());
        for (i, l) in links.iter().enumerate() {
            for (end, port) in [(l.a, l.a_port), (l.b, l.b_port)] {
                let Some(node) = nodes.get(end.0 as usize) else {
                    return err(format!("link {i}: node {} does not exist", end.0));
                };
                let host = node.kind == NodeKind::Host;
                if host != matches!(port, Port::Nic(_)) {
                    return err(format!(
                        "link {i}: port {port} on {}: hosts have eth ports, switches p and u ports",
                        node.name
                    ));
                }
                if let Some(j) = ports.insert((end, port), i) {
                    return err(format!("links {j} and {i} both use {}.{port}", node.name));
                }
            }
            if l.a == l.b {
                return err(format!(
                    "link {i} connects {} to itself",
                    nodes[l.a.0 as usize].name
                ));
            }
            if l.rate.bps() == 0 {
                return err(format!("link {i} has rate 0"));
            }
        }
        let mut hosts = Vec::new();
        let mut host_of = vec![u32::MAX; nodes.len()];
        for (i, n) in nodes.iter().enumerate() {
            if n.kind == NodeKind::Host {
                host_of[i] = hosts.len() as u32;
                hosts.push(NodeId(i as u32));
            }
        }
        // Counting sort of link ends by node keeps each node's links in
        // link order.
        let mut adj_off = vec![0u32; nodes.len() + 1];
        for l in &links {
            adj_off[l.a.0 as usize + 1] += 1;
            adj_off[l.b.0 as usize + 1] += 1;
        }
        for i in 0..nodes.len() {
            adj_off[i + 1] += adj_off[i];
        }
        let mut fill = adj_off.clone();
        let mut adj = vec![LinkId(0); 2 * links.len()];
        for (i, l) in links.iter().enumerate() {
            for end in [l.a, l.b] {
                let slot = &mut fill[end.0 as usize];
                adj[*slot as usize] = LinkId(i as u32);
                *slot += 1;
            }
        }
        Ok(Topology {
            nodes,
            links,
            addressing,
            hosts,
            host_of,
            adj_off,
            adj,
        })
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }
    pub fn links(&self) -> &[Link] {
        &self.links
    }
    /// Gives every link without a loss probability of its own `loss` (the
    /// reference's `ERROR_RATE_PER_LINK` beside its file's per-link rates).
    pub fn set_default_loss(&mut self, loss: f64) {
        for l in self.links.iter_mut().filter(|l| l.loss == 0.0) {
            l.loss = loss;
        }
    }

    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0 as usize]
    }
    pub fn addressing(&self) -> Addressing {
        self.addressing
    }
    /// The node of every host, in host order.
    pub fn hosts(&self) -> &[NodeId] {
        &self.hosts
    }
    pub fn host_count(&self) -> u32 {
        self.hosts.len() as u32
    }
    pub fn switch_count(&self) -> u32 {
        (self.nodes.len() - self.hosts.len()) as u32
    }
    pub fn host_node(&self, h: HostId) -> NodeId {
        self.hosts[h.0 as usize]
    }
    /// The host index of a node, None for a switch.
    pub fn host_of(&self, n: NodeId) -> Option<HostId> {
        let h = *self.host_of.get(n.0 as usize)?;
        (h != u32::MAX).then_some(HostId(h))
    }
    pub fn is_switch(&self, n: NodeId) -> bool {
        self.node(n).kind == NodeKind::Switch
    }
    /// Hosts cabled to more than one link (the reference's
    /// `ali_32host_10rack.txt` puts each on two ToRs).
    pub fn multi_homed_hosts(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.hosts()
            .iter()
            .copied()
            .filter(|&n| self.links_of(n).len() > 1)
    }
    /// A node's links, in link order.
    pub fn links_of(&self, n: NodeId) -> &[LinkId] {
        let i = n.0 as usize;
        &self.adj[self.adj_off[i] as usize..self.adj_off[i + 1] as usize]
    }
    /// The other end of `link` seen from `from`.
    pub fn peer(&self, link: LinkId, from: NodeId) -> NodeId {
        let l = self.link(link);
        if l.a == from { l.b } else { l.a }
    }
    /// `node.port` for `link`'s end at `node`, e.g. `leaf3.u1`.
    pub fn port_name(&self, link: LinkId, node: NodeId) -> String {
        let l = self.link(link);
        let port = if l.a == node { l.a_port } else { l.b_port };
        format!("{}.{port}", self.node(node).name)
    }
    /// A node by name.
    /// The port name of `link` at `node`, without the node's name.
    pub fn local_port_name(&self, link: LinkId, node: NodeId) -> String {
        let full = self.port_name(link, node);
        full.rsplit_once('.')
            .map_or(full.clone(), |(_, p)| p.to_string())
    }

    pub fn find(&self, name: &str) -> Option<NodeId> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| NodeId(i as u32))
    }
    /// A host's IPv4 address (see [`Addressing`]).
    pub fn host_ip(&self, h: HostId) -> Ipv4Addr {
        match self.addressing {
            Addressing::Sequential => Ipv4Addr::from(0x0a00_0001 + (h.0 << 8)),
            Addressing::Hpcc => hpcc_ip(self.host_node(h).0),
        }
    }
}

/// The reference's address of node `n` (`node_id_to_ip` in its third.cc).
pub fn hpcc_ip(n: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x0b00_0001 + ((n / 256) << 16) + ((n % 256) << 8))
}

/// Hops from the nearest host, walking through switches only: the tier
/// of each node of a graph that does not say its own.
pub fn hop_distance_from_hosts(nodes: &[Node], links: &[Link]) -> Vec<u8> {
    let mut adj = vec![Vec::new(); nodes.len()];
    for l in links {
        adj[l.a.0 as usize].push(l.b.0 as usize);
        adj[l.b.0 as usize].push(l.a.0 as usize);
    }
    let mut dist = vec![u8::MAX; nodes.len()];
    let mut queue = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        if n.kind == NodeKind::Host {
            dist[i] = 0;
            queue.push(i);
        }
    }
    let mut q = 0;
    while q < queue.len() {
        let now = queue[q];
        q += 1;
        for &next in &adj[now] {
            if dist[next] == u8::MAX && nodes[next].kind == NodeKind::Switch {
                dist[next] = dist[now].saturating_add(1).min(u8::MAX - 1);
                queue.push(next);
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_by_rule() {
        assert_eq!(hpcc_ip(2), Ipv4Addr::new(11, 0, 2, 1));
        assert_eq!(hpcc_ip(0x6a), Ipv4Addr::new(11, 0, 0x6a, 1));
        assert_eq!(hpcc_ip(300), Ipv4Addr::new(11, 1, 44, 1));
        assert_eq!(u32::from(hpcc_ip(0xbd)), 0x0b00_bd01);
    }

    #[test]
    fn refuses_broken_graphs() {
        let host = |name: &str| Node {
            name: name.into(),
            kind: NodeKind::Host,
            tier: 0,
        };
        let sw = Node {
            name: "s".into(),
            kind: NodeKind::Switch,
            tier: 1,
        };
        let link = |a, ap, b, bp| Link {
            a: NodeId(a),
            a_port: ap,
            b: NodeId(b),
            b_port: bp,
            rate: Rate::gbps(1),
            delay: Ps::ZERO,
            loss: 0.0,
        };
        let nodes = vec![host("h0"), host("h1"), sw];
        let ok = vec![
            link(0, Port::Nic(0), 2, Port::Down(1)),
            link(1, Port::Nic(0), 2, Port::Down(2)),
        ];
        let t = Topology::new(nodes.clone(), ok.clone(), Addressing::Sequential).unwrap();
        assert_eq!(t.port_name(LinkId(1), NodeId(2)), "s.p2");
        assert_eq!(t.host_ip(HostId(1)), Ipv4Addr::new(10, 0, 1, 1));
        let e = |links: Vec<Link>| {
            Topology::new(nodes.clone(), links, Addressing::Sequential)
                .unwrap_err()
                .0
        };
        let mut twice = ok.clone();
        twice[1].b_port = Port::Down(1);
        assert_eq!(e(twice), "links 0 and 1 both use s.p1");
        let mut wrong = ok.clone();
        wrong[0].a_port = Port::Up(1);
        assert_eq!(
            e(wrong),
            "link 0: port u1 on h0: hosts have eth ports, switches p and u ports"
        );
        let mut missing = ok;
        missing[0].b = NodeId(7);
        assert_eq!(e(missing), "link 0: node 7 does not exist");
    }
}
