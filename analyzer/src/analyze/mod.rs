//! # `roce-pcap analyze`: sequence analysis of RoCE captures
//!
//! What tcptrace did for TCP, for RoCEv2: per request flow conversations,
//! PSN gaps, retransmissions and go-back-N episodes with their causes, NAKs,
//! RNR NAKs, ACK round-trip times, ECN and CNPs, ICRC checks, PFC pauses,
//! and the view across the captures of a bond's slaves.
//!
//! ```text
//!  slave0.pcap ─┐  reader + decoder threads ┌─ flow table ── Flow (per requester → responder QP)
//!  slave1.pcap ─┼─ decode → RoceEvent ─merge─┤                 sequence, messages, ACKs/NAKs, slaves, CNPs
//!  ...          ┘  PFC + file counters       └─ response-only records
//!                         │                                 │
//!                         └────────── report builder ───────┴──▶ Report { files, qps, pfc, lag, findings }
//!                                                                  └─▶ export: table | json | csv; plots
//! ```
//!
//! The files, in the order a frame meets them:
//!
//! | file | holds |
//! |---|---|
//! | `options.rs` | [`AnalyzeOptions`] and its typed values ([`LinkSpeed`], [`PathMtu`]) |
//! | `capture_merge.rs` | reading the captures on the decoder threads, merged into one stream by time |
//! | `roce_event.rs` | the small summary of one RoCE frame that crosses from a decoder to the merge |
//! | `flow_table.rs` | the flow table: every event to its request flow, responses paired with requests |
//! | `flow/` | one flow's state: PSN sequence, message assembly, ACK/NAK handling, mirror copies, bond slaves |
//! | `pfc.rs` | PFC and PAUSE accounting per file, sender and priority |
//! | `quantiles.rs`, `series.rs` | bounded percentiles, and time series for plots |
//! | `interval.rs` | summaries of each interval while a capture streams in (`--interval`) |
//! | `report_builder.rs` | the finished flow table and file counters into a [`Report`] |
//! | `model.rs` | [`Report`], the data model: the JSON interface, what exporters and plots read |
//! | `findings.rs` | rules over the finished report, one sentence each |
//! | `setup.rs` | connection set-up (CM REQ/REP/RTU, perftest's TCP keys), joined to the flows it connected |
//! | `telemetry.rs` | in-band telemetry (HPCC's INT): per flow and hop, the queue and the link utilisation the records show |
//!
//! The `analyze` subcommand itself (flags, exporters, plots and HTML put
//! together) is [`crate::cli::analyze`], above all of them.
//!
//! Memory grows with the number of flows, never with the number of
//! packets: every per-flow queue, list and percentile set is capped (the
//! flow module) and so is every time series ([`series`]).
//!
//! ```no_run
//! use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
//! let a = analyze_files(&["slave0.pcap", "slave1.pcap"], &AnalyzeOptions::default()).unwrap();
//! for qp in &a.report.qps {
//!     println!("{} -> {} QP {:#x}: {} retransmitted", qp.src, qp.dst, qp.dqpn, qp.retransmitted_packets);
//! }
//! ```

mod capture_merge;
mod findings;
mod flow;
mod flow_table;
pub mod interval;
pub mod model;
mod options;
mod pfc;
mod qp_figures;
mod quantiles;
mod report_builder;
mod roce_event;
pub mod series;
mod setup;
mod telemetry;
/// The model's old path (`analyze::report`), kept while tests and scripts
/// written against it move to [`model`].
#[doc(hidden)]
pub use self::model as report;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub use interval::{IntervalFlow, IntervalReport};
pub use model::Report;
pub use options::{AnalyzeOptions, LinkSpeed, OptionError, PathMtu};
pub use quantiles::{Quantiles, Summary};
pub(crate) use report_builder::mac_text;

use roce_codec::ParseOptions;

use roce_capture::read::{CaptureError, input_name, is_stdin};

/// The most files analyzed together: frames are numbered by (file, frame)
/// with a 16-bit file index.
pub const MAX_FILES: usize = u16::MAX as usize;

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error("no input files")]
    NoInput,
    #[error("{count} files: at most {MAX_FILES} can be analyzed together")]
    TooManyFiles { count: usize },
    #[error("- (standard input) is given {count} times: it can be read once")]
    StdinTwice { count: usize },
}

