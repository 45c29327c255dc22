//! The plots of the sampled time series, rates against time:
//! `ports.png/svg` (what each host port sent), `qps.png/svg` (the payload
//! each QP sent) and `rates.png/svg` (the rate each QP's limiter allowed,
//! DCQCN's sawtooth). Drawn by [`super::plot`].

use std::path::Path;

use super::intervals::with_previous;
use super::plot::{Series, line_plot, line_plot_from, time_unit};
use super::shortlist::keep_most;
use crate::time::Ps;
use crate::world::{PortSample, QpSample, QpView, Role, World};

/// Per-interval rates (Gb/s against time in `unit` seconds) of the
/// samples' `bytes`, one series per line (`n` of them), in one pass: each
/// sample goes to its component's `line`, if it is drawn.
fn rates<S>(
    samples: &[S],
    n: usize,
    unit: f64,
    (line, t): (impl Fn(&S) -> Option<usize>, impl Fn(&S) -> Ps),
    bytes: impl Fn(&S) -> u64,
) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new(); n];
    for (l, s, prev) in with_previous(samples, n, line) {
        let Some(prev) = prev else { continue };
        let dt = (t(s) - t(prev)).as_secs_f64();
        if dt > 0.0 {
            out[l].push((
                t(s).as_secs_f64() / unit,
                (bytes(s) - bytes(prev)) as f64 * 8.0 / dt / 1e9,
            ));
        }
    }
    out
}

/// Host ports drawn at most; a run with more shows the busiest (the CSV
/// has them all).
const MAX_PORT_LINES: usize = 24;

/// Client QPs drawn at most; a run with more shows the first ones (the
/// CSV has them all).
const MAX_QP_LINES: usize = 32;

/// `ports.png/svg`: transmit throughput per host NIC port (per bond slave).
pub fn port_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let x_label = format!("time ({unit_name})");
    let (title, port_series) = port_lines(w, unit);
    line_plot(
        dir,
        "ports",
        &title,
        &x_label,
        "transmit rate (Gb/s)",
        &port_series,
    )
}

/// The title and lines of `ports.png`: each host port that sent, and each
/// slave of a bond that sent on any, at most [`MAX_PORT_LINES`] of them.
fn port_lines(w: &World, unit: f64) -> (String, Vec<Series>) {
    let port_rates = rates(
        w.port_samples(),
        w.ports().len(),
        unit,
        (|s: &PortSample| Some(s.port as usize), |s: &PortSample| s.t),
        |s| s.tx_bytes,
    );
    // An idle slave beside a busy one is what a bad hash looks like: it is
    // drawn, flat at 0, where a port of no bond that sent nothing is not.
    let busy_bond_slaves: Vec<&str> = w
        .bonds()
        .filter(|b| b.slaves().any(|s| s.counters().tx_bytes > 0))
        .flat_map(|b| b.slaves().map(|s| s.name()).collect::<Vec<_>>())
        .collect();
    let ports: Vec<_> = w
        .ports()
        .zip(port_rates)
        .filter(|(p, _)| {
            p.is_host_port() && (p.counters().tx_bytes > 0 || busy_bond_slaves.contains(&p.name()))
        })
        .collect();
    let total = ports.len();
    // The busiest, in port order: a fabric's 320 lines are a blur.
    let all: Vec<usize> = (0..total).collect();
    let shown = keep_most(&all, MAX_PORT_LINES, |&i| ports[i].0.counters().tx_bytes);
    let mut shown = shown.into_iter().peekable();
    let port_series: Vec<Series> = ports
        .into_iter()
        .enumerate()
        .filter_map(|(i, port)| shown.next_if_eq(&i).map(|_| port))
        .enumerate()
        .map(|(c, (p, pts))| Series::new(port_name(w, p.name()), pts, c))
        .collect();
    let title = if total > MAX_PORT_LINES {
        format!("Transmit throughput per host port ({MAX_PORT_LINES} busiest of {total})")
    } else {
        "Transmit throughput per host port".to_string()
    };
    (title, port_series)
}

/// A host port's name as the bond tables print it: `hostA.eth0 (bond0
/// slave 0)` for a bond's slave, else its own name.
fn port_name(w: &World, port: &str) -> String {
    for b in w.bonds() {
        if let Some(i) = b.slaves().position(|s| s.name() == port) {
            return format!("{port} ({} slave {i})", b.iface_name());
        }
    }
    port.to_string()
}

