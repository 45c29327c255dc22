//! The HTML reports in a real browser: headless Chromium loads each page
//! and reports, through its DevTools protocol, every console error and
//! every network request (testkit::chromium). A page written by
//! `analyze --html` or `compare --html` must show neither, must carry its
//! plots inline, and must show its tables as text. Screenshots are left in
//! the target directory (`html-report-*.png`) for a person to look at.
//!
//! The watcher itself is checked first on a page that does everything the
//! reports must not: a script logging an error, an image from the network,
//! a missing local image.

use std::path::{Path, PathBuf};
use std::process::Command;

use roce_testkit::chromium::{chromium, load, screenshot};
use roce_testkit::cli::{TempDir, succeed};
use roce_testkit::repo::root;

const BIN: &str = env!("CARGO_BIN_EXE_roce-pcap");

/// Where screenshots stay after the test: beside the test binaries.
fn shots() -> PathBuf {
    let d = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .join("html-report");
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn no_errors_no_requests(chromium: &Path, page: &Path, title: &str, texts: &[&str]) {
    let l = load(chromium, page);
    assert!(
        l.console_errors.is_empty(),
        "{}: console errors {:?}",
        page.display(),
        l.console_errors
    );
    assert!(
        l.requests.is_empty(),
        "{}: network requests {:?}",
        page.display(),
        l.requests
    );
    assert!(l.title.starts_with(title), "title {:?}", l.title);
    for t in texts {
        assert!(
            l.text.contains(t),
            "{}: no {t:?} in the page",
            page.display()
        );
    }
    let html = std::fs::read_to_string(page).unwrap();
    assert!(!html.contains("<script"), "a script in {}", page.display());
}

#[test]
fn the_watcher_sees_console_errors_and_requests() {
    let Some(chromium) = chromium() else { return };
    let dir = TempDir::new("html-bad");
    let page = dir.join("bad.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><html><head><title>bad</title></head><body><p>x</p>\
         <img src=\"http://example.invalid/x.png\"><img src=\"missing.png\">\
         <script>console.error(\"boom\")</script></body></html>",
    )
    .unwrap();
    let l = load(&chromium, &page);
    assert!(
        l.console_errors.iter().any(|e| e.contains("boom")),
        "{:?}",
        l.console_errors
    );
    assert!(
        l.requests.iter().any(|u| u.contains("example.invalid")),
        "{:?}",
        l.requests
    );
    assert!(
        l.requests.iter().any(|u| u.ends_with("missing.png")),
        "{:?}",
        l.requests
    );
}

#[test]
fn analyze_and_compare_pages_are_self_contained() {
    let Some(chromium) = chromium() else { return };
    let dir = TempDir::new("html-pages");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let scenario = root().join("scenarios/lag_hash.toml");
    roce_testkit::rocesim::run(&scenario, &a, &[]);
    roce_testkit::rocesim::run(
        &scenario,
        &b,
        &["host.hostA.bond.bond0.xmit_hash_policy=layer2+3"],
    );

    // analyze of a run directory: its captures, then the simulator's tables.
    let page = dir.join("analyze.html");
    succeed(
        Command::new(BIN)
            .arg("analyze")
            .arg(&a)
            .arg("--html")
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    // goodput_qps, goodput_files, 4 time-sequence graphs, pfc, ecn_cnp.
    assert_eq!(html.matches("<svg ").count(), 8);
    no_errors_no_requests(
        &chromium,
        &page,
        "roce-pcap analyze",
        &[
            "Request flows",
            "10.0.0.1:0x1a0 -> 10.0.0.2:0x2c0",
            "rocesim run summary",
            "aggregate_goodput_gbps",
            "hostA.bond0",
        ],
    );
    screenshot(
        &chromium,
        &page,
        (1280, 2400),
        &shots().join("html-report-analyze.png"),
    );

    // compare of the two runs.
    let page = dir.join("compare.html");
    succeed(
        Command::new(BIN)
            .arg("compare")
            .arg(&a)
            .arg(&b)
            .arg("--html")
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<svg ").count(), 5);
    no_errors_no_requests(
        &chromium,
        &page,
        "roce-pcap compare",
        &[
            "8 flows matched (8 by QPN)",
            "FLOWS: goodput and messages (A/B)",
            "156.806 Gb/s",
            "98.018 Gb/s",
            "A: rocesim run summary",
            "B: rocesim run summary",
        ],
    );
    screenshot(
        &chromium,
        &page,
        (1280, 2400),
        &shots().join("html-report-compare.png"),
    );
}
