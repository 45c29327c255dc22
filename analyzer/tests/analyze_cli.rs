//! The `analyze` and `plot` commands as a user runs them: exit codes,
//! messages that name the file, offset and flag, output formats, atomic
//! output files.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use roce_capture::write::CaptureFormat;
use roce_codec::Psn;
use roce_codec::wire::aeth::Syndrome;
use roce_pcap::analyze::synth::{Endpoint, RcConn, Synth};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roce-pcap-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ep(host: u8, qpn: u32) -> Endpoint {
    Endpoint {
        mac: [2, 0, 0, 0, 0, host],
        ip: Ipv4Addr::new(10, 0, 0, host),
        qpn,
    }
}

/// Two QPs (0x45 and 0x100) with a few WRITEs each, one NAK episode on 0x45.
fn small(path: &Path) {
    let mut s = Synth::create(&[(path, CaptureFormat::Pcap, 0)]).unwrap();
    let mut a = RcConn::new(ep(1, 0x44), ep(2, 0x45), 0xC001, 10);
    let mut b = RcConn::new(ep(1, 0x99), ep(3, 0x100), 0xC002, 0);
    let mut t = 1_000_000;
    for i in 0..20 {
        let x = a.message(&mut s, t, 8192, true, 500, &[]).unwrap();
        if i == 5 {
            a.nak(
                &mut s,
                x.end_ns + 1000,
                x.last,
                Syndrome::NAK_PSN_SEQUENCE_ERROR,
            )
            .unwrap();
            a.resend(&mut s, x.end_ns + 2000, x.last).unwrap();
            t = x.end_ns + 2000;
        }
        a.ack(&mut s, t + 5000, x.last).unwrap();
        let y = b.message(&mut s, t + 6000, 4096, false, 0, &[]).unwrap();
        b.ack(&mut s, y.end_ns + 4000, y.last).unwrap();
        t += 20_000;
    }
    s.finish().unwrap();
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn json_has_the_public_keys() {
    let d = tmpdir("json");
    let p = d.join("a.pcap");
    small(&p);
    let o = run(&["analyze", p.to_str().unwrap(), "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["files", "qps", "pfc", "findings"] {
        assert!(v[k].is_array(), "top-level {k}");
    }
    for k in ["file", "packets", "bytes", "roce_packets"] {
        assert!(!v["files"][0][k].is_null(), "files[].{k}");
    }
    let q = &v["qps"][0];
    for k in [
        "src",
        "dst",
        "dqpn",
        "sport",
        "files",
        "packets",
        "bytes",
        "payload_bytes",
        "goodput_gbps",
        "retransmitted_packets",
        "out_of_sequence",
        "naks",
        "cnps",
        "ecn_ce_packets",
        "messages",
        "icrc_errors",
    ] {
        assert!(!q[k].is_null(), "qps[].{k}");
    }
    assert!(q["dqpn"].is_number() && q["naks"].is_object() && q["files"].is_array());
    for k in ["p50", "p99", "max"] {
        assert!(q["ack_rtt_ns"][k].is_number(), "ack_rtt_ns.{k}");
    }
    assert_eq!(q["dqpn"], 0x45);
    assert_eq!(q["naks"]["psn_sequence_error"], 1);
    assert_eq!(q["retransmitted_packets"], 1);
    assert_eq!(q["messages"], 20);
    // Same input, same bytes.
    let again = run(&["analyze", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(again.stdout, o.stdout);
}

#[test]
fn qp_filter_takes_hex_and_decimal() {
    let d = tmpdir("qp");
    let p = d.join("a.pcap");
    small(&p);
    for q in ["0x45", "69", "0X45"] {
        let o = run(&[
            "analyze",
            p.to_str().unwrap(),
            "--format",
            "json",
            "--qp",
            q,
        ]);
        assert!(o.status.success());
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["qps"].as_array().unwrap().len(), 1, "--qp {q}");
        assert_eq!(v["qps"][0]["dqpn"], 0x45);
    }
    // The requester's QPN selects its flow too.
    let o = run(&[
        "analyze",
        p.to_str().unwrap(),
        "--format",
        "json",
        "--qp",
        "0x99",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["qps"][0]["dqpn"], 0x100);
    let o = run(&["analyze", p.to_str().unwrap(), "--qp", "0xZZ"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--qp") && stderr(&o).contains("0xZZ"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn csv_is_one_row_per_qp() {
    let d = tmpdir("csv");
    let p = d.join("a.pcap");
    small(&p);
    let o = run(&["analyze", p.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success());
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    let header: Vec<&str> = lines[0].split(',').collect();
    let row: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), row.len());
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        (col("dqpn"), col("retransmitted_packets"), col("naks")),
        ("69", "1", "psn_sequence_error=1")
    );
}

#[test]
fn table_output_and_output_file() {
    let d = tmpdir("table");
    let p = d.join("a.pcap");
    small(&p);
    let o = run(&["analyze", p.to_str().unwrap()]);
    assert!(o.status.success());
    let t = stdout(&o);
    assert!(
        t.contains("REQUEST FLOWS") && t.contains("go-back-N") && t.contains("FINDINGS"),
        "{t}"
    );
    assert!(t.contains("host NICs usually consume PFC frames"), "{t}");
    let out = d.join("report.json");
    let o = run(&[
        "analyze",
        p.to_str().unwrap(),
        "--format",
        "json",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(v["qps"].as_array().unwrap().len(), 2);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    // An unwritable output is an error that names it, and leaves nothing.
    let bad = d.join("no/such/dir/r.json");
    let o = run(&["analyze", p.to_str().unwrap(), "-o", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no/such/dir/r.json"), "{}", stderr(&o));
}

#[test]
fn not_a_capture_is_exit_2_naming_the_file() {
    let d = tmpdir("bad");
    let good = d.join("a.pcap");
    small(&good);
    let bad = d.join("notes.txt");
    std::fs::write(&bad, "this is not a capture\n").unwrap();
    let o = run(&["analyze", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("notes.txt") && e.contains("not a pcap or pcapng"),
        "{e}"
    );
    assert!(o.stdout.is_empty(), "no half report");
    let o = run(&["analyze", d.join("missing.pcap").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.pcap"));
    let o = run(&["analyze", good.to_str().unwrap(), "--link-speed", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--link-speed"), "{}", stderr(&o));
    let o = run(&["analyze", good.to_str().unwrap(), "--pmtu", "1500"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--pmtu"), "{}", stderr(&o));
}

#[test]
fn a_cut_file_is_analyzed_up_to_the_cut_with_exit_3() {
    let d = tmpdir("cut");
    let p = d.join("a.pcap");
    small(&p);
    let bytes = std::fs::read(&p).unwrap();
    // Records: 24-byte header, then 16-byte record headers. Walk to the first
    // data record from the 30th on and cut 100 bytes into it.
    let mut off = 24usize;
    let mut n = 0;
    loop {
        let incl = u32::from_le_bytes(bytes[off + 8..off + 12].try_into().unwrap()) as usize;
        if n >= 29 && incl > 1000 {
            break;
        }
        off += 16 + incl;
        n += 1;
    }
    std::fs::write(&p, &bytes[..off + 100]).unwrap();
    let o = run(&["analyze", p.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("a.pcap") && e.contains(&format!("byte {off}")),
        "{e} (cut record at {off})"
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"][0]["packets"], n);
    assert_eq!(v["files"][0]["cut_at_offset"], off);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == "capture-cut")
    );
}

#[test]
fn plot_writes_png_and_svg_with_text() {
    let d = tmpdir("plot");
    let p = d.join("a.pcap");
    small(&p);
    let out = d.join("plots");
    let o = run(&["plot", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let listed = stdout(&o);
    for stem in [
        "goodput_qps",
        "goodput_files",
        "tsg_qp0",
        "tsg_qp1",
        "pfc",
        "ecn_cnp",
    ] {
        for ext in ["png", "svg"] {
            let f = out.join(format!("{stem}.{ext}"));
            let bytes = std::fs::read(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            assert!(listed.contains(&format!("{stem}.{ext}")));
            if ext == "png" {
                assert_eq!(&bytes[1..4], b"PNG");
            } else {
                let svg = String::from_utf8(bytes).unwrap();
                assert!(svg.contains("<text"), "{stem}.svg has no text");
            }
        }
    }
    let svg = std::fs::read_to_string(out.join("tsg_qp0.svg")).unwrap();
    assert!(svg.contains("retransmission") && svg.contains("first transmission"));
    // Nothing but the plots: the temporary directory is gone.
    assert!(std::fs::read_dir(&out).unwrap().all(|e| {
        let n = e.unwrap().file_name().into_string().unwrap();
        n.ends_with(".png") || n.ends_with(".svg")
    }));
}

#[test]
fn png_text_is_drawn_from_the_embedded_font() {
    // A picture with only a message: the glyphs must put dark pixels on
    // the white page even though no system font is looked up.
    use plotters::prelude::*;
    roce_pcap::plot::register_embedded_font();
    let mut buf = vec![0u8; 300 * 60 * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (300, 60)).into_drawing_area();
        root.fill(&WHITE).unwrap();
        root.draw(&Text::new(
            "PSN 0x45",
            (10, 10),
            ("sans-serif", 30).into_font(),
        ))
        .unwrap();
        root.present().unwrap();
    }
    let dark = buf
        .chunks(3)
        .filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100)
        .count();
    assert!(dark > 200, "only {dark} dark pixels: no text was drawn");
}

#[test]
fn the_same_psn_on_two_slaves_is_merged_in_time_order() {
    // Requests on slave0, ACKs on slave1: one flow, RTTs across the files.
    let d = tmpdir("merge");
    let p0 = d.join("s0.pcap");
    let p1 = d.join("s1.pcapng");
    let mut s = Synth::create(&[
        (&p0, CaptureFormat::Pcap, 0),
        (&p1, CaptureFormat::PcapNg, 0),
    ])
    .unwrap();
    let mut a = RcConn::new(ep(1, 0x10), ep(2, 0x20), 0xC010, 0);
    a.response_file = 1;
    for i in 0..10u64 {
        let x = a
            .message(&mut s, 1_000_000 + i * 10_000, 1000, false, 0, &[])
            .unwrap();
        a.ack(&mut s, x.end_ns + 3000 + i, x.last).unwrap();
    }
    s.finish().unwrap();
    let o = run(&[
        "analyze",
        p0.to_str().unwrap(),
        p1.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let q = &v["qps"][0];
    assert_eq!(v["qps"].as_array().unwrap().len(), 1);
    assert_eq!(
        (
            q["request_packets"].as_u64(),
            q["response_packets"].as_u64()
        ),
        (Some(10), Some(10))
    );
    assert_eq!(q["ack_rtt_ns"]["p50"], 3004);
    assert_eq!(q["ack_rtt_ns"]["max"], 3009);
    assert_eq!(q["psn"]["last"], 9);
    let _ = Psn::new(0);
}

#[test]
fn a_cut_gzip_file_is_analyzed_up_to_the_cut_with_exit_3() {
    use std::io::Write;
    let d = tmpdir("cutgz");
    let p = d.join("a.pcap");
    small(&p);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&std::fs::read(&p).unwrap()).unwrap();
    let gz = e.finish().unwrap();
    let cut = d.join("a.pcap.gz");
    std::fs::write(&cut, &gz[..gz.len() / 2]).unwrap();
    let o = run(&["analyze", cut.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("a.pcap.gz") && stderr(&o).contains("gzip stream ends early"),
        "{}",
        stderr(&o)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["files"][0]["packets"].as_u64().unwrap() > 0);
    assert_eq!(v["files"][0]["cut_in_gzip"], true);
}

/// The examples in `analyze --help` and `plot --help` that use the shipped
/// traces run as printed (from the repository root, plots into a temporary
/// directory), and each help states the exit status.
#[test]
fn help_examples_on_the_shipped_traces_work() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = tmpdir("help_examples");
    let mut ran = 0;
    for cmd in ["analyze", "plot"] {
        let help = run(&[cmd, "--help"]);
        assert!(help.status.success());
        let help = String::from_utf8(help.stdout).unwrap();
        assert!(help.contains("Exit status: 0 ok, 2 "), "{cmd}: {help}");
        for line in help.lines().map(str::trim) {
            if !(line.starts_with("roce-pcap ") && line.contains("traces/")) {
                continue;
            }
            let mut args: Vec<String> = line.split_whitespace().skip(1).map(String::from).collect();
            if let Some(i) = args.iter().position(|a| a == "--out") {
                args[i + 1] = out.join(cmd).display().to_string();
            }
            let o = bin().current_dir(root).args(&args).output().unwrap();
            assert!(
                o.status.success(),
                "`{line}`: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            ran += 1;
        }
    }
    assert_eq!(ran, 2, "one example on the traces per command");
    assert!(out.join("plot/tsg_qp0.svg").exists());
    let _ = std::fs::remove_dir_all(&out);
}

/// A second plot into the same directory leaves no time-sequence graph of
/// a flow the second analysis does not have, and touches nothing else.
#[test]
fn plot_into_a_used_directory_leaves_no_stale_flow() {
    let d = tmpdir("plot_again");
    let p = d.join("a.pcap");
    small(&p);
    let out = d.join("plots");
    let o = run(&["plot", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("tsg_qp1.svg").exists());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    std::fs::write(out.join("tsg_qp0_old.png"), "mine too").unwrap();
    // Only QP 0x100's flow this time; it keeps its number, 1, and flow 0
    // (QP 0x45) is not in this analysis.
    let o = run(&[
        "plot",
        p.to_str().unwrap(),
        "--qp",
        "0x100",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(out.join("tsg_qp1.svg").exists());
    for stale in ["tsg_qp0.png", "tsg_qp0.svg"] {
        assert!(!out.join(stale).exists(), "{stale} left behind");
    }
    assert!(out.join("notes.txt").exists() && out.join("tsg_qp0_old.png").exists());
}
