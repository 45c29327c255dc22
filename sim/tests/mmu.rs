//! The switch buffer: hand-computed traces of the HPCC reference preset
//! (switch-mmu.cc semantics), a general ASIC-style configuration, the
//! headroom formulas, and properties: the accounting always adds up and
//! returns to zero, and a lossless priority never drops while its headroom
//! covers what arrives after XOFF.

use std::collections::VecDeque;

use proptest::prelude::*;
use rocesim::time::{Ps, Rate};
use rocesim::world::mmu::*;

const G100: Rate = Rate::gbps(100);
const PKT: u64 = 1048; // the reference's 1000-byte payload + 48 bytes of headers

fn accept(a: Admit) -> Option<PfcAction> {
    match a {
        Admit::Accept { pfc } => pfc,
        Admit::Drop(r) => panic!("dropped: {r:?}"),
    }
}

#[test]
fn reference_one_queue_fills_pauses_and_resumes() {
    // Two 100G ports with 1 µs links, 1 MiB of buffer.
    // Headroom per port: 1e11 × 1000 ns / 8 / 1e9 × 3 = 12,500 × 3 = 37,500.
    // Pool: 1,048,576 − 2 × 4096 − 2 × 37,500 = 965,384; shift 3 (NIC rate).
    let mut m = Mmu::hpcc_reference(1 << 20, &[(G100, Ps::from_us(1)); 2], G100).unwrap();
    assert_eq!(m.headroom_bytes(0), 37_500);
    assert_eq!(m.pool_bytes(), 965_384);
    assert_eq!(m.threshold(0, 3), 120_673); // 965,384 >> 3
    // Packets 1–3 fit the 4 KiB reserve (3,144 B); the 4th puts
    // 4,192 − 4,096 = 96 B in the shared pool.
    for _ in 0..3 {
        assert_eq!(accept(m.admit(0, 3, PKT)), None);
    }
    assert_eq!(m.shared_used_bytes(), 0);
    accept(m.admit(0, 3, PKT));
    assert_eq!(m.shared_used_bytes(), 96);
    assert_eq!(m.threshold(0, 3), 120_661); // (965,384 − 96) >> 3
    // Packet n goes to shared while 1048 n − 4096 ≤ (965,384 − S) >> 3 with
    // S = 1048 (n−1) − 4096. n = 106: 106,992 ≤ 859,440 >> 3 = 107,430.
    // n = 107: 108,040 > (965,384 − 106,992) >> 3 = 107,299: headroom, XOFF.
    for n in 5..=106 {
        assert_eq!(accept(m.admit(0, 3, PKT)), None, "packet {n}");
    }
    assert_eq!(m.shared_used_bytes(), 106_992);
    assert_eq!(accept(m.admit(0, 3, PKT)), Some(PfcAction::Xoff));
    let o = m.occupancy(0, 3);
    assert_eq!(
        (o.headroom_bytes, o.shared_bytes, o.paused),
        (PKT, 106_992, true)
    );
    // In flight after XOFF: 34 more fit the 37,500 B headroom (35 × 1048 =
    // 36,680); a 35th would need 37,728.
    for _ in 0..34 {
        assert_eq!(accept(m.admit(0, 3, PKT)), None);
    }
    assert_eq!(m.admit(0, 3, PKT), Admit::Drop(DropReason::HeadroomFull));
    assert_eq!(m.lossless_drops(), 1);
    assert_eq!(
        m.drops(DropReason::HeadroomFull),
        DropCount {
            packets: 1,
            bytes: PKT
        }
    );
    assert_eq!(m.used_bytes(), 141 * PKT);
    // Releases take from the headroom first (35 of them), then shared:
    // XON needs headroom 0 and S + 3072 ≤ (965,384 − S) >> 3, i.e.
    // S ≤ 104,534: after 3 more releases, S = 103,848 and 106,920 ≤ 107,692.
    for r in 1..=37 {
        assert_eq!(m.release(0, 3, PKT), None, "release {r}");
    }
    assert_eq!(m.occupancy(0, 3).headroom_bytes, 0);
    assert_eq!(m.release(0, 3, PKT), Some(PfcAction::Xon));
    assert_eq!(m.shared_used_bytes(), 103_848);
    for _ in 0..103 {
        assert_eq!(m.release(0, 3, PKT), None);
    }
    assert_eq!((m.used_bytes(), m.shared_used_bytes()), (0, 0));
    assert_eq!(m.peak_used_bytes(), 141 * PKT);
    let o = m.occupancy(0, 3);
    assert_eq!((o.xoff_sent, o.xon_sent, o.drops), (1, 1, 1));
    // Priority 0 (ACKs, CNPs) bypasses the MMU.
    assert_eq!(m.admit(1, 0, 1 << 30), Admit::Accept { pfc: None });
    assert_eq!(m.used_bytes(), 0);
}

