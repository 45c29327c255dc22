//! TIMELY as the HPCC ns-3 reference runs it (`CC_MODE 7`,
//! `RdmaHw::UpdateRateTimely` in its
//! simulation/src/point-to-point/model/rdma-hw.cc).
//!
//! TIMELY (Mittal et al., SIGCOMM 2015) paces a flow by the RTT and its
//! gradient. The reference measures the RTT of the ACK's data packet: the
//! data packet carries its send time, the ACK echoes it, and the sender
//! subtracts it from the ACK's arrival. It updates once per window of
//! data (an ACK past the sequence sent at the last update), on nothing
//! else (its `FastReactTimely` is empty):
//!
//! ```text
//!  first update:  remember rtt; window ends at nxt
//!  later:         diff   ← (1 − ewma)·diff + ewma·(rtt − last rtt)
//!                 grad   ← diff / min_rtt
//!    rtt < t_low:            increase
//!    rtt > t_high:           rate ← max(min rate, rate·(1 − beta·(1 − t_high/rtt)))
//!    grad ≤ 0:               increase
//!    else:                   rate ← max(min rate, rate·max(0, 1 − beta·grad))
//!    increase:  rate ← min(line, rate + (stage < hai_after ? rate_ai : rate_hai)); stage += 1
//!    decrease:  stage ← 0
//! ```
//!
//! Rates are bit/s truncated as ns-3's `DataRate`; RTTs in nanoseconds (its
//! clock). The reference sets the rate without re-timing the packet
//! waiting for its slot (no `ChangeRate`). Its `ewma` weighs the new
//! sample (`m_tmly_alpha` 0.875), as its code does.

use super::{AckInfo, ParamError};
use crate::time::{Ps, Rate};

/// TIMELY's knobs. Those the reference fixes as `RdmaHw` attributes
/// (`TimelyAlpha`, `TimelyBeta`, `TimelyTLow`, `TimelyTHigh`,
/// `TimelyMinRtt`, and the 5 additive steps before hyper-active ones) have
/// its defaults; `RATE_AI`, `RATE_HAI` and `MIN_RATE` come from its config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimelyParams {
    /// The weight of the newest RTT difference, [0, 1] (`TimelyAlpha`).
    pub ewma: f64,
    /// The multiplicative decrease factor, [0, 1] (`TimelyBeta`).
    pub beta: f64,
    /// Below this RTT, always increase (`TimelyTLow`).
    pub t_low: Ps,
    /// Above this RTT, always decrease (`TimelyTHigh`).
    pub t_high: Ps,
    /// Normalises the gradient (`TimelyMinRtt`).
    pub min_rtt: Ps,
    /// The additive step (`RATE_AI`).
    pub rate_ai: Rate,
    /// The hyper-active step (`RATE_HAI`), from the `hai_after`th
    /// consecutive increase on.
    pub rate_hai: Rate,
    /// Consecutive increases before hyper-active ones (the reference's 5).
    pub hai_after: u32,
    /// The rate a decrease never goes below (`MIN_RATE`).
    pub min_rate: Rate,
}

impl TimelyParams {
    /// The reference's `--cc timely` (its `RdmaHw` defaults; `run.py`
    /// writes `RATE_AI 100Mb/s`, `RATE_HAI 500Mb/s` for `--bw 100`, and
    /// `MIN_RATE 1000Mb/s` from its template).
    pub fn hpcc_reference() -> TimelyParams {
        TimelyParams {
            ewma: 0.875,
            beta: 0.8,
            t_low: Ps::from_us(50),
            t_high: Ps::from_us(500),
            min_rtt: Ps::from_us(20),
            rate_ai: Rate(100_000_000),
            rate_hai: Rate(500_000_000),
            hai_after: 5,
            min_rate: Rate::gbps(1),
        }
    }

