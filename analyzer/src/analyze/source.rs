//! Reading several captures at once and merging them into one stream.
//!
//! ```text
//!  file 0 ─┬─ part 1/2: decode frames 1,3,5..  ─▶ batches of Event ─┐ merge parts  ┐
//!          └─ part 2/2: decode frames 2,4,6..  ─▶ (bounded channel) ┘ by frame     ├─▶ merge files by
//!  file 1 ──── part 0/1: decode every frame    ─▶ ...                ───────────────┘   (ts, file, frame)
//!                                                                                          │
//!                                                 flow table, PFC (calling thread) ◀───────┘
//! ```
//! Each part is a [`CaptureReader`] of its own over the file: it frames
//! every record but decodes (and checks the ICRC of) only its share. By
//! default a file has one part: every part copies the whole file out of
//! the page cache (or decompresses it), and on a 2-core machine shared
//! with other work that doubled copy costs more than the decoding it
//! spreads (BENCHMARKS.md); `readers_per_file` asks for more. Parts send
//! small decoded events, never frame bytes, through channels of a few
//! batches, so memory stays flat however large the files are. The parts
//! of a file are merged back into frame order, then files are merged by
//! time with ties broken by file index and frame number: the merged order,
//! and everything computed from it, is the same on every run and for any
//! number of parts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use roce_codec::{MacControlRepr, ParseOptions};

use super::event::{Decoded, RoceEvent, decode};
use super::pfc::PfcFile;
use super::series::Bins;
use crate::capture::{CaptureError, CaptureReader, Next};

const BATCH: usize = 2048;
const CHANNEL_BATCHES: usize = 4;

/// What the readers learned about one file (summed over its parts).
#[derive(Debug, Clone, Default)]
pub(crate) struct FileStats {
    pub packets: u64,
    pub bytes: u64,
    pub roce_packets: u64,
    pub roce_bytes: u64,
    pub roce_payload_bytes: u64,
    pub roce_undecodable: u64,
    /// Frames cut by the snaplen (captured < wire length).
    pub truncated: u64,
    pub icrc_errors: u64,
    pub icrc_unchecked: u64,
    pub first_ts: Option<u64>,
    pub last_ts: Option<u64>,
    /// The file ends inside the record that starts here (an offset in the
    /// decompressed stream for a gzip file).
    pub cut_at: Option<u64>,
    /// The file is gzip-compressed and its compressed stream ends early.
    pub gzip_cut: bool,
    /// Filled on the merging thread, which sees MAC control frames in order.
    pub pfc: PfcFile,
    /// RoCE payload bytes over time (plots only).
    pub payload_bins: Option<Bins>,
}

impl FileStats {
    fn absorb(&mut self, o: FileStats) {
        self.packets += o.packets;
        self.bytes += o.bytes;
        self.roce_packets += o.roce_packets;
        self.roce_bytes += o.roce_bytes;
        self.roce_payload_bytes += o.roce_payload_bytes;
        self.roce_undecodable += o.roce_undecodable;
        self.truncated += o.truncated;
        self.icrc_errors += o.icrc_errors;
        self.icrc_unchecked += o.icrc_unchecked;
        let min = |a: Option<u64>, b: Option<u64>| a.into_iter().chain(b).min();
        self.first_ts = min(self.first_ts, o.first_ts);
        self.last_ts = self.last_ts.into_iter().chain(o.last_ts).max();
        self.cut_at = min(self.cut_at, o.cut_at);
        self.gzip_cut |= o.gzip_cut;
        if let Some(b) = o.payload_bins {
            let mine = self.payload_bins.get_or_insert_with(Bins::default);
            for (i, v) in b.values.iter().enumerate() {
                if *v > 0.0 {
                    mine.add(b.start_ns + i as u64 * b.width_ns, *v);
                }
            }
        }
    }
}

/// One decoded frame that matters to the analysis.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Event {
    Roce(RoceEvent),
    MacControl {
        file: u16,
        frame: u64,
        ts_ns: u64,
        src: [u8; 6],
        ctl: MacControlRepr,
    },
}

