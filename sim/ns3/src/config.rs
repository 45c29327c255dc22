//! The reference's run configuration (`config_*.txt`, `*.cfg`).
//!
//! One `KEY value...` per line. Every key the reference's `third.cc`
//! reads is known here, typed, and defaults to the reference's own
//! default; a key it does not know is an error with a "did you mean" hint
//! (the reference would silently read the value as the next key). Units
//! are the reference's: the DCQCN intervals and `PAUSE_TIME` are
//! microseconds, `QLEN_MON_*` nanoseconds, `SIMULATOR_STOP_TIME` seconds,
//! `BUFFER_SIZE` MiB per switch, rates ns-3 strings (`20Mb/s`).
//!
//! The ECN maps are a count and then pairs, the rate in bit/s:
//!
//! ```text
//! KMAX_MAP 2 100000000000 1600 400000000000 6400     Kmax 1600 x 1000 B at 100G, 6400 x 1000 B at 400G
//! PMAX_MAP 2 100000000000 0.20 400000000000 0.20
//! ```

use std::collections::HashMap;
use std::path::Path;

use roce_capture::human::plural;

use super::{FormatError, Record, Records, parse_rate, parse_time};
use rocesim_model::cc::{DcqcnParams, ParamError, RedParams, ReferenceDcqcn};
use rocesim_model::time::{Ps, Rate};

/// The congestion control a run uses (`CC_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CcMode {
    /// 1: DCQCN as Mellanox NICs run it.
    Dcqcn,
    /// 3: HPCC.
    Hpcc,
    /// 7: TIMELY.
    Timely,
    /// 8: DCTCP.
    Dctcp,
    /// 10: HPCC-PINT.
    HpccPint,
}

impl CcMode {
    /// `CC_MODE`'s number and the algorithm's name.
    pub fn describe(self) -> &'static str {
        match self {
            CcMode::Dcqcn => "1 (DCQCN)",
            CcMode::Hpcc => "3 (HPCC)",
            CcMode::Timely => "7 (TIMELY)",
            CcMode::Dctcp => "8 (DCTCP)",
            CcMode::HpccPint => "10 (HPCC-PINT)",
        }
    }

    fn from_code(v: u64) -> Option<CcMode> {
        Some(match v {
            1 => CcMode::Dcqcn,
            3 => CcMode::Hpcc,
            7 => CcMode::Timely,
            8 => CcMode::Dctcp,
            10 => CcMode::HpccPint,
            _ => return None,
        })
    }
}

/// Per link rate values (`KMAX_MAP`, `KMIN_MAP`, `PMAX_MAP`), in file order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RateMap<T> {
    pub entries: Vec<(Rate, T)>,
}

impl<T: Copy> RateMap<T> {
    /// The value for ports of exactly this rate (the reference requires one
    /// for every port rate in the topology).
    pub fn get(&self, rate: Rate) -> Option<T> {
        self.entries
            .iter()
            .find(|(r, _)| *r == rate)
            .map(|&(_, v)| v)
    }
}

/// `LINK_DOWN t a b`: the link between nodes a and b fails `after` past the
/// 2 s at which the workload starts (`t` microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkDown {
    pub after: Ps,
    pub a: u32,
    pub b: u32,
}

/// Every setting of a reference run. Fields default to the reference's
/// defaults (`third.cc`'s globals), so a config that omits a key means
/// what it meant to the reference.
#[derive(Debug, Clone, PartialEq)]
pub struct HpccConfig {
    // Files, as written (relative to where the reference ran).
    pub topology_file: Option<String>,
    pub flow_file: Option<String>,
    pub trace_file: Option<String>,
    pub trace_output_file: Option<String>,
    pub fct_output_file: String,
    pub pfc_output_file: String,
    pub qlen_mon_file: Option<String>,

