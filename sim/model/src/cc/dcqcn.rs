//! DCQCN knobs, named and scaled as the ConnectX firmware takes them, and
//! the two presets.
//!
//! The knobs are kept in the firmware's own units (µs, Mb/s, the 10-bit
//! fixed point of alpha, a shift for the decrease gain) so that a value read
//! with `mlxconfig -q` or from
//! `/sys/class/net/<if>/ecn/roce_rp/…` can be written into a scenario as is.
//!
//! | knob | unit | role |
//! |---|---|---|
//! | `rpg_time_reset` | µs | rate-increase timer T |
//! | `rpg_byte_reset` | 64 B | byte counter B (0: none) |
//! | `rpg_threshold` | events | F: increase events before additive/hyper increase |
//! | `rpg_max_rate` | Mb/s | cap (0: line rate) |
//! | `rpg_ai_rate`, `rpg_hai_rate` | Mb/s | additive and hyper-additive steps |
//! | `rpg_gd` | shift | cut = RC × alpha >> rpg_gd (alpha in 1/1024) |
//! | `rpg_min_dec_fac` | % | a cut leaves at least this share of RC |
//! | `rpg_min_rate` | Mb/s | floor |
//! | `dce_tcp_g` | 1/1024 | alpha gain g = (1024 − dce_tcp_g) / 1024 |
//! | `dce_tcp_rtt` | µs | alpha update period K |
//! | `rate_reduce_monitor_period` | µs | at most one cut per period |
//! | `initial_alpha_value` | 1/1024 | alpha on the first CNP |
//! | `clamp_tgt_rate`, `clamp_tgt_rate_after_time_inc` | flag | when a cut copies RC into RT |
//! | `rate_to_set_on_first_cnp` | Mb/s | RC = RT = this on the first CNP (0: keep) |
//! | `min_time_between_cnps` | µs | NP: CNP pacing per [`CnpScope`] key |
//! | `cnp_dscp`, `cnp_802p_prio` | | NP: marking of the CNPs it sends |
//!
//! What each knob does step by step is in [`super::rp`].

use core::ops::RangeInclusive;

use super::ParamError;
use crate::time::{Ps, Rate};

/// Which implementation's arithmetic and increase rule the reaction point
/// follows. The knobs mean the same in both; what differs cannot be
/// expressed with a knob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpModel {
    /// The ConnectX firmware as the google/isekai model describes it
    /// (isekai/host/rdma/rdma_roce_cc_dcqcn.cc): alpha is a 10-bit integer
    /// (1023 ≈ 1), the cut is `RC × alpha >> rpg_gd` bounded by
    /// `rpg_min_dec_fac`, rates are
    /// integers halved as `(RC + RT) / 2`; the step is chosen from the
    /// timer and byte stages as they stand (hyper increase when both exceed
    /// `rpg_threshold`, additive when either reaches it, else fast
    /// recovery), and only then is the stage of the event advanced. A
    /// first CNP with `rate_to_set_on_first_cnp` sets RC = RT to it instead
    /// of being cut for.
    ConnectX,
    /// The HPCC ns-3 simulator's "Mlx" DCQCN (rdma-hw.cc): alpha is an
    /// `f64`, rates are bit/s truncated as ns-3's `DataRate` does
    /// (`RC/2 + RT/2`, `RC × (1 − alpha/2)`); one timer stage `s`, read
    /// before it is incremented: `s < F` fast recovery, `s == F` additive,
    /// `s > F` hyper. No byte counter.
    HpccReference,
}

/// What CNPs are paced by: a NIC setting, beside the knobs; the
/// notification point builds its pacing keys from it ([`CnpScope::key`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CnpScope {
    /// One pacer per receiving QP (the flow).
    Qp,
    /// One pacer per NIC port: all flows arriving there share it.
    Port,
    /// One pacer per (marked packet's source, destination) IP pair.
    IpPair,
    /// One pacer per CNP destination: the marked packet's source IP.
    DestIp,
}

