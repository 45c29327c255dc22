//! `sysfs/<host>/`: each simulated host's counters laid out as Linux's
//! sysfs lays out a real host's, so that a script or an exporter written
//! for real NICs reads a simulated host unchanged
//! (`node_exporter --path.sysfs runs/X/sysfs/hostA`).
//!
//! ```text
//!  sysfs/hostA/class/infiniband/mlx5_bond_0/          one RDMA device per NIC or bond (see super::devices)
//!      fw_ver hca_type board_id hw_rev node_type node_guid sys_image_guid node_desc
//!      ports/1/state phys_state rate link_layer lid sm_lid sm_sl lid_mask_count
//!      ports/1/counters/port_xmit_data ...           IB PMA counters (data in 4-byte words)
//!      ports/1/hw_counters/out_of_sequence ...       mlx5 hardware counters
//!  sysfs/hostA/class/net/eth0/                        every netdev: NICs and bonds
//!      address addr_len broadcast carrier duplex flags ifindex iflink mtu operstate speed tx_queue_len type
//!      statistics/rx_bytes rx_packets rx_dropped tx_bytes tx_packets tx_dropped
//!  sysfs/hostA/class/net/bond0/bonding/mode slaves xmit_hash_policy
//! ```
//!
//! Every file is one value and a newline, as the kernel's `sysfs_emit`
//! writes it. The formats are the kernel's:
//!
//! * `drivers/infiniband/core/sysfs.c` (torvalds/linux): `state` is
//!   `"%d: %s"` (`4: ACTIVE`, `1: DOWN`), `phys_state` `"%u: %s"`
//!   (`5: LinkUp`, `3: Disabled`), `rate` `"%d%s Gb/sec (%dX%s)"`
//!   (`100 Gb/sec (4X EDR)`), `node_type` `1: CA`, GUIDs as four groups of
//!   four hex digits, the PMA counters (`pma_attrs_ext`) and
//!   `hw_counters/` as `"%llu"`, with the core's `lifespan` file (`10`,
//!   the milliseconds a read is cached) among the driver's counters. The counters are 64-bit here, as on any
//!   device with extended PMA counters; `port_xmit_data` and
//!   `port_rcv_data` count 4-byte words.
//! * `drivers/infiniband/hw/mlx5/main.c`: `hca_type` `"MT%d"`, `fw_ver`
//!   `"%d.%d.%04d"`, `board_id`; the port state of a RoCE port is ACTIVE
//!   and LinkUp when its netdev (a LAG's bond) is running with carrier,
//!   else DOWN and Disabled (`mlx5_query_port_roce`); the rate comes from
//!   the Ethernet speed (`translate_eth_legacy_proto_oper`: 25G is 1X
//!   EDR, 100G 4X EDR, 200G 4X HDR, 400G 4X NDR, ...).
//! * `net/core/net-sysfs.c`: `speed` in Mb/s, `-1` without carrier
//!   (`SPEED_UNKNOWN`), `duplex` `unknown` then; `flags` `"%#x"`;
//!   `statistics/*` `"%llu"`. `drivers/net/bonding/bond_sysfs.c`:
//!   `mode` and `xmit_hash_policy` as `"%s %d"` (`802.3ad 4`,
//!   `layer3+4 1`), `slaves` space-separated.
//! * What readers need, from prometheus/procfs `sysfs/class_infiniband.go`
//!   (node_exporter's infiniband collector): `fw_ver` (required), then
//!   `board_id`, `hca_type` and `node_guid` if present, and for every
//!   port `state`, `phys_state` and `rate` (all required, parsed as
//!   above; newer versions also require `link_layer`), a `counters/`
//!   directory (every file an integer) and `hw_counters/` (older versions
//!   read it only for `mlx5_*` devices, newer ones wherever it exists,
//!   `lifespan` included). Both directories are always written, even
//!   empty.
//!
//! Simulated values: the counters (from `summary.json`'s `counters`: a
//! counter the model adds there appears here, a counter it does not
//! produce is absent rather than a made-up zero), port `state` and
//! `phys_state`, `rate`, and in `class/net` `address`, `carrier`,
//! `operstate`, `speed`, `duplex`, `mtu`, the `statistics/` and the bond's
//! `bonding/` files, all as the run left them at its end. Fixed
//! descriptive values: `fw_ver` `0.0.0000`, `board_id` `ROCESIM`,
//! `hca_type` `MT4119` (a ConnectX-5, the mlx5 the model follows),
//! `hw_rev` `0`, `node_type`, `node_desc` (`<host> <device>`, as rdma-ndd
//! sets it), the GUIDs (the NIC's MAC with `03:00` after its OUI, as
//! ConnectX GUIDs are formed), `link_layer`, `lid`, `sm_lid`, `sm_sl`,
//! `lid_mask_count`, `addr_len`, `broadcast`, `flags`, `ifindex`,
//! `iflink`, `tx_queue_len`, `type`. Not written: GID tables, `device/`
//! links, `lo`, switches (their counters are in `counters.prom`).
//!
//! `statistics/` counts every frame on the port, as ethtool's `_phy`
//! counters do: on a real mlx5 NIC the netdev's statistics count only what
//! its kernel stack handled, and RoCE traffic, which bypasses the kernel,
//! shows only in the `_phy` and RDMA counters. A simulated host has no
//! kernel traffic to set apart, so its statistics show the wire.
//! `rx_dropped` counts frames the NIC refused (not for it), `tx_dropped`
//! frames its port could not send (link down); the other
//! `rtnl_link_stats64` files are not written.
//!
//! Only the hosts that take part in the run have a tree: those with a
//! queue pair and those whose ports sent, received or dropped a frame
//! ([`World::hosts_taking_part`]). The idle hosts of the reference's
//! topologies (62 of a star's 65, there to size its switches' buffers)
//! would read all zeros, and their 3,100 files and directories cost more
//! than the run: a new directory costs this file system (ext4 without a
//! journal) up to 180 us while the inodes a previous run freed are
//! recent, as they are when a run directory is replaced. Their counters
//! are in `summary.json` and `counters.prom` as every host's.
//!
//! Files of one value are hard links to one file (in a fabric most read
//! `0`): creating a file costs ext4 ~200 µs of kernel time here, a link a
//! tenth of that, and a 320-host tree has 18,000 files. Readers see
//! ordinary files; a value that changes at the end of the run is written
//! as a new file, never through a shared one. Copies (`cp -r`, `rsync`
//! without `-H`) come out as separate files.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::counters::CounterSet;
use super::devices::{self, Kind, Machine, Netdev, RdmaDevice};
use crate::time::Rate;
use crate::world::World;

