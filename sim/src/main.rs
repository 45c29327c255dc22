//! `rocesim`: run, check and sweep RoCEv2 network scenarios.
//!
//! Exit status: 0 success, 2 bad input (scenario, `--set`, flags),
//! 1 the run could not write its outputs.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rocesim::run::{self, QpRecords, QpRows, RunError, RunOptions, Summary, table};
use rocesim::time::Ps;
use rocesim::world::Progress;

#[derive(Parser)]
#[command(
    name = "rocesim",
    version,
    about = "Deterministic packet-level RoCEv2 network simulator",
    after_help = "\
Examples:
  rocesim run scenarios/lag_hash.toml
  rocesim run scenarios/lag_hash.toml --set host.hostA.bond.bond0.xmit_hash_policy=layer2+3
  rocesim run scenarios/lag_hash.toml --tap sw1.p3:128
  rocesim check scenarios/retry_exceeded.toml
  rocesim sweep scenarios/lag_hash.toml --seeds 1..33 --set workload.0.qps=1,2,4,8,16 \\
      --set host.hostA.qpn_alloc=random --set host.hostB.qpn_alloc=random

Exit status: 0 success, 2 bad input (a scenario or --set error names the file,
line, column and key; a flag error names the flag; a run whose estimated peak
memory exceeds the memory available, unless --force), 1 the outputs could not
be written."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Table,
    Json,
    Csv,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario and write its run directory (summary.json, CSV time
    /// series, plots, pcaps).
    Run {
        /// Scenario file (TOML), e.g. scenarios/lag_hash.toml.
        scenario: PathBuf,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Run directory (default runs/<scenario name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override a scenario key by dotted path, e.g.
        /// host.hostA.bond.bond0.xmit_hash_policy=layer2+3 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
        /// Also capture at PORT (`host.nic` or `switch.port`), as tcpdump on it
        /// would: writes <PORT>.pcap, SNAPLEN bytes per frame (default whole
        /// frames). Repeatable; adds to the scenario's [[tap]] tables.
        #[arg(long = "tap", value_name = "PORT[:SNAPLEN]")]
        taps: Vec<String>,
        /// What to print on stdout at the end: the summary tables (table), the
        /// run's summary.json (json), or one row per client QP (csv).
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
        /// No progress bar (there is none when stderr is not a terminal).
        #[arg(long, short)]
        quiet: bool,
        /// Run even when the estimated peak memory (`rocesim check` prints
        /// it) exceeds the memory available (MemAvailable of /proc/meminfo,
        /// or the environment's ROCESIM_MEM_AVAILABLE, bytes).
        #[arg(long)]
        force: bool,
    },
    /// Validate a scenario without running it.
    Check {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Override a scenario key by dotted path (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        sets: Vec<String>,
    },
    /// Run a grid of --set values over a range of seeds in parallel and
    /// write one table (CSV + JSON) and a plot; or merge sharded sweeps.
    Sweep(SweepArgs),
    /// Turn the reference's (ns-3 HPCC) config, topology and flow files into
    /// a scenario that runs its experiment.
    ImportHpcc {
        /// The reference's config file (e.g. mix/config.txt); the files it
        /// names are looked up relative to its directory, also by base name.
        config: PathBuf,
        /// Topology file instead of the config's TOPOLOGY_FILE.
        #[arg(long)]
        topology: Option<PathBuf>,
        /// Flow file instead of the config's FLOW_FILE.
        #[arg(long)]
        flows: Option<PathBuf>,
        /// The scenario file to write.
        #[arg(long)]
        out: PathBuf,
        /// Write a scenario even where the config sets something rocesim
        /// does not reproduce (LINK_DOWN, VAR_WIN, another CC_MODE, ...):
        /// it runs without them and names each in its comments.
        #[arg(long)]
        approximate: bool,
    },
}

#[derive(Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    after_help = "\
A sweep too large for one machine runs as N shards, each on its own machine
or job-array task, then merges:
  rocesim sweep S.toml --seeds 1..33 --set workload.0.qps=1,2,4,8 --shard 0/3 --out shards/0
  rocesim sweep S.toml --seeds 1..33 --set workload.0.qps=1,2,4,8 --shard 1/3 --out shards/1
  rocesim sweep S.toml --seeds 1..33 --set workload.0.qps=1,2,4,8 --shard 2/3 --out shards/2
  rocesim sweep merge shards/0 shards/1 shards/2 --out runs/S-sweep
In a Slurm job array or a Kubernetes Indexed Job, --shard auto/N reads K from
SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX (examples in scripts/cluster/)."
)]
struct SweepArgs {
    #[command(subcommand)]
    action: Option<SweepAction>,
    /// Scenario file (TOML).
    #[arg(required = true)]
    scenario: Option<PathBuf>,
    /// An axis: KEY=V1,V2,... (repeatable; the first is the plot's x axis).
    #[arg(long = "set", value_name = "KEY=V1,V2,...")]
    sets: Vec<String>,
    /// Seeds: A..B (B excluded), A..=B, or one seed N.
    #[arg(long, default_value = "1")]
    seeds: String,
    /// Run only the K-th of N disjoint slices of the grid (0 <= K < N), for
    /// `rocesim sweep merge`; `auto/N` takes K from SLURM_ARRAY_TASK_ID or
    /// JOB_COMPLETION_INDEX.
    #[arg(long, value_name = "K/N")]
    shard: Option<String>,
    /// Parallel runs (default: number of CPUs, over the scenario's
    /// `sim.partitions`).
    #[arg(long)]
    jobs: Option<usize>,
    /// Output directory (default runs/<scenario name>-sweep/, or
    /// runs/<scenario name>-sweep-shard-K-of-N/ for a shard).
    #[arg(long)]
    out: Option<PathBuf>,
    /// What to print on stdout: mean/min/max per grid point (table) or
    /// every run (json, csv).
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
}

