//! `roce-pcap`: dissect and analyze RoCE captures.
//!
//! Exit status: 0 success, 2 bad input (unreadable or not a capture, bad
//! flag), 3 finished with a warning the user must see (a file cut in the
//! middle of a record was analyzed up to the cut).

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use roce_pcap::Outcome;

#[derive(Parser)]
#[command(
    name = "roce-pcap",
    version,
    about = "Dissects and analyzes RoCE (RDMA over Converged Ethernet) captures"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Decode every frame: one JSON object (jsonl) or one line (text) per frame.
    Dissect(roce_pcap::dissect::Args),
    /// Per-QP sequence analysis, PFC and bond-slave balance of one or more captures.
    Analyze(roce_pcap::cli::analyze::Args),
    /// PNG and SVG plots: goodput per QP and per file, PSN time-sequence graphs, PFC, ECN/CNP.
    Plot(roce_pcap::plot::cli::Args),
    /// Two analyses side by side (captures, directories, rocesim run directories): per-QP figures, slaves, PFC.
    Compare(roce_pcap::cli::compare::Args),
    /// A rocesim scenario from captures: hosts, bond slaves and hash policy, QPs, verbs, sizes, times.
    Infer(roce_pcap::infer::cli::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result: anyhow::Result<Outcome> = match &cli.cmd {
        Cmd::Dissect(a) => roce_pcap::dissect::run(a).map_err(Into::into),
        Cmd::Analyze(a) => roce_pcap::cli::analyze::run(a).map_err(Into::into),
        Cmd::Plot(a) => roce_pcap::plot::cli::run(a).map_err(Into::into),
        Cmd::Compare(a) => roce_pcap::cli::compare::run(a).map_err(Into::into),
        Cmd::Infer(a) => roce_pcap::infer::cli::run(a).map_err(Into::into),
    };
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Warned) => ExitCode::from(3),
        Err(e) => {
            // A closed pipe (`roce-pcap dissect x | head`) is not an error.
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            eprintln!("roce-pcap: error: {}", message(&e));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes joined by ": ", leaving out a cause whose
/// text the message already holds: several library errors name their
/// source in their own text (`file: cannot open: No such file`), which
/// anyhow's `{:#}` would print a second time.
fn message(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if msg.is_empty() {
            msg = text;
        } else if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
    }
    msg
}