    // Congestion control.
    pub cc_mode: CcMode,
    /// ECN marking at the switches.
    pub enable_qcn: bool,
    pub use_dynamic_pfc_threshold: bool,
    pub clamp_target_rate: bool,
    pub alpha_resume_interval: Ps,
    /// Unset in the reference means 0.
    pub rp_timer: Ps,
    /// The reference's default is 0: its source writes `1 / 16`, an
    /// integer division.
    pub ewma_gain: f64,
    pub rate_decrease_interval: Ps,
    pub fast_recovery_times: u32,
    pub rate_ai: Option<Rate>,
    pub rate_hai: Option<Rate>,
    pub min_rate: Rate,
    pub dctcp_rate_ai: Rate,
    /// A window of one BDP per flow (HPCC); 0 in the DCQCN runs.
    pub has_win: bool,
    /// 1: every flow's window and RTT are the fabric's largest; otherwise
    /// the flow's own pair's.
    pub global_t: u32,
    pub mi_thresh: u32,
    pub var_win: bool,
    pub fast_react: bool,
    pub u_target: f64,
    pub int_multi: u32,
    pub multi_rate: bool,
    pub sample_feedback: bool,
    pub pint_log_base: f64,
    pub pint_prob: f64,
    pub rate_bound: bool,

    // NIC and L2.
    /// Payload bytes per packet; the reference adds 48 bytes of headers.
    pub packet_payload_size: u32,
    pub l2_chunk_size: u32,
    /// ACK every this many packets (0: per chunk).
    pub l2_ack_interval: u32,
    /// Go back to the start of a chunk on loss (0: go-back-N).
    pub l2_back_to_zero: bool,
    /// The NIC's ACK queue (served before every QP) stops only when queue
    /// 0 is paused (else when queue 3 is). Its switches queue the ACKs with
    /// the data either way: they carry the data's `pg`, and third.cc never
    /// sets the switches' own `AckHighPrio`.
    pub ack_high_prio: bool,
    /// PFC pause quanta as time.
    pub pause_time: Ps,
    /// Read, never used by the reference (the topology sets every link).
    pub data_rate: Option<Rate>,
    /// Read, never used by the reference.
    pub link_delay: Option<Ps>,
    pub error_rate_per_link: f64,

    // Switches.
    /// Shared buffer per switch in MiB (the reference multiplies by 1024 x 1024).
    pub buffer_size: u32,
    /// ECN thresholds in units of 1000 bytes, per port rate.
    pub kmax_map: RateMap<u32>,
    pub kmin_map: RateMap<u32>,
    /// Marking probability at Kmax, per port rate.
    pub pmax_map: RateMap<f64>,

    // The run.
    pub simulator_stop_time: Ps,
    pub link_down: Option<LinkDown>,
    pub enable_trace: bool,
    pub qlen_mon_start: Ps,
    pub qlen_mon_end: Ps,

    /// The line each key was set on (1-based), for messages about its value.
    pub lines: HashMap<String, usize>,
}

impl Default for HpccConfig {
    fn default() -> HpccConfig {
        HpccConfig {
            topology_file: None,
            flow_file: None,
            trace_file: None,
            trace_output_file: None,
            fct_output_file: "fct.txt".into(),
            pfc_output_file: "pfc.txt".into(),
            qlen_mon_file: None,
            cc_mode: CcMode::Dcqcn,
            enable_qcn: true,
            use_dynamic_pfc_threshold: true,
            clamp_target_rate: false,
            alpha_resume_interval: Ps::from_us(55),
            rp_timer: Ps::ZERO,
            ewma_gain: 0.0,
            rate_decrease_interval: Ps::from_us(4),
            fast_recovery_times: 5,
            rate_ai: None,
            rate_hai: None,
            min_rate: Rate(100_000_000),
            dctcp_rate_ai: Rate(1_000_000_000),
            has_win: true,
            global_t: 1,
            mi_thresh: 5,
            var_win: false,
            fast_react: true,
            u_target: 0.95,
            int_multi: 1,
            multi_rate: true,
            sample_feedback: false,
            pint_log_base: 1.05,
            pint_prob: 1.0,
            rate_bound: true,
            packet_payload_size: 1000,
            l2_chunk_size: 0,
            l2_ack_interval: 0,
            l2_back_to_zero: false,
            ack_high_prio: false,
            pause_time: Ps::from_us(5),
            data_rate: None,
            link_delay: None,
            error_rate_per_link: 0.0,
            buffer_size: 16,
            kmax_map: RateMap::default(),
            kmin_map: RateMap::default(),
            pmax_map: RateMap::default(),
            simulator_stop_time: Ps(3_010_000_000_000),
            link_down: None,
            enable_trace: true,
            qlen_mon_start: Ps::from_ns(2_000_000_000),
            qlen_mon_end: Ps::from_ns(2_100_000_000),
            lines: HashMap::new(),
        }
    }
}

