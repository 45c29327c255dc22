//! The pictures of `roce-pcap compare`: A and B on shared axes, A always
//! blue and B always orange, each side's time counted from its own first
//! frame.
//!
//! ```text
//!  compare_goodput   goodput of all flows over time, A and B
//!  compare_slaves    RoCE payload per slave over time, one panel per slave (i-th of A beside i-th of B)
//!  compare_tsg       PSN time-sequence of one flow, from its first packet, A over B
//!  compare_pfc       paused intervals per capture, sender and priority, A's rows then B's
//!  compare_ecn_cnp   ECN-CE marks and CNPs per second, one panel each
//! ```

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::chart::*;
// The prelude has a DrawResult of its own.
use super::chart::DrawResult;
use super::{FONT, PlotError, Sink, draw_err, register_embedded_font};
use crate::analyze::series::{Bins, Points};
use crate::analyze::{Analysis, FlowSeries};
use crate::compare::{Comparison, FlowSide};
use crate::flags::Analyzed;

/// A's colour in every picture and page.
pub const A_COLOR: RGBColor = RGBColor(31, 119, 180);
/// B's colour.
pub const B_COLOR: RGBColor = RGBColor(230, 110, 0);

/// The pictures' names, in the order they are drawn.
pub const NAMES: [&str; 5] = [
    "compare_goodput",
    "compare_slaves",
    "compare_tsg",
    "compare_pfc",
    "compare_ecn_cnp",
];

/// Writes the comparison's pictures into `out`; returns the file names.
pub fn plot(
    a: &Analyzed,
    b: &Analyzed,
    c: &Comparison,
    flow: Option<usize>,
    out: &Path,
) -> Result<Vec<String>, PlotError> {
    super::write_dir(out, |sink| draw_all(a, b, c, flow, sink))
}

/// The SVG text of the comparison's pictures, by name, for a page.
pub(crate) fn svgs(
    a: &Analyzed,
    b: &Analyzed,
    c: &Comparison,
    flow: Option<usize>,
) -> Result<Vec<(String, String)>, PlotError> {
    register_embedded_font();
    let mut sink = Sink::svg_only();
    draw_all(a, b, c, flow, &mut sink)?;
    Ok(sink.svgs)
}

/// The row of the flow table whose time-sequence is drawn: `flow`, else
/// the matched flow with the most packets, else the first row.
pub fn tsg_row(c: &Comparison, flow: Option<usize>) -> Option<usize> {
    if flow.is_some() {
        return flow.filter(|&n| n < c.flows.len());
    }
    let packets = |s: &Option<FlowSide>| s.as_ref().map_or(0, |s| s.figures.packets);
    c.flows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.a.is_some() && r.b.is_some())
        .max_by_key(|(i, r)| (packets(&r.a) + packets(&r.b), std::cmp::Reverse(*i)))
        .map(|(i, _)| i)
        .or((!c.flows.is_empty()).then_some(0))
}

/// One side as the pictures need it.
struct Side<'a> {
    name: String,
    color: RGBAColor,
    analysis: &'a Analysis,
    first: u64,
}

impl<'a> Side<'a> {
    fn new(label: &str, input: &str, a: &'a Analyzed, color: RGBColor) -> Side<'a> {
        let short = input.trim_end_matches('/');
        let short = short.rsplit('/').next().unwrap_or(short);
        Side {
            name: format!("{label} {short}"),
            color: color.to_rgba(),
            analysis: &a.analysis,
            first: a.analysis.report.capture.first_ts_ns.unwrap_or(0),
        }
    }

    fn span(&self) -> u64 {
        let r = &self.analysis.report.capture;
        r.last_ts_ns
            .unwrap_or(self.first)
            .saturating_sub(self.first)
    }

    fn series(&self) -> Result<&'a crate::analyze::SeriesSet, PlotError> {
        self.analysis.series.as_ref().ok_or(PlotError::NoSeries)
    }
}

/// Lines of series that each start at their own side's first frame, on one
/// bin grid over `span_ns` (so that their rates compare bin for bin).
fn side_lines(
    rows: &[(String, RGBAColor, u64, &Bins)],
    ax: &TimeAxis,
    span_ns: u64,
    scale: f64,
) -> Vec<Line> {
    rows.iter()
        .map(|(name, color, first, b)| {
            let (start, w, n) = grid(rows.iter().map(|r| r.3), *first, first + span_ns.max(1));
            let sx = ax.from(*first);
            Line {
                name: name.clone(),
                color: Some(*color),
                pts: b
                    .rebin(start, w, n)
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| (sx.x(start + i as u64 * w), v * scale / w as f64))
                    .collect(),
            }
        })
        .collect()
}

