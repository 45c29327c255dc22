//! Per-flow results of a run with `[[traffic]]`, all of them: `fct.txt` in
//! the reference's format, `fct.csv`, the `fct` section of `summary.json`,
//! the slowdown-by-size plot `fct.png`/`.svg` and the slowdown table
//! `rocesim run` prints.
//!
//! ```text
//!  fct.txt  sip dip sport dport size start_ns fct_ns standalone_fct_ns   (finished flows, in completion order)
//!  fct.csv  flow,src,dst,src_qpn,dst_qpn,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown
//! ```
//!
//! *Slowdown* is a flow's completion time over its ideal on an idle
//! fabric (at least 1, as the reference's scripts clamp it). The ideal here
//! is rocesim's own ([`crate::topology::Routes::framed_ideal_fct`]: every
//! frame at the bottleneck rate plus an unloaded round trip), so slowdowns,
//! not times, compare with the reference's. Percentiles are nearest-rank
//! over the finished flows, by size bucket as the HPCC paper plots them.

use std::fmt::Write as _;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use roce_capture::human::{self, plural};
use serde::Serialize;

use super::atomic_dir::stream_file;
use crate::world::World;

/// Bucket bounds in bytes: [0, 10 KB), [10 KB, 100 KB), ... [10 MB, ∞).
const BOUNDS: [u64; 4] = [10_000, 100_000, 1_000_000, 10_000_000];

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Percentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SizeBucket {
    pub min_bytes: u64,
    /// Exclusive; `null` for the last bucket.
    pub max_bytes: Option<u64>,
    pub flows: usize,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

/// `summary.json`'s `fct`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FctSummary {
    /// Flows of the scenario.
    pub flows: usize,
    /// Of which finished (the percentiles are over these).
    pub finished: usize,
    pub slowdown: Percentiles,
    pub by_size: Vec<SizeBucket>,
    /// Flows under 100 KB and from 1 MB on, the HPCC paper's two panels.
    pub small: SizeBucket,
    pub large: SizeBucket,
}

/// Nearest-rank percentile of sorted values (0 for none).
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    round3(sorted[rank.clamp(1, sorted.len()) - 1])
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The bucket of the finished flows' `(size in bytes, slowdown)` from
/// `min` bytes up to `max`.
fn bucket(done: &[(u64, f64)], min: u64, max: Option<u64>) -> SizeBucket {
    let mut s: Vec<f64> = done
        .iter()
        .filter(|&&(b, _)| b >= min && max.is_none_or(|m| b < m))
        .map(|&(_, x)| x)
        .collect();
    s.sort_by(f64::total_cmp);
    SizeBucket {
        min_bytes: min,
        max_bytes: max,
        flows: s.len(),
        p50: pct(&s, 50.0),
        p95: pct(&s, 95.0),
        p99: pct(&s, 99.0),
    }
}

/// The `fct` section; `None` for a run without flows.
pub fn summary(w: &World) -> Option<FctSummary> {
    if w.flow_count() == 0 {
        return None;
    }
    // Sizes and slowdowns only: a fabric's 100,000 flows' results are
    // 11 MB.
    let done: Vec<(u64, f64)> = (0..w.flow_count())
        .filter_map(|i| {
            let f = w.flow(i);
            Some((f.flow.spec.size_bytes, f.slowdown()?))
        })
        .collect();
    let mut all: Vec<f64> = done.iter().map(|&(_, x)| x).collect();
    all.sort_by(f64::total_cmp);
    let mut by_size = Vec::new();
    let mut lo = 0;
    for &b in &BOUNDS {
        by_size.push(bucket(&done, lo, Some(b)));
        lo = b;
    }
    by_size.push(bucket(&done, lo, None));
    Some(FctSummary {
        flows: w.flow_count(),
        finished: all.len(),
        slowdown: Percentiles {
            p50: pct(&all, 50.0),
            p95: pct(&all, 95.0),
            p99: pct(&all, 99.0),
            max: all.last().copied().map_or(0.0, round3),
        },
        by_size,
        small: bucket(&done, 0, Some(100_000)),
        large: bucket(&done, 1_000_000, None),
    })
}