impl HpccConfig {
    /// The line `key` was set on; 0 when the config leaves it at the
    /// reference's default.
    pub fn line_of(&self, key: &str) -> usize {
        self.lines.get(key).copied().unwrap_or(0)
    }

    /// The switch buffer in bytes.
    pub fn buffer_bytes(&self) -> u64 {
        u64::from(self.buffer_size) * 1024 * 1024
    }

    /// Kmin and Kmax in bytes and Pmax for ports of `rate`, when all three
    /// maps have it.
    pub fn ecn(&self, rate: Rate) -> Option<(u64, u64, f64)> {
        Some((
            u64::from(self.kmin_map.get(rate)?) * 1000,
            u64::from(self.kmax_map.get(rate)?) * 1000,
            self.pmax_map.get(rate)?,
        ))
    }
}

/// Every key the reference reads, in `third.cc`'s order.
pub const KEYS: [&str; 50] = [
    "ENABLE_QCN",
    "USE_DYNAMIC_PFC_THRESHOLD",
    "CLAMP_TARGET_RATE",
    "PAUSE_TIME",
    "DATA_RATE",
    "LINK_DELAY",
    "PACKET_PAYLOAD_SIZE",
    "L2_CHUNK_SIZE",
    "L2_ACK_INTERVAL",
    "L2_BACK_TO_ZERO",
    "TOPOLOGY_FILE",
    "FLOW_FILE",
    "TRACE_FILE",
    "TRACE_OUTPUT_FILE",
    "SIMULATOR_STOP_TIME",
    "ALPHA_RESUME_INTERVAL",
    "RP_TIMER",
    "EWMA_GAIN",
    "FAST_RECOVERY_TIMES",
    "RATE_AI",
    "RATE_HAI",
    "ERROR_RATE_PER_LINK",
    "CC_MODE",
    "RATE_DECREASE_INTERVAL",
    "MIN_RATE",
    "FCT_OUTPUT_FILE",
    "HAS_WIN",
    "GLOBAL_T",
    "MI_THRESH",
    "VAR_WIN",
    "FAST_REACT",
    "U_TARGET",
    "INT_MULTI",
    "RATE_BOUND",
    "ACK_HIGH_PRIO",
    "DCTCP_RATE_AI",
    "PFC_OUTPUT_FILE",
    "LINK_DOWN",
    "ENABLE_TRACE",
    "KMAX_MAP",
    "KMIN_MAP",
    "PMAX_MAP",
    "BUFFER_SIZE",
    "QLEN_MON_FILE",
    "QLEN_MON_START",
    "QLEN_MON_END",
    "MULTI_RATE",
    "SAMPLE_FEEDBACK",
    "PINT_LOG_BASE",
    "PINT_PROB",
];

/// Reads and parses a config file; errors name the path as given.
pub fn read(path: &Path) -> Result<HpccConfig, FormatError> {
    super::read_with(path, parse)
}

/// Parses the text of a config file called `file` (for messages).
pub fn parse(text: &str, file: &str) -> Result<HpccConfig, FormatError> {
    let mut c = HpccConfig::default();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for r in Records::new(file, text) {
        let key = r.fields[0];
        if let Some(first) = seen.insert(key, r.line) {
            return Err(r.field_error(
                1,
                "key",
                format!("{key} is set twice (first on line {first})"),
            ));
        }
        c.lines.insert(key.to_string(), r.line);
        if !apply(&mut c, key, &Value(&r))? {
            let hint = roce_capture::human::closest(key, KEYS)
                .map(|k| format!(" (did you mean `{k}`?)"))
                .unwrap_or_default();
            return Err(r.field_error(1, "key", format!("unknown key `{key}`{hint}")));
        }
    }
    Ok(c)
}