/// Time series of one flow, for plots.
#[derive(Debug, Clone)]
pub struct FlowSeries {
    /// Index into `report.qps` of the unfiltered report.
    pub qp: usize,
    pub label: String,
    pub originals: series::Points,
    pub retransmissions: series::Points,
    pub acks: series::Points,
    pub naks: series::Points,
    /// Goodput bytes per bin.
    pub goodput: series::Bins,
}

/// Pause intervals of one (file, sender, priority).
#[derive(Debug, Clone)]
pub struct PauseSeries {
    pub file: String,
    pub src_mac: String,
    pub priority: Option<u8>,
    pub intervals: Vec<(u64, u64)>,
}

/// Everything the plots draw.
#[derive(Debug, Clone, Default)]
pub struct SeriesSet {
    pub flows: Vec<FlowSeries>,
    /// RoCE payload bytes per bin, per file.
    pub files: Vec<(String, series::Bins)>,
    pub pauses: Vec<PauseSeries>,
    pub ecn_ce: series::Bins,
    pub cnps: series::Bins,
}

/// The result of [`analyze_files`].
#[derive(Debug, Clone)]
pub struct Analysis {
    pub report: Report,
    /// Present when [`AnalyzeOptions::series`] was set.
    pub series: Option<SeriesSet>,
    /// Warnings the user must see (files cut mid-record).
    pub warnings: Vec<String>,
    /// Heap bytes the flow table held at the end (flow state without time
    /// series): grows with flows, not with packets.
    pub flow_state_bytes: usize,
}

impl Analysis {
    pub fn outcome(&self) -> crate::Outcome {
        if self.warnings.is_empty() {
            crate::Outcome::Clean
        } else {
            crate::Outcome::Warned
        }
    }
}

/// Analyzes captures (typically one per bond slave) as one merged stream.
pub fn analyze_files<P: AsRef<Path>>(
    paths: &[P],
    opts: &AnalyzeOptions,
) -> Result<Analysis, AnalyzeError> {
    analyze(paths, opts, None)
}

/// As [`analyze_files`], and hands `out` a summary of every `every_ns` of
/// capture time as the frames stream in (see [`interval`]).
pub fn analyze_files_every<P: AsRef<Path>>(
    paths: &[P],
    opts: &AnalyzeOptions,
    every_ns: u64,
    out: &mut dyn FnMut(&IntervalReport),
) -> Result<Analysis, AnalyzeError> {
    analyze(
        paths,
        opts,
        Some(interval::IntervalTracker::new(every_ns, opts.qp, out)),
    )
}

