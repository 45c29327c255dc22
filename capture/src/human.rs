//! Numbers as people read them, for every table, finding and message of
//! both tools, so that `rocesim` and `roce-pcap` write the same quantity the
//! same way: bytes and rates in powers of 1000 (as link rates are), times
//! in the unit that shows their digits, counts with their noun.

/// Byte counts in powers of 1000: `512 B`, `1.5 kB`, `2.10 MB`, `1.25 GB`.
pub fn bytes(n: u64) -> String {
    let n = n as f64;
    if n >= 1e9 {
        format!("{:.2} GB", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.2} MB", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1} kB", n / 1e3)
    } else {
        format!("{n} B")
    }
}

/// A duration given in nanoseconds: `750 ns`, `4.10 µs`, `4.194 ms`, `1.000 s`.
pub fn duration(ns: u64) -> String {
    let n = ns as f64;
    if n >= 1e9 {
        format!("{:.3} s", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.3} ms", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.2} µs", n / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// A duration in a sentence: fewer digits than [`duration`], and never
/// below microseconds: `0.8 µs`, `512.0 µs`, `67.1 ms`, `1.25 s`.
pub fn duration_brief(ns: u64) -> String {
    let n = ns as f64;
    if n >= 1e9 {
        format!("{:.2} s", n / 1e9)
    } else if n >= 1e6 {
        format!("{:.1} ms", n / 1e6)
    } else {
        format!("{:.1} µs", n / 1e3)
    }
}

/// A rate given in Gb/s, in the unit that shows its digits: a slow flow
/// reads `12.3 Mb/s`, not `0.000 Gb/s`.
pub fn rate(gbps: f64) -> String {
    let bps = gbps * 1e9;
    if bps >= 1e9 {
        format!("{gbps:.3} Gb/s")
    } else if bps >= 1e6 {
        format!("{:.3} Mb/s", bps / 1e6)
    } else if bps >= 1e3 {
        format!("{:.3} kb/s", bps / 1e3)
    } else {
        format!("{bps:.0} b/s")
    }
}

/// `n` and `noun`, plural unless `n` is 1, by the English rule for the
/// nouns the tools count: `1 packet`, `2 packets`, `3 switches`.
pub fn plural(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {noun}");
    }
    let es = ["ch", "sh", "s", "x", "z"]
        .iter()
        .any(|e| noun.ends_with(e));
    format!("{n} {noun}{}", if es { "es" } else { "s" })
}

/// Rows of cells as a text table: right-aligned columns two spaces apart,
/// a rule of dashes under the first (header) row, no trailing blanks.
pub fn table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(c, s)| format!("{s:>w$}", w = widths[c]))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("  "));
            out.push('\n');
        }
    }
    out
}

/// The closest candidate by edit distance, if it is close enough to be a
/// plausible typo.
pub fn closest<'a>(got: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(got, c), c))
        .filter(|&(d, c)| d <= 2.max(c.len() / 3))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_keep_their_digits() {
        assert_eq!(rate(6.186), "6.186 Gb/s");
        assert_eq!(rate(1.0), "1.000 Gb/s");
        assert_eq!(rate(0.054), "54.000 Mb/s");
        assert_eq!(rate(0.0000033), "3.300 kb/s");
        assert_eq!(rate(0.0000000014), "1 b/s");
        assert_eq!(rate(0.0), "0 b/s");
    }

    #[test]
    fn bytes_and_durations_pick_their_unit() {
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_500), "1.5 kB");
        assert_eq!(bytes(2_100_000), "2.10 MB");
        assert_eq!(bytes(1_250_000_000), "1.25 GB");
        assert_eq!(duration(750), "750 ns");
        assert_eq!(duration(4_096), "4.10 µs");
        assert_eq!(duration(4_194_304), "4.194 ms");
        assert_eq!(duration(1_000_000_000), "1.000 s");
        assert_eq!(duration_brief(750), "0.8 µs");
        assert_eq!(duration_brief(512_000), "512.0 µs");
        assert_eq!(duration_brief(67_108_864), "67.1 ms");
        assert_eq!(duration_brief(1_250_000_000), "1.25 s");
    }

    #[test]
    fn plurals() {
        assert_eq!(plural(1u64, "packet"), "1 packet");
        assert_eq!(plural(0u64, "packet"), "0 packets");
        assert_eq!(plural(37u64, "ACK"), "37 ACKs");
        assert_eq!(plural(1u64, "switch"), "1 switch");
        assert_eq!(plural(3u64, "switch"), "3 switches");
        assert_eq!(plural(2u64, "RC connection"), "2 RC connections");
    }

    #[test]
    fn tables_align_right_under_a_rule() {
        let rows = vec![
            vec!["port".to_string(), "tx".into()],
            vec!["hostA.eth0".to_string(), "12".into()],
        ];
        assert_eq!(
            table(&rows),
            "      port  tx\n----------  --\nhostA.eth0  12\n"
        );
    }
}
