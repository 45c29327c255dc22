//! HPCC as the HPCC ns-3 reference runs it (`CC_MODE 3`,
//! `RdmaHw::HandleAckHp`, `UpdateRateHp` and `FastReactHp` in its
//! simulation/src/point-to-point/model/rdma-hw.cc).
//!
//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM
//! 2019) paces a flow from what every switch on its path writes into the
//! data packet as it leaves the egress port (time, bytes sent, queue, link
//! rate: [`roce_codec::wire::int`]), which the receiver echoes on its ACK.
//! From two records of the same hop the sender knows the link's load:
//!
//! ```text
//!  per hop i:  u_i = (bytes_i − bytes_i') · 8 / (t_i − t_i') / B_i        (transmit rate / line)
//!                  + min(q_i, q_i') · line_of_the_QP / B_i / W            (queue, in windows)
//!  U, τ     ← the largest u_i and its (t_i − t_i')
//!  u        ← (u · (T − τ) + U · τ) / T                  τ capped at T, the base RTT
//!  c        = u / η                                      η: U_TARGET
//!  c ≥ 1 or stage ≥ MI_THRESH:  rate ← Rc / c + W_AI;  stage ← 0       (multiplicative)
//!  else:                        rate ← Rc + W_AI;      stage += 1      (additive)
//!  rate within [MIN_RATE, line]
//! ```
//!
//! `Rc`, the reference rate, is updated once per round trip: on an ACK
//! past the sequence sent at the last update. ACKs in between react fast
//! (`FAST_REACT`): they set the sending rate from `Rc` without moving `Rc`
//! or the stage. The first ACK only stores the records. With `MULTI_RATE`
//! each hop keeps its own `u`, `Rc` and stage and the rate is the smallest
//! hop's; `SAMPLE_FEEDBACK` skips, in fast reactions, hops whose queue is
//! empty.
//!
//! `W` is the QP's window (`HAS_WIN`'s bytes, `m_win`) and `T` the base RTT
//! (`m_baseRtt`: the fabric's largest with `GLOBAL_T 1`); with `VAR_WIN`
//! the window in flight follows the sending rate (the world does that).
//! Rates are bit/s truncated as ns-3's `DataRate`; a rate change re-times
//! the packet waiting for its slot (`ChangeRate`). The records' units and
//! wrap are the reference's; `int_multi` is its `INT_MULTI`.
//!
//! The reference's `u` and every hop's start at 1 (`rdma-queue-pair.cc`).
//!
//! With [`HpccParams::pint`] the QP runs HPCC-PINT ([`super::pint`]): the
//! switches compute `u` and the ACK echoes the path's largest as one
//! power; the sender takes the same step with it (`UpdateRateHpPint`),
//! reacting fast between updates whatever `FAST_REACT` says, as the
//! reference does.

use roce_codec::{IntHopRepr, IntRepr};

use super::pint::{PintCodec, PintParams};
use super::{AckInfo, ParamError};
use crate::time::{Ps, Rate};

/// The most hops HPCC reads (the reference's `IntHeader::maxHop`).
pub const MAX_HOPS: usize = 5;

/// HPCC's knobs, named as the reference's config names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HpccParams {
    /// The target utilisation η, (0, 1] (`U_TARGET`).
    pub u_target: f64,
    /// The additive step W_AI (`RATE_AI`).
    pub rate_ai: Rate,
    /// The rate a decrease never goes below (`MIN_RATE`).
    pub min_rate: Rate,
    /// Additive steps before a multiplicative one (`MI_THRESH`).
    pub mi_thresh: u32,
    /// React to every ACK between updates (`FAST_REACT`).
    pub fast_react: bool,
    /// A rate per hop (`MULTI_RATE`).
    pub multi_rate: bool,
    /// Fast reactions skip hops with an empty queue (`SAMPLE_FEEDBACK`).
    pub sample_feedback: bool,
    /// The multiplier of the records' units (`INT_MULTI`), 1..=255.
    pub int_multi: u8,
    /// The base RTT T (`m_baseRtt`). `None` until the scenario layer
    /// fills in its default, the largest base RTT of the flows' paths (the
    /// reference's `GLOBAL_T 1` takes the largest of every host pair's).
    pub base_rtt: Option<Ps>,
    /// HPCC-PINT's knobs when the switches fold the telemetry into one
    /// power (`CC_MODE 10`); `None`: HPCC's hop records.
    pub pint: Option<PintParams>,
}

