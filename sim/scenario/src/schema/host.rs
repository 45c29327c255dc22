//! `[[host]]` and what it holds: `[[host.nic]]`, `[[host.bond]]`,
//! `[host.transport]`, `[host.dcqcn]`, `[host.cc]` (`[host.pfc]` and `[host.ets]`
//! are with the other flow-control keys, in `qos`).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use super::scalars::{Dur, Ip, Mac, RateQ, zero_dur};
use rocesim_model::net::IpNet;
use rocesim_model::time::Ps;
use rocesim_model::world::bond::{BondMode, HashPolicy, LagHash, LagSelect};
use rocesim_model::world::profile::{EcmpPorts, RoceMode, RoceModes, Trust};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum QpnAlloc {
    #[default]
    Sequential,
    Random,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostCfg {
    pub name: String,
    /// The `default_roce_mode` of its RDMA devices: what its QPs use (a
    /// server's QP takes the client's mode if its NIC supports it).
    /// Default: the newest its NICs support, as the drivers set it.
    pub roce: Option<RoceMode>,
    /// The RoCE versions its NICs implement: `"v1"` (ConnectX-3) or
    /// `"v1+v2"` (the default).
    #[serde(default)]
    pub roce_modes: RoceModes,
    /// The NIC profile ([`NicProfile`](rocesim_model::world::profile::NicProfile)): `connectx` (default), `rxe`
    /// or `hpcc`. Checked when the world is built, with a did-you-mean.
    pub profile: Option<String>,
    /// How the host's NICs map traffic to priorities: `dscp` (prio =
    /// DSCP >> 3) or `pcp` (prio = service level & 7, sent in a VLAN tag).
    /// Default: the profile's (`pcp` on ConnectX, `dscp` otherwise).
    pub trust: Option<Trust>,
    /// Overrides of the profile's transport settings.
    #[serde(default)]
    pub transport: TransportCfg,
    /// Overrides of the profile's DCQCN settings.
    #[serde(default)]
    pub dcqcn: DcqcnCfg,
    /// The congestion control algorithm of its reaction points and its
    /// knobs (DCQCN's stay in `[host.dcqcn]`).
    #[serde(default)]
    pub cc: CcCfg,
    /// `net.ipv4.conf.*.arp_ignore` (0, 1 or 2 are modelled).
    #[serde(default)]
    pub arp_ignore: u8,
    /// `net.ipv4.conf.*.arp_announce` (0, 1 or 2).
    #[serde(default)]
    pub arp_announce: u8,
    /// `net.ipv4.conf.*.rp_filter`: 0 off (the kernel's default), 1 strict
    /// (the route back to the sender must leave the receiving interface;
    /// many distributions set it), 2 loose (any route back). It decides
    /// which interfaces answer an ARP request.
    #[serde(default)]
    pub rp_filter: u8,
    /// Source-based policy routing (`ip rule from <ip> table <nic>`): route
    /// lookups use the table of the interface that owns the source address.
    #[serde(default)]
    pub policy_routing: bool,
    pub gateway: Option<Ip>,
    /// First QPN the NIC hands out (sequential allocation).
    pub qpn_base: Option<u32>,
    #[serde(default)]
    pub qpn_alloc: QpnAlloc,
    #[serde(default, rename = "nic")]
    pub nics: Vec<NicCfg>,
    #[serde(default, rename = "bond")]
    pub bonds: Vec<BondCfg>,
    /// Its NICs' PFC, receive buffer and pause reaction; none: they take
    /// every frame, obey their switch's PFC priorities and react as IEEE
    /// 802.3 allows.
    pub pfc: Option<super::qos::HostPfcCfg>,
    /// Its NICs' egress scheduler among priorities (ETS, `mlnx_qos --tsa
    /// --tcbw`); none: strict priority.
    pub ets: Option<super::qos::EtsCfg>,
}

/// `[host.transport]`: how the NIC builds and acknowledges RC packets.
/// Every key defaults to the host's profile.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportCfg {
    /// PSNs a requester keeps unacknowledged at most; 0 = no window beyond
    /// the spec's.
    pub max_unacked_psns: Option<u32>,
    /// AckReq on every Nth packet sent without one (and on the last packet
    /// of every message); 0 = only on last packets.
    pub ack_req_every: Option<u32>,
    /// A queued positive ACK is replaced by a newer one before it leaves.
    pub ack_coalesce: Option<bool>,
    /// `"qp"` or a priority 0..=7 for ACKs and NAKs.
    pub ack_priority: Option<AckPriorityCfg>,
    /// The NIC egress queue ACKs and NAKs wait in: `"priority"` (their
    /// priority's) or a queue 0..=7, served and paused as that queue
    /// whatever priority they carry on the wire.
    pub ack_queue: Option<AckQueueCfg>,
    /// Payload bytes per packet; 0 = the path MTU.
    pub segment_bytes: Option<u32>,
    /// Payload bytes a QP keeps in flight at most, as the HPCC reference's
    /// window (`HAS_WIN`): it sends while fewer are unacknowledged; 0 =
    /// none; `"path"`: the bandwidth-delay product of the QP's own path
    /// (`GLOBAL_T 0`; flows of `[[traffic]]` only).
    pub window_bytes: Option<WindowBytesCfg>,
    /// The window shrinks with the QP's DCQCN rate (`VAR_WIN`):
    /// `window_bytes x rate / line rate`.
    pub window_follows_rate: Option<bool>,
    /// Bytes a data packet costs on the wire and in buffers beyond its
    /// payload, in place of its real headers, FCS, preamble and gap (the
    /// HPCC reference's 48); 0 = its real frame.
    pub header_bytes: Option<u32>,
    /// Bytes an ACK, NAK or CNP costs on the wire and in buffers (the
    /// reference's 60); 0 = its real frame.
    pub ack_bytes: Option<u32>,
    /// The UDP ports switches hash the QP's frames by: `"udp"` (their own:
    /// the source port from the QPNs, 4791) or `"flow"` (the HPCC
    /// reference's for a flow of `[[traffic]]`: source 10000 + the earlier
    /// flows between the same two hosts, destination the flow's `dport`,
    /// swapped on ACKs and CNPs as its ACK header carries them).
    pub ecmp_ports: Option<EcmpPorts>,
    /// `cc`, `tc` or `not-ect`.
    pub ecn: Option<EcnCfg>,
}

