//! NCCL's out-of-band connection set-up of an IB/RoCE network connection:
//! the bytes its proxies write into the TCP socket the sender
//! (`ncclIbConnect`) opens to the receiver's listening socket
//! (`ncclIbListen`, bound to port 0 of the out-of-band interface).
//!
//! ```text
//!  sender (ncclIbConnect)                      receiver (ncclIbAccept)
//!      │── TCP SYN / SYN-ACK / ACK ────────────────────│
//!      │── magic (8 B) ───────────────────────────────▶│  ncclSocketConnect's
//!      │── socket type (4 B) ─────────────────────────▶│  hand-shake
//!      │── device list (37 B) ────────────────────────▶│
//!      │◀─ device list (37 B) ─────────────────────────│
//!      │── ncclIbConnectionMetadata (4576 B) ─────────▶│  QPNs, GID, CTS FIFO
//!      │◀─ ncclIbConnectionMetadata (4576 B) ──────────│  after its QPs' RTS
//!      │── ready (4 B) ───────────────────────────────▶│  after the sender's RTS
//! ```
//!
//! Read in `NVIDIA/nccl` at `5067397c` (= v2.30.7-1 for these files):
//! `src/misc/socket.cc` `socketFinalizeConnect` sends `sock->magic`
//! (`uint64_t`, `NCCL_SOCKET_MAGIC` 0x564ab9f2fc4b9d6c unless
//! `NCCL_SOCKET_MAGIC` is set) then `sock->type` (`enum ncclSocketType`,
//! `ncclSocketTypeNetIb` = 4), each with its own `send` on a socket with
//! `TCP_NODELAY` (`src/os/linux.cc`); `src/transport/net_ib/connect.cc`
//! `ncclIbConnectImpl` / `ncclIbAcceptImpl` then swap
//! `ncclNetVDeviceProps_t` + `ncclIbDevExtraProps` and the two
//! `ncclIbConnectionMetadata`, and the sender writes `int ready = 1`.
//! Every structure goes on the wire as its memory image (`memcpy` into the
//! stage buffer): the sizes and offsets below are x86-64's, measured by
//! compiling the structures as declared (`connect.h`, `common.h`,
//! `ibvcore.h`, `net_v12.h`; `NCCL_NET_MAX_DEVS_PER_NIC` 8,
//! `NCCL_IB_MAX_QPS` 128, `MAXNAMESIZE` 80).
//!
//! ```text
//!  device list (37)  ndevs:i32 @0, devs:[i32; 8] @4, oooRq:bool @36
//!  metadata (4576)   qpInfo[128] @0, 24 B each: qpn:u32 @0, ece{vendor_id,
//!                    options, comp_mask}:3×u32 @4, ece_supported:i32 @16,
//!                    devIndex:i32 @20
//!                    resiliencyInfo (2 × 8 qpInfo) @3072
//!                    devs[8] @3456, 56 B each: lid:u32 @0, ib_port:u8 @4,
//!                    mtu:enum ibv_mtu @8, link_layer:u8 @12, gid[16] @16,
//!                    rkey:u32 @32, remoteGid[16] @40
//!                    devName[648] @3904, addr:u64 @4552, ndevs:i32 @4560,
//!                    tc:i32 @4564, sl:i32 @4568 (4 bytes of padding)
//! ```

/// `NCCL_SOCKET_MAGIC` (`src/include/socket.h`).
pub const SOCKET_MAGIC: u64 = 0x564a_b9f2_fc4b_9d6c;
/// `ncclSocketTypeNetIb` (`enum ncclSocketType`).
pub const SOCKET_TYPE_NET_IB: u32 = 4;
/// `sizeof(ncclNetVDeviceProps_t) + sizeof(struct ncclIbDevExtraProps)`.
pub const DEV_LIST_LEN: usize = 37;
/// `sizeof(struct ncclIbConnectionMetadata)` on x86-64.
pub const METADATA_LEN: usize = 4576;
/// `sizeof(int)`: the sender's "ready".
pub const READY_LEN: usize = 4;

/// Bytes of each message the sender writes, in order: magic, socket
/// type, device list, metadata, ready.
pub const SENDER_MSGS: [usize; 5] = [8, 4, DEV_LIST_LEN, METADATA_LEN, READY_LEN];
/// The receiver's: device list, metadata.
pub const RECEIVER_MSGS: [usize; 2] = [DEV_LIST_LEN, METADATA_LEN];

/// The length of message `index` of the sender's or the receiver's
/// stream (0 past the end).
pub fn message_len(from_receiver: bool, index: usize) -> usize {
    let t: &[usize] = if from_receiver {
        &RECEIVER_MSGS
    } else {
        &SENDER_MSGS
    };
    t.get(index).copied().unwrap_or(0)
}

const QP_INFO_LEN: usize = 24;
const DEVS_AT: usize = 3456;
const DEV_NAME_AT: usize = 3904;
const DEV_NAME_LEN: usize = 648;
const ADDR_AT: usize = 4552;
/// `IBV_LINK_LAYER_ETHERNET`.
pub const LINK_LAYER_ETHERNET: u8 = 2;

/// One side's device list: a single (not merged) device.
pub fn dev_list(dev: i32) -> [u8; DEV_LIST_LEN] {
    let mut b = [0u8; DEV_LIST_LEN];
    b[0..4].copy_from_slice(&1i32.to_le_bytes());
    b[4..8].copy_from_slice(&dev.to_le_bytes());
    // oooRq: out-of-order receive queues need adaptive routing (off).
    b
}

