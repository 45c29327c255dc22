//! A switch's congestion handling: ECN marking per (egress port,
//! priority) from `[switch.ecn]`, its thresholds chosen by each port's
//! speed and checked against the buffer.

use super::names::switch_key;
use crate::cc::red::{MarkPoint, RedParams};
use crate::rng::component_rng;
use crate::scenario::ModelError;
use crate::scenario::qos::{EcnCfg, MarkAt};
use crate::scenario::schema::Scenario;
use crate::units::fmt_rate;
use crate::world::World;
use crate::world::ecn::Ecn;
use crate::world::port::PRIOS;

/// ECN marking on every switch that asks for it; the ports must exist.
pub(super) fn add_ecn(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    for (si, scfg) in sc.switches.iter().enumerate() {
        let Some(cfg) = &scfg.ecn else { continue };
        let mask = priorities(cfg, si)?;
        let mut red = Vec::new();
        for &port in w.switches[si].ports() {
            let p = &w.ports[port as usize];
            let params = red_at(cfg, si, scfg.buffer.0, p.rate(), p.name())?;
            red.push(std::array::from_fn(|prio| {
                (mask & 1 << prio != 0).then_some(params)
            }));
        }
        let rng = component_rng(sc.seed, &format!("switch:{}:ecn", scfg.name));
        let ecn = Ecn::new(red, mark_point(cfg.mark), rng);
        for (local, &port) in w.switches[si].ports().iter().enumerate() {
            w.ports[port as usize].set_marking(ecn.marking(local as u32));
        }
        w.switches[si].set_ecn(ecn);
    }
    Ok(())
}

/// The marking priorities as a bit mask.
fn priorities(cfg: &EcnCfg, si: usize) -> Result<u8, ModelError> {
    let at = switch_key(si).key("ecn").key("priorities");
    if cfg.priorities.is_empty() {
        return Err(ModelError::new(at, "no priority to mark")
            .hint("name the RoCE priority, e.g. priorities = [3], or remove [switch.ecn]"));
    }
    let mut mask = 0u8;
    for (i, &p) in cfg.priorities.iter().enumerate() {
        if usize::from(p) >= PRIOS {
            return Err(
                ModelError::new(at.index(i), format!("priority {p} does not exist"))
                    .hint("802.1p priorities are 0..=7"),
            );
        }
        mask |= 1 << p;
    }
    Ok(mask)
}

/// RED for a port of switch `si` running at `rate` (`name` for messages).
fn red_at(
    cfg: &EcnCfg,
    si: usize,
    buffer: u64,
    rate: crate::time::Rate,
    name: &str,
) -> Result<RedParams, ModelError> {
    let at = switch_key(si).key("ecn");
    let speed = fmt_rate(rate);
    let missing = |key: &str, speeds: Vec<crate::time::Rate>| {
        let named: Vec<String> = speeds.into_iter().map(fmt_rate).collect();
        ModelError::new(
            at.key(key),
            format!("has no value for {speed}, the speed of port `{name}`"),
        )
        .hint(format!(
            "add \"{speed}\" = ... to the table (it names {})",
            named.join(", ")
        ))
    };
    let kmin = cfg
        .kmin
        .at(rate)
        .ok_or_else(|| missing("kmin", cfg.kmin.speeds()))?;
    let kmax = cfg
        .kmax
        .at(rate)
        .ok_or_else(|| missing("kmax", cfg.kmax.speeds()))?;
    let pmax = cfg
        .pmax
        .at(rate)
        .ok_or_else(|| missing("pmax", cfg.pmax.speeds()))?;
    if kmin.0 > kmax.0 {
        return Err(ModelError::new(
            at.key("kmin"),
            format!(
                "Kmin ({} bytes) is above Kmax ({} bytes) at {speed}",
                kmin.0, kmax.0
            ),
        )
        .hint("marking ramps up from kmin to kmax; kmin = kmax marks every packet above it"));
    }
    if !(0.0..=1.0).contains(&pmax) {
        return Err(ModelError::new(
            at.key("pmax"),
            format!("{pmax} at {speed} is not a probability in [0, 1]"),
        )
        .hint("pmax = 0.2 marks one packet in five at kmax"));
    }
    if kmax.0 > buffer {
        return Err(ModelError::new(
            at.key("kmax"),
            format!(
                "Kmax ({} bytes at {speed}) is above the switch buffer ({buffer} bytes): no queue gets there",
                kmax.0
            ),
        )
        .hint("lower kmax, or enlarge the switch's `buffer`"));
    }
    let red = RedParams {
        kmin_bytes: kmin.0,
        kmax_bytes: kmax.0,
        pmax,
        mark_point: mark_point(cfg.mark),
        mark_non_ect: !cfg.ect_only,
    };
    debug_assert_eq!(red.validate(buffer), Ok(()));
    Ok(red)
}

fn mark_point(m: MarkAt) -> MarkPoint {
    match m {
        MarkAt::Enqueue => MarkPoint::Enqueue,
        MarkAt::Dequeue => MarkPoint::Dequeue,
    }
}