/// `ack_priority`: `"qp"` or an integer priority (range checked at build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPriorityCfg {
    Qp,
    Prio(i64),
}

impl<'de> Deserialize<'de> for AckPriorityCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(word_or_prio(d, "qp")?.map_or(AckPriorityCfg::Qp, AckPriorityCfg::Prio))
    }
}

/// `ack_queue`: `"priority"` (the queue of the ACKs' own priority) or an
/// integer queue (range checked at build).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckQueueCfg {
    Priority,
    Queue(i64),
}

impl<'de> Deserialize<'de> for AckQueueCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(word_or_prio(d, "priority")?.map_or(AckQueueCfg::Priority, AckQueueCfg::Queue))
    }
}

/// A value that is either the string `word` (`None`) or an integer.
fn word_or_prio<'de, D: Deserializer<'de>>(
    d: D,
    word: &'static str,
) -> Result<Option<i64>, D::Error> {
    word_or_int(d, word, "a priority 0..=7")
}

/// A value that is either the string `word` (`None`) or an integer,
/// described as `int` in messages.
fn word_or_int<'de, D: Deserializer<'de>>(
    d: D,
    word: &'static str,
    int: &'static str,
) -> Result<Option<i64>, D::Error> {
    struct V(&'static str, &'static str);
    impl Visitor<'_> for V {
        type Value = Option<i64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "\"{}\" or {}", self.0, self.1)
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<Option<i64>, E> {
            if s == self.0 {
                Ok(None)
            } else {
                Err(E::custom(format!(
                    "`{s}` is not \"{}\" or {}",
                    self.0, self.1
                )))
            }
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<i64>, E> {
            Ok(Some(v))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<i64>, E> {
            Ok(Some(v.min(i64::MAX as u64) as i64))
        }
    }
    d.deserialize_any(V(word, int))
}

/// `window_bytes`: a number of bytes, or `"path"` (each QP's own path's
/// bandwidth-delay product).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowBytesCfg {
    Path,
    Bytes(i64),
}

