//! What `rocesim` prints on stdout: the summary as text tables, JSON or
//! CSV; the result of `check`; a sweep's table. Tables and counts are laid
//! out by `roce_capture::human`, as `roce-pcap` lays out its own.

use std::fmt::Write as _;

use roce_capture::human::{plural, table};

use super::Axis;
use super::summary::Summary;
use super::sweep::{SweepRow, mean_min_max};
use crate::world::World;

/// `rocesim check`'s line: what the scenario builds.
pub fn check_line(
    file: &str,
    name: &str,
    w: &World,
    hosts: usize,
    switches: usize,
    links: usize,
) -> String {
    format!(
        "{file}: ok: scenario `{name}`, seed {}, {}, {}, {}, {} ({} QPs, both ends)\n",
        w.seed(),
        plural(hosts as u64, "host"),
        plural(switches as u64, "switch"),
        plural(links as u64, "link"),
        plural(w.connection_count() as u64, "RC connection"),
        w.qp_count() + 2 * w.flows_not_started()
    )
}

/// The summary as `--format json` prints it: summary.json's content.
pub fn summary_json(s: &Summary) -> String {
    serde_json::to_string_pretty(s).expect("plain JSON values") + "\n"
}

/// One row per client QP (`--format csv`).
pub fn summary_csv(s: &Summary) -> String {
    let mut out = String::from(
        "host,qpn,dest_qpn,src,dst,udp_sport,port,slave,tx_bytes,goodput_gbps,retransmitted_packets,timeouts,naks_rx,status\n",
    );
    for q in s.clients() {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            q.host,
            q.qpn,
            q.dest_qpn,
            q.src,
            q.dst,
            q.udp_sport,
            q.port.as_deref().unwrap_or(""),
            q.slave.map_or(String::new(), |x| x.to_string()),
            q.tx_bytes,
            q.goodput_gbps,
            q.retransmitted_packets,
            q.timeouts,
            q.naks_rx,
            q.status.name()
        );
    }
    out
}

/// The summary as text tables (`--format table`): ports that carried
/// anything, client QPs, bonds' shares and events, the aggregate.
pub fn summary_table(s: &Summary) -> String {
    let mut out = format!(
        "scenario {} (seed {}): {:.3} ms simulated, {} events, {:.2} s wall\n\n",
        s.scenario,
        s.seed,
        s.sim_time_ns as f64 / 1e6,
        s.events,
        s.wall_s
    );
    let mut ports = vec![row(["port", "tx bytes", "tx Gb/s", "rx bytes", "drops"])];
    for p in &s.ports {
        let c = &p.counters;
        if c.tx_bytes > 0 || c.rx_bytes > 0 {
            ports.push(vec![
                p.name.clone(),
                c.tx_bytes.to_string(),
                format!("{:.2}", p.tx_gbps),
                c.rx_bytes.to_string(),
                c.drops.to_string(),
            ]);
        }
    }
    out.push_str(&table(&ports));
    out.push('\n');
    let mut qps = vec![row([
        "host",
        "qpn",
        "dest",
        "sport",
        "port",
        "slave",
        "goodput Gb/s",
        "retx",
        "timeouts",
        "naks",
        "status",
    ])];
    for q in s.clients() {
        let status = if q.status_code != 0 {
            format!("{} ({})", q.status.name(), q.status_code)
        } else {
            q.status.name().to_string()
        };
        qps.push(vec![
            q.host.clone(),
            format!("{:#x}", q.qpn),
            format!("{:#x}", q.dest_qpn),
            format!("{:#06x}", q.udp_sport),
            q.port.clone().unwrap_or_else(|| "-".into()),
            q.slave.map_or("-".into(), |x| x.to_string()),
            format!("{:.2}", q.goodput_gbps),
            q.retransmitted_packets.to_string(),
            q.timeouts.to_string(),
            q.naks_rx.to_string(),
            status,
        ]);
    }
    out.push_str(&table(&qps));
    for b in &s.bonds {
        let total: u64 = b.slave_tx_bytes.iter().sum();
        out.push('\n');
        if b.mode == "active-backup" {
            let _ = writeln!(out, "{} ({}): bytes sent per slave", b.name, b.mode);
        } else {
            let _ = writeln!(
                out,
                "{} ({}, {}): bytes sent per slave",
                b.name, b.mode, b.xmit_hash_policy
            );
        }
        if let Some(how) = b.roce_port_selection {
            let _ = writeln!(out, "  ({how})");
        }
        for (i, (name, bytes)) in b.slaves.iter().zip(&b.slave_tx_bytes).enumerate() {
            let share = if total > 0 {
                *bytes as f64 * 100.0 / total as f64
            } else {
                0.0
            };
            let _ = writeln!(out, "  slave {i} {name}: {bytes} B ({share:.1}%)");
        }
        for e in &b.events {
            let _ = writeln!(out, "  at {:.3} ms: {}", e.t_ns as f64 / 1e6, e.message);
        }
    }
    let _ = write!(
        out,
        "\naggregate goodput: {:.2} Gb/s\n  (all client QPs' payload over the workload's span; a QP's goodput is over its own span)\n",
        s.aggregate_goodput_gbps
    );
    out
}

/// A sweep's table: per grid point (the rows of its seeds), the mean,
/// minimum and maximum goodput and the failed QPs.
pub fn sweep_table(axes: &[Axis], rows: &[SweepRow], seeds: usize) -> String {
    let mut header: Vec<String> = axes
        .iter()
        .map(|a| a.key.rsplit('.').next().unwrap_or(&a.key).to_string())
        .collect();
    header.extend(row([
        "seeds",
        "goodput Gb/s mean",
        "min",
        "max",
        "failed QPs",
    ]));
    let fct = rows.iter().any(|r| r.fct_slowdown_p99.is_some());
    if fct {
        header.extend(row(["slowdown p50", "p99 mean", "p99 max"]));
    }
    let mut t = vec![header];
    for chunk in rows.chunks(seeds) {
        let g: Vec<f64> = chunk.iter().map(|r| r.aggregate_goodput_gbps).collect();
        let (mean, min, max) = mean_min_max(&g).expect("every grid point has its seeds");
        let mut r: Vec<String> = chunk[0].params.iter().map(|(_, v)| v.clone()).collect();
        r.push(seeds.to_string());
        r.push(format!("{mean:.2}"));
        r.push(format!("{min:.2}"));
        r.push(format!("{max:.2}"));
        r.push(
            chunk
                .iter()
                .map(|r| r.qps_failed)
                .sum::<usize>()
                .to_string(),
        );
        if fct {
            let p50: Vec<f64> = chunk.iter().filter_map(|r| r.fct_slowdown_p50).collect();
            let p99: Vec<f64> = chunk.iter().filter_map(|r| r.fct_slowdown_p99).collect();
            let (m50, _, _) = mean_min_max(&p50).unwrap_or((0.0, 0.0, 0.0));
            let (m99, _, x99) = mean_min_max(&p99).unwrap_or((0.0, 0.0, 0.0));
            r.push(format!("{m50:.2}"));
            r.push(format!("{m99:.2}"));
            r.push(format!("{x99:.2}"));
        }
        t.push(r);
    }
    table(&t)
}

fn row<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.map(str::to_string).to_vec()
}