impl HpccParams {
    /// The reference's `--cc hp --utgt 95` for `--bw 100` as `run.py`
    /// writes it: `RATE_AI 40Mb/s` (its `ai = 10 × bw / 25` Mb/s),
    /// `MIN_RATE 1000Mb/s`,
    /// `MI_THRESH 0`, `FAST_REACT 1`, `MULTI_RATE 0`, `SAMPLE_FEEDBACK 0`,
    /// `INT_MULTI 4` (the anchors' `cc/config_flow_*_hp95.txt`).
    pub fn hpcc_reference() -> HpccParams {
        HpccParams {
            u_target: 0.95,
            rate_ai: Rate(40_000_000),
            min_rate: Rate::gbps(1),
            mi_thresh: 0,
            fast_react: true,
            multi_rate: false,
            sample_feedback: false,
            int_multi: 4,
            base_rtt: None,
            pint: None,
        }
    }

    /// The reference's `--cc hpccPint --utgt 95` for `--bw 100`: HPCC's
    /// knobs as [`HpccParams::hpcc_reference`] (run.py writes the same)
    /// and PINT's defaults ([`PintParams::hpcc_reference`]).
    pub fn pint_reference() -> HpccParams {
        HpccParams {
            pint: Some(PintParams::hpcc_reference()),
            ..HpccParams::hpcc_reference()
        }
    }

    /// Checks every knob; the error names it.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.u_target > 0.0 && self.u_target <= 1.0) {
            return Err(ParamError::new(
                "u_target",
                format!("{} is outside (0, 1]", self.u_target),
            ));
        }
        if self.int_multi == 0 {
            return Err(ParamError::new("int_multi", "0 would make every record 0"));
        }
        if self.base_rtt == Some(Ps::ZERO) {
            return Err(ParamError::new("base_rtt", "0 leaves the EWMA undefined"));
        }
        if let Some(p) = &self.pint {
            p.validate()?;
        }
        super::check_min_rate(self.min_rate)
    }
}

/// One hop's own state under `MULTI_RATE`.
#[derive(Debug, Clone, Copy)]
struct HopState {
    u: f64,
    rc: u64,
    stage: u32,
}

/// The HPCC state of one QP. See the module documentation.
#[derive(Debug, Clone)]
pub struct Hpcc {
    p: HpccParams,
    line: u64,
    /// `W` in bytes: `m_win`, or the line's bandwidth-delay product.
    win: u64,
    base_rtt_ns: u64,
    /// The sending rate (`m_rate`).
    rate: u64,
    /// The reference rate Rc (`hp.m_curRate`).
    rc: u64,
    stage: u32,
    u: f64,
    last_update_seq: u64,
    hops: [IntHopRepr; MAX_HOPS],
    hop_state: [HopState; MAX_HOPS],
    updates: u64,
    /// HPCC-PINT's decoding of the echoed power.
    pint: Option<PintCodec>,
}

impl Hpcc {
    /// A QP on a port of rate `line` with a window of `win` bytes (0: none),
    /// at line rate until its first update. `params` must have passed
    /// [`HpccParams::validate`].
    pub fn new(params: &HpccParams, line: Rate, win: u64) -> Hpcc {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        let line = line.bps();
        // The scenario layer always gives one (`base_rtt`'s doc).
        let base_rtt_ns = params.base_rtt.map_or(1, |t| t.as_ns().max(1));
        Hpcc {
            p: *params,
            line,
            win: Self::window_or_bdp(win, line, base_rtt_ns),
            base_rtt_ns,
            rate: line,
            rc: line,
            stage: 0,
            u: 1.0,
            last_update_seq: 0,
            hops: [IntHopRepr::default(); MAX_HOPS],
            hop_state: [HopState {
                u: 1.0,
                rc: line,
                stage: 0,
            }; MAX_HOPS],
            updates: 0,
            pint: params.pint.map(|p| PintCodec::new(p.log_base)),
        }
    }

    /// The window `W` the queue term divides by: the flow's own, when the
    /// world learns it as the flow starts (`GLOBAL_T 0`).
    pub fn set_window(&mut self, win: u64) {
        self.win = Self::window_or_bdp(win, self.line, self.base_rtt_ns);
    }

