//! The mlx5 driver's layout of a ConnectX port's receive buffers
//! (drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c, the
//! host-owned algorithm `mlx5e_port_manual_buffer_config`): which buffer
//! each priority goes to, which buffers are lossless, and their XOFF and
//! XON thresholds from the cable length, the port speed and the MTU. See
//! [`super`] for how the NIC runs them.

use crate::time::Rate;

/// 802.1p priorities.
const PRIOS: usize = 8;

/// Network receive buffers per port (`MLX5E_MAX_NETWORK_BUFFER`,
/// port_buffer.h; two more are the NIC's internal ones).
pub const BUFFERS: usize = 8;
/// The unit of every buffer size and threshold (`MLX5E_BUFFER_CELL_SHIFT`
/// 7, port_buffer.h; newer NICs may report another `cap_cell_size` in the
/// SBCAM register, which is not modelled).
pub const CELL_BYTES: u64 = 128;
/// The driver's floor for the largest MTU a lossless buffer must hold
/// between its XOFF and XON thresholds (`MINIMUM_MAX_MTU`, port_buffer.c).
pub const MINIMUM_MAX_MTU: u32 = 9216;
/// The cable length the driver assumes until told (`MLX5E_DEFAULT_CABLE_LEN`,
/// port_buffer.h), in metres.
pub const DEFAULT_CABLE_LEN_M: u32 = 7;
/// The longest cable mlx5 accepts: lengths of 1000 m and more are ignored
/// (`MLX5E_MAX_CABLE_LENGTH` 1000, en_dcbnl.c `mlx5e_dcbnl_ieee_setpfc`).
pub const MAX_CABLE_LEN_M: u32 = 999;

/// The headroom (bytes above the XOFF threshold) the mlx5 driver keeps in a
/// lossless buffer: port_buffer.c `calculate_xoff`, in its integer
/// arithmetic, `(301 + 216 × cable_len / 100) × speed / 1000 + 272 × mtu /
/// 100`, with the speed in Mb/s and at least 40,000 (40G is also what the
/// driver uses when it cannot read the speed), `mtu` the netdev's (L3)
/// MTU. Commit 0696d60853d5 writes it
/// `(301 + 2.16 × len[m]) × speed[Gb/s] + 2.72 × MTU[B]`. The driver
/// computes in 32 bits; these 64 give the same result for every speed up
/// to 1.6 Tb/s.
///
/// 100 Gb/s, 7 m, MTU 1500: `(301 + 15) × 100 + 4080` = 35,680 bytes.
pub fn mlx5_xoff_bytes(cable_len_m: u32, speed: Rate, mtu: u32) -> u64 {
    let mbps = (speed.bps() / 1_000_000).max(40_000);
    (301 + 216 * u64::from(cable_len_m) / 100) * mbps / 1000 + 272 * u64::from(mtu) / 100
}

/// `bytes` rounded down to whole cells, as the driver writes sizes and
/// thresholds to the PBMC register (port_buffer.c `port_set_buffer`).
fn cells(bytes: u64) -> u64 {
    bytes / CELL_BYTES * CELL_BYTES
}

/// One receive buffer as the NIC runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BufferCfg {
    /// Bytes it holds before it drops.
    pub size: u64,
    /// XOFF when it holds this many bytes (0 on a lossy buffer).
    pub xoff: u64,
    /// XON when a paused buffer is down to this many (0 on a lossy one).
    pub xon: u64,
    /// The priorities mapped to it.
    pub prios: u8,
    /// The priorities it pauses at XOFF: its PFC-enabled ones. None: it
    /// is lossy.
    pub pauses: u8,
}

impl BufferCfg {
    pub fn lossless(&self) -> bool {
        self.pauses != 0
    }
}

/// What the mlx5 driver was told (`mlnx_qos`, `dcb buffer`, `dcb pfc`) and
/// read from the port, from which it lays out the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mlx5Request {
    /// Bytes per buffer (`--buffer_size`), before rounding to cells.
    pub buffer_size: [u64; BUFFERS],
    /// Priority → buffer (`--prio2buffer`).
    pub prio2buffer: [u8; PRIOS],
    /// The PFC-enabled priorities (`--pfc`); every one with 802.3x PAUSE
    /// (port_buffer.c `fill_pfc_en`).
    pub pfc_en: u8,
    /// Metres (`--cable_len`).
    pub cable_len_m: u32,
    /// The port's speed.
    pub speed: Rate,
    /// The netdev's MTU.
    pub mtu: u32,
    /// The netdev's `max_mtu`: the driver uses at least [`MINIMUM_MAX_MTU`].
    pub max_mtu: u32,
    /// What the buffers may take together (`mlnx_qos` prints it as
    /// `max_buffer_size`: the port buffer less the internal buffers).
    pub max_buffer_size: u64,
}

