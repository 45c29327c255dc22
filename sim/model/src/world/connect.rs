//! Connection set-up on the wire (`connect = "socket"`): perftest's
//! out-of-band exchange of QPNs and PSNs over a TCP connection to port
//! 18515 through the kernels' IP path, before its QPs start.
//!
//! ```text
//!  client (ib_write_bw SERVER)                      server (ib_write_bw)
//!    │── SYN ─────────────────────────────────────────▶│  step 1's route (unbound socket)
//!    │◀──────────────────────────────────── SYN-ACK ───│  step 2's route (from the address
//!    │── ACK ─────────────────────────────────────────▶│   connected to)
//!    │── keys of QP i (108 B, PSH) ───────────────────▶│  ctx_hand_shake per QP:
//!    │◀───────────────────────── keys of QP i (PSH) ───│  the client writes, the server
//!    │      ... i = 0 .. qps - 1 ...                   │  reads then writes
//!    │── ACK ─────────────────────────────────────────▶│  (quickack: at once)
//!    │  both QPs RTR/RTS: the client's first RoCE packet
//! ```
//!
//! The frames leave where the set-up's neighbour resolutions say
//! (`world::neigh` steps 1 and 2): the client's SYN by the main table from
//! its egress interface's own address, the server's segments by the route
//! of the address the client connected to. A kernel answers a segment at
//! once (no processing delay is modelled). Each key message is perftest's
//! `KEY_PRINT_FMT_GID` text (`roce_codec::perftest`): LID 0, `out_reads`
//! 0 (WRITE), the QPN and first PSN the QP was given, an rkey and buffer
//! address, the GID of the QP's device. Left out: perftest's version and
//! MTU exchange before the keys, the second hand-shake after RTR and the
//! closing "done" and FIN, and TCP retransmission (a lost segment stalls
//! the set-up).

use core::net::Ipv4Addr;

use roce_codec::perftest::KeyMessage;
use roce_codec::wire::tcp::flags;

use super::World;
use super::port::DropReason;
use crate::packet::{L3, Packet, PacketId, SegData, TcpSeg};
use crate::rng::{below, component_rng};
use crate::time::Ps;

/// Neighbour entries (host, interface, address) → MAC after a step.
pub type Snapshot = std::collections::HashMap<(u32, u32, Ipv4Addr), [u8; 6]>;

/// perftest's TCP port (`DEF_PORT`).
pub const PERFTEST_PORT: u16 = roce_codec::perftest::PORT;

/// One workload's socket set-up.
pub struct SocketSetup {
    /// (host, GID interface, address) of each end.
    pub client: (u32, u32, Ipv4Addr),
    pub server: (u32, u32, Ipv4Addr),
    /// Per QP: (QPN, first PSN) of the client's and the server's QP.
    pub keys: Vec<[(u32, u32); 2]>,
    pub clients: Vec<u32>,
    /// Its frames-mode ARP set-up (`world::arp`), whose steps wait for
    /// this exchange; `None`: the instantaneous model, whose tables after
    /// each step are `snapshots`.
    pub conn: Option<u32>,
    snapshots: Option<Vec<Snapshot>>,
    /// How many neighbour steps are done.
    steps_done: usize,
    client_port: u16,
    /// Next sequence number of the client and of the server.
    seq: [u32; 2],
    /// When the QPs started (the last ACK left), if they did.
    pub established_at: Option<Ps>,
    pub started_at: Ps,
}

impl SocketSetup {
    pub fn new(
        seed: u64,
        name: &str,
        client: (u32, u32, Ipv4Addr),
        server: (u32, u32, Ipv4Addr),
        keys: Vec<[(u32, u32); 2]>,
        clients: Vec<u32>,
        snapshots: Option<Vec<Snapshot>>,
    ) -> SocketSetup {
        // Linux's ephemeral ports (ip_local_port_range 32768-60999) and
        // random initial sequence numbers: draws of the seed.
        let mut rng = component_rng(seed, &format!("socket:{name}"));
        let client_port = 32768 + below(&mut rng, 60999 - 32768 + 1) as u16;
        let seq = [below(&mut rng, u32::MAX), below(&mut rng, u32::MAX)];
        SocketSetup {
            client,
            server,
            keys,
            clients,
            conn: None,
            snapshots,
            steps_done: 0,
            client_port,
            seq,
            established_at: None,
            started_at: Ps::ZERO,
        }
    }

