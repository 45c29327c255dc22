//! # roce-pcap
//!
//! Reads pcap/pcapng captures (plain or gzip) and turns them into decoded
//! RoCE frames through `roce-codec`, the same codec the simulator writes its
//! captures with.

pub mod capture;