/// The tree: its directories (parents first) and files, paths below the
/// run directory.
#[derive(Default)]
pub struct Tree {
    pub dirs: Vec<PathBuf>,
    pub files: Vec<(PathBuf, String)>,
}

impl Tree {
    fn put(&mut self, dir: &Path, name: &str, value: impl std::fmt::Display) {
        self.files.push((dir.join(name), format!("{value}\n")));
    }
}

/// The tree of the hosts `shown` (by index).
pub fn tree(w: &World, counters: &BTreeMap<String, CounterSet>, shown: &[bool]) -> Tree {
    let mut out = Tree::default();
    let machines = devices::machines(w).into_iter().zip(shown);
    for m in machines.filter_map(|(m, &show)| show.then_some(m)) {
        let root = Path::new("sysfs").join(m.name).join("class");
        for d in &m.rdma {
            let none = CounterSet::new();
            let set = counters.get(&d.key).unwrap_or(&none);
            rdma_device(&m, d, set, &root.join("infiniband").join(&d.name), &mut out);
        }
        for (i, n) in m.netdevs.iter().enumerate() {
            netdev(&m, i, n, &root.join("net").join(n.name()), &mut out);
        }
    }
    out
}

/// Writes the tree into `dir` (the run directory being filled). With
/// `early`, the tree the hosts had before the run was written meanwhile:
/// only what the run changed is written now.
pub fn write(
    w: &World,
    counters: &BTreeMap<String, CounterSet>,
    dir: &Path,
    when: When,
    shown: &(dyn Fn(usize) -> bool + Sync),
) -> Result<(), String> {
    let t = || {
        let mut part = w.hosts_taking_part();
        for (h, p) in part.iter_mut().enumerate() {
            *p &= shown(h);
        }
        tree(w, counters, &part)
    };
    match when {
        When::Never => Ok(()),
        When::AtEnd => write_tree(&t(), dir),
        When::Early(e) => update(&e.join()?, &t(), dir),
    }
}

