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