fn analyze<P: AsRef<Path>>(
    paths: &[P],
    opts: &AnalyzeOptions,
    mut intervals: Option<interval::IntervalTracker<'_>>,
) -> Result<Analysis, AnalyzeError> {
    if paths.is_empty() {
        return Err(AnalyzeError::NoInput);
    }
    if paths.len() > MAX_FILES {
        return Err(AnalyzeError::TooManyFiles { count: paths.len() });
    }
    let stdin = paths.iter().filter(|p| is_stdin(p.as_ref())).count();
    if stdin > 1 {
        return Err(AnalyzeError::StdinTwice { count: stdin });
    }
    let names: Vec<String> = paths.iter().map(|p| input_name(p.as_ref())).collect();
    let total_bytes: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let src_opts = capture_merge::MergeOptions {
        parse: ParseOptions {
            roce_v2_ports: opts.roce_ports,
            verify_icrc: true,
        },
        series: opts.series,
        threads: opts.threads,
    };
    let link_rate_bps = opts.link_speed.bits_per_second();
    let mut pfc: Vec<pfc::PfcFile> = (0..paths.len())
        .map(|_| pfc::PfcFile::new(link_rate_bps, opts.series))
        .collect();
    let flow_opts = flow::FlowOptions {
        dup_window_ns: opts.dup_window_ns,
        pmtu: opts.pmtu.map(PathMtu::bytes),
        series: opts.series,
        message_log: opts.message_log,
    };
    let mut table = flow_table::FlowTable::new(paths.len(), flow_opts);
    let mut setups = setup::SetupTable::default();
    let path_refs: Vec<&Path> = paths.iter().map(AsRef::as_ref).collect();
    let progress = Arc::new(AtomicU64::new(0));
    let bar = progress_bar(opts.progress, total_bytes);
    let mut stats = capture_merge::merge(
        &path_refs,
        &src_opts,
        Arc::clone(&progress),
        |ev| {
            if let Some(iv) = &mut intervals {
                iv.before(ev.ts_ns(), &table);
            }
            match ev {
                capture_merge::MergedEvent::Roce(e) => table.event(e),
                capture_merge::MergedEvent::IntHop(e) => table.int_hop(e),
                capture_merge::MergedEvent::Setup(e) => setups.event(e),
                capture_merge::MergedEvent::MacControl {
                    file,
                    frame,
                    ts_ns,
                    src,
                    ctl,
                } => pfc[usize::from(*file)].frame(*ts_ns, *src, ctl, *frame),
            }
        },
        || {
            if let Some(b) = &bar {
                b.set_position(progress.load(std::sync::atomic::Ordering::Relaxed));
            }
        },
    )?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    for (st, mut p) in stats.iter_mut().zip(pfc) {
        p.finish();
        st.pfc = p;
    }
    table.finish();
    if let Some(iv) = &mut intervals {
        iv.finish(&table);
    }
    let mut report = report_builder::build_report(report_builder::ReportInputs {
        table: &table,
        stats: &stats,
        names: &names,
        options: model::OptionsReport {
            link_speed_gbps: opts.link_speed.gbps(),
            roce_ports: opts.roce_ports.as_slice().to_vec(),
            dup_window_ns: opts.dup_window_ns,
            pmtu: opts.pmtu.map(PathMtu::bytes),
            qp_filter: opts.qp,
        },
    });
    setup::attach(&mut report, setups.finish());
    if let Some(q) = opts.qp {
        report
            .qps
            .retain(|f| f.dqpn == q || f.requester_qpn == Some(q));
        let keep: Vec<usize> = report.qps.iter().map(|f| f.id).collect();
        report
            .findings
            .retain(|f| f.qp.is_none_or(|i| keep.contains(&i)));
        report.lag.qp_map.retain(|m| keep.contains(&m.qp));
    }
    let warnings = report
        .files
        .iter()
        .filter_map(|f| {
            f.cut_at_offset.map(|off| {
                if f.cut_in_gzip {
                    format!(
                        "{}: the gzip stream ends early, in the record at byte {off} of the decompressed stream; analyzed up to there",
                        f.file
                    )
                } else {
                    format!(
                        "{}: file is cut in the middle of the record at byte {off}; analyzed up to there",
                        f.file
                    )
                }
            })
        })
        .collect();
    let flow_state_bytes = table.flows.iter().map(|f| f.state_bytes()).sum::<usize>()
        + table.flows.capacity() * std::mem::size_of::<flow::Flow>();
    let series = opts
        .series
        .then(|| collect_series(&mut table, stats, &names, &report));
    Ok(Analysis {
        report,
        series,
        warnings,
        flow_state_bytes,
    })
}

fn progress_bar(wanted: bool, total: u64) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !wanted || !std::io::stderr().is_terminal() || total < (64 << 20) {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .expect("template is valid"),
    );
    Some(bar)
}

fn collect_series(
    table: &mut flow_table::FlowTable,
    stats: Vec<capture_merge::FileStats>,
    names: &[String],
    report: &Report,
) -> SeriesSet {
    let keep: Vec<usize> = report.qps.iter().map(|q| q.id).collect();
    let mut flows = Vec::new();
    for (i, f) in table.flows.iter_mut().enumerate() {
        if !keep.contains(&i) {
            continue;
        }
        let Some(s) = f.series.take() else { continue };
        let q = &report.qps.iter().find(|q| q.id == i).unwrap();
        flows.push(FlowSeries {
            qp: i,
            label: match q.requester_qpn {
                Some(r) => format!("{}:{:#x} -> {}:{:#x}", q.src, r, q.dst, q.dqpn),
                None => format!("{} -> {}:{:#x}", q.src, q.dst, q.dqpn),
            },
            originals: s.originals,
            retransmissions: s.retransmissions,
            acks: s.acks,
            naks: s.naks,
            goodput: s.goodput,
        });
    }
    let mut files = Vec::new();
    let mut pauses = Vec::new();
    for (st, name) in stats.into_iter().zip(names) {
        for ((src, prio), p) in st.pfc.prios {
            pauses.push(PauseSeries {
                file: name.clone(),
                src_mac: report_builder::mac_text(src),
                priority: (prio != pfc::PAUSE_8023X).then_some(prio),
                intervals: p.intervals.map(|i| i.iv).unwrap_or_default(),
            });
        }
        files.push((name.clone(), st.payload_bins.unwrap_or_default()));
    }
    SeriesSet {
        flows,
        files,
        pauses,
        ecn_ce: table.ce_bins.take().unwrap_or_default(),
        cnps: table.cnp_bins.take().unwrap_or_default(),
    }
}
