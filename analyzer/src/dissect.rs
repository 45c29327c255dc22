//! `roce-pcap dissect`: placeholder, to be implemented (issue 2).

use std::path::PathBuf;

/// Arguments of `roce-pcap dissect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A pcap, pcapng or gzip-compressed capture.
    pub file: PathBuf,
}

pub fn run(_args: &Args) -> Result<crate::Outcome, crate::capture::CaptureError> {
    unimplemented!("roce-pcap dissect")
}
