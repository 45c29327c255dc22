//! Generated fabrics: `[topology]` lowered into the explicit form.
//!
//! ```text
//!  [topology] kind = "fat-tree" | "leaf-spine" | "hpcc"   ("rail": crate::lower::rail)
//!      │  generate::topology (FatTree, LeafSpine), HpccTopology::to_topology, ecmp_routes
//!      ▼
//!  [[host]]   one per generated host: [topology.host] keys + name, gateway,
//!             [[host.nic]] eth0 = [topology.nic] keys + name, ip (a /24)
//!  [[switch]] one per switch: [topology.switch] keys + name, [[switch.route]]
//!  [[link]]   one per cable, with its tier's rate and delay, and a loss:
//!             the hpcc file's error rate, else [topology] link_loss
//! ```
//!
//! The generated tables are appended to the scenario's own before serde
//! reads it, so a generated fabric is exactly what one could have written
//! by hand: every key a `[[host]]`, `[[host.nic]]` or `[[switch]]` table
//! accepts can be given to all generated ones at once in the template
//! tables, and `--set host.host17.KEY=...` reaches one of them. Errors in
//! generated entries point at the `[topology]` table (a template's own
//! keys keep their place in the file).
//!
//! ECMP: every generated switch hashes with `hash = "murmur3"` and
//! `hash_seed` = its node id (the reference's `m_ecmpSeed = m_id`), unless
//! `[topology.switch]` sets `hash` or `hash_seed`. One seed on every
//! switch makes an aggregation switch send every flow it gets up the core
//! link of the same index as the aggregation switch itself
//! (polarisation: 3 of 4 core links idle in the reference's fat-tree);
//! a CRC with per-switch seeds still sends all the flows one edge switch
//! gives it up one link (`roce_codec::hash::EcmpHash`).
//!
//! Routes: every host has its own /24 (`x.y.z.1`, gateway `x.y.z.254`
//! answered by its edge switch). A switch gets the ECMP next hops of
//! [`ecmp_routes`] toward every host it is not cabled to; the next-hop
//! set most destinations share becomes the default route `0.0.0.0/0`
//! (an edge switch: all its uplinks), the others one /24 each.
//!
//! Multi-homed hosts (an hpcc file may cable a host to two ToRs, as the
//! reference's `ali_32host_10rack.txt` does): the host's NICs carry no
//! address; a `[[host.bond]]` `bond0` of all of them (balance-xor,
//! layer3+4, `lag = "queue-affinity"`: each QP keeps one port) holds it.
//! A flow of `[[traffic]]` whose host numbers its ports as the reference
//! does (`ecmp_ports = "flow"`) is then pinned to the NIC the reference's
//! `GetNicIdxOfQp` picks ([`crate::lower::traffic`], `client_lag_port`); other
//! QPs take the ports in turn. Every switch answers to one router MAC
//! (`ANYCAST_GATEWAY_MAC`): the bond sends the same frame out of either
//! NIC, and whichever switch gets it is the gateway.
//!
//! ```text
//!   tor0 (02:00:5e:00:ff:fe)     tor1 (02:00:5e:00:ff:fe)
//!        │ eth0 (port 1)              │ eth1 (port 2)
//!        └──────── n7.bond0 ──────────┘   10.0.7.1/24, a port per QP
//! ```

use std::fmt::Write as _;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use crate::diagnostic::{Diagnostic, KeyPath, ModelError, line_col};
use crate::generate::topology::{FatTree, LeafSpine, LinkSpec};
use crate::schema::LinkState;
use crate::tree::{SET_BASE, own_table, span_of};
use rocesim_model::topology::{HostId, LinkId, NodeId, Topology, ecmp_routes, route_table};

// The schema holds `[topology]`; its types keep their paths here too.
pub use crate::schema::{TierCfg, TopoLinkEventCfg, TopologyCfg, TopologyKind, resolve_path};

#[derive(Deserialize)]
struct Pre {
    topology: Option<TopologyCfg>,
}

/// Whether a `--set` must wait for the generated tables (it names one).
pub(crate) fn set_needs_fabric(key: &str) -> bool {
    ["host.", "switch.", "link."]
        .iter()
        .any(|p| key.starts_with(p))
}

