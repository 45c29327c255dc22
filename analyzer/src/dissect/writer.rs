//! What the two line formats and the set-up layers ([`super::setup`], in
//! both formats) write with: [`JsonObject`] for `--format jsonl`,
//! [`Bracket`] for `--format text`.

use std::fmt::Write as _;
use std::net::IpAddr;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// A JSON object being written into a byte buffer.
pub(super) struct JsonObject<'a> {
    out: &'a mut Vec<u8>,
    empty: bool,
}

impl<'a> JsonObject<'a> {
    pub(super) fn new(out: &'a mut Vec<u8>) -> JsonObject<'a> {
        out.push(b'{');
        JsonObject { out, empty: true }
    }

    fn key(&mut self, k: &str) {
        if !self.empty {
            self.out.push(b',');
        }
        self.empty = false;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
    }

    pub(super) fn num(&mut self, k: &str, v: u64) {
        self.key(k);
        push_u64(self.out, v);
    }

    pub(super) fn bool(&mut self, k: &str, v: bool) {
        self.key(k);
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
    }

    pub(super) fn str(&mut self, k: &str, v: &str) {
        self.key(k);
        push_json_str(self.out, v);
    }

    pub(super) fn display(&mut self, k: &str, v: &dyn std::fmt::Display) {
        self.key(k);
        let mut s = Escaper(self.out);
        s.0.push(b'"');
        // Writing into a Vec cannot fail.
        let _ = write!(s, "{v}");
        s.0.push(b'"');
    }

    /// `k` as an array of numbers.
    pub(super) fn nums(&mut self, k: &str, vs: impl Iterator<Item = u64>) {
        self.key(k);
        self.out.push(b'[');
        for (i, v) in vs.enumerate() {
            if i > 0 {
                self.out.push(b',');
            }
            push_u64(self.out, v);
        }
        self.out.push(b']');
    }

    /// `k` as a string of lowercase hex digits, two per byte.
    pub(super) fn hex(&mut self, k: &str, bytes: &[u8]) {
        self.key(k);
        self.out.push(b'"');
        for &byte in bytes {
            self.out.push(HEX[usize::from(byte >> 4)]);
            self.out.push(HEX[usize::from(byte & 0xF)]);
        }
        self.out.push(b'"');
    }

    pub(super) fn close(self) {
        self.out.push(b'}');
    }
}

fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&tmp[i..]);
}

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let _ = Escaper(out).write_str(s);
    out.push(b'"');
}

/// Escapes what is written through it as the inside of a JSON string.
struct Escaper<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Escaper<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for &b in s.as_bytes() {
            match b {
                b'"' => self.0.extend_from_slice(b"\\\""),
                b'\\' => self.0.extend_from_slice(b"\\\\"),
                b'\n' => self.0.extend_from_slice(b"\\n"),
                b'\r' => self.0.extend_from_slice(b"\\r"),
                b'\t' => self.0.extend_from_slice(b"\\t"),
                0..0x20 => {
                    self.0.extend_from_slice(b"\\u00");
                    self.0.push(HEX[usize::from(b >> 4)]);
                    self.0.push(HEX[usize::from(b & 0xF)]);
                }
                _ => self.0.push(b),
            }
        }
        Ok(())
    }
}

/// Shows IPv6 addresses in brackets before a port.
pub(super) struct Bracket(pub(super) IpAddr);

impl std::fmt::Display for Bracket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(a) => write!(f, "{a}"),
            IpAddr::V6(a) => write!(f, "[{a}]"),
        }
    }
}
