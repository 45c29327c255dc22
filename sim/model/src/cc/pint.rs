//! HPCC-PINT as the HPCC ns-3 reference runs it (`CC_MODE 10`: its
//! `pint.cc`, `SwitchNode::SwitchNotifyDequeue`'s PINT branch with
//! `log2apprx`, and `RdmaHw::HandleAckHpPint` / `UpdateRateHpPint`).
//!
//! PINT (Ben Basat et al., "PINT: Probabilistic In-band Network
//! Telemetry for Network Monitoring and Management", SIGCOMM 2020) gives
//! HPCC one number per packet instead of a record per hop: each switch
//! keeps, per egress port, the utilisation HPCC's sender would compute
//! (the EWMA moves to the switch), and writes it into the packet as a
//! power of a log base when it is larger than what the packet carries. The
//! sender reads the path's largest utilisation `U` and takes HPCC's step
//! with it, no EWMA of its own:
//!
//! ```text
//!  switch, per egress port, as a data packet leaves it:
//!   dt  = min(now − last dequeue, T)          T: the fabric's largest base RTT
//!   u  ← qlen·dt / (B·T²) + last size / (B·T) + u·(T − dt)/T      B in bytes/s
//!        each term through log2apprx: logs of 15 fractional bits, the
//!        16 leading bits of each operand kept and the rest rounded at random
//!   power = encode(u): ⌈u·512⌉ as a power of the log base, rounded up or
//!           down at random so that its expectation is exact
//!   the packet's power ← max(its power, power)
//!  sender, on a sampled ACK (probability PINT_PROB):
//!   U = base^power / 512;  HPCC's step from Rc with U (hpcc.rs)
//! ```
//!
//! `512` is the reference's `max_concurrent`; the power's width is the
//! bits the largest encoded value (512² = 2^18) needs: 11 bits (2 bytes)
//! at base 1.01, 8 (1 byte) at 1.05. The reference's `rand()` rounds; here
//! the world's streams do ([`crate::rng`]), so runs repeat but do not
//! replay ns-3's draws.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::Rng;

use super::ParamError;

/// The largest number of flows a link's utilisation is scaled for (the
/// reference's `Pint::max_concurrent`): `u` is encoded as `⌈u · 512⌉`.
pub const MAX_CONCURRENT: u32 = 512;

/// PINT's knobs, named as the reference's config names them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PintParams {
    /// The log base of the power (`PINT_LOG_BASE`), > 1.
    pub log_base: f64,
    /// The fraction of ACKs the sender reacts to (`PINT_PROB`), (0, 1].
    pub prob: f64,
}

impl PintParams {
    /// What the reference's `run.py --cc hpccPint` writes by default:
    /// `PINT_LOG_BASE 1.01`, `PINT_PROB 1.0`.
    pub fn hpcc_reference() -> PintParams {
        PintParams {
            log_base: 1.01,
            prob: 1.0,
        }
    }

    /// Checks every knob; the error names it.
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.log_base > 1.0 && self.log_base.is_finite()) {
            return Err(ParamError::new(
                "pint_log_base",
                format!("{} is not a number above 1", self.log_base),
            ));
        }
        let bits = PintCodec::new(self.log_base).bits();
        if bits > 16 {
            return Err(ParamError::new(
                "pint_log_base",
                format!(
                    "{} needs {bits}-bit powers; the reference carries at most 16",
                    self.log_base
                ),
            )
            .hint("1.0002 or more fits 16 bits; the reference's run.py uses 1.01"));
        }
        if !(self.prob > 0.0 && self.prob <= 1.0) {
            return Err(ParamError::new(
                "pint_prob",
                format!("{} is outside (0, 1]", self.prob),
            ));
        }
        Ok(())
    }

    /// The ACK sampling threshold out of 65,536 (the reference's
    /// `pint_smpl_thresh = 65536 × PINT_PROB`, truncated).
    pub fn sample_threshold(&self) -> u32 {
        (65_536.0 * self.prob) as u32
    }
}

