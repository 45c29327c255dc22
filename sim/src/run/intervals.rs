//! Rates from the sampled time series: each sample paired with the same
//! component's previous one, and bytes over a span of time in Gb/s.
//! `ports.csv`, `qps.csv`, the plots and `summary.json` take their rates
//! from here.

use crate::time::Ps;

/// Rows of samples of `n` components (`key`: which one, below `n`, or
/// `None` for a row left out), in time order: each with its component and
/// that component's previous row, if any. A component made during the run
/// (a flow's QP) has rows from then on.
pub(super) fn with_previous<S>(
    samples: &[S],
    n: usize,
    key: impl Fn(&S) -> Option<usize>,
) -> impl Iterator<Item = (usize, &S, Option<&S>)> {
    let mut last: Vec<Option<&S>> = vec![None; n];
    samples.iter().filter_map(move |s| {
        let k = key(s)?;
        Some((k, s, last[k].replace(s)))
    })
}

/// `bytes` over `t`, in Gb/s; 0 over no time.
pub(super) fn gbps(bytes: u64, t: Ps) -> f64 {
    if t == Ps::ZERO {
        0.0
    } else {
        bytes as f64 * 8.0 / t.as_secs_f64() / 1e9
    }
}
