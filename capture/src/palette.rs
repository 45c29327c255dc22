//! The colours both tools draw their lines in, so that a run's plots and a
//! capture's read alike, on a screen and printed in grey.
//!
//! A plot with several lines gives them colours along viridis (matplotlib's
//! default map), from dark purple to light green, spread evenly over as
//! many lines as the plot has. Its lightness rises monotonically along the
//! map, so the colours stay apart and in legend order when printed in
//! greyscale, where a hue-only palette (red, green, blue of equal
//! lightness) turns into one grey. The light yellow end of the map is left
//! out: it is barely visible on white.

/// Viridis at eight evenly spaced points from 0 to 1 (matplotlib's
/// values), linearly interpolated between.
const VIRIDIS: [(u8, u8, u8); 8] = [
    (68, 1, 84),
    (70, 50, 127),
    (54, 92, 141),
    (39, 127, 143),
    (31, 162, 136),
    (74, 194, 110),
    (160, 219, 57),
    (254, 232, 37),
];

/// How far along the map the lightest line goes: lime green, the last
/// colour that reads as a 2-pixel line on white.
const LIGHTEST: f64 = 0.83;

/// The colour of line `i` of `n` (in legend order): the darkest first, each
/// next one lighter. `i` at or past `n` gets the lightest.
pub fn series(i: usize, n: usize) -> (u8, u8, u8) {
    let t = if n <= 1 {
        0.0
    } else {
        LIGHTEST * i.min(n - 1) as f64 / (n - 1) as f64
    };
    viridis(t)
}

/// Viridis at `t` in 0..=1.
fn viridis(t: f64) -> (u8, u8, u8) {
    let x = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let k = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - k as f64;
    let (a, b) = (VIRIDIS[k], VIRIDIS[k + 1]);
    let mix = |p: u8, q: u8| (f64::from(p) + (f64::from(q) - f64::from(p)) * f).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// CIE lightness L* (0 black to 100 white) of an sRGB colour: the grey
/// it prints as, on a scale where equal steps look equal.
pub fn lightness((r, g, b): (u8, u8, u8)) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    let y = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
    if y > 216.0 / 24389.0 {
        116.0 * y.cbrt() - 16.0
    } else {
        y * 24389.0 / 27.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For every line count a plot may have, each line prints a lighter
    /// grey than the one before it in the legend, by a step the eye sees
    /// (8 L*) for the counts of a readable plot (up to 8 lines), and the
    /// lightest still stands out from the white background (L* 100).
    #[test]
    fn lines_get_lighter_in_legend_order() {
        for n in 2..=32 {
            let greys: Vec<f64> = (0..n).map(|i| lightness(series(i, n))).collect();
            for (i, w) in greys.windows(2).enumerate() {
                let next = i + 1;
                assert!(
                    w[1] > w[0],
                    "{n} lines: {next} not lighter than {i}: {greys:?}"
                );
                if n <= 8 {
                    assert!(
                        w[1] - w[0] > 8.0,
                        "{n} lines: {i} and {next} print alike: {greys:?}"
                    );
                }
            }
            assert!(greys[0] < 20.0, "{n} lines: {greys:?}");
            assert!(
                greys[n - 1] < 82.0,
                "{n} lines: the last is too light: {greys:?}"
            );
        }
        assert_eq!(lightness((255, 255, 255)).round(), 100.0);
        assert_eq!(lightness((0, 0, 0)), 0.0);
        assert_eq!(series(0, 1), VIRIDIS[0]);
        assert_eq!(series(0, 4), VIRIDIS[0]);
        assert_eq!(series(5, 4), series(3, 4));
    }

    /// The map's own points come back where they are, and halfway between
    /// two of them is their mean.
    #[test]
    fn viridis_interpolates_between_its_points() {
        assert_eq!(viridis(0.0), (68, 1, 84));
        assert_eq!(viridis(1.0), (254, 232, 37));
        assert_eq!(viridis(3.0 / 7.0), (39, 127, 143));
        assert_eq!(viridis(1.5 / 7.0), (62, 71, 134));
    }
}
