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
pub(super) fn check_names(sc: &Scenario) -> Result<(), ModelError> {
    let mut names: HashMap<&str, KeyPath> = HashMap::new();
    let hosts = sc
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (&h.name, host_key(i)));
    let switches = sc
        .switches
        .iter()
        .enumerate()
        .map(|(i, s)| (&s.name, switch_key(i)));
    for (n, at) in hosts.chain(switches) {
        let at = at.key("name");
        if n.is_empty() || n.contains('.') || n.contains('/') {
            return Err(ModelError::new(
                at,
                format!("name `{n}` must be non-empty and contain no `.` or `/`"),
            ));
        }
        if let Some(prev) = names.insert(n, at.clone()) {
            return Err(
                ModelError::new(at, format!("name `{n}` is already used by `{prev}`"))
                    .hint("host and switch names must be unique"),
            );
        }
    }
    Ok(())
}
