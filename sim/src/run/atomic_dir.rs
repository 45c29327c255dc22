//! Output directories that appear whole or not at all. A run writes into
//! `.<out>.tmp-<pid>` beside the target and renames it into place only
//! when everything was written, so a failed or interrupted run never
//! leaves a half-written run directory behind; a sweep and a merge write
//! theirs the same way.
//!
//! ```text
//!   out exists? ── a file, or a directory without the marker (summary.json, sweep.csv) ──▶ refused
//!   .<leaf>.tmp-<pid> ──fill──▶ ok: remove the old out, rename onto it
//!                          └──▶ error: remove the temporary directory
//!   .<leaf>.tmp-<pid> of a process that is gone (Ctrl-C) ──▶ removed by the next run
//! ```

use std::path::Path;

use super::error::RunError;

/// Refuses an output path that exists and is not a directory this tool
/// wrote (it has `marker`) or an empty one: a file, a device, someone's
/// data would be replaced.
pub(super) fn check_replaceable(out: &Path, marker: &str, what: &str) -> Result<(), RunError> {
    let empty_dir = || std::fs::read_dir(out).is_ok_and(|mut d| d.next().is_none());
    if out.exists() && !out.join(marker).is_file() && !empty_dir() {
        return Err(RunError::Usage(format!(
            "--out {}: exists and is not a {what} directory (no {marker}); refusing to replace it",
            out.display()
        )));
    }
    Ok(())
}

/// Fills `.<leaf>.tmp-<pid>` beside `out` with `fill` and renames it onto
/// `out` (replacing an older one) only if `fill` succeeds; on failure the
/// temporary directory is removed, so no half-written output is ever
/// seen under `out`. `default_leaf` names the temporary directory when
/// `out` has no file name.
pub(super) fn write_dir_atomically<T>(
    out: &Path,
    default_leaf: &str,
    fill: impl FnOnce(&Path) -> Result<T, RunError>,
) -> Result<T, RunError> {
    let parent = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Which directory could not be written, and for which --out.
    let cannot = |what: &str, p: &Path, e: std::io::Error| {
        RunError::Output(format!(
            "--out {}: cannot {what} {}: {e}",
            out.display(),
            p.display()
        ))
    };
    std::fs::create_dir_all(parent).map_err(|e| cannot("create", parent, e))?;
    let leaf = out
        .file_name()
        .map_or_else(|| default_leaf.into(), |s| s.to_string_lossy().into_owned());
    remove_stale_temps(parent, &leaf);
    let tmp = parent.join(format!(".{leaf}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| cannot("write into", parent, e))?;
    let finish = |v: T| -> Result<T, RunError> {
        if out.exists() {
            std::fs::remove_dir_all(out)
                .map_err(|e| RunError::Output(format!("{}: {e}", out.display())))?;
        }
        std::fs::rename(&tmp, out).map_err(|e| {
            RunError::Output(format!("{} -> {}: {e}", tmp.display(), out.display()))
        })?;
        Ok(v)
    };
    match fill(&tmp).and_then(finish) {
        Ok(v) => Ok(v),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}

/// Removes `.<leaf>.tmp-<pid>` directories left by runs that were killed
/// (Ctrl-C): those whose process is gone, so they do not pile up.
fn remove_stale_temps(parent: &Path, leaf: &str) {
    let prefix = format!(".{leaf}.tmp-");
    // Without /proc we cannot tell a live run from a dead one.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(parent) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&prefix)
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Writes file `name` of `dir` as `fill` makes it, through a buffer. The
/// large files are streamed: a fabric's per-QP series and records run to
/// hundreds of MB, which as one string would double the peak.
pub(super) fn stream_file(
    dir: &Path,
    name: &str,
    fill: &dyn Fn(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let path = dir.join(name);
    let cannot = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut f =
        std::io::BufWriter::with_capacity(1 << 16, std::fs::File::create(&path).map_err(cannot)?);
    fill(&mut f).map_err(cannot)?;
    std::io::Write::flush(&mut f).map_err(cannot)
}
