//! The reference's flow file (`flow_2to1.txt`, `ws30_10ms.txt`).
//!
//! ```text
//! 6558                               the number of flows (traffic_gen.py leaves a trailing space)
//! 189 56 3 100 9426 2.000000218      src dst priority dport size_bytes start_seconds
//! ...
//! ```
//!
//! `src` and `dst` are node ids of the topology file (hosts); `priority` is
//! the queue the flow's packets use (3 is the RDMA class); `dport` the UDP
//! destination port; flows start in file order, which the reference needs
//! sorted by start time.

use std::path::Path;

use super::{FormatError, Records, Trailing, parse_time};
use rocesim_model::flow::{FlowSpec, TrafficError, Verb};
use rocesim_model::time::Ps;
use rocesim_model::topology::{NodeId, Topology};

/// One flow line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HpccFlow {
    pub src: u32,
    pub dst: u32,
    /// Queue (priority group) 0..=7.
    pub priority: u8,
    pub dport: u16,
    pub size: u64,
    /// The start time as written, exactly (decimal seconds to picoseconds).
    pub start: Ps,
    /// Where the flow is written (0 if it was not read from a file).
    pub line: usize,
}

impl HpccFlow {
    /// The start in nanoseconds as the reference computes it, and as its
    /// FCT file's `start_ns` column shows it: the seconds read into a
    /// `double`, times 1e9, rounded down (ns-3's `Seconds()` at nanosecond
    /// resolution). `2.000000218` is the double 2.00000021799999..., so
    /// 2000000217 ns, one nanosecond before the written time.
    pub fn reference_start_ns(&self) -> u64 {
        let ps = self.start.as_ps();
        // The decimal as written (to the picosecond), read as a double the
        // way the reference's `>>` reads it: correctly rounded.
        let text = format!("{}.{:012}", ps / 1_000_000_000_000, ps % 1_000_000_000_000);
        floor_times_1e9(text.parse().unwrap_or(0.0))
    }
}

/// `floor(v * 1e9)` computed exactly on the double's value.
fn floor_times_1e9(v: f64) -> u64 {
    if v.is_nan() || v <= 0.0 {
        return 0;
    }
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let (mant, exp) = if exp == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), exp - 1075)
    };
    let x = u128::from(mant) * 1_000_000_000;
    let ns = if exp >= 0 {
        x.checked_shl(exp as u32).unwrap_or(u128::MAX)
    } else if exp > -128 {
        x >> (-exp) as u32
    } else {
        0
    };
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// A parsed flow file: the flows in file order and any lines after them.
#[derive(Debug, Clone, PartialEq)]
pub struct HpccFlows {
    pub flows: Vec<HpccFlow>,
    /// Non-blank lines after the flows the count line announces, which
    /// the reference never reads.
    pub trailing: Option<Trailing>,
}

/// Reads and parses a flow file; errors name the path as given.
pub fn read(path: &Path) -> Result<HpccFlows, FormatError> {
    super::read_with(path, parse)
}

/// Parses the text of a flow file called `file` (for messages).
pub fn parse(text: &str, file: &str) -> Result<HpccFlows, FormatError> {
    let mut recs = Records::new(file, text);
    let head = recs.header("a first line with the number of flows")?;
    head.expect_fields(&["flows"], "FLOWS")?;
    let n = head.uint(1, "flows", u64::from(u32::MAX))?;
    let mut flows: Vec<HpccFlow> = Vec::with_capacity(n as usize);
    while (flows.len() as u64) < n {
        let r = recs.declared(head.line, n, "flow", flows.len())?;
        r.expect_fields(
            &["src", "dst", "priority", "dport", "size", "start"],
            "src dst priority dport size_bytes start_seconds",
        )?;
        let src = r.uint(1, "src", u64::from(u16::MAX))? as u32;
        let dst = r.uint(2, "dst", u64::from(u16::MAX))? as u32;
        if src == dst {
            return Err(r.error(format!("a flow from node {src} to itself")));
        }
        let priority = r.uint(3, "priority", 7)? as u8;
        let dport = r.uint(4, "dport", u64::from(u16::MAX))? as u16;
        // The reference keeps the size in 32 bits.
        let size = r.uint(5, "size", u64::from(u32::MAX))?;
        if size == 0 {
            return Err(r.field_error(5, "size", "a flow carries at least 1 byte"));
        }
        let text = r.fields[5];
        let bad = || {
            r.field_error(
                6,
                "start",
                format!("expected seconds like 2.000000218, found '{text}'"),
            )
        };
        // A bare number of seconds: the reference reads a double, so a
        // unit would be misread (parse_time would take `2s`).
        text.parse::<f64>().map_err(|_| bad())?;
        let start = parse_time(text).map_err(|_| bad())?;
        if let Some(prev) = flows.last()
            && start < prev.start
        {
            return Err(r.field_error(
                6,
                "start",
                format!(
                    "{text} s is before the previous flow's start (line {}): the reference needs flows in start-time order",
                    prev.line
                ),
            ));
        }
        flows.push(HpccFlow {
            src,
            dst,
            priority,
            dport,
            size,
            start,
            line: r.line,
        });
    }
    Ok(HpccFlows {
        flows,
        trailing: recs.trailing(),
    })
}

/// The flows as a flow file the reference reads: the count, then one line
/// per flow with the start in seconds to the nanosecond (`%.9f`, as
/// traffic_gen.py writes it; finer parts are dropped).
pub fn write(flows: &[HpccFlow]) -> String {
    use std::fmt::Write;
    let mut s = format!("{}\n", flows.len());
    for f in flows {
        let ps = f.start.as_ps();
        let (secs, ns) = (ps / 1_000_000_000_000, (ps % 1_000_000_000_000) / 1000);
        let _ = writeln!(
            s,
            "{} {} {} {} {} {secs}.{ns:09}",
            f.src, f.dst, f.priority, f.dport, f.size
        );
    }
    s
}

