//! Where the subcommands' outputs go: a report, a page or a scenario is
//! written whole or not at all.

use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes through `f` to `path` via a temporary file in the same
/// directory, renamed into place only when everything was written, so a
/// failed run never leaves half a report. Devices and FIFOs are written in
/// place.
pub(crate) fn write_atomically(
    path: &Path,
    f: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    // A device, FIFO or socket (`-o /dev/null`, `-o >(gzip > r.gz)`) is
    // written in place: renaming a temp file over it would replace the
    // device node itself with a regular file.
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            let mut w = BufWriter::new(std::fs::OpenOptions::new().write(true).open(path)?);
            f(&mut w)?;
            return w.flush();
        }
    }
    // Through a symlink, replace the file it points at, not the link.
    let resolved = std::fs::canonicalize(path).ok();
    let path = resolved.as_deref().unwrap_or(path);
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut w = BufWriter::new(std::fs::File::create(&tmp)?);
        f(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    #[test]
    fn special_files_are_written_in_place_not_replaced() {
        let dir = std::env::temp_dir().join(format!("roce-pcap-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("out.fifo");
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipping: mkfifo is not available");
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        write_atomically(&fifo, |w| w.write_all(b"report\n")).unwrap();
        // Checked before joining: had the FIFO been renamed over, the reader
        // would wait on it forever.
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        assert_eq!(reader.join().unwrap(), "report\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn regular_files_and_symlinks_are_replaced_atomically() {
        let dir = std::env::temp_dir().join(format!("roce-pcap-atomic-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("report.json");
        std::fs::write(&target, "old").unwrap();
        let link = dir.join("latest.json");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomically(&link, |w| w.write_all(b"new")).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
