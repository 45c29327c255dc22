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
    if let Err(e) =
        rocesim::scenario::load_str(Path::new("scenarios/README.md"), text.to_string(), &[])
    {
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
    let err = fails_at(
        "ce_mark",
        "delay = \"1us\"",
        "delay = \"1us\"\nce_mark = 1.5",
    );
    says(&err, &["key `link[0].ce_mark`", "must be a probability"]);
}