/// The reference's flows on its topology (imported with
/// [`HpccTopology::to_topology`](crate::HpccTopology::to_topology)): node ids become host indices, each flow a
/// WRITE in its priority and port.
pub fn to_specs(flows: &[HpccFlow], topo: &Topology) -> Result<Vec<FlowSpec>, TrafficError> {
    let host = |node: u32, line: usize, what: &str| {
        if node as usize >= topo.nodes().len() {
            return Err(TrafficError(format!(
                "flow on line {line}: {what} node {node} does not exist (the topology has {} nodes)",
                topo.nodes().len()
            )));
        }
        topo.host_of(NodeId(node)).ok_or_else(|| {
            TrafficError(format!(
                "flow on line {line}: {what} node {node} is a switch, not a host"
            ))
        })
    };
    flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            Ok(FlowSpec {
                id: i as u32,
                src: host(f.src, f.line, "src")?,
                dst: host(f.dst, f.line, "dst")?,
                size_bytes: f.size,
                start: f.start,
                priority: f.priority,
                dport: f.dport,
                sport: 0,
                verb: Verb::Write,
            })
        })
        .collect()
}

/// Flows as the reference's flow lines (node ids of `topo`'s hosts), to
/// run the same traffic in the reference ([`write()`]).
/// The verb is dropped: the reference knows one kind of flow.
pub fn from_specs(flows: &[FlowSpec], topo: &Topology) -> Vec<HpccFlow> {
    flows
        .iter()
        .map(|f| HpccFlow {
            src: topo.host_node(f.src).0,
            dst: topo.host_node(f.dst).0,
            priority: f.priority,
            dport: f.dport,
            size: f.size_bytes,
            start: f.start,
            line: 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "2 \n2 1 3 100 200000000 2\n3 1 3 100 200000000 2.000000218\n";

    fn err(text: &str) -> String {
        parse(text, "f.txt").unwrap_err().to_string()
    }

    #[test]
    fn parses_and_writes_back() {
        let f = parse(TWO, "f.txt").unwrap();
        assert_eq!(f.trailing, None);
        let b = &f.flows[1];
        assert_eq!(
            (b.src, b.dst, b.priority, b.dport, b.size, b.start, b.line),
            (3, 1, 3, 100, 200_000_000, Ps(2_000_000_218_000), 3)
        );
        assert_eq!(f.flows[0].start, Ps::from_ms(2000));
        assert_eq!(f.flows[0].reference_start_ns(), 2_000_000_000);
        // The double below 2.000000218 makes the reference start it 1 ns early.
        assert_eq!(b.reference_start_ns(), 2_000_000_217);
        let text = write(&f.flows);
        assert_eq!(
            text,
            "2\n2 1 3 100 200000000 2.000000000\n3 1 3 100 200000000 2.000000218\n"
        );
        let again = parse(&text, "f.txt").unwrap();
        assert_eq!(again.flows[1].start, b.start);
        assert_eq!(again.flows[1].reference_start_ns(), b.reference_start_ns());
        let extra = parse(&format!("{TWO}\n4 1 3 100 5 3\n"), "f.txt").unwrap();
        assert_eq!(
            extra.trailing,
            Some(Trailing {
                first_line: 5,
                lines: 1
            })
        );
    }

    #[test]
    fn floor_of_the_double() {
        assert_eq!(floor_times_1e9(2.0), 2_000_000_000);
        assert_eq!(floor_times_1e9(0.5), 500_000_000);
        assert_eq!(floor_times_1e9(1e-9), 1); // 1.0000000000000000622e-9
        assert_eq!(floor_times_1e9(0.0), 0);
        assert_eq!(floor_times_1e9(2.009992193), 2_009_992_192);
    }

    #[test]
    fn malformed_lines() {
        assert_eq!(
            err(&TWO.replace("3 1 3 100", "3 1 9 100")),
            "f.txt:3: field 3 (priority): 9 is larger than 7"
        );
        assert_eq!(
            err(&TWO.replace("3 1 3 100", "3 3 3 100")),
            "f.txt:3: a flow from node 3 to itself"
        );
        assert_eq!(
            err(&TWO.replace("2.000000218", "2s")),
            "f.txt:3: field 6 (start): expected seconds like 2.000000218, found '2s'"
        );
        assert_eq!(
            err(&TWO.replace("2.000000218", "1.5")),
            "f.txt:3: field 6 (start): 1.5 s is before the previous flow's start (line 2): \
             the reference needs flows in start-time order"
        );
        assert_eq!(
            err(&TWO.replace("2 \n", "3\n")),
            "f.txt: the header (line 1) declares 3 flows, the file has 2"
        );
        assert_eq!(
            err(&TWO.replace("2 \n", "2 2\n")),
            "f.txt:1: expected 1 field `FLOWS`, found 2"
        );
        assert_eq!(
            err(&TWO.replace("200000000 2\n", "0 2\n")),
            "f.txt:2: field 5 (size): a flow carries at least 1 byte"
        );
        assert_eq!(
            err(&TWO.replace("200000000 2\n", "5000000000 2\n")),
            "f.txt:2: field 5 (size): 5000000000 is larger than 4294967295"
        );
        assert_eq!(
            err(&TWO.replace(" 100 200000000 2\n", " 100 200000000\n")),
            "f.txt:2: expected 6 fields `src dst priority dport size_bytes start_seconds`, found 5"
        );
        assert_eq!(
            err("\n\n"),
            "f.txt: empty: expected a first line with the number of flows"
        );
    }
}
