//! Workloads: their endpoints and transport settings, checked; then the
//! neighbours both ends resolve, QPNs and PSNs, and the queue pairs placed
//! on their ports (a bond picks the slave).

use std::collections::HashMap;

use core::net::Ipv4Addr;

use roce_codec::Psn;

use super::names::{Nodes, host_key, root};
use super::neighbours::{Behind, Learned, resolve_conn};
use crate::diagnostic::{KeyPath, ModelError};
use crate::schema::{ArpMode, Connect, RoceMode, Scenario, Tool, VerbCfg, WorkloadCfg};
use rocesim_model::engine::Event;
use rocesim_model::net::roce_mtu;
use rocesim_model::rng::component_rng;
use rocesim_model::time::Ps;
use rocesim_model::transport::{
    MAX_MSG_LEN, MessageSpec, PerftestOp, PerftestSpec, QpConfig, Verb, Workload, WorkloadError,
    WorkloadSpec, max_message_len, udp_sport,
};
use rocesim_model::world::World;
use rocesim_model::world::arp::Conn;
use rocesim_model::world::cm::{CmEnd, CmSetup};
use rocesim_model::world::connect::SocketSetup;
use rocesim_model::world::flows::PendingFlow;
use rocesim_model::world::host::IfaceKind;
use rocesim_model::world::neigh::Step;
use rocesim_model::world::place::{Endpoint, QpKnobs, Side, add_qp, modes};
use rocesim_model::world::qp::{Role, WorkloadSlot};

pub(super) fn add_workloads(w: &mut World, sc: &Scenario, nodes: &Nodes) -> Result<(), ModelError> {
    let mut qpns = super::qpns::Qpns::default();
    let mut behind = Behind::default();
    // A fabric run has a workload per flow and makes two QPs when each
    // starts: vectors grown by doubling would end up to a third empty,
    // 20 MB of an FbHdp run's 100,000 flows.
    w.workloads.reserve_exact(sc.workloads.len());
    for (wi, wc) in sc.workloads.iter().enumerate() {
        add_workload(w, sc, nodes, wi, wc, &mut qpns, &mut behind)?;
    }
    for (ci, cc) in sc.collectives.iter().enumerate() {
        super::collective::add_collective(w, sc, ci, cc, &mut qpns, &mut behind)?;
    }
    w.qps.reserve_exact(2 * w.pending.len());
    if w.workloads.is_empty() {
        return Err(ModelError::new(root(), "the scenario has no [[workload]]").hint(
            "add e.g. [[workload]] tool = \"ib_write_bw\" client = \"hostA\" server = \"hostB\"",
        ));
    }
    Ok(())
}

