//! Transmission selection: which egress queue a port serves next (IEEE
//! 802.1Q's "transmission selection algorithm", configured per traffic
//! class by 802.1Qaz ETS).
//!
//! A port without a [`TxSelect`] runs strict priority over its eight
//! priorities: the highest priority with a frame that is not paused goes
//! first. That is every port of a scenario that configures nothing, so
//! those outputs do not depend on this module. A port with one runs:
//!
//! * [`Ets`]: what `mlnx_qos --prio_tc --tsa --tcbw` configures
//!   (`/work/shared/reference/lossless-facts.md` §3, the `ieee_ets` of
//!   Linux's include/uapi/linux/dcbnl.h). Each priority maps to a traffic
//!   class (`prio_tc`); each class is `strict` or `ets` (`tsa`); the `ets`
//!   classes carry percentages (`tcbw`) that sum to 100.
//!
//!   ```text
//!    priorities ──prio_tc──▶ classes      served
//!    (frames not paused)     strict ──▶ the highest-numbered strict class with a frame, first
//!                            ets>0% ──▶ then DWRR over these, quantum ∝ tcbw
//!                            ets 0% ──▶ then DWRR (equal shares) over these: what the others leave
//!   inside a class: per-frame round robin over its priorities that have a frame and are not paused
//!   ```
//!
//!   Strict classes beat every ETS class and each other by class number
//!   (the NVIDIA QoS guide; mlx5 puts strict classes in groups above the
//!   ETS group in ascending class order, `mlx5e_build_tc_group`). ETS
//!   classes share what the strict ones leave in proportion to their
//!   percentages; a percentage is a minimum, not a cap: a class that sends
//!   less leaves the rest to the others (the scheduler is work-conserving).
//!   mlx5 gives ETS classes set to 0 % a group of their own below the
//!   others, where they split 100 % equally (`mlx5e_build_tc_group`,
//!   `mlx5e_build_tc_tx_bw`): they get only what the others leave, and
//!   that is what they get here.
//!
//!   The sharing is deficit round robin as Linux's `sch_ets` runs it
//!   (tc-ets(8)): the classes take turns; a turn hands the class its
//!   quantum, `tcbw` % of [`Ets::round_bytes`], and the class sends while
//!   its credit lasts. One difference: a class sends its next frame while
//!   its credit is positive, and the frame may overdraw it (the debt is
//!   carried into its next turn), where DRR sends only a frame that fits.
//!   A NIC learns a QP's next frame, and so its size, only by building it;
//!   the debt is repaid at once, so the shares over many turns are the
//!   same (Adiseshu, Parulkar and Varghese's "surplus round robin"). Bytes
//!   are wire bytes: preamble, FCS and gap included, the link time each
//!   frame takes.
//!
//!   Credit and idle or paused classes, so that no class gains or loses
//!   from the others' behaviour:
//!   * a class with nothing queued keeps its debt but banks no credit
//!     (DRR's rule: a share is a guarantee while there is demand);
//!   * a class whose priorities are paused (PFC) is skipped and keeps its
//!     credit: when its turn comes round again it takes up the turn the
//!     pause cut short, with what was left of it. It gets no quantum for
//!     the turns it missed (the others used that time, and a catch-up
//!     burst after XON would refill the congested queue downstream that
//!     paused it), so credit never exceeds one quantum.
//!
//!   Hardware has one FIFO per traffic class; here queues are per
//!   priority (PFC pauses and the buffer counts per priority), and a class
//!   holding several priorities serves them per frame in round robin. A
//!   real class's FIFO also stalls all of them behind a paused one's
//!   head frame, which this does not model; deployments give each lossless
//!   priority a class of its own (lossless-facts §3.4), where both agree.
//!   The quantum's size is this model's choice: the hardware's granularity
//!   is not documented (lossless-facts §7, item 7).
//!
//!   `vendor` (TSA 255) is not modelled: what mlx5 programs for it changed
//!   between kernel versions and what the NIC does with its group is in no
//!   public source.
//! * [`TxSelect::round_robin`]: the HPCC ns-3 reference's switch queue
//!   (alibaba-edu/High-Precision-Congestion-Control, simulation/src/
//!   network/utils/broadcom-egress-queue.cc `BEgressQueue::DoDequeueRR`):
//!   queue 0 first whenever it has a frame, then one frame per turn in
//!   round robin over the other queues that have one and are not paused,
//!   starting after the last one served. (The reference serves queue 0
//!   even when it is paused; nothing pauses it there, as no switch of the
//!   `hpcc_reference` buffer preset does.)
//!
//! The selector also counts what leaves per priority (`tx_prio{N}_bytes`,
//! `_packets`, as mlx5's ethtool counters name them): only ports with a
//! selector count, so the default path touches nothing more per frame.

