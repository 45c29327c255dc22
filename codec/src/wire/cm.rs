//! Communication Manager messages (IBA 1.2 chapter 12), the class data of
//! a MAD of management class 0x07: how two QPs are connected.
//!
//! ```text
//!  active (client)                       passive (server)
//!      │── REQ  local QPN, starting PSN ──▶│   resent after the CM response
//!      │◀─ MRA  (optional: "wait longer") ─│   timeout, at most max CM retries
//!      │◀─ REP  local QPN, starting PSN ───│   or REJ with a reason
//!      │── RTU ───────────────────────────▶│   both QPs now RTS: established
//!      ...
//!      │── DREQ ──────────────────────────▶│   disconnect
//!      │◀─ DREP ───────────────────────────│
//! ```
//!
//! Offsets are from the start of the class data (byte 24 of the MAD), as
//! Linux's `drivers/infiniband/core/cm_msgs.h` lays them out (struct
//! `cm_req_msg` and friends, after `struct ib_mad_hdr`; the sizes of the
//! private data from `enum ib_cm_data_size` in `include/rdma/ib_cm.h`).
//! tshark 4.0 decodes the same fields (`infiniband.cm.req.*` ...; checked
//! field by field in `analyzer/tests/tshark_setup.rs`).
//! Bit fields are big-endian, most significant bit first:
//!
//! ```text
//!  REQ  0 local comm ID          4 reserved (ECE vendor ID)   8 service ID (64)
//!      16 local CA GUID (64)    24 reserved                  28 local Q_Key
//!      32 local QPN(24) | responder resources(8)
//!      36 local EECN(24) | initiator depth(8)
//!      40 remote EECN(24) | remote CM response timeout(5) | transport(2) | e2e flow ctl(1)
//!      44 starting PSN(24) | local CM response timeout(5) | retry count(3)
//!      48 P_Key  50 path MTU(4)|RDC(1)|RNR retry(3)  51 max CM retries(4)|SRQ(1)|ext transport(3)
//!      52 primary path (44)     96 alternate path (44)      140 private data (92)
//!  path 0 local LID  2 remote LID  4 local GID  20 remote GID
//!      36 flow label(20)|rsvd(6)|packet rate(6)  40 traffic class  41 hop limit
//!      42 SL(4)|subnet local(1)|rsvd(3)          43 local ACK timeout(5)|rsvd(3)
//!  MRA  0 local comm ID  4 remote comm ID  8 message MRAed(2)  9 service timeout(5)  10 private (222)
//!  REJ  0 local  4 remote  8 message REJected(2)  9 reject info length(7)  10 reason(16)
//!      12 ARI (72)  84 private data (148)
//!  REP  0 local  4 remote  8 local Q_Key  12 local QPN(24)|vendor ID high(8)
//!      16 local EECN(24)|vendor mid(8)  20 starting PSN(24)|vendor low(8)
//!      24 responder resources  25 initiator depth
//!      26 target ACK delay(5)|failover accepted(2)|e2e flow ctl(1)  27 RNR retry(3)|SRQ(1)
//!      28 local CA GUID (64)  36 private data (196)
//!  RTU  0 local  4 remote  8 private data (224)
//!  DREQ 0 local  4 remote  8 remote QPN(24)  12 private data (220)
//!  DREP 0 local  4 remote  8 private data (224)
//! ```
//!
//! On RoCE the LIDs are 0xFFFF (permissive) and the GIDs are the IP
//! addresses as GIDs; the RDMA CM puts its [`crate::wire::cma`] header at
//! the start of the REQ's private data. Reserved bits are emitted as zero.

use crate::error::{Error, Layer, Result, need};
use crate::wire::mad::{METHOD_SEND, MGMT_CLASS_CM, MadRepr};

/// Attribute IDs of the CM messages.
pub mod attr {
    pub const REQ: u16 = 0x0010;
    pub const MRA: u16 = 0x0011;
    pub const REJ: u16 = 0x0012;
    pub const REP: u16 = 0x0013;
    pub const RTU: u16 = 0x0014;
    pub const DREQ: u16 = 0x0015;
    pub const DREP: u16 = 0x0016;
}

