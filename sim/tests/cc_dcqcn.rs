//! The DCQCN reaction point against hand-computed steps, the HPCC
//! reference's event-per-tick algorithm (re-stated here from rdma-hw.cc and
//! run tick by tick), and invariants under random CNP trains.
//!
//! Arithmetic in the comments: g = 1/256 (dce_tcp_g 1020), K = 1 µs,
//! P = 4 µs, T = 300 µs, line 100 Gb/s = 1e11 b/s; `//` is integer division
//! (ns-3's DataRate truncation).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use proptest::prelude::*;
use rocesim::cc::{CnpScope, DcqcnParams, ReactionPoint, RpModel, retime};
use rocesim::hpcc::{HpccConfig, config};
use rocesim::time::{Ps, Rate};

const LINE: u64 = 100_000_000_000;

/// The DCQCN lines of the anchors' e3_dcqcn_2to1_notrace.cfg (2:1 and
/// 16:1 experiments; the fat-tree one has MIN_RATE 1000Mb/s).
const E3: &str = "CC_MODE 1\n\
                  ALPHA_RESUME_INTERVAL 1\n\
                  RATE_DECREASE_INTERVAL 4\n\
                  CLAMP_TARGET_RATE 0\n\
                  RP_TIMER 300\n\
                  EWMA_GAIN 0.00390625\n\
                  FAST_RECOVERY_TIMES 1\n\
                  RATE_AI 20Mb/s\n\
                  RATE_HAI 200Mb/s\n\
                  MIN_RATE 100Mb/s\n";

fn e3() -> HpccConfig {
    config::parse(E3, "e3.cfg").unwrap()
}

fn reference() -> DcqcnParams {
    HpccConfig::dcqcn(&e3()).unwrap()
}

#[test]
fn reference_preset_from_the_anchor_configs() {
    let p = reference();
    assert_eq!(p.model, RpModel::HpccReference);
    assert_eq!(
        (
            p.rpg_time_reset,
            p.rpg_threshold,
            p.rpg_ai_rate,
            p.rpg_hai_rate,
            p.rpg_min_rate
        ),
        (300, 1, 20, 200, 100)
    );
    assert_eq!(
        (
            p.dce_tcp_g,
            p.dce_tcp_rtt,
            p.rate_reduce_monitor_period,
            p.initial_alpha_value
        ),
        (1020, 1, 4, 1024)
    );
    assert_eq!((p.min_time_between_cnps, p.cnp_scope), (0, CnpScope::Qp));
    let Some(dir) = roce_testkit::ci::shared("anchors/hpcc-ns3") else {
        return;
    };
    for (file, min_rate) in [
        ("e3_dcqcn_2to1_notrace.cfg", 100),
        ("e4_dcqcn_16to1_notrace.cfg", 100),
        ("config_fat_ws30_10ms_dcqcn.txt", 1000),
    ] {
        let cfg = config::read(&dir.join(file)).unwrap_or_else(|e| panic!("{e}"));
        let got = HpccConfig::dcqcn(&cfg).unwrap_or_else(|e| panic!("{file}: {e}"));
        let want = DcqcnParams {
            rpg_min_rate: min_rate,
            ..reference()
        };
        assert_eq!(got, want, "{file}");
    }
}

fn us(x: u64) -> Ps {
    Ps::from_us(x)
}
const NS: Ps = Ps::from_ns(1);

/// A reference-preset QP at 100 Gb/s that got its first CNP at `t0`.
fn hit_at(t0: Ps) -> ReactionPoint {
    let mut rp = ReactionPoint::new(&reference(), Rate::gbps(100));
    rp.on_cnp(t0);
    rp
}

/// Plays the world: every deadline up to and including `until`.
fn run_until(rp: &mut ReactionPoint, until: Ps) -> Vec<(Ps, u64, u64)> {
    let mut log = Vec::new();
    while let Some(d) = rp.next_deadline().filter(|&d| d <= until) {
        if rp.on_deadline(d) {
            log.push((d, rp.rate().bps(), rp.target_rate().bps()));
        }
    }
    log
}