use super::{PRIOS, highest};
use crate::cc::ParamError;

/// Traffic classes per port (802.1Qaz allows 8).
pub const TCS: usize = 8;

/// A traffic class's transmission selection algorithm (`mlnx_qos --tsa`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tsa {
    /// Strict priority: before every ETS class and every lower strict one.
    Strict,
    /// Enhanced transmission selection: a share of what strict classes
    /// leave.
    Ets,
}

impl Tsa {
    pub fn name(self) -> &'static str {
        match self {
            Tsa::Strict => "strict",
            Tsa::Ets => "ets",
        }
    }
}

/// An ETS configuration: `mlnx_qos --prio_tc --tsa --tcbw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EtsConfig {
    /// Priority → traffic class.
    pub prio_tc: [u8; PRIOS],
    /// Per traffic class.
    pub tsa: [Tsa; TCS],
    /// Per traffic class, percent: the ETS ones sum to 100, the others 0.
    pub tcbw: [u8; TCS],
    /// The credit one round of the ETS classes hands out in all: class
    /// `i`'s quantum is `tcbw[i]` % of it.
    pub round_bytes: u32,
}

impl EtsConfig {
    /// 128 bytes per percent: a round of every ETS class is about 1 µs at
    /// 100 Gb/s, a 70 % class sends a few 1500-byte frames per turn.
    pub const DEFAULT_ROUND_BYTES: u32 = 12_800;

    /// What a port does without ETS: each priority its own class, all
    /// strict (higher priority first).
    pub fn strict_priority() -> EtsConfig {
        EtsConfig {
            prio_tc: std::array::from_fn(|p| p as u8),
            tsa: [Tsa::Strict; TCS],
            tcbw: [0; TCS],
            round_bytes: Self::DEFAULT_ROUND_BYTES,
        }
    }

    /// The checks mlx5 and `mlnx_qos` make (lossless-facts §3.1, §3.2:
    /// `mlx5e_dbcnl_validate_ets`, mlnx_qos's "ETS BW for a strict/vendor
    /// TC must be 0"), and a round that hands out credit.
    pub fn validate(&self) -> Result<(), ParamError> {
        for (p, &tc) in self.prio_tc.iter().enumerate() {
            if usize::from(tc) >= TCS {
                return Err(ParamError::new(
                    format!("prio_tc[{p}]"),
                    format!("traffic class {tc} does not exist"),
                )
                .hint("traffic classes are 0..=7"));
            }
        }
        for (tc, (&tsa, &bw)) in self.tsa.iter().zip(&self.tcbw).enumerate() {
            if bw > 100 {
                return Err(ParamError::new(
                    format!("tcbw[{tc}]"),
                    format!("{bw} % is more than the whole link"),
                ));
            }
            if tsa != Tsa::Ets && bw != 0 {
                return Err(ParamError::new(
                    format!("tcbw[{tc}]"),
                    format!("{bw} % for traffic class {tc}, which is {}: only ETS classes take a share", tsa.name()),
                )
                .hint(format!("0 for class {tc}, or tsa[{tc}] = \"ets\" (mlnx_qos: \"ETS BW for a strict/vendor TC must be 0\")")));
            }
        }
        let ets: Vec<usize> = (0..TCS).filter(|&tc| self.tsa[tc] == Tsa::Ets).collect();
        let sum: u32 = ets.iter().map(|&tc| u32::from(self.tcbw[tc])).sum();
        if !ets.is_empty() && sum != 100 {
            let listed: Vec<String> = ets
                .iter()
                .map(|&tc| format!("TC{tc} {}", self.tcbw[tc]))
                .collect();
            return Err(ParamError::new(
                "tcbw",
                format!(
                    "ETS shares sum to {sum}, must be 100 ({})",
                    listed.join(", ")
                ),
            )
            .hint("the percentages of the classes with tsa \"ets\" must add up to 100, as mlx5 requires (\"BW sum is illegal\")"));
        }
        if self.round_bytes == 0 {
            return Err(
                ParamError::new("round_bytes", "a round of 0 bytes hands out no credit").hint(
                    format!("the default is {} bytes", Self::DEFAULT_ROUND_BYTES),
                ),
            );
        }
        Ok(())
    }

