//! What some tests need and not every machine has: tshark, and `shared/`
//! beside the checkout (the public traces, the ns-3 anchors).
//!
//! The project's rule, in one place: under `ROCESIM_CI=1` something
//! missing fails the test; elsewhere the test skips, saying on stderr what
//! it lacked, so that `cargo test` on a laptop passes and CI cannot pass by
//! skipping.
//!
//! ```text
//!  let Some(p) = public_trace("roce.pcap") else { return };   // skip or fail
//!  let Some(tshark) = tshark::tshark() else { return };
//! ```

use std::fmt::Display;
use std::path::PathBuf;

/// Whether `ROCESIM_CI=1`: nothing may be skipped.
pub fn ci() -> bool {
    std::env::var("ROCESIM_CI").is_ok_and(|v| v == "1")
}

/// `None` after saying on stderr why the test skips; under
/// [`ci`] a failure naming what is missing.
pub fn skip<T>(missing: impl Display) -> Option<T> {
    assert!(!ci(), "ROCESIM_CI=1 but {missing}");
    eprintln!("skipping: {missing}");
    None
}

/// `shared/<rel>` in or beside the checkout or beside any directory above
/// it (a git worktree sits deeper than the main checkout), if it exists
/// (else [`skip`]).
pub fn shared(rel: &str) -> Option<PathBuf> {
    let root = crate::repo::root();
    match root
        .ancestors()
        .map(|a| a.join("shared").join(rel))
        .find(|p| p.exists())
    {
        Some(p) => Some(p),
        None => skip(format_args!(
            "shared/{rel} is not beside {} or above it (the shared data is not on this machine)",
            root.display()
        )),
    }
}

/// A capture of `../shared/traces/public` (files with no licence to ship,
/// read in place), if it exists (else [`skip`]).
pub fn public_trace(name: &str) -> Option<PathBuf> {
    shared(&format!("traces/public/{name}"))
}
