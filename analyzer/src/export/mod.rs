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