    /// The key message `index` of one side, as perftest writes it.
    pub fn key(&self, from_server: bool, index: u16) -> KeyMessage {
        let side = usize::from(from_server);
        let (qpn, psn) = self.keys[index as usize][side];
        let gid_ip = if from_server {
            self.server.2
        } else {
            self.client.2
        };
        KeyMessage {
            lid: 0,
            out_reads: 0,
            qpn,
            psn,
            // Memory keys and addresses are not modelled; these stand for
            // one registered buffer per QP.
            rkey: 0x1000 | qpn,
            vaddr: 0x7f00_0000_0000 | u64::from(qpn) << 20,
            gid: Some(crate::packet::gid(gid_ip)),
            srqn: 0,
        }
    }
}

impl World {
    /// The client connects (instantaneous neighbour model).
    pub fn socket_start(&mut self, s: u32) {
        self.socket_advance(s, 1);
    }

    /// A segment lets the next neighbour step run: in the frames model
    /// through the ARP set-up, else at once.
    fn socket_advance(&mut self, s: u32, gate: usize) {
        match self.sockets[s as usize].conn {
            Some(c) => {
                self.setup.conns[c as usize].gate = gate;
                self.conn_step(c);
            }
            None => self.socket_resolved(s, gate),
        }
    }

    /// Neighbour steps `..done` are resolved: the segment waiting for
    /// step `done` leaves (`world::neigh`: 1 the client's SYN, 2 the
    /// server's SYN-ACK, 3 the server's first keys (its QP's RTR came
    /// first), 4 the client's last ACK, and its QPs start).
    pub fn socket_resolved(&mut self, s: u32, done: usize) {
        let now = self.now();
        let so = &mut self.sockets[s as usize];
        if so.steps_done >= done {
            return;
        }
        so.steps_done = done;
        let keys = flags::PSH | flags::ACK;
        match done {
            1 => {
                so.started_at = now;
                self.segment(s, false, flags::SYN, None);
            }
            2 => self.segment(s, true, flags::SYN | flags::ACK, None),
            3 => self.segment(s, true, keys, Some(0)),
            _ => {
                self.segment(s, false, flags::ACK, None);
                self.socket_established(s);
            }
        }
    }

    /// Sends one segment of set-up `s` from the client or the server.
    fn segment(&mut self, s: u32, from_server: bool, fl: u16, data: Option<u16>) {
        let now = self.now();
        let so = &self.sockets[s as usize];
        let me = usize::from(from_server);
        let (host, route) = if from_server {
            let h = &self.hosts[so.server.0 as usize];
            (so.server.0, h.route(so.server.1, so.client_sock_ip(self)))
        } else {
            let h = &self.hosts[so.client.0 as usize];
            (so.client.0, h.unbound_route(so.server.2))
        };
        let Ok(route) = route else {
            return;
        };
        let h = &self.hosts[host as usize];
        let f = h.iface(route.egress);
        let entry = match &so.snapshots {
            Some(snaps) => snaps[so.steps_done.clamp(1, snaps.len()) - 1]
                .get(&(host, route.egress, route.next_hop))
                .copied(),
            None => h.neigh.get(&(route.egress, route.next_hop)).copied(),
        };
        let (Some(net), Some(dmac)) = (f.ip, entry) else {
            // No neighbour entry: the set-up's resolutions found none, and
            // the kernel would keep asking; the connection does not come up.
            return;
        };
        let (src, dst) = if from_server {
            (so.server.2, so.client_sock_ip(self))
        } else {
            (net.addr, so.server.2)
        };
        let (sport, dport) = if from_server {
            (PERFTEST_PORT, so.client_port)
        } else {
            (so.client_port, PERFTEST_PORT)
        };
        let seg = TcpSeg {
            sport,
            dport,
            seq: so.seq[me],
            ack: if fl & flags::ACK != 0 {
                so.seq[1 - me]
            } else {
                0
            },
            flags: fl,
            mss: (f.mtu - 40).min(u32::from(u16::MAX)) as u16,
            data: data.map(|index| SegData {
                setup: s,
                index,
                from_server,
                nccl: false,
            }),
        };
        let l3 = L3::Tcp {
            src,
            dst,
            ttl: 64,
            seg,
        };
        let vlan = f.vlan;
        let pkt = Packet::kernel(f.mac, dmac, vlan, l3, Default::default(), now);
        let advance = u32::from(pkt.frame_len)
            - Packet::compute_frame_len(
                vlan.is_some(),
                &L3::Tcp {
                    src,
                    dst,
                    ttl: 64,
                    seg: TcpSeg { data: None, ..seg },
                },
                &pkt.ib,
            )
            + u32::from(fl & (flags::SYN | flags::FIN) != 0);
        let so = &mut self.sockets[s as usize];
        so.seq[me] = so.seq[me].wrapping_add(advance);
        self.kernel_send(host, route.egress, pkt, now);
    }