#[test]
fn reference_incast_16_to_1() {
    // 17 ports at 100G / 1 µs, 32 MiB: pool = 33,554,432 − 17 × 37,500 −
    // 17 × 4096 = 32,847,300. Ports 1..16 send to port 0, round robin, one
    // 1048-byte packet per port per round, nothing leaves.
    let mut m = Mmu::hpcc_reference(32 << 20, &[(G100, Ps::from_us(1)); 17], G100).unwrap();
    assert_eq!(m.pool_bytes(), 32_847_300);
    let mut xoff = Vec::new();
    let mut round = 0;
    while xoff.len() < 16 {
        round += 1;
        for p in 1..=16 {
            if m.occupancy(p, 3).paused {
                continue;
            }
            if accept(m.admit(p, 3, PKT)) == Some(PfcAction::Xoff) {
                xoff.push((round, p, m.occupancy(p, 3).headroom_bytes));
            }
        }
    }
    // Round 1310, port 13: ports 1–12 hold 1310 packets (shared 1,368,784
    // each), ports 13–16 1309 (1,367,736): S = 21,896,352, threshold
    // (32,847,300 − S) >> 3 = 1,368,868 ≥ 1,368,784, so it goes to shared;
    // then S = 21,897,400, threshold 1,368,737 ≤ its 1,368,784: XOFF with no
    // headroom used. Ports 14–16, then 1–12 in round 1311, find
    // 1,368,784 + 1048 > 1,368,737: headroom, XOFF.
    let mut want: Vec<(i32, usize, u64)> = vec![
        (1310, 13, 0),
        (1310, 14, PKT),
        (1310, 15, PKT),
        (1310, 16, PKT),
    ];
    want.extend((1..=12).map(|p| (1311, p, PKT)));
    assert_eq!(xoff, want);
    assert_eq!(m.shared_used_bytes(), 21_897_400);
    assert_eq!(m.threshold(1, 3), 1_368_737);
    // One-way BDP is 12,500 B: let 34 more packets per port arrive after
    // XOFF. The 3 × BDP headroom holds them: no lossless drop.
    for _ in 0..34 {
        for p in 1..=16 {
            accept(m.admit(p, 3, PKT));
        }
    }
    assert_eq!(m.lossless_drops(), 0);
    assert_eq!(m.occupancy(13, 3).headroom_bytes, 34 * PKT);
    assert_eq!(m.occupancy(1, 3).headroom_bytes, 35 * PKT);
    // Port 0 drains them round robin: everyone resumes, and everything
    // returns to zero.
    let mut xon = 0;
    for _ in 0..2000 {
        for p in 1..=16 {
            if m.occupancy(p, 3).bytes > 0 && m.release(p, 3, PKT) == Some(PfcAction::Xon) {
                xon += 1;
            }
        }
    }
    assert_eq!(xon, 16);
    assert_eq!((m.used_bytes(), m.shared_used_bytes()), (0, 0));
}

