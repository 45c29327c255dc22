//! A host's NIC profile: the named preset, then every `trust`,
//! `[host.transport]` and `[host.dcqcn]` key that overrides it, each
//! checked at its key. The builder gives it to the host's NICs; lowering
//! `[[traffic]]` needs it before (a flow's ideal time is billed by the
//! profile's framing, and its ports pick the NIC a flow leaves by).

use crate::diagnostic::{KeyPath, ModelError, closest};
use crate::schema::{
    AckPriorityCfg, AckQueueCfg, CcCfg, CnpScopeCfg, DcqcnCfg, EcnCfg, HostCfg, RpModelCfg,
    TransportCfg, WindowBytesCfg,
};
use rocesim_model::cc::{
    Algorithm, CnpScope, DcqcnParams, DctcpParams, HpccParams, ParamError, RpModel, TimelyParams,
};
use rocesim_model::packet::Billing;
use rocesim_model::transport::QpConfig;
use rocesim_model::world::profile::{
    AckPriority, ByteWindow, DcqcnSetup, EcnMode, NicProfile, ProfileBase,
};

/// What a scenario that names no profile gets: our users run ConnectX.
const DEFAULT_PROFILE: ProfileBase = ProfileBase::ConnectX;

/// The most bytes `header_bytes` or `ack_bytes` may bill: a jumbo frame's
/// headers, so that no billed frame outgrows the 16 bits a packet keeps.
const MAX_BILLED: u32 = 1024;

/// The profile of host `hi`, with its overrides applied.
pub fn host_profile(hc: &HostCfg, hi: usize) -> Result<NicProfile, ModelError> {
    let at = KeyPath::root().key("host").index(hi);
    let base = match hc.profile.as_deref() {
        None => DEFAULT_PROFILE,
        Some(name) => ProfileBase::from_name(name).ok_or_else(|| unknown_profile(name, &at))?,
    };
    let mut p = NicProfile::preset(base);
    if let Some(t) = hc.trust {
        p.trust = t;
    }
    transport(&mut p, &hc.transport, &at.key("transport"))?;
    dcqcn(&mut p, &hc.dcqcn, &at.key("dcqcn"))?;
    algorithm(&mut p, &hc.cc, &at.key("cc"))?;
    Ok(p)
}

fn unknown_profile(name: &str, at: &KeyPath) -> ModelError {
    let list = "rxe (Soft-RoCE), connectx (NVIDIA ConnectX, the default), \
                hpcc (the HPCC ns-3 reference's NIC)";
    let hint = match closest(name, ProfileBase::NAMES) {
        Some(c) => format!("did you mean `{c}`? The profiles: {list}"),
        None => format!("the profiles: {list}"),
    };
    ModelError::new(at.key("profile"), format!("unknown NIC profile `{name}`")).hint(hint)
}

