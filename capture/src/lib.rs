//! # roce-capture
//!
//! Capture files in and out, for both tools: `roce-pcap` reads real and
//! simulated captures through [`read`] and [`pipeline`]; `rocesim`'s taps
//! write theirs through [`write`](mod@write). Frames become `roce-codec` values here,
//! so everything above this crate sees decoded frames, never file formats.
//!
//! ```text
//!              roce-codec (wire formats, no I/O)
//!                  ▲
//!             roce-capture ── read:     pcap / pcapng / gzip, Ethernet / SLL / SLL2 ──▶ RawFrame, FrameBatch
//!                  ▲     ├──── pipeline: decode batches on every core, frame order kept
//!                  │     └──── write:    pcap / pcapng (nanosecond), one writer for taps, corpora, tests
//!        ┌─────────┴─────────┐
//!   roce-pcap             rocesim
//!   (dissect, analyze)    (capture taps)
//! ```
//!
//! * [`read`] holds [`read::CaptureReader`], streaming with flat memory.
//! * [`pipeline`] holds [`pipeline::with_decoders`] and [`pipeline::Ordered`].
//! * [`write`](mod@write) holds [`write::CaptureWriter`].
//!
//! And what both tools' reports share above the capture files:
//!
//! * [`figures`] holds [`figures::QpFigures`], the per-QP vocabulary that
//!   makes a simulation and a capture comparable.
//! * [`human`] formats bytes, durations, rates, counts and text tables the
//!   same way in both tools.
//! * [`palette`] gives both tools' plots their line colours, ordered by
//!   lightness so that a greyscale print keeps them apart.

pub mod figures;
pub mod human;
pub mod palette;
pub mod pipeline;
pub mod read;
pub mod write;
