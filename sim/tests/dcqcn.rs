//! DCQCN end to end on ConnectX profiles, with CE marks injected by a
//! marking link (`ce_mark`) rather than a switch's RED: the sender's NIC
//! sets ECT(0), the receiver's notification point answers CE with real
//! CNPs (checked byte by byte by tshark and by roce-pcap's ICRC check),
//! paced by `min_time_between_cnps`, and the sender's reaction point cuts
//! and recovers its QP's rate (the sawtooth in qps.csv). Counters are the
//! hardware's names; the same seed gives the same bytes.

mod common;

use common::*;
use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
use roce_testkit::tshark::{fields, tshark};
use rocesim::run::{self, RunOptions, Summary};
use serde_json::Value;
use std::path::Path;

/// Runs `toml` into `<tmp>/name/run` through the library: the summary as
/// a value (for its figures) and as summary.json.
fn run_lib(name: &str, toml: &str) -> (std::path::PathBuf, Summary, Value) {
    let dir = tmp(name);
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, toml).unwrap();
    let opts = RunOptions {
        out: Some(dir.join("run")),
        ..RunOptions::default()
    };
    let done = run::run(&file, &opts, &mut ()).unwrap();
    let (sum, out) = (done.summary(), done.dir);
    let json = std::fs::read_to_string(out.join("summary.json")).unwrap();
    (dir, sum, serde_json::from_str(&json).unwrap())
}

/// a ── sw ── b, 100G, 1 µs links; a's link marks ECT frames CE with
/// probability `ce`; taps at both hosts; one 1 MiB × `iters` WRITE QP.
fn scenario_text(ce: f64, iters: u32, host_keys: &str) -> String {
    host("a", host_keys, &[("eth0", "10.0.0.1/24")], 9000)
        + &host("b", host_keys, &[("eth0", "10.0.0.2/24")], 9000)
        + &switch("sw", "", &[])
        + &link_with(
            "a.eth0",
            "sw.p1",
            "100Gbps",
            &format!("delay = \"1us\"\nce_mark = {ce}\n"),
        )
        + &link("sw.p2", "b.eth0", "100Gbps")
        + &write_bw("a", "b", &format!("size = \"1MiB\"\niters = {iters}\n"))
        + "[[tap]]\nat = \"a.eth0\"\n[[tap]]\nat = \"b.eth0\"\n"
}

