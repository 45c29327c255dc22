//! Decode throughput of `roce-pcap dissect` beside tshark, on one generated
//! capture of full-size RoCEv2 frames, in one run.
//!
//! ```sh
//! cargo bench -p roce-pcap --bench decode              # 300,000 frames, MTU 4096
//! ROCE_BENCH_MTU=1024 cargo bench -p roce-pcap --bench decode
//! ROCE_BENCH_FRAMES=50000 ROCE_BENCH_REPS=3 cargo bench -p roce-pcap --bench decode
//! ```
//!
//! The capture is written into a temporary directory (never committed) by
//! `roce_testkit::synth::full_size_writes`: RDMA WRITEs of 64 KiB on 8 QPs,
//! every packet a full path-MTU payload (FIRST with RETH, MIDDLE, LAST). Measured, each
//! `ROCE_BENCH_REPS` times (medians reported):
//!
//! * `decode`: what `dissect` does per frame without formatting, on the
//!   same pipeline (`roce_capture::pipeline`): a reader thread walks the
//!   mapped file into batches, decoder threads (one per core) decode every
//!   frame (`RawFrame::decode`) and verify every ICRC, results come back in
//!   frame order.
//! * `decode, sequential`: the same on one thread (`next_frame` loop).
//! * `dissect jsonl`: the pipeline plus the JSON line of every frame,
//!   written to a sink (the `Dissector` that `roce-pcap dissect` runs).
//! * `tshark`: `tshark -r FILE -T fields -e <BTH fields> > /dev/null`.
//!
//! The runs of the three tools are interleaved, so that a burst of load on
//! the shared machine hits all of them; medians and a ratio are reported
//! rather than one number. `ROCE_BENCH_PROBE=1` adds a breakdown: the
//! reader alone, a plain `File::read` loop over the same file and decoding
//! without the ICRC.

use std::io;
use std::path::Path;
use std::time::Instant;

use roce_capture::pipeline::{self, Item};
use roce_capture::read::{CaptureReader, FrameBatch, Next};
use roce_codec::*;
use roce_pcap::dissect::{Dissector, Format};
use roce_testkit::bench::env_or;
use roce_testkit::synth::full_size_writes;
use roce_testkit::tshark::{self, BTH_FIELDS, fields_discarded};

/// A way of decoding a whole file: frames, and RoCE frames with a valid ICRC.
type Decoder = fn(&Path) -> (u64, u64);

/// Read + decode + ICRC check of every frame on the pipeline; returns
/// frames and RoCE frames with a valid ICRC.
fn decode(path: &Path) -> (u64, u64) {
    let mut r = CaptureReader::open(path).unwrap();
    let opts = ParseOptions::default();
    let threads = pipeline::default_threads();
    pipeline::with_decoders(threads, |d| {
        let mut batches = d.read(&mut r, 2 * threads, move |b: &FrameBatch| {
            let mut good = 0u64;
            for raw in b.iter() {
                let f = raw.decode(&opts).unwrap();
                if f.ib().and_then(|ib| ib.icrc_valid) == Some(true) {
                    good += 1;
                }
            }
            (b.len() as u64, good)
        });
        let (mut n, mut good) = (0, 0);
        loop {
            match batches.recv().unwrap() {
                Item::Batch((k, g)) => {
                    n += k;
                    good += g;
                }
                Item::End => return (n, good),
                Item::Cut { offset } => panic!("cut at {offset}"),
            }
        }
    })
}

/// The same on one thread: `next_frame`, decode, ICRC.
fn decode_sequential(path: &Path) -> (u64, u64) {
    let mut r = CaptureReader::open(path).unwrap();
    let opts = ParseOptions::default();
    let (mut n, mut good) = (0, 0);
    loop {
        match r.next_frame().unwrap() {
            Next::Frame(raw) => {
                n += 1;
                let f = raw.decode(&opts).unwrap();
                if f.ib().and_then(|ib| ib.icrc_valid) == Some(true) {
                    good += 1;
                }
            }
            Next::End => return (n, good),
            Next::Cut { offset } => panic!("cut at {offset}"),
        }
    }
}

