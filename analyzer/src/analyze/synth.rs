//! Synthetic captures with exactly known contents, for the analyzer's
//! ground-truth tests, its benchmarks, and anyone who wants a capture with
//! a given pathology (go-back-N, RNR, CNPs, PFC, a bond failover).
//!
//! ```text
//!  Synth ── one CaptureWriter per file (bond slave), frames emitted by the codec
//!    └─ RcConn: one requester QP → responder QP, knows its next PSN and MSN
//!         send / write / read / atomic  → request packets (segmented at the PMTU)
//!         ack / nak / rnr_nak / cnp     → responses from the responder
//!         resend(psn)                   → the byte-identical packet again
//!  Truth: what was emitted, counted as it was emitted (packets, bytes per file)
//! ```
//! Everything is deterministic: payload bytes are a function of the PSN.

use core::net::Ipv4Addr;
use std::collections::HashMap;
use std::io;
use std::path::Path;

use roce_codec::wire::aeth::{AethRepr, Syndrome};
use roce_codec::{
    AtomicEthRepr, FrameRepr, IbRepr, IpRepr, Ipv4Repr, NetRepr, Opcode, Psn, RethRepr,
};

use roce_capture::write::{CaptureFormat, CaptureWriter};

/// Per-file counts of what was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileTruth {
    pub packets: u64,
    pub bytes: u64,
    pub roce_packets: u64,
    pub roce_bytes: u64,
    pub mac_control_frames: u64,
}

/// Writes frames to a set of capture files.
pub struct Synth {
    writers: Vec<CaptureWriter>,
    pub truth: Vec<FileTruth>,
    payload: Vec<u8>,
}

impl Synth {
    /// One writer per `(path, format, snaplen)`.
    pub fn create(files: &[(&Path, CaptureFormat, u32)]) -> io::Result<Synth> {
        let writers = files
            .iter()
            .enumerate()
            .map(|(i, (p, f, snap))| {
                CaptureWriter::create(p, *f, *snap, &format!("bond0.slave{i}"))
            })
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Synth {
            truth: vec![FileTruth::default(); writers.len()],
            writers,
            payload: (0..=255u8).cycle().take(8192).collect(),
        })
    }

    /// Emits `repr` with a payload of its declared length into `file`.
    pub fn frame(&mut self, file: usize, ts_ns: u64, repr: &FrameRepr) -> io::Result<usize> {
        let len = repr.ib().map_or(0, |ib| ib.payload_len as usize);
        let seed = repr.ib().map_or(0, |ib| ib.bth.psn.value() as usize);
        if self.payload.len() < len + 256 {
            self.payload = (0..=255u8).cycle().take(len + 256).collect();
        }
        let bytes = repr.to_vec(&self.payload[seed % 256..seed % 256 + len]);
        self.raw(file, ts_ns, &bytes)?;
        let t = &mut self.truth[file];
        match repr.net {
            NetRepr::RoceV2 { .. } | NetRepr::RoceV1 { .. } => {
                t.roce_packets += 1;
                t.roce_bytes += bytes.len() as u64;
            }
            NetRepr::MacControl(_) => t.mac_control_frames += 1,
            _ => {}
        }
        Ok(bytes.len())
    }

    /// Writes bytes as they are.
    pub fn raw(&mut self, file: usize, ts_ns: u64, bytes: &[u8]) -> io::Result<()> {
        self.writers[file].write(ts_ns, bytes)?;
        self.truth[file].packets += 1;
        self.truth[file].bytes += bytes.len() as u64;
        Ok(())
    }

    /// A PFC frame from `src_mac` for the priorities of `times` that are
    /// `Some` (enable bit set).
    pub fn pfc(
        &mut self,
        file: usize,
        ts_ns: u64,
        src_mac: [u8; 6],
        times: [Option<u16>; 8],
    ) -> io::Result<()> {
        let mut ev = 0u8;
        let mut t = [0u16; 8];
        for (i, q) in times.iter().enumerate() {
            if let Some(q) = q {
                ev |= 1 << i;
                t[i] = *q;
            }
        }
        self.frame(file, ts_ns, &FrameRepr::pfc(src_mac, ev, t))
            .map(|_| ())
    }

    pub fn finish(self) -> io::Result<Vec<FileTruth>> {
        for w in self.writers {
            w.finish()?;
        }
        Ok(self.truth)
    }
}

/// One end of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    pub mac: [u8; 6],
    pub ip: Ipv4Addr,
    pub qpn: u32,
}

/// A request flow: requester → responder, with the files its two
/// directions are captured in.
#[derive(Debug, Clone)]
pub struct RcConn {
    pub requester: Endpoint,
    pub responder: Endpoint,
    /// UDP source port of requests and of responses.
    pub sport: u16,
    pub response_sport: u16,
    pub pmtu: u32,
    pub next_psn: Psn,
    pub msn: u32,
    pub request_file: usize,
    pub response_file: usize,
    pub dscp: u8,
    /// Sent request packets by PSN, for byte-identical resends.
    sent: HashMap<u32, IbRepr>,
    keep_history: bool,
}

