//! `[[collective]] connect = "socket"`: NCCL's out-of-band set-up of every
//! network connection on the wire, decoded by tshark and counted by hand;
//! the collective launches once every connection is up, which warm-up
//! hides from nccl-tests' times and `warmup_iters = 0` does not.

mod common;

use common::*;
use roce_testkit::tshark::fields;
use serde_json::Value;

/// `scenarios/nccl_allreduce_small.toml` on two servers (host0 under
/// leaf0, host2 under leaf1), sizes 8 to 512 B, a whole-frame tap at
/// host0.eth0, with `sets`.
fn two_servers(tag: &str, sets: &[&str]) -> (std::path::PathBuf, Value) {
    let mut t = std::fs::read_to_string(scenario("nccl_allreduce_small")).unwrap();
    t += "\n[[tap]]\nat = \"host0.eth0\"\nsnaplen = 0\n";
    let mut all = vec![
        "collective.allreduce.servers=[\"host0\",\"host2\"]",
        "collective.allreduce.maxbytes=512",
    ];
    all.extend(sets);
    run_text(tag, &t, &all)
}

fn times(s: &Value) -> Vec<f64> {
    s["collectives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["time_us"].as_f64().unwrap())
        .collect()
}

/// One frame as tshark reads it.
struct Frame {
    t: f64,
    src: String,
    dst: String,
    stream: Option<u32>,
    flags: String,
    len: usize,
    payload: Vec<u8>,
    destqp: Option<u32>,
}

fn frames(file: &std::path::Path) -> Vec<Frame> {
    let rows = fields(
        file,
        &[
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "tcp.relative_sequence_numbers:TRUE",
        ],
        &[
            "frame.time_relative",
            "ip.src",
            "ip.dst",
            "tcp.stream",
            "tcp.flags.str",
            "tcp.len",
            "tcp.payload",
            "infiniband.bth.destqp",
            "tcp.checksum.status",
            "tcp.analysis.flags",
            "_ws.malformed",
        ],
    );
    rows.iter()
        .map(|r| {
            assert!(r[10].is_empty(), "malformed: {r:?}");
            if !r[3].is_empty() {
                assert_eq!(r[8], "1", "TCP checksum: {r:?}");
                // No retransmission, out-of-order or window warnings.
                assert!(r[9].is_empty(), "tcp.analysis: {r:?}");
            }
            let hex = r[6].replace(':', "");
            Frame {
                t: r[0].parse().unwrap(),
                src: r[1].clone(),
                dst: r[2].clone(),
                stream: r[3].parse().ok(),
                flags: r[4].clone(),
                len: r[5].parse().unwrap_or(0),
                payload: (0..hex.len() / 2)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                    .collect(),
                destqp: r[7]
                    .strip_prefix("0x")
                    .map(|h| u32::from_str_radix(h, 16).unwrap()),
            }
        })
        .collect()
}

/// 2 servers × 1 NIC, ring all_reduce: 2 channels (two per NIC), each a
/// ring host0 → host2 → host0, so 4 network connections and 4 TCP
/// streams, all through host0.eth0. At MTU 4200 the MSS is 4160 and the
/// 4576-byte metadata takes 2 segments, so each stream is, by hand:
/// sender SYN, ACK, 8, 4, 37, 4160, 416, ACK (of the peer's first
/// metadata segment), 4 (ready) = 9 frames; receiver SYN-ACK, ACK, ACK
/// (magic and type), 37, ACK (first metadata segment), 4160, 416, ACK
/// (ready) = 8 frames: 17 per connection, 68 in all. Every metadata names
/// QPNs the RoCE frames then carry, and host0 sends RoCE only after the
/// last "ready".
#[test]
fn each_connection_is_one_tcp_stream_of_nccls_messages_before_its_qps() {
    let (dir, s) = two_servers(
        "nccl_socket_frames",
        &["collective.allreduce.connect=socket"],
    );
    let f = frames(&tap_file(&s, &dir.join("run"), "host0.eth0"));
    let tcp: Vec<&Frame> = f.iter().filter(|x| x.stream.is_some()).collect();
    assert_eq!(tcp.len(), 68);
    let mut metas: Vec<(String, Vec<u8>)> = Vec::new();
    for st in 0..4 {
        let of: Vec<&&Frame> = tcp.iter().filter(|x| x.stream == Some(st)).collect();
        assert_eq!(of.len(), 17, "stream {st}");
        let sender = of[0].src.clone();
        assert!(of[0].flags.ends_with("S·"), "{}", of[0].flags);
        let data = |from_sender: bool| -> Vec<usize> {
            of.iter()
                .filter(|x| (x.src == sender) == from_sender && x.len > 0)
                .map(|x| x.len)
                .collect()
        };
        assert_eq!(data(true), vec![8, 4, 37, 4160, 416, 4], "stream {st}");
        assert_eq!(data(false), vec![37, 4160, 416], "stream {st}");
        let pure_acks = |from_sender: bool| {
            of.iter()
                .filter(|x| (x.src == sender) == from_sender && x.len == 0)
                .count()
        };
        // SYN + ACK + 1 ACK; SYN-ACK + 2 + 1 + 1 ACKs.
        assert_eq!((pure_acks(true), pure_acks(false)), (3, 5), "stream {st}");
        // The magic and the socket type (ncclSocketTypeNetIb = 4).
        let first = of.iter().find(|x| x.len == 8).unwrap();
        assert_eq!(first.payload, 0x564a_b9f2_fc4b_9d6c_u64.to_le_bytes());
        let ty = of.iter().find(|x| x.len == 4).unwrap();
        assert_eq!(ty.payload, [4, 0, 0, 0]);
        // The last frame: the receiver's ACK of the "ready" (int 1).
        let ready = of.iter().rev().find(|x| x.len == 4).unwrap();
        assert_eq!(ready.payload, [1, 0, 0, 0]);
        assert_eq!(of[16].len, 0);
        for x in of.iter().filter(|x| x.len == 4160) {
            metas.push((x.src.clone(), x.payload.clone()));
        }
    }
    // Each metadata's first segment: the QPN of QP 0 at byte 0, the GID
    // ::ffff:<its sender> at 3472 (devs[0].gid), the device name at 3904.
    let mut qpns = Vec::new();
    for (src, m) in &metas {
        let ip: std::net::Ipv4Addr = src.parse().unwrap();
        let mut gid = [0u8; 16];
        gid[10] = 0xff;
        gid[11] = 0xff;
        gid[12..].copy_from_slice(&ip.octets());
        assert_eq!(&m[3472..3488], &gid, "{src}");
        assert_eq!(&m[3904..3910], b"mlx5_0");
        qpns.push((src.clone(), u32::from_le_bytes(m[..4].try_into().unwrap())));
    }
    // Every RoCE frame goes to a QP some metadata from its destination
    // named. The small sizes run on one channel: two of the four
    // connections, whose 4 QPs (data and CTS one way, ACKs the other).
    let mut seen: Vec<(String, u32)> = f
        .iter()
        .filter_map(|x| Some((x.dst.clone(), x.destqp?)))
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 4, "{seen:?}");
    for q in &seen {
        assert!(qpns.contains(q), "{q:?} not in {qpns:?}");
    }
    // host0 sends its first RoCE frame after every TCP frame it sent and
    // after every "ready" that reached it.
    let roce0 = f
        .iter()
        .find(|x| x.destqp.is_some() && x.src == "10.0.0.1")
        .unwrap();
    for x in &tcp {
        if x.src == "10.0.0.1" || x.payload == [1, 0, 0, 0] {
            assert!(x.t <= roce0.t, "{} after {}", x.t, roce0.t);
        }
    }
}

