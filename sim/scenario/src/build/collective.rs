//! `[[collective]]`: nccl-tests flags and NCCL's environment checked and
//! turned into a [`Collective`]; its network connections' RC QPs placed
//! on the servers' NICs as NCCL programs them (facts §4.2: RC, timeout
//! `NCCL_IB_TIMEOUT`, retries `NCCL_IB_RETRY_CNT`, `rnr_retry` 7,
//! `min_rnr_timer` 12, `max_rd_atomic` 1, traffic class `NCCL_IB_TC`).

use std::collections::HashMap;

use roce_codec::Psn;

use super::names::root;
use super::nccl_algo::algo;
use super::nccl_connect;
use super::neighbours::{Behind, Learned, resolve_conn};
use super::qpns::Qpns;
use crate::diagnostic::{KeyPath, ModelError};
use crate::schema::{ArpMode, CollectiveCfg, Connect, RoceMode, Scenario};
use rocesim_model::engine::Event;
use rocesim_model::net::roce_mtu;
use rocesim_model::time::{Ps, Rate};
use rocesim_model::transport::collective::{
    CollOp, Collective, CollectiveSpec, DataType, GpuModel, NcclKnobs, NetConnInfo, SizeStep, Topo,
    payload_efficiency, plan, test_size, test_sizes,
};
use rocesim_model::transport::{QpConfig, Workload, udp_sport};
use rocesim_model::world::World;
use rocesim_model::world::host::IfaceKind;
use rocesim_model::world::place::{Endpoint, QpKnobs, Side, add_qp, modes};
use rocesim_model::world::qp::{Role, WorkloadSlot};

/// The NCCL variables read, and those accepted with no effect here.
const ENV_KEYS: [&str; 19] = [
    "NCCL_IB_HCA",
    "NCCL_IB_QPS_PER_CONNECTION",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_TC",
    "NCCL_IB_SL",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_BUFFSIZE",
    "NCCL_NTHREADS",
    "NCCL_P2P_NET_CHUNKSIZE",
    "NCCL_STEPS",
    "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_SOCKET_IFNAME",
];

/// The environment, parsed.
struct Env {
    knobs: NcclKnobs,
    hca: Option<(bool, bool, Vec<String>)>,
    tc: u8,
    sl: u8,
    timeout: u8,
    retry_cnt: u8,
    min_channels: Option<u32>,
    max_channels: Option<u32>,
}

