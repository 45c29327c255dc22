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

/// The grid of the sharding tests: 2 x 3 points, small runs, seeds that
/// matter (random QPNs).
const SHARD_GRID: [&str; 8] = [
    "--seeds",
    "1..4",
    "--set",
    "workload.0.qps=1,2",
    "--set",
    "workload.0.iters=1",
    "--set",
    "host.hostA.qpn_alloc=random",
];

fn sweep_cmd(out: &std::path::Path, extra: &[&str]) -> std::process::Output {
    let o = bin()
        .arg("sweep")
        .arg(scenario("lag_hash"))
        .args(SHARD_GRID)
        .args(["--jobs", "1"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// What an unsharded sweep of the grid writes, to compare merges with.
fn whole_sweep(d: &std::path::Path) -> std::path::PathBuf {
    let whole = d.join("whole");
    sweep_cmd(&whole, &[]);
    whole
}

fn assert_same_sweep(a: &std::path::Path, b: &std::path::Path) {
    for f in ["sweep.csv", "sweep.json", "sweep.svg"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f} of {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn merge(dirs: &[std::path::PathBuf], out: &std::path::Path) -> std::process::Output {
    bin()
        .args(["sweep", "merge"])
        .args(dirs)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn three_shards_as_three_processes_merge_into_the_unsharded_sweep() {
    let d = tmp("sweep_shards");
    let whole = whole_sweep(&d);
    let shards: Vec<_> = (0..3).map(|k| d.join(format!("shard{k}"))).collect();
    // Three processes at once, as three machines would run them.
    let children: Vec<_> = shards
        .iter()
        .enumerate()
        .map(|(k, out)| {
            bin()
                .arg("sweep")
                .arg(scenario("lag_hash"))
                .args(SHARD_GRID)
                .args(["--jobs", "1", "--shard", &format!("{k}/3"), "--out"])
                .arg(out)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // Each shard ran its round-robin third of the 6 points.
    let rows = |k: usize| std::fs::read_to_string(shards[k].join("sweep.csv")).unwrap();
    for k in 0..3 {
        assert_eq!(rows(k).lines().count(), 1 + 2, "shard {k}:\n{}", rows(k));
    }
    // Given in any order.
    let merged = d.join("merged");
    let o = merge(
        &[shards[2].clone(), shards[0].clone(), shards[1].clone()],
        &merged,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_same_sweep(&whole, &merged);

    let o = merge(&shards[..2], &d.join("m_missing"));
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("shard 2/3 missing"), "{e}");
    let o = merge(
        &[shards[0].clone(), shards[1].clone(), shards[1].clone()],
        &d.join("m_dup"),
    );
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("shard 1/3 is given twice"), "{e}");
    // A shard of another sweep (other seeds) is not taken.
    let other = d.join("other");
    let o = bin()
        .arg("sweep")
        .arg(scenario("lag_hash"))
        .args(["--seeds", "1..2", "--set", "workload.0.qps=1,2"])
        .args(["--set", "workload.0.iters=1", "--shard", "2/3", "--out"])
        .arg(&other)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = merge(
        &[shards[0].clone(), shards[1].clone(), other],
        &d.join("m_other"),
    );
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("of another sweep"), "{e}");
}

/// The shipped Slurm script, run by bash as an array task would be (the
/// variables Slurm sets, rocesim on the PATH), then merged.
#[test]
fn the_slurm_example_runs_as_an_array() {
    let d = tmp("sweep_slurm");
    let whole = whole_sweep(&d);
    let script = scenario("lag_hash")
        .parent()
        .unwrap()
        .join("../scripts/cluster/sweep.slurm");
    let rocesim_dir = std::path::Path::new(env!("CARGO_BIN_EXE_rocesim"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        rocesim_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for k in 0..3 {
        let o = std::process::Command::new("bash")
            .arg(&script)
            .arg(scenario("lag_hash"))
            .args(SHARD_GRID)
            .current_dir(&d)
            .env("PATH", &path)
            .env("SLURM_ARRAY_TASK_ID", k.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "3")
            .env("SLURM_CPUS_PER_TASK", "1")
            .env_remove("JOB_COMPLETION_INDEX")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let shards: Vec<_> = (0..3)
        .map(|k| d.join("shards").join(k.to_string()))
        .collect();
    let merged = d.join("merged");
    let o = merge(&shards, &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_same_sweep(&whole, &merged);
}

/// The Kubernetes example's container command, as the Job controller
/// runs it in each pod (JOB_COMPLETION_INDEX set, `$(VAR)` expanded), on
/// a smaller grid and local paths.
#[test]
fn the_kubernetes_example_command_runs_as_an_indexed_job() {
    let d = tmp("sweep_k8s");
    let yaml = std::fs::read_to_string(
        scenario("lag_hash")
            .parent()
            .unwrap()
            .join("../scripts/cluster/sweep-indexed-job.yaml"),
    )
    .unwrap();
    let line = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("command: "))
        .expect("a command line");
    let command: Vec<String> = serde_json::from_str(line).expect("a flow sequence of strings");
    let completions: usize = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("completions: "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(command[0], "rocesim");
    let shard_at = command.iter().position(|a| a == "--shard").unwrap();
    assert_eq!(command[shard_at + 1], format!("auto/{completions}"));
    // The same command on this test's grid: its scenario and flags, the
    // YAML's --shard and --out (with the volume under the temp dir).
    let mut whole_args = vec![
        "sweep".to_string(),
        scenario("lag_hash").display().to_string(),
    ];
    whole_args.extend(SHARD_GRID.iter().map(|s| s.to_string()));
    let out_at = command.iter().position(|a| a == "--out").unwrap();
    let results = d.join("results");
    for k in 0..completions {
        let mut args = whole_args.clone();
        args.extend(command[shard_at..shard_at + 2].iter().cloned());
        args.push("--out".into());
        args.push(
            command[out_at + 1]
                .replace("/results", &results.display().to_string())
                .replace("$(JOB_COMPLETION_INDEX)", &k.to_string()),
        );
        let o = bin()
            .args(&args)
            .env("JOB_COMPLETION_INDEX", k.to_string())
            .env_remove("SLURM_ARRAY_TASK_ID")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let shards: Vec<_> = (0..completions)
        .map(|k| results.join("shards").join(k.to_string()))
        .collect();
    let merged = d.join("merged");
    let o = merge(&shards, &merged);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_same_sweep(&whole_sweep(&d), &merged);
}

/// scenarios/cc_compare.toml as its comments run it, on 200 µs of flows:
/// one run per algorithm, each finishing every flow, each reading its own
/// signals (the same flows, different completion times); HPCC, reading
/// the switches' telemetry, holds the least buffer of them.
#[test]
fn cc_compare_sweeps_the_algorithms() {
    let out = tmp("sweep_cc_compare");
    let o = bin()
        .arg("sweep")
        .arg(scenario("cc_compare"))
        .args([
            "--set",
            "topology.host.cc.algorithm=dcqcn,dctcp,timely,hpcc",
        ])
        .args(["--set", "traffic.0.duration=200us", "--jobs", "1"])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    let algs: Vec<&str> = rows
        .iter()
        .map(|r| r["params"]["topology.host.cc.algorithm"].as_str().unwrap())
        .collect();
    assert_eq!(algs, ["dcqcn", "dctcp", "timely", "hpcc"]);
    let ok: Vec<u64> = rows.iter().map(|r| r["qps_ok"].as_u64().unwrap()).collect();
    assert!(ok[0] > 0 && ok.iter().all(|&n| n == ok[0]), "{ok:?}");
    assert!(rows.iter().all(|r| r["qps_failed"] == 0 && r["drops"] == 0));
    let end: Vec<u64> = rows
        .iter()
        .map(|r| r["sim_time_ns"].as_u64().unwrap())
        .collect();
    let mut distinct = end.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "{end:?}");
    let peak: Vec<u64> = rows
        .iter()
        .map(|r| r["peak_switch_buffer_bytes"].as_u64().unwrap())
        .collect();
    assert!(peak[3] < peak[1] && peak[3] < peak[2], "{peak:?}");
    assert!(
        rows.iter()
            .all(|r| r["max_link_utilisation"].as_f64().unwrap() > 0.0)
    );
}

/// A sweep of a scenario with a collective addresses its NCCL variables
/// (`collective.<name>.env.KEY`) like any key and reports the first
/// collective's busbw at its largest size: each row's is the one
/// `rocesim run` prints for the same point and seed.
#[test]
fn a_collective_sweep_reports_each_runs_busbw() {
    let d = tmp("sweep_nccl");
    let key = "collective.allreduce.env.NCCL_IB_QPS_PER_CONNECTION";
    let o = bin()
        .arg("sweep")
        .arg(scenario("nccl_ecmp"))
        .args(["--set", &format!("{key}=1,4")])
        .args(["--set", "collective.allreduce.maxbytes=4MiB"])
        .args(["--set", "collective.allreduce.minbytes=4MiB"])
        .args(["--seeds", "1..3", "--out"])
        .arg(d.join("s"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(table.contains("busbw GB/s mean"), "{table}");
    let csv = std::fs::read_to_string(d.join("s/sweep.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (qps, seed, busbw) = (col(key), col("seed"), col("busbw_GBps"));
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        let s = run_ok(
            &scenario("nccl_ecmp"),
            &d.join(format!("run_{}_{}", r[qps], r[seed])),
            &[
                &format!("{key}={}", r[qps]),
                "collective.allreduce.maxbytes=4MiB",
                "collective.allreduce.minbytes=4MiB",
                &format!("seed={}", r[seed]),
            ],
        );
        let want = s["collectives"][0]["busbw_GBps"].as_f64().unwrap();
        let got: f64 = r[busbw].parse().unwrap();
        assert_eq!(got, want, "{r:?}");
        assert!(got > 0.0);
    }
    // The plot is of busbw.
    let svg = std::fs::read_to_string(d.join("s/sweep.svg")).unwrap();
    assert!(svg.contains("busbw at the largest size"), "svg");
}
