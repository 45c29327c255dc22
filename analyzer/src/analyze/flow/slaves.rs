//! Which capture file (bond slave) carries a flow: the packets per file,
//! the moves of the requests from one file to another, and the header
//! fields the Linux bonding hash would pick a slave from.

use core::net::IpAddr;

use super::{Flow, FrameRef, RoceEvent};

const MAX_MOVES_KEPT: usize = 32;

#[derive(Debug, Clone, Copy)]
pub(crate) struct SlaveMove {
    pub frame: FrameRef,
    pub ts_ns: u64,
    pub from: u16,
    pub to: u16,
}

/// Per-file share of a flow.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FileUse {
    pub request_packets: u64,
    pub response_packets: u64,
    pub bytes: u64,
}

/// The L2/L3/L4 fields the bonding hash reads, from a flow's first packet
/// in one direction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HashFields {
    pub src_mac: [u8; 6],
    pub dst_mac: [u8; 6],
    pub vlan_tci: Option<u16>,
    pub src: IpAddr,
    pub dst: IpAddr,
    pub sport: u16,
    pub rocev1: bool,
}

impl HashFields {
    pub(super) fn of(ev: &RoceEvent) -> HashFields {
        HashFields {
            src_mac: ev.src_mac,
            dst_mac: ev.dst_mac,
            vlan_tci: ev.vlan_tci,
            src: ev.src,
            dst: ev.dst,
            sport: ev.sport,
            rocev1: ev.rocev1,
        }
    }
}

impl Flow {
    pub(super) fn track_slave(&mut self, ev: &RoceEvent, request: bool) {
        let cur = if request {
            &mut self.cur_request_file
        } else {
            &mut self.cur_response_file
        };
        match *cur {
            Some(f) if f != ev.file => {
                *cur = Some(ev.file);
                if request {
                    self.request_moves_total += 1;
                    if self.request_moves.len() < MAX_MOVES_KEPT {
                        self.request_moves.push(SlaveMove {
                            frame: FrameRef::of(ev),
                            ts_ns: ev.ts_ns,
                            from: f,
                            to: ev.file,
                        });
                    }
                } else {
                    self.response_moves_total += 1;
                }
            }
            Some(_) => {}
            None => *cur = Some(ev.file),
        }
    }

    /// The file that carried most of this flow's requests (responses if
    /// there were none).
    pub fn main_file(&self, requests: bool) -> Option<u16> {
        let pick = |f: &FileUse| {
            if requests {
                f.request_packets
            } else {
                f.response_packets
            }
        };
        self.files
            .iter()
            .enumerate()
            .filter(|(_, f)| pick(f) > 0)
            .max_by_key(|(i, f)| (pick(f), std::cmp::Reverse(*i)))
            .map(|(i, _)| i as u16)
    }
}