/// DCQCN parameters of a NIC: the reaction point's (`rpg_*`, `dce_tcp_*`,
/// …) and the notification point's (`min_time_between_cnps`, `cnp_*`).
#[derive(Debug, Clone, PartialEq)]
pub struct DcqcnParams {
    pub model: RpModel,
    pub rpg_time_reset: u32,
    pub rpg_byte_reset: u32,
    pub rpg_threshold: u32,
    pub rpg_max_rate: u32,
    pub rpg_ai_rate: u32,
    pub rpg_hai_rate: u32,
    pub rpg_gd: u32,
    pub rpg_min_dec_fac: u32,
    pub rpg_min_rate: u32,
    pub dce_tcp_g: u32,
    pub dce_tcp_rtt: u32,
    pub rate_reduce_monitor_period: u32,
    pub initial_alpha_value: u32,
    pub clamp_tgt_rate: bool,
    pub clamp_tgt_rate_after_time_inc: bool,
    pub rate_to_set_on_first_cnp: u32,
    pub min_time_between_cnps: u32,
    pub cnp_dscp: u8,
    pub cnp_802p_prio: u8,
    pub cnp_scope: CnpScope,
}

const MBPS: u64 = 1_000_000;

impl DcqcnParams {
    /// The ConnectX defaults of a public `mlxconfig -q` dump (`RPG_*_P1`
    /// …), cross-checked with google/isekai's rdma_roce_cc_dcqcn.h. Firmware
    /// versions differ: read the device rather than trust these.
    ///
    /// Choices where the sources disagree or are silent:
    /// * `rpg_byte_reset` is taken in 64-byte units (isekai), not bytes (the
    ///   mstflint help text, whose wording is inherited from 802.1Qau QCN):
    ///   32767 bytes would be an increase event every 2.6 µs at 100 Gb/s,
    ///   a hundred times more often than the 300 µs timer, and a cut would
    ///   be undone within tens of µs; 32767 × 64 B ≈ 2 MiB is 168 µs at
    ///   100 Gb/s, the timer's order of magnitude. That the default is
    ///   2^15 − 1, a field's largest value, also suggests a coarse unit.
    /// * `min_time_between_cnps` is 2 µs (the same dump; a later vendor
    ///   table says 4, another dump 0) and paced per NIC port: the only
    ///   NVIDIA text on the scope (an mlxconfig help text) says "from the
    ///   port".
    /// * `rate_to_set_on_first_cnp` 0 is read as "not set: keep the
    ///   current rate, and cut for the first CNP as for any other". NVIDIA
    ///   documents the key (a rate in Mb/s, "0, 1 … line rate"), not what 0
    ///   means; setting the rate to 0 cannot be meant, and a user's tuning
    ///   table that lists the key says "0 = disabled".
    pub fn connectx() -> DcqcnParams {
        DcqcnParams {
            model: RpModel::ConnectX,
            rpg_time_reset: 300,
            rpg_byte_reset: 32767,
            rpg_threshold: 1,
            rpg_max_rate: 0,
            rpg_ai_rate: 5,
            rpg_hai_rate: 50,
            rpg_gd: 11,
            rpg_min_dec_fac: 50,
            rpg_min_rate: 1,
            dce_tcp_g: 1019,
            dce_tcp_rtt: 1,
            rate_reduce_monitor_period: 4,
            initial_alpha_value: 1023,
            clamp_tgt_rate: false,
            clamp_tgt_rate_after_time_inc: true,
            rate_to_set_on_first_cnp: 0,
            min_time_between_cnps: 2,
            cnp_dscp: 48,
            cnp_802p_prio: 6,
            cnp_scope: CnpScope::Port,
        }
    }

