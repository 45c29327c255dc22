//! # rocesim
//!
//! A deterministic discrete-event simulator of RoCEv2 networks: hosts with
//! bonded NICs, switches, lossless priorities, ECN and RC queue pairs that
//! retransmit go-back-N. Packets carry `roce-codec` reprs; bytes exist only
//! at capture taps, written by the codec's `emit`.

pub mod time;
pub mod transport;
