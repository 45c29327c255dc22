//! The reaction point: one DCQCN rate limiter per QP.
//!
//! State: the current rate RC (what the QP is paced at), the target rate RT
//! (where recovery heads), alpha (the congestion estimate, in [0, 1]), and
//! the increase stages. Three clocks start at the first CNP (t0), as in the
//! HPCC reference and in the isekai model of the ConnectX firmware:
//!
//! ```text
//!  time        t0    +K    +2K   +3K   +4K   +5K   +6K   +7K   +8K
//!  CNPs        ▼              ▼                  ▼
//!  alpha ticks ·─────·─────·─────·─────·─────·─────·─────·─────·
//!  cut ticks   ────────────────────────╋───────────────────────╋
//!                                    +P+1ns                  +2P+1ns
//!  increase                            cut ───── T ─────▶ ● ───── T ─────▶ ●
//!
//!  alpha tick, every dce_tcp_rtt (K):
//!      alpha ← (1−g)·alpha + g·[a CNP came since the last tick]
//!  cut tick, every rate_reduce_monitor_period (P), 1 ns after the alpha tick,
//!  if a CNP came since the last cut:
//!      RT ← RC (by the clamp rules); RC ← max(min rate, RC·(1 − alpha/2));
//!      stages ← 0; the increase timer restarts
//!  increase event, every rpg_time_reset (T) after a cut (and every B bytes
//!  sent, ConnectX), one step:
//!
//!                   ┌────────────────┐ F events ┌────────────────┐      ┌────────────────┐
//!   after a cut ──▶ │ fast recovery  │────────▶ │ additive       │ ───▶ │ hyper additive │
//!                   │                │          │ RT += AI       │      │ RT += HAI      │
//!                   │ RC ← (RC+RT)/2 │          │ RC ← (RC+RT)/2 │      │ RC ← (RC+RT)/2 │
//!                   └────────────────┘          └────────────────┘      └────────────────┘
//! ```
//!
//! The first CNP counts as one for the first cut tick, unless
//! `rate_to_set_on_first_cnp` is set: then it sets RC = RT to that rate,
//! starts the increase timer and is not cut for (ConnectX, as isekai
//! models it).
//!
//! RT never exceeds the cap (`rpg_max_rate`, or the line rate), RC never
//! goes below `rpg_min_rate`. When to move from one increase stage to the
//! next, and the arithmetic, depend on the [`RpModel`].
//!
//! # What the world does
//! Only the cut and the increase timer are deadlines: alpha is kept as
//! (value, the tick it is valid at, whether a CNP came since) and advanced
//! in closed form, `alpha·(1−g)^n`, when a cut or a reader needs it, so an
//! idle QP costs nothing. The world schedules one event per QP at
//! [`ReactionPoint::next_deadline`] (re-reading it after every call) and
//! calls [`ReactionPoint::on_deadline`]; a call when nothing is due is a
//! no-op, so a stale event is harmless. Every call processes whatever was due
//! up to `now` first, so the order of same-instant calls does not matter.
//! Calls return whether RC changed, so the world can re-time the packet
//! waiting for its slot with [`retime`].
//!
//! Increase events that can no longer change anything (RT at the cap and RC
//! at its fixed point) stop the timer: a recovered QP has no deadline.
//!
//! # Same-instant order
//! With picosecond time, ties are rare but deterministic simulations do make
//! them. A CNP arriving exactly at an alpha tick counts in that tick, and one
//! arriving exactly at a cut tick waits for the next cut: the order ns-3
//! gives the reference when the last link's flight time exceeds
//! `dce_tcp_rtt` but not `rate_reduce_monitor_period` (1 µs links, K = 1 µs,
//! P = 4 µs in the anchors). An increase timer and a cut at the same instant
//! run in the order the reference scheduled them: the timer first iff
//! `rpg_time_reset > rate_reduce_monitor_period`.
//!
//! # Exactness against the reference
//! With [`RpModel::HpccReference`] the rates follow the reference's `f64`
//! and truncation step for step. One difference: the reference multiplies
//! alpha by (1−g) once per tick, this model by `(1−g)^n` (`powi`), so alpha
//! may differ in its last bits and a cut by a bit/s.

use super::dcqcn::{DcqcnParams, RpModel};
use crate::time::{Ps, Rate};

const ONE_NS: Ps = Ps::from_ns(1);

#[derive(Debug, Clone, Copy, PartialEq)]
enum AlphaValue {
    /// The reference's `f64` in [0, 1].
    Real(f64),
    /// ConnectX: 1/1024 units, at most 1023.
    Q10(u32),
}

/// Alpha as it stands right after tick `tick` (tick 0 is the first CNP),
/// and whether a CNP arrived since.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Alpha {
    value: AlphaValue,
    tick: u64,
    cnp_since: bool,
}

