//! The `analyze` subcommand: flags, output to stdout or a file renamed
//! into place, warnings on stderr.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use crate::Outcome;
use crate::export::Format;
use crate::flags::{AnalysisFailed, AnalysisFlags, FlagError, after_help, parse_duration};
use crate::output::write_atomically;

/// `roce-pcap analyze --help`, after the flags and before the exit status.
const ANALYZE_EXAMPLES: &str = "\
Examples (from the repository root; the first after `rocesim run scenarios/lag_hash.toml`):
  roce-pcap analyze runs/lag_hash/hostA.eth0.pcap runs/lag_hash/hostA.eth1.pcap
  roce-pcap analyze traces/analyze_slave0.pcapng traces/analyze_slave1.pcap.gz --format json --qp 0x12
  roce-pcap analyze runs/lag_hash --html runs/lag_hash/report.html
  tcpdump -i eth0 -U -w - | roce-pcap analyze - --interval 1s";

/// Arguments of `roce-pcap analyze`.
#[derive(Debug, clap::Args)]
#[command(after_help = after_help(ANALYZE_EXAMPLES, "report", "analyzed"))]
pub struct Args {
    #[command(flatten)]
    pub analysis: AnalysisFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the report here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Print a short per-QP summary of every interval of capture time (e.g. 1s,
    /// 100ms) while the captures stream in, then the full report at the end;
    /// with --format json or csv the report needs -o FILE.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub interval: Option<u64>,
    /// Also write a self-contained HTML report (tables, inline SVG plots; for
    /// a rocesim run directory also its summary.json tables) here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Errors of the command: the analysis (or a flag), or writing the output.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Analysis(#[from] AnalysisFailed),
    #[error(transparent)]
    Plot(#[from] crate::plot::PlotError),
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error("writing {what}")]
    Output {
        what: String,
        #[source]
        source: io::Error,
    },
}

pub fn run(args: &Args) -> Result<Outcome, CliError> {
    if args.interval.is_some() && args.format != Format::Table && args.output.is_none() {
        return Err(FlagError {
            flag: "--interval",
            message: "the summaries go to stdout, where a json or csv report would be mixed with them: give -o FILE".into(),
        }
        .into());
    }
    let mut print = |r: &crate::analyze::IntervalReport| {
        let mut out = io::stdout().lock();
        // A closed pipe shows when the report is written.
        let _ = out
            .write_all(r.text().as_bytes())
            .and_then(|()| out.flush());
    };
    let every = args.interval.map(|ns| {
        (
            ns,
            &mut print as &mut dyn FnMut(&crate::analyze::IntervalReport),
        )
    });
    let keep = crate::flags::Keep {
        series: args.html.is_some(),
        ..Default::default()
    };
    let analyzed = args.analysis.analyze_as(keep, every)?;
    if args.interval.is_some() && args.output.is_none() {
        // A closed pipe shows when the report is written.
        let _ = writeln!(io::stdout());
    }
    if let Some(path) = &args.html {
        let page = crate::html::analyze_page(&analyzed)?;
        write_atomically(path, |w| w.write_all(page.as_bytes())).map_err(|source| {
            CliError::Output {
                what: path.display().to_string(),
                source,
            }
        })?;
    }
    let analysis = analyzed.analysis;
    let exporter = args.format.exporter();
    match &args.output {
        Some(path) => {
            write_atomically(path, |w| exporter.write(&analysis.report, w)).map_err(|source| {
                CliError::Output {
                    what: path.display().to_string(),
                    source,
                }
            })?
        }
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            exporter
                .write(&analysis.report, &mut w)
                .and_then(|_| w.flush())
                .map_err(|source| CliError::Output {
                    what: "stdout".into(),
                    source,
                })?;
        }
    }
    for w in &analysis.warnings {
        eprintln!("roce-pcap: warning: {w}");
    }
    Ok(analysis.outcome())
}
