//! Flow entropy: the RoCEv2 UDP source port and the hashes that spread flows
//! over bond slaves and ECMP/LAG members.
//!
//! RoCEv2 has one fixed destination port, so the UDP *source* port is the only
//! per-connection entropy a layer3+4 hash ever sees:
//!
//! ```text
//!  (lqpn, rqpn) ──calc_flow_label──▶ 20-bit label ──fold──▶ sport 0xC000..0xFFFF
//!                                                             │
//!  smac,dmac,src,dst,sport,4791 ──bond_xmit_hash(policy)──▶ hash ── % slaves ──▶ slave
//! ```
//!
//! Everything here follows the Linux sources: include/rdma/ib_verbs.h
//! (`rdma_calc_flow_label`, `rdma_flow_label_to_udp_sport`,
//! `rdma_get_udp_sport`), drivers/infiniband/sw/rxe/rxe_qp.c
//! (`rxe_qp_init_req`), drivers/infiniband/core/cma.c
//! (`cma_get_roce_udp_flow_label`), drivers/net/bonding/bond_main.c
//! (`__bond_xmit_hash`, `bond_ip_hash`, `bond_xmit_3ad_xor_slave_get`) and
//! include/net/ipv6.h (`ipv6_addr_hash`). The tests' vectors were worked
//! out from those functions for a little-endian host.

use core::net::{Ipv4Addr, Ipv6Addr};

/// Lowest UDP source port the kernel hands to RoCEv2 (`IB_ROCE_UDP_ENCAP_VALID_PORT_MIN`).
pub const ROCE_UDP_SPORT_MIN: u16 = 0xC000;
/// The IANA RoCEv2 destination port.
pub const ROCE_V2_UDP_DPORT: u16 = 4791;
const FLOW_LABEL_MASK: u32 = 0x000F_FFFF;

/// `rdma_calc_flow_label`: a 20-bit label from the two QP numbers. Symmetric
/// in its arguments, so both ends of an RC connection derive the same label.
pub fn calc_flow_label(lqpn: u32, rqpn: u32) -> u32 {
    let mut v = u64::from(lqpn) * u64::from(rqpn);
    v ^= v >> 20;
    v ^= v >> 40;
    (v as u32) & FLOW_LABEL_MASK
}

/// `rdma_flow_label_to_udp_sport`: folds a 20-bit label into 14 bits and puts
/// it in the 0xC000..=0xFFFF range.
pub fn flow_label_to_udp_sport(flow_label: u32) -> u16 {
    let fl = flow_label & FLOW_LABEL_MASK;
    let mut lo = fl & 0x3FFF;
    let hi = fl & 0xF_C000;
    lo ^= hi >> 14;
    (lo as u16) | ROCE_UDP_SPORT_MIN
}

/// `rdma_get_udp_sport`: the source port of a connected RoCEv2 QP as mlx5
/// and rxe program it at INIT→RTR. A non-zero GRH flow label (set by
/// RDMA-CM or `--flow_label`) wins over the QPN-derived one.
pub fn roce_udp_sport(flow_label: u32, lqpn: u32, rqpn: u32) -> u16 {
    let fl = if flow_label & FLOW_LABEL_MASK != 0 {
        flow_label
    } else {
        calc_flow_label(lqpn, rqpn)
    };
    flow_label_to_udp_sport(fl)
}

/// The kernel's `hash_32(val, bits)`: multiply by the 32-bit golden ratio and
/// keep the top `bits` bits.
pub fn hash_32(val: u32, bits: u32) -> u32 {
    const GOLDEN_RATIO_32: u32 = 0x61C8_8647;
    val.wrapping_mul(GOLDEN_RATIO_32) >> (32 - bits)
}

/// rxe's source port at QP creation, before a path is set:
/// `0xC000 + (hash_32(qpn, 14) & 0x3FFF)`.
pub fn rxe_initial_udp_sport(qpn: u32) -> u16 {
    ROCE_UDP_SPORT_MIN + (hash_32(qpn, 14) & 0x3FFF) as u16
}

/// RDMA-CM's flow label when the source address carries none:
/// `(cm_src_port * 31 + cm_dst_port) & 0xFFFFF` (cma.c). These are RDMA-CM
/// port-space ports, not UDP ports.
pub fn cma_flow_label(cm_src_port: u16, cm_dst_port: u16) -> u32 {
    (u32::from(cm_src_port) * 31 + u32::from(cm_dst_port)) & FLOW_LABEL_MASK
}

