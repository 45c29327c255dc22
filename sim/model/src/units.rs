//! Quantities as engineers write them: `100Gbps`, `25G`, `1us`, `500ns`,
//! `8MiB`, `4096`.
//!
//! Every parser returns a short sentence on failure; the scenario loader adds
//! the file, line, column and key around it.

use crate::time::{Ps, Rate};

/// A rate: `100Gbps`, `100G`, `25Gb/s`, `400gbit`, `10Mbps`, `1e9bps`.
/// The unit is required: `rate = 100` meaning 100 bit/s is never what a
/// scenario means.
pub fn parse_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    let (num, unit) = split_number(t)?;
    let u = unit.to_ascii_lowercase();
    let mult: f64 = match u.as_str() {
        "" => {
            return Err(format!(
                "rate `{t}` needs a unit, e.g. `{t}Gbps` (or `{t}bps` for bits per second)"
            ));
        }
        "bps" | "b/s" | "bit/s" => 1.0,
        "k" | "kbps" | "kb/s" | "kbit" | "kbit/s" => 1e3,
        "m" | "mbps" | "mb/s" | "mbit" | "mbit/s" => 1e6,
        "g" | "gbps" | "gb/s" | "gbit" | "gbit/s" | "gbe" => 1e9,
        "t" | "tbps" | "tb/s" | "tbit" | "tbit/s" => 1e12,
        _ => {
            return Err(format!(
                "unknown rate unit `{unit}` in `{t}` (write e.g. `100Gbps`, `25G`, `400Mbps`)"
            ));
        }
    };
    let v = num * mult;
    if !(1.0..1e16).contains(&v) {
        return Err(format!("rate `{t}` is out of range (1 bit/s .. 10 Pbit/s)"));
    }
    Ok(Rate(v.round() as u64))
}

/// A duration: `1us`, `500ns`, `2.5ms`, `1s`, `100ps`, `0`.
pub fn parse_duration(s: &str) -> Result<Ps, String> {
    let t = s.trim();
    let (num, unit) = split_number(t)?;
    let mult: f64 = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" | "μs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "" if num == 0.0 => 1.0,
        "" => {
            return Err(format!(
                "duration `{t}` needs a unit (ps, ns, us, ms, s), e.g. `1us`"
            ));
        }
        _ => {
            return Err(format!(
                "unknown time unit `{unit}` in `{t}` (use ps, ns, us, ms or s)"
            ));
        }
    };
    let v = num * mult;
    if !(0.0..1.8e19).contains(&v) {
        return Err(format!("duration `{t}` is out of range"));
    }
    Ok(Ps(v.round() as u64))
}

/// A size in bytes: `4096`, `8MiB`, `64KiB`, `1MB`, `1.5GiB`, `200000000`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t)?;
    let mult: f64 = match unit {
        "" | "B" => 1.0,
        "KiB" | "K" | "k" => 1024.0,
        "MiB" | "M" => 1024.0 * 1024.0,
        "GiB" | "G" => 1024.0 * 1024.0 * 1024.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        _ => {
            return Err(format!(
                "unknown size unit `{unit}` in `{t}` (use B, KiB, MiB, GiB, KB, MB, GB)"
            ));
        }
    };
    let v = num * mult;
    if !(0.0..1.8e19).contains(&v) || v.fract() != 0.0 {
        return Err(format!("size `{t}` is not a whole number of bytes"));
    }
    Ok(v as u64)
}

/// A cable length in millimetres: `100m`, `2.5m`, `1km`, `30cm`; a bare
/// number is metres (`7`, as `mlnx_qos --cable_len` takes it).
pub fn parse_length_mm(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = split_number(t)?;
    let mult: f64 = match unit {
        "" | "m" => 1e3,
        "km" => 1e6,
        "cm" => 10.0,
        "mm" => 1.0,
        _ => {
            return Err(format!(
                "unknown length unit `{unit}` in `{t}` (use m, km, cm or mm, e.g. `100m`)"
            ));
        }
    };
    let v = num * mult;
    if !(0.0..1e15).contains(&v) {
        return Err(format!("length `{t}` is out of range"));
    }
    Ok(v.round() as u64)
}