fn draw_all(
    a: &Analyzed,
    b: &Analyzed,
    c: &Comparison,
    flow: Option<usize>,
    sink: &mut Sink,
) -> Result<(), PlotError> {
    let sides = [
        Side::new("A", &c.a.input, a, A_COLOR),
        Side::new("B", &c.b.input, b, B_COLOR),
    ];
    let sets = [sides[0].series()?, sides[1].series()?];
    let span = sides[0].span().max(sides[1].span()).max(1);
    let ax = TimeAxis::new(0, span);

    // Goodput of all flows.
    let totals: Vec<Bins> = sets
        .iter()
        .map(|s| sum_bins(s.flows.iter().map(|f| &f.goodput)))
        .collect();
    let rows: Vec<(String, RGBAColor, u64, &Bins)> = sides
        .iter()
        .zip(&totals)
        .map(|(s, t)| (s.name.clone(), s.color, s.first, t))
        .collect();
    let mut lines = side_lines(&rows, &ax, span, 8.0);
    let unit = in_rate_unit(&mut lines);
    both!(sink, NAMES[0], |root| line_chart(
        &root,
        "Goodput of all request flows (first transmissions), A and B",
        &format!("time since the side's first frame ({})", ax.unit),
        unit,
        ax.span,
        &lines
    ));

    // Per slave, one panel each, on one y axis.
    let n_slaves = sets[0].files.len().max(sets[1].files.len()).max(1);
    let mut panels: Vec<(String, Vec<Line>)> = Vec::new();
    for i in 0..n_slaves {
        let rows: Vec<(String, RGBAColor, u64, &Bins)> = sides
            .iter()
            .zip(&sets)
            .filter_map(|(s, set)| {
                let (name, bins) = set.files.get(i)?;
                let file = name.rsplit('/').next().unwrap_or(name);
                Some((format!("{}: {file}", s.name), s.color, s.first, bins))
            })
            .collect();
        panels.push((format!("slave {i}"), side_lines(&rows, &ax, span, 8.0)));
    }
    let unit = in_rate_unit(panels.iter_mut().flat_map(|p| p.1.iter_mut()));
    let y_max = y_top(panels.iter().flat_map(|p| p.1.iter()));
    let height = 120 + 240 * panels.len() as u32;
    both!(sink, NAMES[1], (1100, height), |root| {
        root.fill(&WHITE).and_then(|()| {
            let areas = root.split_evenly((panels.len(), 1));
            for (area, (title, lines)) in areas.iter().zip(&panels) {
                line_chart_to(
                    area,
                    &format!("RoCE payload on {title} (A and B)"),
                    &format!("time since the side's first frame ({})", ax.unit),
                    unit,
                    (ax.span, Some(y_max)),
                    lines,
                )?;
            }
            Ok(())
        })
    });

    // The chosen flow's PSN time-sequence.
    let row = tsg_row(c, flow);
    let tsgs: Vec<Tsg> = row
        .map(|r| {
            let fr = &c.flows[r];
            [(&fr.a, 0), (&fr.b, 1)]
                .into_iter()
                .filter_map(|(fs, k)| {
                    let fs = fs.as_ref()?;
                    let series = sets[k].flows.iter().find(|f| f.qp == fs.qp)?;
                    Some(Tsg::new(&sides[k], fs, series))
                })
                .collect()
        })
        .unwrap_or_default();
    both!(sink, NAMES[2], |root| {
        match row {
            Some(r) if !tsgs.is_empty() => tsg_compare(&root, r, &tsgs),
            _ => message(
                &root,
                "PSN time-sequence",
                &["No request flow on either side."],
            ),
        }
    });

    // Pauses.
    let pauses: Vec<PauseRow> = sides
        .iter()
        .zip(&sets)
        .flat_map(|(s, set)| {
            let sx = ax.from(s.first);
            set.pauses.iter().map(move |p| {
                let file = p.file.rsplit('/').next().unwrap_or(&p.file);
                PauseRow {
                    label: match p.priority {
                        Some(prio) => format!("{} {file} {} prio {prio}", &s.name[..1], p.src_mac),
                        None => format!("{} {file} {} 802.3x", &s.name[..1], p.src_mac),
                    },
                    intervals: p
                        .intervals
                        .iter()
                        .map(|&(a, b)| (sx.x(a), sx.x(b)))
                        .collect(),
                    color: s.color,
                }
            })
        })
        .collect();
    both!(sink, NAMES[3], |root| {
        if pauses.is_empty() {
            message(
                &root,
                "PFC / PAUSE, A and B",
                &[
                    "No PFC or PAUSE frames in A or B.",
                    "Host NICs usually consume PFC frames before a host capture sees them:",
                    "capture at the switch, or read the NIC's pause counters (ethtool -S).",
                ],
            )
        } else {
            pause_chart(
                &root,
                "PFC / PAUSE: A's rows (blue), then B's (orange)",
                &ax,
                &pauses,
            )
        }
    });

    // ECN-CE marks and CNPs, one panel each.
    let ecn = |pick: fn(&crate::analyze::SeriesSet) -> &Bins| {
        let rows: Vec<(String, RGBAColor, u64, &Bins)> = sides
            .iter()
            .zip(&sets)
            .map(|(s, set)| (s.name.clone(), s.color, s.first, pick(set)))
            .collect();
        side_lines(&rows, &ax, span, 1e9)
    };
    let ce = ecn(|s| &s.ecn_ce);
    let cnps = ecn(|s| &s.cnps);
    both!(sink, NAMES[4], (1100, 840), |root| {
        root.fill(&WHITE).and_then(|()| {
            let areas = root.split_evenly((2, 1));
            let x = format!("time since the side's first frame ({})", ax.unit);
            line_chart(
                &areas[0],
                "ECN-CE marked packets, A and B",
                &x,
                "per second",
                ax.span,
                &ce,
            )?;
            line_chart(&areas[1], "CNPs, A and B", &x, "per second", ax.span, &cnps)
        })
    });
    Ok(())
}

