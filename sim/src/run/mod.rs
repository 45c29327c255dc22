//! What a run leaves behind: the run directory, sweeps, and what `rocesim`
//! prints. The model knows no outputs; everything here reads a finished
//! [`World`] through its read-only views (`world::view`).
//!
//! ```text
//!  scenario ──check──▶ World ──run──▶ finished World ──finish (flush taps)──▶ &World
//!                                                                               ├─ summary.rs  summary.json (Summary), figures.rs QpFigures
//!                                                                               ├─ csv.rs      ports.csv, qps.csv
//!                                                                               ├─ prom.rs     counters.prom (devices.rs: hosts as Linux shows them)
//!                                                                               ├─ sysfs.rs    sysfs/<host>/class/{infiniband,net}/...
//!                                                                               ├─ plot.rs     ports.png/svg, qps.png/svg, rates.png/svg
//!                                                                               └─ table.rs    what `rocesim` prints
//!  sweep.rs: a grid of runs ─▶ sweep.csv, sweep.json, sweep.png/svg
//!  shard.rs: one slice of a grid per machine (shard.json) ─▶ merge ─▶ the same sweep.csv
//! ```
//!
//! A run writes into `.<out>.tmp-<pid>` beside the target and renames it
//! into place only when everything was written, so a failed or interrupted
//! run never leaves a half-written run directory behind.

pub mod counters;
mod csv;
pub mod devices;
pub mod fct;
mod figures;
mod grid;
mod intervals;
pub mod plot;
pub mod prom;
mod queues;
mod rate_plots;
mod shard;
mod shortlist;
pub mod summary;
mod sweep;
pub mod sysfs;
pub mod table;
#[cfg(test)]
mod tx_done_tests;

use std::path::{Path, PathBuf};
use std::time::Instant;

use thiserror::Error;

use crate::scenario::schema::{TapCfg, TapFormat};
use crate::scenario::{self, Diagnostic};
use crate::scenario::{BuildOptions, open_taps};
use crate::time::Ps;
use crate::world::{Progress, World};

pub use csv::{ports_csv, qps_csv};
pub use grid::{Axis, SweepRow, mean_min_max, parse_axis, parse_seeds, same_outcome};
pub use shard::{Merged, Shard, SweepId, merge as merge_sweep};
pub use summary::Summary;
pub use sweep::{check_sweep_out, sweep, write_sweep};

#[derive(Debug, Error)]
pub enum RunError {
    /// The scenario (or a `--set`) is wrong: exit status 2.
    #[error(transparent)]
    Scenario(#[from] Diagnostic),
    /// A flag is wrong: exit status 2.
    #[error("{0}")]
    Usage(String),
    /// Writing the outputs failed: exit status 1.
    #[error("{0}")]
    Output(String),
}

#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub sets: Vec<String>,
    /// `--tap PORT[:SNAPLEN]`: capture points besides the scenario's.
    pub taps: Vec<String>,
    /// The process exits once the run returns (the CLI): the simulated
    /// world is left to the operating system rather than freed piece by
    /// piece, which took a star's run 1-2 ms after its outputs were
    /// written. Its capture files are closed before the outputs are
    /// written, so nothing waits on its drop.
    pub exits_after: bool,
}

/// Adds the `--tap PORT[:SNAPLEN]` capture points to a loaded scenario:
/// tcpdump on one more port without editing the file.
fn add_taps(loaded: &mut scenario::Loaded, taps: &[String]) -> Result<(), RunError> {
    for t in taps {
        let (at, snaplen) = match t.rsplit_once(':') {
            Some((at, n)) => {
                let n = n.parse::<u32>().map_err(|_| {
                    RunError::Usage(format!(
                        "--tap {t}: snaplen `{n}` is not a number of bytes (PORT[:SNAPLEN], e.g. hostA.eth0:128)"
                    ))
                })?;
                (at, n)
            }
            None => (t.as_str(), 0),
        };
        loaded.scenario.taps.push(TapCfg {
            at: at.to_string(),
            format: TapFormat::Pcap,
            snaplen,
            file: None,
        });
    }
    Ok(())
}

