//! The `[[collective]]`s' results as nccl-tests prints them: the table
//! (`size count type redop root time algbw busbw #wrong`, GB/s = 10^9
//! B/s, time in µs, facts §1), `collectives.csv`, summary.json's
//! `collectives`, and `busbw.png`/`.svg` (bus bandwidth against size).
//!
//! Only the out-of-place group is simulated (in-place moves the same bytes
//! on the network); `#wrong` is `N/A` as with nccl-tests' `-c 0`: no data
//! is simulated, so none is checked.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::transport::collective::plan;
use crate::world::World;

/// One size of one collective.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CollectiveRow {
    pub name: String,
    pub op: &'static str,
    /// `ring` or `tree`, or `p2p` for sendrecv and alltoall.
    pub algorithm: &'static str,
    pub ranks: u32,
    #[serde(rename = "type")]
    pub datatype: &'static str,
    pub redop: &'static str,
    pub root: i64,
    pub size_bytes: u64,
    pub count: u64,
    pub time_us: f64,
    #[serde(rename = "algbw_GBps")]
    pub algbw_gbps: f64,
    #[serde(rename = "busbw_GBps")]
    pub busbw_gbps: f64,
    /// Line rate × payload efficiency at the RoCE MTU × NICs used, in bus
    /// bandwidth terms (the tree: what its busiest NIC allows).
    #[serde(rename = "bound_GBps")]
    pub bound_gbps: f64,
    /// `success` or `error`.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every collective's rows, in scenario order then size order.
pub fn rows(w: &World) -> Vec<CollectiveRow> {
    let mut out = Vec::new();
    for (name, c) in w.collectives() {
        let s = c.spec();
        for r in c.results() {
            out.push(CollectiveRow {
                name: name.to_string(),
                op: s.op.name(),
                algorithm: if s.op.p2p() {
                    "p2p"
                } else if plan::on_tree(s.op, &s.knobs) {
                    "tree"
                } else {
                    "ring"
                },
                ranks: c.topo().ranks,
                datatype: s.datatype.name(),
                redop: if s.op.reduces() { "sum" } else { "none" },
                root: if s.op.rooted() { i64::from(s.root) } else { -1 },
                size_bytes: r.size_bytes,
                count: r.count,
                time_us: r.time_us,
                algbw_gbps: r.algbw_gbps,
                busbw_gbps: r.busbw_gbps,
                bound_gbps: s.bound.bps() as f64 / 8.0 / 1e9,
                status: if r.error.is_some() {
                    "error"
                } else {
                    "success"
                },
                error: r.error.clone(),
            });
        }
    }
    out
}

/// What a sweep reports of a run's collectives: the first collective's
/// bus bandwidth at the largest size it reached (GB/s), 0 when that size
/// failed (nccl-tests stops at the failure); `None` without a collective.
pub fn sweep_busbw(rows: &[CollectiveRow]) -> Option<f64> {
    let first = &rows.first()?.name;
    let last = rows.iter().rev().find(|r| &r.name == first)?;
    Some(if last.error.is_some() {
        0.0
    } else {
        last.busbw_gbps
    })
}

/// nccl-tests' time column: `%7.0f` from 10 ms, `%7.1f` from 100 µs,
/// else `%7.2f` (util.cu).
fn time_text(us: f64) -> String {
    if us >= 10000.0 {
        format!("{us:7.0}")
    } else if us >= 100.0 {
        format!("{us:7.1}")
    } else {
        format!("{us:7.2}")
    }
}

