//! The HPCC ns-3 reference simulator's file formats, parsed and written
//! (no simulation here): rocesim's edge toward the reference. (This was the
//! `hpcc` module of the single rocesim crate; `rocesim::hpcc` re-exports it.)
//!
//! The reference RoCE simulator (the ns-3 code published with the HPCC
//! paper) describes an experiment in four kinds of whitespace-separated text
//! files and reports flow completion times in a fifth. This crate reads
//! each into plain typed values of the model (`rocesim_model`), so a
//! scenario can rebuild the reference's fabric and traffic and compare
//! results flow by flow:
//!
//! ```text
//!  config_*.txt  ──config::parse───▶ HpccConfig   (CC_MODE, KMIN_MAP, ..., TOPOLOGY_FILE, FLOW_FILE)
//!  fat.txt       ──topology::parse─▶ HpccTopology ──HpccTopology::to_topology──▶ Topology (graph, routes)
//!  ws30_10ms.txt ──flows::parse────▶ HpccFlows    ──flows::to_specs────────────▶ [FlowSpec]
//!                ◀─flows::write──── [HpccFlow]    ◀─flows::from_specs──────────── [FlowSpec]
//!  WebSearch_distribution.txt ──cdf::parse──▶ SizeCdf (rocesim_model::flow) ──▶ generated traffic
//!  fct_*.txt     ──fct::parse──────▶ [HpccFct]    (its results: FCT and ideal FCT per flow)
//!  e3.cfg + its topology and flow files ──import::import──▶ a scenario (`rocesim import-hpcc`)
//! ```
//!
//! ```text
//!  lib.rs       FormatError, Trailing; the record reader; ns-3's DataRate and Time
//!               strings (parse_rate, parse_time)
//!  config.rs    config_*.txt: HpccConfig, CcMode, RateMap, LinkDown
//!  topology.rs  topology files: HpccTopology, HpccLink
//!  flows.rs     flow files: HpccFlows, HpccFlow; to and from the model's FlowSpec
//!  cdf.rs       flow size distributions, as a SizeCdf
//!  fct.rs       fct.txt: HpccFct
//!  import/      import-hpcc: a config and its files as a scenario's TOML text
//!               (writer.rs the commented TOML document, tables.rs its tables)
//! ```
//!
//! It depends on the model only: `rocesim-scenario` reads the topology,
//! flow and CDF files a scenario names through it, `rocesim import-hpcc`
//! runs [`import`], and tests compare runs with the reference's
//! `fct.txt`.
//!
//! The parsers follow what the reference's own reader accepts (`third.cc`
//! reads tokens with `>>`, so blank lines do not count; rates and delays
//! go through ns-3's `DataRate` and `Time` string parsers) and refuse
//! everything it would misread, with the file, line, field and what was
//! expected. Nothing here panics on bad input.
//!
//! Lines after the last record a header announces are ignored, as the
//! reference ignores them (its own `topology.txt` carries 191 spare link
//! lines and a note after the 65 links its header declares); the parsed
//! value says where they start ([`Trailing`]) so a caller can warn.

use core::fmt;

use rocesim_model::time::{Ps, Rate};

pub mod cdf;
pub mod config;
pub mod fct;
pub mod flows;
pub mod import;
pub mod topology;

pub use config::HpccConfig;
pub use fct::HpccFct;
pub use flows::{HpccFlow, HpccFlows};
pub use topology::{HpccLink, HpccTopology};

/// A malformed line, or a file that does not add up.
///
/// Displays as `file:line: field N (name): message`, dropping the parts
/// that do not apply (`file: message` for a file-level problem).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct FormatError {
    /// The file as the caller named it.
    pub file: String,
    /// 1-based; 0 when the problem is the file as a whole.
    pub line: usize,
    /// 1-based field number and its name, when one field is at fault.
    pub field: Option<(usize, &'static str)>,
    pub msg: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
        }
        if let Some((n, name)) = self.field {
            write!(f, ": field {n} ({name})")?;
        }
        write!(f, ": {}", self.msg)
    }
}

/// Lines that follow the records a file's header announced. The reference
/// never reads them; a caller may warn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trailing {
    /// The first ignored non-blank line (1-based).
    pub first_line: usize,
    /// How many non-blank lines are ignored.
    pub lines: usize,
}

