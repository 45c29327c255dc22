//! Connection set-up in synthetic captures: the two ways a perftest pair
//! connects its QPs before the RC flows [`crate::synth::RcConn`] plays.
//!
//! ```text
//!  CmSetup (connect = "rdma_cm")          PerftestTcp (connect = "socket", port 18515)
//!   active ── REQ (resent: req again) ─▶   client ── SYN ──────────▶ server
//!          ◀─ MRA / REP / REJ ──────────         ◀─ SYN-ACK ─────────
//!          ── RTU ─────────────────────▶         ── ACK ─────────────▶
//!                                                ── keys (108 B) ────▶
//!                                                ◀─ keys ────────────
//!                                                ── "done\0" / FIN ... ▶
//! ```
//! MADs ride a UD SEND ONLY from QP1 to QP1 (each side's QP1 counts its
//! own PSNs); TCP sequence numbers advance by what each side sent. Every
//! frame is built by the codec and written through [`Synth::record`].

use std::io;

use roce_codec::perftest::KeyMessage;
use roce_codec::wire::cm::{CmMessage, CmMra, CmRej, CmRep, CmReq, CmRtu, RejReason};
use roce_codec::wire::tcp::{TcpOptions, flags};
use roce_codec::{CmRepr, FrameRepr, IpRepr, Ipv4Repr, Psn, TcpRepr};

use crate::synth::{Endpoint, Synth};

/// A CM exchange between the QPs of two endpoints, in one capture file.
#[derive(Debug, Clone)]
pub struct CmSetup {
    pub active: Endpoint,
    pub passive: Endpoint,
    pub file: usize,
    pub transaction_id: u64,
    pub active_comm_id: u32,
    pub passive_comm_id: u32,
    /// The PSNs each side's RC QP starts sending with.
    pub active_psn: u32,
    pub passive_psn: u32,
    /// RDMA CM port the passive side listens on.
    pub port: u16,
    gsi_psn: [u32; 2],
}

impl CmSetup {
    pub fn new(active: Endpoint, passive: Endpoint, active_psn: u32, passive_psn: u32) -> CmSetup {
        CmSetup {
            active,
            passive,
            file: 0,
            transaction_id: 0x0000_0001_0000_0000 | u64::from(active.qpn),
            // Distinct per pair, as a host's CM numbers its connections.
            active_comm_id: active.qpn << 8 | u32::from(passive.ip.octets()[3]),
            passive_comm_id: passive.qpn << 8 | u32::from(active.ip.octets()[3]),
            active_psn,
            passive_psn,
            port: 18515,
            gsi_psn: [0, 0],
        }
    }

    /// The REQ the active side sends (the same bytes when resent).
    pub fn req_message(&self) -> CmReq {
        CmReq::rdma_cm(
            self.active_comm_id,
            self.active.qpn,
            self.active_psn,
            self.active.ip.into(),
            0xc000 | (self.active.qpn as u16 & 0x3fff),
            self.passive.ip.into(),
            self.port,
            5,
        )
    }

    fn send(&mut self, s: &mut Synth, ts: u64, from_active: bool, m: CmMessage) -> io::Result<()> {
        let (from, to) = if from_active {
            (self.active, self.passive)
        } else {
            (self.passive, self.active)
        };
        let side = usize::from(!from_active);
        let psn = Psn::new(self.gsi_psn[side]);
        self.gsi_psn[side] += 1;
        let ip = Ipv4Repr::udp(from.ip, to.ip, 0, 0);
        let repr = FrameRepr::mad(to.mac, from.mac, IpRepr::V4(ip), 0xd000, psn);
        let mad = CmRepr::new(self.transaction_id, m);
        let bytes = repr.to_vec(&mad.to_bytes());
        s.record(self.file, ts, &repr, &bytes)
    }

    pub fn req(&mut self, s: &mut Synth, ts: u64) -> io::Result<()> {
        let m = CmMessage::Req(self.req_message());
        self.send(s, ts, true, m)
    }

    pub fn rep(&mut self, s: &mut Synth, ts: u64) -> io::Result<()> {
        let rep = CmRep::answering(
            &self.req_message(),
            self.passive_comm_id,
            self.passive.qpn,
            self.passive_psn,
        );
        self.send(s, ts, false, CmMessage::Rep(rep))
    }

