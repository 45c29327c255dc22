//! Synthetic captures with exactly known contents: the one generator
//! behind the analyzer's ground-truth tests, its benchmarks, the committed
//! corpus in `traces/` ([`crate::traces`]), and anyone who wants a capture
//! with a given pathology (go-back-N, RNR, CNPs, PFC, a bond failover).
//!
//! ```text
//!  Synth ── one CaptureWriter per file (bond slave), frames emitted by the codec
//!    │        frame(repr)           payload a function of the PSN
//!    │        record(repr, bytes)   the bytes of repr, payload given or broken by hand
//!    │        raw(bytes)            any bytes, counted as frames only
//!    └─ RcConn: one requester QP → responder QP, knows its next PSN and MSN
//!         send / write / read / atomic  → request packets (segmented at the PMTU)
//!         ack / nak / rnr_nak / cnp     → responses from the responder
//!         resend(psn)                   → the byte-identical packet again
//!  Truth: what was emitted, counted as it was emitted (packets, bytes per file)
//!
//!  bench_capture        RC QPs writing, with ACKs, CNPs and go-back-N (analyze bench)
//!  full_size_writes     nothing but full-MTU WRITE packets (decode bench)
//! ```
//! Everything is deterministic: nothing depends on the clock or a random
//! source, so a capture is the same byte for byte on every run.

use core::net::Ipv4Addr;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

pub use roce_capture::write::CaptureFormat;
use roce_capture::write::CaptureWriter;

use crate::cli::TempDir;
use roce_codec::wire::aeth::{AethRepr, Syndrome};
use roce_codec::{
    AtomicEthRepr, FrameRepr, IbRepr, IpRepr, Ipv4Repr, NetRepr, Opcode, Psn, RethRepr, hash,
};

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
    /// One writer per `(path, format, snaplen)`; file `i` is the pcapng
    /// interface `bond0.slave{i}`.
    pub fn create(files: &[(&Path, CaptureFormat, u32)]) -> io::Result<Synth> {
        let names: Vec<String> = (0..files.len())
            .map(|i| format!("bond0.slave{i}"))
            .collect();
        let named: Vec<_> = files
            .iter()
            .zip(&names)
            .map(|(&(p, f, snap), n)| (p, f, snap, n.as_str()))
            .collect();
        Synth::create_named(&named)
    }

    /// The files `names` in `dir`, each in the [`format_of`] its name, no
    /// snaplen, interfaces named as by [`Synth::create`]; and their paths.
    pub fn create_in<const N: usize>(
        dir: &Path,
        names: [&str; N],
    ) -> io::Result<([PathBuf; N], Synth)> {
        let paths = names.map(|name| dir.join(name));
        let specs: Vec<_> = paths
            .iter()
            .map(|p| (p.as_path(), format_of(p), 0))
            .collect();
        let s = Synth::create(&specs)?;
        Ok((paths, s))
    }

    /// One writer per `(path, format, snaplen, pcapng interface name)`.
    pub fn create_named(files: &[(&Path, CaptureFormat, u32, &str)]) -> io::Result<Synth> {
        let writers = files
            .iter()
            .map(|&(p, f, snap, name)| CaptureWriter::create(p, f, snap, name))
            .collect::<io::Result<Vec<_>>>()?;
        Ok(Synth {
            truth: vec![FileTruth::default(); writers.len()],
            writers,
            payload: (0..=255u8).cycle().take(8192).collect(),
        })
    }

    /// Emits `repr` with a payload of its declared length into `file`; the
    /// payload bytes are a function of the PSN, so a resend is the same.
    pub fn frame(&mut self, file: usize, ts_ns: u64, repr: &FrameRepr) -> io::Result<usize> {
        let len = repr.ib().map_or(0, |ib| ib.payload_len as usize);
        let seed = repr.ib().map_or(0, |ib| ib.bth.psn.value() as usize);
        if self.payload.len() < len + 256 {
            self.payload = (0..=255u8).cycle().take(len + 256).collect();
        }
        let bytes = repr.to_vec(&self.payload[seed % 256..seed % 256 + len]);
        self.record(file, ts_ns, repr, &bytes)?;
        Ok(bytes.len())
    }

    /// Writes the bytes of `repr` (`repr.to_vec(payload)` for a payload of
    /// one's own, possibly altered by hand) and counts them as the kind of
    /// frame `repr` is.
    pub fn record(
        &mut self,
        file: usize,
        ts_ns: u64,
        repr: &FrameRepr,
        bytes: &[u8],
    ) -> io::Result<()> {
        self.raw(file, ts_ns, bytes)?;
        let t = &mut self.truth[file];
        match repr.net {
            NetRepr::RoceV2 { .. } | NetRepr::RoceV1 { .. } => {
                t.roce_packets += 1;
                t.roce_bytes += bytes.len() as u64;
            }
            NetRepr::MacControl(_) => t.mac_control_frames += 1,
            _ => {}
        }
        Ok(())
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

/// The format a capture file's name asks for: pcapng for `.pcapng`,
/// pcap otherwise.
pub fn format_of(path: &Path) -> CaptureFormat {
    match path.extension() {
        Some(e) if e == "pcapng" => CaptureFormat::PcapNg,
        _ => CaptureFormat::Pcap,
    }
}

/// The common start of a test: a [`TempDir`] of its own (tagged `tag`)
/// and [`Synth::create_in`] it. Keep the directory bound (`_dir`, not `_`)
/// until the test is done.
pub fn temp_captures<const N: usize>(
    tag: &str,
    names: [&str; N],
) -> (TempDir, [PathBuf; N], Synth) {
    let dir = TempDir::new(tag);
    let (paths, s) =
        Synth::create_in(&dir, names).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    (dir, paths, s)
}

/// One end of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Endpoint {
    pub mac: [u8; 6],
    pub ip: Ipv4Addr,
    pub qpn: u32,
}

