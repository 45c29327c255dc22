//! The congestion point of a switch: RED/ECN marking on its egress
//! queues, one [`RedParams`] per (egress port, priority).
//!
//! ```text
//!   enqueue ─▶ mark at enqueue? on the bytes queued ahead ─▶ egress queue (prio) ─▶ pop
//!                                                                           │
//!                                       mark at dequeue? on the bytes left behind ◀┘ ─▶ wire
//! ```
//!
//! A marked packet leaves with both ECN bits set (CE); the receiving NIC
//! counts it (`np_ecn_marked_roce_packets`) and its notification point
//! answers with a CNP. Only IP packets carry an ECN field (RoCE v1 frames
//! are never marked), a packet already CE is not counted again, and a
//! Not-ECT packet is marked only when the switch marks everything
//! (`ect_only = false`, as the HPCC reference does). Each switch draws
//! from its own random stream, so a switch marking one more packet never
//! changes another's decisions.

use rand_chacha::ChaCha8Rng;

use super::port::PRIOS;
use crate::cc::red::{CE, MarkPoint, RedParams};
use crate::packet::Packet;

pub struct Ecn {
    /// The distinct RED rows (per priority; `None`: that queue never
    /// marks): ports of one link speed share one, so the row a packet
    /// reads is in cache, where a row per port was a cold line per
    /// packet in a fabric of hundreds of ports.
    rows: Vec<[Option<RedParams>; PRIOS]>,
    /// Per local port: its row.
    row_of: Vec<u32>,
    at_dequeue: bool,
    rng: ChaCha8Rng,
}

impl Ecn {
    pub fn new(red: Vec<[Option<RedParams>; PRIOS]>, mark: MarkPoint, rng: ChaCha8Rng) -> Ecn {
        let mut rows: Vec<[Option<RedParams>; PRIOS]> = Vec::new();
        let row_of = red
            .iter()
            .map(|r| match rows.iter().position(|x| x == r) {
                Some(i) => i as u32,
                None => {
                    rows.push(*r);
                    (rows.len() - 1) as u32
                }
            })
            .collect();
        Ecn {
            rows,
            row_of,
            at_dequeue: mark == MarkPoint::Dequeue,
            rng,
        }
    }

    fn row(&self, local: u32) -> &[Option<RedParams>; PRIOS] {
        &self.rows[self.row_of[local as usize] as usize]
    }

    /// Whether marking happens as packets leave (else as they join).
    #[inline]
    pub fn at_dequeue(&self) -> bool {
        self.at_dequeue
    }

    /// Priorities that mark on local port `local`, as a bit mask.
    pub fn marking(&self, local: u32) -> u8 {
        let red = self.row(local);
        (0..PRIOS)
            .filter(|&p| red[p].is_some())
            .fold(0, |m, p| m | 1 << p)
    }

    /// RED on the egress queue (`local`, `prio`) holding `queue_bytes`
    /// (ahead of the packet at enqueue, behind it at dequeue): marks `pkt`
    /// CE if it draws so, and returns whether it newly marked it.
    #[inline]
    pub fn mark(&mut self, local: u32, prio: usize, queue_bytes: u64, pkt: &mut Packet) -> bool {
        let Some(red) = &self.rows[self.row_of[local as usize] as usize][prio] else {
            return false;
        };
        let Some(ecn) = pkt.ip_ecn() else {
            return false;
        };
        if ecn == CE || !red.should_mark(queue_bytes, ecn, &mut self.rng) {
            return false;
        }
        pkt.set_ce();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::L3;
    use crate::rng::component_rng;
    use crate::time::Ps;
    use core::net::Ipv4Addr;
    use roce_codec::frame::EthRepr;

    fn pkt(l3_ecn: Option<u8>) -> Packet {
        let l3 = match l3_ecn {
            Some(ecn) => L3::V2 {
                src: Ipv4Addr::new(10, 0, 0, 1),
                dst: Ipv4Addr::new(10, 0, 0, 2),
                dscp: 26,
                ecn,
                ttl: 64,
                sport: 0xC000,
                ecmp: crate::packet::hash_ports(0xC000),
            },
            None => L3::V1 {
                sgid: Ipv4Addr::new(10, 0, 0, 1),
                dgid: Ipv4Addr::new(10, 0, 0, 2),
                tclass: 0x6a,
                flow_label: 0,
            },
        };
        Packet {
            eth: EthRepr {
                dst: [2, 0, 0, 0, 0, 2],
                src: [2, 0, 0, 0, 0, 1],
            },
            vlan: None,
            l3,
            ib: Default::default(),
            prio: 3,
            frame_len: 1000,
            billed_len: 1000,
            wire_extra: 24,
            src_qp: 0,
            ingress: u32::MAX,
            mad: u32::MAX,
            int: crate::packet::NO_INT,
            ts: Ps::ZERO,
        }
    }

    /// Port 0 marks priority 3 between 10 and 20 kB (Pmax 1); port 1
    /// marks nothing.
    fn ecn(mark_non_ect: bool) -> Ecn {
        let red = RedParams {
            kmin_bytes: 10_000,
            kmax_bytes: 20_000,
            pmax: 1.0,
            mark_point: MarkPoint::Enqueue,
            mark_non_ect,
        };
        let mut port0 = [None; PRIOS];
        port0[3] = Some(red);
        Ecn::new(
            vec![port0, [None; PRIOS]],
            MarkPoint::Enqueue,
            component_rng(1, "switch:t:ecn"),
        )
    }

    #[test]
    fn marks_ect_packets_above_kmax_and_nothing_below_kmin() {
        let mut e = ecn(false);
        assert_eq!(e.marking(0), 1 << 3);
        assert_eq!(e.marking(1), 0);
        for (q, want) in [(10_000, false), (20_001, true)] {
            let mut p = pkt(Some(0b10));
            assert_eq!(e.mark(0, 3, q, &mut p), want, "{q} bytes queued");
            assert_eq!(p.ip_ecn(), Some(if want { CE } else { 0b10 }));
        }
        // Not the marking priority, not a marking port.
        let mut p = pkt(Some(0b10));
        assert!(!e.mark(0, 4, 50_000, &mut p) && !e.mark(1, 3, 50_000, &mut p));
    }

    #[test]
    fn not_ect_only_when_marking_everything_and_ce_is_not_counted_twice() {
        let mut p = pkt(Some(0));
        assert!(!ecn(false).mark(0, 3, 50_000, &mut p), "Not-ECT left alone");
        assert!(
            ecn(true).mark(0, 3, 50_000, &mut p),
            "the reference marks it"
        );
        assert_eq!(p.ip_ecn(), Some(CE));
        assert!(!ecn(true).mark(0, 3, 50_000, &mut p), "already CE");
        let mut v1 = pkt(None);
        assert!(!ecn(true).mark(0, 3, 50_000, &mut v1), "no IP header");
        assert!(matches!(v1.l3, L3::V1 { tclass: 0x6a, .. }));
    }

    /// Half way between Kmin and Kmax with Pmax 1: half the packets.
    #[test]
    fn the_ramp_marks_its_fraction() {
        let mut e = ecn(false);
        let marked = (0..10_000)
            .filter(|_| e.mark(0, 3, 15_000, &mut pkt(Some(0b01))))
            .count();
        assert!((4_800..5_200).contains(&marked), "{marked}");
    }
}
