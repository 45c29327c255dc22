//! A failed work completion: NCCL's warning, and the end of the run.

use super::{Collective, CollectiveResult, test_size};
use crate::transport::WcStatus;

impl Collective {
    /// A work completion failed on a QP of connection `c` (`sender`: its
    /// sending end): NCCL's proxy stops progressing and nccl-tests aborts
    /// (facts §5). The message is NCCL 2.29+'s second warning line; the
    /// peer's bootstrap port and the NIC's `vendor_err` are not modelled.
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
        let msg = format!(
            "NET/IB: Got completion from peer {peer} with status={}({}) opcode=IBV_WC_RDMA_WRITE(1) \
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
}
