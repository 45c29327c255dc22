use super::*;
use crate::write::{CaptureFormat, CaptureWriter};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roce-pcap-capture-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

fn two_frames(format: CaptureFormat, name: &str) -> (PathBuf, Vec<u8>) {
    let path = tmp(name);
    let mut w = CaptureWriter::create(&path, format, 0, "x").unwrap();
    w.write(1, &[0xaa; 100]).unwrap();
    w.write(2, &[0xbb; 300]).unwrap();
    w.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
fn a_file_cut_mid_record_reports_the_record_offset() {
    for (format, first_record_end) in [
        (CaptureFormat::Pcap, 24 + 16 + 100),
        (CaptureFormat::PcapNg, 0),
    ] {
        let (path, bytes) = two_frames(format, &format!("cut.{}", format.extension()));
        // Cut 10 bytes into the second record's data.
        let cut = bytes.len() - 300 + 10
            - if format == CaptureFormat::PcapNg {
                4
            } else {
                0
            };
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let mut r = CaptureReader::open(&path).unwrap();
        assert!(matches!(r.next_frame().unwrap(), Next::Frame(f) if f.data == [0xaa; 100]));
        match r.next_frame().unwrap() {
            Next::Cut { offset } => {
                if format == CaptureFormat::Pcap {
                    assert_eq!(offset, first_record_end);
                }
                assert!((offset as usize) < cut);
            }
            _ => panic!("expected a cut"),
        }
    }
}

#[test]
fn gzip_input_is_read_transparently() {
    use std::io::Write;
    let (path, bytes) = two_frames(CaptureFormat::Pcap, "plain.pcap");
    let gz = path.with_extension("pcap.gz");
    let mut e =
        flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
    e.write_all(&bytes).unwrap();
    e.finish().unwrap();
    let mut r = CaptureReader::open(&gz).unwrap();
    assert!(r.is_gzip());
    let mut n = 0;
    while let Next::Frame(_) = r.next_frame().unwrap() {
        n += 1;
    }
    assert_eq!(n, 2);
}

#[test]
fn a_gzip_stream_cut_short_is_a_cut_at_a_decompressed_offset() {
    let (path, bytes) = two_frames(CaptureFormat::Pcap, "gzcut.pcap");
    let first_record_end = 24 + 16 + 100;
    let gz = path.with_extension("pcap.gz");
    // Cut inside the second record, and exactly at its start: the
    // compressed stream is damaged either way.
    for flush_at in [first_record_end + 30, first_record_end] {
        // The compressed bytes up to the flush decode to exactly
        // `flush_at` bytes; what follows is lost.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &bytes[..flush_at]).unwrap();
        std::io::Write::flush(&mut e).unwrap();
        std::fs::write(&gz, e.get_ref()).unwrap();
        for batches in [false, true] {
            let mut r = CaptureReader::open(&gz).unwrap();
            let (frames, end) = if batches {
                let mut n = 0;
                loop {
                    match r.next_batch().unwrap() {
                        NextBatch::Batch(b) => n += b.len(),
                        NextBatch::Cut { offset } => break (n, Some(offset)),
                        NextBatch::End => break (n, None),
                    }
                }
            } else {
                assert!(matches!(r.next_frame().unwrap(), Next::Frame(f) if f.data == [0xaa; 100]));
                match r.next_frame().unwrap() {
                    Next::Cut { offset } => (1, Some(offset)),
                    _ => (1, None),
                }
            };
            assert_eq!(frames, 1, "flush at {flush_at}");
            assert_eq!(end, Some(first_record_end as u64), "flush at {flush_at}");
            assert!(r.gzip_truncated() && r.is_gzip());
        }
    }
    // The whole stream: no cut.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, &bytes).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    let mut r = CaptureReader::open(&gz).unwrap();
    let mut n = 0;
    while let Next::Frame(_) = r.next_frame().unwrap() {
        n += 1;
    }
    assert_eq!(n, 2);
    assert!(!r.gzip_truncated());
}

#[test]
fn batches_and_single_frames_read_the_same_and_mix() {
    let path = tmp("mix.pcapng");
    let mut w = CaptureWriter::create(&path, CaptureFormat::PcapNg, 0, "x").unwrap();
    for i in 0..30_000u32 {
        w.write(
            u64::from(i),
            &vec![(i % 256) as u8; 60 + (i as usize % 1500)],
        )
        .unwrap();
    }
    w.finish().unwrap();
    let mut all = Vec::new();
    let mut r = CaptureReader::open(&path).unwrap();
    while let Next::Frame(f) = r.next_frame().unwrap() {
        all.push((f.ts_ns, f.offset, f.data.to_vec()));
    }
    assert_eq!(all.len(), 30_000);
    // Mapped or streamed, batches interleaved with single frames, and
    // batches kept alive while the reader goes on.
    for streamed in [false, true] {
        let mut r = if streamed {
            let f = File::open(&path).unwrap();
            CaptureReader::from_reader(path.clone(), Box::new(f), false).unwrap()
        } else {
            CaptureReader::open(&path).unwrap()
        };
        let mut got = Vec::new();
        let mut kept = Vec::new();
        while let Next::Frame(f) = r.next_frame().unwrap() {
            got.push((f.ts_ns, f.offset, f.data.to_vec()));
            match r.next_batch().unwrap() {
                NextBatch::Batch(b) => {
                    assert_eq!(b.first_number(), got.len() as u64 + 1);
                    assert_eq!(b.capture_first_ts(), 0);
                    got.extend(b.iter().map(|f| (f.ts_ns, f.offset, f.data.to_vec())));
                    kept.push(b);
                }
                _ => break,
            }
        }
        assert_eq!(got, all, "streamed: {streamed}");
        assert_eq!(r.frames(), 30_000);
        // The kept batches still read their own bytes: no buffer was
        // reused while a batch held it.
        assert!(kept.len() >= 5, "{} batches", kept.len());
        for b in &kept {
            for (i, f) in b.iter().enumerate() {
                let k = b.first_number() as usize - 1 + i;
                assert_eq!(
                    (f.ts_ns, f.offset, f.data),
                    (all[k].0, all[k].1, &all[k].2[..])
                );
            }
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn not_a_capture_names_the_file_and_magic() {
    let path = tmp("notes.txt");
    std::fs::write(&path, b"hello world").unwrap();
    let e = CaptureReader::open(&path).err().unwrap();
    let msg = e.to_string();
    assert!(
        msg.contains("notes.txt") && msg.contains("68 65 6c 6c"),
        "{msg}"
    );
    let e = CaptureReader::open(tmp("missing.pcap")).err().unwrap();
    assert!(matches!(e, CaptureError::Open { .. }));
}

#[test]
fn empty_file_is_not_a_capture() {
    let path = tmp("empty.pcap");
    std::fs::write(&path, b"").unwrap();
    let e = CaptureReader::open(&path).err().unwrap();
    assert!(matches!(e, CaptureError::NotACapture { .. }));
    assert!(e.to_string().contains("(the file is empty)"), "{e}");
    std::fs::write(&path, b"\x0a\x0d").unwrap();
    let e = CaptureReader::open(&path).err().unwrap();
    assert!(e.to_string().contains("(only 2 bytes: 0a 0d)"), "{e}");
}

/// A pipe whose writer is the test: `read` blocks until the test sends
/// the next chunk, and returns 0 when the sender is dropped.
struct LivePipe {
    chunks: std::sync::mpsc::Receiver<Vec<u8>>,
    pending: Vec<u8>,
}

impl Read for LivePipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            match self.chunks.recv() {
                Ok(c) => self.pending = c,
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

#[test]
fn a_live_stream_yields_each_frame_as_it_arrives() {
    use std::sync::mpsc;
    use std::time::Duration;
    for format in [CaptureFormat::Pcap, CaptureFormat::PcapNg] {
        let (_, bytes) = two_frames(format, &format!("live.{}", format.extension()));
        // Everything up to the end of the first frame's record: the file
        // header (pcapng: SHB and IDB) and one record.
        let second = bytes.len()
            - match format {
                CaptureFormat::Pcap => 16 + 300,
                CaptureFormat::PcapNg => 28 + 300 + 4,
            };
        let (tx, rx) = mpsc::channel();
        let (got_tx, got_rx) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            let pipe = LivePipe {
                chunks: rx,
                pending: Vec::new(),
            };
            let mut r = CaptureReader::open_stream(PathBuf::from(STDIN_NAME), pipe).unwrap();
            let mut n = 0;
            loop {
                match r.next_frame().unwrap() {
                    Next::Frame(f) => {
                        n += 1;
                        got_tx.send(f.data.len()).unwrap();
                    }
                    Next::End => break n,
                    Next::Cut { .. } => panic!("cut"),
                }
            }
        });
        tx.send(bytes[..second].to_vec()).unwrap();
        // The first frame comes out while the writer still holds the pipe
        // open and has sent nothing more.
        assert_eq!(
            got_rx.recv_timeout(Duration::from_secs(10)),
            Ok(100),
            "{format:?}"
        );
        tx.send(bytes[second..].to_vec()).unwrap();
        assert_eq!(
            got_rx.recv_timeout(Duration::from_secs(10)),
            Ok(300),
            "{format:?}"
        );
        drop(tx);
        assert_eq!(reader.join().unwrap(), 2);
    }
}

#[test]
fn dash_is_standard_input_and_named_so() {
    assert!(is_stdin(Path::new("-")));
    assert!(!is_stdin(Path::new("./-")));
    assert_eq!(input_name(Path::new("-")), "<stdin>");
    assert_eq!(input_name(Path::new("a/b.pcap")), "a/b.pcap");
}