/// The CM class version Linux speaks (`IB_CM_CLASS_VERSION`, IBA 1.2).
pub const CM_CLASS_VERSION: u8 = 2;
/// The LID a RoCE path carries: 0xFFFF, the permissive LID.
pub const ROCE_LID: u16 = 0xFFFF;

mod field {
    pub const REQ_PRIMARY: usize = 52;
    pub const REQ_ALTERNATE: usize = 96;
    pub const REQ_PRIVATE: usize = 140;
    pub const MRA_PRIVATE: usize = 10;
    pub const REJ_ARI: usize = 12;
    pub const REJ_PRIVATE: usize = 84;
    pub const REP_PRIVATE: usize = 36;
    pub const RTU_PRIVATE: usize = 8;
    pub const DREQ_PRIVATE: usize = 12;
    pub const PATH_LEN: usize = 44;
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
fn put16(b: &mut [u8], at: usize, v: u16) {
    b[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
fn put32(b: &mut [u8], at: usize, v: u32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
}
fn put64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_be_bytes());
}
fn array<const N: usize>(b: &[u8], at: usize) -> [u8; N] {
    b[at..at + N].try_into().expect("length checked")
}
/// A 24-bit field in the top of the 32-bit word at `at`, and its low byte.
fn hi24(b: &[u8], at: usize) -> (u32, u8) {
    let w = be32(b, at);
    (w >> 8, w as u8)
}
fn put_hi24(b: &mut [u8], at: usize, hi: u32, lo: u8) {
    put32(b, at, (hi & 0xFF_FFFF) << 8 | u32::from(lo));
}

/// One path of a REQ (primary or alternate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CmPath {
    pub local_lid: u16,
    pub remote_lid: u16,
    pub local_gid: [u8; 16],
    pub remote_gid: [u8; 16],
    pub flow_label: u32,
    pub packet_rate: u8,
    pub traffic_class: u8,
    pub hop_limit: u8,
    pub sl: u8,
    pub subnet_local: bool,
    pub local_ack_timeout: u8,
}

impl CmPath {
    fn parse(b: &[u8]) -> CmPath {
        let w = be32(b, 36);
        CmPath {
            local_lid: be16(b, 0),
            remote_lid: be16(b, 2),
            local_gid: array(b, 4),
            remote_gid: array(b, 20),
            flow_label: w >> 12,
            packet_rate: (w & 0x3F) as u8,
            traffic_class: b[40],
            hop_limit: b[41],
            sl: b[42] >> 4,
            subnet_local: b[42] & 0x08 != 0,
            local_ack_timeout: b[43] >> 3,
        }
    }

    fn emit(&self, b: &mut [u8]) {
        put16(b, 0, self.local_lid);
        put16(b, 2, self.remote_lid);
        b[4..20].copy_from_slice(&self.local_gid);
        b[20..36].copy_from_slice(&self.remote_gid);
        put32(
            b,
            36,
            (self.flow_label & 0xF_FFFF) << 12 | u32::from(self.packet_rate & 0x3F),
        );
        b[40] = self.traffic_class;
        b[41] = self.hop_limit;
        b[42] = (self.sl & 0xF) << 4 | u8::from(self.subnet_local) << 3;
        b[43] = (self.local_ack_timeout & 0x1F) << 3;
    }
}

