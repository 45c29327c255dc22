//! # roce-codec
//!
//! One codec for RoCE traffic, shared by the `rocesim` simulator and the
//! `roce-pcap` analyzer so that simulated and captured frames are read and
//! written by the same code.
//!
//! * [`frame`]: whole frames. [`Frame::parse`] / [`Frame::parse_lax`] decode
//!   bytes; [`FrameRepr::emit`] writes them, ICRC included. One file per
//!   layer group: Ethernet and 802.1Q tags (with MAC control dispatch), IPv4
//!   and IPv6, UDP, the IB packet after UDP or the RoCE v1 GRH, and the
//!   [`ParseOptions`]; `frame/mod.rs` walks them.
//! * [`wire`]: one module per header below UDP or the GRH (BTH, RETH, AETH,
//!   ..., GRH) and MAC control (PAUSE, PFC), smoltcp-style; the MADs of
//!   connection set-up (MAD header, CM messages, the RDMA CM header in a
//!   REQ) and the host stack's TCP and ICMPv4.
//! * [`perftest`]: the key messages perftest exchanges over TCP port 18515.
//! * [`error`]: the [`Error`] that stops decoding (layer, offset, bytes
//!   required and present) and the [`Warnings`] that do not.
//! * [`icrc`]: the invariant CRC of RoCE v1 and v2.
//! * [`psn`]: 24-bit PSN arithmetic.
//! * [`hash`]: the RoCEv2 UDP source port, the Linux bonding transmit hash
//!   and ECMP hashes.
//! * [`build`]: shorthands that fill in reprs for common packets (the
//!   simulator's taps, the trace generators, tests); the bytes still come
//!   from `emit`.
//! * `arbitrary` (feature `proptest`): proptest strategies for reprs, for
//!   other crates' property tests.
//!
//! No I/O and no simulator types live here. Decoding never panics and never
//! allocates; every error names the layer, the byte offset, and the bytes
//! required and present.
//!
//! ```
//! use roce_codec::{Frame, FrameKind, ParseOptions};
//! // The ConnectX-4 Lx CNP captured in scapy's test/contrib/roce.uts.
//! let bytes = [
//!     0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,
//!     0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61,
//!     0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00, 0x12, 0x01,
//!     0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
//!     0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
//!     0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
//!     0x82, 0xfd, 0x00, 0x2a,
//! ];
//! let f = Frame::parse(&bytes, &ParseOptions::default()).unwrap();
//! assert_eq!(f.kind(), FrameKind::RoceV2);
//! let ib = f.ib().unwrap();
//! assert_eq!(ib.bth.opcode.name(), "CNP");
//! assert_eq!(ib.bth.dest_qp, 0x118);
//! assert_eq!(ib.icrc_valid, Some(true));
//! let (repr, payload) = f.to_repr().unwrap();
//! assert_eq!(repr.to_vec(payload), bytes);
//! ```

pub mod build;
pub mod error;
pub mod frame;
pub mod hash;
pub mod icrc;
pub mod nccl;
pub mod perftest;
pub mod psn;
pub mod wire;

#[cfg(any(test, feature = "proptest"))]
pub mod arbitrary;

pub use error::{Error, Layer, Warnings};
pub use frame::{
    EthRepr, Frame, FrameKind, FrameRepr, IpRepr, Ipv4Options, Ipv4Repr, Ipv6Repr, Net, NetRepr,
    ParseOptions, PortSet, UdpRepr, VlanTag, Vlans,
};
pub use psn::Psn;
pub use wire::aeth::{AethRepr, NakCode, Syndrome, SyndromeKind};
pub use wire::atomic_ack_eth::AtomicAckEthRepr;
pub use wire::atomic_eth::AtomicEthRepr;
pub use wire::bth::BthRepr;
pub use wire::cm::{CmMessage, CmRepr, RejReason};
pub use wire::cma::CmaHdr;
pub use wire::cnp::CnpRepr;
pub use wire::deth::DethRepr;
pub use wire::feth::FethRepr;
pub use wire::grh::GrhRepr;
pub use wire::ib::{ExtHeaders, IbPacket, IbRepr, pad_for};
pub use wire::icmpv4::Icmpv4Repr;
pub use wire::ieth::IethRepr;
pub use wire::immdt::ImmDtRepr;
pub use wire::int::{IntHopRepr, IntRepr};
pub use wire::mac_control::MacControlRepr;
pub use wire::mad::MadRepr;
pub use wire::opcode::{HeaderSet, Opcode, OpcodeInfo, Operation, Transport};
pub use wire::rdeth::RdethRepr;
pub use wire::reth::RethRepr;
pub use wire::tcp::TcpRepr;
pub use wire::xrceth::XrcethRepr;