    /// The HPCC ns-3 reference's DCQCN from its configuration
    /// (`CC_MODE 1`): `ALPHA_RESUME_INTERVAL` → `dce_tcp_rtt`,
    /// `RATE_DECREASE_INTERVAL` → `rate_reduce_monitor_period`, `RP_TIMER` →
    /// `rpg_time_reset`, `FAST_RECOVERY_TIMES` → `rpg_threshold`,
    /// `EWMA_GAIN` (k/1024) → `dce_tcp_g` = 1024 − k,
    /// `RATE_AI`/`RATE_HAI`/`MIN_RATE` → the `rpg_*` rates,
    /// `CLAMP_TARGET_RATE` → `clamp_tgt_rate`. Fixed by its code: no byte
    /// counter, alpha exactly 1.0 on the first CNP (1024), cut =
    /// RC × alpha / 2 (`rpg_gd` 11, which `rpg_min_dec_fac` 50 never binds),
    /// RT copied at a cut once a timer step happened
    /// (`clamp_tgt_rate_after_time_inc`), no change of rate on the first
    /// CNP, and the receiver flags every ACK of a CE-marked packet
    /// (`min_time_between_cnps` 0, per QP). The CNP rides on the ACK, so
    /// `cnp_dscp`/`cnp_802p_prio` do not apply to it.
    ///
    /// Errors name the configuration key: a value the knobs cannot hold
    /// (not whole µs or Mb/s, a gain not a multiple of 1/1024), or one the
    /// reference would leave unset.
    pub fn hpcc_reference(cfg: &ReferenceDcqcn) -> Result<DcqcnParams, ParamError> {
        let k = cfg.ewma_gain * 1024.0;
        if !((1.0..=1024.0).contains(&k) && k.fract() == 0.0) {
            return Err(ParamError::new(
                "EWMA_GAIN",
                format!("{} is not a multiple of 1/1024 in (0, 1]", cfg.ewma_gain),
            )
            .hint("dce_tcp_g holds g in 1/1024 steps: 0.00390625 (1/256) is 4/1024"));
        }
        let us = |key: &str, t: Ps| match t.as_ps() / 1_000_000 {
            0 => Err(ParamError::new(
                key,
                "is 0 (unset, the reference's default)",
            )),
            n if t.as_ps() % 1_000_000 == 0 && n <= u64::from(u32::MAX) => Ok(n as u32),
            _ => Err(
                ParamError::new(key, format!("{t} is not a whole number of µs"))
                    .hint("the ConnectX knob it becomes counts whole µs"),
            ),
        };
        let mbps = |key: &str, r: Option<Rate>| match r {
            None => {
                Err(ParamError::new(key, "is not set").hint("the reference needs it for DCQCN"))
            }
            Some(r) if r.bps() % MBPS == 0 && r.bps() / MBPS <= u64::from(u32::MAX) => {
                Ok((r.bps() / MBPS) as u32)
            }
            Some(r) => Err(ParamError::new(
                key,
                format!("{} b/s is not a whole number of Mb/s", r.bps()),
            )
            .hint("the ConnectX knob it becomes counts whole Mb/s")),
        };
        let p = DcqcnParams {
            model: RpModel::HpccReference,
            rpg_time_reset: us("RP_TIMER", cfg.rp_timer)?,
            rpg_byte_reset: 0,
            rpg_threshold: cfg.fast_recovery_times,
            rpg_max_rate: 0,
            rpg_ai_rate: mbps("RATE_AI", cfg.rate_ai)?,
            rpg_hai_rate: mbps("RATE_HAI", cfg.rate_hai)?,
            rpg_gd: 11,
            rpg_min_dec_fac: 50,
            rpg_min_rate: mbps("MIN_RATE", Some(cfg.min_rate))?,
            dce_tcp_g: 1024 - k as u32,
            dce_tcp_rtt: us("ALPHA_RESUME_INTERVAL", cfg.alpha_resume_interval)?,
            rate_reduce_monitor_period: us("RATE_DECREASE_INTERVAL", cfg.rate_decrease_interval)?,
            initial_alpha_value: 1024,
            clamp_tgt_rate: cfg.clamp_target_rate,
            clamp_tgt_rate_after_time_inc: true,
            rate_to_set_on_first_cnp: 0,
            min_time_between_cnps: 0,
            cnp_dscp: 48,
            cnp_802p_prio: 6,
            cnp_scope: CnpScope::Qp,
        };
        p.validate()?;
        Ok(p)
    }

