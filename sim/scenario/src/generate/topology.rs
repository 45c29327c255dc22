//! Fabric generators: k-ary fat-trees and leaf-spines (see the module
//! docs of [`rocesim_model::topology`] for the shapes, names and port rules).

use rocesim_model::time::{Ps, Rate};
use rocesim_model::topology::{
    Addressing, Link, Node, NodeId, NodeKind, Port, Topology, TopologyError,
};

/// Rate and one-way delay of the links of one tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkSpec {
    pub rate: Rate,
    pub delay: Ps,
}

impl LinkSpec {
    pub fn new(rate: Rate, delay: Ps) -> LinkSpec {
        LinkSpec { rate, delay }
    }
}

/// A k-ary fat-tree, possibly with fewer pods or more hosts per edge
/// switch than the textbook one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FatTree {
    /// Switch radix: k/2 edge and k/2 aggregation switches per pod,
    /// (k/2)² cores. Even, at least 2.
    pub k: u32,
    /// How many pods are built (k in the textbook tree; fewer leave the
    /// cores with free ports, as the reference's `fat.txt` does).
    pub pods: u32,
    /// Hosts per edge switch (k/2 in the textbook tree).
    pub hosts_per_edge: u32,
    pub host_link: LinkSpec,
    pub edge_agg: LinkSpec,
    pub agg_core: LinkSpec,
}

impl FatTree {
    /// The textbook tree: k pods, k/2 hosts per edge switch.
    pub fn new(k: u32, host_link: LinkSpec, edge_agg: LinkSpec, agg_core: LinkSpec) -> FatTree {
        FatTree {
            k,
            pods: k,
            hosts_per_edge: k / 2,
            host_link,
            edge_agg,
            agg_core,
        }
    }

    /// Edge bandwidth oversubscription: what an edge switch's hosts can
    /// send over what its uplinks carry (1.0 is non-blocking).
    pub fn oversubscription(&self) -> f64 {
        let down = f64::from(self.hosts_per_edge) * self.host_link.rate.bps() as f64;
        let up = f64::from(self.k / 2) * self.edge_agg.rate.bps() as f64;
        down / up
    }

    pub fn host_count(&self) -> u32 {
        self.pods * self.k / 2 * self.hosts_per_edge
    }

    pub fn build(&self) -> Result<Topology, TopologyError> {
        let (k, pods, hpe) = (self.k, self.pods, self.hosts_per_edge);
        if k < 2 || k % 2 != 0 || k > 512 {
            return Err(TopologyError(format!(
                "fat-tree: k must be even, 2..=512, found {k}"
            )));
        }
        if pods == 0 || pods > k {
            return Err(TopologyError(format!(
                "fat-tree: pods must be 1..=k ({k}), found {pods}"
            )));
        }
        if hpe == 0 || hpe > u32::from(u16::MAX) {
            return Err(TopologyError(format!(
                "fat-tree: hosts_per_edge must be 1..=65535, found {hpe}"
            )));
        }
        let half = k / 2;
        let edges = pods * half;
        let hosts = edges * hpe;
        let mut b = Builder::default();
        let host0 = b.tier(hosts, "host", NodeKind::Host, 0);
        let edge0 = b.tier(edges, "edge", NodeKind::Switch, 1);
        let agg0 = b.tier(edges, "agg", NodeKind::Switch, 2);
        let core0 = b.tier(half * half, "core", NodeKind::Switch, 3);
        for h in 0..hosts {
            let (e, i) = (h / hpe, h % hpe);
            b.link(
                host0 + h,
                Port::Nic(0),
                edge0 + e,
                Port::Down(i as u16 + 1),
                self.host_link,
            );
        }
        for e in 0..edges {
            let pod = e / half;
            for j in 0..half {
                let agg = agg0 + pod * half + j;
                let down = Port::Down((e % half) as u16 + 1);
                b.link(edge0 + e, Port::Up(j as u16 + 1), agg, down, self.edge_agg);
            }
        }
        for a in 0..edges {
            let (pod, j) = (a / half, a % half);
            for i in 0..half {
                let core = core0 + j * half + i;
                let down = Port::Down(pod as u16 + 1);
                b.link(agg0 + a, Port::Up(i as u16 + 1), core, down, self.agg_core);
            }
        }
        b.finish()
    }
}