fn add_workload(
    w: &mut World,
    sc: &Scenario,
    nodes: &Nodes,
    wi: usize,
    wc: &WorkloadCfg,
    qpns: &mut super::qpns::Qpns,
    behind: &mut Behind,
) -> Result<(), ModelError> {
    let at = root().key("workload").index(wi);
    let client = resolve_endpoint(w, sc, nodes, &wc.client, at.key("client"))?;
    let server = resolve_endpoint(w, sc, nodes, &wc.server, at.key("server"))?;
    let pmtu = check_pair(w, wc, &at, &client, &server)?;
    check_settings(wc, &at)?;
    check_lag_port(w, &at, "client_lag_port", wc.client_lag_port, &client)?;
    check_lag_port(w, &at, "server_lag_port", wc.server_lag_port, &server)?;
    // A window of the QP's own path needs the path: flows have one.
    let per_path = w.hosts[client.host as usize]
        .profile
        .byte_window
        .is_some_and(|b| b.per_path);
    if per_path && !sc.flows.iter().any(|f| f.workload as usize == wi) {
        return Err(ModelError::new(
            super::names::host_key(client.host as usize)
                .key("transport")
                .key("window_bytes"),
            format!(
                "window_bytes = \"path\" needs the QP's path, which only flows of [[traffic]] have; \
                 [[workload]] {wi} is a perftest-style workload"
            ),
        )
        .hint("give a number of bytes, e.g. window_bytes = 52000"));
    }
    let seg = check_segments(w, &at, pmtu, [&client, &server])?;
    let workload = Workload::new(workload_spec(wc, seg, &at)?).map_err(|e| {
        // Point at the key the transport's check is about.
        let key = match &e {
            WorkloadError::OutOfRange { field, .. }
                if ["qps", "size", "tx_depth", "iters", "duration"].contains(field) =>
            {
                *field
            }
            WorkloadError::NoSuchQp { .. } => "message",
            _ => "tool",
        };
        ModelError::new(at.key(key), e.to_string())
    })?;
    // The verbs attributes; each end's NIC adds its own protocol constants.
    let cfg = QpConfig {
        pmtu,
        timeout: wc.timeout,
        retry_cnt: wc.retry_cnt,
        rnr_retry: wc.rnr_retry,
        min_rnr_timer: wc.min_rnr_timer,
        max_send_wr: wc.tx_depth,
        ..QpConfig::default()
    };
    cfg.validate()
        .map_err(|e| ModelError::new(at.key("tool"), e.to_string()))?;

    // Neighbours: the connection's set-up as the kernels make it.
    let mut learned = Learned::new();
    let mut snapshots = Vec::new();
    let (c_dmac, s_dmac) = resolve_conn(
        w,
        (client.host, client.iface, client.ip),
        (server.host, server.iface, server.ip),
        &mut learned,
        &mut snapshots,
        behind,
    )
    .map_err(|(about_server, e)| {
        ModelError::new(at.key(if about_server { "server" } else { "client" }), e)
    })?;
    if sc.sim.arp != ArpMode::Frames {
        // The kernels' tables after the set-up, for their own frames (an
        // ICMP error); with ARP frames they fill as the frames arrive.
        for ((h, iface, ip), mac) in learned {
            w.hosts[h as usize].neigh.insert((iface, ip), mac);
        }
    }

    let mut c_qpns = Vec::new();
    for _ in 0..wc.qps {
        c_qpns.push(qpns.allocate(w, sc, &client, &at)?);
    }
    let mut s_qpns = Vec::new();
    for _ in 0..wc.qps {
        s_qpns.push(qpns.allocate(w, sc, &server, &at)?);
    }

    let id = w.workloads.len() as u32;
    let name = wc.name.clone().unwrap_or_else(|| format!("workload{wi}"));
    // A flow's QPs are made when it starts (ARP on the wire needs them at
    // build time: those stay eager).
    let defer = sc.sim.arp != ArpMode::Frames
        && wc.qps == 1
        && sc.flows.first().is_some_and(|f| wi as u32 >= f.workload);
    let mut psn_rng = component_rng(w.seed, &format!("psn:{name}"));
    // Each end of a workload is one process: one user context per bond
    // device it uses (queue-affinity round robin).
    let mut contexts: HashMap<u32, u32> = HashMap::new();
    let (mut clients, mut servers) = (Vec::new(), Vec::new());
    let mut keys = Vec::new();
    for q in 0..wc.qps as usize {
        let (cq, sq) = (c_qpns[q], s_qpns[q]);
        let c_psn = Psn::new(rocesim_model::rng::below(&mut psn_rng, 1 << 24));
        let s_psn = Psn::new(rocesim_model::rng::below(&mut psn_rng, 1 << 24));
        keys.push([(cq, c_psn.value()), (sq, s_psn.value())]);
        let sport = udp_sport(cq, sq, wc.flow_label);
        let (c_mode, s_mode) = modes(w, &client, &server);
        let ends = [
            (
                Role::Client,
                client,
                server,
                [cq, sq],
                [c_psn, s_psn],
                c_dmac,
                c_mode,
            ),
            (
                Role::Server,
                server,
                client,
                [sq, cq],
                [s_psn, c_psn],
                s_dmac,
                s_mode,
            ),
        ];
        let sides = ends.map(|(role, local, remote, qpn, psn, dmac, mode)| Side {
            role,
            local,
            remote_ip: remote.ip,
            qpn,
            psn,
            dmac,
            sport,
            mode,
        });
        if defer {
            let i = w.pending.len() as u32;
            w.pending
                .push(PendingFlow::new(id, knobs_of(wc), cfg, sides));
            w.workloads.push(WorkloadSlot {
                name,
                workload,
                clients: Vec::new(),
            });
            w.sched.at(wc.start.0, Event::FlowStart { flow: i });
            return Ok(());
        }
        for side in sides {
            let role = side.role;
            let gidx = add_qp(w, &knobs_of(wc), cfg, &side, id, q as u32, &mut contexts);
            match role {
                Role::Client => clients.push(gidx),
                Role::Server => servers.push(gidx),
            }
        }
    }
    let socket = (wc.connect == Connect::Socket).then(|| {
        w.sockets.push(SocketSetup::new(
            w.seed,
            &name,
            (client.host, client.iface, client.ip),
            (server.host, server.iface, server.ip),
            keys.clone(),
            clients.clone(),
            (sc.sim.arp != ArpMode::Frames).then_some(snapshots),
        ));
        w.sockets.len() as u32 - 1
    });
    let cm = (wc.connect == Connect::RdmaCm).then(|| {
        let end = |ep: &Endpoint, dmac, q: u32| CmEnd {
            host: ep.host,
            iface: ep.iface,
            ip: ep.ip,
            dmac,
            l3: w.qps[q as usize].l3,
        };
        let ends = [
            end(&client, c_dmac, clients[0]),
            end(&server, s_dmac, servers[0]),
        ];
        let code = [256, 512, 1024, 2048, 4096]
            .iter()
            .position(|&m| m == pmtu)
            .map_or(3, |i| i as u8 + 1);
        w.cms.push(CmSetup::new(
            ends,
            keys.clone(),
            (clients.clone(), servers.clone()),
            wc.cm_answer,
            code,
        ));
        w.cms.len() as u32 - 1
    });
    w.workloads.push(WorkloadSlot {
        name,
        workload,
        clients: clients.clone(),
    });
    start(
        w,
        sc,
        wc,
        id,
        &client,
        &server,
        (c_dmac, s_dmac),
        (clients, servers),
        Setup { socket, cm },
    );
    Ok(())
}

