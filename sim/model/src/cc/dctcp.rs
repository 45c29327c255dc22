//! DCTCP as a RoCE NIC's rate controller, as the HPCC ns-3 reference runs it
//! (`CC_MODE 8`, `RdmaHw::HandleAckDctcp` in its
//! simulation/src/point-to-point/model/rdma-hw.cc).
//!
//! TCP's DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) cuts a window by
//! the fraction of ECN-marked bytes; the reference applies the same rules
//! to a rate, on every ACK, with no timer:
//!
//! ```text
//!  every ACK (ecn: it echoes a CE mark; ack: bytes acknowledged; nxt: bytes sent)
//!    marked += ecn
//!    ack > batch_end:                          one window of ACKs is in
//!        first window: batch_end ← nxt; size ← nxt / mtu + 1
//!        else:         alpha ← (1 − g)·alpha + g·min(1, marked / size)
//!                      batch_end ← nxt; marked ← 0; size ← (nxt − ack) / mtu + 1
//!    in CWR and ack > cwr_end:  leave CWR
//!    ecn and not in CWR:        rate ← max(min rate, rate·(1 − alpha/2))
//!                               enter CWR until nxt is acknowledged
//!    not in CWR and a window just ended:  rate ← min(line, rate + rate_ai)
//! ```
//!
//! Alpha starts at 1 (the reference's `dctcp.m_alpha = 1`), so the first
//! echo halves the rate. Rates are bit/s truncated as ns-3's `DataRate`
//! does (`DataRate(bps·c)` keeps the integer part). The reference changes
//! the rate without re-timing the packet waiting for its slot (it does not
//! call `ChangeRate`), and with its `VAR_WIN` the window follows the rate.
//!
//! Sequence numbers are payload bytes, as the reference's (`snd_nxt`, the
//! ACK's `seq`); the world derives them from PSNs (packets × segment).

use super::{AckInfo, ParamError};
use crate::time::Rate;

/// DCTCP's knobs: the reference's `EWMA_GAIN`, `DCTCP_RATE_AI` and
/// `MIN_RATE`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DctcpParams {
    /// Alpha's gain per window of ACKs, in [0, 1] (`EWMA_GAIN`; DCTCP's g,
    /// 1/16 in RFC 8257). 0 keeps alpha at 1: every cut halves the rate.
    pub g: f64,
    /// Added to the rate once per window of ACKs without an ECN echo
    /// (`DCTCP_RATE_AI`).
    pub rate_ai: Rate,
    /// The rate a cut never goes below (`MIN_RATE`).
    pub min_rate: Rate,
}

impl DctcpParams {
    /// The reference's `--cc dctcp` runs on 100 Gb/s (`simulation/run.py`
    /// writes `EWMA_GAIN 0.0625`, `DCTCP_RATE_AI 615Mb/s` for `--bw 100`,
    /// `MIN_RATE 1000Mb/s` from its template).
    pub fn hpcc_reference() -> DctcpParams {
        DctcpParams {
            g: 0.0625,
            rate_ai: Rate(615_000_000),
            min_rate: Rate::gbps(1),
        }
    }

    /// Checks every knob; the error names it.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(0.0..=1.0).contains(&self.g) {
            return Err(
                ParamError::new("g", format!("{} is outside [0, 1]", self.g))
                    .hint("alpha's gain per window of ACKs; RFC 8257 suggests 1/16 = 0.0625"),
            );
        }
        super::check_min_rate(self.min_rate)
    }
}

/// The DCTCP state of one QP. See the module documentation.
#[derive(Debug, Clone)]
pub struct Dctcp {
    g: f64,
    rate_ai: u64,
    min_rate: u64,
    line: u64,
    /// Bytes per packet (the reference's `m_mtu`, for the window's size
    /// in packets).
    mtu: u64,

    rate: u64,
    alpha: f64,
    marked: u64,
    batch_end: u64,
    batch_size: u64,
    cwr: bool,
    cwr_end: u64,
    echoes: u64,
    cuts: u64,
}

impl Dctcp {
    /// A QP on a port of rate `line` sending `mtu` payload bytes per
    /// packet, at line rate until the first echo. `params` must have
    /// passed [`DctcpParams::validate`].
    pub fn new(params: &DctcpParams, line: Rate, mtu: u32) -> Dctcp {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        Dctcp {
            g: params.g,
            rate_ai: params.rate_ai.bps(),
            min_rate: params.min_rate.bps(),
            line: line.bps(),
            mtu: u64::from(mtu.max(1)),
            rate: line.bps(),
            alpha: 1.0,
            marked: 0,
            batch_end: 0,
            batch_size: 0,
            cwr: false,
            cwr_end: 0,
            echoes: 0,
            cuts: 0,
        }
    }

