//! Layer 2: the Ethernet II header, up to two 802.1Q/802.1ad tags, and the
//! MAC control frames (PAUSE, PFC) that ride directly on Ethernet.
//!
//! ```text
//!  0            6            12       14            18            22
//!  +------------+------------+--------+-------------+-------------+-----
//!  |  dst MAC   |  src MAC   |  TPID  | TCI | TPID  | TCI | type  | ...
//!  +------------+------------+--------+-------------+-------------+-----
//!                             0x88A8   outer tag      0x8100 inner tag
//!                             0x8100                  (both optional)
//!
//!  TCI = PCP (3 bits) | DEI (1) | VID (12)
//! ```
//!
//! Each tag's TPID is the EtherType field of what precedes it, so a repr
//! keeps the TPID in the [`VlanTag`] it announced: an untagged frame writes
//! the network EtherType after the source MAC, a tagged one the outer TPID.
//! The FCS is not part of a frame here; where a capture kept it, it ends up
//! in [`Frame::trailer`].
//!
//! The header and tags are read and written with etherparse.

use etherparse::{
    EtherType, Ethernet2Header, SingleVlanHeader, SingleVlanHeaderSlice, VlanId, VlanPcp,
};

use super::{Frame, Net, split_declared, truncated};
use crate::error::{Layer, Result, Warnings};
use crate::wire::mac_control::MacControlRepr;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86DD;
/// RoCE v1 (`ETH_P_IBOE`).
pub const ETHERTYPE_ROCE_V1: u16 = 0x8915;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_QINQ: u16 = 0x88A8;
/// The pre-802.1ad TPID some switches still send for the outer tag.
const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
pub(super) const ETH_LEN: usize = 14;
const VLAN_LEN: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct EthRepr {
    pub dst: [u8; 6],
    pub src: [u8; 6],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct VlanTag {
    /// The TPID that announced this tag (0x8100, 0x88A8 or 0x9100).
    pub tpid: u16,
    pub pcp: u8,
    pub dei: bool,
    pub vid: u16,
}

impl VlanTag {
    /// A customer tag (TPID 0x8100).
    pub fn dot1q(vid: u16, pcp: u8) -> VlanTag {
        VlanTag {
            tpid: ETHERTYPE_VLAN,
            pcp,
            dei: false,
            vid,
        }
    }

    /// The 16-bit TCI as it appears on the wire.
    pub fn tci(&self) -> u16 {
        (u16::from(self.pcp & 7) << 13) | (u16::from(self.dei) << 12) | (self.vid & 0x0FFF)
    }
}

/// Zero, one or two 802.1Q tags, outermost first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Vlans {
    tags: [VlanTag; 2],
    len: u8,
}

impl Vlans {
    pub const MAX: usize = 2;

    pub fn none() -> Vlans {
        Vlans::default()
    }

    pub fn one(tag: VlanTag) -> Vlans {
        Vlans {
            tags: [tag, VlanTag::default()],
            len: 1,
        }
    }

    pub fn two(outer: VlanTag, inner: VlanTag) -> Vlans {
        Vlans {
            tags: [outer, inner],
            len: 2,
        }
    }

    pub fn as_slice(&self) -> &[VlanTag] {
        &self.tags[..self.len as usize]
    }

    pub fn outer(&self) -> Option<&VlanTag> {
        self.as_slice().first()
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push(&mut self, tag: VlanTag) {
        self.tags[self.len as usize] = tag;
        self.len += 1;
    }
}

/// Bytes of the Ethernet header and `vlans`' tags.
pub(super) fn l2_len(vlans: &Vlans) -> usize {
    ETH_LEN + VLAN_LEN * vlans.len()
}

/// The addresses and EtherType of the Ethernet header at the start of
/// `bytes`, or why there is none.
pub(super) fn parse_eth(bytes: &[u8]) -> Result<(EthRepr, u16)> {
    crate::error::need(bytes, Layer::Ethernet, ETH_LEN)?;
    let eth = EthRepr {
        dst: bytes[0..6].try_into().unwrap(),
        src: bytes[6..12].try_into().unwrap(),
    };
    Ok((eth, u16::from_be_bytes([bytes[12], bytes[13]])))
}

/// Reads the tags announced by `f.ethertype` from `off` on, up to
/// [`Vlans::MAX`], leaving the EtherType after them in `f.ethertype`.
/// Returns the offset after the last tag.
pub(super) fn parse_vlans(f: &mut Frame<'_>, bytes: &[u8], mut off: usize) -> Result<usize> {
    while matches!(
        f.ethertype,
        ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD
    ) && f.vlans.len() < Vlans::MAX
    {
        let v = SingleVlanHeaderSlice::from_slice(&bytes[off..])
            .map_err(|e| truncated(Layer::Vlan, off, &e))?;
        f.vlans.push(VlanTag {
            tpid: f.ethertype,
            pcp: v.priority_code_point().value(),
            dei: v.drop_eligible_indicator(),
            vid: v.vlan_identifier().value(),
        });
        f.ethertype = v.ether_type().0;
        off += VLAN_LEN;
    }
    Ok(off)
}

/// Writes the Ethernet header and the tags before a network layer of
/// `ethertype`; returns their length.
pub(super) fn emit_l2(eth: &EthRepr, vlans: &Vlans, ethertype: u16, buf: &mut [u8]) -> usize {
    let h = Ethernet2Header {
        destination: eth.dst,
        source: eth.src,
        ether_type: EtherType(vlans.outer().map_or(ethertype, |t| t.tpid)),
    };
    buf[..ETH_LEN].copy_from_slice(&h.to_bytes());
    let mut off = ETH_LEN;
    let tags = vlans.as_slice();
    for (i, t) in tags.iter().enumerate() {
        let next = tags.get(i + 1).map_or(ethertype, |n| n.tpid);
        let v = SingleVlanHeader {
            pcp: VlanPcp::try_new(t.pcp & 7).unwrap(),
            drop_eligible_indicator: t.dei,
            vlan_id: VlanId::try_new(t.vid & 0x0FFF).unwrap(),
            ether_type: EtherType(next),
        };
        buf[off..off + VLAN_LEN].copy_from_slice(&v.to_bytes());
        off += VLAN_LEN;
    }
    off
}

/// The MAC control body at `off`; what follows its 46 bytes (an FCS) is
/// the trailer.
pub(super) fn parse_mac_control<'a>(f: &mut Frame<'a>, bytes: &'a [u8], off: usize) -> Result<()> {
    let m = MacControlRepr::parse(&bytes[off..]).map_err(|e| e.at(off))?;
    if matches!(m, MacControlRepr::Unknown { .. }) {
        f.warnings.insert(Warnings::UNKNOWN_MAC_CONTROL);
    }
    let end = off + MacControlRepr::LEN;
    // Emit writes zeros after the parameters; anything else there cannot
    // come back from a repr, so it is flagged (and `to_repr` declines).
    let rest = &bytes[(off + m.header_len()).min(bytes.len())..end.min(bytes.len())];
    if rest.iter().any(|&b| b != 0) {
        f.warnings.insert(Warnings::MAC_CONTROL_PAD_NONZERO);
    }
    f.trailer = split_declared(bytes, off, MacControlRepr::LEN).1;
    f.net = Net::MacControl(m);
    Ok(())
}
