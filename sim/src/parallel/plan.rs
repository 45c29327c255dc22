//! How a fabric is cut into the parts of a parallel run.
//!
//! Switches by tier (their distance from the hosts), each tier cut by
//! index into `n` runs of (nearly) equal length, the first to part 0, so
//! that a fat-tree's pods (numbered in order) stay whole as far as `n`
//! allows; a host goes with the switch it hangs from. A fabric with one
//! switch next to the hosts (a star) puts the senders (the flows' and
//! workloads' clients), cut into `n - 1` runs by index, in parts 1 and
//! up, and the switch and the receivers in part 0: a request crosses
//! once, its ACK once.
//!
//! Parts only meet on links, and a frame sent on a link arrives at least
//! the link's delay later: the smallest delay across the cut (the plan's
//! `lookahead`) is how far both parts may run at once.

use rocesim_model::engine::Event;
use rocesim_model::time::Ps;
use rocesim_model::world::World;
use rocesim_model::world::port::Owner;
use rocesim_model::world::qp::Role;

/// How the fabric is cut.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Part of each port, host and switch.
    pub port_part: Vec<u8>,
    pub host_part: Vec<u8>,
    pub switch_part: Vec<u8>,
    /// The smallest delay of a frame from one part to the other.
    pub lookahead: Ps,
}

/// Cuts world `w` into `n` parts (2 or more), or says why it cannot be.
pub fn plan(w: &World, n: u8) -> Result<Plan, String> {
    debug_assert!(n >= 2);
    let refuse = |what: &str| Err(format!("{what} need one partition"));
    if w.reroute.is_some() {
        return refuse("re-routing on link changes (`[topology] reroute`)");
    }
    // A collective's ranks share one state across the fabric.
    if w.collectives().next().is_some() {
        return refuse("NCCL collectives (`[[collective]]`)");
    }
    for ev in w.sched.pending_events() {
        match ev {
            Event::Link { .. } => return refuse("link changes (`[[link.event]]`)"),
            Event::ArpStart { .. } | Event::ArpRetry { .. } | Event::KernelTx { .. } => {
                return refuse("ARP on the wire (`sim.arp = \"frames\"`)");
            }
            Event::SocketStart { .. } | Event::CmStart { .. } | Event::CmTimeout { .. } => {
                return refuse("connection set-up (`workload.connect`)");
            }
            _ => {}
        }
    }
    // The switch at the far end of each port, if any.
    let far_switch = |p: u32| -> Option<u32> {
        let peer = w.ports[p as usize].peer();
        match w.ports.get(peer as usize)?.owner() {
            Owner::Switch { sw, .. } => Some(sw),
            Owner::Host { .. } => None,
        }
    };
    // Tiers: 1 for a switch next to a host, n + 1 next to tier n.
    let mut tier = vec![0u32; w.switches.len()];
    let mut frontier: Vec<u32> = Vec::new();
    for (i, p) in w.ports.iter().enumerate() {
        if let (Owner::Host { .. }, Some(sw)) = (p.owner(), far_switch(i as u32)) {
            if tier[sw as usize] == 0 {
                tier[sw as usize] = 1;
                frontier.push(sw);
            }
        }
    }
    let edge = frontier.len();
    let mut level = 1;
    while !frontier.is_empty() {
        level += 1;
        let mut next = Vec::new();
        for (i, p) in w.ports.iter().enumerate() {
            if let (Owner::Switch { sw, .. }, Some(far)) = (p.owner(), far_switch(i as u32)) {
                if tier[sw as usize] == level - 1 && tier[far as usize] == 0 {
                    tier[far as usize] = level;
                    next.push(far);
                }
            }
        }
        frontier = next;
    }
    let mut switch_part = vec![0u8; w.switches.len()];
    let mut host_part = vec![0u8; w.hosts.len()];
    if edge < 2 {
        // A star: the hosts that send (flows' and workloads' clients) in
        // part 1, the switch and the receivers in part 0. A frame then
        // crosses once each way (a request in, its ACK out), and the
        // senders' QP work weighs about what the switch's and the
        // receivers' hops do.
        let mut senders = vec![false; w.hosts.len()];
        for p in &w.pending {
            senders[p.client_host() as usize] = true;
        }
        for q in &w.qps {
            if q.role == Role::Client {
                senders[q.host as usize] = true;
            }
        }
        let senders: Vec<usize> = (0..senders.len()).filter(|&h| senders[h]).collect();
        for (part, run) in runs(senders.len(), n - 1).into_iter().enumerate() {
            for &h in &senders[run] {
                host_part[h] = 1 + part as u8;
            }
        }
    } else {
        for t in 1..=level {
            let of_tier: Vec<usize> = (0..tier.len()).filter(|&s| tier[s] == t).collect();
            for (part, run) in runs(of_tier.len(), n).into_iter().enumerate() {
                for &s in &of_tier[run] {
                    switch_part[s] = part as u8;
                }
            }
        }
        // A host goes with the switch of its first port.
        let mut placed = vec![false; w.hosts.len()];
        for (i, p) in w.ports.iter().enumerate() {
            if let Owner::Host { host, .. } = p.owner() {
                if !placed[host as usize] {
                    placed[host as usize] = true;
                    if let Some(sw) = far_switch(i as u32) {
                        host_part[host as usize] = switch_part[sw as usize];
                    }
                }
            }
        }
    }
    let port_part: Vec<u8> = w
        .ports
        .iter()
        .map(|p| match p.owner() {
            Owner::Switch { sw, .. } => switch_part[sw as usize],
            Owner::Host { host, .. } => host_part[host as usize],
        })
        .collect();
    if let Some(empty) = (0..n).find(|p| !port_part.contains(p)) {
        return Err(format!(
            "the cut leaves part {empty} of {n} empty: a tier of the fabric has fewer switches \
             than parts, or a star fewer hosts that send than parts after the first (a star's \
             senders are its other parts)"
        ));
    }
    let lookahead = w
        .ports
        .iter()
        .enumerate()
        .filter(|&(i, p)| {
            (p.peer() as usize) < port_part.len() && port_part[i] != port_part[p.peer() as usize]
        })
        .map(|(_, p)| w.links[p.link() as usize].delay() + p.extra_delay())
        .min()
        .unwrap_or(Ps::ZERO);
    if lookahead == Ps::ZERO {
        return Err(
            "a link between the parts has no delay: each part could act on the other at once"
                .into(),
        );
    }
    Ok(Plan {
        port_part,
        host_part,
        switch_part,
        lookahead,
    })
}

