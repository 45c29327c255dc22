//! The pictures of `compare --out` when the two sides last very
//! differently, and when they last alike:
//!
//! * a 22 µs capture beside a 12 s one (both in `traces/`), and a 13.7 ms
//!   simulation (`scenarios/lag_hash.toml`) beside the 21.3 s public
//!   capture: each side on a panel and a time axis of its own, the short
//!   side's line spread over its panel instead of squeezed into a pixel
//!   at the left edge of the long side's axis, the choice said on every
//!   picture;
//! * a capture beside itself: one axis for both, and the plot says so.

use std::path::Path;
use std::process::Command;

use roce_pcap::plot::compare::{A_COLOR, B_COLOR, NAMES};
use roce_testkit::ci::public_trace;
use roce_testkit::cli::{TempDir, stderr};
use roce_testkit::repo::{root, trace};
use roce_testkit::rocesim;

const BIN: &str = env!("CARGO_BIN_EXE_roce-pcap");

/// `compare A B --out <dir>/cmp`, which may warn (exit 3: no flow in
/// common) but must draw; the pictures' SVG text by name.
fn compare(a: &Path, b: &Path, dir: &Path) -> Vec<(String, String)> {
    let out = dir.join("cmp");
    let o = Command::new(BIN)
        .arg("compare")
        .args([a, b])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 3)),
        "compare failed: {}",
        stderr(&o)
    );
    NAMES
        .iter()
        .map(|n| {
            let path = out.join(format!("{n}.svg"));
            let svg = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (n.to_string(), svg)
        })
        .collect()
}

fn hex(c: plotters::style::RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

/// The points of every polyline drawn in `color`, in pixels.
fn polylines(svg: &str, color: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline")
        .skip(1)
        .filter(|tag| tag.split('>').next().unwrap().contains(color))
        .map(|tag| {
            let pts = tag.split(" points=\"").nth(1).unwrap();
            pts[..pts.find('"').unwrap()]
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// How wide (pixels) the stretch is where a side's line leaves its
/// baseline (the lowest y drawn, a rate of 0): where its traffic is.
fn busy_width(svg: &str, color: &str) -> f64 {
    let pts: Vec<(f64, f64)> = polylines(svg, color).into_iter().flatten().collect();
    assert!(!pts.is_empty(), "no line in {color}");
    let base = pts.iter().map(|p| p.1).fold(f64::MIN, f64::max);
    let busy: Vec<f64> = pts
        .iter()
        .filter(|p| p.1 < base - 0.5)
        .map(|p| p.0)
        .collect();
    let lo = busy.iter().copied().fold(f64::MAX, f64::min);
    let hi = busy.iter().copied().fold(f64::MIN, f64::max);
    if busy.is_empty() { 0.0 } else { hi - lo }
}

/// Both sides on axes of their own: every picture that has data says so,
/// and names each side's axis and unit.
fn assert_separate(svgs: &[(String, String)], a_unit: &str, b_unit: &str) {
    for (name, svg) in svgs {
        if name == "compare_pfc" && svg.contains("No PFC or PAUSE") {
            continue;
        }
        if name == "compare_tsg" {
            continue;
        }
        assert!(
            svg.contains("each side on its own time axis, from its own first frame"),
            "{name} does not say how its time axes are laid out"
        );
        for axis in [
            format!("time since A&apos;s first frame ({a_unit})"),
            format!("time since B&apos;s first frame ({b_unit})"),
        ] {
            let axis_plain = axis.replace("&apos;", "'");
            assert!(
                svg.contains(&axis) || svg.contains(&axis_plain),
                "{name} has no axis {axis_plain}"
            );
        }
    }
}

#[test]
fn a_short_capture_beside_a_long_one_gets_its_own_time_axis() {
    let dir = TempDir::new("compare-plots-short-long");
    // 22.23 µs and 12.290 s.
    let svgs = compare(&trace("rc_flow.pcapng"), &trace("setup.pcap"), dir.path());
    assert_separate(&svgs, "µs", "s");
    let goodput = &svgs[0].1;
    assert!(
        goodput.contains("A lasts 22.2 µs, B 12.29 s"),
        "the note states the two lengths"
    );
    // A's 22 µs of traffic spread over most of its panel (about 860
    // pixels wide); on the long side's axis it was under a pixel wide.
    let a = busy_width(goodput, &hex(A_COLOR));
    assert!(a > 400.0, "A's traffic spans {a} pixels");
}

#[test]
fn a_simulation_beside_a_long_real_capture_is_readable() {
    let Some(real) = public_trace("roce.pcap") else {
        return;
    };
    let dir = TempDir::new("compare-plots-sim-real");
    let run = dir.path().join("lag_hash");
    rocesim::run(&root().join("scenarios/lag_hash.toml"), &run, &[]);
    // 21.3 s of capture beside 13.7 ms of simulation.
    let svgs = compare(&real, &run, dir.path());
    assert_separate(&svgs, "s", "ms");
    let goodput = &svgs[0].1;
    assert!(goodput.contains("A lasts 21.30 s, B 13.7 ms"));
    // The simulation's 256 MiB at up to 200 Gb/s fill its own panel.
    let b = busy_width(goodput, &hex(B_COLOR));
    assert!(b > 700.0, "B's traffic spans {b} pixels");
    // One panel per side and slave: B's two slaves each carry traffic.
    let slaves = &svgs[1].1;
    let b_lines = polylines(slaves, &hex(B_COLOR));
    assert_eq!(b_lines.len(), 2, "B's slave panels");
}

#[test]
fn sides_of_like_length_share_one_time_axis() {
    let dir = TempDir::new("compare-plots-alike");
    let svgs = compare(
        &trace("analyze_slave0.pcapng"),
        &trace("analyze_slave1.pcap.gz"),
        dir.path(),
    );
    let goodput = &svgs[0].1;
    assert!(
        goodput.contains("both on one time axis, each from its own first frame"),
        "the note"
    );
    assert!(
        goodput.contains("time since each side&apos;s first frame (ms)")
            || goodput.contains("time since each side's first frame (ms)")
    );
    assert!(!goodput.contains("A&apos;s first frame") && !goodput.contains("A's first frame"));
    // One chart: both lines in it, each named in the legend.
    assert!(!polylines(goodput, &hex(A_COLOR)).is_empty());
    assert!(!polylines(goodput, &hex(B_COLOR)).is_empty());
}