impl Trailing {
    /// A one-line warning naming the file and the ignored lines.
    pub fn warning(&self, file: &str, what: &str) -> String {
        format!(
            "{file}: {} from line {} on, after the {what} the header declares, \
             ignored (as the reference ignores them)",
            roce_capture::human::plural(self.lines as u64, "line"),
            self.first_line
        )
    }
}

/// Reads a file and parses it with `parse` (text, file name for
/// messages); an I/O failure is a [`FormatError`] that names the file.
fn read_with<T>(
    path: &std::path::Path,
    parse: impl Fn(&str, &str) -> Result<T, FormatError>,
) -> Result<T, FormatError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &file),
        Err(e) => Err(FormatError {
            file,
            line: 0,
            field: None,
            msg: format!("cannot read: {e}"),
        }),
    }
}

/// The non-blank lines of a file as (1-based line number, fields); a
/// trailing `\r` (the reference's files are partly CRLF) is whitespace.
pub(crate) struct Records<'a> {
    file: &'a str,
    lines: core::iter::Enumerate<core::str::Lines<'a>>,
}

/// One non-blank line, split into fields.
pub(crate) struct Record<'a> {
    pub file: &'a str,
    pub line: usize,
    pub fields: Vec<&'a str>,
}

impl<'a> Records<'a> {
    pub fn new(file: &'a str, text: &'a str) -> Records<'a> {
        Records {
            file,
            lines: text.lines().enumerate(),
        }
    }

    /// The first record (a header), or an error saying the file is
    /// empty and what `expected` first.
    pub fn header(&mut self, expected: &str) -> Result<Record<'a>, FormatError> {
        self.next()
            .ok_or_else(|| self.file_error(format!("empty: expected {expected}")))
    }

    /// The next of the `n` `noun`s the header (on line `head`) declares,
    /// `got` of which are read; an error if the file ends before.
    pub fn declared(
        &mut self,
        head: usize,
        n: u64,
        noun: &str,
        got: usize,
    ) -> Result<Record<'a>, FormatError> {
        self.next().ok_or_else(|| {
            self.file_error(format!(
                "the header (line {head}) declares {}, the file has {got}",
                roce_capture::human::plural(n, noun)
            ))
        })
    }

    /// The number of non-blank lines left, and the first one's number.
    pub fn trailing(self) -> Option<Trailing> {
        let mut first = None;
        let mut n = 0;
        for r in self {
            first.get_or_insert(r.line);
            n += 1;
        }
        first.map(|first_line| Trailing {
            first_line,
            lines: n,
        })
    }

    pub fn file_error(&self, msg: impl Into<String>) -> FormatError {
        FormatError {
            file: self.file.to_string(),
            line: 0,
            field: None,
            msg: msg.into(),
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Record<'a>;
    fn next(&mut self) -> Option<Record<'a>> {
        for (i, l) in self.lines.by_ref() {
            let fields: Vec<&str> = l.split_whitespace().collect();
            if !fields.is_empty() {
                return Some(Record {
                    file: self.file,
                    line: i + 1,
                    fields,
                });
            }
        }
        None
    }
}

impl<'a> Record<'a> {
    /// An error about the whole line.
    pub fn error(&self, msg: impl Into<String>) -> FormatError {
        FormatError {
            file: self.file.to_string(),
            line: self.line,
            field: None,
            msg: msg.into(),
        }
    }

    /// An error about field `n` (1-based).
    pub fn field_error(&self, n: usize, name: &'static str, msg: impl Into<String>) -> FormatError {
        FormatError {
            file: self.file.to_string(),
            line: self.line,
            field: Some((n, name)),
            msg: msg.into(),
        }
    }

    /// Refuses a line without exactly `names.len()` fields; `shape` is the
    /// line as the format writes it.
    pub fn expect_fields(&self, names: &[&str], shape: &str) -> Result<(), FormatError> {
        if self.fields.len() == names.len() {
            return Ok(());
        }
        Err(self.error(format!(
            "expected {} `{shape}`, found {}",
            roce_capture::human::plural(names.len() as u64, "field"),
            self.fields.len()
        )))
    }

    /// Field `n` (1-based) as an unsigned integer no larger than `max`.
    pub fn uint(&self, n: usize, name: &'static str, max: u64) -> Result<u64, FormatError> {
        let s = self.fields.get(n - 1).copied().unwrap_or("");
        match s.parse::<u64>() {
            Ok(v) if v <= max => Ok(v),
            Ok(v) => Err(self.field_error(n, name, format!("{v} is larger than {max}"))),
            Err(_) => {
                Err(self.field_error(n, name, format!("expected a whole number, found '{s}'")))
            }
        }
    }