/// Linux bonding `xmit_hash_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XmitHashPolicy {
    Layer2,
    Layer23,
    Layer34,
    Encap23,
    Encap34,
    VlanSrcMac,
}

impl XmitHashPolicy {
    /// The name used by `/sys/class/net/<bond>/bonding/xmit_hash_policy`.
    pub fn name(self) -> &'static str {
        match self {
            XmitHashPolicy::Layer2 => "layer2",
            XmitHashPolicy::Layer23 => "layer2+3",
            XmitHashPolicy::Layer34 => "layer3+4",
            XmitHashPolicy::Encap23 => "encap2+3",
            XmitHashPolicy::Encap34 => "encap3+4",
            XmitHashPolicy::VlanSrcMac => "vlan+srcmac",
        }
    }

    pub const ALL: [XmitHashPolicy; 6] = [
        XmitHashPolicy::Layer2,
        XmitHashPolicy::Layer23,
        XmitHashPolicy::Layer34,
        XmitHashPolicy::Encap23,
        XmitHashPolicy::Encap34,
        XmitHashPolicy::VlanSrcMac,
    ];

    pub fn from_name(name: &str) -> Option<XmitHashPolicy> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }
}

/// Network addresses of a flow as the bonding flow dissector sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FlowAddrs {
    V4 { src: Ipv4Addr, dst: Ipv4Addr },
    V6 { src: Ipv6Addr, dst: Ipv6Addr },
}

/// The header fields the Linux bonding hash reads from one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKeys {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    /// EtherType of the Ethernet header as seen by the bond (0x0800, 0x86DD,
    /// 0x8915 for RoCE v1, ...).
    pub ethertype: u16,
    /// The 802.1Q TCI (PCP, DEI and VID) when the stack carries a VLAN tag
    /// out of band, as for a VLAN device on top of the bond.
    pub vlan_tci: Option<u16>,
    /// IP addresses; `None` for non-IP frames (RoCE v1, ARP, ...).
    pub addrs: Option<FlowAddrs>,
    /// Transport ports, when the IP payload is TCP/UDP/SCTP and not a fragment.
    pub ports: Option<(u16, u16)>,
}

impl FlowKeys {
    /// Keys of a RoCEv2 packet over IPv4.
    pub fn rocev2_v4(
        src_mac: [u8; 6],
        dst_mac: [u8; 6],
        src: Ipv4Addr,
        dst: Ipv4Addr,
        udp_sport: u16,
    ) -> FlowKeys {
        FlowKeys {
            src_mac,
            dst_mac,
            ethertype: 0x0800,
            vlan_tci: None,
            addrs: Some(FlowAddrs::V4 { src, dst }),
            ports: Some((udp_sport, ROCE_V2_UDP_DPORT)),
        }
    }
}

/// Network-order bytes read as a little-endian host `u32`, as the kernel does
/// on x86 and arm64 when it XORs addresses into the hash.
fn le_u32(b: [u8; 4]) -> u32 {
    u32::from_le_bytes(b)
}

/// `ipv6_addr_hash`: XOR of the four 32-bit words of the address.
fn ipv6_fold(a: &Ipv6Addr) -> u32 {
    a.octets()
        .chunks_exact(4)
        .map(|w| le_u32([w[0], w[1], w[2], w[3]]))
        .fold(0, |acc, w| acc ^ w)
}

fn bond_eth_hash(k: &FlowKeys) -> u32 {
    u32::from(k.dst_mac[5] ^ k.src_mac[5]) ^ u32::from(k.ethertype)
}

fn bond_vlan_srcmac_hash(k: &FlowKeys) -> u32 {
    let m = k.src_mac;
    let vendor = u32::from_be_bytes([0, m[0], m[1], m[2]]);
    let dev = u32::from_be_bytes([0, m[3], m[4], m[5]]);
    u32::from(k.vlan_tci.unwrap_or(0)) ^ vendor ^ dev
}