#[test]
fn reference_one_cnp_then_recovery() {
    let t0 = Ps::from_ms(1);
    let mut rp = ReactionPoint::new(&reference(), Rate::gbps(100));
    assert_eq!(rp.next_deadline(), None, "no CNP yet: nothing to do");
    assert!(!rp.on_cnp(t0), "a CNP itself does not change the rate");
    // The first CNP sets alpha = 1 and does not count as "a CNP since the
    // last tick"; the cut check runs at t0 + 4 µs + 1 ns.
    assert_eq!(rp.next_deadline(), Some(t0 + us(4) + NS));
    assert_eq!(rp.alpha(t0), 1.0);
    // Tick at t0+1 µs without a CNP: 1 × 255/256.
    assert_eq!(rp.alpha(t0 + us(1)), 0.99609375);
    // Four ticks: (255/256)^4 = 4228250625/4294967296, exact in f64.
    let a4 = 4_228_250_625.0 / 4_294_967_296.0;
    assert_eq!(rp.alpha(t0 + us(4)), a4);
    // Cut: RC = 1e11 × (1 − a4/2) truncated = 50,776,684,272; RT stays at
    // the line rate (no timer step yet, CLAMP_TARGET_RATE 0).
    let c1 = t0 + us(4) + NS;
    let log = run_until(&mut rp, c1);
    assert_eq!(log, vec![(c1, 50_776_684_272, LINE)]);
    assert_eq!(rp.next_deadline(), Some(c1 + us(300)));
    // Fast recovery at c1 + 300 µs: 50776684272//2 + 1e11//2 = 75,388,342,136.
    // Then additive (stage 1 = F) and hyper steps: RT is capped at the line
    // rate, so only RC moves: 75388342136//2 + 5e10 = 87,694,171,068, ...
    let log = run_until(&mut rp, c1 + us(900));
    assert_eq!(
        log,
        vec![
            (c1 + us(300), 75_388_342_136, LINE),
            (c1 + us(600), 87_694_171_068, LINE),
            (c1 + us(900), 93_847_085_534, LINE),
        ]
    );
    assert_eq!(rp.timer_stage(), 3);
    // RC approaches RT by halving the gap, but x//2 + 5e10 stops one short
    // of 1e11: 99,999,999,999 is its fixed point. There the timer stops: a
    // recovered QP has no deadline.
    run_until(&mut rp, Ps(1_000_000_000_000)); // 1 s
    assert_eq!(rp.rate().bps(), LINE - 1);
    assert_eq!(rp.next_deadline(), None);
    assert_eq!((rp.cnps(), rp.cuts()), (1, 1));
}