impl Endpoint {
    /// QP `qpn` of host `host`: MAC `02:00:00:00:00:<host>`, IP
    /// `10.0.0.<host>`.
    pub fn host(host: u8, qpn: u32) -> Endpoint {
        Endpoint {
            mac: [2, 0, 0, 0, 0, host],
            ip: Ipv4Addr::new(10, 0, 0, host),
            qpn,
        }
    }
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

/// One packet of a message, as `RcConn::burst` hands it out.
#[derive(Debug, Clone, Copy)]
struct Segment {
    first: bool,
    last: bool,
    psn: Psn,
    payload: u32,
    ecn: u8,
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

    /// `ib` from `from` to `to` over IPv4/UDP at this connection's DSCP.
    fn rocev2(&self, from: Endpoint, to: Endpoint, sport: u16, ib: IbRepr, ecn: u8) -> FrameRepr {
        let ip = Ipv4Repr::udp(from.ip, to.ip, self.dscp, ecn);
        FrameRepr::rocev2(to.mac, from.mac, IpRepr::V4(ip), sport, ib)
    }

    fn request_frame(&self, ib: IbRepr, ecn: u8) -> FrameRepr {
        self.rocev2(self.requester, self.responder, self.sport, ib, ecn)
    }

    fn response_frame(&self, ib: IbRepr, ecn: u8) -> FrameRepr {
        self.rocev2(self.responder, self.requester, self.response_sport, ib, ecn)
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
        let first = self.next_psn;
        self.burst(s, ts, first, len, spacing_ns, ce, |c, s, t, seg| {
            let op = match (write, seg.first, seg.last) {
                (false, true, true) => 0x04,
                (false, true, false) => 0x00,
                (false, false, false) => 0x01,
                (false, false, true) => 0x02,
                (true, true, true) => 0x0A,
                (true, true, false) => 0x06,
                (true, false, false) => 0x07,
                (true, false, true) => 0x08,
            };
            let mut ib = IbRepr::new(Opcode(op), c.responder.qpn, seg.psn, seg.payload)
                .with_ack_req(seg.last);
            if write && seg.first {
                ib = ib.with_reth(RethRepr {
                    va: 0x10_0000,
                    rkey: 0x77,
                    dma_len: len,
                });
            }
            let bytes = c.emit_request(s, t, ib, seg.ecn)?;
            c.next_psn = c.next_psn.next();
            Ok(bytes)
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
        self.msn = (self.msn + 1) & 0xFF_FFFF;
        self.burst(s, ts, psn, len, spacing_ns, ce, |c, s, t, seg| {
            let op = match (seg.first, seg.last) {
                (true, true) => 0x10,
                (true, false) => 0x0D,
                (false, false) => 0x0E,
                (false, true) => 0x0F,
            };
            let mut ib = IbRepr::new(Opcode(op), c.requester.qpn, seg.psn, seg.payload);
            if ib.ext.aeth().is_some() {
                ib = ib.with_aeth(AethRepr {
                    syndrome: Syndrome::ACK_NO_CREDITS,
                    msn: c.msn,
                });
            }
            let f = c.response_frame(ib, seg.ecn);
            Ok(s.frame(c.response_file, t, &f)? as u64)
        })
    }

    /// The packets of a `len`-byte message from PSN `first` on, segmented
    /// at the PMTU, one every `spacing_ns` from `ts`, those whose index is
    /// in `ce` CE-marked (ECT(0) otherwise); `packet` emits each and
    /// returns its length.
    #[allow(clippy::too_many_arguments)]
    fn burst(
        &mut self,
        s: &mut Synth,
        ts: u64,
        first: Psn,
        len: u32,
        spacing_ns: u64,
        ce: &[u32],
        mut packet: impl FnMut(&mut Self, &mut Synth, u64, Segment) -> io::Result<u64>,
    ) -> io::Result<Sent> {
        let n = Psn::packets_for(u64::from(len), self.pmtu);
        let (mut t, mut bytes) = (ts, 0);
        for i in 0..n {
            let last = i + 1 == n;
            let seg = Segment {
                first: i == 0,
                last,
                psn: first.add(i),
                payload: if last { len - i * self.pmtu } else { self.pmtu },
                ecn: if ce.contains(&i) { 3 } else { 2 },
            };
            bytes += packet(self, s, t, seg)?;
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
        s.record(self.request_file, ts, &f, &bytes)
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
    let a = |i: u32, host: u8| Endpoint::host(host, 0x100 + i);
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

/// A capture of nothing but full-size RoCEv2 packets for the decode bench:
/// RDMA WRITEs of 64 KiB on 8 QPs, every packet a full `mtu` payload
/// (FIRST with RETH, MIDDLE, LAST), 340 ns apart. Returns the file size.
pub fn full_size_writes(path: &Path, frames: usize, mtu: u32) -> io::Result<u64> {
    let mut s = Synth::create_named(&[(path, CaptureFormat::Pcap, 0, "bench")])?;
    let payload = vec![0x5Au8; mtu as usize];
    let per_msg = (65536 / mtu) as usize;
    let mut psn = [0u32; 8];
    let mut t = 1_700_000_000_000_000_000u64;
    for i in 0..frames {
        let qp = (i / per_msg) % 8;
        let k = i % per_msg;
        let op = match k {
            0 => 0x06,
            _ if k + 1 == per_msg => 0x08,
            _ => 0x07,
        };
        let mut ib = IbRepr::new(Opcode(op), 0x100 + qp as u32, Psn::new(psn[qp]), mtu);
        if op == 0x06 {
            ib = ib.with_reth(RethRepr {
                va: 0x7f00_0000_0000 + (i as u64) * 4096,
                rkey: 0x1234,
                dma_len: 65536,
            });
        }
        ib = ib.with_ack_req(op == 0x08);
        psn[qp] = (psn[qp] + 1) & 0xFF_FFFF;
        let ip = IpRepr::V4(Ipv4Repr::udp(
            Ipv4Addr::new(10, 0, 0, 1 + qp as u8),
            Ipv4Addr::new(10, 0, 1, 1),
            26,
            2,
        ));
        let sport = hash::roce_udp_sport(0, 0x100 + qp as u32, 0x200);
        let f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], ip, sport, ib);
        s.record(0, t, &f, &f.to_vec(&payload))?;
        t += 340; // ~100 Gb/s of 4 KiB frames
    }
    s.finish()?;
    Ok(std::fs::metadata(path)?.len())
}