#[test]
fn reference_threshold_shift_follows_port_speed() {
    // shift 3 at the NIC rate, one less per doubling: 100G 3, 200G 2,
    // 400G 1, 800G 0, 1.6T 0. Headroom 3 × rate × 1 µs / 8.
    let ports: Vec<(Rate, Ps)> = [100, 200, 400, 800, 1600]
        .iter()
        .map(|&g| (Rate::gbps(g), Ps::from_us(1)))
        .collect();
    let m = Mmu::hpcc_reference(64 << 20, &ports, G100).unwrap();
    let pool = m.pool_bytes();
    assert_eq!(
        pool,
        (64 << 20) - 5 * 4096 - (37_500 + 75_000 + 150_000 + 300_000 + 600_000)
    );
    let th: Vec<u64> = (0..5).map(|p| m.threshold(p, 3)).collect();
    assert_eq!(th, vec![pool >> 3, pool >> 2, pool >> 1, pool, pool]);
    // A delay of 1.2345 µs counts as 1234 ns: 1e11 × 1234 / 8e9 = 15,425 → 46,275.
    let m = Mmu::hpcc_reference(1 << 20, &[(G100, Ps(1_234_567))], G100).unwrap();
    assert_eq!(m.headroom_bytes(0), 46_275);
    let e = Mmu::hpcc_reference(50_000, &[(G100, Ps::from_us(1)); 2], G100).unwrap_err();
    assert_eq!(e.key, "buffer_bytes");
}

fn asic(ports: usize) -> MmuConfig {
    let mut classes = [PrioClass::Lossy; 8];
    classes[3] = PrioClass::Lossless;
    MmuConfig {
        buffer_bytes: 200_000,
        classes,
        reserve_bytes: [1000; 8],
        alpha: [1.0; 8],
        headroom_bytes: vec![20_000; ports],
        resume_offset_bytes: 2000,
    }
}

#[test]
fn lossy_tail_drops_at_the_dynamic_threshold() {
    // One port; 8 reserves of 1000 B and one lossless priority's 20,000 B
    // of headroom: pool = 200,000 − 8,000 − 20,000 = 172,000. alpha 1 for
    // priority 1: a lone queue may take x with x ≤ 172,000 − x, i.e. half.
    let mut m = Mmu::new(&asic(1)).unwrap();
    assert_eq!(m.pool_bytes(), 172_000);
    // 1000 B packets: 1 in the reserve, then shared k·1000 ≤ 172,000 −
    // (k−1)·1000 holds up to k = 86; the 88th packet (shared 87,000 >
    // 86,000) drops.
    for n in 1..=87 {
        assert_eq!(
            m.admit(0, 1, 1000),
            Admit::Accept { pfc: None },
            "packet {n}"
        );
    }
    assert_eq!(m.admit(0, 1, 1000), Admit::Drop(DropReason::SharedFull));
    assert_eq!(m.drops(DropReason::SharedFull).packets, 1);
    assert_eq!(m.lossless_drops(), 0);
    assert!(
        !m.occupancy(0, 1).paused,
        "lossy priorities are never paused"
    );
    // Another lossy queue now sees (172,000 − 86,000) = 86,000 free: it may
    // take x ≤ 86,000 − x, 43 packets past its reserve.
    for _ in 0..44 {
        accept(m.admit(0, 2, 1000));
    }
    assert_eq!(m.admit(0, 2, 1000), Admit::Drop(DropReason::SharedFull));
    assert_eq!(m.release(0, 1, 1000), None);
}