/// The set-up runs in the first (warm-up) operation: with `warmup_iters =
/// 1` every reported time is the same as without a set-up; with 0 the
/// first size's mean grows by the set-up's span over its 5 iterations.
/// The span, from host0's first SYN to its first RoCE frame (the CTS it
/// posts at the launch): 7 one-way trips host0 ↔ host2 (SYN, SYN-ACK,
/// ACK + magic + type + device list, device list, metadata, metadata,
/// ready), each 4 links of 1 µs, plus the frames' serialization: at
/// least 28 µs, at most ~34.
#[test]
fn warm_up_hides_the_set_up_and_its_absence_shows_it() {
    let w1 = ["collective.allreduce.warmup_iters=1"];
    let (_, none) = two_servers("nccl_socket_none_w1", &w1);
    let (_, sock) = two_servers(
        "nccl_socket_w1",
        &[
            "collective.allreduce.warmup_iters=1",
            "collective.allreduce.connect=socket",
        ],
    );
    assert_eq!(times(&none), times(&sock));
    let w0 = ["collective.allreduce.warmup_iters=0"];
    let (_, none) = two_servers("nccl_socket_none_w0", &w0);
    let (dir, sock) = two_servers(
        "nccl_socket_w0",
        &[
            "collective.allreduce.warmup_iters=0",
            "collective.allreduce.connect=socket",
        ],
    );
    let (tn, ts) = (times(&none), times(&sock));
    assert_eq!(tn[1..], ts[1..]);
    let f = frames(&tap_file(&sock, &dir.join("run"), "host0.eth0"));
    let syn = f.iter().find(|x| x.stream.is_some()).unwrap();
    let roce = f
        .iter()
        .find(|x| x.destqp.is_some() && x.src == "10.0.0.1")
        .unwrap();
    let span_us = (roce.t - syn.t) * 1e6;
    assert!((28.0..34.0).contains(&span_us), "{span_us}");
    let excess_us = (ts[0] - tn[0]) * 5.0;
    assert!(
        (excess_us - span_us).abs() < 0.02,
        "{excess_us} vs {span_us}"
    );
}