/// One tier's links: `v`, else `default`, else an error naming `key`.
fn tier_spec(
    t: &TopologyCfg,
    v: Option<TierCfg>,
    key: &str,
    default: Option<TierCfg>,
) -> Result<LinkSpec, ModelError> {
    let at = KeyPath::root().key("topology");
    if v.is_some_and(|c| c.delay.is_some() && c.length.is_some()) {
        return Err(ModelError::new(
            at.key(key).key("length"),
            "a tier's links have a `delay` or a `length`, not both",
        )
        .hint("keep `length` (the propagation is 5 ns a metre) or `delay`, not both"));
    }
    v.or(default)
        .map(|c| LinkSpec::new(c.rate.0, c.propagation()))
        .ok_or_else(|| {
            ModelError::new(
                at.clone(),
                format!("kind = \"{}\" needs `{key}`", kind_name(t.kind)),
            )
            .hint(format!(
                "e.g. {key} = {{ rate = \"100Gbps\", delay = \"1us\" }}"
            ))
        })
}

/// The shape of a `kind = "rail"` fabric, every key checked.
fn rail_shape(t: &TopologyCfg) -> Result<crate::generate::rail::Rail, ModelError> {
    let host = tier_spec(t, t.host_link, "host_link", None)?;
    let fabric = tier_spec(t, t.fabric_link, "fabric_link", t.host_link)?;
    super::rail::shape(t, host, fabric)
}

/// Builds the graph `[topology]` describes.
pub fn build_topology(t: &TopologyCfg, base: &Path) -> Result<Topology, ModelError> {
    let at = KeyPath::root().key("topology");
    let need = |v: Option<u32>, key: &str| {
        v.ok_or_else(|| {
            ModelError::new(
                at.clone(),
                format!("kind = \"{}\" needs `{key}`", kind_name(t.kind)),
            )
        })
    };
    let tier = |v, key, default| tier_spec(t, v, key, default);
    if t.kind != TopologyKind::Rail {
        let rail_keys = [
            (t.servers.is_some(), "servers"),
            (t.nics_per_server.is_some(), "nics_per_server"),
            (t.servers_per_leaf.is_some(), "servers_per_leaf"),
            (t.planes.is_some(), "planes"),
            (t.subnet.is_some(), "subnet"),
        ];
        if let Some((_, key)) = rail_keys.iter().find(|k| k.0) {
            return Err(ModelError::new(
                at.key(key),
                format!(
                    "`{key}` is a key of kind = \"rail\", not of kind = \"{}\"",
                    kind_name(t.kind)
                ),
            )
            .hint("kind = \"rail\" generates GPU servers with one NIC per rail"));
        }
    }
    let built = match t.kind {
        TopologyKind::FatTree => {
            let k = need(t.k, "k")?;
            let host = tier(t.host_link, "host_link", None)?;
            let edge_agg = tier(t.edge_agg, "edge_agg", t.host_link)?;
            let agg_core = tier(t.agg_core, "agg_core", t.edge_agg.or(t.host_link))?;
            let mut f = FatTree::new(k, host, edge_agg, agg_core);
            if let Some(p) = t.pods {
                f.pods = p;
            }
            f.hosts_per_edge = match (t.hosts_per_edge, t.oversubscription) {
                (Some(h), _) => h,
                (None, Some(o)) => o.saturating_mul(k / 2),
                (None, None) => k / 2,
            };
            f.build()
        }
        TopologyKind::LeafSpine => LeafSpine {
            leaves: need(t.leaves, "leaves")?,
            spines: need(t.spines, "spines")?,
            hosts_per_leaf: need(t.hosts_per_leaf, "hosts_per_leaf")?,
            uplinks: t.uplinks.unwrap_or(1),
            host_link: tier(t.host_link, "host_link", None)?,
            fabric_link: tier(t.fabric_link, "fabric_link", t.host_link)?,
        }
        .build(),
        TopologyKind::Rail => rail_shape(t)?.build(),
        TopologyKind::Hpcc => {
            let file = t.file.as_deref().ok_or_else(|| {
                ModelError::new(at.clone(), "kind = \"hpcc\" needs `file`")
                    .hint("file = \"fat.txt\" (the reference's TOPOLOGY_FILE)")
            })?;
            let path = resolve_path(base, file);
            let h = rocesim_ns3::topology::read(&path)
                .map_err(|e| ModelError::new(at.key("file"), e.to_string()))?;
            h.to_topology()
        }
    };
    let mut topo = built.map_err(|e| ModelError::new(at.clone(), e.0))?;
    if let Some(p) = t.link_loss {
        if !(0.0..=1.0).contains(&p) {
            return Err(
                ModelError::new(at.key("link_loss"), format!("{p} is not a probability"))
                    .hint("between 0 and 1, e.g. link_loss = 0.0001"),
            );
        }
        topo.set_default_loss(p);
    }
    Ok(topo)
}

