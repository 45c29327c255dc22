//! The summary in the vocabulary both tools share: one
//! [`QpFigures`] per RC connection, named from its requester, as
//! `roce-pcap` names the flows it finds in captures.
//!
//! ```text
//!   summary.json qps[]:  client row (requester) ─┐
//!                        server row (responder) ─┴─ joined on the client's dest_qpn ─▶ QpFigures
//! ```
//!
//! Where each figure comes from (see `roce_capture::figures` for what it
//! means): the key, QPNs, UDP port, first packet, goodput, messages,
//! retransmissions, timeouts, NAKs and port from the client row; payload,
//! frames and wire bytes are what both ends sent; the last packet is the
//! client's last completion, which in a run that ends cleanly is the
//! arrival of the last response at the requester; go-back-N episodes are
//! the requester's rewinds, whatever their cause; CNPs are those that
//! reached the client QP, CE-marked requests those that reached the server
//! QP with CE. It keeps no per-message latencies.

use roce_capture::figures::{QpFigures, QpKey};

use super::summary::{QpSummary, Summary};
use crate::world::Role;

impl Summary {
    /// One [`QpFigures`] per connection, in client-row order. A client row
    /// without its server row (which a summary always has) counts only
    /// the client's side.
    pub fn qp_figures(&self) -> Vec<QpFigures> {
        self.clients()
            .map(|c| {
                let server = self
                    .qps
                    .iter()
                    .find(|s| s.role == Role::Server && s.qpn == c.dest_qpn && s.dest_qpn == c.qpn);
                figures(c, server)
            })
            .collect()
    }
}

fn figures(c: &QpSummary, s: Option<&QpSummary>) -> QpFigures {
    let both = |f: fn(&QpSummary) -> u64| f(c) + s.map_or(0, f);
    QpFigures {
        key: QpKey {
            src: c.src.to_string(),
            dst: c.dst.to_string(),
            responder_qpn: c.dest_qpn,
        },
        requester_qpn: Some(c.qpn),
        udp_sport: c.udp_sport,
        first_ns: c.first_tx_ns,
        last_ns: c.finished_at_ns,
        payload_bytes: both(|q| q.tx_payload_bytes),
        packets: both(|q| q.tx_packets),
        wire_bytes: both(|q| q.tx_bytes),
        request_packets: c.figures.request_packets,
        goodput_gbps: c.goodput_gbps,
        messages: c.msgs_completed,
        retransmitted_packets: c.retransmitted_packets,
        go_back_n: c.figures.rewinds,
        timeouts: c.timeouts,
        naks: c.naks_rx,
        cnps: c.figures.cnps_rx,
        // The requests that reached the responder with CE: what its NIC's
        // notification point saw.
        ecn_ce_packets: s.map_or(0, |s| s.figures.ce_marks_rx),
        message_latency_ns: Default::default(),
        port: c.port.as_deref().map(String::from),
    }
}
