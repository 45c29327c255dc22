//! `[[link]]`: a cable between two ports, and its carrier changes.

use serde::Deserialize;

use super::scalars::{Dur, Length, RateQ};
use rocesim_model::time::Ps;
use rocesim_model::world::mmu::cable_propagation;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    pub name: Option<String>,
    /// `host.nic` or `switch.port` (switch ports are created by links).
    pub a: String,
    pub b: String,
    pub rate: RateQ,
    /// One-way propagation (default 0) ...
    pub delay: Option<Dur>,
    /// ... or the cable's length, which gives it at 5 ns a metre (light
    /// in fibre, about 0.67 c; twin-ax copper is a little faster). A link
    /// gives one or the other.
    pub length: Option<Length>,
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

impl LinkCfg {
    /// One-way propagation: `delay`, or `length` at 5 ns/m, or 0 (a link
    /// with both is refused when the world is built).
    pub fn propagation(&self) -> Ps {
        match (self.delay, self.length) {
            (Some(d), _) => d.0,
            (None, Some(l)) => cable_propagation(l.0),
            (None, None) => Ps::ZERO,
        }
    }
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
