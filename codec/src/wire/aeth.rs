//! ACK Extended Transport Header: the responder's verdict and its MSN.
//!
//! ```text
//! +-----------+--------------------------+
//! | Syndrome  |  Message Sequence Number |
//! |    (8)    |          (24)            |
//! +-----------+--------------------------+
//!  syndrome = rsvd(1) | type(2) | value(5)
//!    type 00 ACK      value = credit code (31 = no credit information)
//!    type 01 RNR NAK  value = RNR timer code
//!    type 10 reserved
//!    type 11 NAK      value = NAK code (0 PSN sequence error, 1 invalid
//!                     request, 2 remote access, 3 remote operational,
//!                     4 invalid RD request)
//! ```

use crate::error::{Layer, Result};
use crate::wire::parse_fixed;
use nom::number::complete::{be_u8, be_u24};

mod field {
    use core::ops::Range;
    pub const SYNDROME: usize = 0;
    pub const MSN: Range<usize> = 1..4;
}

/// rdmavt `credit_table`: credit code → number of receive WQEs.
const CREDITS: [u32; 31] = [
    0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536,
    2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
];

/// `enum ib_rnr_timeout`: RNR timer code → microseconds.
const RNR_TIMER_US: [u32; 32] = [
    655_360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840,
    5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440, 81920, 122_880, 163_840, 245_760,
    327_680, 491_520,
];

/// The NAK codes of syndrome type 11.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NakCode {
    PsnSequenceError,
    InvalidRequest,
    RemoteAccessError,
    RemoteOperationalError,
    InvalidRdRequest,
    Unknown(u8),
}

impl NakCode {
    pub fn from_value(v: u8) -> NakCode {
        match v {
            0 => NakCode::PsnSequenceError,
            1 => NakCode::InvalidRequest,
            2 => NakCode::RemoteAccessError,
            3 => NakCode::RemoteOperationalError,
            4 => NakCode::InvalidRdRequest,
            other => NakCode::Unknown(other),
        }
    }

    pub fn value(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
            NakCode::Unknown(v) => v & 0x1F,
        }
    }

    /// The completion status a requester reports for this NAK (rxe_comp.c):
    /// 9 REM_INV_REQ_ERR, 10 REM_ACCESS_ERR, 11 REM_OP_ERR; `None` for the
    /// sequence error, which triggers a retry instead.
    pub fn wc_status(self) -> Option<u8> {
        match self {
            NakCode::PsnSequenceError => None,
            NakCode::InvalidRequest => Some(9),
            NakCode::RemoteAccessError => Some(10),
            _ => Some(11),
        }
    }
}

/// What an AETH syndrome says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyndromeKind {
    Ack { credit_code: u8 },
    RnrNak { timer_code: u8 },
    Reserved { value: u8 },
    Nak(NakCode),
}

/// The raw syndrome byte; decoding is a view so that every byte round-trips.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Syndrome(pub u8);

impl Syndrome {
    /// An ACK carrying "no credit information" (code 31), which is what
    /// RoCE NICs without end-to-end credits send.
    pub const ACK_NO_CREDITS: Syndrome = Syndrome(0x1F);
    pub const NAK_PSN_SEQUENCE_ERROR: Syndrome = Syndrome(0x60);

    pub fn ack(credit_code: u8) -> Syndrome {
        Syndrome(credit_code & 0x1F)
    }
    pub fn rnr_nak(timer_code: u8) -> Syndrome {
        Syndrome(0x20 | (timer_code & 0x1F))
    }
    pub fn nak(code: NakCode) -> Syndrome {
        Syndrome(0x60 | code.value())
    }

    pub fn kind(self) -> SyndromeKind {
        let value = self.0 & 0x1F;
        match (self.0 >> 5) & 0x3 {
            0 => SyndromeKind::Ack { credit_code: value },
            1 => SyndromeKind::RnrNak { timer_code: value },
            2 => SyndromeKind::Reserved { value },
            _ => SyndromeKind::Nak(NakCode::from_value(value)),
        }
    }

    pub fn is_ack(self) -> bool {
        matches!(self.kind(), SyndromeKind::Ack { .. })
    }

    /// Receive credits advertised by an ACK (`None` for code 31 or a NAK).
    pub fn credits(self) -> Option<u32> {
        match self.kind() {
            SyndromeKind::Ack { credit_code } => CREDITS.get(credit_code as usize).copied(),
            _ => None,
        }
    }

