//! The scenario file as serde types: what a user may write, nothing more
//! (`deny_unknown_fields` everywhere). Quantities are parsed by their own
//! types so a bad unit is reported at the value that holds it.
//!
//! Cross references (a link endpoint naming a NIC, a workload naming a host)
//! are plain strings here; `World::build` (in `world::build`) resolves them and reports
//! dangling ones at their key.

use core::net::Ipv4Addr;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

pub use rocesim_model::net::{IpNet, parse_ipnet};
pub use rocesim_model::world::bond::{BondMode, HashPolicy, LagHash, LagSelect};
pub use rocesim_model::world::cm::CmAnswer;
pub use rocesim_model::world::profile::{EcmpPorts, RoceMode, RoceModes, Trust};

use rocesim_model::time::{Ps, Rate};
use rocesim_model::units;

/// A rate written as `100Gbps` / `25G` / `400Mbps` (the unit is required).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateQ(pub Rate);
/// A duration written as `1us`, `500ns`, `2.5ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Ps);
/// A byte count written as `4096`, `8MiB`, `1MB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

macro_rules! quantity {
    ($ty:ident, $parse:path, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map($ty).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
quantity!(
    RateQ,
    units::parse_rate,
    "a rate such as \"100Gbps\" or \"25G\""
);
quantity!(
    Dur,
    units::parse_duration,
    "a duration such as \"1us\" or \"500ns\""
);
quantity!(
    Bytes,
    units::parse_size,
    "a size such as \"4096\" or \"8MiB\""
);

/// A MAC address `02:00:00:00:00:01`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mac(pub [u8; 6]);

impl<'de> Deserialize<'de> for Mac {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_mac(&s).map(Mac).map_err(de::Error::custom)
    }
}

pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    let bad = || format!("`{s}` is not a MAC address (write e.g. \"02:00:00:00:00:01\")");
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        if p.len() != 2 {
            return Err(bad());
        }
        m[i] = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    if m[0] & 1 == 1 || m == [0; 6] {
        // An interface's own address must be a station's: frames to a
        // group address are flooded, and ARP could not answer with it.
        return Err(format!(
            "`{s}` is not a unicast MAC address (the first octet must be even, and not all zeros), e.g. \"02:00:00:00:00:01\""
        ));
    }
    Ok(m)
}

pub fn fmt_mac(m: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// A plain IPv4 address (gateway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ip(pub Ipv4Addr);

impl<'de> Deserialize<'de> for Ip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map(Ip)
            .map_err(|_| de::Error::custom(format!("`{s}` is not an IPv4 address")))
    }
}

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
    #[serde(default, rename = "tap")]
    pub taps: Vec<TapCfg>,
    /// What the run directory holds beyond its always-written files.
    #[serde(default)]
    pub output: OutputCfg,
    /// A generated fabric, already lowered into `hosts`, `switches` and
    /// `links` when serde sees it (`scenario::fabric`).
    pub topology: Option<super::fabric::TopologyCfg>,
    /// Flow workloads (`scenario::traffic`), lowered into `workloads`.
    #[serde(default, rename = "traffic")]
    pub traffic: Vec<super::traffic::TrafficCfg>,
    /// The flows `traffic` lowered, in start order.
    #[serde(skip)]
    pub flows: Vec<super::traffic::FlowRef>,
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
}

