//! How to analyze: [`AnalyzeOptions`] and the typed values it holds. A
//! value of these types is valid by construction, so the analysis never
//! checks (or names) a command-line flag: the CLI turns flags into these
//! values and says which flag was wrong when one cannot be built.

use roce_codec::PortSet;

/// A value an option cannot take; the CLI prefixes the flag's name.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    #[error("{0} is not a link speed in Gb/s (0.001 to 1000000)")]
    LinkSpeed(f64),
    #[error("{0} is not an IB path MTU (256, 512, 1024, 2048, 4096)")]
    PathMtu(u32),
}

/// A link speed, to turn pause quanta into time: 1 Mb/s to 1 Pb/s. Below
/// that a pause of 65535 quanta lasts longer than any clock here counts,
/// and no RoCE link is that slow.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpeed(f64);

impl LinkSpeed {
    pub const MIN_GBPS: f64 = 0.001;
    pub const MAX_GBPS: f64 = 1e6;

    pub fn from_gbps(gbps: f64) -> Result<LinkSpeed, OptionError> {
        // NaN is in no range.
        if (Self::MIN_GBPS..=Self::MAX_GBPS).contains(&gbps) {
            Ok(LinkSpeed(gbps))
        } else {
            Err(OptionError::LinkSpeed(gbps))
        }
    }

    pub fn gbps(self) -> f64 {
        self.0
    }

    pub fn bits_per_second(self) -> u64 {
        (self.0 * 1e9).round() as u64
    }
}

impl Default for LinkSpeed {
    fn default() -> Self {
        LinkSpeed(100.0)
    }
}

/// An InfiniBand path MTU: the payload bytes of every packet of a message
/// but its last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathMtu(u32);

impl PathMtu {
    pub const VALUES: [u32; 5] = [256, 512, 1024, 2048, 4096];

    pub fn new(bytes: u32) -> Result<PathMtu, OptionError> {
        if Self::VALUES.contains(&bytes) {
            Ok(PathMtu(bytes))
        } else {
            Err(OptionError::PathMtu(bytes))
        }
    }

    pub fn bytes(self) -> u32 {
        self.0
    }
}

/// How to analyze.
#[derive(Debug, Clone)]
pub struct AnalyzeOptions {
    /// Link speed for converting pause quanta to time.
    pub link_speed: LinkSpeed,
    /// UDP destination ports decoded as RoCEv2 (4791 by default).
    pub roce_ports: PortSet,
    /// Identical frames closer than this are mirror-port copies.
    pub dup_window_ns: u64,
    /// The path MTU, when known; otherwise learned per flow from FIRST and
    /// MIDDLE packets.
    pub pmtu: Option<PathMtu>,
    /// Keep only flows whose responder or requester QPN is this.
    pub qp: Option<u32>,
    /// Collect time series for plots.
    pub series: bool,
    /// Show a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
    /// Keep each flow's first 4096 messages (kind, size, start) in the
    /// report (`QpReport::wire`), for `infer`.
    pub message_log: bool,
    /// Threads that decode: each file's reader thread decodes when the
    /// `threads - 1` helper threads (shared by all files) are busy; `None`
    /// is one per core, up to 16. The result is the same for any value.
    pub threads: Option<usize>,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            link_speed: LinkSpeed::default(),
            roce_ports: PortSet::default(),
            dup_window_ns: 10_000,
            pmtu: None,
            qp: None,
            series: false,
            progress: false,
            message_log: false,
            threads: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_speeds_outside_1_mbps_to_1_pbps_are_refused() {
        for bad in [1e-9, 0.0, -1.0, f64::NAN, f64::INFINITY, 1.1e6] {
            assert!(LinkSpeed::from_gbps(bad).is_err(), "{bad}");
        }
        assert_eq!(
            LinkSpeed::from_gbps(0.0).unwrap_err().to_string(),
            "0 is not a link speed in Gb/s (0.001 to 1000000)"
        );
        assert_eq!(
            LinkSpeed::from_gbps(0.001).unwrap().bits_per_second(),
            1_000_000
        );
        assert_eq!(LinkSpeed::default().bits_per_second(), 100_000_000_000);
    }

    #[test]
    fn path_mtus_are_the_five_ib_sizes() {
        for m in PathMtu::VALUES {
            assert_eq!(PathMtu::new(m).unwrap().bytes(), m);
        }
        assert_eq!(
            PathMtu::new(1500).unwrap_err().to_string(),
            "1500 is not an IB path MTU (256, 512, 1024, 2048, 4096)"
        );
    }
}