/// The value fields of one `KEY value...` line.
struct Value<'r, 'a>(&'r Record<'a>);

impl Value<'_, '_> {
    fn key(&self) -> &str {
        self.0.fields[0]
    }
    /// Refuses a line without exactly `n` values.
    fn count(&self, n: usize) -> Result<(), FormatError> {
        let got = self.0.fields.len() - 1;
        if got == n {
            return Ok(());
        }
        Err(self.0.error(format!(
            "{} takes {}, found {got}",
            self.key(),
            plural(n as u64, "value")
        )))
    }
    fn one(&self) -> Result<&str, FormatError> {
        self.count(1)?;
        Ok(self.0.fields[1])
    }
    fn string(&self) -> Result<String, FormatError> {
        self.one().map(str::to_string)
    }
    fn uint(&self, max: u64) -> Result<u64, FormatError> {
        self.count(1)?;
        self.0.uint(2, "value", max)
    }
    fn u32(&self) -> Result<u32, FormatError> {
        Ok(self.uint(u64::from(u32::MAX))? as u32)
    }
    fn flag(&self) -> Result<bool, FormatError> {
        let v = self.one()?;
        match v {
            "0" => Ok(false),
            "1" => Ok(true),
            _ => Err(self
                .0
                .field_error(2, "value", format!("expected 0 or 1, found '{v}'"))),
        }
    }
    fn float(&self) -> Result<f64, FormatError> {
        self.count(1)?;
        self.0.float(2, "value")
    }
    fn probability(&self) -> Result<f64, FormatError> {
        let p = self.float()?;
        if (0.0..=1.0).contains(&p) {
            return Ok(p);
        }
        Err(self.0.field_error(
            2,
            "value",
            format!("expected a probability 0..=1, found {p}"),
        ))
    }
    fn rate(&self) -> Result<Rate, FormatError> {
        parse_rate(self.one()?).map_err(|m| self.0.field_error(2, "value", m))
    }
    /// A number in `unit` (us, ns, or empty for seconds) as a duration.
    fn time(&self, unit: &str) -> Result<Ps, FormatError> {
        let v = self.one()?;
        parse_time(&format!("{v}{unit}")).map_err(|_| {
            let what = match unit {
                "us" => "microseconds",
                "ns" => "nanoseconds",
                _ => "seconds",
            };
            self.0.field_error(
                2,
                "value",
                format!("expected a number of {what}, found '{v}'"),
            )
        })
    }
    /// `N rate value rate value ...`, each value read by `value`.
    fn map<T: Copy>(
        &self,
        value: impl Fn(&Record, usize) -> Result<T, FormatError>,
    ) -> Result<RateMap<T>, FormatError> {
        let r = self.0;
        if r.fields.len() < 2 {
            return Err(r.error(format!(
                "{} takes a count, then rate value pairs",
                self.key()
            )));
        }
        let n = r.uint(2, "count", 64)? as usize;
        if r.fields.len() != 2 + 2 * n {
            return Err(r.error(format!(
                "{} declares {}, so {} after the count, found {}",
                self.key(),
                plural(n as u64, "pair"),
                plural(2 * n as u64, "value"),
                r.fields.len() - 2
            )));
        }
        let mut m = RateMap {
            entries: Vec::new(),
        };
        for i in 0..n {
            let f = 3 + 2 * i;
            let rate = Rate(r.uint(f, "rate", u64::MAX)?);
            if rate.bps() == 0 {
                return Err(r.field_error(f, "rate", "a rate in bit/s above 0, e.g. 100000000000"));
            }
            if m.get(rate).is_some() {
                return Err(r.field_error(
                    f,
                    "rate",
                    format!("rate {} is listed twice", rate.bps()),
                ));
            }
            m.entries.push((rate, value(r, f + 1)?));
        }
        Ok(m)
    }
}

