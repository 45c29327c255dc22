//! Reading pcap and pcapng files as a stream of link-layer frames.
//!
//! ```text
//!  plain file ──mmap, 8 MiB windows───┐
//!                                     ├──record walk──▶ next_frame(): RawFrame { ts_ns, data, ... } (borrowed)
//!  gzip, pipe ──read, 1 MiB buffers───┘             └─▶ next_batch(): FrameBatch (holds its window/buffer: Send)
//!                                                                        │
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

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

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

const CHUNK: usize = 1 << 20;
/// Largest record we accept; anything bigger is a corrupt length field.
const MAX_RECORD: usize = 256 << 20;
/// Most frames and bytes in one batch: small enough that two decoders
/// share a file evenly, large enough that handing a batch over (a wake-up
/// and a context switch, several microseconds on a VM) is rare. A batch
/// never spans two buffers, so the stream path's are 1 MiB at most.
const BATCH_FRAMES: usize = 8192;
const BATCH_BYTES: u64 = 4 << 20;
/// Spare buffers a reader keeps for reuse; more in flight are allocated.
const POOL_KEEP: usize = 16;

/// Buffers that batches hand back when they are dropped, so that a reader
/// streaming through a large file reuses a handful of them.
#[derive(Default)]
struct Pool {
    free: Mutex<Vec<Vec<u8>>>,
}

impl Pool {
    fn take(&self, len: usize) -> Vec<u8> {
        let spare = self.free.lock().ok().and_then(|mut f| f.pop());
        let mut v = spare.unwrap_or_default();
        if v.len() < len {
            v.resize(len, 0);
        }
        v
    }
}

/// A read buffer, returned to its pool when the last holder drops it.
struct Buffer {
    bytes: Vec<u8>,
    pool: Weak<Pool>,
}

impl Drop for Buffer {
    fn drop(&mut self) {
        // Buffers grown for an outsized record are not worth keeping.
        if self.bytes.len() > 4 * CHUNK {
            return;
        }
        if let Some(pool) = self.pool.upgrade() {
            if let Ok(mut free) = pool.free.lock() {
                if free.len() < POOL_KEEP {
                    free.push(std::mem::take(&mut self.bytes));
                }
            }
        }
    }
}

/// Where one frame of a [`FrameBatch`] sits in the batch's buffer.
#[derive(Debug, Clone, Copy)]
struct Slot {
    ts_ns: u64,
    offset: u64,
    wire_len: usize,
    data_at: usize,
    data_len: usize,
    link: LinkType,
}

/// Consecutive frames of one capture with the buffer (or mapped window)
/// they are in: owned and `Send`, so a batch can be decoded on another
/// thread while the reader goes on.
pub struct FrameBatch {
    buf: Bytes,
    slots: Vec<Slot>,
    first_number: u64,
    capture_first_ts: u64,
    end_offset: u64,
}

impl FrameBatch {
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The 1-based number of the batch's first frame in its capture (as
    /// tshark numbers frames).
    pub fn first_number(&self) -> u64 {
        self.first_number
    }

    /// Timestamp of the first frame of the whole capture (not just of this
    /// batch), which relative times are counted from.
    pub fn capture_first_ts(&self) -> u64 {
        self.capture_first_ts
    }

    /// Byte offset just past the batch's last record in the (decompressed) file.
    pub fn end_offset(&self) -> u64 {
        self.end_offset
    }

    /// The `i`-th frame of the batch.
    pub fn get(&self, i: usize) -> RawFrame<'_> {
        let s = &self.slots[i];
        RawFrame {
            ts_ns: s.ts_ns,
            wire_len: s.wire_len,
            data: &self.buf.as_slice()[s.data_at..s.data_at + s.data_len],
            link: s.link,
            offset: s.offset,
        }
    }

    /// The frames in capture order. Handing out a frame asks the CPU to
    /// fetch the next one's bytes: a decoder reading mapped frames (the
    /// ICRC covers every byte) otherwise waits on memory at every page
    /// boundary, where the hardware prefetchers stop (a third of the ICRC
    /// time on 4 KiB frames).
    pub fn iter(&self) -> impl ExactSizeIterator<Item = RawFrame<'_>> + '_ {
        (0..self.slots.len()).map(|i| {
            if let Some(next) = self.slots.get(i + 1) {
                let len = next.data_len.min(PREFETCH_MAX);
                prefetch(&self.buf.as_slice()[next.data_at..next.data_at + len]);
            }
            self.get(i)
        })
    }
}

