//! The reference's flow completion output (`fct.txt`, `fct_*.txt`): one
//! line per finished flow, in completion order.
//!
//! ```text
//! 0b00bd01 0b003801 10000 100 9426 2000000217 12959 13032
//! sip      dip      sport dport size start_ns fct_ns standalone_fct_ns
//! ```
//!
//! Addresses are hex, node n being `0x0b000001 + (n / 256) << 16 + (n %
//! 256) << 8`; `standalone_fct_ns` is the ideal time on an empty network
//! ([`rocesim_model::topology::Routes::reference_ideal_fct`]).

use core::net::Ipv4Addr;
use std::path::Path;

use super::{FormatError, Record, Records};

/// One completed flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HpccFct {
    pub sip: Ipv4Addr,
    pub dip: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
    pub size: u64,
    pub start_ns: u64,
    pub fct_ns: u64,
    pub standalone_ns: u64,
    pub line: usize,
}

impl HpccFct {
    /// The node id in an address (`ip_to_node_id` in the reference).
    pub fn node_of(ip: Ipv4Addr) -> u32 {
        (u32::from(ip) >> 8) & 0xffff
    }
    pub fn src_node(&self) -> u32 {
        Self::node_of(self.sip)
    }
    pub fn dst_node(&self) -> u32 {
        Self::node_of(self.dip)
    }
    /// FCT over the ideal, at least 1 (the reference's analysis scripts
    /// clamp it so).
    pub fn slowdown(&self) -> f64 {
        (self.fct_ns as f64 / self.standalone_ns.max(1) as f64).max(1.0)
    }
}

/// Reads and parses an FCT file; errors name the path as given.
pub fn read(path: &Path) -> Result<Vec<HpccFct>, FormatError> {
    super::read_with(path, parse)
}

/// Parses the text of an FCT file called `file` (for messages).
pub fn parse(text: &str, file: &str) -> Result<Vec<HpccFct>, FormatError> {
    let ip = |r: &Record, n: usize, name: &'static str| {
        let s = r.fields[n - 1];
        match u32::from_str_radix(s, 16) {
            Ok(v) if s.len() == 8 => Ok(Ipv4Addr::from(v)),
            _ => Err(r.field_error(
                n,
                name,
                format!("expected 8 hex digits like 0b000201, found '{s}'"),
            )),
        }
    };
    Records::new(file, text)
        .map(|r| {
            r.expect_fields(
                &[
                    "sip",
                    "dip",
                    "sport",
                    "dport",
                    "size",
                    "start_ns",
                    "fct_ns",
                    "standalone_fct_ns",
                ],
                "sip dip sport dport size start_ns fct_ns standalone_fct_ns",
            )?;
            Ok(HpccFct {
                sip: ip(&r, 1, "sip")?,
                dip: ip(&r, 2, "dip")?,
                sport: r.uint(3, "sport", u64::from(u16::MAX))? as u16,
                dport: r.uint(4, "dport", u64::from(u16::MAX))? as u16,
                size: r.uint(5, "size", u64::MAX)?,
                start_ns: r.uint(6, "start_ns", u64::MAX)?,
                fct_ns: r.uint(7, "fct_ns", u64::MAX)?,
                standalone_ns: r.uint(8, "standalone_fct_ns", u64::MAX)?,
                line: r.line,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line() {
        let f = parse(
            "0b00bd01 0b003801 10000 100 9426 2000000217 12959 13032\n",
            "f.txt",
        )
        .unwrap();
        let f = f[0];
        assert_eq!((f.src_node(), f.dst_node()), (189, 56));
        assert_eq!(f.sip, Ipv4Addr::new(11, 0, 189, 1));
        assert_eq!(
            (
                f.sport,
                f.dport,
                f.size,
                f.start_ns,
                f.fct_ns,
                f.standalone_ns
            ),
            (10000, 100, 9426, 2_000_000_217, 12959, 13032)
        );
        assert_eq!(f.slowdown(), 1.0);
        assert_eq!(
            parse("0b00bd0 0b003801 1 1 1 1 1 1\n", "f.txt")
                .unwrap_err()
                .to_string(),
            "f.txt:1: field 1 (sip): expected 8 hex digits like 0b000201, found '0b00bd0'"
        );
    }
}
