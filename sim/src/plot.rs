//! PNG and SVG plots with plotters. Text is drawn with the DejaVu Sans font
//! compiled into the binary (`assets/fonts/`, shared with roce-pcap), so
//! plots look the same on machines without system fonts.

use std::path::Path;
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::time::Ps;
use crate::world::World;

static FONT: &[u8] = include_bytes!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../assets/fonts/DejaVuSans.ttf"
));
static REGISTER: Once = Once::new();

fn fonts() {
    REGISTER.call_once(|| {
        // Registration fails only for a font ab_glyph cannot parse, which
        // the font test below rules out.
        let _ = register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// One line of a plot.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Palette index; series that belong together share it.
    pub color: usize,
    /// Line width in pixels.
    pub width: u32,
}

impl Series {
    pub fn new(name: impl Into<String>, points: Vec<(f64, f64)>, color: usize) -> Series {
        Series {
            name: name.into(),
            points,
            color,
            width: 2,
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
    fonts();
    let png = dir.join(format!("{stem}.png"));
    let svg = dir.join(format!("{stem}.svg"));
    {
        let root = BitMapBackend::new(&png, (1000, 560)).into_drawing_area();
        draw(&root, title, x_label, y_label, series)
            .map_err(|e| format!("{}: {e}", png.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", png.display()))?;
    }
    {
        let root = SVGBackend::new(&svg, (1000, 560)).into_drawing_area();
        draw(&root, title, x_label, y_label, series)
            .map_err(|e| format!("{}: {e}", svg.display()))?;
        root.present()
            .map_err(|e| format!("{}: {e}", svg.display()))?;
    }
    Ok(())
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
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
    let y1 = if y1 <= 0.0 { 1.0 } else { y1 * 1.1 };
    let mut chart = ChartBuilder::on(root)
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
        let w = s.width;
        let a = chart.draw_series(LineSeries::new(
            s.points.iter().copied(),
            color.stroke_width(w),
        ))?;
        if !s.name.is_empty() {
            a.label(s.name.clone()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(w))
            });
        }
    }
    if series.iter().any(|s| !s.name.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    Ok(())
}

/// Series of per-interval rates from samples stored in blocks of `n` (one
/// entry per component per sample time), in one pass.
fn rates<S>(
    samples: &[S],
    n: usize,
    unit: f64,
    t: impl Fn(&S) -> Ps,
    bytes: impl Fn(&S) -> u64,
) -> Vec<Vec<(f64, f64)>> {
    let mut out = vec![Vec::new(); n];
    if n == 0 {
        return out;
    }
    for k in n..samples.len() {
        let (s, prev) = (&samples[k], &samples[k - n]);
        let dt = (t(s) - t(prev)).as_secs_f64();
        if dt > 0.0 {
            out[k % n].push((
                t(s).as_secs_f64() / unit,
                (bytes(s) - bytes(prev)) as f64 * 8.0 / dt / 1e9,
            ));
        }
    }
    out
}

/// Client QPs drawn at most; a run with more shows the first ones (the
/// CSV has them all).
const MAX_QP_LINES: usize = 32;

/// Throughput per host NIC port (per bond slave) and per client QP.
pub fn throughput_plots(w: &World, dir: &Path) -> Result<(), String> {
    let unit = time_unit(w.sim_time());
    let mut port_rates = rates(
        &w.port_samples,
        w.ports.len(),
        unit.1,
        |s| s.t,
        |s| s.tx_bytes,
    );
    let mut port_series = Vec::new();
    for (p, pts) in port_rates.iter_mut().enumerate() {
        if crate::output::is_host_port(w, p as u32) && w.ports[p].c.tx_bytes > 0 {
            let c = port_series.len();
            port_series.push(Series::new(w.ports[p].name.clone(), std::mem::take(pts), c));
        }
    }
    line_plot(
        dir,
        "ports",
        "Transmit throughput per host port",
        &format!("time ({})", unit.0),
        "Gb/s",
        &port_series,
    )?;
    let mut qp_rates = rates(
        &w.qp_samples,
        w.qps.len(),
        unit.1,
        |s| s.t,
        |s| s.tx_payload,
    );
    let clients: Vec<usize> = (0..w.qps.len())
        .filter(|&q| w.qps[q].role == crate::world::Role::Client)
        .collect();
    let mut qp_series = Vec::new();
    for &q in clients.iter().take(MAX_QP_LINES) {
        let slot = &w.qps[q];
        let c = qp_series.len();
        let name = if c < 16 {
            format!(
                "{} qp {:#x}",
                w.hosts[slot.host as usize].name,
                slot.qp.qpn()
            )
        } else {
            String::new()
        };
        qp_series.push(Series::new(name, std::mem::take(&mut qp_rates[q]), c));
    }
    let title = if clients.len() > MAX_QP_LINES {
        format!(
            "Payload sent per client QP (first {MAX_QP_LINES} of {})",
            clients.len()
        )
    } else {
        "Payload sent per client QP".to_string()
    };
    line_plot(
        dir,
        "qps",
        &title,
        &format!("time ({})", unit.0),
        "Gb/s",
        &qp_series,
    )
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
}
