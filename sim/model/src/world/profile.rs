//! NIC profiles: how a host's NIC builds, acknowledges, marks and paces its
//! RC traffic, beyond what verbs let an application choose.
//!
//! Two NICs given the same QP attributes still behave differently on the
//! wire: how many PSNs they keep unacknowledged, how often they ask for an
//! ACK, which ECN bits they write, whether they run DCQCN. A profile is a
//! named set of those settings; every setting is also a scenario key
//! (`[host.transport]`, `[host.dcqcn]`) that overrides its profile's value.
//!
//! | setting | `rxe` | `connectx` (default) | `hpcc` |
//! |---|---|---|---|
//! | unacked-PSN window (`max_unacked_psns`) | 128 (`RXE_MAX_UNACKED_PSNS`) | none beyond the spec's ([`QpConfig::SPEC_WINDOW`]) | none |
//! | AckReq on every Nth packet (`ack_req_every`) | 66 (`RXE_MAX_PKT_PER_ACK` test) | 256 (`log_ack_req_freq` 8) | 1 |
//! | queued ACKs coalesce (`ack_coalesce`) | yes | no | no |
//! | ACK priority on the wire (`ack_priority`) | the QP's | the QP's | the QP's (the reference's ACKs carry the data's `pg`) |
//! | NIC queue of ACKs (`ack_queue`) | their priority's | their priority's | 7, ahead of all data (the reference's ACK queue) |
//! | payload per packet (`segment_bytes`) | path MTU | path MTU | 1000 bytes |
//! | bytes in flight (`window_bytes`, `window_follows_rate`) | none | none | none (import-hpcc sets the reference's `HAS_WIN` window: bytes, or `"path"` per flow) |
//! | IP ECN bits (`ecn`) | the traffic class's | ECT(0) where DCQCN runs (`cc`) | Not-ECT |
//! | priority from (`trust`) | DSCP | PCP (SL & 7) | DSCP |
//! | bytes billed per data packet beyond its payload, per ACK, NAK or CNP (`header_bytes`, `ack_bytes`) | the real frame | the real frame | 48, 60 (the reference's sizes; see [`Billing`]) |
//! | UDP ports switches hash a flow's frames by (`ecmp_ports`) | `udp`: its own | `udp` | `flow`: the reference's (source 10000 + the pair's earlier flows, destination the flow's `dport`) |
//! | DCQCN (`[host.dcqcn]`) | off | RP and NP on all priorities, [`DcqcnParams::connectx`] | on, the reference's values ([`hpcc_dcqcn`]), the CNP as BECN on the ACK (`cnp_on_ack`) |
//!
//! Sources: rxe's constants in Linux drivers/infiniband/sw/rxe/rxe_param.h
//! (`RXE_MAX_PKT_PER_ACK`, `RXE_MAX_UNACKED_PSNS`), its TOS copy in
//! rxe_net.c (`prepare4`); ConnectX: DSCP = TC >> 2 and PCP trust with
//! priority SL & 7 in drivers/infiniband/hw/mlx5/qp.c (`mlx5_set_path`),
//! DCQCN knobs as include/linux/mlx5/mlx5_ifc.h names them
//! (`cong_control_r_roce_ecn_rp`/`_np`); the reference's NIC: the HPCC ns-3
//! simulator (alibaba-edu/High-Precision-Congestion-Control),
//! simulation/src/point-to-point/model/rdma-hw.cc and
//! simulation/scratch/third.cc.
//!
//! `log_ack_req_freq` is a field of the ConnectX QP context (2^n packets
//! between AckReqs). The value 8 (256 packets) is second-hand: it is what
//! mlx4's kernel driver and NVIDIA's own mlx5 code that programs QP
//! contexts directly (the mlx5 FPGA connection code, UCX's mlx5 transport
//! default) write; what the verbs path programs on current firmware was not
//! read. Other DEVX users write 0 (every packet).
//!
//! ConnectX sets ECT(0) itself when congestion control runs on the QP's
//! priority and ignores the ECN bits of the traffic class (`mlx5_set_path`
//! programs only the DSCP; that the NIC sets ECT itself is not verified
//! from code or a vendor document); its CNPs carry ECT(0) as the
//! ConnectX-4 Lx CNP captured in scapy's test/contrib/roce.uts shows.

