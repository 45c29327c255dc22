//! Tests of `rocesim_model::world::nic_rx` on worlds built from scenarios:
//! which NICs get ConnectX receive buffers, laid out from which keys, and
//! how a bad layout is reported.

use std::path::Path;

use rocesim_model::world::World;
use rocesim_model::world::nic_rx::RxLayout;

use crate::{BuildOptions, build_world};

/// Host `r` (profile and `[host.pfc]` keys `pfc`, NIC MTU `mtu`) on a
/// `rate` link to host `a`.
fn text(pfc: &str, rate: &str, mtu: u32) -> String {
    format!(
        "name = \"nic_buffers\"\n\
         [[host]]\nname = \"r\"\n{pfc}\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.1/24\"\n  mtu = {mtu}\n\
         [[host]]\nname = \"a\"\n  [[host.nic]]\n  name = \"eth0\"\n  ip = \"10.0.0.2/24\"\n\
         [[link]]\na = \"r.eth0\"\nb = \"a.eth0\"\nrate = \"{rate}\"\ndelay = \"1us\"\n\
         [[workload]]\ntool = \"ib_write_bw\"\nclient = \"a\"\nserver = \"r\"\n"
    )
}

fn build(pfc: &str, rate: &str, mtu: u32) -> Result<World, String> {
    let loaded = crate::load::load_str(Path::new("nb.toml"), text(pfc, rate, mtu), &[])
        .map_err(|e| e.to_string())?;
    build_world(&loaded.scenario, &BuildOptions { tap_dir: None })
        .map_err(|e| format!("{}: {} ({})", e.path, e.msg, e.hint.unwrap_or_default()))
}

fn layout(w: &World) -> RxLayout {
    *w.nic_rx_layouts()[0].1
}

/// A ConnectX NIC with PFC on 3 and no buffer keys: the layout mlnx_qos
/// showed (two buffers of 130,944 bytes, priority 3 in buffer 1) with the
/// driver's thresholds at 100G, 7 m, MTU 1500: XOFF at 95,232, XON at
/// 86,016 (lossless-facts §4's example, in whole cells).
#[test]
fn a_connectx_nic_gets_the_observed_layout() {
    let w = build("  [host.pfc]\n  priorities = [3]\n", "100Gbps", 1500).unwrap();
    let l = layout(&w);
    assert_eq!(l.prio2buffer, [0, 0, 0, 1, 0, 0, 0, 0]);
    let b = l.buffers[1];
    assert_eq!(
        (b.size, b.xoff, b.xon, b.pauses),
        (130_944, 95_232, 86_016, 8)
    );
    assert_eq!(l.buffers[0].size, 130_944);
    assert!(!l.buffers[0].lossless());
    assert_eq!(l.mlx5.unwrap().xoff_bytes, 35_680);
    // MTU 9000 at 25G (counted as 40G): 316 × 40 + 272 × 90 = 12,640 +
    // 24,480 = 37,120; XOFF at 93,824 (733 cells), XON 84,608 (661).
    let w = build("  [host.pfc]\n  priorities = [3]\n", "25Gbps", 9000).unwrap();
    let b = layout(&w).buffers[1];
    assert_eq!((b.xoff, b.xon), (93_824, 84_608));
}

/// The keys: sizes in any unit, prio2buffer, cable_len; a buffer is
/// lossless when a PFC priority maps to it.
#[test]
fn the_keys_lay_out_the_buffers() {
    let keys = |b2: u32| {
        format!(
            "  [host.pfc]\n  priorities = [3, 4]\n  buffer_size = [\"32KB\", 150000, {b2}]\n  \
             prio2buffer = [0, 0, 0, 1, 2, 0, 0, 0]\n  cable_len = 100\n"
        )
    };
    let w = build(&keys(70_000), "100Gbps", 1500).unwrap();
    let l = layout(&w);
    // 100 m: (301 + 216) × 100 + 4,080 = 55,780 bytes of headroom.
    assert_eq!(l.mlx5.unwrap().xoff_bytes, 55_780);
    // "32KB" = 32,000 = 250 cells, lossy.
    assert_eq!((l.buffers[0].size, l.buffers[0].xoff), (32_000, 0));
    // 150,000 → 1171 cells (149,888); XOFF 94,220 → 736 cells (94,208);
    // XON 85,004 → 664 cells (84,992).
    let b1 = l.buffers[1];
    assert_eq!(
        (b1.size, b1.xoff, b1.xon, b1.pauses),
        (149_888, 94_208, 84_992, 1 << 3)
    );
    // 70,000 → 546 cells (69,888); XOFF 14,220 → 111 cells (14,208);
    // XON 5,004 → 39 cells (4,992).
    let b2 = l.buffers[2];
    assert_eq!(
        (b2.size, b2.xoff, b2.xon, b2.pauses),
        (69_888, 14_208, 4_992, 1 << 4)
    );
    // 40,000 is below 55,780 + 9,216 + 128 = 65,124.
    let e = build(&keys(40_000), "100Gbps", 1500).err().unwrap();
    assert!(e.starts_with("host[0].pfc.buffer_size[2]: "), "{e}");
    assert!(e.contains("wants xoff 55780 + max_mtu 9216"), "{e}");
}

