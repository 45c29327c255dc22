//! Places in the repository the tests read: the committed corpus in
//! `traces/`, the book's quoted output.

use std::path::{Path, PathBuf};

/// The repository's root directory (the workspace).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("testkit/ is inside the workspace")
        .to_path_buf()
}

/// Every file below `dir` (sysfs/ trees included), relative to it, sorted:
/// what a run directory holds.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// `traces/<name>`, a file of the committed corpus.
pub fn trace(name: &str) -> PathBuf {
    root().join("traces").join(name)
}

/// The non-blank lines of every ```` ```text ```` block of the book chapter
/// `book/src/<chapter>`, one `Vec` per block: what the book quotes a tool
/// printing.
pub fn book_text_blocks(chapter: &str) -> Vec<Vec<String>> {
    book_blocks(chapter, "text")
}

/// The non-blank lines of every fenced block of `book/src/<chapter>` whose
/// info string is exactly `info` (`text`, `sh`, ...), one `Vec` per block.
pub fn book_blocks(chapter: &str, info: &str) -> Vec<Vec<String>> {
    let path = root().join("book/src").join(chapter);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let fence = format!("```{info}");
    let mut blocks = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with("```") {
            inside = line == fence;
            if inside {
                blocks.push(Vec::new());
            }
            continue;
        }
        if let Some(b) = blocks
            .last_mut()
            .filter(|_| inside && !line.trim().is_empty())
        {
            b.push(line.to_string());
        }
    }
    blocks
}
