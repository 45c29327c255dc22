//! What `rocesim` prints on stdout: the summary as text tables, JSON or
//! CSV; the result of `check`; a sweep's table. Tables and counts are laid
//! out by `roce_capture::human`, as `roce-pcap` lays out its own.

use std::fmt::Write as _;

use roce_capture::human::{plural, table};

use super::grid::{Axis, SweepRow, mean_min_max};
use super::shortlist::keep_most;
use super::summary::{QpRecords, Summary};
use crate::world::port::select::Tsa;
use crate::world::{QpStatus, World};

/// `rocesim check`'s line: what the scenario builds.
pub fn check_line(
    file: &str,
    name: &str,
    w: &World,
    cut: Option<crate::parallel::Cut>,
    hosts: usize,
    switches: usize,
    links: usize,
) -> String {
    let mut s = format!(
        "{file}: ok: scenario `{name}`, seed {}, {}, {}, {}, {} ({} QPs, both ends)\n",
        w.seed(),
        plural(hosts as u64, "host"),
        plural(switches as u64, "switch"),
        plural(links as u64, "link"),
        plural(w.connection_count() as u64, "RC connection"),
        w.qp_count() + 2 * w.flows_not_started()
    );
    if let Some(c) = cut {
        let part = |i: usize| {
            format!(
                "{} and {}",
                plural(c.switches[i] as u64, "switch"),
                plural(c.hosts[i] as u64, "host")
            )
        };
        let parts: Vec<String> = (0..c.switches.len()).map(part).collect();
        let _ = writeln!(
            s,
            "  partitions = {}: {}, across {} (windows of {})",
            parts.len(),
            parts.join(" | "),
            plural(c.links as u64, "link"),
            c.lookahead
        );
    }
    s
}

/// `rocesim check`'s warnings about congestion control: hosts that run
/// HPCC while their NICs acknowledge once per message or coalesce ACKs
/// (a `connectx` or `rxe` profile as it is): HPCC updates from the records
/// each ACK echoes, so such a NIC leaves it reacting once per message.
pub fn cc_warnings(w: &World) -> Vec<String> {
    let sparse: Vec<&str> = w
        .hosts()
        .filter(|h| {
            let p = h.profile();
            p.algorithm.needs_telemetry() && (p.ack_req_every != 1 || p.coalesce_acks)
        })
        .map(|h| h.name())
        .collect();
    match sparse.first() {
        None => vec![],
        Some(first) => vec![format!(
            "{} run{} HPCC but acknowledge{} less than every packet (`{first}` first): HPCC reads the \
             telemetry each ACK echoes and will react late; set [host.transport] ack_req_every = 1 and \
             ack_coalesce = false, as the hpcc profile does",
            plural(sparse.len() as u64, "host"),
            if sparse.len() == 1 { "s" } else { "" },
            if sparse.len() == 1 { "s" } else { "" },
        )],
    }
}

/// `rocesim check`'s PFC headroom table: per switch port that has lossless
/// priorities and per NIC with a receive buffer (`[host.pfc]`), its
/// headroom beside what they need (the shortest first in a fabric too
/// large to list), and a warning per switch whose headroom falls short
/// somewhere and per NIC short of it. Empty without lossless priorities.
pub fn headroom_report(w: &World) -> (String, Vec<String>) {
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    for sw in w.switches() {
        let ports = sw.headroom();
        let short: Vec<_> = ports.iter().filter(|h| h.short_bytes() > 0).collect();
        if let Some(worst) = short.iter().max_by_key(|h| h.needed_bytes()) {
            warnings.push(format!(
                "{}: the PFC headroom of {} is short (`{}`: {} bytes, needs {}): lossless frames will be \
                 dropped; headroom = \"auto\" sizes each port, headroom = \"{}B\" covers them all",
                sw.name(),
                plural(short.len() as u64, "port"),
                w.port(worst.port).name(),
                worst.configured_bytes,
                worst.needed_bytes(),
                ports.iter().map(|h| h.needed_bytes()).max().unwrap_or(0),
            ));
        }
        rows.extend(ports);
    }
    let layouts = w.nic_rx_layouts();
    for h in w.nic_headroom() {
        if h.short_bytes() > 0 {
            let mlx5 = layouts
                .iter()
                .any(|(p, l)| *p == h.port && l.mlx5.is_some());
            let fix = match mlx5 {
                true => {
                    "raise cable_len (the driver sizes the headroom from it) and buffer_size with it"
                }
                false => "raise rx_buffer or lower xoff",
            };
            warnings.push(format!(
                "`{}`: its receive buffer holds {} bytes above XOFF, short of the {} its peer may still send \
                 after a pause: the NIC will drop (rx_discards_phy); {fix}",
                w.port(h.port).name(),
                h.configured_bytes,
                h.needed_bytes()
            ));
        }
        rows.push(h);
    }
    if rows.is_empty() {
        return (String::new(), warnings);
    }
    let all: Vec<usize> = (0..rows.len()).collect();
    let shown = keep_most(&all, TABLE_ROWS, |&i| rows[i].short_bytes());
    let mut t = vec![row([
        "port",
        "lossless",
        "link",
        "propagation",
        "peer reaction",
        "headroom B",
        "needed B",
        "short B",
    ])];
    for h in shown.iter().map(|&i| &rows[i]) {
        let prios: Vec<String> = h.priorities().map(|p| p.to_string()).collect();
        let n = &h.need;
        t.push(vec![
            w.port(h.port).name().to_string(),
            prios.join(","),
            crate::units::fmt_rate(n.rate),
            n.propagation.to_string(),
            format!("{} bits", n.peer_interface_bits + n.peer_response_bits),
            h.configured_bytes.to_string(),
            h.needed_bytes().to_string(),
            h.short_bytes().to_string(),
        ]);
    }
    let mut out = String::from(
        "PFC headroom per lossless (port, priority); needed: frames in flight at both ends, PFC frame, \
         cable both ways, peer's reaction\n",
    );
    out.push_str(&table(&t));
    if shown.len() < rows.len() {
        let _ = writeln!(
            out,
            "  ... {} shown (the shortest of headroom); all {} in summary.json after a run",
            plural(shown.len() as u64, "port"),
            rows.len()
        );
    }
    (out, warnings)
}

