//! Cases found in review, each built with the codec's builders and checked
//! against figures worked out by hand in the comments.

use std::net::Ipv4Addr;
use std::path::Path;

use roce_codec::Psn;
use roce_codec::wire::aeth::Syndrome;
use roce_pcap::analyze::report::{Finding, Report};
use roce_pcap::analyze::{AnalyzeOptions, LinkSpeed, analyze_files};
use roce_testkit::cli::TempDir;
use roce_testkit::pcap::pcapng_with_raw_times;
use roce_testkit::synth::{CaptureFormat, Endpoint, RcConn, Synth, temp_captures};

const T0: u64 = 1_000_000_000;

fn analyze(paths: &[&Path]) -> Report {
    analyze_files(paths, &AnalyzeOptions::default())
        .unwrap()
        .report
}

/// The finding of `rule`, which must be there.
fn finding<'a>(r: &'a Report, rule: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("no {rule} finding in {:?}", rules(r)))
}

fn rules(r: &Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.rule).collect()
}

/// QP 0x11 (host 1) to 0x12 (host 2), `n` WRITE_ONLYs of 100 bytes (PSN
/// `first`..) all sent at [`T0`].
fn writes_at_t0(s: &mut Synth, first: u32, n: usize) -> RcConn {
    let mut a = RcConn::new(
        Endpoint::host(1, 0x11),
        Endpoint::host(2, 0x12),
        0xC000,
        first,
    );
    for _ in 0..n {
        a.message(s, T0, 100, true, 0, &[]).unwrap();
    }
    a
}

/// Resends `psns` 1 µs apart from `t`; returns the time after the last.
fn resend_each(a: &mut RcConn, s: &mut Synth, mut t: u64, psns: std::ops::Range<u32>) -> u64 {
    for psn in psns {
        a.resend(s, t, Psn::new(psn)).unwrap();
        t += 1_000;
    }
    t
}

/// A WRITE_ONLY of 100 bytes, ACKed 3 µs later, from another QP of host 1
/// at `ts`: traffic that keeps the capture going.
fn keep_capture_going(s: &mut Synth, ts: u64) {
    let mut b = RcConn::new(Endpoint::host(1, 0x21), Endpoint::host(3, 0x22), 0xC100, 0);
    let y = b.message(s, ts, 100, true, 0, &[]).unwrap();
    b.ack(s, y.end_ns + 3000, y.last).unwrap();
}

/// One WRITE_ONLY (PSN 40) resent three times, 4 ms apart, and never
/// ACKed. Whether that is the retry-exhausted signature depends on what
/// the capture shows after the last resend: a requester with retries
/// left resends again after its timer (4 ms here), so only a capture that
/// goes on for at least that long shows the silence of a given-up QP.
fn resent_three_times(path: &Path, capture_goes_on_ns: Option<u64>) {
    let mut s = Synth::create(&[(path, CaptureFormat::Pcap, 0)]).unwrap();
    let mut a = writes_at_t0(&mut s, 40, 1);
    let mut t = T0;
    for _ in 0..3 {
        t += 4_000_000;
        a.resend(&mut s, t, Psn::new(40)).unwrap();
    }
    if let Some(after) = capture_goes_on_ns {
        keep_capture_going(&mut s, t + after);
    }
    s.finish().unwrap();
}

