//! A rocesim run's own `summary.json` as tables, in the order the file
//! has them, whatever keys the simulator writes:
//!
//! ```text
//!  top-level numbers and strings        one table: key, value
//!  an array of objects (ports, qps,     one table each: a row per object, a column per key
//!  bonds, switches, taps, ...)          (nested values as compact JSON)
//!  "counters": {port: {name: n}}        one table: a row per counter, a column per port
//!  any other object                     one table: key, value
//! ```

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use super::Page;
use crate::inputs::RunSummary;

/// A JSON value that keeps its objects' keys in the file's order.
#[derive(Debug, Clone)]
enum Json {
    Null,
    Bool(bool),
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Num(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Num(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Json, E> {
                Ok(Json::Num(v.to_string()))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Json, E> {
                Ok(Json::Str(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = s.next_element()? {
                    v.push(x);
                }
                Ok(Json::Arr(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Json, A::Error> {
                let mut v = Vec::new();
                while let Some((k, x)) = m.next_entry()? {
                    v.push((k, x));
                }
                Ok(Json::Obj(v))
            }
        }
        d.deserialize_any(V)
    }
}

impl Json {
    /// As a table cell: strings as they are, numbers as written, `-` for
    /// null, arrays of plain values joined by commas, the rest as compact
    /// JSON.
    fn cell(&self) -> String {
        match self {
            Json::Null => "-".into(),
            Json::Bool(b) => b.to_string(),
            Json::Num(n) => n.clone(),
            Json::Str(s) => s.clone(),
            Json::Arr(v) if v.iter().all(Json::is_plain) => {
                v.iter().map(Json::cell).collect::<Vec<_>>().join(", ")
            }
            other => other.compact(),
        }
    }

    fn is_plain(&self) -> bool {
        !matches!(self, Json::Arr(_) | Json::Obj(_))
    }

    fn compact(&self) -> String {
        match self {
            Json::Str(s) => serde_json::to_string(s).unwrap_or_default(),
            Json::Arr(v) => format!(
                "[{}]",
                v.iter().map(Json::compact).collect::<Vec<_>>().join(", ")
            ),
            Json::Obj(v) => format!(
                "{{{}}}",
                v.iter()
                    .map(|(k, x)| format!(
                        "{}: {}",
                        serde_json::to_string(k).unwrap_or_default(),
                        x.compact()
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            plain => plain.cell(),
        }
    }
}

/// `counters` (`{port: {counter: n}}`) as a table with a row per counter
/// (in the order they first appear) and a column per port: a port has
/// dozens of counters, a run a handful of ports.
fn counter_rows(ports: &[(String, Json)]) -> Vec<Vec<String>> {
    let mut names: Vec<&str> = Vec::new();
    for (_, c) in ports {
        if let Json::Obj(c) = c {
            for (n, _) in c {
                if !names.contains(&n.as_str()) {
                    names.push(n);
                }
            }
        }
    }
    let mut rows = vec![
        std::iter::once("counter".to_string())
            .chain(ports.iter().map(|(p, _)| p.clone()))
            .collect::<Vec<_>>(),
    ];
    for n in names {
        rows.push(
            std::iter::once(n.to_string())
                .chain(ports.iter().map(|(_, c)| {
                    match c {
                        Json::Obj(c) => c
                            .iter()
                            .find(|(k, _)| k == n)
                            .map_or(String::new(), |(_, v)| v.cell()),
                        _ => String::new(),
                    }
                }))
                .collect(),
        );
    }
    rows
}

/// Rows of `objects` (the first row the header): one column per key, in
/// the order keys first appear.
fn object_rows(objects: &[&[(String, Json)]]) -> Vec<Vec<String>> {
    let mut cols: Vec<&str> = Vec::new();
    for o in objects {
        for (k, _) in o.iter() {
            if !cols.contains(&k.as_str()) {
                cols.push(k);
            }
        }
    }
    let mut rows = vec![cols.iter().map(|c| c.to_string()).collect::<Vec<_>>()];
    for o in objects {
        rows.push(
            cols.iter()
                .map(|c| {
                    o.iter()
                        .find(|(k, _)| k == c)
                        .map_or(String::new(), |(_, v)| v.cell())
                })
                .collect(),
        );
    }
    rows
}

/// The summary's sections: `id` prefixes their anchors, `label` their
/// titles (`A: ` on a comparison).
pub(super) fn sections(page: &mut Page, id: &str, label: &str, run: &RunSummary) {
    page.h2(
        id,
        &format!("{label}rocesim run summary ({})", run.path.display()),
    );
    let json: Json = match serde_json::from_str(&run.text) {
        Ok(j) => j,
        Err(e) => {
            page.p(&format!("{}: {e}", run.path.display()));
            return;
        }
    };
    let Json::Obj(top) = json else { return };
    let mut scalars = vec![vec!["key".to_string(), "value".to_string()]];
    for (k, v) in &top {
        if v.is_plain() {
            scalars.push(vec![k.clone(), v.cell()]);
        }
    }
    page.table(&scalars);
    for (k, v) in &top {
        match v {
            Json::Arr(items) if !items.is_empty() => {
                page.h3(&format!("{label}{k}"));
                let objects: Vec<&[(String, Json)]> = items
                    .iter()
                    .filter_map(|i| match i {
                        Json::Obj(o) => Some(o.as_slice()),
                        _ => None,
                    })
                    .collect();
                if objects.len() == items.len() {
                    page.table(&object_rows(&objects));
                } else {
                    page.p(&v.cell());
                }
            }
            Json::Obj(o) if k == "counters" => {
                page.h3(&format!("{label}counters"));
                page.table(&counter_rows(o));
            }
            Json::Obj(o) => {
                page.h3(&format!("{label}{k}"));
                let mut rows = vec![vec!["key".to_string(), "value".to_string()]];
                rows.extend(o.iter().map(|(k, v)| vec![k.clone(), v.cell()]));
                page.table(&rows);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_a_row_per_counter_and_a_column_per_port() {
        let j: Json = serde_json::from_str(
            r#"{"sw1.p3": {"rx_pause_ctrl_phy": 2, "tx_bytes_phy": 10}, "hostA.bond0": {"tx_bytes_phy": 7, "np_cnp_sent": 1}}"#,
        )
        .unwrap();
        let Json::Obj(ports) = j else { panic!() };
        assert_eq!(
            counter_rows(&ports),
            vec![
                vec!["counter", "sw1.p3", "hostA.bond0"],
                vec!["rx_pause_ctrl_phy", "2", ""],
                vec!["tx_bytes_phy", "10", "7"],
                vec!["np_cnp_sent", "", "1"],
            ]
        );
    }

    #[test]
    fn objects_keep_their_key_order_and_nested_values_are_compact() {
        let j: Json = serde_json::from_str(
            r#"[{"z": 1, "a": [1, 2]}, {"a": null, "m": {"k": "v"}, "z": 2.5}]"#,
        )
        .unwrap();
        let Json::Arr(items) = j else { panic!() };
        let objects: Vec<&[(String, Json)]> = items
            .iter()
            .map(|i| match i {
                Json::Obj(o) => o.as_slice(),
                _ => panic!(),
            })
            .collect();
        assert_eq!(
            object_rows(&objects),
            vec![
                vec!["z", "a", "m"],
                vec!["1", "1, 2", ""],
                vec!["2.5", "-", "{\"k\": \"v\"}"],
            ]
        );
    }
}
