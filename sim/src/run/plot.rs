//! PNG and SVG line plots with plotters: the one drawing routine every
//! plot of a run directory goes through (`ports`, `qps`, `rates`,
//! `queues`, `fct`, `sweep`). Text is drawn with the DejaVu Sans font
//! compiled into the binary (`assets/fonts/`, shared with roce-pcap), so
//! plots look the same on machines without system fonts. Lines take their
//! colours from [`roce_capture::palette`]: darkest first, each next one
//! lighter, so that a greyscale print keeps them apart and in legend order.
//!
//! ```text
//!   ┌ title ──────────────────────────────┬────────────┐
//!   │ lines: y against time               │ legend     │
//!   ├ lanes (optional) ───────────────────┤            │
//!   │ h1.eth0 prio 3   ███  ████  ██      │            │
//!   │ sw2.up prio 3      ████████         │            │
//!   └ the same time axis ─────────────────┴────────────┘
//! ```

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::time::Ps;

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

/// The colour of palette index `i` among `n` indices used.
fn color(i: usize, n: usize) -> RGBColor {
    let (r, g, b) = roce_capture::palette::series(i, n);
    RGBColor(r, g, b)
}

/// Rows of on/off intervals under the lines, on their time axis: which
/// ports were paused, and when.
pub struct Lanes {
    /// What a bar means, above the rows.
    pub title: String,
    /// Each row's name and its intervals (x from, x to).
    pub rows: Vec<(String, Vec<(f64, f64)>)>,
    /// Said in place of the rows when there are none.
    pub empty: String,
}

/// Height of one lane in pixels, and of what a lane panel needs besides.
const LANE_H: u32 = 22;
const LANE_EXTRA: u32 = 96;
/// Lanes drawn at most; the title says how many more there were.
pub const MAX_LANES: usize = 16;

