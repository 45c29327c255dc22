//! `roce-pcap dissect --format text`: one compact line per frame, for
//! people: number, time since the first frame, kind, then what it holds.

use std::fmt::Write as _;
use std::net::IpAddr;

use roce_capture::read::RawFrame;
use roce_codec::wire::mac_control::MacControlRepr;
use roce_codec::{Frame, IbPacket, IntRepr, Net, UdpRepr};

use super::headless_kind;
use super::writer::Bracket;

/// Appends the text summary of one frame (without the newline) to `out`:
/// number, time since the first frame, kind, then what the frame holds.
pub fn text_line(
    out: &mut String,
    frame_no: u64,
    first_ts_ns: u64,
    raw: &RawFrame<'_>,
    decoded: &Result<Frame<'_>, roce_codec::Error>,
) {
    let rel = raw.ts_ns.saturating_sub(first_ts_ns);
    let _ = write!(
        out,
        "{frame_no:>6} {}.{:09} ",
        rel / 1_000_000_000,
        rel % 1_000_000_000
    );
    let f = match decoded {
        Ok(f) => f,
        Err(e) => {
            let kind = headless_kind(raw);
            let _ = write!(out, "{:<10} len {} [{e}]", kind.name(), raw.wire_len);
            return;
        }
    };
    let _ = write!(out, "{:<10} ", f.kind().name());
    if let Some(tag) = f.vlans.outer() {
        let _ = write!(out, "vlan {} pcp {} ", tag.vid, tag.pcp);
    }
    match &f.net {
        Net::RoceV2 { ip, udp, int, .. } => {
            udp_endpoints(out, ip.src(), ip.dst(), udp);
            ecn_text(out, ip.ecn());
            if let Some(int) = int {
                int_text(out, int);
            }
        }
        Net::RoceV1 { grh, .. } => {
            let _ = write!(
                out,
                "{} > {}",
                std::net::Ipv6Addr::from(grh.sgid),
                std::net::Ipv6Addr::from(grh.dgid)
            );
            ecn_text(out, grh.ecn());
        }
        Net::Ip { ip, udp, .. } => {
            match udp {
                Some(u) => {
                    udp_endpoints(out, ip.src(), ip.dst(), u);
                    out.push_str(" udp");
                }
                None => {
                    let _ = write!(out, "{} > {} proto {}", ip.src(), ip.dst(), ip.protocol());
                }
            }
            ecn_text(out, ip.ecn());
        }
        Net::Tcp { .. } | Net::Icmpv4 { .. } => {
            super::setup::host_stack_text(out, f);
            if let Some(ip) = f.ip() {
                ecn_text(out, ip.ecn());
            }
        }
        Net::MacControl(m) => match m {
            MacControlRepr::Pfc {
                enable_vector,
                times,
            } => {
                let _ = write!(out, "PFC enable {enable_vector:#04x} times");
                for (prio, t) in times.iter().enumerate() {
                    if enable_vector & (1 << prio) != 0 {
                        let _ = write!(out, " p{prio}={t}");
                    }
                }
            }
            MacControlRepr::Pause { time } => {
                let _ = write!(out, "PAUSE time {time}");
            }
            MacControlRepr::Unknown { opcode } => {
                let _ = write!(out, "MAC control opcode {opcode:#06x}");
            }
        },
        Net::Other { .. } | Net::Undecoded => {
            let _ = write!(out, "ethertype {:#06x}", f.ethertype);
        }
    }
    if let Some(ib) = f.ib() {
        ib_text(out, ib);
        super::setup::mad_text(out, ib);
    }
    let _ = write!(out, " len {}", raw.wire_len);
    if raw.data.len() < raw.wire_len {
        let _ = write!(out, " caplen {}", raw.data.len());
    }
    if let Some(e) = &f.stop {
        let _ = write!(out, " [{e}]");
    }
    if !f.warnings.is_empty() {
        let _ = write!(out, " [warning: {}]", f.warnings);
    }
}

fn ecn_text(out: &mut String, ecn: u8) {
    out.push_str(match ecn {
        1 => " ECT(1)",
        2 => " ECT(0)",
        3 => " CE",
        _ => "",
    });
}

