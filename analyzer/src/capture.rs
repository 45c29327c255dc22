//! Reading pcap and pcapng files as a stream of link-layer frames.
//!
//! ```text
//!  file ──(gzip?)──▶ 1 MiB sliding buffer ──pcap-file slice parser──▶ RawFrame { ts_ns, data, ... }
//!                                                                        │
//!                                     Ethernet / Linux SLL / SLL2 ───────┴──▶ roce_codec::Frame
//! ```
//! Records are parsed in place from a buffer that is refilled as it drains,
//! so memory stays flat however large the file is. Record headers are read
//! unvalidated (`next_raw_packet`) and checked here, because pcap-file's
//! validating path rejects every snaplen-truncated record.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::PcapNgParser;
use pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionOption;
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};
use roce_codec::{EthRepr, Frame, ParseOptions};

/// Link layers we decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    Ethernet,
    /// Linux cooked capture v1 (`tcpdump -i any` on older libpcap).
    LinuxSll,
    /// Linux cooked capture v2.
    LinuxSll2,
}

impl LinkType {
    fn from_datalink(d: DataLink) -> Option<LinkType> {
        match d {
            DataLink::ETHERNET => Some(LinkType::Ethernet),
            DataLink::LINUX_SLL => Some(LinkType::LinuxSll),
            DataLink::LINUX_SLL2 => Some(LinkType::LinuxSll2),
            _ => None,
        }
    }
}

/// Why a capture could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("{path}: cannot open: {source}")]
    Open { path: PathBuf, source: io::Error },
    #[error("{path}: read error near byte {offset}: {source}")]
    Io {
        path: PathBuf,
        offset: u64,
        source: io::Error,
    },
    #[error(
        "{path}: not a pcap or pcapng file (first bytes {magic}); expected a pcap, pcapng or gzip-compressed capture"
    )]
    NotACapture { path: PathBuf, magic: String },
    #[error("{path}: byte {offset}: {what}")]
    Corrupt {
        path: PathBuf,
        offset: u64,
        what: String,
    },
    #[error(
        "{path}: byte {offset}: link type {linktype} is not supported (supported: Ethernet 1, Linux cooked SLL 113, SLL2 276)"
    )]
    UnsupportedLinkType {
        path: PathBuf,
        offset: u64,
        linktype: u32,
    },
}

/// One captured frame. `data` borrows the reader's buffer.
#[derive(Debug, Clone, Copy)]
pub struct RawFrame<'a> {
    /// Timestamp in nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    /// Length on the wire.
    pub wire_len: usize,
    pub data: &'a [u8],
    pub link: LinkType,
    /// Byte offset of the record in the (decompressed) file.
    pub offset: u64,
}

impl<'a> RawFrame<'a> {
    /// Decodes the frame with the codec, in lax mode. Fails only when not
    /// even the link-layer header is there.
    pub fn decode(&self, opts: &ParseOptions) -> Result<Frame<'a>, roce_codec::Error> {
        match self.link {
            LinkType::Ethernet => Frame::parse_lax(self.data, self.wire_len, opts),
            LinkType::LinuxSll => sll(self.data, 16, 5, 6, 14, self.wire_len, opts),
            LinkType::LinuxSll2 => sll(self.data, 20, 11, 12, 0, self.wire_len, opts),
        }
    }
}

/// Linux cooked headers carry the sender's link address and the EtherType
/// but no destination address; the destination is reported as zeros.
///
/// ```text
/// SLL  (16): pkttype(2) hatype(2) addrlen(2) addr(8) protocol(2)
/// SLL2 (20): protocol(2) resv(2) ifindex(4) hatype(2) pkttype(1) addrlen(1) addr(8)
/// ```
fn sll<'a>(
    data: &'a [u8],
    header_len: usize,
    addr_len_at: usize,
    addr_at: usize,
    proto_at: usize,
    wire_len: usize,
    opts: &ParseOptions,
) -> Result<Frame<'a>, roce_codec::Error> {
    if data.len() < header_len {
        return Err(roce_codec::Error::Truncated {
            layer: roce_codec::Layer::Ethernet,
            offset: 0,
            required: header_len,
            present: data.len(),
        });
    }
    let mut eth = EthRepr::default();
    if data[addr_len_at] >= 6 {
        eth.src.copy_from_slice(&data[addr_at..addr_at + 6]);
    }
    let ethertype = u16::from_be_bytes([data[proto_at], data[proto_at + 1]]);
    Ok(Frame::parse_after_l2(
        eth, ethertype, data, header_len, wire_len, opts,
    ))
}