    /// The priorities of traffic class `tc`, as a mask.
    pub fn priorities_of(&self, tc: usize) -> u8 {
        (0..PRIOS)
            .filter(|&p| usize::from(self.prio_tc[p]) == tc)
            .fold(0, |m, p| m | 1 << p)
    }

    /// The same configuration as `mlnx_qos` options.
    pub fn mlnx_qos(&self) -> String {
        let list = |v: Vec<String>| v.join(",");
        format!(
            "--prio_tc {} --tsa {} --tcbw {}",
            list(self.prio_tc.iter().map(u8::to_string).collect()),
            list(self.tsa.iter().map(|t| t.name().to_string()).collect()),
            list(self.tcbw.iter().map(u8::to_string).collect()),
        )
    }
}

/// An ETS scheduler's state: the configuration and each class's credit.
#[derive(Debug, Clone)]
pub struct Ets {
    cfg: EtsConfig,
    /// Per class: its priorities.
    tc_prios: [u8; TCS],
    /// Classes by kind (bit per class, only classes with priorities).
    strict: u8,
    shared: u8,
    zero: u8,
    /// Per ETS class: the credit a turn hands it.
    quantum: [i64; TCS],
    /// Per ETS class: credit (positive) or debt (negative), wire bytes.
    deficit: [i64; TCS],
    /// The class whose turn it is: among the shared classes, among the
    /// 0 % ones.
    turn: [u8; 2],
    /// Per class: the priority it served last (round robin inside it).
    last_prio: [u8; TCS],
}

impl Ets {
    /// The scheduler of a valid configuration ([`EtsConfig::validate`]).
    pub fn new(cfg: EtsConfig) -> Ets {
        debug_assert_eq!(cfg.validate(), Ok(()));
        let tc_prios: [u8; TCS] = std::array::from_fn(|tc| cfg.priorities_of(tc));
        let used = |tc: usize| tc_prios[tc] != 0;
        let mask = |f: &dyn Fn(usize) -> bool| {
            (0..TCS)
                .filter(|&tc| used(tc) && f(tc))
                .fold(0u8, |m, tc| m | 1 << tc)
        };
        let strict = mask(&|tc| cfg.tsa[tc] == Tsa::Strict);
        let shared = mask(&|tc| cfg.tsa[tc] == Tsa::Ets && cfg.tcbw[tc] > 0);
        let zero = mask(&|tc| cfg.tsa[tc] == Tsa::Ets && cfg.tcbw[tc] == 0);
        let round = i64::from(cfg.round_bytes);
        let zeros = i64::from(zero.count_ones().max(1));
        let quantum = std::array::from_fn(|tc| match cfg.tcbw[tc] {
            // mlx5 splits 100 % equally among the 0 % classes' group; at
            // least one byte, so that a turn always moves the credit.
            0 => (round / zeros).max(1),
            bw => (round * i64::from(bw) / 100).max(1),
        });
        Ets {
            cfg,
            tc_prios,
            strict,
            shared,
            zero,
            quantum,
            deficit: [0; TCS],
            // The first turn goes to the lowest class (the one after 7).
            turn: [TCS as u8 - 1; 2],
            last_prio: [PRIOS as u8 - 1; TCS],
        }
    }

    pub fn config(&self) -> &EtsConfig {
        &self.cfg
    }

    /// The classes holding a priority of `prios`.
    fn classes(&self, prios: u8) -> u8 {
        (0..TCS)
            .filter(|&tc| self.tc_prios[tc] & prios != 0)
            .fold(0, |m, tc| m | 1 << tc)
    }

