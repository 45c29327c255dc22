//! NCCL's connection set-up on the wire (`[[collective]] connect =
//! "socket"`): per network connection, the sending proxy's
//! `ncclIbConnect` opens a TCP connection to the receiving proxy's
//! listening socket (`ncclIbListen`: the out-of-band interface's address,
//! port 0, so an ephemeral port) and the two swap what their QPs need
//! (`roce_codec::nccl`), before the collective's first kernel runs.
//!
//! ```text
//!  sender proxy (ncclIbConnect)                 receiver proxy (ncclIbAccept)
//!    │── SYN ─────────────────────────────────────────▶│  to listen address:port
//!    │◀──────────────────────────────────── SYN-ACK ───│
//!    │── ACK ─────────────────────────────────────────▶│
//!    │── magic 8 B, type 4 B (ncclSocketConnect) ─────▶│  each acked at once
//!    │── device list 37 B ────────────────────────────▶│
//!    │◀───────────────────────────── device list 37 B ─│
//!    │── metadata 4576 B (MSS segments) ──────────────▶│  QPNs, GID, CTS FIFO,
//!    │◀─────────────────────── metadata 4576 B ────────│  TC, SL; the receiver's
//!    │── ready 4 B ───────────────────────────────────▶│  QPs RTR/RTS first,
//!    │◀──────────────────────────────────────── ACK ───│  then the sender's
//!    every connection of the collective up: its kernel launches (CTS, data)
//! ```
//!
//! Each side's kernel acknowledges a data segment at once (quickack at a
//! connection's start), in the reply when the proxy answers it (no
//! processing time is modelled, so the answer leaves at the same
//! instant). NCCL runs `ncclTransportP2pSetup` before the first kernel
//! that needs the connections (`NCCL_RUNTIME_CONNECT=1`) and returns only
//! once every connection of the rank is up, so the collective launches
//! when the last "ready" arrives ([`crate::transport::collective`]).
//! Left out: the bootstrap exchange of the listen handles and the final
//! bootstrap sync (on the bootstrap sockets), TCP timestamps and window
//! scaling, retransmission (a lost segment stalls the set-up), and the
//! socket's close at the end.

use core::net::{Ipv4Addr, SocketAddrV4};

use roce_codec::nccl::{self, ConnectionMetadata};
use roce_codec::wire::tcp::flags;

use super::World;
use crate::packet::{L3, Packet, SegData, TcpSeg};
use crate::time::Ps;

/// One network connection's set-up.
pub struct NcclSetup {
    /// The sending proxy's host.
    pub sender: u32,
    /// The listening proxy's (host, out-of-band interface, address).
    pub listener: (u32, u32, Ipv4Addr),
    pub listen_port: u16,
    pub client_port: u16,
    /// What each side sends: [sender, receiver].
    pub meta: [ConnectionMetadata; 2],
    /// Each side's NCCL device index (its device list).
    pub dev: [i32; 2],
    /// The collective's workload.
    pub workload: u32,
    /// Each side's initial sequence number, bytes sent and received.
    isn: [u32; 2],
    sent: [u32; 2],
    rcvd: [u32; 2],
    pub started_at: Ps,
    /// When the receiver got the "ready".
    pub ready_at: Option<Ps>,
}

impl NcclSetup {
    pub fn new(
        sender: u32,
        listener: (u32, u32, Ipv4Addr),
        ports: (u16, u16),
        meta: [ConnectionMetadata; 2],
        dev: [i32; 2],
        workload: u32,
        isn: [u32; 2],
    ) -> NcclSetup {
        NcclSetup {
            sender,
            listener,
            listen_port: ports.0,
            client_port: ports.1,
            meta,
            dev,
            workload,
            isn,
            sent: [0; 2],
            rcvd: [0; 2],
            started_at: Ps::ZERO,
            ready_at: None,
        }
    }

