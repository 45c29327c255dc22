//! How a fabric is cut into the parts of a parallel run.
//!
//! Switches by tier (their distance from the hosts), each tier's first
//! half by index to part 0, the rest to part 1, so that a fat-tree's pods
//! (numbered in order) stay whole; a host goes with the switch it hangs
//! from. A fabric with one switch next to the hosts (a star) puts the
//! senders (the flows' and workloads' clients) in part 1 and the switch
//! and the receivers in part 0: a request crosses once, its ACK once.
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

/// Cuts world `w` in two, or says why it cannot be.
pub fn plan(w: &World) -> Result<Plan, String> {
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
        for p in &w.pending {
            host_part[p.client_host() as usize] = 1;
        }
        for q in &w.qps {
            if q.role == Role::Client {
                host_part[q.host as usize] = 1;
            }
        }
    } else {
        for t in 1..=level {
            let of_tier: Vec<usize> = (0..tier.len()).filter(|&s| tier[s] == t).collect();
            let half = of_tier.len().div_ceil(2);
            for &s in &of_tier[half..] {
                switch_part[s] = 1;
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
    if !port_part.contains(&0) || !port_part.contains(&1) {
        return Err(
            "the cut leaves a part empty: one switch and no host that sends (a star's senders \
             are its second part)"
                .into(),
        );
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

/// How a world is cut, as `rocesim check` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// Switches and hosts of each part.
    pub switches: [usize; 2],
    pub hosts: [usize; 2],
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
        Cut {
            switches: [count(&plan.switch_part, 0), count(&plan.switch_part, 1)],
            hosts: [count(&plan.host_part, 0), count(&plan.host_part, 1)],
            links,
            lookahead: plan.lookahead,
        }
    }

    /// Part `me`'s hosts and switches (`true`: in the part).
    pub fn mask(&self, me: u8) -> (Vec<bool>, Vec<bool>) {
        let of = |v: &[u8]| v.iter().map(|&p| p == me).collect();
        (of(&self.host_part), of(&self.switch_part))
    }
}
