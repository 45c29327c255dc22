//! `roce-pcap dissect --format jsonl` against tshark, field by field, on
//! every frame of the public captures in ../shared/traces/public and of the
//! generated corpus in traces/.
//!
//! Every field both tools decode must be equal. A field only one of them
//! shows is a failure too, unless it is one of the tshark 4.0 gaps listed
//! in [`tshark_gap`], each of which was checked by hand (see the comments
//! there and traces/README.md). The number of fields compared is counted
//! and must be large, so the test cannot pass by comparing nothing.
//!
//! tshark prints numbers in the base of the field definition (hex for QPNs
//! and R_Keys, decimal for PSNs), booleans as 1/0 and the ICRC as the
//! big-endian integer of the 4 wire bytes; all of that is normalised here
//! into one canonical text per value, never by loosening a comparison.
//!
//! With ROCESIM_CI=1 a missing tshark or ../shared is a failure; elsewhere
//! the tests skip and say why.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn ci() -> bool {
    std::env::var("ROCESIM_CI").is_ok_and(|v| v == "1")
}

fn tshark() -> Option<&'static str> {
    let ok = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if ok {
        return Some("tshark");
    }
    assert!(!ci(), "ROCESIM_CI=1 but tshark is not installed");
    eprintln!("skipping: tshark is not installed");
    None
}

fn public(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/traces/public")
        .join(name);
    if p.exists() {
        return Some(p);
    }
    assert!(!ci(), "ROCESIM_CI=1 but {} is missing", p.display());
    eprintln!("skipping: {} not found", p.display());
    None
}

fn corpus(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../traces")
        .join(name)
}

/// The tshark fields read, in `-e` order.
const TSHARK_FIELDS: &[&str] = &[
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "vlan.id",
    "vlan.priority",
    "ieee8021ad.id",
    "ieee8021ad.priority",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "udp.srcport",
    "udp.dstport",
    "infiniband.grh.sgid",
    "infiniband.grh.dgid",
    "infiniband.grh.tclass",
    "infiniband.grh.paylen",
    "infiniband.grh.nxthdr",
    "infiniband.grh.hoplmt",
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.m",
    "infiniband.bth.padcnt",
    "infiniband.bth.tver",
    "infiniband.bth.p_key",
    "infiniband.reserved",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.psn",
    "infiniband.rdeth.eecnxt",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.atomicacketh.origremdt",
    "infiniband.immdt",
    "infiniband.ieth",
    "infiniband.invariant.crc",
    "macc.opcode",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c0",
    "macc.cbfc.pause_time.c1",
    "macc.cbfc.pause_time.c2",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.cbfc.pause_time.c5",
    "macc.cbfc.pause_time.c6",
    "macc.cbfc.pause_time.c7",
    "macc.pause_time",
];

type Fields = BTreeMap<String, String>;

