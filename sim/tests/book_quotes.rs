//! The book quotes what `rocesim` prints for the shipped scenarios (the
//! rocesim chapter and the case studies). Every line of those quotes must
//! be a line today's `rocesim` prints for the commands shown, and the
//! failover case's figures must be what the runs give, so a change of
//! model, counters or table layout cannot leave the book behind.
//!
//! The case studies also quote `roce-pcap analyze` on the runs' captures;
//! those lines are checked against the same report made by the library,
//! spaces collapsed (the test's paths are longer than `runs/...`, which
//! widens the columns). Not checked here: the sweep table (320 runs, too
//! slow for a debug test); `analyzer/tests/book_quotes.rs` checks the
//! roce-pcap chapter.

mod common;

use common::*;
use roce_testkit::repo::book_text_blocks;

/// stdout and stderr lines of one `rocesim` invocation, with the wall time
/// (the only figure that varies) written as the book writes it.
fn lines(args: &[&str]) -> Vec<String> {
    let o = bin().current_dir(repo()).args(args).output().unwrap();
    let mut text = String::from_utf8(o.stdout).unwrap();
    text.push_str(&String::from_utf8(o.stderr).unwrap());
    text.lines()
        .map(|l| match (l.find(" events, "), l.rfind(" s wall")) {
            (Some(a), Some(b)) if a < b => format!("{}... s wall", &l[..a + 9]),
            _ => l.to_string(),
        })
        .collect()
}

/// Whether a quoted block is `roce-pcap analyze` output.
fn from_roce_pcap(block: &[String]) -> bool {
    block.iter().any(|l| {
        l.starts_with("LAG BALANCE") || l.starts_with("  error ") || l.starts_with("  warning ")
    })
}

/// Lines of the ```text blocks of a chapter, leaving out the sweep table,
/// roce-pcap's output, shell prompts and the file a `$ cat` shows.
fn quoted(chapter: &str) -> (Vec<String>, Vec<String>) {
    let mut cat = Vec::new();
    let mut keep = Vec::new();
    for b in book_text_blocks(chapter) {
        if from_roce_pcap(&b) || b[0].starts_with("qps ") {
            continue;
        }
        let mut in_cat = false;
        for l in b {
            if l.starts_with("$ ") {
                in_cat = l.starts_with("$ cat ");
            } else if in_cat {
                cat.push(l);
            } else {
                keep.push(l);
            }
        }
    }
    (keep, cat)
}