/// Sets `key` from its line; false for a key the reference does not know.
fn apply(c: &mut HpccConfig, key: &str, v: &Value) -> Result<bool, FormatError> {
    match key {
        "ENABLE_QCN" => c.enable_qcn = v.flag()?,
        "USE_DYNAMIC_PFC_THRESHOLD" => c.use_dynamic_pfc_threshold = v.flag()?,
        "CLAMP_TARGET_RATE" => c.clamp_target_rate = v.flag()?,
        "PAUSE_TIME" => c.pause_time = v.time("us")?,
        "DATA_RATE" => c.data_rate = Some(v.rate()?),
        "LINK_DELAY" => {
            let d = v.one()?;
            c.link_delay = Some(parse_time(d).map_err(|m| v.0.field_error(2, "value", m))?);
        }
        "PACKET_PAYLOAD_SIZE" => {
            c.packet_payload_size = v.u32()?;
            if c.packet_payload_size == 0 {
                return Err(v
                    .0
                    .field_error(2, "value", "a packet carries at least 1 byte"));
            }
        }
        "L2_CHUNK_SIZE" => c.l2_chunk_size = v.u32()?,
        "L2_ACK_INTERVAL" => c.l2_ack_interval = v.u32()?,
        "L2_BACK_TO_ZERO" => c.l2_back_to_zero = v.flag()?,
        "TOPOLOGY_FILE" => c.topology_file = Some(v.string()?),
        "FLOW_FILE" => c.flow_file = Some(v.string()?),
        "TRACE_FILE" => c.trace_file = Some(v.string()?),
        "TRACE_OUTPUT_FILE" => c.trace_output_file = Some(v.string()?),
        "SIMULATOR_STOP_TIME" => c.simulator_stop_time = v.time("")?,
        "ALPHA_RESUME_INTERVAL" => c.alpha_resume_interval = v.time("us")?,
        "RP_TIMER" => c.rp_timer = v.time("us")?,
        "EWMA_GAIN" => c.ewma_gain = v.probability()?,
        "FAST_RECOVERY_TIMES" => c.fast_recovery_times = v.u32()?,
        "RATE_AI" => c.rate_ai = Some(v.rate()?),
        "RATE_HAI" => c.rate_hai = Some(v.rate()?),
        "ERROR_RATE_PER_LINK" => c.error_rate_per_link = v.probability()?,
        "CC_MODE" => {
            let code = v.uint(u64::from(u32::MAX))?;
            c.cc_mode = CcMode::from_code(code).ok_or_else(|| {
                v.0.field_error(
                    2,
                    "value",
                    format!(
                        "CC_MODE {code} is not one the reference implements \
                         (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP, 10 HPCC-PINT)"
                    ),
                )
            })?;
        }
        "RATE_DECREASE_INTERVAL" => c.rate_decrease_interval = v.time("us")?,
        "MIN_RATE" => c.min_rate = v.rate()?,
        "FCT_OUTPUT_FILE" => c.fct_output_file = v.string()?,
        "HAS_WIN" => c.has_win = v.flag()?,
        "GLOBAL_T" => c.global_t = v.u32()?,
        "MI_THRESH" => c.mi_thresh = v.u32()?,
        "VAR_WIN" => c.var_win = v.flag()?,
        "FAST_REACT" => c.fast_react = v.flag()?,
        "U_TARGET" => c.u_target = v.float()?,
        "INT_MULTI" => c.int_multi = v.u32()?,
        "RATE_BOUND" => c.rate_bound = v.flag()?,
        "ACK_HIGH_PRIO" => c.ack_high_prio = v.flag()?,
        "DCTCP_RATE_AI" => c.dctcp_rate_ai = v.rate()?,
        "PFC_OUTPUT_FILE" => c.pfc_output_file = v.string()?,
        "LINK_DOWN" => {
            v.count(3)?;
            let r = v.0;
            let us = r.uint(2, "time_us", u64::MAX / 1_000_000)?;
            let (a, b) = (r.uint(3, "a", 65535)? as u32, r.uint(4, "b", 65535)? as u32);
            c.link_down = (us > 0).then_some(LinkDown {
                after: Ps::from_us(us),
                a,
                b,
            });
        }
        "ENABLE_TRACE" => c.enable_trace = v.flag()?,
        "KMAX_MAP" => {
            c.kmax_map = v.map(|r, f| Ok(r.uint(f, "kmax", u64::from(u32::MAX))? as u32))?
        }
        "KMIN_MAP" => {
            c.kmin_map = v.map(|r, f| Ok(r.uint(f, "kmin", u64::from(u32::MAX))? as u32))?
        }
        "PMAX_MAP" => {
            c.pmax_map = v.map(|r, f| {
                let p = r.float(f, "pmax")?;
                if (0.0..=1.0).contains(&p) {
                    Ok(p)
                } else {
                    Err(r.field_error(
                        f,
                        "pmax",
                        format!("expected a probability 0..=1, found {p}"),
                    ))
                }
            })?
        }
        "BUFFER_SIZE" => c.buffer_size = v.uint(4095)? as u32,
        "QLEN_MON_FILE" => c.qlen_mon_file = Some(v.string()?),
        "QLEN_MON_START" => c.qlen_mon_start = v.time("ns")?,
        "QLEN_MON_END" => c.qlen_mon_end = v.time("ns")?,
        "MULTI_RATE" => c.multi_rate = v.flag()?,
        "SAMPLE_FEEDBACK" => c.sample_feedback = v.flag()?,
        "PINT_LOG_BASE" => c.pint_log_base = v.float()?,
        "PINT_PROB" => c.pint_prob = v.probability()?,
        // KEYS (for hints) and this match are one list; a test keeps them so.
        _ => return Ok(false),
    }
    Ok(true)
}