/// `rocesim check`'s table of ConnectX receive buffers, as `mlnx_qos`
/// shows them ("Receive buffer size", "Cable len", the `buffer` row of
/// its PFC table) with the thresholds the driver derived: per host NIC
/// with ConnectX buffers, every buffer that has bytes or priorities; and
/// a warning per priority mapped to a buffer of 0 bytes. Empty without
/// such NICs.
pub fn buffer_report(w: &World) -> (String, Vec<String>) {
    let mut rows: Vec<(bool, Vec<String>)> = Vec::new();
    let mut warnings = Vec::new();
    for (port, l) in w.nic_rx_layouts() {
        let Some(m) = &l.mlx5 else { continue };
        let name = w.port(port).name();
        for (i, b) in l.buffers.iter().enumerate() {
            if b.size == 0 && b.prios == 0 {
                continue;
            }
            if b.size == 0 {
                for p in (0..8u8).filter(|p| b.prios & 1 << p != 0) {
                    warnings.push(format!(
                        "`{name}`: priority {p} is in buffer {i}, which has 0 bytes: the NIC drops all its frames (rx_prio{p}_discards)"
                    ));
                }
            }
            let dash = || "-".to_string();
            let lossless = b.lossless();
            let cells = match lossless {
                true => [
                    format!("{} m", m.request.cable_len_m),
                    m.request.mtu.to_string(),
                    m.xoff_bytes.to_string(),
                    b.xoff.to_string(),
                    b.xon.to_string(),
                ],
                false => std::array::from_fn(|_| dash()),
            };
            let mut r = vec![
                name.to_string(),
                i.to_string(),
                b.size.to_string(),
                prio_list(b.prios),
                prio_list(b.pauses),
            ];
            r.extend(cells);
            rows.push((lossless, r));
        }
    }
    if rows.is_empty() {
        return (String::new(), warnings);
    }
    let all: Vec<usize> = (0..rows.len()).collect();
    let shown = keep_most(&all, TABLE_ROWS, |&i| rows[i].0);
    let mut t = vec![row([
        "port",
        "buffer",
        "size B",
        "priorities",
        "PFC",
        "cable_len",
        "MTU",
        "xoff B",
        "XOFF at B",
        "XON at B",
    ])];
    t.extend(shown.iter().map(|&i| rows[i].1.clone()));
    let mut out = String::from(
        "NIC receive buffers (mlx5 driver: lossless with a PFC priority; headroom xoff = (301 + 2.16 x cable_len) x Gb/s \
         + 2.72 x MTU; XOFF at size - xoff, XON max(max_mtu, 9216) lower; 128-byte cells)\n",
    );
    out.push_str(&table(&t));
    if shown.len() < rows.len() {
        let _ = writeln!(
            out,
            "  ... {} shown (lossless first); the layout is each NIC's [host.pfc]",
            plural(shown.len() as u64, "buffer"),
        );
    }
    (out, warnings)
}

/// The priorities of `mask`, `0,1,2` (`-` for none).
fn prio_list(mask: u8) -> String {
    let v: Vec<String> = (0..8)
        .filter(|p| mask & 1 << p != 0)
        .map(|p| p.to_string())
        .collect();
    match v.is_empty() {
        true => "-".into(),
        false => v.join(","),
    }
}

