//! Percentiles with memory bounded by the number of distinct values, not
//! the number of samples.
//!
//! ```text
//!  exact mode:    value -> count           (while at most EXACT_KEYS distinct values)
//!  bucket mode:   value with its low bits cleared -> count
//!                 (7 significant bits kept: every value is reported at most
//!                  1/128 = 0.8 % below the truth; values below 128 stay exact)
//! ```
//! Percentiles use the nearest-rank definition: p50 of n samples is the
//! ceil(0.50 n)-th smallest. `max` and `min` are always exact.

use std::collections::BTreeMap;

use serde::Serialize;

const EXACT_KEYS: usize = 1024;
const SIGNIFICANT_BITS: u32 = 7;

#[derive(Debug, Clone, Default)]
pub struct Quantiles {
    counts: BTreeMap<u64, u64>,
    bucketed: bool,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// Percentile summary as reports show it (nanoseconds or bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Summary {
    pub samples: u64,
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub max: Option<u64>,
}

fn bucket(v: u64) -> u64 {
    let bits = 64 - v.leading_zeros();
    if bits <= SIGNIFICANT_BITS {
        v
    } else {
        let shift = bits - SIGNIFICANT_BITS;
        (v >> shift) << shift
    }
}

impl Quantiles {
    pub fn add(&mut self, v: u64) {
        if self.n == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.n += 1;
        self.sum += u128::from(v);
        let key = if self.bucketed { bucket(v) } else { v };
        *self.counts.entry(key).or_insert(0) += 1;
        if !self.bucketed && self.counts.len() > EXACT_KEYS {
            let old = std::mem::take(&mut self.counts);
            for (k, c) in old {
                *self.counts.entry(bucket(k)).or_insert(0) += c;
            }
            self.bucketed = true;
        }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// Whether percentiles are exact (false once values were bucketed).
    pub fn is_exact(&self) -> bool {
        !self.bucketed
    }

    /// The nearest-rank `q`-quantile (0 < q <= 1).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (&v, &c) in &self.counts {
            seen += c;
            if seen >= rank {
                // The top bucket holds the true maximum.
                return Some(if seen == self.n {
                    v.max(self.min).min(self.max)
                } else {
                    v
                });
            }
        }
        Some(self.max)
    }

    pub fn summary(&self) -> Summary {
        Summary {
            samples: self.n,
            p50: self.quantile(0.50),
            p99: self.quantile(0.99),
            max: self.max(),
        }
    }

    /// Distinct keys held: what this costs in memory.
    pub fn keys(&self) -> usize {
        self.counts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_on_small_sets() {
        let mut q = Quantiles::default();
        for v in [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] {
            q.add(v);
        }
        // ceil(0.5 * 10) = 5th smallest; ceil(0.99 * 10) = 10th.
        assert_eq!(q.quantile(0.5), Some(50));
        assert_eq!(q.quantile(0.99), Some(100));
        assert_eq!(q.summary().max, Some(100));
        assert!(q.is_exact());
        let mut one = Quantiles::default();
        one.add(7);
        assert_eq!(
            one.summary(),
            Summary {
                samples: 1,
                p50: Some(7),
                p99: Some(7),
                max: Some(7)
            }
        );
        assert_eq!(Quantiles::default().summary().p50, None);
    }

    #[test]
    fn many_distinct_values_stay_bounded_and_close() {
        let mut q = Quantiles::default();
        for v in 1..=1_000_000u64 {
            q.add(v * 37);
        }
        assert!(!q.is_exact());
        assert!(q.keys() < 2000, "{} keys", q.keys());
        let p50 = q.quantile(0.5).unwrap() as f64;
        let truth = 500_000.0 * 37.0;
        assert!((truth - p50) / truth < 1.0 / 64.0 && p50 <= truth, "{p50}");
        assert_eq!(q.max(), Some(37_000_000));
    }
}