fn split_number(t: &str) -> Result<(f64, &str), String> {
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit()
                || c == '.'
                || c == '_'
                || ((c == 'e' || c == 'E')
                    && t[i + 1..].starts_with(|d: char| d.is_ascii_digit() || d == '-')
                    && i > 0))
        })
        .map_or(t.len(), |(i, _)| i);
    let (n, unit) = t.split_at(end);
    if n.is_empty() {
        return Err(format!("`{t}` does not start with a number"));
    }
    let v: f64 = n
        .replace('_', "")
        .parse()
        .map_err(|_| format!("`{n}` is not a number"))?;
    Ok((v, unit.trim()))
}

/// Formats a rate the way it would be written in a scenario.
pub fn fmt_rate(r: Rate) -> String {
    let b = r.bps();
    if b % 1_000_000_000 == 0 {
        format!("{}Gbps", b / 1_000_000_000)
    } else if b % 1_000_000 == 0 {
        format!("{}Mbps", b / 1_000_000)
    } else {
        format!("{b}bps")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths() {
        assert_eq!(parse_length_mm("100m"), Ok(100_000));
        assert_eq!(parse_length_mm("2.5m"), Ok(2_500));
        assert_eq!(parse_length_mm("1km"), Ok(1_000_000));
        assert_eq!(parse_length_mm("7"), Ok(7_000));
        assert_eq!(parse_length_mm("30cm"), Ok(300));
        assert!(
            parse_length_mm("3ft")
                .unwrap_err()
                .contains("unknown length unit `ft`")
        );
        assert!(parse_length_mm("-1m").is_err());
    }

    #[test]
    fn rates() {
        assert_eq!(parse_rate("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(parse_rate("25G").unwrap(), Rate::gbps(25));
        assert_eq!(parse_rate("400 Gb/s").unwrap(), Rate::gbps(400));
        assert_eq!(parse_rate("2.5Gbps").unwrap(), Rate(2_500_000_000));
        assert_eq!(parse_rate("100Mb/s").unwrap(), Rate(100_000_000));
        assert_eq!(parse_rate("1e9bps").unwrap(), Rate(1_000_000_000));
        // A bare number is refused, whatever it is meant to be.
        let e = parse_rate("100").unwrap_err();
        assert!(e.contains("needs a unit, e.g. `100Gbps`"), "{e}");
        assert!(parse_rate("1e9").is_err());
        assert!(
            parse_rate("100GB")
                .unwrap_err()
                .contains("unknown rate unit")
        );
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0G").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("1us").unwrap(), Ps::from_us(1));
        assert_eq!(parse_duration("500ns").unwrap(), Ps::from_ns(500));
        assert_eq!(parse_duration("2.5ms").unwrap(), Ps(2_500_000_000));
        assert_eq!(parse_duration("0.001ms").unwrap(), Ps::from_us(1));
        assert_eq!(parse_duration("0").unwrap(), Ps::ZERO);
        assert!(parse_duration("5").unwrap_err().contains("needs a unit"));
        assert!(
            parse_duration("5m")
                .unwrap_err()
                .contains("unknown time unit")
        );
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("8MiB").unwrap(), 8_388_608);
        assert_eq!(parse_size("64KiB").unwrap(), 65_536);
        assert_eq!(parse_size("1MB").unwrap(), 1_000_000);
        assert_eq!(parse_size("200_000_000").unwrap(), 200_000_000);
        assert!(parse_size("1.5B").is_err());
        assert!(
            parse_size("8Mib")
                .unwrap_err()
                .contains("unknown size unit")
        );
    }
}
