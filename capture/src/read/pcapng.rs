//! The block walker of pcapng files: sections, interface descriptions
//! (each with its link type and time resolution) and the three kinds of
//! packet block; any other block is skipped.
//!
//! ```text
//!  block: type(4) length(4) body(length - 12) length(4)
//!  SHB 0x0A0D0D0A / IDB 1   ─▶ the interfaces of the section, refreshed
//!  EPB 6 / obsolete PB 2     ─▶ interface id, 64-bit timestamp in the interface's units, caplen, orig len, data
//!  SPB 3                     ─▶ interface 0, no timestamp, orig len, data
//! ```

use pcap_file::pcapng::PcapNgParser;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::{Endianness, PcapError};

use super::{CaptureError, LinkType, MAX_RECORD, Record, RecordAt, Step};

/// Per-interface facts of a pcapng section.
#[derive(Debug, Clone, Copy)]
pub(super) struct Interface {
    link: Option<LinkType>,
    linktype: u32,
    /// Nanoseconds per timestamp unit as a ratio (num / den).
    ts_num: u64,
    ts_den: u64,
}

/// Looks at the block at the start of `buf` without consuming it.
#[inline]
pub(super) fn step(
    parser: &mut PcapNgParser,
    interfaces: &mut Vec<Interface>,
    buf: &[u8],
    at: &RecordAt<'_>,
) -> Result<Step, CaptureError> {
    let big = parser.section().endianness == Endianness::Big;
    if buf.len() < 12 {
        return Ok(Step::Need(12));
    }
    let (block_type, declared) = {
        let b4: [u8; 4] = buf[4..8].try_into().unwrap();
        let t: [u8; 4] = buf[0..4].try_into().unwrap();
        if big || t == [0x0a, 0x0d, 0x0d, 0x0a] {
            // A new section may switch byte order; its length is
            // read with the order its own magic gives.
            let le = buf.len() >= 12 && buf[8..12] == [0x4d, 0x3c, 0x2b, 0x1a];
            let len = if le {
                u32::from_le_bytes(b4)
            } else {
                u32::from_be_bytes(b4)
            };
            (u32::from_be_bytes(t), len as usize)
        } else {
            (u32::from_le_bytes(t), u32::from_le_bytes(b4) as usize)
        }
    };
    if declared > MAX_RECORD {
        return Err(at.corrupt(format!(
            "block length {declared} is implausible (corrupt file?)"
        )));
    }
    let raw = match parser.next_raw_block(buf) {
        Ok((_, raw)) => raw,
        Err(PcapError::IncompleteBuffer) => return Ok(Step::Need(declared.max(12))),
        Err(e) => return Err(at.corrupt(e.to_string())),
    };
    let record_len = raw.initial_len as usize;
    let body = &buf[8..record_len - 4];
    let rd = |i: usize| -> u32 {
        let b: [u8; 4] = body[i..i + 4].try_into().unwrap();
        if big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        }
    };
    match block_type {
        // Section header or interface description: refresh our view of the interfaces.
        0x0A0D0D0A | 0x0000_0001 => {
            *interfaces = parser.interfaces().iter().map(Interface::of).collect();
            Ok(Step::Skip(record_len))
        }
        // Enhanced packet block; obsolete packet block (2) has the same
        // layout with a 16-bit interface id and a drops counter.
        0x0000_0006 | 0x0000_0002 => {
            if body.len() < 20 {
                return Err(at.corrupt("packet block shorter than its fixed fields".into()));
            }
            let interface_id = if block_type == 6 {
                rd(0)
            } else {
                let b = [body[0], body[1]];
                u32::from(if big {
                    u16::from_be_bytes(b)
                } else {
                    u16::from_le_bytes(b)
                })
            };
            let raw_ts = (u64::from(rd(4)) << 32) | u64::from(rd(8));
            let caplen = rd(12) as usize;
            let orig = rd(16) as usize;
            if 20 + caplen > body.len() {
                return Err(at.corrupt(format!(
                    "packet block captured length {caplen} exceeds the block ({} bytes)",
                    record_len
                )));
            }
            let interface = interfaces
                .get(interface_id as usize)
                .copied()
                .ok_or_else(|| {
                    at.corrupt(format!(
                        "packet block names interface {interface_id}, which was never described"
                    ))
                })?;
            Ok(Step::Frame(Record {
                data_at: 8 + 20,
                data_len: caplen,
                record_len,
                // A time past 2^64 ns (year 2554) is corrupt; it
                // reads as the largest time rather than wrapping
                // around to a plausible-looking one.
                ts_ns: u64::try_from(
                    u128::from(raw_ts) * u128::from(interface.ts_num)
                        / u128::from(interface.ts_den),
                )
                .unwrap_or(u64::MAX),
                wire_len: orig.max(caplen),
                link: interface.link(at)?,
            }))
        }
        // Simple packet block: interface 0, no timestamp.
        0x0000_0003 => {
            if body.len() < 4 {
                return Err(at.corrupt("simple packet block shorter than its fixed fields".into()));
            }
            let orig = rd(0) as usize;
            let caplen = orig.min(body.len() - 4);
            let interface = interfaces.first().copied().ok_or_else(|| {
                at.corrupt("simple packet block before any interface description".into())
            })?;
            Ok(Step::Frame(Record {
                data_at: 12,
                data_len: caplen,
                record_len,
                ts_ns: 0,
                wire_len: orig,
                link: interface.link(at)?,
            }))
        }
        _ => Ok(Step::Skip(record_len)),
    }
}

impl Interface {
    fn of(idb: &InterfaceDescriptionBlock<'static>) -> Interface {
        // if_tsresol: MSB clear = 10^-n s, MSB set = 2^-n s; default 10^-6.
        let resol = idb
            .options
            .iter()
            .find_map(|o| match o {
                InterfaceDescriptionOption::IfTsResol(r) => Some(*r),
                _ => None,
            })
            .unwrap_or(6);
        let (ts_num, ts_den) = if resol & 0x80 == 0 {
            let n = u32::from(resol);
            if n <= 9 {
                (10u64.pow(9 - n), 1)
            } else {
                (1, 10u64.pow((n - 9).min(19)))
            }
        } else {
            let n = u32::from(resol & 0x7F).min(63);
            (1_000_000_000, 1u64 << n)
        };
        Interface {
            link: LinkType::from_datalink(idb.linktype),
            linktype: u32::from(idb.linktype),
            ts_num,
            ts_den,
        }
    }

    /// The interface's link layer, or the error for one we do not decode.
    fn link(&self, at: &RecordAt<'_>) -> Result<LinkType, CaptureError> {
        self.link.ok_or_else(|| at.unsupported_link(self.linktype))
    }
}