impl<'de> Deserialize<'de> for WindowBytesCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(word_or_int(d, "path", "a number of bytes")?
            .map_or(WindowBytesCfg::Path, WindowBytesCfg::Bytes))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EcnCfg {
    Cc,
    Tc,
    NotEct,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RpModelCfg {
    Connectx,
    HpccReference,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CnpScopeCfg {
    Qp,
    Port,
    IpPair,
    DestIp,
}

/// `[host.dcqcn]`: DCQCN on the host's NICs, the knobs named as the
/// ConnectX firmware names them ([`DcqcnParams`](rocesim_model::cc::DcqcnParams)). Every key defaults to
/// the host's profile.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DcqcnCfg {
    pub enable: Option<bool>,
    pub model: Option<RpModelCfg>,
    /// Priorities the reaction point runs on (`ecn/roce_rp/enable/<p>`).
    pub rp_priorities: Option<Vec<u8>>,
    /// Priorities the notification point answers (`ecn/roce_np/enable/<p>`).
    pub np_priorities: Option<Vec<u8>>,
    /// No CNP frames: the ACK of each marked packet carries the
    /// notification as BTH BECN (the HPCC reference's CNP flag on its ACK).
    pub cnp_on_ack: Option<bool>,
    pub rpg_time_reset: Option<u32>,
    pub rpg_byte_reset: Option<u32>,
    pub rpg_threshold: Option<u32>,
    pub rpg_max_rate: Option<u32>,
    pub rpg_ai_rate: Option<u32>,
    pub rpg_hai_rate: Option<u32>,
    pub rpg_gd: Option<u32>,
    pub rpg_min_dec_fac: Option<u32>,
    pub rpg_min_rate: Option<u32>,
    pub dce_tcp_g: Option<u32>,
    pub dce_tcp_rtt: Option<u32>,
    pub rate_reduce_monitor_period: Option<u32>,
    pub initial_alpha_value: Option<u32>,
    pub clamp_tgt_rate: Option<bool>,
    pub clamp_tgt_rate_after_time_inc: Option<bool>,
    pub rate_to_set_on_first_cnp: Option<u32>,
    pub min_time_between_cnps: Option<u32>,
    pub cnp_dscp: Option<u8>,
    pub cnp_802p_prio: Option<u8>,
    pub cnp_scope: Option<CnpScopeCfg>,
}

/// `[host.cc]`: which algorithm the reaction points run, where
/// `[host.dcqcn]` puts them (`rp_priorities`), and each algorithm's knobs
/// in a table of its own. Every key defaults to the host's profile.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcCfg {
    /// `"dcqcn"` (every profile's default), `"dctcp"`, `"timely"`,
    /// `"hpcc"` or `"hpcc_pint"` (whose knobs are `[host.cc.hpcc]`'s);
    /// checked when the world is built, with a did-you-mean.
    pub algorithm: Option<String>,
    #[serde(default)]
    pub dctcp: DctcpCfg,
    #[serde(default)]
    pub timely: TimelyCfg,
    #[serde(default)]
    pub hpcc: HpccCfg,
}

/// `[host.cc.hpcc]`: HPCC as the HPCC reference runs it
/// ([`HpccParams`](rocesim_model::cc::HpccParams)); defaults are the
/// reference's `--cc hp --utgt 95` at 100 Gb/s.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HpccCfg {
    /// The target utilisation, (0, 1] (`U_TARGET`).
    pub u_target: Option<f64>,
    /// The additive step (`RATE_AI`).
    pub rate_ai: Option<RateQ>,
    /// The rate a cut never goes below (`MIN_RATE`).
    pub min_rate: Option<RateQ>,
    /// Additive steps before a multiplicative one (`MI_THRESH`).
    pub mi_thresh: Option<u32>,
    /// React to every ACK between updates (`FAST_REACT`).
    pub fast_react: Option<bool>,
    /// A rate per hop (`MULTI_RATE`).
    pub multi_rate: Option<bool>,
    /// Fast reactions skip hops with an empty queue (`SAMPLE_FEEDBACK`).
    pub sample_feedback: Option<bool>,
    /// The multiplier of the telemetry's units (`INT_MULTI`).
    pub int_multi: Option<u8>,
    /// The base RTT (`m_baseRtt`); default: the largest of the flows'
    /// paths.
    pub base_rtt: Option<Dur>,
    /// HPCC-PINT only: the log base of the switches' utilisation power,
    /// above 1 (`PINT_LOG_BASE`; default 1.01, run.py's).
    pub pint_log_base: Option<f64>,
    /// HPCC-PINT only: the fraction of ACKs the sender reacts to, (0, 1]
    /// (`PINT_PROB`; default 1).
    pub pint_prob: Option<f64>,
}

