//! Reading pcap and pcapng files as a stream of link-layer frames.
//!
//! ```text
//!  plain file ──mmap, 8 MiB windows───┐
//!                                     ├──record walk──▶ next_frame(): RawFrame { ts_ns, data, ... } (borrowed)
//!  gzip, pipe, ─read, 1 MiB buffers───┘             └─▶ next_batch(): FrameBatch (holds its window/buffer: Send)
//!  stdin (`-`)                                                           │
//!                                     Ethernet / Linux SLL / SLL2 ───────┴──▶ roce_codec::Frame
//! ```
//! Records are parsed in place, from a mapped window that follows the
//! reader or from a buffer that is refilled as it drains, so memory stays
//! flat however large the file is. Record headers are read unvalidated
//! (`next_raw_packet`) and checked here, because pcap-file's validating
//! path rejects every snaplen-truncated record.
//!
//! Plain files are mapped rather than read: the page cache of a file
//! written in large chunks or read from disk is held in large folios (up
//! to 2 MiB), which map in a few hundred faults, so walking the record
//! headers of 1.18 GB costs ~0.015 s mapped against ~0.042 s copied out
//! with `read` (BENCHMARKS.md, dissect section), and the decoders then read
//! the frames where they lie. Windows start on 2 MiB boundaries so that
//! such folios can map whole.
//!
//! [`CaptureReader::next_batch`] hands out runs of records together with a
//! shared handle on the window or buffer they sit in, so that other threads
//! can decode them while this one reads on ([`crate::pipeline`]). A buffer
//! still held by a batch is never refilled: the reader moves the unread
//! tail (less than one record) into a fresh buffer from a small pool, and
//! the old one returns to the pool when its last batch is dropped; a window
//! is unmapped when its last batch is.
//!
//! The files of this module, in the order a record meets them:
//!
//! ```text
//!  window.rs   mapped windows of plain files, pooled buffers of streams
//!  pcap.rs     the pcap record walker (16-byte record headers)
//!  pcapng.rs   the pcapng block walker (interfaces with their own link type and clock)
//!  batch.rs    FrameBatch: records handed to other threads with their bytes
//!  link.rs     LinkType and RawFrame::decode: Ethernet, Linux SLL, SLL2, then the codec
//!  mod.rs      CaptureReader, which drives them; CaptureError
//! ```

mod batch;
mod link;
mod pcap;
mod pcapng;
#[cfg(test)]
mod tests;
mod window;

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use pcap_file::pcap::PcapParser;
use pcap_file::pcapng::PcapNgParser;
use pcap_file::{PcapError, TsResolution};

pub use self::batch::FrameBatch;
use self::batch::{BATCH_BYTES, BATCH_FRAMES, Slot};
pub use self::link::LinkType;
use self::pcapng::Interface;
use self::window::{Buffer, Bytes, CHUNK, Pool, Source};

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
        "{path}: not a pcap or pcapng file ({seen}); expected a pcap, pcapng or gzip-compressed capture"
    )]
    NotACapture { path: PathBuf, seen: String },
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

