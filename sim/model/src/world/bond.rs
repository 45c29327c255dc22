//! Linux bonding and the mlx5 RoCE LAG: which slave a queue pair's packets
//! leave on.
//!
//! ```text
//!                      ┌──────────── bond0 (one MAC, one IP, one RDMA device) ───────────┐
//!   QP ── flow keys ──▶│ active-backup: the active slave                                  │
//!   (smac,dmac,ips,    │ xor / 802.3ad, lag = "hash":   bucket = H(policy fields) % (n·b)  │──▶ slave
//!    sport)            │                                slave  = bucket_map[bucket]       │
//!                      │ xor / 802.3ad, lag = "queue-affinity": slave = RR at QP creation  │
//!                      └──────────────────────────────────────────────────────────────────┘
//! ```
//!
//! * Hash mode follows the mlx5 port-selection flow table (Linux
//!   drivers/net/ethernet/mellanox/mlx5/core/lag/port_sel.c; no QP affinity
//!   in hash mode, commit a83bb5df2ac6): every RoCE packet is hashed by the
//!   NIC on the fields the bond's `xmit_hash_policy` names; the hash itself
//!   is pluggable (`lag_hash`: Linux's `bond_xmit_hash` by default, since the
//!   ConnectX hash is not public). There are `lag_buckets` buckets per port;
//!   bucket `i` belongs to slave `i / lag_buckets`. The modulo runs over
//!   *all* slaves, as the RDMA LAG's slave lookup does
//!   (drivers/infiniband/core/lag.c asks bond_main.c's `bond_xmit_get_slave`
//!   with `RDMA_LAG_FLAGS_HASH_ALL_SLAVES`); when a slave is found down its
//!   buckets move to a random usable slave, drawn from the bond's own random
//!   stream, as `mlx5_infer_tx_affinity_mapping` does.
//! * Queue-affinity mode: each workload is one process with its own user
//!   context, whose counter starts at the number of contexts opened on the
//!   device (1 for the first); each QP takes `(++ctr % n)`, so with two
//!   ports the first process's QPs get ports 1, 2, 1, ... (slaves 0, 1,
//!   0, ...) and a second process's start at port 2. A QP whose slave
//!   is down is remapped to the next usable slave (firmware
//!   `tx_remap_affinity`).
//! * `lag = "software"` is no RoCE LAG at all (soft-RoCE over a bond): the
//!   kernel bond picks `usable_slaves[bond_xmit_hash % count]`
//!   (`bond_xmit_3ad_xor_slave_get`, drivers/net/bonding/bond_main.c), so a
//!   dead slave re-hashes every flow over the survivors.
//! * Link failure is noticed by the MII monitor as `bond_miimon_inspect`
//!   does it: it polls every `miimon` from t = 0; the first poll that sees
//!   a carrier change starts a countdown of `downdelay` (`updelay`) in
//!   whole polls — the kernel stores the delays as `delay / miimon`,
//!   rounding down — and the change is committed at the poll where it runs
//!   out (at once for a zero delay). `updelay` is skipped when no slave is
//!   usable. Until then the bond keeps using the slave and frames sent to a
//!   dead port are lost, which is what makes the QP time out and retransmit
//!   on the surviving slave.

use rand_chacha::ChaCha8Rng;
use roce_codec::hash::{FlowKeys, bond_xmit_hash};

use crate::rng;
use crate::time::Ps;
use serde::Deserialize;

#[derive(Debug, Clone)]
pub struct Slave {
    pub nic: u32,
    pub port: u32,
    /// Physical carrier now.
    pub carrier: bool,
    /// What the bond believes (after miimon).
    pub usable: bool,
    /// The poll at which a carrier change not yet committed is committed
    /// (the first poll after it plus the delay in whole polls).
    pub commit_at: Ps,
}

#[derive(Debug)]
pub struct Bond {
    pub name: String,
    pub mode: BondMode,
    pub policy: HashPolicy,
    pub miimon: Ps,
    pub updelay: Ps,
    pub downdelay: Ps,
    pub lag: LagSelect,
    pub lag_hash: LagHash,
    pub slaves: Vec<Slave>,
    /// Active slave (active-backup).
    pub active: usize,
    /// Bucket → slave (hash mode).
    pub buckets: Vec<u32>,
    pub buckets_per_port: u32,
    /// The device's `tx_port_affinity`: user contexts (processes) opened
    /// on it so far; each starts its own round robin from this count.
    pub contexts: u32,
    pub rng: ChaCha8Rng,
    /// A Miimon event is pending.
    pub poll_pending: bool,
    /// Gratuitous ARPs to send after a failover (`num_grat_arp`), and how
    /// many of the last failover's are still to go.
    pub num_grat_arp: u8,
    pub grat_arp_left: u8,
    /// (time, message) of every change the bond made, for the summary.
    pub log: Vec<(Ps, String)>,
}

