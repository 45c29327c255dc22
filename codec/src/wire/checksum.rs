//! The Internet checksum (RFC 1071) of IPv4, TCP and ICMP: the ones'
//! complement of the ones'-complement sum of 16-bit big-endian words.

/// Adds `data` to a running sum, as 16-bit big-endian words (a final odd
/// byte is padded with zero, so only the last slice may have odd length).
pub(crate) fn add(mut sum: u32, data: &[u8]) -> u32 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        sum += u32::from(u16::from_be_bytes([w[0], w[1]]));
    }
    if let [last] = words.remainder() {
        sum += u32::from(*last) << 8;
    }
    fold(sum)
}

fn fold(mut sum: u32) -> u32 {
    while sum > 0xFFFF {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    sum
}

/// The checksum field's value for a running sum.
pub(crate) fn finish(sum: u32) -> u16 {
    !(fold(sum) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 §3: the sum of 0001 f203 f4f5 f6f7 is ddf2.
        let s = add(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]);
        assert_eq!(s, 0xddf2);
        assert_eq!(finish(s), !0xddf2);
        assert_eq!(add(0, &[0xab]), 0xab00);
    }
}