fn run_tshark(tshark: &str, file: &Path, extra: &[&str]) -> Vec<Fields> {
    let mut cmd = Command::new(tshark);
    cmd.arg("-r").arg(file).args(extra);
    cmd.args(["-T", "fields", "-E", "occurrence=f", "-E", "separator=\t"]);
    for f in TSHARK_FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            line.split('\t')
                .zip(TSHARK_FIELDS)
                .filter(|(v, _)| !v.is_empty())
                .map(|(v, k)| (k.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn run_dissect(file: &Path, extra: &[&str]) -> Vec<serde_json::Map<String, Value>> {
    let out = Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
        .arg("dissect")
        .arg(file)
        .args(["--format", "jsonl"])
        .args(extra)
        .output()
        .expect("run roce-pcap");
    assert!(
        out.status.success(),
        "roce-pcap dissect {} failed: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| match serde_json::from_str(l) {
            Ok(Value::Object(m)) => m,
            other => panic!("not a JSON object: {l}: {other:?}"),
        })
        .collect()
}

/// A number in tshark's notation (decimal, or 0x hex) as decimal text.
fn num(s: &str) -> String {
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse::<u64>(),
    };
    v.unwrap_or_else(|e| panic!("tshark value {s:?} is not a number: {e}"))
        .to_string()
}

/// An FT_BYTES field (hex digits, no prefix) read as a big-endian number.
fn bytes_num(s: &str) -> String {
    let h: String = s.chars().filter(|c| *c != ':').collect();
    u64::from_str_radix(&h, 16)
        .unwrap_or_else(|e| panic!("tshark bytes {s:?}: {e}"))
        .to_string()
}

fn boolean(s: &str) -> String {
    match s {
        "1" | "True" | "true" => "true".into(),
        "0" | "False" | "false" => "false".into(),
        other => panic!("tshark boolean {other:?}"),
    }
}

/// tshark's epoch seconds with up to 9 decimals, as nanoseconds.
fn epoch_ns(s: &str) -> String {
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    let frac = format!("{frac:0<9}");
    (sec.parse::<u64>().unwrap() * 1_000_000_000 + frac[..9].parse::<u64>().unwrap()).to_string()
}

/// The tshark side of every comparable key, normalised; `None` where
/// tshark shows nothing.
fn tshark_view(t: &Fields) -> BTreeMap<&'static str, String> {
    let g = |k: &str| t.get(k).map(String::as_str);
    let mut v = BTreeMap::new();
    let mut put = |key: &'static str, val: Option<String>| {
        if let Some(val) = val {
            v.insert(key, val);
        }
    };
    put("ts_ns", g("frame.time_epoch").map(epoch_ns));
    put("len", g("frame.len").map(num));
    put("caplen", g("frame.cap_len").map(num));
    // An 802.1ad outer tag is not `vlan` in tshark; ours is the outer tag.
    put("vlan_id", g("ieee8021ad.id").or(g("vlan.id")).map(num));
    put(
        "vlan_pcp",
        g("ieee8021ad.priority").or(g("vlan.priority")).map(num),
    );
    let grh = g("infiniband.grh.sgid").is_some();
    put(
        "src",
        g("ip.src")
            .or(g("ipv6.src"))
            .or(g("infiniband.grh.sgid"))
            .map(str::to_string),
    );
    put(
        "dst",
        g("ip.dst")
            .or(g("ipv6.dst"))
            .or(g("infiniband.grh.dgid"))
            .map(str::to_string),
    );
    let tclass = g("infiniband.grh.tclass").map(|t| num(t).parse::<u64>().unwrap());
    put(
        "dscp",
        g("ip.dsfield.dscp")
            .or(g("ipv6.tclass.dscp"))
            .map(num)
            .or_else(|| tclass.filter(|_| grh).map(|t| (t >> 2).to_string())),
    );
    put(
        "ecn",
        g("ip.dsfield.ecn")
            .or(g("ipv6.tclass.ecn"))
            .map(num)
            .or_else(|| tclass.filter(|_| grh).map(|t| (t & 3).to_string())),
    );
    put("sport", g("udp.srcport").map(num));
    put("dport", g("udp.dstport").map(num));
    put("grh_paylen", g("infiniband.grh.paylen").map(num));
    put("grh_nxthdr", g("infiniband.grh.nxthdr").map(num));
    put("grh_hoplmt", g("infiniband.grh.hoplmt").map(num));
    put("opcode", g("infiniband.bth.opcode").map(num));
    put("se", g("infiniband.bth.se").map(boolean));
    put("migreq", g("infiniband.bth.m").map(boolean));
    put("padcnt", g("infiniband.bth.padcnt").map(num));
    put("tver", g("infiniband.bth.tver").map(num));
    put("pkey", g("infiniband.bth.p_key").map(num));
    // tshark 4.0 has no FECN/BECN fields: the first `infiniband.reserved`
    // is BTH byte 4 (FECN, BECN, resv6).
    if g("infiniband.bth.opcode").is_some() {
        let b4 = g("infiniband.reserved").map(|b| bytes_num(b).parse::<u64>().unwrap());
        put("fecn", b4.map(|b| (b & 0x80 != 0).to_string()));
        put("becn", b4.map(|b| (b & 0x40 != 0).to_string()));
    }
    put("dqpn", g("infiniband.bth.destqp").map(num));
    put("ackreq", g("infiniband.bth.a").map(boolean));
    put("psn", g("infiniband.bth.psn").map(num));
    put("rdeth_eecnxt", g("infiniband.rdeth.eecnxt").map(num));
    put("deth_qkey", g("infiniband.deth.q_key").map(num));
    put("deth_srcqp", g("infiniband.deth.srcqp").map(num));
    // AtomicETH VA and R_Key use the RETH field names in tshark.
    let atomic = g("infiniband.atomiceth.swapdt").is_some();
    let (va, rkey) = if atomic {
        ("atomic_va", "atomic_rkey")
    } else {
        ("reth_va", "reth_rkey")
    };
    put(va, g("infiniband.reth.va").map(num));
    put(rkey, g("infiniband.reth.r_key").map(num));
    put("reth_dmalen", g("infiniband.reth.dmalen").map(num));
    put("atomic_swap_add", g("infiniband.atomiceth.swapdt").map(num));
    put("atomic_compare", g("infiniband.atomiceth.cmpdt").map(num));
    put("aeth_syndrome", g("infiniband.aeth.syndrome").map(num));
    put("aeth_msn", g("infiniband.aeth.msn").map(num));
    put(
        "atomicack_orig",
        g("infiniband.atomicacketh.origremdt").map(num),
    );
    put("immdt", g("infiniband.immdt").map(bytes_num));
    put("ieth_rkey", g("infiniband.ieth").map(bytes_num));
    // The ICRC as the big-endian integer of the wire bytes = their hex.
    put(
        "icrc",
        g("infiniband.invariant.crc").map(|c| format!("{:08x}", num(c).parse::<u64>().unwrap())),
    );
    put("macc_opcode", g("macc.opcode").map(num));
    put("enable_vector", g("macc.cbfc.enbv").map(num));
    let times: Vec<String> = (0..8)
        .filter_map(|i| g(&format!("macc.cbfc.pause_time.c{i}")).map(num))
        .collect();
    if times.len() == 8 {
        put("pause_times", Some(format!("[{}]", times.join(","))));
    }
    put("pause_time", g("macc.pause_time").map(num));
    v
}

