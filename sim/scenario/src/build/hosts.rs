//! Hosts: their NICs, bonds and interfaces (each one RDMA device), checked
//! host by host before it is built; then every address must be unique.

use std::collections::HashMap;

use core::net::Ipv4Addr;

use super::names::{host_key, iface_key};
use super::roce_mtu;
use crate::diagnostic::{KeyPath, ModelError};
use crate::schema::{HostCfg, Scenario};
use rocesim_model::cc::{Algorithm, NotificationPoint};
use rocesim_model::rng::component_rng;
use rocesim_model::time::Ps;
use rocesim_model::world::World;
use rocesim_model::world::bond::Bond;
use rocesim_model::world::host::{Host, HostBond, Iface, IfaceKind, Nic};
use rocesim_model::world::profile::NicProfile;
use rustc_hash::FxHashMap as FastMap;

pub(super) fn add_hosts(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    for (hi, hc) in sc.hosts.iter().enumerate() {
        check_host(hc, hi)?;
        let mut profile = crate::profile::host_profile(hc, hi)?;
        hpcc_base_rtt(&mut profile, sc, hi)?;
        let host = build_host(w, sc.seed, hc, hi, profile);
        w.hosts.push(host);
    }
    check_unique_ips(w, sc)
}

/// HPCC's base RTT where `[host.cc.hpcc]` gives none: the largest base
/// RTT of the flows' paths, as the reference's `GLOBAL_T 1` takes the
/// largest of its host pairs'. Without flows there is nothing to take it
/// from.
fn hpcc_base_rtt(p: &mut NicProfile, sc: &Scenario, hi: usize) -> Result<(), ModelError> {
    let Algorithm::Hpcc(prm) = &mut p.algorithm else {
        return Ok(());
    };
    if prm.base_rtt.is_some() {
        return Ok(());
    }
    match sc
        .flows
        .iter()
        .map(|f| f.path_rtt)
        .max()
        .filter(|t| *t > Ps::ZERO)
    {
        Some(t) => {
            prm.base_rtt = Some(t);
            Ok(())
        }
        None => Err(ModelError::new(
            host_key(hi).key("cc").key("hpcc").key("base_rtt"),
            "HPCC needs a base RTT, and with no [[traffic]] flows there is no path to take it from",
        )
        .hint("give the base RTT of the fabric's longest path, e.g. base_rtt = \"8.3us\"")),
    }
}

/// HPCC-PINT's switch side, where a host runs it: every switch computes
/// its ports' utilisation with the log base of the hosts' power and T the
/// largest of their base RTTs (the reference's switches take `MaxRtt`,
/// the fabric's largest; its log base is one for the run, so hosts that
/// disagree on it are refused).
pub(crate) fn enable_pint(w: &mut World) -> Result<(), ModelError> {
    let mut fabric: Option<(usize, f64, Ps)> = None;
    for (hi, h) in w.hosts.iter().enumerate() {
        let Algorithm::Hpcc(prm) = &h.profile.algorithm else {
            continue;
        };
        let (Some(pint), Some(t)) = (prm.pint, prm.base_rtt) else {
            continue;
        };
        match &mut fabric {
            None => fabric = Some((hi, pint.log_base, t)),
            Some((first, base, _)) if *base != pint.log_base => {
                return Err(ModelError::new(
                    host_key(hi).key("cc").key("hpcc").key("pint_log_base"),
                    format!(
                        "is {} but host {} runs HPCC-PINT with {}: the switches encode one log base",
                        pint.log_base, w.hosts[*first].name, base
                    ),
                ));
            }
            Some((_, _, tmax)) => *tmax = (*tmax).max(t),
        }
    }
    if let Some((_, base, t)) = fabric {
        w.enable_pint(base, t);
    }
    Ok(())
}

