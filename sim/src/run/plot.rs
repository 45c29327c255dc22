//! PNG and SVG plots with plotters. Text is drawn with the DejaVu Sans font
//! compiled into the binary (`assets/fonts/`, shared with roce-pcap), so
//! plots look the same on machines without system fonts.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use super::intervals::with_previous;
use super::shortlist::keep_most;
use crate::time::Ps;
use crate::world::{PortSample, QpSample, QpView, Role, World};

static FONT: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets/fonts/DejaVuSans.ttf"
));
static REGISTER: Once = Once::new();

pub(crate) fn fonts() {
    REGISTER.call_once(|| {
        // Registration fails only for a font ab_glyph cannot parse, which
        // the font test below rules out.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// One line of a plot.
#[derive(Clone)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Palette index; series that belong together share it.
    pub color: usize,
    /// Line width in pixels.
    pub width: u32,
    /// Marks every point with a dot (grid points of a sweep).
    pub markers: bool,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, color: usize) -> Series {
        Series {
            name: name.into(),
            points,
            color,
            width: 2,
            markers: false,
        }
    }
}

/// Draws `series` (x, y) as lines into `<dir>/<stem>.png` and `.svg`.
pub fn line_plot(
    dir: &Path,
    stem: &str,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), String> {
    line_plot_from(dir, stem, (title, x_label, y_label), series, None)
}

/// [`line_plot`] with its labels (title, x, y), its x axis starting at
/// `x_from` or before (where the lines start later than the time they are
/// read against).
fn line_plot_from(
    dir: &Path,
    stem: &str,
    labels: (&str, &str, &str),
    series: &[Series],
    x_from: Option<f64>,
) -> Result<(), String> {
    fonts();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    write_png(&png, (1000, 560), |root| draw(root, labels, series, x_from))?;
    {
        let root = SVGBackend::new(&svg, (1000, 560)).into_drawing_area();
        draw(&root, labels, series, x_from).map_err(|e| format!("{}: {e}", svg.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", svg.display()))?;
    }
    Ok(())
}

/// Draws a bitmap of `(w, h)` pixels with `draw` and writes it to `path`
/// as a PNG.
///
/// plotters' own writer (through `image`) filters each row five ways and
/// keeps the best. One filter for every row (Paeth) gives the same pixels
/// for 42 million fewer instructions in the 2:1 star, a fifth of the 237
/// million its outputs took, in files 3 % larger (Up or Sub, cheaper
/// still, made them three times larger). Encoded in memory, then written
/// in one call: a `BufWriter` dropped unflushed would lose an error.
pub(crate) fn write_png<E: std::error::Error + Send + Sync>(
    path: &Path,
    (w, h): (u32, u32),
    draw: impl FnOnce(&DrawingArea<BitMapBackend<'_>, Shift>) -> Result<(), DrawingAreaErrorKind<E>>,
) -> Result<(), String>
where
    for<'a> BitMapBackend<'a>: DrawingBackend<ErrorType = E>,
{
    let at = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let mut rgb = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        draw(&root).map_err(|e| at(&e))?;
        root.present().map_err(|e| at(&e))?;
    }
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fast);
    enc.set_filter(png::FilterType::Paeth);
    enc.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
    let mut out = enc.write_header().map_err(|e| at(&e))?;
    out.write_image_data(&rgb).map_err(|e| at(&e))?;
    out.finish().map_err(|e| at(&e))?;
    std::fs::write(path, bytes).map_err(|e| at(&e))
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (title, x_label, y_label): (&str, &str, &str),
    series: &[Series],
    x_from: Option<f64>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (mut x0, mut x1, mut y1) = (x_from.unwrap_or(f64::MAX), f64::MIN, 0.0f64);
    for s in series {
        for &(x, y) in &s.points {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    if x0 >= x1 {
        x0 = 0.0;
        x1 = x1.max(1.0);
    }
    // A long idle start (the reference's experiments wait 2 s for their
    // flows) would squeeze everything that moves into the right edge: the
    // axis then starts at the last point before anything moved.
    if let Some(start) = idle_until(series) {
        if start - x0 > (x1 - x0) / 2.0 {
            x0 = start;
        }
    }
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.1 };
    // The legend gets its own column right of the chart, so it never
    // covers a line (a legend inside the plot sat on the busiest corner).
    let named: Vec<&Series> = series.iter().filter(|s| !s.name.is_empty()).collect();
    let (w, _) = root.dim_in_pixel();
    let legend_w = if named.is_empty() {
        0
    } else {
        let chars = named
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0) as u32;
        (chars * 8 + 44).clamp(120, w / 3)
    };
    let (plot_area, legend_area) = root.split_horizontally(w - legend_w);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()?;
    for s in series {
        let color = Palette99::pick(s.color).to_rgba();
        let shown = || s.points.iter().copied().filter(|&(x, _)| x >= x0);
        chart.draw_series(LineSeries::new(shown(), color.stroke_width(s.width)))?;
        if s.markers {
            chart.draw_series(shown().map(|p| Circle::new(p, s.width + 2, color.filled())))?;
        }
    }
    if !named.is_empty() {
        draw_legend(&legend_area, &named)?;
    }
    Ok(())
}

/// The x of the last point before any series leaves 0, when one does
/// after some points at 0.
fn idle_until(series: &[Series]) -> Option<f64> {
    let first = series
        .iter()
        .filter_map(|s| s.points.iter().find(|p| p.1 != 0.0).map(|p| p.0))
        .reduce(f64::min)?;
    series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0).filter(|&x| x < first))
        .reduce(f64::max)
}

