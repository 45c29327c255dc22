//! The reference's topology file (`topology.txt`, `fat.txt`).
//!
//! ```text
//! 376 56 480                         NODES SWITCHES LINKS
//! 320 321 322 ... 375                the SWITCHES switch node ids
//! 0 320 100Gbps 1000ns 0.000000      LINKS lines: a b RATE DELAY ERROR_RATE
//! ...
//! ```
//!
//! Node ids run from 0 to NODES - 1; a node not listed as a switch is a
//! host. RATE and DELAY are ns-3 strings ([`super::parse_rate`],
//! [`super::parse_time`]); ERROR_RATE is the probability that a packet is
//! lost on the link. With no switches the switch line is absent (the
//! reference reads tokens, not lines).

use std::collections::HashMap;
use std::path::Path;

use roce_capture::human::plural;

use super::{FormatError, Records, Trailing, parse_rate, parse_time};
use rocesim_model::time::{Ps, Rate};
use rocesim_model::topology::{
    self, Addressing, Link, Node, NodeId, NodeKind, Port, Topology, TopologyError,
};

/// The reference's IPv4 addresses give a node id 16 bits.
const MAX_NODES: u64 = 1 << 16;

/// One link line.
#[derive(Debug, Clone, PartialEq)]
pub struct HpccLink {
    pub a: u32,
    pub b: u32,
    pub rate: Rate,
    pub delay: Ps,
    /// Packet loss probability on the link, 0..=1.
    pub error_rate: f64,
    /// Where the link is written, for messages about it.
    pub line: usize,
}

/// A parsed topology file: node count, which nodes are switches, links in
/// file order (the order in which the reference numbers each node's
/// interfaces, from 1).
#[derive(Debug, Clone, PartialEq)]
pub struct HpccTopology {
    is_switch: Vec<bool>,
    switches: Vec<u32>,
    links: Vec<HpccLink>,
    trailing: Option<Trailing>,
}

impl HpccTopology {
    /// NODES: ids run from 0 to this minus one.
    pub fn node_count(&self) -> u32 {
        self.is_switch.len() as u32
    }
    pub fn host_count(&self) -> u32 {
        self.node_count() - self.switches.len() as u32
    }
    /// The switch ids in the order line 2 lists them.
    pub fn switches(&self) -> &[u32] {
        &self.switches
    }
    pub fn is_switch(&self, node: u32) -> bool {
        self.is_switch.get(node as usize).copied().unwrap_or(false)
    }
    /// The window third.cc gives every QP with `HAS_WIN 1` and `GLOBAL_T 1`:
    /// the largest bandwidth-delay product between two hosts, and the
    /// largest round trip, both as `CalculateRoute` computes them: a
    /// breadth-first search from each host through switches (the first
    /// path found gives a node its delay), rtt = 2 x the one-way link
    /// delays in ns + one `payload`-byte packet's transmission time per
    /// hop, bdp = rtt x the path's slowest link / 8, in bytes.
    pub fn max_bdp(&self, payload: u32) -> (u64, u64) {
        let n = self.node_count() as usize;
        let mut nbrs: Vec<Vec<(u32, u64, u64)>> = vec![Vec::new(); n];
        for l in &self.links {
            let (delay, bw) = (l.delay.as_ns(), l.rate.bps());
            nbrs[l.a as usize].push((l.b, delay, bw));
            nbrs[l.b as usize].push((l.a, delay, bw));
        }
        // ns-3 walks a node's neighbours in its map's (pointer) order,
        // which follows creation: node ids.
        for v in &mut nbrs {
            v.sort_by_key(|&(m, _, _)| m);
        }
        let (mut max_bdp, mut max_rtt) = (0u64, 0u64);
        for host in (0..n as u32).filter(|&h| !self.is_switch(h)) {
            // (delay, tx delay, bandwidth) per reached node.
            let mut seen: Vec<Option<(u64, u64, u64)>> = vec![None; n];
            seen[host as usize] = Some((0, 0, u64::MAX));
            let mut queue = vec![host];
            let mut i = 0;
            while let Some(&now) = queue.get(i) {
                i += 1;
                let (d, tx, bw) = seen[now as usize].unwrap_or_default();
                for &(next, delay, rate) in &nbrs[now as usize] {
                    if seen[next as usize].is_some() || rate == 0 {
                        continue;
                    }
                    let hop_tx = u64::from(payload) * 1_000_000_000 * 8 / rate;
                    seen[next as usize] = Some((d + delay, tx + hop_tx, bw.min(rate)));
                    if self.is_switch(next) {
                        queue.push(next);
                    }
                }
            }
            for (other, reach) in seen.iter().enumerate() {
                let Some((delay, tx, bw)) = *reach else {
                    continue;
                };
                if self.is_switch(other as u32) {
                    continue;
                }
                let rtt = delay * 2 + tx;
                let bdp = (u128::from(rtt) * u128::from(bw) / 1_000_000_000 / 8) as u64;
                max_bdp = max_bdp.max(bdp);
                max_rtt = max_rtt.max(rtt);
            }
        }
        (max_bdp, max_rtt)
    }