/// What one side of a connection tells the other
/// (`ncclIbConnectionMetadata`), for one device with one port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionMetadata {
    /// The QPNs of its QPs (all on device index 0).
    pub qpns: Vec<u32>,
    /// `ibv_port_attr.lid` (0 on RoCE).
    pub lid: u32,
    pub ib_port: u8,
    /// `enum ibv_mtu` (1 = 256 … 5 = 4096).
    pub mtu: u32,
    pub link_layer: u8,
    pub gid: [u8; 16],
    /// The sender's CTS FIFO or the receiver's completion records: its
    /// rkey and address.
    pub rkey: u32,
    pub addr: u64,
    /// The RDMA device's name (`mlx5_0`).
    pub dev_name: String,
    pub tc: i32,
    pub sl: i32,
}

impl ConnectionMetadata {
    /// The structure's memory image. ECE is left unsupported (zero), as
    /// on a NIC without it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0u8; METADATA_LEN];
        for (q, qpn) in self.qpns.iter().take(128).enumerate() {
            let at = q * QP_INFO_LEN;
            b[at..at + 4].copy_from_slice(&qpn.to_le_bytes());
        }
        let d = DEVS_AT;
        b[d..d + 4].copy_from_slice(&self.lid.to_le_bytes());
        b[d + 4] = self.ib_port;
        b[d + 8..d + 12].copy_from_slice(&self.mtu.to_le_bytes());
        b[d + 12] = self.link_layer;
        b[d + 16..d + 32].copy_from_slice(&self.gid);
        b[d + 32..d + 36].copy_from_slice(&self.rkey.to_le_bytes());
        let name = self.dev_name.as_bytes();
        let n = name.len().min(DEV_NAME_LEN - 1);
        b[DEV_NAME_AT..DEV_NAME_AT + n].copy_from_slice(&name[..n]);
        b[ADDR_AT..ADDR_AT + 8].copy_from_slice(&self.addr.to_le_bytes());
        b[ADDR_AT + 8..ADDR_AT + 12].copy_from_slice(&1i32.to_le_bytes());
        b[ADDR_AT + 12..ADDR_AT + 16].copy_from_slice(&self.tc.to_le_bytes());
        b[ADDR_AT + 16..ADDR_AT + 20].copy_from_slice(&self.sl.to_le_bytes());
        b
    }

    /// The QPN of QP `q` in a metadata image.
    pub fn qpn_at(bytes: &[u8], q: usize) -> Option<u32> {
        let at = q * QP_INFO_LEN;
        Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
    }

    /// The GID of device 0 in a metadata image.
    pub fn gid_at(bytes: &[u8]) -> Option<[u8; 16]> {
        bytes.get(DEVS_AT + 16..DEVS_AT + 32)?.try_into().ok()
    }

    /// tc and sl of a metadata image.
    pub fn tc_sl_at(bytes: &[u8]) -> Option<(i32, i32)> {
        let i = |at: usize| Some(i32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
        Some((i(ADDR_AT + 12)?, i(ADDR_AT + 16)?))
    }
}

/// `ibv_mtu` of a path MTU in bytes (`IBV_MTU_256` = 1 … `IBV_MTU_4096` = 5).
pub fn ibv_mtu(bytes: u32) -> u32 {
    match bytes {
        ..=256 => 1,
        257..=512 => 2,
        513..=1024 => 3,
        1025..=2048 => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_its_structs_memory_image() {
        let m = ConnectionMetadata {
            qpns: vec![0x1234, 0x1235],
            lid: 0,
            ib_port: 1,
            mtu: 5,
            link_layer: LINK_LAYER_ETHERNET,
            gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1],
            rkey: 0xabcd,
            addr: 0x7f00_1000,
            dev_name: "mlx5_0".into(),
            tc: 106,
            sl: 3,
        };
        let b = m.to_bytes();
        assert_eq!(b.len(), 4576);
        // qpInfo[1].qpn at 24, little-endian.
        assert_eq!(&b[24..28], &[0x35, 0x12, 0, 0]);
        assert_eq!(ConnectionMetadata::qpn_at(&b, 0), Some(0x1234));
        // devs[0]: ib_port @ 3460, mtu @ 3464, link layer @ 3468, GID @ 3472.
        assert_eq!((b[3460], b[3464], b[3468]), (1, 5, 2));
        assert_eq!(ConnectionMetadata::gid_at(&b), Some(m.gid));
        assert_eq!(&b[3904..3910], b"mlx5_0");
        assert_eq!(b[3910], 0);
        // ndevs 1, tc, sl after the address.
        assert_eq!(&b[4560..4564], &[1, 0, 0, 0]);
        assert_eq!(ConnectionMetadata::tc_sl_at(&b), Some((106, 3)));
        assert_eq!(&b[4572..], &[0; 4]);
    }

    #[test]
    fn dev_list_names_one_device() {
        let b = dev_list(3);
        assert_eq!(&b[..8], &[1, 0, 0, 0, 3, 0, 0, 0]);
        assert!(b[8..].iter().all(|&x| x == 0));
        assert_eq!(ibv_mtu(4096), 5);
        assert_eq!(ibv_mtu(1024), 3);
    }
}