/// The driver's layout of the buffers, and what it was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mlx5Layout {
    pub request: Mlx5Request,
    /// [`mlx5_xoff_bytes`] for the request.
    pub xoff_bytes: u64,
    /// `max(max_mtu, 9216)`: XOFF − XON of a lossless buffer.
    pub max_mtu: u32,
}

/// A request the driver refuses: the key it comes from (`buffer_size`,
/// `prio2buffer`, `cable_len`), the index in it, what is wrong and what
/// would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError {
    pub key: &'static str,
    pub index: Option<usize>,
    pub problem: String,
    pub hint: String,
}

/// How a NIC's receive buffers are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxLayout {
    /// Buffer 0 only for the one-FIFO layout.
    pub buffers: [BufferCfg; BUFFERS],
    pub prio2buffer: [u8; PRIOS],
    /// The driver's layout; None: one FIFO with given thresholds.
    pub mlx5: Option<Mlx5Layout>,
}

impl RxLayout {
    /// Every priority in one buffer of `capacity` bytes that pauses the
    /// priorities of `pauses` at `xoff` bytes and resumes at `xon`.
    pub fn single(capacity: u64, xoff: u64, xon: u64, pauses: u8) -> RxLayout {
        let mut buffers = [BufferCfg::default(); BUFFERS];
        buffers[0] = BufferCfg {
            size: capacity,
            xoff,
            xon,
            prios: 0xff,
            pauses,
        };
        RxLayout {
            buffers,
            prio2buffer: [0; PRIOS],
            mlx5: None,
        }
    }

    /// The mlx5 driver's host-owned layout (port_buffer.c
    /// `mlx5e_port_manual_buffer_config` with `update_buffer_lossy` and
    /// `update_xoff_threshold`), refusing what the driver refuses.
    pub fn mlx5(r: &Mlx5Request) -> Result<RxLayout, LayoutError> {
        if let Some(p) = r
            .prio2buffer
            .iter()
            .position(|&b| usize::from(b) >= BUFFERS)
        {
            return Err(LayoutError {
                key: "prio2buffer",
                index: Some(p),
                problem: format!(
                    "priority {p} maps to buffer {}, and a port has buffers 0..=7",
                    r.prio2buffer[p]
                ),
                hint: "one buffer index 0..=7 per priority, as mlnx_qos --prio2buffer takes them"
                    .into(),
            });
        }
        if !(1..=MAX_CABLE_LEN_M).contains(&r.cable_len_m) {
            return Err(LayoutError {
                key: "cable_len",
                index: None,
                problem: format!(
                    "{} m: mlx5 takes 1 to {MAX_CABLE_LEN_M} m (it ignores 0 and 1000 or more)",
                    r.cable_len_m
                ),
                hint: format!("the driver assumes {DEFAULT_CABLE_LEN_M} m until told"),
            });
        }
        let total: u64 = r.buffer_size.iter().sum();
        if total > r.max_buffer_size {
            return Err(LayoutError {
                key: "buffer_size",
                index: None,
                problem: format!(
                    "the buffers take {total} bytes together, more than the port's {} (max_buffer_size): the driver refuses it (-EINVAL)",
                    r.max_buffer_size
                ),
                hint: "shrink a lossy buffer to make room, or raise max_buffer_size for a NIC with more".into(),
            });
        }
        let xoff = mlx5_xoff_bytes(r.cable_len_m, r.speed, r.mtu);
        let max_mtu = r.max_mtu.max(MINIMUM_MAX_MTU);
        let need = xoff + u64::from(max_mtu) + CELL_BYTES;
        let mut buffers = [BufferCfg::default(); BUFFERS];
        for (i, b) in buffers.iter_mut().enumerate() {
            for p in 0..PRIOS {
                if usize::from(r.prio2buffer[p]) == i {
                    b.prios |= 1 << p;
                }
            }
            b.pauses = b.prios & r.pfc_en;
            let size = r.buffer_size[i];
            b.size = cells(size);
            if !b.lossless() {
                continue; // lossy: xon = xoff = 0
            }
            let prios = list(b.pauses);
            if size == 0 {
                return Err(LayoutError {
                    key: "buffer_size",
                    index: Some(i),
                    problem: format!(
                        "buffer {i} holds PFC priorities {prios} (lossless) and has 0 bytes: the driver refuses a lossless buffer of size 0 (-EINVAL)"
                    ),
                    hint: format!(
                        "give it at least {need} bytes, or map those priorities to another buffer"
                    ),
                });
            }
            if size < need {
                return Err(LayoutError {
                    key: "buffer_size",
                    index: Some(i),
                    problem: format!(
                        "buffer {i} ({size} bytes) holds PFC priorities {prios} and is not enough for a lossless buffer: \
                         the mlx5 driver wants xoff {xoff} + max_mtu {max_mtu} + one {CELL_BYTES}-byte cell = {need} bytes \
                         (port_buffer.c update_xoff_threshold, -ENOMEM)"
                    ),
                    hint: format!(
                        "xoff = (301 + 2.16 x {} m) x {} Gb/s + 2.72 x MTU {}: raise buffer_size[{i}] to {need} or more, or shorten cable_len",
                        r.cable_len_m,
                        (r.speed.bps() / 1_000_000).max(40_000) / 1000,
                        r.mtu
                    ),
                });
            }
            b.xoff = cells(size - xoff);
            b.xon = cells(size - xoff - u64::from(max_mtu));
        }
        Ok(RxLayout {
            buffers,
            prio2buffer: r.prio2buffer,
            mlx5: Some(Mlx5Layout {
                request: *r,
                xoff_bytes: xoff,
                max_mtu,
            }),
        })
    }