impl Bond {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        mode: BondMode,
        policy: HashPolicy,
        miimon: Ps,
        updelay: Ps,
        downdelay: Ps,
        lag: LagSelect,
        lag_hash: LagHash,
        buckets_per_port: u32,
        slaves: Vec<(u32, u32)>,
        rng: ChaCha8Rng,
    ) -> Bond {
        let n = slaves.len() as u32;
        Bond {
            name,
            mode,
            policy,
            miimon,
            updelay,
            downdelay,
            lag,
            lag_hash,
            slaves: slaves
                .into_iter()
                .map(|(nic, port)| Slave {
                    nic,
                    port,
                    carrier: true,
                    usable: true,
                    commit_at: Ps::ZERO,
                })
                .collect(),
            active: 0,
            buckets: (0..n * buckets_per_port)
                .map(|b| b / buckets_per_port)
                .collect(),
            buckets_per_port,
            contexts: 0,
            rng,
            poll_pending: false,
            num_grat_arp: 1,
            grat_arp_left: 0,
            log: Vec::new(),
        }
    }

    /// The LAG hash of a QP's packets.
    pub fn hash(&self, keys: &FlowKeys) -> u32 {
        let h = bond_xmit_hash(self.policy.codec(), keys);
        if self.lag == LagSelect::Software {
            // The kernel bond always uses its own formula.
            return h;
        }
        match self.lag_hash {
            LagHash::Linux => h,
            LagHash::Crc32 => {
                // CRC-32 over exactly the fields the policy reads, so that
                // layer2+3 still ignores the ports.
                let mut b = Vec::with_capacity(32);
                if self.policy == HashPolicy::VlanSrcMac {
                    // mlx5 lag/port_sel.c's vlan+srcmac fields: smac and
                    // the first VLAN id.
                    b.extend_from_slice(&keys.src_mac);
                    b.extend_from_slice(&(keys.vlan_tci.unwrap_or(0) & 0x0FFF).to_be_bytes());
                    return crc32(&b);
                }
                let l34 = matches!(self.policy, HashPolicy::Layer34 | HashPolicy::Encap34);
                let l3 = l34 || matches!(self.policy, HashPolicy::Layer23 | HashPolicy::Encap23);
                if !l34 || keys.addrs.is_none() {
                    b.extend_from_slice(&keys.src_mac);
                    b.extend_from_slice(&keys.dst_mac);
                    b.extend_from_slice(&keys.ethertype.to_be_bytes());
                }
                if l3 {
                    if let Some(roce_codec::hash::FlowAddrs::V4 { src, dst }) = keys.addrs {
                        b.extend_from_slice(&src.octets());
                        b.extend_from_slice(&dst.octets());
                    }
                }
                if l34 {
                    if let Some((s, d)) = keys.ports {
                        b.extend_from_slice(&s.to_be_bytes());
                        b.extend_from_slice(&d.to_be_bytes());
                    }
                }
                crc32(&b)
            }
        }
    }

    /// `netdev_get_xmit_slave(all_slaves)`: the Linux bond hash over every
    /// enslaved port, whatever its state.
    pub fn linux_slave_all(&self, keys: &FlowKeys) -> u32 {
        let h = bond_xmit_hash(self.policy.codec(), keys);
        (h as usize % self.slaves.len()) as u32
    }

    /// A new user context (one perftest process) on the device: its
    /// round-robin counter starts at `++dev.tx_port_affinity`
    /// (mlx5_ib_alloc_ucontext).
    pub fn new_context(&mut self) -> u32 {
        self.contexts += 1;
        self.contexts
    }

    /// The queue-affinity slave of a new QP of the context whose counter
    /// is `ctx`: `(++ctx % n) + 1` as a 1-based port (get_tx_affinity_rr).
    pub fn next_affinity(&self, ctx: &mut u32) -> u32 {
        *ctx += 1;
        *ctx % self.slaves.len() as u32
    }

    /// The slave a QP with LAG hash `hash` and affinity `affinity` uses now.
    pub fn slave_for(&self, hash: u32, affinity: u32) -> usize {
        match self.mode {
            BondMode::ActiveBackup => self.active,
            BondMode::BalanceXor | BondMode::Lacp => match self.lag {
                LagSelect::Hash => {
                    let b = hash as usize % self.buckets.len();
                    self.buckets[b] as usize
                }
                LagSelect::Software => self.kernel_slave(hash),
                LagSelect::QueueAffinity => {
                    let n = self.slaves.len();
                    (0..n)
                        .map(|k| (affinity as usize + k) % n)
                        .find(|&s| self.slaves[s].usable)
                        .unwrap_or(affinity as usize)
                }
            },
        }
    }

    /// The slave the kernel bond driver itself sends a frame of hash
    /// `hash` on: the active slave (active-backup), else
    /// `usable_slaves[hash % count]` (bond_xmit_3ad_xor_slave_get).
    pub fn kernel_slave(&self, hash: u32) -> usize {
        if self.mode == BondMode::ActiveBackup {
            return self.active;
        }
        let usable = self.slaves.iter().filter(|s| s.usable).count();
        if usable == 0 {
            return 0;
        }
        (0..self.slaves.len())
            .filter(|&s| self.slaves[s].usable)
            .nth(hash as usize % usable)
            .unwrap_or(0)
    }

    #[cfg(test)]
    /// The slave the *hash* alone picks, before any failover remap (for
    /// tests and the summary).
    pub fn hashed_slave(&self, hash: u32) -> usize {
        ((hash as usize) % (self.slaves.len() * self.buckets_per_port as usize))
            / self.buckets_per_port as usize
    }

    /// The carrier of slave `s` changed at `now`; returns the time of the
    /// next MII poll to schedule, if the bond monitors links.
    pub fn carrier_changed(&mut self, s: usize, up: bool, now: Ps) -> Option<Ps> {
        self.slaves[s].carrier = up;
        if self.miimon == Ps::ZERO {
            return None;
        }
        let first_poll = self.next_poll(now);
        let delay = if up { self.updelay } else { self.downdelay };
        self.slaves[s].commit_at =
            first_poll + Ps(delay.as_ps() / self.miimon.as_ps() * self.miimon.as_ps());
        Some(first_poll)
    }

    pub fn next_poll(&self, now: Ps) -> Ps {
        let m = self.miimon.as_ps();
        Ps((now.as_ps() / m + 1) * m)
    }

    /// One MII poll. Returns whether the bond's view changed, and the time
    /// of the next poll if a change is still waiting for its delay.
    pub fn poll(&mut self, now: Ps) -> (bool, Option<Ps>) {
        let mut changed = false;
        let mut waiting = false;
        // The kernel's ignore_updelay: nothing to fail over to.
        let none_usable = !self.slaves.iter().any(|s| s.usable);
        for i in 0..self.slaves.len() {
            let s = &self.slaves[i];
            if s.carrier == s.usable {
                continue;
            }
            if now >= s.commit_at || (s.carrier && none_usable) {
                let up = s.carrier;
                self.slaves[i].usable = up;
                changed = true;
                let msg = format!(
                    "{}: link status definitely {} for slave {} (miimon)",
                    self.name,
                    if up { "up" } else { "down" },
                    i
                );
                self.log.push((now, msg));
            } else {
                waiting = true;
            }
        }
        if changed {
            self.reselect(now);
        }
        (changed, waiting.then(|| self.next_poll(now)))
    }

    /// Recomputes the active slave and the bucket map after a change.
    fn reselect(&mut self, now: Ps) {
        let n = self.slaves.len();
        if !self.slaves[self.active].usable {
            if let Some(a) = (1..n)
                .map(|k| (self.active + k) % n)
                .find(|&s| self.slaves[s].usable)
            {
                if self.mode == BondMode::ActiveBackup {
                    self.log.push((
                        now,
                        format!("{}: making slave {a} the active slave", self.name),
                    ));
                }
                self.active = a;
                if self.mode == BondMode::ActiveBackup {
                    self.grat_arp_left = self.num_grat_arp;
                }
            }
        }
        let usable: Vec<u32> = (0..n as u32)
            .filter(|&s| self.slaves[s as usize].usable)
            .collect();
        let bpp = self.buckets_per_port;
        let before = self.buckets.clone();
        for b in 0..self.buckets.len() as u32 {
            let home = b / bpp;
            self.buckets[b as usize] = if self.slaves[home as usize].usable || usable.is_empty() {
                home
            } else {
                usable[rng::below(&mut self.rng, usable.len() as u32) as usize]
            };
        }
        if self.mode != BondMode::ActiveBackup
            && self.lag == LagSelect::Hash
            && before != self.buckets
        {
            let map: Vec<String> = self.buckets.iter().map(u32::to_string).collect();
            self.log.push((
                now,
                format!(
                    "{}: LAG hash buckets now map to slaves [{}]",
                    self.name,
                    map.join(", ")
                ),
            ));
        }
    }
}