/// Our side of the same keys, as canonical text.
fn our_view(o: &serde_json::Map<String, Value>) -> BTreeMap<&'static str, String> {
    const KEYS: &[&str] = &[
        "ts_ns",
        "len",
        "caplen",
        "vlan_id",
        "vlan_pcp",
        "src",
        "dst",
        "dscp",
        "ecn",
        "sport",
        "dport",
        "grh_paylen",
        "grh_nxthdr",
        "grh_hoplmt",
        "opcode",
        "se",
        "migreq",
        "padcnt",
        "tver",
        "pkey",
        "fecn",
        "becn",
        "dqpn",
        "ackreq",
        "psn",
        "rdeth_eecnxt",
        "deth_qkey",
        "deth_srcqp",
        "reth_va",
        "reth_rkey",
        "reth_dmalen",
        "atomic_va",
        "atomic_rkey",
        "atomic_swap_add",
        "atomic_compare",
        "aeth_syndrome",
        "aeth_msn",
        "atomicack_orig",
        "immdt",
        "ieth_rkey",
        "icrc",
        "macc_opcode",
        "enable_vector",
        "pause_times",
        "pause_time",
    ];
    KEYS.iter()
        .filter_map(|k| {
            o.get(*k).map(|v| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => format!(
                        "[{}]",
                        a.iter().map(Value::to_string).collect::<Vec<_>>().join(",")
                    ),
                    other => other.to_string(),
                };
                (*k, s)
            })
        })
        .collect()
}

