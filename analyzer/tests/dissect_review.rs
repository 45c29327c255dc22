//! `dissect` cases found in review.

use std::process::Command;

use roce_testkit::cli::succeed;
use roce_testkit::repo::trace;

/// The text line of a reserved opcode names the byte (the 11 reserved
/// opcodes of opcodes.pcap, frames 86..96), as the JSON `opcode` does.
#[test]
fn text_names_reserved_opcodes_by_their_byte() {
    let out = succeed(
        Command::new(env!("CARGO_BIN_EXE_roce-pcap"))
            .arg("dissect")
            .arg(trace("opcodes.pcap")),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let reserved: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_once(" reserved(").map(|(_, r)| &r[..4]))
        .collect();
    assert_eq!(
        reserved,
        [
            "0x15", "0x18", "0x1e", "0x1f", "0x2c", "0x56", "0x66", "0x80", "0x82", "0xc0", "0xff"
        ]
    );
}