    /// Checks every knob against the range the model accepts. The ranges
    /// are the simulator's (what keeps the arithmetic meaningful), not a
    /// firmware's, except where the firmware's field width is known.
    pub fn validate(&self) -> Result<(), ParamError> {
        const BIG: u32 = 1_000_000;
        let alpha_max = match self.model {
            RpModel::ConnectX => 1023,
            RpModel::HpccReference => 1024,
        };
        let checks: [(&str, u32, RangeInclusive<u32>, &str); 17] = [
            ("rpg_time_reset", self.rpg_time_reset, 1..=BIG, "µs"),
            (
                "rpg_byte_reset",
                self.rpg_byte_reset,
                0..=(1 << 24),
                "64-byte units, 0 = no byte counter",
            ),
            (
                "rpg_threshold",
                self.rpg_threshold,
                0..=1000,
                "increase events",
            ),
            (
                "rpg_max_rate",
                self.rpg_max_rate,
                0..=BIG,
                "Mb/s, 0 = line rate",
            ),
            ("rpg_ai_rate", self.rpg_ai_rate, 0..=BIG, "Mb/s"),
            ("rpg_hai_rate", self.rpg_hai_rate, 0..=BIG, "Mb/s"),
            (
                "rpg_gd",
                self.rpg_gd,
                0..=31,
                "shift: cut = rate x alpha >> rpg_gd, alpha in 1/1024",
            ),
            (
                "rpg_min_dec_fac",
                self.rpg_min_dec_fac,
                0..=100,
                "% of the rate a cut leaves at least",
            ),
            (
                "rpg_min_rate",
                self.rpg_min_rate,
                1..=BIG,
                "Mb/s; 0 would let a QP stop for good",
            ),
            (
                "dce_tcp_g",
                self.dce_tcp_g,
                0..=1023,
                "g = (1024 - dce_tcp_g) / 1024",
            ),
            ("dce_tcp_rtt", self.dce_tcp_rtt, 1..=BIG, "µs"),
            (
                "rate_reduce_monitor_period",
                self.rate_reduce_monitor_period,
                1..=BIG,
                "µs",
            ),
            (
                "initial_alpha_value",
                self.initial_alpha_value,
                0..=alpha_max,
                "1/1024 (1023 on ConnectX; 1024 = exactly 1.0, the reference's)",
            ),
            (
                "rate_to_set_on_first_cnp",
                self.rate_to_set_on_first_cnp,
                0..=BIG,
                "Mb/s, 0 = keep the current rate",
            ),
            (
                "min_time_between_cnps",
                self.min_time_between_cnps,
                0..=BIG,
                "µs, 0 = a CNP for every marked packet",
            ),
            ("cnp_dscp", u32::from(self.cnp_dscp), 0..=63, "DSCP"),
            ("cnp_802p_prio", u32::from(self.cnp_802p_prio), 0..=7, "PCP"),
        ];
        for (key, value, range, unit) in checks {
            if !range.contains(&value) {
                return Err(ParamError::new(
                    key,
                    format!(
                        "{value} is outside {}..={} ({unit})",
                        range.start(),
                        range.end()
                    ),
                ));
            }
        }
        if self.model == RpModel::HpccReference && self.rpg_byte_reset != 0 {
            return Err(ParamError::new(
                "rpg_byte_reset",
                format!("{} with the hpcc-reference model", self.rpg_byte_reset),
            )
            .hint("the reference has no byte counter: set 0, or use the connectx model"));
        }
        Ok(())
    }

