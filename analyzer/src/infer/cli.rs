//! The `infer` subcommand.

use std::io::{self, Write};
use std::path::PathBuf;

use crate::Outcome;
use crate::flags::{AnalysisFailed, AnalysisFlags, Keep, after_help};
use crate::output::write_atomically;

use super::{InferError, plan, write_toml};

/// `roce-pcap infer --help`, after the flags and before the exit status.
const INFER_HELP: &str = "\
Writes a rocesim scenario that replays the captures: the hosts with their
MACs and IPs, the captured host's bond slaves (one per capture, in order)
and the hash policy their traffic followed, the QPs with their QPNs and UDP
source ports, verbs, message sizes and times, the traffic class. What a
capture cannot show (the switch between the hosts, link delays, the bond
mode) is assumed, and the file says so beside each value; its header lists
what the scenario cannot express as the captures show it.

Examples (from the repository root):
  rocesim run scenarios/lag_hash.toml --out /tmp/lab
  roce-pcap infer /tmp/lab --out /tmp/lab.toml
  rocesim run /tmp/lab.toml --out /tmp/model && roce-pcap compare /tmp/lab /tmp/model
  roce-pcap infer eth0.pcap eth1.pcap --link-speed 25 --out lab.toml";

/// Arguments of `roce-pcap infer`.
#[derive(Debug, clap::Args)]
#[command(after_help = after_help(INFER_HELP, "scenario", "inferred"))]
pub struct Args {
    #[command(flatten)]
    pub analysis: AnalysisFlags,
    /// Write the scenario here instead of stdout.
    #[arg(long, value_name = "SCENARIO.toml")]
    pub out: Option<PathBuf>,
    /// The scenario's name (its run directory's): default the output file's
    /// name, else "inferred".
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Analysis(#[from] AnalysisFailed),
    #[error(transparent)]
    Infer(#[from] InferError),
    #[error("writing {what}")]
    Output {
        what: String,
        #[source]
        source: io::Error,
    },
}

pub fn run(args: &Args) -> Result<Outcome, CliError> {
    let keep = Keep {
        message_log: true,
        ..Keep::default()
    };
    let a = args.analysis.analyze_as(keep, None)?;
    let name = args.name.clone().unwrap_or_else(|| {
        args.out
            .as_ref()
            .and_then(|p| p.file_stem())
            .map_or("inferred".into(), |s| s.to_string_lossy().into_owned())
    });
    let link = (
        a.analysis.report.options.link_speed_gbps,
        args.analysis.how.link_speed.is_some()
            || a.inputs.link_speed_gbps().ok().flatten().is_some(),
    );
    let p = plan(&a.analysis.report, &name, link)?;
    let text = write_toml(&p);
    match &args.out {
        Some(path) => {
            write_atomically(path, |w| w.write_all(text.as_bytes())).map_err(|source| {
                CliError::Output {
                    what: path.display().to_string(),
                    source,
                }
            })?
        }
        None => io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(|source| CliError::Output {
                what: "stdout".into(),
                source,
            })?,
    }
    for w in &a.analysis.warnings {
        eprintln!("roce-pcap: warning: {w}");
    }
    Ok(a.analysis.outcome())
}
