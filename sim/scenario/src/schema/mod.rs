//! The scenario file as serde types: what a user may write, nothing more
//! (`deny_unknown_fields` everywhere). Quantities are parsed by their own
//! types so a bad unit is reported at the value that holds it.
//!
//! Cross references (a link endpoint naming a NIC, a workload naming a host)
//! are plain strings here; [`build_world`](crate::build_world) resolves them
//! and reports dangling ones at their key.
//!
//! ```text
//!  mod.rs       Scenario (the file), [sim], [output], [[tap]]; resolve_path
//!  scalars.rs   RateQ, Dur, Bytes, Mac, Ip: values with their own parsers
//!  host.rs      [[host]], [[host.nic]], [[host.bond]], [host.transport], [host.dcqcn]
//!  switch.rs    [[switch]], [[switch.lag]], [[switch.route]]
//!  qos.rs       [switch.ecn], [switch.mmu], [host.pfc]          (schema::qos)
//!  link.rs      [[link]], [[link.event]]
//!  workload.rs  [[workload]], [[workload.message]]
//!  collective.rs [[collective]], [collective.env]: nccl-tests runs
//!  topology.rs  [topology]: a generated fabric                  (lowered by crate::lower::topology)
//!  traffic.rs   [[traffic]]: generated or imported flows        (lowered by crate::lower::traffic)
//! ```
//!
//! Every type is re-exported at `schema::` (`schema::HostCfg`) except
//! those of [`qos`], whose `EcnCfg` (a switch's marking) is not the
//! transport's [`EcnCfg`]. The schema imports only the model's types and
//! unit parsers: the modules that lower, check and build a scenario import
//! it, never the reverse.

mod collective;
mod host;
mod link;
pub mod qos;
mod scalars;
mod switch;
mod topology;
mod traffic;
mod workload;

pub use collective::*;
pub use host::*;
pub use link::*;
pub use scalars::*;
pub use switch::*;
pub use topology::*;
pub use traffic::*;
pub use workload::*;

use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use rocesim_model::net::{IpNet, parse_ipnet};
pub use rocesim_model::world::bond::{BondMode, HashPolicy, LagHash, LagSelect};
pub use rocesim_model::world::cm::CmAnswer;
pub use rocesim_model::world::profile::{EcmpPorts, RoceMode, RoceModes, Trust};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Used for the default output directory `runs/<name>/`; defaults to
    /// the file name without extension.
    pub name: Option<String>,
    pub description: Option<String>,
    #[serde(default = "one")]
    pub seed: u64,
    #[serde(default)]
    pub sim: SimCfg,
    #[serde(default, rename = "host")]
    pub hosts: Vec<HostCfg>,
    #[serde(default, rename = "switch")]
    pub switches: Vec<SwitchCfg>,
    #[serde(default, rename = "link")]
    pub links: Vec<LinkCfg>,
    #[serde(default, rename = "workload")]
    pub workloads: Vec<WorkloadCfg>,
    /// nccl-tests runs ([`CollectiveCfg`]).
    #[serde(default, rename = "collective")]
    pub collectives: Vec<CollectiveCfg>,
    #[serde(default, rename = "tap")]
    pub taps: Vec<TapCfg>,
    /// What the run directory holds beyond its always-written files.
    #[serde(default)]
    pub output: OutputCfg,
    /// A generated fabric, already lowered into `hosts`, `switches` and
    /// `links` when serde sees it ([`crate::lower::topology`]).
    pub topology: Option<TopologyCfg>,
    /// Flow workloads ([`crate::lower::traffic`]), lowered into `workloads`.
    #[serde(default, rename = "traffic")]
    pub traffic: Vec<TrafficCfg>,
    /// The flows `traffic` lowered, in start order.
    #[serde(skip)]
    pub flows: Vec<rocesim_model::flow::FlowRef>,
    /// The generated fabric's graph, kept when it re-routes on link
    /// changes (`[topology] reroute = true`).
    #[serde(skip)]
    pub fabric: Option<std::sync::Arc<rocesim_model::topology::Topology>>,
}

