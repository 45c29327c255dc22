//! The `plot` subcommand.

use std::path::PathBuf;

use super::{PlotError, plot};
use crate::Outcome;
use crate::analyze::{AnalyzeError, AnalyzeOptions, analyze_files};

/// Arguments of `roce-pcap plot`.
#[derive(Debug, clap::Args)]
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