/// The power's arithmetic for one log base (the reference's `Pint`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PintCodec {
    base: f64,
    /// 1 / ln(base).
    factor: f64,
}

impl PintCodec {
    pub fn new(log_base: f64) -> PintCodec {
        PintCodec {
            base: log_base,
            factor: 1.0 / log_base.ln(),
        }
    }

    /// Bits of the largest power, that of `u · 512 = 512²`
    /// (`get_n_bits`).
    pub fn bits(&self) -> u32 {
        let max = (f64::from(MAX_CONCURRENT) * f64::from(MAX_CONCURRENT)).ln() * self.factor;
        max.log2().ceil().max(0.0) as u32
    }

    /// Bytes the power takes in the reference's packets (`get_n_bytes`).
    pub fn bytes(&self) -> u32 {
        match self.bits() {
            0 => 0,
            b => (b - 1) / 8 + 1,
        }
    }

    /// `u` as a power (`encode_u`): `⌈u · 512⌉` (at least 1) lies between
    /// two powers of the base; the upper one is taken with the probability
    /// that makes the expected value exact.
    pub fn encode(&self, u: f64, rng: &mut ChaCha8Rng) -> u16 {
        let n = ((u * f64::from(MAX_CONCURRENT)).ceil() as u32).max(1);
        let power = f64::from(n).ln() * self.factor;
        let (hi, lo) = (power.ceil() as u16, power.floor() as u16);
        let lower = self.base.powi(i32::from(lo));
        let mut upper = self.base.powi(i32::from(hi));
        if hi == lo {
            upper *= self.base;
        }
        let draw = f64::from(rng.next_u32() % 65_536);
        if draw < (f64::from(n) - lower) / (upper - lower) * 65_536.0 {
            hi
        } else {
            lo
        }
    }

    /// The utilisation a power stands for (`decode_u`).
    pub fn decode(&self, power: u16) -> f64 {
        self.base.powi(i32::from(power)) / f64::from(MAX_CONCURRENT)
    }

    /// The power as the packet holds it: a one-byte field keeps the low 8
    /// bits (`IntHeader::SetPower` with `pint_bytes` 1).
    pub fn stored(&self, power: u16) -> u16 {
        if self.bytes() == 1 {
            power & 0xFF
        } else {
            power
        }
    }
}

/// The reference's `log2apprx(x, b = 20, m = 16, l = 20)`: `log2(x)` in
/// fixed point with [`LOG_SHIFT`] fractional bits, from `x`'s 16 leading
/// bits, the bits below rounded up with the probability of their value (a
/// switch's small multiplier-free logarithm). `None` for `x = 0`, whose
/// term the reference's arithmetic makes vanish.
pub fn log2apprx(x: u64, rng: &mut ChaCha8Rng) -> Option<i64> {
    const M: u32 = 16;
    if x == 0 {
        return None;
    }
    // The reference's `int x`: operands here stay far below 2^31.
    let mut v = x;
    let msb = 64 - x.leading_zeros();
    if msb > M {
        let s = msb - M;
        v = v >> s << s;
        let mask = (1u64 << s) - 1;
        if x & mask > u64::from(rng.next_u32()) & mask {
            v += 1 << s;
        }
    }
    Some(((v as f64).log2() * f64::from(1u32 << LOG_SHIFT)) as i64)
}

/// Fractional bits of [`log2apprx`]: the reference's `logres_shift(20,
/// 20)` = 20 − 5.
pub const LOG_SHIFT: u32 = 15;

/// One switch egress port's PINT state (`m_u`, `m_lastPktSize`,
/// `m_lastPktTs`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PintPort {
    /// The port's utilisation as the switch tracks it.
    pub u: f64,
    /// Bytes of the last frame the port dequeued, any frame.
    pub last_size: u64,
    /// When, in ns.
    pub last_ns: u64,
}

