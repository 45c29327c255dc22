//! The command-line flags the subcommands share, as clap structs that each
//! subcommand flattens into its own, and what they mean. A flag's value is
//! checked here, and an error names the flag; the library
//! ([`AnalyzeOptions`], [`crate::dissect::Dissector`]) takes typed values
//! that are valid by construction.
//!
//! ```text
//!  dissect  FILE  DecodeFlags (--roce-port, --threads)           --format
//!  analyze  AnalysisFlags: FILE... + HowFlags (--qp,             --format, -o, --html, --interval
//!           --link-speed, --dup-window-us, --pmtu, DecodeFlags)
//!  plot     AnalysisFlags                                         --out, --max-qps
//!  compare  A B + HowFlags                                        --format, --out, --html, --flow
//!  infer    AnalysisFlags                                         --out
//! ```

use std::path::PathBuf;

use roce_codec::{ParseOptions, PortSet};

use crate::analyze::{
    Analysis, AnalyzeError, AnalyzeOptions, IntervalReport, LinkSpeed, MAX_FILES, PathMtu,
    analyze_files, analyze_files_every,
};
use crate::inputs::{InputError, Inputs};

/// A flag whose value cannot be used; shown as `--flag: why`.
#[derive(Debug, thiserror::Error)]
#[error("{flag}: {message}")]
pub struct FlagError {
    pub flag: &'static str,
    pub message: String,
}

impl FlagError {
    fn new(flag: &'static str, message: impl ToString) -> FlagError {
        FlagError {
            flag,
            message: message.to_string(),
        }
    }
}

/// How frames are decoded, in every subcommand.
#[derive(Debug, Clone, clap::Args)]
pub struct DecodeFlags {
    /// Another UDP destination port to decode as RoCEv2 (besides 4791); repeatable.
    #[arg(long = "roce-port", value_name = "N")]
    pub roce_port: Vec<u16>,
    /// Threads that decode (default: one per core, up to 16): each file's reader, and
    /// N-1 helpers shared by all files. The output is the same for any value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: Option<u16>,
}

impl DecodeFlags {
    /// The RoCEv2 ports: 4791 and those of `--roce-port` (one meaning for
    /// one flag in every subcommand).
    pub fn roce_ports(&self) -> Result<PortSet, FlagError> {
        let mut ports = vec![roce_codec::hash::ROCE_V2_UDP_DPORT];
        for &p in &self.roce_port {
            if !ports.contains(&p) {
                ports.push(p);
            }
        }
        PortSet::new(&ports).ok_or_else(|| {
            FlagError::new(
                "--roce-port",
                format!("at most {} ports besides 4791", PortSet::MAX - 1),
            )
        })
    }

    /// The codec options: the RoCEv2 ports, every ICRC checked.
    pub fn parse_options(&self) -> Result<ParseOptions, FlagError> {
        Ok(ParseOptions {
            roce_v2_ports: self.roce_ports()?,
            verify_icrc: true,
        })
    }

    /// `--threads`, when given.
    pub fn threads(&self) -> Option<usize> {
        self.threads.map(usize::from)
    }
}

/// What to analyze and how, in `analyze` and `plot`.
#[derive(Debug, Clone, clap::Args)]
pub struct AnalysisFlags {
    /// Captures (pcap, pcapng, optionally gzip-compressed), typically one per
    /// bond slave of one host, in the bond's enslave order (captures of both
    /// ends of a path would show every frame twice); `-` is standard input; a
    /// directory stands for the captures in it (a rocesim run directory: its
    /// taps' captures).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub how: HowFlags,
}

/// How captures are analyzed, in every subcommand that analyzes.
#[derive(Debug, Clone, clap::Args)]
pub struct HowFlags {
    /// Only flows whose responder or requester QPN is this (hex 0x45 or decimal).
    #[arg(long, value_name = "QPN", value_parser = parse_qpn)]
    pub qp: Option<u32>,
    /// Link speed in Gb/s, to turn pause quanta into time [default: the speed of
    /// the tapped ports of a rocesim run directory, else 100].
    #[arg(long, value_name = "GBPS")]
    pub link_speed: Option<f64>,
    #[command(flatten)]
    pub decode: DecodeFlags,
    /// Identical frames closer than this (µs) are mirror-port copies.
    #[arg(long, value_name = "US", default_value_t = 10.0)]
    pub dup_window_us: f64,
    /// Path MTU (256..4096); learned from the traffic when not given.
    #[arg(long, value_name = "BYTES")]
    pub pmtu: Option<u32>,
}