#[test]
fn the_book_quotes_todays_rocesim_output() {
    let dir = tmp("book_quotes");
    let out = |name: &str| dir.join(name).display().to_string();
    let mut printed = Vec::new();
    for (name, sets) in [
        ("lag_hash", vec![]),
        (
            "lag_hash",
            vec!["host.hostA.bond.bond0.xmit_hash_policy=layer2+3"],
        ),
        ("retry_exceeded", vec![]),
        (
            "retry_exceeded",
            vec!["host.hostB.arp_ignore=1", "host.hostB.arp_announce=2"],
        ),
        ("failover", vec![]),
    ] {
        let o = out(&format!("{name}{}", sets.len()));
        let mut args = vec!["run".to_string(), format!("scenarios/{name}.toml")];
        for s in sets {
            args.extend(["--set".to_string(), s.to_string()]);
        }
        args.extend(["--out".to_string(), o]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        printed.extend(lines(&args));
    }
    printed.extend(lines(&["check", "scenarios/lag_hash.toml"]));
    // The large-fabric section: the estimate, and the refusal it leads to.
    let k16 = ["sim/benches/fat_tree_scale.toml", "--set", "topology.k=16"];
    printed.extend(lines(&[&["check"][..], &k16].concat()));
    let refused = bin()
        .current_dir(repo())
        .args([&["run"][..], &k16, &["--out", &out("refused")]].concat())
        .env("ROCESIM_MEM_AVAILABLE", "200000000")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    printed.extend(
        String::from_utf8_lossy(&refused.stderr)
            .lines()
            .map(str::to_string),
    );

    let (rocesim_md, cat) = quoted("rocesim.md");
    // The misspelt scenario the chapter shows, checked as `bad.toml`.
    assert!(!cat.is_empty(), "the chapter's bad.toml was not found");
    std::fs::write(dir.join("bad.toml"), cat.join("\n") + "\n").unwrap();
    let o = bin()
        .current_dir(&dir)
        .args(["check", "bad.toml"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    printed.extend(
        String::from_utf8(o.stderr)
            .unwrap()
            .lines()
            .map(str::to_string),
    );

    let (cases_md, _) = quoted("cases.md");
    assert!(
        rocesim_md.len() > 30 && cases_md.len() > 8,
        "quotes not found"
    );
    for (chapter, quotes) in [("rocesim.md", rocesim_md), ("cases.md", cases_md)] {
        for line in quotes {
            assert!(
                printed.contains(&line),
                "book/src/{chapter} quotes a line rocesim no longer prints:\n{line}"
            );
        }
    }
}

/// The failover case study: a faster MII monitor alone changes nothing,
/// a shorter ACK timeout makes it matter; the figures are the runs'.
#[test]
fn the_failover_case_figures_are_the_runs() {
    let dir = tmp("book_failover");
    let cases = std::fs::read_to_string(repo().join("book/src/cases.md")).unwrap();
    for (sets, goodput) in [
        (vec![], "77.93"),
        (vec!["host.hostA.bond.bond0.miimon=1ms"], "77.93"),
        (vec!["workload.0.timeout=10"], "82.97"),
        (
            vec!["workload.0.timeout=10", "host.hostA.bond.bond0.miimon=1ms"],
            "93.02",
        ),
    ] {
        let out = dir.join(format!("f{}", sets.join("_").replace(['.', '='], "")));
        let o = run(&scenario("failover"), &out, &sets);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8(o.stdout).unwrap();
        let want = format!("aggregate goodput: {goodput} Gb/s");
        assert!(stdout.contains(&want), "{sets:?}: {stdout}");
        assert!(
            cases.contains(&format!("{goodput} Gb/s")),
            "cases.md lacks {goodput}"
        );
    }
}

fn squeeze(line: &str) -> String {
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lines of the case studies' ```text blocks that `roce-pcap` prints.
fn quoted_roce_pcap(chapter: &str) -> Vec<String> {
    book_text_blocks(chapter)
        .into_iter()
        .filter(|b| from_roce_pcap(b))
        .flatten()
        .filter(|l| l.trim() != "...")
        .collect()
}

#[test]
fn the_case_studies_quote_todays_roce_pcap_analyze() {
    use roce_pcap::analyze::{AnalyzeOptions, analyze_files};
    use roce_pcap::report::Format;
    let dir = tmp("book_quotes_analyze");
    let mut printed = Vec::new();
    for (name, sets, files) in [
        ("retry_exceeded", vec![], vec!["hostA.eth0.pcap"]),
        (
            "lag_hash",
            vec!["host.hostA.bond.bond0.xmit_hash_policy=layer2+3"],
            vec!["hostA.eth0.pcap", "hostA.eth1.pcap"],
        ),
    ] {
        let out = dir.join("runs").join(name);
        run_ok(&scenario(name), &out, &sets);
        let paths: Vec<_> = files.iter().map(|f| out.join(f)).collect();
        let a = analyze_files(&paths, &AnalyzeOptions::default()).unwrap();
        let mut table = Vec::new();
        Format::Table
            .exporter()
            .write(&a.report, &mut table)
            .unwrap();
        let table = String::from_utf8(table)
            .unwrap()
            .replace(&format!("{}/", dir.display()), "");
        printed.extend(table.lines().map(squeeze));
    }
    let quotes = quoted_roce_pcap("cases.md");
    assert!(
        quotes.len() >= 6,
        "the case studies' analyze quotes were not found"
    );
    for line in quotes {
        assert!(
            printed.contains(&squeeze(&line)),
            "book/src/cases.md quotes a line roce-pcap analyze no longer prints:\n{line}"
        );
    }
}

/// The v1/v2 chapter: its sweep table and run table are what today's
/// `rocesim` prints, its tshark line what tshark says of the run's capture.
#[test]
fn the_roce_modes_chapter_quotes_todays_output() {
    let dir = tmp("book_roce_modes");
    let mut printed = lines(&[
        "sweep",
        "scenarios/roce_modes.toml",
        "--set",
        "host.hostA.roce=v1,v2",
        "--set",
        "host.hostB.roce_modes=v1,v1+v2",
        "--out",
        &dir.join("sweep").display().to_string(),
    ]);
    let run = dir.join("run");
    printed.extend(lines(&[
        "run",
        "scenarios/roce_modes.toml",
        "--set",
        "host.hostB.roce_modes=v1",
        "--out",
        &run.display().to_string(),
    ]));
    let quotes: Vec<String> = book_text_blocks("roce-modes.md")
        .into_iter()
        .skip(1) // the layout diagram
        .flatten()
        .collect();
    assert!(quotes.len() >= 12, "quotes not found: {quotes:?}");
    for line in quotes {
        assert!(
            printed.contains(&line),
            "book/src/roce-modes.md quotes a line rocesim no longer prints:\n{line}"
        );
    }
    let Some(tshark) = roce_testkit::tshark::tshark() else {
        return;
    };
    let o = std::process::Command::new(tshark)
        .arg("-r")
        .arg(run.join("hostA.eth0.pcap"))
        .output()
        .unwrap();
    let decoded: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(squeeze)
        .collect();
    let shown = roce_testkit::repo::book_blocks("roce-modes.md", "tshark");
    assert!(!shown.is_empty());
    for line in shown.into_iter().flatten() {
        assert!(
            decoded.contains(&squeeze(&line)),
            "tshark no longer prints:\n{line}"
        );
    }
}

/// The capacity chapter: every `rocesim sweep` its shell blocks show is run
/// (into a temporary `--out`), and every line of its text blocks must be a
/// line those sweeps print; the closing `rocesim: N runs in X s` line, whose
/// wall time varies, is not quoted. The fat-tree section's figures come from
/// a run of minutes and are not checked here (BENCHMARKS.md has them).
#[test]
fn the_capacity_chapter_quotes_todays_sweeps() {
    let dir = tmp("book_capacity");
    let mut printed = Vec::new();
    let commands: Vec<String> = roce_testkit::repo::book_blocks("capacity.md", "sh")
        .into_iter()
        .flatten()
        .filter(|l| l.starts_with("rocesim sweep "))
        .collect();
    assert!(commands.len() >= 4, "the chapter's sweeps were not found");
    for (i, c) in commands.iter().enumerate() {
        let out = dir.join(format!("sweep{i}")).display().to_string();
        let mut args: Vec<&str> = c.split_whitespace().skip(1).collect();
        args.extend(["--out", &out]);
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
                .map(str::to_string),
        );
    }
    let quotes: Vec<String> = book_text_blocks("capacity.md")
        .into_iter()
        .flatten()
        .collect();
    assert!(quotes.len() >= 10, "the chapter's tables were not found");
    for line in quotes {
        assert!(
            printed.contains(&line),
            "book/src/capacity.md quotes a line rocesim sweep no longer prints:\n{line}"
        );
    }
}
