//! # roce-testkit
//!
//! What the workspace's tests and benches share, so that no test file
//! carries its own copy: one synthetic-capture generator, the generator of
//! the committed corpus in `traces/`, tshark, and the helpers every CLI
//! test needs. A dev-dependency only (`publish = false`); nothing here is
//! part of either tool.
//!
//! ```text
//!   roce-codec ──┐  frames are built with roce_codec::build and emitted by the codec,
//!   roce-capture ┴─ written by roce_capture::write::CaptureWriter (as the taps are)
//!        │
//!   roce-testkit ── synth    Synth (files + truth), RcConn (one RC flow), bench captures
//!        │       ├─ setup    CmSetup (REQ/MRA/REP/REJ/RTU), PerftestTcp (port 18515 keys)
//!        │       ├─ traces   generate(dir): every file of traces/, byte for byte
//!        │       ├─ pcap     what the writer does not write: SLL/SLL2, µs, raw pcapng times, gzip
//!        │       ├─ tshark   the field lists and one way to run tshark
//!        │       ├─ ci       ROCESIM_CI=1: missing tshark or ../shared fails, else skips
//!        │       ├─ cli      run a binary, stdout/stderr, JSON lines, TempDir
//!        │       ├─ repo     the repository's root, traces/, the book's quotes
//!        │       ├─ rocesim  the workspace's rocesim binary, built for tests of other packages
//!        │       ├─ chromium a page in headless Chromium: console errors, network requests, screenshot
//!        │       └─ bench    settings of the benches from the environment
//!        ▼
//!   dev-dependency of roce-pcap (tests, benches) and rocesim (tests)
//! ```
//!
//! * [`synth`] holds [`synth::Synth`], which writes frames to capture files
//!   and counts what it wrote ([`synth::FileTruth`]); [`synth::RcConn`] plays one RC
//!   connection (messages segmented at the PMTU, ACK/NAK/RNR, CNPs,
//!   byte-identical resends). [`synth::bench_capture`] and
//!   [`synth::full_size_writes`] are the benches' captures.
//! * [`setup`] holds [`setup::CmSetup`] and [`setup::PerftestTcp`]: the
//!   connection set-up that precedes an RC flow, over CM MADs or TCP.
//! * [`traces`] holds [`traces::generate`], which writes [`traces::FILES`];
//!   `analyzer/tests/dissect_traces.rs` keeps `traces/` equal to it.
//! * [`pcap`] holds [`pcap::raw_pcap`], [`pcap::pcapng_with_raw_times`],
//!   [`pcap::gzip`].
//! * [`tshark`] holds [`tshark::BTH_FIELDS`], [`tshark::dissect_fields`],
//!   [`tshark::fields`].
//! * [`ci`] holds [`ci::skip`], [`ci::public_trace`], [`ci::shared`].
//! * [`cli`] holds [`cli::run`], [`cli::TempDir`], [`cli::json_lines`].
//! * [`repo`] holds [`repo::trace`], [`repo::book_text_blocks`].
//! * [`rocesim`](mod@rocesim) holds [`rocesim::rocesim`], [`rocesim::run`].
//! * [`chromium`](mod@chromium) holds [`chromium::chromium`], [`chromium::load`],
//!   [`chromium::screenshot`].
//! * [`bench`](mod@bench) holds [`bench::env_or`].
//!
//! Everything is deterministic, so tests can compare bytes.

pub mod bench;
pub mod chromium;
pub mod ci;
pub mod cli;
pub mod pcap;
pub mod repo;
pub mod rocesim;
pub mod setup;
pub mod synth;
pub mod traces;
pub mod tshark;
