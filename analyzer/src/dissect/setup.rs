//! The layers of connection set-up, for both output formats: the host
//! stack's TCP (with perftest's key messages) and ICMPv4, and the MADs a
//! RoCE packet to QP1 carries (the CM messages, the RDMA CM header).

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv6Addr};

use roce_codec::perftest::KeyMessage;
use roce_codec::wire::cm::{CmMessage, CmRepr};
use roce_codec::wire::cma::CmaHdr;
use roce_codec::wire::mad::MadRepr;
use roce_codec::{Frame, IbPacket, Net};

use super::writer::{Bracket, JsonObject};

/// The CM message in an IB packet, if it carries one.
fn cm(ib: &IbPacket<'_>) -> Option<(MadRepr, Option<CmRepr>)> {
    let mad = MadRepr::payload_of(ib)?;
    let hdr = MadRepr::parse(mad).ok()?;
    Some((hdr, CmRepr::parse(mad).ok()))
}

/// The perftest key message a TCP payload is, if it is one.
fn keys(payload: &[u8]) -> Option<KeyMessage> {
    KeyMessage::parse(payload).ok()
}

pub(super) fn json_fields(o: &mut JsonObject<'_>, f: &Frame<'_>) {
    match &f.net {
        Net::Tcp { tcp, payload, .. } => {
            o.num("sport", tcp.src_port.into());
            o.num("dport", tcp.dst_port.into());
            o.num("tcp_seq", tcp.seq.into());
            o.num("tcp_ack", tcp.ack.into());
            o.num("tcp_flags", tcp.flags.into());
            o.num("tcp_window", tcp.window.into());
            o.num("tcp_len", payload.len() as u64);
            if let Some(k) = keys(payload) {
                o.num("perftest_lid", k.lid.into());
                o.num("perftest_out_reads", k.out_reads.into());
                o.num("perftest_qpn", k.qpn.into());
                o.num("perftest_psn", k.psn.into());
                o.num("perftest_rkey", k.rkey.into());
                o.num("perftest_vaddr", k.vaddr);
                if let Some(g) = k.gid {
                    o.display("perftest_gid", &Ipv6Addr::from(g));
                }
            }
        }
        Net::Icmpv4 { icmp, data, .. } => {
            o.num("icmp_type", icmp.icmp_type.into());
            o.num("icmp_code", icmp.code.into());
            if let Some(q) = icmp.quoted(data) {
                o.display("icmp_quoted_src", &q.src);
                o.display("icmp_quoted_dst", &q.dst);
                o.num("icmp_quoted_proto", q.protocol.into());
                o.num("icmp_quoted_len", q.total_len.into());
                if let Some((s, d)) = q.ports {
                    o.num("icmp_quoted_sport", s.into());
                    o.num("icmp_quoted_dport", d.into());
                }
            }
        }
        _ => {}
    }
    let Some((hdr, msg)) = f.ib().and_then(cm) else {
        return;
    };
    o.num("mad_class", hdr.mgmt_class.into());
    o.num("mad_method", hdr.method.into());
    o.num("mad_attr", hdr.attribute_id.into());
    o.num("mad_tid", hdr.transaction_id);
    let Some(m) = msg.map(|c| c.message) else {
        return;
    };
    o.str("cm_msg", m.name());
    o.num("cm_local_comm_id", m.local_comm_id().into());
    o.num("cm_remote_comm_id", m.remote_comm_id().into());
    match m {
        CmMessage::Req(r) => {
            o.num("cm_service_id", r.service_id);
            o.num("cm_local_qpn", r.local_qpn.into());
            o.num("cm_starting_psn", r.starting_psn.into());
            o.num(
                "cm_remote_resp_timeout",
                r.remote_cm_response_timeout.into(),
            );
            o.num("cm_local_resp_timeout", r.local_cm_response_timeout.into());
            o.num("cm_retry_count", r.retry_count.into());
            o.num("cm_rnr_retry_count", r.rnr_retry_count.into());
            o.num("cm_max_cm_retries", r.max_cm_retries.into());
            o.num("cm_path_mtu", r.path_mtu.into());
            o.display("cm_local_gid", &Ipv6Addr::from(r.primary_path.local_gid));
            o.display("cm_remote_gid", &Ipv6Addr::from(r.primary_path.remote_gid));
            if let Ok(h) = CmaHdr::parse(&r.private_data) {
                o.display("cma_src", &h.src);
                o.display("cma_dst", &h.dst);
                o.num("cma_sport", h.src_port.into());
            }
        }
        CmMessage::Rep(r) => {
            o.num("cm_local_qpn", r.local_qpn.into());
            o.num("cm_starting_psn", r.starting_psn.into());
        }
        CmMessage::Rej(r) => {
            o.num("cm_rej_reason", r.reason.code().into());
            o.str("cm_rej_reason_name", r.reason.name());
        }
        CmMessage::Mra(r) => o.num("cm_service_timeout", r.service_timeout.into()),
        CmMessage::Dreq(r) => o.num("cm_remote_qpn", r.remote_qpn.into()),
        CmMessage::Rtu(_) | CmMessage::Drep(_) => {}
    }
}