impl HpccConfig {
    /// Its DCQCN as ConnectX knobs ([`DcqcnParams::hpcc_reference`]);
    /// errors name the key, `CC_MODE` when the file runs another algorithm.
    pub fn dcqcn(&self) -> Result<DcqcnParams, ParamError> {
        if self.cc_mode != CcMode::Dcqcn {
            return Err(
                ParamError::new("CC_MODE", format!("is {:?}, not DCQCN", self.cc_mode))
                    .hint("CC_MODE 1 is DCQCN"),
            );
        }
        DcqcnParams::hpcc_reference(&ReferenceDcqcn {
            alpha_resume_interval: self.alpha_resume_interval,
            rate_decrease_interval: self.rate_decrease_interval,
            rp_timer: self.rp_timer,
            ewma_gain: self.ewma_gain,
            fast_recovery_times: self.fast_recovery_times,
            rate_ai: self.rate_ai,
            rate_hai: self.rate_hai,
            min_rate: self.min_rate,
            clamp_target_rate: self.clamp_target_rate,
        })
    }

    /// The ECN marking of a port of `rate` ([`RedParams::hpcc_reference`])
    /// and the maps (`KMIN_MAP`, ...) that have no entry for it.
    pub fn red(&self, rate: Rate) -> (RedParams, Vec<&'static str>) {
        RedParams::hpcc_reference(
            self.kmin_map.get(rate).map(f64::from),
            self.kmax_map.get(rate).map(f64::from),
            self.pmax_map.get(rate),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text, "c.txt").unwrap_err().to_string()
    }

