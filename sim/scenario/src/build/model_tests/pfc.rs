//! Tests of `rocesim_model::world::pfc` on worlds built from scenarios:
//! when a received pause takes effect, which pauses a port obeys.

use std::path::Path;

use roce_codec::wire::mac_control::MacControlRepr;
use rocesim_model::packet::Packet;
use rocesim_model::time::Ps;
use rocesim_model::world::World;

use crate::{BuildOptions, build_world};

/// Host `a` behind switch `sw1` (port `pa`) and host `b` (port `pb`),
/// links of `rate` and 1 us; priority 3 lossless; `a_keys` more keys of
/// host `a`, `mmu` more keys of `[switch.mmu]`. Its one workload starts
/// after the tests are done: the ports carry only the pauses they inject.
fn world(rate: &str, a_keys: &str, mmu: &str) -> World {
    let text = format!(
        "name = \"pfc_delay\"\n\
         [[host]]\nname = \"a\"\n{a_keys}\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n\
         [[host]]\nname = \"b\"\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.2/24\"\n\
         [[switch]]\nname = \"sw1\"\n  [switch.mmu]\n  lossless = [3]\n  headroom = \"auto\"\n{mmu}\n\
         [[link]]\na = \"a.eth0\"\nb = \"sw1.pa\"\nrate = \"{rate}\"\ndelay = \"1us\"\n\
         [[link]]\na = \"b.eth0\"\nb = \"sw1.pb\"\nrate = \"{rate}\"\ndelay = \"1us\"\n\
         [[workload]]\ntool = \"ib_write_bw\"\nclient = \"a\"\nserver = \"b\"\nstart = \"1s\"\n"
    );
    let loaded = crate::load::load_str(Path::new("pfc_delay.toml"), text, &[]).expect("loads");
    build_world(&loaded.scenario, &BuildOptions { tap_dir: None }).expect("builds")
}

fn port(w: &World, name: &str) -> u32 {
    w.ports
        .iter()
        .position(|p| p.name() == name)
        .expect("a port") as u32
}

/// A PFC frame for priority 3 (time `quanta`) or an 802.3x PAUSE whose
/// last bit reaches `port` at `at`.
fn pause_arrives(w: &mut World, port: u32, at: Ps, m: MacControlRepr) {
    let id = w.pool.alloc(Packet::mac_control([2, 0x5e, 0, 0, 0, 1], m));
    w.sched.arrive(at, port, id);
}

fn pfc3(quanta: u16) -> MacControlRepr {
    let mut times = [0u16; 8];
    times[3] = quanta;
    MacControlRepr::Pfc {
        enable_vector: 1 << 3,
        times,
    }
}

/// Runs every event up to and including `until`.
fn run_to(w: &mut World, until: Ps) {
    while let Some((_, ev)) = w.sched.pop_until(until) {
        w.step(ev, false);
    }
}

fn counter(w: &World, port: u32, name: &str) -> u64 {
    let mut v = None;
    w.ports[port as usize]
        .pause()
        .counters(w.now())
        .each(|n, x| {
            if n == name {
                v = Some(x);
            }
        });
    v.unwrap_or_else(|| panic!("no counter {name}"))
}

/// At 100 Gb/s a bit time is 10 ps. A ConnectX NIC's defaults: IEEE
/// 802.3's interface delay at 100G, 122,880 bit times, plus the Annex
/// 31B.3.7 pause reaction, 394 quanta × 512 = 201,728: 324,608 bit times,
/// 3,246,080 ps after the PFC frame's last bit. The XON takes as long, so
/// the port is paused for exactly the time between the two frames.
#[test]
fn a_pause_takes_effect_interface_plus_response_bit_times_after_its_last_bit() {
    let mut w = world("100Gbps", "", "");
    let a = port(&w, "a.eth0");
    let rx = *w.ports[a as usize].pause().rx();
    assert_eq!((rx.interface_bits, rx.response_bits), (122_880, 201_728));
    assert_eq!(rx.delay, Ps(3_246_080));
    let t0 = Ps::from_us(10);
    pause_arrives(&mut w, a, t0, pfc3(65535));
    run_to(&mut w, Ps(t0.0 + 3_246_079));
    assert_eq!(
        w.ports[a as usize].paused(),
        0,
        "not yet: the MAC is still reacting"
    );
    assert_eq!(counter(&w, a, "rx_prio3_pause"), 1, "counted on arrival");
    assert_eq!(counter(&w, a, "rx_prio3_pause_transition"), 0);
    run_to(&mut w, Ps(t0.0 + 3_246_080));
    assert_eq!(w.ports[a as usize].paused(), 1 << 3, "stopped exactly then");
    assert_eq!(counter(&w, a, "rx_prio3_pause_transition"), 1);
    // An XON 20 us later resumes 3,246,080 ps after its own last bit.
    let t1 = Ps::from_us(30);
    pause_arrives(&mut w, a, t1, pfc3(0));
    run_to(&mut w, Ps(t1.0 + 3_246_079));
    assert_eq!(w.ports[a as usize].paused(), 1 << 3);
    run_to(&mut w, Ps(t1.0 + 3_246_080));
    assert_eq!(w.ports[a as usize].paused(), 0);
    assert_eq!(counter(&w, a, "rx_prio3_pause"), 2);
    assert_eq!(
        counter(&w, a, "rx_prio3_pause_duration"),
        20,
        "us, effect to effect"
    );
}

