//! `[[collective]] connect = "socket"`: NCCL's out-of-band set-up of each
//! network connection (`rocesim_model::world::nccl_connect`), planned at
//! build: the listening proxy's out-of-band address (`ncclIbIfAddr`, found
//! as `ncclFindInterfaces` does), the ports and sequence numbers the
//! kernels draw, the neighbours the sockets and then the QPs resolve, and
//! the metadata each side sends.

use std::collections::HashSet;

use core::net::{Ipv4Addr, SocketAddrV4};

use roce_codec::nccl::{ConnectionMetadata, LINK_LAYER_ETHERNET, ibv_mtu};

use super::neighbours::{Behind, Learned, resolve_steps};
use crate::diagnostic::{KeyPath, ModelError};
use rocesim_model::rng::{below, component_rng};
use rocesim_model::world::World;
use rocesim_model::world::nccl_connect::NcclSetup;
use rocesim_model::world::neigh::Step;
use rocesim_model::world::place::Endpoint;

/// Whether interface `name` is in an `NCCL_SOCKET_IFNAME`-style list:
/// prefixes, `^` to exclude, `=` for exact names, an optional `:port`
/// after a name (`matchIfList`).
fn if_listed(name: &str, list: &str) -> bool {
    let (mut s, mut exclude, mut exact) = (list.trim(), false, false);
    if let Some(r) = s.strip_prefix('^') {
        (s, exclude) = (r, true);
    }
    if let Some(r) = s.strip_prefix('=') {
        (s, exact) = (r, true);
    }
    let hit = s
        .split(',')
        .filter_map(|i| i.split(':').next())
        .filter(|p| !p.is_empty())
        .any(|p| {
            if exact {
                name == p
            } else {
                name.starts_with(p)
            }
        });
    hit != exclude
}

/// The interface and address NCCL's IB transport listens on at host `h`:
/// the first interface with an IPv4 address that `NCCL_SOCKET_IFNAME`
/// lists; without it the first `ib*` one, else the first that is not
/// `docker*`, `lo*` or `virbr*` (`ncclFindInterfaces`, facts §4.1).
pub(super) fn oob_iface(
    w: &World,
    h: u32,
    ifname: Option<&str>,
    at: &KeyPath,
) -> Result<(u32, Ipv4Addr), ModelError> {
    let host = &w.hosts[h as usize];
    let with_ip = || {
        host.ifaces
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.ip.map(|n| (i as u32, n.addr, f.name.as_str())))
    };
    let pick = |list: &str| with_ip().find(|(_, _, n)| if_listed(n, list));
    let found = match ifname {
        Some(l) => pick(l),
        None => pick("ib").or_else(|| pick("^docker,lo,virbr")),
    };
    match found {
        Some((i, ip, _)) => Ok((i, ip)),
        None => {
            let l = ifname.unwrap_or("");
            Err(ModelError::new(
                at.key("env").key("NCCL_SOCKET_IFNAME"),
                format!(
                    "NCCL_SOCKET_IFNAME = \"{l}\" matches no interface with an address on host `{}`",
                    host.name
                ),
            )
            .did_you_mean(l, host.ifaces.iter().map(|f| f.name.as_str())))
        }
    }
}

/// One network connection's socket: the listener and both ends' ports and
/// initial sequence numbers.
pub(super) struct OobSocket {
    pub listener: (u32, u32, Ipv4Addr),
    pub ports: (u16, u16),
    pub isn: [u32; 2],
}

impl OobSocket {
    /// The peer each end's socket names: [the sender's, the receiver's].
    pub fn peers(&self, w: &World, sender: u32) -> [SocketAddrV4; 2] {
        let h = &w.hosts[sender as usize];
        let src = h
            .unbound_route(self.listener.2)
            .ok()
            .and_then(|r| h.iface(r.egress).ip)
            .map_or(Ipv4Addr::UNSPECIFIED, |n| n.addr);
        [
            SocketAddrV4::new(self.listener.2, self.ports.0),
            SocketAddrV4::new(src, self.ports.1),
        ]
    }
}