#[test]
fn lossless_pauses_when_shared_reaches_the_threshold() {
    // Pool 172,000, alpha 1: the lossless queue's threshold is 172,000 − S.
    // 1000 B packets: 1 in the reserve, then shared. At shared 86,000 the
    // threshold is 172,000 − 86,000 = 86,000: reaching it (not exceeding
    // it) is XOFF, with nothing in headroom yet.
    let mut m = Mmu::new(&asic(1)).unwrap();
    for n in 1..=86 {
        assert_eq!(accept(m.admit(0, 3, 1000)), None, "packet {n}");
    }
    assert_eq!(m.shared_used_bytes(), 85_000);
    assert_eq!(accept(m.admit(0, 3, 1000)), Some(PfcAction::Xoff));
    assert_eq!(m.threshold(0, 3), 86_000);
    assert_eq!(m.occupancy(0, 3).headroom_bytes, 0);
    // XON at shared + 2000 ≤ 172,000 − shared: shared ≤ 85,000.
    assert_eq!(m.release(0, 3, 1000), Some(PfcAction::Xon));
}

#[test]
fn a_pool_cap_holds_for_alpha_above_one() {
    // alpha 8: a lone queue may take x ≤ 8 (172,000 − x), 8/9 of the pool:
    // with 1000 B packets it stops at 153,000 (154,000 > 8 × 19,000).
    let mut cfg = asic(1);
    cfg.alpha = [8.0; 8];
    let mut m = Mmu::new(&cfg).unwrap();
    while let Admit::Accept { .. } = m.admit(0, 1, 1000) {}
    assert_eq!(m.shared_used_bytes(), 153_000);
    // A second queue with 7000 B packets: reserve 1000, so 6000 then 7000
    // go to shared (13,000 ≤ 8 × 13,000), leaving 6000 free. The next needs
    // 20,000 ≤ 8 × 6000 by the threshold, but 7000 > 6000 free: the pool
    // cap drops it instead of overflowing the buffer.
    accept(m.admit(0, 2, 7000));
    accept(m.admit(0, 2, 7000));
    assert_eq!(m.shared_used_bytes(), 166_000);
    assert_eq!(m.admit(0, 2, 7000), Admit::Drop(DropReason::SharedFull));
    // A lossless packet in the same spot pauses: the 6000 bytes the pool
    // still has are its, the other 1000 go to headroom.
    assert_eq!(accept(m.admit(0, 3, 1000)), None, "its reserve");
    assert_eq!(accept(m.admit(0, 3, 7000)), Some(PfcAction::Xoff));
    assert_eq!(m.occupancy(0, 3).headroom_bytes, 1000);
    assert_eq!(m.shared_used_bytes(), 172_000);
}

#[test]
fn general_config_validation() {
    Mmu::new(&asic(4)).unwrap();
    let key = |c: &MmuConfig| c.validate().unwrap_err().key;
    let mut c = asic(4);
    c.headroom_bytes[2] = 0;
    let e = c.validate().unwrap_err();
    assert_eq!(e.key, "headroom_bytes[2]");
    assert!(e.hint.unwrap().contains("pfc_headroom_bytes"));
    // Without a lossless priority, no headroom is needed.
    c.classes[3] = PrioClass::Lossy;
    c.validate().unwrap();
    let mut c = asic(4);
    c.alpha[5] = 0.0;
    assert_eq!(key(&c), "alpha[5]");
    c.alpha[5] = f64::NAN;
    assert_eq!(key(&c), "alpha[5]");
    c.classes[5] = PrioClass::Bypass; // not accounted: its alpha is unused
    c.validate().unwrap();
    // 10 ports × (8 × 1000) reserves + 10 × 20,000 headroom = 280,000 > 200,000.
    let e = Mmu::new(&asic(10)).unwrap_err();
    assert_eq!(
        (e.key.as_str(), e.problem.as_str()),
        (
            "buffer_bytes",
            "200000 bytes cannot hold the reserves (80000 bytes) and the headroom (200000 bytes)"
        )
    );
}