/// `host` or `host.interface` to an interface with an address.
fn resolve_endpoint(
    w: &World,
    sc: &Scenario,
    nodes: &Nodes,
    s: &str,
    at: KeyPath,
) -> Result<Endpoint, ModelError> {
    let (hname, iname) = match s.split_once('.') {
        Some((h, i)) => (h, Some(i)),
        None => (s, None),
    };
    let Some(hi) = nodes.host(hname) else {
        return Err(ModelError::new(at, format!("no host `{hname}`"))
            .did_you_mean(hname, sc.hosts.iter().map(|h| h.name.as_str())));
    };
    let h = &w.hosts[hi];
    let ii = match iname {
        Some(i) => h.ifaces.iter().position(|f| f.name == i).ok_or_else(|| {
            ModelError::new(at.clone(), format!("host `{hname}` has no interface `{i}`"))
                .did_you_mean(i, h.ifaces.iter().map(|f| f.name.as_str()))
        })?,
        None => h
            .ifaces
            .iter()
            .position(|f| f.ip.is_some())
            .ok_or_else(|| {
                ModelError::new(
                    at.clone(),
                    format!("host `{hname}` has no interface with an address"),
                )
            })?,
    };
    let Some(ip) = h.ifaces[ii].ip else {
        return Err(ModelError::new(
            at,
            format!("interface `{s}` has no IP address, so it has no RoCE GID"),
        )
        .hint("give the NIC or bond an `ip`"));
    };
    Ok(Endpoint {
        host: hi as u32,
        iface: ii as u32,
        ip: ip.addr,
    })
}

