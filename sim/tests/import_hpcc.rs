//! `rocesim import-hpcc` beyond the anchors' own configs: each setting of
//! the reference's config that changes its run is either reproduced in the
//! scenario or refused, naming the file, line and setting, unless
//! `--approximate`. The configs are the anchors' 2:1 and fat-tree ones with
//! one line changed; the numbers checked are the ones the reference prints
//! for them (`maxRtt=4160 maxBdp=52000`, `maxRtt=12240 maxBdp=153000`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

/// The anchors' config `name` with its input paths made absolute and each
/// `(KEY, line)` replacing that key's line, written as `dir/c.cfg`.
fn config(dir: &Path, name: &str, edits: &[(&str, &str)]) -> Option<PathBuf> {
    let anchors = roce_testkit::ci::shared("anchors/hpcc-ns3")?;
    let text = std::fs::read_to_string(anchors.join(name)).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let key = line.split_whitespace().next().unwrap_or("");
        let line = match key {
            "TOPOLOGY_FILE" | "FLOW_FILE" => {
                let base = line.rsplit('/').next().unwrap();
                format!("{key} {}", anchors.join(base).display())
            }
            _ => edits
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(line.to_string(), |(_, l)| l.to_string()),
        };
        out.push_str(&line);
        out.push('\n');
    }
    let path = dir.join("c.cfg");
    std::fs::write(&path, out).unwrap();
    Some(path)
}

fn import(cfg: &Path, extra: &[&str]) -> Output {
    let out = cfg.with_file_name("s.toml");
    let mut c = bin();
    c.arg("import-hpcc").arg(cfg).arg("--out").arg(&out);
    c.args(extra);
    c.output().unwrap()
}

fn imported(cfg: &Path) -> String {
    let o = import(cfg, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = cfg.with_file_name("s.toml");
    let c = bin().arg("check").arg(&out).output().unwrap();
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    std::fs::read_to_string(out).unwrap()
}

fn line_of(cfg: &Path, key: &str) -> usize {
    std::fs::read_to_string(cfg)
        .unwrap()
        .lines()
        .position(|l| l.split_whitespace().next() == Some(key))
        .unwrap()
        + 1
}

#[test]
fn the_window_is_the_references_largest_bandwidth_delay_product() {
    let dir = tmp("import_window");
    let win = [("HAS_WIN", "HAS_WIN 1"), ("GLOBAL_T", "GLOBAL_T 1")];
    let Some(cfg) = config(&dir, "e3_dcqcn_2to1_notrace.cfg", &win) else {
        return;
    };
    let text = imported(&cfg);
    assert!(
        text.contains(
            "\n  window_bytes = 52000      # HAS_WIN 1, GLOBAL_T 1: maxBdp (maxRtt 4160 ns)"
        ),
        "{text}"
    );
    assert!(!text.contains("window_follows_rate"), "{text}");
    let vwin = [win[0], win[1], ("VAR_WIN", "VAR_WIN 1")];
    let cfg = config(&dir, "config_fat_ws30_10ms_dcqcn.txt", &vwin).unwrap();
    let text = imported(&cfg);
    assert!(
        text.contains("\n  window_bytes = 153000 ")
            && text.contains("(maxRtt 12240 ns)")
            && text.contains("\n  window_follows_rate = true "),
        "{text}"
    );
    // GLOBAL_T 0 (the anchors' star configs say so): each flow's own.
    let cfg = config(&dir, "e3_dcqcn_2to1_notrace.cfg", &[win[0]]).unwrap();
    let text = imported(&cfg);
    assert!(
        text.contains("\n  window_bytes = \"path\"     # HAS_WIN 1, GLOBAL_T 0: "),
        "{text}"
    );
    // HAS_WIN 0, as the anchors run: no window.
    let cfg = config(&dir, "e3_dcqcn_2to1_notrace.cfg", &[]).unwrap();
    assert!(!imported(&cfg).contains("window_bytes"));
}

#[test]
fn ack_priority_and_ecn_switches_are_reproduced() {
    let dir = tmp("import_ack_ecn");
    let Some(cfg) = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[("ACK_HIGH_PRIO", "ACK_HIGH_PRIO 0")],
    ) else {
        return;
    };
    let text = imported(&cfg);
    assert!(text.contains("\n  ack_queue = 3 "), "{text}");
    assert!(text.contains("\n  [topology.switch.ecn]"), "{text}");
    let cfg = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[("ENABLE_QCN", "ENABLE_QCN 0")],
    )
    .unwrap();
    let text = imported(&cfg);
    assert!(!text.contains("\n  [topology.switch.ecn]"), "{text}");
    assert!(
        text.contains("ENABLE_QCN 0: the switches mark nothing"),
        "{text}"
    );
    assert!(!text.contains("ack_queue"), "{text}");
}