/// One row per named series, top down, beside the chart.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    named: &[&Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    const TOP: i32 = 52;
    const ROW: i32 = 20;
    let (_, h) = area.dim_in_pixel();
    let fit = ((h as i32 - TOP - ROW) / ROW).max(1) as usize;
    let font = ("sans-serif", 13).into_font();
    for (i, s) in named.iter().take(fit).enumerate() {
        let y = TOP + i as i32 * ROW;
        let color = Palette99::pick(s.color).to_rgba();
        area.draw(&PathElement::new(
            vec![(4, y), (26, y)],
            color.stroke_width(s.width),
        ))?;
        area.draw(&Text::new(s.name.clone(), (32, y - 7), font.clone()))?;
    }
    if named.len() > fit {
        let y = TOP + fit as i32 * ROW;
        area.draw(&Text::new(
            format!("... {} more", named.len() - fit),
            (32, y - 7),
            font,
        ))?;
    }
    Ok(())
}

/// Per-interval rates (Gb/s against time in `unit` seconds) of the
/// samples' `bytes`, one series per component, from samples stored in
/// blocks of `n` (one entry per component per sample time), in one pass.
fn rates<S>(
    samples: &[S],
    n: usize,
    unit: f64,
    (key, t): (impl Fn(&S) -> usize, impl Fn(&S) -> Ps),
    bytes: impl Fn(&S) -> u64,
) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new(); n];
    if n == 0 {
        return out;
    }
    for (s, prev) in with_previous(samples, n, &key) {
        let Some(prev) = prev else { continue };
        let dt = (t(s) - t(prev)).as_secs_f64();
        if dt > 0.0 {
            out[key(s)].push((
                t(s).as_secs_f64() / unit,
                (bytes(s) - bytes(prev)) as f64 * 8.0 / dt / 1e9,
            ));
        }
    }
    out
}

/// Host ports drawn at most; a run with more shows the busiest (the CSV
/// has them all).
const MAX_PORT_LINES: usize = 24;

/// Client QPs drawn at most; a run with more shows the first ones (the
/// CSV has them all).
const MAX_QP_LINES: usize = 32;

