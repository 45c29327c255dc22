//! The chapter "Reading your own captures beside a simulation"
//! (`book/src/beside.md`) shows only what its commands produce:
//!
//! * every line of its ```` ```sh ```` blocks is run, in order, from a
//!   directory laid out like the repository root (`scenarios/`, and
//!   `../shared` beside it), with the workspace's `rocesim` and `roce-pcap`
//!   first on `PATH`, and must exit 0 (```` ```shell ```` blocks are for a
//!   real host and are not run);
//! * every line of its ```` ```text ```` blocks is a line one of those
//!   commands printed, or a line of a file they wrote that a command
//!   printed (`grep`);
//! * its figures (`book/src/beside/*.svg`) are the files `compare --out
//!   cmp/` drew, byte for byte. `ROCE_BOOK_BLESS=1` copies them over after
//!   a deliberate change of the pictures.
//!
//! The screenshot `beside/report.png` is Chromium's rendering of
//! `cmp/report.html`, which depends on the machine's fonts; the HTML
//! itself is checked in a browser by `html_report.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_testkit::ci::public_trace;
use roce_testkit::cli::{TempDir, stderr};
use roce_testkit::repo::{book_blocks, root};

const BIN: &str = env!("CARGO_BIN_EXE_roce-pcap");

fn symlink(target: &Path, link: &Path) {
    std::os::unix::fs::symlink(target, link)
        .unwrap_or_else(|e| panic!("{} -> {}: {e}", link.display(), target.display()));
}

#[test]
fn the_chapter_shows_what_its_commands_produce() {
    let Some(real) = public_trace("roce.pcap") else {
        return;
    };
    // .../shared/traces/public/roce.pcap
    let shared = real.ancestors().nth(3).unwrap().to_path_buf();
    let top = TempDir::new("book-beside");
    let repo = top.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    symlink(&root().join("scenarios"), &repo.join("scenarios"));
    symlink(&shared, &top.join("shared"));
    let bins: Vec<PathBuf> = [Path::new(BIN), roce_testkit::rocesim::rocesim()]
        .iter()
        .map(|b| b.parent().unwrap().to_path_buf())
        .collect();
    let path = std::env::join_paths(bins.into_iter().chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();

    let mut printed: Vec<String> = Vec::new();
    let commands: Vec<String> = book_blocks("beside.md", "sh").concat();
    assert!(
        commands.len() >= 10,
        "the chapter's commands were not found"
    );
    for cmd in &commands {
        let o = Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(&repo)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(o.status.success(), "`{cmd}` failed: {}", stderr(&o));
        printed.extend(
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_string),
        );
    }
    let quoted: Vec<String> = book_blocks("beside.md", "text").concat();
    assert!(quoted.len() >= 15, "the chapter's quotes were not found");
    for line in &quoted {
        assert!(
            printed.contains(line),
            "book/src/beside.md quotes a line its commands do not print:\n{line}"
        );
    }

    let bless = std::env::var_os("ROCE_BOOK_BLESS").is_some();
    for figure in ["compare_goodput.svg", "compare_slaves.svg"] {
        let drawn = std::fs::read(repo.join("cmp").join(figure)).unwrap();
        let book = root().join("book/src/beside").join(figure);
        if bless {
            std::fs::write(&book, &drawn).unwrap();
        }
        assert!(
            std::fs::read(&book).unwrap() == drawn,
            "{} is not what `compare --out cmp/` draws today (ROCE_BOOK_BLESS=1 to update it)",
            book.display()
        );
        let md = std::fs::read_to_string(root().join("book/src/beside.md")).unwrap();
        assert!(
            md.contains(&format!("(beside/{figure})")),
            "{figure} is not in the chapter"
        );
    }
    assert!(repo.join("cmp/report.html").is_file());
}
