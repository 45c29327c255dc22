//! Loading a scenario file: parse it into a spanned tree, apply the
//! `--set` overrides and expand a generated fabric in it, deserialize it,
//! lower its `[[traffic]]`, and keep what is needed to place later errors.
//!
//! ```text
//!  file text ──DeTable::parse──▶ spanned tree ──apply --set──▶ serde (deny_unknown_fields)
//!                                    │                              │
//!                                    └── key path ──▶ span ──▶ "file:line:col: key: message"
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::diagnostic::{Diagnostic, ModelError, closest, line_col};
use crate::lower::topology as fabric;
use crate::lower::traffic;
use crate::schema::Scenario;
use crate::tree::{SET_BASE, SET_STRIDE, own_value, path_at, span_of, unsafe_extend};

/// A parsed scenario with what is needed to place later errors.
///
/// The spanned tree an error is placed in is not kept: a generated fabric
/// of thousands of hosts makes it several times the size of the world it
/// describes (160 MB for a k = 16 fat-tree), and it is needed only when
/// something fails. It is made again from the text and the `--set`s, which
/// give the same tree, the first time an error asks for it.
pub struct Loaded {
    pub scenario: Scenario,
    /// The scenario's name: `name` from the file, else the file stem.
    pub name: String,
    pub path: PathBuf,
    text: String,
    tree: OnceLock<Option<Spanned<DeTable<'static>>>>,
    sets: Vec<String>,
}

impl Loaded {
    /// Places a model error in the file.
    pub fn locate(&self, e: &ModelError) -> Diagnostic {
        let span = self.tree().and_then(|t| span_of(t, &e.path));
        self.diag(span, e.path.to_string(), e.msg.clone(), e.hint.clone())
    }

    /// The spanned tree, made again ([`tree_of`]) when first asked for.
    fn tree(&self) -> Option<&Spanned<DeTable<'static>>> {
        self.tree
            .get_or_init(|| tree_of(&self.path, &self.text, &self.sets).ok())
            .as_ref()
    }

    fn diag(
        &self,
        span: Option<Range<usize>>,
        key: String,
        msg: String,
        hint: Option<String>,
    ) -> Diagnostic {
        let mut d = Diagnostic {
            file: self.path.display().to_string(),
            line: 0,
            col: 0,
            key,
            msg,
            hint,
            from_set: None,
        };
        match span {
            // A value a --set gave: the error names the flag.
            Some(s) if s.start >= SET_BASE => {
                d.from_set = self.sets.get((s.start - SET_BASE) / SET_STRIDE).cloned();
            }
            Some(s) => (d.line, d.col) = line_col(&self.text, s.start),
            None => {}
        }
        d
    }
}

/// Reads, overrides and deserializes a scenario file.
pub fn load(path: &Path, sets: &[String]) -> Result<Loaded, Diagnostic> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Diagnostic {
        file: file.clone(),
        line: 0,
        col: 0,
        key: String::new(),
        msg: format!("cannot read the scenario: {e}"),
        hint: None,
        from_set: None,
    })?;
    load_str(path, text, sets)
}

/// The spanned tree of a scenario's text: parsed, the `--set`s applied and
/// a generated fabric expanded. The same text and sets give the same tree.
fn tree_of(
    path: &Path,
    text: &str,
    sets: &[String],
) -> Result<Spanned<DeTable<'static>>, Diagnostic> {
    let file = path.display().to_string();
    let plain = |line, col, msg: String, hint: Option<String>| Diagnostic {
        file: file.clone(),
        line,
        col,
        key: String::new(),
        msg,
        hint,
        from_set: None,
    };
    let mut tree = match DeTable::parse(text) {
        Ok(t) => t,
        Err(e) => {
            let (l, c) = e.span().map_or((0, 0), |s| line_col(text, s.start));
            return Err(plain(
                l,
                c,
                format!("invalid TOML: {}", e.message().trim()),
                None,
            ));
        }
    };
    tree.get_mut().make_owned();
    // SAFETY of lifetimes: make_owned turned every borrowed string into an
    // owned one, so the tree no longer refers to `text`.
    let mut tree: Spanned<DeTable<'static>> = unsafe_extend(tree);
    // `--set`s on the fabric's parameters first, then the generated
    // tables, then `--set`s that name a generated host, switch or link.
    let set_key = |s: &String| s.split_once('=').map_or("", |(k, _)| k.trim()).to_string();
    let order: Vec<usize> = (0..sets.len())
        .filter(|&i| !fabric::set_needs_fabric(&set_key(&sets[i])))
        .chain(usize::MAX..=usize::MAX)
        .chain((0..sets.len()).filter(|&i| fabric::set_needs_fabric(&set_key(&sets[i]))))
        .collect();
    for i in order {
        if i == usize::MAX {
            fabric::expand_located(&mut tree, path, text)?;
            continue;
        }
        let s = &sets[i];
        let Some((k, v)) = s.split_once('=') else {
            return Err(Diagnostic {
                file: file.clone(),
                line: 0,
                col: 0,
                key: String::new(),
                msg: format!(
                    "--set `{s}`: expected KEY=VALUE, e.g. `host.hostA.bond.bond0.xmit_hash_policy=layer2+3`"
                ),
                hint: None,
                from_set: None,
            });
        };
        let span = SET_BASE + i * SET_STRIDE..SET_BASE + i * SET_STRIDE + 1;
        apply_set(&mut tree, k.trim(), v.trim(), span).map_err(|msg| Diagnostic {
            file: file.clone(),
            line: 0,
            col: 0,
            key: k.trim().to_string(),
            msg,
            hint: None,
            from_set: Some(s.clone()),
        })?;
    }
    Ok(tree)
}

