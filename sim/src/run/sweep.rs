//! Sweeps: a grid of `--set` values times a range of seeds, run in
//! parallel, reported as one table (CSV, JSON) and a plot. The grid and
//! its rows are `grid.rs`'s; the slices of a sharded sweep, `shard.rs`'s.
//!
//! ```text
//!  axes × seeds ──check every point──▶ run each (rayon, `jobs` at a time) ──▶ rows in grid order
//!                                                                             ├─ sweep.csv, sweep.json
//!                                                                             └─ sweep.png/svg (goodput, or busbw, vs first axis)
//! ```

use std::path::Path;

use rayon::prelude::*;

use super::atomic_dir::{check_replaceable, write_dir_atomically};
use super::error::RunError;
use super::grid::{Axis, SweepRow, grid_points, mean_min_max};
use super::lifecycle::check;
use super::plot::{Series, line_plot};
use super::shard::{MANIFEST, Shard, SweepId, manifest_json};
use super::summary::Summary;
use crate::world::QpStatus;

/// Runs every combination of `axes` × `seeds` (only `shard`'s slice of
/// them when given), `jobs` at a time, and returns the rows in grid order
/// (first axis slowest, seeds fastest) whatever the thread scheduling.
pub fn sweep(
    path: &Path,
    base_sets: &[String],
    axes: &[Axis],
    seeds: &[u64],
    shard: Option<Shard>,
    jobs: usize,
    done: &(dyn Fn() + Sync),
) -> Result<Vec<SweepRow>, RunError> {
    let points = grid_points(axes, seeds);
    // Validate every combination before running any (a shard too: every
    // shard of a broken sweep fails at once, not the one that meets it).
    for (g, seed) in &points {
        let mut sets = base_sets.to_vec();
        sets.extend(g.iter().map(|(k, v)| format!("{k}={v}")));
        sets.push(format!("seed={seed}"));
        check(path, &sets)?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| RunError::Output(e.to_string()))?;
    let rows: Vec<Result<SweepRow, RunError>> = pool.install(|| {
        points
            .par_iter()
            .enumerate()
            .filter(|(i, _)| shard.is_none_or(|s| s.takes(*i)))
            .map(|(point, (g, seed))| {
                let mut sets = base_sets.to_vec();
                sets.extend(g.iter().map(|(k, v)| format!("{k}={v}")));
                sets.push(format!("seed={seed}"));
                let (_, sim) = check(path, &sets)?;
                let run = sim.run(&mut ());
                let (w, s) = (&run.world, Summary::of(&run.name, &run.world, 0.0));
                done();
                let client_tx: Vec<u64> = w
                    .client_ports()
                    .into_iter()
                    .map(|p| s.ports[p as usize].counters.tx_bytes)
                    .collect();
                Ok(SweepRow {
                    point,
                    params: g.clone(),
                    seed: *seed,
                    sim_time_ns: s.sim_time_ns,
                    events: s.events,
                    aggregate_goodput_gbps: s.aggregate_goodput_gbps,
                    qps_ok: s
                        .clients()
                        .filter(|q| q.status == QpStatus::Success)
                        .count(),
                    qps_failed: s
                        .clients()
                        .filter(|q| {
                            matches!(q.status, QpStatus::Error(_) | QpStatus::Unconnected(_))
                        })
                        .count(),
                    retransmitted_packets: s.qps.iter().map(|q| q.retransmitted_packets).sum(),
                    drops: s.ports.iter().map(|p| p.counters.drops).sum(),
                    max_port_tx_bytes: client_tx.iter().copied().max().unwrap_or(0),
                    min_port_tx_bytes: client_tx.iter().copied().min().unwrap_or(0),
                    fct_slowdown_p50: s.fct.as_ref().map(|f| f.slowdown.p50),
                    fct_slowdown_p99: s.fct.as_ref().map(|f| f.slowdown.p99),
                    fct_small_p99: s.fct.as_ref().map(|f| f.small.p99),
                    fct_large_p50: s.fct.as_ref().map(|f| f.large.p50),
                    peak_switch_buffer_bytes: s
                        .switches
                        .iter()
                        .map(|x| x.peak_buffer_bytes)
                        .max()
                        .unwrap_or(0),
                    pfc_pauses_sent: pauses_sent(w),
                    max_link_utilisation: max_link_utilisation(w, s.sim_time_ns),
                    busbw_gbps: super::collectives::sweep_busbw(&s.collectives),
                })
            })
            .collect()
    });
    rows.into_iter().collect()
}

/// PAUSE and PFC frames every port sent (`tx_pause_ctrl_phy`).
fn pauses_sent(w: &rocesim_model::world::World) -> u64 {
    let now = w.now();
    let mut n = 0;
    for p in w.ports() {
        p.pause_counters(now, |k, v| {
            if k == "tx_pause_ctrl_phy" {
                n += v;
            }
        });
    }
    n
}