/// An unrefreshed XOFF runs its quanta from its effect, not its arrival:
/// 1000 quanta at 100G are 512,000 bit times, 5,120,000 ps.
#[test]
fn the_pause_timer_starts_when_the_pause_takes_effect() {
    let mut w = world("100Gbps", "", "");
    let a = port(&w, "a.eth0");
    let t0 = Ps::from_us(10);
    pause_arrives(&mut w, a, t0, pfc3(1000));
    let end = t0.0 + 3_246_080 + 5_120_000;
    run_to(&mut w, Ps(end - 1));
    assert_eq!(w.ports[a as usize].paused(), 1 << 3);
    run_to(&mut w, Ps(end));
    assert_eq!(w.ports[a as usize].paused(), 0);
}

/// At 25 Gb/s (40 ps a bit): 6,144 + 80 × 512 = 47,104 bit times,
/// 1,884,160 ps. The switch port reacts as its own keys say: 1000 + 2000
/// bit times at 25G are 120,000 ps.
#[test]
fn the_delay_follows_the_port_speed_and_its_keys() {
    let mut w = world(
        "25Gbps",
        "",
        "  interface_delay_bits = 1000\n  response_time_bits = { \"25Gbps\" = 2000 }\n",
    );
    let a = port(&w, "a.eth0");
    assert_eq!(w.ports[a as usize].pause().rx().delay, Ps(1_884_160));
    let pa = port(&w, "sw1.pa");
    assert_eq!(w.ports[pa as usize].pause().rx().delay, Ps(120_000));
    let t0 = Ps::from_us(5);
    pause_arrives(&mut w, pa, t0, pfc3(65535));
    run_to(&mut w, Ps(t0.0 + 119_999));
    assert_eq!(w.ports[pa as usize].paused(), 0);
    run_to(&mut w, Ps(t0.0 + 120_000));
    assert_eq!(w.ports[pa as usize].paused(), 1 << 3);
}

/// The HPCC reference's NIC acts on a pause the moment it arrives.
#[test]
fn the_reference_profile_reacts_at_once() {
    let mut w = world("100Gbps", "profile = \"hpcc\"\n", "");
    let a = port(&w, "a.eth0");
    assert_eq!(w.ports[a as usize].pause().rx().delay, Ps::ZERO);
    let t0 = Ps::from_us(10);
    pause_arrives(&mut w, a, t0, pfc3(65535));
    run_to(&mut w, t0);
    assert_eq!(w.ports[a as usize].paused(), 1 << 3);
}

/// A NIC without `[host.pfc]` takes its switch's PFC priorities (DCBX,
/// willing): priority 3. A PFC frame for priority 4, or an 802.3x PAUSE,
/// is counted and ignored; one whose vector names 3 and 4 stops 3 only.
#[test]
fn pauses_for_priorities_without_pfc_are_counted_not_obeyed() {
    let mut w = world("100Gbps", "", "");
    let a = port(&w, "a.eth0");
    let rx = *w.ports[a as usize].pause().rx();
    assert_eq!((rx.pfc, rx.global), (1 << 3, false));
    let mut times = [0u16; 8];
    times[4] = 65535;
    let pfc4 = MacControlRepr::Pfc {
        enable_vector: 1 << 4,
        times,
    };
    pause_arrives(&mut w, a, Ps::from_us(1), pfc4);
    pause_arrives(
        &mut w,
        a,
        Ps::from_us(2),
        MacControlRepr::Pause { time: 65535 },
    );
    run_to(&mut w, Ps::from_us(10));
    assert_eq!(w.ports[a as usize].paused(), 0);
    assert_eq!(counter(&w, a, "rx_prio4_pause"), 1);
    assert_eq!(counter(&w, a, "rx_prio4_pause_transition"), 0);
    assert_eq!(counter(&w, a, "rx_global_pause"), 1);
    assert_eq!(counter(&w, a, "rx_global_pause_transition"), 0);
    times[3] = 65535;
    let both = MacControlRepr::Pfc {
        enable_vector: 1 << 3 | 1 << 4,
        times,
    };
    pause_arrives(&mut w, a, Ps::from_us(20), both);
    run_to(&mut w, Ps::from_us(30));
    assert_eq!(w.ports[a as usize].paused(), 1 << 3);
    assert_eq!(counter(&w, a, "rx_prio4_pause"), 2);
}

/// `headroom = "auto"`: each port's need. At 100G over 1 us with
/// 1500-byte MTUs and the NICs' 802.3 delays: two frames of 1500 + 18 +
/// 20 = 1,538 wire bytes, the PFC frame's 672 bits, 2 × 1 us = 200,000
/// bits, 122,880 + 201,728 bits of reaction: 3,076 B + 525,280 bits /
/// 8 = 3,076 + 65,660 = 68,736 B.
#[test]
fn auto_headroom_is_each_ports_need() {
    let w = world("100Gbps", "", "");
    let sw = w.switches().next().expect("a switch");
    let rows = sw.headroom();
    assert_eq!(rows.len(), 2);
    for h in rows {
        assert_eq!((h.configured_bytes, h.needed_bytes()), (68_736, 68_736));
        assert_eq!(h.lossless, 1 << 3);
    }
}
