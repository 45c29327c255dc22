//! The `dissect` subcommand: its flags and help, and the run that writes
//! every frame of one capture to stdout.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use roce_capture::read::{CaptureReader, Next};

use super::{DissectError, Dissector, Format};
use crate::Outcome;
use crate::flags::DecodeFlags;

/// Arguments of `roce-pcap dissect`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = KEYS_HELP)]
pub struct Args {
    /// A pcap, pcapng or gzip-compressed capture (Ethernet, Linux SLL or SLL2);
    /// `-` reads it from standard input (`tcpdump -w - | roce-pcap dissect -`).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub decode: DecodeFlags,
}

const KEYS_HELP: &str = "\
JSON keys (--format jsonl; a key is left out when it does not apply):
  frame ts_ns len caplen kind error warning
  vlan_id vlan_pcp l3 src dst dscp ecn sport dport
  int_orig_dport int_echo int_exceeded int_remaining int_multi int_rate_bps
  int_time_ns int_tx_bytes int_qlen_bytes   (in-band telemetry, UDP port 4792)
  opcode opcode_name se migreq padcnt tver pkey fecn becn dqpn ackreq psn
  reth_va reth_rkey reth_dmalen aeth_syndrome aeth_msn immdt ieth_rkey
  deth_qkey deth_srcqp atomic_va atomic_rkey atomic_swap_add atomic_compare
  atomicack_orig rdeth_eecnxt xrceth_xrcsrq grh_paylen grh_nxthdr grh_hoplmt
  payload_len icrc icrc_valid macc_opcode enable_vector pause_times pause_time
kind is one of rocev2 rocev1 pfc pause8023x other malformed truncated.

Exit status: 0 ok, 2 bad input or flag, 3 the file ends in the middle of a
record (everything before it is printed, the offset is on stderr).";

/// Why `dissect` failed.
/// Runs `roce-pcap dissect`, writing to stdout.
pub fn run(args: &Args) -> Result<Outcome, DissectError> {
    let opts = args.decode.parse_options()?;
    let mut reader = CaptureReader::open(&args.file)?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut d = Dissector::new(opts, args.format);
    if let Some(n) = args.decode.threads() {
        d = d.with_threads(n);
    }
    let end = d.dissect_all(&mut reader, &mut out)?;
    out.flush()?;
    Ok(match end {
        Next::Cut { offset } => {
            let file = roce_capture::read::input_name(&args.file);
            let n = d.frames();
            if reader.gzip_truncated() {
                eprintln!(
                    "roce-pcap: warning: {file}: the gzip stream ends early, in the record at byte \
                     {offset} of the decompressed stream; the {n} frames before it were dissected"
                );
            } else {
                eprintln!(
                    "roce-pcap: warning: {file}: the file ends in the middle of the record at byte \
                     {offset}{}; the {n} frames before it were dissected",
                    if reader.is_gzip() {
                        " of the decompressed stream"
                    } else {
                        ""
                    },
                );
            }
            Outcome::Warned
        }
        _ => Outcome::Clean,
    })
}