#[test]
fn rxe_keeps_one_fifo_and_connectx_keys_choose_the_buffers() {
    let w = build(
        "profile = \"rxe\"\n  [host.pfc]\n  priorities = [3]\n",
        "100Gbps",
        1500,
    )
    .unwrap();
    let l = layout(&w);
    assert!(l.mlx5.is_none());
    assert_eq!(
        (l.buffers[0].size, l.buffers[0].xoff, l.buffers[0].xon),
        (262_144, 131_072, 65_536)
    );
    // rx_buffer on a ConnectX: one FIFO, as before the buffers existed.
    let w = build(
        "  [host.pfc]\n  priorities = [3]\n  rx_buffer = \"160KB\"\n",
        "100Gbps",
        1500,
    )
    .unwrap();
    assert!(layout(&w).mlx5.is_none());
    // cable_len on rxe: the ConnectX buffers.
    let w = build(
        "profile = \"rxe\"\n  [host.pfc]\n  priorities = [3]\n  cable_len = 20\n",
        "100Gbps",
        1500,
    )
    .unwrap();
    assert_eq!(layout(&w).mlx5.unwrap().xoff_bytes, (301 + 43) * 100 + 4080);
}

#[test]
fn bad_layouts_name_their_key() {
    let cases = [
        (
            "  [host.pfc]\n  priorities = [3]\n  rx_buffer = \"64KB\"\n  cable_len = 7\n",
            "host[0].pfc.cable_len: `cable_len` lays out ConnectX receive buffers and `rx_buffer` one receive FIFO",
        ),
        (
            "  [host.pfc]\n  priorities = [3]\n  prio2buffer = [0, 0, 0, 9, 0, 0, 0, 0]\n",
            "host[0].pfc.prio2buffer[3]: NIC `r.eth0` (100Gbps, MTU 1500): priority 3 maps to buffer 9",
        ),
        (
            "  [host.pfc]\n  priorities = [3]\n  prio2buffer = [0, 1]\n",
            "host[0].pfc.prio2buffer: 2 values",
        ),
        (
            "  [host.pfc]\n  priorities = [3]\n  buffer_size = [100000, 45000]\n",
            "host[0].pfc.buffer_size[1]: NIC `r.eth0` (100Gbps, MTU 1500): buffer 1 (45000 bytes) holds PFC priorities [3] \
             and is not enough for a lossless buffer: the mlx5 driver wants xoff 35680 + max_mtu 9216 + one 128-byte cell = 45024 bytes",
        ),
        (
            "  [host.pfc]\n  priorities = [3]\n  cable_len = 1000\n",
            "host[0].pfc.cable_len: NIC `r.eth0` (100Gbps, MTU 1500): 1000 m: mlx5 takes 1 to 999 m",
        ),
        (
            "  [host.pfc]\n  priorities = [3]\n  buffer_size = [200000, 100000]\n",
            "host[0].pfc.buffer_size: NIC `r.eth0` (100Gbps, MTU 1500): the buffers take 300000 bytes together, more than the port's 262016",
        ),
        (
            "  [host.pfc]\n  cable_len = 7\n",
            "host[0].pfc.priorities: the NIC's receive buffer pauses the priorities PFC is enabled on, and it names none",
        ),
    ];
    for (keys, says) in cases {
        let Err(e) = build(keys, "100Gbps", 1500) else {
            panic!("built: {keys}");
        };
        assert!(e.contains(says), "{keys}\n{e}");
    }
    // At 400G the observed default cannot hold the driver's headroom:
    // 316 × 400 + 4,080 = 130,480 + 9,216 + 128 > 130,944. The table is
    // at fault, and buffer_size the fix.
    let Err(e) = build("  [host.pfc]\n  priorities = [3]\n", "400Gbps", 1500) else {
        panic!("built at 400G");
    };
    assert!(
        e.starts_with(
            "host[0].pfc: NIC `r.eth0` (400Gbps, MTU 1500): the default ConnectX buffers"
        ),
        "{e}"
    );
    assert!(
        e.contains("139824 bytes") && e.contains("give buffer_size"),
        "{e}"
    );
}
