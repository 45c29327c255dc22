//! The record walker of classic pcap files: a 16-byte header before every
//! frame, in the byte order and time resolution the file header gives.
//!
//! ```text
//!  record: ts_sec(4) ts_frac(4: µs or ns) incl_len(4) orig_len(4) data(incl_len)
//! ```

use pcap_file::pcap::PcapParser;
use pcap_file::{Endianness, PcapError};

use super::{CaptureError, LinkType, MAX_RECORD, Record, RecordAt, Step};

/// Looks at the record at the start of `buf` without consuming it.
#[inline]
pub(super) fn step(
    parser: &PcapParser,
    link: LinkType,
    nanos: bool,
    buf: &[u8],
    at: &RecordAt<'_>,
) -> Result<Step, CaptureError> {
    let big = parser.header().endianness == Endianness::Big;
    let u32_at = |i: usize| {
        let b: [u8; 4] = buf[i..i + 4].try_into().unwrap();
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    if buf.len() < 16 {
        return Ok(Step::Need(16));
    }
    let incl = u32_at(8) as usize;
    if incl > MAX_RECORD {
        return Err(at.corrupt(format!(
            "record captured length {incl} is implausible (corrupt file?)"
        )));
    }
    let raw = match parser.next_raw_packet(buf) {
        Ok((_, raw)) => raw,
        Err(PcapError::IncompleteBuffer) => return Ok(Step::Need(16 + incl)),
        Err(e) => return Err(at.corrupt(e.to_string())),
    };
    let frac = u64::from(raw.ts_frac);
    let frac_ns = if nanos { frac } else { frac * 1000 };
    if frac_ns >= 1_000_000_000 {
        return Err(at.corrupt(format!(
            "record timestamp fraction {frac} is out of range for {} resolution",
            if nanos { "nanosecond" } else { "microsecond" }
        )));
    }
    Ok(Step::Frame(Record {
        data_at: 16,
        data_len: incl,
        record_len: 16 + incl,
        ts_ns: u64::from(raw.ts_sec) * 1_000_000_000 + frac_ns,
        wire_len: (raw.orig_len as usize).max(incl),
        link,
    }))
}
