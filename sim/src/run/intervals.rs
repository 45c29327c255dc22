//! Rates from the sampled time series: each sample paired with the same
//! component's previous one, and bytes over a span of time in Gb/s.
//! `ports.csv`, `qps.csv`, the plots and `summary.json` take their rates
//! from here; the run's estimate, how many spans are open at once.

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

/// The most of `spans` (`[start, end)`) open at one time: a span that
/// ends where another starts is not open with it.
pub(super) fn most_at_once(spans: impl IntoIterator<Item = (Ps, Ps)>) -> u64 {
    // Ends sort before starts at the same time (-1 before +1).
    let mut edges: Vec<(Ps, i8)> = spans
        .into_iter()
        .filter(|(a, b)| a < b)
        .flat_map(|(a, b)| [(a, 1), (b, -1)])
        .collect();
    edges.sort_unstable();
    let (mut open, mut most) = (0i64, 0i64);
    for (_, d) in edges {
        open += i64::from(d);
        most = most.max(open);
    }
    most as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [0, 10) and [5, 15) overlap; [15, 20) starts as [5, 15) ends;
    /// [20, 20) is empty: at most 2 open.
    #[test]
    fn most_at_once_by_hand() {
        let ps = |a, b| (Ps(a), Ps(b));
        assert_eq!(
            most_at_once([ps(0, 10), ps(5, 15), ps(15, 20), ps(20, 20)]),
            2
        );
        assert_eq!(most_at_once([ps(0, 10), ps(1, 9), ps(2, 8)]), 3);
        assert_eq!(most_at_once([]), 0);
    }
}
