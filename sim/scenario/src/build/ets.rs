//! The egress scheduler of a switch's ports (`[switch.ets]`) and of a
//! host's NICs (`[host.ets]`): ETS as `mlnx_qos --prio_tc --tsa --tcbw`
//! sets it, or the HPCC reference's round robin
//! ([`rocesim_model::world::port::select`]).

use super::names::{host_key, switch_key};
use crate::diagnostic::ModelError;
use crate::schema::Scenario;
use crate::schema::qos::{EtsCfg, EtsPreset, TsaCfg};
use rocesim_model::world::World;
use rocesim_model::world::port::select::{EtsConfig, TCS, Tsa, TxSelect};

/// Every `[switch.ets]` and `[host.ets]`: the scheduler of each port of the
/// switch, of each NIC of the host.
pub(super) fn add_ets(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    for (si, scfg) in sc.switches.iter().enumerate() {
        let Some(cfg) = &scfg.ets else { continue };
        let select = tx_select(cfg, &switch_key(si).key("ets"), true)?;
        for &p in w.switches[si].ports() {
            w.ports[p as usize].set_select(select.clone());
        }
    }
    for (hi, hcfg) in sc.hosts.iter().enumerate() {
        let Some(cfg) = &hcfg.ets else { continue };
        let select = tx_select(cfg, &host_key(hi).key("ets"), false)?;
        for n in &w.hosts[hi].nics {
            if n.port != u32::MAX {
                w.ports[n.port as usize].set_select(select.clone());
            }
        }
    }
    Ok(())
}

/// The scheduler an `[*.ets]` table (`at`) asks for; `switch`: a switch's
/// (the reference's preset is a switch queue).
fn tx_select(
    cfg: &EtsCfg,
    at: &crate::diagnostic::KeyPath,
    switch: bool,
) -> Result<TxSelect, ModelError> {
    if let Some(EtsPreset::HpccReference) = cfg.preset {
        if !switch {
            return Err(ModelError::new(
                at.key("preset"),
                "the HPCC reference's round robin is its switches' egress queue, not its NIC's",
            )
            .hint("the reference's NIC is the `hpcc` profile: ACKs first (NIC queue 7), then its QPs in turn"));
        }
        let given = [
            ("prio_tc", cfg.prio_tc.is_some()),
            ("tsa", cfg.tsa.is_some()),
            ("tcbw", cfg.tcbw.is_some()),
            ("round", cfg.round.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|(_, set)| *set) {
            return Err(ModelError::new(
                at.key(key),
                "preset = \"hpcc_reference\" sets the whole scheduler (priority 0 first, then round robin)",
            )
            .hint(format!("remove `{key}`, or the preset for ETS")));
        }
        return Ok(TxSelect::round_robin());
    }
    let base = EtsConfig::strict_priority();
    let eight = |key: &str, len: usize, what: &str| -> Result<(), ModelError> {
        if len == TCS {
            return Ok(());
        }
        Err(ModelError::new(
            at.key(key),
            format!("{len} values: it takes 8, one per {what} (0 to 7)"),
        )
        .hint(format!(
            "mlnx_qos --{key} takes 8 comma-separated values too"
        )))
    };
    let mut c = base;
    if let Some(v) = &cfg.prio_tc {
        eight("prio_tc", v.len(), "priority")?;
        c.prio_tc.copy_from_slice(v);
    }
    if let Some(v) = &cfg.tsa {
        eight("tsa", v.len(), "traffic class")?;
        for (tc, t) in v.iter().enumerate() {
            c.tsa[tc] = match t {
                TsaCfg::Strict => Tsa::Strict,
                TsaCfg::Ets => Tsa::Ets,
                TsaCfg::Vendor => {
                    return Err(ModelError::new(
                        at.key("tsa").index(tc),
                        "\"vendor\" is not modelled: what mlx5 programs for it differs between kernel versions, and what the NIC then does is in no public source",
                    )
                    .hint("\"strict\" or \"ets\""));
                }
            };
        }
    }
    if let Some(v) = &cfg.tcbw {
        eight("tcbw", v.len(), "traffic class")?;
        c.tcbw.copy_from_slice(v);
    }
    if let Some(r) = cfg.round {
        c.round_bytes = u32::try_from(r.0).map_err(|_| {
            ModelError::new(at.key("round"), format!("{} bytes is more than 4 GiB", r.0))
        })?;
    }
    c.validate().map_err(|e| {
        // The model names `tcbw[2]`, `prio_tc[5]`, `round_bytes`.
        let path = match e.key.split_once('[') {
            Some((k, i)) => at
                .key(k)
                .index(i.trim_end_matches(']').parse().unwrap_or(0)),
            None if e.key == "round_bytes" => at.key("round"),
            None => at.key(&e.key),
        };
        let err = ModelError::new(path, e.problem);
        match e.hint {
            Some(h) => err.hint(h),
            None => err,
        }
    })?;
    Ok(TxSelect::ets(c))
}