/// A tick label as a reader writes the number: `7000`, `0.5`, `1.25`
/// (plotters' own writes every value with a decimal, `7000.0`).
fn tick(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
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
pub(super) fn line_plot_from(
    dir: &Path,
    stem: &str,
    labels: (&str, &str, &str),
    series: &[Series],
    x_from: Option<f64>,
) -> Result<(), String> {
    plot_files(dir, stem, labels, series, x_from, None)
}

/// [`line_plot`] with [`Lanes`] under the lines, on the same time axis.
pub(super) fn line_plot_with_lanes(
    dir: &Path,
    stem: &str,
    labels: (&str, &str, &str),
    series: &[Series],
    lanes: &Lanes,
) -> Result<(), String> {
    plot_files(dir, stem, labels, series, None, Some(lanes))
}

fn plot_files(
    dir: &Path,
    stem: &str,
    labels: (&str, &str, &str),
    series: &[Series],
    x_from: Option<f64>,
    lanes: Option<&Lanes>,
) -> Result<(), String> {
    fonts();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    let size = (1000, 560 + lanes.map_or(0, lanes_height));
    write_png(&png, size, |root| draw(root, labels, series, x_from, lanes))?;
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        draw(&root, labels, series, x_from, lanes)
            .map_err(|e| format!("{}: {e}", svg.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", svg.display()))?;
    }
    Ok(())
}

/// The height of the lane panel, in pixels.
fn lanes_height(l: &Lanes) -> u32 {
    LANE_EXTRA + LANE_H * l.rows.len().clamp(1, MAX_LANES) as u32
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
    lanes: Option<&Lanes>,
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
    let (w, h) = root.dim_in_pixel();
    let legend_w = if named.is_empty() {
        0
    } else {
        let chars = named
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(0) as u32;
        (chars * 9 + 44).clamp(120, w / 3)
    };
    // With lanes, the left margin fits their names too, the same for both
    // panels, so that their time axes line up pixel for pixel.
    let y_area = lanes.map_or(64, |l| {
        let chars = l.rows.iter().map(|r| r.0.chars().count()).max();
        (chars.unwrap_or(0) as u32 * 8 + 16).clamp(64, w / 4)
    });
    let (top, bottom) = match lanes {
        Some(l) => {
            let (a, b) = root.split_vertically(h - lanes_height(l));
            (a, Some(b))
        }
        None => (root.clone(), None),
    };
    let (plot_area, legend_area) = top.split_horizontally(w - legend_w);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x0..x1, 0.0..y1)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .x_label_formatter(&|v| tick(*v))
        .y_label_formatter(&|v| tick(*v))
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    let colors = series.iter().map(|s| s.color + 1).max().unwrap_or(0);
    for s in series {
        let color = color(s.color, colors).to_rgba();
        let shown = || s.points.iter().copied().filter(|&(x, _)| x >= x0);
        chart.draw_series(LineSeries::new(shown(), color.stroke_width(s.width)))?;
        if s.markers {
            chart.draw_series(shown().map(|p| Circle::new(p, s.width + 2, color.filled())))?;
        }
    }
    if !named.is_empty() {
        draw_legend(&legend_area, &named, colors)?;
    }
    if let (Some(l), Some(bottom)) = (lanes, bottom) {
        let (lane_area, _) = bottom.split_horizontally(w - legend_w);
        draw_lanes(&lane_area, l, (x0, x1), (x_label, y_area))?;
    }
    Ok(())
}

/// The lane panel: one row per lane, a bar over each interval, on the
/// x range of the lines above.
fn draw_lanes<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    l: &Lanes,
    (x0, x1): (f64, f64),
    (x_label, y_area): (&str, u32),
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let rows: Vec<&(String, Vec<(f64, f64)>)> = l.rows.iter().take(MAX_LANES).collect();
    let title = if l.rows.len() > MAX_LANES {
        format!("{} (first {MAX_LANES} of {})", l.title, l.rows.len())
    } else {
        l.title.clone()
    };
    let n = rows.len().max(1) as u32;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x0..x1, (0..n - 1).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc(x_label)
        .y_labels(rows.len().max(1))
        // Segment 0 is at the bottom: the first row is drawn in the top
        // one, n - 1.
        .y_label_formatter(&|v: &SegmentValue<u32>| match v {
            SegmentValue::CenterOf(i) => rows
                .get((n - 1 - *i) as usize)
                .map_or_else(String::new, |r| r.0.clone()),
            _ => String::new(),
        })
        .label_style(("sans-serif", 15))
        .axis_desc_style(("sans-serif", 17))
        .draw()?;
    if rows.is_empty() {
        let (_, h) = area.dim_in_pixel();
        area.draw(&Text::new(
            l.empty.clone(),
            (y_area as i32 + 24, (h / 2) as i32 - 14),
            ("sans-serif", 16).into_font(),
        ))?;
    }
    let bar = color(0, 1).to_rgba();
    for (row, (_, intervals)) in rows.iter().enumerate() {
        let row = n - 1 - row as u32;
        chart.draw_series(
            intervals
                .iter()
                .filter(|i| i.1 > x0 && i.0 < x1)
                .map(|&(a, b)| {
                    Rectangle::new(
                        [
                            (a.max(x0), SegmentValue::Exact(row)),
                            (b.min(x1), SegmentValue::Exact(row + 1)),
                        ],
                        bar.filled(),
                    )
                }),
        )?;
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
    colors: usize,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    const TOP: i32 = 52;
    const ROW: i32 = 22;
    let (_, h) = area.dim_in_pixel();
    let fit = ((h as i32 - TOP - ROW) / ROW).max(1) as usize;
    let font = ("sans-serif", 15).into_font();
    for (i, s) in named.iter().take(fit).enumerate() {
        let y = TOP + i as i32 * ROW;
        let color = color(s.color, colors).to_rgba();
        area.draw(&PathElement::new(
            vec![(4, y), (26, y)],
            color.stroke_width(s.width.max(2)),
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

/// A readable unit for a time axis.
pub fn time_unit(span: Ps) -> (&'static str, f64) {
    let s = span.as_secs_f64();
    if s >= 1.0 {
        ("s", 1.0)
    } else if s >= 1e-3 {
        ("ms", 1e-3)
    } else {
        ("µs", 1e-6)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn tick_labels_drop_a_zero_fraction_only() {
        use super::tick;
        assert_eq!(tick(7000.0), "7000");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(1.25), "1.25");
        assert_eq!(tick(0.30000000000000004), "0.3");
        assert_eq!(tick(-0.0), "0");
        assert_eq!(tick(0.0), "0");
    }

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
            draw(&root, ("t", "x", "y"), &series, None, None).unwrap();
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
            draw(&root, ("t", "x", "y"), &[idle], None, None).unwrap();
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
