//! The link layers a capture may hold, and how a frame's bytes become a
//! codec [`Frame`] for each: Ethernet goes to the codec as it is; the
//! Linux cooked headers (SLL, SLL2) are read here and the codec takes
//! over after them.

use pcap_file::DataLink;
use roce_codec::{EthRepr, Frame, ParseOptions};

use super::RawFrame;

/// Link layers we decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkType {
    Ethernet,
    /// Linux cooked capture v1 (`tcpdump -i any` on older libpcap).
    LinuxSll,
    /// Linux cooked capture v2.
    LinuxSll2,
}

impl LinkType {
    pub(super) fn from_datalink(d: DataLink) -> Option<LinkType> {
        match d {
            DataLink::ETHERNET => Some(LinkType::Ethernet),
            DataLink::LINUX_SLL => Some(LinkType::LinuxSll),
            DataLink::LINUX_SLL2 => Some(LinkType::LinuxSll2),
            _ => None,
        }
    }
}

impl<'a> RawFrame<'a> {
    /// Decodes the frame with the codec, in lax mode. Fails only when not
    /// even the link-layer header is there.
    pub fn decode(&self, opts: &ParseOptions) -> Result<Frame<'a>, roce_codec::Error> {
        match self.link {
            LinkType::Ethernet => Frame::parse_lax(self.data, self.wire_len, opts),
            LinkType::LinuxSll => sll(self.data, 16, 5, 6, 14, self.wire_len, opts),
            LinkType::LinuxSll2 => sll(self.data, 20, 11, 12, 0, self.wire_len, opts),
        }
    }
}

/// Linux cooked headers carry the sender's link address and the EtherType
/// but no destination address; the destination is reported as zeros.
///
/// ```text
/// SLL  (16): pkttype(2) hatype(2) addrlen(2) addr(8) protocol(2)
/// SLL2 (20): protocol(2) resv(2) ifindex(4) hatype(2) pkttype(1) addrlen(1) addr(8)
/// ```
fn sll<'a>(
    data: &'a [u8],
    header_len: usize,
    addr_len_at: usize,
    addr_at: usize,
    proto_at: usize,
    wire_len: usize,
    opts: &ParseOptions,
) -> Result<Frame<'a>, roce_codec::Error> {
    if data.len() < header_len {
        return Err(roce_codec::Error::Truncated {
            layer: roce_codec::Layer::Ethernet,
            offset: 0,
            required: header_len,
            present: data.len(),
        });
    }
    let mut eth = EthRepr::default();
    if data[addr_len_at] >= 6 {
        eth.src.copy_from_slice(&data[addr_at..addr_at + 6]);
    }
    let ethertype = u16::from_be_bytes([data[proto_at], data[proto_at + 1]]);
    Ok(Frame::parse_after_l2(
        eth, ethertype, data, header_len, wire_len, opts,
    ))
}