    /// `W`: the QP's window, or without one the line's bandwidth-delay
    /// product, the window HPCC is defined with (W = B × T, the paper's
    /// §3.2). The reference divides by its `m_win` even when `HAS_WIN 0`
    /// makes it 0, which cuts every flow to `MIN_RATE` at the first queued
    /// byte; its `run.py` never runs HPCC without a window.
    fn window_or_bdp(win: u64, line: u64, base_rtt_ns: u64) -> u64 {
        match win {
            0 => (u128::from(line) * u128::from(base_rtt_ns) / 8_000_000_000).max(1) as u64,
            w => w,
        }
    }

    /// The sending rate.
    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }
    /// The reference rate Rc.
    pub fn reference_rate(&self) -> Rate {
        Rate(self.rc)
    }
    /// The smoothed utilisation `u`.
    pub fn utilisation(&self) -> f64 {
        self.u
    }
    /// Updates of Rc made (at most one per round trip).
    pub fn updates(&self) -> u64 {
        self.updates
    }
    /// The telemetry the sender starts on each data packet: room for the
    /// hops it reads, in its units.
    pub fn source(&self, orig_dport: u16) -> IntRepr {
        if self.pint.is_some() {
            return IntRepr::pint_source(orig_dport);
        }
        IntRepr::source(orig_dport, MAX_HOPS as u8, self.p.int_multi)
    }

    /// PINT's knobs, if the QP runs HPCC-PINT.
    pub fn pint(&self) -> Option<&PintParams> {
        self.p.pint.as_ref()
    }

    /// An ACK arrived with the echo of its data packet's records; returns
    /// whether the sending rate changed. ACKs without telemetry change
    /// nothing.
    pub fn on_ack(&mut self, ack: &AckInfo, int: Option<&IntRepr>) -> bool {
        let Some(ih) = int else {
            return false;
        };
        if let Some(codec) = self.pint {
            if !ih.pint {
                return false;
            }
            let fast = ack.acked <= self.last_update_seq;
            return self.update_pint(ack.sent, codec.decode(ih.power), fast);
        }
        if ack.acked > self.last_update_seq {
            self.update(ack.sent, ih, false)
        } else if self.p.fast_react {
            self.update(ack.sent, ih, true)
        } else {
            false
        }
    }

    fn update(&mut self, next_seq: u64, ih: &IntRepr, fast: bool) -> bool {
        let hops = &ih.hops()[..ih.hops().len().min(MAX_HOPS)];
        if self.last_update_seq == 0 {
            // The first round trip: only the records, to measure from.
            self.last_update_seq = next_seq;
            self.hops[..hops.len()].copy_from_slice(hops);
            return false;
        }
        let multi = self.p.int_multi;
        let t = self.base_rtt_ns;
        let (mut big_u, mut dt) = (0.0f64, 0u64);
        let mut updated = [false; MAX_HOPS];
        for (i, h) in hops.iter().enumerate() {
            let prev = self.hops[i];
            if self.p.sample_feedback && fast && h.qlen == 0 {
                continue;
            }
            updated[i] = true;
            let tau = h.ns_since(&prev);
            let tx_rate = h.bytes_since(&prev, multi) as f64 * 8.0 / (tau as f64 * 1e-9);
            let b = h.rate_bps() as f64;
            let qlen = h.qlen_bytes(multi).min(prev.qlen_bytes(multi)) as f64;
            let u = tx_rate / b + qlen * self.line as f64 / b / self.win as f64;
            if self.p.multi_rate {
                let tau = tau.min(t);
                let s = &mut self.hop_state[i];
                s.u = (s.u * (t - tau) as f64 + u * tau as f64) / t as f64;
            } else if u > big_u {
                big_u = u;
                dt = tau;
            }
            self.hops[i] = *h;
        }
        let any = updated.iter().any(|&u| u);
        let mut per_hop = [(0u64, 0u32); MAX_HOPS];
        let (mut new_rate, mut new_stage) = (self.rate, self.stage);
        if !self.p.multi_rate {
            if any {
                let dt = dt.min(t);
                self.u = (self.u * (t - dt) as f64 + big_u * dt as f64) / t as f64;
                (new_rate, new_stage) = self.step(self.rc, self.stage, self.u);
            }
        } else {
            new_rate = self.line;
            for (i, s) in self.hop_state.iter().enumerate().take(hops.len()) {
                let r = if updated[i] {
                    per_hop[i] = self.step(s.rc, s.stage, s.u);
                    per_hop[i].0
                } else {
                    s.rc
                };
                new_rate = new_rate.min(r);
            }
        }
        let changed = any && new_rate != self.rate;
        if any {
            self.rate = new_rate;
        }
        if !fast {
            if any {
                self.rc = new_rate;
                self.stage = new_stage;
                self.updates += 1;
            }
            if self.p.multi_rate {
                for (i, s) in self.hop_state.iter_mut().enumerate().take(hops.len()) {
                    if updated[i] {
                        (s.rc, s.stage) = per_hop[i];
                    }
                }
            }
            self.last_update_seq = self.last_update_seq.max(next_seq);
        }
        changed
    }

    /// HPCC-PINT's update (`UpdateRateHpPint`): the path's utilisation
    /// `big_u` as the switches computed it, no EWMA here; the first ACK
    /// only marks the round trip.
    fn update_pint(&mut self, next_seq: u64, big_u: f64, fast: bool) -> bool {
        if self.last_update_seq == 0 {
            self.last_update_seq = next_seq;
            return false;
        }
        self.u = big_u;
        let (new_rate, new_stage) = self.step(self.rc, self.stage, big_u);
        let changed = new_rate != self.rate;
        self.rate = new_rate;
        if !fast {
            self.rc = new_rate;
            self.stage = new_stage;
            self.updates += 1;
            self.last_update_seq = self.last_update_seq.max(next_seq);
        }
        changed
    }

    /// One step from reference rate `rc` at `stage` with utilisation `u`:
    /// the new rate, bounded, and stage.
    fn step(&self, rc: u64, stage: u32, u: f64) -> (u64, u32) {
        let c = u / self.p.u_target;
        let ai = self.p.rate_ai.bps();
        let (r, s) = if c >= 1.0 || stage >= self.p.mi_thresh {
            // ns-3's DataRate / double: the quotient truncated to bit/s.
            (((rc as f64 / c) as u64).saturating_add(ai), 0)
        } else {
            (rc.saturating_add(ai), stage + 1)
        };
        (r.clamp(self.p.min_rate.bps().min(self.line), self.line), s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G100: u64 = 100_000_000_000;

    fn params() -> HpccParams {
        HpccParams {
            int_multi: 1,
            base_rtt: Some(Ps::from_us(10)),
            ..HpccParams::hpcc_reference()
        }
    }

    /// A stack of one 100G hop at `t` ns, `bytes` sent, `q` queued (units
    /// of 128 and 80 bytes: pick multiples).
    fn stack(t: u64, bytes: u64, q: u64) -> IntRepr {
        let mut s = IntRepr::source(4791, 5, 1);
        s.push(IntHopRepr::new(G100, t, bytes, q, 1).unwrap());
        s
    }

    fn ack(acked: u64, sent: u64) -> AckInfo {
        AckInfo {
            acked,
            sent,
            ecn_echo: false,
            rtt: None,
        }
    }

    /// W = 100,000 B, T = 10 µs. First ACK: stored. Second ACK (acked
    /// 2,000 > 1,000 sent at the first): 1,280 bytes in 100 ns is
    /// 102.4 Gb/s, u_1 = 1.024 plus a queue of min(8,000, 0) = 0; τ = 100,
    /// u = (1 × 9,900 + 1.024 × 100) / 10,000 = 1.00024; c = u / 0.95 =
    /// 1.052884...; Rc = 100 G / c + 40 M = 94,977,204,... + 40,000,000.
    #[test]
    fn an_update_by_hand() {
        let mut h = Hpcc::new(&params(), Rate(G100), 100_000);
        assert!(!h.on_ack(&ack(1_000, 1_000), Some(&stack(1_000, 0, 0))));
        assert_eq!(h.rate(), Rate(G100));
        assert!(h.on_ack(&ack(2_000, 5_000), Some(&stack(1_100, 1_280, 8_000))));
        let u = (9_900.0 + 1.024 * 100.0) / 10_000.0;
        assert!((h.utilisation() - u).abs() < 1e-12);
        let want = (G100 as f64 / (u / 0.95)) as u64 + 40_000_000;
        assert_eq!(h.rate(), Rate(want));
        assert_eq!(h.reference_rate(), Rate(want));
        assert_eq!(h.updates(), 1);
    }

    /// HPCC-PINT: the first ACK marks the round trip; then U = 1.01^p /
    /// 512 straight from the echoed power. p = 690: U = 1.01^690 / 512 =
    /// 1.8727... (c = U / 0.95 ≥ 1): Rc / c + 40 Mb/s. A fast reaction
    /// (acked ≤ the last update's sequence) moves the rate, not Rc, even
    /// without FAST_REACT; an HPCC stack (no power) changes nothing.
    #[test]
    fn pint_update_by_hand() {
        let p = HpccParams {
            fast_react: false,
            ..HpccParams::pint_reference()
        };
        let p = HpccParams {
            base_rtt: Some(Ps::from_us(10)),
            ..p
        };
        let mut h = Hpcc::new(&p, Rate(G100), 100_000);
        let mut ih = h.source(4791);
        assert!(ih.pint);
        ih.raise_power(690);
        assert!(!h.on_ack(&ack(1_000, 1_000), Some(&ih)));
        assert!(h.on_ack(&ack(2_000, 5_000), Some(&ih)));
        let u = 1.01f64.powi(690) / 512.0;
        assert!((u - 1.8727).abs() < 1e-4, "{u}");
        let want = (G100 as f64 / (u / 0.95)) as u64 + 40_000_000;
        assert_eq!((h.rate(), h.reference_rate()), (Rate(want), Rate(want)));
        // Fast: 1.01^600 / 512 = 0.7648... < 0.95, stage 0 ≥ MI_THRESH 0:
        // multiplicative from Rc.
        let mut low = h.source(4791);
        low.raise_power(600);
        assert!(h.on_ack(&ack(3_000, 6_000), Some(&low)));
        let c = 1.01f64.powi(600) / 512.0 / 0.95;
        assert_eq!(h.rate(), Rate((want as f64 / c) as u64 + 40_000_000));
        assert_eq!(h.reference_rate(), Rate(want));
        assert!(!h.on_ack(&ack(7_000, 8_000), Some(&stack(1, 0, 0))));
    }

    /// Between updates (acked ≤ the sequence of the last update) a fast
    /// reaction sets the rate from Rc without moving Rc; the queue term
    /// counts: min(16,000, 8,000) × 100 G / 100 G / 100,000 = 0.08.
    #[test]
    fn fast_reaction_leaves_rc() {
        let mut h = Hpcc::new(&params(), Rate(G100), 100_000);
        h.on_ack(&ack(1_000, 1_000), Some(&stack(1_000, 0, 8_000)));
        h.on_ack(&ack(2_000, 5_000), Some(&stack(1_100, 1_280, 16_000)));
        let (rc, u1) = (h.reference_rate(), h.utilisation());
        assert!(h.on_ack(&ack(3_000, 5_000), Some(&stack(1_200, 1_280 + 640, 8_000))));
        assert_eq!(h.reference_rate(), rc, "Rc moves once per round trip");
        // 640 B in 100 ns = 51.2 Gb/s: 0.512 + 0.08.
        let u = (u1 * 9_900.0 + (0.512 + 0.08) * 100.0) / 10_000.0;
        assert!((h.utilisation() - u).abs() < 1e-12);
        let want = (rc.bps() as f64 / (u / 0.95)) as u64 + 40_000_000;
        assert_eq!(h.rate(), Rate(want));
        // Without FAST_REACT the same ACK changes nothing.
        let mut slow = Hpcc::new(
            &HpccParams {
                fast_react: false,
                ..params()
            },
            Rate(G100),
            100_000,
        );
        slow.on_ack(&ack(1_000, 1_000), Some(&stack(1_000, 0, 8_000)));
        slow.on_ack(&ack(2_000, 5_000), Some(&stack(1_100, 1_280, 16_000)));
        assert!(!slow.on_ack(&ack(3_000, 5_000), Some(&stack(1_200, 1_920, 8_000))));
    }

    /// MI_THRESH 2: a hot sample cuts (c ≥ 1), then two cool ones add
    /// W_AI each, then the third multiplies (stage reached), capped at the
    /// line; a queue of 104 windows drives the rate to MIN_RATE. T = 100
    /// ns and samples 100 ns apart: each sample is the whole of u.
    #[test]
    fn additive_then_multiplicative() {
        let p = HpccParams {
            mi_thresh: 2,
            base_rtt: Some(Ps::from_ns(100)),
            ..params()
        };
        let mut h = Hpcc::new(&p, Rate(G100), 100_000);
        h.on_ack(&ack(1, 1), Some(&stack(0, 0, 0)));
        // 1,280 B in 100 ns: u = 1.024.
        h.on_ack(&ack(2, 2), Some(&stack(100, 1_280, 0)));
        let cut = (G100 as f64 / (1.024 / 0.95)) as u64 + 40_000_000;
        assert_eq!(h.rate(), Rate(cut));
        // 640 B in 100 ns: u = 0.512, c < 1: additive, twice.
        h.on_ack(&ack(3, 3), Some(&stack(200, 1_920, 0)));
        assert_eq!(h.rate(), Rate(cut + 40_000_000));
        h.on_ack(&ack(4, 4), Some(&stack(300, 2_560, 0)));
        assert_eq!(h.rate(), Rate(cut + 80_000_000));
        // Stage 2: multiplicative, (cut + 80 M) / 0.5389 is past the line.
        h.on_ack(&ack(5, 5), Some(&stack(400, 3_200, 0)));
        assert_eq!(h.rate(), Rate(G100));
        // The queue term counts the smaller of two samples: the first
        // queued sample still reads 0 (u = 0: the line), the second
        // 10,400,000 × 100 G / 100 G / 100,000 = 104.
        h.on_ack(&ack(6, 6), Some(&stack(500, 3_200, 10_400_000)));
        assert_eq!(h.rate(), Rate(G100));
        h.on_ack(&ack(7, 7), Some(&stack(600, 3_200, 10_400_000)));
        assert_eq!(
            h.rate(),
            Rate::gbps(1),
            "100 G / 109.5 + 40 M is under MIN_RATE"
        );
    }

    /// MULTI_RATE: each hop its own u and Rc; the rate is the smallest.
    #[test]
    fn a_rate_per_hop() {
        let p = HpccParams {
            multi_rate: true,
            base_rtt: Some(Ps::from_ns(100)),
            ..params()
        };
        let mut h = Hpcc::new(&p, Rate(G100), 100_000);
        let two = |t: u64, b1: u64, b2: u64| {
            let mut s = IntRepr::source(4791, 5, 1);
            s.push(IntHopRepr::new(G100, t, b1, 0, 1).unwrap());
            s.push(IntHopRepr::new(G100, t, b2, 0, 1).unwrap());
            s
        };
        h.on_ack(&ack(1, 1), Some(&two(0, 0, 0)));
        // Hop 0 at 1.024 (c > 1: cut), hop 1 at 0.2048 (MI_THRESH 0: also
        // multiplicative, which raises it past the line: capped).
        h.on_ack(&ack(2, 2), Some(&two(100, 1_280, 256)));
        let hop0 = (G100 as f64 / (1.024 / 0.95)) as u64 + 40_000_000;
        assert_eq!(h.rate(), Rate(hop0));
    }

    /// Without a window the queue term divides by the line's BDP: 100 G
    /// × 10 µs = 125,000 bytes; a queue of 12,480 bytes (156 units) in
    /// both samples adds 0.09984.
    #[test]
    fn no_window_is_the_bdp() {
        let mut h = Hpcc::new(&params(), Rate(G100), 0);
        h.on_ack(&ack(1, 1), Some(&stack(0, 0, 12_480)));
        h.on_ack(&ack(2, 2), Some(&stack(100, 0, 12_480)));
        let u = (9_900.0 + 0.09984 * 100.0) / 10_000.0;
        assert!((h.utilisation() - u).abs() < 1e-12, "{}", h.utilisation());
    }

    #[test]
    fn knobs_are_checked() {
        let bad = |p: HpccParams| p.validate().unwrap_err().key;
        assert_eq!(
            bad(HpccParams {
                u_target: 1.5,
                ..params()
            }),
            "u_target"
        );
        assert_eq!(
            bad(HpccParams {
                int_multi: 0,
                ..params()
            }),
            "int_multi"
        );
        assert_eq!(
            bad(HpccParams {
                min_rate: Rate(0),
                ..params()
            }),
            "min_rate"
        );
        assert!(HpccParams::hpcc_reference().validate().is_ok());
    }
}
