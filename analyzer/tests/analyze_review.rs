//! Cases found in review, each built with the codec's builders and checked
//! against figures worked out by hand in the comments.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use roce_codec::Psn;
use roce_pcap::analyze::report::Report;
use roce_pcap::analyze::synth::{Endpoint, RcConn, Synth};
use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_pcap::capture_writer::CaptureFormat;

const T0: u64 = 1_000_000_000;

fn ep(host: u8, qpn: u32) -> Endpoint {
    Endpoint {
        mac: [2, 0, 0, 0, 0, host],
        ip: Ipv4Addr::new(10, 0, 0, host),
        qpn,
    }
}

/// A fresh directory for one test.
fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roce-pcap-review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn analyze(paths: &[&Path]) -> Report {
    analyze_files(paths, &AnalyzeOptions::default())
        .unwrap()
        .report
}

fn rules(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.rule).collect()
}

/// One WRITE_ONLY (PSN 40) resent three times, 4 ms apart, and never
/// ACKed. Whether that is the retry-exhausted signature depends on what
/// the capture shows after the last resend: a requester with retries
/// left resends again after its timer (4 ms here), so only a capture that
/// goes on for at least that long shows the silence of a given-up QP.
fn resent_three_times(path: &Path, capture_goes_on_ns: Option<u64>) {
    let mut s = Synth::create(&[(path, CaptureFormat::Pcap, 0)]).unwrap();
    let mut a = RcConn::new(ep(1, 0x11), ep(2, 0x12), 0xC000, 40);
    let x = a.message(&mut s, T0, 100, true, 0, &[]).unwrap();
    let mut t = x.end_ns;
    for _ in 0..3 {
        t += 4_000_000;
        a.resend(&mut s, t, Psn::new(40)).unwrap();
    }
    if let Some(after) = capture_goes_on_ns {
        // Another QP of the host keeps the capture going.
        let mut b = RcConn::new(ep(1, 0x21), ep(3, 0x22), 0xC100, 0);
        let y = b.message(&mut s, t + after, 100, true, 0, &[]).unwrap();
        b.ack(&mut s, y.end_ns + 3000, y.last).unwrap();
    }
    s.finish().unwrap();
}

#[test]
fn retry_exhausted_needs_a_silence_as_long_as_the_retry_timer() {
    let dir = tmpdir("silence");
    // The capture ends with the third resend: nothing says the requester gave up.
    let cut = dir.join("cut.pcap");
    resent_three_times(&cut, None);
    let r = analyze(&[&cut]);
    assert!(!rules(&r).contains(&"retry-exhausted"), "{:?}", rules(&r));
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "repeated-timeouts")
        .expect("repeated-timeouts");
    assert!(
        f.message.contains("capture ends 0.0 µs after"),
        "{}",
        f.message
    );
    // 1 ms of capture after it: still less than the 4 ms the requester waits.
    let short = dir.join("short.pcap");
    resent_three_times(&short, Some(1_000_000));
    assert!(!rules(&analyze(&[&short])).contains(&"retry-exhausted"));
    // 5 ms: the requester would have resent by then; it gave up.
    let long = dir.join("long.pcap");
    resent_three_times(&long, Some(5_000_000));
    let r = analyze(&[&long]);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "retry-exhausted")
        .expect("retry-exhausted");
    assert_eq!(f.qp, Some(0));
    assert!(f.message.contains("silent for 5.0 ms"), "{}", f.message);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Seven retries are as many as any retry_cnt allows (3 bits): a capture
/// that ends with the seventh resend shows an exhausted QP, as the
/// simulator's `retry_exceeded` scenario does.
#[test]
fn seven_retries_are_exhausted_even_at_the_end_of_the_capture() {
    let dir = tmpdir("seven");
    let path = dir.join("seven.pcap");
    let mut s = Synth::create(&[(&path, CaptureFormat::Pcap, 0)]).unwrap();
    let mut a = RcConn::new(ep(1, 0x11), ep(2, 0x12), 0xC000, 40);
    let x = a.message(&mut s, T0, 100, true, 0, &[]).unwrap();
    for k in 1..=7 {
        a.resend(&mut s, x.end_ns + k * 4_000_000, Psn::new(40))
            .unwrap();
    }
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let f = r
        .findings
        .iter()
        .find(|f| f.rule == "retry-exhausted")
        .expect("retry-exhausted");
    assert!(
        f.message.contains("7 times after 7 timeouts") && f.message.contains("retry_cnt (7)"),
        "{}",
        f.message
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