/// Whether and how a run writes its tree.
pub enum When {
    /// Not at all (`[output] sysfs = false`).
    Never,
    /// All of it when the run has ended.
    AtEnd,
    /// The hosts as they boot while the world runs ([`Early`]), brought up
    /// to date at the end.
    Early(Early),
}

/// The tree as it stood when the world was built (every counter zero, as
/// Linux shows a host at boot), being written on its own thread while the
/// simulation runs: creating a file costs ~0.3 ms on the file systems we
/// run on, and a fabric's hosts have tens of thousands of them, all but a
/// few of which read the same at the end. Dropping it waits for the
/// thread, so nothing writes into a run directory that is being removed.
pub struct Early {
    thread: Option<std::thread::JoinHandle<Result<Tree, String>>>,
}

impl Early {
    /// Starts writing `w`'s boot-time tree into `dir`.
    pub fn start(w: &World, dir: &Path) -> Early {
        // The hosts that will take part, as far as is known before the
        // run; one that turns out not to is removed at the end.
        let mut shown = w.hosts_taking_part();
        for (s, named) in shown.iter_mut().zip(w.hosts_of_pending_flows()) {
            *s |= named;
        }
        let t = tree(w, &super::counters::of(w), &shown);
        let dir = dir.to_path_buf();
        let thread = std::thread::spawn(move || write_tree(&t, &dir).map(|()| t));
        Early {
            thread: Some(thread),
        }
    }

    /// Waits for the writer: the tree it wrote, or the first file it could
    /// not write.
    fn join(mut self) -> Result<Tree, String> {
        let thread = self.thread.take().expect("joined once");
        thread
            .join()
            .unwrap_or_else(|_| Err("sysfs: the writer thread panicked".to_string()))
    }
}

