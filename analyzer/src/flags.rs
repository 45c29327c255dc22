//! What the subcommands' flags mean, in one place for all of them.

use roce_codec::PortSet;

/// The RoCEv2 ports of `--roce-port` in every subcommand: 4791 and the
/// given ones (one meaning for one flag). `None` when there are too many.
pub fn roce_port_set(extra: &[u16]) -> Option<PortSet> {
    let mut ports = vec![roce_codec::hash::ROCE_V2_UDP_DPORT];
    for &p in extra {
        if !ports.contains(&p) {
            ports.push(p);
        }
    }
    PortSet::new(&ports)
}
