//! The scenario keys of a lossless fabric: a switch's ECN marking
//! (`[switch.ecn]`), its buffer and PFC (`[switch.mmu]`), a host NIC's PFC
//! (`[host.pfc]`), and how a switch's or a NIC's egress ports pick the
//! queue they serve next (`[switch.ets]`, `[host.ets]`). Like the rest of the schema: what a user may write,
//! nothing more; [`crate::build`] checks the values against the fabric.

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, IntoDeserializer, MapAccess, Visitor};

use super::scalars::{Bytes, Dur, RateQ};
use rocesim_model::time::Rate;
use rocesim_model::units;

/// One value for every port, or one per link speed:
/// `kmin = "400KB"` or `kmin = { "100Gbps" = "400KB", "400Gbps" = "1600KB" }`
/// (ECN thresholds scale with the speed of the port that marks).
#[derive(Debug, Clone, PartialEq)]
pub enum PerSpeed<T> {
    All(T),
    BySpeed(Vec<(Rate, T)>),
}

impl<T: Copy> PerSpeed<T> {
    /// The value for a port running at `rate`, if there is one.
    pub fn at(&self, rate: Rate) -> Option<T> {
        match self {
            PerSpeed::All(v) => Some(*v),
            PerSpeed::BySpeed(m) => m.iter().find(|(r, _)| *r == rate).map(|&(_, v)| v),
        }
    }

