//! `roce-pcap dissect --format jsonl`: one JSON object per frame, written
//! straight into the line buffer (no intermediate values), with the keys
//! listed in the module docs of [`super`].

use std::net::IpAddr;

use roce_capture::read::{LinkType, RawFrame};
use roce_codec::wire::mac_control::MacControlRepr;
use roce_codec::{Frame, IbPacket, IntRepr, Net};

use super::headless_kind;
use super::writer::JsonObject;

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
    if let Some(int) = f.int() {
        int_fields(&mut o, int);
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
                o.nums("pause_times", times.iter().map(|&t| t.into()));
            }
            MacControlRepr::Pause { time } => o.num("pause_time", (*time).into()),
            MacControlRepr::Unknown { .. } => {}
        }
    }
    o.close();
}

/// In-band telemetry; the records as parallel arrays in path order (the
/// first switch first), in bit/s, ns and bytes; HPCC-PINT's form has
/// `int_pint_power` instead of records.
fn int_fields(o: &mut JsonObject<'_>, int: &IntRepr) {
    o.num("int_orig_dport", int.orig_dport.into());
    o.bool("int_echo", int.echo);
    if int.pint {
        o.num("int_pint_power", int.power.into());
        return;
    }
    o.bool("int_exceeded", int.exceeded);
    o.num("int_remaining", int.remaining.into());
    o.num("int_multi", int.multi.into());
    let hops = int.hops();
    o.nums("int_rate_bps", hops.iter().map(|h| h.rate_bps()));
    o.nums("int_time_ns", hops.iter().map(|h| h.time.into()));
    o.nums("int_tx_bytes", hops.iter().map(|h| h.sent_bytes(int.multi)));
    o.nums(
        "int_qlen_bytes",
        hops.iter().map(|h| h.qlen_bytes(int.multi)),
    );
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
    if let Some(h) = x.rdeth() {
        o.num("rdeth_eecnxt", h.ee_context.into());
    }
    if let Some(h) = x.deth() {
        o.num("deth_qkey", h.qkey.into());
        o.num("deth_srcqp", h.src_qp.into());
    }
    if let Some(h) = x.xrceth() {
        o.num("xrceth_xrcsrq", h.xrc_srq.into());
    }
    if let Some(h) = x.reth() {
        o.num("reth_va", h.va);
        o.num("reth_rkey", h.rkey.into());
        o.num("reth_dmalen", h.dma_len.into());
    }
    if let Some(h) = x.atomic_eth() {
        o.num("atomic_va", h.va);
        o.num("atomic_rkey", h.rkey.into());
        o.num("atomic_swap_add", h.swap_add);
        o.num("atomic_compare", h.compare);
    }
    if let Some(h) = x.aeth() {
        o.num("aeth_syndrome", h.syndrome.0.into());
        o.num("aeth_msn", h.msn.into());
    }
    if let Some(h) = x.atomic_ack_eth() {
        o.num("atomicack_orig", h.orig);
    }
    if let Some(h) = x.immdt() {
        o.num("immdt", h.data.into());
    }
    if let Some(h) = x.ieth() {
        o.num("ieth_rkey", h.rkey.into());
    }
    if let Some(n) = ib.payload_len {
        o.num("payload_len", n.into());
    }
    if let Some(icrc) = ib.icrc {
        o.hex("icrc", &icrc);
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
