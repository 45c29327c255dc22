//! Rail-optimized GPU-cluster fabrics: the graph (`[topology] kind =
//! "rail"`; its addresses and routes are laid down by
//! [`crate::lower::rail`]).
//!
//! A GPU server (an HGX/DGX node) has one NIC per GPU: eight single-port
//! ConnectX-7 on a DGX H100 (NVIDIA DGX BasePOD reference architecture,
//! "Core Components"; `/work/shared/reference/nccl-facts.md` §6). A
//! *rail-optimized* fabric cables NIC r of every server to leaf r of its
//! group ("rail r"), so that GPU r of one server reaches GPU r of any
//! other server of the group through a single leaf, and NCCL keeps its
//! traffic on rails: rings and trees leave a node on the NIC they entered
//! on (`NCCL_CROSS_NIC`), and PXN first moves data over NVLink to the GPU
//! whose NIC sits on the destination's rail (nccl-facts.md §6, "Ring/tree
//! NIC choice" and "PXN"). Traffic between different rails, or between
//! groups, goes up to a spine.
//!
//! ```text
//!   planes = 1: every leaf to every spine of its plane (uplinks links per pair)
//!
//!        plane0_spine0 ........ plane0_spine<S-1>
//!          ╱      │      ╲   ╳   ╱      │      ╲
//!   su0_leaf0  su0_leaf1 ... su0_leaf<R-1>   su1_leaf0 ...     one leaf per rail per group
//!     │ │        │ │            │ │            │
//!     │ └──────┐ │ └───┐        │ └──┐        ...
//!   eth0     eth0 eth1  eth1   eth<R-1> eth<R-1>
//!   server0  server1 ...                                      servers_per_leaf servers a group
//! ```
//!
//! Shape: `servers` servers in groups ("scalable units") of
//! `servers_per_leaf`, numbered in order (server s is in group s /
//! servers_per_leaf, the last group may be partial); each server has
//! `nics_per_server` NICs (R rails). Group g has R leaves, leaf r taking
//! NIC r of each of its servers. `planes` (P) independent copies of the
//! spine layer: the leaves of rail r belong to plane r mod P, which has
//! `spines` spines of its own; every leaf is cabled to every spine of its
//! plane by `uplinks` parallel links. Planes share no switch: a NIC
//! reaches only NICs of its own plane.
//!
//! Names and ports (fixed, so scenarios and tests can name them):
//!
//! * servers `server0..`, their NICs `eth0..eth<R-1>` (netdevs; NIC r is
//!   rail r, and its RDMA device is `mlx5_<r>`, the r-th NIC's, as
//!   `rocesim::run::devices` names them);
//! * leaves `su<g>_leaf<r>`: group g's leaf of rail r; its port `p<i+1>`
//!   leads to the group's i-th server (server g x servers_per_leaf + i),
//!   `u<k x uplinks + u + 1>` to the u-th link to spine k of its plane;
//! * spines `plane<p>_spine<k>`; port `p<j x uplinks + u + 1>` leads to
//!   the j-th leaf of the plane (leaves in group order, then rail order),
//!   by its u-th link.
//!
//! Node ids: servers, then leaves (group by group, rail by rail), then
//! spines (plane by plane), which seeds each switch's ECMP hash.

use rocesim_model::topology::{NodeKind, Port, Topology, TopologyError};

use super::topology::{Builder, LinkSpec};

/// A rail-optimized fabric (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rail {
    pub servers: u32,
    /// NICs (rails) per server.
    pub nics_per_server: u32,
    /// Servers per group: the hosts of each leaf.
    pub servers_per_leaf: u32,
    /// Spines per plane.
    pub spines: u32,
    /// Parallel links per leaf-spine pair.
    pub uplinks: u32,
    /// Independent leaf-spine planes; rail r is in plane r mod planes.
    pub planes: u32,
    pub host_link: LinkSpec,
    pub fabric_link: LinkSpec,
}

impl Rail {
    /// Groups of servers (the last one may be partial).
    pub fn groups(&self) -> u32 {
        self.servers.div_ceil(self.servers_per_leaf.max(1))
    }

    /// The plane of rail `r`.
    pub fn plane_of(&self, r: u32) -> u32 {
        r % self.planes
    }

    /// Rails in plane `p`: `p`, `p + P`, ...
    pub fn rails_in_plane(&self, p: u32) -> u32 {
        (self.nics_per_server + self.planes - 1 - p) / self.planes
    }

