//! Which lanes may step: the candidates the engine tries, in the order a
//! scan of every lane would try them.
//!
//! A lane waits on one thing at a time: the next message of an
//! in-connection (data arrived), a free slot of an out-connection, its own
//! reduction timer or its rank's next operation. A lane tried and found
//! blocked on a connection is put on that connection's list of receivers
//! or senders waiting; the change it waits for (the connection's next
//! message arrived in order, a slot freed) moves the list back into the
//! set, and a finished step or operation marks the lanes it concerns.
//! Scanning only the marked lanes, in index order from where the last one
//! left off and then round again, takes the same steps in the same order
//! as passes over every lane until none moves (the unmarked ones could not
//! have moved), at a cost that follows what happened instead of the
//! number of lanes (64 ranks × 16 channels are 1024 of them). A lane is
//! only tried when what it waited for happened: marking every receiver of
//! a connection at each arrival tried two lanes in three in vain (a
//! 256-rank all_reduce: 4.4 M of 6.5 M tries).
//!
//! The set is a bitset: marking and unmarking are one instruction each,
//! and finding the next candidate reads a word of 64 lanes at a time (a
//! B-tree set cost 6 % of a 256-rank all_reduce's samples).

use super::plan::OpPlan;

/// Lanes as bits of 64-lane words, and how many are set: most lookups
/// find the set empty (every QP event runs the lanes), which costs no scan.
#[derive(Debug, Clone, Default)]
struct LaneSet {
    words: Vec<u64>,
    len: u32,
    count: u32,
}

impl LaneSet {
    fn new(lanes: usize, full: bool) -> LaneSet {
        let mut words = vec![if full { u64::MAX } else { 0 }; lanes.div_ceil(64)];
        if full && lanes % 64 != 0 {
            *words.last_mut().unwrap() = (1u64 << (lanes % 64)) - 1;
        }
        LaneSet {
            words,
            len: lanes as u32,
            count: if full { lanes as u32 } else { 0 },
        }
    }

    fn insert(&mut self, l: u32) {
        if l < self.len {
            let (w, b) = (&mut self.words[(l / 64) as usize], 1 << (l % 64));
            self.count += u32::from(*w & b == 0);
            *w |= b;
        }
    }

    fn remove(&mut self, l: u32) {
        if l < self.len {
            let (w, b) = (&mut self.words[(l / 64) as usize], 1 << (l % 64));
            self.count -= u32::from(*w & b != 0);
            *w &= !b;
        }
    }

    /// The first lane at or after `from`.
    fn first_from(&self, from: u32) -> Option<u32> {
        if from >= self.len || self.count == 0 {
            return None;
        }
        let mut w = (from / 64) as usize;
        let mut bits = self.words[w] & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(w as u32 * 64 + bits.trailing_zeros());
            }
            w += 1;
            bits = *self.words.get(w)?;
        }
    }

    fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.count = 0;
    }
}

#[derive(Debug, Clone, Default)]
pub(super) struct Ready {
    set: LaneSet,
    /// Per connection, the lanes blocked on its next arrival and those
    /// blocked on a free slot.
    recv_wait: Vec<Vec<u32>>,
    send_wait: Vec<Vec<u32>>,
    /// Per rank, its lanes.
    of_rank: Vec<Vec<u32>>,
}

impl Ready {
    /// A new operation plan: every lane a candidate, none waiting.
    pub(super) fn start(&mut self, plan: &OpPlan, conns: usize, ranks: usize) {
        self.recv_wait = vec![Vec::new(); conns];
        self.send_wait = vec![Vec::new(); conns];
        self.of_rank = vec![Vec::new(); ranks];
        for (l, lane) in plan.lanes.iter().enumerate() {
            self.of_rank[lane.rank as usize].push(l as u32);
        }
        self.set = LaneSet::new(plan.lanes.len(), true);
    }

    pub(super) fn lane(&mut self, l: u32) {
        self.set.insert(l);
    }

    /// Lane `l` waits for the next message of connection `c`.
    pub(super) fn wait_recv(&mut self, c: u32, l: u32) {
        self.recv_wait[c as usize].push(l);
    }

    /// Lane `l` waits for a free slot of connection `c`.
    pub(super) fn wait_send(&mut self, c: u32, l: u32) {
        self.send_wait[c as usize].push(l);
    }

    /// A slot of connection `c` was freed (a send completed, NVLink data
    /// was consumed).
    pub(super) fn senders_of(&mut self, c: u32) {
        if let Some(v) = self.send_wait.get_mut(c as usize) {
            v.drain(..).for_each(|l| self.set.insert(l));
        }
    }

    /// The next message of connection `c` arrived.
    pub(super) fn receivers_of(&mut self, c: u32) {
        if let Some(v) = self.recv_wait.get_mut(c as usize) {
            v.drain(..).for_each(|l| self.set.insert(l));
        }
    }

    /// Rank `r`'s lanes.
    pub(super) fn of_rank(&self, r: u32) -> &[u32] {
        self.of_rank.get(r as usize).map_or(&[], Vec::as_slice)
    }

    pub(super) fn rank(&mut self, r: u32) {
        if let Some(v) = self.of_rank.get(r as usize) {
            v.iter().for_each(|&l| self.set.insert(l));
        }
    }

    /// The next candidate from `from` on, else the first one.
    pub(super) fn next(&self, from: u32) -> Option<u32> {
        self.set.first_from(from).or_else(|| self.set.first_from(0))
    }

    pub(super) fn done(&mut self, l: u32) {
        self.set.remove(l);
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
        let mut r = Ready {
            set: LaneSet::new(200, false),
            ..Ready::default()
        };
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
        // Across words, and a lane marked twice is one candidate.
        for l in [130, 64, 63, 130] {
            r.lane(l);
        }
        assert_eq!(r.next(65), Some(130));
        r.done(130);
        assert_eq!(r.next(131), Some(63));
        r.done(63);
        assert_eq!(r.next(0), Some(64));
        r.done(64);
        assert_eq!(r.next(199), None);
    }

    /// A lane blocked on a connection comes back only with the change it
    /// waits for, once.
    #[test]
    fn a_waiting_lane_returns_with_its_connection_only() {
        let mut r = Ready {
            set: LaneSet::new(8, false),
            recv_wait: vec![Vec::new(); 2],
            send_wait: vec![Vec::new(); 2],
            ..Ready::default()
        };
        r.wait_recv(1, 5);
        r.wait_send(1, 6);
        r.wait_recv(0, 7);
        r.senders_of(0);
        r.receivers_of(0);
        assert_eq!(r.next(0), Some(7));
        r.done(7);
        r.senders_of(1);
        assert_eq!(r.next(0), Some(6));
        r.done(6);
        r.receivers_of(1);
        assert_eq!(r.next(0), Some(5));
        r.done(5);
        // The lists were emptied: a second change marks nobody.
        r.receivers_of(1);
        r.senders_of(1);
        assert_eq!(r.next(0), None);
    }

    #[test]
    fn a_new_plan_makes_every_lane_a_candidate_and_no_more() {
        let s = LaneSet::new(70, true);
        assert_eq!(s.first_from(0), Some(0));
        assert_eq!(s.first_from(69), Some(69));
        assert_eq!(s.first_from(70), None);
        assert_eq!(LaneSet::new(64, true).words, vec![u64::MAX]);
        assert_eq!(LaneSet::new(0, true).first_from(0), None);
    }
}