impl Alpha {
    /// Advanced to just after tick `n`. `g_keep` is `dce_tcp_g` (1 − g in
    /// 1/1024 units).
    fn at(self, n: u64, g_keep: u32) -> Alpha {
        if n <= self.tick {
            return self;
        }
        let later = n - self.tick - 1;
        let value = match self.value {
            AlphaValue::Real(a) => {
                let keep = f64::from(g_keep) / 1024.0;
                let g = f64::from(1024 - g_keep) / 1024.0;
                let a = if self.cnp_since {
                    keep * a + g
                } else {
                    keep * a
                };
                let decay = if later > i32::MAX as u64 {
                    0.0
                } else {
                    keep.powi(later as i32)
                };
                AlphaValue::Real(a * decay)
            }
            AlphaValue::Q10(a) => {
                let mut a = if self.cnp_since {
                    (a * g_keep / 1024 + 1024 - g_keep).min(1023)
                } else {
                    a * g_keep / 1024
                };
                // Each floor(a·g_keep/1024) step lowers a > 0 by at least 1,
                // so this ends after at most 1023 steps whatever `later` is.
                let mut left = later;
                while left > 0 && a > 0 && g_keep < 1024 {
                    a = a * g_keep / 1024;
                    left -= 1;
                }
                AlphaValue::Q10(a)
            }
        };
        Alpha {
            value,
            tick: n,
            cnp_since: false,
        }
    }