/// Per-interface facts of a pcapng section.
#[derive(Debug, Clone, Copy)]
struct Iface {
    link: Option<LinkType>,
    linktype: u32,
    /// Nanoseconds per timestamp unit as a ratio (num / den).
    ts_num: u64,
    ts_den: u64,
}

enum Format {
    Pcap {
        parser: PcapParser,
        link: LinkType,
        nanos: bool,
    },
    PcapNg {
        parser: PcapNgParser,
        ifaces: Vec<Iface>,
    },
}

/// The result of asking for the next frame.
pub enum Next<'a> {
    Frame(RawFrame<'a>),
    /// The file ended cleanly.
    End,
    /// The file ends in the middle of a record that starts at `offset`:
    /// everything before it was read. Callers warn and carry on.
    Cut {
        offset: u64,
    },
}

const CHUNK: usize = 1 << 20;
/// Largest record we accept; anything bigger is a corrupt length field.
const MAX_RECORD: usize = 256 << 20;

/// A streaming reader over one capture file.
pub struct CaptureReader {
    path: PathBuf,
    src: Box<dyn Read + Send>,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    pos: u64,
    eof: bool,
    format: Format,
    gzip: bool,
}

impl CaptureReader {
    /// Opens a pcap, pcapng or gzip-compressed capture.
    pub fn open(path: impl AsRef<Path>) -> Result<CaptureReader, CaptureError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(|source| CaptureError::Open {
            path: path.clone(),
            source,
        })?;
        let mut head = [0u8; 2];
        let mut peek = io::BufReader::with_capacity(CHUNK, file);
        let n = {
            use std::io::BufRead;
            let b = peek.fill_buf().map_err(|source| CaptureError::Io {
                path: path.clone(),
                offset: 0,
                source,
            })?;
            let n = b.len().min(2);
            head[..n].copy_from_slice(&b[..n]);
            n
        };
        let gzip = n == 2 && head == [0x1f, 0x8b];
        let src: Box<dyn Read + Send> = if gzip {
            Box::new(flate2::read::MultiGzDecoder::new(peek))
        } else {
            // Past the peeked bytes, read straight from the file into our
            // buffer: through the BufReader every byte is copied twice,
            // which costs a third of the decode time on 4 KiB frames.
            let head = peek.buffer().to_vec();
            Box::new(io::Cursor::new(head).chain(peek.into_inner()))
        };
        CaptureReader::from_reader(path, src, gzip)
    }

    /// Reads a capture from any byte stream (used for stdin and tests).
    pub fn from_reader(
        path: PathBuf,
        src: Box<dyn Read + Send>,
        gzip: bool,
    ) -> Result<CaptureReader, CaptureError> {
        let mut r = CaptureReader {
            path,
            src,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            pos: 0,
            eof: false,
            format: Format::Pcap {
                parser: PcapParser::new(&PCAP_STUB).unwrap().1,
                link: LinkType::Ethernet,
                nanos: false,
            },
            gzip,
        };
        r.fill(64)?;
        let avail = &r.buf[r.start..r.end];
        let magic = avail
            .get(..4)
            .map(|m| u32::from_be_bytes(m.try_into().unwrap()));
        let not_capture = |r: &CaptureReader| CaptureError::NotACapture {
            path: r.path.clone(),
            magic: r.buf[r.start..r.end.min(r.start + 4)]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" "),
        };
        match magic {
            Some(0xa1b2c3d4 | 0xd4c3b2a1 | 0xa1b23c4d | 0x4d3cb2a1) => {
                let (rem, parser) = PcapParser::new(avail).map_err(|e| r.corrupt(0, &e))?;
                let used = avail.len() - rem.len();
                let header = parser.header();
                let link = LinkType::from_datalink(header.datalink).ok_or_else(|| {
                    CaptureError::UnsupportedLinkType {
                        path: r.path.clone(),
                        offset: 20,
                        linktype: u32::from(header.datalink),
                    }
                })?;
                let nanos = header.ts_resolution == TsResolution::NanoSecond;
                r.format = Format::Pcap {
                    parser,
                    link,
                    nanos,
                };
                r.advance(used);
            }
            Some(0x0a0d0d0a) => {
                r.fill(MAX_RECORD.min(1 << 16))?;
                let avail = &r.buf[r.start..r.end];
                let (rem, parser) = PcapNgParser::new(avail).map_err(|e| r.corrupt(0, &e))?;
                let used = avail.len() - rem.len();
                r.format = Format::PcapNg {
                    parser,
                    ifaces: Vec::new(),
                };
                r.advance(used);
            }
            _ => return Err(not_capture(&r)),
        }
        Ok(r)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether offsets count bytes of the decompressed stream.
    pub fn is_gzip(&self) -> bool {
        self.gzip
    }

    fn corrupt(&self, at: usize, e: &PcapError) -> CaptureError {
        CaptureError::Corrupt {
            path: self.path.clone(),
            offset: self.pos + at as u64,
            what: e.to_string(),
        }
    }

    fn advance(&mut self, n: usize) {
        self.start += n;
        self.pos += n as u64;
    }

    /// Makes at least `want` bytes available from `start`, unless the file
    /// ends first.
    fn fill(&mut self, want: usize) -> Result<(), CaptureError> {
        if self.end - self.start >= want || self.eof {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() < want {
            self.buf.resize(want.next_power_of_two(), 0);
        }
        while self.end < want {
            if self.end == self.buf.len() {
                let n = self.buf.len();
                self.buf.resize(n * 2, 0);
            }
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(CaptureError::Io {
                        path: self.path.clone(),
                        offset: self.pos + (self.end - self.start) as u64,
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// The next frame, the clean end of the file, or the offset at which the
    /// file was cut mid-record.
    pub fn next_frame(&mut self) -> Result<Next<'_>, CaptureError> {
        loop {
            let have = self.end - self.start;
            match self.step()? {
                Step::Frame {
                    data_at,
                    data_len,
                    record_len,
                    ts_ns,
                    wire_len,
                    link,
                } => {
                    let offset = self.pos;
                    let s = self.start + data_at;
                    self.advance(record_len);
                    return Ok(Next::Frame(RawFrame {
                        ts_ns,
                        wire_len,
                        data: &self.buf[s..s + data_len],
                        link,
                        offset,
                    }));
                }
                Step::Skip(n) => self.advance(n),
                Step::Need(need) => {
                    if self.eof {
                        return Ok(if have == 0 {
                            Next::End
                        } else {
                            Next::Cut { offset: self.pos }
                        });
                    }
                    if need > MAX_RECORD {
                        return Err(CaptureError::Corrupt {
                            path: self.path.clone(),
                            offset: self.pos,
                            what: format!("record length {need} is implausible (corrupt file?)"),
                        });
                    }
                    self.fill(need.max(have + 1).max(CHUNK))?;
                }
            }
        }
    }

    /// Looks at the record at `start` without consuming it.
    fn step(&mut self) -> Result<Step, CaptureError> {
        let buf = &self.buf[self.start..self.end];
        let path = &self.path;
        let pos = self.pos;
        let corrupt = |what: String| CaptureError::Corrupt {
            path: path.clone(),
            offset: pos,
            what,
        };
        match &mut self.format {
            Format::Pcap {
                parser,
                link,
                nanos,
            } => {
                let big = parser.header().endianness == Endianness::Big;
                let u32_at = |i: usize| {
                    let b: [u8; 4] = buf[i..i + 4].try_into().unwrap();
                    if big {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    }
                };
                if buf.len() < 16 {
                    return Ok(Step::Need(16));
                }
                let incl = u32_at(8) as usize;
                if incl > MAX_RECORD {
                    return Err(corrupt(format!(
                        "record captured length {incl} is implausible (corrupt file?)"
                    )));
                }
                let raw = match parser.next_raw_packet(buf) {
                    Ok((_, raw)) => raw,
                    Err(PcapError::IncompleteBuffer) => return Ok(Step::Need(16 + incl)),
                    Err(e) => return Err(corrupt(e.to_string())),
                };
                let frac = u64::from(raw.ts_frac);
                let frac_ns = if *nanos { frac } else { frac * 1000 };
                if frac_ns >= 1_000_000_000 {
                    return Err(corrupt(format!(
                        "record timestamp fraction {frac} is out of range for {} resolution",
                        if *nanos { "nanosecond" } else { "microsecond" }
                    )));
                }
                Ok(Step::Frame {
                    data_at: 16,
                    data_len: incl,
                    record_len: 16 + incl,
                    ts_ns: u64::from(raw.ts_sec) * 1_000_000_000 + frac_ns,
                    wire_len: (raw.orig_len as usize).max(incl),
                    link: *link,
                })
            }
            Format::PcapNg { parser, ifaces } => {
                let big = parser.section().endianness == Endianness::Big;
                if buf.len() < 12 {
                    return Ok(Step::Need(12));
                }
                let (block_type, declared) = {
                    let b4: [u8; 4] = buf[4..8].try_into().unwrap();
                    let t: [u8; 4] = buf[0..4].try_into().unwrap();
                    if big || t == [0x0a, 0x0d, 0x0d, 0x0a] {
                        // A new section may switch byte order; its length is
                        // read with the order its own magic gives.
                        let le = buf.len() >= 12 && buf[8..12] == [0x4d, 0x3c, 0x2b, 0x1a];
                        let len = if le {
                            u32::from_le_bytes(b4)
                        } else {
                            u32::from_be_bytes(b4)
                        };
                        (u32::from_be_bytes(t), len as usize)
                    } else {
                        (u32::from_le_bytes(t), u32::from_le_bytes(b4) as usize)
                    }
                };
                if declared > MAX_RECORD {
                    return Err(corrupt(format!(
                        "block length {declared} is implausible (corrupt file?)"
                    )));
                }
                let raw = match parser.next_raw_block(buf) {
                    Ok((_, raw)) => raw,
                    Err(PcapError::IncompleteBuffer) => return Ok(Step::Need(declared.max(12))),
                    Err(e) => return Err(corrupt(e.to_string())),
                };
                let record_len = raw.initial_len as usize;
                let body = &buf[8..record_len - 4];
                let rd = |i: usize| -> u32 {
                    let b: [u8; 4] = body[i..i + 4].try_into().unwrap();
                    if big {
                        u32::from_be_bytes(b)
                    } else {
                        u32::from_le_bytes(b)
                    }
                };
                match block_type {
                    // Section header or interface description: refresh our view of the interfaces.
                    0x0A0D0D0A | 0x0000_0001 => {
                        *ifaces = parser.interfaces().iter().map(iface_of).collect();
                        Ok(Step::Skip(record_len))
                    }
                    // Enhanced packet block; obsolete packet block (2) has the same
                    // layout with a 16-bit interface id and a drops counter.
                    0x0000_0006 | 0x0000_0002 => {
                        if body.len() < 20 {
                            return Err(corrupt(
                                "packet block shorter than its fixed fields".into(),
                            ));
                        }
                        let iface_id = if block_type == 6 {
                            rd(0)
                        } else {
                            let b = [body[0], body[1]];
                            u32::from(if big {
                                u16::from_be_bytes(b)
                            } else {
                                u16::from_le_bytes(b)
                            })
                        };
                        let raw_ts = (u64::from(rd(4)) << 32) | u64::from(rd(8));
                        let caplen = rd(12) as usize;
                        let orig = rd(16) as usize;
                        if 20 + caplen > body.len() {
                            return Err(corrupt(format!(
                                "packet block captured length {caplen} exceeds the block ({} bytes)",
                                record_len
                            )));
                        }
                        let iface = ifaces.get(iface_id as usize).copied().ok_or_else(|| {
                            corrupt(format!(
                                "packet block names interface {iface_id}, which was never described"
                            ))
                        })?;
                        let link = iface
                            .link
                            .ok_or_else(|| CaptureError::UnsupportedLinkType {
                                path: path.clone(),
                                offset: pos,
                                linktype: iface.linktype,
                            })?;
                        Ok(Step::Frame {
                            data_at: 8 + 20,
                            data_len: caplen,
                            record_len,
                            ts_ns: (u128::from(raw_ts) * u128::from(iface.ts_num)
                                / u128::from(iface.ts_den))
                                as u64,
                            wire_len: orig.max(caplen),
                            link,
                        })
                    }
                    // Simple packet block: interface 0, no timestamp.
                    0x0000_0003 => {
                        if body.len() < 4 {
                            return Err(corrupt(
                                "simple packet block shorter than its fixed fields".into(),
                            ));
                        }
                        let orig = rd(0) as usize;
                        let caplen = orig.min(body.len() - 4);
                        let iface = ifaces.first().copied().ok_or_else(|| {
                            corrupt("simple packet block before any interface description".into())
                        })?;
                        let link = iface
                            .link
                            .ok_or_else(|| CaptureError::UnsupportedLinkType {
                                path: path.clone(),
                                offset: pos,
                                linktype: iface.linktype,
                            })?;
                        Ok(Step::Frame {
                            data_at: 12,
                            data_len: caplen,
                            record_len,
                            ts_ns: 0,
                            wire_len: orig,
                            link,
                        })
                    }
                    _ => Ok(Step::Skip(record_len)),
                }
            }
        }
    }
}

enum Step {
    Frame {
        data_at: usize,
        data_len: usize,
        record_len: usize,
        ts_ns: u64,
        wire_len: usize,
        link: LinkType,
    },
    Skip(usize),
    Need(usize),
}

fn iface_of(
    idb: &pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock<'static>,
) -> Iface {
    // if_tsresol: MSB clear = 10^-n s, MSB set = 2^-n s; default 10^-6.
    let resol = idb
        .options
        .iter()
        .find_map(|o| match o {
            InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
            _ => None,
        })
        .unwrap_or(6);
    let (ts_num, ts_den) = if resol & 0x80 == 0 {
        let n = u32::from(resol);
        if n <= 9 {
            (10u64.pow(9 - n), 1)
        } else {
            (1, 10u64.pow((n - 9).min(19)))
        }
    } else {
        let n = u32::from(resol & 0x7F).min(63);
        (1_000_000_000, 1u64 << n)
    };
    Iface {
        link: LinkType::from_datalink(idb.linktype),
        linktype: u32::from(idb.linktype),
        ts_num,
        ts_den,
    }
}

/// A minimal pcap header to build a placeholder parser before the real one.
const PCAP_STUB: [u8; 24] = [
    0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture_writer::{CaptureFormat, CaptureWriter};

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("roce-pcap-capture-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d.join(name)
    }

    fn two_frames(format: CaptureFormat, name: &str) -> (PathBuf, Vec<u8>) {
        let path = tmp(name);
        let mut w = CaptureWriter::create(&path, format, 0, "x").unwrap();
        w.write(1, &[0xaa; 100]).unwrap();
        w.write(2, &[0xbb; 300]).unwrap();
        w.finish().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        (path, bytes)
    }

    #[test]
    fn a_file_cut_mid_record_reports_the_record_offset() {
        for (format, first_record_end) in [
            (CaptureFormat::Pcap, 24 + 16 + 100),
            (CaptureFormat::PcapNg, 0),
        ] {
            let (path, bytes) = two_frames(format, &format!("cut.{}", format.extension()));
            // Cut 10 bytes into the second record's data.
            let cut = bytes.len() - 300 + 10
                - if format == CaptureFormat::PcapNg {
                    4
                } else {
                    0
                };
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let mut r = CaptureReader::open(&path).unwrap();
            assert!(matches!(r.next_frame().unwrap(), Next::Frame(f) if f.data == [0xaa; 100]));
            match r.next_frame().unwrap() {
                Next::Cut { offset } => {
                    if format == CaptureFormat::Pcap {
                        assert_eq!(offset, first_record_end);
                    }
                    assert!((offset as usize) < cut);
                }
                _ => panic!("expected a cut"),
            }
        }
    }

    #[test]
    fn gzip_input_is_read_transparently() {
        use std::io::Write;
        let (path, bytes) = two_frames(CaptureFormat::Pcap, "plain.pcap");
        let gz = path.with_extension("pcap.gz");
        let mut e =
            flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        e.write_all(&bytes).unwrap();
        e.finish().unwrap();
        let mut r = CaptureReader::open(&gz).unwrap();
        assert!(r.is_gzip());
        let mut n = 0;
        while let Next::Frame(_) = r.next_frame().unwrap() {
            n += 1;
        }
        assert_eq!(n, 2);
    }

    #[test]
    fn not_a_capture_names_the_file_and_magic() {
        let path = tmp("notes.txt");
        std::fs::write(&path, b"hello world").unwrap();
        let e = CaptureReader::open(&path).err().unwrap();
        let msg = e.to_string();
        assert!(
            msg.contains("notes.txt") && msg.contains("68 65 6c 6c"),
            "{msg}"
        );
        let e = CaptureReader::open(tmp("missing.pcap")).err().unwrap();
        assert!(matches!(e, CaptureError::Open { .. }));
    }

    #[test]
    fn empty_file_is_not_a_capture() {
        let path = tmp("empty.pcap");
        std::fs::write(&path, b"").unwrap();
        assert!(matches!(
            CaptureReader::open(&path),
            Err(CaptureError::NotACapture { .. })
        ));
    }
}