/// `roce-pcap dissect --format jsonl` into a sink; returns the bytes written.
fn dissect_jsonl(path: &Path) -> u64 {
    struct Count(u64);
    impl io::Write for Count {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut r = CaptureReader::open(path).unwrap();
    let mut d = Dissector::new(ParseOptions::default(), Format::Jsonl);
    let mut out = Count(0);
    d.dissect_all(&mut r, &mut out).unwrap();
    out.0
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (Vec<f64>, T) {
    let mut secs = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let t0 = Instant::now();
        let out = f();
        secs.push(t0.elapsed().as_secs_f64());
        last = Some(out);
    }
    (secs, last.unwrap())
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing
    // we need to act on, but then a quick run is enough.
    let quick = !std::env::args().any(|a| a == "--bench");
    let frames = env_or("ROCE_BENCH_FRAMES", if quick { 2_000 } else { 300_000 });
    let mtu = env_or("ROCE_BENCH_MTU", 4096) as u32;
    let reps = env_or("ROCE_BENCH_REPS", if quick { 1 } else { 5 });
    let tshark_reps = env_or("ROCE_BENCH_TSHARK_REPS", if quick { 1 } else { 3 });
    assert!(
        [256, 512, 1024, 2048, 4096].contains(&mtu),
        "ROCE_BENCH_MTU must be an IB path MTU"
    );

    let dir = std::env::temp_dir().join(format!("roce-pcap-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bench.pcap");
    let size = full_size_writes(&path, frames, mtu).unwrap();
    let mb = size as f64 / 1e6;
    println!(
        "capture: {frames} RoCEv2 frames, IB MTU {mtu} ({} bytes each), {mb:.1} MB",
        14 + 20 + 8 + 12 + mtu + 4
    );

    if std::env::var("ROCE_BENCH_PROBE").is_ok() {
        let (rd, _) = time(reps, || {
            let mut r = CaptureReader::open(&path).unwrap();
            let mut n = 0u64;
            while let Next::Frame(f) = r.next_frame().unwrap() {
                n += f.data.len() as u64;
            }
            n
        });
        println!("read only: {:.3}", median(rd));
        let (raw, _) = time(reps, || {
            use std::io::Read;
            let mut f = std::fs::File::open(&path).unwrap();
            let mut buf = vec![0u8; 1 << 20];
            let mut n = 0u64;
            loop {
                let k = f.read(&mut buf).unwrap();
                if k == 0 {
                    break n;
                }
                n += k as u64;
            }
        });
        println!("plain File::read, 1 MiB buffer: {:.3}", median(raw));
        let (nc, _) = time(reps, || {
            let mut r = CaptureReader::open(&path).unwrap();
            let opts = ParseOptions {
                verify_icrc: false,
                ..ParseOptions::default()
            };
            let mut n = 0u64;
            while let Next::Frame(f) = r.next_frame().unwrap() {
                n += f.decode(&opts).unwrap().ib().is_some() as u64;
            }
            n
        });
        println!("decode without ICRC: {:.3}", median(nc));
    }
    let have_tshark = tshark_reps > 0 && tshark::installed();
    // Warm the page cache, then interleave the runs.
    let _ = decode(&path);
    let (mut dec, mut seq, mut js, mut ts) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut bytes = 0;
    for i in 0..reps.max(tshark_reps) {
        if i < reps {
            let paths: [(Decoder, _); 2] = [(decode, &mut dec), (decode_sequential, &mut seq)];
            for (run, secs) in paths {
                let (t, (n, good)) = time(1, || run(&path));
                assert_eq!(
                    (n, good),
                    (frames as u64, frames as u64),
                    "every ICRC checks"
                );
                secs.extend(t);
            }
            let (t, b) = time(1, || dissect_jsonl(&path));
            js.extend(t);
            bytes = b;
        }
        if have_tshark && i < tshark_reps {
            let (t, ok) = time(1, || fields_discarded(&path, &BTH_FIELDS));
            assert!(ok.is_some(), "tshark failed on {}", path.display());
            ts.extend(t);
        }
    }
    let (dec_s, seq_s, js_s) = (median(dec.clone()), median(seq.clone()), median(js.clone()));
    let row = |name: &str, s: f64, all: &[f64]| {
        println!(
            "| {name} | {:.3} s | {:.0} | {:.0} | {} |",
            s,
            frames as f64 / s,
            mb / s,
            all.iter()
                .map(|x| format!("{x:.3}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    };
    println!("\n| path | median | frames/s | MB/s | runs (s) |\n|---|---|---|---|---|");
    row(
        &format!(
            "decode (read + decode + ICRC, {} threads)",
            pipeline::default_threads()
        ),
        dec_s,
        &dec,
    );
    row("decode, sequential (one thread)", seq_s, &seq);
    row("dissect jsonl (to a sink)", js_s, &js);
    println!("(jsonl output: {:.1} MB)", bytes as f64 / 1e6);

    if tshark_reps == 0 {
        println!("ROCE_BENCH_TSHARK_REPS=0: tshark not run");
    } else if !have_tshark {
        println!("tshark not installed: no ratio");
    } else {
        let ts_s = median(ts.clone());
        row("tshark -T fields (9 BTH fields)", ts_s, &ts);
        println!(
            "\nratio (tshark time / ours): decode {:.1}x, sequential {:.1}x, dissect jsonl {:.1}x",
            ts_s / dec_s,
            ts_s / seq_s,
            ts_s / js_s
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