impl Drop for Early {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Every directory of `t`, parents before children.
fn all_dirs(t: &Tree) -> impl Iterator<Item = &Path> {
    let file_dirs = t.files.iter().filter_map(|(f, _)| f.parent());
    t.dirs.iter().map(PathBuf::as_path).chain(file_dirs)
}

fn write_tree(t: &Tree, dir: &Path) -> Result<(), String> {
    make_dirs(all_dirs(t), dir)?;
    let mut by_value = HashMap::new();
    for (rel, text) in &t.files {
        put(dir, rel, text, &mut by_value)?;
    }
    Ok(())
}

/// Creates `dirs` (parents first, repeats skipped) below `dir`.
fn make_dirs<'a>(dirs: impl Iterator<Item = &'a Path>, dir: &Path) -> Result<(), String> {
    let mut made = HashSet::new();
    for d in dirs.filter(|d| made.insert(*d)) {
        let path = dir.join(d);
        std::fs::create_dir_all(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// Writes `text` at `dir/rel`, a new file (not yet there), as a hard link
/// to the file written earlier with the same text when there is one.
fn put<'a>(
    dir: &Path,
    rel: &Path,
    text: &'a str,
    by_value: &mut HashMap<&'a str, PathBuf>,
) -> Result<(), String> {
    let path = dir.join(rel);
    if let Some(first) = by_value.get(text) {
        // Without hard links (some file systems), a file of its own.
        if std::fs::hard_link(first, &path).is_ok() {
            return Ok(());
        }
    }
    std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    by_value.insert(text, path);
    Ok(())
}

/// Turns the tree `old` written in `dir` into `new`: files whose value
/// changed are rewritten, files and directories `new` lacks removed.
fn update(old: &Tree, new: &Tree, dir: &Path) -> Result<(), String> {
    let old_dirs: HashSet<&Path> = all_dirs(old).collect();
    let new_dirs: HashSet<&Path> = all_dirs(new).collect();
    // With the directories made on the way to them (`ports/`, a host's
    // own): a host no longer shown leaves nothing behind.
    let with_parents = |dirs: &HashSet<&'_ Path>| -> HashSet<PathBuf> {
        dirs.iter()
            .flat_map(|d| d.ancestors())
            .filter(|a| !a.as_os_str().is_empty() && *a != Path::new("sysfs"))
            .map(Path::to_path_buf)
            .collect()
    };
    make_dirs(all_dirs(new).filter(|d| !old_dirs.contains(d)), dir)?;
    let old_files: HashMap<&Path, &str> = old
        .files
        .iter()
        .map(|(p, v)| (p.as_path(), v.as_str()))
        .collect();
    let mut by_value = HashMap::new();
    for (rel, text) in &new.files {
        match old_files.get(rel.as_path()) {
            Some(old) if *old == text.as_str() => {}
            was => {
                // It may share its inode with files that keep the old value.
                if was.is_some() {
                    let path = dir.join(rel);
                    std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                }
                put(dir, rel, text, &mut by_value)?;
            }
        }
    }
    let new_files: HashSet<&Path> = new.files.iter().map(|(p, _)| p.as_path()).collect();
    for rel in old_files.keys().filter(|p| !new_files.contains(*p)) {
        let path = dir.join(rel);
        std::fs::remove_file(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    // Deepest first, so a parent is empty when its turn comes.
    let (old_all, new_all) = (with_parents(&old_dirs), with_parents(&new_dirs));
    let mut gone: Vec<&PathBuf> = old_all.difference(&new_all).collect();
    gone.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
    for d in gone {
        let path = dir.join(d);
        std::fs::remove_dir(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `class/infiniband/<device>/`: the device's files, port 1, its counters.
fn rdma_device(m: &Machine<'_>, d: &RdmaDevice<'_>, set: &CounterSet, dir: &Path, out: &mut Tree) {
    let guid = guid(d.netdev.mac(m));
    for (name, value) in [
        ("board_id", "ROCESIM".to_string()),
        ("fw_ver", "0.0.0000".to_string()),
        ("hca_type", "MT4119".to_string()),
        ("hw_rev", "0".to_string()),
        ("node_desc", format!("{} {}", m.name, d.name)),
        ("node_guid", guid.clone()),
        ("node_type", "1: CA".to_string()),
        ("sys_image_guid", guid),
    ] {
        out.put(dir, name, value);
    }
    let port = dir.join("ports").join("1");
    let (state, phys) = if d.active() {
        ("4: ACTIVE", "5: LinkUp")
    } else {
        ("1: DOWN", "3: Disabled")
    };
    for (name, value) in [
        ("lid", "0x0".to_string()),
        ("lid_mask_count", "0".to_string()),
        ("link_layer", "Ethernet".to_string()),
        ("phys_state", phys.to_string()),
        ("rate", ib_rate(d.rate())),
        ("sm_lid", "0x0".to_string()),
        ("sm_sl", "0".to_string()),
        ("state", state.to_string()),
    ] {
        out.put(&port, name, value);
    }
    // The directories exist even when empty: readers list them.
    let (pma, hw) = (port.join("counters"), port.join("hw_counters"));
    out.dirs.push(pma.clone());
    out.dirs.push(hw.clone());
    // The kernel's own file beside the driver's counters: how long (ms) a
    // read value is cached (`hw_stat_device_lifespan`, 10 by default).
    out.put(&hw, "lifespan", 10);
    for (name, &v) in set {
        match devices::kind(name) {
            Kind::Pma => out.put(&pma, name, v),
            Kind::Hw => out.put(&hw, name, v),
            Kind::Ethtool => {}
        }
    }
}

/// `class/net/<if>/`: the attributes, `statistics/`, a bond's `bonding/`.
fn netdev(m: &Machine<'_>, i: usize, n: &Netdev<'_>, dir: &Path, out: &mut Tree) {
    let carrier = n.carrier();
    // IFF_UP | IFF_BROADCAST | IFF_MULTICAST, with IFF_MASTER (0x400) on a
    // bond and IFF_SLAVE (0x800) on its slaves.
    let flags = match n {
        Netdev::Bond(_) => 0x1403,
        Netdev::Nic(nic) if nic.bond().is_some() => 0x1803,
        Netdev::Nic(_) => 0x1003,
    };
    let speed = n.speed_mbps().map_or("-1".to_string(), |s| s.to_string());
    let index = m.ifindex(i);
    for (name, value) in [
        ("addr_len", "6".to_string()),
        ("address", mac(n.mac(m))),
        ("broadcast", mac([0xff; 6])),
        ("carrier", u8::from(carrier).to_string()),
        (
            "duplex",
            if carrier { "full" } else { "unknown" }.to_string(),
        ),
        ("flags", format!("{flags:#x}")),
        ("ifindex", index.to_string()),
        ("iflink", index.to_string()),
        ("mtu", n.mtu().to_string()),
        ("operstate", if carrier { "up" } else { "down" }.to_string()),
        ("speed", speed),
        ("tx_queue_len", "1000".to_string()),
        ("type", "1".to_string()),
    ] {
        out.put(dir, name, value);
    }
    let s = n.stats();
    let stats = dir.join("statistics");
    for (name, v) in [
        ("rx_bytes", s.rx_bytes),
        ("rx_dropped", s.rx_dropped),
        ("rx_packets", s.rx_packets),
        ("tx_bytes", s.tx_bytes),
        ("tx_dropped", s.tx_dropped),
        ("tx_packets", s.tx_packets),
    ] {
        out.put(&stats, name, v);
    }
    if let Netdev::Bond(b) = n {
        let bonding = dir.join("bonding");
        out.put(&bonding, "mode", numbered(b.mode(), &BOND_MODES));
        let policy = numbered(b.xmit_hash_policy(), &XMIT_POLICIES);
        out.put(&bonding, "xmit_hash_policy", policy);
        let slaves: Vec<&str> = m
            .netdevs
            .iter()
            .filter_map(|d| match d {
                Netdev::Nic(nic) if nic.bond() == Some(b.iface_name()) => Some(nic.name()),
                _ => None,
            })
            .collect();
        out.put(&bonding, "slaves", slaves.join(" "));
    }
}

/// The bonding driver's mode numbers (`BOND_MODE_*`).
const BOND_MODES: [&str; 7] = [
    "balance-rr",
    "active-backup",
    "balance-xor",
    "broadcast",
    "802.3ad",
    "balance-tlb",
    "balance-alb",
];
/// Its transmit hash policy numbers (`BOND_XMIT_POLICY_*`).
const XMIT_POLICIES: [&str; 6] = [
    "layer2",
    "layer3+4",
    "layer2+3",
    "encap2+3",
    "encap3+4",
    "vlan+srcmac",
];

/// `name N` with N its index in `table`, as bond_sysfs.c shows an option.
fn numbered(name: &str, table: &[&str]) -> String {
    match table.iter().position(|t| *t == name) {
        Some(i) => format!("{name} {i}"),
        None => name.to_string(),
    }
}

/// `%pM`: six lower-case hex bytes joined by colons.
fn mac(m: [u8; 6]) -> String {
    m.map(|b| format!("{b:02x}")).join(":")
}

/// A ConnectX-style GUID from a MAC (OUI, `03:00`, the rest), as sysfs
/// prints GUIDs: four groups of four hex digits.
fn guid(m: [u8; 6]) -> String {
    let g = [m[0], m[1], m[2], 0x03, 0x00, m[3], m[4], m[5]];
    g.chunks(2)
        .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
        .collect::<Vec<_>>()
        .join(":")
}

/// The port's `rate` file: the IB width and speed mlx5 reports for an
/// Ethernet speed, in the kernel's format. A rate no Ethernet PHY runs at
/// (a simulated link can run at any) shows its own value, width 1X.
fn ib_rate(r: Rate) -> String {
    // (Gb/s, width, speed name, deci-Gb/s per lane)
    const TABLE: [(u64, u32, &str, u64); 9] = [
        (1, 1, "SDR", 25),
        (10, 1, "QDR", 100),
        (25, 1, "EDR", 250),
        (40, 4, "QDR", 100),
        (50, 2, "EDR", 250),
        (100, 4, "EDR", 250),
        (200, 4, "HDR", 500),
        (400, 4, "NDR", 1000),
        (800, 8, "NDR", 1000),
    ];
    let bps = r.bps();
    match TABLE.iter().find(|t| t.0 * 1_000_000_000 == bps) {
        Some(&(_, width, speed, lane)) => {
            let deci = lane * u64::from(width);
            let half = if deci % 10 != 0 { ".5" } else { "" };
            format!("{}{half} Gb/sec ({width}X {speed})", deci / 10)
        }
        None => {
            let g = bps as f64 / 1e9;
            format!("{g} Gb/sec (1X)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file below `dir` with its content, and every directory.
    fn listing(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
        let mut out = Vec::new();
        let mut todo = vec![dir.to_path_buf()];
        while let Some(d) = todo.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                if p.is_dir() {
                    out.push((rel, None));
                    todo.push(p);
                } else {
                    out.push((rel, Some(std::fs::read_to_string(&p).unwrap())));
                }
            }
        }
        out.sort();
        out
    }

    /// The boot-time tree brought up to date reads exactly as the end
    /// tree written from scratch: changed values rewritten, new files and
    /// directories made, vanished ones removed, the rest untouched.
    #[test]
    fn updating_the_boot_tree_gives_the_end_tree() {
        let tree = |files: &[(&str, &str)], dirs: &[&str]| Tree {
            dirs: dirs.iter().map(PathBuf::from).collect(),
            files: files
                .iter()
                .map(|(p, v)| (PathBuf::from(p), v.to_string()))
                .collect(),
        };
        let old = tree(
            &[
                ("h/a/same", "1\n"),
                ("h/a/moved", "0\n"),
                ("h/a/stays", "0\n"),
                ("h/gone/x", "0\n"),
                ("h/b/gone", "0\n"),
                // A host no longer shown: its whole tree goes, the
                // directories made on the way to its files too.
                ("g/class/net/eth0/x", "0\n"),
            ],
            &[
                "h/empty",
                "h/old_empty",
                "g/class/infiniband/d/ports/1/counters",
            ],
        );
        let new = tree(
            &[
                ("h/a/same", "1\n"),
                ("h/a/moved", "42\n"),
                ("h/a/stays", "0\n"),
                ("h/b/new", "7\n"),
                ("h/c/d/new", "8\n"),
            ],
            &["h/empty"],
        );
        let base = std::env::temp_dir().join(format!("rocesim-sysfs-{}", std::process::id()));
        let (updated, fresh) = (base.join("updated"), base.join("fresh"));
        let _ = std::fs::remove_dir_all(&base);
        write_tree(&old, &updated).unwrap();
        update(&old, &new, &updated).unwrap();
        write_tree(&new, &fresh).unwrap();
        // One value, one inode: `moved` and `stays` were links to one file;
        // `moved` got a file of its own and `stays` still reads 0.
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ino = |d: &Path, f: &str| std::fs::metadata(d.join(f)).unwrap().ino();
            let mut boot = base.join("boot");
            write_tree(&old, &boot).unwrap();
            assert_eq!(ino(&boot, "h/a/moved"), ino(&boot, "h/gone/x"));
            boot = updated.clone();
            assert_ne!(ino(&boot, "h/a/moved"), ino(&boot, "h/a/stays"));
        }
        let (got, want) = (listing(&updated), listing(&fresh));
        std::fs::remove_dir_all(&base).unwrap();
        assert_eq!(got, want);
        assert!(
            want.iter()
                .any(|(p, v)| p.ends_with("moved") && v.as_deref() == Some("42\n"))
        );
        assert!(!want.iter().any(|(p, _)| p.ends_with("gone")));
        assert!(!got.iter().any(|(p, _)| p.starts_with("g")));
    }

    #[test]
    fn rates_read_as_the_kernel_writes_them() {
        assert_eq!(ib_rate(Rate::gbps(100)), "100 Gb/sec (4X EDR)");
        assert_eq!(ib_rate(Rate::gbps(25)), "25 Gb/sec (1X EDR)");
        assert_eq!(ib_rate(Rate::gbps(200)), "200 Gb/sec (4X HDR)");
        assert_eq!(ib_rate(Rate::gbps(1)), "2.5 Gb/sec (1X SDR)");
        assert_eq!(ib_rate(Rate(12_500_000_000)), "12.5 Gb/sec (1X)");
    }

    #[test]
    fn addresses_and_options_read_as_the_kernel_writes_them() {
        let m = [0x0c, 0x42, 0xa1, 0x65, 0x8e, 0x6c];
        assert_eq!(mac(m), "0c:42:a1:65:8e:6c");
        assert_eq!(guid(m), "0c42:a103:0065:8e6c");
        assert_eq!(numbered("802.3ad", &BOND_MODES), "802.3ad 4");
        assert_eq!(numbered("active-backup", &BOND_MODES), "active-backup 1");
        assert_eq!(numbered("layer3+4", &XMIT_POLICIES), "layer3+4 1");
        assert_eq!(numbered("layer2+3", &XMIT_POLICIES), "layer2+3 2");
    }
}