/// A failed completion names the peer as NCCL does: the out-of-band
/// socket's `IP<port>`, a port the set-up used on the wire. The 4-server
/// star of `nccl.rs`, whose s3 link dies at 300 µs.
#[test]
fn a_failed_completion_names_the_oob_socket() {
    let mut t = failing_allreduce("connect = \"socket\"\n");
    t += r#"
[[tap]]
at = "s3.mlx5_0"
snaplen = 96
"#;
    let (dir, s) = run_text("nccl_socket_fail", &t, &[]);
    let e = s["collectives"][0]["error"].as_str().unwrap().to_string();
    let rest = e
        .strip_prefix("NET/IB: Got completion from peer 10.0.0.")
        .unwrap_or_else(|| panic!("{e}"));
    let (_, after) = rest.split_once('<').unwrap_or_else(|| panic!("{e}"));
    let (port, after) = after.split_once('>').unwrap();
    assert!(
        after.starts_with(" with status=IBV_WC_RETRY_EXC_ERR(12)"),
        "{e}"
    );
    let port: u16 = port.parse().unwrap();
    assert!((32768..=60999).contains(&port), "{e}");
    // The timed-out QP is one of s3's connections: its socket crossed
    // s3's link.
    let rows = fields(
        &tap_file(&s, &dir.join("run"), "s3.mlx5_0"),
        &[],
        &["tcp.srcport", "tcp.dstport"],
    );
    let p = port.to_string();
    assert!(
        rows.iter().any(|r| r[0] == p || r[1] == p),
        "{port} is no port of s3's set-ups"
    );
}

/// RDMA CM is refused (NCCL does not use it) with a hint naming socket; a
/// `NCCL_SOCKET_IFNAME` that matches nothing is refused at its key.
#[test]
fn rdma_cm_and_a_missing_oob_interface_are_refused() {
    let e = refused(
        &scenario("nccl_allreduce_small"),
        &["collective.allreduce.connect=rdma_cm"],
    );
    assert!(e.contains("key `collective[0].connect`"), "{e}");
    assert!(e.contains("NCCL does not use RDMA CM"), "{e}");
    assert!(e.contains("connect = \"socket\""), "{e}");
    let e = refused(
        &scenario("nccl_allreduce_small"),
        &[
            "collective.allreduce.connect=socket",
            "collective.allreduce.env.NCCL_SOCKET_IFNAME=eht",
        ],
    );
    assert!(
        e.contains("key `collective[0].env.NCCL_SOCKET_IFNAME`"),
        "{e}"
    );
    assert!(e.contains("matches no interface"), "{e}");
    assert!(e.contains("did you mean `eth0`?"), "{e}");
}
