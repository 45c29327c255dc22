//! `roce-pcap plot`: PNG and SVG pictures of an analysis.
//!
//! ```text
//!  analyze_files(series = true) ──▶ SeriesSet ──┬─ goodput_qps     Gb/s over time, one line per flow
//!                                               ├─ goodput_files   RoCE payload Gb/s per file (bond slave)
//!                                               ├─ tsg_qp<N>       PSN against time per flow (tcptrace style):
//!                                               │                  first transmissions, resends, ACKs, NAKs
//!                                               ├─ pfc             pause intervals per file, sender, priority
//!                                               └─ ecn_cnp         CE marks and CNPs per second
//! ```
//! Text is drawn with DejaVu Sans compiled into the binary
//! (`assets/fonts/`, shared with rocesim), so the pictures look the same on
//! a machine without any system font. All files are written into a
//! temporary directory next to the output and moved into place only when
//! every plot was drawn.

pub mod cli;

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::analyze::series::Bins;
use crate::analyze::{Analysis, SeriesSet};

/// DejaVu Sans 2.37 (Bitstream Vera licence, `assets/fonts/LICENSE-DejaVu.txt`).
pub static FONT_TTF: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets/fonts/DejaVuSans.ttf"
));
static REGISTER: Once = Once::new();
const FONT: &str = "sans-serif";

/// Registers the embedded font as plotters' "sans-serif" (once).
pub fn register_embedded_font() {
    REGISTER.call_once(|| {
        // Fails only for a font ab_glyph cannot parse; the plot tests
        // would show missing text.
        let _ = register_font(FONT, FontStyle::Normal, FONT_TTF);
    });
}

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("{path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("nothing to plot: the analysis was run without time series")]
    NoSeries,
}

const SIZE: (u32, u32) = (1100, 600);
const MAX_LINES: usize = 10;

fn draw_err<E: std::fmt::Debug>(path: &Path) -> impl FnOnce(E) -> PlotError + '_ {
    move |e| PlotError::Draw {
        path: path.to_path_buf(),
        message: format!("{e:?}"),
    }
}

/// Where drawn pictures go: PNG and SVG files in a directory, or only the
/// SVG text, for a page that inlines it.
pub(crate) struct Sink {
    dir: Option<PathBuf>,
    /// The file names written into `dir`, in order.
    pub written: Vec<String>,
    /// Each picture's name (stem) and SVG text, in order.
    pub svgs: Vec<(String, String)>,
}

impl Sink {
    /// PNG and SVG files in `dir`.
    pub(crate) fn files(dir: &Path) -> Sink {
        Sink {
            dir: Some(dir.to_path_buf()),
            written: Vec::new(),
            svgs: Vec::new(),
        }
    }

    /// SVG text only.
    pub(crate) fn svg_only() -> Sink {
        Sink {
            dir: None,
            written: Vec::new(),
            svgs: Vec::new(),
        }
    }

    fn png(&self, stem: &str) -> Option<PathBuf> {
        self.dir.as_ref().map(|d| d.join(format!("{stem}.png")))
    }

    fn svg(&mut self, stem: &str, text: String) -> Result<(), PlotError> {
        if let Some(dir) = &self.dir {
            let path = dir.join(format!("{stem}.svg"));
            std::fs::write(&path, &text).map_err(|source| PlotError::Io { path, source })?;
            self.written.push(format!("{stem}.svg"));
        }
        self.svgs.push((stem.to_string(), text));
        Ok(())
    }
}

/// Draws `$body` on `$root` into the sink as `<stem>.png` (with a
/// directory) and `<stem>.svg`.
macro_rules! both {
    ($sink:expr, $stem:expr, |$root:ident| $body:expr) => {
        both!($sink, $stem, $crate::plot::SIZE, |$root| $body)
    };
    ($sink:expr, $stem:expr, $size:expr, |$root:ident| $body:expr) => {{
        let stem: String = $stem.to_string();
        let sink: &mut $crate::plot::Sink = $sink;
        if let Some(png) = sink.png(&stem) {
            {
                let $root = BitMapBackend::new(&png, $size).into_drawing_area();
                $body.map_err(draw_err(&png))?;
                $root.present().map_err(draw_err(&png))?;
            }
            sink.written.push(format!("{stem}.png"));
        }
        let mut text = String::new();
        {
            let at = std::path::PathBuf::from(format!("{stem}.svg"));
            let $root = SVGBackend::with_string(&mut text, $size).into_drawing_area();
            $body.map_err(draw_err(&at))?;
            $root.present().map_err(draw_err(&at))?;
        }
        sink.svg(&stem, text)?;
    }};
}

mod chart;
pub mod compare;