fn kind_name(k: TopologyKind) -> &'static str {
    match k {
        TopologyKind::FatTree => "fat-tree",
        TopologyKind::LeafSpine => "leaf-spine",
        TopologyKind::Rail => "rail",
        TopologyKind::Hpcc => "hpcc",
    }
}

/// [`expand`] for the scenario file at `path` (whose text is `text`),
/// with errors placed in it.
pub(crate) fn expand_located(
    tree: &mut Spanned<DeTable<'static>>,
    path: &Path,
    text: &str,
) -> Result<(), Diagnostic> {
    let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    expand(tree, &base).map_err(|e| {
        let (line, col) = match span_of(tree, &e.path) {
            Some(s) if s.start < SET_BASE => line_col(text, s.start),
            _ => (0, 0),
        };
        Diagnostic {
            file: path.display().to_string(),
            line,
            col,
            key: e.path.to_string(),
            msg: e.msg,
            hint: e.hint,
            from_set: None,
        }
    })
}

/// Expands `[topology]` in `tree` (see the module docs); no-op without one.
pub(crate) fn expand(tree: &mut Spanned<DeTable<'static>>, base: &Path) -> Result<(), ModelError> {
    let pre = Pre::deserialize(toml::de::Deserializer::from(tree.clone())).map_err(|e| {
        // At the key the value belongs to (`topology.subnet`), if serde says.
        let at = e
            .span()
            .and_then(|s| crate::tree::path_at(tree, s))
            .unwrap_or_else(|| KeyPath::root().key("topology"));
        ModelError::new(at, e.message().to_string())
    })?;
    let Some(cfg) = pre.topology else {
        return Ok(());
    };
    let topo = build_topology(&cfg, base)?;
    let events = link_events(&topo, &cfg)?;
    let text = match cfg.kind {
        TopologyKind::Rail => {
            let rail = rail_shape(&cfg)?;
            let mut s = super::rail::lowered_text(&rail, &topo, cfg.subnet.unwrap_or_default());
            links_text(&topo, &events, &mut s);
            s
        }
        _ => lowered_text(&topo, &events)?,
    };
    let span = field(tree.get_ref(), "topology").map_or(0..0, |v| v.span());
    let template = |name: &str| {
        field(tree.get_ref(), "topology")
            .and_then(|t| field_of(t.get_ref(), name))
            .cloned()
    };
    let (host_t, nic_t, switch_t) = (template("host"), template("nic"), template("switch"));
    let parsed = DeTable::parse(&text)
        .map_err(|e| ModelError::new(KeyPath::root().key("topology"), e.message().to_string()))?;
    let mut generated = own_table(parsed.into_inner());
    for (key, tmpl) in [("host", host_t), ("switch", switch_t), ("link", None)] {
        let Some(arr) = take(&mut generated, key) else {
            continue;
        };
        let DeValue::Array(items) = arr.into_inner() else {
            continue;
        };
        let mut out = Vec::new();
        for item in items {
            let mut item = respan(item, &span);
            if let DeValue::Table(t) = item.get_mut() {
                if key == "switch" {
                    // The template's hash choice wins over the generated
                    // one, and so does its router MAC over the anycast one.
                    for k in ["hash", "hash_seed", "mac"] {
                        if tmpl
                            .as_ref()
                            .and_then(|v| field_of(v.get_ref(), k))
                            .is_some()
                        {
                            take(t, k);
                        }
                    }
                }
                merge_template(t, tmpl.as_ref());
                if key == "host" {
                    if let Some(nics) = field_mut(t, "nic") {
                        if let DeValue::Array(a) = nics.get_mut() {
                            for n in a.iter_mut() {
                                if let DeValue::Table(nt) = n.get_mut() {
                                    merge_template(nt, nic_t.as_ref());
                                }
                            }
                        }
                    }
                }
            }
            out.push(item);
        }
        append(tree.get_mut(), key, out, &span);
    }
    Ok(())
}

