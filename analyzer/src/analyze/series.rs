//! Time series for plots, in memory that does not grow with the capture:
//! every container here coarsens itself when it fills up.
//!
//! ```text
//!  Bins:       |1us|1us|1us| ... 4096 bins full -> merge pairs -> |2us|2us| ...
//!  Points:     keep every point; at the cap drop every other one and from
//!              then on keep one point in 2 (4, 8, ...)
//!  Intervals:  [s,e) list; at the cap merge neighbours pairwise
//! ```

const MAX_BINS: usize = 4096;
const BASE_WIDTH_NS: u64 = 1_000;
const MAX_POINTS: usize = 20_000;
const MAX_INTERVALS: usize = 8_192;

/// Sums of a value over fixed-width time bins starting at `start_ns`.
#[derive(Debug, Clone, Default)]
pub struct Bins {
    pub start_ns: u64,
    pub width_ns: u64,
    pub values: Vec<f64>,
}

impl Bins {
    pub fn add(&mut self, ts_ns: u64, v: f64) {
        if self.width_ns == 0 {
            self.width_ns = BASE_WIDTH_NS;
            self.start_ns = ts_ns - ts_ns % BASE_WIDTH_NS;
        }
        let ts = ts_ns.max(self.start_ns);
        let mut idx = ((ts - self.start_ns) / self.width_ns) as usize;
        while idx >= MAX_BINS {
            self.coarsen();
            idx = ((ts - self.start_ns) / self.width_ns) as usize;
        }
        if idx >= self.values.len() {
            self.values.resize(idx + 1, 0.0);
        }
        self.values[idx] += v;
    }

    fn coarsen(&mut self) {
        // Keep bin edges on multiples of the new width so that series that
        // started at different times still line up.
        let w2 = self.width_ns * 2;
        let shift = usize::from(self.start_ns % w2 != 0);
        let mut out = vec![0.0; (self.values.len() + shift).div_ceil(2)];
        for (i, v) in self.values.iter().enumerate() {
            out[(i + shift) / 2] += v;
        }
        self.start_ns -= self.start_ns % w2;
        self.width_ns = w2;
        self.values = out;
    }

    /// The same sums over bins of `width_ns` (a multiple of this width,
    /// as all widths are powers of two times 1 us), from `start_ns`.
    pub fn rebin(&self, start_ns: u64, width_ns: u64, n: usize) -> Vec<f64> {
        let mut out = vec![0.0; n];
        if self.width_ns == 0 {
            return out;
        }
        for (i, v) in self.values.iter().enumerate() {
            let t = self.start_ns + i as u64 * self.width_ns;
            if t >= start_ns {
                let j = ((t - start_ns) / width_ns) as usize;
                if j < n {
                    out[j] += v;
                }
            }
        }
        out
    }

    pub fn end_ns(&self) -> u64 {
        self.start_ns + self.values.len() as u64 * self.width_ns
    }
}

/// Sampled (time, value) points.
#[derive(Debug, Clone)]
pub struct Points {
    pub pts: Vec<(u64, i64)>,
    stride: u64,
    seen: u64,
}

impl Default for Points {
    fn default() -> Self {
        Points {
            pts: Vec::new(),
            stride: 1,
            seen: 0,
        }
    }
}

impl Points {
    pub fn push(&mut self, ts_ns: u64, v: i64) {
        if self.seen % self.stride == 0 {
            self.pts.push((ts_ns, v));
            if self.pts.len() >= MAX_POINTS {
                let mut i = 0;
                self.pts.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
        }
        self.seen += 1;
    }

    /// One point kept per `stride()` pushed.
    pub fn stride(&self) -> u64 {
        self.stride
    }
}

/// Time intervals [start, end) in nanoseconds, in the order pushed.
#[derive(Debug, Clone, Default)]
pub struct Intervals {
    pub iv: Vec<(u64, u64)>,
}

impl Intervals {
    pub fn push(&mut self, s: u64, e: u64) {
        if let Some(last) = self.iv.last_mut() {
            if s <= last.1 {
                last.1 = last.1.max(e);
                return;
            }
        }
        self.iv.push((s, e));
        if self.iv.len() >= MAX_INTERVALS {
            let old = std::mem::take(&mut self.iv);
            for pair in old.chunks(2) {
                let e = pair.last().unwrap().1;
                self.iv.push((pair[0].0, e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_coarsen_and_keep_sums() {
        let mut b = Bins::default();
        let mut total = 0.0;
        for i in 0..100_000u64 {
            b.add(1_000_500 + i * 997, 1.0);
            total += 1.0;
        }
        assert!(b.values.len() <= MAX_BINS);
        assert_eq!(b.values.iter().sum::<f64>(), total);
        assert_eq!(b.start_ns % b.width_ns, 0);
        let n = ((b.end_ns() - b.start_ns) / b.width_ns) as usize;
        let r = b.rebin(b.start_ns, b.width_ns * 4, n / 4 + 1);
        assert_eq!(r.iter().sum::<f64>(), total);
    }

    #[test]
    fn points_and_intervals_are_capped() {
        let mut p = Points::default();
        for i in 0..1_000_000 {
            p.push(i, i as i64);
        }
        assert!(p.pts.len() < MAX_POINTS);
        assert!(p.stride() >= 32);
        let mut iv = Intervals::default();
        for i in 0..100_000u64 {
            iv.push(i * 10, i * 10 + 5);
        }
        assert!(iv.iv.len() < MAX_INTERVALS);
        assert_eq!(iv.iv[0].0, 0);
        assert_eq!(iv.iv.last().unwrap().1, 999_995);
    }
}