/// [`FatTree`] with every pod and `oversubscription` x k/2 hosts per edge
/// switch, host links `tiers[0]`, edge-aggregation `tiers[1]`,
/// aggregation-core `tiers[2]`.
pub fn fat_tree(
    k: u32,
    oversubscription: u32,
    tiers: [LinkSpec; 3],
) -> Result<Topology, TopologyError> {
    let mut t = FatTree::new(k, tiers[0], tiers[1], tiers[2]);
    t.hosts_per_edge = oversubscription.saturating_mul(k / 2);
    t.build()
}

/// Two tiers: every leaf wired to every spine by `uplinks` parallel links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeafSpine {
    pub leaves: u32,
    pub spines: u32,
    pub hosts_per_leaf: u32,
    /// Parallel links between each leaf-spine pair.
    pub uplinks: u32,
    pub host_link: LinkSpec,
    pub fabric_link: LinkSpec,
}

impl LeafSpine {
    pub fn build(&self) -> Result<Topology, TopologyError> {
        let (l, s, h, u) = (self.leaves, self.spines, self.hosts_per_leaf, self.uplinks);
        let bad = |what: &str, v: u32| {
            Err(TopologyError(format!(
                "leaf-spine: {what} must be 1..=65535, found {v}"
            )))
        };
        for (what, v) in [
            ("leaves", l),
            ("spines", s),
            ("hosts_per_leaf", h),
            ("uplinks", u),
        ] {
            if v == 0 || v > u32::from(u16::MAX) {
                return bad(what, v);
            }
        }
        if u64::from(s) * u64::from(u) > u64::from(u16::MAX) {
            return bad("spines x uplinks", s.saturating_mul(u));
        }
        if u64::from(l) * u64::from(u) > u64::from(u16::MAX) {
            return bad("leaves x uplinks", l.saturating_mul(u));
        }
        let mut b = Builder::default();
        let host0 = b.tier(l * h, "host", NodeKind::Host, 0);
        let leaf0 = b.tier(l, "leaf", NodeKind::Switch, 1);
        let spine0 = b.tier(s, "spine", NodeKind::Switch, 2);
        for x in 0..l * h {
            let down = Port::Down((x % h) as u16 + 1);
            b.link(host0 + x, Port::Nic(0), leaf0 + x / h, down, self.host_link);
        }
        for leaf in 0..l {
            for spine in 0..s {
                for k in 0..u {
                    let up = Port::Up((spine * u + k) as u16 + 1);
                    let down = Port::Down((leaf * u + k) as u16 + 1);
                    b.link(leaf0 + leaf, up, spine0 + spine, down, self.fabric_link);
                }
            }
        }
        b.finish()
    }
}

#[derive(Default)]
pub(crate) struct Builder {
    nodes: Vec<Node>,
    links: Vec<Link>,
}

impl Builder {
    /// Adds `n` nodes named `<prefix>0..`; returns the first one's id.
    pub(crate) fn tier(&mut self, n: u32, prefix: &str, kind: NodeKind, tier: u8) -> u32 {
        let first = self.nodes.len() as u32;
        self.nodes.extend((0..n).map(|i| Node {
            name: format!("{prefix}{i}"),
            kind,
            tier,
        }));
        first
    }

    /// Adds one node named `name`; returns its id.
    pub(crate) fn named(&mut self, name: String, kind: NodeKind, tier: u8) -> u32 {
        self.nodes.push(Node { name, kind, tier });
        self.nodes.len() as u32 - 1
    }

    pub(crate) fn link(&mut self, a: u32, a_port: Port, b: u32, b_port: Port, spec: LinkSpec) {
        self.links.push(Link {
            a: NodeId(a),
            a_port,
            b: NodeId(b),
            b_port,
            rate: spec.rate,
            delay: spec.delay,
            loss: 0.0,
        });
    }

