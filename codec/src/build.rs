//! Shorthands for building frames, used by the simulator's taps, the corpus
//! generators and tests. They only fill in [`IbRepr`]/[`FrameRepr`] values;
//! the bytes still come from [`FrameRepr::emit`].
//!
//! ```
//! use core::net::Ipv4Addr;
//! use roce_codec::*;
//! let ib = IbRepr::new(Opcode(0x0A), 0x12, Psn::new(7), 4096)
//!     .with_reth(RethRepr { va: 0x1000, rkey: 0x42, dma_len: 4096 })
//!     .with_ack_req(true);
//! let ip = Ipv4Repr::udp(Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2), 26, 2);
//! let f = FrameRepr::rocev2([2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], IpRepr::V4(ip), 0xC132, ib);
//! let bytes = f.to_vec(&[0; 4096]);
//! assert_eq!(bytes.len(), 14 + 20 + 8 + 12 + 16 + 4096 + 4);
//! ```

use crate::frame::{EthRepr, FrameRepr, IpRepr, NetRepr, UdpRepr, Vlans};
use crate::hash::ROCE_V2_UDP_DPORT;
use crate::psn::Psn;
use crate::wire::aeth::{AethRepr, Syndrome};
use crate::wire::atomic_ack_eth::AtomicAckEthRepr;
use crate::wire::atomic_eth::AtomicEthRepr;
use crate::wire::bth::BthRepr;
use crate::wire::cnp::CnpRepr;
use crate::wire::deth::DethRepr;
use crate::wire::feth::FethRepr;
use crate::wire::ib::{ExtHeaders, IbRepr, pad_for};
use crate::wire::ieth::IethRepr;
use crate::wire::immdt::ImmDtRepr;
use crate::wire::mac_control::{MacControlRepr, PAUSE_DST_MAC};
use crate::wire::opcode::{HeaderSet, Opcode};
use crate::wire::rdeth::RdethRepr;
use crate::wire::reth::RethRepr;
use crate::wire::xrceth::XrcethRepr;

impl ExtHeaders {
    /// Every header of `set`, zero-valued (a CNP's reserved bytes are zero,
    /// as on the wire).
    pub fn for_set(set: HeaderSet) -> ExtHeaders {
        let on = |f| set.contains(f);
        ExtHeaders {
            rdeth: on(HeaderSet::RDETH).then(RdethRepr::default),
            deth: on(HeaderSet::DETH).then(DethRepr::default),
            xrceth: on(HeaderSet::XRCETH).then(XrcethRepr::default),
            feth: on(HeaderSet::FETH).then(FethRepr::default),
            reth: on(HeaderSet::RETH).then(RethRepr::default),
            atomic_eth: on(HeaderSet::ATOMIC_ETH).then(AtomicEthRepr::default),
            aeth: on(HeaderSet::AETH).then_some(AethRepr {
                syndrome: Syndrome::ACK_NO_CREDITS,
                msn: 0,
            }),
            atomic_ack_eth: on(HeaderSet::ATOMIC_ACK_ETH).then(AtomicAckEthRepr::default),
            immdt: on(HeaderSet::IMMDT).then(ImmDtRepr::default),
            ieth: on(HeaderSet::IETH).then(IethRepr::default),
            cnp: on(HeaderSet::CNP).then(CnpRepr::default),
        }
    }
}

impl IbRepr {
    /// A packet of `opcode` with P_Key 0xFFFF, PadCnt from `payload_len`
    /// and every header its opcode needs present with zero values. A CNP
    /// gets BECN set. Reserved opcodes get no extended headers.
    pub fn new(opcode: Opcode, dest_qp: u32, psn: Psn, payload_len: u32) -> IbRepr {
        let set = opcode.info().map_or(HeaderSet::empty(), |i| i.headers);
        IbRepr {
            bth: BthRepr {
                opcode,
                pkey: BthRepr::DEFAULT_PKEY,
                dest_qp: dest_qp & 0xFF_FFFF,
                psn,
                pad_count: pad_for(payload_len),
                becn: opcode == Opcode::CNP,
                ..BthRepr::default()
            },
            ext: ExtHeaders::for_set(set),
            payload_len,
        }
    }

    /// A CNP for `dest_qp` as ConnectX NICs send it (PSN 0, BECN set).
    pub fn cnp(dest_qp: u32) -> IbRepr {
        IbRepr::new(Opcode::CNP, dest_qp, Psn::new(0), 0)
    }

