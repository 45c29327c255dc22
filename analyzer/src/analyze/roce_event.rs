//! The small, owned summary of one frame that crosses from a reader thread
//! to the merge: everything the flow table needs and nothing else, so that
//! no frame bytes are kept after decoding.

use core::net::IpAddr;

use roce_codec::wire::aeth::AethRepr;
use roce_codec::{Frame, FrameKind, Net, Opcode, Psn};

use super::setup::{self, SetupEvent};

/// One RoCE packet as the flow table sees it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RoceEvent {
    /// Index of the file in the command line.
    pub file: u16,
    /// 1-based record number in its file, as tshark numbers frames.
    pub frame: u64,
    pub ts_ns: u64,
    pub wire_len: u32,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub vlan_tci: Option<u16>,
    /// UDP source port (0 for RoCE v1).
    pub sport: u16,
    pub ecn: u8,
    /// The traffic class byte: DSCP << 2 | ECN (RoCE v1: the GRH's).
    pub tclass: u8,
    pub opcode: Opcode,
    pub dqpn: u32,
    pub psn: Psn,
    pub aeth: Option<AethRepr>,
    /// RETH DMA length (WRITE FIRST/ONLY, READ request).
    pub dma_len: Option<u32>,
    /// IB payload bytes as the length fields declare them (without pad).
    pub payload_len: u32,
    /// BTH to ICRC, as declared: identifies a frame independent of L2 and IP
    /// fields a mirror port may rewrite.
    pub ib_len: u32,
    pub icrc: Option<[u8; 4]>,
    pub icrc_valid: Option<bool>,
    /// RoCE v1 (EtherType 0x8915, addresses from the GRH), not RoCEv2.
    pub rocev1: bool,
}

impl RoceEvent {
    /// A congestion-experienced mark in the IP header.
    pub fn ce(&self) -> bool {
        self.ecn == 3
    }
}

/// What a decoded frame is to the analysis.
pub(crate) enum Decoded {
    Roce(RoceEvent),
    /// A CM MAD: counted as RoCE, followed as connection set-up, not a flow.
    /// (Boxed, as `Tcp`'s: set-up frames are rare, and an unboxed event
    /// would make every decoded frame 80 bytes longer to move.)
    CmMad(RoceEvent, Box<SetupEvent>),
    /// TCP to or from perftest's port.
    Tcp(Box<SetupEvent>),
    /// A RoCE frame whose BTH was not captured or could not be decoded.
    RoceUndecodable,
    MacControl {
        src: [u8; 6],
        ctl: roce_codec::MacControlRepr,
    },
    Other,
}

pub(crate) fn decode(f: &Frame<'_>, file: u16, frame: u64, ts_ns: u64) -> Decoded {
    let kind = f.kind();
    let vlan_tci = f.vlans.outer().map(|t| t.tci());
    let (src, dst, sport, tclass, ib, rocev1) = match &f.net {
        Net::RoceV2 { ip, udp, ib, .. } => (
            ip.src(),
            ip.dst(),
            udp.src_port,
            ip.dscp() << 2 | ip.ecn(),
            ib,
            false,
        ),
        Net::RoceV1 { grh, ib } => (
            IpAddr::V6(grh.sgid.into()),
            IpAddr::V6(grh.dgid.into()),
            0,
            grh.traffic_class,
            ib,
            true,
        ),
        Net::MacControl(ctl) if kind != FrameKind::Malformed => {
            return Decoded::MacControl {
                src: f.eth.src,
                ctl: *ctl,
            };
        }
        Net::Tcp { .. } => {
            return setup::decode(f, file, frame, ts_ns)
                .map_or(Decoded::Other, |s| Decoded::Tcp(Box::new(s)));
        }
        _ => return Decoded::Other,
    };
    let Some(ib) = ib else {
        return Decoded::RoceUndecodable;
    };
    // Without the payload length the packet's place in its message is unknown.
    let Some(payload_len) = ib.payload_len else {
        return Decoded::RoceUndecodable;
    };
    let ib_len = ib.header_len as u32
        + payload_len
        + u32::from(ib.bth.pad_count)
        + roce_codec::icrc::ICRC_LEN as u32;
    let ev = RoceEvent {
        file,
        frame,
        ts_ns,
        wire_len: f.wire_len as u32,
        src,
        dst,
        src_mac: f.eth.src,
        dst_mac: f.eth.dst,
        vlan_tci,
        sport,
        ecn: tclass & 3,
        tclass,
        opcode: ib.bth.opcode,
        dqpn: ib.bth.dest_qp,
        psn: ib.bth.psn,
        aeth: ib.ext.aeth(),
        dma_len: ib.ext.reth().map(|r| r.dma_len),
        payload_len,
        ib_len,
        icrc: ib.icrc,
        icrc_valid: ib.icrc_valid,
        rocev1,
    };
    match setup::decode(f, file, frame, ts_ns) {
        Some(s) if !rocev1 => Decoded::CmMad(ev, Box::new(s)),
        _ => Decoded::Roce(ev),
    }
}