impl PintPort {
    /// A PINT data packet leaves the port at `now_ns` with `qlen` bytes
    /// left queued on a link of `rate_bps`; `max_rtt_ns` is T. Returns the
    /// new utilisation (the module's formula, each term in the
    /// reference's fixed-point logs and order of draws).
    pub fn update(
        &mut self,
        now_ns: u64,
        qlen: u64,
        rate_bps: u64,
        max_rtt_ns: u64,
        rng: &mut ChaCha8Rng,
    ) -> f64 {
        let t = max_rtt_ns.max(1);
        let dt = now_ns.saturating_sub(self.last_ns).min(t);
        let fct = f64::from(1u32 << LOG_SHIFT);
        let log_t = (t as f64).log2() * fct;
        let log_b = ((rate_bps / 8).max(1) as f64).log2() * fct;
        let log_1e9 = 1e9f64.log2() * fct;
        let mut q_term = 0.0;
        if qlen >> 8 > 0 {
            let (ld, lq) = (log2apprx(dt, rng), log2apprx(qlen >> 8, rng));
            if let (Some(ld), Some(lq)) = (ld, lq) {
                let e = (ld + lq) as f64 + log_1e9 - log_b - 2.0 * log_t;
                q_term = (e / fct).exp2() * 256.0;
            }
        }
        let mut byte_term = 0.0;
        if let Some(lb) = log2apprx(self.last_size, rng) {
            byte_term = ((lb as f64 + log_1e9 - log_b - log_t) / fct).exp2();
        }
        let mut u_term = 0.0;
        if t > dt && self.u > 0.0 {
            let ltd = log2apprx(t - dt, rng);
            let lu = log2apprx((self.u * 8192.0).round() as u64, rng);
            if let (Some(ltd), Some(lu)) = (ltd, lu) {
                u_term = (((ltd + lu) as f64 - log_t) / fct).exp2() / 8192.0;
            }
        }
        self.u = q_term + byte_term + u_term;
        self.u
    }

