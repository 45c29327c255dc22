//! A switch's congestion handling: ECN marking per (egress port,
//! priority) from `[switch.ecn]`, its thresholds chosen by each port's
//! speed and checked against the buffer; its buffer and PFC
//! (`[switch.mmu]`) and a host NIC's (`[host.pfc]`); which received
//! pauses every port obeys, and how soon. (The egress scheduler of a
//! switch's ports and a host's NICs, `[switch.ets]`/`[host.ets]`, is
//! [`super::ets`]'s.)
//!
//! ```text
//!  add_pause_delays   every port's reaction delay (interface + response bit times at its speed)
//!  add_mmu            buffers; headroom = "auto" sizes each port from its link and its peer's delay
//!  add_host_pfc       NIC receive buffers and the pauses they send: a ConnectX's (the connectx
//!                     profile, or prio2buffer/buffer_size/cable_len given) laid out by the mlx5
//!                     driver's rule, else one FIFO (rx_buffer, xoff, xon)
//!  add_pause_obeying  what each port obeys: its own PFC priorities or 802.3x; a NIC without
//!                     [host.pfc] takes its link peer's (DCBX, willing)
//! ```

use super::names::{host_key, switch_key};
use crate::diagnostic::ModelError;
use crate::schema::Scenario;
use crate::schema::qos::{
    EcnCfg, HeadroomCfg, MarkAt, MmuPreset, PauseMode, PerSpeed, WatchdogActionCfg,
};
use rocesim_model::cc::red::{MarkPoint, RedParams};
use rocesim_model::rng::component_rng;
use rocesim_model::time::Rate;
use rocesim_model::units::fmt_rate;
use rocesim_model::world::World;
use rocesim_model::world::ecn::Ecn;
use rocesim_model::world::mmu::{Mmu, MmuConfig, PrioClass, mellanox_headroom_bytes};
use rocesim_model::world::nic_rx::{
    BUFFERS, DEFAULT_CABLE_LEN_M, MINIMUM_MAX_MTU, Mlx5Request, RxBuffer, RxConfig, RxLayout,
};
use rocesim_model::world::pfc::{
    PauseConfig, PauseRx, Watchdog, WatchdogAction, standard_interface_bits, standard_response_bits,
};
use rocesim_model::world::port::{Owner, PRIOS};
use rocesim_model::world::profile::ProfileBase;

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
    prio_mask(&cfg.priorities, &at)
}

