//! Reading several captures at once and merging them into one stream.
//!
//! ```text
//!  file 0 ─ reader thread ─ batches ─┐  decoded on the   ┌─▶ events of file 0, in frame order ─┐
//!  file 1 ─ reader thread ─ batches ─┼─▶ reader or a ────┼─▶ events of file 1, in frame order ─┼─▶ merge by
//!  ...                               ┘  shared helper    └─▶ ...                               ┘  (ts, file, frame)
//!                                       (decode, ICRC, small events)                                  │
//!                                                       flow table, PFC (calling thread) ◀────────────┘
//! ```
//! Each file has a reader thread that walks its records into batches
//! ([`roce_capture::pipeline`]); the reader, or a helper thread shared by all
//! files when one is free, turns every batch into small decoded events and
//! counters, never keeping frame bytes; each file's results come back in
//! frame order through a bounded queue, so memory stays flat however large
//! the files are. Files are merged by time with ties broken by file index
//! and frame number: the merged order, and everything computed from it, is
//! the same on every run and for any number of threads.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use roce_codec::{MacControlRepr, ParseOptions};

use super::model::FileReport;
use super::pfc::PfcFile;
use super::roce_event::{Decoded, RoceEvent, decode};
use super::series::Bins;
use super::setup::SetupEvent;
use super::telemetry::{IntHopEvent, hop_events};
use roce_capture::pipeline::{self, Item, Ordered};
use roce_capture::read::{CaptureError, CaptureReader, FrameBatch};

/// Batches each file may have read ahead of the merge, with one file;
/// shared out when there are more, so that the buffers held stay few.
const DEPTH: usize = 8;

/// What the decoders learned about one file.
#[derive(Debug, Clone, Default)]
pub(crate) struct FileStats {
    /// The file's row of the report as far as the decoders fill it: the
    /// frame counts, first and last times, where the file is cut. The
    /// report builder names it and adds the MAC-control counts and the
    /// duration.
    pub row: FileReport,
    /// Filled on the merging thread, which sees MAC control frames in order.
    pub pfc: PfcFile,
    /// RoCE payload bytes over time (plots only).
    pub payload_bins: Option<Bins>,
}

/// Adds what one batch counted (in a [`FileReport`] of its own) to its
/// file's row: sums, minimum and maximum, so the result does not depend on
/// the order batches are added in.
fn absorb(row: &mut FileReport, batch: &FileReport) {
    row.packets += batch.packets;
    row.bytes += batch.bytes;
    row.roce_packets += batch.roce_packets;
    row.roce_bytes += batch.roce_bytes;
    row.roce_payload_bytes += batch.roce_payload_bytes;
    row.roce_undecodable += batch.roce_undecodable;
    row.truncated_frames += batch.truncated_frames;
    row.icrc_errors += batch.icrc_errors;
    row.icrc_unchecked += batch.icrc_unchecked;
    row.first_ts_ns = row.first_ts_ns.into_iter().chain(batch.first_ts_ns).min();
    row.last_ts_ns = row.last_ts_ns.into_iter().chain(batch.last_ts_ns).max();
}

/// One decoded frame that matters to the analysis.
#[derive(Debug, Clone, Copy)]
pub(crate) enum MergedEvent {
    Roce(RoceEvent),
    /// A switch's record on the RoCE frame of the event before (in-band
    /// telemetry): one per record.
    IntHop(IntHopEvent),
    /// A connection set-up frame (CM MAD, perftest TCP).
    Setup(SetupEvent),
    MacControl {
        file: u16,
        frame: u64,
        ts_ns: u64,
        src: [u8; 6],
        ctl: MacControlRepr,
    },
}

impl MergedEvent {
    /// The frame's time.
    pub fn ts_ns(&self) -> u64 {
        self.key().0
    }

    fn key(&self) -> (u64, u16, u64) {
        match self {
            MergedEvent::Roce(e) => (e.ts_ns, e.file, e.frame),
            MergedEvent::IntHop(e) => (e.ts_ns, e.file, e.frame),
            MergedEvent::Setup(e) => (e.ts_ns, e.file, e.frame),
            MergedEvent::MacControl {
                file, frame, ts_ns, ..
            } => (*ts_ns, *file, *frame),
        }
    }
}

pub(crate) struct MergeOptions {
    pub parse: ParseOptions,
    pub series: bool,
    /// Decoding threads (readers and helpers); `None` is one per core.
    pub threads: Option<usize>,
}

/// The decoded events and counters of one batch.
struct DecodedBatch {
    events: Vec<MergedEvent>,
    counts: FileReport,
    end_offset: u64,
}

