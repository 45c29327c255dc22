//! Exporters: one trait, one file per output format, as hyperfine does.
//!
//! Every exporter writes a whole [`Report`] to a byte sink; the CLI picks
//! one by `--format` and writes to stdout or to a temporary file renamed
//! into place.

mod csv;
mod json;
mod table;

use std::io::{self, Write};

use crate::analyze::Report;

pub use self::csv::CsvExporter;
pub use self::json::JsonExporter;
pub use self::table::TableExporter;

pub trait Exporter {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()>;
}

/// `--format` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Json,
    Csv,
}

impl Format {
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Table => Box::new(TableExporter),
            Format::Json => Box::new(JsonExporter),
            Format::Csv => Box::new(CsvExporter),
        }
    }
}

/// Human-readable byte counts (powers of 1000, as link rates are).
pub(crate) fn bytes(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.2} GB", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2} MB", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1} kB", n / 1e3)
    } else {
        format!("{n} B")
    }
}

/// Human-readable durations from nanoseconds.
pub(crate) fn duration(ns: u64) -> String {
    let n = ns as f64;
    if n >= 1e9 {
        format!("{:.3} s", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.3} ms", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.2} µs", n / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// A rate given in Gb/s, in the unit that shows its digits: a slow flow
/// reads `12.3 Mb/s`, not `0.000 Gb/s`.
pub(crate) fn rate(gbps: f64) -> String {
    let bps = gbps * 1e9;
    if bps >= 1e9 {
        format!("{gbps:.3} Gb/s")
    } else if bps >= 1e6 {
        format!("{:.3} Mb/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.3} kb/s", bps / 1e3)
    } else {
        format!("{bps:.0} b/s")
    }
}

/// `n` and `word`, with an `s` unless `n` is 1: `1 packet`, `2 packets`.
pub(crate) fn plural(n: impl Into<u64>, word: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_their_digits() {
        assert_eq!(rate(6.186), "6.186 Gb/s");
        assert_eq!(rate(1.0), "1.000 Gb/s");
        assert_eq!(rate(0.054), "54.000 Mb/s");
        assert_eq!(rate(0.0000033), "3.300 kb/s");
        assert_eq!(rate(0.0000000014), "1 b/s");
        assert_eq!(rate(0.0), "0 b/s");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1u64, "packet"), "1 packet");
        assert_eq!(plural(0u64, "packet"), "0 packets");
        assert_eq!(plural(37u64, "ACK"), "37 ACKs");
    }
}