    /// The rate cap of a QP on a port of `line` rate.
    pub fn max_rate(&self, line: Rate) -> Rate {
        match self.rpg_max_rate {
            0 => line,
            m => Rate((u64::from(m) * MBPS).min(line.bps())),
        }
    }
    pub fn min_rate(&self) -> Rate {
        Rate(u64::from(self.rpg_min_rate) * MBPS)
    }
    pub fn ai_rate(&self) -> Rate {
        Rate(u64::from(self.rpg_ai_rate) * MBPS)
    }
    pub fn hai_rate(&self) -> Rate {
        Rate(u64::from(self.rpg_hai_rate) * MBPS)
    }
    /// The rate on the first CNP, `None` for "keep the current rate".
    pub fn first_cnp_rate(&self) -> Option<Rate> {
        match self.rate_to_set_on_first_cnp {
            0 => None,
            m => Some(Rate(u64::from(m) * MBPS)),
        }
    }
    /// Bytes per byte-counter event, `None` without a byte counter.
    pub fn byte_reset_bytes(&self) -> Option<u64> {
        match self.rpg_byte_reset {
            0 => None,
            b => Some(u64::from(b) * 64),
        }
    }
    /// Rate-increase timer T.
    pub fn time_reset(&self) -> Ps {
        Ps::from_us(u64::from(self.rpg_time_reset))
    }
    /// Alpha update period K.
    pub fn alpha_period(&self) -> Ps {
        Ps::from_us(u64::from(self.dce_tcp_rtt))
    }
    /// Rate-decrease period.
    pub fn decrease_period(&self) -> Ps {
        Ps::from_us(u64::from(self.rate_reduce_monitor_period))
    }
    /// The NP's minimum gap between two CNPs of one pacing key.
    pub fn cnp_gap(&self) -> Ps {
        Ps::from_us(u64::from(self.min_time_between_cnps))
    }
    /// The alpha gain g as a fraction.
    pub fn gain(&self) -> f64 {
        f64::from(1024 - self.dce_tcp_g) / 1024.0
    }
}