fn one() -> u64 {
    1
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputCfg {
    /// Write `sysfs/<host>/`, each host that took part laid out as Linux's
    /// sysfs, for node_exporter and scripts written for real NICs (default
    /// true). A host's tree is some fifty files and directories, which on
    /// some file systems cost more than a small simulation.
    pub sysfs: Option<bool>,
    /// `all`: every port's and QP's time series (`ports.csv`, `qps.csv`)
    /// and every host's sysfs tree; `summary`: the series of each tier of
    /// the fabric (`tiers.csv`), of the busiest ports and of the `ports`
    /// and `hosts` below, the sysfs trees of those hosts. Default:
    /// `summary` for a fabric of more than [`LARGE_FABRIC_HOSTS`] hosts,
    /// whose run directory would be hundreds of MB, else `all`.
    pub series: Option<SeriesMode>,
    /// Ports (`host.nic`, `switch.port`) whose series a `summary` run
    /// writes besides the busiest.
    #[serde(default)]
    pub ports: Vec<String>,
    /// Hosts whose QPs' series and sysfs trees a `summary` run writes.
    #[serde(default)]
    pub hosts: Vec<String>,
}

/// More hosts than this make a large fabric: its outputs default to
/// `[output] series = "summary"`. The shipped scenarios (320 hosts at
/// most) stay below it.
pub const LARGE_FABRIC_HOSTS: usize = 512;

/// `[output] series`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesMode {
    All,
    Summary,
}

impl OutputCfg {
    pub fn sysfs(&self) -> bool {
        self.sysfs.unwrap_or(true)
    }
    /// Whether a scenario of `hosts` hosts writes every series.
    pub fn all_series(&self, hosts: usize) -> bool {
        match self.series {
            Some(m) => m == SeriesMode::All,
            None => hosts <= LARGE_FABRIC_HOSTS,
        }
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimCfg {
    /// Hard stop of simulated time; default: run until all work is done
    /// (with a safety limit of 60 s simulated).
    pub stop_at: Option<Dur>,
    /// Time-series sampling interval (default 10 us; coarsened to keep at
    /// most ~1000 samples per series).
    pub sample_interval: Option<Dur>,
    /// Neighbour resolution: `instant` (at setup, no frames) or `frames`
    /// (real ARP requests and replies before each workload starts, visible
    /// in captures).
    #[serde(default)]
    pub arp: ArpMode,
    /// Serialization and pacing times are rounded down to a multiple of
    /// this (default 1ps: exact). The ns-3 reference computes them in
    /// floating point and truncates them to its 1 ns clock, so that its
    /// 400G link sends a 1048-byte frame in 20 ns instead of 20.96.
    pub tx_time_step: Option<Dur>,
    /// Split the fabric into this many parts (1 to 64), each simulated on
    /// a thread of its own in windows of the smallest link delay between
    /// them (`rocesim::parallel`, [`rocesim_model::world::part`]). Events
    /// of equal time keep one order whatever the cut
    /// ([`rocesim_model::engine`]), so the outputs do not depend on it.
    pub partitions: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ArpMode {
    #[default]
    Instant,
    Frames,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TapFormat {
    #[default]
    Pcap,
    Pcapng,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapCfg {
    /// `host.nic` or `switch.port`.
    pub at: String,
    #[serde(default)]
    pub format: TapFormat,
    /// Bytes kept per frame; 0 = whole frames.
    #[serde(default)]
    pub snaplen: u32,
    /// File name inside the run directory; default `<at>.pcap[ng]`.
    pub file: Option<String>,
}

/// A path as written in a scenario: relative to the scenario's directory.
pub fn resolve_path(base: &Path, file: &str) -> PathBuf {
    let p = Path::new(file);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}