/// The topology file's error rate and ERROR_RATE_PER_LINK (for the links
/// the file gives none) become link losses, each direction, and RC
/// recovers what they lose: a 1 MB flow through a 1 % and a 2 % link.
#[test]
fn error_rates_become_link_losses() {
    let dir = tmp("import_loss");
    std::fs::write(
        dir.join("topo.txt"),
        "3 1 2\n0\n0 1 100Gbps 1us 0.01\n0 2 100Gbps 1us 0\n",
    )
    .unwrap();
    std::fs::write(dir.join("flows.txt"), "1\n1 2 3 100 1000000 2\n").unwrap();
    let Some(cfg) = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[
            ("ERROR_RATE_PER_LINK", "ERROR_RATE_PER_LINK 0.02"),
            ("SIMULATOR_STOP_TIME", "SIMULATOR_STOP_TIME 2.1"),
        ],
    ) else {
        return;
    };
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .lines()
        .map(|l| match l.split_whitespace().next() {
            Some("TOPOLOGY_FILE") => "TOPOLOGY_FILE topo.txt".to_string(),
            Some("FLOW_FILE") => "FLOW_FILE flows.txt".to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&cfg, text).unwrap();
    let scenario = imported(&cfg);
    assert!(scenario.contains("\nlink_loss = 0.02 "), "{scenario}");
    let s = run_ok(&dir.join("s.toml"), &dir.join("run"), &[]);
    let loss = |name: &str| {
        let p = port(&s, name);
        let lost = p["drops_loss"].as_u64().unwrap() as f64;
        let seen = p["rx_packets"].as_u64().unwrap() as f64 + lost;
        lost / seen
    };
    // ~1000 data frames one way, as many ACKs the other: the file's 1 %
    // on n1's link, ERROR_RATE_PER_LINK's 2 % on n2's.
    for (p, want) in [
        ("sw0.p1", 0.01),
        ("n1.eth0", 0.01),
        ("sw0.p2", 0.02),
        ("n2.eth0", 0.02),
    ] {
        let got = loss(p);
        assert!(
            got > want * 0.3 && got < want * 2.5,
            "{p}: lost {got:.4} of its arrivals, set {want}"
        );
    }
    let c: &Value = clients(&s)[0];
    assert_eq!(c["status"], "success");
    assert!(c["retransmitted_packets"].as_u64().unwrap() > 0);
}

#[test]
fn settings_not_reproduced_are_refused_naming_file_and_line() {
    let dir = tmp("import_refused");
    let Some(cfg) = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[
            ("L2_BACK_TO_ZERO", "L2_BACK_TO_ZERO 1"),
            ("CC_MODE", "CC_MODE 3"),
        ],
    ) else {
        return;
    };
    let o = import(&cfg, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let c = cfg.display();
    for want in [
        "2 settings rocesim does not reproduce".to_string(),
        format!("{c}:{}: CC_MODE 3 (HPCC): ", line_of(&cfg, "CC_MODE")),
        format!(
            "{c}:{}: L2_BACK_TO_ZERO 1: a NACK sends the QP back",
            line_of(&cfg, "L2_BACK_TO_ZERO")
        ),
        "--approximate".to_string(),
    ] {
        assert!(err.contains(&want), "{want:?} not in {err}");
    }
    assert!(!cfg.with_file_name("s.toml").exists(), "nothing written");

    // --approximate: written, each named in its comments and on stderr.
    let o = import(&cfg, &["--approximate"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("rocesim: warning: ").count(), 2, "{err}");
    let text = std::fs::read_to_string(cfg.with_file_name("s.toml")).unwrap();
    assert!(text.contains("#   L2_BACK_TO_ZERO 1 (line "), "{text}");
    assert!(
        text.contains("#     here go-back-N from the NAK's PSN, as RC does."),
        "{text}"
    );

    // An unpaced NIC.
    let cfg = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[("RATE_BOUND", "RATE_BOUND 0")],
    )
    .unwrap();
    let err = String::from_utf8_lossy(&import(&cfg, &[]).stderr).into_owned();
    assert!(
        err.contains(&format!("{}: RATE_BOUND 0: ", line_of(&cfg, "RATE_BOUND"))),
        "{err}"
    );
}

