//! The pieces every picture is drawn with: the time axis, bin grids and
//! rate lines, legends beside the chart, the line chart, the PSN
//! time-sequence graph and the pause timeline. Lines without a colour of
//! their own take [`roce_capture::palette`]'s, darkest first, so that a
//! greyscale print keeps them apart and in legend order; the time-sequence
//! graph tells its kinds of point apart by shape as well as colour.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::FONT;
use crate::analyze::SeriesSet;
use crate::analyze::series::Bins;

const TARGET_BINS: u64 = 200;

/// Time axis: nanoseconds since the capture start shown in a unit that fits.
#[derive(Clone, Copy)]
pub(super) struct TimeAxis {
    pub(super) origin_ns: u64,
    pub(super) div: f64,
    pub(super) unit: &'static str,
    pub(super) span: f64,
}

impl TimeAxis {
    pub(super) fn new(first: u64, last: u64) -> TimeAxis {
        let span_ns = last.saturating_sub(first).max(1);
        let (div, unit) = if span_ns < 2_000_000 {
            (1e3, "µs")
        } else if span_ns < 2_000_000_000 {
            (1e6, "ms")
        } else {
            (1e9, "s")
        };
        TimeAxis {
            origin_ns: first,
            div,
            unit,
            span: span_ns as f64 / div,
        }
    }

    pub(super) fn x(&self, ts_ns: u64) -> f64 {
        ts_ns.saturating_sub(self.origin_ns) as f64 / self.div
    }

    /// The same axis (unit and span) for times counted from `origin_ns`:
    /// two captures side by side, each from its own first frame.
    pub(super) fn from(self, origin_ns: u64) -> TimeAxis {
        TimeAxis { origin_ns, ..self }
    }

    pub(super) fn label(&self) -> String {
        format!("time since capture start ({})", self.unit)
    }
}

/// A common bin grid for several adaptive series: the coarsest width among
/// them, at least span / TARGET_BINS.
pub(super) fn grid<'a>(
    bins: impl Iterator<Item = &'a Bins>,
    first: u64,
    last: u64,
) -> (u64, u64, usize) {
    let mut w = 1_000u64;
    // w * TARGET_BINS < span, without overflow on a span of centuries.
    while w < last.saturating_sub(first).div_ceil(TARGET_BINS) {
        w *= 2;
    }
    for b in bins {
        w = w.max(b.width_ns);
    }
    let start = first - first % w;
    let n = ((last - start) / w + 1) as usize;
    (start, w, n)
}

/// The sum of several series as one: each bin's sum re-added at its start
/// time, which keeps the totals exact.
pub(super) fn sum_bins<'a>(series: impl Iterator<Item = &'a Bins>) -> Bins {
    let mut sum = Bins::default();
    for b in series {
        for (i, v) in b.values.iter().enumerate() {
            if *v > 0.0 {
                sum.add(b.start_ns + i as u64 * b.width_ns, *v);
            }
        }
    }
    sum
}

/// A line: name, (x, y) points and its colour (by default the palette's,
/// by position).
pub(super) struct Line {
    pub(super) name: String,
    pub(super) pts: Vec<(f64, f64)>,
    pub(super) color: Option<RGBAColor>,
}

pub(super) fn rate_lines(
    series: &[(String, &Bins)],
    ax: &TimeAxis,
    first: u64,
    last: u64,
    scale: f64,
) -> Vec<Line> {
    let (start, w, n) = grid(series.iter().map(|(_, b)| *b), first, last);
    series
        .iter()
        .map(|(name, b)| {
            let v = b.rebin(start, w, n);
            Line {
                name: name.clone(),
                color: None,
                pts: v
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (ax.x(start + i as u64 * w), x * scale / w as f64))
                    .collect(),
            }
        })
        .collect()
}

/// The colour of line `i` of `n`, from the shared palette.
pub(super) fn palette(i: usize, n: usize) -> RGBAColor {
    let (r, g, b) = roce_capture::palette::series(i, n);
    RGBColor(r, g, b).to_rgba()
}

pub(super) type DrawResult<DB> =
    Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

pub(super) fn message<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    lines: &[&str],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    root.draw(&Text::new(
        title.to_string(),
        (30, 30),
        (FONT, 24).into_font(),
    ))?;
    for (i, l) in lines.iter().enumerate() {
        root.draw(&Text::new(
            l.to_string(),
            (30, 80 + 26 * i as i32),
            (FONT, 17).into_font(),
        ))?;
    }
    Ok(())
}