/// [`load`] from text already in memory (`path` is used in messages and
/// for the default name).
pub fn load_str(path: &Path, text: String, sets: &[String]) -> Result<Loaded, Diagnostic> {
    let tree = tree_of(path, &text, sets)?;
    // Indexed by the position in `sets` (the span of a --set value).
    let loaded_sets = sets.to_vec();
    let mut loaded = Loaded {
        scenario: Scenario {
            name: None,
            description: None,
            seed: 1,
            sim: Default::default(),
            hosts: vec![],
            switches: vec![],
            links: vec![],
            workloads: vec![],
            collectives: vec![],
            taps: vec![],
            output: Default::default(),
            topology: None,
            traffic: vec![],
            flows: vec![],
            fabric: None,
        },
        name: String::new(),
        path: path.to_path_buf(),
        text,
        tree: OnceLock::new(),
        sets: loaded_sets,
    };
    let de = toml::de::Deserializer::from(tree);
    match Scenario::deserialize(de) {
        Ok(s) => loaded.scenario = s,
        Err(e) => {
            let span = e.span();
            let key = span
                .as_ref()
                .and_then(|s| loaded.tree().and_then(|t| path_at(t, s.clone())))
                .map(|p| p.to_string())
                .unwrap_or_default();
            let (msg, hint) = explain_serde(e.message());
            return Err(loaded.diag(span, key, msg, hint));
        }
    }
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    if let Err(e) = traffic::lower(&mut loaded.scenario, &base) {
        return Err(loaded.locate(&e));
    }
    if let Some(t) = loaded
        .scenario
        .topology
        .as_ref()
        .filter(|t| t.reroute == Some(true))
    {
        match fabric::build_topology(t, &base) {
            Ok(topo) => loaded.scenario.fabric = Some(std::sync::Arc::new(topo)),
            Err(e) => return Err(loaded.locate(&e)),
        }
    }
    loaded.name = loaded.scenario.name.clone().unwrap_or_else(|| {
        path.file_stem().map_or_else(
            || "scenario".to_string(),
            |s| s.to_string_lossy().into_owned(),
        )
    });
    Ok(loaded)
}