#[test]
fn reference_second_cnp_decayed_alpha_clamp_ai_hai() {
    let t0 = Ps::from_ms(1);
    let c1 = t0 + us(4) + NS;
    let mut rp = hit_at(t0);
    run_until(&mut rp, c1 + us(300)); // cut 50,776,684,272; FR 75,388,342,136
    // Second CNP at c1 + 400 µs = t0 + 404 µs + 1 ns. Alpha has decayed
    // over 404 ticks: (255/256)^404 ≈ 0.2058. The CNP flags tick 405:
    // alpha = (255/256)·alpha + 1/256, then ticks 406..408 decay it again.
    let t2 = c1 + us(400);
    rp.on_cnp(t2);
    let mut a = 1.0f64;
    for _ in 0..404 {
        a *= 255.0 / 256.0;
    }
    assert!((rp.alpha(t2) - a).abs() < 1e-15);
    a = (255.0 / 256.0) * a + 1.0 / 256.0;
    for _ in 0..3 {
        a *= 255.0 / 256.0;
    }
    // The next cut tick after t2 on the grid t0 + 1 ns + 4k µs: k = 102.
    let c2 = t0 + us(408) + NS;
    assert_eq!(rp.next_deadline(), Some(c2));
    assert!((rp.alpha(c2) - a).abs() < 1e-15, "{} vs {a}", rp.alpha(c2));
    // a ≈ 0.20638990938; the timer stepped once (stage 1), so the cut
    // clamps RT = RC = 75,388,342,136, then RC = RC × (1 − a/2)
    // = 67,608,645,585.
    let log = run_until(&mut rp, c2);
    assert_eq!(log, vec![(c2, 67_608_645_585, 75_388_342_136)]);
    // Now RT is below the line rate and the increase steps show:
    // FR:  67608645585//2 + 75388342136//2              = 71,498,493,860
    // AI:  RT = 75388342136 + 20e6 = 75,408,342,136;  RC = 73,453,417,998
    // HAI: RT += 200e6 = 75,608,342,136;               RC = 74,530,880,067
    // HAI: RT += 200e6 = 75,808,342,136;               RC = 75,169,611,101
    let log = run_until(&mut rp, c2 + us(1200));
    assert_eq!(
        log,
        vec![
            (c2 + us(300), 71_498_493_860, 75_388_342_136),
            (c2 + us(600), 73_453_417_998, 75_408_342_136),
            (c2 + us(900), 74_530_880_067, 75_608_342_136),
            (c2 + us(1200), 75_169_611_101, 75_808_342_136),
        ]
    );
}

#[test]
fn reference_steady_marking_keeps_alpha_at_one_down_to_the_floor() {
    // A CNP between every two ticks: every tick sees one, so alpha stays
    // (255/256)·1 + 1/256 = 1 exactly, each cut halves RC, and no timer step
    // ever happens (each cut restarts the 300 µs timer): no clamp, RT stays.
    let t0 = Ps::from_ms(1);
    let mut rp = ReactionPoint::new(&reference(), Rate::gbps(100));
    let mut cuts = Vec::new();
    for k in 0..60u64 {
        let t = t0 + Ps(k * 1_000_000 + 500_000);
        run_until(&mut rp, t);
        rp.on_cnp(t);
        if rp.cuts() > cuts.len() as u64 {
            cuts.push(rp.rate().bps());
        }
        assert_eq!(rp.alpha(t), 1.0);
    }
    // 1e11 / 2^k, until 1e11/2^10 = 97.65625 Mb/s falls under MIN_RATE.
    let expect: Vec<u64> = (1..=9).map(|k| LINE >> k).chain([100_000_000; 5]).collect();
    assert_eq!(cuts, expect);
    assert_eq!(rp.target_rate().bps(), LINE);
}

#[test]
fn clamp_target_rate_copies_rc_at_every_cut() {
    let t0 = Ps::from_ms(1);
    let clamp = HpccConfig::dcqcn(&HpccConfig {
        clamp_target_rate: true,
        ..e3()
    })
    .unwrap();
    for (params, rt_after_second) in [(clamp, 50_000_000_000), (reference(), LINE)] {
        let mut rp = ReactionPoint::new(&params, Rate::gbps(100));
        // A CNP on every tick up to the second cut keeps alpha at 1.
        for k in 0..=8u64 {
            run_until(&mut rp, t0 + us(k));
            rp.on_cnp(t0 + us(k));
        }
        // Cuts at t0+4 µs+1 ns (RC 1e11 → 5e10) and t0+8 µs+1 ns (→ 2.5e10).
        run_until(&mut rp, t0 + us(8) + NS);
        assert_eq!(rp.cuts(), 2);
        assert_eq!(rp.rate().bps(), 25_000_000_000);
        assert_eq!(rp.target_rate().bps(), rt_after_second);
    }
}

