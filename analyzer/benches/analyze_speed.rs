//! `roce-pcap analyze` beside `tshark -T fields`, on one generated capture,
//! in one run; and the peak memory of analyzing a large capture.
//!
//! ```sh
//! cargo bench -p roce-pcap --bench analyze_speed                 # 300,000 frames, 8 QPs, MTU 4096
//! ROCE_BENCH_FRAMES=50000 cargo bench -p roce-pcap --bench analyze_speed
//! ROCE_BENCH_MEMORY_GB=2 cargo bench -p roce-pcap --bench analyze_speed   # peak RSS on a 2 GB capture
//! ```
//!
//! The capture comes from `roce_testkit::synth::bench_capture`: 8 RC
//! QPs writing 64 KiB messages in full-size packets, an ACK per message, a
//! CE mark and a CNP every 50 messages and a NAK-triggered go-back-N every
//! 200. It is written to a temporary directory and removed afterwards.
//!
//! Measured `ROCE_BENCH_REPS` times each (default 5), interleaved so that
//! a burst of load on the shared machine hits all three; medians reported:
//! * `analyze`: `analyze_files` on the file (read, decode, ICRC check of
//!   every frame, flow table, report), as `roce-pcap analyze` runs it: a
//!   reader thread walks the mapped file into batches and decodes them
//!   together with a helper thread per further core, the merge and flow
//!   table run on the calling thread.
//! * `analyze, --threads 1`: the same with `threads = Some(1)`: the reader
//!   decodes every batch itself (no helper).
//! * `tshark`: `tshark -r FILE -T fields -e infiniband.bth.{opcode,se,m,
//!   padcnt,tver,p_key,destqp,a,psn} > /dev/null` (every BTH field, as the
//!   dissect bench extracts them).
//!
//! The memory mode generates a capture of `ROCE_BENCH_MEMORY_GB` GB,
//! analyzes it in this process and prints the peak resident set size
//! (VmHWM from /proc/self/status) before and after.

use std::path::Path;
use std::time::Instant;

use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_testkit::bench::env_or;
use roce_testkit::synth::{BenchCapture, bench_capture};
use roce_testkit::tshark::{BTH_FIELDS, fields_discarded};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn vm_hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn analyze_once(path: &Path) -> (f64, usize) {
    analyze_with(path, None)
}

fn analyze_with(path: &Path, threads: Option<usize>) -> (f64, usize) {
    let opts = AnalyzeOptions {
        threads,
        ..AnalyzeOptions::default()
    };
    let t = Instant::now();
    let a = analyze_files(&[path], &opts).expect("analyze");
    (t.elapsed().as_secs_f64(), a.report.qps.len())
}

fn tshark_once(path: &Path) -> Option<f64> {
    let t = Instant::now();
    fields_discarded(path, &BTH_FIELDS)?;
    Some(t.elapsed().as_secs_f64())
}

fn main() {
    let dir = std::env::temp_dir().join(format!("roce-pcap-analyze-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mem_gb = env_or("ROCE_BENCH_MEMORY_GB", 0);
    // ROCE_BENCH_FILE=path keeps the capture there (and reuses it next time).
    let keep = std::env::var_os("ROCE_BENCH_FILE").map(std::path::PathBuf::from);
    if mem_gb > 0 {
        let path = keep.clone().unwrap_or_else(|| dir.join("large.pcap"));
        // Frames average 3924 bytes (16 data frames of 4170 or 4154 bytes
        // per 64 KiB message, then ACK, CNP and NAK traffic): a little
        // over `mem_gb` GB.
        let frames = mem_gb * 1_000_000_000 / 3900;
        let p = BenchCapture {
            frames,
            qps: 64,
            ..BenchCapture::default()
        };
        if !keep.as_ref().is_some_and(|k| k.exists()) {
            bench_capture(&path, p).unwrap();
        }
        let size = std::fs::metadata(&path).unwrap().len();
        let before = vm_hwm_kb();
        let t = Instant::now();
        let a = analyze_files(&[&path], &AnalyzeOptions::default()).expect("analyze");
        let secs = t.elapsed().as_secs_f64();
        let after = vm_hwm_kb();
        let (written, qps) = (a.report.files[0].packets, a.report.qps.len());
        println!(
            "memory: {written} frames, {:.2} GB, {qps} QPs analyzed in {secs:.1} s; peak RSS {:.1} MB before analysis, {:.1} MB after",
            size as f64 / 1e9,
            before as f64 / 1024.0,
            after as f64 / 1024.0
        );
        drop(a);
        std::fs::remove_dir_all(&dir).unwrap();
        return;
    }
    let frames = env_or("ROCE_BENCH_FRAMES", 300_000);
    let reps = env_or("ROCE_BENCH_REPS", 5) as usize;
    let path = keep.clone().unwrap_or_else(|| dir.join("bench.pcap"));
    let p = BenchCapture {
        frames,
        ..BenchCapture::default()
    };
    let written = if keep.as_ref().is_some_and(|k| k.exists()) {
        let a = analyze_files(&[&path], &AnalyzeOptions::default()).unwrap();
        a.report.files[0].packets
    } else {
        bench_capture(&path, p).unwrap()
    };
    let size = std::fs::metadata(&path).unwrap().len();
    // Warm the page cache for both tools alike.
    let _ = analyze_once(&path);
    let mut ours = Vec::new();
    let mut one = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..reps {
        let (s, qps) = analyze_once(&path);
        assert_eq!(qps, 8);
        ours.push(s);
        one.push(analyze_with(&path, Some(1)).0);
        if let Some(t) = tshark_once(&path) {
            theirs.push(t);
        }
    }
    let runs = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "runs (s): analyze {}; --threads 1 {}; tshark {}",
        runs(&ours),
        runs(&one),
        runs(&theirs)
    );
    let a = median(ours);
    let a1 = median(one);
    let mb = size as f64 / 1e6;
    println!("capture: {written} frames, {mb:.1} MB; {reps} runs each, medians");
    println!(
        "analyze: {a:.3} s = {:.0} MB/s, {:.0} frames/s",
        mb / a,
        written as f64 / a
    );
    println!(
        "analyze, --threads 1: {a1:.3} s = {:.0} MB/s, {:.0} frames/s",
        mb / a1,
        written as f64 / a1
    );
    if theirs.is_empty() {
        println!("tshark: not run (not installed or failed)");
    } else {
        let t = median(theirs);
        println!(
            "tshark -T fields: {t:.3} s = {:.0} MB/s, {:.0} frames/s",
            mb / t,
            written as f64 / t
        );
        println!(
            "ratio: analyze is {:.1}x faster than tshark ({:.1}x with --threads 1)",
            t / a,
            t / a1
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