/// `fct.txt`: finished flows in completion order (then flow id), as the
/// reference writes them.
pub fn fct_txt(w: &World, s: &mut dyn std::io::Write) -> std::io::Result<()> {
    // Sorted by key and index only: a fabric's 100,000 flows' results are
    // 11 MB.
    let mut done: Vec<(crate::time::Ps, u32, usize)> = (0..w.flow_count())
        .filter_map(|i| {
            let f = w.flow(i);
            Some((f.finished_at?, f.flow.spec.id, i))
        })
        .collect();
    done.sort_unstable();
    for f in done.into_iter().map(|(_, _, i)| w.flow(i)) {
        writeln!(
            s,
            "{:08x} {:08x} {} {} {} {} {} {}",
            u32::from(f.src_ip),
            u32::from(f.dst_ip),
            f.sport,
            f.flow.spec.dport,
            f.flow.spec.size_bytes,
            f.flow.spec.start.as_ns(),
            f.fct().map_or(0, |t| t.as_ns()),
            f.flow.ideal.as_ns()
        )?;
    }
    Ok(())
}

/// `fct.csv`: every flow in start order; an unfinished one has empty FCT
/// and slowdown.
pub fn fct_csv(w: &World, s: &mut dyn std::io::Write) -> std::io::Result<()> {
    s.write_all(
        b"flow,src,dst,src_qpn,dst_qpn,size_bytes,start_ns,fct_ns,ideal_fct_ns,slowdown\n",
    )?;
    for f in (0..w.flow_count()).map(|i| w.flow(i)) {
        let spec = &f.flow.spec;
        writeln!(
            s,
            "{},{},{},{:#x},{:#x},{},{},{},{},{}",
            spec.id,
            w.host_name(spec.src.0),
            w.host_name(spec.dst.0),
            f.src_qpn,
            f.dst_qpn,
            spec.size_bytes,
            spec.start.as_ns(),
            f.fct().map_or(String::new(), |t| t.as_ns().to_string()),
            f.flow.ideal.as_ns(),
            f.slowdown().map_or(String::new(), |x| format!("{:.4}", x))
        )?;
    }
    Ok(())
}

/// Writes fct.txt, fct.csv and the plot for a run with flows.
pub fn write(w: &World, dir: &Path, summary: Option<&FctSummary>) -> Result<(), String> {
    let Some(summary) = summary else {
        return Ok(());
    };
    stream_file(dir, "fct.txt", &|f| fct_txt(w, f))?;
    stream_file(dir, "fct.csv", &|f| fct_csv(w, f))?;
    plot(dir, summary)
}

/// `<10KB`, `10KB-100KB`, `>=10MB`: a bucket as the plot and the table
/// name it.
fn label(b: &SizeBucket) -> String {
    let h = |x: u64| match x {
        x if x >= 1_000_000 && x % 1_000_000 == 0 => format!("{}MB", x / 1_000_000),
        x if x >= 1_000 && x % 1_000 == 0 => format!("{}KB", x / 1_000),
        x => format!("{x}B"),
    };
    match b.max_bytes {
        Some(m) if b.min_bytes == 0 => format!("<{}", h(m)),
        Some(m) => format!("{}-{}", h(b.min_bytes), h(m)),
        None => format!(">={}", h(b.min_bytes)),
    }
}

