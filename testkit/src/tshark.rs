//! tshark, the independent decoder the tests compare with and the benches
//! race against: which fields are read, and one way to run it.
//!
//! ```text
//!  BTH_FIELDS        the 9 BTH fields tshark 4.0 names (benches, dissect checks)
//!  dissect_fields()  every field `roce-pcap dissect` shows that tshark has too
//!  fields(file, extra, names)    tshark -r FILE EXTRA -T fields -e NAME...   → rows of columns
//!  fields_discarded(file, names) the same with the output thrown away (benches)
//! ```

use std::path::Path;
use std::process::{Command, Stdio};

use crate::ci::skip;

/// Every BTH field tshark 4.0 names, in header order.
pub const BTH_FIELDS: [&str; 9] = [
    "infiniband.bth.opcode",
    "infiniband.bth.se",
    "infiniband.bth.m",
    "infiniband.bth.padcnt",
    "infiniband.bth.tver",
    "infiniband.bth.p_key",
    "infiniband.bth.destqp",
    "infiniband.bth.a",
    "infiniband.bth.psn",
];

/// The fields before the BTH: frame, tags, IP, UDP or TCP (ICMP's type to
/// tell its quoted UDP header from the frame's), GRH.
const OUTER_FIELDS: &[&str] = &[
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "vlan.id",
    "vlan.priority",
    "ieee8021ad.id",
    "ieee8021ad.priority",
    "ip.src",
    "ip.dst",
    "ip.dsfield.dscp",
    "ip.dsfield.ecn",
    "ipv6.src",
    "ipv6.dst",
    "ipv6.tclass.dscp",
    "ipv6.tclass.ecn",
    "udp.srcport",
    "udp.dstport",
    "tcp.srcport",
    "tcp.dstport",
    "icmp.type",
    "infiniband.grh.sgid",
    "infiniband.grh.dgid",
    "infiniband.grh.tclass",
    "infiniband.grh.paylen",
    "infiniband.grh.nxthdr",
    "infiniband.grh.hoplmt",
];

/// The fields after the BTH: its reserved bits (FECN, BECN), the extended
/// headers, the ICRC, MAC control.
const INNER_FIELDS: &[&str] = &[
    "infiniband.reserved",
    "infiniband.rdeth.eecnxt",
    "infiniband.deth.q_key",
    "infiniband.deth.srcqp",
    "infiniband.reth.va",
    "infiniband.reth.r_key",
    "infiniband.reth.dmalen",
    "infiniband.atomiceth.swapdt",
    "infiniband.atomiceth.cmpdt",
    "infiniband.aeth.syndrome",
    "infiniband.aeth.msn",
    "infiniband.atomicacketh.origremdt",
    "infiniband.immdt",
    "infiniband.ieth",
    "infiniband.invariant.crc",
    "macc.opcode",
    "macc.cbfc.enbv",
    "macc.cbfc.pause_time.c0",
    "macc.cbfc.pause_time.c1",
    "macc.cbfc.pause_time.c2",
    "macc.cbfc.pause_time.c3",
    "macc.cbfc.pause_time.c4",
    "macc.cbfc.pause_time.c5",
    "macc.cbfc.pause_time.c6",
    "macc.cbfc.pause_time.c7",
    "macc.pause_time",
];

/// Every tshark field that has a counterpart in `roce-pcap dissect`'s JSON.
pub fn dissect_fields() -> Vec<&'static str> {
    OUTER_FIELDS
        .iter()
        .chain(&BTH_FIELDS)
        .chain(INNER_FIELDS)
        .copied()
        .collect()
}

/// Whether `tshark --version` runs.
pub fn installed() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// tshark's command name, or `None` when it is not installed (the test
/// skips; under `ROCESIM_CI=1` it fails).
pub fn tshark() -> Option<&'static str> {
    if installed() {
        Some("tshark")
    } else {
        skip("tshark is not installed")
    }
}

fn command(file: &Path, extra: &[&str], names: &[&str]) -> Command {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file).args(extra).args(["-T", "fields"]);
    cmd.args(names.iter().flat_map(|f| ["-e", f]));
    cmd
}

/// `tshark -r FILE EXTRA -T fields -e NAME...`: one row per frame, one
/// column per name (empty where tshark shows nothing). Fails the test if
/// tshark does.
pub fn fields(file: &Path, extra: &[&str], names: &[&str]) -> Vec<Vec<String>> {
    let out = command(file, extra, names).output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed on {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("tshark prints UTF-8")
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// The same run with the output thrown away, as a bench times it; `None`
/// if tshark could not run or failed.
pub fn fields_discarded(file: &Path, names: &[&str]) -> Option<()> {
    let status = command(file, &[], names)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .ok()?;
    status.success().then_some(())
}
