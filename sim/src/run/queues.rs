//! Queue depth and pause state over time, for runs with flow control
//! (PFC/PAUSE or ECN configured anywhere): `queues.csv` and
//! `queues.png/svg`. Runs without it write neither, so their outputs stay
//! as they were.
//!
//! ```text
//!   queues.csv   t_ns,port,prio,queued_bytes,paused
//!                one row per sample per (port, priority) that ever queued or was paused
//!   queues.png   queued kilobytes per (switch port, priority), the deepest first; below,
//!                when ports send pauses, one lane per port its link peer paused
//! ```

use std::fmt::Write as _;
use std::path::Path;

use roce_capture::human;

use super::plot::{Lanes, Series, line_plot, line_plot_with_lanes, time_unit};
use crate::world::{PRIOS, World};

/// Lines drawn at most (the CSV has every queue).
const MAX_LINES: usize = 16;

/// Whether the run has flow control: a port that sends pauses or marks.
pub fn wanted(w: &World) -> bool {
    w.ports()
        .any(|p| p.pause_configured() || p.marking_priorities() != 0)
}

/// Per (port, priority): the deepest queue it had, and whether it was ever
/// paused; `None` for those that never did either.
fn active(w: &World) -> Vec<Option<(u64, bool)>> {
    let n = w.ports().len();
    let mut act = vec![None; n * PRIOS];
    for s in w.port_samples() {
        for prio in 0..PRIOS {
            let (q, paused) = (u64::from(s.queued_prio[prio]), s.paused & 1 << prio != 0);
            if q > 0 || paused {
                let a: &mut Option<(u64, bool)> = &mut act[s.port as usize * PRIOS + prio];
                let (peak, was) = a.unwrap_or((0, false));
                *a = Some((peak.max(q), was || paused));
            }
        }
    }
    act
}

/// `t_ns,port,prio,queued_bytes,paused`.
pub fn queues_csv(w: &World) -> String {
    let act = active(w);
    let mut out = String::from("t_ns,port,prio,queued_bytes,paused\n");
    for s in w.port_samples() {
        for prio in 0..PRIOS {
            if act[s.port as usize * PRIOS + prio].is_some() {
                let _ = writeln!(
                    out,
                    "{},{},{prio},{},{}",
                    s.t.as_ns(),
                    w.port(s.port).name(),
                    s.queued_prio[prio],
                    u8::from(s.paused & 1 << prio != 0)
                );
            }
        }
    }
    out
}

/// Queued kilobytes over time per (switch port, priority) that queued, the
/// deepest `MAX_LINES` of them; when the run has PFC or PAUSE, the ports
/// their peers paused below, on the same time axis.
pub fn queues_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let act = active(w);
    let mut lines: Vec<(u64, usize)> = act
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.filter(|&(peak, _)| peak > 0).map(|(peak, _)| (peak, i)))
        .filter(|&(_, i)| !w.port((i / PRIOS) as u32).is_host_port())
        .collect();
    lines.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    lines.truncate(MAX_LINES);
    lines.sort_by_key(|&(_, i)| i);
    let series: Vec<Series> = lines
        .iter()
        .enumerate()
        .map(|(c, &(_, i))| {
            let (port, prio) = ((i / PRIOS) as u32, i % PRIOS);
            let pts = w
                .port_samples()
                .iter()
                .filter(|s| s.port == port)
                .map(|s| (s.t.as_secs_f64() / unit, s.queued_prio[prio] as f64 / 1e3))
                .collect();
            Series::new(format!("{} prio {prio}", w.port(port).name()), pts, c)
        })
        .collect();
    let labels = (
        "Egress queue depth per (switch port, priority)",
        &*format!("time ({unit_name})"),
        "queued (kB)",
    );
    if w.ports().any(|p| p.pause_configured()) {
        line_plot_with_lanes(dir, "queues", labels, &series, &pause_lanes(w, unit))
    } else {
        line_plot(dir, "queues", labels.0, labels.1, labels.2, &series)
    }
}