/// The link speed when neither `--link-speed` nor the inputs give one.
pub const DEFAULT_LINK_SPEED_GBPS: f64 = 100.0;

/// Why the analysis a subcommand asked for did not run.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisFailed {
    #[error(transparent)]
    Flag(#[from] FlagError),
    #[error(transparent)]
    Input(#[from] InputError),
    #[error(transparent)]
    Analyze(#[from] AnalyzeError),
}

/// An interval in ns and what to do with each interval's summary.
pub type Every<'a> = (u64, &'a mut dyn FnMut(&IntervalReport));

/// An analysis and what it read.
#[derive(Debug, Clone)]
pub struct Analyzed {
    pub analysis: Analysis,
    pub inputs: Inputs,
}

impl AnalysisFlags {
    /// Analyzes the inputs with the options these flags ask for, with time
    /// series when `series` (for plots).
    pub fn analyze(&self, series: bool) -> Result<Analyzed, AnalysisFailed> {
        self.analyze_as(
            Keep {
                series,
                ..Keep::default()
            },
            None,
        )
    }

    /// Analyzes keeping what `keep` asks for, handing a summary of every
    /// interval to the callback of `every` as the captures stream in.
    pub fn analyze_as(
        &self,
        keep: Keep,
        every: Option<Every<'_>>,
    ) -> Result<Analyzed, AnalysisFailed> {
        if self.files.len() > MAX_FILES {
            return Err(FlagError::new("FILE", "too many files").into());
        }
        self.how
            .analyze_as(Inputs::resolve(&self.files)?, keep, every)
    }
}

/// What an analysis keeps beyond the report: time series for plots, each
/// flow's first messages for `infer`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Keep {
    pub series: bool,
    pub message_log: bool,
}

impl HowFlags {
    /// Analyzes the captures of `inputs` with these options, with time
    /// series when `series`.
    pub fn analyze(&self, inputs: Inputs, series: bool) -> Result<Analyzed, AnalysisFailed> {
        self.analyze_as(
            inputs,
            Keep {
                series,
                ..Keep::default()
            },
            None,
        )
    }

    fn analyze_as(
        &self,
        inputs: Inputs,
        keep: Keep,
        every: Option<Every<'_>>,
    ) -> Result<Analyzed, AnalysisFailed> {
        let opts = AnalyzeOptions {
            series: keep.series,
            message_log: keep.message_log,
            ..self.options(&inputs)?
        };
        let files = inputs.files();
        let analysis = match every {
            Some((ns, out)) => analyze_files_every(&files, &opts, ns, out)?,
            None => analyze_files(&files, &opts)?,
        };
        Ok(Analyzed { analysis, inputs })
    }

    /// The options these flags ask for (with a progress bar on a terminal),
    /// or the first flag that is wrong. The link speed is `--link-speed`,
    /// else the one the inputs state, else 100 Gb/s.
    pub fn options(&self, inputs: &Inputs) -> Result<AnalyzeOptions, AnalysisFailed> {
        if !(self.dup_window_us >= 0.0 && self.dup_window_us.is_finite()) {
            return Err(FlagError::new(
                "--dup-window-us",
                format!("{} is not a duration in µs", self.dup_window_us),
            )
            .into());
        }
        let gbps = match self.link_speed {
            Some(g) => g,
            None => inputs.link_speed_gbps()?.unwrap_or(DEFAULT_LINK_SPEED_GBPS),
        };
        let link_speed =
            LinkSpeed::from_gbps(gbps).map_err(|e| FlagError::new("--link-speed", e))?;
        let pmtu = self
            .pmtu
            .map(PathMtu::new)
            .transpose()
            .map_err(|e| FlagError::new("--pmtu", e))?;
        let roce_ports = self.decode.roce_ports()?;
        Ok(AnalyzeOptions {
            link_speed,
            roce_ports,
            dup_window_ns: (self.dup_window_us * 1000.0).round() as u64,
            pmtu,
            qp: self.qp,
            series: false,
            progress: true,
            message_log: false,
            threads: self.decode.threads(),
        })
    }
}

/// The end of `--help` of the subcommands that analyze: `text` (what they
/// write, examples), then their exit status; `output` is what they write,
/// `done` what they did with a file that ends mid-record.
pub fn after_help(text: &str, output: &str, done: &str) -> String {
    format!(
        "{text}\n\nExit status: 0 ok, 2 bad input or flag (or the {output} could not be written),\n\
         3 a file ends in the middle of a record ({done} up to there; the file and\n\
         byte offset are on stderr)."
    )
}