/// `qps.png/svg`: payload sent per client QP, and per READ responder that
/// sent any.
pub fn qp_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let x_label = format!("time ({unit_name})");
    let (title, qp_series) = qp_payload_lines(w, unit);
    line_plot(
        dir,
        "qps",
        &title,
        &x_label,
        "payload rate (Gb/s)",
        &qp_series,
    )
}

/// The title and lines of `qps.png`: payload sent over time (Gb/s against
/// time in `unit` seconds) by each client QP and, where a READ's responder
/// carries the data, by each responder that sent any.
fn qp_payload_lines(w: &World, unit: f64) -> (String, Vec<Series>) {
    // A READ's data flows the other way: its responder sends the payload,
    // its requester only the requests. Responders that sent payload are
    // drawn too, first, so that the line cap never leaves them out; a
    // requester that sent none (an `ib_read_bw` client) is then left out,
    // its line flat at 0 and its name only crowding the legend.
    let responders = w
        .qps()
        .any(|q| q.role() == Role::Server && q.tx_payload_bytes() > 0);
    let drawn = |q: &QpView<'_>| match q.role() {
        Role::Client => !responders || q.tx_payload_bytes() > 0,
        Role::Server => q.tx_payload_bytes() > 0,
    };
    let (servers, clients): (Vec<_>, Vec<_>) = w
        .qps()
        .filter(drawn)
        .partition(|q| q.role() == Role::Server);
    let what = match (servers.is_empty(), clients.is_empty()) {
        (true, _) => "Payload sent per client QP",
        (false, true) => "Payload sent per READ responder QP",
        (false, false) => "Payload sent per QP (READ responders and client QPs)",
    };
    let total = servers.len() + clients.len();
    let shown: Vec<QpView<'_>> = servers
        .into_iter()
        .chain(clients)
        .take(MAX_QP_LINES)
        .collect();
    // Only the lines drawn are gathered (a fabric has 200,000 QPs).
    let mut line_of: Vec<Option<u32>> = vec![None; w.qp_count()];
    for (l, q) in shown.iter().enumerate() {
        line_of[q.index() as usize] = Some(l as u32);
    }
    let qp_rates = rates(
        w.qp_samples(),
        shown.len(),
        unit,
        (
            |s: &QpSample| line_of[s.qp as usize].map(|l| l as usize),
            |s: &QpSample| s.t,
        ),
        |s| s.tx_payload,
    );
    let title = if total > MAX_QP_LINES {
        format!("{what} (first {MAX_QP_LINES} of {total})")
    } else {
        what.to_string()
    };
    (title, qp_lines(shown.into_iter().zip(qp_rates).collect()))
}

/// The rate each QP's limiter allowed over time (`rates.png/svg`), from the
/// last sample before it began to send: client QPs, and servers whose
/// reaction point cut their rate (READ responders).
/// DCQCN's sawtooth: a cut on a CNP, then recovery in steps.
pub fn rate_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let wanted = |q: &QpView<'_>| {
        q.role() == Role::Client || q.reaction_point().is_some_and(|rp| rp.cuts > 0)
    };
    // Only the lines drawn are gathered: a fabric's 200,000 QPs' points
    // took 20 MB for the 32 drawn.
    let (mut total, mut drawn) = (0, Vec::new());
    let mut line_of: Vec<Option<u32>> = vec![None; w.qp_count()];
    for q in w.qps().filter(wanted) {
        if drawn.len() < MAX_QP_LINES {
            line_of[q.index() as usize] = Some(drawn.len() as u32);
            drawn.push((q, Vec::new()));
        }
        total += 1;
    }
    // Before its first packet a QP's limiter stands at line rate, which no
    // one was sending at: its line starts at the last sample before it
    // sent (where it arrives at line rate), not at the run's start.
    let mut idle: Vec<Option<(f64, f64)>> = vec![None; drawn.len()];
    for s in w.qp_samples() {
        let Some(l) = line_of[s.qp as usize] else {
            continue;
        };
        let (l, p) = (
            l as usize,
            (s.t.as_secs_f64() / unit, s.rate_bps as f64 / 1e9),
        );
        let points = &mut drawn[l].1;
        if s.tx_payload == 0 && points.is_empty() {
            idle[l] = Some(p);
            continue;
        }
        points.extend(idle[l].take());
        points.push(p);
    }
    // Without a reaction point the limit is the line rate or the
    // workload's `rate_limit`: the title says which kind of plot it is.
    let acks = w.qps().filter(wanted).find_map(|q| q.ack_clocked());
    let what = if w.qps().filter(wanted).any(|q| q.reaction_point().is_some()) {
        "Rate allowed per QP (DCQCN)".to_string()
    } else if let Some((title, _)) = acks {
        format!("Rate allowed per QP ({title})")
    } else {
        "Rate allowed per QP (no DCQCN: line rate or rate_limit)".to_string()
    };
    let series = qp_lines(drawn);
    let title = if total > MAX_QP_LINES {
        format!("{what}, first {MAX_QP_LINES} of {total}")
    } else {
        what.to_string()
    };
    let x_label = format!("time ({unit_name})");
    // The time axis starts where the samples do, as the other plots'.
    let x_from = w.qp_samples().first().map(|s| s.t.as_secs_f64() / unit);
    let labels = (&*title, &*x_label, "allowed rate (Gb/s)");
    line_plot_from(dir, "rates", labels, &series, x_from)
}