/// `src:sport > dst:dport tcp SYN,ACK seq .. ack .. len ..` or the ICMP
/// type with what it quotes.
pub(super) fn host_stack_text(out: &mut String, f: &Frame<'_>) {
    match &f.net {
        Net::Tcp {
            ip, tcp, payload, ..
        } => {
            let _ = write!(
                out,
                "{}:{} > {}:{} tcp {} seq {} ack {} win {} len {}",
                Bracket(ip.src()),
                tcp.src_port,
                Bracket(ip.dst()),
                tcp.dst_port,
                tcp.flags_text(),
                tcp.seq,
                tcp.ack,
                tcp.window,
                payload.len()
            );
            if let Some(k) = keys(payload) {
                let _ = write!(out, " perftest keys qpn {:#x} psn {:#x}", k.qpn, k.psn);
            }
        }
        Net::Icmpv4 { ip, icmp, data, .. } => {
            let _ = write!(
                out,
                "{} > {} icmp type {} code {}",
                ip.src(),
                ip.dst(),
                icmp.icmp_type,
                icmp.code
            );
            if let Some(q) = icmp.quoted(data) {
                let _ = write!(out, " quoting {} > {} proto {}", q.src, q.dst, q.protocol);
                if let Some((s, d)) = q.ports {
                    let _ = write!(out, " ports {s} > {d}");
                }
            }
        }
        _ => {}
    }
}

/// ` CM REQ comm 0x.. qpn 0x.. psn 0x.. service 0x..` after the IB fields.
pub(super) fn mad_text(out: &mut String, ib: &IbPacket<'_>) {
    let Some((hdr, msg)) = cm(ib) else { return };
    let Some(m) = msg.map(|c| c.message) else {
        let _ = write!(
            out,
            " MAD class {:#04x} attr {:#06x}",
            hdr.mgmt_class, hdr.attribute_id
        );
        return;
    };
    let _ = write!(
        out,
        " CM {} tid {:#x} comm {:#x}>{:#x}",
        m.name(),
        hdr.transaction_id,
        m.local_comm_id(),
        m.remote_comm_id()
    );
    match m {
        CmMessage::Req(r) => {
            let _ = write!(
                out,
                " qpn {:#x} psn {:#x} service {:#x} timeout {} retries {}",
                r.local_qpn,
                r.starting_psn,
                r.service_id,
                r.remote_cm_response_timeout,
                r.max_cm_retries
            );
            if let Ok(h) = CmaHdr::parse(&r.private_data) {
                let src: IpAddr = h.src;
                let _ = write!(
                    out,
                    " cma {}:{} > {}",
                    Bracket(src),
                    h.src_port,
                    Bracket(h.dst)
                );
            }
        }
        CmMessage::Rep(r) => {
            let _ = write!(out, " qpn {:#x} psn {:#x}", r.local_qpn, r.starting_psn);
        }
        CmMessage::Rej(r) => {
            let _ = write!(out, " reason {} ({})", r.reason.code(), r.reason.name());
        }
        CmMessage::Mra(r) => {
            let _ = write!(out, " service timeout {}", r.service_timeout);
        }
        CmMessage::Dreq(r) => {
            let _ = write!(out, " remote qpn {:#x}", r.remote_qpn);
        }
        CmMessage::Rtu(_) | CmMessage::Drep(_) => {}
    }
}