    /// Checks every knob; the error names it.
    pub fn validate(&self) -> Result<(), ParamError> {
        for (key, v) in [("ewma", self.ewma), ("beta", self.beta)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(ParamError::new(key, format!("{v} is outside [0, 1]")));
            }
        }
        if self.min_rtt == Ps::ZERO {
            return Err(ParamError::new(
                "min_rtt",
                "0 leaves the gradient undefined",
            ));
        }
        if self.t_low > self.t_high {
            return Err(ParamError::new(
                "t_low",
                format!("{} is above t_high ({})", self.t_low, self.t_high),
            ));
        }
        super::check_min_rate(self.min_rate)
    }
}

/// The TIMELY state of one QP. See the module documentation.
#[derive(Debug, Clone)]
pub struct Timely {
    p: TimelyParams,
    line: u64,
    rate: u64,
    window_end: u64,
    last_rtt_ns: f64,
    rtt_diff: f64,
    stage: u32,
    updates: u64,
}

impl Timely {
    /// A QP on a port of rate `line`, at line rate until its first
    /// update. `params` must have passed [`TimelyParams::validate`].
    pub fn new(params: &TimelyParams, line: Rate) -> Timely {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        Timely {
            p: *params,
            line: line.bps(),
            rate: line.bps(),
            window_end: 0,
            last_rtt_ns: 0.0,
            rtt_diff: 0.0,
            stage: 0,
            updates: 0,
        }
    }

    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }
    /// The smoothed RTT difference, in ns.
    pub fn rtt_diff_ns(&self) -> f64 {
        self.rtt_diff
    }
    /// Rate updates made (one per window of data at most).
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// An ACK arrived; `ack.rtt` is its data packet's round trip. Returns
    /// whether the rate changed.
    pub fn on_ack(&mut self, ack: &AckInfo) -> bool {
        let Some(rtt) = ack.rtt else {
            return false;
        };
        if ack.acked <= self.window_end {
            return false;
        }
        let old = self.rate;
        // The reference's clock counts whole ns.
        let rtt_ns = (rtt.as_ps() / 1000) as f64;
        if self.window_end != 0 {
            self.updates += 1;
            let p = &self.p;
            let new_diff = rtt_ns - self.last_rtt_ns;
            let diff = (1.0 - p.ewma) * self.rtt_diff + p.ewma * new_diff;
            let gradient = diff / (p.min_rtt.as_ps() / 1000) as f64;
            let (t_low, t_high) = (
                (p.t_low.as_ps() / 1000) as f64,
                (p.t_high.as_ps() / 1000) as f64,
            );
            let cut = if rtt_ns < t_low {
                None
            } else if rtt_ns > t_high {
                Some(1.0 - p.beta * (1.0 - t_high / rtt_ns))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - p.beta * gradient).max(0.0))
            };
            match cut {
                None => {
                    let step = if self.stage < p.hai_after {
                        p.rate_ai
                    } else {
                        p.rate_hai
                    };
                    self.rate = (self.rate + step.bps()).min(self.line);
                    self.stage += 1;
                }
                Some(c) => {
                    self.rate = ((self.rate as f64 * c) as u64).max(p.min_rate.bps());
                    self.stage = 0;
                }
            }
            self.rtt_diff = diff;
        }
        if ack.sent > self.window_end {
            self.window_end = ack.sent;
            self.last_rtt_ns = rtt_ns;
        }
        self.rate != old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, sent: u64, rtt_us: u64) -> AckInfo {
        AckInfo {
            acked,
            sent,
            ecn_echo: false,
            rtt: Some(Ps::from_us(rtt_us)),
        }
    }

    /// By hand with the reference's defaults: ewma 0.875, beta 0.8,
    /// t_low 50 µs, t_high 500 µs, min_rtt 20 µs; AI 100 Mb/s, HAI 500
    /// Mb/s after 5 increases, floor 1 Gb/s, line 100 Gb/s.
    #[test]
    fn updates_once_per_window_by_rtt_and_gradient() {
        let mut t = Timely::new(&TimelyParams::hpcc_reference(), Rate::gbps(100));
        // The first ACK only starts the window (ends at 10,000) and keeps
        // its RTT, 60 µs.
        assert!(!t.on_ack(&ack(1000, 10_000, 60)));
        // Inside the window: nothing.
        assert!(!t.on_ack(&ack(5000, 12_000, 90)));
        // Past it, RTT 70 µs: diff = 0.875 × (70,000 − 60,000) = 8750 ns,
        // gradient 8750/20,000 = 0.4375 > 0 in [t_low, t_high]:
        // rate × (1 − 0.8 × 0.4375) = 100e9 × 0.65 = 65e9.
        assert!(t.on_ack(&ack(11_000, 20_000, 70)));
        assert_eq!(t.rate(), Rate((100e9 * (1.0 - 0.8 * 0.4375)) as u64));
        assert_eq!(t.rtt_diff_ns(), 8750.0);
        let r = t.rate().bps();
        // RTT 30 µs < t_low: + 100 Mb/s (stage 0 → 1); diff = 0.125 × 8750
        // + 0.875 × (30,000 − 70,000) = −33,906.25.
        assert!(t.on_ack(&ack(21_000, 30_000, 30)));
        assert_eq!(t.rate().bps(), r + 100_000_000);
        assert_eq!(t.rtt_diff_ns(), 0.125 * 8750.0 + 0.875 * -40_000.0);
        // Four more windows at 40 µs (< t_low): stages 1..4 add 100 Mb/s,
        // then the sixth increase (stage 5) adds 500 Mb/s.
        let mut sent = 30_000;
        for _ in 0..4 {
            t.on_ack(&ack(sent + 1000, sent + 10_000, 40));
            sent += 10_000;
        }
        assert_eq!(t.rate().bps(), r + 5 * 100_000_000);
        t.on_ack(&ack(sent + 1000, sent + 10_000, 40));
        sent += 10_000;
        assert_eq!(t.rate().bps(), r + 5 * 100_000_000 + 500_000_000);
        // RTT 1 ms > t_high: × (1 − 0.8 × (1 − 500/1000)) = × 0.6.
        let r = t.rate().bps();
        t.on_ack(&ack(sent + 1000, sent + 10_000, 1000));
        assert_eq!(t.rate().bps(), (r as f64 * (1.0 - 0.8 * 0.5)) as u64);
        assert_eq!(t.updates(), 8);
    }

    #[test]
    fn a_steep_gradient_stops_at_the_floor_and_increase_at_the_line() {
        let mut t = Timely::new(&TimelyParams::hpcc_reference(), Rate::gbps(2));
        t.on_ack(&ack(1000, 2000, 60));
        // +100 µs in one window: gradient 0.875 × 100,000 / 20,000 = 4.375,
        // 1 − 0.8 × 4.375 < 0: factor 0, held at the 1 Gb/s floor.
        t.on_ack(&ack(3000, 4000, 160));
        assert_eq!(t.rate(), Rate::gbps(1));
        // Far below t_low, ten increases: 5 × 100 Mb/s, then 500 Mb/s
        // steps, capped at the 2 Gb/s line.
        let mut sent = 4000;
        for _ in 0..10 {
            t.on_ack(&ack(sent + 1000, sent + 2000, 10));
            sent += 2000;
        }
        assert_eq!(t.rate(), Rate::gbps(2));
    }

    #[test]
    fn bad_knobs_are_named() {
        let p = TimelyParams::hpcc_reference();
        let bad = |q: TimelyParams| q.validate().unwrap_err().key;
        assert_eq!(bad(TimelyParams { beta: 1.2, ..p }), "beta");
        assert_eq!(
            bad(TimelyParams {
                min_rtt: Ps::ZERO,
                ..p
            }),
            "min_rtt"
        );
        assert_eq!(
            bad(TimelyParams {
                t_low: Ps::from_ms(1),
                ..p
            }),
            "t_low"
        );
    }
}