/// Builds the world; an error in a tap that `--tap` added names the flag
/// (it has no place in the file).
fn build_checked(
    loaded: &scenario::Loaded,
    file_taps: usize,
    flag_taps: &[String],
) -> Result<World, RunError> {
    scenario::build_world(&loaded.scenario, &loaded.name, &BuildOptions::default())
        .map_err(|e| model_error(loaded, file_taps, flag_taps, e))
}

/// A scenario error as the user gave the key: in the file, or in a
/// `--tap` flag (the taps after the file's own).
fn model_error(
    loaded: &scenario::Loaded,
    file_taps: usize,
    flag_taps: &[String],
    e: scenario::ModelError,
) -> RunError {
    let key = e.path.to_string();
    let flag = key
        .strip_prefix("tap[")
        .and_then(|r| r.split(']').next())
        .and_then(|i| i.parse::<usize>().ok())
        .and_then(|i| i.checked_sub(file_taps))
        .and_then(|i| flag_taps.get(i));
    match flag {
        Some(t) => RunError::Usage(match &e.hint {
            Some(h) => format!("--tap {t}: {}\n  hint: {h}", e.msg),
            None => format!("--tap {t}: {}", e.msg),
        }),
        None => loaded.locate(&e).into(),
    }
}

/// Loads and builds a scenario without running it (`rocesim check`).
pub fn check(path: &Path, sets: &[String]) -> Result<(scenario::Loaded, World), RunError> {
    let loaded = scenario::load(path, sets)?;
    let w = scenario::build_world(&loaded.scenario, &loaded.name, &BuildOptions::default())
        .map_err(|e| loaded.locate(&e))?;
    Ok((loaded, w))
}

/// The default run directory: `runs/<scenario name>/`.
pub fn default_out(name: &str) -> PathBuf {
    Path::new("runs").join(name)
}

/// Runs a scenario and writes its run directory. Returns the summary and
/// the directory.
pub fn run(
    path: &Path,
    opts: &RunOptions,
    progress: &mut dyn Progress,
) -> Result<(Summary, PathBuf), RunError> {
    let mut sets = opts.sets.clone();
    if let Some(seed) = opts.seed {
        sets.push(format!("seed={seed}"));
    }
    let mut loaded = scenario::load(path, &sets)?;
    let file_taps = loaded.scenario.taps.len();
    add_taps(&mut loaded, &opts.taps)?;
    // Built (so checked) in full before the file system is touched; the
    // taps' files are created in the run directory after.
    let mut w = build_checked(&loaded, file_taps, &opts.taps)?;
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| default_out(&loaded.name));
    check_replaceable(&out, "summary.json", "rocesim run")?;
    let s = write_dir_atomically(&out, "run", |tmp| {
        open_taps(&mut w, &loaded.scenario, tmp)
            .map_err(|e| model_error(&loaded, file_taps, &opts.taps, e))?;
        // The hosts' sysfs trees as they boot go to disk while it runs.
        // A partitioned run has both cores: the tree is written after it,
        // where it does not hold up one part (and so both) while it runs.
        let sysfs = match (loaded.scenario.output.sysfs(), w.partitions()) {
            (false, _) => sysfs::When::Never,
            (true, 1) => sysfs::When::Early(sysfs::Early::start(&w, tmp)),
            (true, _) => sysfs::When::AtEnd,
        };
        let start = Instant::now();
        w.run(progress);
        let wall = start.elapsed().as_secs_f64();
        w.check_invariants()
            .map_err(|e| RunError::Output(format!("internal invariant violated: {e}")))?;
        w.finish().map_err(RunError::Output)?;
        write_outputs(&w, tmp, wall, sysfs).map_err(RunError::Output)
    })?;
    if opts.exits_after {
        std::mem::forget(w);
    }
    Ok((s, out))
}

