//! The defaults a run takes without a source: what rocesim had to choose
//! where the hardware's documentation and the reference's code are silent
//! or disagree. `summary.json` lists them under `"assumptions"` and
//! `rocesim check` prints them, so that a planner who takes numbers from a
//! run knows which of them rest on a choice of ours, and which key changes
//! it.
//!
//! An assumption is listed only where the run relies on it: a key the
//! scenario sets itself is the user's choice, not ours; a feature the
//! scenario does not use assumes nothing. The sources behind each choice
//! are in `../shared/reference/lossless-facts.md` (§ given per entry) and in
//! the doc comment of the code that applies it.

use std::collections::BTreeSet;

use crate::build::qos::connectx_buffers;
use crate::profile::host_profile;
use crate::schema::Scenario;
use crate::schema::qos::{HeadroomCfg, MmuPreset, TsaCfg};
use rocesim_model::cc::{Algorithm, RpModel};
use rocesim_model::time::Rate;
use rocesim_model::units::fmt_rate;
use rocesim_model::world::pfc::{standard_interface_bits, standard_interface_listed};
use rocesim_model::world::profile::{AckPriority, ProfileBase};

/// The assumptions scenario `sc` runs on, each a sentence naming its key,
/// in a fixed order (the same scenario gives the same list).
pub fn assumptions(sc: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    dcqcn(sc, &mut out);
    nic(sc, &mut out);
    nic_buffers(sc, &mut out);
    pfc(sc, &mut out);
    ets(sc, &mut out);
    collectives(sc, &mut out);
    out
}

/// The NCCL model's own choices (`transport::collective`'s [U] entries),
/// where a `[[collective]]` leaves the key unset.
fn collectives(sc: &Scenario, out: &mut Vec<String>) {
    for c in &sc.collectives {
        let env = |k: &str| c.env.contains_key(k);
        if !env("NCCL_MIN_NCHANNELS") && !env("NCCL_MAX_NCHANNELS") {
            push(out, "collective: two ring channels per NIC, as NCCL's graph search often ends (nccl-facts §3 gives only the mechanism); set NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS".into());
        }
        let nvlink = c.gpus_per_server > 1;
        if nvlink && c.nvlink_bw.is_none() {
            push(out, "collective.nvlink_bw = 2960Gbps: an H100's NVLink minus ~20 % protocol overhead, from an NVIDIA maintainer's comment (nccl-facts §7)".into());
        }
        if nvlink && c.nvlink_latency.is_none() {
            push(
                out,
                "collective.nvlink_latency = 1us: no source gives NVLink's step latency".into(),
            );
        }
        if !env("NCCL_NTHREADS") {
            push(out, "collective: NCCL_NTHREADS = 512 for the small-operation channel rule (nccl-facts §3 gives the rule, not the thread count)".into());
        }
    }
}

fn push(out: &mut Vec<String>, s: String) {
    if !out.contains(&s) {
        out.push(s);
    }
}

fn dcqcn(sc: &Scenario, out: &mut Vec<String>) {
    for (hi, hc) in sc.hosts.iter().enumerate() {
        // A profile the build refuses assumes nothing: the run fails.
        let Ok(p) = host_profile(hc, hi) else {
            continue;
        };
        let Some(d) = &p.dcqcn else { continue };
        let k = &d.params;
        // The reaction point's knobs matter only where DCQCN reacts.
        let dcqcn_reacts = d.rp_prios != 0 && p.algorithm == Algorithm::Dcqcn;
        if dcqcn_reacts && k.model == RpModel::ConnectX {
            if k.rate_to_set_on_first_cnp == 0 {
                push(
                    out,
                    "host.dcqcn.rate_to_set_on_first_cnp = 0 is read as \"not set\": the first CNP \
                     keeps the current rate and is cut for by alpha like any other (NVIDIA documents \
                     the key, not what 0 means; lossless-facts §5c)"
                        .into(),
                );
            }
            if k.rpg_byte_reset != 0 {
                push(
                    out,
                    "host.dcqcn.rpg_byte_reset is counted in 64-byte units (google/isekai's model; \
                     the mlxconfig help text says bytes), from the first CNP on"
                        .into(),
                );
            }
        }
        if p.base != ProfileBase::ConnectX || d.np_prios == 0 {
            continue;
        }
        if hc.dcqcn.min_time_between_cnps.is_none() {
            push(
                out,
                "host.dcqcn.min_time_between_cnps = 2 us, from one public mlxconfig dump (other \
                 firmware shows 0 and 4; lossless-facts §5a)"
                    .into(),
            );
        }
        if hc.dcqcn.cnp_scope.is_none() {
            push(
                out,
                "host.dcqcn.cnp_scope = \"port\": one CNP pacer per NIC port, documented for \
                 ConnectX-8 firmware 40.45.1020 and taken for every generation (lossless-facts §5a)"
                    .into(),
            );
        }
    }
}

