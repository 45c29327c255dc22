//! `roce-pcap dissect --format jsonl`: one JSON object per frame, written
//! straight into the line buffer (no intermediate values), with the keys
//! listed in the module docs of [`super`].

use std::fmt::Write as _;
use std::net::IpAddr;

use roce_capture::read::{LinkType, RawFrame};
use roce_codec::wire::mac_control::MacControlRepr;
use roce_codec::{Frame, IbPacket, Net};

use super::headless_kind;

/// Appends the JSON object of one frame (without the newline) to `out`.
pub fn json_line(
    out: &mut Vec<u8>,
    frame_no: u64,
    raw: &RawFrame<'_>,
    decoded: &Result<Frame<'_>, roce_codec::Error>,
) {
    let mut o = JsonObject::new(out);
    o.num("frame", frame_no);
    o.num("ts_ns", raw.ts_ns);
    o.num("len", raw.wire_len as u64);
    o.num("caplen", raw.data.len() as u64);
    let f = match decoded {
        Ok(f) => f,
        Err(e) => {
            // Not even the link-layer header: nothing more to say.
            o.str("kind", headless_kind(raw).name());
            o.display("error", e);
            o.close();
            return;
        }
    };
    o.str("kind", f.kind().name());
    if let Some(e) = &f.stop {
        o.display("error", e);
    }
    if !f.warnings.is_empty() {
        o.display("warning", &f.warnings);
    }
    if let Some(tag) = f.vlans.outer() {
        o.num("vlan_id", tag.vid.into());
        o.num("vlan_pcp", tag.pcp.into());
    }
    if let Some(ip) = f.ip() {
        o.str(
            "l3",
            match ip.src() {
                IpAddr::V4(_) => "ipv4",
                IpAddr::V6(_) => "ipv6",
            },
        );
        o.display("src", &ip.src());
        o.display("dst", &ip.dst());
        o.num("dscp", ip.dscp().into());
        o.num("ecn", ip.ecn().into());
    }
    if let Net::RoceV1 { grh, .. } = &f.net {
        o.display("src", &std::net::Ipv6Addr::from(grh.sgid));
        o.display("dst", &std::net::Ipv6Addr::from(grh.dgid));
        o.num("dscp", grh.dscp().into());
        o.num("ecn", grh.ecn().into());
        if let Some(paylen) = grh_paylen(raw, f) {
            o.num("grh_paylen", paylen.into());
        }
        o.num("grh_nxthdr", grh.next_header.into());
        o.num("grh_hoplmt", grh.hop_limit.into());
    }
    if let Some(udp) = f.udp() {
        o.num("sport", udp.src_port.into());
        o.num("dport", udp.dst_port.into());
    }
    if let Some(ib) = f.ib() {
        ib_fields(&mut o, ib);
    }
    super::setup::json_fields(&mut o, f);
    if let Net::MacControl(m) = &f.net {
        o.num("macc_opcode", m.opcode().into());
        match m {
            MacControlRepr::Pfc {
                enable_vector,
                times,
            } => {
                o.num("enable_vector", (*enable_vector).into());
                o.key("pause_times");
                o.out.push(b'[');
                for (i, t) in times.iter().enumerate() {
                    if i > 0 {
                        o.out.push(b',');
                    }
                    push_u64(o.out, (*t).into());
                }
                o.out.push(b']');
            }
            MacControlRepr::Pause { time } => o.num("pause_time", (*time).into()),
            MacControlRepr::Unknown { .. } => {}
        }
    }
    o.close();
}