    /// The minimum RNR wait an RNR NAK asks for, in microseconds.
    pub fn rnr_timer_us(self) -> Option<u32> {
        match self.kind() {
            SyndromeKind::RnrNak { timer_code } => Some(RNR_TIMER_US[timer_code as usize]),
            _ => None,
        }
    }

    /// A stable snake_case name for reports: `ack`, `rnr_nak`,
    /// `psn_sequence_error`, `invalid_request`, `remote_access_error`,
    /// `remote_operational_error`, `invalid_rd_request`, `nak_unknown`,
    /// `reserved`.
    pub fn name(self) -> &'static str {
        match self.kind() {
            SyndromeKind::Ack { .. } => "ack",
            SyndromeKind::RnrNak { .. } => "rnr_nak",
            SyndromeKind::Reserved { .. } => "reserved",
            SyndromeKind::Nak(code) => match code {
                NakCode::PsnSequenceError => "psn_sequence_error",
                NakCode::InvalidRequest => "invalid_request",
                NakCode::RemoteAccessError => "remote_access_error",
                NakCode::RemoteOperationalError => "remote_operational_error",
                NakCode::InvalidRdRequest => "invalid_rd_request",
                NakCode::Unknown(_) => "nak_unknown",
            },
        }
    }
}

/// RNR timer code → microseconds, for any code 0..=31.
pub fn rnr_timer_us(code: u8) -> u32 {
    RNR_TIMER_US[(code & 0x1F) as usize]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AethRepr {
    pub syndrome: Syndrome,
    /// 24-bit message sequence number.
    pub msn: u32,
}

impl AethRepr {
    pub const LEN: usize = 4;

    pub fn parse(buf: &[u8]) -> Result<AethRepr> {
        let (syndrome, msn) = parse_fixed(buf, Layer::Aeth, Self::LEN, (be_u8, be_u24))?;
        Ok(AethRepr {
            syndrome: Syndrome(syndrome),
            msn,
        })
    }

    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::SYNDROME] = self.syndrome.0;
        buf[field::MSN].copy_from_slice(&self.msn.to_be_bytes()[1..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syndrome_kinds_follow_the_ib_spec_aeth_table() {
        assert_eq!(Syndrome(0x1F).kind(), SyndromeKind::Ack { credit_code: 31 });
        assert_eq!(Syndrome(0x1F).credits(), None);
        assert_eq!(Syndrome(0x05).credits(), Some(6));
        assert_eq!(Syndrome(0x06).credits(), Some(8));
        assert_eq!(Syndrome(0x1E).credits(), Some(32768));
        assert_eq!(
            Syndrome(0x60).kind(),
            SyndromeKind::Nak(NakCode::PsnSequenceError)
        );
        assert_eq!(Syndrome(0x61).name(), "invalid_request");
        assert_eq!(Syndrome(0x62).name(), "remote_access_error");
        assert_eq!(Syndrome(0x63).name(), "remote_operational_error");
        assert_eq!(Syndrome(0x64).name(), "invalid_rd_request");
        assert_eq!(Syndrome(0x40).kind(), SyndromeKind::Reserved { value: 0 });
        assert_eq!(
            Syndrome(0x2E).kind(),
            SyndromeKind::RnrNak { timer_code: 14 }
        );
        assert_eq!(Syndrome(0x2E).rnr_timer_us(), Some(1280));
        assert_eq!(Syndrome(0x20).rnr_timer_us(), Some(655_360));
        assert_eq!(Syndrome::rnr_nak(31).rnr_timer_us(), Some(491_520));
        assert_eq!(Syndrome::nak(NakCode::RemoteAccessError), Syndrome(0x62));
        assert_eq!(NakCode::RemoteAccessError.wc_status(), Some(10));
        assert_eq!(NakCode::PsnSequenceError.wc_status(), None);
    }

    #[test]
    fn parse_and_emit() {
        let bytes = [0x60, 0x12, 0x34, 0x56];
        let r = AethRepr::parse(&bytes).unwrap();
        assert_eq!(
            r,
            AethRepr {
                syndrome: Syndrome(0x60),
                msn: 0x123456
            }
        );
        let mut buf = [0xa5; 4];
        r.emit(&mut buf);
        assert_eq!(buf, bytes);
    }
}
