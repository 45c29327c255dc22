//! QP numbers as a NIC hands them out, and the UDP source port they imply.
//!
//! A QPN is 24 bits. QPN 0 (SMI) and 1 (GSI) are special on every device.
//! ConnectX firmware gives a process small, consecutive QPNs from a
//! per-device counter (perftest prints e.g. `QPN 0x0108`, `0x0109`, ...);
//! soft-RoCE (rxe) starts at 0x11. [`QpnAllocator::sequential`] models
//! that; [`QpnAllocator::random`] draws distinct QPNs from the component's
//! RNG, for studies where the exact numbers must not matter.
//!
//! The RoCEv2 UDP source port of a connected QP is derived from the two
//! QPNs (include/rdma/ib_verbs.h `rdma_get_udp_sport`, which mlx5 applies at
//! INIT→RTR in drivers/infiniband/hw/mlx5/qp.c `mlx5_set_path_udp_sport`;
//! perftest leaves the flow label 0):
//!
//! ```text
//!  flow_label != 0 ? flow_label : calc_flow_label(lqpn, rqpn)   (symmetric)
//!        └──▶ fold 20 bits to 14 ──▶ | 0xC000 ──▶ sport 0xC000..=0xFFFF
//! ```
//! Because the derived label is symmetric, the requester's data and the
//! responder's ACKs of one connection carry the same source port.

use rand_chacha::rand_core::Rng;
use std::collections::BTreeSet;
use thiserror::Error;

/// The first QPN of a device when the scenario gives none: small and
/// sequential like a freshly loaded ConnectX (the ConnectX-4 Lx CNP
/// captured in scapy's test/contrib/roce.uts shows QPN 0x118).
pub const DEFAULT_QPN_BASE: u32 = 0x100;

const QPN_MAX: u32 = 0xFF_FFFF;
/// QPN 0 and 1 are the SMI and GSI QPs, never handed to applications.
const FIRST_USABLE: u32 = 2;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QpnError {
    #[error(
        "qpn_base = {0:#x} is out of range: expected 2..=0xFFFFFF (0 and 1 are the SMI/GSI QPs)"
    )]
    BadBase(u32),
    #[error("the 24-bit QPN space is exhausted after {allocated} QPs")]
    Exhausted { allocated: u32 },
}

#[derive(Debug, Clone)]
enum Mode {
    Sequential { next: u32 },
    Random { used: BTreeSet<u32> },
}

/// Hands out the QPNs of one device.
#[derive(Debug, Clone)]
pub struct QpnAllocator {
    mode: Mode,
    allocated: u32,
}

impl QpnAllocator {
    /// `base`, `base + 1`, ... like a NIC's QPN counter.
    pub fn sequential(base: u32) -> Result<QpnAllocator, QpnError> {
        if !(FIRST_USABLE..=QPN_MAX).contains(&base) {
            return Err(QpnError::BadBase(base));
        }
        Ok(QpnAllocator {
            mode: Mode::Sequential { next: base },
            allocated: 0,
        })
    }

    /// Distinct QPNs drawn uniformly from 2..=0xFFFFFF with the RNG given
    /// to [`QpnAllocator::allocate`].
    pub fn random() -> QpnAllocator {
        QpnAllocator {
            mode: Mode::Random {
                used: BTreeSet::new(),
            },
            allocated: 0,
        }
    }

    /// The next QPN. Sequential allocation ignores `rng`; random
    /// allocation draws from it (a component RNG keeps runs deterministic).
    pub fn allocate<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Result<u32, QpnError> {
        let exhausted = QpnError::Exhausted {
            allocated: self.allocated,
        };
        let qpn = match &mut self.mode {
            Mode::Sequential { next } => {
                if *next > QPN_MAX {
                    return Err(exhausted);
                }
                *next += 1;
                *next - 1
            }
            Mode::Random { used } => {
                if used.len() as u32 > QPN_MAX - FIRST_USABLE {
                    return Err(exhausted);
                }
                loop {
                    // Rejection sampling keeps the draw uniform; the space
                    // is 2^24, so collisions are rare until it fills up.
                    let v = rng.next_u32() & QPN_MAX;
                    if v >= FIRST_USABLE && used.insert(v) {
                        break v;
                    }
                }
            }
        };
        self.allocated += 1;
        Ok(qpn)
    }

    /// QPNs handed out so far.
    pub fn allocated(&self) -> u32 {
        self.allocated
    }
}

/// The RoCEv2 UDP source port of a connected QP from its local and remote
/// QPN and its GRH flow label (0 = derive from the QPNs), exactly as Linux
/// programs it (`rdma_get_udp_sport`).
pub fn udp_sport(lqpn: u32, rqpn: u32, flow_label: u32) -> u16 {
    roce_codec::hash::roce_udp_sport(flow_label, lqpn, rqpn)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::ChaCha8Rng;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn sequential_counts_up_from_base() {
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let mut a = QpnAllocator::sequential(0x108).unwrap();
        let got: Vec<u32> = (0..3).map(|_| a.allocate(&mut rng).unwrap()).collect();
        assert_eq!(got, [0x108, 0x109, 0x10A]);
        assert_eq!(a.allocated(), 3);
        assert_eq!(
            QpnAllocator::sequential(1).unwrap_err(),
            QpnError::BadBase(1)
        );
        assert_eq!(
            QpnAllocator::sequential(0x100_0000).unwrap_err(),
            QpnError::BadBase(0x100_0000)
        );
        let mut top = QpnAllocator::sequential(QPN_MAX).unwrap();
        assert_eq!(top.allocate(&mut rng), Ok(QPN_MAX));
        assert_eq!(
            top.allocate(&mut rng),
            Err(QpnError::Exhausted { allocated: 1 })
        );
    }

    #[test]
    fn random_is_distinct_in_range_and_seeded() {
        let draw = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut a = QpnAllocator::random();
            (0..1000)
                .map(|_| a.allocate(&mut rng).unwrap())
                .collect::<Vec<_>>()
        };
        let v = draw(7);
        assert_eq!(v, draw(7), "same seed, same QPNs");
        assert_ne!(v, draw(8));
        let set: BTreeSet<u32> = v.iter().copied().collect();
        assert_eq!(set.len(), v.len());
        assert!(v.iter().all(|&q| (2..=QPN_MAX).contains(&q)));
        // Uniform over 24 bits: some QPN above 2^23 among 1000 draws.
        assert!(v.iter().any(|&q| q > 1 << 23));
    }

    #[test]
    fn sport_follows_rdma_get_udp_sport() {
        assert_eq!(udp_sport(0x11, 0x12, 0), 0xC132);
        assert_eq!(udp_sport(0x123, 0x456, 0), 0xEDD1);
        assert_eq!(udp_sport(0x1A2B3C, 0x0F0E0D, 0), 0xE5B9);
        assert_eq!(udp_sport(0xD2, 0x118, 0), 0xE5B3);
        // Both ends of the connection agree.
        assert_eq!(udp_sport(0x118, 0xD2, 0), 0xE5B3);
        // A non-zero flow label wins and is only folded.
        assert_eq!(udp_sport(0x11, 0x12, 0x4EDC2), 0xEDD1);
    }
}
