//! # `roce-pcap analyze`: sequence analysis of RoCE captures
//!
//! What tcptrace did for TCP, for RoCEv2: per request flow conversations,
//! PSN gaps, retransmissions and go-back-N episodes with their causes, NAKs,
//! RNR NAKs, ACK round-trip times, ECN and CNPs, ICRC checks, PFC pauses,
//! and the view across the captures of a bond's slaves.
//!
//! ```text
//!  slave0.pcap ─┐  reader + decoder threads ┌─ flow table ── Flow (per requester → responder QP)
//!  slave1.pcap ─┼─ decode → RoceEvent ─merge─┤                 sequence, messages, ACK RTT, CNPs
//!  ...          ┘  PFC + file counters       └─ response-only records
//!                         │                                 │
//!                         └──────────── build ──────────────┴──▶ Report { files, qps, pfc, lag, findings }
//!                                                                  └─▶ table | json | csv | plots
//! ```
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

mod build;
pub mod cli;
mod event;
mod findings;
mod flow;
mod pfc;
mod quantiles;
pub mod report;
pub mod series;
mod source;
pub mod synth;
mod table;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub use quantiles::{Quantiles, Summary};
pub use report::Report;

use roce_codec::{ParseOptions, PortSet};

use roce_capture::read::CaptureError;

/// How to analyze.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Link speed for converting pause quanta to time.
    pub link_speed_gbps: f64,
    /// UDP destination ports decoded as RoCEv2 besides 4791.
    pub roce_ports: Vec<u16>,
    /// Identical frames closer than this are mirror-port copies.
    pub dup_window_ns: u64,
    /// The path MTU, when known; otherwise learned per flow from FIRST and
    /// MIDDLE packets.
    pub pmtu: Option<u32>,
    /// Keep only flows whose responder or requester QPN is this.
    pub qp: Option<u32>,
    /// Collect time series for plots.
    pub series: bool,
    /// Show a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
    /// Threads that decode: each file's reader thread decodes when the
    /// `threads - 1` helper threads (shared by all files) are busy; `None`
    /// is one per core, up to 16. The result is the same for any value.
    pub threads: Option<usize>,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            link_speed_gbps: 100.0,
            roce_ports: Vec::new(),
            dup_window_ns: 10_000,
            pmtu: None,
            qp: None,
            series: false,
            progress: false,
            threads: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    #[error(transparent)]
    Capture(#[from] CaptureError),
    #[error("{flag}: {message}")]
    Option { flag: &'static str, message: String },
    #[error("no input files")]
    NoInput,
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
    if paths.is_empty() {
        return Err(AnalyzeError::NoInput);
    }
    // 1 Mb/s and up: below that a pause of 65535 quanta lasts longer than
    // any clock here counts, and no RoCE link is that slow.
    if !(opts.link_speed_gbps >= 0.001 && opts.link_speed_gbps <= 1e6) {
        return Err(AnalyzeError::Option {
            flag: "--link-speed",
            message: format!(
                "{} is not a link speed in Gb/s (0.001 to 1000000)",
                opts.link_speed_gbps
            ),
        });
    }
    if let Some(m) = opts.pmtu {
        if ![256, 512, 1024, 2048, 4096].contains(&m) {
            return Err(AnalyzeError::Option {
                flag: "--pmtu",
                message: format!("{m} is not an IB path MTU (256, 512, 1024, 2048, 4096)"),
            });
        }
    }
    let roce_v2_ports =
        crate::flags::roce_port_set(&opts.roce_ports).ok_or_else(|| AnalyzeError::Option {
            flag: "--roce-port",
            message: format!("at most {} ports besides 4791", PortSet::MAX - 1),
        })?;
    if paths.len() > usize::from(u16::MAX) {
        return Err(AnalyzeError::Option {
            flag: "FILE",
            message: "too many files".into(),
        });
    }
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.as_ref().display().to_string())
        .collect();
    let total_bytes: u64 = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let src_opts = source::SourceOptions {
        parse: ParseOptions {
            roce_v2_ports,
            verify_icrc: true,
        },
        series: opts.series,
        threads: opts.threads,
    };
    let link_rate_bps = (opts.link_speed_gbps * 1e9).round() as u64;
    let mut pfc: Vec<pfc::PfcFile> = (0..paths.len())
        .map(|_| pfc::PfcFile::new(link_rate_bps, opts.series))
        .collect();
    let flow_opts = flow::FlowOptions {
        dup_window_ns: opts.dup_window_ns,
        pmtu: opts.pmtu,
        series: opts.series,
    };
    let mut table = table::Table::new(paths.len(), flow_opts);
    let path_refs: Vec<&Path> = paths.iter().map(AsRef::as_ref).collect();
    let progress = Arc::new(AtomicU64::new(0));
    let bar = progress_bar(opts.progress, total_bytes);
    let mut stats = source::merge(
        &path_refs,
        &src_opts,
        Arc::clone(&progress),
        |ev| match ev {
            source::Event::Roce(e) => table.event(e),
            source::Event::MacControl {
                file,
                frame,
                ts_ns,
                src,
                ctl,
            } => pfc[usize::from(*file)].frame(*ts_ns, *src, ctl, *frame),
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
    let mut report = build::build(build::BuildInput {
        table: &table,
        stats: &stats,
        names: &names,
        options: report::OptionsReport {
            link_speed_gbps: opts.link_speed_gbps,
            roce_ports: roce_v2_ports.as_slice().to_vec(),
            dup_window_ns: opts.dup_window_ns,
            pmtu: opts.pmtu,
            qp_filter: opts.qp,
        },
    });
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
    table: &mut table::Table,
    stats: Vec<source::FileStats>,
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
                Some(r) => format!("{}:{:#x}->{}:{:#x}", q.src, r, q.dst, q.dqpn),
                None => format!("{}->{}:{:#x}", q.src, q.dst, q.dqpn),
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
                src_mac: build::mac(src),
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