#[derive(Subcommand)]
enum SweepAction {
    /// Join the output directories of `rocesim sweep --shard K/N` (every K
    /// once) into the sweep.csv, sweep.json and plot of the whole sweep.
    Merge {
        /// The shards' output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output directory of the merged sweep.
        #[arg(long)]
        out: PathBuf,
        /// What to print on stdout, as for a sweep.
        #[arg(long, value_enum, default_value = "table")]
        format: Format,
    },
}

/// Writes to stdout. A reader that went away (`rocesim run ... | head`)
/// ends the output quietly, since the run directory is already written;
/// println! would panic on the broken pipe.
fn stdout_write(args: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("rocesim: error: writing to stdout: {e}");
            std::process::exit(1);
        }
        std::process::exit(0);
    }
}

macro_rules! out {
    ($($t:tt)*) => { stdout_write(format_args!($($t)*)) };
}

macro_rules! outln {
    () => { stdout_write(format_args!("\n")) };
    ($($t:tt)*) => { stdout_write(format_args!("{}\n", format_args!($($t)*))) };
}

/// The progress bar: simulated time against `stop_at`, or, in a run with
/// flows, the share of flows finished (with an ETA from it); and the
/// events executed per wall second, which tells a large fabric's user
/// what the run costs while it runs.
struct Bar {
    bar: Option<ProgressBar>,
    flows: Option<(usize, usize)>,
    started: Instant,
    events: u64,
}

impl Bar {
    /// " 3.41 M events/s", from the events executed since the start.
    fn rate(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64();
        if self.events == 0 || secs <= 0.0 {
            return String::new();
        }
        format!(", {:.2} M events/s", self.events as f64 / secs / 1e6)
    }
}

impl Progress for Bar {
    fn update(&mut self, now: Ps, end: Option<Ps>) {
        let Some(b) = &self.bar else { return };
        let rate = self.rate();
        match (self.flows, run::progress_fraction(now, end)) {
            (Some((done, total)), _) => {
                b.set_length(total.max(1) as u64);
                b.set_position(done as u64);
                b.set_message(format!(
                    "simulated {now}, {done}/{total} flows ({:.1}%){rate}",
                    100.0 * done as f64 / total.max(1) as f64
                ));
            }
            (None, Some(f)) => {
                b.set_length(1000);
                b.set_position((f * 1000.0) as u64);
                b.set_message(format!("simulated {now}{rate}"));
            }
            (None, None) => {
                b.tick();
                b.set_message(format!("simulated {now}{rate}"));
            }
        }
    }
    fn flows(&mut self, done: usize, total: usize) {
        self.flows = Some((done, total));
    }
    fn events(&mut self, executed: u64) {
        self.events = executed;
    }
}