/// What a request call emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    pub first: Psn,
    pub last: Psn,
    pub packets: u32,
    /// Timestamp of the last packet.
    pub end_ns: u64,
    pub bytes: u64,
}

impl RcConn {
    pub fn new(requester: Endpoint, responder: Endpoint, sport: u16, first_psn: u32) -> RcConn {
        RcConn {
            requester,
            responder,
            sport,
            response_sport: sport,
            pmtu: 4096,
            next_psn: Psn::new(first_psn),
            msn: 0,
            request_file: 0,
            response_file: 0,
            dscp: 26,
            sent: HashMap::new(),
            keep_history: true,
        }
    }

    /// Stops remembering packets for [`RcConn::resend`] (large benchmark
    /// captures); `resend` then rebuilds them, which gives the same bytes.
    pub fn without_history(mut self) -> RcConn {
        self.keep_history = false;
        self
    }

    fn request_frame(&self, ib: IbRepr, ecn: u8) -> FrameRepr {
        let ip = Ipv4Repr::udp(self.requester.ip, self.responder.ip, self.dscp, ecn);
        FrameRepr::rocev2(
            self.responder.mac,
            self.requester.mac,
            IpRepr::V4(ip),
            self.sport,
            ib,
        )
    }

    fn response_frame(&self, ib: IbRepr, ecn: u8) -> FrameRepr {
        let ip = Ipv4Repr::udp(self.responder.ip, self.requester.ip, self.dscp, ecn);
        FrameRepr::rocev2(
            self.requester.mac,
            self.responder.mac,
            IpRepr::V4(ip),
            self.response_sport,
            ib,
        )
    }

    fn emit_request(&mut self, s: &mut Synth, ts: u64, ib: IbRepr, ecn: u8) -> io::Result<u64> {
        if self.keep_history {
            self.sent.insert(ib.bth.psn.value(), ib);
        }
        let f = self.request_frame(ib, ecn);
        Ok(s.frame(self.request_file, ts, &f)? as u64)
    }

    /// A SEND (`write == false`) or RDMA WRITE of `len` bytes, one packet
    /// every `spacing_ns` from `ts`. CE-marks the packets whose index is in `ce`.
    pub fn message(
        &mut self,
        s: &mut Synth,
        ts: u64,
        len: u32,
        write: bool,
        spacing_ns: u64,
        ce: &[u32],
    ) -> io::Result<Sent> {
        let n = Psn::packets_for(u64::from(len), self.pmtu);
        let first = self.next_psn;
        let mut bytes = 0;
        let mut t = ts;
        for i in 0..n {
            let last = i + 1 == n;
            let op = match (write, i == 0, last) {
                (false, true, true) => 0x04,
                (false, true, false) => 0x00,
                (false, false, false) => 0x01,
                (false, false, true) => 0x02,
                (true, true, true) => 0x0A,
                (true, true, false) => 0x06,
                (true, false, false) => 0x07,
                (true, false, true) => 0x08,
            };
            let payload = if last { len - i * self.pmtu } else { self.pmtu };
            let mut ib = IbRepr::new(Opcode(op), self.responder.qpn, self.next_psn, payload)
                .with_ack_req(last);
            if write && i == 0 {
                ib = ib.with_reth(RethRepr {
                    va: 0x10_0000,
                    rkey: 0x77,
                    dma_len: len,
                });
            }
            let ecn = if ce.contains(&i) { 3 } else { 2 };
            bytes += self.emit_request(s, t, ib, ecn)?;
            self.next_psn = self.next_psn.next();
            if !last {
                t += spacing_ns;
            }
        }
        Ok(Sent {
            first,
            last: first.add(n - 1),
            packets: n,
            end_ns: t,
            bytes,
        })
    }

    /// An RDMA READ request of `len` bytes; it reserves one PSN per response packet.
    pub fn read_request(&mut self, s: &mut Synth, ts: u64, len: u32) -> io::Result<Sent> {
        let psn = self.next_psn;
        let ib = IbRepr::new(Opcode(0x0C), self.responder.qpn, psn, 0)
            .with_reth(RethRepr {
                va: 0x20_0000,
                rkey: 0x78,
                dma_len: len,
            })
            .with_ack_req(true);
        let bytes = self.emit_request(s, ts, ib, 2)?;
        let n = Psn::packets_for(u64::from(len), self.pmtu);
        self.next_psn = psn.add(n);
        Ok(Sent {
            first: psn,
            last: psn.add(n - 1),
            packets: 1,
            end_ns: ts,
            bytes,
        })
    }