use self::chart::*;

/// Writes every plot of `a` into `out`; returns the file names written.
pub fn plot(a: &Analysis, out: &Path, max_qps: usize) -> Result<Vec<String>, PlotError> {
    let s = a.series.as_ref().ok_or(PlotError::NoSeries)?;
    let written = write_dir(out, |sink| draw_all(a, s, sink, max_qps))?;
    remove_stale_tsgs(out, &written)?;
    Ok(written)
}

/// Draws with `draw` into a temporary directory inside `out` (created if
/// missing), then moves every file into `out` once all were drawn, so that
/// a failure leaves no half set; returns the file names.
pub(crate) fn write_dir(
    out: &Path,
    draw: impl FnOnce(&mut Sink) -> Result<(), PlotError>,
) -> Result<Vec<String>, PlotError> {
    register_embedded_font();
    if out.exists() && !out.is_dir() {
        return Err(PlotError::Io {
            path: out.to_path_buf(),
            source: std::io::Error::other("not a directory (--out must be a directory)"),
        });
    }
    std::fs::create_dir_all(out).map_err(|source| PlotError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let tmp = out.join(format!(".roce-pcap-plot-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).map_err(|source| PlotError::Io {
        path: tmp.clone(),
        source,
    })?;
    let mut sink = Sink::files(&tmp);
    let result = draw(&mut sink).and_then(|()| {
        let written = sink.written;
        for name in &written {
            std::fs::rename(tmp.join(name), out.join(name)).map_err(|source| PlotError::Io {
                path: out.join(name),
                source,
            })?;
        }
        Ok(written)
    });
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Removes the time-sequence graphs an earlier plot left in `out` for flows
/// this analysis does not have: beside this run's `tsg_qp0..6`, an old
/// `tsg_qp7` would read as an eighth flow. Only names this command writes
/// (`tsg_qp<N>[_zoom].png|svg`) are touched.
fn remove_stale_tsgs(out: &Path, written: &[String]) -> Result<(), PlotError> {
    let io = |source| PlotError::Io {
        path: out.to_path_buf(),
        source,
    };
    for entry in std::fs::read_dir(out).map_err(io)? {
        let name = entry.map_err(io)?.file_name();
        let Some(name) = name.to_str() else { continue };
        if is_tsg_name(name) && !written.iter().any(|w| w == name) {
            let path = out.join(name);
            std::fs::remove_file(&path).map_err(|source| PlotError::Io { path, source })?;
        }
    }
    Ok(())
}

fn is_tsg_name(name: &str) -> bool {
    let Some(stem) = name
        .strip_suffix(".png")
        .or_else(|| name.strip_suffix(".svg"))
    else {
        return false;
    };
    let Some(n) = stem.strip_prefix("tsg_qp") else {
        return false;
    };
    let n = n.strip_suffix("_zoom").unwrap_or(n);
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
}

/// The SVG text of every plot of `a` (time-sequence graphs for at most
/// `max_qps` flows), by name, for a page.
pub(crate) fn svgs(a: &Analysis, max_qps: usize) -> Result<Vec<(String, String)>, PlotError> {
    register_embedded_font();
    let s = a.series.as_ref().ok_or(PlotError::NoSeries)?;
    let mut sink = Sink::svg_only();
    draw_all(a, s, &mut sink, max_qps)?;
    Ok(sink.svgs)
}

fn draw_all(a: &Analysis, s: &SeriesSet, sink: &mut Sink, max_qps: usize) -> Result<(), PlotError> {
    let r = &a.report;
    let first = r.capture.first_ts_ns.unwrap_or(0);
    let last = r.capture.last_ts_ns.unwrap_or(first).max(first + 1);
    let ax = TimeAxis::new(first, last);

    // Goodput per flow: the flows with the most goodput bytes, the rest summed.
    let mut flows: Vec<&crate::analyze::FlowSeries> = s.flows.iter().collect();
    flows.sort_by(|a, b| {
        let sum = |f: &crate::analyze::FlowSeries| f.goodput.values.iter().sum::<f64>();
        sum(b).total_cmp(&sum(a)).then(a.qp.cmp(&b.qp))
    });
    let mut named: Vec<(String, &Bins)> = flows
        .iter()
        .take(MAX_LINES)
        .map(|f| (format!("#{} {}", f.qp, f.label), &f.goodput))
        .collect();
    let rest: Vec<_> = flows.iter().skip(MAX_LINES).collect();
    let others = sum_bins(rest.iter().map(|f| &f.goodput));
    if !rest.is_empty() {
        named.push((format!("{} other flows", rest.len()), &others));
    }
    let mut lines = rate_lines(&named, &ax, first, last, 8.0);
    let unit = in_rate_unit(&mut lines);
    both!(sink, "goodput_qps", |root| {
        if lines.is_empty() {
            message(
                &root,
                "Goodput per QP",
                &["No RoCE request flows in this capture."],
            )
        } else {
            line_chart(
                &root,
                "Goodput per request flow (first transmissions)",
                &ax.label(),
                &format!("goodput ({unit})"),
                ax.span,
                &lines,
            )
        }
    });

    let files: Vec<(String, &Bins)> = s
        .files
        .iter()
        .map(|(n, b)| (n.rsplit('/').next().unwrap_or(n).to_string(), b))
        .collect();
    let mut lines = rate_lines(&files, &ax, first, last, 8.0);
    let unit = in_rate_unit(&mut lines);
    let y_label = format!("RoCE payload ({unit})");
    both!(sink, "goodput_files", |root| line_chart(
        &root,
        "RoCE payload per file (bond slave)",
        &ax.label(),
        &y_label,
        ax.span,
        &lines
    ));

    // Time-sequence graphs for the flows with the most packets.
    let mut by_packets: Vec<&crate::analyze::FlowSeries> = s.flows.iter().collect();
    by_packets.sort_by_key(|f| {
        let q = r.qps.iter().find(|q| q.id == f.qp);
        (std::cmp::Reverse(q.map_or(0, |q| q.packets)), f.qp)
    });
    for f in by_packets.into_iter().take(max_qps) {
        if f.originals.pts.is_empty() && f.retransmissions.pts.is_empty() {
            continue;
        }
        let q = r
            .qps
            .iter()
            .find(|q| q.id == f.qp)
            .expect("series of a reported flow");
        let t = TimeSequenceGraph {
            title: format!(
                "#{} {}  ({} retransmitted, {} go-back-N)",
                f.qp, f.label, q.retransmitted_packets, q.go_back_n.episodes
            ),
            originals: &f.originals.pts,
            retransmissions: &f.retransmissions.pts,
            acks: &f.acks.pts,
            naks: &f.naks.pts,
            stride: f.originals.stride(),
            window: None,
        };
        let stem = format!("tsg_qp{}", f.qp);
        both!(sink, stem, |root| tsg_chart(&root, &ax, &t));
        // Real captures often hold one burst and a long idle tail: add a
        // view of the 2nd..95th percentile of the transmission times.
        let mut times: Vec<u64> = f
            .originals
            .pts
            .iter()
            .chain(&f.retransmissions.pts)
            .map(|p| p.0)
            .collect();
        times.sort_unstable();
        if times.len() >= 20 {
            let (lo, hi) = (times[times.len() / 50], times[times.len() * 95 / 100]);
            let (min, max) = (times[0], times[times.len() - 1]);
            if hi > lo && (hi - lo).saturating_mul(10) < max - min {
                let pad = (hi - lo) / 20;
                let (lo, hi) = (lo.saturating_sub(pad), hi.saturating_add(pad));
                let zax = TimeAxis::new(first, first.saturating_add((hi - lo).saturating_mul(2)));
                let zoom = TimeSequenceGraph {
                    title: format!("{} (zoom)", t.title),
                    window: Some((lo, hi)),
                    ..t
                };
                let stem = format!("tsg_qp{}_zoom", f.qp);
                both!(sink, stem, |root| tsg_chart(&root, &zax, &zoom));
            }
        }
    }

    both!(sink, "pfc", |root| {
        if s.pauses.is_empty() {
            let none: Vec<String> = r
                .files
                .iter()
                .filter(|f| f.mac_control_frames == 0)
                .map(|f| f.file.rsplit('/').next().unwrap_or(&f.file).to_string())
                .collect();
            let l1 = format!("No PFC or PAUSE frames in {}.", none.join(", "));
            message(
                &root,
                "PFC / PAUSE",
                &[
                    &l1,
                    "Host NICs usually consume PFC frames before a host capture sees them,",
                    "so this does not mean there were no pauses: capture at the switch,",
                    "or read the NIC's pause counters (ethtool -S, *prio*_pause*).",
                ],
            )
        } else {
            pfc_chart(&root, &ax, s)
        }
    });

    let lines = rate_lines(
        &[
            ("ECN-CE marked packets".to_string(), &s.ecn_ce),
            ("CNPs".to_string(), &s.cnps),
        ],
        &ax,
        first,
        last,
        1e9,
    );
    both!(sink, "ecn_cnp", |root| line_chart(
        &root,
        "ECN-CE marks and CNPs",
        &ax.label(),
        "packets per second",
        ax.span,
        &lines
    ));
    Ok(())
}
