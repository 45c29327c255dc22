//! Capture files the project's writer does not produce, written byte by
//! byte for tests of the reader: other link types and timestamp
//! resolutions, raw pcapng timestamps, gzip.
//!
//! ```text
//!  raw_pcap               any link type (Linux SLL/SLL2), µs or ns, either byte order
//!  pcapng_with_raw_times  one interface, if_tsresol 10^-n s, timestamps given in its units
//!  gzip / gzip_file       a capture as `tcpdump -w - | gzip` leaves it
//! ```
//!
//! Everything else goes through [`crate::synth::Synth`] and
//! `roce_capture::write::CaptureWriter`, so that what the tests read is
//! what the simulator writes.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

pub use flate2::Compression;
use pcap_file::pcap::{PcapHeader, PcapWriter, RawPcapPacket};
use pcap_file::{DataLink, Endianness, TsResolution};

/// Writes a pcap file of `frames`, each `(timestamp in ns, bytes)`, with
/// any link type, resolution and byte order, snaplen 65535.
pub fn raw_pcap(
    path: &Path,
    datalink: DataLink,
    ts_resolution: TsResolution,
    endianness: Endianness,
    frames: &[(u64, Vec<u8>)],
) -> io::Result<()> {
    let err = |e: pcap_file::PcapError| io::Error::other(format!("{}: {e}", path.display()));
    let file = BufWriter::new(File::create(path)?);
    let header = PcapHeader {
        version_major: 2,
        version_minor: 4,
        ts_correction: 0,
        ts_accuracy: 0,
        snaplen: 65535,
        datalink,
        ts_resolution,
        endianness,
    };
    let mut w = PcapWriter::with_header(file, header).map_err(err)?;
    let per_unit = match ts_resolution {
        TsResolution::MicroSecond => 1_000,
        TsResolution::NanoSecond => 1,
    };
    for (t, data) in frames {
        w.write_raw_packet(&RawPcapPacket {
            ts_sec: (t / 1_000_000_000) as u32,
            ts_frac: ((t % 1_000_000_000) / per_unit) as u32,
            incl_len: data.len() as u32,
            orig_len: data.len() as u32,
            data: data.as_slice().into(),
        })
        .map_err(err)?;
    }
    w.into_writer().flush()
}

/// A pcapng block with the given type and body, padded, in little endian.
fn pcapng_block(kind: u32, body: &[u8]) -> Vec<u8> {
    let mut body = body.to_vec();
    body.resize(body.len().div_ceil(4) * 4, 0);
    let len = (12 + body.len()) as u32;
    let mut b = Vec::new();
    b.extend_from_slice(&kind.to_le_bytes());
    b.extend_from_slice(&len.to_le_bytes());
    b.extend_from_slice(&body);
    b.extend_from_slice(&len.to_le_bytes());
    b
}

/// A pcapng file of Ethernet frames on one interface whose timestamps
/// count units of 10^-`tsresol` s, each frame at the given raw time (the
/// writer only writes nanoseconds that fit 64 bits).
pub fn pcapng_with_raw_times(path: &Path, tsresol: u8, frames: &[(u64, &[u8])]) -> io::Result<()> {
    let mut shb = Vec::new();
    shb.extend_from_slice(&0x1A2B_3C4Du32.to_le_bytes());
    shb.extend_from_slice(&1u16.to_le_bytes());
    shb.extend_from_slice(&0u16.to_le_bytes());
    shb.extend_from_slice(&(-1i64).to_le_bytes());
    let mut idb = vec![1, 0, 0, 0, 0, 0, 0, 0];
    // if_tsresol (option 9, length 1), then the end of options.
    idb.extend_from_slice(&[9, 0, 1, 0, tsresol, 0, 0, 0, 0, 0, 0, 0]);
    let mut file = pcapng_block(0x0A0D_0D0A, &shb);
    file.extend(pcapng_block(1, &idb));
    for (ts, data) in frames {
        let mut epb = Vec::new();
        epb.extend_from_slice(&0u32.to_le_bytes());
        epb.extend_from_slice(&((ts >> 32) as u32).to_le_bytes());
        epb.extend_from_slice(&(*ts as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(&(data.len() as u32).to_le_bytes());
        epb.extend_from_slice(data);
        file.extend(pcapng_block(6, &epb));
    }
    std::fs::write(path, file)
}

/// `bytes` as one gzip member.
pub fn gzip(bytes: &[u8], level: Compression) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), level);
    e.write_all(bytes).expect("writing to a Vec");
    e.finish().expect("writing to a Vec")
}

/// Replaces the capture `path` by `path` + `.gz` (default level); returns
/// the new path.
pub fn gzip_file(path: &Path) -> io::Result<PathBuf> {
    let mut name = path.as_os_str().to_owned();
    name.push(".gz");
    let gz = PathBuf::from(name);
    std::fs::write(&gz, gzip(&std::fs::read(path)?, Compression::default()))?;
    std::fs::remove_file(path)?;
    Ok(gz)
}