fn nic(sc: &Scenario, out: &mut Vec<String>) {
    for (hi, hc) in sc.hosts.iter().enumerate() {
        let Ok(p) = host_profile(hc, hi) else {
            continue;
        };
        if p.base == ProfileBase::ConnectX
            && p.ack_priority == AckPriority::Qp
            && hc.transport.ack_priority.is_none()
        {
            push(
                out,
                "host.transport.ack_priority = \"qp\": a ConnectX responder's ACKs and NAKs ride \
                 its QP's priority (inferred from mlx5 programming the priority per QP path; \
                 lossless-facts §6)"
                    .into(),
            );
        }
    }
    if !sc.hosts.is_empty() {
        push(
            out,
            "a NIC serves the QPs of one priority round robin, one packet each: no source \
             describes the ConnectX arbitration among QPs"
                .into(),
        );
    }
}

fn nic_buffers(sc: &Scenario, out: &mut Vec<String>) {
    for (hi, hc) in sc.hosts.iter().enumerate() {
        let (Some(cfg), Ok(p)) = (&hc.pfc, host_profile(hc, hi)) else {
            continue;
        };
        let at = crate::KeyPath::root().key("host").index(hi).key("pfc");
        if !matches!(connectx_buffers(cfg, p.base, &at), Ok(true)) {
            continue;
        }
        push(
            out,
            "host.pfc: a ConnectX's receive-buffer thresholds are the mlx5 driver's host-owned \
             computation (mlx5e_port_manual_buffer_config); the firmware's own, which a real NIC \
             uses until buffers are set by hand, is not public (lossless-facts §4)"
                .into(),
        );
        push(
            out,
            "host.pfc: the host drains a port's receive buffers in arrival order at rx_rate; \
             how a ConnectX arbitrates between its buffers is not documented"
                .into(),
        );
        push(
            out,
            "rx_buffer_passed_thres_phy counts each buffer rising past 85 % of its own size \
             (mlx5's counters.rst says 85 % of the port receive buffer)"
                .into(),
        );
        if cfg.buffer_size.is_none() {
            push(
                out,
                "host.pfc.buffer_size = 130944 bytes for buffers 0 and 1, as one ConnectX showed \
                 them (NVIDIA community DOC-2933; the model is not stated)"
                    .into(),
            );
        }
        if cfg.max_buffer_size.is_none() {
            push(
                out,
                "host.pfc.max_buffer_size = 262016 bytes, that ConnectX's port buffer (other \
                 generations' totals are not public)"
                    .into(),
            );
        }
        if cfg.max_mtu.is_none() {
            push(
                out,
                "host.pfc.max_mtu = 9216: the netdev's max_mtu, which the driver keeps between XOFF \
                 and XON, is taken at its floor (some ConnectX report 9978)"
                    .into(),
            );
        }
    }
}

fn ets(sc: &Scenario, out: &mut Vec<String>) {
    let tables = sc
        .switches
        .iter()
        .filter_map(|s| s.ets.as_ref())
        .chain(sc.hosts.iter().filter_map(|h| h.ets.as_ref()));
    for e in tables {
        if e.preset.is_some() {
            continue;
        }
        let shares = e.tsa.as_ref().is_some_and(|t| t.contains(&TsaCfg::Ets));
        if shares && e.round.is_none() {
            push(
                out,
                "ets.round = 12800 bytes: the credit one round of deficit round robin hands the \
                 ETS classes; the hardware's granularity is not documented (lossless-facts §7)"
                    .into(),
            );
        }
        let shared_class = e
            .prio_tc
            .as_ref()
            .is_some_and(|m| m.iter().enumerate().any(|(i, tc)| m[..i].contains(tc)));
        if shared_class {
            push(
                out,
                "ets.prio_tc: the priorities of one traffic class take turns frame by frame, where \
                 the hardware queues them in one FIFO"
                    .into(),
            );
        }
    }
}

