//! A failed work completion: NCCL's warning, and the end of the run; the
//! connections' set-ups the first operation waits for.

use core::net::{Ipv4Addr, SocketAddrV4};

use super::{Collective, CollectiveResult, Timer, test_size};
use crate::time::Ps;
use crate::transport::WcStatus;

/// Who a network connection's ends are, for NCCL's error text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetConnInfo {
    pub send_ip: Ipv4Addr,
    pub recv_ip: Ipv4Addr,
    /// The RDMA devices (`hca` of the message).
    pub send_hca: String,
    pub recv_hca: String,
    /// With a set-up on the wire: the out-of-band socket's peer as each
    /// end sees it (the sender: the listener's address and port; the
    /// receiver: the sender's socket).
    pub oob_peer: Option<[SocketAddrV4; 2]>,
}

impl Collective {
    /// A work completion failed on a QP of connection `c` (`sender`: its
    /// sending end): NCCL's proxy stops progressing and nccl-tests aborts
    /// (facts §5). The message is NCCL 2.29+'s second warning line. The
    /// peer is the out-of-band socket's address, `IP<port>`
    /// (`ncclSocketToString`), when the set-up ran on the wire; without
    /// one (`connect = "none"`) the peer's GID address stands for it and
    /// no port is printed. The NIC's `vendor_err` is not modelled.
    pub(super) fn fail(&mut self, c: u32, sender: bool, status: WcStatus) {
        if self.finished {
            return;
        }
        let info = &self.infos[self.conns[c as usize].net.as_ref().unwrap().info as usize];
        let (local, peer, hca) = if sender {
            (info.send_ip, info.recv_ip, &info.send_hca)
        } else {
            (info.recv_ip, info.send_ip, &info.recv_hca)
        };
        let sock = match info.oob_peer {
            Some(p) => {
                let a = p[usize::from(!sender)];
                format!("{}<{}>", a.ip(), a.port())
            }
            None => peer.to_string(),
        };
        let msg = format!(
            "NET/IB: Got completion from peer {sock} with status={}({}) opcode=IBV_WC_RDMA_WRITE(1) \
             localGid ::ffff:{local} remoteGids ::ffff:{peer} hca {hca}",
            status.ibv_name(),
            status.code()
        );
        let b = self.batches[self.batch];
        let t = test_size(self.spec.op, b.cmd, self.spec.datatype, self.topo.ranks);
        self.results.push(CollectiveResult {
            cmd_bytes: b.cmd,
            size_bytes: t.size_bytes,
            count: t.count,
            time_us: 0.0,
            algbw_gbps: 0.0,
            busbw_gbps: 0.0,
            error: Some(msg),
        });
        self.finished = true;
        self.timers.clear();
    }

    /// The collective's network connections are set up over the wire:
    /// `n` of them must finish before its first operation runs.
    pub fn set_setups(&mut self, n: u32) {
        self.setups_left = n;
    }

    /// One connection's set-up finished at `now`; returns whether the
    /// collective must be driven now (the last one, with the first
    /// operation launched and waiting: it runs from here, its time
    /// counted from the launch).
    pub fn setup_done(&mut self, now: Ps) -> bool {
        self.setups_left = self.setups_left.saturating_sub(1);
        if self.setups_left > 0 || self.launched.is_none() || self.finished {
            return false;
        }
        self.push_timer(now, Timer::Start);
        true
    }
}