    /// The priority to serve next: `backlog` has a frame, `paused` may not
    /// send.
    pub fn pick(&mut self, backlog: u8, paused: u8) -> Option<usize> {
        // A class with nothing queued banks no credit; its debt stays.
        let idle = (self.shared | self.zero) & !self.classes(backlog);
        for tc in bits(idle) {
            self.deficit[tc] = self.deficit[tc].min(0);
        }
        let ready = backlog & !paused;
        if ready == 0 {
            return None;
        }
        let classes = self.classes(ready);
        let tc = if let Some(tc) = highest(classes & self.strict) {
            tc
        } else if classes & self.shared != 0 {
            self.drr(0, classes & self.shared)
        } else {
            self.drr(1, classes & self.zero)
        };
        Some(self.prio_in(tc, ready))
    }

    /// Deficit round robin over `ready` (not empty), the shared classes'
    /// (`tier` 0) or the 0 % ones' (1): the class whose turn it is while
    /// its credit lasts, else the next ready class: one in credit (a pause
    /// cut its turn short) resumes it, one in debt or at 0 gets its quantum.
    fn drr(&mut self, tier: usize, ready: u8) -> usize {
        let mut tc = usize::from(self.turn[tier]);
        if ready & 1 << tc != 0 && self.deficit[tc] > 0 {
            return tc;
        }
        // Every ready class in debt: whole rounds where none would send
        // go at once, each class credited their quanta.
        if bits(ready).all(|c| self.deficit[c] <= 0) {
            let rounds = bits(ready)
                .map(|c| (-self.deficit[c]) / self.quantum[c])
                .min()
                .unwrap_or(0);
            for c in bits(ready) {
                self.deficit[c] += rounds * self.quantum[c];
            }
        }
        loop {
            tc = next_after(ready, tc);
            // A class still in credit resumes the turn a pause cut short;
            // the others get their quantum.
            if self.deficit[tc] <= 0 {
                self.deficit[tc] += self.quantum[tc];
            }
            if self.deficit[tc] > 0 {
                self.turn[tier] = tc as u8;
                return tc;
            }
        }
    }

    /// The next of class `tc`'s priorities in `ready` after the last one
    /// it served.
    fn prio_in(&mut self, tc: usize, ready: u8) -> usize {
        let prios = ready & self.tc_prios[tc];
        debug_assert_ne!(prios, 0);
        let p = next_after(prios, usize::from(self.last_prio[tc]));
        self.last_prio[tc] = p as u8;
        p
    }

    /// A frame of `wire` bytes left from priority `prio`'s queue.
    pub fn sent(&mut self, prio: usize, wire: u64) {
        let tc = usize::from(self.cfg.prio_tc[prio]);
        if self.cfg.tsa[tc] == Tsa::Ets {
            self.deficit[tc] -= wire as i64;
        }
    }
}

/// The bits set in `mask`, ascending.
fn bits(mask: u8) -> impl Iterator<Item = usize> {
    (0..8).filter(move |b| mask & 1 << b != 0)
}

/// The first bit of `mask` (not empty) after bit `after`, wrapping round.
fn next_after(mask: u8, after: usize) -> usize {
    let above = u32::from(mask) & !((2u32 << after) - 1);
    if above != 0 {
        above.trailing_zeros() as usize
    } else {
        mask.trailing_zeros() as usize
    }
}

/// Which algorithm a [`TxSelect`] runs.
#[derive(Debug, Clone)]
pub enum Algorithm {
    Ets(Ets),
    /// The HPCC reference's: queue 0 first, then round robin; `last` the
    /// queue other than 0 served last.
    RoundRobin {
        last: u8,
    },
}

/// A port's transmission selection other than strict priority, and what
/// it sent per priority.
#[derive(Debug, Clone)]
pub struct TxSelect {
    algo: Algorithm,
    /// Per priority on the wire: frame bytes (no FCS, as `tx_bytes`) and
    /// frames.
    tx_bytes: [u64; PRIOS],
    tx_packets: [u64; PRIOS],
}

impl TxSelect {
    pub fn ets(cfg: EtsConfig) -> TxSelect {
        TxSelect::with(Algorithm::Ets(Ets::new(cfg)))
    }

    pub fn round_robin() -> TxSelect {
        TxSelect::with(Algorithm::RoundRobin { last: 0 })
    }

    fn with(algo: Algorithm) -> TxSelect {
        TxSelect {
            algo,
            tx_bytes: [0; PRIOS],
            tx_packets: [0; PRIOS],
        }
    }

