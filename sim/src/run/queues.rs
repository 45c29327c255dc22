//! Queue depth and pause state over time, for runs with flow control
//! (PFC/PAUSE or ECN configured anywhere): `queues.csv` and
//! `queues.png/svg`. Runs without it write neither, so their outputs stay
//! as they were.
//!
//! ```text
//!   queues.csv   t_ns,port,prio,queued_bytes,paused
//!                one row per sample per (port, priority) that ever queued or was paused
//!   queues.png   queued kilobytes per (switch port, priority), the deepest first
//! ```

use std::fmt::Write as _;
use std::path::Path;

use super::plot::{Series, line_plot, time_unit};
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
            let (q, paused) = (s.queued_prio[prio], s.paused & 1 << prio != 0);
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
/// deepest `MAX_LINES` of them.
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
    let title = "Egress queue depth per (switch port, priority)";
    line_plot(
        dir,
        "queues",
        title,
        &format!("time ({unit_name})"),
        "kB queued",
        &series,
    )
}
