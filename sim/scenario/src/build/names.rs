//! Names and where they are: key paths for errors, the names hosts and
//! switches claim, and the scenario-wide checks that come first.

use std::collections::HashMap;

use crate::diagnostic::{KeyPath, ModelError};
use crate::schema::Scenario;
use rocesim_model::time::Ps;

/// The scenario's top level.
pub(super) fn root() -> KeyPath {
    KeyPath::root()
}

/// `host[hi]`.
pub(super) fn host_key(hi: usize) -> KeyPath {
    root().key("host").index(hi)
}

/// `switch[si]`.
pub(super) fn switch_key(si: usize) -> KeyPath {
    root().key("switch").index(si)
}

/// The table an interface of host `hi` comes from: `host[hi].bond[b]` or
/// `host[hi].nic[n]`.
pub(super) fn iface_key(sc: &Scenario, hi: usize, iface: &str) -> KeyPath {
    let h = &sc.hosts[hi];
    if let Some(b) = h.bonds.iter().position(|b| b.name == iface) {
        return host_key(hi).key("bond").index(b);
    }
    let n = h.nics.iter().position(|n| n.name == iface).unwrap_or(0);
    host_key(hi).key("nic").index(n)
}

/// What must hold before anything else is looked at: a usable scenario
/// name, a sample interval, at least one host.
pub(super) fn check_scenario(sc: &Scenario) -> Result<(), ModelError> {
    if let Some(n) = &sc.name {
        // It names the default run directory, runs/<name>/.
        if n.is_empty() || n == "." || n == ".." || n.contains(['/', '\\']) {
            return Err(ModelError::new(
                root().key("name"),
                format!("scenario name `{n}` must be a plain directory name"),
            )
            .hint("the default output is runs/<name>/; use e.g. name = \"lag_hash\""));
        }
    }
    if sc.sim.sample_interval.is_some_and(|d| d.0.as_ps() == 0) {
        return Err(ModelError::new(
            root().key("sim").key("sample_interval"),
            "must be greater than 0",
        ));
    }
    if let Some(d) = sc.sim.tx_time_step {
        if d.0.as_ps() == 0 || d.0 > Ps::from_us(1) {
            return Err(ModelError::new(
                root().key("sim").key("tx_time_step"),
                format!("{} ps is outside 1ps..=1us", d.0.as_ps()),
            )
            .hint("1ps (the default) times frames exactly; \"1ns\" truncates as the ns-3 reference does"));
        }
    }
    if sc.hosts.is_empty() {
        return Err(ModelError::new(root(), "the scenario has no [[host]]")
            .hint("add at least two [[host]] tables and a [[link]] between them"));
    }
    Ok(())
}

/// Host and switch names are unique and usable in dotted endpoints.
pub(super) fn check_names(sc: &Scenario) -> Result<Nodes<'_>, ModelError> {
    let mut names: HashMap<&str, Node> = HashMap::new();
    let hosts = sc
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (&h.name, Node::Host(i)));
    let switches = sc
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.name, Node::Switch(i)));
    for (n, node) in hosts.chain(switches) {
        let at = node.key().key("name");
        if n.is_empty() || n.contains('.') || n.contains('/') {
            return Err(ModelError::new(
                at,
                format!("name `{n}` must be non-empty and contain no `.` or `/`"),
            ));
        }
        if let Some(prev) = names.insert(n, node) {
            let prev = prev.key().key("name");
            return Err(
                ModelError::new(at, format!("name `{n}` is already used by `{prev}`"))
                    .hint("host and switch names must be unique"),
            );
        }
    }
    Ok(Nodes(names))
}

/// A host or switch, by its index in the scenario (and the world, which
/// adds them in the scenario's order).
#[derive(Debug, Clone, Copy)]
pub(super) enum Node {
    Host(usize),
    Switch(usize),
}

impl Node {
    fn key(self) -> KeyPath {
        match self {
            Node::Host(i) => host_key(i),
            Node::Switch(i) => switch_key(i),
        }
    }
}

/// Hosts and switches by name: a fabric of thousands of hosts names each
/// in its links and workloads, and a scan per name made building it
/// quadratic.
pub(super) struct Nodes<'a>(HashMap<&'a str, Node>);

impl Nodes<'_> {
    /// The index of host `name`.
    pub(super) fn host(&self, name: &str) -> Option<usize> {
        match self.0.get(name) {
            Some(&Node::Host(i)) => Some(i),
            _ => None,
        }
    }

    /// The index of switch `name`.
    pub(super) fn switch(&self, name: &str) -> Option<usize> {
        match self.0.get(name) {
            Some(&Node::Switch(i)) => Some(i),
            _ => None,
        }
    }
}
