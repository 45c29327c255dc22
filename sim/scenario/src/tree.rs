//! The scenario as a spanned TOML tree (`toml::de::DeTable`), as loading
//! and fabric expansion edit it before serde reads it: owning a parsed
//! tree, and going between key paths and the spans of the file.
//!
//! ```text
//!  span   0 .. file length            a key or value of the file
//!         SET_BASE + i * SET_STRIDE   the value of the i-th --set
//!  span_of(tree, path) ──▶ span       (the nearest ancestor the file has)
//!  path_at(tree, span) ──▶ path       (the innermost key at a serde error)
//! ```

use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::diagnostic::{KeyPath, Seg};

/// Values a `--set` gave are spanned from here on, one stride per flag,
/// so that an error about one names the flag rather than a line.
pub(crate) const SET_BASE: usize = 1 << 40;
pub(crate) const SET_STRIDE: usize = 1 << 20;

/// `t` with every string owned, so that it outlives the text it was
/// parsed from.
pub(crate) fn unsafe_extend(t: Spanned<DeTable<'_>>) -> Spanned<DeTable<'static>> {
    // Rebuild the tree with owned data instead of transmuting lifetimes.
    let span = t.span();
    Spanned::new(span, own_table(t.into_inner()))
}

pub(crate) fn own_table(t: DeTable<'_>) -> DeTable<'static> {
    let mut out = DeTable::new();
    for (k, v) in t {
        let ks = k.span();
        let kv: String = k.into_inner().into_owned();
        out.insert(Spanned::new(ks, kv.into()), own_value(v));
    }
    out
}

pub(crate) fn own_value(v: Spanned<DeValue<'_>>) -> Spanned<DeValue<'static>> {
    let span = v.span();
    let inner = match v.into_inner() {
        DeValue::String(s) => DeValue::String(s.into_owned().into()),
        DeValue::Integer(i) => {
            let mut i = i;
            i.make_owned();
            // SAFETY-free: an owned DeInteger borrows nothing; rebuild by
            // reparsing its text.
            reparse_scalar(i.as_str(), i.radix())
        }
        DeValue::Float(f) => reparse_float(f.as_str()),
        DeValue::Boolean(b) => DeValue::Boolean(b),
        DeValue::Datetime(d) => DeValue::Datetime(d),
        DeValue::Array(a) => {
            let mut out = toml::de::DeArray::new();
            for e in a {
                out.push(own_value(e));
            }
            DeValue::Array(out)
        }
        DeValue::Table(t) => DeValue::Table(own_table(t)),
    };
    Spanned::new(span, inner)
}

fn reparse_scalar(text: &str, radix: u32) -> DeValue<'static> {
    let prefix = match radix {
        16 => "0x",
        8 => "0o",
        2 => "0b",
        _ => "",
    };
    let src: &'static str = Box::leak(format!("{prefix}{text}").into_boxed_str());
    DeValue::parse(src)
        .map(|v| v.into_inner())
        .unwrap_or(DeValue::String(text.to_string().into()))
}

fn reparse_float(text: &str) -> DeValue<'static> {
    let src: &'static str = Box::leak(text.to_string().into_boxed_str());
    DeValue::parse(src)
        .map(|v| v.into_inner())
        .unwrap_or(DeValue::String(text.to_string().into()))
}

/// The span of the key at `path` (falling back to the nearest ancestor
/// present in the file).
pub fn span_of(tree: &Spanned<DeTable<'static>>, path: &KeyPath) -> Option<Range<usize>> {
    let mut best = Some(tree.span());
    let mut cur: Option<&DeValue<'static>> = None;
    let mut table = Some(tree.get_ref());
    for seg in &path.0 {
        match seg {
            Seg::Key(k) => {
                let Some(t) = table else {
                    return best;
                };
                let Some((key, val)) = t.iter().find(|(kk, _)| kk.get_ref().as_ref() == k.as_str())
                else {
                    return best;
                };
                // The key's place in the file, unless a --set replaced the
                // value: then the error is about that --set.
                best = Some(
                    if key.span().start < key.span().end && val.span().start < SET_BASE {
                        key.span()
                    } else {
                        val.span()
                    },
                );
                cur = Some(val.get_ref());
            }
            Seg::Index(i) => {
                let Some(DeValue::Array(a)) = cur else {
                    return best;
                };
                let Some(e) = a.get(*i) else {
                    return best;
                };
                best = Some(e.span());
                cur = Some(e.get_ref());
            }
        }
        table = match cur {
            Some(DeValue::Table(t)) => Some(t),
            _ => None,
        };
    }
    best
}
/// The key path whose key or value span is the smallest one containing
/// `span` (the innermost key at the error).
pub(crate) fn path_at(tree: &Spanned<DeTable<'static>>, span: Range<usize>) -> Option<KeyPath> {
    fn visit(
        v: &DeValue<'static>,
        path: &KeyPath,
        span: &Range<usize>,
        best: &mut Option<(usize, KeyPath)>,
    ) {
        match v {
            DeValue::Table(t) => {
                for (k, val) in t.iter() {
                    let p = path.key(k.get_ref());
                    for s in [k.span(), val.span()] {
                        if s.start <= span.start && span.start < s.end.max(s.start + 1) {
                            let len = s.end - s.start;
                            if best.as_ref().is_none_or(|(l, _)| len < *l) {
                                *best = Some((len, p.clone()));
                            }
                        }
                    }
                    visit(val.get_ref(), &p, span, best);
                }
            }
            DeValue::Array(a) => {
                for (i, e) in a.iter().enumerate() {
                    let p = path.index(i);
                    let s = e.span();
                    if !e.get_ref().is_table()
                        && s.start <= span.start
                        && span.start < s.end.max(s.start + 1)
                    {
                        let len = s.end - s.start;
                        if best.as_ref().is_none_or(|(l, _)| len < *l) {
                            *best = Some((len, p.clone()));
                        }
                    }
                    visit(e.get_ref(), &p, span, best);
                }
            }
            _ => {}
        }
    }
    let mut best = None;
    visit(
        &DeValue::Table(tree.get_ref().clone()),
        &KeyPath::root(),
        &span,
        &mut best,
    );
    best.map(|(_, p)| p)
}
