//! Running the tools as a user does, and the scratch space a test needs.
//!
//! ```text
//!  let dir = TempDir::new("cut");                 // removed first, and when dropped
//!  let o = run(env!("CARGO_BIN_EXE_roce-pcap"), &["analyze", ...]);
//!  assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
//!  let o = succeed(Command::new(BIN).arg("dissect").arg(&path));   // exit 0 or fail
//!  let rows = json_lines(&o.stdout);
//! ```
//!
//! The binary's path comes from the test (`env!("CARGO_BIN_EXE_...")` is
//! only defined in the crate that owns the test), so nothing here depends
//! on the tools it runs.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Map, Value};

/// `bin args...`, waited for.
pub fn run<S: AsRef<OsStr>>(bin: &str, args: &[S]) -> Output {
    Command::new(bin)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{bin}: {e}"))
}

/// Runs `cmd`, failing the test with its stderr unless it exits 0.
pub fn succeed(cmd: &mut Command) -> Output {
    let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(o.status.success(), "{cmd:?} failed: {}", stderr(&o));
    o
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Every line of `bytes` as a JSON object (`--format jsonl`).
pub fn json_lines(bytes: &[u8]) -> Vec<Map<String, Value>> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| match serde_json::from_str(l) {
            Ok(Value::Object(m)) => m,
            other => panic!("not a JSON object: {l}: {other:?}"),
        })
        .collect()
}

/// The JSON document in `path`.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A directory of one test's own under the system's temporary directory,
/// emptied when made and removed when dropped (some captures are tens of
/// MB). `tag` must be unique among the tests of one test binary; the
/// process id keeps binaries apart.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let d = std::env::temp_dir().join(format!("roce-test-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        TempDir(d)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