/// The generated hosts, switches and links as TOML text.
/// Per link of `topo`, the `[[topology.link_event]]`s that name its ends.
fn link_events<'c>(
    topo: &Topology,
    cfg: &'c TopologyCfg,
) -> Result<Vec<Vec<&'c TopoLinkEventCfg>>, ModelError> {
    let mut per_link = vec![Vec::new(); topo.links().len()];
    for (i, e) in cfg.link_events.iter().enumerate() {
        let at = KeyPath::root()
            .key("topology")
            .key("link_event")
            .index(i)
            .key("between");
        let node = |name: &str| {
            topo.nodes()
                .iter()
                .position(|n| n.name == name)
                .ok_or_else(|| {
                    ModelError::new(at.clone(), format!("no node `{name}` in the fabric"))
                        .did_you_mean(name, topo.nodes().iter().map(|n| n.name.as_str()))
                })
        };
        let (a, b) = (node(&e.between[0])?, node(&e.between[1])?);
        let mut found = false;
        for (li, l) in topo.links().iter().enumerate() {
            let ends = (l.a.0 as usize, l.b.0 as usize);
            if ends == (a, b) || ends == (b, a) {
                per_link[li].push(e);
                found = true;
            }
        }
        if !found {
            return Err(ModelError::new(
                at,
                format!("no link between `{}` and `{}`", e.between[0], e.between[1]),
            ));
        }
    }
    Ok(per_link)
}

/// The router MAC every switch of a fabric with multi-homed hosts answers
/// to (locally administered).
pub(crate) const ANYCAST_GATEWAY_MAC: &str = "02:00:5e:00:ff:fe";

fn lowered_text(topo: &Topology, events: &[Vec<&TopoLinkEventCfg>]) -> Result<String, ModelError> {
    let routes =
        ecmp_routes(topo).map_err(|e| ModelError::new(KeyPath::root().key("topology"), e.0))?;
    let mut s = String::new();
    // A host cabled to more than one switch (the reference's
    // `ali_32host_10rack.txt`) holds its address on a bond of all its
    // links, each QP on one of them for its life, as the reference keeps a
    // QP on the NIC it picked (`RdmaHw::GetNicIdxOfQp`; flows get that very
    // NIC, `crate::lower::traffic`). Its gateway is then every switch it is
    // cabled to: they all answer to one router MAC, as an anycast gateway
    // does.
    let multi_homed = topo.multi_homed_hosts().next().is_some();
    for (i, &node) in topo.hosts().iter().enumerate() {
        let ip = topo.host_ip(HostId(i as u32)).octets();
        let cidr = format!("{}.{}.{}.{}/24", ip[0], ip[1], ip[2], ip[3]);
        let name = &topo.node(node).name;
        let _ = writeln!(
            s,
            "[[host]]\nname = \"{name}\"\ngateway = \"{}.{}.{}.254\"",
            ip[0], ip[1], ip[2]
        );
        let links = topo.links_of(node);
        let ports: Vec<String> = links
            .iter()
            .map(|&l| topo.local_port_name(l, node))
            .collect();
        for (k, port) in ports.iter().enumerate() {
            let _ = writeln!(s, "[[host.nic]]\nname = \"{port}\"");
            if k == 0 && links.len() == 1 {
                let _ = writeln!(s, "ip = \"{cidr}\"");
            }
        }
        if links.len() > 1 {
            let slaves: Vec<String> = ports.iter().map(|p| format!("\"{p}\"")).collect();
            let _ = writeln!(
                s,
                "[[host.bond]]\nname = \"bond0\"\nmode = \"balance-xor\"\nslaves = [{}]\n\
                 xmit_hash_policy = \"layer3+4\"\nlag = \"queue-affinity\"\nip = \"{cidr}\"",
                slaves.join(", ")
            );
        }
    }
    for (n, node) in topo.nodes().iter().enumerate() {
        let id = NodeId(n as u32);
        if !topo.is_switch(id) {
            continue;
        }
        // Seeded per switch with its node id, as the reference seeds its
        // switches: one seed for all, or a CRC, would polarise the tiers.
        let _ = writeln!(
            s,
            "[[switch]]\nname = \"{}\"\nhash = \"murmur3\"\nhash_seed = {n}",
            node.name
        );
        if multi_homed {
            let _ = writeln!(s, "mac = \"{ANYCAST_GATEWAY_MAC}\"");
        }
        // Destinations cabled here are the neighbour table's.
        for r in route_table(topo, &routes, id) {
            let via: Vec<String> = r
                .via
                .iter()
                .map(|&l| format!("\"{}\"", topo.local_port_name(l, id)))
                .collect();
            let [a, b, c, d] = r.prefix;
            let _ = writeln!(
                s,
                "[[switch.route]]\nprefix = \"{a}.{b}.{c}.{d}/{}\"\nvia = [{}]",
                r.len,
                via.join(", ")
            );
        }
    }
    links_text(topo, events, &mut s);
    Ok(s)
}