    pub(crate) fn finish(self) -> Result<Topology, TopologyError> {
        Topology::new(self.nodes, self.links, Addressing::Sequential)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(gbps: u64) -> LinkSpec {
        LinkSpec::new(Rate::gbps(gbps), Ps::from_us(1))
    }

    #[test]
    fn fat_tree_counts() {
        for (k, hosts, switches, links) in [(4, 16, 20, 48), (8, 128, 80, 384)] {
            let t = fat_tree(k, 1, [g(100); 3]).unwrap();
            // k^3/4 hosts; k^2 edge+agg and (k/2)^2 cores; k^3/4 links per tier.
            assert_eq!(
                (t.host_count(), t.switch_count(), t.links().len()),
                (hosts, switches, links)
            );
            assert_eq!(hosts, k * k * k / 4);
            assert_eq!(switches, k * k + k * k / 4);
            // Every switch uses all k ports.
            for (i, n) in t.nodes().iter().enumerate() {
                let want = if n.kind == NodeKind::Host {
                    1
                } else {
                    k as usize
                };
                assert_eq!(t.links_of(NodeId(i as u32)).len(), want, "{}", n.name);
            }
        }
        let over = fat_tree(4, 3, [g(100); 3]).unwrap();
        assert_eq!(over.host_count(), 48);
        let mut ft = FatTree::new(4, g(100), g(100), g(100));
        ft.hosts_per_edge = 6;
        assert_eq!(ft.oversubscription(), 3.0);
    }

    #[test]
    fn fat_tree_names_and_ports() {
        let t = fat_tree(4, 1, [g(100); 3]).unwrap();
        let name = |n: &str| t.find(n).unwrap();
        // host5 is edge2's second host; edge2 is pod 1's first edge switch.
        let l = t.links_of(name("host5"))[0];
        assert_eq!(t.port_name(l, name("edge2")), "edge2.p2");
        assert_eq!(t.port_name(l, name("host5")), "host5.eth0");
        // edge2.u2 goes to agg3 (pod 1's second), which sees it on p1.
        let up = t
            .links_of(name("edge2"))
            .iter()
            .copied()
            .find(|&l| t.port_name(l, name("edge2")) == "edge2.u2")
            .unwrap();
        assert_eq!(t.node(t.peer(up, name("edge2"))).name, "agg3");
        assert_eq!(t.port_name(up, name("agg3")), "agg3.p1");
        // agg3 is agg 1 of its pod: its u1/u2 go to cores 2 and 3, port p2 (pod 1).
        let cores: Vec<String> = t
            .links_of(name("agg3"))
            .iter()
            .filter(|&&l| t.port_name(l, name("agg3")).contains(".u"))
            .map(|&l| t.port_name(l, t.peer(l, name("agg3"))))
            .collect();
        assert_eq!(cores, ["core2.p2", "core3.p2"]);
        assert_eq!(t.node(name("core3")).tier, 3);
    }

    #[test]
    fn leaf_spine_counts_and_parallel_links() {
        let ls = LeafSpine {
            leaves: 4,
            spines: 2,
            hosts_per_leaf: 8,
            uplinks: 2,
            host_link: g(100),
            fabric_link: g(400),
        };
        let t = ls.build().unwrap();
        assert_eq!(
            (t.host_count(), t.switch_count(), t.links().len()),
            (32, 6, 32 + 4 * 2 * 2)
        );
        let leaf1 = t.find("leaf1").unwrap();
        assert_eq!(t.links_of(leaf1).len(), 8 + 4);
        let spine1 = t.find("spine1").unwrap();
        let to_spine1: Vec<String> = t
            .links_of(leaf1)
            .iter()
            .filter(|&&l| t.peer(l, leaf1) == spine1)
            .map(|&l| format!("{} {}", t.port_name(l, leaf1), t.port_name(l, spine1)))
            .collect();
        assert_eq!(to_spine1, ["leaf1.u3 spine1.p3", "leaf1.u4 spine1.p4"]);
        assert!(
            LeafSpine { uplinks: 0, ..ls }
                .build()
                .unwrap_err()
                .0
                .contains("uplinks")
        );
    }

    #[test]
    fn bad_parameters() {
        assert_eq!(
            fat_tree(3, 1, [g(1); 3]).unwrap_err().0,
            "fat-tree: k must be even, 2..=512, found 3"
        );
        let mut ft = FatTree::new(4, g(1), g(1), g(1));
        ft.pods = 5;
        assert_eq!(
            ft.build().unwrap_err().0,
            "fat-tree: pods must be 1..=k (4), found 5"
        );
    }
}