fn crc32(b: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(b);
    h.finalize()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum BondMode {
    #[serde(rename = "active-backup")]
    ActiveBackup,
    #[serde(rename = "balance-xor")]
    BalanceXor,
    #[serde(rename = "802.3ad")]
    Lacp,
}

impl BondMode {
    pub fn name(self) -> &'static str {
        match self {
            BondMode::ActiveBackup => "active-backup",
            BondMode::BalanceXor => "balance-xor",
            BondMode::Lacp => "802.3ad",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum HashPolicy {
    #[serde(rename = "layer2")]
    Layer2,
    #[serde(rename = "layer2+3")]
    Layer23,
    #[serde(rename = "layer3+4")]
    Layer34,
    #[serde(rename = "encap2+3")]
    Encap23,
    #[serde(rename = "encap3+4")]
    Encap34,
    #[serde(rename = "vlan+srcmac")]
    VlanSrcMac,
}

impl HashPolicy {
    pub fn codec(self) -> roce_codec::hash::XmitHashPolicy {
        use roce_codec::hash::XmitHashPolicy as X;
        match self {
            HashPolicy::Layer2 => X::Layer2,
            HashPolicy::Layer23 => X::Layer23,
            HashPolicy::Layer34 => X::Layer34,
            HashPolicy::Encap23 => X::Encap23,
            HashPolicy::Encap34 => X::Encap34,
            HashPolicy::VlanSrcMac => X::VlanSrcMac,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LagSelect {
    /// mlx5 hash mode (port-selection flow table): every packet hashed on
    /// the bond policy's fields.
    #[default]
    Hash,
    /// mlx5 queue-affinity mode: QPs round-robin over ports at creation.
    QueueAffinity,
    /// No RoCE LAG: the Linux bond transmits (soft-RoCE/rxe over a bond),
    /// `bond_xmit_hash % usable slaves`, re-hashed when a slave dies.
    Software,
}

impl LagSelect {
    /// As the scenario spells it.
    pub fn name(self) -> &'static str {
        match self {
            LagSelect::Hash => "hash",
            LagSelect::QueueAffinity => "queue-affinity",
            LagSelect::Software => "software",
        }
    }
}

/// The hash a LAG in hash mode feeds the policy's fields to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum LagHash {
    /// Linux `bond_xmit_hash` (what the kernel would pick for the same
    /// frame); the real ConnectX hash is not public.
    #[default]
    Linux,
    /// CRC-32 over the same fields: a stand-in for an opaque uniform hash.
    Crc32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;
    use roce_codec::hash::{XmitHashPolicy, bond_slave_index};

    fn bond(mode: BondMode, lag: LagSelect, policy: HashPolicy) -> Bond {
        Bond::new(
            "bond0".into(),
            mode,
            policy,
            Ps::from_ms(100),
            Ps::ZERO,
            Ps::ZERO,
            lag,
            LagHash::Linux,
            1,
            vec![(0, 0), (1, 1)],
            rng::component_rng(1, "bond0"),
        )
    }

    fn keys(sport: u16) -> FlowKeys {
        FlowKeys::rocev2_v4(
            [0, 0, 0, 0, 0, 0x0a],
            [0, 0, 0, 0, 0, 0x0b],
            Ipv4Addr::new(10, 0, 0, 1),
            Ipv4Addr::new(10, 0, 0, 2),
            sport,
        )
    }

    #[test]
    fn hash_mode_is_the_linux_slave_choice() {
        let b = bond(BondMode::Lacp, LagSelect::Hash, HashPolicy::Layer34);
        for sport in [0xC000u16, 0xE123, 0xE124, 0xC132] {
            let h = b.hash(&keys(sport));
            assert_eq!(h, bond_xmit_hash(XmitHashPolicy::Layer34, &keys(sport)));
            assert_eq!(Some(b.slave_for(h, 0)), bond_slave_index(h, 2));
        }
        // bond_main.c's layer3+4 hash of these keys, then `hash % count`
        // (bond_xmit_3ad_xor_slave_get): 0x5A535333 % 2 = 1, 0x5A5342B2 % 2 = 0.
        assert_eq!(b.slave_for(b.hash(&keys(0xC000)), 0), 1);
        assert_eq!(b.slave_for(b.hash(&keys(0xE123)), 0), 0);
    }

    #[test]
    fn layer23_ignores_the_port() {
        let b = bond(BondMode::Lacp, LagSelect::Hash, HashPolicy::Layer23);
        let s: Vec<usize> = (0..32)
            .map(|i| b.slave_for(b.hash(&keys(0xC000 + i)), 0))
            .collect();
        assert!(s.iter().all(|&x| x == s[0]));
        let mut b = b;
        b.lag_hash = LagHash::Crc32;
        let s: Vec<usize> = (0..32)
            .map(|i| b.slave_for(b.hash(&keys(0xC000 + i)), 0))
            .collect();
        assert!(s.iter().all(|&x| x == s[0]));
    }

    /// The mlx5 port-selection fields of vlan+srcmac are the source MAC
    /// and the VLAN id only (mlx5 core lag/port_sel.c), not the layer 2
    /// triple.
    #[test]
    fn crc32_vlan_srcmac_reads_only_the_source_mac_and_vlan() {
        let mut b = bond(BondMode::Lacp, LagSelect::Hash, HashPolicy::VlanSrcMac);
        b.lag_hash = LagHash::Crc32;
        let mut k = keys(0xC000);
        k.vlan_tci = Some(0x6064); // PCP 3, VID 100
        let h = b.hash(&k);
        let mut other = k;
        other.dst_mac = [2, 0, 0, 0, 0, 0x42];
        other.ports = Some((0xE123, 4791));
        other.vlan_tci = Some(0x0064); // same VID, PCP 0
        assert_eq!(b.hash(&other), h);
        other.vlan_tci = Some(0x0065);
        assert_ne!(b.hash(&other), h);
    }

    #[test]
    fn queue_affinity_round_robin_and_remap() {
        let mut b = bond(
            BondMode::Lacp,
            LagSelect::QueueAffinity,
            HashPolicy::Layer34,
        );
        let mut ctx = b.new_context();
        let aff: Vec<u32> = (0..4).map(|_| b.next_affinity(&mut ctx)).collect();
        assert_eq!(aff, [0, 1, 0, 1]);
        // A second process starts one further: its first QP takes port 2.
        let mut ctx = b.new_context();
        let aff: Vec<u32> = (0..2).map(|_| b.next_affinity(&mut ctx)).collect();
        assert_eq!(aff, [1, 0]);
        // With a flow label the bond's own hash over all slaves decides.
        assert_eq!(b.linux_slave_all(&keys(0xC000)), 1);
        assert_eq!(b.linux_slave_all(&keys(0xE123)), 0);
        assert_eq!(b.slave_for(0, 1), 1);
        let next = b.carrier_changed(1, false, Ps::from_ms(250)).unwrap();
        assert_eq!(next, Ps::from_ms(300));
        assert_eq!(b.slave_for(0, 1), 1, "not noticed before the poll");
        let (changed, again) = b.poll(next);
        assert!(changed && again.is_none());
        assert_eq!(b.slave_for(0, 1), 0);
    }

    #[test]
    fn active_backup_fails_over_after_miimon_and_downdelay() {
        let mut b = bond(BondMode::ActiveBackup, LagSelect::Hash, HashPolicy::Layer2);
        b.downdelay = Ps::from_ms(150);
        assert_eq!(b.slave_for(123, 0), 0);
        let t = b.carrier_changed(0, false, Ps::from_ms(10)).unwrap();
        assert_eq!(t, Ps::from_ms(100));
        let (changed, again) = b.poll(t);
        assert!(!changed);
        assert_eq!(again, Some(Ps::from_ms(200)));
        let (changed, _) = b.poll(Ps::from_ms(200));
        assert!(changed);
        assert_eq!(b.slave_for(123, 0), 1);
    }

    /// bond_miimon_inspect counts delays in whole polls from the first poll
    /// that sees the change, the delay rounded down to a multiple of
    /// miimon (bond_option_downdelay_set stores `value / miimon`).
    #[test]
    fn delays_count_whole_polls_from_the_first_poll_that_sees_the_change() {
        let mut b = bond(BondMode::ActiveBackup, LagSelect::Hash, HashPolicy::Layer2);
        // miimon 100 ms, downdelay 150 ms = 1 poll. Down at 90 ms: seen at
        // the 100 ms poll, committed one poll later.
        b.downdelay = Ps::from_ms(150);
        assert_eq!(
            b.carrier_changed(0, false, Ps::from_ms(90)),
            Some(Ps::from_ms(100))
        );
        assert_eq!(b.poll(Ps::from_ms(100)), (false, Some(Ps::from_ms(200))));
        let (changed, again) = b.poll(Ps::from_ms(200));
        assert!(changed && again.is_none());
        assert_eq!(b.slave_for(0, 0), 1);
        // Down exactly at a poll instant: that poll ran before; updelay
        // 250 ms = 2 polls from the first one that sees it (500 ms).
        b.updelay = Ps::from_ms(250);
        assert_eq!(
            b.carrier_changed(0, true, Ps::from_ms(400)),
            Some(Ps::from_ms(500))
        );
        assert!(!b.poll(Ps::from_ms(500)).0);
        assert!(!b.poll(Ps::from_ms(600)).0);
        assert!(b.poll(Ps::from_ms(700)).0);
        assert!(b.slaves[0].usable);
    }

    #[test]
    fn updelay_is_skipped_when_no_slave_is_usable() {
        let mut b = bond(BondMode::ActiveBackup, LagSelect::Hash, HashPolicy::Layer2);
        b.updelay = Ps::from_ms(500);
        b.carrier_changed(0, false, Ps::from_ms(10));
        b.carrier_changed(1, false, Ps::from_ms(10));
        assert!(b.poll(Ps::from_ms(100)).0);
        assert!(b.slaves.iter().all(|s| !s.usable));
        // The first slave back is used at the first poll that sees it.
        assert_eq!(
            b.carrier_changed(1, true, Ps::from_ms(120)),
            Some(Ps::from_ms(200))
        );
        let (changed, again) = b.poll(Ps::from_ms(200));
        assert!(changed && again.is_none());
        assert_eq!(b.slave_for(0, 0), 1);
        // The second waits its updelay: 5 polls after 300 ms.
        b.carrier_changed(0, true, Ps::from_ms(250));
        assert!(!b.poll(Ps::from_ms(700)).0);
        assert!(b.poll(Ps::from_ms(800)).0);
    }

    #[test]
    fn software_bond_rehashes_over_usable_slaves() {
        let mut b = Bond::new(
            "bond0".into(),
            BondMode::BalanceXor,
            HashPolicy::Layer34,
            Ps::from_ms(100),
            Ps::ZERO,
            Ps::ZERO,
            LagSelect::Software,
            LagHash::Crc32,
            1,
            vec![(0, 0), (1, 1), (2, 2)],
            rng::component_rng(1, "bond0"),
        );
        let h = b.hash(&keys(0xC000));
        assert_eq!(h, 0x5A535333, "the kernel formula, whatever lag_hash says");
        assert_eq!(b.slave_for(h, 0), 0x5A535333 % 3);
        b.carrier_changed(0, false, Ps::ZERO);
        b.poll(Ps::from_ms(100));
        // usable_slaves = [1, 2]: index hash % 2 into it.
        assert_eq!(b.slave_for(h, 0), [1, 2][0x5A535333 % 2]);
    }

    #[test]
    fn hash_buckets_of_a_dead_port_move() {
        let mut b = bond(BondMode::Lacp, LagSelect::Hash, HashPolicy::Layer34);
        let h = b.hash(&keys(0xC000));
        assert_eq!(b.slave_for(h, 0), 1);
        b.carrier_changed(1, false, Ps::ZERO);
        b.poll(Ps::from_ms(100));
        assert_eq!(b.slave_for(h, 0), 0);
        assert_eq!(b.hashed_slave(h), 1);
    }
}