/// Whether the two ends can talk RoCE at all; returns the path MTU.
fn check_pair(
    w: &World,
    wc: &WorkloadCfg,
    at: &KeyPath,
    client: &Endpoint,
    server: &Endpoint,
) -> Result<u32, ModelError> {
    if client.host == server.host {
        return Err(ModelError::new(
            at.key("server"),
            "client and server are on the same host; loopback is not modelled",
        ));
    }
    let (ch, sh) = (
        &w.hosts[client.host as usize],
        &w.hosts[server.host as usize],
    );
    let (c_if, s_if) = (ch.iface(client.iface), sh.iface(server.iface));
    let (c_ip, s_ip) = (c_if.ip.unwrap(), s_if.ip.unwrap());
    if ch.roce == RoceMode::V1 && !c_ip.contains(s_ip.addr) {
        return Err(ModelError::new(at.key("server"), format!("RoCE v1 frames cannot be routed, but {} ({c_ip}) and {} ({s_ip}) are in different subnets", wc.client, wc.server)).hint("use roce = \"v2\" on both hosts, or put them in one subnet"));
    }
    if c_ip.contains(s_ip.addr) && c_if.vlan != s_if.vlan {
        // Bridged (one subnet): the switches here are not VLAN-aware, and a
        // real bridge never forwards between two VLANs.
        let show = |v: Option<u16>| v.map_or("untagged".to_string(), |v| format!("on VLAN {v}"));
        return Err(ModelError::new(
            at.key("server"),
            format!(
                "{} is {} but {} is {}: no bridge forwards between them",
                wc.client,
                show(c_if.vlan),
                wc.server,
                show(s_if.vlan)
            ),
        )
        .hint("give both interfaces the same `vlan`"));
    }
    let max_mtu = roce_mtu(c_if.mtu).unwrap().min(roce_mtu(s_if.mtu).unwrap());
    match wc.mtu {
        None => Ok(max_mtu),
        Some(m) if ![256, 512, 1024, 2048, 4096].contains(&m) => Err(ModelError::new(
            at.key("mtu"),
            format!("RoCE MTU {m} is impossible"),
        )
        .hint("RoCE path MTUs are 256, 512, 1024, 2048 or 4096")),
        Some(m) if m > max_mtu => Err(ModelError::new(
            at.key("mtu"),
            format!(
                "RoCE MTU {m} does not fit: the interfaces' Ethernet MTUs allow at most {max_mtu}"
            ),
        )
        .hint("raise the NIC `mtu` (4200 or 9000 allow 4096)")),
        Some(m) => Ok(m),
    }
}

/// The verbs attributes and perftest flags, each in its range.
fn check_settings(wc: &WorkloadCfg, at: &KeyPath) -> Result<(), ModelError> {
    let err = |key: &str, msg: String| Err(ModelError::new(at.key(key), msg));
    if wc.qps == 0 || wc.qps > 16384 {
        return err("qps", format!("qps = {} must be 1..=16384", wc.qps));
    }
    if wc.timeout > 31 {
        let msg = format!("timeout = {} is a 5-bit exponent (0..=31)", wc.timeout);
        return err("timeout", msg);
    }
    if wc.retry_cnt > 7 {
        let msg = format!("retry_cnt = {} is a 3-bit count (0..=7)", wc.retry_cnt);
        return err("retry_cnt", msg);
    }
    if wc.rnr_retry > 7 {
        let msg = format!(
            "rnr_retry = {} is a 3-bit count (0..=7, 7 = infinite)",
            wc.rnr_retry
        );
        return err("rnr_retry", msg);
    }
    if wc.min_rnr_timer > 31 {
        return err(
            "min_rnr_timer",
            "min_rnr_timer is a 5-bit code (0..=31)".into(),
        );
    }
    if wc.sl > 7 {
        return err("sl", "service level must be 0..=7 on Ethernet".into());
    }
    if wc.tx_depth == 0 || wc.tx_depth > 8192 {
        return err("tx_depth", "tx_depth must be 1..=8192".into());
    }
    if wc.flow_label > 0xF_FFFF {
        return err("flow_label", "the flow label has 20 bits".into());
    }
    Ok(())
}