/// Everything about one host that its own table decides.
fn check_host(hc: &HostCfg, hi: usize) -> Result<(), ModelError> {
    let at = host_key(hi);
    if let Some(roce) = hc.roce.filter(|&r| !hc.roce_modes.supports(r)) {
        return Err(ModelError::new(
            at.key("roce"),
            format!(
                "host `{}` has roce = \"{}\" but its NICs support RoCE v1 only (roce_modes = \"v1\")",
                hc.name,
                roce.name()
            ),
        )
        .hint("use roce = \"v1\", or roce_modes = \"v1+v2\" (ConnectX-4 and later)"));
    }
    if hc.arp_ignore > 2 {
        return Err(ModelError::new(
            at.key("arp_ignore"),
            format!("arp_ignore = {} is not modelled", hc.arp_ignore),
        )
        .hint(
            "use 0 (reply for any local address), 1 (only the receiving interface's address) or 2",
        ));
    }
    if hc.arp_announce > 2 {
        return Err(ModelError::new(
            at.key("arp_announce"),
            format!("arp_announce = {} is out of range", hc.arp_announce),
        )
        .hint("the kernel accepts 0, 1 or 2"));
    }
    if hc.rp_filter > 2 {
        return Err(ModelError::new(
            at.key("rp_filter"),
            format!("rp_filter = {} is out of range", hc.rp_filter),
        )
        .hint("use 0 (no check), 1 (strict: the reverse route must use the receiving interface) or 2 (loose)"));
    }
    if hc.nics.is_empty() {
        return Err(ModelError::new(
            at.key("nic"),
            format!("host `{}` has no [[host.nic]]", hc.name),
        ));
    }
    let mut seen = HashMap::new();
    for (ni, nc) in hc.nics.iter().enumerate() {
        let nic_at = at.key("nic").index(ni);
        if seen.insert(nc.name.as_str(), ni).is_some() || nc.name.contains('.') {
            return Err(ModelError::new(
                nic_at.key("name"),
                format!("NIC name `{}` is repeated or contains `.`", nc.name),
            ));
        }
        check_ifname(&nc.name, nic_at.key("name"))?;
        if !(576..=9216).contains(&nc.mtu) {
            return Err(ModelError::new(
                nic_at.key("mtu"),
                format!("MTU {} is impossible for Ethernet", nc.mtu),
            )
            .hint("use 1500 (default), 4200 or 9000; RoCE needs at least 352 + headers"));
        }
        if roce_mtu(nc.mtu).is_none() {
            return Err(ModelError::new(
                nic_at.key("mtu"),
                format!("MTU {} leaves no room for a 256-byte RoCE MTU", nc.mtu),
            ));
        }
        if let Some(gw) = nc.gateway.map(|g| g.0) {
            match nc.ip {
                Some(net) if net.contains(gw) && net.addr != gw => {}
                Some(net) => {
                    return Err(ModelError::new(
                        nic_at.key("gateway"),
                        format!(
                            "gateway {gw} of NIC `{}` is not another address on its subnet {net}",
                            nc.name
                        ),
                    )
                    .hint("the interface's gateway is its router's address on the interface's own subnet"));
                }
                None => {
                    return Err(ModelError::new(
                        nic_at.key("gateway"),
                        format!("NIC `{}` has a gateway but no `ip`", nc.name),
                    )
                    .hint("give the NIC its address, e.g. ip = \"10.3.0.1/24\", or move the gateway to the host"));
                }
            }
        }
        if let Some(v) = nc.vlan {
            if v == 0 || v > 4094 {
                return Err(ModelError::new(
                    nic_at.key("vlan"),
                    format!("VLAN id {v} is out of range 1..=4094"),
                ));
            }
        }
    }
    let mut enslaved = vec![false; hc.nics.len()];
    for (bi, bc) in hc.bonds.iter().enumerate() {
        let bond_at = at.key("bond").index(bi);
        check_ifname(&bc.name, bond_at.key("name"))?;
        if seen.contains_key(bc.name.as_str()) {
            return Err(ModelError::new(
                bond_at.key("name"),
                format!("`{}` is already a NIC of host `{}`", bc.name, hc.name),
            ));
        }
        if bc.slaves.len() < 2 {
            return Err(ModelError::new(
                bond_at.key("slaves"),
                format!("bond `{}` needs at least two slaves", bc.name),
            ));
        }
        if bc.slaves.len() > 4 {
            return Err(ModelError::new(
                bond_at.key("slaves"),
                "an mlx5 RoCE LAG spans at most 4 ports",
            ));
        }
        if bc.lag_buckets == 0 || bc.lag_buckets > 16 {
            return Err(ModelError::new(
                bond_at.key("lag_buckets"),
                "must be 1..=16",
            ));
        }
        if bc.ip.is_none() {
            return Err(ModelError::new(
                bond_at.key("name"),
                format!("bond `{}` has no `ip`", bc.name),
            )
            .hint("add e.g. ip = \"10.0.0.1/24\""));
        }
        for (si, sname) in bc.slaves.iter().enumerate() {
            let slave_at = bond_at.key("slaves").index(si);
            let Some(&ni) = seen.get(sname.as_str()) else {
                return Err(ModelError::new(
                    slave_at,
                    format!("host `{}` has no NIC `{sname}`", hc.name),
                )
                .did_you_mean(sname, hc.nics.iter().map(|n| n.name.as_str())));
            };
            if std::mem::replace(&mut enslaved[ni], true) {
                return Err(ModelError::new(
                    slave_at,
                    format!("NIC `{sname}` is already a slave of a bond"),
                ));
            }
            if hc.nics[ni].ip.is_some() {
                return Err(ModelError::new(
                    at.key("nic").index(ni).key("ip"),
                    format!(
                        "NIC `{sname}` is a slave of bond `{}` and cannot have its own address",
                        bc.name
                    ),
                )
                .hint("move the address to the bond"));
            }
        }
    }
    Ok(())
}

