//! The workspace's `rocesim` binary, for tests of another package (the
//! analyzer's tests simulate, then read the run directory).
//!
//! `env!("CARGO_BIN_EXE_rocesim")` exists only in rocesim's own tests, and
//! roce-pcap may not depend on rocesim (the layering is the other way
//! round), so the binary is built here, once per test process, with the
//! test's own profile and target directory:
//!
//! ```text
//!  current_exe()  = <target>/<profile dir>/deps/<test>-<hash>
//!  cargo build -p rocesim --bin rocesim --locked --profile <profile> --message-format=json
//!       (in the workspace root; CARGO_TARGET_DIR as the test got it)
//!  └─▶ the "executable" of rocesim's compiler-artifact message
//! ```
//!
//! Under `cargo test --workspace` the binary is already built and this is
//! a no-op check of a few hundred milliseconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The path of `rocesim`, built if needed.
pub fn rocesim() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(build)
}

fn build() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    // <target>/<profile dir>/deps/<test>
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .and_then(|d| d.to_str())
        .unwrap_or("debug");
    let profile = match dir {
        "debug" => "dev",
        other => other,
    };
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let o = Command::new(&cargo)
        .current_dir(crate::repo::root())
        .args(["build", "-p", "rocesim", "--bin", "rocesim", "--locked"])
        .args(["--profile", profile, "--message-format=json"])
        .output()
        .unwrap_or_else(|e| panic!("{cargo}: {e}"));
    assert!(
        o.status.success(),
        "cargo build -p rocesim failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["reason"] == "compiler-artifact" && v["target"]["name"] == "rocesim")
        .find_map(|v| v["executable"].as_str().map(PathBuf::from))
        .expect("cargo named no rocesim executable")
}

/// `rocesim run SCENARIO --out OUT` with `--set` overrides; fails the test
/// unless it exits 0.
pub fn run(scenario: &Path, out: &Path, sets: &[&str]) -> Output {
    let mut cmd = Command::new(rocesim());
    cmd.arg("run").arg(scenario).arg("--out").arg(out);
    for s in sets {
        cmd.args(["--set", s]);
    }
    crate::cli::succeed(&mut cmd)
}