fn transport(p: &mut NicProfile, t: &TransportCfg, at: &KeyPath) -> Result<(), ModelError> {
    if let Some(n) = t.max_unacked_psns {
        p.max_unacked_psns = match n {
            0 => QpConfig::SPEC_WINDOW,
            n if n <= QpConfig::SPEC_WINDOW => n,
            n => {
                return Err(ModelError::new(
                    at.key("max_unacked_psns"),
                    format!(
                        "{n} PSNs is more than the {} the model keeps unambiguous in the 2^23 PSN window",
                        QpConfig::SPEC_WINDOW
                    ),
                )
                .hint("0 means no window beyond the spec's"));
            }
        };
    }
    if let Some(n) = t.ack_req_every {
        p.ack_req_every = n;
    }
    if let Some(c) = t.ack_coalesce {
        p.coalesce_acks = c;
    }
    match t.ack_priority {
        None => {}
        Some(AckPriorityCfg::Qp) => p.ack_priority = AckPriority::Qp,
        Some(AckPriorityCfg::Prio(n @ 0..=7)) => p.ack_priority = AckPriority::Fixed(n as u8),
        Some(AckPriorityCfg::Prio(n)) => {
            return Err(ModelError::new(
                at.key("ack_priority"),
                format!("priority {n} is outside 0..=7"),
            )
            .hint("\"qp\" sends ACKs at their QP's priority"));
        }
    }
    match t.ack_queue {
        None => {}
        Some(AckQueueCfg::Priority) => p.ack_queue = None,
        Some(AckQueueCfg::Queue(n @ 0..=7)) => p.ack_queue = Some(n as u8),
        Some(AckQueueCfg::Queue(n)) => {
            return Err(ModelError::new(
                at.key("ack_queue"),
                format!("queue {n} is outside 0..=7"),
            )
            .hint("\"priority\" keeps ACKs in the queue of the priority they carry"));
        }
    }
    if let Some(n) = t.segment_bytes {
        if n > 4096 {
            return Err(ModelError::new(
                at.key("segment_bytes"),
                format!("{n} bytes per packet is more than the largest RoCE MTU (4096)"),
            )
            .hint("0 segments at the path MTU, as the spec requires"));
        }
        p.segment_bytes = n;
    }
    let follows = t.window_follows_rate;
    let window = |bytes, per_path| ByteWindow {
        bytes,
        follows_rate: follows.unwrap_or(false),
        per_path,
    };
    match (t.window_bytes, follows) {
        (Some(WindowBytesCfg::Bytes(0)), _) => p.byte_window = None,
        (Some(WindowBytesCfg::Bytes(n)), _) if n < 0 => {
            return Err(ModelError::new(
                at.key("window_bytes"),
                format!("{n} bytes is not a window"),
            )
            .hint("a number of bytes, 0 for none, or \"path\""));
        }
        (Some(WindowBytesCfg::Bytes(n)), _) => p.byte_window = Some(window(n as u64, false)),
        (Some(WindowBytesCfg::Path), _) => p.byte_window = Some(window(0, true)),
        (None, Some(f)) => match &mut p.byte_window {
            Some(w) => w.follows_rate = f,
            None if f => {
                return Err(ModelError::new(
                    at.key("window_follows_rate"),
                    "there is no window to follow the rate",
                )
                .hint("give window_bytes too, e.g. window_bytes = 153000"));
            }
            None => {}
        },
        (None, None) => {}
    }
    for (key, value, field) in [
        ("header_bytes", t.header_bytes, &mut p.billing.header_bytes),
        ("ack_bytes", t.ack_bytes, &mut p.billing.ack_bytes),
    ] {
        match value {
            None => {}
            Some(n @ 0..=MAX_BILLED) => *field = n as u16,
            Some(n) => {
                return Err(ModelError::new(
                    at.key(key),
                    format!("{n} bytes is more than the {MAX_BILLED} a frame's headers may be billed"),
                )
                .hint("0 bills the real frame; the HPCC reference's sizes are header_bytes = 48, ack_bytes = 60"));
            }
        }
    }
    if let Some(e) = t.ecmp_ports {
        p.ecmp_ports = e;
    }
    if let Some(e) = t.ecn {
        p.ecn = match e {
            EcnCfg::Cc => EcnMode::Cc,
            EcnCfg::Tc => EcnMode::Tc,
            EcnCfg::NotEct => EcnMode::NotEct,
        };
    }
    Ok(())
}

/// Applies the knobs a `[host.dcqcn]` table sets, and lists their names.
macro_rules! knobs {
    ($cfg:expr, $params:expr, $($f:ident),*) => {{
        let mut given: Vec<&'static str> = Vec::new();
        $(
            if let Some(v) = $cfg.$f {
                $params.$f = v;
                given.push(stringify!($f));
            }
        )*
        given
    }};
}