/// A name the kernel accepts for a netdev (`dev_valid_name` in
/// net/core/dev.c): 1 to 15 bytes, not `.` or `..`, no `/`, `:` or
/// white space. The run directory's `sysfs/<host>/class/net/<name>` needs
/// it too.
fn check_ifname(name: &str, at: KeyPath) -> Result<(), ModelError> {
    let bad = name.is_empty()
        || name.len() >= 16
        || name == "."
        || name == ".."
        || name.contains(|c: char| c == '/' || c == ':' || c.is_whitespace());
    if bad {
        return Err(
            ModelError::new(at, format!("`{name}` is no Linux interface name"))
                .hint("1 to 15 characters, no `/`, `:` or spaces (the kernel's dev_valid_name)"),
        );
    }
    Ok(())
}

/// Builds a checked host: NICs (MACs assigned), then its bonds (each one
/// interface over its slaves), then one interface per other NIC.
fn build_host(w: &mut World, seed: u64, hc: &HostCfg, hi: usize, profile: NicProfile) -> Host {
    let mut host = Host {
        name: hc.name.clone(),
        roce: hc.roce.unwrap_or(hc.roce_modes.newest()),
        roce_modes: hc.roce_modes,
        icmp_peers: FastMap::default(),
        icmp_ident: 0,
        elsewhere: false,
        icmp_sent: 0,
        icmp_suppressed: 0,
        trust: profile.trust,
        arp_ignore: hc.arp_ignore,
        rp_filter: hc.rp_filter,
        arp_announce: hc.arp_announce,
        policy_routing: hc.policy_routing,
        gateway: hc.gateway.map(|g| g.0),
        nics: Vec::new(),
        ifaces: Vec::new(),
        neigh: FastMap::default(),
        profile,
    };
    for (ni, nc) in hc.nics.iter().enumerate() {
        let mac = nc.mac.map_or(
            [
                0x02,
                0x00,
                0x00,
                (hi >> 8) as u8,
                (ni + 1) as u8,
                (hi + 1) as u8,
            ],
            |m| m.0,
        );
        let mut nic = Nic::new(nc.name.clone(), mac);
        if let Some(d) = host.profile.dcqcn.as_ref().filter(|d| d.np_prios != 0) {
            nic.np = Some(NotificationPoint::new(&d.params));
        }
        host.nics.push(nic);
    }
    let nic_index = |name: &str| hc.nics.iter().position(|n| n.name == name).unwrap() as u32;
    for bc in &hc.bonds {
        let slaves: Vec<u32> = bc.slaves.iter().map(|s| nic_index(s)).collect();
        let iface = host.ifaces.len() as u32;
        for (si, &n) in slaves.iter().enumerate() {
            let nic = &mut host.nics[n as usize];
            nic.slave = Some(si as u32);
            nic.iface = iface;
        }
        let bond_id = w.bonds.len() as u32;
        let full_name = format!("{}.{}", hc.name, bc.name);
        let mut bond = Bond::new(
            full_name.clone(),
            bc.mode,
            bc.xmit_hash_policy,
            bc.miimon.0,
            bc.updelay.0,
            bc.downdelay.0,
            bc.lag,
            bc.lag_hash,
            bc.lag_buckets,
            slaves.iter().map(|&n| (n, u32::MAX)).collect(),
            component_rng(seed, &format!("bond:{full_name}")),
        );
        bond.num_grat_arp = bc.num_grat_arp;
        w.bonds.push(HostBond {
            host: hi as u32,
            iface,
            bond,
        });
        host.ifaces.push(Iface {
            name: bc.name.clone(),
            kind: IfaceKind::Bond(bond_id),
            mac: bc.mac.map_or(host.nics[slaves[0] as usize].mac, |m| m.0),
            ip: bc.ip,
            gateway: None,
            mtu: slaves
                .iter()
                .map(|&n| hc.nics[n as usize].mtu)
                .min()
                .unwrap(),
            vlan: hc.nics[slaves[0] as usize].vlan,
            qpns: FastMap::default(),
        });
    }
    for (ni, nc) in hc.nics.iter().enumerate() {
        if host.nics[ni].slave.is_some() {
            continue;
        }
        let iface = host.ifaces.len() as u32;
        host.nics[ni].iface = iface;
        host.ifaces.push(Iface {
            name: nc.name.clone(),
            kind: IfaceKind::Nic(ni as u32),
            mac: host.nics[ni].mac,
            ip: nc.ip,
            gateway: nc.gateway.map(|g| g.0),
            mtu: nc.mtu,
            vlan: nc.vlan,
            qpns: FastMap::default(),
        });
    }
    host
}

/// One address, one interface.
fn check_unique_ips(w: &World, sc: &Scenario) -> Result<(), ModelError> {
    let mut ips: HashMap<Ipv4Addr, (usize, usize)> = HashMap::new();
    for (hi, h) in w.hosts.iter().enumerate() {
        for (ii, f) in h.ifaces.iter().enumerate() {
            let Some(ip) = f.ip else { continue };
            if let Some((oh, oi)) = ips.insert(ip.addr, (hi, ii)) {
                let other = &w.hosts[oh];
                return Err(ModelError::new(
                    iface_key(sc, hi, &f.name).key("ip"),
                    format!(
                        "address {} is also on {}.{}",
                        ip.addr, other.name, other.ifaces[oi].name
                    ),
                ));
            }
        }
    }
    Ok(())
}