use crate::cc::{Algorithm, DcqcnParams};
use crate::packet::{Billing, L3, Packet};
use crate::time::{Ps, Rate};
use crate::transport::QpConfig;
use serde::Deserialize;

/// The named profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileBase {
    /// Soft-RoCE (the Linux `rdma_rxe` driver).
    Rxe,
    /// An NVIDIA ConnectX NIC (mlx5).
    ConnectX,
    /// The NIC of the HPCC ns-3 reference simulator, for comparisons.
    Hpcc,
}

impl ProfileBase {
    /// Every profile, as scenarios name them.
    pub const NAMES: [&'static str; 3] = ["rxe", "connectx", "hpcc"];

    pub fn from_name(name: &str) -> Option<ProfileBase> {
        match name {
            "rxe" => Some(ProfileBase::Rxe),
            "connectx" => Some(ProfileBase::ConnectX),
            "hpcc" => Some(ProfileBase::Hpcc),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ProfileBase::Rxe => "rxe",
            ProfileBase::ConnectX => "connectx",
            ProfileBase::Hpcc => "hpcc",
        }
    }
}

/// Which IP ECN bits the NIC writes into the packets of a QP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EcnMode {
    /// ECT(0) where DCQCN's reaction point runs on the QP's priority,
    /// Not-ECT elsewhere; the traffic class's ECN bits are ignored.
    Cc,
    /// The traffic class's two low bits, as given (rxe copies the byte).
    Tc,
    /// Always Not-ECT.
    NotEct,
}

/// Which priority a QP's ACKs and NAKs leave at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPriority {
    /// The QP's own, in its turn with its data.
    Qp,
    /// A fixed priority, ahead of the data of lower ones (the reference
    /// sends its ACKs on its top queue).
    Fixed(u8),
}

impl AckPriority {
    /// The fixed priority, if any.
    pub fn fixed(self) -> Option<u8> {
        match self {
            AckPriority::Qp => None,
            AckPriority::Fixed(p) => Some(p),
        }
    }
}

/// A window of payload bytes in flight (the HPCC reference's `HAS_WIN`,
/// `VAR_WIN`): its NIC sends a QP's next packet while the bytes sent and not
/// acknowledged are below the window (`RdmaQueuePair::IsWinBound`), so
/// `ceil(window / segment)` full packets fly. Following the rate, the
/// window is `bytes x rate / line rate` (at least 1 byte) at the QP's
/// current DCQCN rate (`RdmaQueuePair::GetWin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteWindow {
    pub bytes: u64,
    pub follows_rate: bool,
    /// `bytes` is each QP's own: its flow's path's bandwidth-delay
    /// product (the reference's `GLOBAL_T 0`), set when the flow starts.
    pub per_path: bool,
}

impl ByteWindow {
    /// Packets of `segment` payload bytes in flight at most at `rate` on
    /// a port of `line`.
    pub fn packets(&self, segment: u32, rate: Rate, line: Rate) -> u32 {
        let bytes = if self.follows_rate {
            let w = u128::from(self.bytes) * u128::from(rate.bps()) / u128::from(line.bps().max(1));
            (w as u64).max(1)
        } else {
            self.bytes.max(1)
        };
        bytes
            .div_ceil(u64::from(segment.max(1)))
            .min(u64::from(u32::MAX)) as u32
    }
}

/// ACKs and NAKs sent apart from the QP's data: the NIC egress queue they
/// wait in and the priority they carry (`None`: the QP's, with its DSCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckRoute {
    pub queue: u8,
    pub prio: Option<u8>,
}