#[test]
fn same_instant_order() {
    let t0 = Ps::from_ms(1);
    let c1 = t0 + us(4) + NS;
    // A CNP exactly on an alpha tick counts in that tick: tick 1 gives
    // 255/256, tick 2 (with the CNP) (255/256)·(255/256) + 1/256.
    let mut rp = hit_at(t0);
    rp.on_cnp(t0 + us(2));
    let k = 255.0 / 256.0;
    assert_eq!(rp.alpha(t0 + us(2)), k * k + 1.0 / 256.0);
    // A CNP exactly on a cut tick waits for the next one, whether or not
    // the world called on_deadline for that tick first.
    rp.on_cnp(c1 + us(2));
    assert_eq!(rp.next_deadline(), Some(c1 + us(4)));
    rp.on_cnp(c1 + us(4)); // the due cut runs first, consuming the older CNP
    assert_eq!(rp.cuts(), 2);
    assert_eq!(rp.next_deadline(), Some(c1 + us(8)));
    let mut rp = hit_at(t0);
    run_until(&mut rp, c1);
    rp.on_cnp(c1 + us(4)); // exactly a cut tick, with nothing pending
    assert_eq!(rp.next_deadline(), Some(c1 + us(8)));

    // The increase timer (c1 + 300 µs) falls on a cut tick (300 = 75 × 4).
    // With a CNP pending there, the reference runs the timer first (it was
    // scheduled 300 µs before, the cut tick only 4 µs before): fast
    // recovery to 75,388,342,136, stage 1, so the cut clamps RT to that.
    let mut rp = hit_at(t0);
    run_until(&mut rp, c1);
    rp.on_cnp(c1 + us(299));
    let both = c1 + us(300);
    assert_eq!(rp.next_deadline(), Some(both));
    assert!(rp.on_deadline(both));
    assert_eq!(rp.target_rate().bps(), 75_388_342_136);
    assert_eq!(rp.timer_stage(), 0, "the cut reset it");
    assert_eq!(rp.next_deadline(), Some(both + us(300)));
}

#[test]
fn first_cnp_rate_and_floor() {
    let p = DcqcnParams {
        rate_to_set_on_first_cnp: 10_000,
        ..DcqcnParams::connectx()
    };
    let mut rp = ReactionPoint::new(&p, Rate::gbps(100));
    assert!(rp.on_cnp(Ps::ZERO));
    assert_eq!(
        (rp.rate(), rp.target_rate()),
        (Rate::gbps(10), Rate::gbps(10))
    );
    // That was the CNP's whole effect (isekai's HandleRxPacket): no cut at
    // the first decrease tick (4 µs + 1 ns); the increase timer runs from
    // the CNP. At 300 µs, stages (0, 0): fast recovery, (10 + 10) / 2 =
    // 10 Gb/s; at 600 µs, timer stage 1 = F: additive, RT = 10,005 Mb/s,
    // RC = (10e9 + 10.005e9) / 2 = 10,002,500,000.
    assert_eq!(rp.next_deadline(), Some(us(300)));
    assert_eq!(
        run_until(&mut rp, us(600)),
        vec![(us(600), 10_002_500_000, 10_005_000_000)]
    );
    assert_eq!((rp.cnps(), rp.cuts(), rp.timer_stage()), (1, 0, 2));
    // A floor above the line rate is the line rate.
    let p = DcqcnParams {
        rpg_min_rate: 200_000,
        ..DcqcnParams::connectx()
    };
    let mut rp = ReactionPoint::new(&p, Rate::gbps(100));
    rp.on_cnp(Ps::ZERO);
    run_until(&mut rp, us(5));
    assert_eq!(rp.rate(), Rate::gbps(100));
}