/// The table nccl-tests prints, one block per collective.
pub fn table(rows: &[CollectiveRow]) -> String {
    let mut out = String::new();
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    for name in names {
        let mine: Vec<&CollectiveRow> = rows.iter().filter(|r| r.name == name).collect();
        let f = mine[0];
        let _ = writeln!(
            out,
            "# {name}: {}_perf, {} ranks, {} (out-of-place; in-place is not simulated)",
            f.op, f.ranks, f.algorithm
        );
        out.push_str("#\n");
        let _ = writeln!(
            out,
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}",
            "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"
        );
        let _ = writeln!(
            out,
            "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}",
            "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", ""
        );
        let mut sum = 0.0;
        let mut n = 0;
        for r in &mine {
            if let Some(e) = &r.error {
                let _ = writeln!(out, "NCCL WARN {e}");
                let _ = writeln!(
                    out,
                    "Test NCCL failure: 'remote process exited or there was a network error' at size {}",
                    r.size_bytes
                );
                continue;
            }
            let _ = writeln!(
                out,
                "{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {}  {:>6.2}  {:>6.2}  {:>6}",
                r.size_bytes,
                r.count,
                r.datatype,
                r.redop,
                r.root,
                time_text(r.time_us),
                r.algbw_gbps,
                r.busbw_gbps,
                "N/A"
            );
            sum += r.busbw_gbps;
            n += 1;
        }
        let avg = if n > 0 { sum / f64::from(n) } else { 0.0 };
        let _ = writeln!(out, "# Out of bounds values : N/A (no data is simulated)");
        let _ = writeln!(out, "# Avg bus bandwidth    : {avg:.4} ");
        let _ = writeln!(
            out,
            "# Bound (line × payload efficiency) : {:.4} GB/s",
            f.bound_gbps
        );
        out.push_str("#\n");
    }
    out
}

/// `collectives.csv`: every row.
pub fn csv(rows: &[CollectiveRow]) -> String {
    let mut out = String::from(
        "collective,op,algorithm,ranks,type,size_bytes,count,time_us,algbw_GBps,busbw_GBps,bound_GBps,status,error\n",
    );
    for r in rows {
        let err = r.error.as_deref().unwrap_or("").replace('"', "'");
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{:.3},{:.4},{:.4},{:.4},{},\"{}\"",
            r.name,
            r.op,
            r.algorithm,
            r.ranks,
            r.datatype,
            r.size_bytes,
            r.count,
            r.time_us,
            r.algbw_gbps,
            r.busbw_gbps,
            r.bound_gbps,
            r.status,
            err
        );
    }
    out
}

/// Writes `collectives.csv` and `busbw.png`/`.svg` when the run has
/// collectives.
pub fn write(dir: &Path, rows: &[CollectiveRow]) -> Result<(), String> {
    if rows.is_empty() {
        return Ok(());
    }
    let path = dir.join("collectives.csv");
    std::fs::write(&path, csv(rows)).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut series = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for r in rows {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    for (i, name) in names.iter().enumerate() {
        let ok: Vec<&CollectiveRow> = rows
            .iter()
            .filter(|r| r.name == *name && r.error.is_none() && r.size_bytes > 0)
            .collect();
        // log2 of the size: the x axis is logarithmic.
        let pts = ok
            .iter()
            .map(|r| ((r.size_bytes as f64).log2(), r.busbw_gbps))
            .collect();
        series.push(super::plot::Series::new(
            format!("{name} busbw"),
            pts,
            2 * i,
        ));
        let bound = ok
            .iter()
            .map(|r| ((r.size_bytes as f64).log2(), r.bound_gbps))
            .collect();
        series.push(super::plot::Series::new(
            format!("{name} bound"),
            bound,
            2 * i + 1,
        ));
    }
    super::plot::line_plot(
        dir,
        "busbw",
        "nccl-tests bus bandwidth by size",
        "size (log2 bytes: 10 = 1 KiB, 20 = 1 MiB, 30 = 1 GiB)",
        "busbw (GB/s)",
        &series,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_column_follows_nccl_tests() {
        assert_eq!(time_text(17.756), "  17.76");
        assert_eq!(time_text(123.45), "  123.5");
        assert_eq!(time_text(12345.6), "  12346");
    }
}