/// One `[[link]]` per link of `topo`, with its carrier changes.
fn links_text(topo: &Topology, events: &[Vec<&TopoLinkEventCfg>], s: &mut String) {
    for (i, l) in topo.links().iter().enumerate() {
        let id = LinkId(i as u32);
        let _ = writeln!(
            s,
            "[[link]]\na = \"{}\"\nb = \"{}\"\nrate = \"{}bps\"\ndelay = \"{}ps\"",
            topo.port_name(id, l.a),
            topo.port_name(id, l.b),
            l.rate.bps(),
            l.delay.0
        );
        if l.loss > 0.0 {
            let _ = writeln!(s, "loss = {:?}", l.loss);
        }
        let ev: Vec<String> = events
            .get(i)
            .into_iter()
            .flatten()
            .map(|e| {
                let state = match e.state {
                    LinkState::Down => "down",
                    LinkState::Up => "up",
                };
                format!("{{ at = \"{}ps\", state = \"{state}\" }}", e.at.0.0)
            })
            .collect();
        if !ev.is_empty() {
            let _ = writeln!(s, "event = [{}]", ev.join(", "));
        }
    }
}

fn field<'a>(t: &'a DeTable<'static>, key: &str) -> Option<&'a Spanned<DeValue<'static>>> {
    t.iter()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .map(|(_, v)| v)
}

fn field_of<'a>(v: &'a DeValue<'static>, key: &str) -> Option<&'a Spanned<DeValue<'static>>> {
    match v {
        DeValue::Table(t) => field(t, key),
        _ => None,
    }
}

fn field_mut<'a>(
    t: &'a mut DeTable<'static>,
    key: &str,
) -> Option<&'a mut Spanned<DeValue<'static>>> {
    t.iter_mut()
        .find(|(k, _)| k.get_ref().as_ref() == key)
        .map(|(_, v)| v)
}

fn take(t: &mut DeTable<'static>, key: &str) -> Option<Spanned<DeValue<'static>>> {
    let k = t.keys().find(|k| k.get_ref().as_ref() == key)?.clone();
    t.remove(&k)
}

/// Adds the template's keys the generated table does not set.
fn merge_template(t: &mut DeTable<'static>, tmpl: Option<&Spanned<DeValue<'static>>>) {
    let Some(DeValue::Table(tm)) = tmpl.map(|v| v.get_ref()) else {
        return;
    };
    for (k, v) in tm.iter() {
        if field(t, k.get_ref().as_ref()).is_none() {
            t.insert(k.clone(), v.clone());
        }
    }
}

/// Appends generated entries to the array of tables `key`.
fn append(
    t: &mut DeTable<'static>,
    key: &str,
    items: Vec<Spanned<DeValue<'static>>>,
    span: &Range<usize>,
) {
    if field(t, key).is_none() {
        t.insert(
            Spanned::new(span.clone(), key.to_string().into()),
            Spanned::new(span.clone(), DeValue::Array(DeArray::new())),
        );
    }
    if let Some(DeValue::Array(a)) = field_mut(t, key).map(|v| v.get_mut()) {
        for i in items {
            a.push(i);
        }
    }
}

/// The same value with every span replaced by `span`.
fn respan(v: Spanned<DeValue<'static>>, span: &Range<usize>) -> Spanned<DeValue<'static>> {
    let inner = match v.into_inner() {
        DeValue::Array(a) => DeValue::Array(a.into_iter().map(|e| respan(e, span)).collect()),
        DeValue::Table(t) => {
            let mut out = DeTable::new();
            for (k, v) in t {
                out.insert(Spanned::new(span.clone(), k.into_inner()), respan(v, span));
            }
            DeValue::Table(out)
        }
        other => other,
    };
    Spanned::new(span.clone(), inner)
}
