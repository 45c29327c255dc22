//! Flow sizes drawn from an empirical distribution.
//!
//! A size distribution is given as points of its CDF: `(size, percent)`
//! pairs, the fraction of flows no larger than `size`. Between two points
//! the CDF is a straight line, so a size is drawn by inverse transform: a
//! uniform percentile `u` in [0, 100) is mapped to the size where the
//! piecewise-linear CDF reaches `u`. This is how the reference's
//! generator (`custom_rand.py`) draws, and [`SizeCdf::mean`] is its
//! `getAvg`: the mean of that piecewise-uniform distribution,
//! `sum over segments of (x0 + x1) / 2 x (p1 - p0) / 100`.
//!
//! ```text
//!  100 ┤                 ●──────●      each segment spreads its share of
//!      │            ●───╯              flows evenly over its size range
//!   50 ┤      ●────╯
//!      │    ╱
//!    0 ●───╯
//!      0    10K   100K  1M     30M  size (log scale here; linear between points)
//! ```

/// A validated size distribution (see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct SizeCdf {
    points: Vec<(f64, f64)>,
}

/// A point that breaks the rules, by its index in the list.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("point {}: {msg}", point + 1)]
pub struct CdfError {
    /// 0-based index of the offending point.
    pub point: usize,
    /// 1-based field (1 size, 2 percent) and its name.
    pub field: Option<(usize, &'static str)>,
    pub msg: String,
}

impl SizeCdf {
    /// Checks the points as the reference's `testCdf` does (first
    /// percentile 0, last 100, sizes and percentiles strictly increasing)
    /// and that sizes are not negative.
    pub fn new(points: Vec<(f64, f64)>) -> Result<SizeCdf, CdfError> {
        let err = |point: usize, field: usize, msg: String| CdfError {
            point,
            field: Some((field, if field == 1 { "size" } else { "percent" })),
            msg,
        };
        let (Some(&(_, first)), Some(&(_, last))) = (points.first(), points.last()) else {
            return Err(CdfError {
                point: 0,
                field: None,
                msg: "no points: a distribution needs at least two".into(),
            });
        };
        for (i, &(x, p)) in points.iter().enumerate() {
            if !(x.is_finite() && p.is_finite()) {
                return Err(err(i, 1, "sizes and percentiles are finite numbers".into()));
            }
            if x < 0.0 {
                return Err(err(
                    i,
                    1,
                    format!("a flow size cannot be negative, found {x}"),
                ));
            }
        }
        if first != 0.0 {
            return Err(err(
                0,
                2,
                format!("the first point's percentile must be 0, found {first}"),
            ));
        }
        if last != 100.0 {
            let i = points.len() - 1;
            return Err(err(
                i,
                2,
                format!("the last point's percentile must be 100, found {last}"),
            ));
        }
        for (i, w) in points.windows(2).enumerate() {
            let ((x0, p0), (x1, p1)) = (w[0], w[1]);
            if x1 <= x0 {
                return Err(err(
                    i + 1,
                    1,
                    format!("{x1} is not larger than the previous point's {x0}"),
                ));
            }
            if p1 <= p0 {
                return Err(err(
                    i + 1,
                    2,
                    format!("{p1} is not larger than the previous point's {p0}"),
                ));
            }
        }
        Ok(SizeCdf { points })
    }

    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The mean size in bytes (`custom_rand.py` `getAvg`).
    pub fn mean(&self) -> f64 {
        let s: f64 = self
            .points
            .windows(2)
            .map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1))
            .sum();
        s / 100.0
    }

    /// The size at `percent` (0..=100) on the piecewise-linear CDF
    /// (`getValueFromPercentile`).
    pub fn size_at(&self, percent: f64) -> f64 {
        let i = self
            .points
            .iter()
            .skip(1)
            .position(|&(_, p)| percent <= p)
            .map_or(self.points.len() - 1, |i| i + 1);
        let ((x0, p0), (x1, p1)) = (self.points[i - 1], self.points[i]);
        x0 + (x1 - x0) / (p1 - p0) * (percent - p0)
    }

    /// One flow size: the size at a uniform percentile, rounded down to
    /// whole bytes and at least 1 (as traffic_gen.py does), so the mean
    /// of draws is a little under [`SizeCdf::mean`] (by about half a byte,
    /// plus the share of draws below one byte).
    pub fn sample(&self, rng: &mut rand_chacha::ChaCha8Rng) -> u64 {
        let v = self.size_at(crate::rng::unit_f64(rng) * 100.0);
        (v as u64).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_inverse() {
        // Half the flows uniform in 0..100, half in 100..300: mean 25 + 100.
        let c = SizeCdf::new(vec![(0.0, 0.0), (100.0, 50.0), (300.0, 100.0)]).unwrap();
        assert_eq!(c.mean(), 125.0);
        assert_eq!(c.size_at(0.0), 0.0);
        assert_eq!(c.size_at(25.0), 50.0);
        assert_eq!(c.size_at(75.0), 200.0);
        assert_eq!(c.size_at(100.0), 300.0);
        let mut r = crate::rng::component_rng(1, "t");
        let n = 1_000_000;
        let sum: u64 = (0..n).map(|_| c.sample(&mut r)).sum();
        // floor() takes 0.5 off on average; the 0.5 % of draws below 1
        // become 1 (+0.0025). Standard error of the mean: 0.08.
        let m = sum as f64 / n as f64;
        assert!((m - 124.5).abs() < 0.3, "{m}");
    }

    #[test]
    fn refuses_what_test_cdf_refuses() {
        let e = SizeCdf::new(vec![(0.0, 0.0), (10.0, 100.0), (5.0, 100.0)]).unwrap_err();
        assert_eq!((e.point, e.field), (2, Some((1, "size"))));
        assert!(SizeCdf::new(vec![(1.0, 0.0)]).is_err());
        assert!(SizeCdf::new(vec![]).is_err());
    }
}