    /// The bytes of message `index` of one side.
    pub fn message(&self, from_listener: bool, index: u16) -> Vec<u8> {
        match (from_listener, index) {
            (false, 0) => nccl::SOCKET_MAGIC.to_le_bytes().to_vec(),
            (false, 1) => nccl::SOCKET_TYPE_NET_IB.to_le_bytes().to_vec(),
            (false, 2) => nccl::dev_list(self.dev[0]).to_vec(),
            (false, 3) => self.meta[0].to_bytes(),
            (false, _) => 1i32.to_le_bytes().to_vec(),
            (true, 0) => nccl::dev_list(self.dev[1]).to_vec(),
            (true, _) => self.meta[1].to_bytes(),
        }
    }

    /// The sender's socket address: the egress of its route to the
    /// listener (an unbound socket), and its port.
    pub fn sender_sock(&self, w: &World) -> Option<SocketAddrV4> {
        let h = &w.hosts[self.sender as usize];
        let r = h.unbound_route(self.listener.2).ok()?;
        Some(SocketAddrV4::new(
            h.iface(r.egress).ip?.addr,
            self.client_port,
        ))
    }

    pub fn listen_sock(&self) -> SocketAddrV4 {
        SocketAddrV4::new(self.listener.2, self.listen_port)
    }
}

impl World {
    /// The sending proxy connects (`Event::NcclSetupStart`).
    pub fn nccl_setup_start(&mut self, s: u32) {
        self.nccl_setups[s as usize].started_at = self.now();
        self.nccl_segment(s, false, flags::SYN, None);
    }

    /// A segment of an NCCL set-up reached one of its ends.
    pub(super) fn nccl_tcp_in(&mut self, s: u32, at_listener: bool, seg: TcpSeg) {
        let me = usize::from(at_listener);
        let (syn, ack) = (seg.flags & flags::SYN != 0, seg.flags & flags::ACK != 0);
        if syn {
            if at_listener && !ack {
                return self.nccl_segment(s, true, flags::SYN | flags::ACK, None);
            }
            if !at_listener && ack {
                self.nccl_segment(s, false, flags::ACK, None);
                for m in 0..3 {
                    self.nccl_send(s, false, m);
                }
            }
            return;
        }
        let Some(d) = seg.data else {
            return;
        };
        let so = &mut self.nccl_setups[s as usize];
        let before = so.rcvd[me];
        so.rcvd[me] += d.span(seg.mss).1 as u32;
        let after = so.rcvd[me];
        // Which message of the peer this segment completed, if any.
        let peer_msgs: &[usize] = if at_listener {
            &nccl::SENDER_MSGS
        } else {
            &nccl::RECEIVER_MSGS
        };
        let mut end = 0u32;
        let mut done = None;
        for (i, &len) in peer_msgs.iter().enumerate() {
            end += len as u32;
            if before < end && after >= end {
                done = Some(i);
            }
        }
        match (at_listener, done) {
            // The receiver has the device list: its own answers.
            (true, Some(2)) => self.nccl_send(s, true, 0),
            // The sender's metadata: the receiver's QPs to RTS, its own.
            (true, Some(3)) => self.nccl_send(s, true, 1),
            (true, Some(4)) => {
                self.nccl_segment(s, true, flags::ACK, None);
                self.nccl_ready(s);
            }
            (false, Some(0)) => self.nccl_send(s, false, 3),
            // The receiver's metadata: the sender's QPs to RTS, "ready".
            (false, Some(1)) => self.nccl_send(s, false, 4),
            _ => self.nccl_segment(s, at_listener, flags::ACK, None),
        }
    }

    /// The receiver has the "ready": the connection is up.
    fn nccl_ready(&mut self, s: u32) {
        let now = self.now();
        let so = &mut self.nccl_setups[s as usize];
        so.ready_at = Some(now);
        let wl = so.workload;
        let Some(c) = self.workloads[wl as usize].workload.as_collective_mut() else {
            return;
        };
        if c.setup_done(now) {
            let q = self.workloads[wl as usize].clients[0];
            self.drive_at(q, now);
        }
    }

    /// Sends message `index` of one side in segments of at most the MSS.
    fn nccl_send(&mut self, s: u32, from_listener: bool, index: u16) {
        let len = nccl::message_len(from_listener, usize::from(index));
        let mss = self.nccl_mss(s);
        let segs = len.div_ceil(usize::from(mss));
        for k in 0..segs {
            let last = k + 1 == segs;
            let fl = flags::ACK | if last { flags::PSH } else { 0 };
            let d = SegData::nccl(s, from_listener, index, k as u16);
            self.nccl_segment(s, from_listener, fl, Some((d, mss)));
        }
    }

