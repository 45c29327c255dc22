//! The neighbour resolutions of one connection's set-up, in the order a
//! perftest run makes them, and the seeded timing of ARP replies. Both ARP
//! models (instantaneous, `build::neighbours`, and frames, `world::arp`)
//! walk these steps and draw these delays, so they reach the same answers.
//!
//! ```text
//!  1 ClientSocket       client: TCP connect to the server's GID address from an
//!                       unbound socket (main table; source = egress's own address)
//!  2 ServerSocketReply  server: SYN-ACK from the address the client connected to,
//!                       to the client's socket address (bound source: policy
//!                       routing, arp_announce)
//!  3 ServerRoce         server: modify_qp(RTR) resolves the client's GID, bound to
//!                       the server GID's device (it gets the client's QP info first)
//!  4 ClientRoce         client: modify_qp(RTR) resolves the server's GID, bound to
//!                       the client GID's device
//! ```
//!
//! A step whose device already has an entry for its next hop sends
//! nothing. Every ARP request teaches each interface that answers it the
//! asker (`neigh_event_ns` overrides an existing entry), and the asker
//! keeps the first reply (later ones fall in `locktime`). The QPs use the
//! answers of steps 3 and 4: a step 1 or 2 that taught a peer a wrong MAC
//! for a GID's address is what "ping works, RDMA fails" is made of.

use core::net::Ipv4Addr;

use super::host::{Host, Route};
use crate::rng::{below, component_rng};
use crate::time::Ps;

/// One neighbour resolution of a connection's set-up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    ClientSocket,
    ServerSocketReply,
    ServerRoce,
    ClientRoce,
}

impl Step {
    pub const ALL: [Step; 4] = [
        Step::ClientSocket,
        Step::ServerSocketReply,
        Step::ServerRoce,
        Step::ClientRoce,
    ];

    /// Whether the server's host makes this resolution.
    pub fn on_server(self) -> bool {
        matches!(self, Step::ServerSocketReply | Step::ServerRoce)
    }

    /// The route of this step. `client`/`server` are (GID interface,
    /// address); `client_sock` is the client socket's source address,
    /// known once step 1's route is.
    pub fn route(
        self,
        host: &Host,
        client: (u32, Ipv4Addr),
        server: (u32, Ipv4Addr),
        client_sock: Ipv4Addr,
    ) -> Result<Route, String> {
        match self {
            Step::ClientSocket => host.unbound_route(server.1),
            Step::ServerSocketReply => host.route(server.0, client_sock),
            Step::ServerRoce => host.roce_route(server.0, client.1),
            Step::ClientRoce => host.roce_route(client.0, server.1),
        }
    }
}

/// Upper bound of the time a host's kernel takes to answer an ARP request
/// (softirq processing): replies are drawn in `[0, ARP_REPLY_JITTER)`.
pub const ARP_REPLY_JITTER: Ps = Ps::from_us(20);

/// How long interface `iface` of host `host` takes to answer a request
/// for `target` from `sender`: a draw of the run's seed, so that two NICs
/// answering one request race in an order the seed decides, the same in
/// both ARP models.
pub fn reply_delay(seed: u64, host: u32, iface: u32, sender: Ipv4Addr, target: Ipv4Addr) -> Ps {
    let mut rng = component_rng(seed, &format!("arp-reply:{host}.{iface}:{sender}>{target}"));
    Ps::from_ns(u64::from(below(
        &mut rng,
        (ARP_REPLY_JITTER.as_ns()).max(1) as u32,
    )))
}
