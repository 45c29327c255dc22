//! The `plot` subcommand.

use std::path::PathBuf;

use super::{PlotError, plot};
use crate::Outcome;
use crate::analyze::{AnalyzeError, AnalyzeOptions, analyze_files};

/// `roce-pcap plot --help`, after the flags.
const PLOT_AFTER_HELP: &str = "\
Writes goodput_qps, goodput_files, tsg_qp<N> (N: the flow's number in the
analyze table; also tsg_qp<N>_zoom when its traffic is a short burst in a
long capture), pfc and ecn_cnp, each as .png and .svg, replacing those of an
earlier plot in the same directory.

Example (from the repository root):
  roce-pcap plot traces/analyze_slave0.pcapng traces/analyze_slave1.pcap.gz --out plots

Exit status: 0 ok, 2 bad input or flag (or the plots could not be written),
3 a file ends in the middle of a record (plotted up to there; the file and
byte offset are on stderr).";

/// Arguments of `roce-pcap plot`.
#[derive(Debug, clap::Args)]
#[command(after_help = PLOT_AFTER_HELP)]
pub struct Args {
    /// Captures (pcap, pcapng, optionally gzip-compressed), typically one per
    /// bond slave, in the bond's enslave order.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Directory for the PNG and SVG files (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Only flows whose responder or requester QPN is this (hex 0x45 or decimal).
    #[arg(long, value_name = "QPN", value_parser = crate::analyze::cli::parse_qpn)]
    pub qp: Option<u32>,
    /// Link speed in Gb/s, to turn pause quanta into time.
    #[arg(long, value_name = "GBPS", default_value_t = 100.0)]
    pub link_speed: f64,
    /// Another UDP destination port to decode as RoCEv2 (besides 4791); repeatable.
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_port: Vec<u16>,
    /// Time-sequence graphs for at most this many flows (those with the most packets).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_qps: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Analyze(#[from] AnalyzeError),
    #[error(transparent)]
    Plot(#[from] PlotError),
}

pub fn run(args: &Args) -> Result<Outcome, CliError> {
    let opts = AnalyzeOptions {
        link_speed_gbps: args.link_speed,
        roce_ports: args.roce_port.clone(),
        qp: args.qp,
        series: true,
        progress: true,
        ..AnalyzeOptions::default()
    };
    let a = analyze_files(&args.files, &opts)?;
    let written = plot(&a, &args.out, args.max_qps)?;
    for w in &written {
        println!("{}", args.out.join(w).display());
    }
    for w in &a.warnings {
        eprintln!("roce-pcap: warning: {w}");
    }
    Ok(a.outcome())
}