fn dcqcn(p: &mut NicProfile, c: &DcqcnCfg, at: &KeyPath) -> Result<(), ModelError> {
    let on = c.enable.unwrap_or(p.dcqcn.is_some());
    let mut setup = p.dcqcn.take().unwrap_or_else(|| DcqcnSetup {
        params: DcqcnParams::connectx(),
        rp_prios: 0xFF,
        np_prios: 0xFF,
        cnp_on_ack: false,
    });
    let prm = &mut setup.params;
    let mut given = knobs!(
        c,
        prm,
        rpg_time_reset,
        rpg_byte_reset,
        rpg_threshold,
        rpg_max_rate,
        rpg_ai_rate,
        rpg_hai_rate,
        rpg_gd,
        rpg_min_dec_fac,
        rpg_min_rate,
        dce_tcp_g,
        dce_tcp_rtt,
        rate_reduce_monitor_period,
        initial_alpha_value,
        clamp_tgt_rate,
        clamp_tgt_rate_after_time_inc,
        rate_to_set_on_first_cnp,
        min_time_between_cnps,
        cnp_dscp,
        cnp_802p_prio
    );
    if let Some(m) = c.model {
        prm.model = match m {
            RpModelCfg::Connectx => RpModel::ConnectX,
            RpModelCfg::HpccReference => RpModel::HpccReference,
        };
        given.push("model");
    }
    if let Some(s) = c.cnp_scope {
        prm.cnp_scope = match s {
            CnpScopeCfg::Qp => CnpScope::Qp,
            CnpScopeCfg::Port => CnpScope::Port,
            CnpScopeCfg::IpPair => CnpScope::IpPair,
            CnpScopeCfg::DestIp => CnpScope::DestIp,
        };
        given.push("cnp_scope");
    }
    if let Some(b) = c.cnp_on_ack {
        setup.cnp_on_ack = b;
        given.push("cnp_on_ack");
    }
    for (key, list, mask) in [
        ("rp_priorities", &c.rp_priorities, &mut setup.rp_prios),
        ("np_priorities", &c.np_priorities, &mut setup.np_prios),
    ] {
        let Some(list) = list else { continue };
        given.push(key);
        *mask = 0;
        for (i, &prio) in list.iter().enumerate() {
            if prio > 7 {
                return Err(ModelError::new(
                    at.key(key).index(i),
                    format!("priority {prio} is outside 0..=7"),
                ));
            }
            *mask |= 1 << prio;
        }
    }
    if !on {
        if let Some(k) = given.first() {
            return Err(ModelError::new(
                at.key(k),
                format!(
                    "sets `{k}` but DCQCN is off on this host (profile `{}`)",
                    p.base.name()
                ),
            )
            .hint("add `enable = true` to [host.dcqcn], or remove the key"));
        }
        return Ok(());
    }
    setup.params.validate().map_err(|e| {
        let m = ModelError::new(at.key(&e.key), e.problem);
        match e.hint {
            Some(h) => m.hint(h),
            None => m,
        }
    })?;
    p.dcqcn = Some(setup);
    Ok(())
}

