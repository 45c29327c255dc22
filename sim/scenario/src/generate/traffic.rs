//! Traffic generators: the flows of a capacity study from a pattern (who
//! sends to whom), an arrival process (when) and a size distribution (how
//! much).
//!
//! A flow ([`FlowSpec`]) is one message of `size_bytes` from one host to
//! another, started at a time, in a traffic class (priority, UDP
//! destination port, RDMA verb). Hosts are host indices of a
//! [`rocesim_model::topology::Topology`] ([`HostId`]), so the same flows run on any
//! fabric with enough hosts.
//!
//! # Load
//!
//! *Load* is the fraction of a host link's rate that the flows offered to
//! it would fill: a sender at 30 % load on a 100 Gb/s link starts, on
//! average, 30 Gb of flow payload per second (headers not counted, as the
//! reference's generator does not count them). With flow sizes of mean
//! S bytes, that is one flow every `S x 8 / (load x rate)` seconds; the
//! reference's WebSearch distribution has S = 1.71 MB, so at 30 % of 100G
//! a host starts a flow every 456 µs on average. Whether the network
//! *carries* that load is what a simulation finds out. Load is offered
//! per sender: an all-to-all pattern at 30 % offers each link of a
//! non-blocking fabric at most about 30 % on average (less on the core
//! links when some destinations are local), while an incast of N senders
//! at 30 % offers the receiver's link N x 30 %.
//!
//! # Arrivals
//!
//! Poisson arrivals ([`Arrivals::Poisson`]) are the standard model of many
//! independent users: each sender draws the gap to its next flow from an
//! exponential distribution with that mean, independently of everything
//! else, so flows cluster and spread as real request traffic does, and
//! the offered load converges to the target over a long run. This is the
//! reference's traffic_gen.py. [`Arrivals::Once`] starts every flow of a
//! pattern at one instant instead (incast, shuffle).
//!
//! ```text
//!  host 0  ──●────────●──●─────────────────●───●──▶ t     gaps ~ Exp(mean = S x 8 / (load x rate))
//!  host 1  ─────●─────────────●──●──●─────────────▶ t     each flow: size ~ CDF, dst by pattern
//! ```
//!
//! Everything is drawn from seeded streams, one per purpose and sender
//! (`traffic.<workload>.arrivals.<host>`, `.dst.`, `.size.`, and
//! `.permutation`, `.pick` for the pattern): the same seed gives the same
//! flows, and changing the size distribution leaves destinations alone.

use rand_chacha::ChaCha8Rng;

use rocesim_model::flow::{FlowSpec, SizeCdf, TrafficClass, TrafficError};
use rocesim_model::rng::{below, component_rng, unit_f64};
use rocesim_model::time::{Ps, Rate};
use rocesim_model::topology::HostId;

/// Flow sizes.
#[derive(Debug, Clone, PartialEq)]
pub enum Sizes {
    Fixed(u64),
    Cdf(SizeCdf),
}

impl Sizes {
    /// The mean the arrival rate is computed from (the CDF's `getAvg`).
    pub fn mean(&self) -> f64 {
        match self {
            Sizes::Fixed(s) => *s as f64,
            Sizes::Cdf(c) => c.mean(),
        }
    }
    fn draw(&self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            Sizes::Fixed(s) => *s,
            Sizes::Cdf(c) => c.sample(rng),
        }
    }
}

/// A set of hosts for a pattern's many side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hosts {
    /// Every host but the pattern's one (receiver or sender).
    All,
    List(Vec<HostId>),
    /// This many distinct hosts drawn at random from the others.
    Random(u32),
}

/// Who sends to whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pattern {
    /// Every host sends; each flow to a host drawn uniformly from the
    /// others (with [`Arrivals::Once`]: one flow to every other host).
    AllToAll,
    /// Every host sends to one partner, a random permutation without
    /// fixed points drawn once.
    Permutation,
    /// Senders to one receiver.
    Incast { receiver: HostId, senders: Hosts },
    /// One sender to receivers (with Poisson arrivals, each flow to one
    /// drawn uniformly).
    OneToMany { sender: HostId, receivers: Hosts },
}

/// When flows start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrivals {
    /// Every (sender, destination) of the pattern starts one flow at `at`.
    Once { at: Ps },
    /// Each sender starts flows at exponential gaps of mean
    /// `mean size x 8 / (load x host_rate)`, from `start` for `duration`.
    Poisson {
        load: f64,
        host_rate: Rate,
        start: Ps,
        duration: Ps,
        /// Drop each sender's last arrival, as traffic_gen.py does (it
        /// writes a flow only if the next arrival is still in the
        /// window): about one flow per host fewer, to match its files.
        like_traffic_gen: bool,
    },
}

/// One traffic class's flows: pattern, arrivals, sizes, and the class.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    /// Names the random streams (and the workload in messages).
    pub name: String,
    pub pattern: Pattern,
    pub arrivals: Arrivals,
    pub sizes: Sizes,
    pub class: TrafficClass,
}