/// Most bytes of a frame fetched ahead (a jumbo frame's first 9 KiB).
const PREFETCH_MAX: usize = 9216;

/// Hints the CPU to bring `bytes` into its caches; no effect on results.
#[inline]
fn prefetch(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        for line in bytes.chunks(64) {
            // SAFETY: a prefetch reads nothing and cannot fault; the
            // pointer is inside `bytes`. (Newer compilers deem the call
            // safe, older ones do not.)
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast());
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Where a reader's bytes come from.
enum Source {
    Stream(Box<dyn Read + Send>),
    Mapped { file: File, len: u64 },
}

/// The bytes a reader walks and its batches point into.
#[derive(Clone)]
enum Bytes {
    Empty,
    Read(Arc<Buffer>),
    Mapped(Arc<memmap2::Mmap>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Empty => &[],
            Bytes::Read(b) => &b.bytes,
            Bytes::Mapped(m) => m,
        }
    }
}

/// A mapped window's size, and the alignment of its start in the file:
/// page-cache pages of a file read from disk are often 2 MiB folios, which
/// map in one go when the window starts on one. Mapped pages count in the
/// resident set until their window is unmapped (when its last batch is
/// dropped), so the window bounds the memory a reader shows: ~25 MB peak
/// RSS for `analyze` of a 2 GB capture, against ~37 MB with 16 MiB windows.
const WINDOW: usize = 8 << 20;
const WINDOW_ALIGN: u64 = 2 << 20;

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
    pub fn open(path: impl AsRef<Path>) -> Result<CaptureReader, CaptureError> {
        let path = path.as_ref().to_path_buf();
        let mut file = File::open(&path).map_err(|source| CaptureError::Open {
            path: path.clone(),
            source,
        })?;
        let io_err = |source| CaptureError::Io {
            path: path.clone(),
            offset: 0,
            source,
        };
        let mut head = [0u8; 2];
        let n = read_up_to(&mut file, &mut head).map_err(io_err)?;
        let gzip = n == 2 && head == [0x1f, 0x8b];
        let meta = file.metadata().map_err(io_err)?;
        if !gzip && meta.is_file() && meta.len() > 0 {
            return CaptureReader::start(
                path,
                Source::Mapped {
                    file,
                    len: meta.len(),
                },
                false,
            );
        }
        let peeked = io::Cursor::new(head[..n].to_vec());
        let src: Box<dyn Read + Send> = if gzip {
            Box::new(flate2::bufread::MultiGzDecoder::new(
                io::BufReader::with_capacity(CHUNK, peeked.chain(file)),
            ))
        } else {
            Box::new(peeked.chain(file))
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
                r.fill(MAX_RECORD.min(1 << 16))?;
                let avail = &r.buf.as_slice()[r.start..r.end];
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

    /// Makes at least `want` bytes available from `start`, unless the file
    /// ends first.
    fn fill(&mut self, want: usize) -> Result<(), CaptureError> {
        if self.end - self.start >= want || self.eof {
            return Ok(());
        }
        if let Source::Mapped { file, len } = &self.src {
            // Map a new window from the 2 MiB boundary at or before `pos`.
            let base = self.pos - self.pos % WINDOW_ALIGN;
            let skip = (self.pos - base) as usize;
            let left = len - base;
            let size = (skip + want).max(WINDOW) as u64;
            let size = size.min(left) as usize;
            let map = unsafe {
                // SAFETY: the mapping is read-only and nothing in this
                // process writes the file. Another process truncating it
                // meanwhile ends this one with SIGBUS (documented on `open`).
                memmap2::MmapOptions::new().offset(base).len(size).map(file)
            }
            .map_err(|source| CaptureError::Io {
                path: self.path.clone(),
                offset: self.pos,
                source,
            })?;
            // No MADV_SEQUENTIAL: it marks the pages as used once, so the
            // host's reclaim splits and drops them sooner, and it made a
            // cold read of a 1.18 GB capture take 2.0 s instead of 0.4 s.
            self.buf = Bytes::Mapped(Arc::new(map));
            self.start = skip;
            self.end = size;
            self.eof = base + size as u64 == *len;
            return Ok(());
        }
        let Source::Stream(src) = &mut self.src else {
            unreachable!("mapped sources return above");
        };
        let have = self.end - self.start;
        let Bytes::Read(cur) = &mut self.buf else {
            unreachable!("a stream reads into buffers");
        };
        let buf = match Arc::get_mut(cur) {
            Some(b) => {
                if self.start > 0 {
                    b.bytes.copy_within(self.start..self.end, 0);
                }
                &mut b.bytes
            }
            None => {
                // Batches still read the current buffer: carry the unread
                // tail over into another one.
                let mut bytes = self.pool.take(CHUNK.max(want));
                bytes[..have].copy_from_slice(&cur.bytes[self.start..self.end]);
                *cur = Arc::new(Buffer {
                    bytes,
                    pool: Arc::downgrade(&self.pool),
                });
                &mut Arc::get_mut(cur).expect("just made").bytes
            }
        };
        self.end = have;
        self.start = 0;
        if buf.len() < want {
            buf.resize(want.next_power_of_two(), 0);
        }
        while self.end < want {
            if self.end == buf.len() {
                let n = buf.len();
                buf.resize(n * 2, 0);
            }
            match src.read(&mut buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // flate2 reports a deflate stream that stops before its
                // end this way: what was decompressed before is good, so
                // it is a cut file like any other.
                Err(e) if self.gzip && e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.eof = true;
                    self.gzip_truncated = true;
                    break;
                }
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
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
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
                    self.frames += 1;
                    self.first_ts.get_or_insert(ts_ns);
                    return Ok(Next::Frame(RawFrame {
                        ts_ns,
                        wire_len,
                        data: &self.buf.as_slice()[s..s + data_len],
                        link,
                        offset,
                    }));
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
        self.fill(need.max(have + 1).max(CHUNK))?;
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
                Step::Frame {
                    data_at,
                    data_len,
                    record_len,
                    ts_ns,
                    wire_len,
                    link,
                } => {
                    if slots.capacity() == 0 {
                        // Roughly the records left in this buffer.
                        let guess = (have / record_len.max(64)).clamp(1, BATCH_FRAMES);
                        slots.reserve_exact(guess);
                    }
                    slots.push(Slot {
                        ts_ns,
                        offset: self.pos,
                        wire_len,
                        data_at: self.start + data_at,
                        data_len,
                        link,
                    });
                    self.advance(record_len);
                    self.frames += 1;
                    self.first_ts.get_or_insert(ts_ns);
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
                            // A time past 2^64 ns (year 2554) is corrupt; it
                            // reads as the largest time rather than wrapping
                            // around to a plausible-looking one.
                            ts_ns: u64::try_from(
                                u128::from(raw_ts) * u128::from(iface.ts_num)
                                    / u128::from(iface.ts_den),
                            )
                            .unwrap_or(u64::MAX),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::write::{CaptureFormat, CaptureWriter};

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
    fn a_gzip_stream_cut_short_is_a_cut_at_a_decompressed_offset() {
        let (path, bytes) = two_frames(CaptureFormat::Pcap, "gzcut.pcap");
        let first_record_end = 24 + 16 + 100;
        let gz = path.with_extension("pcap.gz");
        // Cut inside the second record, and exactly at its start: the
        // compressed stream is damaged either way.
        for flush_at in [first_record_end + 30, first_record_end] {
            // The compressed bytes up to the flush decode to exactly
            // `flush_at` bytes; what follows is lost.
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, &bytes[..flush_at]).unwrap();
            std::io::Write::flush(&mut e).unwrap();
            std::fs::write(&gz, e.get_ref()).unwrap();
            for batches in [false, true] {
                let mut r = CaptureReader::open(&gz).unwrap();
                let (frames, end) = if batches {
                    let mut n = 0;
                    loop {
                        match r.next_batch().unwrap() {
                            NextBatch::Batch(b) => n += b.len(),
                            NextBatch::Cut { offset } => break (n, Some(offset)),
                            NextBatch::End => break (n, None),
                        }
                    }
                } else {
                    assert!(
                        matches!(r.next_frame().unwrap(), Next::Frame(f) if f.data == [0xaa; 100])
                    );
                    match r.next_frame().unwrap() {
                        Next::Cut { offset } => (1, Some(offset)),
                        _ => (1, None),
                    }
                };
                assert_eq!(frames, 1, "flush at {flush_at}");
                assert_eq!(end, Some(first_record_end as u64), "flush at {flush_at}");
                assert!(r.gzip_truncated() && r.is_gzip());
            }
        }
        // The whole stream: no cut.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &bytes).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        let mut r = CaptureReader::open(&gz).unwrap();
        let mut n = 0;
        while let Next::Frame(_) = r.next_frame().unwrap() {
            n += 1;
        }
        assert_eq!(n, 2);
        assert!(!r.gzip_truncated());
    }

    #[test]
    fn batches_and_single_frames_read_the_same_and_mix() {
        let path = tmp("mix.pcapng");
        let mut w = CaptureWriter::create(&path, CaptureFormat::PcapNg, 0, "x").unwrap();
        for i in 0..30_000u32 {
            w.write(
                u64::from(i),
                &vec![(i % 256) as u8; 60 + (i as usize % 1500)],
            )
            .unwrap();
        }
        w.finish().unwrap();
        let mut all = Vec::new();
        let mut r = CaptureReader::open(&path).unwrap();
        while let Next::Frame(f) = r.next_frame().unwrap() {
            all.push((f.ts_ns, f.offset, f.data.to_vec()));
        }
        assert_eq!(all.len(), 30_000);
        // Mapped or streamed, batches interleaved with single frames, and
        // batches kept alive while the reader goes on.
        for streamed in [false, true] {
            let mut r = if streamed {
                let f = File::open(&path).unwrap();
                CaptureReader::from_reader(path.clone(), Box::new(f), false).unwrap()
            } else {
                CaptureReader::open(&path).unwrap()
            };
            let mut got = Vec::new();
            let mut kept = Vec::new();
            while let Next::Frame(f) = r.next_frame().unwrap() {
                got.push((f.ts_ns, f.offset, f.data.to_vec()));
                match r.next_batch().unwrap() {
                    NextBatch::Batch(b) => {
                        assert_eq!(b.first_number(), got.len() as u64 + 1);
                        assert_eq!(b.capture_first_ts(), 0);
                        got.extend(b.iter().map(|f| (f.ts_ns, f.offset, f.data.to_vec())));
                        kept.push(b);
                    }
                    _ => break,
                }
            }
            assert_eq!(got, all, "streamed: {streamed}");
            assert_eq!(r.frames(), 30_000);
            // The kept batches still read their own bytes: no buffer was
            // reused while a batch held it.
            assert!(kept.len() >= 5, "{} batches", kept.len());
            for b in &kept {
                for (i, f) in b.iter().enumerate() {
                    let k = b.first_number() as usize - 1 + i;
                    assert_eq!(
                        (f.ts_ns, f.offset, f.data),
                        (all[k].0, all[k].1, &all[k].2[..])
                    );
                }
            }
        }
        std::fs::remove_file(&path).unwrap();
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
        let e = CaptureReader::open(&path).err().unwrap();
        assert!(matches!(e, CaptureError::NotACapture { .. }));
        assert!(e.to_string().contains("(the file is empty)"), "{e}");
        std::fs::write(&path, b"\x0a\x0d").unwrap();
        let e = CaptureReader::open(&path).err().unwrap();
        assert!(e.to_string().contains("(only 2 bytes: 0a 0d)"), "{e}");
    }
}
