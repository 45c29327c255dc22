//! perftest's out-of-band connection set-up: the text messages its
//! `ib_write_bw` & co. exchange over a TCP connection to port 18515 through
//! the kernel IP path (its default, without `-R`/`--rdma_cm`).
//!
//! ```text
//!  client (servername given)                    server (listening on 18515)
//!      │── TCP SYN / SYN-ACK / ACK ───────────────────│
//!      │── keys: LID:OUT:QPN:PSN:RKEY:VADDR:GID:SRQN ─▶│  client writes first
//!      │◀─ keys ──────────────────────────────────────│  server answers
//!      │        ... both QPs to RTR/RTS, the test runs over RoCE ...
//!      │── keys again ────────────────────────────────▶│  ctx_close_connection:
//!      │◀─ keys again ────────────────────────────────│  one more hand-shake,
//!      │── "done\0" ──▶      ◀── "done\0" ─────────────│  then each side writes
//!      │── FIN ... ───────────────────────────────────│  "done" and closes
//! ```
//!
//! From `src/perftest_communication.c` and `.h` of linux-rdma/perftest:
//! `ethernet_write_keys` formats the local `pingpong_dest` with
//! `KEY_PRINT_FMT_GID` into a `char msg[KEY_MSG_SIZE_GID]` (108) and
//! `write`s the whole array, NUL and all; without a GID index (InfiniBand
//! only) `KEY_PRINT_FMT` into `KEY_MSG_SIZE` (59). `ctx_hand_shake` has the
//! client (the side given a server name) write then read, the server read
//! then write; `ctx_close_connection` repeats the hand-shake and writes
//! `"done"` (5 bytes with its NUL). Current perftest also swaps its version
//! and a few parameters (`exchange_versions`, `check_mtu`, ...) with
//! `ctx_xchg_data` before the keys; those messages are not keys and
//! [`KeyMessage::parse`] rejects them.
//!
//! ```text
//!  KEY_PRINT_FMT_GID "%04x:%04x:%06x:%06x:%08x:%016llx:" + 16 × "%02x:" + "%08x:"
//!                     LID  OUT  QPN  PSN  RKEY VADDR       GID bytes      SRQN
//! ```

use crate::error::{Error, Layer, Result};

/// perftest's default TCP port (`DEF_PORT`).
pub const PORT: u16 = 18515;
/// `KEY_MSG_SIZE_GID`: a message with a GID, its NUL included.
pub const KEY_MSG_SIZE_GID: usize = 108;
/// `KEY_MSG_SIZE`: a message without a GID, its NUL included.
pub const KEY_MSG_SIZE: usize = 59;
/// What each side writes after the closing hand-shake.
pub const DONE: &[u8; 5] = b"done\0";

/// One side's `pingpong_dest` as perftest sends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct KeyMessage {
    pub lid: u16,
    /// Outstanding RDMA READs (`out_reads`).
    pub out_reads: u16,
    pub qpn: u32,
    /// The PSN this side starts sending with.
    pub psn: u32,
    pub rkey: u32,
    pub vaddr: u64,
    /// `None` in the GID-less format (InfiniBand with LIDs; never RoCE).
    pub gid: Option<[u8; 16]>,
    pub srqn: u32,
}

fn bad(offset: usize, field: &'static str, value: u64, expected: &'static str) -> Error {
    Error::Invalid {
        layer: Layer::Perftest,
        offset,
        field,
        value,
        expected,
    }
}

impl KeyMessage {
    /// The message's length on the wire (its NUL included).
    pub fn buffer_len(&self) -> usize {
        if self.gid.is_some() {
            KEY_MSG_SIZE_GID
        } else {
            KEY_MSG_SIZE
        }
    }

    /// The text `sprintf` writes (without the NUL).
    pub fn text(&self) -> String {
        let head = format!(
            "{:04x}:{:04x}:{:06x}:{:06x}:{:08x}:{:016x}",
            self.lid, self.out_reads, self.qpn, self.psn, self.rkey, self.vaddr
        );
        match &self.gid {
            None => format!("{head}:{:08x}", self.srqn),
            Some(g) => {
                let gid: String = g.iter().map(|b| format!("{b:02x}:")).collect();
                format!("{head}:{gid}{:08x}:", self.srqn)
            }
        }
    }