    /// Any frame left the port: its size and time for the next update.
    pub fn dequeued(&mut self, now_ns: u64, size: u64) {
        self.last_size = size;
        self.last_ns = now_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::component_rng;

    /// Base 1.01: ln(2^18) / ln(1.01) = 1,253.9, 11 bits, 2 bytes; base
    /// 1.05: 255.7, 8 bits, 1 byte; base 1.0001 needs 17 bits: refused.
    #[test]
    fn widths() {
        assert_eq!(
            (PintCodec::new(1.01).bits(), PintCodec::new(1.01).bytes()),
            (11, 2)
        );
        assert_eq!(
            (PintCodec::new(1.05).bits(), PintCodec::new(1.05).bytes()),
            (8, 1)
        );
        assert_eq!(PintCodec::new(1.05).stored(0x1_23), 0x23);
        let e = PintParams {
            log_base: 1.0001,
            prob: 1.0,
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.key, "pint_log_base");
        assert!(PintParams::hpcc_reference().validate().is_ok());
        assert_eq!(
            PintParams {
                prob: 0.5,
                ..PintParams::hpcc_reference()
            }
            .sample_threshold(),
            32_768
        );
    }

    /// u = 0.5 at base 2: ⌈256⌉ = 2^8 exactly, so power 8 always (upper is
    /// 2^9, the fraction 0); decoded 256 / 512 = 0.5. u = 0.75 at base 2:
    /// 384 between 2^8 and 2^9, the upper with probability 128 / 256 =
    /// 1/2, and the mean of the decoded values is 0.75.
    #[test]
    fn encode_decode_by_hand() {
        let c = PintCodec::new(2.0);
        let mut r = component_rng(1, "pint");
        for _ in 0..100 {
            assert_eq!(c.encode(0.5, &mut r), 8);
        }
        assert_eq!(c.decode(8), 0.5);
        assert_eq!(c.encode(0.0, &mut r), 0, "⌈0⌉ counts as 1 = 2^0");
        let n = 20_000;
        let (mut ups, mut sum) = (0, 0.0);
        for _ in 0..n {
            let p = c.encode(0.75, &mut r);
            assert!(p == 8 || p == 9);
            ups += usize::from(p == 9);
            sum += c.decode(p);
        }
        assert!((ups as f64 / n as f64 - 0.5).abs() < 0.02, "{ups}");
        assert!((sum / n as f64 - 0.75).abs() < 0.01);
    }

    /// Below 2^16 the log is exact to 15 bits: log2(1024) = 10 → 327,680;
    /// log2(1500) × 32,768 = 345,726.87 → 345,726. 2^17 + 1 (18 bits)
    /// keeps its top 16 (2^17) and rounds its 2 low bits (value 1) up to
    /// the next 4 with probability 1/4: 17 × 32,768 = 557,056, or
    /// log2(2^17 + 4) × 32,768 = 557,057.44 → 557,057, about a quarter of
    /// the time. 3.5 × 2^20 has only zeros below its 16 leading bits:
    /// log2(3.5 × 2^20) × 32,768 = 714,583.41 → 714,583.
    #[test]
    fn log2apprx_by_hand() {
        let mut r = component_rng(1, "pint");
        assert_eq!(log2apprx(1024, &mut r), Some(327_680));
        assert_eq!(log2apprx(1500, &mut r), Some(345_726));
        let mut ups = 0;
        for _ in 0..4_000 {
            match log2apprx((1 << 17) + 1, &mut r) {
                Some(557_056) => {}
                Some(557_057) => ups += 1,
                other => panic!("{other:?}"),
            }
        }
        assert!((800..1_200).contains(&ups), "{ups}");
        assert_eq!(log2apprx(3 << 20 | 1 << 19, &mut r), Some(714_583));
        assert_eq!(log2apprx(0, &mut r), None);
    }

    /// One update by hand, operands below 2^16 (no draws): T = 8,192 ns,
    /// 100 Gb/s (B = 12.5e9 B/s), last frame 1,048 B, 512 ns since it,
    /// 25,600 B queued (100 × 256), u = 0.5. Exact values: queue term
    /// 512 × 25,600 × 1e9 / (12.5e9 × 8,192²) = 0.01563, byte term 1,048
    /// × 1e9 / (12.5e9 × 8,192) = 0.010234, EWMA term 0.5 × 7,680 / 8,192
    /// = 0.46875; the fixed-point logs keep each within 1e-4 relative.
    #[test]
    fn one_update_by_hand() {
        let mut r = component_rng(1, "pint");
        let mut p = PintPort {
            u: 0.5,
            last_size: 1_048,
            last_ns: 10_000,
        };
        let u = p.update(10_512, 25_600, 100_000_000_000, 8_192, &mut r);
        let q: f64 = 512.0 * 25_600.0 * 1e9 / (12.5e9 * 8_192.0 * 8_192.0);
        let b = 1_048.0 * 1e9 / (12.5e9 * 8_192.0);
        let e = 0.5 * 7_680.0 / 8_192.0;
        assert!((q - 0.015_625).abs() < 1e-6);
        assert!(((u - (q + b + e)) / (q + b + e)).abs() < 1e-4, "{u}");
        assert_eq!(p.u, u);
        // A port idle for T or more: no EWMA term, dt capped at T.
        let mut idle = PintPort {
            u: 0.9,
            last_size: 1_048,
            last_ns: 0,
        };
        let u = idle.update(1_000_000, 0, 100_000_000_000, 8_192, &mut r);
        assert!(((u - b) / b).abs() < 1e-4, "{u}");
        p.dequeued(20_000, 60);
        assert_eq!((p.last_ns, p.last_size), (20_000, 60));
    }
}
