//! Bad input: every error names the file, line, column and key, gives a
//! hint where one helps, exits with status 2, and leaves no run directory.

mod common;

use common::*;
use std::path::Path;

fn lag_text() -> String {
    std::fs::read_to_string(scenario("lag_hash")).unwrap()
}

/// Line (1-based) of the first occurrence of `needle` in `text`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle}"))
        + 1
}

fn fails(name: &str, text: &str, sets: &[&str]) -> String {
    let dir = tmp(&format!("err_{name}"));
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let out = dir.join("run");
    let o = run(&file, &out, sets);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(2), "{name}: {err}");
    assert!(!out.exists(), "{name}: a failed run left {}", out.display());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains(".tmp-"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "{name}: temp dirs left: {leftovers:?}"
    );
    assert!(!err.contains("panicked"), "{name}: {err}");
    assert!(
        err.contains(&file.display().to_string()) || sets.iter().any(|s| err.contains(s)),
        "{name}: error does not name the file: {err}"
    );
    err
}

/// `lag_hash` with `from` replaced by `to` once fails, naming the line
/// of the last line of `to`.
fn fails_at(name: &str, from: &str, to: &str) -> String {
    let t = lag_text().replacen(from, to, 1);
    let err = fails(name, &t, &[]);
    at(line_of(&t, to.trim().lines().last().unwrap()), &err);
    err
}

/// The error says every one of `parts`.
fn says(err: &str, parts: &[&str]) {
    for p in parts {
        assert!(err.contains(p), "no {p:?} in: {err}");
    }
}

fn at(file_line: usize, err: &str) {
    assert!(
        err.contains(&format!(".toml:{file_line}:")),
        "expected line {file_line} in: {err}"
    );
}

#[test]
fn unknown_key_with_did_you_mean() {
    let err = fails_at(
        "unknown_key",
        "  mtu = 9000              # jumbo frames: RoCE path MTU 4096",
        "  mttu = 9000",
    );
    says(
        &err,
        &[
            "key `host[0].nic[0]",
            "unknown key `mttu`",
            "hint: did you mean `mtu`?",
        ],
    );
}

#[test]
fn bad_unit() {
    let err = fails_at("bad_unit", "rate = \"100Gbps\"", "rate = \"100GB\"");
    says(&err, &["key `link[0].rate`", "unknown rate unit `GB`"]);
}

#[test]
fn dangling_reference() {
    let err = fails_at("dangling", "b = \"sw1.p1\"", "b = \"sw2.p1\"");
    says(
        &err,
        &[
            "key `link[0].b`",
            "no host or switch `sw2`",
            "did you mean `sw1`?",
        ],
    );
    let err = fails_at(
        "dangling_iface",
        "client = \"hostA.bond0\"",
        "client = \"hostA.bond1\"",
    );
    assert!(err.contains("did you mean `bond0`?"), "{err}");
}

#[test]
fn impossible_mtu() {
    let err = fails_at("mtu", "tx_depth = 128\n", "tx_depth = 128\nmtu = 5000\n");
    says(
        &err,
        &[
            "key `workload[0].mtu`",
            "RoCE MTU 5000 is impossible",
            "256, 512, 1024, 2048 or 4096",
        ],
    );
}

#[test]
fn roce_v1_cannot_cross_a_router() {
    let t = lag_text()
        .replace("roce = \"v2\"", "roce = \"v1\"")
        .replacen("ip = \"10.0.0.2/24\"", "ip = \"10.0.1.2/24\"", 1);
    let err = fails("v1_routed", &t, &[]);
    at(line_of(&t, "server = \"hostB.bond0\""), &err);
    says(
        &err,
        &["RoCE v1 frames cannot be routed", "hint: use roce = \"v2\""],
    );
}

#[test]
fn bad_set_names_the_flag() {
    let err = fails(
        "set_key",
        &lag_text(),
        &["host.hostA.bond.bond0.xmit_hash_polcy=layer2+3"],
    );
    assert!(
        err.contains("--set host.hostA.bond.bond0.xmit_hash_polcy=layer2+3"),
        "{err}"
    );
    assert!(err.contains("did you mean `xmit_hash_policy`?"), "{err}");
    let err = fails(
        "set_value",
        &lag_text(),
        &["host.hostA.bond.bond0.xmit_hash_policy=layer3"],
    );
    assert!(err.contains("unknown value `layer3`"), "{err}");
    let err = fails("set_host", &lag_text(), &["host.hostC.roce=v1"]);
    assert!(err.contains("no entry named `hostC`"), "{err}");
}

