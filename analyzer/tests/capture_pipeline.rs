//! The parallel reading path against the sequential one: `roce-pcap
//! dissect` and `analyze` give the same bytes for any `--threads`, for
//! mapped files and gzip streams alike, and equal to decoding every frame
//! in turn on one thread (`next_frame` + `Dissector::write_frame`); a gzip
//! file cut short is a cut file (exit 3, offset in the decompressed
//! stream), not an I/O error.

use std::path::{Path, PathBuf};
use std::process::Output;

use roce_capture::read::{CaptureReader, Next};
use roce_codec::ParseOptions;
use roce_pcap::dissect::{Dissector, Format};
use roce_testkit::ci::public_trace;
use roce_testkit::cli::TempDir;
use roce_testkit::pcap::{Compression, gzip as gzip_with};
use roce_testkit::repo;
use roce_testkit::synth::{Synth, format_of};

fn run(args: &[&str]) -> Output {
    roce_testkit::cli::run(env!("CARGO_BIN_EXE_roce-pcap"), args)
}

fn traces() -> Vec<PathBuf> {
    let dir = repo::root().join("traces");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with(".pcap") || n.ends_with(".pcapng") || n.ends_with(".gz")
        })
        .collect();
    v.sort();
    assert!(v.len() >= 10, "the shipped traces are missing: {v:?}");
    v.extend(
        ["roce.pcap", "dcb_pfc.pcap"]
            .into_iter()
            .filter_map(public_trace),
    );
    v
}

/// Every frame decoded in turn on this thread, as `dissect` printed it
/// before it had decoder threads.
fn sequential(path: &Path, format: Format) -> (Vec<u8>, Option<u64>) {
    let mut r = CaptureReader::open(path).unwrap();
    let mut d = Dissector::new(ParseOptions::default(), format);
    let mut out = Vec::new();
    loop {
        match r.next_frame().unwrap() {
            Next::Frame(raw) => d.write_frame(&raw, &mut out).unwrap(),
            Next::End => return (out, None),
            Next::Cut { offset } => return (out, Some(offset)),
        }
    }
}

/// `dir/name` with `frames` frames of many sizes on 8 QPs: enough for many
/// batches and buffers.
fn big_capture(dir: &Path, name: &str, frames: u32) -> PathBuf {
    use roce_codec::*;
    let path = dir.join(name);
    let mut s = Synth::create_named(&[(&path, format_of(&path), 0, "x")]).unwrap();
    for i in 0..frames {
        let qp = i % 8;
        let len = [64u32, 256, 1024, 4096, 17][(i % 5) as usize];
        let ib = IbRepr::new(Opcode(0x04), 0x100 + qp, Psn::new(i), len);
        let ip = IpRepr::V4(Ipv4Repr::udp(
            std::net::Ipv4Addr::new(10, 0, 0, 1 + qp as u8),
            std::net::Ipv4Addr::new(10, 0, 1, 1),
            26,
            if i % 97 == 0 { 3 } else { 2 },
        ));
        let f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], ip, 49152, ib);
        let mut bytes = f.to_vec(&vec![(i % 251) as u8; len as usize]);
        if i % 1000 == 999 {
            let n = bytes.len();
            bytes[n - 1] ^= 1; // a bad ICRC now and then
        }
        s.record(0, 1_000_000 + u64::from(i) * 700, &f, &bytes)
            .unwrap();
    }
    s.finish().unwrap();
    path
}

/// Fast: the captures here are tens of MB.
fn gzip(bytes: &[u8]) -> Vec<u8> {
    gzip_with(bytes, Compression::fast())
}

fn dissect(path: &Path, format: &str, threads: Option<&str>) -> Output {
    let mut args = vec!["dissect", "--format", format, path.to_str().unwrap()];
    if let Some(t) = threads {
        args.extend(["--threads", t]);
    }
    run(&args)
}

