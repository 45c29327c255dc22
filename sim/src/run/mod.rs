//! What a run leaves behind: the run directory, sweeps, and what `rocesim`
//! prints. The model knows no outputs; everything here reads a finished
//! [`World`](crate::world::World) through its read-only views
//! (`world::view`).
//!
//! ```text
//!  scenario ──check──▶ World ──run──▶ finished World ──finish (flush taps)──▶ &World
//!                                                                               ├─ summary.rs    summary.json (Summary), figures.rs QpFigures
//!                                                                               ├─ csv.rs        ports.csv, qps.csv
//!                                                                               ├─ prom.rs       counters.prom (devices.rs: hosts as Linux shows them)
//!                                                                               ├─ sysfs.rs      sysfs/<host>/class/{infiniband,net}/...
//!                                                                               ├─ rate_plots.rs ports.png/svg, qps.png/svg, rates.png/svg
//!                                                                               ├─ queues.rs     queues.csv, queues.png/svg (runs with flow control)
//!                                                                               ├─ fct.rs        fct.txt, fct.csv, fct.png/svg (runs with flows)
//!                                                                               ├─ collectives.rs collectives.csv, busbw.png/svg, nccl-tests' table ([[collective]])
//!                                                                               └─ table.rs      what `rocesim` prints
//!  sweep.rs: a grid of runs (grid.rs) ─▶ sweep.csv, sweep.json, sweep.png/svg
//!  shard.rs: one slice of a grid per machine (shard.json) ─▶ merge ─▶ the same sweep.csv
//! ```
//!
//! Which file uses which: each only the files on the rows below its own,
//! and this one (the map and the re-exports) none of them.
//!
//! ```text
//!   sweep.rs        runs a grid: each point checked and run as lifecycle.rs does
//!   lifecycle.rs    rocesim check / run: load, (refuse,) build, run, write into a directory
//!   outputs.rs      every file of a run directory, on two threads
//!   estimate.rs     a run's peak memory and events, before it   series.rs  all series, or a large fabric's summary
//!   table.rs        what rocesim prints       figures.rs  the summary as QpFigures
//!   summary.rs      summary.json              shard.rs    slices of a grid, and their merge
//!   csv.rs  prom.rs  sysfs.rs  collectives.rs  rate_plots.rs  queues.rs  fct.rs  grid.rs  atomic_dir.rs
//!   counters.rs  devices.rs  intervals.rs  shortlist.rs  plot.rs  error.rs
//! ```
//!
//! * [`estimate`]: a run's estimated peak memory and events (`rocesim
//!   check` prints it, `rocesim run` refuses a run that would not fit);
//!   [`series`]: which series, trees and counters a run writes (`[output]
//!   series`: all, or a large fabric's summary).
//! * `lifecycle.rs`: [`check`] and [`run`] ([`RunOptions`]); `outputs.rs`:
//!   [`write_outputs`], the list of a run directory's files;
//!   `atomic_dir.rs`: a run (or sweep) directory appears whole or not at
//!   all; `error.rs`: [`RunError`], by exit status.
//! * [`summary`]: `summary.json` ([`Summary`]), with [`counters`] (every
//!   port's counters under their hardware names) and [`fct`] (flow
//!   completion: its section, `fct.txt`, `fct.csv`, plot and printed
//!   table); `figures.rs`: [`Summary::qp_figures`].
//! * `csv.rs`: [`ports_csv`], [`qps_csv`]; [`prom`]: `counters.prom`;
//!   [`sysfs`]: the hosts' sysfs trees; [`devices`]: which counters belong
//!   to which device of a host, for both.
//! * [`plot`]: the one drawing routine (PNG and SVG, the bundled font);
//!   `rate_plots.rs`: ports, qps and rates plots; `queues.rs`: queue depth
//!   and pauses over time.
//! * [`table`]: what `rocesim` prints; `shortlist.rs`: a long list cut to
//!   what a table or a legend can show; `intervals.rs`: rates from the
//!   sampled series.
//! * `grid.rs`: a sweep's axes, seeds and rows ([`Axis`], [`SweepRow`]);
//!   `sweep.rs`: [`sweep()`], [`write_sweep`]; `shard.rs`: [`Shard`],
//!   [`SweepId`], [`merge_sweep`].

mod atomic_dir;
pub mod collectives;
pub mod counters;
mod csv;
pub mod devices;
mod error;
pub mod estimate;
pub mod fct;
mod figures;
mod grid;
mod intervals;
mod lifecycle;
mod outputs;
pub mod plot;
pub mod prom;
mod queues;
mod rate_plots;
#[cfg(test)]
mod retire_tests;
pub mod series;
mod shard;
mod shortlist;
pub mod summary;
#[cfg(test)]
mod summary_tests;
mod sweep;
pub mod sysfs;
pub mod table;
#[cfg(test)]
mod tx_done_tests;

pub use csv::{ports_csv, qps_csv};
pub use error::RunError;
pub use estimate::Estimate;
pub use grid::{Axis, SweepRow, mean_min_max, parse_axis, parse_seeds, same_outcome};
pub use lifecycle::{Finished, RunOptions, check, default_out, progress_fraction, run};
pub use outputs::write_outputs;
pub use shard::{Merged, Shard, SweepId, merge as merge_sweep};
pub use summary::{QpRecords, QpRows, Summary};
pub use sweep::{check_sweep_out, sweep, write_sweep};