    /// Leaves per plane, the most any plane has (plane 0).
    pub fn leaves_in_plane(&self, p: u32) -> u32 {
        self.groups() * self.rails_in_plane(p)
    }

    /// A leaf's index among the leaves of its plane: group-major, then
    /// rail (the spine port order).
    pub fn leaf_index_in_plane(&self, g: u32, r: u32) -> u32 {
        g * self.rails_in_plane(self.plane_of(r)) + r / self.planes
    }

    /// The node id of group `g`'s leaf of rail `r`.
    pub fn leaf_node(&self, g: u32, r: u32) -> u32 {
        self.servers + g * self.nics_per_server + r
    }

    /// The node id of spine `k` of plane `p`.
    pub fn spine_node(&self, p: u32, k: u32) -> u32 {
        self.servers + self.groups() * self.nics_per_server + p * self.spines + k
    }

    /// What a leaf's servers can send over what its uplinks carry (1.0:
    /// non-blocking).
    pub fn oversubscription(&self) -> f64 {
        let down = f64::from(self.servers_per_leaf) * self.host_link.rate.bps() as f64;
        let up = f64::from(self.spines * self.uplinks) * self.fabric_link.rate.bps() as f64;
        down / up
    }

    pub fn build(&self) -> Result<Topology, TopologyError> {
        let bad = |what: &str, v: u64, max: u64| {
            Err(TopologyError(format!(
                "rail: {what} must be 1..={max}, found {v}"
            )))
        };
        let max = u64::from(u16::MAX);
        for (what, v) in [
            ("servers", self.servers),
            ("nics_per_server", self.nics_per_server),
            ("servers_per_leaf", self.servers_per_leaf),
            ("spines", self.spines),
            ("uplinks", self.uplinks),
        ] {
            if v == 0 || u64::from(v) > max {
                return bad(what, v.into(), max);
            }
        }
        if self.planes == 0 || self.planes > self.nics_per_server {
            return bad(
                "planes (at most one per rail)",
                self.planes.into(),
                self.nics_per_server.into(),
            );
        }
        let up = u64::from(self.spines) * u64::from(self.uplinks);
        if up > max {
            return bad("spines x uplinks (a leaf's uplink ports)", up, max);
        }
        let down = u64::from(self.leaves_in_plane(0)) * u64::from(self.uplinks);
        if down > max {
            return bad("a plane's leaves x uplinks (a spine's ports)", down, max);
        }
        let (r_n, spl, u) = (self.nics_per_server, self.servers_per_leaf, self.uplinks);
        let mut b = Builder::default();
        let server0 = b.tier(self.servers, "server", NodeKind::Host, 0);
        for g in 0..self.groups() {
            for r in 0..r_n {
                b.named(format!("su{g}_leaf{r}"), NodeKind::Switch, 1);
            }
        }
        for p in 0..self.planes {
            for k in 0..self.spines {
                b.named(format!("plane{p}_spine{k}"), NodeKind::Switch, 2);
            }
        }
        for s in 0..self.servers {
            let (g, i) = (s / spl, s % spl);
            for r in 0..r_n {
                b.link(
                    server0 + s,
                    Port::Nic(r as u16),
                    self.leaf_node(g, r),
                    Port::Down(i as u16 + 1),
                    self.host_link,
                );
            }
        }
        for g in 0..self.groups() {
            for r in 0..r_n {
                let (p, j) = (self.plane_of(r), self.leaf_index_in_plane(g, r));
                for k in 0..self.spines {
                    for l in 0..u {
                        b.link(
                            self.leaf_node(g, r),
                            Port::Up((k * u + l) as u16 + 1),
                            self.spine_node(p, k),
                            Port::Down((j * u + l) as u16 + 1),
                            self.fabric_link,
                        );
                    }
                }
            }
        }
        b.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocesim_model::time::{Ps, Rate};
    use rocesim_model::topology::NodeId;

    fn g(gbps: u64) -> LinkSpec {
        LinkSpec::new(Rate::gbps(gbps), Ps::from_us(1))
    }

    fn rail(servers: u32, nics: u32, spl: u32, spines: u32, uplinks: u32, planes: u32) -> Rail {
        Rail {
            servers,
            nics_per_server: nics,
            servers_per_leaf: spl,
            spines,
            uplinks,
            planes,
            host_link: g(400),
            fabric_link: g(400),
        }
    }

    /// (hosts, switches, links) of a built fabric.
    fn counts(t: &Topology) -> (u32, u32, usize) {
        (t.host_count(), t.switch_count(), t.links().len())
    }

    #[test]
    fn counts_by_hand() {
        // One DGX-like scalable unit: 4 servers x 8 rails, non-blocking
        // with 4 spines (each leaf: 4 down, 4 up): 8 leaves, 32 host
        // links, 8 x 4 fabric links.
        let t = rail(4, 8, 4, 4, 1, 1).build().unwrap();
        assert_eq!(counts(&t), (4, 8 + 4, 32 + 32));
        // 6 servers in groups of 4 (the second group has 2): 2 x 2 leaves
        // of 2 rails, 2 spines, 2 parallel links: 12 host links and
        // 4 leaves x 2 spines x 2 = 16 fabric links.
        let t = rail(6, 2, 4, 2, 2, 1).build().unwrap();
        assert_eq!(counts(&t), (6, 4 + 2, 12 + 16));
        // 2 planes of 3 spines each over 4 rails, 2 groups of 2 servers:
        // 8 leaves, each to the 3 spines of its plane.
        let t = rail(4, 4, 2, 3, 1, 2).build().unwrap();
        assert_eq!(counts(&t), (4, 8 + 6, 16 + 8 * 3));
        // A server has one link per rail, and nothing else.
        for s in 0..4 {
            assert_eq!(t.links_of(NodeId(s)).len(), 4);
        }
    }

    #[test]
    fn nic_r_of_every_server_lands_on_leaf_r_of_its_group() {
        let t = rail(6, 8, 4, 2, 1, 1).build().unwrap();
        for s in 0..6u32 {
            let server = t.find(&format!("server{s}")).unwrap();
            for &l in t.links_of(server) {
                let nic = t.port_name(l, server);
                let r: u32 = nic.rsplit_once(".eth").unwrap().1.parse().unwrap();
                let leaf = t.port_name(l, t.peer(l, server));
                assert_eq!(leaf, format!("su{}_leaf{r}.p{}", s / 4, s % 4 + 1), "{nic}");
            }
        }
    }

    #[test]
    fn leaves_reach_every_spine_of_their_plane_only() {
        let t = rail(2, 4, 2, 2, 2, 2).build().unwrap();
        // Rail 3 is in plane 1; its leaf is the plane's second (rails 1,
        // 3 of group 0), so plane1_spine1 sees its two links on p3, p4.
        let leaf = t.find("su0_leaf3").unwrap();
        let ups: Vec<String> = t
            .links_of(leaf)
            .iter()
            .filter(|&&l| t.port_name(l, leaf).contains(".u"))
            .map(|&l| {
                format!(
                    "{} {}",
                    t.port_name(l, leaf),
                    t.port_name(l, t.peer(l, leaf))
                )
            })
            .collect();
        assert_eq!(
            ups,
            [
                "su0_leaf3.u1 plane1_spine0.p3",
                "su0_leaf3.u2 plane1_spine0.p4",
                "su0_leaf3.u3 plane1_spine1.p3",
                "su0_leaf3.u4 plane1_spine1.p4",
            ]
        );
        // Each spine: the 2 leaves of its plane x 2 links.
        for name in ["plane0_spine0", "plane1_spine1"] {
            assert_eq!(t.links_of(t.find(name).unwrap()).len(), 4, "{name}");
        }
    }

    #[test]
    fn oversubscription_is_down_over_up() {
        assert_eq!(rail(8, 8, 8, 8, 1, 1).oversubscription(), 1.0);
        assert_eq!(rail(8, 8, 8, 4, 1, 1).oversubscription(), 2.0);
    }

    #[test]
    fn bad_shapes_are_refused() {
        let e = |r: Rail| r.build().unwrap_err().0;
        assert_eq!(
            e(rail(0, 8, 4, 1, 1, 1)),
            "rail: servers must be 1..=65535, found 0"
        );
        assert_eq!(
            e(rail(4, 2, 4, 1, 1, 3)),
            "rail: planes (at most one per rail) must be 1..=2, found 3"
        );
        assert!(e(rail(4, 8, 4, 300, 300, 1)).contains("spines x uplinks"));
    }
}