#[test]
fn connectx_q10_alpha_and_byte_counter_stages() {
    let t0 = Ps::from_ms(1);
    let c1 = t0 + us(4) + NS;
    let mut rp = ReactionPoint::new(&DcqcnParams::connectx(), Rate::gbps(100));
    rp.on_sent(Ps::ZERO, 10_000_000); // no byte counting before a CNP
    rp.on_cnp(t0);
    // Alpha in 1/1024: 1023, then floor(a·1019/1024) per tick without CNP:
    // 1018, 1013, 1008, 1003.
    let q: Vec<f64> = (1..=4).map(|k| rp.alpha(t0 + us(k)) * 1024.0).collect();
    assert_eq!(q, vec![1018.0, 1013.0, 1008.0, 1003.0]);
    // Cut: 1e11·1003 >> 11 = 48,828,125·1003 = 48,974,609,375 (under the
    // 50 % bound): RC = 51,025,390,625.
    assert_eq!(run_until(&mut rp, c1), vec![(c1, 51_025_390_625, LINE)]);
    // Byte counter: 32767 × 64 = 2,097,088 B; the 512th 4096-byte send
    // (2,097,152 B) is an event, 64 B carried. The step is chosen before
    // the stage advances: stages (0, 0) → fast recovery, RT stays at the
    // line rate: RC = (51025390625 + 1e11) // 2 = 75,512,695,312; then
    // the byte stage is 1.
    let mut changed_at = None;
    for i in 1..=512u64 {
        if rp.on_sent(c1 + Ps(i * 1000), 4096) {
            changed_at = Some(i);
        }
    }
    assert_eq!(changed_at, Some(512));
    assert_eq!((rp.byte_stage(), rp.rate().bps()), (1, 75_512_695_312));
    // A second CNP at t0 + 104.5 µs. Alpha: 1003 decays over ticks 5..104
    // to 578; tick 105 sees the CNP: 578·1019//1024 + 5 = 580; ticks
    // 106..108: 577, 574, 571. The cut at t0 + 108 µs + 1 ns clamps
    // (byte stage > 0): RT = 75,512,695,312; RC −= RC·571 >> 11
    // = 54,459,106,922.
    rp.on_cnp(t0 + Ps(104_500_000));
    assert_eq!(rp.alpha(t0 + us(104)) * 1024.0, 578.0);
    assert_eq!(rp.alpha(t0 + us(108)) * 1024.0, 571.0);
    let c2 = t0 + us(108) + NS;
    assert_eq!(
        run_until(&mut rp, c2),
        vec![(c2, 54_459_106_922, 75_512_695_312)]
    );
    // Stages after the cut, (timer, byte) as they stand when the step is
    // chosen (F = 1), each event's own stage advanced after it:
    // timer (0,0): fast recovery, RC = (RC + RT) // 2 = 64,985,901,117
    // bytes (1,0): max ≥ 1 → AI: RT + 5 Mb/s, RC = (RC + RT) // 2
    // timer (1,1): AI;  bytes (2,1): AI (min = 1 is not > 1: no HAI yet)
    let mut log = run_until(&mut rp, c2 + us(300));
    let send_block = |rp: &mut ReactionPoint, from: Ps, log: &mut Vec<(Ps, u64, u64)>| {
        for i in 1..=512u64 {
            if rp.on_sent(from + Ps(i * 1000), 4096) {
                log.push((from + Ps(i * 1000), rp.rate().bps(), rp.target_rate().bps()));
            }
        }
    };
    send_block(&mut rp, c2 + us(301), &mut log);
    log.extend(run_until(&mut rp, c2 + us(600)));
    send_block(&mut rp, c2 + us(601), &mut log);
    let rates: Vec<(u64, u64)> = log.iter().map(|&(_, rc, rt)| (rc, rt)).collect();
    assert_eq!(
        rates,
        vec![
            (64_985_901_117, 75_512_695_312),
            (70_251_798_214, 75_517_695_312),
            (72_887_246_763, 75_522_695_312),
            (74_207_471_037, 75_527_695_312),
        ]
    );
}

