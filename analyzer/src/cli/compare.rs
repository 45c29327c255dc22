//! The `compare` subcommand: flags, the two analyses, the outputs.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use crate::Outcome;
use crate::compare::{Comparison, write_table};
use crate::flags::{AnalysisFailed, Analyzed, HowFlags, after_help};
use crate::inputs::Inputs;
use crate::output::write_atomically;
use crate::plot::PlotError;

/// `roce-pcap compare --help`, after the flags and before the exit status.
const COMPARE_HELP: &str = "\
A and B are each a capture, - (standard input), a directory of captures
(e.g. the slave captures of one host, in name order) or a rocesim run
directory (its taps' captures). Both are analyzed with the same options;
flows are matched by QPN pair, else by address pair and order, and the
table says how each was matched.

JSON keys (--format json):
  a, b      input kind scenario files link_speed_gbps duration_ns
            roce_packets flows goodput_gbps warnings
  flows[]   match (qpn | qpns | order | a-only | b-only), a, b, diff
            a/b: flow key{src dst responder_qpn} requester_qpn udp_sport
                 first_ns last_ns payload_bytes packets wire_bytes
                 request_packets goodput_gbps messages retransmitted_packets
                 go_back_n timeouts naks cnps ecn_ce_packets
                 message_latency_ns{p50 p99 max} port slave ecn_ce_share
            diff (B - A): goodput_gbps goodput_pct messages payload_bytes
                 latency_p50_ns latency_p99_ns retransmitted_packets
                 go_back_n timeouts naks cnps ecn_ce_share same_slave
  slaves[]  slave, a/b{file roce_packets roce_bytes share flows[]},
            diff_roce_bytes diff_share
  pfc[]     priority (null: 802.3x), a/b{xoff_frames xon_frames pause_ns},
            diff_pause_ns
  notes[]   what makes the comparison partial (each is a warning, exit 3)

--out DIR writes compare_goodput, compare_slaves, compare_tsg,
compare_pfc and compare_ecn_cnp (.png and .svg), A always blue, B always
orange, each side's time from its own first frame: on one time axis, or,
when one side lasts more than 4 times the other, each on its own (the
plots say which).

Examples (from the repository root):
  rocesim run scenarios/lag_hash.toml --out /tmp/a
  rocesim run scenarios/lag_hash.toml --set host.hostA.bond.bond0.xmit_hash_policy=layer2+3 --out /tmp/b
  roce-pcap compare /tmp/a /tmp/b
  roce-pcap compare /tmp/a /tmp/b --format json --out /tmp/cmp --html /tmp/cmp/report.html";

/// Arguments of `roce-pcap compare`.
#[derive(Debug, clap::Args)]
#[command(after_help = compare_after_help())]
pub struct Args {
    /// The first side: a capture, -, a directory of captures or a rocesim run directory.
    pub a: PathBuf,
    /// The second side, as A.
    pub b: PathBuf,
    #[command(flatten)]
    pub how: HowFlags,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Write the table or JSON here instead of stdout.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Directory for the comparison plots (PNG and SVG; created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Write a self-contained HTML report (tables and inline SVG plots) here.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// The flow whose PSN time-sequence is plotted: its # in the flow table
    /// [default: the matched flow with the most packets].
    #[arg(long, value_name = "N")]
    pub flow: Option<usize>,
}

fn compare_after_help() -> String {
    after_help(COMPARE_HELP, "report", "compared")
        + "\nA comparison with notes (no flow in common, a side without RoCE, different\n\
           link speeds) is written in full and exits 3 too."
}

/// `--format` of `compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{side}: {source}")]
    Side {
        side: &'static str,
        #[source]
        source: AnalysisFailed,
    },
    #[error(transparent)]
    Plot(#[from] PlotError),
    #[error("--flow: {0}")]
    Flow(String),
    #[error("writing {what}")]
    Output {
        what: String,
        #[source]
        source: io::Error,
    },
}

/// Analyzes one side.
fn side(
    side: &'static str,
    path: &PathBuf,
    how: &HowFlags,
    series: bool,
) -> Result<Analyzed, CliError> {
    let wrap = |source| CliError::Side { side, source };
    let inputs = Inputs::resolve(std::slice::from_ref(path)).map_err(|e| wrap(e.into()))?;
    how.analyze(inputs, series).map_err(wrap)
}

pub fn run(args: &Args) -> Result<Outcome, CliError> {
    let series = args.out.is_some() || args.html.is_some();
    let a = side("A", &args.a, &args.how, series)?;
    let b = side("B", &args.b, &args.how, series)?;
    let c = Comparison::new(&a, &b);
    if let Some(n) = args.flow {
        if n >= c.flows.len() {
            return Err(CliError::Flow(format!(
                "{n} is not a flow of the table (0..{})",
                c.flows.len()
            )));
        }
    }
    let write = |w: &mut dyn Write| match args.format {
        Format::Table => write_table(&c, w),
        Format::Json => {
            serde_json::to_writer_pretty(&mut *w, &c).map_err(io::Error::other)?;
            writeln!(w)
        }
    };
    let output_err = |what: String| move |source| CliError::Output { what, source };
    if let Some(dir) = &args.out {
        crate::plot::compare::plot(&a, &b, &c, args.flow, dir)?;
    }
    if let Some(path) = &args.html {
        let page = crate::html::compare_page(&a, &b, &c, args.flow)?;
        write_atomically(path, |w| w.write_all(page.as_bytes()))
            .map_err(output_err(path.display().to_string()))?;
    }
    match &args.output {
        Some(path) => {
            write_atomically(path, write).map_err(output_err(path.display().to_string()))?
        }
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::new(stdout.lock());
            write(&mut w)
                .and_then(|_| w.flush())
                .map_err(output_err("stdout".into()))?;
        }
    }
    let mut warned = false;
    for (name, s) in [("A", &c.a), ("B", &c.b)] {
        for w in &s.warnings {
            eprintln!("roce-pcap: warning: {name}: {w}");
            warned = true;
        }
    }
    for n in &c.notes {
        eprintln!("roce-pcap: warning: {n}");
        warned = true;
    }
    Ok(if warned {
        Outcome::Warned
    } else {
        Outcome::Clean
    })
}