/// `ports.png/svg`: transmit throughput per host NIC port (per bond slave).
pub fn port_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let x_label = format!("time ({unit_name})");
    let port_rates = rates(
        w.port_samples(),
        w.ports().len(),
        unit,
        (|s: &PortSample| s.port as usize, |s: &PortSample| s.t),
        |s| s.tx_bytes,
    );
    let ports: Vec<_> = w
        .ports()
        .zip(port_rates)
        .filter(|(p, _)| p.is_host_port() && p.counters().tx_bytes > 0)
        .collect();
    let total = ports.len();
    // The busiest, in port order: a fabric's 320 lines are a blur.
    let all: Vec<usize> = (0..total).collect();
    let shown = keep_most(&all, MAX_PORT_LINES, |&i| ports[i].0.counters().tx_bytes);
    let mut shown = shown.into_iter().peekable();
    let port_series: Vec<Series> = ports
        .into_iter()
        .enumerate()
        .filter_map(|(i, port)| shown.next_if_eq(&i).map(|_| port))
        .enumerate()
        .map(|(c, (p, pts))| Series::new(p.name(), pts, c))
        .collect();
    let title = if total > MAX_PORT_LINES {
        format!("Transmit throughput per host port ({MAX_PORT_LINES} busiest of {total})")
    } else {
        "Transmit throughput per host port".to_string()
    };
    line_plot(dir, "ports", &title, &x_label, "Gb/s", &port_series)
}

/// `qps.png/svg`: payload sent per client QP, and per READ responder that
/// sent any.
pub fn qp_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let x_label = format!("time ({unit_name})");
    let (title, qp_series) = qp_payload_lines(w, unit);
    line_plot(dir, "qps", &title, &x_label, "Gb/s", &qp_series)
}

/// The title and lines of `qps.png`: payload sent over time (Gb/s against
/// time in `unit` seconds) by each client QP and, where a READ's responder
/// carries the data, by each responder that sent any.
fn qp_payload_lines(w: &World, unit: f64) -> (String, Vec<Series>) {
    let qp_rates = rates(
        w.qp_samples(),
        w.qp_count(),
        unit,
        (|s: &QpSample| s.qp as usize, |s: &QpSample| s.t),
        |s| s.tx_payload,
    );
    // A READ's data flows the other way: its responder sends the payload,
    // its requester only the requests. Responders that sent payload are
    // drawn too, first, so that the line cap never leaves them out; a
    // requester that sent none (an `ib_read_bw` client) is then left out,
    // its line flat at 0 and its name only crowding the legend.
    let responders = w
        .qps()
        .any(|q| q.role() == Role::Server && q.tx_payload_bytes() > 0);
    let drawn = |q: &QpView<'_>| match q.role() {
        Role::Client => !responders || q.tx_payload_bytes() > 0,
        Role::Server => q.tx_payload_bytes() > 0,
    };
    let (servers, clients): (Vec<_>, Vec<_>) = w
        .qps()
        .zip(qp_rates)
        .filter(|(q, _)| drawn(q))
        .partition(|(q, _)| q.role() == Role::Server);
    let what = match (servers.is_empty(), clients.is_empty()) {
        (true, _) => "Payload sent per client QP",
        (false, true) => "Payload sent per READ responder QP",
        (false, false) => "Payload sent per QP (READ responders and client QPs)",
    };
    let shown: Vec<_> = servers.into_iter().chain(clients).collect();
    let total = shown.len();
    let title = if total > MAX_QP_LINES {
        format!("{what} (first {MAX_QP_LINES} of {total})")
    } else {
        what.to_string()
    };
    (title, qp_lines(shown))
}

