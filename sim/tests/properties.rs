//! Random small networks and workloads: whatever the rates, delays, MTUs,
//! bond policy and loss, a run ends, conserves bytes per link, accounts for
//! every packet, completes everything on lossless links, and repeats
//! exactly.

use std::path::Path;

use proptest::prelude::*;
use rocesim::run::Summary;
use rocesim::scenario::{BuildOptions, build_world};
use rocesim::world::{QpStatus, World};

#[derive(Debug, Clone)]
struct Case {
    bonded: bool,
    policy: &'static str,
    rate: &'static str,
    delay_ns: u32,
    qps: u32,
    size: u32,
    iters: u32,
    mtu: u32,
    loss: f64,
    tool: &'static str,
    buffer_kib: u32,
    arp: &'static str,
}

fn case() -> impl Strategy<Value = Case> {
    (
        (
            any::<bool>(),
            prop::sample::select(vec!["layer2", "layer2+3", "layer3+4"]),
            prop::sample::select(vec!["10Gbps", "25Gbps", "100Gbps"]),
            0u32..5000,
            1u32..6,
            1u32..200_000,
        ),
        (
            1u32..4,
            prop::sample::select(vec![1500u32, 4200]),
            prop::sample::select(vec![0.0, 0.0, 0.002]),
            prop::sample::select(vec!["ib_write_bw", "ib_send_bw", "ib_read_bw"]),
            prop::sample::select(vec![64u32, 32768]),
            prop::sample::select(vec!["instant", "frames"]),
        ),
    )
        .prop_map(
            |(
                (bonded, policy, rate, delay_ns, qps, size),
                (iters, mtu, loss, tool, buffer_kib, arp),
            )| Case {
                bonded,
                policy,
                rate,
                delay_ns,
                qps,
                size,
                iters,
                mtu,
                loss,
                tool,
                buffer_kib,
                arp,
            },
        )
}

fn toml(c: &Case) -> String {
    let mut t = format!(
        "seed = 3\n[sim]\narp = \"{}\"\n[[switch]]\nname = \"sw\"\nbuffer = \"{}KiB\"\n",
        c.arp, c.buffer_kib
    );
    if c.bonded {
        t.push_str("  [[switch.lag]]\n  name = \"po1\"\n  ports = [\"p1\", \"p2\"]\n");
    }
    for (h, ip) in [("a", "10.0.0.1/24"), ("b", "10.0.0.2/24")] {
        t.push_str(&format!("[[host]]\nname = \"{h}\"\n"));
        let nics = if c.bonded && h == "a" { 2 } else { 1 };
        for n in 0..nics {
            t.push_str(&format!(
                "  [[host.nic]]\n  name = \"eth{n}\"\n  mtu = {}\n",
                c.mtu
            ));
            if nics == 1 {
                t.push_str(&format!("  ip = \"{ip}\"\n"));
            }
        }
        if nics == 2 {
            t.push_str(&format!(
                "  [[host.bond]]\n  name = \"bond0\"\n  mode = \"802.3ad\"\n  slaves = [\"eth0\", \"eth1\"]\n  xmit_hash_policy = \"{}\"\n  ip = \"{ip}\"\n",
                c.policy
            ));
        }
    }
    let mut links = vec![("a.eth0", "sw.p1"), ("b.eth0", "sw.p3")];
    if c.bonded {
        links.push(("a.eth1", "sw.p2"));
    }
    for (a, b) in links {
        t.push_str(&format!(
            "[[link]]\na = \"{a}\"\nb = \"{b}\"\nrate = \"{}\"\ndelay = \"{}ns\"\nloss = {}\n",
            c.rate, c.delay_ns, c.loss
        ));
    }
    t.push_str(&format!(
        "[[workload]]\ntool = \"{}\"\nclient = \"a\"\nserver = \"b\"\nsize = {}\nqps = {}\niters = {}\ntimeout = 12\nretry_cnt = 7\n",
        c.tool, c.size, c.qps, c.iters
    ));
    t
}

fn run(text: &str) -> (World, Summary) {
    let loaded = rocesim::scenario::load_str(Path::new("prop.toml"), text.to_string(), &[])
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut w = build_world(&loaded.scenario, &BuildOptions::default())
        .unwrap_or_else(|e| panic!("{}\n{text}", loaded.locate(&e)));
    w.run(loaded.scenario.sim.stop_at.map(|d| d.0), &mut ());
    let s = Summary::of(&loaded.name, &w, 0.0);
    (w, s)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn runs_end_conserve_and_repeat(c in case()) {
        let text = toml(&c);
        let (w, s) = run(&text);
        w.check_invariants().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let clients: Vec<_> = s.clients().collect();
        prop_assert_eq!(clients.len() as u32, c.qps);
        let lossless = c.loss == 0.0 && s.ports.iter().all(|p| p.counters.drops == 0);
        for q in &clients {
            prop_assert!(q.status != QpStatus::Running, "{:?}\n{}", q, text);
            if lossless {
                prop_assert_eq!(q.status, QpStatus::Success, "{}", text);
                prop_assert_eq!(q.retransmitted_packets, 0);
            }
            if q.status == QpStatus::Success {
                prop_assert_eq!(q.bytes_completed, u64::from(c.size) * u64::from(c.iters), "{}", text);
            }
        }
        // Same input, same seed: the same run.
        let (_, again) = run(&text);
        prop_assert_eq!(serde_json::to_string(&s).unwrap(), serde_json::to_string(&again).unwrap());
    }
}