/// Decodes one batch of `file` (runs on a decoder thread).
fn decode_batch(b: &FrameBatch, file: u16, parse: &ParseOptions) -> DecodedBatch {
    let mut c = FileReport::default();
    let mut events = Vec::with_capacity(b.len());
    for (i, raw) in b.iter().enumerate() {
        let frame_no = b.first_number() + i as u64;
        c.packets += 1;
        c.bytes += raw.wire_len as u64;
        c.first_ts_ns = Some(c.first_ts_ns.map_or(raw.ts_ns, |t| t.min(raw.ts_ns)));
        c.last_ts_ns = Some(c.last_ts_ns.map_or(raw.ts_ns, |t| t.max(raw.ts_ns)));
        if raw.data.len() < raw.wire_len {
            c.truncated_frames += 1;
        }
        let Ok(frame) = raw.decode(parse) else {
            continue;
        };
        let count_roce = |c: &mut FileReport, ev: &RoceEvent| {
            c.roce_packets += 1;
            c.roce_bytes += u64::from(ev.wire_len);
            c.roce_payload_bytes += u64::from(ev.payload_len);
            match ev.icrc_valid {
                Some(false) => c.icrc_errors += 1,
                None => c.icrc_unchecked += 1,
                Some(true) => {}
            }
        };
        let ev = match decode(&frame, file, frame_no, raw.ts_ns) {
            Decoded::Roce(ev) => {
                count_roce(&mut c, &ev);
                events.push(MergedEvent::Roce(ev));
                events
                    .extend(hop_events(&frame, file, frame_no, raw.ts_ns).map(MergedEvent::IntHop));
                continue;
            }
            Decoded::CmMad(ev, setup) => {
                count_roce(&mut c, &ev);
                MergedEvent::Setup(*setup)
            }
            Decoded::Tcp(setup) => MergedEvent::Setup(*setup),
            Decoded::RoceUndecodable => {
                c.roce_packets += 1;
                c.roce_bytes += raw.wire_len as u64;
                c.roce_undecodable += 1;
                continue;
            }
            Decoded::MacControl { src, ctl } => MergedEvent::MacControl {
                file,
                frame: frame_no,
                ts_ns: raw.ts_ns,
                src,
                ctl,
            },
            Decoded::Other => continue,
        };
        events.push(ev);
    }
    DecodedBatch {
        events,
        counts: c,
        end_offset: b.end_offset(),
    }
}

/// One file's stream of decoded batches and the batch being drained.
struct FileInput {
    batches: Ordered<DecodedBatch>,
    batch: Vec<MergedEvent>,
    pos: usize,
    stats: FileStats,
    done: bool,
    /// Offset just past the last record received, for the progress bar.
    read_bytes: u64,
}

impl FileInput {
    fn head(&self) -> Option<&MergedEvent> {
        self.batch.get(self.pos)
    }

    /// Moves to the next event.
    fn advance(&mut self, progress: &AtomicU64) -> Result<(), CaptureError> {
        self.pos += 1;
        self.fill(progress)
    }

    /// Fetches batches until `pos` is on an event or the file is done.
    fn fill(&mut self, progress: &AtomicU64) -> Result<(), CaptureError> {
        while self.pos >= self.batch.len() && !self.done {
            match self.batches.recv()? {
                Item::Batch(b) => {
                    absorb(&mut self.stats.row, &b.counts);
                    // Bins fill in frame order, as they coarsen by what
                    // they have seen.
                    if let Some(bins) = &mut self.stats.payload_bins {
                        for e in &b.events {
                            if let MergedEvent::Roce(ev) = e {
                                bins.add(ev.ts_ns, f64::from(ev.payload_len));
                            }
                        }
                    }
                    progress.fetch_add(b.end_offset - self.read_bytes, Ordering::Relaxed);
                    self.read_bytes = b.end_offset;
                    self.batch = b.events;
                    self.pos = 0;
                }
                Item::End => self.done = true,
                Item::Cut { offset } => {
                    self.stats.row.cut_at_offset = Some(offset);
                    self.done = true;
                }
            }
        }
        Ok(())
    }
}

/// Reads all `paths` in parallel and calls `sink` with every event in
/// merged time order. Returns the per-file statistics in input order (PFC
/// left to the caller).
pub(crate) fn merge(
    paths: &[&Path],
    opts: &MergeOptions,
    progress: Arc<AtomicU64>,
    mut sink: impl FnMut(&MergedEvent),
    mut tick: impl FnMut(),
) -> Result<Vec<FileStats>, CaptureError> {
    // Open everything first: a bad file fails before any work starts.
    let mut readers: Vec<CaptureReader> = Vec::with_capacity(paths.len());
    for p in paths {
        readers.push(CaptureReader::open(p)?);
    }
    let threads = opts
        .threads
        .unwrap_or_else(pipeline::default_threads)
        .max(1);
    let depth = (DEPTH / readers.len()).max(2);
    let parse = opts.parse;
    let mut stats = pipeline::with_decoders(threads, |d| {
        let mut files = Vec::with_capacity(readers.len());
        for (i, reader) in readers.iter_mut().enumerate() {
            let file = i as u16;
            let batches = d.read(reader, depth, move |b: &FrameBatch| {
                decode_batch(b, file, &parse)
            });
            files.push(FileInput {
                batches,
                batch: Vec::new(),
                pos: 0,
                stats: FileStats {
                    payload_bins: opts.series.then(Bins::default),
                    ..FileStats::default()
                },
                done: false,
                read_bytes: 0,
            });
        }
        for f in &mut files {
            f.fill(&progress)?;
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
            files[b].advance(&progress)?;
            since_tick += 1;
            if since_tick == 65_536 {
                since_tick = 0;
                tick();
            }
        }
        Ok::<_, CaptureError>(files.into_iter().map(|f| f.stats).collect::<Vec<_>>())
    })?;
    for (st, r) in stats.iter_mut().zip(&readers) {
        st.row.cut_in_gzip = st.row.cut_at_offset.is_some() && r.gzip_truncated();
    }
    Ok(stats)
}