/// ConnectRequest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmReq {
    pub local_comm_id: u32,
    /// Reserved in IBA 1.2; Linux's ECE puts a vendor ID in it. Kept whole.
    pub reserved4: u32,
    pub service_id: u64,
    pub local_ca_guid: u64,
    pub local_qkey: u32,
    pub local_qpn: u32,
    pub responder_resources: u8,
    pub local_eecn: u32,
    pub initiator_depth: u8,
    pub remote_eecn: u32,
    /// CM response timeouts are exponents: 4.096 µs × 2^value.
    pub remote_cm_response_timeout: u8,
    /// 0 RC, 1 UC, 3 XRC.
    pub transport_type: u8,
    pub end_to_end_flow_control: bool,
    pub starting_psn: u32,
    pub local_cm_response_timeout: u8,
    pub retry_count: u8,
    pub pkey: u16,
    /// IB MTU code: 1 = 256 ... 5 = 4096.
    pub path_mtu: u8,
    pub rdc_exists: bool,
    pub rnr_retry_count: u8,
    pub max_cm_retries: u8,
    pub srq: bool,
    pub extended_transport: u8,
    pub primary_path: CmPath,
    pub alternate_path: CmPath,
    pub private_data: [u8; 92],
}

/// MessageReceiptAcknowledgement: "I got it, give me longer".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmMra {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// 0 REQ, 1 REP, 2 LAP.
    pub message_mraed: u8,
    pub service_timeout: u8,
    pub private_data: [u8; 222],
}

/// The reason of a REJ (IBA table 112, `enum ib_cm_rej_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RejReason {
    NoQp,
    NoEec,
    NoResources,
    Timeout,
    Unsupported,
    InvalidCommId,
    InvalidCommInstance,
    InvalidServiceId,
    InvalidTransportType,
    StaleConn,
    RdcNotExist,
    InvalidGid,
    InvalidLid,
    InvalidSl,
    InvalidTrafficClass,
    InvalidHopLimit,
    InvalidPacketRate,
    InvalidAltGid,
    InvalidAltLid,
    InvalidAltSl,
    InvalidAltTrafficClass,
    InvalidAltHopLimit,
    InvalidAltPacketRate,
    PortCmRedirect,
    PortRedirect,
    InvalidMtu,
    InsufficientRespResources,
    ConsumerDefined,
    InvalidRnrRetry,
    DuplicateLocalCommId,
    InvalidClassVersion,
    InvalidFlowLabel,
    InvalidAltFlowLabel,
    VendorOptionNotSupported,
    Unknown(u16),
}

/// Code, variant and the name Linux's `ibcm_reject_msg` prints.
const REJ_REASONS: [(u16, RejReason, &str); 34] = [
    (1, RejReason::NoQp, "no QP"),
    (2, RejReason::NoEec, "no EEC"),
    (3, RejReason::NoResources, "no resources"),
    (4, RejReason::Timeout, "timeout"),
    (5, RejReason::Unsupported, "unsupported"),
    (6, RejReason::InvalidCommId, "invalid comm ID"),
    (7, RejReason::InvalidCommInstance, "invalid comm instance"),
    (8, RejReason::InvalidServiceId, "invalid service ID"),
    (9, RejReason::InvalidTransportType, "invalid transport type"),
    (10, RejReason::StaleConn, "stale conn"),
    (11, RejReason::RdcNotExist, "RDC not exist"),
    (12, RejReason::InvalidGid, "invalid GID"),
    (13, RejReason::InvalidLid, "invalid LID"),
    (14, RejReason::InvalidSl, "invalid SL"),
    (15, RejReason::InvalidTrafficClass, "invalid traffic class"),
    (16, RejReason::InvalidHopLimit, "invalid hop limit"),
    (17, RejReason::InvalidPacketRate, "invalid packet rate"),
    (18, RejReason::InvalidAltGid, "invalid alt GID"),
    (19, RejReason::InvalidAltLid, "invalid alt LID"),
    (20, RejReason::InvalidAltSl, "invalid alt SL"),
    (
        21,
        RejReason::InvalidAltTrafficClass,
        "invalid alt traffic class",
    ),
    (22, RejReason::InvalidAltHopLimit, "invalid alt hop limit"),
    (
        23,
        RejReason::InvalidAltPacketRate,
        "invalid alt packet rate",
    ),
    (24, RejReason::PortCmRedirect, "port CM redirect"),
    (25, RejReason::PortRedirect, "port redirect"),
    (26, RejReason::InvalidMtu, "invalid MTU"),
    (
        27,
        RejReason::InsufficientRespResources,
        "insufficient resp resources",
    ),
    (28, RejReason::ConsumerDefined, "consumer defined"),
    (29, RejReason::InvalidRnrRetry, "invalid RNR retry"),
    (
        30,
        RejReason::DuplicateLocalCommId,
        "duplicate local comm ID",
    ),
    (31, RejReason::InvalidClassVersion, "invalid class version"),
    (32, RejReason::InvalidFlowLabel, "invalid flow label"),
    (33, RejReason::InvalidAltFlowLabel, "invalid alt flow label"),
    (
        35,
        RejReason::VendorOptionNotSupported,
        "vendor option not supported",
    ),
];

