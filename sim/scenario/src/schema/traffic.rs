//! `[[traffic]]`: flows from size distributions and arrival processes, or
//! from the reference's flow file (lowered into `[[workload]]`s by
//! [`crate::lower::traffic`]).

use serde::Deserialize;

use super::scalars::{Bytes, Dur, RateQ};
use rocesim_model::time::Ps;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PatternCfg {
    AllToAll,
    Permutation,
    Incast,
    OneToMany,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FlowVerbCfg {
    #[default]
    Write,
    Send,
    Read,
}

/// One `[[traffic]]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficCfg {
    pub name: Option<String>,
    /// The reference's flow file (`src dst priority dport size start_s`);
    /// excludes the generator keys.
    pub flows: Option<String>,
    pub pattern: Option<PatternCfg>,
    /// `WebSearch` (scenarios' `cdf/WebSearch.txt`), or a file in the
    /// reference's CDF format, relative to the scenario.
    pub cdf: Option<String>,
    /// A fixed flow size instead of a CDF.
    pub size: Option<Bytes>,
    /// Offered load per sender, a fraction of its host link (Poisson
    /// arrivals); without it every flow of the pattern starts at `start`.
    pub load: Option<f64>,
    /// Arrival window (with `load`).
    pub duration: Option<Dur>,
    #[serde(default = "zero")]
    pub start: Dur,
    /// Host link rate the load is a share of (default: the first
    /// sender's link).
    pub rate: Option<RateQ>,
    /// Incast receiver / one-to-many sender.
    pub receiver: Option<String>,
    pub sender: Option<String>,
    /// The many side (default: every other host).
    pub hosts: Option<Vec<String>>,
    /// Or this many drawn at random.
    pub count: Option<u32>,
    /// Traffic class: priority 0..=7 (DSCP = priority x 8).
    #[serde(default = "three")]
    pub priority: u8,
    #[serde(default = "hundred")]
    pub dport: u16,
    #[serde(default)]
    pub verb: FlowVerbCfg,
}

fn zero() -> Dur {
    Dur(Ps::ZERO)
}
fn three() -> u8 {
    3
}
fn hundred() -> u16 {
    100
}
