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

    /// The HPCC reference's marking for a port: Kmin and Kmax
    /// from `KMIN_MAP`/`KMAX_MAP` (× 1000 bytes) and Pmax from `PMAX_MAP`,
    /// at dequeue, whatever the ECN field; and the maps that have no entry
    /// for the port's rate.
    ///
    /// The reference asserts an entry for every port speed, but with
    /// `NS_ASSERT_MSG`, which its optimized build (the one that runs)
    /// compiles out: `rate2kmax[rate]` then reads 0. Kmax 0 marks every
    /// packet that leaves bytes behind it, whatever Kmin and Pmax say; Pmax
    /// 0 alone marks only above Kmax. So does this.
    /// `kmin`, `kmax` (× 1000 bytes) and `pmax`: the maps' entries for the
    /// port's rate, `None` where a map has none.
    pub fn hpcc_reference(
        kmin: Option<f64>,
        kmax: Option<f64>,
        pmax: Option<f64>,
    ) -> (RedParams, Vec<&'static str>) {
        let mut missing = Vec::new();
        let mut get = |key: &'static str, v: Option<f64>| {
            v.unwrap_or_else(|| {
                missing.push(key);
                0.0
            })
        };
        let kmin = get("KMIN_MAP", kmin);
        let kmax = get("KMAX_MAP", kmax);
        let pmax = get("PMAX_MAP", pmax);
        // Kmin above a missing (0) Kmax changes nothing there: Kmax is
        // looked at first.
        let kmin = if kmax == 0.0 { 0.0 } else { kmin };
        (
            RedParams {
                kmin_bytes: kmin as u64 * 1000,
                kmax_bytes: kmax as u64 * 1000,
                pmax,
                mark_point: MarkPoint::Dequeue,
                mark_non_ect: true,
            },
            missing,
        )
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
