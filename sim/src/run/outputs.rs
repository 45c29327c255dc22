//! Every file of a run directory, written from the finished world: the
//! summary first (the others read its counters and FCT section), then the
//! files as tasks on two threads, the costliest first.

use std::path::Path;

use super::atomic_dir::stream_file;
use super::csv::{ports_csv, qps_csv};
use super::fct;
use super::prom;
use super::queues;
use super::rate_plots;
use super::series::Selection;
use super::summary::{QpRows, Summary};
use super::sysfs;
use crate::world::World;

/// Tests: every output of run `name`'s finished world, as a run without
/// assumptions or wall time writes it (the sysfs tree at the end, every
/// series).
#[cfg(test)]
pub(super) fn write_every_output(name: &str, w: &World, dir: &Path) {
    write_outputs(
        name,
        w,
        &[],
        dir,
        0.0,
        sysfs::When::AtEnd,
        &Selection::all(w),
    )
    .unwrap();
}

/// Writes summary.json, the CSVs, counters.prom, the sysfs tree and the
/// plots of run `name`'s finished world into `dir`, on two threads, and
/// returns the summary without its QP records ([`QpRows`] makes them);
/// `assumptions` are the scenario's unsourced defaults.
/// `sysfs` says whether the tree is written, and whether it was begun
/// while the world ran; `sel` which series and trees (all, or a large
/// fabric's summary, [`super::series`]).
pub fn write_outputs(
    name: &str,
    w: &World,
    assumptions: &[String],
    dir: &Path,
    wall_s: f64,
    sysfs: sysfs::When,
    sel: &Selection,
) -> Result<Summary<()>, String> {
    // The QP records are made as summary.json is written, one at a time.
    let mut s = Summary::head(name, w, wall_s).with_qps(QpRows(w));
    s.assumptions = assumptions.to_vec();
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    let stream = |name: &str, fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        stream_file(dir, name, fill)
    };
    // Each file is a task; two threads take them, the costliest first (a
    // plot is a PNG and an SVG drawn), so that neither waits on the other
    // at the end. Not rayon's pool: starting it and its even split of the
    // list cost the 2:1 star 5-6 ms more (16 ms to 22 from the loop's end).
    type Task<'a> = Box<dyn FnOnce() -> Result<(), String> + Send + 'a>;
    let tasks: Vec<Task<'_>> = vec![
        Box::new(|| rate_plots::port_plot(w, dir)),
        Box::new(|| rate_plots::qp_plot(w, dir)),
        Box::new(|| fct::write(w, dir, s.fct.as_ref())),
        Box::new(|| super::collectives::write(dir, &s.collectives)),
        Box::new(|| rate_plots::rate_plot(w, dir)),
        Box::new(|| {
            if queues::wanted(w) {
                queues::queues_plot(w, dir)?;
                write("queues.csv", queues::queues_csv(w))?;
            }
            Ok(())
        }),
        Box::new(|| {
            let counters = sel.counters(w, &s.counters);
            stream("counters.prom", &|f| {
                prom::write_counters_prom(w, &counters, f)
            })
        }),
        Box::new(|| {
            let keep = (!sel.all).then_some(&sel.ports[..]);
            stream("ports.csv", &|f| ports_csv(w, f, keep))
        }),
        Box::new(|| {
            if sel.all {
                return Ok(());
            }
            stream("tiers.csv", &|f| sel.tiers_csv(w, f))
        }),
        Box::new(|| sysfs::write(w, &s.counters, dir, sysfs, &|h| sel.host(h))),
        Box::new(|| {
            let keep = (!sel.all).then_some(&sel.hosts[..]);
            stream("qps.csv", &|f| qps_csv(w, f, keep))
        }),
        Box::new(|| {
            stream("summary.json", &|f| {
                serde_json::to_writer_pretty(&mut *f, &s)?;
                f.write_all(b"\n")
            })
        }),
    ];
    let n = tasks.len();
    let queue = std::sync::Mutex::new(tasks.into_iter().enumerate());
    let results = std::sync::Mutex::new(vec![Ok(()); n]);
    let work = || {
        loop {
            let next = queue.lock().unwrap_or_else(|e| e.into_inner()).next();
            let Some((i, task)) = next else { break };
            let r = task();
            results.lock().unwrap_or_else(|e| e.into_inner())[i] = r;
        }
    };
    std::thread::scope(|scope| {
        let helper = scope.spawn(work);
        work();
        helper
            .join()
            .map_err(|_| "outputs: a writing thread panicked".to_string())
    })?;
    drop(queue);
    // The first failure in the list's order, whichever thread met it.
    for r in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        r?;
    }
    Ok(s.with_qps(()))
}