/// The rate each QP's limiter allowed over time (`rates.png/svg`), from the
/// last sample before it began to send: client QPs, and servers whose
/// reaction point cut their rate (READ responders).
/// DCQCN's sawtooth: a cut on a CNP, then recovery in steps.
pub fn rate_plot(w: &World, dir: &Path) -> Result<(), String> {
    let (unit_name, unit) = time_unit(w.sim_time());
    let n = w.qp_count();
    let mut points: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    // Before its first packet a QP's limiter stands at line rate, which no
    // one was sending at: its line starts at the last sample before it
    // sent (where it arrives at line rate), not at the run's start.
    let mut idle: Vec<Option<(f64, f64)>> = vec![None; n];
    for s in w.qp_samples() {
        let (q, p) = (
            s.qp as usize,
            (s.t.as_secs_f64() / unit, s.rate_bps as f64 / 1e9),
        );
        if s.tx_payload == 0 && points[q].is_empty() {
            idle[q] = Some(p);
            continue;
        }
        points[q].extend(idle[q].take());
        points[q].push(p);
    }
    let shown: Vec<(QpView<'_>, Vec<(f64, f64)>)> = w
        .qps()
        .zip(points)
        .filter(|(q, _)| {
            q.role() == Role::Client || q.reaction_point().is_some_and(|rp| rp.cuts() > 0)
        })
        .collect();
    let total = shown.len();
    // Without a reaction point the limit is the line rate or the
    // workload's `rate_limit`: the title says which kind of plot it is.
    let what = if shown.iter().any(|(q, _)| q.reaction_point().is_some()) {
        "Rate allowed per QP (DCQCN)"
    } else {
        "Rate allowed per QP (no DCQCN: line rate or rate_limit)"
    };
    let series = qp_lines(shown);
    let title = if total > MAX_QP_LINES {
        format!("{what}, first {MAX_QP_LINES} of {total}")
    } else {
        what.to_string()
    };
    let x_label = format!("time ({unit_name})");
    // The time axis starts where the samples do, as the other plots'.
    let x_from = w.qp_samples().first().map(|s| s.t.as_secs_f64() / unit);
    line_plot_from(dir, "rates", (&title, &x_label, "Gb/s"), &series, x_from)
}

/// One line per QP, at most [`MAX_QP_LINES`], the first 16 named in the
/// legend.
fn qp_lines(qps: Vec<(QpView<'_>, Vec<(f64, f64)>)>) -> Vec<Series> {
    qps.into_iter()
        .take(MAX_QP_LINES)
        .enumerate()
        .map(|(c, (q, pts))| {
            let name = if c < 16 {
                let side = if q.role() == Role::Server {
                    " (responder)"
                } else {
                    ""
                };
                format!("{} qp {:#x}{side}", q.host(), q.qp().qpn())
            } else {
                String::new()
            };
            Series::new(name, pts, c)
        })
        .collect()
}

/// A readable unit for a time axis.
pub fn time_unit(span: Ps) -> (&'static str, f64) {
    let s = span.as_secs_f64();
    if s >= 1.0 {
        ("s", 1.0)
    } else if s >= 1e-3 {
        ("ms", 1e-3)
    } else {
        ("us", 1e-6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line at the top of the y range right up to the last x used to
    /// run under the legend box (drawn inside the plot, upper right).
    #[test]
    fn the_legend_is_beside_the_lines_not_on_them() {
        fonts();
        let flat = |y: f64| (0..=100).map(|i| (f64::from(i), y)).collect::<Vec<_>>();
        let series = [
            Series::new("hostA.eth0", flat(100.0), 0),
            Series::new("hostA.eth1", flat(40.0), 1),
        ];
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (1000, 560)).into_drawing_area();
            draw(&root, ("t", "x", "y"), &series, None).unwrap();
            root.present().unwrap();
        }
        let attr = |tag: &str, name: &str| -> f64 {
            let v = tag.split(&format!(" {name}=\"")).nth(1).unwrap();
            v[..v.find('"').unwrap()].parse().unwrap()
        };
        // Rightmost point of any line drawn.
        let mut right = 0.0f64;
        for tag in svg.split("<polyline").skip(1) {
            let pts = tag.split(" points=\"").nth(1).unwrap();
            for p in pts[..pts.find('"').unwrap()].split_whitespace() {
                right = right.max(p.split(',').next().unwrap().parse().unwrap());
            }
        }
        let labels: Vec<f64> = svg
            .split("<text")
            .skip(1)
            .filter(|t| t.contains("hostA.eth"))
            .map(|t| attr(t, "x"))
            .collect();
        assert_eq!(labels.len(), 2, "{svg}");
        assert!(
            labels.iter().all(|&x| x > right),
            "labels at {labels:?}, lines reach {right}"
        );
    }

    /// The payload a line of `qps.png` shows, in bytes: each point is the
    /// rate over the interval since the sample before (the first's since
    /// `w`'s first sample), summed as rate x interval.
    fn bytes_drawn(w: &World, s: &Series, unit: f64) -> f64 {
        let mut x0 = w.qp_samples()[0].t.as_secs_f64() / unit;
        let mut bytes = 0.0;
        for &(x, gbps) in &s.points {
            bytes += gbps * 1e9 / 8.0 * (x - x0) * unit;
            x0 = x;
        }
        bytes
    }

    /// What QP `i` sent after the first sample (frames sent at 0 before it
    /// are in no interval), by its samples.
    fn sent_after_first_sample(w: &World, i: usize) -> u64 {
        let mine = || w.qp_samples().iter().filter(|s| s.qp as usize == i);
        mine().next_back().unwrap().tx_payload - mine().next().unwrap().tx_payload
    }

    /// `ib_read_bw`: the responders send the data, so `qps.png` draws them
    /// (named as responders), and not the requesters, which sent none;
    /// each line adds up to what its QP sent. `ib_write_bw` keeps the
    /// client QPs only.
    #[test]
    fn a_reads_payload_is_drawn_for_its_responders() {
        // A shipped scenario, changed by `sets`, run to its end.
        let run_scenario = |name: &str, sets: &[String]| {
            let scenario =
                Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../scenarios/{name}.toml"));
            let (_, mut w) = crate::run::check(&scenario, sets).unwrap();
            w.run(&mut ());
            w
        };
        let run = |tool: &str| {
            let sets = [
                format!("workload.0.tool={tool}"),
                "workload.0.qps=2".to_string(),
                "workload.0.iters=2".to_string(),
                "workload.0.size=1MiB".to_string(),
            ];
            run_scenario("lag_hash", &sets)
        };
        // The QPs of `role`, by index, and what their counters say they sent.
        let of = |w: &World, role: Role| -> Vec<(usize, u64)> {
            w.qps()
                .enumerate()
                .filter(|(_, q)| q.role() == role)
                .map(|(i, q)| (i, q.tx_payload_bytes()))
                .collect()
        };

        let w = run("ib_read_bw");
        let (_, unit) = time_unit(w.sim_time());
        let (title, lines) = qp_payload_lines(&w, unit);
        assert_eq!(title, "Payload sent per READ responder QP");
        let (servers, clients) = (of(&w, Role::Server), of(&w, Role::Client));
        // Two 1 MiB READs per QP: each responder sent 2 MiB, each requester
        // none.
        assert_eq!(
            servers.iter().map(|s| s.1).collect::<Vec<_>>(),
            [2 << 20; 2]
        );
        assert_eq!(clients.iter().map(|s| s.1).collect::<Vec<_>>(), [0; 2]);
        assert_eq!(lines.len(), 2);
        for (line, &(i, _)) in lines.iter().zip(&servers) {
            assert!(
                line.name.starts_with("hostB qp") && line.name.ends_with("(responder)"),
                "{}",
                line.name
            );
            let (drawn, sent) = (bytes_drawn(&w, line, unit), sent_after_first_sample(&w, i));
            assert!(
                (drawn - sent as f64).abs() < 1.0,
                "{}: {drawn} drawn, {sent} sent",
                line.name
            );
        }
        assert!(bytes_drawn(&w, &lines[0], unit) > 1e6);

        // Four flows on one bottleneck, the second a READ: its responder
        // first, then the three WRITE clients; its requester is left out.
        let w = run_scenario(
            "dcqcn_convergence",
            &["workload.1.tool=ib_read_bw".to_string()],
        );
        let (title, lines) = qp_payload_lines(&w, time_unit(w.sim_time()).1);
        assert_eq!(
            title,
            "Payload sent per QP (READ responders and client QPs)"
        );
        let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
        let (servers, clients) = (of(&w, Role::Server), of(&w, Role::Client));
        let sent = |v: &[(usize, u64)]| v.iter().filter(|q| q.1 > 0).count();
        assert_eq!((sent(&servers), sent(&clients)), (1, 3), "{names:?}");
        assert_eq!(lines.len(), 4, "{names:?}");
        assert!(names[0].ends_with("(responder)"), "{names:?}");
        assert!(
            names[1..].iter().all(|n| !n.contains("responder")),
            "{names:?}"
        );

        let w = run("ib_write_bw");
        let (_, unit) = time_unit(w.sim_time());
        let (title, lines) = qp_payload_lines(&w, unit);
        assert_eq!(title, "Payload sent per client QP");
        let clients = of(&w, Role::Client);
        assert_eq!(
            clients.iter().map(|s| s.1).collect::<Vec<_>>(),
            [2 << 20; 2]
        );
        assert_eq!(lines.len(), 2);
        for (line, &(i, _)) in lines.iter().zip(&clients) {
            assert!(line.name.starts_with("hostA qp") && !line.name.contains("responder"));
            let (drawn, sent) = (bytes_drawn(&w, line, unit), sent_after_first_sample(&w, i));
            assert!(
                (drawn - sent as f64).abs() < 1.0,
                "{}: {drawn} drawn, {sent} sent",
                line.name
            );
            assert!(sent > 2_000_000);
        }
    }

    /// Two idle seconds, then 16 ms of traffic: the axis starts at the
    /// last idle point (1.999), not at 0; a series busy from the start
    /// keeps its whole range.
    #[test]
    fn a_long_idle_start_is_cut_from_the_axis() {
        fonts();
        let idle = Series::new(
            "a",
            vec![(0.0, 0.0), (1.999, 0.0), (2.0, 5.0), (2.016, 3.0)],
            0,
        );
        assert_eq!(idle_until(std::slice::from_ref(&idle)), Some(1.999));
        let busy = Series::new("b", vec![(0.0, 1.0), (2.016, 1.0)], 1);
        assert_eq!(idle_until(std::slice::from_ref(&busy)), None);
        assert_eq!(idle_until(&[idle.clone(), busy]), None);
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (1000, 560)).into_drawing_area();
            draw(&root, ("t", "x", "y"), &[idle], None).unwrap();
            root.present().unwrap();
        }
        let labels: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split('>').nth(1)?.split('<').next())
            .map(str::trim)
            .collect();
        // Ticks every 2 ms: the axis spans the 16 ms that moved.
        assert!(
            labels.contains(&"2.002") && labels.contains(&"2.016"),
            "{labels:?}"
        );
    }

    #[test]
    fn bundled_font_parses_and_renders_text() {
        fonts();
        let dir = std::env::temp_dir().join(format!("rocesim-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        line_plot(
            &dir,
            "t",
            "title",
            "x",
            "y",
            &[Series::new("a", vec![(0.0, 1.0), (1.0, 2.0)], 0)],
        )
        .unwrap();
        let svg = std::fs::read_to_string(dir.join("t.svg")).unwrap();
        assert!(svg.contains("title"));
        assert!(std::fs::metadata(dir.join("t.png")).unwrap().len() > 1000);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What `write_png` writes decodes to what was drawn: the size, RGB
    /// at 8 bits, and the pixels (a red square on white, read back at its
    /// corners and outside them).
    #[test]
    fn png_decodes_to_the_pixels_drawn() {
        let dir = std::env::temp_dir().join(format!("rocesim-png-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("square.png");
        write_png(&path, (40, 30), |root| {
            root.fill(&WHITE)?;
            root.draw(&Rectangle::new([(10, 5), (20, 15)], RED.filled()))
        })
        .unwrap();
        let mut dec = png::Decoder::new(std::fs::File::open(&path).unwrap())
            .read_info()
            .unwrap();
        let mut rgb = vec![0; dec.output_buffer_size()];
        let info = dec.next_frame(&mut rgb).unwrap();
        assert_eq!((info.width, info.height), (40, 30));
        assert_eq!(
            (info.color_type, info.bit_depth),
            (png::ColorType::Rgb, png::BitDepth::Eight)
        );
        let at = |x: usize, y: usize| &rgb[(y * 40 + x) * 3..][..3];
        for (x, y) in [(10, 5), (19, 14), (15, 10)] {
            assert_eq!(at(x, y), [255, 0, 0], "({x}, {y})");
        }
        for (x, y) in [(9, 5), (20, 14), (15, 15), (10, 4), (0, 0), (39, 29)] {
            assert_eq!(at(x, y), [255, 255, 255], "({x}, {y})");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