/// Applies one `--set` to the tree. Array elements are addressed by index
/// (`workload.0.qps`) or by their `name` (`host.hostA.bond.bond0.mode`).
fn apply_set(
    tree: &mut Spanned<DeTable<'static>>,
    key: &str,
    value: &str,
    span: Range<usize>,
) -> Result<(), String> {
    if key.is_empty() {
        return Err("empty key".into());
    }
    let segs: Vec<&str> = key.split('.').collect();
    let src: &'static str = Box::leak(value.to_string().into_boxed_str());
    let val = match DeValue::parse(src) {
        Ok(v) => v.into_inner(),
        Err(_) => DeValue::String(value.to_string().into()),
    };
    let new = Spanned::new(
        span.clone(),
        own_value(Spanned::new(span.clone(), val)).into_inner(),
    );
    let mut table: &mut DeTable<'static> = tree.get_mut();
    let mut walked = String::new();
    let mut i = 0;
    while i < segs.len() {
        let seg = segs[i];
        let last = i + 1 == segs.len();
        let pos = table.iter().position(|(k, _)| k.get_ref().as_ref() == seg);
        if last {
            match pos {
                Some(_) => {
                    let (_, slot) = table
                        .iter_mut()
                        .find(|(k, _)| k.get_ref().as_ref() == seg)
                        .unwrap();
                    *slot = new;
                }
                None => {
                    table.insert(Spanned::new(span.clone(), seg.to_string().into()), new);
                }
            }
            return Ok(());
        }
        if pos.is_none() {
            // A table the file leaves out (`[sim]`): create it; a misspelt
            // key is still caught by the schema, with a hint.
            table.insert(
                Spanned::new(span.clone(), seg.to_string().into()),
                Spanned::new(span.clone(), DeValue::Table(DeTable::new())),
            );
        }
        let (_, slot) = table
            .iter_mut()
            .find(|(k, _)| k.get_ref().as_ref() == seg)
            .unwrap();
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(seg);
        match slot.get_mut() {
            DeValue::Table(t) => {
                table = t;
                i += 1;
            }
            DeValue::Array(a) => {
                let Some(sel) = segs.get(i + 1) else {
                    return Err(format!(
                        "`{walked}` is a list; add an index or a name, e.g. `{walked}.0`"
                    ));
                };
                let names: Vec<String> = a
                    .iter()
                    .filter_map(|e| {
                        e.get_ref()
                            .get("name")
                            .and_then(|n| n.get_ref().as_str())
                            .map(str::to_string)
                    })
                    .collect();
                let idx = match sel.parse::<usize>() {
                    Ok(n) if n < a.len() => n,
                    Ok(n) => {
                        let has = match a.len() {
                            1 => "1 entry".to_string(),
                            k => format!("{k} entries"),
                        };
                        return Err(format!(
                            "`{walked}` has {has}; index {n} is out of range (--set changes \
                             entries; add a table to the file to add one)"
                        ));
                    }
                    Err(_) => names.iter().position(|n| n == sel).ok_or_else(|| {
                        let hint = closest(sel, names.iter().map(String::as_str))
                            .map(|c| format!(" (did you mean `{c}`?)"))
                            .unwrap_or_default();
                        format!("no entry named `{sel}` in `{walked}`{hint}")
                    })?,
                };
                walked.push('.');
                walked.push_str(sel);
                let elem = a.get_mut(idx).unwrap();
                if !elem.get_ref().is_table() {
                    if i + 2 == segs.len() {
                        *elem = new;
                        return Ok(());
                    }
                    return Err(format!("`{walked}` is not a table"));
                }
                let DeValue::Table(t) = elem.get_mut() else {
                    unreachable!()
                };
                table = t;
                i += 2;
            }
            _ => return Err(format!("`{walked}` is a value, not a table")),
        }
    }
    Ok(())
}

