//! Decoding errors that say where a frame went wrong.
//!
//! Every error names the layer that could not be decoded and the byte offset of
//! that layer from the start of the frame, so that a user can find the byte in
//! a hex dump. Truncation errors also say how many bytes the layer needed and
//! how many were left, in the manner of etherparse's `LenError`.

use core::fmt;

/// The protocol layer an error or a warning belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layer {
    Ethernet,
    Vlan,
    Ipv4,
    Ipv6,
    Udp,
    /// The 40-byte InfiniBand Global Route Header of RoCE v1.
    Grh,
    Bth,
    Rdeth,
    Deth,
    Xrceth,
    Reth,
    Feth,
    Aeth,
    AtomicEth,
    AtomicAckEth,
    ImmDt,
    Ieth,
    /// The 16 reserved bytes that follow the BTH in a CNP.
    Cnp,
    /// In-band telemetry between UDP and BTH ([`crate::wire::int`]).
    Int,
    /// Payload, pad bytes and the ICRC of an InfiniBand packet.
    IbPayload,
    Icrc,
    MacControl,
    Tcp,
    Icmpv4,
    /// The common header of a Management Datagram.
    Mad,
    /// A Communication Manager message (the class data of a CM MAD).
    Cm,
    /// perftest's out-of-band key exchange message.
    Perftest,
}

