//! `--format json`: the report as one pretty-printed JSON document.

use std::io::{self, Write};

use super::Exporter;
use crate::analyze::Report;

pub struct JsonExporter;

impl Exporter for JsonExporter {
    fn write(&self, report: &Report, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
        writeln!(out)
    }
}
