//! Which time series and per-host files a run writes: all of them, or, in
//! a large fabric (`[output] series = "summary"`, the default beyond
//! `LARGE_FABRIC_HOSTS` hosts), a summary: `tiers.csv` (every tier's ports
//! summed: hosts' NICs, then the switches by their distance from the
//! hosts, edge 1, aggregation 2, core 3), the series of the
//! [`BUSIEST`] busiest ports and of the ports and hosts `[output]` names,
//! those hosts' QPs and sysfs trees, and in counters.prom the counters of
//! those ports and hosts (summary.json keeps every port, QP and counter). A k = 16 fat-tree's run
//! directory goes from 106 MB to 8 MB: its 56,000 sysfs files
//! and 380,000 rows of ports.csv were most of it.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::{self, Write};

use super::intervals::gbps;
use crate::scenario::Scenario;
use crate::time::Ps;
use crate::world::World;

/// Ports whose series a summary keeps besides those asked for.
pub const BUSIEST: usize = 24;

/// What a run writes of its series.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Every series and tree (no summary).
    pub all: bool,
    /// By port index: its rows go to ports.csv.
    pub ports: Vec<bool>,
    /// By host index: its QPs' rows go to qps.csv, its sysfs tree is written.
    pub hosts: Vec<bool>,
    /// By port index: its tier (0 hosts' NICs, n: a switch n links from
    /// the nearest host).
    tiers: Vec<u8>,
}

impl Selection {
    /// Everything, as a small scenario's run writes it.
    pub fn all(w: &World) -> Selection {
        Selection {
            all: true,
            ports: vec![true; w.ports().len()],
            hosts: vec![true; w.hosts().len()],
            tiers: Vec::new(),
        }
    }

    /// The selection `sc`'s `[output]` asks for in its run's world `w`
    /// (built, not yet run: the busiest ports are chosen at the end,
    /// [`Selection::add_busiest`]). An unknown port or host is an error
    /// naming the key, in an all-series run too.
    pub fn of(sc: &Scenario, w: &World) -> Result<Selection, String> {
        let port_index: HashMap<&str, usize> =
            w.ports().enumerate().map(|(i, p)| (p.name(), i)).collect();
        let mut ports = vec![false; port_index.len()];
        for (i, name) in sc.output.ports.iter().enumerate() {
            let &p = port_index.get(name.as_str()).ok_or_else(|| {
                format!(
                    "output.ports[{i}]: no port `{name}` (a host NIC `host.nic` or a switch \
                     port `switch.port` of the scenario, e.g. `{}`)",
                    w.ports().next().map_or("", |p| p.name())
                )
            })?;
            ports[p] = true;
        }
        let mut hosts = vec![false; sc.hosts.len()];
        for (i, name) in sc.output.hosts.iter().enumerate() {
            let h = sc
                .hosts
                .iter()
                .position(|h| &h.name == name)
                .ok_or_else(|| {
                    format!(
                        "output.hosts[{i}]: no host `{name}` (e.g. `{}`)",
                        sc.hosts.first().map_or("", |h| h.name.as_str())
                    )
                })?;
            hosts[h] = true;
        }
        // The names are checked either way: a scenario that asks for a
        // port it lacks is wrong whatever it writes.
        if sc.output.all_series(sc.hosts.len()) {
            return Ok(Selection::all(w));
        }
        let node_tier = node_tiers(sc);
        let tiers = w
            .ports()
            .map(|p| {
                let node = p.name().split('.').next().unwrap_or("");
                node_tier.get(node).copied().unwrap_or(0)
            })
            .collect();
        Ok(Selection {
            all: false,
            ports,
            hosts,
            tiers,
        })
    }

    /// Adds the [`BUSIEST`] ports by bytes sent and received in the
    /// finished world `w` (ties to the first).
    pub fn add_busiest(&mut self, w: &World) {
        if self.all {
            return;
        }
        let mut by: Vec<(u64, usize)> = w
            .ports()
            .enumerate()
            .map(|(i, p)| {
                let c = p.counters();
                (c.tx_bytes + c.rx_bytes, i)
            })
            .collect();
        by.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        for &(_, i) in by.iter().take(BUSIEST) {
            self.ports[i] = true;
        }
    }