    pub fn algorithm(&self) -> &Algorithm {
        &self.algo
    }

    /// The ETS configuration, if it runs ETS.
    pub fn ets_config(&self) -> Option<&EtsConfig> {
        match &self.algo {
            Algorithm::Ets(e) => Some(e.config()),
            Algorithm::RoundRobin { .. } => None,
        }
    }

    /// The priority whose queue goes next: `backlog` has frames, `paused`
    /// may not send.
    pub fn pick(&mut self, backlog: u8, paused: u8) -> Option<usize> {
        match &mut self.algo {
            Algorithm::Ets(e) => e.pick(backlog, paused),
            Algorithm::RoundRobin { last } => {
                let ready = backlog & !paused;
                if ready == 0 {
                    return None;
                }
                if ready & 1 != 0 {
                    return Some(0);
                }
                let q = next_after(ready, usize::from(*last));
                *last = q as u8;
                Some(q)
            }
        }
    }

    /// A frame left from queue `queue`: `len` bytes (no FCS) at priority
    /// `prio` on the wire, `wire` bytes of link time.
    pub fn sent(&mut self, queue: usize, prio: usize, len: u32, wire: u64) {
        self.tx_bytes[prio] += u64::from(len);
        self.tx_packets[prio] += 1;
        if let Algorithm::Ets(e) = &mut self.algo {
            e.sent(queue, wire);
        }
    }