/// One lane per port whose link peer paused it at a sample, with a bar
/// from each sample that found it paused to the next sample: the ports in
/// the order their first pause was seen, so that a pause spreading
/// upstream reads top down, hop by hop.
fn pause_lanes(w: &World, unit: f64) -> Lanes {
    let samples = w.port_samples();
    let n = w.ports().len();
    // Per port: priorities ever paused, the first time seen paused, and
    // the intervals (in ps) from a paused sample to the port's next one.
    let mut prios = vec![0u8; n];
    let mut first = vec![None; n];
    let mut spans: Vec<Vec<(u64, u64)>> = vec![Vec::new(); n];
    let mut open: Vec<Option<u64>> = vec![None; n];
    for s in samples {
        let p = s.port as usize;
        let t = s.t.as_ps();
        if let Some(from) = open[p].take() {
            match spans[p].last_mut() {
                Some(last) if last.1 == from => last.1 = t,
                _ => spans[p].push((from, t)),
            }
        }
        if s.paused != 0 {
            prios[p] |= s.paused;
            first[p].get_or_insert(t);
            open[p] = Some(t);
        }
    }
    let interval = sample_interval(w);
    // A port paused at its last sample stays so to the end of the run.
    let end = w.sim_time().as_ps();
    for (p, from) in open.iter().enumerate() {
        if let Some(from) = *from {
            spans[p].push((from, end.max(from + interval)));
        }
    }
    let mut order: Vec<usize> = (0..n).filter(|&p| first[p].is_some()).collect();
    order.sort_by_key(|&p| (first[p], p));
    let x = |ps: u64| ps as f64 / 1e12 / unit;
    let rows = order
        .into_iter()
        .map(|p| {
            let which = if prios[p] == u8::MAX {
                "all prios".to_string()
            } else {
                let list: Vec<String> = (0..PRIOS)
                    .filter(|&i| prios[p] & 1 << i != 0)
                    .map(|i| i.to_string())
                    .collect();
                format!("prio {}", list.join(","))
            };
            let bars = spans[p].iter().map(|&(a, b)| (x(a), x(b))).collect();
            (format!("{} {which}", w.port(p as u32).name()), bars)
        })
        .collect();
    Lanes {
        title: format!(
            "Paused by the link peer (PFC/PAUSE) at each {} sample; first paused on top",
            human::duration_brief(interval / 1000)
        ),
        rows,
        empty: "No port was paused in this run.".to_string(),
    }
}

/// The time between two samples of one port, in ps (1 when there are
/// fewer than two).
fn sample_interval(w: &World) -> u64 {
    let mut times = w
        .port_samples()
        .iter()
        .filter(|s| s.port == 0)
        .map(|s| s.t.as_ps());
    match (times.next(), times.next()) {
        (Some(a), Some(b)) if b > a => b - a,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shipped scenario, changed by `sets`, run to its end.
    fn run(name: &str, sets: &[&str]) -> World {
        let scenario =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}.toml"));
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        let (_, sim) = crate::run::lifecycle::check(&scenario, &sets).unwrap();
        sim.run(&mut ()).world
    }

    /// What a port's pause counters say it was paused, in µs.
    fn paused_us(w: &World, name: &str) -> u64 {
        let i = w.ports().position(|p| p.name() == name).unwrap();
        let mut us = 0;
        w.port(i as u32).pause_counters(w.sim_time(), |k, v| {
            if k == "rx_prio3_pause_duration" {
                us = v;
            }
        });
        us
    }

    /// The 8:1 incast: a lane for each port a pause stopped (the eight
    /// senders and sw2's uplink), nothing else; each lane's bars add up to
    /// the time its pause counter counts, within what sampling every 20 µs
    /// allows; sw2 pauses h5..h8 no earlier than sw1 pauses its uplink
    /// (congestion spreads upstream), and the lanes are in that order.
    #[test]
    fn the_lanes_are_the_paused_ports_in_order_of_their_first_pause() {
        let w = run("pfc_incast", &[]);
        let (_, unit) = time_unit(w.sim_time());
        let lanes = pause_lanes(&w, unit);
        let mut names: Vec<&str> = lanes.rows.iter().map(|r| r.0.as_str()).collect();
        let first = |n: &str| {
            let row = lanes.rows.iter().find(|r| r.0 == n).unwrap();
            row.1[0].0
        };
        let uplink = first("sw2.up prio 3");
        for h in 5..=8 {
            assert!(first(&format!("h{h}.eth0 prio 3")) >= uplink, "{names:?}");
        }
        let starts: Vec<f64> = lanes.rows.iter().map(|r| r.1[0].0).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
        names.sort_unstable();
        let mut want: Vec<String> = (1..=8).map(|h| format!("h{h}.eth0 prio 3")).collect();
        want.push("sw2.up prio 3".to_string());
        assert_eq!(names, want);
        for (name, bars) in &lanes.rows {
            let port = name.split(' ').next().unwrap();
            let drawn_us: f64 = bars.iter().map(|b| (b.1 - b.0) * unit * 1e6).sum();
            let counted = paused_us(&w, port) as f64;
            assert!(counted > 1000.0, "{port}: {counted} µs");
            assert!(
                (drawn_us - counted).abs() < 0.1 * counted,
                "{port}: lanes show {drawn_us:.0} µs paused, the counter {counted} µs"
            );
        }
        assert!(lanes.title.contains("20.0 µs sample"), "{}", lanes.title);
    }

    /// DCQCN keeps the queue below the PFC threshold: the run has PFC
    /// configured, and its lane panel says that no port was paused.
    #[test]
    fn a_run_without_pauses_says_so() {
        let w = run("dcqcn_convergence", &["sim.stop_at=2ms"]);
        assert!(w.ports().any(|p| p.pause_configured()));
        let lanes = pause_lanes(&w, time_unit(w.sim_time()).1);
        assert!(lanes.rows.is_empty());
        let dir = std::env::temp_dir().join(format!("rocesim-queues-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        queues_plot(&w, &dir).unwrap();
        let svg = std::fs::read_to_string(dir.join("queues.svg")).unwrap();
        assert!(svg.contains("No port was paused in this run."));
        assert!(svg.contains("sw1.pr prio 3"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