/// `bond_xmit_hash` for one frame (software path; for `encap3+4` this assumes
/// the skb carries no precomputed L4 hash, which is the case for RoCE frames
/// built by the bond itself, e.g. in the RDMA LAG slave lookup).
///
/// For RoCE no tunnel is involved, so the encap policies read the same
/// headers as their plain counterparts.
pub fn bond_xmit_hash(policy: XmitHashPolicy, k: &FlowKeys) -> u32 {
    use XmitHashPolicy::*;
    if policy == VlanSrcMac {
        return bond_vlan_srcmac_hash(k);
    }
    let Some(addrs) = k.addrs.filter(|_| policy != Layer2) else {
        return bond_eth_hash(k);
    };
    let mut h = match policy {
        Layer23 | Encap23 => bond_eth_hash(k),
        _ => match k.ports {
            // The four port bytes `sport_hi sport_lo dport_hi dport_lo` loaded
            // as one host-order (little-endian) u32.
            Some((s, d)) => {
                let (s, d) = (s.to_be_bytes(), d.to_be_bytes());
                le_u32([s[0], s[1], d[0], d[1]])
            }
            None => 0,
        },
    };
    let (src, dst) = match addrs {
        FlowAddrs::V4 { src, dst } => (le_u32(src.octets()), le_u32(dst.octets())),
        FlowAddrs::V6 { src, dst } => (ipv6_fold(&src), ipv6_fold(&dst)),
    };
    h ^= dst ^ src;
    h ^= h >> 16;
    h ^= h >> 8;
    // Since "bonding: do not discard lowest hash bit for non layer3+4 hashing"
    // only the layer3+4 policies drop the lowest bit.
    if matches!(policy, Layer34 | Encap34) {
        h >> 1
    } else {
        h
    }
}

/// `bond_xmit_3ad_xor_slave_get`: plain modulo over the usable slaves.
pub fn bond_slave_index(hash: u32, slave_count: usize) -> Option<usize> {
    (slave_count > 0).then(|| hash as usize % slave_count)
}

/// How a switch (or a NIC in LAG hash mode) turns a 5-tuple into a member
/// index. Real switch ASICs use vendor CRCs with a per-box seed; these are
/// configurable stand-ins with the right property: all the entropy comes from
/// the fields, so equal tuples always take the same member.
///
/// Tiers and polarisation: a CRC is affine over GF(2), so
/// `crc(seed ‖ x) = crc(x) ⊕ c(seed)` for tuples of one length, and its low
/// bits (`% 2^k` members) under two seeds differ by a constant. Two tiers of
/// switches hashing with [`EcmpHash::Crc32`] then make the same choice up
/// to a relabelling: the flows an edge switch sends to aggregation switch
/// `j` all leave `j` on one uplink (ECMP polarisation). With the same seed
/// everywhere (any hash) that is one uplink for every edge switch, and the
/// others carry nothing; with per-switch CRC seeds each edge switch's share
/// still takes one uplink. [`EcmpHash::Murmur3`] with a different seed per
/// switch has no such relation, which is why generated fabrics use it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EcmpHash {
    /// CRC-32 (IEEE) over seed ‖ src ‖ dst ‖ protocol ‖ sport ‖ dport.
    Crc32 { seed: u32 },
    /// MurmurHash3 (x86, 32-bit) seeded per switch over the key the ns-3
    /// HPCC reference hashes (`switch-node.cc` `GetOutDev`): for IPv4 the
    /// three little-endian words `src`, `dst`, `sport | dport << 16`
    /// (addresses as host-order integers, `11.0.2.1` = `0x0b000201`); for
    /// IPv6 the two addresses' bytes then that word. The reference seeds
    /// each switch with its node id.
    Murmur3 { seed: u32 },
    /// The Linux bonding layer3+4 formula applied to the 5-tuple, as used by
    /// many software switches.
    LinuxL34,
    /// XOR of all 16-bit words of the tuple: a deliberately weak hash for
    /// teaching what polarisation looks like.
    Xor16,
}

/// A flow's 5-tuple.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FiveTuple {
    pub addrs: FlowAddrs,
    pub protocol: u8,
    pub sport: u16,
    pub dport: u16,
}

