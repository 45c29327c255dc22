//! Errors that point at a key: a [`KeyPath`] into the scenario, a
//! [`ModelError`] at one (what the builder and the lowering steps return),
//! and a [`Diagnostic`], the same placed at a file, line and column, ready
//! to print.
//!
//! ```text
//!  ModelError { path: host[0].nic[0].mtu, msg, hint }
//!      │  Loaded::locate: span_of(tree, path), line_col(text, span)
//!      ▼
//!  Diagnostic  "t.toml:6:1: key `host[0].nic[0].mtu`: msg\n  hint: ..."
//!              "t.toml: --set host.a.nic.eth0.mtu=50000: key ...: msg"
//! ```

use std::fmt;

/// One segment of a key path: a table key or an array index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A dotted key path such as `host[1].nic[0].mtu`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct KeyPath(pub Vec<Seg>);

impl KeyPath {
    pub fn root() -> KeyPath {
        KeyPath(Vec::new())
    }
    pub fn key(&self, k: &str) -> KeyPath {
        let mut v = self.0.clone();
        v.push(Seg::Key(k.to_string()));
        KeyPath(v)
    }
    pub fn index(&self, i: usize) -> KeyPath {
        let mut v = self.0.clone();
        v.push(Seg::Index(i));
        KeyPath(v)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for s in &self.0 {
            match s {
                Seg::Key(k) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(k)?;
                }
                Seg::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// An error in the model, before it is placed in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelError {
    pub path: KeyPath,
    pub msg: String,
    pub hint: Option<String>,
}

impl ModelError {
    pub fn new(path: KeyPath, msg: impl Into<String>) -> ModelError {
        ModelError {
            path,
            msg: msg.into(),
            hint: None,
        }
    }
    pub fn hint(mut self, h: impl Into<String>) -> ModelError {
        self.hint = Some(h.into());
        self
    }
    /// A "did you mean" hint from the closest of `candidates` to `got`.
    pub fn did_you_mean<'a>(
        self,
        got: &str,
        candidates: impl IntoIterator<Item = &'a str>,
    ) -> ModelError {
        let cands: Vec<&str> = candidates.into_iter().collect();
        match closest(got, cands.iter().copied()) {
            Some(c) => self.hint(format!("did you mean `{c}`?")),
            None if !cands.is_empty() => {
                let mut list = cands
                    .iter()
                    .take(12)
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                if cands.len() > 12 {
                    list.push_str(", ...");
                }
                self.hint(format!("known names: {list}"))
            }
            None => self,
        }
    }
}

pub use roce_capture::human::closest;

/// A located error, ready to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based; 0 when the error is not at a place in the file.
    pub line: usize,
    pub col: usize,
    pub key: String,
    pub msg: String,
    pub hint: Option<String>,
    /// The `--set KEY=VALUE` the error is about, if any.
    pub from_set: Option<String>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.from_set {
            Some(s) => write!(f, "{}: --set {s}: ", self.file)?,
            None if self.line > 0 => write!(f, "{}:{}:{}: ", self.file, self.line, self.col)?,
            None => write!(f, "{}: ", self.file)?,
        }
        if !self.key.is_empty() {
            write!(f, "key `{}`: ", self.key)?;
        }
        f.write_str(&self.msg)?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// The 1-based line and column of byte `off` of `text`.
pub(crate) fn line_col(text: &str, off: usize) -> (usize, usize) {
    let off = off.min(text.len());
    let before = &text[..off];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(off, |i| off - i - 1) + 1;
    (line, col)
}