/// One line per QP, at most [`MAX_QP_LINES`], the first 16 named in the
/// legend.
fn qp_lines(qps: Vec<(QpView<'_>, Vec<(f64, f64)>)>) -> Vec<Series> {
    qps.into_iter()
        .take(MAX_QP_LINES)
        .enumerate()
        .map(|(c, (q, pts))| {
            let name = if c < 16 {
                let side = if q.role() == Role::Server {
                    " (responder)"
                } else {
                    ""
                };
                format!("{} qp {:#x}{side}", q.host(), q.qpn())
            } else {
                String::new()
            };
            Series::new(name, pts, c)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The payload a line of `qps.png` shows, in bytes: each point is the
    /// rate over the interval since the sample before (the first's since
    /// `w`'s first sample), summed as rate x interval.
    fn bytes_drawn(w: &World, s: &Series, unit: f64) -> f64 {
        let mut x0 = w.qp_samples()[0].t.as_secs_f64() / unit;
        let mut bytes = 0.0;
        for &(x, gbps) in &s.points {
            bytes += gbps * 1e9 / 8.0 * (x - x0) * unit;
            x0 = x;
        }
        bytes
    }

    /// What QP `i` sent after the first sample (frames sent at 0 before it
    /// are in no interval), by its samples.
    fn sent_after_first_sample(w: &World, i: usize) -> u64 {
        let mine = || w.qp_samples().iter().filter(|s| s.qp as usize == i);
        mine().next_back().unwrap().tx_payload - mine().next().unwrap().tx_payload
    }

    /// `ib_read_bw`: the responders send the data, so `qps.png` draws them
    /// (named as responders), and not the requesters, which sent none;
    /// each line adds up to what its QP sent. `ib_write_bw` keeps the
    /// client QPs only.
    #[test]
    fn a_reads_payload_is_drawn_for_its_responders() {
        // A shipped scenario, changed by `sets`, run to its end.
        let run_scenario = |name: &str, sets: &[String]| {
            let scenario =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}.toml"));
            let (_, sim) = crate::run::lifecycle::check(&scenario, sets).unwrap();
            sim.run(&mut ()).world
        };
        let run = |tool: &str| {
            let sets = [
                format!("workload.0.tool={tool}"),
                "workload.0.qps=2".to_string(),
                "workload.0.iters=2".to_string(),
                "workload.0.size=1MiB".to_string(),
            ];
            run_scenario("lag_hash", &sets)
        };
        // The QPs of `role`, by index, and what their counters say they sent.
        let of = |w: &World, role: Role| -> Vec<(usize, u64)> {
            w.qps()
                .enumerate()
                .filter(|(_, q)| q.role() == role)
                .map(|(i, q)| (i, q.tx_payload_bytes()))
                .collect()
        };

        let w = run("ib_read_bw");
        let (_, unit) = time_unit(w.sim_time());
        let (title, lines) = qp_payload_lines(&w, unit);
        assert_eq!(title, "Payload sent per READ responder QP");
        let (servers, clients) = (of(&w, Role::Server), of(&w, Role::Client));
        // Two 1 MiB READs per QP: each responder sent 2 MiB, each requester
        // none.
        assert_eq!(
            servers.iter().map(|s| s.1).collect::<Vec<_>>(),
            [2 << 20; 2]
        );
        assert_eq!(clients.iter().map(|s| s.1).collect::<Vec<_>>(), [0; 2]);
        assert_eq!(lines.len(), 2);
        for (line, &(i, _)) in lines.iter().zip(&servers) {
            assert!(
                line.name.starts_with("hostB qp") && line.name.ends_with("(responder)"),
                "{}",
                line.name
            );
            let (drawn, sent) = (bytes_drawn(&w, line, unit), sent_after_first_sample(&w, i));
            assert!(
                (drawn - sent as f64).abs() < 1.0,
                "{}: {drawn} drawn, {sent} sent",
                line.name
            );
        }
        assert!(bytes_drawn(&w, &lines[0], unit) > 1e6);

        // Four flows on one bottleneck, the second a READ: its responder
        // first, then the three WRITE clients; its requester is left out.
        let w = run_scenario(
            "dcqcn_convergence",
            &["workload.1.tool=ib_read_bw".to_string()],
        );
        let (title, lines) = qp_payload_lines(&w, time_unit(w.sim_time()).1);
        assert_eq!(
            title,
            "Payload sent per QP (READ responders and client QPs)"
        );
        let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
        let (servers, clients) = (of(&w, Role::Server), of(&w, Role::Client));
        let sent = |v: &[(usize, u64)]| v.iter().filter(|q| q.1 > 0).count();
        assert_eq!((sent(&servers), sent(&clients)), (1, 3), "{names:?}");
        assert_eq!(lines.len(), 4, "{names:?}");
        assert!(names[0].ends_with("(responder)"), "{names:?}");
        assert!(
            names[1..].iter().all(|n| !n.contains("responder")),
            "{names:?}"
        );

        let w = run("ib_write_bw");
        let (_, unit) = time_unit(w.sim_time());
        let (title, lines) = qp_payload_lines(&w, unit);
        assert_eq!(title, "Payload sent per client QP");
        let clients = of(&w, Role::Client);
        assert_eq!(
            clients.iter().map(|s| s.1).collect::<Vec<_>>(),
            [2 << 20; 2]
        );
        assert_eq!(lines.len(), 2);
        for (line, &(i, _)) in lines.iter().zip(&clients) {
            assert!(line.name.starts_with("hostA qp") && !line.name.contains("responder"));
            let (drawn, sent) = (bytes_drawn(&w, line, unit), sent_after_first_sample(&w, i));
            assert!(
                (drawn - sent as f64).abs() < 1.0,
                "{}: {drawn} drawn, {sent} sent",
                line.name
            );
            assert!(sent > 2_000_000);
        }
    }

    /// `ports.png` of the bonded pair: with layer3+4 hostA's two slaves
    /// both carry the QPs; with layer2+3 every QP is on slave 0, and the
    /// idle slave 1 is drawn too, flat at 0, named as the bond table names
    /// it, where it used to be left out (it sent nothing) and the picture
    /// could not show the idle link.
    #[test]
    fn an_idle_bond_slave_is_drawn_at_zero() {
        let run = |policy: &str| {
            let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/lag_hash.toml");
            let sets = [
                format!("host.hostA.bond.bond0.xmit_hash_policy={policy}"),
                "workload.0.iters=1".to_string(),
            ];
            let (_, sim) = crate::run::lifecycle::check(&scenario, &sets).unwrap();
            sim.run(&mut ()).world
        };
        let peak = |s: &Series| s.points.iter().map(|p| p.1).fold(0.0, f64::max);
        for (policy, slave1_busy) in [("layer3+4", true), ("layer2+3", false)] {
            let w = run(policy);
            let (_, lines) = port_lines(&w, time_unit(w.sim_time()).1);
            let line = |name: &str| {
                lines
                    .iter()
                    .find(|l| l.name == name)
                    .unwrap_or_else(|| panic!("{policy}: no line {name}"))
            };
            assert!(peak(line("hostA.eth0 (bond0 slave 0)")) > 50.0, "{policy}");
            let idle = peak(line("hostA.eth1 (bond0 slave 1)"));
            assert_eq!(
                idle > 50.0,
                slave1_busy,
                "{policy}: slave 1 peaks at {idle} Gb/s"
            );
        }
    }
}