const EXT_KEYS: &[&str] = &[
    "rdeth_eecnxt",
    "deth_qkey",
    "deth_srcqp",
    "reth_va",
    "reth_rkey",
    "reth_dmalen",
    "atomic_va",
    "atomic_rkey",
    "atomic_swap_add",
    "atomic_compare",
    "aeth_syndrome",
    "aeth_msn",
    "atomicack_orig",
    "immdt",
    "ieth_rkey",
];

/// Why tshark 4.0 legitimately lacks or differs on `key` of this frame, if
/// it does. Every entry was checked by hand against the bytes.
fn tshark_gap(ours: &serde_json::Map<String, Value>, key: &str) -> Option<&'static str> {
    let opcode = ours.get("opcode").and_then(Value::as_u64);
    let known_to_tshark = |op: u64| {
        // RC, UC, RD and UD up to SEND_ONLY_WITH_INVALIDATE (0x17); tshark
        // 4.0 has no XRC (0xA0..), no CNP (0x81), no FLUSH (0x1C) and no
        // ATOMIC_WRITE (0x1D), and a reserved opcode is unknown to both.
        op < 0x80 && (op & 0x1F) <= 0x17 && ours["opcode_name"] != "reserved"
    };
    let ext_or_icrc = EXT_KEYS.contains(&key) || key == "icrc";
    let warning = ours.get("warning").and_then(Value::as_str).unwrap_or("");
    if key == "icrc"
        && (warning.contains("PadCnt exceeds the payload")
            || warning.contains("payload or pad bytes on an opcode that carries none"))
    {
        // tshark 4.0 shows the ICRC only when exactly 4 bytes follow the
        // headers it knows plus PadCnt; an ACK with payload or with a
        // PadCnt it cannot have breaks that, the ICRC bytes are still there.
        return Some("tshark 4.0 places no ICRC after an ACK with payload or PadCnt");
    }
    if let Some(op) = opcode {
        if !known_to_tshark(op) && ext_or_icrc {
            return Some("opcode unknown to tshark 4.0: it decodes only the BTH");
        }
        // tshark 4.0 dissects an RD BTH as 20 bytes (its PDML shows
        // `infiniband.bth` size 20), so it reads RDETH, DETH and everything
        // after 8 bytes too late (DETH from the payload); IBA and the
        // kernel put RDETH right after the 12-byte BTH, as we do.
        if (0x40..0x60).contains(&op) && ext_or_icrc {
            return Some("tshark 4.0 misplaces the headers after an RD BTH");
        }
    }
    None
}

/// Keys tshark shows that we do not, and why that is right.
fn ours_missing_ok(ours: &serde_json::Map<String, Value>, key: &str) -> bool {
    // UDP from 4791 to another port is not RoCEv2 (the issue says so; NICs
    // send to 4791 and pick the source port for entropy). tshark matches
    // either port, so it decodes such a datagram as InfiniBand.
    let port = |k| ours.get(k).and_then(Value::as_u64);
    if port("sport") == Some(4791) && port("dport") != Some(4791) {
        return true;
    }
    // TVer != 0: the header layout is unknown, so the codec stops after the
    // BTH (the rest is payload); tshark ignores TVer and decodes on.
    let tver = ours.get("tver").and_then(Value::as_u64).unwrap_or(0);
    if tver != 0 && EXT_KEYS.contains(&key) {
        return true;
    }
    if matches!(ours["kind"].as_str(), Some("malformed" | "truncated")) {
        // Where decoding stopped we print nothing; tshark shows what it can
        // of a cut or contradictory header.
        return true;
    }
    false
}

#[derive(Default)]
struct Tally {
    compared: usize,
    by_key: BTreeMap<&'static str, usize>,
    gaps: BTreeMap<&'static str, usize>,
    problems: Vec<String>,
}

