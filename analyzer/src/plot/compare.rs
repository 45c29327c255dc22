//! The pictures of `roce-pcap compare`: A always dark blue and B always
//! orange (apart in greyscale too), each side's time counted from its own
//! first frame. Two sides of like length share one time axis; when one
//! lasts more than [`SEPARATE_RATIO`] times the other (a 13 ms simulation
//! beside a 21 s capture) the shorter would be a sliver at the left edge,
//! so each side gets a panel and a time axis of its own, A above or left of
//! B, on one y scale, and a line above the panels says so.
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
use super::{FONT, PlotError, SIZE, Sink, draw_err, register_embedded_font};
use crate::analyze::series::{Bins, Points};
use crate::analyze::{Analysis, FlowSeries};
use crate::compare::{Comparison, FlowSide};
use crate::flags::Analyzed;

/// A's colour in every picture and page: a dark blue, far from B's orange
/// in lightness too (L* 35 against 60), so that a greyscale print keeps
/// them apart.
pub const A_COLOR: RGBColor = RGBColor(20, 80, 160);
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

/// How many times longer than the other a side must last to get a time
/// axis of its own.
pub const SEPARATE_RATIO: u64 = 4;

/// Whether two sides lasting `a` and `b` ns get a time axis each.
pub fn separate_axes(a: u64, b: u64) -> bool {
    let (short, long) = (a.min(b).max(1), a.max(b).max(1));
    long > short.saturating_mul(SEPARATE_RATIO)
}

/// The line that states the time axes' choice above every picture.
fn axes_note(sides: &[Side<'_>; 2], separate: bool) -> String {
    let brief = |s: &Side<'_>| roce_capture::human::duration_brief(s.span());
    if separate {
        format!(
            "A lasts {}, B {}: each side on its own time axis, from its own first frame",
            brief(&sides[0]),
            brief(&sides[1])
        )
    } else {
        format!(
            "A lasts {}, B {}: both on one time axis, each from its own first frame",
            brief(&sides[0]),
            brief(&sides[1])
        )
    }
}

/// Draws `note` in a strip at the top of `root`; returns the rest.
fn with_note<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    note: &str,
) -> Result<DrawingArea<DB, Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (head, body) = root.split_vertically(30);
    head.draw(&Text::new(
        note.to_string(),
        (20, 10),
        (FONT, 15).into_font().color(&RGBColor(60, 60, 60)),
    ))?;
    Ok(body)
}

