//! The congestion point: RED-style ECN marking on an egress queue, one
//! [`RedParams`] per (egress port, priority).
//!
//! ```text
//!  mark probability
//!   1 ┤                    ┏━━━━━━━━   above Kmax: always
//!     │                    ┃
//! Pmax┤               ╱────┨
//!     │          ╱───╱     ┃           between: Pmax·(q − Kmin)/(Kmax − Kmin)
//!   0 ┤━━━━━━━━━╱          ┃           up to Kmin: never
//!     └─────────┴──────────┴──────▶ queue bytes q
//!             Kmin       Kmax
//! ```
//!
//! `q` is the egress queue of the packet's priority, in bytes. Where it is
//! read is [`MarkPoint`]: at enqueue, the bytes already queued ahead of the
//! arriving packet; at dequeue, the bytes left behind the departing one (the
//! HPCC reference removes the packet from its count before deciding). A
//! packet already CE stays CE; a Not-ECT packet is left alone unless
//! `mark_non_ect` (the reference marks whatever the packet's ECN field
//! says, and its data packets are Not-ECT). The reference never marks its
//! priority 0 (ACKs, CNPs): give that queue no `RedParams`.

use rand_chacha::ChaCha8Rng;

use super::ParamError;
use crate::rng::unit_f64;
use crate::time::Rate;

/// IP ECN codepoints (the low two bits of the TOS byte).
pub const NOT_ECT: u8 = 0b00;
pub const CE: u8 = 0b11;

/// Where the queue length is read and the packet marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkPoint {
    Enqueue,
    Dequeue,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedParams {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    /// Marking probability at Kmax, in [0, 1].
    pub pmax: f64,
    pub mark_point: MarkPoint,
    pub mark_non_ect: bool,
}

impl RedParams {
    /// `buffer_bytes`: the switch buffer, which a threshold above would
    /// never be reached by.
    pub fn validate(&self, buffer_bytes: u64) -> Result<(), ParamError> {
        if self.kmin_bytes > self.kmax_bytes {
            return Err(ParamError::new(
                "kmin_bytes",
                format!(
                    "{} is above kmax_bytes ({})",
                    self.kmin_bytes, self.kmax_bytes
                ),
            )
            .hint("marking ramps up from kmin to kmax; kmin = kmax marks every packet above it"));
        }
        if !(0.0..=1.0).contains(&self.pmax) {
            return Err(
                ParamError::new("pmax", format!("{} is outside [0, 1]", self.pmax))
                    .hint("pmax is a probability: 0.2 marks one packet in five at kmax"),
            );
        }
        if self.kmax_bytes > buffer_bytes {
            return Err(ParamError::new(
                "kmax_bytes",
                format!(
                    "{} is above the switch buffer ({buffer_bytes} bytes): no queue gets there",
                    self.kmax_bytes
                ),
            )
            .hint("the HPCC reference's KMAX_MAP values are in units of 1000 bytes"));
        }
        Ok(())
    }

    /// The probability of marking a packet with `queue_bytes` queued, as
    /// the reference computes it.
    pub fn mark_probability(&self, queue_bytes: u64) -> f64 {
        if queue_bytes > self.kmax_bytes {
            1.0
        } else if queue_bytes > self.kmin_bytes {
            self.pmax * (queue_bytes - self.kmin_bytes) as f64
                / (self.kmax_bytes - self.kmin_bytes) as f64
        } else {
            0.0
        }
    }

    /// Whether the packet leaves CE-marked. `ecn` is its 2-bit ECN field.
    /// Draws from `rng` only when the probability is strictly between 0 and
    /// 1.
    pub fn should_mark(&self, queue_bytes: u64, ecn: u8, rng: &mut ChaCha8Rng) -> bool {
        if ecn & CE == CE {
            return true;
        }
        if ecn & CE == NOT_ECT && !self.mark_non_ect {
            return false;
        }
        if queue_bytes > self.kmax_bytes {
            return true;
        }
        if queue_bytes <= self.kmin_bytes {
            return false;
        }
        unit_f64(rng) < self.mark_probability(queue_bytes)
    }
}