    /// The buffer priority `prio` goes to.
    #[inline]
    pub fn buffer_of(&self, prio: u8) -> usize {
        usize::from(self.prio2buffer[usize::from(prio & 7)])
    }
}

/// The priorities of `mask` as `[3]` or `[3, 4]`.
fn list(mask: u8) -> String {
    let v: Vec<u8> = (0..8).filter(|p| mask & 1 << p != 0).collect();
    format!("{v:?}")
}

/// The request `mlnx_qos` makes of a 100G port by default: buffers 0
/// and 1 of 130,944 bytes, priority 3 (PFC) in buffer 1.
#[cfg(test)]
pub(super) fn observed() -> Mlx5Request {
    Mlx5Request {
        buffer_size: [130_944, 130_944, 0, 0, 0, 0, 0, 0],
        prio2buffer: [0, 0, 0, 1, 0, 0, 0, 0],
        pfc_en: 1 << 3,
        cable_len_m: 7,
        speed: Rate::gbps(100),
        mtu: 1500,
        max_mtu: 9216,
        max_buffer_size: 262_016,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoff_is_the_drivers_integer_formula() {
        // (301 + 216 × 7 / 100) = 301 + 15 (1512 / 100 truncated) = 316;
        // × 100,000 Mb/s / 1000 = 31,600; + 272 × 1500 / 100 = 4,080.
        assert_eq!(mlx5_xoff_bytes(7, Rate::gbps(100), 1500), 35_680);
        // 100 m: 301 + 216 = 517 → 51,700 + 4,080 (lossless-facts §1.5).
        assert_eq!(mlx5_xoff_bytes(100, Rate::gbps(100), 1500), 55_780);
        // 4200-byte MTU, 5 m: 301 + 10 = 311 → 31,100 + 11,424 = 42,524.
        assert_eq!(mlx5_xoff_bytes(5, Rate::gbps(100), 4200), 42_524);
        // 25G counts as 40G: 316 × 40 + 4,080 = 16,720.
        assert_eq!(mlx5_xoff_bytes(7, Rate::gbps(25), 1500), 16_720);
        // 400G, 999 m: 216 × 999 / 100 = 2157 → 2458 × 400 = 983,200,
        // + 272 × 9000 / 100 = 24,480.
        assert_eq!(mlx5_xoff_bytes(999, Rate::gbps(400), 9000), 1_007_680);
    }

    #[test]
    fn the_facts_files_worked_example() {
        // Size 130,944 (1023 cells), 7 m, 100G, MTU 1500: xoff 35,680;
        // the driver's XOFF threshold 130,944 − 35,680 = 95,264 and XON
        // 95,264 − 9,216 = 86,048, written to the register in whole
        // cells: 744 (95,232 B) and 672 (86,016 B).
        let l = RxLayout::mlx5(&observed()).unwrap();
        let m = l.mlx5.unwrap();
        assert_eq!((m.xoff_bytes, m.max_mtu), (35_680, 9216));
        let b1 = l.buffers[1];
        assert_eq!(
            (b1.size, b1.xoff, b1.xon, b1.prios, b1.pauses),
            (130_944, 95_232, 86_016, 1 << 3, 1 << 3)
        );
        // Buffer 0 holds the other seven priorities and is lossy.
        let b0 = l.buffers[0];
        assert_eq!((b0.size, b0.xoff, b0.xon, b0.prios), (130_944, 0, 0, 0xf7));
        assert!(!b0.lossless() && b1.lossless());
        // A netdev max_mtu of 9978: XON 95,264 − 9,978 = 85,286 → 666
        // cells, 85,248 B.
        let l = RxLayout::mlx5(&Mlx5Request {
            max_mtu: 9978,
            ..observed()
        })
        .unwrap();
        assert_eq!(l.buffers[1].xon, 85_248);
        // A smaller max_mtu is raised to the driver's 9216.
        let l = RxLayout::mlx5(&Mlx5Request {
            max_mtu: 1500,
            ..observed()
        })
        .unwrap();
        assert_eq!(l.buffers[1].xon, 86_016);
    }

    #[test]
    fn sizes_round_down_to_cells_after_the_check() {
        // 30,000 → 234 cells, 29,952 B (community DOC-2933's example), on
        // a lossy buffer.
        let mut r = observed();
        r.buffer_size[2] = 30_000;
        r.buffer_size[0] = 100_000;
        let l = RxLayout::mlx5(&r).unwrap();
        assert_eq!(l.buffers[2].size, 29_952);
        assert_eq!(l.buffers[0].size, 99_968);
        // A lossless 100,000: the check is on the bytes asked for; the
        // thresholds from them, each rounded down: 64,320 → 502 cells
        // (64,256), 55,104 → 430 cells (55,040).
        let mut r = observed();
        r.buffer_size = [100_000, 100_000, 0, 0, 0, 0, 0, 0];
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        assert_eq!((b.size, b.xoff, b.xon), (99_968, 64_256, 55_040));
    }

    #[test]
    fn the_driver_refuses_a_lossless_buffer_below_xoff_max_mtu_and_a_cell() {
        // 35,680 + 9,216 + 128 = 45,024 bytes is the least.
        let mut r = observed();
        r.buffer_size[1] = 45_024;
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        // 9,344 − 0 → 73 cells; XON 128 → one cell.
        assert_eq!((b.xoff, b.xon), (9_344, 128));
        r.buffer_size[1] = 45_023;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert_eq!((e.key, e.index), ("buffer_size", Some(1)));
        assert!(e.problem.contains("45024 bytes"), "{}", e.problem);
        assert!(e.problem.contains("update_xoff_threshold"));
        // The same buffer lossy (no PFC priority in it) is fine.
        r.pfc_en = 0;
        let l = RxLayout::mlx5(&r).unwrap();
        assert!(!l.buffers[1].lossless());
        // A lossless buffer of 0 bytes.
        let mut r = observed();
        r.buffer_size[1] = 0;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert!(e.problem.contains("size 0"), "{}", e.problem);
        // 400G: 316 × 400 + 4,080 = 130,480 of headroom: the observed
        // 130,944 cannot hold it and a 9216-byte frame.
        let r = Mlx5Request {
            speed: Rate::gbps(400),
            ..observed()
        };
        assert!(RxLayout::mlx5(&r).unwrap_err().problem.contains("139824"));
    }

    #[test]
    fn bad_indexes_lengths_and_totals() {
        let mut r = observed();
        r.prio2buffer[5] = 8;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert_eq!((e.key, e.index), ("prio2buffer", Some(5)));
        for len in [0, 1000] {
            let r = Mlx5Request {
                cable_len_m: len,
                ..observed()
            };
            assert_eq!(RxLayout::mlx5(&r).unwrap_err().key, "cable_len");
        }
        // 999 m at 100G: (301 + 2157) × 100 + 4,080 = 249,880 bytes of
        // headroom, which the whole port (262,016) can give one buffer.
        let r = Mlx5Request {
            cable_len_m: 999,
            buffer_size: [0, 262_016, 0, 0, 0, 0, 0, 0],
            ..observed()
        };
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        assert_eq!(b.xoff, cells(262_016 - 249_880));
        let mut r = observed();
        r.buffer_size[2] = 129;
        let e = RxLayout::mlx5(&r).unwrap_err();
        assert_eq!((e.key, e.index), ("buffer_size", None));
        assert!(e.problem.contains("262017"), "{}", e.problem);
    }

    #[test]
    fn every_pfc_priority_makes_its_buffer_lossless() {
        // 802.3x PAUSE: pfc_en 0xff, every buffer with a priority is
        // lossless; buffer 1, with none mapped, stays lossy.
        let r = Mlx5Request {
            prio2buffer: [0; 8],
            pfc_en: 0xff,
            ..observed()
        };
        let l = RxLayout::mlx5(&r).unwrap();
        assert_eq!(l.buffers[0].pauses, 0xff);
        assert!(!l.buffers[1].lossless());
        // Priorities 3 and 4 in buffer 1, PFC on 3 only: lossless, pauses 3.
        let mut r = observed();
        r.prio2buffer[4] = 1;
        let b = RxLayout::mlx5(&r).unwrap().buffers[1];
        assert_eq!((b.prios, b.pauses), (0x18, 0x08));
    }
}