fn compare_file(tshark: &str, file: &Path, tshark_extra: &[&str], tally: &mut Tally) -> usize {
    let theirs = run_tshark(tshark, file, tshark_extra);
    let ours = run_dissect(file, &[]);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(theirs.len(), ours.len(), "{name}: frame counts differ");
    for (i, (t, o)) in theirs.iter().zip(&ours).enumerate() {
        let frame = i + 1;
        assert_eq!(o["frame"], frame, "{name}: frame numbering");
        let tv = tshark_view(t);
        let ov = our_view(o);
        for (key, ours_val) in &ov {
            match tv.get(key) {
                Some(theirs_val) => {
                    if let Some(why) = tshark_gap(o, key) {
                        // Both show it but tshark reads the wrong bytes.
                        *tally.gaps.entry(why).or_default() += 1;
                        continue;
                    }
                    tally.compared += 1;
                    *tally.by_key.entry(key).or_default() += 1;
                    if theirs_val != ours_val {
                        tally.problems.push(format!(
                            "{name} frame {frame}: {key}: ours {ours_val}, tshark {theirs_val}"
                        ));
                    }
                }
                None => match tshark_gap(o, key) {
                    Some(why) => *tally.gaps.entry(why).or_default() += 1,
                    None => tally.problems.push(format!(
                        "{name} frame {frame}: {key} = {ours_val} but tshark shows nothing"
                    )),
                },
            }
        }
        for key in tv.keys() {
            if !ov.contains_key(key) && tshark_gap(o, key).is_none() && !ours_missing_ok(o, key) {
                tally.problems.push(format!(
                    "{name} frame {frame}: tshark shows {key} = {} but we do not",
                    tv[key]
                ));
            }
        }
    }
    ours.len()
}

fn report(tally: &Tally, min_compared: usize) {
    eprintln!("fields compared: {}", tally.compared);
    for (k, n) in &tally.by_key {
        eprintln!("  {k}: {n}");
    }
    for (why, n) in &tally.gaps {
        eprintln!("  not compared ({n}): {why}");
    }
    assert!(
        tally.problems.is_empty(),
        "{} disagreements with tshark:\n{}",
        tally.problems.len(),
        tally.problems.join("\n")
    );
    assert!(
        tally.compared >= min_compared,
        "only {} fields compared (expected at least {min_compared})",
        tally.compared
    );
}

#[test]
fn public_traces_agree_with_tshark() {
    let Some(tshark) = tshark() else { return };
    let mut tally = Tally::default();
    let mut frames = 0;
    // tshark takes UDP source port 69 for TFTP unless told otherwise.
    for (name, extra) in [
        ("roce.pcap", &["--disable-protocol", "tftp"][..]),
        ("InfiniBandPacket.pcap", &[][..]),
        ("dcb_pfc.pcap", &[][..]),
    ] {
        let Some(p) = public(name) else { return };
        frames += compare_file(tshark, &p, extra, &mut tally);
    }
    assert_eq!(frames, 123 + 1 + 5);
    report(&tally, 2400);
    // Every BTH field of all 106 RoCE frames was compared.
    for key in ["opcode", "psn", "dqpn", "icrc", "becn", "migreq"] {
        assert_eq!(tally.by_key[key], 106, "{key}");
    }
}

#[test]
fn generated_corpus_agrees_with_tshark() {
    let Some(tshark) = tshark() else { return };
    let mut tally = Tally::default();
    let mut frames = 0;
    for name in [
        "opcodes.pcap",
        "rc_flow.pcapng",
        "vlan_ipv6_ecn.pcapng",
        "rocev1.pcap",
        "pfc_pause.pcap",
        "malformed.pcap",
        "truncated.pcap",
        "sll.pcap",
        "sll2.pcap",
        "usec.pcap",
    ] {
        frames += compare_file(tshark, &corpus(name), &[], &mut tally);
    }
    assert!(frames > 150, "{frames}");
    report(&tally, 3500);
    for key in [
        "reth_va",
        "aeth_syndrome",
        "deth_qkey",
        "atomic_swap_add",
        "atomicack_orig",
        "immdt",
        "ieth_rkey",
        "grh_paylen",
        "pause_times",
        "pause_time",
        "vlan_id",
        "icrc",
    ] {
        assert!(
            tally.by_key.get(key).copied().unwrap_or(0) > 0,
            "{key} never compared"
        );
    }
}
