//! The reference's other congestion controls on its 2:1 and 16:1 stars
//! (`../shared/anchors/hpcc-ns3/cc`: the configs its `run.py` writes and
//! ns-3's FCT files), imported with `rocesim import-hpcc` as they are and
//! run: each flow's slowdown (FCT over its own simulator's ideal) is within
//! 10 % of the reference's, flows matched in completion order, as the DCQCN
//! stars are in `anchors.rs`. Needs `../shared` (ROCESIM_CI rule).

mod common;

use common::*;

fn sum_counter(s: &serde_json::Value, name: &str) -> u64 {
    s["counters"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|c| c[name].as_u64())
        .sum()
}

/// Imports `cc/config_flow_{star}_{cc}.txt` (its `mix/` inputs laid out
/// beside it, as the reference ran it), runs it and compares with
/// `cc/fct_topology_flow_{star}_{cc}.txt`. Returns the summary.
fn check(star: &str, cc: &str) -> Option<serde_json::Value> {
    let dir = ns3_anchors()?;
    let name = format!("{cc}_{star}");
    let work = tmp(&format!("cc_anchor_{name}"));
    std::fs::create_dir_all(work.join("mix")).unwrap();
    for f in ["topology.txt", &format!("flow_{star}.txt")] {
        std::fs::copy(dir.join(f), work.join("mix").join(f)).unwrap();
    }
    let cfg = work.join(format!("config_flow_{star}_{cc}.txt"));
    std::fs::copy(dir.join("cc").join(cfg.file_name().unwrap()), &cfg).unwrap();
    let toml = work.join(format!("{name}.toml"));
    let o = bin()
        .arg("import-hpcc")
        .arg(&cfg)
        .arg("--out")
        .arg(&toml)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = work.join("run");
    let s = run_ok(&toml, &out, &[]);
    let want = dir.join(format!("cc/fct_topology_flow_{star}_{cc}.txt"));
    let errs = slowdowns_match(&name, &out.join("fct.txt"), &want);
    eprintln!(
        "{name}: slowdown against the reference's: largest difference {:.1} %, median {:.1} %",
        errs[errs.len() - 1] * 100.0,
        errs[errs.len() / 2] * 100.0
    );
    Some(s)
}

/// DCTCP (`CC_MODE 8`): a cut by alpha/2 at most once per window on the
/// echo of a mark, alpha from the marked fraction per window, 615 Mb/s
/// more per unmarked window; Kmin = Kmax = 300 KB, a window of the largest
/// bandwidth-delay product following the rate.
#[test]
fn dctcp_stars_match_the_reference() {
    let Some(s) = check("2to1", "dctcp") else {
        return;
    };
    // Two windows of 52,000 bytes never fill 300 KB: nothing is marked,
    // and the flows share the link by their windows alone.
    assert_eq!(sum_counter(&s, "np_ecn_marked_roce_packets"), 0);
    let s = check("16to1", "dctcp").unwrap();
    // Sixteen windows do: every mark is echoed on its ACK (no CNP frame)
    // and every echo reaches DCTCP.
    let marked = sum_counter(&s, "np_ecn_marked_roce_packets");
    let (sent, handled) = (
        sum_counter(&s, "np_cnp_sent"),
        sum_counter(&s, "rp_cnp_handled"),
    );
    assert!(marked > 1000, "{marked} marks");
    assert_eq!((sent, handled), (marked, marked));
}

/// TIMELY (`CC_MODE 7`): a rate update per window of data from the RTT of
/// the data packet its ACK answers (the ACK echoes the packet's send time),
/// no window; its data packets carry 8 bytes more (56 beyond the payload),
/// so rocesim's ideal is 0.8 % longer than the reference's 48-byte one.
#[test]
fn timely_stars_match_the_reference() {
    for star in ["2to1", "16to1"] {
        let Some(s) = check(star, "timely") else {
            return;
        };
        // TIMELY reads no echo: marks are echoed on ACKs and left unread.
        assert_eq!(sum_counter(&s, "rp_cnp_handled"), 0, "{star}");
        assert_eq!(sum_counter(&s, "rp_cnp_ignored"), 0, "{star}");
    }
}

/// HPCC (`CC_MODE 3`): the rate from the utilisation each switch's
/// telemetry reports on the data packet, echoed on its ACK; U_TARGET 0.95,
/// a window of the largest bandwidth-delay product following the rate,
/// the reference's 42-byte INT header billed on every data packet and ACK
/// and left out of the ideal, as its `qp_finish` leaves it out.
#[test]
fn hpcc_stars_match_the_reference() {
    for star in ["2to1", "16to1"] {
        let Some(s) = check(star, "hp95") else {
            return;
        };
        // HPCC reads no ECN echo: the marks the switch still makes are
        // echoed and left unread.
        assert_eq!(sum_counter(&s, "rp_cnp_handled"), 0, "{star}");
    }
}