/// `len` items cut into `n` runs in order, the first ones the longer by
/// one where they cannot all be equal.
fn runs(len: usize, n: u8) -> Vec<std::ops::Range<usize>> {
    let n = usize::from(n);
    (0..n)
        .map(|i| (i * len).div_ceil(n)..((i + 1) * len).div_ceil(n))
        .collect()
}

/// How a world is cut, as `rocesim check` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Switches and hosts of each part.
    pub switches: Vec<usize>,
    pub hosts: Vec<usize>,
    /// Links between the parts, and the smallest delay of a frame across.
    pub links: usize,
    pub lookahead: Ps,
}

impl Plan {
    /// How world `w` is cut by this plan.
    pub fn cut(&self, w: &World) -> Cut {
        let plan = self;
        let count = |v: &[u8], p: u8| v.iter().filter(|&&x| x == p).count();
        let links = w
            .links
            .iter()
            .filter(|l| {
                let [a, b] = l.ends();
                plan.port_part[a as usize] != plan.port_part[b as usize]
            })
            .count();
        let parts = self.parts();
        Cut {
            switches: (0..parts).map(|p| count(&plan.switch_part, p)).collect(),
            hosts: (0..parts).map(|p| count(&plan.host_part, p)).collect(),
            links,
            lookahead: plan.lookahead,
        }
    }

    /// The number of parts.
    pub fn parts(&self) -> u8 {
        self.port_part.iter().max().map_or(1, |m| m + 1)
    }

    /// Part `me`'s hosts and switches (`true`: in the part).
    pub fn mask(&self, me: u8) -> (Vec<bool>, Vec<bool>) {
        let of = |v: &[u8]| v.iter().map(|&p| p == me).collect();
        (of(&self.host_part), of(&self.switch_part))
    }
}