/// DCQCN on a NIC: its knobs and where it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnSetup {
    pub params: DcqcnParams,
    /// Bit `p`: the reaction point runs on priority `p`
    /// (`/sys/class/net/<if>/ecn/roce_rp/enable/<p>`).
    pub rp_prios: u8,
    /// Bit `p`: the notification point answers CE marks on priority `p`
    /// (`…/ecn/roce_np/enable/<p>`).
    pub np_prios: u8,
    /// No CNP of its own: the ACK (or NAK) of the marked packet carries
    /// the notification, as BTH BECN (the reference's CNP flag on its
    /// ACK, `qbbHeader::FLAG_CNP`).
    pub cnp_on_ack: bool,
}

impl DcqcnSetup {
    pub fn rp_on(&self, prio: u8) -> bool {
        self.rp_prios & (1 << (prio & 7)) != 0
    }
    pub fn np_on(&self, prio: u8) -> bool {
        self.np_prios & (1 << (prio & 7)) != 0
    }
    /// Whether a rate change re-times the packet waiting for its slot. The
    /// reference's DCQCN never does (see [`crate::cc::retime`]); a
    /// hardware rate limiter applies a new rate at once.
    pub fn retimes(&self) -> bool {
        self.params.model == crate::cc::RpModel::ConnectX
    }
}

/// Everything a NIC profile decides. See the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct NicProfile {
    pub base: ProfileBase,
    /// The QP's unacknowledged-PSN window; [`QpConfig::SPEC_WINDOW`] for
    /// none beyond the spec's.
    pub max_unacked_psns: u32,
    pub ack_req_every: u32,
    pub coalesce_acks: bool,
    pub ack_priority: AckPriority,
    /// The NIC egress queue ACKs and NAKs wait in, whatever priority they
    /// carry on the wire; `None`: their priority's.
    pub ack_queue: Option<u8>,
    /// 0 = the path MTU.
    pub segment_bytes: u32,
    /// A window of payload bytes in flight per QP; `None`: none.
    pub byte_window: Option<ByteWindow>,
    pub ecn: EcnMode,
    pub trust: Trust,
    /// `None`: DCQCN is off, and with it every reaction and notification
    /// point.
    pub dcqcn: Option<DcqcnSetup>,
    /// The algorithm the reaction points run (`rp_prios` of `dcqcn` say
    /// where): DCQCN, or one clocked by ACKs, which reads the notification
    /// point's BECN on the ACKs (`cnp_on_ack`).
    pub algorithm: Algorithm,
    /// The sizes its frames take on the wire and in buffers.
    pub billing: Billing,
    /// The UDP ports switches hash its flows' frames by.
    pub ecmp_ports: EcmpPorts,
}