/// The flows' slowdowns (FCT over the ideal), overall and per size, as
/// `rocesim run` prints them under the QPs' table.
pub fn table(f: &FctSummary) -> String {
    let mut out = format!(
        "flow completion: {} of {} finished; slowdown = FCT / ideal FCT\n",
        f.finished,
        plural(f.flows as u64, "flow")
    );
    let header = ["flow size", "flows", "p50", "p95", "p99"];
    let mut rows = vec![header.map(str::to_string).to_vec()];
    let p = &f.slowdown;
    rows.push(vec![
        "all".into(),
        f.finished.to_string(),
        format!("{:.2}", p.p50),
        format!("{:.2}", p.p95),
        format!("{:.2}", p.p99),
    ]);
    let named = [("small", &f.small), ("large", &f.large)];
    for (name, b) in f.by_size.iter().map(|b| ("", b)).chain(named) {
        if b.flows == 0 {
            continue;
        }
        let size = label(b);
        rows.push(vec![
            if name.is_empty() {
                size
            } else {
                format!("{size} ({name})")
            },
            b.flows.to_string(),
            format!("{:.2}", b.p50),
            format!("{:.2}", b.p95),
            format!("{:.2}", b.p99),
        ]);
    }
    out.push_str(&human::table(&rows));
    let _ = writeln!(out, "  (max {:.2}; every flow in fct.csv)", p.max);
    out
}

/// `fct.png`/`.svg`: slowdown p50/p95/p99 per size bucket, the HPCC
/// paper's FCT figure (log y axis).
fn plot(dir: &Path, s: &FctSummary) -> Result<(), String> {
    super::plot::fonts();
    let png = dir.join("fct.png");
    let svg = dir.join("fct.svg");
    super::plot::write_png(&png, (900, 520), |root| draw(root, s))?;
    let root = SVGBackend::new(&svg, (900, 520)).into_drawing_area();
    draw(&root, s).map_err(|e| format!("{}: {e}", svg.display()))?;
    root.present()
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    Ok(())
}