#[test]
fn unreadable_scenario_and_bad_flags() {
    let o = bin().args(["run", "/nonexistent/x.toml"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("/nonexistent/x.toml: cannot read the scenario")
    );
    let o = bin()
        .arg("sweep")
        .arg(scenario("lag_hash"))
        .args(["--seeds", "5..x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--seeds `5..x`"));
}

#[test]
fn check_validates_without_writing() {
    let dir = tmp("check_only");
    let o = bin()
        .current_dir(&dir)
        .arg("check")
        .arg(scenario("retry_exceeded"))
        .output()
        .unwrap();
    assert!(o.status.success());
    assert!(!Path::new(&dir).join("runs").exists());
    // `qps = 1`: one connection, whose two ends are the QPs a user might
    // otherwise count as two connections.
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("2 hosts, 1 switch, 3 links, 1 RC connection (2 QPs, both ends)"),
        "{out}"
    );
}

#[test]
fn readme_format_example_uses_only_real_keys() {
    let readme = std::fs::read_to_string(repo().join("scenarios/README.md")).unwrap();
    let start = readme.find("```toml\n").unwrap() + 8;
    let end = start + readme[start..].find("```").unwrap();
    let text = &readme[start..end];
    // Paths in it (`cdf = "WebSearch"`) resolve beside the README.
    let path = repo().join("scenarios/README.md");
    if let Err(e) = rocesim::scenario::load_str(&path, text.to_string(), &[]) {
        panic!("{e}");
    }
}

#[test]
fn a_killed_runs_temp_dir_is_cleaned_up_by_the_next_run() {
    let dir = tmp("stale_tmp");
    // A run killed by Ctrl-C leaves `.<out>.tmp-<pid>` behind; no process
    // has this pid (above the default pid_max of 4194304).
    let stale = dir.join(".run.tmp-4999999");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("summary.json"), "{").unwrap();
    run_ok(&scenario("retry_exceeded"), &dir.join("run"), &[]);
    assert!(!stale.exists());
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["run"]);
}