#[test]
fn pfc_action_reevaluates_both_edges() {
    let mut m = Mmu::hpcc_reference(1 << 20, &[(G100, Ps::from_us(1)); 2], G100).unwrap();
    // Port 0: 103 packets, shared 103 × 1048 − 4096 = 103,848 under its
    // threshold (965,384 − 103,848) >> 3 = 107,692.
    for _ in 0..103 {
        accept(m.admit(0, 3, PKT));
    }
    assert_eq!(m.pfc_action(0, 3), None);
    // Port 1 grows: port 0's threshold falls to 103,848 or below once
    // port 1's shared reaches 30,745, i.e. after 34 packets (31,536). The
    // reference would notice only at port 0's next arrival; pfc_action
    // notices now.
    for _ in 0..34 {
        accept(m.admit(1, 3, PKT));
    }
    assert_eq!(m.threshold(0, 3), 103_750); // (965,384 − 135,384) >> 3
    assert_eq!(m.pfc_action(0, 3), Some(PfcAction::Xoff));
    assert_eq!(m.pfc_action(0, 3), None, "edge-triggered");
    // Port 1 drains: the threshold is back at 107,692 ≥ 103,848 + 3072, so
    // port 0 may resume although none of its own packets left.
    for _ in 0..34 {
        m.release(1, 3, PKT);
    }
    assert_eq!(m.pfc_action(0, 3), Some(PfcAction::Xon));
    assert_eq!(m.pfc_action(0, 1), None);
    assert_eq!(m.pfc_action(0, 0), None, "bypass");
}

#[test]
fn headroom_formulas() {
    // 10G, 100 m, 1500-byte MTUs. Itemised: PFC frame 672 bits + cable
    // 2 × 100 m × 5 ns × 10 Gb/s = 10,000 bits + the 10G pause reaction 60
    // quanta = 30,720 bits → 41,392 bits = 5,174 B; + 2 × 1500 = 8,174 B.
    // Mellanox: 3000 + 3840 + 130 × 10 Gb/s × 100 m / 100 m = 8,140 B.
    let h = HeadroomInputs {
        rate: Rate::gbps(10),
        cable_m: 100,
        mtu_sender_bytes: 1500,
        mtu_receiver_bytes: 1500,
        interface_delay_bits: 0,
        peer_response_bits: RESPONSE_BITS_10G,
    };
    assert_eq!(pfc_headroom_bytes(&h), 8_174);
    assert_eq!(
        mellanox_headroom_bytes(1500, 1500, 100, Rate::gbps(10)),
        8_140
    );
    // In general the two differ by the PFC frame (84 B, which the
    // shorthand leaves out) and by 130 against 125 B per 100 m per Gb/s
    // (5.2 against 5 ns/m): shorthand − itemised = 5·m·Gb/s/100 − 84, ±1
    // for rounding.
    for gbps in [10u64, 25] {
        for m in [10u64, 100, 300, 1000] {
            let rate = Rate::gbps(gbps);
            let a = pfc_headroom_bytes(&HeadroomInputs {
                rate,
                cable_m: m,
                ..h
            }) as i64;
            let b = mellanox_headroom_bytes(1500, 1500, m, rate) as i64;
            let want = (5 * m * gbps / 100) as i64 - 84;
            assert!(
                (b - a - want).abs() <= 1,
                "{gbps}G {m} m: {b} - {a} vs {want}"
            );
        }
    }
    // 100G, 100 m, 4200-byte frames with the 802.3 upper bounds: 672 +
    // 100,000 + 122,880 + 201,728 = 425,280 bits = 53,160 B; + 8,400 =
    // 61,560 B. The shorthand's constant is the 10G reaction time: it says
    // 25,240 B and undercounts at 100G.
    let h100 = HeadroomInputs {
        rate: Rate::gbps(100),
        cable_m: 100,
        mtu_sender_bytes: 4200,
        mtu_receiver_bytes: 4200,
        interface_delay_bits: INTERFACE_BITS_100G,
        peer_response_bits: RESPONSE_BITS_100G,
    };
    assert_eq!(pfc_headroom_bytes(&h100), 61_560);
    assert_eq!(
        mellanox_headroom_bytes(4200, 4200, 100, Rate::gbps(100)),
        25_240
    );
}