/// A progress bar on a terminal; none when stderr is not one or with
/// `--quiet` (it never changes what a run writes).
fn bar(quiet: bool) -> Bar {
    let mut out = Bar {
        bar: None,
        flows: None,
        started: Instant::now(),
        events: 0,
    };
    if quiet || !std::io::stderr().is_terminal() {
        return out;
    }
    let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} ETA {eta} {msg}")
            .unwrap(),
    );
    out.bar = Some(b);
    out
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rocesim: error: {e:#}");
            match e.downcast_ref::<RunError>() {
                Some(RunError::Output(_)) => ExitCode::from(1),
                _ => ExitCode::from(2),
            }
        }
    }
}

fn real_main(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Run {
            scenario,
            seed,
            out,
            sets,
            taps,
            format,
            quiet,
            force,
        } => {
            let mut bar = bar(quiet);
            let opts = RunOptions {
                seed,
                out,
                sets,
                taps,
                force,
            };
            let run::Finished { head, world, dir } = run::run(&scenario, &opts, &mut bar)?;
            if let Some(b) = bar.bar {
                b.finish_and_clear();
            }
            // The QP records are made from the world as they are printed.
            print_summary(&head.with_qps(QpRows(&world)), format);
            eprintln!("rocesim: wrote {}", dir.display());
            // The process exits next: the world is left to the operating
            // system (`run::Finished`).
            std::mem::forget(world);
        }
        Cmd::Check { scenario, sets } => {
            let (loaded, sim) = run::check(&scenario, &sets)?;
            let w = sim.world();
            let s = &loaded.scenario;
            out!(
                "{}",
                table::check_line(
                    &scenario.display().to_string(),
                    &loaded.name,
                    w,
                    sim.cut(),
                    s.hosts.len(),
                    s.switches.len(),
                    s.links.len()
                )
            );
            let (headroom, mut warnings) = table::headroom_report(w);
            out!("{headroom}");
            let (buffers, more) = table::buffer_report(w);
            out!("{buffers}");
            warnings.extend(more);
            warnings.extend(table::cc_warnings(w));
            out!("{}", table::ets_report(w));
            // What the run will cost, set off from the tables above.
            let estimate = run::Estimate::of(s);
            out!("\n{}", estimate.report());
            if let Some(hint) = run::estimate::huge_page_hint_here(&estimate) {
                outln!("{hint}");
            }
            // The names `[output]` asks for, as `rocesim run` checks them.
            run::series::Selection::of(s, w).map_err(RunError::Usage)?;
            if !sim.assumptions().is_empty() {
                // What the numbers of a run rest on besides the scenario.
                outln!("assumptions (defaults without a source; set the key to choose):");
                for a in sim.assumptions() {
                    outln!("  - {a}");
                }
            }
            for warning in warnings {
                eprintln!("rocesim: warning: {warning}");
            }
        }
        Cmd::Sweep(args) => sweep(args)?,
        Cmd::ImportHpcc {
            config,
            topology,
            flows,
            out,
            approximate,
        } => {
            let imported = rocesim::hpcc::import::import(
                &config,
                topology.as_deref(),
                flows.as_deref(),
                &out,
                approximate,
            )?;
            for u in &imported.approximated {
                eprintln!(
                    "rocesim: warning: {}; the scenario: {}",
                    u.describe(&config.display().to_string()),
                    u.instead
                );
            }
            for n in &imported.notes {
                eprintln!("rocesim: warning: {n}");
            }
            let text = imported.text;
            // Whole or nothing: a temporary file renamed into place.
            let tmp = out.with_extension(format!("tmp-{}", std::process::id()));
            std::fs::write(&tmp, text)
                .and_then(|()| std::fs::rename(&tmp, &out))
                .map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    RunError::Output(format!("--out {}: {e}", out.display()))
                })?;
            eprintln!("rocesim: wrote {}", out.display());
        }
    }
    Ok(())
}

