//! The reference's flow size distributions (`WebSearch_distribution.txt`,
//! `FbHdp_distribution.txt`): one point of the cumulative distribution per
//! line, `size_bytes cdf_percent`.
//!
//! ```text
//! 0 0                  no flow is smaller than 0 bytes
//! 10000 15             15 % of flows are at most 10 000 bytes
//! ...
//! 30000000 100         none is larger than 30 MB
//! ```
//!
//! Validated as the reference's generator validates it (`custom_rand.py`
//! `testCdf`): the first percentile 0, the last 100, sizes and
//! percentiles strictly increasing; and sizes not negative.

use std::path::Path;

use super::{FormatError, Records};
use rocesim_model::flow::SizeCdf;

/// Reads and parses a CDF file; errors name the path as given.
pub fn read(path: &Path) -> Result<SizeCdf, FormatError> {
    super::read_with(path, parse)
}

/// Parses the text of a CDF file called `file` (for messages).
pub fn parse(text: &str, file: &str) -> Result<SizeCdf, FormatError> {
    let mut points = Vec::new();
    let mut lines = Vec::new();
    let mut recs = Records::new(file, text);
    for r in recs.by_ref() {
        r.expect_fields(&["size", "percent"], "size_bytes cdf_percent")?;
        points.push((r.float(1, "size")?, r.float(2, "percent")?));
        lines.push(r.line);
    }
    SizeCdf::new(points).map_err(|e| {
        let line = lines.get(e.point).copied().unwrap_or(0);
        FormatError {
            file: file.to_string(),
            line,
            field: if line == 0 { None } else { e.field },
            msg: e.msg,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, "d.txt").unwrap_err().to_string()
    }

    #[test]
    fn parses_and_validates() {
        let c = parse("0 0\n100 50\r\n\n300 100\n", "d.txt").unwrap();
        assert_eq!(c.points(), &[(0.0, 0.0), (100.0, 50.0), (300.0, 100.0)]);
        assert_eq!(
            err("0 1\n100 100\n"),
            "d.txt:1: field 2 (percent): the first point's percentile must be 0, found 1"
        );
        assert_eq!(
            err("0 0\n100 99\n"),
            "d.txt:2: field 2 (percent): the last point's percentile must be 100, found 99"
        );
        assert_eq!(
            err("0 0\n100 50\n\n100 100\n"),
            "d.txt:4: field 1 (size): 100 is not larger than the previous point's 100"
        );
        assert_eq!(
            err("0 0\n100 50\n200 50\n300 100\n"),
            "d.txt:3: field 2 (percent): 50 is not larger than the previous point's 50"
        );
        assert_eq!(
            err("-5 0\n100 100\n"),
            "d.txt:1: field 1 (size): a flow size cannot be negative, found -5"
        );
        assert_eq!(
            err("0 0 0\n"),
            "d.txt:1: expected 2 fields `size_bytes cdf_percent`, found 3"
        );
        assert_eq!(
            err("0 x\n"),
            "d.txt:1: field 2 (percent): expected a number, found 'x'"
        );
        assert_eq!(
            err(""),
            "d.txt: no points: a distribution needs at least two"
        );
    }
}