impl RejReason {
    pub fn from_code(code: u16) -> RejReason {
        REJ_REASONS
            .iter()
            .find(|(c, _, _)| *c == code)
            .map_or(RejReason::Unknown(code), |(_, r, _)| *r)
    }

    pub fn code(self) -> u16 {
        match self {
            RejReason::Unknown(c) => c,
            r => {
                REJ_REASONS
                    .iter()
                    .find(|(_, x, _)| *x == r)
                    .expect("listed")
                    .0
            }
        }
    }

    pub fn name(self) -> &'static str {
        REJ_REASONS
            .iter()
            .find(|(_, x, _)| *x == self)
            .map_or("unrecognized reason", |(_, _, n)| n)
    }
}

/// ConnectReject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmRej {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    /// 0 REQ, 1 REP, 2 other.
    pub message_rejected: u8,
    pub reject_info_length: u8,
    pub reason: RejReason,
    pub ari: [u8; 72],
    pub private_data: [u8; 148],
}

/// ConnectReply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmRep {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub local_qkey: u32,
    pub local_qpn: u32,
    pub local_eecn: u32,
    pub starting_psn: u32,
    pub responder_resources: u8,
    pub initiator_depth: u8,
    pub target_ack_delay: u8,
    pub failover_accepted: u8,
    pub end_to_end_flow_control: bool,
    pub rnr_retry_count: u8,
    pub srq: bool,
    /// The ECE vendor ID in the low bytes of bytes 12..24 (high, mid, low).
    pub vendor_id: u32,
    pub local_ca_guid: u64,
    pub private_data: [u8; 196],
}

/// ReadyToUse (and DREP, which has the same layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmRtu {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub private_data: [u8; 224],
}

/// DisconnectRequest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmDreq {
    pub local_comm_id: u32,
    pub remote_comm_id: u32,
    pub remote_qpn: u32,
    pub private_data: [u8; 220],
}

/// One CM message, chosen by the MAD's attribute ID.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmMessage {
    Req(CmReq),
    Mra(CmMra),
    Rej(CmRej),
    Rep(CmRep),
    Rtu(CmRtu),
    Dreq(CmDreq),
    Drep(CmRtu),
}

impl CmMessage {
    pub fn attribute_id(&self) -> u16 {
        match self {
            CmMessage::Req(_) => attr::REQ,
            CmMessage::Mra(_) => attr::MRA,
            CmMessage::Rej(_) => attr::REJ,
            CmMessage::Rep(_) => attr::REP,
            CmMessage::Rtu(_) => attr::RTU,
            CmMessage::Dreq(_) => attr::DREQ,
            CmMessage::Drep(_) => attr::DREP,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            CmMessage::Req(_) => "REQ",
            CmMessage::Mra(_) => "MRA",
            CmMessage::Rej(_) => "REJ",
            CmMessage::Rep(_) => "REP",
            CmMessage::Rtu(_) => "RTU",
            CmMessage::Dreq(_) => "DREQ",
            CmMessage::Drep(_) => "DREP",
        }
    }