/// In-band telemetry: ` INT [echo] [E] hops N rem R`, then each switch's
/// record in path order as `[rate t ns tx bytes q bytes]` (the clock and
/// the byte counter as the wire holds them: modulo 2^24 ns and 2^20 units).
/// HPCC-PINT's form: ` INT [echo] pint power P`, the path's largest
/// utilisation power.
fn int_text(out: &mut String, int: &IntRepr) {
    out.push_str(" INT");
    if int.echo {
        out.push_str(" echo");
    }
    if int.pint {
        let _ = write!(out, " pint power {}", int.power);
        return;
    }
    if int.exceeded {
        out.push_str(" E");
    }
    let _ = write!(out, " hops {} rem {}", int.hops().len(), int.remaining);
    if int.multi != 1 {
        let _ = write!(out, " multi {}", int.multi);
    }
    for h in int.hops() {
        let _ = write!(
            out,
            " [{}G t {} tx {} q {}]",
            h.rate_bps() / 1_000_000_000,
            h.time,
            h.sent_bytes(int.multi),
            h.qlen_bytes(int.multi)
        );
    }
}

fn ib_text(out: &mut String, ib: &IbPacket<'_>) {
    let b = &ib.bth;
    // A reserved opcode says which one it is.
    if b.opcode.info().is_some() {
        let _ = write!(out, " {}", b.opcode.name());
    } else {
        let _ = write!(out, " reserved({:#04x})", b.opcode.0);
    }
    let _ = write!(out, " qp {:#x} psn {}", b.dest_qp, b.psn.value());
    for (on, flag) in [
        (b.ack_req, "A"),
        (b.solicited_event, "SE"),
        (b.fecn, "FECN"),
        (b.becn, "BECN"),
    ] {
        if on {
            let _ = write!(out, " {flag}");
        }
    }
    if b.pkey != 0xFFFF {
        let _ = write!(out, " pkey {:#06x}", b.pkey);
    }
    let x = &ib.ext;
    if let Some(h) = x.deth() {
        let _ = write!(out, " qkey {:#x} srcqp {:#x}", h.qkey, h.src_qp);
    }
    if let Some(h) = x.reth() {
        let _ = write!(
            out,
            " va {:#x} rkey {:#x} dmalen {}",
            h.va, h.rkey, h.dma_len
        );
    }
    if let Some(h) = x.atomic_eth() {
        let _ = write!(
            out,
            " va {:#x} rkey {:#x} swap_add {:#x} compare {:#x}",
            h.va, h.rkey, h.swap_add, h.compare
        );
    }
    if let Some(h) = x.aeth() {
        let _ = write!(out, " {} msn {}", h.syndrome.name(), h.msn);
        match h.syndrome.kind() {
            roce_codec::SyndromeKind::Ack { credit_code } if credit_code != 31 => {
                let _ = write!(out, " credits {}", h.syndrome.credits().unwrap_or(0));
            }
            roce_codec::SyndromeKind::RnrNak { .. } => {
                let _ = write!(out, " {}us", h.syndrome.rnr_timer_us().unwrap_or(0));
            }
            _ => {}
        }
    }
    if let Some(h) = x.atomic_ack_eth() {
        let _ = write!(out, " orig {:#x}", h.orig);
    }
    if let Some(h) = x.immdt() {
        let _ = write!(out, " imm {:#010x}", h.data);
    }
    if let Some(h) = x.ieth() {
        let _ = write!(out, " inv_rkey {:#x}", h.rkey);
    }
    if let Some(n) = ib.payload_len {
        let _ = write!(out, " payload {n}");
    }
    if ib.icrc_valid == Some(false) {
        out.push_str(" BAD-ICRC");
    }
}

/// `src:sport > dst:dport`, an IPv6 address in brackets.
pub(super) fn udp_endpoints(out: &mut String, src: IpAddr, dst: IpAddr, udp: &UdpRepr) {
    let _ = write!(
        out,
        "{}:{} > {}:{}",
        Bracket(src),
        udp.src_port,
        Bracket(dst),
        udp.dst_port
    );
}
