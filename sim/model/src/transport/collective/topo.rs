//! Where a collective's ranks sit: servers of GPUs and NICs, and the ring
//! each channel follows through them.

/// Where the ranks sit: `servers` servers in order, `gpus` GPUs each (the
/// last server may hold fewer), `nics` NICs per server for the channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Topo {
    pub ranks: u32,
    pub gpus: u32,
    pub nics: u32,
    /// GPU `i` owns NIC `i` (one NIC per GPU); else the GPUs share them.
    pub nic_per_gpu: bool,
}

impl Topo {
    pub fn server(&self, rank: u32) -> u32 {
        rank / self.gpus
    }
    pub fn local(&self, rank: u32) -> u32 {
        rank % self.gpus
    }
    fn gpus_on(&self, server: u32) -> u32 {
        (self.ranks - server * self.gpus).min(self.gpus)
    }
    pub fn servers(&self) -> u32 {
        self.ranks.div_ceil(self.gpus)
    }
    /// The NIC (index among the server's NICs) GPU `local` sends and
    /// receives p2p messages through: its own, or one of the shared ones.
    pub fn nic_of(&self, local: u32) -> u32 {
        if self.nic_per_gpu {
            local
        } else {
            local % self.nics
        }
    }

    /// The NIC channel `ch`'s ring enters and leaves every server by: its
    /// entry GPU's, or the shared NICs in turn.
    pub fn ring_nic(&self, ch: u32) -> u32 {
        if self.nic_per_gpu {
            ch % self.gpus
        } else {
            ch % self.nics
        }
    }

    /// Channel `ch`'s ring: servers in order; on each, from the GPU
    /// `ch mod g` round (facts §2.1, §6: in and out by one NIC).
    pub fn ring(&self, ch: u32) -> Vec<u32> {
        let mut v = Vec::with_capacity(self.ranks as usize);
        for s in 0..self.servers() {
            let g = self.gpus_on(s);
            for j in 0..g {
                v.push(s * self.gpus + (ch + j) % g);
            }
        }
        v
    }
}