/// `rocesim check`'s egress schedulers: per switch or host with
/// `[switch.ets]`/`[host.ets]`, its configuration as `mlnx_qos` options and
/// a row per traffic class that has priorities, as `mlnx_qos` prints them
/// (switches and hosts alike grouped). Empty when every port runs strict
/// priority.
pub fn ets_report(w: &World) -> String {
    use crate::world::port::select::Algorithm;
    let all = w.tx_selections();
    if all.is_empty() {
        return String::new();
    }
    // Owners of one configuration, in order of first appearance.
    let mut groups: Vec<(Vec<&str>, usize, _)> = Vec::new();
    for (name, ports, s) in all {
        let key = s.ets_config().copied();
        match groups.iter_mut().find(|(_, _, k)| *k == key) {
            Some(g) => {
                g.0.push(name);
                g.1 += ports;
            }
            None => groups.push((vec![name], ports, key)),
        }
        debug_assert!(matches!(
            (s.algorithm(), key),
            (Algorithm::Ets(_), Some(_)) | (Algorithm::RoundRobin { .. }, None)
        ));
    }
    let mut out = String::new();
    for (names, ports, cfg) in groups {
        let who = if names.len() > 4 {
            format!("{} and {} more", names[..3].join(", "), names.len() - 3)
        } else {
            names.join(", ")
        };
        let who = format!("{who} ({})", plural(ports as u64, "port"));
        let Some(c) = cfg else {
            let _ = writeln!(
                out,
                "Egress scheduler of {who}: the HPCC reference's round robin (priority 0 first, then one frame \
                 per priority in turn)"
            );
            continue;
        };
        let _ = writeln!(out, "ETS on {who}: mlnx_qos {}", c.mlnx_qos());
        let mut t = vec![row(["tc", "tsa", "bw", "priorities"])];
        for tc in (0..8).rev() {
            let prios = c.priorities_of(tc);
            if prios == 0 {
                continue;
            }
            let bw = match c.tsa[tc] {
                Tsa::Ets if c.tcbw[tc] == 0 => "0 % (what the others leave)".to_string(),
                Tsa::Ets => format!("{} %", c.tcbw[tc]),
                Tsa::Strict => "-".to_string(),
            };
            let list: Vec<String> = (0..8)
                .filter(|p| prios & 1 << p != 0)
                .map(|p| p.to_string())
                .collect();
            t.push(vec![
                tc.to_string(),
                c.tsa[tc].name().to_string(),
                bw,
                list.join(","),
            ]);
        }
        out.push_str(&table(&t));
    }
    out
}

/// The summary as `--format json` prints it: summary.json's content.
pub fn summary_json(s: &Summary<impl QpRecords>) -> String {
    serde_json::to_string_pretty(s).expect("plain JSON values") + "\n"
}