/// The `rate_gbps` column of qps.csv for the QP of `who` (`client` or
/// `server`), in time order.
fn rates_of(dir: &Path, who: &str) -> Vec<f64> {
    let csv = std::fs::read_to_string(dir.join("run/qps.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (role, rate) = (col("role"), col("rate_gbps"));
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[role] == who)
        .map(|f| f[rate].parse().unwrap())
        .collect()
}

#[test]
fn ce_marks_become_cnps_and_the_sender_cuts_and_recovers() {
    let (dir, sum, s) = run_lib("dcqcn_marked", &scenario_text(0.002, 40, ""));
    let c = clients(&s)[0];
    assert_eq!(c["status"], "success");

    // The receiver's NP saw every CE-marked request and sent CNPs for some.
    let marked = counter(&s, "b.eth0", "np_ecn_marked_roce_packets");
    let sent = counter(&s, "b.eth0", "np_cnp_sent");
    assert!(marked >= 5, "marked {marked}");
    assert!(sent >= 1 && sent <= marked, "sent {sent} of {marked}");
    // Every CNP reached the sender's QP and its reaction point.
    assert_eq!(counter(&s, "a.eth0", "rp_cnp_handled"), sent);
    assert_eq!(counter(&s, "a.eth0", "rp_cnp_ignored"), 0);
    // Nothing is lost: what one NIC's PMA counters sent, the other's
    // received, CNPs included.
    for (tx, rx) in [("a.eth0", "b.eth0"), ("b.eth0", "a.eth0")] {
        for (t, r) in [
            ("port_xmit_packets", "port_rcv_packets"),
            ("port_xmit_data", "port_rcv_data"),
        ] {
            assert_eq!(counter(&s, tx, t), counter(&s, rx, r), "{tx} {t}");
        }
    }

    // What the captures say, read by roce-pcap: CE-marked requests at the
    // receiver, the CNPs, no ICRC error anywhere.
    let files = [dir.join("run/a.eth0.pcap"), dir.join("run/b.eth0.pcap")];
    let a = analyze_files(&files[1..], &AnalyzeOptions::default()).unwrap();
    let f = &a.report.qps[0];
    assert_eq!(f.ecn_ce_requests, marked);
    assert_eq!(f.cnps_to_requester, sent);
    for file in &files {
        let a = analyze_files(std::slice::from_ref(file), &AnalyzeOptions::default()).unwrap();
        assert_eq!(a.report.files[0].icrc_errors, 0, "{}", file.display());
    }
    // And the summary states the connection the same way.
    let figs = sum.qp_figures();
    assert_eq!((figs[0].cnps, figs[0].ecn_ce_packets), (sent, marked));

    if tshark().is_some() {
        // Each CNP as tshark decodes it: opcode 0x81 to the sender's QP,
        // DSCP 48 (cnp_dscp), ECT(0) as ConnectX sends them, and at most
        // one per min_time_between_cnps (2 µs) from the port.
        let rows = fields(
            &files[1],
            &["-Y", "infiniband.bth.opcode == 129"],
            &[
                "frame.time_epoch",
                "ip.dst",
                "ip.dsfield.dscp",
                "ip.dsfield.ecn",
                "infiniband.bth.destqp",
                "_ws.malformed",
            ],
        );
        assert_eq!(rows.len() as u64, sent);
        let qpn = format!("{:#08x}", c["qpn"].as_u64().unwrap());
        let mut last: Option<f64> = None;
        for r in &rows {
            assert_eq!(r[1..5], ["10.0.0.1", "48", "2", qpn.as_str()], "{r:?}");
            assert!(r[5].is_empty(), "malformed: {r:?}");
            let t: f64 = r[0].parse().unwrap();
            if let Some(l) = last {
                assert!(t - l >= 1.999e-6, "CNPs {:.3} µs apart", (t - l) * 1e6);
            }
            last = Some(t);
        }
        // The requests carry ECT(0) (the NIC's, whatever the TC says) or CE.
        let ecn = fields(
            &files[0],
            &[
                "-Y",
                "infiniband.bth.opcode == 10 || infiniband.bth.opcode == 6",
            ],
            &["ip.dsfield.ecn"],
        );
        assert!(!ecn.is_empty());
        assert!(ecn.iter().all(|r| r[0] == "2"), "{ecn:?}");
    }

    // The sawtooth: cuts below line rate, recoveries after them.
    let rates = rates_of(&dir, "client");
    let cuts = rates.windows(2).filter(|w| w[1] < w[0]).count();
    let rises = rates.windows(2).filter(|w| w[1] > w[0]).count();
    let min = rates.iter().cloned().fold(f64::MAX, f64::min);
    assert!(min < 60.0, "lowest rate {min}: {rates:?}");
    assert!(
        cuts >= 2 && rises >= 2,
        "{cuts} cuts, {rises} rises: {rates:?}"
    );
    assert!(dir.join("run/rates.png").exists());

    // Same seed, same bytes.
    let (dir2, _, _) = run_lib("dcqcn_marked_again", &scenario_text(0.002, 40, ""));
    for f in ["qps.csv", "a.eth0.pcap", "b.eth0.pcap"] {
        assert!(
            std::fs::read(dir.join("run").join(f)).unwrap()
                == std::fs::read(dir2.join("run").join(f)).unwrap(),
            "{f} differs between two runs of one seed"
        );
    }
}

#[test]
fn soft_roce_sends_no_ect_and_no_cnps() {
    // rxe copies the TC's ECN bits: TC 0 is Not-ECT, so nothing is marked;
    // it runs no DCQCN, so the NP counters stay 0.
    let (dir, s) = run_text(
        "dcqcn_rxe",
        &scenario_text(0.5, 4, "profile = \"rxe\"\n"),
        &[],
    );
    assert_eq!(counter(&s, "b.eth0", "np_ecn_marked_roce_packets"), 0);
    assert!(s["counters"]["b.eth0"].get("np_cnp_sent").is_none());
    // Its rate plot does not claim to show DCQCN.
    let svg = std::fs::read_to_string(dir.join("run/rates.svg")).unwrap();
    assert!(
        svg.contains("no DCQCN") && !svg.contains("(DCQCN)"),
        "{svg}"
    );
    // TC 2 (ECT(0)) is copied and marked, but rxe sends no CNP.
    let (_, s) = run_text(
        "dcqcn_rxe_ect",
        &scenario_text(0.5, 4, "profile = \"rxe\"\n"),
        &["workload.0.tc=2"],
    );
    assert!(counter(&s, "b.eth0", "np_ecn_marked_roce_packets") > 0);
    assert!(s["counters"]["b.eth0"].get("np_cnp_sent").is_none());
}

#[test]
fn the_reference_nic_acks_every_1000_byte_packet_and_flags_cnps_on_acks() {
    // The hpcc profile sends Not-ECT, as the reference does (its switches
    // mark every packet); `ecn = "tc"` with TC 2 lets the ECT-only marking
    // link mark it here.
    let keys = "profile = \"hpcc\"\n  [host.transport]\n  ecn = \"tc\"\n";
    let (dir, s) = run_text(
        "dcqcn_hpcc",
        &scenario_text(0.05, 2, keys),
        &["workload.0.tc=2"],
    );
    let c = clients(&s)[0];
    assert_eq!(c["status"], "success");
    // 2 × 1 MiB in 1000-byte packets: ceil(1048576 / 1000) = 1049 each,
    // and one ACK for every one of them (AckReq on every packet, no
    // coalescing).
    assert_eq!(c["tx_packets"], 2 * 1049);
    let server = &s["qps"][1];
    assert_eq!(server["role"], "server");
    assert_eq!(server["tx_packets"], 2 * 1049);
    // min_time_between_cnps 0: a CNP for every CE-marked request. The
    // link marks both ways, ACKs too, but as in the reference a marked ACK
    // notifies nothing: a's NP sends no CNP.
    let marked = counter(&s, "b.eth0", "np_cnp_sent");
    assert!(marked > 50, "{marked}");
    assert_eq!(counter(&s, "a.eth0", "rp_cnp_handled"), marked);
    assert_eq!(counter(&s, "b.eth0", "np_ecn_marked_roce_packets"), marked);
    assert!(
        s["counters"]["a.eth0"]
            .get("np_cnp_sent")
            .is_none_or(|n| n == 0)
    );
    if tshark().is_some() {
        let ce_requests = fields(
            &dir.join("run/b.eth0.pcap"),
            &["-Y", "ip.dsfield.ecn == 3 && infiniband.bth.opcode <= 12"],
            &["infiniband.bth.psn"],
        );
        assert_eq!(ce_requests.len() as u64, marked);
        // At the sender: no CNP frame. As the reference sets a flag on the
        // ACK, the ACK of each marked request carries BECN; every ACK has
        // the data's DSCP (TC 2: DSCP 0), as the reference's ACKs carry the
        // data's `pg`: its switches queue them with the data.
        let rows = fields(
            &dir.join("run/a.eth0.pcap"),
            &[
                "-Y",
                "ip.src == 10.0.0.2 && (infiniband.bth.opcode == 17 || infiniband.bth.opcode == 129)",
            ],
            &["infiniband.bth.opcode", "ip.dsfield.dscp"],
        );
        assert_eq!(
            rows.len() as u64,
            2 * 1049,
            "one ACK per request, no CNP frame"
        );
        assert!(rows.iter().all(|r| r[0] == "17" && r[1] == "0"), "{rows:?}");
        // tshark names no BECN field: it is bit 0x40 of the BTH's byte 4.
        let becn = fields(
            &dir.join("run/a.eth0.pcap"),
            &["-Y", "infiniband.bth.opcode == 17 && udp.payload[4:1] & 40"],
            &["infiniband.bth.psn"],
        );
        assert_eq!(becn.len() as u64, marked, "a BECN ACK per marked request");
    }
}

#[test]
fn a_read_responder_is_rate_limited_by_the_cnps_for_its_responses() {
    // ib_read_bw: the data flows from b (the responder) to a; the marking
    // link marks READ responses on their way to a, whose NP sends the CNPs
    // to b's QP, whose reaction point paces its responses.
    let (dir, s) = run_text(
        "dcqcn_read",
        &scenario_text(0.002, 40, ""),
        &["workload.0.tool=ib_read_bw"],
    );
    assert_eq!(clients(&s)[0]["status"], "success");
    let sent = counter(&s, "a.eth0", "np_cnp_sent");
    assert!(sent >= 5, "{sent}");
    assert_eq!(counter(&s, "b.eth0", "rp_cnp_handled"), sent);
    let rates = rates_of(&dir, "server");
    let min = rates.iter().cloned().fold(f64::MAX, f64::min);
    assert!(min < 60.0, "the responder was never cut: {rates:?}");
    // The responses went out no faster than allowed: between two samples
    // the server sent at most what its rate allowed (plus one packet).
    let csv = std::fs::read_to_string(dir.join("run/qps.csv")).unwrap();
    let server: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .filter(|l| l.contains(",server,"))
        .map(|l| l.split(',').map(|f| f.parse().unwrap_or(0.0)).collect())
        .collect();
    for w in server.windows(2) {
        let (t0, t1) = (w[0][0], w[1][0]);
        let sent_bits = (w[1][4] - w[0][4]) * 8.0;
        let allowed = w[0][9].max(w[1][9]) * (t1 - t0) + 4096.0 * 8.0;
        assert!(sent_bits <= allowed * 1.05, "{w:?}");
    }
}

/// Payload each client QP sent between `from` and `to` (ns), in Gb/s, from
/// qps.csv's cumulative tx_payload_bytes at those sample times.
fn shares(dir: &Path, hosts: &[&str], from: u64, to: u64) -> Vec<f64> {
    let csv = std::fs::read_to_string(dir.join("qps.csv")).unwrap();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (t, host, role, tx) = (
        col("t_ns"),
        col("host"),
        col("role"),
        col("tx_payload_bytes"),
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let at = |h: &str, when: u64| -> u64 {
        let r = rows
            .iter()
            .find(|r| r[host] == h && r[role] == "client" && r[t] == when.to_string())
            .unwrap_or_else(|| panic!("no sample of {h} at {when} ns"));
        r[tx].parse().unwrap()
    };
    hosts
        .iter()
        .map(|h| (at(h, to) - at(h, from)) as f64 * 8.0 / (to - from) as f64)
        .collect()
}

/// Jain's fairness index: (Σx)² / (n Σx²), 1 when all are equal.
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    s * s / (x.len() as f64 * x.iter().map(|v| v * v).sum::<f64>())
}

#[test]
fn dcqcn_shares_a_bottleneck_fairly_between_2_then_4_flows() {
    let (out, s) = run_scenario("dcqcn_convergence", "dcqcn_convergence", &[]);
    // 2:1 (h1, h2 into r from 0 to 10 ms), the second half: fair shares of
    // a busy bottleneck.
    let two = shares(&out, &["h1", "h2"], 5_000_000, 10_000_000);
    assert!(jain(&two) >= 0.99, "Jain {:.4} of {two:?}", jain(&two));
    assert!(two.iter().sum::<f64>() > 80.0, "{two:?}");
    // 4:1 from 10 ms on, the second half of that.
    let four = shares(&out, &["h1", "h2", "h3", "h4"], 15_000_000, 20_000_000);
    assert!(jain(&four) >= 0.99, "Jain {:.4} of {four:?}", jain(&four));
    assert!(four.iter().sum::<f64>() > 80.0, "{four:?}");
    // DCQCN did it, not PFC: CNPs sent and handled, no pause, no drop.
    let c = &s["counters"];
    let sent = c["r.eth0"]["np_cnp_sent"].as_u64().unwrap();
    let handled: u64 = ["h1", "h2", "h3", "h4"]
        .iter()
        .map(|h| c[format!("{h}.eth0")]["rp_cnp_handled"].as_u64().unwrap())
        .sum();
    assert!(
        sent > 100 && handled <= sent && handled + 10 >= sent,
        "{sent} {handled}"
    );
    for p in ["sw1.p1", "sw1.p2", "sw1.p3", "sw1.p4"] {
        assert_eq!(c[p]["tx_prio3_pause"], 0, "{p}");
    }
    assert!(c["sw1.pr"]["tx_prio3_ecn_marked"].as_u64().unwrap() > 0);
    // The sawtooth in the rates: repeated cuts and recoveries per QP.
    let csv = std::fs::read_to_string(out.join("qps.csv")).unwrap();
    let rates: Vec<f64> = csv
        .lines()
        .skip(1)
        .filter(|l| l.contains(",h1,") && l.contains(",client,"))
        .map(|l| l.rsplit(',').next().unwrap().parse().unwrap())
        .collect();
    let cuts = rates.windows(2).filter(|w| w[1] < w[0] * 0.9).count();
    assert!(cuts >= 5, "{cuts} cuts of 10 % or more: {rates:?}");
    let svg = std::fs::read_to_string(out.join("rates.svg")).unwrap();
    assert!(svg.contains("Rate allowed per QP (DCQCN)"));
    // rates.svg draws h3's and h4's limiters from 10 ms, when they begin to
    // send, not at line rate from 0 (their QPs exist from the start).
    let lines: Vec<Vec<f64>> = svg
        .split("<polyline")
        .skip(1)
        .filter(|tag| tag.contains("stroke-width=\"2\""))
        .map(|tag| {
            let pts = tag.split(" points=\"").nth(1).unwrap();
            let pts = &pts[..pts.find('"').unwrap()];
            pts.split_whitespace()
                .map(|p| p.split(',').next().unwrap().parse().unwrap())
                .collect()
        })
        .filter(|xs: &Vec<f64>| xs.len() > 10)
        .collect();
    assert_eq!(lines.len(), 4, "h1..h4's lines in {svg}");
    let (start, end) = (lines[0][0], *lines[0].last().unwrap());
    for (h, xs) in [("h3", &lines[2]), ("h4", &lines[3])] {
        // The plot spans 0 to 20 ms: 10 ms is half way, and the line
        // starts at the last sample before (samples are 20 us apart).
        assert!(
            xs[0] >= start + (end - start) * 0.45,
            "{h}'s line starts at x {} of {start}..{end}",
            xs[0]
        );
    }
}

/// The DCQCN chapter quotes what today's `rocesim` prints for
/// `dcqcn_convergence`: its table, three counter selections from its
/// `summary.json` (as the chapter's `jq` prints them) and the `ecn` line of
/// `roce-pcap analyze` on a tap at the receiver (the report made by the
/// library). Its second-half shares are the ones `shares` computes.
#[test]
fn the_dcqcn_chapter_quotes_todays_output() {
    use roce_pcap::report::Format;
    let out = tmp("book_dcqcn");
    let o = run(&scenario("dcqcn_convergence"), &out, &[]);
    assert!(o.status.success());
    let mut printed: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for (port, pattern) in [
        ("r.eth0", &["cnp", "ecn"][..]),
        ("h1.eth0", &["cnp"][..]),
        ("sw1.pr", &["ecn"][..]),
    ] {
        let picked: serde_json::Map<String, Value> = s["counters"][port]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| pattern.iter().any(|p| k.contains(p)))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        printed.push(serde_json::to_string(&picked).unwrap());
    }
    let tap = tmp("book_dcqcn_tap");
    let o = bin()
        .arg("run")
        .arg(scenario("dcqcn_convergence"))
        .args(["--set", "sim.stop_at=2ms", "--tap", "r.eth0:128", "--out"])
        .arg(&tap)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let a = analyze_files(&[tap.join("r.eth0.pcap")], &AnalyzeOptions::default()).unwrap();
    let mut table = Vec::new();
    Format::Table
        .exporter()
        .write(&a.report, &mut table)
        .unwrap();
    printed.extend(
        String::from_utf8(table)
            .unwrap()
            .lines()
            .map(str::to_string),
    );
    let mut quoted = 0;
    for block in roce_testkit::repo::book_text_blocks("dcqcn.md") {
        for line in block.iter().filter(|l| !l.starts_with("$ ") && *l != "...") {
            quoted += 1;
            assert!(
                printed.contains(line),
                "book/src/dcqcn.md quotes a line rocesim or roce-pcap no longer prints:\n{line}"
            );
        }
    }
    assert!(
        quoted >= 11,
        "the chapter's quotes were not found ({quoted})"
    );
    let chapter = std::fs::read_to_string(repo().join("book/src/dcqcn.md")).unwrap();
    for (hosts, from, to) in [
        (&["h1", "h2"][..], 5_000_000, 10_000_000),
        (&["h1", "h2", "h3", "h4"][..], 15_000_000, 20_000_000),
    ] {
        let x = shares(&out, hosts, from, to);
        let shown: Vec<String> = x.iter().map(|v| format!("{v:.1}")).collect();
        let text = match shown.len() {
            2 => format!("{} and {} Gb/s", shown[0], shown[1]),
            _ => format!(
                "{}, {}, {} and {} Gb/s",
                shown[0], shown[1], shown[2], shown[3]
            ),
        };
        assert!(chapter.contains(&text), "dcqcn.md lacks {text:?}");
        let j = format!("{:.4}", jain(&x));
        let j = j.trim_end_matches('0');
        assert!(chapter.contains(j), "dcqcn.md lacks Jain {j}");
    }
}
