//! The book's chapter on roce-pcap quotes what the tool prints on the
//! shipped traces. Every line of its `text` blocks must be a line that
//! today's `roce-pcap` prints for the commands the chapter shows, so a
//! change of output format or finding text cannot leave the book behind.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn output_lines(args: &[&str]) -> Vec<String> {
    let o = Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "roce-pcap {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The lines of every ```text block of a chapter.
fn quoted_lines(chapter: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join("book/src").join(chapter)).unwrap();
    let mut quoted = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = line == "```text";
            continue;
        }
        if inside && !line.trim().is_empty() {
            quoted.push(line.to_string());
        }
    }
    quoted
}

#[test]
fn the_roce_pcap_chapter_quotes_todays_output() {
    let mut printed = output_lines(&["dissect", "traces/rc_flow.pcapng"]);
    printed.extend(output_lines(&[
        "analyze",
        "traces/analyze_slave0.pcapng",
        "traces/analyze_slave1.pcap.gz",
    ]));
    let quoted = quoted_lines("roce-pcap.md");
    assert!(quoted.len() >= 6, "the chapter's quotes were not found");
    for line in &quoted {
        assert!(
            printed.contains(line),
            "book/src/roce-pcap.md quotes a line roce-pcap no longer prints:\n{line}"
        );
    }
}
