//! The book's chapter on roce-pcap quotes what the tool prints on the
//! shipped traces. Every line of its `text` blocks must be a line that
//! today's `roce-pcap` prints for the commands the chapter shows, so a
//! change of output format or finding text cannot leave the book behind.

use std::process::Command;

use roce_testkit::cli::succeed;
use roce_testkit::repo::{book_text_blocks, root};

fn output_lines(args: &[&str]) -> Vec<String> {
    let o = succeed(
        Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
            .current_dir(root())
            .args(args),
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_roce_pcap_chapter_quotes_todays_output() {
    let mut printed = output_lines(&["dissect", "traces/rc_flow.pcapng"]);
    printed.extend(output_lines(&[
        "analyze",
        "traces/analyze_slave0.pcapng",
        "traces/analyze_slave1.pcap.gz",
    ]));
    printed.extend(output_lines(&["analyze", "traces/setup.pcap"]));
    let quoted: Vec<String> = book_text_blocks("roce-pcap.md").concat();
    assert!(quoted.len() >= 6, "the chapter's quotes were not found");
    for line in &quoted {
        assert!(
            printed.contains(line),
            "book/src/roce-pcap.md quotes a line roce-pcap no longer prints:\n{line}"
        );
    }
}