    /// The counters counters.prom holds: every port's, or in a summary
    /// those of the ports kept (the busiest and those asked for) and of
    /// the hosts asked for.
    pub fn counters<'a, T: Clone>(
        &self,
        w: &World,
        counters: &'a BTreeMap<String, T>,
    ) -> Cow<'a, BTreeMap<String, T>> {
        if self.all {
            return Cow::Borrowed(counters);
        }
        let hosts: HashSet<&str> = w
            .hosts()
            .enumerate()
            .filter(|(i, _)| self.host(*i))
            .map(|(_, h)| h.name())
            .collect();
        let ports: HashSet<&str> = w
            .ports()
            .enumerate()
            .filter(|(i, _)| self.ports[*i])
            .map(|(_, p)| p.name())
            .collect();
        let kept =
            |key: &str| ports.contains(key) || hosts.contains(key.split('.').next().unwrap_or(key));
        Cow::Owned(
            counters
                .iter()
                .filter(|(k, _)| kept(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    /// Whether the sysfs tree of host `h` is written.
    pub fn host(&self, h: usize) -> bool {
        self.hosts.get(h).copied().unwrap_or(self.all)
    }

    /// `tiers.csv` (summary runs): `t_ns,tier,ports,tx_bytes,rx_bytes,
    /// tx_gbps,rx_gbps,queued_bytes,drops`, every tier's ports summed at
    /// each sample time, rates over the interval ending there.
    pub fn tiers_csv(&self, w: &World, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(b"t_ns,tier,ports,tx_bytes,rx_bytes,tx_gbps,rx_gbps,queued_bytes,drops\n")?;
        let n = usize::from(self.tiers.iter().copied().max().unwrap_or(0)) + 1;
        let mut count = vec![0u64; n];
        for &t in &self.tiers {
            count[usize::from(t)] += 1;
        }
        let samples = w.port_samples();
        let mut prev: Option<(Ps, Vec<[u64; 4]>)> = None;
        let mut i = 0;
        while i < samples.len() {
            let t = samples[i].t;
            let mut sums = vec![[0u64; 4]; n];
            while i < samples.len() && samples[i].t == t {
                let s = &samples[i];
                let tier = usize::from(self.tiers.get(s.port as usize).copied().unwrap_or(0));
                let a = &mut sums[tier];
                a[0] += s.tx_bytes;
                a[1] += s.rx_bytes;
                a[2] += u64::from(s.queued);
                a[3] += s.drops;
                i += 1;
            }
            for (tier, a) in sums.iter().enumerate() {
                if count[tier] == 0 {
                    continue;
                }
                let (dtx, drx, dt) = prev.as_ref().map_or((0, 0, Ps::ZERO), |(pt, p)| {
                    (
                        a[0].saturating_sub(p[tier][0]),
                        a[1].saturating_sub(p[tier][1]),
                        t - *pt,
                    )
                });
                writeln!(
                    out,
                    "{},{},{},{},{},{:.3},{:.3},{},{}",
                    t.as_ns(),
                    tier_name(tier),
                    count[tier],
                    a[0],
                    a[1],
                    gbps(dtx, dt),
                    gbps(drx, dt),
                    a[2],
                    a[3]
                )?;
            }
            prev = Some((t, sums));
        }
        Ok(())
    }
}

/// A tier's name in tiers.csv.
fn tier_name(tier: usize) -> String {
    match tier {
        0 => "hosts".into(),
        1 => "edge".into(),
        2 => "aggregation".into(),
        3 => "core".into(),
        n => format!("switch-{n}"),
    }
}

/// Each node's tier: hosts 0, a switch the fewest links from any host.
fn node_tiers(sc: &Scenario) -> HashMap<&str, u8> {
    let mut adj: HashMap<&str, Vec<&str>> = HashMap::new();
    for l in &sc.links {
        let a = l.a.split('.').next().unwrap_or(&l.a);
        let b = l.b.split('.').next().unwrap_or(&l.b);
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default().push(a);
    }
    let mut tier: HashMap<&str, u8> = sc.hosts.iter().map(|h| (h.name.as_str(), 0)).collect();
    let mut queue: VecDeque<&str> = sc.hosts.iter().map(|h| h.name.as_str()).collect();
    while let Some(n) = queue.pop_front() {
        let d = tier[n];
        for &m in adj.get(n).map_or(&[][..], |v| v.as_slice()) {
            if !tier.contains_key(m) {
                tier.insert(m, d.saturating_add(1));
                queue.push_back(m);
            }
        }
    }
    tier
}