/// One row per client QP (`--format csv`).
pub fn summary_csv(s: &Summary<impl QpRecords>) -> String {
    let mut out = String::from(
        "host,qpn,dest_qpn,src,dst,udp_sport,port,slave,tx_bytes,goodput_gbps,retransmitted_packets,timeouts,naks_rx,status\n",
    );
    for q in s.qps.client_records() {
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

/// Rows a text table shows before it is cut to its most telling ones: a
/// fabric has a thousand ports and a QP pair per flow, which `ports.csv`,
/// `qps.csv` and `--format csv|json` list in full.
const TABLE_ROWS: usize = 40;
/// Bonds take several lines each: fewer of them.
const BOND_ROWS: usize = 8;

/// The summary as text tables (`--format table`): ports that carried
/// anything (the busiest, in a large fabric), client QPs (those that
/// failed first, in a large run), bonds' shares and events, the flows'
/// slowdowns, the aggregate.
pub fn summary_table(s: &Summary<impl QpRecords>) -> String {
    let mut out = format!(
        "scenario {} (seed {}): {:.3} ms simulated, {} events, {:.2} s wall\n\n",
        s.scenario,
        s.seed,
        s.sim_time_ns as f64 / 1e6,
        s.events,
        s.wall_s
    );
    let mut ports = vec![row(["port", "tx bytes", "tx Gb/s", "rx bytes", "drops"])];
    let used: Vec<usize> = (0..s.ports.len())
        .filter(|&i| s.ports[i].counters.tx_bytes > 0 || s.ports[i].counters.rx_bytes > 0)
        .collect();
    // Ports that dropped first, then the busiest by bytes sent; in table order.
    let shown = keep_most(&used, TABLE_ROWS, |&i| {
        let c = &s.ports[i].counters;
        (c.drops > 0, c.tx_bytes)
    });
    for &i in &shown {
        let (p, c) = (&s.ports[i], &s.ports[i].counters);
        ports.push(vec![
            p.name.clone(),
            c.tx_bytes.to_string(),
            format!("{:.2}", p.tx_gbps),
            c.rx_bytes.to_string(),
            c.drops.to_string(),
        ]);
    }
    out.push_str(&table(&ports));
    if shown.len() < used.len() {
        let _ = writeln!(
            out,
            "  ... {} shown (any that dropped, then the busiest); {} more in ports.csv",
            plural(shown.len() as u64, "port"),
            used.len() - shown.len()
        );
    }
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
    // Those that failed or were cut short first, then the lowest goodput:
    // chosen by key, then only those records kept (a fabric has 100,000).
    let keys: Vec<_> = s
        .qps
        .client_records()
        .map(|q| {
            (
                q.status != QpStatus::Success,
                std::cmp::Reverse((q.goodput_gbps * 1e3) as u64),
            )
        })
        .collect();
    let all: Vec<usize> = (0..keys.len()).collect();
    let shown = keep_most(&all, TABLE_ROWS, |&i| keys[i]);
    let mut picked = vec![false; keys.len()];
    for &i in &shown {
        picked[i] = true;
    }
    let mut records: std::collections::HashMap<usize, _> = s
        .qps
        .client_records()
        .enumerate()
        .filter(|(i, _)| picked[*i])
        .collect();
    for q in shown.iter().filter_map(|i| records.remove(i)) {
        let status = if q.status_code != 0 {
            format!("{} ({})", q.status.name(), q.status_code)
        } else {
            q.status.name().to_string()
        };
        qps.push(vec![
            q.host.to_string(),
            format!("{:#x}", q.qpn),
            format!("{:#x}", q.dest_qpn),
            format!("{:#06x}", q.udp_sport),
            q.port.as_deref().unwrap_or("-").to_string(),
            q.slave.map_or("-".into(), |x| x.to_string()),
            format!("{:.2}", q.goodput_gbps),
            q.retransmitted_packets.to_string(),
            q.timeouts.to_string(),
            q.naks_rx.to_string(),
            status,
        ]);
    }
    out.push_str(&table(&qps));
    if shown.len() < keys.len() {
        let _ = writeln!(
            out,
            "  ... {} shown (any that did not succeed, then the lowest goodput); all {} in qps.csv",
            plural(shown.len() as u64, "client QP"),
            keys.len()
        );
    }
    if let Some(f) = &s.fct {
        out.push('\n');
        out.push_str(&super::fct::table(f));
    }
    if !s.collectives.is_empty() {
        out.push('\n');
        out.push_str(&super::collectives::table(&s.collectives));
    }
    // A fabric of multi-homed hosts has a bond per host: those that failed
    // over first, then the least balanced (the largest slave's share).
    let all: Vec<usize> = (0..s.bonds.len()).collect();
    let bonds = keep_most(&all, BOND_ROWS, |&i| {
        let b = &s.bonds[i];
        let total: u64 = b.slave_tx_bytes.iter().sum();
        let top = b.slave_tx_bytes.iter().max().copied().unwrap_or(0);
        let share = if total > 0 {
            (u128::from(top) * 1_000_000 / u128::from(total)) as u64
        } else {
            0
        };
        (!b.events.is_empty(), share)
    });
    for b in bonds.iter().map(|&i| &s.bonds[i]) {
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
    if bonds.len() < s.bonds.len() {
        let _ = writeln!(
            out,
            "  ... {} shown (any that failed over, then the least balanced); all {} in summary.json",
            plural(bonds.len() as u64, "bond"),
            s.bonds.len()
        );
    }
    let _ = write!(
        out,
        "\naggregate goodput: {:.2} Gb/s\n  (all client QPs' payload over the workload's span; a QP's goodput is over its own span)\n",
        s.aggregate_goodput_gbps
    );
    out
}

/// A sweep's table: per grid point (the rows of its seeds), the mean,
/// minimum and maximum goodput and the failed QPs; of a scenario with
/// collectives, also the first one's busbw at its largest size.
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
    let coll = rows.iter().any(|r| r.busbw_gbps.is_some());
    if coll {
        header.extend(row(["busbw GB/s mean", "min", "max"]));
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
        if coll {
            let b: Vec<f64> = chunk.iter().map(|r| r.busbw_gbps.unwrap_or(0.0)).collect();
            let (mean, min, max) = mean_min_max(&b).expect("every grid point has its seeds");
            r.push(format!("{mean:.2}"));
            r.push(format!("{min:.2}"));
            r.push(format!("{max:.2}"));
        }
        t.push(r);
    }
    table(&t)
}

fn row<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.map(str::to_string).to_vec()
}