    /// The responses to a READ of `len` bytes at `psn`, one every
    /// `spacing_ns` from `ts`; CE-marks the response packets in `ce`.
    pub fn read_responses(
        &mut self,
        s: &mut Synth,
        ts: u64,
        psn: Psn,
        len: u32,
        spacing_ns: u64,
        ce: &[u32],
    ) -> io::Result<Sent> {
        let n = Psn::packets_for(u64::from(len), self.pmtu);
        self.msn = (self.msn + 1) & 0xFF_FFFF;
        let mut t = ts;
        let mut bytes = 0;
        for i in 0..n {
            let last = i + 1 == n;
            let op = match (i == 0, last) {
                (true, true) => 0x10,
                (true, false) => 0x0D,
                (false, false) => 0x0E,
                (false, true) => 0x0F,
            };
            let payload = if last { len - i * self.pmtu } else { self.pmtu };
            let mut ib = IbRepr::new(Opcode(op), self.requester.qpn, psn.add(i), payload);
            if ib.ext.aeth.is_some() {
                ib = ib.with_aeth(AethRepr {
                    syndrome: Syndrome::ACK_NO_CREDITS,
                    msn: self.msn,
                });
            }
            let ecn = if ce.contains(&i) { 3 } else { 2 };
            let f = self.response_frame(ib, ecn);
            bytes += s.frame(self.response_file, t, &f)? as u64;
            if !last {
                t += spacing_ns;
            }
        }
        Ok(Sent {
            first: psn,
            last: psn.add(n - 1),
            packets: n,
            end_ns: t,
            bytes,
        })
    }

    /// One request packet with any opcode, PSN and payload, e.g. to start a
    /// capture in the middle of a message. Does not move `next_psn`.
    pub fn packet(
        &mut self,
        s: &mut Synth,
        ts: u64,
        opcode: u8,
        psn: Psn,
        payload: u32,
        ack_req: bool,
    ) -> io::Result<u64> {
        let ib =
            IbRepr::new(Opcode(opcode), self.responder.qpn, psn, payload).with_ack_req(ack_req);
        self.emit_request(s, ts, ib, 2)
    }

    /// The next WRITE_ONLY of `len` bytes with one payload byte flipped,
    /// so its ICRC no longer matches. Does not move `next_psn`.
    pub fn corrupted_write(&mut self, s: &mut Synth, ts: u64, len: u32) -> io::Result<()> {
        let ib = IbRepr::new(Opcode(0x0A), self.responder.qpn, self.next_psn, len)
            .with_reth(RethRepr {
                va: 0x10_0000,
                rkey: 0x77,
                dma_len: len,
            })
            .with_ack_req(true);
        let f = self.request_frame(ib, 2);
        let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
        let mut bytes = f.to_vec(&payload);
        let at = bytes.len() - 4 - 1;
        bytes[at] ^= 0x40;
        s.raw(self.request_file, ts, &bytes)?;
        s.truth[self.request_file].roce_packets += 1;
        s.truth[self.request_file].roce_bytes += bytes.len() as u64;
        Ok(())
    }

    /// A FETCH_ADD request.
    pub fn fetch_add(&mut self, s: &mut Synth, ts: u64) -> io::Result<Sent> {
        let psn = self.next_psn;
        let ib = IbRepr::new(Opcode(0x14), self.responder.qpn, psn, 0)
            .with_atomic_eth(AtomicEthRepr::default())
            .with_ack_req(true);
        let bytes = self.emit_request(s, ts, ib, 2)?;
        self.next_psn = psn.next();
        Ok(Sent {
            first: psn,
            last: psn,
            packets: 1,
            end_ns: ts,
            bytes,
        })
    }

    /// Re-emits the request packet with `psn`, byte for byte.
    pub fn resend(&mut self, s: &mut Synth, ts: u64, psn: Psn) -> io::Result<u64> {
        let ib = *self
            .sent
            .get(&psn.value())
            .ok_or_else(|| io::Error::other(format!("PSN {psn} was never sent")))?;
        let f = self.request_frame(ib, 2);
        Ok(s.frame(self.request_file, ts, &f)? as u64)
    }

    fn ack_like(
        &mut self,
        s: &mut Synth,
        ts: u64,
        psn: Psn,
        syndrome: Syndrome,
        ecn: u8,
    ) -> io::Result<u64> {
        let ib = IbRepr::ack(self.requester.qpn, psn, syndrome, self.msn);
        let f = self.response_frame(ib, ecn);
        Ok(s.frame(self.response_file, ts, &f)? as u64)
    }

    /// An ACK of everything up to `psn` (one more message completed).
    pub fn ack(&mut self, s: &mut Synth, ts: u64, psn: Psn) -> io::Result<u64> {
        self.msn = (self.msn + 1) & 0xFF_FFFF;
        self.ack_like(s, ts, psn, Syndrome::ACK_NO_CREDITS, 2)
    }

