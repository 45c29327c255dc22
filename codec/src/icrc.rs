//! The invariant CRC that ends every RoCE packet.
//!
//! The ICRC is the standard CRC-32 (the Ethernet/zlib polynomial) over a
//! pseudo-packet in which every field a router may rewrite is replaced by
//! ones, so that the CRC survives routing:
//!
//! ```text
//!  8 x 0xFF          stands in for the IB Local Route Header RoCE lacks
//!  IPv4 header       TOS, TTL and header checksum = all ones
//!  | IPv6 header     traffic class, flow label and hop limit = all ones
//!  | GRH (RoCE v1)   same masks as IPv6
//!  UDP header        checksum = 0xFFFF            (RoCEv2 only)
//!  BTH               byte 4 (FECN, BECN, resv6) = 0xFF
//!  rest              extended headers, payload and pad, as sent
//! ```
//! The 32-bit result is sent little-endian, the one little-endian field of
//! the packet (Linux drivers/infiniband/sw/rxe/rxe_icrc.c; scapy
//! contrib/roce.py).

use crate::wire::bth::ICRC_MASKED_BYTE;
use crate::wire::grh::GrhRepr;

/// The length of the ICRC is the IB packet's ([`crate::wire::ib`]), which
/// ends with it; here too for those who compute it.
pub use crate::wire::ib::ICRC_LEN;

fn start() -> crc32fast::Hasher {
    let mut h = crc32fast::Hasher::new();
    h.update(&[0xFF; 8]);
    h
}

fn finish(mut h: crc32fast::Hasher, ib: &[u8]) -> [u8; 4] {
    let mut bth = [0u8; 12];
    let n = ib.len().min(12);
    bth[..n].copy_from_slice(&ib[..n]);
    if n > ICRC_MASKED_BYTE {
        bth[ICRC_MASKED_BYTE] = 0xFF;
    }
    h.update(&bth[..n]);
    h.update(&ib[n..]);
    h.finalize().to_le_bytes()
}

fn masked_udp(udp: &[u8]) -> [u8; 8] {
    let mut u: [u8; 8] = udp[..8].try_into().expect("UDP header is 8 bytes");
    u[6] = 0xFF;
    u[7] = 0xFF;
    u
}

/// ICRC of a RoCEv2 packet over IPv4.
///
/// `ipv4` is the IPv4 header with options, `udp` the 8-byte UDP header and
/// `ib` the InfiniBand packet from the BTH up to (not including) the ICRC.
pub fn rocev2_ipv4(ipv4: &[u8], udp: &[u8], ib: &[u8]) -> [u8; 4] {
    let mut h = start();
    let mut ip = [0u8; 60];
    let n = ipv4.len().min(60);
    ip[..n].copy_from_slice(&ipv4[..n]);
    ip[1] = 0xFF; // TOS: DSCP and ECN
    ip[8] = 0xFF; // TTL
    ip[10] = 0xFF; // header checksum
    ip[11] = 0xFF;
    h.update(&ip[..n]);
    h.update(&masked_udp(udp));
    finish(h, ib)
}

/// ICRC of a RoCEv2 packet over IPv6 (`ipv6` is the 40-byte fixed header).
pub fn rocev2_ipv6(ipv6: &[u8], udp: &[u8], ib: &[u8]) -> [u8; 4] {
    let mut h = start();
    h.update(&GrhRepr::icrc_masked(ipv6));
    h.update(&masked_udp(udp));
    finish(h, ib)
}

/// ICRC of a RoCE v1 packet (`grh` is the 40-byte GRH).
pub fn rocev1(grh: &[u8], ib: &[u8]) -> [u8; 4] {
    let mut h = start();
    h.update(&GrhRepr::icrc_masked(grh));
    finish(h, ib)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    // Vector A: the ConnectX-4 Lx CNP captured in scapy's test/contrib/roce.uts.
    #[test]
    fn vector_a_connectx4_cnp() {
        let f = hex("e41d2dab2bc2 7cfe90643b32 0800
             45c2 003c 718c 4000 4011 9161 0a001101 0a001201
             0000 12b7 0028 0000
             8100ffff 40000118 00000000
             00000000000000000000000000000000
             82fd002a");
        assert_eq!(f.len(), 74);
        let icrc = rocev2_ipv4(&f[14..34], &f[34..42], &f[42..70]);
        assert_eq!(icrc, [0x82, 0xfd, 0x00, 0x2a]);
        assert_eq!(u32::from_le_bytes(icrc), 0x2A00FD82);
    }

    // Vector B: the UC SEND_ONLY with PadCnt 2 of scapy's test/contrib/roce.uts.
    #[test]
    fn vector_b_uc_send_only() {
        let ip = hex("4501 0040 0478 4000 4011 b4d5 c0a80007 c0a80007");
        let udp = hex("c000 12b7 002c aca2");
        let mut ib = hex("24 60 ffff 00 0000d3 00 cf1710");
        ib.extend_from_slice(b"F0\x81\x8b\xe2\x895\xd9\x0e\x9a\x95PT\x01\xbe\x88^P\x00\x00");
        assert_eq!(ib.len(), 32);
        assert_eq!(rocev2_ipv4(&ip, &udp, &ib), [0x78, 0xf3, 0x53, 0xf3]);
    }

    #[test]
    fn masked_fields_do_not_change_the_icrc() {
        let ip = hex("4501 0040 0478 4000 4011 b4d5 c0a80007 c0a80007");
        let udp = hex("c000 12b7 002c aca2");
        let mut ib = hex("24 60 ffff 00 0000d3 00 cf1710");
        ib.extend_from_slice(&[7; 20]);
        let base = rocev2_ipv4(&ip, &udp, &ib);
        let (mut ip2, mut udp2, mut ib2) = (ip.clone(), udp.clone(), ib.clone());
        ip2[1] = 0x03; // ECN CE marked in flight
        ip2[8] = 17; // TTL decremented
        ip2[10] = 0;
        udp2[7] = 0;
        ib2[4] = 0x80; // FECN
        assert_eq!(rocev2_ipv4(&ip2, &udp2, &ib2), base);
        ib2[12] ^= 1; // payload is covered
        assert_ne!(rocev2_ipv4(&ip2, &udp2, &ib2), base);
        let mut ip3 = ip.clone();
        ip3[15] ^= 1; // source address is covered
        assert_ne!(rocev2_ipv4(&ip3, &udp, &ib), base);
    }
}
