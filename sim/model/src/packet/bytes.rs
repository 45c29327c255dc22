//! A packet's bytes, made only at a capture tap: the frame as the codec's
//! values ([`Packet::frame_repr`]), which the codec emits, and what follows
//! the headers of a frame that is not RoCE (an ARP or MAC control body, an
//! ICMP error's quote).

use core::net::{Ipv4Addr, Ipv6Addr};

use roce_codec::build::linux_icmp_quote;
use roce_codec::frame::{FrameRepr, IpRepr, Ipv4Repr, NetRepr, UdpRepr, Vlans};
use roce_codec::hash::ROCE_V2_UDP_DPORT;
use roce_codec::wire::grh::{GrhRepr, NXTHDR_IBA};
use roce_codec::wire::icmpv4::Icmpv4Repr;
use roce_codec::wire::mac_control::ETHERTYPE_MAC_CONTROL;

use super::in_flight::{ARP_BODY_LEN, ETH_LEN, ETHERTYPE_ARP, L3, Packet, Udp4};

impl Udp4 {
    fn ipv4(&self) -> Ipv4Repr {
        let mut ip = Ipv4Repr::udp(self.src, self.dst, self.dscp, self.ecn);
        ip.ttl = self.ttl;
        ip
    }
}

impl Packet {
    /// The data of an ICMP error (its quote of the offending datagram, as
    /// much as Linux quotes), written into `buf` through the codec's emit;
    /// `zeros` is the IB payload. `None` for other packets.
    pub fn icmp_data<'b>(&self, buf: &'b mut [u8], zeros: &[u8]) -> Option<&'b [u8]> {
        let L3::IcmpUnreachable { about, .. } = self.l3 else {
            return None;
        };
        let f = FrameRepr {
            eth: self.eth,
            vlans: Vlans::none(),
            net: NetRepr::RoceV2 {
                ip: IpRepr::V4(about.ipv4()),
                udp: UdpRepr {
                    src_port: about.sport,
                    dst_port: ROCE_V2_UDP_DPORT,
                    checksum: 0,
                },
                int: None,
                ib: self.ib,
            },
        };
        let n = f.emit(buf, &zeros[..self.ib.payload_len as usize]);
        Some(linux_icmp_quote(&buf[ETH_LEN as usize..n]))
    }

    /// The bytes after the EtherType of a frame that is not RoCE (ARP,
    /// MAC control), padding included: the 46-byte minimum payload.
    pub fn l2_body(&self) -> Option<[u8; ARP_BODY_LEN]> {
        if let L3::MacControl(m) = self.l3 {
            let mut b = [0u8; ARP_BODY_LEN];
            m.emit(&mut b);
            return Some(b);
        }
        self.arp_body()
    }

    /// The ARP body and padding as on the wire (RFC 826, Ethernet/IPv4).
    pub fn arp_body(&self) -> Option<[u8; ARP_BODY_LEN]> {
        let L3::Arp {
            op,
            sha,
            spa,
            tha,
            tpa,
        } = self.l3
        else {
            return None;
        };
        let mut b = [0u8; ARP_BODY_LEN];
        b[0..2].copy_from_slice(&1u16.to_be_bytes()); // hardware: Ethernet
        b[2..4].copy_from_slice(&0x0800u16.to_be_bytes()); // protocol: IPv4
        b[4] = 6;
        b[5] = 4;
        b[6..8].copy_from_slice(&op.to_be_bytes());
        b[8..14].copy_from_slice(&sha);
        b[14..18].copy_from_slice(&spa.octets());
        b[18..24].copy_from_slice(&tha);
        b[24..28].copy_from_slice(&tpa.octets());
        Some(b)
    }

    /// The frame as codec values, for a tap to emit.
    pub fn frame_repr(&self) -> FrameRepr {
        let net = match self.l3 {
            L3::V2 {
                src,
                dst,
                dscp,
                ecn,
                ttl,
                sport,
                ..
            } => {
                let mut ip = Ipv4Repr::udp(src, dst, dscp, ecn);
                ip.ttl = ttl;
                NetRepr::RoceV2 {
                    ip: IpRepr::V4(ip),
                    udp: UdpRepr {
                        src_port: sport,
                        dst_port: ROCE_V2_UDP_DPORT,
                        checksum: 0,
                    },
                    int: None,
                    ib: self.ib,
                }
            }
            L3::Arp { .. } => NetRepr::Other {
                ethertype: ETHERTYPE_ARP,
            },
            L3::MacControl(_) => NetRepr::Other {
                ethertype: ETHERTYPE_MAC_CONTROL,
            },
            L3::Tcp { src, dst, ttl, seg } => {
                let mut ip = Ipv4Repr::tcp(src, dst, 0, 0);
                ip.ttl = ttl;
                NetRepr::Tcp {
                    ip: IpRepr::V4(ip),
                    tcp: seg.repr(),
                }
            }
            L3::IcmpUnreachable {
                ident, ttl, about, ..
            } => {
                let mut ip = Ipv4Repr::icmp_error_about(&about.ipv4(), ident);
                ip.ttl = ttl;
                NetRepr::Icmpv4 {
                    ip: IpRepr::V4(ip),
                    icmp: Icmpv4Repr::port_unreachable(),
                }
            }
            L3::V1 {
                sgid,
                dgid,
                tclass,
                flow_label,
            } => NetRepr::RoceV1 {
                grh: GrhRepr {
                    ip_ver: 6,
                    traffic_class: tclass,
                    flow_label,
                    next_header: NXTHDR_IBA,
                    hop_limit: 1,
                    sgid: gid(sgid),
                    dgid: gid(dgid),
                },
                ib: self.ib,
            },
        };
        FrameRepr {
            eth: self.eth,
            vlans: self.vlan.map_or(Vlans::none(), Vlans::one),
            net,
        }
    }
}