    /// A TCP segment reached `host`'s NIC `nic`: the kernel of one end of
    /// a set-up takes it.
    pub fn tcp_receive(&mut self, port: u32, host: u32, nic: u32, id: PacketId) {
        let pkt = *self.pool.get(id);
        let L3::Tcp { dst, seg, .. } = pkt.l3 else {
            unreachable!()
        };
        let h = &self.hosts[host as usize];
        let rx = h.nics[nic as usize].iface;
        let local = h.ifaces.iter().any(|f| f.ip.is_some_and(|n| n.addr == dst));
        if let Some((s, at_listener)) = self.nccl_find(host, seg.sport, seg.dport) {
            if !local || pkt.eth.dst != h.ifaces[rx as usize].mac {
                return self.drop_frame(port, id, DropReason::NotOurs);
            }
            self.pool.free(id);
            return self.nccl_tcp_in(s, at_listener, seg);
        }
        let s = self.sockets.iter().position(|so| {
            let (c, sv) = (so.client.0, so.server.0);
            (host == sv && seg.dport == PERFTEST_PORT && seg.sport == so.client_port)
                || (host == c && seg.sport == PERFTEST_PORT && seg.dport == so.client_port)
        });
        let (true, true, Some(s)) = (local, pkt.eth.dst == h.ifaces[rx as usize].mac, s) else {
            return self.drop_frame(port, id, DropReason::NotOurs);
        };
        self.pool.free(id);
        let s = s as u32;
        let at_server = host == self.sockets[s as usize].server.0;
        let n = self.sockets[s as usize].keys.len() as u16;
        let (syn, ack) = (seg.flags & flags::SYN != 0, seg.flags & flags::ACK != 0);
        let keys = flags::PSH | flags::ACK;
        match (at_server, syn, ack, seg.data) {
            (true, true, false, _) => self.socket_advance(s, 2),
            (false, true, true, _) => {
                self.segment(s, false, flags::ACK, None);
                self.segment(s, false, keys, Some(0));
            }
            // ctx_hand_shake per QP: the server reads key i, writes its
            // own; before the first, its QP resolves the client (RTR).
            (true, _, _, Some(d)) if d.index == 0 => self.socket_advance(s, 3),
            (true, _, _, Some(d)) => self.segment(s, true, keys, Some(d.index)),
            (false, _, _, Some(d)) if d.index + 1 < n => {
                self.segment(s, false, keys, Some(d.index + 1));
            }
            (false, _, _, Some(_)) => self.socket_advance(s, 4),
            _ => {}
        }
    }

    /// Both ends have each other's keys: the client's QPs start.
    fn socket_established(&mut self, s: u32) {
        let now = self.now();
        let so = &mut self.sockets[s as usize];
        so.established_at = Some(now);
        for q in so.clients.clone() {
            self.drive_at(q, now);
        }
    }

    /// The bytes a tap writes after the headers of a set-up frame: a key
    /// message, a MAD.
    pub fn setup_bytes(&self, pkt: &Packet) -> Option<Vec<u8>> {
        if let Some(m) = self.mad_bytes(pkt) {
            return Some(m.to_vec());
        }
        let L3::Tcp {
            seg: TcpSeg { data: Some(d), .. },
            ..
        } = pkt.l3
        else {
            return None;
        };
        if d.nccl {
            let L3::Tcp { seg, .. } = pkt.l3 else {
                unreachable!()
            };
            return Some(self.nccl_bytes(d, seg.mss));
        }
        Some(
            self.sockets[d.setup as usize]
                .key(d.from_server, d.index)
                .to_vec(),
        )
    }
}

impl SocketSetup {
    /// The client socket's source address: its egress interface's own.
    fn client_sock_ip(&self, w: &World) -> Ipv4Addr {
        let h = &w.hosts[self.client.0 as usize];
        h.unbound_route(self.server.2)
            .ok()
            .and_then(|r| h.iface(r.egress).ip)
            .map_or(self.client.2, |n| n.addr)
    }
}