fn ib_fields(o: &mut JsonObject<'_>, ib: &IbPacket<'_>) {
    let b = &ib.bth;
    o.num("opcode", b.opcode.0.into());
    o.str("opcode_name", b.opcode.name());
    o.bool("se", b.solicited_event);
    o.bool("migreq", b.mig_req);
    o.num("padcnt", b.pad_count.into());
    o.num("tver", b.tver.into());
    o.num("pkey", b.pkey.into());
    o.bool("fecn", b.fecn);
    o.bool("becn", b.becn);
    o.num("dqpn", b.dest_qp.into());
    o.bool("ackreq", b.ack_req);
    o.num("psn", b.psn.value().into());
    let x = &ib.ext;
    if let Some(h) = x.rdeth {
        o.num("rdeth_eecnxt", h.ee_context.into());
    }
    if let Some(h) = x.deth {
        o.num("deth_qkey", h.qkey.into());
        o.num("deth_srcqp", h.src_qp.into());
    }
    if let Some(h) = x.xrceth {
        o.num("xrceth_xrcsrq", h.xrc_srq.into());
    }
    if let Some(h) = x.reth {
        o.num("reth_va", h.va);
        o.num("reth_rkey", h.rkey.into());
        o.num("reth_dmalen", h.dma_len.into());
    }
    if let Some(h) = x.atomic_eth {
        o.num("atomic_va", h.va);
        o.num("atomic_rkey", h.rkey.into());
        o.num("atomic_swap_add", h.swap_add);
        o.num("atomic_compare", h.compare);
    }
    if let Some(h) = x.aeth {
        o.num("aeth_syndrome", h.syndrome.0.into());
        o.num("aeth_msn", h.msn.into());
    }
    if let Some(h) = x.atomic_ack_eth {
        o.num("atomicack_orig", h.orig);
    }
    if let Some(h) = x.immdt {
        o.num("immdt", h.data.into());
    }
    if let Some(h) = x.ieth {
        o.num("ieth_rkey", h.rkey.into());
    }
    if let Some(n) = ib.payload_len {
        o.num("payload_len", n.into());
    }
    if let Some(icrc) = ib.icrc {
        o.key("icrc");
        o.out.push(b'"');
        for byte in icrc {
            o.out.push(HEX[usize::from(byte >> 4)]);
            o.out.push(HEX[usize::from(byte & 0xF)]);
        }
        o.out.push(b'"');
    }
    if let Some(v) = ib.icrc_valid {
        o.bool("icrc_valid", v);
    }
}

/// Offset of the network layer in the captured bytes.
fn l3_offset(raw: &RawFrame<'_>, f: &Frame<'_>) -> usize {
    let link = match raw.link {
        LinkType::Ethernet => 14,
        LinkType::LinuxSll => 16,
        LinkType::LinuxSll2 => 20,
    };
    link + 4 * f.vlans.len()
}

/// The GRH PayLen as sent (the codec derives it on emit, so it is read here).
fn grh_paylen(raw: &RawFrame<'_>, f: &Frame<'_>) -> Option<u16> {
    let at = l3_offset(raw, f) + 4;
    raw.data
        .get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON object being written into a byte buffer.
pub(super) struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> JsonObject<'a> {
    fn new(out: &'a mut Vec<u8>) -> JsonObject<'a> {
        out.push(b'{');
        JsonObject { out, empty: true }
    }

    fn key(&mut self, k: &str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    pub(super) fn num(&mut self, k: &str, v: u64) {
        self.key(k);
        push_u64(self.out, v);
    }

    pub(super) fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    pub(super) fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        push_json_str(self.out, v);
    }

    pub(super) fn display(&mut self, k: &str, v: &dyn std::fmt::Display) {
        self.key(k);
        let mut s = Escaper(self.out);
        s.0.push(b'"');
        // Writing into a Vec cannot fail.
        let _ = write!(s, "{v}");
        s.0.push(b'"');
    }

    fn close(self) {
        self.out.push(b'}');
    }
}

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let _ = Escaper(out).write_str(s);
    out.push(b'"');
}

/// Escapes what is written through it as the inside of a JSON string.
struct Escaper<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for &b in s.as_bytes() {
            match b {
                b'"' => self.0.extend_from_slice(b"\\\""),
                b'\\' => self.0.extend_from_slice(b"\\\\"),
                b'\n' => self.0.extend_from_slice(b"\\n"),
                b'\r' => self.0.extend_from_slice(b"\\r"),
                b'\t' => self.0.extend_from_slice(b"\\t"),
                0..0x20 => {
                    self.0.extend_from_slice(b"\\u00");
                    self.0.push(HEX[usize::from(b >> 4)]);
                    self.0.push(HEX[usize::from(b & 0xF)]);
                }
                _ => self.0.push(b),
            }
        }
        Ok(())
    }
}