impl EcmpHash {
    pub fn hash(self, t: &FiveTuple) -> u32 {
        match self {
            EcmpHash::Crc32 { seed } => {
                let (buf, n) = tuple_bytes(seed, t);
                crc32fast::hash(&buf[..n])
            }
            EcmpHash::Murmur3 { seed } => murmur3_tuple(seed, t),
            EcmpHash::LinuxL34 => bond_xmit_hash(
                XmitHashPolicy::Layer34,
                &FlowKeys {
                    src_mac: [0; 6],
                    dst_mac: [0; 6],
                    ethertype: 0x0800,
                    vlan_tci: None,
                    addrs: Some(t.addrs),
                    ports: Some((t.sport, t.dport)),
                },
            ),
            EcmpHash::Xor16 => {
                let (buf, n) = tuple_bytes(0, t);
                buf[4..n]
                    .chunks(2)
                    .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
                    .fold(0, |a, w| a ^ w)
            }
        }
    }

    /// Member index among `members` (hash modulo the member count).
    pub fn select(self, t: &FiveTuple, members: usize) -> Option<usize> {
        (members > 0).then(|| self.hash(t) as usize % members)
    }
}

/// seed ‖ src ‖ dst ‖ protocol ‖ sport ‖ dport, big-endian: the bytes the
/// CRC and XOR hashes read, and how many of the buffer's are used.
fn tuple_bytes(seed: u32, t: &FiveTuple) -> ([u8; 4 + 16 + 16 + 1 + 4], usize) {
    let mut buf = [0u8; 4 + 16 + 16 + 1 + 4];
    let mut n = 0;
    let mut put = |bytes: &[u8]| {
        buf[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    put(&seed.to_be_bytes());
    match t.addrs {
        FlowAddrs::V4 { src, dst } => {
            put(&src.octets());
            put(&dst.octets());
        }
        FlowAddrs::V6 { src, dst } => {
            put(&src.octets());
            put(&dst.octets());
        }
    }
    put(&[t.protocol]);
    put(&t.sport.to_be_bytes());
    put(&t.dport.to_be_bytes());
    (buf, n)
}

/// [`EcmpHash::Murmur3`]'s key: the reference's little-endian words.
fn murmur3_tuple(seed: u32, t: &FiveTuple) -> u32 {
    let ports = u32::from(t.sport) | u32::from(t.dport) << 16;
    match t.addrs {
        FlowAddrs::V4 { src, dst } => {
            murmur3_32(&[u32::from(src), u32::from(dst), ports], &[], seed)
        }
        FlowAddrs::V6 { src, dst } => {
            let mut words = [0u32; 9];
            for (w, c) in words
                .iter_mut()
                .zip(src.octets().chunks(4).chain(dst.octets().chunks(4)))
            {
                *w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            words[8] = ports;
            murmur3_32(&words, &[], seed)
        }
    }
}

/// MurmurHash3_x86_32 (Austin Appleby's public-domain reference,
/// `MurmurHash3.cpp`) of the little-endian bytes of `words` followed by
/// `tail` (fewer than 4 bytes). Written out rather than taken from a crate:
/// the crates hash an `io::Read` or a byte slice, and a switch hashes one
/// 12-byte key per routed packet, words it already has.
pub fn murmur3_32(words: &[u32], tail: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    for &k in words {
        h ^= mix(k);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |k, &b| (k << 8) | u32::from(b));
        h ^= mix(k);
    }
    h ^= (words.len() * 4 + tail.len()) as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes as the reference implementation reads them.
    fn murmur_bytes(bytes: &[u8], seed: u32) -> u32 {
        let words: Vec<u32> = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        murmur3_32(&words, &bytes[words.len() * 4..], seed)
    }

    // Published MurmurHash3_x86_32 vectors (SMHasher's and the ones quoted
    // with the reference implementation).
    #[test]
    fn murmur3_vectors() {
        let cases: [(&[u8], u32, u32); 8] = [
            (b"", 0, 0),
            (b"", 1, 0x514e_28b7),
            (b"", 0xffff_ffff, 0x81f1_6f39),
            (&[0xff, 0xff, 0xff, 0xff], 0, 0x7629_3b50),
            (&[0x21, 0x43, 0x65, 0x87], 0, 0xf55b_516b),
            (&[0x21, 0x43, 0x65, 0x87], 0x5082_edee, 0x2362_f9de),
            (&[0x21, 0x43, 0x65], 0, 0x7e4a_8634),
            (b"Hello, world!", 1234, 0xfaf6_cdb3),
        ];
        for (bytes, seed, want) in cases {
            assert_eq!(murmur_bytes(bytes, seed), want, "{bytes:?} seed {seed:#x}");
        }
        assert_eq!(
            murmur_bytes(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c),
            0x2fa8_26cd
        );
    }

    /// The reference's key and seed: its `SwitchNode::EcmpHash` (compiled
    /// from switch-node.cc outside this repository) gives these values for
    /// node 2 (11.0.2.1) to node 3, ports 10000 -> 100, at switch 320, and
    /// for a RoCE flow 11.0.2.1 -> 11.1.63.1, 0xc132 -> 4791, at switch 345.
    #[test]
    fn murmur3_ecmp_hash_is_the_references() {
        let t = |dst: [u8; 4], sport, dport| FiveTuple {
            addrs: FlowAddrs::V4 {
                src: [11, 0, 2, 1].into(),
                dst: dst.into(),
            },
            protocol: 17,
            sport,
            dport,
        };
        let h = EcmpHash::Murmur3 { seed: 320 };
        assert_eq!(h.hash(&t([11, 0, 3, 1], 10000, 100)), 0x030a_ef22);
        assert_eq!(h.select(&t([11, 0, 3, 1], 10000, 100), 4), Some(2));
        let h = EcmpHash::Murmur3 { seed: 345 };
        assert_eq!(h.hash(&t([11, 1, 63, 1], 0xc132, 4791)), 0xe172_dc35);
    }

    /// Two tiers of 4-way ECMP: under CRC-32 with two seeds the second
    /// choice is a function of the first (polarisation); under Murmur3 with
    /// two seeds every (first, second) pair occurs.
    #[test]
    fn crc_polarises_across_tiers_and_murmur3_does_not() {
        let tuples: Vec<FiveTuple> = (0..4000u32)
            .map(|i| FiveTuple {
                addrs: FlowAddrs::V4 {
                    src: [11, 0, (i % 256) as u8, 1].into(),
                    dst: [11, 1, (i / 16 % 256) as u8, 1].into(),
                },
                protocol: 17,
                sport: 0xc000 | (i as u16 & 0x3fff),
                dport: 4791,
            })
            .collect();
        let pairs = |a: EcmpHash, b: EcmpHash| {
            let mut seen = std::collections::BTreeSet::new();
            for t in &tuples {
                seen.insert((a.select(t, 4), b.select(t, 4)));
            }
            seen.len()
        };
        assert_eq!(
            pairs(EcmpHash::Crc32 { seed: 320 }, EcmpHash::Crc32 { seed: 340 }),
            4
        );
        assert_eq!(
            pairs(
                EcmpHash::Murmur3 { seed: 320 },
                EcmpHash::Murmur3 { seed: 340 }
            ),
            16
        );
    }

    // rdma_calc_flow_label and rdma_flow_label_to_udp_sport
    // (include/rdma/ib_verbs.h) worked out for four QPN pairs.
    #[test]
    fn flow_label_and_sport_vectors() {
        let cases = [
            (0x11, 0x12, 0x00132, 0xC132),
            (0x123, 0x456, 0x4EDC2, 0xEDD1),
            (0x1A2B3C, 0x0F0E0D, 0xDE58E, 0xE5B9),
            (0xD2, 0x118, 0x0E5B0, 0xE5B3),
        ];
        for (l, r, fl, sport) in cases {
            assert_eq!(calc_flow_label(l, r), fl, "label({l:#x},{r:#x})");
            assert_eq!(calc_flow_label(r, l), fl, "label is symmetric");
            assert_eq!(flow_label_to_udp_sport(fl), sport);
            assert_eq!(roce_udp_sport(0, l, r), sport);
        }
    }

    #[test]
    fn explicit_flow_label_wins() {
        assert_eq!(roce_udp_sport(0x00132, 0x999, 0x777), 0xC132);
    }

    #[test]
    fn sport_always_in_roce_range() {
        for fl in (0..=FLOW_LABEL_MASK).step_by(997) {
            assert!(flow_label_to_udp_sport(fl) >= ROCE_UDP_SPORT_MIN);
        }
    }

    #[test]
    fn rxe_initial_sport_uses_hash_32() {
        // hash_32(1, 14) = (0x61C88647 >> 18) = 0x1872
        assert_eq!(hash_32(1, 14), 0x1872);
        assert_eq!(rxe_initial_udp_sport(1), 0xC000 + 0x1872);
        assert!(rxe_initial_udp_sport(0xFFFFFF) >= 0xC000);
    }

    #[test]
    fn cma_label() {
        assert_eq!(cma_flow_label(1, 2), 33);
        assert_eq!(cma_flow_label(0xFFFF, 0xFFFF), (0xFFFF * 32) & 0xFFFFF);
    }

    fn v4_keys(sport: u16) -> FlowKeys {
        FlowKeys::rocev2_v4(
            [0, 0, 0, 0, 0, 0x0a],
            [0, 0, 0, 0, 0, 0x0b],
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 0, 2),
            sport,
        )
    }

    // __bond_xmit_hash (drivers/net/bonding/bond_main.c) worked out on a
    // little-endian host: smac ..:0a, dmac ..:0b, 10.0.0.1 -> 10.0.0.2.
    #[test]
    fn bond_hash_ipv4_vectors() {
        use XmitHashPolicy::*;
        assert_eq!(bond_xmit_hash(Layer2, &v4_keys(0xC000)), 0x801);
        assert_eq!(bond_xmit_hash(Layer23, &v4_keys(0xC000)), 0x3030B0A);
        assert_eq!(bond_xmit_hash(Layer23, &v4_keys(0xE123)), 0x3030B0A);
        assert_eq!(bond_xmit_hash(Encap23, &v4_keys(0xE123)), 0x3030B0A);
        assert_eq!(bond_xmit_hash(Layer34, &v4_keys(0xC000)), 0x5A535333);
        assert_eq!(bond_xmit_hash(Layer34, &v4_keys(0xE123)), 0x5A5342B2);
        assert_eq!(bond_xmit_hash(Layer34, &v4_keys(0xE124)), 0x5A534131);
        assert_eq!(bond_xmit_hash(Encap34, &v4_keys(0xE124)), 0x5A534131);
    }

    // The same over IPv6, each address folded by ipv6_addr_hash
    // (include/net/ipv6.h): only src ^ dst enters, as for IPv4.
    #[test]
    fn bond_hash_ipv6_vectors() {
        use XmitHashPolicy::*;
        let src: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let dst: Ipv6Addr = "2001:db8::2".parse().unwrap();
        assert_eq!(ipv6_fold(&src), 0xB90D0120);
        assert_eq!(ipv6_fold(&dst), 0xBA0D0120);
        let k = |sport| FlowKeys {
            src_mac: [0, 0, 0, 0, 0, 0x0a],
            dst_mac: [0, 0, 0, 0, 0, 0x0b],
            ethertype: 0x86DD,
            vlan_tci: None,
            addrs: Some(FlowAddrs::V6 { src, dst }),
            ports: Some((sport, ROCE_V2_UDP_DPORT)),
        };
        assert_eq!(bond_xmit_hash(Layer2, &k(0xC000)), 0x86DC);
        assert_eq!(bond_xmit_hash(Layer23, &k(0xC000)), 0x3038559);
        assert_eq!(bond_xmit_hash(Layer34, &k(0xC000)), 0x5A535333);
        assert_eq!(bond_xmit_hash(Layer34, &k(0xE123)), 0x5A5342B2);
    }

    // The commit message of "bonding: do not discard lowest hash bit for non
    // layer3+4 hashing" shows the same flow hashing to 522133332 before and
    // 522133333 after: the non-L34 hash keeps its lowest bit.
    #[test]
    fn non_l34_keeps_lowest_bit() {
        use XmitHashPolicy::*;
        for sport in [0xC000u16, 0xC001, 0xE123] {
            let l23 = bond_xmit_hash(Layer23, &v4_keys(sport));
            let l34 = bond_xmit_hash(Layer34, &v4_keys(sport));
            // L34 is some value >> 1, so it never has bit 31 set.
            assert_eq!(l34 >> 31, 0);
            assert_eq!(l23 & 1, 0x3030B0A & 1);
        }
    }

    #[test]
    fn non_ip_frames_use_the_layer2_hash() {
        let mut k = v4_keys(0xC000);
        k.addrs = None;
        k.ports = None;
        k.ethertype = 0x8915;
        let l2 = 0x0b ^ 0x0a ^ 0x8915;
        for p in [
            XmitHashPolicy::Layer2,
            XmitHashPolicy::Layer23,
            XmitHashPolicy::Layer34,
        ] {
            assert_eq!(bond_xmit_hash(p, &k), l2, "{}", p.name());
        }
    }

    #[test]
    fn vlan_srcmac() {
        let mut k = v4_keys(0xC000);
        k.src_mac = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55];
        assert_eq!(
            bond_xmit_hash(XmitHashPolicy::VlanSrcMac, &k),
            0x001122 ^ 0x334455
        );
        k.vlan_tci = Some(0x6064);
        assert_eq!(
            bond_xmit_hash(XmitHashPolicy::VlanSrcMac, &k),
            0x6064 ^ 0x001122 ^ 0x334455
        );
    }

    #[test]
    fn slave_choice_is_plain_modulo() {
        assert_eq!(bond_slave_index(0x5A535333, 2), Some(1));
        assert_eq!(bond_slave_index(0x5A5342B2, 2), Some(0));
        assert_eq!(bond_slave_index(7, 0), None);
        assert_eq!(bond_slave_index(7, 3), Some(1));
    }

    // The table in book/src/entropy.md: eight perftest QPs between
    // 10.0.0.1 and 10.0.0.2 with sequential QPNs.
    #[test]
    fn book_eight_qp_table() {
        let rows = [
            (0x108, 0x208, 0x21840, 0xD848, 0x5A53771B, 1),
            (0x109, 0x209, 0x21B51, 0xDB59, 0x5A537F92, 0),
            (0x10A, 0x20A, 0x21E64, 0xDE6C, 0x5A53650A, 0),
            (0x10B, 0x20B, 0x22179, 0xE171, 0x5A536B9B, 1),
            (0x10C, 0x20C, 0x22490, 0xE498, 0x5A531F6D, 1),
            (0x10D, 0x20D, 0x227A9, 0xE7A1, 0x5A5303F0, 0),
            (0x10E, 0x20E, 0x22AC4, 0xEACC, 0x5A533540, 0),
            (0x10F, 0x20F, 0x22DE1, 0xEDE9, 0x5A5327D1, 1),
        ];
        for (l, r, label, sport, h34, slave) in rows {
            assert_eq!(calc_flow_label(l, r), label);
            assert_eq!(roce_udp_sport(0, l, r), sport);
            let k = v4_keys(sport);
            assert_eq!(bond_xmit_hash(XmitHashPolicy::Layer34, &k), h34);
            assert_eq!(bond_slave_index(h34, 2), Some(slave));
            let h23 = bond_xmit_hash(XmitHashPolicy::Layer23, &k);
            assert_eq!(bond_slave_index(h23, 2), Some(0));
        }
    }

    #[test]
    fn policy_names_round_trip() {
        for p in XmitHashPolicy::ALL {
            assert_eq!(XmitHashPolicy::from_name(p.name()), Some(p));
        }
        assert_eq!(XmitHashPolicy::from_name("layer4"), None);
    }

    #[test]
    fn ecmp_hash_depends_on_sport_and_is_stable() {
        let t = |sport| FiveTuple {
            addrs: FlowAddrs::V4 {
                src: Ipv4Addr::new(10, 0, 0, 1),
                dst: Ipv4Addr::new(10, 0, 0, 2),
            },
            protocol: 17,
            sport,
            dport: 4791,
        };
        let h = EcmpHash::Crc32 { seed: 7 };
        assert_eq!(h.hash(&t(0xC000)), h.hash(&t(0xC000)));
        assert_ne!(h.hash(&t(0xC000)), h.hash(&t(0xC001)));
        assert_ne!(
            EcmpHash::Crc32 { seed: 7 }.hash(&t(0xC000)),
            EcmpHash::Crc32 { seed: 8 }.hash(&t(0xC000))
        );
        assert_eq!(
            EcmpHash::LinuxL34.hash(&t(0xC000)),
            bond_xmit_hash(XmitHashPolicy::Layer34, &v4_keys(0xC000))
        );
        // Xor16 over 10.0.0.1, 10.0.0.2, proto 17, ports: hand-computed.
        let x = 0x0a00 ^ 0x0001 ^ 0x0a00 ^ 0x0002 ^ 0x11c0 ^ 0x0012 ^ 0xb700;
        assert_eq!(EcmpHash::Xor16.hash(&t(0xC000)), x);
        let counts = (0..64u16).fold([0usize; 4], |mut c, i| {
            c[h.select(&t(0xC000 + i), 4).unwrap()] += 1;
            c
        });
        assert!(counts.iter().all(|&n| n > 4), "{counts:?}");
    }
}