impl Event {
    fn key(&self) -> (u64, u16, u64) {
        match self {
            Event::Roce(e) => (e.ts_ns, e.file, e.frame),
            Event::MacControl {
                file, frame, ts_ns, ..
            } => (*ts_ns, *file, *frame),
        }
    }
}

enum Msg {
    Batch(Vec<Event>),
    Done(Box<FileStats>),
    Failed(CaptureError),
}

pub(crate) struct SourceOptions {
    pub parse: ParseOptions,
    pub series: bool,
    pub readers_per_file: Option<usize>,
}

/// Reads one part of a file: every record, decoding those whose 1-based
/// number is `part` modulo `parts`.
fn read_part(
    mut reader: CaptureReader,
    file: u16,
    (part, parts): (u64, u64),
    opts: &SourceOptions,
    tx: SyncSender<Msg>,
    progress: &AtomicU64,
) {
    let mut st = FileStats {
        payload_bins: opts.series.then(Bins::default),
        ..FileStats::default()
    };
    let mut batch = Vec::with_capacity(BATCH);
    let mut frame_no = 0u64;
    let mut last_offset = 0u64;
    loop {
        let raw = match reader.next_frame() {
            Ok(Next::Frame(raw)) => raw,
            Ok(Next::End) => break,
            Ok(Next::Cut { offset }) => {
                st.cut_at = Some(offset);
                st.gzip_cut = reader.gzip_truncated();
                break;
            }
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        };
        frame_no += 1;
        if frame_no % parts != part {
            continue;
        }
        st.packets += 1;
        st.bytes += raw.wire_len as u64;
        st.first_ts = Some(st.first_ts.map_or(raw.ts_ns, |t| t.min(raw.ts_ns)));
        st.last_ts = Some(st.last_ts.map_or(raw.ts_ns, |t| t.max(raw.ts_ns)));
        if raw.data.len() < raw.wire_len {
            st.truncated += 1;
        }
        let Ok(frame) = raw.decode(&opts.parse) else {
            continue;
        };
        let ev = match decode(&frame, file, frame_no, raw.ts_ns) {
            Decoded::Roce(ev) => {
                st.roce_packets += 1;
                st.roce_bytes += u64::from(ev.wire_len);
                st.roce_payload_bytes += u64::from(ev.payload_len);
                match ev.icrc_valid {
                    Some(false) => st.icrc_errors += 1,
                    None => st.icrc_unchecked += 1,
                    Some(true) => {}
                }
                if let Some(b) = &mut st.payload_bins {
                    b.add(ev.ts_ns, f64::from(ev.payload_len));
                }
                Event::Roce(ev)
            }
            Decoded::RoceUndecodable => {
                st.roce_packets += 1;
                st.roce_bytes += raw.wire_len as u64;
                st.roce_undecodable += 1;
                continue;
            }
            Decoded::MacControl { src, ctl } => Event::MacControl {
                file,
                frame: frame_no,
                ts_ns: raw.ts_ns,
                src,
                ctl,
            },
            Decoded::Other => continue,
        };
        batch.push(ev);
        if batch.len() == BATCH {
            let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
            if tx.send(Msg::Batch(full)).is_err() {
                return;
            }
            if part == 0 {
                progress.fetch_add(raw.offset - last_offset, Ordering::Relaxed);
                last_offset = raw.offset;
            }
        }
    }
    if !batch.is_empty() && tx.send(Msg::Batch(batch)).is_err() {
        return;
    }
    let _ = tx.send(Msg::Done(Box::new(st)));
}

/// One part's channel and the batch being drained.
struct Input {
    rx: Receiver<Msg>,
    path: PathBuf,
    batch: Vec<Event>,
    pos: usize,
    stats: Option<Box<FileStats>>,
}

impl Input {
    fn head(&self) -> Option<&Event> {
        self.batch.get(self.pos)
    }

    /// Moves to the next event.
    fn advance(&mut self) -> Result<(), CaptureError> {
        self.pos += 1;
        self.fill()
    }

