//! The `plot` subcommand.

use std::path::PathBuf;

use super::{PlotError, plot};
use crate::Outcome;
use crate::flags::{AnalysisFailed, AnalysisFlags, after_help};

/// `roce-pcap plot --help`, after the flags and before the exit status.
const PLOT_FILES_AND_EXAMPLE: &str = "\
Writes goodput_qps, goodput_files, tsg_qp<N> (N: the flow's number in the
analyze table; also tsg_qp<N>_zoom when its traffic is a short burst in a
long capture), pfc and ecn_cnp, each as .png and .svg, replacing those of an
earlier plot in the same directory.

Example (from the repository root):
  roce-pcap plot traces/analyze_slave0.pcapng traces/analyze_slave1.pcap.gz --out plots";

/// Arguments of `roce-pcap plot`.
#[derive(Debug, clap::Args)]
#[command(after_help = after_help(PLOT_FILES_AND_EXAMPLE, "plots", "plotted"))]
pub struct Args {
    #[command(flatten)]
    pub analysis: AnalysisFlags,
    /// Directory for the PNG and SVG files (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Time-sequence graphs for at most this many flows (those with the most packets).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_qps: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Analysis(#[from] AnalysisFailed),
    #[error(transparent)]
    Plot(#[from] PlotError),
}

pub fn run(args: &Args) -> Result<Outcome, CliError> {
    let a = args.analysis.analyze(true)?.analysis;
    let written = plot(&a, &args.out, args.max_qps)?;
    for w in &written {
        println!("{}", args.out.join(w).display());
    }
    for w in &a.warnings {
        eprintln!("roce-pcap: warning: {w}");
    }
    Ok(a.outcome())
}