/// The DCQCN settings of the HPCC ns-3 reference (`CC_MODE 1` in its
/// `config.txt`, read by `rdma-hw.cc`), by the names of its keys: the input
/// of [`DcqcnParams::hpcc_reference`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReferenceDcqcn {
    /// `ALPHA_RESUME_INTERVAL`.
    pub alpha_resume_interval: Ps,
    /// `RATE_DECREASE_INTERVAL`.
    pub rate_decrease_interval: Ps,
    /// `RP_TIMER`.
    pub rp_timer: Ps,
    /// `EWMA_GAIN`.
    pub ewma_gain: f64,
    /// `FAST_RECOVERY_TIMES`.
    pub fast_recovery_times: u32,
    /// `RATE_AI` (`None`: not in the file).
    pub rate_ai: Option<Rate>,
    /// `RATE_HAI` (`None`: not in the file).
    pub rate_hai: Option<Rate>,
    /// `MIN_RATE`.
    pub min_rate: Rate,
    /// `CLAMP_TARGET_RATE`.
    pub clamp_target_rate: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The DCQCN lines of the anchors' e3_dcqcn_2to1_notrace.cfg.
    pub(crate) fn e3() -> ReferenceDcqcn {
        ReferenceDcqcn {
            alpha_resume_interval: Ps::from_us(1),
            rate_decrease_interval: Ps::from_us(4),
            rp_timer: Ps::from_us(300),
            ewma_gain: 0.00390625,
            fast_recovery_times: 1,
            rate_ai: Some(Rate(20_000_000)),
            rate_hai: Some(Rate(200_000_000)),
            min_rate: Rate(100_000_000),
            clamp_target_rate: false,
        }
    }

    #[test]
    fn presets_validate_and_map_the_reference_config() {
        DcqcnParams::connectx().validate().unwrap();
        let r = DcqcnParams::hpcc_reference(&e3()).unwrap();
        // EWMA_GAIN 0.00390625 = 4/1024 -> dce_tcp_g 1020, g = 4/1024.
        assert_eq!(r.dce_tcp_g, 1020);
        assert_eq!(r.gain(), 1.0 / 256.0);
        assert_eq!(r.time_reset(), Ps::from_us(300));
        assert_eq!(r.decrease_period(), Ps::from_us(4));
        assert_eq!(r.alpha_period(), Ps::from_us(1));
        assert_eq!(r.ai_rate(), Rate(20_000_000));
        assert_eq!(r.hai_rate(), Rate(200_000_000));
        assert_eq!(r.min_rate(), Rate(100_000_000));
        assert_eq!(r.byte_reset_bytes(), None);
        assert_eq!(r.cnp_gap(), Ps::ZERO);
        // ConnectX: 32767 x 64 B = 2,097,088 B; g = 5/1024.
        let c = DcqcnParams::connectx();
        assert_eq!(c.byte_reset_bytes(), Some(2_097_088));
        assert_eq!(c.gain(), 5.0 / 1024.0);
        assert_eq!(c.max_rate(Rate::gbps(100)), Rate::gbps(100));
        let capped = DcqcnParams {
            rpg_max_rate: 40_000,
            ..c
        };
        assert_eq!(capped.max_rate(Rate::gbps(100)), Rate::gbps(40));
        assert_eq!(capped.max_rate(Rate::gbps(25)), Rate::gbps(25));
    }

    #[test]
    fn validation_names_the_knob_and_its_range() {
        let cx = DcqcnParams::connectx;
        let reference = || DcqcnParams::hpcc_reference(&e3()).unwrap();
        let cases = [
            (
                DcqcnParams { rpg_gd: 40, ..cx() },
                "rpg_gd",
                "40 is outside 0..=31",
            ),
            (
                DcqcnParams {
                    initial_alpha_value: 1024,
                    ..cx()
                },
                "initial_alpha_value",
                "0..=1023",
            ),
            (
                DcqcnParams {
                    cnp_802p_prio: 8,
                    ..cx()
                },
                "cnp_802p_prio",
                "8 is outside 0..=7",
            ),
            (
                DcqcnParams {
                    rpg_byte_reset: 100,
                    ..reference()
                },
                "rpg_byte_reset",
                "hpcc-reference",
            ),
        ];
        for (p, key, text) in cases {
            let e = p.validate().unwrap_err();
            assert_eq!(e.key, key);
            assert!(e.problem.contains(text), "{}", e.problem);
        }
        let e = DcqcnParams {
            rpg_min_rate: 0,
            ..cx()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "`rpg_min_rate`: 0 is outside 1..=1000000 (Mb/s; 0 would let a QP stop for good)"
        );
    }

    #[test]
    fn reference_config_errors_name_its_key() {
        let cases = [
            (
                ReferenceDcqcn {
                    ewma_gain: 0.3,
                    ..e3()
                },
                "EWMA_GAIN",
                "not a multiple of 1/1024",
            ),
            (
                ReferenceDcqcn {
                    ewma_gain: 0.0,
                    ..e3()
                },
                "EWMA_GAIN",
                "0 is not",
            ),
            (
                ReferenceDcqcn {
                    rp_timer: Ps::ZERO,
                    ..e3()
                },
                "RP_TIMER",
                "is 0 (unset",
            ),
            (
                ReferenceDcqcn {
                    rp_timer: Ps(2_500_000),
                    ..e3()
                },
                "RP_TIMER",
                "2.500us is not a whole number of µs",
            ),
            (
                ReferenceDcqcn {
                    rate_ai: None,
                    ..e3()
                },
                "RATE_AI",
                "is not set",
            ),
            (
                ReferenceDcqcn {
                    min_rate: Rate(1_500),
                    ..e3()
                },
                "MIN_RATE",
                "1500 b/s is not a whole number of Mb/s",
            ),
        ];
        for (cfg, key, text) in cases {
            let e = DcqcnParams::hpcc_reference(&cfg).unwrap_err();
            assert_eq!(e.key, key, "{}", e.problem);
            assert!(e.problem.contains(text), "{}", e.problem);
        }
    }
}