/// The x axis label of a side drawn on its own axis.
fn own_axis_label(side: &Side<'_>, ax: &TimeAxis) -> String {
    format!("time since {}'s first frame ({})", &side.name[..1], ax.unit)
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
    let separate = separate_axes(sides[0].span(), sides[1].span());
    let note = axes_note(&sides, separate);
    // Each side's own axis and span, for panels of their own.
    let own: Vec<(TimeAxis, u64)> = sides
        .iter()
        .map(|s| (TimeAxis::new(0, s.span().max(1)), s.span().max(1)))
        .collect();
    let shared_x = format!("time since each side's first frame ({})", ax.unit);
    // Lines of `rows` (name, colour, side, series), on one axis (all in
    // the first list) or each on its side's own (a list per side).
    let lines_of = |rows: &[(String, RGBAColor, usize, &Bins)], scale: f64| -> [Vec<Line>; 2] {
        let timed = |k: Option<usize>| -> Vec<(String, RGBAColor, u64, &Bins)> {
            rows.iter()
                .filter(|r| k.is_none_or(|k| r.2 == k))
                .map(|r| (r.0.clone(), r.1, sides[r.2].first, r.3))
                .collect()
        };
        if separate {
            let side = |k: usize| side_lines(&timed(Some(k)), &own[k].0, own[k].1, scale);
            [side(0), side(1)]
        } else {
            [side_lines(&timed(None), &ax, span, scale), Vec::new()]
        }
    };

    // Goodput of all flows.
    let totals: Vec<Bins> = sets
        .iter()
        .map(|s| sum_bins(s.flows.iter().map(|f| &f.goodput)))
        .collect();
    let rows: Vec<(String, RGBAColor, usize, &Bins)> = sides
        .iter()
        .zip(&totals)
        .enumerate()
        .map(|(k, (s, t))| (s.name.clone(), s.color, k, t))
        .collect();
    let mut lines = lines_of(&rows, 8.0);
    let unit = in_rate_unit(lines.iter_mut().flatten());
    let y_max = y_top(lines.iter().flatten());
    let title = "Goodput of all request flows (first transmissions)";
    let y_label = format!("goodput ({unit})");
    let size = if separate { (1100, 880) } else { SIZE };
    both!(sink, NAMES[0], size, |root| {
        with_note(&root, &note).and_then(|body| {
            if separate {
                let areas = body.split_evenly((2, 1));
                for (k, area) in areas.iter().enumerate() {
                    line_chart_to(
                        area,
                        &format!("{title}, {}", sides[k].name),
                        &own_axis_label(&sides[k], &own[k].0),
                        &y_label,
                        (own[k].0.span, Some(y_max)),
                        &lines[k],
                    )?;
                }
                Ok(())
            } else {
                line_chart(
                    &body,
                    &format!("{title}, A and B"),
                    &shared_x,
                    &y_label,
                    ax.span,
                    &lines[0],
                )
            }
        })
    });

    // Per slave, one panel each (one per side and slave on own axes), on
    // one y axis.
    let n_slaves = sets[0].files.len().max(sets[1].files.len()).max(1);
    let mut panels: Vec<(String, [Vec<Line>; 2])> = Vec::new();
    for i in 0..n_slaves {
        let rows: Vec<(String, RGBAColor, usize, &Bins)> = sides
            .iter()
            .zip(&sets)
            .enumerate()
            .filter_map(|(k, (s, set))| {
                let (name, bins) = set.files.get(i)?;
                let file = name.rsplit('/').next().unwrap_or(name);
                // A side that is one capture is named after it already.
                let name = if s.name.ends_with(&format!(" {file}")) {
                    s.name.clone()
                } else {
                    format!("{}: {file}", s.name)
                };
                Some((name, s.color, k, bins))
            })
            .collect();
        panels.push((format!("slave {i}"), lines_of(&rows, 8.0)));
    }
    let unit = in_rate_unit(panels.iter_mut().flat_map(|p| p.1.iter_mut().flatten()));
    let y_max = y_top(panels.iter().flat_map(|p| p.1.iter().flatten()));
    let y_label = format!("RoCE payload ({unit})");
    let height = 150 + 240 * panels.len() as u32;
    both!(sink, NAMES[1], (1100, height), |root| {
        with_note(&root, &note).and_then(|body| {
            if separate {
                let areas = body.split_evenly((panels.len(), 2));
                for (i, (title, lines)) in panels.iter().enumerate() {
                    for k in 0..2 {
                        // One line per panel: its title names it, so the
                        // panel needs no legend column.
                        let name = lines[k].first().map_or_else(
                            || format!("{}: no capture", sides[k].name),
                            |l| l.name.clone(),
                        );
                        let unnamed = unnamed(&lines[k]);
                        line_chart_to(
                            &areas[2 * i + k],
                            &format!("{title}, {name}"),
                            &own_axis_label(&sides[k], &own[k].0),
                            &y_label,
                            (own[k].0.span, Some(y_max)),
                            &unnamed,
                        )?;
                    }
                }
            } else {
                let areas = body.split_evenly((panels.len(), 1));
                for (area, (title, lines)) in areas.iter().zip(&panels) {
                    line_chart_to(
                        area,
                        &format!("RoCE payload on {title} (A and B)"),
                        &shared_x,
                        &y_label,
                        (ax.span, Some(y_max)),
                        &lines[0],
                    )?;
                }
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
    let tsg_separate = match &tsgs[..] {
        [a, b] => separate_axes(a.span(), b.span()),
        _ => false,
    };
    let size = if tsg_separate { (1100, 960) } else { SIZE };
    both!(sink, NAMES[2], size, |root| {
        match row {
            Some(r) if !tsgs.is_empty() => tsg_compare(&root, r, &tsgs, tsg_separate),
            _ => message(
                &root,
                "PSN time-sequence",
                &["No request flow on either side."],
            ),
        }
    });

    // Pauses: one chart, or one per side that paused on its own axis.
    let pause_rows = |k: usize, sx: TimeAxis| -> Vec<PauseRow> {
        let s = &sides[k];
        sets[k]
            .pauses
            .iter()
            .map(|p| {
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
            .collect()
    };
    let by_side: Vec<Vec<PauseRow>> = (0..2)
        .map(|k| {
            let axis = if separate { own[k].0 } else { ax };
            pause_rows(k, axis.from(sides[k].first))
        })
        .collect();
    let paused: Vec<usize> = (0..2).filter(|&k| !by_side[k].is_empty()).collect();
    let joined: Vec<PauseRow> = by_side.iter().flatten().cloned().collect();
    let size = if separate && paused.len() == 2 {
        (1100, 900)
    } else {
        SIZE
    };
    both!(sink, NAMES[3], size, |root| {
        if paused.is_empty() {
            message(
                &root,
                "PFC / PAUSE, A and B",
                &[
                    "No PFC or PAUSE frames in A or B.",
                    "Host NICs usually consume PFC frames before a host capture sees them:",
                    "capture at the switch, or read the NIC's pause counters (ethtool -S).",
                ],
            )
        } else if separate {
            with_note(&root, &note).and_then(|body| {
                let areas = body.split_evenly((paused.len(), 1));
                for (area, &k) in areas.iter().zip(&paused) {
                    let other = 1 - k;
                    let none = if by_side[other].is_empty() {
                        format!(" ({} has none)", &sides[other].name[..1])
                    } else {
                        String::new()
                    };
                    let title = format!("PFC / PAUSE of {}{none}", sides[k].name);
                    let label = own_axis_label(&sides[k], &own[k].0);
                    pause_chart(area, &title, &own[k].0, &label, &by_side[k])?;
                }
                Ok(())
            })
        } else {
            with_note(&root, &note).and_then(|body| {
                pause_chart(
                    &body,
                    "PFC / PAUSE: A's rows (blue), then B's (orange)",
                    &ax,
                    &shared_x,
                    &joined,
                )
            })
        }
    });

    // ECN-CE marks and CNPs, one panel each (and per side on own axes).
    let ecn = |pick: fn(&crate::analyze::SeriesSet) -> &Bins| {
        let rows: Vec<(String, RGBAColor, usize, &Bins)> = sides
            .iter()
            .zip(&sets)
            .enumerate()
            .map(|(k, (s, set))| (s.name.clone(), s.color, k, pick(set)))
            .collect();
        lines_of(&rows, 1e9)
    };
    let kinds = [
        ("ECN-CE marked packets", ecn(|s| &s.ecn_ce)),
        ("CNPs", ecn(|s| &s.cnps)),
    ];
    both!(sink, NAMES[4], (1100, 870), |root| {
        with_note(&root, &note).and_then(|body| {
            if separate {
                let areas = body.split_evenly((2, 2));
                for (i, (what, lines)) in kinds.iter().enumerate() {
                    let y_max = y_top(lines.iter().flatten());
                    for k in 0..2 {
                        let unnamed = unnamed(&lines[k]);
                        line_chart_to(
                            &areas[2 * i + k],
                            &format!("{what}, {}", sides[k].name),
                            &own_axis_label(&sides[k], &own[k].0),
                            "packets per second",
                            (own[k].0.span, Some(y_max)),
                            &unnamed,
                        )?;
                    }
                }
                Ok(())
            } else {
                let areas = body.split_evenly((2, 1));
                for (area, (what, lines)) in areas.iter().zip(&kinds) {
                    line_chart(
                        area,
                        &format!("{what}, A and B"),
                        &shared_x,
                        "packets per second",
                        ax.span,
                        &lines[0],
                    )?;
                }
                Ok(())
            }
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

impl Tsg {
    /// From the flow's first packet to its last transmission, in ns.
    fn span(&self) -> u64 {
        self.originals
            .iter()
            .chain(&self.retransmissions)
            .map(|p| p.0.saturating_sub(self.first_ns))
            .max()
            .unwrap_or(0)
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

/// The flow's PSN time-sequence, A and B: on one chart, A's points as
/// rings under B's dots, or, `separate`, A's chart above B's, each on the
/// time axis of its own side's flow, on one PSN scale.
fn tsg_compare<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    row: usize,
    tsgs: &[Tsg],
    separate: bool,
) -> DrawResult<DB> {
    root.fill(&WHITE)?;
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
    let (head, body) = root.split_vertically(if separate { 84 } else { 64 });
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
    if separate {
        let brief = |t: &Tsg| roce_capture::human::duration_brief(t.span());
        head.draw(&Text::new(
            format!(
                "A's flow lasts {}, B's {}: each on its own time axis, from its first packet",
                brief(&tsgs[0]),
                brief(&tsgs[1])
            ),
            (20, 60),
            (FONT, 15).into_font().color(&RGBColor(60, 60, 60)),
        ))?;
        let areas = body.split_evenly((tsgs.len(), 1));
        for (area, t) in areas.iter().zip(tsgs) {
            let ax = TimeAxis::new(0, t.span().max(1000));
            let x_label = format!(
                "time since {}'s first packet of the flow ({})",
                &t.name[..1],
                ax.unit
            );
            tsg_panel(area, &ax, &x_label, top, std::slice::from_ref(t))?;
        }
        Ok(())
    } else {
        // At least a microsecond: a flow of one packet spans nothing.
        let span = tsgs.iter().map(Tsg::span).max().unwrap_or(0).max(1000);
        let ax = TimeAxis::new(0, span);
        let x_label = format!("time since the flow's first packet ({})", ax.unit);
        tsg_panel(&body, &ax, &x_label, top, tsgs)
    }
}

/// One chart of [`tsg_compare`]: the points of `tsgs` on `ax`, PSNs from
/// each one's first up to `top`, A's as rings when B's are drawn over them.
fn tsg_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    ax: &TimeAxis,
    x_label: &str,
    top: i64,
    tsgs: &[Tsg],
) -> DrawResult<DB> {
    let x_of = |t: &Tsg, ts: u64| ts.saturating_sub(t.first_ns);
    let rings = tsgs.len() > 1;
    let mut legend = Vec::new();
    for (k, t) in tsgs.iter().enumerate() {
        let sample = if t.stride > 1 {
            format!(" (1 in {})", t.stride)
        } else {
            String::new()
        };
        let first = if k == 0 && rings {
            Mark::Ring(t.color)
        } else {
            Mark::Circle(t.color)
        };
        legend.push((format!("{}: first transmission{sample}", t.name), first));
        legend.push((format!("{}: retransmission", t.name), Mark::Cross(t.color)));
        legend.push((format!("{}: NAK (PSN)", t.name), Mark::Triangle(t.color)));
    }
    let names: Vec<&str> = legend.iter().map(|(n, _)| n.as_str()).collect();
    let (plot_area, legend_area) = with_legend_column(area, &names);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin(16)
        .x_label_area_size(45)
        .y_label_area_size(75)
        .build_cartesian_2d(0.0..ax.span * 1.02, -1i64..top + 2)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc("PSN - the flow's first PSN (unwrapped)")
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 17))
        .draw()?;
    for (k, t) in tsgs.iter().enumerate() {
        let at = |&(ts, p): &(u64, i64)| (ax.x(x_of(t, ts)), p - t.base_psn);
        if k == 0 && rings {
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

/// `lines` without their names: a panel that shows one side only says
/// whose it is in its title, and needs no legend column.
fn unnamed(lines: &[Line]) -> Vec<Line> {
    lines
        .iter()
        .map(|l| Line {
            name: String::new(),
            pts: l.pts.clone(),
            color: l.color,
        })
        .collect()
}
