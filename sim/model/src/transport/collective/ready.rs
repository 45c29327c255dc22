//! Which lanes may step: the candidates the engine tries, in the order a
//! scan of every lane would try them.
//!
//! A lane waits on its in-connection (data arrived), its out-connection
//! (a free slot), its own reduction timer or its rank's next operation.
//! Each of those changes marks the lanes it concerns; a lane tried and
//! still blocked leaves the set. Scanning only the marked lanes, in index
//! order from where the last one left off and then round again, takes the
//! same steps in the same order as passes over every lane until none
//! moves (the unmarked ones could not have moved), at a cost that follows
//! what happened instead of the number of lanes (64 ranks × 16 channels
//! are 1024 of them).

use std::collections::BTreeSet;

use super::plan::OpPlan;

#[derive(Debug, Clone, Default)]
pub(super) struct Ready {
    set: BTreeSet<u32>,
    /// Per connection, the lanes that send on it and those that receive.
    senders: Vec<Vec<u32>>,
    receivers: Vec<Vec<u32>>,
    /// Per rank, its lanes.
    of_rank: Vec<Vec<u32>>,
}

impl Ready {
    /// A new operation plan: every lane a candidate.
    pub(super) fn start(&mut self, plan: &OpPlan, conns: usize, ranks: usize) {
        self.senders = vec![Vec::new(); conns];
        self.receivers = vec![Vec::new(); conns];
        self.of_rank = vec![Vec::new(); ranks];
        for (l, lane) in plan.lanes.iter().enumerate() {
            let l = l as u32;
            for &c in &lane.outs {
                self.senders[c as usize].push(l);
            }
            for &c in &lane.ins {
                self.receivers[c as usize].push(l);
            }
            self.of_rank[lane.rank as usize].push(l);
        }
        self.set = (0..plan.lanes.len() as u32).collect();
    }

    pub(super) fn lane(&mut self, l: u32) {
        self.set.insert(l);
    }

    /// Something changed a slot of connection `c` (a send completed, data
    /// was consumed).
    pub(super) fn senders_of(&mut self, c: u32) {
        if let Some(v) = self.senders.get(c as usize) {
            self.set.extend(v.iter().copied());
        }
    }

    /// Data arrived on connection `c`.
    pub(super) fn receivers_of(&mut self, c: u32) {
        if let Some(v) = self.receivers.get(c as usize) {
            self.set.extend(v.iter().copied());
        }
    }

    /// Rank `r`'s lanes.
    pub(super) fn of_rank(&self, r: u32) -> &[u32] {
        self.of_rank.get(r as usize).map_or(&[], Vec::as_slice)
    }

    pub(super) fn rank(&mut self, r: u32) {
        if let Some(v) = self.of_rank.get(r as usize) {
            self.set.extend(v.iter().copied());
        }
    }

    /// The next candidate from `from` on, else the first one.
    pub(super) fn next(&self, from: u32) -> Option<u32> {
        self.set
            .range(from..)
            .next()
            .or_else(|| self.set.iter().next())
            .copied()
    }

    pub(super) fn done(&mut self, l: u32) {
        self.set.remove(&l);
    }

    pub(super) fn clear(&mut self) {
        self.set.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates come in lane order from where the last one left off,
    /// then round again from the first: a full scan's order without the
    /// lanes that could not move.
    #[test]
    fn candidates_in_scan_order_then_round_again() {
        let mut r = Ready::default();
        for l in [9, 2, 5] {
            r.lane(l);
        }
        assert_eq!(r.next(3), Some(5));
        r.done(5);
        assert_eq!(r.next(6), Some(9));
        r.done(9);
        // Marked behind the scan: the next round takes it.
        assert_eq!(r.next(10), Some(2));
        r.done(2);
        assert_eq!(r.next(0), None);
    }
}
