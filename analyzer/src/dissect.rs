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
//! | `sport`, `dport` | UDP |
//! | `opcode` ... `psn` | a BTH was decoded |
//! | `reth_*`, `aeth_*`, `immdt`, `ieth_rkey`, `deth_*`, `atomic_*`, `atomicack_orig`, `rdeth_eecnxt`, `xrceth_xrcsrq` | the opcode carries that header |
//! | `grh_paylen`, `grh_nxthdr`, `grh_hoplmt` | RoCE v1 |
//! | `payload_len` | the IB packet length is known: bytes after the transport headers, without pad and ICRC |
//! | `icrc`, `icrc_valid` | the ICRC was captured: its 4 wire bytes as hex, and whether it matches |
//! | `macc_opcode`; `enable_vector`, `pause_times`; `pause_time` | MAC control; PFC; 802.3x PAUSE |
//!
//! Numbers are JSON numbers and flags JSON booleans. Output is streamed
//! through one reused line buffer: nothing is allocated per frame.

use std::fmt::Write as _;
use std::io::{self, BufWriter, Write};
use std::net::IpAddr;
use std::path::PathBuf;

use roce_codec::wire::mac_control::MacControlRepr;
use roce_codec::{Frame, FrameKind, IbPacket, Net, ParseOptions};

use crate::Outcome;
use crate::flags::{DecodeFlags, FlagError};
use roce_capture::pipeline::{self, Item};
use roce_capture::read::{CaptureError, CaptureReader, FrameBatch, LinkType, Next, RawFrame};

/// Output format of `dissect`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One JSON object per line, with the keys listed at the end of --help.
    Jsonl,
    /// One compact line per frame, for people.
    Text,
}