    /// The sender's communication ID.
    pub fn local_comm_id(&self) -> u32 {
        match self {
            CmMessage::Req(m) => m.local_comm_id,
            CmMessage::Mra(m) => m.local_comm_id,
            CmMessage::Rej(m) => m.local_comm_id,
            CmMessage::Rep(m) => m.local_comm_id,
            CmMessage::Rtu(m) | CmMessage::Drep(m) => m.local_comm_id,
            CmMessage::Dreq(m) => m.local_comm_id,
        }
    }

    /// The receiver's communication ID (0 in a REQ, which has none yet).
    pub fn remote_comm_id(&self) -> u32 {
        match self {
            CmMessage::Req(_) => 0,
            CmMessage::Mra(m) => m.remote_comm_id,
            CmMessage::Rej(m) => m.remote_comm_id,
            CmMessage::Rep(m) => m.remote_comm_id,
            CmMessage::Rtu(m) | CmMessage::Drep(m) => m.remote_comm_id,
            CmMessage::Dreq(m) => m.remote_comm_id,
        }
    }

    /// Decodes the 232 bytes of class data after the MAD header, for
    /// `attribute_id`. An attribute that is not a connection message is
    /// an error naming the field.
    pub fn parse(attribute_id: u16, d: &[u8]) -> Result<CmMessage> {
        need(d, Layer::Cm, MadRepr::DATA_LEN)?;
        let ids = (be32(d, 0), be32(d, 4));
        Ok(match attribute_id {
            attr::REQ => CmMessage::Req(parse_req(d)),
            attr::MRA => CmMessage::Mra(CmMra {
                local_comm_id: ids.0,
                remote_comm_id: ids.1,
                message_mraed: d[8] >> 6,
                service_timeout: d[9] >> 3,
                private_data: array(d, field::MRA_PRIVATE),
            }),
            attr::REJ => CmMessage::Rej(CmRej {
                local_comm_id: ids.0,
                remote_comm_id: ids.1,
                message_rejected: d[8] >> 6,
                reject_info_length: d[9] >> 1,
                reason: RejReason::from_code(be16(d, 10)),
                ari: array(d, field::REJ_ARI),
                private_data: array(d, field::REJ_PRIVATE),
            }),
            attr::REP => CmMessage::Rep(parse_rep(d)),
            attr::RTU | attr::DREP => {
                let m = CmRtu {
                    local_comm_id: ids.0,
                    remote_comm_id: ids.1,
                    private_data: array(d, field::RTU_PRIVATE),
                };
                if attribute_id == attr::RTU {
                    CmMessage::Rtu(m)
                } else {
                    CmMessage::Drep(m)
                }
            }
            attr::DREQ => CmMessage::Dreq(CmDreq {
                local_comm_id: ids.0,
                remote_comm_id: ids.1,
                remote_qpn: hi24(d, 8).0,
                private_data: array(d, field::DREQ_PRIVATE),
            }),
            other => {
                return Err(Error::Invalid {
                    layer: Layer::Cm,
                    offset: 0,
                    field: "attribute_id",
                    value: other.into(),
                    expected: "expected a connection message (0x0010..=0x0016)",
                });
            }
        })
    }

    /// Writes the 232 bytes of class data.
    ///
    /// # Panics
    /// If `d` is shorter than [`MadRepr::DATA_LEN`].
    pub fn emit(&self, d: &mut [u8]) {
        let d = &mut d[..MadRepr::DATA_LEN];
        d.fill(0);
        put32(d, 0, self.local_comm_id());
        put32(d, 4, self.remote_comm_id());
        match self {
            CmMessage::Req(m) => emit_req(m, d),
            CmMessage::Mra(m) => {
                d[8] = (m.message_mraed & 3) << 6;
                d[9] = (m.service_timeout & 0x1F) << 3;
                d[field::MRA_PRIVATE..].copy_from_slice(&m.private_data);
            }
            CmMessage::Rej(m) => {
                d[8] = (m.message_rejected & 3) << 6;
                d[9] = (m.reject_info_length & 0x7F) << 1;
                put16(d, 10, m.reason.code());
                d[field::REJ_ARI..field::REJ_PRIVATE].copy_from_slice(&m.ari);
                d[field::REJ_PRIVATE..].copy_from_slice(&m.private_data);
            }
            CmMessage::Rep(m) => emit_rep(m, d),
            CmMessage::Rtu(m) | CmMessage::Drep(m) => {
                d[field::RTU_PRIVATE..].copy_from_slice(&m.private_data);
            }
            CmMessage::Dreq(m) => {
                put_hi24(d, 8, m.remote_qpn, 0);
                d[field::DREQ_PRIVATE..].copy_from_slice(&m.private_data);
            }
        }
    }
}

