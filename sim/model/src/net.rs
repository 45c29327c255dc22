//! IPv4 networks as interfaces and routes name them (`10.0.0.1/24`), and
//! the RoCE path MTU an Ethernet MTU allows.

use core::net::Ipv4Addr;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer};

/// An IPv4 interface address with prefix, `10.0.0.1/24`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IpNet {
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

impl IpNet {
    pub fn mask(&self) -> u32 {
        if self.prefix == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.prefix))
        }
    }
    pub fn contains(&self, ip: Ipv4Addr) -> bool {
        (u32::from(ip) & self.mask()) == (u32::from(self.addr) & self.mask())
    }
    pub fn network(&self) -> u32 {
        u32::from(self.addr) & self.mask()
    }
}

impl fmt::Display for IpNet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

pub fn parse_ipnet(s: &str) -> Result<IpNet, String> {
    let (a, p) = s.split_once('/').ok_or_else(|| {
        if s.contains(':') {
            format!("`{s}`: IPv6 is not modelled yet; use an IPv4 address such as \"10.0.0.1/24\"")
        } else {
            format!("`{s}` needs a prefix length, e.g. \"{s}/24\"")
        }
    })?;
    let addr: Ipv4Addr = a
        .parse()
        .map_err(|_| format!("`{a}` is not an IPv4 address"))?;
    let prefix: u8 = p
        .parse()
        .ok()
        .filter(|&p| p <= 32)
        .ok_or_else(|| format!("prefix length `{p}` must be 0..=32"))?;
    Ok(IpNet { addr, prefix })
}

impl<'de> Deserialize<'de> for IpNet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_ipnet(&s).map_err(de::Error::custom)
    }
}

/// RoCE path MTU from the Ethernet MTU, as `iboe_get_mtu` does: subtract
/// GRH, UDP, BTH, XRC, AtomicETH and ICRC sizes (96 B) and take the largest
/// IB MTU that fits.
pub fn roce_mtu(eth_mtu: u32) -> Option<u32> {
    let room = eth_mtu.checked_sub(40 + 8 + 12 + 4 + 28 + 4)?;
    [4096, 2048, 1024, 512, 256]
        .into_iter()
        .find(|&m| m <= room)
}