#[test]
fn outputs_never_replace_a_file_or_device() {
    // An atomic rename onto /dev/null would turn it into a regular file for
    // every process on the machine.
    let dir = tmp("not_a_run_dir");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    for args in [
        vec!["run", "--out"],
        vec!["sweep", "--seeds", "1..3", "--out"],
    ] {
        let o = bin()
            .arg(args[0])
            .arg(scenario("retry_exceeded"))
            .args(&args[1..])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stderr).contains("refusing to replace it"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
    }
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

/// A message longer than the PSNs it may span at a small MTU used to be
/// refused by `post_send` at run time, silently: the QP stayed `running`
/// with nothing sent and the run "succeeded".
#[test]
fn message_too_long_for_the_mtu() {
    let sets = ["workload.0.size=1GiB", "workload.0.mtu=256"];
    let err = fails("msg_too_long", &lag_text(), &sets);
    says(
        &err,
        &["--set workload.0.size=1GiB", "key `workload[0].size`"],
    );
    assert!(
        err.contains("at most 536870912 bytes at RoCE MTU 256"),
        "{err}"
    );
    assert!(err.contains("hint:"), "{err}");
    // At MTU 4096 the same message is fine.
    let o = bin()
        .args(["check"])
        .arg(scenario("lag_hash"))
        .args(["--set", "workload.0.size=1GiB"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The scenario name is the default run directory `runs/<name>/`: `../x`
/// wrote outside runs/, and an empty name made runs/ itself the run dir.
#[test]
fn scenario_name_must_be_a_plain_directory_name() {
    for bad in ["../escaped", "", "a/b"] {
        let name = format!("name = \"{bad}\"");
        let err = fails_at(&format!("name{}", bad.len()), "name = \"lag_hash\"", &name);
        assert!(err.contains("key `name`") && err.contains("hint:"), "{err}");
    }
}

/// `rocesim run ... | head -1`: the reader goes away before the summary
/// table is printed. println! panicked on the broken pipe (exit 101 and
/// a backtrace); the run directory is written by then, so the output
/// just stops.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = tmp("closed_stdout");
    let mut child = bin()
        .arg("run")
        .arg(scenario("retry_exceeded"))
        .arg("--out")
        .arg(dir.join("run"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the child gets to print anything.
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(dir.join("run/summary.json").is_file());
}

/// `rocesim import-hpcc` in a directory laid out as the reference's
/// (`mix/` beside the config): the run's exit status and stderr.
fn import_hpcc(name: &str, config: &str, files: &[(&str, &str)], args: &[&str]) -> (i32, String) {
    let dir = tmp(&format!("import_{name}"));
    std::fs::create_dir_all(dir.join("mix")).unwrap();
    std::fs::write(dir.join("run.cfg"), config).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    let out = dir.join("out.toml");
    let o = bin()
        .arg("import-hpcc")
        .arg(dir.join("run.cfg"))
        .args(args)
        .arg("--out")
        .arg(&out)
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!err.contains("panicked"), "{name}: {err}");
    if o.status.code() != Some(0) {
        assert!(
            !out.exists(),
            "{name}: a failed import wrote {}",
            out.display()
        );
    }
    (o.status.code().unwrap_or(-1), err)
}

// L2_ACK_INTERVAL: left at the reference's default (0) its senders ignore
// every ACK, which import-hpcc refuses (tests/import_hpcc.rs).
const CFG: &str = "TOPOLOGY_FILE mix/topo.txt\nFLOW_FILE mix/flows.txt\nL2_ACK_INTERVAL 1\n";
const TOPO: &str = "3 1 2\n0\n0 1 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n";
const FLOWS: &str = "1\n1 2 3 100 1000 2\n";

#[test]
fn import_hpcc_reports_bad_input_at_its_file_line_and_field() {
    let ok = [("mix/topo.txt", TOPO), ("mix/flows.txt", FLOWS)];
    let (code, err) = import_hpcc("ok", CFG, &ok, &[]);
    assert_eq!(code, 0, "{err}");
    // By base name: the config says exp/flows.txt, the file is mix/flows.txt... not beside it.
    let cfg = "TOPOLOGY_FILE other/topo.txt\nFLOW_FILE mix/flows.txt\nL2_ACK_INTERVAL 1\n";
    let (code, err) = import_hpcc(
        "basename",
        cfg,
        &[("topo.txt", TOPO), ("mix/flows.txt", FLOWS)],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    // A missing file names the key and where it looked.
    let (code, err) = import_hpcc("missing", CFG, &[("mix/topo.txt", TOPO)], &[]);
    assert_eq!(code, 2);
    says(
        &err,
        &["run.cfg", "FLOW_FILE mix/flows.txt", "no such file"],
    );
    // --flows overrides the config's.
    let (code, err) = import_hpcc(
        "override",
        CFG,
        &[("mix/topo.txt", TOPO), ("f2.txt", FLOWS)],
        &["--flows", "f2.txt"],
    );
    assert_eq!(code, 0, "{err}");
    // An unknown config key, with its line.
    let (code, err) = import_hpcc("unknown", &format!("{CFG}BUFFER_SIZ 32\n"), &ok, &[]);
    assert_eq!(code, 2);
    says(
        &err,
        &["run.cfg:4", "unknown key `BUFFER_SIZ`", "BUFFER_SIZE"],
    );
    // A malformed flow line: file, line and field.
    let (code, err) = import_hpcc(
        "malformed",
        CFG,
        &[
            ("mix/topo.txt", TOPO),
            ("mix/flows.txt", "1\n1 2 3 100 lots 2\n"),
        ],
        &[],
    );
    assert_eq!(code, 2);
    says(&err, &["flows.txt:2", "field 5"]);
    // A link to a node the topology does not have.
    let bad = "3 1 2\n0\n0 1 100Gbps 0.001ms 0\n0 7 100Gbps 0.001ms 0\n";
    let (code, err) = import_hpcc(
        "unknown_node",
        CFG,
        &[("mix/topo.txt", bad), ("mix/flows.txt", FLOWS)],
        &[],
    );
    assert_eq!(code, 2);
    says(&err, &["topo.txt:4", "7"]);
    // A flow from a switch.
    let (code, err) = import_hpcc(
        "flow_switch",
        CFG,
        &[
            ("mix/topo.txt", TOPO),
            ("mix/flows.txt", "1\n0 2 3 100 1000 2\n"),
        ],
        &[],
    );
    assert_eq!(code, 2);
    says(&err, &["flows.txt", "node 0 is a switch"]);
}

/// Errors in the generated fabric and flows point at the key.
#[test]
fn topology_and_traffic_errors_name_their_key() {
    let ls = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { rate = \"100Gbps\" }\n";
    let err = fails(
        "no_k",
        "[topology]\nkind = \"fat-tree\"\nhost_link = { rate = \"100Gbps\" }\n",
        &[],
    );
    says(&err, &["key `topology`", "needs `k`"]);
    let err = fails("kind", "[topology]\nkind = \"fat-three\"\n", &[]);
    says(&err, &["fat-three", "fat-tree"]);
    let ev = "[[topology.link_event]]\nbetween = [\"leaf0\", \"spine9\"]\nat = \"1us\"\nstate = \"down\"\n";
    let err = fails("link_event", &format!("{ls}{ev}"), &[]);
    says(
        &err,
        &[
            "key `topology.link_event[0].between`",
            "no node `spine9` in the fabric",
        ],
    );
    let ev = ev.replace("spine9", "leaf1");
    let err = fails("link_event_none", &format!("{ls}{ev}"), &[]);
    says(&err, &["no link between `leaf0` and `leaf1`"]);
    let err = fails("link_loss", &format!("{ls}link_loss = 1.5\n"), &[]);
    says(
        &err,
        &[
            "key `topology.link_loss`",
            "1.5 is not a probability",
            "between 0 and 1",
        ],
    );
    let err = fails(
        "receiver",
        &format!("{ls}[[traffic]]\npattern = \"incast\"\nreceiver = \"host9\"\nsize = \"1KB\"\n"),
        &[],
    );
    says(
        &err,
        &["key `traffic[0].receiver`", "no host named `host9`"],
    );
    let err = fails(
        "cdf",
        &format!(
            "{ls}[[traffic]]\npattern = \"all-to-all\"\ncdf = \"NoSuch\"\nload = 0.3\nduration = \"1ms\"\n"
        ),
        &[],
    );
    says(&err, &["key `traffic[0].cdf`", "NoSuch.txt"]);
    let err = fails(
        "load",
        &format!("{ls}[[traffic]]\npattern = \"all-to-all\"\nsize = \"1KB\"\nload = 0.3\n"),
        &[],
    );
    says(&err, &["key `traffic[0].load`", "duration"]);
    // A generated host's key set from the command line.
    let err = fails(
        "set_generated",
        &format!("{ls}[[traffic]]\npattern = \"all-to-all\"\nsize = \"1KB\"\n"),
        &["host.host1.nic.eth0.mtu=lots"],
    );
    says(&err, &["host.host1.nic.eth0.mtu=lots"]);
}

/// Interface names are Linux's (the run directory has `sysfs/<host>/
/// class/net/<name>`): a `/` or a 16-character name is refused where it
/// is written.
#[test]
fn interface_names_are_linux_names() {
    // The bond's name line is the first `name = "bond0"`.
    let err = fails_at("ifname_slash", "name = \"bond0\"", "name = \"bond/0\"");
    says(
        &err,
        &[
            "key `host[0].bond[0].name`",
            "`bond/0` is no Linux interface name",
            "hint: 1 to 15 characters",
        ],
    );
    let t = lag_text().replacen("name = \"eth0\"", "name = \"eth0123456789012\"", 1);
    let t = t.replacen("\"eth0\"", "\"eth0123456789012\"", 1);
    let err = fails("ifname_long", &t, &[]);
    says(
        &err,
        &[
            "key `host[0].nic[0].name`",
            "`eth0123456789012` is no Linux interface name",
        ],
    );
}

/// An output directory that cannot be written: the error names `--out`
/// and the directory that refused, the exit status is 1 (an output
/// error), and nothing is left behind.
#[test]
fn an_unwritable_output_directory_is_named() {
    let dir = tmp("unwritable_out");
    let file = dir.join("notes.txt");
    std::fs::write(&file, "mine").unwrap();
    // A parent that is a file, and a directory without write permission
    // (which root may still write: that case is checked only where the
    // permission holds).
    let ro = dir.join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    let ro_holds = std::fs::write(ro.join("probe"), "").is_err();
    let mut cases = vec![(
        file.join("run"),
        format!("cannot create {}", file.display()),
    )];
    if ro_holds {
        cases.push((
            ro.join("run"),
            format!("cannot write into {}", ro.display()),
        ));
    }
    for (out, want) in cases {
        let o = run(&scenario("retry_exceeded"), &out, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        says(&err, &[&format!("--out {}: ", out.display()), &want]);
        assert!(!err.contains("panicked"), "{err}");
    }
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    let _ = std::fs::remove_file(ro.join("probe"));
    assert_eq!(std::fs::read_dir(&ro).unwrap().count(), 0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

/// lag_hash with `[switch.ecn]` lines after sw1's `trust`.
fn ecn_fails(name: &str, lines: &str) -> String {
    fails_at(
        name,
        "trust = \"dscp\"\n",
        &format!("trust = \"dscp\"\n  [switch.ecn]\n  priorities = [4]\n{lines}"),
    )
}

#[test]
fn ecn_thresholds_are_checked_at_their_key() {
    let err = ecn_fails(
        "ecn_kmin",
        "  kmax = \"400KB\"\n  pmax = 0.2\n  kmin = \"1600KB\"\n",
    );
    says(
        &err,
        &[
            "key `switch[0].ecn.kmin`: Kmin (1600000 bytes) is above Kmax (400000 bytes) at 100Gbps",
            "hint: marking ramps up from kmin to kmax; kmin = kmax marks every packet above it",
        ],
    );
    let err = ecn_fails(
        "ecn_kmax",
        "  kmin = \"400KB\"\n  pmax = 0.2\n  kmax = \"64MiB\"\n",
    );
    says(
        &err,
        &[
            "key `switch[0].ecn.kmax`: Kmax (67108864 bytes at 100Gbps) is above the switch buffer (33554432 bytes): no queue gets there",
            "hint: lower kmax, or enlarge the switch's `buffer`",
        ],
    );
    let err = ecn_fails(
        "ecn_speed",
        "  kmax = \"1600KB\"\n  pmax = 0.2\n  kmin = { \"25Gbps\" = \"100KB\", \"400Gbps\" = \"1600KB\" }\n",
    );
    says(
        &err,
        &[
            "key `switch[0].ecn.kmin`: has no value for 100Gbps, the speed of port `sw1.p1`",
            "hint: add \"100Gbps\" = ... to the table (it names 25Gbps, 400Gbps)",
        ],
    );
    let err = ecn_fails(
        "ecn_pmax",
        "  kmin = \"400KB\"\n  kmax = \"1600KB\"\n  pmax = 20\n",
    );
    says(
        &err,
        &["key `switch[0].ecn.pmax`: 20 at 100Gbps is not a probability in [0, 1]"],
    );
    let err = ecn_fails(
        "ecn_unknown",
        "  kmin = \"400KB\"\n  kmax = \"1600KB\"\n  pmax = 0.2\n  mark = \"enqeue\"\n",
    );
    says(
        &err,
        &[
            "key `switch[0].ecn.mark`: unknown value `enqeue`",
            "hint: did you mean `enqueue`?",
        ],
    );
}

/// lag_hash with `[switch.mmu]` lines after sw1's `trust`.
fn mmu_fails(name: &str, lines: &str) -> String {
    fails_at(
        name,
        "trust = \"dscp\"\n",
        &format!("trust = \"dscp\"\n  [switch.mmu]\n{lines}"),
    )
}

/// The Mellanox rule in the hint, by hand: 9216 + 9216 + 3840 B and
/// 130 B per 100 m per Gb/s (100 m at 100 Gb/s: 13000 B) = 35272 B.
#[test]
fn mmu_keys_are_checked_at_their_key() {
    // A missing key: the error names its table's line.
    let t = lag_text().replacen(
        "trust = \"dscp\"\n",
        "trust = \"dscp\"\n  [switch.mmu]\n  lossless = [4]\n",
        1,
    );
    let err = fails("mmu_no_headroom", &t, &[]);
    at(line_of(&t, "[switch.mmu]"), &err);
    says(
        &err,
        &[
            "key `switch[0].mmu.headroom`: lossless priorities [4] need headroom",
            "hint: the Mellanox rule for a 100Gbps port with 100 m of cable and 9216-byte MTUs is 35272 bytes",
        ],
    );
    let err = mmu_fails(
        "mmu_headroom_buffer",
        "  lossless = [4]\n  headroom = \"16MiB\"\n",
    );
    says(
        &err,
        &[
            "key `switch[0].mmu.headroom`: 33554432 bytes cannot hold the reserves (0 bytes) and the headroom (",
            "the reserves and headroom of",
            "hint: lower `headroom` or `reserve`, or enlarge the switch's `buffer`",
        ],
    );
    let err = mmu_fails("mmu_prio", "  headroom = \"40KB\"\n  lossless = [8]\n");
    says(
        &err,
        &["key `switch[0].mmu.lossless[0]`: priority 8 does not exist"],
    );
}

/// lag_hash with `[host.pfc]` on hostB (before its NICs).
#[test]
fn host_pfc_thresholds_are_checked_at_their_key() {
    let err = fails_at(
        "host_pfc_xoff",
        "qpn_base = 0x2c0\n",
        "qpn_base = 0x2c0\n  [host.pfc]\n  priorities = [4]\n  rx_buffer = \"64KB\"\n  xoff = \"128KB\"\n",
    );
    says(
        &err,
        &[
            "key `host[1].pfc.xoff`: XOFF at 128000 bytes is above the receive buffer (64000 bytes)",
            "hint: xoff below rx_buffer",
        ],
    );
}

/// The NIC profile keys: an unknown profile, a DCQCN knob out of range, a
/// knob on a host that runs no DCQCN, an ACK priority beyond 7, a link's
/// CE-marking share beyond 1.
#[test]
fn nic_profile_and_dcqcn_keys() {
    let rxe = "profile = \"rxe\"           #";
    let err = fails_at("profile_typo", rxe, "profile = \"connect-x\" #");
    says(
        &err,
        &[
            "key `host[0].profile`",
            "unknown NIC profile `connect-x`",
            "did you mean `connectx`?",
        ],
    );
    // A table of the first host, placed before its NICs.
    let table = |name: &str, profile: &str, table: &str, key: &str| {
        let t = lag_text()
            .replacen(rxe, &format!("profile = \"{profile}\" #"), 1)
            .replacen(
                "  [[host.nic]]",
                &format!("  [host.{table}]\n  {key}\n  [[host.nic]]"),
                1,
            );
        let err = fails(name, &t, &[]);
        at(line_of(&t, key), &err);
        err
    };
    let err = table("dcqcn_range", "connectx", "dcqcn", "rpg_gd = 99");
    says(&err, &["key `host[0].dcqcn.rpg_gd`", "99"]);
    let err = table("dcqcn_off", "rxe", "dcqcn", "rpg_ai_rate = 10");
    says(
        &err,
        &[
            "key `host[0].dcqcn.rpg_ai_rate`",
            "DCQCN is off on this host (profile `rxe`)",
            "enable = true",
        ],
    );
    let err = table("ack_prio", "hpcc", "transport", "ack_priority = 9");
    says(
        &err,
        &[
            "key `host[0].transport.ack_priority`",
            "priority 9 is outside 0..=7",
        ],
    );
    let err = table("ack_queue", "hpcc", "transport", "ack_queue = 8");
    says(
        &err,
        &[
            "key `host[0].transport.ack_queue`",
            "queue 8 is outside 0..=7",
            "\"priority\" keeps ACKs in the queue of the priority they carry",
        ],
    );
    let err = table("window_word", "hpcc", "transport", "window_bytes = \"bdp\"");
    says(
        &err,
        &["window_bytes", "`bdp` is not \"path\" or a number of bytes"],
    );
    let err = table("window_neg", "hpcc", "transport", "window_bytes = -5");
    says(
        &err,
        &[
            "key `host[0].transport.window_bytes`",
            "-5 bytes is not a window",
        ],
    );
    let err = table("follows", "hpcc", "transport", "window_follows_rate = true");
    says(
        &err,
        &[
            "key `host[0].transport.window_follows_rate`",
            "there is no window to follow the rate",
            "window_bytes",
        ],
    );
    let err = table("header_bytes", "hpcc", "transport", "header_bytes = 5000");
    says(
        &err,
        &[
            "key `host[0].transport.header_bytes`",
            "5000 bytes is more than the 1024",
            "header_bytes = 48, ack_bytes = 60",
        ],
    );
    let err = table("ack_bytes", "connectx", "transport", "ack_bytes = 2000");
    says(&err, &["key `host[0].transport.ack_bytes`", "2000 bytes"]);
    let err = table("ack_queue_word", "hpcc", "transport", "ack_queue = \"top\"");
    says(
        &err,
        &["ack_queue", "`top` is not \"priority\" or a priority 0..=7"],
    );
    // [host.cc]: an unknown algorithm, a knob of another algorithm's, a
    // knob out of range, and DCTCP where the receivers send CNPs (ConnectX)
    // rather than the echo on the ACK it reads.
    let err = table("cc_typo", "hpcc", "cc", "algorithm = \"dctpc\"");
    says(
        &err,
        &[
            "key `host[0].cc.algorithm`",
            "unknown congestion control `dctpc`",
            "did you mean `dctcp`?",
        ],
    );
    let err = table("cc_knob_off", "hpcc", "cc.dctcp", "g = 0.5");
    says(
        &err,
        &[
            "key `host[0].cc.dctcp.g`",
            "sets `g` but the algorithm is `dcqcn`",
        ],
    );
    let t = lag_text()
        .replacen(rxe, "profile = \"hpcc\" #", 1)
        .replacen(
            "  [[host.nic]]",
            "  [host.cc]\n  algorithm = \"dctcp\"\n  [host.cc.dctcp]\n  g = 1.5\n  [[host.nic]]",
            1,
        );
    let err = fails("cc_g", &t, &[]);
    at(line_of(&t, "g = 1.5"), &err);
    says(&err, &["key `host[0].cc.dctcp.g`", "1.5 is outside [0, 1]"]);
    // HPCC: a knob while another algorithm runs, one out of range, and no
    // base RTT where no [[traffic]] flow has a path to take it from.
    let err = table("cc_hp_off", "hpcc", "cc.hpcc", "u_target = 0.9");
    says(
        &err,
        &[
            "key `host[0].cc.hpcc.u_target`",
            "sets `u_target` but the algorithm is `dcqcn`",
        ],
    );
    let hpcc = |knobs: &str| {
        lag_text()
            .replacen(rxe, "profile = \"hpcc\" #", 1)
            .replacen(
                "  [[host.nic]]",
                &format!(
                    "  [host.cc]\n  algorithm = \"hpcc\"\n  [host.cc.hpcc]\n{knobs}\n  [[host.nic]]"
                ),
                1,
            )
    };
    let t = hpcc("  base_rtt = \"8us\"\n  u_target = 1.5");
    let err = fails("cc_hp_u", &t, &[]);
    at(line_of(&t, "u_target = 1.5"), &err);
    says(
        &err,
        &["key `host[0].cc.hpcc.u_target`", "1.5 is outside (0, 1]"],
    );
    let err = fails("cc_hp_rtt", &hpcc("  u_target = 0.9"), &[]);
    says(
        &err,
        &[
            "key `host[0].cc.hpcc.base_rtt`",
            "HPCC needs a base RTT",
            "base_rtt = \"8.3us\"",
        ],
    );
    // HPCC-PINT: its knobs in HPCC's table, refused under plain HPCC, and
    // checked.
    let t = hpcc("  base_rtt = \"8us\"\n  pint_prob = 0.5");
    let err = fails("cc_pint_off", &t, &[]);
    at(line_of(&t, "pint_prob = 0.5"), &err);
    says(
        &err,
        &[
            "key `host[0].cc.hpcc.pint_prob`",
            "sets `pint_prob` but the algorithm is `hpcc`, not `hpcc_pint`",
            "algorithm = \"hpcc_pint\"",
        ],
    );
    let pint =
        |knobs: &str| hpcc(knobs).replacen("algorithm = \"hpcc\"", "algorithm = \"hpcc_pint\"", 1);
    let t = pint("  base_rtt = \"8us\"\n  pint_log_base = 1.0001");
    let err = fails("cc_pint_base", &t, &[]);
    at(line_of(&t, "pint_log_base = 1.0001"), &err);
    says(
        &err,
        &[
            "key `host[0].cc.hpcc.pint_log_base`",
            "1.0001 needs 17-bit powers; the reference carries at most 16",
        ],
    );
    let t = pint("  base_rtt = \"8us\"\n  pint_prob = 0.0");
    let err = fails("cc_pint_prob", &t, &[]);
    says(
        &err,
        &["key `host[0].cc.hpcc.pint_prob`", "0 is outside (0, 1]"],
    );
    let err = table("cc_cnp", "connectx", "cc", "algorithm = \"dctcp\"");
    says(
        &err,
        &[
            "key `host[0].cc.algorithm`",
            "`dctcp` reads the ECN echo on ACKs, but its receivers send CNPs",
            "cnp_on_ack = true",
        ],
    );
    let err = fails_at(
        "ce_mark",
        "delay = \"1us\"",
        "delay = \"1us\"\nce_mark = 1.5",
    );
    says(&err, &["key `link[0].ce_mark`", "must be a probability"]);
    let err = fails_at(
        "tx_step",
        "sample_interval = \"100us\"",
        "sample_interval = \"100us\"\ntx_time_step = \"2us\"",
    );
    says(
        &err,
        &[
            "key `sim.tx_time_step`",
            "outside 1ps..=1us",
            "\"1ns\" truncates",
        ],
    );
}

/// `sim.partitions`: a scenario that cannot be split (lag_hash with ARP
/// on the wire) is refused at the key's line, naming why; a cut into more
/// parts than a tier has switches too, and a count above the most.
#[test]
fn partitions_that_cannot_be_had_are_refused_at_their_key() {
    let err = fails_at(
        "partitions_arp",
        "[sim]\n",
        "[sim]\narp = \"frames\"\npartitions = 2\n",
    );
    says(
        &err,
        &[
            "key `sim.partitions`",
            "ARP on the wire",
            "need one partition",
            "partitions = 1",
        ],
    );
    let ls = "[topology]\nkind = \"leaf-spine\"\nleaves = 2\nspines = 1\nhosts_per_leaf = 2\nhost_link = { rate = \"100Gbps\", delay = \"1us\" }\n";
    let err = fails(
        "partitions_three",
        &format!(
            "[sim]\npartitions = 3\n{ls}[[traffic]]\npattern = \"all-to-all\"\nsize = \"1KB\"\n"
        ),
        &[],
    );
    says(
        &err,
        &[
            "key `sim.partitions`",
            "cannot split this scenario",
            "part 2 of 3 empty",
            "fewer parts",
        ],
    );
    at(2, &err);
    let err = fails(
        "partitions_many",
        &format!(
            "[sim]\npartitions = 65\n{ls}[[traffic]]\npattern = \"all-to-all\"\nsize = \"1KB\"\n"
        ),
        &[],
    );
    says(&err, &["key `sim.partitions`", "65 partitions: at most 64"]);
}

#[test]
fn output_keys_are_checked_at_their_line() {
    let t = lag_text() + "[output]\nsysfz = false\n";
    let err = fails("output_unknown", &t, &[]);
    says(&err, &["unknown key `sysfz`", "did you mean `sysfs`?"]);
    at(line_of(&t, "sysfz = false"), &err);
    let t = lag_text() + "[output]\nsysfs = \"no\"\n";
    let err = fails("output_type", &t, &[]);
    says(&err, &["key `output.sysfs`", "expected a boolean"]);
    at(line_of(&t, "sysfs = \"no\""), &err);
}