/// A random buffer configuration: 1–5 ports, each priority lossless,
/// lossy or bypass, reserves 0–3000, alpha 1/16…4, headroom 5–60 KB.
fn config() -> impl Strategy<Value = MmuConfig> {
    (
        1usize..6,
        prop::array::uniform8(0u8..3),
        prop::array::uniform8(0u64..3000),
        prop::array::uniform8(prop::sample::select(vec![0.0625, 0.25, 0.5, 1.0, 2.0, 4.0])),
        5_000u64..60_000,
        200_000u64..2_000_000,
    )
        .prop_map(|(ports, cls, reserve, alpha, head, extra)| {
            let classes = cls.map(|c| match c {
                0 => PrioClass::Lossless,
                1 => PrioClass::Lossy,
                _ => PrioClass::Bypass,
            });
            let mut c = MmuConfig {
                buffer_bytes: 0,
                classes,
                reserve_bytes: reserve,
                alpha,
                headroom_bytes: vec![head; ports],
                resume_offset_bytes: 3072,
            };
            let lossless = classes
                .iter()
                .filter(|&&c| c == PrioClass::Lossless)
                .count() as u64;
            c.buffer_bytes = ports as u64 * (reserve.iter().sum::<u64>() + lossless * head) + extra;
            c
        })
}

fn check_sums(m: &Mmu) -> Result<(), TestCaseError> {
    let (mut used, mut shared) = (0, 0);
    for p in 0..m.ports() {
        for q in 0..8 {
            let o = m.occupancy(p, q);
            used += o.bytes;
            shared += o.shared_bytes;
            prop_assert!(o.headroom_bytes <= m.headroom_bytes(p));
            prop_assert!(!o.paused || m.class(q) == PrioClass::Lossless);
        }
    }
    prop_assert_eq!(used, m.used_bytes());
    prop_assert_eq!(shared, m.shared_used_bytes());
    prop_assert!(m.shared_used_bytes() <= m.pool_bytes());
    prop_assert!(m.peak_used_bytes() >= m.used_bytes());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Any admits, releases and re-evaluations: the per-queue figures add
    /// up to the totals, headroom never overflows, the pool never
    /// overflows, and releasing everything returns every counter to zero
    /// with no priority left paused.
    #[test]
    fn accounting_adds_up_and_returns_to_zero(
        cfg in config(),
        ops in prop::collection::vec((0u8..4, 0usize..5, 0usize..8, 64u64..9000), 1..400)) {
        let mut m = Mmu::new(&cfg).unwrap();
        let n = m.ports();
        let mut held: Vec<Vec<VecDeque<u64>>> = vec![vec![VecDeque::new(); 8]; n];
        for (op, port, prio, bytes) in ops {
            let port = port % n;
            match op {
                0 | 1 => {
                    if let Admit::Accept { .. } = m.admit(port, prio, bytes) {
                        if m.class(prio) != PrioClass::Bypass {
                            held[port][prio].push_back(bytes);
                        }
                    }
                }
                2 => {
                    if let Some(b) = held[port][prio].pop_front() {
                        m.release(port, prio, b);
                    }
                }
                _ => { m.pfc_action(port, prio); }
            }
            check_sums(&m)?;
        }
        for (port, queues) in held.iter_mut().enumerate() {
            for (prio, q) in queues.iter_mut().enumerate() {
                while let Some(b) = q.pop_front() {
                    m.release(port, prio, b);
                    check_sums(&m)?;
                }
            }
        }
        prop_assert_eq!((m.used_bytes(), m.shared_used_bytes()), (0, 0));
        for p in 0..n {
            for q in 0..8 {
                m.pfc_action(p, q);
                let o = m.occupancy(p, q);
                prop_assert_eq!((o.bytes, o.shared_bytes, o.headroom_bytes, o.paused), (0, 0, 0, false));
            }
        }
    }

    /// Senders that keep sending up to `lag` bytes after an XOFF (what is
    /// on the wire and in the peer's pipeline): with headroom ≥ lag + the
    /// largest packet, no lossless packet is ever dropped.
    #[test]
    fn lossless_never_drops_with_enough_headroom(
        cfg in config(),
        lag in 0u64..40_000,
        ops in prop::collection::vec((0u8..3, 0usize..5, 0usize..8, 64u64..9000), 1..600)) {
        let mut cfg = cfg;
        let head = lag + 9000;
        for h in cfg.headroom_bytes.iter_mut() {
            *h = head;
        }
        let lossless = cfg.classes.iter().filter(|&&c| c == PrioClass::Lossless).count() as u64;
        let n = cfg.headroom_bytes.len();
        cfg.buffer_bytes += n as u64 * lossless * head;
        let mut m = Mmu::new(&cfg).unwrap();
        let mut held: Vec<Vec<VecDeque<u64>>> = vec![vec![VecDeque::new(); 8]; n];
        // Per (port, prio): None = may send; Some(left) = paused, `left`
        // bytes still allowed in flight.
        let mut sender: Vec<Vec<Option<u64>>> = vec![vec![None; 8]; n];
        for (op, port, prio, bytes) in ops {
            let port = port % n;
            if op < 2 {
                let s = &mut sender[port][prio];
                match *s {
                    Some(left) if left < bytes => continue,
                    Some(left) => *s = Some(left - bytes),
                    None => {}
                }
                match m.admit(port, prio, bytes) {
                    Admit::Accept { pfc } => {
                        if m.class(prio) != PrioClass::Bypass {
                            held[port][prio].push_back(bytes);
                        }
                        if pfc == Some(PfcAction::Xoff) {
                            sender[port][prio] = Some(lag);
                        }
                    }
                    Admit::Drop(r) => prop_assert_eq!(r, DropReason::SharedFull),
                }
            } else if let Some(b) = held[port][prio].pop_front() {
                if m.release(port, prio, b) == Some(PfcAction::Xon) {
                    sender[port][prio] = None;
                }
            }
        }
        prop_assert_eq!(m.lossless_drops(), 0);
    }
}

