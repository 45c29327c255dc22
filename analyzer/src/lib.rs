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
//! | [`dissect`] | `roce-pcap dissect`: the driver, its CLI, the text line and the JSON keys of a frame |
//! | [`analyze`] | per-flow sequence analysis, PFC, LAG balance, findings; the [`analyze::model`] of a report |
//! | [`export`] | the exporters of a report, one trait and one file per `--format` |
//! | [`plot`] | the pictures of an analysis |

pub mod analyze;
pub mod dissect;
pub mod export;
pub mod flags;
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