/// A QP's LAG port means something only on a bond whose RoCE LAG gives
/// each QP a port of its own (queue affinity): in hash mode the NIC's port
/// selection hashes every packet whatever port the QP was given (mlx5 core
/// lag/port_sel.c; commit a83bb5df2ac6 "RDMA/mlx5: Don't set tx affinity
/// when lag is in hash mode"), and active-backup sends on the active port.
/// Refused there rather than ignored, so that a scenario never pins in
/// vain.
fn check_lag_port(
    w: &World,
    at: &KeyPath,
    key: &str,
    port: Option<u8>,
    ep: &Endpoint,
) -> Result<(), ModelError> {
    use crate::schema::{BondMode, LagSelect};
    let Some(port) = port else { return Ok(()) };
    let h = &w.hosts[ep.host as usize];
    let f = &h.ifaces[ep.iface as usize];
    let IfaceKind::Bond(b) = f.kind else {
        return Err(ModelError::new(
            at.key(key),
            format!(
                "`{}.{}` is a NIC, not a bond: it has no LAG port to pick",
                h.name, f.name
            ),
        )
        .hint(format!("remove `{key}`, or run the QPs on a bond")));
    };
    let bond = &w.bonds[b as usize].bond;
    if bond.mode == BondMode::ActiveBackup || bond.lag != LagSelect::QueueAffinity {
        return Err(ModelError::new(
            at.key(key),
            format!(
                "bond `{}.{}` does not let a QP choose its port (mode = \"{}\", lag = \"{}\")",
                h.name,
                f.name,
                bond.mode.name(),
                bond.lag.name()
            ),
        )
        .hint("a QP's LAG port is set only on a balance-xor or 802.3ad bond with lag = \"queue-affinity\""));
    }
    let n = bond.slaves.len();
    if port == 0 || usize::from(port) > n {
        return Err(ModelError::new(
            at.key(key),
            format!(
                "{key} = {port}, but bond `{}.{}` has ports 1..={n}",
                h.name, f.name
            ),
        )
        .hint("LAG ports count from 1, in the order of the bond's `slaves`"));
    }
    Ok(())
}

/// The payload bytes per packet both ends' NIC profiles use (the larger:
/// messages are checked against it); each must fit the path MTU.
fn check_segments(
    w: &World,
    at: &KeyPath,
    pmtu: u32,
    ends: [&Endpoint; 2],
) -> Result<u32, ModelError> {
    let mut seg = pmtu;
    for ep in ends {
        let h = &w.hosts[ep.host as usize];
        let s = h.profile.segment_bytes;
        if s > pmtu {
            return Err(ModelError::new(
                host_key(ep.host as usize).key("transport").key("segment_bytes"),
                format!(
                    "host `{}` segments payload into {s}-byte packets, more than this workload's RoCE path MTU of {pmtu}",
                    h.name
                ),
            )
            .hint(format!("set `segment_bytes` to at most {pmtu}, or raise the MTU of {}'s NIC", at)));
        }
        if s != 0 {
            seg = seg.min(s);
        }
    }
    Ok(seg)
}

/// What the workload runs: a message list or a perftest tool. `pmtu` is
/// the payload per packet messages are checked against.
fn workload_spec(wc: &WorkloadCfg, pmtu: u32, at: &KeyPath) -> Result<WorkloadSpec, ModelError> {
    let verb = |v: VerbCfg| match v {
        VerbCfg::Write => Verb::Write,
        VerbCfg::WriteImm => Verb::WriteImm,
        VerbCfg::Send => Verb::Send,
        VerbCfg::SendImm => Verb::SendImm,
        VerbCfg::Read => Verb::Read,
    };
    if wc.tool == Tool::Messages {
        if wc.messages.is_empty() {
            return Err(ModelError::new(
                at.key("tool"),
                "tool = \"messages\" needs [[workload.message]] entries",
            ));
        }
        let mut messages = Vec::new();
        for (mi, m) in wc.messages.iter().enumerate() {
            let msg_at = at.key("message").index(mi);
            if m.qp >= wc.qps {
                return Err(ModelError::new(
                    msg_at.key("qp"),
                    format!("qp {} but the workload has {} QPs", m.qp, wc.qps),
                ));
            }
            check_message_size(m.size.0, pmtu, msg_at.key("size"))?;
            messages.push(MessageSpec {
                at: wc.start.0 + m.at.map_or(Ps::ZERO, |a| a.0),
                qp: m.qp,
                verb: verb(m.verb),
                len: m.size.0,
            });
        }
        return Ok(WorkloadSpec::Messages {
            qps: wc.qps,
            tx_depth: wc.tx_depth,
            rx_depth: 512,
            tclass: wc.tc,
            flow_label: wc.flow_label,
            messages,
        });
    }
    if !wc.messages.is_empty() {
        return Err(ModelError::new(
            at.key("message"),
            "messages are only used with tool = \"messages\"",
        ));
    }
    check_message_size(wc.size.0, pmtu, at.key("size"))?;
    let op = match wc.tool {
        Tool::IbWriteBw => PerftestOp::WriteBw,
        Tool::IbSendBw => PerftestOp::SendBw,
        _ => PerftestOp::ReadBw,
    };
    let mut s = PerftestSpec::new(op);
    s.size = wc.size.0;
    s.qps = wc.qps;
    // As perftest: -D wins over -n.
    s.iters = if wc.duration.is_some() {
        1000
    } else {
        wc.iters.unwrap_or(1000)
    };
    s.duration = wc.duration.map(|d| d.0);
    s.tx_depth = wc.tx_depth;
    s.tclass = wc.tc;
    s.flow_label = wc.flow_label;
    Ok(WorkloadSpec::Perftest(s))
}

