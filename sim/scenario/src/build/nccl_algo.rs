//! `NCCL_ALGO` as NCCL reads it, and NCCL's names for functions and types
//! in the error it gives when no allowed algorithm serves a collective.

use crate::diagnostic::{KeyPath, ModelError};
use rocesim_model::transport::collective::{Algo, CollOp, DataType};

/// One of NCCL's lists of names (`NCCL_ALGO`, `NCCL_PROTO`): items
/// separated by commas, any case, the whole list an exclusion when it
/// starts with `^`. Returns (exclusion, the items in lower case); an item
/// not in `known` is refused, naming `what` it should have been. `text` is
/// the variable's whole value, for the message.
pub(super) fn parse_list(
    list: &str,
    text: &str,
    key: &str,
    what: &str,
    known: &[&str],
    at: &KeyPath,
) -> Result<(bool, Vec<String>), ModelError> {
    let t = list.trim().to_ascii_lowercase();
    let (exclude, items) = match t.strip_prefix('^') {
        Some(r) => (true, r),
        None => (false, t.as_str()),
    };
    let items: Vec<String> = items
        .split(',')
        .map(|i| i.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(i) = items.iter().find(|i| !known.contains(&i.as_str())) {
        return Err(ModelError::new(
            at.clone(),
            format!("{key} = \"{text}\": unknown {what} `{i}`"),
        )
        .did_you_mean(i, known.iter().copied()));
    }
    Ok((exclude, items))
}

/// NCCL's algorithms by their `NCCL_ALGO` names (lower case); Ring and
/// Tree are modelled.
const ALGOS: [&str; 7] = [
    "ring",
    "tree",
    "collnetdirect",
    "collnetchain",
    "nvls",
    "nvlstree",
    "pat",
];

/// `NCCL_ALGO`: a list (`Ring,Tree`), an exclusion (`^Tree`), or since NCCL
/// 2.24 per-function entries (`ring;allreduce:tree`, facts §2.2). The
/// entry for this operation's function wins over the plain one. Of what
/// remains allowed, all_reduce runs Ring when Ring is allowed, else Tree
/// (NCCL's tuner, which would pick by size, is not modelled); the other
/// collectives have only Ring, and NCCL fails them without it; p2p
/// operations have no algorithm.
pub(super) fn algo(text: &str, op: CollOp, dt: DataType, at: &KeyPath) -> Result<Algo, ModelError> {
    let key = "NCCL_ALGO";
    let func = op.name().replace('_', "");
    // Every list is checked, also those of other functions.
    let parse = |list: &str| parse_list(list, text, key, "algorithm", &ALGOS, at);
    let mut plain = None;
    let mut mine = None;
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        match entry.split_once(':') {
            Some((f, list)) => {
                let f = f.trim().to_ascii_lowercase();
                const FUNCS: [&str; 5] = [
                    "allreduce",
                    "allgather",
                    "reducescatter",
                    "broadcast",
                    "reduce",
                ];
                if !FUNCS.contains(&f.as_str()) {
                    return Err(ModelError::new(
                        at.clone(),
                        format!("{key} = \"{text}\": unknown function `{f}`"),
                    )
                    .did_you_mean(&f, FUNCS));
                }
                let parsed = parse(list)?;
                if f == func {
                    mine = Some(parsed);
                }
            }
            None => plain = Some(parse(entry)?),
        }
    }
    let Some((exclude, items)) = mine.or(plain) else {
        return Ok(Algo::Ring);
    };
    let has = |a: &str| items.iter().any(|i| i == a) != exclude;
    if op.p2p() {
        return Ok(Algo::Ring);
    }
    if has("ring") {
        return Ok(Algo::Ring);
    }
    if op == CollOp::AllReduce && has("tree") {
        return Ok(Algo::Tree);
    }
    let modelled = if op == CollOp::AllReduce {
        "Ring and Tree are modelled for all_reduce"
    } else {
        "Ring is the only algorithm modelled for it"
    };
    let nccl = if has("tree") || has("pat") || has("nvls") || has("collnetdirect") {
        // NCCL's own refusal when no allowed algorithm serves the function
        // (enqueue.cc topoGetAlgoInfo, ncclInvalidUsage).
        format!(
            "NCCL would fail: \"Error : no algorithm/protocol available for function {} with datatype {}. NCCL_ALGO was set to {text}.\"; ",
            nccl_func(op),
            nccl_type(dt)
        )
    } else {
        String::new()
    };
    Err(
        ModelError::new(at.clone(), format!("{key} = \"{text}\": {nccl}{modelled}")).hint(
            if op == CollOp::AllReduce {
                format!("set {key} = \"Ring\" or \"Tree\"")
            } else {
                format!(
                    "set {key} = \"Ring\", or scope the tree to all_reduce: \"ring;allreduce:tree\""
                )
            },
        ),
    )
}

/// `ncclFuncToString`.
fn nccl_func(op: CollOp) -> &'static str {
    match op {
        CollOp::AllReduce => "AllReduce",
        CollOp::AllGather => "AllGather",
        CollOp::ReduceScatter => "ReduceScatter",
        CollOp::Broadcast => "Broadcast",
        CollOp::Reduce => "Reduce",
        CollOp::AllToAll | CollOp::SendRecv => "SendRecv",
    }
}

/// `ncclDatatypeToString`.
fn nccl_type(dt: DataType) -> &'static str {
    match dt {
        DataType::Int8 => "ncclInt8",
        DataType::Uint8 => "ncclUint8",
        DataType::Int32 => "ncclInt32",
        DataType::Uint32 => "ncclUint32",
        DataType::Int64 => "ncclInt64",
        DataType::Uint64 => "ncclUint64",
        DataType::Half => "ncclFloat16",
        DataType::Float => "ncclFloat32",
        DataType::Double => "ncclFloat64",
        DataType::Bfloat16 => "ncclBfloat16",
        DataType::F8e4m3 => "ncclFloat8e4m3",
        DataType::F8e5m2 => "ncclFloat8e5m2",
    }
}