    /// A NAK with `syndrome` (sequence error: `psn` is the expected PSN).
    pub fn nak(&mut self, s: &mut Synth, ts: u64, psn: Psn, syndrome: Syndrome) -> io::Result<u64> {
        self.ack_like(s, ts, psn, syndrome, 2)
    }

    /// A CNP from the responder to the requester QP (its requests were marked).
    pub fn cnp_to_requester(&mut self, s: &mut Synth, ts: u64) -> io::Result<u64> {
        let f = self.response_frame(IbRepr::cnp(self.requester.qpn), 2);
        Ok(s.frame(self.response_file, ts, &f)? as u64)
    }

    /// A CNP from the requester to the responder QP (READ responses were marked).
    pub fn cnp_to_responder(&mut self, s: &mut Synth, ts: u64) -> io::Result<u64> {
        let f = self.request_frame(IbRepr::cnp(self.responder.qpn), 2);
        Ok(s.frame(self.request_file, ts, &f)? as u64)
    }
}

/// Parameters of [`bench_capture`].
#[derive(Debug, Clone, Copy)]
pub struct BenchCapture {
    pub frames: u64,
    pub qps: u32,
    pub pmtu: u32,
    /// Every this many messages, a go-back-N episode after a NAK.
    pub nak_every: u64,
    /// Every this many messages, a CE mark and a CNP.
    pub cnp_every: u64,
    /// Bytes per RDMA WRITE message (at least 2 packets' worth).
    pub message_bytes: u32,
}

impl Default for BenchCapture {
    fn default() -> Self {
        BenchCapture {
            frames: 300_000,
            qps: 8,
            pmtu: 4096,
            nak_every: 200,
            cnp_every: 50,
            message_bytes: 64 * 1024,
        }
    }
}

/// A large capture for benchmarks: `qps` RC QPs writing messages (64 KiB
/// by default) in full-size packets, round robin, with ACKs, CE marks + CNPs and
/// NAK-triggered go-back-N, until at least `frames` frames were written.
/// Streams to disk: memory does not grow with `frames`.
pub fn bench_capture(path: &Path, p: BenchCapture) -> io::Result<u64> {
    let mut s = Synth::create(&[(path, CaptureFormat::Pcap, 0)])?;
    let a = |i: u32, host: u8| Endpoint {
        mac: [2, 0, 0, 0, 0, host],
        ip: Ipv4Addr::new(10, 0, 0, host),
        qpn: 0x100 + i,
    };
    let mut conns: Vec<RcConn> = (0..p.qps)
        .map(|i| {
            let mut c =
                RcConn::new(a(i, 1), a(i + 0x40, 2), 0xC000 + i as u16, i * 1000).without_history();
            c.pmtu = p.pmtu;
            c
        })
        .collect();
    // 4 KiB at 100 Gb/s is about 340 ns on the wire.
    let spacing = 340;
    let mut t = 1_000_000_000u64;
    let mut written = 0u64;
    let mut msg = 0u64;
    while written < p.frames {
        let qi = (msg % u64::from(p.qps)) as usize;
        let c = &mut conns[qi];
        let mark: &[u32] = if msg % p.cnp_every == 7 % p.cnp_every {
            &[1]
        } else {
            &[]
        };
        let sent = c.message(&mut s, t, p.message_bytes, true, spacing, mark)?;
        written += u64::from(sent.packets);
        t = sent.end_ns + spacing;
        if !mark.is_empty() {
            c.cnp_to_requester(&mut s, t)?;
            written += 1;
        }
        if msg % p.nak_every == 11 % p.nak_every {
            // The responder missed the 5th packet (or the last): NAK, then go back N.
            let lost = sent.first.add((sent.packets - 1).clamp(1, 4));
            c.nak(&mut s, t + 2_000, lost, Syndrome::NAK_PSN_SEQUENCE_ERROR)?;
            written += 1;
            t += 3_000;
            let mut q = lost;
            while q.distance(sent.last) <= 0 {
                // Rebuild the packet: same opcode rules as `message`.
                let last = q == sent.last;
                let op = if last { 0x08 } else { 0x07 };
                let payload = if last {
                    p.message_bytes - (sent.packets - 1) * c.pmtu
                } else {
                    c.pmtu
                };
                let ib = IbRepr::new(Opcode(op), c.responder.qpn, q, payload).with_ack_req(last);
                let f = c.request_frame(ib, 2);
                s.frame(c.request_file, t, &f)?;
                written += 1;
                t += spacing;
                q = q.next();
            }
        }
        c.ack(&mut s, t + 1_500, sent.last)?;
        written += 1;
        msg += 1;
    }
    s.finish()?;
    Ok(written)
}