    /// Fetches batches until `pos` is on an event or the part is done.
    fn fill(&mut self) -> Result<(), CaptureError> {
        while self.pos >= self.batch.len() && self.stats.is_none() {
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => {
                    self.batch = b;
                    self.pos = 0;
                }
                Ok(Msg::Done(s)) => self.stats = Some(s),
                Ok(Msg::Failed(e)) => return Err(e),
                // The part's thread panicked; report it rather than hang.
                Err(_) => {
                    return Err(CaptureError::Corrupt {
                        path: self.path.clone(),
                        offset: 0,
                        what: "reader thread ended unexpectedly".into(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// The parts of one file, merged back into frame order.
struct FileInput {
    parts: Vec<Input>,
    /// Index of the part whose head comes first in frame order.
    cur: Option<usize>,
}

impl FileInput {
    fn pick(&mut self) {
        self.cur = self
            .parts
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.head().map(|h| (h.key().2, i)))
            .min()
            .map(|(_, i)| i);
    }

    fn head(&self) -> Option<&Event> {
        self.cur.and_then(|i| self.parts[i].head())
    }

    fn advance(&mut self) -> Result<(), CaptureError> {
        if let Some(i) = self.cur {
            self.parts[i].advance()?;
        }
        self.pick();
        Ok(())
    }
}

/// Reads all `paths` in parallel and calls `sink` with every event in
/// merged time order. Returns the per-file statistics in input order (PFC
/// left to the caller).
pub(crate) fn merge(
    paths: &[&Path],
    opts: &SourceOptions,
    progress: Arc<AtomicU64>,
    mut sink: impl FnMut(&Event),
    mut tick: impl FnMut(),
) -> Result<Vec<FileStats>, CaptureError> {
    // Open everything first: a bad file fails before any work starts.
    let mut readers: Vec<Vec<CaptureReader>> = Vec::with_capacity(paths.len());
    for p in paths {
        let first = CaptureReader::open(p)?;
        let n = opts.readers_per_file.unwrap_or(1).max(1);
        let mut v = vec![first];
        for _ in 1..n {
            v.push(CaptureReader::open(p)?);
        }
        readers.push(v);
    }
    let threads: usize = readers.iter().map(Vec::len).sum();
    // One thread per part: parts block on their channels while the merge
    // waits for the slowest one, so a smaller pool could deadlock.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .thread_name(|i| format!("roce-pcap-reader-{i}"))
        .build()
        .map_err(|e| CaptureError::Corrupt {
            path: PathBuf::new(),
            offset: 0,
            what: format!("cannot start reader threads: {e}"),
        })?;
    pool.in_place_scope(|scope| {
        let mut files = Vec::with_capacity(readers.len());
        for (i, parts) in readers.into_iter().enumerate() {
            let n = parts.len() as u64;
            let mut inputs = Vec::with_capacity(parts.len());
            for (k, reader) in parts.into_iter().enumerate() {
                let (tx, rx) = sync_channel(CHANNEL_BATCHES);
                let progress = Arc::clone(&progress);
                let path = reader.path().to_path_buf();
                // Part k decodes the frames numbered k (mod n), 1-based.
                let part = (k as u64 + 1) % n;
                scope.spawn(move |_| read_part(reader, i as u16, (part, n), opts, tx, &progress));
                inputs.push(Input {
                    rx,
                    path,
                    batch: Vec::new(),
                    pos: 0,
                    stats: None,
                });
            }
            for input in &mut inputs {
                input.fill()?;
            }
            let mut f = FileInput {
                parts: inputs,
                cur: None,
            };
            f.pick();
            files.push(f);
        }
        let mut since_tick = 0u32;
        loop {
            // Linear scan: a handful of files (bond slaves) at most.
            let mut best: Option<(usize, (u64, u16, u64))> = None;
            for (i, f) in files.iter().enumerate() {
                if let Some(h) = f.head() {
                    let k = h.key();
                    if best.is_none_or(|(_, bk)| k < bk) {
                        best = Some((i, k));
                    }
                }
            }
            let Some((b, _)) = best else { break };
            sink(files[b].head().expect("picked a head"));
            files[b].advance()?;
            since_tick += 1;
            if since_tick == 65_536 {
                since_tick = 0;
                tick();
            }
        }
        Ok(files
            .into_iter()
            .map(|f| {
                let mut total = FileStats::default();
                for p in f.parts {
                    total.absorb(*p.stats.expect("every part ran to its end"));
                }
                total
            })
            .collect())
    })
}