/// Writes summary.json, the CSVs, counters.prom, the sysfs tree and the
/// plots of a finished world into `dir`, on two threads. `sysfs` says
/// whether the tree is written, and whether it was begun while the world
/// ran.
pub fn write_outputs(
    w: &World,
    dir: &Path,
    wall_s: f64,
    sysfs: sysfs::When,
) -> Result<Summary, String> {
    let s = Summary::of(w, wall_s);
    let write = |name: &str, text: String| {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    // The large files are streamed: a fabric's per-QP series and records
    // run to hundreds of MB, which as one string would double the peak.
    let stream = |name: &str, fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>| {
        let path = dir.join(name);
        let cannot = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut f = std::io::BufWriter::with_capacity(
            1 << 16,
            std::fs::File::create(&path).map_err(cannot)?,
        );
        fill(&mut f).map_err(cannot)?;
        std::io::Write::flush(&mut f).map_err(cannot)
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
        Box::new(|| rate_plots::rate_plot(w, dir)),
        Box::new(|| {
            if queues::wanted(w) {
                queues::queues_plot(w, dir)?;
                write("queues.csv", queues::queues_csv(w))?;
            }
            Ok(())
        }),
        Box::new(|| write("counters.prom", prom::counters_prom(w, &s.counters))),
        Box::new(|| stream("ports.csv", &|f| ports_csv(w, f))),
        Box::new(|| sysfs::write(w, &s.counters, dir, sysfs)),
        Box::new(|| stream("qps.csv", &|f| qps_csv(w, f))),
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
    Ok(s)
}

/// Refuses an output path that exists and is not a directory this tool
/// wrote (it has `marker`) or an empty one: a file, a device, someone's
/// data would be replaced.
fn check_replaceable(out: &Path, marker: &str, what: &str) -> Result<(), RunError> {
    let empty_dir = || std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
    if out.exists() && !out.join(marker).is_file() && !empty_dir() {
        return Err(RunError::Usage(format!(
            "--out {}: exists and is not a {what} directory (no {marker}); refusing to replace it",
            out.display()
        )));
    }
    Ok(())
}

/// Fills `.<leaf>.tmp-<pid>` beside `out` with `fill` and renames it onto
/// `out` (replacing an older one) only if `fill` succeeds; on failure the
/// temporary directory is removed, so no half-written output is ever
/// seen under `out`. `default_leaf` names the temporary directory when
/// `out` has no file name.
fn write_dir_atomically<T>(
    out: &Path,
    default_leaf: &str,
    fill: impl FnOnce(&Path) -> Result<T, RunError>,
) -> Result<T, RunError> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Which directory could not be written, and for which --out.
    let cannot = |what: &str, p: &Path, e: std::io::Error| {
        RunError::Output(format!(
            "--out {}: cannot {what} {}: {e}",
            out.display(),
            p.display()
        ))
    };
    std::fs::create_dir_all(parent).map_err(|e| cannot("create", parent, e))?;
    let leaf = out
        .file_name()
        .map_or_else(|| default_leaf.into(), |s| s.to_string_lossy().into_owned());
    remove_stale_temps(parent, &leaf);
    let tmp = parent.join(format!(".{leaf}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| cannot("write into", parent, e))?;
    let finish = |v: T| -> Result<T, RunError> {
        if out.exists() {
            std::fs::remove_dir_all(out)
                .map_err(|e| RunError::Output(format!("{}: {e}", out.display())))?;
        }
        std::fs::rename(&tmp, out).map_err(|e| {
            RunError::Output(format!("{} -> {}: {e}", tmp.display(), out.display()))
        })?;
        Ok(v)
    };
    match fill(&tmp).and_then(finish) {
        Ok(v) => Ok(v),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Removes `.<leaf>.tmp-<pid>` directories left by runs that were killed
/// (Ctrl-C): those whose process is gone, so they do not pile up.
fn remove_stale_temps(parent: &Path, leaf: &str) {
    let prefix = format!(".{leaf}.tmp-");
    // Without /proc we cannot tell a live run from a dead one.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(parent) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Simulated-time progress as a fraction, for a progress bar.
pub fn progress_fraction(now: Ps, end: Option<Ps>) -> Option<f64> {
    end.filter(|e| e.0 > 0)
        .map(|e| (now.0 as f64 / e.0 as f64).min(1.0))
}