#[test]
fn retry_exhausted_needs_a_silence_as_long_as_the_retry_timer() {
    let dir = TempDir::new("silence");
    // The capture ends with the third resend: nothing says the requester gave up.
    let cut = dir.join("cut.pcap");
    resent_three_times(&cut, None);
    let r = analyze(&[&cut]);
    assert!(!rules(&r).contains(&"retry-exhausted"), "{:?}", rules(&r));
    let f = finding(&r, "repeated-timeouts");
    assert!(
        f.message.contains("capture ends 0.0 µs after")
            && f.message
                .contains("after 3 timeouts (sent 4.0 ms, 4.0 ms, 4.0 ms apart"),
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
    let f = finding(&r, "retry-exhausted");
    assert_eq!(f.qp, Some(0));
    assert!(f.message.contains("silent for 5.0 ms"), "{}", f.message);
}

/// Seven retries are as many as any retry_cnt allows (3 bits): a capture
/// that ends with the seventh resend shows an exhausted QP, as the
/// simulator's `retry_exceeded` scenario does.
#[test]
fn seven_retries_are_exhausted_even_at_the_end_of_the_capture() {
    let (_dir, [path], mut s) = temp_captures("seven", ["seven.pcap"]);
    let mut a = writes_at_t0(&mut s, 40, 1);
    for k in 1..=7 {
        a.resend(&mut s, T0 + k * 4_000_000, Psn::new(40)).unwrap();
    }
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let f = finding(&r, "retry-exhausted");
    assert!(
        f.message.contains("7 times after 7 timeouts") && f.message.contains("retry_cnt (7)"),
        "{}",
        f.message
    );
}

/// A mirror port that copies every request 1 us later, and a real NAK
/// episode 20 us after: the copies stay copies.
#[test]
fn mirror_copies_stay_copies_next_to_a_nak() {
    let (_dir, [path], mut s) = temp_captures("mirrornak", ["m.pcap"]);
    let mut a = RcConn::new(Endpoint::host(1, 0x11), Endpoint::host(2, 0x12), 0xC000, 0);
    let sent = a.message(&mut s, T0, 2 * 4096, true, 3000, &[]).unwrap();
    a.resend(&mut s, T0 + 1000, Psn::new(0)).unwrap();
    a.resend(&mut s, T0 + 4000, Psn::new(1)).unwrap();
    // PSN 1 was lost behind the capture point: NAK(1) 20 us later, resend.
    a.nak(
        &mut s,
        T0 + 24_000,
        Psn::new(1),
        Syndrome::NAK_PSN_SEQUENCE_ERROR,
    )
    .unwrap();
    a.resend(&mut s, T0 + 26_000, Psn::new(1)).unwrap();
    a.ack(&mut s, T0 + 30_000, sent.last).unwrap();
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let q = &r.qps[0];
    assert_eq!(
        (
            q.retransmitted_packets,
            q.mirror_duplicates,
            q.go_back_n.episodes
        ),
        (1, 2, 1)
    );
}

/// A PFC frame pausing priority 3 for `quanta`.
fn pfc_prio3(quanta: u16) -> Vec<u8> {
    let times = [0, 0, 0, quanta, 0, 0, 0, 0];
    roce_codec::FrameRepr::pfc([2, 0, 0, 0, 0, 1], 0x08, times).to_vec(&[])
}

/// Hostile timestamps: raw pcapng times whose nanosecond value does not
/// fit in 64 bits read as the largest time (not a wrapped small one), and
/// PFC pauses that would end past it neither overflow nor panic.
#[test]
fn timestamps_past_the_end_of_time_saturate() {
    let dir = TempDir::new("maxts");
    let pfc = pfc_prio3(0xFFFF);
    // Seconds resolution: 2^64 - 256 seconds is far beyond 2^64 ns.
    let secs = dir.join("secs.pcapng");
    pcapng_with_raw_times(&secs, 0, &[(u64::MAX - 255, &pfc), (u64::MAX, &pfc)]).unwrap();
    let mut r = roce_capture::read::CaptureReader::open(&secs).unwrap();
    for _ in 0..2 {
        match r.next_frame().unwrap() {
            roce_capture::read::Next::Frame(f) => assert_eq!(f.ts_ns, u64::MAX),
            _ => panic!("expected a frame"),
        }
    }
    // Nanoseconds resolution, a pause starting 1 ns before the largest time.
    let ns = dir.join("ns.pcapng");
    pcapng_with_raw_times(&ns, 9, &[(u64::MAX - 1, &pfc), (u64::MAX, &pfc)]).unwrap();
    for p in [&secs, &ns] {
        let r = analyze(&[p]);
        assert_eq!(r.pfc.len(), 1);
        assert_eq!((r.pfc[0].xoff_frames, r.pfc[0].priority), (2, Some(3)));
    }
}

/// A link so slow that 65535 pause quanta would overflow the clock is not
/// a link speed (`--link-speed` says so: flags::tests), not a wrapped
/// pause time.
#[test]
fn link_speed_must_be_a_real_link_speed() {
    let dir = TempDir::new("speed");
    let path = dir.join("p.pcapng");
    pcapng_with_raw_times(&path, 9, &[(T0, &pfc_prio3(0xFFFF))]).unwrap();
    for bad in [1e-9, 0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(LinkSpeed::from_gbps(bad).is_err(), "{bad}");
    }
    let opts = AnalyzeOptions {
        link_speed: LinkSpeed::from_gbps(0.01).unwrap(),
        ..AnalyzeOptions::default()
    };
    // 65535 quanta x 512 bit times at 10 Mb/s = 3.3553920 s.
    let r = analyze_files(&[&path], &opts).unwrap().report;
    assert_eq!(r.pfc[0].pause_ns, 3_355_392_000.0);
}

fn table(r: &Report) -> String {
    let mut out = Vec::new();
    roce_pcap::report::Format::Table
        .exporter()
        .write(r, &mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

/// A SEND_ONLY of 100 bytes between two long IPv6 addresses, ACKed 1 ms
/// later, and a busy IPv4 flow: goodput 100 B x 8 / 1 ms = 800 kb/s, which
/// the table must show as such (not 0.001 Gb/s), with singular nouns for
/// single things, and with the columns of both flows under their headers.
#[test]
fn the_table_shows_slow_flows_in_their_unit_and_lines_up() {
    use roce_codec::{FrameRepr, IbRepr, IpRepr, Ipv6Repr, Opcode};
    let (_dir, [path], mut s) = temp_captures("table", ["t.pcap"]);
    let (a, b) = (
        "2001:db8:1234:5678:9abc:def0:1234:5678".parse().unwrap(),
        "2001:db8:1234:5678:9abc:def0:1234:5679".parse().unwrap(),
    );
    let ip = |src, dst| {
        IpRepr::V6(Ipv6Repr {
            dscp: 26,
            ecn: 2,
            flow_label: 0,
            next_header: 17,
            hop_limit: 64,
            src,
            dst,
        })
    };
    let send = IbRepr::new(Opcode(0x04), 0x12, Psn::new(7), 100).with_ack_req(true);
    let ack = IbRepr::ack(0x11, Psn::new(7), Syndrome::ACK_NO_CREDITS, 1);
    let (ma, mb) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    s.frame(0, T0, &FrameRepr::rocev2(mb, ma, ip(a, b), 0xC000, send))
        .unwrap();
    s.frame(
        0,
        T0 + 1_000_000,
        &FrameRepr::rocev2(ma, mb, ip(b, a), 0xC000, ack),
    )
    .unwrap();
    let mut fast = RcConn::new(Endpoint::host(1, 0x21), Endpoint::host(2, 0x22), 0xC100, 0);
    let x = fast.message(&mut s, T0, 64 * 4096, true, 400, &[]).unwrap();
    fast.ack(&mut s, x.end_ns + 2000, x.last).unwrap();
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let t = table(&r);
    assert!(t.contains("800.000 kb/s"), "{t}");
    assert!(
        t.contains("2 packets (1 request, 1 response)")
            && t.contains("(1 PSN)")
            && t.contains("1 ACK, RTT")
            && t.contains("(1 sample)")
            && t.contains("2 request flows"),
        "{t}"
    );
    let lines: Vec<&str> = t.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.trim_start().starts_with("# flow"))
        .expect("flow table header");
    // Every column of the two rows ends where its header does.
    let ends = |l: &str| -> Vec<usize> {
        let mut v = Vec::new();
        let c: Vec<char> = l.chars().collect();
        for i in 0..c.len() {
            if c[i] != ' ' && c.get(i + 1).is_none_or(|n| *n == ' ') {
                v.push(i);
            }
        }
        v
    };
    let h = ends(lines[head]);
    for row in &lines[head + 1..head + 3] {
        let c: Vec<char> = row.chars().collect();
        // The right-aligned columns after `flow` (sport .. cnps) end where
        // their headers end.
        for &p in &h[2..] {
            assert!(
                c.get(p).is_some_and(|ch| *ch != ' ') && c.get(p + 1).is_none_or(|n| *n == ' '),
                "column ending at {p}:\n{}\n{row}",
                lines[head]
            );
        }
    }
}

/// Attribute `name` of an SVG tag, as a number.
fn svg_attr(tag: &str, name: &str) -> f64 {
    let v = tag.split(&format!(" {name}=\"")).nth(1).unwrap();
    v[..v.find('"').unwrap()].parse().unwrap()
}

/// Rightmost x of any line or marker drawn inside the chart.
fn svg_rightmost_data(svg: &str) -> f64 {
    let mut right = 0.0f64;
    for tag in svg.split("<polyline").skip(1) {
        let pts = tag.split(" points=\"").nth(1).unwrap();
        for p in pts[..pts.find('"').unwrap()].split_whitespace() {
            right = right.max(p.split(',').next().unwrap().parse().unwrap());
        }
    }
    for tag in svg.split("<circle").skip(1) {
        right = right.max(svg_attr(tag, "cx"));
    }
    right
}

/// A flow of 100-byte SENDs, one per millisecond for 100 ms: its goodput
/// plot is in Mb/s (1.5 Mb/s in each 524 us bin that holds a SEND), not
/// 0.0015 Gb/s, and no legend sits on the data: legend text starts right
/// of every line and marker.
#[test]
fn plots_of_a_slow_flow_use_its_unit_and_keep_legends_off_the_data() {
    let (dir, [path], mut s) = temp_captures("plot", ["slow.pcap"]);
    let mut a = RcConn::new(Endpoint::host(1, 0x11), Endpoint::host(2, 0x12), 0xC000, 0);
    for i in 0..100 {
        let x = a
            .message(&mut s, T0 + i * 1_000_000, 100, false, 0, &[])
            .unwrap();
        a.ack(&mut s, x.end_ns + 5000, x.last).unwrap();
    }
    s.finish().unwrap();
    let out = dir.join("plots");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
        .args([
            "plot",
            path.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let goodput = std::fs::read_to_string(out.join("goodput_qps.svg")).unwrap();
    assert!(goodput.contains("Mb/s"), "no Mb/s axis");
    assert!(!goodput.contains("Gb/s"));
    for (svg, label) in [
        (&goodput, "10.0.0.1:0x11"),
        (
            &std::fs::read_to_string(out.join("tsg_qp0.svg")).unwrap(),
            "first transmission",
        ),
    ] {
        let right = svg_rightmost_data(svg);
        let xs: Vec<f64> = svg
            .split("<text")
            .skip(1)
            .filter(|t| t.contains(label))
            .map(|t| svg_attr(t, "x"))
            .collect();
        assert!(!xs.is_empty(), "no legend entry {label}");
        assert!(
            xs.iter().all(|&x| x > right),
            "legend at {xs:?}, data reaches {right}"
        );
    }
}

/// An IPv6 RoCEv2 flow whose UDP source port is 0 (as ConnectX-4 Lx sends
/// CNPs) is still IPv6 to the bonding hash, not RoCE v1 (EtherType 0x8915,
/// no addresses): the layer3+4 prediction hashes its addresses and ports.
#[test]
fn ipv6_rocev2_with_source_port_0_is_hashed_as_ipv6() {
    use roce_codec::hash::{FlowAddrs, FlowKeys, XmitHashPolicy, bond_slave_index, bond_xmit_hash};
    use roce_codec::{FrameRepr, IbRepr, IpRepr, Ipv6Repr, Opcode};
    let (_dir, [p0, p1], mut s) = temp_captures("v6sport0", ["s0.pcap", "s1.pcap"]);
    let (a, b): (std::net::Ipv6Addr, std::net::Ipv6Addr) =
        ("fd00::c".parse().unwrap(), "fd00::b".parse().unwrap());
    let ip = IpRepr::V6(Ipv6Repr {
        dscp: 26,
        ecn: 2,
        flow_label: 0,
        next_header: 17,
        hop_limit: 64,
        src: a,
        dst: b,
    });
    let (ma, mb) = ([2, 0, 0, 0, 0, 0x0a], [2, 0, 0, 0, 0, 0x0b]);
    let send = IbRepr::new(Opcode(0x04), 0x12, Psn::new(7), 100).with_ack_req(true);
    s.frame(0, T0, &FrameRepr::rocev2(mb, ma, ip, 0, send))
        .unwrap();
    s.finish().unwrap();
    let r = analyze(&[&p0, &p1]);
    let keys = |policy| {
        let k = FlowKeys {
            src_mac: ma,
            dst_mac: mb,
            ethertype: 0x86DD,
            vlan_tci: None,
            addrs: Some(FlowAddrs::V6 { src: a, dst: b }),
            ports: Some((0, 4791)),
        };
        bond_slave_index(bond_xmit_hash(policy, &k), 2).unwrap()
    };
    let name = |i: usize| [&p0, &p1][i].display().to_string();
    let m = &r.lag.qp_map[0];
    // fd00::c and fd00::b fold to 0x0c0000fd and 0x0b0000fd; with the port
    // word 0xb7120000 (0 and 4791 read little-endian) the layer3+4 hash is
    // (0xb0a2a2a2 >> 1) = 0x58515151, odd: slave 1. Read as RoCE v1 (MACs
    // and 0x8915 only) it would be 0x0a ^ 0x0b ^ 0x8915 = 0x8914: slave 0.
    assert_eq!(keys(XmitHashPolicy::Layer34), 1);
    assert_eq!(m.predicted_layer3_4, Some(name(1)));
    assert_eq!(
        m.predicted_layer2_3,
        Some(name(keys(XmitHashPolicy::Layer23)))
    );
}

/// A CNP from a NIC that sends them from UDP port 0 (ConnectX-4 Lx) comes
/// before the flow's first ACK: the flow's response port is still the one
/// its responses use.
#[test]
fn the_response_port_is_the_responses_not_a_cnps() {
    let (_dir, [path], mut s) = temp_captures("cnpport", ["c.pcap"]);
    let mut a = RcConn::new(Endpoint::host(1, 0x11), Endpoint::host(2, 0x12), 0xC000, 0);
    a.response_sport = 0;
    let x = a.message(&mut s, T0, 4096, true, 0, &[0]).unwrap();
    a.cnp_to_requester(&mut s, x.end_ns + 1000).unwrap();
    a.response_sport = 0xD000;
    a.ack(&mut s, x.end_ns + 3000, x.last).unwrap();
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let q = &r.qps[0];
    assert_eq!((q.cnps, q.acks, q.response_sport), (1, 1, Some(0xD000)));
}

/// The same capture given twice (two views of one slave): each file's PFC
/// rows point at frames of that file.
#[test]
fn pfc_rows_point_into_their_own_file() {
    let dir = TempDir::new("pfcfile");
    let path = dir.join("p.pcapng");
    pcapng_with_raw_times(&path, 9, &[(T0, &pfc_prio3(100))]).unwrap();
    let r = analyze(&[&path, &path]);
    let files: Vec<u16> = r.pfc.iter().map(|p| p.first_frame.file).collect();
    assert_eq!(files, [0, 1]);
}

/// PFC in a capture from 2024 (timestamps near 1.7e18 ns, which overflow
/// 64 bits as picoseconds): XOFF for 65535 quanta on priority 3, XON 1 us
/// later, then an XOFF of 1000 quanta at 25 Gb/s (20.48 us) still running
/// when the capture ends 10 us later. Paused time 1 us + 20.48 us.
#[test]
fn pfc_pauses_of_a_capture_taken_this_century() {
    let dir = TempDir::new("pfc2024");
    let path = dir.join("p.pcapng");
    let t0: u64 = 1_704_164_645_123_456_789;
    let f = |q: u16| {
        roce_codec::FrameRepr::pfc([2, 0, 0, 0, 0, 1], 0x08, [0, 0, 0, q, 0, 0, 0, 0]).to_vec(&[])
    };
    let (xoff, xon, short) = (f(0xFFFF), f(0), f(1000));
    let other = roce_codec::FrameRepr {
        eth: roce_codec::EthRepr::default(),
        vlans: roce_codec::Vlans::none(),
        net: roce_codec::NetRepr::Other { ethertype: 0x88cc },
    }
    .to_vec(&[0; 46]);
    pcapng_with_raw_times(
        &path,
        9,
        &[
            (t0, &xoff),
            (t0 + 1000, &xon),
            (t0 + 100_000, &short),
            (t0 + 110_000, &other),
        ],
    )
    .unwrap();
    let opts = AnalyzeOptions {
        link_speed: LinkSpeed::from_gbps(25.0).unwrap(),
        ..AnalyzeOptions::default()
    };
    let r = analyze_files(&[&path], &opts).unwrap().report;
    let p = &r.pfc[0];
    assert_eq!((p.xoff_frames, p.xon_frames), (2, 1));
    assert_eq!(p.pause_ns, 1000.0 + 20_480.0);
    assert_eq!(p.longest_pause_ns, 20_480.0);
}

/// A missing file, a directory given as -o, a plot into a file: each
/// error names the path once and says why once, with exit 2.
#[test]
fn errors_say_why_once() {
    let dir = TempDir::new("errors");
    let good = dir.join("g.pcap");
    resent_three_times(&good, None);
    let missing = dir.join("missing.pcap");
    let g = good.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["analyze", missing.to_str().unwrap()], "No such file"),
        (vec!["dissect", missing.to_str().unwrap()], "No such file"),
        (
            vec!["plot", missing.to_str().unwrap(), "--out", "x"],
            "No such file",
        ),
        (
            vec!["analyze", g, "-o", dir.to_str().unwrap()],
            "Is a directory",
        ),
        (vec!["plot", g, "--out", g], "not a directory"),
    ];
    for (args, why) in cases {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.matches(why).count(), 1, "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

mod hostile_times {
    use super::*;
    use proptest::prelude::*;
    use roce_codec::wire::aeth::AethRepr;
    use roce_codec::{FrameRepr, IbRepr, IpRepr, Ipv4Repr, Opcode};

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Timestamps anywhere in 64 bits, going back and forth, on
        /// requests, responses, CNPs and PFC frames of two files: the
        /// analysis and the plots finish without a panic or an overflow.
        #[test]
        fn any_timestamps_are_analyzed_and_plotted(
            frames in prop::collection::vec(
                (
                    prop_oneof![
                        any::<u64>(),
                        u64::MAX - 1_000_000..=u64::MAX,
                        0u64..1_000_000,
                        1_704_164_645_000_000_000u64..1_704_164_646_000_000_000,
                    ],
                    prop::sample::select(&[0x04u8, 0x06, 0x07, 0x08, 0x0C, 0x10, 0x11, 0x81, 0xFF][..]),
                    0u32..8,
                    0usize..2,
                    any::<bool>(),
                ),
                1..60,
            )
        ) {
            let (dir, [p0, p1], mut s) = temp_captures("hostile", ["a.pcapng", "b.pcapng"]);
            let (a, b) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
            for (ts, op, psn, file, ce) in frames {
                if op == 0xFF {
                    s.pfc(file, ts, [2, 0, 0, 0, 0, 9], [None, None, None, Some(0xFFFF), None, None, None, Some(0)])
                        .unwrap();
                    continue;
                }
                let op = Opcode(op);
                let payload = if matches!(op.0, 0x0C | 0x11 | 0x81) { 0 } else { 1024 };
                let mut ib = IbRepr::new(op, 0x12, Psn::new(psn), payload);
                if let Some(mut r) = ib.ext.reth() {
                    r.dma_len = 3000;
                    ib.ext.set_reth(Some(r));
                }
                if ib.ext.aeth().is_some() {
                    ib.ext.set_aeth(Some(AethRepr { syndrome: Syndrome(psn as u8 * 0x20), msn: 1 }));
                }
                let response = matches!(op.0, 0x10 | 0x11);
                let (src, dst) = if response { (b, a) } else { (a, b) };
                let ip = IpRepr::V4(Ipv4Repr::udp(src, dst, 26, if ce { 3 } else { 2 }));
                let f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], ip, 0xC000, ib);
                s.frame(file, ts, &f).unwrap();
            }
            s.finish().unwrap();
            let an = analyze_files(&[&p0, &p1], &AnalyzeOptions { series: true, ..AnalyzeOptions::default() })
                .unwrap();
            for f in [roce_pcap::report::Format::Table, roce_pcap::report::Format::Json, roce_pcap::report::Format::Csv] {
                f.exporter().write(&an.report, &mut Vec::new()).unwrap();
            }
            roce_pcap::plot::plot(&an, &dir.join("plots"), 2).unwrap();
        }
    }
}

/// A failover seen from the new slave: ten WRITE packets (PSN 0..9) sent,
/// nothing ACKed, then after the ACK timeout the requester resends PSN 0..2;
/// the responder, which had PSN 0..6, re-ACKs through 6 when it sees the
/// duplicate, and the requester goes on from 7 (it does not resend what is
/// ACKed). One timeout, one go-back-N episode of 6 packets (0, 1, 2, 7, 8,
/// 9), as the simulator's failover scenario counts it; not a second
/// "timeout" episode at PSN 7.
#[test]
fn a_resend_that_skips_what_an_ack_covered_is_one_episode() {
    let (_dir, [path], mut s) = temp_captures("skip", ["skip.pcap"]);
    let mut a = writes_at_t0(&mut s, 0, 10);
    let t = resend_each(&mut a, &mut s, T0 + 16_000_000, 0..3);
    a.ack(&mut s, t, Psn::new(6)).unwrap();
    let t = resend_each(&mut a, &mut s, t + 1_000, 7..10);
    a.ack(&mut s, t + 5_000, Psn::new(9)).unwrap();
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let q = &r.qps[0];
    assert_eq!(q.retransmitted_packets, 6);
    assert_eq!(q.go_back_n.episodes, 1, "{:?}", q.go_back_n);
    assert_eq!(q.go_back_n.list[0].packets, 6);
    assert_eq!(q.go_back_n.list[0].cause, "timeout");
}

/// PSN 0..2 sent; after 4 ms the requester resends 0..2 and gets an ACK of
/// PSN 0; then PSN 1 is resent three more times, 4 ms apart, and the
/// requester gives up. The run at PSN 1 times its first interval from
/// PSN 1's resend in the first episode (4 ms), not from its first
/// sending (8 ms).
#[test]
fn a_retry_run_times_its_first_interval_from_the_last_sending() {
    let (_dir, [path], mut s) = temp_captures("lastsend", ["lastsend.pcap"]);
    let mut a = writes_at_t0(&mut s, 0, 3);
    let mut t = T0 + 4_000_000;
    resend_each(&mut a, &mut s, t, 0..3);
    a.ack(&mut s, t + 10_000, Psn::new(0)).unwrap();
    for _ in 0..3 {
        t += 4_000_000;
        a.resend(&mut s, t, Psn::new(1)).unwrap();
        a.resend(&mut s, t + 1_000, Psn::new(2)).unwrap();
    }
    // Another QP keeps the capture going past the requester's timer.
    keep_capture_going(&mut s, t + 9_000_000);
    s.finish().unwrap();
    let r = analyze(&[&path]);
    let f = finding(&r, "retry-exhausted");
    assert!(
        f.message.contains("PSN 1 was resent 3 times")
            && f.message.contains("(sent 4.0 ms, 4.0 ms, 4.0 ms apart"),
        "{}",
        f.message
    );
}