    /// The speeds a table names, for a hint.
    pub fn speeds(&self) -> Vec<Rate> {
        match self {
            PerSpeed::All(_) => Vec::new(),
            PerSpeed::BySpeed(m) => m.iter().map(|&(r, _)| r).collect(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PerSpeed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = PerSpeed<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a value, or a table of values per link speed such as { \"100Gbps\" = ..., \"400Gbps\" = ... }",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                T::deserialize(s.into_deserializer()).map(PerSpeed::All)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(PerSpeed::All)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(PerSpeed::All)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(PerSpeed::All)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(Rate, T)> = Vec::new();
                while let Some(k) = m.next_key::<String>()? {
                    let rate = units::parse_rate(&k).map_err(de::Error::custom)?;
                    if out.iter().any(|(r, _)| *r == rate) {
                        return Err(de::Error::custom(format!("speed `{k}` is given twice")));
                    }
                    out.push((rate, m.next_value::<T>()?));
                }
                Ok(PerSpeed::BySpeed(out))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Where a switch reads the queue and marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MarkAt {
    /// When the packet joins the egress queue, on the bytes ahead of it:
    /// VOQ chassis (Broadcom DNX/Jericho) and Linux `tc red`.
    Enqueue,
    /// When it leaves, on the bytes left behind it: what SONiC's ECN test
    /// plan checks on NVIDIA Spectrum and Broadcom Trident/Tomahawk
    /// (lossless-facts §5b), and the HPCC reference. The congestion news
    /// leaves with the packet instead of waiting behind the queue.
    #[default]
    Dequeue,
}

/// RED/ECN marking on a switch's egress queues (`[switch.ecn]`): per
/// (egress port, priority), with Kmin, Kmax and Pmax per port speed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EcnCfg {
    /// The priorities whose egress queues mark.
    pub priorities: Vec<u8>,
    /// No marking up to this many bytes queued.
    pub kmin: PerSpeed<Bytes>,
    /// Every packet marked above this many bytes queued.
    pub kmax: PerSpeed<Bytes>,
    /// Marking probability at Kmax (linear from 0 at Kmin).
    pub pmax: PerSpeed<f64>,
    #[serde(default)]
    pub mark: MarkAt,
    /// Only ECN-capable (ECT) packets are marked, as RFC 3168 routers do;
    /// `false` marks Not-ECT packets too (the HPCC reference).
    #[serde(default = "yes")]
    pub ect_only: bool,
}

fn yes() -> bool {
    true
}

/// `headroom`: a size, or `"auto"`: each port's own need
/// ([`rocesim_model::world::mmu::HeadroomNeed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadroomCfg {
    Auto,
    Bytes(Bytes),
}

impl<'de> Deserialize<'de> for HeadroomCfg {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = HeadroomCfg;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"auto\" or a size such as \"64KB\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<HeadroomCfg, E> {
                if s == "auto" {
                    return Ok(HeadroomCfg::Auto);
                }
                units::parse_size(s)
                    .map(|b| HeadroomCfg::Bytes(Bytes(b)))
                    .map_err(|e| E::custom(format!("{e}; or \"auto\", sized from the port's link")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<HeadroomCfg, E> {
                self.visit_str(&v.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<HeadroomCfg, E> {
                self.visit_str(&v.to_string())
            }
        }
        d.deserialize_any(V)
    }
}

/// Named switch buffer configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MmuPreset {
    /// The HPCC reference's switch-mmu.cc as its third.cc sets it up:
    /// priorities 0 and 7 (the hpcc profile's ACKs, the reference's queue
    /// 0) unaccounted, 1-6 lossless, 4 KiB reserves, 3 KiB XON
    /// offset, headroom 3 × rate × delay, threshold free >> shift.
    HpccReference,
}

/// How a port asks its peer to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PauseMode {
    /// 802.1Qbb per-priority flow control.
    #[default]
    Pfc,
    /// 802.3x PAUSE: every priority at once.
    Global,
}

/// What the PFC watchdog does to a queue in a pause storm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchdogActionCfg {
    Drop,
    Forward,
}

/// `[switch.mmu.watchdog]` (SONiC's `pfcwd start --action ... detection-time restoration-time`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WatchdogCfg {
    pub detect: Dur,
    pub restore: Dur,
    pub action: WatchdogActionCfg,
}

/// The switch buffer and its flow control (`[switch.mmu]`). Absent: one
/// shared pool that tail-drops every priority when full.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MmuCfg {
    pub preset: Option<MmuPreset>,
    /// The lossless (PFC-protected) priorities; the others tail-drop.
    #[serde(default)]
    pub lossless: Vec<u8>,
    /// Headroom per (ingress port, lossless priority): a size, or
    /// `"auto"`, each port's need from its speed, link, the MTUs and its
    /// peer's reaction delay.
    pub headroom: Option<HeadroomCfg>,
    /// Reserved per (ingress port, priority).
    pub reserve: Option<Bytes>,
    /// Dynamic threshold: a queue may hold alpha × the free shared pool.
    pub alpha: Option<f64>,
    /// XON once a paused queue is this far under its threshold.
    pub resume_offset: Option<Bytes>,
    /// The time an XOFF asks for, in quanta of 512 bit times.
    pub quanta: Option<u16>,
    #[serde(default)]
    pub pause: PauseMode,
    pub watchdog: Option<WatchdogCfg>,
    /// The switch ports' MAC/PHY latency before a received pause acts, in
    /// bit times (default: IEEE 802.3's budget per speed; 0 with the
    /// `hpcc_reference` preset).
    pub interface_delay_bits: Option<PerSpeed<u64>>,
    /// Their pause response time, in bit times (default: 802.3 Annex
    /// 31B.3.7's bound per speed; 0 with the preset).
    pub response_time_bits: Option<PerSpeed<u64>>,
}