    pub fn links(&self) -> &[HpccLink] {
        &self.links
    }
    /// Non-blank lines after the LINKS link lines, which the reference
    /// never reads.
    pub fn trailing(&self) -> Option<Trailing> {
        self.trailing
    }
}

/// Reads and parses a topology file; errors name the path as given.
pub fn read(path: &Path) -> Result<HpccTopology, FormatError> {
    super::read_with(path, parse)
}

/// Parses the text of a topology file called `file` (for messages).
pub fn parse(text: &str, file: &str) -> Result<HpccTopology, FormatError> {
    let mut recs = Records::new(file, text);
    let head = recs.header("a first line `NODES SWITCHES LINKS`")?;
    head.expect_fields(&["nodes", "switches", "links"], "NODES SWITCHES LINKS")?;
    let nodes = head.uint(1, "nodes", MAX_NODES)?;
    let n_switches = head.uint(2, "switches", nodes)?;
    let n_links = head.uint(3, "links", u64::from(u32::MAX))?;
    if nodes == 0 {
        return Err(head.field_error(1, "nodes", "a topology needs at least one node"));
    }
    let mut is_switch = vec![false; nodes as usize];
    let mut switches = Vec::with_capacity(n_switches as usize);
    if n_switches > 0 {
        let Some(line) = recs.next() else {
            return Err(recs.file_error(format!(
                "ends after the header: expected a line with {}",
                plural(n_switches, "switch id")
            )));
        };
        if line.fields.len() as u64 != n_switches {
            return Err(line.error(format!(
                "the header (line {}) declares {}, this line lists {}",
                head.line,
                plural(n_switches, "switch"),
                plural(line.fields.len() as u64, "id")
            )));
        }
        for i in 1..=line.fields.len() {
            let id = line.uint(i, "switch id", u64::MAX)?;
            if id >= nodes {
                return Err(line.field_error(
                    i,
                    "switch id",
                    format!(
                        "switch id {id} is out of range: the header declares {nodes} nodes (ids 0..={})",
                        nodes - 1
                    ),
                ));
            }
            if std::mem::replace(&mut is_switch[id as usize], true) {
                return Err(line.field_error(
                    i,
                    "switch id",
                    format!("switch {id} is listed twice"),
                ));
            }
            switches.push(id as u32);
        }
    }
    let mut links = Vec::with_capacity(n_links as usize);
    let mut seen: HashMap<(u32, u32), usize> = HashMap::with_capacity(n_links as usize);
    while (links.len() as u64) < n_links {
        let r = recs.declared(head.line, n_links, "link", links.len())?;
        r.expect_fields(
            &["a", "b", "rate", "delay", "error_rate"],
            "a b RATE DELAY ERROR_RATE",
        )?;
        let node = |n: usize, name: &'static str| -> Result<u32, FormatError> {
            let id = r.uint(n, name, u64::MAX)?;
            if id >= nodes {
                return Err(r.field_error(
                    n,
                    name,
                    format!(
                        "node {id} does not exist: the header declares {nodes} nodes (ids 0..={})",
                        nodes - 1
                    ),
                ));
            }
            Ok(id as u32)
        };
        let (a, b) = (node(1, "a")?, node(2, "b")?);
        if a == b {
            return Err(r.error(format!("a link from node {a} to itself")));
        }
        if let Some(first) = seen.insert((a.min(b), a.max(b)), r.line) {
            return Err(r.error(format!(
                "duplicate link {a}-{b}, first on line {first}: the reference keeps one link per node pair"
            )));
        }
        let rate = parse_rate(r.fields[2]).map_err(|m| r.field_error(3, "rate", m))?;
        let delay = parse_time(r.fields[3]).map_err(|m| r.field_error(4, "delay", m))?;
        let error_rate = r.float(5, "error_rate")?;
        if !(0.0..=1.0).contains(&error_rate) {
            return Err(r.field_error(
                5,
                "error_rate",
                format!("a loss probability is between 0 and 1, found {error_rate}"),
            ));
        }
        links.push(HpccLink {
            a,
            b,
            rate,
            delay,
            error_rate,
            line: r.line,
        });
    }
    Ok(HpccTopology {
        is_switch,
        switches,
        links,
        trailing: recs.trailing(),
    })
}

