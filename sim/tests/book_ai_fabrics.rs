//! The AI training fabrics chapter quotes what `rocesim` prints: every
//! `rocesim run` and `rocesim sweep` of its shell blocks is run (into a
//! temporary `--out`), every line of its text blocks must be a line those
//! commands print, and the counters and figures its prose quotes must be
//! the runs' (`summary.json`).
//!
//! The commands take about a minute in a release build and far longer
//! in a debug one: the test runs with `cargo test --release` and is
//! skipped (ignored) in debug builds.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;

use common::*;
use roce_testkit::repo::{book_blocks, book_text_blocks};

const CHAPTER: &str = "ai-fabrics.md";

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "minutes of simulation: run with cargo test --release"
)]
fn the_ai_fabrics_chapter_quotes_todays_rocesim() {
    let dir = tmp("book_ai_fabrics");
    let chapter = std::fs::read_to_string(repo().join("book/src").join(CHAPTER)).unwrap();
    let commands: Vec<String> = book_blocks(CHAPTER, "sh")
        .into_iter()
        .flatten()
        .filter(|l| l.starts_with("rocesim run ") || l.starts_with("rocesim sweep "))
        .collect();
    assert!(commands.len() >= 6, "the chapter's commands were not found");
    let mut printed = Vec::new();
    let mut outs: HashMap<String, PathBuf> = HashMap::new();
    for (i, c) in commands.iter().enumerate() {
        let out = dir.join(format!("c{i}"));
        let mut args: Vec<&str> = c.split_whitespace().skip(1).collect();
        let out_s = out.display().to_string();
        args.extend(["--out", &out_s]);
        let o = bin().current_dir(repo()).args(&args).output().unwrap();
        assert!(
            o.status.success(),
            "{c}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        printed.extend(
            String::from_utf8(o.stdout)
                .unwrap()
                .lines()
                .map(|l| l.trim_end().to_string()),
        );
        outs.insert(c.clone(), out);
    }
    let quotes: Vec<String> = book_text_blocks(CHAPTER).into_iter().flatten().collect();
    assert!(quotes.len() >= 20, "the chapter's quotes were not found");
    for line in quotes {
        assert!(
            printed.contains(&line.trim_end().to_string()),
            "book/src/{CHAPTER} quotes a line rocesim no longer prints:\n{line}"
        );
    }

    // The all-reduce: no byte on a spine, no pause, no mark.
    let s = summary_at(&outs["rocesim run scenarios/nccl_allreduce.toml"]);
    assert_eq!(counter_sum(&s, "tx_bytes_phy", |p| p.contains("spine")), 0);
    assert_eq!(counter_sum(&s, "tx_prio4_pause", |_| true), 0);
    assert_eq!(counter_sum(&s, "tx_prio4_ecn_marked", |_| true), 0);

    // The alltoall's counters, as the prose quotes them.
    let s = summary_at(&outs["rocesim run scenarios/nccl_alltoall.toml"]);
    let marks = counter_sum(&s, "tx_prio4_ecn_marked", |_| true);
    let uplinks = counter_sum(&s, "tx_prio4_ecn_marked", |p| {
        p.contains("_leaf") && p.contains(".u")
    });
    assert_eq!(marks, uplinks);
    let cnps = counter_sum(&s, "np_cnp_sent", |_| true);
    assert_eq!(counter_sum(&s, "rp_cnp_handled", |_| true), cnps);
    let pauses = counter_sum(&s, "tx_prio4_pause", |_| true);
    let from_leaves = counter_sum(&s, "tx_prio4_pause", |p| {
        p.contains("_leaf") && p.contains(".p")
    });
    assert_eq!(pauses, from_leaves);
    assert_eq!(counter_sum(&s, "tx_prio4_discards", |_| true), 0);
    for quoted in [
        format!("{marks} packets ECN-marked"),
        format!("{cnps} CNPs sent"),
        format!("{pauses} PFC pauses"),
    ] {
        assert!(chapter.contains(&quoted), "the chapter lacks `{quoted}`");
    }
    let s = summary_at(
        &outs["rocesim run scenarios/nccl_alltoall.toml --set topology.oversubscription=1"],
    );
    assert_eq!(counter_sum(&s, "tx_prio4_pause", |_| true), 0);
    assert_eq!(counter_sum(&s, "np_cnp_sent", |_| true), 0);

    // The seed case's failure time: 8 attempts of 4.096 us x 2^20.
    let s = summary_at(&outs["rocesim run scenarios/nccl_retry_exceeded.toml"]);
    let q = s["qps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["status_code"] == 12 && q["role"] == "client")
        .expect("a client QP ended in status 12");
    let secs = (q["finished_at_ns"].as_f64().unwrap() - q["first_tx_ns"].as_f64().unwrap()) / 1e9;
    assert!((secs - 34.36).abs() < 0.01, "{secs}");
    assert!(chapter.contains("34.4 s"));
}
