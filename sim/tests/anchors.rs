//! The hpcc scenarios are the ns-3 peer's 2:1 and 16:1 experiments
//! (`../shared/anchors/hpcc-ns3`): the same flows on the same star, the
//! reference's NIC, MMU, ECN and DCQCN. Each flow's slowdown (FCT over its
//! own simulator's ideal) is within 10 % of the reference's, flows matched
//! in completion order; like the reference (its PFC log is empty for both)
//! the switch pauses nobody, and the notification point's CNPs all reach
//! the reaction points. Needs `../shared` (ROCESIM_CI rule).

mod common;

use common::*;
use std::path::Path;

fn sum_counter(s: &serde_json::Value, suffix: &str) -> u64 {
    s["counters"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|c| c.as_object().unwrap().iter())
        .filter(|(k, _)| k.ends_with(suffix))
        .map(|(_, v)| v.as_u64().unwrap())
        .sum()
}

fn check(name: &str, fct: &str) {
    let Some(dir) = ns3_anchors() else { return };
    let (out, s) = run_scenario(name, &format!("anchor_{name}"), &[]);
    let errs = slowdowns_match(name, &out.join("fct.txt"), &dir.join(fct));
    let worst = errs[errs.len() - 1];
    eprintln!("{name}: largest slowdown difference {:.1} %", worst * 100.0);
    // The reference logged no PFC frame in either run; DCQCN keeps the
    // queue below the PFC threshold here too.
    assert_eq!(sum_counter(&s, "_pause"), 0, "{name}: pause frames");
    assert_eq!(sum_counter(&s, "_discards"), 0, "{name}: drops");
    // Marks became CNPs (one per marked packet: min_time_between_cnps 0)
    // and every CNP reached its reaction point.
    let (sent, handled) = (
        sum_counter(&s, "np_cnp_sent"),
        sum_counter(&s, "rp_cnp_handled"),
    );
    assert!(
        sent > 0 && sent == handled,
        "{name}: {sent} CNPs sent, {handled} handled"
    );
    assert_eq!(sent, sum_counter(&s, "np_ecn_marked_roce_packets"));
}

#[test]
fn hpcc_2to1_slowdowns_match_the_reference() {
    check("hpcc_2to1", "e3_dcqcn_2to1_notrace_fct.txt");
}

#[test]
fn hpcc_16to1_slowdowns_match_the_reference() {
    check("hpcc_16to1", "e4_dcqcn_16to1_notrace_fct.txt");
}

/// The shipped scenario below its learners' comments is what
/// `rocesim import-hpcc` writes for the reference's config today (file
/// paths compared by where they lead).
fn imported_as_shipped(name: &str, cfg: &str) {
    let Some(dir) = ns3_anchors() else { return };
    let out = tmp(&format!("import_{name}")).join(format!("{name}.toml"));
    let o = bin()
        .arg("import-hpcc")
        .arg(dir.join(cfg))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let body = |path: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        let base = path.parent().unwrap();
        let at = text.find("\nname = ").expect("a name line");
        text[at..]
            .lines()
            .map(|l| match l.split_once(" = ") {
                Some((k @ ("file" | "flows"), v)) => {
                    let f = base.join(v.trim_matches('"')).canonicalize().unwrap();
                    format!("{k} = {}", f.display())
                }
                _ => l.to_string(),
            })
            .collect()
    };
    assert_eq!(body(&scenario(name)), body(&out), "{name}");
}

#[test]
fn the_hpcc_scenarios_are_what_import_hpcc_writes() {
    imported_as_shipped("hpcc_2to1", "e3_dcqcn_2to1_notrace.cfg");
    imported_as_shipped("hpcc_16to1", "e4_dcqcn_16to1_notrace.cfg");
    imported_as_shipped("fat_tree_websearch", "config_fat_ws30_10ms_dcqcn.txt");
}
