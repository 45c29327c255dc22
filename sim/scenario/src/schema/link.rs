//! `[[link]]`: a cable between two ports, and its carrier changes.

use serde::Deserialize;

use super::scalars::{Dur, RateQ, zero_dur};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub name: Option<String>,
    /// `host.nic` or `switch.port` (switch ports are created by links).
    pub a: String,
    pub b: String,
    pub rate: RateQ,
    #[serde(default = "zero_dur")]
    pub delay: Dur,
    /// Probability that a frame is lost on this link (each direction).
    #[serde(default)]
    pub loss: f64,
    /// Probability that an ECT frame crossing this link (either direction)
    /// arrives CE-marked: a stand-in for a congested hop the scenario does
    /// not model, to exercise the NIC's notification and reaction points.
    /// Switches mark by queue depth themselves (RED); this does not.
    #[serde(default)]
    pub ce_mark: f64,
    #[serde(default, rename = "event")]
    pub events: Vec<LinkEventCfg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LinkState {
    Down,
    Up,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkEventCfg {
    pub at: Dur,
    pub state: LinkState,
}