impl NicProfile {
    pub fn preset(base: ProfileBase) -> NicProfile {
        match base {
            ProfileBase::Rxe => NicProfile {
                base,
                max_unacked_psns: 128,
                ack_req_every: 66,
                coalesce_acks: true,
                ack_priority: AckPriority::Qp,
                ack_queue: None,
                segment_bytes: 0,
                byte_window: None,
                ecn: EcnMode::Tc,
                trust: Trust::Dscp,
                dcqcn: None,
                algorithm: Algorithm::Dcqcn,
                billing: Billing::REAL,
                ecmp_ports: EcmpPorts::Udp,
            },
            ProfileBase::ConnectX => NicProfile {
                base,
                max_unacked_psns: QpConfig::SPEC_WINDOW,
                ack_req_every: 256,
                coalesce_acks: false,
                ack_priority: AckPriority::Qp,
                ack_queue: None,
                segment_bytes: 0,
                byte_window: None,
                ecn: EcnMode::Cc,
                trust: Trust::Pcp,
                dcqcn: Some(DcqcnSetup {
                    params: DcqcnParams::connectx(),
                    rp_prios: 0xFF,
                    np_prios: 0xFF,
                    cnp_on_ack: false,
                }),
                algorithm: Algorithm::Dcqcn,
                billing: Billing::REAL,
                ecmp_ports: EcmpPorts::Udp,
            },
            ProfileBase::Hpcc => NicProfile {
                base,
                max_unacked_psns: QpConfig::SPEC_WINDOW,
                ack_req_every: 1,
                coalesce_acks: false,
                // The reference's NIC serves its ACK queue before every
                // QP (`RdmaEgressQueue::GetNextQindex`), blocked only by a
                // pause of queue 0 with `ACK_HIGH_PRIO 1`, which no switch
                // sends; the ACK itself carries the data's `pg`, so its
                // switches queue it with the data (`SwitchNode::SendToDev`:
                // `qIndex = ch.udp.pg`, the ACK's `pg` in the same union;
                // `AckHighPrio` is never set by third.cc).
                ack_priority: AckPriority::Qp,
                ack_queue: Some(7),
                segment_bytes: 1000,
                byte_window: None,
                ecn: EcnMode::NotEct,
                trust: Trust::Dscp,
                dcqcn: Some(DcqcnSetup {
                    params: hpcc_dcqcn(),
                    rp_prios: 0xFF,
                    np_prios: 0xFF,
                    cnp_on_ack: true,
                }),
                algorithm: Algorithm::Dcqcn,
                // Its data packet is the payload, a 6-byte SeqTsHeader,
                // UDP 8, IPv4 20 and a 14-byte PppHeader standing for
                // Ethernet (`RdmaHw::GetNxtPacket`; `PppHeader::
                // GetStaticSize` returns 14); its ACK is padded to 60
                // (`RdmaHw::ReceiveUdp`); the port times `GetSize()` bytes
                // with no gap (`QbbNetDevice::TransmitStart`) and the MMU
                // counts the same (`SwitchNode::SendToDev`). Its CNP is a
                // flag on the ACK, here BECN (`cnp_on_ack`): no frame.
                billing: Billing::HPCC,
                // Its flows' ports: third.cc numbers each host pair's
                // from 10000, `SwitchNode::GetOutDev` hashes them.
                ecmp_ports: EcmpPorts::Flow,
            },
        }
    }

    /// Where the NIC sends ACKs and NAKs apart from its QPs' data: `None`
    /// when they go in their QP's turn at its priority.
    pub fn ack_route(&self) -> Option<AckRoute> {
        match (self.ack_queue, self.ack_priority.fixed()) {
            (None, None) => None,
            (None, Some(p)) => Some(AckRoute {
                queue: p,
                prio: Some(p),
            }),
            (Some(queue), prio) => Some(AckRoute { queue, prio }),
        }
    }

    /// `cfg` with this NIC's protocol constants.
    pub fn qp_config(&self, cfg: QpConfig) -> QpConfig {
        QpConfig {
            max_unacked_psns: self.max_unacked_psns,
            ack_req_every: self.ack_req_every,
            coalesce_acks: self.coalesce_acks,
            segment_bytes: self.segment_bytes,
            ..cfg
        }
    }

    /// The IP ECN bits of the packets of a QP with traffic class `tc` on
    /// priority `prio`.
    pub fn ecn_bits(&self, tc: u8, prio: u8) -> u8 {
        match self.ecn {
            EcnMode::Tc => tc & 3,
            EcnMode::NotEct => 0,
            EcnMode::Cc if self.dcqcn.as_ref().is_some_and(|d| d.rp_on(prio)) => ECT0,
            EcnMode::Cc => 0,
        }
    }

    /// The DCQCN setup where the reaction point runs on `prio`.
    pub fn rp(&self, prio: u8) -> Option<&DcqcnSetup> {
        self.dcqcn.as_ref().filter(|d| d.rp_on(prio))
    }

    /// The DCQCN setup where the notification point runs on `prio`.
    pub fn np(&self, prio: u8) -> Option<&DcqcnSetup> {
        self.dcqcn.as_ref().filter(|d| d.np_on(prio))
    }
}

