//! Mirror-port copies: a frame identical to one just before it (same ICRC,
//! PSN, opcode, length and AETH, within the duplicate window, with no NAK
//! or resend in between) was copied twice by the capture setup and is
//! left out of every count. A request taken for a copy is held a moment,
//! in case a NAK shows it was the resend the NAK caused.

use roce_codec::Psn;

use super::acks::NAK_AFTER_REWIND_NS;
use super::{Flow, FlowOptions, RoceEvent};

pub(super) const DUP_RING: usize = 16;

/// Requests taken for mirror copies that a NAK may still turn back into
/// resends.
const MAX_HELD_COPIES: usize = 8;

#[derive(Debug, Clone, Copy)]
pub(super) struct Fingerprint {
    pub(super) psn: Psn,
    pub(super) opcode: u8,
    pub(super) ib_len: u32,
    pub(super) icrc: Option<[u8; 4]>,
    pub(super) msn: u32,
    pub(super) ts: u64,
    pub(super) epoch: u64,
}

impl Flow {
    /// Counts a request taken for a mirror copy, and holds it for a moment
    /// in case a NAK turns it back into a resend ([`Flow::replay_resends`]).
    pub(super) fn hold_copy(&mut self, ev: &RoceEvent) {
        self.mirror_duplicates += 1;
        self.mirrored_requests += 1;
        if self.held_copies.len() >= MAX_HELD_COPIES {
            self.held_copies.pop_front();
        }
        self.held_copies.push_back(*ev);
    }

    /// Checks the duplicate ring; records the frame if it is new.
    pub(super) fn is_mirror_duplicate(
        &mut self,
        ev: &RoceEvent,
        window_ns: u64,
        epoch: u64,
    ) -> bool {
        // A frame damaged on the way still carries the ICRC of the good
        // bytes; its resend must not look like a copy of it.
        if ev.icrc_valid == Some(false) {
            return false;
        }
        let fp = Fingerprint {
            psn: ev.psn,
            opcode: ev.opcode.0,
            ib_len: ev.ib_len,
            icrc: ev.icrc,
            msn: ev
                .aeth
                .map_or(u32::MAX, |a| a.msn | (u32::from(a.syndrome.0) << 24)),
            ts: ev.ts_ns,
            epoch,
        };
        let dup = self.dups.iter().flatten().any(|d| {
            d.psn == fp.psn
                && d.opcode == fp.opcode
                && d.ib_len == fp.ib_len
                && d.icrc == fp.icrc
                && d.msn == fp.msn
                && d.epoch == fp.epoch
                && fp.ts.abs_diff(d.ts) <= window_ns
        });
        if !dup {
            self.dups[self.dup_next] = Some(fp);
            self.dup_next = (self.dup_next + 1) % DUP_RING;
        }
        dup
    }

    /// A NAK (sequence error or RNR) for `nak.psn` time-stamped with or
    /// just after requests that were taken for mirror copies, the first of
    /// them with the NAK's PSN: those were the resends the NAK caused (the
    /// NAK was captured on another slave whose clock is a little behind, or
    /// in the same clock tick). They are counted again as the requests they
    /// were, after the NAK, in their order.
    pub(super) fn replay_resends(&mut self, nak: &RoceEvent, opts: &FlowOptions) {
        let Some(i) = self.held_copies.iter().position(|h| {
            h.psn == nak.psn && nak.ts_ns.saturating_sub(h.ts_ns) <= NAK_AFTER_REWIND_NS
        }) else {
            return;
        };
        let resends: Vec<RoceEvent> = self.held_copies.drain(i..).collect();
        for ev in &resends {
            self.mirror_duplicates -= 1;
            self.mirrored_requests -= 1;
            // Recorded under the NAK's epoch, so that a real copy of the
            // resend is still found.
            if self.is_mirror_duplicate(ev, opts.dup_window_ns, self.seq.nak_epoch) {
                self.mirror_duplicates += 1;
                self.mirrored_requests += 1;
            } else {
                self.request(ev);
            }
        }
    }
}