#[test]
fn dissect_prints_the_same_bytes_for_any_thread_count() {
    let dir = TempDir::new("dissect");
    let mut files = traces();
    let big = big_capture(&dir, "big.pcapng", 30_000);
    let big_gz = dir.join("big.pcapng.gz");
    std::fs::write(&big_gz, gzip(&std::fs::read(&big).unwrap())).unwrap();
    files.extend([big, big_gz]);
    for path in &files {
        for (format, name) in [(Format::Jsonl, "jsonl"), (Format::Text, "text")] {
            let (want, cut) = sequential(path, format);
            for threads in [None, Some("1"), Some("3")] {
                let o = dissect(path, name, threads);
                assert_eq!(
                    o.status.code(),
                    Some(if cut.is_some() { 3 } else { 0 }),
                    "{}: {}",
                    path.display(),
                    String::from_utf8_lossy(&o.stderr)
                );
                assert!(
                    o.stdout == want,
                    "{} --format {name} --threads {threads:?} differs from the sequential output",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn analyze_reports_the_same_bytes_for_any_thread_count() {
    let dir = TempDir::new("analyze");
    let a = big_capture(&dir, "a.pcap", 20_000);
    let b = big_capture(&dir, "b.pcapng", 7_000);
    let b_gz = dir.join("b.pcapng.gz");
    std::fs::write(&b_gz, gzip(&std::fs::read(&b).unwrap())).unwrap();
    let a = a.to_str().unwrap();
    let b_gz = b_gz.to_str().unwrap();
    for files in [vec![a], vec![a, b_gz]] {
        let mut outs = Vec::new();
        for threads in ["1", "2", "5"] {
            let mut args = vec!["analyze", "--format", "json", "--threads", threads];
            args.extend(&files);
            let o = run(&args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            outs.push(o.stdout);
        }
        assert!(outs.windows(2).all(|w| w[0] == w[1]), "{files:?}");
        let v: serde_json::Value = serde_json::from_slice(&outs[0]).unwrap();
        assert_eq!(
            v["files"][0]["packets"], 20_000,
            "every frame of the first file counted"
        );
        assert_eq!(
            v["files"][0]["icrc_errors"], 20,
            "one bad ICRC per 1000 frames"
        );
    }
}

#[test]
fn a_gzip_file_cut_short_is_dissected_and_analyzed_up_to_the_cut() {
    let dir = TempDir::new("gzcut");
    let plain = big_capture(&dir, "cut_src.pcap", 5_000);
    let bytes = std::fs::read(&plain).unwrap();
    let gz = gzip(&bytes);
    let cut = dir.join("cut.pcap.gz");
    std::fs::write(&cut, &gz[..gz.len() * 2 / 3]).unwrap();

    let (want, offset) = sequential(&cut, Format::Jsonl);
    let offset = offset.expect("the reader reports a cut, not an error");
    // The offset is where a record starts in the decompressed stream.
    let mut r = CaptureReader::open(&plain).unwrap();
    let mut starts = Vec::new();
    while let Next::Frame(f) = r.next_frame().unwrap() {
        starts.push(f.offset);
    }
    let k = starts
        .iter()
        .position(|&s| s == offset)
        .expect("the cut is at a record start");
    assert_eq!(String::from_utf8(want.clone()).unwrap().lines().count(), k);

    let o = dissect(&cut, "jsonl", None);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, want);
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("cut.pcap.gz")
            && err.contains("gzip stream ends early")
            && err.contains(&format!("byte {offset} of the decompressed stream"))
            && err.contains(&format!("the {k} frames before it")),
        "{err}"
    );

    let o = run(&["analyze", "--format", "json", cut.to_str().unwrap()]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("gzip stream ends early") && err.contains("decompressed"),
        "{err}"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"][0]["packets"], k as u64);
    assert_eq!(v["files"][0]["cut_at_offset"], offset);
    assert_eq!(v["files"][0]["cut_in_gzip"], true);

    // A whole gzip of a capture cut mid-record is a cut file, not a cut
    // gzip stream.
    let half = dir.join("half.pcap.gz");
    std::fs::write(&half, gzip(&bytes[..bytes.len() / 2])).unwrap();
    let o = run(&["analyze", "--format", "json", half.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"][0]["cut_in_gzip"], false);
    let o = dissect(&half, "text", None);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("in the middle of the record at byte") && err.contains("decompressed"),
        "{err}"
    );
}

#[test]
fn zero_threads_is_a_flag_error() {
    let dir = TempDir::new("zero");
    let p = big_capture(&dir, "z.pcap", 10);
    for cmd in ["dissect", "analyze"] {
        let o = run(&[cmd, p.to_str().unwrap(), "--threads", "0"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.contains("--threads"), "{cmd}: {err}");
        assert!(o.stdout.is_empty());
    }
}