/// `[host.cc]`: the algorithm of the reaction points and its knobs.
fn algorithm(p: &mut NicProfile, c: &CcCfg, at: &KeyPath) -> Result<(), ModelError> {
    let d = &c.dctcp;
    let dctcp_given: Vec<&str> = [
        ("g", d.g.is_some()),
        ("rate_ai", d.rate_ai.is_some()),
        ("min_rate", d.min_rate.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    let t = &c.timely;
    let timely_given: Vec<&str> = [
        ("ewma", t.ewma.is_some()),
        ("beta", t.beta.is_some()),
        ("t_low", t.t_low.is_some()),
        ("t_high", t.t_high.is_some()),
        ("min_rtt", t.min_rtt.is_some()),
        ("rate_ai", t.rate_ai.is_some()),
        ("rate_hai", t.rate_hai.is_some()),
        ("hai_after", t.hai_after.is_some()),
        ("min_rate", t.min_rate.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    let h = &c.hpcc;
    let hpcc_given: Vec<&str> = [
        ("u_target", h.u_target.is_some()),
        ("rate_ai", h.rate_ai.is_some()),
        ("min_rate", h.min_rate.is_some()),
        ("mi_thresh", h.mi_thresh.is_some()),
        ("fast_react", h.fast_react.is_some()),
        ("multi_rate", h.multi_rate.is_some()),
        ("sample_feedback", h.sample_feedback.is_some()),
        ("int_multi", h.int_multi.is_some()),
        ("base_rtt", h.base_rtt.is_some()),
        ("pint_log_base", h.pint_log_base.is_some()),
        ("pint_prob", h.pint_prob.is_some()),
    ]
    .into_iter()
    .filter_map(|(k, set)| set.then_some(k))
    .collect();
    if let Some(name) = c.algorithm.as_deref() {
        p.algorithm = match name {
            "dcqcn" => Algorithm::Dcqcn,
            "dctcp" => Algorithm::Dctcp(DctcpParams::hpcc_reference()),
            "timely" => Algorithm::Timely(TimelyParams::hpcc_reference()),
            "hpcc" => Algorithm::Hpcc(HpccParams::hpcc_reference()),
            "hpcc_pint" => Algorithm::Hpcc(HpccParams::pint_reference()),
            other => {
                let list = "dcqcn (the default), dctcp, timely, hpcc, hpcc_pint";
                let hint = match closest(other, Algorithm::NAMES) {
                    Some(c) => format!("did you mean `{c}`? The algorithms: {list}"),
                    None => format!("the algorithms: {list}"),
                };
                return Err(ModelError::new(
                    at.key("algorithm"),
                    format!("unknown congestion control `{other}`"),
                )
                .hint(hint));
            }
        };
    }
    // Knobs of an algorithm that does not run are a mistake, not a no-op.
    // HPCC-PINT's knobs are HPCC's table, with two of its own.
    let name = p.algorithm.name();
    if name == "hpcc" {
        if let Some(k) = hpcc_given.iter().find(|k| k.starts_with("pint_")) {
            return Err(ModelError::new(
                at.key("hpcc").key(k),
                format!("sets `{k}` but the algorithm is `hpcc`, not `hpcc_pint`"),
            )
            .hint("add `algorithm = \"hpcc_pint\"` to [host.cc], or remove the key"));
        }
    }
    let name = if name == "hpcc_pint" { "hpcc" } else { name };
    for (table, given) in [
        ("dctcp", &dctcp_given),
        ("timely", &timely_given),
        ("hpcc", &hpcc_given),
    ] {
        if let (Some(k), false) = (given.first(), table == name) {
            return Err(ModelError::new(
                at.key(table).key(k),
                format!("sets `{k}` but the algorithm is `{name}`"),
            )
            .hint(format!(
                "add `algorithm = \"{table}\"` to [host.cc], or remove the key"
            )));
        }
    }
    match &mut p.algorithm {
        Algorithm::Timely(prm) => {
            macro_rules! set {
                ($($f:ident),*) => {$(if let Some(v) = t.$f { prm.$f = v; })*};
            }
            set!(ewma, beta, hai_after);
            for (v, f) in [
                (t.t_low, &mut prm.t_low),
                (t.t_high, &mut prm.t_high),
                (t.min_rtt, &mut prm.min_rtt),
            ] {
                if let Some(d) = v {
                    *f = d.0;
                }
            }
            for (v, f) in [
                (t.rate_ai, &mut prm.rate_ai),
                (t.rate_hai, &mut prm.rate_hai),
                (t.min_rate, &mut prm.min_rate),
            ] {
                if let Some(r) = v {
                    *f = r.0;
                }
            }
        }
        Algorithm::Dctcp(prm) => {
            if let Some(g) = d.g {
                prm.g = g;
            }
            if let Some(r) = d.rate_ai {
                prm.rate_ai = r.0;
            }
            if let Some(r) = d.min_rate {
                prm.min_rate = r.0;
            }
        }
        Algorithm::Hpcc(prm) => {
            macro_rules! set {
                ($($f:ident),*) => {$(if let Some(v) = h.$f { prm.$f = v; })*};
            }
            set!(
                u_target,
                mi_thresh,
                fast_react,
                multi_rate,
                sample_feedback,
                int_multi
            );
            if let Some(r) = h.rate_ai {
                prm.rate_ai = r.0;
            }
            if let Some(r) = h.min_rate {
                prm.min_rate = r.0;
            }
            if let Some(d) = h.base_rtt {
                prm.base_rtt = Some(d.0);
            }
            if let Some(pint) = &mut prm.pint {
                if let Some(b) = h.pint_log_base {
                    pint.log_base = b;
                }
                if let Some(q) = h.pint_prob {
                    pint.prob = q;
                }
                // PINT's header is the reference's 2-byte union
                // (`IntHeader::GetStaticSize` in PINT mode) on data
                // packets; an ACK of 14 + 20 + 12 + 2 is padded to 60.
                if p.billing == Billing::HPCC {
                    p.billing = Billing::HPCC_PINT;
                }
            }
            // The reference's telemetry has a fixed size on every packet:
            // 42 bytes (5 hops of 8 and a count) on data and ACKs alike
            // (`IntHeader::GetStaticSize`), so a profile billed at its
            // sizes bills them too: 48 + 42 per data packet, and an ACK of
            // 14 + 20 + 12 + 42 = 88 bytes (no padding to 60 left).
            if p.billing == Billing::HPCC {
                p.billing = Billing::HPCC_INT;
            }
        }
        Algorithm::Dcqcn => {}
    }
    // HPCC-PINT's knobs live in [host.cc.hpcc].
    let sub = match p.algorithm.name() {
        "hpcc_pint" => "hpcc",
        n => n,
    };
    p.algorithm.validate().map_err(|e: ParamError| {
        let m = ModelError::new(at.key(sub).key(&e.key), e.problem);
        match e.hint {
            Some(h) => m.hint(h),
            None => m,
        }
    })?;
    if p.algorithm.needs_ack_echo() && !p.dcqcn.as_ref().is_some_and(|d| d.cnp_on_ack) {
        let why = match &p.dcqcn {
            None => "congestion control is off on this host ([host.dcqcn] enable = false)",
            Some(_) => "its receivers send CNPs, not the echo on the ACK it reads",
        };
        return Err(ModelError::new(
            at.key("algorithm"),
            format!("`{sub}` reads the ECN echo on ACKs, but {why}"),
        )
        .hint("set [host.dcqcn] cnp_on_ack = true (the hpcc profile's default)"));
    }
    Ok(())
}
