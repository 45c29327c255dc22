//! Writing captures: one writer for the simulator's taps, the corpus
//! generators and the tests, so that everything the project writes is read
//! back by the same [`crate::read::CaptureReader`].
//!
//! Timestamps are nanoseconds. pcap files use the nanosecond magic; pcapng
//! files declare `if_tsresol` = 9 and name the interface after the capture
//! point (for example `hostA.bond0.slave1`), which tshark shows as
//! `frame.interface_name`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pcap_file::pcap::{PcapHeader, PcapWriter, RawPcapPacket};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{
    InterfaceDescriptionBlock, InterfaceDescriptionOption,
};
use pcap_file::{DataLink, Endianness, TsResolution};

/// On-disk capture format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CaptureFormat {
    Pcap,
    PcapNg,
}

impl CaptureFormat {
    pub fn extension(self) -> &'static str {
        match self {
            CaptureFormat::Pcap => "pcap",
            CaptureFormat::PcapNg => "pcapng",
        }
    }
}

enum Inner {
    Pcap(PcapWriter<BufWriter<File>>),
    PcapNg(PcapNgWriter<BufWriter<File>>),
}

/// Writes Ethernet frames to a pcap or pcapng file.
pub struct CaptureWriter {
    inner: Inner,
    path: PathBuf,
    snaplen: u32,
    frames: u64,
}

fn pcap_err(path: &Path, e: pcap_file::PcapError) -> io::Error {
    io::Error::other(format!("{}: {e}", path.display()))
}

impl CaptureWriter {
    /// Creates `path`. Frames longer than `snaplen` are cut to it (0 means
    /// no limit), as tcpdump `-s` does, keeping their wire length.
    pub fn create(
        path: impl AsRef<Path>,
        format: CaptureFormat,
        snaplen: u32,
        if_name: &str,
    ) -> io::Result<CaptureWriter> {
        let path = path.as_ref().to_path_buf();
        let file = File::create(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let out = BufWriter::with_capacity(1 << 20, file);
        let snaplen = if snaplen == 0 { 262_144 } else { snaplen };
        let inner = match format {
            CaptureFormat::Pcap => {
                let header = PcapHeader {
                    version_major: 2,
                    version_minor: 4,
                    ts_correction: 0,
                    ts_accuracy: 0,
                    snaplen,
                    datalink: DataLink::ETHERNET,
                    ts_resolution: TsResolution::NanoSecond,
                    endianness: Endianness::Little,
                };
                Inner::Pcap(PcapWriter::with_header(out, header).map_err(|e| pcap_err(&path, e))?)
            }
            CaptureFormat::PcapNg => {
                let mut w = PcapNgWriter::with_endianness(out, Endianness::Little)
                    .map_err(|e| pcap_err(&path, e))?;
                let idb = InterfaceDescriptionBlock {
                    linktype: DataLink::ETHERNET,
                    snaplen,
                    options: vec![
                        InterfaceDescriptionOption::IfName(if_name.to_string().into()),
                        InterfaceDescriptionOption::IfTsResol(9),
                    ],
                };
                w.write_pcapng_block(idb).map_err(|e| pcap_err(&path, e))?;
                Inner::PcapNg(w)
            }
        };
        Ok(CaptureWriter {
            inner,
            path,
            snaplen,
            frames: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Appends one frame seen at `ts_ns` (nanoseconds since the epoch of
    /// the capture; the simulator uses simulated time).
    pub fn write(&mut self, ts_ns: u64, frame: &[u8]) -> io::Result<()> {
        let incl = frame.len().min(self.snaplen as usize);
        let data = &frame[..incl];
        let result = match &mut self.inner {
            Inner::Pcap(w) => w
                .write_raw_packet(&RawPcapPacket {
                    ts_sec: (ts_ns / 1_000_000_000) as u32,
                    ts_frac: (ts_ns % 1_000_000_000) as u32,
                    incl_len: incl as u32,
                    orig_len: frame.len() as u32,
                    data: data.into(),
                })
                .map(|_| ()),
            Inner::PcapNg(w) => w
                .write_pcapng_block(EnhancedPacketBlock {
                    interface_id: 0,
                    timestamp: Duration::from_nanos(ts_ns),
                    original_len: frame.len() as u32,
                    data: data.into(),
                    options: vec![],
                })
                .map(|_| ()),
        };
        self.frames += 1;
        result.map_err(|e| pcap_err(&self.path, e))
    }

    /// Flushes and closes the file (and syncs it to disk, when it is one).
    pub fn finish(self) -> io::Result<()> {
        let mut out = match self.inner {
            Inner::Pcap(w) => w.into_writer(),
            Inner::PcapNg(w) => w.into_inner(),
        };
        out.flush()
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", self.path.display())))?;
        let file = out
            .into_inner()
            .map_err(|e| io::Error::other(format!("{}: {e}", self.path.display())))?;
        // A FIFO or a device (a capture streamed into a pipe) has nothing
        // to sync, and fsync on it fails with EINVAL.
        if file.metadata()?.is_file() {
            file.sync_all()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::{CaptureReader, Next};

    #[test]
    fn pcap_and_pcapng_read_back_with_nanosecond_times_and_snaplen() {
        let dir = std::env::temp_dir().join(format!("roce-pcap-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let frame: Vec<u8> = (0..200u8).collect();
        for format in [CaptureFormat::Pcap, CaptureFormat::PcapNg] {
            let path = dir.join(format!("t.{}", format.extension()));
            let mut w = CaptureWriter::create(&path, format, 128, "h0.eth0").unwrap();
            w.write(1_500_000_123, &frame).unwrap();
            w.write(1_500_000_999, &frame[..60]).unwrap();
            w.finish().unwrap();
            let mut r = CaptureReader::open(&path).unwrap();
            let Next::Frame(a) = r.next_frame().unwrap() else {
                panic!()
            };
            assert_eq!(
                (a.ts_ns, a.wire_len, a.data),
                (1_500_000_123, 200, &frame[..128])
            );
            let Next::Frame(b) = r.next_frame().unwrap() else {
                panic!()
            };
            assert_eq!((b.ts_ns, b.wire_len, b.data.len()), (1_500_000_999, 60, 60));
            assert!(matches!(r.next_frame().unwrap(), Next::End));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