    /// Field `n` (1-based) as a finite number.
    pub fn float(&self, n: usize, name: &'static str) -> Result<f64, FormatError> {
        let s = self.fields.get(n - 1).copied().unwrap_or("");
        match s.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.field_error(n, name, format!("expected a number, found '{s}'"))),
        }
    }
}

/// A decimal `digits[.digits][e[+-]digits]` as mantissa x 10^exponent,
/// exactly (no binary rounding), or None.
fn decimal(s: &str, allow_exponent: bool) -> Option<(u128, i32)> {
    let (num, exp) = match s.find(['e', 'E']) {
        Some(i) if allow_exponent => (&s[..i], s[i + 1..].parse::<i32>().ok()?),
        Some(_) => return None,
        None => (s, 0),
    };
    let num = num.strip_prefix('+').unwrap_or(num);
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || int.len() + frac.len() > 30
    {
        return None;
    }
    let mut m: u128 = 0;
    for b in int.bytes().chain(frac.bytes()) {
        m = m * 10 + u128::from(b - b'0');
    }
    Some((m, exp.checked_sub(frac.len() as i32)?))
}

/// `m x 10^e x mult`, rounded down to an integer, if it fits in a u64.
fn scale_floor(m: u128, e: i32, mult: u64) -> Option<u64> {
    let mut v = m.checked_mul(u128::from(mult))?;
    if e >= 0 {
        v = v.checked_mul(10u128.checked_pow(e as u32)?)?;
    } else {
        v = match 10u128.checked_pow(e.unsigned_abs()) {
            Some(d) => v / d,
            None => 0,
        };
    }
    u64::try_from(v).ok()
}

/// ns-3's `DataRate` units (case-sensitive: `Bps` is bytes per second) and
/// their multipliers in bit/s.
const RATE_UNITS: [(&str, u64); 27] = [
    ("bps", 1),
    ("b/s", 1),
    ("Bps", 8),
    ("B/s", 8),
    ("kbps", 1_000),
    ("kb/s", 1_000),
    ("Kbps", 1_000),
    ("Kb/s", 1_000),
    ("kBps", 8_000),
    ("kB/s", 8_000),
    ("KBps", 8_000),
    ("KB/s", 8_000),
    ("Kib/s", 1 << 10),
    ("KiB/s", 8 << 10),
    ("Mbps", 1_000_000),
    ("Mb/s", 1_000_000),
    ("MBps", 8_000_000),
    ("MB/s", 8_000_000),
    ("Mib/s", 1 << 20),
    ("MiB/s", 8 << 20),
    ("Gbps", 1_000_000_000),
    ("Gb/s", 1_000_000_000),
    ("GBps", 8_000_000_000),
    ("GB/s", 8_000_000_000),
    ("Gib/s", 1 << 30),
    ("GiB/s", 8 << 30),
    ("", 1),
];

/// A rate as ns-3's `DataRate` reads it: `100Gbps`, `25Gb/s`, `20Mb/s`,
/// `1000Mbps`; a bare whole number is bit/s. Returns a short message for
/// the caller to place.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let bad = |hint: String| format!("expected a rate like 100Gbps, found '{s}'{hint}");
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let Some(&(_, mult)) = RATE_UNITS.iter().find(|(u, _)| *u == unit) else {
        // ns-3 units are case-sensitive: a case slip is the likeliest typo.
        let units = || RATE_UNITS.iter().map(|(u, _)| *u);
        let hint = units()
            .find(|u| u.eq_ignore_ascii_case(unit))
            .or_else(|| roce_capture::human::closest(unit, units()))
            .filter(|u| !u.is_empty())
            .map(|u| format!(" (did you mean `{num}{u}`?)"))
            .unwrap_or_default();
        return Err(bad(hint));
    };
    if unit.is_empty() && num.contains('.') {
        return Err(bad(String::new()));
    }
    match decimal(num, false).and_then(|(m, e)| scale_floor(m, e, mult)) {
        Some(v) if v > 0 => Ok(Rate(v)),
        Some(_) => Err(format!("a rate must be above 0, found '{s}'")),
        None => Err(bad(String::new())),
    }
}