    /// An RC ACKNOWLEDGE (or NAK) for `psn`.
    pub fn ack(dest_qp: u32, psn: Psn, syndrome: Syndrome, msn: u32) -> IbRepr {
        IbRepr::new(Opcode(0x11), dest_qp, psn, 0).with_aeth(AethRepr {
            syndrome,
            msn: msn & 0xFF_FFFF,
        })
    }

    pub fn with_ack_req(mut self, ack_req: bool) -> IbRepr {
        self.bth.ack_req = ack_req;
        self
    }
    pub fn with_reth(mut self, reth: RethRepr) -> IbRepr {
        self.ext.reth = Some(reth);
        self
    }
    pub fn with_aeth(mut self, aeth: AethRepr) -> IbRepr {
        self.ext.aeth = Some(aeth);
        self
    }
    pub fn with_deth(mut self, deth: DethRepr) -> IbRepr {
        self.ext.deth = Some(deth);
        self
    }
    pub fn with_immdt(mut self, data: u32) -> IbRepr {
        self.ext.immdt = Some(ImmDtRepr { data });
        self
    }
    pub fn with_atomic_eth(mut self, a: AtomicEthRepr) -> IbRepr {
        self.ext.atomic_eth = Some(a);
        self
    }
    pub fn with_atomic_ack_eth(mut self, orig: u64) -> IbRepr {
        self.ext.atomic_ack_eth = Some(AtomicAckEthRepr { orig });
        self
    }
    pub fn with_ieth(mut self, rkey: u32) -> IbRepr {
        self.ext.ieth = Some(IethRepr { rkey });
        self
    }
}

impl FrameRepr {
    /// An untagged RoCEv2 frame to UDP port 4791.
    pub fn rocev2(
        dst_mac: [u8; 6],
        src_mac: [u8; 6],
        ip: IpRepr,
        udp_sport: u16,
        ib: IbRepr,
    ) -> FrameRepr {
        FrameRepr {
            eth: EthRepr {
                dst: dst_mac,
                src: src_mac,
            },
            vlans: Vlans::none(),
            net: NetRepr::RoceV2 {
                ip,
                udp: UdpRepr {
                    src_port: udp_sport,
                    dst_port: ROCE_V2_UDP_DPORT,
                    checksum: 0,
                },
                ib,
            },
        }
    }

    /// An 802.1Qbb PFC frame from `src_mac` to the reserved PAUSE address.
    pub fn pfc(src_mac: [u8; 6], enable_vector: u8, times: [u16; 8]) -> FrameRepr {
        FrameRepr {
            eth: EthRepr {
                dst: PAUSE_DST_MAC,
                src: src_mac,
            },
            vlans: Vlans::none(),
            net: NetRepr::MacControl(MacControlRepr::Pfc {
                enable_vector: u16::from(enable_vector),
                times,
            }),
        }
    }

    /// An 802.3x PAUSE frame.
    pub fn pause(src_mac: [u8; 6], time: u16) -> FrameRepr {
        FrameRepr {
            eth: EthRepr {
                dst: PAUSE_DST_MAC,
                src: src_mac,
            },
            vlans: Vlans::none(),
            net: NetRepr::MacControl(MacControlRepr::Pause { time }),
        }
    }

    /// The IB packet of a RoCE frame.
    pub fn ib(&self) -> Option<&IbRepr> {
        match &self.net {
            NetRepr::RoceV2 { ib, .. } | NetRepr::RoceV1 { ib, .. } => Some(ib),
            _ => None,
        }
    }

    pub fn ib_mut(&mut self) -> Option<&mut IbRepr> {
        match &mut self.net {
            NetRepr::RoceV2 { ib, .. } | NetRepr::RoceV1 { ib, .. } => Some(ib),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbitrary::defined_opcodes;

    #[test]
    fn new_passes_check_for_every_defined_opcode() {
        for op in defined_opcodes() {
            let info = Opcode(op).info().unwrap();
            let len = if info.headers.contains(HeaderSet::PAYLOAD) {
                13
            } else {
                0
            };
            IbRepr::new(Opcode(op), 1, Psn::new(2), len)
                .check()
                .unwrap_or_else(|e| panic!("{op:#x}: {e}"));
        }
    }

    #[test]
    fn cnp_matches_the_connectx_capture() {
        let c = IbRepr::cnp(0x118);
        assert!(c.bth.becn && !c.bth.fecn);
        assert_eq!(c.bth.pkey, 0xFFFF);
        assert_eq!(c.buffer_len(), 12 + 16 + 4);
    }
}