fn parse_req(d: &[u8]) -> CmReq {
    let (local_qpn, responder_resources) = hi24(d, 32);
    let (local_eecn, initiator_depth) = hi24(d, 36);
    let (remote_eecn, b43) = hi24(d, 40);
    let (starting_psn, b47) = hi24(d, 44);
    CmReq {
        local_comm_id: be32(d, 0),
        reserved4: be32(d, 4),
        service_id: be64(d, 8),
        local_ca_guid: be64(d, 16),
        local_qkey: be32(d, 28),
        local_qpn,
        responder_resources,
        local_eecn,
        initiator_depth,
        remote_eecn,
        remote_cm_response_timeout: b43 >> 3,
        transport_type: (b43 >> 1) & 3,
        end_to_end_flow_control: b43 & 1 != 0,
        starting_psn,
        local_cm_response_timeout: b47 >> 3,
        retry_count: b47 & 7,
        pkey: be16(d, 48),
        path_mtu: d[50] >> 4,
        rdc_exists: d[50] & 0x08 != 0,
        rnr_retry_count: d[50] & 7,
        max_cm_retries: d[51] >> 4,
        srq: d[51] & 0x08 != 0,
        extended_transport: d[51] & 7,
        primary_path: CmPath::parse(&d[field::REQ_PRIMARY..field::REQ_ALTERNATE]),
        alternate_path: CmPath::parse(&d[field::REQ_ALTERNATE..field::REQ_PRIVATE]),
        private_data: array(d, field::REQ_PRIVATE),
    }
}

fn emit_req(m: &CmReq, d: &mut [u8]) {
    put32(d, 4, m.reserved4);
    put64(d, 8, m.service_id);
    put64(d, 16, m.local_ca_guid);
    put32(d, 28, m.local_qkey);
    put_hi24(d, 32, m.local_qpn, m.responder_resources);
    put_hi24(d, 36, m.local_eecn, m.initiator_depth);
    let b43 = (m.remote_cm_response_timeout & 0x1F) << 3
        | (m.transport_type & 3) << 1
        | u8::from(m.end_to_end_flow_control);
    put_hi24(d, 40, m.remote_eecn, b43);
    let b47 = (m.local_cm_response_timeout & 0x1F) << 3 | (m.retry_count & 7);
    put_hi24(d, 44, m.starting_psn, b47);
    put16(d, 48, m.pkey);
    d[50] = (m.path_mtu & 0xF) << 4 | u8::from(m.rdc_exists) << 3 | (m.rnr_retry_count & 7);
    d[51] = (m.max_cm_retries & 0xF) << 4 | u8::from(m.srq) << 3 | (m.extended_transport & 7);
    let (p, a) = (field::REQ_PRIMARY, field::REQ_ALTERNATE);
    m.primary_path.emit(&mut d[p..p + field::PATH_LEN]);
    m.alternate_path.emit(&mut d[a..a + field::PATH_LEN]);
    d[field::REQ_PRIVATE..].copy_from_slice(&m.private_data);
}