    pub fn rtu(&mut self, s: &mut Synth, ts: u64) -> io::Result<()> {
        let m = CmMessage::Rtu(CmRtu::between(self.active_comm_id, self.passive_comm_id));
        self.send(s, ts, true, m)
    }

    /// An MRA of the REQ with service timeout `exponent`.
    pub fn mra(&mut self, s: &mut Synth, ts: u64, exponent: u8) -> io::Result<()> {
        let m = CmMessage::Mra(CmMra {
            local_comm_id: self.passive_comm_id,
            remote_comm_id: self.active_comm_id,
            message_mraed: 0,
            service_timeout: exponent,
            private_data: [0; 222],
        });
        self.send(s, ts, false, m)
    }

    /// The passive side rejects the REQ (Linux's CM sends local comm ID 0
    /// when no listener took it).
    pub fn rej(&mut self, s: &mut Synth, ts: u64, reason: RejReason) -> io::Result<()> {
        let m = CmMessage::Rej(CmRej {
            local_comm_id: 0,
            remote_comm_id: self.active_comm_id,
            message_rejected: 0,
            reject_info_length: 0,
            reason,
            ari: [0; 72],
            private_data: [0; 148],
        });
        self.send(s, ts, false, m)
    }
}

/// perftest's TCP connection from a client port to the server's 18515.
#[derive(Debug, Clone)]
pub struct PerftestTcp {
    pub client: Endpoint,
    pub server: Endpoint,
    pub client_port: u16,
    pub file: usize,
    /// Next sequence number of the client and of the server.
    seq: [u32; 2],
}

impl PerftestTcp {
    pub fn new(client: Endpoint, server: Endpoint, client_port: u16) -> PerftestTcp {
        PerftestTcp {
            client,
            server,
            client_port,
            file: 0,
            seq: [0x1000_0000, 0x2000_0000],
        }
    }

    /// One segment; `payload` advances the sender's sequence number (and a
    /// SYN or FIN one more).
    pub fn segment(
        &mut self,
        s: &mut Synth,
        ts: u64,
        from_client: bool,
        fl: u16,
        payload: &[u8],
    ) -> io::Result<()> {
        let (from, to, me) = if from_client {
            (self.client, self.server, 0)
        } else {
            (self.server, self.client, 1)
        };
        let (sport, dport) = if from_client {
            (self.client_port, roce_codec::perftest::PORT)
        } else {
            (roce_codec::perftest::PORT, self.client_port)
        };
        // MSS 1460 on a SYN, as Linux always offers it.
        let options = if fl & flags::SYN != 0 {
            TcpOptions::new(&[2, 4, 0x05, 0xb4]).expect("4 bytes")
        } else {
            TcpOptions::default()
        };
        let tcp = TcpRepr {
            src_port: sport,
            dst_port: dport,
            seq: self.seq[me],
            ack: if fl & flags::ACK != 0 {
                self.seq[1 - me]
            } else {
                0
            },
            flags: fl,
            window: 64240,
            urgent: 0,
            options,
            checksum_override: None,
        };
        let ip = Ipv4Repr::tcp(from.ip, to.ip, 0, 0);
        let repr = FrameRepr::tcp(to.mac, from.mac, IpRepr::V4(ip), tcp);
        let bytes = repr.to_vec(payload);
        let syn_fin = u32::from(fl & (flags::SYN | flags::FIN) != 0);
        self.seq[me] = self.seq[me].wrapping_add(payload.len() as u32 + syn_fin);
        s.record(self.file, ts, &repr, &bytes)
    }

    /// SYN, SYN-ACK, ACK at `ts`, `ts + rtt`, `ts + 2 rtt`.
    pub fn connect(&mut self, s: &mut Synth, ts: u64, rtt: u64) -> io::Result<()> {
        self.segment(s, ts, true, flags::SYN, &[])?;
        self.segment(s, ts + rtt, false, flags::SYN | flags::ACK, &[])?;
        self.segment(s, ts + 2 * rtt, true, flags::ACK, &[])
    }

    /// One side's keys, as `ethernet_write_keys` writes them.
    pub fn keys(
        &mut self,
        s: &mut Synth,
        ts: u64,
        from_client: bool,
        k: &KeyMessage,
    ) -> io::Result<()> {
        self.segment(s, ts, from_client, flags::PSH | flags::ACK, &k.to_vec())
    }
}
