//! A long list cut to the entries worth showing: a fabric has a thousand
//! ports and a QP pair per flow, more than a printed table or a plot's
//! legend can take in. The files (`ports.csv`, `qps.csv`, `summary.json`)
//! keep every entry.

/// The indices of `rows` to show: all of them up to `limit`, else the
/// `limit` greatest by `rank`, in their original order (ties keep it too).
pub(super) fn keep_most<K: Ord>(
    rows: &[usize],
    limit: usize,
    rank: impl Fn(&usize) -> K,
) -> Vec<usize> {
    if rows.len() <= limit {
        return rows.to_vec();
    }
    let mut by_rank = rows.to_vec();
    // Stable: equal ranks keep table order.
    by_rank.sort_by_key(|i| std::cmp::Reverse(rank(i)));
    by_rank.truncate(limit);
    by_rank.sort_unstable();
    by_rank
}