    /// Bytes (no FCS) and frames sent at priority `prio`.
    pub fn tx_of(&self, prio: usize) -> (u64, u64) {
        (self.tx_bytes[prio], self.tx_packets[prio])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(prio_tc: [u8; 8], tsa: &str, tcbw: [u8; 8], round: u32) -> EtsConfig {
        let tsa: Vec<Tsa> = tsa
            .chars()
            .map(|c| if c == 'e' { Tsa::Ets } else { Tsa::Strict })
            .collect();
        EtsConfig {
            prio_tc,
            tsa: tsa.try_into().unwrap(),
            tcbw,
            round_bytes: round,
        }
    }

    /// Priority 3 → TC1 (70 %), 4 → TC2 (30 %), the rest TC0 (strict).
    fn seventy_thirty(round: u32) -> EtsConfig {
        cfg(
            [0, 0, 0, 1, 2, 0, 0, 0],
            "seesssss",
            [0, 70, 30, 0, 0, 0, 0, 0],
            round,
        )
    }

    /// `n` picks with `backlog` always queued, frames of `wire` bytes: the
    /// priorities served, in order.
    fn serve(s: &mut TxSelect, n: usize, backlog: u8, paused: u8, wire: u64) -> Vec<usize> {
        (0..n)
            .map(|_| {
                let p = s.pick(backlog, paused).unwrap();
                s.sent(p, p, wire as u32, wire);
                p
            })
            .collect()
    }

    #[test]
    fn the_strict_priority_configuration_is_strict_priority() {
        let mut s = TxSelect::ets(EtsConfig::strict_priority());
        for backlog in 0..=255u8 {
            for paused in [0u8, 0x08, 0x81, 0xf0, 0xff] {
                assert_eq!(
                    s.pick(backlog, paused),
                    highest(backlog & !paused),
                    "backlog {backlog:08b} paused {paused:08b}"
                );
            }
        }
    }

    #[test]
    fn seventy_thirty_with_frames_that_divide_the_quanta() {
        // Round 1000: quanta 700 and 300; 100-byte frames: 7 then 3.
        let mut s = TxSelect::ets(seventy_thirty(1000));
        let order = serve(&mut s, 20, 0b1_1000, 0, 100);
        let mut want = vec![3; 7];
        want.extend([4; 3]);
        want.extend([3; 7]);
        want.extend([4; 3]);
        assert_eq!(order, want);
    }

    #[test]
    fn a_frame_may_overdraw_and_the_debt_is_repaid() {
        // Quanta 700 and 300, 250-byte frames, by hand (credit before
        // each frame; a turn ends at 0 or below):
        //   round 1: TC1 700 450 200 -> -50 (3)   TC2 300 50 -> -200 (2)
        //   round 2: TC1 650 400 150 -> -100 (3)  TC2 100 -> -150 (1)
        //   round 3: TC1 600 350 100 -> -150 (3)  TC2 150 -> -100 (1)
        //   round 4: TC1 550 300 50 -> -200 (3)   TC2 200 -> -50 (1)
        //   round 5: TC1 500 250 -> 0 (2)         TC2 250 -> 0 (1)
        // 14 frames and 6 after 5 rounds: 3500 and 1500 bytes, 70/30.
        let mut s = TxSelect::ets(seventy_thirty(1000));
        let order = serve(&mut s, 20, 0b1_1000, 0, 250);
        let runs = [
            (3, 3),
            (4, 2),
            (3, 3),
            (4, 1),
            (3, 3),
            (4, 1),
            (3, 3),
            (4, 1),
            (3, 2),
            (4, 1),
        ];
        let want: Vec<usize> = runs.iter().flat_map(|&(p, n)| vec![p; n]).collect();
        assert_eq!(order, want);
        assert_eq!(s.tx_of(3), (3500, 14));
        assert_eq!(s.tx_of(4), (1500, 6));
    }

    #[test]
    fn a_share_is_a_minimum_not_a_cap() {
        // Priority 4 (30 %) has nothing: priority 3 gets every turn.
        let mut s = TxSelect::ets(seventy_thirty(1000));
        assert_eq!(serve(&mut s, 25, 0b1000, 0, 100), vec![3; 25]);
        // Priority 4, idle meanwhile, banked nothing: with both queued it
        // gets one 300-byte turn once priority 3's fourth turn (7 frames,
        // 4 sent) is over.
        let order = serve(&mut s, 15, 0b1_1000, 0, 100);
        let mut want = vec![3; 3];
        want.extend([4; 3]);
        want.extend([3; 7]);
        want.extend([4; 2]);
        assert_eq!(order, want);
    }

    #[test]
    fn a_paused_class_keeps_its_credit_but_banks_no_missed_turns() {
        let mut s = TxSelect::ets(seventy_thirty(1000));
        // Priority 3 starts its turn (700) and sends one frame: 600 left.
        assert_eq!(serve(&mut s, 1, 0b1_1000, 0, 100), [3]);
        // Paused: priority 4 runs alone, turn after turn (10 frames: 3
        // turns, and 1 frame of a fourth).
        assert_eq!(serve(&mut s, 10, 0b1_1000, 0b1000, 100), vec![4; 10]);
        // Resumed: priority 4 finishes its turn (2 frames), then priority
        // 3 takes up its own with the 600 it had: 6 frames, not 7 and
        // not 6 + 7 for the turns it missed; then a full turn each.
        let order = serve(&mut s, 18, 0b1_1000, 0, 100);
        let mut want = vec![4; 2];
        want.extend([3; 6]);
        want.extend([4; 3]);
        want.extend([3; 7]);
        assert_eq!(order, want);
    }

    #[test]
    fn strict_classes_go_first_the_highest_numbered_first() {
        // Priority 6 → TC6 strict, 5 → TC5 strict, 3/4 ETS as above.
        let c = cfg(
            [0, 0, 0, 1, 2, 5, 6, 0],
            "seesssss",
            [0, 70, 30, 0, 0, 0, 0, 0],
            1000,
        );
        let mut s = TxSelect::ets(c);
        assert_eq!(s.pick(0b111_1000, 0), Some(6));
        assert_eq!(s.pick(0b011_1000, 0), Some(5));
        assert_eq!(
            s.pick(0b111_1000, 1 << 6),
            Some(5),
            "a paused strict class yields"
        );
        // Strict traffic starves the ETS classes: nothing of 3 or 4.
        assert_eq!(serve(&mut s, 50, 0b111_1000, 0, 100), vec![6; 50]);
        // TC0 is strict too, but the lowest class with anything queued
        // goes before ETS ones: strict beats ETS whatever the number.
        assert_eq!(s.pick(0b1_1001, 0), Some(0));
    }

    #[test]
    fn a_class_of_several_priorities_serves_them_in_turn() {
        // Priorities 1, 2 and 5 share TC0 (strict).
        let c = cfg([1, 0, 0, 1, 1, 0, 1, 1], "ssssssss", [0; 8], 1000);
        let mut s = TxSelect::ets(c);
        assert_eq!(serve(&mut s, 7, 0b10_0110, 0, 100), [1, 2, 5, 1, 2, 5, 1]);
        assert_eq!(
            serve(&mut s, 4, 0b10_0110, 0b100, 100),
            [5, 1, 5, 1],
            "2 paused"
        );
    }

    #[test]
    fn zero_percent_classes_get_what_the_others_leave_equally() {
        // TC0 (priority 0) and TC3 (priority 3) ETS 0 %, TC4 ETS 100 %.
        let c = cfg(
            [0, 0, 0, 3, 4, 0, 0, 0],
            "eeeeesss",
            [0, 0, 0, 0, 100, 0, 0, 0],
            1000,
        );
        let mut s = TxSelect::ets(c);
        assert_eq!(serve(&mut s, 10, 0b1_1001, 0, 100), vec![4; 10]);
        // Without priority 4: the two split it, 500 bytes a turn each.
        let order = serve(&mut s, 20, 0b1001, 0, 100);
        let mut want = vec![0; 5];
        want.extend([3; 5]);
        want.extend([0; 5]);
        want.extend([3; 5]);
        assert_eq!(order, want);
    }

    #[test]
    fn long_run_shares_hold_with_a_small_quantum_and_jumbo_frames() {
        // 1 % and 99 % of a 12,800-byte round: quanta 128 and 12,672;
        // 9,000-byte frames put the 1 % class 70 turns in debt, skipped
        // at once. Over 10,000 frames the 1 % class sends 1 % of the
        // bytes, to within a frame.
        let c = cfg(
            [0, 0, 0, 1, 2, 0, 0, 0],
            "seesssss",
            [0, 1, 99, 0, 0, 0, 0, 0],
            12_800,
        );
        let mut s = TxSelect::ets(c);
        serve(&mut s, 10_000, 0b1_1000, 0, 9000);
        let (small, _) = s.tx_of(3);
        let (big, _) = s.tx_of(4);
        let total = (small + big) as f64;
        assert!(
            ((small as f64) - 0.01 * total).abs() <= 9000.0,
            "{small} of {total}"
        );
    }

    #[test]
    fn round_robin_is_the_references_queue_0_first_then_one_frame_each() {
        let mut s = TxSelect::round_robin();
        // Queue 0 whenever it has a frame.
        assert_eq!(serve(&mut s, 3, 0b10_1001, 0, 100), [0, 0, 0]);
        // Then 3 and 5 in turn, starting after 0 (the reference's rrlast).
        assert_eq!(serve(&mut s, 4, 0b10_1000, 0, 100), [3, 5, 3, 5]);
        assert_eq!(serve(&mut s, 2, 0b1010_1000, 0, 100), [7, 3]);
        assert_eq!(
            serve(&mut s, 3, 0b1010_1000, 1 << 5, 100),
            [7, 3, 7],
            "5 paused"
        );
        assert_eq!(s.pick(0b1000, 0b1000), None);
    }

    #[test]
    fn validation_names_the_key_and_the_problem() {
        let mut c = seventy_thirty(1000);
        assert_eq!(c.validate(), Ok(()));
        c.tcbw[2] = 20;
        let e = c.validate().unwrap_err();
        assert_eq!(e.key, "tcbw");
        assert_eq!(
            e.problem,
            "ETS shares sum to 90, must be 100 (TC1 70, TC2 20)"
        );
        let mut c = seventy_thirty(1000);
        c.tcbw[0] = 10;
        assert_eq!(c.validate().unwrap_err().key, "tcbw[0]");
        let mut c = seventy_thirty(1000);
        c.prio_tc[5] = 8;
        assert_eq!(c.validate().unwrap_err().key, "prio_tc[5]");
        let mut c = seventy_thirty(1000);
        c.round_bytes = 0;
        assert_eq!(c.validate().unwrap_err().key, "round_bytes");
        assert_eq!(EtsConfig::strict_priority().validate(), Ok(()));
        assert_eq!(
            seventy_thirty(1000).mlnx_qos(),
            "--prio_tc 0,0,0,1,2,0,0,0 --tsa strict,ets,ets,strict,strict,strict,strict,strict --tcbw 0,70,30,0,0,0,0,0"
        );
    }
}