/// How a legend row marks its series.
#[derive(Clone, Copy)]
pub(super) enum Mark {
    Line(RGBAColor, u32),
    Circle(RGBColor),
    /// A hollow circle: a series that others may cover.
    Ring(RGBColor),
    Triangle(RGBColor),
    Cross(RGBColor),
}

/// Splits `root` into the chart and a column on its right for the legend,
/// as wide as the longest name needs (at most a third of the picture), so
/// that the legend never covers data.
pub(super) fn with_legend_column<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    names: &[&str],
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let (w, _) = root.dim_in_pixel();
    let chars = names.iter().map(|n| n.chars().count()).max().unwrap_or(0) as u32;
    let legend_w = if names.is_empty() {
        0
    } else {
        (chars * 9 + 44).clamp(120, w / 3)
    };
    root.split_horizontally(w - legend_w)
}

/// One row per series, top down, in the column beside the chart.
pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    rows: &[(String, Mark)],
) -> DrawResult<DB> {
    const TOP: i32 = 52;
    const ROW: i32 = 22;
    let (w, h) = area.dim_in_pixel();
    let fit = ((h as i32 - TOP - ROW) / ROW).max(1) as usize;
    let font = (FONT, 15).into_font();
    // Names longer than the column are cut with an ellipsis.
    let max_chars = ((w as i32 - 40) / 8).max(4) as usize;
    for (i, (name, mark)) in rows.iter().take(fit).enumerate() {
        let y = TOP + i as i32 * ROW;
        match *mark {
            Mark::Line(c, width) => area.draw(&PathElement::new(
                vec![(4, y), (26, y)],
                c.stroke_width(width),
            ))?,
            Mark::Circle(c) => area.draw(&Circle::new((15, y), 4, c.filled()))?,
            Mark::Ring(c) => area.draw(&Circle::new((15, y), 5, c.stroke_width(2)))?,
            Mark::Triangle(c) => area.draw(&TriangleMarker::new((15, y), 5, c.filled()))?,
            Mark::Cross(c) => area.draw(&Cross::new((15, y), 4, c.stroke_width(2)))?,
        }
        let text = if name.chars().count() > max_chars {
            let cut: String = name.chars().take(max_chars - 1).collect();
            format!("{cut}…")
        } else {
            name.clone()
        };
        area.draw(&Text::new(text, (32, y - 7), font.clone()))?;
    }
    if rows.len() > fit {
        let y = TOP + fit as i32 * ROW;
        area.draw(&Text::new(
            format!("... {} more", rows.len() - fit),
            (32, y - 7),
            font,
        ))?;
    }
    Ok(())
}

/// The unit that shows the digits of rates up to `max_gbps`: its name and
/// the factor from Gb/s.
pub(super) fn rate_unit(max_gbps: f64) -> (&'static str, f64) {
    if max_gbps >= 1.0 {
        ("Gb/s", 1.0)
    } else if max_gbps >= 1e-3 {
        ("Mb/s", 1e3)
    } else if max_gbps >= 1e-6 {
        ("kb/s", 1e6)
    } else {
        ("b/s", 1e9)
    }
}

/// `lines` in Gb/s rescaled to the unit that shows them best; returns the unit.
pub(super) fn in_rate_unit<'a>(lines: impl IntoIterator<Item = &'a mut Line>) -> &'static str {
    let mut lines: Vec<&mut Line> = lines.into_iter().collect();
    let max = lines
        .iter()
        .flat_map(|l| l.pts.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    let (unit, k) = rate_unit(max);
    for l in lines.iter_mut() {
        for p in &mut l.pts {
            p.1 *= k;
        }
    }
    unit
}

pub(super) fn line_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    x_max: f64,
    lines: &[Line],
) -> DrawResult<DB> {
    line_chart_to(root, title, x_label, y_label, (x_max, None), lines)
}

/// The highest point of `lines`, with a tenth of head room (1 when all
/// are 0): the top of a chart's y axis.
pub(super) fn y_top<'a>(lines: impl IntoIterator<Item = &'a Line>) -> f64 {
    let y_max = lines
        .into_iter()
        .flat_map(|l| l.pts.iter().map(|p| p.1))
        .fold(0.0f64, f64::max);
    if y_max > 0.0 { y_max * 1.1 } else { 1.0 }
}