    #[test]
    fn every_known_key_has_an_arm() {
        let values = |k: &str| match k {
            "LINK_DOWN" => "0 0 0",
            k if k.ends_with("_MAP") => "1 100000000000 1",
            "DATA_RATE" | "RATE_AI" | "RATE_HAI" | "MIN_RATE" | "DCTCP_RATE_AI" => "10Gbps",
            "LINK_DELAY" => "1us",
            "CC_MODE" => "3",
            _ => "1",
        };
        for k in KEYS {
            let line = format!("{k} {}\n", values(k));
            parse(&line, "c.txt").unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }

    #[test]
    fn typed_values_and_units() {
        let c = parse(
            "CC_MODE 3\nRP_TIMER 300\nEWMA_GAIN 0.00390625\nRATE_AI 20Mb/s\n\
             SIMULATOR_STOP_TIME 4.00\nQLEN_MON_END 3000000000\nLINK_DOWN 1000 320 340\n\
             KMAX_MAP 2 100000000000 1600 400000000000 6400\n\
             KMIN_MAP 2 100000000000 400 400000000000 1600\n\
             PMAX_MAP 2 100000000000 0.20 400000000000 0.20\n\
             TOPOLOGY_FILE mix/fat.txt\nBUFFER_SIZE 32\n",
            "c.txt",
        )
        .unwrap();
        assert_eq!(c.cc_mode, CcMode::Hpcc);
        assert_eq!(c.rp_timer, Ps::from_us(300));
        assert_eq!(c.ewma_gain, 1.0 / 256.0);
        assert_eq!(c.rate_ai, Some(Rate(20_000_000)));
        assert_eq!(c.simulator_stop_time, Ps::from_ms(4000));
        assert_eq!(c.qlen_mon_end, Ps::from_ms(3000));
        assert_eq!(
            c.link_down,
            Some(LinkDown {
                after: Ps::from_ms(1),
                a: 320,
                b: 340
            })
        );
        assert_eq!(c.ecn(Rate::gbps(400)), Some((1_600_000, 6_400_000, 0.2)));
        assert_eq!(c.ecn(Rate::gbps(25)), None);
        assert_eq!(c.topology_file.as_deref(), Some("mix/fat.txt"));
        assert_eq!(c.buffer_bytes(), 32 << 20);
        // Unset keys keep the reference's defaults.
        assert_eq!(c.min_rate, Rate(100_000_000));
        assert_eq!(c.fct_output_file, "fct.txt");
        assert!(c.has_win);
    }

    #[test]
    fn malformed_lines() {
        assert_eq!(
            err("CC_MODE 1\nKMAX_MAPP 1 100000000000 1600\n"),
            "c.txt:2: field 1 (key): unknown key `KMAX_MAPP` (did you mean `KMAX_MAP`?)"
        );
        assert_eq!(
            err("FROBNICATE 1\n"),
            "c.txt:1: field 1 (key): unknown key `FROBNICATE`"
        );
        assert_eq!(
            err("CC_MODE 1\n\nCC_MODE 3\n"),
            "c.txt:3: field 1 (key): CC_MODE is set twice (first on line 1)"
        );
        assert_eq!(err("CC_MODE\n"), "c.txt:1: CC_MODE takes 1 value, found 0");
        assert_eq!(
            err("CC_MODE 5\n"),
            "c.txt:1: field 2 (value): CC_MODE 5 is not one the reference implements \
             (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP, 10 HPCC-PINT)"
        );
        assert_eq!(
            err("HAS_WIN 2\n"),
            "c.txt:1: field 2 (value): expected 0 or 1, found '2'"
        );
        assert_eq!(
            err("RATE_AI 20Mbs\n"),
            "c.txt:1: field 2 (value): expected a rate like 100Gbps, found '20Mbs' (did you mean `20Mbps`?)"
        );
        assert_eq!(
            err("RP_TIMER 3x\n"),
            "c.txt:1: field 2 (value): expected a number of microseconds, found '3x'"
        );
        assert_eq!(
            err("KMAX_MAP 2 100000000000 1600 400000000000\n"),
            "c.txt:1: KMAX_MAP declares 2 pairs, so 4 values after the count, found 3"
        );
        assert_eq!(
            err("KMIN_MAP 1 100Gbps 400\n"),
            "c.txt:1: field 3 (rate): expected a whole number, found '100Gbps'"
        );
        assert_eq!(
            err("PMAX_MAP 2 100000000000 0.2 100000000000 0.3\n"),
            "c.txt:1: field 5 (rate): rate 100000000000 is listed twice"
        );
        assert_eq!(
            err("PMAX_MAP 1 100000000000 1.2\n"),
            "c.txt:1: field 4 (pmax): expected a probability 0..=1, found 1.2"
        );
    }
}