impl HpccTopology {
    /// The reference's topology as a graph: node n is the reference's node
    /// n (named `n<id>` or `sw<id>`), links in file order, ports numbered
    /// as the reference numbers interfaces, addresses by its rule.
    pub fn to_topology(&self) -> Result<Topology, TopologyError> {
        let t = self;
        let n = t.node_count() as usize;
        let mut nodes: Vec<Node> = (0..n as u32)
            .map(|i| {
                let (kind, name) = if t.is_switch(i) {
                    (NodeKind::Switch, format!("sw{i}"))
                } else {
                    (NodeKind::Host, format!("n{i}"))
                };
                Node {
                    name,
                    kind,
                    tier: 0,
                }
            })
            .collect();
        let mut next_port = vec![1u16; n];
        let mut port = |node: u32| {
            let p = &mut next_port[node as usize];
            let got = if t.is_switch(node) {
                Port::Down(*p)
            } else {
                Port::Nic(*p - 1)
            };
            *p = p.saturating_add(1);
            got
        };
        let links: Vec<Link> = t
            .links()
            .iter()
            .map(|l| Link {
                a: NodeId(l.a),
                a_port: port(l.a),
                b: NodeId(l.b),
                b_port: port(l.b),
                rate: l.rate,
                delay: l.delay,
                loss: l.error_rate,
            })
            .collect();
        for (i, tier) in topology::hop_distance_from_hosts(&nodes, &links)
            .into_iter()
            .enumerate()
        {
            nodes[i].tier = tier;
        }
        // The parser refused what `new` checks (ids, self-loops, rate 0),
        // and ports and names are unique by construction.
        Topology::new(nodes, links, Addressing::Hpcc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocesim_model::topology::{HostId, Routes, ecmp_routes};

    const STAR: &str =
        "4 1 3\n0\n0 1 100Gbps 1000ns 0\n0 2 100Gbps 0.001ms 0\n0 3 25Gbps 1us 0.5\n";

    fn err(text: &str) -> String {
        parse(text, "t.txt").unwrap_err().to_string()
    }

    #[test]
    fn a_star() {
        let t = parse(STAR, "t.txt").unwrap();
        assert_eq!((t.node_count(), t.host_count()), (4, 3));
        assert_eq!(t.switches(), &[0]);
        assert!(t.is_switch(0) && !t.is_switch(1) && !t.is_switch(9));
        let l = &t.links()[2];
        assert_eq!(
            (l.a, l.b, l.rate, l.delay, l.error_rate, l.line),
            (0, 3, Rate::gbps(25), Ps::from_us(1), 0.5, 5)
        );
        assert_eq!(t.links()[1].delay, Ps::from_us(1));
        assert_eq!(t.trailing(), None);
        // CRLF, blank lines and trailing notes as in the reference's own file.
        let crlf = STAR.replace('\n', "\r\n") + "\r\n0 9 1Gbps 1us 0\r\nnotes\r\n";
        let t2 = parse(&crlf, "t.txt").unwrap();
        assert_eq!(t2.links(), t.links());
        assert_eq!(
            t2.trailing(),
            Some(Trailing {
                first_line: 7,
                lines: 2
            })
        );
        // No switches: no switch line.
        let t3 = parse("2 0 1\n0 1 10Gbps 1us 0\n", "t.txt").unwrap();
        assert_eq!((t3.host_count(), t3.links().len()), (2, 1));
    }

    /// By hand, as third.cc computes it (and prints it: `maxRtt=4160
    /// maxBdp=52000` for the anchors' 100G star with 1 us links): two
    /// hops of 1000 ns each way plus two 1000-byte packets at 100G (80 ns
    /// each) is 4160 ns; x 100 Gb/s / 8 is 52,000 bytes. A slower link
    /// on the path sets the bandwidth: 1-2-... via the 25G host 3 gives
    /// rtt 2 x 2000 + 80 + 320 = 4400 ns at 25G, 13,750 bytes, less.
    #[test]
    fn the_window_is_the_largest_bandwidth_delay_product() {
        let t = parse(STAR, "t.txt").unwrap();
        assert_eq!(t.max_bdp(1000), (52_000, 4400));
        let two = parse("3 1 2\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n", "t.txt").unwrap();
        assert_eq!(two.max_bdp(1000), (52_000, 4160));
        // A chain of two switches: 3 hops, 6000 ns + 3 x 80 ns.
        let chain = parse(
            "4 2 3\n0 1\n2 0 100Gbps 1us 0\n0 1 100Gbps 1us 0\n1 3 100Gbps 1us 0\n",
            "t.txt",
        )
        .unwrap();
        assert_eq!(chain.max_bdp(1000), (78_000, 6240));
    }

    #[test]
    fn malformed_lines_name_file_line_and_field() {
        assert_eq!(
            err(&STAR.replace("0 3 25Gbps", "0 3 25Gbs")),
            "t.txt:5: field 3 (rate): expected a rate like 100Gbps, found '25Gbs' (did you mean `25Gbps`?)"
        );
        assert_eq!(
            err(&STAR.replace("1000ns", "1000nss")),
            "t.txt:3: field 4 (delay): expected a duration like 1000ns or 0.001ms, found '1000nss'"
        );
        assert_eq!(
            err(&STAR.replace("0 2 100Gbps", "0 7 100Gbps")),
            "t.txt:4: field 2 (b): node 7 does not exist: the header declares 4 nodes (ids 0..=3)"
        );
        assert_eq!(
            err(&STAR.replace("\n0\n", "\n4\n")),
            "t.txt:2: field 1 (switch id): switch id 4 is out of range: the header declares 4 nodes (ids 0..=3)"
        );
        assert_eq!(
            err(&STAR.replace("0 2 100Gbps", "1 0 100Gbps")),
            "t.txt:4: duplicate link 1-0, first on line 3: the reference keeps one link per node pair"
        );
        assert_eq!(
            err(&STAR.replace("4 1 3", "4 1 4")),
            "t.txt: the header (line 1) declares 4 links, the file has 3"
        );
        assert_eq!(
            err(&STAR.replace("4 1 3", "4 2 3")),
            "t.txt:2: the header (line 1) declares 2 switches, this line lists 1 id"
        );
        assert_eq!(
            err(&STAR.replace(" 0.5", "")),
            "t.txt:5: expected 5 fields `a b RATE DELAY ERROR_RATE`, found 4"
        );
        assert_eq!(
            err(&STAR.replace(" 0.5", " 2")),
            "t.txt:5: field 5 (error_rate): a loss probability is between 0 and 1, found 2"
        );
        assert_eq!(
            err(&STAR.replace("0 1 100Gbps", "1 1 100Gbps")),
            "t.txt:3: a link from node 1 to itself"
        );
        assert_eq!(
            err(&STAR.replace("4 1 3", "4 x 3")),
            "t.txt:1: field 2 (switches): expected a whole number, found 'x'"
        );
        assert_eq!(
            err(&STAR.replace("4 1 3", "4 5 3")),
            "t.txt:1: field 2 (switches): 5 is larger than 4"
        );
        assert_eq!(
            err(""),
            "t.txt: empty: expected a first line `NODES SWITCHES LINKS`"
        );
        assert_eq!(
            err("4 1 3\n"),
            "t.txt: ends after the header: expected a line with 1 switch id"
        );
    }

    /// Host 0 under switch 2, host 1 under switch 5, and two spines, 3 and
    /// 4, between them, cabled in id order. On the reference's topology a
    /// search visits switches by descending id (by address): from host 1,
    /// switch 5 queues 4 before 3, so switch 2's next hops toward host 1
    /// are [to 4, to 3], the order its ECMP hash indexes. Link order (any
    /// other topology) gives [to 3, to 4].
    #[test]
    fn the_references_topologies_are_searched_by_address() {
        let text = "6 4 6\n2 3 4 5\n0 2 100Gbps 1000ns 0\n1 5 100Gbps 1000ns 0\n\
                    2 3 100Gbps 1000ns 0\n2 4 100Gbps 1000ns 0\n\
                    3 5 100Gbps 1000ns 0\n4 5 100Gbps 1000ns 0\n";
        let file = parse(text, "t.txt").unwrap();
        let topo = file.to_topology().unwrap();
        let peers = |t: &Topology, r: &Routes| -> Vec<u32> {
            r.next_hops(NodeId(2), HostId(1))
                .iter()
                .map(|&l| t.peer(l, NodeId(2)).0)
                .collect()
        };
        let routes = ecmp_routes(&topo).unwrap();
        assert_eq!(peers(&topo, &routes), [4, 3]);
        // The same graph addressed as rocesim's own: link order.
        let own = Topology::new(
            topo.nodes().to_vec(),
            topo.links().to_vec(),
            Addressing::Sequential,
        )
        .unwrap();
        assert_eq!(peers(&own, &ecmp_routes(&own).unwrap()), [3, 4]);
    }
}