/// A list of 802.1p priorities (the key `at`) as a bit mask.
fn prio_mask(list: &[u8], at: &crate::diagnostic::KeyPath) -> Result<u8, ModelError> {
    let mut mask = 0u8;
    for (i, &p) in list.iter().enumerate() {
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
    rate: rocesim_model::time::Rate,
    name: &str,
) -> Result<RedParams, ModelError> {
    let at = switch_key(si).key("ecn");
    let speed = fmt_rate(rate);
    let missing = |key: &str, speeds| no_value_for(at.key(key), rate, name, speeds);
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

/// A per-speed table (`at`) without the speed `rate` of port `name`; it
/// names `speeds`.
fn no_value_for(
    at: crate::diagnostic::KeyPath,
    rate: Rate,
    name: &str,
    speeds: Vec<Rate>,
) -> ModelError {
    let speed = fmt_rate(rate);
    let named: Vec<String> = speeds.into_iter().map(fmt_rate).collect();
    ModelError::new(
        at,
        format!("has no value for {speed}, the speed of port `{name}`"),
    )
    .hint(format!(
        "add \"{speed}\" = ... to the table (it names {})",
        named.join(", ")
    ))
}

fn mark_point(m: MarkAt) -> MarkPoint {
    match m {
        MarkAt::Enqueue => MarkPoint::Enqueue,
        MarkAt::Dequeue => MarkPoint::Dequeue,
    }
}

/// Every switch's buffer: `[switch.mmu]`, or one tail-dropping pool; PFC
/// on its ports when it has lossless priorities or a watchdog.
pub(super) fn add_mmu(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    for (si, scfg) in sc.switches.iter().enumerate() {
        let ports = w.switches[si].ports().to_vec();
        let buffer = scfg.buffer.0;
        let Some(cfg) = &scfg.mmu else {
            let mmu = Mmu::new(&MmuConfig::shared_pool(buffer, ports.len()))
                .map_err(|e| ModelError::new(switch_key(si).key("buffer"), e.problem))?;
            w.switches[si].set_mmu(mmu);
            continue;
        };
        let at = switch_key(si).key("mmu");
        let mmu = match cfg.preset {
            Some(MmuPreset::HpccReference) => {
                let links: Vec<_> = ports
                    .iter()
                    .map(|&p| {
                        let p = &w.ports[p as usize];
                        (p.rate(), w.links[p.link() as usize].delay())
                    })
                    .collect();
                // The reference scales each port's threshold by its rate
                // over one NIC rate for the whole fabric: its first host's
                // (third.cc `get_nic_rate`), not the switch's slowest port,
                // so a switch of 400G ports among 100G hosts gets alpha 1/2.
                let nic = w
                    .hosts
                    .iter()
                    .find_map(|h| h.nics.first())
                    .map(|n| w.ports[n.port as usize].rate())
                    .or_else(|| links.iter().map(|l| l.0).min())
                    .unwrap_or(rocesim_model::time::Rate::gbps(100));
                Mmu::hpcc_reference(buffer, &links, nic).map_err(|e| {
                    ModelError::new(switch_key(si).key("buffer"), e.problem)
                        .hint(e.hint.unwrap_or_default())
                })?
            }
            None => {
                let lossless = prio_mask(&cfg.lossless, &at.key("lossless"))?;
                let classes = std::array::from_fn(|p| match lossless & 1 << p {
                    0 => PrioClass::Lossy,
                    _ => PrioClass::Lossless,
                });
                let headroom: Vec<u64> = match cfg.headroom {
                    Some(HeadroomCfg::Auto) => {
                        ports.iter().map(|&p| w.headroom_need(p).bytes()).collect()
                    }
                    Some(HeadroomCfg::Bytes(b)) => vec![b.0; ports.len()],
                    None => vec![0; ports.len()],
                };
                if !cfg.lossless.is_empty() && headroom.contains(&0) {
                    let p = &w.ports[ports[0] as usize];
                    let guess = mellanox_headroom_bytes(9216, 9216, 100, p.rate());
                    let need = w.headroom_need(ports[0]).bytes();
                    return Err(ModelError::new(
                        at.key("headroom"),
                        format!("lossless priorities {:?} need headroom: what still arrives after XOFF while the peer stops", cfg.lossless),
                    )
                    .hint(format!(
                        "the Mellanox rule for a {} port with 100 m of cable and 9216-byte MTUs is {guess} bytes: headroom = \"{guess}B\"; \
                         headroom = \"auto\" sizes each port from its own link, MTUs and peer (`{}` needs {need} bytes)",
                        fmt_rate(p.rate()),
                        p.name()
                    )));
                }
                let alpha = cfg.alpha.unwrap_or(0.125);
                let mc = MmuConfig {
                    buffer_bytes: buffer,
                    classes,
                    reserve_bytes: [cfg.reserve.map_or(0, |b| b.0); PRIOS],
                    alpha: [alpha; PRIOS],
                    headroom_bytes: headroom,
                    resume_offset_bytes: cfg.resume_offset.map_or(3 * 1024, |b| b.0),
                };
                Mmu::new(&mc).map_err(|e| {
                    let key = if e.key.starts_with("alpha") {
                        at.key("alpha")
                    } else {
                        at.key("headroom")
                    };
                    if e.key == "buffer_bytes" {
                        let problem = format!(
                            "{}: the reserves and headroom of {} ports are above the switch buffer",
                            e.problem,
                            ports.len()
                        );
                        return ModelError::new(key, problem).hint(
                            "lower `headroom` or `reserve`, or enlarge the switch's `buffer`",
                        );
                    }
                    ModelError::new(key, e.problem).hint(e.hint.unwrap_or_default())
                })?
            }
        };
        let lossless = (0..PRIOS).any(|p| mmu.class(p) == PrioClass::Lossless);
        w.switches[si].set_mmu(mmu);
        if !lossless && cfg.watchdog.is_none() {
            continue;
        }
        let watchdog = cfg.watchdog.as_ref().map(|wd| Watchdog {
            detect: wd.detect.0,
            restore: wd.restore.0,
            action: match wd.action {
                WatchdogActionCfg::Drop => WatchdogAction::Drop,
                WatchdogActionCfg::Forward => WatchdogAction::Forward,
            },
        });
        let pc = PauseConfig {
            mac: w.switches[si].mac(),
            quanta: cfg.quanta.unwrap_or(u16::MAX).max(1),
            global: cfg.pause == PauseMode::Global,
            watchdog,
        };
        for &p in &ports {
            w.ports[p as usize].configure_pauses(pc);
        }
    }
    Ok(())
}

/// Every host's `[host.pfc]`: receive buffers and PFC on each of its NICs.
pub(super) fn add_host_pfc(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    for (hi, hcfg) in sc.hosts.iter().enumerate() {
        let Some(cfg) = &hcfg.pfc else { continue };
        let at = host_key(hi).key("pfc");
        let Some(prios) = host_pause_prios(cfg, &at)? else {
            continue; // willing: its switch's priorities, no buffer of its own
        };
        let connectx = connectx_buffers(cfg, w.hosts[hi].profile.base, &at)?;
        let single = match connectx {
            true => None,
            false => Some(single_fifo(cfg, prios, &at)?),
        };
        for n in 0..w.hosts[hi].nics.len() {
            let port = w.hosts[hi].nics[n].port;
            let layout = match single {
                Some(l) => l,
                None => {
                    // The driver reads the port's speed, 40G if it cannot
                    // (port_buffer.c calculate_xoff): an uncabled NIC's.
                    let speed = match port {
                        u32::MAX => Rate::gbps(40),
                        p => w.ports[p as usize].rate(),
                    };
                    let nic = format!("{}.{}", hcfg.name, hcfg.nics[n].name);
                    mlx5_layout(cfg, prios, speed, hcfg.nics[n].mtu, &nic, &at)?
                }
            };
            let rx = RxConfig {
                rate: cfg.rx_rate.map(|r| r.0),
                layout,
                stall_at: cfg.stall_at.map(|d| d.0),
                stall_warning: cfg.stall_warning.map(|d| d.0),
                stall_error: cfg.stall_error.map(|d| d.0),
            };
            let nic = &mut w.hosts[hi].nics[n];
            nic.rx = Some(Box::new(RxBuffer::new(rx)));
            let mac = nic.mac;
            if port == u32::MAX {
                continue; // not cabled
            }
            w.ports[port as usize].configure_pauses(PauseConfig {
                mac,
                quanta: cfg.quanta.unwrap_or(u16::MAX).max(1),
                global: cfg.pause == PauseMode::Global,
                watchdog: None,
            });
        }
    }
    Ok(())
}

/// Whether a `[host.pfc]` NIC gets ConnectX receive buffers: it names one
/// of their keys, or it is a ConnectX and names none of the one-FIFO keys
/// (`rx_buffer`, `xoff`, `xon`: the `rxe` and `hpcc` profiles' layout, and
/// every NIC's before the buffers were modelled). Keys of both is an error.
pub(crate) fn connectx_buffers(
    cfg: &crate::schema::qos::HostPfcCfg,
    base: ProfileBase,
    at: &crate::diagnostic::KeyPath,
) -> Result<bool, ModelError> {
    let buffers = [
        ("prio2buffer", cfg.prio2buffer.is_some()),
        ("buffer_size", cfg.buffer_size.is_some()),
        ("cable_len", cfg.cable_len.is_some()),
        ("max_mtu", cfg.max_mtu.is_some()),
        ("max_buffer_size", cfg.max_buffer_size.is_some()),
    ];
    let fifo = [
        ("rx_buffer", cfg.rx_buffer.is_some()),
        ("xoff", cfg.xoff.is_some()),
        ("xon", cfg.xon.is_some()),
    ];
    let named = |keys: &[(&'static str, bool)]| keys.iter().find(|k| k.1).map(|k| k.0);
    match (named(&buffers), named(&fifo)) {
        (Some(b), Some(f)) => Err(ModelError::new(
            at.key(b),
            format!(
                "`{b}` lays out ConnectX receive buffers and `{f}` one receive FIFO: a NIC has one or the other"
            ),
        )
        .hint("ConnectX: prio2buffer, buffer_size, cable_len (thresholds from the mlx5 driver); one FIFO: rx_buffer, xoff, xon")),
        (Some(_), None) => Ok(true),
        (None, Some(_)) => Ok(false),
        (None, None) => Ok(base == ProfileBase::ConnectX),
    }
}

/// One receive FIFO for every priority: `rx_buffer`, `xoff`, `xon`.
fn single_fifo(
    cfg: &crate::schema::qos::HostPfcCfg,
    prios: u8,
    at: &crate::diagnostic::KeyPath,
) -> Result<RxLayout, ModelError> {
    let capacity = cfg.rx_buffer.map_or(256 * 1024, |b| b.0);
    let xoff = cfg.xoff.map_or(capacity / 2, |b| b.0);
    let xon = cfg.xon.map_or(xoff / 2, |b| b.0);
    if xoff > capacity {
        return Err(ModelError::new(
            at.key("xoff"),
            format!("XOFF at {xoff} bytes is above the receive buffer ({capacity} bytes): the NIC would drop before it pauses"),
        )
        .hint("xoff below rx_buffer, leaving room for what arrives while the switch stops"));
    }
    if xon > xoff {
        return Err(ModelError::new(
            at.key("xon"),
            format!("XON at {xon} bytes is above XOFF ({xoff} bytes)"),
        )
        .hint("xon below xoff (hysteresis), e.g. half of it"));
    }
    Ok(RxLayout::single(capacity, xoff, xon, prios))
}

/// The buffer sizes ConnectX NICs showed `mlnx_qos` by default: buffers 0
/// and 1 of 130,944 bytes each (1023 cells), out of 262,016 (community
/// DOC-2933, lossless-facts §4; the NIC model is not stated). The firmware
/// sizes them itself by default and its algorithm is not public; rocesim
/// takes these sizes and runs the driver's host-owned algorithm on them.
const CONNECTX_BUFFER_SIZE: [u64; 2] = [130_944, 130_944];
const CONNECTX_MAX_BUFFER_SIZE: u64 = 262_016;

/// A ConnectX NIC's buffers at `speed` and `mtu`, as the mlx5 driver lays
/// them out from the keys (or their defaults) and `prios`, its PFC
/// priorities (every one with 802.3x).
fn mlx5_layout(
    cfg: &crate::schema::qos::HostPfcCfg,
    prios: u8,
    speed: Rate,
    mtu: u32,
    nic: &str,
    at: &crate::diagnostic::KeyPath,
) -> Result<RxLayout, ModelError> {
    let mut buffer_size = [0u64; BUFFERS];
    match &cfg.buffer_size {
        Some(v) if v.len() > BUFFERS || v.is_empty() => {
            return Err(ModelError::new(
                at.key("buffer_size"),
                format!("{} sizes: a port has 8 receive buffers", v.len()),
            )
            .hint("buffer 0's size first, up to 8 (the rest are 0), e.g. buffer_size = [130944, 130944]"));
        }
        Some(v) => {
            for (b, s) in buffer_size.iter_mut().zip(v) {
                *b = s.0;
            }
        }
        None => buffer_size[..2].copy_from_slice(&CONNECTX_BUFFER_SIZE),
    }
    let prio2buffer: [u8; PRIOS] = match &cfg.prio2buffer {
        Some(v) => v.as_slice().try_into().map_err(|_| {
            ModelError::new(
                at.key("prio2buffer"),
                format!("{} values: one buffer per priority 0..=7, eight values", v.len()),
            )
            .hint("e.g. prio2buffer = [0, 0, 0, 1, 0, 0, 0, 0] puts priority 3 in buffer 1, the rest in 0")
        })?,
        // The PFC priorities in buffer 1, the rest in 0 (DOC-2933: PFC on
        // 3, priority 3 in buffer 1); with 802.3x every one is "PFC", and
        // all go to buffer 0.
        None => std::array::from_fn(|p| match cfg.pause {
            PauseMode::Pfc => u8::from(prios & 1 << p != 0),
            PauseMode::Global => 0,
        }),
    };
    let request = Mlx5Request {
        buffer_size,
        prio2buffer,
        pfc_en: prios,
        cable_len_m: cfg.cable_len.unwrap_or(DEFAULT_CABLE_LEN_M),
        speed,
        mtu,
        max_mtu: cfg.max_mtu.unwrap_or(MINIMUM_MAX_MTU),
        max_buffer_size: cfg
            .max_buffer_size
            .map_or(CONNECTX_MAX_BUFFER_SIZE, |b| b.0),
    };
    RxLayout::mlx5(&request).map_err(|e| {
        let on = format!("NIC `{nic}` ({}, MTU {mtu})", fmt_rate(speed));
        // A default size is no key's fault: the table's.
        if e.key == "buffer_size" && cfg.buffer_size.is_none() {
            return ModelError::new(
                at.clone(),
                format!(
                    "{on}: the default ConnectX buffers (130944 bytes each for buffers 0 and 1, as one ConnectX showed them): {}",
                    e.problem
                ),
            )
            .hint(format!("give buffer_size for this port; {}", e.hint));
        }
        let key = match e.index {
            Some(i) => at.key(e.key).index(i),
            None => at.key(e.key),
        };
        ModelError::new(key, format!("{on}: {}", e.problem)).hint(e.hint)
    })
}

/// The priorities a `[host.pfc]` NIC pauses: its PFC priorities, or all of
/// them with 802.3x; `None`: it names none, it takes its link peer's
/// (willing, see [`add_pause_obeying`]) and has no receive buffer of its
/// own. PFC and 802.3x on one port is an error: a NIC runs one or the
/// other, and Linux drivers refuse the pair (Intel ice and i40e
/// `*_set_pauseparam`, HiSilicon hns3 `hclge_set_pauseparam`: "Priority
/// flow control enabled. Cannot set link flow control.").
fn host_pause_prios(
    cfg: &crate::schema::qos::HostPfcCfg,
    at: &crate::diagnostic::KeyPath,
) -> Result<Option<u8>, ModelError> {
    let prios = prio_mask(&cfg.priorities, &at.key("priorities"))?;
    let buffer = [
        cfg.rx_rate.is_some(),
        cfg.rx_buffer.is_some(),
        cfg.xoff.is_some(),
        cfg.xon.is_some(),
        cfg.prio2buffer.is_some(),
        cfg.buffer_size.is_some(),
        cfg.cable_len.is_some(),
        cfg.max_mtu.is_some(),
        cfg.max_buffer_size.is_some(),
        cfg.stall_at.is_some(),
        cfg.stall_warning.is_some(),
        cfg.stall_error.is_some(),
        cfg.quanta.is_some(),
    ];
    match cfg.pause {
        PauseMode::Global if prios != 0 => Err(ModelError::new(
            at.key("pause"),
            format!(
                "802.3x PAUSE (pause = \"global\") and PFC on priorities {:?} on one port: a NIC runs one or the other",
                cfg.priorities
            ),
        )
        .hint("802.3x stops every priority: remove `priorities`; or remove `pause = \"global\"` for PFC on those priorities")),
        PauseMode::Global => Ok(Some(0xff)),
        PauseMode::Pfc if prios == 0 && buffer.contains(&true) => Err(ModelError::new(
            at.key("priorities"),
            "the NIC's receive buffer pauses the priorities PFC is enabled on, and it names none",
        )
        .hint("name the lossless priorities, e.g. priorities = [3], or pause = \"global\" for 802.3x")),
        PauseMode::Pfc if prios == 0 => Ok(None),
        PauseMode::Pfc => Ok(Some(prios)),
    }
}

/// Bit times for a port of speed `rate` (`name` for messages): the key's
/// value (`at`) if the scenario gives one, else `default`.
fn bits_at(
    key: &Option<PerSpeed<u64>>,
    at: crate::diagnostic::KeyPath,
    rate: Rate,
    name: &str,
    default: u64,
) -> Result<u64, ModelError> {
    let Some(v) = key else { return Ok(default) };
    let bits = v
        .at(rate)
        .ok_or_else(|| no_value_for(at.clone(), rate, name, v.speeds()))?;
    if bits > MAX_REACTION_BITS {
        return Err(ModelError::new(
            at,
            format!(
                "{bits} bit times at {} is longer than the longest pause (65535 quanta, {MAX_REACTION_BITS} bit times)",
                fmt_rate(rate)
            ),
        )
        .hint("IEEE 802.3 allows 394 quanta (201728 bit times) at 100G; 0 reacts at once"));
    }
    Ok(bits)
}

/// The longest reaction a key may give: the longest pause a frame can ask
/// for, 65535 quanta of 512 bit times.
const MAX_REACTION_BITS: u64 = 65_535 * 512;

/// The reaction delay of `port` from a table's two keys (`at` the table),
/// 0 for the HPCC reference (`reference`), else IEEE 802.3's per speed.
fn reaction(
    w: &World,
    port: u32,
    at: &crate::diagnostic::KeyPath,
    interface: &Option<PerSpeed<u64>>,
    response: &Option<PerSpeed<u64>>,
    reference: bool,
) -> Result<PauseRx, ModelError> {
    let p = &w.ports[port as usize];
    let rate = p.rate();
    let (di, dr) = match reference {
        true => (0, 0),
        false => (standard_interface_bits(rate), standard_response_bits(rate)),
    };
    let i = bits_at(
        interface,
        at.key("interface_delay_bits"),
        rate,
        p.name(),
        di,
    )?;
    let r = bits_at(response, at.key("response_time_bits"), rate, p.name(), dr)?;
    // What it obeys is set once every port's configuration is known
    // (`add_pause_obeying`); until then, everything.
    Ok(PauseRx::new(0xff, true, i, r, rate))
}

/// Every port's reaction delay: a received pause acts its interface delay
/// plus its response time after its last bit ([`PauseRx`]). Switch ports
/// take `[switch.mmu]`'s keys, NICs `[host.pfc]`'s; the defaults are IEEE
/// 802.3's per speed, 0 for the HPCC reference's switch preset and NIC
/// profile (it acts on a pause the moment it arrives).
pub(super) fn add_pause_delays(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    for (si, scfg) in sc.switches.iter().enumerate() {
        let at = switch_key(si).key("mmu");
        let (interface, response, reference) = match &scfg.mmu {
            Some(m) => (
                &m.interface_delay_bits,
                &m.response_time_bits,
                m.preset == Some(MmuPreset::HpccReference),
            ),
            None => (&None, &None, false),
        };
        for port in w.switches[si].ports().to_vec() {
            let rx = reaction(w, port, &at, interface, response, reference)?;
            w.ports[port as usize].pause_mut().set_rx(rx);
        }
    }
    for (hi, hcfg) in sc.hosts.iter().enumerate() {
        let at = host_key(hi).key("pfc");
        let (interface, response) = match &hcfg.pfc {
            Some(c) => (&c.interface_delay_bits, &c.response_time_bits),
            None => (&None, &None),
        };
        let reference = w.hosts[hi].profile.base == ProfileBase::Hpcc;
        for n in 0..w.hosts[hi].nics.len() {
            let port = w.hosts[hi].nics[n].port;
            let rx = reaction(w, port, &at, interface, response, reference)?;
            w.ports[port as usize].pause_mut().set_rx(rx);
        }
    }
    Ok(())
}

/// What each port offers its link peer (as DCBX would): PFC on some
/// priorities, or 802.3x (`true`); `None`: no flow control.
fn offered(w: &World, sc: &Scenario, port: u32) -> Option<(u8, bool)> {
    match w.ports[port as usize].owner() {
        Owner::Switch { sw, .. } => {
            let cfg = sc.switches[sw as usize].mmu.as_ref()?;
            match (w.switches[sw as usize].mmu().lossless_mask(), cfg.pause) {
                (0, _) => None,
                (_, PauseMode::Global) => Some((0, true)),
                (l, PauseMode::Pfc) => Some((l, false)),
            }
        }
        Owner::Host { host, .. } => {
            let cfg = sc.hosts[host as usize].pfc.as_ref()?;
            match cfg.pause {
                PauseMode::Global => Some((0, true)),
                PauseMode::Pfc if cfg.priorities.is_empty() => None, // willing itself
                PauseMode::Pfc => Some((w.ports[port as usize].pause().rx().pfc, false)),
            }
        }
    }
}

/// What every port obeys of the pauses it receives; the rest it counts and
/// ignores.
/// * A switch port: PFC on its lossless priorities, or 802.3x with
///   `pause = "global"`; nothing without `[switch.mmu]` lossless
///   priorities. The `hpcc_reference` preset obeys everything, as the
///   reference's qbb-net-device.cc does.
/// * A NIC with `[host.pfc]` `priorities`: those, or 802.3x with `pause =
///   "global"`.
/// * A NIC without: what its link peer offers. Its configuration is the
///   switch's through DCBX in willing mode, how NICs ship (Broadcom's
///   NetXtreme-E user guide, "DCBX – Data Center Bridging": the NIC
///   willing, the switch not, so that the switch's settings propagate;
///   lldptool-pfc(8): a willing end takes its peer's PFC TLV).
/// * The `hpcc` profile's NIC obeys everything, as the reference's.
pub(super) fn add_pause_obeying(w: &mut World, sc: &Scenario) -> Result<(), ModelError> {
    // Own configurations first: a willing NIC reads its peer's.
    let mut willing = vec![true; sc.hosts.len()];
    for (hi, hcfg) in sc.hosts.iter().enumerate() {
        let Some(cfg) = &hcfg.pfc else { continue };
        let Some(prios) = host_pause_prios(cfg, &host_key(hi).key("pfc"))? else {
            continue;
        };
        willing[hi] = false;
        let global = cfg.pause == PauseMode::Global;
        let pfc = if global { 0 } else { prios };
        for n in 0..w.hosts[hi].nics.len() {
            let port = w.hosts[hi].nics[n].port as usize;
            let rx = w.ports[port].pause().rx().obeying(pfc, global);
            w.ports[port].pause_mut().set_rx(rx);
        }
    }
    for (si, scfg) in sc.switches.iter().enumerate() {
        let reference = scfg
            .mmu
            .as_ref()
            .is_some_and(|m| m.preset == Some(MmuPreset::HpccReference));
        for port in w.switches[si].ports().to_vec() {
            let (pfc, global) = match reference {
                true => (0xff, true),
                false => offered(w, sc, port).unwrap_or((0, false)),
            };
            let rx = w.ports[port as usize].pause().rx().obeying(pfc, global);
            w.ports[port as usize].pause_mut().set_rx(rx);
        }
    }
    for (hi, _) in willing.iter().enumerate().filter(|(_, w)| **w) {
        let reference = w.hosts[hi].profile.base == ProfileBase::Hpcc;
        for n in 0..w.hosts[hi].nics.len() {
            let port = w.hosts[hi].nics[n].port;
            let (pfc, global) = match reference {
                true => (0xff, true),
                false => offered(w, sc, w.ports[port as usize].peer()).unwrap_or((0, false)),
            };
            let rx = w.ports[port as usize].pause().rx().obeying(pfc, global);
            w.ports[port as usize].pause_mut().set_rx(rx);
        }
    }
    Ok(())
}