/// Turns serde's wording into ours, with a did-you-mean for unknown keys.
fn explain_serde(msg: &str) -> (String, Option<String>) {
    let msg = msg.trim().to_string();
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some((field, tail)) = rest.split_once('`') {
            let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            let hint = closest(field, expected.iter().copied())
                .map(|c| format!("did you mean `{c}`?"))
                .or_else(|| {
                    (!expected.is_empty())
                        .then(|| format!("allowed keys here: {}", expected.join(", ")))
                });
            return (format!("unknown key `{field}`"), hint);
        }
    }
    if let Some(rest) = msg.strip_prefix("unknown variant `") {
        if let Some((v, tail)) = rest.split_once('`') {
            let expected: Vec<&str> = tail.split('`').skip(1).step_by(2).collect();
            let hint = closest(v, expected.iter().copied())
                .map(|c| format!("did you mean `{c}`?"))
                .or_else(|| Some(format!("one of: {}", expected.join(", "))));
            return (format!("unknown value `{v}`"), hint);
        }
    }
    (msg, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::KeyPath;

    fn load_text(t: &str, sets: &[&str]) -> Result<Loaded, Diagnostic> {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        load_str(Path::new("t.toml"), t.to_string(), &sets)
    }

    const BASE: &str =
        "seed = 3\n[[host]]\nname = \"a\"\n[[host.nic]]\nname = \"eth0\"\nmtu = 9000\n";

    #[test]
    fn unknown_key_is_placed_and_hinted() {
        let e = load_text(&format!("{BASE}mttu = 4\n"), &[]).err().unwrap();
        assert_eq!((e.line, e.col), (7, 1), "{e}");
        assert!(e.msg.contains("unknown key `mttu`"), "{e}");
        assert_eq!(e.hint.as_deref(), Some("did you mean `mtu`?"));
        assert!(e.key.starts_with("host[0].nic[0]"), "{e}");
    }

    #[test]
    fn bad_unit_names_the_key() {
        let t = "[[link]]\na = \"x.y\"\nb = \"z.w\"\nrate = \"100GB\"\n";
        let e = load_text(t, &[]).err().unwrap();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.msg.contains("unknown rate unit"), "{e}");
        assert_eq!(e.key, "link[0].rate");
    }

    #[test]
    fn set_overrides_by_name_and_index() {
        let l = load_text(BASE, &["host.a.nic.eth0.mtu=4200", "seed=9"]).unwrap();
        assert_eq!(l.scenario.hosts[0].nics[0].mtu, 4200);
        assert_eq!(l.scenario.seed, 9);
        let l = load_text(BASE, &["host.0.nic.0.mtu=1500"]).unwrap();
        assert_eq!(l.scenario.hosts[0].nics[0].mtu, 1500);
    }

    #[test]
    fn set_errors_name_the_flag() {
        let e = load_text(BASE, &["host.b.nic.0.mtu=1"]).err().unwrap();
        assert!(e.msg.contains("no entry named `b`"), "{e}");
        assert_eq!(e.from_set.as_deref(), Some("host.b.nic.0.mtu=1"));
        let e = load_text(BASE, &["host.a.nic.eth0.mtu=big"]).err().unwrap();
        assert_eq!(
            e.from_set.as_deref(),
            Some("host.a.nic.eth0.mtu=big"),
            "{e}"
        );
        let e = load_text(BASE, &["host.a.nic.eth0.mtux=1"]).err().unwrap();
        assert!(
            e.to_string().contains("--set host.a.nic.eth0.mtux=1"),
            "{e}"
        );
        assert!(e.msg.contains("unknown key `mtux`"), "{e}");
        let e = load_text(BASE, &["host.a.nic.1.mtu=1500"]).err().unwrap();
        assert!(
            e.msg
                .contains("`host.a.nic` has 1 entry; index 1 is out of range"),
            "{e}"
        );
    }

    #[test]
    fn model_errors_are_placed() {
        let l = load_text(BASE, &[]).unwrap();
        let d = l.locate(&ModelError::new(
            KeyPath::root()
                .key("host")
                .index(0)
                .key("nic")
                .index(0)
                .key("mtu"),
            "too big",
        ));
        assert_eq!((d.line, d.col), (6, 1));
        assert_eq!(d.key, "host[0].nic[0].mtu");
    }

    /// A key the file leaves out (a default) is placed at its table.
    #[test]
    fn model_errors_at_an_absent_key_fall_back_to_its_table() {
        let l = load_text(BASE, &[]).unwrap();
        let path = KeyPath::root()
            .key("host")
            .index(0)
            .key("nic")
            .index(0)
            .key("vlan");
        let d = l.locate(&ModelError::new(path, "bad"));
        assert_eq!((d.line, d.col), (4, 1), "{d}");
        assert_eq!(d.key, "host[0].nic[0].vlan");
    }

    #[test]
    fn model_errors_in_a_set_value_name_the_set() {
        let l = load_text(BASE, &["seed=4", "host.a.nic.eth0.mtu=50000"]).unwrap();
        let path = KeyPath::root()
            .key("host")
            .index(0)
            .key("nic")
            .index(0)
            .key("mtu");
        let d = l.locate(&ModelError::new(path, "too big"));
        assert_eq!(d.from_set.as_deref(), Some("host.a.nic.eth0.mtu=50000"));
        assert!(
            d.to_string()
                .starts_with("t.toml: --set host.a.nic.eth0.mtu=50000: key `host[0].nic[0].mtu`"),
            "{d}"
        );
        // A key the --set left alone is still placed in the file.
        let d = l.locate(&ModelError::new(
            KeyPath::root().key("host").index(0).key("name"),
            "bad",
        ));
        assert_eq!((d.line, d.col, d.from_set), (3, 1, None));
    }

    #[test]
    fn invalid_toml() {
        let e = load_text("a = = 1\n", &[]).err().unwrap();
        assert_eq!(e.line, 1);
        assert!(e.msg.starts_with("invalid TOML"));
    }
}