fn env(cc: &CollectiveCfg, op: CollOp, dt: DataType, at: &KeyPath) -> Result<Env, ModelError> {
    let mut e = Env {
        knobs: NcclKnobs::default(),
        hca: None,
        tc: 0,
        sl: 0,
        // NCCL 2.23+ defaults (facts §4.5).
        timeout: 20,
        retry_cnt: 7,
        min_channels: None,
        max_channels: None,
    };
    for (k, v) in &cc.env {
        let kat = at.key("env").key(k);
        let text = v.text();
        let err = |msg: String| ModelError::new(kat.clone(), msg);
        let int = |lo: i64, hi: i64| -> Result<i64, ModelError> {
            match text.trim().parse::<i64>() {
                Ok(n) if (lo..=hi).contains(&n) => Ok(n),
                _ => Err(ModelError::new(
                    kat.clone(),
                    format!("{k} = \"{text}\": expected an integer in {lo}..={hi}"),
                )),
            }
        };
        match k.as_str() {
            "NCCL_IB_HCA" => {
                let (mut s, mut exclude, mut exact) = (text.trim(), false, false);
                if let Some(r) = s.strip_prefix('^') {
                    (s, exclude) = (r, true);
                }
                if let Some(r) = s.strip_prefix('=') {
                    (s, exact) = (r, true);
                }
                let mut names = Vec::new();
                for item in s.split(',').filter(|i| !i.is_empty()) {
                    let mut parts = item.split(':');
                    let name = parts.next().unwrap_or("").to_string();
                    if let Some(port) = parts.next() {
                        if port != "1" {
                            return Err(err(format!(
                                "NCCL_IB_HCA entry `{item}`: port {port}, but the NICs here have one port (1)"
                            )));
                        }
                    }
                    names.push(name);
                }
                e.hca = Some((exclude, exact, names));
            }
            "NCCL_IB_QPS_PER_CONNECTION" => e.knobs.qps_per_conn = int(1, 128)? as u32,
            "NCCL_IB_SPLIT_DATA_ON_QPS" => e.knobs.split_data_on_qps = int(0, 1)? == 1,
            "NCCL_IB_TC" => e.tc = int(0, 255)? as u8,
            "NCCL_IB_SL" => e.sl = int(0, 7)? as u8,
            // The interfaces here have one RoCE v2 GID (their IPv4
            // address): every index selects it.
            "NCCL_IB_GID_INDEX" => {
                int(-1, 255)?;
            }
            "NCCL_IB_TIMEOUT" => e.timeout = int(0, 31)? as u8,
            "NCCL_IB_RETRY_CNT" => e.retry_cnt = int(0, 7)? as u8,
            "NCCL_ALGO" => e.knobs.algo = algo(&text, op, dt, &kat)?,
            "NCCL_PROTO" => check_list(&text, "Simple", &["ll", "ll128"], &kat, k)?,
            "NCCL_MIN_NCHANNELS" => e.min_channels = Some(int(1, 64)? as u32),
            "NCCL_MAX_NCHANNELS" => e.max_channels = Some(int(1, 64)? as u32),
            "NCCL_BUFFSIZE" => {
                let b = int(1 << 12, 1 << 30)? as u64;
                if b % 1024 != 0 {
                    return Err(err(format!(
                        "NCCL_BUFFSIZE = {b}: expected a multiple of 1024 bytes"
                    )));
                }
                e.knobs.buffsize = b;
            }
            "NCCL_NTHREADS" => {
                let t = int(64, 512)? as u32;
                if t % 64 != 0 {
                    return Err(err(format!(
                        "NCCL_NTHREADS = {t}: expected a multiple of 64"
                    )));
                }
                e.knobs.nthreads = t;
            }
            "NCCL_P2P_NET_CHUNKSIZE" => e.knobs.p2p_net_chunk = int(4096, 1 << 24)? as u64,
            "NCCL_STEPS" => {
                return Err(err(
                    "NCCL_STEPS is a compile-time constant of NCCL (8), not an environment variable".into(),
                )
                .hint("remove it; NCCL_BUFFSIZE sets the step size (BUFFSIZE / 8)"));
            }
            // Logging: no effect on the wire. The out-of-band interface
            // is read with connect = "socket" (`nccl_connect::oob_iface`).
            "NCCL_DEBUG" | "NCCL_DEBUG_SUBSYS" | "NCCL_SOCKET_IFNAME" => {}
            _ => {
                return Err(ModelError::new(
                    kat,
                    format!("unknown or unmodelled NCCL variable `{k}`"),
                )
                .did_you_mean(k, ENV_KEYS));
            }
        }
    }
    Ok(e)
}

/// `NCCL_PROTO`: a plain list (`nccl_algo::parse_list`) in which the
/// one modelled choice must remain.
fn check_list(
    text: &str,
    only: &str,
    known: &[&str],
    at: &KeyPath,
    key: &str,
) -> Result<(), ModelError> {
    if text.contains(':') || text.contains(';') {
        return Err(ModelError::new(
            at.clone(),
            format!("{key} = \"{text}\": per-collective lists are not modelled"),
        )
        .hint(format!("give a plain list, e.g. {key} = \"{only}\"")));
    }
    let lo = only.to_ascii_lowercase();
    let all: Vec<&str> = known.iter().copied().chain([lo.as_str()]).collect();
    let (exclude, items) = super::nccl_algo::parse_list(text, text, key, "value", &all, at)?;
    if items.contains(&lo) == exclude {
        return Err(ModelError::new(
            at.clone(),
            if exclude {
                format!("{key} = \"{text}\": excluding {only} leaves only what is not modelled (only {only} is)")
            } else {
                format!("{key} = \"{text}\": {} is not modelled; only {only} is", items.join(", "))
            },
        )
        .hint(format!("set {key} = \"{only}\"")));
    }
    Ok(())
}