/// The flows of `w` among `hosts` hosts under scenario seed `seed`, in
/// start order (ties by source, destination), numbered from 0.
pub fn generate(w: &Workload, hosts: u32, seed: u64) -> Result<Vec<FlowSpec>, TrafficError> {
    let err = |m: String| Err(TrafficError(format!("workload `{}`: {m}", w.name)));
    if hosts < 2 {
        return err(format!("needs at least 2 hosts, the topology has {hosts}"));
    }
    if let Sizes::Fixed(0) = w.sizes {
        return err("a flow carries at least 1 byte".into());
    }
    if w.class.priority > 7 {
        return err(format!("priority is 0..=7, found {}", w.class.priority));
    }
    let stream = |purpose: &str| component_rng(seed, &format!("traffic.{}.{purpose}", w.name));
    // (sender, its destinations; empty means uniform among all others).
    let mut senders: Vec<(HostId, Vec<HostId>)> = Vec::new();
    let check = |h: HostId, what: &str| {
        if h.0 >= hosts {
            return Err(TrafficError(format!(
                "workload `{}`: {what} host {} does not exist ({hosts} hosts)",
                w.name, h.0
            )));
        }
        Ok(h)
    };
    match &w.pattern {
        Pattern::AllToAll => {
            senders = (0..hosts).map(|h| (HostId(h), Vec::new())).collect();
        }
        Pattern::Permutation => {
            let p = derangement(hosts, &mut stream("permutation"));
            senders = (0..hosts)
                .map(|h| (HostId(h), vec![HostId(p[h as usize])]))
                .collect();
        }
        Pattern::Incast {
            receiver,
            senders: from,
        } => {
            let r = check(*receiver, "receiver")?;
            for s in pick(from, r, hosts, &w.name, &mut stream("pick"))? {
                senders.push((s, vec![r]));
            }
        }
        Pattern::OneToMany { sender, receivers } => {
            let s = check(*sender, "sender")?;
            senders.push((s, pick(receivers, s, hosts, &w.name, &mut stream("pick"))?));
        }
    }
    let mut flows = Vec::new();
    let flow = |src: HostId, dst: HostId, size_bytes: u64, start: Ps| FlowSpec {
        id: 0,
        src,
        dst,
        size_bytes,
        start,
        priority: w.class.priority,
        dport: w.class.dport,
        sport: 0,
        verb: w.class.verb,
    };
    match w.arrivals {
        Arrivals::Once { at } => {
            for (src, dsts) in &senders {
                let mut sizes = stream(&format!("size.{}", src.0));
                let all: Vec<HostId>;
                let dsts = if dsts.is_empty() {
                    all = (0..hosts).map(HostId).filter(|d| d != src).collect();
                    &all
                } else {
                    dsts
                };
                for &dst in dsts {
                    flows.push(flow(*src, dst, w.sizes.draw(&mut sizes), at));
                }
            }
        }
        Arrivals::Poisson {
            load,
            host_rate,
            start,
            duration,
            like_traffic_gen,
        } => {
            if !(load > 0.0 && load.is_finite()) {
                return err(format!("load must be above 0, found {load}"));
            }
            if duration == Ps::ZERO {
                return err("the arrival window (duration) is empty".into());
            }
            let mean_gap_ps = w.sizes.mean() * 8.0 / (load * host_rate.bps() as f64) * 1e12;
            let end = start + duration;
            for (src, dsts) in &senders {
                let h = src.0;
                let mut gaps = stream(&format!("arrivals.{h}"));
                let mut pick_dst = stream(&format!("dst.{h}"));
                let mut sizes = stream(&format!("size.{h}"));
                let mut gap = || Ps((-(1.0 - unit_f64(&mut gaps)).ln() * mean_gap_ps) as u64);
                let mut t = start + gap();
                while t <= end {
                    let next = t + gap();
                    if like_traffic_gen && next > end {
                        break;
                    }
                    let dst = if dsts.is_empty() {
                        // Uniform among the others: draw from hosts - 1 and skip src.
                        let d = below(&mut pick_dst, hosts - 1);
                        HostId(if d >= h { d + 1 } else { d })
                    } else {
                        dsts[below(&mut pick_dst, dsts.len() as u32) as usize]
                    };
                    flows.push(flow(*src, dst, w.sizes.draw(&mut sizes), t));
                    t = next;
                }
            }
        }
    }
    Ok(rocesim_model::flow::merge(flows))
}

/// A uniformly random permutation of 0..n with no fixed point (n >= 2):
/// shuffles until one has none (about e tries on average).
fn derangement(n: u32, rng: &mut ChaCha8Rng) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    loop {
        for i in (1..n as usize).rev() {
            let j = below(rng, i as u32 + 1) as usize;
            p.swap(i, j);
        }
        if p.iter().enumerate().all(|(i, &v)| i as u32 != v) {
            return p;
        }
    }
}

