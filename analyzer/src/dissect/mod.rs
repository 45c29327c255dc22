//! `roce-pcap dissect`: every frame of a capture, decoded by the codec, one
//! line per frame.
//!
//! ```text
//!  CaptureReader ──FrameBatch──▶ reader / helper threads: RawFrame::decode (roce-codec, lax, ICRC checked)
//!  (reader thread)                    │                  ├─ --format jsonl ─▶ one JSON object per frame
//!                                     │                  └─ --format text  ─▶ one summary line per frame
//!                                     └── the lines of each batch, in frame order ──▶ stdout
//! ```
//! Batches of frames are decoded and formatted on `--threads` threads (the
//! reader and helpers, [`roce_capture::pipeline`]) and written in frame order, so
//! the output is the same, byte for byte, for any number of threads.
//!
//! The JSON keys are a public interface (scripts read them), so they are
//! fixed here and documented in `roce-pcap dissect --help`:
//!
//! | keys | when present |
//! |---|---|
//! | `frame` (1-based), `ts_ns`, `len` (wire), `caplen`, `kind` | always |
//! | `error` | `kind` is `malformed` or `truncated`: why decoding stopped |
//! | `warning` | the codec found something odd (reserved opcode, ICRC mismatch, ...) |
//! | `vlan_id`, `vlan_pcp` | the frame has an 802.1Q tag (the outer one) |
//! | `l3`, `src`, `dst`, `dscp`, `ecn` | IPv4/IPv6; RoCE v1 gives `src`/`dst` as GIDs and `dscp`/`ecn` from the GRH traffic class, without `l3` |
//! | `sport`, `dport` | UDP or TCP |
//! | `tcp_seq`, `tcp_ack`, `tcp_flags` (the 12 bits under the data offset), `tcp_window`, `tcp_len` (payload bytes) | TCP |
//! | `perftest_lid`, `perftest_out_reads`, `perftest_qpn`, `perftest_psn`, `perftest_rkey`, `perftest_vaddr`, `perftest_gid` | a TCP payload that is one of perftest's key messages (port 18515 exchange) |
//! | `icmp_type`, `icmp_code`; `icmp_quoted_src`, `icmp_quoted_dst`, `icmp_quoted_proto`, `icmp_quoted_len`, `icmp_quoted_sport`, `icmp_quoted_dport` | ICMPv4; an error's quoted IPv4 header (ports if it quotes UDP or TCP) |
//! | `mad_class`, `mad_method`, `mad_attr`, `mad_tid` | a MAD: UD SEND ONLY to QP1 with 256 bytes of payload |
//! | `cm_msg` (`REQ`, `MRA`, `REJ`, `REP`, `RTU`, `DREQ`, `DREP`), `cm_local_comm_id`, `cm_remote_comm_id` | a CM MAD (class 0x07) |
//! | `cm_service_id`, `cm_local_qpn`, `cm_starting_psn`, `cm_remote_resp_timeout`, `cm_local_resp_timeout`, `cm_retry_count`, `cm_rnr_retry_count`, `cm_max_cm_retries`, `cm_path_mtu`, `cm_local_gid`, `cm_remote_gid`; `cma_src`, `cma_dst`, `cma_sport` | a REQ; the RDMA CM header in its private data |
//! | `cm_local_qpn`, `cm_starting_psn` | a REP |
//! | `cm_rej_reason`, `cm_rej_reason_name` | a REJ |
//! | `cm_service_timeout` | an MRA |
//! | `cm_remote_qpn` | a DREQ |
//! | `int_orig_dport`, `int_echo`, `int_exceeded`, `int_remaining`, `int_multi`; `int_rate_bps`, `int_time_ns`, `int_tx_bytes`, `int_qlen_bytes` | in-band telemetry (UDP port 4792): the shim's port and the flags; one array element per switch's record, in path order (time modulo 2^24 ns, bytes sent modulo 2^20 units of 128 x multi) |
//! | `opcode` ... `psn` | a BTH was decoded |
//! | `reth_*`, `aeth_*`, `immdt`, `ieth_rkey`, `deth_*`, `atomic_*`, `atomicack_orig`, `rdeth_eecnxt`, `xrceth_xrcsrq` | the opcode carries that header |
//! | `grh_paylen`, `grh_nxthdr`, `grh_hoplmt` | RoCE v1 |
//! | `payload_len` | the IB packet length is known: bytes after the transport headers, without pad and ICRC |
//! | `icrc`, `icrc_valid` | the ICRC was captured: its 4 wire bytes as hex, and whether it matches |
//! | `macc_opcode`; `enable_vector`, `pause_times`; `pause_time` | MAC control; PFC; 802.3x PAUSE |
//!
//! Numbers are JSON numbers and flags JSON booleans. Output is streamed
//! through one reused line buffer: nothing is allocated per frame.
//!
//! | file | holds |
//! |---|---|
//! | `mod.rs` | [`Dissector`], the driver: batches decoded on the pipeline's threads, lines written in frame order |
//! | `cli.rs` | the subcommand: [`Args`], [`run`] |
//! | `text.rs` | [`text_line`]: `--format text` |
//! | `json.rs` | [`json_line`]: `--format jsonl` |
//! | `setup.rs` | the layers of connection set-up in both formats: TCP (perftest's keys), ICMP, MAD and CM |
//! | `writer.rs` | what all three write with: the JSON object of a line, an address before a port |