/// ns-3's `Time` units and their length in picoseconds; a bare number is
/// seconds.
const TIME_UNITS: [(&str, u64); 7] = [
    ("s", 1_000_000_000_000),
    ("ms", 1_000_000_000),
    ("us", 1_000_000),
    ("ns", 1_000),
    ("ps", 1),
    ("fs", 0),
    ("", 1_000_000_000_000),
];

/// A duration as ns-3's `Time` reads it: `1000ns`, `0.001ms`, `1us`, `2`
/// (seconds), exactly to the picosecond (finer parts are dropped, as ns-3
/// drops what is finer than its resolution). The reference runs at
/// nanosecond resolution, so a delay that is not a whole number of
/// nanoseconds is one it rounds down.
pub fn parse_time(s: &str) -> Result<Ps, String> {
    let bad = || format!("expected a duration like 1000ns or 0.001ms, found '{s}'");
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let Some(&(_, mult)) = TIME_UNITS.iter().find(|(u, _)| *u == unit) else {
        return Err(bad());
    };
    let Some((m, e)) = decimal(num, true) else {
        return Err(bad());
    };
    let v = if mult == 0 {
        scale_floor(m, e - 3, 1)
    } else {
        scale_floor(m, e, mult)
    };
    v.map(Ps).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_as_ns3_reads_them() {
        assert_eq!(parse_rate("100Gbps"), Ok(Rate::gbps(100)));
        assert_eq!(parse_rate("400Gbps"), Ok(Rate::gbps(400)));
        assert_eq!(parse_rate("20Mb/s"), Ok(Rate(20_000_000)));
        assert_eq!(parse_rate("2.5Gbps"), Ok(Rate(2_500_000_000)));
        // Bytes per second with a capital B, binary prefixes, bare bit/s.
        assert_eq!(parse_rate("1GBps"), Ok(Rate(8_000_000_000)));
        assert_eq!(parse_rate("1Mib/s"), Ok(Rate(1_048_576)));
        assert_eq!(parse_rate("1000"), Ok(Rate(1000)));
        assert_eq!(
            parse_rate("100Gbs").unwrap_err(),
            "expected a rate like 100Gbps, found '100Gbs' (did you mean `100Gbps`?)"
        );
        assert_eq!(
            parse_rate("100gbps").unwrap_err(),
            "expected a rate like 100Gbps, found '100gbps' (did you mean `100Gbps`?)"
        );
        assert!(parse_rate("1e9bps").is_err());
        assert!(parse_rate("Gbps").is_err());
        assert!(parse_rate("1.5").is_err());
        assert_eq!(
            parse_rate("0Gbps").unwrap_err(),
            "a rate must be above 0, found '0Gbps'"
        );
    }

    #[test]
    fn times_as_ns3_reads_them() {
        assert_eq!(parse_time("1000ns"), Ok(Ps::from_us(1)));
        assert_eq!(parse_time("0.001ms"), Ok(Ps::from_us(1)));
        assert_eq!(parse_time("1us"), Ok(Ps::from_us(1)));
        assert_eq!(parse_time("2"), Ok(Ps::from_ms(2000)));
        assert_eq!(parse_time("2.000000218"), Ok(Ps(2_000_000_218_000)));
        assert_eq!(parse_time("1e-6s"), Ok(Ps::from_us(1)));
        assert_eq!(parse_time("1500fs"), Ok(Ps(1)));
        assert_eq!(parse_time("0.3us"), Ok(Ps(300_000)));
        assert_eq!(parse_time("1000"), Ok(Ps(1_000_000_000_000_000)));
        assert_eq!(
            parse_time("1mus").unwrap_err(),
            "expected a duration like 1000ns or 0.001ms, found '1mus'"
        );
        assert!(parse_time("-1ns").is_err());
        assert!(parse_time("ns").is_err());
        assert!(parse_time("1e30s").is_err());
    }

    #[test]
    fn error_display_drops_what_does_not_apply() {
        let mut e = FormatError {
            file: "fat.txt".into(),
            line: 17,
            field: Some((3, "rate")),
            msg: "m".into(),
        };
        assert_eq!(e.to_string(), "fat.txt:17: field 3 (rate): m");
        e.field = None;
        assert_eq!(e.to_string(), "fat.txt:17: m");
        e.line = 0;
        assert_eq!(e.to_string(), "fat.txt: m");
    }
}