impl OutputCfg {
    pub fn sysfs(&self) -> bool {
        self.sysfs.unwrap_or(true)
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
    /// Split the fabric into this many parts (1 or 2), each simulated on
    /// a thread of its own in windows of the smallest link delay between
    /// them (`world::split`). Equal-time events of different parts are
    /// ordered by part, not by insertion, so the outputs are a function
    /// of the scenario, the seed and this number.
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
#[serde(rename_all = "snake_case")]
pub enum Connect {
    #[default]
    None,
    Socket,
    RdmaCm,
}

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
    /// The NIC profile (`world::NicProfile`): `connectx` (default), `rxe`
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
    /// Its NICs' PFC and receive buffer; none: they take every frame.
    pub pfc: Option<super::qos::HostPfcCfg>,
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
/// ConnectX firmware names them (`cc::DcqcnParams`). Every key defaults to
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
    /// Send each CNP right behind the ACK of the marked packet.
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

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicCfg {
    pub name: String,
    pub mac: Option<Mac>,
    /// The interface address; a bond slave has none (the bond has it).
    pub ip: Option<IpNet>,
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
fn zero_dur() -> Dur {
    Dur(Ps::ZERO)
}
fn one_u32() -> u32 {
    1
}

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

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub name: Option<String>,
    /// `host.nic` or `switch.port` (switch ports are created by links).
    pub a: String,
    pub b: String,
    pub rate: RateQ,
    #[serde(default = "zero_dur")]
    pub delay: Dur,
    /// Probability that a frame is lost on this link (each direction).
    #[serde(default)]
    pub loss: f64,
    /// Probability that an ECT frame crossing this link (either direction)
    /// arrives CE-marked: a stand-in for a congested hop the scenario does
    /// not model, to exercise the NIC's notification and reaction points.
    /// Switches mark by queue depth themselves (RED); this does not.
    #[serde(default)]
    pub ce_mark: f64,
    #[serde(default, rename = "event")]
    pub events: Vec<LinkEventCfg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    Down,
    Up,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEventCfg {
    pub at: Dur,
    pub state: LinkState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tool {
    IbWriteBw,
    IbSendBw,
    IbReadBw,
    Messages,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerbCfg {
    Write,
    WriteImm,
    Send,
    SendImm,
    Read,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageCfg {
    pub verb: VerbCfg,
    pub size: Bytes,
    /// QP index within the workload (default 0).
    #[serde(default)]
    pub qp: u32,
    /// Post time (default: at the workload's start, in order).
    pub at: Option<Dur>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadCfg {
    pub name: Option<String>,
    pub tool: Tool,
    /// How the two ends exchange QPNs and PSNs before the QPs start:
    /// `none` (the default: no set-up frames, the QPs start at once, as
    /// every shipped scenario's outputs assume) or `socket` (perftest's
    /// default: a TCP connection to port 18515 through the kernel IP path
    /// and its key messages, on the wire before the first RoCE packet) or
    /// `rdma_cm` (perftest's `-R`: CM REQ/REP/RTU MADs on QP1 over RoCE).
    #[serde(default)]
    pub connect: Connect,
    /// With `rdma_cm`: the server accepts (`accept`, default), has no
    /// listener (`no_listener`: REJ) or rejects (`reject`: REJ).
    #[serde(default)]
    pub cm_answer: CmAnswer,
    /// `host` or `host.interface` (NIC or bond) that runs the client.
    pub client: String,
    /// `host` or `host.interface` the client connects to.
    pub server: String,
    /// Message size (`-s`).
    #[serde(default = "default_size")]
    pub size: Bytes,
    /// Number of QPs (`-q`).
    #[serde(default = "one_u32")]
    pub qps: u32,
    /// Iterations per QP (`-n`); default 1000 unless `duration` is given.
    pub iters: Option<u64>,
    /// Run for this long instead of a number of iterations (`-D`; wins over
    /// `iters`, as in perftest).
    pub duration: Option<Dur>,
    /// Send queue depth (`-t`).
    #[serde(default = "default_tx_depth")]
    pub tx_depth: u32,
    /// Traffic class byte (`--tclass`, NCCL_IB_TC): DSCP << 2 | ECN.
    #[serde(default)]
    pub tc: u8,
    /// Service level (priority under PCP trust).
    #[serde(default)]
    pub sl: u8,
    /// RoCE path MTU (`-m`); default: the largest the interfaces allow.
    pub mtu: Option<u32>,
    #[serde(default = "default_timeout")]
    pub timeout: u8,
    #[serde(default = "seven")]
    pub retry_cnt: u8,
    #[serde(default = "seven")]
    pub rnr_retry: u8,
    #[serde(default = "default_min_rnr")]
    pub min_rnr_timer: u8,
    /// GRH flow label (`--flow_label`); 0 = derive from the QPNs.
    #[serde(default)]
    pub flow_label: u32,
    #[serde(default = "zero_dur")]
    pub start: Dur,
    /// Pace each client QP to this rate on the wire (perftest
    /// `--rate_limit`, a NIC's per-QP rate limiter; DCQCN moves it).
    pub rate_limit: Option<RateQ>,
    /// Explicit message list (`tool = "messages"`).
    #[serde(default, rename = "message")]
    pub messages: Vec<MessageCfg>,
    /// The port of its bond (1-based) the client's QPs send on, set after
    /// the round robin as `mlx5dv_modify_qp_lag_port` sets it: only on a
    /// bond in RoCE LAG queue-affinity mode. Flows of the HPCC reference's
    /// flow files get the NIC the reference picks (`scenario::traffic`).
    pub client_lag_port: Option<u8>,
    /// The same for the server's QPs.
    pub server_lag_port: Option<u8>,
}

fn default_size() -> Bytes {
    Bytes(65536)
}
fn default_tx_depth() -> u32 {
    128
}
fn default_timeout() -> u8 {
    14
}
fn seven() -> u8 {
    7
}
fn default_min_rnr() -> u8 {
    12
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