impl Layer {
    pub fn name(self) -> &'static str {
        match self {
            Layer::Ethernet => "Ethernet",
            Layer::Vlan => "802.1Q",
            Layer::Ipv4 => "IPv4",
            Layer::Ipv6 => "IPv6",
            Layer::Udp => "UDP",
            Layer::Grh => "GRH",
            Layer::Bth => "BTH",
            Layer::Rdeth => "RDETH",
            Layer::Deth => "DETH",
            Layer::Xrceth => "XRCETH",
            Layer::Reth => "RETH",
            Layer::Feth => "FETH",
            Layer::Aeth => "AETH",
            Layer::AtomicEth => "AtomicETH",
            Layer::AtomicAckEth => "AtomicAckETH",
            Layer::ImmDt => "ImmDt",
            Layer::Ieth => "IETH",
            Layer::Cnp => "CNP",
            Layer::Int => "INT",
            Layer::IbPayload => "IB payload",
            Layer::Icrc => "ICRC",
            Layer::MacControl => "MAC control",
            Layer::Tcp => "TCP",
            Layer::Icmpv4 => "ICMP",
            Layer::Mad => "MAD",
            Layer::Cm => "CM",
            Layer::Perftest => "perftest",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a frame could not be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The layer needs more bytes than the frame (or the length field of an
    /// enclosing layer) provides.
    #[error("{layer} at offset {offset}: {required} bytes required, {present} present")]
    Truncated {
        layer: Layer,
        offset: usize,
        required: usize,
        present: usize,
    },
    /// A field holds a value the layer cannot be decoded with.
    #[error("{layer} at offset {offset}: field `{field}` is {value}, {expected}")]
    Invalid {
        layer: Layer,
        offset: usize,
        field: &'static str,
        value: u64,
        expected: &'static str,
    },
}

impl Error {
    pub fn layer(&self) -> Layer {
        match *self {
            Error::Truncated { layer, .. } | Error::Invalid { layer, .. } => layer,
        }
    }

    pub fn offset(&self) -> usize {
        match *self {
            Error::Truncated { offset, .. } | Error::Invalid { offset, .. } => offset,
        }
    }

    pub fn is_truncation(&self) -> bool {
        matches!(self, Error::Truncated { .. })
    }

    /// Moves an error found inside a sub-slice to frame coordinates.
    pub(crate) fn at(mut self, base: usize) -> Self {
        match &mut self {
            Error::Truncated { offset, .. } | Error::Invalid { offset, .. } => *offset += base,
        }
        self
    }
}

pub type Result<T> = core::result::Result<T, Error>;

/// Checks that `buf` holds `required` bytes for `layer`, which starts at
/// offset 0 of `buf` (callers shift the offset with [`Error::at`]).
pub(crate) fn need(buf: &[u8], layer: Layer, required: usize) -> Result<()> {
    if buf.len() < required {
        Err(Error::Truncated {
            layer,
            offset: 0,
            required,
            present: buf.len(),
        })
    } else {
        Ok(())
    }
}

/// Conditions that do not stop decoding but that a user should see.
///
/// Kept as a bit set so that decoding never allocates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Warnings(u16);

impl Warnings {
    /// BTH opcode is reserved or not one this codec knows the headers of.
    pub const UNKNOWN_OPCODE: Warnings = Warnings(1 << 0);
    /// BTH transport header version is not 0.
    pub const TVER_NONZERO: Warnings = Warnings(1 << 1);
    /// BTH PadCnt is larger than the payload it pads.
    pub const PAD_EXCEEDS_PAYLOAD: Warnings = Warnings(1 << 2);
    /// The reserved bytes of a CNP are not zero.
    pub const CNP_RESERVED_NONZERO: Warnings = Warnings(1 << 3);
    /// An opcode that carries no payload has bytes between its headers and the ICRC.
    pub const UNEXPECTED_PAYLOAD: Warnings = Warnings(1 << 4);
    /// The GRH next-header field is not 0x1B (IBA transport).
    pub const GRH_NXTHDR: Warnings = Warnings(1 << 5);
    /// A MAC control opcode other than PAUSE or PFC.
    pub const UNKNOWN_MAC_CONTROL: Warnings = Warnings(1 << 6);
    /// The ICRC does not match the packet (set only when verification ran).
    pub const ICRC_MISMATCH: Warnings = Warnings(1 << 7);
    /// A MAC control body has non-zero bytes after the fields its opcode
    /// defines (reserved padding, or the body of an opcode not decoded).
    pub const MAC_CONTROL_PAD_NONZERO: Warnings = Warnings(1 << 8);
    /// A UDP datagram whose length field disagrees with the length the IP
    /// header gives it (IP-level padding, or an IP length the frame lacks).
    pub const UDP_LENGTH_MISMATCH: Warnings = Warnings(1 << 9);
    /// The reserved flag bit of the IPv4 header is set.
    pub const IPV4_RESERVED_FLAG: Warnings = Warnings(1 << 10);
    /// The pad bytes PadCnt announces are not zero.
    pub const PAD_NONZERO: Warnings = Warnings(1 << 11);
    /// The IPv4 total length is larger than the frame that carries it (and
    /// the frame was not cut by the snaplen): tshark's "IPv4 total length
    /// exceeds packet length". The frame is malformed.
    pub const IPV4_TOTAL_LENGTH_EXCEEDS: Warnings = Warnings(1 << 12);

    const ALL: [(Warnings, &'static str); 13] = [
        (Self::UNKNOWN_OPCODE, "reserved or unknown BTH opcode"),
        (Self::TVER_NONZERO, "BTH TVer is not 0"),
        (Self::PAD_EXCEEDS_PAYLOAD, "BTH PadCnt exceeds the payload"),
        (
            Self::CNP_RESERVED_NONZERO,
            "CNP reserved bytes are not zero",
        ),
        (
            Self::UNEXPECTED_PAYLOAD,
            "payload or pad bytes on an opcode that carries none",
        ),
        (Self::GRH_NXTHDR, "GRH next header is not 0x1B"),
        (Self::UNKNOWN_MAC_CONTROL, "unknown MAC control opcode"),
        (Self::ICRC_MISMATCH, "ICRC mismatch"),
        (
            Self::MAC_CONTROL_PAD_NONZERO,
            "MAC control bytes after the parameters are not zero",
        ),
        (
            Self::UDP_LENGTH_MISMATCH,
            "UDP length disagrees with the IP payload length",
        ),
        (Self::IPV4_RESERVED_FLAG, "IPv4 reserved flag bit is set"),
        (Self::PAD_NONZERO, "BTH pad bytes are not zero"),
        (
            Self::IPV4_TOTAL_LENGTH_EXCEEDS,
            "IPv4 total length exceeds packet length",
        ),
    ];

    pub const fn empty() -> Self {
        Warnings(0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn contains(self, other: Warnings) -> bool {
        self.0 & other.0 == other.0
    }
    pub fn insert(&mut self, other: Warnings) {
        self.0 |= other.0;
    }
    /// Human-readable descriptions of the warnings present, in a fixed order.
    pub fn descriptions(self) -> impl Iterator<Item = &'static str> {
        Self::ALL
            .into_iter()
            .filter(move |(w, _)| self.contains(*w))
            .map(|(_, d)| d)
    }
}

impl core::ops::BitOr for Warnings {
    type Output = Warnings;
    fn bitor(self, rhs: Warnings) -> Warnings {
        Warnings(self.0 | rhs.0)
    }
}

impl fmt::Display for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.descriptions().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            f.write_str(d)?;
        }
        Ok(())
    }
}