mod cli;
mod json;
mod setup;
mod text;
mod writer;

use std::io::{self, Write};

use roce_capture::pipeline::{self, Item};
use roce_capture::read::{CaptureError, CaptureReader, FrameBatch, Next, RawFrame};
use roce_codec::{FrameKind, ParseOptions};

pub use self::cli::{Args, run};
pub use self::json::json_line;
pub use self::text::text_line;
use crate::flags::FlagError;

/// Output format of `dissect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object per line, with the keys listed at the end of --help.
    Jsonl,
    /// One compact line per frame, for people.
    Text,
}

/// Why `dissect` failed.
#[derive(Debug, thiserror::Error)]
pub enum DissectError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error("writing the output: {0}")]
    Output(#[from] io::Error),
}

/// Turns raw frames into output lines, keeping the frame count and the
/// first timestamp (the text format prints times relative to it).
pub struct Dissector {
    opts: ParseOptions,
    format: Format,
    threads: usize,
    frames: u64,
    first_ts: Option<u64>,
    line: Vec<u8>,
    text: String,
}

/// Batches read ahead of the output, per thread and in all: bounds the
/// memory held in mapped windows, buffers and formatted lines whatever
/// `--threads` says.
const DEPTH_PER_THREAD: usize = 2;
const DEPTH_MAX: usize = 8;

impl Dissector {
    pub fn new(opts: ParseOptions, format: Format) -> Dissector {
        Dissector {
            opts,
            format,
            threads: pipeline::default_threads(),
            frames: 0,
            first_ts: None,
            line: Vec::with_capacity(1024),
            text: String::with_capacity(256),
        }
    }

    /// Decodes on `n` threads (at least one) in [`Dissector::dissect_all`].
    pub fn with_threads(mut self, n: usize) -> Dissector {
        self.threads = n.max(1);
        self
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Dissects every frame of `reader` into `out`, decoding on the
    /// dissector's threads. Returns how the file ended: [`Next::End`] or
    /// [`Next::Cut`]. The output is what [`Dissector::write_frame`] on
    /// every frame in turn would write.
    pub fn dissect_all<W: Write>(
        &mut self,
        reader: &mut CaptureReader,
        out: &mut W,
    ) -> Result<Next<'static>, DissectError> {
        let (opts, format) = (self.opts, self.format);
        // Our frame numbers continue from frames already written; the
        // reader's count from frames already read.
        let renumber = self.frames.wrapping_sub(reader.frames());
        let first_ts = self.first_ts;
        let threads = self.threads;
        let work = move |b: &FrameBatch| {
            let first = first_ts.unwrap_or(b.capture_first_ts());
            let mut lines = Vec::with_capacity(b.len() * 256);
            let mut text = String::with_capacity(256);
            for (i, raw) in b.iter().enumerate() {
                let n = (b.first_number() + i as u64).wrapping_add(renumber);
                format_frame(&mut lines, &mut text, opts, format, n, first, &raw);
            }
            (lines, b.len() as u64, b.capture_first_ts())
        };
        pipeline::with_decoders(threads, |d| {
            let mut batches = d.read(reader, (threads * DEPTH_PER_THREAD).min(DEPTH_MAX), work);
            loop {
                match batches.recv()? {
                    Item::Batch((lines, n, first)) => {
                        self.first_ts.get_or_insert(first);
                        self.frames += n;
                        out.write_all(&lines)?;
                    }
                    Item::End => return Ok(Next::End),
                    Item::Cut { offset } => return Ok(Next::Cut { offset }),
                }
            }
        })
    }

    /// Decodes one frame and writes its line.
    pub fn write_frame<W: Write>(&mut self, raw: &RawFrame<'_>, out: &mut W) -> io::Result<()> {
        self.frames += 1;
        let first = *self.first_ts.get_or_insert(raw.ts_ns);
        self.line.clear();
        format_frame(
            &mut self.line,
            &mut self.text,
            self.opts,
            self.format,
            self.frames,
            first,
            raw,
        );
        out.write_all(&self.line)
    }
}

/// Decodes one frame and appends its line, newline included, to `out`.
fn format_frame(
    out: &mut Vec<u8>,
    text: &mut String,
    opts: ParseOptions,
    format: Format,
    frame_no: u64,
    first_ts: u64,
    raw: &RawFrame<'_>,
) {
    let decoded = raw.decode(&opts);
    match format {
        Format::Jsonl => json_line(out, frame_no, raw, &decoded),
        Format::Text => {
            text.clear();
            text_line(text, frame_no, first_ts, raw, &decoded);
            out.extend_from_slice(text.as_bytes());
        }
    }
    out.push(b'\n');
}

/// The kind of a frame too short for its link-layer header: cut by the
/// snaplen, or short on the wire too.
fn headless_kind(raw: &RawFrame<'_>) -> FrameKind {
    if raw.data.len() < raw.wire_len {
        FrameKind::Truncated
    } else {
        FrameKind::Malformed
    }
}
