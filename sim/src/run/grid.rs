//! A sweep's grid, and the vocabulary of its results: the `--set` axes and
//! the seeds as the flags give them, the grid's points in grid order, the
//! row one finished point leaves ([`SweepRow`]), and what is said over the
//! rows of one point's seeds. The sweep that runs the grid (`sweep.rs`), its
//! shards (`shard.rs`) and its printed table (`table.rs`) all speak it.
//!
//! ```text
//!  --set K1=a,b --set K2=x,y --seeds 1..3
//!    grid order: (a,x,1) (a,x,2) (a,y,1) (a,y,2) (b,x,1) ... (b,y,2)   first axis slowest, seeds fastest
//!    point i ──run──▶ SweepRow { point: i, params, seed, aggregate_goodput_gbps, ... }
//!    the rows of one point's seeds ──▶ mean_min_max, same_outcome
//! ```

use serde::{Deserialize, Serialize};

use super::error::RunError;

/// One `--set KEY=V1,V2,...` axis of a sweep.
#[derive(Debug, Clone)]
pub struct Axis {
    pub key: String,
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...`. Values containing commas can be written as a
/// TOML array in brackets, which stays one value.
pub fn parse_axis(s: &str) -> Result<Axis, RunError> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| RunError::Usage(format!("--set `{s}`: expected KEY=V1,V2,...")))?;
    let values: Vec<String> = if v.trim_start().starts_with('[') {
        vec![v.trim().to_string()]
    } else {
        v.split(',').map(|x| x.trim().to_string()).collect()
    };
    if k.trim().is_empty() || values.iter().any(String::is_empty) {
        return Err(RunError::Usage(format!("--set `{s}`: empty key or value")));
    }
    Ok(Axis {
        key: k.trim().to_string(),
        values,
    })
}

/// Parses `A..B` (inclusive of A, exclusive of B, as Rust ranges) or `A..=B`
/// or a single seed.
pub fn parse_seeds(s: &str) -> Result<Vec<u64>, RunError> {
    let bad = || {
        RunError::Usage(format!(
            "--seeds `{s}`: expected A..B (B excluded), A..=B or one seed N"
        ))
    };
    let num = |x: &str| x.trim().parse::<u64>().map_err(|_| bad());
    let v: Vec<u64> = if let Some((a, b)) = s.split_once("..=") {
        (num(a)?..=num(b)?).collect()
    } else if let Some((a, b)) = s.split_once("..") {
        (num(a)?..num(b)?).collect()
    } else {
        vec![num(s)?]
    };
    if v.is_empty() || v.len() > 100_000 {
        return Err(bad());
    }
    Ok(v)
}

/// One finished grid point of a sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRow {
    /// Its index in the whole grid (first axis slowest, seeds fastest).
    pub point: usize,
    pub params: Vec<(String, String)>,
    pub seed: u64,
    pub sim_time_ns: u64,
    pub events: u64,
    pub aggregate_goodput_gbps: f64,
    pub qps_ok: usize,
    pub qps_failed: usize,
    pub retransmitted_packets: u64,
    pub drops: u64,
    /// Bytes sent by the busiest and the idlest port of the clients'
    /// interfaces (every slave of a client bond, idle ones included): the
    /// imbalance a LAG hash leaves.
    pub max_port_tx_bytes: u64,
    pub min_port_tx_bytes: u64,
    /// FCT slowdown p50 and p99 of a scenario with flows (`[[traffic]]`).
    #[serde(default)]
    pub fct_slowdown_p50: Option<f64>,
    #[serde(default)]
    pub fct_slowdown_p99: Option<f64>,
    /// The HPCC paper's two panels: p99 slowdown of the flows under
    /// 100 KB, p50 of those from 1 MB on.
    #[serde(default)]
    pub fct_small_p99: Option<f64>,
    #[serde(default)]
    pub fct_large_p50: Option<f64>,
    /// The most bytes any switch held at once.
    #[serde(default)]
    pub peak_switch_buffer_bytes: u64,
    /// PAUSE/PFC frames sent by every port.
    #[serde(default)]
    pub pfc_pauses_sent: u64,
    /// The busiest switch egress port's bytes over its rate and the run
    /// (frame bytes, no preamble or gap), in [0, 1].
    #[serde(default)]
    pub max_link_utilisation: f64,
    /// The first `[[collective]]`'s busbw at its largest size, GB/s (0
    /// when it failed), for a scenario with collectives.
    #[serde(default)]
    pub busbw_gbps: Option<f64>,
}

/// Every point of the grid in grid order (first axis slowest, seeds
/// fastest): its `--set` values, one per axis, and its seed.
pub(super) fn grid_points(axes: &[Axis], seeds: &[u64]) -> Vec<(Vec<(String, String)>, u64)> {
    let mut grid: Vec<Vec<(String, String)>> = vec![vec![]];
    for a in axes {
        grid = grid
            .into_iter()
            .flat_map(|g| {
                a.values.iter().map(move |v| {
                    let mut g = g.clone();
                    g.push((a.key.clone(), v.clone()));
                    g
                })
            })
            .collect();
    }
    grid.iter()
        .flat_map(|g| seeds.iter().map(move |&s| (g.clone(), s)))
        .collect()
}

/// Mean, minimum and maximum of one grid point's values (one per seed),
/// or `None` for no values. The mean is kept inside `[min, max]`: summing
/// 32 copies of 174.255 gives a mean one ulp above 174.255, which the table
/// rounds to 174.26 beside a maximum of 174.25.
pub fn mean_min_max(values: &[f64]) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    Some((mean.clamp(min, max), min, max))
}

/// Whether the runs of one grid point (one per seed) came out alike in
/// everything the sweep reports: then the seed changed nothing a capacity
/// study looks at, and averaging over seeds is an illusion.
pub fn same_outcome(runs: &[SweepRow]) -> bool {
    let key = |r: &SweepRow| {
        (
            r.sim_time_ns,
            r.aggregate_goodput_gbps.to_bits(),
            r.qps_failed,
            r.retransmitted_packets,
            r.drops,
            r.max_port_tx_bytes,
            r.min_port_tx_bytes,
            r.busbw_gbps.map(f64::to_bits),
        )
    };
    runs.windows(2).all(|w| key(&w[0]) == key(&w[1]))
}
