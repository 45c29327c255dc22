//! # roce-pcap
//!
//! Reads pcap/pcapng captures (plain or gzip) and turns them into decoded
//! RoCE frames through `roce-codec`, the same codec the simulator writes its
//! captures with; then analyzes, reports and plots them.
//!
//! ```text
//!  capture ──▶ pipeline (reader + decoder threads, frame order kept) ──┬─▶ dissect: one line / JSON object per frame
//!  (pcap, pcapng, gzip)                                                └─▶ analyze ──▶ Report ──┬─▶ export: table | json | csv
//!                                                                                              └─▶ plot: PNG + SVG
//! ```
//!
//! Capture files are read through `roce-capture` ([`roce_capture::read`],
//! [`roce_capture::pipeline`]), which the simulator shares for writing them.
//!
//! | module | holds |
//! |---|---|
//! | [`flags`] | the command-line flags the subcommands share, checked (errors name the flag) before the library sees typed values |
//! | [`inputs`] | what an input is (a capture, `-`, a directory of captures, a rocesim run directory) and the captures it stands for |
//! | [`dissect`] | `roce-pcap dissect`: the driver, its CLI, the text line and the JSON keys of a frame |
//! | [`analyze`] | per-flow sequence analysis, PFC, LAG balance, findings; the [`analyze::model`] of a report |
//! | [`export`] | the exporters of a report, one trait and one file per `--format` |
//! | [`plot`] | the pictures of an analysis, and of a comparison |
//! | [`compare`] | `roce-pcap compare`: two analyses joined flow by flow, slave by slave, priority by priority |
//! | [`html`] | self-contained HTML reports of `analyze` and `compare` |
//! | [`infer`] | `roce-pcap infer`: a rocesim scenario read off an analysis, what was assumed said in it |
//! | [`cli`] | the front-ends of `analyze` and `compare`, which write through export, plot and html |
//! | `output` | an output file written whole or not at all (renamed into place) |
//!
//! ## One vocabulary with rocesim
//!
//! The report's rows keep their JSON shape (`qps[]`, epoch times, `naks` by
//! syndrome), and [`analyze::Report::qp_figures`] states each request flow
//! in the per-QP vocabulary `rocesim` reports in too,
//! [`roce_capture::figures::QpFigures`]: times in ns since the first frame
//! of all the captures analyzed together, counts from the requester's side.
//! What each figure is in `roce-pcap`:
//!
//! | figure | from the flow's report row ([`analyze::model::QpReport`]) |
//! |---|---|
//! | `key` | `src`, `dst` and `dqpn` (the responder's QPN, the DestQP of the requests) |
//! | `requester_qpn` | `requester_qpn`, learned from the responses (`None` without any) |
//! | `udp_sport` | `sport`, the requests' UDP source port |
//! | `first_ns`, `last_ns` | `first_ts_ns`, `last_ts_ns` less the first frame of all the captures analyzed (`capture.first_ts_ns`) |
//! | `payload_bytes` | `payload_bytes`: requests and READ responses, resends included |
//! | `packets`, `wire_bytes` | `packets`, `bytes`: both directions, CNPs included, mirror copies not |
//! | `request_packets` | `request_packets` less the CNPs the requester sent (`cnps` - `cnps_to_requester`) |
//! | `goodput_gbps` | `goodput_gbps`: first transmissions over the flow's first to last frame |
//! | `messages` | `messages`: seen from their first packet to their last (READs: to the last response) |
//! | `retransmitted_packets` | `retransmitted_packets`: requests at or before the highest PSN seen |
//! | `go_back_n` | `go_back_n.episodes` |
//! | `timeouts` | go-back-N episodes with cause `timeout` (no NAK came before the resend) |
//! | `naks` | every NAK of the flow, all syndromes (`naks` summed) |
//! | `cnps` | the CNPs to the requester (not those to the responder about marked READ responses) |
//! | `ecn_ce_packets` | the CE-marked requests (not responses) |
//! | `message_latency_ns` | `message_latency_ns` (`p50`, `p99`, `max`): first packet to the ACK covering the last |
//! | `port` | the capture file that carried most of the requests (`lag.qp_map[].request_file`) |

pub mod analyze;
pub mod cli;
pub mod compare;
pub mod dissect;
pub mod export;
pub mod flags;
pub mod html;
pub mod infer;
pub mod inputs;
mod output;
pub mod plot;

/// The exporters' old path (`report::Format`), kept while tests written
/// against it move to [`export`].
#[doc(hidden)]
pub use self::export as report;

/// How a command that produced its output ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything read as expected (exit 0).
    Clean,
    /// Output is complete for what could be read, but the user must see a
    /// warning on stderr, e.g. a file cut mid-record (exit 3).
    Warned,
}
