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
