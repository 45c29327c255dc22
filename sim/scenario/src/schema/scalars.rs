//! Values written as one string or number with their own parser:
//! quantities with a unit (a bad unit is reported at the value that holds
//! it), MAC and IPv4 addresses.

use core::net::Ipv4Addr;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use rocesim_model::time::{Ps, Rate};
use rocesim_model::units;

/// A rate written as `100Gbps` / `25G` / `400Mbps` (the unit is required).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateQ(pub Rate);
/// A duration written as `1us`, `500ns`, `2.5ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dur(pub Ps);
/// A byte count written as `4096`, `8MiB`, `1MB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);
/// A cable length written as `100m`, `2.5m`, `1km`, in millimetres.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Length(pub u64);

macro_rules! quantity {
    ($ty:ident, $parse:path, $what:literal) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_str<E: de::Error>(self, s: &str) -> Result<$ty, E> {
                        $parse(s).map($ty).map_err(E::custom)
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        self.visit_str(&v.to_string())
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}
quantity!(
    RateQ,
    units::parse_rate,
    "a rate such as \"100Gbps\" or \"25G\""
);
quantity!(
    Dur,
    units::parse_duration,
    "a duration such as \"1us\" or \"500ns\""
);
quantity!(
    Bytes,
    units::parse_size,
    "a size such as \"4096\" or \"8MiB\""
);
quantity!(
    Length,
    units::parse_length_mm,
    "a length such as \"100m\" or \"2.5m\""
);

/// A MAC address `02:00:00:00:00:01`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mac(pub [u8; 6]);

impl<'de> Deserialize<'de> for Mac {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_mac(&s).map(Mac).map_err(de::Error::custom)
    }
}

pub fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split([':', '-']).collect();
    let bad = || format!("`{s}` is not a MAC address (write e.g. \"02:00:00:00:00:01\")");
    if parts.len() != 6 {
        return Err(bad());
    }
    let mut m = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        if p.len() != 2 {
            return Err(bad());
        }
        m[i] = u8::from_str_radix(p, 16).map_err(|_| bad())?;
    }
    if m[0] & 1 == 1 || m == [0; 6] {
        // An interface's own address must be a station's: frames to a
        // group address are flooded, and ARP could not answer with it.
        return Err(format!(
            "`{s}` is not a unicast MAC address (the first octet must be even, and not all zeros), e.g. \"02:00:00:00:00:01\""
        ));
    }
    Ok(m)
}

pub fn fmt_mac(m: &[u8; 6]) -> String {
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// A plain IPv4 address (gateway).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ip(pub Ipv4Addr);

impl<'de> Deserialize<'de> for Ip {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse()
            .map(Ip)
            .map_err(|_| de::Error::custom(format!("`{s}` is not an IPv4 address")))
    }
}

/// The default of an optional delay: none.
pub(super) fn zero_dur() -> Dur {
    Dur(Ps::ZERO)
}