/// The sockets of the connections `ends` (sender, receiver): the listening
/// port bound to 0 and the connecting socket's port both come from
/// Linux's ephemeral range (32768–60999), distinct on each host, and the
/// initial sequence numbers are random: draws of the seed.
pub(super) fn plan_sockets(
    w: &World,
    name: &str,
    ends: &[(Endpoint, Endpoint)],
    ifname: Option<&str>,
    at: &KeyPath,
) -> Result<Vec<OobSocket>, ModelError> {
    let mut rng = component_rng(w.seed, &format!("nccl-socket:{name}"));
    let mut used: HashSet<(u32, u16)> = HashSet::new();
    let mut port = |h: u32, rng: &mut _| loop {
        let p = 32768 + below(rng, 60999 - 32768 + 1) as u16;
        if used.insert((h, p)) {
            return p;
        }
    };
    let mut out = Vec::new();
    for (s, r) in ends {
        let (iface, ip) = oob_iface(w, r.host, ifname, at)?;
        let listen = port(r.host, &mut rng);
        let client = port(s.host, &mut rng);
        let isn = [below(&mut rng, u32::MAX), below(&mut rng, u32::MAX)];
        out.push(OobSocket {
            listener: (r.host, iface, ip),
            ports: (listen, client),
            isn,
        });
    }
    Ok(out)
}

/// The neighbours of one connection with its set-up on the wire: the
/// sender's socket to the listener and the listener's reply, then each
/// QP's RTR to its peer's GID (`world::neigh` steps 1, 2 on the
/// out-of-band addresses, 3, 4 on the GIDs). Returns the QPs' MACs.
pub(super) fn resolve(
    w: &World,
    (s, r): (&Endpoint, &Endpoint),
    sock: &OobSocket,
    learned: &mut Learned,
    behind: &mut Behind,
) -> Result<([u8; 6], [u8; 6]), String> {
    let sender = (s.host, s.iface, s.ip);
    let steps = [Step::ClientSocket, Step::ServerSocketReply];
    resolve_steps(
        w,
        sender,
        sock.listener,
        &steps,
        learned,
        &mut Vec::new(),
        behind,
    )
    .map_err(|(_, e)| format!("NCCL's out-of-band socket: {e}"))?;
    let steps = [Step::ServerRoce, Step::ClientRoce];
    let receiver = (r.host, r.iface, r.ip);
    let (c, d, _) = resolve_steps(
        w,
        sender,
        receiver,
        &steps,
        learned,
        &mut Vec::new(),
        behind,
    )
    .map_err(|(_, e)| e)?;
    Ok((c, d))
}

/// One end of a connection, for its metadata.
pub(super) struct MetaEnd {
    pub ep: Endpoint,
    pub qpns: Vec<u32>,
    /// NCCL's index of the NIC on its host, and its RDMA device name.
    pub dev: i32,
    pub hca: String,
    pub pmtu: u32,
}

/// The set-up of one connection: each side's `ncclIbConnectionMetadata`.
/// The receiver copies the sender's TC and SL (facts §4.1). Memory keys
/// and addresses are not modelled: the values stand for the sender's CTS
/// FIFO and the receiver's completion records.
pub(super) fn setup(
    sock: &OobSocket,
    ends: [MetaEnd; 2],
    (tc, sl): (u8, u8),
    workload: u32,
) -> NcclSetup {
    let meta = |e: &MetaEnd, salt: u64| {
        let q0 = e.qpns.first().copied().unwrap_or(0);
        ConnectionMetadata {
            qpns: e.qpns.clone(),
            lid: 0,
            ib_port: 1,
            mtu: ibv_mtu(e.pmtu),
            link_layer: LINK_LAYER_ETHERNET,
            gid: rocesim_model::packet::gid(e.ep.ip),
            rkey: (salt as u32) << 16 | (q0 & 0xffff),
            addr: 0x7f00_0000_0000 | salt << 36 | u64::from(q0) << 12,
            dev_name: e.hca.clone(),
            tc: i32::from(tc),
            sl: i32::from(sl),
        }
    };
    let [s, r] = ends;
    NcclSetup::new(
        s.ep.host,
        sock.listener,
        sock.ports,
        [meta(&s, 1), meta(&r, 2)],
        [s.dev, r.dev],
        workload,
        sock.isn,
    )
}

#[cfg(test)]
mod tests {
    use super::if_listed;

    #[test]
    fn ifname_lists_match_like_nccl() {
        assert!(if_listed("eth0", "eth"));
        assert!(!if_listed("eth0", "=eth"));
        assert!(if_listed("eth0", "=eth0"));
        assert!(!if_listed("eth0", "^eth"));
        assert!(if_listed("ib0", "^docker,lo,virbr"));
        assert!(!if_listed("lo", "^docker,lo,virbr"));
        assert!(if_listed("ens1f0", "eth,ens:1234"));
    }
}