enum Format {
    Pcap {
        parser: PcapParser,
        link: LinkType,
        nanos: bool,
    },
    PcapNg {
        parser: PcapNgParser,
        interfaces: Vec<Interface>,
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

/// The result of asking for the next batch of frames.
pub enum NextBatch {
    Batch(FrameBatch),
    /// The file ended cleanly.
    End,
    /// As [`Next::Cut`]: the file ends inside the record at `offset`.
    Cut {
        offset: u64,
    },
}

/// The path that names standard input on a command line.
pub const STDIN: &str = "-";
/// What errors and reports call standard input.
pub const STDIN_NAME: &str = "<stdin>";
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether `path` is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// How errors and reports name the input at `path`: [`STDIN_NAME`] for
/// `-`, else the path as given.
pub fn input_name(path: &Path) -> String {
    if is_stdin(path) {
        STDIN_NAME.to_string()
    } else {
        path.display().to_string()
    }
}

/// Largest record we accept; anything bigger is a corrupt length field.
const MAX_RECORD: usize = 256 << 20;

/// A streaming reader over one capture file.
pub struct CaptureReader {
    path: PathBuf,
    src: Source,
    buf: Bytes,
    pool: Arc<Pool>,
    start: usize,
    end: usize,
    /// File offset of `buf[start]`.
    pos: u64,
    eof: bool,
    /// The gzip stream ended before its end-of-stream marker.
    gzip_truncated: bool,
    format: Format,
    gzip: bool,
    /// Frames handed out so far.
    frames: u64,
    first_ts: Option<u64>,
    /// An error found while filling a batch, reported after the batch.
    deferred: Option<CaptureError>,
}

impl CaptureReader {
    /// Opens a pcap, pcapng or gzip-compressed capture.
    ///
    /// A plain regular file is memory-mapped in windows of 8 MiB that
    /// follow the reader, so the process never holds more than a few of
    /// them; gzip files and anything else (pipes, devices) are read as a
    /// stream. The file must not be truncated while it is read: a mapped
    /// page that is gone ends the process (SIGBUS), as with any tool that
    /// maps its input.
    ///
    /// The path `-` ([`STDIN`]) is standard input, read as a stream (pcap,
    /// pcapng, either gzip-compressed) and named [`STDIN_NAME`] in errors.
    pub fn open(path: impl AsRef<Path>) -> Result<CaptureReader, CaptureError> {
        let path = path.as_ref();
        if is_stdin(path) {
            return CaptureReader::open_stream(PathBuf::from(STDIN_NAME), io::stdin());
        }
        let path = path.to_path_buf();
        let mut file = File::open(&path).map_err(|source| CaptureError::Open {
            path: path.clone(),
            source,
        })?;
        let io_err = |source| CaptureError::Io {
            path: path.clone(),
            offset: 0,
            source,
        };
        let meta = file.metadata().map_err(io_err)?;
        if meta.is_file() && meta.len() > 0 {
            let mut head = [0u8; 2];
            let n = read_up_to(&mut file, &mut head).map_err(io_err)?;
            if !(n == 2 && head == GZIP_MAGIC) {
                return CaptureReader::start(
                    path,
                    Source::Mapped {
                        file,
                        len: meta.len(),
                    },
                    false,
                );
            }
            return CaptureReader::stream_after(path, &head[..n], file);
        }
        CaptureReader::open_stream(path, file)
    }

    /// Reads a capture (pcap, pcapng, either gzip-compressed) from a byte
    /// stream such as a pipe, in buffers of 1 MiB that are reused: memory
    /// stays flat however long the stream runs.
    pub fn open_stream(
        path: PathBuf,
        mut src: impl Read + Send + 'static,
    ) -> Result<CaptureReader, CaptureError> {
        let mut head = [0u8; 2];
        let n = read_up_to(&mut src, &mut head).map_err(|source| CaptureError::Io {
            path: path.clone(),
            offset: 0,
            source,
        })?;
        CaptureReader::stream_after(path, &head[..n], src)
    }

    /// A stream whose first bytes, `head`, were read to look for gzip.
    fn stream_after(
        path: PathBuf,
        head: &[u8],
        rest: impl Read + Send + 'static,
    ) -> Result<CaptureReader, CaptureError> {
        let gzip = head == GZIP_MAGIC;
        let peeked = io::Cursor::new(head.to_vec());
        let src: Box<dyn Read + Send> = if gzip {
            Box::new(flate2::bufread::MultiGzDecoder::new(
                io::BufReader::with_capacity(CHUNK, peeked.chain(rest)),
            ))
        } else {
            Box::new(peeked.chain(rest))
        };
        CaptureReader::from_reader(path, src, gzip)
    }

    /// Reads a capture from any byte stream (used for stdin and tests).
    pub fn from_reader(
        path: PathBuf,
        src: Box<dyn Read + Send>,
        gzip: bool,
    ) -> Result<CaptureReader, CaptureError> {
        CaptureReader::start(path, Source::Stream(src), gzip)
    }

    fn start(path: PathBuf, src: Source, gzip: bool) -> Result<CaptureReader, CaptureError> {
        let pool = Arc::new(Pool::default());
        let buf = match src {
            Source::Stream(_) => Bytes::Read(Arc::new(Buffer {
                bytes: vec![0; CHUNK],
                pool: Arc::downgrade(&pool),
            })),
            Source::Mapped { .. } => Bytes::Empty,
        };
        let mut r = CaptureReader {
            path,
            src,
            buf,
            pool,
            start: 0,
            end: 0,
            pos: 0,
            eof: false,
            gzip_truncated: false,
            format: Format::Pcap {
                parser: PcapParser::new(&PCAP_STUB).unwrap().1,
                link: LinkType::Ethernet,
                nanos: false,
            },
            gzip,
            frames: 0,
            first_ts: None,
            deferred: None,
        };
        r.fill(64)?;
        let avail = &r.buf.as_slice()[r.start..r.end];
        let magic = avail
            .get(..4)
            .map(|m| u32::from_be_bytes(m.try_into().unwrap()));
        let not_capture = |r: &CaptureReader| {
            let head = &r.buf.as_slice()[r.start..r.end.min(r.start + 4)];
            let hex = head
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" ");
            CaptureError::NotACapture {
                path: r.path.clone(),
                seen: match head.len() {
                    0 => "the file is empty".to_string(),
                    1..=3 => format!("only {} bytes: {hex}", head.len()),
                    _ => format!("first bytes {hex}"),
                },
            }
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
                // The section header block whole, by its own length (a
                // live pipe may hold nothing more yet).
                r.fill(12)?;
                let head = &r.buf.as_slice()[r.start..r.end];
                if let Some(len) = shb_len(head) {
                    r.fill(len.min(MAX_RECORD))?;
                }
                let avail = &r.buf.as_slice()[r.start..r.end];
                let (rem, parser) = PcapNgParser::new(avail).map_err(|e| r.corrupt(0, &e))?;
                let used = avail.len() - rem.len();
                r.format = Format::PcapNg {
                    parser,
                    interfaces: Vec::new(),
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

    /// Whether the gzip stream ended before its end (a compressed file cut
    /// short). The reader then reports [`Next::Cut`] at the first record it
    /// could not read whole, even one that would have started right there.
    pub fn gzip_truncated(&self) -> bool {
        self.gzip_truncated
    }

    /// Frames handed out so far.
    pub fn frames(&self) -> u64 {
        self.frames
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

    /// Moves past the frame record at the reader's position; says where
    /// its frame is in the buffer and in the file.
    #[inline]
    fn consume(&mut self, r: &Record) -> Slot {
        let slot = Slot {
            ts_ns: r.ts_ns,
            offset: self.pos,
            wire_len: r.wire_len,
            data_at: self.start + r.data_at,
            data_len: r.data_len,
            link: r.link,
        };
        self.advance(r.record_len);
        self.frames += 1;
        self.first_ts.get_or_insert(r.ts_ns);
        slot
    }

    /// The next frame, the clean end of the file, or the offset at which the
    /// file was cut mid-record.
    pub fn next_frame(&mut self) -> Result<Next<'_>, CaptureError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        loop {
            let have = self.end - self.start;
            match self.step()? {
                Step::Frame(record) => {
                    let slot = self.consume(&record);
                    return Ok(Next::Frame(slot.frame(self.buf.as_slice())));
                }
                Step::Skip(n) => self.advance(n),
                Step::Need(need) => {
                    if let Some(end) = self.refill(need, have)? {
                        return Ok(end);
                    }
                }
            }
        }
    }

    /// Reads more after `step` asked for `need` bytes with `have` in the
    /// buffer; at the end of the input, says how the file ended.
    fn refill(&mut self, need: usize, have: usize) -> Result<Option<Next<'static>>, CaptureError> {
        if self.eof {
            return Ok(Some(if have == 0 && !self.gzip_truncated {
                Next::End
            } else {
                Next::Cut { offset: self.pos }
            }));
        }
        if need > MAX_RECORD {
            return Err(CaptureError::Corrupt {
                path: self.path.clone(),
                offset: self.pos,
                what: format!("record length {need} is implausible (corrupt file?)"),
            });
        }
        // A mapped file maps a window of at least CHUNK; a stream reads
        // into a buffer of at least CHUNK but returns once the record is
        // whole, so that a live pipe (`tcpdump -U -w - | ...`) is analyzed
        // as its frames come, not a mebibyte later.
        let want = match self.src {
            Source::Mapped { .. } => need.max(have + 1).max(CHUNK),
            Source::Stream(_) => need.max(have + 1),
        };
        self.fill(want)?;
        Ok(None)
    }

    /// The next run of frames (up to 8192 frames or 4 MiB, all from one
    /// buffer or mapped window), or how the file ended. Frames come in the same order, with the same
    /// contents, as from [`CaptureReader::next_frame`], and the two may be
    /// mixed.
    pub fn next_batch(&mut self) -> Result<NextBatch, CaptureError> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        let mut slots: Vec<Slot> = Vec::new();
        let first_number = self.frames + 1;
        let from = self.pos;
        loop {
            if slots.len() == BATCH_FRAMES || self.pos - from >= BATCH_BYTES {
                break;
            }
            let have = self.end - self.start;
            let step = match self.step() {
                Ok(s) => s,
                // The frames before a bad record are delivered first, as
                // `next_frame` would.
                Err(e) if !slots.is_empty() => {
                    self.deferred = Some(e);
                    break;
                }
                Err(e) => return Err(e),
            };
            match step {
                Step::Frame(record) => {
                    if slots.capacity() == 0 {
                        // Roughly the records left in this buffer.
                        let guess = (have / record.record_len.max(64)).clamp(1, BATCH_FRAMES);
                        slots.reserve_exact(guess);
                    }
                    slots.push(self.consume(&record));
                }
                Step::Skip(n) => self.advance(n),
                // What the buffer held is handed out before reading more,
                // so that the next read goes into another buffer.
                Step::Need(_) if !slots.is_empty() => break,
                Step::Need(need) => match self.refill(need, have)? {
                    Some(Next::Cut { offset }) => return Ok(NextBatch::Cut { offset }),
                    Some(_) => return Ok(NextBatch::End),
                    None => {}
                },
            }
        }
        Ok(NextBatch::Batch(FrameBatch {
            buf: self.buf.clone(),
            slots,
            first_number,
            capture_first_ts: self.first_ts.unwrap_or(0),
            end_offset: self.pos,
        }))
    }

    /// Looks at the record at `start` without consuming it.
    fn step(&mut self) -> Result<Step, CaptureError> {
        let buf = &self.buf.as_slice()[self.start..self.end];
        let at = RecordAt {
            path: &self.path,
            offset: self.pos,
        };
        match &mut self.format {
            Format::Pcap {
                parser,
                link,
                nanos,
            } => pcap::step(parser, *link, *nanos, buf, &at),
            Format::PcapNg { parser, interfaces } => pcapng::step(parser, interfaces, buf, &at),
        }
    }
}

/// What a record walker found at the reader's position.
enum Step {
    Frame(Record),
    /// A block that holds no frame, of this many bytes.
    Skip(usize),
    /// This many bytes are needed to see the whole record.
    Need(usize),
}

/// A frame's record, relative to the reader's position.
struct Record {
    data_at: usize,
    data_len: usize,
    record_len: usize,
    ts_ns: u64,
    wire_len: usize,
    link: LinkType,
}

/// Where the record being walked starts, for the errors about it.
struct RecordAt<'a> {
    path: &'a Path,
    offset: u64,
}

impl RecordAt<'_> {
    fn corrupt(&self, what: String) -> CaptureError {
        CaptureError::Corrupt {
            path: self.path.to_path_buf(),
            offset: self.offset,
            what,
        }
    }

    fn unsupported_link(&self, linktype: u32) -> CaptureError {
        CaptureError::UnsupportedLinkType {
            path: self.path.to_path_buf(),
            offset: self.offset,
            linktype,
        }
    }
}

/// The total length of the pcapng section header block `head` starts
/// with, in the byte order its byte-order magic declares.
fn shb_len(head: &[u8]) -> Option<usize> {
    let len: [u8; 4] = head.get(4..8)?.try_into().ok()?;
    let len = match head.get(8..12)? {
        [0x4d, 0x3c, 0x2b, 0x1a] => u32::from_le_bytes(len),
        [0x1a, 0x2b, 0x3c, 0x4d] => u32::from_be_bytes(len),
        _ => return None,
    };
    Some(len as usize)
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// A minimal pcap header to build a placeholder parser before the real one.
const PCAP_STUB: [u8; 24] = [
    0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
];