/// The busiest switch egress port's share of its link over the run.
fn max_link_utilisation(w: &rocesim_model::world::World, sim_time_ns: u64) -> f64 {
    let t = sim_time_ns as f64 * 1e-9;
    let u = w
        .ports()
        .filter(|p| !p.is_host_port() && p.rate().bps() > 0 && t > 0.0)
        .map(|p| p.counters().tx_bytes as f64 * 8.0 / (p.rate().bps() as f64 * t))
        .fold(0.0, f64::max);
    (u * 1000.0).round() / 1000.0
}

/// Refuses an output path that exists and is not a sweep directory (a
/// file, a device, someone's data): it would be replaced.
pub fn check_sweep_out(out: &Path) -> Result<(), RunError> {
    check_replaceable(out, "sweep.csv", "rocesim sweep")
}

/// Writes `sweep.csv`, `sweep.json` and `sweep.png/svg` into `out`
/// (through a temporary directory renamed into place), and for a shard
/// its `shard.json`, what `rocesim sweep merge` reads.
pub fn write_sweep(
    out: &Path,
    axes: &[Axis],
    rows: &[SweepRow],
    shard: Option<(&SweepId, Shard)>,
) -> Result<(), RunError> {
    check_sweep_out(out)?;
    write_dir_atomically(out, "sweep", |tmp| {
        let io = |e: std::io::Error| RunError::Output(format!("{}: {e}", tmp.display()));
        std::fs::write(tmp.join("sweep.csv"), sweep_csv(axes, rows)).map_err(io)?;
        std::fs::write(tmp.join("sweep.json"), sweep_json(rows)).map_err(io)?;
        if let Some((id, shard)) = shard {
            std::fs::write(tmp.join(MANIFEST), manifest_json(id, shard, rows)).map_err(io)?;
        }
        sweep_plot(tmp, axes, rows).map_err(RunError::Output)
    })
}

fn sweep_csv(axes: &[Axis], rows: &[SweepRow]) -> String {
    let mut csv = String::new();
    for a in axes {
        csv.push_str(&a.key);
        csv.push(',');
    }
    csv.push_str("seed,aggregate_goodput_gbps,sim_time_ns,events,qps_ok,qps_failed,retransmitted_packets,drops,max_port_tx_bytes,min_port_tx_bytes");
    // Sweeps of scenarios with flows have two more columns.
    let fct = rows.iter().any(|r| r.fct_slowdown_p50.is_some());
    if fct {
        csv.push_str(",fct_slowdown_p50,fct_slowdown_p99,fct_small_p99,fct_large_p50");
    }
    csv.push_str(",peak_switch_buffer_bytes,pfc_pauses_sent,max_link_utilisation");
    // Sweeps of scenarios with collectives have one more.
    let coll = rows.iter().any(|r| r.busbw_gbps.is_some());
    if coll {
        csv.push_str(",busbw_GBps");
    }
    csv.push('\n');
    for r in rows {
        for (_, v) in &r.params {
            csv.push_str(&csv_field(v));
            csv.push(',');
        }
        csv.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{}",
            r.seed,
            r.aggregate_goodput_gbps,
            r.sim_time_ns,
            r.events,
            r.qps_ok,
            r.qps_failed,
            r.retransmitted_packets,
            r.drops,
            r.max_port_tx_bytes,
            r.min_port_tx_bytes
        ));
        if fct {
            let f = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
            csv.push_str(&format!(
                ",{},{},{},{}",
                f(r.fct_slowdown_p50),
                f(r.fct_slowdown_p99),
                f(r.fct_small_p99),
                f(r.fct_large_p50)
            ));
        }
        csv.push_str(&format!(
            ",{},{},{}",
            r.peak_switch_buffer_bytes, r.pfc_pauses_sent, r.max_link_utilisation
        ));
        if coll {
            csv.push_str(&format!(",{}", r.busbw_gbps.unwrap_or(0.0)));
        }
        csv.push('\n');
    }
    csv
}