/// The hosts of `set`, never `except`, in host order.
fn pick(
    set: &Hosts,
    except: HostId,
    hosts: u32,
    name: &str,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<HostId>, TrafficError> {
    let err = |m: String| Err(TrafficError(format!("workload `{name}`: {m}")));
    let others: Vec<HostId> = (0..hosts).map(HostId).filter(|&h| h != except).collect();
    match set {
        Hosts::All => Ok(others),
        Hosts::List(list) => {
            let mut v = list.clone();
            v.sort();
            v.dedup();
            if v.len() != list.len() {
                return err("a host is listed twice".into());
            }
            if let Some(h) = v.iter().find(|h| h.0 >= hosts || **h == except) {
                return err(if h.0 >= hosts {
                    format!("host {} does not exist ({hosts} hosts)", h.0)
                } else {
                    format!("host {} cannot send to itself", h.0)
                });
            }
            if v.is_empty() {
                return err("the host list is empty".into());
            }
            Ok(v)
        }
        Hosts::Random(n) => {
            let n = *n as usize;
            if n == 0 || n > others.len() {
                return err(format!(
                    "cannot pick {n} hosts out of {} others",
                    others.len()
                ));
            }
            let mut v = others;
            for i in 0..n {
                let j = i + below(rng, (v.len() - i) as u32) as usize;
                v.swap(i, j);
            }
            v.truncate(n);
            v.sort();
            Ok(v)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocesim_model::flow::Verb;

    fn wl(pattern: Pattern, arrivals: Arrivals) -> Workload {
        Workload {
            name: "t".into(),
            pattern,
            arrivals,
            sizes: Sizes::Fixed(1000),
            class: TrafficClass::default(),
        }
    }

    #[test]
    fn once_patterns() {
        let once = Arrivals::Once { at: Ps::from_us(5) };
        let a2a = generate(&wl(Pattern::AllToAll, once), 4, 1).unwrap();
        assert_eq!(a2a.len(), 12);
        assert!(
            a2a.iter()
                .all(|f| f.src != f.dst && f.start == Ps::from_us(5))
        );
        assert_eq!(
            a2a.iter().map(|f| f.id).collect::<Vec<_>>(),
            (0..12).collect::<Vec<_>>()
        );

        let perm = generate(&wl(Pattern::Permutation, once), 9, 1).unwrap();
        let mut dsts: Vec<u32> = perm.iter().map(|f| f.dst.0).collect();
        assert!(perm.iter().all(|f| f.src != f.dst));
        dsts.sort();
        assert_eq!(dsts, (0..9).collect::<Vec<_>>());
        assert_ne!(
            perm,
            generate(&wl(Pattern::Permutation, once), 9, 2).unwrap()
        );

        let incast = Pattern::Incast {
            receiver: HostId(3),
            senders: Hosts::Random(5),
        };
        let f = generate(&wl(incast, once), 16, 7).unwrap();
        assert_eq!(f.len(), 5);
        assert!(f.iter().all(|f| f.dst == HostId(3) && f.src != HostId(3)));
        let mut s: Vec<u32> = f.iter().map(|f| f.src.0).collect();
        s.dedup();
        assert_eq!(s.len(), 5);

        let fan = Pattern::OneToMany {
            sender: HostId(0),
            receivers: Hosts::List(vec![HostId(2), HostId(1)]),
        };
        let f = generate(&wl(fan, once), 4, 1).unwrap();
        assert_eq!(
            f.iter().map(|f| (f.src.0, f.dst.0)).collect::<Vec<_>>(),
            [(0, 1), (0, 2)]
        );
        assert!(
            f.iter()
                .all(|f| f.verb == Verb::Write && f.priority == 3 && f.dport == 100)
        );
    }

    #[test]
    fn bad_parameters() {
        let once = Arrivals::Once { at: Ps::ZERO };
        let e = |p: Pattern, hosts| generate(&wl(p, once), hosts, 1).unwrap_err().0;
        assert_eq!(
            e(Pattern::AllToAll, 1),
            "workload `t`: needs at least 2 hosts, the topology has 1"
        );
        assert_eq!(
            e(
                Pattern::Incast {
                    receiver: HostId(9),
                    senders: Hosts::All
                },
                4
            ),
            "workload `t`: receiver host 9 does not exist (4 hosts)"
        );
        assert_eq!(
            e(
                Pattern::Incast {
                    receiver: HostId(1),
                    senders: Hosts::Random(4)
                },
                4
            ),
            "workload `t`: cannot pick 4 hosts out of 3 others"
        );
        assert_eq!(
            e(
                Pattern::Incast {
                    receiver: HostId(1),
                    senders: Hosts::List(vec![HostId(1)])
                },
                4
            ),
            "workload `t`: host 1 cannot send to itself"
        );
        let poisson = Arrivals::Poisson {
            load: 0.0,
            host_rate: Rate::gbps(100),
            start: Ps::ZERO,
            duration: Ps::from_ms(1),
            like_traffic_gen: false,
        };
        assert_eq!(
            generate(&wl(Pattern::AllToAll, poisson), 4, 1)
                .unwrap_err()
                .0,
            "workload `t`: load must be above 0, found 0"
        );
    }
}