    /// The segment size both ends allow: the smaller interface MTU less
    /// the IPv4 and TCP headers.
    fn nccl_mss(&self, s: u32) -> u16 {
        let so = &self.nccl_setups[s as usize];
        let mtu = |host: u32, listener: bool| {
            let h = &self.hosts[host as usize];
            let r = if listener {
                so.sender_sock(self)
                    .and_then(|c| h.route(so.listener.1, *c.ip()).ok())
            } else {
                h.unbound_route(so.listener.2).ok()
            };
            r.map_or(1500, |r| h.iface(r.egress).mtu)
        };
        let m = mtu(so.sender, false).min(mtu(so.listener.0, true));
        (m - 40).min(u32::from(u16::MAX)) as u16
    }

    /// Sends one segment of set-up `s` from the sender or the listener.
    /// `data`: the segment's bytes, cut by an MSS.
    fn nccl_segment(&mut self, s: u32, from_listener: bool, fl: u16, data: Option<(SegData, u16)>) {
        let now = self.now();
        let so = &self.nccl_setups[s as usize];
        let Some(client) = so.sender_sock(self) else {
            return;
        };
        let me = usize::from(from_listener);
        let host = if from_listener {
            so.listener.0
        } else {
            so.sender
        };
        let h = &self.hosts[host as usize];
        let route = if from_listener {
            h.route(so.listener.1, *client.ip())
        } else {
            h.unbound_route(so.listener.2)
        };
        let Ok(route) = route else {
            return;
        };
        let f = h.iface(route.egress);
        let Some(dmac) = h.neigh.get(&(route.egress, route.next_hop)).copied() else {
            // The builder resolved every neighbour the set-up needs.
            return;
        };
        let (src, dst, sport, dport) = if from_listener {
            (so.listener.2, *client.ip(), so.listen_port, so.client_port)
        } else {
            (*client.ip(), so.listener.2, so.client_port, so.listen_port)
        };
        let syn = fl & flags::SYN != 0;
        let seq = so.isn[me].wrapping_add(if syn { 0 } else { 1 + so.sent[me] });
        let peer_isn = so.isn[1 - me];
        let ack = peer_isn.wrapping_add(1 + so.rcvd[me]);
        let seg = TcpSeg {
            sport,
            dport,
            seq,
            ack: if fl & flags::ACK != 0 { ack } else { 0 },
            flags: fl,
            mss: data.map_or((f.mtu - 40).min(u32::from(u16::MAX)) as u16, |(_, m)| m),
            data: data.map(|(d, _)| d),
        };
        let l3 = L3::Tcp {
            src,
            dst,
            ttl: 64,
            seg,
        };
        let pkt = Packet::kernel(f.mac, dmac, f.vlan, l3, Default::default(), now);
        let egress = route.egress;
        let so = &mut self.nccl_setups[s as usize];
        so.sent[me] += data.map_or(0, |(d, m)| d.span(m).1 as u32);
        self.kernel_send(host, egress, pkt, now);
    }

    /// The set-up a segment to `host` with these ports belongs to, and
    /// whether `host` is its listener.
    pub(super) fn nccl_find(&self, host: u32, sport: u16, dport: u16) -> Option<(u32, bool)> {
        self.nccl_setups.iter().enumerate().find_map(|(i, so)| {
            if host == so.listener.0 && dport == so.listen_port && sport == so.client_port {
                Some((i as u32, true))
            } else if host == so.sender && sport == so.listen_port && dport == so.client_port {
                Some((i as u32, false))
            } else {
                None
            }
        })
    }

    /// The bytes of an NCCL set-up segment cut by `mss`.
    pub(super) fn nccl_bytes(&self, d: SegData, mss: u16) -> Vec<u8> {
        let m = self.nccl_setups[d.setup as usize].message(d.from_server, d.message());
        let (at, len) = d.span(mss);
        m[at..at + len].to_vec()
    }
}