    fn as_f64(self) -> f64 {
        match self.value {
            AlphaValue::Real(a) => a,
            AlphaValue::Q10(a) => f64::from(a) / 1024.0,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    FastRecovery,
    Additive,
    Hyper,
}

/// The DCQCN rate limiter of one QP. See the module documentation.
#[derive(Debug, Clone)]
pub struct ReactionPoint {
    model: RpModel,
    alpha_period: Ps,
    cut_period: Ps,
    timer_period: Ps,
    byte_reset: Option<u64>,
    threshold: u32,
    cap: u64,
    floor: u64,
    ai: u64,
    hai: u64,
    gd: u32,
    min_dec_fac: u32,
    g_keep: u32,
    clamp: bool,
    clamp_after_time_inc: bool,
    first_rate: Option<u64>,
    initial_alpha: Alpha,

    rc: u64,
    rt: u64,
    alpha: Alpha,
    /// The first CNP: all three clocks count from it.
    origin: Option<Ps>,
    cut_at: Option<Ps>,
    timer_at: Option<Ps>,
    timer_stage: u32,
    byte_stage: u32,
    bytes: u64,
    now: Ps,
    cnps: u64,
    cuts: u64,
}

impl ReactionPoint {
    /// A QP on a port of rate `line`, sending at its cap until the first
    /// CNP. `params` must have passed [`DcqcnParams::validate`].
    pub fn new(params: &DcqcnParams, line: Rate) -> ReactionPoint {
        debug_assert!(params.validate().is_ok(), "{:?}", params.validate());
        let cap = params.max_rate(line).bps();
        let value = match params.model {
            RpModel::HpccReference => {
                AlphaValue::Real(f64::from(params.initial_alpha_value) / 1024.0)
            }
            RpModel::ConnectX => AlphaValue::Q10(params.initial_alpha_value.min(1023)),
        };
        let initial_alpha = Alpha {
            value,
            tick: 0,
            cnp_since: false,
        };
        ReactionPoint {
            model: params.model,
            alpha_period: params.alpha_period(),
            cut_period: params.decrease_period(),
            timer_period: params.time_reset(),
            byte_reset: params.byte_reset_bytes(),
            threshold: params.rpg_threshold,
            cap,
            floor: params.min_rate().bps().min(cap),
            ai: params.ai_rate().bps(),
            hai: params.hai_rate().bps(),
            gd: params.rpg_gd,
            min_dec_fac: params.rpg_min_dec_fac,
            g_keep: params.dce_tcp_g,
            clamp: params.clamp_tgt_rate,
            clamp_after_time_inc: params.clamp_tgt_rate_after_time_inc,
            first_rate: params.first_cnp_rate().map(Rate::bps),
            initial_alpha,
            rc: cap,
            rt: cap,
            alpha: initial_alpha,
            origin: None,
            cut_at: None,
            timer_at: None,
            timer_stage: 0,
            byte_stage: 0,
            bytes: 0,
            now: Ps::ZERO,
            cnps: 0,
            cuts: 0,
        }
    }

    /// The current rate RC: pace the QP at this.
    pub fn rate(&self) -> Rate {
        Rate(self.rc)
    }
    /// The target rate RT.
    pub fn target_rate(&self) -> Rate {
        Rate(self.rt)
    }
    /// Alpha as it stands at `now` (not before the last call's time).
    pub fn alpha(&self, now: Ps) -> f64 {
        match self.origin {
            None => self.initial_alpha.as_f64(),
            Some(o) => self.alpha.at(self.ticks_upto(o, now), self.g_keep).as_f64(),
        }
    }
    /// Increase events by the timer since the last cut.
    pub fn timer_stage(&self) -> u32 {
        self.timer_stage
    }
    /// Increase events by the byte counter since the last cut.
    pub fn byte_stage(&self) -> u32 {
        self.byte_stage
    }
    /// CNPs received (`rp_cnp_handled`).
    pub fn cnps(&self) -> u64 {
        self.cnps
    }
    /// Rate cuts made (several CNPs in one period make one cut).
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// When [`ReactionPoint::on_deadline`] must be called next; `None`
    /// while nothing can change without a CNP or a send.
    pub fn next_deadline(&self) -> Option<Ps> {
        match (self.cut_at, self.timer_at) {
            (Some(c), Some(t)) => Some(c.min(t)),
            (c, t) => c.or(t),
        }
    }

    /// The deadline (or a stale one) has come. Returns whether RC changed.
    pub fn on_deadline(&mut self, now: Ps) -> bool {
        self.advance(now)
    }

    /// A CNP for this QP arrived. Returns whether RC changed (only on the
    /// first CNP with `rate_to_set_on_first_cnp`, or when a due deadline was
    /// processed first).
    pub fn on_cnp(&mut self, now: Ps) -> bool {
        let mut changed = self.advance(now);
        self.cnps += 1;
        match self.origin {
            None => {
                self.origin = Some(now);
                self.alpha = self.initial_alpha;
                match self.first_rate {
                    // The limiter starts at the set rate, and that is this
                    // CNP's whole effect: no cut for it, the increase timer
                    // runs from now (google/isekai rdma_roce_cc_dcqcn.cc,
                    // HandleRxPacket: RC = RT = rate_to_set_on_first_cnp,
                    // decrease_cnp_arrived cleared, the three timers started).
                    Some(r) => {
                        let old = self.rc;
                        self.rc = r.clamp(self.floor, self.cap);
                        self.rt = self.rc;
                        changed |= self.rc != old;
                        self.timer_at = Some(now + self.timer_period);
                    }
                    // 0, "not set": the CNP is cut for like any other, at
                    // the first decrease tick (the HPCC reference's rule).
                    None => self.cut_at = Some(now + self.cut_period + ONE_NS),
                }
            }
            Some(origin) => {
                // Ticks strictly before now: a tick at this very instant
                // counts this CNP.
                let before = (now - origin).as_ps().saturating_sub(1) / self.alpha_period.as_ps();
                self.alpha = self.alpha.at(before, self.g_keep);
                self.alpha.cnp_since = true;
                if self.cut_at.is_none() {
                    let base = origin + ONE_NS;
                    let k = match now.as_ps().checked_sub(base.as_ps()) {
                        Some(d) => d / self.cut_period.as_ps() + 1,
                        None => 1,
                    };
                    self.cut_at = Some(Ps(base.as_ps() + k * self.cut_period.as_ps()));
                }
            }
        }
        changed
    }

    /// The QP put `bytes` on the wire (the byte counter). Returns whether
    /// RC changed.
    pub fn on_sent(&mut self, now: Ps, bytes: u64) -> bool {
        let mut changed = self.advance(now);
        // Bytes count from the first CNP: the firmware allocates the QP's
        // rate limiter then (NVIDIA's rate_to_set_on_first_cnp text), and
        // a flow without one has no counter. (isekai counts from the first
        // byte and carries stages from before the first CNP into it.)
        if let (Some(reset), Some(_)) = (self.byte_reset, self.origin) {
            self.bytes += bytes;
            // isekai's SentBytes: the step is chosen, then the stage
            // advanced, and the remainder carried.
            while self.bytes >= reset {
                self.bytes -= reset;
                let old = self.rc;
                let step = self.connectx_step();
                self.increase(step);
                self.byte_stage = self.byte_stage.saturating_add(1);
                changed |= self.rc != old;
            }
        }
        changed
    }

    fn ticks_upto(&self, origin: Ps, now: Ps) -> u64 {
        now.saturating_sub(origin).as_ps() / self.alpha_period.as_ps()
    }

    /// Runs every cut and timer event due at or before `now`, in time order.
    fn advance(&mut self, now: Ps) -> bool {
        debug_assert!(now >= self.now, "time went backwards: {now} < {}", self.now);
        self.now = now;
        let timer_first = self.timer_period > self.cut_period;
        let mut changed = false;
        loop {
            let cut = self.cut_at.filter(|&c| c <= now);
            let timer = self.timer_at.filter(|&t| t <= now);
            changed |= match (cut, timer) {
                (None, None) => return changed,
                (Some(c), Some(t)) if t < c || (t == c && timer_first) => self.timer_event(t),
                (Some(c), _) => self.cut(c),
                (None, Some(t)) => self.timer_event(t),
            };
        }
    }

    fn cut(&mut self, at: Ps) -> bool {
        let origin = self.origin.expect("a cut is only scheduled after a CNP");
        self.alpha = self.alpha.at(self.ticks_upto(origin, at), self.g_keep);
        let clamp = self.clamp
            || self.byte_stage > 0
            || (self.clamp_after_time_inc && self.timer_stage > 0);
        if clamp {
            self.rt = self.rc;
        }
        let old = self.rc;
        self.rc = self.cut_rate(old).max(self.floor);
        self.cut_at = None;
        self.timer_stage = 0;
        self.byte_stage = 0;
        self.bytes = 0;
        self.timer_at = Some(at + self.timer_period);
        self.cuts += 1;
        self.rc != old
    }

    fn cut_rate(&self, rc: u64) -> u64 {
        let max_share = 100 - self.min_dec_fac;
        match self.alpha.value {
            AlphaValue::Real(a) => {
                // rc·alpha >> gd with alpha in 1/1024 is rc·alpha·2^(10−gd);
                // scaling by a power of two is exact, so with gd 11 this is
                // the reference's `rate * (1 - alpha / 2)` bit for bit.
                let scale = if self.gd >= 10 {
                    1.0 / (1u64 << (self.gd - 10)) as f64
                } else {
                    (1u64 << (10 - self.gd)) as f64
                };
                let share = (a * scale).min(f64::from(max_share) / 100.0);
                (rc as f64 * (1.0 - share)) as u64
            }
            AlphaValue::Q10(a) => {
                let by_alpha = (u128::from(rc) * u128::from(a)) >> self.gd;
                let bound = u128::from(rc) * u128::from(max_share) / 100;
                rc - by_alpha.min(bound) as u64
            }
        }
    }

    fn timer_event(&mut self, at: Ps) -> bool {
        self.timer_at = Some(at + self.timer_period);
        let step = match self.model {
            RpModel::HpccReference => {
                let s = self.timer_stage;
                self.timer_stage = s.saturating_add(1);
                if s < self.threshold {
                    Step::FastRecovery
                } else if s == self.threshold {
                    Step::Additive
                } else {
                    Step::Hyper
                }
            }
            // isekai's HandleRateIncreaseTimer: IncreaseRate, then the
            // stage is advanced; so the first event after a cut is fast
            // recovery whatever rpg_threshold says.
            RpModel::ConnectX => self.connectx_step(),
        };
        let (rc, rt) = (self.rc, self.rt);
        self.increase(step);
        if self.model == RpModel::ConnectX {
            self.timer_stage = self.timer_stage.saturating_add(1);
        }
        let settled = self.rt == self.cap || (self.ai == 0 && self.hai == 0);
        if self.rc == rc && self.rt == rt && settled {
            // Every later step would compute the same RC from the same RT.
            self.timer_at = None;
        }
        self.rc != rc
    }

    fn connectx_step(&self) -> Step {
        let lo = self.timer_stage.min(self.byte_stage);
        let hi = self.timer_stage.max(self.byte_stage);
        if lo > self.threshold {
            Step::Hyper
        } else if hi >= self.threshold {
            Step::Additive
        } else {
            Step::FastRecovery
        }
    }

    fn increase(&mut self, step: Step) {
        match step {
            Step::FastRecovery => {}
            Step::Additive => self.rt = (self.rt + self.ai).min(self.cap),
            Step::Hyper => self.rt = (self.rt + self.hai).min(self.cap),
        }
        self.rc = match self.model {
            // ns-3's DataRate / 2.0 truncates each half.
            RpModel::HpccReference => self.rc / 2 + self.rt / 2,
            RpModel::ConnectX => (self.rc + self.rt) / 2,
        };
    }
}

/// The reference's `ChangeRate`: a packet already given its slot
/// `next_avail` when the previous packet (`last_pkt_bytes`) left at `old`
/// rate is moved by the difference of that packet's serialization times at
/// `new` and `old`. The result may be before now: send at once then.
///
/// Note: the reference's DCQCN ("Mlx") code changes the rate without calling
/// `ChangeRate` (only its HPCC, TIMELY and DCTCP do), so a world matching it
/// leaves the slot alone.
pub fn retime(next_avail: Ps, last_pkt_bytes: u64, old: Rate, new: Rate, step: u64) -> Ps {
    let old_t = old.tx_time(last_pkt_bytes).floor_to(step).as_ps();
    let new_t = new.tx_time(last_pkt_bytes).floor_to(step).as_ps();
    Ps((next_avail.as_ps() + new_t).saturating_sub(old_t))
}