/// The y axis's labelled values: 1, 2, 5, 10, 20, 50, ... up to `top`.
///
/// plotters' own key points on a log axis repeat each decade (its light
/// points of one decade end on the next decade's bold one, so `10` was
/// drawn twice, one label on the other), and its labels carry a `.0`.
fn slowdown_ticks(top: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut decade = 1.0;
    while decade <= top {
        for m in [1.0, 2.0, 5.0] {
            if decade * m <= top {
                out.push(decade * m);
            }
        }
        decade *= 10.0;
    }
    out
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    s: &FctSummary,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let buckets: Vec<&SizeBucket> = s.by_size.iter().filter(|b| b.flows > 0).collect();
    let labels: Vec<String> = buckets.iter().map(|b| label(b)).collect();
    let top = buckets.iter().map(|b| b.p99).fold(2.0f64, f64::max) * 1.3;
    let n = buckets.len().max(1);
    let mut chart = ChartBuilder::on(root)
        .caption(
            format!(
                "FCT slowdown by flow size ({} flows, p50 {:.2}, p95 {:.2}, p99 {:.2})",
                s.finished, s.slowdown.p50, s.slowdown.p95, s.slowdown.p99
            ),
            ("sans-serif", 20),
        )
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(
            -0.5f64..n as f64 - 0.5,
            (1.0f64..top)
                .log_scale()
                .with_key_points(slowdown_ticks(top)),
        )?;
    chart
        .configure_mesh()
        .x_labels(n)
        .x_label_formatter(&|x| {
            let i = x.round();
            if (x - i).abs() < 0.01 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format!("{y}"))
        // Only the labelled values get a grid line: a log axis's minor
        // lines crowd around each decade.
        .light_line_style(TRANSPARENT)
        .x_desc("flow size (bytes)")
        .y_desc("slowdown (FCT / ideal FCT, log scale)")
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    // Darkest to lightest, and a marker shape each, so that the three
    // lines stay apart in greyscale too.
    let color = |i| {
        let (r, g, b) = roce_capture::palette::series(i, 3);
        RGBColor(r, g, b)
    };
    type Line = (&'static str, fn(&SizeBucket) -> f64);
    let lines: [Line; 3] = [("p50", |b| b.p50), ("p95", |b| b.p95), ("p99", |b| b.p99)];
    for (i, (name, get)) in lines.into_iter().enumerate() {
        let c = color(i);
        let pts: Vec<(f64, f64)> = buckets
            .iter()
            .enumerate()
            .map(|(i, b)| (i as f64, get(b).max(1.0)))
            .collect();
        let line = chart
            .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
            .label(name);
        let dash = move |x: i32, y: i32| {
            EmptyElement::at((x + 10, y))
                + PathElement::new(vec![(-10, 0), (10, 0)], c.stroke_width(2))
        };
        // A marker shape per line: circle, square, triangle.
        match i {
            0 => {
                line.legend(move |(x, y)| dash(x, y) + Circle::new((0, 0), 4, c.filled()));
                chart.draw_series(pts.iter().map(|&p| Circle::new(p, 5, c.filled())))?;
            }
            1 => {
                let square = move || Rectangle::new([(-4, -4), (4, 4)], c.filled());
                line.legend(move |(x, y)| dash(x, y) + square());
                chart.draw_series(pts.iter().map(|&p| EmptyElement::at(p) + square()))?;
            }
            _ => {
                line.legend(move |(x, y)| dash(x, y) + TriangleMarker::new((0, 0), 6, c.filled()));
                chart.draw_series(pts.iter().map(|&p| TriangleMarker::new(p, 7, c.filled())))?;
            }
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 16))
        .draw()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(min_bytes: u64, max_bytes: Option<u64>, p: [f64; 3]) -> SizeBucket {
        SizeBucket {
            min_bytes,
            max_bytes,
            flows: 10,
            p50: p[0],
            p95: p[1],
            p99: p[2],
        }
    }

    /// The text of every `<text>` element of an SVG, in order.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| Some(t.split_once('>')?.1.split_once('<')?.0.trim().to_string()))
            .collect()
    }

    /// Slowdowns from 1 to 25: the log axis labels 1, 2, 5, 10 and 20 once
    /// each, as integers. plotters' own log key points drew `10.0` twice
    /// (the last light point of the first decade and the second decade's
    /// own), one label over the other.
    #[test]
    fn the_log_axis_labels_each_value_once() {
        assert_eq!(slowdown_ticks(32.5), [1.0, 2.0, 5.0, 10.0, 20.0]);
        assert_eq!(slowdown_ticks(2.6), [1.0, 2.0]);
        assert_eq!(
            slowdown_ticks(260.0),
            [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0]
        );
        let s = FctSummary {
            flows: 30,
            finished: 30,
            slowdown: Percentiles {
                p50: 1.2,
                p95: 11.4,
                p99: 25.0,
                max: 25.0,
            },
            by_size: vec![
                bucket(0, Some(10_000), [1.1, 20.0, 25.0]),
                bucket(10_000, Some(100_000), [1.2, 11.4, 12.4]),
                bucket(100_000, None, [1.8, 4.2, 4.3]),
            ],
            small: bucket(0, Some(100_000), [1.1, 14.0, 25.0]),
            large: bucket(1_000_000, None, [1.1, 2.4, 2.9]),
        };
        super::super::plot::fonts();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (900, 520)).into_drawing_area();
            draw(&root, &s).unwrap();
            root.present().unwrap();
        }
        let texts = texts(&svg);
        for tick in ["1", "2", "5", "10", "20"] {
            let n = texts.iter().filter(|t| *t == tick).count();
            assert_eq!(n, 1, "label {tick} drawn {n} times: {texts:?}");
        }
        assert!(
            !texts.iter().any(|t| t.ends_with(".0")),
            "a label with a .0: {texts:?}"
        );
        // Its x labels are the three buckets, and the legend names the
        // three percentiles.
        for label in ["&lt;10KB", "10KB-100KB", "&gt;=100KB", "p50", "p95", "p99"] {
            assert!(texts.iter().any(|t| t == label), "{label}: {texts:?}");
        }
    }
}