/// The threshold is floor(alpha × free bytes), through whichever integer
/// conversion: the same as computed in `u64`, for alphas that are not
/// powers of two too, and a switch without thresholds (alpha 1e30) has
/// none: `u64::MAX`.
#[test]
fn threshold_is_the_floor_of_alpha_times_free() {
    let mut cfg = asic(1);
    cfg.alpha = [
        0.3,
        1.0 / 3.0,
        0.75,
        1.0,
        2.5,
        1e-3,
        17.0,
        NO_THRESHOLD_ALPHA,
    ];
    let mut m = Mmu::new(&cfg).unwrap();
    // Pool 172,000, nothing shared yet: floor(0.3 × 172,000) = 51,600,
    // floor(172,000 / 3) = 57,333, 129,000, 172,000, 430,000, 172, 2,924,000.
    let want = [
        51_600,
        57_333,
        129_000,
        172_000,
        430_000,
        172,
        2_924_000,
        u64::MAX,
    ];
    assert_eq!((0..8).map(|p| m.threshold(0, p)).collect::<Vec<_>>(), want);
    for _ in 0..40 {
        accept(m.admit(0, 3, 1_000));
        let free = m.pool_bytes() - m.shared_used_bytes();
        for (p, a) in cfg.alpha.iter().enumerate() {
            assert_eq!(
                m.threshold(0, p),
                (free as f64 * a) as u64,
                "alpha {a}, free {free}"
            );
        }
    }
    let m = Mmu::new(&MmuConfig::shared_pool(1 << 30, 4)).unwrap();
    assert_eq!(m.threshold(3, 7), u64::MAX);
}