/// A duration with its unit, as people write it: `1s`, `500ms`, `250us`
/// (or `µs`), `100ns`; in nanoseconds, at least 1.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("'{s}' needs a unit: s, ms, us or ns (e.g. 1s, 500ms)"))?;
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 1s, 500ms, 250us)"))?;
    let scale = match unit.trim() {
        "s" => 1e9,
        "ms" => 1e6,
        "us" | "µs" => 1e3,
        "ns" => 1.0,
        u => return Err(format!("'{u}' is not a unit of time (s, ms, us, ns)")),
    };
    let ns = (v * scale).round();
    if !(1.0..=1e18).contains(&ns) {
        return Err(format!("'{s}' is out of range (1ns to 31 years)"));
    }
    Ok(ns as u64)
}

/// A QPN as people write it: hex with `0x` or decimal, at most 24 bits.
pub fn parse_qpn(s: &str) -> Result<u32, String> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("'{s}' is not a QPN (hex 0x45 or decimal 69): {e}"))?;
    if v > 0xFF_FFFF {
        return Err(format!("'{s}' is more than 24 bits"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags() -> HowFlags {
        HowFlags {
            qp: None,
            link_speed: None,
            decode: DecodeFlags {
                roce_port: Vec::new(),
                threads: None,
            },
            dup_window_us: 10.0,
            pmtu: None,
        }
    }

    fn options(f: &HowFlags) -> Result<AnalyzeOptions, AnalysisFailed> {
        f.options(&Inputs::default())
    }

    #[test]
    fn each_bad_value_names_its_flag() {
        for bad in [1e-9, 0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = options(&HowFlags {
                link_speed: Some(bad),
                ..flags()
            })
            .unwrap_err()
            .to_string();
            assert!(e.starts_with("--link-speed: "), "{e}");
        }
        let e = HowFlags {
            pmtu: Some(1500),
            ..flags()
        };
        assert_eq!(
            options(&e).unwrap_err().to_string(),
            "--pmtu: 1500 is not an IB path MTU (256, 512, 1024, 2048, 4096)"
        );
        let e = HowFlags {
            dup_window_us: -1.0,
            ..flags()
        };
        assert_eq!(
            options(&e).unwrap_err().to_string(),
            "--dup-window-us: -1 is not a duration in µs"
        );
        let mut e = flags();
        e.decode.roce_port = (1..=8).collect();
        assert_eq!(
            options(&e).unwrap_err().to_string(),
            "--roce-port: at most 7 ports besides 4791"
        );
    }

    #[test]
    fn good_values_become_typed_options() {
        let mut f = flags();
        f.decode.roce_port = vec![1000, 4791, 1000];
        f.pmtu = Some(1024);
        f.dup_window_us = 2.5;
        let o = options(&f).unwrap();
        assert_eq!(o.roce_ports.as_slice(), [4791, 1000]);
        assert_eq!(o.pmtu.map(PathMtu::bytes), Some(1024));
        assert_eq!(o.dup_window_ns, 2_500);
        assert_eq!(o.link_speed.gbps(), 100.0);
        f.link_speed = Some(25.0);
        assert_eq!(options(&f).unwrap().link_speed.gbps(), 25.0);
    }

    #[test]
    fn durations_need_a_unit() {
        assert_eq!(parse_duration("1s"), Ok(1_000_000_000));
        assert_eq!(parse_duration("2.5ms"), Ok(2_500_000));
        assert_eq!(parse_duration("250us"), Ok(250_000));
        assert_eq!(parse_duration("250µs"), Ok(250_000));
        assert_eq!(parse_duration("7ns"), Ok(7));
        assert!(parse_duration("1").unwrap_err().contains("needs a unit"));
        assert!(parse_duration("1h").unwrap_err().contains("not a unit"));
        assert!(parse_duration("0s").unwrap_err().contains("out of range"));
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn qpns_are_hex_or_decimal_and_24_bits() {
        assert_eq!(parse_qpn("0x45"), Ok(0x45));
        assert_eq!(parse_qpn("69"), Ok(69));
        assert!(parse_qpn("0x1000000").unwrap_err().contains("24 bits"));
        assert!(parse_qpn("q").is_err());
    }
}