/// A message must fit the QP: 2 GiB (`max_msg_sz`) and, at small path
/// MTUs, the PSNs one message may span.
fn check_message_size(len: u64, pmtu: u32, at: KeyPath) -> Result<(), ModelError> {
    let max = max_message_len(pmtu);
    if len <= max {
        return Ok(());
    }
    let e = ModelError::new(
        at,
        format!("a message of {len} bytes is too long: at most {max} bytes at RoCE MTU {pmtu}"),
    );
    Err(if max < MAX_MSG_LEN {
        e.hint("a message may span at most 2^21 packets; raise the MTU or send smaller messages")
    } else {
        e.hint("2 GiB is the largest RDMA message (max_msg_sz)")
    })
}

/// A workload's set-up on the wire, if any (`connect`).
struct Setup {
    socket: Option<u32>,
    cm: Option<u32>,
}

/// Starts a workload: servers post their receives, then the clients start
/// at `start`, at once or after the ARP exchange (`arp = "frames"`).
#[allow(clippy::too_many_arguments)]
fn start(
    w: &mut World,
    sc: &Scenario,
    wc: &WorkloadCfg,
    wl: u32,
    client: &Endpoint,
    server: &Endpoint,
    (c_dmac, s_dmac): ([u8; 6], [u8; 6]),
    (clients, servers): (Vec<u32>, Vec<u32>),
    Setup { socket, cm }: Setup,
) {
    for (i, &q) in servers.iter().enumerate() {
        let workload = &mut w.workloads[wl as usize].workload;
        workload.drive_responder(i, &mut w.qps[q as usize].live.qp, Ps::ZERO);
    }
    if sc.sim.arp != ArpMode::Frames {
        match (socket, cm) {
            (Some(setup), _) => w.sched.at(wc.start.0, Event::SocketStart { setup }),
            (_, Some(setup)) => w.sched.at(wc.start.0, Event::CmStart { setup }),
            (None, None) => {
                for &q in &clients {
                    w.drive_at(q, wc.start.0);
                }
            }
        }
        return;
    }
    // The instantaneous answers stand for router next hops only; the QPs
    // learn their peers' MACs from the ARP exchange.
    let router = |ep: &Endpoint, dst: Ipv4Addr, mac: [u8; 6]| {
        w.hosts[ep.host as usize]
            .roce_route(ep.iface, dst)
            .ok()
            .filter(|r| r.next_hop != dst)
            .map(|_| mac)
    };
    let conn = Conn {
        client: (client.host, client.iface),
        server: (server.host, server.iface),
        client_ip: client.ip,
        server_ip: server.ip,
        client_dmac_router: router(client, server.ip, c_dmac),
        server_dmac_router: router(server, client.ip, s_dmac),
        client_dmac: None,
        server_dmac: None,
        clients,
        servers,
        step: 0,
        client_sock: client.ip,
        started: false,
        socket,
        cm,
        gate: if socket.is_some() { 1 } else { Step::ALL.len() },
    };
    let id = w.setup.conns.len() as u32;
    if let Some(s) = socket {
        w.sockets[s as usize].conn = Some(id);
    }
    w.setup.conns.push(conn);
    w.sched.at(wc.start.0, Event::ArpStart { conn: id });
}

/// What a QP takes from its workload's settings.
fn knobs_of(wc: &WorkloadCfg) -> QpKnobs {
    QpKnobs {
        tc: wc.tc,
        sl: wc.sl,
        flow_label: wc.flow_label,
        rate_limit: wc.rate_limit.map(|r| r.0),
        lag_port: [wc.client_lag_port, wc.server_lag_port],
    }
}