/// A line chart from 0 to `x_max` and from 0 to `y_max` (by default, what
/// [`y_top`] says of these lines), for panels that share their axes.
pub(super) fn line_chart_to<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    (x_max, y_max): (f64, Option<f64>),
    lines: &[Line],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let y_max = y_max.unwrap_or_else(|| y_top(lines));
    // Unnamed lines (a panel whose title names its one line) get no
    // legend, and the chart the legend's column.
    let names: Vec<&str> = lines
        .iter()
        .map(|l| l.name.as_str())
        .filter(|n| !n.is_empty())
        .collect();
    let (plot_area, legend_area) = with_legend_column(root, &names);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, (FONT, 22))
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(0.0..x_max.max(1e-9), 0.0..y_max)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()?;
    let mut legend = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let color = l.color.unwrap_or_else(|| palette(i, lines.len()));
        // Earlier lines wider, so a later line on top does not hide them.
        let width = if i == 0 && lines.len() > 1 { 4 } else { 2 };
        chart.draw_series(LineSeries::new(
            l.pts.iter().copied(),
            color.stroke_width(width),
        ))?;
        if !l.name.is_empty() {
            legend.push((l.name.clone(), Mark::Line(color, 3)));
        }
    }
    draw_legend(&legend_area, &legend)
}

pub(super) struct TimeSequenceGraph<'a> {
    pub(super) title: String,
    /// Only points in [from, to] (ns since the epoch), for a zoomed view.
    pub(super) window: Option<(u64, u64)>,
    pub(super) originals: &'a [(u64, i64)],
    pub(super) retransmissions: &'a [(u64, i64)],
    pub(super) acks: &'a [(u64, i64)],
    pub(super) naks: &'a [(u64, i64)],
    pub(super) stride: u64,
}

pub(super) fn tsg_chart<'a, DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ax: &TimeAxis,
    t: &TimeSequenceGraph<'a>,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let inside = |p: &&(u64, i64)| t.window.is_none_or(|(a, b)| p.0 >= a && p.0 <= b);
    let all = || {
        t.originals
            .iter()
            .chain(t.retransmissions)
            .chain(t.acks)
            .chain(t.naks)
            .filter(inside)
    };
    let base = all().map(|p| p.1).min().unwrap_or(0);
    let top = all().map(|p| p.1).max().unwrap_or(0) - base;
    let x0 = all().map(|p| ax.x(p.0)).fold(f64::MAX, f64::min);
    let x1 = all().map(|p| ax.x(p.0)).fold(0.0f64, f64::max);
    let pad = ((x1 - x0) * 0.02).max(1e-3);
    let blue = RGBColor(30, 90, 200);
    let red = RGBColor(220, 30, 30);
    let green = RGBColor(20, 150, 60);
    let orange = RGBColor(240, 140, 0);
    let sample = if t.stride > 1 {
        format!(" (1 in {})", t.stride)
    } else {
        String::new()
    };
    let legend = [
        ("NAK / RNR NAK (PSN)".to_string(), Mark::Triangle(orange)),
        (format!("first transmission{sample}"), Mark::Circle(blue)),
        ("ACK (PSN acknowledged)".to_string(), Mark::Cross(green)),
        ("retransmission".to_string(), Mark::Ring(red)),
    ];
    let names: Vec<&str> = legend.iter().map(|(n, _)| n.as_str()).collect();
    let (plot_area, legend_area) = with_legend_column(root, &names);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(&t.title, (FONT, 20))
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d((x0 - pad).max(0.0)..x1 + pad, -1i64..top + 2)?;
    let pts = |v: &'a [(u64, i64)]| v.iter().filter(inside);
    chart
        .configure_mesh()
        .x_desc(ax.label())
        .y_desc(format!("PSN - {} (unwrapped)", base.rem_euclid(1 << 24)))
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()?;
    chart.draw_series(
        pts(t.originals).map(|&(ts, p)| Circle::new((ax.x(ts), p - base), 2, blue.filled())),
    )?;
    chart.draw_series(
        pts(t.acks).map(|&(ts, p)| Cross::new((ax.x(ts), p - base), 3, green.stroke_width(1))),
    )?;
    // Rings: a resent PSN reads as one in grey too, where red and blue
    // dots are alike.
    chart.draw_series(
        pts(t.retransmissions)
            .map(|&(ts, p)| Circle::new((ax.x(ts), p - base), 4, red.stroke_width(2))),
    )?;
    // NAKs last, over the resends they cause (the first of which has the
    // NAK's PSN, at nearly its time).
    chart.draw_series(
        pts(t.naks).map(|&(ts, p)| TriangleMarker::new((ax.x(ts), p - base), 7, orange.filled())),
    )?;
    draw_legend(&legend_area, &legend)
}

