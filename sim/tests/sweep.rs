//! `rocesim sweep`: the grid runs in parallel but the table comes out in
//! grid order, identical whatever the number of jobs.

mod common;

use common::*;

/// `rocesim sweep scenarios/lag_hash.toml --set SET...` (more arguments
/// to be added).
fn sweep_lag_hash(sets: &[&str]) -> std::process::Command {
    let mut c = bin();
    c.arg("sweep").arg(scenario("lag_hash"));
    for s in sets {
        c.args(["--set", s]);
    }
    c
}

fn sweep(out: &std::path::Path, jobs: &str) -> std::process::Output {
    sweep_lag_hash(&[
        "workload.0.qps=1,2,4",
        "host.hostA.bond.bond0.xmit_hash_policy=layer3+4,layer2+3",
        "workload.0.size=256KiB",
        "workload.0.iters=2",
        "host.hostA.qpn_alloc=random",
        "host.hostB.qpn_alloc=random",
    ])
    .args([
        "--seeds", "1..5", "--jobs", jobs, "--format", "csv", "--out",
    ])
    .arg(out)
    .output()
    .unwrap()
}

#[test]
fn sweep_table_is_in_grid_order_whatever_the_jobs() {
    let a = tmp("sweep_j1");
    let b = tmp("sweep_j2");
    let oa = sweep(&a.join("s"), "1");
    let ob = sweep(&b.join("s"), "2");
    assert!(
        oa.status.success(),
        "{}",
        String::from_utf8_lossy(&oa.stderr)
    );
    assert!(
        ob.status.success(),
        "{}",
        String::from_utf8_lossy(&ob.stderr)
    );
    for f in ["sweep.csv", "sweep.json", "sweep.svg"] {
        assert_eq!(
            std::fs::read(a.join("s").join(f)).unwrap(),
            std::fs::read(b.join("s").join(f)).unwrap(),
            "{f}"
        );
    }
    assert!(a.join("s/sweep.png").exists());
    assert_eq!(oa.stdout, ob.stdout);
    let csv = String::from_utf8(oa.stdout).unwrap();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), 3 * 2 * 4);
    // Grid order: first axis slowest, seeds fastest.
    assert_eq!((rows[0][0], rows[0][1], rows[0][2]), ("1", "layer3+4", "1"));
    assert_eq!((rows[3][0], rows[3][1], rows[3][2]), ("1", "layer3+4", "4"));
    assert_eq!((rows[4][0], rows[4][1], rows[4][2]), ("1", "layer2+3", "1"));
    assert_eq!(rows[23][0], "4");
    // layer2+3 never beats one 100G slave; with 4 QPs under layer3+4 some
    // seed spreads them over both.
    for r in &rows {
        let g: f64 = r[3].parse().unwrap();
        if r[1] == "layer2+3" {
            assert!(g < 100.0, "{r:?}");
        }
    }
    assert!(
        rows.iter()
            .any(|r| r[0] == "4" && r[1] == "layer3+4" && r[3].parse::<f64>().unwrap() > 100.0),
        "{csv}"
    );
    // The balance columns are over the client's bond slaves, idle ones
    // included: one QP, or layer2+3, leaves one slave at 0 bytes (the
    // server's ACK-only ports do not count).
    for r in &rows {
        let (max, min): (u64, u64) = (r[10].parse().unwrap(), r[11].parse().unwrap());
        assert!(max > 0, "{r:?}");
        if r[0] == "1" || r[1] == "layer2+3" {
            assert_eq!(min, 0, "{r:?}");
        }
    }
}

/// Fixed QPNs and no loss: nothing draws on the seed, so averaging over
/// seeds means nothing, and the sweep says so; random QPNs silence it.
#[test]
fn a_sweep_whose_seeds_change_nothing_says_so() {
    let dir = tmp("sweep_same");
    let run = |extra: &[&str], out: &str| {
        let o = sweep_lag_hash(&[
            "workload.0.qps=2,4",
            "workload.0.size=64KiB",
            "workload.0.iters=1",
        ])
        .args(extra)
        .args(["--seeds", "1..4", "--jobs", "1", "--out"])
        .arg(dir.join(out))
        .output()
        .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stderr).unwrap()
    };
    let fixed = run(&[], "fixed");
    assert!(fixed.contains("every seed gave the same result"), "{fixed}");
    let random = run(
        &[
            "--set",
            "host.hostA.qpn_alloc=random",
            "--set",
            "host.hostB.qpn_alloc=random",
        ],
        "random",
    );
    assert!(
        !random.contains("every seed gave the same result"),
        "{random}"
    );
}

/// The table's mean lies between its min and max even when rounding the
/// sum would push it out: 32 seeds of 16 QPs under layer3+4 in lag_hash
/// all give 174.255 Gb/s, and the plain mean of 32 copies is 174.25500000000008,
/// which printed as 174.26 beside a max of 174.25.
#[test]
fn the_mean_of_equal_seeds_is_their_value() {
    let g = [174.255; 32];
    let plain = g.iter().sum::<f64>() / g.len() as f64;
    assert!(plain > 174.255, "the case this test is about: {plain}");
    let (mean, min, max) = rocesim::run::mean_min_max(&g).unwrap();
    assert_eq!((mean, min, max), (174.255, 174.255, 174.255));
    assert_eq!(format!("{mean:.2}"), format!("{max:.2}"));
    let (mean, min, max) = rocesim::run::mean_min_max(&[1.0, 2.0, 6.0]).unwrap();
    assert_eq!((mean, min, max), (3.0, 1.0, 6.0));
    assert_eq!(rocesim::run::mean_min_max(&[]), None);
}