fn parse_rep(d: &[u8]) -> CmRep {
    let (local_qpn, v_hi) = hi24(d, 12);
    let (local_eecn, v_mid) = hi24(d, 16);
    let (starting_psn, v_lo) = hi24(d, 20);
    CmRep {
        local_comm_id: be32(d, 0),
        remote_comm_id: be32(d, 4),
        local_qkey: be32(d, 8),
        local_qpn,
        local_eecn,
        starting_psn,
        responder_resources: d[24],
        initiator_depth: d[25],
        target_ack_delay: d[26] >> 3,
        failover_accepted: (d[26] >> 1) & 3,
        end_to_end_flow_control: d[26] & 1 != 0,
        rnr_retry_count: d[27] >> 5,
        srq: d[27] & 0x10 != 0,
        vendor_id: u32::from_be_bytes([0, v_hi, v_mid, v_lo]),
        local_ca_guid: be64(d, 28),
        private_data: array(d, field::REP_PRIVATE),
    }
}

fn emit_rep(m: &CmRep, d: &mut [u8]) {
    let [_, v_hi, v_mid, v_lo] = m.vendor_id.to_be_bytes();
    put32(d, 8, m.local_qkey);
    put_hi24(d, 12, m.local_qpn, v_hi);
    put_hi24(d, 16, m.local_eecn, v_mid);
    put_hi24(d, 20, m.starting_psn, v_lo);
    d[24] = m.responder_resources;
    d[25] = m.initiator_depth;
    d[26] = (m.target_ack_delay & 0x1F) << 3
        | (m.failover_accepted & 3) << 1
        | u8::from(m.end_to_end_flow_control);
    d[27] = (m.rnr_retry_count & 7) << 5 | u8::from(m.srq) << 4;
    put64(d, 28, m.local_ca_guid);
    d[field::REP_PRIVATE..].copy_from_slice(&m.private_data);
}

/// A whole CM MAD: the common header and the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CmRepr {
    pub mad: MadRepr,
    pub message: CmMessage,
}

impl CmRepr {
    /// A CM MAD as Linux's ib_cm sends it: base version 1, class 0x07,
    /// class version 2, method Send, status 0, the message's attribute ID.
    pub fn new(transaction_id: u64, message: CmMessage) -> CmRepr {
        CmRepr {
            mad: MadRepr {
                base_version: 1,
                mgmt_class: MGMT_CLASS_CM,
                class_version: CM_CLASS_VERSION,
                method: METHOD_SEND,
                transaction_id,
                attribute_id: message.attribute_id(),
                ..MadRepr::default()
            },
            message,
        }
    }

    /// Decodes a 256-byte MAD of management class 0x07.
    pub fn parse(mad: &[u8]) -> Result<CmRepr> {
        need(mad, Layer::Mad, MadRepr::LEN)?;
        let hdr = MadRepr::parse(mad)?;
        if hdr.mgmt_class != MGMT_CLASS_CM {
            return Err(Error::Invalid {
                layer: Layer::Mad,
                offset: 1,
                field: "mgmt_class",
                value: hdr.mgmt_class.into(),
                expected: "expected 0x07 (CM)",
            });
        }
        let message = CmMessage::parse(hdr.attribute_id, &mad[MadRepr::HEADER_LEN..])
            .map_err(|e| e.at(MadRepr::HEADER_LEN))?;
        Ok(CmRepr { mad: hdr, message })
    }

    pub fn buffer_len(&self) -> usize {
        MadRepr::LEN
    }

    /// Writes the 256-byte MAD.
    ///
    /// # Panics
    /// If `buf` is shorter than [`MadRepr::LEN`].
    pub fn emit(&self, buf: &mut [u8]) {
        self.mad.emit(&mut buf[..MadRepr::HEADER_LEN]);
        self.message
            .emit(&mut buf[MadRepr::HEADER_LEN..MadRepr::LEN]);
    }

    pub fn to_bytes(&self) -> [u8; MadRepr::LEN] {
        let mut b = [0; MadRepr::LEN];
        self.emit(&mut b);
        b
    }
}

/// The time a CM response timeout exponent stands for: 4.096 µs × 2^t
/// (IBA 12.7.34), in nanoseconds.
pub fn cm_timeout_ns(exponent: u8) -> u64 {
    4096u64 << exponent.min(31)
}