/// Arguments of `roce-pcap dissect`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = KEYS_HELP)]
pub struct Args {
    /// A pcap, pcapng or gzip-compressed capture (Ethernet, Linux SLL or SLL2).
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
  opcode opcode_name se migreq padcnt tver pkey fecn becn dqpn ackreq psn
  reth_va reth_rkey reth_dmalen aeth_syndrome aeth_msn immdt ieth_rkey
  deth_qkey deth_srcqp atomic_va atomic_rkey atomic_swap_add atomic_compare
  atomicack_orig rdeth_eecnxt xrceth_xrcsrq grh_paylen grh_nxthdr grh_hoplmt
  payload_len icrc icrc_valid macc_opcode enable_vector pause_times pause_time
kind is one of rocev2 rocev1 pfc pause8023x other malformed truncated.

Exit status: 0 ok, 2 bad input or flag, 3 the file ends in the middle of a
record (everything before it is printed, the offset is on stderr).";

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
            let file = args.file.display();
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

/// Appends the JSON object of one frame (without the newline) to `out`.
pub fn json_line(
    out: &mut Vec<u8>,
    frame_no: u64,
    raw: &RawFrame<'_>,
    decoded: &Result<Frame<'_>, roce_codec::Error>,
) {
    let mut o = JsonObject::new(out);
    o.num("frame", frame_no);
    o.num("ts_ns", raw.ts_ns);
    o.num("len", raw.wire_len as u64);
    o.num("caplen", raw.data.len() as u64);
    let f = match decoded {
        Ok(f) => f,
        Err(e) => {
            // Not even the link-layer header: nothing more to say.
            o.str("kind", headless_kind(raw).name());
            o.display("error", e);
            o.close();
            return;
        }
    };
    o.str("kind", f.kind().name());
    if let Some(e) = &f.stop {
        o.display("error", e);
    }
    if !f.warnings.is_empty() {
        o.display("warning", &f.warnings);
    }
    if let Some(tag) = f.vlans.outer() {
        o.num("vlan_id", tag.vid.into());
        o.num("vlan_pcp", tag.pcp.into());
    }
    if let Some(ip) = f.ip() {
        o.str(
            "l3",
            match ip.src() {
                IpAddr::V4(_) => "ipv4",
                IpAddr::V6(_) => "ipv6",
            },
        );
        o.display("src", &ip.src());
        o.display("dst", &ip.dst());
        o.num("dscp", ip.dscp().into());
        o.num("ecn", ip.ecn().into());
    }
    if let Net::RoceV1 { grh, .. } = &f.net {
        o.display("src", &std::net::Ipv6Addr::from(grh.sgid));
        o.display("dst", &std::net::Ipv6Addr::from(grh.dgid));
        o.num("dscp", grh.dscp().into());
        o.num("ecn", grh.ecn().into());
        if let Some(paylen) = grh_paylen(raw, f) {
            o.num("grh_paylen", paylen.into());
        }
        o.num("grh_nxthdr", grh.next_header.into());
        o.num("grh_hoplmt", grh.hop_limit.into());
    }
    if let Some(udp) = f.udp() {
        o.num("sport", udp.src_port.into());
        o.num("dport", udp.dst_port.into());
    }
    if let Some(ib) = f.ib() {
        ib_fields(&mut o, ib);
    }
    if let Net::MacControl(m) = &f.net {
        o.num("macc_opcode", m.opcode().into());
        match m {
            MacControlRepr::Pfc {
                enable_vector,
                times,
            } => {
                o.num("enable_vector", (*enable_vector).into());
                o.key("pause_times");
                o.out.push(b'[');
                for (i, t) in times.iter().enumerate() {
                    if i > 0 {
                        o.out.push(b',');
                    }
                    push_u64(o.out, (*t).into());
                }
                o.out.push(b']');
            }
            MacControlRepr::Pause { time } => o.num("pause_time", (*time).into()),
            MacControlRepr::Unknown { .. } => {}
        }
    }
    o.close();
}

fn ib_fields(o: &mut JsonObject<'_>, ib: &IbPacket<'_>) {
    let b = &ib.bth;
    o.num("opcode", b.opcode.0.into());
    o.str("opcode_name", b.opcode.name());
    o.bool("se", b.solicited_event);
    o.bool("migreq", b.mig_req);
    o.num("padcnt", b.pad_count.into());
    o.num("tver", b.tver.into());
    o.num("pkey", b.pkey.into());
    o.bool("fecn", b.fecn);
    o.bool("becn", b.becn);
    o.num("dqpn", b.dest_qp.into());
    o.bool("ackreq", b.ack_req);
    o.num("psn", b.psn.value().into());
    let x = &ib.ext;
    if let Some(h) = x.rdeth {
        o.num("rdeth_eecnxt", h.ee_context.into());
    }
    if let Some(h) = x.deth {
        o.num("deth_qkey", h.qkey.into());
        o.num("deth_srcqp", h.src_qp.into());
    }
    if let Some(h) = x.xrceth {
        o.num("xrceth_xrcsrq", h.xrc_srq.into());
    }
    if let Some(h) = x.reth {
        o.num("reth_va", h.va);
        o.num("reth_rkey", h.rkey.into());
        o.num("reth_dmalen", h.dma_len.into());
    }
    if let Some(h) = x.atomic_eth {
        o.num("atomic_va", h.va);
        o.num("atomic_rkey", h.rkey.into());
        o.num("atomic_swap_add", h.swap_add);
        o.num("atomic_compare", h.compare);
    }
    if let Some(h) = x.aeth {
        o.num("aeth_syndrome", h.syndrome.0.into());
        o.num("aeth_msn", h.msn.into());
    }
    if let Some(h) = x.atomic_ack_eth {
        o.num("atomicack_orig", h.orig);
    }
    if let Some(h) = x.immdt {
        o.num("immdt", h.data.into());
    }
    if let Some(h) = x.ieth {
        o.num("ieth_rkey", h.rkey.into());
    }
    if let Some(n) = ib.payload_len {
        o.num("payload_len", n.into());
    }
    if let Some(icrc) = ib.icrc {
        o.key("icrc");
        o.out.push(b'"');
        for byte in icrc {
            o.out.push(HEX[usize::from(byte >> 4)]);
            o.out.push(HEX[usize::from(byte & 0xF)]);
        }
        o.out.push(b'"');
    }
    if let Some(v) = ib.icrc_valid {
        o.bool("icrc_valid", v);
    }
}

/// Offset of the network layer in the captured bytes.
fn l3_offset(raw: &RawFrame<'_>, f: &Frame<'_>) -> usize {
    let link = match raw.link {
        LinkType::Ethernet => 14,
        LinkType::LinuxSll => 16,
        LinkType::LinuxSll2 => 20,
    };
    link + 4 * f.vlans.len()
}

/// The GRH PayLen as sent (the codec derives it on emit, so it is read here).
fn grh_paylen(raw: &RawFrame<'_>, f: &Frame<'_>) -> Option<u16> {
    let at = l3_offset(raw, f) + 4;
    raw.data
        .get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON object being written into a byte buffer.
struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> JsonObject<'a> {
    fn new(out: &'a mut Vec<u8>) -> JsonObject<'a> {
        out.push(b'{');
        JsonObject { out, empty: true }
    }

    fn key(&mut self, k: &str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    fn num(&mut self, k: &str, v: u64) {
        self.key(k);
        push_u64(self.out, v);
    }

    fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        push_json_str(self.out, v);
    }

    fn display(&mut self, k: &str, v: &dyn std::fmt::Display) {
        self.key(k);
        let mut s = Escaper(self.out);
        s.0.push(b'"');
        // Writing into a Vec cannot fail.
        let _ = write!(s, "{v}");
        s.0.push(b'"');
    }

    fn close(self) {
        self.out.push(b'}');
    }
}

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let _ = Escaper(out).write_str(s);
    out.push(b'"');
}

/// Escapes what is written through it as the inside of a JSON string.
struct Escaper<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for &b in s.as_bytes() {
            match b {
                b'"' => self.0.extend_from_slice(b"\\\""),
                b'\\' => self.0.extend_from_slice(b"\\\\"),
                b'\n' => self.0.extend_from_slice(b"\\n"),
                b'\r' => self.0.extend_from_slice(b"\\r"),
                b'\t' => self.0.extend_from_slice(b"\\t"),
                0..0x20 => {
                    self.0.extend_from_slice(b"\\u00");
                    self.0.push(HEX[usize::from(b >> 4)]);
                    self.0.push(HEX[usize::from(b & 0xF)]);
                }
                _ => self.0.push(b),
            }
        }
        Ok(())
    }
}

