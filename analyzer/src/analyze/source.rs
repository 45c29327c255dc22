//! Reading several captures at once and merging them into one stream.
//!
//! ```text
//!  file 0 ──reader thread: decode, per-file counters, PFC──▶ batches of RoceEvent ─┐
//!  file 1 ──reader thread ─────────────────────────────────▶ (bounded channel)   ─┼─▶ k-way merge
//!  ...                                                                             ─┘   by (ts, file, frame)
//!                                                                                        │
//!                                                                   flow table ◀─────────┘ (calling thread)
//! ```
//! Each reader sends small decoded events, never frame bytes, through a
//! channel of a few batches, so memory stays flat however large the files
//! are. Ties in time are broken by file index and then frame number, so the
//! merged order, and everything computed from it, is the same on every run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use roce_codec::ParseOptions;

use super::event::{Decoded, RoceEvent, decode};
use super::pfc::PfcFile;
use super::series::Bins;
use crate::capture::{CaptureError, CaptureReader, Next};

const BATCH: usize = 2048;
const CHANNEL_BATCHES: usize = 4;

/// What one reader learned about its file.
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
    /// The file ends inside the record that starts here.
    pub cut_at: Option<u64>,
    pub pfc: PfcFile,
    /// RoCE payload bytes over time (plots only).
    pub payload_bins: Option<Bins>,
}

enum Msg {
    Batch(Vec<RoceEvent>),
    Done(Box<FileStats>),
    Failed(CaptureError),
}

pub(crate) struct SourceOptions {
    pub parse: ParseOptions,
    pub link_rate_bps: u64,
    pub series: bool,
}

fn read_file(
    mut reader: CaptureReader,
    file: u16,
    opts: &SourceOptions,
    tx: SyncSender<Msg>,
    progress: &AtomicU64,
) {
    let mut st = FileStats {
        pfc: PfcFile::new(opts.link_rate_bps, opts.series),
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
                break;
            }
            Err(e) => {
                let _ = tx.send(Msg::Failed(e));
                return;
            }
        };
        frame_no += 1;
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
        match decode(&frame, file, frame_no, raw.ts_ns) {
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
                batch.push(ev);
                if batch.len() == BATCH {
                    let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                    if tx.send(Msg::Batch(full)).is_err() {
                        return;
                    }
                    progress.fetch_add(raw.offset - last_offset, Ordering::Relaxed);
                    last_offset = raw.offset;
                }
            }
            Decoded::RoceUndecodable => {
                st.roce_packets += 1;
                st.roce_bytes += raw.wire_len as u64;
                st.roce_undecodable += 1;
            }
            Decoded::MacControl { src, ctl } => st.pfc.frame(raw.ts_ns, src, &ctl, frame_no),
            Decoded::Other => {}
        }
    }
    st.pfc.finish();
    if !batch.is_empty() && tx.send(Msg::Batch(batch)).is_err() {
        return;
    }
    let _ = tx.send(Msg::Done(Box::new(st)));
}

/// One input of the merge: its channel and the batch being drained.
struct Input {
    rx: Receiver<Msg>,
    batch: std::vec::IntoIter<RoceEvent>,
    head: Option<RoceEvent>,
    stats: Option<Box<FileStats>>,
}

impl Input {
    /// Makes `head` the next event, or leaves it `None` at the end.
    fn advance(&mut self) -> Result<(), CaptureError> {
        loop {
            if let Some(ev) = self.batch.next() {
                self.head = Some(ev);
                return Ok(());
            }
            self.head = None;
            if self.stats.is_some() {
                return Ok(());
            }
            match self.rx.recv() {
                Ok(Msg::Batch(b)) => self.batch = b.into_iter(),
                Ok(Msg::Done(s)) => {
                    self.stats = Some(s);
                    return Ok(());
                }
                Ok(Msg::Failed(e)) => return Err(e),
                // The reader panicked; report it rather than hang.
                Err(_) => {
                    return Err(CaptureError::Corrupt {
                        path: PathBuf::new(),
                        offset: 0,
                        what: "reader thread ended unexpectedly".into(),
                    });
                }
            }
        }
    }
}

/// Reads all `readers` in parallel and calls `sink` with every RoCE event
/// in merged time order. Returns the per-file statistics in input order.
pub(crate) fn merge(
    readers: Vec<CaptureReader>,
    opts: &SourceOptions,
    progress: Arc<AtomicU64>,
    mut sink: impl FnMut(&RoceEvent),
    mut tick: impl FnMut(),
) -> Result<Vec<FileStats>, CaptureError> {
    let n = readers.len();
    // One thread per file: the readers block on their channels while the
    // merge waits for the slowest file, so a smaller pool could deadlock.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n.max(1))
        .thread_name(|i| format!("roce-pcap-reader-{i}"))
        .build()
        .map_err(|e| CaptureError::Corrupt {
            path: PathBuf::new(),
            offset: 0,
            what: format!("cannot start reader threads: {e}"),
        })?;
    pool.in_place_scope(|scope| {
        let mut inputs = Vec::with_capacity(n);
        for (i, reader) in readers.into_iter().enumerate() {
            let (tx, rx) = sync_channel(CHANNEL_BATCHES);
            let progress = Arc::clone(&progress);
            scope.spawn(move |_| read_file(reader, i as u16, opts, tx, &progress));
            inputs.push(Input {
                rx,
                batch: Vec::new().into_iter(),
                head: None,
                stats: None,
            });
        }
        for input in &mut inputs {
            input.advance()?;
        }
        let mut since_tick = 0u32;
        loop {
            // Linear scan: a handful of files (bond slaves) at most.
            let mut best: Option<usize> = None;
            for (i, input) in inputs.iter().enumerate() {
                if let Some(h) = &input.head {
                    let better = match best {
                        None => true,
                        Some(b) => {
                            let bh = inputs[b].head.as_ref().unwrap();
                            (h.ts_ns, h.file, h.frame) < (bh.ts_ns, bh.file, bh.frame)
                        }
                    };
                    if better {
                        best = Some(i);
                    }
                }
            }
            let Some(b) = best else { break };
            let ev = inputs[b].head.take().unwrap();
            sink(&ev);
            inputs[b].advance()?;
            since_tick += 1;
            if since_tick == 65_536 {
                since_tick = 0;
                tick();
            }
        }
        Ok(inputs
            .into_iter()
            .map(|i| *i.stats.expect("every input ran to its end"))
            .collect())
    })
}