#[test]
fn connectx_alpha_saturates_and_decays_to_zero() {
    let t0 = Ps::from_ms(1);
    let mut rp = ReactionPoint::new(&DcqcnParams::connectx(), Rate::gbps(100));
    rp.on_cnp(t0);
    // Under steady marking: min(1023, 1023·1019//1024 + 5) = min(1023, 1018 + 5).
    for k in 0..4u64 {
        rp.on_cnp(t0 + Ps(k * 1_000_000 + 500_000));
    }
    assert_eq!(rp.alpha(t0 + us(4)) * 1024.0, 1023.0);
    // Cut with 1023: 1e11 − 48,828,125·1023 = 50,048,828,125.
    run_until(&mut rp, t0 + us(4) + NS);
    assert_eq!(rp.rate().bps(), 50_048_828_125);
    // Without CNPs the floor(a·1019/1024) steps reach 0 (466 ticks from 1023).
    assert_eq!(rp.alpha(t0 + us(4) + us(466)), 0.0);
    assert!(rp.alpha(t0 + us(4) + us(465)) > 0.0);
}

#[test]
fn retime_moves_the_waiting_slot() {
    // 1048 B: 83,840 ps at 100 Gb/s, 167,680 ps at 50 Gb/s.
    let slot = us(10);
    assert_eq!(
        retime(slot, 1048, Rate::gbps(100), Rate::gbps(50), 1),
        Ps(10_083_840)
    );
    assert_eq!(
        retime(slot, 1048, Rate::gbps(50), Rate::gbps(100), 1),
        Ps(9_916_160)
    );
    assert_eq!(
        retime(Ps(1000), 1048, Rate::gbps(50), Rate::gbps(100), 1),
        Ps::ZERO
    );
    // On a 1 ns clock (the reference's): 83 and 167 ns.
    assert_eq!(
        retime(slot, 1048, Rate::gbps(100), Rate::gbps(50), 1000),
        Ps(10_084_000)
    );
}

/// The reference's Mlx DCQCN as rdma-hw.cc runs it: an event per alpha
/// tick, per cut check and per rate timer, ordered by (time, insertion).
struct TickByTick {
    rc: u64,
    rt: u64,
    alpha: f64,
    alpha_cnp: bool,
    decrease_cnp: bool,
    first: bool,
    stage: u32,
    timer_gen: u64,
    seq: u64,
    q: BinaryHeap<Reverse<(u64, u64, u8, u64)>>,
}

const ALPHA: u8 = 0;
const DECREASE: u8 = 1;
const TIMER: u8 = 2;