/// The IPv4-mapped GID of an address (`::ffff:a.b.c.d`), as RoCE uses for
/// IPv4-based GIDs.
pub fn gid(ip: Ipv4Addr) -> [u8; 16] {
    let v6: Ipv6Addr = ip.to_ipv6_mapped();
    v6.octets()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::pkt;
    use crate::time::Ps;

    #[test]
    fn frame_len_matches_the_emitted_frame() {
        for len in [0, 1, 1000, 4096] {
            let p = pkt(len);
            let bytes = p.frame_repr().to_vec(&vec![0; len as usize]);
            assert_eq!(bytes.len(), usize::from(p.frame_len), "payload {len}");
        }
        // WRITE ONLY 4096 B with RETH = 4174 B with FCS (header sizes of
        // include/rdma/ib_pack.h).
        assert_eq!(
            pkt(4096).frame_len + 4,
            14 + 20 + 8 + 12 + 16 + 4096 + 4 + 4
        );
    }

    #[test]
    fn icmp_error_quotes_what_linux_quotes() {
        for (len, quoted) in [(0, 20 + 8 + 12 + 16 + 4), (488, 548), (1000, 548)] {
            let p = pkt(len);
            let e =
                Packet::icmp_port_unreachable(&p, [2, 0, 0, 0, 0, 2], p.eth.src, 7, None, Ps::ZERO)
                    .unwrap();
            assert_eq!(e.src_ip(), p.dst_ip());
            let mut q = vec![0xa5; 8192];
            let data = e.icmp_data(&mut q, &[0; 4096]).unwrap().to_vec();
            assert_eq!(data.len(), quoted, "payload {len}");
            // IPv4, UDP, BTH, RETH, payload, ICRC: 548 from a 488-byte
            // payload on, the most a 576-byte error carries.
            let whole = p.frame_repr().to_vec(&vec![0; len as usize]);
            assert_eq!(data[..], whole[14..14 + quoted]);
            let bytes = e.frame_repr().to_vec(&data);
            assert_eq!(bytes.len(), usize::from(e.frame_len), "payload {len}");
            // Type 3 code 3; TOS 0xc0 for DSCP 32 (TOS 0x80): precedence 6.
            assert_eq!((bytes[34], bytes[35]), (3, 3));
            assert_eq!(bytes[15], 0xc0);
        }
    }
}