/// LINK_DOWN t a b: the link between nodes a and b fails at 2 s + t us and
/// every route is recomputed (`reroute = true`), as TakeDownLink does; a
/// LINK_DOWN naming two nodes with no link between them is refused at its
/// line (the reference would take nothing down).
#[test]
fn a_link_down_becomes_a_rerouting_link_event() {
    let dir = tmp("import_link_down");
    let Some(cfg) = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[("LINK_DOWN", "LINK_DOWN 1000 0 1")],
    ) else {
        return;
    };
    let text = imported(&cfg);
    assert!(
        text.contains(
            "\nreroute = true            # LINK_DOWN: every route is recomputed when the link fails\n"
        ) && text.contains(
            "\n  between = [\"sw0\", \"n1\"]\n  at = \"2001000000000ps\"\n  state = \"down\"\n"
        ),
        "{text}"
    );
    let cfg = config(
        &dir,
        "e3_dcqcn_2to1_notrace.cfg",
        &[("LINK_DOWN", "LINK_DOWN 1000 1 2")],
    )
    .unwrap();
    let o = import(&cfg, &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}:{}: LINK_DOWN 1000 1 2: ",
            cfg.display(),
            line_of(&cfg, "LINK_DOWN")
        )) && err.contains("has no link between nodes 1 and 2"),
        "{err}"
    );
}

/// A host cabled to two switches (the reference's `ali_32host_10rack.txt`
/// puts every host on two ToRs): the reference spreads its QPs over both
/// NICs, rocesim's hosts use their first link, so the import is refused at
/// the topology file's line of the host's second link.
#[test]
fn a_host_on_two_switches_is_refused_at_its_second_link() {
    let dir = tmp("import_multi_homed");
    let Some(cfg) = config(&dir, "e3_dcqcn_2to1_notrace.cfg", &[]) else {
        return;
    };
    // Hosts 0 and 1, switches 2 and 3; host 0 on both (lines 3 and 5).
    let topo = dir.join("dual.txt");
    std::fs::write(
        &topo,
        "4 2 4\n2 3\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n\
         1 3 100Gbps 0.001ms 0\n",
    )
    .unwrap();
    let flows = dir.join("flows.txt");
    std::fs::write(&flows, "1\n0 1 3 100 1000000 2\n").unwrap();
    let paths = [
        "--topology",
        topo.to_str().unwrap(),
        "--flows",
        flows.to_str().unwrap(),
    ];
    let o = import(&cfg, &paths);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let want = format!(
        "{}:5: host 0 on 2 links (lines 3, 5) (and 1 other host): ",
        topo.display()
    );
    assert!(err.contains(&want), "{want:?} not in {err}");
    assert!(!cfg.with_file_name("s.toml").exists(), "nothing written");

    let with: Vec<&str> = paths.iter().copied().chain(["--approximate"]).collect();
    let o = import(&cfg, &with);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("rocesim: warning: ").count(), 1, "{err}");
    let text = std::fs::read_to_string(cfg.with_file_name("s.toml")).unwrap();
    assert!(
        text.contains(&format!("(and 1 other host) ({}, line 5)", topo.display())),
        "{text}"
    );
}