    /// The rate to pace the QP at.
    pub fn rate(&self) -> Rate {
        Rate(self.rate)
    }
    /// Alpha, the estimate of the marked fraction.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    /// ACKs that echoed a mark.
    pub fn echoes(&self) -> u64 {
        self.echoes
    }
    /// Rate cuts made (at most one per window: CWR).
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// An ACK arrived. Returns whether the rate changed.
    pub fn on_ack(&mut self, ack: AckInfo) -> bool {
        let old = self.rate;
        self.echoes += u64::from(ack.ecn_echo);
        self.marked += u64::from(ack.ecn_echo);
        let mut new_batch = false;
        if ack.acked > self.batch_end {
            new_batch = true;
            if self.batch_end == 0 {
                self.batch_size = ack.sent / self.mtu + 1;
            } else {
                let frac = (self.marked as f64 / self.batch_size as f64).min(1.0);
                self.alpha = (1.0 - self.g) * self.alpha + self.g * frac;
                self.marked = 0;
                self.batch_size = ack.sent.saturating_sub(ack.acked) / self.mtu + 1;
            }
            self.batch_end = ack.sent;
        }
        if self.cwr && ack.acked > self.cwr_end {
            self.cwr = false;
        }
        if ack.ecn_echo && !self.cwr {
            let cut = (self.rate as f64 * (1.0 - self.alpha / 2.0)) as u64;
            self.rate = cut.max(self.min_rate);
            self.cwr = true;
            self.cwr_end = ack.sent;
            self.cuts += 1;
        }
        if !self.cwr && new_batch {
            self.rate = (self.rate + self.rate_ai).min(self.line);
        }
        self.rate != old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, sent: u64, ecn_echo: bool) -> AckInfo {
        AckInfo {
            acked,
            sent,
            ecn_echo,
            rtt: None,
        }
    }

    fn dctcp() -> Dctcp {
        Dctcp::new(&DctcpParams::hpcc_reference(), Rate::gbps(100), 1000)
    }

    /// Step by step against the reference's arithmetic, by hand:
    /// g = 1/16, AI 615 Mb/s, floor 1 Gb/s, line 100 Gb/s, 1000-byte
    /// packets.
    #[test]
    fn windows_alpha_cuts_and_increase() {
        let mut d = dctcp();
        // First ACK (1000 acked, 10,000 sent): the first window ends at
        // 10,000 and holds 10,000/1000 + 1 = 11 packets; no echo, not in
        // CWR, a window started: +615 Mb/s, capped at the line.
        assert!(!d.on_ack(ack(1000, 10_000, false)));
        assert_eq!((d.rate(), d.alpha()), (Rate::gbps(100), 1.0));
        // An echo at 2000: alpha is still 1, the rate halves:
        // 100e9 × (1 − 1/2) = 50e9; CWR until 12,000 is acknowledged.
        assert!(d.on_ack(ack(2000, 12_000, true)));
        assert_eq!(d.rate(), Rate::gbps(50));
        // More echoes inside CWR cut nothing.
        assert!(!d.on_ack(ack(3000, 13_000, true)));
        assert_eq!((d.rate(), d.cuts(), d.echoes()), (Rate::gbps(50), 1, 2));
        // 11,000 > 10,000 ends the first window: 2 marked of 11 packets,
        // alpha = 15/16 × 1 + 1/16 × 2/11 = 0.9375 + 0.0113636… =
        // 0.94886363…; the next window ends at 14,000 with (14,000 −
        // 11,000)/1000 + 1 = 4 packets. Still in CWR (11,000 ≤ 12,000):
        // no increase.
        assert!(!d.on_ack(ack(11_000, 14_000, false)));
        let a1 = 15.0 / 16.0 + 2.0 / 11.0 / 16.0;
        assert_eq!(d.alpha(), a1);
        // 12,500 > 12,000 leaves CWR; no window ended (≤ 14,000): no
        // increase yet.
        assert!(!d.on_ack(ack(12_500, 15_000, false)));
        // 14,500 ends the window (0 marked of 4): alpha = 15/16 × a1;
        // not in CWR: 50e9 + 615e6.
        assert!(d.on_ack(ack(14_500, 16_000, false)));
        assert_eq!(d.alpha(), 15.0 / 16.0 * a1);
        assert_eq!(d.rate(), Rate(50_615_000_000));
        // An echo cuts by alpha/2 now, truncated to the bit/s.
        let a2 = 15.0 / 16.0 * a1;
        assert!(d.on_ack(ack(15_000, 17_000, true)));
        assert_eq!(
            d.rate(),
            Rate((50_615_000_000f64 * (1.0 - a2 / 2.0)) as u64)
        );
    }

    #[test]
    fn the_floor_and_the_line_bound_the_rate() {
        let p = DctcpParams {
            g: 1.0,
            ..DctcpParams::hpcc_reference()
        };
        let mut d = Dctcp::new(&p, Rate::gbps(2), 1000);
        // Halved to 1 Gb/s (the floor), then every window of echoes
        // would halve again: the floor holds.
        d.on_ack(ack(1000, 2000, true));
        assert_eq!(d.rate(), Rate::gbps(1));
        d.on_ack(ack(3000, 4000, true));
        assert_eq!(d.rate(), Rate::gbps(1));
        // Unmarked windows add 615 Mb/s each, up to the line.
        d.on_ack(ack(5000, 6000, false));
        assert_eq!(d.rate(), Rate(1_615_000_000));
        d.on_ack(ack(7000, 8000, false));
        assert_eq!(d.rate(), Rate::gbps(2));
    }

    #[test]
    fn bad_knobs_are_named() {
        let bad = DctcpParams {
            g: 1.5,
            ..DctcpParams::hpcc_reference()
        };
        assert_eq!(bad.validate().unwrap_err().key, "g");
        let bad = DctcpParams {
            min_rate: Rate(0),
            ..DctcpParams::hpcc_reference()
        };
        assert_eq!(bad.validate().unwrap_err().key, "min_rate");
    }
}