/// The frame that crosses a lossless queue's threshold causes the XOFF at
/// its last bit: it arrived before the decision, so it is the shared
/// pool's, not headroom's, which the formula sizes for what comes after.
#[test]
fn the_crossing_frame_is_not_headroom() {
    // As `lossless_pauses_when_shared_reaches_the_threshold`: 1000 B in
    // the reserve, then shared; at shared 85,500 the threshold is 86,500.
    let mut m = Mmu::new(&asic(1)).unwrap();
    accept(m.admit(0, 3, 1000));
    for _ in 0..171 {
        assert_eq!(accept(m.admit(0, 3, 500)), None);
    }
    assert_eq!(m.shared_used_bytes(), 85_500);
    assert_eq!(m.threshold(0, 3), 86_500);
    // 1500 B more would make 87,000 > 86,500: XOFF, all of it shared.
    assert_eq!(accept(m.admit(0, 3, 1500)), Some(PfcAction::Xoff));
    let o = m.occupancy(0, 3);
    assert_eq!((o.headroom_bytes, o.shared_bytes), (0, 87_000));
    // What follows the decision is headroom's, whole.
    assert_eq!(accept(m.admit(0, 3, 1500)), None);
    assert_eq!(m.occupancy(0, 3).headroom_bytes, 1500);
    // The reference preset keeps switch-mmu.cc's charge: a crossing
    // packet goes to headroom whole.
    let mut r = Mmu::hpcc_reference(1 << 20, &[(G100, Ps::from_us(1)); 2], G100).unwrap();
    let mut n = 0;
    while accept(r.admit(0, 3, PKT)).is_none() {
        n += 1;
    }
    assert!(n > 50);
    assert_eq!(r.occupancy(0, 3).headroom_bytes, PKT);
}

/// A dynamic threshold falls as other queues take the pool: a lossless
/// queue it falls under is paused then (`drift_xoff`), not at its own next
/// arrival, and of a frame that was arriving at that moment only the
/// bytes after it are headroom's.
#[test]
fn a_filling_pool_pauses_the_queues_it_puts_over_their_threshold() {
    // Two ports, pool 200,000 − 2 × 8,000 − 2 × 20,000 = 144,000, alpha 1.
    let mut m = Mmu::new(&asic(2)).unwrap();
    assert_eq!(m.pool_bytes(), 144_000);
    // Port 0's lossless queue: 1000 B reserve + 70,000 shared; its
    // threshold is 144,000 − 70,000 = 74,000: not paused.
    accept(m.admit(0, 3, 1000));
    for _ in 0..70 {
        assert_eq!(accept(m.admit(0, 3, 1000)), None);
    }
    assert!(m.drift_xoff(Ps::ZERO).is_empty());
    // Port 1's lossy queue takes 4,000 + 1,000 of reserve: the threshold
    // falls to 144,000 − 74,000 = 70,000, which port 0's queue has reached.
    accept(m.admit(1, 1, 1000));
    for _ in 0..3 {
        accept(m.admit(1, 1, 1000));
        assert!(m.drift_xoff(Ps::ZERO).is_empty());
    }
    accept(m.admit(1, 1, 1000));
    let at = Ps::from_ns(1000);
    assert_eq!(m.drift_xoff(at), [(0, 3)]);
    assert!(m.occupancy(0, 3).paused);
    assert!(m.drift_xoff(at).is_empty(), "paused once");
    // A 1226-byte frame (1250 on the wire with FCS, preamble and gap: 100
    // ns at 100G) whose last bit arrives 40 ns after the decision: 60 % of
    // it, 735 bytes, came before; 491 are headroom's.
    let arrival = Some((Ps::from_ns(1040), G100));
    assert_eq!(accept(m.admit_at(0, 3, 1226, arrival)), None);
    assert_eq!(m.occupancy(0, 3).headroom_bytes, 491);
    // The next frame came after it: all headroom.
    let arrival = Some((Ps::from_ns(1140), G100));
    assert_eq!(accept(m.admit_at(0, 3, 1226, arrival)), None);
    assert_eq!(m.occupancy(0, 3).headroom_bytes, 491 + 1226);
}