/// The ECN codepoint ECT(0) (`10`).
pub const ECT0: u8 = 0b10;

/// The DCQCN of the HPCC ns-3 reference with the values of its 2:1 and
/// 16:1 experiments (their `config.txt` for `CC_MODE 1`):
/// `ALPHA_RESUME_INTERVAL 1`, `RATE_DECREASE_INTERVAL 4`, `RP_TIMER 300`,
/// `EWMA_GAIN 1/256`, `FAST_RECOVERY_TIMES 1`, `RATE_AI 20Mb/s`,
/// `RATE_HAI 200Mb/s`, `MIN_RATE 100Mb/s`, `CLAMP_TARGET_RATE 0`, mapped by
/// [`DcqcnParams::hpcc_reference`].
pub fn hpcc_dcqcn() -> DcqcnParams {
    let cfg = crate::cc::ReferenceDcqcn {
        alpha_resume_interval: Ps::from_us(1),
        rate_decrease_interval: Ps::from_us(4),
        rp_timer: Ps::from_us(300),
        ewma_gain: 1.0 / 256.0,
        fast_recovery_times: 1,
        rate_ai: Some(Rate(20_000_000)),
        rate_hai: Some(Rate(200_000_000)),
        min_rate: Rate(100_000_000),
        clamp_target_rate: false,
    };
    DcqcnParams::hpcc_reference(&cfg).expect("the anchors' values map onto the knobs")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Trust {
    #[default]
    Dscp,
    Pcp,
}

impl Trust {
    /// The priority a port of this trust mode gives a frame it receives:
    /// DSCP >> 3 of an IP packet (the default DSCP-to-priority map), else
    /// the VLAN tag's PCP, 0 untagged.
    #[inline]
    pub fn priority_of(self, pkt: &Packet) -> u8 {
        match (self, pkt.l3) {
            (Trust::Dscp, L3::V2 { .. } | L3::IcmpUnreachable { .. } | L3::Tcp { .. }) => {
                pkt.dscp().unwrap_or(0) >> 3
            }
            (Trust::Dscp, L3::V1 { .. } | L3::Arp { .. } | L3::MacControl(_)) => {
                pkt.vlan.map_or(0, |v| v.pcp)
            }
            (Trust::Pcp, _) => pkt.vlan.map_or(0, |v| v.pcp),
        }
    }
}

/// `ecmp_ports`: which UDP ports switches hash a QP's frames by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EcmpPorts {
    /// The frame's own.
    Udp,
    /// The HPCC reference's numbering of the flow.
    Flow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum RoceMode {
    #[serde(rename = "v1")]
    V1,
    #[default]
    #[serde(rename = "v2")]
    V2,
}

impl RoceMode {
    pub fn name(self) -> &'static str {
        match self {
            RoceMode::V1 => "v1",
            RoceMode::V2 => "v2",
        }
    }
}

/// The RoCE versions a NIC implements: `v1` only (ConnectX-3), or `v1+v2`
/// (ConnectX-3 Pro, ConnectX-4 and later), whose GID table lists each
/// address once per type (`/sys/class/infiniband/*/ports/1/gid_attrs/types`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
pub enum RoceModes {
    #[serde(rename = "v1")]
    V1,
    #[default]
    #[serde(rename = "v1+v2")]
    V1V2,
}

impl RoceModes {
    pub fn supports(self, m: RoceMode) -> bool {
        m == RoceMode::V1 || self == RoceModes::V1V2
    }