fn sweep_json(rows: &[SweepRow]) -> String {
    let json: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut m = serde_json::Map::new();
            let params: serde_json::Map<String, serde_json::Value> = r
                .params
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect();
            m.insert("params".into(), params.into());
            m.insert("seed".into(), r.seed.into());
            m.insert(
                "aggregate_goodput_gbps".into(),
                r.aggregate_goodput_gbps.into(),
            );
            m.insert("sim_time_ns".into(), r.sim_time_ns.into());
            m.insert("events".into(), r.events.into());
            m.insert("qps_ok".into(), r.qps_ok.into());
            m.insert("qps_failed".into(), r.qps_failed.into());
            m.insert(
                "retransmitted_packets".into(),
                r.retransmitted_packets.into(),
            );
            m.insert("drops".into(), r.drops.into());
            m.insert("max_port_tx_bytes".into(), r.max_port_tx_bytes.into());
            m.insert("min_port_tx_bytes".into(), r.min_port_tx_bytes.into());
            if let (Some(p50), Some(p99)) = (r.fct_slowdown_p50, r.fct_slowdown_p99) {
                m.insert("fct_slowdown_p50".into(), p50.into());
                m.insert("fct_slowdown_p99".into(), p99.into());
            }
            if let (Some(small), Some(large)) = (r.fct_small_p99, r.fct_large_p50) {
                m.insert("fct_small_p99".into(), small.into());
                m.insert("fct_large_p50".into(), large.into());
            }
            m.insert(
                "peak_switch_buffer_bytes".into(),
                r.peak_switch_buffer_bytes.into(),
            );
            m.insert("pfc_pauses_sent".into(), r.pfc_pauses_sent.into());
            m.insert("max_link_utilisation".into(), r.max_link_utilisation.into());
            if let Some(b) = r.busbw_gbps {
                m.insert("busbw_GBps".into(), b.into());
            }
            serde_json::Value::Object(m)
        })
        .collect();
    serde_json::to_string_pretty(&json).expect("plain JSON values") + "\n"
}

fn csv_field(v: &str) -> String {
    if v.contains([',', '"', '\n']) {
        format!("\"{}\"", v.replace('"', "\"\""))
    } else {
        v.to_string()
    }
}

/// Aggregate goodput (a collective's busbw, for a scenario with
/// collectives) against the first axis (mean over seeds, with the minimum
/// and maximum as separate thin lines), one series per combination of the
/// other axes.
fn sweep_plot(dir: &Path, axes: &[Axis], rows: &[SweepRow]) -> Result<(), String> {
    let coll = rows.iter().any(|r| r.busbw_gbps.is_some());
    let y = |r: &SweepRow| {
        if coll {
            r.busbw_gbps.unwrap_or(0.0)
        } else {
            r.aggregate_goodput_gbps
        }
    };
    let (what, y_label) = if coll {
        ("Bus bandwidth", "busbw at the largest size (GB/s)")
    } else {
        ("Aggregate goodput", "aggregate goodput (Gb/s)")
    };
    let Some(x_axis) = axes.first() else {
        return line_plot(
            dir,
            "sweep",
            &format!("{what} per seed"),
            "seed",
            y_label,
            &[Series::new(
                if coll { "busbw" } else { "goodput" },
                rows.iter().map(|r| (r.seed as f64, y(r))).collect(),
                0,
            )],
        );
    };
    let numeric = x_axis.values.iter().all(|v| v.parse::<f64>().is_ok());
    let xpos = |v: &str| -> f64 {
        if numeric {
            v.parse().unwrap()
        } else {
            x_axis.values.iter().position(|x| x == v).unwrap() as f64
        }
    };
    // One series per combination of the other axes, named by it.
    let key = |r: &SweepRow| {
        r.params[1..]
            .iter()
            .map(|(k, v)| format!("{}={v}", k.rsplit('.').next().unwrap_or(k)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut keys: Vec<String> = Vec::new();
    for r in rows {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut series = Vec::new();
    for (ci, k) in keys.iter().enumerate() {
        let mut mean = Vec::new();
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        for x in &x_axis.values {
            let ys: Vec<f64> = rows
                .iter()
                .filter(|r| r.params[0].1 == *x && key(r) == *k)
                .map(y)
                .collect();
            let Some((m, min, max)) = mean_min_max(&ys) else {
                continue;
            };
            mean.push((xpos(x), m));
            lo.push((xpos(x), min));
            hi.push((xpos(x), max));
        }
        let name = if k.is_empty() {
            "mean".to_string()
        } else {
            format!("{k} (mean)")
        };
        let mut mean = Series::new(name, mean, ci);
        mean.markers = true;
        series.push(mean);
        let label = format!("{k} min / max over seeds");
        let mut lo = Series::new(label.trim_start(), lo, ci);
        lo.width = 1;
        let mut hi = Series::new("", hi, ci);
        hi.width = 1;
        series.push(lo);
        series.push(hi);
    }
    let x_label = if numeric {
        x_axis.key.clone()
    } else {
        format!("{} ({})", x_axis.key, x_axis.values.join(", "))
    };
    line_plot(
        dir,
        "sweep",
        &format!("{what} over seeds"),
        &x_label,
        y_label,
        &series,
    )
}
