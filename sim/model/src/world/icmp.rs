//! The host's IP stack answering a RoCEv2 frame its NIC does not take as
//! RoCE (a v1-only NIC, as ConnectX-3): for the kernel it is a UDP
//! datagram to port 4791, where no socket listens, so it answers with an
//! ICMP port unreachable, as Linux's `__udp4_lib_rcv` → `icmp_send` does.
//!
//! ```text
//!  client (v2) ── IPv4/UDP 4791 ──▶ server NIC (v1 only) ── not RoCE ──▶ kernel UDP
//!  client      ◀── ICMP 3/3, quoting IP header + as much as fits 576 B ──┘
//!  client RDMA requester: ignores it; retransmits until retry_cnt is spent (status 12)
//! ```
//!
//! Linux limits ICMP errors per destination (`net.ipv4.icmp_ratelimit`,
//! 1000 ms, for the types in `icmp_ratemask`, which include destination
//! unreachable): a token bucket in `inet_peer_xrlim_allow` that refills one
//! token per `icmp_ratelimit` and holds at most `XRLIM_BURST_FACTOR` (6);
//! a new peer starts full. The global `icmp_msgs_per_sec` (1000/s, burst
//! 50) is looser than this for one peer and is not modelled.

use super::World;
use super::port::DropReason;
use crate::packet::{Packet, PacketId};
use crate::time::Ps;

/// `net.ipv4.icmp_ratelimit`: one token per second.
pub const ICMP_RATELIMIT: Ps = Ps::from_ms(1000);
/// `XRLIM_BURST_FACTOR` in `net/ipv4/inetpeer.c`.
pub const XRLIM_BURST_FACTOR: u64 = 6;

/// One destination's ICMP token bucket (`inet_peer.rate_tokens`, in time).
#[derive(Debug, Clone, Copy)]
pub struct IcmpBucket {
    tokens: Ps,
    last: Ps,
}

impl IcmpBucket {
    /// A new peer: a full bucket (the kernel dates a new peer's
    /// `rate_last` 60 s back).
    pub fn new(now: Ps) -> IcmpBucket {
        IcmpBucket {
            tokens: Ps(ICMP_RATELIMIT.0 * XRLIM_BURST_FACTOR),
            last: now,
        }
    }

    /// Whether an error may go out at `now`; takes its token if so.
    pub fn allow(&mut self, now: Ps) -> bool {
        let cap = ICMP_RATELIMIT.0 * XRLIM_BURST_FACTOR;
        let tokens = (self.tokens.0 + (now.0 - self.last.0)).min(cap);
        self.last = now;
        let ok = tokens >= ICMP_RATELIMIT.0;
        self.tokens = Ps(if ok {
            tokens - ICMP_RATELIMIT.0
        } else {
            tokens
        });
        ok
    }
}

impl World {
    /// A RoCEv2 frame reached NIC `nic` of `host`, which does not speak
    /// v2: the kernel takes it as UDP if it is for one of its addresses
    /// (weak host model) and answers port unreachable, rate limited.
    pub fn udp_unreachable(&mut self, port: u32, host: u32, nic: u32, id: PacketId) {
        let now = self.now();
        let pkt = *self.pool.get(id);
        let h = &self.hosts[host as usize];
        let rx = h.nics[nic as usize].iface;
        let owner = h
            .ifaces
            .iter()
            .position(|f| f.ip.is_some_and(|n| n.addr == pkt.dst_ip()));
        let (Some(owner), true) = (owner, pkt.eth.dst == h.ifaces[rx as usize].mac) else {
            return self.drop_frame(port, id, DropReason::NotOurs);
        };
        self.pool.free(id);
        let h = &mut self.hosts[host as usize];
        let bucket = h
            .icmp_peers
            .entry(pkt.src_ip())
            .or_insert_with(|| IcmpBucket::new(now));
        if !bucket.allow(now) {
            h.icmp_suppressed += 1;
            return;
        }
        // Back to the datagram's source from the address it was sent to.
        let Ok(route) = h.route(owner as u32, pkt.src_ip()) else {
            return;
        };
        // The set-up's resolutions (`world::neigh`) taught the device its
        // peer; without an entry the kernel would ARP first (not modelled:
        // the error is not sent).
        let Some(&dmac) = h.neigh.get(&(route.egress, route.next_hop)) else {
            return;
        };
        let f = &h.ifaces[route.egress as usize];
        let vlan = f.vlan;
        let ident = h.icmp_ident;
        h.icmp_ident = ident.wrapping_add(1);
        h.icmp_sent += 1;
        let src_mac = f.mac;
        if let Some(err) = Packet::icmp_port_unreachable(&pkt, src_mac, dmac, ident, vlan, now) {
            self.kernel_send(host, route.egress, err, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_of_six_then_one_per_second() {
        let t0 = Ps::from_ms(5);
        let mut b = IcmpBucket::new(t0);
        let sent: Vec<bool> = (0..8).map(|i| b.allow(t0 + Ps::from_us(i))).collect();
        assert_eq!(sent, [true, true, true, true, true, true, false, false]);
        // 0.999 s later: still none; at 1 s (plus what was left): one.
        assert!(!b.allow(t0 + Ps::from_ms(999)));
        assert!(b.allow(t0 + Ps::from_ms(1000) + Ps::from_us(8)));
        assert!(!b.allow(t0 + Ps::from_ms(1001)));
    }
}