impl TickByTick {
    fn new() -> Self {
        TickByTick {
            rc: LINE,
            rt: LINE,
            alpha: 1.0,
            alpha_cnp: false,
            decrease_cnp: false,
            first: true,
            stage: 0,
            timer_gen: 0,
            seq: 0,
            q: BinaryHeap::new(),
        }
    }
    fn schedule(&mut self, at: u64, kind: u8, gen_: u64) {
        self.seq += 1;
        self.q.push(Reverse((at, self.seq, kind, gen_)));
    }
    fn run_until(&mut self, t: u64) {
        let g = 1.0 / 256.0;
        while let Some(&Reverse((at, _, kind, gen_))) = self.q.peek() {
            if at > t {
                break;
            }
            self.q.pop();
            match kind {
                ALPHA => {
                    self.alpha = if self.alpha_cnp {
                        (1.0 - g) * self.alpha + g
                    } else {
                        (1.0 - g) * self.alpha
                    };
                    self.alpha_cnp = false;
                    self.schedule(at + 1_000_000, ALPHA, 0);
                }
                DECREASE => {
                    self.schedule(at + 4_000_000, DECREASE, 0);
                    if self.decrease_cnp {
                        if self.stage != 0 {
                            self.rt = self.rc;
                        }
                        self.rc =
                            ((self.rc as f64 * (1.0 - self.alpha / 2.0)) as u64).max(100_000_000);
                        self.stage = 0;
                        self.decrease_cnp = false;
                        self.timer_gen += 1;
                        self.schedule(at + 300_000_000, TIMER, self.timer_gen);
                    }
                }
                _ if gen_ == self.timer_gen => {
                    self.schedule(at + 300_000_000, TIMER, self.timer_gen);
                    if self.stage == 1 {
                        self.rt = (self.rt + 20_000_000).min(LINE);
                    } else if self.stage > 1 {
                        self.rt = (self.rt + 200_000_000).min(LINE);
                    }
                    self.rc = self.rc / 2 + self.rt / 2;
                    self.stage += 1;
                }
                _ => {} // cancelled timer
            }
        }
    }
    fn cnp(&mut self, t: u64) {
        self.run_until(t);
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        if self.first {
            self.alpha = 1.0;
            self.alpha_cnp = false;
            self.schedule(t + 1_000_000, ALPHA, 0);
            self.schedule(t + 4_001_000, DECREASE, 0);
            self.first = false;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random CNP trains (bursts and long gaps, never exactly on a tick):
    /// the closed-form RP gives the tick-by-tick reference's rates, to
    /// within the last bits of alpha's `powi` (1 bit/s; 20,000 cases checked).
    #[test]
    fn matches_the_tick_by_tick_reference(gaps in prop::collection::vec(
        prop_oneof![1u64..20, 20u64..400, 400u64..5_000], 1..60)) {
        let t0 = 2_000_000_000u64;
        let mut brute = TickByTick::new();
        let mut rp = ReactionPoint::new(&reference(), Rate::gbps(100));
        let mut t = t0;
        let mut times = vec![t0];
        for g in &gaps {
            // Whole µs plus 317 ns and 1 ps: off every tick grid of t0.
            t += g * 1_000_000 + 317_001;
            times.push(t);
        }
        for &t in &times {
            brute.cnp(t);
            run_until(&mut rp, Ps(t));
            rp.on_cnp(Ps(t));
            prop_assert!(brute.rc.abs_diff(rp.rate().bps()) <= 1, "at {}: {} vs {}", t, brute.rc, rp.rate().bps());
            prop_assert!(brute.rt.abs_diff(rp.target_rate().bps()) <= 1);
            prop_assert!((brute.alpha - rp.alpha(Ps(t))).abs() < 1e-12, "alpha {} vs {}", brute.alpha, rp.alpha(Ps(t)));
        }
        for step in 1..=20u64 {
            let at = t + step * 97_000_003;
            brute.run_until(at);
            run_until(&mut rp, Ps(at));
            prop_assert!(brute.rc.abs_diff(rp.rate().bps()) <= 1, "idle {}: {} vs {}", step, brute.rc, rp.rate().bps());
            prop_assert!(brute.rt.abs_diff(rp.target_rate().bps()) <= 1);
        }
    }

    /// Any interleaving of CNPs, sends and deadlines: RC stays in
    /// [min rate, line], RC ≤ RT ≤ line, alpha in [0, 1], and no deadline
    /// is ever in the past.
    #[test]
    fn rates_alpha_and_deadlines_stay_sane(
        connectx in any::<bool>(),
        ops in prop::collection::vec((0u8..3, 0u64..2_000_000_000u64, 64u64..9000), 1..200)) {
        let p = if connectx { DcqcnParams::connectx() } else { reference() };
        let mut rp = ReactionPoint::new(&p, Rate::gbps(100));
        let floor = p.min_rate().bps();
        let mut now = Ps::ZERO;
        for (kind, dt, bytes) in ops {
            now += Ps(dt % 50_000_000 + if kind == 2 { dt } else { 0 });
            match kind {
                0 => { rp.on_cnp(now); }
                1 => { rp.on_sent(now, bytes * 300); }
                _ => { rp.on_deadline(now); }
            }
            let (rc, rt) = (rp.rate().bps(), rp.target_rate().bps());
            prop_assert!(floor <= rc && rc <= rt && rt <= LINE, "rc {} rt {}", rc, rt);
            let a = rp.alpha(now);
            prop_assert!((0.0..=1.0).contains(&a), "alpha {}", a);
            if let Some(d) = rp.next_deadline() {
                prop_assert!(d > now, "deadline {} not after {}", d, now);
            }
        }
    }
}