/// The RDMA device of interface `iface` of host `h`, as mlx5 names it and
/// NCCL_IB_HCA matches it: `mlx5_<n>` for the host's n-th NIC,
/// `mlx5_bond_<n>` for its n-th bond (`rocesim::run::devices`).
fn rdma_device(w: &World, h: u32, iface: u32) -> String {
    let host = &w.hosts[h as usize];
    match host.ifaces[iface as usize].kind {
        IfaceKind::Nic(n) => format!("mlx5_{n}"),
        IfaceKind::Bond(_) => {
            let nth = host.ifaces[..iface as usize]
                .iter()
                .filter(|f| matches!(f.kind, IfaceKind::Bond(_)))
                .count();
            format!("mlx5_bond_{nth}")
        }
    }
}

/// A size flag: a multiple of the datatype.
fn check_multiple(v: u64, dt: DataType, at: KeyPath) -> Result<(), ModelError> {
    if v % dt.size() != 0 {
        return Err(ModelError::new(
            at,
            format!(
                "{v} bytes is not a multiple of {}'s {} bytes",
                dt.name(),
                dt.size()
            ),
        )
        .hint("nccl-tests would truncate the count; give a whole number of elements"));
    }
    Ok(())
}

pub(super) fn add_collective(
    w: &mut World,
    sc: &Scenario,
    ci: usize,
    cc: &CollectiveCfg,
    qpns: &mut Qpns,
    behind: &mut Behind,
) -> Result<(), ModelError> {
    let at = root().key("collective").index(ci);
    let op = CollOp::from_name(&cc.op).ok_or_else(|| {
        ModelError::new(at.key("op"), format!("unknown collective `{}`", cc.op))
            .did_you_mean(&cc.op, CollOp::ALL.iter().map(|o| o.name()))
    })?;
    let dt_name = cc.datatype.as_deref().unwrap_or("float");
    let dt = DataType::from_name(dt_name).ok_or_else(|| {
        ModelError::new(at.key("datatype"), format!("unknown datatype `{dt_name}`"))
            .did_you_mean(dt_name, DataType::ALL.iter().map(|d| d.name()))
    })?;
    let e = env(cc, op, dt, &at)?;
    if cc.connect == Connect::RdmaCm {
        return Err(ModelError::new(
            at.key("connect"),
            "NCCL does not use RDMA CM: its IB transport swaps QP numbers over a TCP socket",
        )
        .hint("use connect = \"socket\" (NCCL's out-of-band exchange) or \"none\""));
    }
    let socket = cc.connect == Connect::Socket;
    if sc.sim.arp == ArpMode::Frames {
        return Err(ModelError::new(
            root().key("sim").key("arp"),
            "a [[collective]] needs arp = \"instant\"",
        ));
    }
    // Servers and ranks.
    let mut hosts = Vec::new();
    for (i, name) in cc.servers.iter().enumerate() {
        let h = w
            .hosts
            .iter()
            .position(|h| &h.name == name)
            .ok_or_else(|| {
                ModelError::new(at.key("servers").index(i), format!("no host `{name}`"))
                    .did_you_mean(name, sc.hosts.iter().map(|h| h.name.as_str()))
            })? as u32;
        if hosts.contains(&h) {
            return Err(ModelError::new(
                at.key("servers").index(i),
                format!("`{name}` is listed twice"),
            ));
        }
        hosts.push(h);
    }
    let g = cc.gpus_per_server;
    if g == 0 || g > 64 {
        return Err(ModelError::new(
            at.key("gpus_per_server"),
            format!("gpus_per_server = {g}: expected 1..=64"),
        ));
    }
    let room = hosts.len() as u32 * g;
    let ranks = cc.ranks.unwrap_or(room);
    if ranks > room {
        return Err(ModelError::new(
            at.key("ranks"),
            format!(
                "ranks = {ranks} do not fit: {} servers × {g} GPUs = {room}",
                hosts.len()
            ),
        )
        .hint("list more servers or raise gpus_per_server"));
    }
    let used = ranks.div_ceil(g);
    if ranks < 2 || used < 2 {
        return Err(ModelError::new(
            at.key("servers"),
            format!("{ranks} ranks on {used} server(s): a collective here needs ranks on at least 2 servers"),
        )
        .hint("the network is what is simulated; list at least 2 servers"));
    }
    if (used as usize) < hosts.len() {
        return Err(ModelError::new(
            at.key("ranks"),
            format!(
                "ranks = {ranks} use {used} of the {} servers listed",
                hosts.len()
            ),
        ));
    }
    if cc.root >= ranks {
        return Err(ModelError::new(
            at.key("root"),
            format!("root = {} but ranks are 0..{ranks}", cc.root),
        ));
    }
    let hca_match = |n: &str, p: &str, exact: bool| if exact { n == p } else { n.starts_with(p) };
    if let Some((false, exact, names)) = &e.hca {
        for n in names {
            let seen = hosts.iter().any(|&h| {
                (0..w.hosts[h as usize].ifaces.len() as u32)
                    .any(|i| hca_match(&rdma_device(w, h, i), n, *exact))
            });
            if !seen {
                let h0 = hosts[0];
                let host = &w.hosts[h0 as usize];
                let devs: Vec<String> = (0..host.ifaces.len() as u32)
                    .map(|i| rdma_device(w, h0, i))
                    .collect();
                let err = ModelError::new(
                    at.key("env").key("NCCL_IB_HCA"),
                    format!("NCCL_IB_HCA names `{n}`, which no server has"),
                );
                // A netdev name: NCCL matches RDMA device names.
                if let Some(i) = host.ifaces.iter().position(|f| f.name == *n) {
                    return Err(err.hint(format!(
                        "NCCL_IB_HCA lists RDMA devices, not netdevs: `{n}` is the netdev of `{}` (ibdev2netdev)",
                        devs[i]
                    )));
                }
                return Err(err.did_you_mean(n, devs.iter().map(String::as_str)));
            }
        }
    }
    // NICs: every interface with an address, as NCCL_IB_HCA filters them.
    let mut nics: Vec<Vec<u32>> = Vec::new();
    for &h in &hosts {
        let host = &w.hosts[h as usize];
        let list: Vec<u32> = (0..host.ifaces.len() as u32)
            .filter(|&i| host.ifaces[i as usize].ip.is_some())
            .filter(|&i| {
                let n = rdma_device(w, h, i);
                match &e.hca {
                    None => true,
                    Some((exclude, exact, names)) => {
                        names.iter().any(|p| hca_match(&n, p, *exact)) != *exclude
                    }
                }
            })
            .collect();
        if list.is_empty() {
            return Err(ModelError::new(
                at.key("env").key("NCCL_IB_HCA"),
                format!(
                    "server `{}` has no RDMA interface with an address left",
                    host.name
                ),
            )
            .did_you_mean("", host.ifaces.iter().map(|f| f.name.as_str())));
        }
        nics.push(list);
    }
    let nnics = nics[0].len() as u32;
    if nics.iter().any(|l| l.len() as u32 != nnics) {
        return Err(ModelError::new(
            at.key("servers"),
            "the servers have different numbers of NICs",
        )
        .hint("give every server the same NICs, or filter them with NCCL_IB_HCA"));
    }
    let per_gpu = match cc.gpu_nic.as_deref() {
        None => nnics == g,
        Some("per_gpu") if nnics == g => true,
        Some("per_gpu") => {
            return Err(ModelError::new(
                at.key("gpu_nic"),
                format!(
                    "per_gpu needs one NIC per GPU, but the servers have {nnics} NICs for {g} GPUs"
                ),
            )
            .hint("use gpu_nic = \"shared\""));
        }
        Some("shared") => false,
        Some(o) => {
            return Err(
                ModelError::new(at.key("gpu_nic"), format!("unknown gpu_nic `{o}`"))
                    .did_you_mean(o, ["per_gpu", "shared"]),
            );
        }
    };
    let topo = Topo {
        ranks,
        gpus: g,
        nics: nnics,
        nic_per_gpu: per_gpu,
    };
    // Channels: two per NIC [U: a typical NCCL graph result, facts §3],
    // within NCCL_MIN/MAX_NCHANNELS.
    let mut knobs = e.knobs;
    let mut ch = 2 * nnics;
    if let Some(m) = e.min_channels {
        ch = ch.max(m);
    }
    if let Some(m) = e.max_channels {
        ch = ch.min(m);
    }
    knobs.channels = ch.clamp(1, 64);
    // Sizes.
    let minb = cc.minbytes.map_or(32 << 20, |b| b.0);
    let maxb = cc.maxbytes.map_or(32 << 20, |b| b.0);
    check_multiple(minb, dt, at.key("minbytes"))?;
    check_multiple(maxb, dt, at.key("maxbytes"))?;
    if minb > maxb {
        return Err(ModelError::new(
            at.key("maxbytes"),
            format!("maxbytes {maxb} is below minbytes {minb}"),
        ));
    }
    let step = match (cc.stepfactor, cc.stepbytes) {
        (Some(_), Some(_)) => {
            return Err(ModelError::new(
                at.key("stepbytes"),
                "give stepfactor (-f) or stepbytes (-i), not both",
            ));
        }
        (Some(f), None) if f < 2 => {
            return Err(ModelError::new(
                at.key("stepfactor"),
                format!("stepfactor = {f}: expected at least 2"),
            ));
        }
        (Some(f), None) => SizeStep::Factor(f),
        (None, b) => {
            let b = b.map_or(1 << 20, |b| b.0);
            check_multiple(b, dt, at.key("stepbytes"))?;
            if b == 0 {
                return Err(ModelError::new(
                    at.key("stepbytes"),
                    "stepbytes = 0 never moves",
                ));
            }
            SizeStep::Bytes(b)
        }
    };
    let sizes = test_sizes(minb, maxb, step);
    if sizes.len() > 64 {
        return Err(ModelError::new(
            at.key("maxbytes"),
            format!("{} sizes: at most 64 per run", sizes.len()),
        )
        .hint("raise stepfactor or stepbytes"));
    }
    let iters = cc.iters.unwrap_or(20);
    if iters == 0 {
        return Err(ModelError::new(at.key("iters"), "iters = 0: at least 1"));
    }
    let gpu = GpuModel {
        nvlink_rate: cc.nvlink_bw.map_or(Rate::gbps(2960), |r| r.0),
        nvlink_latency: cc.nvlink_latency.map_or(Ps::from_us(1), |d| d.0),
        reduce_ps_per_kib: cc.reduce_time_per_kib.map_or(0, |d| d.0.as_ps()),
    };
    let conns = plan::connections(op, &topo, &knobs, cc.root);
    let name = cc.name.clone().unwrap_or_else(|| format!("collective{ci}"));

    // The network connections' ends, their QPs' settings, the bound.
    let ep = |rank: u32, nic: u32| -> Endpoint {
        let h = hosts[topo.server(rank) as usize];
        let iface = nics[topo.server(rank) as usize][nic as usize];
        let ip = w.hosts[h as usize].ifaces[iface as usize].ip.unwrap().addr;
        Endpoint { host: h, iface, ip }
    };
    let mut ends = Vec::new();
    let mut devs = Vec::new();
    let (mut pmtu, mut line) = (4096, u64::MAX);
    for c in &conns {
        let Some((a, b)) = c.nics else { continue };
        let (s, r) = (ep(c.from, a), ep(c.to, b));
        devs.push([a as i32, b as i32]);
        for x in [&s, &r] {
            let host = &w.hosts[x.host as usize];
            if host.roce != RoceMode::V2 {
                return Err(ModelError::new(
                    at.key("servers"),
                    format!(
                        "host `{}` runs RoCE v1; NCCL's collectives here run RoCE v2",
                        host.name
                    ),
                ));
            }
            let f = &host.ifaces[x.iface as usize];
            pmtu = pmtu.min(roce_mtu(f.mtu).unwrap_or(256));
            if let IfaceKind::Nic(n) = f.kind {
                line = line.min(w.ports[host.nics[n as usize].port as usize].rate().bps());
            }
        }
        ends.push((s, r));
    }
    let ifname = cc.env.get("NCCL_SOCKET_IFNAME").map(|v| v.text());
    let socks = match socket {
        true => nccl_connect::plan_sockets(w, &name, &ends, ifname.as_deref(), &at)?,
        false => Vec::new(),
    };
    let info: Vec<NetConnInfo> = ends
        .iter()
        .enumerate()
        .map(|(i, (s, r))| NetConnInfo {
            send_ip: s.ip,
            recv_ip: r.ip,
            send_hca: rdma_device(w, s.host, s.iface),
            recv_hca: rdma_device(w, r.host, r.iface),
            oob_peer: socks.get(i).map(|k| k.peers(w, s.host)),
        })
        .collect();
    let eff = payload_efficiency(pmtu);
    let nics_used = f64::from(if per_gpu {
        g.min(knobs.channels)
    } else {
        nnics.min(knobs.channels)
    });
    let n = f64::from(ranks);
    let bound_bps = match op {
        CollOp::SendRecv => line as f64 * eff,
        // Each server sends g(n−g)/n of S through its NICs.
        CollOp::AllToAll => {
            let gf = f64::from(g);
            line as f64 * eff * f64::from(nnics) * (n - 1.0) / (gf * (n - gf))
        }
        // The tree: what its busiest NIC allows (a server that is an
        // inner node of one tree and a leaf of the other sends and
        // receives more than the ring's share; with 2 servers less, so
        // busbw may exceed the NICs, facts §1).
        _ if plan::on_tree(op, &knobs) => {
            let t = test_size(op, maxb, dt, ranks);
            let p = plan::plan_op(op, &topo, &knobs, &conns, dt, t.count, cc.root);
            match plan::busiest_nic_bytes(&p, &conns, &topo) {
                0 => line as f64 * eff * nics_used,
                busiest => {
                    line as f64 * eff * t.algbw_bytes as f64 * op.bus_factor(ranks) / busiest as f64
                }
            }
        }
        _ => line as f64 * eff * nics_used,
    };
    let spec = CollectiveSpec {
        op,
        datatype: dt,
        root: cc.root,
        sizes,
        iters,
        warmup_iters: cc.warmup_iters.unwrap_or(1),
        knobs,
        gpu,
        start: cc.start.0,
        bound: Rate(bound_bps as u64),
    };
    let mut coll = Collective::new(spec, topo, conns, info);

    let cfg = QpConfig {
        pmtu,
        timeout: e.timeout,
        retry_cnt: e.retry_cnt,
        rnr_retry: 7,
        min_rnr_timer: 12,
        max_rd_atomic: 1,
        // NCCL's send queue: 2 × 256 (facts §4.1).
        max_send_wr: 512,
        ..QpConfig::default()
    };
    let knobs_qp = QpKnobs {
        tc: e.tc,
        sl: e.sl,
        flow_label: 0,
        rate_limit: None,
        lag_port: [None, None],
    };
    let id = w.workloads.len() as u32;
    let mut contexts: HashMap<u32, u32> = HashMap::new();
    let (mut clients, mut servers) = (Vec::new(), Vec::new());
    let mut index = 0u32;
    let mut qpns_of = Vec::new();
    for (i, (s, r)) in ends.iter().enumerate() {
        let mut learned = Learned::new();
        let (c_dmac, s_dmac) = match socks.get(i) {
            Some(k) => nccl_connect::resolve(w, (s, r), k, &mut learned, behind),
            None => resolve_conn(
                w,
                (s.host, s.iface, s.ip),
                (r.host, r.iface, r.ip),
                &mut learned,
                &mut Vec::new(),
                behind,
            )
            .map_err(|(_, msg)| msg),
        }
        .map_err(|msg| ModelError::new(at.key("servers"), msg))?;
        let mut pair = (Vec::new(), Vec::new());
        for ((h, iface, ip), mac) in learned {
            w.hosts[h as usize].neigh.insert((iface, ip), mac);
        }
        for _ in 0..knobs.qps_per_conn {
            let cq = qpns.allocate(w, sc, s, &at)?;
            let sq = qpns.allocate(w, sc, r, &at)?;
            pair.0.push(cq);
            pair.1.push(sq);
            // NCCL starts both PSNs at 0 (facts §4.2).
            let (c_psn, s_psn) = (Psn::new(0), Psn::new(0));
            let sport = udp_sport(cq, sq, 0);
            let (c_mode, s_mode) = modes(w, s, r);
            let sides = [
                Side {
                    role: Role::Client,
                    local: *s,
                    remote_ip: r.ip,
                    qpn: [cq, sq],
                    psn: [c_psn, s_psn],
                    dmac: c_dmac,
                    sport,
                    mode: c_mode,
                },
                Side {
                    role: Role::Server,
                    local: *r,
                    remote_ip: s.ip,
                    qpn: [sq, cq],
                    psn: [s_psn, c_psn],
                    dmac: s_dmac,
                    sport,
                    mode: s_mode,
                },
            ];
            for side in sides {
                let g = add_qp(w, &knobs_qp, cfg, &side, id, index, &mut contexts);
                w.qps[g as usize].live.qp.set_record_inbound(true);
                match side.role {
                    Role::Client => clients.push(g),
                    Role::Server => servers.push(g),
                }
            }
            index += 1;
        }
        qpns_of.push(pair);
    }
    coll.set_qp_ids(clients.clone(), servers);
    coll.set_setups(socks.len() as u32);
    for (i, ((s, r), k)) in ends.iter().zip(&socks).enumerate() {
        let (sq, rq) = std::mem::take(&mut qpns_of[i]);
        let end = |ep: &Endpoint, qpns, dev| nccl_connect::MetaEnd {
            ep: *ep,
            qpns,
            dev,
            hca: rdma_device(w, ep.host, ep.iface),
            pmtu: roce_mtu(w.hosts[ep.host as usize].ifaces[ep.iface as usize].mtu).unwrap_or(256),
        };
        let ends = [end(s, sq, devs[i][0]), end(r, rq, devs[i][1])];
        let setup = nccl_connect::setup(k, ends, (e.tc, e.sl), id);
        w.nccl_setups.push(setup);
        let setup = w.nccl_setups.len() as u32 - 1;
        w.sched.at(cc.start.0, Event::NcclSetupStart { setup });
    }
    w.workloads.push(WorkloadSlot {
        name,
        workload: Workload::collective(coll, e.tc),
        clients: clients.clone(),
    });
    w.drive_at(clients[0], cc.start.0);
    Ok(())
}