/// One side's PSN time-sequence of a flow, from the flow's first packet.
struct Tsg {
    name: String,
    flow: String,
    color: RGBColor,
    first_ns: u64,
    base_psn: i64,
    originals: Vec<(u64, i64)>,
    retransmissions: Vec<(u64, i64)>,
    naks: Vec<(u64, i64)>,
    stride: u64,
}

impl Tsg {
    fn new(side: &Side<'_>, fs: &FlowSide, s: &FlowSeries) -> Tsg {
        let pts = |p: &Points| p.pts.clone();
        let all = s.originals.pts.iter().chain(&s.retransmissions.pts);
        Tsg {
            name: side.name.clone(),
            flow: fs.flow.clone(),
            color: if side.name.starts_with('A') {
                A_COLOR
            } else {
                B_COLOR
            },
            first_ns: side.first + fs.figures.first_ns.unwrap_or(0),
            base_psn: all.map(|p| p.1).min().unwrap_or(0),
            originals: pts(&s.originals),
            retransmissions: pts(&s.retransmissions),
            naks: pts(&s.naks),
            stride: s.originals.stride(),
        }
    }
}

/// The flow's name, or A's and B's when they differ.
fn tsg_flows(tsgs: &[Tsg]) -> String {
    match tsgs {
        [a, b] if a.flow != b.flow => format!("A: {}    B: {}", a.flow, b.flow),
        [one, ..] => one.flow.clone(),
        [] => String::new(),
    }
}

fn tsg_compare<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    row: usize,
    tsgs: &[Tsg],
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
    let x_of = |t: &Tsg, ts: u64| ts.saturating_sub(t.first_ns);
    let span = tsgs
        .iter()
        .flat_map(|t| {
            t.originals
                .iter()
                .chain(&t.retransmissions)
                .map(move |p| x_of(t, p.0))
        })
        .max()
        .unwrap_or(1)
        .max(1);
    let ax = TimeAxis::new(0, span);
    let top = tsgs
        .iter()
        .flat_map(|t| {
            t.originals
                .iter()
                .chain(&t.retransmissions)
                .map(move |p| p.1 - t.base_psn)
        })
        .max()
        .unwrap_or(0);
    // A first, in hollow rings, so that B's dots on the same spot leave it
    // visible.
    let mut legend = Vec::new();
    for (k, t) in tsgs.iter().enumerate() {
        let sample = if t.stride > 1 {
            format!(" (1 in {})", t.stride)
        } else {
            String::new()
        };
        let first = if k == 0 && tsgs.len() > 1 {
            Mark::Ring(t.color)
        } else {
            Mark::Circle(t.color)
        };
        legend.push((format!("{}: first transmission{sample}", t.name), first));
        legend.push((format!("{}: retransmission", t.name), Mark::Cross(t.color)));
        legend.push((format!("{}: NAK (PSN)", t.name), Mark::Triangle(t.color)));
    }
    let (head, body) = root.split_vertically(64);
    head.draw(&Text::new(
        format!("PSN time-sequence of flow #{row}, A and B"),
        (20, 10),
        (FONT, 20).into_font(),
    ))?;
    head.draw(&Text::new(
        tsg_flows(tsgs),
        (20, 38),
        (FONT, 14).into_font(),
    ))?;
    let names: Vec<&str> = legend.iter().map(|(n, _)| n.as_str()).collect();
    let (plot_area, legend_area) = with_legend_column(&body, &names);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(0.0..ax.span * 1.02, -1i64..top + 2)?;
    chart
        .configure_mesh()
        .x_desc(format!("time since the flow's first packet ({})", ax.unit))
        .y_desc("PSN - the flow's first PSN (unwrapped)")
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()?;
    for (k, t) in tsgs.iter().enumerate() {
        let at = |&(ts, p): &(u64, i64)| (ax.x(x_of(t, ts)), p - t.base_psn);
        if k == 0 && tsgs.len() > 1 {
            chart.draw_series(
                t.originals
                    .iter()
                    .map(|p| Circle::new(at(p), 5, t.color.stroke_width(2))),
            )?;
        } else {
            chart.draw_series(
                t.originals
                    .iter()
                    .map(|p| Circle::new(at(p), 2, t.color.filled())),
            )?;
        }
        chart.draw_series(
            t.retransmissions
                .iter()
                .map(|p| Cross::new(at(p), 5, t.color.stroke_width(2))),
        )?;
        chart.draw_series(
            t.naks
                .iter()
                .map(|p| TriangleMarker::new(at(p), 6, t.color.filled())),
        )?;
    }
    draw_legend(&legend_area, &legend)
}