    /// The newest version: the drivers' `default_roce_mode`.
    pub fn newest(self) -> RoceMode {
        match self {
            RoceModes::V1 => RoceMode::V1,
            RoceModes::V1V2 => RoceMode::V2,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_carry_the_documented_constants() {
        let rxe = NicProfile::preset(ProfileBase::Rxe);
        let q = rxe.qp_config(QpConfig::default());
        // rxe's constants are QpConfig's defaults: the rxe profile is
        // today's behaviour.
        assert_eq!(q, QpConfig::default());
        assert_eq!(rxe.ecn_bits(106, 3), 2, "TC 106 = DSCP 26 | ECT(0), copied");
        assert_eq!(rxe.ecn_bits(104, 3), 0);

        let cx = NicProfile::preset(ProfileBase::ConnectX);
        let q = cx.qp_config(QpConfig::default());
        assert_eq!((q.max_unacked_psns, q.ack_req_every), ((1 << 22) - 1, 256));
        assert!(!q.coalesce_acks);
        assert_eq!(cx.trust, Trust::Pcp);
        // ECT(0) from the NIC whatever the TC says; none where DCQCN is off.
        assert_eq!(cx.ecn_bits(104, 3), ECT0);
        assert_eq!(cx.ecn_bits(107, 3), ECT0);
        let mut off = cx.clone();
        off.dcqcn.as_mut().unwrap().rp_prios = 0b0000_1000;
        assert_eq!(off.ecn_bits(107, 4), 0);
        assert_eq!(off.ecn_bits(107, 3), ECT0);
        let d = cx.dcqcn.as_ref().unwrap();
        assert_eq!(d.params, DcqcnParams::connectx());
        assert!(d.retimes() && !d.cnp_on_ack);

        let h = NicProfile::preset(ProfileBase::Hpcc);
        let q = h.qp_config(QpConfig::default());
        assert_eq!(
            (q.ack_req_every, q.segment(), q.segment_bytes),
            (1, 1000, 1000)
        );
        assert_eq!(
            h.ack_route(),
            Some(AckRoute {
                queue: 7,
                prio: None
            })
        );
        assert_eq!(cx.ack_route(), None);
        let mut fixed = cx.clone();
        fixed.ack_priority = AckPriority::Fixed(6);
        assert_eq!(
            fixed.ack_route(),
            Some(AckRoute {
                queue: 6,
                prio: Some(6)
            })
        );
        assert_eq!(h.ecn_bits(106, 3), 0);
        let d = h.dcqcn.as_ref().unwrap();
        assert!(!d.retimes() && d.cnp_on_ack);
        // EWMA_GAIN 1/256 = 4/1024; MIN_RATE 100 Mb/s.
        assert_eq!((d.params.dce_tcp_g, d.params.rpg_min_rate), (1020, 100));
        assert_eq!(d.params.min_time_between_cnps, 0);
        assert_eq!(
            (h.billing.header_bytes, h.billing.ack_bytes),
            (6 + 8 + 20 + 14, 60)
        );
        assert_eq!((rxe.billing, cx.billing), (Billing::REAL, Billing::REAL));
    }

    /// The reference's window of 52,000 bytes: 52 packets of 1000 bytes
    /// (it sends while 51,000 are in flight); 52,001 bytes: 53. Following
    /// the rate at 25 of 100 Gb/s: 13,000 bytes, 13 packets; at a rate so
    /// low that the window is under a byte, one byte: one packet.
    #[test]
    fn a_byte_window_in_packets() {
        let (line, seg) = (Rate::gbps(100), 1000);
        let w = |bytes, follows_rate| ByteWindow {
            bytes,
            follows_rate,
            per_path: false,
        };
        assert_eq!(w(52_000, false).packets(seg, Rate::gbps(25), line), 52);
        assert_eq!(w(52_001, false).packets(seg, line, line), 53);
        assert_eq!(w(52_000, true).packets(seg, Rate::gbps(25), line), 13);
        assert_eq!(w(52_000, true).packets(seg, Rate(1), line), 1);
        assert_eq!(w(0, false).packets(seg, line, line), 1);
    }

    #[test]
    fn names_round_trip() {
        for n in ProfileBase::NAMES {
            assert_eq!(ProfileBase::from_name(n).unwrap().name(), n);
        }
        assert_eq!(ProfileBase::from_name("mlx5"), None);
    }
}
