//! One run, from scenario file to run directory: `rocesim check` loads
//! and builds a scenario; `rocesim run` also adds the `--tap` flags' taps,
//! runs the world, checks its invariants, closes its taps and writes its
//! outputs into a directory that appears whole ([`super::atomic_dir`]).
//!
//! ```text
//!  file + --set ──load──▶ Loaded ──+ --tap──▶ build (checked) ──▶ World ──run──▶ finished World
//!    ──finish (flush taps)──▶ outputs.rs writes the run directory ──▶ Finished (summary, world, directory)
//! ```

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::atomic_dir::{check_replaceable, write_dir_atomically};
use super::error::RunError;
use super::estimate;
use super::outputs::write_outputs;
use super::series::Selection;
use super::summary::{QpRows, Summary};
use super::sysfs;
use crate::parallel::Simulation;
use crate::scenario::schema::{TapCfg, TapFormat};
use crate::scenario::{self, BuildOptions};
use crate::time::Ps;
use crate::world::{Progress, World};

/// What `rocesim run`'s flags change in a run of a scenario file.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: Option<u64>,
    pub out: Option<PathBuf>,
    pub sets: Vec<String>,
    /// `--tap PORT[:SNAPLEN]`: capture points besides the scenario's.
    pub taps: Vec<String>,
    /// `--force`: run even when the estimated peak memory exceeds what
    /// the machine has available ([`super::estimate`]).
    pub force: bool,
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
) -> Result<Simulation, RunError> {
    Simulation::build(&loaded.scenario, &loaded.name, &BuildOptions::default())
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
pub fn check(path: &Path, sets: &[String]) -> Result<(scenario::Loaded, Simulation), RunError> {
    let loaded = scenario::load(path, sets)?;
    let sim = Simulation::build(&loaded.scenario, &loaded.name, &BuildOptions::default())
        .map_err(|e| loaded.locate(&e))?;
    Ok((loaded, sim))
}

/// The default run directory: `runs/<scenario name>/`.
pub fn default_out(name: &str) -> PathBuf {
    Path::new("runs").join(name)
}

/// A run that has written its directory.
pub struct Finished {
    /// Its summary, the QP records aside: [`QpRows`] makes them from the
    /// world as they are read ([`Finished::summary`] collects them).
    pub head: Summary<()>,
    /// The finished world. A process that exits next (the CLI) may leave
    /// it to the operating system (`std::mem::forget`) rather than free it
    /// piece by piece, which took a star's run 1-2 ms after its outputs;
    /// its capture files are already closed.
    pub world: World,
    pub dir: PathBuf,
}

impl Finished {
    /// The summary with its QP records, as summary.json has them.
    pub fn summary(&self) -> Summary {
        self.head.clone().with_qps(QpRows(&self.world).collect())
    }
}

/// Runs a scenario and writes its run directory.
pub fn run(
    path: &Path,
    opts: &RunOptions,
    progress: &mut dyn Progress,
) -> Result<Finished, RunError> {
    let mut sets = opts.sets.clone();
    if let Some(seed) = opts.seed {
        sets.push(format!("seed={seed}"));
    }
    let mut loaded = scenario::load(path, &sets)?;
    let file_taps = loaded.scenario.taps.len();
    add_taps(&mut loaded, &opts.taps)?;
    // Before the world is built (a fabric of thousands of hosts takes
    // gigabytes to build): a run that cannot fit is refused here.
    if !opts.force {
        let available = estimate::mem_available().map_err(RunError::Usage)?;
        estimate::refuse_if_too_large(&estimate::Estimate::of(&loaded.scenario), available)
            .map_err(RunError::Usage)?;
    }
    // Built (so checked) in full before the file system is touched; the
    // taps' files are created in the run directory after.
    let mut sim = build_checked(&loaded, file_taps, &opts.taps)?;
    loaded.scenario.release_flows();
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| default_out(&loaded.name));
    check_replaceable(&out, "summary.json", "rocesim run")?;
    // A large fabric's summary of series and trees, or all of them.
    let mut sel = Selection::of(&loaded.scenario, sim.world()).map_err(RunError::Usage)?;
    let s = write_dir_atomically(&out, "run", |tmp| {
        sim.open_taps(&loaded.scenario, tmp)
            .map_err(|e| model_error(&loaded, file_taps, &opts.taps, e))?;
        // The hosts' sysfs trees as they boot go to disk while it runs.
        // A partitioned run has both cores: the tree is written after it,
        // where it does not hold up one part (and so both) while it runs.
        let trees = sel.all || sel.hosts.contains(&true);
        let sysfs = match (loaded.scenario.output.sysfs() && trees, sim.partitions()) {
            (false, _) => sysfs::When::Never,
            (true, _) if !sel.all => sysfs::When::AtEnd,
            (true, 1) => sysfs::When::Early(sysfs::Early::start(sim.world(), tmp)),
            (true, _) => sysfs::When::AtEnd,
        };
        let start = Instant::now();
        let mut done = sim.run(progress);
        let wall = start.elapsed().as_secs_f64();
        done.check_invariants()
            .map_err(|e| RunError::Output(format!("internal invariant violated: {e}")))?;
        done.world.finish().map_err(RunError::Output)?;
        sel.add_busiest(&done.world);
        let s = write_outputs(
            &done.name,
            &done.world,
            &done.assumptions,
            tmp,
            wall,
            sysfs,
            &sel,
        )
        .map_err(RunError::Output)?;
        Ok((s, done.world))
    })?;
    let (head, world) = s;
    Ok(Finished {
        head,
        world,
        dir: out,
    })
}

/// Simulated-time progress as a fraction, for a progress bar.
pub fn progress_fraction(now: Ps, end: Option<Ps>) -> Option<f64> {
    end.filter(|e| e.0 > 0)
        .map(|e| (now.0 as f64 / e.0 as f64).min(1.0))
}