/// Appends the text summary of one frame (without the newline) to `out`:
/// number, time since the first frame, kind, then what the frame holds.
pub fn text_line(
    out: &mut String,
    frame_no: u64,
    first_ts_ns: u64,
    raw: &RawFrame<'_>,
    decoded: &Result<Frame<'_>, roce_codec::Error>,
) {
    let rel = raw.ts_ns.saturating_sub(first_ts_ns);
    let _ = write!(
        out,
        "{frame_no:>6} {}.{:09} ",
        rel / 1_000_000_000,
        rel % 1_000_000_000
    );
    let f = match decoded {
        Ok(f) => f,
        Err(e) => {
            let kind = headless_kind(raw);
            let _ = write!(out, "{:<10} len {} [{e}]", kind.name(), raw.wire_len);
            return;
        }
    };
    let _ = write!(out, "{:<10} ", f.kind().name());
    if let Some(tag) = f.vlans.outer() {
        let _ = write!(out, "vlan {} pcp {} ", tag.vid, tag.pcp);
    }
    match &f.net {
        Net::RoceV2 { ip, udp, .. } => {
            let _ = write!(
                out,
                "{}:{} > {}:{}",
                Bracket(ip.src()),
                udp.src_port,
                Bracket(ip.dst()),
                udp.dst_port
            );
            ecn_text(out, ip.ecn());
        }
        Net::RoceV1 { grh, .. } => {
            let _ = write!(
                out,
                "{} > {}",
                std::net::Ipv6Addr::from(grh.sgid),
                std::net::Ipv6Addr::from(grh.dgid)
            );
            ecn_text(out, grh.ecn());
        }
        Net::Ip { ip, udp, .. } => {
            match udp {
                Some(u) => {
                    let _ = write!(
                        out,
                        "{}:{} > {}:{} udp",
                        Bracket(ip.src()),
                        u.src_port,
                        Bracket(ip.dst()),
                        u.dst_port
                    );
                }
                None => {
                    let _ = write!(out, "{} > {} proto {}", ip.src(), ip.dst(), ip.protocol());
                }
            }
            ecn_text(out, ip.ecn());
        }
        Net::MacControl(m) => match m {
            MacControlRepr::Pfc {
                enable_vector,
                times,
            } => {
                let _ = write!(out, "PFC enable {enable_vector:#04x} times");
                for (prio, t) in times.iter().enumerate() {
                    if enable_vector & (1 << prio) != 0 {
                        let _ = write!(out, " p{prio}={t}");
                    }
                }
            }
            MacControlRepr::Pause { time } => {
                let _ = write!(out, "PAUSE time {time}");
            }
            MacControlRepr::Unknown { opcode } => {
                let _ = write!(out, "MAC control opcode {opcode:#06x}");
            }
        },
        Net::Other { .. } | Net::Undecoded => {
            let _ = write!(out, "ethertype {:#06x}", f.ethertype);
        }
    }
    if let Some(ib) = f.ib() {
        ib_text(out, ib);
    }
    let _ = write!(out, " len {}", raw.wire_len);
    if raw.data.len() < raw.wire_len {
        let _ = write!(out, " caplen {}", raw.data.len());
    }
    if let Some(e) = &f.stop {
        let _ = write!(out, " [{e}]");
    }
    if !f.warnings.is_empty() {
        let _ = write!(out, " [warning: {}]", f.warnings);
    }
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

fn ecn_text(out: &mut String, ecn: u8) {
    out.push_str(match ecn {
        1 => " ECT(1)",
        2 => " ECT(0)",
        3 => " CE",
        _ => "",
    });
}

fn ib_text(out: &mut String, ib: &IbPacket<'_>) {
    let b = &ib.bth;
    // A reserved opcode says which one it is.
    if b.opcode.info().is_some() {
        let _ = write!(out, " {}", b.opcode.name());
    } else {
        let _ = write!(out, " reserved({:#04x})", b.opcode.0);
    }
    let _ = write!(out, " qp {:#x} psn {}", b.dest_qp, b.psn.value());
    for (on, flag) in [
        (b.ack_req, "A"),
        (b.solicited_event, "SE"),
        (b.fecn, "FECN"),
        (b.becn, "BECN"),
    ] {
        if on {
            let _ = write!(out, " {flag}");
        }
    }
    if b.pkey != 0xFFFF {
        let _ = write!(out, " pkey {:#06x}", b.pkey);
    }
    let x = &ib.ext;
    if let Some(h) = x.deth {
        let _ = write!(out, " qkey {:#x} srcqp {:#x}", h.qkey, h.src_qp);
    }
    if let Some(h) = x.reth {
        let _ = write!(
            out,
            " va {:#x} rkey {:#x} dmalen {}",
            h.va, h.rkey, h.dma_len
        );
    }
    if let Some(h) = x.atomic_eth {
        let _ = write!(
            out,
            " va {:#x} rkey {:#x} swap_add {:#x} compare {:#x}",
            h.va, h.rkey, h.swap_add, h.compare
        );
    }
    if let Some(h) = x.aeth {
        let _ = write!(out, " {} msn {}", h.syndrome.name(), h.msn);
        match h.syndrome.kind() {
            roce_codec::SyndromeKind::Ack { credit_code } if credit_code != 31 => {
                let _ = write!(out, " credits {}", h.syndrome.credits().unwrap_or(0));
            }
            roce_codec::SyndromeKind::RnrNak { .. } => {
                let _ = write!(out, " {}us", h.syndrome.rnr_timer_us().unwrap_or(0));
            }
            _ => {}
        }
    }
    if let Some(h) = x.atomic_ack_eth {
        let _ = write!(out, " orig {:#x}", h.orig);
    }
    if let Some(h) = x.immdt {
        let _ = write!(out, " imm {:#010x}", h.data);
    }
    if let Some(h) = x.ieth {
        let _ = write!(out, " inv_rkey {:#x}", h.rkey);
    }
    if let Some(n) = ib.payload_len {
        let _ = write!(out, " payload {n}");
    }
    if ib.icrc_valid == Some(false) {
        out.push_str(" BAD-ICRC");
    }
}

/// Shows IPv6 addresses in brackets before a port.
struct Bracket(IpAddr);

impl std::fmt::Display for Bracket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(a) => write!(f, "{a}"),
            IpAddr::V6(a) => write!(f, "[{a}]"),
        }
    }
}