    /// Writes the message, NUL-terminated, into `buf`; returns its length.
    ///
    /// # Panics
    /// If `buf` is shorter than [`KeyMessage::buffer_len`], or a field is
    /// wider than its format (a QPN or PSN over 24 bits), which perftest's
    /// fixed buffer could not hold either.
    pub fn emit(&self, buf: &mut [u8]) -> usize {
        let text = self.text();
        let n = self.buffer_len();
        assert_eq!(text.len() + 1, n, "a field is wider than its format");
        buf[..n - 1].copy_from_slice(text.as_bytes());
        buf[n - 1] = 0;
        n
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v);
        v
    }

    /// Decodes a whole key message (108 or 59 bytes, NUL-terminated).
    pub fn parse(msg: &[u8]) -> Result<KeyMessage> {
        let with_gid = match msg.len() {
            KEY_MSG_SIZE_GID => true,
            KEY_MSG_SIZE => false,
            n => return Err(bad(0, "length", n as u64, "expected 108 or 59 bytes")),
        };
        if msg[msg.len() - 1] != 0 {
            return Err(bad(
                msg.len() - 1,
                "nul",
                msg[msg.len() - 1].into(),
                "expected 0",
            ));
        }
        let text = &msg[..msg.len() - 1];
        // Field widths in hex digits, in order; each is followed by ':'
        // except the last of the GID-less format.
        const FIELDS: [(usize, &str); 7] = [
            (4, "lid"),
            (4, "out_reads"),
            (6, "qpn"),
            (6, "psn"),
            (8, "rkey"),
            (16, "vaddr"),
            (8, "srqn"),
        ];
        // With a GID, the SRQN comes after it.
        let widths = if with_gid { &FIELDS[..6] } else { &FIELDS[..] };
        let mut at = 0;
        let mut field = |width: usize, name: &'static str, last: bool| -> Result<u64> {
            let digits = &text[at..at + width];
            let value = core::str::from_utf8(digits)
                .ok()
                .filter(|s| s.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|s| u64::from_str_radix(s, 16).ok())
                .ok_or_else(|| bad(at, name, u64::from(digits[0]), "expected hex digits"))?;
            at += width;
            if !last {
                if text[at] != b':' {
                    return Err(bad(
                        at,
                        name,
                        text[at].into(),
                        "expected ':' after the field",
                    ));
                }
                at += 1;
            }
            Ok(value)
        };
        let mut v = [0u64; 7];
        for (i, (w, name)) in widths.iter().enumerate() {
            v[i] = field(*w, name, !with_gid && i == widths.len() - 1)?;
        }
        let (gid, srqn) = if with_gid {
            let mut g = [0u8; 16];
            for b in &mut g {
                *b = field(2, "gid", false)? as u8;
            }
            (Some(g), field(8, "srqn", false)? as u32)
        } else {
            (None, v[6] as u32)
        };
        Ok(KeyMessage {
            lid: v[0] as u16,
            out_reads: v[1] as u16,
            qpn: v[2] as u32,
            psn: v[3] as u32,
            rkey: v[4] as u32,
            vaddr: v[5],
            gid,
            srqn,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn roce() -> KeyMessage {
        let mut gid = [0u8; 16];
        gid[10] = 0xff;
        gid[11] = 0xff;
        gid[12..].copy_from_slice(&[192, 168, 1, 10]);
        KeyMessage {
            lid: 0,
            out_reads: 16,
            qpn: 0x000112,
            psn: 0x4c11a5,
            rkey: 0x0020_1d00,
            vaddr: 0x7f3a_5c00_0000,
            gid: Some(gid),
            srqn: 0,
        }
    }

    #[test]
    fn gid_format_is_perftests_literal_text() {
        let m = roce();
        assert_eq!(
            m.text(),
            "0000:0010:000112:4c11a5:00201d00:00007f3a5c000000:\
             00:00:00:00:00:00:00:00:00:00:ff:ff:c0:a8:01:0a:00000000:"
        );
        let mut buf = [0xa5; 108];
        assert_eq!(m.emit(&mut buf), 108);
        assert_eq!(buf[107], 0);
        assert_eq!(KeyMessage::parse(&buf).unwrap(), m);
    }

    #[test]
    fn gidless_format_is_59_bytes() {
        let m = KeyMessage {
            gid: None,
            srqn: 7,
            ..roce()
        };
        assert_eq!(
            m.text(),
            "0000:0010:000112:4c11a5:00201d00:00007f3a5c000000:00000007"
        );
        let v = m.to_vec();
        assert_eq!(v.len(), 59);
        assert_eq!(KeyMessage::parse(&v).unwrap(), m);
    }

    #[test]
    fn other_messages_are_rejected_with_the_field() {
        assert_eq!(
            KeyMessage::parse(DONE).unwrap_err().to_string(),
            "perftest at offset 0: field `length` is 5, expected 108 or 59 bytes"
        );
        let mut v = roce().to_vec();
        v[10] = b'g';
        assert_eq!(
            KeyMessage::parse(&v).unwrap_err().to_string(),
            "perftest at offset 10: field `qpn` is 103, expected hex digits"
        );
    }

    proptest! {
        #[test]
        fn round_trip(lid in any::<u16>(), out in any::<u16>(), qpn in 0u32..0x100_0000, psn in 0u32..0x100_0000,
                      rkey in any::<u32>(), vaddr in any::<u64>(), gid in proptest::option::of(any::<[u8; 16]>()),
                      srqn in any::<u32>()) {
            let m = KeyMessage { lid, out_reads: out, qpn, psn, rkey, vaddr, gid, srqn };
            prop_assert_eq!(KeyMessage::parse(&m.to_vec()).unwrap(), m);
        }
    }
}