/// Marking thresholds per link speed, as the HPCC reference's `KMIN_MAP`,
/// `KMAX_MAP` and `PMAX_MAP` give them: `N rate1 value1 … rateN valueN`,
/// rates in b/s, Kmin/Kmax in units of 1000 bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct RedTable {
    /// (rate b/s, Kmin bytes, Kmax bytes, Pmax), sorted by rate.
    rows: Vec<(u64, u64, u64, f64)>,
}

impl RedTable {
    /// Parses the three map lines (the values after the key). Every rate of
    /// one map must be in the other two.
    pub fn from_reference_maps(kmin: &str, kmax: &str, pmax: &str) -> Result<RedTable, ParamError> {
        let kmin = parse_map("KMIN_MAP", kmin, true)?;
        let kmax = parse_map("KMAX_MAP", kmax, true)?;
        let pmax = parse_map("PMAX_MAP", pmax, false)?;
        let find = |key: &str, map: &[(u64, f64)], rate: u64, from: &str| {
            map.iter()
                .find(|(r, _)| *r == rate)
                .map(|&(_, v)| v)
                .ok_or_else(|| {
                    ParamError::new(key, format!("no entry for {rate} b/s ({from} has one)"))
                        .hint("the reference needs Kmin, Kmax and Pmax for every link speed")
                })
        };
        let mut rows = Vec::new();
        for &(rate, lo) in &kmin {
            let hi = find("KMAX_MAP", &kmax, rate, "KMIN_MAP")?;
            let p = find("PMAX_MAP", &pmax, rate, "KMIN_MAP")?;
            rows.push((rate, lo as u64 * 1000, hi as u64 * 1000, p));
        }
        for (key, map) in [("KMAX_MAP", &kmax), ("PMAX_MAP", &pmax)] {
            for &(rate, _) in map.iter() {
                find("KMIN_MAP", &kmin, rate, key)?;
            }
        }
        rows.sort_by_key(|r| r.0);
        Ok(RedTable { rows })
    }

    /// The reference's marking for a port of `rate`: at dequeue, whatever
    /// the ECN field. `None` when the table has no row for that speed.
    pub fn params_for(&self, rate: Rate) -> Option<RedParams> {
        self.rows
            .iter()
            .find(|r| r.0 == rate.bps())
            .map(|&(_, kmin_bytes, kmax_bytes, pmax)| RedParams {
                kmin_bytes,
                kmax_bytes,
                pmax,
                mark_point: MarkPoint::Dequeue,
                mark_non_ect: true,
            })
    }

    /// The link speeds the table covers, ascending.
    pub fn rates(&self) -> impl Iterator<Item = Rate> + '_ {
        self.rows.iter().map(|r| Rate(r.0))
    }
}

/// `integer`: the values are whole numbers (the reference reads Kmin and
/// Kmax into integers).
fn parse_map(key: &str, text: &str, integer: bool) -> Result<Vec<(u64, f64)>, ParamError> {
    let bad = |what: String| {
        ParamError::new(key, what).hint(
            "format: N rate1 value1 ... rateN valueN, e.g. `2 100000000000 400 400000000000 1600`",
        )
    };
    let mut tokens = text.split_whitespace();
    let n: usize = match tokens.next().map(str::parse) {
        Some(Ok(n)) => n,
        Some(Err(_)) | None => {
            return Err(bad(format!(
                "expected the number of entries first, got `{text}`"
            )));
        }
    };
    let mut out = Vec::with_capacity(n);
    for i in 1..=n {
        let (Some(r), Some(v)) = (tokens.next(), tokens.next()) else {
            return Err(bad(format!("{n} entries announced, entry {i} is missing")));
        };
        let rate: u64 = r
            .parse()
            .ok()
            .filter(|&r| r > 0)
            .ok_or_else(|| bad(format!("entry {i}: `{r}` is not a rate in b/s")))?;
        let value: f64 = v
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0 && (!integer || v.fract() == 0.0))
            .ok_or_else(|| {
                let kind = if integer { "whole number" } else { "number" };
                bad(format!("entry {i}: `{v}` is not a non-negative {kind}"))
            })?;
        if out.iter().any(|&(x, _)| x == rate) {
            return Err(bad(format!("entry {i}: {rate} b/s appears twice")));
        }
        out.push((rate, value));
    }
    if let Some(extra) = tokens.next() {
        return Err(bad(format!(
            "{n} entries announced, `{extra}` follows them"
        )));
    }
    Ok(out)
}
