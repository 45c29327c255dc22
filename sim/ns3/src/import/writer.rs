//! The scenario as `import-hpcc` writes it: a TOML document kept by
//! `toml_edit`, with the comments that teach where each value came from.

use std::fmt::Write as _;

use toml_edit::{ArrayOfTables, Decor, DocumentMut, Item, Key, Table, Value};

/// The scenario as it is written: a TOML document (`toml_edit`), the table
/// the next key goes in, and the blank and comment lines that go above the
/// next key or table header. A value's comment is the text beside it (its
/// decor), spaces included, so the columns stay as written.
pub(super) struct ScenarioFile {
    doc: DocumentMut,
    /// The path of the table the next key goes in (empty: the top).
    at: Vec<&'static str>,
    /// The indentation of that table's lines.
    indent: &'static str,
    above: String,
}

impl ScenarioFile {
    pub(super) fn new() -> ScenarioFile {
        ScenarioFile {
            doc: DocumentMut::new(),
            at: Vec::new(),
            indent: "",
            above: String::new(),
        }
    }

    /// A blank line above what comes next.
    pub(super) fn blank(&mut self) {
        self.above.push('\n');
    }

    /// `text` as comment lines above what comes next, indented as the
    /// current table.
    pub(super) fn comment(&mut self, text: &str) {
        self.comment_at(self.indent, text);
    }

    /// `text` as comment lines above what comes next, indented by `indent`
    /// (a table header's comment).
    pub(super) fn comment_at(&mut self, indent: &str, text: &str) {
        for line in text.lines() {
            let sep = if line.is_empty() { "" } else { " " };
            let _ = writeln!(self.above, "{indent}#{sep}{line}");
        }
    }

    /// The table at `path`; for an array of tables, its last.
    pub(super) fn table_at(&mut self, path: &[&str]) -> &mut Table {
        let mut t = self.doc.as_table_mut();
        for key in path {
            t = match t.get_mut(key) {
                Some(Item::Table(next)) => next,
                Some(Item::ArrayOfTables(a)) => a.iter_mut().last().expect("a table"),
                _ => panic!("no table {key} in {path:?}"),
            };
        }
        t
    }

    /// A new table `[path]` (or one more `[[path]]`) whose header and lines
    /// are indented by `indent`, with `beside` after its header; the keys
    /// that follow go in it.
    pub(super) fn table(
        &mut self,
        path: &[&'static str],
        array: bool,
        indent: &'static str,
        beside: &str,
    ) {
        let mut t = Table::new();
        t.decor_mut()
            .set_prefix(std::mem::take(&mut self.above) + indent);
        if !beside.is_empty() {
            t.decor_mut().set_suffix(beside);
        }
        let (key, parent) = path.split_last().expect("a table's path");
        let parent = self.table_at(parent);
        if array {
            parent
                .entry(key)
                .or_insert_with(|| Item::ArrayOfTables(ArrayOfTables::new()))
                .as_array_of_tables_mut()
                .expect("an array of tables")
                .push(t);
        } else {
            parent.insert(key, Item::Table(t));
        }
        self.at = path.to_vec();
        self.indent = indent;
    }

    /// `key = value` in the current table, with `beside` after the value
    /// (spaces, then `# why`) unless it is empty.
    pub(super) fn set(&mut self, key: &str, value: impl Into<Value>, beside: &str) {
        let mut value = value.into();
        if !beside.is_empty() {
            value.decor_mut().set_suffix(beside);
        }
        let prefix = std::mem::take(&mut self.above) + self.indent;
        let key = Key::new(key).with_leaf_decor(Decor::new(prefix, " "));
        let at = self.at.clone();
        self.table_at(&at)
            .insert_formatted(&key, Item::Value(value));
    }

    /// `key = value` with `# why` beside it, the comments of a block
    /// starting after `key = value` padded to `width` characters.
    pub(super) fn set_aligned(
        &mut self,
        key: &str,
        value: impl Into<Value>,
        width: usize,
        why: &str,
    ) {
        let value = value.into();
        let kv = format!("{key} = {value}").chars().count();
        let pad = width.saturating_sub(kv);
        self.set(key, value, &format!("{:pad$} # {why}", ""));
    }

    /// The text of the document; lines left above nothing end it.
    pub(super) fn finish(mut self) -> String {
        self.doc.set_trailing(self.above);
        self.doc.to_string()
    }
}

/// A TOML integer. The figures written (sizes, byte counts) are far from
/// `i64::MAX`.
pub(super) fn int(n: impl Into<u64>) -> Value {
    Value::from(i64::try_from(n.into()).unwrap_or(i64::MAX))
}

/// A key written as a basic string (`"100Gbps"`), as rates are.
pub(super) fn quoted_key(k: &str) -> Key {
    Value::from(k)
        .to_string()
        .parse()
        .expect("a quoted string is a TOML key")
}