fn sweep(args: SweepArgs) -> anyhow::Result<()> {
    if let Some(SweepAction::Merge { dirs, out, format }) = args.action {
        let merged = run::merge_sweep(&dirs)?;
        let axes = merged.sweep.axes();
        run::write_sweep(&out, &axes, &merged.rows, None)?;
        print_sweep(&out, &axes, &merged.rows, merged.sweep.seeds.len(), format)?;
        eprintln!(
            "rocesim: merged {} shards, {} runs, wrote {}",
            dirs.len(),
            merged.rows.len(),
            out.display()
        );
        return Ok(());
    }
    let scenario = args
        .scenario
        .expect("clap requires it without a subcommand");
    let mut axes = Vec::new();
    let mut fixed = Vec::new();
    for s in &args.sets {
        let a = run::parse_axis(s)?;
        if a.values.len() == 1 {
            fixed.push(format!("{}={}", a.key, a.values[0]));
        }
        axes.push(a);
    }
    let axes: Vec<_> = axes.into_iter().filter(|a| a.values.len() > 1).collect();
    let seeds = run::parse_seeds(&args.seeds)?;
    let shard = args.shard.as_deref().map(run::Shard::parse).transpose()?;
    let (loaded, sim) = run::check(&scenario, &fixed)?;
    // A partitioned run keeps a core per part busy (its threads wait for
    // each other spinning): by default, as many runs as that leaves room for.
    let jobs = args.jobs.unwrap_or_else(|| {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cpus / sim.partitions() as usize).max(1)
    });
    drop(sim);
    if jobs == 0 {
        return Err(RunError::Usage("--jobs must be at least 1".into()).into());
    }
    let points = axes.iter().map(|a| a.values.len() as u64).product::<u64>() * seeds.len() as u64;
    let total = match shard {
        Some(s) => (0..points).filter(|&i| s.takes(i as usize)).count() as u64,
        None => points,
    };
    let b = bar(false);
    let done = AtomicU64::new(0);
    if let Some(pb) = &b.bar {
        pb.set_length(total);
    }
    let tick = || {
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(pb) = &b.bar {
            pb.set_position(n);
            pb.set_message(format!("{n}/{total} runs"));
        }
    };
    let out = args.out.unwrap_or_else(|| {
        let leaf = match shard {
            Some(s) => format!("{}-sweep-shard-{}-of-{}", loaded.name, s.index, s.count),
            None => format!("{}-sweep", loaded.name),
        };
        PathBuf::from("runs").join(leaf)
    });
    run::check_sweep_out(&out)?;
    let id = run::SweepId::new(&loaded.name, &scenario, &fixed, &axes, &seeds)?;
    let start = std::time::Instant::now();
    let rows = run::sweep(&scenario, &fixed, &axes, &seeds, shard, jobs, &tick)?;
    if let Some(pb) = &b.bar {
        pb.finish_and_clear();
    }
    run::write_sweep(&out, &axes, &rows, shard.map(|s| (&id, s)))?;
    match shard {
        // A shard holds scattered grid points: its table would average
        // partial seed sets, so it lists its runs (the merge prints the table).
        Some(_) if matches!(args.format, Format::Table) => {
            out!("{}", std::fs::read_to_string(out.join("sweep.csv"))?)
        }
        _ => print_sweep(&out, &axes, &rows, seeds.len(), args.format)?,
    }
    eprintln!(
        "rocesim: {} runs in {:.1} s{}, wrote {}",
        rows.len(),
        start.elapsed().as_secs_f64(),
        shard.map_or(String::new(), |s| format!(
            " (shard {s} of {points} grid points; join the shards with `rocesim sweep merge`)"
        )),
        out.display()
    );
    Ok(())
}

/// What a whole sweep prints: the table, JSON or CSV, and a note when no
/// seed changed anything.
fn print_sweep(
    out: &std::path::Path,
    axes: &[run::Axis],
    rows: &[run::SweepRow],
    seeds: usize,
    format: Format,
) -> anyhow::Result<()> {
    match format {
        Format::Json => outln!("{}", std::fs::read_to_string(out.join("sweep.json"))?),
        Format::Csv => out!("{}", std::fs::read_to_string(out.join("sweep.csv"))?),
        Format::Table => out!("{}", table::sweep_table(axes, rows, seeds)),
    }
    if seeds > 1 && rows.chunks(seeds).all(run::same_outcome) {
        eprintln!(
            "rocesim: note: every seed gave the same result at every grid point: nothing in \
             this scenario draws on the seed; random QPNs (--set host.NAME.qpn_alloc=random) \
             or link loss (--set link.N.loss=1e-5) make seeds differ"
        );
    }
    Ok(())
}

fn print_summary(s: &Summary<impl QpRecords>, format: Format) {
    let text = match format {
        Format::Json => table::summary_json(s),
        Format::Csv => table::summary_csv(s),
        Format::Table => table::summary_table(s),
    };
    out!("{text}");
}