/// `[host.cc.timely]`: TIMELY as the HPCC reference runs it
/// ([`TimelyParams`](rocesim_model::cc::TimelyParams)); defaults are the
/// reference's `--cc timely` at 100 Gb/s.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelyCfg {
    /// The weight of the newest RTT difference, [0, 1] (`TimelyAlpha`).
    pub ewma: Option<f64>,
    /// The multiplicative decrease factor, [0, 1] (`TimelyBeta`).
    pub beta: Option<f64>,
    /// Below this RTT, always increase.
    pub t_low: Option<Dur>,
    /// Above this RTT, always decrease.
    pub t_high: Option<Dur>,
    /// Normalises the RTT gradient.
    pub min_rtt: Option<Dur>,
    /// The additive step (`RATE_AI`).
    pub rate_ai: Option<RateQ>,
    /// The hyper-active step (`RATE_HAI`).
    pub rate_hai: Option<RateQ>,
    /// Consecutive increases before hyper-active ones.
    pub hai_after: Option<u32>,
    /// The rate a decrease never goes below (`MIN_RATE`).
    pub min_rate: Option<RateQ>,
}

/// `[host.cc.dctcp]`: DCTCP on a rate, as the HPCC reference runs it
/// ([`DctcpParams`](rocesim_model::cc::DctcpParams)); defaults are the
/// reference's `--cc dctcp` at 100 Gb/s.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DctcpCfg {
    /// Alpha's gain per window of ACKs, [0, 1] (`EWMA_GAIN`).
    pub g: Option<f64>,
    /// Added once per window of ACKs without an echo (`DCTCP_RATE_AI`).
    pub rate_ai: Option<RateQ>,
    /// The rate a cut never goes below (`MIN_RATE`).
    pub min_rate: Option<RateQ>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicCfg {
    pub name: String,
    pub mac: Option<Mac>,
    /// The interface address; a bond slave has none (the bond has it).
    pub ip: Option<IpNet>,
    /// The interface's own default gateway, on its subnet: the default
    /// route of its own table (`ip route add default via GW dev eth3
    /// table eth3`), which RDMA address resolution (bound to the device)
    /// and, with `policy_routing`, traffic from its address take before
    /// the host's `gateway`. A multi-rail GPU server gives each rail NIC
    /// its leaf's address (`[topology] kind = "rail"` does).
    pub gateway: Option<Ip>,
    /// Port speed; defaults to the rate of the link it is cabled to.
    pub rate: Option<RateQ>,
    /// Ethernet MTU (IP bytes); RoCE's path MTU is the largest IB MTU that
    /// fits in it with the RoCE headers (as mlx5 derives it).
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// 802.1Q VLAN id; tagged frames carry the priority in PCP.
    pub vlan: Option<u16>,
}

fn default_mtu() -> u32 {
    1500
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BondCfg {
    pub name: String,
    pub mode: BondMode,
    pub slaves: Vec<String>,
    #[serde(default = "default_policy")]
    pub xmit_hash_policy: HashPolicy,
    /// MII monitor interval (`miimon`); 0 disables link monitoring.
    #[serde(default = "default_miimon")]
    pub miimon: Dur,
    /// How long a carrier must be back before the slave is used again,
    /// counted from the first poll that sees it, in whole `miimon`
    /// intervals (the kernel rounds down to a multiple of `miimon`).
    #[serde(default = "zero_dur")]
    pub updelay: Dur,
    /// As `updelay`, for a carrier loss.
    #[serde(default = "zero_dur")]
    pub downdelay: Dur,
    pub ip: Option<IpNet>,
    /// Defaults to the first slave's MAC, as Linux does.
    pub mac: Option<Mac>,
    /// RoCE LAG port selection.
    #[serde(default)]
    pub lag: LagSelect,
    #[serde(default)]
    pub lag_hash: LagHash,
    /// Hash buckets per port of the port-selection table.
    #[serde(default = "one_u32")]
    pub lag_buckets: u32,
    /// Gratuitous ARPs the bond sends from its new active slave after a
    /// failover (active-backup), one per MII poll: the kernel's
    /// `num_grat_arp` (0 to 255, default 1).
    #[serde(default = "one_u8")]
    pub num_grat_arp: u8,
}

fn one_u8() -> u8 {
    1
}

fn default_policy() -> HashPolicy {
    HashPolicy::Layer2
}
fn default_miimon() -> Dur {
    Dur(Ps::from_ms(100))
}
fn one_u32() -> u32 {
    1
}
