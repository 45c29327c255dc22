//! The notification point: the receiving NIC turns CE-marked packets into
//! CNPs, at most one per `min_time_between_cnps` per pacing key.
//!
//! ```text
//!  CE packet ──▶ key = scope(packet) ──▶ last CNP for key ≥ gap ago? ──yes──▶ send CNP, remember now
//!                                                                   └──no───▶ nothing
//! ```
//!
//! Which packets share a key is a NIC setting: per QP, per NIC port, per
//! (source, destination) IP pair or per destination IP of the CNP (the
//! marked packet's source). On ConnectX, mlxconfig `ROCE_CC_CNP_MODERATION`
//! chooses per port or per flow (NVIDIA's ConnectX-8 firmware 40.45.1020
//! release notes, which make per port the default again); the IP-pair and
//! destination-IP scopes are those of a public RoCE NIC test harness's CNP
//! checker (Python `cnp_check`). A gap of 0 answers every marked packet,
//! which is what the HPCC reference does (a CNP flag on the ACK of every
//! CE-marked packet).

use core::net::Ipv4Addr;

use super::dcqcn::{CnpScope, DcqcnParams};
use crate::time::Ps;
use rustc_hash::FxHashMap as FastMap;

/// The CE-marked packet as the NP sees it, for building its pacing key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkedPacket {
    /// The NIC port it arrived on.
    pub port: u32,
    /// The sender (the reaction point, and the CNP's destination).
    pub src: Ipv4Addr,
    /// This NIC's address.
    pub dst: Ipv4Addr,
    /// BTH DestQP: the receiving QP.
    pub dest_qpn: u32,
}

/// A pacing key: what one CNP pacer covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CnpKey {
    Qp { port: u32, qpn: u32 },
    Port(u32),
    IpPair(Ipv4Addr, Ipv4Addr),
    DestIp(Ipv4Addr),
}

impl CnpScope {
    pub fn key(self, pkt: &MarkedPacket) -> CnpKey {
        match self {
            CnpScope::Qp => CnpKey::Qp {
                port: pkt.port,
                qpn: pkt.dest_qpn,
            },
            CnpScope::Port => CnpKey::Port(pkt.port),
            CnpScope::IpPair => CnpKey::IpPair(pkt.src, pkt.dst),
            CnpScope::DestIp => CnpKey::DestIp(pkt.src),
        }
    }
}

/// CNP pacing of one NIC (or NIC port: the world chooses how many).
#[derive(Debug, Clone)]
pub struct NotificationPoint {
    scope: CnpScope,
    gap: Ps,
    last: FastMap<CnpKey, Ps>,
    marked: u64,
    sent: u64,
}

impl NotificationPoint {
    pub fn new(params: &DcqcnParams) -> NotificationPoint {
        NotificationPoint {
            scope: params.cnp_scope,
            gap: params.cnp_gap(),
            last: FastMap::default(),
            marked: 0,
            sent: 0,
        }
    }

    /// A CE-marked RoCE packet arrived at `now`: whether to send a CNP for
    /// it now. Times must not go backwards.
    pub fn on_ce(&mut self, now: Ps, pkt: &MarkedPacket) -> bool {
        self.marked += 1;
        if self.gap == Ps::ZERO {
            self.sent += 1;
            return true;
        }
        let key = self.scope.key(pkt);
        let due = match self.last.get(&key) {
            Some(&t) => now.saturating_sub(t) >= self.gap,
            None => true,
        };
        if due {
            self.last.insert(key, now);
            self.sent += 1;
        }
        due
    }

    /// `np_ecn_marked_roce_packets`: CE-marked packets seen.
    pub fn ecn_marked_packets(&self) -> u64 {
        self.marked
    }
    /// `np_cnp_sent`: CNPs this NP decided to send.
    pub fn cnps_sent(&self) -> u64 {
        self.sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(port: u32, src: [u8; 4], qpn: u32) -> MarkedPacket {
        MarkedPacket {
            port,
            src: Ipv4Addr::from(src),
            dst: Ipv4Addr::new(10, 0, 0, 9),
            dest_qpn: qpn,
        }
    }

    fn np(scope: CnpScope, gap_us: u32) -> NotificationPoint {
        NotificationPoint::new(&DcqcnParams {
            cnp_scope: scope,
            min_time_between_cnps: gap_us,
            ..DcqcnParams::connectx()
        })
    }

    #[test]
    fn paces_per_key_with_a_gap() {
        let mut n = np(CnpScope::Qp, 4);
        let a = pkt(0, [10, 0, 0, 1], 0x11);
        let b = pkt(0, [10, 0, 0, 1], 0x12);
        // t=0 first mark: CNP. t=3.999 us: 3999 ns < 4 us, none.
        // t=4 us exactly: the gap has passed, CNP. Another QP is its own key.
        assert!(n.on_ce(Ps::ZERO, &a));
        assert!(!n.on_ce(Ps(3_999_999), &a));
        assert!(n.on_ce(Ps::from_us(4), &a));
        assert!(n.on_ce(Ps::from_us(4), &b));
        assert!(!n.on_ce(Ps::from_us(5), &b));
        assert_eq!((n.ecn_marked_packets(), n.cnps_sent()), (5, 3));
    }

    #[test]
    fn scopes_group_what_they_say() {
        let a = pkt(0, [10, 0, 0, 1], 0x11);
        let other_qp = pkt(0, [10, 0, 0, 1], 0x12);
        let other_src = pkt(0, [10, 0, 0, 2], 0x13);
        let other_port = pkt(1, [10, 0, 0, 1], 0x11);
        // (scope, CNP for other_qp, other_src, other_port) right after `a`.
        let cases = [
            (CnpScope::Qp, true, true, true),
            (CnpScope::Port, false, false, true),
            (CnpScope::IpPair, false, true, false),
            (CnpScope::DestIp, false, true, false),
        ];
        for (scope, q, s, p) in cases {
            let mut n = np(scope, 50);
            assert!(n.on_ce(Ps::ZERO, &a));
            assert_eq!(n.clone().on_ce(Ps(1), &other_qp), q, "{scope:?} qp");
            assert_eq!(n.clone().on_ce(Ps(1), &other_src), s, "{scope:?} src");
            assert_eq!(n.clone().on_ce(Ps(1), &other_port), p, "{scope:?} port");
        }
        // IpPair and DestIp differ on the destination address.
        let other_dst = MarkedPacket {
            dst: Ipv4Addr::new(10, 0, 0, 8),
            ..a
        };
        let mut pair = np(CnpScope::IpPair, 50);
        let mut dest = np(CnpScope::DestIp, 50);
        assert!(pair.on_ce(Ps::ZERO, &a) && dest.on_ce(Ps::ZERO, &a));
        assert!(pair.on_ce(Ps(1), &other_dst));
        assert!(!dest.on_ce(Ps(1), &other_dst));
    }

    #[test]
    fn zero_gap_answers_every_marked_packet() {
        let mut n = np(CnpScope::Port, 0);
        let a = pkt(0, [10, 0, 0, 1], 0x11);
        for _ in 0..5 {
            assert!(n.on_ce(Ps(7), &a));
        }
        assert_eq!(n.cnps_sent(), 5);
    }
}
