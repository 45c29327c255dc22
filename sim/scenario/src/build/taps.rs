//! Capture taps: checked with the rest of the scenario, opened (files
//! created in the run directory) only once the whole scenario is good.

use std::path::Path;

use roce_capture::write::{CaptureFormat, CaptureWriter};

use super::fabric::PortNames;
use super::names::root;
use crate::diagnostic::ModelError;
use crate::schema::{Scenario, TapFormat};
use rocesim_model::world::World;
use rocesim_model::world::tap::Tap;

pub(super) fn check_taps(
    w: &World,
    sc: &Scenario,
    names: &PortNames,
) -> Result<Vec<TapPlan>, ModelError> {
    let mut plans: Vec<TapPlan> = Vec::new();
    for (ti, tc) in sc.taps.iter().enumerate() {
        let at = root().key("tap").index(ti);
        let Some(&port) = names.get(&tc.at) else {
            let mut sorted: Vec<&str> = names.keys().map(String::as_str).collect();
            sorted.sort_unstable();
            return Err(
                ModelError::new(at.key("at"), format!("no port `{}` to tap", tc.at))
                    .did_you_mean(&tc.at, sorted),
            );
        };
        if plans.iter().any(|p| p.port == port) {
            return Err(ModelError::new(
                at.key("at"),
                format!("port `{}` already has a tap", tc.at),
            ));
        }
        let (format, ext) = match tc.format {
            TapFormat::Pcap => (CaptureFormat::Pcap, "pcap"),
            TapFormat::Pcapng => (CaptureFormat::PcapNg, "pcapng"),
        };
        let file = tc
            .file
            .clone()
            .unwrap_or_else(|| format!("{}.{ext}", tc.at));
        if file.contains('/') || file.starts_with('.') || file == "summary.json" {
            return Err(ModelError::new(
                at.key("file"),
                format!("`{file}` must be a plain file name inside the run directory"),
            ));
        }
        if plans.iter().any(|p| p.file == file) {
            return Err(ModelError::new(
                at.key("file"),
                format!("two taps write `{file}`"),
            ));
        }
        if tc.snaplen != 0 && tc.snaplen < 64 {
            return Err(ModelError::new(
                at.key("snaplen"),
                format!(
                    "snaplen {} cuts even the headers; use 0 (whole frames) or at least 64",
                    tc.snaplen
                ),
            )
            .hint("128 keeps Ethernet/IP/UDP/BTH/RETH"));
        }
        debug_assert!(w.ports[port as usize].tap().is_none());
        plans.push(TapPlan {
            index: ti,
            port,
            file,
            format,
        });
    }
    Ok(plans)
}

/// A checked tap: the port, the file it writes and its format, and the
/// index of the tap in the scenario.
#[derive(Debug)]
pub(super) struct TapPlan {
    index: usize,
    port: u32,
    file: String,
    format: CaptureFormat,
}

/// Creates the capture files in `dir` and attaches them to their ports.
pub(super) fn open_taps(
    w: &mut World,
    sc: &Scenario,
    plans: Vec<TapPlan>,
    dir: &Path,
) -> Result<(), ModelError> {
    for p in plans {
        let tc = &sc.taps[p.index];
        let writer = CaptureWriter::create(dir.join(&p.file), p.format, tc.snaplen, &tc.at);
        let tap = writer.map(|wr| Tap::new(p.port, wr, p.file)).map_err(|e| {
            ModelError::new(
                root().key("tap").index(p.index).key("at"),
                format!("cannot create the capture: {e}"),
            )
        })?;
        w.ports[p.port as usize].set_tap(w.taps.len() as u32);
        w.taps.push(tap);
    }
    Ok(())
}