/// A host NIC's flow control and receive buffers (`[host.pfc]`): the
/// priorities it pauses and obeys, a receiver slower than its link, how
/// fast it reacts to its switch's pauses. Without it, a NIC obeys the
/// pauses its switch sends for the priorities that switch has PFC on.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostPfcCfg {
    /// The priorities PFC is enabled on (`mlnx_qos --pfc`): the NIC pauses
    /// them when its buffer backs up, and obeys its peer's pauses for
    /// them only. Empty with `pause = "global"`. None: the NIC takes its
    /// switch's (DCBX, willing) and has no receive buffer of its own; the
    /// table then only sets how fast it reacts.
    #[serde(default)]
    pub priorities: Vec<u8>,
    /// The host drains the NIC's receive buffers at this rate (default:
    /// line rate, they never back up).
    pub rx_rate: Option<RateQ>,
    /// One receive FIFO for every priority, of this size (default 256
    /// KiB; the `rxe` and `hpcc` profiles' layout, or any NIC's that sets
    /// it, `xoff` or `xon`).
    pub rx_buffer: Option<Bytes>,
    /// XOFF at this many bytes waiting in it (default half the buffer).
    pub xoff: Option<Bytes>,
    /// XON at this many (default half of xoff).
    pub xon: Option<Bytes>,
    /// ConnectX receive buffers (`mlnx_qos --prio2buffer`): the buffer
    /// 0..=7 of each priority 0..=7, eight values. Default: the PFC
    /// priorities in buffer 1, the others in buffer 0 (with 802.3x PAUSE
    /// all in buffer 0).
    pub prio2buffer: Option<Vec<u8>>,
    /// Their sizes (`mlnx_qos --buffer_size`), buffer 0 first, up to
    /// eight (the rest 0), rounded down to 128-byte cells. Default:
    /// 130,944 bytes each for buffers 0 and 1.
    pub buffer_size: Option<Vec<Bytes>>,
    /// The cable length in metres the driver sizes lossless headroom for
    /// (`mlnx_qos --cable_len`, 1..=999; default 7): it is told, it does
    /// not measure the link.
    pub cable_len: Option<u32>,
    /// The netdev's `max_mtu`; the driver keeps at least 9216 bytes
    /// between a lossless buffer's XOFF and XON (default 9216).
    pub max_mtu: Option<u32>,
    /// What the buffers may take together (default 262,016 bytes, as
    /// `mlnx_qos` showed on one ConnectX).
    pub max_buffer_size: Option<Bytes>,
    /// The host stops draining from this time on (a hung receiver).
    pub stall_at: Option<Dur>,
    pub quanta: Option<u16>,
    #[serde(default)]
    pub pause: PauseMode,
    /// The NIC counts a `tx_pause_storm_warning_events` after pausing
    /// without a break this long ...
    pub stall_warning: Option<Dur>,
    /// ... and a `tx_pause_storm_error_events` after this long, and stops
    /// pausing (mlx5's stall prevention).
    pub stall_error: Option<Dur>,
    /// The NICs' MAC/PHY latency before a received pause acts, in bit
    /// times (default: IEEE 802.3's budget per speed; 0 for the `hpcc`
    /// profile).
    pub interface_delay_bits: Option<PerSpeed<u64>>,
    /// Their pause response time, in bit times (default: 802.3 Annex
    /// 31B.3.7's bound per speed; 0 for the `hpcc` profile).
    pub response_time_bits: Option<PerSpeed<u64>>,
}

/// A traffic class's transmission selection (`mlnx_qos --tsa`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TsaCfg {
    Strict,
    Ets,
    /// Refused with an explanation ([`rocesim_model::world::port::select`]).
    Vendor,
}

/// Named egress schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EtsPreset {
    /// The HPCC reference's switch queue (`BEgressQueue::DoDequeueRR`):
    /// priority 0 first, then one frame per queue in round robin.
    HpccReference,
}

/// `[switch.ets]`, `[host.ets]`: the egress scheduler of every port of the
/// switch, of every NIC of the host, as `mlnx_qos --prio_tc --tsa --tcbw`
/// sets it (8 values each). A key left out keeps what a port without ETS
/// does: each priority its own class (`prio_tc` 0..7), all `strict`, no
/// shares. Without the table: strict priority.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EtsCfg {
    /// A switch runs the HPCC reference's round robin instead (no other
    /// key then).
    pub preset: Option<EtsPreset>,
    /// Priority → traffic class, per priority 0..7.
    pub prio_tc: Option<Vec<u8>>,
    /// Per traffic class: `"strict"` or `"ets"`.
    pub tsa: Option<Vec<TsaCfg>>,
    /// Per traffic class, percent: the `ets` ones sum to 100, the others 0.
    pub tcbw: Option<Vec<u8>>,
    /// The credit one round of deficit round robin hands out across the
    /// ETS classes, each its `tcbw` share of it (default 12800 bytes).
    pub round: Option<Bytes>,
}
