//! What a frame costs the wire and the buffers when its sender's profile
//! does not bill it at its real size: [`Billing`] (the HPCC ns-3
//! reference's sizes), and the sizes a packet carries ([`frame_sizes`]).

use roce_codec::{IbRepr, Opcode};

use crate::time::{FCS_LEN, WIRE_OVERHEAD};

/// How a NIC bills its RoCE frames to the wire and to buffers, when not
/// at their real size.
///
/// A real frame of a 1000-byte RDMA WRITE MIDDLE takes 1082 bytes of wire
/// time (Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble,
/// SFD and gap 20) and 1058 bytes of buffer. The HPCC ns-3 reference
/// counts 1048 for both (its 14-byte PPP header standing for Ethernet,
/// IPv4, UDP and a 6-byte sequence header; no FCS, preamble or gap) and 60
/// for an ACK. Reproducing its experiments means timing, pacing and
/// buffering frames at its sizes; captures and byte counters keep the real
/// frames, which are what a NIC would put on a wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Billing {
    /// Bytes a packet of the QP's data (request or READ response) costs
    /// beyond its payload; 0: its real frame.
    pub header_bytes: u16,
    /// Bytes an ACK, NAK or CNP costs; 0: its real frame.
    pub ack_bytes: u16,
}

impl Billing {
    /// Every frame at its real size.
    pub const REAL: Billing = Billing {
        header_bytes: 0,
        ack_bytes: 0,
    };

    /// The HPCC ns-3 reference's sizes (see [`crate::world::NicProfile`]'s
    /// `hpcc` preset for where they come from).
    pub const HPCC: Billing = Billing {
        header_bytes: 48,
        ack_bytes: 60,
    };

    /// [`Billing::HPCC`] with the reference's HPCC telemetry: 42 bytes
    /// more on every data packet and on every ACK (then 88 bytes).
    pub const HPCC_INT: Billing = Billing {
        header_bytes: 48 + 42,
        ack_bytes: 14 + 20 + 12 + 42,
    };

    /// [`Billing::HPCC`] with HPCC-PINT's telemetry (the reference's
    /// `CC_MODE 10`): its header is a 2-byte union (`IntHeader`'s `pint`,
    /// whatever `pint_bytes` of it the power fills), so a data packet costs
    /// 48 + 2, and an ACK of 14 + 20 + 12 + 2 is still padded to 60.
    pub const HPCC_PINT: Billing = Billing {
        header_bytes: 48 + 2,
        ack_bytes: 60,
    };

    /// The billed size of `ib`'s frame, `None`: its real frame.
    #[inline]
    pub fn billed(&self, ib: &IbRepr) -> Option<u32> {
        // RC ACKNOWLEDGE (NAKs too) and CNP: no payload, one size.
        const RC_ACKNOWLEDGE: u8 = 0x11;
        let (bytes, payload) = match ib.bth.opcode {
            Opcode(RC_ACKNOWLEDGE) | Opcode::CNP => (self.ack_bytes, 0),
            _ => (self.header_bytes, ib.payload_len),
        };
        (bytes != 0).then(|| u32::from(bytes) + payload)
    }
}

/// `(frame_len, billed_len, wire_extra)` of a frame of `frame_len` bytes
/// (no FCS) billed at `billed` bytes of wire and buffer, or at its real
/// size.
pub fn frame_sizes(frame_len: u32, billed: Option<u32>) -> (u16, u16, u8) {
    let real = u16::try_from(frame_len).expect("a frame is shorter than 64 KiB");
    match billed {
        None => (real, real, (FCS_LEN + WIRE_OVERHEAD) as u8),
        Some(b) => (
            real,
            u16::try_from(b).expect("a billed frame is shorter than 64 KiB"),
            0,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::pkt;
    use roce_codec::Psn;

    /// A data packet is billed its payload + `header_bytes` whatever its
    /// extension headers (a WRITE FIRST's RETH, a READ request's none); an
    /// ACK, NAK or CNP `ack_bytes`; a zero keeps the real frame, whose
    /// wire time adds FCS, preamble and gap.
    #[test]
    fn billing_replaces_the_headers_not_the_payload() {
        let h = Billing::HPCC;
        let first = IbRepr::new(Opcode(0x06), 7, Psn::new(1), 1000);
        let middle = IbRepr::new(Opcode(0x07), 7, Psn::new(2), 1000);
        let read = IbRepr::new(Opcode(0x0C), 7, Psn::new(3), 0);
        let ack = IbRepr::ack(7, Psn::new(2), roce_codec::Syndrome(0), 0);
        let cnp = IbRepr::cnp(7);
        assert_eq!(h.billed(&first), Some(1048));
        assert_eq!(h.billed(&middle), Some(1048));
        assert_eq!(h.billed(&read), Some(48));
        assert_eq!(h.billed(&ack), Some(60));
        assert_eq!(h.billed(&cnp), Some(60));
        let data_only = Billing { ack_bytes: 0, ..h };
        assert_eq!(data_only.billed(&ack), None);
        assert_eq!(Billing::REAL.billed(&middle), None);
        assert_eq!(frame_sizes(1058, None), (1058, 1058, 24));
        assert_eq!(frame_sizes(1058, Some(1048)), (1058, 1048, 0));
        let mut p = pkt(1000);
        assert_eq!(p.wire_bytes(), u64::from(p.frame_len) + 24);
        (p.frame_len, p.billed_len, p.wire_extra) = frame_sizes(p.frame_len.into(), Some(1048));
        assert_eq!(p.wire_bytes(), 1048);
    }
}