/// The rates of the links that end at node `name` (`name.port`).
fn rates_at<'a>(sc: &'a Scenario, name: &'a str) -> impl Iterator<Item = Rate> + 'a {
    sc.links.iter().filter_map(move |l| {
        let at = |end: &str| end.split_once('.').is_some_and(|(n, _)| n == name);
        (at(&l.a) || at(&l.b)).then_some(l.rate.0)
    })
}

fn pfc(sc: &Scenario, out: &mut Vec<String>) {
    // The ports whose interface delay is 802.3's default, by rate.
    let mut default_delay: BTreeSet<u64> = BTreeSet::new();
    let mut lossless = false;
    for s in &sc.switches {
        let Some(m) = &s.mmu else { continue };
        if m.lossless.is_empty() || m.preset == Some(MmuPreset::HpccReference) {
            continue;
        }
        lossless = true;
        if m.interface_delay_bits.is_none() {
            default_delay.extend(rates_at(sc, &s.name).map(Rate::bps));
        }
        if matches!(m.headroom, Some(HeadroomCfg::Auto)) {
            push(
                out,
                "switch.mmu.headroom = \"auto\" counts the peer's interface delay once, with its \
                 pause response, over the worst case of two frames in progress (lossless-facts §1.4; \
                 whether 802.1Qbb counts both ends' delay was not verified)"
                    .into(),
            );
        }
    }
    for (hi, h) in sc.hosts.iter().enumerate() {
        let reference = host_profile(h, hi).is_ok_and(|p| p.base == ProfileBase::Hpcc);
        let obeys = lossless || h.pfc.as_ref().is_some_and(|c| !c.priorities.is_empty());
        if reference || !obeys {
            continue;
        }
        if h.pfc
            .as_ref()
            .is_none_or(|c| c.interface_delay_bits.is_none())
        {
            default_delay.extend(rates_at(sc, &h.name).map(Rate::bps));
        }
    }
    for bps in default_delay {
        let rate = Rate(bps);
        if !standard_interface_listed(rate) {
            push(
                out,
                format!(
                    "interface_delay_bits at {}: no IEEE 802.3 value was found; the next slower \
                     listed speed's {} bit times are used (lossless-facts §1.1)",
                    fmt_rate(rate),
                    standard_interface_bits(rate)
                ),
            );
        }
        if bps == 10_000_000_000 {
            push(
                out,
                "response_time_bits at 10G: 67 pause quanta, SONiC's 802.3 table, over the 60 a \
                 headroom article quotes (lossless-facts §7)"
                    .into(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::assumptions;

    /// Hosts `a` and `b`, each with the keys `host`, through `sw1` (with
    /// the tables `sw`) over links of `rate`.
    fn of(rate: &str, host: &str, sw: &str) -> Vec<String> {
        let text = format!(
            "[[host]]\nname = \"a\"\n{host}\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n\
             [[host]]\nname = \"b\"\n{host}\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.2/24\"\n\
             [[switch]]\nname = \"sw1\"\n{sw}\n\
             [[link]]\na = \"a.eth0\"\nb = \"sw1.pa\"\nrate = \"{rate}\"\n\
             [[link]]\na = \"b.eth0\"\nb = \"sw1.pb\"\nrate = \"{rate}\"\n"
        );
        let loaded = crate::load::load_str(Path::new("t.toml"), text, &[]).expect("loads");
        assumptions(&loaded.scenario)
    }

    fn count(list: &[String], key: &str) -> usize {
        list.iter().filter(|a| a.contains(key)).count()
    }

    #[test]
    fn connectx_defaults_are_listed_until_their_key_is_set() {
        let list = of("100Gbps", "", "");
        for key in [
            "rate_to_set_on_first_cnp = 0",
            "rpg_byte_reset",
            "min_time_between_cnps = 2 us",
            "cnp_scope",
            "ack_priority",
            "round robin",
        ] {
            assert_eq!(count(&list, key), 1, "{key} in {list:#?}");
        }
        // Two hosts rely on each, listed once.
        assert_eq!(list.len(), 6, "{list:#?}");
        let set = "  [host.dcqcn]\n  min_time_between_cnps = 4\n  cnp_scope = \"qp\"\n  \
                   rate_to_set_on_first_cnp = 10000\n  rpg_byte_reset = 0\n\
                   [host.transport]\n  ack_priority = \"qp\"\n";
        let list = of("100Gbps", set, "");
        assert_eq!(list.len(), 1, "only the QP arbitration is left: {list:#?}");
        // 0 set by hand is still our reading of an undocumented value.
        let zero = "  [host.dcqcn]\n  rate_to_set_on_first_cnp = 0\n";
        assert_eq!(
            count(&of("100Gbps", zero, ""), "rate_to_set_on_first_cnp"),
            1
        );
    }

    #[test]
    fn the_reference_nic_assumes_none_of_the_connectx_choices() {
        let list = of("100Gbps", "profile = \"hpcc\"", "");
        assert_eq!(list.len(), 1, "only the QP arbitration: {list:#?}");
        assert_eq!(count(&list, "round robin"), 1);
    }

    #[test]
    fn pfc_delays_at_speeds_the_standard_does_not_list() {
        let mmu = "  [switch.mmu]\n  lossless = [3]\n  headroom = \"auto\"\n";
        let list = of("400Gbps", "", mmu);
        let delay: Vec<_> = list
            .iter()
            .filter(|a| a.contains("interface_delay_bits"))
            .collect();
        assert_eq!(delay.len(), 1, "{list:#?}");
        assert!(
            delay[0].contains("400Gbps") && delay[0].contains("122880"),
            "{}",
            delay[0]
        );
        assert_eq!(count(&list, "headroom = \"auto\""), 1);
        // 100G has a value of its own; 10G's response time is a choice.
        assert_eq!(count(&of("100Gbps", "", mmu), "interface_delay_bits"), 0);
        assert_eq!(count(&of("10Gbps", "", mmu), "67 pause quanta"), 1);
        // Set on the switch, the NICs (which obey its pauses) still default;
        // set on both, nothing is assumed.
        let sw = format!("{mmu}  interface_delay_bits = 100000\n");
        assert_eq!(count(&of("400Gbps", "", &sw), "interface_delay_bits"), 1);
        let nic = "  [host.pfc]\n  interface_delay_bits = 100000\n";
        assert_eq!(count(&of("400Gbps", nic, &sw), "interface_delay_bits"), 0);
        // Without lossless priorities nothing pauses: no delay is assumed.
        assert_eq!(count(&of("400Gbps", "", ""), "interface_delay_bits"), 0);
    }

    #[test]
    fn connectx_buffers_and_ets_shares_name_their_unsourced_defaults() {
        let pfc = "  [host.pfc]\n  priorities = [3]\n";
        let list = of("100Gbps", pfc, "");
        for key in [
            "host-owned",
            "buffer_size = 130944",
            "max_buffer_size",
            "max_mtu = 9216",
        ] {
            assert_eq!(count(&list, key), 1, "{key} in {list:#?}");
        }
        // One FIFO (the keys of the rxe and hpcc profiles) is not a ConnectX's.
        let fifo = "  [host.pfc]\n  priorities = [3]\n  rx_buffer = \"256KiB\"\n";
        assert_eq!(count(&of("100Gbps", fifo, ""), "host-owned"), 0);
        let sized = "  [host.pfc]\n  priorities = [3]\n  buffer_size = [130944, 130944]\n";
        assert_eq!(count(&of("100Gbps", sized, ""), "buffer_size = 130944"), 0);

        let ets = "  [switch.ets]\n  prio_tc = [0, 0, 0, 3, 4, 0, 0, 0]\n  \
                   tsa = [\"ets\", \"strict\", \"strict\", \"ets\", \"ets\", \"strict\", \"strict\", \"strict\"]\n  \
                   tcbw = [20, 0, 0, 50, 30, 0, 0, 0]\n";
        let list = of("100Gbps", "", ets);
        assert_eq!(count(&list, "ets.round = 12800"), 1, "{list:#?}");
        assert_eq!(
            count(&list, "frame by frame"),
            1,
            "priorities 0-2, 5-7 share TC 0"
        );
        let own = ets.replace("[0, 0, 0, 3, 4, 0, 0, 0]", "[0, 1, 2, 3, 4, 5, 6, 7]")
            + "  round = \"9000B\"\n";
        let list = of("100Gbps", "", &own);
        assert_eq!(count(&list, "ets."), 0, "{list:#?}");
    }
}