pub(super) fn pfc_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    ax: &TimeAxis,
    s: &SeriesSet,
) -> DrawResult<DB> {
    let rows: Vec<PauseRow> = s
        .pauses
        .iter()
        .enumerate()
        .map(|(row, p)| {
            let file = p.file.rsplit('/').next().unwrap_or(&p.file);
            PauseRow {
                label: match p.priority {
                    Some(prio) => format!("{file} {} prio {prio}", p.src_mac),
                    None => format!("{file} {} 802.3x", p.src_mac),
                },
                intervals: p
                    .intervals
                    .iter()
                    .map(|&(a, b)| (ax.x(a), ax.x(b)))
                    .collect(),
                color: palette(row, s.pauses.len()),
            }
        })
        .collect();
    pause_chart(
        root,
        "PFC / PAUSE: paused intervals per file, sender and priority",
        ax,
        &ax.label(),
        &rows,
    )
}

/// One row of a pause timeline: its label, its paused intervals on the
/// time axis, its colour.
#[derive(Clone)]
pub(super) struct PauseRow {
    pub(super) label: String,
    pub(super) intervals: Vec<(f64, f64)>,
    pub(super) color: RGBAColor,
}

/// Paused intervals, one row each, over the time axis `ax` (labelled
/// `x_label`; zoomed in on the pauses when they fill under a tenth of it).
pub(super) fn pause_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    ax: &TimeAxis,
    x_label: &str,
    pauses: &[PauseRow],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let rows: Vec<&str> = pauses.iter().map(|p| p.label.as_str()).collect();
    let n = rows.len() as u32;
    // Pauses often fill a sliver of the capture: show the stretch from the
    // first to the last pause when it is under a tenth of the whole.
    let lo = pauses
        .iter()
        .flat_map(|p| p.intervals.iter().map(|i| i.0))
        .fold(f64::MAX, f64::min);
    let hi = pauses
        .iter()
        .flat_map(|p| p.intervals.iter().map(|i| i.1))
        .fold(0.0f64, f64::max);
    let (x0, x1, title) = if hi > lo && (hi - lo) * 10.0 < ax.span {
        // At least a millionth of the position: a sliver far from the
        // origin (hostile timestamps) is otherwise below f64 resolution.
        let pad = ((hi - lo) * 0.05).max(hi.abs() * 1e-6);
        (
            (lo - pad).max(0.0),
            hi + pad,
            format!("{title} (zoomed on the pauses)"),
        )
    } else {
        (0.0, ax.span.max(1e-9), title.to_string())
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, (FONT, 22))
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(290)
        .build_cartesian_2d(x0..x1, (0..n.saturating_sub(1)).into_segmented())?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_labels(rows.len())
        .y_label_formatter(&|v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => rows
                .get(*i as usize)
                .map(|s| s.to_string())
                .unwrap_or_default(),
            _ => String::new(),
        })
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 16))
        .draw()?;
    // A pause shorter than a pixel still shows as a thin bar.
    let min_w = (x1 - x0) / 400.0;
    for (row, p) in pauses.iter().enumerate() {
        let row = row as u32;
        chart.draw_series(p.intervals.iter().map(|&(a, b)| {
            // plotters overflows an i32 on a coordinate far off the chart.
            let x0r = a.clamp(x0, x1);
            let x1r = b.max(x0r + min_w).clamp(x0, x1);
            Rectangle::new(
                [
                    (x0r, SegmentValue::Exact(row)),
                    (x1r, SegmentValue::Exact(row + 1)),
                ],
                p.color.filled(),
            )
        }))?;
    }
    Ok(())
}
