//! `-` is standard input in every command that reads captures, and a live
//! pipe is analyzed as it comes:
//!
//! * the same capture read from a file and from a pipe gives the same
//!   report (pcap, pcapng, gzip), and `dissect -` the same lines;
//! * `analyze - --interval` prints each interval's summary while the pipe
//!   is still open, as soon as a frame past the interval arrives, with the
//!   packets the capture put in that interval;
//! * memory stays flat: ten times the stream through a pipe leaves the
//!   peak resident set where it was.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use roce_capture::write::CaptureFormat;
use roce_testkit::cli::{TempDir, stdout, succeed};
use roce_testkit::repo::trace;
use roce_testkit::synth::{BenchCapture, Endpoint, RcConn, Synth, bench_capture};

const BIN: &str = env!("CARGO_BIN_EXE_roce-pcap");

/// `roce-pcap ARGS` with `input` on its standard input.
fn piped(args: &[&str], input: &Path) -> std::process::Output {
    succeed(
        Command::new(BIN)
            .args(args)
            .stdin(std::fs::File::open(input).unwrap()),
    )
}

#[test]
fn a_pipe_reads_as_the_file_does() {
    for name in [
        "analyze_slave0.pcapng",
        "analyze_slave1.pcap.gz",
        "rc_flow.pcapng",
    ] {
        let path = trace(name);
        let file = stdout(&succeed(
            Command::new(BIN)
                .args(["analyze", "--format", "json"])
                .arg(&path),
        ));
        let pipe = stdout(&piped(&["analyze", "--format", "json", "-"], &path));
        assert!(pipe.contains("\"file\": \"<stdin>\""), "{name}");
        assert_eq!(
            pipe.replace("<stdin>", path.to_str().unwrap()),
            file,
            "{name}: the report from a pipe differs"
        );
        let file = succeed(Command::new(BIN).arg("dissect").arg(&path)).stdout;
        let pipe = piped(&["dissect", "-"], &path).stdout;
        assert_eq!(pipe, file, "{name}: dissect from a pipe differs");
    }
    // `-` once only; an empty pipe is named.
    let o = Command::new(BIN)
        .args(["analyze", "-", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("- (standard input) is given 2 times"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = Command::new(BIN)
        .args(["analyze", "-"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("<stdin>: not a pcap or pcapng file (the file is empty)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The byte offset just past the pcap record of the first frame at or
/// after `ts_ns` (nanosecond pcap, little-endian, as the writer writes).
fn end_of_first_record_at(bytes: &[u8], ts_ns: u64) -> usize {
    let mut at = 24;
    while at + 16 <= bytes.len() {
        let word = |k: usize| u32::from_le_bytes(bytes[at + k..at + k + 4].try_into().unwrap());
        let t = u64::from(word(0)) * 1_000_000_000 + u64::from(word(4));
        let end = at + 16 + word(8) as usize;
        if t >= ts_ns {
            return end;
        }
        at = end;
    }
    panic!("no frame at or after {ts_ns} ns");
}

#[test]
fn interval_summaries_come_while_the_pipe_is_open() {
    let dir = TempDir::new("interval-live");
    let path = dir.join("live.pcap");
    // Three SENDs of 4 packets on one QP, 100 ns apart, each ACKed: at
    // 0.1 ms, 0.5 ms and 1.5 ms after the first frame at t0, then a lone
    // ACK-less SEND at 3.7 ms (two quiet intervals before it).
    let t0 = 1_000_000_000_000u64;
    let mut s = Synth::create(&[(path.as_path(), CaptureFormat::Pcap, 0)]).unwrap();
    let mut c = RcConn::new(Endpoint::host(1, 0x11), Endpoint::host(2, 0x12), 0xC001, 0);
    c.pmtu = 1024;
    s.frame(
        0,
        t0,
        &roce_codec::FrameRepr::pfc([2, 0, 0, 0, 0, 9], 0x08, [0, 0, 0, 1, 0, 0, 0, 0]),
    )
    .unwrap();
    for at in [100_000u64, 500_000, 1_500_000] {
        let sent = c.message(&mut s, t0 + at, 4096, false, 100, &[]).unwrap();
        c.ack(&mut s, sent.end_ns + 1_000, sent.last).unwrap();
    }
    c.message(&mut s, t0 + 3_700_000, 1024, false, 100, &[])
        .unwrap();
    s.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    // Up to the first frame of the second millisecond: enough to end the
    // first interval, not the second.
    let cut = end_of_first_record_at(&bytes, t0 + 1_500_000);

    let mut child = Command::new(BIN)
        .args(["analyze", "-", "--interval", "1ms"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&bytes[..cut]).unwrap();
    stdin.flush().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(out).lines() {
            let line = line.unwrap();
            let _ = tx.send(line.clone());
            lines.push(line);
        }
        lines
    });
    // The first interval's summary arrives while the pipe is still open.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut first = Vec::new();
    while !first
        .iter()
        .any(|l: &String| l.contains("10.0.0.1:0x11 -> 10.0.0.2:0x12"))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => first.push(l),
            Err(_) => panic!("no interval summary while the pipe is open; got {first:?}"),
        }
    }
    // 2 messages x (4 requests + 1 ACK), all of their payload in 1 ms.
    assert_eq!(
        first[0],
        "[0.000-1.000 ms] 1 flow, 65.536 Mb/s goodput, 0 retransmitted, 0 NAKs, 0 CNPs"
    );
    assert!(
        first[3].split_whitespace().collect::<Vec<_>>()
            == [
                "0",
                "10.0.0.1:0x11",
                "->",
                "10.0.0.2:0x12",
                "65.536",
                "Mb/s",
                "10",
                "0",
                "0",
                "0",
                "0"
            ],
        "{first:?}"
    );
    stdin.write_all(&bytes[cut..]).unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(status.success(), "{err}");
    let lines = reader.join().unwrap();
    let heads: Vec<&String> = lines.iter().filter(|l| l.starts_with('[')).collect();
    assert_eq!(
        heads,
        [
            "[0.000-1.000 ms] 1 flow, 65.536 Mb/s goodput, 0 retransmitted, 0 NAKs, 0 CNPs",
            "[1.000-2.000 ms] 1 flow, 32.768 Mb/s goodput, 0 retransmitted, 0 NAKs, 0 CNPs",
            "[2.000-3.000 ms] no RoCE or PAUSE frames",
            // The last interval ends at the last frame, 3.7 ms + 0.
            "[3.000-3.700 ms] 1 flow, 11.703 Mb/s goodput, 0 retransmitted, 0 NAKs, 0 CNPs",
        ]
    );
    // Then the whole report.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("roce-pcap analyze: 1 file, 16 RoCE frames, 1 request flow")),
        "{lines:?}"
    );
}

/// Peak resident set (VmHWM) of `roce-pcap analyze -` fed `frames` frames
/// through a FIFO, in kB, and the frames it reported.
fn peak_rss_kb(dir: &Path, frames: u64) -> (u64, u64) {
    let fifo = dir.join(format!("s{frames}.fifo"));
    let _ = std::fs::remove_file(&fifo);
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success(),
        "mkfifo"
    );
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            // Opens the FIFO (waiting for the reader) and streams into it.
            let p = BenchCapture {
                frames,
                qps: 8,
                pmtu: 256,
                nak_every: 5,
                cnp_every: 3,
                message_bytes: 1024,
            };
            bench_capture(&fifo, p).unwrap()
        })
    };
    let mut child = Command::new(BIN)
        .args(["analyze", "-", "--format", "json"])
        .stdin(std::fs::File::open(&fifo).unwrap())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        BufReader::new(out).read_to_string(&mut s).unwrap();
        s
    });
    let mut peak = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(st) = std::fs::read_to_string(&status_path) {
            if let Some(kb) = st
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
            {
                peak = peak.max(kb);
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let written = writer.join().unwrap();
    let report: serde_json::Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    let seen = report["files"][0]["packets"].as_u64().unwrap();
    assert!(
        seen >= frames && seen == written,
        "{seen} of {written} frames"
    );
    (peak, seen)
}

#[test]
fn memory_stays_flat_through_a_pipe() {
    if !Command::new("mkfifo")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipping: mkfifo is not available");
        return;
    }
    let dir = TempDir::new("stdin-memory");
    let (small, f1) = peak_rss_kb(&dir, 40_000);
    let (large, f2) = peak_rss_kb(&dir, 400_000);
    assert!(f2 >= 10 * f1 - 100, "{f1} vs {f2} frames");
    // ~130 MB streamed in the large run; the reader's buffers, the bounded
    // queues and the flow state are the same for both.
    assert!(
        large <= small + 8 * 1024,
        "peak RSS grew from {small} kB to {large} kB for 10x the stream"
    );
    eprintln!("peak RSS: {small} kB for {f1} frames, {large} kB for {f2} frames");
}
