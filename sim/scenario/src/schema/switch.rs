//! `[[switch]]`: its buffer, ECMP hash, LACP trunks and routes
//! (`[switch.ecn]`, `[switch.mmu]` and `[switch.ets]` are in `qos`).

use serde::Deserialize;

use super::scalars::{Bytes, Dur, Mac, zero_dur};
use rocesim_model::net::IpNet;
use rocesim_model::world::profile::Trust;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchHash {
    #[default]
    Crc32,
    LinuxL34,
    Xor16,
    /// MurmurHash3 seeded by `hash_seed`: what generated fabrics use (seeded
    /// per switch, so tiers do not polarise; see `roce_codec::hash::EcmpHash`).
    Murmur3,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchCfg {
    pub name: String,
    /// Shared packet buffer.
    #[serde(default = "default_buffer")]
    pub buffer: Bytes,
    /// Hash for ECMP and LACP-trunk member choice over the 5-tuple.
    #[serde(default)]
    pub hash: SwitchHash,
    #[serde(default)]
    pub hash_seed: u32,
    #[serde(default)]
    pub trust: Trust,
    /// Fixed forwarding latency added to every frame.
    #[serde(default = "zero_dur")]
    pub latency: Dur,
    /// Router MAC (for routed hops); defaults to a generated one. Unique,
    /// except that switches no bridged link joins may share one (an
    /// anycast gateway, as generated fabrics with multi-homed hosts use).
    pub mac: Option<Mac>,
    /// LACP trunks (port channels) towards bonded hosts or other switches.
    #[serde(default, rename = "lag")]
    pub lags: Vec<SwitchLagCfg>,
    /// IP routes for routed (L3) forwarding.
    #[serde(default, rename = "route")]
    pub routes: Vec<RouteCfg>,
    /// RED/ECN marking on the egress queues; none: nothing is marked.
    pub ecn: Option<super::qos::EcnCfg>,
    /// The buffer's partition and PFC; none: one tail-dropping pool.
    pub mmu: Option<super::qos::MmuCfg>,
    /// Its ports' egress scheduler (ETS); none: strict priority.
    pub ets: Option<super::qos::EtsCfg>,
}

fn default_buffer() -> Bytes {
    Bytes(32 << 20)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchLagCfg {
    pub name: String,
    pub ports: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteCfg {
    pub prefix: IpNet,
    /// Ports or LAGs of this switch; several = ECMP.
    pub via: Vec<String>,
}
