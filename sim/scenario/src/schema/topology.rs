//! `[topology]`: a generated fabric (how it is lowered into `[[host]]`,
//! `[[switch]]` and `[[link]]` tables: [`crate::lower::topology`]).

use serde::Deserialize;

use super::link::LinkState;
use super::scalars::{Dur, Length, RateQ};
use rocesim_model::time::Ps;
use rocesim_model::world::mmu::cable_propagation;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    FatTree,
    LeafSpine,
    /// A rail-optimized GPU cluster (`crate::generate::rail`).
    Rail,
    /// The reference's topology file (`file`).
    Hpcc,
}

/// `subnet` of a rail fabric: how its NICs are addressed
/// (`crate::lower::rail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RailSubnet {
    /// A /24 per leaf, routed at it: rail r of group g is 10.r.g.0/24.
    #[default]
    PerRail,
    /// The same addresses in one /8: every NIC of every server on one
    /// subnet (the multi-NIC misconfiguration).
    Shared,
}

/// One tier's links.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierCfg {
    pub rate: RateQ,
    /// One-way propagation (default 1 us) ...
    pub delay: Option<Dur>,
    /// ... or the cables' length, at 5 ns a metre (as `[[link]]`'s).
    pub length: Option<Length>,
}

impl TierCfg {
    /// `delay`, or `length` at 5 ns/m, or 1 us.
    pub fn propagation(&self) -> Ps {
        match (self.delay, self.length) {
            (Some(d), _) => d.0,
            (None, Some(l)) => cable_propagation(l.0),
            (None, None) => Ps::from_us(1),
        }
    }
}

/// `[topology]`: a generated fabric (see [`crate::lower::topology`]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyCfg {
    pub kind: TopologyKind,
    /// Fat-tree radix (even).
    pub k: Option<u32>,
    /// Fat-tree pods built (default k; fewer cut the tree, as the
    /// reference's fat.txt has 5 of 8).
    pub pods: Option<u32>,
    /// Hosts per edge switch (default k/2 x oversubscription).
    pub hosts_per_edge: Option<u32>,
    /// Hosts per edge switch over its uplinks (1 = non-blocking).
    pub oversubscription: Option<u32>,
    pub host_link: Option<TierCfg>,
    pub edge_agg: Option<TierCfg>,
    pub agg_core: Option<TierCfg>,
    pub leaves: Option<u32>,
    pub spines: Option<u32>,
    pub hosts_per_leaf: Option<u32>,
    /// Parallel links per leaf-spine pair (default 1).
    pub uplinks: Option<u32>,
    pub fabric_link: Option<TierCfg>,
    /// `kind = "rail"`: GPU servers (one host each).
    pub servers: Option<u32>,
    /// `kind = "rail"`: NICs (rails) per server, default 8.
    pub nics_per_server: Option<u32>,
    /// `kind = "rail"`: servers per group (each group's leaves take that
    /// many servers); default all of them.
    pub servers_per_leaf: Option<u32>,
    /// `kind = "rail"`: independent leaf-spine planes (rail r in plane r
    /// mod planes), default 1.
    pub planes: Option<u32>,
    /// `kind = "rail"`: `"per-rail"` (default) or `"shared"`.
    pub subnet: Option<RailSubnet>,
    /// `kind = "hpcc"`: the reference's topology file, relative to the
    /// scenario's directory.
    pub file: Option<String>,
    /// Probability that a frame is lost on a generated link (each
    /// direction), for every link the topology file gives none.
    pub link_loss: Option<f64>,
    /// When a link goes down or up, every switch's routes are computed
    /// again over the links up (the HPCC reference's `LINK_DOWN`); without,
    /// a switch only stops using a dead next hop.
    pub reroute: Option<bool>,
    /// Carrier changes of generated links, named by the nodes they join.
    #[serde(default, rename = "link_event")]
    pub link_events: Vec<TopoLinkEventCfg>,
    /// Templates, read from the tree (any key their tables accept).
    pub host: Option<serde::de::IgnoredAny>,
    pub nic: Option<serde::de::IgnoredAny>,
    pub switch: Option<serde::de::IgnoredAny>,
}

/// `[[topology.link_event]]`: the links between two nodes go down or up.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopoLinkEventCfg {
    /// The two nodes (`["sw320", "sw336"]`); every link between them.
    pub between: [String; 2],
    pub at: Dur,
    pub state: LinkState,
}
